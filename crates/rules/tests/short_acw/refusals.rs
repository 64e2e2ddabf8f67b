//! Every refusal of the managed campaign, with its message: field, rule and sentence.

use crate::common::*;
use adjutant_rules::short_acw::scenario::SHORT_ACW_TOML;
use adjutant_rules::short_acw::{legal_moves, Scenario};
use serde_json::{json, Value};

fn union_deployment() -> Value {
    script()[0].body.clone()
}

fn rebel_deployment() -> Value {
    script()[1].body.clone()
}

#[test]
fn post_refusals() {
    let mut g = Game::new();
    g.refused(None, "deploy", union_deployment(), "side", "post.moderator", "a moderator does not post orders");
    g.refused(U, "charge", empty(), "kind", "post.kind", "`charge` is not a post kind");
    g.refused(U, "deploy", json!({"placements": [], "extra": 1}), "body.extra", "post.body", "unknown field `extra`");
    g.refused(
        U,
        "deploy",
        json!({"placements": [{"unit": "us-hq", "hex": "26"}]}),
        "body.placements[0].hex",
        "post.body",
        "is not a hex",
    );
    g.refused(U, "end_turn", json!({"now": true}), "kind", "phase.deployment", "each side posts `deploy` first");
}

#[test]
fn deployment_refusals() {
    let mut g = Game::new();
    let mut body = union_deployment();
    body["placements"][0]["unit"] = json!("us-99th-inf");
    g.refused(U, "deploy", body, "body.placements[0].unit", "unit.unknown", "there is no unit `us-99th-inf`");
    g.refused(
        U,
        "deploy",
        json!({"placements": [{"unit": "cs-hq", "hex": "0206"}]}),
        "body.placements[0].unit",
        "unit.not_yours",
        "belongs to the Rebel",
    );
    let mut body = union_deployment();
    body["placements"][1]["unit"] = json!("us-14th-inf");
    g.refused(U, "deploy", body, "body.placements[1].unit", "deployment.twice", "14th Inf is placed twice");
    let mut body = union_deployment();
    body["placements"][0]["hex"] = json!("0604");
    g.refused(
        U,
        "deploy",
        body,
        "body.placements[0].hex",
        "deployment.zone",
        "hex 0604 is not within 1 hex of A, B, C",
    );
    let mut body = union_deployment();
    body["placements"][8]["hex"] = json!("0206"); // a fourth infantry or cavalry unit in A
    g.refused(U, "deploy", body, "body.placements[8].hex", "deployment.stacking", "more than 3 infantry and cavalry");
    let mut body = union_deployment();
    body["placements"].as_array_mut().unwrap().pop();
    g.refused(U, "deploy", body, "body.placements", "deployment.all_units", "Army HQ (`us-hq`) is not placed");
    g.ok(U, "deploy", union_deployment());
    g.refused(U, "deploy", union_deployment(), "kind", "deployment.once", "the Union has already deployed");
    g.ok(R, "deploy", rebel_deployment());
    g.refused(R, "deploy", rebel_deployment(), "kind", "phase.deployment_over", "deployment is over");
}

#[test]
fn deploying_into_the_enemy_is_refused() {
    // A scenario whose Rebels may also deploy around B.
    let text = SHORT_ACW_TOML.replacen(
        "confederate = [\"E\", \"I\", \"H\", \"G\"]",
        "confederate = [\"E\", \"I\", \"H\", \"G\", \"B\"]",
        1,
    );
    let mut g = Game::with(Scenario::from_toml("b.toml", &text).unwrap());
    g.ok(U, "deploy", union_deployment());
    let mut body = rebel_deployment();
    body["placements"][0]["hex"] = json!("0304");
    g.refused(R, "deploy", body, "body.placements[0].hex", "deployment.enemy_hex", "hex 0304 is held by the enemy");
}

