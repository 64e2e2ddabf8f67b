//! Appending a post, once for both backends.
//!
//! [`append`] is the whole protocol: replay a known idempotency key, otherwise read the tail,
//! let `decide` rule on it, and write the post, its outcomes, their webhook outbox rows, the
//! state snapshot and the idempotency record. A backend supplies the steps ([`AppendSteps`]) in
//! its own SQL, all inside one write transaction it has opened so that no other append to the
//! same campaign runs between the tail read and the commit (SQLite's single writer,
//! PostgreSQL's lock on the campaign's row).

use async_trait::async_trait;
use chrono::{DateTime, SecondsFormat, Utc};
use tracing::Instrument;
use uuid::Uuid;

use crate::{AppendRequest, Appended, Decide, Declined, Outcome, Post, Result, StoreError, Tail};

/// An idempotency key seen before: what was asked with it and the post it made.
#[derive(Debug, Clone)]
pub struct KnownKey {
    pub campaign_id: Uuid,
    pub request_hash: String,
    pub seq: i64,
}

/// The last post of a campaign, as far as the tail needs it.
#[derive(Debug, Clone)]
pub struct LastPost {
    pub seq: i64,
    pub hash: String,
    pub stamp: DateTime<Utc>,
}

/// The SQL steps of an append, each run inside the backend's write transaction.
#[async_trait]
pub trait AppendSteps: Send {
    /// The record of `key` used by `principal_id` before, if any.
    async fn known_key(&mut self, principal_id: Uuid, key: &str) -> Result<Option<KnownKey>>;
    async fn post(&mut self, campaign_id: Uuid, seq: i64) -> Result<Option<Post>>;
    /// The outcomes of one post, in position order.
    async fn outcomes_of_post(&mut self, campaign_id: Uuid, seq: i64) -> Result<Vec<Outcome>>;
    async fn last_post(&mut self, campaign_id: Uuid) -> Result<Option<LastPost>>;
    /// The latest snapshot at or before post `seq`, with the post it follows.
    async fn snapshot_at(&mut self, campaign_id: Uuid, seq: i64) -> Result<Option<(i64, String)>>;
    /// The campaign's last outcome position, 0 before its first outcome.
    async fn last_position(&mut self, campaign_id: Uuid) -> Result<i64>;
    async fn insert_post(&mut self, campaign_id: Uuid, post: &Post) -> Result<()>;
    async fn insert_outcome(&mut self, outcome: &Outcome) -> Result<()>;
    /// One outbox row per outcome of post `seq` and active webhook of the campaign, each holding
    /// the Standard Webhooks body (`timestamp`: the post's stamp, RFC 3339 to the millisecond).
    async fn enqueue_deliveries(&mut self, campaign_id: Uuid, seq: i64, timestamp: &str) -> Result<()>;
    async fn insert_snapshot(&mut self, campaign_id: Uuid, seq: i64, state: &str) -> Result<()>;
    /// Records the key and what was asked with it, pointing at post `seq`.
    async fn remember_key(&mut self, request: &AppendRequest, seq: i64) -> Result<()>;
    async fn commit(self) -> Result<()>;
}

/// Appends a post through `steps`: see the module's documentation. Nothing is written unless
/// everything is (a refusal or an error drops the transaction uncommitted).
pub async fn append<S: AppendSteps>(mut steps: S, request: AppendRequest, decide: Decide<'_>) -> Result<Appended> {
    let campaign_id = request.campaign_id;

    if let Some(known) =
        steps.known_key(request.author_id, &request.idempotency_key).instrument(step("known_key")).await?
    {
        if known.request_hash != request.request_hash {
            return Err(StoreError::KeyReused);
        }
        let post = steps.post(known.campaign_id, known.seq).await?.ok_or_else(|| {
            StoreError::Database(format!(
                "idempotency key {:?} names post {}, which is missing",
                request.idempotency_key, known.seq
            ))
        })?;
        let outcomes = steps.outcomes_of_post(known.campaign_id, known.seq).await?;
        return Ok(Appended::Replayed(post, outcomes));
    }

    let tail = tail(&mut steps, campaign_id).instrument(step("tail")).await?;
    let decision = step("decide").in_scope(|| decide(&tail)).map_err(|Declined| StoreError::Declined)?;
    let post = decision.post;
    steps.insert_post(campaign_id, &post).instrument(step("insert_post")).await?;
    let mut outcomes = Vec::with_capacity(decision.outcomes.len());
    for (position, new) in (tail.next_position..).zip(decision.outcomes) {
        let outcome = Outcome { id: new.id, campaign_id, position, seq: post.seq, kind: new.kind, data: new.data };
        steps.insert_outcome(&outcome).instrument(step("insert_outcome")).await?;
        outcomes.push(outcome);
    }
    if !outcomes.is_empty() {
        // The outbox rows go with the outcomes, in the same transaction.
        let timestamp = post.stamp.to_rfc3339_opts(SecondsFormat::Millis, true);
        steps.enqueue_deliveries(campaign_id, post.seq, &timestamp).instrument(step("enqueue_deliveries")).await?;
    }
    if let Some(state) = &decision.snapshot {
        steps.insert_snapshot(campaign_id, post.seq, state).instrument(step("insert_snapshot")).await?;
    }
    steps.remember_key(&request, post.seq).instrument(step("remember_key")).await?;
    steps.commit().instrument(step("commit")).await?;
    Ok(Appended::New(post, outcomes))
}

/// A step of the append, as a span: with `ADJUTANT_LOG_SPANS=close` and the target
/// `adjutant::post` at debug, each span's time is logged when it closes (the benchmark's
/// breakdown of a post's time); otherwise the span costs next to nothing.
pub fn step(name: &'static str) -> tracing::Span {
    tracing::debug_span!(target: "adjutant::post", "step", name)
}

async fn tail<S: AppendSteps>(steps: &mut S, campaign_id: Uuid) -> Result<Tail> {
    let last = steps.last_post(campaign_id).await?;
    // Only a snapshot of a post that exists: a stray row beyond the log's end is never the state.
    let last_seq = last.as_ref().map_or(0, |p| p.seq);
    let snapshot = steps.snapshot_at(campaign_id, last_seq).await?;
    let next_position = steps.last_position(campaign_id).await? + 1;
    Ok(Tail {
        next_seq: last_seq + 1,
        prev_hash: last.as_ref().map(|p| p.hash.clone()),
        prev_stamp: last.as_ref().map(|p| p.stamp),
        snapshot,
        next_position,
    })
}
