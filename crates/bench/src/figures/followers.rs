//! Figure 6: followers. Thousands of event streams held open while 64 clients post as in figure
//! 1: how soon each post reaches each follower, whether any is missed or repeated, and what the
//! followers cost the server (posts per second beside the same posting without them, memory per
//! open stream, the streams' reads of the store, CPU per post). On PostgreSQL, the same across
//! two servers on one database: followers on one, posters on the other.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use adjutant_store::Store;
use adjutant_store_postgres::PostgresStore;
use adjutant_store_sqlite::SqliteStore;
use uuid::Uuid;

use crate::campaign::{campaigns, game, Game};
use crate::child::{start_server_with, CpuSince, Process};
use crate::figures::posts::post_throughput;
use crate::follow::{Follow, Followers};
use crate::load::{progress, Run};
use crate::seed::Database;
use crate::Result;

/// The followers of the first run, all on one campaign.
pub const ONE_CAMPAIGN_FOLLOWERS: usize = 1_000;
/// The followers of the second run and of the replicas' run, spread evenly over
/// [`SPREAD_CAMPAIGNS`] campaigns, to which the posts are spread as in figure 1's scale rows.
pub const SPREAD_FOLLOWERS: usize = 10_000;
pub const SPREAD_CAMPAIGNS: usize = 1_000;
/// How long after the posting ends every follower must have had the last post.
pub const DRAIN_SECONDS: u64 = 30;
const DRAIN: Duration = Duration::from_secs(DRAIN_SECONDS);
/// How long the followers may take to open their streams.
const CONNECT: Duration = Duration::from_secs(120);

/// One run of followers, and the same posting without them when measured.
pub struct Following {
    pub name: String,
    pub followers: usize,
    /// The posting without followers (on the same server, just before), and with them.
    pub without: Option<Run>,
    pub with: Run,
    /// On two servers, the CPU time of the followers' server per post (µs) during the posting
    /// (the posters' server's is the run's own).
    pub follower_cpu_us: Option<f64>,
    /// The streams' reads of the store a second during each posting (the server's
    /// `adjutant_event_stream_reads_total`).
    pub reads_without: Option<f64>,
    pub reads_with: Option<f64>,
    /// Seconds the followers took to open their streams, and the server's resident memory
    /// before and after (KiB).
    pub connect_seconds: f64,
    pub rss_before_kib: Option<u64>,
    pub rss_after_kib: Option<u64>,
    /// Delivery latency, from the post's stamp to its arrival at a follower: p50, p99, max (ms).
    pub latency_ms: (f64, f64, f64),
    /// Posts the followers should have received (each follower, its campaign's posts during
    /// the run), received once in order, skipped, received again, and not received when the
    /// wait after the posting ended.
    pub expected: u64,
    pub delivered: u64,
    pub missed: u64,
    pub repeated: u64,
    pub undelivered: u64,
    /// Streams opened again after the server ended them, and refused (429, 503) or failed opens.
    pub reconnects: u64,
    pub refused: u64,
    pub failed: u64,
    /// Seconds from the last post's answer until every follower had it; `None`: not within
    /// [`DRAIN`].
    pub caught_up: Option<f64>,
}

impl Following {
    /// Posts per second with followers, as a share of the same posting without them.
    pub fn ratio(&self) -> Option<f64> {
        self.without.as_ref().map(|without| self.with.per_second() / without.per_second())
    }

    /// The server's resident memory per open stream, in KiB.
    pub fn kib_per_stream(&self) -> Option<f64> {
        let (before, after) = (self.rss_before_kib?, self.rss_after_kib?);
        Some((after as f64 - before as f64) / self.followers as f64)
    }
}

/// Streams the server is given room for beyond the followers.
pub const ROOM: usize = 2_000;
/// Memory the server's streams may take, per stream of room: far more than a stream costs, so
/// the budget never refuses a follower and the figure shows what the streams take.
pub const MEMORY_PER_STREAM: usize = 256 * 1024;

/// What the server is started with to hold the followers: connections, streams and the streams'
/// memory enough for all of them (the per-address and per-token shares, and the bound on what
/// one stream may leave unsent, stay the defaults; the followers come from addresses of their
/// own, [`crate::follow::STREAMS_PER_ADDRESS`] each).
pub fn follower_settings(followers: usize) -> Vec<(&'static str, String)> {
    let room = followers + ROOM;
    vec![
        ("ADJUTANT_MAX_CONNECTIONS", room.to_string()),
        ("ADJUTANT_MAX_EVENT_STREAMS", room.to_string()),
        ("ADJUTANT_EVENT_STREAMS_MEMORY", (room * MEMORY_PER_STREAM).to_string()),
    ]
}

/// The server, started to hold `followers` streams.
pub async fn follower_server(binary: &Path, url: &str, admin: &str, followers: usize) -> Result<Process> {
    start_server_with(binary, url, admin, None, &follower_settings(followers)).await
}

