//! Reading a campaign's log: its posts, their outcomes and the state snapshots.

use std::sync::LazyLock;

use adjutant_store::row::{self, Encoding, OUTCOME_COLUMNS};
use adjutant_store::{
    IndexedOutcomeKind, IndexedPostKind, KindQueries, Outcome, Post, Result, OUTCOMES_BY_KIND_HOLDS,
    POSTS_BY_KIND_HOLDS,
};
use chrono::{DateTime, Utc};
use sqlx::PgExecutor;
use uuid::Uuid;

use crate::db::{map_err, Db};

/// The columns of a post, in the order of an insert.
pub(crate) const POST_COLUMNS: &str =
    "campaign_id, seq, stamp, author_id, side, kind, body, prev_hash, hash, receipt_key_id, receipt_signature";

pub(crate) async fn posts(db: impl PgExecutor<'_>, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<Post>> {
    let rows = sqlx::query(&format!(
        "SELECT {POST_COLUMNS} FROM posts WHERE campaign_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"
    ))
    .bind(campaign_id)
    .bind(after)
    .bind(limit)
    .fetch_all(db)
    .await
    .map_err(map_err)?;
    Db::decode_all(&rows, row::post)
}

pub(crate) async fn post(db: impl PgExecutor<'_>, campaign_id: Uuid, seq: i64) -> Result<Option<Post>> {
    let row = sqlx::query(&format!("SELECT {POST_COLUMNS} FROM posts WHERE campaign_id = $1 AND seq = $2"))
        .bind(campaign_id)
        .bind(seq)
        .fetch_optional(db)
        .await
        .map_err(map_err)?;
    Db::decode_optional(row, row::post)
}

pub(crate) async fn head(db: impl PgExecutor<'_>, campaign_id: Uuid) -> Result<Option<Post>> {
    let row =
        sqlx::query(&format!("SELECT {POST_COLUMNS} FROM posts WHERE campaign_id = $1 ORDER BY seq DESC LIMIT 1"))
            .bind(campaign_id)
            .fetch_optional(db)
            .await
            .map_err(map_err)?;
    Db::decode_optional(row, row::post)
}

/// The statements that find posts and outcomes by kind. Each states its index's condition beside
/// the kind: a prepared statement's plan kept for any kind cannot use a partial index otherwise,
/// and reads the campaign's whole log instead.
pub static KIND_QUERIES: LazyLock<KindQueries> = LazyLock::new(|| KindQueries {
    posts: format!(
        "SELECT {POST_COLUMNS} FROM posts WHERE campaign_id = $1 AND kind = $2 AND {POSTS_BY_KIND_HOLDS} ORDER BY seq"
    ),
    outcomes: format!(
        "SELECT {OUTCOME_COLUMNS} FROM outcomes
         WHERE campaign_id = $1 AND kind = $2 AND {OUTCOMES_BY_KIND_HOLDS} ORDER BY position LIMIT $3"
    ),
    count_outcomes: format!(
        "SELECT COUNT(*) FROM outcomes WHERE campaign_id = $1 AND kind = $2 AND {OUTCOMES_BY_KIND_HOLDS}"
    ),
});

pub(crate) async fn posts_of_kind(
    db: impl PgExecutor<'_>,
    campaign_id: Uuid,
    kind: IndexedPostKind,
) -> Result<Vec<Post>> {
    let rows =
        sqlx::query(&KIND_QUERIES.posts).bind(campaign_id).bind(kind.as_str()).fetch_all(db).await.map_err(map_err)?;
    Db::decode_all(&rows, row::post)
}

pub(crate) async fn count_posts_by_author(
    db: impl PgExecutor<'_>,
    campaign_id: Uuid,
    author_id: Uuid,
    kind: Option<&str>,
    since: DateTime<Utc>,
) -> Result<i64> {
    // Without a kind: every kind (a NULL kind matches every row).
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM posts WHERE campaign_id = $1 AND author_id = $2 AND (kind = $3 OR $3 IS NULL) AND stamp >= $4",
    )
    .bind(campaign_id)
    .bind(author_id)
    .bind(kind)
    .bind(since)
    .fetch_one(db)
    .await
    .map_err(map_err)
}

