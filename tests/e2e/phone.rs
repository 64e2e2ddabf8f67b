//! The player's page on a 375 px phone, played by touch alone: the Rebel player deploys by
//! tapping hexes of the highlighted zone, zooms the map with the buttons, a pinch, a drag and
//! the keys, moves a unit by tapping it and then a highlighted hex, and, once beaten, builds each
//! retreating unit's path by tapping the highlighted hexes; no hex number is typed. The Union
//! player, on a phone too, attacks by ticking its units and tapping the highlighted target. What
//! the server reports afterwards is what the scripted campaign reaches through the API. A
//! screenshot of the zoomed map with its highlights goes to docs/screenshots/.
//!
//! Needs chromium and chromium-driver, as the play tests do.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{short_acw_script, Backend, Game, TestApp};

use crate::play::{browser, caught_up, Driver, Session};

const WIDTH: u32 = 375;
const HEIGHT: u32 = 812;

/// A finger's touch: down at the first point, along the others, up at the last.
fn finger(id: &str, points: &[(i64, i64)]) -> Value {
    let mut actions = vec![
        json!({"type": "pointerMove", "duration": 0, "origin": "viewport", "x": points[0].0, "y": points[0].1}),
        json!({"type": "pointerDown", "button": 0}),
    ];
    for &(x, y) in &points[1..] {
        actions.push(json!({"type": "pointerMove", "duration": 120, "origin": "viewport", "x": x, "y": y}));
    }
    actions.push(json!({"type": "pause", "duration": 40}));
    actions.push(json!({"type": "pointerUp", "button": 0}));
    json!({"type": "pointer", "id": id, "parameters": {"pointerType": "touch"}, "actions": actions})
}

/// Fingers on the screen at once, as WebDriver pointer actions of type touch.
async fn touch(page: &Session, fingers: Vec<Value>) {
    page.call(reqwest::Method::POST, "/actions", Some(json!({"actions": fingers})))
        .await
        .unwrap_or_else(|e| panic!("touch: {e}"));
    let _ = page.call(reqwest::Method::DELETE, "/actions", None).await;
}

