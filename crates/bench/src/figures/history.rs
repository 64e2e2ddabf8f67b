//! Figure 2: the cost of a post as the campaign's history grows, and the whole-campaign audit.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use adjutant_server::signing::Keyring;
use adjutant_store::{Post, Store};
use adjutant_store_sqlite::SqliteStore;
use serde_json::Value;
use uuid::Uuid;

use crate::campaign::{game, order};
use crate::child::{start_server, CpuSince, Process, BENCH_SIGNING_SEED};
use crate::load::{client, Run};
use crate::seed::{seed, Database};
use crate::Result;

pub struct History {
    pub small: Run,
    pub large: Run,
    pub audit_ms: Vec<f64>,
    /// A repeat audit after one new post (the server goes on from the prefix it verified).
    pub repeat_audit_ms: Vec<f64>,
    /// What the cold audit's time goes to.
    pub audit_parts: AuditParts,
}

/// What the cold audit's time goes to: the server's CPU in it, and its pieces.
#[derive(Debug, Clone, Default)]
pub struct AuditParts {
    /// The server's CPU time in a cold audit (all its threads).
    pub cpu_ms: f64,
    /// The cores a cold audit keeps busy: its CPU time over its wall time.
    pub busy: f64,
    pub pieces: AuditPieces,
}

/// Pieces of the cold audit of the 100,300-post campaign, each timed with the server's own
/// functions in a process of the bench's started for them (which allocates with the system's
/// malloc, where the server uses mimalloc), on the server's database while the server is idle,
/// each the median of 3. The audit overlaps them (it reads the next page of posts while it
/// checks the one before on every core), so they do not add up to its time.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct AuditPieces {
    pub cores: usize,
    /// Every post read through the store, in pages of the audit's size for posts this short,
    /// one page after another.
    pub read_ms: f64,
    /// The walk along the chain a cold audit of a post begins with: the posts read, their
    /// SHA-256 links and their receipts worked out on every core, page after page.
    pub chain_ms: f64,
    /// Every receipt checked as the audit checks them, the posts already read: each page split
    /// over the cores, one batch equation for each part.
    pub receipts_ms: f64,
    /// The same parts, checked one after another on one core: the receipts' CPU time.
    pub receipts_one_core_ms: f64,
}

/// One client, posting alternately to a campaign with 100 and one with 100,000 earlier posts.
pub async fn history(server: &Process, admin: &str, db_file: &Path) -> Result<History> {
    const POSTS: usize = 300;
    let base = server.base.as_str();
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
    let (mut audit_ms, mut audit_cpu_ms, mut busy) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        let (at, cpu) = (Instant::now(), CpuSince::now(server.child.id()));
        let response = client.get(format!("{base}/v1/campaigns/{}/audit?fresh=true", large.campaign)).send().await?;
        let status = response.status();
        let audit: Value = response.json().await?;
        let (wall, cpu) = (elapsed_ms(at), cpu.per_request(1).0 / 1000.0);
        audit_ms.push(wall);
        audit_cpu_ms.push(cpu);
        busy.push(cpu / wall);
        if status.as_u16() != 200 || audit["ok"] != true || audit["posts"].as_u64() < Some(100_000) {
            return Err(format!("the whole-campaign audit failed: {status} {audit}").into());
        }
    }
    audit_ms.sort_by(f64::total_cmp);
    // Its pieces, on the campaign as the cold audits found it.
    let audit_parts = AuditParts {
        cpu_ms: median_of(audit_cpu_ms),
        busy: median_of(busy),
        pieces: audit_pieces_apart(db_file, &large.campaign).await?,
    };
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
        repeat_audit_ms.push(elapsed_ms(at));
        if status.as_u16() != 200 || audit["ok"] != true || audit["replayed_now"] != 1 {
            return Err(format!("the repeat audit failed: {status} {audit}").into());
        }
    }
    repeat_audit_ms.sort_by(f64::total_cmp);
    let [small, large] = runs;
    Ok(History { small, large, audit_ms, repeat_audit_ms, audit_parts })
}

/// The audit's page of posts for posts as short as the bench's (its largest).
const AUDIT_PAGE: i64 = 4000;

/// [`audit_pieces`] in a process of its own (`adjutant-bench audit-parts DB CAMPAIGN`): its
/// reads and checks start from a fresh heap, not from one the earlier figures' load and
/// followers have churned, so that they measure the same work the same way in every run.
async fn audit_pieces_apart(db_file: &Path, campaign: &str) -> Result<AuditPieces> {
    let mut command = tokio::process::Command::new(std::env::current_exe()?);
    command.arg("audit-parts").arg(db_file).arg(campaign).stdin(std::process::Stdio::null());
    let output = command.output().await?;
    if !output.status.success() {
        return Err(
            format!("audit-parts: {}: {}", output.status, String::from_utf8_lossy(&output.stderr).trim()).into()
        );
    }
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(serde_json::from_str(text.trim()).map_err(|e| format!("audit-parts: {e}: {text}"))?)
}

