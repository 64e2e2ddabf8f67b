//! The followers: thousands of event streams (`GET /v1/campaigns/{id}/events`) held open by this
//! process at little cost each. Each is a task on one connection, bound to a loopback address of
//! its own group (so the server's per-address cap on streams holds), speaking HTTP/1.1 by hand:
//! the answer's head read once, its chunked body undone, and of the event stream only the `id:`
//! and `event:` lines and the post's `stamp` read. Each follower checks that every post comes
//! once and in order, and times each from its stamp to its arrival.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::Result;

/// Streams one loopback address holds: half the server's default share per address
/// (`event_streams_per_client` = 8), so a stream the server has not yet seen close never keeps
/// its follower from coming back.
pub const STREAMS_PER_ADDRESS: usize = 4;
/// Followers connecting at once.
const CONNECTING: usize = 256;
/// Bytes each follower reads at once.
const READ_BUFFER: usize = 4096;
/// How long a refused follower waits before asking again.
const REFUSED_WAIT: Duration = Duration::from_millis(200);

/// The loopback address of the `n`th follower's group: 127.1.0.1, 127.1.0.2, …, never a .0 or
/// .255 (127.0.0.1, where the posters come from, is left to them).
pub fn address(n: usize) -> Ipv4Addr {
    let group = n / STREAMS_PER_ADDRESS;
    Ipv4Addr::new(127, 1 + (group / (250 * 250)) as u8, (group / 250 % 250) as u8, (group % 250 + 1) as u8)
}

/// Latencies in µs, counted in buckets of about 1.6 % each (exact below 128 µs), shared by every
/// follower: a constant memory however many posts arrive.
pub struct Histogram {
    buckets: Vec<AtomicU64>,
    max: AtomicU64,
    count: AtomicU64,
}

const SUB: u32 = 64;

impl Histogram {
    fn new() -> Self {
        Self { buckets: (0..bucket(u64::MAX) + 1).map(|_| AtomicU64::new(0)).collect(), max: 0.into(), count: 0.into() }
    }

