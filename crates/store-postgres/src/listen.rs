//! Posts committed by any server on the database, heard through PostgreSQL's `LISTEN`: each
//! batch's append sends `NOTIFY adjutant_posts, '<campaign>:<seq>'` inside its transaction, so
//! the notice goes out exactly when the posts are committed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use adjutant_store::principals::PrincipalCache;
use adjutant_store::Heard;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};
use sqlx::PgConnection;
use tokio::sync::{mpsc, oneshot, watch};
use uuid::Uuid;

use crate::db::map_err;

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

/// The channel a revoked or replaced token is told on, so that every server forgets the
/// principals it kept.
const STANDING: &str = "adjutant_principals";

/// How long a change of standing waits to hear its own notice back: by then every server
/// listening has been sent it too.
const ECHO_WAIT: Duration = Duration::from_secs(2);

/// The notices of changes of standing this server sent, each with who waits to hear it back.
#[derive(Default, Clone)]
pub(crate) struct Echoes(Arc<Mutex<HashMap<String, oneshot::Sender<()>>>>);

impl Echoes {
    fn take(&self, payload: &str) -> Option<oneshot::Sender<()>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(payload)
    }
}

/// A change of standing told, until this server hears it back (or gives up: dropped).
pub(crate) struct Told {
    echoes: Echoes,
    payload: String,
    hear: Option<oneshot::Receiver<()>>,
}

impl Drop for Told {
    fn drop(&mut self) {
        // Heard, or never to be (a transaction rolled back): nobody waits for it any more.
        self.echoes.take(&self.payload);
    }
}

/// Tells every server, when `transaction` commits, that a principal's standing changed. After
/// the commit, [`heard_back`] waits for this server's own listener to hear it.
pub(crate) async fn tell_standing_changed(
    transaction: &mut PgConnection,
    echoes: &Echoes,
) -> adjutant_store::Result<Told> {
    let payload = Uuid::new_v4().to_string();
    let (heard, hear) = oneshot::channel();
    echoes.0.lock().unwrap_or_else(|e| e.into_inner()).insert(payload.clone(), heard);
    let told = Told { echoes: echoes.clone(), payload, hear: Some(hear) };
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(STANDING)
        .bind(&told.payload)
        .execute(transaction)
        .await
        .map_err(map_err)?;
    Ok(told)
}

/// Waits (a moment at most) for this server's listener to hear a change of standing it told,
/// when it listens: the other servers' listeners are sent the notice at the same time.
pub(crate) async fn heard_back(cache: &PrincipalCache, mut told: Told) {
    if let Some(hear) = told.hear.take().filter(|_| cache.is_trusted()) {
        let _ = tokio::time::timeout(ECHO_WAIT, hear).await;
    }
}

/// Listens for changes of standing until `stop` is dropped: each forgets the principals
/// `cache` kept. While the connection is down the cache keeps nothing, since notices may be
/// missed; it is trusted again once a new connection listens.
pub(crate) async fn forget_principals_on_notice(
    options: PgConnectOptions,
    cache: Arc<PrincipalCache>,
    echoes: Echoes,
    mut stop: watch::Receiver<()>,
) {
    let mut wait = RETRY_FIRST;
    loop {
        let connected = tokio::select! {
            _ = stop.changed() => return,
            connected = connect_on(&options, STANDING) => connected,
        };
        let mut listener = match connected {
            Ok(listener) => listener,
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for revoked tokens; tokens are read on every request meanwhile");
                tokio::select! {
                    _ = stop.changed() => return,
                    () = tokio::time::sleep(wait) => {}
                }
                wait = (wait * 2).min(RETRY_CAP);
                continue;
            }
        };
        wait = RETRY_FIRST;
        cache.trust(true);
        loop {
            let received = tokio::select! {
                _ = stop.changed() => return,
                received = listener.try_recv() => received,
            };
            match received {
                Ok(Some(notification)) => {
                    cache.forget_all();
                    if let Some(heard) = echoes.take(notification.payload()) {
                        let _ = heard.send(());
                    }
                }
                Ok(None) | Err(_) => {
                    cache.trust(false);
                    tracing::warn!("the connection listening for revoked tokens was lost; reconnecting");
                    break;
                }
            }
        }
    }
}

/// A listener on [`CHANNEL`], on a pool of one connection of its own, opened anew each time.
async fn connect(options: &PgConnectOptions) -> sqlx::Result<PgListener> {
    connect_on(options, CHANNEL).await
}

/// A listener on `channel`, on a pool of one connection of its own.
async fn connect_on(options: &PgConnectOptions, channel: &str) -> sqlx::Result<PgListener> {
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(5))
        .connect_with(options.clone())
        .await?;
    let mut listener = PgListener::connect_with(&pool).await?;
    // A lost connection is given up, not reconnected in place: `listen` opens a new one and
    // says so.
    listener.eager_reconnect(false);
    listener.listen(channel).await?;
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