#[test]
fn turn_and_phase_refusals() {
    let mut g = scripted(2);
    g.refused(R, "end_turn", empty(), "side", "turn.side", "it is the Union's player turn (turn 1)");
    g.refused(
        U,
        "retreat",
        json!({"paths": []}),
        "kind",
        "battle.not_awaited",
        "nothing awaits a `retreat` from the Union: no battle is waiting; it is the Union's player turn, in which the Union may post `reinforce`, `move`, `attack` or `end_turn`",
    );
    g.refused(
        U,
        "reinforcement",
        empty(),
        "side",
        "reinforcement.union_automatic",
        "only the Rebel makes a reinforcement post",
    );
    g.ok(U, "move", json!({"unit": "us-4th-cav", "path": ["0409"]}));
    g.refused(
        U,
        "reinforce",
        json!({"factors": [{"unit": "us-3rd-inf", "factors": 1}]}),
        "kind",
        "phase.reinforcement_over",
        "before any move or attack",
    );
    g.ok(U, "end_turn", empty());
    g.ok(R, "reinforcement", empty());
    g.refused(
        R,
        "reinforcement",
        empty(),
        "kind",
        "reinforcement.once_a_turn",
        "a single reinforcement post each turn",
    );
}

#[test]
fn movement_refusals() {
    let mut g = scripted(2);
    let mv = |unit: &str, path: &[&str]| json!({"unit": unit, "path": path});
    g.refused(U, "move", mv("cs-hq", &["0904"]), "body.unit", "unit.not_yours", "belongs to the Rebel");
    g.refused(U, "move", mv("us-14th-inf", &[]), "body.path", "movement.path", "at least one hex");
    g.refused(
        U,
        "move",
        mv("us-14th-inf", &["0404", "0414"]),
        "body.path[1]",
        "movement.off_map",
        "hex 0414 is not on the map",
    );
    g.refused(
        U,
        "move",
        mv("us-14th-inf", &["0505"]),
        "body.path[0]",
        "movement.adjacent",
        "hex 0505 does not touch 0403",
    );
    g.refused(
        U,
        "move",
        mv("us-14th-inf", &["0404", "0403"]),
        "body.path[1]",
        "movement.revisit",
        "the path enters 0403 twice",
    );
    // Woods cost 3: 0208 is woods, then a fourth point is too many for infantry.
    g.refused(
        U,
        "move",
        mv("us-3rd-inf", &["0207", "0208"]),
        "body.path[1]",
        "movement.points",
        "reaching 0208 costs 4 movement points; 3rd Inf (infantry) has 3",
    );
    // Crossing a river off the bridges costs 3.
    g.refused(
        U,
        "move",
        mv("us-14th-inf", &["0504", "0604"]),
        "body.path[1]",
        "movement.points",
        "reaching 0604 costs 4 movement points",
    );
    // Stacking: three infantry already stand in A.
    g.refused(
        U,
        "move",
        mv("us-4th-cav", &["0309", "0308", "0307", "0206"]),
        "body.path[3]",
        "movement.stacking",
        "hex 0206 already holds 3 infantry and cavalry units",
    );
    g.ok(U, "move", mv("us-30th-inf", &["0309", "0308", "0307"]));
    g.refused(
        U,
        "move",
        mv("us-30th-inf", &["0206"]),
        "body.unit",
        "movement.once_a_turn",
        "30th Inf has already moved this turn",
    );
    g.ok(U, "end_turn", empty());
    g.ok(R, "move", mv("cs-51st-inf", &["0603", "0604"]));
    g.ok(R, "end_turn", empty());
    // Turn 2: the 14th halts in 0504 next to the Rebels in 0604.
    g.refused(
        U,
        "move",
        mv("us-14th-inf", &["0504", "0503"]),
        "body.path[1]",
        "movement.halt_next_to_enemy",
        "14th Inf must halt in 0504, next to the enemy in 0604, and cannot go on to 0503",
    );
    g.ok(U, "move", mv("us-13th-inf", &["0504"]));
    g.refused(
        U,
        "move",
        mv("us-12th-inf", &["0404", "0505", "0506"]),
        "body.path[2]",
        "movement.halt_next_to_enemy",
        "must halt in 0505",
    );
    g.refused(
        U,
        "end_turn",
        empty(),
        "kind",
        "combat.must_fight",
        "13th Inf entered 0504 next to the enemy and must fight a combat",
    );
    // A reinforced unit spends the turn not moving.
    let mut g = scripted(3);
    g.ok(U, "end_turn", empty());
    g.ok(R, "reinforcement", empty());
    g.ok(R, "reinforce", json!({"factors": [{"unit": "cs-39th-inf", "factors": 1}]}));
    g.refused(
        R,
        "move",
        mv("cs-39th-inf", &["1005"]),
        "body.unit",
        "reinforcement.spends_turn_not_moving",
        "spends the turn not moving",
    );
    g.refused(
        R,
        "move",
        mv("cs-40th-inf", &["0904", "0903"]),
        "body.path[1]",
        "movement.points",
        "reaching 0903 costs 4 movement points",
    );
}

