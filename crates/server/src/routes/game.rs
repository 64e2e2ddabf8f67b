//! The managed game and the rulesets: state, legal moves, post kinds, rulesets, and the
//! combat calculator.

use adjutant_rules::resolver::{self, ActionSpec, Ruleset};
use adjutant_rules::short_acw::{self, Defence, VictoryRounding};
use adjutant_rules::{DigitPositions, ResultNumber, TimeOfDay};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::campaign::LoadedCampaign;
use crate::error::{ApiResult, AppError};
use crate::extract::{ApiPath, ApiQuery};
use crate::routes::shared::load_campaign;
use crate::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/campaigns/{id}/state", get(campaign_state))
        .route("/v1/campaigns/{id}/units/{unit}/moves", get(unit_moves))
        .route("/v1/post-kinds", get(post_kinds))
        .route("/v1/rulesets", get(list_rulesets))
        .route("/v1/rulesets/{name}", get(get_ruleset))
        .route("/v1/tools/combat", get(combat))
        .route("/v1/campaigns/{id}/map.svg", get(map_svg))
        .route("/v1/campaigns/{id}/map.png", get(map_png))
}

fn managed(campaign: &LoadedCampaign) -> ApiResult<&short_acw::Scenario> {
    campaign.scenario().ok_or_else(|| {
        AppError::not_found("path.id", "a resolver campaign has no game state: the referee keeps the table")
    })
}

/// Where a managed campaign stands.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StateView {
    pub campaign_id: Uuid,
    /// The state follows this post (0: nothing posted yet).
    pub after_seq: i64,
    /// Turn, phase, side to act, units with positions and factors, hex and city control,
    /// stored reinforcement points, the pending battle, what is awaited from whom, and the
    /// result once the game is over.
    #[schema(value_type = Object)]
    pub state: Value,
    /// Present when the scenario's map is a stand-in (the seed publishes no map): the line
    /// that says so, e.g. "Stand-in map: the seed publishes no map".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stand_in_map: Option<String>,
}

