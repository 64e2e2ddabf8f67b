//! A page of the log carries each post's own outcomes, read for the whole page at once.

use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{on_both_backends, seed_morning, Backend, TestApp};

on_both_backends! {
    each_listed_post_carries_its_own_outcomes => listed_posts_carry_their_outcomes;
}

async fn listed_posts_carry_their_outcomes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let campaign = app.campaign(&moderator, json!({"name": "Pages", "ruleset": "ops-tables"})).await;
    app.clock.set(seed_morning());
    let melee = json!({"kind": "resolve", "body": {"action": "melee", "inputs": {
        "attacker": {"men": 600, "mode": "normal"}, "defender": {"men": 400, "mode": "normal"},
        "defender_terrain": "woods", "flank": false}}});
    // Resolutions (an outcome each) and notes (none), so page edges fall on both kinds.
    let kinds = ["resolve", "note", "note", "resolve", "resolve", "note", "resolve"];
    for (i, kind) in kinds.iter().enumerate() {
        app.clock.advance(chrono::Duration::milliseconds(250));
        let body = match *kind {
            "resolve" => melee.clone(),
            _ => json!({"kind": "note", "body": {"text": format!("note {i}")}}),
        };
        app.post(&moderator, &campaign, body).await.ok(201);
    }

    let mut listed: Vec<Value> = Vec::new();
    let mut after = 0;
    loop {
        let page = app.get(&format!("/v1/campaigns/{campaign}/posts?after={after}&limit=2")).await;
        let page = page.ok(200).clone();
        listed.extend(page["posts"].as_array().unwrap().iter().cloned());
        match page["next_after"].as_i64() {
            Some(next) => after = next,
            None => break,
        }
    }
    assert_eq!(listed.len(), kinds.len());
    let mut positions = Vec::new();
    for (post, kind) in listed.iter().zip(kinds) {
        let seq = post["seq"].as_i64().unwrap();
        let outcomes = post["outcomes"].as_array().unwrap();
        assert_eq!(outcomes.len(), usize::from(kind == "resolve"), "post {seq}: {post}");
        for outcome in outcomes {
            assert_eq!(outcome["seq"], seq, "post {seq} lists another post's outcome: {outcome}");
            positions.push(outcome["position"].as_i64().unwrap());
        }
        // The same as the post read alone.
        let alone = app.get(&format!("/v1/campaigns/{campaign}/posts/{seq}")).await;
        assert_eq!(alone.ok(200)["outcomes"], post["outcomes"], "post {seq}");
    }
    assert_eq!(positions, [1, 2, 3, 4]);
}
