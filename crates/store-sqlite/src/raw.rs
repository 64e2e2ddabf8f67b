//! A batch's statements run on the writer connection's own SQLite handle, on the batch writer's
//! thread; the log's pages of posts and outcomes are read on a reader connection's ([`read`]).
//!
//! Through sqlx, each statement is a round trip to the connection's thread: the statement sent,
//! that thread woken, the answer sent back, the batch's thread woken. A batch of posts under load
//! made five (its `BEGIN`, its tails, its rows, its `COMMIT`, and the pool's check as the
//! connection went back), each two thread switches. With the handle locked for the batch
//! (`SqliteConnection::lock_handle`: one round trip, after which sqlx's thread waits on the
//! connection's lock), the batch runs its statements here, one call each.
//!
//! What is run here is text with `?` parameters and the values bound to them, as sqlx would send
//! it; several statements may follow one another in one text, each binding the next of the
//! values.

use std::ffi::{c_int, CStr};
use std::ptr::{self, NonNull};

use adjutant_store::row::Columns;
use adjutant_store::{Result, StoreError};
use chrono::{DateTime, Utc};
use libsqlite3_sys as ffi;
use uuid::Uuid;

/// A value bound to a statement's parameter.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Bind<'a> {
    Null,
    Int(i64),
    Text(&'a str),
    /// Kept as its hyphenated lower-case text, as every id is on SQLite.
    Uuid(Uuid),
}

impl From<i64> for Bind<'_> {
    fn from(value: i64) -> Self {
        Bind::Int(value)
    }
}

impl<'a> From<&'a str> for Bind<'a> {
    fn from(value: &'a str) -> Self {
        Bind::Text(value)
    }
}

impl<'a> From<Option<&'a str>> for Bind<'a> {
    fn from(value: Option<&'a str>) -> Self {
        value.map_or(Bind::Null, Bind::Text)
    }
}

impl From<Uuid> for Bind<'_> {
    fn from(value: Uuid) -> Self {
        Bind::Uuid(value)
    }
}

/// Statements' text and the values of their parameters, in the order they appear.
#[derive(Debug, Default)]
pub(crate) struct Sql<'a> {
    pub text: String,
    pub binds: Vec<Bind<'a>>,
}

impl<'a> Sql<'a> {
    pub fn new(text: &str) -> Self {
        Sql { text: text.to_owned(), binds: Vec::new() }
    }

    pub fn push(&mut self, text: &str) -> &mut Self {
        self.text.push_str(text);
        self
    }

    /// One parameter, bound to `value`.
    pub fn bind(&mut self, value: impl Into<Bind<'a>>) -> &mut Self {
        self.text.push('?');
        self.binds.push(value.into());
        self
    }

    /// `VALUES (?, …), (?, …)`: one row of parameters for each of `rows`, each with the values
    /// `row` gives it.
    pub fn values<T>(&mut self, rows: impl IntoIterator<Item = T>, row: impl Fn(&mut Vec<Bind<'a>>, T)) -> &mut Self {
        self.text.push_str("VALUES ");
        for (n, each) in rows.into_iter().enumerate() {
            let before = self.binds.len();
            row(&mut self.binds, each);
            self.text.push_str(if n == 0 { "(" } else { ", (" });
            for k in before..self.binds.len() {
                self.text.push_str(if k == before { "?" } else { ", ?" });
            }
            self.text.push(')');
        }
        self
    }
}

/// The writer connection's handle, for the thread that locked it (sqlx's thread makes no call
/// on it meanwhile).
pub(crate) struct Handle(NonNull<ffi::sqlite3>);

// SAFETY: sqlx's lock on the connection (the locked handle this one is taken from) keeps every
// other thread off it, wherever the lock goes; the handle goes with it. It is not `Sync`: sqlx
// opens its connections without SQLite's own mutex, so two threads must never share one.
unsafe impl Send for Handle {}

/// The rows `sql` answers on a connection of `readers`, each decoded by `decode` straight off
/// SQLite's row, on the connection's handle locked for the read.
///
/// Through sqlx, every value of every row is copied on the connection's thread (a copy of each
/// column's text, an allocation each), sent here in a row of its own, looked up by name, copied
/// again into what the caller keeps and freed here, on another thread than the one that
/// allocated it. A cold audit of 100,000 posts spent some 30 % of its CPU time so, in pages of
/// up to 4,000 posts and 1,000 outcomes. Read here, each value is copied once, into what the
/// caller keeps.
///
/// A page of thousands of rows takes milliseconds: on a runtime of several workers, a read of
/// more than [`READ_IN_PLACE`] rows (`at_most`) hands its worker's other tasks to another
/// worker while it reads (`block_in_place`, which may start a thread for it). A smaller one, as
/// an event stream's, is read in place.
pub(crate) async fn read<T>(
    readers: &sqlx::SqlitePool,
    sql: &Sql<'_>,
    at_most: i64,
    decode: fn(&dyn Columns) -> Result<T>,
) -> Result<Vec<T>> {
    let mut conn = readers.acquire().await.map_err(crate::db::map_err)?;
    let mut lock = conn.lock_handle().await.map_err(crate::db::map_err)?;
    // SAFETY: the handle is the open connection's, and sqlx's thread makes no call on it while
    // the lock is held; `handle` goes before `lock` does.
    let handle = unsafe { Handle::new(lock.as_raw_handle()) };
    let rows = || handle.rows(sql, |row| decode(row));
    let flavor = tokio::runtime::Handle::try_current().map(|runtime| runtime.runtime_flavor());
    match flavor {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) if at_most > READ_IN_PLACE => tokio::task::block_in_place(rows),
        _ => rows(),
    }
}

