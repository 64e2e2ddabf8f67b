//! What the route modules share: the campaign and the post a path names, and the size of a page
//! a query asks for. Route modules take these from here, never from one another.

use std::sync::Arc;

use tracing::Instrument;
use uuid::Uuid;

use crate::campaign::LoadedCampaign;
use crate::error::{ApiResult, AppError};
use crate::AppState;

/// The campaign `path.id` names, with its scenario or ruleset loaded; 404 when there is none.
/// Read from the store every time: what a reader, an audit or an export shows is what is stored.
pub async fn load_campaign(state: &AppState, id: Uuid) -> ApiResult<LoadedCampaign> {
    read_campaign(state, id).instrument(adjutant_store::append::step("campaign")).await
}

/// The campaign a new post goes to: as [`load_campaign`], but read once per process and then
/// kept (`Caches::campaign`), since a campaign's creation record never changes (the database
/// refuses an update). Should a row be altered behind the server's back, posts go on under the
/// record as first read, and the audit, which reads the stored row, finds the difference.
pub async fn campaign_to_post_to(state: &AppState, id: Uuid) -> ApiResult<Arc<LoadedCampaign>> {
    async {
        if let Some(loaded) = state.caches.campaign(id) {
            return Ok(loaded);
        }
        let loaded = Arc::new(read_campaign(state, id).await?);
        state.caches.remember_campaign(loaded.clone());
        Ok(loaded)
    }
    .instrument(adjutant_store::append::step("campaign"))
    .await
}

async fn read_campaign(state: &AppState, id: Uuid) -> ApiResult<LoadedCampaign> {
    let campaign =
        state.store.campaign(id).await?.ok_or_else(|| AppError::not_found("path.id", format!("no campaign {id}")))?;
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

/// The names of a campaign's players, for naming who made each post.
pub async fn authors(state: &AppState, id: Uuid) -> ApiResult<crate::routes::posts::Authors> {
    let players = state
        .store
        .campaign_principals(id, adjutant_store::PrincipalKind::Player, crate::routes::tokens::MAX_PLAYERS_LISTED)
        .await?;
    Ok(crate::routes::posts::Authors { players: players.into_iter().map(|(p, _)| (p.id, p.name)).collect() })
}
