//! The audit: every number a post gave, recomputed from the stored log, with the working.

use adjutant_rules::dice::{stamp_text, DiceStream};
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
use crate::log::audit::{chain_up_to, replay_from, replay_post, Prefix};
use crate::log::replay::Check;
use crate::routes::shared::{load_campaign, load_post};
use crate::sealed_delay;
use crate::views::{stamp_numbers, CampaignAudit, ChainAudit, DiceStreamAudit, PostAudit, SealedDelayAudit};
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
        (Some(a), Some(w)) => Some(if w.seq > a.seq { w } else { a }),
        (a, w) => a.or(w),
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

pub async fn audit_of(
    state: &AppState,
    campaign: &LoadedCampaign,
    post: &Post,
    stored_outcomes: &[adjutant_store::Outcome],
    fresh: bool,
) -> ApiResult<PostAudit> {
    let numbers = stamp_numbers(campaign, post.stamp);
    let r = &numbers.result_number;
    let first = r.first_digit as usize;
    let decimals = r.sqrt.split('.').nth(1).unwrap_or_default();
    let taken = decimals.get(first - 1..first + 1).unwrap_or_default();
    let mut steps = vec![
        format!(
            "stamp {} is {} on the campaign clock ({}, {})",
            stamp_text(post.stamp),
            numbers.time_of_day,
            campaign.settings.time_zone,
            campaign.settings.clock
        ),
        format!("N = {} (hours, minutes and seconds counted as one number)", r.n),
        format!("√{} = {}…", r.n, r.sqrt),
        format!("decimals {} and {} are \"{taken}\": result number {}", first, first + 1, r.result),
        format!("exactly: ⌊√({} × 10^{})⌋ mod 100 = {}", r.n, 2 * (first + 1), r.result),
        format!("check with: {}", r.bc),
        format!("milliseconds {} mod 6 = {}", numbers.milliseconds, numbers.milliseconds_mod_6),
    ];

    let mut problems = Vec::new();
    let sealed_delay = if sealed_delay::applies(campaign, &post.kind) {
        sealed_audit(campaign, post, stored_outcomes, &mut steps, &mut problems)
    } else {
        None
    };

    let stream = DiceStream::new(&post.campaign_id.to_string(), post.seq as u64, post.stamp);
    let block_0 = hex::encode(DiceStream::block_of(stream.text(), 0));
    let dice_stream = DiceStreamAudit {
        command: format!("printf '%s' '{}/0' | sha256sum", stream.text()),
        text: stream.text().to_owned(),
        block_0,
    };

    let mut prefix = if fresh { None } else { verified_prefix(state, post.campaign_id) };
    // A walk from post 1 through many posts is a replay's worth of work: one at a time, with the
    // whole-campaign audits; one that waited goes on from what was verified meanwhile.
    let _turn = if post.seq > crate::cache::SHORT_WALK {
        state.caches.turn_unless_known(&mut prefix, fresh, || verified_prefix(state, post.campaign_id)).await
    } else {
        None
    };
    let walked = prefix.as_ref().is_none_or(|p| p.seq < post.seq);
    let walk = chain_up_to(&*state.store, &state.keys, &campaign.campaign, post, prefix).await?;
    if walked && walk.problems.is_empty() && walk.last_recomputed.as_deref() == Some(post.hash.as_str()) {
        state.caches.remember_chain(post.campaign_id, post.seq, post.hash.clone());
    }
    let chain_ok = walk.problems.is_empty();
    problems.splice(0..0, walk.problems);
    let recomputed_hash = walk.last_recomputed.unwrap_or_default();

    let found = replay_post(&*state.store, campaign, post, stored_outcomes).await?;
    // A battle that reveals no secret is the sealed delay's problem, told above.
    let outcomes_match = !found.iter().any(|f| f.check != Check::SealedDelay);
    if !outcomes_match {
        problems.push(format!(
            "post {}: the stored outcomes or state differ from what the rules give when the post is replayed",
            post.seq
        ));
    }
    Ok(PostAudit {
        campaign_id: post.campaign_id,
        seq: post.seq,
        stamp: stamp_text(post.stamp),
        time_zone: campaign.settings.time_zone.clone(),
        clock: campaign.settings.clock.to_string(),
        numbers,
        steps,
        dice_stream,
        chain: ChainAudit {
            checked_through: post.seq,
            stored_hash: post.hash.clone(),
            recomputed_hash,
            ok: chain_ok,
            checked_now: walk.checked,
        },
        sealed_delay,
        outcomes_match,
        ok: problems.is_empty(),
        problems,
    })
}

