//! The campaign log: players append posts, anyone reads them.

use adjutant_rules::chain::Link;
use adjutant_store::{AppendRequest, Appended, BoxError, Decision, PrincipalKind, StoreError, Tail};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use utoipa::IntoParams;
use uuid::Uuid;

use crate::auth::Caller;

use crate::campaign::{
    decide, kinds, parse_side, Context, LoadedCampaign, Seal, SealBook, VoidSet, RESULT_FIXING_KINDS,
};
use crate::error::{ApiResult, AppError};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::routes::campaigns::new_top_secret;
use crate::routes::campaigns::{load_campaign, page_limit};
use crate::views::{NewPost, PostPage, PostView};
use crate::AppState;
use adjutant_rules::result_time::{self, ChainSecret, ResultTime};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/campaigns/{id}/posts", get(list_posts).post(create_post))
        .route("/v1/campaigns/{id}/posts/{seq}", get(get_post))
}

/// The header that makes a post safe to send again.
pub const IDEMPOTENCY_KEY: &str = "Idempotency-Key";

fn idempotency_key(headers: &HeaderMap) -> ApiResult<String> {
    let missing = || {
        AppError::bad_request(
            IDEMPOTENCY_KEY,
            "idempotency.key_required",
            "send an Idempotency-Key header (1 to 200 visible ASCII characters, e.g. a UUID) so a retried post is not stored twice",
        )
    };
    let value = headers.get(IDEMPOTENCY_KEY).ok_or_else(missing)?;
    let key = value.to_str().map_err(|_| missing())?;
    if key.is_empty() || key.len() > 200 || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(missing());
    }
    Ok(key.to_owned())
}

/// A post kind: a lower-case word with underscores.
fn check_kind(kind: &str) -> ApiResult<()> {
    let ok = (1..=40).contains(&kind.len())
        && kind.starts_with(|c: char| c.is_ascii_lowercase())
        && kind.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(AppError::unprocessable(
            "body.kind",
            "post.kind",
            "a post kind is a lower-case word such as `move` or `attack`",
        ))
    }
}

