//! The fairness report: are a side's attacks winning more often than their victory numbers
//! promise, are result numbers spread evenly, are posts bunched at particular seconds?
//!
//! Post-time result numbers can be aimed: a player who knows the victory number can work out
//! which seconds of the coming minute give a low result and post then. The report cannot stop
//! that; it shows it. See `docs/fairness.md`.

use std::collections::{BTreeMap, HashMap};

use adjutant_rules::fairness::{self, Attack, PlayerFairness, PostTiming, ResultSpread};
use adjutant_rules::outcome::OutcomeData;
use adjutant_rules::result_time::ResultTime;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::campaign::LoadedCampaign;
use crate::error::{ApiResult, AppError};
use crate::extract::ApiPath;
use crate::log::kinds::OutcomeKind;
use crate::routes::shared::load_campaign;
use crate::views::StoredOutcome;
use crate::AppState;

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct FairnessReport {
    pub campaign_id: Uuid,
    /// The campaign's `result_time`: `post` (a battle's result number is its attack's stamp, so
    /// wins above expectation or bunched seconds may be aimed) or `sealed_delay` (the stamp plus a
    /// delay the poster could not know: post seconds no longer choose result numbers).
    #[schema(example = "post")]
    pub result_time: String,
    /// Battles counted (void posts left out).
    pub battles: usize,
    /// One report per side: attacker wins observed against expected (Σ (victory+1)/100, exact
    /// Poisson-binomial p-value), the spread of its result numbers against uniform, and the
    /// seconds its result-fixing posts were sent at.
    #[schema(value_type = Vec<Object>)]
    pub players: Vec<PlayerFairness>,
    /// All result numbers of the campaign against uniform 0–99.
    #[schema(value_type = Object)]
    pub result_spread: ResultSpread,
    /// Every post's second-of-minute and millisecond mod 6 against uniform.
    #[schema(value_type = Object)]
    pub post_timing: PostTiming,
    /// How to read it.
    pub method: String,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(fairness_report))
}

/// The campaign's fairness report.
#[utoipa::path(get, path = "/v1/campaigns/{id}/fairness", tag = "audit",
    params(("id" = Uuid, Path, description = "campaign id")),
    responses((status = 200, body = FairnessReport), (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn fairness_report(State(state): State<AppState>, ApiPath(id): ApiPath<Uuid>) -> ApiResult<Response> {
    let campaign = load_campaign(&state, id).await?;
    let bytes = fairness_json(&state, &campaign).await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], bytes.to_vec()).into_response())
}

/// The report as JSON, remembered by the hash of the log's last post (it changes only with a
/// new post); the API answers it and the fairness page reads it.
pub async fn fairness_json(state: &AppState, campaign: &LoadedCampaign) -> ApiResult<std::sync::Arc<Vec<u8>>> {
    let id = campaign.campaign.id;
    let head = state.store.head(id).await?.map(|post| post.hash).unwrap_or_default();
    Ok(match state.caches.at_head(id, "fairness", &head) {
        Some(bytes) => bytes,
        None => {
            let report = fairness_of(state, id, campaign.settings.result_time).await?;
            let bytes = serde_json::to_vec(&report).map_err(|e| AppError::Internal(e.to_string()))?;
            state.caches.remember_at_head(id, "fairness", &head, bytes)
        }
    })
}

/// The report, computed from the whole log.
pub async fn fairness_of(state: &AppState, id: Uuid, result_time: ResultTime) -> ApiResult<FairnessReport> {
    let void = crate::log::read::void_posts(&*state.store, id).await?;

    let mut stamps: HashMap<i64, DateTime<Utc>> = HashMap::new();
    let mut all_stamps = Vec::new();
    let mut after = 0;
    loop {
        let page = state.store.posts(id, after, 1000).await?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        for post in page.iter().filter(|p| !void.contains(&p.seq)) {
            stamps.insert(post.seq, post.stamp);
            all_stamps.push(post.stamp);
        }
    }

    let mut by_side: BTreeMap<String, (Vec<Attack>, Vec<DateTime<Utc>>)> = BTreeMap::new();
    let mut results = Vec::new();
    let mut after = 0;
    loop {
        let page = state.store.outcomes(id, after, 1000).await?;
        let Some(last) = page.last() else { break };
        after = last.position;
        for outcome in page.iter().filter(|o| OutcomeKind::of(&o.kind) == OutcomeKind::Battle && !void.contains(&o.seq))
        {
            let Some(OutcomeData::Battle(battle)) = StoredOutcome::of(outcome).typed(&outcome.kind) else {
                continue;
            };
            let (victory, result) = (battle.numbers.victory, battle.numbers.result);
            let entry = by_side.entry(battle.attacker_side.key().to_owned()).or_default();
            entry.0.push(Attack { victory, result });
            if let Some(stamp) = stamps.get(&outcome.seq) {
                entry.1.push(*stamp);
            }
            results.push(result);
        }
    }
    let players =
        by_side.iter().map(|(side, (attacks, stamps))| fairness::player_fairness(side, attacks, stamps)).collect();
    let mode_note = if result_time == ResultTime::SealedDelay {
        " This campaign's result times are sealed: each battle's result number is the seed's rule on its stamp plus a \
         delay from the campaign's hash chain, so the seconds posts were sent at do not choose result numbers; wins \
         far above expectation would point elsewhere (a leaked chain secret, a broken rule)."
    } else {
        " This campaign's result times are its posts' stamps (the seed's rule): a side that aims its attacks at \
         winning seconds wins more often than expected, and its posts bunch at those seconds."
    };
    Ok(FairnessReport {
        campaign_id: id,
        result_time: serde_json::to_value(result_time)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        battles: results.len(),
        players,
        result_spread: fairness::result_spread(&results),
        post_timing: fairness::post_timing(&all_stamps),
        method: "Attacker wins: each attack wins with probability (victory + 1)/100 if result numbers are fair; the \
                 number of wins then follows a Poisson-binomial distribution, and the p-value is the exact two-sided \
                 probability of a count no more likely than the one observed. Spreads: chi-square against uniform. \
                 A small p-value (below 0.01) is worth a moderator's look, not proof: see docs/fairness.md."
            .to_owned()
            + mode_note,
    })
}
