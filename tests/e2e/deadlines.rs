//! The campaign clock over HTTP, on SQLite and PostgreSQL: deadlines that end an absent side's
//! turns by the server's own posts, the moderator's policy, pause, resume and extend, and two
//! servers on one database making each deadline post once.

use std::time::Duration;

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{on_both_backends, scripted, Backend, Game, TestApp};
use chrono::{DateTime, TimeDelta, Utc};

on_both_backends! {
    an_absent_rebel_loses_every_turn_to_the_deadline_and_the_campaign_reaches_its_end => absent_rebel;
    under_the_moderator_policy_a_deadline_decides_nothing_and_the_moderator_carries_on => moderator_policy;
    a_pause_holds_the_clock_and_an_extension_moves_it => pause_and_extend;
    a_deadline_that_passed_while_the_server_was_down_is_applied_at_the_restart => restart;
    a_replaced_player_hands_the_side_over_and_the_log_names_who_played_each_post => replace_player;
    the_clock_posts_a_reminder_before_the_deadline_once => reminder;
    deadline_settings_are_checked_and_a_time_of_day_deadline_falls_at_that_time => settings;
}

/// The server looks at its clock every 10 ms in these tests.
fn quick(config: &mut adjutant_server::config::Config) {
    config.deadline_poll_ms = 10;
    config.deadline_rescan_ms = 10;
}

async fn game(backend: Backend, settings: Value) -> Game {
    Game::start(TestApp::spawn_with(backend, quick).await, "By the clock", settings).await
}

