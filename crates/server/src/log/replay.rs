//! The replay: a stored post decided again, with the context the fold gives, and compared with
//! what was stored for it. The whole-campaign audit, the per-post audit and the offline
//! verifier replay posts here; the live append decided them with the same `decide` and the same
//! context rule.

use adjutant_rules::result_time::ResultTime;
use adjutant_store::{Post, Tail};

use super::decide::{decide, Context, Effects, Needs};
use super::error::LogResult;
use super::kinds::OutcomeKind;
use super::view::{body_value, LogView};
use crate::campaign::LoadedCampaign;
use crate::sealed_delay::{self, ChainTrack};

/// What a replay checks of a post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The stored outcomes are the rules' outcomes.
    Outcomes,
    /// The stored state is the replayed state.
    Snapshot,
    /// The rules take the stored post at all.
    Rules,
    /// A sealed-delay battle reveals the next secret of a published chain.
    SealedDelay,
}

impl Check {
    /// The audit's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Check::Outcomes => "outcomes",
            Check::Snapshot => "snapshot",
            Check::Rules => "rules",
            Check::SealedDelay => "sealed_delay",
        }
    }
}

/// Something a replay found wrong with a post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub seq: i64,
    pub check: Check,
    pub detail: String,
}

/// What a replay counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Stored outcomes compared.
    pub outcomes: i64,
    /// Stored snapshots compared.
    pub snapshots: i64,
    pub result_numbers: i64,
    pub reinforcement_rolls: i64,
    pub dice: i64,
}

/// What was stored for a post: its outcomes as (kind, data text), and its state snapshot.
pub struct Stored<'a> {
    pub outcomes: Vec<(&'a str, &'a str)>,
    pub snapshot: Option<&'a str>,
}

/// The rules' verdict on a post.
pub type Verdict = LogResult<Effects>;

/// A replay of a log, post by post.
#[derive(Debug, Clone)]
pub struct Replay {
    view: LogView,
    /// The state after the last post that changed it, and that post.
    state: Option<(i64, String)>,
    /// A sealed-delay campaign's chains, as its battles reveal them (a replay from post 1 only:
    /// the order of draws is known from the start).
    chains: Option<ChainTrack>,
    pub counts: Counts,
}

impl Replay {
    /// From post 1.
    pub fn new(campaign: &LoadedCampaign) -> Self {
        Self { chains: Some(ChainTrack::new(&campaign.settings)), ..Self::at(LogView::default(), None) }
    }

    /// One post on its own, after the posts folded into `view`, with the state `state` they
    /// left (the per-post audit). The order of a sealed-delay campaign's draws is not checked.
    pub fn at(view: LogView, state: Option<(i64, String)>) -> Self {
        Self { view, state, chains: None, counts: Counts::default() }
    }

    /// What `post`'s verdict reads besides the tail: the replay has the view; a rollback's
    /// snapshot it must be given ([`Replay::post`]).
    pub fn needs(campaign: &LoadedCampaign, post: &Post) -> Needs {
        Needs::of(campaign, &post.kind, &body_value(post))
    }

    pub fn view(&self) -> &LogView {
        &self.view
    }

    /// Whether the verdict on a post that `needs` this reads nothing from the log before it: a
    /// resolver campaign holds no state, so only a post that reads the view or a snapshot
    /// depends on the posts before. Such verdicts can be worked out ahead, many at once, with
    /// [`Replay::verdict_alone`].
    pub fn stands_alone(campaign: &LoadedCampaign, needs: &Needs) -> bool {
        campaign.scenario().is_none() && !needs.any()
    }

    /// The verdict on a post that [stands alone](Replay::stands_alone): the one
    /// [`Replay::post`] would reach in its place in the log.
    pub fn verdict_alone(campaign: &LoadedCampaign, post: &Post) -> Verdict {
        let context = Context { view: &LogView::default(), rollback_snapshot: None, chain_secret: None };
        decide(campaign, &Self::tail(post, None), post, &context)
    }

