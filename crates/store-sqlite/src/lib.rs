//! Adjutant's embedded store: one SQLite file.
//!
//! - WAL journal, set explicitly (sqlx leaves the journal mode alone), and `synchronous=FULL`,
//!   so an acknowledged post survives a power cut, not only a crash of the process.
//! - One writer connection; every write transaction starts with `BEGIN IMMEDIATE`, so it takes
//!   the write lock before reading the tail. A deferred transaction that reads and then writes
//!   can fail with SQLITE_BUSY without waiting; this one waits in the pool instead.
//! - A separate pool of read-only connections: readers never wait for the writer under WAL.
//! - The WAL is checkpointed into the database file by a connection of its own, a moment after
//!   posts were committed, not by the writer's commit while a batch's posts wait for it.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use adjutant_store::append::{AppendSteps, GroupCommit, KnownKey, LastPost};
use adjutant_store::row::{self, bad_column, Columns, OUTCOME_COLUMNS};
use adjutant_store::{
    Acknowledgement, AppendRequest, Appended, Campaign, ClaimedDelivery, ClaimedMail, Contact, DeliveryAttempt,
    DeliveryLogEntry, DeliveryVerdict, MailLogEntry, MailVerdict, NewMail, NewPrincipal, Outcome, Post, Principal,
    PrincipalKind, Result, SharedDecide, Store, StoreError, Tail, Webhook, MAX_BATCH,
};
use async_trait::async_trait;
use chrono::{DateTime, TimeZone, Utc};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow, SqliteSynchronous,
};
use sqlx::{QueryBuilder, Row, Sqlite, SqliteExecutor, Transaction};
use tracing::instrument;
use uuid::Uuid;

mod malloc;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");

pub struct SqliteStore {
    writer: SqlitePool,
    readers: SqlitePool,
    /// Posts waiting for the writer, appended a batch per transaction.
    batches: GroupCommit,
    /// Told of each commit of posts: see [`checkpoint_after_commits`].
    commits: Arc<tokio::sync::Notify>,
    checkpointer: SqlitePool,
    /// Dropped with the store, which stops its checkpointer.
    _checkpointing: tokio::sync::watch::Sender<()>,
}

/// How long after a commit of posts the WAL is checkpointed: under a steady stream of posts, a
/// checkpoint every 30 ms or so. Under 64 writers the WAL grows by some 100 MB a second.
/// Checkpointed once a second, it reached the writer's own threshold first, and every half
/// second a batch waited while its commit copied half a second of pages into the database (p99
/// 19–21 ms, p90 8 ms). Checkpointed often, beside the writer, what is left to the writer's own
/// checkpoint is a few batches' pages: p99 12–14 ms. With the posts spread over 1,000 campaigns
/// (random pages), p99 103 ms at 100 ms, 60–66 ms at 30 ms and 40 ms at 10 ms, where the
/// checkpoints begin to cost posts per second (2,950 at 30 ms, 2,690 at 10 ms).
const CHECKPOINT_AFTER: Duration = Duration::from_millis(30);

/// The writer's own automatic checkpoint, in pages of the WAL (SQLite's default is 1,000): a
/// backstop, should the checkpointer fall behind, and what starts the WAL over from its first
/// page under a stream of posts (the writer does that only when it begins a transaction with
/// every page of the WAL copied, as it is right after a checkpoint of its own). Smaller, it
/// comes more often and costs posts per second: at 1,000 campaigns, 2,000 pages gave p99 45 ms
/// at 2,500 posts/s, 16,384 pages p99 103 ms at 3,200 posts/s (both with the checkpointer at
/// 100 ms after commits).
const WRITER_CHECKPOINT_PAGES: &str = "16384";

/// SQLite checkpoints the WAL on the connection whose commit made it long enough: the writer's,
/// with every post of the batch waiting for its answer. Here a connection of its own does it, a
/// moment after posts were committed. A PASSIVE checkpoint never holds up the writer or the
/// readers; what it cannot copy yet, the next one does.
async fn checkpoint_after_commits(
    pool: SqlitePool,
    commits: Arc<tokio::sync::Notify>,
    mut stop: tokio::sync::watch::Receiver<()>,
) {
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            () = commits.notified() => {}
        }
        tokio::select! {
            _ = stop.changed() => return,
            () = tokio::time::sleep(CHECKPOINT_AFTER) => {}
        }
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(&pool).await {
            if pool.is_closed() {
                return;
            }
            tracing::warn!(error = %e, "a WAL checkpoint failed; the next one, or the writer's own, copies those pages");
        }
    }
}

impl SqliteStore {
    /// Commits at most `max_batch` posts at once (group commit; 1: each post on its own).
    pub fn with_max_batch(mut self, max_batch: usize) -> Self {
        self.batches = GroupCommit::new(max_batch);
        self
    }

