//! A connection's socket, watched on its way in and out, so that a client that reads slowly or
//! sends an endless request head cannot hold what other clients need.
//!
//! - **Sending.** Whenever the server has part of an answer the client does not take (the
//!   socket's send buffer is full), the time it waits is counted. A connection is ended when one
//!   wait lasts `stall` without a byte going out, or when, over `window` of such waiting, the
//!   client took fewer than `min_rate` bytes a second of it. Waiting is what is measured, not
//!   time: a connection with nothing to send (an idle event stream, a kept-alive connection) is
//!   never cut, and an answer that fits the socket's buffers never waits at all.
//! - **Receiving.** Bytes read while no request of the connection is being handled are its next
//!   request's head. The first [`FREE_HEAD_BYTES`] of each head are its own; beyond them, heads
//!   draw on one [`HeadBudget`] for the whole server, and a connection whose head would overdraw
//!   it is closed. A head's bytes go back to the budget when its request is handled or its
//!   connection closes. (Each head's own limit, `max_header_bytes`, is hyper's buffer.)

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// What a connection's socket and its request handling share: the requests being handled, and
/// the head read so far.
#[derive(Debug)]
pub struct Heads {
    budget: Arc<HeadBudget>,
    handling: AtomicUsize,
    /// Bytes of the head being read; those past [`FREE_HEAD_BYTES`] are taken from the budget.
    reading: AtomicUsize,
}

impl Heads {
    pub fn new(budget: Arc<HeadBudget>) -> Arc<Self> {
        Arc::new(Self { budget, handling: AtomicUsize::new(0), reading: AtomicUsize::new(0) })
    }

    /// A request's head is complete and its handling begins: the head's bytes go back to the
    /// budget, and what is read until the handling ends is its body. Ends when dropped.
    pub fn handling(self: &Arc<Self>) -> Handling {
        self.handling.fetch_add(1, Ordering::AcqRel);
        self.finish_head();
        Handling(self.clone())
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

impl Drop for Handling {
    fn drop(&mut self) {
        self.0.handling.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A socket with its sending paced and its request heads counted.
pub struct Paced<S> {
    io: S,
    limits: SendLimits,
    heads: Arc<Heads>,
    /// When the wait under way began, if the client is not taking what is sent.
    waiting_since: Option<Instant>,
    /// Waiting and bytes sent in the window under way.
    waited: Duration,
    sent: u64,
    timer: Pin<Box<Sleep>>,
}

impl<S> Paced<S> {
    pub fn new(io: S, limits: SendLimits, heads: Arc<Heads>) -> Self {
        let far = Instant::now() + Duration::from_secs(86_400);
        Self {
            io,
            limits,
            heads,
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
        if let Poll::Ready(Ok(())) = result {
            if !this.heads.read(buf.filled().len() - before) {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::OutOfMemory,
                    "the request heads under way take all the bytes the server sets aside for them",
                )));
            }
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
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
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

    fn paced<S>(io: S, limits: SendLimits) -> Paced<S> {
        Paced::new(io, limits, Heads::new(HeadBudget::new(0)))
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
        let mut a = Paced::new(a_server, limits(1_000, 0, 1_000), heads_a.clone());
        let mut b = Paced::new(b_server, limits(1_000, 0, 1_000), Heads::new(budget.clone()));
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
