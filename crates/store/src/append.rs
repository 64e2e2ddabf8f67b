//! Appending a post, once for both backends.
//!
//! [`append_one`] is the whole protocol for a post: replay a known idempotency key, otherwise
//! read the tail, let `decide` rule on it, and write the post, its outcomes, their webhook
//! outbox rows, the state snapshot and the idempotency record. [`GroupCommit`] runs the posts
//! waiting at once in one write transaction and answers them after the commit; a post may be
//! decided ahead, while the batch before it commits, on the tail that batch leaves, and is
//! written so only if its own transaction reads (or holds) that very tail. A backend supplies the steps
//! ([`AppendSteps`]) in its own SQL, inside a transaction it has opened so that no other append
//! to the same campaign runs between a tail read and the commit (SQLite's single writer,
//! PostgreSQL's lock on the campaign's row).

use async_trait::async_trait;
use chrono::{DateTime, SecondsFormat, Utc};
use tracing::Instrument;
use uuid::Uuid;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::{
    AppendRequest, Appended, Decide, Declined, Outcome, Post, Quota, Result, SharedDecide, Sign, StoreError, Tail,
};

/// An idempotency key seen before: what was asked with it and the post it made.
#[derive(Debug, Clone)]
pub struct KnownKey {
    pub campaign_id: Uuid,
    pub request_hash: String,
    pub seq: i64,
}

/// The last post of a campaign, as far as the tail needs it.
#[derive(Debug, Clone)]
pub struct LastPost {
    pub seq: i64,
    pub hash: String,
    pub stamp: DateTime<Utc>,
}

/// What a quota counts: the author's posts in the campaign since a time, of one kind or (`None`)
/// of every kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QuotaCount {
    pub campaign_id: Uuid,
    pub author_id: Uuid,
    pub kind: Option<String>,
    pub since: DateTime<Utc>,
}

