//! Webhooks, their outbox of deliveries to make, and the log of attempts made.

use adjutant_store::delivery::{self, DeliverySteps};
use adjutant_store::row::{self, Encoding};
use adjutant_store::{
    ClaimedDelivery, DeliveryAttempt, DeliveryLogEntry, DeliveryVerdict, Result, Webhook, PER_WEBHOOK_IN_FLIGHT,
};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, PgPool, Postgres, Transaction};
use uuid::Uuid;

use crate::db::{map_err, Db};

pub(crate) async fn create_webhook(db: impl PgExecutor<'_>, w: Webhook) -> Result<Webhook> {
    sqlx::query(
        "INSERT INTO webhooks (id, campaign_id, url, secret, created_by, created_at, disabled_at, disabled_reason)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(w.id)
    .bind(w.campaign_id)
    .bind(&w.url)
    .bind(&w.secret)
    .bind(w.created_by)
    .bind(w.created_at)
    .bind(w.disabled_at)
    .bind(&w.disabled_reason)
    .execute(db)
    .await
    .map_err(map_err)?;
    Ok(w)
}

pub(crate) async fn webhooks(db: impl PgExecutor<'_>, campaign_id: Uuid) -> Result<Vec<Webhook>> {
    let rows = sqlx::query("SELECT * FROM webhooks WHERE campaign_id = $1 ORDER BY created_at, id")
        .bind(campaign_id)
        .fetch_all(db)
        .await
        .map_err(map_err)?;
    Db::decode_all(&rows, row::webhook)
}

pub(crate) async fn webhook(db: impl PgExecutor<'_>, id: Uuid) -> Result<Option<Webhook>> {
    let row = sqlx::query("SELECT * FROM webhooks WHERE id = $1").bind(id).fetch_optional(db).await.map_err(map_err)?;
    Db::decode_optional(row, row::webhook)
}

pub(crate) async fn replace_webhook_secret(db: impl PgExecutor<'_>, id: Uuid, secret: &str) -> Result<bool> {
    let done = sqlx::query("UPDATE webhooks SET secret = $1 WHERE id = $2 AND disabled_at IS NULL")
        .bind(secret)
        .bind(id)
        .execute(db)
        .await
        .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}

pub(crate) async fn disable_webhook(
    db: impl PgExecutor<'_>,
    id: Uuid,
    at: DateTime<Utc>,
    reason: &str,
) -> Result<bool> {
    let done =
        sqlx::query("UPDATE webhooks SET disabled_at = $1, disabled_reason = $2 WHERE id = $3 AND disabled_at IS NULL")
            .bind(at)
            .bind(reason)
            .bind(id)
            .execute(db)
            .await
            .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}

/// `FOR UPDATE … SKIP LOCKED`: replicas claiming at the same moment pass over each other's
/// rows instead of waiting or taking them twice; the lease keeps a claimed row from being
/// claimed again while its attempt runs.
pub(crate) async fn claim_deliveries(
    pool: &PgPool,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<ClaimedDelivery>> {
    let mut tx = pool.begin().await.map_err(map_err)?;
    // At most PER_WEBHOOK_IN_FLIGHT rows of a webhook in flight, counting those claimed now.
    let rows = sqlx::query(
        "SELECT o.id, o.webhook_id, o.outcome_id, o.payload, o.attempts, w.url, w.secret
         FROM webhook_outbox o JOIN webhooks w ON w.id = o.webhook_id
         WHERE o.delivered_at IS NULL AND NOT o.gone AND o.given_up_at IS NULL AND w.disabled_at IS NULL
           AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= $1)
           AND (o.claimed_until IS NULL OR o.claimed_until <= $1)
           AND o.id IN (
             SELECT id FROM (
               SELECT d.id,
                      ROW_NUMBER() OVER (PARTITION BY d.webhook_id ORDER BY d.next_attempt_at NULLS FIRST, d.id) AS nth,
                      (SELECT COUNT(*) FROM webhook_outbox c
                        WHERE c.webhook_id = d.webhook_id AND c.claimed_until > $1) AS busy
               FROM webhook_outbox d JOIN webhooks x ON x.id = d.webhook_id
               WHERE d.delivered_at IS NULL AND NOT d.gone AND d.given_up_at IS NULL AND x.disabled_at IS NULL
                 AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= $1)
                 AND (d.claimed_until IS NULL OR d.claimed_until <= $1)
             ) due WHERE nth + busy <= $3)
         ORDER BY o.next_attempt_at NULLS FIRST, o.id
         LIMIT $2
         FOR UPDATE OF o SKIP LOCKED",
    )
    .bind(now)
    .bind(limit)
    .bind(PER_WEBHOOK_IN_FLIGHT)
    .fetch_all(&mut *tx)
    .await
    .map_err(map_err)?;
    let claimed = Db::decode_all(&rows, row::claimed_delivery)?;
    let ids: Vec<i64> = claimed.iter().map(|c| c.outbox_id).collect();
    sqlx::query("UPDATE webhook_outbox SET claimed_until = $1, attempts = attempts + 1 WHERE id = ANY($2)")
        .bind(lease_until)
        .bind(&ids)
        .execute(&mut *tx)
        .await
        .map_err(map_err)?;
    tx.commit().await.map_err(map_err)?;
    Ok(claimed)
}

