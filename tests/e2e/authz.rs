//! Who may do what: every endpoint × every kind of caller, from one table.
//!
//! A new endpoint is covered by adding one row to `MATRIX`; `every_operation_has_a_row` fails
//! while an operation of `/v1/openapi.json`, or a route of `adjutant_server::routes::OTHER_ROUTES`
//! (the pages, assets and docs), has none, and `every_route_of_the_router_has_a_row` fails while
//! the router's sources declare a route that is in neither, so none can be forgotten.

use std::collections::BTreeSet;

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{scripted, Backend, Game, TestApp};
use adjutant_server::routes::OTHER_ROUTES;

/// The callers, in the order of the columns of `MATRIX`. A token that is not known is refused
/// everywhere, public reads included: it must not pass for no token at all.
const CALLERS: [&str; 9] = [
    "no token",
    "wrong token",
    "union player",
    "confederate player",
    "player of another campaign",
    "bot",
    "moderator",
    "other moderator",
    "operator",
];

struct Row {
    method: &'static str,
    /// The path as the OpenAPI document writes it; `{id}` is the campaign, `{seq}` its post 1.
    path: &'static str,
    /// The JSON body sent (empty: none).
    body: &'static str,
    /// The status each caller gets, in the order of `CALLERS`.
    expect: [u16; 9],
}

const fn row(method: &'static str, path: &'static str, body: &'static str, expect: [u16; 9]) -> Row {
    Row { method, path, body, expect }
}

const NOTE: &str = r#"{"kind": "note", "body": {"text": "advance"}}"#;

/// Stands for an upload of a valid scenario (a text of its own, not the one the moderator has
/// uploaded already), which a row's body cannot spell.
const UPLOAD: &str = "<an upload>";

