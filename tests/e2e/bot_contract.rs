//! The reference bot against the forums' own published API descriptions (Discourse's and
//! Discord's `openapi.json`, in `tests/fixtures/`), served by Stoplight Prism, a validating mock
//! server that refuses any request the description does not allow:
//!
//! - Discourse: the bot runs against `prism mock --errors` (every request checked), and its
//!   crash and 429 paths run against a stand-in forum behind `prism proxy --errors`, which
//!   checks the bot's requests AND the stand-in's answers against the same description (an
//!   answer that does not match becomes a 500, and the bot stops).
//! - Discord: the bot runs against `prism mock` (without `--errors`, as the fixture's README
//!   explains: a refused request still gets a 422), and its crash and 429 paths against a
//!   stand-in.
//!
//! Prism is found through `ADJUTANT_PRISM` (the `prism` executable; `scripts/test.sh` installs
//! it). Without it these tests skip, saying so, unless `ADJUTANT_REQUIRE_PRISM=1`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use adjutant_bot::{with_picture, Bot, BotConfig, BotError, Format, Target, Topics};
use adjutant_e2e::forum::{Forum, ForumPost, API_KEY, BOT_USER, TOPIC};
use adjutant_e2e::reqwest::{self, Method};
use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{scripted, seed_morning, Backend, Table, TestApp};
use adjutant_forum::{discord_markdown, discord_message, DISCORD_CONTENT_MAX};
use axum::extract::{Path as UrlPath, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name).join("openapi.json")
}

/// A Prism process on a free loopback port, killed when dropped.
struct Prism {
    url: String,
    child: tokio::process::Child,
}

impl Prism {
    /// The `prism` executable, or None (the test skips) when it is not installed.
    fn binary() -> Option<PathBuf> {
        let path = std::env::var_os("ADJUTANT_PRISM").map(PathBuf::from).filter(|p| p.is_file());
        if path.is_none() {
            assert!(
                std::env::var("ADJUTANT_REQUIRE_PRISM").map_or(true, |v| v != "1"),
                "ADJUTANT_REQUIRE_PRISM=1 but ADJUTANT_PRISM does not name the prism executable"
            );
            eprintln!(
                "SKIPPED: Stoplight Prism is not installed (set ADJUTANT_PRISM to its `prism` executable; \
                 ./scripts/test.sh installs it): the forums' published API descriptions are not checked"
            );
        }
        path
    }

