//! The fold over a campaign's log: which posts rollbacks voided and which sealed choices stand.
//! Every reader of the log (the live append, the per-post audit, the whole-campaign replay, the
//! offline verifier, the page, the feed, the export) builds it with [`LogView::apply`], so they
//! cannot disagree about it.

use adjutant_store::{IndexedPostKind, Post};
use serde_json::Value;

use super::bodies::{SealBody, SealRole};
use super::kinds::PostKind;

/// What the log says so far, folded post by post: the void posts and the standing seals.
#[derive(Debug, Clone, Default)]
pub struct LogView {
    void: VoidSet,
    seals: SealBook,
}

impl LogView {
    /// The kinds of post that change the view: a reader that wants only the view need read no
    /// other posts.
    pub const KINDS: [IndexedPostKind; 2] = [IndexedPostKind::Rollback, IndexedPostKind::Seal];

    /// The view after `posts`, in log order.
    pub fn of<'a>(posts: impl IntoIterator<Item = &'a Post>) -> Self {
        let mut view = LogView::default();
        for post in posts {
            view.apply(post);
        }
        view
    }

    /// Folds in the next post of the log. A rollback voids every post after the one it rolls
    /// back to, up to itself, and the seals among them; a seal stands until a rollback voids it.
    pub fn apply(&mut self, post: &Post) {
        match PostKind::of(&post.kind) {
            PostKind::Rollback => {
                let to_seq = rollback_target(post);
                self.void.insert(to_seq + 1..post.seq);
                self.seals.void(to_seq + 1..post.seq);
            }
            PostKind::Seal => {
                if let Some(seal) = Seal::of(post) {
                    self.seals.insert(seal);
                }
            }
            _ => {}
        }
    }

    pub fn void(&self) -> &VoidSet {
        &self.void
    }

    pub fn seals(&self) -> &SealBook {
        &self.seals
    }

    /// Whether a reader is kept from a post's body: a sealed choice whose topic does not have
    /// both choices in among the standing seals. Its hash is public; its choice and salt are not.
    pub fn hides(&self, kind: &str, body: &Value) -> bool {
        PostKind::of(kind) == PostKind::Seal
            && self.seals.pair(body.get("topic").and_then(Value::as_str).unwrap_or_default()).is_none()
    }
}

/// The deployment still sealed in a campaign that seals deployments (rules version 3): the one
/// `deploy` post that stands when only one does. The rules accept one deployment a side, so two
/// standing deployments have revealed each other; a rollback that voids the second seals the
/// first again, as the replayed state does. `deploys` are the campaign's `deploy` posts.
pub fn sealed_deployment(deploys: &[Post], void: &VoidSet) -> Option<i64> {
    match deploys.iter().filter(|p| !void.contains(&p.seq)).collect::<Vec<_>>().as_slice() {
        [only] => Some(only.seq),
        _ => None,
    }
}

/// The post a rollback rolls back to (itself when its body cannot be read, voiding nothing).
pub fn rollback_target(rollback: &Post) -> i64 {
    body_value(rollback).get("to_seq").and_then(Value::as_i64).unwrap_or(rollback.seq)
}

/// Parses a stored body (always canonical JSON).
pub fn body_value(post: &Post) -> Value {
    serde_json::from_str(&post.body).unwrap_or(Value::Null)
}

/// A sealed choice in the log.
#[derive(Debug, Clone)]
pub struct Seal {
    pub seq: i64,
    pub side: Option<String>,
    pub body: SealBody,
}

impl Seal {
    pub fn of(post: &Post) -> Option<Seal> {
        (PostKind::of(&post.kind) == PostKind::Seal)
            .then(|| serde_json::from_str(&post.body).ok())
            .flatten()
            .map(|body| Seal { seq: post.seq, side: post.side.clone(), body })
    }
}

