//! What public reads remember between requests, in this process: the verified prefix of each
//! campaign's log (so a repeat audit checks only the posts added since), and results keyed by
//! the hash of the campaign's last post (the fairness report, the PNG map), which changes with
//! every post and so can never be stale; and each campaign a post went to, as loaded from its
//! creation record, which never changes.
//!
//! Nothing here is shared between replicas or survives a restart; a cold server just does the
//! work once again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use uuid::Uuid;

use crate::campaign::LoadedCampaign;
use crate::log::audit::AuditCheckpoint;

/// Campaigns remembered per cache; beyond it, a cache starts over (a bound on memory, not a
/// policy: the work is redone at most once per campaign).
const MAX_CAMPAIGNS: usize = 10_000;

/// Campaigns whose creation record is remembered, loaded; beyond it, the cache starts over. A
/// loaded campaign holds its scenario, so this bound is smaller than the others.
const MAX_LOADED: usize = 2_048;

/// PNG renders at once; others wait (and time out with the request).
pub const MAP_RENDERS: usize = 2;

/// Whole-campaign audits with no verified prefix to go on from (cold, or `?fresh=true`), and
/// per-post audits that walk a long chain from post 1, at once: one already works on every
/// core, so others wait (and time out with the request) rather than share the cores and the
/// memory. One that waited goes on from the prefix verified meanwhile, unless it asked to be
/// fresh.
pub const COLD_AUDITS: usize = 1;

/// A per-post audit that walks the chain from post 1 through at most this many posts costs
/// about one page of the whole-campaign audit, and takes no permit; a longer walk takes one of
/// [`COLD_AUDITS`].
pub const SHORT_WALK: i64 = 1000;

/// (campaign, what) → (head hash, bytes).
type ByHead = HashMap<(Uuid, &'static str), (String, Arc<Vec<u8>>)>;

pub struct Caches {
    /// Campaigns as loaded from their creation record, which never changes (the database
    /// refuses an update): safe to keep, in every replica, for as long as the process lives.
    campaigns: Mutex<HashMap<Uuid, Arc<LoadedCampaign>>>,
    audits: Mutex<HashMap<Uuid, Arc<AuditCheckpoint>>>,
    /// Per campaign, the last post up to which a per-post audit found every link whole, and
    /// that post's hash.
    chains: Mutex<HashMap<Uuid, (i64, String)>>,
    by_head: Mutex<ByHead>,
    /// Permits for rasterising maps.
    pub map_renders: Arc<Semaphore>,
    /// Permits for replaying a log from post 1 ([`COLD_AUDITS`]).
    cold_audits: Arc<Semaphore>,
}

impl Default for Caches {
    fn default() -> Self {
        Self {
            campaigns: Mutex::default(),
            audits: Mutex::default(),
            chains: Mutex::default(),
            by_head: Mutex::default(),
            map_renders: Arc::new(Semaphore::new(MAP_RENDERS)),
            cold_audits: Arc::new(Semaphore::new(COLD_AUDITS)),
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
    /// A campaign loaded before.
    pub fn campaign(&self, id: Uuid) -> Option<Arc<LoadedCampaign>> {
        self.campaigns.lock().unwrap_or_else(|e| e.into_inner()).get(&id).cloned()
    }

    pub fn remember_campaign(&self, campaign: Arc<LoadedCampaign>) {
        let mut campaigns = self.campaigns.lock().unwrap_or_else(|e| e.into_inner());
        if campaigns.len() >= MAX_LOADED {
            campaigns.clear();
        }
        campaigns.insert(campaign.campaign.id, campaign);
    }

    /// The turn of a replay from post 1 ([`COLD_AUDITS`]), held until the permit is dropped.
    pub async fn cold_audit_turn(&self) -> OwnedSemaphorePermit {
        self.cold_audits.clone().acquire_owned().await.expect("never closed")
    }

    /// With no verified prefix (`known` is none), waits for the turn of a replay from post 1;
    /// then, unless the audit is `fresh`, takes the prefix `verified` meanwhile. None: there was
    /// a prefix, and no turn is needed.
    pub async fn turn_unless_known<T>(
        &self,
        known: &mut Option<T>,
        fresh: bool,
        verified: impl FnOnce() -> Option<T>,
    ) -> Option<OwnedSemaphorePermit> {
        if known.is_some() {
            return None;
        }
        let turn = self.cold_audit_turn().await;
        if !fresh {
            *known = verified();
        }
        Some(turn)
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_is_served_for_its_head_only() {
        let caches = Caches::default();
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        assert!(caches.at_head(a, "fairness", "h1").is_none());
        let kept = caches.remember_at_head(a, "fairness", "h1", b"report 1".to_vec());
        let again = caches.at_head(a, "fairness", "h1").expect("remembered");
        assert!(Arc::ptr_eq(&kept, &again), "the same bytes, not a copy made again");
        // Another head (a new post), another result, another campaign: nothing remembered.
        assert!(caches.at_head(a, "fairness", "h2").is_none());
        assert!(caches.at_head(a, "map.png", "h1").is_none());
        assert!(caches.at_head(b, "fairness", "h1").is_none());
        // The new head's result replaces the old one.
        caches.remember_at_head(a, "fairness", "h2", b"report 2".to_vec());
        assert_eq!(caches.at_head(a, "fairness", "h2").as_deref(), Some(&b"report 2".to_vec()));
        assert!(caches.at_head(a, "fairness", "h1").is_none());
    }

    #[test]
    fn memory_is_bounded() {
        let caches = Caches::default();
        for _ in 0..MAX_CAMPAIGNS + 5 {
            caches.remember_at_head(Uuid::new_v4(), "map.png", "h", vec![0; 4]);
            caches.remember_chain(Uuid::new_v4(), 1, "h".into());
        }
        assert!(caches.by_head.lock().unwrap().len() <= MAX_CAMPAIGNS);
        assert!(caches.chains.lock().unwrap().len() <= MAX_CAMPAIGNS);
    }

    #[test]
    fn the_longer_chain_prefix_is_kept() {
        let caches = Caches::default();
        let id = Uuid::new_v4();
        caches.remember_chain(id, 10, "h10".into());
        caches.remember_chain(id, 4, "h4".into());
        assert_eq!(caches.chain(id), Some((10, "h10".to_owned())));
        caches.remember_chain(id, 12, "h12".into());
        assert_eq!(caches.chain(id), Some((12, "h12".to_owned())));
    }

    /// At most `MAP_RENDERS` renders hold a permit at once; the next waits until one ends.
    #[tokio::test]
    async fn map_renders_are_bounded() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::time::Duration;
        let caches = Arc::new(Caches::default());
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let mut renders = Vec::new();
        for _ in 0..4 * MAP_RENDERS {
            let (caches, running, most) = (caches.clone(), running.clone(), most.clone());
            renders.push(tokio::spawn(async move {
                let permit = caches.map_renders.clone().acquire_owned().await.expect("open");
                tokio::task::spawn_blocking(move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    running.fetch_sub(1, Ordering::SeqCst);
                    drop(permit);
                })
                .await
                .expect("render");
            }));
        }
        for render in renders {
            render.await.expect("task");
        }
        assert_eq!(most.load(Ordering::SeqCst), MAP_RENDERS);
    }
}
