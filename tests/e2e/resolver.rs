//! Resolver campaigns: every action of every ruleset through the HTTP API, with its audit
//! recomputed from the campaign id, the post's sequence number and its stamp alone.

use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{on_both_backends, seed_morning, Backend, TestApp};

on_both_backends! {
    every_action_of_every_ruleset_resolves_and_audits => every_action;
    bad_inputs_are_refused_and_store_nothing => bad_inputs;
    the_mode_follows_from_the_ruleset_or_the_scenario => mode_inferred;
    an_ops_tables_campaign_keeps_the_melee_rules_it_was_created_under => melee_by_version;
}

async fn melee_by_version(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let melee = json!({"kind": "resolve", "body": {"action": "melee", "inputs": {
        "attacker": {"men": 600, "mode": "normal"}, "defender": {"men": 400, "mode": "normal"},
        "defender_terrain": "woods", "flank": true}}});
    // A new campaign (rules version 2): Random and Density apply to melee strength.
    let new = app.campaign(&moderator, json!({"name": "New table", "ruleset": "ops-tables"})).await;
    app.clock.set(seed_morning());
    let post = app.post(&moderator, &new, melee.clone()).await;
    let data = post.ok(201)["outcomes"][0]["data"].clone();
    assert_eq!(data["dice"][0]["purpose"], "attacker's random modifier (d101: 0.49 + face/100)");
    assert!(data["result"]["random_modifier_dice"].is_object(), "{data}");
    // A campaign stored before rules versions were recorded plays melee as it was: no random
    // or density die, 600 × 1.50 = 900 v 400 × .50 = 200 — and its posts audit under that.
    let old = app.campaign(&moderator, json!({"name": "Old table", "ruleset": "ops-tables"})).await;
    app.db
        .execute_on_campaigns(&format!(
            "UPDATE campaigns SET settings = REPLACE(settings, ',\"rules_version\":3', ''), chain_genesis = 'legacy' WHERE id = '{old}';"
        ))
        .await;
    let post = app.post(&moderator, &old, melee).await;
    let post = post.ok(201);
    let data = &post["outcomes"][0]["data"];
    assert_eq!(data["dice"][0]["purpose"], "attacker's losses, random of 25 (d25)");
    assert_eq!(data["result"]["attacker_modified_strength"], json!(900.0));
    assert_eq!(data["result"]["defender_modified_strength"], json!(200.0));
    let audit = app.get(&format!("/v1/campaigns/{old}/audit")).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
    let audit = app.get(&format!("/v1/campaigns/{new}/audit")).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
}

