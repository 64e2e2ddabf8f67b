//! The campaign log over HTTP: players append posts, anyone reads them. What a post decides
//! and how it is stored is `crate::log`'s.

use adjutant_rules::dice::stamp_text;
use adjutant_rules::Side;
use adjutant_store::{Appended, Outcome, Post, Principal, PrincipalKind};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use tracing::Instrument;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::Caller;
use crate::campaign::{parse_side, LoadedCampaign};
use crate::error::{ApiResult, AppError};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::log;
use crate::log::view::LogView;
use crate::routes::shared::{campaign_to_post_to, load_campaign, load_post, page_limit};
use crate::views::{post_witness, stamp_numbers, OutcomeView, ReceiptView, StampNumbers};
use crate::AppState;

/// A post as a player sends it. The server sets the time stamp; there is no field for it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewPost {
    /// What the post is: an order of the campaign's rules (`move`, `attack`, `reinforcement`, …).
    #[schema(example = "attack", pattern = "^[a-z][a-z0-9_]{0,39}$")]
    pub kind: String,
    /// The side the post acts for; must be the token's own side. Optional.
    #[serde(default)]
    pub side: Option<String>,
    /// The order's details, as the post kind describes.
    #[serde(default = "empty_object")]
    #[schema(value_type = Object)]
    pub body: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PostView {
    pub campaign_id: Uuid,
    pub seq: i64,
    /// The server's time stamp, RFC 3339 UTC with milliseconds.
    #[schema(example = "2026-11-21T09:51:45.123Z")]
    pub stamp: String,
    pub author_id: Uuid,
    /// Who made the post, by name: the player (as the moderator named them when issuing their
    /// token), `moderator`, or `server` for the server's own `deadline` and `reminder` posts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub author: Option<String>,
    pub side: Option<String>,
    pub kind: String,
    /// The body as stored, the JSON text the post's hash covers (a sealed choice and its salt,
    /// or a sealed deployment's placements, read `sealed` until they are revealed).
    #[schema(value_type = Object)]
    pub body: Box<RawValue>,
    pub prev_hash: String,
    pub hash: String,
    /// The server's signed receipt for the post: keep it as proof that the server accepted
    /// this post at this time. Absent on posts written before receipts were signed.
    pub receipt: Option<ReceiptView>,
    pub numbers: StampNumbers,
    pub outcomes: Vec<OutcomeView>,
    /// True when a moderator's rollback made this post void: it stays in the log but no
    /// longer counts.
    pub void: bool,
    /// Where the audit of this post is.
    pub audit: String,
}

impl PostView {
    /// Hides the choice and salt of every sealed post among `views` whose topic is not revealed
    /// yet in `log` ([`LogView::hides`]).
    pub fn redact(views: &mut [PostView], log: &LogView) {
        use crate::log::kinds::PostKind;
        for post in views.iter_mut().filter(|v| PostKind::of(&v.kind) == PostKind::Seal) {
            let mut body: Value = serde_json::from_str(post.body.get()).unwrap_or(Value::Null);
            if !log.hides(&post.kind, &body) {
                continue;
            }
            if let Some(map) = body.as_object_mut() {
                map.insert("choice".into(), Value::String("sealed".into()));
                map.insert("salt".into(), Value::String("sealed".into()));
            }
            post.body = raw(&body);
        }
    }

    /// Names each post's author from `authors` (a campaign's players' names by id).
    pub fn name_authors(views: &mut [PostView], authors: &Authors) {
        for view in views {
            view.author = Some(authors.name(view.author_id, &view.kind).to_owned());
        }
    }

    /// Withholds the placements of the deployment still sealed (`log::read::sealed_deployment`).
    pub fn withhold_deployment(views: &mut [PostView], sealed: Option<i64>) {
        for post in views.iter_mut().filter(|v| Some(v.seq) == sealed) {
            post.body = raw(&serde_json::json!({"placements": "sealed"}));
        }
    }

