//! One error type for the API, answered as `application/problem+json` (RFC 9457).
//!
//! Every 4xx names the field at fault and the rule broken. A 500 is logged with its cause and
//! answered without it.

use adjutant_rules::Refusal;
use adjutant_store::StoreError;

use crate::log::{LogError, PostRefusal, RefusalKind};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// An RFC 9457 problem document, with Adjutant's `field` and `rule` members.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Problem {
    /// A URI naming the kind of problem (`https://adjutant.invalid/problems/<rule>` style tag).
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// The request field at fault: a body path (`body.units[0]`), a header or a query parameter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The rule broken, as Adjutant's documents name it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// When a request breaks several rules at once (an uploaded scenario), every one of them:
    /// `field` and `rule` above then name the whole (`body.text`, `scenario.invalid`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub errors: Option<Vec<ProblemItem>>,
}

/// One of several problems of a request, as a problem's `errors` lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
pub struct ProblemItem {
    /// The request field at fault, e.g. `body.text.map.rail[0].hexes[3]`; a problem of the
    /// text's TOML itself names `body.text` and gives `line:column` in `detail`.
    pub field: String,
    /// The rule broken (`scenario.rail_gap`).
    pub rule: String,
    pub detail: String,
}

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The request is malformed or breaks a rule: 400/404/409/413/415/422 with field and rule.
    #[error("{detail}")]
    Client { status: StatusCode, field: Option<String>, rule: String, detail: String },
    /// Missing or unknown token.
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    /// The request breaks several rules, each listed: 422.
    #[error("{detail}")]
    Problems { field: String, rule: String, detail: String, errors: Vec<ProblemItem> },
    /// A known token that may not do this.
    #[error("forbidden: {detail}")]
    Forbidden { rule: String, detail: String },
    /// A limit or quota is spent: 429 with `Retry-After`, naming what is counted.
    #[error("too many requests: {detail}")]
    TooManyRequests { field: String, rule: String, detail: String, retry_after_secs: u64 },
    /// The database is unreachable.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The database failed (500) or could not be reached (503): answered as `Internal` or
    /// `Unavailable` are, and counted in the metrics.
    #[error("database: {cause}")]
    Database { cause: String, reached: bool },
    /// The request ran past the configured time limit (`request_timeout_secs`) and was stopped;
    /// `writes`: it asked for a change (any method but GET and HEAD), which may have been made.
    #[error("the request ran past the time limit of {limit_secs} s")]
    TimedOut { limit_secs: u64, writes: bool },
    #[error("internal: {0}")]
    Internal(String),
}

impl AppError {
    pub fn bad_request(field: impl Into<String>, rule: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::Client {
            status: StatusCode::BAD_REQUEST,
            field: Some(field.into()),
            rule: rule.into(),
            detail: detail.into(),
        }
    }

    pub fn unprocessable(field: impl Into<String>, rule: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::Client {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            field: Some(field.into()),
            rule: rule.into(),
            detail: detail.into(),
        }
    }

    pub fn not_found(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::Client {
            status: StatusCode::NOT_FOUND,
            field: Some(field.into()),
            rule: "not_found".into(),
            detail: detail.into(),
        }
    }

    pub fn conflict(field: impl Into<String>, rule: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::Client {
            status: StatusCode::CONFLICT,
            field: Some(field.into()),
            rule: rule.into(),
            detail: detail.into(),
        }
    }