/// The SQL steps of an append, each run inside the backend's write transaction.
#[async_trait]
pub trait AppendSteps: Send {
    /// The record of `key` used by `principal_id` before, if any.
    async fn known_key(&mut self, principal_id: Uuid, key: &str) -> Result<Option<KnownKey>>;
    async fn post(&mut self, campaign_id: Uuid, seq: i64) -> Result<Option<Post>>;
    /// The outcomes of one post, in position order.
    async fn outcomes_of_post(&mut self, campaign_id: Uuid, seq: i64) -> Result<Vec<Outcome>>;
    async fn last_post(&mut self, campaign_id: Uuid) -> Result<Option<LastPost>>;
    /// The latest snapshot at or before post `seq`, with the post it follows.
    async fn snapshot_at(&mut self, campaign_id: Uuid, seq: i64) -> Result<Option<(i64, String)>>;
    /// The campaign's last outcome position, 0 before its first outcome.
    async fn last_position(&mut self, campaign_id: Uuid) -> Result<i64>;
    /// The post's row, with `outcomes_through`: the campaign's last outcome position once the
    /// post's own outcomes are written (its outcomes are the positions after the post before
    /// it's and through this).
    async fn insert_post(&mut self, campaign_id: Uuid, post: &Post, outcomes_through: i64) -> Result<()>;
    async fn insert_outcome(&mut self, outcome: &Outcome) -> Result<()>;
    /// For each of `asks`, in their order, the author's posts in the campaign since its time, of
    /// its kind or (none) of every kind: a batch's quotas, counted in one statement.
    async fn count_posts_by_authors(&mut self, asks: &[QuotaCount]) -> Result<Vec<i64>>;
    /// Whether any of `keys` (principal, key) has a record. A backend may ask in one statement.
    async fn any_known_key(&mut self, keys: &[(Uuid, &str)]) -> Result<bool> {
        for &(principal_id, key) in keys {
            if self.known_key(principal_id, key).await?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }
    /// Whether the campaign has a webhook that takes deliveries: without one, a post's outcomes
    /// need no outbox rows.
    async fn has_webhooks(&mut self, _campaign_id: Uuid) -> Result<bool> {
        Ok(true)
    }
    /// Holds several campaigns against other writers, in the order given (a backend may take
    /// them in one statement).
    async fn lock_campaigns(&mut self, campaign_ids: &[Uuid]) -> Result<()> {
        for &campaign_id in campaign_ids {
            self.lock_campaign(campaign_id).await?;
        }
        Ok(())
    }
    /// Each campaign's tail, and whether it has a webhook that takes deliveries (a backend may
    /// read them all in one statement, [`crate::row::tail`]).
    async fn tails(&mut self, campaign_ids: &[Uuid]) -> Result<Vec<(Uuid, Tail, bool)>>
    where
        Self: Sized,
    {
        let mut tails = Vec::with_capacity(campaign_ids.len());
        for &campaign_id in campaign_ids {
            let tail = tail(self, campaign_id).await?;
            tails.push((campaign_id, tail, self.has_webhooks(campaign_id).await?));
        }
        Ok(tails)
    }
    /// Each campaign's tail, as [`AppendSteps::tails`], unless one of `keys` (principal, key)
    /// has a record: then `None`. A backend may ask both in one statement.
    async fn tails_unless_known(
        &mut self,
        campaign_ids: &[Uuid],
        keys: &[(Uuid, &str)],
    ) -> Result<Option<Vec<(Uuid, Tail, bool)>>>
    where
        Self: Sized,
    {
        keys_then_tails(self, campaign_ids, keys).await
    }
    /// Which of `campaign_ids` have a webhook that takes deliveries, unless one of `keys`
    /// (principal, key) has a record: then `None`. Asked for the campaigns whose tails the
    /// writer holds ([`AppendSteps::alone`]), in place of reading their tails; a backend may ask
    /// both in one statement.
    async fn webhooks_unless_known(
        &mut self,
        campaign_ids: &[Uuid],
        keys: &[(Uuid, &str)],
    ) -> Result<Option<HashSet<Uuid>>>
    where
        Self: Sized,
    {
        keys_then_webhooks(self, campaign_ids, keys).await
    }
    /// Whether no other writer has committed to the database since this writer's previous
    /// batch began: then the tail each of this writer's committed batches left a campaign (kept
    /// for [`TAIL_KEPT`]) is the stored one, and the batch holds it rather than reading it again;
    /// it asks only whether the campaign has webhooks, and whether a key of the batch has a
    /// record. With posts spread over many campaigns, the tails' rows come back from the
    /// database one at a time, each a wake of the batch's task and of the database's thread (on
    /// SQLite at 1,000 campaigns, 1.4 of the server's 3.8 context switches a post). A backend that
    /// cannot tell (PostgreSQL, shared by several servers) answers false, and every batch reads
    /// its tails. Should a tail held be behind the stored one all the same, the batch's first
    /// post of that campaign takes a sequence number already stored: the posts' key refuses the
    /// insert, and the batch goes one by one, on tails read anew. A held tail is kept again only
    /// once a post was written on it, and no tail kept before a batch went one by one is held
    /// (the write lock is let go between its two transactions).
    fn alone(&self) -> bool {
        false
    }
    /// Several posts' rows, each with its `outcomes_through` ([`AppendSteps::insert_post`]); a
    /// backend may write them in one statement.
    async fn insert_posts(&mut self, posts: &[(&Post, i64)]) -> Result<()> {
        for &(post, outcomes_through) in posts {
            self.insert_post(post.campaign_id, post, outcomes_through).await?;
        }
        Ok(())
    }
    /// Several outcomes' rows; a backend may write them in one statement.
    async fn insert_outcomes(&mut self, outcomes: &[&Outcome]) -> Result<()> {
        for outcome in outcomes {
            self.insert_outcome(outcome).await?;
        }
        Ok(())
    }
    /// Several idempotency records (each request with the post it made); a backend may write
    /// them in one statement.
    async fn remember_keys(&mut self, keys: &[(&AppendRequest, i64)]) -> Result<()> {
        for &(request, seq) in keys {
            self.remember_key(request, seq).await?;
        }
        Ok(())
    }
    /// One outbox row per outcome of post `seq` and active webhook of the campaign, each holding
    /// the Standard Webhooks body (`timestamp`: the post's stamp, RFC 3339 to the millisecond).
    async fn enqueue_deliveries(&mut self, campaign_id: Uuid, seq: i64, timestamp: &str) -> Result<()>;
    async fn insert_snapshot(&mut self, campaign_id: Uuid, seq: i64, state: &str) -> Result<()>;
    /// Records the key and what was asked with it, pointing at post `seq`.
    async fn remember_key(&mut self, request: &AppendRequest, seq: i64) -> Result<()>;
    /// Holds the campaign against other writers until the transaction ends (PostgreSQL's row
    /// lock; SQLite's single writer holds every campaign already).
    async fn lock_campaign(&mut self, campaign_id: Uuid) -> Result<()>;
    /// Runs one statement that takes no parameters and returns no rows (the savepoints are
    /// the same SQL in both dialects).
    async fn execute(&mut self, sql: &'static str) -> Result<()>;
    /// `SAVEPOINT post`: a post of a batch starts here.
    async fn savepoint(&mut self) -> Result<()> {
        self.execute("SAVEPOINT post").await
    }
    /// `RELEASE SAVEPOINT post`: the post stays in the batch.
    async fn release(&mut self) -> Result<()> {
        self.execute("RELEASE SAVEPOINT post").await
    }
    /// `ROLLBACK TO SAVEPOINT post`: nothing of the post stays; the batch goes on.
    async fn rollback_to_savepoint(&mut self) -> Result<()> {
        self.execute("ROLLBACK TO SAVEPOINT post").await?;
        self.execute("RELEASE SAVEPOINT post").await
    }
    /// Tells other servers on the same database that these campaigns' logs grew up to these
    /// posts (campaign, last new sequence number), sent when the transaction commits and not
    /// before (PostgreSQL's `NOTIFY`). A backend without other servers to tell does nothing.
    async fn notify(&mut self, _heads: &[(Uuid, i64)]) -> Result<()> {
        Ok(())
    }
    /// A batch's rows written together: its posts, their outcomes and its idempotency
    /// records, and the notice of each campaign's new last post ([`AppendSteps::notify`]). A
    /// backend may write them all in one statement.
    async fn write_rows(
        &mut self,
        posts: &[(&Post, i64)],
        outcomes: &[&Outcome],
        keys: &[(&AppendRequest, i64)],
        heads: &[(Uuid, i64)],
    ) -> Result<()> {
        self.insert_posts(posts).instrument(step("insert_post")).await?;
        if !outcomes.is_empty() {
            self.insert_outcomes(outcomes).instrument(step("insert_outcome")).await?;
        }
        self.remember_keys(keys).instrument(step("remember_key")).await?;
        self.notify(heads).instrument(step("notify")).await
    }
    async fn commit(self) -> Result<()>;
    /// Ends the transaction with nothing of it written.
    async fn rollback(self) -> Result<()>;
}

/// Appends one post through `steps`, inside the batch's transaction, without committing it:
/// see the module's documentation.
pub async fn append_one<S: AppendSteps>(
    steps: &mut S,
    request: &AppendRequest,
    decide: Decide<'_>,
) -> Result<Appended> {
    let campaign_id = request.campaign_id;
    steps.lock_campaign(campaign_id).instrument(step("lock_campaign")).await?;

    if let Some(known) =
        steps.known_key(request.author_id, &request.idempotency_key).instrument(step("known_key")).await?
    {
        if known.request_hash != request.request_hash {
            return Err(StoreError::KeyReused);
        }
        let post = steps.post(known.campaign_id, known.seq).await?.ok_or_else(|| {
            StoreError::Database(format!(
                "idempotency key {:?} names post {}, which is missing",
                request.idempotency_key, known.seq
            ))
        })?;
        let outcomes = steps.outcomes_of_post(known.campaign_id, known.seq).await?;
        return Ok(Appended::Replayed(post, outcomes));
    }

    let stored = stored_counts(steps, std::iter::once(request)).instrument(step("quota")).await?;
    if let Some(spent) = spent_quota(request, &[], &stored)? {
        return Err(StoreError::QuotaSpent(spent));
    }
    let tail = tail(steps, campaign_id).instrument(step("tail")).await?;
    let decision = step("decide").in_scope(|| decide(&tail)).map_err(|Declined| StoreError::Declined)?;
    let mut post = decision.post;
    if let Some(sign) = decision.sign {
        step("sign").in_scope(|| post.receipt = Some(sign(&post)));
    }
    let outcomes_through = tail.next_position - 1 + decision.outcomes.len() as i64;
    steps.insert_post(campaign_id, &post, outcomes_through).instrument(step("insert_post")).await?;
    let mut outcomes = Vec::with_capacity(decision.outcomes.len());
    for (position, new) in (tail.next_position..).zip(decision.outcomes) {
        let outcome = Outcome { id: new.id, campaign_id, position, seq: post.seq, kind: new.kind, data: new.data };
        steps.insert_outcome(&outcome).instrument(step("insert_outcome")).await?;
        outcomes.push(outcome);
    }
    if !outcomes.is_empty() {
        // The outbox rows go with the outcomes, in the same transaction.
        let timestamp = post.stamp.to_rfc3339_opts(SecondsFormat::Millis, true);
        steps.enqueue_deliveries(campaign_id, post.seq, &timestamp).instrument(step("enqueue_deliveries")).await?;
    }
    if let Some(state) = &decision.snapshot {
        steps.insert_snapshot(campaign_id, post.seq, state).instrument(step("insert_snapshot")).await?;
    }
    steps.remember_key(request, post.seq).instrument(step("remember_key")).await?;
    Ok(Appended::New(post, outcomes))
}

/// A post waiting for its batch: what it asks, how it is decided, where its answer goes.
struct Waiting {
    request: AppendRequest,
    decide: SharedDecide,
    answer: Answer,
    /// Decided and signed ahead, while the batch before it committed, on the tail that batch
    /// was to leave: used if the tail read in its own transaction is that one.
    ahead: Option<Decided>,
}

/// A post decided on a tail: the post (signed once its `Sign` has run), its outcomes and the
/// state snapshot it leaves, if any.
type Written = (Post, Vec<Outcome>, Option<String>);

/// A post decided on a tail, or declined.
type Decided = std::result::Result<Written, Declined>;

/// Group commit: the posts waiting for the writer are appended in one transaction and answered
/// after its commit, so a batch of posts shares one durable write.
///
/// A post joins the queue, then waits for its answer or for the writer, whichever comes first.
/// Whoever gets the writer takes every post queued (at most `max_batch`) and writes them in
/// order: a post sees the tail the one before it left, and an idempotency key used twice in a
/// batch is answered from the first. A batch that cannot be written together (a key seen
/// before, a statement that failed) is rolled back and written again one post at a time, each
/// in a savepoint, so that a refused post or a database error rolls back only that post. Every
/// post is answered only once the commit is durable; a failed commit fails the batch's new
/// posts (503). A lone post is never held back: a batch is whatever queued while the writer was
/// busy.
///
/// While a batch commits, the writer takes the next one from the queue and decides and signs
/// its posts on the tails the committing batch leaves, or, for a campaign that batch did not
/// touch, on the tail an earlier batch left ([`KeptTails`]); the next transaction reads the
/// tails again (or, where it is the database's one writer, [`AppendSteps::alone`], holds those
/// committed batches left) and
/// keeps those decisions only for the campaigns whose tail is the one foreseen (a failed commit,
/// or another server's post, has every post of that campaign decided again).
pub struct GroupCommit {
    queue: Arc<std::sync::Mutex<Vec<Waiting>>>,
    kept: Arc<std::sync::Mutex<KeptTails>>,
    writer: Arc<tokio::sync::Mutex<()>>,
    max_batch: usize,
    largest: Arc<AtomicUsize>,
    one_by_one: Arc<AtomicUsize>,
    /// Told the size of each batch taken, once a server asks (`Store::observe_batches`).
    observer: Arc<std::sync::OnceLock<BatchObserver>>,
    /// Batches are written on a thread of their own ([`GroupCommit::on_own_thread`]).
    own_thread: bool,
}

/// What is told the number of posts of each batch the writer takes (the server's metrics).
pub type BatchObserver = Arc<dyn Fn(usize) + Send + Sync>;

impl GroupCommit {
    pub fn new(max_batch: usize) -> Self {
        Self {
            queue: Arc::default(),
            kept: Arc::default(),
            writer: Arc::default(),
            max_batch: max_batch.max(1),
            largest: Arc::default(),
            one_by_one: Arc::default(),
            observer: Arc::default(),
            own_thread: false,
        }
    }

    /// Writes the batches on the batch writer's thread ([`writer_thread`]) rather than as a task
    /// among the requests. A backend may run its statements on that thread itself, blocking it
    /// (SQLite's store does, on its writer connection's locked handle, its commit's sync
    /// included): what waits meanwhile is the batches of the process's other stores so marked,
    /// which share the thread, and nothing of the requests'. Where each of a batch's statements is
    /// instead a round trip to a thread that runs the database's calls, the answer of each wakes
    /// the batch from outside the runtime:
    /// among the requests, the batch then waits for a worker to look at the runtime's shared
    /// queue, which a busy worker does between its own tasks (tokio tunes it to about every
    /// 200 µs of polling; every other task when tasks are long), before its next statement, and
    /// the posts of every campaign wait with it. On the writer's thread only the batches of the
    /// process's other stores so marked (and their deciding) are beside it. For a backend whose
    /// statements are run by a thread of the database's own (SQLite's): a socket's readiness is
    /// told to the runtime that opened it, so PostgreSQL's connections stay with the requests'
    /// runtime.
    pub fn on_own_thread(mut self) -> Self {
        self.own_thread = true;
        self
    }

    /// Tells `observer` the size of every batch from now on (the first observer stays).
    pub fn observe(&self, observer: BatchObserver) {
        let _ = self.observer.set(observer);
    }

    /// The most posts one commit has carried so far.
    pub fn largest_batch(&self) -> usize {
        self.largest.load(Ordering::Relaxed)
    }

    /// How many batches were written one by one (a key seen before or twice, or a statement
    /// that failed) rather than together.
    pub fn batches_one_by_one(&self) -> usize {
        self.one_by_one.load(Ordering::Relaxed)
    }

    /// Appends a post in the next batch. `begin` opens a batch's transaction.
    pub async fn append<S, B, F>(&self, request: AppendRequest, decide: SharedDecide, begin: B) -> Result<Appended>
    where
        S: AppendSteps + 'static,
        B: Fn() -> F + Send + Sync + 'static,
        F: std::future::Future<Output = Result<S>> + Send + 'static,
    {
        let (answer, mut answered) = tokio::sync::oneshot::channel();
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).push(Waiting { request, decide, answer, ahead: None });
        let lost = || StoreError::Unavailable("the batch writing this post stopped; it was not stored".into());
        let begin = Arc::new(begin);
        loop {
            tokio::select! {
                biased;
                result = &mut answered => return result.unwrap_or_else(|_| Err(lost())),
                writer = self.writer.clone().lock_owned() => {
                    let batch = take(&self.queue, self.max_batch, Vec::new());
                    if batch.is_empty() {
                        // Another writer took this post: its answer is on the way.
                        drop(writer);
                        return (&mut answered).await.unwrap_or_else(|_| Err(lost()));
                    }
                    let begin = begin.clone();
                    let writing = Writing {
                        queue: self.queue.clone(),
                        kept: self.kept.clone(),
                        max_batch: self.max_batch,
                        largest: self.largest.clone(),
                        one_by_one: self.one_by_one.clone(),
                        observer: self.observer.clone(),
                    };
                    // On a task of its own, so a caller going away never cuts a batch short; it
                    // goes on with the batches queued meanwhile, and lets the writer go when the
                    // queue is empty. The batches' steps are logged under the post whose task
                    // took the writer.
                    let writing = async move {
                        writing.write_while_queued(move || begin(), batch).await;
                        drop(writer);
                    }
                    .in_current_span();
                    if self.own_thread {
                        writer_thread().spawn(writing);
                    } else {
                        tokio::spawn(writing);
                    }
                }
            }
        }
    }
}

/// The thread that writes the batches of every store [`GroupCommit::on_own_thread`] in this
/// process: a runtime of one worker (its blocking threads, which decide batches ahead, are
/// named after it too), started when first asked for and kept for the life of the process. A
/// batch under way when its server stops is written to its end there: its posts' callers may be
/// gone, as when a caller goes away (see [`GroupCommit::append`]).
fn writer_thread() -> &'static tokio::runtime::Runtime {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("adjutant-writer")
            .enable_all()
            .build()
            // Only when the machine has no thread or timer left to give: nothing could serve.
            .unwrap_or_else(|e| panic!("the batch writer's thread could not start: {e}"))
    })
}

