//! Limits on callers: requests per minute, expensive reads per minute, failed authentications
//! per minute.
//!
//! Every request passes [`guard`] before it is routed. A request carrying a bearer token is
//! authenticated there, once: an unknown token is answered 401 whatever it asked for, and counted
//! against the address it came from, so random tokens buy no fresh budget. Only an authenticated
//! token has a bucket of its own; everyone else (no token, or a bad one) shares the bucket of
//! their client address. An address that failed to authenticate `auth_failures_per_minute` times
//! gets 429 before any token it sends is looked up. Expensive reads (the whole-campaign audit, the
//! fairness report, `map.png`, the export, the campaign page) also take from a smaller bucket of their own.
//!
//! A token bucket per caller: it holds up to a minute's worth of requests and refills at
//! `per_minute / 60` a second, so a caller may burst up to the limit and then goes on at the
//! steady rate. Past it, 429 problem+json with `Retry-After` (whole seconds until one request
//! is free again).
//!
//! The client address is the peer's, unless the peer is one of `trusted_proxies`: then it is
//! the rightmost address of `Forwarded` (or `X-Forwarded-For`) that is not a trusted proxy.
//! IPv6 clients are counted by their /64, which one subscriber usually holds whole.
//!
//! Callers are keyed by the SHA-256 of their token (the token itself is never kept), or by
//! address. The map is split into shards, each behind its own mutex held only for the
//! arithmetic, so callers rarely contend; a shard that grows large drops buckets that have
//! refilled (their caller has been quiet long enough to be forgotten without changing anything).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Mutex;
use std::time::Instant;
use tracing::Instrument;

use axum::extract::Request;
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};

use crate::auth::{self, Caller};
use crate::config::Config;
use crate::error::AppError;
use crate::listener::Peer;
use crate::AppState;

const SHARDS: usize = 16;
/// Past this many callers in one shard, full buckets are dropped; when too few are full, the next
/// look waits until the shard has twice as many callers as it kept.
const SHARD_PRUNE_AT: usize = 4096;

/// Who is counted: the hash of an authenticated bearer token, or a client address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallerKey {
    Token([u8; 32]),
    /// An IPv4 address, or the /64 of an IPv6 one.
    Address(IpAddr),
    /// No known address (the router used without a listener, as in handler tests).
    Unknown,
}

impl CallerKey {
    fn shard(&self) -> usize {
        match self {
            CallerKey::Token(hash) => hash[0] as usize % SHARDS,
            CallerKey::Address(IpAddr::V4(a)) => a.octets()[3] as usize % SHARDS,
            CallerKey::Address(IpAddr::V6(a)) => a.octets()[7] as usize % SHARDS,
            CallerKey::Unknown => 0,
        }
    }

    /// The key of a client address: IPv4 as it is, IPv6 by its /64 (an IPv4-mapped IPv6
    /// address is the IPv4 address it maps).
    pub fn of_address(address: IpAddr) -> Self {
        match address.to_canonical() {
            IpAddr::V4(a) => CallerKey::Address(IpAddr::V4(a)),
            IpAddr::V6(a) => {
                let bits = u128::from(a) & !((1u128 << 64) - 1);
                CallerKey::Address(IpAddr::V6(Ipv6Addr::from(bits)))
            }
        }
    }
}

/// Networks whose forwarding headers are believed.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<(IpAddr, u8)>);

