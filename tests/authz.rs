//! Who may do what: every endpoint × every kind of caller, from one table.
//!
//! A new endpoint is covered by adding one row to `MATRIX`; `every_operation_has_a_row` fails
//! while an operation of `/v1/openapi.json` has none, so none can be forgotten.

use std::collections::BTreeSet;

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{Backend, TestApp};

/// The callers, in the order of the columns of `MATRIX`.
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

#[rustfmt::skip]
const MATRIX: &[Row] = &[
    //   method  path                                   body                                   none wrong union conf other bot  mod  omod  op
    row("GET",  "/healthz",                            "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/whoami",                          "",                                    [401, 401, 200,  200, 200,  200, 200, 200,  200]),
    row("POST", "/v1/moderators",                      r#"{"name": "Halleck"}"#,              [401, 401, 403,  403, 403,  403, 403, 403,  201]),
    row("POST", "/v1/campaigns",                       r#"{"name": "Shiloh"}"#,               [401, 401, 403,  403, 403,  403, 201, 201,  403]),
    row("GET",  "/v1/campaigns",                       "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}",                  "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("POST", "/v1/campaigns/{id}/players",          r#"{"name": "Grant", "side": "union"}"#, [401, 401, 403, 403, 403, 403, 201, 403,  403]),
    row("POST", "/v1/campaigns/{id}/bots",             r#"{"name": "Herald"}"#,               [401, 401, 403,  403, 403,  403, 201, 403,  403]),
    row("POST", "/v1/campaigns/{id}/posts",            NOTE,                                  [401, 401, 201,  201, 403,  403, 201, 403,  403]),
    row("GET",  "/v1/campaigns/{id}/posts",            "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/events",           "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/posts/{seq}",      "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/posts/{seq}/audit", "",                                   [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/tools/result-number",             "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/tools/reinforcement",             "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/tools/combat",                    "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/audit",            "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/fairness",         "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/state",            "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/units/{unit}/moves", "",                                  [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/map.svg",          "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/map.png",          "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/post-kinds",                      "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/rulesets",                        "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/rulesets/{name}",                 "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/campaigns/{id}/outcomes",         "",                                    [200, 200, 200,  200, 200,  200, 200, 200,  200]),
    row("GET",  "/v1/bot/feed",                        "",                                    [401, 401, 403,  403, 403,  200, 403, 403,  403]),
    row("POST", "/v1/campaigns/{id}/outcomes/{outcome_id}/ack", r#"{"forum_post_id": "77"}"#, [401, 401, 403,  403, 403,  200, 403, 403,  403]),
    row("POST", "/v1/bots",                            r#"{"name": "Herald"}"#,               [401, 401, 403,  403, 403,  403, 201, 201,  403]),
    row("POST", "/v1/campaigns/{id}/webhooks",         r#"{"url": "http://127.0.0.1:9/hook"}"#, [401, 401, 403, 403, 403, 403, 201, 403,  403]),
    row("GET",  "/v1/campaigns/{id}/webhooks",         "",                                    [401, 401, 403,  403, 403,  403, 200, 403,  403]),
    row("GET",  "/v1/campaigns/{id}/webhooks/{webhook_id}/deliveries", "",                    [401, 401, 403,  403, 403,  403, 200, 403,  403]),
];

/// Query strings the GET rows need to be well-formed (authorization, not validation, is tested).
fn query_of(path: &str) -> &'static str {
    match path {
        "/v1/tools/result-number" => "?time=9:51:45",
        "/v1/tools/reinforcement" => "?ms=123&cities=3",
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
        .replace("{webhook_id}", &cast.webhook);
    assert!(!filled.contains('{'), "{path}: add its placeholder to `fill` in tests/authz.rs");
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
}

async fn cast() -> Cast {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let moderator = app.moderator().await;
    let other_moderator = app.moderator().await;
    let campaign = app.campaign(&moderator, json!({"name": "Vicksburg"})).await;
    let elsewhere = app.campaign(&other_moderator, json!({"name": "Elsewhere"})).await;
    let union = app.player(&moderator, &campaign, "union").await;
    let confederate = app.player(&moderator, &campaign, "confederate").await;
    let stranger = app.player(&other_moderator, &elsewhere, "union").await;
    let bot = app
        .request(Method::POST, &format!("/v1/campaigns/{campaign}/bots"), Some(&moderator), Some(json!({"name": "b"})))
        .await
        .ok(201)["token"]
        .as_str()
        .unwrap()
        .to_owned();
    // Post 1, the Union's deployment, so the per-post and outcome paths have something to show.
    let script: Vec<Value> =
        adjutant_e2e::serde_json::from_str(include_str!("../crates/rules/tests/data/short_acw_script.json")).unwrap();
    let deploy = app.post(&union, &campaign, json!({"kind": "deploy", "body": script[0]["body"]})).await;
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
    Cast { app, campaign, tokens, outcome, webhook }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_answers_every_caller_as_the_matrix_says() {
    let cast = cast().await;
    let mut wrong = Vec::new();
    for row in MATRIX {
        let path = format!("{}{}", fill(row.path, &cast), query_of(row.path));
        let method = Method::from_bytes(row.method.as_bytes()).unwrap();
        let body: Option<Value> = (!row.body.is_empty()).then(|| adjutant_e2e::serde_json::from_str(row.body).unwrap());
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
        .collect();
    let stale: Vec<_> = rows.difference(&documented).collect();
    assert!(stale.is_empty(), "rows of MATRIX for operations the document does not list: {stale:?}");
    assert_eq!(operations, MATRIX.len(), "one row per operation");
    assert!(missing.is_empty(), "operations with no row in tests/authz.rs MATRIX:\n{}", missing.join("\n"));
}

fn uuid_key() -> String {
    uuid::Uuid::new_v4().to_string()
}