#[test]
fn moving_into_the_enemy_is_refused() {
    let mut g = scripted(8);
    // Rebels stand in 0604 next to 0504/0505; the 14th in 0403 cannot enter 0604 itself.
    g.ok(U, "move", json!({"unit": "us-14th-inf", "path": ["0504"]}));
    g.ok(U, "attack", json!({"units": ["us-14th-inf"], "target": "0604"}));
    g.refused(
        U,
        "move",
        json!({"unit": "us-13th-inf", "path": ["0504"]}),
        "kind",
        "battle.pending",
        "battle 1 at 0604 is not finished",
    );
    let mut g = scripted(8);
    g.refused(
        U,
        "move",
        json!({"unit": "us-14th-inf", "path": ["0504", "0604"]}),
        "body.path[1]",
        "movement.enemy_hex",
        "hex 0604 is held by the enemy",
    );
}

#[test]
fn legal_moves_list_reachable_hexes_with_costs() {
    let g = scripted(2);
    let moves = legal_moves(&g.scenario, &g.state, "us-14th-inf").unwrap();
    let find = |h: &str| moves.iter().find(|r| r.hex.to_string() == h).map(|r| r.cost);
    assert_eq!(find("0504"), Some(1));
    assert_eq!(find("0404"), Some(1));
    assert_eq!(find("0604"), Some(4).filter(|_| false)); // across the river: 1 + 3 > 3
    assert_eq!(find("0206"), None); // A is full
    let cav = legal_moves(&g.scenario, &g.state, "us-3rd-cav").unwrap();
    let reach = cav.iter().find(|r| r.hex.to_string() == "0810").unwrap();
    assert_eq!(reach.cost, 5);
    // Every listed move is accepted.
    for r in &moves {
        let mut g2 = scripted(2);
        g2.ok(U, "move", json!({"unit": "us-14th-inf", "path": r.path}));
    }
    // The other side's units have no moves now.
    assert!(legal_moves(&g.scenario, &g.state, "cs-hq").unwrap().is_empty());
    assert_eq!(legal_moves(&g.scenario, &g.state, "nobody").unwrap_err().rule, "unit.unknown");
}

#[test]
fn attack_refusals() {
    let mut g = scripted(13);
    let atk = |units: &[&str], target: &str| json!({"units": units, "target": target});
    g.refused(U, "attack", atk(&[], "0604"), "body.units", "combat.no_attackers", "name the attacking units");
    g.refused(
        U,
        "attack",
        atk(&["us-14th-inf"], "0615"),
        "body.target",
        "movement.off_map",
        "hex 0615 is not on the map",
    );
    g.refused(
        U,
        "attack",
        atk(&["us-14th-inf"], "0605"),
        "body.target",
        "combat.no_enemy",
        "there is no enemy unit in 0605",
    );
    g.refused(
        U,
        "attack",
        atk(&["us-14th-inf", "us-14th-inf"], "0604"),
        "body.units[1]",
        "combat.twice",
        "14th Inf is named twice",
    );
    g.refused(
        U,
        "attack",
        atk(&["us-14th-inf", "us-hq"], "0604"),
        "body.units[1]",
        "combat.adjacent",
        "Army HQ is not next to 0604",
    );
    g.refused(U, "attack", atk(&["cs-51st-inf"], "0604"), "body.units[0]", "unit.not_yours", "belongs to the Rebel");
    // The 13th attacks alone at a time whose result number beats its victory number
    // (100·4/(4 + 2·6) = 25): the Rebels win and the 13th retreats. It cannot attack again.
    let mut stamp = g.clock + chrono::Duration::seconds(1);
    while g.settings.clock.result_number(stamp).result <= 25 {
        stamp += chrono::Duration::seconds(1);
    }
    let out = g.post_at(U, "attack", atk(&["us-13th-inf"], "0604"), stamp).unwrap().outcomes;
    assert_eq!(outcome(&out, "battle").data.to_json()["winner_side"], "confederate");
    answer_everything(&mut g);
    g.refused(
        U,
        "attack",
        atk(&["us-13th-inf"], "0604"),
        "body.units[0]",
        "combat.once_a_turn",
        "13th Inf has already attacked this turn",
    );
    g.refused(
        U,
        "move",
        json!({"unit": "us-3rd-inf", "path": ["0306"]}),
        "kind",
        "phase.movement_over",
        "attacks have begun",
    );
    // With the 14th, 12th and 27th the Union drives the Rebels out; 0604 is then empty.
    g.ok(U, "attack", atk(&["us-14th-inf", "us-12th-inf", "us-27th-inf"], "0604"));
    answer_everything(&mut g);
    if g.state.units_in("0604".parse().unwrap()).next().is_none() {
        g.refused(
            U,
            "attack",
            atk(&["us-14th-inf"], "0604"),
            "body.target",
            "combat.no_enemy",
            "no enemy unit in 0604",
        );
    }
}

