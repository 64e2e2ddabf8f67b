//! Adjutant's HTTP service.
//!
//! request → extractor (auth, JSON) → handler (`routes`) → the campaign log (`log`: decide with
//! `adjutant_rules`, chain, sign) → store (persist) → response. The rules never call the store;
//! the store never decides a rule; nothing below the routes speaks HTTP. docs/ARCHITECTURE.md
//! walks a post through each step.

pub mod auth;
pub mod backup;
pub mod cache;
pub mod campaign;
pub mod clock;
pub mod config;
pub mod copy;
pub mod error;
pub mod export;
pub mod extract;
pub mod free_text;
pub mod listener;
pub mod live;
pub mod log;
pub mod mail;
pub mod monitoring;
pub mod net_guard;
pub mod openapi;
pub mod openapi_problems;
pub mod operator;
pub mod paced;
pub mod rate_limit;
pub mod remembered;
pub mod routes;
pub mod sealed_delay;
pub mod shares;
pub mod signing;
pub mod timekeeper;
pub mod verify;
pub mod views;
pub mod webhooks;
pub mod whole_number;

use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use adjutant_store::Store;
use axum::extract::{MatchedPath, Request};
use axum::response::{IntoResponse, Response};
use axum::Router;
use futures_util::FutureExt;
use tracing::Instrument;

use crate::clock::ServerClock;
use crate::config::Config;
use crate::error::AppError;

/// What every handler can reach: one shared copy ([`Shared`]), which every request clones (each
/// layer of the router holds one), so a clone is one reference count, not one per field.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The service's parts, behind [`AppState`].
pub struct Shared {
    pub store: Arc<dyn Store>,
    pub clock: Arc<dyn ServerClock>,
    pub admin_token_hash: Option<[u8; 32]>,
    pub scenarios: Arc<campaign::Scenarios>,
    pub config: Arc<Config>,
    /// Requests, expensive reads and failed authentications per caller.
    pub limits: Arc<rate_limit::Limits>,
    /// Where webhooks may go besides global addresses (`webhook_allow`).
    pub webhook_allow: Arc<net_guard::Allowlist>,
    /// What public reads remember: verified audit prefixes, results by head hash.
    pub caches: Arc<cache::Caches>,
    /// The open event streams (`GET /v1/campaigns/{id}/events`): their memory, and those of
    /// each client address and of each token.
    pub stream_shares: routes::events::StreamShares,
    /// The signal of each followed campaign's next post, which wakes its event streams.
    pub live: Arc<live::Live>,
    /// Permits of the exports being written (`GET /v1/campaigns/{id}/export`).
    pub exports: Arc<tokio::sync::Semaphore>,
    /// The key that signs receipts, and the retired public keys.
    pub keys: Arc<signing::Keyring>,
    /// What `GET /metrics` shows.
    pub metrics: monitoring::Metrics,
}

impl AppState {
    /// The campaign log, to append posts to.
    pub fn log(&self) -> log::append::Log<'_> {
        log::append::Log {
            store: &*self.store,
            clock: self.clock.clone(),
            keys: self.keys.clone(),
            metrics: self.metrics.clone(),
            live: Some(&self.live),
            quotas: log::append::Quotas {
                notes_per_day: self.config.notes_per_player_per_day,
                seals_per_day: self.config.seals_per_player_per_day,
                posts_per_day: self.config.posts_per_player_per_day,
                max_posts_per_campaign: self.config.max_posts_per_campaign,
            },
        }
    }

    pub fn new(config: Config, store: Arc<dyn Store>, clock: Arc<dyn ServerClock>) -> Result<Self, String> {
        let scenarios = campaign::Scenarios::load(&config.scenarios_dir)?;
        for problem in scenarios.problems() {
            tracing::error!(%problem, "a scenario file was left out");
        }
        let webhook_allow = Arc::new(net_guard::Allowlist::parse(&config.webhook_allow)?);
        let (keys, _) = signing::Keyring::load(&config)?;
        mail::reminder_leads(&config.reminder_leads)?;
        let metrics = monitoring::Metrics::new();
        store.observe_batches(metrics.batch_observer());
        Ok(Self(Arc::new(Shared {
            metrics,
            keys: Arc::new(keys),
            webhook_allow,
            caches: Arc::default(),
            admin_token_hash: config.admin_token.as_ref().map(|t| auth::token_hash(t.expose())),
            store,
            clock,
            scenarios: Arc::new(scenarios),
            limits: Arc::new(rate_limit::Limits::from_config(&config)?),
            stream_shares: routes::events::StreamShares::from_config(&config),
            live: Arc::default(),
            exports: Arc::new(tokio::sync::Semaphore::new(config.max_exports.max(1))),
            config: Arc::new(config),
        })))
    }
}

