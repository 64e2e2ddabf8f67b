//! Webhooks, their outbox of deliveries to make, and the log of attempts made.

use adjutant_store::delivery::{self, DeliverySteps};
use adjutant_store::row::{self, Encoding};
use adjutant_store::{
    ClaimedDelivery, DeliveryAttempt, DeliveryLogEntry, DeliveryVerdict, Result, Webhook, PER_WEBHOOK_IN_FLIGHT,
};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::{Sqlite, SqliteExecutor, SqlitePool, Transaction};
use uuid::Uuid;

use crate::db::{map_err, Db};

pub(crate) async fn create_webhook(db: impl SqliteExecutor<'_>, w: Webhook) -> Result<Webhook> {
    sqlx::query(
        "INSERT INTO webhooks (id, campaign_id, url, secret, created_by, created_at, disabled_at, disabled_reason)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(w.id.to_string())
    .bind(w.campaign_id.to_string())
    .bind(&w.url)
    .bind(&w.secret)
    .bind(w.created_by.to_string())
    .bind(w.created_at.timestamp_millis())
    .bind(w.disabled_at.map(|t| t.timestamp_millis()))
    .bind(&w.disabled_reason)
    .execute(db)
    .await
    .map_err(map_err)?;
    Ok(w)
}

pub(crate) async fn webhooks(db: impl SqliteExecutor<'_>, campaign_id: Uuid) -> Result<Vec<Webhook>> {
    let rows = sqlx::query("SELECT * FROM webhooks WHERE campaign_id = ? ORDER BY created_at, id")
        .bind(campaign_id.to_string())
        .fetch_all(db)
        .await
        .map_err(map_err)?;
    Db::decode_all(&rows, row::webhook)
}

pub(crate) async fn webhook(db: impl SqliteExecutor<'_>, id: Uuid) -> Result<Option<Webhook>> {
    let row = sqlx::query("SELECT * FROM webhooks WHERE id = ?")
        .bind(id.to_string())
        .fetch_optional(db)
        .await
        .map_err(map_err)?;
    Db::decode_optional(row, row::webhook)
}

pub(crate) async fn replace_webhook_secret(db: impl SqliteExecutor<'_>, id: Uuid, secret: &str) -> Result<bool> {
    let done = sqlx::query("UPDATE webhooks SET secret = ? WHERE id = ? AND disabled_at IS NULL")
        .bind(secret)
        .bind(id.to_string())
        .execute(db)
        .await
        .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}

pub(crate) async fn disable_webhook(
    db: impl SqliteExecutor<'_>,
    id: Uuid,
    at: DateTime<Utc>,
    reason: &str,
) -> Result<bool> {
    let done =
        sqlx::query("UPDATE webhooks SET disabled_at = ?, disabled_reason = ? WHERE id = ? AND disabled_at IS NULL")
            .bind(at.timestamp_millis())
            .bind(reason)
            .bind(id.to_string())
            .execute(db)
            .await
            .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}

/// The single writer serialises claims: the lease keeps a row from being claimed again while
/// its attempt runs.
pub(crate) async fn claim_deliveries(
    readers: &SqlitePool,
    writer: &SqlitePool,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<ClaimedDelivery>> {
    const DUE: &str = "FROM webhook_outbox o JOIN webhooks w ON w.id = o.webhook_id
         WHERE o.delivered_at IS NULL AND o.gone = 0 AND o.given_up_at IS NULL AND w.disabled_at IS NULL
           AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= ?1)
           AND (o.claimed_until IS NULL OR o.claimed_until <= ?1)";
    let now = now.timestamp_millis();
    // A look on a reader first: polling an empty outbox never takes the write lock from posts.
    let any: bool = sqlx::query_scalar(&format!("SELECT EXISTS (SELECT 1 {DUE})"))
        .bind(now)
        .fetch_one(readers)
        .await
        .map_err(map_err)?;
    if !any {
        return Ok(Vec::new());
    }
    let mut tx = writer.begin_with("BEGIN IMMEDIATE").await.map_err(map_err)?;
    // At most PER_WEBHOOK_IN_FLIGHT rows of a webhook in flight, counting those claimed now.
    let rows = sqlx::query(&format!(
        "SELECT id, webhook_id, outcome_id, payload, attempts, url, secret FROM (
           SELECT o.id, o.webhook_id, o.outcome_id, o.payload, o.attempts, w.url, w.secret,
                  COALESCE(o.next_attempt_at, 0) AS due,
                  ROW_NUMBER() OVER (PARTITION BY o.webhook_id ORDER BY COALESCE(o.next_attempt_at, 0), o.id) AS nth,
                  (SELECT COUNT(*) FROM webhook_outbox c
                    WHERE c.webhook_id = o.webhook_id AND c.claimed_until > ?1) AS busy
           {DUE})
         WHERE nth + busy <= ?3
         ORDER BY due, id
         LIMIT ?2"
    ))
    .bind(now)
    .bind(limit)
    .bind(PER_WEBHOOK_IN_FLIGHT)
    .fetch_all(&mut *tx)
    .await
    .map_err(map_err)?;
    let claimed = Db::decode_all(&rows, row::claimed_delivery)?;
    for delivery in &claimed {
        sqlx::query("UPDATE webhook_outbox SET claimed_until = ?, attempts = attempts + 1 WHERE id = ?")
            .bind(lease_until.timestamp_millis())
            .bind(delivery.outbox_id)
            .execute(&mut *tx)
            .await
            .map_err(map_err)?;
    }
    tx.commit().await.map_err(map_err)?;
    Ok(claimed)
}