/// Takes up to `max_batch` posts from the queue, after the `taken` ones.
fn take(queue: &std::sync::Mutex<Vec<Waiting>>, max_batch: usize, mut taken: Vec<Waiting>) -> Vec<Waiting> {
    let mut queue = queue.lock().unwrap_or_else(|e| e.into_inner());
    let n = queue.len().min(max_batch.saturating_sub(taken.len()));
    taken.extend(queue.drain(..n));
    taken
}

/// The writer's side of a [`GroupCommit`], moved into the task that holds the writer.
struct Writing {
    queue: Arc<std::sync::Mutex<Vec<Waiting>>>,
    kept: Arc<std::sync::Mutex<KeptTails>>,
    max_batch: usize,
    largest: Arc<AtomicUsize>,
    one_by_one: Arc<AtomicUsize>,
    observer: Arc<std::sync::OnceLock<BatchObserver>>,
}

impl Writing {
    fn lock_kept(&self) -> std::sync::MutexGuard<'_, KeptTails> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes `batch`, then each batch queued meanwhile, until the queue is empty.
    async fn write_while_queued<S, B, F>(&self, begin: B, first: Vec<Waiting>)
    where
        S: AppendSteps + 'static,
        B: Fn() -> F,
        F: std::future::Future<Output = Result<S>> + Send + 'static,
    {
        let (mut batch, mut foreseen) = (first, HashMap::new());
        while !batch.is_empty() {
            self.largest.fetch_max(batch.len(), Ordering::Relaxed);
            if let Some(observer) = self.observer.get() {
                observer(batch.len());
            }
            let (together, next) = write_batch(&begin, batch, foreseen, self).await;
            if !together {
                self.one_by_one.fetch_add(1, Ordering::Relaxed);
            }
            // The posts that queued while the batch committed join the ones decided ahead.
            let (next, next_foreseen) = next;
            batch = take(&self.queue, self.max_batch, next);
            foreseen = next_foreseen;
        }
    }
}