    pub fn record(&self, us: u64) {
        self.buckets[bucket(us)].fetch_add(1, Ordering::Relaxed);
        self.max.fetch_max(us, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    pub fn max_ms(&self) -> f64 {
        self.max.load(Ordering::Relaxed) as f64 / 1000.0
    }

    /// The latency at `p` (0–1), in ms: the middle of its bucket.
    pub fn percentile_ms(&self, p: f64) -> f64 {
        let count = self.count();
        if count == 0 {
            return f64::NAN;
        }
        let rank = ((count - 1) as f64 * p).round() as u64;
        let mut seen = 0;
        for (i, b) in self.buckets.iter().enumerate() {
            seen += b.load(Ordering::Relaxed);
            if seen > rank {
                let (low, high) = bounds(i);
                return (low + high) as f64 / 2.0 / 1000.0;
            }
        }
        self.max_ms()
    }
}

/// The bucket of `us`: exact below 2 × [`SUB`], then [`SUB`] buckets per power of two.
fn bucket(us: u64) -> usize {
    if us < 2 * SUB as u64 {
        return us as usize;
    }
    let power = 63 - us.leading_zeros();
    let shift = power + 1 - SUB.trailing_zeros() - 1;
    let sub = (us >> shift) as usize - SUB as usize;
    (2 * SUB as usize) + (power as usize - SUB.trailing_zeros() as usize - 1) * SUB as usize + sub
}

/// The values a bucket holds, lowest and highest.
fn bounds(i: usize) -> (u64, u64) {
    let sub = SUB as usize;
    if i < 2 * sub {
        return (i as u64, i as u64);
    }
    let power = (i - 2 * sub) / sub + sub.trailing_zeros() as usize + 1;
    let shift = power - sub.trailing_zeros() as usize;
    let low = ((sub + (i - 2 * sub) % sub) as u64) << shift;
    (low, low + ((1u64 << shift) - 1))
}

/// What every follower of a run counted together.
pub struct Tally {
    pub latency: Histogram,
    /// Posts received in order, each once.
    pub delivered: AtomicU64,
    /// Posts skipped (a sequence number more than one past the last), and received again.
    pub missed: AtomicU64,
    pub repeated: AtomicU64,
    /// Streams the server ended that the follower opened again (`Last-Event-ID`), and requests
    /// for a stream the server refused (429 or 503) and that were asked again.
    pub reconnects: AtomicU64,
    pub refused: AtomicU64,
    /// Streams that could not be opened (a connection refused or reset) and were asked again.
    pub failed: AtomicU64,
    /// Followers whose stream is open (the answer's head received).
    pub connected: AtomicU64,
    /// Each follower's last post received.
    pub last: Vec<AtomicI64>,
}

/// A follower of `campaign` from after post `after`.
#[derive(Clone)]
pub struct Follow {
    pub campaign: String,
    pub after: i64,
}

/// The followers of one run, following until dropped.
pub struct Followers {
    pub tally: Arc<Tally>,
    tasks: JoinSet<()>,
}

impl Followers {
    /// Opens a stream for each of `follows` to the server at `server` (a loopback address),
    /// the `n`th from [`address`]`(n)`.
    pub fn start(server: SocketAddr, follows: Vec<Follow>) -> Self {
        let tally = Arc::new(Tally {
            latency: Histogram::new(),
            delivered: 0.into(),
            missed: 0.into(),
            repeated: 0.into(),
            reconnects: 0.into(),
            refused: 0.into(),
            failed: 0.into(),
            connected: 0.into(),
            last: follows.iter().map(|f| AtomicI64::new(f.after)).collect(),
        });
        let connecting = Arc::new(Semaphore::new(CONNECTING));
        let mut tasks = JoinSet::new();
        for (n, follow) in follows.into_iter().enumerate() {
            let (tally, connecting) = (tally.clone(), connecting.clone());
            tasks.spawn(async move { follow_one(server, n, follow, tally, connecting).await });
        }
        Self { tally, tasks }
    }

    /// Waits until every follower's stream is open, for at most `within`.
    pub async fn connected(&mut self, within: Duration) -> Result<()> {
        let deadline = tokio::time::Instant::now() + within;
        let all = self.tally.last.len() as u64;
        while self.tally.connected.load(Ordering::Relaxed) < all {
            if tokio::time::Instant::now() > deadline {
                return Err(format!(
                    "{} of {all} event streams opened in {} s",
                    self.tally.connected.load(Ordering::Relaxed),
                    within.as_secs()
                )
                .into());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    }

    /// Waits until each follower has received post `through(n)` of its campaign, for at most
    /// `within`; how long it took (`None`: not all had it in time).
    pub async fn caught_up(&self, through: &[i64], within: Duration) -> Option<Duration> {
        let started = tokio::time::Instant::now();
        loop {
            let behind = self.tally.last.iter().zip(through).any(|(last, &head)| last.load(Ordering::Relaxed) < head);
            if !behind {
                return Some(started.elapsed());
            }
            if started.elapsed() > within {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Closes every stream.
    pub async fn stop(mut self) {
        self.tasks.shutdown().await;
    }
}

/// Microseconds since the Unix epoch, on the clock the server stamps posts with.
fn now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// One follower: opens its stream, reads it until the server ends it, and opens it again after
/// the last post received, as an `EventSource` does.
async fn follow_one(server: SocketAddr, n: usize, follow: Follow, tally: Arc<Tally>, connecting: Arc<Semaphore>) {
    let mut first = true;
    loop {
        let after = tally.last[n].load(Ordering::Relaxed);
        let permit = connecting.acquire().await;
        let stream = match open(server, address(n), &follow.campaign, after).await {
            Ok(Opened::Stream(stream, rest)) => {
                if first {
                    tally.connected.fetch_add(1, Ordering::Relaxed);
                    first = false;
                } else {
                    tally.reconnects.fetch_add(1, Ordering::Relaxed);
                }
                Some((stream, rest))
            }
            Ok(Opened::Refused) => {
                tally.refused.fetch_add(1, Ordering::Relaxed);
                None
            }
            Err(_) => {
                tally.failed.fetch_add(1, Ordering::Relaxed);
                None
            }
        };
        drop(permit);
        match stream {
            Some((stream, rest)) => {
                let _ = read_events(stream, rest, &tally, n).await;
            }
            None => tokio::time::sleep(REFUSED_WAIT).await,
        }
    }
}

enum Opened {
    /// The stream, and the bytes of its body read with its head.
    Stream(TcpStream, Vec<u8>),
    Refused,
}

async fn open(server: SocketAddr, from: Ipv4Addr, campaign: &str, after: i64) -> std::io::Result<Opened> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(from.into(), 0))?;
    let mut stream = socket.connect(server).await?;
    stream.set_nodelay(true)?;
    let request = format!(
        "GET /v1/campaigns/{campaign}/events HTTP/1.1\r\nHost: {server}\r\nAccept: text/event-stream\r\nLast-Event-ID: {after}\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await?;
    let mut buf = Vec::with_capacity(1024);
    loop {
        if stream.read_buf(&mut buf).await? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut headers);
        if let httparse::Status::Complete(head) = response.parse(&buf).map_err(std::io::Error::other)? {
            return Ok(match response.code {
                Some(200) => {
                    let chunked = response.headers.iter().any(|h| {
                        h.name.eq_ignore_ascii_case("transfer-encoding") && h.value.eq_ignore_ascii_case(b"chunked")
                    });
                    if !chunked {
                        return Err(std::io::Error::other("an event stream that is not chunked"));
                    }
                    Opened::Stream(stream, buf[head..].to_vec())
                }
                Some(429 | 503) => Opened::Refused,
                other => return Err(std::io::Error::other(format!("event stream answered {other:?}"))),
            });
        }
    }
}

async fn read_events(mut stream: TcpStream, mut raw: Vec<u8>, tally: &Tally, n: usize) -> std::io::Result<()> {
    let mut body = Chunked::default();
    let mut events = Events::default();
    let mut last = tally.last[n].load(Ordering::Relaxed);
    loop {
        let at = now_us();
        let ended = body.feed(&raw, |bytes| {
            events.feed(bytes, |event| {
                if event.kind != b"post" {
                    return;
                }
                let Some(seq) = event.id else { return };
                match seq.cmp(&(last + 1)) {
                    std::cmp::Ordering::Less => {
                        tally.repeated.fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                    std::cmp::Ordering::Greater => {
                        tally.missed.fetch_add((seq - last - 1) as u64, Ordering::Relaxed);
                    }
                    std::cmp::Ordering::Equal => {}
                }
                last = seq;
                tally.delivered.fetch_add(1, Ordering::Relaxed);
                if let Some(stamp_us) = event.stamp_us {
                    tally.latency.record(at.saturating_sub(stamp_us));
                }
            })
        });
        tally.last[n].store(last, Ordering::Relaxed);
        if ended {
            return Ok(());
        }
        raw.clear();
        raw.reserve(READ_BUFFER);
        if stream.read_buf(&mut raw).await? == 0 {
            return Ok(());
        }
    }
}

/// An HTTP/1.1 chunked body undone as it arrives.
#[derive(Default)]
struct Chunked {
    /// The part of a chunk-size line read so far.
    line: Vec<u8>,
    /// Bytes of the chunk still to come, and of the line end after it.
    data: usize,
    crlf: usize,
    ended: bool,
}

impl Chunked {
    /// Hands the body's bytes in `raw` to `out`; true once the last chunk came.
    fn feed(&mut self, mut raw: &[u8], mut out: impl FnMut(&[u8])) -> bool {
        while !raw.is_empty() && !self.ended {
            if self.data > 0 {
                let take = self.data.min(raw.len());
                out(&raw[..take]);
                self.data -= take;
                raw = &raw[take..];
                if self.data == 0 {
                    self.crlf = 2;
                }
            } else if self.crlf > 0 {
                let take = self.crlf.min(raw.len());
                self.crlf -= take;
                raw = &raw[take..];
            } else {
                match raw.iter().position(|&b| b == b'\n') {
                    Some(end) => {
                        self.line.extend_from_slice(&raw[..end]);
                        raw = &raw[end + 1..];
                        let text = String::from_utf8_lossy(&self.line);
                        let size = text.split(';').next().unwrap_or("").trim();
                        let size = usize::from_str_radix(size, 16).unwrap_or(0);
                        self.line.clear();
                        if size == 0 {
                            self.ended = true;
                        }
                        self.data = size;
                    }
                    None => {
                        self.line.extend_from_slice(raw);
                        raw = &[];
                    }
                }
            }
        }
        self.ended
    }
}

/// An event as the follower reads it: its name, its id, and the post's stamp (µs since the epoch).
#[derive(Default, Debug, PartialEq)]
struct Event {
    kind: Vec<u8>,
    id: Option<i64>,
    stamp_us: Option<u64>,
}

/// The lines of an event stream, put together into events.
#[derive(Default)]
struct Events {
    line: Vec<u8>,
    event: Event,
}

impl Events {
    fn feed(&mut self, mut bytes: &[u8], mut out: impl FnMut(&Event)) {
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            let line = if self.line.is_empty() {
                &bytes[..end]
            } else {
                self.line.extend_from_slice(&bytes[..end]);
                &self.line[..]
            };
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                if self.event.id.is_some() || !self.event.kind.is_empty() {
                    if self.event.kind.is_empty() {
                        self.event.kind = b"message".to_vec();
                    }
                    out(&self.event);
                }
                self.event = Event::default();
            } else if let Some(name) = line.strip_prefix(b"event:") {
                self.event.kind = trim(name).to_vec();
            } else if let Some(id) = line.strip_prefix(b"id:") {
                self.event.id = std::str::from_utf8(trim(id)).ok().and_then(|id| id.parse().ok());
            } else if let Some(data) = line.strip_prefix(b"data:") {
                if let Some(stamp) = stamp_us(data) {
                    self.event.stamp_us = Some(stamp);
                }
            }
            self.line.clear();
            bytes = &bytes[end + 1..];
        }
        self.line.extend_from_slice(bytes);
    }
}

fn trim(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b" ").unwrap_or(bytes)
}

/// The post's `"stamp":"2026-11-27T10:31:15.123Z"` in a `data:` line, in µs since the epoch.
fn stamp_us(data: &[u8]) -> Option<u64> {
    const KEY: &[u8] = b"\"stamp\":\"";
    let at = data.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
    let rest = &data[at..];
    let end = rest.iter().position(|&b| b == b'"')?;
    let stamp = chrono::DateTime::parse_from_rfc3339(std::str::from_utf8(&rest[..end]).ok()?).ok()?;
    u64::try_from(stamp.timestamp_micros()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_are_kept_within_two_percent() {
        let histogram = Histogram::new();
        for us in 1..=100_000u64 {
            histogram.record(us);
        }
        for (p, exact) in [(0.5, 50.0), (0.99, 99.0), (0.001, 0.1)] {
            let got = histogram.percentile_ms(p);
            assert!((got - exact).abs() / exact < 0.02, "p{p}: {got} ms, not {exact}");
        }
        assert_eq!(histogram.max_ms(), 100.0);
        for us in [0, 1, 127, 128, 129, 1000, 65_535, 1 << 40, u64::MAX] {
            let (low, high) = bounds(bucket(us));
            assert!(low <= us && us <= high, "{us} in bucket {} of {low}..={high}", bucket(us));
        }
    }

    #[test]
    fn followers_spread_over_loopback_addresses_four_each() {
        assert_eq!(address(0), Ipv4Addr::new(127, 1, 0, 1));
        assert_eq!(address(3), address(0));
        assert_eq!(address(4), Ipv4Addr::new(127, 1, 0, 2));
        let all: std::collections::HashSet<Ipv4Addr> = (0..20_000).map(address).collect();
        assert_eq!(all.len(), 20_000 / STREAMS_PER_ADDRESS);
        assert!(all.iter().all(|a| a.is_loopback() && a.octets()[3] != 0 && a.octets()[3] != 255));
    }

    /// A stream's events, however its chunks and reads cut them, come out whole and in order.
    #[test]
    fn events_are_read_across_chunks_and_reads() {
        let events = [
            ": keep-alive\n\n".to_owned(),
            "event: post\nid: 41\ndata: {\"campaign_id\":\"x\",\"seq\":41,\"stamp\":\"2026-11-27T10:31:15.123Z\",\"body\":{}}\n\n".to_owned(),
            "event: post\nid: 42\ndata: {\"seq\":42,\"stamp\":\"2026-11-27T10:31:15.124Z\"}\n\n".to_owned(),
            "event: page\nid: 42\nretry: 100\ndata: {\"next_after\":42}\n\n".to_owned(),
        ];
        let text: String = events.concat();
        // Chunks of 7 bytes, then the last chunk; read in pieces of 5 bytes.
        let mut wire = Vec::new();
        for chunk in text.as_bytes().chunks(7) {
            wire.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            wire.extend_from_slice(chunk);
            wire.extend_from_slice(b"\r\n");
        }
        wire.extend_from_slice(b"0\r\n\r\n");
        let (mut body, mut parser, mut seen) = (Chunked::default(), Events::default(), Vec::new());
        let mut ended = false;
        for read in wire.chunks(5) {
            // The last chunk's size line ends the body; only its line end may follow.
            if ended {
                assert!(b"\r\n".ends_with(read), "{read:?} after the last chunk");
                continue;
            }
            ended = body.feed(read, |bytes| {
                parser.feed(bytes, |e| seen.push((String::from_utf8_lossy(&e.kind).into_owned(), e.id, e.stamp_us)))
            });
        }
        assert!(ended);
        let stamp = 1_795_775_475_123_000;
        assert_eq!(
            seen,
            [
                ("post".to_owned(), Some(41), Some(stamp)),
                ("post".to_owned(), Some(42), Some(stamp + 1000)),
                ("page".to_owned(), Some(42), None)
            ]
        );
    }
}