    /// Opens (creating if missing) the database at `url` (`sqlite://path/to/file.db`) and brings
    /// its schema up to date.
    pub async fn open(url: &str) -> Result<Self> {
        malloc::use_mimalloc();
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Database(format!("bad SQLite URL: {e}")))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(30));
        // A connection in this process cannot drop away like a socket: no liveness test (a
        // round trip to the connection's thread) before each use.
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(30))
            // A batch's savepoint keeps the pages it changes in a journal of its own: in memory,
            // not in a temporary file.
            .connect_with(
                options.clone().pragma("temp_store", "memory").pragma("wal_autocheckpoint", WRITER_CHECKPOINT_PAGES),
            )
            .await
            .map_err(map_err)?;
        MIGRATOR.run(&writer).await.map_err(|e| StoreError::Database(format!("migrations: {e}")))?;
        let checkpointer = SqlitePoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .connect_with(options.clone())
            .await
            .map_err(map_err)?;
        let commits = Arc::new(tokio::sync::Notify::new());
        let (checkpointing, stop) = tokio::sync::watch::channel(());
        tokio::spawn(checkpoint_after_commits(checkpointer.clone(), commits.clone(), stop));
        let readers = SqlitePoolOptions::new()
            .max_connections(4)
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(30))
            // A page of rows (the audit reads up to four thousand posts at a time) fits in the
            // channel from SQLite's thread, which then runs through the query without waiting
            // for the reader.
            .connect_with(options.read_only(true).row_buffer_size(4096))
            .await
            .map_err(map_err)?;
        Ok(Self {
            writer,
            readers,
            batches: GroupCommit::new(MAX_BATCH),
            commits,
            checkpointer,
            _checkpointing: checkpointing,
        })
    }

    pub async fn close(&self) {
        self.readers.close().await;
        self.checkpointer.close().await;
        self.writer.close().await;
    }
}

/// A time stored as UTC milliseconds.
fn millis(ms: i64) -> Result<DateTime<Utc>> {
    Utc.timestamp_millis_opt(ms).single().ok_or_else(|| StoreError::Database(format!("a time out of range: {ms}")))
}

fn uuid_text(text: String) -> Result<Uuid> {
    Uuid::parse_str(&text).map_err(|e| StoreError::Database(e.to_string()))
}

/// A row of `mail_outbox` as claimed.
fn claimed_mail(row: &SqliteRow) -> Result<ClaimedMail> {
    Ok(ClaimedMail {
        mail: NewMail {
            key: row.try_get("key").map_err(map_err)?,
            campaign_id: uuid_text(row.try_get("campaign_id").map_err(map_err)?)?,
            principal_id: uuid_text(row.try_get("principal_id").map_err(map_err)?)?,
            to: row.try_get("to_addr").map_err(map_err)?,
            subject: row.try_get("subject").map_err(map_err)?,
            body: row.try_get("body").map_err(map_err)?,
            about: row.try_get("about").map_err(map_err)?,
            due_at: millis(row.try_get("due_at").map_err(map_err)?)?,
        },
        attempts: row.try_get("attempts").map_err(map_err)?,
    })
}

/// A row of `mail_outbox` for the log.
fn mail_log_entry(row: &SqliteRow) -> Result<MailLogEntry> {
    let sent: Option<i64> = row.try_get("sent_at").map_err(map_err)?;
    Ok(MailLogEntry {
        key: row.try_get("key").map_err(map_err)?,
        principal_id: uuid_text(row.try_get("principal_id").map_err(map_err)?)?,
        to: row.try_get("to_addr").map_err(map_err)?,
        subject: row.try_get("subject").map_err(map_err)?,
        due_at: millis(row.try_get("due_at").map_err(map_err)?)?,
        attempts: row.try_get("attempts").map_err(map_err)?,
        sent_at: sent.map(millis).transpose()?,
        skipped: row.try_get("skipped").map_err(map_err)?,
        last_error: row.try_get("last_error").map_err(map_err)?,
    })
}

/// A row of `player_contacts`.
fn contact(row: &SqliteRow) -> Result<Contact> {
    Ok(Contact {
        forum_handle: row.try_get("forum_handle").map_err(map_err)?,
        discord_user_id: row.try_get("discord_user_id").map_err(map_err)?,
        email: row.try_get("email").map_err(map_err)?,
    })
}

fn map_err(err: sqlx::Error) -> StoreError {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::Conflict(db.message().to_owned()),
        // SQLITE_BUSY / SQLITE_LOCKED (and their extended codes): another process holds the
        // file. Say "try again" rather than pass "database is locked" on.
        sqlx::Error::Database(db)
            if db.code().and_then(|c| c.parse::<i32>().ok()).is_some_and(|c| matches!(c & 0xff, 5 | 6)) =>
        {
            StoreError::Unavailable(db.message().to_owned())
        }
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => {
            StoreError::Unavailable(err.to_string())
        }
        _ => StoreError::Database(err.to_string()),
    }
}

fn ms_to_time(ms: i64) -> Result<DateTime<Utc>> {
    Utc.timestamp_millis_opt(ms).single().ok_or_else(|| StoreError::Database(format!("bad time stamp {ms}")))
}

fn uuid(text: &str) -> Result<Uuid> {
    Uuid::parse_str(text).map_err(|e| StoreError::Database(format!("bad uuid {text:?}: {e}")))
}

/// A row read in domain types: ids are kept as text, times as milliseconds since the epoch.
struct Cols<'r>(&'r SqliteRow);

impl Cols<'_> {
    fn get<'r, T: sqlx::Decode<'r, Sqlite> + sqlx::Type<Sqlite>>(&'r self, column: &str) -> Result<T> {
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
        self.get::<Option<String>>(column)?.as_deref().map(uuid).transpose()
    }
    fn opt_time(&self, column: &str) -> Result<Option<DateTime<Utc>>> {
        self.get::<Option<i64>>(column)?.map(ms_to_time).transpose()
    }
}