    fn tail(post: &Post, snapshot: Option<(i64, String)>) -> Tail {
        Tail {
            next_seq: post.seq,
            prev_hash: Some(post.prev_hash.clone()),
            prev_stamp: None,
            snapshot,
            next_position: 0,
        }
    }

    /// Replays the next post of the log, compares what the rules give with `stored`, and folds
    /// the post in. `rollback_snapshot` is the stored state at or before the post a rollback
    /// rolls back to (checked against the replay when that post was replayed).
    pub fn post(
        &mut self,
        campaign: &LoadedCampaign,
        post: &Post,
        stored: &Stored<'_>,
        rollback_snapshot: Option<&(i64, String)>,
    ) -> Vec<Finding> {
        self.fold(campaign, post, Self::needs(campaign, post), stored, rollback_snapshot, None)
    }

    /// [`Replay::post`], with what the post [`Replay::needs`] worked out already, and its
    /// verdict too when it [stands alone](Replay::stands_alone).
    pub fn fold(
        &mut self,
        campaign: &LoadedCampaign,
        post: &Post,
        needs: Needs,
        stored: &Stored<'_>,
        rollback_snapshot: Option<&(i64, String)>,
        verdict: Option<Verdict>,
    ) -> Vec<Finding> {
        let mut found = Vec::new();
        let mut find = |check: Check, detail: String| found.push(Finding { seq: post.seq, check, detail });
        // The secret the stored battle revealed must be the next of a published chain: its delay
        // is then recomputed by the rules below.
        let secret = needs.chain_secret.then(|| sealed_delay::revealed_in(stored.outcomes.iter().copied())).flatten();
        if let (Some(secret), Some(chains)) = (&secret, &mut self.chains) {
            for problem in chains.check(secret) {
                find(Check::SealedDelay, problem);
            }
        }
        if campaign.settings.result_time == ResultTime::SealedDelay
            && sealed_delay::unsealed_battles_in(stored.outcomes.iter().copied()) > 0
        {
            find(Check::SealedDelay, "a battle of this sealed-delay campaign reveals no chain secret".into());
        }
        let verdict = verdict.unwrap_or_else(|| {
            let context = Context { view: &self.view, rollback_snapshot, chain_secret: secret.as_ref() };
            decide(campaign, &Self::tail(post, self.state.clone()), post, &context)
        });
        match verdict {
            Ok(effects) => {
                self.counts.dice += effects.dice;
                self.counts.outcomes += stored.outcomes.len() as i64;
                let same = effects.outcomes.len() == stored.outcomes.len()
                    && effects
                        .outcomes
                        .iter()
                        .zip(&stored.outcomes)
                        .all(|(new, (kind, data))| new.kind == *kind && new.data == *data);
                if !same {
                    find(Check::Outcomes, "the stored outcomes differ from what the rules give".into());
                }
                for o in &effects.outcomes {
                    match OutcomeKind::of(&o.kind) {
                        OutcomeKind::Battle => self.counts.result_numbers += 1,
                        OutcomeKind::ReinforcementRoll => self.counts.reinforcement_rolls += 1,
                        _ => {}
                    }
                }
                match (&effects.snapshot, stored.snapshot) {
                    (Some(new), Some(old)) => {
                        self.counts.snapshots += 1;
                        if new != old {
                            find(Check::Snapshot, "the stored state differs from the replayed state".into());
                        }
                    }
                    (Some(_), None) => find(Check::Snapshot, "no state snapshot was stored".into()),
                    (None, Some(_)) => {
                        find(Check::Snapshot, "a snapshot was stored for a post that changes nothing".into())
                    }
                    (None, None) => {}
                }
                if let Some(new) = effects.snapshot {
                    self.state = Some((post.seq, new));
                }
            }
            Err(e) => find(Check::Rules, format!("the rules refuse this stored post: {e}")),
        }
        self.view.apply(post);
        found
    }
}