/// Appends a post. The server stamps it; nothing the client sends sets the time.
#[utoipa::path(post, path = "/v1/campaigns/{id}/posts", tag = "posts", request_body = NewPost,
    params(("id" = Uuid, Path, description = "campaign id"),
           ("Idempotency-Key" = String, Header, description = "unique per post, 1 to 200 visible ASCII characters (e.g. a UUID); the same key and body return the stored post",
            min_length = 1, max_length = 200, pattern = "^[!-~]+$")),
    security(("bearer" = [])),
    responses((status = 201, description = "stored now", body = PostView),
              (status = 200, description = "stored before under this Idempotency-Key", body = PostView),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn create_post(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<Uuid>,
    headers: HeaderMap,
    ApiJson(req): ApiJson<NewPost>,
) -> ApiResult<(StatusCode, HeaderMap, Json<PostView>)> {
    let campaign = load_campaign(&state, id).await?;
    let (author, side) = match &caller {
        Caller::Anonymous => return Err(AppError::Unauthorized("posting needs a player or moderator token".into())),
        Caller::Principal(p) if p.kind == PrincipalKind::Player => {
            if p.campaign_id != Some(id) {
                return Err(AppError::forbidden("post.own_campaign", "this player token belongs to another campaign"));
            }
            (p.clone(), p.side.clone())
        }
        Caller::Principal(p) if p.kind == PrincipalKind::Moderator => {
            caller.require_campaign_moderator(campaign.campaign.moderator_id)?;
            (p.clone(), None)
        }
        _ => return Err(AppError::forbidden("post.players_only", "only the campaign's players and moderator post")),
    };
    if let Some(asked) = &req.side {
        if side.is_none() {
            return Err(AppError::forbidden("post.moderator_side", "the moderator posts as umpire, for no side"));
        }
        if parse_side(asked) != side.as_deref() {
            return Err(AppError::forbidden("post.own_side", "a player posts only for their own side"));
        }
    }
    let key = idempotency_key(&headers)?;
    check_kind(&req.kind)?;
    if !req.body.is_object() {
        return Err(AppError::unprocessable("body.body", "post.body", "the body is a JSON object"));
    }
    crate::free_text::check_json("body.body", &req.body)?;
    // Canonical JSON: serde_json's map keeps keys sorted, and `to_string` writes no white space.
    let asked = serde_json::to_string(&req.body).map_err(|e| AppError::Internal(e.to_string()))?;
    let request_hash =
        hex::encode(Sha256::digest(format!("{id}\n{}\n{}\n{asked}", req.kind, side.as_deref().unwrap_or("-"))));
    let body = if req.kind == kinds::SEAL { salted(&req.body)? } else { asked };

    let over_quota = player_quota(&state, &author, id, &req.kind).await?;

    let genesis = crate::campaign::genesis(&campaign.campaign);
    let request = AppendRequest { campaign_id: id, author_id: author.id, idempotency_key: key, request_hash };
    // Posts whose verdict reads further back than the tail (seals, rollbacks) read it before
    // the write transaction; if the log moved on meanwhile, they read it again.
    let mut attempts = 0;
    let appended = loop {
        let context = decision_context(&state, &campaign, &req).await?;
        let decide_post = |tail: &Tail| -> Result<Decision, BoxError> {
            // Refused here, not before: a retry of a post stored before is replayed, never
            // refused for the quota it spent itself.
            if let Some(refusal) = &over_quota {
                return Err(Box::new(AppError::from(refusal.clone())));
            }
            if context.as_of.is_some_and(|as_of| tail.next_seq != as_of + 1) {
                return Err(Box::new(LogMovedOn));
            }
            // The stamp is taken inside the write transaction, so stamps never run backwards
            // along the log even if the machine's clock is stepped back.
            let now = state.clock.now();
            let stamp = tail.prev_stamp.map_or(now, |prev| now.max(prev));
            let prev_hash = tail.prev_hash.clone().unwrap_or_else(|| genesis.clone());
            let campaign_text = id.to_string();
            let author_text = author.id.to_string();
            let hash = Link {
                prev_hash: &prev_hash,
                campaign_id: &campaign_text,
                seq: tail.next_seq,
                stamp,
                author_id: &author_text,
                side: side.as_deref(),
                kind: &req.kind,
                body: &body,
            }
            .hash();
            let mut post = adjutant_store::Post {
                campaign_id: id,
                seq: tail.next_seq,
                stamp,
                author_id: author.id,
                side: side.clone(),
                kind: req.kind.clone(),
                body: body.clone(),
                prev_hash,
                hash,
                receipt: None,
            };
            // The receipt is signed before the post is written, so no post is stored unsigned.
            post.receipt = Some(state.keys.sign(&post));
            let effects = decide(&campaign, tail, &post, &context).map_err(|e| Box::new(e) as BoxError)?;
            Ok(Decision { post, outcomes: effects.outcomes, snapshot: effects.snapshot })
        };
        match state.store.append_post(request.clone(), &decide_post).await {
            Err(StoreError::Refused(e)) if e.is::<LogMovedOn>() => {
                attempts += 1;
                if attempts > 16 {
                    return Err(AppError::Unavailable("the campaign is too busy to decide this post; retry".into()));
                }
            }
            other => break other?,
        }
    };
    let mut headers = HeaderMap::new();
    let (status, post, outcomes) = match appended {
        Appended::New(post, outcomes) => (StatusCode::CREATED, post, outcomes),
        Appended::Replayed(post, outcomes) => {
            headers.insert("Idempotent-Replayed", HeaderValue::from_static("true"));
            (StatusCode::OK, post, outcomes)
        }
    };
    if post.campaign_id != id {
        return Err(AppError::unprocessable(
            IDEMPOTENCY_KEY,
            "idempotency.key_reused",
            "this Idempotency-Key was already used for another campaign",
        ));
    }
    let location = format!("/v1/campaigns/{id}/posts/{}", post.seq);
    if let Ok(value) = HeaderValue::from_str(&location) {
        headers.insert(axum::http::header::LOCATION, value);
    }
    let void = void_posts(&state, id).await?;
    Ok((status, headers, Json(PostView::of(&campaign, &post, &outcomes, void.contains(&post.seq)))))
}

/// A player's notes and seals per campaign per UTC day are limited (`notes_per_player_per_day`,
/// `seals_per_player_per_day`; 0: no limit), counted from the log: `Some(refusal)` when this
/// post would go past the limit. Moderators have no quota.
async fn player_quota(
    state: &AppState,
    author: &adjutant_store::Principal,
    campaign_id: Uuid,
    kind: &str,
) -> ApiResult<Option<QuotaSpent>> {
    let limit = match kind {
        kinds::NOTE => state.config.notes_per_player_per_day,
        kinds::SEAL => state.config.seals_per_player_per_day,
        _ => return Ok(None),
    };
    if limit == 0 || author.kind != PrincipalKind::Player {
        return Ok(None);
    }
    let now = state.clock.now();
    let day_start = now.date_naive().and_time(chrono::NaiveTime::MIN).and_utc();
    let made = state.store.count_posts_by_author(campaign_id, author.id, kind, day_start).await?;
    if made < i64::from(limit) {
        return Ok(None);
    }
    let next_day = day_start + chrono::Duration::days(1);
    Ok(Some(QuotaSpent {
        kind: kind.to_owned(),
        limit,
        retry_after_secs: u64::try_from((next_day - now).num_seconds()).unwrap_or(0).max(1),
    }))
}

/// A player's daily quota of one post kind is spent.
#[derive(Debug, Clone)]
struct QuotaSpent {
    kind: String,
    limit: u32,
    retry_after_secs: u64,
}

impl std::fmt::Display for QuotaSpent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a player makes at most {} {} posts per campaign per day (UTC); the count starts again at midnight",
            self.limit, self.kind
        )
    }
}

