//! The outcome feed and acknowledgements, on SQLite and on PostgreSQL.

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{on_both_backends, seed_morning, Backend, TestApp};

on_both_backends! {
    the_feed_pages_and_bots_acknowledge => feed_and_acks;
}

async fn resolve(app: &TestApp, token: &str, campaign: &str, i: i64) -> Value {
    app.clock.set(seed_morning() + chrono::Duration::milliseconds(1_001 * i));
    let action = json!({"kind": "resolve", "body": {"action": "formation_test", "inputs": {"class": "B"}}});
    app.post(token, campaign, action).await.ok(201).clone()
}

async fn feed_and_acks(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let spec = app.get("/v1/rulesets/acw-25mm").await;
    assert!(spec.ok(200)["actions"].as_array().unwrap().iter().any(|a| a["name"] == "formation_test"), "{}", spec.text);
    let campaign = app.campaign(&moderator, json!({"name": "A", "mode": "resolver", "ruleset": "acw-25mm"})).await;
    let other = app.campaign(&moderator, json!({"name": "B", "mode": "resolver", "ruleset": "acw-25mm"})).await;
    let player = app.player(&moderator, &campaign, "union").await;
    let other_player = app.player(&moderator, &other, "union").await;
    for i in 0..5 {
        resolve(&app, &player, &campaign, i).await;
    }
    resolve(&app, &other_player, &other, 9).await;

    // Paging the public feed.
    let page = app.get(&format!("/v1/campaigns/{campaign}/outcomes?limit=2")).await;
    let page = page.ok(200);
    let positions: Vec<i64> =
        page["outcomes"].as_array().unwrap().iter().map(|o| o["position"].as_i64().unwrap()).collect();
    assert_eq!(positions, [1, 2]);
    assert_eq!(page["next_after"], 2);
    let rest = app.get(&format!("/v1/campaigns/{campaign}/outcomes?after=2")).await;
    let rest = rest.ok(200);
    assert_eq!(rest["outcomes"].as_array().unwrap().len(), 3);
    assert_eq!(rest["next_after"], Value::Null);
    let first = &page["outcomes"][0];
    let id = first["id"].as_str().unwrap();
    let bbcode = first["text"]["bbcode"].as_str().unwrap();
    let markdown = first["text"]["markdown"].as_str().unwrap();
    assert!(bbcode.contains(&format!("adjutant:outcome:{id}")), "{bbcode}");
    assert!(markdown.contains(&format!("adjutant:outcome:{id}")), "{markdown}");
    assert!(bbcode.contains("[b]"), "{bbcode}");

    // A campaign bot sees its campaign's outcomes until it acknowledges them.
    let bot = app.bot(&moderator, &campaign, "bot").await;
    let feed = app.request(Method::GET, "/v1/bot/feed?limit=10", Some(&bot), None).await;
    assert_eq!(feed.ok(200)["outcomes"].as_array().unwrap().len(), 5);

    let ack_path = format!("/v1/campaigns/{campaign}/outcomes/{id}/ack");
    let ack = app.request(Method::POST, &ack_path, Some(&bot), Some(json!({"forum_post_id": "1001"}))).await;
    assert_eq!(ack.ok(200)["forum_post_id"], "1001");
    // Twice is harmless, and the first acknowledgement stands.
    let again = app.request(Method::POST, &ack_path, Some(&bot), Some(json!({"forum_post_id": "1002"}))).await;
    assert_eq!(again.ok(200)["forum_post_id"], "1001");
    let feed = app.request(Method::GET, "/v1/bot/feed", Some(&bot), None).await;
    let pending: Vec<i64> =
        feed.ok(200)["outcomes"].as_array().unwrap().iter().map(|o| o["position"].as_i64().unwrap()).collect();
    assert_eq!(pending, [2, 3, 4, 5], "unacknowledged outcomes are served again");

    // The bot of one campaign cannot acknowledge another's; players and strangers cannot at all.
    let other_outcome = app.get(&format!("/v1/campaigns/{other}/outcomes")).await;
    let other_id = other_outcome.ok(200)["outcomes"][0]["id"].as_str().unwrap().to_owned();
    app.request(
        Method::POST,
        &format!("/v1/campaigns/{other}/outcomes/{other_id}/ack"),
        Some(&bot),
        Some(json!({"forum_post_id": "1"})),
    )
    .await
    .problem(403, "Authorization");
    app.request(Method::POST, &ack_path, Some(&player), Some(json!({"forum_post_id": "1"})))
        .await
        .problem(403, "Authorization");
    app.request(Method::POST, &ack_path, None, Some(json!({"forum_post_id": "1"}))).await.problem(401, "Authorization");
    app.request(Method::GET, "/v1/bot/feed", Some(&player), None).await.problem(403, "Authorization");
    app.request(
        Method::POST,
        &format!("/v1/campaigns/{campaign}/outcomes/{other_id}/ack"),
        Some(&bot),
        Some(json!({"forum_post_id": "1"})),
    )
    .await
    .problem(404, "path.outcome_id");
    app.request(Method::POST, &ack_path, Some(&bot), Some(json!({"forum_post_id": ""})))
        .await
        .problem(422, "body.forum_post_id");

    // A moderator's bot serves all of that moderator's campaigns.
    let wide = app.request(Method::POST, "/v1/bots", Some(&moderator), Some(json!({"name": "wide"}))).await;
    let wide = wide.ok(201)["token"].as_str().unwrap().to_owned();
    let feed = app.request(Method::GET, "/v1/bot/feed", Some(&wide), None).await;
    let campaigns: Vec<String> = feed.ok(200)["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["campaign_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(campaigns.len(), 6);
    assert!(campaigns[..5].iter().all(|c| *c == campaign));
    assert_eq!(campaigns[5], other);
    app.request(
        Method::POST,
        &format!("/v1/campaigns/{other}/outcomes/{other_id}/ack"),
        Some(&wide),
        Some(json!({"forum_post_id": "77"})),
    )
    .await
    .ok(200);
    assert_eq!(app.db.count("acknowledgements").await, 2);
}
