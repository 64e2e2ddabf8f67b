//! What SQLite says its own way: its errors, and ids kept as text and times as milliseconds
//! since the epoch.

use adjutant_store::row::{self, Encoding};
use adjutant_store::{Result, StoreError};
use chrono::{DateTime, TimeZone, Utc};
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

pub(crate) fn map_err(err: sqlx::Error) -> StoreError {
    match &err {
        sqlx::Error::Database(db) => match db.code().and_then(|c| c.parse::<i32>().ok()) {
            Some(code) => sqlite_error(code, db.message().to_owned()),
            None => StoreError::Database(err.to_string()),
        },
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => {
            StoreError::Unavailable(err.to_string())
        }
        _ => StoreError::Database(err.to_string()),
    }
}

/// SQLite's error of (extended) result code `code`, as the store says it, whether sqlx or the
/// writer's own handle (`raw`) met it: a unique key's refusal is a conflict; SQLITE_BUSY /
/// SQLITE_LOCKED (and their extended codes), another process holding the file, is "try again"
/// rather than "database is locked".
pub(crate) fn sqlite_error(code: i32, message: String) -> StoreError {
    const UNIQUE: i32 = libsqlite3_sys::SQLITE_CONSTRAINT_UNIQUE;
    const PRIMARY_KEY: i32 = libsqlite3_sys::SQLITE_CONSTRAINT_PRIMARYKEY;
    match code {
        UNIQUE | PRIMARY_KEY => StoreError::Conflict(message),
        code if matches!(code & 0xff, libsqlite3_sys::SQLITE_BUSY | libsqlite3_sys::SQLITE_LOCKED) => {
            StoreError::Unavailable(message)
        }
        code => StoreError::Database(format!("error returned from database: (code: {code}) {message}")),
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
