//! `adjutant verify FILE [--key PUBKEY]… [--forum-texts DIR]`: checks a campaign's export with
//! no server and no database.
//!
//! From the creation record it recomputes the genesis, then walks every post: its sequence
//! number, its link to the post before, its hash, its receipt's Ed25519 signature, and its
//! replay through the rules (which re-derives every result number, reinforcement roll and die
//! from the stamps) against the stored outcomes and state. Given the bot's forum posts (one
//! file each), it checks that each one's post, hash and signature are those of the export, so a
//! log cut short or rewritten after the bot posted is found. Every problem names its post.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use adjutant_rules::chain::genesis_rule;
use adjutant_store::{Campaign, Post};
use chrono::{DateTime, Utc};
use ed25519_dalek::VerifyingKey;
use uuid::Uuid;

use crate::campaign::{LoadedCampaign, Scenarios};
use crate::export::{Line, OutcomeRecord, PostRecord, FORMAT};
use crate::log::chain::{link_hash, ChainCheck};
use crate::log::kinds::{OutcomeKind, PostKind};
use crate::log::replay::{Replay, Stored};
use crate::signing::{key_id, parse_public_key, signature_holds};
use adjutant_forum::{trailing_marker, witness_of};

pub const USAGE: &str = "usage: adjutant verify FILE [--key PUBKEY]... [--forum-texts DIR]

Checks a campaign's export (GET /v1/campaigns/{id}/export) with no server and no database:
the chain from the campaign's creation record, every post's hash and signed receipt, every
outcome and state replayed through the rules. PUBKEY is the server's public key (64 hex digits,
from GET /v1/keys or the server's start-up lines); without --key the keys the file lists are
used, which proves the file consistent but not that the server signed it. DIR holds the bot's
forum posts, one file each: each must match the export. Exits 1 when anything is wrong.";

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub file: PathBuf,
    pub keys: Vec<String>,
    pub forum_texts: Option<PathBuf>,
}

pub fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut options = Options::default();
    let mut file = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--key" => options.keys.push(args.next().ok_or("--key needs a public key")?.clone()),
            "--forum-texts" => options.forum_texts = Some(args.next().ok_or("--forum-texts needs a folder")?.into()),
            other if other.starts_with("--") => return Err(format!("unknown option {other}")),
            other if file.is_none() => file = Some(PathBuf::from(other)),
            other => return Err(format!("one file at a time ({other:?} is a second)")),
        }
    }
    options.file = file.ok_or("name the export file")?;
    Ok(options)
}

/// One thing found wrong, and the post it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub seq: Option<i64>,
    pub detail: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.seq {
            Some(seq) => write!(f, "post {seq}: {}", self.detail),
            None => f.write_str(&self.detail),
        }
    }
}

/// What was checked, and what was wrong.
#[derive(Debug, Default)]
pub struct Report {
    pub campaign: Option<Uuid>,
    pub posts: i64,
    pub links: i64,
    pub hashes: i64,
    pub signatures: i64,
    pub outcomes: i64,
    pub snapshots: i64,
    pub result_numbers: i64,
    pub reinforcement_rolls: i64,
    pub dice: i64,
    pub sealed: i64,
    pub forum_texts: i64,
    pub head_hash: Option<String>,
    pub notes: Vec<String>,
    pub problems: Vec<Finding>,
    /// No `--key` was given: receipts were checked against the keys the file itself lists.
    pub keys_from_file: bool,
}

impl Report {
    fn problem(&mut self, seq: Option<i64>, detail: impl Into<String>) {
        self.problems.push(Finding { seq, detail: detail.into() });
    }

    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// The report as printed.
    pub fn text(&self) -> String {
        let mut out = String::new();
        if let Some(id) = self.campaign {
            out.push_str(&format!("campaign {id}\n"));
        }
        out.push_str(&format!(
            "checked: {} posts, {} chain links from the genesis, {} hashes, {} receipt signatures, \
             {} outcomes and {} state snapshots replayed through the rules ({} result numbers, {} reinforcement \
             rolls, {} dice re-derived from the stamps), {} forum texts\n",
            self.posts,
            self.links,
            self.hashes,
            self.signatures,
            self.outcomes,
            self.snapshots,
            self.result_numbers,
            self.reinforcement_rolls,
            self.dice,
            self.forum_texts
        ));
        if let Some(head) = &self.head_hash {
            out.push_str(&format!("head: {head}\n"));
        }
        for note in &self.notes {
            out.push_str(&format!("note: {note}\n"));
        }
        if self.problems.is_empty() && self.keys_from_file {
            out.push_str(
                "ok: no problems, as far as the file goes: its receipts were checked against the keys it lists itself, \
                 so they prove nothing until you pass the server's public key with --key\n",
            );
        } else if self.problems.is_empty() {
            out.push_str("ok: no problems\n");
        } else {
            let n = self.problems.len();
            out.push_str(&format!("{n} problem{}:\n", if n == 1 { "" } else { "s" }));
            for p in &self.problems {
                out.push_str(&format!("  {p}\n"));
            }
        }
        out
    }
}

