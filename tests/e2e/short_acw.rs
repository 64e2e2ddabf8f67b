//! The Short ACW Campaign played through the HTTP API, on SQLite and on PostgreSQL: the seed's
//! worked example, and a scripted campaign from deployment to a victory condition.

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{on_both_backends, Backend, Game, TestApp};

on_both_backends! {
    the_seeds_worked_example_over_http => worked_example;
    a_scripted_campaign_plays_to_a_major_union_victory => scripted_campaign;
    refusals_name_the_rule_and_change_nothing => refusals_change_nothing;
    a_rollback_voids_later_posts_and_recomputes_the_state => rollback;
    the_campaign_audit_catches_a_tampered_outcome_and_a_tampered_post => campaign_audit_catches_tampering;
    the_moderator_answers_for_a_side_that_does_not => umpire;
    a_campaign_recorded_before_rules_versions_plays_and_audits_under_version_1 => rules_version_1;
    a_deployment_is_sealed_from_every_reader_until_both_sides_have_deployed => sealed_deployment;
    the_map_at_the_end_draws_the_last_turn_and_marks_void_outcomes => map_at_the_end;
    the_map_and_state_after_any_post_are_as_they_were_then_and_cached_for_good => the_past;
    a_broken_scenario_file_does_not_stop_the_server_and_the_shipped_scenario_is_offered => broken_scenario_file;
}

/// The move arrows of a map: the paths of its `moves` group.
fn arrows(svg: &str) -> usize {
    let moves = svg.split("<g id=\"moves\">").nth(1).and_then(|rest| rest.split("</g>").next()).unwrap_or_default();
    moves.matches("marker-end").count()
}

async fn map_at_the_end(backend: Backend) {
    let g = game(backend).await;
    for i in 0..g.script.len() {
        g.step(i).await;
    }
    let mut outcomes: Vec<Value> = vec![];
    let mut after = 0;
    loop {
        let page = g.app.get(&format!("/v1/campaigns/{}/outcomes?after={after}&limit=100", g.campaign)).await;
        let page = page.ok(200).clone();
        outcomes.extend(page["outcomes"].as_array().unwrap().iter().cloned());
        match page["next_after"].as_i64() {
            Some(next) => after = next,
            None => break,
        }
    }
    // What the last two player turns moved: the arrows of the last turn, not the game's.
    let starts: Vec<usize> =
        outcomes.iter().enumerate().filter(|(_, o)| o["kind"] == "turn_begins").map(|(i, _)| i).collect();
    let tracks = |slice: &[Value]| -> usize {
        slice
            .iter()
            .map(|o| match o["kind"].as_str().unwrap() {
                "moved" => 1,
                "retreat" => o["data"]["moves"].as_array().map_or(0, Vec::len),
                _ => 0,
            })
            .sum()
    };
    let last = tracks(&outcomes[starts[starts.len() - 2]..]);
    assert!(last < tracks(&outcomes), "the script's last turn moves less than the game: the test would prove nothing");
    let svg = g.app.get(&format!("/v1/campaigns/{}/map.svg", g.campaign)).await.text;
    assert_eq!(arrows(&svg), last, "the map draws {} arrows; the last turn moved {last} times", arrows(&svg));
    assert!(!svg.contains("Void: "));

    // A rollback voids the last post: its outcomes are listed as void and drawn as nothing.
    let to = g.script.len() - 1;
    let rollback = json!({"kind": "rollback", "body": {"to_seq": to, "reason": "posted in the wrong thread"}});
    g.app.post(&g.moderator, &g.campaign, rollback).await.ok(201);
    let svg = g.app.get(&format!("/v1/campaigns/{}/map.svg", g.campaign)).await.text;
    let voided = outcomes.iter().filter(|o| o["seq"] == g.script.len()).count();
    assert!(voided > 0);
    assert_eq!(svg.matches("Void: ").count(), voided, "{svg}");
}

