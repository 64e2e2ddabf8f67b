//! The store conformance suite: the same promises checked against the `Store` trait on SQLite
//! and on PostgreSQL, so the two backends behave identically.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use adjutant_e2e::{on_both_backends, Backend, TestDb};
use adjutant_store::{
    Acknowledgement, AppendRequest, Appended, Campaign, Decision, Declined, IndexedOutcomeKind, IndexedPostKind,
    NewOutcome, NewPrincipal, Post, Principal, PrincipalKind, SharedDecide, Store, StoreError, Tail, Webhook,
};
use chrono::{TimeZone, Utc};
use uuid::Uuid;

on_both_backends! {
    principals_are_found_by_token_hash_only => principals;
    campaigns_list_in_creation_order => campaigns;
    appends_number_posts_and_replay_idempotency_keys => appends;
    a_refused_append_writes_nothing => refused_append;
    concurrent_appends_never_skip_or_repeat => concurrent_appends;
    posts_decided_ahead_on_a_tail_another_store_moved_are_decided_again => kept_tails_out_of_date;
    a_quota_holds_against_posts_made_at_once => quota_race;
    quotas_of_many_authors_at_once_count_each_authors_own_posts => quotas_of_many_authors_at_once;
    a_quota_counts_the_posts_of_a_batch_from_its_start_only => quota_from_its_start;
    the_same_key_sent_concurrently_stores_one_post => concurrent_same_key;
    refusals_and_reused_keys_fail_only_their_own_post_in_a_batch => mixed_batch;
    a_database_error_in_a_batch_fails_only_the_post_it_touched => batch_with_a_failing_post;
    decide_sees_the_tail_the_log_left => tails;
    outcomes_snapshots_and_acknowledgements => outcomes_and_snapshots;
    a_range_of_posts_has_its_outcomes_read_at_once => outcomes_of_posts;
    a_log_stored_before_posts_held_their_outcomes_positions_reads_the_same_after_the_upgrade => upgraded_log;
    posts_and_outcomes_are_found_by_the_kinds_the_index_by_kind_holds => found_by_kind;
    the_log_cannot_be_rewritten => append_only;
    tokens_are_revoked_and_rotated_in_their_own_row => revocation;
    webhooks_are_rotated_and_disabled_with_their_log_kept => webhook_lifecycle;
    posts_are_counted_by_author_kind_and_time => counting;
    campaign_secrets_are_kept_once_per_chain_and_never_rewritten => campaign_secrets;
    uploaded_scenarios_are_kept_once_per_moderator_and_text_and_never_rewritten => uploaded_scenarios;
    a_players_contact_is_recorded_replaced_and_read_by_campaign => contacts;
    a_mail_is_queued_once_claimed_once_and_its_end_recorded => mail_queue;
}

fn principal(kind: PrincipalKind, campaign: Option<Uuid>) -> Principal {
    Principal {
        id: Uuid::new_v4(),
        kind,
        name: format!("{kind:?}"),
        campaign_id: campaign,
        side: campaign.map(|_| "union".to_owned()),
        created_by: None,
        created_at: Utc.with_ymd_and_hms(2026, 11, 21, 9, 0, 0).unwrap(),
    }
}

async fn setup(backend: Backend) -> (TestDb, Arc<dyn Store>, Principal, Campaign, Principal) {
    let db = TestDb::new(backend).await;
    let store = db.store().await;
    let moderator = store
        .create_principal(NewPrincipal { principal: principal(PrincipalKind::Moderator, None), token_hash: [1; 32] })
        .await
        .unwrap();
    let campaign = store.create_campaign(new_campaign(moderator.id, "First")).await.unwrap();
    let mut player = principal(PrincipalKind::Player, Some(campaign.id));
    player.created_by = Some(moderator.id);
    let player = store.create_principal(NewPrincipal { principal: player, token_hash: [2; 32] }).await.unwrap();
    (db, store, moderator, campaign, player)
}

fn new_campaign(moderator: Uuid, name: &str) -> Campaign {
    Campaign {
        id: Uuid::new_v4(),
        name: name.into(),
        moderator_id: moderator,
        mode: "resolver".into(),
        scenario: None,
        scenario_text: None,
        ruleset: Some("acw-25mm".into()),
        settings: "{}".into(),
        created_at: Utc.with_ymd_and_hms(2026, 11, 21, 9, 0, 0).unwrap(),
        chain_genesis: "creation_record".into(),
    }
}

fn request(campaign: &Campaign, author: &Principal, key: &str, hash: &str) -> AppendRequest {
    AppendRequest {
        campaign_id: campaign.id,
        author_id: author.id,
        idempotency_key: key.into(),
        request_hash: hash.into(),
        quotas: Vec::new(),
    }
}

/// The post after `tail`: stamped a second a post from a fixed time, chained to the tail.
fn next_post(tail: &Tail, campaign: Uuid, author: Uuid, kind: &str, body: String) -> Post {
    Post {
        campaign_id: campaign,
        seq: tail.next_seq,
        stamp: Utc.timestamp_millis_opt(1_700_000_000_000 + tail.next_seq * 1_000).unwrap(),
        author_id: author,
        side: Some("union".into()),
        kind: kind.into(),
        body,
        prev_hash: tail.prev_hash.clone().unwrap_or_else(|| "0".repeat(64)),
        hash: format!("{:064}", tail.next_seq),
        receipt: None,
    }
}

/// A decide callback that writes a post with `outcomes` outcomes and, when asked, a snapshot.
fn writer(campaign: Uuid, author: Uuid, outcomes: usize, snapshot: bool) -> SharedDecide {
    std::sync::Arc::new(move |tail: &Tail| {
        Ok(Decision {
            post: next_post(tail, campaign, author, "note", format!("{{\"n\":{}}}", tail.next_seq)),
            // Odd posts are signed by the store before they are written (the receipt made from
            // the post as decided), even ones not (as posts written before receipts).
            sign: (tail.next_seq % 2 == 1).then(|| {
                let sign: adjutant_store::Sign = std::sync::Arc::new(|post: &Post| adjutant_store::Receipt {
                    key_id: "ed25519:0123456789abcdef".into(),
                    signature: format!("{:0128}", post.seq),
                });
                sign
            }),
            outcomes: (0..outcomes)
                .map(|i| NewOutcome { id: Uuid::new_v4(), kind: "roll".into(), data: format!("{{\"i\":{i}}}") })
                .collect(),
            snapshot: snapshot.then(|| format!("{{\"after\":{}}}", tail.next_seq)),
        })
    })
}

/// The receipt [`writer`] has the store make for a post: odd posts only.
fn receipt_of(post: &Post) -> Option<adjutant_store::Receipt> {
    (post.seq % 2 == 1).then(|| adjutant_store::Receipt {
        key_id: "ed25519:0123456789abcdef".into(),
        signature: format!("{:0128}", post.seq),
    })
}

async fn principals(backend: Backend) {
    let (_db, store, moderator, campaign, _player) = setup(backend).await;
    assert_eq!(store.principal_by_token_hash(&[1; 32]).await.unwrap(), Some(moderator.clone()));
    let found = store.principal_by_token_hash(&[2; 32]).await.unwrap().unwrap();
    assert_eq!(found.campaign_id, Some(campaign.id));
    assert_eq!(found.side.as_deref(), Some("union"));
    assert_eq!(found.created_by, Some(moderator.id));
    assert_eq!(store.principal_by_token_hash(&[3; 32]).await.unwrap(), None);
    // A token hash is unique.
    let clash = store
        .create_principal(NewPrincipal { principal: principal(PrincipalKind::Bot, None), token_hash: [1; 32] })
        .await;
    assert!(matches!(clash, Err(StoreError::Conflict(_))), "{clash:?}");
    store.ping().await.unwrap();
}

