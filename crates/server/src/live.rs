//! Who is waiting for a campaign's next post, and the signal that wakes them.
//!
//! Each campaign with followers (its event streams) has a `watch` of the last post this server
//! knows of. The append publishes to it after the commit; on PostgreSQL, the posts other
//! servers commit arrive through the store's `LISTEN` ([`relay`]) and are published the same
//! way. A follower only learns "there is something after N": it reads the posts from the store
//! as any read does, so a signal missed or repeated never loses or repeats a post.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use adjutant_store::{Heard, Store};
use tokio::sync::watch;
use uuid::Uuid;

/// The signals of the campaigns that have followers on this server.
#[derive(Default)]
pub struct Live {
    campaigns: Mutex<HashMap<Uuid, watch::Sender<i64>>>,
}

impl Live {
    /// Waits for `campaign`'s posts from now on: a post published after this call wakes the
    /// follower, so a read of the store after it misses nothing.
    pub fn follow(self: &Arc<Self>, campaign: Uuid) -> Follower {
        let mut campaigns = self.campaigns.lock().unwrap_or_else(|e| e.into_inner());
        let signal = campaigns.entry(campaign).or_insert_with(|| watch::channel(0).0).subscribe();
        Follower { live: self.clone(), campaign, signal: Some(signal) }
    }

    /// `campaign`'s log has grown to post `seq` (committed): wakes its followers.
    pub fn published(&self, campaign: Uuid, seq: i64) {
        let campaigns = self.campaigns.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(signal) = campaigns.get(&campaign) {
            signal.send_if_modified(|last| {
                let newer = seq > *last;
                *last = (*last).max(seq);
                newer
            });
        }
    }

    /// Wakes every follower of every campaign, to read what it lacks from the store (after the
    /// posts of other servers may have gone untold).
    pub fn wake_all(&self) {
        let campaigns = self.campaigns.lock().unwrap_or_else(|e| e.into_inner());
        for signal in campaigns.values() {
            signal.send_modify(|_| {});
        }
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
    signal: Option<watch::Receiver<i64>>,
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
}

impl Drop for Follower {
    fn drop(&mut self) {
        let mut campaigns = self.live.campaigns.lock().unwrap_or_else(|e| e.into_inner());
        // Under the lock, so no follower joins between the count and the removal.
        self.signal.take();
        if campaigns.get(&self.campaign).is_some_and(|signal| signal.receiver_count() == 0) {
            campaigns.remove(&self.campaign);
        }
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
}
