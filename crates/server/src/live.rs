//! Who is waiting for a campaign's next post, and the signal that wakes them.
//!
//! Each campaign with followers (its event streams) has a `watch` of the last post this server
//! knows of. The append publishes to it after the commit; on PostgreSQL, the posts other
//! servers commit arrive through the store's `LISTEN` ([`relay`]) and are published the same
//! way. A follower only learns "there is something after N", and takes the posts after its own
//! last one from the campaign's [`Recent`] window: the first follower to wake reads them from
//! the store and renders them once, for all the campaign's followers on this server, so the
//! store reads and the rendering a post costs do not grow with its followers. A follower behind
//! the window (or catching up when it connects) reads from the store as any read does. Either
//! way it takes posts by sequence number, so a signal missed or repeated never loses or repeats
//! a post.
//!
//! The same publication tells the webhook deliverer which campaigns were posted to
//! ([`Live::deliveries`]), so it starts on a new outcome at once instead of at its next look.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use adjutant_store::{Heard, Store};
use tokio::sync::watch;
use uuid::Uuid;

/// What an open, idle event stream costs the server, in bytes: its connection (hyper's buffers,
/// the socket), its task and its place in the campaign's signal. Measured by opening 5,000 and
/// then 9,000 idle streams against the server (debug build, SQLite) and reading its VmRSS from
/// `/proc/<pid>/status` before and after: 47,780 → 165,896 kB and 47,592 → 264,036 kB, 24,190
/// and 24,627 bytes a stream (docs/hosting.md).
pub const IDLE_STREAM_BYTES: usize = 24 * 1024;

/// The posts a campaign's window keeps, at most: a follower further behind reads the store.
pub const RECENT_POSTS: usize = 1024;
/// The bytes of rendered posts a campaign's window keeps, at most.
pub const RECENT_BYTES: usize = 4 * 1024 * 1024;

/// The latest posts of a followed campaign, rendered as its event streams send them (each
/// post's `data`), with no gap: the posts after `start` through `last`.
#[derive(Debug, Default)]
pub struct Recent {
    /// None until a follower that caught up starts the window at its own position.
    start: Option<i64>,
    posts: std::collections::VecDeque<(i64, Arc<str>)>,
    bytes: usize,
    /// The last wake-up for every campaign ([`Live::wake_all`]) the window has looked at the
    /// store after: such a wake-up tells of no post, so the window looks whatever it holds.
    pub looked: u64,
}

impl Recent {
    /// The last post the window holds (its start when empty); none before it is started.
    pub fn last(&self) -> Option<i64> {
        self.start.map(|start| self.posts.back().map_or(start, |(seq, _)| *seq))
    }

    /// Starts the window after post `after` (a follower's position once it caught up), unless it
    /// is started already.
    pub fn start_at(&mut self, after: i64) {
        if self.start.is_none() {
            self.start = Some(after);
        }
    }

    /// Appends posts rendered in order, the first following [`Recent::last`]; a run that does
    /// not follow on starts the window over (the posts are taken by sequence number, so none is
    /// ever handed out twice or skipped: a follower before the new start reads the store).
    pub fn extend(&mut self, rendered: Vec<(i64, Arc<str>)>) {
        for (seq, data) in rendered {
            if self.last().is_some_and(|last| seq <= last) {
                continue;
            }
            if self.last() != Some(seq - 1) {
                self.posts.clear();
                self.bytes = 0;
                self.start = Some(seq - 1);
            }
            self.bytes += data.len();
            self.posts.push_back((seq, data));
        }
        while self.posts.len() > RECENT_POSTS || (self.bytes > RECENT_BYTES && self.posts.len() > 1) {
            if let Some((seq, data)) = self.posts.pop_front() {
                self.bytes -= data.len();
                self.start = Some(seq);
            }
        }
    }

    /// The posts after `after`, when the window reaches back to it; none when `after` is before
    /// the window (or the window is not started).
    pub fn after(&self, after: i64) -> Option<Vec<(i64, Arc<str>)>> {
        let start = self.start?;
        if after < start {
            return None;
        }
        let skip = usize::try_from(after - start).unwrap_or(usize::MAX);
        Some(self.posts.iter().skip(skip).cloned().collect())
    }
}