pub(crate) async fn finish_delivery(
    writer: &SqlitePool,
    attempt: DeliveryAttempt,
    verdict: DeliveryVerdict,
) -> Result<()> {
    let tx = writer.begin_with("BEGIN IMMEDIATE").await.map_err(map_err)?;
    delivery::finish_delivery(Settle(tx), attempt, verdict).await
}

/// A delivery's settlement, inside a `BEGIN IMMEDIATE` transaction.
struct Settle(Transaction<'static, Sqlite>);

#[async_trait]
impl DeliverySteps for Settle {
    async fn log_attempt(&mut self, a: &DeliveryAttempt) -> Result<()> {
        sqlx::query(
            "INSERT INTO webhook_deliveries (outbox_id, attempt, attempted_at, status_code, error, duration_ms)
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(a.outbox_id)
        .bind(a.attempt)
        .bind(a.attempted_at.timestamp_millis())
        .bind(a.status_code)
        .bind(&a.error)
        .bind(a.duration_ms)
        .execute(&mut *self.0)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn delivered(&mut self, outbox_id: i64, at: DateTime<Utc>) -> Result<()> {
        sqlx::query("UPDATE webhook_outbox SET delivered_at = ?, claimed_until = NULL WHERE id = ?")
            .bind(at.timestamp_millis())
            .bind(outbox_id)
            .execute(&mut *self.0)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn gone(&mut self, outbox_id: i64) -> Result<()> {
        sqlx::query("UPDATE webhook_outbox SET gone = 1, claimed_until = NULL WHERE id = ?")
            .bind(outbox_id)
            .execute(&mut *self.0)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn retry_at(&mut self, outbox_id: i64, next: DateTime<Utc>) -> Result<()> {
        sqlx::query("UPDATE webhook_outbox SET next_attempt_at = ?, claimed_until = NULL WHERE id = ?")
            .bind(next.timestamp_millis())
            .bind(outbox_id)
            .execute(&mut *self.0)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn given_up(&mut self, outbox_id: i64, at: DateTime<Utc>) -> Result<()> {
        sqlx::query("UPDATE webhook_outbox SET given_up_at = ?, claimed_until = NULL WHERE id = ?")
            .bind(at.timestamp_millis())
            .bind(outbox_id)
            .execute(&mut *self.0)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn disable_webhook(&mut self, outbox_id: i64, at: DateTime<Utc>, reason: &str) -> Result<()> {
        sqlx::query(
            "UPDATE webhooks SET disabled_at = ?, disabled_reason = ?
             WHERE id = (SELECT webhook_id FROM webhook_outbox WHERE id = ?) AND disabled_at IS NULL",
        )
        .bind(at.timestamp_millis())
        .bind(reason)
        .bind(outbox_id)
        .execute(&mut *self.0)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn commit(self) -> Result<()> {
        self.0.commit().await.map_err(map_err)
    }
}

pub(crate) async fn deliveries(
    db: impl SqliteExecutor<'_>,
    webhook_id: Uuid,
    after: i64,
    limit: i64,
) -> Result<Vec<DeliveryLogEntry>> {
    let rows = sqlx::query(
        "SELECT d.id, d.outbox_id, o.outcome_id, d.attempt, d.attempted_at, d.status_code, d.error, d.duration_ms
         FROM webhook_deliveries d JOIN webhook_outbox o ON o.id = d.outbox_id
         WHERE o.webhook_id = ? AND d.id > ? ORDER BY d.id LIMIT ?",
    )
    .bind(webhook_id.to_string())
    .bind(after)
    .bind(limit)
    .fetch_all(db)
    .await
    .map_err(map_err)?;
    Db::decode_all(&rows, row::delivery_log_entry)
}
