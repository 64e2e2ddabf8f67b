//! The managed game and the rulesets: state, legal moves, post kinds, rulesets, and the map.

use adjutant_render::MapEntry;
use adjutant_rules::resolver::{self, ActionSpec, Ruleset};
use adjutant_rules::short_acw;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::campaign::LoadedCampaign;
use crate::error::{ApiResult, AppError};
use crate::extract::{ApiPath, ApiQuery};
use crate::routes::shared::load_campaign;
use crate::views::ClockView;
use crate::AppState;

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
    /// What each side may post now (`union`, `confederate`), in the order of play: the kinds
    /// the turn and the pending battle allow. A kind not listed is refused whatever its body.
    #[schema(value_type = Object, example = json!({"union": ["move", "attack", "end_turn"], "confederate": []}))]
    pub may_post: std::collections::BTreeMap<String, Vec<String>>,
    /// During deployment: the hexes each side may deploy in (within 1 hex of its deployment
    /// cities), for the page to highlight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub deployment_zones: Option<std::collections::BTreeMap<String, Vec<String>>>,
    /// The campaign clock: deadlines, a pause, who holds the game up (campaigns with deadlines,
    /// and campaigns that have been paused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub clock: Option<ClockView>,
}

/// What a unit may legally do now, as the rules decide it: where it may move, what it may
/// attack, where it may retreat. Each list is empty when the unit may not do that now.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MovesView {
    pub unit: String,
    /// Every hex the unit can legally reach now, with its cost, the cheapest path and whether
    /// the unit would halt there next to the enemy.
    #[schema(value_type = Vec<Object>)]
    pub moves: Vec<Value>,
    /// The enemy-held hexes next to the unit that it may attack now (its side may `attack` and
    /// it has not attacked this player turn). Units attacking together may attack the hexes
    /// that every one of them may.
    #[serde(default)]
    #[schema(value_type = Vec<String>, example = json!(["0604"]))]
    pub attack_targets: Vec<short_acw::Hex>,
    /// While the unit is one of those retreating from a lost battle: every retreat of 1 or 2
    /// hexes it may make, with the other units where they stand now. Empty for a retreating
    /// unit with no legal retreat (its `retreat` path is then empty).
    #[serde(default)]
    pub retreats: Vec<RetreatView>,
    /// While the unit is one of the defending cavalry that may retreat 1 hex before the battle:
    /// the hexes they may retreat to (`cavalry_option`'s `hex`).
    #[serde(default)]
    #[schema(value_type = Vec<String>, example = json!(["0703"]))]
    pub cavalry_hexes: Vec<short_acw::Hex>,
}

/// One legal retreat.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RetreatView {
    /// The hexes the unit retreats through, in order (a `retreat` path).
    #[schema(value_type = Vec<String>, example = json!(["0704", "0804"]))]
    pub path: Vec<short_acw::Hex>,
    /// The enemy-held hex next to where the retreat ends, if any: ending there costs half the
    /// unit's factors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, nullable = false)]
    pub next_to_enemy: Option<short_acw::Hex>,
}

/// A post kind as `GET /v1/post-kinds` documents it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[schema(as = PostKind)]
pub struct PostKindDoc {
    pub kind: String,
    pub summary: String,
    /// JSON Schema of the post's `body`.
    #[schema(value_type = Object)]
    pub body_schema: Value,
    #[schema(value_type = Object)]
    pub example: Value,
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
    /// Earlier names of the action, still accepted (a campaign's old posts keep theirs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_accepted: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RulesetView {
    pub name: String,
    pub title: String,
    pub seed: String,
    pub actions: Vec<ActionView>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(campaign_state))
        .routes(routes!(unit_moves))
        .routes(routes!(campaign_turns))
        .routes(routes!(post_kinds))
        .routes(routes!(list_rulesets))
        .routes(routes!(get_ruleset))
        .routes(routes!(map_svg))
        .routes(routes!(map_png))
}

fn managed(campaign: &LoadedCampaign) -> ApiResult<&short_acw::Scenario> {
    campaign.scenario().ok_or_else(|| {
        AppError::not_found("path.id", "a resolver campaign has no game state: the referee keeps the table")
    })
}

