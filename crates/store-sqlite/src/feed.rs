//! The bots' feed: outcomes a bot has not acknowledged, and its acknowledgements.

use adjutant_store::row::{self, Encoding};
use adjutant_store::{Acknowledgement, Outcome, Principal, Result};
use sqlx::{SqliteExecutor, SqlitePool};

use crate::db::{map_err, Db};

pub(crate) async fn pending_outcomes(db: impl SqliteExecutor<'_>, bot: &Principal, limit: i64) -> Result<Vec<Outcome>> {
    let rows = sqlx::query(
        "SELECT o.id, o.campaign_id, o.position, o.seq, o.kind, o.data
         FROM outcomes o JOIN campaigns c ON c.id = o.campaign_id
         WHERE (c.id = ?1 OR (?1 IS NULL AND c.moderator_id = ?2))
           AND NOT EXISTS (SELECT 1 FROM acknowledgements a WHERE a.bot_id = ?3 AND a.outcome_id = o.id)
         ORDER BY c.ord, o.position LIMIT ?4",
    )
    .bind(bot.campaign_id.map(|id| id.to_string()))
    .bind(bot.created_by.map(|id| id.to_string()))
    .bind(bot.id.to_string())
    .bind(limit)
    .fetch_all(db)
    .await
    .map_err(map_err)?;
    Db::decode_all(&rows, row::outcome)
}

/// Records an acknowledgement unless the bot acknowledged the outcome before, and answers the
/// one recorded.
pub(crate) async fn acknowledge(writer: &SqlitePool, ack: Acknowledgement) -> Result<Acknowledgement> {
    let mut tx = writer.begin_with("BEGIN IMMEDIATE").await.map_err(map_err)?;
    sqlx::query(
        "INSERT INTO acknowledgements (bot_id, outcome_id, campaign_id, forum_post_id, acked_at)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT (bot_id, outcome_id) DO NOTHING",
    )
    .bind(ack.bot_id.to_string())
    .bind(ack.outcome_id.to_string())
    .bind(ack.campaign_id.to_string())
    .bind(&ack.forum_post_id)
    .bind(ack.acked_at.timestamp_millis())
    .execute(&mut *tx)
    .await
    .map_err(map_err)?;
    let row = sqlx::query("SELECT * FROM acknowledgements WHERE bot_id = ? AND outcome_id = ?")
        .bind(ack.bot_id.to_string())
        .bind(ack.outcome_id.to_string())
        .fetch_one(&mut *tx)
        .await
        .map_err(map_err)?;
    tx.commit().await.map_err(map_err)?;
    Db::decode(&row, row::acknowledgement)
}