async fn campaigns(backend: Backend) {
    let (_db, store, moderator, first, _) = setup(backend).await;
    let mut ids = vec![first.id];
    for i in 0..4 {
        ids.push(store.create_campaign(new_campaign(moderator.id, &format!("c{i}"))).await.unwrap().id);
    }
    let page = store.campaigns(None, None, 3).await.unwrap();
    assert_eq!(page.iter().map(|c| c.id).collect::<Vec<_>>(), ids[..3]);
    let rest = store.campaigns(None, Some(ids[2]), 10).await.unwrap();
    assert_eq!(rest.iter().map(|c| c.id).collect::<Vec<_>>(), ids[3..]);
    // One moderator's campaigns, paged the same way, and none of another's.
    let other = store
        .create_principal(NewPrincipal { principal: principal(PrincipalKind::Moderator, None), token_hash: [7; 32] })
        .await
        .unwrap();
    let theirs = store.create_campaign(new_campaign(other.id, "theirs")).await.unwrap().id;
    ids.push(store.create_campaign(new_campaign(moderator.id, "c4")).await.unwrap().id);
    let mine = store.campaigns(Some(moderator.id), None, 10).await.unwrap();
    assert_eq!(mine.iter().map(|c| c.id).collect::<Vec<_>>(), ids);
    let mine = store.campaigns(Some(moderator.id), Some(ids[3]), 10).await.unwrap();
    assert_eq!(mine.iter().map(|c| c.id).collect::<Vec<_>>(), ids[4..]);
    let only = store.campaigns(Some(other.id), None, 10).await.unwrap();
    assert_eq!(only.iter().map(|c| c.id).collect::<Vec<_>>(), [theirs]);
    assert!(store.campaigns(Some(Uuid::new_v4()), None, 10).await.unwrap().is_empty());
    assert_eq!(store.campaign(first.id).await.unwrap(), Some(first));
    assert_eq!(store.campaign(Uuid::new_v4()).await.unwrap(), None);
}

async fn appends(backend: Backend) {
    let (_db, store, _, campaign, player) = setup(backend).await;
    let decide = writer(campaign.id, player.id, 1, false);
    let first = store.append_post(request(&campaign, &player, "a", "h1"), decide.clone()).await.unwrap();
    let Appended::New(post, outcomes) = first else { panic!("expected a new post") };
    assert_eq!(post.seq, 1);
    assert_eq!(outcomes[0].position, 1);
    let second = store.append_post(request(&campaign, &player, "b", "h2"), decide.clone()).await.unwrap();
    let Appended::New(second, _) = second else { panic!("expected a new post") };
    assert_eq!(second.seq, 2);
    assert_eq!(second.prev_hash, post.hash);

    // The same key and request: the stored post, nothing new.
    let replay = store.append_post(request(&campaign, &player, "a", "h1"), decide.clone()).await.unwrap();
    assert_eq!(replay, Appended::Replayed(post.clone(), outcomes.clone()));
    // The same key, another request: refused.
    let reused = store.append_post(request(&campaign, &player, "a", "other"), decide.clone()).await;
    assert!(matches!(reused, Err(StoreError::KeyReused)), "{reused:?}");
    assert_eq!(store.posts(campaign.id, 0, 100).await.unwrap().len(), 2);
    assert_eq!(store.post(campaign.id, 1).await.unwrap(), Some(post));
    assert_eq!(store.posts(campaign.id, 1, 100).await.unwrap(), vec![second]);
    assert!(store.posts_of_kind(campaign.id, IndexedPostKind::Rollback).await.unwrap().is_empty());
}

