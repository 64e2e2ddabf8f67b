//! The storage contract of Adjutant, in domain types.
//!
//! Two backends implement [`Store`]: `adjutant-store-sqlite` (the embedded default) and
//! `adjutant-store-postgres` (many campaigns, several replicas). The store persists and reads;
//! it never decides a rule. Appending a post hands the campaign's tail to a `decide` callback
//! (in the write transaction, or ahead of it on the tail that transaction then finds), so the
//! post's stamp, its hash, the rules' verdict, the outcomes, the state snapshot and the
//! idempotency record are written together or not at all.
//!
//! Posts, outcomes and snapshots are append-only: the schemas of both backends refuse UPDATE
//! and DELETE on them.
//!
//! What is the same on both backends is written here once: the append protocol ([`append`])
//! and the settling of a webhook delivery ([`delivery`]), each over the SQL steps each backend
//! implements, and the reading of rows into domain types ([`row`]). A backend crate holds only
//! what its database does its own way.

pub mod append;
pub mod delivery;
pub mod migrations;
pub mod principals;
pub mod row;
pub mod transfer;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// What `decide` answers when it will not have the post written. Why is its caller's to know:
/// the store only rolls back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declined;

#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The `decide` callback declined the post; nothing was written.
    #[error("the post was declined; nothing was written")]
    Declined,
    /// The idempotency key was used before with another request.
    #[error("idempotency key reused with a different request")]
    KeyReused,
    /// A uniqueness rule of the schema (a name or key already taken).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The database cannot be reached right now; try again later.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// Anything else the database said.
    #[error("database error: {0}")]
    Database(String),
    /// The post would go past the author's quota of this index in [`AppendRequest::quotas`];
    /// nothing was written.
    #[error("quota {0} of the request is spent")]
    QuotaSpent(usize),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrincipalKind {
    Moderator,
    Player,
    Bot,
}

impl PrincipalKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PrincipalKind::Moderator => "moderator",
            PrincipalKind::Player => "player",
            PrincipalKind::Bot => "bot",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "moderator" => Some(PrincipalKind::Moderator),
            "player" => Some(PrincipalKind::Player),
            "bot" => Some(PrincipalKind::Bot),
            _ => None,
        }
    }
}

/// Someone holding a token: a moderator, a player (one side of one campaign) or a bot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Principal {
    pub id: Uuid,
    pub kind: PrincipalKind,
    pub name: String,
    /// The campaign a player or bot token is bound to.
    pub campaign_id: Option<Uuid>,
    /// The side a player token acts for.
    pub side: Option<String>,
    /// The moderator who issued a player or bot token.
    pub created_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
}

/// How a player is reached outside Adjutant, as the campaign's moderator recorded it: the forum
/// handle the bot mentions when it is the player's turn, the Discord user id, and an email
/// address. Read by the moderator and by the bot's feed (the handle and the Discord id only).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contact {
    pub forum_handle: Option<String>,
    pub discord_user_id: Option<String>,
    pub email: Option<String>,
}

/// A principal to create, with the SHA-256 of its token (the token itself is never stored).
#[derive(Clone)]
pub struct NewPrincipal {
    pub principal: Principal,
    pub token_hash: [u8; 32],
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Campaign {
    pub id: Uuid,
    pub name: String,
    pub moderator_id: Uuid,
    /// `managed` or `resolver`.
    pub mode: String,
    /// The scenario a managed campaign was created from, and its text as it was then.
    pub scenario: Option<String>,
    pub scenario_text: Option<String>,
    /// The ruleset of a resolver campaign.
    pub ruleset: Option<String>,
    /// Clock zone, 12/24 h, digit positions, victory rounding: JSON owned by the server.
    pub settings: String,
    pub created_at: DateTime<Utc>,
    /// How the chain starts: `creation_record` (the hash of the fields above) or `legacy` (64
    /// zeros, campaigns created before the record was hashed).
    pub chain_genesis: String,
}

/// A scenario a moderator uploaded, as a listing shows it: never changed once kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScenarioEntry {
    /// The SHA-256 of the scenario's text, 64 lower-case hex digits.
    pub id: String,
    /// The moderator who uploaded it, the only one who sees and uses it.
    pub moderator_id: Uuid,
    /// The moderator's name for it.
    pub name: String,
    /// The scenario's own title.
    pub title: String,
    pub created_at: DateTime<Utc>,
}

