//! The operator's metrics, `GET /metrics` in Prometheus's text format: the counters move as a
//! scripted run says they should, only the operator's token reads them on the public listener
//! (or anyone who reaches the separate `metrics_listen` address), and what is served is the
//! text format: every answer is read by the parser below, and by Prometheus's own
//! `promtool check metrics` where it is installed (Debian's `prometheus` package, which the
//! README's test command installs). Without promtool that check is skipped with a note, unless
//! ADJUTANT_REQUIRE_PROMTOOL=1.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::json;
use adjutant_e2e::{on_both_backends, Backend, Game, TestApp};

on_both_backends! {
    the_counters_move_as_a_scripted_run_says => scripted_run;
}

/// The notes the scripted run posts and the server stores, after the Union's deployment.
const NOTES: u64 = 5;

/// The samples of one scrape, by series as written (`name{label="value",…}`).
type Samples = BTreeMap<String, f64>;

async fn scripted_run(backend: Backend) {
    // One expensive read a minute per caller: the moderator's second audit is refused.
    let app = TestApp::spawn_with(backend, |config| config.expensive_reads_per_minute = 1).await;
    let game = Game::start(app, "Counted", json!({})).await;
    let (app, campaign) = (&game.app, game.campaign.as_str());

    let before = scrape(app).await;
    for series in ["adjutant_posts_accepted_total", "adjutant_database_errors_total", "adjutant_event_streams_open"] {
        assert_eq!(before.get(series), Some(&0.0), "{series} before anything happened");
    }

    // A receiver that takes every delivery, registered before the deployment whose outcomes it gets.
    let receiver = adjutant_e2e::serve(axum::Router::new().route("/hook", axum::routing::post(|| async { "" }))).await;
    let hook = json!({"url": format!("{receiver}/hook")});
    let webhooks = format!("/v1/campaigns/{campaign}/webhooks");
    app.request(Method::POST, &webhooks, Some(&game.moderator), Some(hook)).await.ok(201);
    let deployed = game.step(0).await;
    let outcomes = deployed["outcomes"].as_array().expect("the deployment's outcomes").len() as u64;
    assert!(outcomes > 0, "{deployed}");
    for i in 0..NOTES {
        let note = json!({"kind": "note", "body": {"text": format!("dispatch {i}")}});
        app.post_with_key(&game.union, campaign, &format!("note-{i}"), note).await.ok(201);
    }
    // The same key and post again: answered from the first, nothing new stored.
    let again = json!({"kind": "note", "body": {"text": "dispatch 0"}});
    app.post_with_key(&game.union, campaign, "note-0", again).await.ok(200);
    let two_lines = json!({"kind": "note", "body": {"text": "first line\nsecond line"}});
    app.post(&game.union, campaign, two_lines).await.problem(422, "body.body.text");

    let audit = format!("/v1/campaigns/{campaign}/audit");
    let passed = app.request(Method::GET, &audit, Some(&game.moderator), None).await;
    assert_eq!(passed.ok(200)["ok"], true, "{}", passed.text);
    app.request(Method::GET, &audit, Some(&game.moderator), None).await.problem(429, "path");

    // A stream that follows the campaign is open while its reader holds it.
    let stream = app
        .client
        .get(format!("{}/v1/campaigns/{campaign}/events", app.base))
        .bearer_auth(&game.confederate)
        .send()
        .await
        .expect("the event stream opens");
    assert_eq!(stream.status().as_u16(), 200);

    let after = scrape(app).await;
    let expect = [
        ("adjutant_posts_accepted_total".to_owned(), NOTES + 1),
        ("adjutant_posts_replayed_total".to_owned(), 1),
        (r#"adjutant_posts_refused_total{rule="text.one_line"}"#.to_owned(), 1),
        // Every post the log answered, stored, replayed or refused, was timed.
        ("adjutant_append_seconds_count".to_owned(), NOTES + 3),
        // Sent one after another, each post (and the replay) was a batch of its own.
        ("adjutant_batch_posts_count".to_owned(), NOTES + 2),
        ("adjutant_batch_posts_sum".to_owned(), NOTES + 2),
        (r#"adjutant_batch_posts_bucket{le="1"}"#.to_owned(), NOTES + 2),
        (
            r#"adjutant_http_request_seconds_count{method="POST",route="/v1/campaigns/{id}/posts"}"#.to_owned(),
            NOTES + 3,
        ),
        (r#"adjutant_http_request_seconds_count{method="GET",route="/v1/campaigns/{id}/audit"}"#.to_owned(), 2),
        (r#"adjutant_limited_total{rule="rate_limit.expensive_reads"}"#.to_owned(), 1),
        (r#"adjutant_audits_total{kind="campaign",result="passed"}"#.to_owned(), 1),
        (r#"adjutant_audit_seconds_count{kind="campaign"}"#.to_owned(), 1),
        ("adjutant_event_streams_open".to_owned(), 1),
        ("adjutant_database_errors_total".to_owned(), 0),
    ];
    let wrong: Vec<String> = expect
        .iter()
        .filter(|(series, value)| after.get(series) != Some(&(*value as f64)))
        .map(|(series, value)| format!("{series}: expected {value}, got {:?}", after.get(series)))
        .collect();
    assert!(wrong.is_empty(), "the counters did not move as the run says:\n{}", wrong.join("\n"));
    // The path asked is never a label: the campaign's id appears nowhere.
    let text = scrape_text(app).await;
    assert!(!text.contains(campaign), "a campaign's id in a label:\n{text}");

    drop(stream);
    wait_for(app, "adjutant_event_streams_open", 0.0).await;
    // Each outcome of the deployment reaches the receiver once, at the first attempt.
    wait_for(app, r#"adjutant_webhook_deliveries_total{result="delivered"}"#, outcomes as f64).await;
    let delivered = scrape(app).await;
    assert_eq!(delivered.get(r#"adjutant_webhook_deliveries_total{result="retry"}"#), Some(&0.0));
    assert_eq!(delivered.get(r#"adjutant_mails_total{result="sent"}"#), Some(&0.0), "no mail without SMTP");

    // The mail log's table taken away behind the server's back: reading it is a database error.
    app.db.execute("ALTER TABLE mail_outbox RENAME TO mail_outbox_away").await;
    let mails = format!("/v1/campaigns/{campaign}/mails");
    let failed = app.request(Method::GET, &mails, Some(&game.moderator), None).await;
    assert_eq!(failed.status.as_u16(), 500, "{}", failed.text);
    assert!(!failed.text.contains("mail_outbox"), "the database's words reach the caller: {}", failed.text);
    let last = scrape_text(app).await;
    assert_eq!(parse(&last).get("adjutant_database_errors_total"), Some(&1.0), "{last}");
    promtool_accepts(&last);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_operator_reads_the_metrics() {
    let game = Game::start(TestApp::spawn(Backend::Sqlite).await, "Private", json!({})).await;
    let app = &game.app;
    let anonymous = app.get("/metrics").await;
    anonymous.problem(401, "Authorization");
    for token in [&game.union, &game.moderator] {
        let refused = app.request(Method::GET, "/metrics", Some(token), None).await;
        refused.problem(403, "Authorization");
        assert!(!refused.text.contains("adjutant_"), "{}", refused.text);
    }
    // What a caller makes up, a path or a method, is no label: the series stay as few as the routes.
    let brew = Method::from_bytes(b"BREW").expect("a method");
    let made_up = format!("/v1/campaigns/{}/teapot", game.campaign);
    assert_eq!(app.request(brew, &made_up, None, None).await.status.as_u16(), 404);
    let operator = app.request(Method::GET, "/metrics", Some(&app.admin_token), None).await;
    assert_eq!(operator.status.as_u16(), 200, "{}", operator.text);
    assert_eq!(operator.content_type, "text/plain; version=0.0.4; charset=utf-8");
    let samples = parse(&operator.text);
    // The refusals just made are counted like any request, under the route's template.
    assert_eq!(samples.get(r#"adjutant_http_request_seconds_count{method="GET",route="/metrics"}"#), Some(&3.0));
    assert_eq!(samples.get(r#"adjutant_http_request_seconds_count{method="other",route="unmatched"}"#), Some(&1.0));
    assert!(!operator.text.contains("teapot") && !operator.text.contains("BREW"), "{}", operator.text);
    promtool_accepts(&operator.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_separate_address_serves_the_metrics_without_a_token() {
    let address = {
        let free = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        free.local_addr().expect("its address")
    };
    let app = TestApp::spawn_with(Backend::Sqlite, |config| config.metrics_listen = address.to_string()).await;
    app.get("/healthz").await.ok(200);
    let client = adjutant_e2e::reqwest::Client::new();
    let apart = format!("http://{address}");
    let mut answer = None;
    for _ in 0..50 {
        match client.get(format!("{apart}/metrics")).send().await {
            Ok(response) => {
                answer = Some(response);
                break;
            }
            // The server binds its addresses as it starts, beside the test.
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    let answer = answer.expect("the metrics address answers");
    assert_eq!(answer.status().as_u16(), 200);
    let text = answer.text().await.expect("a body");
    let samples = parse(&text);
    assert_eq!(samples.get(r#"adjutant_http_request_seconds_count{method="GET",route="/healthz"}"#), Some(&1.0));
    promtool_accepts(&text);
    // Nothing else is served there, and the public listener still asks for the token.
    let elsewhere = client.get(format!("{apart}/v1/campaigns")).send().await.expect("an answer");
    assert_eq!(elsewhere.status().as_u16(), 404);
    app.get("/metrics").await.problem(401, "Authorization");
}

#[test]
fn the_parser_refuses_what_is_not_the_text_format() {
    let good = "# HELP a_total A count.\n# TYPE a_total counter\na_total{rule=\"x\\\"y\"} 3\n\n# TYPE h histogram\n\
                h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 0.5\nh_count 2\n";
    let samples = parse(good);
    assert_eq!(samples.get("a_total{rule=\"x\\\"y\"}"), Some(&3.0));
    assert_eq!(samples.get("h_count"), Some(&2.0));
    for bad in [
        "a_total 3\n",                                                                    // no # TYPE
        "# TYPE a_total counter\na_total{rule=x} 3\n",                                    // an unquoted value
        "# TYPE a_total counter\na_total three\n",                                        // not a number
        "# TYPE a_total counter\n9a_total 3\n",                                           // not a name
        "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n", // buckets fall
        "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 3\n",                       // +Inf is not the count
    ] {
        let result = std::panic::catch_unwind(|| parse(bad));
        assert!(result.is_err(), "the parser took {bad:?}");
    }
}

async fn scrape_text(app: &TestApp) -> String {
    let answer = app.request(Method::GET, "/metrics", Some(&app.admin_token), None).await;
    assert_eq!(answer.status.as_u16(), 200, "{}", answer.text);
    answer.text
}

async fn scrape(app: &TestApp) -> Samples {
    parse(&scrape_text(app).await)
}

/// Scrapes until `series` reads `value` (a stream is closed once the server notices its reader
/// went away), for at most 30 seconds.
async fn wait_for(app: &TestApp, series: &str, value: f64) {
    let started = Instant::now();
    loop {
        let seen = scrape(app).await.get(series).copied();
        if seen == Some(value) {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{series} stayed at {seen:?}, not {value}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Reads Prometheus's text format (version 0.0.4), panicking at the first line that is not in
/// it: each line is empty, a comment (`# HELP name text`, `# TYPE name type` or other), or a
/// sample `name{label="value",…} value` whose family was declared with `# TYPE` before it; a
/// histogram's buckets never fall and end at `+Inf` with its count.
fn parse(text: &str) -> Samples {
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut samples = Samples::new();
    for (n, line) in text.lines().enumerate() {
        let at = || format!("line {}: {line:?}", n + 1);
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let words: Vec<&str> = comment.trim_start().splitn(3, ' ').collect();
            match words.as_slice() {
                ["TYPE", name, kind] => {
                    assert!(is_name(name), "{}", at());
                    assert!(
                        ["counter", "gauge", "histogram", "summary", "untyped"].contains(kind),
                        "an unknown type: {}",
                        at()
                    );
                    assert!(types.insert((*name).to_owned(), (*kind).to_owned()).is_none(), "declared twice: {}", at());
                }
                ["HELP", name, ..] => assert!(is_name(name), "{}", at()),
                _ => {}
            }
            continue;
        }
        let name_end = line.find(['{', ' ']).unwrap_or_else(|| panic!("no value: {}", at()));
        let name = &line[..name_end];
        assert!(is_name(name), "not a metric name: {}", at());
        let mut rest = &line[name_end..];
        if let Some(labels) = rest.strip_prefix('{') {
            rest = read_labels(labels).unwrap_or_else(|| panic!("bad labels: {}", at()));
        }
        let mut fields =
            rest.strip_prefix(' ').unwrap_or_else(|| panic!("no space before the value: {}", at())).split(' ');
        let value = fields.next().and_then(read_value).unwrap_or_else(|| panic!("not a value: {}", at()));
        if let Some(stamp) = fields.next() {
            assert!(stamp.parse::<i64>().is_ok(), "not a timestamp: {}", at());
        }
        assert!(fields.next().is_none(), "more after the value: {}", at());
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .filter_map(|suffix| name.strip_suffix(suffix))
            .find(|family| matches!(types.get(*family).map(String::as_str), Some("histogram" | "summary")))
            .unwrap_or(name);
        assert!(types.contains_key(family), "a sample of a family with no # TYPE: {}", at());
        let series = line[..line.len() - rest.len()].to_owned();
        assert!(samples.insert(series, value).is_none(), "a series twice: {}", at());
    }
    for (family, kind) in &types {
        if kind == "histogram" {
            check_buckets(family, &samples);
        }
    }
    samples
}

/// Each series of a histogram: cumulative buckets, the last `+Inf` and equal to the count.
fn check_buckets(family: &str, samples: &Samples) {
    let bucket = format!("{family}_bucket{{");
    let mut by_series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for (series, value) in samples.range(bucket.clone()..).take_while(|(s, _)| s.starts_with(&bucket)) {
        let (other, le) = series.rsplit_once("le=\"").expect("a bucket has le");
        let bound = read_value(le.trim_end_matches("\"}")).expect("le is a number");
        by_series.entry(other.trim_end_matches(',').to_owned()).or_default().push((bound, *value));
    }
    for (series, mut buckets) in by_series {
        buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(buckets.windows(2).all(|w| w[0].1 <= w[1].1), "{series}: the buckets fall: {buckets:?}");
        let (last_bound, last) = *buckets.last().expect("a bucket");
        assert_eq!(last_bound, f64::INFINITY, "{series}: no +Inf bucket");
        let labels = series.strip_prefix(&bucket).unwrap_or_default();
        let count = match labels {
            "" => format!("{family}_count"),
            labels => format!("{family}_count{{{labels}}}"),
        };
        assert_eq!(samples.get(&count), Some(&last), "{series}: the +Inf bucket is not {count}");
    }
}

fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// `label="value",…}` and what follows it, or None.
fn read_labels(mut text: &str) -> Option<&str> {
    loop {
        if let Some(rest) = text.strip_prefix('}') {
            return Some(rest);
        }
        let eq = text.find('=')?;
        let label = &text[..eq];
        if !is_name(label) || label.contains(':') {
            return None;
        }
        text = text[eq + 1..].strip_prefix('"')?;
        let mut escaped = false;
        let end = text.char_indices().find(|&(_, c)| {
            let closes = c == '"' && !escaped;
            escaped = c == '\\' && !escaped;
            closes
        })?;
        text = &text[end.0 + 1..];
        text = text.strip_prefix(',').unwrap_or(text);
    }
}

fn read_value(text: &str) -> Option<f64> {
    match text {
        "+Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => text.parse().ok().filter(|_| text.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))),
    }
}

/// `promtool check metrics` on `text`, when promtool is installed.
fn promtool_accepts(text: &str) {
    let promtool = std::env::var_os("ADJUTANT_PROMTOOL")
        .map(std::path::PathBuf::from)
        .into_iter()
        .chain(["/usr/bin/promtool".into(), "/usr/local/bin/promtool".into()])
        .find(|path| path.exists());
    let Some(promtool) = promtool else {
        assert!(
            std::env::var("ADJUTANT_REQUIRE_PROMTOOL").as_deref() != Ok("1"),
            "promtool is not installed and ADJUTANT_REQUIRE_PROMTOOL=1 (apt-get install prometheus)"
        );
        eprintln!(
            "note: promtool is not installed (Debian: apt-get install prometheus); its check of /metrics is skipped"
        );
        return;
    };
    let mut child = std::process::Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool runs");
    child.stdin.take().expect("its input").write_all(text.as_bytes()).expect("promtool reads the metrics");
    let output = child.wait_with_output().expect("promtool finishes");
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "promtool check metrics refused /metrics:\n{said}\n{text}");
    // Its lint findings (a counter not named _total, a missing HELP) fail the check too.
    assert!(said.trim().is_empty(), "promtool check metrics found problems:\n{said}");
}
