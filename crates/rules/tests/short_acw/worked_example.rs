//! The seed's worked example, end to end: 15 Union factors attack 6 Rebel factors behind a
//! river, the attack stamped 9:51:45 → victory 56, result 21, the Union wins, loses 1 factor;
//! the Rebels lose 3 spread over their units and must retreat.

use crate::common::*;
use serde_json::json;

#[test]
fn the_worked_example_through_apply() {
    // Deployment, turn 1 and the moves up to the river (the script's first 13 posts).
    let mut g = scripted(13);
    assert_eq!(g.state.turn, 2);
    assert_eq!(g.state.side_to_act, U);
    for id in ["us-14th-inf", "us-13th-inf"] {
        assert_eq!(g.hex_of(id).as_deref(), Some("0504"));
        assert!(g.state.unit(id).unwrap().must_fight);
    }
    assert_eq!(g.hex_of("us-12th-inf").as_deref(), Some("0505"));
    // The unit that halted next to the enemy must fight before the turn ends.
    g.refused(U, "end_turn", empty(), "kind", "combat.must_fight", "must fight a combat");

    let attack = script()[13].clone();
    assert_eq!(attack.stamp.to_rfc3339(), "2026-03-02T09:51:45.250+00:00");
    let out = g.post_at(attack.side, &attack.kind, attack.body, attack.stamp).unwrap().outcomes;
    let battle = outcome(&out, "battle").data.to_json();
    let n = &battle["numbers"];
    assert_eq!(n["attacker"], 15);
    assert_eq!(n["defender"], 6);
    assert_eq!(n["defence"], "river");
    assert_eq!(n["multiplier"], "2");
    assert_eq!(n["defender_counted"], "12");
    assert_eq!(n["total_counted"], "27");
    assert_eq!(n["victory"], 56);
    assert_eq!(n["result_number"]["n"], 95145);
    assert_eq!(n["result_number"]["sqrt"], "308.455831522115");
    assert_eq!(n["result"], 21);
    assert_eq!(n["winner"], "attacker");
    assert_eq!(battle["winner_side"], "union");
    assert_eq!(n["difference"], 35);
    assert_eq!(n["band"], "31–40");
    assert_eq!(n["winner_rate"], "0.5");
    assert_eq!(n["loser_rate"], "2");
    assert_eq!(n["basic_rate"], "21/15");
    assert_eq!(n["winner_casualties"], 1);
    assert_eq!(n["loser_casualties"], 3);
    assert_eq!(battle["post"], g.seq);

    // Both sides are asked for their casualty order (the spread has a choice for each).
    let kinds: Vec<(String, String)> =
        g.state.awaiting.iter().map(|a| (a.side.key().to_string(), a.kind.clone())).collect();
    assert_eq!(
        kinds,
        [
            ("union".to_string(), "casualty_order".to_string()),
            ("confederate".to_string(), "casualty_order".to_string())
        ]
    );
    // The Union takes the default: largest first, then unit id → the 12th Inf.
    let out = g.ok(U, "casualty_order", json!({"order": []}));
    assert_eq!(outcome(&out, "casualties").data.to_json()["casualties"], 1);
    assert_eq!(g.factors("us-12th-inf"), 3);
    assert_eq!(g.factors("us-13th-inf"), 4);
    assert_eq!(g.factors("us-14th-inf"), 4);
    assert_eq!(g.factors("us-27th-inf"), 3);
    // The Rebels put the 52nd first: it takes 2, the 51st 1 ("no unit can take 2 casualties
    // until all other units present have taken at least 1").
    let out = g.ok(R, "casualty_order", json!({"order": ["cs-52nd-inf"]}));
    let c = outcome(&out, "casualties").data.to_json();
    assert_eq!(c["casualties"], 3);
    assert_eq!(c["units"][0]["unit"], "cs-52nd-inf");
    assert_eq!(c["units"][0]["taken"], 2);
    assert_eq!(c["units"][1]["taken"], 1);
    assert_eq!(g.factors("cs-52nd-inf"), 1);
    assert_eq!(g.factors("cs-51st-inf"), 2);
    // The Rebels must retreat.
    assert_eq!(g.state.awaiting.len(), 1);
    assert_eq!(g.state.awaiting[0].kind, "retreat");
    assert_eq!(g.state.awaiting[0].side, adjutant_rules::Side::Confederate);
    let out = g.ok(
        R,
        "retreat",
        json!({"paths": [{"unit": "cs-51st-inf", "path": ["0704", "0804"]},
                         {"unit": "cs-52nd-inf", "path": ["0704", "0804"]}]}),
    );
    let r = outcome(&out, "retreat").data.to_json();
    assert_eq!(r["losses"][0]["factors_lost"], 0);
    assert_eq!(g.hex_of("cs-51st-inf").as_deref(), Some("0804"));
    // Nobody advances: the vacated hex stays empty and Rebel-controlled until occupied.
    assert!(g.state.units_in("0604".parse().unwrap()).next().is_none());
    assert!(g.state.battle.is_none());
    g.ok(U, "end_turn", empty());
    assert_eq!(g.state.side_to_act, R);
}

#[test]
fn one_decimal_rounding_gives_the_same_56_here() {
    let mut g = scripted(13);
    g.settings.victory_rounding = adjutant_rules::short_acw::VictoryRounding::OneDecimal;
    let attack = script()[13].clone();
    let out = g.post_at(attack.side, &attack.kind, attack.body, attack.stamp).unwrap().outcomes;
    let n = &outcome(&out, "battle").data.to_json()["numbers"];
    assert_eq!(n["per_factor"], "3.7");
    assert_eq!(n["victory"], 56);
}

#[test]
fn a_retreat_ending_next_to_the_enemy_loses_half() {
    let mut g = scripted(16);
    assert_eq!(g.factors("cs-51st-inf"), 2);
    assert_eq!(g.factors("cs-52nd-inf"), 1);
    // 0603 touches the Union in 0504: half of 1 rounded half up is 1, so the 52nd is gone;
    // the 51st goes to 0704 (also next to 0504? no: 0704 touches 0603, 0604, 0703, 0705, 0803, 0804).
    let out = g.ok(
        R,
        "retreat",
        json!({"paths": [{"unit": "cs-51st-inf", "path": ["0704"]},
                         {"unit": "cs-52nd-inf", "path": ["0603"]}]}),
    );
    let losses = &outcome(&out, "retreat").data.to_json()["losses"];
    assert_eq!(losses[1]["next_to_enemy"], "0504");
    assert_eq!(losses[1]["factors_lost"], 1);
    assert_eq!(losses[1]["eliminated"], true);
    assert!(g.state.unit("cs-52nd-inf").unwrap().eliminated);
    assert_eq!(g.factors("cs-51st-inf"), 2);
}