/// Opens the store the database URL names: `sqlite://…` or `postgres://…`.
pub async fn open_store(url: &str) -> Result<Arc<dyn Store>, String> {
    open_store_batching(url, adjutant_store::MAX_BATCH).await
}

/// [`open_store`], committing at most `max_batch` posts at once.
pub async fn open_store_batching(url: &str, max_batch: usize) -> Result<Arc<dyn Store>, String> {
    if let Some(path) = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")) {
        let file = path.split('?').next().unwrap_or(path);
        if let Some(parent) = std::path::Path::new(file).parent() {
            if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
            }
        }
        let store = adjutant_store_sqlite::SqliteStore::open(url).await.map_err(|e| e.to_string())?;
        Ok(Arc::new(store.with_max_batch(max_batch)))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let store = adjutant_store_postgres::PostgresStore::open(url).await.map_err(|e| e.to_string())?;
        Ok(Arc::new(store.with_max_batch(max_batch)))
    } else {
        Err(format!("ADJUTANT_DATABASE_URL must start with sqlite:// or postgres://, not {url:?}"))
    }
}

/// The whole service as a router.
pub fn app(state: AppState) -> Router {
    // The one layer put around each route: a request clones one boxed service for it. A body
    // is limited where it is read (`extract::ApiJson`).
    let guarded = tower::layer::layer_fn({
        let state = state.clone();
        move |inner| Guarded { state: state.clone(), inner }
    });
    let (api, description) = routes::router().split_for_parts();
    api.merge(openapi::router(&state.scenarios, description))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(guarded)
        .with_state(state)
}

/// A panic in a handler is a bug: log it, answer a problem+json 500, keep serving.
fn panic_problem(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let what = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic");
    AppError::Internal(format!("handler panicked: {what}")).into_response()
}

async fn not_found() -> AppError {
    AppError::not_found("path", "there is nothing at this address; see /v1/openapi.json")
}

async fn method_not_allowed() -> AppError {
    AppError::Client {
        status: axum::http::StatusCode::METHOD_NOT_ALLOWED,
        field: Some("method".into()),
        rule: "request.method".into(),
        detail: "this address does not take that method; see /v1/openapi.json".into(),
    }
}

/// The layer around every route: it opens the request's span (`request`, target
/// `adjutant::request`, at debug level, with the method, the address and the version) and logs
/// the answer in it (`answered`, with the status and the microseconds; a 503 at warn level and
/// another server error at error level, with the method and the route); it times the request and
/// counts its answer ([`monitoring::answered`]), answers a panic with a problem+json 500
/// ([`panic_problem`]), and runs the caller's limits ([`rate_limit::guard`]) and the handler
/// within the time limit (503 problem+json past it); the limits of a caller without a token,
/// which need nothing looked up, are checked as the request is called. Written out as one
/// service rather than tower-http's trace and panic layers and `from_fn` steps, so a request
/// pays one boxed future here instead of a boxed future and a boxed service per step; and the
/// time limit's timer is set only for a request that is not answered at its first poll (a
/// calculator's read, a refusal), so most reads never touch the timer wheel.
#[derive(Clone)]
struct Guarded<S> {
    state: AppState,
    inner: S,
}

/// Where [`Guarded`] leaves a request as it returns its future.
enum Pending<S: tower::Service<Request>> {
    /// Admitted and its route called: the route's future.
    Called(S::Future),
    /// Refused (or its limits' check or the route's call panicked): the answer.
    Answered(Response),
    /// With a token, to authenticate in the future: the route's service and the request.
    Token(S, Request),
}

