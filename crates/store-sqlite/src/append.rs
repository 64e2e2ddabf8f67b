//! Appending posts: the steps of [`adjutant_store::append`] in SQLite's SQL.

use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use adjutant_store::append::{keys_then_tails, keys_then_webhooks, step, AppendSteps, KnownKey, LastPost, QuotaCount};
use adjutant_store::row::{self, Encoding, OUTCOME_COLUMNS};
use adjutant_store::{AppendRequest, Outcome, Post, Result, StoreError, Tail};
use async_trait::async_trait;
use sqlx::pool::PoolConnection;
use sqlx::{QueryBuilder, Sqlite, SqlitePool};
use tracing::Instrument;
use uuid::Uuid;

use crate::db::{map_err, Db};
use crate::log::{self, POST_COLUMNS};

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

/// The most rows one INSERT of a batch carries: SQLite takes at most 32,766 parameters a
/// statement, and a post's row has 12.
const ROWS_PER_STATEMENT: usize = 1000;

/// An append's steps, inside a `BEGIN IMMEDIATE` transaction: the single writer holds the
/// database's write lock from the tail read to the commit.
///
/// The transaction is the writer connection's own `BEGIN IMMEDIATE` … `COMMIT`, and the
/// connection goes back to the pool in the writer's task as the transaction ends. A connection
/// sqlx takes back by itself is returned from a task of its own, which waits its turn behind
/// whatever else runs on the batch writer's thread while the next batch waits for the writer.
pub(crate) struct Append {
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
        let mut append = Append { conn, commits, seen, alone: false, open: true };
        // The data version changes when another connection (another server or store on the
        // file) has committed; this connection's own commits leave it as it was. Read under
        // the write lock, so nobody commits between it and this batch's commit.
        let version: i64 = sqlx::query_scalar("BEGIN IMMEDIATE; PRAGMA data_version")
            .fetch_one(&mut *append.conn)
            .await
            .map_err(map_err)?;
        let before = append.seen.swap(version, Ordering::Relaxed);
        append.alone = before != UNKNOWN_VERSION && before == version;
        Ok(append)
    }

    /// Runs the `INSERT` statements `push` writes for `rows`; none when there are no rows.
    async fn insert<'a, T: Sync>(&mut self, rows: &[T], push: fn(&mut QueryBuilder<'a, Sqlite>, &[T])) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let mut query = QueryBuilder::<Sqlite>::new("");
        push(&mut query, rows);
        query.build().execute(&mut *self.conn).await.map_err(map_err)?;
        Ok(())
    }

    /// Ends the transaction with `sql` (`COMMIT` or `ROLLBACK`) and, once it has ended, hands the
    /// connection back to the pool here rather than from a task of its own.
    async fn end(mut self, sql: &'static str) -> Result<()> {
        sqlx::query(sql).execute(&mut *self.conn).await.map_err(map_err)?;
        self.open = false;
        self.conn.return_to_pool().await;
        Ok(())
    }
}

impl Drop for Append {
    fn drop(&mut self) {
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
        .fetch_optional(&mut *self.conn)
        .await
        .map_err(map_err)?;
        Db::decode_optional(row, row::known_key)
    }

    async fn post(&mut self, campaign_id: Uuid, seq: i64) -> Result<Option<Post>> {
        log::post(&mut *self.conn, campaign_id, seq).await
    }

    async fn count_posts_by_authors(&mut self, asks: &[QuotaCount]) -> Result<Vec<i64>> {
        let mut counts = Vec::with_capacity(asks.len());
        for asks in asks.chunks(ROWS_PER_STATEMENT) {
            // Each count reads the author's posts of the day off the index by author and time,
            // as the store's reads of one author's count do; the first column keeps the order asked.
            let mut query = QueryBuilder::<Sqlite>::new(
                "SELECT (SELECT COUNT(*) FROM posts INDEXED BY posts_by_author_day
                   WHERE campaign_id = a.column2 AND author_id = a.column3 AND stamp_ms >= a.column4
                     AND (kind = a.column5 OR a.column5 IS NULL))
                 FROM (",
            );
            query.push_values(asks.iter().enumerate(), |mut row, (n, ask)| {
                row.push_bind(n as i64)
                    .push_bind(ask.campaign_id.to_string())
                    .push_bind(ask.author_id.to_string())
                    .push_bind(ask.since.timestamp_millis())
                    .push_bind(ask.kind.as_deref());
            });
            query.push(") AS a ORDER BY a.column1");
            counts.extend(query.build_query_scalar::<i64>().fetch_all(&mut *self.conn).await.map_err(map_err)?);
        }
        Ok(counts)
    }