async fn the_past(backend: Backend) {
    let g = game(backend).await;
    let id = g.campaign.clone();
    // What the map and the state said after each post, at the time.
    let mut then = vec![(g.app.get(&format!("/v1/campaigns/{id}/map.svg")).await.text, g.state().await)];
    for i in 0..g.script.len() {
        g.step(i).await;
        then.push((g.app.get(&format!("/v1/campaigns/{id}/map.svg")).await.text, g.state().await));
    }
    for (seq, (svg, state)) in then.iter().enumerate() {
        let past = g.app.get(&format!("/v1/campaigns/{id}/map.svg?at={seq}")).await;
        assert_eq!(past.status.as_u16(), 200);
        assert!(&past.text == svg, "the map after post {seq} is not the map shown then");
        assert_eq!(past.headers["cache-control"], "public, max-age=31536000, immutable");
        let answer = g.app.get(&format!("/v1/campaigns/{id}/state?at={seq}")).await;
        assert_eq!(&answer.ok(200)["state"], state, "the state after post {seq}");
        assert_eq!(answer.body["after_seq"], seq);
        let etag = answer.headers["etag"].to_str().unwrap().to_owned();
        let hash = match seq {
            0 => g.app.get(&format!("/v1/campaigns/{id}")).await.ok(200)["genesis_hash"].as_str().unwrap().to_owned(),
            _ => {
                g.app.get(&format!("/v1/campaigns/{id}/posts/{seq}")).await.ok(200)["hash"].as_str().unwrap().to_owned()
            }
        };
        assert_eq!(etag, format!("\"{hash}\""));
    }
    // At the start of a player turn: after the post that began it (the Rebel's end of turn 1,
    // post 8, began the Union's turn 2; the Rebel's deployment, post 2, the Union's turn 1;
    // the Union's end of turn 1, post 4, the Rebel's). A turn alone is its first player turn, a
    // side alone its latest, and `at` reads the log as it stood after that post.
    let cases = [
        ("turn=2&side=union", 8),
        ("turn=1&side=union", 2),
        ("turn=1&side=confederate", 4),
        ("turn=2", 8),
        ("turn=1", 2),
        ("side=confederate&at=8", 4),
        ("side=union&at=7", 2),
        ("turn=1&side=union&at=2", 2),
    ];
    for (query, seq) in cases {
        let past = g.app.get(&format!("/v1/campaigns/{id}/map.svg?{query}")).await;
        assert!(past.status.as_u16() == 200 && past.text == then[seq].0, "{query}: not the map after post {seq}");
        // A turn read from the log as it stands now may yet move (a rollback, a side's next
        // turn): cached for good only where `at` fixes the log it is read from.
        if query.contains("at=") {
            assert_eq!(past.headers["etag"].to_str().unwrap(), then_hash(&g, seq).await, "{query}");
            assert_eq!(past.headers["cache-control"], "public, max-age=31536000, immutable", "{query}");
        } else {
            assert_eq!(past.headers["cache-control"], "no-cache", "{query}");
        }
        let state = g.app.get(&format!("/v1/campaigns/{id}/state?{query}")).await;
        assert_eq!(state.ok(200)["after_seq"], seq, "{query}");
        assert_eq!(&state.body["state"], &then[seq].1, "{query}");
    }
    // The latest player turn of a side is the last to begin in the whole log.
    let (mut latest_union, mut after) = (0, 0);
    loop {
        let page = g.app.get(&format!("/v1/campaigns/{id}/outcomes?limit=100&after={after}")).await;
        let page = page.ok(200);
        for o in page["outcomes"].as_array().unwrap() {
            if o["kind"] == "turn_begins" && o["data"]["side"] == "union" {
                latest_union = latest_union.max(o["seq"].as_u64().unwrap());
            }
        }
        match page["next_after"].as_i64() {
            Some(next) => after = next,
            None => break,
        }
    }
    assert!(latest_union > 8, "the script plays more than two turns");
    let state = g.app.get(&format!("/v1/campaigns/{id}/state?side=union")).await;
    assert_eq!(state.ok(200)["after_seq"], latest_union);
    // The player turns so far, each with the posts that began and ended it.
    let turns = g.app.get(&format!("/v1/campaigns/{id}/turns")).await;
    let turns = turns.ok(200)["turns"].as_array().unwrap().clone();
    assert_eq!(
        turns[..2],
        [
            json!({"turn": 1, "side": "union", "began_after": 2, "ended_at": 4}),
            json!({"turn": 1, "side": "confederate", "began_after": 4, "ended_at": 8}),
        ]
    );
    for pair in turns.windows(2) {
        assert_eq!(pair[0]["ended_at"], pair[1]["began_after"]);
    }
    let last = turns.last().unwrap();
    assert!(last.get("ended_at").is_none() && last["began_after"] == latest_union, "{last}");
    // A player turn that had not begun, then or now, is not there.
    g.app.get(&format!("/v1/campaigns/{id}/map.svg?turn=9&side=union")).await.problem(404, "query.turn");
    g.app.get(&format!("/v1/campaigns/{id}/state?turn=2&side=union&at=7")).await.problem(404, "query.turn");
    g.app.get(&format!("/v1/campaigns/{id}/map.png?turn=2&at=7")).await.problem(404, "query.turn");
    // The sealed first deployment stays sealed in the past too.
    let sealed = g.app.get(&format!("/v1/campaigns/{id}/state?at=1")).await;
    let units = sealed.ok(200)["state"]["units"].as_array().unwrap().clone();
    assert!(units.iter().filter(|u| u["side"] == "union").all(|u| u["hex"].is_null()), "{}", sealed.text);
    assert!(sealed.body["state"].get("sealed_deployment").is_none());
    // The present is asked again each time; a point not yet reached is not there.
    let now = g.app.get(&format!("/v1/campaigns/{id}/map.svg")).await;
    assert_eq!(now.headers["cache-control"], "no-cache");
    let beyond = then.len();
    g.app.get(&format!("/v1/campaigns/{id}/map.svg?at={beyond}")).await.problem(404, "query.at");
    g.app.get(&format!("/v1/campaigns/{id}/state?at=-1")).await.problem(400, "query.at");
    let png = g.app.get(&format!("/v1/campaigns/{id}/map.png?at=3")).await;
    assert_eq!(png.status.as_u16(), 200);
    assert_eq!(png.headers["etag"].to_str().unwrap(), then_hash(&g, 3).await);
}