async fn mode_inferred(backend: Backend) {
    use adjutant_e2e::reqwest::Method;
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let create = |body: Value| app.request(Method::POST, "/v1/campaigns", Some(&moderator), Some(body));

    // A ruleset alone makes a resolver campaign; a scenario, or neither, a managed one.
    let resolver = create(json!({"name": "Gettysburg table", "ruleset": "acw-25mm"})).await;
    let resolver = resolver.ok(201);
    assert_eq!((resolver["mode"].as_str(), resolver["ruleset"].as_str()), (Some("resolver"), Some("acw-25mm")));
    assert_eq!(resolver["sides"], json!(["union", "confederate"]));
    let managed = create(json!({"name": "Valley", "scenario": "short-acw"})).await;
    assert_eq!(managed.ok(201)["mode"], "managed");
    let default = create(json!({"name": "Valley again"})).await;
    assert_eq!(default.ok(201)["scenario"], "short-acw");
    let agreeing = create(json!({"name": "Said twice", "mode": "resolver", "ruleset": "schulz-acw"})).await;
    assert_eq!(agreeing.ok(201)["mode"], "resolver");

    // Only a real contradiction is refused, naming what contradicts.
    create(json!({"name": "Both", "scenario": "short-acw", "ruleset": "acw-25mm"})).await.problem(422, "body.ruleset");
    let p = create(json!({"name": "Managed?", "mode": "managed", "ruleset": "acw-25mm"})).await;
    assert!(p.problem(422, "body.mode")["detail"].as_str().unwrap().contains("managed"), "{:?}", p.body);
    create(json!({"name": "Resolver?", "mode": "resolver", "scenario": "short-acw"})).await.problem(422, "body.mode");
    create(json!({"name": "Resolver of what?", "mode": "resolver"})).await.problem(422, "body.ruleset");
    create(json!({"name": "Odd", "mode": "tabletop"})).await.problem(422, "body.mode");
    // Left out is not the same as null: the schema has no null for these, nor has the server.
    for body in [
        json!({"name": "Null", "mode": null, "ruleset": "acw-25mm"}),
        json!({"name": "Null", "scenario": null}),
        json!({"name": "Null", "ruleset": null}),
    ] {
        let refused = create(body.clone()).await;
        assert_eq!(refused.status.as_u16() / 100, 4, "{body}: null is refused: {:?}", refused.body);
    }

    // The ruleset's own words for the sides are read as the side they name.
    let players = format!("/v1/campaigns/{}/players", resolver["id"].as_str().unwrap());
    let player = |side: &str| {
        app.request(Method::POST, &players, Some(&moderator), Some(json!({"name": format!("a {side}"), "side": side})))
    };
    assert_eq!(player("federal").await.ok(201)["side"], "union");
    assert_eq!(player("rebel").await.ok(201)["side"], "confederate");
    assert_eq!(player("yankee").await.ok(201)["side"], "union");
    let refused = player("martians").await;
    let detail = refused.problem(422, "body.side")["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains("acw-25mm") && detail.contains("`union`") && detail.contains("`confederate`"), "{detail}");
    assert_eq!(app.db.count("campaigns").await, 4);
}

async fn every_action(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let rulesets = app.get("/v1/rulesets").await;
    let rulesets = rulesets.ok(200).as_array().unwrap().clone();
    let names: Vec<&str> = rulesets.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["acw-25mm", "schulz-acw", "ops-tables", "chamberlain-acw"]);

    let mut resolved = 0;
    for summary in &rulesets {
        let name = summary["name"].as_str().unwrap();
        let campaign = app.campaign(&moderator, json!({"name": name, "mode": "resolver", "ruleset": name})).await;
        let player = app.player(&moderator, &campaign, "union").await;
        let ruleset = app.get(&format!("/v1/rulesets/{name}")).await;
        let actions = ruleset.ok(200)["actions"].as_array().unwrap().clone();
        assert_eq!(actions.len(), summary["actions"].as_array().unwrap().len());
        // Every action is named in snake_case; a renamed one lists the names it still takes.
        for action in &actions {
            let action_name = action["name"].as_str().unwrap();
            assert!(action_name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{name}.{action_name}");
        }
        if name == "schulz-acw" {
            let melee = actions.iter().find(|a| a["name"] == "melee_round").expect("melee_round");
            assert_eq!(melee["also_accepted"], json!(["melee-round"]), "{melee}");
        }
        for (i, action) in actions.iter().enumerate() {
            app.clock.set(seed_morning() + chrono::Duration::milliseconds(1_017 * i as i64));
            let body = json!({"kind": "resolve", "body": {"action": action["name"], "inputs": action["example"]}});
            // Players and the referee (moderator) both roll.
            let token = if i % 2 == 0 { &player } else { &moderator };
            let answer = app.post(token, &campaign, body).await;
            let post = answer.ok(201);
            let outcome = &post["outcomes"][0];
            assert_eq!(outcome["kind"], "resolution", "{name}.{}: {post}", action["name"]);
            let data = &outcome["data"];
            assert_eq!(data["ruleset"], name);
            assert_eq!(data["action"], action["name"]);
            assert_eq!(data["stream_text"], format!("{campaign}/{}/{}", post["seq"], post["stamp"].as_str().unwrap()));
            assert!(!outcome["headline"].as_str().unwrap().is_empty());
            for (k, die) in data["dice"].as_array().unwrap().iter().enumerate() {
                assert_eq!(die["index"], k);
                let faces = die["faces"].as_u64().unwrap();
                let value = die["value"].as_u64().unwrap();
                assert!((1..=faces).contains(&value));
                assert_eq!(value, die["byte"].as_u64().unwrap() % faces + 1);
            }

            let audit = app.get(&format!("/v1/campaigns/{campaign}/posts/{}/audit", post["seq"])).await;
            let audit = audit.ok(200);
            assert_eq!(audit["ok"], true, "{name}.{}: {audit}", action["name"]);
            assert_eq!(audit["outcomes_match"], true);
            assert_eq!(audit["dice_stream"]["text"], data["stream_text"]);
            resolved += 1;
        }
    }
    assert!(resolved >= 20, "only {resolved} actions");
}

async fn bad_inputs(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let campaign =
        app.campaign(&moderator, json!({"name": "Tabletop", "mode": "resolver", "ruleset": "acw-25mm"})).await;
    let player = app.player(&moderator, &campaign, "confederate").await;

    let unknown_action =
        app.post(&player, &campaign, json!({"kind": "resolve", "body": {"action": "teleport", "inputs": {}}})).await;
    unknown_action.problem(422, "body.body.action");
    let ruleset = app.get("/v1/rulesets/acw-25mm").await;
    let fire = ruleset.ok(200)["actions"].as_array().unwrap().iter().find(|a| a["name"] == "fire").unwrap().clone();
    let mut inputs = fire["example"].clone();
    inputs.as_object_mut().unwrap().insert("bayonets".into(), Value::Bool(true));
    let extra =
        app.post(&player, &campaign, json!({"kind": "resolve", "body": {"action": "fire", "inputs": inputs}})).await;
    let p = extra.problem(422, "body.body.inputs.bayonets");
    assert!(p["detail"].as_str().unwrap().contains("bayonets"), "{p}");
    let wrong_kind = app.post(&player, &campaign, json!({"kind": "move", "body": {}})).await;
    wrong_kind.problem(422, "body.kind");
    let no_body = app.post(&player, &campaign, json!({"kind": "resolve"})).await;
    no_body.problem(422, "body.body");
    app.get("/v1/rulesets/no-such-rules").await.problem(404, "path.name");
    app.request(
        adjutant_e2e::reqwest::Method::POST,
        "/v1/campaigns",
        Some(&moderator),
        Some(json!({"name": "x", "mode": "resolver", "ruleset": "warhammer"})),
    )
    .await
    .problem(422, "body.ruleset");
    app.get(&format!("/v1/campaigns/{campaign}/state")).await.problem(404, "path.id");

    assert_eq!(app.db.count("posts").await, 0);
}
