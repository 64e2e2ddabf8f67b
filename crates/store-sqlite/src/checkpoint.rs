//! Checkpointing the WAL beside the writer rather than in its commits.

use std::sync::Arc;
use std::time::Duration;

use sqlx::SqlitePool;

/// How long after a commit of posts the WAL is checkpointed: soon enough that what is left to
/// the writer's own checkpoint, while a batch's posts wait on its commit, is a few batches' pages.
const CHECKPOINT_AFTER: Duration = Duration::from_millis(30);

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
/// every 2.6 s (p99 27–30 ms, and some 15 % more posts a second).
pub(crate) const WRITER_CHECKPOINT_PAGES: &str = "65536";

/// SQLite checkpoints the WAL on the connection whose commit made it long enough: the writer's,
/// with every post of the batch waiting for its answer. Here a connection of its own does it, a
/// moment after posts were committed. A PASSIVE checkpoint never holds up the writer or the
/// readers; what it cannot copy yet, the next one does.
pub(crate) async fn after_commits(
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
