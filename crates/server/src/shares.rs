//! Fair shares of what everyone needs: how many connections, event streams or exports one
//! client (an address, a token) holds at once, so that no one client can take them all.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::AppError;

/// How many of a thing each key holds, and the most one key may hold (0: no limit).
pub struct Shares<K: Hash + Eq + Clone> {
    most: usize,
    held: Mutex<HashMap<K, usize>>,
}

/// One share held by `key`, given back when dropped.
pub struct Share<K: Hash + Eq + Clone> {
    shares: Arc<Shares<K>>,
    key: K,
}

impl<K: Hash + Eq + Clone> Shares<K> {
    pub fn new(most: usize) -> Arc<Self> {
        Arc::new(Self { most, held: Mutex::new(HashMap::new()) })
    }

    /// The most one key may hold (0: no limit).
    pub fn most(&self) -> usize {
        self.most
    }

    /// One more share for `key`, unless it holds the most it may already.
    pub fn take(self: &Arc<Self>, key: K) -> Option<Share<K>> {
        // A poisoned map only means another task panicked mid-count; the counts are still counts.
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let count = held.entry(key.clone()).or_insert(0);
        if self.most > 0 && *count >= self.most {
            return None;
        }
        *count += 1;
        Some(Share { shares: self.clone(), key })
    }

    /// How many shares `key` holds now.
    pub fn held(&self, key: &K) -> usize {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).get(key).copied().unwrap_or(0)
    }
}

impl<K: Hash + Eq + Clone> Drop for Share<K> {
    fn drop(&mut self) {
        let mut held = self.shares.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = held.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                // Keys that hold nothing are forgotten, so the map stays as large as what is open.
                held.remove(&self.key);
            }
        }
    }
}

/// 503 problem+json with `Retry-After`: everything of a kind the whole server keeps is in use
/// (not this caller's doing, unlike a 429).
pub fn all_in_use(rule: &str, detail: String, retry_after_secs: u64) -> Response {
    let mut response = AppError::Client {
        status: StatusCode::SERVICE_UNAVAILABLE,
        field: Some("path".into()),
        rule: rule.into(),
        detail,
    }
    .into_response();
    response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(retry_after_secs));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_holds_at_most_its_share_and_gets_it_back_when_dropped() {
        let shares = Shares::new(2);
        let a = shares.take("a").expect("first");
        let b = shares.take("a").expect("second");
        assert!(shares.take("a").is_none(), "a third share");
        // Another key has shares of its own.
        let other = shares.take("b").expect("another key");
        assert_eq!(shares.held(&"a"), 2);
        drop(a);
        assert_eq!(shares.held(&"a"), 1);
        let again = shares.take("a").expect("a share given back is free again");
        drop((b, again, other));
        assert_eq!(shares.held(&"a"), 0);
        assert!(shares.held.lock().unwrap().is_empty(), "keys holding nothing are forgotten");
    }

    #[test]
    fn no_limit_counts_without_refusing() {
        let shares = Shares::new(0);
        let held: Vec<_> = (0..100).map(|_| shares.take(1u8).expect("no limit")).collect();
        assert_eq!(shares.held(&1), 100);
        drop(held);
        assert_eq!(shares.held(&1), 0);
    }
}
