//! Playing in the browser: Debian's Chromium driven over WebDriver (chromedriver). A moderator
//! creates a campaign and two players in the console; the two players play the scripted Short
//! ACW Campaign through their pages, each page learning of the other's posts from the event
//! stream; a refused order shows the server's words; a resolver campaign resolves an action from
//! its generated form and reveals sealed choices only when both are in. Screenshots go to
//! docs/screenshots/, and no token appears in the server's log of the run.
//!
//! Needs chromium and chromium-driver (the README's test command installs them). Without them
//! the test is skipped with a note, unless ADJUTANT_REQUIRE_BROWSER=1.

use std::future::Future;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{scripted, short_acw_script, Backend, Game, Table, TestApp};

// ---------------------------------------------------------------- the server's log, captured

/// What a test's servers log, from debug up.
type ServerLog = Arc<Mutex<Vec<u8>>>;

/// Runs the test named `name` (its path in this binary) alone in a process of its own, where the
/// whole process's log is its servers' and goes into the buffer `test` is given: in this one
/// binary other tests run beside it, and a subscriber of one thread or runtime does not hold
/// every event of the servers it starts.
fn with_server_log<F: Future<Output = ()>>(name: &str, test: impl FnOnce(ServerLog) -> F) {
    if std::env::var_os("ADJUTANT_SERVER_LOG_ALONE").is_none() {
        let status = std::process::Command::new(std::env::current_exe().expect("this test binary"))
            .args([name, "--exact", "--test-threads=1"])
            .env("ADJUTANT_SERVER_LOG_ALONE", "1")
            .status()
            .expect("this test binary runs again");
        assert!(status.success(), "{name}, run alone, failed: {status}");
        return;
    }
    let log = ServerLog::default();
    let sink = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter("debug,hyper=info,hyper_util=info,h2=info,sqlx=info,reqwest=info,rustls=info")
        .with_ansi(false)
        .with_writer(move || Capture(sink.clone()))
        .finish();
    tracing::subscriber::set_global_default(subscriber).expect("the process's only subscriber");
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime");
    runtime.block_on(test(log));
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut log) = self.0.lock() {
            log.extend_from_slice(buf);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

// ---------------------------------------------------------------- a small WebDriver client

fn found(candidates: &[&str], env: &str) -> Option<PathBuf> {
    std::env::var_os(env)
        .map(PathBuf::from)
        .into_iter()
        .chain(candidates.iter().map(PathBuf::from))
        .find(|p| p.exists())
}

/// chromium and chromedriver, or None (skip) when absent and not required.
pub(crate) fn browser() -> Option<(PathBuf, PathBuf)> {
    let chromium = found(&["/usr/bin/chromium", "/usr/bin/chromium-browser"], "ADJUTANT_CHROMIUM");
    let driver = found(&["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"], "ADJUTANT_CHROMEDRIVER");
    match (chromium, driver) {
        (Some(c), Some(d)) => Some((c, d)),
        _ => {
            assert!(
                std::env::var("ADJUTANT_REQUIRE_BROWSER").as_deref() != Ok("1"),
                "ADJUTANT_REQUIRE_BROWSER=1 but chromium or chromedriver is missing"
            );
            eprintln!("note: chromium or chromedriver not found; skipping the play-in-the-browser test");
            None
        }
    }
}

/// axe-core's script (`ADJUTANT_AXE`, which the test command installs), or None (no
/// accessibility check) when absent and not required.
fn axe_source() -> Option<&'static str> {
    static AXE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    AXE.get_or_init(|| {
        let source = std::env::var_os("ADJUTANT_AXE").and_then(|p| std::fs::read_to_string(p).ok());
        assert!(
            source.is_some() || std::env::var("ADJUTANT_REQUIRE_AXE").as_deref() != Ok("1"),
            "ADJUTANT_REQUIRE_AXE=1 but ADJUTANT_AXE names no axe-core script"
        );
        source
    })
    .as_deref()
}

/// A running chromedriver.
pub(crate) struct Driver {
    _process: tokio::process::Child,
    base: String,
    chromium: PathBuf,
    http: reqwest::Client,
}

impl Driver {
    pub(crate) async fn start(chromium: PathBuf, driver: PathBuf) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let process = tokio::process::Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start chromedriver");
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let start = Instant::now();
        loop {
            if let Ok(r) = http.get(format!("{base}/status")).send().await {
                if r.status().is_success() {
                    break;
                }
            }
            assert!(start.elapsed() < Duration::from_secs(20), "chromedriver did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Self { _process: process, base, chromium, http }
    }

    /// A browser of its own (its own profile, so its own storage).
    pub(crate) async fn session(&self, width: u32, height: u32) -> Session {
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-quic".to_owned(),
            "--no-first-run".to_owned(),
            "--disable-background-networking".to_owned(),
            "--disable-component-update".to_owned(),
            "--disable-sync".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--hide-scrollbars".to_owned(),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", profile.path().display()),
        ];
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": self.chromium.to_string_lossy(), "args": args}
        }}});
        let answer: Value =
            self.http.post(format!("{}/session", self.base)).json(&caps).send().await.unwrap().json().await.unwrap();
        let id = answer["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("new session: {answer}")).to_owned();
        Session { url: format!("{}/session/{id}", self.base), http: self.http.clone(), _profile: profile }
    }
}

pub(crate) struct Session {
    url: String,
    http: reqwest::Client,
    _profile: tempfile::TempDir,
}

const WAIT: Duration = Duration::from_secs(15);

impl Session {
    pub(crate) async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Result<Value, Value> {
        let mut req = self.http.request(method, format!("{}{path}", self.url));
        if let Some(body) = body {
            req = req.json(&body);
        }
        let response = req.send().await.expect("webdriver");
        let ok = response.status().is_success();
        let value: Value = response.json().await.expect("webdriver json");
        if ok {
            Ok(value["value"].clone())
        } else {
            Err(value["value"].clone())
        }
    }

    pub(crate) async fn goto(&self, url: &str) {
        self.call(reqwest::Method::POST, "/url", Some(json!({"url": url}))).await.unwrap();
    }

    pub(crate) async fn quit(&self) {
        let _ = self.call(reqwest::Method::DELETE, "", None).await;
    }

