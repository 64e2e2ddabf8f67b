//! Appending posts: the steps of [`adjutant_store::append`] in SQLite's SQL.
//!
//! A batch's own statements (its transaction, its tails and keys, its rows, its quotas) run on
//! the writer connection's handle, on the batch writer's thread ([`crate::raw`]); the steps a
//! batch rarely takes (one post at a time, after a refusal or a known key) go through sqlx, the
//! handle let go first.

use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, LazyLock};

use adjutant_store::append::{keys_then_tails, keys_then_webhooks, step, AppendSteps, KnownKey, LastPost, QuotaCount};
use adjutant_store::row::{self, Columns, Encoding, OUTCOME_COLUMNS};
use adjutant_store::{AppendRequest, Outcome, Post, Result, StoreError, Tail};
use async_trait::async_trait;
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{LockedSqliteHandle, SqliteConnection};
use sqlx::{Sqlite, SqlitePool};
use tracing::Instrument;
use uuid::Uuid;

use crate::db::{map_err, Db};
use crate::log::{self, POST_COLUMNS};
use crate::raw::{Bind, Handle, Row, Sql};

/// The Standard Webhooks body of each outcome of one post, for each active webhook of its
/// campaign: the outcomes at the positions after the post before it's `outcomes_through` and
/// through its own.
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
     FROM posts p
     JOIN outcomes o ON o.campaign_id = p.campaign_id
         AND o.position > COALESCE((SELECT before.outcomes_through FROM posts before
                                    WHERE before.campaign_id = p.campaign_id AND before.seq = p.seq - 1), 0)
         AND o.position <= p.outcomes_through
     JOIN webhooks w ON w.campaign_id = o.campaign_id AND w.disabled_at IS NULL
     WHERE p.campaign_id = ?2 AND p.seq = ?3
     ORDER BY o.position, w.created_at, w.id";

