//! What the end-to-end tests share: a real Adjutant server on a random loopback port with a
//! fresh database (a temporary SQLite file, or a new PostgreSQL database) and a clock the test
//! sets by hand.
//!
//! PostgreSQL tests use `ADJUTANT_TEST_POSTGRES_URL` (the README's test command starts a
//! throwaway server and sets it). Without it they are skipped with a note, unless
//! `ADJUTANT_REQUIRE_POSTGRES=1`, which the test command sets so CI can never skip them.
//!
//! Beside the server: the shapes of set-up the tests repeat (`Game`, `Table`) and a stand-in
//! Discourse forum for the bot (`forum`).

mod campaigns;
mod env;
pub mod forum;

use std::sync::{Arc, Once};

use adjutant_server::clock::ManualClock;
use adjutant_server::config::Config;
use adjutant_server::{open_store, AppState};
use adjutant_store::Store;
use chrono::{DateTime, TimeZone, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use sqlx::Connection;

pub use campaigns::{scripted, short_acw_script, Game, Table};
pub use env::{postgres_admin_url, require_postgres, PgDatabase};
pub use reqwest;

/// A small scenario of its own map, units and city letters, for uploads
/// (`tests/fixtures/scenarios/crossroads.toml`).
pub const CROSSROADS: &str = include_str!("../fixtures/scenarios/crossroads.toml");

/// Serves a stand-in (a forum, a receiver) on a free loopback port; its base URL.
pub async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    url
}
pub use serde_json;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Runs a test body once per backend: `backends!(name, |backend| async move { … })`.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident => $body:ident;)+) => {
        mod sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                super::$body($crate::Backend::Sqlite).await;
            })+
        }
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                if $crate::postgres_admin_url().is_none() {
                    return;
                }
                super::$body($crate::Backend::Postgres).await;
            })+
        }
    };
}

fn init_tracing() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("TEST_LOG").is_some() {
            let _ = tracing_subscriber::fmt().with_env_filter("info,adjutant=debug").with_test_writer().try_init();
        }
    });
}

/// A database of its own for one test. Clones share it (a restarted server opens it again); it
/// is removed when the last clone is dropped.
#[derive(Clone)]
pub struct TestDb {
    pub url: String,
    pub backend: Backend,
    /// The server's receipt-signing key (64 hex digits): a restarted server keeps it, as a real
    /// one keeps its data folder.
    pub signing_key: String,
    _dir: Option<Arc<tempfile::TempDir>>,
    _postgres: Option<Arc<PgDatabase>>,
}

