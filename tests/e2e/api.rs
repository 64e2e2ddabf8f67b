//! The foundation's promises, over real HTTP, on SQLite and on PostgreSQL.

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{on_both_backends, seed_morning, Backend, Game, Table, TestApp};

on_both_backends! {
    the_stamp_comes_from_the_server => stamp_comes_from_the_server;
    a_replayed_idempotency_key_stores_nothing_new => replayed_key_stores_nothing;
    players_act_only_for_their_own_campaign_and_side => players_only_for_their_side;
    the_audit_catches_a_tampered_post => audit_catches_tampering;
    a_repeat_audit_replays_only_the_new_posts => repeat_audit_is_incremental;
    a_post_audit_goes_on_from_the_verified_prefix => post_audit_is_incremental;
    a_post_audit_walks_a_long_chain_page_by_page => long_walk_is_paged;
    a_request_past_the_time_limit_is_answered_503 => time_limit_is_a_problem;
    the_fairness_report_is_remembered_until_a_new_post => fairness_is_cached_by_head;
    bad_requests_get_problems_and_store_nothing => bad_requests_store_nothing;
    the_log_pages_in_order => log_pages_in_order;
    a_post_s_answer_carries_the_body_its_hash_covers => answer_body_is_the_hashed_text;
    tokens_are_issued_by_the_right_people => tokens_issued_by_the_right_people;
}

async fn game(backend: Backend) -> Game {
    Game::start(TestApp::spawn(backend).await, "Test campaign", json!({})).await
}

fn note(text: &str) -> Value {
    json!({"kind": "note", "body": {"text": text}})
}

/// A resolver table on `app` whose Union player has posted `notes` notes.
async fn table_of_notes(app: TestApp, name: &str, notes: usize) -> Table {
    let t = Table::open(app, name, "acw-25mm").await;
    for i in 0..notes {
        t.app.post(&t.union, &t.campaign, note(&format!("note {i}"))).await.ok(201);
    }
    t
}

async fn post_count(g: &Game) -> usize {
    g.app.get(&format!("/v1/campaigns/{}/posts", g.campaign)).await.ok(200)["posts"].as_array().unwrap().len()
}

async fn stamp_comes_from_the_server(backend: Backend) {
    let g = game(backend).await;
    // The client tries every way it has to set the time: a Date header and a stamp in the body.
    let answer = g
        .app
        .send(
            Method::POST,
            &format!("/v1/campaigns/{}/posts", g.campaign),
            Some(&g.union),
            Some(json!({"kind": "note", "body": {"stamp": "2001-01-01T00:00:00.000Z", "time": "0:00:01"}})),
            &[("Idempotency-Key", "k1"), ("Date", "Mon, 01 Jan 2001 00:00:01 GMT")],
        )
        .await;
    let post = answer.ok(201);
    assert_eq!(post["stamp"], "2026-11-21T09:51:45.123Z");
    assert_eq!(post["seq"], 1);
    assert_eq!(post["numbers"]["time_of_day"], "9:51:45");
    assert_eq!(post["numbers"]["result_number"]["n"], 95145);
    assert_eq!(post["numbers"]["result_number"]["sqrt"], "308.455831522115");
    assert_eq!(post["numbers"]["result_number"]["result"], 21);
    assert_eq!(post["numbers"]["milliseconds"], 123);
    assert_eq!(post["numbers"]["milliseconds_mod_6"], 3);

    // A later post gets the clock's later time, and a stamp field at the top level is refused
    // outright: there is no field for the time.
    g.app.clock.set(seed_morning() + chrono::Duration::seconds(10));
    let second = g.app.post(&g.union, &g.campaign, note("later")).await;
    assert_eq!(second.ok(201)["stamp"], "2026-11-21T09:51:55.123Z");
    let refused =
        g.app.post(&g.union, &g.campaign, json!({"kind": "note", "stamp": "2001-01-01T00:00:00Z", "body": {}})).await;
    refused.problem(422, "body.stamp");
    assert_eq!(post_count(&g).await, 2);

    // The stored post says the same.
    let stored = g.app.get(&format!("/v1/campaigns/{}/posts/1", g.campaign)).await;
    assert_eq!(stored.ok(200)["stamp"], "2026-11-21T09:51:45.123Z");
}

