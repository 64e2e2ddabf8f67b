//! Fair shares under hostile load: one client cannot take what every client needs. Each test
//! runs an attack from one loopback address (all of 127.0.0.0/8 is this machine, so an attacker
//! is 127.0.0.2 and the second client 127.0.0.1) against the server on real sockets, with small
//! limits so that it takes seconds, and while it runs a second client loads a campaign's page,
//! opens its event stream and stores a post, each on a fresh connection; the timings are printed.
//! A slow link is a socket with a small receive buffer that reads little or nothing.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use adjutant_e2e::reqwest::{self, StatusCode};
use adjutant_e2e::serde_json::json;
use adjutant_e2e::{read, Backend, Table, TestApp};
use adjutant_server::config::Config;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::task::JoinHandle;

/// The most any one step of the second client may take while an attack runs.
const SERVED_WITHIN: Duration = Duration::from_secs(5);
const ATTACKER: [u8; 4] = [127, 0, 0, 2];

fn server(app: &TestApp) -> SocketAddr {
    app.base.trim_start_matches("http://").parse().expect("the server's address")
}

/// A connection from `source` with a small receive buffer: a slow link.
async fn connect_from(source: [u8; 4], server: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.bind(SocketAddr::from((source, 0))).unwrap();
    socket.connect(server).await.expect("connecting")
}

/// A client that opens a fresh connection for every request, from `source`.
fn client_from(source: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder().local_address(IpAddr::from(source)).pool_max_idle_per_host(0).build().expect("a client")
}

async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> (T, Duration) {
    let start = Instant::now();
    let value = tokio::time::timeout(SERVED_WITHIN, future)
        .await
        .unwrap_or_else(|_| panic!("{what} took more than {SERVED_WITHIN:?} while the attack ran"));
    (value, start.elapsed())
}

/// While `attack` runs: the second client's page loads, its event stream opens, its post is
/// stored, and `/healthz` answers; each timed and printed.
async fn second_client_is_served(t: &Table, attack: &str) {
    second_client_from([127, 0, 0, 1], t, attack).await;
}

/// The same, from another address (where the attack came from 127.0.0.1).
pub(crate) async fn second_client_from(source: [u8; 4], t: &Table, attack: &str) {
    let client = client_from(source);
    let base = &t.app.base;
    let (health, health_took) = within("/healthz", client.get(format!("{base}/healthz")).send()).await;
    assert_eq!(health.unwrap().status(), StatusCode::OK);
    let (page, page_took) = within("the campaign's page", async {
        let page = client.get(format!("{base}/campaigns/{}", t.campaign)).send().await.unwrap();
        (page.status(), page.text().await.unwrap())
    })
    .await;
    assert_eq!(page.0, StatusCode::OK, "{}", page.1);
    assert!(page.1.contains("<html"), "{}", page.1);
    let (stream, stream_took) =
        within("the event stream", client.get(format!("{base}/v1/campaigns/{}/events", t.campaign)).send()).await;
    let stream = stream.unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    assert!(stream.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    drop(stream);
    let note = json!({"kind": "note", "body": {"text": format!("posted during {attack}")}});
    let (post, post_took) = within(
        "a post",
        client
            .post(format!("{base}/v1/campaigns/{}/posts", t.campaign))
            .bearer_auth(&t.confederate)
            .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
            .json(&note)
            .send(),
    )
    .await;
    let post = read(post.unwrap()).await;
    post.ok(201);
    eprintln!(
        "during {attack}: /healthz answered in {health_took:?}, the campaign's page loaded in {page_took:?}, \
         its event stream opened in {stream_took:?}, a post was stored in {post_took:?}"
    );
}

async fn table(configure: impl FnOnce(&mut Config)) -> Table {
    Table::open(TestApp::spawn_with(Backend::Sqlite, configure).await, "Fair shares", "acw-25mm").await
}

/// Reads everything `stream` sends until it is closed, for at most `limit`: the bytes read, and
/// whether it was closed.
async fn drain(mut stream: TcpStream, limit: Duration) -> (usize, bool) {
    let deadline = tokio::time::Instant::now() + limit;
    let mut buffer = vec![0u8; 64 * 1024];
    let mut total = 0;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Err(_) => return (total, false),
            Ok(Ok(0) | Err(_)) => return (total, true),
            Ok(Ok(n)) => total += n,
        }
    }
}

