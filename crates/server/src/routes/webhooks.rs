//! Webhooks: a campaign's moderator registers endpoints that receive every outcome, signed,
//! reads each endpoint's delivery log, rotates an endpoint's secret and deletes an endpoint
//! (it is disabled: nothing more is sent, its log stays readable).

use adjutant_store::{DeliveryLogEntry, Webhook};
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::{ApiResult, AppError};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::net_guard::{url_allowed, Allowlist};
use crate::routes::shared::{load_campaign, page_limit};
use crate::webhooks::new_secret;
use crate::AppState;

/// A webhook's new signing secret: shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct RotatedSecret {
    pub id: Uuid,
    /// `whsec_…`: every delivery attempted from now on is signed with it.
    pub secret: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewWebhook {
    /// Where to POST each outcome: an `https://` (or `http://`) address with a host, no
    /// credentials, at most 2000 characters, that reaches a public (global) address. Loopback,
    /// private, link-local, unique-local, shared, multicast and metadata addresses, and
    /// `localhost`, are refused (422 `webhook.address`) unless the operator allows them; a
    /// campaign has at most `webhooks_per_campaign` (default 5) webhooks (409 `webhook.limit`).
    #[schema(
        example = "http://forum-bridge.example:8090/adjutant",
        max_length = 2000,
        pattern = "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@:\\s][^/?#@\\s]*([/?#].*)?$"
    )]
    pub url: String,
}

/// A webhook just registered, with its signing secret: shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct RegisteredWebhook {
    pub id: Uuid,
    pub campaign_id: Uuid,
    pub url: String,
    /// `whsec_…`: verify each request's `webhook-signature` with it (Standard Webhooks).
    pub secret: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookView {
    pub id: Uuid,
    pub campaign_id: Uuid,
    pub url: String,
    pub created_at: DateTime<Utc>,
    /// `true` until the endpoint answers 410 Gone or the moderator deletes the webhook.
    pub active: bool,
    pub disabled_at: Option<DateTime<Utc>>,
    pub disabled_reason: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookList {
    pub webhooks: Vec<WebhookView>,
}

/// One attempt to deliver one outcome.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryView {
    /// The log's cursor.
    pub id: i64,
    /// The outcome sent, also the request's `webhook-id`.
    pub outcome_id: Uuid,
    /// 1 for the first attempt at this outcome.
    pub attempt: i32,
    pub attempted_at: DateTime<Utc>,
    /// The status the endpoint answered, if it answered.
    pub status_code: Option<i32>,
    /// Why there was no answer (could not connect, timed out), if so.
    pub error: Option<String>,
    pub duration_ms: i64,
    /// A 2xx answer.
    pub delivered: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryPage {
    pub deliveries: Vec<DeliveryView>,
    /// Pass as `after` for the next page; absent on the last page.
    pub next_after: Option<i64>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_webhooks, create_webhook))
        .routes(routes!(list_deliveries))
        .routes(routes!(delete_webhook))
        .routes(routes!(rotate_webhook_secret))
}

/// Why a webhook the moderator deleted is disabled.
pub const DELETED_REASON: &str = "deleted by the campaign's moderator";

impl From<Webhook> for WebhookView {
    fn from(w: Webhook) -> Self {
        Self {
            id: w.id,
            campaign_id: w.campaign_id,
            url: w.url,
            created_at: w.created_at,
            active: w.disabled_at.is_none(),
            disabled_at: w.disabled_at,
            disabled_reason: w.disabled_reason,
        }
    }
}

