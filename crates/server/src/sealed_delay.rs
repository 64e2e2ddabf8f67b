//! Sealed-delay campaigns as the audit reads them: the chain secret each battle revealed, and
//! whether it leads back to a published `s_0` in the right order (`adjutant_rules::result_time`
//! has the arithmetic, docs/fairness.md the why).

use std::collections::BTreeMap;

use adjutant_rules::outcome::{Fought, OutcomeData};
use adjutant_rules::result_time::{self, is_secret_text, position_of, ChainSecret, ResultTime};
use adjutant_store::{Outcome, Store};
use serde_json::Value;

use crate::campaign::{CampaignSettings, LoadedCampaign};
use crate::log::kinds::{OutcomeKind, RESULT_FIXING_ORDERS};
use crate::log::{LogError, LogResult};

/// Whether the post's result time is the stamp plus a sealed delay.
pub fn applies(campaign: &LoadedCampaign, kind: &str) -> bool {
    campaign.settings.result_time == ResultTime::SealedDelay
        && campaign.scenario().is_some()
        && RESULT_FIXING_ORDERS.contains(&kind)
}

/// A stored outcome's data (outcomes are stored as `{"headline", "data"}`).
/// A stored battle outcome (`{"data": …, "headline": …}`) as its type; `None` for any other.
fn battle_of(kind: &str, stored: &str) -> Option<Fought> {
    if OutcomeKind::of(kind) != OutcomeKind::Battle {
        return None;
    }
    let data = serde_json::from_str::<Value>(stored).ok()?.get_mut("data").map(Value::take)?;
    match OutcomeData::read(kind, &data) {
        Ok(OutcomeData::Battle(fought)) => Some(fought),
        _ => None,
    }
}

/// The chain secret one post's stored battle outcome revealed, if any.
pub fn revealed(outcomes: &[Outcome]) -> Option<ChainSecret> {
    revealed_in(outcomes.iter().map(|o| (o.kind.as_str(), o.data.as_str())))
}

/// [`revealed`] over outcomes given as (kind, stored data text), as an export holds them.
pub fn revealed_in<'a>(outcomes: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<ChainSecret> {
    outcomes.into_iter().find_map(|(kind, stored)| Some(battle_of(kind, stored)?.sealed_delay?.chain_secret()))
}

/// Battles among the stored outcomes that reveal no chain secret.
pub fn unsealed_battles(outcomes: &[Outcome]) -> usize {
    unsealed_battles_in(outcomes.iter().map(|o| (o.kind.as_str(), o.data.as_str())))
}

/// [`unsealed_battles`] over outcomes given as (kind, stored data text).
pub fn unsealed_battles_in<'a>(outcomes: impl IntoIterator<Item = (&'a str, &'a str)>) -> usize {
    outcomes
        .into_iter()
        .filter_map(|(kind, stored)| battle_of(kind, stored))
        .filter(|b| b.sealed_delay.is_none())
        .count()
}

/// A new chain's top secret `s_K`: 256 bits from the operating system's generator.
pub fn new_top_secret() -> String {
    let mut random = [0u8; 32];
    rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut random);
    result_time::top_secret(random)
}

/// The chain secret the campaign's next battle uses: draw k = battles so far (void posts'
/// included: a revealed secret is never used again) + 1. When that is a chain's last secret, the
/// next chain's top secret is kept now, so the draw can publish its `s_0`.
pub async fn next_secret(store: &dyn Store, campaign: &LoadedCampaign) -> LogResult<ChainSecret> {
    let id = campaign.campaign.id;
    let broken = |what: &str| LogError::Broken(format!("sealed-delay campaign {id}: {what}"));
    let Some(published) = &campaign.settings.result_chain else {
        return Err(broken("it has no result_chain"));
    };
    let length = published.length.max(1);
    let draw = store.count_outcomes_of_kind(id, adjutant_store::IndexedOutcomeKind::Battle).await? as u64 + 1;
    let (chain, position) = position_of(draw, length);
    let secrets = store.campaign_secrets(id).await?;
    let kept = |n: u64| secrets.iter().find(|(c, _)| *c as u64 == n).map(|(_, s)| s.clone());
    // Chain 0 is kept at creation, each next one before the draw that publishes its s_0.
    let top = kept(chain).ok_or_else(|| broken(&format!("no kept secret for chain {chain}")))?;
    let next_top = match (position == length, kept(chain + 1)) {
        (false, _) => None,
        (true, Some(next)) => Some(next),
        (true, None) => Some(store.keep_campaign_secret(id, chain as i64 + 1, &new_top_secret()).await?),
    };
    let secret = ChainSecret::from_top(draw, length, &top, next_top.as_deref());
    if chain == 0 && secret.commitment != published.commitment {
        return Err(broken("the kept secret does not lead to the published s_0"));
    }
    Ok(secret)
}

/// What the audit knows of a campaign's chains as it walks the log: the next draw, and each
/// chain's published `s_0`.
#[derive(Debug, Clone, Default)]
pub struct ChainTrack {
    next_draw: u64,
    length: u64,
    commitments: BTreeMap<u64, String>,
    /// The last secret checked: (chain, position, secret). The next draw's secret, one place
    /// further up the same chain, is checked by one hash step down to it.
    last: Option<(u64, u64, String)>,
}