/// A followed campaign's signal and its window of recent posts.
struct Followed {
    /// The last post told of, and how many wake-ups for every campaign there have been.
    signal: watch::Sender<(i64, u64)>,
    recent: Arc<tokio::sync::Mutex<Recent>>,
}

/// The signals of the campaigns that have followers on this server.
#[derive(Default)]
pub struct Live {
    campaigns: Mutex<HashMap<Uuid, Followed>>,
    /// What the webhook deliverer has not yet taken, once it listens.
    posted: Mutex<Posted>,
    deliverer_listens: AtomicBool,
    deliverer: tokio::sync::Notify,
}

impl Live {
    /// Waits for `campaign`'s posts from now on: a post published after this call wakes the
    /// follower, so a read of the store after it misses nothing.
    pub fn follow(self: &Arc<Self>, campaign: Uuid) -> Follower {
        let mut campaigns = self.campaigns.lock().unwrap_or_else(|e| e.into_inner());
        let followed = campaigns
            .entry(campaign)
            .or_insert_with(|| Followed { signal: watch::channel((0, 0)).0, recent: Arc::default() });
        Follower {
            live: self.clone(),
            campaign,
            signal: Some(followed.signal.subscribe()),
            recent: followed.recent.clone(),
        }
    }

    /// `campaign`'s log has grown to post `seq` (committed): wakes its followers, and the
    /// webhook deliverer.
    pub fn published(&self, campaign: Uuid, seq: i64) {
        {
            let campaigns = self.campaigns.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(followed) = campaigns.get(&campaign) {
                followed.signal.send_if_modified(|(last, _)| {
                    let newer = seq > *last;
                    *last = (*last).max(seq);
                    newer
                });
            }
        }
        if self.deliverer_listens.load(Ordering::Acquire) {
            self.posted.lock().unwrap_or_else(|e| e.into_inner()).campaigns.insert(campaign);
            self.deliverer.notify_one();
        }
    }

    /// Wakes every follower of every campaign, to read what it lacks from the store (after the
    /// posts of other servers may have gone untold), and the webhook deliverer, to look.
    pub fn wake_all(&self) {
        let campaigns = self.campaigns.lock().unwrap_or_else(|e| e.into_inner());
        for followed in campaigns.values() {
            followed.signal.send_modify(|(_, wakes)| *wakes += 1);
        }
        if self.deliverer_listens.load(Ordering::Acquire) {
            self.posted.lock().unwrap_or_else(|e| e.into_inner()).every = true;
            self.deliverer.notify_one();
        }
    }

    /// The webhook deliverer's wake-up: from now on, each publication records its campaign and
    /// wakes it.
    pub fn deliveries(self: &Arc<Self>) -> Deliveries {
        self.deliverer_listens.store(true, Ordering::Release);
        Deliveries { live: self.clone() }
    }

