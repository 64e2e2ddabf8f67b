//! What PostgreSQL says its own way: its errors. It has the types of ids and times itself.

use adjutant_store::row::{self, Encoding};
use adjutant_store::{Result, StoreError};
use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use uuid::Uuid;

pub(crate) fn map_err(err: sqlx::Error) -> StoreError {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::Conflict(db.message().to_owned()),
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::Tls(_) => {
            StoreError::Unavailable(err.to_string())
        }
        // Server shutting down, cannot connect now, too many connections; or a deadlock or a
        // serialization failure between replicas' batches: the post was not written, try again.
        sqlx::Error::Database(db)
            if db.code().is_some_and(|c| {
                c.starts_with("57P") || c.starts_with("08") || c == "53300" || c == "40P01" || c == "40001"
            }) =>
        {
            StoreError::Unavailable(err.to_string())
        }
        _ => StoreError::Database(err.to_string()),
    }
}

/// PostgreSQL's rows: `UUID` and `TIMESTAMPTZ`.
pub(crate) struct Db;

impl Encoding for Db {
    type Row = PgRow;

    fn opt_uuid(row: &PgRow, column: &str) -> Result<Option<Uuid>> {
        row::get(row, column)
    }

    fn opt_time(row: &PgRow, column: &str) -> Result<Option<DateTime<Utc>>> {
        row::get(row, column)
    }
}
