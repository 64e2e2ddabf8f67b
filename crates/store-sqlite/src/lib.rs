//! Adjutant's embedded store: one SQLite file.
//!
//! - WAL journal, set explicitly (sqlx leaves the journal mode alone), and `synchronous=FULL`,
//!   so an acknowledged post survives a power cut, not only a crash of the process.
//! - One writer connection; every write transaction starts with `BEGIN IMMEDIATE`, so it takes
//!   the write lock before reading the tail. A deferred transaction that reads and then writes
//!   can fail with SQLITE_BUSY without waiting; this one waits in the pool instead.
//! - A separate pool of read-only connections: readers never wait for the writer under WAL.
//! - The WAL is checkpointed into the database file by a connection of its own, a moment after
//!   posts were committed, not by the writer's commit while a batch's posts wait for it.

use std::str::FromStr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use adjutant_store::append::GroupCommit;
use adjutant_store::migrations;
use adjutant_store::principals::PrincipalCache;
use adjutant_store::{
    Acknowledgement, AppendRequest, Appended, Campaign, ClaimedDelivery, ClaimedMail, Contact, DeliveryAttempt,
    DeliveryLogEntry, DeliveryVerdict, IndexedOutcomeKind, IndexedPostKind, MailLogEntry, MailVerdict, NewMail,
    NewPrincipal, Outcome, Post, Principal, PrincipalKind, Result, ScenarioEntry, SharedDecide, Store, StoreError,
    UploadedScenario, Webhook, MAX_BATCH,
};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use tracing::instrument;
use uuid::Uuid;

use crate::append::Append;
use crate::db::map_err;

mod append;
pub mod backup;
mod campaigns;
mod checkpoint;
mod contacts;
mod db;
mod feed;
mod log;
mod mail;
mod malloc;
mod page_cache;
mod principals;
mod raw;
mod scenarios;
pub mod transfer;
mod wal_writes;
mod webhooks;

pub use log::KIND_QUERIES;

/// How long a connection waits for another's lock on the file before it answers "busy".
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct SqliteStore {
    writer: SqlitePool,
    readers: SqlitePool,
    /// Posts waiting for the writer, appended a batch per transaction.
    batches: GroupCommit,
    /// Told of each commit of posts: see [`checkpoint::after_commits`].
    commits: Arc<tokio::sync::Notify>,
    /// The writer connection's data version as its last batch began ([`append::Append`]).
    data_version: Arc<AtomicI64>,
    checkpointer: SqlitePool,
    /// The principals looked up by token, shared by every store of this process on the same
    /// file ([`shared_principal_cache`]).
    principal_cache: Arc<PrincipalCache>,
    /// Dropped with the store, which stops its checkpointer.
    _checkpointing: tokio::sync::watch::Sender<()>,
    /// A shared lock on the database's lock file, held for the store's life: see
    /// [`backup::hold`].
    _held: Option<std::fs::File>,
}

impl SqliteStore {
    /// Commits at most `max_batch` posts at once (group commit; 1: each post on its own).
    pub fn with_max_batch(mut self, max_batch: usize) -> Self {
        self.batches = GroupCommit::new(max_batch).on_own_thread();
        self
    }

