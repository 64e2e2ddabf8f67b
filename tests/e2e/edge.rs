//! The HTTP edge: a connection that does not finish its request head in time is closed, and a
//! cap on open connections cannot be held for longer than that by idle clients.

use std::time::{Duration, Instant};

use adjutant_e2e::serde_json::json;
use adjutant_e2e::{Backend, TestApp};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn address(app: &TestApp) -> String {
    app.base.trim_start_matches("http://").to_owned()
}

/// Reads until the server closes the connection; how long that took, or `None` past `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> Option<Duration> {
    let start = Instant::now();
    let mut buffer = [0u8; 1024];
    loop {
        match tokio::time::timeout(within.saturating_sub(start.elapsed()), stream.read(&mut buffer)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(start.elapsed()),
            Ok(Ok(_)) => {}
        }
    }
}

/// The attack ("slowloris"): open a connection, send half a request line, and wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_a_request_line_is_disconnected_after_the_header_time_out() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| config.header_read_timeout_secs = 1).await;
    let mut slow = TcpStream::connect(address(&app)).await.unwrap();
    slow.write_all(b"GET /v1/tools/result-n").await.unwrap();
    let closed = closed_within(&mut slow, Duration::from_secs(5)).await;
    let took = closed.expect("the server kept a connection with half a request line open for 5 s");
    assert!(took >= Duration::from_millis(800), "closed after {took:?}, before the time-out");
    // A connection that says nothing at all is closed too.
    let mut silent = TcpStream::connect(address(&app)).await.unwrap();
    assert!(closed_within(&mut silent, Duration::from_secs(5)).await.is_some());
    // A whole request is answered as ever.
    app.get("/healthz").await.ok(200);
}

/// The attack: hold every connection slot with idle connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_hold_the_connection_limit_no_longer_than_the_header_time_out() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.header_read_timeout_secs = 1;
        config.max_connections = 3;
    })
    .await;
    // N + 1 idle connections, each with half a request line.
    let mut idle = Vec::new();
    for _ in 0..4 {
        let mut stream = TcpStream::connect(address(&app)).await.unwrap();
        stream.write_all(b"GET /healthz HT").await.unwrap();
        idle.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    // A normal request waits for a slot, and gets one when the idle ones are dropped.
    let start = Instant::now();
    let answer = tokio::time::timeout(Duration::from_secs(5), app.get("/healthz"))
        .await
        .expect("a normal request was starved for 5 s by idle connections");
    answer.ok(200);
    let waited = start.elapsed();
    assert!(waited >= Duration::from_millis(500), "answered after {waited:?}: the connection limit did not hold");
    assert!(waited <= Duration::from_secs(3), "answered after {waited:?}");
}

/// A kept-alive connection: each request's head has the time-out from when the service begins
/// waiting for it. Requests that come in time are answered however long the connection lives
/// (more than three time-outs' lengths in all), and a connection silent after an answer is closed
/// once the time-out has passed since that answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_alive_connection_has_the_header_time_out_for_each_request() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| config.header_read_timeout_secs = 1).await;
    let mut stream = TcpStream::connect(address(&app)).await.unwrap();
    let request = b"GET /healthz HTTP/1.1\r\nHost: adjutant\r\n\r\n";
    let start = Instant::now();
    for _ in 0..6 {
        // 600 ms apart: within the time-out each time, 3.6 s in all.
        tokio::time::sleep(Duration::from_millis(600)).await;
        stream.write_all(request).await.unwrap();
        let answer = tokio::time::timeout(Duration::from_secs(5), whole_answer(&mut stream)).await.expect("answered");
        assert!(answer.starts_with("HTTP/1.1 200"), "after {:?}: {answer}", start.elapsed());
    }
    let took = closed_within(&mut stream, Duration::from_secs(5)).await.expect("the silent connection stayed open");
    assert!(took >= Duration::from_millis(800), "closed {took:?} after the last answer, before the time-out");
}

/// An answer still being sent is not a wait for the next head: an event stream stays open for
/// many time-outs' lengths, and hears a post made after them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_stream_outlives_the_header_time_out() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| config.header_read_timeout_secs = 1).await;
    let moderator = app.moderator().await;
    let campaign = app.campaign(&moderator, json!({"name": "Streamed", "scenario": "short-acw"})).await;
    let player = app.player(&moderator, &campaign, "union").await;
    let mut stream = TcpStream::connect(address(&app)).await.unwrap();
    let request = format!("GET /v1/campaigns/{campaign}/events HTTP/1.1\r\nHost: adjutant\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    // Three time-outs' lengths of an open stream.
    tokio::time::sleep(Duration::from_millis(3_000)).await;
    app.post(&player, &campaign, json!({"kind": "note", "body": {"text": "still here"}})).await.ok(201);
    let mut read = Vec::new();
    let mut buffer = [0u8; 4096];
    let heard = tokio::time::timeout(Duration::from_secs(5), async {
        while !String::from_utf8_lossy(&read).contains("event: post") {
            let n = stream.read(&mut buffer).await.expect("the stream is open");
            assert!(n > 0, "the stream was closed: {}", String::from_utf8_lossy(&read));
            read.extend_from_slice(&buffer[..n]);
        }
    })
    .await;
    assert!(heard.is_ok(), "no post event within 5 s: {}", String::from_utf8_lossy(&read));
}

/// Reads one answer with a `content-length`: its head and its whole body.
async fn whole_answer(stream: &mut TcpStream) -> String {
    let mut read = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let n = stream.read(&mut buffer).await.expect("the connection is open");
        assert!(n > 0, "closed mid-answer: {}", String::from_utf8_lossy(&read));
        read.extend_from_slice(&buffer[..n]);
        let text = String::from_utf8_lossy(&read).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|line| {
                    line.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>())
                })
                .expect("a content-length")
                .expect("a number");
            if read.len() >= end + 4 + length {
                return text;
            }
        }
    }
}
