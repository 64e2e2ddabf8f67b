//! Sealed-delay campaigns as the audit reads them: the chain secret each battle revealed, and
//! whether it leads back to a published `s_0` in the right order (`adjutant_rules::result_time`
//! has the arithmetic, docs/fairness.md the why).

use std::collections::BTreeMap;

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
        .filter(|(kind, _)| OutcomeKind::of(kind) == OutcomeKind::Battle)
        .find_map(|(_, data)| serde_json::from_value::<ChainSecret>(data_of(data).get("sealed_delay")?.clone()).ok())
}

/// Battles among the stored outcomes that reveal no chain secret.
pub fn unsealed_battles(outcomes: &[Outcome]) -> usize {
    unsealed_battles_in(outcomes.iter().map(|o| (o.kind.as_str(), o.data.as_str())))
}

/// [`unsealed_battles`] over outcomes given as (kind, stored data text).
pub fn unsealed_battles_in<'a>(outcomes: impl IntoIterator<Item = (&'a str, &'a str)>) -> usize {
    outcomes
        .into_iter()
        .filter(|(kind, data)| {
            OutcomeKind::of(kind) == OutcomeKind::Battle && data_of(data).get("sealed_delay").is_none()
        })
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
    let draw = store.count_outcomes_of_kind(id, OutcomeKind::Battle.as_str()).await? as u64 + 1;
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