/// A decide callback that writes a post of `kind` with one outcome of each of `outcomes`.
fn of_kinds(campaign: Uuid, author: Uuid, kind: &'static str, outcomes: &'static [&'static str]) -> SharedDecide {
    std::sync::Arc::new(move |tail: &Tail| {
        Ok(Decision {
            post: next_post(tail, campaign, author, kind, "{}".into()),
            sign: None,
            outcomes: outcomes
                .iter()
                .map(|kind| NewOutcome { id: Uuid::new_v4(), kind: (*kind).into(), data: "{}".into() })
                .collect(),
            snapshot: None,
        })
    })
}

async fn found_by_kind(backend: Backend) {
    let (db, store, moderator, campaign, player) = setup(backend).await;
    let other = store.create_campaign(new_campaign(moderator.id, "Second")).await.unwrap();
    let script: [(&Campaign, &str, &[&str]); 8] = [
        (&campaign, "deploy", &["deployed"]),
        (&campaign, "note", &[]),
        (&campaign, "move", &["moved", "turn_begins"]),
        (&campaign, "attack", &["battle", "casualties"]),
        (&other, "rollback", &["battle"]),
        (&campaign, "seal", &["sealed"]),
        (&campaign, "rollback", &["rollback"]),
        (&campaign, "attack", &["battle", "turn_begins", "battle"]),
    ];
    for (i, (on, kind, outcomes)) in script.into_iter().enumerate() {
        store
            .append_post(
                request(on, &player, &format!("k{i}"), &format!("h{i}")),
                of_kinds(on.id, player.id, kind, outcomes),
            )
            .await
            .unwrap();
    }

    // Each kind the index holds finds its posts, in order, and only the campaign's own.
    let seqs = |posts: Vec<Post>| posts.into_iter().map(|p| (p.kind, p.seq)).collect::<Vec<_>>();
    assert_eq!(seqs(store.posts_of_kind(campaign.id, IndexedPostKind::Deploy).await.unwrap()), [("deploy".into(), 1)]);
    assert_eq!(seqs(store.posts_of_kind(campaign.id, IndexedPostKind::Seal).await.unwrap()), [("seal".into(), 5)]);
    assert_eq!(
        seqs(store.posts_of_kind(campaign.id, IndexedPostKind::Rollback).await.unwrap()),
        [("rollback".into(), 6)]
    );
    assert_eq!(seqs(store.posts_of_kind(other.id, IndexedPostKind::Rollback).await.unwrap()), [("rollback".into(), 1)]);
    assert!(store.posts_of_kind(other.id, IndexedPostKind::Seal).await.unwrap().is_empty());

    // Outcomes likewise, in position order, counted and cut at the limit.
    let positions = |outcomes: Vec<adjutant_store::Outcome>| {
        outcomes.into_iter().map(|o| (o.kind, o.seq, o.position)).collect::<Vec<_>>()
    };
    let battles = store.outcomes_of_kind(campaign.id, IndexedOutcomeKind::Battle, 10).await.unwrap();
    assert_eq!(positions(battles), [("battle".into(), 4, 4), ("battle".into(), 7, 8), ("battle".into(), 7, 10)]);
    let first = store.outcomes_of_kind(campaign.id, IndexedOutcomeKind::Battle, 2).await.unwrap();
    assert_eq!(positions(first), [("battle".into(), 4, 4), ("battle".into(), 7, 8)]);
    let turns = store.outcomes_of_kind(campaign.id, IndexedOutcomeKind::TurnBegins, 10).await.unwrap();
    assert_eq!(positions(turns), [("turn_begins".into(), 3, 3), ("turn_begins".into(), 7, 9)]);
    assert_eq!(store.count_outcomes_of_kind(campaign.id, IndexedOutcomeKind::Battle).await.unwrap(), 3);
    assert_eq!(store.count_outcomes_of_kind(other.id, IndexedOutcomeKind::Battle).await.unwrap(), 1);
    assert_eq!(store.count_outcomes_of_kind(other.id, IndexedOutcomeKind::TurnBegins).await.unwrap(), 0);

    // The indexes hold those kinds only: a move, a note, and the moves, casualties and seals of
    // the posts above are not in them. The store's statements state each index's condition, so
    // each database plans them on the index (PostgreSQL: the plan a prepared statement keeps for
    // any value); a query without the condition cannot use it (PostgreSQL's kept plan cannot
    // prove the index's condition from a kind it does not know yet).
    let queries = match backend {
        Backend::Sqlite => &*adjutant_store_sqlite::KIND_QUERIES,
        Backend::Postgres => &*adjutant_store_postgres::KIND_QUERIES,
    };
    let id = campaign.id.to_string();
    for (statement, args, index) in [
        (&queries.posts, &[id.as_str(), "rollback"][..], "posts_by_kind"),
        (&queries.outcomes, &[id.as_str(), "battle", "10"][..], "outcomes_by_kind"),
        (&queries.count_outcomes, &[id.as_str(), "battle"][..], "outcomes_by_kind"),
    ] {
        let plan = db.plan(statement, args).await;
        assert!(plan.contains(index), "{statement}: {plan}");
    }
    for (statement, index) in [
        ("SELECT seq FROM posts WHERE campaign_id = $1 AND kind = $2 ORDER BY seq", "posts_by_kind"),
        (
            "SELECT position FROM outcomes WHERE campaign_id = $1 AND kind = $2 ORDER BY position LIMIT 10",
            "outcomes_by_kind",
        ),
    ] {
        let plan = db.plan(statement, &[&id, "rollback"]).await;
        assert!(!plan.contains(index), "{statement}: {plan}");
    }
}

async fn refused_append(backend: Backend) {
    let (db, store, _, campaign, player) = setup(backend).await;
    let refuse: SharedDecide = std::sync::Arc::new(|_: &Tail| -> Result<Decision, Declined> { Err(Declined) });
    let refused = store.append_post(request(&campaign, &player, "k", "h"), refuse).await;
    assert!(matches!(refused, Err(StoreError::Declined)), "{refused:?}");
    assert_eq!(db.count("posts").await, 0);
    assert_eq!(db.count("idempotency_keys").await, 0);
    // The key is still free.
    let decide = writer(campaign.id, player.id, 0, false);
    assert!(matches!(
        store.append_post(request(&campaign, &player, "k", "h"), decide.clone()).await,
        Ok(Appended::New(..))
    ));
}

async fn concurrent_appends(backend: Backend) {
    let (_db, store, _, campaign, player) = setup(backend).await;
    let mut tasks = Vec::new();
    for i in 0..64 {
        let store = store.clone();
        let campaign = campaign.clone();
        let player = player.clone();
        tasks.push(tokio::spawn(async move {
            let decide = writer(campaign.id, player.id, 2, true);
            store.append_post(request(&campaign, &player, &format!("k{i}"), "h"), decide.clone()).await
        }));
    }
    for task in tasks {
        match task.await.unwrap() {
            // The answer carries the receipt the store made before writing the post.
            Ok(Appended::New(post, _)) => assert_eq!(post.receipt, receipt_of(&post)),
            other => panic!("{other:?}"),
        }
    }
    let posts = store.posts(campaign.id, 0, 100).await.unwrap();
    assert_eq!(posts.iter().map(|p| p.seq).collect::<Vec<_>>(), (1..=64).collect::<Vec<_>>());
    for pair in posts.windows(2) {
        assert_eq!(pair[1].prev_hash, pair[0].hash);
    }
    // Each post signed was stored with its own receipt (a batch's posts are signed together).
    for post in &posts {
        assert_eq!(post.receipt, receipt_of(post), "post {}", post.seq);
    }
    let outcomes = store.outcomes(campaign.id, 0, 1000).await.unwrap();
    assert_eq!(outcomes.iter().map(|o| o.position).collect::<Vec<_>>(), (1..=128).collect::<Vec<_>>());
    // New keys, no failing statement: every batch was written together.
    assert_eq!(store.batches_one_by_one(), 0);
}

/// Posts to four campaigns through two stores on one database, in rounds: a store decides a
/// campaign's posts ahead, while a batch commits, on the tail it kept from an earlier batch of its
/// own, which the other store's posts have since moved on. Each such post is decided again on the
/// tail its transaction reads: every campaign's log runs 1…n, each post linked to the one before,
/// with its own receipt, its outcome and its snapshot, and no batch had to go one by one.
async fn kept_tails_out_of_date(backend: Backend) {
    let (db, first, moderator, _, _) = setup(backend).await;
    let second = db.store().await;
    let mut games = Vec::new();
    for i in 0..4u8 {
        let campaign = first.create_campaign(new_campaign(moderator.id, &format!("Spread {i}"))).await.unwrap();
        let mut player = principal(PrincipalKind::Player, Some(campaign.id));
        player.created_by = Some(moderator.id);
        let player =
            first.create_principal(NewPrincipal { principal: player, token_hash: [10 + i; 32] }).await.unwrap();
        games.push((campaign, player));
    }
    let rounds = 4;
    for round in 0..rounds {
        let mut tasks = Vec::new();
        for i in 0..48 {
            // Each campaign gets posts through both stores in every round.
            let store = if (i / 4 + round) % 2 == 0 { first.clone() } else { second.clone() };
            let (campaign, player) = games[i % 4].clone();
            tasks.push(tokio::spawn(async move {
                let decide = writer(campaign.id, player.id, 1, i % 3 == 0);
                store.append_post(request(&campaign, &player, &format!("k{round}-{i}"), "h"), decide).await
            }));
        }
        for task in tasks {
            match task.await.unwrap() {
                Ok(Appended::New(post, _)) => assert_eq!(post.receipt, receipt_of(&post)),
                other => panic!("{other:?}"),
            }
        }
    }
    let per_campaign = rounds * 12;
    for (campaign, _) in &games {
        let posts = first.posts(campaign.id, 0, 1000).await.unwrap();
        assert_eq!(posts.iter().map(|p| p.seq).collect::<Vec<_>>(), (1..=per_campaign as i64).collect::<Vec<_>>());
        for pair in posts.windows(2) {
            assert_eq!(pair[1].prev_hash, pair[0].hash);
        }
        for post in &posts {
            assert_eq!(post.receipt, receipt_of(post), "post {}", post.seq);
        }
        let outcomes = first.outcomes(campaign.id, 0, 1000).await.unwrap();
        assert_eq!(
            outcomes.iter().map(|o| (o.position, o.seq)).collect::<Vec<_>>(),
            (1..=per_campaign as i64).map(|n| (n, n)).collect::<Vec<_>>()
        );
    }
    assert_eq!((first.batches_one_by_one(), second.batches_one_by_one()), (0, 0));
}

async fn quota_race(backend: Backend) {
    let (_db, store, _, campaign, player) = setup(backend).await;
    // The writer stamps posts from 2023-11-14 on; a quota counted from before then.
    let since = Utc.timestamp_millis_opt(1_600_000_000_000).unwrap();
    let quotas = move |limit| {
        vec![
            adjutant_store::Quota { kind: None, since, limit: 1000 },
            adjutant_store::Quota { kind: Some("note".into()), since, limit },
        ]
    };
    let mut tasks = Vec::new();
    for i in 0..48 {
        let (store, campaign, player) = (store.clone(), campaign.clone(), player.clone());
        tasks.push(tokio::spawn(async move {
            let asked = AppendRequest { quotas: quotas(20), ..request(&campaign, &player, &format!("q{i}"), "h") };
            (i, store.append_post(asked, writer(campaign.id, player.id, 0, false)).await)
        }));
    }
    let (mut stored, mut refused) = (Vec::new(), 0);
    for task in tasks {
        match task.await.unwrap() {
            (i, Ok(Appended::New(..))) => stored.push(i),
            (_, Err(StoreError::QuotaSpent(1))) => refused += 1,
            (_, other) => panic!("{other:?}"),
        }
    }
    assert_eq!((stored.len(), refused), (20, 28), "the quota of 20 notes, against 48 sent at once");
    // Those refused leave no gap: posts decided on a tail a refused post would have left were
    // decided again, so the log runs on, each post linked to the one before it.
    let log = store.posts(campaign.id, 0, 100).await.unwrap();
    assert_eq!(log.iter().map(|p| p.seq).collect::<Vec<_>>(), (1..=20).collect::<Vec<_>>());
    for pair in log.windows(2) {
        assert_eq!(pair[1].prev_hash, pair[0].hash, "post {} links to post {}", pair[1].seq, pair[0].seq);
        assert!(pair[1].stamp >= pair[0].stamp);
    }
    // A key used before is answered with its post, never refused for the quota it spent.
    let again = AppendRequest { quotas: quotas(20), ..request(&campaign, &player, &format!("q{}", stored[0]), "h") };
    let replayed = store.append_post(again, writer(campaign.id, player.id, 0, false)).await;
    assert!(matches!(replayed, Ok(Appended::Replayed(..))), "{replayed:?}");
    // Counted from later (the next day), the quota is new; the first quota, of every kind, too.
    let later = Utc.timestamp_millis_opt(1_700_000_020_500).unwrap();
    let next_day = AppendRequest {
        quotas: vec![adjutant_store::Quota { kind: None, since: later, limit: 1 }],
        ..request(&campaign, &player, "next-day", "h")
    };
    assert!(matches!(
        store.append_post(next_day, writer(campaign.id, player.id, 0, false)).await,
        Ok(Appended::New(..))
    ));
    let every_kind = AppendRequest {
        quotas: vec![adjutant_store::Quota { kind: None, since, limit: 21 }],
        ..request(&campaign, &player, "every-kind", "h")
    };
    assert!(matches!(
        store.append_post(every_kind, writer(campaign.id, player.id, 0, false)).await,
        Err(StoreError::QuotaSpent(0))
    ));
}

/// Posts of several authors in several campaigns sent at once: each author's quota counts that
/// author's posts in that campaign, stored before and in the same batch, and no one else's.
async fn quotas_of_many_authors_at_once(backend: Backend) {
    let (_db, store, moderator, first, player) = setup(backend).await;
    let second = store.create_campaign(new_campaign(moderator.id, "Second")).await.unwrap();
    let mut other = principal(PrincipalKind::Player, Some(first.id));
    other.created_by = Some(moderator.id);
    let other = store.create_principal(NewPrincipal { principal: other, token_hash: [3; 32] }).await.unwrap();
    let since = Utc.timestamp_millis_opt(1_600_000_000_000).unwrap();
    // Before: the player's 3 notes in the first campaign and 1 in the second; none by the other.
    for (campaign, n) in [(&first, 3), (&second, 1)] {
        for i in 0..n {
            let asked = request(campaign, &player, &format!("before-{}-{i}", campaign.name), "h");
            store.append_post(asked, writer(campaign.id, player.id, 0, false)).await.unwrap();
        }
    }
    let quotas = vec![
        adjutant_store::Quota { kind: None, since, limit: 1000 },
        adjutant_store::Quota { kind: Some("note".into()), since, limit: 5 },
    ];
    let senders = [(&first, &player), (&first, &other), (&second, &player)];
    let mut tasks = Vec::new();
    for i in 0..6 {
        for (s, (campaign, author)) in senders.iter().enumerate() {
            let (store, campaign, author, quotas) =
                (store.clone(), (*campaign).clone(), (*author).clone(), quotas.clone());
            tasks.push(tokio::spawn(async move {
                let asked = AppendRequest { quotas, ..request(&campaign, &author, &format!("at-once-{s}-{i}"), "h") };
                (s, store.append_post(asked, writer(campaign.id, author.id, 0, false)).await)
            }));
        }
    }
    let mut answers = BTreeMap::new();
    for task in tasks {
        let (s, answer) = task.await.unwrap();
        let (stored, refused) = answers.entry(s).or_insert((0, 0));
        match answer {
            Ok(Appended::New(..)) => *stored += 1,
            Err(StoreError::QuotaSpent(1)) => *refused += 1,
            other => panic!("{other:?}"),
        }
    }
    // 5 notes each: 2 more for the player in the first campaign, 5 for the other, 4 in the second.
    assert_eq!(answers, BTreeMap::from([(0, (2, 4)), (1, (5, 1)), (2, (4, 2))]));
    for (campaign, posts) in [(&first, 3 + 2 + 5), (&second, 1 + 4)] {
        let log = store.posts(campaign.id, 0, 100).await.unwrap();
        assert_eq!(log.iter().map(|p| p.seq).collect::<Vec<_>>(), (1..=posts).collect::<Vec<_>>(), "{}", campaign.name);
    }
}

/// A quota counts from its start (a day's midnight): posts of the same batch stamped before it
/// count no more than stored ones do.
async fn quota_from_its_start(backend: Backend) {
    let (_db, store, _, campaign, player) = setup(backend).await;
    // The writer stamps post n at 1_700_000_000_000 + n s: posts 1 to 3 come before the start.
    let since = Utc.timestamp_millis_opt(1_700_000_003_500).unwrap();
    let mut tasks = Vec::new();
    for i in 0..8 {
        let (store, campaign, player) = (store.clone(), campaign.clone(), player.clone());
        tasks.push(tokio::spawn(async move {
            let quotas = vec![adjutant_store::Quota { kind: None, since, limit: 2 }];
            let asked = AppendRequest { quotas, ..request(&campaign, &player, &format!("day-{i}"), "h") };
            store.append_post(asked, writer(campaign.id, player.id, 0, false)).await
        }));
    }
    let (mut stored, mut refused) = (0, 0);
    for task in tasks {
        match task.await.unwrap() {
            Ok(Appended::New(..)) => stored += 1,
            Err(StoreError::QuotaSpent(0)) => refused += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((stored, refused), (5, 3), "3 posts before the quota's start, then its 2");
}

async fn concurrent_same_key(backend: Backend) {
    let (db, store, _, campaign, player) = setup(backend).await;
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let store = store.clone();
        let campaign = campaign.clone();
        let player = player.clone();
        tasks.push(tokio::spawn(async move {
            let decide = writer(campaign.id, player.id, 0, false);
            store.append_post(request(&campaign, &player, "only-once", "h"), decide.clone()).await
        }));
    }
    let mut new = 0;
    let mut seqs = BTreeSet::new();
    for task in tasks {
        match task.await.unwrap().unwrap() {
            Appended::New(post, _) => {
                new += 1;
                seqs.insert(post.seq);
            }
            Appended::Replayed(post, _) => {
                seqs.insert(post.seq);
            }
        }
    }
    assert_eq!(new, 1);
    assert_eq!(seqs.into_iter().collect::<Vec<_>>(), [1]);
    assert_eq!(db.count("posts").await, 1);
}

/// Posts appended at once share commits (group commit): a declined post, a replayed key and a
/// key reused with another request each answer for themselves, and the rest of the batch is
/// written whole around them.
async fn mixed_batch(backend: Backend) {
    let (db, store, _, campaign, player) = setup(backend).await;
    let mut tasks = Vec::new();
    for i in 0..48usize {
        let (store, campaign, player) = (store.clone(), campaign.clone(), player.clone());
        tasks.push(tokio::spawn(async move {
            let decide: SharedDecide = match i % 4 {
                0 => std::sync::Arc::new(|_: &Tail| -> Result<Decision, Declined> { Err(Declined) }),
                // None, one or two outcomes: a post without any moves no other post's.
                _ => writer(campaign.id, player.id, i % 3, i % 3 == 0),
            };
            // Twelve posts send one key: half with one request, half each with another.
            let (key, hash) = match i % 4 {
                1 if i < 24 => ("shared".to_owned(), "same".to_owned()),
                1 => ("shared".to_owned(), format!("other-{i}")),
                _ => (format!("m{i}"), "h".to_owned()),
            };
            let answer = store.append_post(request(&campaign, &player, &key, &hash), decide).await;
            (i, hash, answer)
        }));
    }
    let mut shared_new = Vec::new();
    let mut shared_answers = Vec::new();
    let mut made = Vec::new();
    for task in tasks {
        let (i, hash, answer) = task.await.unwrap();
        if let Ok(Appended::New(post, outcomes)) = &answer {
            made.push((post.seq, outcomes.clone()));
        }
        match (i % 4, answer) {
            (0, answer) => assert!(matches!(answer, Err(StoreError::Declined)), "{i}: {answer:?}"),
            (1, Ok(Appended::New(post, _))) => shared_new.push((hash, post.seq)),
            (1, answer) => shared_answers.push((hash, answer)),
            (_, answer) => assert!(matches!(answer, Ok(Appended::New(..))), "{i}: {answer:?}"),
        }
    }
    // The shared key made one post; its own request is replayed, any other refused.
    assert_eq!(shared_new.len(), 1, "{shared_new:?}");
    let (stored_hash, stored_seq) = &shared_new[0];
    for (hash, answer) in shared_answers {
        match answer {
            Ok(Appended::Replayed(post, _)) => {
                assert_eq!(&hash, stored_hash);
                assert_eq!(post.seq, *stored_seq);
            }
            Err(StoreError::KeyReused) => assert_ne!(&hash, stored_hash),
            other => panic!("{hash}: {other:?}"),
        }
    }
    let posts = store.posts(campaign.id, 0, 100).await.unwrap();
    assert_eq!(posts.iter().map(|p| p.seq).collect::<Vec<_>>(), (1..=25).collect::<Vec<_>>());
    for pair in posts.windows(2) {
        assert_eq!(pair[1].prev_hash, pair[0].hash);
    }
    let outcomes = store.outcomes(campaign.id, 0, 1000).await.unwrap();
    let made_outcomes: usize = made.iter().map(|(_, outcomes)| outcomes.len()).sum();
    assert!(made.iter().any(|(_, outcomes)| outcomes.is_empty()), "{made:?}");
    assert!(made.iter().any(|(_, outcomes)| outcomes.len() == 2), "{made:?}");
    assert_eq!(outcomes.iter().map(|o| o.position).collect::<Vec<_>>(), (1..=made_outcomes as i64).collect::<Vec<_>>());
    // Each post's outcomes are read back as its answer gave them, whatever was refused between
    // the posts of its batch; and the whole range of posts holds every outcome.
    for (seq, answered) in &made {
        assert_eq!(&store.outcomes_of_post(campaign.id, *seq).await.unwrap(), answered, "post {seq}");
    }
    assert_eq!(store.outcomes_of_posts(campaign.id, 0, 25).await.unwrap(), outcomes);
    assert_eq!(db.count("idempotency_keys").await, 25);
    eprintln!("{backend:?}: the largest batch was {}", store.largest_batch());
}

async fn batch_with_a_failing_post(backend: Backend) {
    let (db, store, moderator, first, first_player) = setup(backend).await;
    let second = store.create_campaign(new_campaign(moderator.id, "Second")).await.unwrap();
    let mut second_player = principal(PrincipalKind::Player, Some(second.id));
    second_player.created_by = Some(moderator.id);
    let second_player =
        store.create_principal(NewPrincipal { principal: second_player, token_hash: [6; 32] }).await.unwrap();
    // An outcome id already taken: the post that reuses it breaks a unique constraint.
    let Appended::New(_, taken) = store
        .append_post(request(&first, &first_player, "before", "h"), writer(first.id, first_player.id, 1, false))
        .await
        .unwrap()
    else {
        panic!("a new key makes a new post");
    };
    let taken = taken[0].id;

    let mut tasks = Vec::new();
    for i in 0..64usize {
        let store = store.clone();
        let (campaign, player) =
            if i % 2 == 0 { (first.clone(), first_player.clone()) } else { (second.clone(), second_player.clone()) };
        tasks.push(tokio::spawn(async move {
            let write = writer(campaign.id, player.id, 2, i % 3 == 0);
            let decide: SharedDecide = match i {
                _ if i % 8 == 3 => Arc::new(|_: &Tail| -> Result<Decision, Declined> { Err(Declined) }),
                20 | 41 => Arc::new(move |tail: &Tail| {
                    let mut decision = write(tail)?;
                    decision.outcomes[1].id = taken;
                    Ok(decision)
                }),
                _ => write,
            };
            (i, store.append_post(request(&campaign, &player, &format!("b{i}"), "h"), decide).await)
        }));
    }
    let mut stored = [Vec::new(), Vec::new()];
    for task in tasks {
        let (i, answer) = task.await.unwrap();
        match answer {
            Err(StoreError::Declined) if i % 8 == 3 => {}
            Err(StoreError::Conflict(_)) if i == 20 || i == 41 => {}
            Ok(Appended::New(post, outcomes)) if i % 8 != 3 && i != 20 && i != 41 => {
                assert_eq!(outcomes.len(), 2);
                stored[i % 2].push((i, post.seq));
            }
            other => panic!("post {i}: {other:?}"),
        }
    }
    for (campaign, stored, earlier) in [(&first, &stored[0], 1), (&second, &stored[1], 0)] {
        let posts = store.posts(campaign.id, 0, 100).await.unwrap();
        let count = (stored.len() + earlier) as i64;
        assert_eq!(posts.iter().map(|p| p.seq).collect::<Vec<_>>(), (1..=count).collect::<Vec<_>>());
        for pair in posts.windows(2) {
            assert_eq!(pair[1].prev_hash, pair[0].hash);
        }
        let outcomes = store.outcomes(campaign.id, 0, 1000).await.unwrap();
        let positions: Vec<i64> = outcomes.iter().map(|o| o.position).collect();
        assert_eq!(positions, (1..=outcomes.len() as i64).collect::<Vec<_>>());
        assert_eq!(outcomes.len() as i64, 2 * count - earlier as i64);
        // A snapshot for each post that asked for one, each after its own post.
        let snapshots = store.snapshots(campaign.id, 0, 100).await.unwrap();
        let asked: BTreeSet<i64> = stored.iter().filter(|(i, _)| i % 3 == 0).map(|&(_, seq)| seq).collect();
        assert_eq!(snapshots.iter().map(|(seq, _)| *seq).collect::<BTreeSet<_>>(), asked);
        for (seq, state) in &snapshots {
            assert_eq!(state, &format!("{{\"after\":{seq}}}"));
        }
    }
    assert_eq!(db.count("idempotency_keys").await, (stored[0].len() + stored[1].len() + 1) as i64);
    // The batches holding a failing post went one by one; at least one did.
    let one_by_one = store.batches_one_by_one();
    assert!(one_by_one >= 1, "{one_by_one}");
    // Every key of the batch is remembered: sent again, it gives back its post.
    for (i, seq) in stored[0].iter().chain(&stored[1]).copied() {
        let (campaign, player) = if i % 2 == 0 { (&first, &first_player) } else { (&second, &second_player) };
        let again = store
            .append_post(request(campaign, player, &format!("b{i}"), "h"), writer(campaign.id, player.id, 2, false))
            .await
            .unwrap();
        assert!(matches!(&again, Appended::Replayed(post, outcomes) if post.seq == seq && outcomes.len() == 2));
    }
    eprintln!("{backend:?}: the largest batch was {}", store.largest_batch());
}

/// Appends a post through `write` and gives back the tail its decide was shown.
async fn tail_seen(store: &Arc<dyn Store>, request: AppendRequest, write: SharedDecide) -> Tail {
    let seen = Arc::new(std::sync::Mutex::new(None));
    let keep = seen.clone();
    let decide: SharedDecide = Arc::new(move |tail: &Tail| {
        *keep.lock().unwrap() = Some(tail.clone());
        write(tail)
    });
    store.append_post(request, decide).await.unwrap();
    let tail = seen.lock().unwrap().take();
    tail.expect("decide ran")
}

async fn tails(backend: Backend) {
    let (_db, store, moderator, campaign, player) = setup(backend).await;
    let other = store.create_campaign(new_campaign(moderator.id, "Other")).await.unwrap();
    let mut other_player = principal(PrincipalKind::Player, Some(other.id));
    other_player.created_by = Some(moderator.id);
    let other_player =
        store.create_principal(NewPrincipal { principal: other_player, token_hash: [7; 32] }).await.unwrap();
    let empty = Tail { next_seq: 1, prev_hash: None, prev_stamp: None, snapshot: None, next_position: 1 };
    let first =
        tail_seen(&store, request(&campaign, &player, "t0", "h"), writer(campaign.id, player.id, 2, true)).await;
    assert_eq!(first, empty);
    // Post 2 has no snapshot and no outcome, post 3 three outcomes; the other campaign's posts
    // in between are none of this campaign's tail.
    for (i, (outcomes, snapshot)) in [(0, false), (3, false)].into_iter().enumerate() {
        let key = format!("t{}", i + 1);
        store
            .append_post(request(&campaign, &player, &key, "h"), writer(campaign.id, player.id, outcomes, snapshot))
            .await
            .unwrap();
        store
            .append_post(request(&other, &other_player, &key, "h"), writer(other.id, other_player.id, 1, true))
            .await
            .unwrap();
    }
    let last = store.head(campaign.id).await.unwrap().unwrap();
    let fourth =
        tail_seen(&store, request(&campaign, &player, "t4", "h"), writer(campaign.id, player.id, 1, false)).await;
    // Each tail was read by the batch's one statement, not post by post after a failed one.
    assert_eq!(store.batches_one_by_one(), 0);
    assert_eq!(
        fourth,
        Tail {
            next_seq: 4,
            prev_hash: Some(last.hash.clone()),
            prev_stamp: Some(last.stamp),
            snapshot: Some((1, "{\"after\":1}".into())),
            next_position: 6,
        }
    );
    let other_last = store.head(other.id).await.unwrap().unwrap();
    let other_tail =
        tail_seen(&store, request(&other, &other_player, "t9", "h"), writer(other.id, other_player.id, 0, false)).await;
    assert_eq!(
        other_tail,
        Tail {
            next_seq: 3,
            prev_hash: Some(other_last.hash),
            prev_stamp: Some(other_last.stamp),
            snapshot: Some((2, "{\"after\":2}".into())),
            next_position: 3,
        }
    );
}

async fn outcomes_and_snapshots(backend: Backend) {
    let (_db, store, moderator, campaign, player) = setup(backend).await;
    for i in 0..4 {
        let decide = writer(campaign.id, player.id, 1, i % 2 == 0);
        store.append_post(request(&campaign, &player, &format!("k{i}"), "h"), decide.clone()).await.unwrap();
    }
    // Snapshots after posts 1 and 3: the latest at or before a post.
    assert_eq!(store.snapshot_at(campaign.id, 1).await.unwrap(), Some((1, "{\"after\":1}".into())));
    assert_eq!(store.snapshot_at(campaign.id, 2).await.unwrap(), Some((1, "{\"after\":1}".into())));
    assert_eq!(store.snapshot_at(campaign.id, i64::MAX).await.unwrap(), Some((3, "{\"after\":3}".into())));
    assert_eq!(store.snapshot_at(campaign.id, 0).await.unwrap(), None);

    let outcomes = store.outcomes(campaign.id, 1, 2).await.unwrap();
    assert_eq!(outcomes.iter().map(|o| o.position).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(store.outcomes_of_post(campaign.id, 4).await.unwrap()[0].position, 4);
    let first = store.outcomes(campaign.id, 0, 1).await.unwrap().remove(0);
    assert_eq!(store.outcome(campaign.id, first.id).await.unwrap(), Some(first.clone()));

    let mut bot = principal(PrincipalKind::Bot, Some(campaign.id));
    bot.created_by = Some(moderator.id);
    let bot = store.create_principal(NewPrincipal { principal: bot, token_hash: [9; 32] }).await.unwrap();
    assert_eq!(store.pending_outcomes(&bot, 10).await.unwrap().len(), 4);
    let at = Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0).unwrap();
    let ack = Acknowledgement {
        bot_id: bot.id,
        outcome_id: first.id,
        campaign_id: campaign.id,
        forum_post_id: "p1".into(),
        acked_at: at,
    };
    assert_eq!(store.acknowledge(ack.clone()).await.unwrap(), ack);
    let again = Acknowledgement { forum_post_id: "p2".into(), ..ack.clone() };
    assert_eq!(store.acknowledge(again).await.unwrap(), ack, "the first acknowledgement stands");
    let pending = store.pending_outcomes(&bot, 10).await.unwrap();
    assert_eq!(pending.iter().map(|o| o.position).collect::<Vec<_>>(), [2, 3, 4]);
}

async fn outcomes_of_posts(backend: Backend) {
    let (_db, store, moderator, campaign, player) = setup(backend).await;
    // Another campaign's posts, written in between, share seqs with this one's and must not show.
    let other = store.create_campaign(new_campaign(moderator.id, "Other")).await.unwrap();
    let mut other_player = principal(PrincipalKind::Player, Some(other.id));
    other_player.created_by = Some(moderator.id);
    let other_player =
        store.create_principal(NewPrincipal { principal: other_player, token_hash: [5; 32] }).await.unwrap();
    // Posts 1..=6 with 2, 0, 1, 3, 0, 2 outcomes.
    for (i, count) in [2, 0, 1, 3, 0, 2].into_iter().enumerate() {
        let decide = writer(campaign.id, player.id, count, false);
        store.append_post(request(&campaign, &player, &format!("k{i}"), "h"), decide.clone()).await.unwrap();
        let decide = writer(other.id, other_player.id, 1, false);
        store.append_post(request(&other, &other_player, &format!("k{i}"), "h"), decide.clone()).await.unwrap();
    }
    let positions =
        |outcomes: &[adjutant_store::Outcome]| outcomes.iter().map(|o| (o.seq, o.position)).collect::<Vec<_>>();

    // The whole log: every outcome of the campaign, in position order.
    let all = store.outcomes_of_posts(campaign.id, 0, 6).await.unwrap();
    assert_eq!(all, store.outcomes(campaign.id, 0, 100).await.unwrap());
    assert_eq!(positions(&all), [(1, 1), (1, 2), (3, 3), (4, 4), (4, 5), (4, 6), (6, 7), (6, 8)]);
    // A page: after is exclusive, through inclusive; the same as asking post by post.
    let page = store.outcomes_of_posts(campaign.id, 2, 4).await.unwrap();
    assert_eq!(positions(&page), [(3, 3), (4, 4), (4, 5), (4, 6)]);
    let mut one_by_one = Vec::new();
    for seq in 3..=4 {
        one_by_one.extend(store.outcomes_of_post(campaign.id, seq).await.unwrap());
    }
    assert_eq!(page, one_by_one);
    // Posts without outcomes, an empty range and a range past the log's end.
    assert!(store.outcomes_of_posts(campaign.id, 4, 5).await.unwrap().is_empty());
    assert!(store.outcomes_of_posts(campaign.id, 3, 3).await.unwrap().is_empty());
    assert!(store.outcomes_of_posts(campaign.id, 6, 100).await.unwrap().is_empty());
    assert_eq!(positions(&store.outcomes_of_posts(campaign.id, 5, i64::MAX).await.unwrap()), [(6, 7), (6, 8)]);
    // The other campaign: one outcome a post, its own positions.
    assert_eq!(
        positions(&store.outcomes_of_posts(other.id, 0, 6).await.unwrap()),
        (1..=6).map(|n| (n, n)).collect::<Vec<_>>()
    );
}

/// A backend's migrations before a version: the schema a database an earlier build left has.
#[derive(Debug)]
struct MigrationsBefore(adjutant_store::migrations::Embedded, i64);

impl sqlx::migrate::MigrationSource<'static> for MigrationsBefore {
    fn resolve(
        self,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Vec<sqlx::migrate::Migration>, sqlx::error::BoxDynError>> + Send>,
    > {
        Box::pin(async move {
            let all = self.0.migrations()?;
            Ok(all.into_iter().filter(|migration| migration.version < self.1).collect())
        })
    }
}

/// Brings `db` up to (not including) migration `version`, as an earlier build would have.
async fn migrate_before(db: &TestDb, version: i64) {
    use sqlx::{migrate::Migrator, ConnectOptions, Connection};
    match db.backend {
        Backend::Sqlite => {
            let options: sqlx::sqlite::SqliteConnectOptions = db.url.parse().unwrap();
            let mut conn = options.create_if_missing(true).connect().await.unwrap();
            let before = MigrationsBefore(adjutant_store::migrations::SQLITE, version);
            Migrator::new(before).await.unwrap().run(&mut conn).await.unwrap();
        }
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
            let before = MigrationsBefore(adjutant_store::migrations::POSTGRES, version);
            Migrator::new(before).await.unwrap().run(&mut conn).await.unwrap();
        }
    }
}

/// A log written before posts recorded their outcomes' positions (migration 16): the upgrade
/// works each post's out from the outcomes stored, and every post finds its outcomes as before:
/// posts without outcomes at the start, between and at the end, two campaigns sharing sequence
/// numbers, one post at a time, a range, and a range past the end.
async fn upgraded_log(backend: Backend) {
    let db = TestDb::new(backend).await;
    migrate_before(&db, 16).await;
    let (first, second, author) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
    // Each campaign's posts, each with its outcomes' count.
    let logs = [(first, vec![0, 2, 0, 1, 0, 0, 3, 0]), (second, vec![1, 0, 2])];
    // The rows as they were stored, without their campaigns and authors: foreign keys aside.
    let (mut script, stamp) = match backend {
        Backend::Sqlite => ("PRAGMA foreign_keys = OFF;\n".to_owned(), ("stamp_ms", "0")),
        Backend::Postgres => ("SET session_replication_role = replica;\n".to_owned(), ("stamp", "'epoch'")),
    };
    for (campaign, counts) in &logs {
        let mut position = 0;
        for (seq, &count) in (1..).zip(counts) {
            script.push_str(&format!(
                "INSERT INTO posts (campaign_id, seq, {}, author_id, kind, body, prev_hash, hash)
                 VALUES ('{campaign}', {seq}, {}, '{author}', 'note', '{{}}', 'p', 'h');\n",
                stamp.0, stamp.1
            ));
            for _ in 0..count {
                position += 1;
                script.push_str(&format!(
                    "INSERT INTO outcomes (id, campaign_id, position, seq, kind, data)
                     VALUES ('{}', '{campaign}', {position}, {seq}, 'roll', '{{}}');\n",
                    Uuid::new_v4()
                ));
            }
        }
    }
    db.execute(&script).await;

    let store = db.store().await;
    for (campaign, counts) in &logs {
        let mut all = Vec::new();
        for (seq, &count) in (1..).zip(counts) {
            let outcomes = store.outcomes_of_post(*campaign, seq).await.unwrap();
            assert_eq!(outcomes.len(), count, "{campaign} post {seq}");
            assert!(outcomes.iter().all(|o| o.seq == seq && o.campaign_id == *campaign), "{campaign} post {seq}");
            all.extend(outcomes);
        }
        let last = counts.len() as i64;
        assert_eq!(all.len(), counts.iter().sum::<usize>());
        assert_eq!(store.outcomes(*campaign, 0, 100).await.unwrap(), all);
        assert_eq!(store.outcomes_of_posts(*campaign, 0, last).await.unwrap(), all);
        let after_two: Vec<_> = all.iter().filter(|o| o.seq > 2).cloned().collect();
        assert_eq!(store.outcomes_of_posts(*campaign, 2, last + 10).await.unwrap(), after_two);
    }
    // Each post's column, as the upgrade worked it out: 0 before the first outcome.
    let wrong = format!(
        "posts WHERE (campaign_id = '{first}' AND outcomes_through <> CASE
             WHEN seq = 1 THEN 0 WHEN seq <= 3 THEN 2 WHEN seq <= 6 THEN 3 ELSE 6 END)
          OR (campaign_id = '{second}' AND outcomes_through <> CASE WHEN seq <= 2 THEN 1 ELSE 3 END)"
    );
    assert_eq!(db.count(&wrong).await, 0);
    // The log is append-only again after the update that filled the column.
    let rewrite = db.try_execute("UPDATE posts SET outcomes_through = 0").await;
    assert!(rewrite.unwrap_err().contains("append-only"));
}

