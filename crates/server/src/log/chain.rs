//! The hash chain: how a post's hash is made, and how a run of posts is checked link by link.
//! The append makes hashes with [`link_hash`]; the per-post audit, the whole-campaign audit and
//! the offline verifier check them with [`ChainCheck`].

use adjutant_rules::chain::{genesis_rule, Link};
use adjutant_store::{Campaign, Post};

/// The hash of `post`'s fields chained to `prev_hash` (its stored `hash` and `receipt` aside).
pub fn link_hash(post: &Post, prev_hash: &str) -> String {
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

/// A broken link, or a receipt that does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkProblem {
    /// The post is not the one after the last.
    OutOfOrder { expected: i64 },
    /// Its `prev_hash` is not the hash of the post before (or of the genesis, for post 1).
    BrokenLink { prev_hash: String, expected: String, first: bool },
    /// Its fields hash to something else than its stored hash.
    Changed { stored: String, recomputed: String },
    /// No receipt where one is due, or one whose signature does not hold.
    Receipt(String),
}

impl LinkProblem {
    /// The audit's name for the check (`chain` or `receipt`).
    pub fn check(&self) -> &'static str {
        match self {
            LinkProblem::Receipt(_) => "receipt",
            _ => "chain",
        }
    }
}

impl std::fmt::Display for LinkProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkProblem::OutOfOrder { expected } => write!(f, "sequence number out of order (expected {expected})"),
            LinkProblem::BrokenLink { prev_hash, expected, first } => {
                let what = if *first {
                    "the genesis (the hash of the campaign's creation record)"
                } else {
                    "the previous post's hash"
                };
                write!(f, "prev_hash {prev_hash} is not {what} {expected}")
            }
            LinkProblem::Changed { stored, recomputed } => write!(
                f,
                "stored hash {stored} but the post's fields hash to {recomputed}: it was changed after it was written"
            ),
            LinkProblem::Receipt(problem) => f.write_str(problem),
        }
    }
}

/// Walks a chain post by post: each post must follow the last one checked, link to its hash,
/// hash to its own stored hash, and carry a receipt that holds where one is due.
#[derive(Debug, Clone)]
pub struct ChainCheck {
    expected_seq: i64,
    expected_prev: String,
    /// Every post of a campaign whose chain starts from its creation record is signed; in an
    /// older campaign, every post after the first signed one.
    legacy: bool,
    signed_before: bool,
}

impl ChainCheck {
    /// From the start: post 1 links to the campaign's genesis hash.
    pub fn from_genesis(campaign: &Campaign) -> Self {
        Self::after(campaign, 0, crate::campaign::genesis(campaign), false)
    }

    /// Going on after post `seq` with hash `hash`, verified before; `signed_before` when a post
    /// up to it carried a receipt.
    pub fn after(campaign: &Campaign, seq: i64, hash: String, signed_before: bool) -> Self {
        Self {
            expected_seq: seq + 1,
            expected_prev: hash,
            legacy: campaign.chain_genesis == genesis_rule::LEGACY,
            signed_before,
        }
    }

    /// Checks the next post: `recomputed` is [`link_hash`] of it over its own `prev_hash`, and
    /// `signature` checks its receipt's signature (`None`: it holds), called only when it has
    /// one. Every problem found, in order.
    pub fn next(
        &mut self,
        post: &Post,
        recomputed: &str,
        signature: impl FnOnce() -> Option<String>,
    ) -> Vec<LinkProblem> {
        let mut problems = self.skip(post.seq, &post.prev_hash, &post.hash);
        if recomputed != post.hash {
            problems.push(LinkProblem::Changed { stored: post.hash.clone(), recomputed: recomputed.to_owned() });
        }
        match &post.receipt {
            None if !self.legacy || self.signed_before => problems.push(LinkProblem::Receipt(
                "it has no receipt, though the server signs every post: the post was written or replaced behind the server's back".into(),
            )),
            None => {}
            Some(_) => problems.extend(signature().map(LinkProblem::Receipt)),
        }
        self.signed_before |= post.receipt.is_some();
        problems
    }

    /// The hash the next post must link to.
    pub fn head(&self) -> &str {
        &self.expected_prev
    }

    /// The last post checked (0: none).
    pub fn seq(&self) -> i64 {
        self.expected_seq - 1
    }

