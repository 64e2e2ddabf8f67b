//! The audit of a stored log: every post replayed through the rules and every link and
//! receipt checked, from post 1 or from where the last audit stopped; and one post on its own.

use std::collections::VecDeque;
use std::sync::Arc;

use adjutant_rules::dice::{stamp_text, DiceStream};
use adjutant_store::{Outcome, Post, Store};

use super::chain::{link_hash, ChainCheck};
use super::decide::Needs;
use super::error::{LogError, LogResult};
use super::read::ReadContext;
use super::replay::{Check, Finding, Replay, Stored, Verdict};
use crate::campaign::LoadedCampaign;
use crate::sealed_delay;
use crate::signing::Keyring;
use crate::views::{
    stamp_numbers, CampaignAudit, ChainAudit, DiceStreamAudit, Difference, PostAudit, SealedDelayAudit,
};

/// Replays one stored post through the rules against the log before it, as it stood when the
/// post was written, and compares the outcomes and the state snapshot with what was stored.
pub async fn replay_post(
    store: &dyn Store,
    campaign: &LoadedCampaign,
    post: &Post,
    stored: &[adjutant_store::Outcome],
) -> LogResult<Vec<Finding>> {
    let id = post.campaign_id;
    // The log as it stood when the post was written: rollbacks after it do not count.
    let read = ReadContext::read(store, campaign, Replay::needs(campaign, post), post.seq, async {
        Ok(sealed_delay::revealed(stored))
    })
    .await?;
    let before = if post.seq > 1 { store.snapshot_at(id, post.seq - 1).await? } else { None };
    let snapshot = store.snapshot_at(id, post.seq).await?.filter(|(seq, _)| *seq == post.seq);
    let stored = Stored {
        outcomes: stored.iter().map(|o| (o.kind.as_str(), o.data.as_str())).collect(),
        snapshot: snapshot.as_ref().map(|(_, text)| text.as_str()),
    };
    Ok(Replay::at(read.view, before).post(campaign, post, &stored, read.rollback_snapshot.as_ref()))
}

