//! Adjutant's PostgreSQL store.
//!
//! Appending a post locks its campaign's row (`SELECT … FOR UPDATE`) before it reads the tail,
//! so replicas serving the same campaign take turns, sequence numbers never repeat or skip, and
//! a repeated idempotency key is seen by whichever request comes second.

use std::time::Duration;

use adjutant_store::append::{AppendSteps, GroupCommit, KnownKey, LastPost};
use adjutant_store::row::{self, bad_column, Columns, OUTCOME_COLUMNS};
use adjutant_store::{
    Acknowledgement, AppendRequest, Appended, Campaign, ClaimedDelivery, ClaimedMail, Contact, DeliveryAttempt,
    DeliveryLogEntry, DeliveryVerdict, MailLogEntry, MailVerdict, NewMail, NewPrincipal, Outcome, Post, Principal,
    PrincipalKind, Result, SharedDecide, Store, StoreError, Tail, Webhook, MAX_BATCH,
};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use sqlx::{ConnectOptions, PgExecutor, Postgres, Row, Transaction};
use tracing::instrument;
use uuid::Uuid;

/// After how many posts appended by this process the log's tables' statistics are looked at
/// ([`analyze_if_stale`]).
const LOOK_AT_STATISTICS: [u64; 3] = [256, 4_096, 65_536];

/// Gathers the log's tables' statistics (`ANALYZE`) when they are far behind the tables, as on
/// a new installation, whose tables were empty when the server's connections first planned the
/// statements they keep. Such a plan can check that an outcome's post exists by reading every
/// post of the campaign through another index of `posts` (its first column is the campaign's
/// too), once an outcome, so that each post costs more than the one before, until autovacuum
/// first analyzes the tables (a minute or more later); statistics gathered invalidate the
/// plans kept. A database whose statistics are current is left alone.
async fn analyze_if_stale(pool: PgPool) {
    let stale: std::result::Result<Option<bool>, sqlx::Error> = sqlx::query_scalar(
        "SELECT bool_or(c.reltuples < s.n_live_tup / 2)
         FROM UNNEST(ARRAY['posts', 'outcomes', 'idempotency_keys', 'snapshots']::regclass[]) AS t (rel)
         JOIN pg_class c ON c.oid = t.rel
         JOIN pg_stat_user_tables s ON s.relid = t.rel",
    )
    .fetch_one(&pool)
    .await;
    let analyzed = match stale {
        Ok(Some(true)) => sqlx::query("ANALYZE posts, outcomes, idempotency_keys, snapshots").execute(&pool).await,
        Ok(_) => return,
        Err(e) => Err(e),
    };
    if let Err(e) = analyzed {
        tracing::warn!(error = %e, "the log's tables' statistics could not be gathered; autovacuum will");
    }
}

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

pub struct PostgresStore {
    pool: PgPool,
    /// Posts waiting for this server's writer, appended a batch per transaction.
    batches: GroupCommit,
    /// Posts this process appended, for [`LOOK_AT_STATISTICS`].
    appended: std::sync::atomic::AtomicU64,
}

impl PostgresStore {
    /// Commits at most `max_batch` posts at once (group commit; 1: each post on its own).
    pub fn with_max_batch(mut self, max_batch: usize) -> Self {
        self.batches = GroupCommit::new(max_batch);
        self
    }

    /// Connects to `url` (`postgres://…`) and brings the schema up to date.
    pub async fn open(url: &str) -> Result<Self> {
        let options: PgConnectOptions = url
            .parse::<PgConnectOptions>()
            .map_err(|e| StoreError::Database(format!("bad PostgreSQL URL: {e}")))?
            .log_statements(tracing::log::LevelFilter::Trace);
        // No ping before each use (sqlx pings a connection as it goes back to the pool already):
        // it would add a round trip to every token lookup. A connection PostgreSQL closed while
        // idle (a restart) fails the one request that meets it with a 503 to retry (`map_err`).
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(options)
            .await
            .map_err(map_err)?;
        MIGRATOR.run(&pool).await.map_err(|e| StoreError::Database(format!("migrations: {e}")))?;
        Ok(Self { pool, batches: GroupCommit::new(MAX_BATCH), appended: Default::default() })
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// A row of `mail_outbox` as claimed.
fn claimed_mail(row: &PgRow) -> Result<ClaimedMail> {
    Ok(ClaimedMail {
        mail: NewMail {
            key: row.try_get("key").map_err(map_err)?,
            campaign_id: row.try_get("campaign_id").map_err(map_err)?,
            principal_id: row.try_get("principal_id").map_err(map_err)?,
            to: row.try_get("to_addr").map_err(map_err)?,
            subject: row.try_get("subject").map_err(map_err)?,
            body: row.try_get("body").map_err(map_err)?,
            about: row.try_get("about").map_err(map_err)?,
            due_at: row.try_get("due_at").map_err(map_err)?,
        },
        attempts: row.try_get("attempts").map_err(map_err)?,
    })
}

/// A row of `mail_outbox` for the log.
fn mail_log_entry(row: &PgRow) -> Result<MailLogEntry> {
    Ok(MailLogEntry {
        key: row.try_get("key").map_err(map_err)?,
        principal_id: row.try_get("principal_id").map_err(map_err)?,
        to: row.try_get("to_addr").map_err(map_err)?,
        subject: row.try_get("subject").map_err(map_err)?,
        due_at: row.try_get("due_at").map_err(map_err)?,
        attempts: row.try_get("attempts").map_err(map_err)?,
        sent_at: row.try_get("sent_at").map_err(map_err)?,
        skipped: row.try_get("skipped").map_err(map_err)?,
        last_error: row.try_get("last_error").map_err(map_err)?,
    })
}

/// A row of `player_contacts`.
fn contact(row: &PgRow) -> Result<Contact> {
    Ok(Contact {
        forum_handle: row.try_get("forum_handle").map_err(map_err)?,
        discord_user_id: row.try_get("discord_user_id").map_err(map_err)?,
        email: row.try_get("email").map_err(map_err)?,
    })
}

fn map_err(err: sqlx::Error) -> StoreError {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::Conflict(db.message().to_owned()),
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::Tls(_) => {
            StoreError::Unavailable(err.to_string())
        }
        // Server shutting down, cannot connect now, too many connections; or a deadlock or a
        // serialization failure between replicas' batches: the post was not written, try again.
        sqlx::Error::Database(db)
            if db.code().is_some_and(|c| {
                c.starts_with("57P") || c.starts_with("08") || c == "53300" || c == "40P01" || c == "40001"
            }) =>
        {
            StoreError::Unavailable(err.to_string())
        }
        _ => StoreError::Database(err.to_string()),
    }
}

/// A row read in domain types: PostgreSQL has the types themselves.
struct Cols<'r>(&'r PgRow);