    pub fn of(campaign: &LoadedCampaign, post: &Post, outcomes: &[Outcome], void: bool) -> Self {
        Self {
            campaign_id: post.campaign_id,
            seq: post.seq,
            stamp: stamp_text(post.stamp),
            author_id: post.author_id,
            author: None,
            side: post.side.clone(),
            kind: post.kind.clone(),
            body: RawValue::from_string(post.body.clone()).unwrap_or_else(|_| crate::views::null()),
            prev_hash: post.prev_hash.clone(),
            hash: post.hash.clone(),
            receipt: ReceiptView::of(post),
            numbers: stamp_numbers(campaign, post.stamp),
            outcomes: {
                let witness = post_witness(post);
                outcomes.iter().map(|o| OutcomeView::of(o, Some(&witness))).collect()
            },
            void,
            audit: format!("/v1/campaigns/{}/posts/{}/audit", post.campaign_id, post.seq),
        }
    }
}

/// A value as raw JSON text.
fn raw(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| crate::views::null())
}

/// Who made a campaign's posts, by principal id.
#[derive(Debug, Default)]
pub struct Authors {
    pub players: std::collections::HashMap<Uuid, String>,
}

impl Authors {
    /// The name of a post's author: the player's, `server` for the server's own deadline and
    /// reminder posts, or `moderator`.
    pub fn name(&self, author: Uuid, kind: &str) -> &str {
        use crate::log::kinds::PostKind;
        match self.players.get(&author) {
            Some(name) => name,
            None if matches!(PostKind::of(kind), PostKind::Deadline | PostKind::Reminder) => "server",
            None => "moderator",
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PostPage {
    pub posts: Vec<PostView>,
    /// Pass as `after` for the next page; absent when this page is the end of the log so far.
    pub next_after: Option<i64>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_posts, create_post)).routes(routes!(get_post))
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

/// Appends a post. The server stamps it; nothing the client sends sets the time.
#[utoipa::path(post, path = "/v1/campaigns/{id}/posts", tag = "posts", request_body = NewPost,
    params(("id" = Uuid, Path, description = "campaign id"),
           ("Idempotency-Key" = String, Header, description = "unique per post, 1 to 200 visible ASCII characters (e.g. a UUID); the same key and body return the stored post",
            min_length = 1, max_length = 200, pattern = "^[!-~]+$")),
    security(("bearer" = [])),
    responses((status = 201, description = "stored now", body = PostView),
              (status = 200, description = "stored before under this Idempotency-Key", body = PostView),
              (status = 409, description = "the game as it stands does not allow it: not your turn, the wrong phase, a unit that already moved or attacked, an enemy in the way, a battle waiting for another answer (`rule` names which), or a campaign whose log holds the most posts the server keeps for one (`campaign.max_posts`); the same post may pass at another moment", body = crate::error::Problem, content_type = "application/problem+json"),
              (status = 422, description = "a post that could never be right as sent: an unknown kind or unit, a body of the wrong shape, a hex off the map or out of the deployment zone, a path that skips hexes (`field` and `rule` name which)", body = crate::error::Problem, content_type = "application/problem+json"),
              (status = 429, description = "too many requests, or a player's daily quota spent: `quota.posts_per_day` (posts of every kind), `quota.notes_per_day`, `quota.seals_per_day`, per campaign per UTC day; `Retry-After` says when", body = crate::error::Problem, content_type = "application/problem+json"),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn create_post(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<Uuid>,
    headers: HeaderMap,
    ApiJson(req): ApiJson<NewPost>,
) -> ApiResult<(StatusCode, HeaderMap, Json<PostView>)> {
    let campaign = campaign_to_post_to(&state, id).await?;
    let (author, side) = author_of(&caller, &campaign, req.side.as_deref())?;
    if log::kinds::SERVER_MADE.contains(&log::kinds::PostKind::of(&req.kind)) {
        return Err(AppError::unprocessable(
            "body.kind",
            "post.server_only",
            format!(
                "`{}` posts are the server's own: made by its clock when a deadline passes, or by `POST …/players/{{player_id}}/replace`",
                req.kind
            ),
        ));
    }
    let new = log::append::Submission {
        author,
        side,
        kind: &req.kind,
        body: &req.body,
        idempotency_key: idempotency_key(&headers)?,
    };
    let appended = state.log().append(&campaign, new).await?;

    let mut headers = HeaderMap::new();
    let (status, post, outcomes) = match appended {
        Appended::New(post, outcomes) => (StatusCode::CREATED, post, outcomes),
        Appended::Replayed(post, outcomes) => {
            headers.insert("Idempotent-Replayed", HeaderValue::from_static("true"));
            (StatusCode::OK, post, outcomes)
        }
    };
    if let Ok(value) = HeaderValue::from_str(&format!("/v1/campaigns/{id}/posts/{}", post.seq)) {
        headers.insert(axum::http::header::LOCATION, value);
    }
    // A post stored now is the log's last: no rollback voids it yet. One stored before (a
    // replayed key) may have been voided since.
    let void = match status {
        StatusCode::CREATED => false,
        _ => log::read::void_posts(&*state.store, id)
            .instrument(adjutant_store::append::step("void_posts"))
            .await?
            .contains(&post.seq),
    };
    let mut view = adjutant_store::append::step("view").in_scope(|| PostView::of(&campaign, &post, &outcomes, void));
    view.author = Some(match author.kind {
        PrincipalKind::Player => author.name.clone(),
        _ => "moderator".to_owned(),
    });
    Ok((status, headers, Json(view)))
}

/// Who may post to the campaign, and for which side: a player of this campaign for their own
/// side, or its moderator as umpire, for none.
fn author_of<'a>(
    caller: &'a Caller,
    campaign: &LoadedCampaign,
    asked_side: Option<&str>,
) -> ApiResult<(&'a Principal, Option<Side>)> {
    let (author, side) = match caller {
        Caller::Anonymous => return Err(AppError::Unauthorized("posting needs a player or moderator token".into())),
        Caller::Principal(p) if p.kind == PrincipalKind::Player => {
            if p.campaign_id != Some(campaign.campaign.id) {
                return Err(AppError::forbidden("post.own_campaign", "this player token belongs to another campaign"));
            }
            (p, p.side.as_deref().and_then(parse_side))
        }
        Caller::Principal(p) if p.kind == PrincipalKind::Moderator => {
            caller.require_campaign_moderator(campaign.campaign.moderator_id)?;
            (p, None)
        }
        _ => return Err(AppError::forbidden("post.players_only", "only the campaign's players and moderator post")),
    };
    if let Some(asked) = asked_side {
        if side.is_none() {
            return Err(AppError::forbidden("post.moderator_side", "the moderator posts as umpire, for no side"));
        }
        if parse_side(asked) != side {
            return Err(AppError::forbidden("post.own_side", "a player posts only for their own side"));
        }
    }
    Ok((author, side))
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
    let log = log::read::view_for(&*state.store, id, &posts).await?;
    let through = posts.last().map_or(after, |p| p.seq);
    let mut outcomes = adjutant_store::outcomes_by_post(state.store.outcomes_of_posts(id, after, through).await?);
    let mut views = Vec::with_capacity(posts.len());
    for post in &posts {
        let outcomes = outcomes.remove(&post.seq).unwrap_or_default();
        views.push(PostView::of(&campaign, post, &outcomes, log.void().contains(&post.seq)));
    }
    PostView::redact(&mut views, &log);
    PostView::name_authors(&mut views, &crate::routes::shared::authors(&state, id).await?);
    PostView::withhold_deployment(
        &mut views,
        log::read::sealed_deployment(&*state.store, &campaign, log.void()).await?,
    );
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
    let log = log::read::view_for(&*state.store, id, std::slice::from_ref(&post)).await?;
    let mut view = [PostView::of(&campaign, &post, &outcomes, log.void().contains(&post.seq))];
    PostView::redact(&mut view, &log);
    PostView::name_authors(&mut view, &crate::routes::shared::authors(&state, id).await?);
    PostView::withhold_deployment(&mut view, log::read::sealed_deployment(&*state.store, &campaign, log.void()).await?);
    let [view] = view;
    Ok(Json(view))
}
