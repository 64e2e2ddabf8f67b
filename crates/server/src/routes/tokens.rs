//! Issuing and revoking tokens: the operator creates and revokes moderators; a moderator issues,
//! rotates and revokes player and bot tokens for their own campaigns.
//!
//! A revoked token is refused (401) from the next request on, on every server sharing the
//! database: tokens are looked up on every request, never cached. Revoking changes only the
//! principal's own row; the posts it made stay in the log under its name.

use adjutant_store::{NewPrincipal, Principal, PrincipalKind};
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use chrono::Utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::{new_token, token_hash, Caller};
use crate::campaign::parse_side;
use crate::error::{ApiResult, AppError};
use crate::extract::{ApiJson, ApiPath};
use crate::free_text::check_name;
use crate::routes::shared::load_campaign;
use crate::AppState;
use adjutant_rules::dice::stamp_text;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewModerator {
    /// The moderator's name as players know it.
    #[schema(value_type = crate::free_text::Name, example = "Col. Hawkins")]
    pub name: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewPlayer {
    #[schema(value_type = crate::free_text::Name, example = "jeb_stuart_fan")]
    pub name: String,
    /// `union` or `confederate`; the seeds' other words are read as the side they name:
    /// `federal` and `yankee` as `union`, `rebel` as `confederate`.
    #[schema(example = "union")]
    #[schema(schema_with = side_schema)]
    pub side: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewBot {
    #[schema(value_type = crate::free_text::Name, example = "forum-bot")]
    pub name: String,
}

/// A token, shown once: keep it, Adjutant stores only its hash.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct IssuedToken {
    pub id: Uuid,
    /// `moderator`, `player` or `bot`.
    pub kind: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub campaign_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<String>,
    /// The bearer token. It is not shown again.
    pub token: String,
}

/// The side words a player token may name, for the schema.
fn side_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(crate::campaign::SIDE_NAMES.iter().map(|(name, _)| *name)))
        .examples([serde_json::json!("union")])
        .build()
}

/// Who a token speaks for.
#[derive(Debug, Serialize, ToSchema)]
pub struct WhoAmI {
    /// The token's principal (a moderator's id is the `moderator_id` of their campaigns); none
    /// for the operator.
    pub id: Option<Uuid>,
    /// `operator`, `moderator`, `player` or `bot`.
    pub kind: String,
    pub name: String,
    /// The campaign a player or bot token is bound to.
    pub campaign_id: Option<Uuid>,
    /// The side a player token acts for.
    pub side: Option<String>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(whoami))
        .routes(routes!(create_moderator))
        .routes(routes!(list_players, create_player))
        .routes(routes!(create_bot))
        .routes(routes!(revoke_moderator))
        .routes(routes!(revoke_player))
        .routes(routes!(rotate_player))
        .routes(routes!(set_contact))
        .routes(routes!(list_mails))
        .routes(routes!(replace_player))
        .routes(routes!(revoke_bot))
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
        created_at: state.clock.now(),
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
        AppError::unprocessable("body.side", "campaign.sides", crate::campaign::sides_detail(&campaign))
    })?;
    let principal = Principal {
        id: Uuid::new_v4(),
        kind: PrincipalKind::Player,
        name,
        campaign_id: Some(id),
        side: Some(side.key().into()),
        created_by: Some(moderator.id),
        created_at: state.clock.now(),
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
        created_at: state.clock.now(),
    };
    issue(&state, principal).await
}

/// A principal of `kind` by id, or 404 naming `field`.
async fn principal_of_kind(
    state: &AppState,
    id: Uuid,
    kind: PrincipalKind,
    field: &str,
) -> ApiResult<(Principal, Option<chrono::DateTime<Utc>>)> {
    match state.store.principal(id).await? {
        Some((p, revoked_at)) if p.kind == kind => Ok((p, revoked_at)),
        _ => Err(AppError::not_found(field, format!("there is no {} {id}", kind.as_str()))),
    }
}