#[test]
fn an_attack_with_no_factors_is_refused() {
    let text = SHORT_ACW_TOML.replacen(
        "name = \"Army HQ\"\narm = \"hq\"\nfactors = 1",
        "name = \"Army HQ\"\narm = \"hq\"\nfactors = 0",
        1,
    );
    let mut g = Game::with(Scenario::from_toml("hq0.toml", &text).unwrap());
    let mut union = union_deployment();
    union["placements"][12]["hex"] = json!("0403");
    g.ok(U, "deploy", union);
    g.ok(R, "deploy", rebel_deployment());
    g.ok(U, "end_turn", empty());
    g.ok(R, "move", json!({"unit": "cs-51st-inf", "path": ["0603", "0604"]}));
    g.ok(R, "end_turn", empty());
    g.ok(U, "move", json!({"unit": "us-hq", "path": ["0504"]}));
    g.refused(
        U,
        "attack",
        json!({"units": ["us-hq"], "target": "0604"}),
        "body.units",
        "combat.no_factors",
        "no factors",
    );
    // It cannot fight, so it is not held to: the turn may end.
    g.ok(U, "end_turn", empty());
}

#[test]
fn casualty_and_retreat_refusals() {
    let mut g = scripted(14);
    g.refused(
        U,
        "casualty_order",
        json!({"order": ["cs-51st-inf"]}),
        "body.order[0]",
        "casualties.not_in_battle",
        "`cs-51st-inf` is not one of the Union units in battle 1",
    );
    g.refused(
        U,
        "casualty_order",
        json!({"order": ["us-14th-inf", "us-14th-inf"]}),
        "body.order[1]",
        "casualties.twice",
        "named twice",
    );
    g.refused(
        U,
        "end_turn",
        empty(),
        "kind",
        "battle.pending",
        "it awaits `casualty_order` from the Union and `casualty_order` from the Rebel",
    );
    g.refused(
        R,
        "retreat",
        json!({"paths": []}),
        "kind",
        "battle.not_awaited",
        "nothing awaits a `retreat` from the Rebel: the battle awaits `casualty_order` from the Union",
    );
    g.ok(U, "casualty_order", json!({}));
    g.ok(R, "casualty_order", json!({"order": ["cs-52nd-inf"]}));
    let rt = |paths: Value| json!({"paths": paths});
    g.refused(
        R,
        "retreat",
        rt(json!([{"unit": "cs-hq", "path": ["0704"]}])),
        "body.paths[0].unit",
        "retreat.not_retreating",
        "`cs-hq` is not one of the units retreating from battle 1",
    );
    g.refused(
        R,
        "retreat",
        rt(json!([{"unit": "cs-51st-inf", "path": ["0704"]}, {"unit": "cs-51st-inf", "path": ["0704"]}])),
        "body.paths[1].unit",
        "retreat.twice",
        "named twice",
    );
    g.refused(
        R,
        "retreat",
        rt(json!([{"unit": "cs-51st-inf", "path": ["0704", "0804", "0904"]}])),
        "body.paths[0].path",
        "retreat.length",
        "51st Inf was given 3 hexes; a retreat is 1 or 2.",
    );
    g.refused(
        R,
        "retreat",
        rt(json!([{"unit": "cs-51st-inf", "path": ["0804"]}])),
        "body.paths[0].path[0]",
        "movement.adjacent",
        "hex 0804 does not touch 0604",
    );
    g.refused(
        R,
        "retreat",
        rt(json!([{"unit": "cs-51st-inf", "path": ["0605", "0604"]}])),
        "body.paths[0].path[1]",
        "retreat.return",
        "cannot come back to 0604",
    );
    g.refused(
        R,
        "retreat",
        rt(json!([{"unit": "cs-51st-inf", "path": ["0504"]}])),
        "body.paths[0].path[0]",
        "retreat.enemy_hex",
        "hex 0504 is held by the enemy",
    );
    g.refused(
        R,
        "retreat",
        rt(json!([{"unit": "cs-51st-inf", "path": ["0614"]}])),
        "body.paths[0].path[0]",
        "movement.off_map",
        "not on the map",
    );
    g.refused(
        R,
        "retreat",
        rt(json!([{"unit": "cs-51st-inf", "path": ["0704"]}])),
        "body.paths",
        "retreat.all_units",
        "`cs-52nd-inf` must retreat too",
    );
    // Seed: "Defeated Armies may retreat up to two hexes, and must retreat at least one." The
    // 52nd can retreat (to 0704 with the 51st, or 0705), so an empty path is refused.
    let both = rt(json!([{"unit": "cs-51st-inf", "path": ["0704"]}, {"unit": "cs-52nd-inf", "path": []}]));
    g.refused(
        R,
        "retreat",
        both.clone(),
        "body.paths[1].path",
        "retreat.empty_path",
        "52nd Inf has a legal retreat from 0604",
    );
    // Rules version 1 (campaigns created before): the empty path gave the unit up.
    g.settings.rules_version = 1;
    let out = g.ok(R, "retreat", both);
    assert_eq!(outcome(&out, "retreat").data.to_json()["eliminated_without_retreat"], json!(["cs-52nd-inf"]));
    assert!(g.state.unit("cs-52nd-inf").unwrap().eliminated);
    assert_eq!(g.hex_of("cs-51st-inf").as_deref(), Some("0704"));
}

