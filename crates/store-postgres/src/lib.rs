//! Adjutant's PostgreSQL store.
//!
//! Appending a post locks its campaign's row (`SELECT … FOR UPDATE`) before it reads the tail,
//! so replicas serving the same campaign take turns, sequence numbers never repeat or skip, and
//! a repeated idempotency key is seen by whichever request comes second.

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
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::ConnectOptions;
use tracing::instrument;
use uuid::Uuid;

use crate::append::Append;
use crate::db::map_err;

mod append;
mod campaigns;
mod contacts;
mod db;
mod feed;
mod listen;
mod log;
mod mail;
mod principals;
mod scenarios;
mod statistics;
pub mod transfer;
mod webhooks;

pub use log::KIND_QUERIES;

pub struct PostgresStore {
    pool: PgPool,
    /// Posts waiting for this server's writer, appended a batch per transaction.
    batches: GroupCommit,
    /// Posts this process appended, for [`statistics::LOOK_AT_STATISTICS`].
    appended: std::sync::atomic::AtomicU64,
    /// How to open the listening connection ([`Store::listen`]), which is not the pool's.
    options: PgConnectOptions,
    /// The principals looked up by token, forgotten at every change of standing on any server
    /// ([`listen::forget_principals_on_notice`]).
    principal_cache: Arc<PrincipalCache>,
    /// The changes of standing this server told, until every listening server answers them.
    answers: listen::Answers,
    /// Dropped with the store, which stops its listening for changes of standing.
    _listening: tokio::sync::watch::Sender<()>,
}

impl PostgresStore {
    /// Commits at most `max_batch` posts at once (group commit; 1: each post on its own).
    pub fn with_max_batch(mut self, max_batch: usize) -> Self {
        self.batches = GroupCommit::new(max_batch);
        self
    }

