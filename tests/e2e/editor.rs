//! The map editor in a browser: a moderator opens the shipped scenario, then draws a small map
//! of their own by clicks and keys (woods, two cities, a river with a rail bridge, a rail line,
//! each side's deployment), watches the server's problems list empty and its preview appear,
//! downloads the TOML, saves the scenario, finds it listed in the console, makes a campaign of
//! it, and two players deploy on its map and make the first move from their pages.
//! Screenshots of the editor go to docs/screenshots/editor-1280.png and editor-375.png.
//!
//! Needs chromium and chromium-driver, as the other browser tests; skipped with a note without
//! them, unless ADJUTANT_REQUIRE_BROWSER=1.

use adjutant_e2e::serde_json::{json, Value};
use adjutant_e2e::{Backend, TestApp};

use crate::play::{browser, Driver, Session};

/// WebDriver's names of the keys the test presses.
const TAB: &str = "\u{E004}";
const ENTER: &str = "\u{E007}";
const ARROW_DOWN: &str = "\u{E015}";

/// Presses `keys` one after another on whatever has the focus.
async fn press(page: &Session, keys: &[&str]) {
    let actions: Vec<Value> = keys
        .iter()
        .flat_map(|k| [json!({"type": "keyDown", "value": k}), json!({"type": "keyUp", "value": k})])
        .collect();
    page.call(
        reqwest::Method::POST,
        "/actions",
        Some(json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]})),
    )
    .await
    .unwrap();
}

/// Picks the tool named `tool` in the editor's tool list.
async fn tool(page: &Session, tool: &str) {
    page.click(&format!("input[name=tool][value='{tool}']")).await;
}

async fn hex(page: &Session, hex: &str) {
    page.click(&format!("#edit-map [data-hex='{hex}']")).await;
}

/// Waits until the server's check of the latest change has answered.
async fn checked(page: &Session) -> String {
    page.wait_for("document.getElementById('check-status').textContent !== 'Checking…'").await;
    page.text("#check-status").await
}

/// A side's page: waits until it has drawn the state after post `seq`.
async fn caught_up(page: &Session, seq: usize) {
    page.wait_for(&format!("document.body.dataset.after === '{seq}'")).await;
}