/// `adjutant-bench audit-parts DB CAMPAIGN`: [`audit_pieces`], written to standard output as JSON.
pub async fn audit_parts_alone(db_file: Option<PathBuf>, campaign: Option<String>) -> Result<()> {
    let (Some(db_file), Some(campaign)) = (db_file, campaign) else {
        return Err("usage: adjutant-bench audit-parts DB CAMPAIGN".into());
    };
    println!("{}", serde_json::to_string(&audit_pieces(&db_file, &campaign).await?)?);
    Ok(())
}

/// Times the cold audit's pieces ([`AuditPieces`]) on the campaign `campaign` of `db_file`.
async fn audit_pieces(db_file: &Path, campaign: &str) -> Result<AuditPieces> {
    let id: Uuid = campaign.parse().map_err(|e| format!("the campaign {campaign:?}: {e}"))?;
    // Opening the store would make a database where there is none.
    if !db_file.is_file() {
        return Err(format!("{}: no such database", db_file.display()).into());
    }
    let store = SqliteStore::open(&Database::Sqlite(db_file).url()).await?;
    let record = store.campaign(id).await?.ok_or("the audited campaign is not in the database")?;
    let keys = Arc::new(Keyring::new(ed25519_dalek::SigningKey::from_bytes(&BENCH_SIGNING_SEED), Vec::new()));
    // As many as the audit spreads a page over.
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get).clamp(1, 8);
    let (mut read, mut chain, mut receipts, mut one_core) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        let at = Instant::now();
        let mut pages: Vec<Vec<Post>> = Vec::new();
        let mut after = 0;
        loop {
            let page = store.posts(id, after, AUDIT_PAGE).await?;
            let Some(last) = page.last() else { break };
            after = last.seq;
            pages.push(page);
        }
        read.push(elapsed_ms(at));
        let posts: usize = pages.iter().map(Vec::len).sum();
        if posts < 100_000 || pages.iter().flatten().any(|post| post.receipt.is_none()) {
            return Err(format!("the audited campaign has {posts} posts, not all with receipts").into());
        }

        let at = Instant::now();
        let walk = adjutant_server::log::audit::walk_chain(
            &store,
            &keys,
            &record,
            (0, adjutant_server::campaign::genesis(&record), Vec::new()),
            after,
        )
        .await?;
        chain.push(elapsed_ms(at));
        if !walk.problems.is_empty() || usize::try_from(walk.checked).ok() != Some(posts) {
            return Err(format!("the chain walk checked {} posts and found {:?}", walk.checked, walk.problems).into());
        }

        // Each page in the audit's parts: one for each core, one batch equation each.
        let holds = |part: &[Post]| keys.check_all(part).iter().all(Option::is_none);
        let at = Instant::now();
        let held = pages.iter().all(|page| {
            std::thread::scope(|scope| {
                let checks: Vec<_> = parts(page, cores).map(|part| scope.spawn(move || holds(part))).collect();
                checks.into_iter().all(|check| check.join().unwrap_or(false))
            })
        });
        receipts.push(elapsed_ms(at));
        let at = Instant::now();
        let held_one = pages.iter().all(|page| parts(page, cores).all(holds));
        one_core.push(elapsed_ms(at));
        if !held || !held_one {
            return Err("a receipt of the audited campaign did not hold".into());
        }
    }
    store.close().await;
    Ok(AuditPieces {
        cores,
        read_ms: median_of(read),
        chain_ms: median_of(chain),
        receipts_ms: median_of(receipts),
        receipts_one_core_ms: median_of(one_core),
    })
}

/// A page of posts in the audit's parts: one for each of `cores`.
fn parts(page: &[Post], cores: usize) -> std::slice::Chunks<'_, Post> {
    page.chunks(page.len().div_ceil(cores).max(1))
}

fn elapsed_ms(at: Instant) -> f64 {
    at.elapsed().as_secs_f64() * 1000.0
}

fn median_of(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    crate::report::median(&values)
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
    let history = history(&server, &admin, &db_file).await?;
    println!("cold audits (ms): {:.0?}", history.audit_ms);
    println!("repeat audits (ms): {:.0?}", history.repeat_audit_ms);
    println!("what the cold audit's time goes to: {:?}", history.audit_parts);
    Ok(())
}