impl TestDb {
    pub async fn new(backend: Backend) -> Self {
        let signing_key = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = format!("sqlite://{}", dir.path().join("adjutant.db").display());
                Self { url, backend, signing_key, _dir: Some(Arc::new(dir)), _postgres: None }
            }
            Backend::Postgres => {
                let admin = postgres_admin_url().expect("PostgreSQL URL");
                let database = PgDatabase::create(&admin, "adjutant_test").await;
                let url = database.url.clone();
                Self { url, backend, signing_key, _dir: None, _postgres: Some(Arc::new(database)) }
            }
        }
    }

    pub async fn store(&self) -> Arc<dyn Store> {
        open_store(&self.url).await.expect("open store")
    }

    /// Runs raw SQL on the database behind the server's back (to play the tamperer).
    pub async fn execute(&self, sql: &str) {
        if let Err(e) = self.try_execute(sql).await {
            panic!("{sql}: {e}");
        }
    }

    /// Runs raw SQL on the campaigns table past the trigger that keeps creation records as they
    /// were (as only someone with the database's owner rights could), then puts it back.
    pub async fn execute_on_campaigns(&self, sql: &str) {
        let sql = match self.backend {
            Backend::Sqlite => format!(
                "DROP TRIGGER campaigns_creation_record_immutable; {sql}
                 CREATE TRIGGER campaigns_creation_record_immutable
                 BEFORE UPDATE OF id, name, moderator_id, mode, scenario, scenario_text, ruleset, settings, created_at, chain_genesis
                 ON campaigns BEGIN SELECT RAISE(ABORT, 'a campaign''s creation record never changes'); END;"
            ),
            Backend::Postgres => format!(
                "ALTER TABLE campaigns DISABLE TRIGGER campaigns_creation_record_immutable; {sql}
                 ALTER TABLE campaigns ENABLE TRIGGER campaigns_creation_record_immutable;"
            ),
        };
        self.execute(&sql).await;
    }

    /// Runs raw SQL, returning what the database said.
    pub async fn try_execute(&self, sql: &str) -> Result<(), String> {
        match self.backend {
            Backend::Sqlite => {
                let mut conn = sqlx::SqliteConnection::connect(&self.url).await.map_err(|e| e.to_string())?;
                sqlx::raw_sql(sql).execute(&mut conn).await.map(|_| ()).map_err(|e| e.to_string())
            }
            Backend::Postgres => {
                let mut conn = sqlx::PgConnection::connect(&self.url).await.map_err(|e| e.to_string())?;
                sqlx::raw_sql(sql).execute(&mut conn).await.map(|_| ()).map_err(|e| e.to_string())
            }
        }
    }

    /// The plan the database makes for `query`, given `args` for its parameters in order (text;
    /// `?` or `$1`, `$2`, … on SQLite, `$1`, `$2`, … on PostgreSQL, quoted into its `EXECUTE`). On
    /// PostgreSQL the plan is the generic one a server's prepared statement keeps for any
    /// values, made with sequential scans priced out (a test's tables are too small for any
    /// index to pay): an index the plan names is one the database can use for every value.
    pub async fn plan(&self, query: &str, args: &[&str]) -> String {
        match self.backend {
            Backend::Sqlite => {
                let mut conn = sqlx::SqliteConnection::connect(&self.url).await.expect("connect");
                let explain = format!("EXPLAIN QUERY PLAN {query}");
                let mut statement = sqlx::query_as::<_, (i64, i64, i64, String)>(&explain);
                for arg in args {
                    statement = statement.bind(*arg);
                }
                let rows = statement.fetch_all(&mut conn).await.expect(&explain);
                rows.into_iter().map(|(.., detail)| detail).collect::<Vec<_>>().join("\n")
            }
            Backend::Postgres => {
                let mut conn = sqlx::PgConnection::connect(&self.url).await.expect("connect");
                let prepare = format!(
                    "SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; PREPARE planned AS {query}"
                );
                sqlx::raw_sql(&prepare).execute(&mut conn).await.expect(&prepare);
                let quoted: Vec<String> = args.iter().map(|arg| format!("'{}'", arg.replace('\'', "''"))).collect();
                let explain = format!("EXPLAIN EXECUTE planned ({})", quoted.join(", "));
                let rows: Vec<String> = sqlx::query_scalar(&explain).fetch_all(&mut conn).await.expect(&explain);
                rows.join("\n")
            }
        }
    }

    /// Counts rows of a table.
    pub async fn count(&self, table: &str) -> i64 {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        match self.backend {
            Backend::Sqlite => {
                let mut conn = sqlx::SqliteConnection::connect(&self.url).await.expect("connect");
                sqlx::query_scalar(&sql).fetch_one(&mut conn).await.expect(&sql)
            }
            Backend::Postgres => {
                let mut conn = sqlx::PgConnection::connect(&self.url).await.expect("connect");
                sqlx::query_scalar(&sql).fetch_one(&mut conn).await.expect(&sql)
            }
        }
    }
}

/// The day every test starts on, at 9:51:45.123 UTC.
pub fn seed_morning() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 21, 9, 51, 45).unwrap() + chrono::Duration::milliseconds(123)
}

/// A PostgreSQL `url` with its user replaced by `role`, without a password: the test cluster
/// trusts loopback.
pub fn url_as(url: &str, role: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
    let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    format!("{scheme}://{role}@{host}")
}

/// A running server.
pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub clock: Arc<ManualClock>,
    pub admin_token: String,
    pub db: TestDb,
    /// The server's state, shared with the running server (its caches and permits).
    pub state: AppState,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// An HTTP answer, read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub content_type: String,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Answer {
    /// Asserts a problem+json answer with this status naming `field`; returns the problem.
    #[track_caller]
    pub fn problem(&self, status: u16, field: &str) -> &Value {
        assert_eq!(self.status.as_u16(), status, "{}", self.text);
        assert_eq!(self.content_type, "application/problem+json", "{}", self.text);
        assert_eq!(self.body["status"], status, "{}", self.text);
        assert_eq!(self.body["field"], field, "{}", self.text);
        assert!(self.body["rule"].is_string(), "{}", self.text);
        assert!(self.body["detail"].as_str().is_some_and(|d| !d.is_empty()), "{}", self.text);
        &self.body
    }

    #[track_caller]
    pub fn ok(&self, status: u16) -> &Value {
        assert_eq!(self.status.as_u16(), status, "{}", self.text);
        &self.body
    }
}

impl TestApp {
    pub async fn spawn(backend: Backend) -> Self {
        Self::spawn_with(backend, |_| {}).await
    }

    pub async fn spawn_with(backend: Backend, configure: impl FnOnce(&mut Config)) -> Self {
        Self::spawn_on(TestDb::new(backend).await, configure).await
    }

    /// A server on an existing database: `spawn_on(app.db.clone(), …)` after dropping `app`
    /// restarts it.
    pub async fn spawn_on(db: TestDb, configure: impl FnOnce(&mut Config)) -> Self {
        Self::spawn_with_clock(db, configure, false).await
    }