async fn replayed_key_stores_nothing(backend: Backend) {
    let g = game(backend).await;
    let first = g.app.post_with_key(&g.union, &g.campaign, "same-key", note("advance")).await;
    let first = first.ok(201).clone();

    g.app.clock.set(seed_morning() + chrono::Duration::seconds(5));
    let again = g.app.post_with_key(&g.union, &g.campaign, "same-key", note("advance")).await;
    assert_eq!(again.headers["idempotent-replayed"], "true");
    assert_eq!(again.ok(200), &first, "the replay answers exactly what was stored");

    let other = g.app.post_with_key(&g.union, &g.campaign, "same-key", note("retreat")).await;
    other.problem(422, "Idempotency-Key");

    let missing = g
        .app
        .send(Method::POST, &format!("/v1/campaigns/{}/posts", g.campaign), Some(&g.union), Some(note("x")), &[])
        .await;
    missing.problem(400, "Idempotency-Key");

    assert_eq!(post_count(&g).await, 1);
    assert_eq!(g.app.db.count("posts").await, 1);
    assert_eq!(g.app.db.count("idempotency_keys").await, 1);

    // The same key from another player is that player's own key.
    let theirs = g.app.post_with_key(&g.confederate, &g.campaign, "same-key", note("advance")).await;
    assert_eq!(theirs.ok(201)["seq"], 2);
    assert_eq!(theirs.body["void"], false, "a post stored now is the log's last: nothing voids it yet");

    // Rolled back since, the post a key names is answered as void when the key is sent again.
    let back = json!({"kind": "rollback", "body": {"to_seq": 0, "reason": "a fresh start"}});
    g.app.post(&g.moderator, &g.campaign, back).await.ok(201);
    let replayed = g.app.post_with_key(&g.union, &g.campaign, "same-key", note("advance")).await;
    assert_eq!(replayed.ok(200)["seq"], 1);
    assert_eq!(replayed.body["void"], true, "{}", replayed.text);
}

async fn players_only_for_their_side(backend: Backend) {
    let g = game(backend).await;
    let other_campaign =
        g.app.campaign(&g.moderator, json!({"name": "Another campaign", "scenario": "short-acw"})).await;

    let elsewhere = g.app.post(&g.union, &other_campaign, note("sneaky")).await;
    elsewhere.problem(403, "Authorization");

    let other_side =
        g.app.post(&g.union, &g.campaign, json!({"kind": "note", "side": "confederate", "body": {}})).await;
    other_side.problem(403, "Authorization");
    let other_side =
        g.app.post(&g.confederate, &g.campaign, json!({"kind": "note", "side": "union", "body": {}})).await;
    other_side.problem(403, "Authorization");

    let stranger = g.app.moderator().await;
    let moderator_post = g.app.post(&stranger, &g.campaign, note("not my campaign")).await;
    moderator_post.problem(403, "Authorization");
    let umpire_side = g.app.post(&g.moderator, &g.campaign, json!({"kind": "note", "side": "union", "body": {}})).await;
    umpire_side.problem(403, "Authorization");

    let own = g.app.post(&g.confederate, &g.campaign, json!({"kind": "note", "side": "rebel", "body": {}})).await;
    assert_eq!(own.ok(201)["side"], "confederate");

    assert_eq!(g.app.db.count("posts").await, 1);
}