thread_local! {
    static WORK: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Steps taken by this thread in [`VoidSet`] and [`SealBook`] (ranges and seals visited), so
/// tests can show that reads cost what the log's size says, not its square.
pub fn work_done() -> u64 {
    WORK.with(|w| w.get())
}

fn work(steps: u64) {
    WORK.with(|w| w.set(w.get().saturating_add(steps)));
}

/// The posts made void by rollbacks, as disjoint ranges of sequence numbers: a rollback voids
/// a range, and a thousand rollbacks cost a thousand range inserts, not the sum of their
/// lengths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VoidSet {
    /// start → end (exclusive); disjoint and not touching.
    ranges: std::collections::BTreeMap<i64, i64>,
    len: i64,
}

impl VoidSet {
    pub fn contains(&self, seq: &i64) -> bool {
        work(1);
        self.ranges.range(..=*seq).next_back().is_some_and(|(_, end)| seq < end)
    }

    /// How many posts are void.
    pub fn len(&self) -> i64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Voids `range`, merging it with the ranges it overlaps or touches.
    pub fn insert(&mut self, range: std::ops::Range<i64>) {
        let (mut start, mut end) = (range.start, range.end);
        if start >= end {
            return;
        }
        work(1);
        if let Some((&s, &e)) = self.ranges.range(..=start).next_back() {
            if e >= start {
                start = s;
                end = end.max(e);
            }
        }
        let absorbed: Vec<(i64, i64)> = self.ranges.range(start..=end).map(|(s, e)| (*s, *e)).collect();
        for (s, e) in absorbed {
            work(1);
            self.ranges.remove(&s);
            self.len -= e - s;
            end = end.max(e);
        }
        self.ranges.insert(start, end);
        self.len += end - start;
    }

    /// The posts of `range` that are not void yet, in order.
    pub fn gaps(&self, range: std::ops::Range<i64>) -> Vec<i64> {
        let mut out = Vec::new();
        let mut at = range.start;
        if let Some((_, &e)) = self.ranges.range(..=at).next_back() {
            at = at.max(e);
        }
        for (&s, &e) in self.ranges.range(range.start..range.end) {
            work(1);
            out.extend(at..s.min(range.end));
            at = at.max(e);
        }
        out.extend(at..range.end);
        out
    }
}

/// Sealed choices by topic, so a seal or a resolve post looks up its topic instead of reading
/// every seal.
#[derive(Debug, Clone, Default)]
pub struct SealBook {
    by_topic: std::collections::HashMap<String, Vec<Seal>>,
    /// seq → topic, to drop the seals a rollback voids.
    by_seq: std::collections::BTreeMap<i64, String>,
}

impl SealBook {
    pub fn insert(&mut self, seal: Seal) {
        work(1);
        self.by_seq.insert(seal.seq, seal.body.topic.clone());
        self.by_topic.entry(seal.body.topic.clone()).or_default().push(seal);
    }

    /// The seals on `topic`, in log order.
    pub fn on_topic(&self, topic: &str) -> &[Seal] {
        work(1);
        self.by_topic.get(topic).map(Vec::as_slice).unwrap_or_default()
    }

    /// Drops the seals of posts in `range` (voided by a rollback).
    pub fn void(&mut self, range: std::ops::Range<i64>) {
        let dropped: Vec<(i64, String)> = self.by_seq.range(range).map(|(s, t)| (*s, t.clone())).collect();
        for (seq, topic) in dropped {
            work(1);
            self.by_seq.remove(&seq);
            if let Some(seals) = self.by_topic.get_mut(&topic) {
                seals.retain(|s| s.seq != seq);
                if seals.is_empty() {
                    self.by_topic.remove(&topic);
                }
            }
        }
    }

    /// The attacker's and the defender's choices on `topic`, when both are in from the two
    /// sides.
    pub fn pair(&self, topic: &str) -> Option<(&Seal, &Seal)> {
        let seals = self.on_topic(topic);
        let find = |role: SealRole| seals.iter().find(|s| s.body.role == role);
        let (attacker, defender) = (find(SealRole::Attacker)?, find(SealRole::Defender)?);
        (attacker.side != defender.side).then_some((attacker, defender))
    }