fn decode<T>(row: &SqliteRow, read: fn(&dyn Columns) -> Result<T>) -> Result<T> {
    read(&Cols(row))
}

fn decode_all<T>(rows: &[SqliteRow], read: fn(&dyn Columns) -> Result<T>) -> Result<Vec<T>> {
    rows.iter().map(|row| read(&Cols(row))).collect()
}

const POST_COLUMNS: &str =
    "campaign_id, seq, stamp_ms, author_id, side, kind, body, prev_hash, hash, receipt_key_id, receipt_signature";
/// The columns of a post as `row::post` reads them.
const POST_SELECT: &str = "campaign_id, seq, stamp_ms AS stamp, author_id, side, kind, body, prev_hash, hash, \
     receipt_key_id, receipt_signature";

/// The Standard Webhooks body of each outcome of one post, for each active webhook of its campaign.
// `INDEXED BY`: without statistics SQLite would walk the campaign's outcomes (or posts) in
// position order to spare a sort, and a post's cost would grow with the campaign.
const OUTBOX_INSERT: &str = "INSERT INTO webhook_outbox (webhook_id, outcome_id, payload)
     SELECT w.id, o.id, json_object(
         'type', 'outcome.created',
         'timestamp', ?1,
         'data', json_object(
             'id', o.id, 'campaign_id', o.campaign_id, 'position', o.position, 'seq', o.seq,
             'kind', o.kind, 'headline', json_extract(o.data, '$.headline'), 'data', json_extract(o.data, '$.data'),
             'hash', p.hash,
             'receipt', CASE WHEN p.receipt_key_id IS NULL THEN NULL
                        ELSE json_object('key_id', p.receipt_key_id, 'signature', p.receipt_signature) END))
     FROM outcomes o INDEXED BY outcomes_by_post
     JOIN webhooks w ON w.campaign_id = o.campaign_id AND w.disabled_at IS NULL
     JOIN posts p ON p.campaign_id = o.campaign_id AND p.seq = o.seq
     WHERE o.campaign_id = ?2 AND o.seq = ?3
     ORDER BY o.position, w.created_at, w.id";

async fn select_post<'e>(db: impl SqliteExecutor<'e>, campaign_id: Uuid, seq: i64) -> Result<Option<Post>> {
    let row = sqlx::query(&format!("SELECT {POST_SELECT} FROM posts WHERE campaign_id = ? AND seq = ?"))
        .bind(campaign_id.to_string())
        .bind(seq)
        .fetch_optional(db)
        .await
        .map_err(map_err)?;
    row.as_ref().map(|row| decode(row, row::post)).transpose()
}

/// The outcomes of posts `after < seq <= through`, in position order.
// `INDEXED BY`: the post range picks the rows; walking the campaign's outcomes in position order
// instead (to spare the sort) would cost a page as much as the whole campaign.
async fn select_outcomes_of_posts<'e>(
    db: impl SqliteExecutor<'e>,
    campaign_id: Uuid,
    after: i64,
    through: i64,
) -> Result<Vec<Outcome>> {
    let rows = sqlx::query(&format!(
        "SELECT {OUTCOME_COLUMNS} FROM outcomes INDEXED BY outcomes_by_post
         WHERE campaign_id = ? AND seq > ? AND seq <= ? ORDER BY position"
    ))
    .bind(campaign_id.to_string())
    .bind(after)
    .bind(through)
    .fetch_all(db)
    .await
    .map_err(map_err)?;
    decode_all(&rows, row::outcome)
}

async fn select_snapshot_at<'e>(
    db: impl SqliteExecutor<'e>,
    campaign_id: Uuid,
    seq: i64,
) -> Result<Option<(i64, String)>> {
    let row =
        sqlx::query("SELECT seq, state FROM snapshots WHERE campaign_id = ? AND seq <= ? ORDER BY seq DESC LIMIT 1")
            .bind(campaign_id.to_string())
            .bind(seq)
            .fetch_optional(db)
            .await
            .map_err(map_err)?;
    row.as_ref().map(|row| decode(row, row::snapshot)).transpose()
}

/// The most rows one INSERT of a batch carries: SQLite takes at most 32,766 parameters a
/// statement, and a post's row has 11.
const ROWS_PER_STATEMENT: usize = 1000;