/// A post's row, with its `outcomes_through`.
static INSERT_POST: LazyLock<String> = LazyLock::new(|| {
    format!("INSERT INTO posts ({POST_COLUMNS}, outcomes_through) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
});

/// An outcome's row.
static INSERT_OUTCOME: LazyLock<String> =
    LazyLock::new(|| format!("INSERT INTO outcomes ({OUTCOME_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"));

/// An idempotency record's row.
const INSERT_KEY: &str =
    "INSERT INTO idempotency_keys (principal_id, key, campaign_id, request_hash, seq) VALUES (?, ?, ?, ?, ?)";

/// The most rows one statement of a batch asks about (campaigns, keys, quotas): SQLite takes at
/// most 32,766 parameters a statement, and a quota's row has 5.
const ROWS_PER_STATEMENT: usize = 1000;

/// An append's steps, inside a `BEGIN IMMEDIATE` transaction: the single writer holds the
/// database's write lock from the tail read to the commit.
///
/// The transaction is the writer connection's own `BEGIN IMMEDIATE` … `COMMIT`, and the
/// connection goes back to the pool in the writer's task as the transaction ends. A connection
/// sqlx takes back by itself is returned from a task of its own, which waits its turn behind
/// whatever else runs on the batch writer's thread while the next batch waits for the writer.
pub(crate) struct Append {
    /// The connection's handle, locked for this thread while the batch's statements run on it:
    /// declared before `conn`, so let go before the connection is dropped.
    held: Option<Held>,
    conn: PoolConnection<Sqlite>,
    commits: Arc<tokio::sync::Notify>,
    /// The writer connection's `PRAGMA data_version` as its last transaction of posts began
    /// ([`UNKNOWN_VERSION`] before the first on each connection the pool opens).
    seen: Arc<AtomicI64>,
    /// No other connection has committed since the last batch began ([`AppendSteps::alone`]).
    alone: bool,
    /// Begun and neither committed nor rolled back: dropped so, the connection is closed, not
    /// returned to the pool (closing it rolls the transaction back).
    open: bool,
}

/// The writer connection's handle, locked: sqlx's thread for the connection waits on the lock
/// until this is dropped.
struct Held {
    handle: Handle,
    _lock: LockedSqliteHandle<'static>,
}

impl Append {
    /// Opens a batch's transaction on the writer; `commits` is told when it commits, `seen`
    /// holds the connection's data version from one batch to the next.
    pub(crate) async fn begin(
        writer: SqlitePool,
        commits: Arc<tokio::sync::Notify>,
        seen: Arc<AtomicI64>,
    ) -> Result<Self> {
        let conn = writer.acquire().await.map_err(map_err)?;
        // Open from before `BEGIN` is sent: a caller going away while it runs closes the
        // connection rather than handing it back inside a transaction nobody ends.
        let mut append = Append { held: None, conn, commits, seen, alone: false, open: true };
        // The data version changes when another connection (another server or store on the
        // file) has committed; this connection's own commits leave it as it was. Read under
        // the write lock, so nobody commits between it and this batch's commit.
        if !append.handle().await?.begin_at_once(crate::BUSY_TIMEOUT)? {
            // Another connection (another store on the file) holds the write lock: waited for on
            // sqlx's thread, not on the batch writer's, where that store's batch may need to go on.
            sqlx::query("BEGIN IMMEDIATE").execute(append.conn()).await.map_err(map_err)?;
        }
        let versions = append.rows(&Sql::new("PRAGMA data_version"), |row| row.int("data_version")).await?;
        let version =
            versions.first().copied().ok_or_else(|| StoreError::Database("no data version was read".into()))?;
        let before = append.seen.swap(version, Ordering::Relaxed);
        append.alone = before != UNKNOWN_VERSION && before == version;
        Ok(append)
    }

    /// The connection's handle for this thread's statements, locked once for the batch.
    async fn handle(&mut self) -> Result<&Handle> {
        if self.held.is_none() {
            let mut lock = self.conn.lock_handle().await.map_err(map_err)?;
            // SAFETY: the handle is the open connection's, and sqlx's thread makes no call on
            // it while the lock is held.
            let handle = unsafe { Handle::new(lock.as_raw_handle()) };
            // SAFETY: the lock borrows the mutex in the state sqlx's thread shares with the
            // connection (behind an `Arc` the connection holds), not the connection's own
            // memory; `held` is declared before `conn` and is emptied (`conn`) before the
            // connection is used through sqlx, handed back or closed, so the lock never
            // outlives what it borrows.
            let lock = unsafe { std::mem::transmute::<LockedSqliteHandle<'_>, LockedSqliteHandle<'static>>(lock) };
            self.held = Some(Held { handle, _lock: lock });
        }
        match &self.held {
            Some(held) => Ok(&held.handle),
            None => Err(StoreError::Database("the writer's handle was not held".into())),
        }
    }

    /// Runs `sql` on the handle.
    async fn run(&mut self, sql: &Sql<'_>) -> Result<()> {
        self.handle().await?.run(sql)
    }

    /// Runs `sql` on the handle, each row it answers read by `read`.
    async fn rows<T>(&mut self, sql: &Sql<'_>, read: impl FnMut(&Row<'_>) -> Result<T>) -> Result<Vec<T>> {
        self.handle().await?.rows(sql, read)
    }

    /// The connection, for a statement through sqlx: the handle let go first.
    fn conn(&mut self) -> &mut SqliteConnection {
        self.held = None;
        &mut self.conn
    }

    /// Ends the transaction with `sql` (`COMMIT` or `ROLLBACK`) and, once it has ended, hands the
    /// connection back to the pool here rather than from a task of its own.
    async fn end(mut self, sql: &'static str) -> Result<()> {
        let handle = self.handle().await?;
        // Nothing to roll back where SQLite ended the transaction itself, on an error.
        if sql != "ROLLBACK" || handle.in_transaction() {
            handle.run(&Sql::new(sql))?;
        }
        self.open = false;
        self.held = None;
        self.conn.return_to_pool().await;
        Ok(())
    }
}

impl Drop for Append {
    fn drop(&mut self) {
        self.held = None;
        if self.open {
            self.conn.close_on_drop();
        }
    }
}

