//! Limits on callers: requests per authenticated token or per client address per minute,
//! expensive reads per minute, failed authentications per address per minute. Past a limit,
//! 429 problem+json with Retry-After. Each test below performs an attack on the limits.

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::json;
use adjutant_e2e::{on_both_backends, Backend, Table, TestApp};

const CALCULATOR: &str = "/v1/tools/result-number?time=9:51:45";

fn retry_after(answer: &adjutant_e2e::Answer) -> u64 {
    answer.headers["retry-after"].to_str().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_limit_a_caller_gets_429_with_retry_after() {
    // Five a minute: one request frees up every twelve seconds.
    let app = TestApp::spawn_with(Backend::Sqlite, |config| config.rate_limit_per_minute = 5).await;
    let operator = app.admin_token.clone();
    let moderator = app.moderator().await; // one of the operator's five
    for _ in 0..5 {
        app.get(CALCULATOR).await.ok(200);
    }
    let refused = app.get(CALCULATOR).await;
    let problem = refused.problem(429, "Authorization");
    assert_eq!(problem["rule"], "rate_limit");
    assert!((1..=12).contains(&retry_after(&refused)), "Retry-After: {}", retry_after(&refused));

    // An authenticated token is counted apart from the address it comes from, and apart from
    // other tokens.
    for _ in 0..4 {
        app.request(Method::GET, CALCULATOR, Some(&operator), None).await.ok(200);
    }
    app.request(Method::GET, CALCULATOR, Some(&operator), None).await.problem(429, "Authorization");
    app.request(Method::GET, CALCULATOR, Some(&moderator), None).await.ok(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_of_zero_turns_the_limiter_off() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| config.rate_limit_per_minute = 0).await;
    for _ in 0..50 {
        app.get(CALCULATOR).await.ok(200);
    }
}

/// The attack: a fresh random bearer token on every request, hoping for a fresh bucket each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_tokens_buy_no_budget_and_spend_the_address_s() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.rate_limit_per_minute = 600;
        config.auth_failures_per_minute = 20;
    })
    .await;
    let operator = app.admin_token.clone();
    let (mut unauthorized, mut limited) = (0, 0);
    for _ in 0..700 {
        let token = format!("adj_{}", uuid::Uuid::new_v4().simple());
        let answer = app.request(Method::GET, CALCULATOR, Some(&token), None).await;
        match answer.status.as_u16() {
            401 => {
                answer.problem(401, "Authorization");
                unauthorized += 1;
            }
            429 => {
                answer.problem(429, "Authorization");
                assert!(retry_after(&answer) >= 1);
                limited += 1;
            }
            other => panic!("a random token was answered {other}: {}", answer.text),
        }
    }
    // Twenty failures are looked up; every later one is refused before any lookup.
    assert_eq!(unauthorized, 20, "401s");
    assert_eq!(limited, 680, "429s");
    // The address's own budget is spent by them: without a token it gets 429 too.
    let spent = app.get(CALCULATOR).await;
    assert_eq!(spent.problem(429, "Authorization")["rule"], "rate_limit");
    // While the address is locked out, no token it sends is looked up, a real one included:
    // the lookup is what the attack was spending.
    let locked = app.request(Method::GET, CALCULATOR, Some(&operator), None).await;
    assert_eq!(locked.problem(429, "Authorization")["rule"], "rate_limit.auth_failures");
}

/// A real token, from an address that has not failed, has its own budget beside the address's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authenticated_token_is_counted_apart_from_its_address() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| config.rate_limit_per_minute = 3).await;
    let operator = app.admin_token.clone();
    for _ in 0..3 {
        app.get(CALCULATOR).await.ok(200);
    }
    app.get(CALCULATOR).await.problem(429, "Authorization");
    app.request(Method::GET, CALCULATOR, Some(&operator), None).await.ok(200);
}