#[test]
fn retreat_stacking_is_refused() {
    let mut g = scripted(5);
    // Fill 0704 with three Rebel infantry before the battle.
    for unit in ["cs-39th-inf", "cs-40th-inf", "cs-17th-inf"] {
        g.ok(R, "move", json!({"unit": unit, "path": ["0804", "0704"]}));
    }
    for p in script().into_iter().skip(5).take(11) {
        g.post_at(p.side, &p.kind, p.body, p.stamp).unwrap();
    }
    g.refused(
        R,
        "retreat",
        json!({"paths": [{"unit": "cs-51st-inf", "path": ["0704"]}, {"unit": "cs-52nd-inf", "path": ["0605"]}]}),
        "body.paths[0].path",
        "retreat.stacking",
        "more than 3 infantry and cavalry",
    );
}

#[test]
fn reinforce_refusals() {
    let mut g = scripted(4);
    g.ok(R, "reinforcement", empty());
    let rf = |v: Value| v;
    g.refused(R, "reinforce", rf(json!({})), "body", "reinforcement.nothing", "name factors to add or new units");
    g.refused(
        R,
        "reinforce",
        rf(json!({"factors": [{"unit": "cs-39th-inf", "factors": 1}, {"unit": "cs-39th-inf", "factors": 1}]})),
        "body.factors[1].unit",
        "reinforcement.twice",
        "39th Inf is listed twice",
    );
    g.refused(
        R,
        "reinforce",
        rf(json!({"factors": [{"unit": "cs-39th-inf", "factors": 0}]})),
        "body.factors[0].factors",
        "reinforcement.factors",
        "at least one factor",
    );
    // Numbers that would overflow a sum are refused, not wrapped into free factors.
    g.refused(
        R,
        "reinforce",
        rf(json!({"factors": [{"unit": "cs-39th-inf", "factors": 2147483648u64}, {"unit": "cs-40th-inf", "factors": 2147483648u64}]})),
        "body.factors[0].factors",
        "reinforcement.factors",
        "at most 100 factors",
    );
    g.refused(
        R,
        "reinforce",
        rf(json!({"new_units": [{"name": "Horde", "arm": "infantry", "hex": "1005", "factors": 4000000000u64}]})),
        "body.new_units[0].factors",
        "reinforcement.factors",
        "0 to 100 factors",
    );
    g.refused(
        R,
        "reinforce",
        rf(json!({"factors": [{"unit": "cs-hq", "factors": 1}]})),
        "body.factors[0].unit",
        "reinforcement.arm",
        "Army HQ is an HQ",
    );
    // H (0802) has no rail.
    g.refused(
        R,
        "reinforce",
        rf(json!({"factors": [{"unit": "cs-34th-inf", "factors": 1}]})),
        "body.factors[0].unit",
        "reinforcement.rail",
        "hex 0802 is neither in nor next to a rail hex joined to a map edge by Rebel-controlled rail hexes",
    );
    g.refused(
        R,
        "reinforce",
        rf(json!({"factors": [{"unit": "cs-39th-inf", "factors": 2}]})),
        "body",
        "reinforcement.points",
        "this costs 2 reinforcement points; the Rebel has 1 stored",
    );
    g.refused(
        R,
        "reinforce",
        rf(json!({"factors": [{"unit": "cs-11th-arty", "factors": 1}]})),
        "body",
        "reinforcement.points",
        "this costs 2",
    );
    let nu = |name: &str, arm: &str, hex: &str| json!({"new_units": [{"name": name, "arm": arm, "hex": hex}]});
    g.refused(
        R,
        "reinforce",
        nu(" ", "infantry", "1005"),
        "body.new_units[0].name",
        "reinforcement.name",
        "a name of 1 to 40 characters",
    );
    g.refused(
        R,
        "reinforce",
        nu("Staff", "hq", "1005"),
        "body.new_units[0].arm",
        "reinforcement.arm",
        "infantry, cavalry or artillery",
    );
    g.refused(
        R,
        "reinforce",
        nu("Lost", "infantry", "1713"),
        "body.new_units[0].hex",
        "movement.off_map",
        "not on the map",
    );
    g.refused(
        R,
        "reinforce",
        nu("Lost", "infantry", "0802"),
        "body.new_units[0].hex",
        "reinforcement.rail",
        "hex 0802 is neither",
    );
    g.refused(
        R,
        "reinforce",
        nu("Crowd", "infantry", "0905"),
        "body.new_units[0].hex",
        "reinforcement.stacking",
        "already holds 3",
    );
    // A new unit costs 1 and starts with no factors.
    let out = g.ok(R, "reinforce", nu("1st Reserves", "infantry", "1005"));
    assert_eq!(outcome(&out, "reinforced").data.to_json()["cost"], 1);
    let unit = g.state.unit("cs-new-1").unwrap();
    assert_eq!((unit.factors, unit.hex.unwrap().to_string().as_str()), (0, "1005"));
    assert_eq!(g.state.reinforcement_points.confederate, 0);
    // The Union may not place a new unit in the enemy.
    let mut g = scripted(2);
    g.refused(
        U,
        "reinforce",
        nu("Raiders", "cavalry", "0703"),
        "body.new_units[0].hex",
        "reinforcement.enemy_hex",
        "hex 0703 is held by the enemy",
    );
}

