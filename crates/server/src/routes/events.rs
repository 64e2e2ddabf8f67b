//! The campaign's log as a stream of server-sent events: one `post` event per new post, with
//! its outcomes, so pages and bots learn of the other side's orders without asking again.
//!
//! A stream never polls the store: it waits on its campaign's signal ([`crate::live`]), which
//! the append raises after each commit (and, on PostgreSQL, the relay of other servers'
//! `NOTIFY`), and then reads the posts after the last one it sent from the store, as a catch-up
//! does. It follows the signal before its first read, so a post committed while it catches up
//! wakes it: none is missed, and none is sent twice (it reads only after the last one sent).
//! The number of open streams is capped (`max_event_streams`), and so is each client address's
//! (streams without a token) and each token's share of them on a campaign
//! (`event_streams_per_client`, `event_streams_per_token`), so
//! their cost stays bounded and no one client can take them all.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{ConnectInfo, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use serde::{Deserialize, Serialize};
use tokio::sync::OwnedSemaphorePermit;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::Caller;
use crate::campaign::LoadedCampaign;
use crate::config::Config;
use crate::error::{ApiResult, AppError};
use crate::extract::{ApiPath, ApiQuery};
use crate::rate_limit::{client_address, CallerKey, TrustedProxies};
use crate::routes::posts::PostView;
use crate::routes::shared::load_campaign;
use crate::shares::{all_in_use, Share, Shares};
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

/// Posts read from the store at a time.
const BATCH: i64 = 50;
/// A stream closes after this long; the client reconnects with `Last-Event-ID`.
const LIFETIME: Duration = Duration::from_secs(30 * 60);
/// The most posts one stream sends: a longer catch-up ends with a `page` event, and the client
/// goes on from there (an `EventSource` by itself, with `Last-Event-ID`, after `PAGE_RETRY`).
pub const PAGE: i64 = 1000;
/// How soon an `EventSource` asks for the next page.
const PAGE_RETRY: Duration = Duration::from_millis(100);

/// How many streams each client address (of callers without a token) and each token holds on
/// each campaign: a bot following every campaign of its moderator holds one stream on each, and
/// the server's pool bounds them all.
pub struct StreamShares {
    per_client: Arc<Shares<CallerKey>>,
    /// Keyed by the token's principal (the operator's: the nil id) and the campaign.
    per_token: Arc<Shares<(Uuid, Uuid)>>,
    trusted_proxies: TrustedProxies,
}

impl StreamShares {
    pub fn from_config(config: &Config) -> Self {
        Self {
            per_client: Shares::new(config.event_streams_per_client),
            per_token: Shares::new(config.event_streams_per_token),
            // The service refuses to start with a list it cannot read (`Limits::from_config`).
            trusted_proxies: TrustedProxies::parse(&config.trusted_proxies).unwrap_or_default(),
        }
    }

    /// A stream's shares for the caller, or the 429 that says whose share is spent.
    fn take(
        &self,
        peer: Option<SocketAddr>,
        headers: &HeaderMap,
        caller: &Caller,
        campaign: Uuid,
    ) -> Result<StreamShare, AppError> {
        // A token's streams are its own to count; an address counts those that carry none.
        let client = match caller {
            Caller::Anonymous => {
                peer.map(|peer| CallerKey::of_address(client_address(peer.ip(), headers, &self.trusted_proxies)))
            }
            _ => None,
        };
        let by_client = match client {
            Some(key) => Some(self.per_client.take(key).ok_or_else(|| AppError::TooManyRequests {
                field: "path".into(),
                rule: "events.per_client".into(),
                detail: format!(
                    "this client address has {} event streams open, the most one address may; close one (a page or bot following a campaign) and try again",
                    self.per_client.most()
                ),
                retry_after_secs: STREAM_RETRY_SECS,
            })?),
            None => None,
        };
        let principal = match caller {
            Caller::Principal(p) => Some(p.id),
            Caller::Operator => Some(Uuid::nil()),
            Caller::Anonymous => None,
        };
        let by_token = match principal {
            Some(id) => Some(self.per_token.take((id, campaign)).ok_or_else(|| AppError::TooManyRequests {
                field: "Authorization".into(),
                rule: "events.per_token".into(),
                detail: format!(
                    "this token has {} event streams open on this campaign, the most one token may; close one and try again",
                    self.per_token.most()
                ),
                retry_after_secs: STREAM_RETRY_SECS,
            })?),
            None => None,
        };
        Ok(StreamShare { _by_client: by_client, _by_token: by_token })
    }
}

/// A stream's place in its client address's and its token's shares, given back when dropped.
struct StreamShare {
    _by_client: Option<Share<CallerKey>>,
    _by_token: Option<Share<(Uuid, Uuid)>>,
}