async fn append_only(backend: Backend) {
    let (db, store, _, campaign, player) = setup(backend).await;
    let decide = writer(campaign.id, player.id, 1, true);
    store.append_post(request(&campaign, &player, "k", "h"), decide.clone()).await.unwrap();
    for sql in [
        "UPDATE posts SET body = '{}'",
        "DELETE FROM posts",
        "UPDATE outcomes SET data = '{}'",
        "DELETE FROM outcomes",
        "UPDATE snapshots SET state = '{}'",
        "DELETE FROM snapshots",
    ] {
        let refused = db.try_execute(sql).await;
        assert!(refused.as_ref().is_err_and(|e| e.contains("append-only")), "{sql}: {refused:?}");
    }
    assert_eq!(db.count("posts").await, 1);
}

async fn revocation(backend: Backend) {
    let (db, store, moderator, campaign, player) = setup(backend).await;
    let decide = writer(campaign.id, player.id, 1, false);
    store.append_post(request(&campaign, &player, "k", "h"), decide.clone()).await.unwrap();
    let (found, revoked_at) = store.principal(player.id).await.unwrap().unwrap();
    assert_eq!((found.id, revoked_at), (player.id, None));
    assert_eq!(store.principal(Uuid::new_v4()).await.unwrap(), None);

    // Rotation: the same principal, found by the new hash only.
    assert!(store.replace_token(player.id, &[7; 32]).await.unwrap());
    assert_eq!(store.principal_by_token_hash(&[2; 32]).await.unwrap(), None);
    assert_eq!(store.principal_by_token_hash(&[7; 32]).await.unwrap().map(|p| p.id), Some(player.id));
    // A hash another principal holds is a conflict, and changes nothing.
    let clash = store.replace_token(player.id, &[1; 32]).await;
    assert!(matches!(clash, Err(StoreError::Conflict(_))), "{clash:?}");
    assert_eq!(store.principal_by_token_hash(&[7; 32]).await.unwrap().map(|p| p.id), Some(player.id));

    // Revocation: found by no hash, the first time kept, no rotation after it.
    let at = Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, 0).unwrap();
    assert!(store.revoke_principal(player.id, at).await.unwrap());
    assert_eq!(store.principal_by_token_hash(&[7; 32]).await.unwrap(), None);
    assert!(store.revoke_principal(player.id, at + chrono::Duration::hours(1)).await.unwrap());
    assert_eq!(store.principal(player.id).await.unwrap().unwrap().1, Some(at));
    assert!(!store.replace_token(player.id, &[8; 32]).await.unwrap());
    assert_eq!(store.principal_by_token_hash(&[8; 32]).await.unwrap(), None);
    assert!(!store.revoke_principal(Uuid::new_v4(), at).await.unwrap());
    // Only the principal's row changed: the moderator still holds their token, the post stays.
    assert_eq!(store.principal_by_token_hash(&[1; 32]).await.unwrap(), Some(moderator.clone()));
    assert_eq!(db.count("posts").await, 1);
    assert_eq!(store.posts(campaign.id, 0, 10).await.unwrap()[0].author_id, player.id);

    // A campaign's players, in the order they were issued, the revoked one with its time; its
    // bots and other campaigns' players are not among them.
    let mut second = principal(PrincipalKind::Player, Some(campaign.id));
    second.created_at = player.created_at + chrono::Duration::minutes(5);
    let second = store.create_principal(NewPrincipal { principal: second, token_hash: [9; 32] }).await.unwrap();
    let bot = store
        .create_principal(NewPrincipal {
            principal: principal(PrincipalKind::Bot, Some(campaign.id)),
            token_hash: [10; 32],
        })
        .await
        .unwrap();
    let other = store.create_campaign(new_campaign(moderator.id, "Other")).await.unwrap();
    store
        .create_principal(NewPrincipal {
            principal: principal(PrincipalKind::Player, Some(other.id)),
            token_hash: [11; 32],
        })
        .await
        .unwrap();
    let players = store.campaign_principals(campaign.id, PrincipalKind::Player, 10).await.unwrap();
    let listed: Vec<(Uuid, Option<chrono::DateTime<Utc>>)> = players.iter().map(|(p, r)| (p.id, *r)).collect();
    assert_eq!(listed, vec![(player.id, Some(at)), (second.id, None)]);
    assert_eq!(players[1].0, second);
    let bots = store.campaign_principals(campaign.id, PrincipalKind::Bot, 10).await.unwrap();
    assert_eq!(bots.iter().map(|(p, _)| p.id).collect::<Vec<_>>(), vec![bot.id]);
    assert_eq!(store.campaign_principals(campaign.id, PrincipalKind::Player, 1).await.unwrap().len(), 1);
}

