//! Campaigns: created by moderators from a scenario (managed) or a ruleset (resolver); read by anyone.

use adjutant_store::Campaign;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use crate::auth::Caller;
use crate::campaign::{LoadedCampaign, ResultChain};
use crate::error::{ApiResult, AppError};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::free_text::check_name;
use crate::routes::shared::{load_campaign, page_limit};
use crate::views::{CampaignList, CampaignView, NewCampaign};
use crate::AppState;
use adjutant_rules::result_time::{self, ResultTime};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/campaigns", get(list_campaigns).post(create_campaign))
        .route("/v1/campaigns/{id}", get(get_campaign))
}

/// Creates a campaign (moderators).
#[utoipa::path(post, path = "/v1/campaigns", tag = "campaigns", request_body = NewCampaign, security(("bearer" = [])),
    responses((status = 201, body = CampaignView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn create_campaign(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<NewCampaign>,
) -> ApiResult<(StatusCode, Json<CampaignView>)> {
    let moderator = caller.require_moderator()?;
    let name = check_name("body.name", &req.name)?;
    let mode = campaign_mode(&req)?;
    let mut settings = req.settings.unwrap_or_default();
    settings.clock_of().map_err(|e| e.at("body.settings.", StatusCode::UNPROCESSABLE_ENTITY))?;
    // A new campaign records the rules it is played under (version 1 only when asked for).
    settings.rules_version.get_or_insert(adjutant_rules::RULES_VERSION);
    if settings.result_chain.is_some() {
        return Err(AppError::unprocessable(
            "body.settings.result_chain",
            "campaign.result_chain",
            "the server draws a sealed-delay campaign's hash chain itself: leave out `result_chain`",
        ));
    }
    let deadlines = settings.deadlines().map_err(|e| e.at("body.settings.", StatusCode::UNPROCESSABLE_ENTITY))?;
    if deadlines.is_some() && mode != "managed" {
        return Err(AppError::unprocessable(
            if settings.turn_deadline.is_some() {
                "body.settings.turn_deadline"
            } else {
                "body.settings.turn_deadline_at"
            },
            "campaign.deadline",
            "deadlines keep a managed campaign's turns moving; a resolver campaign has no turns the server keeps",
        ));
    }
    let sealed = settings.result_time == ResultTime::SealedDelay;
    if sealed && mode != "managed" {
        return Err(AppError::unprocessable(
            "body.settings.result_time",
            "campaign.result_time",
            "`sealed_delay` delays the result time of a managed campaign's battles; a resolver campaign's dice come from each post's own stamp, so it takes `post`",
        ));
    }
    let (scenario, scenario_text, ruleset) = match mode {
        "managed" => {
            let name = req.scenario.unwrap_or_else(|| "short-acw".into());
            let text = state.scenarios.get(&name).ok_or_else(|| {
                let known: Vec<&str> = state.scenarios.names().collect();
                AppError::unprocessable(
                    "body.scenario",
                    "campaign.scenario",
                    format!("no scenario {name:?}; the server has: {}", known.join(", ")),
                )
            })?;
            (Some(name), Some(text.to_owned()), None)
        }
        _ => {
            let name = req.ruleset.unwrap_or_default();
            if adjutant_rules::resolver::ruleset(&name).is_none() {
                let known: Vec<&str> = adjutant_rules::resolver::rulesets().iter().map(|r| r.name()).collect();
                return Err(AppError::unprocessable(
                    "body.ruleset",
                    "campaign.ruleset",
                    format!("no ruleset {name:?}; the server has: {}", known.join(", ")),
                ));
            }
            (None, None, Some(name))
        }
    };
    let id = Uuid::new_v4();
    if sealed {
        // The chain's top secret is kept where the API never reads it, before the campaign
        // exists; its s_0 is published in the campaign's settings.
        let length = state.config.sealed_delay_chain_length;
        let top = state.store.keep_campaign_secret(id, 0, &crate::sealed_delay::new_top_secret()).await?;
        settings.result_chain = Some(ResultChain { commitment: result_time::walk_down(&top, length), length });
    }
    let campaign = Campaign {
        id,
        name,
        moderator_id: moderator.id,
        mode: mode.to_owned(),
        scenario,
        scenario_text,
        ruleset,
        settings: serde_json::to_string(&settings).map_err(|e| AppError::Internal(e.to_string()))?,
        // Milliseconds, as both stores keep it: the creation record hashes what is stored.
        created_at: chrono::DateTime::from_timestamp_millis(state.clock.now().timestamp_millis()).unwrap_or_default(),
        chain_genesis: adjutant_rules::chain::genesis_rule::CREATION_RECORD.to_owned(),
    };
    let campaign = state.store.create_campaign(campaign).await?;
    Ok((StatusCode::CREATED, Json(CampaignView::of(&LoadedCampaign::load(campaign, &state.scenarios)?))))
}

/// The campaign's mode, from what the request names: a ruleset makes a resolver campaign, a
/// scenario (or neither) a managed one. Only a real contradiction is refused.
fn campaign_mode(req: &NewCampaign) -> ApiResult<&'static str> {
    let named = match (&req.scenario, &req.ruleset) {
        (Some(_), Some(_)) => {
            return Err(AppError::unprocessable(
                "body.ruleset",
                "campaign.mode",
                "a campaign plays a scenario (managed) or a ruleset (resolver), not both",
            ))
        }
        (None, Some(_)) => "resolver",
        _ => "managed",
    };
    match req.mode.as_deref() {
        None => Ok(named),
        Some(asked) if asked == named => Ok(named),
        Some("managed") => Err(AppError::unprocessable(
            "body.mode",
            "campaign.mode",
            "a managed campaign plays a scenario, not a ruleset: leave out `mode`, or name a scenario",
        )),
        Some("resolver") if req.scenario.is_some() => Err(AppError::unprocessable(
            "body.mode",
            "campaign.mode",
            "a resolver campaign has no scenario (the referee keeps the table): leave out `mode`, or name a ruleset",
        )),
        Some("resolver") => {
            Err(AppError::unprocessable("body.ruleset", "campaign.ruleset", "a resolver campaign names its ruleset"))
        }
        Some(_) => Err(AppError::unprocessable("body.mode", "campaign.mode", "the mode is `managed` or `resolver`")),
    }
}

/// One campaign.
#[utoipa::path(get, path = "/v1/campaigns/{id}", tag = "campaigns", params(("id" = Uuid, Path, description = "campaign id")),
    responses((status = 200, body = CampaignView), (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn get_campaign(State(state): State<AppState>, ApiPath(id): ApiPath<Uuid>) -> ApiResult<Json<CampaignView>> {
    let campaign = load_campaign(&state, id).await?;
    let mut view = CampaignView::of(&campaign);
    if campaign.scenario().is_some() {
        let (_, game) = crate::log::read::state_now(&*state.store, &campaign).await?;
        view.clock = crate::views::ClockView::of(&campaign, &game, state.clock.now());
    }
    Ok(Json(view))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct CampaignPaging {
    /// Only the campaigns this moderator runs (the `moderator_id` of a campaign; a moderator's
    /// own id is `/v1/whoami`'s `id`).
    pub moderator: Option<Uuid>,
    /// The last campaign id of the previous page.
    pub after: Option<Uuid>,
    /// At most this many (1–100, default 50).
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// All campaigns, or one moderator's, oldest first.
#[utoipa::path(get, path = "/v1/campaigns", tag = "campaigns", params(CampaignPaging),
    responses((status = 200, body = CampaignList), (status = 400, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn list_campaigns(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<CampaignPaging>,
) -> ApiResult<Json<CampaignList>> {
    let limit = page_limit(q.limit)?;
    let campaigns = state.store.campaigns(q.moderator, q.after, limit).await?;
    let next_after = (campaigns.len() as i64 == limit).then(|| campaigns.last().map(|c| c.id)).flatten();
    let campaigns =
        campaigns.into_iter().map(|c| LoadedCampaign::load(c, &state.scenarios)).collect::<Result<Vec<_>, _>>()?;
    Ok(Json(CampaignList { campaigns: campaigns.iter().map(CampaignView::of).collect(), next_after }))
}