async fn audit_catches_tampering(backend: Backend) {
    let g = game(backend).await;
    for i in 0..3 {
        g.app.clock.set(seed_morning() + chrono::Duration::milliseconds(i * 1001));
        g.app.post(&g.union, &g.campaign, note(&format!("order {i}"))).await.ok(201);
    }
    let clean = g.app.get(&format!("/v1/campaigns/{}/posts/3/audit", g.campaign)).await;
    let clean = clean.ok(200);
    assert_eq!(clean["ok"], true, "{clean}");
    assert_eq!(clean["chain"]["ok"], true);
    assert_eq!(clean["chain"]["stored_hash"], clean["chain"]["recomputed_hash"]);
    let first = g.app.get(&format!("/v1/campaigns/{}/posts/1/audit", g.campaign)).await;
    let first = first.ok(200);
    assert_eq!(first["numbers"]["result_number"]["result"], 21);
    assert_eq!(first["numbers"]["result_number"]["bc"], "echo 'scale=12; sqrt(95145)' | bc");
    assert!(first["steps"].as_array().unwrap().iter().any(|s| s.as_str().unwrap().contains("\"21\"")), "{first}");
    assert!(first["dice_stream"]["command"].as_str().unwrap().ends_with("/0' | sha256sum"));

    // The store refuses to rewrite a post...
    let refused = g.app.db.try_execute("UPDATE posts SET body = '{\"text\":\"forged\"}' WHERE seq = 2").await;
    assert!(refused.unwrap_err().contains("append-only"), "an UPDATE of a post must be refused by the schema");
    let refused = g.app.db.try_execute("DELETE FROM posts WHERE seq = 3").await;
    assert!(refused.unwrap_err().contains("append-only"), "a DELETE of a post must be refused by the schema");

    // ...so a tamperer has to remove the guard first. The audit still sees it.
    match backend {
        Backend::Sqlite => {
            g.app
                .db
                .execute(
                    "DROP TRIGGER posts_append_only_update;
                     UPDATE posts SET body = '{\"text\":\"forged\"}' WHERE seq = 2;",
                )
                .await
        }
        Backend::Postgres => {
            g.app
                .db
                .execute(
                    "ALTER TABLE posts DISABLE TRIGGER posts_append_only;
                     UPDATE posts SET body = '{\"text\":\"forged\"}' WHERE seq = 2;",
                )
                .await
        }
    }
    let audit = g.app.get(&format!("/v1/campaigns/{}/posts/3/audit", g.campaign)).await;
    let audit = audit.ok(200);
    assert_eq!(audit["ok"], false);
    assert_eq!(audit["chain"]["ok"], false);
    let problems = audit["problems"].as_array().unwrap();
    assert!(problems.iter().any(|p| p.as_str().unwrap().starts_with("post 2: stored hash")), "{audit}");
    // Post 1 is still fine on its own.
    let audit_1 = g.app.get(&format!("/v1/campaigns/{}/posts/1/audit", g.campaign)).await;
    assert_eq!(audit_1.ok(200)["ok"], true);
}

async fn bad_requests_store_nothing(backend: Backend) {
    let g = game(backend).await;
    let path = format!("/v1/campaigns/{}/posts", g.campaign);
    let raw = |body: &'static str, content_type: &'static str| {
        let app = &g.app;
        let path = path.clone();
        let token = g.union.clone();
        async move {
            let response = app
                .client
                .post(format!("{}{path}", app.base))
                .bearer_auth(token)
                .header("Idempotency-Key", uuid_key())
                .header("Content-Type", content_type)
                .body(body)
                .send()
                .await
                .unwrap();
            adjutant_e2e::read(response).await
        }
    };
    raw("{\"kind\": \"note\", \"body\": ", "application/json").await.problem(400, "body");
    raw("{\"kind\": \"note\"}", "text/plain").await.problem(415, "Content-Type");
    raw("{\"kind\": \"note\", \"colour\": \"blue\"}", "application/json").await.problem(422, "body.colour");
    raw("{\"kind\": 7}", "application/json").await.problem(422, "body.kind");
    raw("{\"kind\": \"Not A Kind!\"}", "application/json").await.problem(422, "body.kind");
    raw("{\"kind\": \"note\", \"body\": [1]}", "application/json").await.problem(422, "body.body");

    let huge = format!("{{\"kind\": \"note\", \"body\": {{\"text\": \"{}\"}}}}", "x".repeat(70_000));
    let response = g
        .app
        .client
        .post(format!("{}{path}", g.app.base))
        .bearer_auth(&g.union)
        .header("Idempotency-Key", uuid_key())
        .header("Content-Type", "application/json")
        .body(huge)
        .send()
        .await
        .unwrap();
    adjutant_e2e::read(response).await.problem(413, "body");

    let anonymous = g.app.send(Method::POST, &path, None, Some(note("who am I")), &[("Idempotency-Key", "anon")]).await;
    anonymous.problem(401, "Authorization");
    let unknown = g.app.post("adj_0000", &g.campaign, note("forged token")).await;
    unknown.problem(401, "Authorization");
    let malformed = g
        .app
        .send(Method::POST, &path, None, Some(note("x")), &[("Idempotency-Key", "m"), ("Authorization", "Basic abc")])
        .await;
    malformed.problem(401, "Authorization");

    let nowhere = g.app.post(&g.union, "not-a-uuid", note("x")).await;
    nowhere.problem(404, "path.id");
    let missing = g.app.post(&g.union, &uuid_key(), note("x")).await;
    missing.problem(404, "path.id");

    assert_eq!(g.app.db.count("posts").await, 0);
    assert_eq!(g.app.db.count("idempotency_keys").await, 0);
}