/// The streams' reads of the store so far, from the server's `/metrics` (read with the
/// operator's token); `None` when the server does not count them.
pub async fn stream_reads(server: &Process, admin: &str) -> Result<Option<f64>> {
    let response = reqwest::Client::new().get(format!("{}/metrics", server.base)).bearer_auth(admin).send().await?;
    if !response.status().is_success() {
        return Err(format!("GET /metrics: {}", response.status()).into());
    }
    let text = response.text().await?;
    Ok(text
        .lines()
        .find_map(|line| line.strip_prefix("adjutant_event_stream_reads_total "))
        .and_then(|value| value.trim().parse().ok()))
}

/// Each campaign's last post, as the store reads it (0: none).
async fn heads(store: &dyn Store, games: &[Game]) -> Result<Vec<i64>> {
    let mut heads = Vec::with_capacity(games.len());
    for game in games {
        heads.push(store.head(Uuid::parse_str(&game.campaign)?).await?.map_or(0, |post| post.seq));
    }
    Ok(heads)
}

async fn open_store(db: &Database<'_>) -> Result<Arc<dyn Store>> {
    Ok(match db {
        Database::Sqlite(_) => Arc::new(SqliteStore::open(&db.url()).await?),
        Database::Postgres(url) => Arc::new(PostgresStore::open(url).await?),
    })
}

/// Reads per second between two readings of the counter.
fn per_second(before: Option<f64>, after: Option<f64>, seconds: f64) -> Option<f64> {
    Some((after? - before?) / seconds)
}

/// One run: posting to `games` through `poster` for `seconds` without followers (when
/// `baseline`), then `followers` streams on `follower` spread evenly over `games`, each from
/// after its campaign's last post, and the same posting again.
#[allow(clippy::too_many_arguments)]
pub async fn following(
    name: String,
    follower: &Process,
    poster: &Process,
    db: &Database<'_>,
    admin: &str,
    games: Arc<Vec<Game>>,
    followers: usize,
    seconds: u64,
    baseline: bool,
) -> Result<Following> {
    let store = open_store(db).await?;
    let (mut without, mut reads_without) = (None, None);
    if baseline {
        eprintln!("   without followers: {} clients posting, {seconds} s", crate::load::CLIENTS);
        let before = stream_reads(follower, admin).await?;
        let run = post_throughput(poster, games.clone(), seconds).await?;
        progress(&run);
        reads_without = per_second(before, stream_reads(follower, admin).await?, run.seconds);
        without = Some(run);
    }
    let start = heads(&*store, &games).await?;
    let follows: Vec<Follow> = (0..followers)
        .map(|n| Follow { campaign: games[n % games.len()].campaign.clone(), after: start[n % games.len()] })
        .collect();
    let rss_before_kib = follower.rss_kib();
    let at = Instant::now();
    let mut streams = Followers::start(follower.address()?, follows);
    streams.connected(CONNECT).await?;
    let connect_seconds = at.elapsed().as_secs_f64();
    // The streams' first reads done and their buffers settled before the memory is read.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_after_kib = follower.rss_kib();
    eprintln!(
        "   {followers} streams open in {connect_seconds:.1} s; {} clients posting, {seconds} s",
        crate::load::CLIENTS
    );
    let before = stream_reads(follower, admin).await?;
    let follower_cpu = CpuSince::now(follower.child.id());
    let with = post_throughput(poster, games.clone(), seconds).await?;
    let follower_cpu_us = (follower.child.id() != poster.child.id()).then(|| follower_cpu.per_request(with.requests).0);
    let posted = Instant::now();
    let reads_with = per_second(before, stream_reads(follower, admin).await?, with.seconds);
    progress(&with);
    let end = heads(&*store, &games).await?;
    let through: Vec<i64> = (0..followers).map(|n| end[n % games.len()]).collect();
    let caught_up = streams.caught_up(&through, DRAIN).await.map(|_| posted.elapsed().as_secs_f64());
    let tally = streams.tally.clone();
    streams.stop().await;
    let expected: u64 = (0..followers).map(|n| (end[n % games.len()] - start[n % games.len()]) as u64).sum();
    let undelivered: u64 =
        tally.last.iter().zip(&through).map(|(last, &head)| (head - last.load(Ordering::Relaxed)).max(0) as u64).sum();
    let load = |counter: &std::sync::atomic::AtomicU64| counter.load(Ordering::Relaxed);
    let following = Following {
        name,
        followers,
        without,
        with,
        follower_cpu_us,
        reads_without,
        reads_with,
        connect_seconds,
        rss_before_kib,
        rss_after_kib,
        latency_ms: (tally.latency.percentile_ms(0.5), tally.latency.percentile_ms(0.99), tally.latency.max_ms()),
        expected,
        delivered: load(&tally.delivered),
        missed: load(&tally.missed),
        repeated: load(&tally.repeated),
        undelivered,
        reconnects: load(&tally.reconnects),
        refused: load(&tally.refused),
        failed: load(&tally.failed),
        caught_up,
    };
    eprintln!(
        "   delivery p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; {} of {} posts delivered, {} missed, {} repeated, {} not delivered",
        following.latency_ms.0,
        following.latency_ms.1,
        following.latency_ms.2,
        following.delivered,
        following.expected,
        following.missed,
        following.repeated,
        following.undelivered
    );
    Ok(following)
}

