//! Scenarios moderators upload: checked whole, every problem answered at once; kept once per
//! moderator and text; seen and used by their moderator alone; previewed before any campaign;
//! and played from deployment to victory with the audit and `adjutant verify` passing.

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{on_both_backends, Backend, TestApp, CROSSROADS};

on_both_backends! {
    an_uploaded_scenario_is_played_to_victory_and_audited => played_to_victory;
    a_scenario_with_every_kind_of_problem_is_refused_with_each_listed => every_problem_listed;
    another_moderator_can_neither_see_nor_use_my_scenario => private_to_its_moderator;
    an_uploaded_scenario_is_previewed_before_any_campaign => previewed;
    a_scenario_in_json_is_kept_as_toml_and_played => uploaded_as_json;
    a_scenario_is_checked_and_drawn_without_being_kept => checked_not_kept;
}

async fn upload(app: &TestApp, moderator: &str, name: &str, text: &str) -> adjutant_e2e::Answer {
    app.request(Method::POST, "/v1/scenarios", Some(moderator), Some(json!({"name": name, "text": text}))).await
}

async fn check(app: &TestApp, token: Option<&str>, body: Value) -> adjutant_e2e::Answer {
    app.request(Method::POST, "/v1/scenarios/check", token, Some(body)).await
}

/// The fields and rules of a list of problems.
fn fields_and_rules(problems: &Value) -> Vec<(String, String)> {
    problems
        .as_array()
        .unwrap_or_else(|| panic!("no problems: {problems}"))
        .iter()
        .map(|e| (e["field"].as_str().unwrap().to_owned(), e["rule"].as_str().unwrap().to_owned()))
        .collect()
}

async fn list(app: &TestApp, token: Option<&str>) -> Value {
    app.request(Method::GET, "/v1/scenarios", token, None).await.ok(200).clone()
}

fn placements(units: &[&str], hex: &str) -> Value {
    json!({"placements": units.iter().map(|u| json!({"unit": u, "hex": hex})).collect::<Vec<_>>()})
}

async fn played_to_victory(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let kept = upload(&app, &moderator, "Crossroads", CROSSROADS).await;
    let scenario = kept.ok(201)["id"].as_str().unwrap().to_owned();
    assert_eq!(scenario.len(), 64, "{}", kept.text);
    assert_eq!(kept.body["source"], "uploaded");
    assert_eq!(kept.body["title"], "Crossroads");
    // The same text again is the same scenario, not a second one.
    let again = upload(&app, &moderator, "Crossroads again", CROSSROADS).await;
    assert_eq!(again.ok(200)["id"], scenario.as_str());
    assert_eq!(again.body["name"], "Crossroads");
    let listed = list(&app, Some(&moderator)).await;
    assert_eq!(listed["uploaded"].as_array().unwrap().len(), 1, "{listed}");
    let read = app.request(Method::GET, &format!("/v1/scenarios/{scenario}"), Some(&moderator), None).await;
    assert_eq!(read.ok(200)["text"], CROSSROADS);

    let body = json!({"name": "Crossroads, 1861", "scenario": scenario});
    let campaign = app.campaign(&moderator, body).await;
    let view = app.get(&format!("/v1/campaigns/{campaign}")).await;
    assert_eq!(view.ok(200)["scenario"], scenario.as_str());
    let union = app.player(&moderator, &campaign, "union").await;
    let confederate = app.player(&moderator, &campaign, "confederate").await;
    let state = app.get(&format!("/v1/campaigns/{campaign}/state")).await.ok(200)["state"].clone();
    assert_eq!(state["cities"]["C"], "confederate", "{state}");

    let union_units = ["us-1st-inf", "us-2nd-inf", "us-1st-cav", "us-hq"];
    let rebel_units = ["cs-1st-inf", "cs-2nd-inf", "cs-1st-cav", "cs-hq"];
    let posts = [
        (&union, json!({"kind": "deploy", "body": placements(&union_units, "0103")})),
        (&confederate, json!({"kind": "deploy", "body": placements(&rebel_units, "0703")})),
        // Along the rail west of the river, then south into the Crossroads: four clear steps.
        (&union, json!({"kind": "move", "body": {"unit": "us-1st-cav", "path": ["0203", "0304", "0404", "0405"]}})),
        (&union, json!({"kind": "end_turn", "body": {}})),
    ];
    for (token, post) in posts {
        let answer = app.post(token, &campaign, post.clone()).await;
        assert_eq!(answer.status.as_u16(), 201, "{post}: {}", answer.text);
    }
    let state = app.get(&format!("/v1/campaigns/{campaign}/state")).await.ok(200)["state"].clone();
    assert_eq!(state["cities"]["C"], "union", "{state}");
    assert_eq!(state["result"]["winner"], "union", "{state}");
    assert_eq!(state["result"]["level"], "major", "{state}");

    let audit = app.get(&format!("/v1/campaigns/{campaign}/audit?fresh=true")).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
    let dir = tempfile::tempdir().unwrap();
    let export = app.get(&format!("/v1/campaigns/{campaign}/export")).await.text;
    assert!(export.contains("Crossroads"), "the export carries the scenario's text: {export}");
    std::fs::write(dir.path().join("crossroads.jsonl"), &export).unwrap();
    let key = app.get("/v1/keys").await.ok(200)["keys"][0]["public_key"].as_str().unwrap().to_owned();
    let report = adjutant_server::verify::verify(&adjutant_server::verify::Options {
        file: dir.path().join("crossroads.jsonl"),
        keys: vec![key],
        forum_texts: None,
    })
    .unwrap();
    assert!(report.ok(), "{}", report.text());
}