#[test]
fn moderators_and_eliminated_units() {
    let mut g = scripted(16);
    g.ok(
        R,
        "retreat",
        json!({"paths": [{"unit": "cs-51st-inf", "path": ["0704"]}, {"unit": "cs-52nd-inf", "path": ["0603"]}]}),
    );
    assert!(g.state.unit("cs-52nd-inf").unwrap().eliminated);
    g.ok(U, "end_turn", empty());
    g.refused(
        R,
        "move",
        json!({"unit": "cs-52nd-inf", "path": ["0703"]}),
        "body.unit",
        "unit.eliminated",
        "52nd Inf has been eliminated",
    );
}

#[test]
fn cavalry_option_refusals_and_flow() {
    // Rebel cavalry in 0604; Union infantry attack it.
    let mut g = scripted(5);
    for unit in ["cs-37th-cav", "cs-45th-cav"] {
        g.ok(R, "move", json!({"unit": unit, "path": ["0703", "0603", "0604"]}));
    }
    g.ok(R, "end_turn", empty());
    for (unit, path) in [("us-14th-inf", json!(["0504"])), ("us-13th-inf", json!(["0504"]))] {
        g.ok(U, "move", json!({"unit": unit, "path": path}));
    }
    let out = g.ok(U, "attack", json!({"units": ["us-14th-inf", "us-13th-inf"], "target": "0604"}));
    assert_eq!(outcome(&out, "attack_declared").data.to_json()["cavalry"], json!(["cs-37th-cav", "cs-45th-cav"]));
    assert!(out.iter().all(|o| o.kind() != "battle"), "no result before the option is answered");
    assert_eq!(g.state.awaiting[0].kind, "cavalry_option");
    g.refused(
        U,
        "resolve_attack",
        empty(),
        "kind",
        "battle.not_awaited",
        "nothing awaits a `resolve_attack` from the Union: the battle awaits `cavalry_option` from the Rebel",
    );
    g.refused(
        R,
        "cavalry_option",
        json!({"retreat": false, "hex": "0705"}),
        "body.hex",
        "cavalry.hex_without_retreat",
        "only when the cavalry retreat",
    );
    g.refused(R, "cavalry_option", json!({"retreat": true}), "body.hex", "cavalry.hex", "name the hex");
    g.refused(
        R,
        "cavalry_option",
        json!({"retreat": true, "hex": "0806"}),
        "body.hex",
        "cavalry.one_hex",
        "hex 0806 is not next to 0604",
    );
    g.refused(
        R,
        "cavalry_option",
        json!({"retreat": true, "hex": "0504"}),
        "body.hex",
        "retreat.enemy_hex",
        "held by the enemy",
    );
    g.refused(
        R,
        "cavalry_option",
        json!({"retreat": true, "hex": "0614"}),
        "body.hex",
        "movement.off_map",
        "not on the map",
    );
    // Standing: the attacker's next post fixes the result number.
    g.ok(R, "cavalry_option", json!({"retreat": false}));
    assert_eq!(g.state.awaiting[0].kind, "resolve_attack");
    let out = g.ok(U, "resolve_attack", empty());
    let n = &outcome(&out, "battle").data.to_json()["numbers"];
    assert_eq!(n["attacker"], 8);
    assert_eq!(n["defender"], 6);

    // Retreating empties the hex: no battle.
    let mut g = scripted(5);
    for unit in ["cs-37th-cav", "cs-45th-cav"] {
        g.ok(R, "move", json!({"unit": unit, "path": ["0703", "0603", "0604"]}));
    }
    g.ok(R, "end_turn", empty());
    g.ok(U, "move", json!({"unit": "us-14th-inf", "path": ["0504"]}));
    g.ok(U, "attack", json!({"units": ["us-14th-inf"], "target": "0604"}));
    let out = g.ok(R, "cavalry_option", json!({"retreat": true, "hex": "0705"}));
    assert_eq!(outcome(&out, "attack_void").data.to_json()["target"], "0604");
    assert_eq!(g.hex_of("cs-37th-cav").as_deref(), Some("0705"));
    assert_eq!(g.factors("cs-37th-cav"), 3);
    assert!(g.state.battle.is_none());
    g.ok(U, "end_turn", empty());
}