/// The state of a managed campaign now.
#[utoipa::path(get, path = "/v1/campaigns/{id}/state", tag = "game",
    params(("id" = Uuid, Path, description = "campaign id")),
    responses((status = 200, body = StateView), (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn campaign_state(State(state): State<AppState>, ApiPath(id): ApiPath<Uuid>) -> ApiResult<Json<StateView>> {
    let campaign = load_campaign(&state, id).await?;
    let stand_in_map = managed(&campaign)?.stand_in_map().map(str::to_owned);
    let (after_seq, game) = current_state(&state, &campaign).await?;
    Ok(Json(StateView {
        campaign_id: id,
        after_seq,
        state: serde_json::to_value(&game).map_err(|e| AppError::Internal(e.to_string()))?,
        stand_in_map,
    }))
}

/// The managed game's state after the latest post.
pub async fn current_state(state: &AppState, campaign: &LoadedCampaign) -> ApiResult<(i64, short_acw::GameState)> {
    let last = last_seq(state, campaign.campaign.id).await?;
    let snapshot = state.store.snapshot_at(campaign.campaign.id, last).await?;
    let game = campaign
        .state_from(snapshot.as_ref().map(|(_, text)| text.as_str()))?
        .ok_or_else(|| AppError::Internal("managed campaign without a scenario".into()))?;
    Ok((last, game))
}

async fn last_seq(state: &AppState, id: Uuid) -> ApiResult<i64> {
    Ok(state.store.head(id).await?.map_or(0, |post| post.seq))
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MovesView {
    pub unit: String,
    /// Every hex the unit can legally reach now, with its cost, the cheapest path and whether
    /// the unit would halt there next to the enemy.
    #[schema(value_type = Vec<Object>)]
    pub moves: Vec<Value>,
}

/// The hexes a unit can legally reach now.
#[utoipa::path(get, path = "/v1/campaigns/{id}/units/{unit}/moves", tag = "game",
    params(("id" = Uuid, Path, description = "campaign id"), ("unit" = String, Path, description = "unit id, e.g. us-14th-inf")),
    responses((status = 200, body = MovesView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn unit_moves(
    State(state): State<AppState>,
    ApiPath((id, unit)): ApiPath<(Uuid, String)>,
) -> ApiResult<Json<MovesView>> {
    let campaign = load_campaign(&state, id).await?;
    let scenario = managed(&campaign)?;
    let (_, game) = current_state(&state, &campaign).await?;
    if game.unit(&unit).is_none() {
        return Err(AppError::not_found("path.unit", format!("no unit {unit:?} in this campaign")));
    }
    let moves = short_acw::legal_moves(scenario, &game, &unit)
        .map_err(|r| AppError::unprocessable(format!("path.{}", r.field), r.rule, r.detail))?;
    let moves = moves.iter().map(|m| serde_json::to_value(m).unwrap_or(Value::Null)).collect();
    Ok(Json(MovesView { unit, moves }))
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PostKind {
    pub kind: String,
    pub summary: String,
    /// JSON Schema of the post's `body`.
    #[schema(value_type = Object)]
    pub body_schema: Value,
    #[schema(value_type = Object)]
    pub example: Value,
}

/// The post kinds of a managed Short ACW campaign, with the schema of each body and an example.
#[utoipa::path(get, path = "/v1/post-kinds", tag = "game", responses((status = 200, body = Vec<PostKind>)))]
pub async fn post_kinds() -> Json<Vec<PostKind>> {
    Json(
        short_acw::post_kinds()
            .into_iter()
            .map(|k| PostKind {
                kind: k.kind.into(),
                summary: k.summary.into(),
                body_schema: k.body_schema,
                example: k.example,
            })
            .collect(),
    )
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RulesetSummary {
    pub name: String,
    pub title: String,
    /// The rules document it implements.
    pub seed: String,
    pub actions: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ActionView {
    pub name: String,
    pub summary: String,
    /// The section of the rules it implements.
    pub rule: String,
    /// JSON Schema of the action's `inputs`.
    #[schema(value_type = Object)]
    pub input_schema: Value,
    #[schema(value_type = Object)]
    pub example: Value,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RulesetView {
    pub name: String,
    pub title: String,
    pub seed: String,
    pub actions: Vec<ActionView>,
}

fn summary(r: &dyn Ruleset) -> RulesetSummary {
    RulesetSummary {
        name: r.name().into(),
        title: r.title().into(),
        seed: r.seed().into(),
        actions: resolver::action_specs(r).iter().map(|a| a.name.to_owned()).collect(),
    }
}

fn action_view(a: ActionSpec) -> ActionView {
    ActionView {
        name: a.name.into(),
        summary: a.summary.into(),
        rule: a.rule.into(),
        input_schema: a.input_schema,
        example: a.example,
    }
}

/// Every resolver ruleset.
#[utoipa::path(get, path = "/v1/rulesets", tag = "rulesets", responses((status = 200, body = Vec<RulesetSummary>)))]
pub async fn list_rulesets() -> Json<Vec<RulesetSummary>> {
    Json(resolver::rulesets().into_iter().map(summary).collect())
}

/// One ruleset with its actions, the schema of each action's inputs and an example.
#[utoipa::path(get, path = "/v1/rulesets/{name}", tag = "rulesets",
    params(("name" = String, Path, description = "ruleset name, e.g. acw-25mm")),
    responses((status = 200, body = RulesetView), (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn get_ruleset(ApiPath(name): ApiPath<String>) -> ApiResult<Json<RulesetView>> {
    let r = resolver::ruleset(&name).ok_or_else(|| AppError::not_found("path.name", format!("no ruleset {name:?}")))?;
    Ok(Json(RulesetView {
        name: r.name().into(),
        title: r.title().into(),
        seed: r.seed().into(),
        actions: resolver::action_specs(r).iter().cloned().map(action_view).collect(),
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct CombatQuery {
    /// Attacker's factors.
    #[serde(deserialize_with = "crate::whole_number::query_required")]
    #[param(minimum = 0, maximum = 10000)]
    pub attacker: u32,
    /// Defender's factors (raw); with `defender_fortified`, the factors of the defenders that are
    /// not fortified.
    #[serde(deserialize_with = "crate::whole_number::query_required")]
    #[param(minimum = 0, maximum = 10000)]
    pub defender: u32,
    /// `open`, `woods`, `river` or `fortified` (every defender fortified). With
    /// `defender_fortified`, `open`, `woods` or `river` for the hex, and fortification counts unit
    /// by unit.
    #[param(pattern = "^(open|woods|river|fortified)$")]
    pub defence: String,
    /// The factors of the fortified defenders, given apart from `defender` (D is the sum): D′
    /// counts these ×1½ and `defender` ×1, or every factor ×2 with `defence=woods` or `river`
    /// (ruling 2, unit by unit). With `defence=fortified` every defender counts ×1½ as before.
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 0, maximum = 10000)]
    pub defender_fortified: Option<u32>,
    /// The attack post's time of day, H:MM:SS on a 24-hour clock.
    #[param(example = "9:51:45", pattern = "^([01]?[0-9]|2[0-3]):[0-5]?[0-9]:[0-5]?[0-9]$")]
    pub time: String,
    /// 9 (default) or 8.
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 8, maximum = 9)]
    pub first_digit: Option<u32>,
    /// `exact` (default) or `one_decimal`.
    #[param(pattern = "^(exact|one_decimal)$")]
    pub victory_rounding: Option<String>,
}

/// A Short ACW battle worked out in full, as the server would adjudicate it.
#[utoipa::path(get, path = "/v1/tools/combat", tag = "tools", params(CombatQuery),
    responses((status = 200, description = "victory, result, winner (attacker/defender), difference, band, rates, casualties", body = Object),
              (status = 400, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn combat(ApiQuery(q): ApiQuery<CombatQuery>) -> ApiResult<Json<Value>> {
    const MAX_FACTORS: u32 = 10_000;
    if q.attacker > MAX_FACTORS {
        return Err(AppError::bad_request("query.attacker", "combat.factors", "attacker factors run from 0 to 10000"));
    }
    if q.defender_fortified.is_some_and(|f| f > MAX_FACTORS) {
        return Err(AppError::bad_request(
            "query.defender_fortified",
            "combat.factors",
            "fortified defender factors run from 0 to 10000",
        ));
    }
    if q.defender > MAX_FACTORS {
        return Err(AppError::bad_request("query.defender", "combat.factors", "defender factors run from 0 to 10000"));
    }
    let defence = Defence::parse(&q.defence).ok_or_else(|| {
        AppError::bad_request("query.defence", "combat.defence", "defence is open, woods, river or fortified")
    })?;
    let time = TimeOfDay::parse(&q.time).map_err(|r| AppError::bad_request("query.time", r.rule, r.detail))?;
    let digits = DigitPositions::from_first(q.first_digit.unwrap_or(9)).ok_or_else(|| {
        AppError::bad_request("query.first_digit", "result_number.digit_positions", "first_digit is 9 or 8")
    })?;
    let rounding = match q.victory_rounding.as_deref() {
        None | Some("exact") => VictoryRounding::Exact,
        Some("one_decimal") => VictoryRounding::OneDecimal,
        Some(_) => {
            return Err(AppError::bad_request(
                "query.victory_rounding",
                "victory_number.rounding",
                "victory_rounding is exact or one_decimal",
            ))
        }
    };
    let result = ResultNumber::of(time.post_number(adjutant_rules::ClockFormat::H24), digits);
    let battle = match (q.defender_fortified, defence) {
        (None, _) => short_acw::battle(q.attacker, q.defender, defence, &result, rounding),
        // Every defender fortified: the fortified part is all of them.
        (Some(fortified), Defence::Fortified) => {
            short_acw::battle(q.attacker, q.defender.saturating_add(fortified), defence, &result, rounding)
        }
        (Some(fortified), _) => short_acw::battle_by_unit(
            q.attacker,
            short_acw::Defenders { factors: q.defender.saturating_add(fortified), fortified },
            defence,
            &result,
            rounding,
        ),
    };
    Ok(Json(serde_json::to_value(&battle).map_err(|e| AppError::Internal(e.to_string()))?))
}

/// How far back the map looks for the last turn's moves and battles.
const RECENT_OUTCOMES: i64 = 300;

async fn map_of(state: &AppState, id: Uuid) -> ApiResult<String> {
    let campaign = load_campaign(state, id).await?;
    let scenario = managed(&campaign)?;
    let (_, game) = current_state(state, &campaign).await?;
    let recent: Vec<short_acw::Outcome> = state
        .store
        .latest_outcomes(id, RECENT_OUTCOMES)
        .await?
        .iter()
        .map(|o| {
            let view = crate::views::OutcomeView::of(o, None);
            short_acw::Outcome { kind: view.kind, headline: view.headline, data: view.data }
        })
        .collect();
    Ok(adjutant_render::map_svg(scenario, &game, &recent))
}

/// The map now: terrain, rivers, bridges, rail, cities with their controller, units with their
/// factors, and the last turn's moves and battles.
#[utoipa::path(get, path = "/v1/campaigns/{id}/map.svg", tag = "game",
    params(("id" = Uuid, Path, description = "campaign id")),
    responses((status = 200, description = "SVG picture", content_type = "image/svg+xml", body = String),
              (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn map_svg(State(state): State<AppState>, ApiPath(id): ApiPath<Uuid>) -> ApiResult<Response> {
    let svg = map_of(&state, id).await?;
    Ok(([(header::CONTENT_TYPE, "image/svg+xml; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], svg)
        .into_response())
}

/// The map as a PNG picture, for forums that take no SVG.
#[utoipa::path(get, path = "/v1/campaigns/{id}/map.png", tag = "game",
    params(("id" = Uuid, Path, description = "campaign id")),
    responses((status = 200, description = "PNG picture", content_type = "image/png", body = Vec<u8>),
              (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn map_png(State(state): State<AppState>, ApiPath(id): ApiPath<Uuid>) -> ApiResult<Response> {
    let png = map_png_of(&state, id).await?;
    Ok(([(header::CONTENT_TYPE, "image/png"), (header::CACHE_CONTROL, "no-cache")], png.to_vec()).into_response())
}

/// The largest SVG rasterised, in bytes: the map of the shipped scenario is a fraction of it;
/// the picture itself is scaled to at most 4096 pixels a side by `adjutant_render::map_png`.
const MAX_SVG_BYTES: usize = 4 << 20;

/// The PNG map, remembered by the hash of the campaign's last post, rendered at most
/// `cache::MAP_RENDERS` at a time: rasterising runs on a blocking thread that a request's
/// time-out cannot stop, so a flood of requests waits for a permit (and times out waiting)
/// instead of piling up work.
pub async fn map_png_of(state: &AppState, id: Uuid) -> ApiResult<std::sync::Arc<Vec<u8>>> {
    let head = state.store.head(id).await?.map(|post| post.hash).unwrap_or_default();
    if let Some(png) = state.caches.at_head(id, "map.png", &head) {
        return Ok(png);
    }
    let permit = state
        .caches
        .map_renders
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| AppError::Unavailable("the map cannot be drawn now".into()))?;
    // Drawn by another request while this one waited?
    if let Some(png) = state.caches.at_head(id, "map.png", &head) {
        return Ok(png);
    }
    let svg = map_of(state, id).await?;
    if svg.len() > MAX_SVG_BYTES {
        return Err(AppError::Internal(format!("the map is too large to draw ({} bytes of SVG)", svg.len())));
    }
    let png = tokio::task::spawn_blocking(move || {
        let png = adjutant_render::map_png(&svg);
        drop(permit);
        png
    })
    .await
    .map_err(|e| AppError::Internal(e.to_string()))?
    .map_err(AppError::Internal)?;
    Ok(state.caches.remember_at_head(id, "map.png", &head, png))
}