async fn webhook_lifecycle(backend: Backend) {
    let (_db, store, moderator, campaign, player) = setup(backend).await;
    let webhook = Webhook {
        id: Uuid::new_v4(),
        campaign_id: campaign.id,
        url: "http://127.0.0.1:9/hook".into(),
        secret: "whsec_old".into(),
        created_by: moderator.id,
        created_at: Utc.with_ymd_and_hms(2026, 11, 21, 9, 0, 0).unwrap(),
        disabled_at: None,
        disabled_reason: None,
    };
    store.create_webhook(webhook.clone()).await.unwrap();
    let decide = writer(campaign.id, player.id, 1, false);
    store.append_post(request(&campaign, &player, "k1", "h1"), decide.clone()).await.unwrap();
    // A new secret signs what is claimed from now on.
    assert!(store.replace_webhook_secret(webhook.id, "whsec_new").await.unwrap());
    let now = Utc::now();
    let claimed = store.claim_deliveries(now, now + chrono::Duration::seconds(30), 10).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].secret, "whsec_new");
    store
        .finish_delivery(
            adjutant_store::DeliveryAttempt {
                outbox_id: claimed[0].outbox_id,
                attempt: claimed[0].attempt,
                attempted_at: now,
                status_code: Some(500),
                error: None,
                duration_ms: 3,
            },
            adjutant_store::DeliveryVerdict::RetryAt(now),
        )
        .await
        .unwrap();
    // Disabled: nothing more is claimed or queued, the log stays, the secret is kept.
    assert!(store.disable_webhook(webhook.id, now, "deleted").await.unwrap());
    assert!(!store.disable_webhook(webhook.id, now, "again").await.unwrap());
    assert!(!store.replace_webhook_secret(webhook.id, "whsec_newer").await.unwrap());
    let stored = store.webhook(webhook.id).await.unwrap().unwrap();
    assert_eq!(stored.disabled_reason.as_deref(), Some("deleted"));
    assert_eq!(stored.secret, "whsec_new");
    store.append_post(request(&campaign, &player, "k2", "h2"), decide.clone()).await.unwrap();
    let later = now + chrono::Duration::minutes(5);
    assert!(store.claim_deliveries(later, later + chrono::Duration::seconds(30), 10).await.unwrap().is_empty());
    assert_eq!(store.deliveries(webhook.id, 0, 10).await.unwrap().len(), 1);
    assert!(!store.disable_webhook(Uuid::new_v4(), now, "none").await.unwrap());
}