async fn broken_scenario_file(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("valley.toml"), "name = \"valley\"\n[map]\ncolumns = 0").unwrap();
    let folder = dir.path().to_owned();
    let app = TestApp::spawn_with(backend, move |c| c.scenarios_dir = folder).await;
    let spec = app.get("/v1/openapi.json").await;
    let offered =
        &spec.ok(200)["components"]["schemas"]["NewCampaign"]["oneOf"][0]["properties"]["scenario"]["anyOf"][0]["enum"];
    assert_eq!(offered, &json!(["short-acw"]), "{offered}");
    let moderator = app.moderator().await;
    app.campaign(&moderator, json!({"name": "Still here", "mode": "managed", "scenario": "short-acw"})).await;
    let refused = app
        .request(
            Method::POST,
            "/v1/campaigns",
            Some(&moderator),
            Some(json!({"name": "V", "mode": "managed", "scenario": "valley"})),
        )
        .await;
    refused.problem(422, "body.scenario");
}

async fn then_hash(g: &Game, seq: usize) -> String {
    let post = g.app.get(&format!("/v1/campaigns/{}/posts/{seq}", g.campaign)).await;
    format!("\"{}\"", post.ok(200)["hash"].as_str().unwrap())
}

/// The lines of an export that speak of posts, outcomes and states (the campaign line carries
/// the scenario, which names every unit).
fn log_lines(export: &str) -> Vec<&str> {
    export.lines().filter(|l| !l.starts_with("{\"type\":\"campaign\"")).collect()
}

