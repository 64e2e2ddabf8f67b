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

use adjutant_rules::short_acw::deadline::{reminders, Wait};
use adjutant_rules::short_acw::GameState;
use adjutant_store::{Appended, Principal};
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::json;
use uuid::Uuid;

use crate::campaign::{CampaignSettings, LoadedCampaign};
use crate::log::append::Submission;
use crate::log::LogError;
use crate::AppState;

/// What the clock posts next: a wait's reminder (`lead` before its deadline) or its deadline.
struct Event {
    wait: Wait,
    at: DateTime<Utc>,
    lead: Option<TimeDelta>,
}

/// The campaign's next event: the earliest reminder or deadline (a reminder before the deadline
/// at the same moment).
/// A reminder not posted by the deadline is not posted at all (`now`: the server's clock).
fn next_event(game: Option<&GameState>, leads: &[TimeDelta], now: DateTime<Utc>) -> Option<Event> {
    let clock = game.and_then(|g| g.clock.as_ref()).filter(|c| c.paused.is_none())?;
    let mut events: Vec<Event> = vec![];
    for wait in clock.waits.iter().filter(|w| w.due.is_some()) {
        let late = wait.due.is_some_and(|due| due <= now);
        for (at, lead) in reminders(wait, leads).into_iter().filter(|_| !late) {
            events.push(Event { wait: wait.clone(), at, lead: Some(lead) });
        }
        if let Some(due) = wait.due {
            events.push(Event { wait: wait.clone(), at: due, lead: None });
        }
    }
    events.into_iter().min_by_key(|e| (e.at, e.lead.is_none(), e.wait.side, e.wait.stage.clone()))
}

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
    /// The mails queued for the campaigns' current waits.
    mails: crate::mail::Queued,
    /// How long before a deadline each reminder is posted.
    leads: Vec<TimeDelta>,
}

impl Timekeeper {
    pub fn new(state: AppState) -> Self {
        let poll = Duration::from_millis(state.config.deadline_poll_ms.max(1));
        let rescan = Duration::from_millis(state.config.deadline_rescan_ms.clamp(1, 60_000));
        let leads = crate::mail::reminder_leads(&state.config.reminder_leads).unwrap_or_default();
        Self { state, poll, rescan, due: HashMap::new(), scanned: None, mails: Default::default(), leads }
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
                    let game = self.game(&loaded).await?;
                    found.insert(
                        campaign.id,
                        next_event(game.as_ref(), &self.leads, self.state.clock.now()).map(|e| e.at),
                    );
                    // The turn and reminder mails its waits call for (each queued once).
                    if let Some(game) = &game {
                        crate::mail::queue(&self.state, &mut self.mails, &loaded, game).await?;
                    }
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

    /// The campaign's state as the log stands.
    async fn game(&self, campaign: &LoadedCampaign) -> Result<Option<GameState>, LogError> {
        let snapshot = self.state.store.snapshot_at(campaign.campaign.id, i64::MAX).await?;
        campaign.state_from(snapshot.as_ref().map(|(_, text)| text.as_str()))
    }

    /// Makes the campaign's deadline posts that are due now, then notes its next deadline.
    async fn settle(&mut self, id: Uuid) -> Result<usize, LogError> {
        let campaign = crate::routes::shared::campaign_to_post_to(&self.state, id)
            .await
            .map_err(|e| LogError::Broken(format!("campaign {id}: {e:?}")))?;
        let moderator = self.moderator(&campaign).await?;
        let mut made = 0;
        for _ in 0..POSTS_PER_LOOK {
            let game = self.game(&campaign).await?;
            if let Some(game) = &game {
                crate::mail::queue(&self.state, &mut self.mails, &campaign, game).await?;
            }
            let event = next_event(game.as_ref(), &self.leads, self.state.clock.now());
            self.due.insert(id, event.as_ref().map(|e| e.at));
            let Some(Event { wait, at, lead }) = event else { break };
            if at > self.state.clock.now() {
                break;
            }
            let (kind, body, key) = match lead {
                Some(lead) => (
                    "reminder",
                    json!({"side": wait.side, "stage": wait.stage, "lead_ms": lead.num_milliseconds()}),
                    format!(
                        "reminder {id} {} {} {} {}",
                        wait.side,
                        wait.stage,
                        wait.due.map_or(0, |d| d.timestamp_millis()),
                        lead.num_milliseconds()
                    ),
                ),
                None => (
                    "deadline",
                    json!({"side": wait.side, "stage": wait.stage}),
                    format!("deadline {id} {} {} {}", wait.side, wait.stage, at.timestamp_millis()),
                ),
            };
            let new = Submission { author: &moderator, side: None, kind, body: &body, idempotency_key: key };
            match self.state.log().append(&campaign, new).await {
                Ok(Appended::New(post, _)) => {
                    tracing::info!(campaign = %id, seq = post.seq, side = %wait.side, stage = %wait.stage, kind, "the clock posted");
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
