//! Figure 2: the cost of a post as the campaign's history grows, and the whole-campaign audit.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use crate::campaign::{game, order};
use crate::child::start_server;
use crate::load::{client, Run};
use crate::seed::{seed, Database};
use crate::Result;

pub struct History {
    pub small: Run,
    pub large: Run,
    pub audit_ms: Vec<f64>,
    /// A repeat audit after one new post (the server goes on from the prefix it verified).
    pub repeat_audit_ms: Vec<f64>,
}

/// One client, posting alternately to a campaign with 100 and one with 100,000 earlier posts.
pub async fn history(base: &str, admin: &str, db_file: &Path) -> Result<History> {
    const POSTS: usize = 300;
    let small = game(base, admin, "A hundred posts").await?;
    let large = game(base, admin, "A hundred thousand posts").await?;
    seed(&Database::Sqlite(db_file), std::slice::from_ref(&small.campaign), 100).await?;
    seed(&Database::Sqlite(db_file), std::slice::from_ref(&large.campaign), 100_000).await?;
    let client = client()?;
    let mut runs = [Run::default(), Run::default()];
    let start = Instant::now();
    for i in 0..POSTS * 2 {
        let (game, run) = if i % 2 == 0 { (&small, &mut runs[0]) } else { (&large, &mut runs[1]) };
        let at = Instant::now();
        let response = client
            .post(format!("{base}/v1/campaigns/{}/posts", game.campaign))
            .bearer_auth(&game.players[0])
            .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
            .json(&order(0, i as u64))
            .send()
            .await?;
        let status = response.status();
        let text = response.text().await?;
        if status.as_u16() != 201 {
            return Err(format!("history post: {status} {text}").into());
        }
        run.latencies.push(at.elapsed().as_micros() as u64);
    }
    let seconds = start.elapsed().as_secs_f64();
    for run in &mut runs {
        run.requests = run.latencies.len() as u64;
        run.seconds = seconds / 2.0;
        run.latencies.sort_unstable();
    }
    // The whole-campaign audit replays every post through the rules: each link of the chain,
    // each post's dice rolled again, each stored outcome compared.
    let mut audit_ms = Vec::new();
    for _ in 0..3 {
        let at = Instant::now();
        let response = client.get(format!("{base}/v1/campaigns/{}/audit?fresh=true", large.campaign)).send().await?;
        let status = response.status();
        let audit: Value = response.json().await?;
        audit_ms.push(at.elapsed().as_secs_f64() * 1000.0);
        if status.as_u16() != 200 || audit["ok"] != true || audit["posts"].as_u64() < Some(100_000) {
            return Err(format!("the whole-campaign audit failed: {status} {audit}").into());
        }
    }
    audit_ms.sort_by(f64::total_cmp);
    // The repeat audit: one new post, then the whole-campaign audit again (the last fresh one
    // left the verified prefix behind).
    let mut repeat_audit_ms = Vec::new();
    for i in 0..3u64 {
        let response = client
            .post(format!("{base}/v1/campaigns/{}/posts", large.campaign))
            .bearer_auth(&large.players[0])
            .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
            .json(&order(0, (POSTS * 2) as u64 + i))
            .send()
            .await?;
        if response.status().as_u16() != 201 {
            return Err(format!("repeat-audit post: {} {}", response.status(), response.text().await?).into());
        }
        let at = Instant::now();
        let response = client.get(format!("{base}/v1/campaigns/{}/audit", large.campaign)).send().await?;
        let status = response.status();
        let audit: Value = response.json().await?;
        repeat_audit_ms.push(at.elapsed().as_secs_f64() * 1000.0);
        if status.as_u16() != 200 || audit["ok"] != true || audit["replayed_now"] != 1 {
            return Err(format!("the repeat audit failed: {status} {audit}").into());
        }
    }
    repeat_audit_ms.sort_by(f64::total_cmp);
    let [small, large] = runs;
    Ok(History { small, large, audit_ms, repeat_audit_ms })
}

/// Figure 2 alone (`adjutant-bench history [DIR]`), to measure the audit while working on it:
/// the server beside this binary on `DIR/adjutant.db` (kept, to start the server on it again
/// for a profiler; a throwaway folder without DIR), the same campaigns seeded as in the full run.
pub async fn history_alone(dir: Option<PathBuf>) -> Result<()> {
    let temp = tempfile::tempdir()?;
    let dir = dir.unwrap_or_else(|| temp.path().to_owned());
    std::fs::create_dir_all(&dir)?;
    let db_file = dir.join("adjutant.db");
    let admin = format!("bench-{}", uuid::Uuid::new_v4());
    let binary = std::env::current_exe()?.with_file_name("adjutant");
    let server = start_server(&binary, &format!("sqlite://{}", db_file.display()), &admin).await?;
    let history = history(&server.base, &admin, &db_file).await?;
    println!("cold audits (ms): {:.0?}", history.audit_ms);
    println!("repeat audits (ms): {:.0?}", history.repeat_audit_ms);
    Ok(())
}