/// The crossroads scenario with `from` replaced by `to`, which must be there.
fn broken(text: String, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from}");
    text.replacen(from, to, 1)
}

async fn every_problem_listed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let mut text = CROSSROADS.to_owned();
    for (from, to) in [
        ("columns = 8", "columns = 50"),
        (r#"woods = ["0202", "0706"]"#, r#"woods = ["0202", "0706", "0109"]"#),
        (r#""0501/0601", "#, r#""0501/0601", "0101/0303", "#),
        ("hexside = \"0503/0603\"", "hexside = \"0101/0102\""),
        (r#"hexes = ["0103", "0203", "0303", "#, r#"hexes = ["0103", "0303", "#),
        ("letter = \"R\"", "letter = \"C\""),
        ("union = [\"U\"]", "union = []"),
        ("confederate = [\"R\"]", "confederate = [\"Z\"]"),
        ("id = \"us-2nd-inf\"", "id = \"us-1st-inf\""),
        ("factors = 2\n", "factors = 0\n"),
        ("capture = \"U\"", "capture = \"M\""),
        ("name = \"1st Cav\"", "name = \"1st\\nCav\""),
    ] {
        text = broken(text, from, to);
    }
    let answer = upload(&app, &moderator, "Broken", &text).await;
    let problem = answer.problem(422, "body.text");
    assert_eq!(problem["rule"], "scenario.invalid");
    let errors: Vec<(String, String)> = problem["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no errors: {}", answer.text))
        .iter()
        .map(|e| (e["field"].as_str().unwrap().to_owned(), e["rule"].as_str().unwrap().to_owned()))
        .collect();
    let expected = [
        ("body.text.map", "scenario.map_size"),
        ("body.text.map.woods[2]", "scenario.hex_off_map"),
        ("body.text.map.rivers[0].hexsides[1]", "scenario.hexside_not_adjacent"),
        ("body.text.map.bridges[0]", "scenario.bridge_off_river"),
        ("body.text.map.rail[0].hexes[1]", "scenario.rail_gap"),
        ("body.text.map.cities[2]", "scenario.city_letter_twice"),
        ("body.text.deployment.union", "scenario.deployment_no_city"),
        ("body.text.deployment.confederate[0]", "scenario.unknown_city"),
        ("body.text.units.union[1]", "scenario.unit_id_twice"),
        ("body.text.units.union[2].factors", "scenario.factors"),
        ("body.text.victory[2].capture", "scenario.unknown_city"),
        ("body.text.units.union[2].name", "scenario.wording"),
    ];
    for (field, rule) in expected {
        assert!(errors.iter().any(|(f, r)| f == field && r == rule), "{field} {rule} is not listed: {}", answer.text);
    }
    // Nothing was kept.
    assert!(list(&app, Some(&moderator)).await["uploaded"].as_array().unwrap().is_empty());
    assert_eq!(app.db.count("scenarios").await, 0);

    // The TOML itself: one problem, at its line and column.
    let answer = upload(&app, &moderator, "Torn", "name = \"torn\"\n[map\n").await;
    let problem = answer.problem(422, "body.text");
    assert_eq!(problem["errors"][0]["rule"], "scenario.syntax", "{}", answer.text);
    assert!(problem["errors"][0]["detail"].as_str().unwrap().starts_with("2:"), "{}", answer.text);
    // Too long a text, and a bad name.
    let long = format!("{CROSSROADS}\n#{}", "x".repeat(48 * 1024));
    let answer = upload(&app, &moderator, "Long", &long).await;
    assert_eq!(answer.problem(422, "body.text")["rule"], "scenario.text_length");
    // One byte too many, each escaped in the JSON: the body is far over the server's usual
    // limit, and still answered with the rule the text breaks.
    let escaped = "\u{19}".repeat(48 * 1024 + 1);
    let answer = upload(&app, &moderator, "Escaped", &escaped).await;
    assert_eq!(answer.problem(422, "body.text")["rule"], "scenario.text_length");
    let answer = upload(&app, &moderator, "", CROSSROADS).await;
    answer.problem(422, "body.name");
    assert_eq!(app.db.count("scenarios").await, 0);
}

async fn private_to_its_moderator(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let mine = app.moderator().await;
    let other = app.moderator().await;
    let id = upload(&app, &mine, "Crossroads", CROSSROADS).await.ok(201)["id"].as_str().unwrap().to_owned();

    let theirs = list(&app, Some(&other)).await;
    assert!(theirs["uploaded"].as_array().unwrap().is_empty(), "{theirs}");
    assert_eq!(theirs["server"][0]["id"], "short-acw", "{theirs}");
    let anyone = list(&app, None).await;
    assert!(anyone["uploaded"].as_array().unwrap().is_empty(), "{anyone}");
    for path in
        [format!("/v1/scenarios/{id}"), format!("/v1/scenarios/{id}/map.svg"), format!("/v1/scenarios/{id}/map.png")]
    {
        for token in [Some(other.as_str()), None] {
            let answer = app.request(Method::GET, &path, token, None).await;
            answer.problem(404, "path.id");
        }
        let answer = app.request(Method::GET, &path, Some(&mine), None).await;
        assert_eq!(answer.status.as_u16(), 200, "{path}: {}", answer.text);
    }
    let answer =
        app.request(Method::POST, "/v1/campaigns", Some(&other), Some(json!({"name": "Stolen", "scenario": id}))).await;
    assert_eq!(answer.problem(422, "body.scenario")["rule"], "campaign.scenario");
    // Uploading the same text makes it theirs too, the same id: the same scenario, now theirs.
    let same = upload(&app, &other, "Mine now", CROSSROADS).await;
    assert_eq!(same.ok(201)["id"], id.as_str());
    app.campaign(&other, json!({"name": "Theirs", "scenario": id})).await;
    let listed = list(&app, Some(&mine)).await;
    assert_eq!(listed["uploaded"][0]["name"], "Crossroads", "{listed}");
}

async fn previewed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let id = upload(&app, &moderator, "Crossroads", CROSSROADS).await.ok(201)["id"].as_str().unwrap().to_owned();
    let svg = app.request(Method::GET, &format!("/v1/scenarios/{id}/map.svg"), Some(&moderator), None).await;
    assert_eq!(svg.status.as_u16(), 200, "{}", svg.text);
    assert!(svg.content_type.starts_with("image/svg+xml"), "{}", svg.content_type);
    assert!(svg.text.contains("<svg") && svg.text.contains("Crossroads"), "{}", svg.text);
    for _ in 0..2 {
        let png = app.request(Method::GET, &format!("/v1/scenarios/{id}/map.png"), Some(&moderator), None).await;
        assert_eq!(png.status.as_u16(), 200);
        assert_eq!(png.content_type, "image/png");
    }
    // The server's scenarios are previewed for anyone.
    let shipped = app.get("/v1/scenarios/short-acw/map.svg").await;
    assert_eq!(shipped.status.as_u16(), 200);
    let shipped = app.get("/v1/scenarios/short-acw").await;
    assert_eq!(shipped.ok(200)["source"], "server");
    app.get("/v1/scenarios/no-such-scenario").await.problem(404, "path.id");
}

