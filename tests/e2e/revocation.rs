//! Tokens that can be taken back: moderators revoke player and bot tokens and rotate a player's
//! token; the operator revokes a moderator; a webhook's secret is rotated and a webhook deleted.
//! A revoked token is refused at once, on every server sharing the database.

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{on_both_backends, Backend, TestApp};

on_both_backends! {
    a_revoked_player_is_refused_at_once_on_every_replica => players;
    a_rotated_player_keeps_their_side_and_loses_the_old_token => rotation;
    revoked_bots_and_moderators_are_refused => bots_and_moderators;
    a_deleted_webhook_keeps_its_log_and_is_sent_nothing_more => webhooks;
}

async fn issue(app: &TestApp, moderator: &str, path: &str, body: Value) -> (String, String) {
    let answer = app.request(Method::POST, path, Some(moderator), Some(body)).await;
    let issued = answer.ok(201);
    (issued["id"].as_str().unwrap().to_owned(), issued["token"].as_str().unwrap().to_owned())
}

fn note(text: &str) -> Value {
    json!({"kind": "note", "body": {"text": text}})
}

async fn players(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    // A second server on the same database: a replica.
    let replica = TestApp::spawn_on(app.db.clone(), |_| {}).await;
    let moderator = app.moderator().await;
    let campaign = app.campaign(&moderator, json!({"name": "Gettysburg"})).await;
    let players = format!("/v1/campaigns/{campaign}/players");
    let (player_id, token) = issue(&app, &moderator, &players, json!({"name": "Meade", "side": "union"})).await;
    app.post(&token, &campaign, note("before")).await.ok(201);
    replica.post(&token, &campaign, note("on the replica")).await.ok(201);

    let revoke = format!("/v1/campaigns/{campaign}/players/{player_id}");
    app.request(Method::DELETE, &revoke, Some(&moderator), None).await.ok(204);
    // Refused everywhere at once, public reads included, on both servers.
    for server in [&app, &replica] {
        let refused = server.post(&token, &campaign, note("after")).await;
        assert_eq!(refused.problem(401, "Authorization")["rule"], "auth.token");
        server.request(Method::GET, "/v1/campaigns", Some(&token), None).await.problem(401, "Authorization");
    }
    // Revoking again is no error; the posts the player made stay in the log, theirs.
    replica.request(Method::DELETE, &revoke, Some(&moderator), None).await.ok(204);
    let log = app.get(&format!("/v1/campaigns/{campaign}/posts")).await;
    let posts = log.ok(200)["posts"].as_array().unwrap().clone();
    assert_eq!(posts.len(), 2, "{posts:?}");
    let audit = app.get(&format!("/v1/campaigns/{campaign}/audit")).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
    // A revoked player cannot be rotated back to life.
    let rotate = format!("/v1/campaigns/{campaign}/players/{player_id}/rotate");
    let refused = app.request(Method::POST, &rotate, Some(&moderator), None).await;
    assert_eq!(refused.problem(409, "path.player_id")["rule"], "token.revoked");
    // Someone else's player, or no player at all, is not found.
    let other = app.campaign(&moderator, json!({"name": "Elsewhere"})).await;
    let wrong = format!("/v1/campaigns/{other}/players/{player_id}");
    app.request(Method::DELETE, &wrong, Some(&moderator), None).await.problem(404, "path.player_id");
    let nobody = format!("/v1/campaigns/{campaign}/players/{}", uuid::Uuid::new_v4());
    app.request(Method::DELETE, &nobody, Some(&moderator), None).await.problem(404, "path.player_id");
}

async fn rotation(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let campaign = app.campaign(&moderator, json!({"name": "Shiloh"})).await;
    let players = format!("/v1/campaigns/{campaign}/players");
    let (player_id, old) = issue(&app, &moderator, &players, json!({"name": "Johnston", "side": "confederate"})).await;
    let first = app.post(&old, &campaign, note("one")).await;
    assert_eq!(first.ok(201)["author_id"], player_id.as_str(), "{}", first.text);

    let rotate = format!("/v1/campaigns/{campaign}/players/{player_id}/rotate");
    let rotated = app.request(Method::POST, &rotate, Some(&moderator), None).await;
    let issued = rotated.ok(200).clone();
    assert_eq!(issued["id"], player_id.as_str());
    assert_eq!(issued["side"], "confederate");
    let new = issued["token"].as_str().unwrap().to_owned();
    assert_ne!(new, old);
    app.post(&old, &campaign, note("old")).await.problem(401, "Authorization");
    let second = app.post(&new, &campaign, note("two")).await;
    assert_eq!(second.ok(201)["author_id"], player_id.as_str(), "{}", second.text);
    assert_eq!(second.body["side"], "confederate", "{}", second.text);
}

