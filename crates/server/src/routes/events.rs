//! The campaign's log as a stream of server-sent events: one `post` event per new post, with
//! its outcomes, so pages and bots learn of the other side's orders without asking again.
//!
//! A stream never polls the store: it waits on its campaign's signal ([`crate::live`]), which
//! the append raises after each commit (and, on PostgreSQL, the relay of other servers'
//! `NOTIFY`), and then reads the posts after the last one it sent from the store, as a catch-up
//! does. It follows the signal before its first read, so a post committed while it catches up
//! wakes it: none is missed, and none is sent twice (it reads only after the last one sent).
//!
//! What the open streams cost is bounded: together they take at most `event_streams_memory`
//! bytes (each is charged what an idle stream costs, [`crate::live::IDLE_STREAM_BYTES`], and the
//! posts it has read and not yet sent; `max_event_streams`, when set, caps their number too);
//! each client address's (streams without a token) and each token's share of them on a campaign
//! is capped (`event_streams_per_client`, `event_streams_per_token`), so no one client can take
//! them all; and a follower that does not take what its stream sends is dropped once more than
//! `event_stream_unsent_bytes` wait for it, rather than holding memory for the others: it
//! resumes with `Last-Event-ID`, and loses nothing.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::Caller;
use crate::campaign::LoadedCampaign;
use crate::config::Config;
use crate::error::{ApiResult, AppError};
use crate::extract::{ApiPath, ApiQuery};
use crate::listener::Peer;
use crate::live::{SendQueue, IDLE_STREAM_BYTES};
use crate::rate_limit::{client_address, client_key_of, Admitted, CallerKey, TrustedProxies};
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

/// The memory all open event streams take together (`event_streams_memory`), and how many are
/// open (capped by `max_event_streams` when it is set).
struct StreamPool {
    /// Bytes; 0: no bound.
    budget: usize,
    /// 0: no cap on the number.
    most: usize,
    used: AtomicUsize,
    open: AtomicUsize,
}

/// Why the pool has no room for one more stream.
enum Full {
    Count,
    Memory,
}

impl StreamPool {
    /// An idle stream's charge, unless it would go past the count or the budget.
    fn open(self: &Arc<Self>) -> Result<Charge, Full> {
        if self.most > 0 {
            self.open
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| (open < self.most).then_some(open + 1))
                .map_err(|_| Full::Count)?;
        } else {
            self.open.fetch_add(1, Ordering::AcqRel);
        }
        let room = self.used.fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
            used.checked_add(IDLE_STREAM_BYTES).filter(|total| self.budget == 0 || *total <= self.budget)
        });
        if room.is_err() {
            self.open.fetch_sub(1, Ordering::AcqRel);
            return Err(Full::Memory);
        }
        Ok(Charge { pool: self.clone(), bytes: IDLE_STREAM_BYTES })
    }
}

/// A stream's charge on the pool: what an idle stream costs, and the posts it holds to send;
/// given back when dropped.
struct Charge {
    pool: Arc<StreamPool>,
    bytes: usize,
}