async fn uploaded_as_json(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    // The crossroads scenario as JSON, as the server reads its TOML.
    let read = check(&app, Some(&moderator), json!({"text": CROSSROADS})).await;
    let scenario = read.ok(200)["scenario"].clone();
    assert_eq!(scenario["map"]["cities"][1]["name"], "Crossroads", "{}", read.text);
    assert_eq!(scenario["units"]["union"][0]["factors"], 4, "{}", read.text);

    let kept = app
        .request(
            Method::POST,
            "/v1/scenarios",
            Some(&moderator),
            Some(json!({"name": "Crossroads (JSON)", "scenario": scenario})),
        )
        .await;
    let id = kept.ok(201)["id"].as_str().unwrap().to_owned();
    assert_eq!(kept.body["title"], "Crossroads");
    // Kept as TOML text, which the check of the JSON named, id and all.
    let text = app.request(Method::GET, &format!("/v1/scenarios/{id}"), Some(&moderator), None).await.ok(200)["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.contains("[[map.cities]]") && text.contains("letter = \"C\""), "{text}");
    let checked = check(&app, Some(&moderator), json!({"scenario": scenario})).await;
    assert_eq!(checked.ok(200)["id"], id.as_str(), "{}", checked.text);
    assert_eq!(checked.body["text"], text.as_str());
    // The same JSON again is the same scenario.
    let again = app
        .request(Method::POST, "/v1/scenarios", Some(&moderator), Some(json!({"name": "Again", "scenario": scenario})))
        .await;
    assert_eq!(again.ok(200)["id"], id.as_str());

    // A campaign from it plays on its map.
    let campaign = app.campaign(&moderator, json!({"name": "From JSON", "scenario": id})).await;
    let union = app.player(&moderator, &campaign, "union").await;
    let state = app.get(&format!("/v1/campaigns/{campaign}/state")).await.ok(200)["state"].clone();
    assert_eq!(state["cities"]["C"], "confederate", "{state}");
    let deploy =
        json!({"kind": "deploy", "body": placements(&["us-1st-inf", "us-2nd-inf", "us-1st-cav", "us-hq"], "0103")});
    assert_eq!(app.post(&union, &campaign, deploy).await.status.as_u16(), 201);

    // Problems of the JSON are named by their path in it, every one at once.
    let mut broken = scenario.clone();
    broken["map"]["rail"][0]["hexes"][1] = json!("0303");
    broken["units"]["union"][1]["id"] = json!("us-1st-inf");
    broken["deployment"]["confederate"] = json!(["Z"]);
    broken["map"]["cities"][0]["control"] = Value::Null;
    let answer = app
        .request(Method::POST, "/v1/scenarios", Some(&moderator), Some(json!({"name": "Broken", "scenario": broken})))
        .await;
    let problem = answer.problem(422, "body.scenario");
    assert_eq!(problem["rule"], "scenario.invalid");
    let errors = fields_and_rules(&problem["errors"]);
    for (field, rule) in [
        ("body.scenario.map.rail[0].hexes[1]", "scenario.rail_gap"),
        ("body.scenario.units.union[1]", "scenario.unit_id_twice"),
        ("body.scenario.deployment.confederate[0]", "scenario.unknown_city"),
    ] {
        assert!(errors.iter().any(|(f, r)| f == field && r == rule), "{field} {rule} is not listed: {}", answer.text);
    }
    // A value of the wrong type, and a key the format does not have, are named by their path.
    let mut torn = scenario.clone();
    torn["units"]["union"][0]["factors"] = json!("four");
    let answer = app
        .request(Method::POST, "/v1/scenarios", Some(&moderator), Some(json!({"name": "Torn", "scenario": torn})))
        .await;
    let errors = fields_and_rules(&answer.problem(422, "body.scenario")["errors"]);
    assert_eq!(errors, [("body.scenario.units.union[0].factors".to_owned(), "scenario.syntax".to_owned())]);
    let mut extra = scenario.clone();
    extra["map"]["mountains"] = json!(["0101"]);
    let answer = check(&app, Some(&moderator), json!({"scenario": extra})).await;
    let errors = fields_and_rules(&answer.ok(200)["problems"]);
    assert_eq!(errors, [("body.scenario.map.mountains".to_owned(), "scenario.syntax".to_owned())], "{}", answer.text);
    // Not an object at all: outside what the description allows, refused (upload and check).
    let answer = check(&app, Some(&moderator), json!({"scenario": [1, 2]})).await;
    assert_eq!(answer.problem(422, "body.scenario")["rule"], "scenario.syntax");
    let body = json!({"name": "Not a table", "scenario": [null, null]});
    let answer = app.request(Method::POST, "/v1/scenarios", Some(&moderator), Some(body)).await;
    assert_eq!(answer.problem(422, "body.scenario")["rule"], "scenario.syntax");
    // Both forms at once, or neither: the body says which it sends by the one member it has.
    let answer = app
        .request(
            Method::POST,
            "/v1/scenarios",
            Some(&moderator),
            Some(json!({"name": "Both", "text": CROSSROADS, "scenario": scenario})),
        )
        .await;
    assert_eq!(answer.problem(422, "body.scenario")["rule"], "scenario.one_form");
    let answer = app.request(Method::POST, "/v1/scenarios", Some(&moderator), Some(json!({"name": "None"}))).await;
    assert_eq!(answer.problem(422, "body.text")["rule"], "scenario.one_form");
    let listed = list(&app, Some(&moderator)).await;
    assert_eq!(listed["uploaded"].as_array().unwrap().len(), 1, "{listed}");
}

