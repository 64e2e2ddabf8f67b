//! Checkpointing the WAL beside the writer rather than in its commits.

use std::sync::Arc;
use std::time::Duration;

use sqlx::SqlitePool;

/// How long after a commit of posts the WAL is checkpointed. A checkpoint copies each page the
/// WAL changed since the one before once, however many batches changed it (a campaign's last
/// leaf of each index, written again by every batch), and then syncs the database file. At 30 ms
/// the same pages were copied and the file synced some thirty times a second, beside the writer,
/// on its cores and its disk; at 250 ms, on a 2-core machine, posts spread over 1,000 campaigns
/// went from 1,534 to 2,026 a second and posts to one campaign from 3,461–3,895 to 3,913–4,206
/// (`adjutant-bench scale` and `throughput`, each build in turn).
const CHECKPOINT_AFTER: Duration = Duration::from_millis(250);

/// How long after a commit the WAL is checkpointed once it holds [`NEAR_WRITER_CHECKPOINT`]
/// frames. The writer's own checkpoint is then near, and in its commit, while a batch's posts wait
/// for their answers, it copies whatever the checkpointer has not: at 250 ms, up to a quarter
/// second of frames (some 6,000 over 1,000 campaigns). With 250 ms throughout, the post p99 over
/// 1,000 campaigns was 284 ms in one of two bench runs (57 ms in the other; 88–103 ms at 30 ms);
/// with this, 104–113 ms. Checkpointed this soon, it finds a few batches' pages left.
const CHECKPOINT_SOON: Duration = Duration::from_millis(30);

/// Frames in the WAL from which the checkpointer comes [`CHECKPOINT_SOON`]: three quarters of
/// [`WRITER_CHECKPOINT_PAGES`], some 0.65 s before it at 25,000 frames a second.
const NEAR_WRITER_CHECKPOINT: i64 = WRITER_CHECKPOINT_PAGES / 4 * 3;

/// The writer's own automatic checkpoint, in pages of the WAL (SQLite's default is 1,000): a
/// backstop should the checkpointer fall behind, and large because each one holds up a batch.
///
/// It comes more often than the checkpointer falls behind. The WAL starts again from its
/// beginning only when a write transaction begins with every frame copied, and with batches
/// committed back to back the checkpointer seldom leaves it so between a commit and the next
/// batch: the WAL grows until this checkpoint, in a commit, copies the last frames and lets it
/// start again. With posts spread over 1,000 campaigns (some 25,000 frames a second) 16,384
/// pages came every 0.65 s and held up a batch each time (p99 75 ms); at 65,536 pages (256 MiB
/// at 4 KiB pages: the most the WAL file then takes on disk, kept between restarts) they come
/// every 2.6 s (p99 27–30 ms, and some 15 % more posts a second; measured with the checkpointer
/// at 30 ms after every commit).
pub(crate) const WRITER_CHECKPOINT_PAGES: i64 = 65_536;

/// SQLite checkpoints the WAL on the connection whose commit made it long enough: the writer's,
/// with every post of the batch waiting for its answer. Here a connection of its own does it, a
/// moment after posts were committed. A PASSIVE checkpoint never holds up the writer or the
/// readers; what it cannot copy yet, the next one does.
pub(crate) async fn after_commits(
    pool: SqlitePool,
    commits: Arc<tokio::sync::Notify>,
    mut stop: tokio::sync::watch::Receiver<()>,
) {
    let mut after = CHECKPOINT_AFTER;
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            () = commits.notified() => {}
        }
        tokio::select! {
            _ = stop.changed() => return,
            () = tokio::time::sleep(after) => {}
        }
        match checkpoint(&pool, NEAR_WRITER_CHECKPOINT).await {
            Ok(next) => after = next,
            Err(e) => {
                if pool.is_closed() {
                    return;
                }
                tracing::warn!(error = %e, "a WAL checkpoint failed; the next one, or the writer's own, copies those pages");
            }
        }
    }
}

/// One PASSIVE checkpoint, and how long after the next commit the one after it comes: soon once
/// the WAL holds `near` frames. SQLite answers with whether it was kept from finishing, the frames
/// in the WAL and those now copied into the database file.
async fn checkpoint(pool: &SqlitePool, near: i64) -> sqlx::Result<Duration> {
    let (_, frames, _) = sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(PASSIVE)").fetch_one(pool).await?;
    Ok(if frames >= near { CHECKPOINT_SOON } else { CHECKPOINT_AFTER })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checkpoint's answer is read: a WAL with frames in it brings the next checkpoint soon
    /// once it holds as many as `near`, and not before.
    #[tokio::test]
    async fn the_next_checkpoint_comes_soon_once_the_wal_is_long() {
        let dir = std::env::temp_dir().join(format!("adjutant-checkpoint-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let store = crate::SqliteStore::open(&format!("sqlite://{}", dir.join("a.db").display())).await.unwrap();
        sqlx::query("PRAGMA foreign_keys = OFF; INSERT INTO idempotency_keys VALUES ('p', 'k', 'c', 'h', 1)")
            .execute(&store.writer)
            .await
            .unwrap();
        assert_eq!(checkpoint(&store.checkpointer, i64::MAX).await.unwrap(), CHECKPOINT_AFTER);
        assert_eq!(checkpoint(&store.checkpointer, 1).await.unwrap(), CHECKPOINT_SOON, "the WAL holds frames");
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
