//! The PostgreSQL side of `adjutant copy`: a database read in one snapshot, or written in one
//! transaction after its migrations ([`adjutant_store::transfer`]).
//!
//! The triggers that keep the log append-only refuse only `UPDATE`, `DELETE` and `TRUNCATE`:
//! rows copied in with plain `INSERT`s, each table after the tables it refers to, pass them.

use adjutant_store::transfer::{insert_sql, rows_per_insert, Kind, Row, Source, Table, Target, TABLES};
use adjutant_store::{migrations, Result, StoreError};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::postgres::{PgConnectOptions, PgRow};
use sqlx::{ConnectOptions, PgConnection, Row as _};
use uuid::Uuid;

use adjutant_store::transfer::Value;

use crate::db::map_err;

async fn connect(url: &str) -> Result<PgConnection> {
    let options: PgConnectOptions =
        url.parse().map_err(|e| StoreError::Database(format!("bad PostgreSQL URL: {e}")))?;
    options.connect().await.map_err(map_err)
}

/// A PostgreSQL database read in one snapshot (a repeatable-read transaction held until the
/// source is dropped).
pub struct PostgresSource {
    conn: PgConnection,
}

impl PostgresSource {
    pub async fn open(url: &str) -> Result<Self> {
        let mut conn = connect(url).await?;
        sqlx::raw_sql("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").execute(&mut conn).await.map_err(map_err)?;
        Ok(Self { conn })
    }
}

#[async_trait]
impl Source for PostgresSource {
    async fn count(&mut self, table: &Table) -> Result<i64> {
        count(&mut self.conn, table).await
    }

    async fn page(&mut self, table: &Table, offset: i64, limit: i64) -> Result<Vec<Row>> {
        let names: Vec<&str> = table.columns.iter().map(|c| c.name).collect();
        let sql =
            format!("SELECT {} FROM {} ORDER BY {} LIMIT $1 OFFSET $2", names.join(", "), table.name, table.order_by);
        let rows = sqlx::query(&sql).bind(limit).bind(offset).fetch_all(&mut self.conn).await.map_err(map_err)?;
        rows.iter().map(|row| decode(table, row)).collect()
    }
}

/// A PostgreSQL database brought up to date by its migrations and written in one transaction.
pub struct PostgresTarget {
    conn: PgConnection,
    open: bool,
}

impl PostgresTarget {
    pub async fn open(url: &str) -> Result<Self> {
        let mut conn = connect(url).await?;
        migrations::POSTGRES.run(&mut conn).await?;
        sqlx::raw_sql("BEGIN").execute(&mut conn).await.map_err(map_err)?;
        Ok(Self { conn, open: true })
    }
}

#[async_trait]
impl Target for PostgresTarget {
    async fn count(&mut self, table: &Table) -> Result<i64> {
        count(&mut self.conn, table).await
    }

    async fn insert(&mut self, table: &Table, rows: &[Row]) -> Result<()> {
        let names: Vec<&str> = table.columns.iter().map(|c| c.name).collect();
        for chunk in rows.chunks(rows_per_insert(table)) {
            let sql = insert_sql(table, &names, chunk.len(), |n| format!("${n}"));
            let mut query = sqlx::query(&sql);
            for row in chunk {
                for (column, value) in table.columns.iter().zip(row) {
                    // A NULL is bound with its column's type, which PostgreSQL checks.
                    query = match (column.kind, value) {
                        (Kind::Text, Value::Null) => query.bind(None::<String>),
                        (Kind::Int, Value::Null) => query.bind(None::<i64>),
                        (Kind::Int32, Value::Null) => query.bind(None::<i32>),
                        (Kind::Blob, Value::Null) => query.bind(None::<Vec<u8>>),
                        (Kind::Uuid, Value::Null) => query.bind(None::<Uuid>),
                        (Kind::Time, Value::Null) => query.bind(None::<DateTime<Utc>>),
                        (Kind::Flag, Value::Null) => query.bind(None::<bool>),
                        (Kind::Int32, Value::Int(n)) => query.bind(i32::try_from(*n).map_err(|_| {
                            StoreError::Database(format!("{}.{}: {n} is too large", table.name, column.name))
                        })?),
                        (_, Value::Text(text)) => query.bind(text.clone()),
                        (_, Value::Int(n)) => query.bind(*n),
                        (_, Value::Blob(bytes)) => query.bind(bytes.clone()),
                        (_, Value::Uuid(id)) => query.bind(*id),
                        (_, Value::Time(at)) => query.bind(*at),
                        (_, Value::Flag(flag)) => query.bind(*flag),
                    };
                }
            }
            query.execute(&mut self.conn).await.map_err(map_err)?;
        }
        Ok(())
    }

    async fn commit(&mut self) -> Result<()> {
        if !std::mem::take(&mut self.open) {
            return Ok(());
        }
        // Rows copied with their numbers leave the sequences where they were: set each after the
        // largest number, so the next campaign or delivery is numbered on from there.
        for table in TABLES {
            let Some(column) = table.serial else { continue };
            let sql = format!(
                "SELECT setval(pg_get_serial_sequence('{t}', '{column}'), COALESCE(MAX({column}), 1), MAX({column}) IS NOT NULL) FROM {t}",
                t = table.name
            );
            sqlx::query(&sql).execute(&mut self.conn).await.map_err(map_err)?;
        }
        sqlx::query("COMMIT").execute(&mut self.conn).await.map_err(map_err)?;
        Ok(())
    }
}

async fn count(conn: &mut PgConnection, table: &Table) -> Result<i64> {
    sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {}", table.name)).fetch_one(conn).await.map_err(map_err)
}

fn decode(table: &Table, row: &PgRow) -> Result<Row> {
    let mut values = Vec::with_capacity(table.columns.len());
    for (i, column) in table.columns.iter().enumerate() {
        let value = match column.kind {
            Kind::Text => row.try_get::<Option<String>, _>(i).map(|v| v.map(Value::Text)),
            Kind::Int => row.try_get::<Option<i64>, _>(i).map(|v| v.map(Value::Int)),
            Kind::Int32 => row.try_get::<Option<i32>, _>(i).map(|v| v.map(|n| Value::Int(n.into()))),
            Kind::Blob => row.try_get::<Option<Vec<u8>>, _>(i).map(|v| v.map(Value::Blob)),
            Kind::Uuid => row.try_get::<Option<Uuid>, _>(i).map(|v| v.map(Value::Uuid)),
            Kind::Time => row.try_get::<Option<DateTime<Utc>>, _>(i).map(|v| v.map(Value::Time)),
            Kind::Flag => row.try_get::<Option<bool>, _>(i).map(|v| v.map(Value::Flag)),
        }
        .map_err(|e| StoreError::Database(format!("{}.{}: {e}", table.name, column.name)))?;
        values.push(value.unwrap_or(Value::Null));
    }
    Ok(values)
}