    /// The element `css` selects, waiting for it to appear.
    pub(crate) async fn find(&self, css: &str) -> String {
        let start = Instant::now();
        loop {
            let found = self
                .call(reqwest::Method::POST, "/element", Some(json!({"using": "css selector", "value": css})))
                .await;
            if let Ok(element) = found {
                if let Some(id) = element.as_object().and_then(|o| o.values().next()).and_then(Value::as_str) {
                    return id.to_owned();
                }
            }
            assert!(start.elapsed() < WAIT, "no element {css}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub(crate) async fn click(&self, css: &str) {
        let start = Instant::now();
        loop {
            let id = self.find(css).await;
            match self.call(reqwest::Method::POST, &format!("/element/{id}/click"), Some(json!({}))).await {
                Ok(_) => return,
                Err(e) => {
                    // A list redrawn under the pointer: find it again.
                    assert!(start.elapsed() < WAIT, "click {css}: {e}");
                    tokio::time::sleep(Duration::from_millis(150)).await;
                }
            }
        }
    }

    /// Clears the field and types `text` as keys.
    pub(crate) async fn type_into(&self, css: &str, text: &str) {
        let id = self.find(css).await;
        self.call(reqwest::Method::POST, &format!("/element/{id}/clear"), Some(json!({}))).await.unwrap();
        if !text.is_empty() {
            self.call(reqwest::Method::POST, &format!("/element/{id}/value"), Some(json!({"text": text})))
                .await
                .unwrap_or_else(|e| panic!("type into {css}: {e}"));
        }
    }

    /// The element's text; found again if the page redrew it between the finding and the reading.
    pub(crate) async fn text(&self, css: &str) -> String {
        for _ in 0..50 {
            let id = self.find(css).await;
            match self.call(reqwest::Method::GET, &format!("/element/{id}/text"), None).await {
                Ok(text) => return text.as_str().unwrap_or_default().to_owned(),
                Err(e) if e.to_string().contains("stale element") => {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await
                }
                Err(e) => panic!("text of {css}: {e}"),
            }
        }
        panic!("text of {css}: the element kept being redrawn")
    }

    pub(crate) async fn script(&self, script: &str) -> Value {
        self.call(reqwest::Method::POST, "/execute/sync", Some(json!({"script": script, "args": []})))
            .await
            .unwrap_or_else(|e| panic!("{script}: {e}"))
    }

    /// Runs axe-core on the page as it stands, at `width` px and then at 375 px, with the WCAG
    /// 2.1 A and AA rules, and fails on any violation, naming the rule and the elements.
    pub(crate) async fn accessible(&self, page: &str, width: u32, height: u32) {
        let Some(axe) = axe_source() else { return };
        for w in [width, 375] {
            self.resize(w, height).await;
            self.script(&format!("{axe}\nreturn null;")).await;
            let found = self
                .call(
                    reqwest::Method::POST,
                    "/execute/async",
                    Some(json!({"script": "const done = arguments[arguments.length - 1];
                        const tags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
                        const found = (v) => ({ id: v.id, help: v.help,
                          nodes: v.nodes.map((n) => n.target.join(' ') + ': ' + n.failureSummary) });
                        axe.run(document, { runOnly: { type: 'tag', values: tags } })
                          .then((r) => done(r.violations.map(found)))
                          .catch((e) => done([{ id: 'axe-error', help: String(e), nodes: [] }]));", "args": []})),
                )
                .await
                .unwrap_or_else(|e| panic!("axe on {page}: {e}"));
            let violations = found.as_array().cloned().unwrap_or_default();
            assert!(violations.is_empty(), "axe-core finds on {page} at {w} px: {:#?}", violations);
        }
        self.resize(width, height).await;
    }

    /// Waits for the page's confirmation dialog, answers it (OK or Cancel) and returns its words.
    pub(crate) async fn answer_dialog(&self, accept: bool) -> String {
        let start = Instant::now();
        let asked = loop {
            if let Ok(text) = self.call(reqwest::Method::GET, "/alert/text", None).await {
                break text.as_str().unwrap_or_default().to_owned();
            }
            assert!(start.elapsed() < WAIT, "the page asked nothing");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let answer = if accept { "/alert/accept" } else { "/alert/dismiss" };
        self.call(reqwest::Method::POST, answer, Some(json!({}))).await.unwrap();
        asked
    }

    /// Waits until `script` (an expression) is true.
    pub(crate) async fn wait_for(&self, expression: &str) {
        let start = Instant::now();
        loop {
            if self.script(&format!("return !!({expression});")).await == Value::Bool(true) {
                return;
            }
            assert!(start.elapsed() < WAIT, "waited in vain for {expression}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the text of `css` contains `part`; returns the text.
    pub(crate) async fn wait_text(&self, css: &str, part: &str) -> String {
        let start = Instant::now();
        loop {
            let text = self.text(css).await;
            if text.contains(part) {
                return text;
            }
            assert!(start.elapsed() < WAIT, "{css} never said {part:?}; it says {text:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub(crate) async fn resize(&self, width: u32, height: u32) {
        self.call(reqwest::Method::POST, "/window/rect", Some(json!({"width": width, "height": height})))
            .await
            .unwrap();
    }

    /// A PNG of the window from the top of the page, saved to docs/screenshots/`name`.
    pub(crate) async fn screenshot(&self, name: &str) -> Vec<u8> {
        use base64::Engine;
        self.script("window.scrollTo(0, 0); document.activeElement && document.activeElement.blur(); return null;")
            .await;
        let shot = self.call(reqwest::Method::GET, "/screenshot", None).await.unwrap();
        let png = base64::engine::general_purpose::STANDARD.decode(shot.as_str().unwrap()).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), &png).unwrap();
        png
    }
}

// ---------------------------------------------------------------- the managed campaign

/// A side's page: waits until it has drawn the state after post `seq`.
pub(crate) async fn caught_up(page: &Session, seq: usize) {
    page.wait_for(&format!("document.body.dataset.after === '{seq}'")).await;
}

/// Plays script step `i` through the page of its side, at the step's stamp.
async fn play_step(app: &TestApp, page: &Session, i: usize, step: &Value) {
    caught_up(page, i).await;
    let body = &step["body"];
    let kind = step["kind"].as_str().unwrap();
    let submit = |form: &str| format!("#form-{form} button[type=submit]");
    match kind {
        "deploy" => {
            for p in body["placements"].as_array().unwrap() {
                page.type_into(&format!("#deploy-{}", p["unit"].as_str().unwrap()), p["hex"].as_str().unwrap()).await;
            }
        }
        "move" => {
            let unit = body["unit"].as_str().unwrap();
            let path: Vec<&str> = body["path"].as_array().unwrap().iter().map(|h| h.as_str().unwrap()).collect();
            let to = path.last().unwrap();
            // Click the unit, see where it can go, click the hex on the map.
            page.click(&format!("#my-units button[data-unit='{unit}']")).await;
            page.find(&format!("#destinations button[data-hex='{to}']")).await;
            page.wait_for(&format!("document.querySelector(\"#map [data-hex='{to}']\").classList.contains('reach')"))
                .await;
            page.click(&format!("#map [data-hex='{to}']")).await;
            page.wait_for("document.getElementById('move-path').value !== ''").await;
            let offered = page.script("return document.getElementById('move-path').value;").await;
            if offered.as_str() != Some(path.join(" ").as_str()) {
                // The script takes another path of the same cost: type it.
                page.type_into("#move-path", &path.join(" ")).await;
            }
        }
        "attack" => {
            for unit in body["units"].as_array().unwrap() {
                page.click(&format!("#attack-units input[value='{}']", unit.as_str().unwrap())).await;
            }
            page.type_into("#attack-target", body["target"].as_str().unwrap()).await;
        }
        "casualty_order" => {
            let order: Vec<&str> = body["order"].as_array().unwrap().iter().map(|u| u.as_str().unwrap()).collect();
            page.type_into("#casualty-order", &order.join("\n")).await;
        }
        "retreat" => {
            let lines: Vec<String> = body["paths"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    let hexes: Vec<&str> = p["path"].as_array().unwrap().iter().map(|h| h.as_str().unwrap()).collect();
                    format!("{} {}", p["unit"].as_str().unwrap(), hexes.join(" "))
                })
                .collect();
            page.type_into("#retreat-paths", &lines.join("\n")).await;
        }
        "reinforce" => {
            let lines: Vec<String> = body["factors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| format!("{} {}", f["unit"].as_str().unwrap(), f["factors"]))
                .collect();
            page.type_into("#reinforce-factors", &lines.join("\n")).await;
        }
        "end_turn" | "reinforcement" => {}
        other => panic!("the script has a {other} step the test does not play"),
    }
    app.clock.set(step["stamp"].as_str().unwrap().parse().unwrap());
    page.click(&submit(kind)).await;
    page.wait_text("#receipt", &format!("Posted #{} ({kind})", i + 1)).await;
    if kind == "move" {
        // The new state clears what the moved unit could reach.
        caught_up(page, i + 1).await;
        assert_eq!(page.script("return document.querySelectorAll('#map .reach').length;").await, 0, "a stale reach");
    }
}

/// The reinforce form's new unit: the page sends the body the API names, so the server refuses
/// it in the same words (here: more than the Union's stored points), and nothing is posted.
async fn new_unit_refused_as_the_api_refuses(app: &TestApp, page: &Session, token: &str, campaign: &str) {
    let posts = app.db.count("posts").await;
    page.type_into("#new-unit-name", "1st <b>Volunteers</b>").await;
    page.click("#new-unit-arm option[value='cavalry']").await;
    page.type_into("#new-unit-hex", "0106").await;
    page.type_into("#new-unit-factors", "3").await;
    page.click("#form-reinforce button[type=submit]").await;
    let refusal = page.wait_text("#form-reinforce .refusal", "Refused:").await;
    let body = json!({"factors": [], "new_units": [
        {"name": "1st <b>Volunteers</b>", "arm": "cavalry", "hex": "0106", "factors": 3}]});
    let api = app.post(token, campaign, json!({"kind": "reinforce", "body": body})).await;
    assert_eq!(api.status, 409, "not enough points stored now: {}", api.text);
    let problem = &api.body;
    // A new cavalry unit with 3 factors costs 1 + 3 × 2 = 7 points: the page sent the new unit.
    assert_eq!(problem["rule"], "reinforcement.points", "{problem}");
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.starts_with("this costs 7 reinforcement points"), "{problem}");
    assert!(refusal.contains(detail), "{refusal:?} should hold {detail:?}");
    assert_eq!(app.db.count("posts").await, posts, "a refused order was posted");
    // The form keeps what was typed; cleared, it posts the script's factors alone.
    assert_eq!(page.script("return document.getElementById('new-unit-name').value;").await, "1st <b>Volunteers</b>");
    page.type_into("#new-unit-name", "").await;
    page.type_into("#new-unit-hex", "").await;
}

#[test]
fn two_players_play_the_scripted_campaign_in_their_browsers() {
    with_server_log("play::two_players_play_the_scripted_campaign_in_their_browsers", two_players_play);
}

async fn two_players_play(log: ServerLog) {
    let Some((chromium, chromedriver)) = browser() else { return };
    let app = TestApp::spawn(Backend::Sqlite).await;
    let driver = Driver::start(chromium, chromedriver).await;
    let moderator = app.moderator().await;
    let script = short_acw_script();

    // The moderator creates the campaign and the two players in the console.
    let console = driver.session(1280, 1000).await;
    console.goto(&format!("{}/console#token={moderator}", app.base)).await;
    console.wait_text("#signed-in", "Signed in as Moderator, moderator").await;
    assert!(
        !console.script("return location.href;").await.as_str().unwrap().contains("token"),
        "the token stays in the address bar"
    );
    // The options the API has are in the form: a sealed-delay campaign under rules version 2.
    console.type_into("#create-name", "Sealed").await;
    console.click("#create-game option[value='scenario:short-acw']").await;
    console.click("#create-result-time option[value='sealed_delay']").await;
    console.click("#create-rules-version option[value='2']").await;
    console.click("#form-create button[type=submit]").await;
    console.wait_text("#created", "Created Sealed").await;
    let sealed = console.text("#created .campaign-id").await;
    let settings = app.get(&format!("/v1/campaigns/{sealed}")).await.ok(200)["settings"].clone();
    assert_eq!((settings["result_time"].as_str(), settings["rules_version"].as_u64()), (Some("sealed_delay"), Some(2)));
    // The message stands beside the form that made the campaign, not at the foot of the page.
    assert_eq!(console.script("return document.querySelector('#create #created') !== null;").await, true);

    console.type_into("#create-name", "Valley <Campaign> 1862").await;
    console.click("#create-game option[value='scenario:short-acw']").await;
    console.click("#create-result-time option[value='post']").await;
    console.click("#create-rules-version option[value='3']").await;
    console.click("#form-create button[type=submit]").await;
    console.wait_text("#created", "Created Valley").await;
    let campaign = console.text("#created .campaign-id").await;
    let settings = app.get(&format!("/v1/campaigns/{campaign}")).await.ok(200)["settings"].clone();
    assert_eq!((settings["result_time"].as_str(), settings["rules_version"].as_u64()), (Some("post"), Some(3)));
    let mut links = Vec::new();
    for (name, side) in [("Grant", "union"), ("Lee", "confederate")] {
        console.type_into("#player-name", name).await;
        console.click(&format!("#player-side option[value='{side}']")).await;
        console.click("#form-player button[type=submit]").await;
        let link = console.find(&format!(".issued[data-kind='{side}'] a.play-link")).await;
        let href = console.call(reqwest::Method::GET, &format!("/element/{link}/property/href"), None).await.unwrap();
        links.push(href.as_str().unwrap().to_owned());
    }
    assert!(links[0].starts_with(&format!("{}/play/{campaign}#token=", app.base)), "{}", links[0]);
    let tokens: Vec<String> = links.iter().map(|l| l.split("#token=").nth(1).unwrap().to_owned()).collect();
    // The console lists the campaign's players with their ids, and rotates and revokes a token
    // by its buttons, each after a confirmation.
    console.type_into("#player-name", "Spare").await;
    console.click("#player-side option[value='union']").await;
    console.click("#form-player button[type=submit]").await;
    console.wait_text("#player-list", "Spare").await;
    let listed =
        app.request(reqwest::Method::GET, &format!("/v1/campaigns/{campaign}/players"), Some(&moderator), None).await;
    let listed = listed.ok(200)["players"].as_array().unwrap().clone();
    let mut names: Vec<&str> = listed.iter().map(|p| p["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["Grant", "Lee", "Spare"]);
    let spare = listed.iter().find(|p| p["name"] == "Spare").unwrap()["id"].as_str().unwrap().to_owned();
    let row = format!("#player-list tr[data-player='{spare}']");
    assert!(console.text(&row).await.contains(&spare), "the row shows the player's id");
    console.click(&format!("{row} button.rotate")).await;
    assert!(console.answer_dialog(true).await.contains("Give Spare a new token?"));
    console.wait_text("#issued", "Spare (the Union), new").await;
    console.click(&format!("{row} button.revoke")).await;
    assert!(console.answer_dialog(true).await.contains("Revoke Spare's token?"));
    console.wait_text(&row, "revoked").await;
    console.resize(1280, 2000).await;
    console.screenshot("console-players.png").await;
    console.resize(1280, 1000).await;
    let listed =
        app.request(reqwest::Method::GET, &format!("/v1/campaigns/{campaign}/players"), Some(&moderator), None).await;
    let listed = listed.ok(200)["players"].as_array().unwrap().clone();
    for p in &listed {
        assert_eq!(p["revoked_at"].is_string(), p["id"] == spare.as_str(), "{p}");
    }
    console.screenshot("console.png").await;
    let label = console.text("label[for='create-digit']").await;
    assert_eq!(label, "Result number: which two decimals of √N it takes");
    console.accessible("the console", 1280, 1000).await;

    // Both players open their links.
    let union = driver.session(1280, 1000).await;
    let rebel = driver.session(1280, 1000).await;
    for (page, link, who) in
        [(&union, &links[0], "Grant, player (the Union)"), (&rebel, &links[1], "Lee, player (the Rebels)")]
    {
        page.goto(link).await;
        page.wait_text("#signed-in", who).await;
        assert!(!page.script("return location.href;").await.as_str().unwrap().contains("token="));
        caught_up(page, 0).await;
        // A mark that survives only while the page is not reloaded.
        page.script("window.notReloaded = true; return null;").await;
    }
    // The campaign's name is text, not markup.
    assert_eq!(union.text("h1").await, "Valley <Campaign> 1862");

    let page_of = |side: &str| if side == "union" { &union } else { &rebel };
    // Deployment by the map: the side's zone is highlighted; a unit chosen, then a hex of the
    // zone clicked, fills its placement, and the next unit is chosen.
    caught_up(&union, 0).await;
    let zone = union.script("return document.querySelectorAll('#map .zone').length;").await;
    assert!(zone.as_u64().unwrap() >= 7, "the deployment zone is not highlighted: {zone}");
    union.click("#my-units button[data-unit='us-14th-inf']").await;
    union.click("#map [data-hex='0403']").await;
    assert_eq!(union.script("return document.getElementById('deploy-us-14th-inf').value;").await, "0403");
    union.wait_text("#destinations", "to place").await;
    union.click("#map [data-hex='1212']").await;
    union.wait_text("#destinations", "1212 is not in your deployment zone").await;
    union.screenshot("deploy-zone.png").await;
    // A refused deployment names the unit at fault, not `placements[0]`.
    for (n, p) in script[0]["body"]["placements"].as_array().unwrap().iter().enumerate() {
        let hex = if n == 0 { "0101" } else { p["hex"].as_str().unwrap() };
        union.type_into(&format!("#deploy-{}", p["unit"].as_str().unwrap()), hex).await;
    }
    union.click("#form-deploy button[type=submit]").await;
    let refusal = union.wait_text("#form-deploy .refusal", "Refused:").await;
    assert!(refusal.starts_with("Refused: 14th Inf: hex 0101 is not within 1 hex of"), "{refusal}");
    assert!(!refusal.contains("placements"), "{refusal}");
    for (i, step) in script.iter().enumerate().take(2) {
        play_step(&app, page_of(step["side"].as_str().unwrap()), i, step).await;
        if i == 0 {
            // The Union has deployed: sealed. The Rebels' page shows no Union counter and says
            // why; the Union's page says its units are placed and sealed.
            caught_up(&rebel, 1).await;
            let line = rebel.wait_text("#turn-line", "have deployed, sealed").await;
            assert!(line.contains("the Union"), "{line}");
            let shown = rebel.script("return document.getElementById('map').textContent;").await;
            assert!(!shown.as_str().unwrap().contains("14th Inf"), "a Union counter is on the Rebels' map");
            caught_up(&union, 1).await;
            union.wait_text("#turn-line", "your units are placed, sealed until the Rebels have deployed").await;
            assert_eq!(union.script("return document.getElementById('form-deploy').hidden;").await, true);
        }
    }
    // Both have deployed: the Union's counters are on the Rebels' map.
    caught_up(&rebel, 2).await;
    let shown = rebel.script("return document.getElementById('map').textContent;").await;
    assert!(shown.as_str().unwrap().contains("14th Inf"), "the Union's counters are not shown once revealed");
    // A deployment decides nothing by its stamp: its receipt and log entry show no result number.
    for page in [&union, &rebel] {
        let receipt = page.text("#receipt").await;
        assert!(receipt.contains("deploy") && !receipt.contains("Result number"), "{receipt}");
    }
    caught_up(&rebel, 2).await;
    let deployed = rebel.text("#post-1").await;
    assert!(deployed.contains("#1") && !deployed.contains("result number"), "{deployed}");

    // A refused order: out of turn, the Rebels try to move. The page shows the server's own
    // words beside the order, keeps what was typed, and nothing is posted.
    caught_up(&rebel, 2).await;
    rebel.click("#move-unit option[value='cs-51st-inf']").await;
    rebel.type_into("#move-path", "0603").await;
    rebel.click("#form-move button[type=submit]").await;
    let refusal = rebel.wait_text("#form-move .refusal", "Refused:").await;
    let api = app
        .post(&tokens[1], &campaign, json!({"kind": "move", "body": {"unit": "cs-51st-inf", "path": ["0603"]}}))
        .await;
    let detail = api.problem(409, "body.side")["detail"].as_str().unwrap().to_owned();
    assert!(refusal.contains(&detail), "{refusal:?} should hold {detail:?}");
    // The page sent no side: the refusal does not name one.
    assert!(!refusal.contains("body."), "{refusal:?}");
    assert_eq!(rebel.script("return document.getElementById('move-path').value;").await, "0603");
    assert_eq!(app.db.count("posts").await, 2);

    for (i, step) in script.iter().enumerate().skip(2) {
        if step["kind"] == "reinforcement" {
            // The Rebel reinforcement post comes first on the page while it can be made.
            caught_up(&rebel, i).await;
            let first = "const f = document.getElementById('roll-first'); return !f.hidden && f.contains(document.getElementById('form-reinforcement'));";
            assert_eq!(rebel.script(first).await, true, "the reinforcement post is not first");
            let line = rebel.text("#turn-line").await;
            assert!(
                line.contains("you (the Rebels) may post reinforcement, reinforce, move, attack or end_turn"),
                "{line}"
            );
        }
        if i == 21 {
            new_unit_refused_as_the_api_refuses(&app, &union, &tokens[0], &campaign).await;
        }
        play_step(&app, page_of(step["side"].as_str().unwrap()), i, step).await;
        if i == 13 {
            // The turn line and the answers awaited tell one story: the battle waits.
            caught_up(&union, 14).await;
            let line = union.text("#turn-line").await;
            assert!(line.contains("Battle 1 at 0604 waits for an answer") && line.contains("casualty_order"), "{line}");
            assert!(!line.contains("to act"), "{line}");
            // The battle: the receipt shows the stamp, the result number and its bc line.
            let receipt = union.text("#receipt").await;
            assert!(receipt.contains("2026-03-02T09:51:45.250Z"), "{receipt}");
            assert!(receipt.contains("Result number 21 from √95145 = 308.455831522115"), "{receipt}");
            assert!(receipt.contains("bc"), "{receipt}");
            // The Rebels' page learns of it from the stream: they owe a casualty order.
            caught_up(&rebel, 14).await;
            rebel.wait_text("#awaiting", "You:").await;
            let post = rebel.text("#post-14").await.to_lowercase();
            assert!(post.contains("#14 union attack"), "{post}");
        }
        if i == 16 {
            // Turn by turn: the Union's turn 2 goes on; a step back shows the Rebels' turn 1 as
            // it began, with its posts (5 to 8) beside it, and a step forward comes back.
            caught_up(&union, 17).await;
            union.wait_text("#turn-label", "Turn 2, Union (4 of 4; posts from 9, going on)").await;
            union.click("#turn-earlier").await;
            union.wait_text("#turn-label", "Turn 1, Rebels (3 of 4; posts 5–8)").await;
            union.wait_for("document.getElementById('turn-post-5') && !document.getElementById('turn-post-9')").await;
            let map = union.script("return document.getElementById('turn-map').getAttribute('src');").await;
            assert_eq!(map, format!("/v1/campaigns/{campaign}/map.svg?turn=1&side=confederate"));
            union.click("#turn-later").await;
            union.wait_text("#turn-label", "Turn 2, Union").await;
            union.wait_for("document.getElementById('turn-post-17') !== null").await;
            for (page, name) in [(&union, "play"), (&rebel, "play-rebel")] {
                caught_up(page, 17).await;
                page.resize(1280, 1400).await;
                page.screenshot(&format!("{name}-desktop.png")).await;
            }
            union.resize(375, 812).await;
            union.screenshot("play-phone.png").await;
            let wide = union.script("return document.documentElement.scrollWidth;").await;
            assert!(wide.as_u64().unwrap() <= 375, "the page scrolls sideways at 375 px: {wide}");
            union.resize(1280, 1000).await;
            union.accessible("the Union's player page", 1280, 1000).await;
            rebel.accessible("the Rebels' player page", 1280, 1000).await;
            // The public page of the same campaign, mid-game.
            let public = driver.session(1280, 1000).await;
            public.goto(&format!("{}/campaigns/{campaign}", app.base)).await;
            public.wait_for("document.getElementById('audit-status') && !document.getElementById('audit-status').classList.contains('pending')").await;
            public.accessible("the public campaign page", 1280, 1000).await;
            public.quit().await;
        }
    }
    let last = script.len();
    for page in [&union, &rebel] {
        caught_up(page, last).await;
        page.wait_text("#turn-line", "The game is over: Major Union Victory").await;
        assert_eq!(page.script("return window.notReloaded === true;").await, true, "the page was reloaded");
    }
    // The moderator's reports are pages, linked from the console: the whole-campaign audit, a
    // battle's audit with every number's working, and the fairness report's pictures.
    for (link, page) in [("audit-link", "audit"), ("fairness-link", "fairness")] {
        let href = console.script(&format!("return document.getElementById('{link}').getAttribute('href');")).await;
        assert_eq!(href, format!("/campaigns/{campaign}/{page}"));
    }
    let reports = driver.session(1280, 1000).await;
    reports.goto(&format!("{}/campaigns/{campaign}/audit", app.base)).await;
    reports.wait_text("#audit-status", &format!("All {last} posts check out")).await;
    assert_eq!(reports.text("h1").await, "Audit of Valley <Campaign> 1862");
    reports.screenshot("audit.png").await;
    reports.accessible("the audit page", 1280, 1000).await;
    reports.goto(&format!("{}/campaigns/{campaign}/posts/14/audit", app.base)).await;
    let working = reports.wait_text("#decided", "Battle 1 at 0604").await;
    for line in [
        "Victory number 56 = 100 × 15 / 27 = 55.56, rounded half up",
        "Result number 21 ≤ victory 56: the attacker wins",
        "Difference 35 (band 31–40): winner ×0.5, loser ×2 of the basic rate 21/15",
        "Casualties: Union 1, Rebel 3",
    ] {
        assert!(working.contains(line), "the battle's audit lacks {line:?}: {working}");
    }
    let stamp = reports.text("#stamp").await;
    assert!(stamp.contains("N = 95145") && stamp.contains("result number 21"), "{stamp}");
    reports.screenshot("post-audit.png").await;
    reports.accessible("a battle's audit page", 1280, 1000).await;
    reports.goto(&format!("{}/campaigns/{campaign}/fairness", app.base)).await;
    let short = reports.wait_text("#in-short", "In 1 battle").await;
    assert!(short.contains("nothing stands out") || short.contains("worth a moderator's look"), "{short}");
    let pictures = reports.script("return document.querySelectorAll('figure svg').length;").await;
    assert_eq!(
        pictures.as_u64(),
        Some(4),
        "one picture of the Union's wins, the spread, the seconds, the milliseconds"
    );
    reports.screenshot("fairness.png").await;
    reports.accessible("the fairness page", 1280, 1000).await;
    reports.quit().await;

    // A rollback from the console says first which posts it would void; dismissed, it posts
    // nothing.
    console.type_into("#rollback-to", &(last - 2).to_string()).await;
    console.type_into("#rollback-reason", "a wrong order").await;
    console.click("#form-rollback button[type=submit]").await;
    let asked = console.answer_dialog(false).await;
    assert!(asked.contains(&format!("This voids 2 posts: #{} ", last - 1)), "{asked}");
    assert!(asked.contains(&format!("#{last} ")) && asked.contains("later rollback"), "{asked}");
    let after = app.get(&format!("/v1/campaigns/{campaign}/posts?after={last}")).await;
    assert_eq!(after.ok(200)["posts"], json!([]), "a dismissed rollback posted something");

    // Reloaded, the page shows the player's last order from the log, not "nothing posted".
    let last_rebel = script.iter().rposition(|s| s["side"] == "confederate").unwrap() + 1;
    rebel.goto(&format!("{}/play/{campaign}", app.base)).await;
    caught_up(&rebel, last).await;
    let receipt = rebel.wait_text("#receipt", &format!("Posted #{last_rebel} (")).await;
    assert!(!receipt.contains("Nothing posted"), "{receipt}");
    // A link with another player's token asks before it switches accounts; declined, the page
    // stays signed in as before.
    union.goto("about:blank").await;
    union.goto(&links[1]).await;
    let asked = union.answer_dialog(false).await;
    assert!(
        asked.contains(
            "You are signed in as Grant, player (the Union). Open this page as Lee, player (the Rebels) instead?"
        ),
        "{asked}"
    );
    union.wait_text("#signed-in", "Signed in as Grant").await;

    // The same script posted straight to the API reaches the same state.
    let reference = app.campaign(&moderator, json!({"name": "Reference", "scenario": "short-acw"})).await;
    let ref_union = app.player(&moderator, &reference, "union").await;
    let ref_rebel = app.player(&moderator, &reference, "confederate").await;
    for step in script {
        app.clock.set(step["stamp"].as_str().unwrap().parse().unwrap());
        let token = if step["side"] == "union" { &ref_union } else { &ref_rebel };
        app.post(token, &reference, json!({"kind": step["kind"], "body": step["body"]})).await.ok(201);
    }
    let played = app.get(&format!("/v1/campaigns/{campaign}/state")).await.ok(200)["state"].clone();
    let scripted = app.get(&format!("/v1/campaigns/{reference}/state")).await.ok(200)["state"].clone();
    assert_eq!(played, scripted);
    assert_eq!(played["result"]["condition"], "Major Union Victory: Capture City 'M' within 7 turns.");
    let audit = app.get(&format!("/v1/campaigns/{campaign}/audit")).await;
    assert_eq!(audit.ok(200)["ok"], true, "{}", audit.text);
    assert_eq!(audit.body["posts"], last);

    // The moderator's other tools in the console: a webhook and a rollback with its reason.
    console.type_into("#webhook-url", "http://127.0.0.1:9/hook").await;
    console.click("#form-webhook button[type=submit]").await;
    console.wait_text("#webhook-list", "http://127.0.0.1:9/hook").await;
    console.type_into("#rollback-to", &(last - 1).to_string()).await;
    console.type_into("#rollback-reason", "The Union's last order went to the wrong thread.").await;
    console.click("#form-rollback button[type=submit]").await;
    let asked = console.answer_dialog(true).await;
    assert!(asked.contains("This voids 1 post: "), "{asked}");
    let receipt = console.wait_text("#receipt", &format!("Posted #{} (rollback)", last + 1)).await;
    assert!(receipt.contains("wrong thread"), "{receipt}");
    let voided = app.get(&format!("/v1/campaigns/{campaign}/posts/{last}")).await.ok(200)["void"].clone();
    assert_eq!(voided, true);
    // The players' pages follow: the game is no longer over.
    union.wait_for("!document.getElementById('turn-line').textContent.includes('over')").await;
    union.wait_for(&format!("document.querySelector('#post-{last}').classList.contains('void')")).await;

    for page in [&console, &union, &rebel] {
        page.quit().await;
    }
    // The server logged the run (the pages and the API calls) and no token in it.
    let log = String::from_utf8_lossy(&log.lock().unwrap()).into_owned();
    assert!(log.contains(&format!("/play/{campaign}")), "the server's log was not captured");
    assert!(log.contains("/v1/whoami"));
    for token in tokens.iter().chain([&moderator]) {
        assert!(!log.contains(token.as_str()), "a token is in the server's log");
    }
}

// ---------------------------------------------------------------- a resolver campaign

#[test]
fn a_resolver_campaign_resolves_from_its_forms_and_reveals_sealed_choices_after_both() {
    with_server_log(
        "play::a_resolver_campaign_resolves_from_its_forms_and_reveals_sealed_choices_after_both",
        resolver_campaign,
    );
}

async fn resolver_campaign(log: ServerLog) {
    let Some((chromium, chromedriver)) = browser() else { return };
    let Table { app, moderator, campaign, union: union_token, confederate: rebel_token } =
        Table::open(TestApp::spawn(Backend::Sqlite).await, "Melee", "schulz-acw").await;
    let driver = Driver::start(chromium, chromedriver).await;
    // Every page carries its security headers; no script may run inline.
    for path in [format!("/play/{campaign}"), "/console".to_owned(), format!("/campaigns/{campaign}")] {
        let page = app.client.get(format!("{}{path}", app.base)).send().await.unwrap();
        assert_eq!(page.status(), 200, "{path}");
        let headers = page.headers();
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"), "{path}: {csp}");
        assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(headers["referrer-policy"], "no-referrer", "{path}");
        assert!(headers.get("set-cookie").is_none(), "{path}");
        let html = page.text().await.unwrap();
        assert!(!html.contains("<script>"), "{path} has an inline script");
    }

    let union = driver.session(1280, 1000).await;
    let rebel = driver.session(1280, 1000).await;
    for (page, token) in [(&union, &union_token), (&rebel, &rebel_token)] {
        page.goto(&format!("{}/play/{campaign}#token={token}", app.base)).await;
        page.wait_text("#signed-in", "Signed in").await;
        page.wait_for("document.body.dataset.after === '0'").await;
    }

    // One form per action, from the ruleset's input schemas, the example filled in.
    let ruleset = app.get("/v1/rulesets/schulz-acw").await.ok(200).clone();
    let actions = ruleset["actions"].as_array().unwrap();
    for action in actions {
        union.find(&format!("form[data-action='{}']", action["name"].as_str().unwrap())).await;
    }
    let first = actions[0]["name"].as_str().unwrap();
    union.click(&format!("#action-{first} button[type=submit]")).await;
    let receipt = union.wait_text("#receipt", "Posted #1 (resolve)").await;
    let post = app.get(&format!("/v1/campaigns/{campaign}/posts/1")).await.ok(200).clone();
    assert_eq!(post["body"]["inputs"], actions[0]["example"], "the form sent the example as it stands");
    let outcome = &post["outcomes"][0];
    assert!(receipt.contains(outcome["headline"].as_str().unwrap()), "{receipt}");
    // Every die and every table cell, as the API gives them.
    let dice = outcome["data"]["dice"].as_array().unwrap();
    let shown = union.script("return document.querySelectorAll('#receipt tr.die').length;").await;
    assert_eq!(shown.as_u64().unwrap() as usize, dice.len());
    let lookups = outcome["data"]["lookups"].as_array().unwrap();
    let shown = union.script("return document.querySelectorAll('#receipt tr.lookup').length;").await;
    assert_eq!(shown.as_u64().unwrap() as usize, lookups.len());
    for die in dice {
        assert!(receipt.contains(die["purpose"].as_str().unwrap()), "{receipt}");
    }

    // Sealed choices: the Union seals first; neither page shows it until the Rebels' is in.
    app.clock.set(adjutant_e2e::seed_morning() + chrono::Duration::seconds(20));
    union.type_into("#seal-topic", "melee-1").await;
    union.click("#seal-role option[value='attacker']").await;
    union.click("#seal-choice option[value='stay']").await;
    union.click("#form-seal button[type=submit]").await;
    union.wait_text("#receipt", "Posted #2 (seal)").await;
    rebel.wait_for("document.body.dataset.after === '2'").await;
    let seals = rebel.wait_text("#seal-list", "melee-1").await;
    assert!(seals.contains("sealed (not revealed yet)") && !seals.contains("stay"), "{seals}");
    rebel.type_into("#seal-topic", "melee-1").await;
    rebel.click("#seal-role option[value='defender']").await;
    rebel.click("#seal-choice option[value='retreat']").await;
    rebel.click("#form-seal button[type=submit]").await;
    rebel.wait_text("#receipt", "Posted #3 (seal)").await;
    for page in [&union, &rebel] {
        page.wait_for("document.body.dataset.after === '3'").await;
        let seals = page.wait_text("#seal-list", "stay").await;
        assert!(seals.contains("retreat") && !seals.contains("not revealed"), "{seals}");
    }

    // The melee round resolved with the two sealed choices.
    app.clock.set(adjutant_e2e::seed_morning() + chrono::Duration::seconds(40));
    for field in ["attacker_choice", "defender_choice"] {
        let css = format!("#in-melee_round-{field} option[value='']");
        if union.script(&format!("return !!document.querySelector(\"{css}\");")).await == true {
            union.click(&css).await;
        }
    }
    // The second round: the first has no stay-or-retreat choice before it.
    union.type_into("#in-melee_round-round", "2").await;
    union.type_into("#sealed-melee_round", "melee-1").await;
    union.click("#action-melee_round button[type=submit]").await;
    union.wait_for("document.getElementById('receipt').textContent.includes('Posted #4') || document.querySelector('#action-melee_round .refusal').textContent !== ''").await;
    let refusal = union.text("#action-melee_round .refusal").await;
    assert!(refusal.is_empty(), "{refusal}");
    union.wait_text("#receipt", "Posted #4 (resolve)").await;
    let round = app.get(&format!("/v1/campaigns/{campaign}/posts/4")).await.ok(200).clone();
    assert_eq!(round["body"]["sealed"], "melee-1");
    assert_eq!(round["outcomes"][0]["data"]["action"], "melee_round");
    union.screenshot("resolver-desktop.png").await;
    union.accessible("a resolver player page", 1280, 1000).await;
    union.quit().await;
    rebel.quit().await;

    let log = String::from_utf8_lossy(&log.lock().unwrap()).into_owned();
    assert!(log.contains(&format!("/play/{campaign}")), "the server's log was not captured");
    for token in [&union_token, &rebel_token, &moderator] {
        assert!(!log.contains(token.as_str()), "a token is in the server's log");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deadline_counts_down_on_the_player_page_and_the_console_shows_the_campaign_overdue() {
    let Some((chromium, chromedriver)) = browser() else { return };
    let app = TestApp::spawn_with(Backend::Sqlite, |c| {
        c.deadline_poll_ms = 20;
        c.deadline_rescan_ms = 20;
    })
    .await;
    let settings = json!({"turn_deadline": "PT1H", "missed_turn": "moderator"});
    let Game { app, moderator, campaign, union, confederate: rebel, .. } = Game::start(app, "Clocked", settings).await;
    let driver = Driver::start(chromium, chromedriver).await;
    // A campaign with no deadlines, first by name: the console lists the overdue one first.
    app.campaign(&moderator, json!({"name": "Aardvark", "mode": "managed", "scenario": "short-acw"})).await;
    let start = adjutant_e2e::seed_morning();
    for (i, token) in [(0, &union), (1, &rebel)] {
        app.post(token, &campaign, scripted(i)).await.ok(201);
    }
    app.clock.set(start + chrono::TimeDelta::minutes(10));
    app.post(&union, &campaign, json!({"kind": "end_turn", "body": {}})).await.ok(201);

    // The Rebel's page counts down the hour the Rebel has, by the server's clock.
    let page = driver.session(1280, 1000).await;
    page.goto(&format!("{}/play/{campaign}#token={rebel}", app.base)).await;
    page.wait_text("#signed-in", "Signed in").await;
    // (By the server's clock the hour is whole; the page counts down in real time from there.)
    let line = page.wait_text("#clock-line", "You have").await;
    assert!(line.contains("left (turn 1, until Sat 21 Nov 2026 11:01 UTC)"), "{line}");
    let left = line.split("You have ").nth(1).unwrap();
    assert!(left.starts_with("1 h 00 min") || left.starts_with("59 min") || left.starts_with("58 min"), "{line}");
    page.screenshot("deadline-countdown.png").await;
    page.accessible("a player page with a deadline", 1280, 1000).await;
    // The public page counts it down too.
    let public = driver.session(1280, 1000).await;
    public.goto(&format!("{}/campaigns/{campaign}", app.base)).await;
    let counted = public.wait_text("#clock-line", " left)").await;
    assert!(
        counted.contains("(1 h 00 min") || counted.contains("(0 h 59 min") || counted.contains("(0 h 58 min"),
        "{counted}"
    );
    assert!(counted.contains("Waiting for the Rebel (turn 1)"), "{counted}");
    public.quit().await;

    // The hour passes: under the moderator's policy the page and the console say overdue.
    app.clock.set(start + chrono::TimeDelta::minutes(71));
    page.wait_text("#clock-line", "Overdue").await;
    assert_eq!(page.script("return document.getElementById('clock-line').dataset.status;").await, "overdue");
    let console = driver.session(1280, 1000).await;
    console.goto(&format!("{}/console#token={moderator}", app.base)).await;
    console.wait_text("#signed-in", "Signed in").await;
    console.click(&format!("#campaign-pick option[value='{campaign}']")).await;
    let said = console.wait_text("#campaign-clock", "Overdue").await;
    assert!(said.contains("Rebel") || said.contains("confederate"), "{said}");
    console.wait_for("document.querySelectorAll('#overview tbody tr').length === 2").await;
    let first = console.script("return document.querySelector('#overview tbody tr').dataset.status;").await;
    assert_eq!(first, "overdue");
    console.resize(1280, 1700).await;
    console.screenshot("console-overdue.png").await;
    console.resize(1280, 1000).await;
    console.click("#overview-order option[value='name']").await;
    console.wait_for("document.querySelector('#overview tbody tr').dataset.status === 'no deadlines'").await;
    console.accessible("the console with a campaign overdue", 1280, 1000).await;

    // The moderator records the Rebel player's forum handle for the bot to mention.
    let players =
        app.request(reqwest::Method::GET, &format!("/v1/campaigns/{campaign}/players"), Some(&moderator), None).await;
    let rebel_id = players.ok(200)["players"].as_array().unwrap().iter().find(|p| p["side"] == "confederate").unwrap()
        ["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let row = format!("#player-list tr[data-player='{rebel_id}']");
    console.type_into(&format!("{row} .contact-handle"), "@stonewall").await;
    console.click(&format!("{row} .contact button")).await;
    console.wait_text(&format!("{row} .said"), "Contact saved").await;
    let players =
        app.request(reqwest::Method::GET, &format!("/v1/campaigns/{campaign}/players"), Some(&moderator), None).await;
    let rebel =
        players.ok(200)["players"].as_array().unwrap().iter().find(|p| p["id"] == rebel_id.as_str()).unwrap().clone();
    assert_eq!(rebel["contact"], json!({"forum_handle": "stonewall"}));
    page.quit().await;
    console.quit().await;
}