/// Waits until `stream` is closed, reading nothing it would not have to: how long that took,
/// or `None` past `limit`.
fn closed_within(mut stream: TcpStream, limit: Duration) -> JoinHandle<Option<Duration>> {
    tokio::spawn(async move {
        let start = Instant::now();
        let mut buffer = [0u8; 1024];
        loop {
            match tokio::time::timeout(limit.saturating_sub(start.elapsed()), stream.read(&mut buffer)).await {
                Err(_) => return None,
                Ok(Ok(0) | Err(_)) => return Some(start.elapsed()),
                Ok(Ok(_)) => {}
            }
        }
    })
}

/// The attack: connections that each ask for the API description sixty times over, pipelined,
/// and never read an answer, from one address; more of them than the server keeps connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_readers_do_not_hold_every_connection() {
    let t = table(|config| {
        config.max_connections = 8;
        config.max_connections_per_client = 4;
        config.send_timeout_secs = 2;
        config.send_rate_window_secs = 2;
    })
    .await;
    let server = server(&t.app);
    let description = t.app.get("/v1/openapi.json").await.text.len();
    let request = "GET /v1/openapi.json HTTP/1.1\r\nHost: adjutant\r\n\r\n".repeat(60);
    let started = Instant::now();
    let mut attackers = Vec::new();
    for _ in 0..12 {
        let mut stream = connect_from(ATTACKER, server).await;
        let _ = stream.write_all(request.as_bytes()).await;
        attackers.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    second_client_is_served(&t, "slow readers holding connections").await;

    // Every attacking connection is refused (429) or cut off once it stops taking its answers
    // for the send time-out: read after that, what it still holds is far less than the sixty
    // answers it asked for, and then it ends.
    tokio::time::sleep_until((started + Duration::from_secs(3)).into()).await;
    let drains: Vec<_> = attackers.into_iter().map(|s| tokio::spawn(drain(s, Duration::from_secs(5)))).collect();
    let mut cut = Vec::new();
    for drained in drains {
        let (bytes, closed) = drained.await.unwrap();
        assert!(closed, "an attacking connection was still open {:?} after the attack began", started.elapsed());
        assert!(bytes < 60 * description, "an attacking connection was given all {bytes} bytes it asked for");
        cut.push(bytes);
    }
    eprintln!(
        "slow readers: all 12 attacking connections were closed {:?} after the attack began (bytes each could still read: {cut:?})",
        started.elapsed()
    );
}