impl<S> tower::Service<Request> for Guarded<S>
where
    S: tower::Service<Request, Error = Infallible> + Clone + Send + 'static,
    S::Response: IntoResponse,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let started = Instant::now();
        let state = self.state.clone();
        let method = request.method().clone();
        let route = request.extensions().get::<MatchedPath>().cloned();
        let span = tracing::debug_span!(
            target: "adjutant::request",
            "request",
            method = %method,
            uri = %request.uri(),
            version = ?request.version()
        );
        // A request without a token needs nothing looked up to be limited: that is done here,
        // and the route called at once, so its service is not cloned into the future. One with
        // a token is authenticated (a read of the store) in the future, under the time limit.
        let inner = &mut self.inner;
        let pending = span.in_scope(|| {
            std::panic::catch_unwind(AssertUnwindSafe(|| {
                match rate_limit::guard_anonymous(&state, &mut request, started) {
                    Some(Ok(())) => Pending::Called(inner.call(request)),
                    Some(Err(refused)) => Pending::Answered(refused),
                    None => {
                        // The service made ready is the one called; its clone waits for the next
                        // request.
                        let ready = inner.clone();
                        Pending::Token(std::mem::replace(inner, ready), request)
                    }
                }
            }))
            .unwrap_or_else(|panic| Pending::Answered(panic_problem(panic)))
        });
        Box::pin(async move {
            let limit = Duration::from_secs(state.config.request_timeout_secs.max(1));
            let writes = !matches!(method, axum::http::Method::GET | axum::http::Method::HEAD);
            let handling = async {
                let called = match pending {
                    Pending::Called(called) => called,
                    Pending::Answered(answer) => return answer,
                    Pending::Token(mut inner, mut request) => {
                        if let Err(refused) = rate_limit::guard(&state, &mut request).await {
                            return refused;
                        }
                        inner.call(request)
                    }
                };
                match called.await {
                    Ok(response) => response.into_response(),
                    Err(never) => match never {},
                }
            };
            let mut handling = std::pin::pin!(AssertUnwindSafe(handling.instrument(span.clone())).catch_unwind());
            // Polled once before the timer is set: what is answered at once never needs it.
            let first = std::future::poll_fn(|cx| Poll::Ready(handling.as_mut().poll(cx))).await;
            let finished = match (first, started.checked_add(limit)) {
                (Poll::Ready(finished), _) => Ok(finished),
                (Poll::Pending, Some(deadline)) => tokio::time::timeout_at(deadline.into(), handling).await,
                // A limit past what the clock can count: none.
                (Poll::Pending, None) => Ok(handling.await),
            };
            // Made in the request's span, so that what a panic or the time limit logs says which
            // request it was.
            let response = span.in_scope(|| match finished {
                Ok(Ok(response)) => response,
                Ok(Err(panic)) => panic_problem(panic),
                Err(_) => AppError::TimedOut { limit_secs: limit.as_secs(), writes }.into_response(),
            });
            let status = response.status();
            // One clock read for the log and the route's histogram.
            let took = started.elapsed();
            let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
            let path = route.as_ref().map_or("unmatched", MatchedPath::as_str);
            // A server error is the operator's to see at the default level (its cause, where
            // there is one, was logged as it was answered); a 503 is a limit met or the database
            // away for a moment, and comes often when it comes.
            if status == axum::http::StatusCode::SERVICE_UNAVAILABLE {
                tracing::warn!(target: "adjutant::request", parent: &span, %method, route = path, status = status.as_u16(), micros, "answered 503");
            } else if status.is_server_error() {
                tracing::error!(target: "adjutant::request", parent: &span, %method, route = path, status = status.as_u16(), micros, "answered with a server error");
            } else {
                tracing::debug!(target: "adjutant::request", parent: &span, status = status.as_u16(), micros, "answered");
            }
            monitoring::answered(&state.metrics, &method, route.as_ref(), took, &response);
            Ok(response)
        })
    }
}