fn uuid_key() -> String {
    format!("{:032x}", rand_u128())
}

fn rand_u128() -> u128 {
    use std::time::{SystemTime, UNIX_EPOCH};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() ^ (u128::from(n) << 64)
}

async fn log_pages_in_order(backend: Backend) {
    let g = game(backend).await;
    for i in 0..7 {
        g.app.clock.advance(chrono::Duration::milliseconds(250));
        g.app
            .post(if i % 2 == 0 { &g.union } else { &g.confederate }, &g.campaign, note(&format!("{i}")))
            .await
            .ok(201);
    }
    let page = g.app.get(&format!("/v1/campaigns/{}/posts?limit=3", g.campaign)).await;
    let page = page.ok(200);
    let seqs: Vec<i64> = page["posts"].as_array().unwrap().iter().map(|p| p["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, vec![1, 2, 3]);
    assert_eq!(page["next_after"], 3);
    let rest = g.app.get(&format!("/v1/campaigns/{}/posts?after=3&limit=10", g.campaign)).await;
    let rest = rest.ok(200);
    let posts = rest["posts"].as_array().unwrap();
    assert_eq!(posts.len(), 4);
    assert_eq!(rest["next_after"], Value::Null);
    for pair in posts.windows(2) {
        assert_eq!(pair[1]["prev_hash"], pair[0]["hash"]);
        assert!(pair[1]["stamp"].as_str() > pair[0]["stamp"].as_str());
    }
    g.app.get(&format!("/v1/campaigns/{}/posts?limit=0", g.campaign)).await.problem(400, "query.limit");
    g.app.get(&format!("/v1/campaigns/{}/posts?after=x", g.campaign)).await.problem(400, "query.after");
}

async fn tokens_issued_by_the_right_people(backend: Backend) {
    let g = game(backend).await;
    let app = &g.app;
    app.request(Method::POST, "/v1/moderators", Some(&g.moderator), Some(json!({"name": "x"})))
        .await
        .problem(403, "Authorization");
    app.request(Method::POST, "/v1/moderators", None, Some(json!({"name": "x"}))).await.problem(401, "Authorization");
    // A name is 1 to 80 characters, no control characters, no bidirectional control or
    // zero-width character, no space at either end: what the schema's pattern says, the server
    // refuses, and the reverse.
    let long = "x".repeat(81);
    for name in [
        "",
        " Mac",
        "Mac ",
        "Mac\nStaff",
        "tab\there",
        "\u{85}next",
        long.as_str(),
        "Grant\u{202E}tnarG",
        "Gr\u{200B}ant",
    ] {
        app.request(Method::POST, "/v1/moderators", Some(&app.admin_token), Some(json!({"name": name})))
            .await
            .problem(422, "body.name");
    }
    let longest = "x".repeat(80);
    for name in ["M", "Col. Hawkins", "Jeb \u{a0}Stuart", "ü", longest.as_str()] {
        let made =
            app.request(Method::POST, "/v1/moderators", Some(&app.admin_token), Some(json!({"name": name}))).await;
        assert_eq!(made.ok(201)["name"], name);
    }

    let other_moderator = app.moderator().await;
    app.request(
        Method::POST,
        &format!("/v1/campaigns/{}/players", g.campaign),
        Some(&other_moderator),
        Some(json!({"name": "p", "side": "union"})),
    )
    .await
    .problem(403, "Authorization");
    app.request(
        Method::POST,
        &format!("/v1/campaigns/{}/players", g.campaign),
        Some(&g.moderator),
        Some(json!({"name": "p", "side": "prussia"})),
    )
    .await
    .problem(422, "body.side");
    app.request(Method::POST, "/v1/campaigns", Some(&g.union), Some(json!({"name": "mine"})))
        .await
        .problem(403, "Authorization");
    app.request(
        Method::POST,
        "/v1/campaigns",
        Some(&g.moderator),
        Some(json!({"name": "zoned", "settings": {"time_zone": "Mars/Olympus"}})),
    )
    .await
    .problem(422, "body.settings.time_zone");

    let bot = app
        .request(
            Method::POST,
            &format!("/v1/campaigns/{}/bots", g.campaign),
            Some(&g.moderator),
            Some(json!({"name": "b"})),
        )
        .await;
    let bot = bot.ok(201);
    assert!(bot["token"].as_str().unwrap().starts_with("adj_"));
    assert_eq!(bot["token"].as_str().unwrap().len(), 4 + 64);
    // Tokens are stored only as hashes.
    assert_eq!(app.db.count("principals").await, 10);
    let campaign = app.get(&format!("/v1/campaigns/{}", g.campaign)).await;
    assert_eq!(campaign.ok(200)["settings"]["first_digit"], 9);
    let list = app.get("/v1/campaigns").await;
    assert_eq!(list.ok(200)["campaigns"].as_array().unwrap().len(), 1);

    // Each moderator finds their own campaigns (the console's list) by the id whoami gives.
    let theirs = app.campaign(&other_moderator, json!({"name": "Theirs", "scenario": "short-acw"})).await;
    let ids = |answer: &Value| -> Vec<String> {
        answer["campaigns"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_owned()).collect()
    };
    for (token, campaign) in [(&g.moderator, &g.campaign), (&other_moderator, &theirs)] {
        let me = app.request(Method::GET, "/v1/whoami", Some(token), None).await;
        let me = me.ok(200)["id"].as_str().unwrap().to_owned();
        let mine = app.get(&format!("/v1/campaigns?moderator={me}")).await;
        let mine = mine.ok(200);
        assert_eq!(ids(mine), std::slice::from_ref(campaign));
        assert_eq!(mine["campaigns"][0]["moderator_id"], me.as_str());
    }
    assert_eq!(ids(app.get("/v1/campaigns").await.ok(200)).len(), 2);
    let player = app.request(Method::GET, "/v1/whoami", Some(&g.union), None).await;
    assert!(ids(app.get(&format!("/v1/campaigns?moderator={}", player.ok(200)["id"].as_str().unwrap())).await.ok(200))
        .is_empty());
    let operator = app.request(Method::GET, "/v1/whoami", Some(&app.admin_token), None).await;
    assert_eq!(operator.ok(200)["id"], Value::Null);
    app.get("/v1/campaigns?moderator=nobody").await.problem(400, "query.moderator");
}

/// Rewrites a stored post's body behind the schema's back.
async fn tamper(app: &TestApp, backend: Backend, seq: i64) {
    let update = format!("UPDATE posts SET body = '{{\"text\":\"forged\"}}' WHERE seq = {seq};");
    match backend {
        Backend::Sqlite => {
            app.db.execute(&format!("DROP TRIGGER IF EXISTS posts_append_only_update; {update}")).await;
        }
        Backend::Postgres => {
            app.db.execute(&format!("ALTER TABLE posts DISABLE TRIGGER posts_append_only; {update}")).await;
        }
    }
}

async fn repeat_audit_is_incremental(backend: Backend) {
    let Table { app, campaign, union: player, .. } = table_of_notes(TestApp::spawn(backend).await, "Audit", 20).await;
    let audit = |fresh: bool| {
        let path = format!("/v1/campaigns/{campaign}/audit{}", if fresh { "?fresh=true" } else { "" });
        let app = &app;
        async move { app.get(&path).await.ok(200).clone() }
    };
    // Two cold audits at once: one replays the log, the other waits for it and goes on from
    // the prefix it verified.
    let held = app.state.caches.cold_audit_turn().await;
    let both = tokio::spawn({
        let (client, path) = (app.client.clone(), format!("{}/v1/campaigns/{campaign}/audit", app.base));
        async move {
            let one = || async { client.get(&path).send().await.expect("audit").json::<Value>().await.expect("JSON") };
            tokio::join!(one(), one())
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    drop(held);
    let (first, second) = both.await.expect("audits");
    let mut replayed = [first["replayed_now"].as_i64(), second["replayed_now"].as_i64()];
    replayed.sort();
    assert_eq!(replayed, [Some(0), Some(20)], "{first} {second}");
    assert_eq!((first["ok"].as_bool(), second["ok"].as_bool()), (Some(true), Some(true)));
    let cold = audit(true).await;
    assert_eq!(
        (cold["ok"].as_bool(), cold["posts"].as_i64(), cold["replayed_now"].as_i64()),
        (Some(true), Some(20), Some(20))
    );
    let again = audit(false).await;
    assert_eq!(
        (again["ok"].as_bool(), again["posts"].as_i64(), again["replayed_now"].as_i64()),
        (Some(true), Some(20), Some(0))
    );
    assert_eq!(again["head_hash"], cold["head_hash"]);

    // One new post: only it is replayed.
    app.post(&player, &campaign, note("one more")).await.ok(201);
    let one = audit(false).await;
    assert_eq!(
        (one["ok"].as_bool(), one["posts"].as_i64(), one["replayed_now"].as_i64()),
        (Some(true), Some(21), Some(1))
    );

    // A new post tampered with before its first audit is caught by the repeat audit.
    app.post(&player, &campaign, note("honest")).await.ok(201);
    tamper(&app, backend, 22).await;
    let caught = audit(false).await;
    assert_eq!(caught["replayed_now"], 1);
    assert_eq!(caught["ok"], false, "{caught}");
    assert!(
        caught["differences"].as_array().unwrap().iter().any(|d| d["seq"] == 22 && d["check"] == "chain"),
        "{caught}"
    );

    // The prefix verified before is trusted by the repeat audit; a fresh one replays it all.
    tamper(&app, backend, 3).await;
    let fresh = audit(true).await;
    assert_eq!(fresh["replayed_now"], 22);
    assert!(fresh["differences"].as_array().unwrap().iter().any(|d| d["seq"] == 3), "{fresh}");
}

async fn post_audit_is_incremental(backend: Backend) {
    let Table { app, campaign, .. } = table_of_notes(TestApp::spawn(backend).await, "Audit", 30).await;
    let audit = |seq: i64, fresh: bool| {
        let path = format!("/v1/campaigns/{campaign}/posts/{seq}/audit{}", if fresh { "?fresh=true" } else { "" });
        let app = &app;
        async move { app.get(&path).await.ok(200).clone() }
    };
    let checked = |a: &Value| (a["ok"].as_bool(), a["chain"]["checked_now"].as_i64());

    // Cold: the chain is walked from post 1.
    assert_eq!(checked(&audit(20, false).await), (Some(true), Some(20)));
    // Again: only the post and the one before it.
    assert_eq!(checked(&audit(20, false).await), (Some(true), Some(2)));
    assert_eq!(checked(&audit(7, false).await), (Some(true), Some(2)));
    assert_eq!(checked(&audit(1, false).await), (Some(true), Some(1)));
    // Further on: only the posts after the verified prefix.
    assert_eq!(checked(&audit(25, false).await), (Some(true), Some(5)));

    // The whole-campaign audit's prefix counts too.
    app.get(&format!("/v1/campaigns/{campaign}/audit")).await.ok(200);
    assert_eq!(checked(&audit(30, false).await), (Some(true), Some(2)));
    // `?fresh=true` walks it all.
    assert_eq!(checked(&audit(30, true).await), (Some(true), Some(30)));

    // The post before is read again, so a change to it is caught without a fresh walk.
    tamper(&app, backend, 29).await;
    let caught = audit(30, false).await;
    assert_eq!(checked(&caught), (Some(false), Some(2)), "{caught}");
    assert!(
        caught["problems"].as_array().unwrap().iter().any(|p| p.as_str().unwrap().starts_with("post 29: stored hash")),
        "{caught}"
    );
    // A change deep in the verified prefix is trusted away until a fresh walk.
    tamper(&app, backend, 5).await;
    assert_eq!(checked(&audit(10, false).await), (Some(true), Some(2)));
    let fresh = audit(10, true).await;
    assert_eq!(checked(&fresh), (Some(false), Some(10)), "{fresh}");
    assert!(
        fresh["problems"].as_array().unwrap().iter().any(|p| p.as_str().unwrap().starts_with("post 5: stored hash")),
        "{fresh}"
    );
}

/// A walk from post 1 reads the log a page at a time (the first page 64 posts) and checks each
/// page's receipts together: a changed post and a receipt moved onto another post are named,
/// wherever they are in the walk.
async fn long_walk_is_paged(backend: Backend) {
    let Table { app, campaign, .. } = table_of_notes(TestApp::spawn(backend).await, "Walk", 150).await;
    let audit = |seq: i64| {
        let path = format!("/v1/campaigns/{campaign}/posts/{seq}/audit?fresh=true");
        let app = &app;
        async move { app.get(&path).await.ok(200).clone() }
    };
    let whole = audit(150).await;
    assert_eq!((whole["ok"].as_bool(), whole["chain"]["checked_now"].as_i64()), (Some(true), Some(150)), "{whole}");
    // The walk stops at the post audited, within a page.
    let part = audit(100).await;
    assert_eq!((part["ok"].as_bool(), part["chain"]["checked_now"].as_i64()), (Some(true), Some(100)), "{part}");

    tamper(&app, backend, 70).await;
    let receipt =
        "UPDATE posts SET receipt_signature = (SELECT receipt_signature FROM posts WHERE seq = 121) WHERE seq = 120;";
    match backend {
        Backend::Sqlite => app.db.execute(receipt).await,
        Backend::Postgres => {
            app.db.execute(&format!("ALTER TABLE posts DISABLE TRIGGER posts_append_only; {receipt}")).await
        }
    }
    let caught = audit(150).await;
    assert_eq!(caught["ok"], false, "{caught}");
    let problems: Vec<&str> = caught["problems"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(problems.iter().any(|p| p.starts_with("post 70: stored hash")), "{caught}");
    assert!(problems.iter().any(|p| p.starts_with("post 120: its receipt's signature does not match")), "{caught}");
    assert!(!problems.iter().any(|p| p.starts_with("post 121:")), "{caught}");
}

/// A request that runs past `request_timeout_secs` is stopped and answered 503, naming the time
/// limit: here a cold audit waiting for the permit another cold audit holds.
async fn time_limit_is_a_problem(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| config.request_timeout_secs = 1).await;
    let Table { app, campaign, .. } = table_of_notes(app, "Slow", 1).await;
    let path = format!("/v1/campaigns/{campaign}/audit");

    let held = app.state.caches.cold_audit_turn().await;
    let started = std::time::Instant::now();
    let stopped = app.get(&path).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(stopped.status.as_u16(), 503, "{}", stopped.text);
    assert_eq!(stopped.content_type, "application/problem+json", "{}", stopped.text);
    assert_eq!(stopped.body["rule"], "request.time_limit", "{}", stopped.text);
    let detail = stopped.body["detail"].as_str().unwrap();
    assert!(detail.contains("time limit of 1 s") && !detail.contains("Idempotency-Key"), "{}", stopped.text);
    drop(held);
    let audit = app.get(&path).await.ok(200).clone();
    assert_eq!((audit["ok"].as_bool(), audit["posts"].as_i64()), (Some(true), Some(1)), "{audit}");
}

/// The report is computed once per head: a change behind the log's back (a stored stamp moved by
/// a millisecond, which no new post reports) shows only when a new post moves the head.
async fn fairness_is_cached_by_head(backend: Backend) {
    let g = game(backend).await;
    for i in 0..5 {
        g.app.clock.set(seed_morning() + chrono::Duration::milliseconds(i * 1002));
        g.app.post(&g.union, &g.campaign, note(&format!("order {i}"))).await.ok(201);
    }
    let path = format!("/v1/campaigns/{}/fairness", g.campaign);
    let first = g.app.get(&path).await.ok(200).clone();
    let by_mod_6 = |report: &Value| report["post_timing"]["by_millisecond_mod_6"]["counts"].clone();
    // The counts the stored stamps give now.
    let stored_counts = || async {
        let posts = g.app.get(&format!("/v1/campaigns/{}/posts", g.campaign)).await.ok(200).clone();
        let mut counts = vec![0u64; 6];
        for post in posts["posts"].as_array().unwrap() {
            let stamp = chrono::DateTime::parse_from_rfc3339(post["stamp"].as_str().unwrap()).unwrap();
            counts[(stamp.timestamp_subsec_millis() % 6) as usize] += 1;
        }
        json!(counts)
    };
    assert_eq!(by_mod_6(&first), stored_counts().await, "{first}");

    let update = match backend {
        Backend::Sqlite => "DROP TRIGGER IF EXISTS posts_append_only_update; \
                            UPDATE posts SET stamp_ms = stamp_ms + 1 WHERE seq = 1;"
            .to_owned(),
        Backend::Postgres => "ALTER TABLE posts DISABLE TRIGGER posts_append_only; \
                              UPDATE posts SET stamp = stamp + interval '1 millisecond' WHERE seq = 1;"
            .to_owned(),
    };
    g.app.db.execute(&update).await;
    let moved = stored_counts().await;
    assert_ne!(moved, by_mod_6(&first), "the stored stamps changed");
    let again = g.app.get(&path).await.ok(200).clone();
    assert_eq!(again, first, "no new post: the report remembered is served");

    g.app.clock.set(seed_morning() + chrono::Duration::milliseconds(5 * 1002));
    g.app.post(&g.union, &g.campaign, note("one more")).await.ok(201);
    let after = g.app.get(&path).await.ok(200).clone();
    assert_eq!(by_mod_6(&after), stored_counts().await, "{after}");
    assert_eq!(after["post_timing"]["posts"], 6);
}

/// A post's answer carries its body as stored, the text its hash covers, byte for byte, so anyone
/// can recompute the hash from the answer alone: in the answer to the post, in the post read
/// back and in the log's page. The numbers are ones that serde_json, as built here, does not read
/// back to the same number: an answer that read the stored body and wrote it again would carry
/// other digits than the ones hashed.
async fn answer_body_is_the_hashed_text(backend: Backend) {
    use adjutant_e2e::serde_json::value::RawValue;
    use std::collections::BTreeMap;

    let g = game(backend).await;
    let sent = r#"{"kind":"note","body":{"text":"bearing","x":9394.357858122122,"y":39402636e23,"z":[0.1,1e-7]}}"#;
    let created = g
        .app
        .client
        .post(format!("{}/v1/campaigns/{}/posts", g.app.base, g.campaign))
        .bearer_auth(&g.union)
        .header("Idempotency-Key", "raw-numbers")
        .header("Content-Type", "application/json")
        .body(sent)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status().as_u16(), 201);
    let created = created.text().await.unwrap();
    let read_back = g.app.get(&format!("/v1/campaigns/{}/posts/1", g.campaign)).await;
    let page = g.app.get(&format!("/v1/campaigns/{}/posts", g.campaign)).await;
    let page: BTreeMap<String, &RawValue> = adjutant_e2e::serde_json::from_str(&page.text).unwrap();
    let listed: Vec<&RawValue> = adjutant_e2e::serde_json::from_str(page["posts"].get()).unwrap();
    assert_eq!(listed.len(), 1);
    for answer in [created.as_str(), read_back.text.as_str(), listed[0].get()] {
        let post: BTreeMap<String, &RawValue> = adjutant_e2e::serde_json::from_str(answer).unwrap();
        let text = |field: &str| adjutant_e2e::serde_json::from_str::<String>(post[field].get()).unwrap();
        let stamp = chrono::DateTime::parse_from_rfc3339(&text("stamp")).unwrap().with_timezone(&chrono::Utc);
        let side = text("side");
        let link = adjutant_rules::chain::Link {
            prev_hash: &text("prev_hash"),
            campaign_id: &text("campaign_id"),
            seq: post["seq"].get().parse().unwrap(),
            stamp,
            author_id: &text("author_id"),
            side: Some(&side),
            kind: &text("kind"),
            body: post["body"].get(),
        };
        assert_eq!(link.hash(), text("hash"), "the body served: {}", post["body"].get());
    }
}
