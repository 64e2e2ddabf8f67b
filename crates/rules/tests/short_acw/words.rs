//! What players read against what happened: every retreat's headline and forum text, checked
//! against the state before and after its post — the hexes named as left are the loser's own,
//! the hexes named as left empty are empty, the retreating units are the loser's, and the losses
//! named are the factors lost.

use crate::common::*;
use adjutant_render::outcome_text;
use adjutant_rules::short_acw::{GameState, Hex, Outcome};
use adjutant_rules::Side;
use serde_json::Value;

/// "0602", "0602 and 0702", "0501, 0602 and 0702", as the texts list hexes.
fn hexes_in_words(hexes: &[Hex]) -> String {
    let names: Vec<String> = hexes.iter().map(Hex::to_string).collect();
    adjutant_rules::words::listed(&names, "and")
}

/// The four-digit hex numbers in a line of text.
fn hexes_named(line: &str) -> Vec<Hex> {
    line.split(|c: char| !c.is_ascii_digit()).filter(|w| w.len() == 4).filter_map(|w| w.parse().ok()).collect()
}

/// Checks every retreat outcome of one accepted post against the states around it; returns how
/// many retreats it checked in which the attacker was the loser.
pub fn check_retreat_words(before: &GameState, after: &GameState, outcomes: &[Outcome]) -> Result<usize, String> {
    let mut attacker_defeats = 0;
    for o in outcomes.iter().filter(|o| o.kind() == "retreat") {
        let d = &o.data.to_json();
        let battle = before.battle.as_ref().ok_or("a retreat with no battle waiting")?;
        let loser: Side = serde_json::from_value(d["side"].clone()).map_err(|e| e.to_string())?;
        let moved: Vec<&str> = d["moves"].as_array().into_iter().flatten().filter_map(|m| m["unit"].as_str()).collect();
        let given_up: Vec<&str> =
            d["eliminated_without_retreat"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        // The retreating units are the loser's: all of the battle's retreating units, and only them.
        let mut named: Vec<&str> = moved.iter().chain(&given_up).copied().collect();
        named.sort();
        let mut retreating: Vec<&str> = battle.retreating.iter().map(String::as_str).collect();
        retreating.sort();
        if named != retreating {
            return Err(format!(
                "{}: units {named:?}, but the battle's retreating units are {retreating:?}",
                o.headline
            ));
        }
        let mut left = vec![];
        for id in &named {
            let unit = before.unit(id).ok_or(format!("no unit {id}"))?;
            if unit.side != loser {
                return Err(format!("{}: {id} is the {}'s, not the loser's", o.headline, unit.side));
            }
            left.extend(unit.hex);
        }
        left.sort();
        left.dedup();
        if left.contains(&battle.target) != (before.occupant(battle.target) == Some(loser)) {
            return Err(format!("{}: the target {} is not the loser's hex", o.headline, battle.target));
        }
        if !left.contains(&battle.target) {
            attacker_defeats += 1;
        }
        let text = outcome_text("retreat", d);
        for words in [&o.headline, &text.markdown, &text.bbcode] {
            let retreats_from = format!("the {loser} retreats from {}", hexes_in_words(&left));
            if !words.contains(&retreats_from) {
                return Err(format!("{words:?} lacks {retreats_from:?}"));
            }
        }
        // Every hex said to be left empty is empty, and every left hex that is empty is said to be.
        let mut said_empty = vec![];
        for line in text.markdown.lines().filter(|l| l.contains("left empty")) {
            said_empty.extend(hexes_named(line));
        }
        for hex in &said_empty {
            if after.occupant(*hex).is_some() {
                return Err(format!(
                    "{:?} says {hex} is left empty; it holds {:?}",
                    text.markdown,
                    after.occupant(*hex)
                ));
            }
        }
        for hex in left.iter().filter(|h| after.occupant(**h).is_none()) {
            if !said_empty.contains(hex) {
                return Err(format!("{:?} does not say {hex} is left empty", text.markdown));
            }
        }
        // The losses named are the factors lost, in the headline and the forum text alike.
        for l in d["losses"].as_array().into_iter().flatten() {
            let id = l["unit"].as_str().ok_or("a loss names no unit")?;
            let was = before.unit(id).ok_or(format!("no unit {id}"))?;
            let now = after.unit(id).ok_or(format!("no unit {id}"))?;
            let lost = l["factors_lost"].as_u64().ok_or("no factors_lost")? as u32;
            if l["factors_before"].as_u64() != Some(u64::from(was.factors)) || was.factors - now.factors != lost {
                return Err(format!(
                    "{}: {id} went {} → {}, the outcome says {l}",
                    o.headline, was.factors, now.factors
                ));
            }
            if lost > 0 {
                let loses = format!("loses {lost} of {} factors", was.factors);
                for words in [&o.headline, &text.markdown] {
                    if !words.contains(&loses) {
                        return Err(format!("{words:?} lacks {loses:?}"));
                    }
                }
                if !o.headline.contains(&format!("{} {loses}", was.name)) {
                    return Err(format!("{:?} does not name {} beside {loses:?}", o.headline, was.name));
                }
            }
        }
    }
    Ok(attacker_defeats)
}

/// Plays a game post by post from the script's first `n` posts, checking each post's words.
fn scripted_checked(n: usize) -> Game {
    let mut g = Game::new();
    for p in script().into_iter().take(n) {
        let before = g.state.clone();
        let applied = g.post_at(p.side, &p.kind, p.body.clone(), p.stamp).expect("the script is accepted");
        if let Err(e) = check_retreat_words(&before, &g.state, &applied.outcomes) {
            panic!("script post {}: {e}", g.seq);
        }
    }
    g
}

#[test]
fn the_scripted_campaign_says_what_happened() {
    let g = scripted_checked(script().len());
    assert!(g.state.result.is_some());
}

#[test]
fn an_attacker_that_loses_retreats_from_its_own_hexes_not_the_target() {
    // The worked example's attack, sent second by second until the Rebels behind the river win.
    let attack = script()[13].clone();
    for second in 0..600 {
        let mut g = scripted(13);
        let stamp = attack.stamp + chrono::Duration::seconds(second);
        let out = g.post_at(attack.side, &attack.kind, attack.body.clone(), stamp).unwrap().outcomes;
        if outcome(&out, "battle").data.to_json()["numbers"]["winner"] != "defender" {
            continue;
        }
        // The Union answers its casualty order and retreats from its own hexes.
        while let Some(a) = g.state.awaiting.first().cloned().filter(|a| a.kind != "retreat") {
            g.ok(Some(a.side), &a.kind, serde_json::json!({"order": []}));
        }
        let before = g.state.clone();
        let mut own: Vec<Hex> =
            before.battle.as_ref().unwrap().retreating.iter().filter_map(|id| before.unit(id).unwrap().hex).collect();
        own.sort();
        own.dedup();
        assert!(own.contains(&"0504".parse().unwrap()) && !own.contains(&"0604".parse().unwrap()), "{own:?}");
        answer_everything(&mut g);
        let out = g.last.clone();
        let retreat = outcome(&out, "retreat");
        let from = format!("Battle 1: the Union retreats from {}", hexes_in_words(&own));
        assert!(retreat.headline.starts_with(&from), "{}", retreat.headline);
        let text = outcome_text("retreat", &retreat.data.to_json());
        assert!(text.markdown.starts_with(&format!("**{from}**")), "{}", text.markdown);
        assert!(!text.markdown.contains("0604"), "the Rebels' hex is named: {}", text.markdown);
        assert_eq!(check_retreat_words(&before, &g.state, &out), Ok(1));
        // 0604 still holds the Rebels who won.
        assert_eq!(g.state.occupant("0604".parse().unwrap()), Some(Side::Confederate));
        return;
    }
    panic!("no second in ten minutes made the defender win");
}

#[test]
fn a_loss_next_to_the_enemy_is_in_the_headline() {
    let mut g = scripted(16);
    let before = g.state.clone();
    let out = g.ok(
        R,
        "retreat",
        serde_json::json!({"paths": [{"unit": "cs-51st-inf", "path": ["0704"]},
                                     {"unit": "cs-52nd-inf", "path": ["0603"]}]}),
    );
    let retreat = outcome(&out, "retreat");
    assert_eq!(
        retreat.headline,
        "Battle 1: the Rebel retreats from 0604; 52nd Inf loses 1 of 1 factors next to the enemy and is eliminated"
    );
    check_retreat_words(&before, &g.state, &out).unwrap();
}

#[test]
fn campaigns_of_versions_1_and_2_keep_the_words_they_stored() {
    for version in [1, 2] {
        let mut g = Game::new();
        g.settings.rules_version = version;
        for p in script().into_iter().take(16) {
            g.post_at(p.side, &p.kind, p.body.clone(), p.stamp).unwrap();
        }
        let out = g.ok(
            R,
            "retreat",
            serde_json::json!({"paths": [{"unit": "cs-51st-inf", "path": ["0704", "0804"]},
                                         {"unit": "cs-52nd-inf", "path": ["0704", "0804"]}]}),
        );
        let retreat = outcome(&out, "retreat");
        assert_eq!(retreat.headline, "Battle 1: the Rebel retreats from 0604");
        assert_eq!(retreat.data.to_json()["vacated"], "0604");
        assert!(retreat.data.to_json().get("left").is_none());
        // Their forum text is read from what they stored, and names the loser's hex.
        let text = outcome_text("retreat", &retreat.data.to_json());
        assert!(text.markdown.starts_with("**Battle 1: the Rebel retreats from 0604**"), "{}", text.markdown);
        assert!(text.markdown.contains("0604 is left empty"), "{}", text.markdown);
    }
}

#[test]
fn a_version_2_attacker_defeat_is_not_said_to_empty_the_winners_hex() {
    // What a version 2 campaign stored when the attacker lost: `vacated` is the target.
    let stored = serde_json::json!({"advance": "none: the vacated hex stays empty until a unit moves in",
        "battle": 2, "eliminated_without_retreat": [], "losses": [],
        "moves": [{"from": "0602", "path": ["0702"], "unit": "cs-17th-inf"}], "side": "confederate", "vacated": "0503"});
    let text = outcome_text("retreat", &stored);
    assert!(text.markdown.starts_with("**Battle 2: the Rebel retreats from 0602**"), "{}", text.markdown);
    assert!(!text.markdown.contains("0503"), "{}", text.markdown);
    assert!(!text.markdown.contains("left empty"), "{}", text.markdown);
}