/// The attack: one address opens event streams as fast as it can, one token from two more
/// addresses does too, and then enough addresses to fill the server's pool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_cannot_take_every_event_stream() {
    let t = table(|config| {
        config.max_event_streams = 6;
        config.event_streams_per_client = 2;
        config.event_streams_per_token = 2;
    })
    .await;
    let events = format!("{}/v1/campaigns/{}/events", t.app.base, t.campaign);
    let started = Instant::now();
    let anonymous = client_from(ATTACKER);
    let mut open = Vec::new();
    for _ in 0..10 {
        let answer = anonymous.get(&events).send().await.unwrap();
        if answer.status() == StatusCode::OK {
            open.push(answer);
            continue;
        }
        let refused = read(answer).await;
        let problem = refused.problem(429, "path");
        assert_eq!(problem["rule"], "events.per_client", "{}", refused.text);
        assert!(problem["detail"].as_str().unwrap().contains("2 event streams open"), "{}", refused.text);
        assert!(refused.headers.contains_key("retry-after"));
    }
    assert_eq!(open.len(), 2, "one address held {} event streams", open.len());
    // One player's token, from two addresses: two streams in all.
    let mut by_token = 0;
    for source in [[127, 0, 0, 3], [127, 0, 0, 4]] {
        for _ in 0..2 {
            let answer = client_from(source).get(&events).bearer_auth(&t.union).send().await.unwrap();
            if answer.status() == StatusCode::OK {
                open.push(answer);
                by_token += 1;
                continue;
            }
            let refused = read(answer).await;
            assert_eq!(refused.problem(429, "Authorization")["rule"], "events.per_token", "{}", refused.text);
        }
    }
    assert_eq!(by_token, 2, "one token held {by_token} event streams");
    eprintln!(
        "event streams: one address and one token held 2 streams each, {:?} after the attack began",
        started.elapsed()
    );
    second_client_is_served(&t, "one address and one token opening event streams").await;

    // Many addresses together can fill the pool; then the answer says so, not that the
    // database is unreachable.
    for source in [[127, 0, 0, 5], [127, 0, 0, 6]] {
        let answer = client_from(source).get(&events).send().await.unwrap();
        assert_eq!(answer.status(), StatusCode::OK);
        open.push(answer);
    }
    let full = read(client_from([127, 0, 0, 7]).get(&events).send().await.unwrap()).await;
    let problem = full.problem(503, "path");
    assert_eq!(problem["rule"], "events.all_open", "{}", full.text);
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("every event stream this server keeps (6) is open"), "{detail}");
    assert!(!detail.contains("database"), "{detail}");
    assert!(full.headers.contains_key("retry-after"));
    // A stream that closes gives its place back.
    drop(open.pop());
    let again = tokio::time::timeout(SERVED_WITHIN, async {
        loop {
            let answer = client_from([127, 0, 0, 7]).get(&events).send().await.unwrap();
            if answer.status() == StatusCode::OK {
                return answer;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("a closed stream's place was not given back");
    drop(again);
}

/// The attack: exports read slowly, a kilobyte every tenth of a second, on every export slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_readers_of_exports_free_their_slots() {
    let t = table(|config| {
        config.max_exports = 2;
        // A small send buffer, as on a slow link: the server waits on the reader, not the kernel.
        config.send_buffer_bytes = 8192;
        config.min_send_bytes_per_sec = 64 * 1024;
        config.send_rate_window_secs = 1;
        // Longer than the test: the readers never stop, they only read slowly.
        config.send_timeout_secs = 60;
    })
    .await;
    // A log of a megabyte: more than the buffers between the export and its reader hold.
    for i in 0..26 {
        let note = json!({"kind": "note", "body": {"text": format!("{i} {}", "dispatch ".repeat(4_444))}});
        t.app.post(&t.union, &t.campaign, note).await.ok(201);
    }
    let export = format!("/v1/campaigns/{}/export", t.campaign);
    let size = t.app.get(&export).await.text.len();
    assert!(size > 1_000_000, "an export of {size} bytes fits the buffers");
    let server = server(&t.app);
    let started = Instant::now();
    let mut readers = Vec::new();
    for _ in 0..2 {
        let mut stream = connect_from(ATTACKER, server).await;
        stream.write_all(format!("GET {export} HTTP/1.1\r\nHost: adjutant\r\n\r\n").as_bytes()).await.unwrap();
        let mut first = [0u8; 12];
        stream.read_exact(&mut first).await.unwrap();
        assert_eq!(&first, b"HTTP/1.1 200");
        readers.push(tokio::spawn(async move {
            let mut buffer = [0u8; 1024];
            let mut total = first.len();
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                match stream.read(&mut buffer).await {
                    Ok(0) | Err(_) => return (total, started.elapsed()),
                    Ok(n) => total += n,
                }
            }
        }));
    }
    // Both slots are taken.
    t.app.get(&export).await.problem(503, "path");
    second_client_is_served(&t, "slow readers holding every export").await;
    // The slow readers are cut off, and their slots are free again.
    let (freed, took) = within("an export", async {
        loop {
            let answer = t.app.get(&export).await;
            if answer.status == StatusCode::OK {
                return answer;
            }
            answer.problem(503, "path");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(freed.text.lines().last().is_some_and(|l| l.contains(r#""type":"end""#)), "{}", freed.text);
    for reader in readers {
        let (bytes, ended) = reader.await.unwrap();
        assert!(bytes < size, "a slow reader was given the whole export");
        eprintln!("slow export readers: one was cut off after {ended:?}, having read {bytes} of {size} bytes");
    }
    eprintln!(
        "slow export readers: an export slot was free again {:?} after the attack began ({took:?} of asking)",
        started.elapsed()
    );
}

/// The attack: request heads that never end. One larger than a head may be; then many that
/// together draw more than the server sets aside for heads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unfinished_headers_draw_on_one_budget() {
    let t = table(|config| {
        config.max_header_bytes = 16 * 1024;
        // Beyond the first 8 KiB of each head.
        config.header_bytes_budget = 32 * 1024;
        config.header_read_timeout_secs = 10;
    })
    .await;
    let server = server(&t.app);
    let head = |bytes: usize| {
        let mut head = b"GET /healthz HTTP/1.1\r\nHost: adjutant\r\nX-Padding: ".to_vec();
        head.resize(bytes, b'a');
        head
    };
    // A head past max_header_bytes: 431 (or, when the closing connection is reset before the
    // answer is read, a reset), at once rather than at the header time-out.
    let mut large = connect_from([127, 0, 0, 3], server).await;
    large.write_all(&head(40 * 1024)).await.unwrap();
    let mut answer = Vec::new();
    let (read, took) = within("the answer to a head too large", large.read_to_end(&mut answer)).await;
    assert!(read.is_err() || answer.starts_with(b"HTTP/1.1 431"), "{}", String::from_utf8_lossy(&answer));
    eprintln!(
        "unfinished headers: a 40 KiB head was refused in {took:?} ({})",
        String::from_utf8_lossy(&answer[..answer.len().min(12)])
    );
    // Its connection is gone, and with it what its head drew from the budget.
    tokio::time::sleep(Duration::from_millis(100)).await;

    // Eight heads of 14 KiB: each draws 6 KiB beyond its own 8 KiB, 48 KiB in all, from a
    // budget of 32 KiB. Five fit; the others' connections are closed at once.
    let started = Instant::now();
    let mut watches = Vec::new();
    for _ in 0..8 {
        let mut stream = connect_from(ATTACKER, server).await;
        stream.write_all(&head(14 * 1024)).await.unwrap();
        watches.push(closed_within(stream, Duration::from_secs(2)));
    }
    second_client_is_served(&t, "unfinished headers filling the budget").await;
    let mut closed = Vec::new();
    for watch in watches {
        closed.extend(watch.await.unwrap());
    }
    assert_eq!(closed.len(), 3, "{} of 8 connections were closed within 2 s: {closed:?}", closed.len());
    eprintln!(
        "unfinished headers: 3 of 8 heads past the budget were closed after {closed:?}, {:?} after the attack began",
        started.elapsed()
    );
}

/// A bot follows every campaign of its moderator with one token: its share is counted on each
/// campaign, so it holds a stream on each, and only a second stream on one campaign is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_following_many_campaigns_holds_a_stream_on_each() {
    let t = table(|config| {
        config.event_streams_per_client = 1;
        config.event_streams_per_token = 1;
    })
    .await;
    let mut campaigns = vec![t.campaign.clone()];
    for n in 0..3 {
        let body = json!({"name": format!("Another {n}"), "mode": "resolver", "ruleset": "acw-25mm"});
        campaigns.push(t.app.campaign(&t.moderator, body).await);
    }
    let bot = client_from(ATTACKER);
    let mut open = Vec::new();
    for campaign in &campaigns {
        let answer = bot
            .get(format!("{}/v1/campaigns/{campaign}/events", t.app.base))
            .bearer_auth(&t.moderator)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::OK, "a stream on campaign {campaign}");
        open.push(answer);
    }
    let again = bot
        .get(format!("{}/v1/campaigns/{}/events", t.app.base, campaigns[0]))
        .bearer_auth(&t.moderator)
        .send()
        .await
        .unwrap();
    let refused = read(again).await;
    assert_eq!(refused.problem(429, "Authorization")["rule"], "events.per_token", "{}", refused.text);
    // The address's share is for streams without a token: one more of those is still open to it.
    let anonymous = bot.get(format!("{}/v1/campaigns/{}/events", t.app.base, campaigns[1])).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::OK);
}