impl TrustedProxies {
    /// Reads `10.0.0.0/8`, `192.0.2.7`, `2001:db8::/32`, `::1` …
    pub fn parse(entries: &[String]) -> Result<Self, String> {
        let mut networks = Vec::new();
        for entry in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
            let bad = || format!("trusted_proxies: {entry:?} is not an address or an address/prefix");
            let (address, prefix) = match entry.split_once('/') {
                Some((a, p)) => (a, Some(p.parse::<u8>().map_err(|_| bad())?)),
                None => (entry, None),
            };
            let address: IpAddr = address.parse().map_err(|_| bad())?;
            let width = if address.is_ipv4() { 32 } else { 128 };
            let prefix = prefix.unwrap_or(width);
            if prefix > width {
                return Err(bad());
            }
            networks.push((address.to_canonical(), prefix));
        }
        Ok(Self(networks))
    }

    pub fn contains(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        self.0.iter().any(|&(network, prefix)| match (network, address) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
                u32::from(n) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
                u128::from(n) & mask == u128::from(a) & mask
            }
            _ => false,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// One address of a forwarding header: `192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]:4711`,
/// `2001:db8::1`, optionally in quotes. `unknown` and obfuscated names read as `None`.
fn forwarded_address(text: &str) -> Option<IpAddr> {
    let text = text.trim().trim_matches('"');
    if let Ok(address) = text.parse::<IpAddr>() {
        return Some(address);
    }
    if let Ok(socket) = text.parse::<SocketAddr>() {
        return Some(socket.ip());
    }
    text.strip_prefix('[').and_then(|t| t.split_once(']')).and_then(|(a, _)| a.parse().ok())
}

/// The hops a request says it passed, leftmost (the original client) first; `None` for a hop
/// that cannot be read. `Forwarded` (RFC 7239) when sent, else `X-Forwarded-For`.
fn forwarded_chain(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let forwarded: Vec<&str> = headers.get_all("forwarded").iter().filter_map(|v| v.to_str().ok()).collect();
    if !forwarded.is_empty() {
        return forwarded
            .iter()
            .flat_map(|line| line.split(','))
            .map(|element| {
                element.split(';').find_map(|pair| {
                    let (key, value) = pair.split_once('=')?;
                    key.trim().eq_ignore_ascii_case("for").then(|| forwarded_address(value))?
                })
            })
            .collect();
    }
    headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|line| line.split(','))
        .map(forwarded_address)
        .collect()
}

/// The client's address: the peer's, or, when the peer is a trusted proxy, the rightmost
/// forwarded address that is not one (what the nearest untrusted hop claimed is all that can be
/// believed). A hop that cannot be read stops the walk at the trusted proxy that reported it.
pub fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &TrustedProxies) -> IpAddr {
    let mut client = peer.to_canonical();
    if trusted.is_empty() || !trusted.contains(client) {
        return client;
    }
    for hop in forwarded_chain(headers).into_iter().rev() {
        match hop {
            Some(address) if trusted.contains(address) => client = address.to_canonical(),
            Some(address) => return address.to_canonical(),
            None => return client,
        }
    }
    client
}

