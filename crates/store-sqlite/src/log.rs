//! Reading a campaign's log: its posts, their outcomes and the state snapshots.

use std::sync::LazyLock;

use adjutant_store::row::{self, Encoding, OUTCOME_COLUMNS};
use adjutant_store::{
    IndexedOutcomeKind, IndexedPostKind, KindQueries, Outcome, Post, Result, OUTCOMES_BY_KIND_HOLDS,
    POSTS_BY_KIND_HOLDS,
};
use chrono::{DateTime, Utc};
use sqlx::SqliteExecutor;
use uuid::Uuid;

use crate::db::{map_err, Db};

/// The columns of a post, in the order of an insert.
pub(crate) const POST_COLUMNS: &str =
    "campaign_id, seq, stamp_ms, author_id, side, kind, body, prev_hash, hash, receipt_key_id, receipt_signature";
/// The columns of a post as `row::post` reads them.
const POST_SELECT: &str = "campaign_id, seq, stamp_ms AS stamp, author_id, side, kind, body, prev_hash, hash, \
     receipt_key_id, receipt_signature";

pub(crate) async fn posts(db: impl SqliteExecutor<'_>, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<Post>> {
    let rows =
        sqlx::query(&format!("SELECT {POST_SELECT} FROM posts WHERE campaign_id = ? AND seq > ? ORDER BY seq LIMIT ?"))
            .bind(campaign_id.to_string())
            .bind(after)
            .bind(limit)
            .fetch_all(db)
            .await
            .map_err(map_err)?;
    Db::decode_all(&rows, row::post)
}

pub(crate) async fn post(db: impl SqliteExecutor<'_>, campaign_id: Uuid, seq: i64) -> Result<Option<Post>> {
    let row = sqlx::query(&format!("SELECT {POST_SELECT} FROM posts WHERE campaign_id = ? AND seq = ?"))
        .bind(campaign_id.to_string())
        .bind(seq)
        .fetch_optional(db)
        .await
        .map_err(map_err)?;
    Db::decode_optional(row, row::post)
}

pub(crate) async fn head(db: impl SqliteExecutor<'_>, campaign_id: Uuid) -> Result<Option<Post>> {
    let row = sqlx::query(&format!("SELECT {POST_SELECT} FROM posts WHERE campaign_id = ? ORDER BY seq DESC LIMIT 1"))
        .bind(campaign_id.to_string())
        .fetch_optional(db)
        .await
        .map_err(map_err)?;
    Db::decode_optional(row, row::post)
}

/// The statements that find posts and outcomes by kind. Each states its index's condition beside
/// the kind: `INDEXED BY` a partial index is an error where the query does not imply its
/// condition.
pub static KIND_QUERIES: LazyLock<KindQueries> = LazyLock::new(|| KindQueries {
    posts: format!(
        "SELECT {POST_SELECT} FROM posts INDEXED BY posts_by_kind
         WHERE campaign_id = ? AND kind = ? AND {POSTS_BY_KIND_HOLDS} ORDER BY seq"
    ),
    outcomes: format!(
        "SELECT {OUTCOME_COLUMNS} FROM outcomes INDEXED BY outcomes_by_kind
         WHERE campaign_id = ? AND kind = ? AND {OUTCOMES_BY_KIND_HOLDS} ORDER BY position LIMIT ?"
    ),
    count_outcomes: format!(
        "SELECT COUNT(*) FROM outcomes INDEXED BY outcomes_by_kind
         WHERE campaign_id = ? AND kind = ? AND {OUTCOMES_BY_KIND_HOLDS}"
    ),
});

pub(crate) async fn posts_of_kind(
    db: impl SqliteExecutor<'_>,
    campaign_id: Uuid,
    kind: IndexedPostKind,
) -> Result<Vec<Post>> {
    let rows = sqlx::query(&KIND_QUERIES.posts)
        .bind(campaign_id.to_string())
        .bind(kind.as_str())
        .fetch_all(db)
        .await
        .map_err(map_err)?;
    Db::decode_all(&rows, row::post)
}

pub(crate) async fn count_posts_by_author(
    db: impl SqliteExecutor<'_>,
    campaign_id: Uuid,
    author_id: Uuid,
    kind: Option<&str>,
    since: DateTime<Utc>,
) -> Result<i64> {
    // Without a kind: every kind (a NULL kind matches every row). The index by author and time
    // reads only the posts since `since`.
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM posts INDEXED BY posts_by_author_day
         WHERE campaign_id = ? AND author_id = ? AND stamp_ms >= ? AND (kind = ? OR ? IS NULL)",
    )
    .bind(campaign_id.to_string())
    .bind(author_id.to_string())
    .bind(since.timestamp_millis())
    .bind(kind)
    .bind(kind)
    .fetch_one(db)
    .await
    .map_err(map_err)
}