pub(crate) async fn outcome(db: impl PgExecutor<'_>, campaign_id: Uuid, id: Uuid) -> Result<Option<Outcome>> {
    let row = sqlx::query(&format!("SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = $1 AND id = $2"))
        .bind(campaign_id)
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(map_err)?;
    Db::decode_optional(row, row::outcome)
}

pub(crate) async fn outcomes(
    db: impl PgExecutor<'_>,
    campaign_id: Uuid,
    after: i64,
    limit: i64,
) -> Result<Vec<Outcome>> {
    let rows = sqlx::query(&format!(
        "SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = $1 AND position > $2 ORDER BY position LIMIT $3"
    ))
    .bind(campaign_id)
    .bind(after)
    .bind(limit)
    .fetch_all(db)
    .await
    .map_err(map_err)?;
    Db::decode_all(&rows, row::outcome)
}

pub(crate) async fn latest_outcomes(db: impl PgExecutor<'_>, campaign_id: Uuid, limit: i64) -> Result<Vec<Outcome>> {
    let rows = sqlx::query(&format!(
        "SELECT {OUTCOME_COLUMNS} FROM outcomes WHERE campaign_id = $1 ORDER BY position DESC LIMIT $2"
    ))
    .bind(campaign_id)
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
    db: impl PgExecutor<'_>,
    campaign_id: Uuid,
    after: i64,
    through: i64,
) -> Result<Vec<Outcome>> {
    let rows = sqlx::query(&format!(
        "SELECT {OUTCOME_COLUMNS} FROM outcomes
         WHERE campaign_id = $1
           AND position > COALESCE((SELECT outcomes_through FROM posts WHERE campaign_id = $1 AND seq <= $2
                                    ORDER BY seq DESC LIMIT 1), 0)
           AND position <= COALESCE((SELECT outcomes_through FROM posts WHERE campaign_id = $1 AND seq <= $3
                                     ORDER BY seq DESC LIMIT 1), 0)
         ORDER BY position"
    ))
    .bind(campaign_id)
    .bind(after)
    .bind(through)
    .fetch_all(db)
    .await
    .map_err(map_err)?;
    Db::decode_all(&rows, row::outcome)
}

pub(crate) async fn outcomes_of_kind(
    db: impl PgExecutor<'_>,
    campaign_id: Uuid,
    kind: IndexedOutcomeKind,
    limit: i64,
) -> Result<Vec<Outcome>> {
    let rows = sqlx::query(&KIND_QUERIES.outcomes)
        .bind(campaign_id)
        .bind(kind.as_str())
        .bind(limit)
        .fetch_all(db)
        .await
        .map_err(map_err)?;
    Db::decode_all(&rows, row::outcome)
}

pub(crate) async fn count_outcomes_of_kind(
    db: impl PgExecutor<'_>,
    campaign_id: Uuid,
    kind: IndexedOutcomeKind,
) -> Result<i64> {
    sqlx::query_scalar(&KIND_QUERIES.count_outcomes)
        .bind(campaign_id)
        .bind(kind.as_str())
        .fetch_one(db)
        .await
        .map_err(map_err)
}

pub(crate) async fn snapshots(
    db: impl PgExecutor<'_>,
    campaign_id: Uuid,
    after: i64,
    limit: i64,
) -> Result<Vec<(i64, String)>> {
    let rows =
        sqlx::query("SELECT seq, state FROM snapshots WHERE campaign_id = $1 AND seq > $2 ORDER BY seq LIMIT $3")
            .bind(campaign_id)
            .bind(after)
            .bind(limit)
            .fetch_all(db)
            .await
            .map_err(map_err)?;
    Db::decode_all(&rows, row::snapshot)
}

pub(crate) async fn snapshot_at(db: impl PgExecutor<'_>, campaign_id: Uuid, seq: i64) -> Result<Option<(i64, String)>> {
    let row =
        sqlx::query("SELECT seq, state FROM snapshots WHERE campaign_id = $1 AND seq <= $2 ORDER BY seq DESC LIMIT 1")
            .bind(campaign_id)
            .bind(seq)
            .fetch_optional(db)
            .await
            .map_err(map_err)?;
    Db::decode_optional(row, row::snapshot)
}