impl Cols<'_> {
    fn get<'r, T: sqlx::Decode<'r, Postgres> + sqlx::Type<Postgres>>(&'r self, column: &str) -> Result<T> {
        self.0.try_get(column).map_err(|e| bad_column(column, e))
    }
}

impl Columns for Cols<'_> {
    fn opt_text(&self, column: &str) -> Result<Option<String>> {
        self.get(column)
    }
    fn opt_int(&self, column: &str) -> Result<Option<i64>> {
        self.get(column)
    }
    fn opt_int32(&self, column: &str) -> Result<Option<i32>> {
        self.get(column)
    }
    fn opt_uuid(&self, column: &str) -> Result<Option<Uuid>> {
        self.get(column)
    }
    fn opt_time(&self, column: &str) -> Result<Option<DateTime<Utc>>> {
        self.get(column)
    }
}

fn decode<T>(row: &PgRow, read: fn(&dyn Columns) -> Result<T>) -> Result<T> {
    read(&Cols(row))
}

fn decode_all<T>(rows: &[PgRow], read: fn(&dyn Columns) -> Result<T>) -> Result<Vec<T>> {
    rows.iter().map(|row| read(&Cols(row))).collect()
}

const POST_COLUMNS: &str =
    "campaign_id, seq, stamp, author_id, side, kind, body, prev_hash, hash, receipt_key_id, receipt_signature";

/// The Standard Webhooks body of each outcome of one post, for each active webhook of its campaign.
const OUTBOX_INSERT: &str = "INSERT INTO webhook_outbox (webhook_id, outcome_id, payload)
     SELECT w.id, o.id, json_build_object(
         'type', 'outcome.created',
         'timestamp', $1::text,
         'data', json_build_object(
             'id', o.id, 'campaign_id', o.campaign_id, 'position', o.position, 'seq', o.seq,
             'kind', o.kind, 'headline', o.data::json ->> 'headline', 'data', o.data::json -> 'data',
             'hash', p.hash,
             'receipt', CASE WHEN p.receipt_key_id IS NULL THEN NULL
                        ELSE json_build_object('key_id', p.receipt_key_id, 'signature', p.receipt_signature) END))::text
     FROM outcomes o JOIN webhooks w ON w.campaign_id = o.campaign_id AND w.disabled_at IS NULL
     JOIN posts p ON p.campaign_id = o.campaign_id AND p.seq = o.seq
     WHERE o.campaign_id = $2 AND o.seq = $3
     ORDER BY o.position, w.created_at, w.id";

async fn select_post<'e>(db: impl PgExecutor<'e>, campaign_id: Uuid, seq: i64) -> Result<Option<Post>> {
    let row = sqlx::query(&format!("SELECT {POST_COLUMNS} FROM posts WHERE campaign_id = $1 AND seq = $2"))
        .bind(campaign_id)
        .bind(seq)
        .fetch_optional(db)
        .await
        .map_err(map_err)?;
    row.as_ref().map(|row| decode(row, row::post)).transpose()
}

/// The outcomes of posts `after < seq <= through`, in position order.
async fn select_outcomes_of_posts<'e>(
    db: impl PgExecutor<'e>,
    campaign_id: Uuid,
    after: i64,
    through: i64,
) -> Result<Vec<Outcome>> {
    let rows = sqlx::query(&format!(
        "SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = $1 AND seq > $2 AND seq <= $3 ORDER BY position"
    ))
    .bind(campaign_id)
    .bind(after)
    .bind(through)
    .fetch_all(db)
    .await
    .map_err(map_err)?;
    decode_all(&rows, row::outcome)
}

async fn select_snapshot_at<'e>(db: impl PgExecutor<'e>, campaign_id: Uuid, seq: i64) -> Result<Option<(i64, String)>> {
    let row =
        sqlx::query("SELECT seq, state FROM snapshots WHERE campaign_id = $1 AND seq <= $2 ORDER BY seq DESC LIMIT 1")
            .bind(campaign_id)
            .bind(seq)
            .fetch_optional(db)
            .await
            .map_err(map_err)?;
    row.as_ref().map(|row| decode(row, row::snapshot)).transpose()
}

