//! Live event streams: a follower is woken by each commit instead of asking the store on a
//! timer, catches up from `Last-Event-ID` without a gap or a repeat while posts keep coming,
//! and, on PostgreSQL, hears the posts another server on the same database writes, even when
//! its listening connection is cut. The streams' memory is bounded: a full budget refuses a new
//! stream, and a follower that stops reading is dropped and resumes where it was. The same
//! signal wakes the webhook deliverer.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::json;
use adjutant_e2e::{on_both_backends, Backend, Table, TestApp};
use adjutant_server::live::IDLE_STREAM_BYTES;
use sqlx::Connection;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

on_both_backends! {
    a_follower_joining_mid_stream_gets_every_later_post_once_while_eight_clients_post => hand_over;
    a_post_reaches_an_idle_follower_at_once => idle_latency;
    a_full_memory_budget_refuses_a_stream_until_one_closes => memory_budget;
    a_follower_that_stops_reading_is_dropped_and_resumes_missing_nothing => slow_follower;
    a_post_wakes_the_webhook_deliverer_at_once => webhook_woken;
    a_failed_webhook_request_is_retried_when_due_without_a_poll => webhook_retry_on_time;
}

mod replicas {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_follower_on_one_replica_hears_the_posts_written_on_another() {
        if adjutant_e2e::postgres_admin_url().is_none() {
            return;
        }
        super::across_replicas().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_post_on_one_replica_wakes_the_webhook_deliverer_of_another() {
        if adjutant_e2e::postgres_admin_url().is_none() {
            return;
        }
        super::webhook_woken_across_replicas().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_killed_listening_connection_loses_no_post() {
        if adjutant_e2e::postgres_admin_url().is_none() {
            return;
        }
        super::listener_killed().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_burst_written_while_the_listening_connection_was_down_arrives_whole() {
        if adjutant_e2e::postgres_admin_url().is_none() {
            return;
        }
        super::burst_while_deaf().await;
    }
}

/// An open event stream, read as it comes.
struct Follower {
    response: adjutant_e2e::reqwest::Response,
    /// Text received but not yet a whole event.
    pending: String,
    /// The `post` events' sequence numbers, in the order received.
    seqs: Vec<i64>,
}

impl Follower {
    /// Follows `campaign` on `app`, after post `after` (`Last-Event-ID`), or from the start.
    async fn open(app: &TestApp, campaign: &str, after: Option<i64>) -> Self {
        let mut request = app.client.get(format!("{}/v1/campaigns/{campaign}/events", app.base));
        if let Some(after) = after {
            request = request.header("Last-Event-ID", after.to_string());
        }
        let response = request.send().await.expect("open the event stream");
        assert_eq!(response.status(), 200);
        Self { response, pending: String::new(), seqs: Vec::new() }
    }

    /// Reads until post `seq` has arrived, for at most `within`; panics if it has not.
    async fn until(&mut self, seq: i64, within: Duration) {
        let reading = async {
            while self.seqs.last().is_none_or(|&last| last < seq) {
                let chunk = self.response.chunk().await.expect("read the stream").expect("the stream ended");
                self.pending.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = self.pending.find("\n\n") {
                    let block: String = self.pending.drain(..end + 2).collect();
                    let field = |name: &str| block.lines().find_map(|l| l.strip_prefix(name)).map(str::trim);
                    if field("event:") == Some("post") {
                        let id = field("id:").expect("a post event has an id");
                        self.seqs.push(id.parse().expect("the id is a sequence number"));
                    }
                }
            }
        };
        if tokio::time::timeout(within, reading).await.is_err() {
            panic!("post {seq} did not arrive within {within:?}; received {:?}", self.seqs);
        }
    }
}

/// A campaign with a player on each side; its id and the players' tokens.
async fn campaign(app: &TestApp, name: &str) -> (String, Vec<String>) {
    let moderator = app.moderator().await;
    let campaign = app.campaign(&moderator, json!({"name": name, "scenario": "short-acw"})).await;
    let union = app.player(&moderator, &campaign, "union").await;
    let confederate = app.player(&moderator, &campaign, "confederate").await;
    (campaign, vec![union, confederate])
}

fn note(text: &str) -> adjutant_e2e::serde_json::Value {
    json!({"kind": "note", "body": {"text": text}})
}

async fn hand_over(backend: Backend) {
    const CLIENTS: usize = 8;
    const EACH: usize = 25;
    const BEFORE: usize = 5;
    let app = Arc::new(TestApp::spawn_with(backend, |c| c.notes_per_player_per_day = 0).await);
    let (campaign, players) = campaign(&app, "Hand-over").await;
    for i in 0..BEFORE {
        app.post(&players[i % 2], &campaign, note(&format!("before {i}"))).await.ok(201);
    }
    // A follower from the start, open before anyone posts.
    let mut from_start = Follower::open(&app, &campaign, None).await;

    let answered = Arc::new(AtomicUsize::new(BEFORE));
    let mut posting = tokio::task::JoinSet::new();
    for client in 0..CLIENTS {
        let (app, campaign, token, answered) =
            (app.clone(), campaign.clone(), players[client % 2].clone(), answered.clone());
        posting.spawn(async move {
            for i in 0..EACH {
                app.post(&token, &campaign, note(&format!("client {client} post {i}"))).await.ok(201);
                answered.fetch_add(1, Ordering::SeqCst);
            }
        });
    }
    // Mid-stream: once a quarter of the posts are answered, every post up to that count is
    // committed (sequence numbers are given in commit order, without gaps).
    while answered.load(Ordering::SeqCst) < BEFORE + CLIENTS * EACH / 4 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let joined_after = answered.load(Ordering::SeqCst) as i64;
    let mut mid_stream = Follower::open(&app, &campaign, Some(joined_after)).await;
    while let Some(done) = posting.join_next().await {
        done.expect("a posting client");
    }
    let last = (BEFORE + CLIENTS * EACH) as i64;
    assert!(joined_after < last, "the follower joined after the posting was over");

    mid_stream.until(last, Duration::from_secs(60)).await;
    let expected: Vec<i64> = (joined_after + 1..=last).collect();
    assert_eq!(mid_stream.seqs, expected, "joined after post {joined_after}");
    from_start.until(last, Duration::from_secs(60)).await;
    assert_eq!(from_start.seqs, (1..=last).collect::<Vec<_>>());

    // Nothing more comes: a repeat would show up here.
    app.post(&players[0], &campaign, note("after")).await.ok(201);
    mid_stream.until(last + 1, Duration::from_secs(10)).await;
    assert_eq!(mid_stream.seqs.len(), expected.len() + 1);
}

async fn idle_latency(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (campaign, players) = campaign(&app, "Idle").await;
    app.post(&players[0], &campaign, note("first")).await.ok(201);
    let mut follower = Follower::open(&app, &campaign, None).await;
    follower.until(1, Duration::from_secs(10)).await;
    let mut latencies = Vec::new();
    for seq in 2..=6 {
        // Idle: the stream has caught up and waits.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let sent = Instant::now();
        app.post(&players[seq as usize % 2], &campaign, note("now")).await.ok(201);
        follower.until(seq, Duration::from_secs(10)).await;
        latencies.push(sent.elapsed());
    }
    latencies.sort();
    println!(
        "{backend:?}: from sending a post to its event on an idle stream: median {:?}, max {:?}",
        latencies[latencies.len() / 2],
        latencies[latencies.len() - 1]
    );
    assert!(latencies.iter().all(|latency| *latency < Duration::from_secs(2)), "{latencies:?}");
    assert_eq!(follower.seqs, (1..=6).collect::<Vec<_>>());
}

async fn across_replicas() {
    let app = TestApp::spawn(Backend::Postgres).await;
    let replica = TestApp::spawn_on(app.db.clone(), |_| {}).await;
    let (campaign, players) = campaign(&app, "Replicas").await;
    let mut follower = Follower::open(&replica, &campaign, None).await;
    let mut latencies = Vec::new();
    for seq in 1..=5 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let sent = Instant::now();
        app.post(&players[seq as usize % 2], &campaign, note("from the other replica")).await.ok(201);
        follower.until(seq, Duration::from_secs(10)).await;
        latencies.push(sent.elapsed());
    }
    latencies.sort();
    println!(
        "from sending a post on one replica to its event on the other: median {:?}, max {:?}",
        latencies[latencies.len() / 2],
        latencies[latencies.len() - 1]
    );
    assert!(latencies.iter().all(|latency| *latency < Duration::from_secs(2)), "{latencies:?}");
    assert_eq!(follower.seqs, (1..=5).collect::<Vec<_>>());
}

/// Cuts this database's listening connections (each server's `LISTEN`) again and again until
/// `stop` is set, so that a server is mostly not listening meanwhile; how many it cut.
async fn cut_listeners(url: String, stop: Arc<std::sync::atomic::AtomicBool>) -> i64 {
    let mut conn = sqlx::PgConnection::connect(&url).await.expect("connect to PostgreSQL");
    let mut cut = 0;
    while !stop.load(Ordering::SeqCst) {
        let killed: i64 = sqlx::query_scalar(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
             WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()",
        )
        .fetch_one(&mut conn)
        .await
        .expect("terminate the listeners");
        cut += killed;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    cut
}

async fn listener_killed() {
    let app = TestApp::spawn(Backend::Postgres).await;
    let replica = TestApp::spawn_on(app.db.clone(), |_| {}).await;
    let (campaign, players) = campaign(&app, "Cut").await;
    let mut follower = Follower::open(&replica, &campaign, None).await;
    app.post(&players[0], &campaign, note("heard")).await.ok(201);
    follower.until(1, Duration::from_secs(10)).await;

    // Posts written on one server while the other's listening connection is cut as soon as it
    // is back: their notices mostly reach nobody there.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cutting = tokio::spawn(cut_listeners(app.db.url.clone(), stop.clone()));
    let posts = 12;
    for i in 0..posts {
        tokio::time::sleep(Duration::from_millis(20)).await;
        app.post(&players[i % 2], &campaign, note(&format!("while cut {i}"))).await.ok(201);
    }
    stop.store(true, Ordering::SeqCst);
    let cut = cutting.await.expect("the cutting task");
    assert!(cut > 0, "no listening connection was cut");

    // Once it listens again, the follower reads what it missed: every post, once.
    let last = 1 + posts as i64;
    follower.until(last, Duration::from_secs(20)).await;
    assert_eq!(follower.seqs, (1..=last).collect::<Vec<_>>());
    // And a later post arrives as any does.
    app.post(&players[0], &campaign, note("after")).await.ok(201);
    follower.until(last + 1, Duration::from_secs(10)).await;
}

/// Posts written on one server while the other cannot listen (its listening connection cut and
/// no new connection of its own let in): more than one window's read of them, so the follower
/// on the deaf server, woken once it listens again, must go on reading until it has them all.
///
/// The deaf server connects as a role of its own, and only that role is refused (`CONNECTION
/// LIMIT 0`, which holds for any role but a superuser): the posting server keeps opening the
/// connections it needs, as it would while another replica is cut off.
async fn burst_while_deaf() {
    let db = adjutant_e2e::TestDb::new(Backend::Postgres).await;
    let admin = adjutant_e2e::postgres_admin_url().expect("PostgreSQL");
    let role = format!("deaf_{}", uuid::Uuid::new_v4().simple());
    let outcome = tokio::spawn(deaf_replica_hears_the_burst(db.clone(), admin, role.clone())).await;
    // The role goes whatever happened: its sessions ended, its grants in this database dropped.
    let mut conn = sqlx::PgConnection::connect(&db.url).await.expect("connect to PostgreSQL");
    let mut left = Vec::new();
    for sql in [
        format!("ALTER ROLE {role} CONNECTION LIMIT 0"),
        format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}'"),
        format!("DROP OWNED BY {role}"),
        format!("DROP ROLE {role}"),
    ] {
        if let Err(e) = sqlx::query(&sql).execute(&mut conn).await {
            left.push(format!("{sql}: {e}"));
        }
    }
    if let Err(failed) = outcome {
        std::panic::resume_unwind(failed.into_panic());
    }
    assert!(left.is_empty(), "the replica's role was not dropped: {left:?}");
}

async fn deaf_replica_hears_the_burst(db: adjutant_e2e::TestDb, admin: String, role: String) {
    let app = TestApp::spawn_on(db.clone(), |_| {}).await;
    let mut conn = sqlx::PgConnection::connect(&db.url).await.expect("connect to PostgreSQL");
    for sql in [
        format!("CREATE ROLE {role} LOGIN"),
        format!("GRANT USAGE, CREATE ON SCHEMA public TO {role}"),
        format!("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}"),
        format!("GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}"),
    ] {
        sqlx::query(&sql).execute(&mut conn).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let mut as_role = db;
    as_role.url = adjutant_e2e::url_as(&as_role.url, &role);
    let replica = TestApp::spawn_on(as_role, |_| {}).await;
    let (campaign, players) = campaign(&app, "Deaf").await;
    let mut follower = Follower::open(&replica, &campaign, None).await;
    app.post(&players[0], &campaign, note("heard")).await.ok(201);
    follower.until(1, Duration::from_secs(10)).await;

    let mut admin = sqlx::PgConnection::connect(&admin).await.expect("connect to PostgreSQL");
    sqlx::query(&format!("ALTER ROLE {role} CONNECTION LIMIT 0")).execute(&mut admin).await.unwrap();
    let killed: i64 = sqlx::query_scalar(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = $1 AND query LIKE 'LISTEN%'",
    )
    .bind(&role)
    .fetch_one(&mut admin)
    .await
    .unwrap();
    assert!(killed > 0, "no listening connection was cut");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let posts = 80;
    for i in 0..posts {
        app.post(&players[i % 2], &campaign, note(&format!("while deaf {i}"))).await.ok(201);
    }
    sqlx::query(&format!("ALTER ROLE {role} CONNECTION LIMIT -1")).execute(&mut admin).await.unwrap();
    let last = 1 + posts as i64;
    follower.until(last, Duration::from_secs(20)).await;
    assert_eq!(follower.seqs, (1..=last).collect::<Vec<_>>());
}

/// How many event streams the server counts open, and the bytes they are charged.
fn streams_open(app: &TestApp) -> (usize, usize) {
    let (bytes, open) = app.state.stream_shares.in_use();
    (open, bytes)
}

/// The gauge of open event streams, as `GET /metrics` shows it.
async fn gauge_of_streams(app: &TestApp) -> f64 {
    let answer = app.request(Method::GET, "/metrics", Some(&app.admin_token), None).await;
    let line = answer.text.lines().find_map(|l| l.strip_prefix("adjutant_event_streams_open ")).map(str::to_owned);
    line.expect("the gauge of open streams").trim().parse().expect("a number")
}

async fn memory_budget(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| {
        c.event_streams_memory = 3 * IDLE_STREAM_BYTES;
        c.event_streams_per_client = 0;
    })
    .await;
    let (campaign, players) = campaign(&app, "Budget").await;
    let mut open = Vec::new();
    for _ in 0..3 {
        open.push(Follower::open(&app, &campaign, None).await);
    }
    assert_eq!(streams_open(&app), (3, 3 * IDLE_STREAM_BYTES));
    let path = format!("/v1/campaigns/{campaign}/events");
    let refused = app.request(Method::GET, &path, None, None).await;
    let problem = refused.problem(503, "path");
    assert_eq!(problem["rule"], "events.all_open", "{}", refused.text);
    assert!(problem["detail"].as_str().unwrap().contains("memory"), "{}", refused.text);
    assert!(refused.headers.contains_key("retry-after"));

    // A follower that goes away gives its memory back, once the server notices (its next post).
    drop(open.pop());
    let started = Instant::now();
    while streams_open(&app).0 > 2 {
        assert!(started.elapsed() < Duration::from_secs(20), "a closed stream kept its memory");
        app.post(&players[0], &campaign, note("is anyone there")).await.ok(201);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(streams_open(&app), (2, 2 * IDLE_STREAM_BYTES));
    open.push(Follower::open(&app, &campaign, None).await);
}

/// The `post` events' sequence numbers in `raw`, an answer with a chunked body read as far as
/// it came: an event cut short at the end is left out.
fn posts_in_raw(raw: &[u8]) -> Vec<i64> {
    let Some(start) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Vec::new();
    };
    let (mut rest, mut body) = (&raw[start + 4..], Vec::new());
    while let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") {
        let Ok(size) = usize::from_str_radix(String::from_utf8_lossy(&rest[..line_end]).trim(), 16) else {
            break;
        };
        let chunk = &rest[line_end + 2..];
        body.extend_from_slice(&chunk[..size.min(chunk.len())]);
        if size == 0 || chunk.len() < size + 2 {
            break;
        }
        rest = &chunk[size + 2..];
    }
    let body = String::from_utf8_lossy(&body);
    let mut seqs = Vec::new();
    let mut blocks: Vec<&str> = body.split("\n\n").collect();
    blocks.pop(); // what follows the last blank line is not a whole event
    for block in blocks {
        let field = |name: &str| block.lines().find_map(|l| l.strip_prefix(name)).map(str::trim);
        if field("event:") == Some("post") {
            seqs.push(field("id:").expect("a post event has an id").parse().expect("a sequence number"));
        }
    }
    seqs
}

async fn slow_follower(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| {
        c.notes_per_player_per_day = 0;
        c.event_stream_unsent_bytes = 4096;
        // Longer than the test: what drops the follower is how far behind it is, not the time
        // the server waits on it.
        c.send_timeout_secs = 600;
        c.min_send_bytes_per_sec = 0;
    })
    .await;
    let (campaign, players) = campaign(&app, "Slow").await;
    app.post(&players[0], &campaign, note("first")).await.ok(201);

