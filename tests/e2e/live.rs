//! Live event streams: a follower is woken by each commit instead of asking the store on a
//! timer, catches up from `Last-Event-ID` without a gap or a repeat while posts keep coming,
//! and, on PostgreSQL, hears the posts another server on the same database writes, even when
//! its listening connection is cut.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use adjutant_e2e::serde_json::json;
use adjutant_e2e::{on_both_backends, Backend, TestApp};
use sqlx::Connection;

on_both_backends! {
    a_follower_joining_mid_stream_gets_every_later_post_once_while_eight_clients_post => hand_over;
    a_post_reaches_an_idle_follower_at_once => idle_latency;
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
    async fn a_killed_listening_connection_loses_no_post() {
        if adjutant_e2e::postgres_admin_url().is_none() {
            return;
        }
        super::listener_killed().await;
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
