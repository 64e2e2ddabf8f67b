//! A connection's socket, watched on its way in and out, so that a client that reads slowly or
//! sends an endless request head cannot hold what other clients need.
//!
//! - **Sending.** Whenever the server has part of an answer the client does not take (the
//!   socket's send buffer is full), the time it waits is counted. A connection is ended when one
//!   wait lasts `stall` without a byte going out, or when, over `window` of such waiting, the
//!   client took fewer than `min_rate` bytes a second of it. Waiting is what is measured, not
//!   time: a connection with nothing to send (an idle event stream, a kept-alive connection) is
//!   never cut, and an answer that fits the socket's buffers never waits at all.
//! - **Receiving.** Bytes read while no request of the connection is being handled or answered
//!   are its next request's head. The first [`FREE_HEAD_BYTES`] of each head are its own; beyond
//!   them, heads draw on one [`HeadBudget`] for the whole server, and a connection whose head
//!   would overdraw it is closed. A head's bytes go back to the budget when its request is
//!   handled or its connection closes. (Each head's own limit, `max_header_bytes`, is hyper's
//!   buffer.)
//! - **Waiting for a head.** A connection is waiting for a request head while none of its
//!   requests is being handled or answered: from its start, and from the end of each answer's
//!   body. Each such wait may last `head_time`; past it, the connection is ended, whether a part
//!   of the head came or none. The wait's deadline is noted as it begins, and one alarm per
//!   connection, still set for an earlier wait's deadline, is moved on to the latest one only
//!   when it goes off: a request on a kept-alive connection costs one clock read here and no
//!   timer of its own.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// Bytes of each request head that do not count against the [`HeadBudget`]: what an ordinary
/// request needs, so ordinary clients never meet the budget.
pub const FREE_HEAD_BYTES: usize = 8 * 1024;

/// How slowly a client may take its answers.
#[derive(Debug, Clone, Copy)]
pub struct SendLimits {
    /// One wait with no byte going out.
    pub stall: Duration,
    /// Bytes a second, at least, over `window` of waiting; 0: no minimum.
    pub min_rate: u64,
    pub window: Duration,
}

/// The bytes of unfinished request heads beyond [`FREE_HEAD_BYTES`] each, over all connections.
#[derive(Debug)]
pub struct HeadBudget {
    limit: usize,
    used: AtomicUsize,
}

impl HeadBudget {
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self { limit, used: AtomicUsize::new(0) })
    }

    /// Takes `bytes`, unless that would go past the limit.
    fn take(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|total| *total <= self.limit)
            })
            .is_ok()
    }

    fn give(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// Bytes taken now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }
}

/// What a connection's socket and its request handling share: the requests being handled (or
/// answered), the requests begun, and the head read so far.
#[derive(Debug)]
pub struct Heads {
    budget: Arc<HeadBudget>,
    handling: AtomicUsize,
    /// Requests of the connection whose handling has begun: a wait for a head that began
    /// before the last of them is over.
    begun: AtomicU64,
    /// Bytes of the head being read; those past [`FREE_HEAD_BYTES`] are taken from the budget.
    reading: AtomicUsize,
}

impl Heads {
    pub fn new(budget: Arc<HeadBudget>) -> Arc<Self> {
        Arc::new(Self { budget, handling: AtomicUsize::new(0), begun: AtomicU64::new(0), reading: AtomicUsize::new(0) })
    }

    /// A request's head is complete and its handling begins: the head's bytes go back to the
    /// budget, and what is read until the handling ends is its body. Ends when dropped; an
    /// answer's body holds it until the body ends ([`Handling::until_sent`]).
    pub fn handling(self: &Arc<Self>) -> Handling {
        self.handling.fetch_add(1, Ordering::AcqRel);
        self.begun.fetch_add(1, Ordering::AcqRel);
        self.finish_head();
        Handling(self.clone())
    }

    /// The wait for a head under way, named by the count of requests begun before it: none while
    /// a request is being handled or answered.
    fn waiting(&self) -> Option<u64> {
        (self.handling.load(Ordering::Acquire) == 0).then(|| self.begun.load(Ordering::Acquire))
    }