type Answer = tokio::sync::oneshot::Sender<Result<Appended>>;

/// The next batch, taken as the one before it committed, with the tail each campaign decided
/// ahead was foreseen to have.
type Next = (Vec<Waiting>, HashMap<Uuid, Tail>);

/// Writes and answers a batch, and takes the next while it commits; the first part is false
/// when the batch went one by one. A batch that cannot be written together is rolled back and
/// written one by one in a transaction `begin` opens anew.
async fn write_batch<S: AppendSteps, F: std::future::Future<Output = Result<S>>>(
    begin: impl Fn() -> F,
    mut batch: Vec<Waiting>,
    foreseen: HashMap<Uuid, Tail>,
    writing: &Writing,
) -> (bool, Next) {
    let nothing_next = || (Vec::new(), HashMap::new());
    let fail = |batch: Vec<Waiting>, e: &StoreError| {
        for waiting in batch {
            let _ = waiting.answer.send(Err(e.clone()));
        }
    };
    let mut steps = match begin().instrument(step("begin")).await {
        Ok(steps) => steps,
        Err(e) => {
            fail(batch, &e);
            return (true, nothing_next());
        }
    };
    // The tails committed batches left, where they stand for the stored ones; where another
    // writer committed meanwhile, none kept until now does.
    let held = {
        let mut kept = writing.lock_kept();
        if steps.alone() {
            kept.held(&batch)
        } else {
            kept.distrust();
            HashMap::new()
        }
    };
    // Together when it can be, one by one when it cannot: either way, the same answers.
    let together = match write_together(&mut steps, &mut batch, &foreseen, held).await {
        Ok(Some(written)) => Some(written),
        Ok(None) => None,
        Err(e) => {
            tracing::warn!(error = %e, posts = batch.len(), "a batch could not be written together; one by one instead");
            None
        }
    };
    let written_together = together.is_some();
    let (done, broken, left) = match together {
        Some((results, left)) => (batch.into_iter().map(|waiting| waiting.answer).zip(results).collect(), None, left),
        None => {
            let opened = match steps.rollback().await {
                Ok(()) => begin().instrument(step("begin")).await,
                Err(e) => Err(e),
            };
            steps = match opened {
                Ok(steps) => steps,
                Err(e) => {
                    // Nothing of this batch is written.
                    fail(batch, &e);
                    return (false, nothing_next());
                }
            };
            // Written one by one, the batch leaves no tails to keep, and those kept for its
            // campaigns may be out of date (a tail held that another writer had moved on). The
            // write lock was let go between the two transactions: another writer may have
            // committed then, unseen by the next batch's check, so no tail kept until now is held.
            {
                let mut kept = writing.lock_kept();
                kept.forget(batch.iter().map(|waiting| &waiting.request.campaign_id));
                kept.distrust();
            }
            let (done, broken) = one_by_one(&mut steps, batch).await;
            (done, broken, HashMap::new())
        }
    };
    let told = match (&broken, written_together) {
        (Some(e), _) => Err(e.clone()),
        // Written together, the batch's rows told of its posts already.
        (None, true) => Ok(()),
        (None, false) => steps.notify(&heads(&done)).instrument(step("notify")).await,
    };
    let (committed, next) = match told {
        Err(e) => (Err(e), nothing_next()),
        Ok(()) => {
            // The next batch is decided ahead while this one commits, off this task: on the
            // tails this batch leaves, or those earlier batches left.
            let next = take(&writing.queue, writing.max_batch, Vec::new());
            let tails = writing.lock_kept().tails_for(&next, &left, None);
            let committed = if tails.is_empty() {
                (steps.commit().instrument(step("commit")).await, (next, HashMap::new()))
            } else {
                let ahead = tokio::task::spawn_blocking(move || decide_ahead(next, tails));
                let committed = steps.commit().instrument(step("commit")).await;
                (committed, ahead.await.unwrap_or_else(|_| nothing_next()))
            };
            let mut kept = writing.lock_kept();
            match committed.0 {
                Ok(()) => kept.keep(left),
                Err(_) => kept.forget(left.keys()),
            }
            committed
        }
    };
    for (answer, result) in done {
        let result = match (&committed, result) {
            (Ok(()), result) => result,
            // A post written in a batch that did not commit is not stored.
            (Err(e), Ok(Appended::New(..))) => Err(StoreError::Unavailable(format!("the commit failed: {e}"))),
            (Err(_), other) => other,
        };
        let _ = answer.send(result);
    }
    (written_together, next)
}

