//! How players are reached outside Adjutant.

use adjutant_store::row::{self, Encoding};
use adjutant_store::{Contact, Result};
use chrono::{DateTime, Utc};
use sqlx::PgExecutor;
use uuid::Uuid;

use crate::db::{map_err, Db};

pub(crate) async fn set_contact(
    db: impl PgExecutor<'_>,
    principal_id: Uuid,
    contact: &Contact,
    at: DateTime<Utc>,
) -> Result<bool> {
    let done = sqlx::query(
        "INSERT INTO player_contacts (principal_id, forum_handle, discord_user_id, email, updated_at)
         SELECT id, $1, $2, $3, $4 FROM principals WHERE id = $5
         ON CONFLICT (principal_id) DO UPDATE SET forum_handle = excluded.forum_handle,
             discord_user_id = excluded.discord_user_id, email = excluded.email, updated_at = excluded.updated_at",
    )
    .bind(&contact.forum_handle)
    .bind(&contact.discord_user_id)
    .bind(&contact.email)
    .bind(at)
    .bind(principal_id)
    .execute(db)
    .await
    .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}

pub(crate) async fn campaign_contacts(db: impl PgExecutor<'_>, campaign_id: Uuid) -> Result<Vec<(Uuid, Contact)>> {
    let rows = sqlx::query(
        "SELECT c.principal_id, c.forum_handle, c.discord_user_id, c.email FROM player_contacts c
         JOIN principals p ON p.id = c.principal_id WHERE p.campaign_id = $1 ORDER BY p.created_at, p.id",
    )
    .bind(campaign_id)
    .fetch_all(db)
    .await
    .map_err(map_err)?;
    Db::decode_all(&rows, row::contact)
}
