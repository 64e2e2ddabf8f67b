//! The campaign clock's keeper: when a wait's deadline passes, the server itself appends the
//! campaign's `deadline` post, stamped by its clock at that moment (never earlier), chained,
//! signed and decided like any post (`log::decide`, `short_acw::deadline::missed`).
//!
//! Exactly once, on any number of replicas: the post's idempotency key is the wait and its
//! deadline, so a second server making the same post is given back the first one's; and the
//! post is decided inside the append's campaign lock, which refuses a deadline that is no
//! longer due. After a restart the first scan finds the deadlines that passed meanwhile, and
//! they are applied at once, stamped at the restart.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use adjutant_rules::short_acw::deadline::Wait;
use adjutant_store::{Appended, Principal};
use chrono::{DateTime, Utc};
use serde_json::json;
use uuid::Uuid;

use crate::campaign::{CampaignSettings, LoadedCampaign};
use crate::log::append::NewPost;
use crate::log::LogError;
use crate::AppState;

/// Campaigns read per page of the scan.
const SCAN_PAGE: i64 = 500;

/// Deadline posts made for one campaign in one look (deadlines that passed while the server
/// was down come due one after another).
const POSTS_PER_LOOK: usize = 64;

/// Watches the deadlines of every campaign that has them.
pub struct Timekeeper {
    state: AppState,
    poll: Duration,
    rescan: Duration,
    /// Each campaign with deadlines, and its next deadline (`None`: nothing runs now).
    due: HashMap<Uuid, Option<DateTime<Utc>>>,
    scanned: Option<Instant>,
}

impl Timekeeper {
    pub fn new(state: AppState) -> Self {
        let poll = Duration::from_millis(state.config.deadline_poll_ms.max(1));
        let rescan = Duration::from_millis(state.config.deadline_rescan_ms.clamp(1, 60_000));
        Self { state, poll, rescan, due: HashMap::new(), scanned: None }
    }

    /// Looks at the clock every `deadline_poll_ms` until `stop` turns true.
    pub async fn run(mut self, mut stop: tokio::sync::watch::Receiver<bool>) {
        loop {
            if *stop.borrow() {
                return;
            }
            if let Err(e) = self.look().await {
                tracing::warn!(error = %e, "the campaign clock could not look at its campaigns");
            }
            tokio::select! {
                () = tokio::time::sleep(self.poll) => {}
                _ = stop.changed() => {}
            }
        }
    }

    /// One look: every campaign whose next deadline has passed gets its deadline posts. Returns
    /// how many posts were made.
    pub async fn look(&mut self) -> Result<usize, LogError> {
        if self.scanned.is_none_or(|at| at.elapsed() >= self.rescan) {
            self.scan().await?;
            self.scanned = Some(Instant::now());
        }
        let now = self.state.clock.now();
        let passed: Vec<Uuid> =
            self.due.iter().filter(|(_, due)| due.is_some_and(|due| due <= now)).map(|(id, _)| *id).collect();
        let mut made = 0;
        for id in passed {
            match self.settle(id).await {
                Ok(n) => made += n,
                Err(e) => tracing::warn!(campaign = %id, error = %e, "a deadline post was not made"),
            }
        }
        Ok(made)
    }

    /// Reads every campaign with deadlines and its next deadline.
    async fn scan(&mut self) -> Result<(), LogError> {
        let mut after = None;
        let mut found = HashMap::new();
        loop {
            let page = self.state.store.campaigns(None, after, SCAN_PAGE).await?;
            for campaign in &page {
                let has_deadlines = campaign.mode == "managed"
                    && serde_json::from_str::<CampaignSettings>(&campaign.settings)
                        .is_ok_and(|s| s.turn_deadline.is_some() || s.turn_deadline_at.is_some());
                if has_deadlines {
                    let loaded = crate::routes::shared::load_campaign(&self.state, campaign.id)
                        .await
                        .map_err(|e| LogError::Broken(format!("campaign {}: {e:?}", campaign.id)))?;
                    found.insert(campaign.id, self.next_wait(&loaded).await?.and_then(|w| w.due));
                }
            }
            match page.last() {
                Some(last) if page.len() as i64 == SCAN_PAGE => after = Some(last.id),
                _ => break,
            }
        }
        self.due = found;
        Ok(())
    }

    /// The wait whose deadline comes first, in the campaign's state as the log stands.
    async fn next_wait(&self, campaign: &LoadedCampaign) -> Result<Option<Wait>, LogError> {
        let snapshot = self.state.store.snapshot_at(campaign.campaign.id, i64::MAX).await?;
        let state = campaign.state_from(snapshot.as_ref().map(|(_, text)| text.as_str()))?;
        Ok(state.and_then(|s| s.clock).and_then(|c| c.next_due().cloned()))
    }

    /// Makes the campaign's deadline posts that are due now, then notes its next deadline.
    async fn settle(&mut self, id: Uuid) -> Result<usize, LogError> {
        let campaign = crate::routes::shared::campaign_to_post_to(&self.state, id)
            .await
            .map_err(|e| LogError::Broken(format!("campaign {id}: {e:?}")))?;
        let moderator = self.moderator(&campaign).await?;
        let mut made = 0;
        for _ in 0..POSTS_PER_LOOK {
            let wait = self.next_wait(&campaign).await?;
            let due = wait.as_ref().and_then(|w| w.due);
            self.due.insert(id, due);
            let (Some(wait), Some(due)) = (wait, due) else { break };
            if due > self.state.clock.now() {
                break;
            }
            let body = json!({"side": wait.side, "stage": wait.stage});
            let new = NewPost {
                author: &moderator,
                side: None,
                kind: "deadline",
                body: &body,
                idempotency_key: format!("deadline {id} {} {} {}", wait.side, wait.stage, due.timestamp_millis()),
            };
            match self.state.log().append(&campaign, new).await {
                Ok(Appended::New(post, _)) => {
                    tracing::info!(campaign = %id, seq = post.seq, side = %wait.side, stage = %wait.stage, "deadline passed");
                    made += 1;
                }
                // Another replica made it first: read the state it left.
                Ok(Appended::Replayed(..)) => {}
                Err(e) => {
                    // Refused: the log moved on between the read and the write (a player's post,
                    // another replica's deadline post). Read it again at the next look.
                    tracing::warn!(campaign = %id, error = %e, "deadline post refused; read again at the next look");
                    break;
                }
            }
        }
        Ok(made)
    }

    /// The campaign's moderator, in whose name the server's posts are stored (as `deadline`
    /// posts, which no client can make).
    async fn moderator(&self, campaign: &LoadedCampaign) -> Result<Principal, LogError> {
        let id = campaign.campaign.moderator_id;
        self.state.store.principal(id).await?.map(|(principal, _)| principal).ok_or_else(|| {
            LogError::Broken(format!("campaign {}: its moderator {id} is not stored", campaign.campaign.id))
        })
    }
}
