//! Principals: who holds a token, and its revocation.

use adjutant_store::row::{self, Encoding};
use adjutant_store::{NewPrincipal, Principal, PrincipalKind, Result};
use chrono::{DateTime, Utc};
use sqlx::PgExecutor;
use uuid::Uuid;

use crate::db::{map_err, Db};

pub(crate) async fn create_principal(db: impl PgExecutor<'_>, new: NewPrincipal) -> Result<Principal> {
    let p = &new.principal;
    sqlx::query(
        "INSERT INTO principals (id, kind, name, token_hash, campaign_id, side, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(p.id)
    .bind(p.kind.as_str())
    .bind(&p.name)
    .bind(&new.token_hash[..])
    .bind(p.campaign_id)
    .bind(&p.side)
    .bind(p.created_by)
    .bind(p.created_at)
    .execute(db)
    .await
    .map_err(map_err)?;
    Ok(new.principal)
}

pub(crate) async fn principal_by_token_hash(
    db: impl PgExecutor<'_>,
    token_hash: &[u8; 32],
) -> Result<Option<Principal>> {
    let row = sqlx::query("SELECT * FROM principals WHERE token_hash = $1 AND revoked_at IS NULL")
        .bind(&token_hash[..])
        .fetch_optional(db)
        .await
        .map_err(map_err)?;
    Db::decode_optional(row, row::principal)
}

pub(crate) async fn principal(db: impl PgExecutor<'_>, id: Uuid) -> Result<Option<(Principal, Option<DateTime<Utc>>)>> {
    let row =
        sqlx::query("SELECT * FROM principals WHERE id = $1").bind(id).fetch_optional(db).await.map_err(map_err)?;
    Db::decode_optional(row, row::principal_and_revocation)
}

pub(crate) async fn campaign_principals(
    db: impl PgExecutor<'_>,
    campaign_id: Uuid,
    kind: PrincipalKind,
    limit: i64,
) -> Result<Vec<(Principal, Option<DateTime<Utc>>)>> {
    let rows =
        sqlx::query("SELECT * FROM principals WHERE campaign_id = $1 AND kind = $2 ORDER BY created_at, id LIMIT $3")
            .bind(campaign_id)
            .bind(kind.as_str())
            .bind(limit)
            .fetch_all(db)
            .await
            .map_err(map_err)?;
    Db::decode_all(&rows, row::principal_and_revocation)
}

pub(crate) async fn revoke_principal(db: impl PgExecutor<'_>, id: Uuid, at: DateTime<Utc>) -> Result<bool> {
    let done = sqlx::query("UPDATE principals SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2")
        .bind(at)
        .bind(id)
        .execute(db)
        .await
        .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}

pub(crate) async fn replace_token(db: impl PgExecutor<'_>, id: Uuid, token_hash: &[u8; 32]) -> Result<bool> {
    let done = sqlx::query("UPDATE principals SET token_hash = $1 WHERE id = $2 AND revoked_at IS NULL")
        .bind(&token_hash[..])
        .bind(id)
        .execute(db)
        .await
        .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}
