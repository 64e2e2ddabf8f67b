//! The service around the API: health, the OpenAPI document, the docs page, the calculator.

use adjutant_e2e::serde_json::json;
use adjutant_e2e::{Backend, TestApp};

#[tokio::test]
async fn health_openapi_and_docs() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let health = app.get("/healthz").await;
    assert_eq!(
        health.ok(200),
        &json!({"status": "ok", "backend": "sqlite", "largest_batch": 0, "batches_one_by_one": 0})
    );

    let spec = app.get("/v1/openapi.json").await;
    let spec = spec.ok(200);
    assert!(spec["openapi"].as_str().unwrap().starts_with("3.1"), "{}", spec["openapi"]);
    for path in ["/v1/campaigns/{id}/posts", "/v1/tools/result-number", "/v1/campaigns/{id}/posts/{seq}/audit"] {
        assert!(spec["paths"][path].is_object(), "{path} missing from the OpenAPI document");
    }

    let docs = app.client.get(format!("{}/docs/", app.base)).send().await.unwrap();
    assert_eq!(docs.status(), 200);
    // The docs page carries the headers every page does: scripts from this server only.
    let headers = docs.headers();
    let csp = headers["content-security-policy"].to_str().unwrap().to_owned();
    let script_src = csp.split(';').map(str::trim).find(|d| d.starts_with("script-src")).unwrap_or_default();
    assert_eq!(script_src, "script-src 'self'", "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    let html = docs.text().await.unwrap();
    assert!(html.contains("swagger-ui"), "the docs page is served from the binary");
    assert!(!html.contains("https://"), "the docs page loads nothing from the network");
    let initializer = app.client.get(format!("{}/docs/swagger-initializer.js", app.base)).send().await.unwrap();
    assert_eq!(initializer.status(), 200);
    assert!(initializer.headers()["content-security-policy"].to_str().unwrap().contains("script-src 'self'"));

    app.get("/no/such/place").await.problem(404, "path");
}

#[tokio::test]
async fn the_calculator_gives_the_seed_example() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let answer = app.get("/v1/tools/result-number?time=9:51:45").await;
    let answer = answer.ok(200);
    assert_eq!(answer["n"], 95145);
    assert_eq!(answer["sqrt"], "308.455831522115");
    assert_eq!(answer["result"], 21);
    assert_eq!(answer["digits"], "21");
    let eighth = app.get("/v1/tools/result-number?time=9:51:45&first_digit=8").await;
    assert_eq!(eighth.ok(200)["result"], 22);
    let early = app.get("/v1/tools/result-number?time=0:00:07").await;
    assert_eq!(early.ok(200)["n"], 7);
    // Asked again, a query is answered from what was written the first time: the same answer,
    // and another query's text is another answer.
    let again = app.get("/v1/tools/result-number?time=9:51:45").await;
    assert_eq!(again.ok(200), answer);
    let eighth_again = app.get("/v1/tools/result-number?time=9:51:45&first_digit=8").await;
    assert_eq!(eighth_again.ok(200)["result"], 22);

    app.get("/v1/tools/result-number?time=25:00:00").await.problem(400, "query.time");
    // A refusal is not kept as an answer.
    app.get("/v1/tools/result-number?time=25:00:00").await.problem(400, "query.time");
    app.get("/v1/tools/result-number").await.problem(400, "query.time");
    app.get("/v1/tools/result-number?time=9:51:45&first_digit=7").await.problem(400, "query.first_digit");

    let roll = app.get("/v1/tools/reinforcement?ms=123&cities=3").await;
    assert_eq!(roll.ok(200), &json!({"ms": 123, "cities": 3, "remainder": 3, "gains": true}));
    let roll = app.get("/v1/tools/reinforcement?ms=124&cities=3").await;
    assert_eq!(roll.ok(200)["gains"], false);
    let roll = app.get("/v1/tools/reinforcement?ms=0&cities=0").await;
    assert_eq!(roll.ok(200)["gains"], true);
    app.get("/v1/tools/reinforcement?ms=1000&cities=3").await.problem(400, "query.ms");
    app.get("/v1/tools/reinforcement?ms=1&cities=7").await.problem(400, "query.cities");
}