/// The attack: a new `X-Forwarded-For` on every request, hoping to be counted as someone else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_addresses_are_believed_only_from_a_trusted_proxy() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| config.rate_limit_per_minute = 5).await;
    for n in 0..5 {
        let spoofed = format!("203.0.113.{n}");
        let forwarded = format!("for={spoofed}");
        let answer = app
            .send(Method::GET, CALCULATOR, None, None, &[("X-Forwarded-For", &spoofed), ("Forwarded", &forwarded)])
            .await;
        answer.ok(200);
    }
    let answer = app.send(Method::GET, CALCULATOR, None, None, &[("X-Forwarded-For", "198.51.100.77")]).await;
    answer.problem(429, "Authorization");

    // Behind a trusted proxy (the test's loopback), each forwarded client has its own budget,
    // and the rightmost untrusted hop is the client, whatever the client claimed before it.
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.rate_limit_per_minute = 5;
        config.trusted_proxies = vec!["127.0.0.0/8".into()];
    })
    .await;
    for n in 0..5 {
        let chain = format!("10.9.9.{n}, 203.0.113.1");
        app.send(Method::GET, CALCULATOR, None, None, &[("X-Forwarded-For", &chain)]).await.ok(200);
    }
    app.send(Method::GET, CALCULATOR, None, None, &[("X-Forwarded-For", "203.0.113.1")])
        .await
        .problem(429, "Authorization");
    app.send(Method::GET, CALCULATOR, None, None, &[("X-Forwarded-For", "203.0.113.2")]).await.ok(200);
    app.send(Method::GET, CALCULATOR, None, None, &[("Forwarded", "for=\"[2001:db8::1]:4711\"")]).await.ok(200);
}

/// The attack: the same expensive read, again and again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expensive_reads_have_a_smaller_budget() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| config.expensive_reads_per_minute = 3).await;
    let moderator = app.moderator().await;
    let campaign = app.campaign(&moderator, json!({"name": "Antietam"})).await;
    app.get(&format!("/v1/campaigns/{campaign}/audit")).await.ok(200);
    app.get(&format!("/v1/campaigns/{campaign}/fairness")).await.ok(200);
    let page = app.get(&format!("/campaigns/{campaign}")).await;
    assert_eq!(page.status.as_u16(), 200, "{}", page.text);
    for expensive in ["audit", "fairness", "map.png"] {
        let refused = app.get(&format!("/v1/campaigns/{campaign}/{expensive}")).await;
        assert_eq!(refused.problem(429, "path")["rule"], "rate_limit.expensive_reads");
        assert!((1..=20).contains(&retry_after(&refused)));
    }
    let refused = app.get(&format!("/campaigns/{campaign}")).await;
    assert_eq!(refused.status.as_u16(), 429);
    // Cheap reads go on.
    app.get(&format!("/v1/campaigns/{campaign}")).await.ok(200);
    app.get(&format!("/v1/campaigns/{campaign}/posts")).await.ok(200);
    // Another caller (a token) has a budget of its own.
    app.request(Method::GET, &format!("/v1/campaigns/{campaign}/audit"), Some(&moderator), None).await.ok(200);
}

