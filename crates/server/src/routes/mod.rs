//! The API, one module a resource, merged here.

pub mod audit;
pub mod campaigns;
pub mod events;
pub mod export;
pub mod fairness;
pub mod feed;
pub mod game;
pub mod metrics;
pub mod page;
pub mod play;
pub mod posts;
pub mod reports;
pub mod scenarios;
pub mod shared;
pub mod tokens;
pub mod tools;
pub mod webhooks;

use axum::Json;
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::AppState;

/// The routes the OpenAPI document does not list: the pages, their stylesheet and scripts, the API
/// docs page and the document itself, and the operator's metrics, as (method, path) the way the
/// router writes them. The authorization matrix (tests/e2e/authz.rs) holds a row for each of these
/// and for each operation of the document, and checks the router's sources declare no other route.
pub const OTHER_ROUTES: &[(&str, &str)] = &[
    ("GET", "/campaigns/{id}"),
    ("GET", "/play/{id}"),
    ("GET", "/console"),
    ("GET", "/console/editor"),
    ("GET", "/campaigns/{id}/audit"),
    ("GET", "/campaigns/{id}/posts/{seq}/audit"),
    ("GET", "/campaigns/{id}/fairness"),
    ("GET", "/assets/page.js"),
    ("GET", "/assets/history.js"),
    ("GET", "/assets/app.css"),
    ("GET", "/assets/common.js"),
    ("GET", "/assets/play.js"),
    ("GET", "/assets/console.js"),
    ("GET", "/assets/editor.js"),
    ("GET", "/docs"),
    ("GET", "/docs/"),
    ("GET", "/docs/{*rest}"),
    ("GET", "/v1/openapi.json"),
    // Prometheus's text format, for the operator's token: not the API's JSON.
    ("GET", "/metrics"),
];

/// Every route of the service but the API docs. An API route is registered with `routes!`, which
/// adds its operation to the description as it adds it to the router; the pages and assets, which
/// the description does not list, are the `OTHER_ROUTES`.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(crate::openapi::ApiDoc::openapi())
        .routes(routes!(healthz))
        .merge(tokens::router())
        .merge(scenarios::router())
        .merge(campaigns::router())
        .merge(posts::router())
        .merge(events::router())
        .merge(audit::router())
        .merge(tools::router())
        .merge(game::router())
        .merge(webhooks::router())
        .merge(feed::router())
        .merge(page::router())
        .merge(play::router())
        .merge(reports::router())
        .merge(fairness::router())
        .merge(export::router())
        .merge(metrics::router())
}

#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `ok` when the database answers.
    pub status: String,
    /// `sqlite` or `postgres`.
    pub backend: String,
    /// The most posts one commit of this server has carried since it started (group commit:
    /// posts waiting for the writer are written in one transaction).
    #[schema(minimum = 0)]
    pub largest_batch: u64,
    /// How many batches were written one post at a time rather than together (a key seen
    /// before, or a statement that failed; their posts still answered each on its own).
    #[schema(minimum = 0)]
    pub batches_one_by_one: u64,
}

/// Liveness and database reachability.
#[utoipa::path(get, path = "/healthz", tag = "service",
    responses((status = 200, body = Health), (status = 503, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn healthz(axum::extract::State(state): axum::extract::State<AppState>) -> ApiResult<Json<Health>> {
    state.store.ping().await?;
    Ok(Json(Health {
        status: "ok".into(),
        backend: state.store.backend().into(),
        largest_batch: state.store.largest_batch() as u64,
        batches_one_by_one: state.store.batches_one_by_one() as u64,
    }))
}