    fn finish_head(&self) {
        let read = self.reading.swap(0, Ordering::AcqRel);
        // Most heads are within their free bytes: the budget, which every connection shares, is
        // then not written.
        let over = read.saturating_sub(FREE_HEAD_BYTES);
        if over > 0 {
            self.budget.give(over);
        }
    }

    /// Counts `bytes` read; false when they would overdraw the budget.
    fn read(&self, bytes: usize) -> bool {
        if self.handling.load(Ordering::Acquire) > 0 || bytes == 0 {
            return true;
        }
        let before = self.reading.load(Ordering::Acquire);
        let after = before.saturating_add(bytes);
        let more = after.saturating_sub(FREE_HEAD_BYTES) - before.saturating_sub(FREE_HEAD_BYTES);
        if more > 0 && !self.budget.take(more) {
            return false;
        }
        self.reading.store(after, Ordering::Release);
        true
    }
}

/// A request being handled; see [`Heads::handling`].
pub struct Handling(Arc<Heads>);

impl Handling {
    /// `body`, holding this handling until the body ends or is dropped: the connection is not
    /// waiting for its next head while an answer (an event stream, an export) is still being
    /// sent.
    pub fn until_sent(self, body: axum::body::Body) -> axum::body::Body {
        axum::body::Body::new(Sending { body, _handling: self })
    }
}

impl Drop for Handling {
    fn drop(&mut self) {
        self.0.handling.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body with its request's [`Handling`]: hyper drops the body once it has its end.
struct Sending {
    body: axum::body::Body,
    _handling: Handling,
}

impl hyper::body::Body for Sending {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// A socket with its sending paced, its request heads counted and its waits for a head timed.
pub struct Paced<S> {
    io: S,
    limits: SendLimits,
    heads: Arc<Heads>,
    /// How long a wait for a head may last.
    head_time: Duration,
    /// The wait for a head under way ([`Heads::waiting`]) and its deadline, once seen.
    head_wait: Option<(u64, Instant)>,
    /// Wakes the connection at a wait's deadline: set for the first wait's deadline, and moved
    /// on to the wait under way only when it goes off, or when that wait's deadline is earlier.
    head_alarm: Option<Pin<Box<Sleep>>>,
    /// When the wait under way began, if the client is not taking what is sent.
    waiting_since: Option<Instant>,
    /// Waiting and bytes sent in the window under way.
    waited: Duration,
    sent: u64,
    timer: Pin<Box<Sleep>>,
}

impl<S> Paced<S> {
    pub fn new(io: S, limits: SendLimits, heads: Arc<Heads>, head_time: Duration) -> Self {
        let far = Instant::now() + Duration::from_secs(86_400);
        Self {
            io,
            limits,
            heads,
            head_time,
            head_wait: None,
            head_alarm: None,
            waiting_since: None,
            waited: Duration::ZERO,
            sent: 0,
            timer: Box::pin(tokio::time::sleep_until(far)),
        }
    }

    /// Whether the window's waiting shows a client slower than the minimum.
    fn too_slow(&self, waited: Duration) -> bool {
        self.limits.min_rate > 0
            && waited >= self.limits.window
            && (self.sent as f64) < self.limits.min_rate as f64 * waited.as_secs_f64()
    }

    /// When the wait that began at `since` ends the connection, sending nothing more.
    fn deadline(&self, since: Instant) -> Instant {
        let stall = since + self.limits.stall;
        if self.limits.min_rate == 0 {
            return stall;
        }
        // Both must hold: the window is complete, and the bytes sent are too few for the waiting.
        let window_left = self.limits.window.saturating_sub(self.waited);
        let rate_left =
            Duration::from_secs_f64(self.sent as f64 / self.limits.min_rate as f64).saturating_sub(self.waited);
        stall.min(since + window_left.max(rate_left))
    }

    /// Accounts for one attempt to send.
    fn pace(&mut self, cx: &mut Context<'_>, result: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        // The clock is read only while the client is not taking what is sent: an answer the
        // socket takes at once (nearly every one) costs no clock read.
        match result {
            Poll::Ready(Ok(n)) => {
                if let Some(since) = self.waiting_since.take() {
                    self.waited += Instant::now().saturating_duration_since(since);
                }
                self.sent = self.sent.saturating_add(n as u64);
                if self.waited >= self.limits.window {
                    if self.too_slow(self.waited) {
                        return Poll::Ready(Err(too_slow()));
                    }
                    self.waited = Duration::ZERO;
                    self.sent = 0;
                }
                Poll::Ready(Ok(n))
            }
            Poll::Pending => {
                let now = Instant::now();
                let since = *self.waiting_since.get_or_insert(now);
                let deadline = self.deadline(since);
                if now >= deadline {
                    return Poll::Ready(Err(too_slow()));
                }
                self.timer.as_mut().reset(deadline);
                match self.timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(too_slow())),
                    Poll::Pending => Poll::Pending,
                }
            }
            error => error,
        }
    }

    /// The deadline of the wait for a head under way, if the connection is waiting for one, noted
    /// the first time the wait is seen; and whether it was seen only now.
    fn head_deadline(&mut self) -> Option<(Instant, bool)> {
        let wait = self.heads.waiting()?;
        match self.head_wait {
            Some((seen, deadline)) if seen == wait => Some((deadline, false)),
            _ => {
                let deadline = Instant::now() + self.head_time;
                self.head_wait = Some((wait, deadline));
                Some((deadline, true))
            }
        }
    }

    /// Whether `deadline` has passed; otherwise the alarm wakes the connection at it.
    fn head_late(&mut self, deadline: Instant, cx: &mut Context<'_>) -> bool {
        let alarm = self.head_alarm.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if alarm.deadline() > deadline {
            alarm.as_mut().reset(deadline);
        }
        loop {
            // Outside the task's budget: a poll refused for the budget would leave an idle
            // connection with no alarm set.
            match Pin::new(&mut tokio::task::unconstrained(alarm.as_mut())).poll(cx) {
                Poll::Pending => return false,
                // Gone off at this wait's deadline (or after it): the time is up.
                Poll::Ready(()) if alarm.deadline() >= deadline => return true,
                // Gone off at an earlier wait's deadline: set for this one.
                Poll::Ready(()) => alarm.as_mut().reset(deadline),
            }
        }
    }
}

fn too_slow() -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, "the client took its answer too slowly")
}