/// An uploaded scenario with its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UploadedScenario {
    pub entry: ScenarioEntry,
    pub text: String,
}

/// One post of a campaign's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Post {
    pub campaign_id: Uuid,
    pub seq: i64,
    pub stamp: DateTime<Utc>,
    pub author_id: Uuid,
    pub side: Option<String>,
    pub kind: String,
    /// Canonical JSON text (keys sorted, no white space).
    pub body: String,
    pub prev_hash: String,
    pub hash: String,
    /// The server's signed receipt (none on posts written before receipts were signed).
    pub receipt: Option<Receipt>,
}

/// The server's Ed25519 signature over a post's campaign, seq, stamp and hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Receipt {
    /// Which of the server's keys signed (`GET /v1/keys`).
    pub key_id: String,
    /// The signature, 128 hex digits.
    pub signature: String,
}

/// Something the rules decided, for the feed and the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    pub id: Uuid,
    pub campaign_id: Uuid,
    /// 1, 2, … across the campaign: the feed's cursor.
    pub position: i64,
    /// The post it came from.
    pub seq: i64,
    pub kind: String,
    /// Canonical JSON text.
    pub data: String,
}

/// The kinds of post found by their kind ([`Store::posts_of_kind`]): rollbacks and seals, which
/// change how the rest of the log reads, and deployments, read to find the one still sealed. The
/// index by kind holds these posts only; a move, an attack or a note enters no index it is never
/// looked up by, which spares every ordinary post a page written at its commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexedPostKind {
    Rollback,
    Seal,
    Deploy,
}

impl IndexedPostKind {
    pub const ALL: [Self; 3] = [Self::Rollback, Self::Seal, Self::Deploy];

    /// The kind as posts store it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Rollback => "rollback",
            Self::Seal => "seal",
            Self::Deploy => "deploy",
        }
    }
}

/// The kinds of outcome found by their kind ([`Store::outcomes_of_kind`]): battles, which a
/// sealed-delay campaign counts for its draws, and turn beginnings, which the game's pages read
/// for the player turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexedOutcomeKind {
    Battle,
    TurnBegins,
}

impl IndexedOutcomeKind {
    pub const ALL: [Self; 2] = [Self::Battle, Self::TurnBegins];

    /// The kind as outcomes store it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Battle => "battle",
            Self::TurnBegins => "turn_begins",
        }
    }
}

/// The condition of the partial index `posts_by_kind`, as both databases' migrations write it.
/// A query by kind states it beside `kind = ?`: each planner uses a partial index only where the
/// query's own condition implies the index's, and PostgreSQL cannot see that a bound kind is one
/// of these in a plan kept for any value.
pub const POSTS_BY_KIND_HOLDS: &str = "kind IN ('rollback', 'seal', 'deploy')";
/// The condition of the partial index `outcomes_by_kind`, as for [`POSTS_BY_KIND_HOLDS`].
pub const OUTCOMES_BY_KIND_HOLDS: &str = "kind IN ('battle', 'turn_begins')";

/// A backend's statements that find posts and outcomes by kind, as its store runs them: each
/// takes the campaign and the kind (and the outcomes' one a limit). Public so that the
/// conformance suite can check that each database plans them on its partial index.
#[derive(Debug)]
pub struct KindQueries {
    pub posts: String,
    pub outcomes: String,
    pub count_outcomes: String,
}

/// A bot's acknowledgement of an outcome it delivered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Acknowledgement {
    pub bot_id: Uuid,
    pub outcome_id: Uuid,
    pub campaign_id: Uuid,
    /// The forum's id of the post that carried the outcome.
    pub forum_post_id: String,
    pub acked_at: DateTime<Utc>,
}