/// How long a tail a batch left is kept to decide a later batch's posts ahead on (and, where
/// the writer holds its tails, to stand for the stored one): where the tail is read again in
/// that batch's transaction, this bounds only the work done in vain where another server posted
/// to the campaign meanwhile.
const TAIL_KEPT: std::time::Duration = std::time::Duration::from_secs(2);

/// At most this many bytes of tails are kept (the hashes and the state snapshots); past it the
/// oldest half goes.
const KEPT_TAIL_BYTES: usize = 8 << 20;

/// The tails recent batches left, by campaign, for deciding ahead the posts of a campaign the
/// committing batch did not touch. A batch spread over many campaigns is then decided and
/// signed while the batch before it commits, not inside its own transaction.
#[derive(Default)]
struct KeptTails {
    tails: HashMap<Uuid, (Tail, std::time::Instant)>,
    bytes: usize,
    /// When a batch last found that another writer had committed: no tail kept before then is
    /// held ([`AppendSteps::alone`]), though it may still be decided ahead on.
    not_held_before: Option<std::time::Instant>,
}

impl KeptTails {
    fn size(tail: &Tail) -> usize {
        std::mem::size_of::<(Uuid, Tail)>()
            + tail.prev_hash.as_ref().map_or(0, String::len)
            + tail.snapshot.as_ref().map_or(0, |(_, state)| state.len())
    }

    /// The tail each campaign of `next` is foreseen to have: the one `left` by the committing
    /// batch, else one kept recently enough, since `since` where that is given.
    fn tails_for(
        &self,
        next: &[Waiting],
        left: &HashMap<Uuid, Tail>,
        since: Option<std::time::Instant>,
    ) -> HashMap<Uuid, Tail> {
        let mut tails = HashMap::new();
        for waiting in next {
            let campaign_id = waiting.request.campaign_id;
            if tails.contains_key(&campaign_id) {
                continue;
            }
            let tail = left.get(&campaign_id).or_else(|| {
                self.tails
                    .get(&campaign_id)
                    .filter(|(_, at)| at.elapsed() < TAIL_KEPT && since.is_none_or(|since| *at > since))
                    .map(|(tail, _)| tail)
            });
            if let Some(tail) = tail {
                tails.insert(campaign_id, tail.clone());
            }
        }
        tails
    }

    /// The tails of `batch`'s campaigns that stand for the stored ones where this writer is
    /// alone: kept recently enough, and since another writer may last have committed.
    fn held(&self, batch: &[Waiting]) -> HashMap<Uuid, Tail> {
        self.tails_for(batch, &HashMap::new(), self.not_held_before)
    }

    /// Another writer may have committed: no tail kept until now is held.
    fn distrust(&mut self) {
        self.not_held_before = Some(std::time::Instant::now());
    }

    /// Keeps the tails a committed batch left.
    fn keep(&mut self, left: HashMap<Uuid, Tail>) {
        let now = std::time::Instant::now();
        for (campaign_id, tail) in left {
            self.bytes += Self::size(&tail);
            if let Some((old, _)) = self.tails.insert(campaign_id, (tail, now)) {
                self.bytes -= Self::size(&old);
            }
        }
        if self.bytes > KEPT_TAIL_BYTES {
            let mut ages: Vec<std::time::Instant> = self.tails.values().map(|(_, at)| *at).collect();
            ages.sort_unstable();
            let cut = ages[ages.len() / 2];
            self.tails.retain(|_, (_, at)| *at > cut);
            self.bytes = self.tails.values().map(|(tail, _)| Self::size(tail)).sum();
        }
    }

    fn forget<'a>(&mut self, campaigns: impl IntoIterator<Item = &'a Uuid>) {
        for campaign_id in campaigns {
            if let Some((old, _)) = self.tails.remove(campaign_id) {
                self.bytes -= Self::size(&old);
            }
        }
    }
}

/// Decides and signs ahead the posts of `next` whose campaign's tail is foreseen (`left`: the
/// one the committing batch leaves, or one an earlier batch left), on that tail. Quotas are not counted here: the transaction that writes a
/// post decided ahead counts them, and one it refuses sends its campaign's later posts back to
/// be decided again. The second part is the tail foreseen for each campaign decided ahead.
fn decide_ahead(mut next: Vec<Waiting>, left: HashMap<Uuid, Tail>) -> Next {
    let mut tails: HashMap<Uuid, Tail> = left
        .into_iter()
        .filter(|(campaign_id, _)| next.iter().any(|w| w.request.campaign_id == *campaign_id))
        .collect();
    let foreseen = tails.clone();
    let mut signers = Vec::with_capacity(next.len());
    for waiting in &mut next {
        let Some(tail) = tails.get_mut(&waiting.request.campaign_id) else {
            signers.push(None);
            continue;
        };
        let (decided, sign) = match decide_on(&waiting.decide, waiting.request.campaign_id, tail) {
            Ok((decided, sign)) => (Ok(decided), sign),
            Err(Declined) => (Err(Declined), None),
        };
        waiting.ahead = Some(decided);
        signers.push(sign);
    }
    let unsigned = next.iter_mut().zip(signers).filter_map(|(waiting, sign)| match (&mut waiting.ahead, sign) {
        (Some(Ok((post, _, _))), Some(sign)) => Some((post, sign)),
        _ => None,
    });
    step("sign").in_scope(|| sign_all(unsigned.collect()));
    (next, foreseen)
}