async fn bots_and_moderators(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let other_moderator = app.moderator().await;
    let campaign = app.campaign(&moderator, json!({"name": "Chancellorsville"})).await;
    let (bot_id, bot) =
        issue(&app, &moderator, &format!("/v1/campaigns/{campaign}/bots"), json!({"name": "Herald"})).await;
    let (_, union) = issue(
        &app,
        &moderator,
        &format!("/v1/campaigns/{campaign}/players"),
        json!({"name": "Hooker", "side": "union"}),
    )
    .await;
    app.request(Method::GET, "/v1/bot/feed", Some(&bot), None).await.ok(200);
    // Only the moderator who issued the bot revokes it.
    let revoke_bot = format!("/v1/bots/{bot_id}");
    app.request(Method::DELETE, &revoke_bot, Some(&other_moderator), None).await.problem(403, "Authorization");
    app.request(Method::GET, "/v1/bot/feed", Some(&bot), None).await.ok(200);
    app.request(Method::DELETE, &revoke_bot, Some(&moderator), None).await.ok(204);
    app.request(Method::GET, "/v1/bot/feed", Some(&bot), None).await.problem(401, "Authorization");
    // A player is not a bot.
    let not_a_bot = format!("/v1/bots/{}", uuid::Uuid::new_v4());
    app.request(Method::DELETE, &not_a_bot, Some(&moderator), None).await.problem(404, "path.bot_id");

    // The operator revokes a moderator: all of their authority goes with the token.
    let moderator_id = app.request(Method::GET, &format!("/v1/campaigns/{campaign}"), None, None).await.ok(200)
        ["moderator_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let revoke_moderator = format!("/v1/moderators/{moderator_id}");
    app.request(Method::DELETE, &revoke_moderator, Some(&other_moderator), None).await.problem(403, "Authorization");
    app.request(Method::DELETE, &revoke_moderator, Some(&app.admin_token), None).await.ok(204);
    for (method, path, body) in [
        (Method::POST, "/v1/campaigns".to_owned(), Some(json!({"name": "Again"}))),
        (Method::POST, format!("/v1/campaigns/{campaign}/players"), Some(json!({"name": "X", "side": "union"}))),
        (Method::GET, format!("/v1/campaigns/{campaign}/webhooks"), None),
    ] {
        app.request(method, &path, Some(&moderator), body).await.problem(401, "Authorization");
    }
    // The players they issued play on.
    app.post(&union, &campaign, note("still here")).await.ok(201);
    // Only moderators are revoked here.
    let player_as_moderator = format!("/v1/moderators/{bot_id}");
    app.request(Method::DELETE, &player_as_moderator, Some(&app.admin_token), None)
        .await
        .problem(404, "path.moderator_id");
}

async fn webhooks(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let moderator = app.moderator().await;
    let campaign = app.campaign(&moderator, json!({"name": "Fredericksburg"})).await;
    let hooks = format!("/v1/campaigns/{campaign}/webhooks");
    let registered =
        app.request(Method::POST, &hooks, Some(&moderator), Some(json!({"url": "http://127.0.0.1:9/hook"}))).await;
    let webhook = registered.ok(201).clone();
    let id = webhook["id"].as_str().unwrap();
    let rotated = app.request(Method::POST, &format!("{hooks}/{id}/rotate-secret"), Some(&moderator), None).await;
    let secret = rotated.ok(200)["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"));
    assert_ne!(secret, webhook["secret"].as_str().unwrap());

    app.request(Method::DELETE, &format!("{hooks}/{id}"), Some(&moderator), None).await.ok(204);
    app.request(Method::DELETE, &format!("{hooks}/{id}"), Some(&moderator), None).await.ok(204);
    let listed = app.request(Method::GET, &hooks, Some(&moderator), None).await;
    let view = &listed.ok(200)["webhooks"][0];
    assert_eq!(view["active"], false, "{}", listed.text);
    assert_eq!(view["disabled_reason"], "deleted by the campaign's moderator");
    app.request(Method::GET, &format!("{hooks}/{id}/deliveries"), Some(&moderator), None).await.ok(200);
    let refused = app.request(Method::POST, &format!("{hooks}/{id}/rotate-secret"), Some(&moderator), None).await;
    assert_eq!(refused.problem(409, "path.webhook_id")["rule"], "webhook.disabled");
    // Nothing is queued for it any more.
    let union = app.player(&moderator, &campaign, "union").await;
    app.post(&union, &campaign, note("after the webhook went")).await.ok(201);
    assert_eq!(app.db.count("webhook_outbox").await, 0);
}
