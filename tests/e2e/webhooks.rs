//! Webhooks over real HTTP, on SQLite and on PostgreSQL: a receiver that is down for a while
//! gets every outcome exactly once, signed by the Standard Webhooks scheme; 410 stops
//! deliveries for good; a restarted server delivers what was pending; moderators read the log.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{on_both_backends, seed_morning, Backend, Table, TestApp};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

on_both_backends! {
    a_receiver_down_for_a_while_gets_every_outcome_once_signed => down_then_up;
    gone_stops_deliveries_for_good => gone_stops;
    a_restarted_server_delivers_what_was_pending => restart_delivers;
    moderators_register_and_read_webhooks => moderator_endpoints;
    two_servers_on_one_database_deliver_each_outcome_once => two_replicas;
    concurrent_claims_take_each_row_once => concurrent_claims;
    webhooks_cannot_reach_inside_the_network => no_ssrf;
    a_campaign_has_at_most_five_webhooks => webhook_cap;
    an_endpoint_that_never_answers_delays_no_other_campaign => tarpit_is_fair;
    a_tarpit_with_a_backlog_takes_few_slots => tarpit_backlog_is_fair;
    the_deliverer_keeps_time_by_the_clock_it_is_given => deliverer_clock;
}

/// What the receiver answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Down,
    Up,
    Gone,
    /// 503 with `Retry-After: 30`.
    Busy,
}

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Seen {
    id: String,
    timestamp: String,
    signature: String,
    body: Vec<u8>,
    answered: u16,
}

#[derive(Clone)]
struct Receiver {
    url: String,
    mode: Arc<Mutex<Mode>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Receiver {
    async fn start(mode: Mode) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::serve(listener, mode)
    }

    /// On a given port (one that refused connections until now).
    async fn start_on(port: u16, mode: Mode) -> Self {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        Self::serve(listener, mode)
    }

    fn serve(listener: tokio::net::TcpListener, mode: Mode) -> Self {
        let url = format!("http://{}/hooks/adjutant", listener.local_addr().unwrap());
        let receiver = Self { url, mode: Arc::new(Mutex::new(mode)), seen: Arc::default() };
        let app =
            axum::Router::new().route("/hooks/adjutant", axum::routing::post(receive)).with_state(receiver.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        receiver
    }

    fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Outcome id → how many requests for it were answered 2xx.
    fn delivered(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for s in self.seen().iter().filter(|s| (200..300).contains(&s.answered)) {
            *counts.entry(s.id.clone()).or_insert(0) += 1;
        }
        counts
    }
}

async fn receive(State(r): State<Receiver>, headers: HeaderMap, body: Bytes) -> (StatusCode, HeaderMap) {
    let mode = *r.mode.lock().unwrap();
    let status = match mode {
        Mode::Down | Mode::Busy => StatusCode::SERVICE_UNAVAILABLE,
        Mode::Up => StatusCode::NO_CONTENT,
        Mode::Gone => StatusCode::GONE,
    };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    r.seen.lock().unwrap().push(Seen {
        id: header("webhook-id"),
        timestamp: header("webhook-timestamp"),
        signature: header("webhook-signature"),
        body: body.to_vec(),
        answered: status.as_u16(),
    });
    let mut answer = HeaderMap::new();
    if mode == Mode::Busy {
        answer.insert("retry-after", "30".parse().unwrap());
    }
    (status, answer)
}

/// Verifies a request as a Standard Webhooks receiver does, written here from the
/// specification independently of the server's code.
fn verify(secret: &str, seen: &Seen) -> bool {
    let key = BASE64.decode(secret.strip_prefix("whsec_").expect("whsec_ prefix")).expect("base64 secret");
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{}.{}.", seen.id, seen.timestamp).as_bytes());
    mac.update(&seen.body);
    let expected = format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()));
    // The header may carry several space-separated signatures.
    seen.signature.split(' ').any(|s| s == expected)
}