    /// Opens (creating if missing) the database at `url` (`sqlite://path/to/file.db`) and brings
    /// its schema up to date.
    pub async fn open(url: &str) -> Result<Self> {
        malloc::use_mimalloc();
        page_cache::install();
        let gathered_wal = wal_writes::install();
        let held = backup::hold(url)?;
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Database(format!("bad SQLite URL: {e}")))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        let data_version = Arc::new(AtomicI64::new(append::UNKNOWN_VERSION));
        let seen = data_version.clone();
        // A connection in this process cannot drop away like a socket: no liveness test (a
        // round trip to the connection's thread) before each use.
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(30))
            // A new connection (the pool replaces one after a while, or after one was closed)
            // counts its data versions from its own start: the last one's tell it nothing.
            .after_connect(move |_, _| {
                seen.store(append::UNKNOWN_VERSION, Ordering::Relaxed);
                Box::pin(async { Ok(()) })
            })
            // A batch's savepoint keeps the pages it changes in a journal of its own: in memory,
            // not in a temporary file.
            .connect_with({
                let writer = options.clone();
                // Its WAL frames written together (`wal_writes`): only this connection writes them.
                let writer = if gathered_wal { writer.vfs(wal_writes::VFS_NAME) } else { writer };
                writer
                    .pragma("temp_store", "memory")
                    // 32 MiB of pages rather than SQLite's 2 MiB: a post adds an entry to each
                    // index at the end of its campaign's range, and with posts spread over a
                    // thousand campaigns those pages are read again from the file at every
                    // batch unless they stay here.
                    .pragma("cache_size", "-32768")
                    .pragma("wal_autocheckpoint", checkpoint::WRITER_CHECKPOINT_PAGES.to_string())
            })
            .await
            .map_err(map_err)?;
        migrations::SQLITE.run(&writer).await?;
        let principal_cache = shared_principal_cache(options.get_filename());
        let checkpointer = SqlitePoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .connect_with(options.clone())
            .await
            .map_err(map_err)?;
        let commits = Arc::new(tokio::sync::Notify::new());
        let (checkpointing, stop) = tokio::sync::watch::channel(());
        tokio::spawn(checkpoint::after_commits(checkpointer.clone(), commits.clone(), stop));
        let readers = SqlitePoolOptions::new()
            .max_connections(4)
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(30))
            // A page of rows (the audit reads up to four thousand posts at a time) fits in the
            // channel from SQLite's thread, which then runs through the query without waiting
            // for the reader.
            .connect_with(options.read_only(true).row_buffer_size(4096))
            .await
            .map_err(map_err)?;
        Ok(Self {
            writer,
            readers,
            batches: GroupCommit::new(MAX_BATCH).on_own_thread(),
            commits,
            data_version,
            checkpointer,
            principal_cache,
            _checkpointing: checkpointing,
            _held: held,
        })
    }

    pub async fn close(&self) {
        self.readers.close().await;
        self.checkpointer.close().await;
        self.writer.close().await;
    }
}

/// The principals kept for a database file, shared by every store of this process on it: a
/// change of standing made through any of them (a revocation, a new token) reaches them all at
/// once. A server in another process on the same file would not hear of them: servers share a
/// SQLite file only within one process (several processes take turns at PostgreSQL).
fn shared_principal_cache(file: &std::path::Path) -> Arc<PrincipalCache> {
    type Caches = std::sync::Mutex<std::collections::HashMap<std::path::PathBuf, std::sync::Weak<PrincipalCache>>>;
    static CACHES: std::sync::OnceLock<Caches> = std::sync::OnceLock::new();
    let Ok(file) = std::fs::canonicalize(file) else {
        // A database in memory is this store's alone.
        return Arc::new(PrincipalCache::new(true));
    };
    let mut caches = CACHES.get_or_init(Caches::default).lock().unwrap_or_else(|e| e.into_inner());
    caches.retain(|_, cache| cache.strong_count() > 0);
    if let Some(cache) = caches.get(&file).and_then(std::sync::Weak::upgrade) {
        return cache;
    }
    let cache = Arc::new(PrincipalCache::new(true));
    caches.insert(file, Arc::downgrade(&cache));
    cache
}