/// Runs the checks; `Err` only when the file cannot be read at all.
pub fn verify(options: &Options) -> Result<Report, String> {
    use std::io::BufRead;
    let file = std::fs::File::open(&options.file).map_err(|e| format!("{}: {e}", options.file.display()))?;
    let mut pinned = Vec::new();
    for key in &options.keys {
        let key = parse_public_key(key)?;
        pinned.push((key_id(&key), key));
    }
    let mut walk = Walk::new(pinned);
    for (number, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", options.file.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Line>(&line) {
            Ok(line) => walk.line(line),
            Err(e) => walk.report.problem(None, format!("line {}: not a line of an export: {e}", number + 1)),
        }
    }
    walk.finish();
    if let Some(dir) = &options.forum_texts {
        walk.forum_texts(dir)?;
    }
    Ok(walk.report)
}

/// A post as the walk keeps it: what forum texts are checked against.
struct Seen {
    hash: String,
    signature: Option<String>,
}

struct Walk {
    report: Report,
    pinned: Vec<(String, VerifyingKey)>,
    listed: Vec<(String, VerifyingKey)>,
    header: bool,
    campaign: Option<LoadedCampaign>,
    scenarios: Scenarios,
    /// The hash chain, from the campaign line's genesis on.
    chain: Option<ChainCheck>,
    /// The post whose outcomes and snapshot are being read.
    pending: Option<(Post, bool, Vec<OutcomeRecord>, Option<String>)>,
    /// The rules' replay of the log, from the campaign line on.
    replay: Option<Replay>,
    snapshots: BTreeMap<i64, String>,
    posts: BTreeMap<i64, Seen>,
    outcome_posts: BTreeMap<Uuid, i64>,
    ended: bool,
    /// A deployment withheld because it is sealed until the other side has deployed (rules
    /// version 3): no state after it can be replayed from the file.
    sealed_deployment: Option<i64>,
}

impl Walk {
    fn new(pinned: Vec<(String, VerifyingKey)>) -> Self {
        Self {
            report: Report::default(),
            pinned,
            listed: Vec::new(),
            header: false,
            campaign: None,
            // No folder: the scenarios built in (a campaign carries its scenario's text anyway).
            scenarios: Scenarios::load(Path::new("/nonexistent/adjutant-verify")).unwrap_or_else(|_| {
                Scenarios::load(Path::new("")).unwrap_or_else(|e| panic!("built-in scenarios: {e}"))
            }),
            chain: None,
            pending: None,
            replay: None,
            snapshots: BTreeMap::new(),
            posts: BTreeMap::new(),
            outcome_posts: BTreeMap::new(),
            ended: false,
            sealed_deployment: None,
        }
    }

