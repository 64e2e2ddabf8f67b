//! The campaign page in a real browser: headless Chromium loads it, runs its script (the
//! whole-campaign audit) and we read what a person would see.
//!
//! Needs Chromium (Debian's `chromium`; the README's test command installs it). Without it the
//! test is skipped with a note, unless ADJUTANT_REQUIRE_BROWSER=1.

use std::path::PathBuf;

use adjutant_e2e::serde_json::json;
use adjutant_e2e::{Backend, Game, TestApp};

fn chromium() -> Option<PathBuf> {
    let candidates = std::env::var_os("ADJUTANT_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].map(PathBuf::from));
    let found = candidates.into_iter().find(|p| p.exists());
    if found.is_none() {
        assert!(
            std::env::var("ADJUTANT_REQUIRE_BROWSER").as_deref() != Ok("1"),
            "ADJUTANT_REQUIRE_BROWSER=1 but no Chromium was found"
        );
        eprintln!("note: Chromium not found; skipping the browser test");
    }
    found
}

async fn browse(chromium: &PathBuf, url: &str, extra: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let output = tokio::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--virtual-time-budget=15000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .output()
        .await
        .expect("run chromium");
    assert!(output.status.success(), "chromium failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The text a person reads, roughly: the DOM without tags.
fn visible_text(dom: &str) -> String {
    let body = dom.split("<script").next().unwrap_or(dom);
    let mut text = String::new();
    let mut in_tag = false;
    for c in body.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_campaign_page_shows_the_map_the_turn_and_the_checked_log() {
    let Some(chromium) = chromium() else { return };
    let g = Game::start(TestApp::spawn(Backend::Sqlite).await, "Valley <Campaign> 1862", json!({})).await;
    for i in 0..17 {
        g.step(i).await;
    }
    let Game { app, campaign, .. } = g;

    let url = format!("{}/campaigns/{campaign}", app.base);
    let dom = browse(&chromium, &url, &["--dump-dom"]).await;
    let text = visible_text(&dom);
    // The name is shown as text, not markup.
    assert!(text.contains("Valley &lt;Campaign&gt; 1862"), "{text}");
    // Whose turn it is.
    assert!(text.contains("Turn 2, combat phase: the Union to act."), "{text}");
    // The log, newest first, with who posted, the battle's result number and what it decided.
    let (page, log) = text.split_at(text.find("The log").expect("the log"));
    let text = log;
    assert!(text.contains("#14 union union player attack"), "{text}");
    assert!(text.contains("9:51:45 → result number 21"), "{text}");
    assert!(text.contains("(√95145 = 308.455831522115)"), "{text}");
    assert!(text.find("#17").unwrap() < text.find("#1 union union player deploy").unwrap(), "newest first");
    // Only a battle's post shows a result number: the deployment, last in the log, shows none.
    let deployment = &text[text.find("#1 union union player deploy").unwrap()..];
    assert!(!deployment.contains("result number") && !deployment.contains('√'), "{deployment}");
    assert_eq!(text.matches("→ result number").count(), 1, "{text}");
    // The page's script ran the whole-campaign audit and says so.
    assert!(text.contains("Audit: all 17 posts check out — 1 result numbers, 1 reinforcement rolls"), "{text}");
    // The map is on the page, and the map at the start of each player turn so far.
    assert!(dom.contains(&format!("/v1/campaigns/{campaign}/map.svg")), "{dom}");
    assert!(
        page.contains("The map at the start of each player turn Turn 1, Union Turn 1, Rebels Turn 2, Union Now"),
        "{page}"
    );
    assert!(
        dom.contains(&format!(
            "href=\"/v1/campaigns/{campaign}/map.svg?turn=2&amp;side=union\" data-turn=\"2\" data-side=\"union\""
        )),
        "{dom}"
    );
    // Turn by turn: the newest player turn first, its map as it began and its posts beside it
    // (the Union's turn 2 began with the Rebels' end of turn 1, post 8).
    assert!(
        page.contains("Turn by turn ◀ Earlier turn Turn 2, Union (4 of 4; posts from 9, going on) Later turn ▶"),
        "{page}"
    );
    assert!(dom.contains("id=\"turn-map\""), "{dom}");
    assert!(
        dom.contains("<nav id=\"history\" aria-label=\"The map as it was\" hidden=\"\">"),
        "the plain list gives way"
    );
    assert!(dom.contains(&format!("src=\"/v1/campaigns/{campaign}/map.svg?turn=2&amp;side=union\"")), "{dom}");
    let shown: Vec<usize> = (1..=17).filter(|seq| dom.contains(&format!("id=\"turn-post-{seq}\""))).collect();
    assert_eq!(shown, (9..=17).collect::<Vec<_>>(), "the posts of the Union's turn 2");

    // On a phone-sized screen the page renders to a real picture.
    let shot = tempfile::tempdir().unwrap();
    let file = shot.path().join("page.png");
    browse(&chromium, &url, &[&format!("--screenshot={}", file.display()), "--window-size=412,1400"]).await;
    let png = std::fs::read(&file).expect("screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(png.len() > 20_000, "a blank page? {} bytes", png.len());
    if let Ok(dir) = std::env::var("ADJUTANT_SCREENSHOT_DIR") {
        std::fs::copy(&file, PathBuf::from(dir).join("campaign-page.png")).unwrap();
    }
}
