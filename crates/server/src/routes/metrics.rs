//! `GET /metrics`: the service's metrics in Prometheus's text format (`crate::monitoring`), for
//! the operator's token on the public listener, and for anyone who can reach the separate
//! address `metrics_listen`, when the operator sets one.

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use utoipa_axum::router::OpenApiRouter;

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::monitoring::TEXT_FORMAT;
use crate::AppState;

/// The route of the public listener, which only the operator may read.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().route("/metrics", get(operator_scrape))
}

/// The whole service of the separate metrics address: `/metrics` with no token, nothing else.
/// Kept off the public listener, where the counters would tell anyone how the campaigns go.
pub fn apart(state: AppState) -> Router {
    Router::new().route("/metrics", get(scrape)).with_state(state)
}

async fn operator_scrape(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require_operator()?;
    Ok(scrape(State(state)).await)
}

async fn scrape(State(state): State<AppState>) -> Response {
    ([(CONTENT_TYPE, TEXT_FORMAT)], state.metrics.render()).into_response()
}
