//! Forum text for real outcomes: the seed's worked example battle and the rest of the scripted
//! campaign, replayed through `apply`.

mod common;

use adjutant_render::{outcome_text, Stored};
use adjutant_rules::resolver;
use adjutant_rules::DiceStream;
use common::replay;

fn outcome(kind: &str) -> serde_json::Value {
    let (_, _, outcomes) = replay(24);
    outcomes.into_iter().find(|o| o.kind() == kind).unwrap_or_else(|| panic!("no {kind}")).data.to_json()
}

#[test]
fn the_worked_example_battle_in_bbcode_and_markdown() {
    let t = outcome_text("battle", &outcome("battle"));
    let md = &t.markdown;
    assert!(md.starts_with("**Battle 1 at 0604: the Union wins**\n\n"), "{md}");
    for line in [
        "- Attacker (Union): us-14th-inf 4, us-13th-inf 4, us-12th-inf 4, us-27th-inf 3 = 15 factors\n",
        "- Defender (Rebel): cs-51st-inf 3, cs-52nd-inf 3 = 6 factors, river ×2 → 12\n",
        "- Victory number 56 = 100 × 15 / 27 = 55.56, rounded half up\n",
        "- **Result number 21 ≤ victory 56: the attacker wins** (Union)\n",
        "- Difference 35 (band 31–40): winner ×0.5, loser ×2 of the basic rate 21/15\n",
        "- Casualties: **Union 1, Rebel 3**\n",
        "\nCheck: 9:51:45 → N = 95145, √N = 308.455831522115, decimals 9–10 = 21\n",
    ] {
        assert!(md.contains(line), "markdown lacks {line:?}:\n{md}");
    }
    let bb = &t.bbcode;
    assert!(bb.starts_with("[b]Battle 1 at 0604: the Union wins[/b]\n[list]\n"), "{bb}");
    for line in [
        "[*]Victory number 56 = 100 × 15 / 27 = 55.56, rounded half up\n",
        "[*][b]Result number 21 ≤ victory 56: the attacker wins[/b] (Union)\n",
        "[*]Casualties: [b]Union 1, Rebel 3[/b]\n",
        "[/list]\nCheck: 9:51:45 → N = 95145, √N = 308.455831522115, decimals 9–10 = 21\n",
    ] {
        assert!(bb.contains(line), "bbcode lacks {line:?}:\n{bb}");
    }
    // One check line, no more.
    assert_eq!(md.matches("Check:").count(), 1);
    assert_eq!(bb.matches("Check:").count(), 1);
}

#[test]
fn casualties_retreat_and_the_reinforcement_roll() {
    let (_, _, outcomes) = replay(17);
    let rebel_casualties = outcomes.iter().rfind(|o| o.kind() == "casualties").expect("casualties");
    let t = outcome_text("casualties", &rebel_casualties.data.to_json());
    assert!(t.markdown.starts_with("**Battle 1: the Rebel loses 3 factors**"), "{}", t.markdown);
    assert!(t.markdown.contains("- cs-52nd-inf: 3 → 1 (−2)\n"), "{}", t.markdown);
    assert!(t.markdown.contains("- cs-51st-inf: 3 → 2 (−1)\n"), "{}", t.markdown);
    assert!(t.bbcode.contains("Check: 2 + 1 = 3, as battle 1 called for 3;"), "{}", t.bbcode);

    let t = outcome_text("retreat", &outcome("retreat"));
    assert!(t.markdown.starts_with("**Battle 1: the Rebel retreats from 0604**"), "{}", t.markdown);
    assert!(t.markdown.contains("0604 is left empty"), "{}", t.markdown);

    let roll = outcome("reinforcement_roll");
    let t = outcome_text("reinforcement_roll", &roll);
    assert!(t.markdown.contains("- Milliseconds of the post: **.123**\n"), "{}", t.markdown);
    let line =
        format!("Check: 123 mod 6 = 3 ≤ {} cities held → gains 1 point", roll["cities"].as_u64().expect("cities"));
    assert!(t.markdown.contains(&line) && t.bbcode.contains(&line), "{}", t.markdown);
}