impl<S> Drop for Paced<S> {
    fn drop(&mut self) {
        self.heads.finish_head();
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Paced<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let result = Pin::new(&mut this.io).poll_read(cx, buf);
        match result {
            Poll::Ready(Ok(())) => {
                if !this.heads.read(buf.filled().len() - before) {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::OutOfMemory,
                        "the request heads under way take all the bytes the server sets aside for them",
                    )));
                }
            }
            Poll::Pending => {
                if let Some((deadline, _)) = this.head_deadline() {
                    if this.head_late(deadline, cx) {
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "the request head did not come within header_read_timeout_secs",
                        )));
                    }
                }
            }
            Poll::Ready(Err(_)) => {}
        }
        result
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Paced<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.io).poll_write(cx, buf);
        this.pace(cx, result)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.pace(cx, result)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // hyper flushes as it finishes each answer: an answer just sent begins the wait for the
        // next head, which needs the alarm even if no read is tried before the client speaks.
        // Late already only if the clock stood still; the read that follows says so.
        if let Some((deadline, true)) = this.head_deadline() {
            let _ = this.head_late(deadline, cx);
        }
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn limits(stall_ms: u64, min_rate: u64, window_ms: u64) -> SendLimits {
        SendLimits { stall: Duration::from_millis(stall_ms), min_rate, window: Duration::from_millis(window_ms) }
    }

    /// Longer than any test takes: a wait for a head that never ends.
    const NO_HEAD_TIME: Duration = Duration::from_secs(3_600);

    fn paced<S>(io: S, limits: SendLimits) -> Paced<S> {
        Paced::new(io, limits, Heads::new(HeadBudget::new(0)), NO_HEAD_TIME)
    }

    /// A connection whose waits for a head may last `head_ms`, and what it shares with its
    /// requests' handling.
    fn timed(head_ms: u64) -> (tokio::io::DuplexStream, Paced<tokio::io::DuplexStream>, Arc<Heads>) {
        let (client, server) = tokio::io::duplex(4096);
        let heads = Heads::new(HeadBudget::new(0));
        let paced = Paced::new(server, limits(60_000, 0, 60_000), heads.clone(), Duration::from_millis(head_ms));
        (client, paced, heads)
    }

    /// Reads until the connection is ended: the error's kind and how long that took.
    async fn cut_off(server: &mut Paced<tokio::io::DuplexStream>) -> (io::ErrorKind, Duration) {
        let start = std::time::Instant::now();
        let mut buffer = [0u8; 256];
        loop {
            match tokio::time::timeout(Duration::from_secs(5), server.read(&mut buffer)).await {
                Err(_) => panic!("the connection was still open after 5 s"),
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return (e.kind(), start.elapsed()),
            }
        }
    }

    #[tokio::test]
    async fn a_head_that_does_not_come_in_time_ends_the_connection() {
        // Half a request line, then nothing.
        let (mut client, mut server, _) = timed(200);
        client.write_all(b"GET /v1/tools/res").await.unwrap();
        let (kind, took) = cut_off(&mut server).await;
        assert_eq!(kind, io::ErrorKind::TimedOut);
        assert!(took >= Duration::from_millis(180) && took < Duration::from_secs(2), "{took:?}");
        // Nothing at all.
        let (_client, mut silent, _) = timed(200);
        assert_eq!(cut_off(&mut silent).await.0, io::ErrorKind::TimedOut);
    }

    #[tokio::test]
    async fn a_request_handled_or_answered_is_not_waiting_for_a_head_and_each_wait_has_the_whole_time() {
        let (_client, mut server, heads) = timed(300);
        let mut buffer = [0u8; 256];
        // 200 ms of the first wait, then a request is handled, and its answer sent, for longer
        // than the head time.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let answer = heads.handling().until_sent(axum::body::Body::from("an event stream"));
        let reading = tokio::time::timeout(Duration::from_millis(600), server.read(&mut buffer)).await;
        assert!(reading.is_err(), "a connection answering a request was ended: {reading:?}");
        // The answer's body ends: the next wait begins as the answer is flushed, with the whole
        // head time from then.
        drop(answer);
        server.flush().await.unwrap();
        let (kind, took) = cut_off(&mut server).await;
        assert_eq!(kind, io::ErrorKind::TimedOut);
        assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(2), "{took:?}");
    }

    #[tokio::test]
    async fn a_kept_alive_connection_is_ended_a_head_time_after_its_last_answer() {
        let (mut client, mut server, heads) = timed(300);
        let start = std::time::Instant::now();
        let mut buffer = [0u8; 256];
        // Four requests, 200 ms apart: each within its own wait, 800 ms in all.
        for _ in 0..4 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
            let read = server.read(&mut buffer).await.expect("a head in time is read");
            assert_eq!(read, 18);
            drop(heads.handling().until_sent(axum::body::Body::empty()));
            server.flush().await.unwrap();
        }
        let answered = start.elapsed();
        let (kind, _) = cut_off(&mut server).await;
        assert_eq!(kind, io::ErrorKind::TimedOut);
        let idle = start.elapsed() - answered;
        assert!(idle >= Duration::from_millis(250) && idle < Duration::from_secs(2), "{idle:?}");
    }

    #[tokio::test]
    async fn a_reader_that_stops_is_cut_off_after_the_stall() {
        let (server, _client) = tokio::io::duplex(1024);
        let mut server = paced(server, limits(200, 0, 10_000));
        let start = std::time::Instant::now();
        let error = server.write_all(&[7u8; 64 * 1024]).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(180) && took < Duration::from_secs(2), "{took:?}");
    }

    #[tokio::test]
    async fn a_reader_slower_than_the_minimum_is_cut_off_after_the_window() {
        let (server, mut client) = tokio::io::duplex(256);
        // 256 bytes every 20 ms: about 12.8 KB/s, under a minimum of 50 KB/s.
        let reader = tokio::spawn(async move {
            let mut buffer = [0u8; 256];
            let mut total = 0usize;
            loop {
                tokio::time::sleep(Duration::from_millis(20)).await;
                match client.read(&mut buffer).await {
                    Ok(0) | Err(_) => return total,
                    Ok(n) => total += n,
                }
            }
        });
        let mut server = paced(server, limits(5_000, 50_000, 300));
        let start = std::time::Instant::now();
        let error = server.write_all(&vec![1u8; 1 << 20]).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(2), "{took:?}");
        drop(server);
        assert!(reader.await.unwrap() < 1 << 20);
    }

    #[tokio::test]
    async fn a_reader_that_keeps_up_is_never_cut_off() {
        let (server, mut client) = tokio::io::duplex(4096);
        let reader = tokio::spawn(async move {
            let mut all = Vec::new();
            client.read_to_end(&mut all).await.map(|_| all.len())
        });
        let mut server = paced(server, limits(250, 100_000, 200));
        server.write_all(&vec![2u8; 4 << 20]).await.expect("a fast reader takes it all");
        // Nothing to send for longer than the stall and the window: no cut.
        tokio::time::sleep(Duration::from_millis(400)).await;
        server.write_all(b"more").await.expect("an idle connection is not slow");
        server.shutdown().await.unwrap();
        drop(server);
        assert_eq!(reader.await.unwrap().unwrap(), (4 << 20) + 4);
    }

    #[tokio::test]
    async fn heads_beyond_their_free_bytes_share_one_budget() {
        let budget = HeadBudget::new(10_000);
        let (mut a_client, a_server) = tokio::io::duplex(64 * 1024);
        let (mut b_client, b_server) = tokio::io::duplex(64 * 1024);
        let heads_a = Heads::new(budget.clone());
        let mut a = Paced::new(a_server, limits(1_000, 0, 1_000), heads_a.clone(), NO_HEAD_TIME);
        let mut b = Paced::new(b_server, limits(1_000, 0, 1_000), Heads::new(budget.clone()), NO_HEAD_TIME);
        let mut buffer = vec![0u8; 64 * 1024];
        // A's head: 8 KiB free, 6,000 bytes from the budget.
        a_client.write_all(&vec![b'a'; FREE_HEAD_BYTES + 6_000]).await.unwrap();
        let mut read = 0;
        while read < FREE_HEAD_BYTES + 6_000 {
            read += a.read(&mut buffer).await.unwrap();
        }
        assert_eq!(budget.used(), 6_000);
        // B's head would take 6,000 more: refused.
        b_client.write_all(&vec![b'b'; FREE_HEAD_BYTES + 6_000]).await.unwrap();
        let refused = async {
            loop {
                match b.read(&mut buffer).await {
                    Ok(_) => continue,
                    Err(e) => return e,
                }
            }
        };
        assert_eq!(refused.await.kind(), io::ErrorKind::OutOfMemory);
        // A's request is handled: its head's bytes go back, and its body does not count.
        let handling = heads_a.handling();
        assert_eq!(budget.used(), 0);
        a_client.write_all(&vec![b'x'; 40_000]).await.unwrap();
        let mut body = 0;
        while body < 40_000 {
            body += a.read(&mut buffer).await.unwrap();
        }
        assert_eq!(budget.used(), 0);
        drop(handling);
        // The next head counts again, and a closed connection gives its bytes back.
        a_client.write_all(&vec![b'a'; FREE_HEAD_BYTES + 100]).await.unwrap();
        let mut read = 0;
        while read < FREE_HEAD_BYTES + 100 {
            read += a.read(&mut buffer).await.unwrap();
        }
        assert_eq!(budget.used(), 100);
        drop(a);
        assert_eq!(budget.used(), 0);
    }
}