/// What a refused stream is told to wait: streams end when their page or bot goes away.
const STREAM_RETRY_SECS: u64 = 15;

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
    /// `false`: send the posts there are now (at most a page of 1,000) and close, instead of
    /// waiting for more.
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
///
/// A stream sends at most 1,000 posts: when more are waiting, it ends with `event: page`,
/// `data: {"next_after": <seq>}` (and `retry: 100`), and the client asks again after that post
/// (an `EventSource` does so by itself). A stream read whole (`follow=false`) or starting more
/// than 50 posts behind the log's end is an expensive read (`rate_limit.expensive_reads`).
#[utoipa::path(get, path = "/v1/campaigns/{id}/events", tag = "posts",
    params(("id" = Uuid, Path, description = "campaign id"),
           ("Last-Event-ID" = Option<String>, Header, description = "the last post seen (its sequence number): the stream starts after it; empty reads as none",
            pattern = "^[0-9]{0,18}$", max_length = 18, nullable = false),
           EventsQuery),
    responses((status = 200, description = "a stream of `post` events", content_type = "text/event-stream", body = PostEvent),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json"),
              (status = 429, description = "this client address, for streams without a token (`rule`: `events.per_client`, `event_streams_per_client`, default 8), or this token on this campaign (`events.per_token`, `event_streams_per_token`, default 4) has as many event streams open as it may; close one (`Retry-After` says when to try again). Other limits answer 429 as every route does.",
               body = crate::error::Problem, content_type = "application/problem+json"),
              (status = 503, description = "every event stream the server keeps is open (`rule`: `events.all_open`, `max_event_streams`, default 256), with `Retry-After`; or the database is unreachable; retry later", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn campaign_events(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiQuery(q): ApiQuery<EventsQuery>,
    caller: Caller,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    counted: Option<Extension<CallerKey>>,
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
    let shares = state.stream_shares.take(peer.map(|Extension(ConnectInfo(peer))| peer), &headers, &caller, id)?;
    let Ok(permit) = state.streams.clone().try_acquire_owned() else {
        return Ok(all_in_use(
            "events.all_open",
            format!(
                "every event stream this server keeps ({}) is open; try again in a minute",
                state.config.max_event_streams.max(1)
            ),
            60,
        ));
    };
    let follow = q.follow.unwrap_or(true);
    // A read of the whole log, or a catch-up from far behind its end, is an expensive read.
    let head = state.store.head(id).await?.map_or(0, |post| post.seq);
    if !follow || head - after > BATCH {
        if let Some(Extension(key)) = counted {
            state.limits.take_expensive(key)?;
        }
    }
    let permit = (permit, shares, state.metrics.event_stream());
    // Before the first read: a post committed after it wakes the stream.
    let signal = follow.then(|| state.live.follow(id));
    let reader = Reader {
        signal,
        state,
        campaign,
        after,
        queue: VecDeque::new(),
        _permit: permit,
        first: true,
        sent: 0,
        paged: false,
    };
    let deadline = tokio::time::Instant::now() + LIFETIME;
    let stream = futures_util::stream::unfold(reader, move |mut reader| async move {
        loop {
            if let Some(event) = reader.queue.pop_front() {
                return Some((Ok::<Event, Infallible>(event), reader));
            }
            if reader.paged {
                return None;
            }
            if !reader.first {
                // A stream read whole (`follow=false`) has no signal: it ends here.
                let signal = reader.signal.as_mut()?;
                // Caught up: wait for the next post, until the stream's lifetime is over.
                match tokio::time::timeout_at(deadline, signal.changed()).await {
                    Ok(true) => {}
                    Ok(false) | Err(_) => return None,
                }
            }
            reader.first = false;
            match reader.read().await {
                Ok(more) => {
                    if more && reader.sent >= PAGE {
                        match reader.page_end().await {
                            Ok(()) => {}
                            Err(e) => {
                                tracing::warn!(campaign = %reader.campaign.campaign.id, error = %e.problem().detail, "event stream stopped");
                                return None;
                            }
                        }
                    } else if more {
                        // A full batch may have more behind it: read again at once.
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
    /// The campaign's signal of new posts; none for a stream read whole (`follow=false`).
    signal: Option<crate::live::Follower>,
    first: bool,
    /// Posts sent so far, and whether the stream has ended its page.
    sent: i64,
    paged: bool,
    /// The stream's place in the server's pool, in its client's and token's shares, and in the
    /// gauge of open streams.
    _permit: (OwnedSemaphorePermit, StreamShare, crate::monitoring::OpenStream),
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
        self.sent += views.len() as i64;
        Ok(posts.len() as i64 == BATCH)
    }

    /// A page sent: when posts are still waiting, says where the next page starts, and the
    /// stream ends once its queue is sent; when none are, it goes on as a stream that caught up.
    async fn page_end(&mut self) -> ApiResult<()> {
        let waiting = self.state.store.posts(self.campaign.campaign.id, self.after, 1).await?;
        if !waiting.is_empty() {
            self.paged = true;
            let data = serde_json::json!({ "next_after": self.after }).to_string();
            let event = Event::default().event("page").id(self.after.to_string()).retry(PAGE_RETRY).data(data);
            self.queue.push_back(event);
        }
        Ok(())
    }
}
