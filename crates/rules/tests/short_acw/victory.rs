//! Victory conditions, the end of the game, the Rebel reinforcement roll and the rail-to-edge
//! condition.

use crate::common::*;
use adjutant_rules::short_acw::scenario::VictoryLevel;
use adjutant_rules::short_acw::{Hex, Phase};
use adjutant_rules::Side;
use chrono::{TimeZone, Utc};
use serde_json::json;

fn h(s: &str) -> Hex {
    s.parse().unwrap()
}

#[test]
fn m_after_turn_7_is_a_minor_union_victory() {
    let mut g = scripted(2);
    g.state.turn = 8;
    g.state.control.insert(h("1407"), Side::Union);
    let out = g.ok(U, "end_turn", empty());
    let over = outcome(&out, "game_over").data.to_json();
    assert_eq!(over["condition"], "Minor Union Victory: Capture City 'M'");
    let result = g.state.result.clone().unwrap();
    assert_eq!((result.winner, result.level, result.turn), (Some(Side::Union), Some(VictoryLevel::Minor), 8));
    assert_eq!(g.state.phase, Phase::Over);
    assert_eq!(g.state.side_to_act, None);
}

#[test]
fn m_by_turn_7_is_a_major_union_victory() {
    let mut g = scripted(2);
    g.state.turn = 7;
    g.state.control.insert(h("1407"), Side::Union);
    g.ok(U, "end_turn", empty());
    let result = g.state.result.clone().unwrap();
    assert_eq!(result.level, Some(VictoryLevel::Major));
    assert_eq!(result.condition, "Major Union Victory: Capture City 'M' within 7 turns.");
}

#[test]
fn a_is_a_major_rebel_victory_and_checked_first_in_the_rebel_turn() {
    let mut g = scripted(4);
    assert_eq!(g.state.side_to_act, R);
    // Empty A as if the Union had marched out, and give it to the Rebels.
    for u in g.state.units.iter_mut().filter(|u| u.hex == Some(h("0206"))) {
        u.hex = Some(h("0107"));
    }
    g.state.control.insert(h("0206"), Side::Confederate);
    // Even if the Union somehow held M too, the acting side's capture counts first.
    g.state.control.insert(h("1407"), Side::Union);
    g.ok(R, "end_turn", empty());
    let result = g.state.result.clone().unwrap();
    assert_eq!(result.winner, Some(Side::Confederate));
    assert_eq!(result.level, Some(VictoryLevel::Major));
    assert_eq!(result.condition, "Major Rebel Victory: Capture City 'A'");
}

#[test]
fn surviving_twelve_turns_is_a_minor_rebel_victory() {
    let mut g = scripted(4);
    g.state.turn = 11;
    g.ok(R, "end_turn", empty());
    assert_eq!(g.state.turn, 12);
    assert!(g.state.result.is_none());
    g.ok(U, "end_turn", empty());
    let out = g.ok(R, "end_turn", empty());
    assert_eq!(outcome(&out, "game_over").data.to_json()["winner"], "confederate");
    let result = g.state.result.clone().unwrap();
    assert_eq!(result.level, Some(VictoryLevel::Minor));
    assert_eq!(result.turn, 12);
    g.refused(U, "move", json!({"unit": "us-hq", "path": ["0207"]}), "kind", "game.over", "nothing more is accepted");
}

#[test]
fn the_union_gains_a_point_every_turn_and_stores_it() {
    let mut g = scripted(1);
    let out = g.ok(R, "deploy", script()[1].body.clone());
    let begins = outcome(&out, "turn_begins").data.to_json();
    assert_eq!((begins["turn"].as_u64(), begins["points_gained"].as_u64()), (Some(1), Some(1)));
    g.ok(U, "end_turn", empty());
    g.ok(R, "end_turn", empty());
    g.ok(U, "end_turn", empty());
    assert_eq!(g.state.reinforcement_points.union, 2);
    assert_eq!(g.state.reinforcement_points.confederate, 0);
}