/// Fast back-off for tests: retries within a fraction of a second; a row leased by a server
/// that died mid-attempt is free again after 2 s.
fn fast(config: &mut adjutant_server::config::Config) {
    config.webhook_poll_ms = 20;
    config.webhook_retry_base_ms = 40;
    config.webhook_retry_cap_ms = 250;
    config.webhook_timeout_secs = 1;
    config.webhook_max_attempts = 1000;
}

async fn setup(backend: Backend) -> Table {
    Table::open(TestApp::spawn_with(backend, fast).await, "Webhooks", "acw-25mm").await
}

async fn register(app: &TestApp, moderator: &str, campaign: &str, url: &str) -> Value {
    let answer = app
        .request(
            Method::POST,
            &format!("/v1/campaigns/{campaign}/webhooks"),
            Some(moderator),
            Some(json!({"url": url})),
        )
        .await;
    answer.ok(201).clone()
}

/// Posts a resolution; returns its outcome's id.
async fn resolve(app: &TestApp, player: &str, campaign: &str, i: i64) -> String {
    app.clock.set(seed_morning() + chrono::Duration::milliseconds(1_001 * i));
    let action = json!({"kind": "resolve", "body": {"action": "formation_test", "inputs": {"class": "B"}}});
    let post = app.post(player, campaign, action).await;
    post.ok(201)["outcomes"][0]["id"].as_str().unwrap().to_owned()
}

async fn deliveries(app: &TestApp, moderator: &str, campaign: &str, webhook: &str) -> Vec<Value> {
    let answer = app
        .request(
            Method::GET,
            &format!("/v1/campaigns/{campaign}/webhooks/{webhook}/deliveries?limit=100"),
            Some(moderator),
            None,
        )
        .await;
    answer.ok(200)["deliveries"].as_array().unwrap().clone()
}

