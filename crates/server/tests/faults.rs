//! Faults, with the real `adjutant` binary as a child process: killed with SIGKILL in the middle
//! of a stream of posts, its PostgreSQL stopped under load, 64 clients posting at once, two
//! replicas posting to one campaign on one PostgreSQL.
//!
//! PostgreSQL: `ADJUTANT_TEST_POSTGRES_URL` names a server where these tests create their own
//! databases; the database-outage test starts a cluster of its own with the server binaries
//! under /usr/lib/postgresql. Without them the PostgreSQL halves are skipped with a note, unless
//! `ADJUTANT_REQUIRE_POSTGRES=1` (the README's test command sets it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// The harness: a database, the binary, a client.

/// One fault at a time: each test loads the machine, and the outage test times its requests.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    SERIAL.lock().await
}

#[path = "../../../tests/support/env.rs"]
mod env;
use env::{postgres_admin_url, require_postgres, PgDatabase};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Sqlite,
    Postgres,
}

/// A database of the test's own: a temporary SQLite file or a new PostgreSQL database, removed
/// when it is dropped.
struct Db {
    url: String,
    _dir: tempfile::TempDir,
    _postgres: Option<PgDatabase>,
}

impl Db {
    async fn new(backend: Backend) -> Option<Self> {
        let dir = tempfile::tempdir().expect("temp dir");
        let (url, postgres) = match backend {
            Backend::Sqlite => (format!("sqlite://{}", dir.path().join("adjutant.db").display()), None),
            Backend::Postgres => {
                let database = PgDatabase::create(&postgres_admin_url()?, "adjutant_faults").await;
                (database.url.clone(), Some(database))
            }
        };
        Some(Self { url, _dir: dir, _postgres: postgres })
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("address").port()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `adjutant` binary, running.
struct Server {
    child: Child,
    base: String,
    admin: String,
    log: PathBuf,
    _log_dir: tempfile::TempDir,
}

impl Server {
    async fn start(database_url: &str, env: &[(&str, &str)]) -> Self {
        let log_dir = tempfile::tempdir().expect("temp dir");
        let log = log_dir.path().join("adjutant.log");
        let port = free_port();
        let admin = format!("operator-{}", uuid::Uuid::new_v4());
        let mut command = Command::new(env!("CARGO_BIN_EXE_adjutant"));
        command
            .current_dir(workspace())
            .env("ADJUTANT_LISTEN", format!("127.0.0.1:{port}"))
            .env("ADJUTANT_DATABASE_URL", database_url)
            .env("ADJUTANT_ADMIN_TOKEN", &admin)
            .env("ADJUTANT_SCENARIOS_DIR", workspace().join("config/scenarios"))
            .env("ADJUTANT_RATE_LIMIT_PER_MINUTE", "0")
            .env("ADJUTANT_EXPENSIVE_READS_PER_MINUTE", "0")
            // The writers post far more notes than a player's daily quota.
            .env("ADJUTANT_NOTES_PER_PLAYER_PER_DAY", "0")
            // Sixty-four clients at once, all from 127.0.0.1.
            .env("ADJUTANT_MAX_CONNECTIONS_PER_CLIENT", "0")
            .env("ADJUTANT_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(std::fs::File::create(&log).expect("log file")));
        for (key, value) in env {
            command.env(key, value);
        }
        let child = command.spawn().expect("start adjutant");
        let server = Self { child, base: format!("http://127.0.0.1:{port}"), admin, log, _log_dir: log_dir };
        server.wait_ready().await;
        server
    }

    async fn wait_ready(&self) {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(r) = client.get(format!("{}/healthz", self.base)).send().await {
                if r.status() == 200 {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "adjutant did not start:\n{}", self.log_text());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL: no shutdown, no flush, nothing.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What came back, read whole.
#[derive(Debug, Clone)]
struct Answer {
    status: u16,
    content_type: String,
    body: Value,
    text: String,
}

struct Api {
    base: String,
    client: reqwest::Client,
}

impl Api {
    fn new(server: &Server) -> Self {
        let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().expect("client");
        Self { base: server.base.clone(), client }
    }

    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        key: Option<&str>,
        body: Option<&Value>,
    ) -> Result<Answer, reqwest::Error> {
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let text = response.text().await?;
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Ok(Answer { status, content_type, body, text })
    }

    async fn get(&self, path: &str) -> Answer {
        self.send(reqwest::Method::GET, path, None, None, None).await.expect(path)
    }

    async fn created(&self, path: &str, token: &str, body: Value) -> Value {
        let answer = self.send(reqwest::Method::POST, path, Some(token), None, Some(&body)).await.expect(path);
        assert_eq!(answer.status, 201, "{path}: {}", answer.text);
        answer.body
    }

    async fn post(&self, token: &str, campaign: &str, key: &str, body: &Value) -> Result<Answer, reqwest::Error> {
        self.send(reqwest::Method::POST, &format!("/v1/campaigns/{campaign}/posts"), Some(token), Some(key), Some(body))
            .await
    }

    /// The whole log, paged.
    async fn all_posts(&self, campaign: &str) -> Vec<Value> {
        let mut posts = Vec::new();
        let mut after = 0;
        loop {
            let page = self.get(&format!("/v1/campaigns/{campaign}/posts?after={after}&limit=100")).await;
            assert_eq!(page.status, 200, "{}", page.text);
            let batch = page.body["posts"].as_array().expect("posts").clone();
            posts.extend(batch);
            match page.body["next_after"].as_i64() {
                Some(next) => after = next,
                None => return posts,
            }
        }
    }
}

/// A campaign with two players, one a side.
struct Game {
    campaign: String,
    players: [String; 2],
}

async fn game(api: &Api, admin: &str) -> Game {
    let moderator = api.created("/v1/moderators", admin, json!({"name": "Halleck"})).await["token"]
        .as_str()
        .expect("token")
        .to_owned();
    let campaign = api.created("/v1/campaigns", &moderator, json!({"name": "Fault line"})).await["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let mut players = Vec::new();
    for side in ["union", "confederate"] {
        let path = format!("/v1/campaigns/{campaign}/players");
        let body = json!({"name": format!("{side} player"), "side": side});
        players.push(api.created(&path, &moderator, body).await["token"].as_str().expect("token").to_owned());
    }
    Game { campaign, players: [players[0].clone(), players[1].clone()] }
}

fn note(text: &str) -> Value {
    json!({"kind": "note", "body": {"text": text}})
}

/// The log is whole: seq 1..=n with no gap or duplicate, each post chained to the one before,
/// and the audit of the last post (which checks the chain up to it) is clean. Returns n.
async fn assert_log_whole(api: &Api, campaign: &str) -> usize {
    let posts = api.all_posts(campaign).await;
    for (i, post) in posts.iter().enumerate() {
        assert_eq!(post["seq"].as_i64(), Some(i as i64 + 1), "seq has a gap or a duplicate at {i}");
        if i > 0 {
            assert_eq!(post["prev_hash"], posts[i - 1]["hash"], "chain broken at seq {}", i + 1);
        }
    }
    if let Some(last) = posts.last() {
        let audit = api.get(&format!("/v1/campaigns/{campaign}/posts/{}/audit", last["seq"])).await;
        assert_eq!(audit.status, 200, "{}", audit.text);
        assert_eq!(audit.body["chain"]["ok"], true, "{}", audit.text);
        assert_eq!(audit.body["ok"], true, "{}", audit.text);
        assert_eq!(audit.body["chain"]["checked_through"], last["seq"], "{}", audit.text);
    }
    posts.len()
}

// ---------------------------------------------------------------------------------------------
// SIGKILL in the middle of a stream of posts.

async fn killed_mid_stream(backend: Backend) {
    // Enough writers at once that posts queue for the writer and commit in batches.
    const WRITERS: usize = 64;
    let _serial = one_at_a_time().await;
    let Some(db) = Db::new(backend).await else { return };
    let mut server = Server::start(&db.url, &[]).await;
    let api = Arc::new(Api::new(&server));
    let g = game(&api, &server.admin).await;
    let campaign = Arc::new(g.campaign.clone());

    // key → (seq, hash) of every post that got a 2xx.
    let acked: Arc<Mutex<BTreeMap<String, (i64, String)>>> = Arc::default();
    let count = Arc::new(AtomicUsize::new(0));
    let mut writers = Vec::new();
    for writer in 0..WRITERS {
        let (api, campaign, acked, count) = (api.clone(), campaign.clone(), acked.clone(), count.clone());
        let token = g.players[writer % 2].clone();
        writers.push(tokio::spawn(async move {
            for i in 0.. {
                let key = format!("kill-{writer}-{i}");
                match api.post(&token, &campaign, &key, &note(&key)).await {
                    Ok(answer) if answer.status == 201 => {
                        let seq = answer.body["seq"].as_i64().expect("seq");
                        let hash = answer.body["hash"].as_str().expect("hash").to_owned();
                        acked.lock().unwrap().insert(key, (seq, hash));
                        count.fetch_add(1, Ordering::SeqCst);
                    }
                    // Only the kill may stop a writer: a refused or failed post before it is a bug.
                    Ok(answer) => return Some(answer),
                    Err(_) => return None,
                }
            }
            None
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while count.load(Ordering::SeqCst) < 150 {
        assert!(Instant::now() < deadline, "the posts did not flow:\n{}", server.log_text());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let largest_batch = api.get("/healthz").await.body["largest_batch"].as_u64().expect("largest_batch");
    server.kill();
    eprintln!(
        "{backend:?}: {} posts acknowledged before the kill; the largest batch was {largest_batch}",
        count.load(Ordering::SeqCst)
    );
    for writer in writers {
        if let Some(answer) = writer.await.expect("writer") {
            panic!("a post was answered {} before the kill: {}", answer.status, answer.text);
        }
    }
    let acked = std::mem::take(&mut *acked.lock().unwrap());
    assert!(acked.len() >= 150);

    let server = Server::start(&db.url, &[]).await;
    let api = Api::new(&server);
    let stored = assert_log_whole(&api, &g.campaign).await;
    assert!(stored >= acked.len(), "{stored} posts stored, {} acknowledged", acked.len());
    let posts = api.all_posts(&g.campaign).await;
    for (key, (seq, hash)) in &acked {
        let post = &posts[*seq as usize - 1];
        assert_eq!(post["hash"].as_str(), Some(hash.as_str()), "acknowledged post {key} (seq {seq}) is not as stored");
        assert_eq!(post["body"]["text"].as_str(), Some(key.as_str()), "seq {seq}");
    }
    // An acknowledged key sent again is answered from the log, not stored twice.
    let (key, (seq, _)) = acked.iter().next().expect("one post");
    let writer: usize = key.split('-').nth(1).and_then(|w| w.parse().ok()).expect("writer");
    let again = api.post(&g.players[writer % 2], &g.campaign, key, &note(key)).await.expect("replay");
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.body["seq"].as_i64(), Some(*seq));
    // And the log goes on where it stopped.
    let next = api.post(&g.players[0], &g.campaign, "after-restart", &note("after")).await.expect("post");
    assert_eq!(next.status, 201, "{}", next.text);
    assert_eq!(next.body["seq"].as_i64(), Some(stored as i64 + 1));
    assert_log_whole(&api, &g.campaign).await;
}

// ---------------------------------------------------------------------------------------------
// 64 clients at once, and one Idempotency-Key sent by many at once.

async fn many_clients_at_once(backend: Backend) {
    const CLIENTS: usize = 64;
    const POSTS_EACH: usize = 4;
    let _serial = one_at_a_time().await;
    let Some(db) = Db::new(backend).await else { return };
    let server = Server::start(&db.url, &[]).await;
    let api = Arc::new(Api::new(&server));
    let g = game(&api, &server.admin).await;
    let campaign = Arc::new(g.campaign.clone());

    let mut clients = Vec::new();
    for client in 0..CLIENTS {
        let (api, campaign) = (api.clone(), campaign.clone());
        let token = g.players[client % 2].clone();
        clients.push(tokio::spawn(async move {
            let mut answers = Vec::new();
            for i in 0..POSTS_EACH {
                let key = format!("crowd-{client}-{i}");
                answers.push(api.post(&token, &campaign, &key, &note(&key)).await.expect("post"));
            }
            answers
        }));
    }
    let mut seqs = Vec::new();
    for client in clients {
        for answer in client.await.expect("client") {
            assert!(!answer.text.contains("locked"), "{}", answer.text);
            assert_eq!(answer.status, 201, "{}", answer.text);
            seqs.push(answer.body["seq"].as_i64().expect("seq"));
        }
    }
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=(CLIENTS * POSTS_EACH) as i64).collect::<Vec<_>>());

    // The same key and body from 64 clients at once: stored once, the others get the stored post.
    let body = Arc::new(note("one order, sent 64 times"));
    let mut same = Vec::new();
    for _ in 0..CLIENTS {
        let (api, campaign, body, token) = (api.clone(), campaign.clone(), body.clone(), g.players[0].clone());
        same.push(tokio::spawn(async move { api.post(&token, &campaign, "the-same-key", &body).await.expect("post") }));
    }
    let mut created = 0;
    let mut seqs = Vec::new();
    for answer in same {
        let answer = answer.await.expect("client");
        assert!(!answer.text.contains("locked"), "{}", answer.text);
        match answer.status {
            201 => created += 1,
            200 => {}
            other => panic!("the same key was answered {other}: {}", answer.text),
        }
        seqs.push(answer.body["seq"].as_i64().expect("seq"));
    }
    assert_eq!(created, 1, "exactly one post per key");
    let expected_seq = (CLIENTS * POSTS_EACH) as i64 + 1;
    assert!(seqs.iter().all(|&s| s == expected_seq), "{seqs:?}");
    assert_eq!(assert_log_whole(&api, &g.campaign).await, CLIENTS * POSTS_EACH + 1);
}

// ---------------------------------------------------------------------------------------------
// Two servers on one PostgreSQL, posting to one campaign at once.

async fn two_replicas_on_one_database() {
    const WRITERS_EACH: usize = 32;
    const POSTS_EACH: usize = 6;
    let _serial = one_at_a_time().await;
    let Some(db) = Db::new(Backend::Postgres).await else { return };
    // Replicas share the signing key (docs/hosting.md): each one's receipts are the other's.
    let key = "07".repeat(32);
    let env = [("ADJUTANT_SIGNING_KEY", key.as_str())];
    let replicas = [Server::start(&db.url, &env).await, Server::start(&db.url, &env).await];
    let apis = [Arc::new(Api::new(&replicas[0])), Arc::new(Api::new(&replicas[1]))];
    let g = game(&apis[0], &replicas[0].admin).await;
    let campaign = Arc::new(g.campaign.clone());

    let mut writers = Vec::new();
    for writer in 0..2 * WRITERS_EACH {
        let (api, campaign) = (apis[writer % 2].clone(), campaign.clone());
        let token = g.players[(writer / 2) % 2].clone();
        writers.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            for i in 0..POSTS_EACH {
                let key = format!("replica-{}-{writer}-{i}", writer % 2);
                let answer = api.post(&token, &campaign, &key, &note(&key)).await.expect("post");
                assert_eq!(answer.status, 201, "{}", answer.text);
                acked.push((key, answer.body["seq"].as_i64().expect("seq"), answer.body["hash"].clone()));
            }
            acked
        }));
    }
    let mut acked = Vec::new();
    for writer in writers {
        acked.extend(writer.await.expect("writer"));
    }
    let total = 2 * WRITERS_EACH * POSTS_EACH;
    let mut seqs: Vec<i64> = acked.iter().map(|(_, seq, _)| *seq).collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=total as i64).collect::<Vec<_>>(), "a gap, a duplicate or a fork in the sequence");

    // Both replicas read the same whole log, every acknowledged post in it as acknowledged.
    for api in &apis {
        assert_eq!(assert_log_whole(api, &g.campaign).await, total);
    }
    let posts = apis[1].all_posts(&g.campaign).await;
    for (key, seq, hash) in &acked {
        let post = &posts[*seq as usize - 1];
        assert_eq!(&post["hash"], hash, "acknowledged post {key} (seq {seq}) is not as stored");
        assert_eq!(post["body"]["text"].as_str(), Some(key.as_str()), "seq {seq}");
    }
    let audit = apis[1].get(&format!("/v1/campaigns/{}/audit?fresh=true", g.campaign)).await;
    assert_eq!(audit.body["ok"], true, "{}", audit.text);
    assert_eq!(audit.body["posts"], total, "{}", audit.text);

    // One key sent to both replicas at once: stored once, the other answered with that post.
    let body = Arc::new(note("one order, two replicas"));
    let mut same = Vec::new();
    for api in &apis {
        let (api, campaign, body, token) = (api.clone(), campaign.clone(), body.clone(), g.players[0].clone());
        same.push(tokio::spawn(
            async move { api.post(&token, &campaign, "both-replicas", &body).await.expect("post") },
        ));
    }
    let mut statuses = Vec::new();
    for answer in same {
        let answer = answer.await.expect("post");
        assert_eq!(answer.body["seq"].as_i64(), Some(total as i64 + 1), "{}", answer.text);
        statuses.push(answer.status);
    }
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 201]);
    assert_eq!(assert_log_whole(&apis[0], &g.campaign).await, total + 1);
}

mod sqlite {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sigkill_mid_stream_loses_no_acknowledged_post() {
        killed_mid_stream(Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sixty_four_clients_and_one_key_sent_at_once() {
        many_clients_at_once(Backend::Sqlite).await;
    }
}

mod postgres {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sigkill_mid_stream_loses_no_acknowledged_post() {
        killed_mid_stream(Backend::Postgres).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sixty_four_clients_and_one_key_sent_at_once() {
        many_clients_at_once(Backend::Postgres).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_replicas_post_to_one_campaign_with_no_gap_duplicate_or_fork() {
        two_replicas_on_one_database().await;
    }
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL stopped under load.

/// A throwaway PostgreSQL cluster of this test's own, on loopback.
struct Cluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    as_postgres: bool,
}

impl Cluster {
    fn binaries() -> Option<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|bin| bin.join("initdb").exists() && bin.join("pg_ctl").exists())
            .collect();
        dirs.sort();
        dirs.pop()
    }

