//! Scenarios: the server's (the shipped one and the operator's files) and those moderators
//! upload. An uploaded scenario is checked whole before it is kept, every problem answered at
//! once; it is never changed, is addressed by the SHA-256 of its text, and only the moderator
//! who uploaded it sees it or creates campaigns from it.

use std::sync::Arc;

use adjutant_rules::dice::stamp_text;
use adjutant_rules::short_acw::scenario::rule;
use adjutant_rules::short_acw::{GameState, Limits, Scenario, ScenarioError};
use adjutant_store::{ScenarioEntry, UploadedScenario};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::{ApiResult, AppError, ProblemItem};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::free_text::check_name;
use crate::routes::shared::page_limit;
use crate::AppState;

/// The longest scenario text a moderator may upload, in bytes: the shipped scenario is 9 KB,
/// and the text sits inside a JSON body that the server's body limit (64 KiB by default) bounds.
pub const MAX_TEXT_BYTES: usize = 48 * 1024;

/// The largest upload body, whatever the server's `body_limit_bytes`: a text one byte over
/// [`MAX_TEXT_BYTES`] is answered with the rule it breaks (422, `scenario.text_length`), not
/// 413, even when JSON escapes every character of it as a surrogate pair (12 bytes).
pub const UPLOAD_BODY_LIMIT: usize = 16 * MAX_TEXT_BYTES;

/// The most scenarios one moderator keeps: uploads are never removed, so their room is bounded.
pub const MAX_UPLOADS: i64 = 200;

/// The pattern of an uploaded scenario's id: the SHA-256 of its text in lower-case hex.
pub const UPLOADED_ID_PATTERN: &str = "^[0-9a-f]{64}$";

/// Whether `id` has the shape of an uploaded scenario's id.
pub fn is_uploaded_id(id: &str) -> bool {
    id.len() == 64 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A scenario a moderator uploads.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewScenario {
    /// The moderator's name for it (one line, at most 80 characters).
    #[schema(value_type = crate::free_text::Name, example = "Valley, spring 1862")]
    pub name: String,
    /// The scenario in Adjutant's TOML format (docs/rules/short-acw.md, "Scenario file format"), at
    /// most 49 152 bytes. Checked as a whole: every problem is answered at once, listed in the
    /// problem's `errors`, and nothing is kept. Limits beyond the operator's files: the map is
    /// at most 40 × 40 hexes, a unit's factors and every movement allowance and cost are 1 to
    /// 99, each side deploys near at least one city, and every name and text players read is
    /// one line of at most 200 characters (the note: 1000).
    #[schema(max_length = 49152)]
    pub text: String,
}

/// A scenario as the API shows it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ScenarioView {
    /// What a new campaign's `scenario` names: a server scenario's name (`short-acw`), or an
    /// uploaded scenario's SHA-256 of its text (64 hex digits).
    #[schema(example = "short-acw")]
    pub id: String,
    /// `server` (shipped with Adjutant or installed by the operator) or `uploaded`.
    #[schema(pattern = "^(server|uploaded)$")]
    pub source: String,
    /// A server scenario's name, or the name its moderator gave an upload.
    pub name: String,
    /// The scenario's own title.
    pub title: String,
    /// Who uploaded it (uploaded scenarios).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub moderator_id: Option<Uuid>,
    /// When it was uploaded (uploaded scenarios).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub created_at: Option<String>,
    /// The scenario's text (`GET /v1/scenarios/{id}` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub text: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ScenarioList {
    /// Every scenario of the server, shipped and installed by the operator.
    pub server: Vec<ScenarioView>,
    /// The calling moderator's uploads, by id (none for other callers).
    pub uploaded: Vec<ScenarioView>,
    /// Pass as `after` for the next page of uploads; absent on the last page.
    pub next_after: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ScenarioPaging {
    /// The last uploaded scenario id of the previous page.
    #[param(pattern = "^[0-9a-f]{64}$")]
    pub after: Option<String>,
    /// At most this many uploads (1–100, default 50).
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_scenarios, upload_scenario))
        .layer(DefaultBodyLimit::max(UPLOAD_BODY_LIMIT))
        .routes(routes!(get_scenario))
        .routes(routes!(scenario_map_svg))
        .routes(routes!(scenario_map_png))
}

/// Where a scenario's problem sits in the request.
fn problem_item(error: ScenarioError) -> ProblemItem {
    if error.rule == rule::SYNTAX {
        // The TOML itself: its place is a line and column of the text.
        ProblemItem {
            field: "body.text".into(),
            rule: error.rule.into(),
            detail: format!("{}: {}", error.place, error.problem),
        }
    } else {
        ProblemItem { field: format!("body.text.{}", error.place), rule: error.rule.into(), detail: error.problem }
    }
}