    /// Topics whose two choices are both in: their seals can be shown.
    pub fn revealed_topics(&self) -> std::collections::BTreeSet<String> {
        self.by_topic.keys().filter(|topic| self.pair(topic).is_some()).cloned().collect()
    }
}

impl FromIterator<Seal> for SealBook {
    fn from_iter<I: IntoIterator<Item = Seal>>(seals: I) -> Self {
        let mut book = SealBook::default();
        for seal in seals {
            book.insert(seal);
        }
        book
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seal(seq: i64, topic: &str, role: SealRole, side: &str) -> Seal {
        Seal {
            seq,
            side: Some(side.to_owned()),
            body: SealBody { topic: topic.to_owned(), role, choice: "stay".into(), salt: String::new() },
        }
    }

    #[test]
    fn void_ranges_merge_and_answer_as_a_set_would() {
        let mut void = VoidSet::default();
        let mut naive = std::collections::BTreeSet::new();
        for (to_seq, seq) in [(5, 9), (1, 3), (8, 12), (20, 22), (2, 21), (30, 31), (40, 45)] {
            assert_eq!(
                void.gaps(to_seq + 1..seq),
                (to_seq + 1..seq).filter(|s| !naive.contains(s)).collect::<Vec<_>>()
            );
            void.insert(to_seq + 1..seq);
            naive.extend(to_seq + 1..seq);
            for s in 0..50 {
                assert_eq!(void.contains(&s), naive.contains(&s), "{s} after ({to_seq}, {seq})");
            }
            assert_eq!(void.len(), naive.len() as i64);
        }
    }

    /// 5,000 rollbacks and 5,000 seals: reading the void posts, checking every post against
    /// them, a new rollback's voided posts, the revealed topics and a seal's lookups take a
    /// number of steps proportional to the log, where the lists they replace took its square
    /// (12.5 million steps for the rollbacks alone).
    #[test]
    fn thousands_of_rollbacks_and_seals_cost_a_fixed_budget_per_item() {
        const N: i64 = 5_000;
        // Every rollback back to post 1 (each voids the whole log since), then disjoint ones.
        let all_back: Vec<(i64, i64)> = (0..N).map(|i| (1, 3 + 2 * i)).collect();
        let disjoint: Vec<(i64, i64)> = (0..N).map(|i| (3 * i + 1, 3 * i + 3)).collect();
        for rollbacks in [all_back, disjoint] {
            let start = work_done();
            let mut void = VoidSet::default();
            for (to_seq, seq) in &rollbacks {
                void.insert(to_seq + 1..*seq);
            }
            let last = rollbacks.last().map_or(0, |r| r.1);
            let void_count = (1..=last).filter(|s| void.contains(s)).count();
            assert!(void_count > 0);
            // The next rollback, back to post 1.
            let voided = void.gaps(2..last + 2);
            assert!(!voided.is_empty());
            let steps = work_done() - start;
            assert!(steps <= 6 * N as u64, "{steps} steps for {N} rollbacks");
        }

        let start = work_done();
        let mut book = SealBook::default();
        for i in 0..N {
            let (role, side) =
                if i % 2 == 0 { (SealRole::Attacker, "union") } else { (SealRole::Defender, "confederate") };
            book.insert(seal(i + 1, &format!("topic-{}", i / 2), role, side));
        }
        assert_eq!(book.revealed_topics().len() as i64, N / 2);
        for i in 0..N / 2 {
            assert!(book.pair(&format!("topic-{i}")).is_some());
        }
        book.void(N / 2..N + 1);
        assert!(book.revealed_topics().len() as i64 <= N / 4 + 1);
        let steps = work_done() - start;
        assert!(steps <= 8 * N as u64, "{steps} steps for {N} seals");
    }
}