    fn start() -> Option<Self> {
        let Some(bin) = Self::binaries() else {
            assert!(!require_postgres(), "ADJUTANT_REQUIRE_POSTGRES=1 but no initdb under /usr/lib/postgresql");
            eprintln!("note: no PostgreSQL server binaries; skipping the database-outage test");
            return None;
        };
        let dir = tempfile::Builder::new().prefix("adjutant-outage-pg").tempdir().expect("temp dir");
        // PostgreSQL refuses to run as root; as root, run it as the `postgres` user.
        let uid = Command::new("id").arg("-u").output().expect("id -u");
        let as_postgres = String::from_utf8_lossy(&uid.stdout).trim() == "0";
        if as_postgres {
            let status = Command::new("chown").arg("postgres:").arg(dir.path()).status().expect("chown");
            assert!(status.success(), "chown postgres: {}", dir.path().display());
        }
        let cluster = Self { bin, dir, port: free_port(), as_postgres };
        let data = cluster.dir.path().join("data");
        let initdb = cluster
            .run("initdb")
            .args(["-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "-D"])
            .arg(&data)
            .stdout(Stdio::null())
            .status()
            .expect("initdb");
        assert!(initdb.success(), "initdb failed");
        cluster.pg_ctl_start();
        Some(cluster)
    }

    fn run(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        }
    }

    fn pg_ctl_start(&self) {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c max_connections=100",
            self.port,
            self.dir.path().display()
        );
        let status = self
            .run("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .arg("-l")
            .arg(self.dir.path().join("server.log"))
            .args(["-w", "-o", &options, "start"])
            .stdout(Stdio::null())
            .status()
            .expect("pg_ctl start");
        assert!(status.success(), "pg_ctl start failed");
    }

    fn pg_ctl_stop(&self) {
        let status = self
            .run("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-w", "-m", "fast", "stop"])
            .stdout(Stdio::null())
            .status()
            .expect("pg_ctl stop");
        assert!(status.success(), "pg_ctl stop failed");
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self
            .run("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

#[derive(Debug)]
struct Observed {
    at: Instant,
    took: Duration,
    outcome: Result<Answer, String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stopped_under_load_gets_503_then_recovers_by_itself() {
    const TIMEOUT_SECS: u64 = 3;
    let _serial = one_at_a_time().await;
    let Some(cluster) = Cluster::start() else { return };
    let server = Server::start(&cluster.url(), &[("ADJUTANT_REQUEST_TIMEOUT_SECS", "3")]).await;
    let api = Arc::new(Api::new(&server));
    let g = game(&api, &server.admin).await;
    let campaign = Arc::new(g.campaign.clone());

    let stop = Arc::new(AtomicBool::new(false));
    let observed: Arc<Mutex<Vec<Observed>>> = Arc::default();
    let mut load = Vec::new();
    for client in 0..8 {
        let (api, campaign, stop, observed) = (api.clone(), campaign.clone(), stop.clone(), observed.clone());
        let token = g.players[client % 2].clone();
        load.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                i += 1;
                let at = Instant::now();
                let outcome = if i % 2 == 0 {
                    let key = format!("outage-{client}-{i}");
                    api.post(&token, &campaign, &key, &note(&key)).await
                } else {
                    api.send(reqwest::Method::GET, &format!("/v1/campaigns/{campaign}"), None, None, None).await
                };
                let took = at.elapsed();
                observed.lock().unwrap().push(Observed { at, took, outcome: outcome.map_err(|e| e.to_string()) });
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    let stopped_at = Instant::now();
    cluster.pg_ctl_stop();
    tokio::time::sleep(Duration::from_secs(TIMEOUT_SECS + 3)).await;
    cluster.pg_ctl_start();
    let restarted_at = Instant::now();
    // Service resumes by itself: no restart of Adjutant, only the database came back.
    let deadline = restarted_at + Duration::from_secs(30);
    let mut resumed = false;
    let mut i = 0;
    while Instant::now() < deadline {
        i += 1;
        let key = format!("resumed-{i}");
        if let Ok(answer) = api.post(&g.players[0], &g.campaign, &key, &note(&key)).await {
            if answer.status == 201 {
                resumed = true;
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    stop.store(true, Ordering::SeqCst);
    for task in load {
        task.await.expect("load");
    }
    assert!(resumed, "the service did not resume within 30 s of the database's return:\n{}", server.log_text());

    let observed = std::mem::take(&mut *observed.lock().unwrap());
    let mut unavailable = 0;
    for o in observed.iter() {
        assert!(
            o.took <= Duration::from_secs(TIMEOUT_SECS + 2),
            "a request hung for {:?} (time-out {TIMEOUT_SECS} s): {:?}",
            o.took,
            o.outcome
        );
        let answer = o.outcome.as_ref().unwrap_or_else(|e| panic!("a request failed outright: {e}"));
        match answer.status {
            200 | 201 => {}
            503 => {
                unavailable += 1;
                assert_eq!(answer.content_type, "application/problem+json", "{}", answer.text);
                assert_eq!(answer.body["status"], 503, "{}", answer.text);
                // The database refused, or the request waited on it past the time limit.
                let rule = answer.body["rule"].as_str().unwrap_or_default();
                assert!(matches!(rule, "service.unavailable" | "request.time_limit"), "{}", answer.text);
            }
            other => panic!("during the outage a request was answered {other}: {}", answer.text),
        }
    }
    let during = observed.iter().filter(|o| o.at > stopped_at + Duration::from_millis(500) && o.at < restarted_at);
    assert!(during.count() > 0, "no request was sent while the database was down");
    assert!(unavailable > 0, "no request saw the database down");
    assert_log_whole(&api, &g.campaign).await;
}