/// Revokes a moderator (operator token only): their token is refused from now on, so they can
/// no longer act on their campaigns, issue tokens or read webhooks. The player and bot tokens
/// they issued keep working; their campaigns and logs stay. Revoking twice is no error.
#[utoipa::path(delete, path = "/v1/moderators/{moderator_id}", tag = "tokens",
    params(("moderator_id" = Uuid, Path, description = "moderator id")), security(("bearer" = [])),
    responses((status = 204, description = "Revoked"), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn revoke_moderator(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(moderator_id): ApiPath<Uuid>,
) -> ApiResult<StatusCode> {
    caller.require_operator()?;
    principal_of_kind(&state, moderator_id, PrincipalKind::Moderator, "path.moderator_id").await?;
    state.store.revoke_principal(moderator_id, state.clock.now()).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The player `player_id` of campaign `id`, checked for the campaign's own moderator.
async fn campaign_player(
    state: &AppState,
    caller: &Caller,
    id: Uuid,
    player_id: Uuid,
) -> ApiResult<(Principal, Option<chrono::DateTime<Utc>>)> {
    let campaign = load_campaign(state, id).await?;
    caller.require_campaign_moderator(campaign.campaign.moderator_id)?;
    let (player, revoked_at) = principal_of_kind(state, player_id, PrincipalKind::Player, "path.player_id").await?;
    if player.campaign_id != Some(id) {
        return Err(AppError::not_found("path.player_id", format!("campaign {id} has no player {player_id}")));
    }
    Ok((player, revoked_at))
}

/// The most players one listing shows: far more than a campaign of two sides needs.
pub const MAX_PLAYERS_LISTED: i64 = 500;

/// A campaign's players, for its moderator.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PlayerList {
    /// In the order they were issued (those issued in the same millisecond by id); at most 500.
    pub players: Vec<PlayerEntry>,
}

/// One player of a campaign: who plays which side, since when, and whether the token still
/// works. The token itself is never shown again (rotate it for a new one).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PlayerEntry {
    pub id: Uuid,
    pub name: String,
    #[schema(example = "union")]
    pub side: Option<String>,
    pub issued_at: String,
    /// When the moderator revoked the token; absent while it works.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    /// How the player is reached, as the moderator recorded it (`PUT …/contact`).
    pub contact: ContactView,
}

/// How a player is reached outside Adjutant. The forum handle and the Discord user id are
/// mentioned by the bot when it is the player's turn (and only then); the email address is
/// shown to the campaign's moderator alone. Every field is optional; a field left out (or null)
/// is cleared.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactView {
    /// The player's username on the forum (Discourse: letters, digits, `_`, `.` and `-`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "stonewall", pattern = "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,59}$")]
    pub forum_handle: Option<String>,
    /// The player's Discord user id (a snowflake: 17 to 20 digits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "80351110224678912", pattern = "^[0-9]{17,20}$")]
    pub discord_user_id: Option<String>,
    /// Where turn and reminder mails go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(
        example = "jackson@example.org",
        pattern = "^[^@\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]{1,64}@[^@\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]{1,189}$"
    )]
    pub email: Option<String>,
}

impl ContactView {
    fn of(contact: adjutant_store::Contact) -> Self {
        Self { forum_handle: contact.forum_handle, discord_user_id: contact.discord_user_id, email: contact.email }
    }

    /// Each field checked, naming the one at fault.
    fn check(self) -> ApiResult<adjutant_store::Contact> {
        let handle_ok = |h: &str| {
            (1..=60).contains(&h.len())
                && h.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
                && !h.starts_with(['.', '-'])
        };
        if let Some(h) = self.forum_handle.as_deref().filter(|h| !handle_ok(h)) {
            return Err(AppError::unprocessable(
                "body.forum_handle",
                "contact.forum_handle",
                format!("{h:?} is not a forum username: 1 to 60 letters, digits, `_`, `.` and `-`"),
            ));
        }
        let id_ok = |d: &str| (17..=20).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_digit());
        if self.discord_user_id.as_deref().is_some_and(|d| !id_ok(d)) {
            return Err(AppError::unprocessable(
                "body.discord_user_id",
                "contact.discord_user_id",
                "a Discord user id is 17 to 20 digits (Discord: Copy User ID)",
            ));
        }
        // Exactly the schema's pattern: 1 to 64 characters, `@`, 1 to 189; no second `@`, no
        // control character, no white space (Unicode's, and the byte order mark, which the
        // pattern's own set of spaces counts).
        let email_ok = |e: &str| {
            e.split_once('@').is_some_and(|(local, domain)| {
                (1..=64).contains(&local.chars().count())
                    && (1..=189).contains(&domain.chars().count())
                    && !domain.contains('@')
            }) && !e.chars().any(|c| c.is_control() || c.is_whitespace() || c == '\u{feff}')
        };
        if self.email.as_deref().is_some_and(|e| !email_ok(e)) {
            return Err(AppError::unprocessable("body.email", "contact.email", "an email address: name@domain"));
        }
        Ok(adjutant_store::Contact {
            forum_handle: self.forum_handle,
            discord_user_id: self.discord_user_id,
            email: self.email,
        })
    }
}

