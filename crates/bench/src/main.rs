//! `adjutant-bench`: measures Adjutant beside the physical ceiling of each figure, in the same
//! run on the same machine, and writes `docs/BENCHMARKS.md`.
//!
//! 1. POST posts on SQLite (`synchronous=FULL`), 64 concurrent clients with unique keys, beside
//!    a minimal loop of durable single-row inserts, one per transaction, with the same settings;
//!    the same on PostgreSQL when a URL is given. Then the same 64 clients at scale: 1,000
//!    campaigns with 1,000 earlier posts each, every post to a campaign picked at random.
//! 2. Post latency with 100 and with 100,000 earlier posts in the campaign, and the
//!    whole-campaign audit of the larger (every post replayed through the rules).
//! 3. `/v1/tools/result-number` requests per second beside a bare axum handler that returns the
//!    same JSON.
//! 4. The server's peak resident memory (VmHWM) under (1), and under (1) at scale.
//!
//! The server is the real `adjutant` binary in a child process; the bare handler runs in a
//! child process too (this binary, `bare-calculator`), so both sides of (3) pay the same. The
//! load generator runs here, on loopback, for a bounded time. Run it with `scripts/bench.sh`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use adjutant_rules::chain::{Link, GENESIS};
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use sqlx::{Connection, Executor};

mod http;

const USAGE: &str = "usage: adjutant-bench [--server PATH] [--postgres URL] [--seconds N] [--out FILE] [--command TEXT]

Runs Adjutant's benchmarks and writes them (default docs/BENCHMARKS.md). --server is the
adjutant binary (default: beside this one); --postgres adds the PostgreSQL figures (the URL of a
database the bench may fill; also ADJUTANT_BENCH_POSTGRES_URL); --seconds bounds each
throughput run (default 10); --command is the command recorded in the file.";

const CLIENTS: usize = 64;

type Error = Box<dyn std::error::Error + Send + Sync>;
type Result<T, E = Error> = std::result::Result<T, E>;

struct Options {
    server: PathBuf,
    postgres: Option<String>,
    seconds: u64,
    out: PathBuf,
    command: String,
}

fn options() -> Result<Options> {
    let mut args = std::env::args().skip(1);
    let exe = std::env::current_exe()?;
    let mut o = Options {
        server: exe.with_file_name("adjutant"),
        postgres: std::env::var("ADJUTANT_BENCH_POSTGRES_URL").ok().filter(|u| !u.is_empty()),
        seconds: 10,
        out: PathBuf::from("docs/BENCHMARKS.md"),
        command: "./scripts/bench.sh".to_owned(),
    };
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value\n\n{USAGE}"));
        match arg.as_str() {
            "--server" => o.server = value()?.into(),
            "--postgres" => o.postgres = Some(value()?),
            "--seconds" => o.seconds = value()?.parse()?,
            "--out" => o.out = value()?.into(),
            "--command" => o.command = value()?,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}\n\n{USAGE}").into()),
        }
    }
    Ok(o)
}

