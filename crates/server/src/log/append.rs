//! The append: a post is stamped, chained, signed and decided by the store's writer on its
//! campaign's tail, and written with its outcomes in a transaction that finds that tail, or not
//! at all.

use std::sync::{Arc, Mutex};

use adjutant_rules::Side;
use adjutant_store::append::step;
use adjutant_store::{
    AppendRequest, Appended, Decision, Declined, Post, Principal, PrincipalKind, Quota, SharedDecide, Sign, Store,
    StoreError, Tail,
};
use chrono::{DateTime, Utc};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tracing::Instrument;

use super::chain::link_hash;
use super::decide::decide;
use super::error::{FieldPath, LogError, LogResult, PostRefusal, RefusalKind};
use super::kinds::PostKind;
use super::read::ReadContext;
use crate::campaign::LoadedCampaign;
use crate::clock::ServerClock;
use crate::signing::Keyring;

/// How many times a post whose context went stale is decided again before the author is told
/// to retry.
const ATTEMPTS: u32 = 16;

/// A player's daily quotas per campaign (0: no limit; moderators have none), and the most
/// posts a campaign's log holds (0: no limit).
#[derive(Debug, Clone, Copy, Default)]
pub struct Quotas {
    pub notes_per_day: u32,
    pub seals_per_day: u32,
    pub posts_per_day: u32,
    pub max_posts_per_campaign: u64,
}

/// What the log needs to take posts.
pub struct Log<'a> {
    pub store: &'a dyn Store,
    /// Shared with the store's writer, which stamps and signs a post in its batch.
    pub clock: Arc<dyn ServerClock>,
    pub keys: Arc<Keyring>,
    pub quotas: Quotas,
    pub metrics: crate::monitoring::Metrics,
    /// Told of each post once it is committed, to wake the campaign's followers.
    pub live: Option<&'a crate::live::Live>,
}

/// A post as its author asks for it.
pub struct Submission<'a> {
    pub author: &'a Principal,
    /// The side the author plays (a player), or none (the moderator, as umpire).
    pub side: Option<Side>,
    pub kind: &'a str,
    /// The body as sent (a JSON object).
    pub body: &'a Value,
    /// The author's key for this post: the same key and post give back the post stored.
    pub idempotency_key: String,
}

impl Submission<'_> {
    /// The post's shape, before anything is read: a kind that is a word, a body that is an
    /// object whose every string is one line.
    pub fn check(&self) -> LogResult<()> {
        if !PostKind::well_formed(self.kind) {
            return Err(PostRefusal::invalid(
                FieldPath::post("kind"),
                "post.kind",
                "a post kind is a lower-case word such as `move` or `attack`",
            )
            .into());
        }
        if !self.body.is_object() {
            return Err(PostRefusal::invalid(FieldPath::post("body"), "post.body", "the body is a JSON object").into());
        }
        if let Some(path) = crate::free_text::multi_line_at(self.body) {
            return Err(PostRefusal::invalid(
                FieldPath::body(&path),
                "text.one_line",
                "text in a post is one line: no control characters (newlines included)",
            )
            .into());
        }
        Ok(())
    }
}

/// Why the store's write stopped short, told back by the `decide` callback.
enum Stop {
    Refused(LogError),
    /// The log grew between reading the post's context and writing it: decide again.
    MovedOn,
}

/// What a post's decision needs, owned by the decision: the store may run it in a batch that
/// another post's task is writing.
struct Owned {
    campaign: Arc<LoadedCampaign>,
    read: ReadContext,
    author_id: uuid::Uuid,
    kind: String,
    side: Option<String>,
    body: String,
    clock: Arc<dyn ServerClock>,
    keys: Arc<Keyring>,
}

impl Owned {
    /// The post at the end of the log: stamped now (never before the last post's stamp, even
    /// if the machine's clock is stepped back) and chained. The decision's `sign` signs it
    /// before it is written, so no post is stored unsigned.
    fn new_post(&self, tail: &Tail) -> Post {
        let now = self.clock.now();
        let stamp: DateTime<Utc> = tail.prev_stamp.map_or(now, |prev| now.max(prev));
        let mut post = Post {
            campaign_id: self.campaign.campaign.id,
            seq: tail.next_seq,
            stamp,
            author_id: self.author_id,
            side: self.side.clone(),
            kind: self.kind.clone(),
            body: self.body.clone(),
            prev_hash: tail.prev_hash.clone().unwrap_or_else(|| self.campaign.genesis.clone()),
            hash: String::new(),
            receipt: None,
        };
        post.hash = link_hash(&post, &post.prev_hash);
        post
    }
}