    /// Connects to `url` (`postgres://…`) and brings the schema up to date.
    pub async fn open(url: &str) -> Result<Self> {
        let options: PgConnectOptions = url
            .parse::<PgConnectOptions>()
            .map_err(|e| StoreError::Database(format!("bad PostgreSQL URL: {e}")))?
            .log_statements(tracing::log::LevelFilter::Trace);
        // No ping before each use (sqlx pings a connection as it goes back to the pool already):
        // it would add a round trip to every token lookup. A connection PostgreSQL closed while
        // idle (a restart) fails the one request that meets it with a 503 to retry (`map_err`).
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(options.clone())
            .await
            .map_err(map_err)?;
        migrations::POSTGRES.run(&pool).await?;
        // Nothing is kept until the listener hears every change of standing.
        let principal_cache = Arc::new(PrincipalCache::new(false));
        let answers = listen::Answers::default();
        let (listening, stop) = tokio::sync::watch::channel(());
        tokio::spawn(listen::forget_principals_on_notice(
            options.clone(),
            principal_cache.clone(),
            answers.clone(),
            stop,
        ));
        Ok(Self {
            pool,
            batches: GroupCommit::new(MAX_BATCH),
            appended: Default::default(),
            options,
            principal_cache,
            answers,
            _listening: listening,
        })
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

#[async_trait]
impl Store for PostgresStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    #[instrument(skip_all)]
    async fn create_principal(&self, new: NewPrincipal) -> Result<Principal> {
        principals::create_principal(&self.pool, new).await
    }

    #[instrument(skip_all)]
    async fn principal_by_token_hash(&self, token_hash: &[u8; 32]) -> Result<Option<Principal>> {
        if let Some(principal) = self.principal_cache.get(token_hash) {
            return Ok(Some(principal));
        }
        let read_at = self.principal_cache.generation();
        let found = principals::principal_by_token_hash(&self.pool, token_hash).await?;
        if let Some(principal) = &found {
            self.principal_cache.keep(read_at, *token_hash, principal.clone());
        }
        Ok(found)
    }

    #[instrument(skip_all)]
    async fn principal(&self, id: Uuid) -> Result<Option<(Principal, Option<DateTime<Utc>>)>> {
        principals::principal(&self.pool, id).await
    }

    #[instrument(skip_all)]
    async fn campaign_principals(
        &self,
        campaign_id: Uuid,
        kind: PrincipalKind,
        limit: i64,
    ) -> Result<Vec<(Principal, Option<DateTime<Utc>>)>> {
        principals::campaign_principals(&self.pool, campaign_id, kind, limit).await
    }

    #[instrument(skip_all)]
    async fn revoke_principal(&self, id: Uuid, at: DateTime<Utc>) -> Result<bool> {
        let mut transaction = self.pool.begin().await.map_err(map_err)?;
        let revoked = principals::revoke_principal(&mut *transaction, id, at).await?;
        let told = listen::tell_standing_changed(&mut transaction, &self.answers).await?;
        transaction.commit().await.map_err(map_err)?;
        self.principal_cache.forget_all();
        listen::answered_everywhere(&self.principal_cache, &self.pool, told).await;
        Ok(revoked)
    }

    #[instrument(skip_all)]
    async fn replace_token(&self, id: Uuid, token_hash: &[u8; 32]) -> Result<bool> {
        let mut transaction = self.pool.begin().await.map_err(map_err)?;
        let replaced = principals::replace_token(&mut *transaction, id, token_hash).await?;
        let told = listen::tell_standing_changed(&mut transaction, &self.answers).await?;
        transaction.commit().await.map_err(map_err)?;
        self.principal_cache.forget_all();
        listen::answered_everywhere(&self.principal_cache, &self.pool, told).await;
        Ok(replaced)
    }

    #[instrument(skip_all)]
    async fn set_contact(&self, principal_id: Uuid, contact: &Contact, at: DateTime<Utc>) -> Result<bool> {
        contacts::set_contact(&self.pool, principal_id, contact, at).await
    }

    #[instrument(skip_all)]
    async fn campaign_contacts(&self, campaign_id: Uuid) -> Result<Vec<(Uuid, Contact)>> {
        contacts::campaign_contacts(&self.pool, campaign_id).await
    }

    #[instrument(skip_all)]
    async fn queue_mail(&self, mail: &NewMail) -> Result<bool> {
        mail::queue_mail(&self.pool, mail).await
    }

    #[instrument(skip_all)]
    async fn claim_mails(
        &self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<ClaimedMail>> {
        mail::claim_mails(&self.pool, now, lease_until, limit).await
    }

    #[instrument(skip_all)]
    async fn finish_mail(&self, key: &str, at: DateTime<Utc>, verdict: &MailVerdict) -> Result<()> {
        mail::finish_mail(&self.pool, key, at, verdict).await
    }

    #[instrument(skip_all)]
    async fn mails(&self, campaign_id: Uuid, limit: i64) -> Result<Vec<MailLogEntry>> {
        mail::mails(&self.pool, campaign_id, limit).await
    }

    #[instrument(skip_all)]
    async fn create_campaign(&self, campaign: Campaign) -> Result<Campaign> {
        campaigns::create_campaign(&self.pool, campaign).await
    }

    #[instrument(skip_all)]
    async fn campaign(&self, id: Uuid) -> Result<Option<Campaign>> {
        campaigns::campaign(&self.pool, id).await
    }

    #[instrument(skip_all)]
    async fn campaigns(&self, moderator: Option<Uuid>, after: Option<Uuid>, limit: i64) -> Result<Vec<Campaign>> {
        campaigns::campaigns(&self.pool, moderator, after, limit).await
    }

    #[instrument(skip_all)]
    async fn keep_scenario(&self, scenario: UploadedScenario) -> Result<UploadedScenario> {
        scenarios::keep_scenario(&self.pool, scenario).await
    }

    #[instrument(skip_all)]
    async fn scenario(&self, moderator_id: Uuid, id: &str) -> Result<Option<UploadedScenario>> {
        scenarios::scenario(&self.pool, moderator_id, id).await
    }

    #[instrument(skip_all)]
    async fn scenarios(&self, moderator_id: Uuid, after: Option<&str>, limit: i64) -> Result<Vec<ScenarioEntry>> {
        scenarios::scenarios(&self.pool, moderator_id, after, limit).await
    }

    #[instrument(skip_all)]
    async fn keep_campaign_secret(&self, campaign_id: Uuid, chain: i64, secret: &str) -> Result<String> {
        campaigns::keep_campaign_secret(&self.pool, campaign_id, chain, secret).await
    }

    #[instrument(skip_all)]
    async fn campaign_secrets(&self, campaign_id: Uuid) -> Result<Vec<(i64, String)>> {
        campaigns::campaign_secrets(&self.pool, campaign_id).await
    }

    #[instrument(skip_all)]
    async fn count_outcomes_of_kind(&self, campaign_id: Uuid, kind: IndexedOutcomeKind) -> Result<i64> {
        log::count_outcomes_of_kind(&self.pool, campaign_id, kind).await
    }

    #[instrument(skip_all)]
    async fn outcomes_of_kind(&self, campaign_id: Uuid, kind: IndexedOutcomeKind, limit: i64) -> Result<Vec<Outcome>> {
        log::outcomes_of_kind(&self.pool, campaign_id, kind, limit).await
    }

    #[instrument(skip_all, fields(campaign = %request.campaign_id))]
    async fn append_post(&self, request: AppendRequest, decide: SharedDecide) -> Result<Appended> {
        let pool = self.pool.clone();
        let begin = move || Append::begin(pool.clone());
        let appended = self.batches.append(request, decide, begin).await;
        if let Ok(Appended::New(..)) = &appended {
            let count = self.appended.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            if statistics::LOOK_AT_STATISTICS.contains(&count) {
                tokio::spawn(statistics::analyze_if_stale(self.pool.clone()));
            }
        }
        appended
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

    fn listen(&self) -> Option<tokio::sync::mpsc::Receiver<adjutant_store::Heard>> {
        Some(listen::listen(self.options.clone()))
    }

    #[instrument(skip_all)]
    async fn posts(&self, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<Post>> {
        log::posts(&self.pool, campaign_id, after, limit).await
    }

    #[instrument(skip_all)]
    async fn post(&self, campaign_id: Uuid, seq: i64) -> Result<Option<Post>> {
        log::post(&self.pool, campaign_id, seq).await
    }

    #[instrument(skip_all)]
    async fn head(&self, campaign_id: Uuid) -> Result<Option<Post>> {
        log::head(&self.pool, campaign_id).await
    }

    #[instrument(skip_all)]
    async fn latest_outcomes(&self, campaign_id: Uuid, limit: i64) -> Result<Vec<Outcome>> {
        log::latest_outcomes(&self.pool, campaign_id, limit).await
    }

    #[instrument(skip_all)]
    async fn posts_of_kind(&self, campaign_id: Uuid, kind: IndexedPostKind) -> Result<Vec<Post>> {
        log::posts_of_kind(&self.pool, campaign_id, kind).await
    }

    #[instrument(skip_all)]
    async fn count_posts_by_author(
        &self,
        campaign_id: Uuid,
        author_id: Uuid,
        kind: &str,
        since: DateTime<Utc>,
    ) -> Result<i64> {
        log::count_posts_by_author(&self.pool, campaign_id, author_id, Some(kind), since).await
    }

    #[instrument(skip_all)]
    async fn outcomes(&self, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<Outcome>> {
        log::outcomes(&self.pool, campaign_id, after, limit).await
    }

    #[instrument(skip_all)]
    async fn outcomes_of_post(&self, campaign_id: Uuid, seq: i64) -> Result<Vec<Outcome>> {
        log::outcomes_of_posts(&self.pool, campaign_id, seq - 1, seq).await
    }

    #[instrument(skip_all)]
    async fn outcomes_of_posts(&self, campaign_id: Uuid, after: i64, through: i64) -> Result<Vec<Outcome>> {
        log::outcomes_of_posts(&self.pool, campaign_id, after, through).await
    }

    #[instrument(skip_all)]
    async fn snapshots(&self, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<(i64, String)>> {
        log::snapshots(&self.pool, campaign_id, after, limit).await
    }

    #[instrument(skip_all)]
    async fn snapshot_at(&self, campaign_id: Uuid, seq: i64) -> Result<Option<(i64, String)>> {
        log::snapshot_at(&self.pool, campaign_id, seq).await
    }

    #[instrument(skip_all)]
    async fn create_webhook(&self, webhook: Webhook) -> Result<Webhook> {
        webhooks::create_webhook(&self.pool, webhook).await
    }

    #[instrument(skip_all)]
    async fn webhooks(&self, campaign_id: Uuid) -> Result<Vec<Webhook>> {
        webhooks::webhooks(&self.pool, campaign_id).await
    }

    #[instrument(skip_all)]
    async fn webhook(&self, id: Uuid) -> Result<Option<Webhook>> {
        webhooks::webhook(&self.pool, id).await
    }

    #[instrument(skip_all)]
    async fn replace_webhook_secret(&self, id: Uuid, secret: &str) -> Result<bool> {
        webhooks::replace_webhook_secret(&self.pool, id, secret).await
    }

    #[instrument(skip_all)]
    async fn disable_webhook(&self, id: Uuid, at: DateTime<Utc>, reason: &str) -> Result<bool> {
        webhooks::disable_webhook(&self.pool, id, at, reason).await
    }

    #[instrument(skip_all)]
    async fn claim_deliveries(
        &self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<ClaimedDelivery>> {
        webhooks::claim_deliveries(&self.pool, now, lease_until, limit).await
    }

    #[instrument(skip_all)]
    async fn finish_delivery(&self, attempt: DeliveryAttempt, verdict: DeliveryVerdict) -> Result<()> {
        webhooks::finish_delivery(&self.pool, attempt, verdict).await
    }

    #[instrument(skip_all)]
    async fn deliveries(&self, webhook_id: Uuid, after: i64, limit: i64) -> Result<Vec<DeliveryLogEntry>> {
        webhooks::deliveries(&self.pool, webhook_id, after, limit).await
    }

    #[instrument(skip_all)]
    async fn outcome(&self, campaign_id: Uuid, id: Uuid) -> Result<Option<Outcome>> {
        log::outcome(&self.pool, campaign_id, id).await
    }

    #[instrument(skip_all)]
    async fn pending_outcomes(&self, bot: &Principal, limit: i64) -> Result<Vec<Outcome>> {
        feed::pending_outcomes(&self.pool, bot, limit).await
    }

    #[instrument(skip_all)]
    async fn acknowledge(&self, ack: Acknowledgement) -> Result<Acknowledgement> {
        feed::acknowledge(&self.pool, ack).await
    }

    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await.map_err(map_err)?;
        Ok(())
    }
}