fn main() -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("adjutant-bench: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let args: Vec<String> = std::env::args().collect();
    let outcome = if args.get(1).map(String::as_str) == Some("bare-calculator") {
        runtime.block_on(bare_calculator(args.get(2).cloned().unwrap_or_default()))
    } else if args.get(1).map(String::as_str) == Some("history") {
        runtime.block_on(history_alone(args.get(2).map(PathBuf::from)))
    } else if args.get(1).map(String::as_str) == Some("throughput") {
        runtime.block_on(throughput_alone(args.get(2).cloned()))
    } else if args.get(1).map(String::as_str) == Some("scale") {
        runtime.block_on(scale_alone(args.get(2).cloned()))
    } else if args.get(1).map(String::as_str) == Some("calculator") {
        runtime.block_on(calculator_alone())
    } else {
        options().and_then(|o| runtime.block_on(run(o)))
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("adjutant-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Child processes.

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

struct Process {
    child: Child,
    base: String,
}

impl Process {
    async fn wait_ready(self, path: &str) -> Result<Self> {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(r) = client.get(format!("{}{path}", self.base)).send().await {
                if r.status().is_success() {
                    return Ok(self);
                }
            }
            if Instant::now() > deadline {
                return Err(format!("{} did not answer in 30 s", self.base).into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Peak resident memory, from /proc: VmHWM in KiB.
    fn peak_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The seed of the server's receipt-signing key during the bench.
const BENCH_SIGNING_SEED: [u8; 32] = [7; 32];

async fn start_server(binary: &Path, database_url: &str, admin: &str) -> Result<Process> {
    start_server_logging(binary, database_url, admin, None).await
}

/// The server, with its log (every step's span as it closes) written to `spans` when given.
async fn start_server_logging(binary: &Path, database_url: &str, admin: &str, spans: Option<&Path>) -> Result<Process> {
    let port = free_port()?;
    let mut command = Command::new(binary);
    match spans {
        Some(file) => {
            command
                .env("ADJUTANT_LOG", "warn,adjutant::post=debug,tower_http::trace=debug")
                .env("ADJUTANT_LOG_SPANS", "close")
                .env("NO_COLOR", "1")
                .stdout(std::fs::File::create(file)?);
        }
        None => {
            command.env("ADJUTANT_LOG", "warn").stdout(Stdio::null());
        }
    }
    let child = command
        .env("ADJUTANT_LISTEN", format!("127.0.0.1:{port}"))
        .env("ADJUTANT_DATABASE_URL", database_url)
        .env("ADJUTANT_ADMIN_TOKEN", admin)
        // A key the bench knows, so the posts it seeds carry receipts the audit accepts.
        .env("ADJUTANT_SIGNING_KEY", hex::encode(BENCH_SIGNING_SEED))
        // The limiter stays on the hot path, with a limit no client reaches.
        .env("ADJUTANT_RATE_LIMIT_PER_MINUTE", "4000000000")
        .env("ADJUTANT_EXPENSIVE_READS_PER_MINUTE", "4000000000")
        // The bench fills campaigns with far more posts a day than any player makes.
        .env("ADJUTANT_NOTES_PER_PLAYER_PER_DAY", "0")
        .env("ADJUTANT_SEALS_PER_PLAYER_PER_DAY", "0")
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e} (build it with cargo build --release -p adjutant-server)", binary.display()))?;
    Process { child, base: format!("http://127.0.0.1:{port}") }.wait_ready("/healthz").await
}

// ---------------------------------------------------------------------------------------------
// The load generator.

#[derive(Debug, Default, Clone)]
struct Run {
    requests: u64,
    errors: u64,
    seconds: f64,
    /// Latencies of the successful requests, in microseconds, sorted.
    latencies: Vec<u64>,
    /// Each successful request's start (µs from the run's start) and latency (µs), in the
    /// order they started: where the slow ones fall in time.
    timeline: Vec<(u64, u64)>,
    /// CPU time per successful request, in microseconds: the server's process, and the load
    /// generator's (this process), when measured.
    cpu_us: Option<(f64, f64)>,
}

impl Run {
    fn per_second(&self) -> f64 {
        self.requests as f64 / self.seconds
    }

    fn percentile_ms(&self, p: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let i = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
        self.latencies[i] as f64 / 1000.0
    }
}

/// `clients` loops, each on a connection of its own to `base`, sending `request(host, client, i)`
/// one after another until `seconds` pass (see [`http`]: the load generator does no more than a
/// client must, as it shares the cores with the server).
async fn load<F>(base: &str, clients: usize, seconds: u64, request: F) -> Run
where
    F: Fn(&str, usize, u64) -> http::Request + Send + Sync + 'static,
{
    let request = Arc::new(request);
    let errors = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let end = start + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for client in 0..clients {
        let (request, errors) = (request.clone(), errors.clone());
        let mut connection = http::Connection::new(base);
        tasks.push(tokio::spawn(async move {
            let mut timeline = Vec::new();
            let mut i = 0;
            while Instant::now() < end {
                let asked = request(connection.host(), client, i);
                let at = Instant::now();
                if connection.send(&asked).await.unwrap_or(false) {
                    timeline.push((at.duration_since(start).as_micros() as u64, at.elapsed().as_micros() as u64));
                } else {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
                i += 1;
            }
            timeline
        }));
    }
    let mut timeline = Vec::new();
    for task in tasks {
        timeline.extend(task.await.unwrap_or_default());
    }
    let seconds = start.elapsed().as_secs_f64();
    timeline.sort_unstable();
    let mut latencies: Vec<u64> = timeline.iter().map(|&(_, latency)| latency).collect();
    latencies.sort_unstable();
    let requests = latencies.len() as u64;
    Run { requests, errors: errors.load(Ordering::Relaxed), seconds, latencies, timeline, cpu_us: None }
}

/// A run's CPU time per request, "server / load generator" in µs ("—" when not measured).
fn cpu_per_request(run: &Run) -> String {
    run.cpu_us.map_or("—".to_owned(), |(server, client)| format!("{server:.1} / {client:.1}"))
}

/// A throughput run's figures, on the terminal as soon as they are measured.
fn progress(run: &Run) {
    let cpu = run.cpu_us.map_or(String::new(), |(server, client)| {
        format!("; CPU per post: server {server:.0} µs, load generator {client:.0} µs")
    });
    eprintln!(
        "   {:.0}/s, p50 {:.2} ms, p99 {:.2} ms, {} failed{cpu}",
        run.per_second(),
        run.percentile_ms(0.5),
        run.percentile_ms(0.99),
        run.errors
    );
}

fn client() -> Result<reqwest::Client> {
    Ok(reqwest::Client::builder().pool_max_idle_per_host(CLIENTS * 2).timeout(Duration::from_secs(30)).build()?)
}

// ---------------------------------------------------------------------------------------------
// A campaign to post to.

struct Game {
    campaign: String,
    players: Vec<String>,
}

async fn created(client: &reqwest::Client, url: String, token: &str, body: Value) -> Result<Value> {
    let response = client.post(&url).bearer_auth(token).json(&body).send().await?;
    let status = response.status();
    let text = response.text().await?;
    if status.as_u16() != 201 {
        return Err(format!("{url}: {status} {text}").into());
    }
    Ok(serde_json::from_str(&text)?)
}

async fn moderator(client: &reqwest::Client, base: &str, admin: &str) -> Result<String> {
    let moderator = created(client, format!("{base}/v1/moderators"), admin, json!({"name": "Bench"})).await?;
    Ok(moderator["token"].as_str().ok_or("no token")?.to_owned())
}

async fn game(base: &str, admin: &str, name: &str) -> Result<Game> {
    let client = client()?;
    let moderator = moderator(&client, base, admin).await?;
    campaign(&client, base, &moderator, name).await
}

/// A resolver campaign of the moderator's, with a player on each side.
async fn campaign(client: &reqwest::Client, base: &str, moderator: &str, name: &str) -> Result<Game> {
    let body = json!({"name": name, "mode": "resolver", "ruleset": RULESET});
    let campaign = created(client, format!("{base}/v1/campaigns"), moderator, body).await?;
    let campaign = campaign["id"].as_str().ok_or("no id")?.to_owned();
    let mut players = Vec::new();
    for side in ["union", "confederate"] {
        let body = json!({"name": side, "side": side});
        let player = created(client, format!("{base}/v1/campaigns/{campaign}/players"), moderator, body).await?;
        players.push(player["token"].as_str().ok_or("no token")?.to_owned());
    }
    Ok(Game { campaign, players })
}

/// The campaigns measured are resolver campaigns of this ruleset: every post rolls dice.
const RULESET: &str = "acw-25mm";

/// A post that rolls a die and reads a table: a formation fail test, its class varying.
fn order(client: usize, i: u64) -> Value {
    json!({"kind": "resolve", "body": {"action": "formation_test", "inputs": {"class": CLASSES[(client + i as usize) % 4]}}})
}

const CLASSES: [&str; 4] = ["A", "B", "C", "D"];

/// Figure 1 for one backend: 64 clients posting with unique keys, each post to a campaign of
/// `games` picked by [`spread`] (with one campaign, all to it), by one of its two players.
async fn post_throughput(server: &Process, games: Arc<Vec<Game>>, seconds: u64) -> Result<Run> {
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
fn spread(client: usize, i: u64, n: usize) -> usize {
    let mut z = ((client as u64) << 40 ^ i).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z % n.max(1) as u64) as usize
}

// ---------------------------------------------------------------------------------------------
// Figure 1 at scale: many campaigns, each with a history, the writes spread across them.

const SCALE_CAMPAIGNS: usize = 1_000;
/// The earlier posts seeded into each campaign of the scale rows.
const SCALE_POSTS: i64 = 1_000;
/// Requests creating the campaigns at once.
const CREATORS: usize = 8;

/// `n` resolver campaigns of one moderator, created through the API, in order.
async fn campaigns(base: &str, admin: &str, n: usize) -> Result<Vec<Game>> {
    let client = client()?;
    let moderator = Arc::new(moderator(&client, base, admin).await?);
    let next = Arc::new(AtomicUsize::new(0));
    let mut creators = Vec::new();
    for _ in 0..CREATORS {
        let (client, base, moderator, next) = (client.clone(), base.to_owned(), moderator.clone(), next.clone());
        creators.push(tokio::spawn(async move {
            let mut made = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return Ok::<_, Error>(made);
                }
                made.push((i, campaign(&client, &base, &moderator, &format!("Scale {i}")).await?));
            }
        }));
    }
    let mut games = Vec::with_capacity(n);
    for creator in creators {
        games.extend(creator.await??);
    }
    games.sort_by_key(|(i, _)| *i);
    Ok(games.into_iter().map(|(_, game)| game).collect())
}

/// The database a server runs on, as the bench reaches it too.
enum Database<'a> {
    Sqlite(&'a Path),
    Postgres(&'a str),
}

impl Database<'_> {
    fn url(&self) -> String {
        match self {
            Self::Sqlite(file) => format!("sqlite://{}", file.display()),
            Self::Postgres(url) => (*url).to_owned(),
        }
    }

    async fn seeder(&self) -> Result<Seeder> {
        match self {
            Self::Sqlite(file) => Seeder::sqlite(file).await,
            Self::Postgres(url) => Seeder::postgres(url).await,
        }
    }
}

/// A scale row: the posts, and how the campaigns were made.
struct Scale {
    service: Run,
    largest_batch: u64,
    peak_kib: Option<u64>,
    create_seconds: f64,
    seed_seconds: f64,
    /// The campaigns audited whole after the run, and the posts each held.
    audited: Vec<u64>,
}

/// A fresh server on `db`; 1,000 campaigns created through its API; 1,000 earlier posts seeded
/// into each; then 64 clients posting, each post to a campaign picked at random. Afterwards a
/// fresh whole-campaign audit of the first, a middle and the last campaign must pass: the
/// server takes the seeded posts as its own.
async fn scale(binary: &Path, db: Database<'_>, admin: &str, seconds: u64) -> Result<Scale> {
    let server = start_server(binary, &db.url(), admin).await?;
    let at = Instant::now();
    let games = campaigns(&server.base, admin, SCALE_CAMPAIGNS).await?;
    let create_seconds = at.elapsed().as_secs_f64();
    let at = Instant::now();
    let ids: Vec<String> = games.iter().map(|g| g.campaign.clone()).collect();
    seed(db.seeder().await?, &ids, SCALE_POSTS).await?;
    let seed_seconds = at.elapsed().as_secs_f64();
    eprintln!("   campaigns created in {create_seconds:.1} s, their posts seeded in {seed_seconds:.1} s; posting");
    let service = post_throughput(&server, Arc::new(games), seconds).await?;
    progress(&service);
    let peak_kib = server.peak_kib();
    let largest_batch = largest_batch(&server.base).await?;
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
    Ok(Scale { service, largest_batch, peak_kib, create_seconds, seed_seconds, audited })
}

// ---------------------------------------------------------------------------------------------
// The ceilings of figure 1: one durable single-row insert per transaction, nothing else.

async fn sqlite_ceiling(dir: &Path, seconds: u64) -> Result<Run> {
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
async fn postgres_durability(url: &str) -> Result<String> {
    let mut conn = sqlx::PgConnection::connect(url).await?;
    let mut settings = Vec::new();
    for name in ["fsync", "synchronous_commit", "wal_sync_method"] {
        let value: String = sqlx::query_scalar(&format!("SHOW {name}")).fetch_one(&mut conn).await?;
        settings.push(format!("{name}={value}"));
    }
    Ok(settings.join(", "))
}

async fn postgres_ceiling(url: &str, seconds: u64) -> Result<Run> {
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

// ---------------------------------------------------------------------------------------------
// Seeding: earlier posts written straight into the server's database, as the server writes them.

/// A database the bench seeds posts into, beside the server that owns it (the server made the
/// schema and the campaigns; the bench only appends posts and their outcomes). Seeding is the
/// set-up, not a measured figure, so its own commits do not wait for the disk (SQLite
/// `synchronous=NORMAL` in WAL mode, PostgreSQL `synchronous_commit=off` for its session); the
/// server's connections keep their own settings.
enum Seeder {
    Sqlite(sqlx::SqliteConnection),
    Postgres(sqlx::PgConnection),
}

/// A campaign's creation record, as the backend stores it: the chain starts from its hash.
struct CampaignRecord {
    name: String,
    moderator_id: String,
    mode: String,
    scenario: Option<String>,
    scenario_text: Option<String>,
    ruleset: Option<String>,
    settings: String,
    created_at: DateTime<Utc>,
    chain_genesis: String,
}

impl CampaignRecord {
    fn from_row<R: sqlx::Row>(row: &R, created_at: DateTime<Utc>) -> Result<Self>
    where
        for<'a> &'a str: sqlx::ColumnIndex<R>,
        for<'a> String: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
        for<'a> Option<String>: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    {
        Ok(Self {
            name: row.try_get("name")?,
            moderator_id: row.try_get("moderator_id")?,
            mode: row.try_get("mode")?,
            scenario: row.try_get("scenario")?,
            scenario_text: row.try_get("scenario_text")?,
            ruleset: row.try_get("ruleset")?,
            settings: row.try_get("settings")?,
            created_at,
            chain_genesis: row.try_get("chain_genesis")?,
        })
    }

    /// The hash the campaign's first post links to, as the server's does.
    fn genesis(&self, campaign: &str) -> String {
        if self.chain_genesis == "legacy" {
            return GENESIS.to_owned();
        }
        adjutant_rules::chain::CreationRecord {
            campaign_id: campaign,
            name: &self.name,
            moderator_id: &self.moderator_id,
            mode: &self.mode,
            scenario: self.scenario.as_deref(),
            scenario_text: self.scenario_text.as_deref(),
            ruleset: self.ruleset.as_deref(),
            settings: &self.settings,
            created_at: self.created_at,
        }
        .genesis()
    }
}

/// Where a campaign's seeded posts start: the campaign, the player who writes them, and the
/// hash the first one links to.
struct ChainStart {
    /// The campaign's place among those seeded together, which orders its outcomes' ids.
    order: u64,
    campaign: String,
    author: String,
    side: Option<String>,
    genesis: String,
}

/// One seeded post and its outcome, as the server would have written them.
struct SeededPost {
    seq: i64,
    stamp: DateTime<Utc>,
    body: String,
    prev_hash: String,
    hash: String,
    signature: String,
    outcome_id: uuid::Uuid,
    outcome: String,
}

/// Rows per multi-row INSERT on SQLite: within its 32,766 bound parameters. (PostgreSQL takes a
/// campaign's posts in one statement, each column an array.)
const SEED_ROWS_PER_INSERT: usize = 500;

/// Campaigns whose posts are computed at once (hashes, signatures, dice), while the database
/// writes the ones before.
const SEED_WORKERS: usize = 2;

fn signing_key() -> ed25519_dalek::SigningKey {
    ed25519_dalek::SigningKey::from_bytes(&BENCH_SIGNING_SEED)
}

/// The receipts' key id, as the server names its key.
fn receipt_key_id() -> String {
    use sha2::Digest;
    format!("ed25519:{}", &hex::encode(sha2::Sha256::digest(signing_key().verifying_key().as_bytes()))[..16])
}

/// `count` `resolve` posts after `start`, a millisecond apart from `first`, each hashed and
/// chained, its receipt signed with the server's key, and its outcome rolled from its own dice
/// stream exactly as the server does, so the audit verifies them.
fn seeded_posts(start: &ChainStart, count: i64, first: DateTime<Utc>) -> Result<Vec<SeededPost>> {
    use adjutant_rules::resolver;
    use adjutant_rules::DiceStream;
    use ed25519_dalek::Signer;
    let ruleset = resolver::ruleset(RULESET).ok_or("no ruleset")?;
    let signer = signing_key();
    let mut prev_hash = start.genesis.clone();
    let mut posts = Vec::with_capacity(usize::try_from(count)?);
    for seq in 1..=count {
        let stamp = first + chrono::Duration::milliseconds(seq);
        let order = order(seq as usize, seq as u64);
        let body = serde_json::to_string(&order["body"])?;
        let hash = Link {
            prev_hash: &prev_hash,
            campaign_id: &start.campaign,
            seq,
            stamp,
            author_id: &start.author,
            side: start.side.as_deref(),
            kind: "resolve",
            body: &body,
        }
        .hash();
        let message = adjutant_rules::chain::receipt_message(&start.campaign, seq, stamp, &hash);
        let signature = hex::encode(signer.sign(message.as_bytes()).to_bytes());
        let dice = DiceStream::new(&start.campaign, seq as u64, stamp);
        let resolution = resolver::resolve(ruleset, "formation_test", &order["body"]["inputs"], dice)
            .map_err(|r| format!("seeding post {seq}: {r}"))?;
        let outcome = json!({"headline": resolution.headline, "data": serde_json::to_value(&resolution)?}).to_string();
        let prev = std::mem::replace(&mut prev_hash, hash.clone());
        posts.push(SeededPost {
            seq,
            stamp,
            body,
            prev_hash: prev,
            hash,
            signature,
            outcome_id: outcome_id(first, start.order * count as u64 + seq as u64),
            outcome,
        });
    }
    Ok(posts)
}

/// The id of the `n`th outcome seeded: time-ordered (UUIDv7, the seeding's first stamp and then
/// `n`), so the seeded outcomes are appended to the end of the id index instead of all over it.
fn outcome_id(first: DateTime<Utc>, n: u64) -> uuid::Uuid {
    let mut counter = [0u8; 10];
    counter[2..].copy_from_slice(&n.to_be_bytes());
    uuid::Builder::from_unix_timestamp_millis(first.timestamp_millis() as u64, &counter).into_uuid()
}

impl Seeder {
    async fn sqlite(db_file: &Path) -> Result<Self> {
        use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode};
        let options = SqliteConnectOptions::new()
            .filename(db_file)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(sqlx::sqlite::SqliteSynchronous::Normal)
            .pragma("cache_size", "-262144")
            .busy_timeout(Duration::from_secs(30));
        Ok(Self::Sqlite(sqlx::SqliteConnection::connect_with(&options).await?))
    }

    async fn postgres(url: &str) -> Result<Self> {
        let mut conn = sqlx::PgConnection::connect(url).await?;
        conn.execute("SET synchronous_commit = off").await?;
        Ok(Self::Postgres(conn))
    }

    /// The campaign's creation record and the player whose posts are seeded (the first side).
    async fn chain_start(&mut self, order: u64, campaign: &str) -> Result<ChainStart> {
        const PLAYER: &str =
            "SELECT id, side FROM principals WHERE kind = 'player' AND campaign_id = $1 ORDER BY side LIMIT 1";
        const RECORD: &str =
            "SELECT name, moderator_id, mode, scenario, scenario_text, ruleset, settings, created_at, chain_genesis
             FROM campaigns WHERE id = $1";
        let (author, side, record) = match self {
            Self::Sqlite(conn) => {
                let (author, side): (String, Option<String>) =
                    sqlx::query_as(PLAYER).bind(campaign).fetch_one(&mut *conn).await?;
                let row = sqlx::query(RECORD).bind(campaign).fetch_one(&mut *conn).await?;
                let created_at: i64 = sqlx::Row::try_get(&row, "created_at")?;
                let created_at = DateTime::from_timestamp_millis(created_at).ok_or("bad created_at")?;
                (author, side, CampaignRecord::from_row(&row, created_at)?)
            }
            Self::Postgres(conn) => {
                let id = uuid::Uuid::parse_str(campaign)?;
                let (author, side): (uuid::Uuid, Option<String>) =
                    sqlx::query_as(PLAYER).bind(id).fetch_one(&mut *conn).await?;
                let record = RECORD.replace("moderator_id,", "moderator_id::text AS moderator_id,");
                let row = sqlx::query(&record).bind(id).fetch_one(&mut *conn).await?;
                let created_at: DateTime<Utc> = sqlx::Row::try_get(&row, "created_at")?;
                (author.to_string(), side, CampaignRecord::from_row(&row, created_at)?)
            }
        };
        let genesis = record.genesis(campaign);
        Ok(ChainStart { order, campaign: campaign.to_owned(), author, side, genesis })
    }

    /// Appends the posts and their outcomes in one transaction, many rows to a statement.
    async fn insert(&mut self, start: &ChainStart, key_id: &str, posts: &[SeededPost]) -> Result<()> {
        const POSTS: &str =
            "INSERT INTO posts (campaign_id, seq, {stamp}, author_id, side, kind, body, prev_hash, hash,
                                                receipt_key_id, receipt_signature) ";
        const OUTCOMES: &str = "INSERT INTO outcomes (id, campaign_id, position, seq, kind, data) ";
        match self {
            Self::Sqlite(conn) => {
                let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
                for chunk in posts.chunks(SEED_ROWS_PER_INSERT) {
                    let mut insert = sqlx::QueryBuilder::<sqlx::Sqlite>::new(POSTS.replace("{stamp}", "stamp_ms"));
                    insert.push_values(chunk, |mut row, post| {
                        row.push_bind(&start.campaign)
                            .push_bind(post.seq)
                            .push_bind(post.stamp.timestamp_millis())
                            .push_bind(&start.author)
                            .push_bind(&start.side)
                            .push_bind("resolve")
                            .push_bind(&post.body)
                            .push_bind(&post.prev_hash)
                            .push_bind(&post.hash)
                            .push_bind(key_id)
                            .push_bind(&post.signature);
                    });
                    insert.build().execute(&mut *tx).await?;
                    let mut insert = sqlx::QueryBuilder::<sqlx::Sqlite>::new(OUTCOMES);
                    insert.push_values(chunk, |mut row, post| {
                        row.push_bind(post.outcome_id.to_string())
                            .push_bind(&start.campaign)
                            .push_bind(post.seq)
                            .push_bind(post.seq)
                            .push_bind("resolution")
                            .push_bind(&post.outcome);
                    });
                    insert.build().execute(&mut *tx).await?;
                }
                tx.commit().await?;
            }
            Self::Postgres(conn) => {
                // One statement for the posts and one for the outcomes, each column an array.
                let campaign = uuid::Uuid::parse_str(&start.campaign)?;
                let author = uuid::Uuid::parse_str(&start.author)?;
                let column = |f: fn(&SeededPost) -> &String| posts.iter().map(f).cloned().collect::<Vec<_>>();
                let seqs: Vec<i64> = posts.iter().map(|p| p.seq).collect();
                let mut tx = conn.begin().await?;
                sqlx::query(
                    "INSERT INTO posts (campaign_id, seq, stamp, author_id, side, kind, body, prev_hash, hash,
                                        receipt_key_id, receipt_signature)
                     SELECT $1, p.seq, p.stamp, $2, $3, 'resolve', p.body, p.prev_hash, p.hash, $4, p.signature
                     FROM UNNEST($5::bigint[], $6::timestamptz[], $7::text[], $8::text[], $9::text[], $10::text[])
                          AS p (seq, stamp, body, prev_hash, hash, signature)",
                )
                .bind(campaign)
                .bind(author)
                .bind(&start.side)
                .bind(key_id)
                .bind(&seqs)
                .bind(posts.iter().map(|p| p.stamp).collect::<Vec<_>>())
                .bind(column(|p| &p.body))
                .bind(column(|p| &p.prev_hash))
                .bind(column(|p| &p.hash))
                .bind(column(|p| &p.signature))
                .execute(&mut *tx)
                .await?;
                sqlx::query(
                    "INSERT INTO outcomes (id, campaign_id, position, seq, kind, data)
                     SELECT o.id, $1, o.seq, o.seq, 'resolution', o.data
                     FROM UNNEST($2::uuid[], $3::bigint[], $4::text[]) AS o (id, seq, data)",
                )
                .bind(campaign)
                .bind(posts.iter().map(|p| p.outcome_id).collect::<Vec<_>>())
                .bind(&seqs)
                .bind(column(|p| &p.outcome))
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
            }
        }
        Ok(())
    }
}

/// Appends `count` earlier posts to each campaign straight into the database, each campaign in
/// one transaction: a few campaigns' posts are computed on blocking threads while the database
/// writes the ones before. The stamps are a millisecond apart and end a minute before the
/// seeding began, so the server's next stamp is later still.
async fn seed(mut db: Seeder, campaigns: &[String], count: i64) -> Result<()> {
    let first: DateTime<Utc> = Utc::now() - chrono::Duration::milliseconds(count + 60_000);
    let mut starts = Vec::with_capacity(campaigns.len());
    for (order, campaign) in campaigns.iter().enumerate() {
        starts.push(Arc::new(db.chain_start(order as u64, campaign).await?));
    }
    let starts = Arc::new(starts);
    let next = Arc::new(AtomicUsize::new(0));
    let (send, mut computed) = tokio::sync::mpsc::channel::<(usize, Vec<SeededPost>)>(SEED_WORKERS);
    let mut workers = Vec::new();
    for _ in 0..SEED_WORKERS {
        let (starts, next, send) = (starts.clone(), next.clone(), send.clone());
        workers.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(start) = starts.get(i).cloned() else { return Ok::<(), Error>(()) };
                let posts = tokio::task::spawn_blocking(move || seeded_posts(&start, count, first)).await??;
                if send.send((i, posts)).await.is_err() {
                    return Ok(());
                }
            }
        }));
    }
    drop(send);
    let key_id = receipt_key_id();
    while let Some((i, posts)) = computed.recv().await {
        db.insert(&starts[i], &key_id, &posts).await?;
    }
    for worker in workers {
        worker.await??;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Figure 2: history.

struct History {
    small: Run,
    large: Run,
    audit_ms: Vec<f64>,
    /// A repeat audit after one new post (the server goes on from the prefix it verified).
    repeat_audit_ms: Vec<f64>,
}

/// One client, posting alternately to a campaign with 100 and one with 100,000 earlier posts.
async fn history(base: &str, admin: &str, db_file: &Path) -> Result<History> {
    const POSTS: usize = 300;
    let small = game(base, admin, "A hundred posts").await?;
    let large = game(base, admin, "A hundred thousand posts").await?;
    seed(Seeder::sqlite(db_file).await?, std::slice::from_ref(&small.campaign), 100).await?;
    seed(Seeder::sqlite(db_file).await?, std::slice::from_ref(&large.campaign), 100_000).await?;
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
async fn history_alone(dir: Option<PathBuf>) -> Result<()> {
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

/// Figure 1's service row alone (`adjutant-bench throughput [URL]`), to measure the post path
/// while working on it: the server beside this binary on a throwaway SQLite database (or on the
/// database URL given), one campaign, 64 clients; with the CPU time each side spent per post,
/// and each request's start and latency with `ADJUTANT_BENCH_TIMELINE` ([`write_timeline`]).
async fn throughput_alone(url: Option<String>) -> Result<()> {
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
    println!("largest batch {}, peak memory {}", largest_batch(&server.base).await?, mib(server.peak_kib()));
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
fn write_timeline(run: &Run) -> Result<()> {
    let Some(file) = std::env::var_os("ADJUTANT_BENCH_TIMELINE") else { return Ok(()) };
    let mut text = String::from("start_us,latency_us\n");
    for (start, latency) in &run.timeline {
        text.push_str(&format!("{start},{latency}\n"));
    }
    std::fs::write(&file, text)?;
    eprintln!("   each request's start and latency written to {}", PathBuf::from(file).display());
    Ok(())
}

/// Figure 1's scale row alone, on SQLite in a temporary folder or on the PostgreSQL database at
/// `url`: `adjutant-bench scale [URL]`.
async fn scale_alone(url: Option<String>) -> Result<()> {
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
    println!("largest batch {}, peak memory {}", scale.largest_batch, mib(scale.peak_kib));
    Ok(())
}

/// The CPU time a server process and this one (the load generator) have spent from a moment on.
struct CpuSince {
    pid: u32,
    server: f64,
    own: f64,
}

impl CpuSince {
    fn now(pid: u32) -> Self {
        Self { pid, server: cpu_seconds(pid), own: cpu_seconds(std::process::id()) }
    }

    /// Since then, per request of `requests`, in µs: (server, load generator).
    fn per_request(&self, requests: u64) -> (f64, f64) {
        let per = |cpu: f64| cpu * 1e6 / requests.max(1) as f64;
        (per(cpu_seconds(self.pid) - self.server), per(cpu_seconds(std::process::id()) - self.own))
    }
}

/// User and system CPU time a process has spent, in seconds (from /proc/<pid>/stat).
fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return f64::NAN };
    // The fields after the command's name (which ends with the last ')').
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(f64::NAN);
    // utime and stime: fields 14 and 15 of proc(5), the 12th and 13th after the name; 100 ticks a second.
    (ticks(11) + ticks(12)) / 100.0
}

// ---------------------------------------------------------------------------------------------
// Figure 3: the calculator beside a bare handler.

const CALCULATOR: &str = "/v1/tools/result-number?time=9:51:45";

/// The bare handler: the same JSON bytes, nothing else. Runs as a child process.
async fn bare_calculator(body_file: String) -> Result<()> {
    let body = std::fs::read(&body_file)?;
    let app = axum::Router::new().route(
        "/v1/tools/result-number",
        axum::routing::get(move || {
            let body = body.clone();
            async move { ([(axum::http::header::CONTENT_TYPE, "application/json")], body) }
        }),
    );
    let listener = tokio::net::TcpListener::bind(std::env::var("BARE_LISTEN")?).await?;
    axum::serve(listener, app).await?;
    Ok(())
}

/// `adjutant-bench calculator`: figure 3 alone, beside a server of its own on SQLite.
async fn calculator_alone() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let url = format!("sqlite://{}", temp.path().join("adjutant.db").display());
    let admin = format!("bench-{}", uuid::Uuid::new_v4());
    let binary = std::env::current_exe()?.with_file_name("adjutant");
    let server = start_server(&binary, &url, &admin).await?;
    println!("server pid {}", server.child.id());
    let seconds = std::env::var("ADJUTANT_BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let (calc, bare) = calculator(&server, seconds, temp.path()).await?;
    for (name, run) in [("Adjutant", &calc), ("bare handler", &bare)] {
        println!(
            "{name}: {} requests, {:.0} requests/s, p50 {:.2} ms, p99 {:.2} ms, CPU µs per request {}, {} failed",
            run.requests,
            run.per_second(),
            run.percentile_ms(0.5),
            run.percentile_ms(0.99),
            cpu_per_request(run),
            run.errors
        );
    }
    drop(server);
    println!("ratio {:.2}", calc.per_second() / bare.per_second());
    Ok(())
}

/// The calculator under load from [`CLIENTS`] clients, with the CPU time per request of the
/// process answering (`pid`) and of the load generator.
async fn calculator_throughput(base: &str, pid: u32, seconds: u64) -> Result<Run> {
    let cpu = CpuSince::now(pid);
    let mut run =
        load(base, CLIENTS, seconds, |host, _, _| http::Request::new("GET", host, CALCULATOR, &[], b"", 200)).await;
    run.cpu_us = Some(cpu.per_request(run.requests));
    Ok(run)
}

async fn calculator(server: &Process, seconds: u64, dir: &Path) -> Result<(Run, Run)> {
    let base = server.base.as_str();
    let body = reqwest::get(format!("{base}{CALCULATOR}")).await?.bytes().await?;
    let body_file = dir.join("result-number.json");
    std::fs::write(&body_file, &body)?;
    let port = free_port()?;
    let child = Command::new(std::env::current_exe()?)
        .arg("bare-calculator")
        .arg(&body_file)
        .env("BARE_LISTEN", format!("127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .spawn()?;
    let bare = Process { child, base: format!("http://127.0.0.1:{port}") }.wait_ready(CALCULATOR).await?;
    let bare_body = reqwest::get(format!("{}{CALCULATOR}", bare.base)).await?.bytes().await?;
    if bare_body != body {
        return Err("the bare handler does not answer the same JSON".into());
    }
    // Alternate halves so neither side gets the warmer machine.
    let half = seconds.div_ceil(2);
    let (server_pid, bare_pid) = (server.child.id(), bare.child.id());
    let mut service = calculator_throughput(base, server_pid, half).await?;
    let mut ceiling = calculator_throughput(&bare.base, bare_pid, half).await?;
    let service2 = calculator_throughput(base, server_pid, half).await?;
    let ceiling2 = calculator_throughput(&bare.base, bare_pid, half).await?;
    for (run, more) in [(&mut service, service2), (&mut ceiling, ceiling2)] {
        // CPU per request over both halves, weighted by their requests.
        let weighted = |a: f64, b: f64| {
            (a * run.requests as f64 + b * more.requests as f64) / (run.requests + more.requests).max(1) as f64
        };
        run.cpu_us = match (run.cpu_us, more.cpu_us) {
            (Some((s1, l1)), Some((s2, l2))) => Some((weighted(s1, s2), weighted(l1, l2))),
            _ => None,
        };
        run.requests += more.requests;
        run.errors += more.errors;
        run.seconds += more.seconds;
        run.latencies.extend(more.latencies);
        run.latencies.sort_unstable();
    }
    Ok((service, ceiling))
}

// ---------------------------------------------------------------------------------------------
// The run and the report.

// ---------------------------------------------------------------------------------------------
// Where a post's time goes: the server logs each step's span as it closes; one client posts
// one after another, so the steps are not waiting on other posts.

const PROFILE_POSTS: u64 = 500;

/// A step of a post, as the server's spans name it, with what it is.
const STEPS: [(&str, &str); 21] = [
    ("request", "the whole request, as the HTTP layer sees it (body read, JSON, handler, answer)"),
    ("auth", "the token's principal (a read of the principals table)"),
    (
        "campaign",
        "the campaign's creation record, settings and game: read at its first post, then kept (it never changes)",
    ),
    ("quota", "a player's daily quota of notes and seals (none for this post)"),
    ("context", "what the verdict reads beyond the tail (nothing for this post)"),
    ("append", "the write transaction, from waiting for the writer to the commit"),
    ("begin", "opening the batch's transaction (SQLite: the writer's `BEGIN IMMEDIATE`)"),
    ("lock_campaign", "the campaign held against other writers (PostgreSQL's row lock; nothing on SQLite)"),
    ("known_key", "the idempotency check (a batch's keys at once)"),
    ("tail", "the tail: the last post, the last snapshot, the last outcome position (once per campaign in a batch)"),
    ("decide", "the verdict, inside the transaction"),
    ("chain", "the stamp and the SHA-256 link"),
    ("rules", "the rules: the dice, the table and the outcome's JSON"),
    ("sign", "the Ed25519 receipt (a batch's posts signed together, on every core)"),
    ("insert_post", "the post's row (a batch's posts in one statement)"),
    ("insert_outcome", "the outcome's row (a batch's outcomes in one statement)"),
    ("enqueue_deliveries", "webhook outbox rows (none: this campaign has no webhook, so the step is skipped)"),
    ("remember_key", "the idempotency record (a batch's in one statement)"),
    ("commit", "the commit: the durable write"),
    ("void_posts", "after the commit, for a replayed key only: the rollbacks read, for the answer's `void`"),
    ("view", "after the commit: the answer's JSON"),
];

/// Mean time per post of each step, in ms (busy + idle: the wall time the span was open).
struct Profile {
    posts: u64,
    client_p50_ms: f64,
    steps: Vec<(&'static str, &'static str, f64, u64)>,
}

fn duration_ms(text: &str) -> Option<f64> {
    let (number, unit) = text.split_at(text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?);
    let value: f64 = number.parse().ok()?;
    Some(match unit {
        "ns" => value / 1e6,
        "µs" => value / 1e3,
        "ms" => value,
        "s" => value * 1e3,
        _ => return None,
    })
}

/// The closing span's name and wall time from one line of the server's log.
fn closed_span(line: &str) -> Option<(String, f64)> {
    let (head, times) = line.split_once(": close ")?;
    let busy = times.split_whitespace().find_map(|t| t.strip_prefix("time.busy="))?;
    let idle = times.split_whitespace().find_map(|t| t.strip_prefix("time.idle="))?;
    let wall = duration_ms(busy)? + duration_ms(idle)?;
    // `request{…}:step{name="append"}:step{name="tail"}: adjutant::post` → the last span.
    let spans = head.rsplit_once(": ")?.0;
    let last = spans.rsplit(':').find(|s| !s.is_empty())?;
    let name = match last.split_once("{name=\"") {
        Some((_, rest)) => rest.trim_end_matches("\"}").to_owned(),
        None => last.split('{').next()?.rsplit(' ').next()?.to_owned(),
    };
    Some((name, wall))
}

async fn profile(binary: &Path, dir: &Path, admin: &str) -> Result<Profile> {
    let log = dir.join("spans.log");
    let db = dir.join("profile.db");
    let server = start_server_logging(binary, &format!("sqlite://{}", db.display()), admin, Some(&log)).await?;
    let game = game(&server.base, admin, "Profile").await?;
    let client = client()?;
    let url = format!("{}/v1/campaigns/{}/posts", server.base, game.campaign);
    let mut latencies = Vec::new();
    for i in 0..PROFILE_POSTS {
        let at = Instant::now();
        let answer = client
            .post(&url)
            .bearer_auth(&game.players[0])
            .header("Idempotency-Key", format!("profile-{i}"))
            .json(&order(0, i))
            .send()
            .await?;
        if answer.status().as_u16() != 201 {
            return Err(format!("profile post {i}: {}", answer.status()).into());
        }
        answer.bytes().await?;
        latencies.push(at.elapsed().as_micros() as u64);
    }
    drop(server);
    latencies.sort_unstable();
    let text = std::fs::read_to_string(&log)?;
    // Only the posts' requests: the set-up's requests (moderator, campaign, players) come first.
    let mut totals: std::collections::HashMap<String, (f64, u64)> = std::collections::HashMap::new();
    for line in text.lines().filter(|l| l.contains("uri=/v1/campaigns/") && l.contains("/posts ")) {
        if let Some((name, ms)) = closed_span(line) {
            let name = if name == "request" || line.contains("tower_http::trace::make_span: close") {
                "request".to_owned()
            } else {
                name
            };
            let entry = totals.entry(name).or_default();
            entry.0 += ms;
            entry.1 += 1;
        }
    }
    let steps = STEPS
        .iter()
        .map(|(name, what)| {
            let (sum, count) = totals.get(*name).copied().unwrap_or_default();
            (*name, *what, sum / PROFILE_POSTS as f64, count)
        })
        .collect();
    Ok(Profile {
        posts: PROFILE_POSTS,
        client_p50_ms: latencies.get(latencies.len() / 2).map_or(f64::NAN, |us| *us as f64 / 1000.0),
        steps,
    })
}

/// The most posts one commit of the server carried (`GET /healthz`).
/// The most posts one commit carried. Every batch of the bench's posts (new keys, nothing
/// refused) must have been written together: one that went one by one is a fault to look into.
async fn largest_batch(base: &str) -> Result<u64> {
    let health: Value = client()?.get(format!("{base}/healthz")).send().await?.json().await?;
    match health["batches_one_by_one"].as_u64() {
        Some(0) => Ok(health["largest_batch"].as_u64().unwrap_or(0)),
        other => Err(format!("the server wrote {other:?} batches one by one, not together: see its log").into()),
    }
}

struct Backend {
    name: &'static str,
    /// The most posts one commit carried during the run.
    largest_batch: u64,
    settings: String,
    service: Run,
    ceiling: Run,
    peak_kib: Option<u64>,
    /// The same posting spread over 1,000 campaigns of 1,000 earlier posts each.
    scale: Scale,
}

async fn run(o: Options) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let admin = format!("bench-{}", uuid::Uuid::new_v4());
    let mut backends = Vec::new();

    eprintln!("1. SQLite ceiling: durable single-row inserts, {} s", o.seconds);
    let sqlite_ceiling = sqlite_ceiling(dir.path(), o.seconds).await?;
    progress(&sqlite_ceiling);
    let db_file = dir.path().join("adjutant.db");
    let server = start_server(&o.server, &Database::Sqlite(&db_file).url(), &admin).await?;
    eprintln!("1. SQLite: POST posts, {CLIENTS} clients, {} s", o.seconds);
    let one = game(&server.base, &admin, "Throughput").await?;
    let service = post_throughput(&server, Arc::new(vec![one]), o.seconds).await?;
    progress(&service);
    let peak = server.peak_kib();
    let batch = largest_batch(&server.base).await?;

    eprintln!("2. history: 100 and 100,000 earlier posts");
    let history = history(&server.base, &admin, &db_file).await?;
    eprintln!("3. calculator beside a bare handler, {} s each", o.seconds);
    let (calc, bare) = calculator(&server, o.seconds, dir.path()).await?;
    drop(server);
    eprintln!("5. where a post's time goes: {PROFILE_POSTS} posts, one client, the server's spans");
    let profile = profile(&o.server, dir.path(), &admin).await?;

    eprintln!(
        "1. SQLite at scale: {SCALE_CAMPAIGNS} campaigns × {SCALE_POSTS} earlier posts, {CLIENTS} clients, {} s",
        o.seconds
    );
    let scale_db = dir.path().join("scale.db");
    let sqlite_scale = scale(&o.server, Database::Sqlite(&scale_db), &admin, o.seconds).await?;
    let settings = "journal_mode=wal, synchronous=FULL (checked on the ceiling's connection)".to_owned();
    backends.push(Backend {
        name: "SQLite",
        largest_batch: batch,
        settings,
        service,
        ceiling: sqlite_ceiling,
        peak_kib: peak,
        scale: sqlite_scale,
    });

    if let Some(url) = &o.postgres {
        eprintln!("1. PostgreSQL ceiling: durable single-row inserts, {} s", o.seconds);
        let ceiling = postgres_ceiling(url, o.seconds).await?;
        progress(&ceiling);
        let server = start_server(&o.server, url, &admin).await?;
        eprintln!("1. PostgreSQL: POST posts, {CLIENTS} clients, {} s", o.seconds);
        let one = game(&server.base, &admin, "Throughput").await?;
        let service = post_throughput(&server, Arc::new(vec![one]), o.seconds).await?;
        progress(&service);
        let peak = server.peak_kib();
        let batch = largest_batch(&server.base).await?;
        drop(server);
        eprintln!(
            "1. PostgreSQL at scale: {SCALE_CAMPAIGNS} campaigns × {SCALE_POSTS} earlier posts, {CLIENTS} clients, {} s",
            o.seconds
        );
        let scale = scale(&o.server, Database::Postgres(url), &admin, o.seconds).await?;
        let settings = postgres_durability(url).await?;
        backends.push(Backend {
            name: "PostgreSQL",
            largest_batch: batch,
            settings,
            service,
            ceiling,
            peak_kib: peak,
            scale,
        });
    }

    let report = report(&o, &backends, &history, &calc, &bare, &profile);
    if let Some(parent) = o.out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&o.out, &report)?;
    print!("{report}");
    Ok(())
}

fn machine() -> (usize, String, String) {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let kib: u64 = m.lines().find(|l| l.starts_with("MemTotal:"))?.split_whitespace().nth(1)?.parse().ok()?;
            Some(format!("{:.1} GiB", kib as f64 / 1024.0 / 1024.0))
        })
        .unwrap_or_else(|| "unknown".into());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| Some(c.lines().find(|l| l.starts_with("model name"))?.split_once(':')?.1.trim().to_owned()))
        .unwrap_or_else(|| "unknown".into());
    (cores, memory, cpu)
}