#[test]
fn the_rebel_roll_compares_milliseconds_mod_6_with_cities_held() {
    let mut g = scripted(4);
    // The Union holds four of the six cities: only E and G count.
    for hex in ["1011", "1302", "1407", "1204"] {
        g.state.control.insert(h(hex), Side::Union);
    }
    let at =
        |ms: u32| Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap() + chrono::Duration::milliseconds(i64::from(ms));
    let out = g.post_at(R, "reinforcement", empty(), at(123)).unwrap().outcomes;
    let roll = outcome(&out, "reinforcement_roll").data.to_json();
    assert_eq!(roll["ms"], 123);
    assert_eq!(roll["remainder"], 3);
    assert_eq!(roll["cities"], 2);
    assert_eq!(roll["cities_held"], json!(["E", "G"]));
    assert_eq!(roll["gains"], false);
    assert_eq!(g.state.reinforcement_points.confederate, 0);
    let mut g = scripted(4);
    for hex in ["1011", "1302", "1407", "1204"] {
        g.state.control.insert(h(hex), Side::Union);
    }
    let out = g.post_at(R, "reinforcement", empty(), at(128)).unwrap().outcomes;
    assert_eq!(outcome(&out, "reinforcement_roll").data.to_json()["remainder"], 2);
    assert_eq!(g.state.reinforcement_points.confederate, 1);
}

#[test]
fn a_cut_rail_line_stops_reinforcement() {
    let mut g = scripted(4);
    g.ok(R, "reinforcement", empty());
    // E (0905) reaches the east edge along the Orange and Alexandria through 1005, 1105, …
    // and the south edge through M. Cutting 1005 and 0805 isolates E.
    let mut cut = scripted(4);
    cut.ok(R, "reinforcement", empty());
    cut.state.control.insert(h("1005"), Side::Union);
    cut.state.control.insert(h("0805"), Side::Union);
    let body = json!({"factors": [{"unit": "cs-39th-inf", "factors": 1}]});
    cut.refused(
        R,
        "reinforce",
        body.clone(),
        "body.factors[0].unit",
        "reinforcement.rail",
        "hex 0905 is neither in nor next to a rail hex",
    );
    let out = g.ok(R, "reinforce", body);
    assert_eq!(outcome(&out, "reinforced").data.to_json()["factors"][0]["rail_hex"], "0905");
    assert_eq!(g.factors("cs-39th-inf"), 5);
    assert!(g.state.unit("cs-39th-inf").unwrap().reinforced);
}

#[test]
fn units_that_do_not_move_are_fortified_until_they_move() {
    let mut g = scripted(3); // the 3rd Cav has moved
    let out = g.ok(U, "end_turn", empty());
    let fortified = &outcome(&out, "turn_ended").data.to_json()["newly_fortified"];
    assert!(fortified.as_array().unwrap().iter().any(|v| v == "us-14th-inf"));
    assert!(!fortified.as_array().unwrap().iter().any(|v| v == "us-3rd-cav"));
    assert!(g.state.unit("us-14th-inf").unwrap().fortified);
    g.ok(R, "end_turn", empty());
    g.ok(U, "move", json!({"unit": "us-14th-inf", "path": ["0404"]}));
    assert!(!g.state.unit("us-14th-inf").unwrap().fortified);
}

#[test]
fn a_fortified_defender_counts_one_and_a_half() {
    // The Rebels sit in 0604 a full turn. The Union attacks from 0504 across the river AND
    // from 0605 on the same bank, so the river does not count but the fortification does.
    let mut g = scripted(8);
    g.ok(U, "move", json!({"unit": "us-3rd-inf", "path": ["0306", "0406", "0506"]}));
    g.ok(U, "end_turn", empty());
    g.ok(R, "end_turn", empty());
    assert!(g.state.unit("cs-51st-inf").unwrap().fortified);
    // Across the rail bridge (1) and on to 0605 (1), where it halts next to 0604.
    g.ok(U, "move", json!({"unit": "us-3rd-inf", "path": ["0606", "0605"]}));
    g.ok(U, "move", json!({"unit": "us-14th-inf", "path": ["0504"]}));
    let out = g.ok(U, "attack", json!({"units": ["us-3rd-inf", "us-14th-inf"], "target": "0604"}));
    let n = &outcome(&out, "battle").data.to_json()["numbers"];
    assert_eq!(n["defence"], "fortified");
    assert_eq!(n["multiplier"], "1.5");
    assert_eq!(n["defender_counted"], "9");
    assert_eq!(n["total_counted"], "17");
    // 100 × 8 / 17 = 47.06 → 47.
    assert_eq!(n["victory"], 47);
}

