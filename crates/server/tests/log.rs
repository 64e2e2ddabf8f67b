//! The campaign log without HTTP: the append, the fold, the per-post replay and the
//! whole-campaign replay, on the embedded store. The property test is the log's promise: what
//! the live append decided, the per-post audit and the whole-campaign replay decide again, post
//! by post, and the fold they each build is the same.

use std::collections::BTreeSet;
use std::sync::Arc;

use adjutant_server::campaign::{CampaignSettings, LoadedCampaign, Scenarios};
use adjutant_server::clock::ManualClock;
use adjutant_server::log::append::{Log, Quotas, Submission};
use adjutant_server::log::audit::{replay_from, replay_post};
use adjutant_server::log::decide::{decide, Context};
use adjutant_server::log::read::{view_before, void_posts};
use adjutant_server::log::view::LogView;
use adjutant_server::log::{LogError, RefusalKind};
use adjutant_server::signing::Keyring;
use adjutant_store::{Appended, Campaign, Principal, PrincipalKind, Store, Tail};
use adjutant_store_sqlite::SqliteStore;
use chrono::{TimeDelta, TimeZone, Utc};
use proptest::prelude::*;
use serde_json::{json, Value};
use uuid::Uuid;

struct Harness {
    store: SqliteStore,
    clock: Arc<ManualClock>,
    keys: Arc<Keyring>,
    campaign: Arc<LoadedCampaign>,
    moderator: Principal,
    union: Principal,
    rebel: Principal,
    _dir: tempfile::TempDir,
}

fn principal(kind: PrincipalKind, side: Option<&str>, campaign: Option<Uuid>, by: Option<Uuid>) -> Principal {
    Principal {
        id: Uuid::new_v4(),
        kind,
        name: format!("{kind:?}"),
        campaign_id: campaign,
        side: side.map(str::to_owned),
        created_by: by,
        created_at: Utc.timestamp_millis_opt(1_700_000_000_000).unwrap(),
    }
}

async fn harness(scenario: Option<&str>) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&format!("sqlite://{}/log.db", dir.path().display())).await.unwrap();
    let moderator = principal(PrincipalKind::Moderator, None, None, None);
    let mut token = [0u8; 32];
    for p in [&moderator] {
        token[0] += 1;
        store.create_principal(adjutant_store::NewPrincipal { principal: p.clone(), token_hash: token }).await.unwrap();
    }
    let scenarios = Scenarios::load(std::path::Path::new("/nonexistent")).unwrap();
    let campaign = Campaign {
        id: Uuid::new_v4(),
        name: "Log".into(),
        moderator_id: moderator.id,
        mode: if scenario.is_some() { "managed" } else { "resolver" }.into(),
        scenario: scenario.map(str::to_owned),
        scenario_text: scenario.map(|s| scenarios.get(s).unwrap().to_owned()),
        ruleset: if scenario.is_some() { None } else { Some("schulz-acw".into()) },
        settings: serde_json::to_string(&CampaignSettings { rules_version: Some(2), ..CampaignSettings::default() })
            .unwrap(),
        created_at: Utc.timestamp_millis_opt(1_700_000_000_000).unwrap(),
        chain_genesis: "creation_record".into(),
    };
    let campaign = store.create_campaign(campaign).await.unwrap();
    let union = principal(PrincipalKind::Player, Some("union"), Some(campaign.id), Some(moderator.id));
    let rebel = principal(PrincipalKind::Player, Some("confederate"), Some(campaign.id), Some(moderator.id));
    for p in [&union, &rebel] {
        token[0] += 1;
        store.create_principal(adjutant_store::NewPrincipal { principal: p.clone(), token_hash: token }).await.unwrap();
    }
    Harness {
        store,
        clock: Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 23, 9, 51, 45).unwrap())),
        keys: Arc::new(Keyring::new(ed25519_dalek::SigningKey::from_bytes(&[7; 32]), Vec::new())),
        campaign: Arc::new(LoadedCampaign::load(campaign, &scenarios).unwrap()),
        moderator,
        union,
        rebel,
        _dir: dir,
    }
}

