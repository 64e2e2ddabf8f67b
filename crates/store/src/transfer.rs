//! Every table of the database, row by row, from one backend to the other (`adjutant copy`).
//!
//! The tables are listed once, in an order in which each row's references are already in place
//! (principals before the campaigns they moderate, posts before their outcomes, and so on), with
//! each column's kind: the backends keep the same columns under the same names, and differ only
//! in how they encode ids, times and flags (SQLite: UUID text, milliseconds, 0 or 1). A backend
//! reads a page of a table as [`Value`]s ([`Source`]) and writes them in its own encoding
//! ([`Target`]); nothing is decided about the rows on the way.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::Result;

/// How a column's values are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// `BIGINT` (`INTEGER` on SQLite).
    Int,
    /// `INTEGER`: 4 bytes on PostgreSQL.
    Int32,
    Blob,
    /// `UUID`; text on SQLite.
    Uuid,
    /// `TIMESTAMPTZ`; milliseconds since the epoch on SQLite.
    Time,
    /// `BOOLEAN`; 0 or 1 on SQLite.
    Flag,
}

/// One column of a table.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
    /// Its name on SQLite, where that differs (posts keep `stamp_ms` there).
    pub sqlite_name: Option<&'static str>,
}

impl Column {
    const fn new(name: &'static str, kind: Kind) -> Self {
        Self { name, kind, sqlite_name: None }
    }

    /// The column's name on SQLite.
    pub fn on_sqlite(&self) -> &'static str {
        self.sqlite_name.unwrap_or(self.name)
    }
}

/// A table, its columns in the order they are read and written, and the order its rows are
/// copied in.
#[derive(Debug)]
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [Column],
    /// `ORDER BY` of the rows: a key, so pages of it neither repeat nor skip rows, and rows that
    /// refer to rows of the same table come after them.
    pub order_by: &'static str,
    /// A column numbered by a sequence (PostgreSQL's `BIGSERIAL`), which goes on after the
    /// largest number copied.
    pub serial: Option<&'static str>,
}

use Kind::{Blob, Flag, Int, Int32, Text, Time};

const fn c(name: &'static str, kind: Kind) -> Column {
    Column::new(name, kind)
}

const fn id(name: &'static str) -> Column {
    Column::new(name, Kind::Uuid)
}

/// Every table of Adjutant's schema, each after the tables it refers to.
pub static TABLES: &[Table] = &[
    Table {
        name: "principals",
        columns: &[
            id("id"),
            c("kind", Text),
            c("name", Text),
            c("token_hash", Blob),
            id("campaign_id"),
            c("side", Text),
            id("created_by"),
            c("created_at", Time),
            c("revoked_at", Time),
        ],
        // Moderators (made by the operator token, no principal) before the players and bots they
        // issued.
        order_by: "(created_by IS NOT NULL), created_at, id",
        serial: None,
    },
    Table {
        name: "campaigns",
        columns: &[
            c("ord", Int),
            id("id"),
            c("name", Text),
            id("moderator_id"),
            c("mode", Text),
            c("scenario", Text),
            c("scenario_text", Text),
            c("ruleset", Text),
            c("settings", Text),
            c("created_at", Time),
            c("chain_genesis", Text),
        ],
        order_by: "ord",
        serial: Some("ord"),
    },
    Table {
        name: "scenarios",
        columns: &[
            id("moderator_id"),
            c("id", Text),
            c("name", Text),
            c("title", Text),
            c("text", Text),
            c("created_at", Time),
        ],
        order_by: "moderator_id, id",
        serial: None,
    },
    Table {
        name: "campaign_secrets",
        columns: &[id("campaign_id"), c("chain", Int), c("secret", Text)],
        order_by: "campaign_id, chain",
        serial: None,
    },
    Table {
        name: "posts",
        columns: &[
            id("campaign_id"),
            c("seq", Int),
            Column { name: "stamp", kind: Time, sqlite_name: Some("stamp_ms") },
            id("author_id"),
            c("side", Text),
            c("kind", Text),
            c("body", Text),
            c("prev_hash", Text),
            c("hash", Text),
            c("receipt_key_id", Text),
            c("receipt_signature", Text),
            c("outcomes_through", Int),
        ],
        order_by: "campaign_id, seq",
        serial: None,
    },
    Table {
        name: "outcomes",
        columns: &[id("id"), id("campaign_id"), c("position", Int), c("seq", Int), c("kind", Text), c("data", Text)],
        order_by: "campaign_id, position",
        serial: None,
    },
    Table {
        name: "snapshots",
        columns: &[id("campaign_id"), c("seq", Int), c("state", Text)],
        order_by: "campaign_id, seq",
        serial: None,
    },
    Table {
        name: "idempotency_keys",
        columns: &[id("principal_id"), c("key", Text), id("campaign_id"), c("request_hash", Text), c("seq", Int)],
        order_by: "principal_id, key",
        serial: None,
    },
    Table {
        name: "acknowledgements",
        columns: &[id("bot_id"), id("outcome_id"), id("campaign_id"), c("forum_post_id", Text), c("acked_at", Time)],
        order_by: "bot_id, outcome_id",
        serial: None,
    },
    Table {
        name: "webhooks",
        columns: &[
            id("id"),
            id("campaign_id"),
            c("url", Text),
            c("secret", Text),
            id("created_by"),
            c("created_at", Time),
            c("disabled_at", Time),
            c("disabled_reason", Text),
        ],
        order_by: "id",
        serial: None,
    },
    Table {
        name: "webhook_outbox",
        columns: &[
            c("id", Int),
            id("webhook_id"),
            id("outcome_id"),
            c("payload", Text),
            c("attempts", Int32),
            c("next_attempt_at", Time),
            c("claimed_until", Time),
            c("delivered_at", Time),
            c("gone", Flag),
            c("given_up_at", Time),
        ],
        order_by: "id",
        serial: Some("id"),
    },
    Table {
        name: "webhook_deliveries",
        columns: &[
            c("id", Int),
            c("outbox_id", Int),
            c("attempt", Int32),
            c("attempted_at", Time),
            c("status_code", Int32),
            c("error", Text),
            c("duration_ms", Int),
        ],
        order_by: "id",
        serial: Some("id"),
    },
    Table {
        name: "player_contacts",
        columns: &[
            id("principal_id"),
            c("forum_handle", Text),
            c("discord_user_id", Text),
            c("email", Text),
            c("updated_at", Time),
        ],
        order_by: "principal_id",
        serial: None,
    },
    Table {
        name: "mail_outbox",
        columns: &[
            c("key", Text),
            id("campaign_id"),
            id("principal_id"),
            c("to_addr", Text),
            c("subject", Text),
            c("body", Text),
            c("about", Text),
            c("due_at", Time),
            c("attempts", Int32),
            c("claimed_until", Time),
            c("sent_at", Time),
            c("skipped", Text),
            c("last_error", Text),
        ],
        order_by: "key",
        serial: None,
    },
];