/// Checks an upload's text under the upload limits, every problem listed.
pub fn check_upload(text: &str) -> ApiResult<Scenario> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(AppError::unprocessable(
            "body.text",
            "scenario.text_length",
            format!("a scenario's text is at most {MAX_TEXT_BYTES} bytes; this one is {}", text.len()),
        ));
    }
    Scenario::checked("upload.toml", text, Limits::UPLOAD).map_err(|errors| {
        let errors: Vec<ProblemItem> = errors.into_iter().map(problem_item).collect();
        AppError::Problems {
            field: "body.text".into(),
            rule: "scenario.invalid".into(),
            detail: format!(
                "the scenario breaks {} rule{}, each listed in `errors`; nothing was kept",
                errors.len(),
                if errors.len() == 1 { "" } else { "s" }
            ),
            errors,
        }
    })
}

/// Uploads a scenario (moderators). The same text uploaded again by the same moderator answers
/// the scenario kept the first time (200), unchanged.
#[utoipa::path(post, path = "/v1/scenarios", tag = "scenarios", request_body = NewScenario, security(("bearer" = [])),
    responses((status = 201, body = ScenarioView, description = "Kept"),
              (status = 200, body = ScenarioView, description = "This moderator had uploaded the same text already: the scenario kept then"),
              (status = 422, body = crate::error::Problem, content_type = "application/problem+json",
               description = "The scenario breaks the rules: `errors` lists every problem with its field path (`body.text.map.rail[0].hexes[3]`) and rule (`scenario.rail_gap`); or the name or text length is refused"),
              (status = 409, body = crate::error::Problem, content_type = "application/problem+json",
               description = "The moderator keeps 200 scenarios already (`scenario.quota`)")))]
pub async fn upload_scenario(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<NewScenario>,
) -> ApiResult<(StatusCode, Json<ScenarioView>)> {
    let moderator = caller.require_moderator()?;
    let name = check_name("body.name", &req.name)?;
    let scenario = check_upload(&req.text)?;
    let id = hex::encode(Sha256::digest(req.text.as_bytes()));
    let entry = ScenarioEntry {
        id: id.clone(),
        moderator_id: moderator.id,
        name,
        title: scenario.title.clone(),
        created_at: chrono::DateTime::from_timestamp_millis(state.clock.now().timestamp_millis()).unwrap_or_default(),
    };
    let already = state.store.scenarios(moderator.id, None, MAX_UPLOADS).await?;
    if already.len() as i64 >= MAX_UPLOADS && !already.iter().any(|e| e.id == id) {
        return Err(AppError::conflict(
            "body.text",
            "scenario.quota",
            format!("a moderator keeps at most {MAX_UPLOADS} scenarios, and uploads are never removed"),
        ));
    }
    let asked = entry.clone();
    let kept = state.store.keep_scenario(UploadedScenario { entry, text: req.text }).await?;
    let status = if kept.entry == asked { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(uploaded_view(&kept.entry, None))))
}

fn uploaded_view(entry: &ScenarioEntry, text: Option<String>) -> ScenarioView {
    ScenarioView {
        id: entry.id.clone(),
        source: "uploaded".into(),
        name: entry.name.clone(),
        title: entry.title.clone(),
        moderator_id: Some(entry.moderator_id),
        created_at: Some(stamp_text(entry.created_at)),
        text,
    }
}

fn server_view(name: &str, scenario: &Scenario, text: Option<String>) -> ScenarioView {
    ScenarioView {
        id: name.to_owned(),
        source: "server".into(),
        name: name.to_owned(),
        title: scenario.title.clone(),
        moderator_id: None,
        created_at: None,
        text,
    }
}