/// The river between columns 05 and 06 of a map six rows high.
const RIVER: [&str; 11] = [
    "0501/0601",
    "0502/0601",
    "0502/0602",
    "0503/0602",
    "0503/0603",
    "0504/0603",
    "0504/0604",
    "0505/0604",
    "0505/0605",
    "0506/0605",
    "0506/0606",
];
const RAIL: [&str; 7] = ["0103", "0203", "0303", "0403", "0503", "0603", "0703"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moderator_draws_a_map_in_the_editor_and_players_deploy_and_move_on_it() {
    let Some((chromium, chromedriver)) = browser() else { return };
    let app = TestApp::spawn(Backend::Sqlite).await;
    let driver = Driver::start(chromium, chromedriver).await;
    let moderator = app.moderator().await;
    let editor = driver.session(1280, 1000).await;

    // The console links to the editor; the editor signs in with the console's token.
    editor.goto(&format!("{}/console#token={moderator}", app.base)).await;
    editor.wait_text("#signed-in", "Signed in as").await;
    editor.click("#editor-link").await;
    editor.wait_text("#signed-in", "Signed in as").await;
    assert!(editor.script("return location.pathname;").await == "/console/editor");

    // The shipped scenario opens whole and valid: its 16 × 12 map, its fifteen cities.
    editor.find("#open-pick option[value='short-acw']").await;
    editor.click("#form-open button[type=submit]").await;
    editor.find("#edit-map [data-hex='1612']").await;
    assert_eq!(editor.script("return document.querySelectorAll('#edit-map .hex').length;").await, 192);
    assert_eq!(editor.script("return document.querySelectorAll('#cities tbody tr').length;").await, 15);
    editor.wait_text("#check-status", "No problems").await;

    // A new map of 8 × 6: the seed's orders of battle, and problems until it has cities. The
    // start forms folded away when the shipped scenario opened: unfold them.
    assert_eq!(editor.script("return document.getElementById('start').open;").await, false);
    editor.click("#start summary").await;
    editor.type_into("#new-columns", "8").await;
    editor.type_into("#new-rows", "6").await;
    editor.click("#form-new button[type=submit]").await;
    editor.wait_for("document.querySelectorAll('#edit-map .hex').length === 48").await;
    let status = editor.wait_text("#check-status", "to mend").await;
    assert!(status.contains("problem"), "{status}");
    let problems = editor.text("#problems").await;
    assert!(problems.contains("deployment"), "the empty deployment is a problem: {problems}");
    assert_eq!(editor.script("return document.querySelectorAll('#units-union tbody tr').length;").await, 13);

    // Woods by clicks.
    tool(&editor, "woods").await;
    hex(&editor, "0202").await;
    hex(&editor, "0705").await;
    assert_eq!(editor.script("return document.querySelectorAll('#edit-map .hex.woods').length;").await, 2);

    // Two cities, named and held.
    tool(&editor, "city").await;
    hex(&editor, "0103").await;
    hex(&editor, "0703").await;
    editor.type_into("#cities tr[data-city='A'] input.city-name", &format!("Union Mills{TAB}")).await;
    editor.click("#cities tr[data-city='A'] select.city-control option[value='union']").await;
    editor.type_into("#cities tr[data-city='B'] input.city-name", &format!("Rebel Hill{TAB}")).await;
    editor.click("#cities tr[data-city='B'] select.city-control option[value='confederate']").await;
    assert_eq!(
        editor.script("return document.querySelector('#edit-map .city-letter.union').textContent;").await,
        "A",
        "city A is drawn in the Union's colour"
    );

    // A river by its hexsides, named, with a rail bridge.
    tool(&editor, "river").await;
    for side in RIVER {
        editor.click(&format!("#edit-map [data-side='{side}']")).await;
    }
    editor.type_into("#river-name", &format!("Bull Run{TAB}")).await;
    assert_eq!(editor.script("return document.querySelectorAll('#edit-map .river').length;").await, 11);
    tool(&editor, "bridge").await;
    editor.click("#bridge-kind option[value='rail']").await;
    editor.click("#edit-map [data-side='0503/0603']").await;
    editor.find("#edit-map .bridge.rail").await;

    // A rail line hex by hex, named.
    tool(&editor, "rail").await;
    for h in RAIL {
        hex(&editor, h).await;
    }
    editor.type_into("#rail-name", &format!("Manassas Gap{TAB}")).await;
    assert_eq!(editor.script("return document.querySelectorAll('#edit-map .rail-stop').length;").await, 7);

    // Each side deploys near its city.
    tool(&editor, "deploy").await;
    hex(&editor, "0103").await;
    editor.click("#deploy-side option[value='confederate']").await;
    hex(&editor, "0703").await;
    assert_eq!(editor.script("return document.querySelectorAll('#edit-map .deploy-ring').length;").await, 2);

    // By keyboard: from the last hex clicked, three hexes down, and woods there.
    tool(&editor, "woods").await;
    editor.script("document.getElementById('edit-svg').focus(); return null;").await;
    press(&editor, &[ARROW_DOWN, ARROW_DOWN, ARROW_DOWN]).await;
    editor.wait_text("#cursor-line", "Hex 0706").await;
    press(&editor, &[ENTER]).await;
    editor.find("#edit-map .hex.woods[data-hex='0706']").await;

    // The seed's victory conditions name city M, which this map has not: the Union takes B instead.
    let status = checked(&editor).await;
    assert!(status.contains("to mend"), "{status}");
    assert!(editor.text("#problems").await.contains("victory[0].capture"));
    for row in [0, 1] {
        editor.type_into(&format!("#victory tr[data-victory='{row}'] input.victory-capture"), &format!("B{TAB}")).await;
    }
    editor.type_into("#sc-reinforce", &format!("B{TAB}")).await;
    editor.type_into("#sc-title", &format!("Bull Run crossing{TAB}")).await;

    // The problems list empties, and the game's own renderer previews the map.
    editor.wait_text("#check-status", "No problems").await;
    assert_eq!(editor.script("return document.querySelectorAll('#problems li').length;").await, 0);
    editor.wait_for("!document.getElementById('preview-box').hidden").await;
    let src = editor.script("return document.getElementById('preview').getAttribute('src');").await;
    assert!(src.as_str().unwrap().starts_with("data:image/svg+xml"), "{src}");
    editor.wait_for("document.getElementById('preview').naturalWidth > 0").await;

    // The TOML it downloads is a scenario the server finds no problem in.
    let downloaded = editor
        .call(
            reqwest::Method::POST,
            "/execute/async",
            Some(json!({"script": "const done = arguments[arguments.length - 1];
                const create = URL.createObjectURL;
                URL.createObjectURL = function (blob) {
                  URL.createObjectURL = create;
                  blob.text().then(done);
                  return create.call(URL, blob);
                };
                document.getElementById('download').click();", "args": []})),
        )
        .await
        .unwrap();
    let toml = downloaded.as_str().unwrap().to_owned();
    assert!(toml.contains("[[map.cities]]") && toml.contains("\"Union Mills\""), "{toml}");
    let answer =
        app.request(reqwest::Method::POST, "/v1/scenarios/check", Some(&moderator), Some(json!({"text": toml}))).await;
    assert_eq!(answer.ok(200)["problems"], json!([]), "{}", answer.text);

    // That file opens again in the editor, as a moderator's own file would.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bull-run.toml");
    std::fs::write(&file, &toml).unwrap();
    editor.click("#start summary").await;
    let input = editor.find("#open-file").await;
    editor
        .call(reqwest::Method::POST, &format!("/element/{input}/value"), Some(json!({"text": file.to_string_lossy()})))
        .await
        .unwrap();
    editor.wait_for("document.getElementById('save-name').value === 'bull-run'").await;
    editor.wait_text("#check-status", "No problems").await;
    let name =
        editor.script("return document.querySelector(\"#cities tr[data-city='A'] input.city-name\").value;").await;
    assert_eq!(name, "Union Mills");
    assert_eq!(editor.script("return document.querySelectorAll('#edit-map .river').length;").await, 11);

    editor.type_into("#save-name", "Bull Run map").await;
    editor.screenshot("editor-1280.png").await;
    editor.resize(375, 900).await;
    editor.script("document.getElementById('workbench').scrollIntoView(); return null;").await;
    editor.screenshot("editor-375.png").await;
    editor.resize(1280, 1000).await;
    editor.accessible("the map editor", 1280, 1000).await;

    // Saved: listed among the moderator's scenarios, in the editor and in the console.
    editor.click("#form-save button[type=submit]").await;
    let saved = editor.wait_text("#saved", "Saved as Bull Run map").await;
    let id = editor.text("#saved .scenario-id").await;
    assert_eq!(id.len(), 64, "{saved}");
    editor.find(&format!("#open-pick option[value='{id}']")).await;
    let listed = app.request(reqwest::Method::GET, "/v1/scenarios", Some(&moderator), None).await;
    assert_eq!(listed.ok(200)["uploaded"][0]["title"], "Bull Run crossing", "{}", listed.text);
    // A campaign straight from the editor.
    editor.type_into("#campaign-name", "Straight from the editor").await;
    editor.click("#form-campaign button[type=submit]").await;
    editor.wait_text("#editor-created", "Created Straight from the editor").await;

    // The console offers the saved scenario beside the shipped one.
    editor.goto(&format!("{}/console", app.base)).await;
    let option = format!("#create-game option[value='scenario:{id}']");
    editor.find(&option).await;
    assert!(editor.text(&option).await.contains("Bull Run map"));
    editor.type_into("#create-name", "Bull Run, 1861").await;
    editor.click(&option).await;
    editor.click("#form-create button[type=submit]").await;
    editor.wait_text("#created", "Created Bull Run, 1861").await;
    let campaign = editor.text("#created .campaign-id").await;
    assert_eq!(app.get(&format!("/v1/campaigns/{campaign}")).await.ok(200)["scenario"], id.as_str());
    let mut links = vec![];
    for (name, side) in [("McDowell", "union"), ("Beauregard", "confederate")] {
        editor.type_into("#player-name", name).await;
        editor.click(&format!("#player-side option[value='{side}']")).await;
        editor.click("#form-player button[type=submit]").await;
        let link = editor.find(&format!(".issued[data-kind='{side}'] a.play-link")).await;
        let href = editor.call(reqwest::Method::GET, &format!("/element/{link}/property/href"), None).await.unwrap();
        links.push(href.as_str().unwrap().to_owned());
    }

    // The players open their pages: the map is the one drawn.
    let union = driver.session(1280, 1000).await;
    let rebel = driver.session(1280, 1000).await;
    for (page, link) in [(&union, &links[0]), (&rebel, &links[1])] {
        page.goto(link).await;
        page.wait_text("#signed-in", "player").await;
        caught_up(page, 0).await;
        page.find("#map [data-hex='0806']").await;
        assert_eq!(page.script("return document.querySelectorAll('#map [data-hex]').length;").await, 48);
        let map = page.script("return document.getElementById('map').textContent;").await;
        assert!(map.as_str().unwrap().contains("Union Mills"), "{map}");
    }

    // Deployment: the first unit by the map, the rest by their fields.
    let deploy = |units: &[(&'static str, &'static str)]| units.to_vec();
    let union_units = deploy(&[
        ("us-14th-inf", "0103"),
        ("us-13th-inf", "0103"),
        ("us-12th-inf", "0103"),
        ("us-3rd-inf", "0102"),
        ("us-6th-inf", "0102"),
        ("us-27th-inf", "0102"),
        ("us-29th-inf", "0104"),
        ("us-30th-inf", "0104"),
        ("us-8th-arty", "0104"),
        ("us-10th-arty", "0104"),
        ("us-hq", "0104"),
        ("us-3rd-cav", "0203"),
        ("us-4th-cav", "0203"),
    ]);
    let rebel_units = deploy(&[
        ("cs-39th-inf", "0703"),
        ("cs-40th-inf", "0703"),
        ("cs-17th-inf", "0703"),
        ("cs-34th-inf", "0702"),
        ("cs-51st-inf", "0702"),
        ("cs-52nd-inf", "0702"),
        ("cs-37th-cav", "0704"),
        ("cs-45th-cav", "0704"),
        ("cs-11th-arty", "0704"),
        ("cs-hq", "0704"),
    ]);
    for (seq, page, units) in [(0, &union, &union_units), (1, &rebel, &rebel_units)] {
        caught_up(page, seq).await;
        let (first, at) = units[0];
        page.click(&format!("#my-units button[data-unit='{first}']")).await;
        page.click(&format!("#map [data-hex='{at}']")).await;
        assert_eq!(page.script(&format!("return document.getElementById('deploy-{first}').value;")).await, at);
        for (unit, at) in &units[1..] {
            page.type_into(&format!("#deploy-{unit}"), at).await;
        }
        page.click("#form-deploy button[type=submit]").await;
        page.wait_text("#receipt", &format!("Posted #{} (deploy)", seq + 1)).await;
    }

    // The Union's first move: its cavalry along the rail, two hexes east, picked on the map.
    caught_up(&union, 2).await;
    union.click("#my-units button[data-unit='us-3rd-cav']").await;
    union.find("#destinations button[data-hex='0403']").await;
    union.wait_for("document.querySelector(\"#map [data-hex='0403']\").classList.contains('reach')").await;
    union.click("#map [data-hex='0403']").await;
    union.wait_for("document.getElementById('move-path').value !== ''").await;
    union.click("#form-move button[type=submit]").await;
    union.wait_text("#receipt", "Posted #3 (move)").await;
    caught_up(&union, 3).await;
    let state = app.get(&format!("/v1/campaigns/{campaign}/state")).await.ok(200)["state"].clone();
    let cavalry =
        state["units"].as_array().unwrap().iter().find(|u| u["id"] == "us-3rd-cav").cloned().unwrap_or_default();
    assert_eq!(cavalry["hex"], "0403", "{state}");
    // The Rebels' page shows it there too.
    caught_up(&rebel, 3).await;
    let shown = rebel.script("return document.getElementById('map').textContent;").await;
    assert!(shown.as_str().unwrap().contains("3rd Cav"), "the Union's cavalry is not on the Rebels' map");

    for page in [editor, union, rebel] {
        page.quit().await;
    }
}
