//! Issuing tokens: the operator creates moderators; a moderator issues player and bot tokens
//! for their own campaigns.

use adjutant_store::{NewPrincipal, Principal, PrincipalKind};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::auth::{new_token, token_hash, Caller};
use crate::campaign::parse_side;
use crate::error::{ApiResult, AppError};
use crate::extract::{ApiJson, ApiPath};
use crate::routes::campaigns::load_campaign;
use crate::views::{IssuedToken, NewBot, NewModerator, NewPlayer};
use crate::AppState;

pub fn router() -> axum::Router<AppState> {
    Router::new()
        .route("/v1/whoami", get(whoami))
        .route("/v1/moderators", post(create_moderator))
        .route("/v1/campaigns/{id}/players", post(create_player))
        .route("/v1/campaigns/{id}/bots", post(create_bot))
}

/// A name shown to people: 1 to 80 characters after trimming, no control characters.
pub fn check_name(field: &str, name: &str) -> ApiResult<String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 80 || name.chars().any(char::is_control) {
        return Err(AppError::unprocessable(
            field,
            "name.format",
            "a name has 1 to 80 characters and no control characters",
        ));
    }
    Ok(name.to_owned())
}

async fn issue(state: &AppState, principal: Principal) -> ApiResult<(StatusCode, Json<IssuedToken>)> {
    let token = new_token();
    let principal = state.store.create_principal(NewPrincipal { token_hash: token_hash(&token), principal }).await?;
    Ok((
        StatusCode::CREATED,
        Json(IssuedToken {
            id: principal.id,
            kind: principal.kind.as_str().into(),
            name: principal.name,
            campaign_id: principal.campaign_id,
            side: principal.side,
            token,
        }),
    ))
}

/// Creates a moderator (operator token only).
#[utoipa::path(post, path = "/v1/moderators", tag = "tokens", request_body = NewModerator,
    security(("bearer" = [])),
    responses((status = 201, body = IssuedToken), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn create_moderator(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<NewModerator>,
) -> ApiResult<(StatusCode, Json<IssuedToken>)> {
    caller.require_operator()?;
    let name = check_name("body.name", &req.name)?;
    let principal = Principal {
        id: Uuid::new_v4(),
        kind: PrincipalKind::Moderator,
        name,
        campaign_id: None,
        side: None,
        created_by: None,
        created_at: Utc::now(),
    };
    issue(&state, principal).await
}

/// Issues a player token for one side of a campaign (its moderator only).
#[utoipa::path(post, path = "/v1/campaigns/{id}/players", tag = "tokens", request_body = NewPlayer,
    params(("id" = Uuid, Path, description = "campaign id")), security(("bearer" = [])),
    responses((status = 201, body = IssuedToken), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn create_player(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(req): ApiJson<NewPlayer>,
) -> ApiResult<(StatusCode, Json<IssuedToken>)> {
    let campaign = load_campaign(&state, id).await?;
    let moderator = caller.require_campaign_moderator(campaign.campaign.moderator_id)?;
    let name = check_name("body.name", &req.name)?;
    let side = parse_side(&req.side).ok_or_else(|| {
        AppError::unprocessable("body.side", "campaign.sides", "the side is `union` or `confederate`")
    })?;
    let principal = Principal {
        id: Uuid::new_v4(),
        kind: PrincipalKind::Player,
        name,
        campaign_id: Some(id),
        side: Some(side.into()),
        created_by: Some(moderator.id),
        created_at: Utc::now(),
    };
    issue(&state, principal).await
}

/// Issues a bot token for a campaign: it reads the outcome feed and acknowledges deliveries.
#[utoipa::path(post, path = "/v1/campaigns/{id}/bots", tag = "tokens", request_body = NewBot,
    params(("id" = Uuid, Path, description = "campaign id")), security(("bearer" = [])),
    responses((status = 201, body = IssuedToken), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn create_bot(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(req): ApiJson<NewBot>,
) -> ApiResult<(StatusCode, Json<IssuedToken>)> {
    let campaign = load_campaign(&state, id).await?;
    let moderator = caller.require_campaign_moderator(campaign.campaign.moderator_id)?;
    let name = check_name("body.name", &req.name)?;
    let principal = Principal {
        id: Uuid::new_v4(),
        kind: PrincipalKind::Bot,
        name,
        campaign_id: Some(id),
        side: None,
        created_by: Some(moderator.id),
        created_at: Utc::now(),
    };
    issue(&state, principal).await
}

/// Who a token speaks for.
#[derive(Debug, Serialize, ToSchema)]
pub struct WhoAmI {
    /// `operator`, `moderator`, `player` or `bot`.
    pub kind: String,
    pub name: String,
    /// The campaign a player or bot token is bound to.
    pub campaign_id: Option<Uuid>,
    /// The side a player token acts for.
    pub side: Option<String>,
}

/// Who the token sent speaks for: the browser pages ask it to know the player's side.
#[utoipa::path(get, path = "/v1/whoami", tag = "tokens", security(("bearer" = [])),
    responses((status = 200, body = WhoAmI), (status = 401, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn whoami(caller: Caller) -> ApiResult<Json<WhoAmI>> {
    match caller {
        Caller::Anonymous => Err(AppError::Unauthorized("send the token to ask whose it is".into())),
        Caller::Operator => {
            Ok(Json(WhoAmI { kind: "operator".into(), name: "operator".into(), campaign_id: None, side: None }))
        }
        Caller::Principal(p) => {
            Ok(Json(WhoAmI { kind: p.kind.as_str().into(), name: p.name, campaign_id: p.campaign_id, side: p.side }))
        }
    }
}
