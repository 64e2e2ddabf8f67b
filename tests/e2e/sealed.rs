//! Sealed choices (the stay-or-retreat choice of Schulz's melee): neither side can read the
//! other's choice before both are in — not in the log, not in the feed, not from the hash.

use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{on_both_backends, seed_morning, Backend, Table, TestApp};
use adjutant_rules::chain::Link;

on_both_backends! {
    neither_side_reads_the_other_choice_before_both_are_in => sealed_choices;
    two_sides_sealing_one_role_at_once_store_one => concurrent_seals;
}

async fn concurrent_seals(backend: Backend) {
    let Table { app, campaign, union, confederate: rebel, .. } =
        Table::open(TestApp::spawn(backend).await, "Race", "schulz-acw").await;
    for round in 0..5 {
        let topic = format!("melee-{round}");
        let seal = |token: String| {
            let body = json!({"kind": "seal", "body": {"topic": topic, "role": "attacker", "choice": "stay"}});
            let app = &app;
            let campaign = campaign.clone();
            async move { app.post(&token, &campaign, body).await }
        };
        let (a, b) = tokio::join!(seal(union.clone()), seal(rebel.clone()));
        let statuses = [a.status.as_u16(), b.status.as_u16()];
        assert!(statuses.contains(&201) && statuses.contains(&409), "{statuses:?}: {} / {}", a.text, b.text);
    }
    let whole = app.get(&format!("/v1/campaigns/{campaign}/audit")).await;
    assert_eq!(whole.ok(200)["ok"], true, "{}", whole.text);
}