/// The attack: a player floods the log with notes and sealed choices.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notes_and_seals_per_player_per_day_are_limited() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.notes_per_player_per_day = 3;
        config.seals_per_player_per_day = 2;
    })
    .await;
    let Table { app, moderator, campaign, union, confederate: rebel } = Table::open(app, "Melee", "schulz-acw").await;
    let note = |n: u32| json!({"kind": "note", "body": {"text": format!("note {n}")}});
    for n in 0..2 {
        app.post(&union, &campaign, note(n)).await.ok(201);
    }
    let last = app.post_with_key(&union, &campaign, "third-note", note(2)).await;
    last.ok(201);
    let refused = app.post(&union, &campaign, note(3)).await;
    assert_eq!(refused.problem(429, "body.kind")["rule"], "quota.notes_per_day");
    // 9:51:45.123 UTC: the count starts again at midnight, 14 h 8 min 14 s away.
    assert_eq!(retry_after(&refused), 14 * 3600 + 8 * 60 + 14);
    // The post that spent the quota is replayed, not refused, when it is sent again.
    let replayed = app.post_with_key(&union, &campaign, "third-note", note(2)).await;
    replayed.ok(200);
    // Another player, and the moderator, have their own count (the moderator none).
    app.post(&rebel, &campaign, note(0)).await.ok(201);
    for n in 0..5 {
        app.post(&moderator, &campaign, note(n)).await.ok(201);
    }
    // Seals are counted apart from notes.
    let seal = |topic: &str| json!({"kind": "seal", "body": {"topic": topic, "role": "attacker", "choice": "stay"}});
    app.post(&union, &campaign, seal("melee-1")).await.ok(201);
    app.post(&union, &campaign, seal("melee-2")).await.ok(201);
    let refused = app.post(&union, &campaign, seal("melee-3")).await;
    assert_eq!(refused.problem(429, "body.kind")["rule"], "quota.seals_per_day");
    // The next day (UTC), the player may post again.
    app.clock.advance(chrono::TimeDelta::hours(15));
    app.post(&union, &campaign, note(4)).await.ok(201);
    app.post(&union, &campaign, seal("melee-3")).await.ok(201);
}

/// The attack: a player fills the disk with posts of a kind no per-kind quota covers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_post_counts_against_a_players_day() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| {
        config.notes_per_player_per_day = 0;
        config.posts_per_player_per_day = 4;
    })
    .await;
    let Table { app, moderator, campaign, union, confederate: rebel } = Table::open(app, "Melee", "schulz-acw").await;
    let note = |n: u32| json!({"kind": "note", "body": {"text": format!("note {n}")}});
    let seal = |topic: &str| json!({"kind": "seal", "body": {"topic": topic, "role": "attacker", "choice": "stay"}});
    for n in 0..3 {
        app.post(&union, &campaign, note(n)).await.ok(201);
    }
    app.post(&union, &campaign, seal("melee-1")).await.ok(201);
    for refused in [seal("melee-2"), note(4)] {
        let refused = app.post(&union, &campaign, refused).await;
        let problem = refused.problem(429, "body.kind");
        assert_eq!(problem["rule"], "quota.posts_per_day");
        assert!(problem["detail"].as_str().unwrap().contains("at most 4 posts per campaign per day"), "{problem}");
    }
    app.post(&rebel, &campaign, note(0)).await.ok(201);
    app.post(&moderator, &campaign, note(0)).await.ok(201);
    let t = Table { app, moderator, campaign, union, confederate: rebel };
    crate::fair_shares::second_client_from(OTHER, &t, "a player's day of posts spent").await;
    let Table { app, campaign, union, .. } = t;
    app.clock.advance(chrono::TimeDelta::hours(15));
    app.post(&union, &campaign, note(5)).await.ok(201);
}

/// Where a second client comes from while the attack comes from the tests' own 127.0.0.1.
const OTHER: [u8; 4] = [127, 0, 0, 9];

/// The attack: a campaign's log grown without end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_campaign_refuses_every_post_clearly() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| config.max_posts_per_campaign = 3).await;
    let Table { app, moderator, campaign, union, .. } = Table::open(app, "Melee", "schulz-acw").await;
    let note = |n: u32| json!({"kind": "note", "body": {"text": format!("note {n}")}});
    app.post_with_key(&union, &campaign, "first", note(0)).await.ok(201);
    app.post(&union, &campaign, note(1)).await.ok(201);
    app.post(&moderator, &campaign, note(2)).await.ok(201);
    for token in [&union, &moderator] {
        let refused = app.post(token, &campaign, note(3)).await;
        let problem = refused.problem(409, "body.kind");
        assert_eq!(problem["rule"], "campaign.max_posts");
        assert!(problem["detail"].as_str().unwrap().contains("holds 3 posts"), "{problem}");
    }
    // A post stored before is still answered as it was.
    app.post_with_key(&union, &campaign, "first", note(0)).await.ok(200);
    assert_eq!(app.get(&format!("/v1/campaigns/{campaign}/posts")).await.ok(200)["posts"].as_array().unwrap().len(), 3);
}