/// Decides a post on its campaign's tail and moves the tail on past it: the post (unsigned),
/// its outcomes and snapshot, and what signs it.
fn decide_on(
    decide: &SharedDecide,
    campaign_id: Uuid,
    tail: &mut Tail,
) -> std::result::Result<(Written, Option<Sign>), Declined> {
    let decision = step("decide").in_scope(|| decide(tail))?;
    let post = decision.post;
    let outcomes: Vec<Outcome> = (tail.next_position..)
        .zip(decision.outcomes)
        .map(|(position, new)| Outcome {
            id: new.id,
            campaign_id,
            position,
            seq: post.seq,
            kind: new.kind,
            data: new.data,
        })
        .collect();
    // The tail this post leaves, for the next post of its campaign.
    tail.next_seq = post.seq + 1;
    tail.prev_hash = Some(post.hash.clone());
    tail.prev_stamp = Some(post.stamp);
    tail.next_position += outcomes.len() as i64;
    if let Some(state) = &decision.snapshot {
        tail.snapshot = Some((post.seq, state.clone()));
    }
    Ok(((post, outcomes, decision.snapshot), decision.sign))
}

/// Each campaign's last new post of a batch: (campaign, sequence number), in campaign order.
fn heads(done: &[(Answer, Result<Appended>)]) -> Vec<(Uuid, i64)> {
    let mut heads = std::collections::BTreeMap::new();
    for (_, result) in done {
        if let Ok(Appended::New(post, _)) = result {
            let head = heads.entry(post.campaign_id).or_insert(post.seq);
            *head = (*head).max(post.seq);
        }
    }
    heads.into_iter().collect()
}

/// A batch written together: each post's result, and the tail each campaign is left with.
type Together = (Vec<Result<Appended>>, HashMap<Uuid, Tail>);

/// Writes a batch's posts together: every key checked in one statement, each campaign's tail
/// read once (or taken from `held`, the tails committed batches left, where they stand for the
/// stored ones: [`AppendSteps::alone`]), every post decided on the tail the post before
/// it left (or taken as decided ahead, when its campaign's tail is the one `foreseen`), then
/// each table's rows in one statement. `None` when the batch must go one by one because a key
/// was used before or twice in it (its posts are answered from the first); an error when a
/// statement failed (the caller rolls the batch back and goes one by one, so that the error
/// fails only the posts it touched).
async fn write_together<S: AppendSteps>(
    steps: &mut S,
    batch: &mut [Waiting],
    foreseen: &HashMap<Uuid, Tail>,
    mut held: HashMap<Uuid, Tail>,
) -> Result<Option<Together>> {
    // Each campaign held in one order, whoever writes, so that replicas never wait on each other
    // in a circle.
    let mut campaigns: Vec<Uuid> = batch.iter().map(|waiting| waiting.request.campaign_id).collect();
    campaigns.sort_unstable();
    campaigns.dedup();
    steps.lock_campaigns(&campaigns).instrument(step("lock_campaign")).await?;

    let keys: Vec<(Uuid, &str)> =
        batch.iter().map(|waiting| (waiting.request.author_id, waiting.request.idempotency_key.as_str())).collect();
    let distinct: HashSet<&(Uuid, &str)> = keys.iter().collect();
    if distinct.len() < keys.len() {
        return Ok(None);
    }
    let (holding, reading): (Vec<Uuid>, Vec<Uuid>) =
        campaigns.iter().partition(|campaign_id| held.contains_key(campaign_id));
    let mut tails = HashMap::with_capacity(campaigns.len());
    let mut webhooks = HashSet::new();
    // The keys are asked with the first question of the two, in its statement.
    let mut keys_left = keys.as_slice();
    if !reading.is_empty() {
        let Some(read) = steps.tails_unless_known(&reading, keys_left).await? else {
            return Ok(None);
        };
        keys_left = &[];
        for (campaign_id, tail, has_webhooks) in read {
            tails.insert(campaign_id, tail);
            if has_webhooks {
                webhooks.insert(campaign_id);
            }
        }
    }
    if !holding.is_empty() {
        let Some(hooked) = steps.webhooks_unless_known(&holding, keys_left).instrument(step("tail")).await? else {
            return Ok(None);
        };
        webhooks.extend(hooked);
        tails.extend(holding.iter().filter_map(|campaign_id| held.remove_entry(campaign_id)));
    }
    // The campaigns whose posts decided ahead stand: their tail is the one foreseen.
    let mut as_foreseen: HashSet<Uuid> = tails
        .iter()
        .filter(|(campaign_id, tail)| foreseen.get(*campaign_id) == Some(*tail))
        .map(|(campaign_id, _)| *campaign_id)
        .collect();

    // Every quota's stored count for the whole batch, read at once.
    let stored = stored_counts(steps, batch.iter().map(|waiting| &waiting.request)).instrument(step("quota")).await?;

    let mut results = Vec::with_capacity(batch.len());
    let mut signers = Vec::with_capacity(batch.len());
    let mut snapshots = Vec::new();
    // Each post written's `outcomes_through`, in the order of the posts written.
    let mut throughs = Vec::with_capacity(batch.len());
    // The batch's posts so far, which its later posts' quotas count with the stored ones.
    let mut earlier: Vec<(Uuid, Uuid, String, DateTime<Utc>)> = Vec::new();
    for waiting in batch.iter_mut() {
        let campaign_id = waiting.request.campaign_id;
        let ahead = waiting.ahead.take().filter(|_| as_foreseen.contains(&campaign_id));
        if let Some(spent) = spent_quota(&waiting.request, &earlier, &stored)? {
            // Its campaign's later posts were decided ahead on the tail this one would have
            // left: they are decided again, on the tail as it stands.
            if ahead.is_some() {
                as_foreseen.remove(&campaign_id);
            }
            results.push(Err(StoreError::QuotaSpent(spent)));
            signers.push(None);
            continue;
        }
        let Some(tail) = tails.get_mut(&campaign_id) else {
            return Err(StoreError::Database(format!("no tail was read for campaign {campaign_id}")));
        };
        let (decided, sign) = match ahead {
            Some(Ok(decided)) => {
                // Signed ahead already; the tail moves on past it as it did then.
                let (post, outcomes, snapshot) = &decided;
                tail.next_seq = post.seq + 1;
                tail.prev_hash = Some(post.hash.clone());
                tail.prev_stamp = Some(post.stamp);
                tail.next_position += outcomes.len() as i64;
                if let Some(state) = snapshot {
                    tail.snapshot = Some((post.seq, state.clone()));
                }
                (decided, None)
            }
            Some(Err(Declined)) => {
                results.push(Err(StoreError::Declined));
                signers.push(None);
                continue;
            }
            None => match decide_on(&waiting.decide, campaign_id, tail) {
                Ok(decided) => decided,
                Err(Declined) => {
                    results.push(Err(StoreError::Declined));
                    signers.push(None);
                    continue;
                }
            },
        };
        let (post, outcomes, snapshot) = decided;
        // The tail has moved on past the post's outcomes.
        throughs.push(tail.next_position - 1);
        signers.push(sign);
        if !waiting.request.quotas.is_empty() {
            earlier.push((campaign_id, waiting.request.author_id, post.kind.clone(), post.stamp));
        }
        if let Some(state) = snapshot {
            snapshots.push((campaign_id, post.seq, state));
        }
        results.push(Ok(Appended::New(post, outcomes)));
    }
    let unsigned = results.iter_mut().zip(signers).filter_map(|(result, sign)| match (result, sign) {
        (Ok(Appended::New(post, _)), Some(sign)) => Some((post, sign)),
        _ => None,
    });
    step("sign").in_scope(|| sign_all(unsigned.collect()));

    let written: Vec<(&AppendRequest, &Post, &[Outcome])> = batch
        .iter()
        .zip(&results)
        .filter_map(|(waiting, result)| match result {
            Ok(Appended::New(post, outcomes)) => Some((&waiting.request, post, outcomes.as_slice())),
            _ => None,
        })
        .collect();
    // A tail held is confirmed only by a post written on it (a stale one's sequence number is
    // taken, and the insert fails): one whose campaign had every post refused is not kept again
    // as new, so that it ages out rather than standing on.
    let confirmed: HashSet<Uuid> = written.iter().map(|(_, post, _)| post.campaign_id).collect();
    tails.retain(|campaign_id, _| !holding.contains(campaign_id) || confirmed.contains(campaign_id));
    if written.is_empty() {
        return Ok(Some((results, tails)));
    }
    let posts: Vec<(&Post, i64)> = written.iter().map(|&(_, post, _)| post).zip(throughs).collect();
    let outcomes: Vec<&Outcome> = written.iter().flat_map(|&(_, _, outcomes)| outcomes).collect();
    let remembered: Vec<(&AppendRequest, i64)> =
        written.iter().map(|&(request, post, _)| (request, post.seq)).collect();
    let mut heads: Vec<(Uuid, i64)> = Vec::new();
    for (post, _) in &posts {
        match heads.iter_mut().find(|(campaign_id, _)| *campaign_id == post.campaign_id) {
            Some((_, seq)) => *seq = (*seq).max(post.seq),
            None => heads.push((post.campaign_id, post.seq)),
        }
    }
    heads.sort_unstable();
    steps.write_rows(&posts, &outcomes, &remembered, &heads).await?;
    for &(_, post, outcomes) in &written {
        if !outcomes.is_empty() && webhooks.contains(&post.campaign_id) {
            // The outbox rows go with the outcomes, in the same transaction.
            let timestamp = post.stamp.to_rfc3339_opts(SecondsFormat::Millis, true);
            steps
                .enqueue_deliveries(post.campaign_id, post.seq, &timestamp)
                .instrument(step("enqueue_deliveries"))
                .await?;
        }
    }
    for (campaign_id, seq, state) in &snapshots {
        steps.insert_snapshot(*campaign_id, *seq, state).instrument(step("insert_snapshot")).await?;
    }
    Ok(Some((results, tails)))
}

