//! Limits on callers: requests per authenticated token or per client address per minute,
//! expensive reads per minute, failed authentications per address per minute. Past a limit,
//! 429 problem+json with Retry-After. Each test below performs an attack on the limits.

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::json;
use adjutant_e2e::{Backend, Table, TestApp};

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
