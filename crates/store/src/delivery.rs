//! Settling a webhook delivery attempt, once for both backends.
//!
//! [`finish_delivery`] logs the attempt and settles its outbox row as the verdict says, in one
//! transaction: a row the endpoint answered 410 Gone to stops, and so does its webhook. A
//! backend supplies the statements ([`DeliverySteps`]) in its own SQL, inside a write
//! transaction it has opened.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::{DeliveryAttempt, DeliveryVerdict, Result};

/// Why a webhook was disabled when its endpoint answered 410 Gone.
pub const GONE: &str = "the endpoint answered 410 Gone";

/// The SQL steps of settling an attempt, each run inside the backend's write transaction. Each
/// step that settles the outbox row releases its lease too.
#[async_trait]
pub trait DeliverySteps: Send {
    /// A line of the webhook's delivery log.
    async fn log_attempt(&mut self, attempt: &DeliveryAttempt) -> Result<()>;
    async fn delivered(&mut self, outbox_id: i64, at: DateTime<Utc>) -> Result<()>;
    /// The row is never tried again (nor, once its webhook is disabled, are the others).
    async fn gone(&mut self, outbox_id: i64) -> Result<()>;
    async fn retry_at(&mut self, outbox_id: i64, next: DateTime<Utc>) -> Result<()>;
    async fn given_up(&mut self, outbox_id: i64, at: DateTime<Utc>) -> Result<()>;
    /// Disables the webhook the row is for, unless it is disabled already.
    async fn disable_webhook(&mut self, outbox_id: i64, at: DateTime<Utc>, reason: &str) -> Result<()>;
    async fn commit(self) -> Result<()>;
}

/// Logs an attempt and settles its outbox row through `steps`, then commits.
pub async fn finish_delivery<S: DeliverySteps>(
    mut steps: S,
    attempt: DeliveryAttempt,
    verdict: DeliveryVerdict,
) -> Result<()> {
    steps.log_attempt(&attempt).await?;
    let (outbox_id, at) = (attempt.outbox_id, attempt.attempted_at);
    match verdict {
        DeliveryVerdict::Delivered => steps.delivered(outbox_id, at).await?,
        DeliveryVerdict::Gone => {
            steps.gone(outbox_id).await?;
            steps.disable_webhook(outbox_id, at, GONE).await?;
        }
        DeliveryVerdict::RetryAt(next) => steps.retry_at(outbox_id, next).await?,
        DeliveryVerdict::GiveUp => steps.given_up(outbox_id, at).await?,
    }
    steps.commit().await
}