/// One value of a row, whichever backend it came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Text(String),
    Int(i64),
    Blob(Vec<u8>),
    Uuid(Uuid),
    Time(DateTime<Utc>),
    Flag(bool),
}

/// A row: its values in the order of its table's columns.
pub type Row = Vec<Value>;

/// A database read in one consistent snapshot, a page of a table at a time.
#[async_trait]
pub trait Source: Send {
    async fn count(&mut self, table: &Table) -> Result<i64>;
    /// The rows of `table` after the first `offset`, at most `limit`, in the table's order.
    async fn page(&mut self, table: &Table, offset: i64, limit: i64) -> Result<Vec<Row>>;
}

/// A database, its schema made by its own migrations, written in one transaction.
#[async_trait]
pub trait Target: Send {
    async fn count(&mut self, table: &Table) -> Result<i64>;
    async fn insert(&mut self, table: &Table, rows: &[Row]) -> Result<()>;
    /// Commits what was inserted, and sets each numbering sequence after the largest number.
    async fn commit(&mut self) -> Result<()>;
}

/// Rows per `INSERT` statement: as many as keep it under a thousand bound values.
pub fn rows_per_insert(table: &Table) -> usize {
    (1000 / table.columns.len().max(1)).max(1)
}

/// `INSERT INTO table (columns) VALUES (…), (…)` for `rows` rows, each value written as
/// `placeholder(n)` (counted from 1).
pub fn insert_sql(table: &Table, names: &[&str], rows: usize, placeholder: impl Fn(usize) -> String) -> String {
    let width = names.len();
    let values: Vec<String> = (0..rows)
        .map(|r| {
            let row: Vec<String> = (0..width).map(|c| placeholder(r * width + c + 1)).collect();
            format!("({})", row.join(", "))
        })
        .collect();
    format!("INSERT INTO {} ({}) VALUES {}", table.name, names.join(", "), values.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_refers_only_to_tables_before_it() {
        let position = |name: &str| TABLES.iter().position(|t| t.name == name).expect(name);
        let references = [
            ("campaigns", "principals"),
            ("scenarios", "principals"),
            ("posts", "campaigns"),
            ("outcomes", "posts"),
            ("snapshots", "posts"),
            ("idempotency_keys", "principals"),
            ("acknowledgements", "outcomes"),
            ("webhooks", "campaigns"),
            ("webhook_outbox", "webhooks"),
            ("webhook_outbox", "outcomes"),
            ("webhook_deliveries", "webhook_outbox"),
            ("player_contacts", "principals"),
            ("mail_outbox", "campaigns"),
        ];
        for (from, to) in references {
            assert!(position(to) < position(from), "{from} refers to {to}");
        }
    }

    #[test]
    fn an_insert_binds_every_value_of_every_row() {
        let sql = insert_sql(&TABLES[3], &["campaign_id", "chain", "secret"], 2, |n| format!("${n}"));
        assert_eq!(sql, "INSERT INTO campaign_secrets (campaign_id, chain, secret) VALUES ($1, $2, $3), ($4, $5, $6)");
    }
}
