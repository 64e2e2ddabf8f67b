//! Figure 1 at scale: many campaigns, each with a history, the writes spread across them.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::campaign::{batches, campaigns, Batches};
use crate::child::start_server;
use crate::figures::posts::{post_throughput, write_timeline};
use crate::load::{client, progress, Run};
use crate::report::mib;
use crate::seed::{seed, Database};
use crate::Result;

/// The campaigns of the scale rows.
pub const SCALE_CAMPAIGNS: usize = 1_000;
/// The earlier posts seeded into each campaign of the scale rows.
pub const SCALE_POSTS: i64 = 1_000;

/// A scale row: the posts, and how the campaigns were made.
pub struct Scale {
    pub service: Run,
    pub batches: Batches,
    pub peak_kib: Option<u64>,
    pub create_seconds: f64,
    pub seed_seconds: f64,
    /// The campaigns audited whole after the run, and the posts each held.
    pub audited: Vec<u64>,
}

/// A fresh server on `db`; 1,000 campaigns created through its API; 1,000 earlier posts seeded
/// into each; then 64 clients posting, each post to a campaign picked at random. Afterwards a
/// fresh whole-campaign audit of the first, a middle and the last campaign must pass: the
/// server takes the seeded posts as its own.
pub async fn scale(binary: &Path, db: Database<'_>, admin: &str, seconds: u64) -> Result<Scale> {
    let server = start_server(binary, &db.url(), admin).await?;
    let at = Instant::now();
    let games = campaigns(&server.base, admin, SCALE_CAMPAIGNS).await?;
    let create_seconds = at.elapsed().as_secs_f64();
    let at = Instant::now();
    let ids: Vec<String> = games.iter().map(|g| g.campaign.clone()).collect();
    seed(&db, &ids, SCALE_POSTS).await?;
    let seed_seconds = at.elapsed().as_secs_f64();
    eprintln!("   campaigns created in {create_seconds:.1} s, their posts seeded in {seed_seconds:.1} s; posting");
    let service = post_throughput(&server, Arc::new(games), seconds).await?;
    progress(&service);
    let peak_kib = server.peak_kib();
    let batches = batches(&server.base).await?;
    let client = client()?;
    let mut audited = Vec::new();
    for campaign in [&ids[0], &ids[ids.len() / 2], &ids[ids.len() - 1]] {
        let response = client.get(format!("{}/v1/campaigns/{campaign}/audit?fresh=true", server.base)).send().await?;
        let status = response.status();
        let audit: Value = response.json().await?;
        let posts = audit["posts"].as_u64().unwrap_or(0);
        if status.as_u16() != 200 || audit["ok"] != true || posts < SCALE_POSTS as u64 {
            return Err(format!("the audit of a seeded campaign failed: {status} {audit}").into());
        }
        audited.push(posts);
    }
    Ok(Scale { service, batches, peak_kib, create_seconds, seed_seconds, audited })
}

/// Figure 1's scale row alone, on SQLite in a temporary folder or on the PostgreSQL database at
/// `url`: `adjutant-bench scale [URL]`.
pub async fn scale_alone(url: Option<String>) -> Result<()> {
    let temp = tempfile::tempdir()?;
    let file = temp.path().join("scale.db");
    let db = match &url {
        Some(url) => Database::Postgres(url),
        None => Database::Sqlite(&file),
    };
    let admin = format!("bench-{}", uuid::Uuid::new_v4());
    let binary = std::env::current_exe()?.with_file_name("adjutant");
    let seconds = std::env::var("ADJUTANT_BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let scale = scale(&binary, db, &admin, seconds).await?;
    write_timeline(&scale.service)?;
    println!(
        "largest batch {}, {} batches one by one, peak memory {}",
        scale.batches.largest,
        scale.batches.one_by_one,
        mib(scale.peak_kib)
    );
    Ok(())
}