impl Charge {
    /// The stream holds `queued` bytes of posts to send besides its idle cost. Charged even past
    /// the budget (they are read already): the budget then refuses new streams until they are
    /// sent.
    fn holding(&mut self, queued: usize) {
        let bytes = IDLE_STREAM_BYTES + queued;
        if bytes > self.bytes {
            self.pool.used.fetch_add(bytes - self.bytes, Ordering::AcqRel);
        } else {
            self.pool.used.fetch_sub(self.bytes - bytes, Ordering::AcqRel);
        }
        self.bytes = bytes;
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.pool.used.fetch_sub(self.bytes, Ordering::AcqRel);
        self.pool.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What bounds the open event streams: the server's memory for them, and how many streams each
/// client address (of callers without a token) and each token holds on each campaign (a bot
/// following every campaign of its moderator holds one stream on each).
pub struct StreamShares {
    pool: Arc<StreamPool>,
    per_client: Arc<Shares<CallerKey>>,
    /// Keyed by the token's principal (the operator's: the nil id) and the campaign.
    per_token: Arc<Shares<(Uuid, Uuid)>>,
    trusted_proxies: TrustedProxies,
    /// A stream further behind than this is ended (0: no bound).
    unsent_bytes: usize,
}

impl StreamShares {
    pub fn from_config(config: &Config) -> Self {
        Self {
            pool: Arc::new(StreamPool {
                budget: config.event_streams_memory,
                most: config.max_event_streams,
                used: AtomicUsize::new(0),
                open: AtomicUsize::new(0),
            }),
            per_client: Shares::new(config.event_streams_per_client),
            per_token: Shares::new(config.event_streams_per_token),
            // The service refuses to start with a list it cannot read (`Limits::from_config`).
            trusted_proxies: TrustedProxies::parse(&config.trusted_proxies).unwrap_or_default(),
            unsent_bytes: config.event_stream_unsent_bytes,
        }
    }

    /// Bytes the open streams are charged now, and how many are open.
    pub fn in_use(&self) -> (usize, usize) {
        (self.pool.used.load(Ordering::Acquire), self.pool.open.load(Ordering::Acquire))
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
/// A client that does not take what its stream sends (over a megabyte waiting, by default) has
/// its stream ended; it reconnects with `Last-Event-ID` and misses nothing.
#[utoipa::path(get, path = "/v1/campaigns/{id}/events", tag = "posts",
    params(("id" = Uuid, Path, description = "campaign id"),
           ("Last-Event-ID" = Option<String>, Header, description = "the last post seen (its sequence number): the stream starts after it; empty reads as none",
            pattern = "^[0-9]{0,18}$", max_length = 18, nullable = false),
           EventsQuery),
    responses((status = 200, description = "a stream of `post` events", content_type = "text/event-stream", body = PostEvent),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json"),
              (status = 429, description = "this client address, for streams without a token (`rule`: `events.per_client`, `event_streams_per_client`, default 8), or this token on this campaign (`events.per_token`, `event_streams_per_token`, default 4) has as many event streams open as it may; close one (`Retry-After` says when to try again). Other limits answer 429 as every route does.",
               body = crate::error::Problem, content_type = "application/problem+json"),
              (status = 503, description = "the open event streams take all the memory the server sets aside for them (`rule`: `events.all_open`, `event_streams_memory`, default 384 MiB, some 16,000 idle streams; or `max_event_streams` streams, when the server sets that), with `Retry-After`; or the database is unreachable; retry later", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn campaign_events(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiQuery(q): ApiQuery<EventsQuery>,
    caller: Caller,
    // What the listener tells of the connection: its peer, and its socket's send queue.
    peer: Option<Extension<Peer>>,
    admitted: Option<Extension<Admitted>>,
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
    let shares = state.stream_shares.take(peer.as_deref().map(|peer| peer.address), &headers, &caller, id)?;
    let charge = match state.stream_shares.pool.open() {
        Ok(charge) => charge,
        Err(Full::Count) => {
            let detail = format!(
                "every event stream this server keeps ({}) is open; try again in a minute",
                state.stream_shares.pool.most
            );
            return Ok(all_in_use("events.all_open", detail, 60));
        }
        Err(Full::Memory) => {
            let detail = format!(
                "the open event streams take all the memory this server sets aside for them ({} bytes); try again in a minute",
                state.stream_shares.pool.budget
            );
            return Ok(all_in_use("events.all_open", detail, 60));
        }
    };
    let follow = q.follow.unwrap_or(true);
    // A read of the whole log, or a catch-up from far behind its end, is an expensive read.
    let head = state.store.head(id).await?.map_or(0, |post| post.seq);
    if !follow || head - after > BATCH {
        // Counted as the guard counted the request: by its token, or by its address.
        let key = match &admitted {
            Some(Extension(admitted)) => admitted.key,
            None => client_key_of(&state, peer.as_deref(), &headers),
        };
        state.limits.take_expensive(key)?;
    }
    let held = (shares, state.metrics.event_stream());
    // Before the first read: a post committed after it wakes the stream.
    let signal = follow.then(|| state.live.follow(id));
    let most_unsent = state.stream_shares.unsent_bytes;
    let reader = Reader {
        signal,
        state,
        campaign,
        after,
        queue: VecDeque::new(),
        queued: 0,
        charge,
        send_queue: peer.map(|Extension(peer)| peer.send_queue),
        most_unsent,
        _held: held,
        first: true,
        caught_up: false,
        known_end: head,
        sent: 0,
        paged: false,
        dropped: false,
    };
    let deadline = tokio::time::Instant::now() + LIFETIME;
    let stream = futures_util::stream::unfold(reader, move |mut reader| async move {
        loop {
            if let Some((event, bytes)) = reader.queue.pop_front() {
                reader.queued -= bytes;
                reader.charge.holding(reader.queued);
                return Some((Ok::<Event, std::io::Error>(event), reader));
            }
            if reader.paged || reader.dropped {
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
            if let Some(unsent) = reader.too_far_behind() {
                // The connection is cut, not ended cleanly: what it still holds goes with it.
                tracing::info!(
                    campaign = %reader.campaign.campaign.id, after = reader.after, unsent,
                    "an event stream's follower fell behind; its stream ended"
                );
                reader.dropped = true;
                let behind = std::io::Error::other("the follower does not take what its event stream sends");
                return Some((Err(behind), reader));
            }
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
    /// Events read and not yet sent, with their sizes, and the sum of those.
    queue: VecDeque<(Event, usize)>,
    queued: usize,
    /// The stream's charge on the server's memory for streams.
    charge: Charge,
    /// The connection's socket, to ask how much it holds unsent (none in-process).
    send_queue: Option<SendQueue>,
    /// 0: no bound.
    most_unsent: usize,
    /// The stream was ended for a follower too far behind.
    dropped: bool,
    /// The campaign's signal of new posts; none for a stream read whole (`follow=false`).
    signal: Option<crate::live::Follower>,
    first: bool,
    /// The stream read to the log's end once: it takes posts from the campaign's window.
    caught_up: bool,
    /// The last post the log is known to hold (its end when the stream opened, or later).
    known_end: i64,
    /// Posts sent so far, and whether the stream has ended its page.
    sent: i64,
    paged: bool,
    /// The stream's place in its client's and token's shares, and in the gauge of open streams.
    _held: (StreamShare, crate::monitoring::OpenStream),
}

/// The posts of `campaign` after post `after` (a batch of at most [`BATCH`]) as event streams
/// send them, each its sequence number and `data`; and whether the batch was whole (more may
/// follow).
async fn rendered_after(
    state: &AppState,
    campaign: &LoadedCampaign,
    after: i64,
) -> ApiResult<(Vec<(i64, Arc<str>)>, bool)> {
    state.metrics.event_stream_read();
    let id = campaign.campaign.id;
    let posts = state.store.posts(id, after, BATCH).await?;
    if posts.is_empty() {
        return Ok((Vec::new(), false));
    }
    let log = crate::log::read::view_for(&*state.store, id, &posts).await?;
    let void = log.void();
    let through = posts.last().map_or(after, |p| p.seq);
    let mut outcomes = adjutant_store::outcomes_by_post(state.store.outcomes_of_posts(id, after, through).await?);
    let mut views = Vec::with_capacity(posts.len());
    for post in &posts {
        let outcomes = outcomes.remove(&post.seq).unwrap_or_default();
        views.push(PostView::of(campaign, post, &outcomes, void.contains(&post.seq)));
    }
    PostView::redact(&mut views, &log);
    let sealed = crate::log::read::sealed_deployment(&*state.store, campaign, void).await?;
    PostView::withhold_deployment(&mut views, sealed);
    let mut rendered = Vec::with_capacity(views.len());
    for view in &views {
        let data = serde_json::to_string(view).map_err(|e| AppError::Internal(e.to_string()))?;
        rendered.push((view.seq, Arc::from(data)));
    }
    Ok((rendered, posts.len() as i64 == BATCH))
}

impl Reader {
    /// The bytes written and not yet taken by the follower (its socket's send queue: asked once
    /// every event read is handed on), when they are more than a stream may have.
    fn too_far_behind(&self) -> Option<usize> {
        if self.most_unsent == 0 {
            return None;
        }
        let unsent = self.send_queue.and_then(|queue| queue.unsent())?;
        (unsent > self.most_unsent).then_some(unsent)
    }

    /// Queues the posts after the last one sent; true when a whole batch came back. A stream
    /// that caught up takes them from its campaign's window of recent posts, which the first of
    /// its followers to wake fills from the store for all of them; one behind the window, or
    /// catching up, reads the store itself.
    async fn read(&mut self) -> ApiResult<bool> {
        if self.caught_up {
            if let Some((posts, more)) = self.window_posts().await? {
                self.queue_posts(posts);
                // More than the window takes at once is waiting: read again at once.
                return Ok(more);
            }
        }
        let (posts, more) = rendered_after(&self.state, &self.campaign, self.after).await?;
        self.queue_posts(posts);
        // A batch that was not whole reached the log's end: from here on, the window.
        self.caught_up = self.signal.is_some() && !more;
        Ok(more)
    }

    /// The posts after this stream's last from the campaign's window, brought up to date first
    /// (by whichever follower wakes first), and whether more are waiting than it took at once;
    /// none when the window does not reach back to this stream's place.
    async fn window_posts(&mut self) -> ApiResult<Option<(Vec<(i64, Arc<str>)>, bool)>> {
        let Some(follower) = &self.signal else { return Ok(None) };
        let (head, wakes) = follower.head();
        let mut recent = follower.recent().lock().await;
        // Started where the log is known to reach (a Last-Event-ID past its end starts nothing).
        recent.start_at(self.after.min(self.known_end));
        // Behind the signal, or woken for every campaign (another server's posts may have gone
        // untold, so the signal's last post says nothing): read what follows the window.
        let mut look = recent.looked < wakes || recent.last().is_some_and(|last| last < head);
        // Bounded: a burst larger than the window is taken in turns.
        for _ in 0..(crate::live::RECENT_POSTS as i64 / BATCH) {
            let Some(last) = recent.last() else { break };
            if !look {
                break;
            }
            let (posts, more) = rendered_after(&self.state, &self.campaign, last).await?;
            recent.extend(posts);
            recent.looked = recent.looked.max(wakes);
            look = more;
        }
        Ok(recent.after(self.after).map(|posts| (posts, look)))
    }

    fn queue_posts(&mut self, posts: Vec<(i64, Arc<str>)>) {
        for (seq, data) in posts {
            let bytes = data.len();
            self.queue.push_back((Event::default().event("post").id(seq.to_string()).data(&*data), bytes));
            self.queued += bytes;
            self.after = seq;
            self.known_end = self.known_end.max(seq);
            self.sent += 1;
        }
        self.charge.holding(self.queued);
    }

    /// A page sent: when posts are still waiting, says where the next page starts, and the
    /// stream ends once its queue is sent; when none are, it goes on as a stream that caught up.
    async fn page_end(&mut self) -> ApiResult<()> {
        self.state.metrics.event_stream_read();
        let waiting = self.state.store.posts(self.campaign.campaign.id, self.after, 1).await?;
        if !waiting.is_empty() {
            self.paged = true;
            let data = serde_json::json!({ "next_after": self.after }).to_string();
            let event = Event::default().event("page").id(self.after.to_string()).retry(PAGE_RETRY).data(data);
            self.queue.push_back((event, 0));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(budget: usize, most: usize) -> Arc<StreamPool> {
        Arc::new(StreamPool { budget, most, used: AtomicUsize::new(0), open: AtomicUsize::new(0) })
    }

    #[test]
    fn streams_are_charged_what_they_hold_and_give_it_back() {
        let pool = pool(3 * IDLE_STREAM_BYTES, 0);
        let mut first = pool.open().ok().expect("room for one");
        let second = pool.open().ok().expect("room for two");
        // Posts held to send are charged, even past the budget; then no stream is let in.
        first.holding(IDLE_STREAM_BYTES + 1);
        assert_eq!(pool.used.load(Ordering::Acquire), 3 * IDLE_STREAM_BYTES + 1);
        assert!(matches!(pool.open(), Err(Full::Memory)));
        // Sent, they are given back, and a third stream fits.
        first.holding(0);
        let third = pool.open().ok().expect("room for three once the posts are sent");
        assert!(matches!(pool.open(), Err(Full::Memory)));
        drop((first, second, third));
        assert_eq!((pool.used.load(Ordering::Acquire), pool.open.load(Ordering::Acquire)), (0, 0));
    }

    #[test]
    fn a_count_caps_the_streams_besides_their_memory() {
        let counted = pool(0, 2);
        let held: Vec<_> = (0..2).map(|_| counted.open().ok().expect("within the count")).collect();
        assert!(matches!(counted.open(), Err(Full::Count)));
        drop(held);
        assert!(counted.open().is_ok());
        // No budget and no count: no bound.
        let unbounded = pool(0, 0);
        let held: Vec<_> = (0..1000).map(|_| unbounded.open().ok().expect("no bound")).collect();
        assert_eq!(unbounded.used.load(Ordering::Acquire), 1000 * IDLE_STREAM_BYTES);
        drop(held);
    }
}