/// The Union set up to attack 0604 (cs-51st-inf and cs-52nd-inf, 3 factors each, fortified)
/// with 8 factors from both banks, so the river does not count.
pub(crate) fn before_the_fortified_attack(rules_version: u32) -> Game {
    let mut g = scripted(8);
    g.settings.rules_version = rules_version;
    g.ok(U, "move", json!({"unit": "us-3rd-inf", "path": ["0306", "0406", "0506"]}));
    g.ok(U, "end_turn", empty());
    g.ok(R, "end_turn", empty());
    g.ok(U, "move", json!({"unit": "us-3rd-inf", "path": ["0606", "0605"]}));
    g.ok(U, "move", json!({"unit": "us-14th-inf", "path": ["0504"]}));
    // As if the 52nd had just moved into the fortified hex.
    if let Some(u) = g.state.units.iter_mut().find(|u| u.id == "cs-52nd-inf") {
        u.fortified = false;
    }
    g
}

#[test]
fn fortification_counts_unit_by_unit() {
    // Seed: "Defenders in fortifications count 1 ½ Factors" — each fortified defender, not the
    // hex: D′ = 3 × 1½ + 3 × 1 = 7.5; 100 × 8 / 15.5 = 51.6 → 52.
    let mut g = before_the_fortified_attack(2);
    let out = g.ok(U, "attack", json!({"units": ["us-3rd-inf", "us-14th-inf"], "target": "0604"}));
    let n = &outcome(&out, "battle").data.to_json()["numbers"];
    assert_eq!(n["defender_fortified"], 3);
    assert_eq!(n["defender_counted"], "7.5");
    assert_eq!(n["total_counted"], "15.5");
    assert_eq!(n["victory"], 52);
}

#[test]
fn rules_version_1_keeps_the_whole_hex_fortification() {
    // Version 1: one unfortified defender took the bonus from the whole hex (100 × 8 / 14 → 57),
    // and the battle's numbers carry no `defender_fortified`.
    let mut g = before_the_fortified_attack(1);
    let out = g.ok(U, "attack", json!({"units": ["us-3rd-inf", "us-14th-inf"], "target": "0604"}));
    let n = &outcome(&out, "battle").data.to_json()["numbers"];
    assert_eq!(n["defence"], "open");
    assert_eq!(n["defender_counted"], "6");
    assert_eq!(n["victory"], 57);
    assert!(n.get("defender_fortified").is_none());
}

/// The first stamp after the game's clock whose result number is at most `most`.
pub(crate) fn stamp_with_result_at_most(g: &Game, most: u32) -> chrono::DateTime<Utc> {
    let mut stamp = g.clock + chrono::Duration::seconds(61);
    while g.settings.clock.result_number(stamp).result > most {
        stamp += chrono::Duration::seconds(1);
    }
    stamp
}

pub(crate) fn set_unit(g: &mut Game, id: &str, factors: u32, on_map: bool) {
    if let Some(u) = g.state.units.iter_mut().find(|u| u.id == id) {
        u.factors = factors;
        if !on_map {
            u.hex = None;
            u.eliminated = true;
        }
    }
}

