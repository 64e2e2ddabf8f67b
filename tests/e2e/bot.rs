//! The reference bot against a real Adjutant (SQLite and PostgreSQL) and a local
//! Discourse-style forum: it posts each outcome once, waits out a 429 as Retry-After says,
//! acknowledges with the forum's post id, and after a crash between posting and acknowledging
//! finds its own reply instead of posting again.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use adjutant_bot::{run_until, Bot, BotCommand, BotConfig, BotError, Format, Target, Topics};
use adjutant_e2e::forum::{Forum, ForumPost, API_KEY, BOT_USER, TOPIC};
use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{on_both_backends, seed_morning, Backend, Game, Table, TestApp};

on_both_backends! {
    the_bot_posts_each_outcome_once_and_survives_a_crash => bot_posts_once;
    players_text_reaches_the_forum_as_literal_text => markup_injection;
    a_marker_inside_a_post_is_not_the_bots_reply => marker_spoofing;
    bbcode_on_request_to_discourse_or_to_files => bbcode_on_request;
    following_the_event_stream_posts_without_waiting_for_the_poll => follow_events;
    the_map_goes_up_once_with_the_turns_first_outcome => map_with_the_turn;
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

/// Bot replies per outcome marker.
fn replies_by_marker(forum: &Forum) -> BTreeMap<String, Vec<u64>> {
    let mut by = BTreeMap::new();
    for post in forum.posts().iter().filter(|p| p.username == BOT_USER) {
        let at = post.raw.find("adjutant:outcome:").expect("every bot reply has a marker");
        by.entry(post.raw[at..at + 17 + 36].to_owned()).or_insert_with(Vec::new).push(post.id);
    }
    by
}

async fn bot_posts_once(backend: Backend) {
    let (Table { app, campaign, union: player, .. }, bot_token) = forum_table(backend).await;

    let forum = Forum::default();
    let forum_url = forum.start().await;
    forum.add("general_lee", "Opening orders for the campaign.");
    let config = || {
        let topics = Topics::parse(&format!("{campaign}={TOPIC}")).unwrap();
        let mut config = BotConfig::new(&app.base, &bot_token, &forum_url, API_KEY, BOT_USER, topics);
        config.max_wait = Duration::from_secs(5);
        config
    };

    let mut outcomes = Vec::new();
    for i in 0..3 {
        outcomes.push(resolve(&app, &player, &campaign, i).await);
    }
    // A player quotes the first outcome's marker: that is not the bot's reply.
    let first_marker = format!("adjutant:outcome:{}", outcomes[0]["id"].as_str().unwrap());
    forum.add("general_grant", &format!("[quote]{first_marker}[/quote] Lucky roll!"));

    // The forum throttles the first reply once; the bot waits as asked and goes on.
    forum.throttle_next("1");
    let started = Instant::now();
    let report = Bot::new(config()).unwrap().run_until_idle().await.unwrap();
    assert_eq!((report.posted, report.recovered, report.skipped), (3, 0, 0));
    assert!(started.elapsed() >= Duration::from_millis(950), "Retry-After: 1 was not honoured");
    assert_eq!(forum.throttled(), 1);
    assert_eq!(forum.refused(), 0);
    let replies = replies_by_marker(&forum);
    assert_eq!(replies.len(), 3);
    assert!(replies.values().all(|ids| ids.len() == 1));
    for outcome in &outcomes {
        let marker = format!("adjutant:outcome:{}", outcome["id"].as_str().unwrap());
        let post_id = replies[&marker][0];
        let post = forum.posts().into_iter().find(|p| p.id == post_id).unwrap();
        assert_eq!(post.raw, outcome["text"]["markdown"].as_str().unwrap(), "the reply is the outcome's Markdown");
    }
    assert!(feed(&app, &bot_token).await.is_empty(), "everything acknowledged");
    // Nothing new: a pass does nothing.
    let idle = Bot::new(config()).unwrap().run_until_idle().await.unwrap();
    assert_eq!(idle.acknowledged(), 0);

    // A crash between posting and acknowledging.
    let fourth = resolve(&app, &player, &campaign, 3).await;
    let fifth = resolve(&app, &player, &campaign, 4).await;
    let crashed = Arc::new(Mutex::new(None));
    let seen = crashed.clone();
    let dying = Bot::new(config()).unwrap().after_post(Arc::new(move |outcome, post_id| {
        *seen.lock().unwrap() = Some((outcome, post_id.to_owned()));
        Err(BotError::Other("the bot dies before acknowledging".into()))
    }));
    let err = dying.run_once().await.unwrap_err();
    assert!(err.to_string().contains("dies"), "{err}");
    let (crashed_outcome, crashed_post) = crashed.lock().unwrap().clone().unwrap();
    assert_eq!(crashed_outcome.to_string(), fourth["id"].as_str().unwrap());
    assert_eq!(replies_by_marker(&forum).len(), 4, "the reply was posted");
    let pending: Vec<Value> = feed(&app, &bot_token).await;
    assert_eq!(pending.len(), 2, "not acknowledged: served again");

    // A fresh bot finds its reply to the fourth, acknowledges it, and posts only the fifth.
    let report = Bot::new(config()).unwrap().run_until_idle().await.unwrap();
    assert_eq!((report.posted, report.recovered), (1, 1));
    let replies = replies_by_marker(&forum);
    assert_eq!(replies.len(), 5);
    assert!(replies.values().all(|ids| ids.len() == 1), "posted twice: {replies:?}");
    assert!(feed(&app, &bot_token).await.is_empty());
    assert_eq!(forum.posts().len(), 2 + 5);

    // The acknowledgement names the reply the bot found (a second one does not change it).
    let ack = app
        .request(
            Method::POST,
            &format!("/v1/campaigns/{campaign}/outcomes/{}/ack", fourth["id"].as_str().unwrap()),
            Some(&bot_token),
            Some(json!({"forum_post_id": "999999"})),
        )
        .await;
    assert_eq!(ack.ok(200)["forum_post_id"], crashed_post.as_str());
    let fifth_marker = format!("adjutant:outcome:{}", fifth["id"].as_str().unwrap());
    assert_eq!(replies[&fifth_marker].len(), 1);
}

/// Markup a player or moderator might try to slip into the forum in the bot's name.
const ATTACK: &str = "@staff <b>x</b> [url=http://e.x]x[/url] ![i](http://x) # h";

/// What must never appear in forum text as written by people.
const INJECTED: [&str; 9] = ["@staff", "@here", "<b>", "<i>", "[url", "[b]x", "![", "http://", "# h"];

/// Whether `needle` occurs in `text` other than right after a backslash (Markdown's escape).
fn unescaped(text: &str, needle: &str) -> bool {
    text.match_indices(needle).any(|(at, _)| !text[..at].ends_with('\\'))
}

/// A resolver table that plays on the forum, and its bot's token.
async fn forum_table(backend: Backend) -> (Table, String) {
    let t = Table::open(TestApp::spawn(backend).await, "Forum", "acw-25mm").await;
    let bot = t.app.bot(&t.moderator, &t.campaign, "Forum bot").await;
    (t, bot)
}

fn bot_config(app: &TestApp, bot_token: &str, forum_url: &str, campaign: &str) -> BotConfig {
    let topics = Topics::parse(&format!("{campaign}={TOPIC}")).unwrap();
    let mut config = BotConfig::new(&app.base, bot_token, forum_url, API_KEY, BOT_USER, topics);
    config.max_wait = Duration::from_secs(5);
    config
}

async fn markup_injection(backend: Backend) {
    let (Table { app, moderator, campaign, union, confederate: rebel }, bot_token) = forum_table(backend).await;

    // Line breaks are refused at the door, wherever the text goes.
    let forged = format!("{ATTACK}\nCheck: 9:51:45 → N = 95145, √N = 308.455831522115, decimals 9–10 = 99");
    let seal = |topic: &str, role: &str, choice: &str| json!({"kind": "seal", "body": {"topic": topic, "role": role, "choice": choice}});
    app.post(&union, &campaign, seal(&forged, "attacker", "stay")).await.problem(422, "body.body.topic");
    app.post(&union, &campaign, seal("t", "attacker", "stay\nCheck: 1")).await.problem(422, "body.body.choice");
    let note = json!({"kind": "note", "body": {"text": "fine\n# forged"}});
    app.post(&union, &campaign, note).await.problem(422, "body.body.text");
    let inputs =
        json!({"kind": "resolve", "body": {"action": "formation_test", "inputs": {"class": "B", "unit": "a\rb"}}});
    app.post(&union, &campaign, inputs).await.problem(422, "body.body.inputs.unit");
    let name = json!({"name": format!("Alice\n{ATTACK}"), "side": "union"});
    let answer =
        app.request(Method::POST, &format!("/v1/campaigns/{campaign}/players"), Some(&moderator), Some(name)).await;
    answer.problem(422, "body.name");

    // On one line, the same text is taken, and shows in the forum as the characters typed.
    let name = json!({"name": format!("Alice {ATTACK}"), "side": "union"});
    let answer =
        app.request(Method::POST, &format!("/v1/campaigns/{campaign}/players"), Some(&moderator), Some(name)).await;
    answer.ok(201);
    app.post(&union, &campaign, seal(ATTACK, "attacker", "stay <i>")).await.ok(201);
    app.post(&rebel, &campaign, seal(ATTACK, "defender", "@here [b]x[/b]")).await.ok(201);
    let rollback = json!({"kind": "rollback", "body": {"to_seq": 1, "reason": format!("{ATTACK} Check: forged")}});
    let answer = app.post(&moderator, &campaign, rollback).await;
    answer.ok(201);

    let page = app.get(&format!("/v1/campaigns/{campaign}/outcomes?limit=100")).await;
    let outcomes = page.ok(200)["outcomes"].as_array().unwrap().clone();
    let kinds: Vec<&str> = outcomes.iter().filter_map(|o| o["kind"].as_str()).collect();
    assert_eq!(kinds, ["sealed", "sealed", "revealed", "rollback"], "{outcomes:?}");
    for outcome in &outcomes {
        for markup in ["bbcode", "markdown"] {
            let text = outcome["text"][markup].as_str().unwrap();
            for injected in INJECTED {
                assert!(!unescaped(text, injected), "{injected:?} in the {markup} of {}: {text}", outcome["kind"]);
            }
            assert!(!text.lines().any(|l| l.starts_with("Check:")), "a forged check line: {text}");
        }
        // The characters typed are all there, escaped.
        let bbcode = outcome["text"]["bbcode"].as_str().unwrap();
        assert!(bbcode.contains("&lt;b&gt;x&lt;/b&gt; &#91;url=http:\u{200B}//e.x&#93;x&#91;/url&#93;"), "{bbcode}");
        let markdown = outcome["text"]["markdown"].as_str().unwrap();
        assert!(
            markdown.contains("&lt;b&gt;x&lt;/b&gt; \\[url=http:\u{200B}//e.x\\]x\\[/url\\] !\\[i\\](http:"),
            "{markdown}"
        );
    }

    // The bot posts exactly that.
    let forum = Forum::default();
    let forum_url = forum.start().await;
    let report = Bot::new(bot_config(&app, &bot_token, &forum_url, &campaign)).unwrap().run_until_idle().await.unwrap();
    assert_eq!(report.posted, 4);
    for post in forum.posts() {
        for injected in INJECTED {
            assert!(!unescaped(&post.raw, injected), "{injected:?} posted: {}", post.raw);
        }
    }
}

async fn marker_spoofing(backend: Backend) {
    let (Table { app, campaign, union, confederate: rebel, .. }, bot_token) = forum_table(backend).await;
    let seal =
        |topic: &str, role: &str| json!({"kind": "seal", "body": {"topic": topic, "role": role, "choice": "stay"}});
    let first = app.post(&union, &campaign, seal("first", "attacker")).await.ok(201)["outcomes"][0].clone();
    let first_id = first["id"].as_str().unwrap().to_owned();
    // The other player reads the first outcome's id off the public feed and puts its marker
    // into a seal topic of their own.
    let spoof = format!("adjutant:outcome:{first_id}");
    let second = app.post(&rebel, &campaign, seal(&spoof, "attacker")).await.ok(201)["outcomes"][0].clone();
    let second_text = second["text"]["markdown"].as_str().unwrap().to_owned();
    assert!(second_text.contains(&spoof), "the topic is shown as typed: {second_text}");

    // The bot's reply to the second outcome is on the forum already (a crash before its
    // acknowledgement); the first outcome was never posted.
    let forum = Forum::default();
    let forum_url = forum.start().await;
    let earlier = forum.add(BOT_USER, &second_text);
    let report = Bot::new(bot_config(&app, &bot_token, &forum_url, &campaign)).unwrap().run_until_idle().await.unwrap();
    assert_eq!((report.posted, report.recovered), (1, 1), "the first outcome was taken as posted");
    let posts = forum.posts();
    let reply = posts.iter().find(|p| p.id != earlier).expect("the first outcome's reply");
    assert_eq!(reply.raw, first["text"]["markdown"].as_str().unwrap());
    let ack = app
        .request(
            Method::POST,
            &format!("/v1/campaigns/{campaign}/outcomes/{}/ack", second["id"].as_str().unwrap()),
            Some(&bot_token),
            Some(json!({"forum_post_id": "999999"})),
        )
        .await;
    assert_eq!(ack.ok(200)["forum_post_id"], earlier.to_string(), "the second was recovered from its own reply");
}

/// `--format bbcode`: BBCode to Discourse, or one file per outcome for a BBCode forum, which a
/// moderator or a forum-side script posts; each file is written once, even after a crash.
async fn bbcode_on_request(backend: Backend) {
    let (Table { app, campaign, union, confederate: rebel, .. }, bot_token) = forum_table(backend).await;
    let seal =
        |topic: &str, role: &str| json!({"kind": "seal", "body": {"topic": topic, "role": role, "choice": "stay"}});
    let first = app.post(&union, &campaign, seal(ATTACK, "attacker")).await.ok(201)["outcomes"][0].clone();

    let forum = Forum::default();
    let forum_url = forum.start().await;
    let mut config = bot_config(&app, &bot_token, &forum_url, &campaign);
    config.target = Target::Discourse { format: Format::Bbcode };
    let report = Bot::new(config).unwrap().run_until_idle().await.unwrap();
    assert_eq!(report.posted, 1);
    let bbcode = first["text"]["bbcode"].as_str().unwrap();
    assert_eq!(forum.posts()[0].raw, bbcode);
    let id = first["id"].as_str().unwrap();
    assert!(bbcode.ends_with(&format!("[size=1][color=gray]adjutant:outcome:{id}[/color][/size]")), "{bbcode}");
    assert!(feed(&app, &bot_token).await.is_empty());

    // Files, for a forum the bot cannot post to.
    let second = app.post(&rebel, &campaign, seal("hold the ford", "defender")).await.ok(201)["outcomes"].clone();
    let dir = tempfile::tempdir().unwrap();
    let files = || BotConfig::files(&app.base, &bot_token, dir.path(), Format::Bbcode);
    // A crash after writing and before acknowledging: the file is not written twice.
    let dying = Bot::new(files()).unwrap().after_post(Arc::new(|_, _| Err(BotError::Other("dies".into()))));
    dying.run_once().await.unwrap_err();
    let report = Bot::new(files()).unwrap().run_until_idle().await.unwrap();
    assert!(report.recovered == 1, "{report:?}");
    let folder = dir.path().join(&campaign);
    let mut written: Vec<String> =
        std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    written.sort();
    let outcomes = second.as_array().unwrap();
    assert_eq!(written.len(), outcomes.len(), "{written:?}");
    for (name, outcome) in written.iter().zip(outcomes) {
        let id = outcome["id"].as_str().unwrap();
        assert!(name.ends_with(&format!("-{id}.bbcode")), "{name}");
        let text = std::fs::read_to_string(folder.join(name)).unwrap();
        assert_eq!(text, outcome["text"]["bbcode"].as_str().unwrap());
        assert!(text.ends_with(&format!("[size=1][color=gray]adjutant:outcome:{id}[/color][/size]")), "{text}");
    }
    assert!(feed(&app, &bot_token).await.is_empty());
}

/// With `--follow`, an outcome reaches the forum as soon as it is posted: the bot's pause
/// between passes is an hour here, and the event stream wakes it.
async fn follow_events(backend: Backend) {
    let (Table { app, campaign, union, .. }, bot_token) = forum_table(backend).await;
    let forum = Forum::default();
    let forum_url = forum.start().await;
    let command = BotCommand {
        config: bot_config(&app, &bot_token, &forum_url, &campaign),
        once: false,
        poll: Duration::from_secs(3600),
        follow: vec![campaign.parse().unwrap()],
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(run_until(command, async {
        let _ = stopped.await;
    }));
    for i in 0..2 {
        let outcome = resolve(&app, &union, &campaign, i).await;
        let marker = format!("adjutant:outcome:{}", outcome["id"].as_str().unwrap());
        // Five minutes for a busy machine: far more than a pass takes, far less than the hour.
        let deadline = Instant::now() + Duration::from_secs(300);
        while !replies_by_marker(&forum).contains_key(&marker) {
            assert!(!running.is_finished(), "the bot stopped");
            assert!(Instant::now() < deadline, "the outcome waited for the poll");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let _ = stop.send(());
    running.await.unwrap().unwrap();
    assert_eq!(replies_by_marker(&forum).len(), 2);
    assert!(feed(&app, &bot_token).await.is_empty());
}

/// With `map` on, the outcome that opens a turn carries the map picture (one upload), above
/// its marker line; other outcomes carry none.
async fn map_with_the_turn(backend: Backend) {
    let g = Game::start(TestApp::spawn(backend).await, "Short ACW", json!({})).await;
    let (app, campaign) = (&g.app, &g.campaign);
    let bot_token = app.bot(&g.moderator, campaign, "Bot").await;
    for i in 0..2 {
        g.step(i).await;
    }
    // The map of the turn's first moment, before the game moves on (the bot posts later).
    let then = app.client.get(format!("{}/v1/campaigns/{campaign}/map.png?at=2", app.base)).send().await.unwrap();
    let then = then.bytes().await.unwrap().to_vec();
    g.step(2).await;
    let now = app.client.get(format!("{}/v1/campaigns/{campaign}/map.png", app.base)).send().await.unwrap();
    assert_ne!(now.bytes().await.unwrap().to_vec(), then, "the game moved on: the map now differs");
    let forum = Forum::default();
    let forum_url = forum.start().await;
    let mut config = bot_config(app, &bot_token, &forum_url, campaign);
    config.map = true;
    let report = Bot::new(config).unwrap().run_until_idle().await.unwrap();
    assert_eq!(report.posted, 5, "the sealed deployment, both revealed, the first turn and a move");
    let uploads = forum.uploads();
    assert_eq!(uploads.len(), 1, "one map for the one turn");
    let body = &uploads[0];
    let has = |needle: &[u8]| body.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"name=\"upload_type\"\r\n\r\ncomposer") && has(b"filename=\"map.png\"") && has(b"\x89PNG\r\n"));
    assert!(has(&then), "the map uploaded is the map as it stood at the turn's beginning, not now");
    let posts = forum.posts();
    let with_map: Vec<&ForumPost> = posts.iter().filter(|p| p.raw.contains("![Map](upload://map1.png)")).collect();
    assert_eq!(with_map.len(), 1);
    assert!(with_map[0].raw.starts_with("**Turn 1"), "{}", with_map[0].raw);
    let last = with_map[0].raw.lines().last().unwrap();
    assert!(last.starts_with("<sub>adjutant:outcome:"), "the marker stays last: {last}");
    assert!(feed(app, &bot_token).await.is_empty());
}