async fn sealed_choices(backend: Backend) {
    let Table { app, moderator, campaign, union, confederate: rebel } =
        Table::open(TestApp::spawn(backend).await, "Melee", "schulz-acw").await;
    let topic = "melee-1-round-2";

    // Resolving with the sealed choices before they are in is refused.
    let inputs =
        json!({"round": 2, "attacker": {"troops": "infantry", "men": 4}, "defender": {"troops": "infantry", "men": 3}});
    let early = app
        .post(
            &moderator,
            &campaign,
            json!({"kind": "resolve", "body": {"action": "melee-round", "inputs": inputs, "sealed": topic}}),
        )
        .await;
    early.problem(422, "body.body.sealed");

    let sealed = app
        .post(
            &union,
            &campaign,
            json!({"kind": "seal", "body": {"topic": topic, "role": "attacker", "choice": "stay"}}),
        )
        .await;
    let sealed = sealed.ok(201).clone();
    assert_eq!(sealed["body"]["choice"], "stay", "the poster sees their own choice");
    assert_eq!(sealed["outcomes"][0]["kind"], "sealed");
    assert!(!sealed["outcomes"][0].to_string().contains("stay"), "the outcome must not tell");

    // The other side sees that a choice is sealed, not what it is.
    let log = app.get(&format!("/v1/campaigns/{campaign}/posts")).await;
    let shown = &log.ok(200)["posts"][0];
    assert_eq!(shown["body"]["choice"], "sealed");
    assert_eq!(shown["body"]["salt"], "sealed");
    let one = app.get(&format!("/v1/campaigns/{campaign}/posts/1")).await;
    assert_eq!(one.ok(200)["body"]["choice"], "sealed");
    let feed = app.get(&format!("/v1/campaigns/{campaign}/outcomes")).await;
    assert!(!feed.text.contains("\"stay\""), "{}", feed.text);
    // Nor can it guess the choice from the post's public hash: the server salted it.
    for guess in ["stay", "retreat"] {
        let body = json!({"choice": guess, "role": "attacker", "topic": topic}).to_string();
        let campaign_id = campaign.clone();
        let author = shown["author_id"].as_str().unwrap().to_owned();
        let link = Link {
            prev_hash: shown["prev_hash"].as_str().unwrap(),
            campaign_id: &campaign_id,
            seq: 1,
            stamp: shown["stamp"].as_str().unwrap().parse().unwrap(),
            author_id: &author,
            side: Some("union"),
            kind: "seal",
            body: &body,
        };
        assert_ne!(link.hash(), shown["hash"].as_str().unwrap(), "the hash gives the choice away");
    }

    // The rules of sealing.
    let salted = app
        .post(
            &rebel,
            &campaign,
            json!({"kind": "seal", "body": {"topic": topic, "role": "defender", "choice": "stay", "salt": "00"}}),
        )
        .await;
    salted.problem(422, "body.body.salt");
    let twice = app
        .post(
            &union,
            &campaign,
            json!({"kind": "seal", "body": {"topic": topic, "role": "attacker", "choice": "retreat"}}),
        )
        .await;
    twice.problem(409, "body.body.role");
    // One side cannot seal the other side's choice too.
    let both_roles = app
        .post(
            &union,
            &campaign,
            json!({"kind": "seal", "body": {"topic": topic, "role": "defender", "choice": "retreat"}}),
        )
        .await;
    both_roles.problem(403, "Authorization");
    let spaced = app
        .post(
            &rebel,
            &campaign,
            json!({"kind": "seal", "body": {"topic": format!("{topic} "), "role": "defender", "choice": "stay"}}),
        )
        .await;
    spaced.problem(422, "body.body.topic");
    let by_moderator = app
        .post(
            &moderator,
            &campaign,
            json!({"kind": "seal", "body": {"topic": topic, "role": "defender", "choice": "stay"}}),
        )
        .await;
    by_moderator.problem(403, "Authorization");

    // The second choice reveals both.
    app.clock.set(seed_morning() + chrono::Duration::seconds(30));
    let second = app
        .post(
            &rebel,
            &campaign,
            json!({"kind": "seal", "body": {"topic": topic, "role": "defender", "choice": "retreat"}}),
        )
        .await;
    let second = second.ok(201);
    let revealed = second["outcomes"].as_array().unwrap().iter().find(|o| o["kind"] == "revealed").unwrap();
    assert_eq!(revealed["data"]["attacker_choice"], "stay");
    assert_eq!(revealed["data"]["defender_choice"], "retreat");
    let log = app.get(&format!("/v1/campaigns/{campaign}/posts")).await;
    let posts: Vec<Value> = log.ok(200)["posts"].as_array().unwrap().clone();
    assert_eq!(posts[0]["body"]["choice"], "stay");
    assert_eq!(posts[1]["body"]["choice"], "retreat");

    // The referee resolves the round with the sealed choices; the defender's retreat ends it.
    app.clock.set(seed_morning() + chrono::Duration::seconds(60));
    let round = app
        .post(
            &moderator,
            &campaign,
            json!({"kind": "resolve", "body": {"action": "melee-round", "inputs": inputs, "sealed": topic}}),
        )
        .await;
    let round = round.ok(201);
    let resolution = &round["outcomes"][0]["data"];
    assert_eq!(resolution["action"], "melee-round");
    assert!(round["outcomes"][0]["headline"].as_str().unwrap().contains("retreat"), "{round}");
    let mixed = json!({"round": 2, "attacker": {"troops": "infantry", "men": 4}, "defender": {"troops": "infantry", "men": 3}, "attacker_choice": "retreat"});
    let both = app
        .post(
            &moderator,
            &campaign,
            json!({"kind": "resolve", "body": {"action": "melee-round", "inputs": mixed, "sealed": topic}}),
        )
        .await;
    both.problem(422, "body.body.inputs.attacker_choice");

    for seq in 1..=3 {
        let audit = app.get(&format!("/v1/campaigns/{campaign}/posts/{seq}/audit")).await;
        assert_eq!(audit.ok(200)["ok"], true, "post {seq}: {}", audit.text);
    }
    let whole = app.get(&format!("/v1/campaigns/{campaign}/audit")).await;
    assert_eq!(whole.ok(200)["ok"], true, "{}", whole.text);
}