#[test]
fn the_stacking_limit_applies_to_cavalry_retreating() {
    let mut g = scripted(5);
    for unit in ["cs-37th-cav", "cs-45th-cav"] {
        g.ok(R, "move", json!({"unit": unit, "path": ["0703", "0603", "0604"]}));
    }
    for unit in ["cs-39th-inf", "cs-40th-inf"] {
        g.ok(R, "move", json!({"unit": unit, "path": ["0805", "0705"]}));
    }
    g.ok(R, "end_turn", empty());
    g.ok(U, "move", json!({"unit": "us-14th-inf", "path": ["0504"]}));
    g.ok(U, "attack", json!({"units": ["us-14th-inf"], "target": "0604"}));
    g.refused(
        R,
        "cavalry_option",
        json!({"retreat": true, "hex": "0705"}),
        "body.hex",
        "retreat.stacking",
        "more than 3",
    );
}

#[test]
fn every_unit_still_next_to_the_enemy_must_fight_not_only_the_first() {
    // Turn 2: the 14th and 13th halted in 0504, the 12th and 27th in 0505, all next to the
    // Rebels in 0604. Shift the Rebels to 0605: next to 0505, no longer next to 0504.
    let mut g = scripted(13);
    for id in ["cs-51st-inf", "cs-52nd-inf"] {
        g.state.units.iter_mut().find(|u| u.id == id).unwrap().hex = Some("0605".parse().unwrap());
    }
    assert!(g.state.unit("us-14th-inf").unwrap().must_fight);
    g.refused(
        U,
        "end_turn",
        empty(),
        "kind",
        "combat.must_fight",
        "12th Inf entered 0505 next to the enemy and must fight a combat",
    );
}