pub(crate) async fn outcome(db: impl SqliteExecutor<'_>, campaign_id: Uuid, id: Uuid) -> Result<Option<Outcome>> {
    let row = sqlx::query(&format!("SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = ? AND id = ?"))
        .bind(campaign_id.to_string())
        .bind(id.to_string())
        .fetch_optional(db)
        .await
        .map_err(map_err)?;
    Db::decode_optional(row, row::outcome)
}

pub(crate) async fn outcomes(
    db: impl SqliteExecutor<'_>,
    campaign_id: Uuid,
    after: i64,
    limit: i64,
) -> Result<Vec<Outcome>> {
    let rows = sqlx::query(&format!(
        "SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = ? AND position > ? ORDER BY position LIMIT ?"
    ))
    .bind(campaign_id.to_string())
    .bind(after)
    .bind(limit)
    .fetch_all(db)
    .await
    .map_err(map_err)?;
    Db::decode_all(&rows, row::outcome)
}

pub(crate) async fn latest_outcomes(
    db: impl SqliteExecutor<'_>,
    campaign_id: Uuid,
    limit: i64,
) -> Result<Vec<Outcome>> {
    let rows = sqlx::query(&format!(
        "SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = ? ORDER BY position DESC LIMIT ?"
    ))
    .bind(campaign_id.to_string())
    .bind(limit)
    .fetch_all(db)
    .await
    .map_err(map_err)?;
    let mut outcomes = Db::decode_all(&rows, row::outcome)?;
    outcomes.reverse();
    Ok(outcomes)
}

/// The outcomes of posts `after < seq <= through`, in position order: the positions after the
/// `outcomes_through` of the last post at or before `after` and through that of the last post at
/// or before `through` (0 where there is none), a range of the outcomes' position index.
pub(crate) async fn outcomes_of_posts(
    db: impl SqliteExecutor<'_>,
    campaign_id: Uuid,
    after: i64,
    through: i64,
) -> Result<Vec<Outcome>> {
    let rows = sqlx::query(&format!(
        "SELECT {OUTCOME_COLUMNS} FROM outcomes
         WHERE campaign_id = ?1
           AND position > COALESCE((SELECT outcomes_through FROM posts WHERE campaign_id = ?1 AND seq <= ?2
                                    ORDER BY seq DESC LIMIT 1), 0)
           AND position <= COALESCE((SELECT outcomes_through FROM posts WHERE campaign_id = ?1 AND seq <= ?3
                                     ORDER BY seq DESC LIMIT 1), 0)
         ORDER BY position"
    ))
    .bind(campaign_id.to_string())
    .bind(after)
    .bind(through)
    .fetch_all(db)
    .await
    .map_err(map_err)?;
    Db::decode_all(&rows, row::outcome)
}

pub(crate) async fn outcomes_of_kind(
    db: impl SqliteExecutor<'_>,
    campaign_id: Uuid,
    kind: IndexedOutcomeKind,
    limit: i64,
) -> Result<Vec<Outcome>> {
    let rows = sqlx::query(&KIND_QUERIES.outcomes)
        .bind(campaign_id.to_string())
        .bind(kind.as_str())
        .bind(limit)
        .fetch_all(db)
        .await
        .map_err(map_err)?;
    Db::decode_all(&rows, row::outcome)
}

pub(crate) async fn count_outcomes_of_kind(
    db: impl SqliteExecutor<'_>,
    campaign_id: Uuid,
    kind: IndexedOutcomeKind,
) -> Result<i64> {
    sqlx::query_scalar(&KIND_QUERIES.count_outcomes)
        .bind(campaign_id.to_string())
        .bind(kind.as_str())
        .fetch_one(db)
        .await
        .map_err(map_err)
}

pub(crate) async fn snapshots(
    db: impl SqliteExecutor<'_>,
    campaign_id: Uuid,
    after: i64,
    limit: i64,
) -> Result<Vec<(i64, String)>> {
    let rows = sqlx::query("SELECT seq, state FROM snapshots WHERE campaign_id = ? AND seq > ? ORDER BY seq LIMIT ?")
        .bind(campaign_id.to_string())
        .bind(after)
        .bind(limit)
        .fetch_all(db)
        .await
        .map_err(map_err)?;
    Db::decode_all(&rows, row::snapshot)
}