async fn counting(backend: Backend) {
    let (_db, store, moderator, campaign, player) = setup(backend).await;
    // `writer` stamps post n at 1_700_000_000 s + n s, kind `note`.
    for key in ["a", "b", "c"] {
        store
            .append_post(request(&campaign, &player, key, key), writer(campaign.id, player.id, 0, false))
            .await
            .unwrap();
    }
    store
        .append_post(request(&campaign, &moderator, "m", "m"), writer(campaign.id, moderator.id, 0, false))
        .await
        .unwrap();
    let at = |seconds: i64| Utc.timestamp_millis_opt(1_700_000_000_000 + seconds * 1_000).unwrap();
    assert_eq!(store.count_posts_by_author(campaign.id, player.id, "note", at(0)).await.unwrap(), 3);
    assert_eq!(store.count_posts_by_author(campaign.id, player.id, "note", at(2)).await.unwrap(), 2);
    assert_eq!(store.count_posts_by_author(campaign.id, player.id, "note", at(4)).await.unwrap(), 0);
    assert_eq!(store.count_posts_by_author(campaign.id, player.id, "seal", at(0)).await.unwrap(), 0);
    assert_eq!(store.count_posts_by_author(campaign.id, moderator.id, "note", at(0)).await.unwrap(), 1);
    assert_eq!(store.count_posts_by_author(Uuid::new_v4(), player.id, "note", at(0)).await.unwrap(), 0);
}