/// The state of a managed campaign now.
#[utoipa::path(get, path = "/v1/campaigns/{id}/state", tag = "game",
    params(("id" = Uuid, Path, description = "campaign id")),
    responses((status = 200, body = StateView), (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn campaign_state(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiQuery(q): ApiQuery<AtQuery>,
) -> ApiResult<Response> {
    let campaign = load_campaign(&state, id).await?;
    let scenario = managed(&campaign)?;
    let stand_in_map = scenario.stand_in_map().map(str::to_owned);
    let at = q.post(&state, &campaign).await?;
    let (after_seq, game, past) = state_at(&state, &campaign, at).await?;
    let sides = [adjutant_rules::Side::Union, adjutant_rules::Side::Confederate];
    let deployment_zones = (game.phase == short_acw::Phase::Deployment).then(|| {
        sides
            .into_iter()
            .map(|side| (side.key().to_owned(), scenario.deployment_zone(side).iter().map(|h| h.to_string()).collect()))
            .collect()
    });
    // While the campaign is paused, no side may post.
    let paused = game.clock.as_ref().is_some_and(|c| c.paused.is_some());
    let may_post = sides
        .into_iter()
        .map(|side| {
            let kinds = match paused {
                true => vec![],
                false => short_acw::may_post(scenario, &game, side).into_iter().map(str::to_owned).collect(),
            };
            (side.key().to_owned(), kinds)
        })
        .collect();
    // A past point's clock is not a countdown: it is shown only as the log stands now.
    let clock = match past {
        None => ClockView::of(&campaign, &game, state.clock.now()),
        Some(_) => None,
    };
    let view = Json(StateView {
        campaign_id: id,
        after_seq,
        // A sealed deployment is the server's alone until the other side has deployed.
        state: serde_json::to_value(game.as_public()).map_err(|e| AppError::Internal(e.to_string()))?,
        stand_in_map,
        may_post,
        deployment_zones,
        clock,
    });
    Ok(with_cache(view.into_response(), past.as_deref().filter(|_| q.fixed())))
}

/// `?at=SEQ` and `?turn=N&side=S`: a point of the game's past. `at` alone is the game after
/// that post; `turn` and `side` name the start of a player turn in the log as it stood after
/// post `at` (or as it stands now), so every combination names one point.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AtQuery {
    /// The game as it stood after this post (0: before any post); without it (and without
    /// `turn` and `side`), as it stands now. With `turn` or `side`, the log is read as it stood
    /// after this post. A past point's answer never changes.
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 0)]
    pub at: Option<i64>,
    /// The game at the start of this turn's player turn of `side` (without `side`: of the side
    /// that played first in it): after the post that began it. 404 when it has not begun.
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 1, maximum = 1000)]
    pub turn: Option<i64>,
    /// `union` or `confederate`: with `turn`, that side's player turn of that turn; alone, that
    /// side's latest player turn.
    #[serde(default)]
    #[param(pattern = "^(union|confederate)$")]
    pub side: Option<String>,
}

impl AtQuery {
    /// Whether the point asked for is fixed for good: a post (`at`), or a player turn in the
    /// log as it stood after one. A turn asked of the log as it stands now may move (a side's
    /// latest turn, a turn a rollback voided and played again), so its answer is not cached.
    fn fixed(&self) -> bool {
        self.at.is_some() || (self.turn.is_none() && self.side.is_none())
    }