impl From<DeliveryLogEntry> for DeliveryView {
    fn from(d: DeliveryLogEntry) -> Self {
        Self {
            id: d.id,
            outcome_id: d.outcome_id,
            attempt: d.attempt,
            attempted_at: d.attempted_at,
            delivered: d.status_code.is_some_and(|s| (200..300).contains(&s)),
            status_code: d.status_code,
            error: d.error,
            duration_ms: d.duration_ms,
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeliveryPaging {
    /// Log entries after this id (default 0: from the start).
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// At most this many (1–100, default 50).
    #[serde(default, deserialize_with = "crate::whole_number::query")]
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// Checks a webhook address: absolute `https://` or `http://` with a host, no credentials, and
/// not inside the network as far as the address itself tells (a literal loopback, private,
/// link-local… address, or `localhost`), unless the operator's `webhook_allow` names it. Names
/// are checked again, address by address, each time the deliverer connects.
fn check_url(text: &str, allow: &Allowlist) -> ApiResult<String> {
    let refuse = |detail: &str| AppError::unprocessable("body.url", "webhook.url", detail);
    let text = text.trim();
    if text.len() > 2000 {
        return Err(refuse("the address is longer than 2000 characters"));
    }
    let url = reqwest::Url::parse(text).map_err(|e| refuse(&format!("not an absolute URL: {e}")))?;
    match url.scheme() {
        "http" | "https" => {}
        _ => return Err(refuse("a webhook address starts with https:// or http://")),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(refuse("the address names no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refuse("put no credentials in the address; verify the signature instead"));
    }
    if !url_allowed(allow, &url) {
        return Err(AppError::unprocessable(
            "body.url",
            "webhook.address",
            "webhooks reach only public addresses: loopback, private, link-local, unique-local, shared, multicast and metadata addresses and localhost are refused (an operator can allow a host with webhook_allow)",
        ));
    }
    Ok(url.to_string())
}

/// Registers a webhook (the campaign's moderator). Every outcome written from now on is POSTed
/// to it, signed by the Standard Webhooks scheme with the secret returned here, once.
#[utoipa::path(post, path = "/v1/campaigns/{id}/webhooks", tag = "webhooks", request_body = NewWebhook,
    params(("id" = Uuid, Path, description = "campaign id")), security(("bearer" = [])),
    responses((status = 201, body = RegisteredWebhook), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn create_webhook(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(req): ApiJson<NewWebhook>,
) -> ApiResult<(StatusCode, Json<RegisteredWebhook>)> {
    let campaign = load_campaign(&state, id).await?;
    let moderator = caller.require_campaign_moderator(campaign.campaign.moderator_id)?;
    let url = check_url(&req.url, &state.webhook_allow)?;
    let active = state.store.webhooks(id).await?.iter().filter(|w| w.disabled_at.is_none()).count();
    if active >= state.config.webhooks_per_campaign {
        return Err(AppError::conflict(
            "body.url",
            "webhook.limit",
            format!("a campaign has at most {} webhooks", state.config.webhooks_per_campaign),
        ));
    }
    let webhook = Webhook {
        id: Uuid::new_v4(),
        campaign_id: id,
        url,
        secret: new_secret(),
        created_by: moderator.id,
        created_at: state.clock.now(),
        disabled_at: None,
        disabled_reason: None,
    };
    let w = state.store.create_webhook(webhook).await?;
    Ok((
        StatusCode::CREATED,
        Json(RegisteredWebhook {
            id: w.id,
            campaign_id: w.campaign_id,
            url: w.url,
            secret: w.secret,
            created_at: w.created_at,
        }),
    ))
}

/// A campaign's webhooks (its moderator), without their secrets.
#[utoipa::path(get, path = "/v1/campaigns/{id}/webhooks", tag = "webhooks",
    params(("id" = Uuid, Path, description = "campaign id")), security(("bearer" = [])),
    responses((status = 200, body = WebhookList), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn list_webhooks(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<Uuid>,
) -> ApiResult<Json<WebhookList>> {
    let campaign = load_campaign(&state, id).await?;
    caller.require_campaign_moderator(campaign.campaign.moderator_id)?;
    let webhooks = state.store.webhooks(id).await?;
    Ok(Json(WebhookList { webhooks: webhooks.into_iter().map(WebhookView::from).collect() }))
}

/// A webhook's delivery log (the campaign's moderator): every attempt, oldest first.
#[utoipa::path(get, path = "/v1/campaigns/{id}/webhooks/{webhook_id}/deliveries", tag = "webhooks",
    params(("id" = Uuid, Path, description = "campaign id"), ("webhook_id" = Uuid, Path, description = "webhook id"), DeliveryPaging),
    security(("bearer" = [])),
    responses((status = 200, body = DeliveryPage), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn list_deliveries(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((id, webhook_id)): ApiPath<(Uuid, Uuid)>,
    ApiQuery(q): ApiQuery<DeliveryPaging>,
) -> ApiResult<Json<DeliveryPage>> {
    let campaign = load_campaign(&state, id).await?;
    caller.require_campaign_moderator(campaign.campaign.moderator_id)?;
    let limit = page_limit(q.limit)?;
    let after = q.after.unwrap_or(0);
    if after < 0 {
        return Err(AppError::bad_request("query.after", "paging.after", "after is a log entry id, 0 or more"));
    }
    campaign_webhook(&state, id, webhook_id).await?;
    let entries = state.store.deliveries(webhook_id, after, limit).await?;
    let next_after = (entries.len() as i64 == limit).then(|| entries.last().map(|d| d.id)).flatten();
    Ok(Json(DeliveryPage { deliveries: entries.into_iter().map(DeliveryView::from).collect(), next_after }))
}

async fn campaign_webhook(state: &AppState, id: Uuid, webhook_id: Uuid) -> ApiResult<Webhook> {
    match state.store.webhook(webhook_id).await? {
        Some(w) if w.campaign_id == id => Ok(w),
        _ => Err(AppError::not_found("path.webhook_id", format!("campaign {id} has no webhook {webhook_id}"))),
    }
}

/// Gives a webhook a new signing secret (the campaign's moderator), shown this once: every
/// attempt from now on, retries of earlier outcomes included, is signed with it. A disabled
/// webhook cannot be rotated (409).
#[utoipa::path(post, path = "/v1/campaigns/{id}/webhooks/{webhook_id}/rotate-secret", tag = "webhooks",
    params(("id" = Uuid, Path, description = "campaign id"), ("webhook_id" = Uuid, Path, description = "webhook id")),
    security(("bearer" = [])),
    responses((status = 200, body = RotatedSecret), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn rotate_webhook_secret(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((id, webhook_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<Json<RotatedSecret>> {
    let campaign = load_campaign(&state, id).await?;
    caller.require_campaign_moderator(campaign.campaign.moderator_id)?;
    campaign_webhook(&state, id, webhook_id).await?;
    let secret = new_secret();
    if !state.store.replace_webhook_secret(webhook_id, &secret).await? {
        return Err(AppError::conflict(
            "path.webhook_id",
            "webhook.disabled",
            "this webhook is disabled; register a new one",
        ));
    }
    Ok(Json(RotatedSecret { id: webhook_id, secret }))
}

/// Deletes a webhook (the campaign's moderator): it is disabled, nothing more is sent to it,
/// and its delivery log stays readable. Deleting twice is no error.
#[utoipa::path(delete, path = "/v1/campaigns/{id}/webhooks/{webhook_id}", tag = "webhooks",
    params(("id" = Uuid, Path, description = "campaign id"), ("webhook_id" = Uuid, Path, description = "webhook id")),
    security(("bearer" = [])),
    responses((status = 204, description = "Disabled"), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn delete_webhook(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((id, webhook_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<StatusCode> {
    let campaign = load_campaign(&state, id).await?;
    caller.require_campaign_moderator(campaign.campaign.moderator_id)?;
    campaign_webhook(&state, id, webhook_id).await?;
    state.store.disable_webhook(webhook_id, state.clock.now(), DELETED_REASON).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_addresses_are_checked() {
        let loopback = Allowlist::parse("127.0.0.1").unwrap();
        let none = Allowlist::default();
        assert_eq!(check_url(" http://127.0.0.1:9000/hook ", &loopback).unwrap(), "http://127.0.0.1:9000/hook");
        assert_eq!(check_url("https://forum.example/hook", &none).unwrap(), "https://forum.example/hook");
        for bad in ["", "forum.example/hook", "ftp://forum.example/", "http://u:p@host/", "http://"] {
            let err = check_url(bad, &none).unwrap_err();
            assert_eq!(err.problem().field.as_deref(), Some("body.url"), "{bad}");
        }
        for inside in
            ["http://127.0.0.1:9000/hook", "http://[::1]/", "http://localhost:8080/", "http://169.254.169.254/"]
        {
            let err = check_url(inside, &none).unwrap_err();
            assert_eq!(err.problem().rule.as_deref(), Some("webhook.address"), "{inside}");
        }
    }
}