async fn campaign_secrets(backend: Backend) {
    let (db, store, _, campaign, player) = setup(backend).await;
    assert_eq!(store.campaign_secrets(campaign.id).await.unwrap(), vec![]);
    let first = "a".repeat(64);
    assert_eq!(store.keep_campaign_secret(campaign.id, 0, &first).await.unwrap(), first);
    // A second secret for the same chain (two servers racing) gets the first one back.
    assert_eq!(store.keep_campaign_secret(campaign.id, 0, &"b".repeat(64)).await.unwrap(), first);
    assert_eq!(store.keep_campaign_secret(campaign.id, 1, &"c".repeat(64)).await.unwrap(), "c".repeat(64));
    assert_eq!(store.campaign_secrets(campaign.id).await.unwrap(), vec![(0, first.clone()), (1, "c".repeat(64))]);
    assert_eq!(store.campaign_secrets(Uuid::new_v4()).await.unwrap(), vec![]);
    for sql in ["UPDATE campaign_secrets SET secret = 'x'", "DELETE FROM campaign_secrets"] {
        let refused = db.try_execute(sql).await;
        assert!(refused.as_ref().is_err_and(|e| e.contains("append-only")), "{sql}: {refused:?}");
    }

    // Outcomes are counted by kind, across the campaign's posts.
    for key in ["a", "b"] {
        store
            .append_post(request(&campaign, &player, key, key), writer(campaign.id, player.id, 2, false))
            .await
            .unwrap();
    }
    assert_eq!(store.count_outcomes_of_kind(campaign.id, IndexedOutcomeKind::Battle).await.unwrap(), 0);
    assert_eq!(store.count_outcomes_of_kind(Uuid::new_v4(), IndexedOutcomeKind::Battle).await.unwrap(), 0);
}