async fn sealed_deployment(backend: Backend) {
    let g = game(backend).await;
    let id = &g.campaign;
    let placements = g.script[0]["body"]["placements"].as_array().unwrap().clone();
    let first = placements[0]["unit"].as_str().unwrap().to_owned();
    assert!(first.starts_with("us-"));
    let answer = g.step(0).await;
    assert_eq!(answer["outcomes"][0]["kind"], "deployment_sealed");

    // Nobody but the server sees where the Union stands: not the state, the map, the posts,
    // the stream, the feed or the export.
    let state = g.app.get(&format!("/v1/campaigns/{id}/state")).await;
    let state = state.ok(200)["state"].clone();
    assert!(state.get("sealed_deployment").is_none(), "{state}");
    assert!(state["units"].as_array().unwrap().iter().filter(|u| u["side"] == "union").all(|u| u["hex"].is_null()));
    assert_eq!(state["deployed"], json!(["union"]));
    for path in [format!("/v1/campaigns/{id}/posts"), format!("/v1/campaigns/{id}/posts/1")] {
        let text = g.app.get(&path).await.text;
        assert!(text.contains(r#""body":{"placements":"sealed"}"#), "{path}: {text}");
        assert!(!text.contains(&first), "{path} gives the Union away: {text}");
    }
    for path in [format!("/v1/campaigns/{id}/outcomes"), format!("/v1/campaigns/{id}/events?follow=false")] {
        let text = g.app.get(&path).await.text;
        assert!(text.contains("deployment_sealed") && !text.contains(&first), "{path}: {text}");
    }
    let map = g.app.get(&format!("/v1/campaigns/{id}/map.svg")).await.text;
    let dir = tempfile::tempdir().unwrap();
    let key = g.app.get("/v1/keys").await.ok(200)["keys"][0]["public_key"].as_str().unwrap().to_owned();
    let verified = |file: std::path::PathBuf| {
        adjutant_server::verify::verify(&adjutant_server::verify::Options {
            file,
            keys: vec![key.clone()],
            forum_texts: None,
        })
        .unwrap()
    };
    let export = g.app.get(&format!("/v1/campaigns/{id}/export")).await.text;
    assert!(log_lines(&export).iter().all(|l| !l.contains(&first)), "{export}");
    assert!(!export.contains("{\"type\":\"snapshot\""), "a state holding the seal is exported: {export}");
    std::fs::write(dir.path().join("sealed.jsonl"), &export).unwrap();
    let report = verified(dir.path().join("sealed.jsonl"));
    assert!(report.ok(), "{}", report.text());
    assert!(report.text().contains("sealed until the other side has deployed"), "{}", report.text());
    // The server's own audit reads everything, and it all checks out.
    let audit = g.app.get(&format!("/v1/campaigns/{id}/audit?fresh=true")).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);

    // The Rebels deploy: both deployments are revealed together.
    let answer = g.step(1).await;
    let kinds: Vec<&str> = answer["outcomes"].as_array().unwrap().iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(&kinds[..2], ["deployed", "deployed"], "{answer}");
    assert_eq!(answer["outcomes"][0]["data"]["placements"], json!(placements));
    let post = g.app.get(&format!("/v1/campaigns/{id}/posts/1")).await;
    assert_eq!(post.ok(200)["body"]["placements"], json!(placements));
    let state = g.app.get(&format!("/v1/campaigns/{id}/state")).await;
    let units = state.ok(200)["state"]["units"].as_array().unwrap().clone();
    for p in &placements {
        let unit = units.iter().find(|u| u["id"] == p["unit"]).unwrap();
        assert_eq!(unit["hex"], p["hex"]);
    }
    let revealed_map = g.app.get(&format!("/v1/campaigns/{id}/map.svg")).await.text;
    let name = units.iter().find(|u| u["id"] == first.as_str()).unwrap()["name"].as_str().unwrap().to_owned();
    assert!(revealed_map.contains(&name) && !map.contains(&name), "the map showed {name} before the reveal");
    let export = g.app.get(&format!("/v1/campaigns/{id}/export")).await.text;
    assert!(export.contains(&first) && export.contains("{\"type\":\"snapshot\""));
    std::fs::write(dir.path().join("revealed.jsonl"), &export).unwrap();
    let report = verified(dir.path().join("revealed.jsonl"));
    assert!(report.ok() && report.snapshots == 2 && !report.text().contains("sealed until"), "{}", report.text());
}

/// The worked example's Rebel retreat with an empty path for the 52nd, which could retreat.
fn empty_retreat() -> Value {
    json!({"kind": "retreat", "body": {"paths": [{"unit": "cs-51st-inf", "path": ["0704", "0804"]},
                                                {"unit": "cs-52nd-inf", "path": []}]}})
}

async fn rules_version_1(backend: Backend) {
    // A new campaign records version 3 and refuses an empty path where a retreat exists.
    let new = game(backend).await;
    let view = new.app.get(&format!("/v1/campaigns/{}", new.campaign)).await;
    assert_eq!(view.ok(200)["settings"]["rules_version"], 3);
    // The seed publishes no map: the state, the page and the first forum text say so.
    let stand_in = "Stand-in map: the seed publishes no map";
    let state = new.app.get(&format!("/v1/campaigns/{}/state", new.campaign)).await;
    assert_eq!(state.ok(200)["stand_in_map"], stand_in);
    let page = new.app.get(&format!("/campaigns/{}", new.campaign)).await;
    assert!(page.text.contains(&format!("<p class=\"stand-in\" id=\"stand-in-map\">{stand_in}</p>")), "{}", page.text);
    let first = new.step(0).await;
    assert!(first["outcomes"][0]["text"]["markdown"].as_str().unwrap().contains(stand_in), "{first}");
    for i in 1..16 {
        new.step(i).await;
    }
    let refused = new.app.post(&new.confederate, &new.campaign, empty_retreat()).await;
    // The unit could retreat from where the units stand now: the game's state refuses it (409).
    refused.problem(409, "body.body.paths[1].path");

    // A campaign stored before versions were recorded (its settings have no rules_version) …
    let old = game(backend).await;
    old.app
        .db
        .execute_on_campaigns(&format!(
            "UPDATE campaigns SET settings = REPLACE(settings, ',\"rules_version\":3', ''), chain_genesis = 'legacy' WHERE id = '{}';",
            old.campaign
        ))
        .await;
    let view = old.app.get(&format!("/v1/campaigns/{}", old.campaign)).await;
    assert!(view.ok(200)["settings"].get("rules_version").is_none(), "{}", view.text);
    // … is decided under version 1: the empty path gives the 52nd up, as it did then.
    for i in 0..16 {
        old.step(i).await;
    }
    let accepted = old.app.post(&old.confederate, &old.campaign, empty_retreat()).await;
    let accepted = accepted.ok(201);
    assert_eq!(outcome(accepted, "retreat")["data"]["eliminated_without_retreat"], json!(["cs-52nd-inf"]));
    // The whole campaign replays and audits under version 1.
    let audit = old.app.get(&format!("/v1/campaigns/{}/audit", old.campaign)).await;
    let audit = audit.ok(200);
    assert_eq!(audit["ok"], true, "{audit}");
    assert_eq!(audit["posts"], 17);
}

async fn umpire(backend: Backend) {
    let g = game(backend).await;
    for i in 0..14 {
        g.step(i).await;
    }
    // Both sides owe a casualty order. A player cannot umpire; the moderator can, with a reason.
    let body = json!({"kind": "umpire", "body": {"side": "confederate", "kind": "casualty_order", "body": {"order": ["cs-52nd-inf"]}, "reason": "The Rebel player is away for a week."}});
    g.app.post(&g.union, &g.campaign, body.clone()).await.problem(403, "Authorization");
    let not_awaited = json!({"kind": "umpire", "body": {"side": "confederate", "kind": "retreat", "body": {"paths": []}, "reason": "x"}});
    // What the side may not post now, the moderator may not post for it: the game as it stands
    // refuses it (409), and the kind is not an order of the game at all (422).
    g.app.post(&g.moderator, &g.campaign, not_awaited).await.problem(409, "body.body.kind");
    let no_such =
        json!({"kind": "umpire", "body": {"side": "confederate", "kind": "charge", "body": {}, "reason": "x"}});
    g.app.post(&g.moderator, &g.campaign, no_such).await.problem(422, "body.body.kind");
    let answered = g.app.post(&g.moderator, &g.campaign, body).await;
    let answered = answered.ok(201);
    assert_eq!(answered["outcomes"][0]["kind"], "umpire");
    assert!(answered["outcomes"][0]["headline"].as_str().unwrap().contains("away for a week"));
    let spread = outcome(answered, "casualties");
    assert_eq!(spread["data"]["units"][0]["unit"], "cs-52nd-inf");
    assert_eq!(spread["data"]["units"][0]["taken"], 2);
    let state = g.state().await;
    let awaited: Vec<&str> =
        state["awaiting"].as_array().unwrap().iter().map(|a| a["side"].as_str().unwrap()).collect();
    assert_eq!(awaited, ["union"]);
    let audit = g.app.get(&format!("/v1/campaigns/{}/audit", g.campaign)).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
}

async fn game(backend: Backend) -> Game {
    Game::start(TestApp::spawn(backend).await, "Short ACW", json!({})).await
}

/// The factors `unit` has now.
async fn factors(g: &Game, unit: &str) -> u64 {
    let state = g.state().await;
    state["units"].as_array().unwrap().iter().find(|u| u["id"] == unit).unwrap()["factors"].as_u64().unwrap()
}

fn outcome<'a>(post: &'a Value, kind: &str) -> &'a Value {
    post["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {post}"))
}