/// `1000000` as `1,000,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut text = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(|| "unknown".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
}

fn report(o: &Options, backends: &[Backend], history: &History, calc: &Run, bare: &Run, profile: &Profile) -> String {
    let (cores, memory, cpu) = machine();
    let mut md = String::new();
    let mut line = |s: String| {
        md.push_str(&s);
        md.push('\n');
    };
    line("# Adjutant benchmarks".into());
    line(String::new());
    line(
        "Written by `adjutant-bench`; every figure is measured beside its ceiling in the same run, on the same".into(),
    );
    line(
        "machine, and given as a ratio to it. Loopback only; the load generator shares the machine with the server."
            .into(),
    );
    line(String::new());
    line(format!("- Command: `{}`", o.command));
    line(format!("- Date: {}", Utc::now().format("%Y-%m-%d %H:%M UTC")));
    line(format!("- Machine: {cores} CPUs (`nproc`), {memory} memory, {cpu}"));
    line(format!("- Each throughput run: {} s, {CLIENTS} concurrent clients, unique Idempotency-Keys", o.seconds));
    line(String::new());
    line("## 1. Posts per second and latency".into());
    line(String::new());
    line(
        "`POST /v1/campaigns/{id}/posts` (a `resolve` post: a formation fail test, one die and one table), beside the ceiling: a minimal loop".into(),
    );
    line("doing one durable single-row insert per transaction into the same database with the same settings".into());
    line("(SQLite: WAL, `synchronous=FULL`).".into());
    line(String::new());
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    line(format!("| backend | service posts/s | ceiling inserts/s | ratio (goal ≥ 1) | service p50 / p99 ms (goal p99 ≤ 20) | ceiling p50 / p99 ms | largest batch | CPU µs per post: server / load generator | cores busy (of {cores}): server and load generator | failed requests |"));
    line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |".into());
    for b in backends {
        let scale = format!(
            "{}, {} campaigns × {} posts",
            b.name,
            thousands(SCALE_CAMPAIGNS as u64),
            thousands(SCALE_POSTS as u64)
        );
        for (name, service, batch) in
            [(b.name.to_owned(), &b.service, b.largest_batch), (scale, &b.scale.service, b.scale.largest_batch)]
        {
            let cpu = service.cpu_us.map_or("—".to_owned(), |(server, client)| format!("{server:.0} / {client:.0}"));
            // CPU seconds a second: how much of the machine the run kept busy.
            let busy = service.cpu_us.map_or("—".to_owned(), |(server, client)| {
                format!("{:.2}", (server + client) * service.per_second() / 1e6)
            });
            line(format!(
                "| {} | {:.0} | {:.0} | **{:.2}** | {:.1} / {:.1} | {:.2} / {:.2} | {} | {} | {} | {} |",
                name,
                service.per_second(),
                b.ceiling.per_second(),
                service.per_second() / b.ceiling.per_second(),
                service.percentile_ms(0.5),
                service.percentile_ms(0.99),
                b.ceiling.percentile_ms(0.5),
                b.ceiling.percentile_ms(0.99),
                batch,
                cpu,
                busy,
                service.errors,
            ));
        }
    }
    line(String::new());
    for b in backends {
        line(format!("- {} settings: {}", b.name, b.settings));
    }
    if backends.len() == 1 {
        line("- PostgreSQL: not measured in this run (no `--postgres` URL).".into());
    }
    line(String::new());
    line("The service commits the posts waiting for the writer in one transaction (group commit, at most".into());
    line("`max_batch` = 64 a commit; the largest batch of the run is shown) and answers each only after".into());
    line("the commit. A batch is written together: its keys checked in one statement, each campaign's tail".into());
    line("read once, every post decided in memory on the tail the one before it left, then each table's".into());
    line("rows in one statement; the batch's receipts are signed together, on both cores. A post also".into());
    line("costs a token lookup, a SHA-256, an Ed25519 signature and the HTTP and JSON work, on the same".into());
    line("two cores as the load generator; the ceiling does one insert and nothing else (figure 5 has the".into());
    line("breakdown). The load generator is a minimal HTTP/1.1 client (one keep-alive connection per".into());
    line("client, each request written as ready-made bytes, each answer read whole by its Content-Length".into());
    line("and its status checked); the CPU time each process spent per post is shown beside the figures.".into());
    line("\"Cores busy\" is that CPU time times posts per second: where it stays below the machine's cores,".into());
    line("posts wait on the writer, which writes and commits one transaction at a time, and not on the".into());
    line("processor (on PostgreSQL the database's own processes are not counted). With 64 clients each".into());
    line("waiting for its answer, a post's mean time is 64 ÷ posts per second (Little's law); a post that".into());
    line("arrives while a batch is being written waits for that batch and then its own.".into());
    line(String::new());
    line("On SQLite the WAL is copied into the database file by a connection of its own, 30 ms after".into());
    line("posts were committed (a PASSIVE checkpoint, beside the writer); the writer's own checkpoint, in".into());
    line("its commit, comes only when the WAL reaches 16,384 pages, and finds little left to copy. With one".into());
    line("checkpoint a second, the WAL reached that size first, and every half second one batch waited".into());
    line("while its commit copied half a second of pages: p99 19.8 ms against a p90 of 6 ms. Where slow".into());
    line("requests fall in time: `ADJUTANT_BENCH_TIMELINE=FILE adjutant-bench throughput [URL]` (or `scale`)".into());
    line("writes each request's start and latency.".into());
    line(String::new());
    line(format!(
        "The rows \"{} campaigns × {} posts\": a fresh server on a fresh database (PostgreSQL: the same database, \
         with figure 1's campaign in it), {} resolver campaigns created through its API (one moderator, a player on \
         each side), then {} earlier `resolve` posts seeded into each straight into the database, with their \
         outcomes, chained, signed with the server's receipt key and rolled as the server does (each campaign one \
         transaction: multi-row inserts on SQLite, one insert of column arrays on PostgreSQL); then {CLIENTS} clients post for {} s, each post to a campaign picked \
         uniformly at random of the {} (SplitMix64 of the client and its request number), by one of its players. \
         After the run a fresh whole-campaign audit of the first, a middle and the last campaign passes (the server \
         takes the seeded posts as its own).",
        thousands(SCALE_CAMPAIGNS as u64),
        thousands(SCALE_POSTS as u64),
        thousands(SCALE_CAMPAIGNS as u64),
        thousands(SCALE_POSTS as u64),
        o.seconds,
        thousands(SCALE_CAMPAIGNS as u64),
    ));
    line(String::new());
    for b in backends {
        line(format!(
            "- {}: the campaigns created in {:.1} s, {} posts seeded in {:.1} s ({} posts/s); audited campaigns \
             held {} posts.",
            b.name,
            b.scale.create_seconds,
            thousands(SCALE_CAMPAIGNS as u64 * SCALE_POSTS as u64),
            b.scale.seed_seconds,
            thousands(((SCALE_CAMPAIGNS as u64 * SCALE_POSTS as u64) as f64 / b.scale.seed_seconds) as u64),
            b.scale.audited.iter().map(|p| thousands(*p)).collect::<Vec<_>>().join(", "),
        ));
    }
    line(String::new());
    line("## 2. Cost as history grows (SQLite)".into());
    line(String::new());
    line("One client posting alternately to a campaign with 100 and one with 100,000 earlier posts (seeded".into());
    line(format!(
        "straight into the database as `resolve` posts with their outcomes, chained and rolled as the server does); {} posts each.",
        history.small.requests
    ));
    line(String::new());
    line("| earlier posts | p50 ms | p99 ms |".into());
    line("| ---: | ---: | ---: |".into());
    line(format!("| 100 | {:.2} | {:.2} |", history.small.percentile_ms(0.5), history.small.percentile_ms(0.99)));
    line(format!("| 100,000 | {:.2} | {:.2} |", history.large.percentile_ms(0.5), history.large.percentile_ms(0.99)));
    line(String::new());
    line(format!(
        "Ratio of p50 latencies, 100,000 / 100: **{:.2}** (goal ≤ 1.2).",
        history.large.percentile_ms(0.5) / history.small.percentile_ms(0.5)
    ));
    line(String::new());
    line(format!(
        "Whole-campaign audit of the 100,300-post campaign (`GET /v1/campaigns/{{id}}/audit`: every link of \
         the chain, every post's dice rolled again from its stamp, every stored outcome compared): {:.0} ms (median of 3).",
        history.audit_ms[history.audit_ms.len() / 2]
    ));
    line(String::new());
    let cold = history.audit_ms[history.audit_ms.len() / 2];
    let repeat = history.repeat_audit_ms[history.repeat_audit_ms.len() / 2];
    line(format!(
        "Repeat whole-campaign audit after one new post (the server goes on from the prefix it verified, \
         trusted within its life; `?fresh=true` replays all): {repeat:.1} ms (median of 3), \
         **{:.4}** of the cold audit (goal ≤ 0.01).",
        repeat / cold
    ));
    line(String::new());
    line("## 3. Calculator".into());
    line(String::new());
    line(format!(
        "`GET {CALCULATOR}` beside a bare axum handler returning the same JSON bytes (its own process), \
         {CLIENTS} clients each, in alternating halves. Both share the two cores with the load generator; the \
         CPU time each process spent per request is shown beside the figures. The difference is what \
         Adjutant does for a request and the bare handler does not: the rate limiter and the time limit, \
         the trace and panic layers, the query's parsing, the result number's arithmetic and the JSON."
    ));
    line(String::new());
    line("| | requests/s | p50 / p99 ms | CPU µs per request: answering process / load generator |".into());
    line("| --- | ---: | ---: | ---: |".into());
    for (name, run) in [("Adjutant", calc), ("bare handler", bare)] {
        line(format!(
            "| {name} | {:.0} | {:.2} / {:.2} | {} |",
            run.per_second(),
            run.percentile_ms(0.5),
            run.percentile_ms(0.99),
            cpu_per_request(run)
        ));
    }
    line(String::new());
    line(format!("Ratio: **{:.2}** (goal ≥ 0.8).", calc.per_second() / bare.per_second()));
    line(String::new());
    line("## 4. Peak memory".into());
    line(String::new());
    line(
        "VmHWM of the `adjutant` process (from `/proc/<pid>/status`) at the end of figure 1's runs (each scale run"
            .into(),
    );
    line("has a server of its own, from the campaigns' creation on).".into());
    line(String::new());
    for b in backends {
        line(format!("- {}: {}", b.name, mib(b.peak_kib)));
        line(format!(
            "- {}, {} campaigns × {} posts: {}",
            b.name,
            thousands(SCALE_CAMPAIGNS as u64),
            thousands(SCALE_POSTS as u64),
            mib(b.scale.peak_kib)
        ));
    }
    line(String::new());
    line("## 5. Where a post's time goes (SQLite)".into());
    line(String::new());
    line(format!(
        "One client posts {} `resolve` posts one after another (the server's own steps, not waiting on other posts). \
         The server logs each step's span as it closes (`ADJUTANT_LOG_SPANS=close`, `adjutant::post=debug`); \
         each figure is the step's mean wall time per post. Indented steps are inside the one above. \
         The client saw a p50 of {:.2} ms.",
        profile.posts, profile.client_p50_ms
    ));
    line(String::new());
    line("| step | ms per post | share of the request | what it is |".into());
    line("| --- | ---: | ---: | --- |".into());
    let request = profile.steps.iter().find(|s| s.0 == "request").map_or(f64::NAN, |s| s.2);
    for (name, what, ms, count) in &profile.steps {
        let indent = match *name {
            "request" => "",
            "begin" | "lock_campaign" | "known_key" | "tail" | "decide" | "sign" | "insert_post" | "insert_outcome"
            | "enqueue_deliveries" | "remember_key" | "commit" => "&nbsp;&nbsp;&nbsp;&nbsp;",
            "chain" | "rules" => "&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;",
            _ => "&nbsp;&nbsp;",
        };
        let shown = if *count == 0 { "—".to_owned() } else { format!("{ms:.3}") };
        let share = if *count == 0 { "—".to_owned() } else { format!("{:.0} %", 100.0 * ms / request) };
        line(format!("| {indent}`{name}` | {shown} | {share} | {what} |"));
    }
    line(String::new());
    line(
        "A lone post is a batch of one, so it pays `begin` and `commit` alone; under load (figure 1) the posts waiting \
         for the writer share one `begin` and one `commit`. Everything outside `append` (the token, the campaign, the \
         answer) runs beside other posts' writes."
            .into(),
    );
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_span_is_read_from_the_server_s_log_line() {
        let step = "2026-11-23T17:22:38.902811Z DEBUG request{method=POST uri=/v1/campaigns/4a93/posts version=HTTP/1.1}:step{name=\"append\"}:step{name=\"tail\"}: adjutant::post: close time.busy=96.7µs time.idle=2.10µs";
        let (name, ms) = closed_span(step).unwrap();
        assert_eq!(name, "tail");
        assert!((ms - 0.0988).abs() < 1e-9, "{ms}");
        let request = "2026-11-23T17:22:38.906228Z DEBUG request{method=POST uri=/v1/campaigns/4a93/posts version=HTTP/1.1}: tower_http::trace::make_span: close time.busy=3.91ms time.idle=1.31ms";
        let (name, ms) = closed_span(request).unwrap();
        assert_eq!(name, "request");
        assert!((ms - 5.22).abs() < 1e-9, "{ms}");
        assert_eq!(duration_ms("650ns"), Some(0.00065));
        assert_eq!(duration_ms("2.5s"), Some(2500.0));
        assert_eq!(closed_span("2026-11-23T17:22:38Z DEBUG request{}: x: new"), None);
    }

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
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(999), "999");
    }

    #[test]
    fn seeded_posts_chain_from_the_genesis_with_receipts_the_server_s_key_verifies() {
        use adjutant_rules::DiceStream;
        use ed25519_dalek::Verifier;
        let start = ChainStart {
            order: 0,
            campaign: uuid::Uuid::new_v4().to_string(),
            author: uuid::Uuid::new_v4().to_string(),
            side: Some("confederate".into()),
            genesis: "ab".repeat(32),
        };
        let first = DateTime::from_timestamp_millis(1_700_000_000_000).unwrap();
        let posts = seeded_posts(&start, 40, first).unwrap();
        assert_eq!(posts.len(), 40);
        let key = signing_key().verifying_key();
        let mut prev_hash = start.genesis.clone();
        for (n, post) in posts.iter().enumerate() {
            assert_eq!(post.seq, n as i64 + 1);
            assert_eq!(post.stamp, first + chrono::Duration::milliseconds(post.seq));
            assert_eq!(post.prev_hash, prev_hash);
            let link = Link {
                prev_hash: &prev_hash,
                campaign_id: &start.campaign,
                seq: post.seq,
                stamp: post.stamp,
                author_id: &start.author,
                side: Some("confederate"),
                kind: "resolve",
                body: &post.body,
            };
            assert_eq!(post.hash, link.hash());
            let message = adjutant_rules::chain::receipt_message(&start.campaign, post.seq, post.stamp, &post.hash);
            let signature: [u8; 64] = hex::decode(&post.signature).unwrap().try_into().unwrap();
            key.verify(message.as_bytes(), &ed25519_dalek::Signature::from_bytes(&signature)).unwrap();
            // The outcome is the one the post's own dice give.
            let ruleset = adjutant_rules::resolver::ruleset(RULESET).unwrap();
            let inputs: Value = serde_json::from_str::<Value>(&post.body).unwrap()["inputs"].clone();
            let dice = DiceStream::new(&start.campaign, post.seq as u64, post.stamp);
            let again = adjutant_rules::resolver::resolve(ruleset, "formation_test", &inputs, dice).unwrap();
            let stored: Value = serde_json::from_str(&post.outcome).unwrap();
            assert_eq!(stored["data"], serde_json::to_value(&again).unwrap());
            prev_hash = post.hash.clone();
        }
        assert!(receipt_key_id().starts_with("ed25519:") && receipt_key_id().len() == 24);
        // The outcomes' ids rise with the post and with the campaign's place in the seeding.
        assert!(posts.windows(2).all(|w| w[0].outcome_id < w[1].outcome_id));
        let next_campaign = seeded_posts(&ChainStart { order: 1, ..start }, 40, first).unwrap();
        assert!(posts[39].outcome_id < next_campaign[0].outcome_id);
        assert_eq!(next_campaign[0].outcome_id.get_version_num(), 7);
    }
}