impl ChainTrack {
    pub fn new(settings: &CampaignSettings) -> Self {
        let mut commitments = BTreeMap::new();
        let length = settings.result_chain.as_ref().map_or(1, |c| c.length.max(1));
        if let Some(chain) = &settings.result_chain {
            commitments.insert(0, chain.commitment.clone());
        }
        Self { next_draw: 1, length, commitments, last: None }
    }

    /// Checks the next revealed secret, in log order, and learns the next chain's `s_0` when it
    /// publishes one. Every problem found, in words.
    ///
    /// The draw's order is checked first: a secret out of order is not walked down its chain,
    /// since the walk takes as many SHA-256 steps as the draw's place says, and a crafted file
    /// could name a place 2^40 steps up. In order, a draw is at most one more than the battles
    /// before it, and its secret is one step above the last one checked on its chain (a chain's
    /// first secret is one step above its `s_0`): the walk is bounded by what the file holds.
    pub fn check(&mut self, secret: &ChainSecret) -> Vec<String> {
        if secret.draw != self.next_draw {
            return vec![format!(
                "draw {} out of order: the campaign's next draw is {}; its secret is not walked down its chain",
                secret.draw, self.next_draw
            )];
        }
        let below = match &self.last {
            Some((chain, position, s)) if *chain == secret.chain && position + 1 == secret.position => Some(s.as_str()),
            _ => None,
        };
        let published = self.commitments.get(&secret.chain).map(String::as_str);
        let problems = check_secret_from(secret, self.length, published, below);
        if let Some(next) = &secret.next_commitment {
            self.commitments.insert(secret.chain + 1, next.clone());
        }
        self.last = Some((secret.chain, secret.position, secret.secret.clone()));
        self.next_draw = secret.draw + 1;
        problems
    }
}

/// The checks one revealed secret passes on its own: its place in the chain, its text, the
/// `s_0` it leads to (`published`, when known) and a next chain's `s_0` only with a chain's last
/// secret.
pub fn check_secret(secret: &ChainSecret, length: u64, published: Option<&str>) -> Vec<String> {
    check_secret_from(secret, length, published, None)
}

/// [`check_secret`], knowing (`below`) the secret one place down the same chain, which the
/// revealed one must hash to in one step; without it the walk goes all the way to `s_0`.
fn check_secret_from(secret: &ChainSecret, length: u64, published: Option<&str>, below: Option<&str>) -> Vec<String> {
    let mut problems = Vec::new();
    // The walk down to s_0 takes `position` steps: only from the place the draw gives (a position
    // read from a file could be anything).
    let placed = position_of(secret.draw, length) == (secret.chain, secret.position);
    if !placed {
        problems.push(format!(
            "draw {} is chain {} position {}, not chain {} position {}",
            secret.draw,
            position_of(secret.draw, length).0,
            position_of(secret.draw, length).1,
            secret.chain,
            secret.position
        ));
    }
    if !is_secret_text(&secret.secret) {
        problems.push("the revealed secret is not 64 lower-case hex digits".into());
    } else if let (true, Some(below)) = (placed, below) {
        if adjutant_rules::result_time::walk_down(&secret.secret, 1) != below {
            problems.push(format!(
                "SHA-256 of the revealed secret is not the secret draw {} revealed one place down the chain",
                secret.draw - 1
            ));
        }
    } else if placed && !secret.links_to_commitment() {
        problems.push(format!(
            "SHA-256 applied {} times to the revealed secret does not give the chain's s_0 {}",
            secret.position, secret.commitment
        ));
    }
    match published {
        Some(p) if p != secret.commitment => {
            problems.push(format!("the chain's s_0 {} is not the published {p}", secret.commitment))
        }
        None => problems.push(format!("chain {}'s s_0 was not published before this draw", secret.chain)),
        _ => {}
    }
    if secret.next_commitment.is_some() != (secret.position == length) {
        problems.push("a next chain's s_0 is published with a chain's last secret, and only then".into());
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use adjutant_rules::result_time::{walk_down, ChainSecret};

    fn track(length: u64, top: &str) -> ChainTrack {
        let mut commitments = BTreeMap::new();
        commitments.insert(0, walk_down(top, length));
        ChainTrack { next_draw: 1, length, commitments, last: None }
    }

    #[test]
    fn draws_in_order_check_out_one_step_each_and_a_changed_secret_does_not() {
        let top = "ab".repeat(32);
        let mut t = track(5, &top);
        for draw in 1..=3 {
            let secret = ChainSecret::from_top(draw, 5, &top, None);
            assert_eq!(t.check(&secret), Vec::<String>::new(), "draw {draw}");
        }
        let mut fourth = ChainSecret::from_top(4, 5, &top, None);
        fourth.secret = "cd".repeat(32);
        let problems = t.check(&fourth);
        assert!(problems.iter().any(|p| p.contains("one place down the chain")), "{problems:?}");
    }

    #[test]
    fn a_draw_out_of_order_is_not_walked_however_far_up_it_says_it_is() {
        // A crafted export: a chain of 2^40 secrets and a first battle claiming the last of
        // them. Walked, that is 2^40 SHA-256 steps; refused by its order, it is none.
        let length = 1u64 << 40;
        let mut t = ChainTrack { next_draw: 1, length, commitments: BTreeMap::new(), last: None };
        let crafted = ChainSecret {
            draw: length,
            chain: 0,
            position: length,
            secret: "ab".repeat(32),
            commitment: "cd".repeat(32),
            next_commitment: None,
        };
        let problems = t.check(&crafted);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("out of order") && problems[0].contains("not walked"), "{problems:?}");
    }
}