/// The end of a campaign's log, as `decide` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tail {
    /// The sequence number the new post will get.
    pub next_seq: i64,
    /// The hash of the last post, or the campaign's genesis hash text for the first.
    pub prev_hash: Option<String>,
    pub prev_stamp: Option<DateTime<Utc>>,
    /// The last state snapshot (managed campaigns), and the post it follows.
    pub snapshot: Option<(i64, String)>,
    pub next_position: i64,
}

/// What `decide` wants written.
pub struct Decision {
    /// The post, stamped and chained; its receipt is made by `sign`.
    pub post: Post,
    pub outcomes: Vec<NewOutcome>,
    pub snapshot: Option<String>,
    /// Signs the post before it is written (none: the post is written as it is). Apart from the
    /// decision because no post's receipt is needed to decide the next one, so a batch's posts
    /// are signed together, on every core.
    pub sign: Option<Sign>,
}

impl std::fmt::Debug for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decision")
            .field("post", &self.post)
            .field("outcomes", &self.outcomes)
            .field("snapshot", &self.snapshot)
            .field("sign", &self.sign.is_some())
            .finish()
    }
}

/// A post's receipt, made from the post as decided.
pub type Sign = std::sync::Arc<dyn Fn(&Post) -> Receipt + Send + Sync>;

#[derive(Debug, Clone)]
pub struct NewOutcome {
    pub id: Uuid,
    pub kind: String,
    pub data: String,
}

/// An append request's identity for idempotency.
#[derive(Debug, Clone)]
pub struct AppendRequest {
    pub campaign_id: Uuid,
    pub author_id: Uuid,
    pub idempotency_key: String,
    /// SHA-256 (hex) of what was asked: campaign, kind, side and body.
    pub request_hash: String,
    /// The author's quotas this post counts against, checked inside the write transaction
    /// after the campaign is held, so posts made at once cannot go past them together.
    pub quotas: Vec<Quota>,
}

/// At most `limit` posts by the author in the campaign since `since` (of `kind`, or of every
/// kind); a post over it is answered [`StoreError::QuotaSpent`] with the quota's index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quota {
    pub kind: Option<String>,
    pub since: DateTime<Utc>,
    pub limit: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Appended {
    /// Stored now.
    New(Post, Vec<Outcome>),
    /// The same key and request were seen before: the post stored then.
    Replayed(Post, Vec<Outcome>),
}

/// What a listening store heard ([`Store::listen`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// A campaign's log grew up to post `seq`.
    Post { campaign_id: Uuid, seq: i64 },
    /// The listening connection was lost and is back: what was committed meanwhile went untold.
    Resumed,
}

/// An endpoint a moderator registered to receive a campaign's outcomes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Webhook {
    pub id: Uuid,
    pub campaign_id: Uuid,
    pub url: String,
    /// `whsec_` and the base64 of the signing key.
    pub secret: String,
    pub created_by: Uuid,
    pub created_at: DateTime<Utc>,
    /// Set when the endpoint answered 410 Gone: nothing more is sent to it.
    pub disabled_at: Option<DateTime<Utc>>,
    pub disabled_reason: Option<String>,
}

/// Attempts in flight at once to one webhook (claimed and not yet settled): a claim passes over
/// a webhook's further rows, so an endpoint that never answers holds at most this many of the
/// deliverer's slots, and other webhooks' rows are claimed past its backlog. (The bound is per
/// claim: replicas claiming at the same moment may each take up to this many.)
pub const PER_WEBHOOK_IN_FLIGHT: i64 = 2;

