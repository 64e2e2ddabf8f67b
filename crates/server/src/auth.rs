//! Tokens and who holds them.
//!
//! Tokens are 256 random bits, shown once when issued and stored only as their SHA-256. The
//! operator token comes from `ADJUTANT_ADMIN_TOKEN` and is compared in constant time.

use std::sync::Arc;

use adjutant_store::{Principal, PrincipalKind};
use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::HeaderMap;
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use crate::error::AppError;
use crate::AppState;

/// A secret that never prints.
#[derive(Clone)]
pub struct Secret(Arc<str>);

impl Secret {
    pub fn new(text: impl Into<Arc<str>>) -> Self {
        Self(text.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// A new token: `adj_` and 64 hex digits (256 bits from the operating system).
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("adj_{}", hex::encode(bytes))
}

pub fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Who is calling.
#[derive(Debug, Clone)]
pub enum Caller {
    Anonymous,
    Operator,
    Principal(Principal),
}

impl Caller {
    pub fn require_operator(&self) -> Result<(), AppError> {
        match self {
            Caller::Operator => Ok(()),
            Caller::Anonymous => Err(AppError::Unauthorized("this needs the operator token".into())),
            _ => Err(AppError::forbidden("auth.operator_only", "only the operator can do this")),
        }
    }

    /// A moderator (any), returning their id.
    pub fn require_moderator(&self) -> Result<&Principal, AppError> {
        match self {
            Caller::Principal(p) if p.kind == PrincipalKind::Moderator => Ok(p),
            Caller::Anonymous => Err(AppError::Unauthorized("this needs a moderator token".into())),
            _ => Err(AppError::forbidden("auth.moderator_only", "only a moderator can do this")),
        }
    }

    /// The moderator who owns `campaign_moderator`'s campaign.
    pub fn require_campaign_moderator(&self, campaign_moderator: Uuid) -> Result<&Principal, AppError> {
        let p = self.require_moderator()?;
        if p.id != campaign_moderator {
            return Err(AppError::forbidden(
                "auth.campaign_moderator",
                "only the campaign's own moderator can do this",
            ));
        }
        Ok(p)
    }

    pub fn principal(&self) -> Option<&Principal> {
        match self {
            Caller::Principal(p) => Some(p),
            _ => None,
        }
    }
}

/// Finds who holds the bearer token of `headers`, with the token's hash: the operator, or a
/// principal whose token is not revoked. The store keeps the principals it has looked up and
/// forgets them at every revocation or new token, on every replica, so a revocation holds at
/// once everywhere. A malformed header or an unknown token is 401.
pub async fn authenticate(headers: &HeaderMap, state: &AppState) -> Result<(Caller, [u8; 32]), AppError> {
    let token = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty() && t.len() <= 512)
        .ok_or_else(|| AppError::Unauthorized("send the token as `Authorization: Bearer <token>`".into()))?;
    let hash = token_hash(token);
    if let Some(admin) = &state.admin_token_hash {
        if bool::from(hash.ct_eq(admin)) {
            return Ok((Caller::Operator, hash));
        }
    }
    match state.store.principal_by_token_hash(&hash).await? {
        Some(p) => Ok((Caller::Principal(p), hash)),
        None => Err(AppError::Unauthorized("the token is not known, or was revoked".into())),
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        // The service's guard has authenticated the request already (see `rate_limit::guard`).
        Ok(match parts.extensions.get::<crate::rate_limit::Admitted>() {
            Some(admitted) => admitted.caller.clone(),
            None if parts.headers.contains_key(AUTHORIZATION) => authenticate(&parts.headers, state).await?.0,
            None => Caller::Anonymous,
        })
    }
}