/// An append's steps, inside a `BEGIN IMMEDIATE` transaction: the single writer holds the
/// database's write lock from the tail read to the commit.
struct Append(Transaction<'static, Sqlite>, Arc<tokio::sync::Notify>);

#[async_trait]
impl AppendSteps for Append {
    async fn known_key(&mut self, principal_id: Uuid, key: &str) -> Result<Option<KnownKey>> {
        let row = sqlx::query(
            "SELECT campaign_id, request_hash, seq FROM idempotency_keys WHERE principal_id = ? AND key = ?",
        )
        .bind(principal_id.to_string())
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
        let row = sqlx::query(
            "SELECT seq, hash, stamp_ms AS stamp FROM posts WHERE campaign_id = ? ORDER BY seq DESC LIMIT 1",
        )
        .bind(campaign_id.to_string())
        .fetch_optional(&mut *self.0)
        .await
        .map_err(map_err)?;
        row.as_ref().map(|row| decode(row, row::last_post)).transpose()
    }

    async fn snapshot_at(&mut self, campaign_id: Uuid, seq: i64) -> Result<Option<(i64, String)>> {
        select_snapshot_at(&mut *self.0, campaign_id, seq).await
    }

    async fn last_position(&mut self, campaign_id: Uuid) -> Result<i64> {
        // The last position straight off the index; `MAX(position)` would read every outcome
        // of the campaign on SQLite, and a post's cost would grow with the campaign.
        sqlx::query_scalar(
            "SELECT COALESCE((SELECT position FROM outcomes WHERE campaign_id = ? ORDER BY position DESC LIMIT 1), 0)",
        )
        .bind(campaign_id.to_string())
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
        for keys in keys.chunks(ROWS_PER_STATEMENT) {
            let mut query = QueryBuilder::<Sqlite>::new(
                "SELECT EXISTS (SELECT 1 FROM idempotency_keys WHERE (principal_id, key) IN (",
            );
            query.push_values(keys, |mut row, (principal_id, key)| {
                row.push_bind(principal_id.to_string()).push_bind(*key);
            });
            query.push("))");
            if query.build_query_scalar().fetch_one(&mut *self.0).await.map_err(map_err)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn has_webhooks(&mut self, campaign_id: Uuid) -> Result<bool> {
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM webhooks WHERE campaign_id = ? AND disabled_at IS NULL)")
            .bind(campaign_id.to_string())
            .fetch_one(&mut *self.0)
            .await
            .map_err(map_err)
    }

    async fn tails(&mut self, campaign_ids: &[Uuid]) -> Result<Vec<(Uuid, Tail, bool)>> {
        let mut tails = Vec::with_capacity(campaign_ids.len());
        for campaign_ids in campaign_ids.chunks(ROWS_PER_STATEMENT) {
            // Each a seek on an index from its end: the cost does not grow with the log.
            let mut query = QueryBuilder::<Sqlite>::new(
                "SELECT t.*,
                    (SELECT seq FROM snapshots WHERE campaign_id = t.campaign_id AND seq <= t.last_seq
                      ORDER BY seq DESC LIMIT 1) AS snapshot_seq,
                    (SELECT state FROM snapshots WHERE campaign_id = t.campaign_id AND seq <= t.last_seq
                      ORDER BY seq DESC LIMIT 1) AS snapshot_state
                 FROM (SELECT a.column1 AS campaign_id,
                    (SELECT seq FROM posts WHERE campaign_id = a.column1 ORDER BY seq DESC LIMIT 1) AS last_seq,
                    (SELECT hash FROM posts WHERE campaign_id = a.column1 ORDER BY seq DESC LIMIT 1) AS last_hash,
                    (SELECT stamp_ms FROM posts WHERE campaign_id = a.column1 ORDER BY seq DESC LIMIT 1) AS last_stamp,
                    (SELECT position FROM outcomes WHERE campaign_id = a.column1 ORDER BY position DESC LIMIT 1)
                      AS last_position,
                    EXISTS (SELECT 1 FROM webhooks WHERE campaign_id = a.column1 AND disabled_at IS NULL) AS webhooks
                  FROM (",
            );
            query.push_values(campaign_ids, |mut row, id| {
                row.push_bind(id.to_string());
            });
            query.push(") AS a) AS t");
            let rows = query.build().fetch_all(&mut *self.0).await.map_err(map_err)?;
            tails.extend(decode_all(&rows, row::tail)?);
        }
        Ok(tails)
    }

    async fn insert_posts(&mut self, posts: &[&Post]) -> Result<()> {
        for posts in posts.chunks(ROWS_PER_STATEMENT) {
            let mut query = QueryBuilder::<Sqlite>::new(format!("INSERT INTO posts ({POST_COLUMNS}) "));
            query.push_values(posts, |mut row, post| {
                row.push_bind(post.campaign_id.to_string())
                    .push_bind(post.seq)
                    .push_bind(post.stamp.timestamp_millis())
                    .push_bind(post.author_id.to_string())
                    .push_bind(post.side.as_deref())
                    .push_bind(post.kind.as_str())
                    .push_bind(post.body.as_str())
                    .push_bind(post.prev_hash.as_str())
                    .push_bind(post.hash.as_str())
                    .push_bind(post.receipt.as_ref().map(|r| r.key_id.as_str()))
                    .push_bind(post.receipt.as_ref().map(|r| r.signature.as_str()));
            });
            query.build().execute(&mut *self.0).await.map_err(map_err)?;
        }
        Ok(())
    }

    async fn insert_outcomes(&mut self, outcomes: &[&Outcome]) -> Result<()> {
        for outcomes in outcomes.chunks(ROWS_PER_STATEMENT) {
            let mut query = QueryBuilder::<Sqlite>::new(format!("INSERT INTO outcomes ({OUTCOME_COLUMNS}) "));
            query.push_values(outcomes, |mut row, outcome| {
                row.push_bind(outcome.id.to_string())
                    .push_bind(outcome.campaign_id.to_string())
                    .push_bind(outcome.position)
                    .push_bind(outcome.seq)
                    .push_bind(outcome.kind.as_str())
                    .push_bind(outcome.data.as_str());
            });
            query.build().execute(&mut *self.0).await.map_err(map_err)?;
        }
        Ok(())
    }

    async fn enqueue_deliveries(&mut self, campaign_id: Uuid, seq: i64, timestamp: &str) -> Result<()> {
        sqlx::query(OUTBOX_INSERT)
            .bind(timestamp)
            .bind(campaign_id.to_string())
            .bind(seq)
            .execute(&mut *self.0)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn insert_snapshot(&mut self, campaign_id: Uuid, seq: i64, state: &str) -> Result<()> {
        sqlx::query("INSERT INTO snapshots (campaign_id, seq, state) VALUES (?, ?, ?)")
            .bind(campaign_id.to_string())
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
        for keys in keys.chunks(ROWS_PER_STATEMENT) {
            let mut query = QueryBuilder::<Sqlite>::new(
                "INSERT INTO idempotency_keys (principal_id, key, campaign_id, request_hash, seq) ",
            );
            query.push_values(keys, |mut row, (request, seq)| {
                row.push_bind(request.author_id.to_string())
                    .push_bind(request.idempotency_key.as_str())
                    .push_bind(request.campaign_id.to_string())
                    .push_bind(request.request_hash.as_str())
                    .push_bind(*seq);
            });
            query.build().execute(&mut *self.0).await.map_err(map_err)?;
        }
        Ok(())
    }

    async fn lock_campaign(&mut self, _campaign_id: Uuid) -> Result<()> {
        // `BEGIN IMMEDIATE` took the database's one write lock already.
        Ok(())
    }

    async fn execute(&mut self, sql: &'static str) -> Result<()> {
        sqlx::query(sql).execute(&mut *self.0).await.map_err(map_err).map(|_| ())
    }

    async fn commit(self) -> Result<()> {
        self.0.commit().await.map_err(map_err)?;
        self.1.notify_one();
        Ok(())
    }
}

#[async_trait]
impl Store for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    #[instrument(skip_all)]
    async fn create_principal(&self, new: NewPrincipal) -> Result<Principal> {
        let p = &new.principal;
        sqlx::query(
            "INSERT INTO principals (id, kind, name, token_hash, campaign_id, side, created_by, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(p.id.to_string())
        .bind(p.kind.as_str())
        .bind(&p.name)
        .bind(&new.token_hash[..])
        .bind(p.campaign_id.map(|id| id.to_string()))
        .bind(&p.side)
        .bind(p.created_by.map(|id| id.to_string()))
        .bind(p.created_at.timestamp_millis())
        .execute(&self.writer)
        .await
        .map_err(map_err)?;
        Ok(new.principal)
    }

    #[instrument(skip_all)]
    async fn principal_by_token_hash(&self, token_hash: &[u8; 32]) -> Result<Option<Principal>> {
        let row = sqlx::query("SELECT * FROM principals WHERE token_hash = ? AND revoked_at IS NULL")
            .bind(&token_hash[..])
            .fetch_optional(&self.readers)
            .await
            .map_err(map_err)?;
        row.as_ref().map(|row| decode(row, row::principal)).transpose()
    }

    #[instrument(skip_all)]
    async fn principal(&self, id: Uuid) -> Result<Option<(Principal, Option<DateTime<Utc>>)>> {
        let row = sqlx::query("SELECT * FROM principals WHERE id = ?")
            .bind(id.to_string())
            .fetch_optional(&self.readers)
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
        let rows =
            sqlx::query("SELECT * FROM principals WHERE campaign_id = ? AND kind = ? ORDER BY created_at, id LIMIT ?")
                .bind(campaign_id.to_string())
                .bind(kind.as_str())
                .bind(limit)
                .fetch_all(&self.readers)
                .await
                .map_err(map_err)?;
        rows.iter().map(|row| decode(row, row::principal_and_revocation)).collect()
    }

    #[instrument(skip_all)]
    async fn revoke_principal(&self, id: Uuid, at: DateTime<Utc>) -> Result<bool> {
        let done = sqlx::query("UPDATE principals SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?")
            .bind(at.timestamp_millis())
            .bind(id.to_string())
            .execute(&self.writer)
            .await
            .map_err(map_err)?;
        Ok(done.rows_affected() > 0)
    }

    #[instrument(skip_all)]
    async fn replace_token(&self, id: Uuid, token_hash: &[u8; 32]) -> Result<bool> {
        let done = sqlx::query("UPDATE principals SET token_hash = ? WHERE id = ? AND revoked_at IS NULL")
            .bind(&token_hash[..])
            .bind(id.to_string())
            .execute(&self.writer)
            .await
            .map_err(map_err)?;
        Ok(done.rows_affected() > 0)
    }

    #[instrument(skip_all)]
    async fn set_contact(&self, principal_id: Uuid, contact: &Contact, at: DateTime<Utc>) -> Result<bool> {
        let done = sqlx::query(
            "INSERT INTO player_contacts (principal_id, forum_handle, discord_user_id, email, updated_at)
             SELECT id, ?, ?, ?, ? FROM principals WHERE id = ?
             ON CONFLICT (principal_id) DO UPDATE SET forum_handle = excluded.forum_handle,
                 discord_user_id = excluded.discord_user_id, email = excluded.email, updated_at = excluded.updated_at",
        )
        .bind(&contact.forum_handle)
        .bind(&contact.discord_user_id)
        .bind(&contact.email)
        .bind(at.timestamp_millis())
        .bind(principal_id.to_string())
        .execute(&self.writer)
        .await
        .map_err(map_err)?;
        Ok(done.rows_affected() > 0)
    }

    #[instrument(skip_all)]
    async fn campaign_contacts(&self, campaign_id: Uuid) -> Result<Vec<(Uuid, Contact)>> {
        let rows = sqlx::query(
            "SELECT c.principal_id, c.forum_handle, c.discord_user_id, c.email FROM player_contacts c
             JOIN principals p ON p.id = c.principal_id WHERE p.campaign_id = ? ORDER BY p.created_at, p.id",
        )
        .bind(campaign_id.to_string())
        .fetch_all(&self.readers)
        .await
        .map_err(map_err)?;
        rows.iter()
            .map(|row| {
                let id: String = row.try_get("principal_id").map_err(map_err)?;
                let id = Uuid::parse_str(&id).map_err(|e| StoreError::Database(e.to_string()))?;
                Ok((id, contact(row)?))
            })
            .collect()
    }

    #[instrument(skip_all)]
    async fn queue_mail(&self, mail: &NewMail) -> Result<bool> {
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
        .execute(&self.writer)
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
            "SELECT EXISTS (SELECT 1 FROM mail_outbox WHERE sent_at IS NULL AND due_at <= ?1
                             AND (claimed_until IS NULL OR claimed_until <= ?1))",
        )
        .bind(now.timestamp_millis())
        .fetch_one(&self.readers)
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
        .bind(adjutant_store::MAIL_MAX_ATTEMPTS)
        .bind(limit)
        .fetch_all(&self.writer)
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
                "UPDATE mail_outbox SET sent_at = ?1, claimed_until = NULL, last_error = NULL WHERE key = ?2",
            )
            .bind(at.timestamp_millis())
            .bind(key),
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
        query.execute(&self.writer).await.map_err(map_err)?;
        Ok(())
    }

    #[instrument(skip_all)]
    async fn mails(&self, campaign_id: Uuid, limit: i64) -> Result<Vec<MailLogEntry>> {
        let rows = sqlx::query(
            "SELECT key, principal_id, to_addr, subject, due_at, attempts, sent_at, skipped, last_error
             FROM mail_outbox WHERE campaign_id = ?1 ORDER BY due_at DESC, key LIMIT ?2",
        )
        .bind(campaign_id.to_string())
        .bind(limit)
        .fetch_all(&self.readers)
        .await
        .map_err(map_err)?;
        rows.iter().map(mail_log_entry).collect()
    }

    #[instrument(skip_all)]
    async fn create_campaign(&self, c: Campaign) -> Result<Campaign> {
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
        .execute(&self.writer)
        .await
        .map_err(map_err)?;
        Ok(c)
    }

    #[instrument(skip_all)]
    async fn campaign(&self, id: Uuid) -> Result<Option<Campaign>> {
        let row = sqlx::query("SELECT * FROM campaigns WHERE id = ?")
            .bind(id.to_string())
            .fetch_optional(&self.readers)
            .await
            .map_err(map_err)?;
        row.as_ref().map(|row| decode(row, row::campaign)).transpose()
    }

    #[instrument(skip_all)]
    async fn campaigns(&self, moderator: Option<Uuid>, after: Option<Uuid>, limit: i64) -> Result<Vec<Campaign>> {
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
        let rows = query.bind(limit).fetch_all(&self.readers).await.map_err(map_err)?;
        decode_all(&rows, row::campaign)
    }

    #[instrument(skip_all, fields(campaign = %request.campaign_id))]
    async fn append_post(&self, request: AppendRequest, decide: SharedDecide) -> Result<Appended> {
        let (writer, commits) = (self.writer.clone(), self.commits.clone());
        let begin = move || {
            let (writer, commits) = (writer.clone(), commits.clone());
            async move {
                let transaction = writer.begin_with("BEGIN IMMEDIATE").await.map_err(map_err)?;
                Ok(Append(transaction, commits))
            }
        };
        self.batches.append(request, decide, begin).await
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
            "SELECT {POST_SELECT} FROM posts WHERE campaign_id = ? AND seq > ? ORDER BY seq LIMIT ?"
        ))
        .bind(campaign_id.to_string())
        .bind(after)
        .bind(limit)
        .fetch_all(&self.readers)
        .await
        .map_err(map_err)?;
        decode_all(&rows, row::post)
    }

    #[instrument(skip_all)]
    async fn post(&self, campaign_id: Uuid, seq: i64) -> Result<Option<Post>> {
        select_post(&self.readers, campaign_id, seq).await
    }

    #[instrument(skip_all)]
    async fn head(&self, campaign_id: Uuid) -> Result<Option<Post>> {
        let row =
            sqlx::query(&format!("SELECT {POST_SELECT} FROM posts WHERE campaign_id = ? ORDER BY seq DESC LIMIT 1"))
                .bind(campaign_id.to_string())
                .fetch_optional(&self.readers)
                .await
                .map_err(map_err)?;
        row.as_ref().map(|row| decode(row, row::post)).transpose()
    }

    #[instrument(skip_all)]
    async fn latest_outcomes(&self, campaign_id: Uuid, limit: i64) -> Result<Vec<Outcome>> {
        let rows = sqlx::query(&format!(
            "SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = ? ORDER BY position DESC LIMIT ?"
        ))
        .bind(campaign_id.to_string())
        .bind(limit)
        .fetch_all(&self.readers)
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
            "SELECT COUNT(*) FROM posts WHERE campaign_id = ? AND author_id = ? AND kind = ? AND stamp_ms >= ?",
        )
        .bind(campaign_id.to_string())
        .bind(author_id.to_string())
        .bind(kind)
        .bind(since.timestamp_millis())
        .fetch_one(&self.readers)
        .await
        .map_err(map_err)
    }

    #[instrument(skip_all)]
    async fn keep_campaign_secret(&self, campaign_id: Uuid, chain: i64, secret: &str) -> Result<String> {
        sqlx::query(
            "INSERT INTO campaign_secrets (campaign_id, chain, secret) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        )
        .bind(campaign_id.to_string())
        .bind(chain)
        .bind(secret)
        .execute(&self.writer)
        .await
        .map_err(map_err)?;
        sqlx::query_scalar("SELECT secret FROM campaign_secrets WHERE campaign_id = ? AND chain = ?")
            .bind(campaign_id.to_string())
            .bind(chain)
            .fetch_one(&self.writer)
            .await
            .map_err(map_err)
    }

    #[instrument(skip_all)]
    async fn campaign_secrets(&self, campaign_id: Uuid) -> Result<Vec<(i64, String)>> {
        sqlx::query_as("SELECT chain, secret FROM campaign_secrets WHERE campaign_id = ? ORDER BY chain")
            .bind(campaign_id.to_string())
            .fetch_all(&self.readers)
            .await
            .map_err(map_err)
    }

    #[instrument(skip_all)]
    async fn count_outcomes_of_kind(&self, campaign_id: Uuid, kind: &str) -> Result<i64> {
        sqlx::query_scalar(
            "SELECT COUNT(*) FROM outcomes INDEXED BY outcomes_by_kind WHERE campaign_id = ? AND kind = ?",
        )
        .bind(campaign_id.to_string())
        .bind(kind)
        .fetch_one(&self.readers)
        .await
        .map_err(map_err)
    }

    #[instrument(skip_all)]
    async fn posts_of_kind(&self, campaign_id: Uuid, kind: &str) -> Result<Vec<Post>> {
        let rows = sqlx::query(&format!(
            "SELECT {POST_SELECT} FROM posts INDEXED BY posts_by_kind WHERE campaign_id = ? AND kind = ? ORDER BY seq"
        ))
        .bind(campaign_id.to_string())
        .bind(kind)
        .fetch_all(&self.readers)
        .await
        .map_err(map_err)?;
        decode_all(&rows, row::post)
    }

    #[instrument(skip_all)]
    async fn outcomes_of_kind(&self, campaign_id: Uuid, kind: &str, limit: i64) -> Result<Vec<Outcome>> {
        let rows = sqlx::query(&format!(
            "SELECT {OUTCOME_COLUMNS} FROM outcomes INDEXED BY outcomes_by_kind WHERE campaign_id = ? AND kind = ? ORDER BY position LIMIT ?"
        ))
        .bind(campaign_id.to_string())
        .bind(kind)
        .bind(limit)
        .fetch_all(&self.readers)
        .await
        .map_err(map_err)?;
        decode_all(&rows, row::outcome)
    }

    #[instrument(skip_all)]
    async fn outcomes(&self, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<Outcome>> {
        let rows = sqlx::query(&format!(
            "SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = ? AND position > ? ORDER BY position LIMIT ?"
        ))
        .bind(campaign_id.to_string())
        .bind(after)
        .bind(limit)
        .fetch_all(&self.readers)
        .await
        .map_err(map_err)?;
        decode_all(&rows, row::outcome)
    }

    #[instrument(skip_all)]
    async fn outcomes_of_post(&self, campaign_id: Uuid, seq: i64) -> Result<Vec<Outcome>> {
        select_outcomes_of_posts(&self.readers, campaign_id, seq - 1, seq).await
    }

    #[instrument(skip_all)]
    async fn outcomes_of_posts(&self, campaign_id: Uuid, after: i64, through: i64) -> Result<Vec<Outcome>> {
        select_outcomes_of_posts(&self.readers, campaign_id, after, through).await
    }

    #[instrument(skip_all)]
    async fn snapshots(&self, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<(i64, String)>> {
        let rows =
            sqlx::query("SELECT seq, state FROM snapshots WHERE campaign_id = ? AND seq > ? ORDER BY seq LIMIT ?")
                .bind(campaign_id.to_string())
                .bind(after)
                .bind(limit)
                .fetch_all(&self.readers)
                .await
                .map_err(map_err)?;
        decode_all(&rows, row::snapshot)
    }

    #[instrument(skip_all)]
    async fn snapshot_at(&self, campaign_id: Uuid, seq: i64) -> Result<Option<(i64, String)>> {
        select_snapshot_at(&self.readers, campaign_id, seq).await
    }

    #[instrument(skip_all)]
    async fn outcome(&self, campaign_id: Uuid, id: Uuid) -> Result<Option<Outcome>> {
        let row = sqlx::query(&format!("SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = ? AND id = ?"))
            .bind(campaign_id.to_string())
            .bind(id.to_string())
            .fetch_optional(&self.readers)
            .await
            .map_err(map_err)?;
        row.as_ref().map(|row| decode(row, row::outcome)).transpose()
    }

    #[instrument(skip_all)]
    async fn pending_outcomes(&self, bot: &Principal, limit: i64) -> Result<Vec<Outcome>> {
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
        .fetch_all(&self.readers)
        .await
        .map_err(map_err)?;
        decode_all(&rows, row::outcome)
    }

    #[instrument(skip_all)]
    async fn acknowledge(&self, ack: Acknowledgement) -> Result<Acknowledgement> {
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await.map_err(map_err)?;
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
        decode(&row, row::acknowledgement)
    }

    #[instrument(skip_all)]
    async fn create_webhook(&self, w: Webhook) -> Result<Webhook> {
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
        .execute(&self.writer)
        .await
        .map_err(map_err)?;
        Ok(w)
    }

    #[instrument(skip_all)]
    async fn replace_webhook_secret(&self, id: Uuid, secret: &str) -> Result<bool> {
        let done = sqlx::query("UPDATE webhooks SET secret = ? WHERE id = ? AND disabled_at IS NULL")
            .bind(secret)
            .bind(id.to_string())
            .execute(&self.writer)
            .await
            .map_err(map_err)?;
        Ok(done.rows_affected() > 0)
    }

    #[instrument(skip_all)]
    async fn disable_webhook(&self, id: Uuid, at: DateTime<Utc>, reason: &str) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE webhooks SET disabled_at = ?, disabled_reason = ? WHERE id = ? AND disabled_at IS NULL",
        )
        .bind(at.timestamp_millis())
        .bind(reason)
        .bind(id.to_string())
        .execute(&self.writer)
        .await
        .map_err(map_err)?;
        Ok(done.rows_affected() > 0)
    }

    #[instrument(skip_all)]
    async fn webhooks(&self, campaign_id: Uuid) -> Result<Vec<Webhook>> {
        let rows = sqlx::query("SELECT * FROM webhooks WHERE campaign_id = ? ORDER BY created_at, id")
            .bind(campaign_id.to_string())
            .fetch_all(&self.readers)
            .await
            .map_err(map_err)?;
        decode_all(&rows, row::webhook)
    }

    #[instrument(skip_all)]
    async fn webhook(&self, id: Uuid) -> Result<Option<Webhook>> {
        let row = sqlx::query("SELECT * FROM webhooks WHERE id = ?")
            .bind(id.to_string())
            .fetch_optional(&self.readers)
            .await
            .map_err(map_err)?;
        row.as_ref().map(|row| decode(row, row::webhook)).transpose()
    }

    /// The single writer serialises claims: the lease keeps a row from being claimed again
    /// while its attempt runs.
    #[instrument(skip_all)]
    async fn claim_deliveries(
        &self,
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
            .fetch_one(&self.readers)
            .await
            .map_err(map_err)?;
        if !any {
            return Ok(Vec::new());
        }
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await.map_err(map_err)?;
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
        .bind(adjutant_store::PER_WEBHOOK_IN_FLIGHT)
        .fetch_all(&mut *tx)
        .await
        .map_err(map_err)?;
        let claimed = decode_all(&rows, row::claimed_delivery)?;
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

    #[instrument(skip_all)]
    async fn finish_delivery(&self, a: DeliveryAttempt, verdict: DeliveryVerdict) -> Result<()> {
        let at = a.attempted_at.timestamp_millis();
        let mut tx = self.writer.begin_with("BEGIN IMMEDIATE").await.map_err(map_err)?;
        sqlx::query(
            "INSERT INTO webhook_deliveries (outbox_id, attempt, attempted_at, status_code, error, duration_ms)
             VALUES (?, ?, ?, ?, ?, ?)",
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
                sqlx::query("UPDATE webhook_outbox SET delivered_at = ?2, claimed_until = NULL WHERE id = ?1")
                    .bind(a.outbox_id)
                    .bind(at)
            }
            DeliveryVerdict::Gone => {
                sqlx::query("UPDATE webhook_outbox SET gone = 1, claimed_until = NULL WHERE id = ?1 AND ?2 IS NOT NULL")
                    .bind(a.outbox_id)
                    .bind(at)
            }
            DeliveryVerdict::RetryAt(next) => {
                sqlx::query("UPDATE webhook_outbox SET next_attempt_at = ?2, claimed_until = NULL WHERE id = ?1")
                    .bind(a.outbox_id)
                    .bind(next.timestamp_millis())
            }
            DeliveryVerdict::GiveUp => {
                sqlx::query("UPDATE webhook_outbox SET given_up_at = ?2, claimed_until = NULL WHERE id = ?1")
                    .bind(a.outbox_id)
                    .bind(at)
            }
        };
        settle.execute(&mut *tx).await.map_err(map_err)?;
        if verdict == DeliveryVerdict::Gone {
            sqlx::query(
                "UPDATE webhooks SET disabled_at = ?, disabled_reason = ?
                 WHERE id = (SELECT webhook_id FROM webhook_outbox WHERE id = ?) AND disabled_at IS NULL",
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
             WHERE o.webhook_id = ? AND d.id > ? ORDER BY d.id LIMIT ?",
        )
        .bind(webhook_id.to_string())
        .bind(after)
        .bind(limit)
        .fetch_all(&self.readers)
        .await
        .map_err(map_err)?;
        decode_all(&rows, row::delivery_log_entry)
    }

    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.readers).await.map_err(map_err)?;
        Ok(())
    }
}