    /// The caller's requests per minute are spent.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Self::TooManyRequests {
            field: "Authorization".into(),
            rule: "rate_limit".into(),
            detail: format!("too many requests from this caller; try again in {retry_after_secs} s"),
            retry_after_secs,
        }
    }

    pub fn forbidden(rule: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::Forbidden { rule: rule.into(), detail: detail.into() }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            AppError::Client { status, .. } => *status,
            AppError::Problems { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            AppError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            AppError::Forbidden { .. } => StatusCode::FORBIDDEN,
            AppError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            AppError::Unavailable(_) | AppError::TimedOut { .. } => StatusCode::SERVICE_UNAVAILABLE,
            AppError::Database { reached: false, .. } => StatusCode::SERVICE_UNAVAILABLE,
            AppError::Internal(_) | AppError::Database { reached: true, .. } => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn problem(&self) -> Problem {
        let status = self.status();
        let (field, rule, detail) = match self {
            AppError::Client { field, rule, detail, .. } => (field.clone(), Some(rule.clone()), detail.clone()),
            AppError::Problems { field, rule, detail, .. } => (Some(field.clone()), Some(rule.clone()), detail.clone()),
            AppError::Unauthorized(detail) => {
                (Some("Authorization".to_owned()), Some("auth.token".to_owned()), detail.clone())
            }
            AppError::Forbidden { rule, detail } => {
                (Some("Authorization".to_owned()), Some(rule.clone()), detail.clone())
            }
            AppError::TooManyRequests { field, rule, detail, .. } => {
                (Some(field.clone()), Some(rule.clone()), detail.clone())
            }
            AppError::Unavailable(_) | AppError::Database { reached: false, .. } => (
                None,
                Some("service.unavailable".to_owned()),
                "the service cannot reach its database right now; try again shortly".to_owned(),
            ),
            AppError::TimedOut { limit_secs, writes } => (
                None,
                Some("request.time_limit".to_owned()),
                format!(
                    "the request ran past the server's time limit of {limit_secs} s and was stopped; try again later{}",
                    if *writes {
                        " (a post may still have been stored: send it again with the same Idempotency-Key to get its answer)"
                    } else {
                        ""
                    }
                ),
            ),
            AppError::Internal(_) | AppError::Database { reached: true, .. } => {
                (None, None, "an internal error occurred; it has been logged".to_owned())
            }
        };
        Problem {
            kind: format!("https://adjutant.invalid/problems/{}", rule.as_deref().unwrap_or("internal")),
            title: status.canonical_reason().unwrap_or("Error").to_owned(),
            status: status.as_u16(),
            detail,
            field,
            rule,
            errors: match self {
                AppError::Problems { errors, .. } => Some(errors.clone()),
                _ => None,
            },
        }
    }
}

impl From<Refusal> for AppError {
    fn from(r: Refusal) -> Self {
        AppError::unprocessable(r.field, r.rule, r.detail)
    }
}

impl From<StoreError> for AppError {
    fn from(err: StoreError) -> Self {
        match err {
            // A declined post comes back as a `LogError`; one reaching here was never told why.
            StoreError::Declined => AppError::Internal(err.to_string()),
            StoreError::KeyReused => AppError::Client {
                status: StatusCode::UNPROCESSABLE_ENTITY,
                field: Some("Idempotency-Key".into()),
                rule: "idempotency.key_reused".into(),
                detail: "this Idempotency-Key was already used with a different request; use a new key".into(),
            },
            // The database's own words name its tables and constraints: logged, never answered.
            StoreError::Conflict(what) => {
                tracing::debug!(%what, "uniqueness conflict");
                AppError::conflict(
                    "body",
                    "store.unique",
                    "this conflicts with something already stored; change it and try again",
                )
            }
            StoreError::Unavailable(cause) => AppError::Database { cause, reached: false },
            StoreError::Database(cause) => AppError::Database { cause, reached: true },
            // A spent quota comes back as a `LogError` with its refusal; one reaching here was not.
            StoreError::QuotaSpent(_) => AppError::Internal(err.to_string()),
        }
    }
}

/// The log's answers, at the edge: a post's field `f` is the request's `body.f`.
impl From<LogError> for AppError {
    fn from(err: LogError) -> Self {
        match err {
            LogError::Refused(PostRefusal { kind, field, rule, detail }) => {
                let field = format!("body.{field}");
                match kind {
                    RefusalKind::Invalid => AppError::unprocessable(field, rule, detail),
                    RefusalKind::Forbidden => AppError::Forbidden { rule, detail },
                    RefusalKind::Conflict => AppError::conflict(field, rule, detail),
                    RefusalKind::QuotaSpent { retry_after_secs } => {
                        AppError::TooManyRequests { field, rule, detail, retry_after_secs }
                    }
                }
            }
            LogError::Busy => AppError::Unavailable(err.to_string()),
            LogError::Store(e) => e.into(),
            LogError::Broken(what) => AppError::Internal(what),
        }
    }
}

/// A campaign setting refused, at the edge: `prefix` says where the request holds the settings
/// (`body.settings.`, `query.`).
impl crate::campaign::SettingRefused {
    pub fn at(self, prefix: &str, status: StatusCode) -> AppError {
        AppError::Client {
            status,
            field: Some(format!("{prefix}{}", self.setting)),
            rule: self.rule.into(),
            detail: self.detail,
        }
    }
}

/// The media type of every error answer.
pub const PROBLEM_JSON: &str = "application/problem+json";

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        match &self {
            AppError::Internal(cause) => tracing::error!(%cause, "internal error"),
            AppError::Unavailable(cause) => tracing::warn!(%cause, "service unavailable"),
            AppError::TimedOut { limit_secs, .. } => tracing::warn!(limit_secs, "a request ran past the time limit"),
            AppError::Database { cause, reached: true } => tracing::error!(%cause, "database error"),
            AppError::Database { cause, reached: false } => tracing::warn!(%cause, "database unreachable"),
            _ => tracing::debug!(error = %self, "request refused"),
        }
        let problem = self.problem();
        let body = serde_json::to_vec(&problem).unwrap_or_default();
        let mut response = (self.status(), body).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if let AppError::TooManyRequests { retry_after_secs, rule, .. } = &self {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
            response.extensions_mut().insert(crate::monitoring::Limited(rule.clone()));
        } else if matches!(self, AppError::Database { .. }) {
            response.extensions_mut().insert(crate::monitoring::DatabaseFailed);
        }
        if matches!(self, AppError::Unauthorized(_)) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

pub type ApiResult<T> = Result<T, AppError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conflict_never_carries_the_database_s_own_words() {
        let said = "UNIQUE constraint failed: principals.token_hash";
        let problem = AppError::from(StoreError::Conflict(said.into())).problem();
        assert_eq!(problem.status, 409);
        assert_eq!(problem.rule.as_deref(), Some("store.unique"));
        assert!(!problem.detail.contains("principals"), "{}", problem.detail);
        assert!(!serde_json::to_string(&problem).unwrap().contains("token_hash"));
    }

    #[test]
    fn a_write_past_the_time_limit_says_how_to_learn_its_fate() {
        let write = AppError::TimedOut { limit_secs: 10, writes: true }.problem();
        let read = AppError::TimedOut { limit_secs: 10, writes: false }.problem();
        for problem in [&write, &read] {
            assert_eq!((problem.status, problem.rule.as_deref()), (503, Some("request.time_limit")));
            assert!(problem.detail.contains("time limit of 10 s"), "{}", problem.detail);
        }
        assert!(write.detail.contains("same Idempotency-Key"), "{}", write.detail);
        assert!(!read.detail.contains("Idempotency-Key"), "{}", read.detail);
    }
}