pub(crate) async fn finish_delivery(pool: &PgPool, attempt: DeliveryAttempt, verdict: DeliveryVerdict) -> Result<()> {
    let tx = pool.begin().await.map_err(map_err)?;
    delivery::finish_delivery(Settle(tx), attempt, verdict).await
}

/// A delivery's settlement, inside a transaction.
struct Settle(Transaction<'static, Postgres>);

#[async_trait]
impl DeliverySteps for Settle {
    async fn log_attempt(&mut self, a: &DeliveryAttempt) -> Result<()> {
        sqlx::query(
            "INSERT INTO webhook_deliveries (outbox_id, attempt, attempted_at, status_code, error, duration_ms)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(a.outbox_id)
        .bind(a.attempt)
        .bind(a.attempted_at)
        .bind(a.status_code)
        .bind(&a.error)
        .bind(a.duration_ms)
        .execute(&mut *self.0)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn delivered(&mut self, outbox_id: i64, at: DateTime<Utc>) -> Result<()> {
        sqlx::query("UPDATE webhook_outbox SET delivered_at = $1, claimed_until = NULL WHERE id = $2")
            .bind(at)
            .bind(outbox_id)
            .execute(&mut *self.0)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn gone(&mut self, outbox_id: i64) -> Result<()> {
        sqlx::query("UPDATE webhook_outbox SET gone = TRUE, claimed_until = NULL WHERE id = $1")
            .bind(outbox_id)
            .execute(&mut *self.0)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn retry_at(&mut self, outbox_id: i64, next: DateTime<Utc>) -> Result<()> {
        sqlx::query("UPDATE webhook_outbox SET next_attempt_at = $1, claimed_until = NULL WHERE id = $2")
            .bind(next)
            .bind(outbox_id)
            .execute(&mut *self.0)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn given_up(&mut self, outbox_id: i64, at: DateTime<Utc>) -> Result<()> {
        sqlx::query("UPDATE webhook_outbox SET given_up_at = $1, claimed_until = NULL WHERE id = $2")
            .bind(at)
            .bind(outbox_id)
            .execute(&mut *self.0)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn disable_webhook(&mut self, outbox_id: i64, at: DateTime<Utc>, reason: &str) -> Result<()> {
        sqlx::query(
            "UPDATE webhooks SET disabled_at = $1, disabled_reason = $2
             WHERE id = (SELECT webhook_id FROM webhook_outbox WHERE id = $3) AND disabled_at IS NULL",
        )
        .bind(at)
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
    db: impl PgExecutor<'_>,
    webhook_id: Uuid,
    after: i64,
    limit: i64,
) -> Result<Vec<DeliveryLogEntry>> {
    let rows = sqlx::query(
        "SELECT d.id, d.outbox_id, o.outcome_id, d.attempt, d.attempted_at, d.status_code, d.error, d.duration_ms
         FROM webhook_deliveries d JOIN webhook_outbox o ON o.id = d.outbox_id
         WHERE o.webhook_id = $1 AND d.id > $2 ORDER BY d.id LIMIT $3",
    )
    .bind(webhook_id)
    .bind(after)
    .bind(limit)
    .fetch_all(db)
    .await
    .map_err(map_err)?;
    Db::decode_all(&rows, row::delivery_log_entry)
}