/// An outbox row a deliverer has claimed, with what it needs to send it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedDelivery {
    pub outbox_id: i64,
    pub webhook_id: Uuid,
    pub outcome_id: Uuid,
    /// The JSON body, the same on every attempt.
    pub payload: String,
    /// This attempt's number: 1 for the first.
    pub attempt: i32,
    pub url: String,
    pub secret: String,
}

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryAttempt {
    pub outbox_id: i64,
    pub attempt: i32,
    pub attempted_at: DateTime<Utc>,
    /// The HTTP status answered, if any.
    pub status_code: Option<i32>,
    /// Why there was no answer (refused, timed out), if so.
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// What becomes of the outbox row after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryVerdict {
    /// A 2xx answer: done.
    Delivered,
    /// 410 Gone: this row and every later one for the webhook stop; the webhook is disabled.
    Gone,
    /// Try again at this time.
    RetryAt(DateTime<Utc>),
    /// Out of attempts: stop trying this row.
    GiveUp,
}

/// A mail to send to a player, queued once under its key (what it is about: the same turn or
/// reminder is never queued twice, on any server, across restarts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewMail {
    pub key: String,
    pub campaign_id: Uuid,
    pub principal_id: Uuid,
    pub to: String,
    pub subject: String,
    pub body: String,
    /// What the sender checks is still so before sending (JSON, the sender's own).
    pub about: String,
    /// Not sent before this time.
    pub due_at: DateTime<Utc>,
}

/// A queued mail claimed for sending, and how many attempts it has had (this one counted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClaimedMail {
    pub mail: NewMail,
    pub attempts: i32,
}

/// How an attempt to send a mail ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailVerdict {
    Sent,
    /// Not sent, and never will be: what it was about is over (the turn ended, the deadline moved).
    Skipped(String),
    /// Not sent this time: tried again from `retry_at`.
    Failed {
        error: String,
        retry_at: DateTime<Utc>,
    },
}

/// One line of a campaign's mail log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MailLogEntry {
    pub key: String,
    pub principal_id: Uuid,
    pub to: String,
    pub subject: String,
    pub due_at: DateTime<Utc>,
    pub attempts: i32,
    pub sent_at: Option<DateTime<Utc>>,
    pub skipped: Option<String>,
    pub last_error: Option<String>,
}

/// The most attempts a mail gets.
pub const MAIL_MAX_ATTEMPTS: i32 = 12;

/// One line of a webhook's delivery log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeliveryLogEntry {
    /// 1, 2, … across the log: the page cursor.
    pub id: i64,
    pub outbox_id: i64,
    pub outcome_id: Uuid,
    pub attempt: i32,
    pub attempted_at: DateTime<Utc>,
    pub status_code: Option<i32>,
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// Outcomes (of a range of posts, say) by the post they came from, each post's in position order.
pub fn outcomes_by_post(outcomes: Vec<Outcome>) -> std::collections::BTreeMap<i64, Vec<Outcome>> {
    let mut by_post = std::collections::BTreeMap::<i64, Vec<Outcome>>::new();
    for outcome in outcomes {
        by_post.entry(outcome.seq).or_default().push(outcome);
    }
    for of_post in by_post.values_mut() {
        of_post.sort_by_key(|o| o.position);
    }
    by_post
}

pub type Decide<'a> = &'a (dyn Fn(&Tail) -> std::result::Result<Decision, Declined> + Send + Sync);

/// The most posts one group commit carries.
pub const MAX_BATCH: usize = 64;

/// A `decide` callback a post can take into a batch: owned and shared with the batch's writer.
pub type SharedDecide = std::sync::Arc<dyn Fn(&Tail) -> std::result::Result<Decision, Declined> + Send + Sync>;