impl Log<'_> {
    /// Appends `new` to `campaign`'s log. The server stamps it as its writer decides it, on the
    /// log's tail (never before the last post's stamp); nothing the author sends sets the time.
    pub async fn append(&self, campaign: &Arc<LoadedCampaign>, new: Submission<'_>) -> LogResult<Appended> {
        let started = std::time::Instant::now();
        let answer = self.decide_and_write(campaign, new).await;
        self.metrics.post_answered(&answer, started.elapsed());
        if let (Some(live), Ok(Appended::New(post, _))) = (self.live, &answer) {
            live.published(post.campaign_id, post.seq);
        }
        answer
    }

    /// The append itself, which [`Log::append`] counts and times.
    async fn decide_and_write(&self, campaign: &Arc<LoadedCampaign>, new: Submission<'_>) -> LogResult<Appended> {
        let id = campaign.campaign.id;
        new.check()?;
        // Canonical JSON: serde_json's map keeps keys sorted, and `to_string` writes no white space.
        let asked = serde_json::to_string(new.body).map_err(|e| LogError::Broken(e.to_string()))?;
        let side = new.side.map(Side::key);
        let request_hash = hex::encode(Sha256::digest(format!("{id}\n{}\n{}\n{asked}", new.kind, side.unwrap_or("-"))));
        let body = if PostKind::of(new.kind) == PostKind::Seal { salted(new.body)? } else { asked };
        let (quotas, quota_refusals): (Vec<Quota>, Vec<PostRefusal>) =
            self.quotas_of(new.author, new.kind).into_iter().unzip();
        let request = AppendRequest {
            campaign_id: id,
            author_id: new.author.id,
            idempotency_key: new.idempotency_key.clone(),
            request_hash,
            quotas,
        };
        let max_posts = i64::try_from(self.quotas.max_posts_per_campaign).unwrap_or(i64::MAX);

        for _ in 0..ATTEMPTS {
            // Posts whose verdict reads further back than the tail read it before the write
            // transaction, after the head: if the log moves on meanwhile, they are decided again.
            let context = async {
                let needs = super::decide::Needs::of(campaign, new.kind, new.body);
                let as_of = match needs.any() {
                    true => Some(self.store.head(id).await?.map_or(0, |post| post.seq)),
                    false => None,
                };
                let read = ReadContext::read(self.store, campaign, needs, i64::MAX, async {
                    crate::sealed_delay::next_secret(self.store, campaign).await.map(Some)
                })
                .await?;
                Ok::<_, LogError>((as_of, read))
            };
            let (as_of, read) = context.instrument(step("context")).await?;
            // What the decision needs, owned: it may run in a batch another post's task writes.
            let stop: Arc<Mutex<Option<Stop>>> = Arc::default();
            let owned = Arc::new(Owned {
                campaign: campaign.clone(),
                read,
                author_id: new.author.id,
                kind: new.kind.to_owned(),
                side: side.map(str::to_owned),
                body: body.clone(),
                clock: self.clock.clone(),
                keys: self.keys.clone(),
            });
            let said = stop.clone();
            let decide_post: SharedDecide = Arc::new(move |tail: &Tail| -> Result<Decision, Declined> {
                let (stop, o) = (&said, &owned);
                let campaign = &o.campaign;
                let refuse = |why: Stop| {
                    *stop.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                    Declined
                };
                // Refused here, inside the write, not before: a retry of a post stored before is
                // replayed, never refused for a log that has filled since.
                if max_posts > 0 && tail.next_seq > max_posts {
                    return Err(refuse(Stop::Refused(campaign_full(max_posts).into())));
                }
                if as_of.is_some_and(|as_of| tail.next_seq != as_of + 1) {
                    return Err(refuse(Stop::MovedOn));
                }
                let post = step("chain").in_scope(|| o.new_post(tail));
                let effects = step("rules")
                    .in_scope(|| decide(campaign, tail, &post, &o.read.context()))
                    .map_err(|e| refuse(Stop::Refused(e)))?;
                let keys = o.keys.clone();
                let sign: Sign = Arc::new(move |post: &Post| keys.sign(post));
                Ok(Decision { post, outcomes: effects.outcomes, snapshot: effects.snapshot, sign: Some(sign) })
            });
            let written = self.store.append_post(request.clone(), decide_post).instrument(step("append")).await;
            let stopped = stop.lock().unwrap_or_else(|e| e.into_inner()).take();
            match (written, stopped) {
                (Err(StoreError::Declined), Some(Stop::MovedOn)) => continue,
                (Err(StoreError::Declined), Some(Stop::Refused(e))) => return Err(e),
                (Err(StoreError::QuotaSpent(index)), _) => match quota_refusals.get(index) {
                    Some(refusal) => return Err(refusal.clone().into()),
                    None => {
                        return Err(LogError::Broken(format!("the store named quota {index}, which was not asked")))
                    }
                },
                (Ok(appended), _) => return same_campaign(appended, id),
                (Err(e), _) => return Err(e.into()),
            }
        }
        Err(LogError::Busy)
    }

    /// The quotas a player's post counts against, each with its refusal: posts of every kind,
    /// and notes or seals, per campaign per UTC day. The store checks them inside the write.
    fn quotas_of(&self, author: &Principal, kind: &str) -> Vec<(Quota, PostRefusal)> {
        if author.kind != PrincipalKind::Player {
            return Vec::new();
        }
        let now = self.clock.now();
        let day_start = now.date_naive().and_time(chrono::NaiveTime::MIN).and_utc();
        let retry_after_secs =
            u64::try_from((day_start + chrono::Duration::days(1) - now).num_seconds()).unwrap_or(0).max(1);
        let of_kind = match PostKind::of(kind) {
            PostKind::Note => Some(self.quotas.notes_per_day),
            PostKind::Seal => Some(self.quotas.seals_per_day),
            _ => None,
        };
        let every = [(None, self.quotas.posts_per_day)];
        let this = of_kind.map(|limit| (Some(kind), limit));
        every
            .into_iter()
            .chain(this)
            .filter(|&(_, limit)| limit > 0)
            .map(|(only, limit)| {
                let (rule, what) = match only {
                    Some(kind) => (format!("quota.{kind}s_per_day"), format!("{kind} posts")),
                    None => ("quota.posts_per_day".to_owned(), "posts".to_owned()),
                };
                let quota = Quota { kind: only.map(str::to_owned), since: day_start, limit: i64::from(limit) };
                let refusal = PostRefusal {
                    kind: RefusalKind::QuotaSpent { retry_after_secs },
                    field: FieldPath::post("kind"),
                    rule,
                    detail: format!(
                        "a player makes at most {limit} {what} per campaign per day (UTC); the count starts again at midnight"
                    ),
                };
                (quota, refusal)
            })
            .collect()
    }
}

