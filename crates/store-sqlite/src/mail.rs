//! The mail outbox: mails to players, queued once under their key and claimed for sending.

use adjutant_store::row::{self, Encoding};
use adjutant_store::{ClaimedMail, MailLogEntry, MailVerdict, NewMail, Result, MAIL_MAX_ATTEMPTS};
use chrono::{DateTime, Utc};
use sqlx::{SqliteExecutor, SqlitePool};
use uuid::Uuid;

use crate::db::{map_err, Db};

pub(crate) async fn queue_mail(db: impl SqliteExecutor<'_>, mail: &NewMail) -> Result<bool> {
    let done = sqlx::query(
        "INSERT INTO mail_outbox (key, campaign_id, principal_id, to_addr, subject, body, about, due_at, attempts)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0) ON CONFLICT (key) DO NOTHING",
    )
    .bind(&mail.key)
    .bind(mail.campaign_id.to_string())
    .bind(mail.principal_id.to_string())
    .bind(&mail.to)
    .bind(&mail.subject)
    .bind(&mail.body)
    .bind(&mail.about)
    .bind(mail.due_at.timestamp_millis())
    .execute(db)
    .await
    .map_err(map_err)?;
    Ok(done.rows_affected() > 0)
}

pub(crate) async fn claim_mails(
    readers: &SqlitePool,
    writer: &SqlitePool,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<ClaimedMail>> {
    // A look on a reader first: polling an empty queue takes no write lock.
    let any: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM mail_outbox WHERE sent_at IS NULL AND due_at <= ?1
                         AND (claimed_until IS NULL OR claimed_until <= ?1))",
    )
    .bind(now.timestamp_millis())
    .fetch_one(readers)
    .await
    .map_err(map_err)?;
    if !any {
        return Ok(Vec::new());
    }
    let rows = sqlx::query(
        "UPDATE mail_outbox SET claimed_until = ?1, attempts = attempts + 1
         WHERE key IN (SELECT key FROM mail_outbox
                       WHERE sent_at IS NULL AND due_at <= ?2 AND attempts < ?3
                         AND (claimed_until IS NULL OR claimed_until <= ?2)
                       ORDER BY due_at, key LIMIT ?4)
         RETURNING key, campaign_id, principal_id, to_addr, subject, body, about, due_at, attempts",
    )
    .bind(lease_until.timestamp_millis())
    .bind(now.timestamp_millis())
    .bind(MAIL_MAX_ATTEMPTS)
    .bind(limit)
    .fetch_all(writer)
    .await
    .map_err(map_err)?;
    let mut claimed = Db::decode_all(&rows, row::claimed_mail)?;
    claimed.sort_by(|a, b| (a.mail.due_at, &a.mail.key).cmp(&(b.mail.due_at, &b.mail.key)));
    Ok(claimed)
}

pub(crate) async fn finish_mail(
    db: impl SqliteExecutor<'_>,
    key: &str,
    at: DateTime<Utc>,
    verdict: &MailVerdict,
) -> Result<()> {
    let query = match verdict {
        MailVerdict::Sent => {
            sqlx::query("UPDATE mail_outbox SET sent_at = ?1, claimed_until = NULL, last_error = NULL WHERE key = ?2")
                .bind(at.timestamp_millis())
                .bind(key)
        }
        MailVerdict::Skipped(why) => {
            sqlx::query("UPDATE mail_outbox SET sent_at = ?1, claimed_until = NULL, skipped = ?2 WHERE key = ?3")
                .bind(at.timestamp_millis())
                .bind(why)
                .bind(key)
        }
        MailVerdict::Failed { error, retry_at } => {
            sqlx::query("UPDATE mail_outbox SET claimed_until = ?1, last_error = ?2 WHERE key = ?3")
                .bind(retry_at.timestamp_millis())
                .bind(error)
                .bind(key)
        }
    };
    query.execute(db).await.map_err(map_err)?;
    Ok(())
}

pub(crate) async fn mails(db: impl SqliteExecutor<'_>, campaign_id: Uuid, limit: i64) -> Result<Vec<MailLogEntry>> {
    let rows = sqlx::query(
        "SELECT key, principal_id, to_addr, subject, due_at, attempts, sent_at, skipped, last_error
         FROM mail_outbox WHERE campaign_id = ?1 ORDER BY due_at DESC, key LIMIT ?2",
    )
    .bind(campaign_id.to_string())
    .bind(limit)
    .fetch_all(db)
    .await
    .map_err(map_err)?;
    Db::decode_all(&rows, row::mail_log_entry)
}