impl Harness {
    fn log(&self) -> Log<'_> {
        Log {
            store: &self.store,
            clock: self.clock.clone(),
            keys: self.keys.clone(),
            quotas: Quotas::default(),
            metrics: Default::default(),
            live: None,
        }
    }

    /// Appends a post, one second after the last: the post stored, or the refusal.
    async fn post(&self, author: &Principal, kind: &str, body: Value) -> Result<adjutant_store::Post, LogError> {
        self.clock.advance(TimeDelta::milliseconds(1_237));
        let side = author.side.as_deref().and_then(adjutant_server::campaign::parse_side);
        let new = Submission { author, side, kind, body: &body, idempotency_key: Uuid::new_v4().to_string() };
        match self.log().append(&self.campaign, new).await? {
            Appended::New(post, _) => Ok(post),
            Appended::Replayed(post, _) => panic!("post {} replayed under a fresh key", post.seq),
        }
    }

    /// Every post's per-post replay, and the whole-campaign replay: no finding anywhere.
    async fn audits_agree(&self) -> LogView {
        let id = self.campaign.campaign.id;
        let posts = self.store.posts(id, 0, 10_000).await.unwrap();
        for post in &posts {
            let stored = self.store.outcomes_of_post(id, post.seq).await.unwrap();
            let found = replay_post(&self.store, &self.campaign, post, &stored).await.unwrap();
            assert!(found.is_empty(), "post {} ({}): {found:?}", post.seq, post.kind);
        }
        let (audit, checkpoint) = replay_from(&self.store, &self.keys, &self.campaign, None).await.unwrap();
        assert!(audit.ok, "{:?}", audit.differences);
        assert_eq!(audit.posts, posts.len() as i64);
        // Going on from the checkpoint with nothing new replays nothing and finds nothing.
        let (again, _) = replay_from(&self.store, &self.keys, &self.campaign, Some(&checkpoint)).await.unwrap();
        assert!(again.ok && again.replayed_now == 0, "{again:?}");
        LogView::of(&posts)
    }
}

fn seal(topic: &str, role: &str, choice: &str) -> Value {
    json!({"topic": topic, "role": role, "choice": choice})
}

fn melee(topic: &str) -> Value {
    json!({"action": "melee_round", "sealed": topic,
           "inputs": {"round": 2, "attacker": {"troops": "infantry", "men": 4}, "defender": {"troops": "infantry", "men": 3}}})
}