    // A follower with a small receive buffer reads the first post, then nothing more.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let address = app.base.strip_prefix("http://").unwrap().parse().unwrap();
    let mut stalled = socket.connect(address).await.expect("connect");
    let request =
        format!("GET /v1/campaigns/{campaign}/events HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n\r\n");
    stalled.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    let mut buffer = [0u8; 4096];
    tokio::time::timeout(Duration::from_secs(10), async {
        while posts_in_raw(&raw) != [1] {
            let n = stalled.read(&mut buffer).await.expect("read the stream");
            assert!(n > 0, "the stream ended: {}", String::from_utf8_lossy(&raw));
            raw.extend_from_slice(&buffer[..n]);
        }
    })
    .await
    .expect("the first post did not arrive");
    assert!(raw.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&raw));
    assert_eq!(streams_open(&app).0, 1);

    // Posts are written while it reads nothing: it falls behind and its stream ends.
    let text = "a long dispatch from the front ".repeat(25);
    let text = text.trim();
    let mut last = 1;
    while streams_open(&app).0 > 0 {
        assert!(last < 400, "a follower {last} posts behind was not dropped");
        app.post(&players[last as usize % 2], &campaign, note(text)).await.ok(201);
        last += 1;
    }
    assert_eq!(streams_open(&app), (0, 0), "the dropped stream's memory was not given back");
    assert_eq!(gauge_of_streams(&app).await, 0.0);
    let dropped_at = last;
    for i in 0..5 {
        app.post(&players[i % 2], &campaign, note("after the drop")).await.ok(201);
        last += 1;
    }

    // What reached it is every post up to some point, once; then the connection is closed.
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match stalled.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => raw.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await
    .expect("the dropped follower's connection stayed open");
    let received = posts_in_raw(&raw);
    let resume_after = *received.last().unwrap();
    assert_eq!(received, (1..=resume_after).collect::<Vec<_>>());
    assert!(resume_after < dropped_at, "the follower got every post though it read none");
    println!("{backend:?}: a follower that stopped reading after post 1 was dropped after post {dropped_at}, having been sent up to {resume_after}");

    // It resumes with the last event it has, and gets every later post exactly once.
    let mut resumed = Follower::open(&app, &campaign, Some(resume_after)).await;
    resumed.until(last, Duration::from_secs(20)).await;
    assert_eq!(resumed.seqs, (resume_after + 1..=last).collect::<Vec<_>>());
}