/// The refusal of a post to a campaign whose log holds the most posts it may.
fn campaign_full(max_posts: i64) -> PostRefusal {
    PostRefusal {
        kind: RefusalKind::Conflict,
        field: FieldPath::post("kind"),
        rule: "campaign.max_posts".into(),
        detail: format!(
            "this campaign's log holds {max_posts} posts, the most this server keeps for one campaign; start a new campaign to go on"
        ),
    }
}

/// An idempotency key names one post of one campaign.
fn same_campaign(appended: Appended, campaign_id: uuid::Uuid) -> LogResult<Appended> {
    let (Appended::New(post, _) | Appended::Replayed(post, _)) = &appended;
    if post.campaign_id != campaign_id {
        return Err(StoreError::KeyReused.into());
    }
    Ok(appended)
}

/// A sealed choice gets 128 random bits of salt, so its public hash does not give it away.
fn salted(body: &Value) -> LogResult<String> {
    if body.get("salt").is_some() {
        return Err(PostRefusal::invalid(
            FieldPath::body("salt"),
            "seal.salt",
            "the server salts sealed choices itself",
        )
        .into());
    }
    let mut salt = [0u8; 16];
    rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut salt);
    let mut body = body.clone();
    if let Some(map) = body.as_object_mut() {
        map.insert("salt".into(), Value::String(hex::encode(salt)));
    }
    serde_json::to_string(&body).map_err(|e| LogError::Broken(e.to_string()))
}
