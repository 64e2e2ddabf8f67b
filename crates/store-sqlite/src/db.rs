//! What SQLite says its own way: its errors, and ids kept as text and times as milliseconds
//! since the epoch.

use adjutant_store::row::{self, Encoding};
use adjutant_store::{Result, StoreError};
use chrono::{DateTime, TimeZone, Utc};
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

pub(crate) fn map_err(err: sqlx::Error) -> StoreError {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::Conflict(db.message().to_owned()),
        // SQLITE_BUSY / SQLITE_LOCKED (and their extended codes): another process holds the
        // file. Say "try again" rather than pass "database is locked" on.
        sqlx::Error::Database(db)
            if db.code().and_then(|c| c.parse::<i32>().ok()).is_some_and(|c| matches!(c & 0xff, 5 | 6)) =>
        {
            StoreError::Unavailable(db.message().to_owned())
        }
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => {
            StoreError::Unavailable(err.to_string())
        }
        _ => StoreError::Database(err.to_string()),
    }
}

/// SQLite's rows: ids as text, times as milliseconds.
pub(crate) struct Db;

impl Encoding for Db {
    type Row = SqliteRow;

    fn opt_uuid(row: &SqliteRow, column: &str) -> Result<Option<Uuid>> {
        row::get::<_, Option<String>>(row, column)?.as_deref().map(uuid).transpose()
    }

    fn opt_time(row: &SqliteRow, column: &str) -> Result<Option<DateTime<Utc>>> {
        row::get::<_, Option<i64>>(row, column)?.map(ms_to_time).transpose()
    }
}

pub(crate) fn ms_to_time(ms: i64) -> Result<DateTime<Utc>> {
    Utc.timestamp_millis_opt(ms).single().ok_or_else(|| StoreError::Database(format!("bad time stamp {ms}")))
}

pub(crate) fn uuid(text: &str) -> Result<Uuid> {
    Uuid::parse_str(text).map_err(|e| StoreError::Database(format!("bad uuid {text:?}: {e}")))
}