/// Fewer posts than this to each thread are signed on the batch's own thread: a thread costs
/// about what a signature does.
const SIGNATURES_PER_THREAD: usize = 8;

/// Signs a batch's posts, on every core: a receipt (an Ed25519 signature) is the costliest step
/// of deciding a post, and each post's depends on that post alone.
fn sign_all(mut unsigned: Vec<(&mut Post, Sign)>) {
    fn sign_each(unsigned: &mut [(&mut Post, Sign)]) {
        for (post, sign) in unsigned {
            post.receipt = Some(sign(post));
        }
    }
    // Asked once: the answer comes from reading the process's cgroup files, each time.
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get));
    let threads = cores.min(unsigned.len() / SIGNATURES_PER_THREAD).max(1);
    if threads == 1 {
        return sign_each(&mut unsigned);
    }
    let per_thread = unsigned.len().div_ceil(threads);
    let mut chunks = unsigned.chunks_mut(per_thread);
    let here = chunks.next();
    std::thread::scope(|scope| {
        for chunk in chunks {
            scope.spawn(|| sign_each(chunk));
        }
        if let Some(chunk) = here {
            sign_each(chunk);
        }
    });
}

/// Writes a batch's posts one by one, each in a savepoint: a refused post, a known key or a
/// database error rolls back only that post. The second part is the error that stopped the
/// transaction, if one did (the posts after it are answered with it already).
async fn one_by_one<S: AppendSteps>(
    steps: &mut S,
    batch: Vec<Waiting>,
) -> (Vec<(Answer, Result<Appended>)>, Option<StoreError>) {
    let mut done = Vec::with_capacity(batch.len());
    let mut broken: Option<StoreError> = None;
    for waiting in batch {
        if let Some(e) = &broken {
            let _ = waiting.answer.send(Err(e.clone()));
            continue;
        }
        let result = match steps.savepoint().await {
            Ok(()) => append_one(steps, &waiting.request, &*waiting.decide).await,
            Err(e) => Err(e),
        };
        let settled = match &result {
            Ok(Appended::New(..)) => steps.release().await,
            _ => steps.rollback_to_savepoint().await,
        };
        if let Err(e) = settled {
            // The transaction cannot go on: nothing of this batch is written.
            broken = Some(e.clone());
            let _ = waiting.answer.send(Err(e));
            continue;
        }
        done.push((waiting.answer, result));
    }
    (done, broken)
}

/// A step of the append, as a span: with `ADJUTANT_LOG_SPANS=close` and the target
/// `adjutant::post` at debug, each span's time is logged when it closes (the benchmark's
/// breakdown of a post's time); otherwise the span costs next to nothing.
pub fn step(name: &'static str) -> tracing::Span {
    tracing::debug_span!(target: "adjutant::post", "step", name)
}