pub(crate) async fn snapshot_at(
    db: impl SqliteExecutor<'_>,
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
    Db::decode_optional(row, row::snapshot)
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::Pin;

    use adjutant_store::{migrations, Store};
    use sqlx::error::BoxDynError;
    use sqlx::migrate::{Migration, MigrationSource, Migrator};

    use super::*;

    /// The SQLite migrations before the version given: the schema a database an earlier build left
    /// has.
    #[derive(Debug)]
    struct Before(i64);

    impl MigrationSource<'static> for Before {
        fn resolve(self) -> Pin<Box<dyn Future<Output = std::result::Result<Vec<Migration>, BoxDynError>> + Send>> {
            Box::pin(async move {
                let all = migrations::SQLITE.migrations()?;
                Ok(all.into_iter().filter(|migration| migration.version < self.0).collect())
            })
        }
    }

    /// A database written before posts recorded their outcomes' positions is brought up to date
    /// with each post's `outcomes_through` worked out from the outcomes stored, and its posts'
    /// outcomes are found as before: posts without outcomes, at the start, between and at the
    /// end, and two campaigns that share sequence numbers.
    #[tokio::test]
    async fn posts_stored_before_their_outcomes_positions_find_their_outcomes_after_the_upgrade() {
        let dir = std::env::temp_dir().join(format!("adjutant-upgrade-{}", Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.join("a.db").display());
        let (first, second, author) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        // Each campaign's posts, each with its outcomes' count.
        let logs = [(first, vec![0, 2, 0, 1, 0, 0, 3, 0]), (second, vec![1, 0, 2])];
        {
            let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
            Migrator::new(Before(16)).await.unwrap().run(&pool).await.unwrap();
            let mut conn = pool.acquire().await.unwrap();
            sqlx::query("PRAGMA foreign_keys = OFF").execute(&mut *conn).await.unwrap();
            for (campaign, counts) in &logs {
                let mut position = 0;
                for (seq, &count) in (1i64..).zip(counts) {
                    sqlx::query(
                        "INSERT INTO posts (campaign_id, seq, stamp_ms, author_id, kind, body, prev_hash, hash)
                         VALUES (?, ?, 0, ?, 'note', '{}', 'p', 'h')",
                    )
                    .bind(campaign.to_string())
                    .bind(seq)
                    .bind(author.to_string())
                    .execute(&mut *conn)
                    .await
                    .unwrap();
                    for _ in 0..count {
                        position += 1;
                        sqlx::query(
                            "INSERT INTO outcomes (id, campaign_id, position, seq, kind, data)
                             VALUES (?, ?, ?, ?, 'roll', '{}')",
                        )
                        .bind(Uuid::new_v4().to_string())
                        .bind(campaign.to_string())
                        .bind(position)
                        .bind(seq)
                        .execute(&mut *conn)
                        .await
                        .unwrap();
                    }
                }
            }
            pool.close().await;
        }

        let store = crate::SqliteStore::open(&url).await.unwrap();
        for (campaign, counts) in &logs {
            let throughs: Vec<i64> =
                sqlx::query_scalar("SELECT outcomes_through FROM posts WHERE campaign_id = ? ORDER BY seq")
                    .bind(campaign.to_string())
                    .fetch_all(&store.readers)
                    .await
                    .unwrap();
            let expected: Vec<i64> = counts
                .iter()
                .scan(0, |through, &count| {
                    *through += count;
                    Some(*through)
                })
                .collect();
            assert_eq!(throughs, expected, "{campaign}");
            let mut all = Vec::new();
            for (seq, &count) in (1i64..).zip(counts) {
                let outcomes = store.outcomes_of_post(*campaign, seq).await.unwrap();
                assert_eq!(outcomes.len(), count as usize, "{campaign} post {seq}");
                assert!(outcomes.iter().all(|o| o.seq == seq && o.campaign_id == *campaign), "{campaign} post {seq}");
                all.extend(outcomes);
            }
            let last = counts.len() as i64;
            assert_eq!(store.outcomes_of_posts(*campaign, 0, last).await.unwrap(), all);
            assert_eq!(store.outcomes(*campaign, 0, 100).await.unwrap(), all);
            // A range from a post without outcomes to one past the end.
            let tail: Vec<_> = all.iter().filter(|o| o.seq > 2).cloned().collect();
            assert_eq!(store.outcomes_of_posts(*campaign, 2, last + 10).await.unwrap(), tail);
        }
        // The index by post is gone; the log is append-only again.
        let indexes: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'outcomes_by_post'")
                .fetch_one(&store.readers)
                .await
                .unwrap();
        assert_eq!(indexes, 0);
        let mut conn = store.writer.acquire().await.unwrap();
        let rewrite = sqlx::query("UPDATE posts SET outcomes_through = 0").execute(&mut *conn).await;
        assert!(rewrite.unwrap_err().to_string().contains("append-only"));
        drop(conn);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
