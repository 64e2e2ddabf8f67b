//! Turn and reminder mails through a real SMTP server on loopback (Python's aiosmtpd, started
//! by `scripts/test.sh`, writing what it receives to a maildir): each arrives at its time by the
//! server's clock, once, across a restart. Without `ADJUTANT_TEST_SMTP_URL` these tests skip,
//! saying so, unless `ADJUTANT_REQUIRE_SMTP=1`.

use std::path::PathBuf;
use std::time::Duration;

use adjutant_e2e::reqwest::Method;
use adjutant_e2e::serde_json::json;
use adjutant_e2e::{scripted, Backend, TestApp, TestDb};
use chrono::TimeDelta;

/// The SMTP server's URL and its maildir, or None (the test skips).
fn smtp() -> Option<(String, PathBuf)> {
    let url = std::env::var("ADJUTANT_TEST_SMTP_URL").ok().filter(|u| !u.is_empty());
    let dir = std::env::var_os("ADJUTANT_TEST_MAILDIR").map(PathBuf::from);
    match (url, dir) {
        (Some(url), Some(dir)) => Some((url, dir)),
        _ => {
            assert!(
                std::env::var("ADJUTANT_REQUIRE_SMTP").map_or(true, |v| v != "1"),
                "ADJUTANT_REQUIRE_SMTP=1 but ADJUTANT_TEST_SMTP_URL and ADJUTANT_TEST_MAILDIR are not both set"
            );
            eprintln!(
                "SKIPPED: no SMTP server (ADJUTANT_TEST_SMTP_URL, ADJUTANT_TEST_MAILDIR; ./scripts/test.sh starts one)"
            );
            None
        }
    }
}

/// The mails in the maildir addressed to `to`, as (subject, whole text), oldest first.
fn received(dir: &std::path::Path, to: &str) -> Vec<(String, String)> {
    let mut found = vec![];
    for sub in ["new", "cur"] {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else { continue };
        for entry in entries.flatten() {
            let Ok(text) = std::fs::read_to_string(entry.path()) else { continue };
            let header = |name: &str| {
                text.lines().find_map(|l| l.strip_prefix(&format!("{name}: "))).unwrap_or_default().to_owned()
            };
            if header("To").contains(to) {
                let modified = entry.metadata().and_then(|m| m.modified()).ok();
                found.push((modified, header("Subject"), text.clone()));
            }
        }
    }
    found.sort_by_key(|(at, _, _)| *at);
    found.into_iter().map(|(_, subject, text)| (subject, text)).collect()
}

/// Waits (real time) until `count` mails to `to` have arrived.
async fn arrived(dir: &std::path::Path, to: &str, count: usize) -> Vec<(String, String)> {
    for _ in 0..1500 {
        let mails = received(dir, to);
        if mails.len() >= count {
            return mails;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{count} mails to {to} never came: {:?}", received(dir, to));
}

fn configure(url: &str) -> impl Fn(&mut adjutant_server::config::Config) + '_ {
    move |config| {
        config.deadline_poll_ms = 10;
        config.deadline_rescan_ms = 10;
        config.smtp_url = Some(adjutant_server::auth::Secret::new(url.to_owned()));
        config.reminder_leads = "PT30M,PT10M".into();
        config.public_url = "https://adjutant.example.org".into();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turn_and_reminder_mails_arrive_at_their_times_once_across_a_restart() {
    let Some((url, maildir)) = smtp() else { return };
    let app = TestApp::spawn_with(Backend::Sqlite, configure(&url)).await;
    let moderator = app.moderator().await;
    let settings = json!({"turn_deadline": "PT1H", "time_zone": "America/New_York"});
    let campaign = app
        .campaign(
            &moderator,
            json!({"name": "Valley 1862", "mode": "managed", "scenario": "short-acw", "settings": settings}),
        )
        .await;
    let run = uuid::Uuid::new_v4().simple().to_string();
    let mut tokens = vec![];
    let mut addresses = vec![];
    for side in ["union", "confederate"] {
        let issued = app
            .request(
                Method::POST,
                &format!("/v1/campaigns/{campaign}/players"),
                Some(&moderator),
                Some(json!({"name": format!("The {side} player"), "side": side})),
            )
            .await;
        let issued = issued.ok(201).clone();
        let address = format!("{side}-{run}@example.org");
        let path = format!("/v1/campaigns/{campaign}/players/{}/contact", issued["id"].as_str().unwrap());
        app.request(Method::PUT, &path, Some(&moderator), Some(json!({"email": address}))).await.ok(200);
        tokens.push(issued["token"].as_str().unwrap().to_owned());
        addresses.push(address);
    }
    let (union, rebel) = (&addresses[0], &addresses[1]);

    // Both deployments began when the campaign was created: each player is told at once.
    let first = arrived(&maildir, union, 1).await;
    assert_eq!(first[0].0, "Your turn in Valley 1862: deployment", "{first:?}");
    assert!(first[0].1.contains("https://adjutant.example.org/play/"), "{}", first[0].1);
    arrived(&maildir, rebel, 1).await;

    // Both deploy; the Union's first turn begins: its player is told, with the deadline.
    let start = adjutant_e2e::seed_morning();
    for (i, token) in tokens.iter().enumerate() {
        app.clock.set(start + TimeDelta::minutes(i as i64));
        app.post(token, &campaign, scripted(i)).await.ok(201);
    }
    let turn = arrived(&maildir, union, 2).await;
    assert_eq!(turn[1].0, "Your turn in Valley 1862: turn 1", "{turn:?}");
    // 09:52:45 UTC is 04:52 in New York; the deadline an hour later, written in the zone.
    assert!(turn[1].1.contains("05:52 EST"), "{}", turn[1].1);
    let began = start + TimeDelta::minutes(1);
    let due = began + TimeDelta::hours(1);

    // Nothing more until 30 minutes before the deadline; then the first reminder, and only it.
    app.clock.set(due - TimeDelta::minutes(30) - TimeDelta::seconds(1));
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(received(&maildir, union).len(), 2, "a reminder before its time");
    app.clock.set(due - TimeDelta::minutes(30));
    let reminded = arrived(&maildir, union, 3).await;
    assert_eq!(reminded[2].0, "Reminder: turn 1 in Valley 1862 ends in 30 minutes", "{reminded:?}");
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(received(&maildir, union).len(), 3);

    // The server restarts: nothing is sent twice, and the next reminder comes at its time.
    let db: TestDb = app.db.clone();
    drop(app);
    let app = TestApp::spawn_on(db, configure(&url)).await;
    app.clock.set(due - TimeDelta::minutes(20));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(received(&maildir, union).len(), 3, "a mail sent again after the restart");
    app.clock.set(due - TimeDelta::minutes(10));
    let second = arrived(&maildir, union, 4).await;
    assert_eq!(second[3].0, "Reminder: turn 1 in Valley 1862 ends in 10 minutes", "{second:?}");
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(received(&maildir, union).len(), 4);
    assert_eq!(received(&maildir, rebel).len(), 1, "the Rebel is told only of its own waits");

    // The moderator reads the mail log: every mail, when it was due and when it went.
    let log = app.request(Method::GET, &format!("/v1/campaigns/{campaign}/mails"), Some(&moderator), None).await;
    let log = log.ok(200)["mails"].as_array().unwrap().clone();
    let sent = log.iter().filter(|m| m["sent_at"].is_string() && m["skipped"].is_null()).count();
    assert_eq!(sent, 5, "{log:?}");
    assert!(log.iter().all(|m| m["attempts"] == 1), "{log:?}");
}