/// Records how a player is reached (the campaign's moderator): the forum handle and Discord user
/// id the bot mentions when it is the player's turn, and an email address. Replaces what was
/// recorded before.
#[utoipa::path(put, path = "/v1/campaigns/{id}/players/{player_id}/contact", tag = "tokens", request_body = ContactView,
    params(("id" = Uuid, Path, description = "campaign id"), ("player_id" = Uuid, Path, description = "player id")),
    security(("bearer" = [])),
    responses((status = 200, body = ContactView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn set_contact(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((id, player_id)): ApiPath<(Uuid, Uuid)>,
    ApiJson(req): ApiJson<ContactView>,
) -> ApiResult<Json<ContactView>> {
    campaign_player(&state, &caller, id, player_id).await?;
    let contact = req.check()?;
    state.store.set_contact(player_id, &contact, state.clock.now()).await?;
    Ok(Json(ContactView::of(contact)))
}

/// Lists a campaign's players (its moderator only), revoked ones included, so the moderator can
/// rotate or revoke each.
#[utoipa::path(get, path = "/v1/campaigns/{id}/players", tag = "tokens",
    params(("id" = Uuid, Path, description = "campaign id")), security(("bearer" = [])),
    responses((status = 200, body = PlayerList), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn list_players(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<Uuid>,
) -> ApiResult<Json<PlayerList>> {
    let campaign = load_campaign(&state, id).await?;
    caller.require_campaign_moderator(campaign.campaign.moderator_id)?;
    let players = state.store.campaign_principals(id, PrincipalKind::Player, MAX_PLAYERS_LISTED).await?;
    let mut contacts: std::collections::HashMap<Uuid, adjutant_store::Contact> =
        state.store.campaign_contacts(id).await?.into_iter().collect();
    Ok(Json(PlayerList {
        players: players
            .into_iter()
            .map(|(p, revoked_at)| PlayerEntry {
                contact: ContactView::of(contacts.remove(&p.id).unwrap_or_default()),
                id: p.id,
                name: p.name,
                side: p.side,
                issued_at: stamp_text(p.created_at),
                revoked_at: revoked_at.map(stamp_text),
            })
            .collect(),
    }))
}

/// Revokes a player's token (the campaign's moderator): it is refused from now on. Their posts
/// stay in the log. Revoking twice is no error.
#[utoipa::path(delete, path = "/v1/campaigns/{id}/players/{player_id}", tag = "tokens",
    params(("id" = Uuid, Path, description = "campaign id"), ("player_id" = Uuid, Path, description = "player id")),
    security(("bearer" = [])),
    responses((status = 204, description = "Revoked"), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn revoke_player(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((id, player_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<StatusCode> {
    campaign_player(&state, &caller, id, player_id).await?;
    state.store.revoke_principal(player_id, state.clock.now()).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Gives a player a new token (the campaign's moderator): the same player, side and posts; the
/// old token is refused from now on. The new token is shown this once. A revoked player cannot
/// be rotated (409): issue a new player instead.
#[utoipa::path(post, path = "/v1/campaigns/{id}/players/{player_id}/rotate", tag = "tokens",
    params(("id" = Uuid, Path, description = "campaign id"), ("player_id" = Uuid, Path, description = "player id")),
    security(("bearer" = [])),
    responses((status = 200, body = IssuedToken), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn rotate_player(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((id, player_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<Json<IssuedToken>> {
    let (player, revoked_at) = campaign_player(&state, &caller, id, player_id).await?;
    let revoked = || {
        AppError::conflict(
            "path.player_id",
            "token.revoked",
            "this player's token was revoked; issue a new player instead",
        )
    };
    if revoked_at.is_some() {
        return Err(revoked());
    }
    let token = new_token();
    if !state.store.replace_token(player_id, &token_hash(&token)).await? {
        return Err(revoked());
    }
    Ok(Json(IssuedToken {
        id: player.id,
        kind: player.kind.as_str().into(),
        name: player.name,
        campaign_id: player.campaign_id,
        side: player.side,
        token,
    }))
}

/// Revokes a bot's token (the moderator who issued it): it is refused from now on, for the feed,
/// acknowledgements and everything else. Revoking twice is no error.
#[utoipa::path(delete, path = "/v1/bots/{bot_id}", tag = "tokens",
    params(("bot_id" = Uuid, Path, description = "bot id")), security(("bearer" = [])),
    responses((status = 204, description = "Revoked"), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn revoke_bot(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(bot_id): ApiPath<Uuid>,
) -> ApiResult<StatusCode> {
    let moderator = caller.require_moderator()?;
    let (bot, _) = principal_of_kind(&state, bot_id, PrincipalKind::Bot, "path.bot_id").await?;
    if bot.created_by != Some(moderator.id) {
        return Err(AppError::forbidden("auth.bot_issuer", "only the moderator who issued a bot can revoke it"));
    }
    state.store.revoke_principal(bot_id, state.clock.now()).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Who the token sent speaks for: the browser pages ask it to know the player's side.
#[utoipa::path(get, path = "/v1/whoami", tag = "tokens", security(("bearer" = [])),
    responses((status = 200, body = WhoAmI), (status = 401, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn whoami(caller: Caller) -> ApiResult<Json<WhoAmI>> {
    match caller {
        Caller::Anonymous => Err(AppError::Unauthorized("send the token to ask whose it is".into())),
        Caller::Operator => Ok(Json(WhoAmI {
            id: None,
            kind: "operator".into(),
            name: "operator".into(),
            campaign_id: None,
            side: None,
        })),
        Caller::Principal(p) => Ok(Json(WhoAmI {
            id: Some(p.id),
            kind: p.kind.as_str().into(),
            name: p.name,
            campaign_id: p.campaign_id,
            side: p.side,
        })),
    }
}

/// The most mails one listing shows.
pub const MAX_MAILS_LISTED: i64 = 200;

/// A campaign's mail log, for its moderator.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MailLog {
    /// The latest due first; at most 200.
    pub mails: Vec<MailView>,
}

/// One mail to a player: a turn's beginning or a reminder before its deadline.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MailView {
    pub player_id: Uuid,
    pub to: String,
    pub subject: String,
    /// Not sent before this time.
    pub due_at: String,
    pub attempts: i32,
    /// When it went (or was skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_at: Option<String>,
    /// Why it was not sent: what it was about was over by then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// What the last failed attempt met.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// The campaign's mails to its players (its moderator only): each turn and reminder mail, when
/// it was due, and whether and when it went.
#[utoipa::path(get, path = "/v1/campaigns/{id}/mails", tag = "tokens",
    params(("id" = Uuid, Path, description = "campaign id")), security(("bearer" = [])),
    responses((status = 200, body = MailLog), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn list_mails(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<Uuid>,
) -> ApiResult<Json<MailLog>> {
    let campaign = load_campaign(&state, id).await?;
    caller.require_campaign_moderator(campaign.campaign.moderator_id)?;
    let mails = state.store.mails(id, MAX_MAILS_LISTED).await?;
    Ok(Json(MailLog {
        mails: mails
            .into_iter()
            .map(|m| MailView {
                player_id: m.principal_id,
                to: m.to,
                subject: m.subject,
                due_at: stamp_text(m.due_at),
                attempts: m.attempts,
                sent_at: m.sent_at.map(stamp_text),
                skipped: m.skipped,
                last_error: m.last_error,
            })
            .collect(),
    }))
}

/// The new player of a side.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Replacement {
    /// The new player's name (1 to 80 characters on one line).
    #[schema(example = "Longstreet", value_type = crate::free_text::Name)]
    pub name: String,
}

/// Replaces a side's player (the campaign's moderator): a new player with a new token for the
/// same side, the old token revoked, and a `replace_player` post in the log saying who plays the
/// side from now on. The new token is shown this once. The old player's posts stay theirs.
#[utoipa::path(post, path = "/v1/campaigns/{id}/players/{player_id}/replace", tag = "tokens", request_body = Replacement,
    params(("id" = Uuid, Path, description = "campaign id"), ("player_id" = Uuid, Path, description = "the player replaced")),
    security(("bearer" = [])),
    responses((status = 201, body = IssuedToken), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn replace_player(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((id, player_id)): ApiPath<(Uuid, Uuid)>,
    ApiJson(req): ApiJson<Replacement>,
) -> ApiResult<(StatusCode, Json<IssuedToken>)> {
    let (old, revoked_at) = campaign_player(&state, &caller, id, player_id).await?;
    // `campaign_player` let only the campaign's moderator through.
    let Caller::Principal(moderator) = &caller else {
        return Err(AppError::forbidden("token.moderator_only", "only the campaign's moderator replaces a player"));
    };
    if revoked_at.is_some() {
        return Err(AppError::conflict(
            "path.player_id",
            "token.revoked",
            "this player's token was revoked already; replace the side's current player",
        ));
    }
    let name = check_name("body.name", &req.name)?;
    let campaign = crate::routes::shared::campaign_to_post_to(&state, id).await?;
    let principal = Principal {
        id: Uuid::new_v4(),
        kind: PrincipalKind::Player,
        name: name.clone(),
        campaign_id: Some(id),
        side: old.side.clone(),
        created_by: Some(moderator.id),
        created_at: state.clock.now(),
    };
    let (status, Json(issued)) = issue(&state, principal).await?;
    let body = serde_json::json!({"side": old.side, "replaced": old.id, "replaced_name": old.name,
                                  "by": issued.id, "name": name});
    let new = crate::log::append::Submission {
        author: moderator,
        side: None,
        kind: "replace_player",
        body: &body,
        idempotency_key: format!("replace {player_id} by {}", issued.id),
    };
    state.log().append(&campaign, new).await?;
    state.store.revoke_principal(old.id, state.clock.now()).await?;
    Ok((status, Json(issued)))
}
