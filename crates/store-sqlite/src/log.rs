//! Reading a campaign's log: its posts, their outcomes and the state snapshots.

use std::sync::LazyLock;

use adjutant_store::row::{self, Encoding, OUTCOME_COLUMNS};
use adjutant_store::{
    IndexedOutcomeKind, IndexedPostKind, KindQueries, Outcome, Post, Result, OUTCOMES_BY_KIND_HOLDS,
    POSTS_BY_KIND_HOLDS,
};
use chrono::{DateTime, Utc};
use sqlx::{SqliteExecutor, SqlitePool};
use uuid::Uuid;

use crate::db::{map_err, Db};
use crate::raw::{self, Sql};

/// The columns of a post, in the order of an insert.
pub(crate) const POST_COLUMNS: &str =
    "campaign_id, seq, stamp_ms, author_id, side, kind, body, prev_hash, hash, receipt_key_id, receipt_signature";
/// The columns of a post as `row::post` reads them.
const POST_SELECT: &str = "campaign_id, seq, stamp_ms AS stamp, author_id, side, kind, body, prev_hash, hash, \
     receipt_key_id, receipt_signature";

/// The posts after `after`, at most `limit`, read on a reader's own handle ([`raw::read`]): the
/// pages the audit, the exports, the post list, the fairness report and the event streams read.
pub(crate) async fn posts(readers: &SqlitePool, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<Post>> {
    let mut sql = Sql::new(&format!("SELECT {POST_SELECT} FROM posts WHERE campaign_id = "));
    sql.bind(campaign_id).push(" AND seq > ").bind(after).push(" ORDER BY seq LIMIT ").bind(limit);
    raw::read(readers, &sql, limit, row::post).await
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

/// The outcomes after position `after`, at most `limit`, read as [`posts`] are.
pub(crate) async fn outcomes(readers: &SqlitePool, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<Outcome>> {
    let mut sql = Sql::new(&format!("SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = "));
    sql.bind(campaign_id).push(" AND position > ").bind(after).push(" ORDER BY position LIMIT ").bind(limit);
    raw::read(readers, &sql, limit, row::outcome).await
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
