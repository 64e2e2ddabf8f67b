//! Which outside services the tests may use, read from the environment: shared by the root
//! test binary (`tests/support`) and the server's own fault tests (`crates/server/tests/faults.rs`,
//! which include this file by path because they cannot link the test library).

/// Whether the PostgreSQL half of every test must run (`ADJUTANT_REQUIRE_POSTGRES=1`), not skip.
pub fn require_postgres() -> bool {
    std::env::var("ADJUTANT_REQUIRE_POSTGRES").as_deref() == Ok("1")
}

/// The PostgreSQL server tests may use, or `None` (skip) when there is none and none is required.
pub fn postgres_admin_url() -> Option<String> {
    match std::env::var("ADJUTANT_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(!require_postgres(), "ADJUTANT_REQUIRE_POSTGRES=1 but ADJUTANT_TEST_POSTGRES_URL is not set");
            eprintln!("note: ADJUTANT_TEST_POSTGRES_URL is not set; skipping the PostgreSQL half of this test");
            None
        }
    }
}

/// A PostgreSQL database of one test's own on the test server, dropped when it is dropped: a run
/// of the whole suite makes hundreds, and a server that kept them all would fill a small disk.
pub struct PgDatabase {
    /// Where the database is, for the server under test.
    pub url: String,
    admin: String,
    name: String,
}

impl PgDatabase {
    /// A new empty database named `{prefix}_` and a fresh UUID, on the server at `admin`.
    pub async fn create(admin: &str, prefix: &str) -> Self {
        use sqlx::Connection;
        let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
        let mut conn = sqlx::PgConnection::connect(admin).await.expect("connect to PostgreSQL");
        sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut conn).await.expect("create database");
        let _ = conn.close().await;
        let base = admin.rsplit_once('/').map_or(admin, |(base, _)| base);
        Self { url: format!("{base}/{name}"), admin: admin.to_owned(), name }
    }
}

impl Drop for PgDatabase {
    /// Drops the database, ending any session still on it (a server the test left running).
    /// A database that cannot be dropped is named on stderr and left; the test's outcome stands.
    fn drop(&mut self) {
        use sqlx::Connection;
        let admin = self.admin.clone();
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        // This runs inside a test's runtime, which cannot wait on a future here: the drop gets
        // a thread and a runtime of its own.
        let dropped = std::thread::spawn(move || -> Result<(), String> {
            let runtime =
                tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
            runtime.block_on(async {
                let mut conn = sqlx::PgConnection::connect(&admin).await.map_err(|e| e.to_string())?;
                sqlx::query(&sql).execute(&mut conn).await.map_err(|e| e.to_string())?;
                conn.close().await.map_err(|e| e.to_string())
            })
        })
        .join()
        .unwrap_or_else(|_| Err("the dropping thread panicked".into()));
        if let Err(e) = dropped {
            eprintln!("note: the test database {} was left on the server: {e}", self.name);
        }
    }
}