/// Waits (up to 20 s) until `done` holds.
async fn eventually(what: &str, mut done: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !done().await {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

async fn down_then_up(backend: Backend) {
    let s = setup(backend).await;
    let flaky = Receiver::start(Mode::Down).await;
    let steady = Receiver::start(Mode::Up).await;
    let flaky_hook = register(&s.app, &s.moderator, &s.campaign, &flaky.url).await;
    let steady_hook = register(&s.app, &s.moderator, &s.campaign, &steady.url).await;
    let flaky_secret = flaky_hook["secret"].as_str().unwrap().to_owned();
    let steady_secret = steady_hook["secret"].as_str().unwrap().to_owned();
    assert!(flaky_secret.starts_with("whsec_"));
    assert_ne!(flaky_secret, steady_secret);

    let mut ids = BTreeSet::new();
    let mut refused_first = Vec::new();
    for i in 0..3 {
        refused_first.push(resolve(&s.app, &s.union, &s.campaign, i).await);
    }
    ids.extend(refused_first.iter().cloned());
    // Written with the outcomes: one outbox row per outcome and webhook.
    assert_eq!(s.app.db.count("webhook_outbox").await, 6);

    // The flaky receiver turns every attempt away for a while.
    let flaky_id = flaky_hook["id"].as_str().unwrap();
    eventually("each outcome was refused at least twice", async || {
        let seen = flaky.seen();
        ids.iter().all(|id| seen.iter().filter(|s| &s.id == id && s.answered == 503).count() >= 2)
    })
    .await;
    assert!(flaky.delivered().is_empty());
    flaky.set(Mode::Up);
    for i in 3..5 {
        ids.insert(resolve(&s.app, &s.union, &s.campaign, i).await);
    }
    eventually("both receivers have every outcome", async || {
        flaky.delivered().len() == ids.len() && steady.delivered().len() == ids.len()
    })
    .await;
    // Give a duplicate every chance to show up.
    tokio::time::sleep(Duration::from_millis(600)).await;

    let outcomes = s.app.get(&format!("/v1/campaigns/{}/outcomes", s.campaign)).await;
    let feed = outcomes.ok(200)["outcomes"].as_array().unwrap().clone();
    let feed_ids: BTreeSet<String> = feed.iter().map(|o| o["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(feed_ids, ids);
    for (receiver, secret, other) in [(&flaky, &flaky_secret, &steady_secret), (&steady, &steady_secret, &flaky_secret)]
    {
        let delivered = receiver.delivered();
        assert_eq!(delivered.keys().cloned().collect::<BTreeSet<_>>(), ids);
        assert!(delivered.values().all(|&n| n == 1), "delivered more than once: {delivered:?}");
        let now = chrono::Utc::now().timestamp();
        for seen in receiver.seen() {
            assert!(verify(secret, &seen), "bad signature on {seen:?}");
            assert!(!verify(other, &seen), "another webhook's secret verified {seen:?}");
            let timestamp: i64 = seen.timestamp.parse().unwrap();
            assert!((now - 120..=now + 1).contains(&timestamp), "timestamp {timestamp} vs now {now}");
            let body: Value = adjutant_e2e::serde_json::from_slice(&seen.body).unwrap();
            assert_eq!(body["type"], "outcome.created");
            assert_eq!(body["data"]["id"], seen.id.as_str());
            assert_eq!(body["data"]["campaign_id"], s.campaign.as_str());
            assert_eq!(body["data"]["kind"], "resolution");
            assert!(body["data"]["headline"].as_str().is_some_and(|h| !h.is_empty()), "{body}");
            assert_eq!(body["data"]["data"]["action"], "formation_test");
            // The same outcome, and forum text, as the feed serves.
            let in_feed = feed.iter().find(|o| o["id"] == seen.id.as_str()).unwrap();
            for key in ["position", "seq", "headline", "data", "text"] {
                assert_eq!(body["data"][key], in_feed[key], "{key}");
            }
            assert!(body["data"]["text"]["bbcode"]
                .as_str()
                .unwrap()
                .contains(&format!("adjutant:outcome:{}", seen.id)));
        }
        // Every attempt at one outcome sends the same body (the retries are the same message).
        let mut bodies: BTreeMap<String, BTreeSet<Vec<u8>>> = BTreeMap::new();
        for seen in receiver.seen() {
            bodies.entry(seen.id.clone()).or_default().insert(seen.body.clone());
        }
        assert!(bodies.values().all(|b| b.len() == 1));
    }

    // The delivery log shows the refusals, then the success, attempt by attempt.
    let log = deliveries(&s.app, &s.moderator, &s.campaign, flaky_id).await;
    assert_eq!(log.len(), flaky.seen().len(), "every attempt is logged");
    for id in &refused_first {
        let attempts: Vec<&Value> = log.iter().filter(|d| d["outcome_id"] == id.as_str()).collect();
        assert!(attempts.len() >= 3, "{attempts:?}");
        for (n, d) in attempts.iter().enumerate() {
            assert_eq!(d["attempt"], n + 1);
            let last = n + 1 == attempts.len();
            assert_eq!(d["status_code"], if last { 204 } else { 503 }, "{d}");
            assert_eq!(d["delivered"], last);
            assert!(d["duration_ms"].as_i64().unwrap() >= 0);
        }
    }
    let steady_log = deliveries(&s.app, &s.moderator, &s.campaign, steady_hook["id"].as_str().unwrap()).await;
    assert_eq!(steady_log.len(), 5);
    assert!(steady_log.iter().all(|d| d["attempt"] == 1 && d["status_code"] == 204));
}

async fn gone_stops(backend: Backend) {
    let s = setup(backend).await;
    let receiver = Receiver::start(Mode::Gone).await;
    let hook = register(&s.app, &s.moderator, &s.campaign, &receiver.url).await;
    let hook_id = hook["id"].as_str().unwrap();
    resolve(&s.app, &s.union, &s.campaign, 0).await;
    eventually("the endpoint said 410", async || !receiver.seen().is_empty()).await;
    tokio::time::sleep(Duration::from_millis(600)).await;

    // One request, then nothing: no retry.
    assert_eq!(receiver.seen().len(), 1, "{:?}", receiver.seen());
    assert!(verify(hook["secret"].as_str().unwrap(), &receiver.seen()[0]));
    let list =
        s.app.request(Method::GET, &format!("/v1/campaigns/{}/webhooks", s.campaign), Some(&s.moderator), None).await;
    let listed = &list.ok(200)["webhooks"][0];
    assert_eq!(listed["id"], hook_id);
    assert_eq!(listed["active"], false);
    assert!(listed["disabled_reason"].as_str().unwrap().contains("410"), "{listed}");
    assert!(listed["disabled_at"].is_string());
    assert!(listed.get("secret").is_none(), "the secret is shown only once");

    // Later outcomes get no outbox row for it, and still nothing is sent.
    receiver.set(Mode::Up);
    let before = s.app.db.count("webhook_outbox").await;
    assert_eq!(before, 1);
    resolve(&s.app, &s.union, &s.campaign, 1).await;
    resolve(&s.app, &s.union, &s.campaign, 2).await;
    assert_eq!(s.app.db.count("webhook_outbox").await, before);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(receiver.seen().len(), 1);

    let log = deliveries(&s.app, &s.moderator, &s.campaign, hook_id).await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["status_code"], 410);
    assert_eq!(log[0]["delivered"], false);
}

async fn restart_delivers(backend: Backend) {
    let s = setup(backend).await;
    // A port nobody listens on yet: connections are refused.
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/hooks/adjutant");
    let hook = register(&s.app, &s.moderator, &s.campaign, &url).await;
    let hook_id = hook["id"].as_str().unwrap().to_owned();
    let mut ids = BTreeSet::new();
    for i in 0..2 {
        ids.insert(resolve(&s.app, &s.union, &s.campaign, i).await);
    }
    eventually("both outcomes failed to connect", async || {
        let log = deliveries(&s.app, &s.moderator, &s.campaign, &hook_id).await;
        ids.iter().all(|id| log.iter().any(|d| d["outcome_id"] == id.as_str()))
    })
    .await;
    let log = deliveries(&s.app, &s.moderator, &s.campaign, &hook_id).await;
    assert!(
        log.iter().all(|d| d["status_code"].is_null() && d["error"].as_str().is_some_and(|e| !e.is_empty())),
        "{log:?}"
    );

    // The server goes away; the endpoint comes up; a new server on the same database delivers.
    let Table { app, moderator, campaign, .. } = s;
    let db = app.db.clone();
    drop(app);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let receiver = Receiver::start_on(port, Mode::Up).await;
    let app = TestApp::spawn_on(db, fast).await;
    eventually("the restarted server delivered both", async || receiver.delivered().len() == 2).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let delivered = receiver.delivered();
    assert_eq!(delivered.keys().cloned().collect::<BTreeSet<_>>(), ids);
    assert!(delivered.values().all(|&n| n == 1), "{delivered:?}");
    assert!(receiver.seen().iter().all(|seen| verify(hook["secret"].as_str().unwrap(), seen)));
    let log = deliveries(&app, &moderator, &campaign, &hook_id).await;
    assert_eq!(log.iter().filter(|d| d["delivered"] == true).count(), 2);
    assert!(log.iter().filter(|d| d["delivered"] == false).count() >= 2);
}

async fn moderator_endpoints(backend: Backend) {
    let s = setup(backend).await;
    let path = format!("/v1/campaigns/{}/webhooks", s.campaign);
    let bad = |url: &str| json!({"url": url});
    for url in ["not a url", "ftp://example.com/x", "http://user:pw@example.com/", "mailto:moderator@example.com"] {
        let answer = s.app.request(Method::POST, &path, Some(&s.moderator), Some(bad(url))).await;
        answer.problem(422, "body.url");
    }
    let extra = s.app.request(Method::POST, &path, Some(&s.moderator), Some(json!({"url": "http://a/", "x": 1}))).await;
    extra.problem(422, "body.x");
    s.app.request(Method::POST, &path, Some(&s.union), Some(bad("http://a/"))).await.problem(403, "Authorization");
    s.app.request(Method::POST, &path, None, Some(bad("http://a/"))).await.problem(401, "Authorization");
    let other_moderator = s.app.moderator().await;
    s.app.request(Method::GET, &path, Some(&other_moderator), None).await.problem(403, "Authorization");
    assert_eq!(s.app.db.count("webhooks").await, 0);

    let hook = register(&s.app, &s.moderator, &s.campaign, "http://127.0.0.1:9/hook").await;
    assert_eq!(hook["url"], "http://127.0.0.1:9/hook");
    assert_eq!(hook["campaign_id"], s.campaign.as_str());
    let listed = s.app.request(Method::GET, &path, Some(&s.moderator), None).await;
    let listed = listed.ok(200)["webhooks"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["active"], true);
    // Registered, like the campaign was created, at the server's clock's time (set by the test),
    // not the machine's.
    for at in [&hook["created_at"], &listed[0]["created_at"]] {
        let at: chrono::DateTime<chrono::Utc> = at.as_str().unwrap().parse().unwrap();
        assert_eq!(at, seed_morning());
    }
    let campaign = s.app.get(&format!("/v1/campaigns/{}", s.campaign)).await;
    assert_eq!(campaign.ok(200)["created_at"], adjutant_rules::dice::stamp_text(seed_morning()));

    let unknown = uuid::Uuid::new_v4();
    s.app
        .request(Method::GET, &format!("{path}/{unknown}/deliveries"), Some(&s.moderator), None)
        .await
        .problem(404, "path.webhook_id");
    // A webhook of another campaign is not found through this one.
    let other = s.app.campaign(&s.moderator, json!({"name": "Other", "mode": "resolver", "ruleset": "acw-25mm"})).await;
    let hook_id = hook["id"].as_str().unwrap();
    s.app
        .request(Method::GET, &format!("/v1/campaigns/{other}/webhooks/{hook_id}/deliveries"), Some(&s.moderator), None)
        .await
        .problem(404, "path.webhook_id");
    s.app
        .request(Method::GET, &format!("{path}/{hook_id}/deliveries?limit=0"), Some(&s.moderator), None)
        .await
        .problem(400, "query.limit");
    assert!(deliveries(&s.app, &s.moderator, &s.campaign, hook_id).await.is_empty());

    let spec = s.app.get("/v1/openapi.json").await;
    let paths = &spec.ok(200)["paths"];
    assert!(paths["/v1/campaigns/{id}/webhooks"]["post"].is_object());
    assert!(paths["/v1/campaigns/{id}/webhooks/{webhook_id}/deliveries"]["get"].is_object());
}

async fn two_replicas(backend: Backend) {
    let s = setup(backend).await;
    // A second server on the same database, delivering too.
    let replica = TestApp::spawn_on(s.app.db.clone(), fast).await;
    let receiver = Receiver::start(Mode::Down).await;
    let hook = register(&s.app, &s.moderator, &s.campaign, &receiver.url).await;
    let mut ids = BTreeSet::new();
    for i in 0..24 {
        ids.insert(resolve(&s.app, &s.union, &s.campaign, i).await);
    }
    // Both replicas retry the refused rows for a while, then the endpoint comes up.
    eventually("several refusals", async || receiver.seen().len() >= 30).await;
    receiver.set(Mode::Up);
    eventually("every outcome delivered", async || receiver.delivered().len() == ids.len()).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let delivered = receiver.delivered();
    assert_eq!(delivered.keys().cloned().collect::<BTreeSet<_>>(), ids);
    assert!(delivered.values().all(|&n| n == 1), "a row was delivered twice: {delivered:?}");
    // Each attempt of each row is logged once, numbered without gaps or repeats.
    let log = deliveries(&replica, &s.moderator, &s.campaign, hook["id"].as_str().unwrap()).await;
    assert_eq!(log.len(), receiver.seen().len().min(100));
    let mut numbers: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for d in &log {
        numbers.entry(d["outcome_id"].as_str().unwrap().to_owned()).or_default().push(d["attempt"].as_i64().unwrap());
    }
    for attempts in numbers.values() {
        let expected: Vec<i64> = (1..=attempts.len() as i64).collect();
        assert_eq!(attempts, &expected);
    }
}

async fn concurrent_claims(backend: Backend) {
    // The server's own deliverer looks once at start, then not for an hour, and no post wakes
    // it: the claims here are the only ones.
    let app = TestApp::spawn_with(backend, |c| {
        c.webhook_poll_ms = 3_600_000;
        c.webhook_wake = false;
    })
    .await;
    let moderator = app.moderator().await;
    // 40 rows, two for each of 20 webhooks (a claim takes at most
    // `PER_WEBHOOK_IN_FLIGHT` = 2 rows of one webhook at a time).
    for c in 0..4 {
        let campaign = app
            .campaign(&moderator, json!({"name": format!("Claims {c}"), "mode": "resolver", "ruleset": "acw-25mm"}))
            .await;
        let player = app.player(&moderator, &campaign, "union").await;
        for w in 0..5 {
            register(&app, &moderator, &campaign, &format!("http://127.0.0.1:9/never-{w}")).await;
        }
        for i in 0..2 {
            resolve(&app, &player, &campaign, i).await;
        }
    }
    assert_eq!(adjutant_store::PER_WEBHOOK_IN_FLIGHT, 2);
    // Two stores on one database, as two replicas have, claiming at the same moment.
    let (a, b) = (app.db.store().await, app.db.store().await);
    let now = chrono::Utc::now();
    let lease = now + chrono::Duration::seconds(30);
    let mut claimed = Vec::new();
    for _ in 0..4 {
        let (x, y) = tokio::join!(a.claim_deliveries(now, lease, 7), b.claim_deliveries(now, lease, 7));
        claimed.extend(x.unwrap());
        claimed.extend(y.unwrap());
    }
    let rest_a = a.claim_deliveries(now, lease, 100).await.unwrap();
    claimed.extend(rest_a);
    let ids: BTreeSet<i64> = claimed.iter().map(|c| c.outbox_id).collect();
    assert_eq!(ids.len(), claimed.len(), "a row was claimed twice");
    assert_eq!(ids.len(), 40);
    assert!(claimed.iter().all(|c| c.attempt == 1));
    // Leased: nobody gets them again until the lease runs out; then they are due again.
    assert!(b.claim_deliveries(now, lease, 100).await.unwrap().is_empty());
    let later = lease + chrono::Duration::milliseconds(1);
    let again = b.claim_deliveries(later, later + chrono::Duration::seconds(30), 100).await.unwrap();
    assert_eq!(again.len(), 40);
    assert!(again.iter().all(|c| c.attempt == 2));
}

async fn no_ssrf(backend: Backend) {
    // The operator allows loopback by address and `localhost` by name: the receivers register.
    let allowing = |c: &mut adjutant_server::config::Config| {
        fast(c);
        c.webhook_allow = "127.0.0.0/8, ::1, localhost".into();
    };
    let Table { app, moderator, campaign, union: player, .. } =
        Table::open(TestApp::spawn_with(backend, allowing).await, "SSRF", "acw-25mm").await;
    let by_address = Receiver::start(Mode::Up).await;
    let by_name = Receiver::start(Mode::Up).await;
    let by_name_url = by_name.url.replace("127.0.0.1", "localhost");
    let hook_address = register(&app, &moderator, &campaign, &by_address.url).await;
    let hook_name = register(&app, &moderator, &campaign, &by_name_url).await;

    // The operator takes the exception back (a new server, the same database): the addresses
    // registered before are refused when the deliverer connects, for a literal address and
    // for a name that resolves to loopback alike, and nothing is sent.
    let db = app.db.clone();
    drop(app);
    let app = TestApp::spawn_on(db, |c| {
        fast(c);
        c.webhook_allow = String::new();
    })
    .await;
    resolve(&app, &player, &campaign, 0).await;
    for hook in [&hook_address, &hook_name] {
        let id = hook["id"].as_str().unwrap();
        eventually("an attempt is logged", async || !deliveries(&app, &moderator, &campaign, id).await.is_empty())
            .await;
        let log = deliveries(&app, &moderator, &campaign, id).await;
        // A generic reason, not the client's error chain.
        assert_eq!(log[0]["error"], "address not allowed", "{log:?}");
        assert!(log[0]["status_code"].is_null());
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(by_address.seen().is_empty() && by_name.seen().is_empty(), "a request reached loopback");

    // Registering such addresses is refused outright.
    let path = format!("/v1/campaigns/{campaign}/webhooks");
    for url in [
        by_address.url.clone(),
        by_name_url.clone(),
        "http://[::1]:9/hook".to_owned(),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://10.0.0.1/hook".to_owned(),
        "http://[::ffff:127.0.0.1]/hook".to_owned(),
        "http://2130706433/hook".to_owned(),
    ] {
        let answer = app.request(Method::POST, &path, Some(&moderator), Some(json!({"url": url}))).await;
        let problem = answer.problem(422, "body.url");
        assert_eq!(problem["rule"], "webhook.address", "{url}: {problem}");
    }
}

async fn webhook_cap(backend: Backend) {
    let s = setup(backend).await;
    for i in 0..5 {
        register(&s.app, &s.moderator, &s.campaign, &format!("http://127.0.0.1:9/hook-{i}")).await;
    }
    let path = format!("/v1/campaigns/{}/webhooks", s.campaign);
    let sixth =
        s.app.request(Method::POST, &path, Some(&s.moderator), Some(json!({"url": "http://127.0.0.1:9/six"}))).await;
    assert_eq!(sixth.problem(409, "body.url")["rule"], "webhook.limit");
    assert_eq!(s.app.db.count("webhooks").await, 5);
}

async fn tarpit_is_fair(backend: Backend) {
    // Each attempt may wait 10 s for an answer.
    let app = TestApp::spawn_with(backend, |c| {
        fast(c);
        c.webhook_timeout_secs = 10;
    })
    .await;
    let moderator = app.moderator().await;
    let resolver = json!({"name": "A", "mode": "resolver", "ruleset": "acw-25mm"});
    let slow_campaign = app.campaign(&moderator, resolver.clone()).await;
    let fast_campaign = app.campaign(&moderator, resolver).await;
    let slow_player = app.player(&moderator, &slow_campaign, "union").await;
    let fast_player = app.player(&moderator, &fast_campaign, "union").await;

    // A tarpit: takes connections and never answers.
    let tarpit = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let tarpit_url = format!("http://{}/hook", tarpit.local_addr().unwrap());
    let held = Arc::new(Mutex::new(Vec::new()));
    let holding = held.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = tarpit.accept().await {
            holding.lock().unwrap().push(socket);
        }
    });
    let receiver = Receiver::start(Mode::Up).await;
    register(&app, &moderator, &slow_campaign, &tarpit_url).await;
    register(&app, &moderator, &fast_campaign, &receiver.url).await;

    resolve(&app, &slow_player, &slow_campaign, 0).await;
    eventually("the tarpit holds a request", async || !held.lock().unwrap().is_empty()).await;
    let started = tokio::time::Instant::now();
    let id = resolve(&app, &fast_player, &fast_campaign, 1).await;
    while !receiver.delivered().contains_key(&id) {
        assert!(started.elapsed() < Duration::from_secs(3), "the other campaign's delivery waited for the tarpit");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A campaign with many rows due to an endpoint that never answers holds at most a couple of
/// the deliverer's slots: another campaign's row is delivered at once.
async fn tarpit_backlog_is_fair(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| {
        fast(c);
        c.webhook_timeout_secs = 10;
        c.webhook_concurrency = 4;
    })
    .await;
    let moderator = app.moderator().await;
    let resolver = json!({"name": "A", "mode": "resolver", "ruleset": "acw-25mm"});
    let slow_campaign = app.campaign(&moderator, resolver.clone()).await;
    let fast_campaign = app.campaign(&moderator, resolver).await;
    let slow_player = app.player(&moderator, &slow_campaign, "union").await;
    let fast_player = app.player(&moderator, &fast_campaign, "union").await;

    let tarpit = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let tarpit_url = format!("http://{}/hook", tarpit.local_addr().unwrap());
    let held = Arc::new(Mutex::new(Vec::new()));
    let holding = held.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = tarpit.accept().await {
            holding.lock().unwrap().push(socket);
        }
    });
    let receiver = Receiver::start(Mode::Up).await;
    register(&app, &moderator, &slow_campaign, &tarpit_url).await;
    register(&app, &moderator, &fast_campaign, &receiver.url).await;

    // A backlog of 12 rows to the tarpit, more than the deliverer's 4 slots.
    for i in 0..12 {
        resolve(&app, &slow_player, &slow_campaign, i).await;
    }
    eventually("the tarpit holds a request", async || !held.lock().unwrap().is_empty()).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let holding = held.lock().unwrap().len();
    assert!(holding <= 2, "{holding} requests to one webhook in flight at once");

    let started = tokio::time::Instant::now();
    let id = resolve(&app, &fast_player, &fast_campaign, 20).await;
    while !receiver.delivered().contains_key(&id) {
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "the other campaign's delivery waited for the tarpit's backlog"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The deliverer takes its time from the clock it is given, never the machine's: the due rows,
/// the retry an endpoint asks for, and `webhook-timestamp` all follow it.
async fn deliverer_clock(backend: Backend) {
    // The server's own deliverer looks once, before there is anything, then not for a day,
    // and no post wakes it.
    let app = TestApp::spawn_with(backend, |c| {
        c.webhook_poll_ms = 86_400_000;
        c.webhook_wake = false;
    })
    .await;
    let Table { app, moderator, campaign, union: player, .. } = Table::open(app, "Clocked", "acw-25mm").await;
    let busy = Receiver::start(Mode::Busy).await;
    let hook = register(&app, &moderator, &campaign, &busy.url).await;
    let secret = hook["secret"].as_str().unwrap().to_owned();
    let outcome = resolve(&app, &player, &campaign, 0).await;

    let at = chrono::DateTime::parse_from_rfc3339("2031-05-04T12:00:00Z").unwrap().to_utc();
    let clock = Arc::new(adjutant_server::clock::ManualClock::new(at));
    let settings = adjutant_server::webhooks::Settings {
        poll: Duration::from_millis(20),
        retry_base: Duration::from_millis(1),
        retry_cap: Duration::from_secs(60),
        max_attempts: 10,
        timeout: Duration::from_secs(5),
        batch: 16,
        concurrency: 1,
    };
    let allow = Arc::new(adjutant_server::net_guard::Allowlist::parse("127.0.0.0/8").unwrap());
    let deliverer =
        adjutant_server::webhooks::Deliverer::new(app.db.store().await, settings, allow, clock.clone()).unwrap();

    assert_eq!(deliverer.run_once().await.unwrap(), 1);
    let seen = busy.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].id.as_str(), seen[0].timestamp.as_str()), (outcome.as_str(), "1935662400"));
    assert!(verify(&secret, &seen[0]));
    // The endpoint asked for 30 s: not due until they have passed on the clock.
    clock.advance(chrono::Duration::milliseconds(29_999));
    assert_eq!(deliverer.run_once().await.unwrap(), 0);
    assert_eq!(busy.seen().len(), 1);
    clock.advance(chrono::Duration::milliseconds(1));
    assert_eq!(deliverer.run_once().await.unwrap(), 1);
    let seen = busy.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].timestamp, "1935662430");
    let log = deliveries(&app, &moderator, &campaign, hook["id"].as_str().unwrap()).await;
    let attempted: Vec<&str> = log.iter().map(|d| d["attempted_at"].as_str().unwrap()).collect();
    assert_eq!(attempted.len(), 2);
    assert!(attempted.iter().any(|a| a.starts_with("2031-05-04T12:00:00")), "{attempted:?}");
    assert!(attempted.iter().any(|a| a.starts_with("2031-05-04T12:00:30")), "{attempted:?}");
}
