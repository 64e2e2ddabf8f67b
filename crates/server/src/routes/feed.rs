//! The outcome feed: what the rules decided, ready for the forum; bots acknowledge delivery.

use adjutant_store::{Acknowledgement, Principal, PrincipalKind};
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::{new_token, token_hash, Caller};
use crate::error::{ApiResult, AppError};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::free_text::check_name;
use crate::routes::shared::{load_campaign, page_limit};
use crate::routes::tokens::{IssuedToken, NewBot};
use crate::views::OutcomeView;
use crate::AppState;

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OutcomePage {
    pub outcomes: Vec<OutcomeView>,
    /// Pass as `after` for the next page; absent at the end of the feed so far.
    pub next_after: Option<i64>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct BotFeed {
    /// Outcomes this bot has not acknowledged yet, oldest first. They are served again until
    /// acknowledged.
    pub outcomes: Vec<OutcomeView>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAcknowledgement {
    /// The forum's id of the post that carried the outcome.
    #[schema(example = "48213")]
    pub forum_post_id: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AcknowledgementView {
    pub bot_id: Uuid,
    pub outcome_id: Uuid,
    pub campaign_id: Uuid,
    pub forum_post_id: String,
    pub acked_at: String,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(campaign_outcomes))
        .routes(routes!(acknowledge))
        .routes(routes!(bot_feed))
        .routes(routes!(create_moderator_bot))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct OutcomePaging {
    /// Outcomes after this position (default 0: from the start).
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// At most this many (1–100, default 50).
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// A campaign's outcomes in order, each with forum-ready text.
#[utoipa::path(get, path = "/v1/campaigns/{id}/outcomes", tag = "feed",
    params(("id" = Uuid, Path, description = "campaign id"), OutcomePaging),
    responses((status = 200, body = OutcomePage), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn campaign_outcomes(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiQuery(q): ApiQuery<OutcomePaging>,
) -> ApiResult<Json<OutcomePage>> {
    load_campaign(&state, id).await?;
    let limit = page_limit(q.limit)?;
    let after = q.after.unwrap_or(0);
    if after < 0 {
        return Err(AppError::bad_request("query.after", "paging.after", "after is a feed position, 0 or more"));
    }
    let outcomes = state.store.outcomes(id, after, limit).await?;
    let next_after = (outcomes.len() as i64 == limit).then(|| outcomes.last().map(|o| o.position)).flatten();
    Ok(Json(OutcomePage { outcomes: with_witnesses(&state, &outcomes).await?, next_after }))
}

/// The outcomes' views, each text quoting the post it came from (its seq, chain hash and
/// receipt), so the forum thread witnesses the log.
async fn with_witnesses(state: &AppState, outcomes: &[adjutant_store::Outcome]) -> ApiResult<Vec<OutcomeView>> {
    let mut witnesses = std::collections::HashMap::new();
    let mut views = Vec::with_capacity(outcomes.len());
    for o in outcomes {
        let key = (o.campaign_id, o.seq);
        let witness = match witnesses.get(&key) {
            Some(known) => Option::clone(known),
            None => {
                let witness = state.store.post(o.campaign_id, o.seq).await?.map(|p| crate::views::post_witness(&p));
                witnesses.insert(key, witness.clone());
                witness
            }
        };
        views.push(OutcomeView::of(o, witness.as_ref()));
    }
    Ok(views)
}

fn require_bot(caller: &Caller) -> ApiResult<&Principal> {
    match caller {
        Caller::Principal(p) if p.kind == PrincipalKind::Bot => Ok(p),
        Caller::Anonymous => Err(AppError::Unauthorized("this needs a bot token".into())),
        _ => Err(AppError::forbidden("auth.bot_only", "only a bot reads its delivery feed and acknowledges")),
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct FeedQuery {
    /// At most this many (1–100, default 50).
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// The bot's delivery feed across its campaigns.
#[utoipa::path(get, path = "/v1/bot/feed", tag = "feed", params(FeedQuery), security(("bearer" = [])),
    responses((status = 200, body = BotFeed), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn bot_feed(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<FeedQuery>,
) -> ApiResult<Json<BotFeed>> {
    let bot = require_bot(&caller)?;
    let limit = page_limit(q.limit)?;
    let outcomes = state.store.pending_outcomes(bot, limit).await?;
    let mut views = with_witnesses(&state, &outcomes).await?;
    mention_players(&state, &mut views).await?;
    Ok(Json(BotFeed { outcomes: views }))
}

/// The outcomes that begin a side's player turn, or remind it of the turn's deadline, name the
/// player to tell: the side's latest player whose token still works, by the handles the
/// moderator recorded for them.
async fn mention_players(state: &AppState, views: &mut [OutcomeView]) -> ApiResult<()> {
    let mut players: std::collections::HashMap<Uuid, Vec<(String, adjutant_store::Contact)>> = Default::default();
    for view in views.iter_mut().filter(|v| v.kind == "turn_begins" || v.kind == "deadline_near") {
        let Some(side) = view.typed().and_then(|d| d.side()).map(|s| s.key().to_owned()) else {
            continue;
        };
        if let std::collections::hash_map::Entry::Vacant(slot) = players.entry(view.campaign_id) {
            let issued = state
                .store
                .campaign_principals(view.campaign_id, PrincipalKind::Player, crate::routes::tokens::MAX_PLAYERS_LISTED)
                .await?;
            let mut contacts: std::collections::HashMap<Uuid, adjutant_store::Contact> =
                state.store.campaign_contacts(view.campaign_id).await?.into_iter().collect();
            slot.insert(
                issued
                    .into_iter()
                    .filter(|(_, revoked)| revoked.is_none())
                    .filter_map(|(p, _)| Some((p.side?, contacts.remove(&p.id).unwrap_or_default())))
                    .collect(),
            );
        }
        let latest = players[&view.campaign_id].iter().rev().find(|(s, _)| *s == side);
        if let Some((_, contact)) = latest.filter(|(_, c)| c.forum_handle.is_some() || c.discord_user_id.is_some()) {
            view.mention = Some(crate::views::Mention {
                side,
                forum_handle: contact.forum_handle.clone(),
                discord_user_id: contact.discord_user_id.clone(),
            });
        }
    }
    Ok(())
}

/// Acknowledges delivery of an outcome. Acknowledging again is harmless: the first stands.
#[utoipa::path(post, path = "/v1/campaigns/{id}/outcomes/{outcome_id}/ack", tag = "feed", request_body = NewAcknowledgement,
    params(("id" = Uuid, Path, description = "campaign id"), ("outcome_id" = Uuid, Path, description = "outcome id")),
    security(("bearer" = [])),
    responses((status = 200, body = AcknowledgementView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn acknowledge(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((id, outcome_id)): ApiPath<(Uuid, Uuid)>,
    ApiJson(req): ApiJson<NewAcknowledgement>,
) -> ApiResult<Json<AcknowledgementView>> {
    let bot = require_bot(&caller)?;
    let campaign = load_campaign(&state, id).await?;
    let serves = match bot.campaign_id {
        Some(bound) => bound == id,
        None => bot.created_by == Some(campaign.campaign.moderator_id),
    };
    if !serves {
        return Err(AppError::forbidden("auth.bot_campaign", "this bot does not serve that campaign"));
    }
    let post_id = req.forum_post_id.trim();
    if post_id.is_empty() || post_id.len() > 200 || post_id.chars().any(char::is_control) {
        return Err(AppError::unprocessable(
            "body.forum_post_id",
            "ack.forum_post_id",
            "the forum post id has 1 to 200 characters",
        ));
    }
    state
        .store
        .outcome(id, outcome_id)
        .await?
        .ok_or_else(|| AppError::not_found("path.outcome_id", format!("no outcome {outcome_id} in this campaign")))?;
    let ack = state
        .store
        .acknowledge(Acknowledgement {
            bot_id: bot.id,
            outcome_id,
            campaign_id: id,
            forum_post_id: post_id.to_owned(),
            acked_at: state.clock.now(),
        })
        .await?;
    Ok(Json(AcknowledgementView {
        bot_id: ack.bot_id,
        outcome_id: ack.outcome_id,
        campaign_id: ack.campaign_id,
        forum_post_id: ack.forum_post_id,
        acked_at: adjutant_rules::dice::stamp_text(ack.acked_at),
    }))
}

/// Issues a bot token that serves every campaign of the calling moderator.
#[utoipa::path(post, path = "/v1/bots", tag = "tokens", request_body = NewBot, security(("bearer" = [])),
    responses((status = 201, body = IssuedToken), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn create_moderator_bot(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<NewBot>,
) -> ApiResult<(StatusCode, Json<IssuedToken>)> {
    let moderator = caller.require_moderator()?;
    let name = check_name("body.name", &req.name)?;
    let token = new_token();
    let principal = Principal {
        id: Uuid::new_v4(),
        kind: PrincipalKind::Bot,
        name,
        campaign_id: None,
        side: None,
        created_by: Some(moderator.id),
        created_at: state.clock.now(),
    };
    let principal = state
        .store
        .create_principal(adjutant_store::NewPrincipal { token_hash: token_hash(&token), principal })
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(IssuedToken {
            id: principal.id,
            kind: "bot".into(),
            name: principal.name,
            campaign_id: None,
            side: None,
            token,
        }),
    ))
}