    /// How many campaigns have followers on this server.
    pub fn followed(&self) -> usize {
        self.campaigns.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// One follower of a campaign; its campaign's signal goes when the last follower does.
pub struct Follower {
    live: Arc<Live>,
    campaign: Uuid,
    signal: Option<watch::Receiver<(i64, u64)>>,
    recent: Arc<tokio::sync::Mutex<Recent>>,
}

impl Follower {
    /// Waits until a post may have come after the last wake-up (or the follow began); false
    /// when the signal is gone.
    pub async fn changed(&mut self) -> bool {
        match &mut self.signal {
            Some(signal) => signal.changed().await.is_ok(),
            None => false,
        }
    }

    /// The last post the campaign's signal told of (0: none since the first follower came),
    /// and how many wake-ups for every campaign there have been (see [`Recent::looked`]).
    pub fn head(&self) -> (i64, u64) {
        self.signal.as_ref().map_or((0, 0), |signal| *signal.borrow())
    }

    /// The campaign's window of recent posts, shared by its followers on this server.
    pub fn recent(&self) -> &Arc<tokio::sync::Mutex<Recent>> {
        &self.recent
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let mut campaigns = self.live.campaigns.lock().unwrap_or_else(|e| e.into_inner());
        // Under the lock, so no follower joins between the count and the removal.
        self.signal.take();
        if campaigns.get(&self.campaign).is_some_and(|followed| followed.signal.receiver_count() == 0) {
            campaigns.remove(&self.campaign);
        }
    }
}

/// What wakes the webhook deliverer: the campaigns posted to since it last looked.
pub struct Deliveries {
    live: Arc<Live>,
}

/// What the webhook deliverer has been woken for since it last took it.
#[derive(Debug, Default)]
struct Posted {
    campaigns: HashSet<Uuid>,
    /// A wake-up for every campaign ([`Live::wake_all`]).
    every: bool,
}

/// What the webhook deliverer was woken for, as [`Deliveries::take`] hands it over.
#[derive(Debug, PartialEq, Eq)]
pub enum Woken {
    /// These campaigns were posted to.
    Campaigns(HashSet<Uuid>),
    /// Every campaign may have new posts (those of other servers went untold for a while).
    Every,
}

impl Deliveries {
    /// Waits for the next publication (one made since the last call returns at once).
    pub async fn posted(&self) {
        self.live.deliverer.notified().await;
    }

    /// What it was woken for since the last call; `None` when nothing was (a wake-up whose
    /// publications the last call already took: a publication stores a wake-up while the
    /// deliverer is busy, and the deliverer takes everything published when it looks).
    pub fn take(&self) -> Option<Woken> {
        let posted = std::mem::take(&mut *self.live.posted.lock().unwrap_or_else(|e| e.into_inner()));
        if posted.every {
            Some(Woken::Every)
        } else if posted.campaigns.is_empty() {
            None
        } else {
            Some(Woken::Campaigns(posted.campaigns))
        }
    }
}

/// A connection's socket, asked how much of what the server wrote to it the client has not yet
/// taken: an event stream's follower that falls too far behind is dropped
/// (`event_stream_unsent_bytes`).
#[derive(Debug, Clone, Copy)]
pub struct SendQueue {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::RawFd,
}

impl SendQueue {
    /// Asks `socket`'s queue; the handle is only read while its connection is served (a
    /// request's handler and answer run on the connection's task, which owns the socket).
    pub fn of(socket: &tokio::net::TcpStream) -> Self {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            Self { fd: socket.as_raw_fd() }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = socket;
            Self {}
        }
    }

    /// Bytes in the socket's send queue (written, not yet acknowledged by the client); `None`
    /// where the system does not say.
    pub fn unsent(&self) -> Option<usize> {
        #[cfg(target_os = "linux")]
        {
            let mut queued: libc::c_int = 0;
            // SAFETY: TIOCOUTQ (SIOCOUTQ for a TCP socket) writes one int; the descriptor is
            // the connection's own socket, open while its answer is being sent.
            let answer = unsafe { libc::ioctl(self.fd, libc::TIOCOUTQ, &mut queued) };
            (answer == 0).then(|| usize::try_from(queued).unwrap_or(0))
        }
        #[cfg(not(target_os = "linux"))]
        None
    }
}

/// Publishes what the store hears of other servers' posts until `stop` turns true; a store
/// that hears nothing (SQLite: every post is this process's) needs no relay.
pub async fn relay(live: Arc<Live>, store: Arc<dyn Store>, mut stop: watch::Receiver<bool>) {
    let Some(mut heard) = store.listen() else {
        return;
    };
    loop {
        let news = tokio::select! {
            _ = stop.changed() => return,
            news = heard.recv() => news,
        };
        match news {
            Some(Heard::Post { campaign_id, seq }) => live.published(campaign_id, seq),
            Some(Heard::Resumed) => live.wake_all(),
            None => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_follower_wakes_for_a_later_post_and_its_signal_goes_with_it() {
        let live = Arc::new(Live::default());
        let campaign = Uuid::new_v4();
        live.published(campaign, 1);
        let mut follower = live.follow(campaign);
        assert_eq!(live.followed(), 1);
        live.published(campaign, 2);
        let woke = tokio::time::timeout(std::time::Duration::from_secs(1), follower.changed()).await;
        assert_eq!(woke, Ok(true));
        // A post it was told of already does not wake it again.
        live.published(campaign, 2);
        let again = tokio::time::timeout(std::time::Duration::from_millis(50), follower.changed()).await;
        assert!(again.is_err());
        live.wake_all();
        let woke = tokio::time::timeout(std::time::Duration::from_secs(1), follower.changed()).await;
        assert_eq!(woke, Ok(true));
        drop(follower);
        assert_eq!(live.followed(), 0);
    }

    fn rendered(seqs: std::ops::RangeInclusive<i64>) -> Vec<(i64, Arc<str>)> {
        seqs.map(|seq| (seq, Arc::from(format!("post {seq}")))).collect()
    }

    #[test]
    fn the_window_hands_out_each_post_after_a_position_once_and_only_what_it_reaches() {
        let mut recent = Recent::default();
        assert_eq!(recent.after(0), None, "not started");
        recent.start_at(10);
        recent.start_at(3);
        assert_eq!(recent.last(), Some(10));
        assert_eq!(recent.after(10), Some(vec![]));
        recent.extend(rendered(9..=12));
        let seqs = |got: Option<Vec<(i64, Arc<str>)>>| got.map(|g| g.into_iter().map(|(s, _)| s).collect::<Vec<_>>());
        assert_eq!(seqs(recent.after(10)), Some(vec![11, 12]));
        assert_eq!(seqs(recent.after(11)), Some(vec![12]));
        assert_eq!(recent.after(9), None, "before the window: the store");
        // A run that does not follow on starts the window over at it.
        recent.extend(rendered(20..=21));
        assert_eq!(recent.after(12), None);
        assert_eq!(seqs(recent.after(19)), Some(vec![20, 21]));
        // The window keeps its newest posts.
        recent.extend(rendered(22..=(21 + RECENT_POSTS as i64 + 5)));
        assert_eq!(recent.posts.len(), RECENT_POSTS);
        assert_eq!(recent.after(21), None);
        let last = recent.last().unwrap();
        assert_eq!(seqs(recent.after(last - 2)), Some(vec![last - 1, last]));
    }

    #[tokio::test]
    async fn the_deliverer_hears_which_campaigns_were_posted_to() {
        let live = Arc::new(Live::default());
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        // Before the deliverer listens, nothing is recorded for it.
        live.published(a, 1);
        let deliveries = live.deliveries();
        assert_eq!(deliveries.take(), None);
        live.published(a, 2);
        live.published(b, 1);
        live.published(a, 3);
        let woke = tokio::time::timeout(std::time::Duration::from_secs(1), deliveries.posted()).await;
        assert!(woke.is_ok());
        assert_eq!(deliveries.take(), Some(Woken::Campaigns(HashSet::from([a, b]))));
        assert_eq!(deliveries.take(), None);
        // A wake for every campaign wakes it too, and says so, whatever else was posted.
        live.published(b, 2);
        live.wake_all();
        let woke = tokio::time::timeout(std::time::Duration::from_secs(1), deliveries.posted()).await;
        assert!(woke.is_ok());
        assert_eq!(deliveries.take(), Some(Woken::Every));
        assert_eq!(deliveries.take(), None);
    }

    #[tokio::test]
    async fn a_wake_up_whose_posts_were_taken_already_tells_of_none() {
        let live = Arc::new(Live::default());
        let deliveries = live.deliveries();
        let a = Uuid::new_v4();
        // Posted while the deliverer was busy: the wake-up is stored, and its post taken with
        // one the deliverer was already woken for.
        live.published(a, 1);
        assert_eq!(deliveries.take(), Some(Woken::Campaigns(HashSet::from([a]))));
        let woke = tokio::time::timeout(std::time::Duration::from_secs(1), deliveries.posted()).await;
        assert!(woke.is_ok(), "the stored wake-up");
        assert_eq!(deliveries.take(), None, "not a wake-up for every campaign");
    }
}