/// The two runs on one server each: 1,000 followers of one campaign, and 10,000 spread over
/// 1,000 campaigns; each beside the same posting without followers.
pub async fn followers_on_one_server(
    binary: &Path,
    dir: &Path,
    postgres: Option<&str>,
    admin: &str,
    seconds: u64,
) -> Result<Vec<Following>> {
    let mut runs = Vec::new();
    let file = dir.join("followers-one.db");
    let db = match postgres {
        Some(url) => Database::Postgres(url),
        None => Database::Sqlite(&file),
    };
    let backend = if postgres.is_some() { "PostgreSQL" } else { "SQLite" };
    eprintln!("6. {backend}: {ONE_CAMPAIGN_FOLLOWERS} followers of one campaign");
    let server = follower_server(binary, &db.url(), admin, ONE_CAMPAIGN_FOLLOWERS).await?;
    let one = Arc::new(vec![game(&server.base, admin, "Followed").await?]);
    let name =
        format!("{backend}, {} followers of one campaign", crate::report::thousands(ONE_CAMPAIGN_FOLLOWERS as u64));
    runs.push(following(name, &server, &server, &db, admin, one, ONE_CAMPAIGN_FOLLOWERS, seconds, true).await?);
    drop(server);

    let file = dir.join("followers-spread.db");
    let db = match postgres {
        Some(url) => Database::Postgres(url),
        None => Database::Sqlite(&file),
    };
    eprintln!("6. {backend}: {SPREAD_FOLLOWERS} followers over {SPREAD_CAMPAIGNS} campaigns");
    let server = follower_server(binary, &db.url(), admin, SPREAD_FOLLOWERS).await?;
    let games = Arc::new(campaigns(&server.base, admin, SPREAD_CAMPAIGNS).await?);
    let name = format!(
        "{backend}, {} followers over {} campaigns",
        crate::report::thousands(SPREAD_FOLLOWERS as u64),
        crate::report::thousands(SPREAD_CAMPAIGNS as u64)
    );
    runs.push(following(name, &server, &server, &db, admin, games, SPREAD_FOLLOWERS, seconds, true).await?);
    Ok(runs)
}

/// Two servers on one PostgreSQL database: 10,000 followers over 1,000 campaigns on the first,
/// the 64 clients posting through the second.
pub async fn replicas(binary: &Path, url: &str, admin: &str, seconds: u64) -> Result<Following> {
    eprintln!("6. PostgreSQL replicas: {SPREAD_FOLLOWERS} followers on one server, posts through another");
    let follower = follower_server(binary, url, admin, SPREAD_FOLLOWERS).await?;
    let poster = follower_server(binary, url, admin, 0).await?;
    let games = Arc::new(campaigns(&poster.base, admin, SPREAD_CAMPAIGNS).await?);
    let name = format!(
        "PostgreSQL, two servers: {} followers over {} campaigns on one, posts through the other",
        crate::report::thousands(SPREAD_FOLLOWERS as u64),
        crate::report::thousands(SPREAD_CAMPAIGNS as u64)
    );
    following(name, &follower, &poster, &Database::Postgres(url), admin, games, SPREAD_FOLLOWERS, seconds, false).await
}

/// Figure 6 alone (`adjutant-bench followers [URL]`): the runs on SQLite in a temporary folder,
/// and with a PostgreSQL URL (or `ADJUTANT_BENCH_POSTGRES_URL`) the replicas' run; the report's
/// section on the terminal.
pub async fn followers_alone(url: Option<String>) -> Result<()> {
    let temp = tempfile::tempdir()?;
    let admin = format!("bench-{}", uuid::Uuid::new_v4());
    let binary = std::env::current_exe()?.with_file_name("adjutant");
    let seconds = std::env::var("ADJUTANT_BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let url = url.or_else(|| std::env::var("ADJUTANT_BENCH_POSTGRES_URL").ok()).filter(|u| !u.is_empty());
    let mut runs = followers_on_one_server(&binary, temp.path(), None, &admin, seconds).await?;
    if let Some(url) = &url {
        runs.push(replicas(&binary, url, &admin, seconds).await?);
    }
    print!("{}", crate::report::followers_section(&[&runs]));
    Ok(())
}