/// Each request a webhook receiver got: its `webhook-id`, when, and the status it answered.
type Seen = Arc<Mutex<Vec<(String, Instant, u16)>>>;

/// A webhook receiver on loopback that answers its first `failing` requests 500, then 204: its
/// address, and the requests it got.
async fn receiver(failing: usize) -> (String, Seen) {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap| {
            let record = record.clone();
            async move {
                let id = headers.get("webhook-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
                let mut seen = record.lock().unwrap();
                let status = if seen.len() < failing { 500 } else { 204 };
                seen.push((id, Instant::now(), status));
                axum::http::StatusCode::from_u16(status).unwrap()
            }
        }),
    );
    (format!("{}/hook", adjutant_e2e::serve(app).await), seen)
}

/// Registers a webhook on the table's campaign (its receiver failing the first `failing`
/// requests), posts a resolution on `poster`, and returns how long its outcome took to be
/// delivered.
async fn delivered_after_post(table: &Table, poster: &TestApp, failing: usize) -> Duration {
    let (url, seen) = receiver(failing).await;
    let path = format!("/v1/campaigns/{}/webhooks", table.campaign);
    table.app.request(Method::POST, &path, Some(&table.moderator), Some(json!({"url": url}))).await.ok(201);
    // Past the deliverers' first look at their start.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = Instant::now();
    let action = json!({"kind": "resolve", "body": {"action": "formation_test", "inputs": {"class": "B"}}});
    let post = poster.post(&table.union, &table.campaign, action).await;
    let outcome = post.ok(201)["outcomes"][0]["id"].as_str().unwrap().to_owned();
    let started = Instant::now();
    loop {
        if let Some((_, at, _)) = seen.lock().unwrap().iter().find(|(id, _, status)| *id == outcome && *status == 204) {
            return at.duration_since(sent);
        }
        assert!(started.elapsed() < Duration::from_secs(20), "the outcome was not delivered");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn webhook_woken(backend: Backend) {
    // The deliverer's own look is an hour away: only the post can start it.
    let app = TestApp::spawn_with(backend, |c| c.webhook_poll_ms = 3_600_000).await;
    let table = Table::open(app, "Woken", "acw-25mm").await;
    let latency = delivered_after_post(&table, &table.app, 0).await;
    println!("{backend:?}: from sending a post to its outcome's webhook request: {latency:?}");
    assert!(latency < Duration::from_secs(5), "{latency:?}");
}

async fn webhook_retry_on_time(backend: Backend) {
    // Nothing but the deliverer's own timer for its retries can make the second attempt: its
    // look is an hour away, and no post follows the first.
    let app = TestApp::spawn_with(backend, |c| {
        c.webhook_poll_ms = 3_600_000;
        c.webhook_retry_base_ms = 200;
        c.webhook_retry_cap_ms = 400;
    })
    .await;
    let table = Table::open(app, "Retried", "acw-25mm").await;
    let latency = delivered_after_post(&table, &table.app, 2).await;
    println!("{backend:?}: from sending a post to its outcome's third webhook request: {latency:?}");
    assert!(latency < Duration::from_secs(5), "{latency:?}");
}

async fn webhook_woken_across_replicas() {
    // The replica the post is written on does not deliver; the other hears the post.
    let app = TestApp::spawn_with(Backend::Postgres, |c| {
        c.webhook_poll_ms = 3_600_000;
        c.webhook_wake = false;
    })
    .await;
    let replica = TestApp::spawn_on(app.db.clone(), |c| c.webhook_poll_ms = 3_600_000).await;
    let table = Table::open(replica, "Woken elsewhere", "acw-25mm").await;
    let latency = delivered_after_post(&table, &app, 0).await;
    println!("from sending a post on one replica to its outcome's webhook request from the other: {latency:?}");
    assert!(latency < Duration::from_secs(5), "{latency:?}");
}
