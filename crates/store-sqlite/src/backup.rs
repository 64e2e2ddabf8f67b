//! Online backups of the database file: a consistent copy taken while the server writes.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use adjutant_store::{Result, StoreError};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, Row as _};
use uuid::Uuid;

use crate::db::map_err;

/// Where a campaign's hash chain ends: its last post (none: `seq` 0, no hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub campaign_id: Uuid,
    pub seq: i64,
    pub hash: Option<String>,
}

/// Writes a consistent copy of the database at `url` to `dest`, which must not exist yet.
///
/// `VACUUM INTO` reads the database in one read transaction: under WAL the writer goes on
/// committing posts meanwhile (the copy holds the database as it stood when the read began), and
/// the copy is a compact database of its own, without a WAL. It is not made durable here.
pub async fn vacuum_into(url: &str, dest: &Path) -> Result<()> {
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|e| StoreError::Database(format!("bad SQLite URL: {e}")))?
        .read_only(true)
        .busy_timeout(Duration::from_secs(30));
    let mut conn = options.connect().await.map_err(map_err)?;
    let dest = dest.to_str().ok_or_else(|| StoreError::Database(format!("{} is not UTF-8", dest.display())))?;
    let done = sqlx::query("VACUUM INTO ?").bind(dest).execute(&mut conn).await.map_err(map_err);
    let _ = conn.close().await;
    done.map(|_| ())
}

/// Each campaign's chain head in the database file `path`, in the order campaigns were created.
/// The file is read as it is, untouched: no journal or WAL is made beside it.
pub async fn heads(path: &Path) -> Result<Vec<Head>> {
    let options = SqliteConnectOptions::new().filename(path).read_only(true).immutable(true);
    let mut conn = options.connect().await.map_err(map_err)?;
    let rows = sqlx::query(
        "SELECT c.id, p.seq, p.hash FROM campaigns c
         LEFT JOIN posts p ON p.campaign_id = c.id
             AND p.seq = (SELECT MAX(seq) FROM posts WHERE campaign_id = c.id)
         ORDER BY c.ord",
    )
    .fetch_all(&mut conn)
    .await
    .map_err(map_err)?;
    let _ = conn.close().await;
    rows.iter()
        .map(|row| {
            let id: String = row.try_get(0).map_err(map_err)?;
            Ok(Head {
                campaign_id: Uuid::parse_str(&id).map_err(|e| StoreError::Database(format!("bad uuid {id:?}: {e}")))?,
                seq: row.try_get::<Option<i64>, _>(1).map_err(map_err)?.unwrap_or(0),
                hash: row.try_get(2).map_err(map_err)?,
            })
        })
        .collect()
}

/// The lock file beside the database file at `url` (`adjutant.db` → `adjutant.db.lock`), or
/// none for a database held in memory.
fn lock_path(url: &str) -> Result<Option<std::path::PathBuf>> {
    let options =
        SqliteConnectOptions::from_str(url).map_err(|e| StoreError::Database(format!("bad SQLite URL: {e}")))?;
    let file = options.get_filename();
    let name = file.to_string_lossy();
    if name.is_empty() || name.starts_with(":memory:") || name.starts_with("file:") || url.contains("mode=memory") {
        return Ok(None);
    }
    let mut lock = file.as_os_str().to_owned();
    lock.push(".lock");
    Ok(Some(lock.into()))
}

/// Takes a shared lock on the database's lock file for as long as the returned file is kept:
/// every store that opens the database holds one, so a restore, which needs the lock alone,
/// knows the database is in use even while its connections are idle and closed.
pub fn hold(url: &str) -> Result<Option<std::fs::File>> {
    let Some(path) = lock_path(url)? else { return Ok(None) };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| StoreError::Database(format!("{}: {e}", path.display())))?;
    file.lock_shared().map_err(|e| StoreError::Database(format!("{}: {e}", path.display())))?;
    Ok(Some(file))
}

/// Whether a store (a running server, a copy) holds the database at `url`: its lock file's
/// lock cannot be had alone. The exclusive lock taken to find out is let go at once.
pub fn held(url: &str) -> Result<bool> {
    let Some(path) = lock_path(url)? else { return Ok(false) };
    let file = match std::fs::OpenOptions::new().write(true).open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(StoreError::Database(format!("{}: {e}", path.display()))),
    };
    match file.try_lock() {
        Ok(()) => Ok(false),
        Err(std::fs::TryLockError::WouldBlock) => Ok(true),
        Err(std::fs::TryLockError::Error(e)) => Err(StoreError::Database(format!("{}: {e}", path.display()))),
    }
}

/// Whether a connection (a running server's) has the database at `url` open. Under WAL every
/// open connection keeps a shared lock, so an exclusive one is refused at once while any is.
pub async fn in_use(url: &str) -> Result<bool> {
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|e| StoreError::Database(format!("bad SQLite URL: {e}")))?
        .busy_timeout(Duration::ZERO)
        .pragma("locking_mode", "EXCLUSIVE");
    let mut conn = match options.connect().await {
        Ok(conn) => conn,
        Err(e) if is_busy(&e) => return Ok(true),
        Err(e) => return Err(map_err(e)),
    };
    let taken = sqlx::raw_sql("BEGIN EXCLUSIVE; ROLLBACK;").execute(&mut conn).await;
    let _ = conn.close().await;
    match taken {
        Ok(_) => Ok(false),
        Err(e) if is_busy(&e) => Ok(true),
        Err(e) => Err(map_err(e)),
    }
}

fn is_busy(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db)
        if db.code().and_then(|c| c.parse::<i32>().ok()).is_some_and(|c| matches!(c & 0xff, 5 | 6)))
}