async fn worked_example(backend: Backend) {
    let g = game(backend).await;
    for i in 0..13 {
        g.step(i).await;
    }
    // 15 Union factors next to 6 Rebel factors behind the river, the attack stamped 9:51:45.
    let attack = g.step(13).await;
    assert_eq!(attack["stamp"], "2026-03-02T09:51:45.250Z");
    assert_eq!(attack["numbers"]["result_number"]["result"], 21);
    let battle = outcome(&attack, "battle");
    let n = &battle["data"]["numbers"];
    assert_eq!(n["attacker"], 15);
    assert_eq!(n["defender"], 6);
    assert_eq!(n["defence"], "river");
    assert_eq!(n["defender_counted"], "12");
    assert_eq!(n["victory"], 56);
    assert_eq!(n["result_number"]["n"], 95145);
    assert_eq!(n["result_number"]["sqrt"], "308.455831522115");
    assert_eq!(n["result"], 21);
    assert_eq!(n["winner"], "attacker");
    assert_eq!(battle["data"]["winner_side"], "union");
    assert_eq!(n["difference"], 35);
    assert_eq!(n["basic_rate"], "21/15");
    assert_eq!(n["winner_casualties"], 1);
    assert_eq!(n["loser_casualties"], 3);
    assert!(battle["headline"].as_str().unwrap().len() > 10);

    // The public calculator agrees.
    let calc = g.app.get("/v1/tools/combat?attacker=15&defender=6&defence=river&time=9:51:45").await;
    let calc = calc.ok(200);
    assert_eq!(calc["victory"], 56);
    assert_eq!(calc["result"], 21);
    assert_eq!(calc["winner"], "attacker");
    assert_eq!(calc["difference"], 35);
    assert_eq!(calc["winner_casualties"], 1);
    assert_eq!(calc["loser_casualties"], 3);
    let one_decimal = g
        .app
        .get("/v1/tools/combat?attacker=15&defender=6&defence=river&time=9:51:45&victory_rounding=one_decimal")
        .await;
    assert_eq!(one_decimal.ok(200)["victory"], 56);
    // Fortification unit by unit: 4 fortified factors and 2 that are not count 4 × 1½ + 2 = 8
    // (victory 100·6/14 → 43); `defence=fortified` still counts every defender ×1½.
    let mixed =
        g.app.get("/v1/tools/combat?attacker=6&defender=2&defender_fortified=4&defence=open&time=9:51:45").await;
    let mixed = mixed.ok(200);
    assert_eq!((mixed["defender"].clone(), mixed["defender_counted"].clone()), (json!(6), json!("8")));
    assert_eq!(mixed["victory"], 43);
    let all = g.app.get("/v1/tools/combat?attacker=6&defender=6&defence=fortified&time=9:51:45").await;
    let all = all.ok(200);
    assert_eq!((all["defender_counted"].clone(), all["victory"].clone()), (json!("9"), json!(40)));
    let woods =
        g.app.get("/v1/tools/combat?attacker=6&defender=2&defender_fortified=4&defence=woods&time=9:51:45").await;
    assert_eq!(woods.ok(200)["defender_counted"], "12");

    // Both sides say how casualties fall; the Union loses 1, the Rebels 3 spread over their units.
    let state = g.state().await;
    let awaited: Vec<&str> =
        state["awaiting"].as_array().unwrap().iter().map(|a| a["kind"].as_str().unwrap()).collect();
    assert_eq!(awaited, ["casualty_order", "casualty_order"]);
    let union = g.step(14).await;
    assert_eq!(outcome(&union, "casualties")["data"]["casualties"], 1);
    let rebel = g.step(15).await;
    let spread = &outcome(&rebel, "casualties")["data"];
    assert_eq!(spread["casualties"], 3);
    assert_eq!(spread["units"][0]["taken"], 2);
    assert_eq!(spread["units"][1]["taken"], 1);
    assert_eq!(factors(&g, "us-12th-inf").await, 3);
    assert_eq!(factors(&g, "cs-52nd-inf").await, 1);
    assert_eq!(factors(&g, "cs-51st-inf").await, 2);
    // The Rebels must retreat.
    let state = g.state().await;
    assert_eq!(state["awaiting"][0]["kind"], "retreat");
    assert_eq!(state["awaiting"][0]["side"], "confederate");
    g.step(16).await;
    assert_eq!(g.state().await["battle"], Value::Null);

    // Every post checks out in the audit, the battle's included.
    let audit = g.app.get(&format!("/v1/campaigns/{}/posts/14/audit", g.campaign)).await;
    let audit = audit.ok(200);
    assert_eq!(audit["ok"], true, "{audit}");
    assert_eq!(audit["outcomes_match"], true);

    // The map, mid-game: the battle is marked with its numbers.
    let svg = g.app.client.get(format!("{}/v1/campaigns/{}/map.svg", g.app.base, g.campaign)).send().await.unwrap();
    assert_eq!(svg.status(), 200);
    assert_eq!(svg.headers()["content-type"], "image/svg+xml; charset=utf-8");
    let svg = svg.text().await.unwrap();
    assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"), "{}", &svg[..100]);
    assert!(svg.contains("V56 R21"), "the battle marker is missing");
    let png = g.app.client.get(format!("{}/v1/campaigns/{}/map.png", g.app.base, g.campaign)).send().await.unwrap();
    assert_eq!(png.status(), 200);
    assert_eq!(png.headers()["content-type"], "image/png");
    let png = png.bytes().await.unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(png.len() > 50_000, "{} bytes", png.len());

    // The fairness report counts the battle for the Union.
    let report = g.app.get(&format!("/v1/campaigns/{}/fairness", g.campaign)).await;
    let report = report.ok(200);
    assert_eq!(report["battles"], 1);
    assert_eq!(report["players"][0]["player"], "union");
    assert_eq!(report["players"][0]["attacker_wins"]["observed"], 1);
    assert_eq!(report["players"][0]["attacker_wins"]["expected"], 0.57);
}

