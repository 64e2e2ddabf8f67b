//! The campaign log: players append posts, anyone reads them.

use adjutant_rules::chain::{Link, GENESIS};
use adjutant_store::{AppendRequest, Appended, BoxError, Decision, PrincipalKind, Tail};
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
use crate::campaign::{decide, parse_side, LoadedCampaign};
use crate::error::{ApiResult, AppError};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::routes::campaigns::{load_campaign, page_limit};
use crate::views::{NewPost, PostPage, PostView};
use crate::AppState;

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
           ("Idempotency-Key" = String, Header, description = "unique per post; the same key and body return the stored post")),
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
    let author = match &caller {
        Caller::Anonymous => return Err(AppError::Unauthorized("posting needs a player token".into())),
        Caller::Principal(p) if p.kind == PrincipalKind::Player => p.clone(),
        _ => return Err(AppError::forbidden("post.players_only", "only a player of this campaign can post orders")),
    };
    if author.campaign_id != Some(id) {
        return Err(AppError::forbidden("post.own_campaign", "this player token belongs to another campaign"));
    }
    let side = author.side.clone();
    if let Some(asked) = &req.side {
        if parse_side(asked) != side.as_deref() {
            return Err(AppError::forbidden("post.own_side", "a player posts only for their own side"));
        }
    }
    let key = idempotency_key(&headers)?;
    check_kind(&req.kind)?;
    if !req.body.is_object() {
        return Err(AppError::unprocessable("body.body", "post.body", "the body is a JSON object"));
    }
    // Canonical JSON: serde_json's map keeps keys sorted, and `to_string` writes no white space.
    let body = serde_json::to_string(&req.body).map_err(|e| AppError::Internal(e.to_string()))?;
    let request_hash =
        hex::encode(Sha256::digest(format!("{id}\n{}\n{}\n{body}", req.kind, side.as_deref().unwrap_or("-"))));

    let decide_post = |tail: &Tail| -> Result<Decision, BoxError> {
        // The stamp is taken inside the write transaction, so stamps never run backwards along
        // the log even if the machine's clock is stepped back.
        let now = state.clock.now();
        let stamp = tail.prev_stamp.map_or(now, |prev| now.max(prev));
        let prev_hash = tail.prev_hash.clone().unwrap_or_else(|| GENESIS.to_owned());
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
        let post = adjutant_store::Post {
            campaign_id: id,
            seq: tail.next_seq,
            stamp,
            author_id: author.id,
            side: side.clone(),
            kind: req.kind.clone(),
            body: body.clone(),
            prev_hash,
            hash,
        };
        let effects = decide(&campaign, tail, &post).map_err(|e| Box::new(e) as BoxError)?;
        Ok(Decision { post, outcomes: effects.outcomes, snapshot: effects.snapshot })
    };
    let request = AppendRequest { campaign_id: id, author_id: author.id, idempotency_key: key, request_hash };
    let appended = state.store.append_post(request, &decide_post).await?;
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
    Ok((status, headers, Json(PostView::of(&campaign, &post, &outcomes))))
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
    let mut views = Vec::with_capacity(posts.len());
    for post in &posts {
        let outcomes = state.store.outcomes_of_post(id, post.seq).await?;
        views.push(PostView::of(&campaign, post, &outcomes));
    }
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
    Ok(Json(PostView::of(&campaign, &post, &outcomes)))
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