/// Runs the service, its webhook deliverer, the campaign clock's keeper, the mailer and the relay
/// of other servers' posts (`live::relay`), until SIGTERM or Ctrl-C; then finishes the
/// requests in flight and stops the deliverer (an attempt under way is finished and logged).
pub async fn serve(listener: tokio::net::TcpListener, state: AppState) -> std::io::Result<()> {
    // Deliveries keep the machine's time even where posts are stamped by a clock set by hand
    // (the tests'): a receiver checks `webhook-timestamp` against its own clock, and a retry
    // waits real time.
    let deliverer = webhooks::Deliverer::new(
        state.store.clone(),
        webhooks::Settings::from_config(&state.config),
        state.webhook_allow.clone(),
        Arc::new(clock::SystemClock),
    )
    .map_err(std::io::Error::other)?
    .with_metrics(state.metrics.clone())
    .woken_by(state.config.webhook_wake.then(|| state.live.deliveries()));
    let metrics_apart = monitoring::listen_apart(&state.config).await?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let timekeeper = timekeeper::Timekeeper::new(state.clone());
    let keeping = timekeeper.run(stopped.clone());
    let mailer = mail::Mailer::new(state.clone()).map_err(std::io::Error::other)?;
    let mailing = {
        let stopped = stopped.clone();
        async move {
            if let Some(mailer) = mailer {
                mailer.run(stopped).await;
            }
        }
    };
    let exposing = monitoring::serve_apart(metrics_apart, state.clone(), stopped.clone());
    let upkeep = monitoring::upkeep(state.metrics.clone(), stopped.clone());
    let relaying = live::relay(state.live.clone(), state.store.clone(), stopped.clone());
    let serving = async move {
        let settings = listener::EdgeSettings::from_config(&state.config);
        let result = listener::serve(listener, app(state), settings, shutdown_signal()).await;
        let _ = stop.send(true);
        result
    };
    // One future, not a spawned task: dropping `serve` (a test aborting its server) stops both.
    let (result, (), (), (), (), (), ()) =
        tokio::join!(serving, deliverer.run(stopped), keeping, mailing, exposing, upkeep, relaying);
    result
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing requests in flight");
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use tower::ServiceExt;

    use super::*;

    async fn state(dir: &std::path::Path) -> AppState {
        state_limited(dir, 1).await
    }

    async fn state_limited(dir: &std::path::Path, request_timeout_secs: u64) -> AppState {
        let mut config = Config::defaults();
        config.database_url = format!("sqlite://{}", dir.join("adjutant.db").display());
        config.scenarios_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../config/scenarios").into();
        config.signing_key = Some(auth::Secret::new("ab".repeat(32)));
        config.request_timeout_secs = request_timeout_secs;
        let store = open_store(&config.database_url).await.expect("store");
        AppState::new(config, store, Arc::new(clock::SystemClock)).expect("state")
    }

    fn get() -> Request {
        Request::get("/v1/tools/result-number?time=9:51:45").body(Body::empty()).expect("request")
    }

    #[tokio::test]
    async fn a_panicking_handler_is_answered_500_problem_json_and_counted() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let state = state(dir.path()).await;
        let handler = tower::service_fn(|_: Request| async {
            let divisor = std::hint::black_box(0u32);
            Ok::<_, Infallible>(format!("{}", 1 / divisor))
        });
        let response = Guarded { state: state.clone(), inner: handler }.oneshot(get()).await.expect("answer");
        assert_eq!(response.status(), axum::http::StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(response.headers()[axum::http::header::CONTENT_TYPE], error::PROBLEM_JSON);
        let shown = state.metrics.render();
        assert!(shown.contains(r#"adjutant_http_request_seconds_count{method="GET",route="unmatched"} 1"#), "{shown}");
    }

    /// A body is read up to the server's `body_limit_bytes`, or its route's own limit (a
    /// scenario's upload), whether its length is told first or not: past it, 413 problem+json
    /// naming the rule; within it, the route answers as it would.
    #[tokio::test]
    async fn a_body_past_its_route_s_limit_is_refused_413() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let state = state(dir.path()).await;
        let limit = state.config.body_limit_bytes;
        let upload_limit = routes::scenarios::UPLOAD_BODY_LIMIT;
        assert!(upload_limit > limit + 1);
        // A JSON object of exactly `bytes` bytes.
        let object = |bytes: usize| format!(r#"{{"text":"{}"}}"#, "x".repeat(bytes - 11)).into_bytes();
        let post = format!("/v1/campaigns/{}/posts", uuid::Uuid::new_v4());
        for (path, bytes, status, rule) in [
            (post.as_str(), limit + 1, 413, Some("request.body_limit")),
            // Read, and refused for what it says.
            (post.as_str(), limit, 422, None),
            ("/v1/scenarios/check", limit + 1, 401, None),
            ("/v1/scenarios/check", upload_limit, 401, None),
            ("/v1/scenarios/check", upload_limit + 1, 413, Some("request.body_limit")),
        ] {
            for told in [true, false] {
                let body = object(bytes);
                assert_eq!(body.len(), bytes);
                let body = if told {
                    Body::from(body)
                } else {
                    // Sent in pieces, its length not told first.
                    let pieces: Vec<Result<Vec<u8>, Infallible>> = body.chunks(4096).map(|c| Ok(c.to_vec())).collect();
                    Body::from_stream(futures_util::stream::iter(pieces))
                };
                let request = Request::post(path)
                    .header(axum::http::header::CONTENT_TYPE, "application/json")
                    .header("Idempotency-Key", "k1")
                    .body(body)
                    .expect("request");
                let response = app(state.clone()).oneshot(request).await.expect("answer");
                assert_eq!(response.status().as_u16(), status, "{path} {bytes} bytes, length told: {told}");
                let problem = axum::body::to_bytes(response.into_body(), 64 * 1024).await.expect("body");
                let problem: serde_json::Value = serde_json::from_slice(&problem).expect("problem+json");
                if let Some(rule) = rule {
                    assert_eq!(problem["rule"], rule, "{problem}");
                    assert_eq!(problem["field"], "body", "{problem}");
                }
            }
        }
    }

    /// A request not answered at its first poll runs on under the time limit's timer: it is
    /// answered when it finishes in time, and its panic is still a 500.
    #[tokio::test]
    async fn a_handler_that_waits_is_answered_and_its_later_panic_is_caught() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let state = state(dir.path()).await;
        let waits = tower::service_fn(|_: Request| async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok::<_, Infallible>("in time")
        });
        let response = Guarded { state: state.clone(), inner: waits }.oneshot(get()).await.expect("answer");
        assert_eq!(response.status(), axum::http::StatusCode::OK);
        let body = axum::body::to_bytes(response.into_body(), 1024).await.expect("body");
        assert_eq!(&body[..], b"in time");
        let panics = tower::service_fn(|_: Request| async {
            tokio::task::yield_now().await;
            let divisor = std::hint::black_box(0u32);
            Ok::<_, Infallible>(format!("{}", 1 / divisor))
        });
        let response = Guarded { state: state.clone(), inner: panics }.oneshot(get()).await.expect("answer");
        assert_eq!(response.status(), axum::http::StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(response.headers()[axum::http::header::CONTENT_TYPE], error::PROBLEM_JSON);
    }

    /// A time limit past what the clock can count is no limit, not a panic.
    #[tokio::test]
    async fn a_time_limit_past_the_clock_s_reach_is_none() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let state = state_limited(dir.path(), u64::MAX).await;
        let waits = tower::service_fn(|_: Request| async {
            tokio::task::yield_now().await;
            Ok::<_, Infallible>("answered")
        });
        let response = Guarded { state, inner: waits }.oneshot(get()).await.expect("answer");
        assert_eq!(response.status(), axum::http::StatusCode::OK);
    }

    #[tokio::test]
    async fn a_handler_past_the_time_limit_is_answered_503_and_counted() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let state = state(dir.path()).await;
        let handler = tower::service_fn(|_: Request| async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            Ok::<_, Infallible>("too late")
        });
        let response = Guarded { state: state.clone(), inner: handler }.oneshot(get()).await.expect("answer");
        assert_eq!(response.status(), axum::http::StatusCode::SERVICE_UNAVAILABLE);
        let body = axum::body::to_bytes(response.into_body(), 64 * 1024).await.expect("body");
        let problem: serde_json::Value = serde_json::from_slice(&body).expect("problem+json");
        assert_eq!(problem["rule"], "request.time_limit", "{problem}");
        assert!(state
            .metrics
            .render()
            .contains(r#"adjutant_http_request_seconds_count{method="GET",route="unmatched"} 1"#));
    }
}
