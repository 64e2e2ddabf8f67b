//! The audits over HTTP: a post's numbers recomputed with the working, and the whole campaign
//! replayed (`log::audit` works them out; this module adds the server's memory of what it verified).

use adjutant_store::Post;
use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::campaign::LoadedCampaign;
use crate::error::ApiResult;
use crate::extract::ApiPath;
use crate::log::audit::{post_audit, replay_from, Prefix};
use crate::routes::shared::{load_campaign, load_post};
use crate::views::{CampaignAudit, PostAudit};
use crate::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(audit_post)).routes(routes!(audit_campaign))
}

/// The longest start of the chain this server verified before: by a whole-campaign audit or
/// by a per-post audit.
fn verified_prefix(state: &AppState, campaign_id: Uuid) -> Option<Prefix> {
    let audited = state.caches.audit(campaign_id).map(|c| Prefix {
        seq: c.seq(),
        hash: c.head_hash().to_owned(),
        problems: c.chain_differences().map(|d| format!("post {}: {}", d.seq, d.detail)).collect(),
    });
    let walked = state.caches.chain(campaign_id).map(|(seq, hash)| Prefix { seq, hash, problems: Vec::new() });
    match (audited, walked) {
        // A longer walk goes on from the audit's prefix: what the audit found broken in it (a
        // fresh audit's finding, say) still stands.
        (Some(a), Some(w)) if w.seq > a.seq => Some(Prefix { problems: a.problems, ..w }),
        (Some(a), _) => Some(a),
        (None, w) => w,
    }
}

/// Recomputes everything a post gave and checks the hash chain up to it.
///
/// The chain is checked from the prefix this server verified before (by this audit or the
/// whole-campaign one), so a repeat audit reads only the posts added since, plus the post and
/// the one before it; `?fresh=true` walks from post 1. A walk of more than 1,000 posts from
/// post 1 runs one at a time with the whole-campaign replays; one that waited goes on from the
/// prefix verified meanwhile (unless it is fresh).
#[utoipa::path(get, path = "/v1/campaigns/{id}/posts/{seq}/audit", tag = "audit",
    params(("id" = Uuid, Path, description = "campaign id"), ("seq" = i64, Path, description = "sequence number"), AuditQuery),
    responses((status = 200, body = PostAudit), (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn audit_post(
    State(state): State<AppState>,
    ApiPath((id, seq)): ApiPath<(Uuid, i64)>,
    crate::extract::ApiQuery(q): crate::extract::ApiQuery<AuditQuery>,
) -> ApiResult<Json<PostAudit>> {
    let campaign = load_campaign(&state, id).await?;
    let (post, stored_outcomes) = load_post(&state, &campaign, seq).await?;
    Ok(Json(audit_of(&state, &campaign, &post, &stored_outcomes, q.fresh == Some(true)).await?))
}

/// The per-post audit with this server's memory of the chain: it goes on from the prefix
/// verified before (none when `fresh`), waits its turn for a long walk from post 1, and
/// remembers a chain it walked and found whole.
pub async fn audit_of(
    state: &AppState,
    campaign: &LoadedCampaign,
    post: &Post,
    stored_outcomes: &[adjutant_store::Outcome],
    fresh: bool,
) -> ApiResult<PostAudit> {
    let mut prefix = if fresh { None } else { verified_prefix(state, post.campaign_id) };
    // A walk from post 1 through many posts is a replay's worth of work: one at a time, with the
    // whole-campaign audits; one that waited goes on from what was verified meanwhile.
    let _turn = if post.seq > crate::cache::SHORT_WALK {
        state.caches.turn_unless_known(&mut prefix, fresh, || verified_prefix(state, post.campaign_id)).await
    } else {
        None
    };
    let walked = prefix.as_ref().is_none_or(|p| p.seq < post.seq);
    let started = std::time::Instant::now();
    let audit = post_audit(&*state.store, &state.keys, campaign, post, stored_outcomes, prefix).await?;
    state.metrics.audited("post", audit.ok, started.elapsed());
    if walked && audit.chain.ok && audit.chain.recomputed_hash == post.hash {
        state.caches.remember_chain(post.campaign_id, post.seq, post.hash.clone());
    }
    Ok(audit)
}

/// `?fresh=true`: replay the whole log from post 1, trusting nothing remembered.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Replay from post 1 instead of going on from the prefix this server verified before.
    #[serde(default)]
    pub fresh: Option<bool>,
}

/// Replays the whole log through the rules: every hash link, every result number and
/// reinforcement roll, every die, every stored outcome and state snapshot.
///
/// Incremental: the server remembers, per campaign, the last post it verified and everything
/// the replay needs from there, so a repeat audit replays only the posts added since (the new
/// posts' links to the verified prefix are checked, so tampering with them is found). The
/// prefix is trusted as verified earlier in this server's life; `?fresh=true` replays all.
/// Replays from post 1 run one at a time: another waits for the one under way, then goes on
/// from what it verified (a fresh one replays all again).
#[utoipa::path(get, path = "/v1/campaigns/{id}/audit", tag = "audit",
    params(("id" = Uuid, Path, description = "campaign id"), AuditQuery),
    responses((status = 200, body = CampaignAudit), (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn audit_campaign(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    crate::extract::ApiQuery(q): crate::extract::ApiQuery<AuditQuery>,
) -> ApiResult<Json<CampaignAudit>> {
    let campaign = load_campaign(&state, id).await?;
    Ok(Json(audit_incrementally(&state, &campaign, q.fresh == Some(true)).await?))
}

/// The whole-campaign audit, going on from the prefix verified before (none when `fresh`), and
/// remembering where it stopped. A replay from post 1 waits for a permit
/// ([`crate::cache::COLD_AUDITS`]); one that is not fresh then goes on from what the audit before
/// it verified meanwhile.
pub async fn audit_incrementally(state: &AppState, campaign: &LoadedCampaign, fresh: bool) -> ApiResult<CampaignAudit> {
    let id = campaign.campaign.id;
    // A fresh audit trusts nothing remembered, yet leaves what others go on from in place until
    // its own replay, at least as long and with any difference it found, takes its place.
    let mut known = if fresh { None } else { state.caches.audit(id) };
    let _turn = state.caches.turn_unless_known(&mut known, fresh, || state.caches.audit(id)).await;
    let started = std::time::Instant::now();
    let (audit, checkpoint) = replay_from(&*state.store, &state.keys, campaign, known.as_deref()).await?;
    state.metrics.audited("campaign", audit.ok, started.elapsed());
    state.caches.remember_audit(id, checkpoint);
    Ok(audit)
}
