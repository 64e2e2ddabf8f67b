//! Campaigns, and the chain secrets of sealed-delay campaigns.

use adjutant_store::row::{self, Encoding};
use adjutant_store::{Campaign, Result};
use sqlx::{PgExecutor, PgPool};
use uuid::Uuid;

use crate::db::{map_err, Db};

pub(crate) async fn create_campaign(db: impl PgExecutor<'_>, c: Campaign) -> Result<Campaign> {
    sqlx::query(
        "INSERT INTO campaigns (id, name, moderator_id, mode, scenario, scenario_text, ruleset, settings, created_at, chain_genesis)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(c.id)
    .bind(&c.name)
    .bind(c.moderator_id)
    .bind(&c.mode)
    .bind(&c.scenario)
    .bind(&c.scenario_text)
    .bind(&c.ruleset)
    .bind(&c.settings)
    .bind(c.created_at)
    .bind(&c.chain_genesis)
    .execute(db)
    .await
    .map_err(map_err)?;
    Ok(c)
}

pub(crate) async fn campaign(db: impl PgExecutor<'_>, id: Uuid) -> Result<Option<Campaign>> {
    let row =
        sqlx::query("SELECT * FROM campaigns WHERE id = $1").bind(id).fetch_optional(db).await.map_err(map_err)?;
    Db::decode_optional(row, row::campaign)
}

pub(crate) async fn campaigns(
    db: impl PgExecutor<'_>,
    moderator: Option<Uuid>,
    after: Option<Uuid>,
    limit: i64,
) -> Result<Vec<Campaign>> {
    let query = match moderator {
        None => sqlx::query(
            "SELECT * FROM campaigns
             WHERE ord > COALESCE((SELECT ord FROM campaigns WHERE id = $1), 0)
             ORDER BY ord LIMIT $2",
        )
        .bind(after),
        Some(moderator) => sqlx::query(
            "SELECT * FROM campaigns
             WHERE moderator_id = $1 AND ord > COALESCE((SELECT ord FROM campaigns WHERE id = $2), 0)
             ORDER BY ord LIMIT $3",
        )
        .bind(moderator)
        .bind(after),
    };
    let rows = query.bind(limit).fetch_all(db).await.map_err(map_err)?;
    Db::decode_all(&rows, row::campaign)
}

/// Keeps the first secret given for a chain and answers the one kept.
pub(crate) async fn keep_campaign_secret(pool: &PgPool, campaign_id: Uuid, chain: i64, secret: &str) -> Result<String> {
    sqlx::query("INSERT INTO campaign_secrets (campaign_id, chain, secret) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING")
        .bind(campaign_id)
        .bind(chain)
        .bind(secret)
        .execute(pool)
        .await
        .map_err(map_err)?;
    sqlx::query_scalar("SELECT secret FROM campaign_secrets WHERE campaign_id = $1 AND chain = $2")
        .bind(campaign_id)
        .bind(chain)
        .fetch_one(pool)
        .await
        .map_err(map_err)
}

pub(crate) async fn campaign_secrets(db: impl PgExecutor<'_>, campaign_id: Uuid) -> Result<Vec<(i64, String)>> {
    sqlx::query_as("SELECT chain, secret FROM campaign_secrets WHERE campaign_id = $1 ORDER BY chain")
        .bind(campaign_id)
        .fetch_all(db)
        .await
        .map_err(map_err)
}