async fn checked_not_kept(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let answer = check(&app, Some(&moderator), json!({"text": CROSSROADS})).await;
    let checked = answer.ok(200).clone();
    assert_eq!(checked["problems"], json!([]), "{}", answer.text);
    let svg = checked["svg"].as_str().unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("Crossroads"), "{svg}");
    assert_eq!(checked["text"], CROSSROADS);
    assert_eq!(app.db.count("scenarios").await, 0, "a check keeps nothing");
    // The map is the one the upload's preview draws, and the id the one the upload gets.
    let id = upload(&app, &moderator, "Crossroads", CROSSROADS).await.ok(201)["id"].as_str().unwrap().to_owned();
    assert_eq!(checked["id"], id.as_str());
    let preview = app.request(Method::GET, &format!("/v1/scenarios/{id}/map.svg"), Some(&moderator), None).await;
    assert_eq!(preview.text, svg);

    // Every problem, with the upload's fields and rules, no map, and still nothing kept.
    let text = broken(CROSSROADS.to_owned(), "letter = \"R\"", "letter = \"C\"");
    let text = broken(text, "factors = 2\n", "factors = 0\n");
    let answer = check(&app, Some(&moderator), json!({"text": text})).await;
    let checked = answer.ok(200).clone();
    let errors = fields_and_rules(&checked["problems"]);
    for (field, rule) in [
        ("body.text.map.cities[2]", "scenario.city_letter_twice"),
        ("body.text.units.union[2].factors", "scenario.factors"),
    ] {
        assert!(errors.iter().any(|(f, r)| f == field && r == rule), "{field} {rule} is not listed: {}", answer.text);
    }
    assert!(checked.get("svg").is_none() && checked.get("text").is_none(), "{}", answer.text);
    // Its JSON is still given, so an editor can open a scenario that has problems.
    assert_eq!(checked["scenario"]["map"]["cities"][2]["letter"], "C", "{}", answer.text);
    let answer = check(&app, Some(&moderator), json!({"text": "name = \"torn\"\n[map\n"})).await;
    let checked = answer.ok(200).clone();
    assert_eq!(fields_and_rules(&checked["problems"]), [("body.text".to_owned(), "scenario.syntax".to_owned())]);
    assert!(checked.get("scenario").is_none(), "{}", answer.text);
    // The same limit as an upload's, refused the same way: past the description's maxLength.
    let long = format!("{CROSSROADS}\n#{}", "x".repeat(48 * 1024));
    let answer = check(&app, Some(&moderator), json!({"text": long})).await;
    assert_eq!(answer.problem(422, "body.text")["rule"], "scenario.text_length");
    assert_eq!(app.db.count("scenarios").await, 1);

    // The description says which form a body sends, and what the check answers.
    let spec = app.get("/v1/openapi.json").await.ok(200).clone();
    assert!(spec["paths"]["/v1/scenarios/check"]["post"]["responses"]["200"].is_object(), "the check is not described");
    for body in ["NewScenarioBody", "ScenarioToCheckBody"] {
        let forms = &spec["components"]["schemas"][body]["oneOf"];
        assert_eq!(forms.as_array().map(Vec::len), Some(2), "{body}: {forms}");
    }

    // Moderators only.
    let campaign = app.campaign(&moderator, json!({"name": "Elsewhere", "scenario": "short-acw"})).await;
    let player = app.player(&moderator, &campaign, "union").await;
    check(&app, Some(&player), json!({"text": CROSSROADS})).await.problem(403, "Authorization");
    check(&app, None, json!({"text": CROSSROADS})).await.problem(401, "Authorization");
}