#[test]
fn a_lone_unit_at_0_factors_attacked_is_eliminated() {
    // "A unit at 0 factors is eliminated": the 52nd alone in 0604 with 0 factors (a new unit,
    // say). D′ = 0, victory 100: the attacker wins on any result, and the 52nd does not retreat.
    let mut g = before_the_fortified_attack(2);
    set_unit(&mut g, "cs-51st-inf", 3, false);
    set_unit(&mut g, "cs-52nd-inf", 0, true);
    let stamp = stamp_with_result_at_most(&g, 99);
    let out = g.post_at(U, "attack", json!({"units": ["us-3rd-inf", "us-14th-inf"], "target": "0604"}), stamp);
    let out = out.unwrap().outcomes;
    assert_eq!(outcome(&out, "battle").data.to_json()["numbers"]["victory"], 100);
    let gone = outcome(&out, "eliminated");
    assert_eq!(gone.data.to_json()["unit"], "cs-52nd-inf");
    assert_eq!(gone.data.to_json()["reason"], "0 factors");
    assert!(g.state.unit("cs-52nd-inf").unwrap().eliminated);
    assert!(g.state.battle.is_none());
    assert!(g.state.units_in(h("0604")).next().is_none());
    // Version 1: the 0-factor unit took no casualty and retreated.
    let mut old = before_the_fortified_attack(1);
    set_unit(&mut old, "cs-51st-inf", 3, false);
    set_unit(&mut old, "cs-52nd-inf", 0, true);
    old.post_at(U, "attack", json!({"units": ["us-3rd-inf", "us-14th-inf"], "target": "0604"}), stamp).unwrap();
    assert!(!old.state.unit("cs-52nd-inf").unwrap().eliminated);
    assert_eq!(old.state.awaiting[0].kind, "retreat");
}

#[test]
fn a_0_factor_unit_in_a_stack_is_eliminated_while_the_others_retreat() {
    // The 51st (3 factors, fortified) and the 52nd (0 factors) hold 0604. The Union wins; the
    // 51st takes the casualties and retreats, the 52nd is eliminated.
    let mut g = before_the_fortified_attack(2);
    set_unit(&mut g, "cs-52nd-inf", 0, true);
    let stamp = stamp_with_result_at_most(&g, 30);
    let out = g.post_at(U, "attack", json!({"units": ["us-3rd-inf", "us-14th-inf"], "target": "0604"}), stamp);
    let out = out.unwrap().outcomes;
    let n = &outcome(&out, "battle").data.to_json()["numbers"];
    assert_eq!(n["winner"], "attacker");
    answer_everything(&mut g);
    assert!(g.state.unit("cs-52nd-inf").unwrap().eliminated);
    let survivor = g.state.unit("cs-51st-inf").unwrap();
    assert!(!survivor.eliminated);
    assert_ne!(survivor.hex, Some(h("0604")));
}

#[test]
fn the_first_outcome_says_the_map_is_a_stand_in() {
    // The seed publishes no map; the shipped scenario's note says so, and the campaign's first
    // outcome (the first deployment) carries the line.
    let g = Game::new();
    assert_eq!(g.scenario.stand_in_map(), Some("Stand-in map: the seed publishes no map"));
    let first = script()[0].clone();
    let second = script()[1].clone();
    let mut g = Game::new();
    // (Version 3: the first deployment is sealed, and its outcome says so.)
    let out = g.post_at(first.side, &first.kind, first.body.clone(), first.stamp).unwrap().outcomes;
    assert_eq!(
        outcome(&out, "deployment_sealed").data.to_json()["stand_in_map"],
        "Stand-in map: the seed publishes no map"
    );
    let out = g.post_at(second.side, &second.kind, second.body.clone(), second.stamp).unwrap().outcomes;
    assert!(out.iter().all(|o| o.data.to_json().get("stand_in_map").is_none()), "only the first");
    // Version 1 campaigns replay their first outcome as it was written.
    let mut old = Game::new();
    old.settings.rules_version = 1;
    let out = old.post_at(first.side, &first.kind, first.body, first.stamp).unwrap().outcomes;
    assert!(outcome(&out, "deployed").data.to_json().get("stand_in_map").is_none());
}
