//! The audit: every number a post gave, recomputed from the stored log, with the working.

use adjutant_rules::chain::{genesis_rule, Link};
use adjutant_rules::dice::{stamp_text, DiceStream};
use adjutant_store::Post;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use adjutant_store::Tail;

use crate::campaign::{decide, kinds, Context, LoadedCampaign, Seal, SealBook, VoidSet};
use crate::error::{ApiResult, AppError};
use crate::extract::ApiPath;
use crate::routes::campaigns::load_campaign;
use crate::routes::posts::{body_value, load_post, rollback_target, seals};
use crate::sealed_delay::{self, ChainTrack};
use crate::views::{stamp_numbers, StampNumbers};
use crate::AppState;
use adjutant_rules::result_time::{ResultTime, SealedDelay};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/campaigns/{id}/posts/{seq}/audit", get(audit_post))
        .route("/v1/campaigns/{id}/audit", get(audit_campaign))
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PostAudit {
    pub campaign_id: Uuid,
    pub seq: i64,
    pub stamp: String,
    /// The campaign clock the stamp was read on.
    pub time_zone: String,
    pub clock: String,
    /// Every number from the stamp, recomputed now.
    pub numbers: StampNumbers,
    /// How to redo the result number by hand.
    pub steps: Vec<String>,
    pub dice_stream: DiceStreamAudit,
    pub chain: ChainAudit,
    /// For a battle of a `sealed_delay` campaign: the delay that moved its result time, from the
    /// chain secret its outcome revealed, and the result number of that time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_delay: Option<SealedDelayAudit>,
    /// Whether the stored outcomes equal what the rules give now.
    pub outcomes_match: bool,
    /// Every difference found; empty when the post checks out.
    pub problems: Vec<String>,
    /// True when there are no problems.
    pub ok: bool,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SealedDelayAudit {
    /// Every number of the delay: the draw, the revealed secret `s_k` and `s_{k-1}`, the post
    /// hash, the digest, its first 8 bytes, the delay, the stamp and the result time.
    #[schema(value_type = Object)]
    pub working: SealedDelay,
    /// The result time on the campaign's clock and its result number (the seed's rule).
    pub result_time_numbers: StampNumbers,
    /// Shell commands that redo each step (`sha256sum`, `bc`).
    pub commands: Vec<String>,
    /// True when the revealed secret leads back to the published `s_0`.
    pub links_to_published: bool,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DiceStreamAudit {
    /// The text whose SHA-256 blocks give the post's dice.
    pub text: String,
    /// SHA-256(text + "/0") in hex: the first 32 bytes of the stream.
    pub block_0: String,
    /// A shell command that prints block 0.
    pub command: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ChainAudit {
    /// Posts 1 to this one were checked.
    pub checked_through: i64,
    pub stored_hash: String,
    pub recomputed_hash: String,
    /// True when every link up to this post holds.
    pub ok: bool,
    /// Posts read and checked by this request: the chain is checked from the prefix this server
    /// verified before (trusted within its life; `?fresh=true` walks from post 1), and when that
    /// prefix reaches this post, only the post and the one before it are checked again.
    #[serde(default)]
    pub checked_now: i64,
}

/// Recomputes the hash of `post` from its fields and `prev_hash`.
pub fn recompute_hash(post: &Post, prev_hash: &str) -> String {
    let campaign = post.campaign_id.to_string();
    let author = post.author_id.to_string();
    Link {
        prev_hash,
        campaign_id: &campaign,
        seq: post.seq,
        stamp: post.stamp,
        author_id: &author,
        side: post.side.as_deref(),
        kind: &post.kind,
        body: &post.body,
    }
    .hash()
}

/// A verified start of the chain: posts 1 to `seq`, the hash of post `seq`, and the broken
/// links found in it.
#[derive(Debug, Clone)]
pub struct Prefix {
    pub seq: i64,
    pub hash: String,
    pub problems: Vec<String>,
}

impl Prefix {
    /// Nothing verified yet: the chain starts from the campaign's genesis.
    fn genesis(campaign: &adjutant_store::Campaign) -> Self {
        Self { seq: 0, hash: crate::campaign::genesis(campaign), problems: Vec::new() }
    }
}

/// What is wrong with a post's receipt: a signature that does not hold, or none where one is
/// due (every post of a campaign whose chain starts from its creation record; in an older
/// campaign, every post after the first signed one).
pub fn receipt_problem(
    state: &AppState,
    campaign: &adjutant_store::Campaign,
    post: &Post,
    signed_before: bool,
) -> Option<String> {
    receipt_problem_given(campaign, post, signed_before, || state.keys.check(post))
}

/// [`receipt_problem`] with the signature's check (`check`) already worked out.
fn receipt_problem_given(
    campaign: &adjutant_store::Campaign,
    post: &Post,
    signed_before: bool,
    check: impl FnOnce() -> Option<String>,
) -> Option<String> {
    if post.receipt.is_none() {
        let due = campaign.chain_genesis != genesis_rule::LEGACY || signed_before;
        return due.then(|| "it has no receipt, though the server signs every post: the post was written or replaced behind the server's back".to_owned());
    }
    check()
}

/// Each post's recomputed hash and receipt check, worked out for a page of posts at once on
/// every core, off the async workers: the SHA-256 links and the signatures are independent of
/// one another once the stored rows are read, and the signatures are most of a cold audit's time.
async fn page_checks(state: &AppState, posts: Vec<Post>) -> ApiResult<(Vec<Post>, Vec<(String, Option<String>)>)> {
    let keys = state.keys.clone();
    tokio::task::spawn_blocking(move || {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
        let chunk = posts.len().div_ceil(threads).max(1);
        let checks = std::thread::scope(|scope| {
            let workers: Vec<_> = posts
                .chunks(chunk)
                .map(|part| {
                    let keys = &keys;
                    scope.spawn(move || {
                        part.iter().map(|p| (recompute_hash(p, &p.prev_hash), keys.check(p))).collect::<Vec<_>>()
                    })
                })
                .collect();
            workers.into_iter().flat_map(|w| w.join().unwrap_or_default()).collect::<Vec<_>>()
        });
        (posts, checks)
    })
    .await
    .map_err(|e| AppError::Internal(format!("the audit's checks stopped: {e}")))
}

/// What a walk along the chain found.
pub struct ChainWalk {
    pub problems: Vec<String>,
    pub last_recomputed: Option<String>,
    /// Posts read and checked.
    pub checked: i64,
}

/// Walks the chain from the post after `from` to `through`, reporting every broken link (and
/// those already found in `from`).
pub async fn walk_chain(
    state: &AppState,
    campaign: &adjutant_store::Campaign,
    from: Prefix,
    through: i64,
) -> ApiResult<ChainWalk> {
    let campaign_id = campaign.id;
    let mut signed_before = false;
    let mut problems = from.problems;
    let mut expected_prev = from.hash;
    let mut after = from.seq;
    let mut last_recomputed = None;
    let mut expected_seq = from.seq + 1;
    let mut checked = 0;
    'pages: while after < through {
        let page = state.store.posts(campaign_id, after, 500).await?;
        if page.is_empty() {
            break;
        }
        for post in &page {
            if post.seq > through {
                break 'pages;
            }
            checked += 1;
            if post.seq != expected_seq {
                problems.push(format!("post {}: sequence number out of order (expected {expected_seq})", post.seq));
            }
            if post.prev_hash != expected_prev {
                problems.push(format!(
                    "post {}: prev_hash {} does not match the previous post's hash {}",
                    post.seq, post.prev_hash, expected_prev
                ));
            }
            let recomputed = recompute_hash(post, &post.prev_hash);
            if recomputed != post.hash {
                problems.push(format!(
                    "post {}: stored hash {} but its fields hash to {recomputed}: the post was changed after it was written",
                    post.seq, post.hash
                ));
            }
            if let Some(problem) = receipt_problem(state, campaign, post, signed_before) {
                problems.push(format!("post {}: {problem}", post.seq));
            }
            signed_before |= post.receipt.is_some();
            expected_prev = post.hash.clone();
            expected_seq = post.seq + 1;
            after = post.seq;
            last_recomputed = Some(recomputed);
        }
    }
    Ok(ChainWalk { problems, last_recomputed, checked })
}

/// The longest start of the chain this server verified before: by a whole-campaign audit or
/// by a per-post audit.
fn verified_prefix(state: &AppState, campaign_id: Uuid) -> Option<Prefix> {
    let audited = state.caches.audit(campaign_id).map(|c| Prefix {
        seq: c.seq(),
        hash: c.head_hash().to_owned(),
        problems: c.chain_differences().map(|d| format!("post {}: {}", d.seq, d.detail)).collect(),
    });
    let walked = state.caches.chain(campaign_id).map(|(seq, hash)| Prefix { seq, hash, problems: Vec::new() });
    match (audited, walked) {
        (Some(a), Some(w)) => Some(if w.seq > a.seq { w } else { a }),
        (a, w) => a.or(w),
    }
}

/// The chain checked up to `post`. Goes on from the prefix verified before (trusted within this
/// server's life, as the whole-campaign audit trusts it) and remembers how far it got when
/// every link held; when the prefix already reaches the post, only the post and its link to the
/// one before are checked. `fresh` walks from post 1.
async fn chain_up_to(
    state: &AppState,
    campaign: &adjutant_store::Campaign,
    post: &Post,
    fresh: bool,
) -> ApiResult<ChainWalk> {
    let id = post.campaign_id;
    let prefix = if fresh { None } else { verified_prefix(state, id) };
    match prefix {
        Some(prefix) if prefix.seq >= post.seq => {
            // Already verified: the post's own hash and its link to the previous post, again.
            let mut problems: Vec<String> =
                prefix.problems.into_iter().filter(|p| problem_seq(p).is_some_and(|seq| seq <= post.seq)).collect();
            let mut checked = 1;
            if post.seq > 1 {
                let before = state.store.posts(id, post.seq - 2, 1).await?;
                match before.first().filter(|b| b.seq == post.seq - 1) {
                    Some(before) => {
                        checked += 1;
                        let recomputed = recompute_hash(before, &before.prev_hash);
                        if recomputed != before.hash {
                            problems.push(format!(
                                "post {}: stored hash {} but its fields hash to {recomputed}: the post was changed after it was written",
                                before.seq, before.hash
                            ));
                        }
                        if post.prev_hash != before.hash {
                            problems.push(format!(
                                "post {}: prev_hash {} does not match the previous post's hash {}",
                                post.seq, post.prev_hash, before.hash
                            ));
                        }
                    }
                    None => problems.push(format!("post {}: the post before it is missing", post.seq)),
                }
            }
            if prefix.seq == post.seq && prefix.hash != post.hash {
                problems.push(format!("post {}: its hash is not the one verified before", post.seq));
            }
            let recomputed = recompute_hash(post, &post.prev_hash);
            if recomputed != post.hash {
                problems.push(format!(
                    "post {}: stored hash {} but its fields hash to {recomputed}: the post was changed after it was written",
                    post.seq, post.hash
                ));
            }
            if let Some(problem) = receipt_problem(state, campaign, post, false) {
                problems.push(format!("post {}: {problem}", post.seq));
            }
            problems.dedup();
            Ok(ChainWalk { problems, last_recomputed: Some(recomputed), checked })
        }
        prefix => {
            let walk =
                walk_chain(state, campaign, prefix.unwrap_or_else(|| Prefix::genesis(campaign)), post.seq).await?;
            if walk.problems.is_empty() && walk.last_recomputed.as_deref() == Some(post.hash.as_str()) {
                state.caches.remember_chain(id, post.seq, post.hash.clone());
            }
            Ok(walk)
        }
    }
}

/// The post a problem is about (`post N: ...`).
fn problem_seq(problem: &str) -> Option<i64> {
    problem.strip_prefix("post ")?.split(':').next()?.parse().ok()
}

/// Recomputes everything a post gave and checks the hash chain up to it.
///
/// The chain is checked from the prefix this server verified before (by this audit or the
/// whole-campaign one), so a repeat audit reads only the posts added since, plus the post and
/// the one before it; `?fresh=true` walks from post 1.
#[utoipa::path(get, path = "/v1/campaigns/{id}/posts/{seq}/audit", tag = "audit",
    params(("id" = Uuid, Path, description = "campaign id"), ("seq" = i64, Path, description = "sequence number"), AuditQuery),
    responses((status = 200, body = PostAudit), (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn audit_post(
    State(state): State<AppState>,
    ApiPath((id, seq)): ApiPath<(Uuid, i64)>,
    crate::extract::ApiQuery(q): crate::extract::ApiQuery<AuditQuery>,
) -> ApiResult<Json<PostAudit>> {
    let campaign = load_campaign(&state, id).await?;
    let (post, stored_outcomes) = load_post(&state, &campaign, seq).await?;
    Ok(Json(audit_of(&state, &campaign, &post, &stored_outcomes, q.fresh == Some(true)).await?))
}

pub async fn audit_of(
    state: &AppState,
    campaign: &LoadedCampaign,
    post: &Post,
    stored_outcomes: &[adjutant_store::Outcome],
    fresh: bool,
) -> ApiResult<PostAudit> {
    let numbers = stamp_numbers(campaign, post.stamp);
    let r = &numbers.result_number;
    let first = r.first_digit as usize;
    let decimals = r.sqrt.split('.').nth(1).unwrap_or_default();
    let taken = decimals.get(first - 1..first + 1).unwrap_or_default();
    let mut steps = vec![
        format!(
            "stamp {} is {} on the campaign clock ({}, {})",
            stamp_text(post.stamp),
            numbers.time_of_day,
            campaign.settings.time_zone,
            campaign.settings.clock
        ),
        format!("N = {} (hours, minutes and seconds counted as one number)", r.n),
        format!("√{} = {}…", r.n, r.sqrt),
        format!("decimals {} and {} are \"{taken}\": result number {}", first, first + 1, r.result),
        format!("exactly: ⌊√({} × 10^{})⌋ mod 100 = {}", r.n, 2 * (first + 1), r.result),
        format!("check with: {}", r.bc),
        format!("milliseconds {} mod 6 = {}", numbers.milliseconds, numbers.milliseconds_mod_6),
    ];

    let mut problems = Vec::new();
    let sealed_delay = if sealed_delay::applies(campaign, &post.kind) {
        sealed_audit(campaign, post, stored_outcomes, &mut steps, &mut problems)
    } else {
        None
    };

    let stream = DiceStream::new(&post.campaign_id.to_string(), post.seq as u64, post.stamp);
    let block_0 = hex::encode(DiceStream::block_of(stream.text(), 0));
    let dice_stream = DiceStreamAudit {
        command: format!("printf '%s' '{}/0' | sha256sum", stream.text()),
        text: stream.text().to_owned(),
        block_0,
    };

    let walk = chain_up_to(state, &campaign.campaign, post, fresh).await?;
    let chain_ok = walk.problems.is_empty();
    problems.splice(0..0, walk.problems);
    let recomputed_hash = walk.last_recomputed.unwrap_or_default();

    let outcomes_match = recomputed_outcomes_match(state, campaign, post, stored_outcomes).await?;
    if !outcomes_match {
        problems.push(format!(
            "post {}: the stored outcomes or state differ from what the rules give when the post is replayed",
            post.seq
        ));
    }
    Ok(PostAudit {
        campaign_id: post.campaign_id,
        seq: post.seq,
        stamp: stamp_text(post.stamp),
        time_zone: campaign.settings.time_zone.clone(),
        clock: campaign.settings.clock.clone(),
        numbers,
        steps,
        dice_stream,
        chain: ChainAudit {
            checked_through: post.seq,
            stored_hash: post.hash.clone(),
            recomputed_hash,
            ok: chain_ok,
            checked_now: walk.checked,
        },
        sealed_delay,
        outcomes_match,
        ok: problems.is_empty(),
        problems,
    })
}

/// What `decide` saw when the post was first written, rebuilt from the log.
/// A sealed-delay battle's working, from the secret its stored outcome revealed: each step
/// added to `steps`, each failed check to `problems`.
fn sealed_audit(
    campaign: &LoadedCampaign,
    post: &Post,
    stored: &[adjutant_store::Outcome],
    steps: &mut Vec<String>,
    problems: &mut Vec<String>,
) -> Option<SealedDelayAudit> {
    if sealed_delay::unsealed_battles(stored) > 0 {
        problems.push(format!("post {}: a battle of this sealed-delay campaign reveals no chain secret", post.seq));
    }
    let secret = sealed_delay::revealed(stored)?;
    let published = campaign.settings.result_chain.as_ref();
    let length = published.map_or(1, |c| c.length);
    // Chain 0's s_0 is in the campaign's settings; a later chain's was published by the draw
    // that used the chain before's last secret, which the campaign audit follows.
    let known =
        if secret.chain == 0 { published.map(|c| c.commitment.as_str()) } else { Some(secret.commitment.as_str()) };
    let found = sealed_delay::check_secret(&secret, length, known);
    let links_to_published = found.is_empty();
    problems.extend(found.into_iter().map(|p| format!("post {}: {p}", post.seq)));
    let working = secret.delay(&post.hash, post.stamp);
    let result_time = working.result_time().unwrap_or(post.stamp);
    let numbers = stamp_numbers(campaign, result_time);
    let r = &numbers.result_number;
    let commands = working.commands();
    // The stamp's own result number is not this battle's: the steps are the sealed delay's.
    steps.clear();
    steps.extend([
        format!(
            "sealed delay: this is the campaign's draw {} (chain {}, secret {} of {length}); it reveals s_k = {}",
            working.draw, working.chain, working.position, working.secret
        ),
        format!(
            "SHA-256 of the 64 characters of s_k is {} (s_(k-1)); applied {} times it gives the chain's s_0 {}",
            working.previous, working.position, working.commitment
        ),
        format!("check with: {}", commands[0]),
        format!("SHA-256 of s_k followed by the post's hash {} is {}", working.post_hash, working.digest),
        format!("check with: {}", commands[1]),
        format!(
            "its first 8 bytes {} are {}; mod 60000 that is a delay of {} ms",
            working.first_8_bytes, working.first_8_bytes_decimal, working.delay_ms
        ),
        format!("check with: {} and {}", commands[2], commands[3]),
        format!(
            "stamp {} + {} ms = result time {}, which is {} on the campaign clock ({}, {})",
            working.stamp,
            working.delay_ms,
            working.result_time,
            numbers.time_of_day,
            campaign.settings.time_zone,
            campaign.settings.clock
        ),
        format!("N = {}, √{} = {}…", r.n, r.n, r.sqrt),
        format!(
            "exactly: ⌊√({} × 10^{})⌋ mod 100 = {}: result number {}",
            r.n,
            2 * (r.first_digit + 1),
            r.result,
            r.result
        ),
        format!("check with: {}", r.bc),
    ]);
    if let Some(next) = &working.next_commitment {
        steps.push(format!("this draw used its chain's last secret and publishes the next chain's s_0: {next}"));
    }
    Some(SealedDelayAudit { working, result_time_numbers: numbers, commands, links_to_published })
}

pub async fn context_for(state: &AppState, post: &Post) -> ApiResult<(Tail, Context)> {
    let id = post.campaign_id;
    let snapshot = if post.seq > 1 { state.store.snapshot_at(id, post.seq - 1).await? } else { None };
    let tail = Tail {
        next_seq: post.seq,
        prev_hash: Some(post.prev_hash.clone()),
        prev_stamp: None,
        snapshot,
        next_position: 0,
    };
    let mut context = Context::default();
    if [kinds::ROLLBACK, kinds::SEAL, kinds::RESOLVE].contains(&post.kind.as_str()) {
        // The log as it stood when the post was written: rollbacks after it do not count.
        let rollbacks = state.store.posts_of_kind(id, kinds::ROLLBACK).await?;
        context.void = VoidSet::of_rollbacks(
            rollbacks.iter().take_while(|r| r.seq < post.seq).map(|r| (rollback_target(r), r.seq)),
        );
        context.seals = seals(state, id, &context.void, post.seq).await?;
    }
    if post.kind == kinds::ROLLBACK {
        let to_seq = body_value(post).get("to_seq").and_then(serde_json::Value::as_i64).unwrap_or(-1);
        if to_seq > 0 {
            context.rollback_snapshot = state.store.snapshot_at(id, to_seq).await?;
        }
    }
    Ok((tail, context))
}

/// Replays the post through the rules against the state before it and compares the outcomes
/// and the state snapshot with what was stored.
async fn recomputed_outcomes_match(
    state: &AppState,
    campaign: &LoadedCampaign,
    post: &Post,
    stored: &[adjutant_store::Outcome],
) -> ApiResult<bool> {
    let (tail, mut context) = context_for(state, post).await?;
    if sealed_delay::applies(campaign, &post.kind) {
        context.chain_secret = sealed_delay::revealed(stored);
    }
    let Ok(effects) = decide(campaign, &tail, post, &context) else {
        return Ok(false);
    };
    let outcomes_match = effects.outcomes.len() == stored.len()
        && effects.outcomes.iter().zip(stored).all(|(new, old)| new.kind == old.kind && new.data == old.data);
    let stored_snapshot =
        state.store.snapshot_at(post.campaign_id, post.seq).await?.filter(|(seq, _)| *seq == post.seq);
    let snapshot_matches = effects.snapshot.as_deref() == stored_snapshot.as_ref().map(|(_, text)| text.as_str());
    Ok(outcomes_match && snapshot_matches)
}

/// One thing the whole-campaign audit found wrong.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Difference {
    pub seq: i64,
    /// `chain`, `receipt`, `outcomes`, `snapshot` or `rules`.
    pub check: String,
    pub detail: String,
}

/// The whole campaign replayed through the rules.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CampaignAudit {
    pub campaign_id: Uuid,
    /// Posts replayed and chain links verified.
    pub posts: i64,
    /// Stored outcomes compared with the rules' outcomes.
    pub outcomes: i64,
    /// Stored state snapshots compared with the replayed state.
    pub snapshots: i64,
    /// Result numbers recomputed (one per battle) and reinforcement rolls recomputed.
    pub result_numbers: i64,
    pub reinforcement_rolls: i64,
    /// Dice rerolled from resolver posts' streams.
    pub dice: i64,
    /// Posts voided by rollbacks (still replayed and checked as they were when written).
    pub void_posts: i64,
    /// The hash of the last post: quote it to pin the log as it is now.
    pub head_hash: Option<String>,
    pub differences: Vec<Difference>,
    pub ok: bool,
    /// Posts replayed by this request. A repeat audit replays only the posts added since this
    /// server last verified the campaign, and trusts the prefix it verified then (within the
    /// server's life: a restart, or `?fresh=true`, replays everything).
    #[serde(default)]
    pub replayed_now: i64,
    pub elapsed_ms: u64,
}

/// Where a whole-campaign audit stopped: what it needs to go on from the next post.
#[derive(Debug, Clone)]
pub struct AuditCheckpoint {
    seq: i64,
    expected_prev: String,
    replayed: Option<(i64, String)>,
    void: VoidSet,
    sealed: SealBook,
    chains: ChainTrack,
    outcomes_after: i64,
    snapshots_after: i64,
    /// Whether a post up to `seq` carried a receipt: every later one must.
    signed: bool,
    /// The report as it stood after post `seq`, before the checks of what lies beyond the log.
    audit: CampaignAudit,
}

impl AuditCheckpoint {
    /// The last post verified.
    pub fn seq(&self) -> i64 {
        self.seq
    }

    /// The hash of the last post verified.
    pub fn head_hash(&self) -> &str {
        &self.expected_prev
    }

    /// The broken links found in the verified prefix.
    pub fn chain_differences(&self) -> impl Iterator<Item = &Difference> {
        self.audit.differences.iter().filter(|d| d.check == "chain")
    }
}

/// `?fresh=true`: replay the whole log from post 1, trusting nothing remembered.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Replay from post 1 instead of going on from the prefix this server verified before.
    #[serde(default)]
    pub fresh: Option<bool>,
}

/// Replays the whole log through the rules: every hash link, every result number and
/// reinforcement roll, every die, every stored outcome and state snapshot.
///
/// Incremental: the server remembers, per campaign, the last post it verified and everything
/// the replay needs from there, so a repeat audit replays only the posts added since (the new
/// posts' links to the verified prefix are checked, so tampering with them is found). The
/// prefix is trusted as verified earlier in this server's life; `?fresh=true` replays all.
#[utoipa::path(get, path = "/v1/campaigns/{id}/audit", tag = "audit",
    params(("id" = Uuid, Path, description = "campaign id"), AuditQuery),
    responses((status = 200, body = CampaignAudit), (status = 404, body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn audit_campaign(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    crate::extract::ApiQuery(q): crate::extract::ApiQuery<AuditQuery>,
) -> ApiResult<Json<CampaignAudit>> {
    let campaign = load_campaign(&state, id).await?;
    if q.fresh == Some(true) {
        state.caches.forget_audit(id);
    }
    Ok(Json(audit_incrementally(&state, &campaign).await?))
}

/// The whole-campaign audit, going on from the prefix verified before, and remembering where
/// it stopped.
pub async fn audit_incrementally(state: &AppState, campaign: &LoadedCampaign) -> ApiResult<CampaignAudit> {
    let id = campaign.campaign.id;
    let known = state.caches.audit(id);
    let (audit, checkpoint) = replay_from(state, campaign, known.as_deref()).await?;
    state.caches.remember_audit(id, checkpoint);
    Ok(audit)
}

/// The whole log replayed from post 1.
pub async fn replay_campaign(state: &AppState, campaign: &LoadedCampaign) -> ApiResult<CampaignAudit> {
    Ok(replay_from(state, campaign, None).await?.0)
}

const PAGE: i64 = 1000;

/// Replays the log after `from` (or all of it), then checks what is stored beyond the last post.
pub async fn replay_from(
    state: &AppState,
    campaign: &LoadedCampaign,
    from: Option<&AuditCheckpoint>,
) -> ApiResult<(CampaignAudit, AuditCheckpoint)> {
    use std::collections::VecDeque;
    let started = std::time::Instant::now();
    let id = campaign.campaign.id;
    let from = from.cloned();
    let signed_at_start = from.as_ref().is_some_and(|c| c.signed);
    let mut audit = from.as_ref().map(|c| c.audit.clone()).unwrap_or(CampaignAudit {
        campaign_id: id,
        posts: 0,
        outcomes: 0,
        snapshots: 0,
        result_numbers: 0,
        reinforcement_rolls: 0,
        dice: 0,
        void_posts: 0,
        head_hash: None,
        differences: Vec::new(),
        ok: true,
        replayed_now: 0,
        elapsed_ms: 0,
    });
    audit.replayed_now = 0;
    let differ = |audit: &mut CampaignAudit, seq: i64, check: &str, detail: String| {
        audit.differences.push(Difference { seq, check: check.into(), detail });
    };

    let mut chains = from.as_ref().map_or_else(|| ChainTrack::new(&campaign.settings), |c| c.chains.clone());
    let (mut after, mut expected_prev, mut replayed, mut void, mut sealed, mut outcomes_after, mut snapshots_after) =
        match from {
            Some(c) => (c.seq, c.expected_prev, c.replayed, c.void, c.sealed, c.outcomes_after, c.snapshots_after),
            None => {
                (0, crate::campaign::genesis(&campaign.campaign), None, VoidSet::default(), SealBook::default(), 0, 0)
            }
        };
    let mut expected_seq = after + 1;
    let mut signed_before = signed_at_start;
    let mut stored_outcomes: VecDeque<adjutant_store::Outcome> = VecDeque::new();
    let mut stored_snapshots: VecDeque<(i64, String)> = VecDeque::new();
    let (mut outcomes_read, mut snapshots_read) = (false, false);
    // What the rows consumed so far reach: the checkpoint goes on after them.
    let (mut outcomes_done, mut snapshots_done) = (outcomes_after, snapshots_after);
    loop {
        let posts = state.store.posts(id, after, PAGE).await?;
        if posts.is_empty() {
            break;
        }
        let (posts, checks) = page_checks(state, posts).await?;
        if checks.len() != posts.len() {
            return Err(AppError::Internal("the audit's checks of a page were cut short".into()));
        }
        for (post, (recomputed, signature)) in posts.iter().zip(checks) {
            after = post.seq;
            audit.posts += 1;
            audit.replayed_now += 1;
            // The chain.
            if post.seq != expected_seq {
                differ(
                    &mut audit,
                    post.seq,
                    "chain",
                    format!("sequence number out of order (expected {expected_seq})"),
                );
            }
            if post.prev_hash != expected_prev {
                differ(&mut audit, post.seq, "chain", "prev_hash is not the previous post's hash".into());
            }
            if recomputed != post.hash {
                differ(
                    &mut audit,
                    post.seq,
                    "chain",
                    format!("stored hash {} but the post's fields hash to {recomputed}: it was changed", post.hash),
                );
            }
            if let Some(problem) = receipt_problem_given(&campaign.campaign, post, signed_before, || signature) {
                differ(&mut audit, post.seq, "receipt", problem);
            }
            signed_before |= post.receipt.is_some();
            expected_prev = post.hash.clone();
            expected_seq = post.seq + 1;

            // What was stored for this post.
            // Read ahead a page at a time, and not again once the stored rows have run out.
            while !outcomes_read && stored_outcomes.back().is_none_or(|o| o.seq <= post.seq) {
                let page = state.store.outcomes(id, outcomes_after, PAGE).await?;
                outcomes_read = (page.len() as i64) < PAGE;
                let Some(last) = page.last() else { break };
                outcomes_after = last.position;
                stored_outcomes.extend(page);
            }
            let mut mine = Vec::new();
            while stored_outcomes.front().is_some_and(|o| o.seq <= post.seq) {
                if let Some(o) = stored_outcomes.pop_front() {
                    outcomes_done = o.position;
                    if o.seq == post.seq {
                        mine.push(o);
                    } else {
                        differ(&mut audit, o.seq, "outcomes", format!("outcome {} belongs to no post", o.id));
                    }
                }
            }
            while !snapshots_read && stored_snapshots.back().is_none_or(|(seq, _)| *seq <= post.seq) {
                let page = state.store.snapshots(id, snapshots_after, PAGE).await?;
                snapshots_read = (page.len() as i64) < PAGE;
                let Some((last, _)) = page.last() else { break };
                snapshots_after = *last;
                stored_snapshots.extend(page);
            }
            let stored_snapshot = if stored_snapshots.front().is_some_and(|(seq, _)| *seq == post.seq) {
                stored_snapshots.pop_front()
            } else {
                None
            };
            if stored_snapshot.is_some() {
                snapshots_done = post.seq;
            }

            // The rules, again, on the replayed state.
            let tail = Tail {
                next_seq: post.seq,
                prev_hash: Some(post.prev_hash.clone()),
                prev_stamp: None,
                snapshot: replayed.clone(),
                next_position: 0,
            };
            // The void posts and the seals are lent to the context and taken back: no copies.
            let mut context = Context::default();
            let rollback_to = (post.kind == kinds::ROLLBACK)
                .then(|| body_value(post).get("to_seq").and_then(serde_json::Value::as_i64));
            if post.kind == kinds::SEAL || post.kind == kinds::RESOLVE {
                context.seals = std::mem::take(&mut sealed);
            }
            if let Some(to_seq) = rollback_to {
                context.void = std::mem::take(&mut void);
                if let Some(to_seq) = to_seq.filter(|s| *s > 0) {
                    // The stored snapshot there was itself checked against the replay when it was reached.
                    context.rollback_snapshot = state.store.snapshot_at(id, to_seq).await?;
                }
            }
            if sealed_delay::applies(campaign, &post.kind) {
                // The secret the stored battle revealed must be the next of a published chain.
                context.chain_secret = sealed_delay::revealed(&mine);
                if let Some(secret) = &context.chain_secret {
                    for problem in chains.check(secret) {
                        differ(&mut audit, post.seq, "sealed_delay", problem);
                    }
                }
            }
            if campaign.settings.result_time() == ResultTime::SealedDelay && sealed_delay::unsealed_battles(&mine) > 0 {
                let problem = "a battle of this sealed-delay campaign reveals no chain secret".into();
                differ(&mut audit, post.seq, "sealed_delay", problem);
            }
            let decided = decide(campaign, &tail, post, &context);
            if post.kind == kinds::SEAL || post.kind == kinds::RESOLVE {
                sealed = std::mem::take(&mut context.seals);
            }
            if rollback_to.is_some() {
                void = std::mem::take(&mut context.void);
            }
            if void.contains(&post.seq) {
                audit.void_posts += 1;
            }
            match decided {
                Ok(effects) => {
                    audit.outcomes += mine.len() as i64;
                    let same = effects.outcomes.len() == mine.len()
                        && effects
                            .outcomes
                            .iter()
                            .zip(&mine)
                            .all(|(new, old)| new.kind == old.kind && new.data == old.data);
                    if !same {
                        differ(
                            &mut audit,
                            post.seq,
                            "outcomes",
                            "the stored outcomes differ from what the rules give".into(),
                        );
                    }
                    for o in &effects.outcomes {
                        match o.kind.as_str() {
                            "battle" => audit.result_numbers += 1,
                            "reinforcement_roll" => audit.reinforcement_rolls += 1,
                            _ => {}
                        }
                        if o.kind == "resolution" {
                            audit.dice += serde_json::from_str::<serde_json::Value>(&o.data)
                                .ok()
                                .and_then(|d| d["data"]["dice"].as_array().map(|a| a.len() as i64))
                                .unwrap_or(0);
                        }
                    }
                    match (&effects.snapshot, &stored_snapshot) {
                        (Some(new), Some((_, old))) => {
                            audit.snapshots += 1;
                            if new != old {
                                differ(
                                    &mut audit,
                                    post.seq,
                                    "snapshot",
                                    "the stored state differs from the replayed state".into(),
                                );
                            }
                        }
                        (Some(_), None) => {
                            differ(&mut audit, post.seq, "snapshot", "no state snapshot was stored".into())
                        }
                        (None, Some(_)) => differ(
                            &mut audit,
                            post.seq,
                            "snapshot",
                            "a snapshot was stored for a post that changes nothing".into(),
                        ),
                        (None, None) => {}
                    }
                    if let Some(new) = effects.snapshot {
                        replayed = Some((post.seq, new));
                    }
                }
                Err(e) => differ(
                    &mut audit,
                    post.seq,
                    "rules",
                    format!("the rules refuse this stored post: {}", e.problem().detail),
                ),
            }
            if let Some(to_seq) = rollback_to.flatten() {
                void.insert(to_seq + 1..post.seq);
                sealed.void(to_seq + 1..post.seq);
            }
            if let Some(seal) = Seal::of(post) {
                sealed.insert(seal);
            }
            audit.head_hash = Some(post.hash.clone());
        }
    }
    let checkpoint = AuditCheckpoint {
        seq: after,
        expected_prev: expected_prev.clone(),
        replayed,
        void,
        sealed,
        chains,
        outcomes_after: outcomes_done,
        snapshots_after: snapshots_done,
        signed: signed_before,
        audit: audit.clone(),
    };
    // Whatever is stored beyond the last post belongs to no post: an outcome there would reach
    // the feed, a snapshot there would pass for the state.
    loop {
        let page = state.store.outcomes(id, outcomes_after, PAGE).await?;
        let Some(last) = page.last() else { break };
        outcomes_after = last.position;
        stored_outcomes.extend(page);
    }
    for o in stored_outcomes {
        differ(&mut audit, o.seq, "outcomes", format!("outcome {} belongs to no post", o.id));
    }
    loop {
        let page = state.store.snapshots(id, snapshots_after, PAGE).await?;
        let Some((last, _)) = page.last() else { break };
        snapshots_after = *last;
        stored_snapshots.extend(page);
    }
    for (seq, _) in stored_snapshots {
        differ(&mut audit, seq, "snapshot", format!("a state snapshot for post {seq}, which is not in the log"));
    }
    audit.ok = audit.differences.is_empty();
    audit.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok((audit, checkpoint))
}
