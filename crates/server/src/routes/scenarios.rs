//! Scenarios: the server's (the shipped one and the operator's files) and those moderators
//! upload. An uploaded scenario is checked whole before it is kept, every problem answered at
//! once; it is never changed, is addressed by the SHA-256 of its text, and only the moderator
//! who uploaded it sees it or creates campaigns from it.

use std::sync::Arc;

use adjutant_rules::dice::stamp_text;
use adjutant_rules::short_acw::scenario::rule;
use adjutant_rules::short_acw::{GameState, Limits, Scenario, ScenarioError};
use adjutant_store::{ScenarioEntry, UploadedScenario};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
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

/// A scenario a moderator uploads, as the handler reads it: a name and the scenario in one of
/// its two forms, so that a body with both or neither is answered naming the member at fault.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewScenario {
    pub name: String,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub scenario: Option<Value>,
}

/// A scenario a moderator uploads: a name, and the scenario either as TOML text (`text`) or as
/// JSON (`scenario`). The body says which form it sends by the member it carries: exactly one
/// of `text` and `scenario`.
#[derive(Deserialize, ToSchema)]
#[serde(untagged)]
#[allow(dead_code)] // The description's shape of the body; the handler reads [`NewScenario`].
pub enum NewScenarioBody {
    Toml(NewTomlScenario),
    Json(NewJsonScenario),
}

/// An upload in TOML.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct NewTomlScenario {
    /// The moderator's name for it (one line, at most 80 characters).
    #[schema(value_type = crate::free_text::Name, example = "Valley, spring 1862")]
    name: String,
    /// The scenario in Adjutant's TOML format (docs/rules/short-acw.md, "Scenario file format"), at
    /// most 49 152 bytes. Checked as a whole: every problem is answered at once, listed in the
    /// problem's `errors`, and nothing is kept. Limits beyond the operator's files: the map is
    /// at most 40 × 40 hexes, a unit's factors and every movement allowance and cost are 1 to
    /// 99, each side deploys near at least one city, and every name and text players read is
    /// one line of at most 200 characters (the note: 1000).
    #[schema(max_length = 49152)]
    text: String,
}

/// An upload in JSON.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct NewJsonScenario {
    /// The moderator's name for it (one line, at most 80 characters).
    #[schema(value_type = crate::free_text::Name, example = "Valley, spring 1862")]
    name: String,
    /// The scenario as a JSON object of the same structure as the TOML format: its tables are
    /// objects (`map`, `movement`), its arrays of tables arrays of objects (`map.cities`,
    /// `units.union`), and a `null` member counts as absent. Checked under the same rules and
    /// limits as `text`, each problem's field a path under `body.scenario`
    /// (`body.scenario.map.rail[0].hexes[3]`); what is kept, and what campaigns bind, is its
    /// TOML text, at most 49 152 bytes.
    #[schema(value_type = Object)]
    scenario: Value,
}

/// A scenario to check without keeping it: as TOML text (`text`) or as JSON (`scenario`), the
/// same two forms as an upload's, exactly one of them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioToCheck {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub scenario: Option<Value>,
}

/// A scenario to check: exactly one of `text` (TOML) and `scenario` (JSON), as an upload's.
#[derive(Deserialize, ToSchema)]
#[serde(untagged)]
#[allow(dead_code)] // The description's shape of the body; the handler reads [`ScenarioToCheck`].
pub enum ScenarioToCheckBody {
    Toml(TomlToCheck),
    Json(JsonToCheck),
}

/// A scenario in TOML to check.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct TomlToCheck {
    /// The scenario in Adjutant's TOML format, as an upload's `text` (at most 49 152 bytes).
    #[schema(max_length = 49152)]
    text: String,
}

/// A scenario in JSON to check.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct JsonToCheck {
    /// The scenario as JSON of the TOML format's structure, as an upload's `scenario`.
    #[schema(value_type = Object)]
    scenario: Value,
}

