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

mod replicas {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_token_revoked_or_rotated_while_a_replica_is_not_listening_is_refused_there() {
        if adjutant_e2e::postgres_admin_url().is_none() {
            return;
        }
        super::unheard().await;
    }

    /// On one runtime thread a replica's listener runs only when the test waits: a revocation
    /// that returned before every replica had forgotten the token would be seen here.
    #[tokio::test(flavor = "current_thread")]
    async fn a_revocation_returns_once_every_replica_has_forgotten_the_token() {
        if adjutant_e2e::postgres_admin_url().is_none() {
            return;
        }
        super::forgotten_everywhere().await;
    }
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

/// Cuts this database's listening connections (each server's `LISTEN`) again and again until
/// `stop` is set, so that the servers mostly miss what is told meanwhile; how many it cut.
async fn cut_listeners(url: String, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) -> i64 {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&url).await.expect("connect to PostgreSQL");
    let mut cut = 0;
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        let killed: i64 = sqlx::query_scalar(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()
               AND (query LIKE 'LISTEN%'
                    OR pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = 1097099893))",
        )
        .fetch_one(&mut conn)
        .await
        .expect("terminate the listeners");
        cut += killed;
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    cut
}

/// A replica that knew a token (it served it a moment ago) and whose listening connection is
/// cut while the token is revoked, or another is rotated, refuses the old tokens all the same.
async fn unheard() {
    let app = TestApp::spawn(Backend::Postgres).await;
    let replica = TestApp::spawn_on(app.db.clone(), |_| {}).await;
    let moderator = app.moderator().await;
    let campaign = app.campaign(&moderator, json!({"name": "Antietam"})).await;
    let players = format!("/v1/campaigns/{campaign}/players");
    let (revoked_id, revoked) = issue(&app, &moderator, &players, json!({"name": "Lee", "side": "confederate"})).await;
    let (rotated_id, rotated) = issue(&app, &moderator, &players, json!({"name": "McClellan", "side": "union"})).await;
    for token in [&revoked, &rotated] {
        replica.post(token, &campaign, note("known here")).await.ok(201);
    }

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cutting = tokio::spawn(cut_listeners(app.db.url.clone(), stop.clone()));
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    app.request(Method::DELETE, &format!("{players}/{revoked_id}"), Some(&moderator), None).await.ok(204);
    let rotate = format!("{players}/{rotated_id}/rotate");
    let new =
        app.request(Method::POST, &rotate, Some(&moderator), None).await.ok(200)["token"].as_str().unwrap().to_owned();
    for token in [&revoked, &rotated] {
        replica.post(token, &campaign, note("after")).await.problem(401, "Authorization");
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(cutting.await.expect("the cutting task") > 0, "no listening connection was cut");

    // Listening again, the replica still refuses them, and takes the rotated player's new token.
    for token in [&revoked, &rotated] {
        replica.post(token, &campaign, note("later")).await.problem(401, "Authorization");
    }
    replica.post(&new, &campaign, note("with the new token")).await.ok(201);
}

/// Three stores on one database (three servers): each revocation on the first returns only once
/// the other two have forgotten the token, though each served it from what it kept a moment
/// before (shown by changing the token behind their backs, which they do not hear of).
async fn forgotten_everywhere() {
    use adjutant_store::{NewPrincipal, Principal, PrincipalKind};
    let db = adjutant_e2e::TestDb::new(Backend::Postgres).await;
    let (revoker, replicas) = (db.store().await, [db.store().await, db.store().await]);
    let mut round = 0u8;
    let mut kept_rounds = 0;
    while kept_rounds < 30 {
        round += 1;
        assert!(round < 100, "the replicas never kept a principal");
        let principal = Principal {
            id: uuid::Uuid::new_v4(),
            kind: PrincipalKind::Moderator,
            name: format!("Moderator {round}"),
            campaign_id: None,
            side: None,
            created_by: None,
            created_at: chrono::Utc::now(),
        };
        let token_hash = [round; 32];
        let id = revoker.create_principal(NewPrincipal { principal, token_hash }).await.unwrap().id;
        for replica in &replicas {
            assert!(replica.principal_by_token_hash(&token_hash).await.unwrap().is_some());
        }
        let elsewhere = format!("ee{round:02x}{}", "00".repeat(30));
        db.execute(&format!("UPDATE principals SET token_hash = '\\x{elsewhere}' WHERE id = '{id}'")).await;
        let mut kept = true;
        for replica in &replicas {
            kept &= replica.principal_by_token_hash(&token_hash).await.unwrap().is_some();
        }
        if !kept {
            // A replica whose listener is not listening yet keeps nothing: try again.
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            continue;
        }
        kept_rounds += 1;
        assert!(revoker.revoke_principal(id, chrono::Utc::now()).await.unwrap());
        for (i, replica) in replicas.iter().enumerate() {
            let read = replica.principal_by_token_hash(&token_hash).await.unwrap();
            assert!(read.is_none(), "round {round}: replica {i} still took the revoked token");
        }
    }
}
