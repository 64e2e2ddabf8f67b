//! `adjutant-bench`: measures Adjutant beside the physical ceiling of each figure, in the same
//! run on the same machine, and writes `docs/BENCHMARKS.md`.
//!
//! 1. POST posts on SQLite (`synchronous=FULL`), 64 concurrent clients with unique keys, beside
//!    a minimal loop of durable single-row inserts, one per transaction, with the same settings;
//!    the same on PostgreSQL when a URL is given.
//! 2. Post latency with 100 and with 100,000 earlier posts in the campaign, and the
//!    whole-campaign audit of the larger (every post replayed through the rules).
//! 3. `/v1/tools/result-number` requests per second beside a bare axum handler that returns the
//!    same JSON.
//! 4. The server's peak resident memory (VmHWM) under (1).
//!
//! The server is the real `adjutant` binary in a child process; the bare handler runs in a
//! child process too (this binary, `bare-calculator`), so both sides of (3) pay the same. The
//! load generator runs here, on loopback, for a bounded time. Run it with `scripts/bench.sh`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use adjutant_rules::chain::{Link, GENESIS};
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use sqlx::{Connection, Executor};

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

/// `clients` loops, each sending `request(client, i)` one after another until `seconds` pass.
async fn load<F, Fut>(clients: usize, seconds: u64, request: F) -> Run
where
    F: Fn(usize, u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let request = Arc::new(request);
    let errors = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let end = start + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for client in 0..clients {
        let (request, errors) = (request.clone(), errors.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut i = 0;
            while Instant::now() < end {
                let at = Instant::now();
                if request(client, i).await {
                    latencies.push(at.elapsed().as_micros() as u64);
                } else {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
                i += 1;
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap_or_default());
    }
    let seconds = start.elapsed().as_secs_f64();
    latencies.sort_unstable();
    Run { requests: latencies.len() as u64, errors: errors.load(Ordering::Relaxed), seconds, latencies }
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

async fn game(base: &str, admin: &str, name: &str) -> Result<Game> {
    let client = client()?;
    let moderator = created(&client, format!("{base}/v1/moderators"), admin, json!({"name": "Bench"})).await?;
    let moderator = moderator["token"].as_str().ok_or("no token")?.to_owned();
    let body = json!({"name": name, "mode": "resolver", "ruleset": RULESET});
    let campaign = created(&client, format!("{base}/v1/campaigns"), &moderator, body).await?;
    let campaign = campaign["id"].as_str().ok_or("no id")?.to_owned();
    let mut players = Vec::new();
    for side in ["union", "confederate"] {
        let body = json!({"name": side, "side": side});
        let player = created(&client, format!("{base}/v1/campaigns/{campaign}/players"), &moderator, body).await?;
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

/// Figure 1 for one backend: 64 clients posting with unique keys.
async fn post_throughput(base: &str, admin: &str, seconds: u64) -> Result<Run> {
    let game = game(base, admin, "Throughput").await?;
    let client = client()?;
    let url = Arc::new(format!("{base}/v1/campaigns/{}/posts", game.campaign));
    let players = Arc::new(game.players);
    let run_id = uuid::Uuid::new_v4().simple().to_string();
    let run = load(CLIENTS, seconds, move |c, i| {
        let (client, url, players) = (client.clone(), url.clone(), players.clone());
        let key = format!("{run_id}-{c}-{i}");
        async move {
            let sent = client
                .post(url.as_str())
                .bearer_auth(&players[c % 2])
                .header("Idempotency-Key", key)
                .json(&order(c, i))
                .send()
                .await;
            match sent {
                Ok(r) => r.status().as_u16() == 201 && r.bytes().await.is_ok(),
                Err(_) => false,
            }
        }
    })
    .await;
    Ok(run)
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
// Figure 2: history.

/// Appends `count` posts to a campaign straight into the SQLite file (one transaction), each
/// hashed and chained exactly as the server does, so the audit verifies them: `resolve` posts
/// with their outcomes (dice rolled from each post's stream, as the server rolls them).
async fn seed_posts(db_file: &Path, campaign: &str, count: i64) -> Result<()> {
    use adjutant_rules::resolver;
    use adjutant_rules::DiceStream;
    let ruleset = resolver::ruleset(RULESET).ok_or("no ruleset")?;
    use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode};
    let options = SqliteConnectOptions::new()
        .filename(db_file)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(Duration::from_secs(30));
    let mut conn = sqlx::SqliteConnection::connect_with(&options).await?;
    let (author, side): (String, Option<String>) = sqlx::query_as(
        "SELECT id, side FROM principals WHERE kind = 'player' AND campaign_id = ? ORDER BY side LIMIT 1",
    )
    .bind(campaign)
    .fetch_one(&mut conn)
    .await?;
    // A millisecond apart, ending a minute ago: the server's next stamp is later still.
    let first: DateTime<Utc> = Utc::now() - chrono::Duration::milliseconds(count + 60_000);
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
    // The chain starts from the hash of the campaign's creation record, as the server's does.
    let row = sqlx::query(
        "SELECT name, moderator_id, mode, scenario, scenario_text, ruleset, settings, created_at, chain_genesis
         FROM campaigns WHERE id = ?",
    )
    .bind(campaign)
    .fetch_one(&mut *tx)
    .await?;
    let text = |column: &str| -> String { sqlx::Row::get(&row, column) };
    let optional = |column: &str| -> Option<String> { sqlx::Row::get(&row, column) };
    let (name, moderator, mode, settings) = (text("name"), text("moderator_id"), text("mode"), text("settings"));
    let (scenario, scenario_text, ruleset_name) =
        (optional("scenario"), optional("scenario_text"), optional("ruleset"));
    let created_at: i64 = sqlx::Row::get(&row, "created_at");
    let mut prev_hash = if text("chain_genesis") == "legacy" {
        GENESIS.to_owned()
    } else {
        adjutant_rules::chain::CreationRecord {
            campaign_id: campaign,
            name: &name,
            moderator_id: &moderator,
            mode: &mode,
            scenario: scenario.as_deref(),
            scenario_text: scenario_text.as_deref(),
            ruleset: ruleset_name.as_deref(),
            settings: &settings,
            created_at: DateTime::from_timestamp_millis(created_at).ok_or("bad created_at")?,
        }
        .genesis()
    };
    let signer = ed25519_dalek::SigningKey::from_bytes(&BENCH_SIGNING_SEED);
    let key_id = {
        use sha2::Digest;
        format!("ed25519:{}", &hex::encode(sha2::Sha256::digest(signer.verifying_key().as_bytes()))[..16])
    };
    for seq in 1..=count {
        let stamp = first + chrono::Duration::milliseconds(seq);
        let order = order(seq as usize, seq as u64);
        let body = serde_json::to_string(&order["body"])?;
        let hash = Link {
            prev_hash: &prev_hash,
            campaign_id: campaign,
            seq,
            stamp,
            author_id: &author,
            side: side.as_deref(),
            kind: "resolve",
            body: &body,
        }
        .hash();
        let signature = {
            use ed25519_dalek::Signer;
            let message = adjutant_rules::chain::receipt_message(campaign, seq, stamp, &hash);
            hex::encode(signer.sign(message.as_bytes()).to_bytes())
        };
        sqlx::query(
            "INSERT INTO posts (campaign_id, seq, stamp_ms, author_id, side, kind, body, prev_hash, hash,
                                receipt_key_id, receipt_signature)
             VALUES (?, ?, ?, ?, ?, 'resolve', ?, ?, ?, ?, ?)",
        )
        .bind(campaign)
        .bind(seq)
        .bind(stamp.timestamp_millis())
        .bind(&author)
        .bind(&side)
        .bind(&body)
        .bind(&prev_hash)
        .bind(&hash)
        .bind(&key_id)
        .bind(&signature)
        .execute(&mut *tx)
        .await?;
        let dice = DiceStream::new(campaign, seq as u64, stamp);
        let resolution = resolver::resolve(ruleset, "formation_test", &order["body"]["inputs"], dice)
            .map_err(|r| format!("seeding post {seq}: {r}"))?;
        let data = json!({"headline": resolution.headline, "data": serde_json::to_value(&resolution)?}).to_string();
        sqlx::query(
            "INSERT INTO outcomes (id, campaign_id, position, seq, kind, data) VALUES (?, ?, ?, ?, 'resolution', ?)",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(campaign)
        .bind(seq)
        .bind(seq)
        .bind(&data)
        .execute(&mut *tx)
        .await?;
        prev_hash = hash;
    }
    tx.commit().await?;
    Ok(())
}

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
    seed_posts(db_file, &small.campaign, 100).await?;
    seed_posts(db_file, &large.campaign, 100_000).await?;
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

async fn calculator_throughput(base: &str, seconds: u64) -> Result<Run> {
    let client = client()?;
    let url = Arc::new(format!("{base}{CALCULATOR}"));
    Ok(load(CLIENTS, seconds, move |_, _| {
        let (client, url) = (client.clone(), url.clone());
        async move {
            match client.get(url.as_str()).send().await {
                Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                Err(_) => false,
            }
        }
    })
    .await)
}

async fn calculator(base: &str, seconds: u64, dir: &Path) -> Result<(Run, Run)> {
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
    let mut service = calculator_throughput(base, half).await?;
    let mut ceiling = calculator_throughput(&bare.base, half).await?;
    let service2 = calculator_throughput(base, half).await?;
    let ceiling2 = calculator_throughput(&bare.base, half).await?;
    for (run, more) in [(&mut service, service2), (&mut ceiling, ceiling2)] {
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
const STEPS: [(&str, &str); 20] = [
    ("request", "the whole request, as the HTTP layer sees it (body read, JSON, handler, answer)"),
    ("auth", "the token's principal (a read of the principals table)"),
    ("campaign", "the campaign's row, its settings and game read"),
    ("quota", "a player's daily quota of notes and seals (none for this post)"),
    ("context", "what the verdict reads beyond the tail (nothing for this post)"),
    ("append", "the write transaction, from waiting for the writer to the commit"),
    ("begin", "opening the batch's transaction (SQLite: the writer's `BEGIN IMMEDIATE`)"),
    ("lock_campaign", "the campaign held against other writers (PostgreSQL's row lock; nothing on SQLite)"),
    ("known_key", "the idempotency check"),
    ("tail", "the tail: the last post, the last snapshot, the last outcome position"),
    ("decide", "the verdict, inside the transaction"),
    ("chain_and_sign", "the stamp, the SHA-256 link and the Ed25519 receipt"),
    ("rules", "the rules: the dice, the table and the outcome's JSON"),
    ("insert_post", "the post's row"),
    ("insert_outcome", "the outcome's row"),
    ("enqueue_deliveries", "webhook outbox rows (no webhook here)"),
    ("remember_key", "the idempotency record"),
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
async fn largest_batch(base: &str) -> Result<u64> {
    let health: Value = client()?.get(format!("{base}/healthz")).send().await?.json().await?;
    Ok(health["largest_batch"].as_u64().unwrap_or(0))
}

struct Backend {
    name: &'static str,
    /// The most posts one commit carried during the run.
    largest_batch: u64,
    settings: String,
    service: Run,
    ceiling: Run,
    peak_kib: Option<u64>,
}

async fn run(o: Options) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let admin = format!("bench-{}", uuid::Uuid::new_v4());
    let mut backends = Vec::new();

    eprintln!("1. SQLite ceiling: durable single-row inserts, {} s", o.seconds);
    let sqlite_ceiling = sqlite_ceiling(dir.path(), o.seconds).await?;
    let db_file = dir.path().join("adjutant.db");
    let server = start_server(&o.server, &format!("sqlite://{}", db_file.display()), &admin).await?;
    eprintln!("1. SQLite: POST posts, {CLIENTS} clients, {} s", o.seconds);
    let service = post_throughput(&server.base, &admin, o.seconds).await?;
    let peak = server.peak_kib();
    let batch = largest_batch(&server.base).await?;
    let settings = "journal_mode=wal, synchronous=FULL (checked on the ceiling's connection)".to_owned();
    backends.push(Backend {
        name: "SQLite",
        largest_batch: batch,
        settings,
        service,
        ceiling: sqlite_ceiling,
        peak_kib: peak,
    });

    eprintln!("2. history: 100 and 100,000 earlier posts");
    let history = history(&server.base, &admin, &db_file).await?;
    eprintln!("3. calculator beside a bare handler, {} s each", o.seconds);
    let (calc, bare) = calculator(&server.base, o.seconds, dir.path()).await?;
    drop(server);
    eprintln!("5. where a post's time goes: {PROFILE_POSTS} posts, one client, the server's spans");
    let profile = profile(&o.server, dir.path(), &admin).await?;

    if let Some(url) = &o.postgres {
        eprintln!("1. PostgreSQL ceiling: durable single-row inserts, {} s", o.seconds);
        let ceiling = postgres_ceiling(url, o.seconds).await?;
        let server = start_server(&o.server, url, &admin).await?;
        eprintln!("1. PostgreSQL: POST posts, {CLIENTS} clients, {} s", o.seconds);
        let service = post_throughput(&server.base, &admin, o.seconds).await?;
        let peak = server.peak_kib();
        let batch = largest_batch(&server.base).await?;
        let settings = postgres_durability(url).await?;
        backends.push(Backend { name: "PostgreSQL", largest_batch: batch, settings, service, ceiling, peak_kib: peak });
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
    line("| backend | service posts/s | ceiling inserts/s | ratio (goal ≥ 1) | service p50 / p99 ms (goal p99 ≤ 20) | ceiling p50 / p99 ms | largest batch | failed requests |".into());
    line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |".into());
    for b in backends {
        line(format!(
            "| {} | {:.0} | {:.0} | **{:.2}** | {:.1} / {:.1} | {:.2} / {:.2} | {} | {} |",
            b.name,
            b.service.per_second(),
            b.ceiling.per_second(),
            b.service.per_second() / b.ceiling.per_second(),
            b.service.percentile_ms(0.5),
            b.service.percentile_ms(0.99),
            b.ceiling.percentile_ms(0.5),
            b.ceiling.percentile_ms(0.99),
            b.largest_batch,
            b.service.errors,
        ));
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
    line("the commit. A post also costs a token lookup, the campaign, the idempotency check, the tail of".into());
    line("the chain, a SHA-256, an Ed25519 signature and the HTTP and JSON work, on the same two cores".into());
    line("as the load generator; the ceiling does one insert and nothing else (figure 5 has the breakdown).".into());
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
    line(format!("`GET {CALCULATOR}` beside a bare axum handler returning the same JSON bytes (its own process)."));
    line(String::new());
    line("| | requests/s | p50 / p99 ms |".into());
    line("| --- | ---: | ---: |".into());
    line(format!(
        "| Adjutant | {:.0} | {:.2} / {:.2} |",
        calc.per_second(),
        calc.percentile_ms(0.5),
        calc.percentile_ms(0.99)
    ));
    line(format!(
        "| bare handler | {:.0} | {:.2} / {:.2} |",
        bare.per_second(),
        bare.percentile_ms(0.5),
        bare.percentile_ms(0.99)
    ));
    line(String::new());
    line(format!("Ratio: **{:.2}** (goal ≥ 0.8).", calc.per_second() / bare.per_second()));
    line(String::new());
    line("## 4. Peak memory".into());
    line(String::new());
    line("VmHWM of the `adjutant` process (from `/proc/<pid>/status`) at the end of figure 1.".into());
    line(String::new());
    for b in backends {
        line(format!("- {}: {}", b.name, mib(b.peak_kib)));
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
            "begin" | "lock_campaign" | "known_key" | "tail" | "decide" | "insert_post" | "insert_outcome"
            | "enqueue_deliveries" | "remember_key" | "commit" => "&nbsp;&nbsp;&nbsp;&nbsp;",
            "chain_and_sign" | "rules" => "&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;",
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
}