#[async_trait]
impl Store for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    #[instrument(skip_all)]
    async fn create_principal(&self, new: NewPrincipal) -> Result<Principal> {
        principals::create_principal(&self.writer, new).await
    }

    #[instrument(skip_all)]
    async fn principal_by_token_hash(&self, token_hash: &[u8; 32]) -> Result<Option<Principal>> {
        if let Some(principal) = self.principal_cache.get(token_hash) {
            return Ok(Some(principal));
        }
        let read_at = self.principal_cache.generation();
        let found = principals::principal_by_token_hash(&self.readers, token_hash).await?;
        if let Some(principal) = &found {
            self.principal_cache.keep(read_at, *token_hash, principal.clone());
        }
        Ok(found)
    }

    #[instrument(skip_all)]
    async fn principal(&self, id: Uuid) -> Result<Option<(Principal, Option<DateTime<Utc>>)>> {
        principals::principal(&self.readers, id).await
    }

    #[instrument(skip_all)]
    async fn campaign_principals(
        &self,
        campaign_id: Uuid,
        kind: PrincipalKind,
        limit: i64,
    ) -> Result<Vec<(Principal, Option<DateTime<Utc>>)>> {
        principals::campaign_principals(&self.readers, campaign_id, kind, limit).await
    }

    #[instrument(skip_all)]
    async fn revoke_principal(&self, id: Uuid, at: DateTime<Utc>) -> Result<bool> {
        let revoked = principals::revoke_principal(&self.writer, id, at).await;
        self.principal_cache.forget_all();
        revoked
    }

    #[instrument(skip_all)]
    async fn replace_token(&self, id: Uuid, token_hash: &[u8; 32]) -> Result<bool> {
        let replaced = principals::replace_token(&self.writer, id, token_hash).await;
        self.principal_cache.forget_all();
        replaced
    }

    #[instrument(skip_all)]
    async fn set_contact(&self, principal_id: Uuid, contact: &Contact, at: DateTime<Utc>) -> Result<bool> {
        contacts::set_contact(&self.writer, principal_id, contact, at).await
    }

    #[instrument(skip_all)]
    async fn campaign_contacts(&self, campaign_id: Uuid) -> Result<Vec<(Uuid, Contact)>> {
        contacts::campaign_contacts(&self.readers, campaign_id).await
    }

    #[instrument(skip_all)]
    async fn queue_mail(&self, mail: &NewMail) -> Result<bool> {
        mail::queue_mail(&self.writer, mail).await
    }

    #[instrument(skip_all)]
    async fn claim_mails(
        &self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<ClaimedMail>> {
        mail::claim_mails(&self.readers, &self.writer, now, lease_until, limit).await
    }

    #[instrument(skip_all)]
    async fn finish_mail(&self, key: &str, at: DateTime<Utc>, verdict: &MailVerdict) -> Result<()> {
        mail::finish_mail(&self.writer, key, at, verdict).await
    }

    #[instrument(skip_all)]
    async fn mails(&self, campaign_id: Uuid, limit: i64) -> Result<Vec<MailLogEntry>> {
        mail::mails(&self.readers, campaign_id, limit).await
    }

    #[instrument(skip_all)]
    async fn create_campaign(&self, campaign: Campaign) -> Result<Campaign> {
        campaigns::create_campaign(&self.writer, campaign).await
    }

    #[instrument(skip_all)]
    async fn campaign(&self, id: Uuid) -> Result<Option<Campaign>> {
        campaigns::campaign(&self.readers, id).await
    }

    #[instrument(skip_all)]
    async fn campaigns(&self, moderator: Option<Uuid>, after: Option<Uuid>, limit: i64) -> Result<Vec<Campaign>> {
        campaigns::campaigns(&self.readers, moderator, after, limit).await
    }

    #[instrument(skip_all)]
    async fn keep_scenario(&self, scenario: UploadedScenario) -> Result<UploadedScenario> {
        scenarios::keep_scenario(&self.writer, scenario).await
    }

    #[instrument(skip_all)]
    async fn scenario(&self, moderator_id: Uuid, id: &str) -> Result<Option<UploadedScenario>> {
        scenarios::scenario(&self.readers, moderator_id, id).await
    }

    #[instrument(skip_all)]
    async fn scenarios(&self, moderator_id: Uuid, after: Option<&str>, limit: i64) -> Result<Vec<ScenarioEntry>> {
        scenarios::scenarios(&self.readers, moderator_id, after, limit).await
    }

    #[instrument(skip_all)]
    async fn keep_campaign_secret(&self, campaign_id: Uuid, chain: i64, secret: &str) -> Result<String> {
        campaigns::keep_campaign_secret(&self.writer, campaign_id, chain, secret).await
    }

    #[instrument(skip_all)]
    async fn campaign_secrets(&self, campaign_id: Uuid) -> Result<Vec<(i64, String)>> {
        campaigns::campaign_secrets(&self.readers, campaign_id).await
    }

    #[instrument(skip_all)]
    async fn count_outcomes_of_kind(&self, campaign_id: Uuid, kind: IndexedOutcomeKind) -> Result<i64> {
        log::count_outcomes_of_kind(&self.readers, campaign_id, kind).await
    }

    #[instrument(skip_all)]
    async fn outcomes_of_kind(&self, campaign_id: Uuid, kind: IndexedOutcomeKind, limit: i64) -> Result<Vec<Outcome>> {
        log::outcomes_of_kind(&self.readers, campaign_id, kind, limit).await
    }

    #[instrument(skip_all, fields(campaign = %request.campaign_id))]
    async fn append_post(&self, request: AppendRequest, decide: SharedDecide) -> Result<Appended> {
        let (writer, commits, seen) = (self.writer.clone(), self.commits.clone(), self.data_version.clone());
        let begin = move || Append::begin(writer.clone(), commits.clone(), seen.clone());
        self.batches.append(request, decide, begin).await
    }

    fn largest_batch(&self) -> usize {
        self.batches.largest_batch()
    }

    fn batches_one_by_one(&self) -> usize {
        self.batches.batches_one_by_one()
    }

    fn observe_batches(&self, observer: adjutant_store::append::BatchObserver) {
        self.batches.observe(observer);
    }

    #[instrument(skip_all)]
    async fn posts(&self, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<Post>> {
        log::posts(&self.readers, campaign_id, after, limit).await
    }

    #[instrument(skip_all)]
    async fn post(&self, campaign_id: Uuid, seq: i64) -> Result<Option<Post>> {
        log::post(&self.readers, campaign_id, seq).await
    }

    #[instrument(skip_all)]
    async fn head(&self, campaign_id: Uuid) -> Result<Option<Post>> {
        log::head(&self.readers, campaign_id).await
    }

    #[instrument(skip_all)]
    async fn latest_outcomes(&self, campaign_id: Uuid, limit: i64) -> Result<Vec<Outcome>> {
        log::latest_outcomes(&self.readers, campaign_id, limit).await
    }

    #[instrument(skip_all)]
    async fn posts_of_kind(&self, campaign_id: Uuid, kind: IndexedPostKind) -> Result<Vec<Post>> {
        log::posts_of_kind(&self.readers, campaign_id, kind).await
    }

    #[instrument(skip_all)]
    async fn count_posts_by_author(
        &self,
        campaign_id: Uuid,
        author_id: Uuid,
        kind: &str,
        since: DateTime<Utc>,
    ) -> Result<i64> {
        log::count_posts_by_author(&self.readers, campaign_id, author_id, Some(kind), since).await
    }

    #[instrument(skip_all)]
    async fn outcomes(&self, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<Outcome>> {
        log::outcomes(&self.readers, campaign_id, after, limit).await
    }

    #[instrument(skip_all)]
    async fn outcomes_of_post(&self, campaign_id: Uuid, seq: i64) -> Result<Vec<Outcome>> {
        log::outcomes_of_posts(&self.readers, campaign_id, seq - 1, seq).await
    }

    #[instrument(skip_all)]
    async fn outcomes_of_posts(&self, campaign_id: Uuid, after: i64, through: i64) -> Result<Vec<Outcome>> {
        log::outcomes_of_posts(&self.readers, campaign_id, after, through).await
    }

    #[instrument(skip_all)]
    async fn snapshots(&self, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<(i64, String)>> {
        log::snapshots(&self.readers, campaign_id, after, limit).await
    }

    #[instrument(skip_all)]
    async fn snapshot_at(&self, campaign_id: Uuid, seq: i64) -> Result<Option<(i64, String)>> {
        log::snapshot_at(&self.readers, campaign_id, seq).await
    }

    #[instrument(skip_all)]
    async fn create_webhook(&self, webhook: Webhook) -> Result<Webhook> {
        webhooks::create_webhook(&self.writer, webhook).await
    }

    #[instrument(skip_all)]
    async fn webhooks(&self, campaign_id: Uuid) -> Result<Vec<Webhook>> {
        webhooks::webhooks(&self.readers, campaign_id).await
    }

    #[instrument(skip_all)]
    async fn webhook(&self, id: Uuid) -> Result<Option<Webhook>> {
        webhooks::webhook(&self.readers, id).await
    }

    #[instrument(skip_all)]
    async fn replace_webhook_secret(&self, id: Uuid, secret: &str) -> Result<bool> {
        webhooks::replace_webhook_secret(&self.writer, id, secret).await
    }

    #[instrument(skip_all)]
    async fn disable_webhook(&self, id: Uuid, at: DateTime<Utc>, reason: &str) -> Result<bool> {
        webhooks::disable_webhook(&self.writer, id, at, reason).await
    }

    #[instrument(skip_all)]
    async fn claim_deliveries(
        &self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<ClaimedDelivery>> {
        webhooks::claim_deliveries(&self.readers, &self.writer, now, lease_until, limit).await
    }

    #[instrument(skip_all)]
    async fn finish_delivery(&self, attempt: DeliveryAttempt, verdict: DeliveryVerdict) -> Result<()> {
        webhooks::finish_delivery(&self.writer, attempt, verdict).await
    }

    #[instrument(skip_all)]
    async fn deliveries(&self, webhook_id: Uuid, after: i64, limit: i64) -> Result<Vec<DeliveryLogEntry>> {
        webhooks::deliveries(&self.readers, webhook_id, after, limit).await
    }

    #[instrument(skip_all)]
    async fn outcome(&self, campaign_id: Uuid, id: Uuid) -> Result<Option<Outcome>> {
        log::outcome(&self.readers, campaign_id, id).await
    }

    #[instrument(skip_all)]
    async fn pending_outcomes(&self, bot: &Principal, limit: i64) -> Result<Vec<Outcome>> {
        feed::pending_outcomes(&self.readers, bot, limit).await
    }

    #[instrument(skip_all)]
    async fn acknowledge(&self, ack: Acknowledgement) -> Result<Acknowledgement> {
        feed::acknowledge(&self.writer, ack).await
    }

    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.readers).await.map_err(map_err)?;
        Ok(())
    }
}