    async fn outcomes_of_post(&mut self, campaign_id: Uuid, seq: i64) -> Result<Vec<Outcome>> {
        log::outcomes_of_posts(&mut *self.conn, campaign_id, seq - 1, seq).await
    }

    async fn last_post(&mut self, campaign_id: Uuid) -> Result<Option<LastPost>> {
        let row = sqlx::query(
            "SELECT seq, hash, stamp_ms AS stamp FROM posts WHERE campaign_id = ? ORDER BY seq DESC LIMIT 1",
        )
        .bind(campaign_id.to_string())
        .fetch_optional(&mut *self.conn)
        .await
        .map_err(map_err)?;
        Db::decode_optional(row, row::last_post)
    }

    async fn snapshot_at(&mut self, campaign_id: Uuid, seq: i64) -> Result<Option<(i64, String)>> {
        log::snapshot_at(&mut *self.conn, campaign_id, seq).await
    }

    async fn last_position(&mut self, campaign_id: Uuid) -> Result<i64> {
        // The last position straight off the index; `MAX(position)` would read every outcome
        // of the campaign on SQLite, and a post's cost would grow with the campaign.
        sqlx::query_scalar(
            "SELECT COALESCE((SELECT position FROM outcomes WHERE campaign_id = ? ORDER BY position DESC LIMIT 1), 0)",
        )
        .bind(campaign_id.to_string())
        .fetch_one(&mut *self.conn)
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
            let mut query = QueryBuilder::<Sqlite>::new(
                "SELECT EXISTS (SELECT 1 FROM idempotency_keys WHERE (principal_id, key) IN (",
            );
            query.push_values(keys, |mut row, (principal_id, key)| {
                row.push_bind(principal_id.to_string()).push_bind(*key);
            });
            query.push("))");
            if query.build_query_scalar().fetch_one(&mut *self.conn).await.map_err(map_err)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn has_webhooks(&mut self, campaign_id: Uuid) -> Result<bool> {
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM webhooks WHERE campaign_id = ? AND disabled_at IS NULL)")
            .bind(campaign_id.to_string())
            .fetch_one(&mut *self.conn)
            .await
            .map_err(map_err)
    }

