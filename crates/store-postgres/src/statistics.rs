//! Keeping the planner's statistics of the log's tables from lagging far behind them.

use sqlx::PgPool;

/// After how many posts appended by this process the log's tables' statistics are looked at
/// ([`analyze_if_stale`]).
pub(crate) const LOOK_AT_STATISTICS: [u64; 3] = [256, 4_096, 65_536];

/// Gathers the log's tables' statistics (`ANALYZE`) when they are far behind the tables, as on
/// a new installation, whose tables were empty when the server's connections first planned the
/// statements they keep. Such a plan can check that an outcome's post exists by reading every
/// post of the campaign through another index of `posts` (its first column is the campaign's
/// too), once an outcome, so that each post costs more than the one before, until autovacuum
/// first analyzes the tables (a minute or more later); statistics gathered invalidate the
/// plans kept. A database whose statistics are current is left alone.
pub(crate) async fn analyze_if_stale(pool: PgPool) {
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