/// An append's steps, inside a transaction that holds the campaign's row lock (`FOR UPDATE`):
/// appends to one campaign take turns, across replicas too.
struct Append(Transaction<'static, Postgres>);

#[async_trait]
impl AppendSteps for Append {
    async fn known_key(&mut self, principal_id: Uuid, key: &str) -> Result<Option<KnownKey>> {
        let row = sqlx::query(
            "SELECT campaign_id, request_hash, seq FROM idempotency_keys WHERE principal_id = $1 AND key = $2",
        )
        .bind(principal_id)
        .bind(key)
        .fetch_optional(&mut *self.0)
        .await
        .map_err(map_err)?;
        row.as_ref().map(|row| decode(row, row::known_key)).transpose()
    }

    async fn post(&mut self, campaign_id: Uuid, seq: i64) -> Result<Option<Post>> {
        select_post(&mut *self.0, campaign_id, seq).await
    }

    async fn outcomes_of_post(&mut self, campaign_id: Uuid, seq: i64) -> Result<Vec<Outcome>> {
        select_outcomes_of_posts(&mut *self.0, campaign_id, seq - 1, seq).await
    }

    async fn last_post(&mut self, campaign_id: Uuid) -> Result<Option<LastPost>> {
        let row = sqlx::query("SELECT seq, hash, stamp FROM posts WHERE campaign_id = $1 ORDER BY seq DESC LIMIT 1")
            .bind(campaign_id)
            .fetch_optional(&mut *self.0)
            .await
            .map_err(map_err)?;
        row.as_ref().map(|row| decode(row, row::last_post)).transpose()
    }

    async fn snapshot_at(&mut self, campaign_id: Uuid, seq: i64) -> Result<Option<(i64, String)>> {
        select_snapshot_at(&mut *self.0, campaign_id, seq).await
    }

    async fn last_position(&mut self, campaign_id: Uuid) -> Result<i64> {
        sqlx::query_scalar(
            "SELECT COALESCE((SELECT position FROM outcomes WHERE campaign_id = $1 ORDER BY position DESC LIMIT 1), 0)::BIGINT",
        )
            .bind(campaign_id)
            .fetch_one(&mut *self.0)
            .await
            .map_err(map_err)
    }

    async fn insert_post(&mut self, _campaign_id: Uuid, post: &Post) -> Result<()> {
        self.insert_posts(&[post]).await
    }

    async fn insert_outcome(&mut self, outcome: &Outcome) -> Result<()> {
        self.insert_outcomes(&[outcome]).await
    }

    async fn any_known_key(&mut self, keys: &[(Uuid, &str)]) -> Result<bool> {
        let (principals, keys): (Vec<Uuid>, Vec<&str>) = keys.iter().copied().unzip();
        // Each key looked up by the primary key (a LATERAL subquery with a LIMIT is never made
        // into a join), whatever the table's size when the statement is planned: as a join, it
        // can be planned as a hash join over the whole table.
        sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM UNNEST($1::uuid[], $2::text[]) AS asked (principal_id, key)
                 CROSS JOIN LATERAL (SELECT 1 FROM idempotency_keys k
                                     WHERE k.principal_id = asked.principal_id AND k.key = asked.key
                                     LIMIT 1) AS known)",
        )
        .bind(principals)
        .bind(keys)
        .fetch_one(&mut *self.0)
        .await
        .map_err(map_err)
    }

    async fn has_webhooks(&mut self, campaign_id: Uuid) -> Result<bool> {
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM webhooks WHERE campaign_id = $1 AND disabled_at IS NULL)")
            .bind(campaign_id)
            .fetch_one(&mut *self.0)
            .await
            .map_err(map_err)
    }

    async fn lock_campaigns(&mut self, campaign_ids: &[Uuid]) -> Result<()> {
        // Rows are locked in the order sorted (the lock is taken above the sort), so replicas
        // never wait on each other in a circle.
        sqlx::query("SELECT id FROM campaigns WHERE id = ANY($1) ORDER BY id FOR UPDATE")
            .bind(campaign_ids)
            .fetch_all(&mut *self.0)
            .await
            .map_err(map_err)
            .map(|_| ())
    }

    async fn tails(&mut self, campaign_ids: &[Uuid]) -> Result<Vec<(Uuid, Tail, bool)>> {
        let rows = sqlx::query(
            "SELECT asked.id AS campaign_id, last.seq AS last_seq, last.hash AS last_hash, last.stamp AS last_stamp,
                    snapshot.seq AS snapshot_seq, snapshot.state AS snapshot_state,
                    (SELECT position FROM outcomes WHERE campaign_id = asked.id ORDER BY position DESC LIMIT 1)
                      AS last_position,
                    CASE WHEN EXISTS (SELECT 1 FROM webhooks WHERE campaign_id = asked.id AND disabled_at IS NULL)
                      THEN 1 ELSE 0 END::INT8 AS webhooks
             FROM UNNEST($1::uuid[]) AS asked (id)
             LEFT JOIN LATERAL (SELECT seq, hash, stamp FROM posts WHERE campaign_id = asked.id
                                ORDER BY seq DESC LIMIT 1) last ON true
             LEFT JOIN LATERAL (SELECT seq, state FROM snapshots WHERE campaign_id = asked.id AND seq <= last.seq
                                ORDER BY seq DESC LIMIT 1) snapshot ON true",
        )
        .bind(campaign_ids)
        .fetch_all(&mut *self.0)
        .await
        .map_err(map_err)?;
        decode_all(&rows, row::tail)
    }

    async fn insert_posts(&mut self, posts: &[&Post]) -> Result<()> {
        sqlx::query(&format!(
            "INSERT INTO posts ({POST_COLUMNS})
             SELECT * FROM UNNEST($1::uuid[], $2::bigint[], $3::timestamptz[], $4::uuid[], $5::text[], $6::text[],
                                  $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])"
        ))
        .bind(posts.iter().map(|p| p.campaign_id).collect::<Vec<_>>())
        .bind(posts.iter().map(|p| p.seq).collect::<Vec<_>>())
        .bind(posts.iter().map(|p| p.stamp).collect::<Vec<_>>())
        .bind(posts.iter().map(|p| p.author_id).collect::<Vec<_>>())
        .bind(posts.iter().map(|p| p.side.as_deref()).collect::<Vec<_>>())
        .bind(posts.iter().map(|p| p.kind.as_str()).collect::<Vec<_>>())
        .bind(posts.iter().map(|p| p.body.as_str()).collect::<Vec<_>>())
        .bind(posts.iter().map(|p| p.prev_hash.as_str()).collect::<Vec<_>>())
        .bind(posts.iter().map(|p| p.hash.as_str()).collect::<Vec<_>>())
        .bind(posts.iter().map(|p| p.receipt.as_ref().map(|r| r.key_id.as_str())).collect::<Vec<_>>())
        .bind(posts.iter().map(|p| p.receipt.as_ref().map(|r| r.signature.as_str())).collect::<Vec<_>>())
        .execute(&mut *self.0)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn insert_outcomes(&mut self, outcomes: &[&Outcome]) -> Result<()> {
        sqlx::query(&format!(
            "INSERT INTO outcomes ({OUTCOME_COLUMNS})
             SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::bigint[], $4::bigint[], $5::text[], $6::text[])"
        ))
        .bind(outcomes.iter().map(|o| o.id).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.campaign_id).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.position).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.seq).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.kind.as_str()).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.data.as_str()).collect::<Vec<_>>())
        .execute(&mut *self.0)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn enqueue_deliveries(&mut self, campaign_id: Uuid, seq: i64, timestamp: &str) -> Result<()> {
        sqlx::query(OUTBOX_INSERT)
            .bind(timestamp)
            .bind(campaign_id)
            .bind(seq)
            .execute(&mut *self.0)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn insert_snapshot(&mut self, campaign_id: Uuid, seq: i64, state: &str) -> Result<()> {
        sqlx::query("INSERT INTO snapshots (campaign_id, seq, state) VALUES ($1, $2, $3)")
            .bind(campaign_id)
            .bind(seq)
            .bind(state)
            .execute(&mut *self.0)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn remember_key(&mut self, request: &AppendRequest, seq: i64) -> Result<()> {
        self.remember_keys(&[(request, seq)]).await
    }

    async fn remember_keys(&mut self, keys: &[(&AppendRequest, i64)]) -> Result<()> {
        sqlx::query(
            "INSERT INTO idempotency_keys (principal_id, key, campaign_id, request_hash, seq)
             SELECT * FROM UNNEST($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::bigint[])",
        )
        .bind(keys.iter().map(|(r, _)| r.author_id).collect::<Vec<_>>())
        .bind(keys.iter().map(|(r, _)| r.idempotency_key.as_str()).collect::<Vec<_>>())
        .bind(keys.iter().map(|(r, _)| r.campaign_id).collect::<Vec<_>>())
        .bind(keys.iter().map(|(r, _)| r.request_hash.as_str()).collect::<Vec<_>>())
        .bind(keys.iter().map(|&(_, seq)| seq).collect::<Vec<_>>())
        .execute(&mut *self.0)
        .await
        .map_err(map_err)?;
        Ok(())
    }

    async fn lock_campaign(&mut self, campaign_id: Uuid) -> Result<()> {
        // Other replicas' appends to the campaign wait here until this batch commits.
        sqlx::query("SELECT id FROM campaigns WHERE id = $1 FOR UPDATE")
            .bind(campaign_id)
            .fetch_optional(&mut *self.0)
            .await
            .map_err(map_err)
            .map(|_| ())
    }

    async fn execute(&mut self, sql: &'static str) -> Result<()> {
        sqlx::query(sql).execute(&mut *self.0).await.map_err(map_err).map(|_| ())
    }

    async fn commit(self) -> Result<()> {
        self.0.commit().await.map_err(map_err)
    }
}

#[async_trait]
impl Store for PostgresStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    #[instrument(skip_all)]
    async fn create_principal(&self, new: NewPrincipal) -> Result<Principal> {
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
        .execute(&self.pool)
        .await
        .map_err(map_err)?;
        Ok(new.principal)
    }

    #[instrument(skip_all)]
    async fn principal_by_token_hash(&self, token_hash: &[u8; 32]) -> Result<Option<Principal>> {
        let row = sqlx::query("SELECT * FROM principals WHERE token_hash = $1 AND revoked_at IS NULL")
            .bind(&token_hash[..])
            .fetch_optional(&self.pool)
            .await
            .map_err(map_err)?;
        row.as_ref().map(|row| decode(row, row::principal)).transpose()
    }

    #[instrument(skip_all)]
    async fn principal(&self, id: Uuid) -> Result<Option<(Principal, Option<DateTime<Utc>>)>> {
        let row = sqlx::query("SELECT * FROM principals WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(map_err)?;
        row.as_ref().map(|row| decode(row, row::principal_and_revocation)).transpose()
    }

    #[instrument(skip_all)]
    async fn campaign_principals(
        &self,
        campaign_id: Uuid,
        kind: PrincipalKind,
        limit: i64,
    ) -> Result<Vec<(Principal, Option<DateTime<Utc>>)>> {
        let rows = sqlx::query(
            "SELECT * FROM principals WHERE campaign_id = $1 AND kind = $2 ORDER BY created_at, id LIMIT $3",
        )
        .bind(campaign_id)
        .bind(kind.as_str())
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(map_err)?;
        rows.iter().map(|row| decode(row, row::principal_and_revocation)).collect()
    }

    #[instrument(skip_all)]
    async fn revoke_principal(&self, id: Uuid, at: DateTime<Utc>) -> Result<bool> {
        let done = sqlx::query("UPDATE principals SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2")
            .bind(at)
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(map_err)?;
        Ok(done.rows_affected() > 0)
    }

    #[instrument(skip_all)]
    async fn replace_token(&self, id: Uuid, token_hash: &[u8; 32]) -> Result<bool> {
        let done = sqlx::query("UPDATE principals SET token_hash = $1 WHERE id = $2 AND revoked_at IS NULL")
            .bind(&token_hash[..])
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(map_err)?;
        Ok(done.rows_affected() > 0)
    }

    #[instrument(skip_all)]
    async fn set_contact(&self, principal_id: Uuid, contact: &Contact, at: DateTime<Utc>) -> Result<bool> {
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
        .execute(&self.pool)
        .await
        .map_err(map_err)?;
        Ok(done.rows_affected() > 0)
    }

    #[instrument(skip_all)]
    async fn campaign_contacts(&self, campaign_id: Uuid) -> Result<Vec<(Uuid, Contact)>> {
        let rows = sqlx::query(
            "SELECT c.principal_id, c.forum_handle, c.discord_user_id, c.email FROM player_contacts c
             JOIN principals p ON p.id = c.principal_id WHERE p.campaign_id = $1 ORDER BY p.created_at, p.id",
        )
        .bind(campaign_id)
        .fetch_all(&self.pool)
        .await
        .map_err(map_err)?;
        rows.iter()
            .map(|row| {
                let id: Uuid = row.try_get("principal_id").map_err(map_err)?;
                Ok((id, contact(row)?))
            })
            .collect()
    }

    #[instrument(skip_all)]
    async fn queue_mail(&self, mail: &NewMail) -> Result<bool> {
        let done = sqlx::query(
            "INSERT INTO mail_outbox (key, campaign_id, principal_id, to_addr, subject, body, about, due_at, attempts)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0) ON CONFLICT (key) DO NOTHING",
        )
        .bind(&mail.key)
        .bind(mail.campaign_id)
        .bind(mail.principal_id)
        .bind(&mail.to)
        .bind(&mail.subject)
        .bind(&mail.body)
        .bind(&mail.about)
        .bind(mail.due_at)
        .execute(&self.pool)
        .await
        .map_err(map_err)?;
        Ok(done.rows_affected() > 0)
    }

    #[instrument(skip_all)]
    async fn claim_mails(
        &self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<ClaimedMail>> {
        // A look on a reader first: polling an empty queue takes no write lock.
        let any: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM mail_outbox WHERE sent_at IS NULL AND due_at <= $1
                             AND (claimed_until IS NULL OR claimed_until <= $1))",
        )
        .bind(now)
        .fetch_one(&self.pool)
        .await
        .map_err(map_err)?;
        if !any {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(
            "UPDATE mail_outbox SET claimed_until = $1, attempts = attempts + 1
             WHERE key IN (SELECT key FROM mail_outbox
                           WHERE sent_at IS NULL AND due_at <= $2 AND attempts < $3
                             AND (claimed_until IS NULL OR claimed_until <= $2)
                           ORDER BY due_at, key LIMIT $4 FOR UPDATE SKIP LOCKED)
             RETURNING key, campaign_id, principal_id, to_addr, subject, body, about, due_at, attempts",
        )
        .bind(lease_until)
        .bind(now)
        .bind(adjutant_store::MAIL_MAX_ATTEMPTS)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(map_err)?;
        let mut claimed: Vec<ClaimedMail> = rows.iter().map(claimed_mail).collect::<Result<_>>()?;
        claimed.sort_by(|a, b| (a.mail.due_at, &a.mail.key).cmp(&(b.mail.due_at, &b.mail.key)));
        Ok(claimed)
    }

    #[instrument(skip_all)]
    async fn finish_mail(&self, key: &str, at: DateTime<Utc>, verdict: &MailVerdict) -> Result<()> {
        let query = match verdict {
            MailVerdict::Sent => sqlx::query(
                "UPDATE mail_outbox SET sent_at = $1, claimed_until = NULL, last_error = NULL WHERE key = $2",
            )
            .bind(at)
            .bind(key),
            MailVerdict::Skipped(why) => {
                sqlx::query("UPDATE mail_outbox SET sent_at = $1, claimed_until = NULL, skipped = $2 WHERE key = $3")
                    .bind(at)
                    .bind(why)
                    .bind(key)
            }
            MailVerdict::Failed { error, retry_at } => {
                sqlx::query("UPDATE mail_outbox SET claimed_until = $1, last_error = $2 WHERE key = $3")
                    .bind(retry_at)
                    .bind(error)
                    .bind(key)
            }
        };
        query.execute(&self.pool).await.map_err(map_err)?;
        Ok(())
    }

    #[instrument(skip_all)]
    async fn mails(&self, campaign_id: Uuid, limit: i64) -> Result<Vec<MailLogEntry>> {
        let rows = sqlx::query(
            "SELECT key, principal_id, to_addr, subject, due_at, attempts, sent_at, skipped, last_error
             FROM mail_outbox WHERE campaign_id = $1 ORDER BY due_at DESC, key LIMIT $2",
        )
        .bind(campaign_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(map_err)?;
        rows.iter().map(mail_log_entry).collect()
    }

    #[instrument(skip_all)]
    async fn create_campaign(&self, c: Campaign) -> Result<Campaign> {
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
        .execute(&self.pool)
        .await
        .map_err(map_err)?;
        Ok(c)
    }

    #[instrument(skip_all)]
    async fn campaign(&self, id: Uuid) -> Result<Option<Campaign>> {
        let row = sqlx::query("SELECT * FROM campaigns WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(map_err)?;
        row.as_ref().map(|row| decode(row, row::campaign)).transpose()
    }

    #[instrument(skip_all)]
    async fn campaigns(&self, moderator: Option<Uuid>, after: Option<Uuid>, limit: i64) -> Result<Vec<Campaign>> {
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
        let rows = query.bind(limit).fetch_all(&self.pool).await.map_err(map_err)?;
        decode_all(&rows, row::campaign)
    }

    #[instrument(skip_all, fields(campaign = %request.campaign_id))]
    async fn append_post(&self, request: AppendRequest, decide: SharedDecide) -> Result<Appended> {
        let pool = self.pool.clone();
        let begin = move || {
            let pool = pool.clone();
            async move { pool.begin().await.map(Append).map_err(map_err) }
        };
        let appended = self.batches.append(request, decide, begin).await;
        if let Ok(Appended::New(..)) = &appended {
            let count = self.appended.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            if LOOK_AT_STATISTICS.contains(&count) {
                tokio::spawn(analyze_if_stale(self.pool.clone()));
            }
        }
        appended
    }

    fn largest_batch(&self) -> usize {
        self.batches.largest_batch()
    }

    fn batches_one_by_one(&self) -> usize {
        self.batches.batches_one_by_one()
    }

    #[instrument(skip_all)]
    async fn posts(&self, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<Post>> {
        let rows = sqlx::query(&format!(
            "SELECT {POST_COLUMNS} FROM posts WHERE campaign_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"
        ))
        .bind(campaign_id)
        .bind(after)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(map_err)?;
        decode_all(&rows, row::post)
    }

    #[instrument(skip_all)]
    async fn post(&self, campaign_id: Uuid, seq: i64) -> Result<Option<Post>> {
        select_post(&self.pool, campaign_id, seq).await
    }

    #[instrument(skip_all)]
    async fn head(&self, campaign_id: Uuid) -> Result<Option<Post>> {
        let row =
            sqlx::query(&format!("SELECT {POST_COLUMNS} FROM posts WHERE campaign_id = $1 ORDER BY seq DESC LIMIT 1"))
                .bind(campaign_id)
                .fetch_optional(&self.pool)
                .await
                .map_err(map_err)?;
        row.as_ref().map(|row| decode(row, row::post)).transpose()
    }

    #[instrument(skip_all)]
    async fn latest_outcomes(&self, campaign_id: Uuid, limit: i64) -> Result<Vec<Outcome>> {
        let rows = sqlx::query(&format!(
            "SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = $1 ORDER BY position DESC LIMIT $2"
        ))
        .bind(campaign_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(map_err)?;
        let mut outcomes = decode_all(&rows, row::outcome)?;
        outcomes.reverse();
        Ok(outcomes)
    }

    #[instrument(skip_all)]
    async fn count_posts_by_author(
        &self,
        campaign_id: Uuid,
        author_id: Uuid,
        kind: &str,
        since: DateTime<Utc>,
    ) -> Result<i64> {
        sqlx::query_scalar(
            "SELECT COUNT(*) FROM posts WHERE campaign_id = $1 AND author_id = $2 AND kind = $3 AND stamp >= $4",
        )
        .bind(campaign_id)
        .bind(author_id)
        .bind(kind)
        .bind(since)
        .fetch_one(&self.pool)
        .await
        .map_err(map_err)
    }

    #[instrument(skip_all)]
    async fn keep_campaign_secret(&self, campaign_id: Uuid, chain: i64, secret: &str) -> Result<String> {
        sqlx::query(
            "INSERT INTO campaign_secrets (campaign_id, chain, secret) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        )
        .bind(campaign_id)
        .bind(chain)
        .bind(secret)
        .execute(&self.pool)
        .await
        .map_err(map_err)?;
        sqlx::query_scalar("SELECT secret FROM campaign_secrets WHERE campaign_id = $1 AND chain = $2")
            .bind(campaign_id)
            .bind(chain)
            .fetch_one(&self.pool)
            .await
            .map_err(map_err)
    }

    #[instrument(skip_all)]
    async fn campaign_secrets(&self, campaign_id: Uuid) -> Result<Vec<(i64, String)>> {
        sqlx::query_as("SELECT chain, secret FROM campaign_secrets WHERE campaign_id = $1 ORDER BY chain")
            .bind(campaign_id)
            .fetch_all(&self.pool)
            .await
            .map_err(map_err)
    }

    #[instrument(skip_all)]
    async fn count_outcomes_of_kind(&self, campaign_id: Uuid, kind: &str) -> Result<i64> {
        sqlx::query_scalar("SELECT COUNT(*) FROM outcomes WHERE campaign_id = $1 AND kind = $2")
            .bind(campaign_id)
            .bind(kind)
            .fetch_one(&self.pool)
            .await
            .map_err(map_err)
    }

    #[instrument(skip_all)]
    async fn posts_of_kind(&self, campaign_id: Uuid, kind: &str) -> Result<Vec<Post>> {
        let rows =
            sqlx::query(&format!("SELECT {POST_COLUMNS} FROM posts WHERE campaign_id = $1 AND kind = $2 ORDER BY seq"))
                .bind(campaign_id)
                .bind(kind)
                .fetch_all(&self.pool)
                .await
                .map_err(map_err)?;
        decode_all(&rows, row::post)
    }

    #[instrument(skip_all)]
    async fn outcomes_of_kind(&self, campaign_id: Uuid, kind: &str, limit: i64) -> Result<Vec<Outcome>> {
        let rows = sqlx::query(&format!(
            "SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = $1 AND kind = $2 ORDER BY position LIMIT $3"
        ))
        .bind(campaign_id)
        .bind(kind)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(map_err)?;
        decode_all(&rows, row::outcome)
    }

    #[instrument(skip_all)]
    async fn outcomes(&self, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<Outcome>> {
        let rows = sqlx::query(&format!(
            "SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = $1 AND position > $2 ORDER BY position LIMIT $3"
        ))
        .bind(campaign_id)
        .bind(after)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(map_err)?;
        decode_all(&rows, row::outcome)
    }

    #[instrument(skip_all)]
    async fn outcomes_of_post(&self, campaign_id: Uuid, seq: i64) -> Result<Vec<Outcome>> {
        select_outcomes_of_posts(&self.pool, campaign_id, seq - 1, seq).await
    }

    #[instrument(skip_all)]
    async fn outcomes_of_posts(&self, campaign_id: Uuid, after: i64, through: i64) -> Result<Vec<Outcome>> {
        select_outcomes_of_posts(&self.pool, campaign_id, after, through).await
    }

    #[instrument(skip_all)]
    async fn snapshots(&self, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<(i64, String)>> {
        let rows =
            sqlx::query("SELECT seq, state FROM snapshots WHERE campaign_id = $1 AND seq > $2 ORDER BY seq LIMIT $3")
                .bind(campaign_id)
                .bind(after)
                .bind(limit)
                .fetch_all(&self.pool)
                .await
                .map_err(map_err)?;
        decode_all(&rows, row::snapshot)
    }

    #[instrument(skip_all)]
    async fn snapshot_at(&self, campaign_id: Uuid, seq: i64) -> Result<Option<(i64, String)>> {
        select_snapshot_at(&self.pool, campaign_id, seq).await
    }

    #[instrument(skip_all)]
    async fn outcome(&self, campaign_id: Uuid, id: Uuid) -> Result<Option<Outcome>> {
        let row = sqlx::query(&format!("SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = $1 AND id = $2"))
            .bind(campaign_id)
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(map_err)?;
        row.as_ref().map(|row| decode(row, row::outcome)).transpose()
    }

    #[instrument(skip_all)]
    async fn pending_outcomes(&self, bot: &Principal, limit: i64) -> Result<Vec<Outcome>> {
        let rows = sqlx::query(
            "SELECT o.id, o.campaign_id, o.position, o.seq, o.kind, o.data
             FROM outcomes o JOIN campaigns c ON c.id = o.campaign_id
             WHERE (c.id = $1 OR ($1 IS NULL AND c.moderator_id = $2))
               AND NOT EXISTS (SELECT 1 FROM acknowledgements a WHERE a.bot_id = $3 AND a.outcome_id = o.id)
             ORDER BY c.ord, o.position LIMIT $4",
        )
        .bind(bot.campaign_id)
        .bind(bot.created_by)
        .bind(bot.id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(map_err)?;
        decode_all(&rows, row::outcome)
    }

    #[instrument(skip_all)]
    async fn acknowledge(&self, ack: Acknowledgement) -> Result<Acknowledgement> {
        sqlx::query(
            "INSERT INTO acknowledgements (bot_id, outcome_id, campaign_id, forum_post_id, acked_at)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (bot_id, outcome_id) DO NOTHING",
        )
        .bind(ack.bot_id)
        .bind(ack.outcome_id)
        .bind(ack.campaign_id)
        .bind(&ack.forum_post_id)
        .bind(ack.acked_at)
        .execute(&self.pool)
        .await
        .map_err(map_err)?;
        let row = sqlx::query("SELECT * FROM acknowledgements WHERE bot_id = $1 AND outcome_id = $2")
            .bind(ack.bot_id)
            .bind(ack.outcome_id)
            .fetch_one(&self.pool)
            .await
            .map_err(map_err)?;
        decode(&row, row::acknowledgement)
    }

    #[instrument(skip_all)]
    async fn create_webhook(&self, w: Webhook) -> Result<Webhook> {
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
        .execute(&self.pool)
        .await
        .map_err(map_err)?;
        Ok(w)
    }

    #[instrument(skip_all)]
    async fn replace_webhook_secret(&self, id: Uuid, secret: &str) -> Result<bool> {
        let done = sqlx::query("UPDATE webhooks SET secret = $1 WHERE id = $2 AND disabled_at IS NULL")
            .bind(secret)
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(map_err)?;
        Ok(done.rows_affected() > 0)
    }

    #[instrument(skip_all)]
    async fn disable_webhook(&self, id: Uuid, at: DateTime<Utc>, reason: &str) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE webhooks SET disabled_at = $1, disabled_reason = $2 WHERE id = $3 AND disabled_at IS NULL",
        )
        .bind(at)
        .bind(reason)
        .bind(id)
        .execute(&self.pool)
        .await
        .map_err(map_err)?;
        Ok(done.rows_affected() > 0)
    }

    #[instrument(skip_all)]
    async fn webhooks(&self, campaign_id: Uuid) -> Result<Vec<Webhook>> {
        let rows = sqlx::query("SELECT * FROM webhooks WHERE campaign_id = $1 ORDER BY created_at, id")
            .bind(campaign_id)
            .fetch_all(&self.pool)
            .await
            .map_err(map_err)?;
        decode_all(&rows, row::webhook)
    }

    #[instrument(skip_all)]
    async fn webhook(&self, id: Uuid) -> Result<Option<Webhook>> {
        let row = sqlx::query("SELECT * FROM webhooks WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(map_err)?;
        row.as_ref().map(|row| decode(row, row::webhook)).transpose()
    }

    /// `FOR UPDATE … SKIP LOCKED`: replicas claiming at the same moment pass over each other's
    /// rows instead of waiting or taking them twice; the lease keeps a claimed row from being
    /// claimed again while its attempt runs.
    #[instrument(skip_all)]
    async fn claim_deliveries(
        &self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<ClaimedDelivery>> {
        let mut tx = self.pool.begin().await.map_err(map_err)?;
        let rows = sqlx::query(
            // At most PER_WEBHOOK_IN_FLIGHT rows of a webhook in flight, counting those claimed now.
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
        .bind(adjutant_store::PER_WEBHOOK_IN_FLIGHT)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_err)?;
        let claimed = decode_all(&rows, row::claimed_delivery)?;
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

    #[instrument(skip_all)]
    async fn finish_delivery(&self, a: DeliveryAttempt, verdict: DeliveryVerdict) -> Result<()> {
        let at = a.attempted_at;
        let mut tx = self.pool.begin().await.map_err(map_err)?;
        sqlx::query(
            "INSERT INTO webhook_deliveries (outbox_id, attempt, attempted_at, status_code, error, duration_ms)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(a.outbox_id)
        .bind(a.attempt)
        .bind(at)
        .bind(a.status_code)
        .bind(&a.error)
        .bind(a.duration_ms)
        .execute(&mut *tx)
        .await
        .map_err(map_err)?;
        let settle = match &verdict {
            DeliveryVerdict::Delivered => {
                sqlx::query("UPDATE webhook_outbox SET delivered_at = $2, claimed_until = NULL WHERE id = $1").bind(a.outbox_id).bind(at)
            }
            DeliveryVerdict::Gone => sqlx::query(
                "UPDATE webhook_outbox SET gone = TRUE, claimed_until = NULL WHERE id = $1 AND $2::timestamptz IS NOT NULL",
            ).bind(a.outbox_id).bind(at),
            DeliveryVerdict::RetryAt(next) => {
                sqlx::query("UPDATE webhook_outbox SET next_attempt_at = $2, claimed_until = NULL WHERE id = $1").bind(a.outbox_id).bind(*next)
            }
            DeliveryVerdict::GiveUp => {
                sqlx::query("UPDATE webhook_outbox SET given_up_at = $2, claimed_until = NULL WHERE id = $1").bind(a.outbox_id).bind(at)
            }
        };
        settle.execute(&mut *tx).await.map_err(map_err)?;
        if verdict == DeliveryVerdict::Gone {
            sqlx::query(
                "UPDATE webhooks SET disabled_at = $1, disabled_reason = $2
                 WHERE id = (SELECT webhook_id FROM webhook_outbox WHERE id = $3) AND disabled_at IS NULL",
            )
            .bind(at)
            .bind("the endpoint answered 410 Gone")
            .bind(a.outbox_id)
            .execute(&mut *tx)
            .await
            .map_err(map_err)?;
        }
        tx.commit().await.map_err(map_err)?;
        Ok(())
    }

    #[instrument(skip_all)]
    async fn deliveries(&self, webhook_id: Uuid, after: i64, limit: i64) -> Result<Vec<DeliveryLogEntry>> {
        let rows = sqlx::query(
            "SELECT d.id, d.outbox_id, o.outcome_id, d.attempt, d.attempted_at, d.status_code, d.error, d.duration_ms
             FROM webhook_deliveries d JOIN webhook_outbox o ON o.id = d.outbox_id
             WHERE o.webhook_id = $1 AND d.id > $2 ORDER BY d.id LIMIT $3",
        )
        .bind(webhook_id)
        .bind(after)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(map_err)?;
        decode_all(&rows, row::delivery_log_entry)
    }

    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await.map_err(map_err)?;
        Ok(())
    }
}
