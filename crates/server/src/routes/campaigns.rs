//! Campaigns: created by moderators from a scenario (managed) or a ruleset (resolver); read by anyone.

use adjutant_rules::dice::stamp_text;
use adjutant_rules::result_time::{self, ResultTime};
use adjutant_store::Campaign;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::Caller;
use crate::campaign::{CampaignSettings, LoadedCampaign, ResultChain, SIDES};
use crate::error::{ApiResult, AppError};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::free_text::check_name;
use crate::routes::shared::{load_campaign, page_limit};
use crate::views::ClockView;
use crate::AppState;

/// A new campaign. Its mode follows from what it names: a `scenario` (or neither) makes a managed
/// campaign, a `ruleset` a resolver campaign; `mode` may be given too, and must agree.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewCampaign {
    pub name: String,
    #[serde(default, deserialize_with = "present_string")]
    pub mode: Option<String>,
    #[serde(default, deserialize_with = "present_string")]
    pub scenario: Option<String>,
    #[serde(default, deserialize_with = "present_string")]
    pub ruleset: Option<String>,
    #[serde(default, deserialize_with = "crate::extract::optional_object")]
    pub settings: Option<CampaignSettings>,
}

/// A field that may be left out but, when given, is a string: `null` is refused, as the schema
/// says.
fn present_string<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    String::deserialize(deserializer).map(Some)
}

/// The schema says exactly what `create_campaign` accepts: one of the two modes, each with only
/// its own fields, the rulesets by name.
impl utoipa::PartialSchema for NewCampaign {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use serde_json::json;
        let rulesets: Vec<&str> = adjutant_rules::resolver::rulesets().iter().map(|r| r.name()).collect();
        let name = json!({"$ref": "#/components/schemas/Name"});
        // `null` reads as not given: the defaults.
        // A client never sends `result_chain`: the server draws it. Sealed delays are a managed
        // campaign's.
        let settings = json!({"anyOf": [{"$ref": "#/components/schemas/NewCampaignSettings"}, {"type": "null"}]});
        let resolver_settings =
            json!({"anyOf": [{"$ref": "#/components/schemas/NewResolverCampaignSettings"}, {"type": "null"}]});
        let schema = json!({
            "description": "A new campaign. Its mode follows from what it names: a `scenario` (or neither) makes a managed campaign, a `ruleset` a resolver campaign; `mode` may be given too, and must agree.",
            "oneOf": [
                {
                    "title": "Managed campaign",
                    "type": "object",
                    "required": ["name"],
                    "additionalProperties": false,
                    "properties": {
                        "name": name,
                        "mode": {"type": "string", "enum": ["managed"], "description": "`managed`: the server holds the whole game."},
                        "scenario": {"type": "string", "example": "short-acw",
                            "description": "A scenario of the server's (`config/scenarios/<name>.toml`), or the id of one the moderator uploaded (`POST /v1/scenarios`, 64 hex digits); `short-acw` when not given. The served description lists the server's scenarios."},
                        "settings": settings,
                    }
                },
                {
                    "title": "Resolver campaign",
                    "type": "object",
                    "required": ["name", "ruleset"],
                    "additionalProperties": false,
                    "properties": {
                        "name": name,
                        "mode": {"type": "string", "enum": ["resolver"], "description": "`resolver`: dice and tables only."},
                        "ruleset": {"type": "string", "enum": rulesets, "example": "acw-25mm"},
                        "settings": resolver_settings,
                    }
                }
            ],
            "example": {"name": "Shenandoah, spring 1862", "scenario": "short-acw"}
        });
        serde_json::from_value(schema).unwrap_or_else(|e| panic!("the NewCampaign schema is not a schema: {e}"))
    }
}

impl utoipa::ToSchema for NewCampaign {
    fn schemas(schemas: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
        use utoipa::PartialSchema;
        schemas.push(("Name".into(), crate::free_text::Name::schema()));
        schemas.push(("CampaignSettings".into(), CampaignSettings::schema()));
        schemas.push(("NewCampaignSettings".into(), new_campaign_settings_schema(false)));
        schemas.push(("NewResolverCampaignSettings".into(), new_campaign_settings_schema(true)));
        <CampaignSettings as utoipa::ToSchema>::schemas(schemas);
    }
}