impl From<QuotaSpent> for AppError {
    fn from(q: QuotaSpent) -> Self {
        AppError::TooManyRequests {
            field: "body.kind".into(),
            rule: format!("quota.{}s_per_day", q.kind),
            detail: q.to_string(),
            retry_after_secs: q.retry_after_secs,
        }
    }
}

/// The log grew between reading a post's context and writing it.
#[derive(Debug)]
struct LogMovedOn;

impl std::fmt::Display for LogMovedOn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the log moved on while the post was being decided")
    }
}

impl std::error::Error for LogMovedOn {}

/// A sealed choice gets 128 random bits of salt, so its public hash does not give it away.
fn salted(body: &Value) -> ApiResult<String> {
    if body.get("salt").is_some() {
        return Err(AppError::unprocessable("body.body.salt", "seal.salt", "the server salts sealed choices itself"));
    }
    let mut salt = [0u8; 16];
    rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut salt);
    let mut body = body.clone();
    if let Some(map) = body.as_object_mut() {
        map.insert("salt".into(), Value::String(hex::encode(salt)));
    }
    serde_json::to_string(&body).map_err(|e| AppError::Internal(e.to_string()))
}

/// What a post's verdict needs from further back in the log than the tail.
async fn decision_context(state: &AppState, campaign: &LoadedCampaign, req: &NewPost) -> ApiResult<Context> {
    let id = campaign.campaign.id;
    let mut context = Context::default();
    if campaign.settings.result_time() == ResultTime::SealedDelay
        && campaign.scenario().is_some()
        && RESULT_FIXING_KINDS.contains(&req.kind.as_str())
    {
        // The draw is the count of battles so far plus one: read after the head, so a post
        // appended meanwhile sends this one round again.
        context.as_of = Some(state.store.head(id).await?.map_or(0, |post| post.seq));
        context.chain_secret = Some(next_chain_secret(state, campaign).await?);
    }
    let reads_back = match req.kind.as_str() {
        kinds::ROLLBACK | kinds::SEAL => true,
        kinds::RESOLVE => req.body.get("sealed").is_some(),
        _ => false,
    };
    if !reads_back {
        return Ok(context);
    }
    // Read the head first: if anything is appended after this, the write sees it and retries.
    if context.as_of.is_none() {
        context.as_of = Some(state.store.head(id).await?.map_or(0, |post| post.seq));
    }
    let void = void_posts(state, id).await?;
    if req.kind == kinds::ROLLBACK {
        let to_seq = req.body.get("to_seq").and_then(Value::as_i64).unwrap_or(-1);
        context.rollback_snapshot = if to_seq > 0 { state.store.snapshot_at(id, to_seq).await? } else { None };
    } else {
        context.seals = seals(state, id, &void, i64::MAX).await?;
    }
    context.void = void;
    Ok(context)
}

/// The chain secret the campaign's next battle uses: draw k = battles so far (void posts'
/// included: a revealed secret is never used again) + 1. When that is a chain's last secret, the
/// next chain's top secret is kept now, so the draw can publish its `s_0`.
async fn next_chain_secret(state: &AppState, campaign: &LoadedCampaign) -> ApiResult<ChainSecret> {
    let id = campaign.campaign.id;
    let Some(published) = &campaign.settings.result_chain else {
        return Err(AppError::Internal(format!("sealed-delay campaign {id} has no result_chain")));
    };
    let length = published.length.max(1);
    let draw = state.store.count_outcomes_of_kind(id, BATTLE).await? as u64 + 1;
    let (chain, position) = result_time::position_of(draw, length);
    let secrets = state.store.campaign_secrets(id).await?;
    let kept = |n: u64| secrets.iter().find(|(c, _)| *c as u64 == n).map(|(_, s)| s.clone());
    let top = match kept(chain) {
        Some(top) => top,
        // Chain 0 is kept at creation, each next one before the draw that publishes its s_0.
        None => {
            return Err(AppError::Internal(format!("sealed-delay campaign {id} has no kept secret for chain {chain}")))
        }
    };
    let next_top = match (position == length, kept(chain + 1)) {
        (false, _) => None,
        (true, Some(next)) => Some(next),
        (true, None) => Some(state.store.keep_campaign_secret(id, chain as i64 + 1, &new_top_secret()).await?),
    };
    let secret = ChainSecret::from_top(draw, length, &top, next_top.as_deref());
    if chain == 0 && secret.commitment != published.commitment {
        return Err(AppError::Internal(format!("campaign {id}: the kept secret does not lead to the published s_0")));
    }
    Ok(secret)
}