async fn scripted_campaign(backend: Backend) {
    let g = game(backend).await;
    for i in 0..g.script.len() {
        g.step(i).await;
    }
    let state = g.state().await;
    assert_eq!(state["phase"], "over");
    assert_eq!(state["result"]["winner"], "union");
    assert_eq!(state["result"]["level"], "major");
    assert_eq!(state["result"]["condition"], "Major Union Victory: Capture City 'M' within 7 turns.");
    assert_eq!(state["cities"]["M"], "union");
    assert_eq!(state["reinforcement_points"]["union"], 2);
    assert_eq!(state["reinforcement_points"]["confederate"], 1);

    // The stored snapshots are what replaying the log gives: every post's audit recomputes it.
    for seq in 1..=g.script.len() {
        let audit = g.app.get(&format!("/v1/campaigns/{}/posts/{seq}/audit", g.campaign)).await;
        assert_eq!(audit.ok(200)["ok"], true, "post {seq}: {}", audit.text);
    }
    // The whole campaign replays to the same outcomes and states.
    let audit = g.app.get(&format!("/v1/campaigns/{}/audit", g.campaign)).await;
    let audit = audit.ok(200);
    assert_eq!(audit["ok"], true, "{audit}");
    assert_eq!(audit["posts"], g.script.len());
    assert_eq!(audit["snapshots"], g.script.len());
    assert_eq!(audit["result_numbers"], 1);
    assert_eq!(audit["reinforcement_rolls"], 2);
    assert!(audit["outcomes"].as_i64().unwrap() > g.script.len() as i64);

    // Nothing is accepted once the game is over.
    let late = g.app.post(&g.confederate, &g.campaign, json!({"kind": "end_turn", "body": {}})).await;
    // The game's state refuses it, not the post's shape: 409.
    let problem = late.problem(409, "body.kind");
    assert_eq!(problem["rule"], "game.over");
    let log = g.app.get(&format!("/v1/campaigns/{}/posts?limit=100", g.campaign)).await;
    assert_eq!(log.ok(200)["posts"].as_array().unwrap().len(), g.script.len());
}