#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// `sqlite` or `postgres`.
    fn backend(&self) -> &'static str;

    async fn create_principal(&self, new: NewPrincipal) -> Result<Principal>;
    /// The principal holding this token, unless the token was revoked.
    async fn principal_by_token_hash(&self, token_hash: &[u8; 32]) -> Result<Option<Principal>>;
    /// A principal by id, revoked or not, with the time its token was revoked.
    async fn principal(&self, id: Uuid) -> Result<Option<(Principal, Option<DateTime<Utc>>)>>;
    /// The principals of `kind` bound to a campaign (its players, or its bots), in the order
    /// they were issued, each with when it was revoked; at most `limit`.
    async fn campaign_principals(
        &self,
        campaign_id: Uuid,
        kind: PrincipalKind,
        limit: i64,
    ) -> Result<Vec<(Principal, Option<DateTime<Utc>>)>>;
    /// Revokes a principal's token at `at`: from now on it authenticates no more, on every
    /// server using this database. Only the principal's own row changes. `false` when there is
    /// no such principal; revoking twice keeps the first time.
    async fn revoke_principal(&self, id: Uuid, at: DateTime<Utc>) -> Result<bool>;
    /// Gives a principal a new token (its hash): the old one authenticates no more. `false` when
    /// there is no such principal or its token was revoked.
    async fn replace_token(&self, id: Uuid, token_hash: &[u8; 32]) -> Result<bool>;
    /// Records how a player is reached (replacing what was recorded). `false` when there is no
    /// such principal.
    async fn set_contact(&self, principal_id: Uuid, contact: &Contact, at: DateTime<Utc>) -> Result<bool>;
    /// The contacts recorded for a campaign's principals, by principal id.
    async fn campaign_contacts(&self, campaign_id: Uuid) -> Result<Vec<(Uuid, Contact)>>;

    /// Queues a mail under its key; `false` when one was queued under that key before (nothing
    /// changes).
    async fn queue_mail(&self, mail: &NewMail) -> Result<bool>;
    /// Claims up to `limit` mails due by `now` and not sent, claimed or out of attempts, until
    /// `lease_until`; each claim counts an attempt.
    async fn claim_mails(&self, now: DateTime<Utc>, lease_until: DateTime<Utc>, limit: i64)
        -> Result<Vec<ClaimedMail>>;
    /// Records how an attempt ended.
    async fn finish_mail(&self, key: &str, at: DateTime<Utc>, verdict: &MailVerdict) -> Result<()>;
    /// A campaign's mails, the latest due first; at most `limit`.
    async fn mails(&self, campaign_id: Uuid, limit: i64) -> Result<Vec<MailLogEntry>>;

    async fn create_campaign(&self, campaign: Campaign) -> Result<Campaign>;
    async fn campaign(&self, id: Uuid) -> Result<Option<Campaign>>;
    /// Campaigns in creation order (only `moderator`'s when given), after `after` (exclusive)
    /// when given.
    async fn campaigns(&self, moderator: Option<Uuid>, after: Option<Uuid>, limit: i64) -> Result<Vec<Campaign>>;

    /// Keeps an uploaded scenario unless its moderator already keeps one of the same id (the
    /// same text); returns the one kept, so uploading a text twice keeps it once.
    async fn keep_scenario(&self, scenario: UploadedScenario) -> Result<UploadedScenario>;
    /// One of a moderator's uploaded scenarios: `None` when that moderator has none of this id.
    async fn scenario(&self, moderator_id: Uuid, id: &str) -> Result<Option<UploadedScenario>>;
    /// A moderator's uploaded scenarios by id, after `after` (exclusive) when given; at most
    /// `limit`.
    async fn scenarios(&self, moderator_id: Uuid, after: Option<&str>, limit: i64) -> Result<Vec<ScenarioEntry>>;

    /// Keeps the top secret `s_K` of chain `chain` of a sealed-delay campaign, unless one is kept
    /// for that chain already; returns the one kept (so two servers racing agree). Kept apart
    /// from everything the API serves, and never changed.
    async fn keep_campaign_secret(&self, campaign_id: Uuid, chain: i64, secret: &str) -> Result<String>;
    /// A campaign's kept chain secrets, by chain number.
    async fn campaign_secrets(&self, campaign_id: Uuid) -> Result<Vec<(i64, String)>>;
    /// How many outcomes of `kind` the campaign has, void posts' included.
    async fn count_outcomes_of_kind(&self, campaign_id: Uuid, kind: IndexedOutcomeKind) -> Result<i64>;
    /// A campaign's outcomes of one kind, in feed order; the first `limit`.
    async fn outcomes_of_kind(&self, campaign_id: Uuid, kind: IndexedOutcomeKind, limit: i64) -> Result<Vec<Outcome>>;

    /// Appends a post: inside a write transaction, replays a known idempotency key, otherwise
    /// hands the tail to `decide` and writes what it returns. The posts waiting at once share
    /// one transaction (group commit, [`append::GroupCommit`]); each is answered after the commit.
    async fn append_post(&self, request: AppendRequest, decide: SharedDecide) -> Result<Appended>;
    /// The most posts one commit has carried so far (group commit).
    fn largest_batch(&self) -> usize;
    /// How many batches went one by one rather than together (group commit): a key seen before
    /// or twice in the batch, or a statement that failed.
    fn batches_one_by_one(&self) -> usize;
    /// Tells `observer` the number of posts of each batch written from now on (group commit).
    fn observe_batches(&self, observer: append::BatchObserver) {
        let _ = observer;
    }
    /// What this database tells of posts other servers (and this one) commit, for a backend
    /// that can tell (PostgreSQL's `LISTEN`): each batch's last post per campaign as it
    /// commits, and [`Heard::Resumed`] after the listening connection was lost and is back
    /// (posts committed meanwhile went untold: read the logs). `None`: this backend tells
    /// nothing, and every post is written by this process.
    fn listen(&self) -> Option<tokio::sync::mpsc::Receiver<Heard>> {
        None
    }
    /// Posts with `seq > after`, in order, at most `limit`.
    async fn posts(&self, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<Post>>;
    async fn post(&self, campaign_id: Uuid, seq: i64) -> Result<Option<Post>>;
    /// The last post of the campaign, if any.
    async fn head(&self, campaign_id: Uuid) -> Result<Option<Post>>;
    /// The campaign's latest outcomes, at most `limit`, oldest first.
    async fn latest_outcomes(&self, campaign_id: Uuid, limit: i64) -> Result<Vec<Outcome>>;
    /// Every post of one kind (rollbacks, say), in order.
    async fn posts_of_kind(&self, campaign_id: Uuid, kind: IndexedPostKind) -> Result<Vec<Post>>;
    /// How many posts of `kind` `author_id` made in the campaign stamped at or after `since`.
    async fn count_posts_by_author(
        &self,
        campaign_id: Uuid,
        author_id: Uuid,
        kind: &str,
        since: DateTime<Utc>,
    ) -> Result<i64>;
    /// Outcomes with `position > after`, in order, at most `limit`.
    async fn outcomes(&self, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<Outcome>>;
    async fn outcomes_of_post(&self, campaign_id: Uuid, seq: i64) -> Result<Vec<Outcome>>;
    /// The outcomes of the posts with `after < seq <= through` (a page of posts), in position
    /// order: one query for a page rather than one a post.
    async fn outcomes_of_posts(&self, campaign_id: Uuid, after: i64, through: i64) -> Result<Vec<Outcome>>;
    /// Snapshots after posts `> after`, in order, at most `limit`.
    async fn snapshots(&self, campaign_id: Uuid, after: i64, limit: i64) -> Result<Vec<(i64, String)>>;
    /// The latest snapshot stored at or before post `seq`, with the post it follows.
    async fn snapshot_at(&self, campaign_id: Uuid, seq: i64) -> Result<Option<(i64, String)>>;

    /// Registers a webhook. Outcomes written from now on get an outbox row for it.
    async fn create_webhook(&self, webhook: Webhook) -> Result<Webhook>;
    /// A campaign's webhooks, in registration order.
    async fn webhooks(&self, campaign_id: Uuid) -> Result<Vec<Webhook>>;
    async fn webhook(&self, id: Uuid) -> Result<Option<Webhook>>;
    /// Gives an active webhook a new signing secret; deliveries claimed from now on are signed
    /// with it. `false` when there is no such active webhook.
    async fn replace_webhook_secret(&self, id: Uuid, secret: &str) -> Result<bool>;
    /// Disables a webhook at `at`, with `reason`: nothing more is sent to it, its delivery log
    /// stays. `false` when there is no such webhook or it is disabled already.
    async fn disable_webhook(&self, id: Uuid, at: DateTime<Utc>, reason: &str) -> Result<bool>;
    /// Claims up to `limit` outbox rows due at `now` (not delivered, not gone, not given up, not
    /// leased, webhook active) until `lease_until`, counting the attempt. Each row is claimed by
    /// one caller only, even with several replicas on one database.
    async fn claim_deliveries(
        &self,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<ClaimedDelivery>>;
    /// Logs an attempt and settles its outbox row (releasing the lease), in one transaction.
    async fn finish_delivery(&self, attempt: DeliveryAttempt, verdict: DeliveryVerdict) -> Result<()>;
    /// A webhook's delivery log, oldest first, entries with `id > after`, at most `limit`.
    async fn deliveries(&self, webhook_id: Uuid, after: i64, limit: i64) -> Result<Vec<DeliveryLogEntry>>;
    /// One outcome by id.
    async fn outcome(&self, campaign_id: Uuid, id: Uuid) -> Result<Option<Outcome>>;
    /// Outcomes the bot has not acknowledged, oldest first: those of its campaign, or of every
    /// campaign of the moderator who issued it when it is not bound to one.
    async fn pending_outcomes(&self, bot: &Principal, limit: i64) -> Result<Vec<Outcome>>;
    /// Records an acknowledgement; when the bot acknowledged the outcome before, the first
    /// acknowledgement stands and is returned.
    async fn acknowledge(&self, ack: Acknowledgement) -> Result<Acknowledgement>;

    /// Cheap round trip for health checks.
    async fn ping(&self) -> Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(seq: i64, position: i64) -> Outcome {
        Outcome { id: Uuid::new_v4(), campaign_id: Uuid::nil(), position, seq, kind: "roll".into(), data: "{}".into() }
    }

    #[test]
    fn outcomes_are_grouped_by_their_post_in_position_order() {
        let by_post = outcomes_by_post(vec![outcome(4, 6), outcome(1, 1), outcome(4, 5), outcome(1, 2), outcome(3, 3)]);
        let seen: Vec<(i64, Vec<i64>)> =
            by_post.iter().map(|(seq, of)| (*seq, of.iter().map(|o| o.position).collect())).collect();
        assert_eq!(seen, [(1, vec![1, 2]), (3, vec![3]), (4, vec![5, 6])]);
        assert!(outcomes_by_post(Vec::new()).is_empty());
    }

    /// `kind IN ('a', 'b')`: how a partial index by kind names the kinds it holds.
    fn holds(kinds: impl IntoIterator<Item = &'static str>) -> String {
        let quoted: Vec<String> = kinds.into_iter().map(|kind| format!("'{kind}'")).collect();
        format!("kind IN ({})", quoted.join(", "))
    }

    #[test]
    fn the_indexes_by_kind_hold_the_kinds_found_by_kind_in_both_databases() {
        assert_eq!(POSTS_BY_KIND_HOLDS, holds(IndexedPostKind::ALL.map(IndexedPostKind::as_str)));
        assert_eq!(OUTCOMES_BY_KIND_HOLDS, holds(IndexedOutcomeKind::ALL.map(IndexedOutcomeKind::as_str)));
        // The migrations' indexes state the very conditions the queries repeat: a planner proves
        // a partial index usable from the query's condition, and SQLite compares the two term by
        // term (the same kinds, in the same order).
        for migration in [
            include_str!("../../../migrations/sqlite/0015_kinds_found_by_kind.sql"),
            include_str!("../../../migrations/postgres/0015_kinds_found_by_kind.sql"),
        ] {
            assert!(
                migration.contains(&format!("ON posts (campaign_id, kind, seq) WHERE {POSTS_BY_KIND_HOLDS};")),
                "{migration}"
            );
            assert!(
                migration
                    .contains(&format!("ON outcomes (campaign_id, kind, position) WHERE {OUTCOMES_BY_KIND_HOLDS};")),
                "{migration}"
            );
        }
    }
}