async fn uploaded_scenarios(backend: Backend) {
    use adjutant_store::{ScenarioEntry, UploadedScenario};
    let (db, store, moderator, _, _) = setup(backend).await;
    let other = store
        .create_principal(NewPrincipal { principal: principal(PrincipalKind::Moderator, None), token_hash: [3; 32] })
        .await
        .unwrap();
    let at = Utc.with_ymd_and_hms(2026, 11, 27, 9, 0, 0).unwrap();
    let upload = |moderator: Uuid, id: char, name: &str| UploadedScenario {
        entry: ScenarioEntry {
            id: id.to_string().repeat(64),
            moderator_id: moderator,
            name: name.into(),
            title: format!("{name} title"),
            created_at: at,
        },
        text: format!("name = \"{name}\"\n"),
    };
    assert!(store.scenarios(moderator.id, None, 10).await.unwrap().is_empty());
    let first = upload(moderator.id, 'b', "Valley");
    assert_eq!(store.keep_scenario(first.clone()).await.unwrap(), first);
    // The same id again (the same text) by its moderator: the one kept first comes back.
    let mut again = upload(moderator.id, 'b', "Renamed");
    again.entry.created_at = at + chrono::Duration::hours(1);
    assert_eq!(store.keep_scenario(again).await.unwrap(), first);
    // Another moderator's upload of the same text is theirs.
    let theirs = upload(other.id, 'b', "Theirs");
    assert_eq!(store.keep_scenario(theirs.clone()).await.unwrap(), theirs);
    let second = upload(moderator.id, 'a', "Hills");
    store.keep_scenario(second.clone()).await.unwrap();

    assert_eq!(store.scenario(moderator.id, &"b".repeat(64)).await.unwrap(), Some(first.clone()));
    assert_eq!(store.scenario(other.id, &"b".repeat(64)).await.unwrap(), Some(theirs.clone()));
    assert_eq!(store.scenario(other.id, &"a".repeat(64)).await.unwrap(), None);
    // Listed by id, a page at a time, each moderator's own only.
    let ids = |list: Vec<ScenarioEntry>| list.into_iter().map(|e| e.name).collect::<Vec<_>>();
    assert_eq!(ids(store.scenarios(moderator.id, None, 10).await.unwrap()), ["Hills", "Valley"]);
    assert_eq!(ids(store.scenarios(moderator.id, None, 1).await.unwrap()), ["Hills"]);
    assert_eq!(ids(store.scenarios(moderator.id, Some(&"a".repeat(64)), 10).await.unwrap()), ["Valley"]);
    assert_eq!(ids(store.scenarios(other.id, None, 10).await.unwrap()), ["Theirs"]);
    assert_eq!(store.scenarios(moderator.id, None, 10).await.unwrap()[1], first.entry);
    for sql in ["UPDATE scenarios SET text = 'x'", "DELETE FROM scenarios"] {
        let refused = db.try_execute(sql).await;
        assert!(refused.as_ref().is_err_and(|e| e.contains("append-only")), "{sql}: {refused:?}");
    }
}

async fn contacts(backend: Backend) {
    let (_db, store, moderator, campaign, player) = setup(backend).await;
    let at = Utc.with_ymd_and_hms(2026, 11, 27, 9, 0, 0).unwrap();
    assert!(store.campaign_contacts(campaign.id).await.unwrap().is_empty());
    let first = adjutant_store::Contact {
        forum_handle: Some("stonewall".into()),
        discord_user_id: Some("80351110224678912".into()),
        email: Some("tj@example.org".into()),
    };
    assert!(store.set_contact(player.id, &first, at).await.unwrap());
    assert_eq!(store.campaign_contacts(campaign.id).await.unwrap(), vec![(player.id, first)]);
    // Recorded again: replaced, a field left out cleared.
    let second = adjutant_store::Contact { forum_handle: Some("old_jack".into()), ..Default::default() };
    assert!(store.set_contact(player.id, &second, at).await.unwrap());
    assert_eq!(store.campaign_contacts(campaign.id).await.unwrap(), vec![(player.id, second)]);
    // No such principal: nothing recorded. Another campaign's players are not this one's.
    assert!(!store.set_contact(Uuid::new_v4(), &Default::default(), at).await.unwrap());
    let other = store.create_campaign(new_campaign(moderator.id, "Other")).await.unwrap();
    assert!(store.campaign_contacts(other.id).await.unwrap().is_empty());
}

async fn mail_queue(backend: Backend) {
    let (_db, store, _moderator, campaign, player) = setup(backend).await;
    let at = Utc.with_ymd_and_hms(2026, 11, 27, 9, 0, 0).unwrap();
    let mail = |key: &str, due_at| adjutant_store::NewMail {
        key: key.into(),
        campaign_id: campaign.id,
        principal_id: player.id,
        to: "tj@example.org".into(),
        subject: format!("about {key}"),
        body: "Your turn.".into(),
        about: "{}".into(),
        due_at,
    };
    let soon = mail("turn 1", at);
    let later = mail("reminder 1", at + chrono::Duration::hours(1));
    assert!(store.queue_mail(&soon).await.unwrap());
    assert!(store.queue_mail(&later).await.unwrap());
    // The same key again: nothing changes.
    assert!(!store.queue_mail(&mail("turn 1", at + chrono::Duration::days(1))).await.unwrap());
    // Only what is due, once until its lease runs out.
    let lease = at + chrono::Duration::minutes(5);
    let claimed = store.claim_mails(at, lease, 10).await.unwrap();
    assert_eq!(claimed.iter().map(|c| (&c.mail, c.attempts)).collect::<Vec<_>>(), vec![(&soon, 1)]);
    assert!(store.claim_mails(at + chrono::Duration::minutes(1), lease, 10).await.unwrap().is_empty());
    // A failure is tried again from its retry time; a sent mail never again.
    let failed =
        adjutant_store::MailVerdict::Failed { error: "421 busy".into(), retry_at: at + chrono::Duration::minutes(2) };
    store.finish_mail("turn 1", at, &failed).await.unwrap();
    let again =
        store.claim_mails(at + chrono::Duration::minutes(2), lease + chrono::Duration::minutes(2), 10).await.unwrap();
    assert_eq!(again.iter().map(|c| c.attempts).collect::<Vec<_>>(), vec![2]);
    store.finish_mail("turn 1", at + chrono::Duration::minutes(2), &adjutant_store::MailVerdict::Sent).await.unwrap();
    let hour = at + chrono::Duration::hours(1);
    let due = store.claim_mails(hour, hour + chrono::Duration::minutes(5), 10).await.unwrap();
    assert_eq!(due.iter().map(|c| c.mail.key.as_str()).collect::<Vec<_>>(), vec!["reminder 1"]);
    store.finish_mail("reminder 1", hour, &adjutant_store::MailVerdict::Skipped("over".into())).await.unwrap();
    assert!(store
        .claim_mails(hour + chrono::Duration::days(1), hour + chrono::Duration::days(2), 10)
        .await
        .unwrap()
        .is_empty());
    let log = store.mails(campaign.id, 10).await.unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(
        (log[0].key.as_str(), log[0].skipped.as_deref(), log[0].sent_at),
        ("reminder 1", Some("over"), Some(hour))
    );
    assert_eq!((log[1].attempts, log[1].last_error.as_deref()), (2, None));
    assert_eq!(log[1].sent_at, Some(at + chrono::Duration::minutes(2)));
}
