//! Campaigns, and the chain secrets of sealed-delay campaigns.

use adjutant_store::row::{self, Encoding};
use adjutant_store::{Campaign, Result};
use sqlx::{SqliteExecutor, SqlitePool};
use uuid::Uuid;

use crate::db::{map_err, Db};

pub(crate) async fn create_campaign(db: impl SqliteExecutor<'_>, c: Campaign) -> Result<Campaign> {
    sqlx::query(
        "INSERT INTO campaigns (id, name, moderator_id, mode, scenario, scenario_text, ruleset, settings, created_at, chain_genesis)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(c.id.to_string())
    .bind(&c.name)
    .bind(c.moderator_id.to_string())
    .bind(&c.mode)
    .bind(&c.scenario)
    .bind(&c.scenario_text)
    .bind(&c.ruleset)
    .bind(&c.settings)
    .bind(c.created_at.timestamp_millis())
    .bind(&c.chain_genesis)
    .execute(db)
    .await
    .map_err(map_err)?;
    Ok(c)
}

pub(crate) async fn campaign(db: impl SqliteExecutor<'_>, id: Uuid) -> Result<Option<Campaign>> {
    let row = sqlx::query("SELECT * FROM campaigns WHERE id = ?")
        .bind(id.to_string())
        .fetch_optional(db)
        .await
        .map_err(map_err)?;
    Db::decode_optional(row, row::campaign)
}

pub(crate) async fn campaigns(
    db: impl SqliteExecutor<'_>,
    moderator: Option<Uuid>,
    after: Option<Uuid>,
    limit: i64,
) -> Result<Vec<Campaign>> {
    let after = after.map(|id| id.to_string());
    let query = match moderator {
        None => sqlx::query(
            "SELECT * FROM campaigns
             WHERE ord > COALESCE((SELECT ord FROM campaigns WHERE id = ?), 0)
             ORDER BY ord LIMIT ?",
        )
        .bind(after),
        Some(moderator) => sqlx::query(
            "SELECT * FROM campaigns
             WHERE moderator_id = ? AND ord > COALESCE((SELECT ord FROM campaigns WHERE id = ?), 0)
             ORDER BY ord LIMIT ?",
        )
        .bind(moderator.to_string())
        .bind(after),
    };
    let rows = query.bind(limit).fetch_all(db).await.map_err(map_err)?;
    Db::decode_all(&rows, row::campaign)
}

/// Keeps the first secret given for a chain and answers the one kept.
pub(crate) async fn keep_campaign_secret(
    writer: &SqlitePool,
    campaign_id: Uuid,
    chain: i64,
    secret: &str,
) -> Result<String> {
    sqlx::query("INSERT INTO campaign_secrets (campaign_id, chain, secret) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
        .bind(campaign_id.to_string())
        .bind(chain)
        .bind(secret)
        .execute(writer)
        .await
        .map_err(map_err)?;
    sqlx::query_scalar("SELECT secret FROM campaign_secrets WHERE campaign_id = ? AND chain = ?")
        .bind(campaign_id.to_string())
        .bind(chain)
        .fetch_one(writer)
        .await
        .map_err(map_err)
}

pub(crate) async fn campaign_secrets(db: impl SqliteExecutor<'_>, campaign_id: Uuid) -> Result<Vec<(i64, String)>> {
    sqlx::query_as("SELECT chain, secret FROM campaign_secrets WHERE campaign_id = ? ORDER BY chain")
        .bind(campaign_id.to_string())
        .fetch_all(db)
        .await
        .map_err(map_err)
}