/// The stored count of every quota of `requests`, each read once, all in one statement where
/// the backend can: read inside the write transaction, after the campaigns are held, so no other
/// post of theirs lands between the count and the commit.
async fn stored_counts<'a, S: AppendSteps>(
    steps: &mut S,
    requests: impl Iterator<Item = &'a AppendRequest>,
) -> Result<HashMap<QuotaCount, i64>> {
    let mut asks: Vec<QuotaCount> = requests
        .flat_map(|request| {
            request.quotas.iter().map(|quota| QuotaCount {
                campaign_id: request.campaign_id,
                author_id: request.author_id,
                kind: quota.kind.clone(),
                since: quota.since,
            })
        })
        .collect();
    if asks.is_empty() {
        return Ok(HashMap::new());
    }
    asks.sort_unstable();
    asks.dedup();
    let counts = steps.count_posts_by_authors(&asks).await?;
    if counts.len() != asks.len() {
        return Err(StoreError::Database(format!("{} quota counts asked, {} read", asks.len(), counts.len())));
    }
    Ok(asks.into_iter().zip(counts).collect())
}

/// The index of the first of the request's quotas that this post would go past, counting the
/// author's stored posts (`stored`, from [`stored_counts`]) and the posts of the same batch
/// written before it (`earlier`: campaign, author, kind, stamp; only those stamped since the
/// quota's start count, as only those stored do).
fn spent_quota(
    request: &AppendRequest,
    earlier: &[(Uuid, Uuid, String, DateTime<Utc>)],
    stored: &HashMap<QuotaCount, i64>,
) -> Result<Option<usize>> {
    for (index, Quota { kind, since, limit }) in request.quotas.iter().enumerate() {
        let in_batch = earlier
            .iter()
            .filter(|(campaign, author, made, stamp)| {
                *campaign == request.campaign_id
                    && *author == request.author_id
                    && kind.as_ref().is_none_or(|kind| kind == made)
                    && stamp >= since
            })
            .count() as i64;
        let asked = QuotaCount {
            campaign_id: request.campaign_id,
            author_id: request.author_id,
            kind: kind.clone(),
            since: *since,
        };
        let Some(stored) = stored.get(&asked) else {
            return Err(StoreError::Database(format!("no stored count was read for quota {index}")));
        };
        if stored + in_batch >= *limit {
            return Ok(Some(index));
        }
    }
    Ok(None)
}

/// [`AppendSteps::tails_unless_known`] as two questions, one after the other: the keys, then
/// the tails. A backend that asks both at once falls back on this where it cannot.
pub async fn keys_then_tails<S: AppendSteps>(
    steps: &mut S,
    campaign_ids: &[Uuid],
    keys: &[(Uuid, &str)],
) -> Result<Option<Vec<(Uuid, Tail, bool)>>> {
    if steps.any_known_key(keys).instrument(step("known_key")).await? {
        return Ok(None);
    }
    steps.tails(campaign_ids).instrument(step("tail")).await.map(Some)
}

/// [`AppendSteps::webhooks_unless_known`] as questions one after the other: the keys, then each
/// campaign's webhooks. A backend that asks them at once falls back on this where it cannot.
pub async fn keys_then_webhooks<S: AppendSteps>(
    steps: &mut S,
    campaign_ids: &[Uuid],
    keys: &[(Uuid, &str)],
) -> Result<Option<HashSet<Uuid>>> {
    if steps.any_known_key(keys).instrument(step("known_key")).await? {
        return Ok(None);
    }
    let mut hooked = HashSet::new();
    for &campaign_id in campaign_ids {
        if steps.has_webhooks(campaign_id).await? {
            hooked.insert(campaign_id);
        }
    }
    Ok(Some(hooked))
}

/// A campaign's tail, read in three steps.
pub async fn tail<S: AppendSteps>(steps: &mut S, campaign_id: Uuid) -> Result<Tail> {
    let last = steps.last_post(campaign_id).await?;
    // Only a snapshot of a post that exists: a stray row beyond the log's end is never the state.
    let last_seq = last.as_ref().map_or(0, |p| p.seq);
    let snapshot = steps.snapshot_at(campaign_id, last_seq).await?;
    let next_position = steps.last_position(campaign_id).await? + 1;
    Ok(Tail {
        next_seq: last_seq + 1,
        prev_hash: last.as_ref().map(|p| p.hash.clone()),
        prev_stamp: last.as_ref().map(|p| p.stamp),
        snapshot,
        next_position,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(campaign_id: Uuid) -> Waiting {
        Waiting {
            request: AppendRequest {
                campaign_id,
                author_id: Uuid::nil(),
                idempotency_key: "k".into(),
                request_hash: "h".into(),
                quotas: Vec::new(),
            },
            decide: Arc::new(|_| unreachable!("not decided here")),
            answer: tokio::sync::oneshot::channel().0,
            ahead: None,
        }
    }

    fn tail(next_seq: i64) -> Tail {
        Tail { next_seq, prev_hash: Some(format!("h{next_seq}")), prev_stamp: None, snapshot: None, next_position: 1 }
    }

    /// A kept tail stands for the stored one (is held) only if kept after the writer last
    /// distrusted its tails; deciding ahead takes it either way, and the committing batch's
    /// tail before it.
    #[test]
    fn a_tail_kept_before_a_distrust_is_not_held_but_still_foreseen() {
        let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let batch = [waiting(a), waiting(b), waiting(a), waiting(c)];
        let mut kept = KeptTails::default();
        kept.keep(HashMap::from([(a, tail(5))]));
        assert_eq!(kept.held(&batch), HashMap::from([(a, tail(5))]));
        kept.distrust();
        assert!(kept.held(&batch).is_empty());
        // Deciding ahead: the committing batch's tail first, then the kept ones, distrusted or not.
        let left = HashMap::from([(a, tail(7)), (b, tail(2))]);
        assert_eq!(kept.tails_for(&batch, &left, None), left);
        assert_eq!(kept.tails_for(&batch[3..], &left, None), HashMap::new());
        assert_eq!(kept.tails_for(&batch, &HashMap::new(), None), HashMap::from([(a, tail(5))]));
        // Kept again after the distrust: held.
        std::thread::sleep(std::time::Duration::from_millis(2));
        kept.keep(HashMap::from([(b, tail(3))]));
        assert_eq!(kept.held(&batch), HashMap::from([(b, tail(3))]));
        // Forgotten: neither held nor foreseen.
        kept.forget([&b]);
        assert!(kept.held(&batch).is_empty());
        assert_eq!(kept.tails_for(&batch[1..2], &HashMap::new(), None), HashMap::new());
        assert_eq!(kept.bytes, KeptTails::size(&tail(5)));
    }
}
