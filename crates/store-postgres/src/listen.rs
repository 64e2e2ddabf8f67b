//! Posts committed by any server on the database, heard through PostgreSQL's `LISTEN`: each
//! batch's append sends `NOTIFY adjutant_posts, '<campaign>:<seq>'` inside its transaction, so
//! the notice goes out exactly when the posts are committed.

use std::time::Duration;

use adjutant_store::Heard;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};
use tokio::sync::mpsc;
use uuid::Uuid;

/// The channel every server notifies and listens on.
pub(crate) const CHANNEL: &str = "adjutant_posts";

/// Notices waiting for the server to take them; more wait in the connection's own buffer.
const WAITING: usize = 1024;
/// The first wait before connecting again, doubled after each failure up to `RETRY_CAP`.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_CAP: Duration = Duration::from_secs(5);

/// A notice's payload: the campaign and the last post it has now.
pub(crate) fn notice(campaign_id: Uuid, seq: i64) -> String {
    format!("{campaign_id}:{seq}")
}

fn heard(payload: &str) -> Option<Heard> {
    let (campaign_id, seq) = payload.split_once(':')?;
    Some(Heard::Post { campaign_id: campaign_id.parse().ok()?, seq: seq.parse().ok()? })
}

/// Listens on a connection of its own (not the pool's: it is held for good) until the receiver
/// is dropped. After each (re)connection it says [`Heard::Resumed`]: whatever was committed
/// while nobody listened is in the logs, for the server to read.
pub(crate) fn listen(options: PgConnectOptions) -> mpsc::Receiver<Heard> {
    let (told, heard_here) = mpsc::channel(WAITING);
    tokio::spawn(async move {
        let mut wait = RETRY_FIRST;
        loop {
            let connected = tokio::select! {
                () = told.closed() => return,
                connected = connect(&options) => connected,
            };
            let mut listener = match connected {
                Ok(listener) => listener,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for other servers' posts; trying again");
                    tokio::select! {
                        () = told.closed() => return,
                        () = tokio::time::sleep(wait) => {}
                    }
                    wait = (wait * 2).min(RETRY_CAP);
                    continue;
                }
            };
            wait = RETRY_FIRST;
            if told.send(Heard::Resumed).await.is_err() {
                return;
            }
            loop {
                let received = tokio::select! {
                    () = told.closed() => return,
                    received = listener.try_recv() => received,
                };
                match received {
                    Ok(Some(notification)) => {
                        if let Some(news) = heard(notification.payload()) {
                            if told.send(news).await.is_err() {
                                return;
                            }
                        }
                    }
                    Ok(None) => {
                        tracing::warn!("the connection listening for other servers' posts was lost; reconnecting");
                        break;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "the connection listening for other servers' posts failed; reconnecting");
                        break;
                    }
                }
            }
        }
    });
    heard_here
}

/// A listener on [`CHANNEL`], on a pool of one connection of its own, opened anew each time.
async fn connect(options: &PgConnectOptions) -> sqlx::Result<PgListener> {
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(5))
        .connect_with(options.clone())
        .await?;
    let mut listener = PgListener::connect_with(&pool).await?;
    // A lost connection is given up, not reconnected in place: `listen` opens a new one and
    // says so.
    listener.eager_reconnect(false);
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_reads_back_as_the_campaign_and_its_last_post() {
        let campaign_id = Uuid::new_v4();
        assert_eq!(heard(&notice(campaign_id, 42)), Some(Heard::Post { campaign_id, seq: 42 }));
        assert_eq!(heard("not a notice"), None);
        assert_eq!(heard(&format!("{campaign_id}:x")), None);
    }
}