async fn refusals_change_nothing(backend: Backend) {
    let g = game(backend).await;
    g.step(0).await;
    g.step(1).await;
    let before = g.state().await;
    // Out of turn: the Rebels may not move in the Union's player turn.
    let out_of_turn = g
        .app
        .post(&g.confederate, &g.campaign, json!({"kind": "move", "body": {"unit": "cs-51st-inf", "path": ["0603"]}}))
        .await;
    // 409: the same move may pass in the Rebels' own turn.
    let p = out_of_turn.problem(409, "body.side");
    assert!(p["detail"].as_str().unwrap().contains("turn"), "{p}");
    // Another side's unit.
    let theirs = g
        .app
        .post(&g.union, &g.campaign, json!({"kind": "move", "body": {"unit": "cs-51st-inf", "path": ["0603"]}}))
        .await;
    // 422: it could never be right.
    theirs.problem(422, "body.body.unit");
    // Too far: infantry have 3 movement points.
    let far = g
        .app
        .post(
            &g.union,
            &g.campaign,
            json!({"kind": "move", "body": {"unit": "us-30th-inf", "path": ["0410", "0510", "0610", "0710"]}}),
        )
        .await;
    let p = far.problem(422, "body.body.path[2]");
    assert!(p["rule"].as_str().unwrap().starts_with("movement."), "{p}");
    // A body that is not the kind's shape.
    g.app
        .post(&g.union, &g.campaign, json!({"kind": "move", "body": {"unit": 7}}))
        .await
        .problem(422, "body.body.unit");
    // Unknown kind.
    g.app.post(&g.union, &g.campaign, json!({"kind": "charge", "body": {}})).await.problem(422, "body.kind");
    // The moderator does not give orders in a managed campaign.
    g.app.post(&g.moderator, &g.campaign, json!({"kind": "end_turn", "body": {}})).await.problem(422, "body.side");

    assert_eq!(g.state().await, before);
    assert_eq!(g.app.db.count("posts").await, 2);

    // Legal moves of a unit, and of a unit that does not exist.
    let moves = g.app.get(&format!("/v1/campaigns/{}/units/us-30th-inf/moves", g.campaign)).await;
    let moves = moves.ok(200);
    let reach = moves["moves"].as_array().unwrap();
    assert!(!reach.is_empty());
    assert!(reach.iter().all(|m| m["cost"].as_u64().unwrap() <= 3), "{moves}");
    g.app.get(&format!("/v1/campaigns/{}/units/no-such-unit/moves", g.campaign)).await.problem(404, "path.unit");
    // A legal move the server offered is accepted.
    let first = &reach[0];
    let moved = g
        .app
        .post(&g.union, &g.campaign, json!({"kind": "move", "body": {"unit": "us-30th-inf", "path": first["path"]}}))
        .await;
    moved.ok(201);

    let kinds = g.app.get("/v1/post-kinds").await;
    let kinds = kinds.ok(200);
    for k in [
        "deploy",
        "reinforcement",
        "reinforce",
        "move",
        "attack",
        "cavalry_option",
        "resolve_attack",
        "casualty_order",
        "retreat",
        "end_turn",
    ] {
        assert!(kinds.as_array().unwrap().iter().any(|x| x["kind"] == k), "{k} undocumented");
    }
    let spec = g.app.get("/v1/openapi.json").await;
    let examples = &spec.ok(200)["paths"]["/v1/campaigns/{id}/posts"]["post"]["requestBody"]["content"]
        ["application/json"]["examples"];
    assert!(examples["short-acw.attack"]["value"]["body"]["target"].is_string(), "{examples}");
}

async fn rollback(backend: Backend) {
    let g = game(backend).await;
    for i in 0..4 {
        g.step(i).await;
    }
    let after_four = g.state().await;
    g.step(4).await;
    g.step(5).await;
    assert_ne!(g.state().await, after_four);

    // Only the moderator rolls back, and says why.
    let by_player =
        g.app.post(&g.union, &g.campaign, json!({"kind": "rollback", "body": {"to_seq": 4, "reason": "x"}})).await;
    by_player.problem(403, "Authorization");
    let no_reason =
        g.app.post(&g.moderator, &g.campaign, json!({"kind": "rollback", "body": {"to_seq": 4, "reason": " "}})).await;
    no_reason.problem(422, "body.body.reason");

    let rollback = g
        .app
        .post(&g.moderator, &g.campaign, json!({"kind": "rollback", "body": {"to_seq": 4, "reason": "The Rebel player posted in the wrong thread."}}))
        .await;
    let rollback = rollback.ok(201);
    assert_eq!(rollback["seq"], 7);
    let announced = outcome(rollback, "rollback");
    assert_eq!(announced["data"]["voided"], json!([5, 6]));
    assert!(announced["headline"].as_str().unwrap().contains("wrong thread"));

    // The state is what it was after post 4; posts 5 and 6 stay in the log, marked void.
    assert_eq!(g.state().await, after_four);
    let log = g.app.get(&format!("/v1/campaigns/{}/posts", g.campaign)).await;
    let posts = log.ok(200)["posts"].as_array().unwrap().clone();
    assert_eq!(posts.len(), 7);
    let void: Vec<i64> = posts.iter().filter(|p| p["void"] == true).map(|p| p["seq"].as_i64().unwrap()).collect();
    assert_eq!(void, [5, 6]);
    // Play goes on from there: the Rebel reinforcement post is taken again.
    g.step(4).await;
    // Rolling back to a void post is refused.
    let to_void = g
        .app
        .post(&g.moderator, &g.campaign, json!({"kind": "rollback", "body": {"to_seq": 5, "reason": "again"}}))
        .await;
    to_void.problem(422, "body.body.to_seq");
    let audit = g.app.get(&format!("/v1/campaigns/{}/posts/7/audit", g.campaign)).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
    let _ = Method::GET;
}

