//! The principals a server has looked up by token, kept so that an authenticated request does
//! not read the principals table each time.
//!
//! A principal's standing changes only by a revocation or a new token; each forgets every
//! principal kept ([`PrincipalCache::forget_all`]), on the server that made the change at once
//! and on every other server using the same database as soon as it hears of it (PostgreSQL's
//! `NOTIFY`). A store that cannot hear other servers' changes while its listening connection is
//! down keeps nothing meanwhile ([`PrincipalCache::trust`]). A connection can also die without
//! a word (a firewall forgetting an idle connection, a partition): so nothing is kept longer
//! than [`MAX_AGE`], which bounds how long a change can go unheard whatever the connection does.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::Principal;

/// At most this many principals are kept; when full, all are forgotten and the cache fills
/// again with the tokens in use.
const KEPT: usize = 100_000;

/// How long a principal read is trusted before it is read again: a token in use costs one read
/// of the principals table per this, and a revocation a listening connection failed to carry
/// (silently) reaches this server within it.
pub const MAX_AGE: Duration = Duration::from_secs(5);

/// Token hash → principal, for tokens not revoked when they were read.
pub struct PrincipalCache {
    inner: Mutex<Inner>,
}

struct Inner {
    /// Moved on by every change that forgets: a lookup started before one keeps nothing.
    generation: u64,
    /// Whether every change of standing reaches this cache (false while a listening
    /// connection is down: changes may go unheard).
    trusted: bool,
    kept: HashMap<[u8; 32], (Principal, Instant)>,
}

/// Where a lookup started: see [`PrincipalCache::keep`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generation(u64);

impl PrincipalCache {
    /// An empty cache; `trusted`: whether it may keep principals from the start (a store whose
    /// changes are all its own), or only once [`PrincipalCache::trust`] says so.
    pub fn new(trusted: bool) -> Self {
        Self { inner: Mutex::new(Inner { generation: 0, trusted, kept: HashMap::new() }) }
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The principal kept for this token, if any.
    pub fn get(&self, token_hash: &[u8; 32]) -> Option<Principal> {
        let inner = self.inner();
        let (principal, read) = inner.kept.get(token_hash)?;
        (read.elapsed() < MAX_AGE).then(|| principal.clone())
    }

    /// Taken before reading the principals table, and handed to [`PrincipalCache::keep`].
    pub fn generation(&self) -> Generation {
        Generation(self.inner().generation)
    }

    /// Keeps what a lookup read, unless a change of standing came (or trust was lost) since
    /// `read_at`: what it read may be stale already.
    pub fn keep(&self, read_at: Generation, token_hash: [u8; 32], principal: Principal) {
        let mut inner = self.inner();
        if !inner.trusted || inner.generation != read_at.0 {
            return;
        }
        if inner.kept.len() >= KEPT {
            inner.kept.clear();
        }
        inner.kept.insert(token_hash, (principal, Instant::now()));
    }

    /// Forgets every principal kept: a token was revoked or replaced.
    pub fn forget_all(&self) {
        let mut inner = self.inner();
        inner.generation += 1;
        inner.kept.clear();
    }

    /// Whether every change of standing from now on will reach this cache. Either way what
    /// was kept is forgotten: changes may have gone unheard before.
    pub fn trust(&self, trusted: bool) {
        let mut inner = self.inner();
        inner.generation += 1;
        inner.kept.clear();
        inner.trusted = trusted;
    }

    pub fn is_trusted(&self) -> bool {
        self.inner().trusted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PrincipalKind;

    fn principal() -> Principal {
        Principal {
            id: uuid::Uuid::new_v4(),
            kind: PrincipalKind::Player,
            name: "Ann".into(),
            campaign_id: None,
            side: Some("blue".into()),
            created_by: None,
            created_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn a_principal_read_is_kept_until_a_change_of_standing() {
        let cache = PrincipalCache::new(true);
        let p = principal();
        cache.keep(cache.generation(), [1; 32], p.clone());
        assert_eq!(cache.get(&[1; 32]).map(|kept| kept.id), Some(p.id));
        cache.forget_all();
        assert!(cache.get(&[1; 32]).is_none());
    }

    #[test]
    fn a_lookup_that_began_before_a_revocation_keeps_nothing() {
        let cache = PrincipalCache::new(true);
        let read_at = cache.generation();
        cache.forget_all();
        cache.keep(read_at, [2; 32], principal());
        assert!(cache.get(&[2; 32]).is_none());
    }

    #[test]
    fn nothing_is_kept_while_changes_may_go_unheard() {
        let cache = PrincipalCache::new(false);
        cache.keep(cache.generation(), [3; 32], principal());
        assert!(cache.get(&[3; 32]).is_none());
        cache.trust(true);
        cache.keep(cache.generation(), [3; 32], principal());
        assert!(cache.get(&[3; 32]).is_some());
        cache.trust(false);
        assert!(cache.get(&[3; 32]).is_none());
    }
}