    /// The post the query names: `at`, or the post that began the player turn that `turn` and
    /// `side` select in the log as it stood after `at` (the one left standing where a rollback
    /// voided an earlier one).
    async fn post(&self, state: &AppState, campaign: &LoadedCampaign) -> ApiResult<Option<i64>> {
        if self.turn.is_none() && self.side.is_none() {
            return Ok(self.at);
        }
        let side = match &self.side {
            None => None,
            Some(text) => Some(crate::campaign::parse_side(text).ok_or_else(|| {
                AppError::bad_request("query.side", "campaign.sides", "the side is `union` or `confederate`")
            })?),
        };
        if let Some(turn) = self.turn {
            if !(1..=1000).contains(&turn) {
                return Err(AppError::bad_request("query.turn", "query.turn", "`turn` is a turn's number, 1 to 1000"));
            }
        }
        let id = campaign.campaign.id;
        let head = state.store.head(id).await?.map_or(0, |post| post.seq);
        if let Some(at) = self.at.filter(|&at| at < 0 || at > head) {
            // The same answer as `at` alone: a point the log does not have.
            return state_at(state, campaign, Some(at)).await.map(|_| None);
        }
        let begun = crate::log::read::player_turns(&*state.store, id, self.at.unwrap_or(head)).await?;
        let mut matching = begun.iter().filter(|t| {
            self.turn.is_none_or(|turn| i64::from(t.turn) == turn) && side.is_none_or(|side| t.side == side)
        });
        // A turn alone is its first player turn; a side's, its latest.
        let found = match (self.turn, side) {
            (Some(_), None) => matching.next(),
            _ => matching.next_back(),
        }
        .map(|t| t.began_after);
        match found {
            Some(seq) => Ok(Some(seq)),
            None => {
                let whose = side.map_or_else(|| "a".to_owned(), |side| format!("the {side}'s"));
                let which = self.turn.map_or_else(String::new, |turn| format!(" {turn}"));
                let when = self.at.map_or_else(String::new, |at| format!(" by post {at}"));
                Err(AppError::not_found("query.turn", format!("{whose} player turn{which} had not begun{when}")))
            }
        }
    }
}

/// The game after post `at` (or now), the post's seq, and, for a past point, the hash that
/// names it (the post's chain hash; the campaign's genesis before any post).
async fn state_at(
    state: &AppState,
    campaign: &LoadedCampaign,
    at: Option<i64>,
) -> ApiResult<(i64, short_acw::GameState, Option<String>)> {
    let Some(at) = at else {
        let (seq, game) = current_state(state, campaign).await?;
        return Ok((seq, game, None));
    };
    let id = campaign.campaign.id;
    let head = state.store.head(id).await?.map_or(0, |post| post.seq);
    if at < 0 {
        return Err(AppError::bad_request("query.at", "query.at", "`at` is a post's sequence number, 0 or more"));
    }
    if at > head {
        return Err(AppError::not_found("query.at", format!("the log has posts 1 to {head}: `at` is 0 to {head}")));
    }
    let hash = match at {
        0 => campaign.genesis.clone(),
        _ => state.store.post(id, at).await?.map(|post| post.hash).unwrap_or_default(),
    };
    let snapshot = state.store.snapshot_at(id, at).await?;
    let game = campaign
        .state_from(snapshot.as_ref().map(|(_, text)| text.as_str()))?
        .ok_or_else(|| AppError::not_found("path.id", "a resolver campaign has no game state"))?;
    Ok((at, game.as_public(), Some(hash)))
}

/// A past point's answer never changes: cached for good, named by its post's hash. The
/// present is asked again each time.
fn with_cache(mut response: Response, past: Option<&str>) -> Response {
    let headers = response.headers_mut();
    match past.and_then(|hash| header::HeaderValue::from_str(&format!("\"{hash}\"")).ok()) {
        Some(etag) => {
            headers.insert(header::ETAG, etag);
            headers
                .insert(header::CACHE_CONTROL, header::HeaderValue::from_static("public, max-age=31536000, immutable"));
        }
        None => {
            headers.insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-cache"));
        }
    }
    response
}

/// The player turns of a managed campaign so far.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TurnsView {
    pub campaign_id: Uuid,
    /// In the order they began; a turn a rollback voided is left out.
    pub turns: Vec<PlayerTurnView>,
}

/// A player turn: the map at its start is `map.svg?turn=N&side=S` (or `?at=began_after`), its
/// posts are those after `began_after` up to `ended_at`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PlayerTurnView {
    #[schema(minimum = 1)]
    pub turn: u32,
    #[schema(pattern = "^(union|confederate)$", example = "union")]
    pub side: String,
    /// The post that began it: the other side's end of turn, or the deployment that ended
    /// deployment.
    #[schema(minimum = 1)]
    pub began_after: i64,
    /// The post that ended it (the next player turn's `began_after`); absent while it goes on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    pub ended_at: Option<i64>,
}