/// The outcome kind of a fought battle: one per draw of a sealed-delay chain.
pub const BATTLE: &str = "battle";

/// The sealed choices of a campaign before post `before`, void ones left out.
pub async fn seals(state: &AppState, campaign_id: Uuid, void: &VoidSet, before: i64) -> ApiResult<SealBook> {
    Ok(state
        .store
        .posts_of_kind(campaign_id, kinds::SEAL)
        .await?
        .iter()
        .filter(|p| p.seq < before && !void.contains(&p.seq))
        .filter_map(Seal::of)
        .collect())
}

/// Hides the choice and salt of sealed posts whose topic is not revealed yet.
pub async fn redact(state: &AppState, campaign_id: Uuid, void: &VoidSet, views: &mut [PostView]) -> ApiResult<()> {
    if !views.iter().any(|v| v.kind == kinds::SEAL) {
        return Ok(());
    }
    let revealed = seals(state, campaign_id, void, i64::MAX).await?.revealed_topics();
    for view in views.iter_mut().filter(|v| v.kind == kinds::SEAL) {
        let topic = view.body.get("topic").and_then(Value::as_str).unwrap_or_default().to_owned();
        if !revealed.contains(&topic) {
            if let Some(map) = view.body.as_object_mut() {
                map.insert("choice".into(), Value::String("sealed".into()));
                map.insert("salt".into(), Value::String("sealed".into()));
            }
        }
    }
    Ok(())
}

/// Posts made void by the campaign's rollbacks: each voids every post after the one it rolls
/// back to, up to itself.
pub async fn void_posts(state: &AppState, campaign_id: Uuid) -> ApiResult<VoidSet> {
    let rollbacks = state.store.posts_of_kind(campaign_id, kinds::ROLLBACK).await?;
    Ok(VoidSet::of_rollbacks(rollbacks.iter().map(|r| (rollback_target(r), r.seq))))
}

/// The post a rollback rolls back to (itself when its body cannot be read, voiding nothing).
pub fn rollback_target(rollback: &adjutant_store::Post) -> i64 {
    body_value(rollback).get("to_seq").and_then(Value::as_i64).unwrap_or(rollback.seq)
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PostPaging {
    /// Posts after this sequence number (default 0: from the start).
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// At most this many (1–100, default 50).
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// The campaign's log, in order.
#[utoipa::path(get, path = "/v1/campaigns/{id}/posts", tag = "posts",
    params(("id" = Uuid, Path, description = "campaign id"), PostPaging),
    responses((status = 200, body = PostPage), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn list_posts(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiQuery(q): ApiQuery<PostPaging>,
) -> ApiResult<Json<PostPage>> {
    let campaign = load_campaign(&state, id).await?;
    let limit = page_limit(q.limit)?;
    let after = q.after.unwrap_or(0);
    if after < 0 {
        return Err(AppError::bad_request("query.after", "paging.after", "after is a sequence number, 0 or more"));
    }
    let posts = state.store.posts(id, after, limit).await?;
    let void = void_posts(&state, id).await?;
    let through = posts.last().map_or(after, |p| p.seq);
    let mut outcomes = adjutant_store::outcomes_by_post(state.store.outcomes_of_posts(id, after, through).await?);
    let mut views = Vec::with_capacity(posts.len());
    for post in &posts {
        let outcomes = outcomes.remove(&post.seq).unwrap_or_default();
        views.push(PostView::of(&campaign, post, &outcomes, void.contains(&post.seq)));
    }
    redact(&state, id, &void, &mut views).await?;
    let next_after = (posts.len() as i64 == limit).then(|| posts.last().map(|p| p.seq)).flatten();
    Ok(Json(PostPage { posts: views, next_after }))
}

/// One post.
#[utoipa::path(get, path = "/v1/campaigns/{id}/posts/{seq}", tag = "posts",
    params(("id" = Uuid, Path, description = "campaign id"), ("seq" = i64, Path, description = "sequence number")),
    responses((status = 200, body = PostView), (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn get_post(
    State(state): State<AppState>,
    ApiPath((id, seq)): ApiPath<(Uuid, i64)>,
) -> ApiResult<Json<PostView>> {
    let campaign = load_campaign(&state, id).await?;
    let (post, outcomes) = load_post(&state, &campaign, seq).await?;
    let void = void_posts(&state, id).await?;
    let mut view = [PostView::of(&campaign, &post, &outcomes, void.contains(&post.seq))];
    redact(&state, id, &void, &mut view).await?;
    let [view] = view;
    Ok(Json(view))
}

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

/// Parses a stored body (always canonical JSON).
pub fn body_value(post: &adjutant_store::Post) -> Value {
    serde_json::from_str(&post.body).unwrap_or(Value::Null)
}
