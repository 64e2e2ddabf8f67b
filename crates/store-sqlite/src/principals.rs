//! Principals: who holds a token, and its revocation.

use adjutant_store::row::{self, Encoding};
use adjutant_store::{NewPrincipal, Principal, PrincipalKind, Result};
use chrono::{DateTime, Utc};
use sqlx::SqliteExecutor;
use uuid::Uuid;

use crate::db::{map_err, Db};

pub(crate) async fn create_principal(db: impl SqliteExecutor<'_>, new: NewPrincipal) -> Result<Principal> {
    let p = &new.principal;
    sqlx::query(
        "INSERT INTO principals (id, kind, name, token_hash, campaign_id, side, created_by, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(p.id.to_string())
    .bind(p.kind.as_str())
    .bind(&p.name)
    .bind(&new.token_hash[..])
    .bind(p.campaign_id.map(|id| id.to_string()))
    .bind(&p.side)
    .bind(p.created_by.map(|id| id.to_string()))
    .bind(p.created_at.timestamp_millis())
    .execute(db)
    .await
    .map_err(map_err)?;
    Ok(new.principal)
}

pub(crate) async fn principal_by_token_hash(
    db: impl SqliteExecutor<'_>,
    token_hash: &[u8; 32],
) -> Result<Option<Principal>> {
    let row = sqlx::query("SELECT * FROM principals WHERE token_hash = ? AND revoked_at IS NULL")
        .bind(&token_hash[..])
        .fetch_optional(db)
        .await
        .map_err(map_err)?;
    Db::decode_optional(row, row::principal)
}

pub(crate) async fn principal(
    db: impl SqliteExecutor<'_>,
    id: Uuid,
) -> Result<Option<(Principal, Option<DateTime<Utc>>)>> {
    let row = sqlx::query("SELECT * FROM principals WHERE id = ?")
        .bind(id.to_string())
        .fetch_optional(db)
        .await
        .map_err(map_err)?;
    Db::decode_optional(row, row::principal_and_revocation)
}

pub(crate) async fn campaign_principals(
    db: impl SqliteExecutor<'_>,
    campaign_id: Uuid,
    kind: PrincipalKind,
    limit: i64,
) -> Result<Vec<(Principal, Option<DateTime<Utc>>)>> {
    let rows =
        sqlx::query("SELECT * FROM principals WHERE campaign_id = ? AND kind = ? ORDER BY created_at, id LIMIT ?")
            .bind(campaign_id.to_string())
            .bind(kind.as_str())
            .bind(limit)
            .fetch_all(db)
            .await
            .map_err(map_err)?;
    Db::decode_all(&rows, row::principal_and_revocation)
}

pub(crate) async fn revoke_principal(db: impl SqliteExecutor<'_>, id: Uuid, at: DateTime<Utc>) -> Result<bool> {
    let done = sqlx::query("UPDATE principals SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?")
        .bind(at.timestamp_millis())
        .bind(id.to_string())
        .execute(db)
        .await
        .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}

pub(crate) async fn replace_token(db: impl SqliteExecutor<'_>, id: Uuid, token_hash: &[u8; 32]) -> Result<bool> {
    let done = sqlx::query("UPDATE principals SET token_hash = ? WHERE id = ? AND revoked_at IS NULL")
        .bind(&token_hash[..])
        .bind(id.to_string())
        .execute(db)
        .await
        .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}
