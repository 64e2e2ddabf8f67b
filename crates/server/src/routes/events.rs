//! The campaign's log as a stream of server-sent events: one `post` event per new post, with
//! its outcomes, so pages and bots learn of the other side's orders without asking again.
//!
//! Each connection reads the store for posts after the last one it sent, every half second;
//! the number of open streams is capped, so their cost stays bounded.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::campaign::LoadedCampaign;
use crate::error::{ApiResult, AppError};
use crate::extract::{ApiPath, ApiQuery};
use crate::routes::posts::PostView;
use crate::routes::shared::load_campaign;
use crate::AppState;

/// One event of the stream, as a client's event-stream parser reads it.
#[derive(Debug, Serialize, ToSchema)]
#[allow(dead_code)]
pub struct PostEvent {
    /// Always `post`.
    #[schema(pattern = "^post$")]
    pub event: String,
    /// The post's sequence number: send it back as `Last-Event-ID` to resume after it.
    #[schema(pattern = "^[0-9]+$")]
    pub id: String,
    /// The post as JSON, as `GET /v1/campaigns/{id}/posts/{seq}` shows it (`PostView`).
    #[schema(content_media_type = "application/json")]
    pub data: String,
}

/// At most this many streams are open at once, over all campaigns.
pub const MAX_STREAMS: usize = 256;
/// How often an open stream looks for new posts.
const POLL: Duration = Duration::from_millis(500);
/// Posts read from the store at a time.
const BATCH: i64 = 50;
/// A stream closes after this long; the client reconnects with `Last-Event-ID`.
const LIFETIME: Duration = Duration::from_secs(30 * 60);

/// The open streams' permits.
pub fn stream_permits() -> Arc<Semaphore> {
    Arc::new(Semaphore::new(MAX_STREAMS))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(campaign_events))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Start after this post (default 0: from the start). A `Last-Event-ID` header wins over it.
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// `false`: send the posts there are now and close, instead of waiting for more.
    #[serde(default)]
    pub follow: Option<bool>,
}

/// The campaign's posts as server-sent events (`text/event-stream`).
///
/// Each event is `event: post`, `id: <seq>`, and `data:` the post as `GET …/posts/{seq}` shows
/// it (sealed choices stay sealed until both are in; a post made void later is not sent again:
/// the `rollback` post that voids it names, in `body.to_seq`, the last post it keeps).
/// Reconnect with `Last-Event-ID` (or `after`) to carry on where the stream broke off.
/// A comment line is sent every 15 seconds to keep the connection open.
#[utoipa::path(get, path = "/v1/campaigns/{id}/events", tag = "posts",
    params(("id" = Uuid, Path, description = "campaign id"),
           ("Last-Event-ID" = Option<String>, Header, description = "the last post seen (its sequence number): the stream starts after it; empty reads as none",
            pattern = "^[0-9]{0,18}$", max_length = 18, nullable = false),
           EventsQuery),
    responses((status = 200, description = "a stream of `post` events", content_type = "text/event-stream", body = PostEvent),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json"),
              (status = 503, description = "too many streams are open; retry later", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn campaign_events(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiQuery(q): ApiQuery<EventsQuery>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let campaign = load_campaign(&state, id).await?;
    if q.after.is_some_and(|after| after < 0) {
        return Err(AppError::bad_request("query.after", "paging.after", "after is a sequence number, 0 or more"));
    }
    // An empty Last-Event-ID is what a client sends before it has seen any event: none.
    let last_event_id = headers.get("last-event-id").filter(|value| !value.is_empty());
    let after = match last_event_id {
        Some(value) => value
            .to_str()
            .ok()
            .filter(|v| (1..=18).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|v| v.parse::<i64>().ok())
            .ok_or_else(|| {
                AppError::bad_request(
                    "Last-Event-ID",
                    "events.last_event_id",
                    "Last-Event-ID is a post's sequence number (up to 18 digits)",
                )
            })?,
        None => q.after.unwrap_or(0),
    };
    if after < 0 {
        return Err(AppError::bad_request("query.after", "paging.after", "after is a sequence number, 0 or more"));
    }
    let permit = state
        .streams
        .clone()
        .try_acquire_owned()
        .map_err(|_| AppError::Unavailable(format!("{MAX_STREAMS} event streams are open; retry in a minute")))?;
    let follow = q.follow.unwrap_or(true);
    let reader = Reader { state, campaign, after, queue: VecDeque::new(), follow, _permit: permit, first: true };
    let deadline = tokio::time::Instant::now() + LIFETIME;
    let stream = futures_util::stream::unfold(reader, move |mut reader| async move {
        loop {
            if let Some(event) = reader.queue.pop_front() {
                return Some((Ok::<Event, Infallible>(event), reader));
            }
            if !reader.first {
                if !reader.follow || tokio::time::Instant::now() >= deadline {
                    return None;
                }
                tokio::time::sleep(POLL).await;
            }
            reader.first = false;
            match reader.read().await {
                Ok(more) => {
                    // A full batch may have more behind it: read again at once.
                    if more {
                        reader.first = true;
                    }
                }
                Err(e) => {
                    tracing::warn!(campaign = %reader.campaign.campaign.id, error = %e.problem().detail, "event stream stopped");
                    return None;
                }
            }
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response())
}

struct Reader {
    state: AppState,
    campaign: LoadedCampaign,
    after: i64,
    queue: VecDeque<Event>,
    follow: bool,
    first: bool,
    _permit: OwnedSemaphorePermit,
}

impl Reader {
    /// Queues the posts after the last one sent; true when a whole batch came back.
    async fn read(&mut self) -> ApiResult<bool> {
        let id = self.campaign.campaign.id;
        let posts = self.state.store.posts(id, self.after, BATCH).await?;
        if posts.is_empty() {
            return Ok(false);
        }
        let log = crate::log::read::view_for(&*self.state.store, id, &posts).await?;
        let void = log.void();
        let through = posts.last().map_or(self.after, |p| p.seq);
        let mut outcomes =
            adjutant_store::outcomes_by_post(self.state.store.outcomes_of_posts(id, self.after, through).await?);
        let mut views = Vec::with_capacity(posts.len());
        for post in &posts {
            let outcomes = outcomes.remove(&post.seq).unwrap_or_default();
            views.push(PostView::of(&self.campaign, post, &outcomes, void.contains(&post.seq)));
        }
        PostView::redact(&mut views, &log);
        let sealed = crate::log::read::sealed_deployment(&*self.state.store, &self.campaign, void).await?;
        PostView::withhold_deployment(&mut views, sealed);
        for view in &views {
            let data = serde_json::to_string(view).map_err(|e| AppError::Internal(e.to_string()))?;
            self.queue.push_back(Event::default().event("post").id(view.seq.to_string()).data(data));
            self.after = view.seq;
        }
        Ok(posts.len() as i64 == BATCH)
    }
}
