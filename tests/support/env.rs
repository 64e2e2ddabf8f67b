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
