//! Aim-proof result times (`settings.result_time = "sealed_delay"`) over HTTP, on SQLite and on
//! PostgreSQL: the campaign publishes its hash chain's s_0 when it is created, the seed's worked
//! example attack (aimed at 9:51:45, result 21 under the seed's rule) gets its result number from
//! the stamp plus a sealed delay, and everything is recomputed here from public data alone with
//! SHA-256 and an integer square root. The server's clock is the test's (`app.clock`).

use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{on_both_backends, Backend, Game, TestApp};
use adjutant_rules::result_time::walk_down;
use chrono::{DateTime, Duration, Timelike, Utc};
use sha2::{Digest, Sha256};

on_both_backends! {
    a_sealed_delay_battle_is_checkable_from_public_data_alone => sealed_battle;
    sealed_delay_settings_are_refused_where_they_do_not_apply => refusals;
    a_chain_that_runs_out_publishes_the_next_before_it_is_needed => chain_extension;
    a_campaign_stored_before_result_times_plays_and_audits_as_post => stored_before;
}

async fn game(app: TestApp, settings: Value) -> Game {
    Game::start(app, "Aim-proof", settings).await
}

fn sha256_hex(text: &str) -> String {
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

fn battle(post: &Value) -> &Value {
    post["outcomes"].as_array().unwrap().iter().find(|o| o["kind"] == "battle").unwrap_or_else(|| panic!("{post}"))
}

/// The seed's rule on a UTC time of day, with an integer square root: ⌊√(N·10^20)⌋ mod 100.
fn result_number(at: DateTime<Utc>) -> (u64, u64) {
    let n = u64::from(at.hour() * 10_000 + at.minute() * 100 + at.second());
    let scaled = (u128::from(n) * 10u128.pow(20)).isqrt();
    (n, (scaled % 100) as u64)
}

/// Checks a sealed battle's every number from what anyone can read: the campaign's published
/// s_0 (or the commitment published before), the post's stamp and hash, the revealed secret.
fn check_from_public_data(post: &Value, commitment: &str, draw: u64, position: u64) -> Value {
    let battle = battle(post);
    let sd = &battle["data"]["sealed_delay"];
    assert_eq!(sd["draw"], draw, "{sd}");
    assert_eq!(sd["position"], position, "{sd}");
    let secret = sd["secret"].as_str().unwrap();
    assert_eq!(sd["previous"], sha256_hex(secret));
    assert_eq!(walk_down(secret, position), commitment, "the revealed secret leads back to the published s_0");
    assert_eq!(sd["commitment"], commitment);
    let hash = post["hash"].as_str().unwrap();
    assert_eq!(sd["post_hash"], hash);
    let digest = sha256_hex(&format!("{secret}{hash}"));
    assert_eq!(sd["digest"], digest);
    let value = u64::from_str_radix(&digest[..16], 16).unwrap();
    assert_eq!(sd["first_8_bytes_decimal"], value.to_string());
    let delay = value % 60_000;
    assert_eq!(sd["delay_ms"], delay);
    let stamp: DateTime<Utc> = post["stamp"].as_str().unwrap().parse().unwrap();
    let result_time = stamp + Duration::milliseconds(delay as i64);
    assert!(result_time >= stamp && result_time < stamp + Duration::seconds(60));
    assert_eq!(sd["result_time"].as_str().unwrap().parse::<DateTime<Utc>>().unwrap(), result_time);
    let (n, result) = result_number(result_time);
    let numbers = &battle["data"]["numbers"];
    assert_eq!(numbers["result_number"]["n"], n);
    assert_eq!(numbers["result"], result);
    let victory = numbers["victory"].as_u64().unwrap();
    assert_eq!(numbers["winner"], if result <= victory { "attacker" } else { "defender" });
    battle.clone()
}

async fn sealed_battle(backend: Backend) {
    let g = game(TestApp::spawn(backend).await, json!({"result_time": "sealed_delay"})).await;
    let view = g.view().await;
    assert_eq!(view["settings"]["result_time"], "sealed_delay");
    let chain = &view["settings"]["result_chain"];
    let commitment = chain["commitment"].as_str().unwrap().to_owned();
    assert_eq!(commitment.len(), 64);
    assert_eq!(chain["length"], 10_000);

    // The chain's secrets are kept where the API does not read them: the top one is the
    // server's, and s_1 is nowhere to be seen before the battle reveals it.
    let store = g.app.db.store().await;
    let id = g.campaign.parse().unwrap();
    let kept = store.campaign_secrets(id).await.unwrap();
    assert_eq!(kept.len(), 1);
    let s_1 = walk_down(&kept[0].1, 9_999);
    assert_eq!(walk_down(&s_1, 1), commitment);
    for i in 0..13 {
        g.step(i).await;
    }
    for path in [
        format!("/v1/campaigns/{}", g.campaign),
        format!("/v1/campaigns/{}/posts?limit=100", g.campaign),
        format!("/v1/campaigns/{}/outcomes", g.campaign),
        format!("/v1/campaigns/{}/state", g.campaign),
        format!("/campaigns/{}", g.campaign),
        format!("/v1/campaigns/{}/audit", g.campaign),
    ] {
        let text = g.app.get(&path).await.text;
        assert!(!text.contains(&s_1) && !text.contains(&kept[0].1), "{path} gives a secret away");
    }

    // The worked example's attack, aimed at 9:51:45 (result number 21 ≤ victory 56 under the
    // seed's rule): its result time is the stamp plus the sealed delay.
    let attack = g.step(13).await;
    assert_eq!(attack["stamp"], "2026-03-02T09:51:45.250Z");
    let battle = check_from_public_data(&attack, &commitment, 1, 1);
    assert_eq!(battle["data"]["sealed_delay"]["secret"], s_1.as_str());
    let sd = &battle["data"]["sealed_delay"];
    let delay = sd["delay_ms"].as_u64().unwrap();
    let result = battle["data"]["numbers"]["result"].as_u64().unwrap();
    assert!(battle["headline"].as_str().unwrap().contains(&format!("sealed delay {delay} ms")), "{battle}");

    // The forum text shows stamp, delay, result time and result number, and a check line with
    // each step.
    let markdown = battle["text"]["markdown"].as_str().unwrap();
    assert!(
        markdown.contains(&format!(
            "Stamp 2026-03-02T09:51:45.250Z + sealed delay {delay} ms = result time {}",
            sd["result_time"].as_str().unwrap()
        )),
        "{markdown}"
    );
    assert!(markdown.contains(&format!("result number {result}")), "{markdown}");
    assert!(
        markdown.contains(&format!("SHA-256(secret 1 {s_1}) = {commitment}"))
            && markdown.contains(sd["digest"].as_str().unwrap().get(..16).unwrap()),
        "{markdown}"
    );
    assert!(markdown.contains(&commitment), "{markdown}");

    // The post's audit shows each step and its commands; the campaign audit follows the chain.
    let audit = g.app.get(&format!("/v1/campaigns/{}/posts/14/audit", g.campaign)).await;
    let audit = audit.ok(200);
    assert_eq!(audit["ok"], true, "{audit}");
    assert_eq!(audit["sealed_delay"]["links_to_published"], true);
    assert_eq!(audit["sealed_delay"]["result_time_numbers"]["result_number"]["result"], result);
    let commands = audit["sealed_delay"]["commands"].as_array().unwrap();
    assert_eq!(commands[0], format!("printf '%s' {s_1} | sha256sum   # {commitment}"));
    assert!(commands[1]
        .as_str()
        .unwrap()
        .starts_with(&format!("printf '%s%s' {s_1} {} | sha256sum", attack["hash"].as_str().unwrap())));
    let steps = audit["steps"].to_string();
    assert!(steps.contains(&format!("a delay of {delay} ms")), "{steps}");
    // (Who won depends on the secret drawn, so the script's casualty and retreat posts do not
    // follow here.)
    let campaign_audit = g.app.get(&format!("/v1/campaigns/{}/audit?fresh=true", g.campaign)).await;
    assert_eq!(campaign_audit.ok(200)["ok"], true, "{}", campaign_audit.text);

    // The calculator redoes it from the public numbers.
    let stamp_ms = "2026-03-02T09:51:45.250Z".parse::<DateTime<Utc>>().unwrap().timestamp_millis();
    let calc = g
        .app
        .get(&format!(
            "/v1/tools/sealed-delay?secret={s_1}&post_hash={}&stamp_ms={stamp_ms}",
            attack["hash"].as_str().unwrap()
        ))
        .await;
    let calc = calc.ok(200);
    assert_eq!(calc["delay_ms"], delay);
    assert_eq!(calc["result_number"]["result"], result);
    assert_eq!(calc["previous"], commitment);
    let bad = g.app.get(&format!("/v1/tools/sealed-delay?secret=XYZ&post_hash={s_1}&stamp_ms=0")).await;
    bad.problem(400, "query.secret");

    // The campaign page and the fairness report say which rule the campaign plays.
    let page = g.app.get(&format!("/campaigns/{}", g.campaign)).await;
    assert!(page.text.contains(&commitment), "the page shows s_0");
    assert!(page.text.contains(&format!("+ sealed delay {delay} ms = result time")), "{}", page.text);
    assert!(page.text.contains("the stamp's own number (the battle's, after the sealed delay, is below)"));
    let report = g.app.get(&format!("/v1/campaigns/{}/fairness", g.campaign)).await;
    assert_eq!(report.ok(200)["result_time"], "sealed_delay");

    // A stored secret changed after the fact no longer leads to s_0, and the audit says so.
    let unguard = match backend {
        Backend::Sqlite => "DROP TRIGGER outcomes_append_only_update;",
        Backend::Postgres => "ALTER TABLE outcomes DISABLE TRIGGER outcomes_append_only;",
    };
    let forged = walk_down(&s_1, 1);
    g.app
        .db
        .execute(&format!(
            "{unguard} UPDATE outcomes SET data = REPLACE(data, '{s_1}', '{forged}') WHERE kind = 'battle';"
        ))
        .await;
    let audit = g.app.get(&format!("/v1/campaigns/{}/audit?fresh=true", g.campaign)).await;
    let audit = audit.ok(200);
    assert_eq!(audit["ok"], false);
    let checks: Vec<(i64, &str)> = audit["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["seq"].as_i64().unwrap(), d["check"].as_str().unwrap()))
        .collect();
    assert!(checks.contains(&(14, "sealed_delay")), "{audit}");
    let post_audit = g.app.get(&format!("/v1/campaigns/{}/posts/14/audit", g.campaign)).await;
    assert_eq!(post_audit.ok(200)["sealed_delay"]["links_to_published"], false);
}

async fn refusals(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let create =
        |body: Value| app.request(adjutant_e2e::reqwest::Method::POST, "/v1/campaigns", Some(&moderator), Some(body));
    // An unknown value is refused as the schema's enum says.
    let answer = create(json!({"name": "x", "settings": {"result_time": "later"}})).await;
    assert_eq!(answer.problem(422, "body.settings.result_time")["rule"], "request.json_schema");
    let answer = create(json!({"name": "x", "settings": {"result_time": "sealed_delay",
        "result_chain": {"commitment": "0".repeat(64), "length": 1}}}))
    .await;
    assert_eq!(answer.problem(422, "body.settings.result_chain")["rule"], "campaign.result_chain");
    let answer = create(json!({"name": "x", "ruleset": "acw-25mm", "settings": {"result_time": "sealed_delay"}})).await;
    assert_eq!(answer.problem(422, "body.settings.result_time")["rule"], "campaign.result_time");
    // Nothing was created.
    let list = app.get("/v1/campaigns").await;
    assert_eq!(list.ok(200)["campaigns"].as_array().unwrap().len(), 0);
    // The calculator gives docs/arithmetic.md's worked example.
    let calc = app
        .get(concat!(
            "/v1/tools/sealed-delay?secret=e8c593fec897dadd42cda9333d96875a75321fed36866dd66709c43c4b533333",
            "&post_hash=71dc53a1bdf01a12cf15e6b162acb1c332f08d6160a9ced4fdbd6b587ad758f3&stamp_ms=1772445105250"
        ))
        .await;
    let calc = calc.ok(200);
    assert_eq!(calc["previous"], "49b9fd1015b4991d4c7552e8ee2ae9ad36c6b3f999ee62ac65d475f691d9da36");
    assert_eq!(calc["first_8_bytes_decimal"], "13089497521390273060");
    assert_eq!(
        (calc["delay_ms"].clone(), calc["result_time"].clone()),
        (json!(13060), json!("2026-03-02T09:51:58.310Z"))
    );
    assert_eq!((calc["time_of_day"].clone(), calc["result_number"]["result"].clone()), (json!("9:51:58"), json!(14)));
    let bad = app.get("/v1/tools/sealed-delay?secret=00&post_hash=00&stamp_ms=0&clock=13h").await;
    bad.problem(400, "query.secret");
    // A default campaign plays the seed's rule, and says so.
    let id = app.campaign(&moderator, json!({"name": "Default"})).await;
    let view = app.get(&format!("/v1/campaigns/{id}")).await;
    assert_eq!(view.ok(200)["settings"]["result_time"], "post");
    assert!(view.body["settings"].get("result_chain").is_none());
}

async fn chain_extension(backend: Backend) {
    // Chains of two secrets: the second battle uses chain 0's last secret and publishes chain
    // 1's s_0, which the third battle's secret leads back to.
    let app = TestApp::spawn_with(backend, |c| c.sealed_delay_chain_length = 2).await;
    let g = game(app, json!({"result_time": "sealed_delay"})).await;
    let commitment = g.view().await["settings"]["result_chain"]["commitment"].as_str().unwrap().to_owned();
    for i in 0..13 {
        g.step(i).await;
    }
    let first = g.step(13).await;
    check_from_public_data(&first, &commitment, 1, 1);
    assert!(battle(&first)["data"]["sealed_delay"].get("next_commitment").is_none());
    // The moderator rolls the battle back and the Union attacks again, twice: a revealed secret
    // is never used again, so each attack is the next draw.
    let mut published = None;
    for (draw, seq) in [(2u64, 16), (3, 18)] {
        g.app.clock.advance(Duration::minutes(3));
        let rollback = g
            .app
            .post(
                &g.moderator,
                &g.campaign,
                json!({"kind": "rollback", "body": {"to_seq": 13, "reason": "attack again"}}),
            )
            .await;
        assert_eq!(rollback.status.as_u16(), 201, "{}", rollback.text);
        g.app.clock.advance(Duration::seconds(41));
        let step = &g.script[13];
        let again = g.app.post(&g.union, &g.campaign, json!({"kind": step["kind"], "body": step["body"]})).await;
        let again = again.ok(201);
        assert_eq!(again["seq"], seq);
        match draw {
            2 => {
                check_from_public_data(again, &commitment, 2, 2);
                let next = battle(again)["data"]["sealed_delay"]["next_commitment"].as_str().unwrap().to_owned();
                published = Some(next);
            }
            _ => {
                let next = published.clone().unwrap();
                check_from_public_data(again, &next, 3, 1);
                assert_eq!(battle(again)["data"]["sealed_delay"]["chain"], 1);
            }
        }
    }
    let audit = g.app.get(&format!("/v1/campaigns/{}/audit?fresh=true", g.campaign)).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
    for seq in [14, 16, 18] {
        let audit = g.app.get(&format!("/v1/campaigns/{}/posts/{seq}/audit", g.campaign)).await;
        assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
    }

    // Offline, from the export alone: every revealed secret leads back to its published chain,
    // each delay and result number is redone by the replay.
    use adjutant_server::verify::{verify, Options};
    let key = g.app.get("/v1/keys").await.ok(200)["keys"][0]["public_key"].as_str().unwrap().to_owned();
    let export = g.app.client.get(format!("{}/v1/campaigns/{}/export", g.app.base, g.campaign)).send().await.unwrap();
    let text = export.text().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("export.jsonl");
    std::fs::write(&file, &text).unwrap();
    let report = verify(&Options { file: file.clone(), keys: vec![key.clone()], forum_texts: None }).unwrap();
    assert!(report.ok(), "{}", report.text());
    assert!(report.result_numbers >= 3, "{}", report.text());
    // The first battle's revealed secret swapped for another in the file: found at its post.
    let secret = battle(&first)["data"]["sealed_delay"]["secret"].as_str().unwrap().to_owned();
    assert!(text.contains(&secret));
    let forged = dir.path().join("forged.jsonl");
    std::fs::write(&forged, text.replace(&secret, &sha256_hex("another secret"))).unwrap();
    let report = verify(&Options { file: forged, keys: vec![key], forum_texts: None }).unwrap();
    assert!(!report.ok());
    assert!(report.problems.iter().any(|p| p.seq == Some(14)), "{}", report.text());
    // A revealed secret placed absurdly far down its chain is refused without walking there.
    let far = dir.path().join("far.jsonl");
    assert!(text.contains("\\\"position\\\":1,"), "the first battle's secret is at position 1");
    std::fs::write(&far, text.replacen("\\\"position\\\":1,", "\\\"position\\\":9000000000000000000,", 1)).unwrap();
    let report = verify(&Options { file: far, keys: vec![], forum_texts: None }).unwrap();
    assert!(report.problems.iter().any(|p| p.detail.contains("position")), "{}", report.text());
}

async fn stored_before(backend: Backend) {
    // A campaign stored before result times were a setting has none in its settings (and, as
    // old, a chain that starts from the legacy genesis) …
    let g = game(TestApp::spawn(backend).await, json!({})).await;
    g.app
        .db
        .execute_on_campaigns(&format!(
            "UPDATE campaigns SET settings = REPLACE(settings, ',\"result_time\":\"post\"', ''), chain_genesis = 'legacy' WHERE id = '{}';",
            g.campaign
        ))
        .await;
    let store = g.app.db.store().await;
    let stored = store.campaign(g.campaign.parse().unwrap()).await.unwrap().unwrap();
    assert!(!stored.settings.contains("result_time"), "{}", stored.settings);
    let view = g.view().await;
    assert_eq!(view["settings"]["result_time"], "post");
    // … and plays the seed's rule as it did: the worked example's 21.
    for i in 0..13 {
        g.step(i).await;
    }
    let attack = g.step(13).await;
    let battle = battle(&attack);
    assert_eq!(battle["data"]["numbers"]["result"], 21);
    assert!(battle["data"].get("sealed_delay").is_none());
    let audit = g.app.get(&format!("/v1/campaigns/{}/audit?fresh=true", g.campaign)).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
    let report = g.app.get(&format!("/v1/campaigns/{}/fairness", g.campaign)).await;
    assert_eq!(report.ok(200)["result_time"], "post");
}
