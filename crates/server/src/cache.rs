//! What public reads remember between requests, in this process: the verified prefix of each
//! campaign's log (so a repeat audit checks only the posts added since), and results keyed by
//! the hash of the campaign's last post (the fairness report, the PNG map), which changes with
//! every post and so can never be stale.
//!
//! Nothing here is shared between replicas or survives a restart; a cold server just does the
//! work once again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;
use uuid::Uuid;

use crate::routes::audit::AuditCheckpoint;

/// Campaigns remembered per cache; beyond it, a cache starts over (a bound on memory, not a
/// policy: the work is redone at most once per campaign).
const MAX_CAMPAIGNS: usize = 10_000;

/// PNG renders at once; others wait (and time out with the request).
pub const MAP_RENDERS: usize = 2;

/// (campaign, what) → (head hash, bytes).
type ByHead = HashMap<(Uuid, &'static str), (String, Arc<Vec<u8>>)>;

pub struct Caches {
    audits: Mutex<HashMap<Uuid, Arc<AuditCheckpoint>>>,
    /// Per campaign, the last post up to which a per-post audit found every link whole, and
    /// that post's hash.
    chains: Mutex<HashMap<Uuid, (i64, String)>>,
    by_head: Mutex<ByHead>,
    /// Permits for rasterising maps.
    pub map_renders: Arc<Semaphore>,
}

impl Default for Caches {
    fn default() -> Self {
        Self {
            audits: Mutex::default(),
            chains: Mutex::default(),
            by_head: Mutex::default(),
            map_renders: Arc::new(Semaphore::new(MAP_RENDERS)),
        }
    }
}

fn insert<K: std::hash::Hash + Eq, V>(map: &mut HashMap<K, V>, key: K, value: V) {
    if map.len() >= MAX_CAMPAIGNS {
        map.clear();
    }
    map.insert(key, value);
}

impl Caches {
    /// The last verified prefix of a campaign's log.
    pub fn audit(&self, campaign: Uuid) -> Option<Arc<AuditCheckpoint>> {
        self.audits.lock().unwrap_or_else(|e| e.into_inner()).get(&campaign).cloned()
    }

    /// Remembers a verified prefix, unless a longer one is remembered already.
    pub fn remember_audit(&self, campaign: Uuid, checkpoint: AuditCheckpoint) {
        let mut audits = self.audits.lock().unwrap_or_else(|e| e.into_inner());
        if audits.get(&campaign).is_some_and(|known| known.seq() > checkpoint.seq()) {
            return;
        }
        insert(&mut audits, campaign, Arc::new(checkpoint));
    }

    /// Forgets a campaign's verified prefixes (a fresh audit starts from post 1).
    pub fn forget_audit(&self, campaign: Uuid) {
        self.audits.lock().unwrap_or_else(|e| e.into_inner()).remove(&campaign);
        self.chains.lock().unwrap_or_else(|e| e.into_inner()).remove(&campaign);
    }

    /// The last post through which the hash chain was found whole, and its hash.
    pub fn chain(&self, campaign: Uuid) -> Option<(i64, String)> {
        self.chains.lock().unwrap_or_else(|e| e.into_inner()).get(&campaign).cloned()
    }

    /// Remembers that the chain is whole through post `seq` (whose hash is `hash`), unless a
    /// longer whole prefix is remembered already.
    pub fn remember_chain(&self, campaign: Uuid, seq: i64, hash: String) {
        let mut chains = self.chains.lock().unwrap_or_else(|e| e.into_inner());
        if chains.get(&campaign).is_some_and(|(known, _)| *known >= seq) {
            return;
        }
        insert(&mut chains, campaign, (seq, hash));
    }

    /// A result (`what`: "fairness", "map.png") computed when the log's last post had `head`.
    pub fn at_head(&self, campaign: Uuid, what: &'static str, head: &str) -> Option<Arc<Vec<u8>>> {
        let map = self.by_head.lock().unwrap_or_else(|e| e.into_inner());
        map.get(&(campaign, what)).filter(|(h, _)| h == head).map(|(_, bytes)| bytes.clone())
    }

    pub fn remember_at_head(&self, campaign: Uuid, what: &'static str, head: &str, bytes: Vec<u8>) -> Arc<Vec<u8>> {
        let bytes = Arc::new(bytes);
        let mut map = self.by_head.lock().unwrap_or_else(|e| e.into_inner());
        insert(&mut map, (campaign, what), (head.to_owned(), bytes.clone()));
        bytes
    }
}