#[test]
fn what_a_side_may_post_is_what_is_accepted() {
    use adjutant_rules::short_acw::may_post;
    use adjutant_rules::Side;
    // In deployment: `deploy`, once a side.
    let g = Game::new();
    assert_eq!(may_post(&g.scenario, &g.state, Side::Union), ["deploy"]);
    let g = scripted(1);
    assert!(may_post(&g.scenario, &g.state, Side::Union).is_empty());
    assert_eq!(may_post(&g.scenario, &g.state, Side::Confederate), ["deploy"]);
    // Turn 1, the Union's: everything of a player turn; the Rebels nothing.
    let g = scripted(2);
    assert_eq!(may_post(&g.scenario, &g.state, Side::Union), ["reinforce", "move", "attack", "end_turn"]);
    assert!(may_post(&g.scenario, &g.state, Side::Confederate).is_empty());
    // A battle waiting on answers: only the answers, from whom they are awaited.
    let g = scripted(14);
    assert_eq!(may_post(&g.scenario, &g.state, Side::Union), ["casualty_order"]);
    assert_eq!(may_post(&g.scenario, &g.state, Side::Confederate), ["casualty_order"]);
    // Every kind listed, and no other, passes the turn and phase checks, at every step of the
    // script for both sides (a body may still be refused for what it says).
    for n in 0..script().len() {
        let g = scripted(n);
        for side in [Side::Union, Side::Confederate] {
            let allowed = may_post(&g.scenario, &g.state, side);
            for kind in adjutant_rules::short_acw::post_kinds().iter().map(|k| k.kind) {
                let mut probe = scripted(n);
                let refusal = probe.post(Some(side), kind, serde_json::json!({})).err();
                // Refused for the kind or the side, not for what the body says.
                let by_turn = refusal.as_ref().is_some_and(|r| ["kind", "side"].contains(&r.field.as_str()));
                assert_eq!(
                    !by_turn,
                    allowed.contains(&kind),
                    "after post {n}, the {side} posting `{kind}`: may_post says {allowed:?}, the rules say {refusal:?}"
                );
            }
        }
    }
}

#[test]
fn every_rule_of_the_game_state_is_a_rule_the_game_has() {
    // A rule named in STATE_RULES that no refusal uses would answer nothing 409.
    let sources = [
        include_str!("../../src/short_acw/orders.rs"),
        include_str!("../../src/short_acw/deployment.rs"),
        include_str!("../../src/short_acw/turn.rs"),
        include_str!("../../src/short_acw/movement.rs"),
        include_str!("../../src/short_acw/reinforcement.rs"),
        include_str!("../../src/short_acw/battle.rs"),
        include_str!("../../src/short_acw/casualties.rs"),
        include_str!("../../src/short_acw/retreat.rs"),
        include_str!("../../src/short_acw/deadline.rs"),
    ]
    .concat();
    for rule in adjutant_rules::refusal::STATE_RULES {
        assert!(sources.contains(&format!("\"{rule}\"")), "{rule} is no rule of the game");
    }
    // Not your turn, wrong phase, a unit that already moved: the game now. A hex off the map: never.
    let mut g = scripted(2);
    let out_of_turn = g.post(R, "end_turn", empty()).unwrap_err();
    assert!(out_of_turn.depends_on_the_game_now(), "{out_of_turn}");
    let off_map = g.post(U, "move", json!({"unit": "us-14th-inf", "path": ["9999"]})).unwrap_err();
    assert!(!off_map.depends_on_the_game_now(), "{off_map}");
}
