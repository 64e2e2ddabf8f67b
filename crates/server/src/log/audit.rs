//! The audit of a stored log: every post replayed through the rules and every link and
//! receipt checked, from post 1 or from where the last audit stopped; and one post on its own.

use std::sync::Arc;

use adjutant_store::{Post, Store};

use super::chain::{link_hash, ChainCheck};
use super::error::{LogError, LogResult};
use super::read::ReadContext;
use super::replay::{Finding, Replay, Stored};
use crate::campaign::LoadedCampaign;
use crate::sealed_delay;
use crate::signing::Keyring;
use crate::views::{CampaignAudit, Difference};

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

/// Each post's recomputed hash and receipt check, worked out for a page of posts at once on
/// every core, off the async workers: the SHA-256 links and the signatures are independent of
/// one another once the stored rows are read, and the signatures are most of a cold audit's time.
async fn page_checks(keys: &Arc<Keyring>, posts: Vec<Post>) -> LogResult<(Vec<Post>, Vec<(String, Option<String>)>)> {
    let keys = keys.clone();
    tokio::task::spawn_blocking(move || {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
        let chunk = posts.len().div_ceil(threads).max(1);
        let checks = std::thread::scope(|scope| {
            let workers: Vec<_> = posts
                .chunks(chunk)
                .map(|part| {
                    let keys = &keys;
                    scope.spawn(move || {
                        part.iter().map(|p| (link_hash(p, &p.prev_hash), keys.check(p))).collect::<Vec<_>>()
                    })
                })
                .collect();
            workers.into_iter().flat_map(|w| w.join().unwrap_or_default()).collect::<Vec<_>>()
        });
        (posts, checks)
    })
    .await
    .map_err(|e| LogError::Broken(format!("the audit's checks stopped: {e}")))
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
/// reporting every broken link after the `problems` already found.
pub async fn walk_chain(
    store: &dyn Store,
    keys: &Keyring,
    campaign: &adjutant_store::Campaign,
    (from_seq, from_hash, mut problems): (i64, String, Vec<String>),
    through: i64,
) -> LogResult<ChainWalk> {
    let mut check = ChainCheck::after(campaign, from_seq, from_hash, false);
    let mut last_recomputed = None;
    let mut checked = 0;
    'pages: while check.seq() < through {
        let page = store.posts(campaign.id, check.seq(), 500).await?;
        if page.is_empty() {
            break;
        }
        for post in &page {
            if post.seq > through {
                break 'pages;
            }
            checked += 1;
            let recomputed = link_hash(post, &post.prev_hash);
            problems.extend(check_next(keys, &mut check, post, &recomputed));
            last_recomputed = Some(recomputed);
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
    keys: &Keyring,
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

const PAGE: i64 = 1000;

/// Replays the log after `from` (or all of it), then checks what is stored beyond the last post.
pub async fn replay_from(
    store: &dyn Store,
    keys: &Arc<Keyring>,
    campaign: &LoadedCampaign,
    from: Option<&AuditCheckpoint>,
) -> LogResult<(CampaignAudit, AuditCheckpoint)> {
    use std::collections::VecDeque;
    let started = std::time::Instant::now();
    let id = campaign.campaign.id;
    let AuditCheckpoint { mut chain, mut replay, mut outcomes_after, mut snapshots_after, mut audit } =
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

    let mut stored_outcomes: VecDeque<adjutant_store::Outcome> = VecDeque::new();
    let mut stored_snapshots: VecDeque<(i64, String)> = VecDeque::new();
    let (mut outcomes_read, mut snapshots_read) = (false, false);
    // What the rows consumed so far reach: the checkpoint goes on after them.
    let (mut outcomes_done, mut snapshots_done) = (outcomes_after, snapshots_after);
    loop {
        let posts = store.posts(id, chain.seq(), PAGE).await?;
        if posts.is_empty() {
            break;
        }
        let (posts, checks) = page_checks(keys, posts).await?;
        if checks.len() != posts.len() {
            return Err(LogError::Broken("the audit's checks of a page were cut short".into()));
        }
        for (post, (recomputed, signature)) in posts.iter().zip(checks) {
            audit.posts += 1;
            audit.replayed_now += 1;
            for problem in chain.next(post, &recomputed, || signature) {
                differ(&mut audit, post.seq, problem.check(), problem.to_string());
            }

            // What was stored for this post.
            // Read ahead a page at a time, and not again once the stored rows have run out.
            while !outcomes_read && stored_outcomes.back().is_none_or(|o| o.seq <= post.seq) {
                let page = store.outcomes(id, outcomes_after, PAGE).await?;
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
                let page = store.snapshots(id, snapshots_after, PAGE).await?;
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

            // The rules, again, on the replayed state. The stored snapshot a rollback goes back
            // to was itself checked against the replay when it was reached.
            let rollback_snapshot = match Replay::needs(campaign, post).rollback_snapshot {
                Some(to_seq) => store.snapshot_at(id, to_seq).await?,
                None => None,
            };
            let stored = Stored {
                outcomes: mine.iter().map(|o| (o.kind.as_str(), o.data.as_str())).collect(),
                snapshot: stored_snapshot.as_ref().map(|(_, text)| text.as_str()),
            };
            for found in replay.post(campaign, post, &stored, rollback_snapshot.as_ref()) {
                differ(&mut audit, found.seq, found.check.as_str(), found.detail);
            }
            audit.head_hash = Some(post.hash.clone());
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
    loop {
        let page = store.outcomes(id, outcomes_after, PAGE).await?;
        let Some(last) = page.last() else { break };
        outcomes_after = last.position;
        stored_outcomes.extend(page);
    }
    for o in stored_outcomes {
        differ(&mut audit, o.seq, "outcomes", format!("outcome {} belongs to no post", o.id));
    }
    loop {
        let page = store.snapshots(id, snapshots_after, PAGE).await?;
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
