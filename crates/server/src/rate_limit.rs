//! Requests per token per minute (per client address for callers without a token).
//!
//! A token bucket per caller: it holds up to a minute's worth of requests and refills at
//! `per_minute / 60` a second, so a caller may burst up to the limit and then goes on at the
//! steady rate. Past it, 429 problem+json with `Retry-After` (whole seconds until one request
//! is free again).
//!
//! Callers are keyed by the SHA-256 of their bearer token (the token itself is never kept), or
//! by the peer address. The map is split into shards, each behind its own mutex held only for
//! the arithmetic, so callers rarely contend; a shard that grows large drops buckets that have
//! refilled (their caller has been quiet long enough to be forgotten without changing anything).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use sha2::{Digest, Sha256};

use crate::error::AppError;

const SHARDS: usize = 16;
/// Past this many callers in one shard, full buckets are dropped.
const SHARD_PRUNE_AT: usize = 4096;

/// Who is counted: the hash of a bearer token, or an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallerKey {
    Token([u8; 32]),
    Address(std::net::IpAddr),
    /// No token and no known address (the router used without a listener, as in handler tests).
    Unknown,
}

impl CallerKey {
    fn shard(&self) -> usize {
        match self {
            CallerKey::Token(hash) => hash[0] as usize % SHARDS,
            CallerKey::Address(std::net::IpAddr::V4(a)) => a.octets()[3] as usize % SHARDS,
            CallerKey::Address(std::net::IpAddr::V6(a)) => a.octets()[15] as usize % SHARDS,
            CallerKey::Unknown => 0,
        }
    }

    /// The key of a request: its bearer token if it sends one, else its peer address.
    pub fn of(request: &Request) -> Self {
        let token = request
            .headers()
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty());
        if let Some(token) = token {
            return CallerKey::Token(Sha256::digest(token.as_bytes()).into());
        }
        match request.extensions().get::<ConnectInfo<SocketAddr>>() {
            Some(ConnectInfo(address)) => CallerKey::Address(address.ip()),
            None => CallerKey::Unknown,
        }
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
    shards: Vec<Mutex<HashMap<CallerKey, Bucket>>>,
}

impl RateLimiter {
    /// `per_minute` must be above 0 (0 means no limiter at all; see [`limit`]).
    pub fn new(per_minute: u32) -> Self {
        let capacity = f64::from(per_minute.max(1));
        Self {
            capacity,
            per_second: capacity / 60.0,
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    /// Takes one request from `key`'s bucket at `now`: `Ok` or the seconds to wait.
    pub fn check(&self, key: CallerKey, now: Instant) -> Result<(), u64> {
        // A poisoned shard only means another request panicked mid-arithmetic; the numbers in
        // it are still numbers.
        let mut shard = self.shards[key.shard()].lock().unwrap_or_else(|e| e.into_inner());
        if shard.len() >= SHARD_PRUNE_AT {
            let (capacity, per_second) = (self.capacity, self.per_second);
            shard.retain(|_, b| b.tokens + now.duration_since(b.at).as_secs_f64() * per_second < capacity);
        }
        let bucket = shard.entry(key).or_insert(Bucket { tokens: self.capacity, at: now });
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

async fn rate_limit(State(limiter): State<Arc<RateLimiter>>, request: Request, next: Next) -> Response {
    match limiter.check(CallerKey::of(&request), Instant::now()) {
        Ok(()) => next.run(request).await,
        Err(retry_after_secs) => AppError::TooManyRequests { retry_after_secs }.into_response(),
    }
}

/// Puts `router` behind a limit of `per_minute` requests per caller; 0 leaves it unlimited.
pub fn limit<S: Clone + Send + Sync + 'static>(router: Router<S>, per_minute: u32) -> Router<S> {
    if per_minute == 0 {
        return router;
    }
    router.layer(axum::middleware::from_fn_with_state(Arc::new(RateLimiter::new(per_minute)), rate_limit))
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
            let mut hash = [0u8; 32];
            hash[0] = 0;
            hash[1..9].copy_from_slice(&(i as u64).to_le_bytes());
            limiter.check(CallerKey::Token(hash), start).unwrap();
        }
        assert_eq!(limiter.shards[0].lock().unwrap().len(), SHARD_PRUNE_AT);
        // A minute later every one of them has refilled, and the next arrival prunes them.
        limiter.check(key(0), start + Duration::from_secs(61)).unwrap();
        assert_eq!(limiter.shards[0].lock().unwrap().len(), 1);
    }
}