/// What the server finds in a scenario it checks.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ScenarioCheck {
    /// Every problem, as an upload's 422 lists them in `errors` (field path and rule); empty
    /// when the scenario is valid and an upload of it would be kept.
    pub problems: Vec<ProblemItem>,
    /// The scenario as JSON of the TOML format's structure, whenever its text reads as TOML
    /// (valid or not): what an editor opens a scenario's text as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Object, nullable = false)]
    pub scenario: Option<Value>,
    /// The TOML text an upload of it keeps (valid scenarios).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub text: Option<String>,
    /// The id an upload of it gets: the SHA-256 of `text` (valid scenarios).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, pattern = "^[0-9a-f]{64}$")]
    pub id: Option<String>,
    /// The map before any campaign, drawn as `GET /v1/scenarios/{id}/map.svg` draws it (valid
    /// scenarios).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub svg: Option<String>,
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
        .routes(routes!(check_scenario))
        .layer(axum::Extension(crate::extract::BodyLimit(UPLOAD_BODY_LIMIT)))
        .routes(routes!(get_scenario))
        .routes(routes!(scenario_map_svg))
        .routes(routes!(scenario_map_png))
}

/// The form a body sends its scenario in.
pub enum Form {
    /// `text`: the TOML format.
    Toml(String),
    /// `scenario`: JSON of the same structure.
    Json(Value),
}

impl Form {
    /// The one form a body carries, or the rule it breaks when it carries both or neither.
    fn of(text: Option<String>, scenario: Option<Value>) -> ApiResult<Form> {
        match (text, scenario) {
            (Some(text), None) => Ok(Form::Toml(text)),
            (None, Some(value)) if value.is_object() => Ok(Form::Json(value)),
            // As the description says: the JSON form is an object, as the TOML format is a table.
            (None, Some(_)) => Err(AppError::unprocessable(
                "body.scenario",
                rule::SYNTAX,
                "a scenario in JSON is an object, as the TOML format is a table",
            )),
            (Some(_), Some(_)) => Err(AppError::unprocessable(
                "body.scenario",
                "scenario.one_form",
                "send the scenario once: as TOML in `text` or as JSON in `scenario`, not both",
            )),
            (None, None) => Err(AppError::unprocessable(
                "body.text",
                "scenario.one_form",
                "send the scenario: as TOML in `text` or as JSON in `scenario`",
            )),
        }
    }

    /// The request member that holds the scenario.
    fn field(&self) -> &'static str {
        match self {
            Form::Toml(_) => "body.text",
            Form::Json(_) => "body.scenario",
        }
    }
}

/// Where a scenario's problem sits in the request: under `body.text` or `body.scenario`.
fn problem_item(base: &str, error: ScenarioError) -> ProblemItem {
    let toml_syntax = error.rule == rule::SYNTAX && base == "body.text";
    if toml_syntax {
        // The TOML itself: its place is a line and column of the text.
        ProblemItem {
            field: base.into(),
            rule: error.rule.into(),
            detail: format!("{}: {}", error.place, error.problem),
        }
    } else if error.place == "." {
        ProblemItem { field: base.into(), rule: error.rule.into(), detail: error.problem }
    } else {
        ProblemItem { field: format!("{base}.{}", error.place), rule: error.rule.into(), detail: error.problem }
    }
}

/// A scenario checked under the upload limits: the scenario with the TOML text kept for it, or
/// every problem.
fn check_form(form: &Form) -> Result<(Scenario, String), Vec<ProblemItem>> {
    let base = form.field();
    let text = match form {
        Form::Toml(text) => text.clone(),
        Form::Json(value) => {
            Scenario::checked_json("upload.json", value.clone(), Limits::UPLOAD)
                .map_err(|errors| errors.into_iter().map(|e| problem_item(base, e)).collect::<Vec<_>>())?;
            Scenario::json_to_toml(value.clone())
                .map_err(|detail| vec![ProblemItem { field: base.into(), rule: rule::SYNTAX.into(), detail }])?
        }
    };
    if text.len() > MAX_TEXT_BYTES {
        let detail = format!("a scenario's text is at most {MAX_TEXT_BYTES} bytes; this one is {}", text.len());
        return Err(vec![ProblemItem { field: base.into(), rule: "scenario.text_length".into(), detail }]);
    }
    let scenario = Scenario::checked("upload.toml", &text, Limits::UPLOAD)
        .map_err(|errors| errors.into_iter().map(|e| problem_item(base, e)).collect::<Vec<_>>())?;
    Ok((scenario, text))
}

