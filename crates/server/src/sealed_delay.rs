//! Sealed-delay campaigns as the audit reads them: the chain secret each battle revealed, and
//! whether it leads back to a published `s_0` in the right order (`adjutant_rules::result_time`
//! has the arithmetic, docs/fairness.md the why).

use std::collections::BTreeMap;

use adjutant_rules::result_time::{is_secret_text, position_of, ChainSecret, ResultTime};
use adjutant_store::Outcome;
use serde_json::Value;

use crate::campaign::{CampaignSettings, LoadedCampaign, RESULT_FIXING_KINDS};

/// Whether the post's result time is the stamp plus a sealed delay.
pub fn applies(campaign: &LoadedCampaign, kind: &str) -> bool {
    campaign.settings.result_time() == ResultTime::SealedDelay
        && campaign.scenario().is_some()
        && RESULT_FIXING_KINDS.contains(&kind)
}

/// A stored outcome's data (outcomes are stored as `{"headline", "data"}`).
fn data_of(data: &str) -> Value {
    serde_json::from_str::<Value>(data).ok().and_then(|mut v| v.get_mut("data").map(Value::take)).unwrap_or(Value::Null)
}

/// The chain secret one post's stored battle outcome revealed, if any.
pub fn revealed(outcomes: &[Outcome]) -> Option<ChainSecret> {
    revealed_in(outcomes.iter().map(|o| (o.kind.as_str(), o.data.as_str())))
}

/// [`revealed`] over outcomes given as (kind, stored data text), as an export holds them.
pub fn revealed_in<'a>(outcomes: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<ChainSecret> {
    outcomes
        .into_iter()
        .filter(|(kind, _)| *kind == "battle")
        .find_map(|(_, data)| serde_json::from_value::<ChainSecret>(data_of(data).get("sealed_delay")?.clone()).ok())
}

/// Battles among the stored outcomes that reveal no chain secret.
pub fn unsealed_battles(outcomes: &[Outcome]) -> usize {
    unsealed_battles_in(outcomes.iter().map(|o| (o.kind.as_str(), o.data.as_str())))
}

/// [`unsealed_battles`] over outcomes given as (kind, stored data text).
pub fn unsealed_battles_in<'a>(outcomes: impl IntoIterator<Item = (&'a str, &'a str)>) -> usize {
    outcomes.into_iter().filter(|(kind, data)| *kind == "battle" && data_of(data).get("sealed_delay").is_none()).count()
}

/// What the audit knows of a campaign's chains as it walks the log: the next draw, and each
/// chain's published `s_0`.
#[derive(Debug, Clone, Default)]
pub struct ChainTrack {
    next_draw: u64,
    length: u64,
    commitments: BTreeMap<u64, String>,
}

impl ChainTrack {
    pub fn new(settings: &CampaignSettings) -> Self {
        let mut commitments = BTreeMap::new();
        let length = settings.result_chain.as_ref().map_or(1, |c| c.length.max(1));
        if let Some(chain) = &settings.result_chain {
            commitments.insert(0, chain.commitment.clone());
        }
        Self { next_draw: 1, length, commitments }
    }

    /// Checks the next revealed secret, in log order, and learns the next chain's `s_0` when it
    /// publishes one. Every problem found, in words.
    pub fn check(&mut self, secret: &ChainSecret) -> Vec<String> {
        let mut problems = check_secret(secret, self.length, self.commitments.get(&secret.chain).map(String::as_str));
        if secret.draw != self.next_draw {
            problems.push(format!("draw {} out of order: the campaign's next draw is {}", secret.draw, self.next_draw));
        }
        if let Some(next) = &secret.next_commitment {
            self.commitments.insert(secret.chain + 1, next.clone());
        }
        self.next_draw = secret.draw + 1;
        problems
    }
}

/// The checks one revealed secret passes on its own: its place in the chain, its text, the
/// `s_0` it leads to (`published`, when known) and a next chain's `s_0` only with a chain's last
/// secret.
pub fn check_secret(secret: &ChainSecret, length: u64, published: Option<&str>) -> Vec<String> {
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