fn refused(result: Result<adjutant_store::Post, LogError>) -> adjutant_server::log::PostRefusal {
    match result {
        Err(LogError::Refused(r)) => r,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn rollbacks_of_rollbacks_and_seals_around_them() {
    let h = harness(None).await;
    let (m, u, r) = (&h.moderator, &h.union, &h.rebel);
    h.post(u, "note", json!({"text": "opening"})).await.unwrap(); // 1
    h.post(u, "seal", seal("m1", "attacker", "stay")).await.unwrap(); // 2
    h.post(r, "note", json!({"text": "thinking"})).await.unwrap(); // 3
                                                                   // The rollback voids the union's seal: the union may seal again, the rebels' choice is not
                                                                   // revealed against a void one.
    let back = h.post(m, "rollback", json!({"to_seq": 1, "reason": "misclick"})).await.unwrap(); // 4
    assert_eq!(back.seq, 4);
    h.post(r, "seal", seal("m1", "defender", "retreat")).await.unwrap(); // 5
    let early = refused(h.post(m, "resolve", melee("m1")).await);
    assert_eq!((early.field.as_str(), early.rule.as_str()), ("body.sealed", "seal.both_in"));
    h.post(u, "seal", seal("m1", "attacker", "retreat")).await.unwrap(); // 6
    let twice = refused(h.post(u, "seal", seal("m1", "attacker", "stay")).await);
    assert_eq!((twice.kind, twice.rule.as_str()), (RefusalKind::Conflict, "seal.once"));
    let resolved = h.post(m, "resolve", melee("m1")).await.unwrap(); // 7
    let outcomes = h.store.outcomes_of_post(resolved.campaign_id, resolved.seq).await.unwrap();
    assert!(outcomes[0].data.contains("\"attacker_choice\":\"retreat\""), "{}", outcomes[0].data);

    // A rollback may not go back to a void post, nor may a player roll back.
    let to_void = refused(h.post(m, "rollback", json!({"to_seq": 2, "reason": "again"})).await);
    assert_eq!((to_void.field.as_str(), to_void.rule.as_str()), ("body.to_seq", "rollback.void_target"));
    let by_player = refused(h.post(u, "rollback", json!({"to_seq": 1, "reason": "mine"})).await);
    assert_eq!(by_player.kind, RefusalKind::Forbidden);
    // A rollback of a rollback: back to post 1 again, voiding the first rollback (4) and all
    // after it; 2 and 3 were void already.
    let second = h.post(m, "rollback", json!({"to_seq": 1, "reason": "start over"})).await.unwrap(); // 8
    let outcome = &h.store.outcomes_of_post(second.campaign_id, second.seq).await.unwrap()[0];
    assert!(outcome.data.contains("\"voided\":[4,5,6,7]"), "{}", outcome.data);
    // Both seals of m1 are void now: the topic starts afresh.
    h.post(r, "seal", seal("m1", "attacker", "stay")).await.unwrap(); // 9

    let void = void_posts(&h.store, h.campaign.campaign.id).await.unwrap();
    let void: BTreeSet<i64> = (1..=9).filter(|s| void.contains(s)).collect();
    assert_eq!(void, BTreeSet::from([2, 3, 4, 5, 6, 7]));
    let view = h.audits_agree().await;
    assert_eq!(view.void().len(), 6);
    assert_eq!(view.seals().on_topic("m1").len(), 1);
    let stored = view_before(&h.store, h.campaign.campaign.id, i64::MAX).await.unwrap();
    assert_eq!(stored.seals().on_topic("m1").len(), 1);
    // The fold before post 7 is the one post 7 was decided with: both choices in.
    let before_7 = view_before(&h.store, h.campaign.campaign.id, 7).await.unwrap();
    assert!(before_7.seals().pair("m1").is_some());
}

/// A second server on the same SQLite file posts between two posts of this one's. This server
/// holds the tail its last batch left only while no other writer has committed: its next batch
/// finds that one has, reads the tail anew and follows the other server's post. No fork, no gap,
/// no batch one by one, and every audit finds the chain whole.
#[tokio::test]
async fn a_tail_another_server_moved_on_is_read_anew_not_forked_from() {
    let h = harness(None).await;
    let elsewhere = SqliteStore::open(&format!("sqlite://{}/log.db", h._dir.path().display())).await.unwrap();
    let other = Log {
        store: &elsewhere,
        clock: h.clock.clone(),
        keys: h.keys.clone(),
        quotas: Quotas::default(),
        metrics: Default::default(),
        live: None,
    };
    let mut here = Vec::new();
    for text in ["one", "two"] {
        here.push(h.post(&h.union, "note", json!({ "text": text })).await.unwrap());
    }
    let body = json!({"text": "on the other server"});
    let side = h.rebel.side.as_deref().and_then(adjutant_server::campaign::parse_side);
    let submission =
        Submission { author: &h.rebel, side, kind: "note", body: &body, idempotency_key: Uuid::new_v4().to_string() };
    let Appended::New(elsewhere_post, _) = other.append(&h.campaign, submission).await.unwrap() else {
        panic!("a fresh key replayed");
    };
    for text in ["three", "four"] {
        here.push(h.post(&h.union, "note", json!({ "text": text })).await.unwrap());
    }
    assert_eq!(elsewhere_post.seq, 3);
    assert_eq!(elsewhere_post.prev_hash, here[1].hash);
    assert_eq!(here.iter().map(|p| p.seq).collect::<Vec<_>>(), [1, 2, 4, 5]);
    assert_eq!(here[2].prev_hash, elsewhere_post.hash);
    assert_eq!(here[3].prev_hash, here[2].hash);
    assert_eq!((h.store.batches_one_by_one(), elsewhere.batches_one_by_one()), (0, 0));
    assert_eq!(h.audits_agree().await.void().len(), 0);
}

#[tokio::test]
async fn umpiring_is_the_moderator_s_and_only_for_what_the_game_awaits() {
    let h = harness(Some("short-acw")).await;
    let tail = Tail { next_seq: 1, prev_hash: None, prev_stamp: None, snapshot: None, next_position: 1 };
    let view = LogView::default();
    let context = Context { view: &view, rollback_snapshot: None, chain_secret: None };
    let post = |side: Option<&str>, body: Value| adjutant_store::Post {
        campaign_id: h.campaign.campaign.id,
        seq: 1,
        stamp: Utc::now(),
        author_id: h.moderator.id,
        side: side.map(str::to_owned),
        kind: "umpire".into(),
        body: body.to_string(),
        prev_hash: String::new(),
        hash: String::new(),
        receipt: None,
    };
    let answer = json!({"side": "rebel", "kind": "retreat", "body": {}, "reason": "no post for three days"});
    let refusal = |r: Result<_, LogError>| match r {
        Err(LogError::Refused(r)) => r,
        other => panic!("expected a refusal, got {:?}", other.map(|_: adjutant_server::log::decide::Effects| ())),
    };
    let by_player = refusal(decide(&h.campaign, &tail, &post(Some("union"), answer.clone()), &context));
    assert_eq!((by_player.kind, by_player.rule.as_str()), (RefusalKind::Forbidden, "umpire.moderator_only"));
    let not_awaited = refusal(decide(&h.campaign, &tail, &post(None, answer), &context));
    assert_eq!((not_awaited.field.as_str(), not_awaited.rule.as_str()), ("body.kind", "umpire.not_awaited"));
    let no_side = json!({"side": "martian", "kind": "retreat", "body": {}, "reason": "x"});
    let bad_side = refusal(decide(&h.campaign, &tail, &post(None, no_side), &context));
    assert_eq!((bad_side.field.as_str(), bad_side.rule.as_str()), ("body.side", "campaign.sides"));
    let unknown = json!({"side": "union", "kind": "retreat", "body": {}, "reason": "x", "extra": 1});
    let extra = refusal(decide(&h.campaign, &tail, &post(None, unknown), &context));
    assert_eq!((extra.field.as_str(), extra.rule.as_str()), ("body.extra", "request.json_schema"));
    // Umpiring through the append: refused, nothing written.
    let answer = json!({"side": "rebel", "kind": "retreat", "body": {}, "reason": "no post for three days"});
    assert!(matches!(h.post(&h.moderator, "umpire", answer).await, Err(LogError::Refused(_))));
    assert!(h.store.head(h.campaign.campaign.id).await.unwrap().is_none());
}

/// The whole-campaign audit works out pages of posts at once (the receipts of a page in one
/// batch equation per key, the verdicts of posts that read nothing before them on every core):
/// a forged receipt and a changed outcome among them are still each named at their post, in
/// the words of the check of one post, and nothing else is.
#[tokio::test]
async fn a_forged_receipt_and_a_changed_outcome_among_pages_are_named_at_their_posts() {
    let h = harness(None).await;
    let id = h.campaign.campaign.id;
    let round = json!({"action": "melee_round",
        "inputs": {"round": 1, "attacker": {"troops": "infantry", "men": 4}, "defender": {"troops": "infantry", "men": 3}}});
    for i in 0..1_100 {
        let author = if i % 2 == 0 { &h.union } else { &h.rebel };
        let (kind, body) =
            if i % 10 == 3 { ("resolve", round.clone()) } else { ("note", json!({"text": format!("order {i}")})) };
        h.post(author, kind, body).await.unwrap();
    }
    let (clean, _) = replay_from(&h.store, &h.keys, &h.campaign, None).await.unwrap();
    assert!(clean.ok && clean.posts == 1_100 && clean.outcomes == 110, "{clean:?}");
    // Every die of every stored resolution, rolled again.
    let stored = h.store.outcomes(id, 0, 1_000).await.unwrap();
    let rolled: usize = stored
        .iter()
        .map(|o| serde_json::from_str::<Value>(&o.data).unwrap()["data"]["dice"].as_array().unwrap().len())
        .sum();
    assert!(rolled >= 110 && clean.dice == rolled as i64, "{} dice rolled again, {rolled} stored", clean.dice);

    // Posts 700 and 1050 carry the signature of the post after them; post 904's outcome gains a
    // space.
    let db = format!("sqlite://{}", h._dir.path().join("log.db").display());
    let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&db).await.unwrap();
    let forge = |seq: i64| {
        format!(
            "UPDATE posts SET receipt_signature = (SELECT receipt_signature FROM posts WHERE campaign_id = '{id}' AND seq = {})
             WHERE campaign_id = '{id}' AND seq = {seq};",
            seq + 1
        )
    };
    let sql = format!(
        "DROP TRIGGER posts_append_only_update; DROP TRIGGER outcomes_append_only_update; {} {}
         UPDATE outcomes SET data = data || ' ' WHERE campaign_id = '{id}' AND seq = 904;",
        forge(700),
        forge(1_050)
    );
    sqlx::raw_sql(&sql).execute(&mut conn).await.unwrap();

    let (audit, _) = replay_from(&h.store, &h.keys, &h.campaign, None).await.unwrap();
    let found: Vec<(i64, &str, &str)> =
        audit.differences.iter().map(|d| (d.seq, d.check.as_str(), d.detail.as_str())).collect();
    let mut receipts = Vec::new();
    for seq in [700, 1_050] {
        receipts.push(h.keys.check(&h.store.post(id, seq).await.unwrap().unwrap()).unwrap());
    }
    let [at_700, at_1050] = [&receipts[0], &receipts[1]];
    assert_eq!(
        found,
        vec![
            (700, "receipt", at_700.as_str()),
            (904, "outcomes", "the stored outcomes differ from what the rules give"),
            (1_050, "receipt", at_1050.as_str()),
        ]
    );
    assert!(at_700.contains("does not match"), "{at_700}");
    assert_eq!((audit.posts, audit.outcomes), (1_100, 110));
}

/// One step of a random log.
#[derive(Debug, Clone)]
enum Step {
    Note { rebel: bool },
    Seal { rebel: bool, attacker: bool, topic: u8, stay: bool },
    Resolve { topic: u8 },
    Rollback { back: u8, by_player: bool },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        2 => any::<bool>().prop_map(|rebel| Step::Note { rebel }),
        5 => (any::<bool>(), any::<bool>(), 0u8..3, any::<bool>())
            .prop_map(|(rebel, attacker, topic, stay)| Step::Seal { rebel, attacker, topic, stay }),
        3 => (0u8..3).prop_map(|topic| Step::Resolve { topic }),
        2 => (0u8..8, prop::bool::weighted(0.2)).prop_map(|(back, by_player)| Step::Rollback { back, by_player }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// For random logs of notes, seals, resolutions and rollbacks (of rollbacks too), what the
    /// live append decided is what the per-post audit and the whole-campaign replay decide
    /// again, and the fold every reader builds agrees with a plain model of rollbacks.
    #[test]
    fn live_append_per_post_audit_and_replay_agree(steps in prop::collection::vec(step(), 1..30)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let h = harness(None).await;
            let mut model_void: BTreeSet<i64> = BTreeSet::new();
            let mut last = 0i64;
            for step in &steps {
                let (author, kind, body) = match step {
                    Step::Note { rebel } => (if *rebel { &h.rebel } else { &h.union }, "note", json!({"text": "a remark"})),
                    Step::Seal { rebel, attacker, topic, stay } => (
                        if *rebel { &h.rebel } else { &h.union },
                        "seal",
                        seal(&format!("t{topic}"), if *attacker { "attacker" } else { "defender" }, if *stay { "stay" } else { "retreat" }),
                    ),
                    Step::Resolve { topic } => (&h.moderator, "resolve", melee(&format!("t{topic}"))),
                    Step::Rollback { back, by_player } => (
                        if *by_player { &h.union } else { &h.moderator },
                        "rollback",
                        json!({"to_seq": (last - 1 - i64::from(*back)).max(0), "reason": "a correction"}),
                    ),
                };
                match h.post(author, kind, body.clone()).await {
                    Ok(post) => {
                        assert_eq!(post.seq, last + 1);
                        last = post.seq;
                        if kind == "rollback" {
                            let to = body["to_seq"].as_i64().unwrap();
                            model_void.extend(to + 1..post.seq);
                        }
                    }
                    Err(LogError::Refused(_)) => {
                        // Nothing written.
                        let head = h.store.head(h.campaign.campaign.id).await.unwrap().map_or(0, |p| p.seq);
                        assert_eq!(head, last);
                    }
                    Err(other) => panic!("{other}"),
                }
            }
            let view = h.audits_agree().await;
            let void: BTreeSet<i64> = (1..=last).filter(|s| view.void().contains(s)).collect();
            assert_eq!(void, model_void);
            let stored = void_posts(&h.store, h.campaign.campaign.id).await.unwrap();
            assert_eq!((1..=last).filter(|s| stored.contains(s)).collect::<BTreeSet<_>>(), model_void);
            let read = view_before(&h.store, h.campaign.campaign.id, i64::MAX).await.unwrap();
            for topic in ["t0", "t1", "t2"] {
                let seqs = |v: &LogView| v.seals().on_topic(topic).iter().map(|s| s.seq).collect::<Vec<_>>();
                assert_eq!(seqs(&read), seqs(&view), "{topic}");
                // A standing seal is never a void post.
                assert!(seqs(&view).iter().all(|s| !model_void.contains(s)), "{topic}");
            }
        });
    }
}