/// No data version seen yet on the writer's connection: each connection counts its own, so the
/// writer pool sets this as it opens one (`SqliteStore::open`).
pub(crate) const UNKNOWN_VERSION: i64 = i64::MIN;

#[async_trait]
impl AppendSteps for Append {
    async fn known_key(&mut self, principal_id: Uuid, key: &str) -> Result<Option<KnownKey>> {
        let row = sqlx::query(
            "SELECT campaign_id, request_hash, seq FROM idempotency_keys WHERE principal_id = ? AND key = ?",
        )
        .bind(principal_id.to_string())
        .bind(key)
        .fetch_optional(self.conn())
        .await
        .map_err(map_err)?;
        Db::decode_optional(row, row::known_key)
    }

    async fn post(&mut self, campaign_id: Uuid, seq: i64) -> Result<Option<Post>> {
        log::post(self.conn(), campaign_id, seq).await
    }

    async fn count_posts_by_authors(&mut self, asks: &[QuotaCount]) -> Result<Vec<i64>> {
        let mut counts = Vec::with_capacity(asks.len());
        for asks in asks.chunks(ROWS_PER_STATEMENT) {
            // Each count reads the author's posts of the day off the index by author and time,
            // as the store's reads of one author's count do; the first column keeps the order asked.
            let mut query = Sql::new(
                "SELECT (SELECT COUNT(*) FROM posts INDEXED BY posts_by_author_day
                   WHERE campaign_id = a.column2 AND author_id = a.column3 AND stamp_ms >= a.column4
                     AND (kind = a.column5 OR a.column5 IS NULL)) AS count
                 FROM (",
            );
            query.values(asks.iter().enumerate(), |row, (n, ask)| {
                row.extend([
                    Bind::Int(n as i64),
                    Bind::Uuid(ask.campaign_id),
                    Bind::Uuid(ask.author_id),
                    Bind::Int(ask.since.timestamp_millis()),
                    Bind::from(ask.kind.as_deref()),
                ]);
            });
            query.push(") AS a ORDER BY a.column1");
            counts.extend(self.rows(&query, |row| row.int("count")).await?);
        }
        Ok(counts)
    }

    async fn outcomes_of_post(&mut self, campaign_id: Uuid, seq: i64) -> Result<Vec<Outcome>> {
        log::outcomes_of_posts(self.conn(), campaign_id, seq - 1, seq).await
    }

    async fn last_post(&mut self, campaign_id: Uuid) -> Result<Option<LastPost>> {
        let row = sqlx::query(
            "SELECT seq, hash, stamp_ms AS stamp FROM posts WHERE campaign_id = ? ORDER BY seq DESC LIMIT 1",
        )
        .bind(campaign_id.to_string())
        .fetch_optional(self.conn())
        .await
        .map_err(map_err)?;
        Db::decode_optional(row, row::last_post)
    }

    async fn snapshot_at(&mut self, campaign_id: Uuid, seq: i64) -> Result<Option<(i64, String)>> {
        log::snapshot_at(self.conn(), campaign_id, seq).await
    }

    async fn last_position(&mut self, campaign_id: Uuid) -> Result<i64> {
        // The last position straight off the index; `MAX(position)` would read every outcome
        // of the campaign on SQLite, and a post's cost would grow with the campaign.
        sqlx::query_scalar(
            "SELECT COALESCE((SELECT position FROM outcomes WHERE campaign_id = ? ORDER BY position DESC LIMIT 1), 0)",
        )
        .bind(campaign_id.to_string())
        .fetch_one(self.conn())
        .await
        .map_err(map_err)
    }

    async fn insert_post(&mut self, _campaign_id: Uuid, post: &Post, outcomes_through: i64) -> Result<()> {
        self.insert_posts(&[(post, outcomes_through)]).await
    }

    async fn insert_outcome(&mut self, outcome: &Outcome) -> Result<()> {
        self.insert_outcomes(&[outcome]).await
    }