/// Reads that cost far more than a request should: whole-log walks (the whole-campaign audit,
/// the fairness report, the export, a per-post audit `?fresh=true` from post 1), picture
/// rendering and the campaign page. An event stream is counted by its handler, which knows how
/// far behind the log's end it starts (`Limits::take_expensive`).
pub fn is_expensive_read(method: &Method, uri: &axum::http::Uri) -> bool {
    if method != Method::GET && method != Method::HEAD {
        return false;
    }
    let path = uri.path();
    // Every expensive read is a campaign's; the rest (most requests) are told apart here
    // without taking the path to pieces.
    if !path.starts_with("/v1/campaigns/") && !path.starts_with("/campaigns/") {
        return false;
    }
    let fresh = uri.query().is_some_and(|q| q.split('&').any(|pair| pair == "fresh=true"));
    let mut pieces = [""; 8];
    let mut count = 0;
    for segment in path.split('/') {
        if count == pieces.len() {
            return false;
        }
        pieces[count] = segment;
        count += 1;
    }
    match &pieces[..count] {
        ["", "v1", "campaigns", _, "audit" | "fairness" | "map.png" | "export"]
        | ["", "campaigns", _]
        | ["", "campaigns", _, "audit" | "fairness"] => true,
        ["", "v1", "campaigns", _, "posts", _, "audit"] | ["", "campaigns", _, "posts", _, "audit"] => fresh,
        _ => false,
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// The buckets of every caller.
pub struct RateLimiter {
    capacity: f64,
    per_second: f64,
    shards: Vec<Mutex<Shard>>,
}

/// One shard's callers, and how many it holds before its full buckets are looked for again.
struct Shard {
    buckets: HashMap<CallerKey, Bucket>,
    /// At least [`SHARD_PRUNE_AT`], and twice what the last look kept: a shard full of callers
    /// still counting (many addresses, each asking) is looked over once for as many arrivals as
    /// it holds, not on every request.
    prune_at: usize,
}

impl RateLimiter {
    /// `per_minute` must be above 0 (0 means no limiter at all; see [`limit`]).
    pub fn new(per_minute: u32) -> Self {
        let capacity = f64::from(per_minute.max(1));
        Self {
            capacity,
            per_second: capacity / 60.0,
            shards: (0..SHARDS)
                .map(|_| Mutex::new(Shard { buckets: HashMap::new(), prune_at: SHARD_PRUNE_AT }))
                .collect(),
        }
    }

    /// Whether `key` has a request left at `now`, taking none: `Ok` or the seconds to wait.
    pub fn peek(&self, key: CallerKey, now: Instant) -> Result<(), u64> {
        let shard = self.shards[key.shard()].lock().unwrap_or_else(|e| e.into_inner());
        match shard.buckets.get(&key) {
            Some(bucket) => {
                let refilled = bucket.tokens + now.saturating_duration_since(bucket.at).as_secs_f64() * self.per_second;
                if refilled >= 1.0 {
                    Ok(())
                } else {
                    Err((((1.0 - refilled) / self.per_second).ceil() as u64).max(1))
                }
            }
            None => Ok(()),
        }
    }

    /// Takes one request from `key`'s bucket at `now`: `Ok` or the seconds to wait.
    pub fn check(&self, key: CallerKey, now: Instant) -> Result<(), u64> {
        // A poisoned shard only means another request panicked mid-arithmetic; the numbers in
        // it are still numbers.
        let mut shard = self.shards[key.shard()].lock().unwrap_or_else(|e| e.into_inner());
        if shard.buckets.len() >= shard.prune_at {
            let (capacity, per_second) = (self.capacity, self.per_second);
            shard.buckets.retain(|_, b| b.tokens + now.duration_since(b.at).as_secs_f64() * per_second < capacity);
            shard.prune_at = (shard.buckets.len() * 2).max(SHARD_PRUNE_AT);
        }
        let bucket = shard.buckets.entry(key).or_insert(Bucket { tokens: self.capacity, at: now });
        let refilled = bucket.tokens + now.saturating_duration_since(bucket.at).as_secs_f64() * self.per_second;
        bucket.tokens = refilled.min(self.capacity);
        bucket.at = now.max(bucket.at);
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            let wait = (1.0 - bucket.tokens) / self.per_second;
            Err((wait.ceil() as u64).max(1))
        }
    }
}

/// The limiters of one service.
pub struct Limits {
    requests: Option<RateLimiter>,
    expensive_reads: Option<RateLimiter>,
    auth_failures: Option<RateLimiter>,
    trusted_proxies: TrustedProxies,
}

impl Limits {
    pub fn from_config(config: &Config) -> Result<Self, String> {
        let limiter = |per_minute: u32| (per_minute > 0).then(|| RateLimiter::new(per_minute));
        Ok(Self {
            requests: limiter(config.rate_limit_per_minute),
            expensive_reads: limiter(config.expensive_reads_per_minute),
            auth_failures: limiter(config.auth_failures_per_minute),
            trusted_proxies: TrustedProxies::parse(&config.trusted_proxies)?,
        })
    }

    fn take(limiter: &Option<RateLimiter>, key: CallerKey, now: Instant) -> Result<(), u64> {
        limiter.as_ref().map_or(Ok(()), |l| l.check(key, now))
    }

    /// Counts an expensive read that only its handler can tell is one (an event stream that
    /// starts far behind the log's end): the caller as the guard counted it.
    pub fn take_expensive(&self, key: CallerKey) -> Result<(), AppError> {
        Limits::take(&self.expensive_reads, key, Instant::now()).map_err(expensive_refusal)
    }
}

fn expensive_refusal(retry_after_secs: u64) -> AppError {
    AppError::TooManyRequests {
        field: "path".into(),
        rule: "rate_limit.expensive_reads".into(),
        detail: format!(
            "too many audits, fairness reports, exports, map pictures, campaign pages or event streams read from far back from this caller; try again in {retry_after_secs} s"
        ),
        retry_after_secs,
    }
}

/// Authenticates the request's token (if any) and applies the limits: `Err` is the refusal to
/// answer instead. The handler's [`Caller`] extractor then reads the caller found here. The
/// router's one layer around every route (`crate::app`) calls [`guard_anonymous`] as a request
/// arrives, and this, inside the time limit, for a request with a token.
pub async fn guard(state: &AppState, request: &mut Request) -> Result<(), Response> {
    let now = Instant::now();
    if let Some(done) = guard_anonymous(state, request, now) {
        return done;
    }
    let limits = &state.limits;
    let client = client_key(state, request);
    if let Some(failures) = &limits.auth_failures {
        if let Err(retry_after_secs) = failures.peek(client, now) {
            // Refused before any lookup, and still counted against the address.
            let _ = Limits::take(&limits.requests, client, now);
            return Err(AppError::TooManyRequests {
                field: "Authorization".into(),
                rule: "rate_limit.auth_failures".into(),
                detail: format!(
                    "too many requests with tokens that are not known from this address; try again in {retry_after_secs} s"
                ),
                retry_after_secs,
            }
            .into_response());
        }
    }
    match auth::authenticate(request.headers(), state).instrument(adjutant_store::append::step("auth")).await {
        Ok((caller, hash)) => admit(state, request, caller, CallerKey::Token(hash), now).map_or(Ok(()), Err),
        Err(refused) => {
            if matches!(refused, AppError::Unauthorized(_)) {
                let _ = Limits::take(&limits.auth_failures, client, now);
                if let Err(retry_after_secs) = Limits::take(&limits.requests, client, now) {
                    return Err(AppError::rate_limited(retry_after_secs).into_response());
                }
            }
            Err(refused.into_response())
        }
    }
}

/// [`guard`] for a request without a token, which needs nothing looked up: done at once. `None`
/// for a request with a token.
pub fn guard_anonymous(state: &AppState, request: &mut Request, now: Instant) -> Option<Result<(), Response>> {
    if request.headers().contains_key(AUTHORIZATION) {
        return None;
    }
    let client = client_key(state, request);
    Some(admit(state, request, Caller::Anonymous, client, now).map_or(Ok(()), Err))
}

/// The client a request without a token counts as: its address (as a trusted proxy forwards
/// it), an IPv6 address by its /64.
fn client_key(state: &AppState, request: &Request) -> CallerKey {
    client_key_of(state, request.extensions().get::<Peer>(), request.headers())
}

/// [`client_key`] of a request's peer (as the listener tells it) and headers.
pub fn client_key_of(state: &AppState, peer: Option<&Peer>, headers: &HeaderMap) -> CallerKey {
    match peer {
        Some(peer) => CallerKey::of_address(client_address(peer.address.ip(), headers, &state.limits.trusted_proxies)),
        None => CallerKey::Unknown,
    }
}

/// What the guard found of a request with a token, for its handler: who holds the token (the
/// [`Caller`] extractor's answer) and whom the request was counted as, the token's hash.
#[derive(Debug, Clone)]
pub struct Admitted {
    pub caller: Caller,
    pub key: CallerKey,
}

/// The limits of a caller known (counted as `key`): the refusal, if it is over one; otherwise
/// a caller with a token is left for the handler, with its key, as one value in the request's
/// extensions ([`Admitted`]). One without a token leaves none: a handler that counts it again
/// finds its key from its address ([`client_key_of`]), as the guard did.
fn admit(state: &AppState, request: &mut Request, caller: Caller, key: CallerKey, now: Instant) -> Option<Response> {
    let limits = &state.limits;
    if let Err(retry_after_secs) = Limits::take(&limits.requests, key, now) {
        return Some(AppError::rate_limited(retry_after_secs).into_response());
    }
    if is_expensive_read(request.method(), request.uri()) {
        if let Err(retry_after_secs) = Limits::take(&limits.expensive_reads, key, now) {
            return Some(expensive_refusal(retry_after_secs).into_response());
        }
    }
    // An anonymous caller is one without the header, which the extractor answers by itself.
    if !matches!(caller, Caller::Anonymous) {
        request.extensions_mut().insert(Admitted { caller, key });
    }
    None
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn key(n: u8) -> CallerKey {
        CallerKey::Token([n; 32])
    }

    #[test]
    fn a_caller_may_burst_to_the_limit_then_waits_for_the_refill() {
        let limiter = RateLimiter::new(60); // one a second
        let start = Instant::now();
        for _ in 0..60 {
            assert_eq!(limiter.check(key(1), start), Ok(()));
        }
        assert_eq!(limiter.check(key(1), start), Err(1));
        // Another caller has a bucket of its own.
        assert_eq!(limiter.check(key(2), start), Ok(()));
        // One second later, one request is free again, and only one.
        let later = start + Duration::from_secs(1);
        assert_eq!(limiter.check(key(1), later), Ok(()));
        assert_eq!(limiter.check(key(1), later), Err(1));
    }

    #[test]
    fn retry_after_counts_the_seconds_to_the_next_free_request() {
        let limiter = RateLimiter::new(6); // one every ten seconds
        let start = Instant::now();
        for _ in 0..6 {
            assert!(limiter.check(key(3), start).is_ok());
        }
        assert_eq!(limiter.check(key(3), start), Err(10));
        assert_eq!(limiter.check(key(3), start + Duration::from_secs(4)), Err(6));
        assert_eq!(limiter.check(key(3), start + Duration::from_secs(10)), Ok(()));
    }

    #[test]
    fn quiet_callers_are_forgotten_when_a_shard_fills() {
        let limiter = RateLimiter::new(60);
        let start = Instant::now();
        // Same shard (first byte decides): 0, 16, 32, … and enough of them to prune.
        for i in 0..SHARD_PRUNE_AT {
            limiter.check(shard_0_caller(i), start).unwrap();
        }
        assert_eq!(limiter.shards[0].lock().unwrap().buckets.len(), SHARD_PRUNE_AT);
        // A minute later every one of them has refilled, and the next arrival prunes them.
        limiter.check(key(0), start + Duration::from_secs(61)).unwrap();
        assert_eq!(limiter.shards[0].lock().unwrap().buckets.len(), 1);
    }

    /// Callers of one shard, each a key of its own: `CallerKey::Token` with the first byte 0.
    fn shard_0_caller(i: usize) -> CallerKey {
        let mut hash = [0u8; 32];
        hash[1..9].copy_from_slice(&(i as u64).to_le_bytes());
        CallerKey::Token(hash)
    }

    #[test]
    fn a_shard_full_of_callers_still_counting_is_looked_over_once_per_doubling() {
        let limiter = RateLimiter::new(60);
        let start = Instant::now();
        let len = |limiter: &RateLimiter| limiter.shards[0].lock().unwrap().buckets.len();
        // A shard's worth of callers, each having just asked: none is full.
        for i in 0..SHARD_PRUNE_AT {
            limiter.check(shard_0_caller(i), start).unwrap();
        }
        // The next arrival looks for full buckets, finds none and keeps them all; the next look
        // waits for twice as many callers.
        limiter.check(shard_0_caller(SHARD_PRUNE_AT), start).unwrap();
        assert_eq!(len(&limiter), SHARD_PRUNE_AT + 1);
        let next = limiter.shards[0].lock().unwrap().prune_at;
        assert_eq!(next, 2 * SHARD_PRUNE_AT);
        // A minute on, the first callers' buckets are full again, but no arrival looks for them
        // until the shard holds `next` callers.
        let later = start + Duration::from_secs(61);
        for i in SHARD_PRUNE_AT + 1..next {
            limiter.check(shard_0_caller(i), later).unwrap();
        }
        assert_eq!(len(&limiter), next);
        // The arrival at `next` looks: the refilled callers go, the ones still counting stay.
        limiter.check(shard_0_caller(next), later).unwrap();
        assert_eq!(len(&limiter), next - (SHARD_PRUNE_AT + 1) + 1);
        assert_eq!(limiter.shards[0].lock().unwrap().prune_at, SHARD_PRUNE_AT.max(2 * (next - SHARD_PRUNE_AT - 1)));
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
        }
        map
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn ipv6_clients_are_counted_by_their_slash_64() {
        let a = CallerKey::of_address(ip("2001:db8:1:2:aaaa::1"));
        let b = CallerKey::of_address(ip("2001:db8:1:2:ffff:ffff:ffff:ffff"));
        let other = CallerKey::of_address(ip("2001:db8:1:3::1"));
        assert_eq!(a, b);
        assert_eq!(a, CallerKey::Address(ip("2001:db8:1:2::")));
        assert_ne!(a, other);
        // An IPv4 address is its own key, however it is written.
        assert_eq!(CallerKey::of_address(ip("::ffff:192.0.2.7")), CallerKey::of_address(ip("192.0.2.7")));
        assert_ne!(CallerKey::of_address(ip("192.0.2.7")), CallerKey::of_address(ip("192.0.2.8")));
        // One /64 shares one bucket.
        let limiter = RateLimiter::new(2);
        let now = Instant::now();
        assert!(limiter.check(CallerKey::of_address(ip("2001:db8::1")), now).is_ok());
        assert!(limiter.check(CallerKey::of_address(ip("2001:db8::2")), now).is_ok());
        assert!(limiter.check(CallerKey::of_address(ip("2001:db8::3")), now).is_err());
    }

    #[test]
    fn forwarding_headers_are_ignored_unless_the_peer_is_a_trusted_proxy() {
        let spoof = headers(&[("x-forwarded-for", "203.0.113.9"), ("forwarded", "for=203.0.113.10")]);
        let nobody = TrustedProxies::default();
        assert_eq!(client_address(ip("198.51.100.1"), &spoof, &nobody), ip("198.51.100.1"));
        let proxy = TrustedProxies::parse(&["10.0.0.0/8".into(), "::1".into()]).unwrap();
        // Not from the proxy: ignored.
        assert_eq!(client_address(ip("198.51.100.1"), &spoof, &proxy), ip("198.51.100.1"));
        // From the proxy: the rightmost address that is not a trusted proxy.
        let chain = headers(&[("x-forwarded-for", "1.2.3.4, 203.0.113.9, 10.1.1.1")]);
        assert_eq!(client_address(ip("10.0.0.2"), &chain, &proxy), ip("203.0.113.9"));
        assert_eq!(client_address(ip("::1"), &chain, &proxy), ip("203.0.113.9"));
        let forwarded = headers(&[("forwarded", r#"for=1.2.3.4, for="[2001:db8::9]:4711";proto=https"#)]);
        assert_eq!(client_address(ip("10.0.0.2"), &forwarded, &proxy), ip("2001:db8::9"));
        // Nothing forwarded, or nothing readable: the proxy itself.
        assert_eq!(client_address(ip("10.0.0.2"), &HeaderMap::new(), &proxy), ip("10.0.0.2"));
        let garbage = headers(&[("x-forwarded-for", "1.2.3.4, nonsense")]);
        assert_eq!(client_address(ip("10.0.0.2"), &garbage, &proxy), ip("10.0.0.2"));
    }

    #[test]
    fn trusted_proxies_are_addresses_or_networks() {
        let proxies = TrustedProxies::parse(&["192.0.2.0/24".into(), "2001:db8::/32".into(), " ".into()]).unwrap();
        assert!(proxies.contains(ip("192.0.2.200")));
        assert!(proxies.contains(ip("::ffff:192.0.2.1")));
        assert!(!proxies.contains(ip("192.0.3.1")));
        assert!(proxies.contains(ip("2001:db8:ffff::1")));
        assert!(!proxies.contains(ip("2001:db9::1")));
        assert!(TrustedProxies::parse(&["0.0.0.0/0".into()]).unwrap().contains(ip("8.8.8.8")));
        for bad in ["10.0.0.0/33", "not-an-address", "10.0.0.0/x"] {
            assert!(TrustedProxies::parse(&[bad.into()]).is_err(), "{bad}");
        }
    }

    #[test]
    fn expensive_reads_are_the_whole_log_walks_and_pictures() {
        let expensive = |method: &Method, uri: &str| is_expensive_read(method, &uri.parse().unwrap());
        for uri in [
            "/v1/campaigns/x/audit",
            "/v1/campaigns/x/audit?fresh=false",
            "/v1/campaigns/x/fairness",
            "/v1/campaigns/x/map.png",
            "/v1/campaigns/x/export",
            "/campaigns/x",
            "/campaigns/x/audit",
            "/campaigns/x/fairness",
            "/v1/campaigns/x/posts/7/audit?fresh=true",
            "/campaigns/x/posts/7/audit?fresh=true",
        ] {
            assert!(expensive(&Method::GET, uri), "{uri}");
        }
        for uri in [
            "/v1/campaigns/x",
            "/v1/campaigns/x/posts/1/audit",
            "/v1/campaigns/x/posts/1/audit?fresh=false",
            "/campaigns/x/posts/1/audit",
            "/v1/campaigns/x/map.svg",
            "/v1/campaigns/x/events",
            "/campaigns",
            "/v1/tools/result-number?time=9:51:45",
            "/v1/campaigns/x/posts/7/audit/more/than/any/read?fresh=true",
        ] {
            assert!(!expensive(&Method::GET, uri), "{uri}");
        }
        assert!(!expensive(&Method::POST, "/v1/campaigns/x/audit"));
    }

    #[test]
    fn peeking_takes_nothing() {
        let limiter = RateLimiter::new(1);
        let now = Instant::now();
        assert!(limiter.peek(key(9), now).is_ok());
        assert!(limiter.peek(key(9), now).is_ok());
        assert!(limiter.check(key(9), now).is_ok());
        assert_eq!(limiter.peek(key(9), now), Err(60));
    }
}