#[rustfmt::skip]
const MATRIX: &[Row] = &[
    //   method  path                                   body                                   none wrong union conf other bot  mod  omod  op
    row("GET",  "/healthz",                            "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/whoami",                          "",                                    [401, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("POST", "/v1/moderators",                      r#"{"name": "Halleck"}"#,              [401, 401, 403,  403, 403,  403, 403, 403,  201]),
    row("POST", "/v1/campaigns",                       r#"{"name": "Shiloh"}"#,               [401, 401, 403,  403, 403,  403, 201, 201,  403]),
    row("GET",  "/v1/campaigns",                       "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("POST", "/v1/scenarios",                       UPLOAD,                                [401, 401, 403,  403, 403,  403, 201, 201,  403]),
    row("GET",  "/v1/scenarios",                       "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("POST", "/v1/scenarios/check",                 r#"{"text": "name = 1"}"#,             [401, 401, 403,  403, 403,  403, 200, 200,  403]),
    // The moderator's upload: another moderator, and everyone else, is told there is none.
    row("GET",  "/v1/scenarios/{scenario_id}",         "",                                    [404, 401, 404,  404, 404,  404, 200, 404,  404]),
    row("GET",  "/v1/scenarios/{scenario_id}/map.svg", "",                                    [404, 401, 404,  404, 404,  404, 200, 404,  404]),
    row("GET",  "/v1/scenarios/{scenario_id}/map.png", "",                                    [404, 401, 404,  404, 404,  404, 200, 404,  404]),
    row("GET",  "/v1/campaigns/{id}",                  "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("POST", "/v1/campaigns/{id}/players",          r#"{"name": "Grant", "side": "union"}"#, [401, 401, 403, 403, 403, 403, 201, 403,  403]),
    row("POST", "/v1/campaigns/{id}/bots",             r#"{"name": "Herald"}"#,               [401, 401, 403,  403, 403,  403, 201, 403,  403]),
    row("POST", "/v1/campaigns/{id}/posts",            NOTE,                                  [401, 401, 201,  201, 403,  403, 201, 403,  403]),
    row("GET",  "/v1/campaigns/{id}/posts",            "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/events",           "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/posts/{seq}",      "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/posts/{seq}/audit", "",                                   [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/tools/result-number",             "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/tools/reinforcement",             "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/tools/sealed-delay",              "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/tools/combat",                    "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/audit",            "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/fairness",         "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/export",           "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/keys",                            "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/state",            "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/turns",            "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/units/{unit}/moves", "",                                  [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/map.svg",          "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/map.png",          "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/post-kinds",                      "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/rulesets",                        "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/rulesets/{name}",                 "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/outcomes",         "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/bot/feed",                        "",                                    [401, 401, 403,  403, 403,  200, 403, 403,  403]),
    row("POST", "/v1/campaigns/{id}/outcomes/{outcome_id}/ack", r#"{"forum_post_id": "77"}"#, [401, 401, 403,  403, 403,  200, 403, 403,  403]),
    row("POST", "/v1/bots",                            r#"{"name": "Herald"}"#,               [401, 401, 403,  403, 403,  403, 201, 201,  403]),
    row("POST", "/v1/campaigns/{id}/webhooks",         r#"{"url": "http://127.0.0.1:9/hook"}"#, [401, 401, 403, 403, 403, 403, 201, 403,  403]),
    row("GET",  "/v1/campaigns/{id}/webhooks",         "",                                    [401, 401, 403,  403, 403,  403, 200, 403,  403]),
    row("GET",  "/v1/campaigns/{id}/webhooks/{webhook_id}/deliveries", "",                    [401, 401, 403,  403, 403,  403, 200, 403,  403]),
    // Rotation before revocation: a revoked player or deleted webhook cannot be rotated.
    row("POST", "/v1/campaigns/{id}/webhooks/{webhook_id}/rotate-secret", "",                 [401, 401, 403,  403, 403,  403, 200, 403,  403]),
    row("DELETE", "/v1/campaigns/{id}/webhooks/{webhook_id}", "",                             [401, 401, 403,  403, 403,  403, 204, 403,  403]),
    row("POST", "/v1/campaigns/{id}/players/{player_id}/rotate", "",                          [401, 401, 403,  403, 403,  403, 200, 403,  403]),
    row("POST", "/v1/campaigns/{id}/players/{player_id}/replace", r#"{"name": "Sherman"}"#,  [401, 401, 403,  403, 403,  403, 201, 403,  403]),
    row("PUT",  "/v1/campaigns/{id}/players/{player_id}/contact", r#"{"forum_handle": "grant"}"#, [401, 401, 403, 403, 403,  403, 200, 403,  403]),
    row("DELETE", "/v1/campaigns/{id}/players/{player_id}", "",                               [401, 401, 403,  403, 403,  403, 204, 403,  403]),
    row("GET",  "/v1/campaigns/{id}/players",          "",                                    [401, 401, 403,  403, 403,  403, 200, 403,  403]),
    row("GET",  "/v1/campaigns/{id}/mails",            "",                                    [401, 401, 403,  403, 403,  403, 200, 403,  403]),
    row("DELETE", "/v1/bots/{bot_id}",                 "",                                    [401, 401, 403,  403, 403,  403, 204, 403,  403]),
    row("DELETE", "/v1/moderators/{moderator_id}",     "",                                    [401, 401, 403,  403, 403,  403, 403, 403,  204]),
    // The routes outside the document (`OTHER_ROUTES`): public, but a bad token is still refused.
    row("GET",  "/campaigns/{id}",                     "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/campaigns/{id}/audit",               "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/campaigns/{id}/posts/{seq}/audit",   "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/campaigns/{id}/fairness",            "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/play/{id}",                        "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/console",                          "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/console/editor",                   "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/assets/page.js",                   "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/assets/history.js",                "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/assets/app.css",                   "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/assets/common.js",                 "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/assets/play.js",                   "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/assets/console.js",                "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/assets/editor.js",                 "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/docs",                               "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/docs/",                              "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/docs/{*rest}",                       "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/openapi.json",                    "",                                    [200, 401, 200,  200, 200,  200, 200, 200,  200]),
    // The service's metrics, which tell how every campaign goes: the operator's alone.
    row("GET",  "/metrics",                            "",                                    [401, 401, 403,  403, 403,  403, 403, 403,  200]),
];

/// Query strings the GET rows need to be well-formed (authorization, not validation, is tested).
fn query_of(path: &str) -> &'static str {
    match path {
        "/v1/tools/result-number" => "?time=9:51:45",
        "/v1/tools/reinforcement" => "?ms=123&cities=3",
        "/v1/tools/sealed-delay" => concat!(
            "?secret=e8c593fec897dadd42cda9333d96875a75321fed36866dd66709c43c4b533333",
            "&post_hash=71dc53a1bdf01a12cf15e6b162acb1c332f08d6160a9ced4fdbd6b587ad758f3&stamp_ms=1772445105250"
        ),
        "/v1/tools/combat" => "?attacker=15&defender=6&defence=river&time=9:51:45",
        // The stream sends what there is and closes, so the answer can be read whole.
        "/v1/campaigns/{id}/events" => "?follow=false",
        _ => "",
    }
}

/// The placeholders of the paths, filled for one campaign.
fn fill(path: &str, cast: &Cast) -> String {
    let filled = path
        .replace("{id}", &cast.campaign)
        .replace("{seq}", "1")
        .replace("{unit}", "us-14th-inf")
        .replace("{name}", "acw-25mm")
        .replace("{outcome_id}", &cast.outcome)
        .replace("{scenario_id}", &cast.scenario)
        .replace("{webhook_id}", &cast.webhook)
        .replace("{player_id}", &cast.victims.player)
        .replace("{bot_id}", &cast.victims.bot)
        .replace("{moderator_id}", &cast.victims.moderator)
        .replace("{*rest}", "swagger-ui.css");
    assert!(!filled.contains('{'), "{path}: add its placeholder to `fill` in tests/e2e/authz.rs");
    filled
}

/// `/v1/campaigns/{id}` and `/v1/campaigns/{campaign_id}` are the same operation.
fn shape(path: &str) -> String {
    let mut out = String::new();
    let mut in_brace = false;
    for c in path.chars() {
        match c {
            '{' => {
                in_brace = true;
                out.push_str("{}");
            }
            '}' => in_brace = false,
            _ if !in_brace => out.push(c),
            _ => {}
        }
    }
    out
}

struct Cast {
    app: TestApp,
    campaign: String,
    /// The token each caller sends, in the order of `CALLERS`.
    tokens: Vec<Option<String>>,
    /// An outcome of post 1, and a webhook of the campaign.
    outcome: String,
    webhook: String,
    /// A scenario the moderator uploaded.
    scenario: String,
    victims: Victims,
}

/// The ids of a player, a bot and a moderator none of the callers is, for the rows that rotate
/// and revoke tokens.
struct Victims {
    player: String,
    bot: String,
    moderator: String,
}

async fn cast() -> Cast {
    let Game { app, moderator, campaign, union, confederate, .. } =
        Game::start(TestApp::spawn(Backend::Sqlite).await, "Vicksburg", json!({})).await;
    let other_moderator = app.moderator().await;
    let elsewhere = app.campaign(&other_moderator, json!({"name": "Elsewhere"})).await;
    let stranger = app.player(&other_moderator, &elsewhere, "union").await;
    let bot = app.bot(&moderator, &campaign, "b").await;
    // Post 1, the Union's deployment, so the per-post and outcome paths have something to show.
    let deploy = app.post(&union, &campaign, scripted(0)).await;
    let outcome = deploy.ok(201)["outcomes"][0]["id"].as_str().unwrap().to_owned();
    let webhook = app
        .request(
            Method::POST,
            &format!("/v1/campaigns/{campaign}/webhooks"),
            Some(&moderator),
            Some(json!({"url": "http://127.0.0.1:9/hook"})),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let id_of = |answer: adjutant_e2e::Answer| answer.ok(201)["id"].as_str().unwrap().to_owned();
    let scenario = id_of(
        app.request(
            Method::POST,
            "/v1/scenarios",
            Some(&moderator),
            Some(json!({"name": "Crossroads", "text": adjutant_e2e::CROSSROADS})),
        )
        .await,
    );
    let victims = Victims {
        player: id_of(
            app.request(
                Method::POST,
                &format!("/v1/campaigns/{campaign}/players"),
                Some(&moderator),
                Some(json!({"name": "Victim", "side": "union"})),
            )
            .await,
        ),
        bot: id_of(
            app.request(
                Method::POST,
                &format!("/v1/campaigns/{campaign}/bots"),
                Some(&moderator),
                Some(json!({"name": "v"})),
            )
            .await,
        ),
        moderator: id_of(
            app.request(Method::POST, "/v1/moderators", Some(&app.admin_token), Some(json!({"name": "Victim"}))).await,
        ),
    };
    let tokens = vec![
        None,
        Some("adj_0000000000000000000000000000000000000000000000000000000000000000".to_owned()),
        Some(union),
        Some(confederate),
        Some(stranger),
        Some(bot),
        Some(moderator),
        Some(other_moderator),
        Some(app.admin_token.clone()),
    ];
    Cast { app, campaign, tokens, outcome, webhook, scenario, victims }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_answers_every_caller_as_the_matrix_says() {
    let cast = cast().await;
    let mut wrong = Vec::new();
    for row in MATRIX {
        let path = format!("{}{}", fill(row.path, &cast), query_of(row.path));
        let method = Method::from_bytes(row.method.as_bytes()).unwrap();
        let body: Option<Value> = match row.body {
            "" => None,
            UPLOAD => {
                Some(json!({"name": "Other", "text": adjutant_e2e::CROSSROADS.replace("Crossroads", "Junction")}))
            }
            body => Some(adjutant_e2e::serde_json::from_str(body).unwrap()),
        };
        for (column, expected) in row.expect.iter().enumerate() {
            let key = uuid_key();
            let answer = cast
                .app
                .send(method.clone(), &path, cast.tokens[column].as_deref(), body.clone(), &[("Idempotency-Key", &key)])
                .await;
            if answer.status.as_u16() != *expected {
                wrong.push(format!(
                    "{} {} as {}: expected {expected}, got {} {}",
                    row.method, row.path, CALLERS[column], answer.status, answer.text
                ));
            }
            if answer.status.is_client_error() {
                // Refusals are problem+json naming the Authorization header.
                assert_eq!(answer.content_type, "application/problem+json", "{} {}", row.method, row.path);
                if matches!(answer.status.as_u16(), 401 | 403) {
                    assert_eq!(answer.body["field"], "Authorization", "{}", answer.text);
                }
                if answer.status.as_u16() == 401 {
                    assert_eq!(answer.headers["www-authenticate"], "Bearer");
                }
            }
        }
    }
    assert!(wrong.is_empty(), "the authorization matrix does not hold:\n{}", wrong.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_has_a_row() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let doc = app.get("/v1/openapi.json").await;
    let paths = doc.ok(200)["paths"].as_object().expect("paths").clone();
    let rows: BTreeSet<(String, String)> =
        MATRIX.iter().map(|r| (r.method.to_ascii_lowercase(), shape(r.path))).collect();
    let mut missing = Vec::new();
    let mut operations = 0;
    for (method, path) in OTHER_ROUTES {
        operations += 1;
        if !rows.contains(&(method.to_ascii_lowercase(), shape(path))) {
            missing.push(format!("{method} {path}"));
        }
    }
    for (path, item) in &paths {
        for method in ["get", "put", "post", "delete", "patch", "head", "options", "trace"] {
            if item.get(method).is_some() {
                operations += 1;
                if !rows.contains(&(method.to_owned(), shape(path))) {
                    missing.push(format!("{} {path}", method.to_ascii_uppercase()));
                }
            }
        }
    }
    let documented: BTreeSet<(String, String)> = paths
        .iter()
        .flat_map(|(path, item)| {
            item.as_object().into_iter().flat_map(move |ops| ops.keys().map(move |m| (m.clone(), shape(path))))
        })
        .chain(OTHER_ROUTES.iter().map(|(m, p)| (m.to_ascii_lowercase(), shape(p))))
        .collect();
    let stale: Vec<_> = rows.difference(&documented).collect();
    assert!(stale.is_empty(), "rows of MATRIX for operations the document does not list: {stale:?}");
    assert_eq!(operations, MATRIX.len(), "one row per operation");
    assert!(missing.is_empty(), "operations with no row in tests/e2e/authz.rs MATRIX:\n{}", missing.join("\n"));
}

/// Every `.route("path", get(…).post(…))` the server's sources declare, as (method, path).
fn declared_routes() -> BTreeSet<(String, String)> {
    fn walk(dir: &std::path::Path, found: &mut BTreeSet<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for (at, _) in text.match_indices(".route(\"") {
                    let rest = &text[at + ".route(\"".len()..];
                    let Some(end) = rest.find('"') else { continue };
                    let route = &rest[..end];
                    // The handlers of this route: up to the next route or the end of the line.
                    let tail = &rest[end..];
                    let tail =
                        &tail[..tail.find(".route(").unwrap_or(tail.len()).min(tail.find('\n').unwrap_or(tail.len()))];
                    let mut methods = 0;
                    for method in ["get", "post", "put", "delete", "patch"] {
                        let call = format!("{method}(");
                        for (i, _) in tail.match_indices(&call) {
                            let before = tail[..i].chars().last();
                            if before.is_none_or(|c| !(c.is_alphanumeric() || c == '_')) {
                                found.insert((method.to_owned(), shape(route)));
                                methods += 1;
                            }
                        }
                    }
                    assert!(methods > 0, "{}: cannot read the methods of route {route}", path.display());
                }
            }
        }
    }
    let mut found = BTreeSet::new();
    walk(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/server/src"), &mut found);
    found
}

#[test]
fn every_route_of_the_router_has_a_row() {
    let rows: BTreeSet<(String, String)> =
        MATRIX.iter().map(|r| (r.method.to_ascii_lowercase(), shape(r.path))).collect();
    let declared = declared_routes();
    // The API's routes are registered with `routes!`, which documents each one, so the scan sees
    // the pages and assets.
    assert!(declared.len() > 10, "the route scan found too little: {declared:?}");
    let missing: Vec<_> = declared.difference(&rows).collect();
    assert!(missing.is_empty(), "routes of the router with no row in tests/e2e/authz.rs MATRIX: {missing:?}");
    // The scan sees the routes written as `.route(…)`; the docs routes come from SwaggerUi and
    // are listed in OTHER_ROUTES, which the matrix requests one by one.
    for (method, path) in OTHER_ROUTES {
        assert!(rows.contains(&(method.to_ascii_lowercase(), shape(path))), "{method} {path}");
    }
}

fn uuid_key() -> String {
    uuid::Uuid::new_v4().to_string()
}
