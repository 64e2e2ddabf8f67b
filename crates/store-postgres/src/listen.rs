//! Posts committed by any server on the database, heard through PostgreSQL's `LISTEN`: each
//! batch's append sends `NOTIFY adjutant_posts, '<campaign>:<seq>'` inside its transaction, so
//! the notice goes out exactly when the posts are committed.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use adjutant_store::principals::PrincipalCache;
use adjutant_store::Heard;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPool, PgPoolOptions};
use sqlx::PgConnection;
use tokio::sync::{mpsc, watch};
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

/// The channel each server answers a change of standing on once it has forgotten what it kept:
/// `<the change's payload>:<the listening connection's backend pid>`.
const FORGOTTEN: &str = "adjutant_principals_forgotten";

/// The advisory lock (PostgreSQL's two-key form) every listening connection holds shared while
/// it listens for changes of standing: `pg_locks` names the servers that keep principals, and a
/// server that died holds it no more.
const LISTENING_LOCK: (i32, i32) = (0x4164_6a75, 1);

/// How long a change of standing waits for every listening server to say it forgot what it
/// kept; a server that has not said so by then still forgets within [`adjutant_store::principals::MAX_AGE`].
const ANSWER_WAIT: Duration = Duration::from_secs(2);

/// The changes of standing this server told, each with the listening connections that have
/// answered it so far.
#[derive(Default, Clone)]
pub(crate) struct Answers(Arc<Mutex<HashMap<String, watch::Sender<HashSet<i32>>>>>);

impl Answers {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, watch::Sender<HashSet<i32>>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The listening connection `pid` forgot what its server kept, for the change `payload`.
    fn forgotten(&self, payload: &str, pid: i32) {
        if let Some(answers) = self.lock().get(payload) {
            answers.send_modify(|answered| {
                answered.insert(pid);
            });
        }
    }
}

/// An answer's payload on [`FORGOTTEN`]: the change answered and who answered it.
fn answer(change: &str, pid: i32) -> String {
    format!("{change}:{pid}")
}

/// An answer read back: the change's payload and who answered.
fn answered(payload: &str) -> Option<(&str, i32)> {
    let (change, pid) = payload.rsplit_once(':')?;
    Some((change, pid.parse().ok()?))
}

/// A change of standing told, until every listening server has answered it (or this one gives
/// up: dropped).
pub(crate) struct Told {
    answers: Answers,
    payload: String,
    answered: watch::Receiver<HashSet<i32>>,
}

impl Drop for Told {
    fn drop(&mut self) {
        // Answered, or never to be (a transaction rolled back): nobody waits for it any more.
        self.answers.lock().remove(&self.payload);
    }
}

/// Tells every server, when `transaction` commits, that a principal's standing changed. After
/// the commit, [`answered_everywhere`] waits for every listening server to have forgotten what it kept.
pub(crate) async fn tell_standing_changed(
    transaction: &mut PgConnection,
    answers: &Answers,
) -> adjutant_store::Result<Told> {
    let payload = Uuid::new_v4().to_string();
    let (answering, answered) = watch::channel(HashSet::new());
    answers.lock().insert(payload.clone(), answering);
    let told = Told { answers: answers.clone(), payload, answered };
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(STANDING)
        .bind(&told.payload)
        .execute(transaction)
        .await
        .map_err(map_err)?;
    Ok(told)
}

/// The backend pids of the connections listening for changes of standing now, on any server.
async fn listening(pool: &PgPool) -> sqlx::Result<Vec<i32>> {
    let (key1, key2) = LISTENING_LOCK;
    sqlx::query_scalar(
        "SELECT pid FROM pg_locks
         WHERE locktype = 'advisory' AND granted AND classid = $1::int4::oid AND objid = $2::int4::oid
           AND objsubid = 2 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    )
    .bind(key1)
    .bind(key2)
    .fetch_all(pool)
    .await
}

/// Waits, after the commit of a change of standing, until every server listening for such
/// changes (this one included) has forgotten the principals it kept: a request any of them takes
/// after this returns reads the principal anew. A server that listens from after the commit
/// reads anew anyway (a new listener keeps nothing from before it listened); one that does not
/// answer within [`ANSWER_WAIT`] (stalled, or cut off) is not waited for longer. Without a
/// listener of its own this server cannot hear the answers, and does not wait.
pub(crate) async fn answered_everywhere(cache: &PrincipalCache, pool: &PgPool, mut told: Told) {
    if !cache.is_trusted() {
        return;
    }
    let listeners = match listening(pool).await {
        Ok(listeners) => listeners,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read which servers listen for revoked tokens; not waiting for them");
            return;
        }
    };
    let everyone = told.answered.wait_for(|answered| listeners.iter().all(|pid| answered.contains(pid)));
    if tokio::time::timeout(ANSWER_WAIT, everyone).await.is_err() {
        let answered = told.answered.borrow().clone();
        let silent: Vec<i32> = listeners.into_iter().filter(|pid| !answered.contains(pid)).collect();
        tracing::warn!(?silent, "a change of standing was not answered by every listening server in time");
    }
}

/// Listens for changes of standing until `stop` is dropped: each forgets the principals
/// `cache` kept, and is answered on [`FORGOTTEN`] once forgotten. While the connection is down
/// the cache keeps nothing, since notices may be missed; it is trusted again once a new
/// connection listens and holds [`LISTENING_LOCK`].
pub(crate) async fn forget_principals_on_notice(
    options: PgConnectOptions,
    cache: Arc<PrincipalCache>,
    answers: Answers,
    mut stop: watch::Receiver<()>,
) {
    let mut wait = RETRY_FIRST;
    loop {
        let connected = tokio::select! {
            _ = stop.changed() => return,
            connected = listen_for_standing(&options) => connected,
        };
        let (mut listener, pid) = match connected {
            Ok(connected) => connected,
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
            let failed = match received {
                Ok(Some(notification)) if notification.channel() == FORGOTTEN => {
                    if let Some((change, pid)) = answered(notification.payload()) {
                        answers.forgotten(change, pid);
                    }
                    None
                }
                Ok(Some(notification)) => {
                    cache.forget_all();
                    sqlx::query("SELECT pg_notify($1, $2)")
                        .bind(FORGOTTEN)
                        .bind(answer(notification.payload(), pid))
                        .execute(&mut listener)
                        .await
                        .err()
                        .map(|e| e.to_string())
                }
                Ok(None) => Some("the connection was closed".to_owned()),
                Err(e) => Some(e.to_string()),
            };
            if let Some(error) = failed {
                cache.trust(false);
                tracing::warn!(%error, "the connection listening for revoked tokens was lost; reconnecting");
                break;
            }
        }
    }
}

/// A connection listening for changes of standing and their answers, holding
/// [`LISTENING_LOCK`], and its backend pid.
async fn listen_for_standing(options: &PgConnectOptions) -> sqlx::Result<(PgListener, i32)> {
    let mut listener = connect_on(options, STANDING).await?;
    listener.listen(FORGOTTEN).await?;
    let (key1, key2) = LISTENING_LOCK;
    sqlx::query("SELECT pg_advisory_lock_shared($1, $2)").bind(key1).bind(key2).execute(&mut listener).await?;
    let pid = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut listener).await?;
    Ok((listener, pid))
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

    #[test]
    fn an_answer_reads_back_as_the_change_and_who_answered() {
        let change = Uuid::new_v4().to_string();
        assert_eq!(answered(&answer(&change, 6177)), Some((change.as_str(), 6177)));
        assert_eq!(answered(&change), None);
        assert_eq!(answered(&format!("{change}:pid")), None);
    }
}
