//! Figure 1: posts per second and latency, 64 clients, beside the ceiling of durable
//! single-row inserts, one per transaction, into the same database with the same settings.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::{Connection, Executor};

use crate::campaign::{batches, game, order, Game};
use crate::child::{start_server, CpuSince, Process};
use crate::load::{load, progress, Run, CLIENTS};
use crate::report::mib;
use crate::{http, Result};

/// Figure 1 for one backend: 64 clients posting with unique keys, each post to a campaign of
/// `games` picked by [`spread`] (with one campaign, all to it), by one of its two players.
pub async fn post_throughput(server: &Process, games: Arc<Vec<Game>>, seconds: u64) -> Result<Run> {
    let base = server.base.as_str();
    let cpu = CpuSince::now(server.child.id());
    let paths: Vec<String> = games.iter().map(|g| format!("/v1/campaigns/{}/posts", g.campaign)).collect();
    let tokens: Vec<[String; 2]> =
        games.iter().map(|g| [format!("Bearer {}", g.players[0]), format!("Bearer {}", g.players[1])]).collect();
    let run_id = uuid::Uuid::new_v4().simple().to_string();
    let mut run = load(base, CLIENTS, seconds, move |host, c, i| {
        let key = format!("{run_id}-{c}-{i}");
        let to = spread(c, i, paths.len());
        let headers = [("Authorization", tokens[to][c % 2].as_str()), ("Idempotency-Key", key.as_str())];
        http::Request::new("POST", host, &paths[to], &headers, order(c, i).to_string().as_bytes(), 201)
    })
    .await;
    run.cpu_us = Some(cpu.per_request(run.requests));
    Ok(run)
}

/// The campaign of `n` that a client's `i`th post goes to: uniform, independent between clients
/// and between requests (SplitMix64 of the two), and the same in every run.
pub fn spread(client: usize, i: u64, n: usize) -> usize {
    let mut z = ((client as u64) << 40 ^ i).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z % n.max(1) as u64) as usize
}

// ---------------------------------------------------------------------------------------------
// The ceilings of figure 1: one durable single-row insert per transaction, nothing else.

pub async fn sqlite_ceiling(dir: &Path, seconds: u64) -> Result<Run> {
    use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
    let options = SqliteConnectOptions::new()
        .filename(dir.join("ceiling.db"))
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full);
    let mut conn = sqlx::SqliteConnection::connect_with(&options).await?;
    // The settings are checked, not assumed: WAL, and synchronous = 2 (FULL).
    let journal: String = sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&mut conn).await?;
    let synchronous: i64 = sqlx::query_scalar("PRAGMA synchronous").fetch_one(&mut conn).await?;
    if journal != "wal" || synchronous != 2 {
        return Err(format!("the SQLite ceiling runs with journal_mode={journal}, synchronous={synchronous}").into());
    }
    conn.execute("CREATE TABLE log (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)").await?;
    let body = order(0, 0).to_string();
    let mut run = Run::default();
    let start = Instant::now();
    let end = start + Duration::from_secs(seconds);
    while Instant::now() < end {
        let at = Instant::now();
        // Autocommit: each INSERT is its own transaction, durable when it returns.
        sqlx::query("INSERT INTO log (body) VALUES (?)").bind(&body).execute(&mut conn).await?;
        run.latencies.push(at.elapsed().as_micros() as u64);
    }
    run.seconds = start.elapsed().as_secs_f64();
    run.requests = run.latencies.len() as u64;
    run.latencies.sort_unstable();
    Ok(run)
}

/// The PostgreSQL settings that make a commit durable, as the server reports them.
pub async fn postgres_durability(url: &str) -> Result<String> {
    let mut conn = sqlx::PgConnection::connect(url).await?;
    let mut settings = Vec::new();
    for name in ["fsync", "synchronous_commit", "wal_sync_method"] {
        let value: String = sqlx::query_scalar(&format!("SHOW {name}")).fetch_one(&mut conn).await?;
        settings.push(format!("{name}={value}"));
    }
    Ok(settings.join(", "))
}