    fn line(&mut self, line: Line) {
        if self.ended {
            self.report.problem(None, "a line after the export's end line");
        }
        match line {
            Line::Export(_) if self.header => {
                self.report.problem(None, "a second header line: an export has one, first");
            }
            Line::Campaign(_) if self.campaign.is_some() || self.report.posts > 0 => {
                self.report
                    .problem(None, "a second campaign line, or one after the posts: an export has one, before them");
            }
            Line::Export(header) => {
                if header.format != FORMAT {
                    self.report.problem(None, format!("format {:?}, not {FORMAT}", header.format));
                }
                for key in header.keys {
                    match parse_public_key(&key.public_key) {
                        Ok(k) if key_id(&k) == key.key_id => self.listed.push((key.key_id, k)),
                        Ok(_) => {
                            self.report.problem(None, format!("key {} is listed with another key's bytes", key.key_id))
                        }
                        Err(e) => self.report.problem(None, format!("key {}: {e}", key.key_id)),
                    }
                }
                if self.pinned.is_empty() {
                    self.report.keys_from_file = true;
                    self.report.notes.push(
                        "no --key given: receipts are checked against the keys the file lists; pass the server's \
                         public key to prove the server signed them"
                            .into(),
                    );
                }
                self.header = true;
            }
            Line::Campaign(record) => self.campaign_line(record),
            Line::Post(post) => {
                self.settle();
                self.post_line(post);
            }
            Line::Outcome(outcome) => {
                self.outcome_posts.insert(outcome.id, outcome.seq);
                match &mut self.pending {
                    Some((post, _, outcomes, _)) if post.seq == outcome.seq => outcomes.push(outcome),
                    _ => self.report.problem(Some(outcome.seq), format!("outcome {} belongs to no post", outcome.id)),
                }
            }
            Line::Snapshot(snapshot) => match &mut self.pending {
                Some((post, _, _, stored)) if post.seq == snapshot.seq => *stored = Some(snapshot.state),
                _ => self.report.problem(Some(snapshot.seq), "a state snapshot for a post not in the log"),
            },
            Line::End(end) => {
                self.settle();
                self.ended = true;
                if end.posts != self.report.posts {
                    self.report.problem(
                        None,
                        format!("the end line counts {} posts; the file has {}", end.posts, self.report.posts),
                    );
                }
                if end.head_hash != self.report.head_hash {
                    self.report.problem(None, "the end line's head hash is not the last post's hash");
                }
            }
            Line::Error(e) => {
                self.report.problem(None, format!("the server could not finish the export: {}", e.detail))
            }
        }
    }

    fn campaign_line(&mut self, record: crate::export::CampaignRecord) {
        self.report.campaign = Some(record.id);
        let created_at = match DateTime::parse_from_rfc3339(&record.created_at) {
            Ok(t) => t.with_timezone(&Utc),
            Err(e) => {
                self.report.problem(None, format!("the campaign's created_at {:?}: {e}", record.created_at));
                return;
            }
        };
        let campaign = Campaign {
            id: record.id,
            name: record.name,
            moderator_id: record.moderator_id,
            mode: record.mode,
            scenario: record.scenario,
            scenario_text: record.scenario_text,
            ruleset: record.ruleset,
            settings: record.settings,
            created_at,
            chain_genesis: record.chain_genesis,
        };
        if campaign.chain_genesis == genesis_rule::LEGACY {
            self.report.notes.push(
                "the campaign was created before its creation record was hashed: its chain starts from 64 zeros, \
                 and its settings are not bound by the chain"
                    .into(),
            );
        }
        let chain = ChainCheck::from_genesis(&campaign);
        if chain.head() != record.genesis_hash {
            self.report.problem(
                None,
                format!(
                    "the creation record hashes to {} but the file says the genesis is {}",
                    chain.head(),
                    record.genesis_hash
                ),
            );
        }
        self.chain = Some(chain);
        match LoadedCampaign::load(campaign, &self.scenarios) {
            Ok(loaded) => {
                self.replay = Some(Replay::new(&loaded));
                self.campaign = Some(loaded);
            }
            Err(e) => self.report.problem(None, format!("the campaign cannot be loaded: {e}")),
        }
    }

    fn key(&self, key_id: &str) -> Option<VerifyingKey> {
        let keys = if self.pinned.is_empty() { &self.listed } else { &self.pinned };
        keys.iter().find(|(id, _)| id == key_id).map(|(_, k)| *k)
    }