fn at(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

/// What these tests do to a game and read of it, by the clock.
trait ByTheClock {
    async fn deploy(&self, start: DateTime<Utc>);
    async fn state_and_clock(&self) -> Value;
    async fn head(&self) -> i64;
    async fn await_post(&self, seq: i64) -> Value;
    async fn wait_of(&self, side: &str) -> Value;
}

impl ByTheClock for Game {
    /// Both sides deploy as the scripted campaign does, half an hour apart from `start`.
    async fn deploy(&self, start: DateTime<Utc>) {
        self.app.clock.set(start);
        self.app.post(&self.union, &self.campaign, scripted(0)).await.ok(201);
        self.app.clock.set(start + TimeDelta::minutes(30));
        self.app.post(&self.confederate, &self.campaign, scripted(1)).await.ok(201);
    }

    /// The state answer: the game, its clock and what each side may post.
    async fn state_and_clock(&self) -> Value {
        self.app.get(&format!("/v1/campaigns/{}/state", self.campaign)).await.ok(200).clone()
    }

    async fn head(&self) -> i64 {
        let mut after = 0;
        loop {
            let page = self.app.get(&format!("/v1/campaigns/{}/posts?after={after}&limit=100", self.campaign)).await;
            let page = page.ok(200).clone();
            let posts = page["posts"].as_array().unwrap();
            if let Some(last) = posts.last() {
                after = last["seq"].as_i64().unwrap();
            }
            if page["next_after"].is_null() {
                return after;
            }
        }
    }

    /// Waits (real time) until the log holds post `seq`, and returns it.
    async fn await_post(&self, seq: i64) -> Value {
        for _ in 0..1000 {
            let answer = self.app.get(&format!("/v1/campaigns/{}/posts/{seq}", self.campaign)).await;
            if answer.status.as_u16() == 200 {
                return answer.body;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("post {seq} was never made; the state: {}", self.state_and_clock().await);
    }

    /// The running wait of `side`.
    async fn wait_of(&self, side: &str) -> Value {
        let state = self.state_and_clock().await;
        state["clock"]["waits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["side"] == side && w["due"].is_string())
            .cloned()
            .unwrap_or_else(|| panic!("no running wait of the {side}: {state}"))
    }
}

async fn absent_rebel(backend: Backend) {
    let g = game(backend, json!({"turn_deadline": "PT1H"})).await;
    let start = adjutant_e2e::seed_morning();
    // Both deployments are waited for from the campaign's creation.
    let view = g.app.get(&format!("/v1/campaigns/{}", g.campaign)).await;
    let view = view.ok(200);
    assert_eq!(view["clock"]["status"], "waiting", "{view}");
    assert_eq!(view["clock"]["waits"].as_array().unwrap().len(), 2, "{view}");
    assert_eq!(view["clock"]["waits"][0]["due"], "2026-11-21T10:51:45.123Z", "{view}");
    g.deploy(start).await;

    let mut deadlines = 0;
    loop {
        let state = g.state_and_clock().await;
        if !state["state"]["result"].is_null() {
            break;
        }
        assert_eq!(state["state"]["side_to_act"], "union", "{state}");
        let turn = state["state"]["turn"].as_u64().unwrap();
        // The Union's turn began when the Rebel's ended; its deadline is an hour after that.
        let union_wait = g.wait_of("union").await;
        assert_eq!(union_wait["stage"], format!("turn {turn}"));
        assert_eq!(
            at(union_wait["due"].as_str().unwrap()) - at(union_wait["since"].as_str().unwrap()),
            TimeDelta::hours(1)
        );
        // The Union ends its turn ten minutes in.
        let ends = at(union_wait["since"].as_str().unwrap()) + TimeDelta::minutes(10);
        g.app.clock.set(ends);
        let ended = g.app.post(&g.union, &g.campaign, json!({"kind": "end_turn", "body": {}})).await;
        let ended = ended.ok(201).clone();
        let kinds: Vec<&str> =
            ended["outcomes"].as_array().unwrap().iter().map(|o| o["kind"].as_str().unwrap()).collect();
        assert!(kinds.contains(&"turn_begins"), "{ended}");
        let begins = ended["outcomes"].as_array().unwrap().iter().find(|o| o["kind"] == "turn_begins").unwrap();
        // The forum text of the turn's start names its deadline.
        assert!(begins["headline"].as_str().unwrap().contains("the turn ends by"), "{begins}");
        assert!(begins["text"]["markdown"].as_str().unwrap().contains("The turn ends by"), "{begins}");

        // The Rebel never posts: an hour later the server ends its turn, stamped at the deadline.
        let rebel = g.wait_of("confederate").await;
        let due = at(rebel["due"].as_str().unwrap());
        assert_eq!(due, ends + TimeDelta::hours(1));
        let seq = ended["seq"].as_i64().unwrap() + 1;
        g.app.clock.set(due - TimeDelta::milliseconds(1));
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert_eq!(g.head().await, seq - 1, "a deadline post before the deadline");
        g.app.clock.set(due);
        let post = g.await_post(seq).await;
        assert_eq!(post["kind"], "deadline", "{post}");
        assert_eq!(post["side"], Value::Null, "{post}");
        assert_eq!(at(post["stamp"].as_str().unwrap()), due, "{post}");
        assert_eq!(post["body"], json!({"side": "confederate", "stage": format!("turn {turn}")}), "{post}");
        let outcome = &post["outcomes"][0];
        assert_eq!(outcome["kind"], "deadline", "{post}");
        assert_eq!(outcome["data"]["since"], rebel["since"], "{post}");
        assert_eq!(outcome["data"]["turn_deadline_ms"], 3_600_000, "{post}");
        assert!(post["outcomes"].as_array().unwrap().iter().any(|o| o["kind"] == "turn_ended"), "{post}");
        deadlines += 1;
        assert!(deadlines <= 12, "more Rebel turns than the scenario has");
    }
    assert_eq!(deadlines, 12, "the Rebel's twelve turns each end at their deadline");
    let state = g.state_and_clock().await;
    assert_eq!(state["clock"]["status"], "finished", "{state}");
    assert!(state["state"]["result"]["condition"].is_string(), "{state}");

    // The whole campaign audits, and so does its export with no server.
    let audit = g.app.get(&format!("/v1/campaigns/{}/audit?fresh=true", g.campaign)).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
    let export = g.app.get(&format!("/v1/campaigns/{}/export", g.campaign)).await.text;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("campaign.jsonl"), &export).unwrap();
    let key = g.app.get("/v1/keys").await.ok(200)["keys"][0]["public_key"].as_str().unwrap().to_owned();
    let report = adjutant_server::verify::verify(&adjutant_server::verify::Options {
        file: dir.path().join("campaign.jsonl"),
        keys: vec![key],
        forum_texts: None,
    })
    .unwrap();
    assert!(report.ok(), "{}", report.text());

    // Nobody but the server makes a deadline post.
    let refused = g
        .app
        .post(&g.moderator, &g.campaign, json!({"kind": "deadline", "body": {"side": "union", "stage": "turn 1"}}))
        .await;
    refused.problem(422, "body.kind");
}

async fn moderator_policy(backend: Backend) {
    let g = game(backend, json!({"turn_deadline": "PT1H", "missed_turn": "moderator"})).await;
    let start = adjutant_e2e::seed_morning();
    g.deploy(start).await;
    g.app.clock.set(start + TimeDelta::hours(1));
    let ended = g.app.post(&g.union, &g.campaign, json!({"kind": "end_turn", "body": {}})).await;
    let seq = ended.ok(201)["seq"].as_i64().unwrap() + 1;
    let before = g.state_and_clock().await;
    let due = at(g.wait_of("confederate").await["due"].as_str().unwrap());
    g.app.clock.set(due + TimeDelta::seconds(5));
    let post = g.await_post(seq).await;
    assert_eq!(post["outcomes"].as_array().unwrap().len(), 1, "{post}");
    assert_eq!(post["outcomes"][0]["kind"], "deadline_passed", "{post}");
    // Nothing was decided: the same turn, the same side, the same units; the campaign is overdue.
    let after = g.state_and_clock().await;
    assert_eq!(after["state"]["units"], before["state"]["units"]);
    assert_eq!(after["state"]["side_to_act"], "confederate");
    assert_eq!(after["clock"]["status"], "overdue", "{after}");
    assert!(after["clock"]["summary"].as_str().unwrap().contains("Overdue"), "{after}");
    let view = g.app.get(&format!("/v1/campaigns/{}", g.campaign)).await;
    assert_eq!(view.ok(200)["clock"]["status"], "overdue");
    // No second deadline post for the same wait.
    g.app.clock.set(due + TimeDelta::hours(5));
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(g.head().await, seq);

    // The moderator moves the Rebel's unit and ends its turn, as umpire, with reasons.
    let moves = g.app.get(&format!("/v1/campaigns/{}/units/cs-51st-inf/moves", g.campaign)).await;
    let path = moves.ok(200)["moves"][0]["path"].clone();
    let umpire = |kind: &str, body: Value| json!({"kind": "umpire", "body": {"side": "confederate", "kind": kind, "body": body, "reason": "The Rebel player is away."}});
    let moved =
        g.app.post(&g.moderator, &g.campaign, umpire("move", json!({"unit": "cs-51st-inf", "path": path}))).await;
    let moved = moved.ok(201);
    assert_eq!(moved["outcomes"][0]["kind"], "umpire", "{moved}");
    assert_eq!(moved["outcomes"][1]["kind"], "moved", "{moved}");
    // What the side may not post now, the moderator may not post for it either (409).
    g.app
        .post(&g.moderator, &g.campaign, umpire("deploy", json!({"placements": []})))
        .await
        .problem(409, "body.body.kind");
    g.app.post(&g.moderator, &g.campaign, umpire("end_turn", json!({}))).await.ok(201);
    let state = g.state_and_clock().await;
    assert_eq!(state["state"]["side_to_act"], "union", "{state}");
    assert_eq!(state["clock"]["status"], "waiting", "{state}");
    let audit = g.app.get(&format!("/v1/campaigns/{}/audit?fresh=true", g.campaign)).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
}

async fn pause_and_extend(backend: Backend) {
    let g = game(backend, json!({"turn_deadline": "PT1H"})).await;
    let start = adjutant_e2e::seed_morning();
    g.deploy(start).await;
    let wait = g.wait_of("union").await;
    let since = at(wait["since"].as_str().unwrap());
    assert_eq!(at(wait["due"].as_str().unwrap()), since + TimeDelta::hours(1));

    // Twenty minutes in, the moderator pauses: 40 minutes are kept.
    g.app.clock.set(since + TimeDelta::minutes(20));
    let pause = json!({"kind": "pause", "body": {"reason": "Holidays"}});
    g.app.post(&g.union, &g.campaign, pause.clone()).await.problem(403, "Authorization");
    let paused = g.app.post(&g.moderator, &g.campaign, pause.clone()).await;
    let seq = paused.ok(201)["seq"].as_i64().unwrap();
    g.app.post(&g.moderator, &g.campaign, pause).await.problem(409, "body.kind");
    let state = g.state_and_clock().await;
    assert_eq!(state["clock"]["status"], "paused", "{state}");
    assert_eq!(state["may_post"], json!({"union": [], "confederate": []}), "{state}");
    let union = state["clock"]["waits"].as_array().unwrap().iter().find(|w| w["side"] == "union").unwrap().clone();
    assert_eq!(union["remaining_ms"], 40 * 60 * 1000, "{state}");
    // No player post is taken while paused, and no deadline runs.
    let refused = g.app.post(&g.union, &g.campaign, json!({"kind": "end_turn", "body": {}})).await;
    assert_eq!(refused.problem(409, "body.kind")["rule"], "clock.paused");
    g.app.clock.set(since + TimeDelta::hours(5));
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(g.head().await, seq, "a deadline ran while paused");

    // Resumed five hours in: the Union has its 40 minutes from now.
    let resumed = since + TimeDelta::hours(5);
    g.app.post(&g.moderator, &g.campaign, json!({"kind": "resume", "body": {}})).await.ok(201);
    // Its hour's reminder was due while paused: it goes now, saying the time there is.
    let reminder = g.await_post(seq + 2).await;
    assert_eq!(reminder["kind"], "reminder");
    assert!(reminder["outcomes"][0]["headline"].as_str().unwrap().contains("ends in 40 minutes"), "{reminder}");
    let wait = g.wait_of("union").await;
    assert_eq!(at(wait["due"].as_str().unwrap()), resumed + TimeDelta::minutes(40), "{wait}");
    // The moderator gives the Union half an hour more.
    let extend = json!({"kind": "extend", "body": {"by": "PT30M", "side": "union", "reason": "Travelling"}});
    g.app.post(&g.moderator, &g.campaign, extend).await.ok(201);
    let bad = json!({"kind": "extend", "body": {"by": "P1Y", "reason": "For ever"}});
    g.app.post(&g.moderator, &g.campaign, bad).await.problem(422, "body.body.by");
    let due = at(g.wait_of("union").await["due"].as_str().unwrap());
    assert_eq!(due, resumed + TimeDelta::minutes(70));
    // A reminder not posted by the deadline is not posted: the deadline's post comes next.
    g.app.clock.set(due);
    let post = g.await_post(seq + 4).await;
    assert_eq!(post["kind"], "deadline");
    assert_eq!(at(post["stamp"].as_str().unwrap()), due);
    let audit = g.app.get(&format!("/v1/campaigns/{}/audit?fresh=true", g.campaign)).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
}

async fn restart(backend: Backend) {
    let g = game(backend, json!({"turn_deadline": "PT1H"})).await;
    let start = adjutant_e2e::seed_morning();
    g.deploy(start).await;
    let due = at(g.wait_of("union").await["due"].as_str().unwrap());
    let seq = g.head().await;
    let Game { app, campaign, .. } = g;
    let db = app.db.clone();
    drop(app);
    // Two servers come back on the database, each with its own clock, both past the deadline.
    let later = due + TimeDelta::hours(3);
    let first = TestApp::spawn_on(db.clone(), quick).await;
    let second = TestApp::spawn_on(db, quick).await;
    first.clock.set(later);
    second.clock.set(later);
    let mut post = Value::Null;
    for _ in 0..1000 {
        let answer = first.get(&format!("/v1/campaigns/{campaign}/posts/{}", seq + 1)).await;
        if answer.status.as_u16() == 200 {
            post = answer.body;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(post["kind"], "deadline", "{post}");
    assert_eq!(at(post["stamp"].as_str().unwrap()), later, "stamped at the restart, not at the deadline");
    tokio::time::sleep(Duration::from_millis(100)).await;
    // One post for the one wait that passed: the Rebel's new turn runs from the restart.
    let next = first.get(&format!("/v1/campaigns/{campaign}/posts/{}", seq + 2)).await;
    assert_eq!(next.status.as_u16(), 404, "{}", next.text);
    let state = second.get(&format!("/v1/campaigns/{campaign}/state")).await;
    assert_eq!(state.ok(200)["state"]["side_to_act"], "confederate");
}

async fn replace_player(backend: Backend) {
    let g = game(backend, json!({"turn_deadline": "PT48H"})).await;
    g.deploy(adjutant_e2e::seed_morning()).await;
    let players =
        g.app.request(Method::GET, &format!("/v1/campaigns/{}/players", g.campaign), Some(&g.moderator), None).await;
    let rebel =
        players.ok(200)["players"].as_array().unwrap().iter().find(|p| p["side"] == "confederate").unwrap().clone();
    let path = format!("/v1/campaigns/{}/players/{}/replace", g.campaign, rebel["id"].as_str().unwrap());
    // Only the moderator replaces, and not with a name that is no name.
    g.app
        .request(Method::POST, &path, Some(&g.union), Some(json!({"name": "Longstreet"})))
        .await
        .problem(403, "Authorization");
    g.app.request(Method::POST, &path, Some(&g.moderator), Some(json!({"name": ""}))).await.problem(422, "body.name");
    let issued = g.app.request(Method::POST, &path, Some(&g.moderator), Some(json!({"name": "Longstreet"}))).await;
    let issued = issued.ok(201).clone();
    assert_eq!(issued["side"], "confederate");
    let longstreet = issued["token"].as_str().unwrap().to_owned();
    // The old token is refused; replacing it again is refused too.
    let old = g.app.post(&g.confederate, &g.campaign, json!({"kind": "note", "body": {"text": "still here"}})).await;
    assert_eq!(old.status.as_u16(), 401, "{}", old.text);
    g.app
        .request(Method::POST, &path, Some(&g.moderator), Some(json!({"name": "Hood"})))
        .await
        .problem(409, "path.player_id");
    // Nobody posts a replacement directly.
    let forged = json!({"kind": "replace_player", "body": {"side": "union", "replaced": rebel["id"], "replaced_name": "x",
                         "by": rebel["id"], "name": "y"}});
    g.app.post(&g.moderator, &g.campaign, forged).await.problem(422, "body.kind");

    // The Union ends its turn; the new Rebel player ends theirs.
    g.app.post(&g.union, &g.campaign, json!({"kind": "end_turn", "body": {}})).await.ok(201);
    let ended = g.app.post(&longstreet, &g.campaign, json!({"kind": "end_turn", "body": {}})).await;
    let seq = ended.ok(201)["seq"].as_i64().unwrap();
    assert_eq!(ended.body["author"], "Longstreet");
    // The log says who played each post, the replacement included.
    let page = g.app.get(&format!("/v1/campaigns/{}/posts?after=0&limit=100", g.campaign)).await;
    let posts = page.ok(200)["posts"].as_array().unwrap().clone();
    let authors: Vec<(&str, &str)> =
        posts.iter().map(|p| (p["kind"].as_str().unwrap(), p["author"].as_str().unwrap())).collect();
    assert_eq!(
        authors,
        [
            ("deploy", "union player"),
            ("deploy", "confederate player"),
            ("replace_player", "moderator"),
            ("end_turn", "union player"),
            ("end_turn", "Longstreet")
        ]
    );
    let replaced = &posts[2]["outcomes"][0];
    assert_eq!(replaced["kind"], "player_replaced");
    assert_eq!(replaced["headline"], "The Rebel is now played by Longstreet, who replaces confederate player");
    assert!(
        replaced["text"]["markdown"].as_str().unwrap().contains("Longstreet replaces confederate player"),
        "{replaced}"
    );
    let html = g.app.get(&format!("/campaigns/{}", g.campaign)).await.text;
    assert!(html.contains("<span class=\"author\">Longstreet</span>"), "{html}");
    assert_eq!(g.head().await, seq);
    let audit = g.app.get(&format!("/v1/campaigns/{}/audit?fresh=true", g.campaign)).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
}

async fn reminder(backend: Backend) {
    let g = game(backend, json!({"turn_deadline": "PT3H"})).await;
    let start = adjutant_e2e::seed_morning();
    g.deploy(start).await;
    let wait = g.wait_of("union").await;
    let due = at(wait["due"].as_str().unwrap());
    let seq = g.head().await;
    // The default leads are 24 hours (longer than the wait: none) and 1 hour.
    g.app.clock.set(due - TimeDelta::hours(1) - TimeDelta::milliseconds(1));
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(g.head().await, seq, "a reminder before its time");
    g.app.clock.set(due - TimeDelta::hours(1));
    let post = g.await_post(seq + 1).await;
    assert_eq!(post["kind"], "reminder", "{post}");
    assert_eq!(at(post["stamp"].as_str().unwrap()), due - TimeDelta::hours(1));
    assert_eq!(post["author"], "server");
    let outcome = &post["outcomes"][0];
    assert_eq!(outcome["kind"], "deadline_near");
    assert_eq!(outcome["headline"], "The Union's turn 1 ends in 1 hour, at Sat 21 Nov 2026 13:21 UTC", "{outcome}");
    // Once: the next post is the deadline's.
    g.app.clock.set(due - TimeDelta::minutes(30));
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(g.head().await, seq + 1);
    g.app.clock.set(due);
    assert_eq!(g.await_post(seq + 2).await["kind"], "deadline");
    let audit = g.app.get(&format!("/v1/campaigns/{}/audit?fresh=true", g.campaign)).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
}

async fn settings(backend: Backend) {
    let app = TestApp::spawn_with(backend, quick).await;
    let moderator = app.moderator().await;
    let create = |settings: Value, mode: &str| {
        let mut body = json!({"name": "Checked", "mode": mode, "settings": settings});
        body[if mode == "managed" { "scenario" } else { "ruleset" }] =
            json!(if mode == "managed" { "short-acw" } else { "acw-25mm" });
        app.request(Method::POST, "/v1/campaigns", Some(&moderator), Some(body))
    };
    for (settings, field) in [
        (json!({"turn_deadline": null}), "body.settings.turn_deadline"),
        (json!({"turn_deadline": "PT30S"}), "body.settings.turn_deadline"),
        (json!({"turn_deadline": "P31D"}), "body.settings.turn_deadline"),
        (json!({"turn_deadline": "P1M"}), "body.settings.turn_deadline"),
        (json!({"turn_deadline": "PT48H", "turn_deadline_at": "20:00"}), "body.settings.turn_deadline_at"),
        (json!({"turn_deadline_at": "24:00"}), "body.settings.turn_deadline_at"),
        (json!({"missed_turn": "moderator"}), "body.settings.missed_turn"),
        (json!({"turn_deadline": "PT1H", "missed_turn": "skip"}), "body.settings.missed_turn"),
    ] {
        let refused = create(settings.clone(), "managed").await;
        assert_eq!(refused.status.as_u16(), 422, "{settings}: {}", refused.text);
        assert!(refused.body["field"].as_str().unwrap().starts_with(field), "{settings}: {}", refused.text);
    }
    // A resolver campaign has no turns for the server to keep.
    create(json!({"turn_deadline": "PT48H"}), "resolver").await.problem(422, "body.settings.turn_deadline");

    // 20:00 in New York, at least 12 hours after the deployment began (09:51:45 UTC, 04:51 EST):
    // the same day's 20:00 EST is 15 hours on, so that is the deadline.
    let settings = json!({"turn_deadline_at": "20:00", "time_zone": "America/New_York"});
    let made = create(settings, "managed").await;
    let id = made.ok(201)["id"].as_str().unwrap().to_owned();
    let view = app.get(&format!("/v1/campaigns/{id}")).await;
    let wait = view.ok(200)["clock"]["waits"][0].clone();
    assert_eq!(wait["due"], "2026-11-22T01:00:00.000Z", "{wait}");
    assert_eq!(wait["due_local"], "Sat 21 Nov 2026 20:00 EST", "{wait}");
}

/// Two servers on one PostgreSQL, each stamping by the machine's own clock, and one-minute
/// deadlines: both deployments run out at the same moment on both servers, and each gets exactly
/// one deadline post. It waits a minute of real time, while the binary's other tests run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_one_postgresql_with_the_real_clock_post_each_deadline_once() {
    if adjutant_e2e::postgres_admin_url().is_none() {
        return;
    }
    let db = adjutant_e2e::TestDb::new(Backend::Postgres).await;
    let first = TestApp::spawn_on_system_clock(db.clone(), quick).await;
    let second = TestApp::spawn_on_system_clock(db, quick).await;
    let moderator = first.moderator().await;
    let settings = json!({"turn_deadline": "PT1M"});
    let campaign = first
        .campaign(
            &moderator,
            json!({"name": "Real time", "mode": "managed", "scenario": "short-acw", "settings": settings}),
        )
        .await;
    // Nobody posts: both deployments run out a minute after the campaign's creation.
    let path = format!("/v1/campaigns/{campaign}/posts?after=0&limit=100");
    let deadlines = |page: Value| -> Vec<Value> {
        page["posts"].as_array().unwrap().iter().filter(|p| p["kind"] == "deadline").cloned().collect()
    };
    let started = std::time::Instant::now();
    loop {
        let made = deadlines(second.get(&path).await.ok(200).clone());
        if made.len() >= 2 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(90), "only {} deadline posts: {made:?}", made.len());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // A moment more for a second replica's duplicate, were there one.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let made = deadlines(first.get(&path).await.ok(200).clone());
    let waits: Vec<(String, String)> = made
        .iter()
        .map(|p| (p["body"]["side"].as_str().unwrap().to_owned(), p["body"]["stage"].as_str().unwrap().to_owned()))
        .collect();
    let mut unique = waits.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), waits.len(), "a wait with two deadline posts: {waits:?}");
    assert_eq!(unique, [("confederate".into(), "deployment".into()), ("union".into(), "deployment".into())]);
    // The Union's first turn runs from the second of them.
    let state = second.get(&format!("/v1/campaigns/{campaign}/state")).await;
    assert_eq!(state.ok(200)["clock"]["waits"][0]["stage"], "turn 1", "{}", state.text);
    for post in &made {
        let stamp = post["stamp"].as_str().unwrap().parse::<chrono::DateTime<chrono::Utc>>().unwrap();
        let due =
            post["outcomes"][0]["data"]["due"].as_str().unwrap().parse::<chrono::DateTime<chrono::Utc>>().unwrap();
        assert!(stamp >= due && stamp - due < chrono::TimeDelta::seconds(5), "stamped {stamp}, due {due}");
    }
    let audit = first.get(&format!("/v1/campaigns/{campaign}/audit?fresh=true")).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
}
