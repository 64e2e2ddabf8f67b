//! The SQLite side of `adjutant copy`: a database file read in one snapshot, or written in one
//! transaction after its migrations ([`adjutant_store::transfer`]).

use std::str::FromStr;
use std::time::Duration;

use adjutant_store::transfer::{insert_sql, Kind, Row, Source, Table, Target, Value};
use adjutant_store::{migrations, Result, StoreError};
use async_trait::async_trait;
use chrono::{TimeZone, Utc};
use sqlx::sqlite::{SqliteConnectOptions, SqliteRow};
use sqlx::{ConnectOptions, Row as _, SqliteConnection};
use uuid::Uuid;

use crate::db::map_err;

/// A SQLite database read in one snapshot: the read transaction is opened at once and held until
/// the source is dropped, so a server still writing changes nothing that is read.
pub struct SqliteSource {
    conn: SqliteConnection,
}

impl SqliteSource {
    pub async fn open(url: &str) -> Result<Self> {
        let options = options(url)?.read_only(true);
        let mut conn = options.connect().await.map_err(map_err)?;
        sqlx::raw_sql("BEGIN; SELECT COUNT(*) FROM sqlite_schema;").execute(&mut conn).await.map_err(map_err)?;
        Ok(Self { conn })
    }
}

#[async_trait]
impl Source for SqliteSource {
    async fn count(&mut self, table: &Table) -> Result<i64> {
        count(&mut self.conn, table).await
    }

    async fn page(&mut self, table: &Table, offset: i64, limit: i64) -> Result<Vec<Row>> {
        let names: Vec<&str> = table.columns.iter().map(|c| c.on_sqlite()).collect();
        let sql =
            format!("SELECT {} FROM {} ORDER BY {} LIMIT ? OFFSET ?", names.join(", "), table.name, table.order_by);
        let rows = sqlx::query(&sql).bind(limit).bind(offset).fetch_all(&mut self.conn).await.map_err(map_err)?;
        rows.iter().map(|row| decode(table, row)).collect()
    }
}

/// A SQLite database file brought up to date by its migrations and written in one transaction.
pub struct SqliteTarget {
    conn: SqliteConnection,
    open: bool,
}

impl SqliteTarget {
    /// Creates the file if missing and runs the migrations; the rows then go in one transaction.
    pub async fn open(url: &str) -> Result<Self> {
        let options = options(url)?.create_if_missing(true).foreign_keys(true);
        let mut conn = options.connect().await.map_err(map_err)?;
        migrations::SQLITE.run(&mut conn).await?;
        sqlx::raw_sql("BEGIN IMMEDIATE").execute(&mut conn).await.map_err(map_err)?;
        Ok(Self { conn, open: true })
    }
}

#[async_trait]
impl Target for SqliteTarget {
    async fn count(&mut self, table: &Table) -> Result<i64> {
        count(&mut self.conn, table).await
    }

    async fn insert(&mut self, table: &Table, rows: &[Row]) -> Result<()> {
        let names: Vec<&str> = table.columns.iter().map(|c| c.on_sqlite()).collect();
        for chunk in rows.chunks(adjutant_store::transfer::rows_per_insert(table)) {
            let sql = insert_sql(table, &names, chunk.len(), |_| "?".to_owned());
            let mut query = sqlx::query(&sql);
            for row in chunk {
                for value in row {
                    query = match value {
                        Value::Null => query.bind(None::<String>),
                        Value::Text(text) => query.bind(text.clone()),
                        Value::Int(n) => query.bind(*n),
                        Value::Blob(bytes) => query.bind(bytes.clone()),
                        Value::Uuid(id) => query.bind(id.to_string()),
                        Value::Time(at) => query.bind(at.timestamp_millis()),
                        Value::Flag(flag) => query.bind(i64::from(*flag)),
                    };
                }
            }
            query.execute(&mut self.conn).await.map_err(map_err)?;
        }
        Ok(())
    }

    async fn commit(&mut self) -> Result<()> {
        if std::mem::take(&mut self.open) {
            // AUTOINCREMENT's numbering goes on after the largest id inserted: SQLite keeps it so.
            sqlx::query("COMMIT").execute(&mut self.conn).await.map_err(map_err)?;
        }
        Ok(())
    }
}

fn options(url: &str) -> Result<SqliteConnectOptions> {
    Ok(SqliteConnectOptions::from_str(url)
        .map_err(|e| StoreError::Database(format!("bad SQLite URL: {e}")))?
        .busy_timeout(Duration::from_secs(30)))
}

async fn count(conn: &mut SqliteConnection, table: &Table) -> Result<i64> {
    sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {}", table.name)).fetch_one(conn).await.map_err(map_err)
}

fn decode(table: &Table, row: &SqliteRow) -> Result<Row> {
    let bad = |column: &str, e: &dyn std::fmt::Display| StoreError::Database(format!("{}.{column}: {e}", table.name));
    let mut values = Vec::with_capacity(table.columns.len());
    for (i, column) in table.columns.iter().enumerate() {
        let name = column.name;
        let value = match column.kind {
            Kind::Text => row.try_get::<Option<String>, _>(i).map(|v| v.map(Value::Text)),
            Kind::Int | Kind::Int32 => row.try_get::<Option<i64>, _>(i).map(|v| v.map(Value::Int)),
            Kind::Blob => row.try_get::<Option<Vec<u8>>, _>(i).map(|v| v.map(Value::Blob)),
            Kind::Flag => row.try_get::<Option<i64>, _>(i).map(|v| v.map(|n| Value::Flag(n != 0))),
            Kind::Uuid => row.try_get::<Option<String>, _>(i).map(|v| v.map(Value::Text)),
            Kind::Time => row.try_get::<Option<i64>, _>(i).map(|v| v.map(Value::Int)),
        }
        .map_err(|e| bad(name, &e))?;
        // Ids and times are read as SQLite keeps them, then parsed.
        let value = match (column.kind, value) {
            (_, None) => Value::Null,
            (Kind::Uuid, Some(Value::Text(text))) => Value::Uuid(Uuid::parse_str(&text).map_err(|e| bad(name, &e))?),
            (Kind::Time, Some(Value::Int(ms))) => Value::Time(
                Utc.timestamp_millis_opt(ms).single().ok_or_else(|| bad(name, &format!("bad time stamp {ms}")))?,
            ),
            (_, Some(value)) => value,
        };
        values.push(value);
    }
    Ok(values)
}
