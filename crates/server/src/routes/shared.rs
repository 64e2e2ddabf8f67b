//! What the route modules share: the campaign and the post a path names, and the size of a page
//! a query asks for. Route modules take these from here, never from one another.

use tracing::Instrument;
use uuid::Uuid;

use crate::campaign::LoadedCampaign;
use crate::error::{ApiResult, AppError};
use crate::AppState;

/// The campaign `path.id` names, with its scenario or ruleset loaded; 404 when there is none.
pub async fn load_campaign(state: &AppState, id: Uuid) -> ApiResult<LoadedCampaign> {
    let read = state.store.campaign(id).instrument(adjutant_store::append::step("campaign"));
    let campaign = read.await?.ok_or_else(|| AppError::not_found("path.id", format!("no campaign {id}")))?;
    Ok(LoadedCampaign::load(campaign, &state.scenarios)?)
}

/// A page size: 1 to 100, 50 when not given.
pub fn page_limit(limit: Option<i64>) -> ApiResult<i64> {
    match limit {
        None => Ok(50),
        Some(n) if (1..=100).contains(&n) => Ok(n),
        Some(_) => Err(AppError::bad_request("query.limit", "paging.limit", "limit is 1 to 100")),
    }
}

/// A post of the campaign and its outcomes; 404 when there is none.
pub async fn load_post(
    state: &AppState,
    campaign: &LoadedCampaign,
    seq: i64,
) -> ApiResult<(adjutant_store::Post, Vec<adjutant_store::Outcome>)> {
    let id = campaign.campaign.id;
    let post =
        state.store.post(id, seq).await?.ok_or_else(|| AppError::not_found("path.seq", format!("no post {seq}")))?;
    let outcomes = state.store.outcomes_of_post(id, seq).await?;
    Ok((post, outcomes))
}