/// Everything `post` gave, recomputed from the stored log with the working: the result number
/// from its stamp step by step (or, for a battle of a `sealed_delay` campaign, the delay from the
/// chain secret its outcome revealed), its dice stream, the hash chain up to it (going on from
/// `prefix`, [`chain_up_to`]) and its outcomes replayed through the rules.
pub async fn post_audit(
    store: &dyn Store,
    keys: &Arc<Keyring>,
    campaign: &LoadedCampaign,
    post: &Post,
    stored_outcomes: &[Outcome],
    prefix: Option<Prefix>,
) -> LogResult<PostAudit> {
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

    let walk = chain_up_to(store, keys, &campaign.campaign, post, prefix).await?;
    let chain_ok = walk.problems.is_empty();
    problems.splice(0..0, walk.problems);
    let recomputed_hash = walk.last_recomputed.unwrap_or_default();

    let found = replay_post(store, campaign, post, stored_outcomes).await?;
    // A battle that reveals no secret is the sealed delay's problem, told above.
    let outcomes_match = !found.iter().any(|f| f.check != Check::SealedDelay);
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
        clock: campaign.settings.clock.to_string(),
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

/// A sealed-delay battle's working, from the secret its stored outcome revealed: each step
/// added to `steps`, each failed check to `problems`.
fn sealed_audit(
    campaign: &LoadedCampaign,
    post: &Post,
    stored: &[Outcome],
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

/// What the audit works out for a post before folding it in: its recomputed hash, what is
/// wrong with its receipt, what its verdict reads, and the verdict itself when it reads nothing
/// from the log before it.
struct Worked {
    recomputed: String,
    receipt: Option<String>,
    needs: Needs,
    verdict: Option<Verdict>,
}

/// A page of posts being worked out on every core, off the async workers: the SHA-256 links,
/// the receipts (a batch equation per key, [`Keyring::check_all`]) and the verdicts that stand
/// alone are independent of one another once the stored rows are read. The audit reads the
/// next page and folds in the one before while this one is worked out.
struct PageWork {
    posts: Arc<Vec<Post>>,
    parts: Vec<tokio::task::JoinHandle<Vec<Worked>>>,
}

impl PageWork {
    /// The links and receipts of `posts`, and with `campaign` what each post's verdict reads
    /// and the verdicts that stand alone (a walk along the chain needs no verdicts).
    fn start(keys: &Arc<Keyring>, campaign: Option<&Arc<LoadedCampaign>>, posts: Vec<Post>) -> Self {
        let posts = Arc::new(posts);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
        let part = posts.len().div_ceil(threads).max(1);
        let parts = (0..posts.len())
            .step_by(part)
            .map(|start| {
                let (keys, campaign, posts) = (keys.clone(), campaign.cloned(), posts.clone());
                tokio::task::spawn_blocking(move || {
                    let posts = &posts[start..(start + part).min(posts.len())];
                    posts
                        .iter()
                        .zip(keys.check_all(posts))
                        .map(|(post, receipt)| {
                            let needs = campaign.as_ref().map(|c| Replay::needs(c, post)).unwrap_or_default();
                            Worked {
                                recomputed: link_hash(post, &post.prev_hash),
                                receipt,
                                needs,
                                verdict: campaign
                                    .as_ref()
                                    .filter(|c| Replay::stands_alone(c, &needs))
                                    .map(|c| Replay::verdict_alone(c, post)),
                            }
                        })
                        .collect()
                })
            })
            .collect();
        Self { posts, parts }
    }

    /// The last post of the page.
    fn last_seq(&self) -> Option<i64> {
        self.posts.last().map(|p| p.seq)
    }

    async fn finish(self) -> LogResult<(Arc<Vec<Post>>, Vec<Worked>)> {
        let mut worked = Vec::with_capacity(self.posts.len());
        for part in self.parts {
            worked.extend(part.await.map_err(|e| LogError::Broken(format!("the audit's checks stopped: {e}")))?);
        }
        if worked.len() != self.posts.len() {
            return Err(LogError::Broken("the audit's checks of a page were cut short".into()));
        }
        Ok((self.posts, worked))
    }
}

/// What a walk along the chain found.
pub struct ChainWalk {
    pub problems: Vec<String>,
    pub last_recomputed: Option<String>,
    /// Posts read and checked.
    pub checked: i64,
}

/// Checks the next post with `check`, naming each problem's post.
pub fn check_next(keys: &Keyring, check: &mut ChainCheck, post: &Post, recomputed: &str) -> Vec<String> {
    check.next(post, recomputed, || keys.check(post)).into_iter().map(|p| format!("post {}: {p}", post.seq)).collect()
}

/// Walks the chain from the post after `from_seq` (whose hash is `from_hash`) to `through`,
/// reporting every broken link after the `problems` already found. Each page's links and
/// receipts are worked out on every core, off the async workers ([`PageWork`]).
pub async fn walk_chain(
    store: &dyn Store,
    keys: &Arc<Keyring>,
    campaign: &adjutant_store::Campaign,
    (from_seq, from_hash, mut problems): (i64, String, Vec<String>),
    through: i64,
) -> LogResult<ChainWalk> {
    let mut check = ChainCheck::after(campaign, from_seq, from_hash, false);
    let mut last_recomputed = None;
    let mut checked = 0;
    let mut limit = POSTS_PAGE_MIN;
    while check.seq() < through {
        let mut page = store.posts(campaign.id, check.seq(), limit).await?;
        let read = page.len();
        page.retain(|post| post.seq <= through);
        if page.is_empty() {
            break;
        }
        let cut = page.len() < read;
        limit = next_posts_page(&page);
        let (posts, worked) = PageWork::start(keys, None, page).finish().await?;
        for (post, worked) in posts.iter().zip(worked) {
            checked += 1;
            let found = check.next(post, &worked.recomputed, || worked.receipt);
            problems.extend(found.into_iter().map(|p| format!("post {}: {p}", post.seq)));
            last_recomputed = Some(worked.recomputed);
        }
        if cut {
            break;
        }
    }
    Ok(ChainWalk { problems, last_recomputed, checked })
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
    pub fn genesis(campaign: &adjutant_store::Campaign) -> Self {
        Self { seq: 0, hash: crate::campaign::genesis(campaign), problems: Vec::new() }
    }
}

/// The chain checked up to `post`. Goes on from `prefix`, verified before (trusted within this
/// server's life, as the whole-campaign audit trusts it; none: from post 1); when the prefix
/// already reaches the post, only the post and its link to the one before are checked.
pub async fn chain_up_to(
    store: &dyn Store,
    keys: &Arc<Keyring>,
    campaign: &adjutant_store::Campaign,
    post: &Post,
    prefix: Option<Prefix>,
) -> LogResult<ChainWalk> {
    let id = post.campaign_id;
    match prefix {
        Some(prefix) if prefix.seq >= post.seq => {
            // Already verified: the post's own hash and its link to the previous post, again.
            let mut problems: Vec<String> =
                prefix.problems.into_iter().filter(|p| problem_seq(p).is_some_and(|seq| seq <= post.seq)).collect();
            let mut checked = 1;
            let mut check = match post.seq {
                1 => ChainCheck::from_genesis(campaign),
                seq => match store.posts(id, seq - 2, 1).await?.into_iter().find(|b| b.seq == seq - 1) {
                    Some(before) => {
                        checked += 1;
                        let mut check = ChainCheck::after(campaign, seq - 2, before.prev_hash.clone(), false);
                        problems.extend(check_next(keys, &mut check, &before, &link_hash(&before, &before.prev_hash)));
                        check
                    }
                    None => {
                        problems.push(format!("post {}: the post before it is missing", post.seq));
                        ChainCheck::after(campaign, seq - 1, post.prev_hash.clone(), false)
                    }
                },
            };
            if prefix.seq == post.seq && prefix.hash != post.hash {
                problems.push(format!("post {}: its hash is not the one verified before", post.seq));
            }
            let recomputed = link_hash(post, &post.prev_hash);
            problems.extend(check_next(keys, &mut check, post, &recomputed));
            let mut seen = std::collections::HashSet::new();
            problems.retain(|p| seen.insert(p.clone()));
            Ok(ChainWalk { problems, last_recomputed: Some(recomputed), checked })
        }
        prefix => {
            let from = prefix.unwrap_or_else(|| Prefix::genesis(campaign));
            walk_chain(store, keys, campaign, (from.seq, from.hash, from.problems), post.seq).await
        }
    }
}

/// The post a problem is about (`post N: ...`).
fn problem_seq(problem: &str) -> Option<i64> {
    problem.strip_prefix("post ")?.split(':').next()?.parse().ok()
}

/// Where a whole-campaign audit stopped: what it needs to go on from the next post.
#[derive(Debug, Clone)]
pub struct AuditCheckpoint {
    chain: ChainCheck,
    replay: Replay,
    outcomes_after: i64,
    snapshots_after: i64,
    /// The report as it stood after the last post, before the checks of what lies beyond the log.
    audit: CampaignAudit,
}

impl AuditCheckpoint {
    /// The last post verified.
    pub fn seq(&self) -> i64 {
        self.chain.seq()
    }

    /// The hash of the last post verified.
    pub fn head_hash(&self) -> &str {
        self.chain.head()
    }

    /// The broken links found in the verified prefix.
    pub fn chain_differences(&self) -> impl Iterator<Item = &Difference> {
        self.audit.differences.iter().filter(|d| d.check == "chain")
    }
}

/// Stored outcomes and snapshots read at once.
const PAGE: i64 = 1000;

/// Posts read at once: as many as fit in [`POSTS_PAGE_BYTES`] at the size of the posts of the
/// page before, between [`POSTS_PAGE_MIN`] and [`POSTS_PAGE_MAX`] (the first page: the least).
/// The receipts of a larger page cost less each in their batch equation; the bound in bytes
/// keeps a campaign of long posts from holding much memory, three pages at once (one being
/// read, one worked out, one folded in).
const POSTS_PAGE_MAX: i64 = 4000;
const POSTS_PAGE_MIN: i64 = 64;
const POSTS_PAGE_BYTES: usize = 4 << 20;

/// How many posts to read next, after `page`.
fn next_posts_page(page: &[Post]) -> i64 {
    let bytes: usize = page
        .iter()
        .map(|post| {
            std::mem::size_of::<Post>()
                + post.kind.len()
                + post.side.as_ref().map_or(0, String::len)
                + post.body.len()
                + post.prev_hash.len()
                + post.hash.len()
                + post.receipt.as_ref().map_or(0, |r| r.key_id.len() + r.signature.len())
        })
        .sum();
    let per_post = (bytes / page.len().max(1)).max(1);
    i64::try_from(POSTS_PAGE_BYTES / per_post).unwrap_or(i64::MAX).clamp(POSTS_PAGE_MIN, POSTS_PAGE_MAX)
}

/// Stored rows of one kind (outcomes in position order, snapshots in post order), read a page
/// at a time ahead of the posts they belong to, and not again once they have run out.
struct ReadAhead<T> {
    rows: VecDeque<T>,
    /// The key (position, or post) of the last row read.
    after: i64,
    read_all: bool,
    /// The post a row belongs to, and its key.
    post_of: fn(&T) -> i64,
    key_of: fn(&T) -> i64,
}

impl<T> ReadAhead<T> {
    fn new(after: i64, post_of: fn(&T) -> i64, key_of: fn(&T) -> i64) -> Self {
        Self { rows: VecDeque::new(), after, read_all: false, post_of, key_of }
    }

    /// Reads on until a row of a post after `seq` is in, or none is left; `everything`: reads
    /// all that is left.
    async fn read_through<F>(&mut self, seq: i64, everything: bool, read: impl Fn(i64) -> F) -> LogResult<()>
    where
        F: std::future::Future<Output = adjutant_store::Result<Vec<T>>>,
    {
        while everything || (!self.read_all && self.rows.back().is_none_or(|row| (self.post_of)(row) <= seq)) {
            let page = read(self.after).await?;
            self.read_all = (page.len() as i64) < PAGE;
            let Some(last) = page.last() else { break };
            self.after = (self.key_of)(last);
            self.rows.extend(page);
        }
        Ok(())
    }

    /// The next row if it belongs to a post up to `seq`.
    fn next_through(&mut self, seq: i64) -> Option<T> {
        if self.rows.front().is_some_and(|row| (self.post_of)(row) <= seq) {
            self.rows.pop_front()
        } else {
            None
        }
    }
}

/// Replays the log after `from` (or all of it), then checks what is stored beyond the last post.
///
/// A pipeline: while one page of posts is worked out on every core ([`PageWork`]), the page
/// after it and the stored rows up to its last post are read, and the page before it is folded
/// into the chain check and the replay, post by post.
pub async fn replay_from(
    store: &dyn Store,
    keys: &Arc<Keyring>,
    campaign: &LoadedCampaign,
    from: Option<&AuditCheckpoint>,
) -> LogResult<(CampaignAudit, AuditCheckpoint)> {
    let started = std::time::Instant::now();
    let id = campaign.campaign.id;
    let AuditCheckpoint { mut chain, mut replay, outcomes_after, snapshots_after, mut audit } =
        from.cloned().unwrap_or_else(|| AuditCheckpoint {
            chain: ChainCheck::from_genesis(&campaign.campaign),
            replay: Replay::new(campaign),
            outcomes_after: 0,
            snapshots_after: 0,
            audit: CampaignAudit {
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
            },
        });
    audit.replayed_now = 0;
    let differ = |audit: &mut CampaignAudit, seq: i64, check: &str, detail: String| {
        audit.differences.push(Difference { seq, check: check.into(), detail });
    };

    let mut outcomes = ReadAhead::new(outcomes_after, |o: &Outcome| o.seq, |o| o.position);
    let mut snapshots = ReadAhead::new(snapshots_after, |(seq, _): &(i64, String)| *seq, |(seq, _)| *seq);
    let read_outcomes = |after| store.outcomes(id, after, PAGE);
    let read_snapshots = |after| store.snapshots(id, after, PAGE);
    // What the rows consumed so far reach: the checkpoint goes on after them.
    let (mut outcomes_done, mut snapshots_done) = (outcomes_after, snapshots_after);
    let shared = Arc::new(campaign.clone());
    let mut posts = store.posts(id, chain.seq(), POSTS_PAGE_MIN).await?;
    let mut working: Option<PageWork> = None;
    loop {
        let limit = next_posts_page(&posts);
        let work = (!posts.is_empty()).then(|| PageWork::start(keys, Some(&shared), std::mem::take(&mut posts)));
        if let Some(last) = work.as_ref().and_then(PageWork::last_seq) {
            let (next, outcomes_read, snapshots_read) = tokio::join!(
                store.posts(id, last, limit),
                outcomes.read_through(last, false, read_outcomes),
                snapshots.read_through(last, false, read_snapshots),
            );
            posts = next?;
            outcomes_read?;
            snapshots_read?;
        }
        if let Some(page) = working.take() {
            let (posts, worked) = page.finish().await?;
            for (post, worked) in posts.iter().zip(worked) {
                audit.posts += 1;
                audit.replayed_now += 1;
                for problem in chain.next(post, &worked.recomputed, || worked.receipt) {
                    differ(&mut audit, post.seq, problem.check(), problem.to_string());
                }

                // What was stored for this post (read ahead with the page).
                outcomes.read_through(post.seq, false, read_outcomes).await?;
                let mut mine = Vec::new();
                while let Some(o) = outcomes.next_through(post.seq) {
                    outcomes_done = o.position;
                    if o.seq == post.seq {
                        mine.push(o);
                    } else {
                        differ(&mut audit, o.seq, "outcomes", format!("outcome {} belongs to no post", o.id));
                    }
                }
                snapshots.read_through(post.seq, false, read_snapshots).await?;
                let stored_snapshot = snapshots.next_through(post.seq).filter(|(seq, _)| *seq == post.seq);
                if stored_snapshot.is_some() {
                    snapshots_done = post.seq;
                }

                // The rules, again, on the replayed state. The stored snapshot a rollback goes
                // back to was itself checked against the replay when it was reached.
                let rollback_snapshot = match worked.needs.rollback_snapshot {
                    Some(to_seq) => store.snapshot_at(id, to_seq).await?,
                    None => None,
                };
                let stored = Stored {
                    outcomes: mine.iter().map(|o| (o.kind.as_str(), o.data.as_str())).collect(),
                    snapshot: stored_snapshot.as_ref().map(|(_, text)| text.as_str()),
                };
                let found =
                    replay.fold(campaign, post, worked.needs, &stored, rollback_snapshot.as_ref(), worked.verdict);
                for found in found {
                    differ(&mut audit, found.seq, found.check.as_str(), found.detail);
                }
            }
            if let Some(last) = posts.last() {
                audit.head_hash = Some(last.hash.clone());
            }
        }
        match work {
            Some(work) => working = Some(work),
            None => break,
        }
    }
    audit.outcomes = replay.counts.outcomes;
    audit.snapshots = replay.counts.snapshots;
    audit.result_numbers = replay.counts.result_numbers;
    audit.reinforcement_rolls = replay.counts.reinforcement_rolls;
    audit.dice = replay.counts.dice;
    audit.void_posts = replay.view().void().len();
    let checkpoint = AuditCheckpoint {
        chain,
        replay,
        outcomes_after: outcomes_done,
        snapshots_after: snapshots_done,
        audit: audit.clone(),
    };
    // Whatever is stored beyond the last post belongs to no post: an outcome there would reach
    // the feed, a snapshot there would pass for the state.
    outcomes.read_through(i64::MAX, true, read_outcomes).await?;
    for o in outcomes.rows {
        differ(&mut audit, o.seq, "outcomes", format!("outcome {} belongs to no post", o.id));
    }
    snapshots.read_through(i64::MAX, true, read_snapshots).await?;
    for (seq, _) in snapshots.rows {
        differ(&mut audit, seq, "snapshot", format!("a state snapshot for post {seq}, which is not in the log"));
    }
    audit.ok = audit.differences.is_empty();
    audit.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok((audit, checkpoint))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use uuid::Uuid;

    fn posts(n: i64, body_bytes: usize) -> Vec<Post> {
        (1..=n)
            .map(|seq| Post {
                campaign_id: Uuid::from_u128(7),
                seq,
                stamp: Utc.timestamp_millis_opt(1_700_000_000_000 + seq).unwrap(),
                author_id: Uuid::from_u128(2),
                side: None,
                kind: "resolve".into(),
                body: "x".repeat(body_bytes),
                prev_hash: "0".repeat(64),
                hash: "1".repeat(64),
                receipt: Some(adjutant_store::Receipt { key_id: "ed25519:0".into(), signature: "2".repeat(128) }),
            })
            .collect()
    }

    #[test]
    fn a_page_of_posts_is_bounded_by_their_size() {
        // Short posts: the most a page takes.
        assert_eq!(next_posts_page(&posts(64, 300)), POSTS_PAGE_MAX);
        // Posts at the default body limit (64 KiB): a page stays within its bytes.
        let long = posts(64, 65_536);
        let limit = next_posts_page(&long);
        assert!(limit < POSTS_PAGE_MAX / 10, "{limit}");
        assert!(limit as usize * 65_536 <= POSTS_PAGE_BYTES, "{limit}");
        // Posts larger still: never fewer than the least page, so the audit goes on.
        assert_eq!(next_posts_page(&posts(4, 1 << 22)), POSTS_PAGE_MIN);
        // An empty page (the end of the log) asks for the most.
        assert_eq!(next_posts_page(&[]), POSTS_PAGE_MAX);
    }
}