    async fn start(binary: &Path, args: &[&str]) -> Prism {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = tokio::process::Command::new(binary)
            .args(args)
            .args(["-h", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("starting prism");
        let url = format!("http://127.0.0.1:{port}");
        // Prism reads and checks the whole description before it listens: on a busy machine
        // that takes a while, so this waits as long as it takes (or until Prism gives up).
        loop {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return Prism { url, child };
            }
            if let Some(status) = child.try_wait().unwrap() {
                let mut stderr = String::new();
                if let Some(mut e) = child.stderr.take() {
                    use tokio::io::AsyncReadExt;
                    let _ = e.read_to_string(&mut stderr).await;
                }
                panic!("prism {args:?} stopped ({status}): {stderr}");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

impl Drop for Prism {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

async fn resolve(app: &TestApp, player: &str, campaign: &str, i: i64) -> Value {
    app.clock.set(seed_morning() + chrono::Duration::milliseconds(1_001 * i));
    let action = json!({"kind": "resolve", "body": {"action": "formation_test", "inputs": {"class": "B"}}});
    app.post(player, campaign, action).await.ok(201)["outcomes"][0].clone()
}

async fn feed(app: &TestApp, bot: &str) -> Vec<Value> {
    let answer = app.request(Method::GET, "/v1/bot/feed?limit=100", Some(bot), None).await;
    answer.ok(200)["outcomes"].as_array().unwrap().clone()
}

/// A resolver table with a bot: the table and the bot's token.
async fn table_with_bot() -> (Table, String) {
    let t = Table::open(TestApp::spawn(Backend::Sqlite).await, "Forum", "acw-25mm").await;
    let bot = t.app.bot(&t.moderator, &t.campaign, "Bot").await;
    (t, bot)
}

/// A managed (Short ACW) campaign and a bot token for it.
async fn managed_campaign_with_bot(app: &TestApp) -> (String, String) {
    let moderator = app.moderator().await;
    let campaign =
        app.campaign(&moderator, json!({"name": "Short ACW", "mode": "managed", "scenario": "short-acw"})).await;
    let bot = app.bot(&moderator, &campaign, "Bot").await;
    (campaign, bot)
}

/// Markup a player tries to slip into the channel in the bot's name.
const ATTACK: &str = "<@123> @everyone **x** [link](http://e.x) # h";

async fn seal(app: &TestApp, player: &str, campaign: &str, topic: &str) -> Value {
    let body = json!({"kind": "seal", "body": {"topic": topic, "role": "attacker", "choice": "stay"}});
    app.post(player, campaign, body).await.ok(201)["outcomes"][0].clone()
}

// ---------------------------------------------------------------------------------------------
// Discourse

#[tokio::test(flavor = "multi_thread")]
async fn the_bot_speaks_discourse_as_discourse_describes_itself() {
    let Some(prism) = Prism::binary() else { return };
    let spec = fixture("discourse");
    let spec = spec.to_str().unwrap();
    let mock = Prism::start(&prism, &["mock", "--errors", spec]).await;

    // The mock refuses what the description does not allow: a topic read without the key.
    let client = reqwest::Client::new();
    let refused = client.get(format!("{}/t/{TOPIC}.json", mock.url)).send().await.unwrap();
    assert_eq!(refused.status(), 422, "Prism checks requests");

    let (Table { app, campaign, union, .. }, bot_token) = table_with_bot().await;
    resolve(&app, &union, &campaign, 0).await;
    seal(&app, &union, &campaign, ATTACK).await;
    // The description's example posts are by "string": as that user, the bot also reads its
    // "own" posts back with their raw text (`GET /t/{id}/posts.json?post_ids[]=…`).
    for (user, format) in [("string", Format::Markdown), (BOT_USER, Format::Bbcode)] {
        let topics = Topics::parse(&format!("{campaign}={TOPIC}")).unwrap();
        let mut config = BotConfig::new(&app.base, &bot_token, &mock.url, API_KEY, user, topics);
        config.target = Target::Discourse { format };
        let report = Bot::new(config).unwrap().run_until_idle().await.unwrap();
        assert_eq!((report.posted, report.recovered), (2, 0), "{format:?}");
        assert!(feed(&app, &bot_token).await.is_empty());
        resolve(&app, &union, &campaign, 1 + format as i64).await;
        seal(&app, &union, &campaign, &format!("after the {format:?} pass")).await;
    }

    // The map picture, as Discourse's description says an upload is made.
    let png = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/map-example.png")).unwrap();
    let topics = Topics::parse(&format!("{TOPIC}")).unwrap();
    let uploader = Bot::new(BotConfig::new(&app.base, &bot_token, &mock.url, API_KEY, BOT_USER, topics)).unwrap();
    let upload = uploader.upload_to_discourse(&png).await.unwrap();
    assert!(!upload.url.is_empty() && !upload.short_url.is_empty());
    let with_map = with_picture("**Turn 2**\n\n<sub>adjutant:outcome:x</sub>", Format::Markdown, &upload);
    assert_eq!(with_map.lines().last(), Some("<sub>adjutant:outcome:x</sub>"), "the marker stays last");
    let (managed, managed_bot) = managed_campaign_with_bot(&app).await;
    let topics = Topics::parse(&format!("{TOPIC}")).unwrap();
    let reader = Bot::new(BotConfig::new(&app.base, &managed_bot, &mock.url, API_KEY, BOT_USER, topics)).unwrap();
    let map = reader.map_png(managed.parse().unwrap()).await.unwrap();
    assert!(map.starts_with(b"\x89PNG"), "Adjutant's map.png");

    // The stand-in forum behind `prism proxy --errors`: the crash and 429 paths, with every
    // request and every answer checked against the description.
    let forum = Forum::described_by(&spec_json(spec));
    let upstream = forum.start().await;
    let proxy = Prism::start(&prism, &["proxy", "--errors", spec, &upstream]).await;
    let answer = client
        .get(format!("{}/t/{TOPIC}.json", proxy.url))
        .header("Api-Key", API_KEY)
        .header("Api-Username", BOT_USER)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "the stand-in's topic answers as described: {}", answer.text().await.unwrap());
    // A wrong answer is caught: the proxy turns it into a 500.
    forum.break_answers(true);
    let broken = client
        .get(format!("{}/t/{TOPIC}.json", proxy.url))
        .header("Api-Key", API_KEY)
        .header("Api-Username", BOT_USER)
        .send()
        .await
        .unwrap();
    assert_eq!(broken.status(), 500, "Prism checks the stand-in's answers");
    forum.break_answers(false);

    let (Table { app, campaign, union, .. }, bot_token) = table_with_bot().await;
    let config = || {
        let topics = Topics::parse(&format!("{campaign}={TOPIC}")).unwrap();
        let mut config = BotConfig::new(&app.base, &bot_token, &proxy.url, API_KEY, BOT_USER, topics);
        config.max_wait = Duration::from_secs(5);
        config
    };
    forum.add("general_lee", "Opening orders for the campaign.");
    let mut outcomes = vec![];
    for i in 0..3 {
        outcomes.push(resolve(&app, &union, &campaign, i).await);
    }
    forum.add("general_grant", &format!("> adjutant:outcome:{} Lucky!", outcomes[0]["id"].as_str().unwrap()));
    forum.throttle_next("1");
    let started = Instant::now();
    let report = Bot::new(config()).unwrap().run_until_idle().await.unwrap();
    assert_eq!((report.posted, report.recovered), (3, 0));
    assert!(started.elapsed() >= Duration::from_millis(950), "Retry-After: 1 was not honoured");
    assert_eq!(forum.throttled(), 1);

    // A crash between posting and acknowledging; a fresh bot finds the reply.
    outcomes.push(resolve(&app, &union, &campaign, 3).await);
    outcomes.push(resolve(&app, &union, &campaign, 4).await);
    let dying = Bot::new(config())
        .unwrap()
        .after_post(Arc::new(|_, _| Err(BotError::Other("the bot dies before acknowledging".into()))));
    dying.run_once().await.unwrap_err();
    let report = Bot::new(config()).unwrap().run_until_idle().await.unwrap();
    assert_eq!((report.posted, report.recovered), (1, 1));
    assert!(feed(&app, &bot_token).await.is_empty());
    let mine: Vec<ForumPost> = forum.posts().into_iter().filter(|p| p.username == BOT_USER).collect();
    assert_eq!(mine.len(), 5, "each outcome once");
    for (post, outcome) in mine.iter().zip(&outcomes) {
        assert_eq!(post.raw, outcome["text"]["markdown"].as_str().unwrap(), "the reply is the outcome's Markdown");
    }
    assert_eq!(forum.refused(), 0);
}

fn spec_json(path: &str) -> Value {
    adjutant_e2e::serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Discord

const WEBHOOK: &str = "/webhooks/223456789012345678/Tok-en_1";

#[tokio::test(flavor = "multi_thread")]
async fn the_bot_speaks_discord_as_discord_describes_itself() {
    let Some(prism) = Prism::binary() else { return };
    let spec = fixture("discord");
    let mock = Prism::start(&prism, &["mock", spec.to_str().unwrap()]).await;
    let client = reqwest::Client::new();
    let execute = format!("{}{WEBHOOK}?wait=true", mock.url);
    // The mock refuses what the description does not allow: 2,001 characters of content.
    let too_long = json!({"content": "x".repeat(DISCORD_CONTENT_MAX + 1)});
    assert_eq!(client.post(&execute).json(&too_long).send().await.unwrap().status(), 422, "Prism checks requests");
    // A long outcome's message (embeds) is one Discord takes.
    let long: Vec<String> = (0..200).map(|i| format!("- line {i} of a long outcome, \\*escaped\\*")).collect();
    let message = discord_message(&format!("**Long**\n{}\n-# adjutant:outcome:{}", long.join("\n"), uuid()));
    assert!(!message.embeds.is_empty());
    let body = json!({"content": message.content, "allowed_mentions": {"parse": []},
        "embeds": message.embeds.iter().map(|d| json!({"description": d})).collect::<Vec<_>>()});
    assert_eq!(client.post(&execute).json(&body).send().await.unwrap().status(), 200);

    let (Table { app, campaign, union, .. }, bot_token) = table_with_bot().await;
    resolve(&app, &union, &campaign, 0).await;
    seal(&app, &union, &campaign, ATTACK).await;
    let journal = tempfile::tempdir().unwrap();
    // The journal names a message for the first outcome (as after a crash): the bot reads it
    // back through the webhook's message endpoint, finds another text there (the mock's
    // example), and posts the outcome.
    let first = feed(&app, &bot_token).await[0]["id"].as_str().unwrap().to_owned();
    std::fs::write(journal.path().join("j"), format!("{first} 1300000000000000001\n")).unwrap();
    let config = BotConfig::discord(&app.base, &bot_token, format!("{}{WEBHOOK}", mock.url), journal.path().join("j"));
    let bot = Bot::new(config).unwrap();
    let report = bot.run_until_idle().await.unwrap();
    assert_eq!((report.posted, report.recovered), (2, 0));
    assert!(feed(&app, &bot_token).await.is_empty());

    // The map as the message's attachment, as Discord's description says (multipart).
    let png = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/map-example.png")).unwrap();
    let message = json!({"content": "**Turn 2**\n-# adjutant:outcome:x", "allowed_mentions": {"parse": []}});
    let answer = bot.execute_webhook(&format!("{}{WEBHOOK}", mock.url), message, Some(&png)).await.unwrap();
    assert!(answer["id"].is_string(), "{answer}");
    // Prism reads multipart bodies: a wrong one is refused.
    let wrong = reqwest::Client::new()
        .post(&execute)
        .header("content-type", "multipart/form-data; boundary=x")
        .body(
            "--x\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\n\r\n--x--\r\n"
                .replace("name=\"content\"\r\n\r\n", &format!("name=\"content\"\r\n\r\n{}", "y".repeat(2001))),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 422);
}

fn uuid() -> String {
    "3f0a1b2c-0000-4000-8000-000000000001".to_owned()
}

#[derive(Default)]
struct ChannelState {
    /// Message id → content.
    messages: BTreeMap<u64, String>,
    next_id: u64,
    throttle_next: bool,
    throttled: usize,
    reads: usize,
    /// Say the rate-limit bucket is empty (`X-RateLimit-Remaining: 0`) in the next answer.
    empty_bucket_next: bool,
    /// When each message came.
    arrivals: Vec<Instant>,
}

/// A Discord channel's webhook, answering as Discord does (429 with `retry_after` in the body
/// and rate-limit headers; `X-RateLimit-Remaining` on every message).
#[derive(Clone, Default)]
struct Channel(Arc<Mutex<ChannelState>>);

impl Channel {
    /// A new channel, listening on loopback: the channel and its base address.
    async fn start() -> (Channel, String) {
        let channel = Channel::default();
        let base = adjutant_e2e::serve(
            axum::Router::new()
                .route("/webhooks/{id}/{token}", axum::routing::post(execute_webhook))
                .route("/webhooks/{id}/{token}/messages/{message}", axum::routing::get(read_message))
                .with_state(channel.clone()),
        )
        .await;
        (channel, base)
    }
}

async fn execute_webhook(
    State(channel): State<Channel>,
    UrlPath((id, token)): UrlPath<(String, String)>,
    RawQuery(query): RawQuery,
    Json(body): Json<Value>,
) -> Response {
    assert_eq!(format!("/webhooks/{id}/{token}"), WEBHOOK);
    assert_eq!(query.as_deref(), Some("wait=true"), "without wait=true Discord answers no message");
    let mut state = channel.0.lock().unwrap();
    if std::mem::take(&mut state.throttle_next) {
        state.throttled += 1;
        let headers = [("retry-after", "1"), ("x-ratelimit-remaining", "0"), ("x-ratelimit-reset-after", "0.9")];
        let body = json!({"message": "You are being rate limited.", "retry_after": 0.9, "global": false});
        return (StatusCode::TOO_MANY_REQUESTS, headers, Json(body)).into_response();
    }
    let content = body["content"].as_str().unwrap().to_owned();
    // No mention pings anyone, except the one player a turn's beginning names, and that one
    // only by the mention at the start of the message.
    let pinged = body["allowed_mentions"]["users"].as_array().cloned().unwrap_or_default();
    match pinged.as_slice() {
        [] => assert_eq!(body["allowed_mentions"], json!({"parse": []}), "no mention pings anyone"),
        [user] => {
            assert_eq!(body["allowed_mentions"], json!({"parse": [], "users": [user]}));
            assert!(content.starts_with(&format!("<@{}>\n", user.as_str().unwrap())), "{content}");
        }
        more => panic!("several users may be pinged: {more:?}"),
    }
    assert!(content.chars().count() <= DISCORD_CONTENT_MAX);
    state.next_id += 1;
    let id = 1_300_000_000_000_000_000 + state.next_id;
    state.messages.insert(id, content.clone());
    state.arrivals.push(Instant::now());
    let remaining = if std::mem::take(&mut state.empty_bucket_next) { "0" } else { "4" };
    let headers = [("x-ratelimit-remaining", remaining), ("x-ratelimit-reset-after", "1.0")];
    (headers, Json(json!({"id": id.to_string(), "content": content, "channel_id": "1", "type": 0}))).into_response()
}

async fn read_message(
    State(channel): State<Channel>,
    UrlPath((_, _, message)): UrlPath<(String, String, u64)>,
) -> Response {
    let mut state = channel.0.lock().unwrap();
    state.reads += 1;
    match state.messages.get(&message) {
        Some(content) => Json(json!({"id": message.to_string(), "content": content, "type": 0})).into_response(),
        None => (StatusCode::NOT_FOUND, Json(json!({"message": "Unknown Message", "code": 10008}))).into_response(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn on_discord_each_outcome_once_after_a_429_and_a_crash() {
    let (channel, base) = Channel::start().await;

    let (Table { app, campaign, union, .. }, bot_token) = table_with_bot().await;
    let journal = tempfile::tempdir().unwrap();
    let config = || {
        let mut config =
            BotConfig::discord(&app.base, &bot_token, format!("{base}{WEBHOOK}"), journal.path().join("j"));
        config.max_wait = Duration::from_secs(5);
        config
    };
    let mut outcomes = vec![resolve(&app, &union, &campaign, 0).await, seal(&app, &union, &campaign, ATTACK).await];

    // Discord throttles the first message; the bot waits as asked and goes on. The answer to
    // the first message says the bucket is empty: the bot waits for it to refill (1 s).
    channel.0.lock().unwrap().throttle_next = true;
    channel.0.lock().unwrap().empty_bucket_next = true;
    let started = Instant::now();
    let report = Bot::new(config()).unwrap().run_until_idle().await.unwrap();
    assert_eq!((report.posted, report.recovered), (2, 0));
    assert!(started.elapsed() >= Duration::from_millis(950), "the 429's wait was not honoured");
    assert_eq!(channel.0.lock().unwrap().throttled, 1);
    let arrivals = channel.0.lock().unwrap().arrivals.clone();
    assert!(arrivals[1] - arrivals[0] >= Duration::from_millis(950), "the empty bucket was not waited out");

    // The messages are the outcomes' Discord Markdown, with the player's markup as text.
    let messages: Vec<String> = channel.0.lock().unwrap().messages.values().cloned().collect();
    for (message, outcome) in messages.iter().zip(&outcomes) {
        assert_eq!(message, &discord_markdown(outcome["text"]["markdown"].as_str().unwrap()));
        let marker = format!("-# adjutant:outcome:{}", outcome["id"].as_str().unwrap());
        assert_eq!(message.lines().last(), Some(marker.as_str()), "{message}");
        assert!(!message.contains("<sub>") && !message.contains("&lt;"), "{message}");
    }
    assert!(messages[0].lines().any(|l| l.starts_with("Check: ")), "the check line: {}", messages[0]);
    let sealed = &messages[1];
    assert!(
        sealed
            .contains("\\<@\u{200B}123\\> @\u{200B}everyone \\*\\*x\\*\\* \\[link\\](http:\u{200B}//e.x) #\u{200B} h"),
        "{sealed}"
    );
    // A crash between posting and acknowledging: the next bot reads the message back through
    // the webhook and acknowledges it instead of posting again.
    outcomes.push(resolve(&app, &union, &campaign, 2).await);
    let dying = Bot::new(config())
        .unwrap()
        .after_post(Arc::new(|_, _| Err(BotError::Other("the bot dies before acknowledging".into()))));
    dying.run_once().await.unwrap_err();
    assert_eq!(channel.0.lock().unwrap().messages.len(), 3);
    assert_eq!(feed(&app, &bot_token).await.len(), 1, "not acknowledged: served again");
    let report = Bot::new(config()).unwrap().run_until_idle().await.unwrap();
    assert_eq!((report.posted, report.recovered), (0, 1));
    assert_eq!(channel.0.lock().unwrap().messages.len(), 3, "posted twice");
    assert!(channel.0.lock().unwrap().reads >= 1);
    let crashed_message = *channel.0.lock().unwrap().messages.keys().last().unwrap();
    let ack = app
        .request(
            Method::POST,
            &format!("/v1/campaigns/{campaign}/outcomes/{}/ack", outcomes[2]["id"].as_str().unwrap()),
            Some(&bot_token),
            Some(json!({"forum_post_id": "1"})),
        )
        .await;
    assert_eq!(ack.ok(200)["forum_post_id"], crashed_message.to_string(), "acknowledged with Discord's message id");

    // Crashed again, and the message was deleted in the channel meanwhile: posted again, once.
    outcomes.push(resolve(&app, &union, &campaign, 3).await);
    Bot::new(config())
        .unwrap()
        .after_post(Arc::new(|_, _| Err(BotError::Other("dies".into()))))
        .run_once()
        .await
        .unwrap_err();
    let deleted = *channel.0.lock().unwrap().messages.keys().last().unwrap();
    channel.0.lock().unwrap().messages.remove(&deleted);
    let report = Bot::new(config()).unwrap().run_until_idle().await.unwrap();
    assert_eq!((report.posted, report.recovered), (1, 0));
    let fourth = format!("-# adjutant:outcome:{}", outcomes[3]["id"].as_str().unwrap());
    let copies = channel.0.lock().unwrap().messages.values().filter(|m| m.ends_with(&fourth)).count();
    assert_eq!(copies, 1);
    assert!(feed(&app, &bot_token).await.is_empty());
}

/// A managed campaign whose two players have forum handles and Discord ids: both deploy, and the
/// Union ends its first turn. (campaign, bot token)
async fn campaign_of_turns(app: &TestApp) -> (String, String) {
    let moderator = app.moderator().await;
    let campaign = app.campaign(&moderator, json!({"name": "Turns", "mode": "managed", "scenario": "short-acw"})).await;
    let mut tokens = vec![];
    for (side, handle, discord) in
        [("union", "grant", "80351110224678912"), ("confederate", "stonewall", "80351110224678913")]
    {
        let issued = app
            .request(
                Method::POST,
                &format!("/v1/campaigns/{campaign}/players"),
                Some(&moderator),
                Some(json!({"name": format!("@everyone {side}"), "side": side})),
            )
            .await;
        let issued = issued.ok(201).clone();
        let contact =
            json!({"forum_handle": handle, "discord_user_id": discord, "email": format!("{handle}@example.org")});
        let path = format!("/v1/campaigns/{campaign}/players/{}/contact", issued["id"].as_str().unwrap());
        app.request(Method::PUT, &path, Some(&moderator), Some(contact.clone())).await.ok(200);
        tokens.push(issued["token"].as_str().unwrap().to_owned());
    }
    let players = app.request(Method::GET, &format!("/v1/campaigns/{campaign}/players"), Some(&moderator), None).await;
    let listed = players.ok(200)["players"].as_array().unwrap().clone();
    let rebel = listed.iter().find(|p| p["side"] == "confederate").unwrap();
    assert_eq!(rebel["contact"]["forum_handle"], "stonewall");
    assert_eq!(rebel["contact"]["email"], "stonewall@example.org", "the moderator reads the address");
    let bad = json!({"forum_handle": "<@123> x"});
    let path =
        format!("/v1/campaigns/{campaign}/players/{}/contact", players.body["players"][0]["id"].as_str().unwrap());
    app.request(Method::PUT, &path, Some(&moderator), Some(bad)).await.problem(422, "body.forum_handle");
    for (i, token) in tokens.iter().enumerate() {
        app.post(token, &campaign, scripted(i)).await.ok(201);
    }
    app.post(&tokens[0], &campaign, json!({"kind": "end_turn", "body": {}})).await.ok(201);
    let bot = app.bot(&moderator, &campaign, "Bot").await;
    (campaign, bot)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_player_whose_turn_begins_is_mentioned_and_nobody_else() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let (campaign, bot_token) = campaign_of_turns(&app).await;
    let mentioned: Vec<(String, Value)> = feed(&app, &bot_token)
        .await
        .iter()
        .map(|o| (o["kind"].as_str().unwrap().to_owned(), o["mention"].clone()))
        .collect();
    let turns: Vec<&Value> = mentioned.iter().filter(|(k, _)| k == "turn_begins").map(|(_, m)| m).collect();
    assert_eq!(turns.len(), 2, "{mentioned:?}");
    assert_eq!(turns[0]["forum_handle"], "grant");
    assert_eq!(turns[1]["forum_handle"], "stonewall", "{mentioned:?}");
    assert!(turns.iter().all(|m| m.get("email").is_none()), "an email address reaches the bot");
    assert!(mentioned.iter().filter(|(k, _)| k != "turn_begins").all(|(_, m)| m.is_null()), "{mentioned:?}");

    // Discourse: each turn's reply starts with its player's @handle; no other reply mentions.
    let forum = Forum::described_by(&spec_json(fixture("discourse").to_str().unwrap()));
    let url = forum.start().await;
    let topics = Topics::parse(&format!("{campaign}={TOPIC}")).unwrap();
    let config = BotConfig::new(&app.base, &bot_token, &url, API_KEY, BOT_USER, topics);
    Bot::new(config).unwrap().run_until_idle().await.unwrap();
    let posts = forum.posts();
    let starts: Vec<&str> =
        posts.iter().filter(|p| p.raw.starts_with('@')).map(|p| p.raw.lines().next().unwrap()).collect();
    assert_eq!(starts, ["@grant", "@stonewall"], "{posts:?}");

    // Discord: the same, and `allowed_mentions` lets exactly that user be pinged (the stand-in
    // channel checks it on every message).
    let app = TestApp::spawn(Backend::Sqlite).await;
    let (_, bot_token) = campaign_of_turns(&app).await;
    let (channel, base) = Channel::start().await;
    let journal = tempfile::tempdir().unwrap();
    let config = BotConfig::discord(&app.base, &bot_token, format!("{base}{WEBHOOK}"), journal.path().join("j"));
    Bot::new(config).unwrap().run_until_idle().await.unwrap();
    let messages = channel.0.lock().unwrap().messages.clone();
    let pings: Vec<&str> =
        messages.values().filter(|c| c.starts_with("<@")).map(|c| c.lines().next().unwrap()).collect();
    assert_eq!(pings, ["<@80351110224678912>", "<@80351110224678913>"], "{messages:?}");

    // Discord's own description takes such a message.
    if let Some(prism) = Prism::binary() {
        let mock = Prism::start(&prism, &["mock", fixture("discord").to_str().unwrap()]).await;
        let body = json!({"content": "<@80351110224678913>\n**Turn 1**", "allowed_mentions": {"parse": [], "users": ["80351110224678913"]}});
        let answer =
            reqwest::Client::new().post(format!("{}{WEBHOOK}?wait=true", mock.url)).json(&body).send().await.unwrap();
        assert_eq!(answer.status(), 200, "{}", answer.text().await.unwrap());
    }
}