/// Where a finger lands on what `css` selects, scrolled into view: the middle of the part of it
/// that shows (inside the map's window for a hex), and only if nothing covers it there.
async fn spot(page: &Session, css: &str) -> (i64, i64) {
    let start = Instant::now();
    loop {
        let found = page
            .script(&format!(
                "const it = document.querySelector({css:?});
                 if (!it) return null;
                 it.scrollIntoView({{ block: 'center', inline: 'center' }});
                 const inMap = it.closest('#map');
                 const r = it.getBoundingClientRect();
                 const m = inMap ? inMap.getBoundingClientRect() : r;
                 const left = Math.max(r.left, m.left), right = Math.min(r.right, m.right);
                 const top = Math.max(r.top, m.top), bottom = Math.min(r.bottom, m.bottom);
                 if (right - left < 6 || bottom - top < 6) return `out of the map's window: ${{JSON.stringify(r)}} in ${{JSON.stringify(m)}}`;
                 const x = Math.round((left + right) / 2), y = Math.round((top + bottom) / 2);
                 const hit = document.elementFromPoint(x, y);
                 return hit && (hit === it || it.contains(hit)) ? [x, y] : `covered at ${{x}}, ${{y}} by ${{hit ? hit.outerHTML.slice(0, 200) : 'nothing'}}`;"
            ))
            .await;
        if let Some(at) = found.as_array() {
            return (at[0].as_i64().unwrap(), at[1].as_i64().unwrap());
        }
        assert!(start.elapsed() < Duration::from_secs(15), "{css} is not there to tap: {found}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The point halfway between the middles of two hexes (both scrolled into view).
async fn between(page: &Session, a: &str, b: &str) -> (i64, i64) {
    let (ax, ay) = spot(page, &format!("#map [data-hex='{a}']")).await;
    let (bx, by) = spot(page, &format!("#map [data-hex='{b}']")).await;
    ((ax + bx) / 2, (ay + by) / 2)
}

/// Keys pressed on the element that has the focus (WebDriver key actions: "\u{E012}" is the
/// left arrow, "\u{E014}" the right).
async fn keys(page: &Session, text: &str) {
    let mut actions = vec![];
    for key in text.chars() {
        actions.push(json!({"type": "keyDown", "value": key.to_string()}));
        actions.push(json!({"type": "keyUp", "value": key.to_string()}));
    }
    let keyboard = json!({"type": "key", "id": "keyboard", "actions": actions});
    page.call(reqwest::Method::POST, "/actions", Some(json!({"actions": [keyboard]})))
        .await
        .unwrap_or_else(|e| panic!("keys {text:?}: {e}"));
    let _ = page.call(reqwest::Method::DELETE, "/actions", None).await;
}

/// A tap with one finger on what `css` selects.
async fn tap(page: &Session, css: &str) {
    let (x, y) = spot(page, css).await;
    touch(page, vec![finger("finger", &[(x, y)])]).await;
}

/// A tap on a hex of the map.
async fn tap_hex(page: &Session, hex: &str) {
    tap(page, &format!("#map [data-hex='{hex}']")).await;
}

/// The map's zoom as the page shows it, and the part of the map shown (its viewBox).
async fn zoom(page: &Session) -> (f64, String) {
    let z = page.script("return Number(document.getElementById('map').dataset.zoom || '0');").await;
    let view = page.script("return document.querySelector('#map svg').getAttribute('viewBox');").await;
    (z.as_f64().unwrap(), view.as_str().unwrap_or_default().to_owned())
}

async fn has_class(page: &Session, hex: &str, class: &str) -> bool {
    page.script(&format!("return document.querySelector(\"#map [data-hex='{hex}']\").classList.contains('{class}');"))
        .await
        == Value::Bool(true)
}

/// The window with the map at its top, saved to docs/screenshots/`name`.
async fn screenshot_of_the_map(page: &Session, name: &str) {
    use base64::Engine;
    page.script("document.activeElement && document.activeElement.blur(); document.getElementById('board').scrollIntoView({ block: 'start' }); return null;").await;
    let shot = page.call(reqwest::Method::GET, "/screenshot", None).await.unwrap();
    let png = base64::engine::general_purpose::STANDARD.decode(shot.as_str().unwrap()).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), &png).unwrap();
}

/// A browser the size of a phone: Chromium keeps its windows 500 px wide or more, so the page
/// is laid out as a mobile device's, 375 px wide with touch, through the DevTools protocol.
async fn phone(driver: &Driver) -> Session {
    let page = driver.session(WIDTH, HEIGHT).await;
    for (cmd, params) in [
        (
            "Emulation.setDeviceMetricsOverride",
            json!({"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 2, "mobile": true}),
        ),
        ("Emulation.setTouchEmulationEnabled", json!({"enabled": true, "maxTouchPoints": 5})),
    ] {
        page.call(reqwest::Method::POST, "/goog/cdp/execute", Some(json!({"cmd": cmd, "params": params})))
            .await
            .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
    page
}

/// Sets the server's clock to script step `i`'s stamp, so a post made by touch is stamped as
/// the script's own.
fn at_stamp(g: &Game, i: usize) {
    g.app.clock.set(g.script[i]["stamp"].as_str().unwrap().parse().unwrap());
}

fn hex_of(state: &Value, unit: &str) -> String {
    let unit = state["units"].as_array().unwrap().iter().find(|u| u["id"] == unit).unwrap();
    unit["hex"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_on_a_phone_deploys_zooms_moves_attacks_and_retreats_by_touch_alone() {
    let Some((chromium, chromedriver)) = browser() else { return };
    let g = Game::start(TestApp::spawn(Backend::Sqlite).await, "Phone", json!({})).await;
    let script = short_acw_script();
    let driver = Driver::start(chromium, chromedriver).await;
    g.step(0).await;

    let rebel = phone(&driver).await;
    rebel.goto(&format!("{}/play/{}#token={}", g.app.base, g.campaign, g.confederate)).await;
    rebel.wait_text("#signed-in", "Signed in").await;
    caught_up(&rebel, 1).await;
    // The map fits the phone.
    let width = rebel.script("return document.getElementById('map').getBoundingClientRect().width;").await;
    assert!(width.as_f64().unwrap() <= f64::from(WIDTH), "the map is {width} px wide");
    assert_eq!(rebel.script("return window.innerWidth;").await, WIDTH);

    // Deployment: each tap on the highlighted zone places the next unit the page names.
    let placements = script[1]["body"]["placements"].as_array().unwrap();
    for _ in 0..placements.len() {
        let next = rebel
            .script("const i = Array.from(document.querySelectorAll('#deploy-rows input[data-unit]')).find((i) => !i.value.trim()); return i ? i.dataset.unit : null;")
            .await;
        let unit = next.as_str().expect("a unit still to place");
        let hex = placements.iter().find(|p| p["unit"] == unit).unwrap()["hex"].as_str().unwrap();
        assert!(has_class(&rebel, hex, "zone").await, "{hex} is not highlighted as the deployment zone");
        tap_hex(&rebel, hex).await;
        rebel.wait_for(&format!("document.getElementById('deploy-{unit}').value === '{hex}'")).await;
    }
    rebel.wait_text("#destinations", "Every unit is placed").await;
    at_stamp(&g, 1);
    tap(&rebel, "#form-deploy button[type=submit]").await;
    rebel.wait_text("#receipt", "Posted #2 (deploy)").await;
    for i in 2..5 {
        g.step(i).await;
    }
    caught_up(&rebel, 5).await;

    // Zoom: the button, the keys, a pinch around the Rebels in 0703, a drag.
    assert_eq!(zoom(&rebel).await.0, 1.0);
    tap(&rebel, "#map-zoom-in").await;
    rebel.wait_for("document.getElementById('map').dataset.zoom === '2.00'").await;
    rebel.script("document.getElementById('map').focus(); return null;").await;
    keys(&rebel, "=").await;
    rebel.wait_for("document.getElementById('map').dataset.zoom === '4.00'").await;
    keys(&rebel, "\u{E012}").await;
    let (_, panned) = zoom(&rebel).await;
    keys(&rebel, "\u{E014}").await;
    assert_ne!(zoom(&rebel).await.1, panned, "the arrow keys pan the map");
    keys(&rebel, "0").await;
    rebel.wait_for("document.getElementById('map').dataset.zoom === '1.00'").await;
    rebel.wait_text("#map-zoom-level", "Whole map").await;
    // The pinch centres where the Rebels stand and will move and retreat: 0703 and 0704.
    let (x, y) = between(&rebel, "0703", "0704").await;
    touch(&rebel, vec![finger("one", &[(x - 18, y), (x - 70, y)]), finger("two", &[(x + 18, y), (x + 70, y)])]).await;
    let (pinched, before_drag) = zoom(&rebel).await;
    assert!(pinched > 3.0, "a pinch spreading the fingers from 36 to 140 px zooms {pinched}");
    let (x, y) = between(&rebel, "0703", "0704").await;
    touch(&rebel, vec![finger("finger", &[(x, y), (x + 20, y), (x + 40, y)])]).await;
    let (dragged, after_drag) = zoom(&rebel).await;
    assert_eq!(dragged, pinched, "a drag pans, it does not zoom");
    assert_ne!(after_drag, before_drag, "a drag pans the map");
    // A drag that starts on a hex chooses nothing.
    assert_eq!(rebel.script("return document.querySelectorAll('#my-units button.chosen').length;").await, 0);
    // Counters and hex numbers are readable: the hex number of 0703 is 8 px or more high.
    let size = rebel
        .script("const t = Array.from(document.querySelectorAll('#terrain text')).find((t) => t.textContent.trim() === '0703'); return t.getBoundingClientRect().height;")
        .await;
    assert!(size.as_f64().unwrap() >= 8.0, "the hex number is {size} px high");

    // Move: tap the unit's hex until it is chosen, tap a highlighted hex, then Move.
    let step = &script[5]["body"];
    let unit = step["unit"].as_str().unwrap();
    let to = step["path"].as_array().unwrap().last().unwrap().as_str().unwrap();
    let chosen = "(document.querySelector('#my-units button.chosen') || { dataset: {} }).dataset.unit || null";
    let mut was = Value::Null;
    for _ in 0..3 {
        tap_hex(&rebel, "0703").await;
        rebel.wait_for(&format!("{chosen} !== {was}")).await;
        was = rebel.script(&format!("return {chosen};")).await;
        if was == unit {
            break;
        }
    }
    rebel.wait_for(&format!("document.querySelector(\"#my-units button.chosen[data-unit='{unit}']\")")).await;
    rebel.wait_for(&format!("document.querySelector(\"#map [data-hex='{to}']\").classList.contains('reach')")).await;
    tap_hex(&rebel, to).await;
    rebel.wait_for("document.getElementById('move-path').value !== ''").await;
    let (zoomed, view) = zoom(&rebel).await;
    at_stamp(&g, 5);
    tap(&rebel, "#form-move button[type=submit]").await;
    rebel.wait_text("#receipt", "Posted #6 (move)").await;
    caught_up(&rebel, 6).await;
    assert_eq!(hex_of(&g.state().await, unit), to);
    // The map redrawn after the post shows the same part of it.
    assert_eq!(zoom(&rebel).await, (zoomed, view), "the zoom outlives the map's redraw");
    for i in 6..13 {
        g.step(i).await;
    }

    // The Union attacks from a phone: ticks its attackers, taps the highlighted target.
    let union = phone(&driver).await;
    union.goto(&format!("{}/play/{}#token={}", g.app.base, g.campaign, g.union)).await;
    union.wait_text("#signed-in", "Signed in").await;
    caught_up(&union, 13).await;
    let attack = &script[13]["body"];
    let target = attack["target"].as_str().unwrap();
    for attacker in attack["units"].as_array().unwrap() {
        tap(&union, &format!("#attack-units input[value='{}']", attacker.as_str().unwrap())).await;
    }
    union
        .wait_for(&format!("document.querySelector(\"#map [data-hex='{target}']\").classList.contains('target')"))
        .await;
    assert_eq!(union.script("return document.querySelectorAll('#map .target').length;").await, 1);
    let legal = g.app.get(&format!("/v1/campaigns/{}/units/us-14th-inf/moves", g.campaign)).await.ok(200).clone();
    assert_eq!(legal["attack_targets"], json!([target]), "{legal}");
    assert_eq!(legal["retreats"], json!([]));
    let (x, y) = spot(&union, &format!("#map [data-hex='{target}']")).await;
    touch(&union, vec![finger("one", &[(x - 15, y), (x - 50, y)]), finger("two", &[(x + 15, y), (x + 50, y)])]).await;
    assert!(zoom(&union).await.0 > 2.0);
    tap_hex(&union, target).await;
    union.wait_for(&format!("document.getElementById('attack-target').value === '{target}'")).await;
    at_stamp(&g, 13);
    tap(&union, "#form-attack button[type=submit]").await;
    union.wait_text("#receipt", "Posted #14 (attack)").await;
    union.quit().await;
    for i in 14..16 {
        g.step(i).await;
    }

    // The retreat: the page picks the first retreating unit; each tap on a highlighted hex
    // takes its path one hex further, then the next unit's.
    caught_up(&rebel, 16).await;
    let paths = script[16]["body"]["paths"].as_array().unwrap();
    rebel.wait_for("document.querySelectorAll('#map .retreat-step').length > 0").await;
    // The page highlights what the server says is legal.
    let legal = g.app.get(&format!("/v1/campaigns/{}/units/cs-51st-inf/moves", g.campaign)).await.ok(200).clone();
    let retreats = legal["retreats"].as_array().unwrap();
    assert!(retreats.iter().any(|r| r["path"] == json!(["0704", "0804"])), "{legal}");
    let firsts = rebel
        .script("return Array.from(document.querySelectorAll('#map .retreat-step')).map((p) => p.dataset.hex).sort();")
        .await;
    let mut offered: Vec<&str> = retreats.iter().map(|r| r["path"][0].as_str().unwrap()).collect();
    offered.sort();
    offered.dedup();
    assert_eq!(firsts, json!(offered));
    assert_eq!(legal["moves"], json!([]));
    assert_eq!(legal["attack_targets"], json!([]));
    screenshot_of_the_map(&rebel, "play-375-zoomed.png").await;
    rebel.accessible("a player page on a phone, mid-retreat", WIDTH, HEIGHT).await;
    for _ in 0..paths.len() {
        rebel.wait_for("document.querySelector('#retreat-units button.chosen')").await;
        let unit = rebel.script("return document.querySelector('#retreat-units button.chosen').dataset.unit;").await;
        let path = paths.iter().find(|p| p["unit"] == unit).unwrap()["path"].as_array().unwrap();
        for (j, hex) in path.iter().enumerate() {
            let hex = hex.as_str().unwrap();
            rebel
                .wait_for(&format!(
                    "document.querySelector(\"#map [data-hex='{hex}']\").classList.contains('retreat-step')"
                ))
                .await;
            tap_hex(&rebel, hex).await;
            rebel
                .wait_for(&format!(
                    "document.getElementById('retreat-paths').value.split('\\n').some((l) => l.split(' ')[0] === {unit} && l.split(' ').length === {})",
                    j + 2
                ))
                .await;
        }
    }
    rebel.wait_text("#destinations", "Every retreating unit has its path").await;
    let typed: Vec<String> = paths
        .iter()
        .map(|p| {
            let hexes: Vec<&str> = p["path"].as_array().unwrap().iter().map(|h| h.as_str().unwrap()).collect();
            format!("{} {}", p["unit"].as_str().unwrap(), hexes.join(" "))
        })
        .collect();
    let built = rebel.script("return document.getElementById('retreat-paths').value;").await;
    let mut built: Vec<&str> = built.as_str().unwrap().lines().collect();
    built.sort();
    assert_eq!(built, typed, "the retreat built by taps");
    at_stamp(&g, 16);
    tap(&rebel, "#form-retreat button[type=submit]").await;
    rebel.wait_text("#receipt", "Posted #17 (retreat)").await;
    rebel.quit().await;

    // The server reports what the script posted straight to the API reaches.
    let state = g.state().await;
    for p in paths {
        let last = p["path"].as_array().unwrap().last().unwrap().as_str().unwrap();
        assert_eq!(hex_of(&state, p["unit"].as_str().unwrap()), last);
    }
    let reference = Game::start(TestApp::spawn(Backend::Sqlite).await, "Reference", json!({})).await;
    for i in 0..17 {
        reference.step(i).await;
    }
    assert_eq!(state, reference.state().await, "played by touch, the campaign stands as the script leaves it");
}
