//! Requests per token per minute: past the limit, 429 problem+json with Retry-After; each
//! token (or, without one, each address) has its own count.

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::{Backend, TestApp};

const CALCULATOR: &str = "/v1/tools/result-number?time=9:51:45";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_limit_a_caller_gets_429_with_retry_after() {
    // Five a minute: one request frees up every twelve seconds.
    let app = TestApp::spawn_with(Backend::Sqlite, |config| config.rate_limit_per_minute = 5).await;
    for _ in 0..5 {
        app.get(CALCULATOR).await.ok(200);
    }
    let refused = app.get(CALCULATOR).await;
    let problem = refused.problem(429, "Authorization");
    assert_eq!(problem["rule"], "rate_limit");
    let retry_after: u64 = refused.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=12).contains(&retry_after), "Retry-After: {retry_after}");

    // A token is counted apart from the address it comes from, and apart from other tokens.
    let operator = app.admin_token.clone();
    for _ in 0..5 {
        app.request(Method::GET, CALCULATOR, Some(&operator), None).await.ok(200);
    }
    app.request(Method::GET, CALCULATOR, Some(&operator), None).await.problem(429, "Authorization");
    app.request(Method::GET, CALCULATOR, Some("adj_someone_else"), None).await.ok(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_of_zero_turns_the_limiter_off() {
    let app = TestApp::spawn_with(Backend::Sqlite, |config| config.rate_limit_per_minute = 0).await;
    for _ in 0..50 {
        app.get(CALCULATOR).await.ok(200);
    }
}