    fn post_line(&mut self, record: PostRecord) {
        let seq = record.seq;
        if !self.header || self.campaign.is_none() {
            self.report.problem(Some(seq), "a post before the export's header and campaign lines");
        }
        let Some(campaign) = &self.campaign else { return };
        self.report.posts += 1;
        self.report.head_hash = Some(record.hash.clone());
        self.report.links += 1;
        let stamp = match DateTime::parse_from_rfc3339(&record.stamp) {
            Ok(t) => t.with_timezone(&Utc),
            Err(e) => {
                self.report.problem(Some(seq), format!("stamp {:?}: {e}", record.stamp));
                // Its place in the chain is still checked, and the chain goes on from its hash.
                let found =
                    self.chain.as_mut().map(|c| c.skip(seq, &record.prev_hash, &record.hash)).unwrap_or_default();
                for problem in found {
                    self.report.problem(Some(seq), problem.to_string());
                }
                return;
            }
        };
        let post = Post {
            campaign_id: campaign.campaign.id,
            seq,
            stamp,
            author_id: record.author_id,
            side: record.side.clone(),
            kind: record.kind.clone(),
            body: record.body.clone().unwrap_or_default(),
            prev_hash: record.prev_hash.clone(),
            hash: record.hash.clone(),
            receipt: record
                .receipt
                .as_ref()
                .map(|r| adjutant_store::Receipt { key_id: r.key_id.clone(), signature: r.signature.clone() }),
        };
        let readable = record.body.is_some();
        // A withheld body cannot be hashed: its hash is taken as stored, its link and receipt
        // are still checked.
        let recomputed = if readable {
            self.report.hashes += 1;
            link_hash(&post, &post.prev_hash)
        } else {
            self.report.sealed += 1;
            post.hash.clone()
        };
        if post.receipt.is_some() {
            self.report.signatures += 1;
        }
        let key = post.receipt.as_ref().map(|r| self.key(&r.key_id));
        let signature = || {
            let receipt = post.receipt.as_ref()?;
            match key.flatten() {
                None => Some(format!("its receipt is signed by key {}, which is not trusted", receipt.key_id)),
                Some(key) => (!signature_holds(&key, &crate::signing::receipt_message(&post), &receipt.signature)).then(|| {
                    "its receipt's signature does not match its campaign, seq, stamp and hash: the post was changed after the server signed it".to_owned()
                }),
            }
        };
        let mut chain = self.chain.take();
        let problems = chain.as_mut().map(|c| c.next(&post, &recomputed, signature)).unwrap_or_default();
        self.chain = chain;
        for problem in problems {
            self.report.problem(Some(seq), problem.to_string());
        }
        self.posts.insert(
            seq,
            Seen { hash: post.hash.clone(), signature: post.receipt.as_ref().map(|r| r.signature.clone()) },
        );
        self.pending = Some((post, readable, Vec::new(), None));
    }

    /// Replays the pending post through the rules, now that its outcomes and snapshot are read.
    fn settle(&mut self) {
        let Some((post, readable, stored, stored_snapshot)) = self.pending.take() else { return };
        let Some(campaign) = &self.campaign else { return };
        let seq = post.seq;
        if let Some(state) = &stored_snapshot {
            self.snapshots.insert(seq, state.clone());
        }
        if !readable && post.kind == crate::log::read::DEPLOY && campaign.seals_deployment() {
            // A deployment sealed until the other side has deployed: its hash and receipt are
            // checked, and its one outcome says that its side deployed, not where.
            let says_sealed = |o: &OutcomeRecord| {
                o.kind == "deployment_sealed"
                    && serde_json::from_str::<serde_json::Value>(&o.data).ok().is_some_and(|v| {
                        v["data"]["side"].as_str() == post.side.as_deref() && v["data"].get("placements").is_none()
                    })
            };
            if !(stored.len() == 1 && says_sealed(&stored[0])) {
                self.report
                    .problem(Some(seq), "a sealed deployment's outcomes are one 'deployment_sealed' naming its side");
            }
            if stored_snapshot.is_some() {
                self.report.problem(Some(seq), "a sealed deployment's state is exported, which would give it away");
            }
            self.report.outcomes += stored.len() as i64;
            if self.sealed_deployment.is_none() {
                self.sealed_deployment = Some(seq);
                self.report.notes.push(format!(
                    "post {seq} is a deployment sealed until the other side has deployed: it and the posts after it are checked for their hash chain and receipts, not replayed; export again once both sides have deployed"
                ));
            }
            return;
        }
        if let Some(sealed) = self.sealed_deployment {
            // Nothing but deployments and the log's own kinds is accepted while a deployment
            // is sealed; an order of the game here is a forgery's hiding place.
            if PostKind::of(&post.kind) == PostKind::Order && post.kind != crate::log::read::DEPLOY {
                self.report.problem(
                    Some(seq),
                    format!(
                        "a `{}` order after the sealed deployment {sealed}, before both sides have deployed",
                        post.kind
                    ),
                );
            }
            self.report.outcomes += stored.len() as i64;
            return;
        }
        if !readable {
            // A sealed choice not revealed yet: its hash and receipt are checked, its content
            // cannot be. Only a seal of a resolver campaign is withheld, it changes no state, and
            // its one outcome says that its side sealed; anything else hidden this way is a
            // forgery's hiding place.
            if PostKind::of(&post.kind) != PostKind::Seal || campaign.scenario().is_some() {
                self.report.problem(
                    Some(seq),
                    format!(
                        "its body is withheld, but only a sealed choice of a resolver campaign not yet revealed is; this is a {} post",
                        post.kind
                    ),
                );
            }
            if stored_snapshot.is_some() {
                self.report
                    .problem(Some(seq), "a state snapshot is stored for a sealed choice, which changes no state");
            }
            let says_sealed = |o: &OutcomeRecord| {
                OutcomeKind::of(&o.kind) == OutcomeKind::Sealed
                    && serde_json::from_str::<serde_json::Value>(&o.data).ok().is_some_and(|v| {
                        v["data"]["side"].as_str() == post.side.as_deref() && v["data"]["topic"].is_string()
                    })
            };
            if !(stored.len() == 1 && says_sealed(&stored[0])) {
                self.report.problem(
                    Some(seq),
                    "a sealed choice's outcomes are one 'sealed' outcome naming its side and topic",
                );
            }
            self.report.outcomes += stored.len() as i64;
            return;
        }
        let Some(replay) = &mut self.replay else { return };
        let rollback_snapshot = Replay::needs(campaign, &post)
            .rollback_snapshot
            .and_then(|to_seq| self.snapshots.range(..=to_seq).next_back().map(|(s, t)| (*s, t.clone())));
        let outcomes = Stored {
            outcomes: stored.iter().map(|o| (o.kind.as_str(), o.data.as_str())).collect(),
            snapshot: stored_snapshot.as_deref(),
        };
        let before = replay.counts;
        for found in replay.post(campaign, &post, &outcomes, rollback_snapshot.as_ref()) {
            self.report.problem(Some(found.seq), found.detail);
        }
        let after = replay.counts;
        self.report.outcomes += after.outcomes - before.outcomes;
        self.report.snapshots += after.snapshots - before.snapshots;
        self.report.result_numbers += after.result_numbers - before.result_numbers;
        self.report.reinforcement_rolls += after.reinforcement_rolls - before.reinforcement_rolls;
        self.report.dice += after.dice - before.dice;
    }