/// Checks an upload under the upload limits, every problem listed; the scenario and the TOML
/// text kept for it.
pub fn check_upload(form: &Form) -> ApiResult<(Scenario, String)> {
    check_form(form).map_err(|errors| match &errors[..] {
        [only] if only.rule == "scenario.text_length" => {
            AppError::unprocessable(only.field.clone(), only.rule.clone(), only.detail.clone())
        }
        _ => AppError::Problems {
            field: form.field().into(),
            rule: "scenario.invalid".into(),
            detail: format!(
                "the scenario breaks {} rule{}, each listed in `errors`; nothing was kept",
                errors.len(),
                if errors.len() == 1 { "" } else { "s" }
            ),
            errors,
        },
    })
}

/// Checks a scenario without keeping it (moderators): every problem, as an upload's 422 lists
/// them, and for a valid scenario the TOML text an upload keeps and its map. The work is bounded
/// as an upload's: the same body limit, a text of at most 49 152 bytes, a map of at most
/// 40 × 40 hexes, and as many checks at once as the server draws maps.
#[utoipa::path(post, path = "/v1/scenarios/check", tag = "scenarios", request_body = ScenarioToCheckBody, security(("bearer" = [])),
    responses((status = 200, body = ScenarioCheck, description = "Checked: `problems` is empty when the scenario is valid, which `text`, `id` and `svg` then show; nothing is kept either way"),
              (status = 422, body = crate::error::Problem, content_type = "application/problem+json",
               description = "The body carries both `text` and `scenario`, or neither (`scenario.one_form`); `scenario` is not an object (`scenario.syntax`); or `text` is longer than 49 152 bytes (`scenario.text_length`)")))]
pub async fn check_scenario(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<ScenarioToCheck>,
) -> ApiResult<Json<ScenarioCheck>> {
    caller.require_moderator()?;
    let form = Form::of(req.text, req.scenario)?;
    // A text past its limit is outside what the description allows: refused as an upload's is.
    if let Form::Toml(text) = &form {
        if text.len() > MAX_TEXT_BYTES {
            let detail = format!("a scenario's text is at most {MAX_TEXT_BYTES} bytes; this one is {}", text.len());
            return Err(AppError::unprocessable("body.text", "scenario.text_length", detail));
        }
    }
    let permit = state
        .caches
        .map_renders
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| AppError::Unavailable("the scenario cannot be checked now".into()))?;
    let checked = tokio::task::spawn_blocking(move || {
        let json = match &form {
            Form::Toml(text) => Scenario::toml_to_json(text),
            Form::Json(value) => Some(value.clone()),
        };
        let answer = match check_form(&form) {
            Ok((scenario, text)) => ScenarioCheck {
                problems: vec![],
                scenario: json,
                id: Some(hex::encode(Sha256::digest(text.as_bytes()))),
                text: Some(text),
                svg: Some(preview_svg(&scenario)),
            },
            Err(problems) => ScenarioCheck { problems, scenario: json, text: None, id: None, svg: None },
        };
        drop(permit);
        answer
    })
    .await
    .map_err(|e| AppError::Internal(e.to_string()))?;
    Ok(Json(checked))
}

/// Uploads a scenario (moderators), as TOML (`text`) or as JSON (`scenario`); a JSON scenario is
/// kept as its TOML text. The same text uploaded again by the same moderator answers the
/// scenario kept the first time (200), unchanged.
#[utoipa::path(post, path = "/v1/scenarios", tag = "scenarios", request_body = NewScenarioBody, security(("bearer" = [])),
    responses((status = 201, body = ScenarioView, description = "Kept"),
              (status = 200, body = ScenarioView, description = "This moderator had uploaded the same text already: the scenario kept then"),
              (status = 422, body = crate::error::Problem, content_type = "application/problem+json",
               description = "The scenario breaks the rules: `errors` lists every problem with its field path (`body.text.map.rail[0].hexes[3]`, or under `body.scenario` for JSON) and rule (`scenario.rail_gap`); or the name or text length is refused; or the body carries both `text` and `scenario`, or neither (`scenario.one_form`)"),
              (status = 409, body = crate::error::Problem, content_type = "application/problem+json",
               description = "The moderator keeps 200 scenarios already (`scenario.quota`)")))]
pub async fn upload_scenario(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<NewScenario>,
) -> ApiResult<(StatusCode, Json<ScenarioView>)> {
    let moderator = caller.require_moderator()?;
    let name = check_name("body.name", &req.name)?;
    let form = Form::of(req.text, req.scenario)?;
    let (scenario, text) = check_upload(&form)?;
    let id = hex::encode(Sha256::digest(text.as_bytes()));
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
    let kept = state.store.keep_scenario(UploadedScenario { entry, text }).await?;
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