/// The player turns so far, each with the posts that began and ended it: what a turn-by-turn
/// history steps through.
#[utoipa::path(get, path = "/v1/campaigns/{id}/turns", tag = "game",
    params(("id" = Uuid, Path, description = "campaign id")),
    responses((status = 200, body = TurnsView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn campaign_turns(State(state): State<AppState>, ApiPath(id): ApiPath<Uuid>) -> ApiResult<Response> {
    let campaign = load_campaign(&state, id).await?;
    managed(&campaign)?;
    let turns = crate::log::read::player_turns(&*state.store, id, i64::MAX).await?;
    let ends: Vec<Option<i64>> = turns.iter().skip(1).map(|t| Some(t.began_after)).chain([None]).collect();
    let turns = turns
        .iter()
        .zip(ends)
        .map(|(t, ended_at)| PlayerTurnView {
            turn: t.turn,
            side: t.side.key().to_owned(),
            began_after: t.began_after,
            ended_at,
        })
        .collect();
    Ok(with_cache(Json(TurnsView { campaign_id: id, turns }).into_response(), None))
}

/// The managed game's state after the latest post, and that post.
async fn current_state(state: &AppState, campaign: &LoadedCampaign) -> ApiResult<(i64, short_acw::GameState)> {
    Ok(crate::log::read::state_now(&*state.store, campaign).await?)
}

/// What a unit may legally do now: the hexes it can reach, the hexes it may attack, and, while
/// it retreats from a lost battle or may retreat before one as cavalry, where it may go.
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
    let refused = |r: adjutant_rules::Refusal| AppError::unprocessable(format!("path.{}", r.field), r.rule, r.detail);
    let moves = short_acw::legal_moves(scenario, &game, &unit).map_err(refused)?;
    let moves = moves.iter().map(|m| serde_json::to_value(m).unwrap_or(Value::Null)).collect();
    let attack_targets = short_acw::attack_targets(scenario, &game, &unit).map_err(refused)?;
    let retreats = short_acw::legal_retreats(scenario, &game, &unit)
        .map_err(refused)?
        .into_iter()
        .map(|r| RetreatView { path: r.path, next_to_enemy: r.next_to_enemy })
        .collect();
    let cavalry_hexes = short_acw::cavalry_option_hexes(scenario, &game, &unit).map_err(refused)?;
    Ok(Json(MovesView { unit, moves, attack_targets, retreats, cavalry_hexes }))
}

/// The post kinds of a managed Short ACW campaign, with the schema of each body and an example.
#[utoipa::path(get, path = "/v1/post-kinds", tag = "game", responses((status = 200, body = Vec<PostKindDoc>)))]
pub async fn post_kinds() -> Json<Vec<PostKindDoc>> {
    Json(
        short_acw::post_kinds()
            .into_iter()
            .map(|k| PostKindDoc {
                kind: k.kind.into(),
                summary: k.summary.into(),
                body_schema: k.body_schema,
                example: k.example,
            })
            .collect(),
    )
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
        also_accepted: a.also_accepted.iter().map(|name| (*name).to_owned()).collect(),
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

/// How far back the map looks for the last turn's moves and battles.
const RECENT_OUTCOMES: i64 = 300;

async fn map_of(state: &AppState, id: Uuid, at: Option<i64>) -> ApiResult<(String, Option<String>)> {
    let campaign = load_campaign(state, id).await?;
    let scenario = managed(&campaign)?;
    let (seq, game, past) = state_at(state, &campaign, at).await?;
    // The posts void as the log stood then, and the outcomes up to that post.
    let (void, outcomes) = match past {
        None => (
            crate::log::read::void_posts(&*state.store, id).await?,
            state.store.latest_outcomes(id, RECENT_OUTCOMES).await?,
        ),
        Some(_) => {
            let void =
                crate::log::read::view_of(&*state.store, id, seq + 1, &[adjutant_store::IndexedPostKind::Rollback])
                    .await?
                    .void()
                    .clone();
            (void, state.store.outcomes_of_posts(id, (seq - RECENT_POSTS).max(0), seq).await?)
        }
    };
    let recent: Vec<MapEntry> = outcomes
        .iter()
        .map(|o| {
            let stored = crate::views::StoredOutcome::of(o);
            if void.contains(&o.seq) {
                // A voided post's outcomes did not happen: listed as void, drawn as nothing.
                return MapEntry { headline: format!("Void: {}", stored.headline), data: None };
            }
            MapEntry { data: stored.typed(&o.kind), headline: stored.headline }
        })
        .collect();
    // The last turn's moves and battles, not the whole game's.
    Ok((adjutant_render::map_svg(scenario, &game, adjutant_render::last_turn(&recent)), past))
}

/// How many posts back a past map looks for its last turn's moves and battles.
const RECENT_POSTS: i64 = 100;

/// The map now: terrain, rivers, bridges, rail, cities with their controller, units with their
/// factors, and the last turn's moves and battles.
#[utoipa::path(get, path = "/v1/campaigns/{id}/map.svg", tag = "game",
    params(("id" = Uuid, Path, description = "campaign id"), AtQuery),
    responses((status = 200, description = "SVG picture", content_type = "image/svg+xml", body = String),
              (status = 404, body = crate::error::Problem, content_type = "application/problem+json"),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn map_svg(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiQuery(q): ApiQuery<AtQuery>,
) -> ApiResult<Response> {
    let at = q.post(&state, &load_campaign(&state, id).await?).await?;
    let (svg, past) = map_of(&state, id, at).await?;
    let response = ([(header::CONTENT_TYPE, "image/svg+xml; charset=utf-8")], svg).into_response();
    Ok(with_cache(response, past.as_deref().filter(|_| q.fixed())))
}

/// The map as a PNG picture, for forums that take no SVG.
#[utoipa::path(get, path = "/v1/campaigns/{id}/map.png", tag = "game",
    params(("id" = Uuid, Path, description = "campaign id"), AtQuery),
    responses((status = 200, description = "PNG picture", content_type = "image/png", body = Vec<u8>),
              (status = 404, body = crate::error::Problem, content_type = "application/problem+json"),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn map_png(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiQuery(q): ApiQuery<AtQuery>,
) -> ApiResult<Response> {
    let at = q.post(&state, &load_campaign(&state, id).await?).await?;
    let (png, past) = map_png_at(&state, id, at).await?;
    let response = ([(header::CONTENT_TYPE, "image/png")], png.to_vec()).into_response();
    Ok(with_cache(response, past.as_deref().filter(|_| q.fixed())))
}

/// The largest SVG rasterised, in bytes: the map of the shipped scenario is a fraction of it;
/// the picture itself is scaled to at most 4096 pixels a side by `adjutant_render::map_png`.
pub(crate) const MAX_SVG_BYTES: usize = 4 << 20;

/// The PNG map, remembered by the hash of the campaign's last post, rendered at most
/// `cache::MAP_RENDERS` at a time: rasterising runs on a blocking thread that a request's
/// time-out cannot stop, so a flood of requests waits for a permit (and times out waiting)
/// instead of piling up work.
pub async fn map_png_of(state: &AppState, id: Uuid) -> ApiResult<std::sync::Arc<Vec<u8>>> {
    Ok(map_png_at(state, id, None).await?.0)
}

/// The PNG map after post `at` (or now), and a past point's hash.
async fn map_png_at(
    state: &AppState,
    id: Uuid,
    at: Option<i64>,
) -> ApiResult<(std::sync::Arc<Vec<u8>>, Option<String>)> {
    // The present is remembered under the head's hash; the last past point asked, under its seq.
    let (what, key) = match at {
        Some(seq) => ("map.png at", format!("{seq}")),
        None => ("map.png", state.store.head(id).await?.map(|post| post.hash).unwrap_or_default()),
    };
    if let Some(png) = state.caches.at_head(id, what, &key) {
        // Drawn before: only the name of a past point is read again.
        let past = match at {
            Some(0) => Some(load_campaign(state, id).await?.genesis),
            Some(seq) => state.store.post(id, seq).await?.map(|post| post.hash),
            None => None,
        };
        return Ok((png, past));
    }
    let (svg, past) = map_of(state, id, at).await?;
    let permit = state
        .caches
        .map_renders
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| AppError::Unavailable("the map cannot be drawn now".into()))?;
    // Drawn by another request while this one waited?
    if let Some(png) = state.caches.at_head(id, what, &key) {
        return Ok((png, past));
    }
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
    Ok((state.caches.remember_at_head(id, what, &key, png), past))
}