    fn finish(&mut self) {
        self.settle();
        if !self.header {
            self.report.problem(None, "the file has no export header line");
        }
        if self.campaign.is_none() {
            self.report.problem(None, "the file has no campaign line");
        }
        if !self.ended {
            self.report.problem(None, "the file has no end line: it was cut short");
        }
    }

    /// Checks each forum text against the export.
    fn forum_texts(&mut self, dir: &Path) -> Result<(), String> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        let last = self.posts.keys().next_back().copied().unwrap_or(0);
        for file in files {
            let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let Some(outcome) = trailing_marker(&text) else {
                self.report.notes.push(format!(
                    "forum text {name}: no Adjutant marker on its last line; not one of the bot's posts"
                ));
                continue;
            };
            let Some(witness) = witness_of(&text) else {
                self.report.problem(
                    None,
                    format!("forum text {name}: the line before its marker does not name the post, hash and receipt"),
                );
                continue;
            };
            self.report.forum_texts += 1;
            let seq = witness.seq;
            match self.posts.get(&seq) {
                None if seq > last => self.report.problem(
                    Some(seq),
                    format!(
                        "forum text {name} shows post {seq} with hash {}, but the export ends at post {last}: the log was cut after the bot posted",
                        witness.hash
                    ),
                ),
                None => self.report.problem(Some(seq), format!("forum text {name} shows post {seq}, which the export does not have")),
                Some(seen) => {
                    if seen.hash != witness.hash {
                        self.report.problem(
                            Some(seq),
                            format!("forum text {name} shows hash {}, the export has {}: the log was changed after the bot posted", witness.hash, seen.hash),
                        );
                    }
                    if let (Some(shown), Some(exported)) = (&witness.signature, &seen.signature) {
                        if shown != exported {
                            self.report.problem(Some(seq), format!("forum text {name} shows another receipt signature than the export"));
                        }
                    }
                }
            }
            match self.outcome_posts.get(&outcome) {
                Some(outcome_seq) if *outcome_seq != seq => self.report.problem(
                    Some(seq),
                    format!("forum text {name}: outcome {outcome} belongs to post {outcome_seq} in the export"),
                ),
                None if seq <= last => {
                    self.report.problem(Some(seq), format!("forum text {name}: outcome {outcome} is not in the export"))
                }
                _ => {}
            }
        }
        Ok(())
    }
}