#[test]
fn every_kind_the_script_produces_has_a_title_and_both_formats() {
    let (_, _, outcomes) = replay(24);
    let mut kinds: Vec<&str> = outcomes.iter().map(|o| o.kind()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert!(kinds.len() >= 9, "{kinds:?}");
    for o in &outcomes {
        let t = outcome_text(o.kind(), &o.data.to_json());
        assert!(t.markdown.starts_with("**") && t.bbcode.starts_with("[b]"), "{}", o.kind());
        assert!(!t.markdown.contains("—") || o.kind() == "battle", "a missing field in {}: {}", o.kind(), t.markdown);
    }
    let over = outcome("game_over");
    let t = outcome_text("game_over", &over);
    assert!(t.markdown.contains("Major Union Victory"), "{}", t.markdown);
    assert!(t.markdown.contains("Winner: **Union** (major)"), "{}", t.markdown);
}

/// The first ruleset's first action, resolved from its example with dice of a fixed post.
fn example_resolution() -> (&'static dyn resolver::Ruleset, resolver::ActionSpec, resolver::Resolution) {
    let rs = resolver::rulesets()[0];
    let action = rs.actions().swap_remove(0);
    let dice = DiceStream::from_text("c0ffee00-0000-4000-8000-000000000001/7/2026-11-21T09:51:45.123Z".into());
    let resolution = resolver::resolve(rs, action.name, &action.example, dice).expect("the example resolves");
    (rs, action, resolution)
}

#[test]
fn a_resolver_resolution_shows_its_dice_and_how_to_check_the_first() {
    let (rs, action, resolution) = example_resolution();
    let data = serde_json::to_value(&resolution).expect("serializes");
    let t = outcome_text("resolution", &data);
    assert!(t.markdown.starts_with(&format!("**{}**", resolution.headline.replace('*', "\\*"))), "{}", t.markdown);
    assert!(
        t.markdown.contains(&format!("- Ruleset {}, action {}\n", rs.name(), action.name.replace('_', "\\_"))),
        "{}",
        t.markdown
    );
    if let Some(first) = resolution.dice.first() {
        let check = format!(
            "Check: printf '%s' 'c0ffee00-0000-4000-8000-000000000001/7/2026-11-21T09:51:45.123Z/{}' | sha256sum → byte {} = {} → {} mod {} + 1 = {}",
            first.byte_index / 32,
            first.byte_index % 32,
            first.byte,
            first.byte,
            first.faces,
            first.value
        );
        assert!(t.bbcode.contains(&check), "{}\n{check}", t.bbcode);
        assert!(t.markdown.contains(&format!("d{} = {}", first.faces, first.value)), "{}", t.markdown);
    }
    for l in &resolution.lookups {
        assert!(t.bbcode.contains(&l.value), "{}", t.bbcode);
    }
    // The same data under another kind is still read as a resolution.
    assert_eq!(outcome_text("resolve", &data), t);
}

#[test]
fn the_first_forum_text_says_the_map_is_a_stand_in() {
    // Rules version 3: the first outcome is the sealed deployment's, which says the side
    // deployed and not where.
    let t = outcome_text("deployment_sealed", &outcome("deployment_sealed"));
    assert!(t.markdown.starts_with("**The Union has deployed 13 units, sealed**"), "{}", t.markdown);
    assert!(t.markdown.contains("Stand-in map: the seed publishes no map."), "{}", t.markdown);
    assert!(t.bbcode.contains("Stand-in map: the seed publishes no map."), "{}", t.bbcode);
    assert!(!t.markdown.contains("0403"), "{}", t.markdown);
    // The reveal lists the sealed side's placements.
    let t = outcome_text("deployed", &outcome("deployed"));
    assert!(t.markdown.starts_with("**The Union's sealed deployment is revealed: 13 units**"), "{}", t.markdown);
    assert!(t.markdown.contains("- us-14th-inf in 0403\n"), "{}", t.markdown);
}

/// The forum text of every stored outcome in `crates/rules/tests/data/stored_outcomes.jsonl`
/// (every kind, every rules version) is what players have read: a digest of each kind's texts is
/// kept in `tests/data/stored_texts.json`, and a change to what a kind says must change it on
/// purpose (`ADJUTANT_WRITE_STORED_TEXTS=1` writes it afresh).
#[test]
fn every_stored_outcome_reads_as_it_did() {
    use sha2::{Digest, Sha256};
    use std::collections::BTreeMap;
    let stored = include_str!("../../rules/tests/data/stored_outcomes.jsonl");
    let mut texts: BTreeMap<String, Sha256> = BTreeMap::new();
    // The campaign clock's records and the server's others, as the server writes them.
    let records = include_str!("../../rules/tests/data/server_records.jsonl");
    for line in stored.lines().chain(records.lines()) {
        let o: serde_json::Value = serde_json::from_str(line).expect("a stored outcome");
        let kind = o["kind"].as_str().expect("kind");
        let t = outcome_text(kind, &o["data"]);
        let w = adjutant_render::outcome_working(kind, &o["data"]);
        // Read from the stored JSON text, as the server's answers read it, the text is the same.
        let json = o["data"].to_string();
        assert_eq!(outcome_text(kind, Stored::Json(&json)), t, "{line}");
        assert_eq!(adjutant_render::outcome_working(kind, Stored::Json(&json)), w, "{line}");
        let digest = texts.entry(kind.to_owned()).or_default();
        digest.update(t.bbcode.as_bytes());
        digest.update(t.markdown.as_bytes());
        digest.update(format!("{w:?}").as_bytes());
    }
    let digests: BTreeMap<String, String> =
        texts.into_iter().map(|(kind, d)| (kind, hex::encode(d.finalize()))).collect();
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/stored_texts.json");
    if std::env::var_os("ADJUTANT_WRITE_STORED_TEXTS").is_some() {
        std::fs::write(file, serde_json::to_string_pretty(&digests).expect("json") + "\n").expect("write");
        return;
    }
    let kept: BTreeMap<String, String> =
        serde_json::from_str(&std::fs::read_to_string(file).expect("the kept digests")).expect("json");
    for (kind, digest) in &kept {
        assert_eq!(digests.get(kind), Some(digest), "the forum text of `{kind}` outcomes changed");
    }
    assert_eq!(digests.len(), kept.len());
}

/// Data read from its JSON text gives the same forum text as data read into a value first, for
/// shapes no rule writes too: a kind the rules do not know, data that is not an object, a
/// resolution's fields under another kind (`null` ones too), and text that is not JSON.
#[test]
fn data_read_from_its_text_says_what_the_value_says() {
    let (_, _, resolution) = example_resolution();
    let resolution = serde_json::to_value(&resolution).expect("serializes");
    let shapes = [
        ("formation_test", resolution.clone()),
        ("battle", resolution),
        ("marching_orders", serde_json::json!({"unit": "[b]x[/b]", "hexes": [1, 2], "note": null})),
        ("moved", serde_json::json!({"unit": "us-14th-inf"})),
        ("moved", serde_json::json!([1, 2, 3])),
        ("moved", serde_json::json!("a string")),
        ("moved", serde_json::json!(null)),
        ("formation_test", serde_json::json!({"ruleset": null, "dice": null})),
        ("formation_test", serde_json::json!({"ruleset": "x"})),
        ("resolution", serde_json::json!({"ruleset": "x"})),
    ];
    for (kind, data) in &shapes {
        let json = data.to_string();
        assert_eq!(outcome_text(kind, Stored::Json(&json)), outcome_text(kind, data), "{kind} {json}");
    }
    // Text that is not JSON reads as no data at all.
    assert_eq!(outcome_text("moved", Stored::Json("{not json")), outcome_text("moved", &serde_json::Value::Null));
}