on_both_backends! {
    notes_sent_at_once_never_go_past_the_quota => quota_race;
}

/// The attack: many notes at once, each checked against the count before the others were in.
async fn quota_race(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| config.notes_per_player_per_day = 20).await;
    let Table { app, moderator, campaign, union, confederate } = Table::open(app, "Melee", "schulz-acw").await;
    let app = std::sync::Arc::new(app);
    let mut sent = Vec::new();
    for n in 0..64 {
        let (app, campaign, union) = (app.clone(), campaign.clone(), union.clone());
        sent.push(tokio::spawn(async move {
            app.post(&union, &campaign, json!({"kind": "note", "body": {"text": format!("note {n}")}}))
                .await
                .status
                .as_u16()
        }));
    }
    let mut answers = std::collections::BTreeMap::new();
    for answer in sent {
        *answers.entry(answer.await.unwrap()).or_insert(0) += 1;
    }
    assert_eq!(answers, [(201, 20), (429, 44)].into_iter().collect(), "64 notes sent at once against a quota of 20");
    let posts = app.get(&format!("/v1/campaigns/{campaign}/posts?limit=100")).await;
    assert_eq!(posts.ok(200)["posts"].as_array().unwrap().len(), 20);
    let app = std::sync::Arc::into_inner(app).expect("every post answered");
    let t = Table { app, moderator, campaign, union, confederate };
    crate::fair_shares::second_client_from(OTHER, &t, "64 notes at once against a quota of 20").await;
}

/// The attack: replays from post 1 and whole-log reads asked of the cheap routes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_log_walks_are_expensive_reads_wherever_they_are_asked() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| config.expensive_reads_per_minute = 2).await;
    let Table { app, moderator, campaign, union, confederate } = Table::open(app, "Melee", "schulz-acw").await;
    for n in 0..60 {
        app.post(&union, &campaign, json!({"kind": "note", "body": {"text": format!("note {n}")}})).await.ok(201);
    }
    let stream = |last_event_id: Option<&'static str>, query: &'static str| {
        let mut request = app.client.get(format!("{}/v1/campaigns/{campaign}/events{query}", app.base));
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id);
        }
        request.send()
    };
    // The per-post audit going on from what was verified is cheap, as often as asked.
    for _ in 0..5 {
        app.get(&format!("/v1/campaigns/{campaign}/posts/60/audit")).await.ok(200);
    }
    app.get(&format!("/v1/campaigns/{campaign}/posts/60/audit?fresh=true")).await.ok(200);
    let events = app.get(&format!("/v1/campaigns/{campaign}/events?follow=false")).await;
    assert_eq!(events.status.as_u16(), 200);
    assert_eq!(events.text.matches("event: post").count(), 60, "{}", events.text);
    // The budget of two is spent: every other walk from far back is refused, however asked.
    for walk in ["posts/60/audit?fresh=true", "events?follow=false", "events?after=58&follow=false", "events"] {
        let refused = app.get(&format!("/v1/campaigns/{campaign}/{walk}")).await;
        assert_eq!(refused.problem(429, "path")["rule"], "rate_limit.expensive_reads", "{walk}");
    }
    let from_the_start = adjutant_e2e::read(stream(Some("0"), "").await.unwrap()).await;
    assert_eq!(from_the_start.problem(429, "path")["rule"], "rate_limit.expensive_reads");
    // A stream that goes on from near the log's end is not a walk.
    assert_eq!(stream(Some("55"), "").await.unwrap().status(), 200);
    assert_eq!(stream(None, "?after=20").await.unwrap().status(), 200);
    app.get(&format!("/v1/campaigns/{campaign}/posts/60/audit")).await.ok(200);
    let t = Table { app, moderator, campaign, union, confederate };
    crate::fair_shares::second_client_from(OTHER, &t, "whole-log walks from one address").await;
}