async fn campaign_audit_catches_tampering(backend: Backend) {
    let g = game(backend).await;
    for i in 0..17 {
        g.step(i).await;
    }
    let path = format!("/v1/campaigns/{}/audit", g.campaign);
    assert_eq!(g.app.get(&path).await.ok(200)["ok"], true);

    // Someone with the database file changes the battle's casualties...
    let unguard_outcomes = match backend {
        Backend::Sqlite => "DROP TRIGGER outcomes_append_only_update;",
        Backend::Postgres => "ALTER TABLE outcomes DISABLE TRIGGER outcomes_append_only;",
    };
    g.app
        .db
        .execute(&format!(
            "{unguard_outcomes} UPDATE outcomes SET data = REPLACE(data, '\"loser_casualties\":3', '\"loser_casualties\":1') WHERE kind = 'battle';"
        ))
        .await;
    // A repeat audit trusts the prefix this server verified before (within its life) and
    // replays nothing; a fresh one replays every post and finds the change.
    assert_eq!(g.app.get(&path).await.ok(200)["replayed_now"], 0);
    let fresh = format!("{path}?fresh=true");
    let audit = g.app.get(&fresh).await;
    let audit = audit.ok(200);
    assert_eq!(audit["ok"], false);
    let differences = audit["differences"].as_array().unwrap();
    assert_eq!(differences.len(), 1, "{audit}");
    assert_eq!(differences[0]["seq"], 14);
    assert_eq!(differences[0]["check"], "outcomes");

    // ...and a post's order.
    let unguard_posts = match backend {
        Backend::Sqlite => "DROP TRIGGER posts_append_only_update;",
        Backend::Postgres => "ALTER TABLE posts DISABLE TRIGGER posts_append_only;",
    };
    g.app
        .db
        .execute(&format!(
            "{unguard_posts} UPDATE posts SET body = REPLACE(body, 'cs-52nd-inf', 'cs-51st-inf') WHERE seq = 16;"
        ))
        .await;
    let audit = g.app.get(&fresh).await;
    let audit = audit.ok(200);
    let checks: Vec<(i64, &str)> = audit["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["seq"].as_i64().unwrap(), d["check"].as_str().unwrap()))
        .collect();
    assert!(checks.contains(&(14, "outcomes")), "{audit}");
    assert!(checks.contains(&(16, "chain")), "{audit}");
    // The changed order also changes who took the casualties: the replay says so.
    assert!(checks.iter().any(|(seq, check)| *seq >= 16 && *check != "chain"), "{audit}");

    // Rows slipped in beyond the last post are found too, and a stray state is never used.
    let before = g.state().await;
    let campaign_sql = match backend {
        Backend::Sqlite => format!("'{}'", g.campaign),
        Backend::Postgres => format!("'{}'::uuid", g.campaign),
    };
    let id_sql = match backend {
        Backend::Sqlite => "'00000000-0000-4000-8000-00000000beef'".to_owned(),
        Backend::Postgres => "'00000000-0000-4000-8000-00000000beef'::uuid".to_owned(),
    };
    let fk_off = match backend {
        Backend::Sqlite => "PRAGMA foreign_keys = OFF;",
        Backend::Postgres => "SET session_replication_role = replica;",
    };
    g.app
        .db
        .execute(&format!(
            "{fk_off} INSERT INTO outcomes (id, campaign_id, position, seq, kind, data) VALUES ({id_sql}, {campaign_sql}, 999, 99, 'battle', '{{}}');
             INSERT INTO snapshots (campaign_id, seq, state) VALUES ({campaign_sql}, 99, '{{}}');"
        ))
        .await;
    assert_eq!(g.state().await, before, "a stray snapshot must not pass for the state");
    let audit = g.app.get(&path).await;
    let audit = audit.ok(200);
    let strays: Vec<(i64, &str)> = audit["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["seq"].as_i64().unwrap(), d["check"].as_str().unwrap()))
        .filter(|(seq, _)| *seq == 99)
        .collect();
    assert_eq!(strays, [(99, "outcomes"), (99, "snapshot")], "{audit}");
}