    async fn tails(&mut self, campaign_ids: &[Uuid]) -> Result<Vec<(Uuid, Tail, bool)>> {
        let mut tails = Vec::with_capacity(campaign_ids.len());
        for campaign_ids in campaign_ids.chunks(ROWS_PER_STATEMENT) {
            let rows = tails_query(campaign_ids, &[]).build().fetch_all(&mut *self.conn).await.map_err(map_err)?;
            tails.extend(Db::decode_all(&rows, row::tail)?);
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
        // Both in one round trip: each row also says whether any of the keys has a record.
        let rows = tails_query(campaign_ids, keys)
            .build()
            .fetch_all(&mut *self.conn)
            .instrument(step("tail"))
            .await
            .map_err(map_err)?;
        let known = match rows.first() {
            Some(row) => sqlx::Row::try_get::<bool, _>(row, "known").map_err(map_err)?,
            None => false,
        };
        if known {
            return Ok(None);
        }
        Db::decode_all(&rows, row::tail).map(Some)
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
        // Both in one round trip: one row, the campaigns with a webhook as one list.
        let mut query = QueryBuilder::<Sqlite>::new("SELECT ");
        if keys.is_empty() {
            query.push("0");
        } else {
            query.push("EXISTS (SELECT 1 FROM idempotency_keys WHERE (principal_id, key) IN (");
            query.push_values(keys, |mut row, (principal_id, key)| {
                row.push_bind(principal_id.to_string()).push_bind(*key);
            });
            query.push("))");
        }
        query.push(
            " AS known,
            (SELECT group_concat(campaign_id) FROM webhooks
              WHERE disabled_at IS NULL AND campaign_id IN (",
        );
        let mut ids = query.separated(", ");
        for campaign_id in campaign_ids {
            ids.push_bind(campaign_id.to_string());
        }
        query.push(")) AS hooked");
        let row = query.build().fetch_one(&mut *self.conn).await.map_err(map_err)?;
        if sqlx::Row::try_get::<bool, _>(&row, "known").map_err(map_err)? {
            return Ok(None);
        }
        let hooked: Option<String> = sqlx::Row::try_get(&row, "hooked").map_err(map_err)?;
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
        self.insert(posts, push_posts).await
    }

    async fn insert_outcomes(&mut self, outcomes: &[&Outcome]) -> Result<()> {
        self.insert(outcomes, push_outcomes).await
    }

    /// The batch's rows in one call, one statement for each table (and each thousand rows):
    /// one round trip to SQLite's thread rather than one a statement. SQLite has no one to
    /// notify.
    async fn write_rows(
        &mut self,
        posts: &[(&Post, i64)],
        outcomes: &[&Outcome],
        keys: &[(&AppendRequest, i64)],
        _heads: &[(Uuid, i64)],
    ) -> Result<()> {
        let mut query = QueryBuilder::<Sqlite>::new("");
        push_posts(&mut query, posts);
        push_outcomes(&mut query, outcomes);
        push_keys(&mut query, keys);
        query.build().execute(&mut *self.conn).instrument(step("insert_post")).await.map_err(map_err)?;
        Ok(())
    }

    async fn enqueue_deliveries(&mut self, campaign_id: Uuid, seq: i64, timestamp: &str) -> Result<()> {
        sqlx::query(OUTBOX_INSERT)
            .bind(timestamp)
            .bind(campaign_id.to_string())
            .bind(seq)
            .execute(&mut *self.conn)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn insert_snapshot(&mut self, campaign_id: Uuid, seq: i64, state: &str) -> Result<()> {
        sqlx::query("INSERT INTO snapshots (campaign_id, seq, state) VALUES (?, ?, ?)")
            .bind(campaign_id.to_string())
            .bind(seq)
            .bind(state)
            .execute(&mut *self.conn)
            .await
            .map_err(map_err)?;
        Ok(())
    }

    async fn remember_key(&mut self, request: &AppendRequest, seq: i64) -> Result<()> {
        self.remember_keys(&[(request, seq)]).await
    }

    async fn remember_keys(&mut self, keys: &[(&AppendRequest, i64)]) -> Result<()> {
        self.insert(keys, push_keys).await
    }

    async fn lock_campaign(&mut self, _campaign_id: Uuid) -> Result<()> {
        // `BEGIN IMMEDIATE` took the database's one write lock already.
        Ok(())
    }

    async fn execute(&mut self, sql: &'static str) -> Result<()> {
        sqlx::query(sql).execute(&mut *self.conn).await.map_err(map_err).map(|_| ())
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

/// `INSERT` statements of `posts` (each with its `outcomes_through`) onto `query`, each ended by
/// `;` (one for each [`ROWS_PER_STATEMENT`] rows, within SQLite's bound on a statement's
/// parameters).
fn push_posts<'a>(query: &mut QueryBuilder<'a, Sqlite>, posts: &[(&'a Post, i64)]) {
    for posts in posts.chunks(ROWS_PER_STATEMENT) {
        query.push(format_args!("INSERT INTO posts ({POST_COLUMNS}, outcomes_through) "));
        query.push_values(posts, |mut row, &(post, outcomes_through)| {
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
                .push_bind(post.receipt.as_ref().map(|r| r.signature.as_str()))
                .push_bind(outcomes_through);
        });
        query.push(";\n");
    }
}

/// `INSERT` statements of `outcomes` onto `query`, as [`push_posts`].
fn push_outcomes<'a>(query: &mut QueryBuilder<'a, Sqlite>, outcomes: &[&'a Outcome]) {
    for outcomes in outcomes.chunks(ROWS_PER_STATEMENT) {
        query.push(format_args!("INSERT INTO outcomes ({OUTCOME_COLUMNS}) "));
        query.push_values(outcomes, |mut row, outcome| {
            row.push_bind(outcome.id.to_string())
                .push_bind(outcome.campaign_id.to_string())
                .push_bind(outcome.position)
                .push_bind(outcome.seq)
                .push_bind(outcome.kind.as_str())
                .push_bind(outcome.data.as_str());
        });
        query.push(";\n");
    }
}

/// `INSERT` statements of the idempotency records `keys` onto `query`, as [`push_posts`].
fn push_keys<'a>(query: &mut QueryBuilder<'a, Sqlite>, keys: &[(&'a AppendRequest, i64)]) {
    for keys in keys.chunks(ROWS_PER_STATEMENT) {
        query.push("INSERT INTO idempotency_keys (principal_id, key, campaign_id, request_hash, seq) ");
        query.push_values(keys, |mut row, (request, seq)| {
            row.push_bind(request.author_id.to_string())
                .push_bind(request.idempotency_key.as_str())
                .push_bind(request.campaign_id.to_string())
                .push_bind(request.request_hash.as_str())
                .push_bind(*seq);
        });
        query.push(";\n");
    }
}

/// The tails of `campaign_ids` (at most [`ROWS_PER_STATEMENT`]), one row each, as
/// [`row::tail`] reads them; with `keys` (principal, key), each row also has `known`: whether
/// any of them has a record.
fn tails_query<'a>(campaign_ids: &[Uuid], keys: &[(Uuid, &'a str)]) -> QueryBuilder<'a, Sqlite> {
    // Each a seek on an index from its end: the cost does not grow with the log.
    let mut query = QueryBuilder::<Sqlite>::new(
        "SELECT t.*,
            (SELECT seq FROM snapshots WHERE campaign_id = t.campaign_id AND seq <= t.last_seq
              ORDER BY seq DESC LIMIT 1) AS snapshot_seq,
            (SELECT state FROM snapshots WHERE campaign_id = t.campaign_id AND seq <= t.last_seq
              ORDER BY seq DESC LIMIT 1) AS snapshot_state",
    );
    if !keys.is_empty() {
        // Its parameters come first in the text, as they are bound.
        query.push(",\n            EXISTS (SELECT 1 FROM idempotency_keys WHERE (principal_id, key) IN (");
        query.push_values(keys, |mut row, (principal_id, key)| {
            row.push_bind(principal_id.to_string()).push_bind(*key);
        });
        query.push(")) AS known");
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
    query.push_values(campaign_ids, |mut row, id| {
        row.push_bind(id.to_string());
    });
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

    /// The batch's first read says whether a key of the batch has a record, and reads the tails
    /// all the same; without the answer a replayed key would be found only by the insert failing.
    #[tokio::test]
    async fn the_tails_say_whether_a_key_of_the_batch_has_a_record() {
        let (principal, other, campaign, empty) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let (dir, store) = store_with_a_key("tails", principal, campaign).await;
        let mut conn = store.writer.acquire().await.unwrap();
        let campaigns = [campaign, empty];
        for (keys, known) in [
            (vec![(principal, "k2"), (principal, "k1")], true),
            (vec![(principal, "k2")], false),
            (vec![(other, "k1")], false),
        ] {
            let rows = tails_query(&campaigns, &keys).build().fetch_all(&mut *conn).await.unwrap();
            assert_eq!(rows.len(), 2, "a row for each campaign");
            for row in &rows {
                assert_eq!(sqlx::Row::try_get::<bool, _>(row, "known").unwrap(), known, "{keys:?}");
            }
            let mut read: Vec<Uuid> =
                Db::decode_all(&rows, row::tail).unwrap().into_iter().map(|(id, _, _)| id).collect();
            read.sort_unstable();
            let mut asked = campaigns.to_vec();
            asked.sort_unstable();
            assert_eq!(read, asked);
        }
        let rows = tails_query(&[campaign], &[]).build().fetch_all(&mut *conn).await.unwrap();
        assert!(sqlx::Row::try_get::<bool, _>(&rows[0], "known").is_err(), "no keys, no column");
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
        let dir = std::env::temp_dir().join(format!("adjutant-alone-{}", Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}", dir.join("a.db").display());
        let store = crate::SqliteStore::open(&url).await.unwrap();
        let other = crate::SqliteStore::open(&url).await.unwrap();
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