/// The most rows [`read`] reads on its worker as it is.
const READ_IN_PLACE: i64 = 256;

/// A prepared statement, finalized when dropped.
struct Statement(NonNull<ffi::sqlite3_stmt>);

impl Drop for Statement {
    fn drop(&mut self) {
        // SAFETY: prepared on this handle and finalized once, here.
        unsafe { ffi::sqlite3_finalize(self.0.as_ptr()) };
    }
}

impl Handle {
    /// # Safety
    /// `db` is an open connection that no other thread uses while this lives.
    pub(crate) unsafe fn new(db: NonNull<ffi::sqlite3>) -> Self {
        Handle(db)
    }

    /// Runs every statement of `sql` in turn, each binding as many of its values as it has
    /// parameters.
    pub(crate) fn run(&self, sql: &Sql<'_>) -> Result<()> {
        self.rows(sql, |_| Ok(())).map(drop)
    }

    /// [`Handle::run`], each row any of the statements answers read by `read`.
    pub(crate) fn rows<T>(&self, sql: &Sql<'_>, mut read: impl FnMut(&Row<'_>) -> Result<T>) -> Result<Vec<T>> {
        let mut rows = Vec::new();
        let mut rest = sql.text.as_bytes();
        let mut binds = sql.binds.as_slice();
        while let Some((stmt, next)) = self.prepare(rest)? {
            rest = next;
            let Some(stmt) = stmt else {
                continue;
            };
            // SAFETY: a statement just prepared.
            let wanted = unsafe { ffi::sqlite3_bind_parameter_count(stmt.0.as_ptr()) } as usize;
            if wanted > binds.len() {
                return Err(StoreError::Database(format!("{wanted} parameters, {} values left", binds.len())));
            }
            let (these, others) = binds.split_at(wanted);
            binds = others;
            self.bind_all(&stmt, these)?;
            self.step(&stmt, |row| {
                rows.push(read(row)?);
                Ok(())
            })?;
        }
        if !binds.is_empty() {
            return Err(StoreError::Database(format!("{} values left over, no parameter for them", binds.len())));
        }
        Ok(rows)
    }

    /// One statement (`sql`, which answers no rows), prepared once and run once for each of
    /// `rows`, with the values `values` gives it. A batch's rows go in so: the text is parsed
    /// once rather than grown by a row of parameters a row, and a statement that writes one row
    /// keeps no journal of its own to undo itself with (one of many rows does, a copy of every
    /// page it changes, for a failure half way through).
    ///
    /// So where a row fails, the rows before it stay written: the caller undoes them with the
    /// transaction or the savepoint they were written in, as the batch's writer does.
    pub(crate) fn run_each<'a, T>(
        &self,
        sql: &str,
        rows: impl IntoIterator<Item = T>,
        values: impl Fn(&mut Vec<Bind<'a>>, T),
    ) -> Result<()> {
        let mut rows = rows.into_iter().peekable();
        if rows.peek().is_none() {
            return Ok(());
        }
        let Some((Some(stmt), rest)) = self.prepare(sql.as_bytes())? else {
            return Err(StoreError::Database(format!("no statement in {sql:?}")));
        };
        if !rest.iter().all(u8::is_ascii_whitespace) {
            return Err(StoreError::Database(format!("more than one statement in {sql:?}")));
        }
        // SAFETY: a statement just prepared.
        let wanted = unsafe { ffi::sqlite3_bind_parameter_count(stmt.0.as_ptr()) } as usize;
        let mut binds = Vec::with_capacity(wanted);
        for row in rows {
            binds.clear();
            values(&mut binds, row);
            if binds.len() != wanted {
                return Err(StoreError::Database(format!("{wanted} parameters, {} values", binds.len())));
            }
            self.bind_all(&stmt, &binds)?;
            self.step(&stmt, |_| Err(StoreError::Database(format!("rows from {sql:?}"))))?;
            // SAFETY: a statement stepped to its end, made ready to run again; its values are
            // bound anew before it is.
            unsafe { ffi::sqlite3_reset(stmt.0.as_ptr()) };
        }
        Ok(())
    }

    /// The first statement of `text` (none for a text of spaces and comments) and the text
    /// after it; `None` once nothing is left.
    fn prepare<'t>(&self, text: &'t [u8]) -> Result<Option<(Option<Statement>, &'t [u8])>> {
        if text.is_empty() {
            return Ok(None);
        }
        let len = c_int::try_from(text.len())
            .map_err(|_| StoreError::Database(format!("a statement of {} bytes", text.len())))?;
        let mut stmt = ptr::null_mut();
        let mut tail = ptr::null();
        // SAFETY: `text` is `len` bytes; SQLite writes a statement (or none, for a text of
        // spaces) and where in `text` the next one begins.
        let rc = unsafe { ffi::sqlite3_prepare_v2(self.0.as_ptr(), text.as_ptr().cast(), len, &mut stmt, &mut tail) };
        let stmt = NonNull::new(stmt).map(Statement);
        if rc != ffi::SQLITE_OK {
            return Err(self.error(rc));
        }
        let used = (tail as usize).saturating_sub(text.as_ptr() as usize).min(text.len());
        if stmt.is_none() && used == 0 {
            return Ok(None);
        }
        Ok(Some((stmt, &text[used..])))
    }

    /// Binds `values` to the statement's parameters, in order.
    fn bind_all(&self, stmt: &Statement, values: &[Bind<'_>]) -> Result<()> {
        for (n, value) in values.iter().enumerate() {
            let rc = bind(stmt, n as c_int + 1, value);
            if rc != ffi::SQLITE_OK {
                return Err(self.error(rc));
            }
        }
        Ok(())
    }

    /// Steps the statement to its end, each row to `row`.
    fn step(&self, stmt: &Statement, mut row: impl FnMut(&Row<'_>) -> Result<()>) -> Result<()> {
        // The columns' names, read once the statement has stepped to its first row (a first
        // step may prepare it again, which SQLite's own copies of the names would not outlive).
        let mut names = None;
        loop {
            // SAFETY: a prepared statement with every parameter bound; the values it binds
            // without copying (the caller's text) outlive this call.
            match unsafe { ffi::sqlite3_step(stmt.0.as_ptr()) } {
                ffi::SQLITE_ROW => row(&Row { stmt, names: names.get_or_insert_with(|| column_names(stmt)) })?,
                ffi::SQLITE_DONE => return Ok(()),
                rc => return Err(self.error(rc)),
            }
        }
    }

    /// Whether a transaction is open: SQLite ends one by itself on some errors (a full disk,
    /// an I/O error), after which there is nothing to roll back.
    pub(crate) fn in_transaction(&self) -> bool {
        // SAFETY: the open handle.
        unsafe { ffi::sqlite3_get_autocommit(self.0.as_ptr()) == 0 }
    }

    /// `BEGIN IMMEDIATE` if the write lock is free now: false, and no transaction begun, when
    /// another connection holds it. SQLite's wait for it (the connection's busy timeout) would be
    /// spent on this thread, which the batches of every store of the process share; the wait is
    /// left to the caller. The busy timeout is `busy` again afterwards.
    pub(crate) fn begin_at_once(&self, busy: std::time::Duration) -> Result<bool> {
        let db = self.0.as_ptr();
        let busy = c_int::try_from(busy.as_millis()).unwrap_or(c_int::MAX);
        // SAFETY: the open handle; a timeout of 0 turns the busy handler off.
        unsafe { ffi::sqlite3_busy_timeout(db, 0) };
        let begun = self.run(&Sql::new("BEGIN IMMEDIATE"));
        // SAFETY: as above.
        unsafe { ffi::sqlite3_busy_timeout(db, busy) };
        match begun {
            Ok(()) => Ok(true),
            Err(StoreError::Unavailable(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// SQLite's error, as the store says it ([`crate::db::sqlite_error`], as sqlx's are).
    fn error(&self, rc: c_int) -> StoreError {
        // SAFETY: the open handle; SQLite's message is text it owns, read at once.
        let (code, message) = unsafe {
            let code = ffi::sqlite3_extended_errcode(self.0.as_ptr());
            let message = ffi::sqlite3_errmsg(self.0.as_ptr());
            let message =
                if message.is_null() { String::new() } else { CStr::from_ptr(message).to_string_lossy().into_owned() };
            (if code == ffi::SQLITE_OK { rc } else { code }, message)
        };
        crate::db::sqlite_error(code, message)
    }
}

fn bind(stmt: &Statement, n: c_int, value: &Bind<'_>) -> c_int {
    let stmt = stmt.0.as_ptr();
    // SAFETY: `n` is one of the statement's parameters; text bound without a copy (`STATIC`)
    // is `Sql`'s, which outlives the statement; an id's text is copied (`TRANSIENT`).
    unsafe {
        match *value {
            Bind::Null => ffi::sqlite3_bind_null(stmt, n),
            Bind::Int(value) => ffi::sqlite3_bind_int64(stmt, n, value),
            Bind::Text(text) => match c_int::try_from(text.len()) {
                Ok(len) => ffi::sqlite3_bind_text(stmt, n, text.as_ptr().cast(), len, ffi::SQLITE_STATIC()),
                Err(_) => ffi::SQLITE_TOOBIG,
            },
            Bind::Uuid(id) => {
                let mut buffer = Uuid::encode_buffer();
                let text = id.hyphenated().encode_lower(&mut buffer);
                ffi::sqlite3_bind_text(stmt, n, text.as_ptr().cast(), text.len() as c_int, ffi::SQLITE_TRANSIENT())
            }
        }
    }
}

/// The row a statement stands on, read by column name.
pub(crate) struct Row<'s> {
    stmt: &'s Statement,
    /// The statement's columns' names, in order ([`column_names`]).
    names: &'s [Box<[u8]>],
}

/// The names of a statement's columns, in order, copied: read once for all its rows, where each
/// look-up by name through SQLite asks for every name before it again.
fn column_names(stmt: &Statement) -> Vec<Box<[u8]>> {
    let stmt = stmt.0.as_ptr();
    // SAFETY: a prepared statement; each name is SQLite's text, copied at once.
    let count = unsafe { ffi::sqlite3_column_count(stmt) };
    (0..count)
        .map(|n| {
            let named = unsafe { ffi::sqlite3_column_name(stmt, n) };
            if named.is_null() {
                Box::default()
            } else {
                unsafe { CStr::from_ptr(named) }.to_bytes().into()
            }
        })
        .collect()
}

impl Row<'_> {
    fn column(&self, name: &str) -> Result<Option<c_int>> {
        let found = self.names.iter().position(|named| **named == *name.as_bytes());
        let Some(n) = found.and_then(|n| c_int::try_from(n).ok()) else {
            return Err(StoreError::Database(format!("no column {name:?} in the row")));
        };
        // SAFETY: the statement stands on a row, and `n` is one of its columns.
        let null = unsafe { ffi::sqlite3_column_type(self.stmt.0.as_ptr(), n) } == ffi::SQLITE_NULL;
        Ok((!null).then_some(n))
    }

    /// The column's text, as `f` reads it, before the statement steps on.
    fn with_text<T>(&self, column: &str, f: impl FnOnce(&str) -> Result<T>) -> Result<Option<T>> {
        let Some(n) = self.column(column)? else {
            return Ok(None);
        };
        let stmt = self.stmt.0.as_ptr();
        // SAFETY: the column's text, valid until the statement steps on; read only by `f`.
        let bytes = unsafe {
            let text = ffi::sqlite3_column_text(stmt, n);
            let len = ffi::sqlite3_column_bytes(stmt, n) as usize;
            if text.is_null() {
                &[][..]
            } else {
                std::slice::from_raw_parts(text, len)
            }
        };
        let text = std::str::from_utf8(bytes)
            .map_err(|e| StoreError::Database(format!("column {column:?} is not UTF-8: {e}")))?;
        f(text).map(Some)
    }
}

impl Columns for Row<'_> {
    fn opt_text(&self, column: &str) -> Result<Option<String>> {
        self.with_text(column, |text| Ok(text.to_owned()))
    }

    fn opt_int(&self, column: &str) -> Result<Option<i64>> {
        let Some(n) = self.column(column)? else {
            return Ok(None);
        };
        let stmt = self.stmt.0.as_ptr();
        // SAFETY: one of the row's columns.
        if unsafe { ffi::sqlite3_column_type(stmt, n) } != ffi::SQLITE_INTEGER {
            return Err(StoreError::Database(format!("column {column:?} is not an integer")));
        }
        Ok(Some(unsafe { ffi::sqlite3_column_int64(stmt, n) }))
    }

    fn opt_int32(&self, column: &str) -> Result<Option<i32>> {
        self.opt_int(column)?
            .map(|value| i32::try_from(value).map_err(|e| StoreError::Database(format!("column {column:?}: {e}"))))
            .transpose()
    }

    fn opt_uuid(&self, column: &str) -> Result<Option<Uuid>> {
        self.with_text(column, crate::db::uuid)
    }

    fn opt_time(&self, column: &str) -> Result<Option<DateTime<Utc>>> {
        self.opt_int(column)?.map(crate::db::ms_to_time).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Connection;

    /// Statements one after the other in one text, each binding its own values in turn; their
    /// rows read by name; what is left unbound, or bound to nothing, refused.
    #[tokio::test]
    async fn statements_run_in_turn_and_bind_their_own_values() {
        let mut conn = sqlx::SqliteConnection::connect("sqlite::memory:").await.unwrap();
        let mut locked = conn.lock_handle().await.unwrap();
        // SAFETY: the locked handle keeps sqlx's thread off it while this runs.
        let handle = unsafe { Handle::new(locked.as_raw_handle()) };
        let id = Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        let mut sql = Sql::new("CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER, note TEXT);\n");
        sql.push("INSERT INTO t (id, n, note) ").values(
            [(id, 7, Some("seven")), (Uuid::nil(), -1, None)],
            |b, (id, n, note)| {
                b.extend([Bind::from(id), Bind::from(n), Bind::from(note)]);
            },
        );
        sql.push(";\n SELECT n AS m FROM t WHERE n > ").bind(0).push(";");
        assert_eq!(handle.rows(&sql, |row| row.int("m")).unwrap(), [7]);

        let mut sql = Sql::new("SELECT id, n, note, NULL AS absent FROM t ORDER BY n");
        sql.push(" LIMIT ").bind(5);
        let read = handle
            .rows(&sql, |row| Ok((row.uuid("id")?, row.int("n")?, row.opt_text("note")?, row.opt_int("absent")?)))
            .unwrap();
        assert_eq!(read, [(Uuid::nil(), -1, None, None), (id, 7, Some("seven".to_owned()), None)]);

        let mut twice = Sql::new("INSERT INTO t (id, n) VALUES (");
        twice.bind(id).push(", 8)");
        assert!(matches!(handle.run(&twice), Err(StoreError::Conflict(m)) if m.contains("UNIQUE")));
        let mut short = Sql::new("SELECT ?, ?");
        short.binds.push(Bind::Int(1));
        assert!(matches!(handle.run(&short), Err(StoreError::Database(_))));
        let mut over = Sql::new("SELECT 1");
        over.binds.push(Bind::Int(1));
        assert!(matches!(handle.run(&over), Err(StoreError::Database(_))));
        assert!(matches!(handle.run(&Sql::new("SELECT nope")), Err(StoreError::Database(m)) if m.contains("nope")));
        assert!(matches!(
            handle.rows(&Sql::new("SELECT n AS m FROM t"), |row| row.text("other")),
            Err(StoreError::Database(m)) if m.contains("other")
        ));
        // One statement run for each row; none for no rows; a row's values counted.
        // Each row's own text, bound without a copy and bound anew for the next row.
        let notes: Vec<String> = (1..=3).map(|n| format!("note {n}")).collect();
        let rows: Vec<(Uuid, i64, &str)> =
            notes.iter().zip(1..).map(|(note, n)| (Uuid::from_u128(n as u128), n, note.as_str())).collect();
        let insert = "INSERT INTO t (id, n, note) VALUES (?, ?, ?)";
        handle
            .run_each(insert, &rows, |b, &(id, n, note)| b.extend([Bind::Uuid(id), Bind::Int(n), Bind::Text(note)]))
            .unwrap();
        let read = Sql::new("SELECT id, note FROM t WHERE note LIKE 'note %' ORDER BY n");
        let written = handle.rows(&read, |row| Ok((row.uuid("id")?, row.text("note")?))).unwrap();
        let expected: Vec<(Uuid, String)> = rows.iter().map(|&(id, _, note)| (id, note.to_owned())).collect();
        assert_eq!(written, expected);
        handle.run_each(insert, &[] as &[(Uuid, i64, &str)], |_, _| unreachable!("no rows")).unwrap();
        let short = handle.run_each(insert, [3], |b, n| b.push(Bind::Int(n)));
        assert!(matches!(short, Err(StoreError::Database(m)) if m.contains("3 parameters, 1 values")));
        let again = handle.run_each(insert, &rows[1..], |b, &(id, n, note)| {
            b.extend([Bind::Uuid(id), Bind::Int(n), Bind::Text(note)]);
        });
        assert!(matches!(again, Err(StoreError::Conflict(_))));
        let two = handle.run_each("SELECT 1; SELECT 2", [()], |_, ()| {});
        assert!(matches!(two, Err(StoreError::Database(m)) if m.contains("more than one statement")));
        let answers = handle.run_each("SELECT 1", [()], |_, ()| {});
        assert!(matches!(answers, Err(StoreError::Database(m)) if m.contains("rows from")));
        drop(locked);
        // sqlx's own statements go on after the lock is let go, on the rows written here.
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM t").fetch_one(&mut conn).await.unwrap();
        assert_eq!(count, 5);
    }

    /// A row of the pool's table `t`, as [`read`] decodes it.
    fn note(row: &dyn Columns) -> Result<(Uuid, i64, Option<String>)> {
        Ok((row.uuid("id")?, row.int("n")?, row.opt_text("note")?))
    }

    /// [`read`] on a pool of one connection: its rows decoded off SQLite's, the values bound as
    /// given; an error as the store says it; and the connection handed back whole, for sqlx's own
    /// statements and for the next read.
    async fn a_pool_s_rows_read_on_its_connection_s_handle() {
        let pool = sqlx::sqlite::SqlitePoolOptions::new().max_connections(1).connect("sqlite::memory:").await.unwrap();
        sqlx::query("CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER NOT NULL, note TEXT)")
            .execute(&pool)
            .await
            .unwrap();
        for n in 1..=5i64 {
            sqlx::query("INSERT INTO t (id, n, note) VALUES (?, ?, ?)")
                .bind(Uuid::from_u128(n as u128).to_string())
                .bind(n)
                .bind((n % 2 == 1).then(|| format!("note {n}")))
                .execute(&pool)
                .await
                .unwrap();
        }
        let mut page = Sql::new("SELECT id, n, note FROM t WHERE n > ");
        page.bind(1).push(" ORDER BY n LIMIT ").bind(3);
        let read_page = read(&pool, &page, 3, note).await.unwrap();
        let expected: Vec<_> =
            (2..=4i64).map(|n| (Uuid::from_u128(n as u128), n, (n % 2 == 1).then(|| format!("note {n}")))).collect();
        assert_eq!(read_page, expected);
        let mut by_id = Sql::new("SELECT id, n, note FROM t WHERE id = ");
        by_id.bind(Uuid::from_u128(5));
        assert_eq!(read(&pool, &by_id, 1, note).await.unwrap(), [(Uuid::from_u128(5), 5, Some("note 5".to_owned()))]);
        let missing = read(&pool, &Sql::new("SELECT id, n AS m, note FROM t"), 5, note).await;
        assert!(matches!(&missing, Err(StoreError::Database(m)) if m.contains("no column \"n\"")), "{missing:?}");
        let broken = read(&pool, &Sql::new("SELECT id FROM nowhere"), 5, note).await;
        assert!(matches!(&broken, Err(StoreError::Database(m)) if m.contains("no such table")), "{broken:?}");
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM t").fetch_one(&pool).await.unwrap();
        assert_eq!(count, 5);
        // A page past what is read in place (handed on, on a runtime of several workers).
        let mut large = Sql::new("SELECT id, n, note FROM t LIMIT ");
        large.bind(READ_IN_PLACE + 1);
        assert_eq!(read(&pool, &large, READ_IN_PLACE + 1, note).await.unwrap().len(), 5);
    }

    #[tokio::test]
    async fn a_pool_s_rows_are_read_on_its_connection_s_handle_on_one_thread() {
        a_pool_s_rows_read_on_its_connection_s_handle().await;
    }

    /// On a runtime of several workers, where a large read hands its worker's other tasks on.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_pool_s_rows_are_read_on_its_connection_s_handle_on_several_workers() {
        a_pool_s_rows_read_on_its_connection_s_handle().await;
    }
}