    async fn any_known_key(&mut self, keys: &[(Uuid, &str)]) -> Result<bool> {
        for keys in keys.chunks(ROWS_PER_STATEMENT) {
            let mut query = Sql::new("SELECT ");
            push_known(&mut query, keys);
            if self.rows(&query, |row| row.int("known")).await?.first() != Some(&0) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn has_webhooks(&mut self, campaign_id: Uuid) -> Result<bool> {
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM webhooks WHERE campaign_id = ? AND disabled_at IS NULL)")
            .bind(campaign_id.to_string())
            .fetch_one(self.conn())
            .await
            .map_err(map_err)
    }

    async fn tails(&mut self, campaign_ids: &[Uuid]) -> Result<Vec<(Uuid, Tail, bool)>> {
        let mut tails = Vec::with_capacity(campaign_ids.len());
        for campaign_ids in campaign_ids.chunks(ROWS_PER_STATEMENT) {
            tails.extend(self.rows(&tails_query(campaign_ids, &[]), |read| row::tail(read)).await?);
        }
        Ok(tails)
    }

    async fn tails_unless_known(
        &mut self,
        campaign_ids: &[Uuid],
        keys: &[(Uuid, &str)],
    ) -> Result<Option<Vec<(Uuid, Tail, bool)>>> {
        if campaign_ids.is_empty()
            || keys.is_empty()
            || campaign_ids.len() > ROWS_PER_STATEMENT
            || keys.len() > ROWS_PER_STATEMENT
        {
            // Nothing to ask one of them, or past one statement's rows: one after the other.
            return keys_then_tails(self, campaign_ids, keys).await;
        }
        // Both in one statement: each row also says whether any of the keys has a record.
        let query = tails_query(campaign_ids, keys);
        let rows =
            self.rows(&query, |read| Ok((read.int("known")? != 0, row::tail(read)?))).instrument(step("tail")).await?;
        if rows.first().is_some_and(|&(known, _)| known) {
            return Ok(None);
        }
        Ok(Some(rows.into_iter().map(|(_, tail)| tail).collect()))
    }

    async fn webhooks_unless_known(
        &mut self,
        campaign_ids: &[Uuid],
        keys: &[(Uuid, &str)],
    ) -> Result<Option<HashSet<Uuid>>> {
        if campaign_ids.is_empty() || campaign_ids.len() > ROWS_PER_STATEMENT || keys.len() > ROWS_PER_STATEMENT {
            // Nothing to ask of the webhooks, or past one statement's rows: one after the other.
            return keys_then_webhooks(self, campaign_ids, keys).await;
        }
        // Both in one statement: one row, the campaigns with a webhook as one list.
        let mut query = Sql::new("SELECT ");
        if keys.is_empty() {
            query.push("0 AS known");
        } else {
            push_known(&mut query, keys);
        }
        query.push(
            ",
            (SELECT group_concat(campaign_id) FROM webhooks
              WHERE disabled_at IS NULL AND campaign_id IN (",
        );
        for (n, campaign_id) in campaign_ids.iter().enumerate() {
            query.push(if n == 0 { "" } else { ", " }).bind(*campaign_id);
        }
        query.push(")) AS hooked");
        let answers = self.rows(&query, |row| Ok((row.int("known")? != 0, row.opt_text("hooked")?))).await?;
        let Some((known, hooked)) = answers.into_iter().next() else {
            return Err(StoreError::Database("no row of webhooks was read".into()));
        };
        if known {
            return Ok(None);
        }
        hooked
            .iter()
            .flat_map(|ids| ids.split(','))
            .map(|id| {
                Uuid::parse_str(id).map_err(|e| StoreError::Database(format!("a webhook's campaign id {id:?}: {e}")))
            })
            .collect::<Result<HashSet<Uuid>>>()
            .map(Some)
    }

    fn alone(&self) -> bool {
        self.alone
    }

    async fn insert_posts(&mut self, posts: &[(&Post, i64)]) -> Result<()> {
        self.write_rows(posts, &[], &[], &[]).await
    }

    async fn insert_outcomes(&mut self, outcomes: &[&Outcome]) -> Result<()> {
        self.write_rows(&[], outcomes, &[], &[]).await
    }

    /// The batch's rows, each table's through one statement prepared once. SQLite has no one
    /// to notify.
    async fn write_rows(
        &mut self,
        posts: &[(&Post, i64)],
        outcomes: &[&Outcome],
        keys: &[(&AppendRequest, i64)],
        _heads: &[(Uuid, i64)],
    ) -> Result<()> {
        async {
            let handle = self.handle().await?;
            handle.run_each(&INSERT_POST, posts, post_row)?;
            handle.run_each(&INSERT_OUTCOME, outcomes, outcome_row)?;
            handle.run_each(INSERT_KEY, keys, key_row)
        }
        .instrument(step("insert_post"))
        .await
    }

    async fn enqueue_deliveries(&mut self, campaign_id: Uuid, seq: i64, timestamp: &str) -> Result<()> {
        sqlx::query(OUTBOX_INSERT)
            .bind(timestamp)
            .bind(campaign_id.to_string())
            .bind(seq)
            .execute(self.conn())
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn insert_snapshot(&mut self, campaign_id: Uuid, seq: i64, state: &str) -> Result<()> {
        sqlx::query("INSERT INTO snapshots (campaign_id, seq, state) VALUES (?, ?, ?)")
            .bind(campaign_id.to_string())
            .bind(seq)
            .bind(state)
            .execute(self.conn())
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn remember_key(&mut self, request: &AppendRequest, seq: i64) -> Result<()> {
        self.remember_keys(&[(request, seq)]).await
    }

    async fn remember_keys(&mut self, keys: &[(&AppendRequest, i64)]) -> Result<()> {
        self.write_rows(&[], &[], keys, &[]).await
    }

    async fn lock_campaign(&mut self, _campaign_id: Uuid) -> Result<()> {
        // `BEGIN IMMEDIATE` took the database's one write lock already.
        Ok(())
    }

    async fn execute(&mut self, sql: &'static str) -> Result<()> {
        self.run(&Sql::new(sql)).await
    }

    async fn rollback(self) -> Result<()> {
        self.end("ROLLBACK").await
    }

    async fn commit(self) -> Result<()> {
        let commits = self.commits.clone();
        self.end("COMMIT").await?;
        commits.notify_one();
        Ok(())
    }
}

/// A post's row (with its `outcomes_through`), as [`Handle::run_each`] writes it.
fn post_row<'a>(row: &mut Vec<Bind<'a>>, &(post, outcomes_through): &(&'a Post, i64)) {
    row.extend([
        Bind::Uuid(post.campaign_id),
        Bind::Int(post.seq),
        Bind::Int(post.stamp.timestamp_millis()),
        Bind::Uuid(post.author_id),
        Bind::from(post.side.as_deref()),
        Bind::from(post.kind.as_str()),
        Bind::from(post.body.as_str()),
        Bind::from(post.prev_hash.as_str()),
        Bind::from(post.hash.as_str()),
        Bind::from(post.receipt.as_ref().map(|r| r.key_id.as_str())),
        Bind::from(post.receipt.as_ref().map(|r| r.signature.as_str())),
        Bind::Int(outcomes_through),
    ]);
}

/// An outcome's row, as [`post_row`].
fn outcome_row<'a>(row: &mut Vec<Bind<'a>>, outcome: &&'a Outcome) {
    row.extend([
        Bind::Uuid(outcome.id),
        Bind::Uuid(outcome.campaign_id),
        Bind::Int(outcome.position),
        Bind::Int(outcome.seq),
        Bind::from(outcome.kind.as_str()),
        Bind::from(outcome.data.as_str()),
    ]);
}

/// An idempotency record's row (the request and the sequence number of its post), as
/// [`post_row`].
fn key_row<'a>(row: &mut Vec<Bind<'a>>, &(request, seq): &(&'a AppendRequest, i64)) {
    row.extend([
        Bind::Uuid(request.author_id),
        Bind::from(request.idempotency_key.as_str()),
        Bind::Uuid(request.campaign_id),
        Bind::from(request.request_hash.as_str()),
        Bind::Int(seq),
    ]);
}

/// `EXISTS (…) AS known`: whether any of `keys` (principal, key; at most
/// [`ROWS_PER_STATEMENT`]) has a record.
fn push_known<'a>(query: &mut Sql<'a>, keys: &[(Uuid, &'a str)]) {
    query.push("EXISTS (SELECT 1 FROM idempotency_keys WHERE (principal_id, key) IN (");
    query.values(keys, |row, &(principal_id, key)| row.extend([Bind::Uuid(principal_id), Bind::Text(key)]));
    query.push(")) AS known");
}

/// The tails of `campaign_ids` (at most [`ROWS_PER_STATEMENT`]), one row each, as
/// [`row::tail`] reads them; with `keys` (principal, key), each row also has `known`: whether
/// any of them has a record.
fn tails_query<'a>(campaign_ids: &[Uuid], keys: &[(Uuid, &'a str)]) -> Sql<'a> {
    // Each a seek on an index from its end: the cost does not grow with the log.
    let mut query = Sql::new(
        "SELECT t.*,
            (SELECT seq FROM snapshots WHERE campaign_id = t.campaign_id AND seq <= t.last_seq
              ORDER BY seq DESC LIMIT 1) AS snapshot_seq,
            (SELECT state FROM snapshots WHERE campaign_id = t.campaign_id AND seq <= t.last_seq
              ORDER BY seq DESC LIMIT 1) AS snapshot_state",
    );
    if !keys.is_empty() {
        // Its parameters come first in the text, as they are bound.
        query.push(",\n            ");
        push_known(&mut query, keys);
    }
    query.push(
        "
         FROM (SELECT a.column1 AS campaign_id,
            (SELECT seq FROM posts WHERE campaign_id = a.column1 ORDER BY seq DESC LIMIT 1) AS last_seq,
            (SELECT hash FROM posts WHERE campaign_id = a.column1 ORDER BY seq DESC LIMIT 1) AS last_hash,
            (SELECT stamp_ms FROM posts WHERE campaign_id = a.column1 ORDER BY seq DESC LIMIT 1) AS last_stamp,
            (SELECT position FROM outcomes WHERE campaign_id = a.column1 ORDER BY position DESC LIMIT 1)
              AS last_position,
            EXISTS (SELECT 1 FROM webhooks WHERE campaign_id = a.column1 AND disabled_at IS NULL) AS webhooks
          FROM (",
    );
    query.values(campaign_ids, |row, &id| row.push(Bind::Uuid(id)));
    query.push(") AS a) AS t");
    query
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store in a directory of its own, with one idempotency record (`principal`'s key `k1`,
    /// for `campaign`); the writer's connection checks no foreign keys.
    async fn store_with_a_key(name: &str, principal: Uuid, campaign: Uuid) -> (std::path::PathBuf, crate::SqliteStore) {
        let dir = std::env::temp_dir().join(format!("adjutant-{name}-{}", Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let store = crate::SqliteStore::open(&format!("sqlite://{}", dir.join("a.db").display())).await.unwrap();
        let mut conn = store.writer.acquire().await.unwrap();
        sqlx::query("PRAGMA foreign_keys = OFF").execute(&mut *conn).await.unwrap();
        sqlx::query(
            "INSERT INTO idempotency_keys (principal_id, key, campaign_id, request_hash, seq) VALUES (?, 'k1', ?, 'h', 1)",
        )
        .bind(principal.to_string())
        .bind(campaign.to_string())
        .execute(&mut *conn)
        .await
        .unwrap();
        (dir, store)
    }

    /// Two stores on one file, in a directory of their own: two writer connections, as two
    /// servers in one process have.
    async fn two_stores_on_one_file(name: &str) -> (std::path::PathBuf, crate::SqliteStore, crate::SqliteStore) {
        let dir = std::env::temp_dir().join(format!("adjutant-{name}-{}", Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}", dir.join("a.db").display());
        let store = crate::SqliteStore::open(&url).await.unwrap();
        let other = crate::SqliteStore::open(&url).await.unwrap();
        (dir, store, other)
    }

    /// The batch's first read says whether a key of the batch has a record, and reads the tails
    /// all the same; without the answer a replayed key would be found only by the insert failing.
    #[tokio::test]
    async fn the_tails_say_whether_a_key_of_the_batch_has_a_record() {
        let (principal, other, campaign, empty) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let (dir, store) = store_with_a_key("tails", principal, campaign).await;
        let mut conn = store.writer.acquire().await.unwrap();
        let mut locked = conn.lock_handle().await.unwrap();
        // SAFETY: the locked handle keeps sqlx's thread off it while this runs.
        let handle = unsafe { Handle::new(locked.as_raw_handle()) };
        let campaigns = [campaign, empty];
        for (keys, known) in [
            (vec![(principal, "k2"), (principal, "k1")], true),
            (vec![(principal, "k2")], false),
            (vec![(other, "k1")], false),
        ] {
            let rows = handle.rows(&tails_query(&campaigns, &keys), |r| Ok((r.int("known")?, row::tail(r)?))).unwrap();
            assert_eq!(rows.len(), 2, "a row for each campaign");
            assert!(rows.iter().all(|&(k, _)| k == i64::from(known)), "{keys:?}");
            let mut read: Vec<Uuid> = rows.into_iter().map(|(_, (id, _, _))| id).collect();
            read.sort_unstable();
            let mut asked = campaigns.to_vec();
            asked.sort_unstable();
            assert_eq!(read, asked);
        }
        assert!(handle.rows(&tails_query(&[campaign], &[]), |r| r.int("known")).is_err(), "no keys, no column");
        drop(locked);
        drop(conn);

        // The step itself: no tails when a key is known, the tails otherwise, and with no keys.
        let mut append = Append::begin(store.writer.clone(), Arc::default(), Arc::new(AtomicI64::new(UNKNOWN_VERSION)))
            .await
            .unwrap();
        assert!(append.tails_unless_known(&campaigns, &[(other, "k3"), (principal, "k1")]).await.unwrap().is_none());
        for keys in [vec![(principal, "k2")], vec![]] {
            let tails = append.tails_unless_known(&campaigns, &keys).await.unwrap().expect("no key is known");
            assert_eq!(tails.len(), 2, "{keys:?}");
            assert!(tails.iter().all(|(_, tail, webhooks)| tail.next_seq == 1 && !webhooks), "{keys:?}");
        }
        append.rollback().await.unwrap();
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A batch is alone when no other connection has committed since the writer's last batch
    /// began: its own commits, and others' reads, leave it so; another's commit does not.
    #[tokio::test]
    async fn a_batch_is_alone_until_another_connection_commits() {
        let (dir, store, other) = two_stores_on_one_file("alone").await;
        let seen = store.data_version.clone();
        let alone = || async {
            let append = Append::begin(store.writer.clone(), Arc::default(), seen.clone()).await.unwrap();
            let alone = append.alone();
            append.commit().await.unwrap();
            alone
        };
        // A commit through `pool`'s connection: a key's record, as a post would leave.
        let commit = |pool: &sqlx::SqlitePool, key: &str| {
            let (pool, key) = (pool.clone(), key.to_owned());
            async move {
                sqlx::query("PRAGMA foreign_keys = OFF; INSERT INTO idempotency_keys VALUES ('p', ?, 'c', 'h', 1)")
                    .bind(key)
                    .execute(&pool)
                    .await
                    .unwrap();
            }
        };
        assert!(!alone().await, "the first batch has nothing to go by");
        assert!(alone().await);
        commit(&store.writer, "k").await;
        sqlx::query("SELECT count(*) FROM posts").execute(&other.readers).await.unwrap();
        sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(&store.checkpointer).await.unwrap();
        assert!(alone().await, "this connection's own commits, another's reads, the checkpointer's copying");
        commit(&other.writer, "k2").await;
        assert!(!alone().await, "another connection committed");
        assert!(alone().await);
        // The writer's connection replaced by a new one, which counts its versions from its own
        // start (it may read the number the last one last read): nothing to go by.
        store.writer.acquire().await.unwrap().close().await.unwrap();
        commit(&other.writer, "k3").await;
        assert!(!alone().await, "a new connection");
        assert!(alone().await);
        drop((store, other));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Where another connection holds the write lock, the batch's `BEGIN` waits for it on sqlx's
    /// thread (the batch writer's thread is shared by every store of the process) and goes on
    /// once it is let go; the connection's busy timeout is as it was.
    #[tokio::test]
    async fn a_batch_waits_for_another_connection_s_write_lock() {
        let (dir, store, other) = two_stores_on_one_file("busy").await;
        let mut holding = other.writer.acquire().await.unwrap();
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *holding).await.unwrap();
        let begin = tokio::spawn(Append::begin(
            store.writer.clone(),
            Arc::default(),
            Arc::new(AtomicI64::new(UNKNOWN_VERSION)),
        ));
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(!begin.is_finished(), "the batch waits for the lock");
        sqlx::query("ROLLBACK").execute(&mut *holding).await.unwrap();
        let mut append = begin.await.unwrap().expect("begun once the lock was let go");
        let timeout = append.rows(&Sql::new("PRAGMA busy_timeout"), |row| row.int("timeout")).await.unwrap();
        assert_eq!(timeout, [crate::BUSY_TIMEOUT.as_millis() as i64]);
        append.rollback().await.unwrap();
        drop(holding);
        drop((store, other));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A transaction SQLite ended by itself leaves nothing to roll back: the rollback goes
    /// through, and the connection goes back to the pool for the next batch.
    #[tokio::test]
    async fn a_batch_whose_transaction_sqlite_ended_rolls_back_all_the_same() {
        let (principal, campaign) = (Uuid::new_v4(), Uuid::new_v4());
        let (dir, store) = store_with_a_key("ended", principal, campaign).await;
        let seen = Arc::new(AtomicI64::new(UNKNOWN_VERSION));
        let mut append = Append::begin(store.writer.clone(), Arc::default(), seen.clone()).await.unwrap();
        append.execute("ROLLBACK").await.unwrap();
        append.rollback().await.unwrap();
        let append = Append::begin(store.writer.clone(), Arc::default(), seen).await.unwrap();
        append.commit().await.unwrap();
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// For the campaigns whose tails the writer holds, the batch asks only which have a webhook
    /// that takes deliveries (a disabled one does not), and whether a key has a record.
    #[tokio::test]
    async fn the_held_campaigns_say_which_have_webhooks_unless_a_key_is_known() {
        let (principal, hooked, disabled, plain) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let (dir, store) = store_with_a_key("webhooks", principal, plain).await;
        let mut conn = store.writer.acquire().await.unwrap();
        // Two webhooks of one campaign, and a disabled one of another.
        for (campaign, disabled_at) in [(hooked, None), (hooked, None), (disabled, Some(5))] {
            sqlx::query(
                "INSERT INTO webhooks (id, campaign_id, url, secret, created_by, created_at, disabled_at)
                 VALUES (?, ?, 'https://example.org/hook', 'whsec_x', ?, 1, ?)",
            )
            .bind(Uuid::new_v4().to_string())
            .bind(campaign.to_string())
            .bind(principal.to_string())
            .bind(disabled_at)
            .execute(&mut *conn)
            .await
            .unwrap();
        }
        drop(conn);

        let mut append = Append::begin(store.writer.clone(), Arc::default(), Arc::new(AtomicI64::new(UNKNOWN_VERSION)))
            .await
            .unwrap();
        let campaigns = [hooked, disabled, plain];
        assert!(append
            .webhooks_unless_known(&campaigns, &[(principal, "k2"), (principal, "k1")])
            .await
            .unwrap()
            .is_none());
        for keys in [vec![(principal, "k2")], vec![(Uuid::new_v4(), "k1")], vec![]] {
            let found = append.webhooks_unless_known(&campaigns, &keys).await.unwrap().expect("no key is known");
            assert_eq!(found, HashSet::from([hooked]), "{keys:?}");
        }
        let found = append.webhooks_unless_known(&[plain], &[]).await.unwrap().expect("no key asked");
        assert!(found.is_empty());
        append.rollback().await.unwrap();
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