pub async fn postgres_ceiling(url: &str, seconds: u64) -> Result<Run> {
    let mut conn = sqlx::PgConnection::connect(url).await?;
    conn.execute("DROP TABLE IF EXISTS bench_ceiling; CREATE TABLE bench_ceiling (seq BIGSERIAL PRIMARY KEY, body TEXT NOT NULL)")
        .await?;
    let body = order(0, 0).to_string();
    let mut run = Run::default();
    let start = Instant::now();
    let end = start + Duration::from_secs(seconds);
    while Instant::now() < end {
        let at = Instant::now();
        sqlx::query("INSERT INTO bench_ceiling (body) VALUES ($1)").bind(&body).execute(&mut conn).await?;
        run.latencies.push(at.elapsed().as_micros() as u64);
    }
    run.seconds = start.elapsed().as_secs_f64();
    run.requests = run.latencies.len() as u64;
    run.latencies.sort_unstable();
    conn.execute("DROP TABLE bench_ceiling").await?;
    Ok(run)
}

/// Figure 1's service row alone (`adjutant-bench throughput [URL]`), to measure the post path
/// while working on it: the server beside this binary on a throwaway SQLite database (or on the
/// database URL given), one campaign, 64 clients; with the CPU time each side spent per post,
/// and each request's start and latency with `ADJUTANT_BENCH_TIMELINE` ([`write_timeline`]).
pub async fn throughput_alone(url: Option<String>) -> Result<()> {
    let temp = tempfile::tempdir()?;
    let url = url.unwrap_or_else(|| format!("sqlite://{}", temp.path().join("adjutant.db").display()));
    let admin = format!("bench-{}", uuid::Uuid::new_v4());
    let binary = std::env::current_exe()?.with_file_name("adjutant");
    let server = start_server(&binary, &url, &admin).await?;
    let one = game(&server.base, &admin, "Throughput").await?;
    let seconds = std::env::var("ADJUTANT_BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let run = post_throughput(&server, Arc::new(vec![one]), seconds).await?;
    progress(&run);
    write_timeline(&run)?;
    let batches = batches(&server.base).await?;
    println!(
        "largest batch {}, {} batches one by one, peak memory {}",
        batches.largest,
        batches.one_by_one,
        mib(server.peak_kib())
    );
    let percentiles: Vec<String> = [0.1, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0]
        .iter()
        .map(|p| format!("p{}: {:.1}", p * 100.0, run.percentile_ms(*p)))
        .collect();
    println!("latency ms: {}", percentiles.join(", "));
    Ok(())
}

/// With `ADJUTANT_BENCH_TIMELINE=FILE`, a run's every request as a line of `FILE`: when it
/// started (µs after the run's start) and how long it took (µs). Slow requests that come
/// together every so often are a stall of the server (a checkpoint, a lock), not the queue.
pub fn write_timeline(run: &Run) -> Result<()> {
    let Some(file) = std::env::var_os("ADJUTANT_BENCH_TIMELINE") else { return Ok(()) };
    let mut text = String::from("start_us,latency_us\n");
    for (start, latency) in &run.timeline {
        text.push_str(&format!("{start},{latency}\n"));
    }
    std::fs::write(&file, text)?;
    eprintln!("   each request's start and latency written to {}", PathBuf::from(file).display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::scale::SCALE_CAMPAIGNS;

    #[test]
    fn the_scale_run_spreads_posts_over_every_campaign() {
        let mut posts = vec![0u32; SCALE_CAMPAIGNS];
        for client in 0..CLIENTS {
            for i in 0..500 {
                posts[spread(client, i, SCALE_CAMPAIGNS)] += 1;
            }
        }
        // 32,000 posts over 1,000 campaigns: 32 each on average.
        assert!(posts.iter().all(|&n| (8..=96).contains(&n)), "{:?}", (posts.iter().min(), posts.iter().max()));
        assert_eq!(spread(5, 7, SCALE_CAMPAIGNS), spread(5, 7, SCALE_CAMPAIGNS));
        assert!((0..CLIENTS).all(|c| (0..100).all(|i| spread(c, i, 1) == 0)));
    }
}