/// The settings a client may send: the stored ones without the server's `result_chain`.
/// A resolver campaign's dice come from each post's own stamp: its `result_time` is `post`.
fn new_campaign_settings_schema(resolver: bool) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::PartialSchema;
    let mut schema = serde_json::to_value(CampaignSettings::schema()).unwrap_or_default();
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.remove("result_chain");
        if resolver {
            properties.insert(
                "result_time".into(),
                serde_json::json!({"type": "string", "enum": ["post"],
                    "description": "`post`: a resolver campaign's dice come from each post's own stamp (`sealed_delay` is for managed campaigns)."}),
            );
        }
    }
    schema["additionalProperties"] = Value::Bool(false);
    schema["description"] = Value::String(
        "How the campaign's clock reads a post's stamp, how it rounds, and when a battle's result time is. \
         The server draws a sealed-delay campaign's `result_chain` itself; a client that sends one is refused."
            .into(),
    );
    serde_json::from_value(schema).unwrap_or_else(|e| panic!("the NewCampaignSettings schema is not a schema: {e}"))
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CampaignView {
    pub id: Uuid,
    pub name: String,
    pub mode: String,
    pub scenario: Option<String>,
    pub ruleset: Option<String>,
    pub moderator_id: Uuid,
    pub settings: CampaignSettings,
    pub sides: Vec<String>,
    pub created_at: String,
    /// How the log's hash chain starts: `creation_record` (the first post's `prev_hash` is the
    /// hash of the campaign's creation record: id, name, moderator, mode, scenario or ruleset
    /// and the scenario's text, every setting, created_at) or `legacy` (64 zeros, campaigns
    /// created before that).
    #[schema(pattern = "^(legacy|creation_record)$")]
    pub chain_genesis: String,
    /// The first post's `prev_hash`.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub genesis_hash: String,
    /// `GET /v1/campaigns/{id}` only: the campaign clock, as in `GET …/state`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub clock: Option<ClockView>,
}

impl CampaignView {
    pub fn of(loaded: &LoadedCampaign) -> Self {
        let c: &Campaign = &loaded.campaign;
        Self {
            id: c.id,
            name: c.name.clone(),
            mode: c.mode.clone(),
            scenario: c.scenario.clone(),
            ruleset: c.ruleset.clone(),
            moderator_id: c.moderator_id,
            settings: loaded.settings.clone(),
            sides: SIDES.iter().map(|s| (*s).to_owned()).collect(),
            created_at: stamp_text(c.created_at),
            chain_genesis: c.chain_genesis.clone(),
            genesis_hash: crate::campaign::genesis(c),
            clock: None,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CampaignList {
    pub campaigns: Vec<CampaignView>,
    /// Pass as `after` for the next page; absent on the last page.
    pub next_after: Option<Uuid>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_campaigns, create_campaign)).routes(routes!(get_campaign))
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
            let text = match state.scenarios.get(&name) {
                Some(text) => Some(text.to_owned()),
                // A moderator's own upload, bound into the creation record like a file's text.
                None if crate::routes::scenarios::is_uploaded_id(&name) => {
                    state.store.scenario(moderator.id, &name).await?.map(|kept| kept.text)
                }
                None => None,
            };
            let text = text.ok_or_else(|| {
                let known: Vec<&str> = state.scenarios.names().collect();
                AppError::unprocessable(
                    "body.scenario",
                    "campaign.scenario",
                    format!(
                        "no scenario {name:?}; the server has: {}, and each moderator their own uploads (GET /v1/scenarios)",
                        known.join(", ")
                    ),
                )
            })?;
            (Some(name), Some(text), None)
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
        view.clock = ClockView::of(&campaign, &game, state.clock.now());
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