    /// A post whose fields cannot be read (its stamp is not a time): only its place in the
    /// chain is checked, and the chain goes on from its stored hash.
    pub fn skip(&mut self, seq: i64, prev_hash: &str, hash: &str) -> Vec<LinkProblem> {
        let mut problems = Vec::new();
        if seq != self.expected_seq {
            problems.push(LinkProblem::OutOfOrder { expected: self.expected_seq });
        }
        if prev_hash != self.expected_prev {
            problems.push(LinkProblem::BrokenLink {
                prev_hash: prev_hash.to_owned(),
                expected: self.expected_prev.clone(),
                first: self.expected_seq == 1,
            });
        }
        self.expected_prev = hash.to_owned();
        self.expected_seq = seq + 1;
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use uuid::Uuid;

    fn campaign(legacy: bool) -> Campaign {
        Campaign {
            id: Uuid::from_u128(7),
            name: "Test".into(),
            moderator_id: Uuid::from_u128(1),
            mode: "resolver".into(),
            scenario: None,
            scenario_text: None,
            ruleset: Some("schulz".into()),
            settings: "{}".into(),
            created_at: Utc.timestamp_millis_opt(1_700_000_000_000).unwrap(),
            chain_genesis: if legacy { genesis_rule::LEGACY.into() } else { "creation_record".into() },
        }
    }

    fn chain(campaign: &Campaign, n: i64) -> Vec<Post> {
        let mut prev = crate::campaign::genesis(campaign);
        (1..=n)
            .map(|seq| {
                let mut post = Post {
                    campaign_id: campaign.id,
                    seq,
                    stamp: Utc.timestamp_millis_opt(1_700_000_000_000 + seq * 1000).unwrap(),
                    author_id: Uuid::from_u128(2),
                    side: Some("union".into()),
                    kind: "note".into(),
                    body: format!("{{\"text\":\"{seq}\"}}"),
                    prev_hash: prev.clone(),
                    hash: String::new(),
                    receipt: Some(adjutant_store::Receipt { key_id: "k".into(), signature: "s".into() }),
                };
                post.hash = link_hash(&post, &prev);
                prev = post.hash.clone();
                post
            })
            .collect()
    }

    fn walk(campaign: &Campaign, posts: &[Post]) -> Vec<(i64, LinkProblem)> {
        let mut check = ChainCheck::from_genesis(campaign);
        posts
            .iter()
            .flat_map(|p| check.next(p, &link_hash(p, &p.prev_hash), || None).into_iter().map(|x| (p.seq, x)))
            .collect()
    }

    #[test]
    fn a_whole_chain_checks_and_each_kind_of_break_is_named_at_its_post() {
        let c = campaign(false);
        let posts = chain(&c, 5);
        assert!(walk(&c, &posts).is_empty());

        let mut changed = posts.clone();
        changed[2].body = "{\"text\":\"forged\"}".into();
        assert!(matches!(walk(&c, &changed).as_slice(), [(3, LinkProblem::Changed { .. })]));

        let mut cut = posts.clone();
        cut.remove(1);
        let found = walk(&c, &cut);
        assert!(found.contains(&(3, LinkProblem::OutOfOrder { expected: 2 })), "{found:?}");
        assert!(found.iter().any(|(seq, p)| *seq == 3 && matches!(p, LinkProblem::BrokenLink { .. })));

        let mut unsigned = posts.clone();
        unsigned[4].receipt = None;
        assert!(matches!(walk(&c, &unsigned).as_slice(), [(5, LinkProblem::Receipt(_))]));

        let mut check = ChainCheck::from_genesis(&c);
        let refused = check.next(&posts[0], &posts[0].hash, || Some("bad signature".into()));
        assert_eq!(refused, vec![LinkProblem::Receipt("bad signature".into())]);
    }

    #[test]
    fn a_legacy_campaign_needs_receipts_only_after_its_first_signed_post() {
        let c = campaign(true);
        let mut posts = chain(&c, 3);
        posts[0].receipt = None;
        assert!(walk(&c, &posts).is_empty());
        posts[2].receipt = None;
        assert!(matches!(walk(&c, &posts).as_slice(), [(3, LinkProblem::Receipt(_))]));
    }
}