/// The scenarios the caller may create campaigns from: the server's, and a moderator's own
/// uploads (a page of them).
#[utoipa::path(get, path = "/v1/scenarios", tag = "scenarios", params(ScenarioPaging),
    responses((status = 200, body = ScenarioList), (status = 400, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn list_scenarios(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ScenarioPaging>,
) -> ApiResult<Json<ScenarioList>> {
    let limit = page_limit(q.limit)?;
    if let Some(after) = &q.after {
        if !is_uploaded_id(after) {
            return Err(AppError::bad_request(
                "query.after",
                "paging.after",
                "after is an uploaded scenario's id: 64 hex digits",
            ));
        }
    }
    let mut server = vec![];
    for name in state.scenarios.names() {
        server.push(server_view(name, &*server_scenario(&state, name)?, None));
    }
    let mut uploaded: Vec<ScenarioView> = vec![];
    let mut next_after = None;
    if let Some(moderator) = moderator_of(&caller) {
        let entries = state.store.scenarios(moderator, q.after.as_deref(), limit).await?;
        if entries.len() as i64 == limit {
            next_after = entries.last().map(|e| e.id.clone());
        }
        uploaded = entries.iter().map(|entry| uploaded_view(entry, None)).collect();
    }
    Ok(Json(ScenarioList { server, uploaded, next_after }))
}

/// A moderator caller's id: only moderators upload scenarios.
fn moderator_of(caller: &Caller) -> Option<Uuid> {
    caller.principal().filter(|p| p.kind == adjutant_store::PrincipalKind::Moderator).map(|p| p.id)
}

fn server_scenario(state: &AppState, name: &str) -> ApiResult<Arc<Scenario>> {
    let text = state.scenarios.get(name).unwrap_or_default();
    state.scenarios.parse(name, text).map_err(|e| AppError::Internal(e.join("; ")))
}

fn parse(state: &AppState, kept: &UploadedScenario) -> ApiResult<Arc<Scenario>> {
    state.scenarios.parse(&kept.entry.id, &kept.text).map_err(|e| AppError::Internal(e.join("; ")))
}

/// A scenario the caller may see: a server scenario by name, or the caller's own upload.
/// Another moderator's upload is not found, as if it did not exist.
pub async fn find(state: &AppState, caller: &Caller, id: &str) -> ApiResult<Found> {
    if let Some(text) = state.scenarios.get(id) {
        let scenario = server_scenario(state, id)?;
        return Ok(Found { view: server_view(id, &scenario, Some(text.to_owned())), scenario, private: false });
    }
    let not_found = || AppError::not_found("path.id", format!("no scenario {id:?} that this caller may see"));
    let moderator = moderator_of(caller).filter(|_| is_uploaded_id(id)).ok_or_else(not_found)?;
    let kept = state.store.scenario(moderator, id).await?.ok_or_else(not_found)?;
    let scenario = parse(state, &kept)?;
    Ok(Found { view: uploaded_view(&kept.entry, Some(kept.text)), scenario, private: true })
}

/// A scenario found for a caller.
pub struct Found {
    pub view: ScenarioView,
    pub scenario: Arc<Scenario>,
    /// An upload, seen by its moderator alone.
    pub private: bool,
}

/// One scenario, with its text: a server scenario, or the caller's own upload.
#[utoipa::path(get, path = "/v1/scenarios/{id}", tag = "scenarios",
    params(("id" = String, Path, description = "a server scenario's name, or an uploaded scenario's id (64 hex digits)")),
    responses((status = 200, body = ScenarioView), (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn get_scenario(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<ScenarioView>> {
    Ok(Json(find(&state, &caller, &id).await?.view))
}

fn cache_control(response: &mut Response, private: bool) {
    let value = if private { "private, no-cache" } else { "no-cache" };
    response.headers_mut().insert(header::CACHE_CONTROL, header::HeaderValue::from_static(value));
}

fn preview_svg(scenario: &Scenario) -> String {
    adjutant_render::map_svg(scenario, &GameState::new(scenario), &[])
}

/// The scenario's map before any campaign: terrain, rivers, bridges, rail, cities with their
/// first controller, as a campaign's map draws them.
#[utoipa::path(get, path = "/v1/scenarios/{id}/map.svg", tag = "scenarios",
    params(("id" = String, Path, description = "a server scenario's name, or an uploaded scenario's id (64 hex digits)")),
    responses((status = 200, description = "SVG picture", content_type = "image/svg+xml", body = String),
              (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn scenario_map_svg(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Response> {
    let found = find(&state, &caller, &id).await?;
    let mut response =
        ([(header::CONTENT_TYPE, "image/svg+xml; charset=utf-8")], preview_svg(&found.scenario)).into_response();
    cache_control(&mut response, found.private);
    Ok(response)
}

/// The scenario's map before any campaign, as a PNG picture.
#[utoipa::path(get, path = "/v1/scenarios/{id}/map.png", tag = "scenarios",
    params(("id" = String, Path, description = "a server scenario's name, or an uploaded scenario's id (64 hex digits)")),
    responses((status = 200, description = "PNG picture", content_type = "image/png", body = Vec<u8>),
              (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn scenario_map_png(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Response> {
    let found = find(&state, &caller, &id).await?;
    // Remembered by the scenario's text, which never changes: keyed by the first half of its
    // hash, as a campaign's map is by the campaign.
    let hash: [u8; 32] = Sha256::digest(found.view.text.as_deref().unwrap_or_default().as_bytes()).into();
    let key = Uuid::from_slice(&hash[..16]).unwrap_or_default();
    let png = match state.caches.at_head(key, "scenario map.png", "") {
        Some(png) => png,
        None => {
            let svg = preview_svg(&found.scenario);
            // An upload's map is at most 40 × 40; an operator's file may be larger.
            if svg.len() > crate::routes::game::MAX_SVG_BYTES {
                return Err(AppError::Internal(format!("the map is too large to draw ({} bytes of SVG)", svg.len())));
            }
            let permit = state
                .caches
                .map_renders
                .clone()
                .acquire_owned()
                .await
                .map_err(|_| AppError::Unavailable("the map cannot be drawn now".into()))?;
            let png = tokio::task::spawn_blocking(move || {
                let png = adjutant_render::map_png(&svg);
                drop(permit);
                png
            })
            .await
            .map_err(|e| AppError::Internal(e.to_string()))?
            .map_err(AppError::Internal)?;
            state.caches.remember_at_head(key, "scenario map.png", "", png)
        }
    };
    let mut response = ([(header::CONTENT_TYPE, "image/png")], png.to_vec()).into_response();
    cache_control(&mut response, found.private);
    Ok(response)
}