    /// A server on an existing database that stamps by the machine's clock, as in production
    /// (`clock` is then not the server's: setting it changes nothing).
    pub async fn spawn_on_system_clock(db: TestDb, configure: impl FnOnce(&mut Config)) -> Self {
        Self::spawn_with_clock(db, configure, true).await
    }

    async fn spawn_with_clock(db: TestDb, configure: impl FnOnce(&mut Config), system_clock: bool) -> Self {
        init_tracing();
        let admin_token = format!("operator-{}", uuid::Uuid::new_v4());
        let mut config = Config::defaults();
        config.database_url = db.url.clone();
        config.listen = "127.0.0.1:0".into();
        config.scenarios_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/config/scenarios").into();
        config.admin_token = Some(adjutant_server::auth::Secret::new(admin_token.clone()));
        config.signing_key = Some(adjutant_server::auth::Secret::new(db.signing_key.clone()));
        // High enough that no test meets it by accident; the rate-limit test sets its own.
        config.rate_limit_per_minute = 1_000_000;
        config.expensive_reads_per_minute = 1_000_000;
        config.auth_failures_per_minute = 1_000_000;
        // Every test client comes from 127.0.0.1, many at once; the fair-shares tests set their own.
        config.max_connections_per_client = 0;
        config.posts_per_player_per_day = 1_000_000;
        // Test receivers listen on loopback, which webhooks may reach only when allowed.
        config.webhook_allow = "127.0.0.0/8, ::1".into();
        configure(&mut config);
        let store = db.store().await;
        let clock = Arc::new(ManualClock::new(seed_morning()));
        let server_clock: Arc<dyn adjutant_server::clock::ServerClock> = match system_clock {
            true => Arc::new(adjutant_server::clock::SystemClock),
            false => clock.clone(),
        };
        let state = AppState::new(config, store, server_clock).expect("app state");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let serving = state.clone();
        let server = tokio::spawn(async move {
            let _ = adjutant_server::serve(listener, serving).await;
        });
        Self { base, client: reqwest::Client::new(), clock, admin_token, db, state, server }
    }

    pub async fn request(&self, method: Method, path: &str, token: Option<&str>, body: Option<Value>) -> Answer {
        self.send(method, path, token, body, &[]).await
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Answer {
        let mut req = self.client.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        read(req.send().await.expect("request")).await
    }

    pub async fn get(&self, path: &str) -> Answer {
        self.request(Method::GET, path, None, None).await
    }

    /// Creates a moderator and returns their token.
    pub async fn moderator(&self) -> String {
        let answer = self
            .request(Method::POST, "/v1/moderators", Some(&self.admin_token), Some(json!({"name": "Moderator"})))
            .await;
        answer.ok(201)["token"].as_str().expect("token").to_owned()
    }

    /// Creates a campaign as `moderator`; returns its id.
    pub async fn campaign(&self, moderator: &str, body: Value) -> String {
        let answer = self.request(Method::POST, "/v1/campaigns", Some(moderator), Some(body)).await;
        answer.ok(201)["id"].as_str().expect("id").to_owned()
    }

    /// Issues a player token for `side`.
    pub async fn player(&self, moderator: &str, campaign: &str, side: &str) -> String {
        let answer = self
            .request(
                Method::POST,
                &format!("/v1/campaigns/{campaign}/players"),
                Some(moderator),
                Some(json!({"name": format!("{side} player"), "side": side})),
            )
            .await;
        answer.ok(201)["token"].as_str().expect("token").to_owned()
    }

    /// Issues a bot token for `campaign`, named `name`.
    pub async fn bot(&self, moderator: &str, campaign: &str, name: &str) -> String {
        let answer = self
            .request(
                Method::POST,
                &format!("/v1/campaigns/{campaign}/bots"),
                Some(moderator),
                Some(json!({"name": name})),
            )
            .await;
        answer.ok(201)["token"].as_str().expect("token").to_owned()
    }

    /// Posts with a fresh idempotency key.
    pub async fn post(&self, token: &str, campaign: &str, body: Value) -> Answer {
        let key = uuid::Uuid::new_v4().to_string();
        self.post_with_key(token, campaign, &key, body).await
    }

    pub async fn post_with_key(&self, token: &str, campaign: &str, key: &str, body: Value) -> Answer {
        self.send(
            Method::POST,
            &format!("/v1/campaigns/{campaign}/posts"),
            Some(token),
            Some(body),
            &[("Idempotency-Key", key)],
        )
        .await
    }
}

pub async fn read(response: reqwest::Response) -> Answer {
    let status = response.status();
    let headers = response.headers().clone();
    let content_type =
        headers.get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let text = response.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Answer { status, content_type, headers, body, text }
}