/// The attacks: the whole log of a long campaign read as one answer, again and again; fresh audits
/// in a loop, each throwing away what the server had verified, so that everyone else's audit waits
/// for a replay from post 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_log_reads_are_paged_and_a_fresh_audit_leaves_the_verified_prefix_to_everyone_else() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| config.notes_per_player_per_day = 0).await;
    let Table { app, campaign, union, .. } = Table::open(app, "Melee", "schulz-acw").await;
    let app = std::sync::Arc::new(app);
    let mut writers = Vec::new();
    for w in 0..16 {
        let (app, campaign, union) = (app.clone(), campaign.clone(), union.clone());
        writers.push(tokio::spawn(async move {
            for n in 0..125 {
                let note = json!({"kind": "note", "body": {"text": format!("note {w}.{n}")}});
                app.post(&union, &campaign, note).await.ok(201);
            }
        }));
    }
    for writer in writers {
        writer.await.unwrap();
    }
    // The whole log is read a page at a time, each page saying where the next begins.
    let ids = |text: &str| text.lines().filter_map(|l| l.strip_prefix("id: ")).map(str::to_owned).collect::<Vec<_>>();
    let first = app.get(&format!("/v1/campaigns/{campaign}/events?follow=false")).await;
    assert_eq!(first.text.matches("event: post").count(), 1000);
    assert!(
        first.text.contains("event: page\nid: 1000\nretry: 100\ndata: {\"next_after\":1000}"),
        "{}",
        &first.text[first.text.len() - 300..]
    );
    let second = app.get(&format!("/v1/campaigns/{campaign}/events?after=1000&follow=false")).await;
    assert_eq!(second.text.matches("event: post").count(), 1000);
    assert!(!second.text.contains("event: page"), "the last page says nothing more waits");
    // Every post once, in order (the page's id repeats the last post's).
    let mut seen: Vec<String> = ids(&first.text).into_iter().chain(ids(&second.text)).collect();
    seen.dedup();
    assert_eq!(seen, (1..=2000).map(|seq| seq.to_string()).collect::<Vec<_>>());
    // A stream that follows ends its first page the same way, for its EventSource to go on.
    let following =
        app.client.get(format!("{}/v1/campaigns/{campaign}/events?after=500", app.base)).send().await.unwrap();
    let page = tokio::time::timeout(std::time::Duration::from_secs(20), following.text())
        .await
        .expect("the page ends")
        .unwrap();
    assert_eq!(page.matches("event: post").count(), 1000);
    assert!(page.contains("data: {\"next_after\":1500}"), "{}", &page[page.len() - 300..]);

    let audit = app.get(&format!("/v1/campaigns/{campaign}/audit")).await;
    assert_eq!(audit.ok(200)["replayed_now"], 2000);
    // A fresh audit replays all 2,000 posts; an audit asked meanwhile goes on from the prefix
    // verified before and is answered first, without waiting for the fresh one's replay.
    let fresh = {
        let (app, campaign) = (app.clone(), campaign.clone());
        tokio::spawn(async move {
            let audit = app.get(&format!("/v1/campaigns/{campaign}/audit?fresh=true")).await;
            (std::time::Instant::now(), audit.ok(200)["replayed_now"].clone())
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let meanwhile = app.get(&format!("/v1/campaigns/{campaign}/audit")).await;
    let answered = std::time::Instant::now();
    assert_eq!(meanwhile.ok(200)["replayed_now"], 0);
    let (fresh_answered, replayed) = fresh.await.unwrap();
    assert_eq!(replayed, 2000);
    assert!(answered < fresh_answered, "the audit asked meanwhile waited for the fresh one");
}