/// A sealed-delay battle's working, from the secret its stored outcome revealed: each step
/// added to `steps`, each failed check to `problems`.
fn sealed_audit(
    campaign: &LoadedCampaign,
    post: &Post,
    stored: &[adjutant_store::Outcome],
    steps: &mut Vec<String>,
    problems: &mut Vec<String>,
) -> Option<SealedDelayAudit> {
    if sealed_delay::unsealed_battles(stored) > 0 {
        problems.push(format!("post {}: a battle of this sealed-delay campaign reveals no chain secret", post.seq));
    }
    let secret = sealed_delay::revealed(stored)?;
    let published = campaign.settings.result_chain.as_ref();
    let length = published.map_or(1, |c| c.length);
    // Chain 0's s_0 is in the campaign's settings; a later chain's was published by the draw
    // that used the chain before's last secret, which the campaign audit follows.
    let known =
        if secret.chain == 0 { published.map(|c| c.commitment.as_str()) } else { Some(secret.commitment.as_str()) };
    let found = sealed_delay::check_secret(&secret, length, known);
    let links_to_published = found.is_empty();
    problems.extend(found.into_iter().map(|p| format!("post {}: {p}", post.seq)));
    let working = secret.delay(&post.hash, post.stamp);
    let result_time = working.result_time().unwrap_or(post.stamp);
    let numbers = stamp_numbers(campaign, result_time);
    let r = &numbers.result_number;
    let commands = working.commands();
    // The stamp's own result number is not this battle's: the steps are the sealed delay's.
    steps.clear();
    steps.extend([
        format!(
            "sealed delay: this is the campaign's draw {} (chain {}, secret {} of {length}); it reveals s_k = {}",
            working.draw, working.chain, working.position, working.secret
        ),
        format!(
            "SHA-256 of the 64 characters of s_k is {} (s_(k-1)); applied {} times it gives the chain's s_0 {}",
            working.previous, working.position, working.commitment
        ),
        format!("check with: {}", commands[0]),
        format!("SHA-256 of s_k followed by the post's hash {} is {}", working.post_hash, working.digest),
        format!("check with: {}", commands[1]),
        format!(
            "its first 8 bytes {} are {}; mod 60000 that is a delay of {} ms",
            working.first_8_bytes, working.first_8_bytes_decimal, working.delay_ms
        ),
        format!("check with: {} and {}", commands[2], commands[3]),
        format!(
            "stamp {} + {} ms = result time {}, which is {} on the campaign clock ({}, {})",
            working.stamp,
            working.delay_ms,
            working.result_time,
            numbers.time_of_day,
            campaign.settings.time_zone,
            campaign.settings.clock
        ),
        format!("N = {}, √{} = {}…", r.n, r.n, r.sqrt),
        format!(
            "exactly: ⌊√({} × 10^{})⌋ mod 100 = {}: result number {}",
            r.n,
            2 * (r.first_digit + 1),
            r.result,
            r.result
        ),
        format!("check with: {}", r.bc),
    ]);
    if let Some(next) = &working.next_commitment {
        steps.push(format!("this draw used its chain's last secret and publishes the next chain's s_0: {next}"));
    }
    Some(SealedDelayAudit { working, result_time_numbers: numbers, commands, links_to_published })
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
    if fresh {
        state.caches.forget_audit(id);
    }
    let mut known = state.caches.audit(id);
    let _turn = state.caches.turn_unless_known(&mut known, fresh, || state.caches.audit(id)).await;
    let (audit, checkpoint) = replay_from(&*state.store, &state.keys, campaign, known.as_deref()).await?;
    state.caches.remember_audit(id, checkpoint);
    Ok(audit)
}
