//! Seed 003's tables cell by cell, every modifier at its bounds, the NOTE's worked examples,
//! every action's example, and a refusal for every kind of bad input.

use serde_json::{json, Value};

use super::combat::{battle_time_hundredths, density_hundredths, fortification_hundredths, melee_differential_of};
use super::fatigue::casualty_fatigue;
use super::tables::*;
use super::{seed_decimal, OpsTables, Weapon};
use crate::resolver::testing::{refused, refused_under};
use crate::resolver::{self, Resolution, Ruleset};
use crate::{DiceStream, Refusal};

const SEED_TABLES: &str = include_str!("seed_tables.txt");

/// The rows of one section of `seed_tables.txt`, each split at its tabs, header rows dropped.
fn seed_section(name: &str, header_rows: usize) -> Vec<Vec<&'static str>> {
    let marker = format!("== {name}\n");
    let start = SEED_TABLES.find(&marker).expect("section exists") + marker.len();
    SEED_TABLES[start..]
        .lines()
        .take_while(|line| !line.starts_with("== "))
        .skip(header_rows)
        .filter(|line| !line.is_empty())
        .map(|line| line.split('\t').collect())
        .collect()
}

fn seed_header(name: &str) -> Vec<&'static str> {
    let marker = format!("== {name}\n");
    let start = SEED_TABLES.find(&marker).expect("section exists") + marker.len();
    SEED_TABLES[start..].lines().next().expect("header").split('\t').collect()
}

fn run(action: &str, inputs: Value, text: &str) -> Result<Resolution, Refusal> {
    resolver::resolve(&OpsTables, action, &inputs, DiceStream::from_text(text.to_owned()))
}

/// Under rules version 1: melee strength without the Density and Random Modifiers, so the
/// Melee Combat Results Table's rows can be reached exactly.
fn run_v1(action: &str, inputs: Value, text: &str) -> Result<Resolution, Refusal> {
    resolver::resolve_under(&OpsTables, 1, action, &inputs, DiceStream::from_text(text.to_owned()))
}

fn ok_v1(action: &str, inputs: Value) -> Resolution {
    run_v1(action, inputs, "ops-tables/test").expect("resolves")
}

fn ok(action: &str, inputs: Value) -> Resolution {
    run(action, inputs, "ops-tables/test").expect("resolves")
}

/// A stream text whose first dice (of `faces`) satisfy `wanted`.
fn stream_where(faces: &[u32], wanted: impl Fn(&[u32]) -> bool) -> String {
    (0..200_000)
        .map(|n| format!("ops-tables/search/{n}"))
        .find(|text| {
            let mut dice = DiceStream::from_text(text.clone());
            let values: Vec<u32> = faces.iter().map(|&f| dice.roll(f, "search")).collect();
            wanted(&values)
        })
        .expect("some stream gives these dice")
}

fn points(resolution: &Resolution) -> u64 {
    resolution.result["operation_points"].as_u64().expect("operation points")
}

// ---------------------------------------------------------------------------------------------
// The tables, cell by cell

#[test]
fn operation_costs_table_matches_the_seed_cell_by_cell() {
    let header = seed_header("OPERATION COSTS");
    assert_eq!(header[1..], UNIT_COLUMNS);
    let rows = seed_section("OPERATION COSTS", 1);
    assert_eq!(rows.len(), OPERATION_COSTS.len());
    for (seed_row, (name, cells)) in rows.iter().zip(OPERATION_COSTS) {
        assert_eq!(seed_row[0], name);
        let ours: Vec<String> = cells.iter().map(ToString::to_string).collect();
        assert_eq!(seed_row[1..], ours, "row {name}");
    }
    // The row enum indexes the table in the seed's order.
    for (row, name) in [
        (CostRow::Clear, "Clear"),
        (CostRow::Town, "Town"),
        (CostRow::Woods, "Woods"),
        (CostRow::Cornfield, "Cornfield"),
        (CostRow::River, "River"),
        (CostRow::Stream, "Stream"),
        (CostRow::Ford, "Ford"),
        (CostRow::Bridge, "Bridge (1)"),
        (CostRow::RoadBonus, "Road bonus (2)"),
        (CostRow::EnterHigherElevation, "Enter higher elevation (3)"),
        (CostRow::EnterOrLeaveEnemyZoc, "Enter or leave enemy ZOC"),
        (CostRow::MoveZocToZoc, "Move ZOC to ZOC"),
        (CostRow::ChangeMode, "Change mode (5)"),
        (CostRow::UnlimberInZoc, "Unlimber in ZOC"),
        (CostRow::Fortify, "Fortify"),
        (CostRow::FirePhase, "Fire phase"),
        (CostRow::MeleeAttack, "Melee: Att. (4)"),
        (CostRow::MeleeDefence, "Melee: Def."),
    ] {
        assert_eq!(OPERATION_COSTS[row as usize].0, name);
    }
    assert_eq!(CAVALRY_ARTILLERY_MODE_CHANGE, 2);
    assert_eq!(ROAD_BONUS_HIGHER_ELEVATION, 1);
}

#[test]
fn eligibility_table_matches_the_seed_cell_by_cell() {
    let rows = seed_section("ELIGIBILITY", 1);
    assert_eq!(rows.len(), ELIGIBILITY.len());
    for (seed_row, (range, cell)) in rows.iter().zip(ELIGIBILITY) {
        assert_eq!(seed_row[0], range.to_string());
        assert_eq!(seed_row[1], cell.to_string());
    }
    assert_eq!(FLAT_ELIGIBILITY_PERCENT, 50);
}

#[test]
fn resupply_table_matches_the_seed_cell_by_cell() {
    assert_eq!(seed_header("RESUPPLY")[1..], RESUPPLY_COLUMNS);
    let rows = seed_section("RESUPPLY", 1);
    assert_eq!(rows.len(), RESUPPLY.len());
    for (seed_row, (arm, cells)) in rows.iter().zip(RESUPPLY) {
        assert_eq!(seed_row[0], arm);
        let ours: Vec<String> = cells.iter().map(ToString::to_string).collect();
        assert_eq!(seed_row[1..], ours, "row {arm}");
    }
}

#[test]
fn melee_combat_results_table_matches_the_seed_cell_by_cell() {
    let rows = seed_section("MELEE CRT", 1);
    assert_eq!(rows.len(), MELEE_CRT.len());
    for (seed_row, row) in rows.iter().zip(MELEE_CRT) {
        let ours = [
            row.differential.to_owned(),
            row.attacker_losses_text(),
            row.defender_losses_text(),
            format!("{}%", row.attacker_retreat_percent),
            format!("{}%", row.defender_retreat_percent),
        ];
        assert_eq!(seed_row[..], ours, "row {}", row.differential);
    }
    assert_eq!(MELEE_DIFFERENTIAL_DIVISOR, 50);
    assert_eq!(MELEE_LOSS_DIE, 25);
}

#[test]
fn melee_rows_cover_every_differential_exactly_once() {
    for differential in -1000..=1000 {
        let holding = MELEE_CRT.iter().filter(|r| r.holds(differential)).count();
        assert_eq!(holding, 1, "differential {differential}");
    }
    for (differential, row) in [
        (i64::MIN, "-7 or less"),
        (-7, "-7 or less"),
        (-6, "-5 to -6"),
        (-5, "-5 to -6"),
        (-4, "-4 to 4"),
        (4, "-4 to 4"),
        (5, "5 to 12"),
        (12, "5 to 12"),
        (13, "13 and more"),
        (i64::MAX, "13 and more"),
    ] {
        assert_eq!(melee_row_for(differential).differential, row);
    }
}

#[test]
fn weapon_range_table_matches_the_seed_cell_by_cell() {
    let header = &seed_section("WEAPONS", 1)[0];
    assert_eq!(header[2..8], RANGE_COLUMNS[..6]);
    assert_eq!(header[8], "", "the seventh range heading is blank in the seed");
    let rows = seed_section("WEAPONS", 2);
    assert_eq!(rows.len(), WEAPONS.len());
    for (seed_row, weapon) in rows.iter().zip(WEAPONS) {
        assert_eq!(seed_row[0], weapon.weapon_type);
        assert_eq!(seed_row[1], weapon.abbreviation);
        let ours: Vec<String> = weapon.casualties.iter().map(ToString::to_string).collect();
        assert_eq!(seed_row[2..], ours, "row {}", weapon.abbreviation);
    }
    // The first ten rows are small arms, the last seven guns (the seed's blank line).
    for (index, weapon) in WEAPONS.iter().enumerate() {
        let class = if index < 10 { WeaponClass::SmallArms } else { WeaponClass::Artillery };
        assert_eq!(weapon.class, class, "{}", weapon.abbreviation);
    }
}

#[test]
fn weapon_names_in_the_api_are_the_seed_abbreviations() {
    for (weapon, row) in Weapon::ALL.iter().zip(WEAPONS) {
        let parsed: Weapon = serde_json::from_value(json!(row.abbreviation)).unwrap();
        assert_eq!(parsed, *weapon);
        assert_eq!(weapon.row().abbreviation, row.abbreviation);
    }
}

#[test]
fn range_columns_split_where_the_seed_does() {
    let expected = [
        (1, "1"),
        (2, "2"),
        (3, "3"),
        (4, "4-6"),
        (6, "4-6"),
        (7, "7-10"),
        (10, "7-10"),
        (11, "11-15"),
        (15, "11-15"),
        (16, "beyond 15"),
        (1000, "beyond 15"),
    ];
    for (squares, column) in expected {
        assert_eq!(RANGE_COLUMNS[range_column(squares)], column, "{squares}");
    }
}

#[test]
fn fatigue_gain_table_matches_the_seed_cell_by_cell() {
    let rows = seed_section("FATIGUE GAIN", 1);
    assert_eq!(rows.len(), FATIGUE_GAIN.len());
    for (seed_row, (action, gain)) in rows.iter().zip(FATIGUE_GAIN) {
        assert_eq!(seed_row[..], [action.to_owned(), gain.to_string()]);
    }
    assert_eq!(CASUALTIES_PER_FATIGUE, 2);
}

#[test]
fn terrain_modifiers_match_the_seed_cell_by_cell() {
    let rows = seed_section("TERRAIN MODIFIERS", 1);
    assert_eq!(rows.len(), TERRAIN_MODIFIERS.len());
    for (seed_row, (terrain, fire, melee)) in rows.iter().zip(TERRAIN_MODIFIERS) {
        let melee = if terrain == "Bridge/Ford" { format!("{}*", seed_decimal(melee)) } else { seed_decimal(melee) };
        assert_eq!(seed_row[..], [terrain.to_owned(), seed_decimal(fire), melee]);
    }
    for (index, name) in [
        (TERRAIN_CLEAR, "Clear"),
        (TERRAIN_CORNFIELD, "Cornfield"),
        (TERRAIN_WOODS, "Woods"),
        (TERRAIN_HIGHER_ELEVATION, "Higher Elev."),
        (TERRAIN_TOWN, "Town"),
        (TERRAIN_BRIDGE_FORD, "Bridge/Ford"),
    ] {
        assert_eq!(TERRAIN_MODIFIERS[index].0, name);
    }
}

#[test]
fn mode_modifiers_match_the_seed_cell_by_cell() {
    let rows = seed_section("MODE MODIFIERS", 1);
    assert_eq!(rows.len(), MODE_MODIFIERS.len());
    for (seed_row, (mode, unit_type, fire, melee)) in rows.iter().zip(MODE_MODIFIERS) {
        assert_eq!(seed_row[..], [mode.to_owned(), unit_type.to_owned(), seed_decimal(fire), seed_decimal(melee)]);
    }
}

#[test]
fn other_modifiers_are_the_seeds_numbers() {
    assert_eq!(FLANK_MODIFIER_TO_ATTACKER, 150);
    assert_eq!(FLANK_MODIFIER_TO_DEFENDER, 50);
    assert_eq!((DENSITY_BASE_MEN, DENSITY_MEN_PER_PERCENT, DENSITY_CAP_PERCENT), (650, 12, 25));
    assert_eq!((BATTLE_TIME_DIVISOR, BATTLE_TIME_FLOOR_OP), (10, 5));
    assert_eq!(FORTIFICATION_PER_LEVEL, 10);
    assert_eq!(SMALL_ARMS_MEN_PER_ROW, 100);
    // ±50%: the d101's faces 1 and 101 are .50 and 1.50.
    assert_eq!(RANDOM_MODIFIER_OFFSET + 1, 50);
    assert_eq!(RANDOM_MODIFIER_OFFSET + RANDOM_MODIFIER_DIE, 150);
}

// ---------------------------------------------------------------------------------------------
// operation_cost

const UNITS: [(&str, usize); 5] = [
    ("infantry", 0),
    ("dismounted_cavalry", 0),
    ("cavalry", 1),
    ("limbered_artillery", 2),
    ("unlimbered_artillery", 3),
];

const TERRAINS: [(&str, CostRow); 8] = [
    ("clear", CostRow::Clear),
    ("town", CostRow::Town),
    ("woods", CostRow::Woods),
    ("cornfield", CostRow::Cornfield),
    ("river", CostRow::River),
    ("stream", CostRow::Stream),
    ("ford", CostRow::Ford),
    ("bridge", CostRow::Bridge),
];

#[test]
fn entering_each_terrain_costs_its_cell_orthogonally_and_diagonally() {
    for (unit, column) in UNITS {
        for (terrain, row) in TERRAINS {
            let cell = OPERATION_COSTS[row as usize].1[column];
            for diagonal in [false, true] {
                let inputs =
                    json!({ "operation": "enter_square", "unit": unit, "terrain": terrain, "diagonal": diagonal });
                match cell {
                    Cost::Move(orthogonal, diagonal_cost) => {
                        let r = ok("operation_cost", inputs);
                        let want = if diagonal { diagonal_cost } else { orthogonal };
                        assert_eq!(points(&r), u64::from(want), "{unit} {terrain} {diagonal}");
                        assert_eq!(r.lookups[0].value, cell.to_string());
                        assert!(r.dice.is_empty());
                    }
                    Cost::Prohibited => {
                        let refusal = refused(&OpsTables, "operation_cost", inputs);
                        assert_eq!(refusal.rule, "operation_costs.prohibited");
                        let field =
                            if unit == "unlimbered_artillery" { "body.inputs.unit" } else { "body.inputs.terrain" };
                        assert_eq!(refusal.field, field, "{unit} {terrain}");
                    }
                    other => panic!("terrain cell {other}"),
                }
            }
        }
    }
}

#[test]
fn woods_diagonal_into_an_enemy_zoc_adds_the_surcharge() {
    let r = ok(
        "operation_cost",
        json!({ "operation": "enter_square", "unit": "infantry", "terrain": "woods", "diagonal": true, "zoc": "enter_or_leave" }),
    );
    assert_eq!(points(&r), 7 + 2);
    assert_eq!(
        r.headline,
        "Infantry entering woods diagonally, entering or leaving an enemy ZOC: 9 operation points (7 + 2)"
    );
}

#[test]
fn higher_elevation_and_zoc_surcharges_by_unit() {
    // (unit, elevation, enter/leave ZOC, ZOC to ZOC) from the seed's rows.
    for (unit, elevation, zoc, zoc_to_zoc) in [
        ("infantry", 2, 2, Some(8)),
        ("dismounted_cavalry", 2, 2, Some(8)),
        ("cavalry", 1, 1, Some(5)),
        ("limbered_artillery", 3, 3, None),
    ] {
        let base = |extra: Value| {
            let mut inputs = json!({ "operation": "enter_square", "unit": unit, "terrain": "clear" });
            for (k, v) in extra.as_object().unwrap() {
                inputs[k] = v.clone();
            }
            inputs
        };
        let clear = points(&ok("operation_cost", base(json!({}))));
        assert_eq!(points(&ok("operation_cost", base(json!({ "higher_elevation": true })))), clear + elevation);
        assert_eq!(points(&ok("operation_cost", base(json!({ "zoc": "enter_or_leave" })))), clear + zoc);
        assert_eq!(
            points(&ok("operation_cost", base(json!({ "higher_elevation": true, "zoc": "enter_or_leave" })))),
            clear + elevation + zoc
        );
        match zoc_to_zoc {
            Some(surcharge) => {
                assert_eq!(points(&ok("operation_cost", base(json!({ "zoc": "zoc_to_zoc" })))), clear + surcharge)
            }
            None => {
                let refusal = refused(&OpsTables, "operation_cost", base(json!({ "zoc": "zoc_to_zoc" })));
                assert_eq!(refusal.field, "body.inputs.zoc");
                assert_eq!(refusal.rule, "operation_costs.prohibited");
            }
        }
    }
}

#[test]
fn the_road_bonus_costs_1_whatever_the_terrain_even_uphill() {
    for (unit, column_mode) in
        [("infantry", Some(true)), ("dismounted_cavalry", None), ("cavalry", None), ("limbered_artillery", None)]
    {
        for terrain in ["clear", "town", "woods", "cornfield", "ford", "bridge"] {
            let mut inputs =
                json!({ "operation": "enter_square", "unit": unit, "terrain": terrain, "road_bonus": true });
            if let Some(column) = column_mode {
                inputs["column_mode"] = json!(column);
            }
            assert_eq!(points(&ok("operation_cost", inputs.clone())), 1, "{unit} {terrain}");
            inputs["higher_elevation"] = json!(true);
            assert_eq!(points(&ok("operation_cost", inputs.clone())), 1, "{unit} {terrain} uphill");
            // The ZOC surcharge is still paid on a road.
            inputs["zoc"] = json!("enter_or_leave");
            let zoc = OPERATION_COSTS[CostRow::EnterOrLeaveEnemyZoc as usize].1
                [UNITS.iter().find(|u| u.0 == unit).unwrap().1];
            let Cost::Plus(zoc) = zoc else { panic!() };
            assert_eq!(points(&ok("operation_cost", inputs)), 1 + u64::from(zoc));
        }
    }
}

#[test]
fn the_road_bonus_refuses_diagonals_infantry_out_of_column_and_rivers() {
    let refusal = refused(
        &OpsTables,
        "operation_cost",
        json!({ "operation": "enter_square", "unit": "cavalry", "terrain": "clear", "road_bonus": true, "diagonal": true }),
    );
    assert_eq!(refusal.field, "body.inputs.diagonal");
    assert_eq!(refusal.rule, "operation_costs.road_bonus_diagonal");
    for column_mode in [json!(false), Value::Null] {
        let mut inputs =
            json!({ "operation": "enter_square", "unit": "infantry", "terrain": "clear", "road_bonus": true });
        if !column_mode.is_null() {
            inputs["column_mode"] = column_mode;
        }
        let refusal = refused(&OpsTables, "operation_cost", inputs);
        assert_eq!(refusal.field, "body.inputs.column_mode");
        assert_eq!(refusal.rule, "operation_costs.road_bonus_column");
    }
    let refusal = refused(
        &OpsTables,
        "operation_cost",
        json!({ "operation": "enter_square", "unit": "cavalry", "terrain": "river", "road_bonus": true }),
    );
    assert_eq!(refusal.field, "body.inputs.terrain");
}

#[test]
fn action_rows_cost_their_cells_and_p_or_na_is_refused() {
    for (operation, row) in [
        ("change_mode", CostRow::ChangeMode),
        ("unlimber_in_zoc", CostRow::UnlimberInZoc),
        ("fortify", CostRow::Fortify),
        ("fire", CostRow::FirePhase),
        ("melee_attack", CostRow::MeleeAttack),
        ("melee_defence", CostRow::MeleeDefence),
    ] {
        for (unit, column) in UNITS {
            let inputs = json!({ "operation": operation, "unit": unit });
            match OPERATION_COSTS[row as usize].1[column] {
                Cost::Flat(want) => {
                    let r = ok("operation_cost", inputs);
                    assert_eq!(points(&r), u64::from(want), "{operation} {unit}");
                }
                Cost::Prohibited => {
                    let refusal = refused(&OpsTables, "operation_cost", inputs);
                    assert_eq!(refusal.field, "body.inputs.unit");
                    assert_eq!(refusal.rule, "operation_costs.prohibited", "{operation} {unit}");
                }
                Cost::NotApplicable => {
                    let refusal = refused(&OpsTables, "operation_cost", inputs);
                    assert_eq!(refusal.field, "body.inputs.unit");
                    assert_eq!(refusal.rule, "operation_costs.not_applicable");
                }
                other => panic!("action cell {other}"),
            }
        }
    }
    // Spot checks against the printed table.
    let cost = |op: &str, unit: &str| points(&ok("operation_cost", json!({ "operation": op, "unit": unit })));
    assert_eq!(cost("fortify", "infantry"), 12);
    assert_eq!(cost("unlimber_in_zoc", "limbered_artillery"), 8);
    assert_eq!(cost("fire", "unlimbered_artillery"), 4);
    assert_eq!(cost("melee_defence", "limbered_artillery"), 2);
}

#[test]
fn cavalry_artillery_changes_mode_for_2() {
    for unit in ["limbered_artillery", "unlimbered_artillery"] {
        let plain = ok("operation_cost", json!({ "operation": "change_mode", "unit": unit }));
        assert_eq!(points(&plain), 4);
        let horse =
            ok("operation_cost", json!({ "operation": "change_mode", "unit": unit, "cavalry_artillery": true }));
        assert_eq!(points(&horse), 2);
        assert_eq!(horse.headline, "Cavalry artillery changes mode: 2 operation points");
    }
    // Only the mode change is cheaper: cavalry artillery still fires for 4.
    let fire =
        ok("operation_cost", json!({ "operation": "fire", "unit": "unlimbered_artillery", "cavalry_artillery": true }));
    assert_eq!(points(&fire), 4);
    let refusal = refused(
        &OpsTables,
        "operation_cost",
        json!({ "operation": "change_mode", "unit": "cavalry", "cavalry_artillery": true }),
    );
    assert_eq!(refusal.field, "body.inputs.cavalry_artillery");
}

#[test]
fn operation_cost_refuses_move_fields_on_actions_and_a_move_without_terrain() {
    let refusal =
        refused(&OpsTables, "operation_cost", json!({ "operation": "fire", "unit": "infantry", "diagonal": false }));
    assert_eq!(refusal.field, "body.inputs.diagonal");
    assert_eq!(refusal.rule, "operation_costs.move_only");
    let refusal = refused(&OpsTables, "operation_cost", json!({ "operation": "enter_square", "unit": "infantry" }));
    assert_eq!(refusal.field, "body.inputs.terrain");
}

#[test]
fn every_operation_cost_combination_resolves_or_refuses_by_a_table_rule() {
    let mut cases = Vec::new();
    for (unit, _) in UNITS {
        for cavalry_artillery in [false, true] {
            for operation in ["change_mode", "unlimber_in_zoc", "fortify", "fire", "melee_attack", "melee_defence"] {
                cases.push(json!({ "operation": operation, "unit": unit, "cavalry_artillery": cavalry_artillery }));
            }
            for (terrain, _) in TERRAINS {
                for flags in 0..16u32 {
                    for zoc in ["none", "enter_or_leave", "zoc_to_zoc"] {
                        cases.push(json!({
                            "operation": "enter_square",
                            "unit": unit,
                            "cavalry_artillery": cavalry_artillery,
                            "terrain": terrain,
                            "diagonal": flags & 1 != 0,
                            "road_bonus": flags & 2 != 0,
                            "column_mode": flags & 4 != 0,
                            "higher_elevation": flags & 8 != 0,
                            "zoc": zoc,
                        }));
                    }
                }
            }
        }
    }
    for inputs in cases {
        match run("operation_cost", inputs.clone(), "x") {
            Ok(r) => {
                let total = points(&r);
                assert!(total >= 1, "{inputs}");
                if let Some(parts) = r.result["parts"].as_array() {
                    let sum: u64 = parts.iter().map(|p| p["operation_points"].as_u64().unwrap()).sum();
                    assert_eq!(sum, total, "{inputs}");
                }
            }
            Err(refusal) => {
                assert!(refusal.rule.starts_with("operation_costs."), "{inputs}: {refusal}");
                assert!(refusal.field.starts_with("body.inputs."), "{inputs}: {refusal}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// ammo_resupply

fn resupplied(r: &Resolution) -> bool {
    r.result["resupplied"].as_bool().expect("resupplied")
}

#[test]
fn range_0_and_1_resupply_without_dice_and_7_or_more_never() {
    for range in [0, 1] {
        let r = ok("ammo_resupply", json!({ "side": "union", "arm": "infantry", "range_to_division_leader": range }));
        assert!(resupplied(&r));
        assert!(r.dice.is_empty(), "Resupply Table is skipped");
        assert_eq!(r.lookups.len(), 1);
        assert_eq!(r.lookups[0].value, "Auto - Resupply*");
    }
    for range in [7, 8, 40] {
        let r =
            ok("ammo_resupply", json!({ "side": "confederate", "arm": "infantry", "range_to_division_leader": range }));
        assert!(!resupplied(&r));
        assert!(r.dice.is_empty());
        assert_eq!(r.lookups[0].value, "Auto - No Resupply");
    }
}

#[test]
fn each_eligibility_percentage_is_a_d100_at_or_under() {
    for (range, percent) in [(2, 90), (3, 70), (4, 50), (5, 30), (6, 10)] {
        for (roll, eligible) in [(percent, true), (percent + 1, false)] {
            let text = stream_where(&[100], |d| d[0] == roll);
            let r = run(
                "ammo_resupply",
                json!({ "side": "union", "arm": "infantry", "range_to_division_leader": range }),
                &text,
            )
            .unwrap();
            assert_eq!(r.dice[0].value, roll);
            assert_eq!(r.dice[0].faces, 100);
            assert_eq!(r.result["eligibility"]["eligible"], json!(eligible), "range {range} roll {roll}");
            assert_eq!(r.lookups[0].value, format!("{percent}%"));
            if eligible {
                assert_eq!(r.dice.len(), 2, "eligible units go to the Resupply Table");
            } else {
                assert_eq!(r.dice.len(), 1);
                assert!(!resupplied(&r));
            }
        }
    }
}

#[test]
fn the_resupply_table_by_side_arm_and_mid_turn() {
    // (side, arm, end of turn %, mid turn %) as the seed prints them; range 0 skips the
    // Resupply Table, so eligibility is reached through range 2 with an eligibility roll of 1.
    for (side, arm, full, mid) in [
        ("union", "artillery", 70, 35),
        ("union", "infantry", 90, 45),
        ("union", "cavalry", 90, 45),
        ("confederate", "artillery", 50, 25),
        ("confederate", "infantry", 70, 35),
        ("confederate", "cavalry", 70, 35),
        ("union", "cavalry_artillery", 70, 35),
        ("confederate", "cavalry_artillery", 50, 25),
    ] {
        for (mid_turn, percent) in [(false, full), (true, mid)] {
            for (roll, wanted) in [(percent, true), (percent + 1, false)] {
                let text = stream_where(&[100, 100], |d| d[0] == 1 && d[1] == roll);
                let r = run(
                    "ammo_resupply",
                    json!({ "side": side, "arm": arm, "range_to_division_leader": 2, "mid_turn": mid_turn }),
                    &text,
                )
                .unwrap();
                assert_eq!(r.dice.len(), 2);
                assert_eq!(r.result["resupply"]["percent"], json!(percent), "{side} {arm} {mid_turn}");
                assert_eq!(resupplied(&r), wanted, "{side} {arm} {mid_turn} roll {roll}");
            }
        }
    }
}

#[test]
fn cavalry_cavalry_artillery_confederate_artillery_and_evans_have_a_flat_50_percent() {
    for (side, arm, evans) in [
        ("union", "cavalry", false),
        ("confederate", "cavalry", false),
        ("union", "cavalry_artillery", false),
        ("confederate", "cavalry_artillery", false),
        ("confederate", "artillery", false),
        ("confederate", "infantry", true),
    ] {
        // No range needed, and range 0 (which would be automatic) does not change it.
        for range in [None, Some(0), Some(7)] {
            let mut inputs = json!({ "side": side, "arm": arm, "evans_brigade": evans });
            if let Some(range) = range {
                inputs["range_to_division_leader"] = json!(range);
            }
            for (roll, eligible) in [(50, true), (51, false)] {
                let text = stream_where(&[100], |d| d[0] == roll);
                let r = run("ammo_resupply", inputs.clone(), &text).unwrap();
                assert_eq!(r.lookups[0].value, "50%", "{side} {arm}");
                assert_eq!(r.result["eligibility"]["eligible"], json!(eligible));
                assert_eq!(r.result["range_to_division_leader_used"], json!(false));
            }
        }
    }
    // Union artillery is not on the list: it uses its range.
    let r = ok("ammo_resupply", json!({ "side": "union", "arm": "artillery", "range_to_division_leader": 0 }));
    assert!(resupplied(&r));
    assert!(r.dice.is_empty());
}

#[test]
fn ammo_resupply_refusals_name_the_field() {
    let refusal = refused(&OpsTables, "ammo_resupply", json!({ "side": "union", "arm": "infantry" }));
    assert_eq!(refusal.field, "body.inputs.range_to_division_leader");
    let refusal = refused(
        &OpsTables,
        "ammo_resupply",
        json!({ "side": "union", "arm": "infantry", "evans_brigade": true, "range_to_division_leader": 2 }),
    );
    assert_eq!(refusal.field, "body.inputs.evans_brigade");
    let refusal = refused(
        &OpsTables,
        "ammo_resupply",
        json!({ "side": "union", "arm": "infantry", "range_to_division_leader": -1 }),
    );
    assert_eq!(refusal.field, "body.inputs.range_to_division_leader");
    let refusal = refused(
        &OpsTables,
        "ammo_resupply",
        json!({ "side": "prussia", "arm": "infantry", "range_to_division_leader": 1 }),
    );
    assert_eq!(refusal.field, "body.inputs.side");
}

// ---------------------------------------------------------------------------------------------
// melee

#[test]
fn the_differential_is_divided_by_50_and_truncated_toward_zero() {
    let whole = |a: u128, d: u128| melee_differential_of((a, 1), (d, 1));
    for (attacker, defender, differential) in [
        (1000, 1000, 0),
        (1250, 1000, 5),
        (1249, 1000, 4),
        (1000, 1250, -5),
        (1000, 1249, -4),
        (1000, 1225, -4), // -4.5: toward zero, so the -4 to 4 row
        (1000, 1299, -5),
        (1000, 1300, -6),
        (1000, 1349, -6),
        (1000, 1350, -7),
        (1649, 1000, 12),
        (1650, 1000, 13),
        (100, 5000, -98),
    ] {
        assert_eq!(whole(attacker, defender), differential, "{attacker} v {defender}");
    }
    // Fractions compare exactly: 712.8 v 150 is 11.256.
    assert_eq!(melee_differential_of((7128, 10), (150, 1)), 11);
}

fn melee_inputs(attacker: u32, defender: u32) -> Value {
    json!({
        "attacker": { "men": attacker, "mode": "normal" },
        "defender": { "men": defender, "mode": "normal" },
        "defender_terrain": "clear"
    })
}

#[test]
fn a_5_differential_costs_the_defender_50_more_and_it_always_retreats() {
    let r = ok_v1("melee", melee_inputs(1250, 1000));
    assert_eq!(r.result["differential"], json!(5));
    assert_eq!(r.result["row"], json!("5 to 12"));
    let purposes: Vec<&str> = r.dice.iter().map(|d| d.purpose.as_str()).collect();
    assert_eq!(
        purposes,
        [
            "attacker's losses, random of 25 (d25)",
            "defender's losses, random of 25 (d25)",
            "defender's retreat, 100% (d100)"
        ],
        "the attacker is not checked once the defender retreats"
    );
    assert_eq!(r.dice[0].faces, 25);
    assert_eq!(r.result["attacker_losses"], json!(r.dice[0].value));
    assert_eq!(r.result["defender_losses"], json!(r.dice[1].value + 50));
    assert_eq!(r.result["defender_retreats"], json!(true));
    assert_eq!(r.result["attacker_retreats"], json!(false));
}

#[test]
fn thirteen_and_more_costs_the_defender_100_more() {
    let r = ok_v1("melee", melee_inputs(1650, 1000));
    assert_eq!(r.result["row"], json!("13 and more"));
    assert_eq!(r.result["defender_losses"], json!(r.dice[1].value + 100));
    assert_eq!(r.result["attacker_losses"], json!(r.dice[0].value));
}

#[test]
fn minus_5_and_minus_7_cost_the_attacker_50_and_150_more_capped_at_its_men() {
    let r = ok_v1("melee", melee_inputs(1000, 1250));
    assert_eq!(r.result["row"], json!("-5 to -6"));
    assert_eq!(r.result["attacker_losses"], json!(r.dice[0].value + 50));
    assert_eq!(r.result["defender_losses"], json!(r.dice[1].value));

    let r = ok_v1("melee", melee_inputs(100, 500));
    assert_eq!(r.result["row"], json!("-7 or less"));
    assert_eq!(r.result["attacker_table_losses"], json!(r.dice[0].value + 150));
    assert_eq!(r.result["attacker_losses"], json!(100), "no more than the 100 men it has");
    // 0% defender retreat: the defender holds and the attacker is checked at 50%.
    assert_eq!(r.result["defender_retreats"], json!(false));
    assert_eq!(r.dice.len(), 4);
    assert_eq!(r.dice[3].purpose, "attacker's retreat, 50% (d100)");
    assert_eq!(r.result["attacker_retreats"], json!(r.dice[3].value <= 50));
}

#[test]
fn defender_checked_first_and_never_both_retreat() {
    // Row -4 to 4: 40% defender, 20% attacker.
    let text = stream_where(&[25, 25, 100], |d| d[2] == 40);
    let r = run_v1("melee", melee_inputs(1000, 1000), &text).unwrap();
    assert_eq!(r.result["defender_retreats"], json!(true));
    assert_eq!(r.dice.len(), 3, "no attacker check once the defender retreats");
    assert_eq!(r.result["attacker_retreat"], Value::Null);

    for (roll, retreats) in [(20, true), (21, false)] {
        let text = stream_where(&[25, 25, 100, 100], |d| d[2] == 41 && d[3] == roll);
        let r = run_v1("melee", melee_inputs(1000, 1000), &text).unwrap();
        assert_eq!(r.result["defender_retreats"], json!(false));
        assert_eq!(r.dice.len(), 4);
        assert_eq!(r.result["attacker_retreats"], json!(retreats), "roll {roll}");
    }
}

#[test]
fn routed_units_may_retreat_together() {
    let text = stream_where(&[25, 25, 100, 100], |d| d[2] <= 40 && d[3] <= 20);
    for (attacker_mode, defender_mode) in [("routed", "normal"), ("normal", "routed")] {
        // Routed (melee .50) on either side; strengths chosen to stay in the -4 to 4 row.
        let (attacker_men, defender_men) = if attacker_mode == "routed" { (2000, 1000) } else { (500, 1000) };
        let r = run_v1(
            "melee",
            json!({
                "attacker": { "men": attacker_men, "mode": attacker_mode },
                "defender": { "men": defender_men, "mode": defender_mode },
                "defender_terrain": "clear"
            }),
            &text,
        )
        .unwrap();
        assert_eq!(r.result["row"], json!("-4 to 4"));
        assert_eq!(r.result["defender_retreats"], json!(true));
        assert_eq!(r.result["attacker_retreats"], json!(true));
    }
}

#[test]
fn melee_strength_takes_mode_leader_terrain_elevation_bridge_and_flank() {
    let r = ok_v1(
        "melee",
        json!({
            "attacker": { "men": 400, "mode": "mounted", "leader_bonus": 1.1 },
            "defender": { "men": 400, "mode": "column" },
            "defender_terrain": "woods",
            "defender_higher_elevation": true,
            "attacker_on_bridge_or_ford": true,
            "flank": true
        }),
    );
    // 400 × 1.50 (mounted) × 1.10 × 1.00 (woods) × .90 × .80 × 1.50 (flank) = 712.8;
    // 400 × .75 (column) × .50 (flank) = 150; (712.8 − 150) / 50 = 11.256 → 11.
    assert_eq!(r.result["attacker_modified_strength"], json!(712.8));
    assert_eq!(r.result["defender_modified_strength"], json!(150.0));
    assert_eq!(r.result["differential"], json!(11));
    let values: Vec<&str> = r.lookups.iter().map(|l| l.value.as_str()).collect();
    assert_eq!(values[..7], ["1.50", "1.10", "1.00", ".90", ".80*", "1.50", ".75"]);
    assert_eq!(r.lookups[7].row, "Flank Modifier to Defender");
}

#[test]
fn a_defender_on_a_bridge_or_ford_gains_nothing_in_melee() {
    let mut inputs = melee_inputs(500, 500);
    inputs["defender_terrain"] = json!("bridge_ford");
    let r = ok_v1("melee", inputs.clone());
    assert_eq!(r.result["attacker_modified_strength"], json!(500.0));
    inputs["attacker_on_bridge_or_ford"] = json!(true);
    let r = ok_v1("melee", inputs);
    assert_eq!(r.result["attacker_modified_strength"], json!(400.0));
    assert_eq!(r.result["differential"], json!(-2));
}

#[test]
fn melee_refusals_name_the_field() {
    let mut inputs = melee_inputs(500, 500);
    inputs["attacker"]["mode"] = json!("unlimbered");
    let refusal = refused(&OpsTables, "melee", inputs);
    assert_eq!(refusal.field, "body.inputs.attacker.mode");
    assert_eq!(refusal.rule, "melee.artillery_attack");

    let refusal = refused(&OpsTables, "melee", melee_inputs(0, 500));
    assert_eq!(refusal.field, "body.inputs.attacker.men");

    for bonus in [json!(3.0), json!(0.49), json!(1.005)] {
        let mut inputs = melee_inputs(500, 500);
        inputs["defender"]["leader_bonus"] = bonus;
        let refusal = refused(&OpsTables, "melee", inputs);
        assert_eq!(refusal.field, "body.inputs.defender.leader_bonus");
        assert_eq!(refusal.rule, "modifiers.leader_bonus");
    }
    let mut inputs = melee_inputs(500, 500);
    inputs["defender"]["morale"] = json!(3);
    let refusal = refused(&OpsTables, "melee", inputs);
    assert!(refusal.field.starts_with("body.inputs.defender"), "{}", refusal.field);
    assert!(refusal.detail.contains("morale"));
}

// ---------------------------------------------------------------------------------------------
// fire

#[test]
fn density_is_1_percent_per_12_men_from_650_capped_at_25() {
    for (men, hundredths) in [
        (650, 100),
        (661, 100),
        (662, 101),
        (639, 100),
        (638, 99),
        (800, 112),
        (938, 124),
        (949, 124),
        (950, 125),
        (951, 125),
        (100_000, 125),
        (351, 76),
        (350, 75),
        (349, 75),
        (1, 75),
    ] {
        assert_eq!(density_hundredths(men), hundredths, "{men} men");
    }
}

#[test]
fn battle_time_is_op_over_10_with_at_least_5_op() {
    for (op, hundredths) in [(0, 50), (4, 50), (5, 50), (6, 60), (10, 100), (15, 150), (100, 1000)] {
        assert_eq!(battle_time_hundredths(op), hundredths, "{op} OP");
    }
}

#[test]
fn fortification_takes_a_tenth_per_level() {
    for (level, hundredths) in [(0, 100), (1, 90), (5, 50), (9, 10)] {
        assert_eq!(fortification_hundredths(level), hundredths);
    }
}

/// Fire inputs where every modifier is 1.00 but the random one.
fn plain_fire(weapon: &str, range: u32, count: u32) -> Value {
    let strength = if WEAPONS.iter().any(|w| w.abbreviation == weapon && w.class == WeaponClass::Artillery) {
        ("guns", "unlimbered")
    } else {
        ("men", "normal")
    };
    json!({
        "weapon": weapon,
        "range": range,
        strength.0: count,
        "firer_mode": strength.1,
        "target_terrain": "clear",
        "men_in_target_square": 650,
        "operation_points_remaining": 10
    })
}

fn casualties(r: &Resolution) -> u64 {
    r.result["casualties"].as_u64().expect("casualties")
}

#[test]
fn every_weapon_and_range_at_neutral_modifiers_gives_the_table_per_100_men_or_per_gun() {
    let neutral = stream_where(&[101], |d| d[0] == 51);
    for weapon in WEAPONS {
        for (range, column) in [(1, 0), (2, 1), (3, 2), (5, 3), (8, 4), (12, 5), (16, 6)] {
            let r = run("fire", plain_fire(weapon.abbreviation, range, 100), &neutral).unwrap();
            assert_eq!(r.result["total_modifier"], json!(1.0));
            let per = match weapon.class {
                WeaponClass::SmallArms => 1,   // per 100 men, 100 men
                WeaponClass::Artillery => 100, // per gun, 100 guns
            };
            assert_eq!(
                casualties(&r),
                u64::from(weapon.casualties[column] * per).min(650),
                "{} range {range}",
                weapon.abbreviation
            );
            assert_eq!(r.lookups[0].column, RANGE_COLUMNS[column]);
        }
    }
    let r = run("fire", plain_fire("N12", 1, 4), &neutral).unwrap();
    assert_eq!(casualties(&r), 56, "4 Napoleons at 1 square: 14 per gun");
}

#[test]
fn the_random_modifier_runs_from_50_to_150_percent() {
    for (face, hundredths, want) in [(1, 50, 20), (51, 100, 40), (101, 150, 60)] {
        let text = stream_where(&[101], |d| d[0] == face);
        // 1000 men with rifles at 1 square: 40 before the random modifier.
        let r = run("fire", plain_fire("RFL", 1, 1000), &text).unwrap();
        assert_eq!(r.dice[0].faces, 101);
        assert_eq!(r.result["random_modifier_die"], json!(face));
        assert_eq!(r.lookups.iter().find(|l| l.row == "Random Modifier").unwrap().value, super::decimal(hundredths));
        assert_eq!(casualties(&r), want);
    }
}

#[test]
fn casualties_round_to_the_nearest_man_a_half_up() {
    let neutral = stream_where(&[101], |d| d[0] == 51);
    // A pistol kills 1 per 100 men: 50 men 0.50 → 1, 49 men 0.49 → 0, 150 men 1.50 → 2.
    for (men, want) in [(50, 1), (49, 0), (150, 2), (149, 1)] {
        let r = run("fire", plain_fire("PST", 1, men), &neutral).unwrap();
        assert_eq!(casualties(&r), want, "{men} men");
    }
}

#[test]
fn every_fire_modifier_multiplies_the_table() {
    let text = stream_where(&[101], |d| d[0] == 80);
    let r = run(
        "fire",
        json!({
            "weapon": "RFL",
            "range": 2,
            "men": 500,
            "firer_mode": "column",
            "target_terrain": "woods",
            "target_higher_elevation": true,
            "leader_bonus": 1.2,
            "flank": true,
            "men_in_target_square": 800,
            "operation_points_remaining": 3,
            "target_fortification_level": 2
        }),
        &text,
    )
    .unwrap();
    // 2 per 100 × 500 = 10; × .80 woods × .90 elev × .75 column × 1.20 leader × 1.50 flank
    // × 1.12 density × 1.29 random (0.49 + 80/100) × .50 battle time (3 OP counts as 5)
    // × .80 fortification = 5.6174… → 6.
    let numerator: u128 = 2 * 500 * 80 * 90 * 75 * 120 * 150 * 112 * 129 * 50 * 80;
    let denominator: u128 = 100 * 100u128.pow(9);
    assert_eq!(casualties(&r), ((numerator * 2 + denominator) / (denominator * 2)) as u64);
    assert_eq!(casualties(&r), 6);
    let modifiers: Vec<(&str, &str)> = r.result["modifiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["modifier"].as_str().unwrap(), m["value"].as_str().unwrap()))
        .collect();
    assert_eq!(
        modifiers,
        [
            ("terrain", "0.80"),
            ("higher elevation", "0.90"),
            ("mode", "0.75"),
            ("leader", "1.20"),
            ("flank", "1.50"),
            ("density", "1.12"),
            ("random", "1.29"),
            ("battle time", "0.50"),
            ("fortification", "0.80"),
        ]
    );
    assert_eq!(
        r.lookups.iter().find(|l| l.row == "Battle Time Modifier").unwrap().column,
        "3 OP remaining (counted as 5)"
    );
}

#[test]
fn the_density_cap_and_battle_time_floor_through_the_action() {
    let neutral = stream_where(&[101], |d| d[0] == 51);
    // 1000 rifles at 1 square: 40 at neutral modifiers.
    for (square, op, want) in
        [(950, 10, 50), (5000, 10, 50), (350, 10, 30), (1, 10, 1), (650, 5, 20), (650, 0, 20), (650, 20, 80)]
    {
        let mut inputs = plain_fire("RFL", 1, 1000);
        inputs["men_in_target_square"] = json!(square);
        inputs["operation_points_remaining"] = json!(op);
        let r = run("fire", inputs, &neutral).unwrap();
        assert_eq!(casualties(&r), want, "{square} men, {op} OP");
    }
}

#[test]
fn fire_refusals_name_the_field() {
    let cases = [
        (json!({ "guns": 4 }), "body.inputs.guns", "fire.strength"),
        (json!({ "men": 0 }), "body.inputs.men", "fire.strength"),
        (json!({ "range": 0 }), "body.inputs.range", "fire.range"),
        (json!({ "firer_mode": "unlimbered" }), "body.inputs.firer_mode", "fire.mode"),
        (json!({ "leader_bonus": 2.5 }), "body.inputs.leader_bonus", "modifiers.leader_bonus"),
        (json!({ "men_in_target_square": 0 }), "body.inputs.men_in_target_square", "fire.density"),
        (json!({ "operation_points_remaining": 101 }), "body.inputs.operation_points_remaining", "fire.battle_time"),
        (json!({ "target_fortification_level": 10 }), "body.inputs.target_fortification_level", "fire.fortification"),
        (json!({ "weapon": "AK47" }), "body.inputs.weapon", "resolver.inputs"),
        (json!({ "target_terrain": "swamp" }), "body.inputs.target_terrain", "resolver.inputs"),
        (json!({ "range": "far" }), "body.inputs.range", "resolver.inputs"),
    ];
    for (change, field, rule) in cases {
        let mut inputs = plain_fire("RFL", 1, 100);
        for (k, v) in change.as_object().unwrap() {
            inputs[k] = v.clone();
        }
        let refusal = refused(&OpsTables, "fire", inputs);
        assert_eq!((refusal.field.as_str(), refusal.rule.as_str()), (field, rule));
    }
    // Artillery counts guns, not men, and limbered guns cannot fire.
    let mut inputs = plain_fire("N12", 1, 4);
    inputs["men"] = json!(100);
    assert_eq!(refused(&OpsTables, "fire", inputs).field, "body.inputs.men");
    let mut inputs = plain_fire("N12", 1, 4);
    inputs["firer_mode"] = json!("limbered");
    let refusal = refused(&OpsTables, "fire", inputs);
    assert_eq!(refusal.field, "body.inputs.firer_mode");
    assert!(refusal.detail.contains("limbered artillery cannot fire"));
    let mut inputs = plain_fire("N12", 1, 4);
    inputs.as_object_mut().unwrap().remove("guns");
    assert_eq!(refused(&OpsTables, "fire", inputs).field, "body.inputs.guns");
}

#[test]
fn fire_never_kills_more_than_the_square_holds() {
    let text = stream_where(&[101], |d| d[0] == 101);
    let mut inputs = plain_fire("SHR", 1, 100_000);
    inputs["men_in_target_square"] = json!(10);
    let r = run("fire", inputs, &text).unwrap();
    assert_eq!(casualties(&r), 10);
    assert_eq!(r.result["capped_at_men_in_square"], json!(true));
}

// ---------------------------------------------------------------------------------------------
// fatigue_gain

#[test]
fn the_notes_worked_examples_600_men_1_per_3_and_900_men_1_per_4_and_a_half() {
    assert_eq!(casualty_fatigue(30, 600), 10);
    assert_eq!(casualty_fatigue(3, 600), 1);
    assert_eq!(casualty_fatigue(2, 600), 0);
    assert_eq!(casualty_fatigue(45, 900), 10);
    assert_eq!(casualty_fatigue(9, 900), 2);
    assert_eq!(casualty_fatigue(8, 900), 1);
    // The table's 1 per 2 for units of 400 men or fewer, 1 per 5 from 1000 men.
    assert_eq!(casualty_fatigue(10, 400), 5);
    assert_eq!(casualty_fatigue(10, 100), 5);
    assert_eq!(casualty_fatigue(3, 100), 1);
    assert_eq!(casualty_fatigue(50, 1000), 10);
    assert_eq!(casualty_fatigue(50, 3000), 10);
    assert_eq!(casualty_fatigue(50, 800), 12);
}

#[test]
fn every_fatigue_row_through_the_action() {
    for (field, count, per) in [
        ("squares_entered_normal_mode", 3, 2),
        ("squares_entered_column_mode", 3, 1),
        ("fortify_levels", 2, 20),
        ("force_march_operation_points", 4, 6),
        ("routed_passes_through_friendly", 2, 5),
    ] {
        let r = ok("fatigue_gain", json!({ field: count }));
        assert_eq!(r.result["fatigue"], json!(count * per), "{field}");
        assert_eq!(r.lookups[0].value, per.to_string());
    }
    let r = ok("fatigue_gain", json!({ "leader_died": true }));
    assert_eq!(r.result["fatigue"], json!(5));
    let r = ok("fatigue_gain", json!({ "casualties": 45, "unit_men": 900, "squares_entered_normal_mode": 3 }));
    assert_eq!(r.result["fatigue"], json!(6 + 10));
    assert_eq!(
        r.headline,
        "Fatigue gain 16: 6 for 3 squares entered in normal mode, 10 for 45 casualties (1 per 4.5 men lost)"
    );
    let r = ok("fatigue_gain", json!({}));
    assert_eq!(r.result["fatigue"], json!(0));
}

#[test]
fn fatigue_refusals_name_the_field() {
    assert_eq!(refused(&OpsTables, "fatigue_gain", json!({ "casualties": 5 })).field, "body.inputs.unit_men");
    assert_eq!(
        refused(&OpsTables, "fatigue_gain", json!({ "casualties": 500, "unit_men": 400 })).field,
        "body.inputs.casualties"
    );
    assert_eq!(refused(&OpsTables, "fatigue_gain", json!({ "leader_died": 1 })).field, "body.inputs.leader_died");
}

// ---------------------------------------------------------------------------------------------
// The ruleset as a whole

#[test]
fn every_actions_example_resolves() {
    for spec in OpsTables.actions() {
        let r = run(spec.name, spec.example.clone(), "c0ffee00-0000-4000-8000-000000000001/7/2026-11-21T09:51:45.123Z")
            .unwrap_or_else(|refusal| panic!("{}: {refusal}", spec.name));
        assert!(!r.headline.is_empty());
        assert!(!r.lookups.is_empty(), "{}", spec.name);
        assert!(spec.input_schema["properties"].is_object(), "{}", spec.name);
    }
}

#[test]
fn a_resolution_is_recomputed_exactly_from_its_stream_text() {
    for spec in OpsTables.actions() {
        let first = run(spec.name, spec.example.clone(), "audit/1/2026-11-21T09:51:45.123Z").unwrap();
        let again = run(spec.name, spec.example.clone(), &first.stream_text).unwrap();
        assert_eq!(first, again);
    }
}

#[test]
fn the_ruleset_is_registered_and_refuses_unknown_actions_and_fields() {
    let ruleset = resolver::ruleset("ops-tables").expect("registered");
    assert_eq!(ruleset.seed(), "003_532c948ba9b90adf");
    let refusal = run("charge", json!({}), "x").unwrap_err();
    assert_eq!(refusal.field, "body.action");
    let refusal = refused(&OpsTables, "operation_cost", json!({ "operation": "fire", "unit": "infantry", "speed": 3 }));
    assert_eq!(refusal.field, "body.inputs.speed");
    assert!(refusal.detail.contains("unknown field"), "{}", refusal.detail);
    let refusal = refused(&OpsTables, "operation_cost", json!({ "operation": "fly", "unit": "infantry" }));
    assert_eq!(refusal.field, "body.inputs.operation");
}

/// The worked examples of `docs/rules/ops-tables.md`: every action's example on the stream
/// `c0ffee00-0000-4000-8000-000000000001/7/2026-11-21T09:51:45.123Z`, whose first bytes are
/// c0 e4 f5 6b (192, 228, 245, 107).
#[test]
fn the_documented_worked_examples() {
    let text = "c0ffee00-0000-4000-8000-000000000001/7/2026-11-21T09:51:45.123Z";
    let block = DiceStream::block_of(text, 0);
    assert_eq!(block[..4], [0xc0, 0xe4, 0xf5, 0x6b]);
    let headlines: Vec<String> =
        OpsTables.actions().iter().map(|spec| run(spec.name, spec.example.clone(), text).unwrap().headline).collect();
    assert_eq!(
        headlines,
        [
            "Infantry entering woods diagonally, entering or leaving an enemy ZOC: 9 operation points (7 + 2)",
            "Union infantry 3 squares from its division leader: not resupplied — eligibility 70%, rolled 93",
            "Melee 600 v 400 (modified 1015.2 v 107.52), differential +18: attacker loses 13, defender loses 112; the defender retreats",
            "500 men with RFL at range 2: 10 casualties (table 2 → 10.00 × modifiers 1.0107)",
            "Fatigue gain 16: 6 for 3 squares entered in normal mode, 10 for 45 casualties (1 per 4.5 men lost)",
        ]
    );
    // The melee: the attacker's random modifier d101 takes 192 → 92 (1.41); the defender's
    // skips 228 and 245 (a d101 takes bytes below 202 only) and takes 107 → 7 (.56).
    let melee = run("melee", OpsTables.actions()[2].example.clone(), text).unwrap();
    assert_eq!((melee.dice[0].byte, melee.dice[0].value), (192, 92));
    assert_eq!(melee.dice[1].rejected, [228, 245]);
    assert_eq!((melee.dice[1].byte, melee.dice[1].value), (107, 7));
    assert_eq!((melee.dice[2].value, melee.dice[3].value), (13, 12), "{:?}", melee.dice);
    assert_eq!(melee.dice.len(), 5, "the defender retreats at 100%: the attacker is not checked");
    // Under rules version 1 (no density or random in melee) the same example gave 900 v 200.
    let old = run_v1("melee", OpsTables.actions()[2].example.clone(), text).unwrap();
    assert_eq!(
        old.headline,
        "Melee 600 v 400 (modified 900 v 200), differential +14: attacker loses 18, defender loses 104; the defender retreats"
    );
    assert_eq!(old.dice[2].rejected, [245]);
    assert_eq!((old.dice[2].byte, old.dice[2].value), (107, 8));
}

#[test]
fn random_and_density_modify_melee_strength() {
    // Seed: "OTHER MODIFIERS ON FIRE AND MELEE STRENGTH/CASUALTIES … Density Modifier … Random
    // Modifier = ±50% (.5 to 1.5) … Battle Time Modifier … is for fire combat, not melee."
    // 1000 v 1000 in the open; the defender's square holds 950 men (+25 → +25%), the
    // attacker's 650 (±0). Faces 101 (1.50) and 1 (.50):
    // 1000 × 1.25 × 1.50 = 1875 v 1000 × 1.00 × .50 = 500; (1875 − 500) / 50 = 27.5 → 27.
    let mut inputs = melee_inputs(1000, 1000);
    inputs["men_in_defender_square"] = json!(950);
    inputs["men_in_attacker_square"] = json!(650);
    let text = stream_where(&[101, 101], |d| d[0] == 101 && d[1] == 1);
    let r = run("melee", inputs.clone(), &text).unwrap();
    assert_eq!(r.dice[0].purpose, "attacker's random modifier (d101: 0.49 + face/100)");
    assert_eq!(r.dice[1].purpose, "defender's random modifier (d101: 0.49 + face/100)");
    assert_eq!(r.dice[2].purpose, "attacker's losses, random of 25 (d25)");
    assert_eq!(r.result["attacker_modified_strength"], json!(1875.0));
    assert_eq!(r.result["defender_modified_strength"], json!(500.0));
    assert_eq!(r.result["differential"], json!(27));
    assert_eq!(r.result["random_modifier_dice"], json!({"attacker": 101, "defender": 1}));
    let rows: Vec<&str> = r.lookups.iter().map(|l| l.row.as_str()).collect();
    assert!(rows.contains(&"Density Modifier (attacker)") && rows.contains(&"Random Modifier (defender)"));
    assert!(!rows.iter().any(|row| row.contains("Battle Time")), "battle time is for fire only");
    // Neutral faces (51 → 1.00) and 650-man squares give the version 1 numbers back.
    inputs["men_in_defender_square"] = json!(650);
    let neutral = stream_where(&[101, 101], |d| d[0] == 51 && d[1] == 51);
    let r = run("melee", inputs.clone(), &neutral).unwrap();
    assert_eq!(r.result["attacker_modified_strength"], json!(1000.0));
    assert_eq!(r.result["differential"], json!(0));
    // Without the squares given, each side's own men stand for the square it melees.
    let alone = run("melee", melee_inputs(1000, 1000), &neutral).unwrap();
    assert_eq!(alone.result["attacker_modified_strength"], json!(1250.0));
    // Version 1 refuses the squares (it has no density in melee) before any die.
    let refusal = refused_under(&OpsTables, 1, "melee", inputs.clone());
    assert_eq!(
        (refusal.field.as_str(), refusal.rule.as_str()),
        ("body.inputs.men_in_defender_square", "melee.density")
    );
    inputs["men_in_attacker_square"] = json!(0);
    let refusal = refused(&OpsTables, "melee", inputs);
    assert_eq!(
        (refusal.field.as_str(), refusal.rule.as_str()),
        ("body.inputs.men_in_attacker_square", "melee.density")
    );
}

#[test]
fn leader_bonus_operation_points_and_fortification_at_their_bounds() {
    let neutral = stream_where(&[101], |d| d[0] == 51);
    // 1000 rifles at 1 square: 40 at neutral modifiers.
    for (bonus, want) in [(0.5, Some(20)), (2.0, Some(80)), (1.25, Some(50)), (0.49, None), (2.01, None)] {
        let mut inputs = plain_fire("RFL", 1, 1000);
        inputs["leader_bonus"] = json!(bonus);
        match want {
            Some(want) => assert_eq!(casualties(&run("fire", inputs, &neutral).unwrap()), want),
            None => assert_eq!(refused(&OpsTables, "fire", inputs).field, "body.inputs.leader_bonus"),
        }
    }
    for (op, want) in [(100, Some(400)), (101, None)] {
        let mut inputs = plain_fire("RFL", 1, 1000);
        inputs["operation_points_remaining"] = json!(op);
        match want {
            Some(want) => assert_eq!(casualties(&run("fire", inputs, &neutral).unwrap()), want),
            None => assert_eq!(refused(&OpsTables, "fire", inputs).field, "body.inputs.operation_points_remaining"),
        }
    }
    for (level, want) in [(0, Some(40)), (1, Some(36)), (9, Some(4)), (10, None)] {
        let mut inputs = plain_fire("RFL", 1, 1000);
        inputs["target_fortification_level"] = json!(level);
        match want {
            Some(want) => assert_eq!(casualties(&run("fire", inputs, &neutral).unwrap()), want),
            None => assert_eq!(refused(&OpsTables, "fire", inputs).field, "body.inputs.target_fortification_level"),
        }
    }
}

#[test]
fn fire_terrain_and_mode_modifiers_through_the_action() {
    let neutral = stream_where(&[101], |d| d[0] == 51);
    // 1000 rifles at 1 square: 40 at neutral modifiers.
    for (terrain, elevation, want) in [
        ("clear", false, 40),
        ("cornfield", false, 40),
        ("woods", false, 32),
        ("town", false, 28),
        ("bridge_ford", false, 40),
        ("clear", true, 36),
        ("woods", true, 29), // 28.8
    ] {
        let mut inputs = plain_fire("RFL", 1, 1000);
        inputs["target_terrain"] = json!(terrain);
        inputs["target_higher_elevation"] = json!(elevation);
        assert_eq!(casualties(&run("fire", inputs, &neutral).unwrap()), want, "{terrain} {elevation}");
    }
    for (mode, want) in [("normal", 40), ("column", 30), ("mounted", 30), ("routed", 30)] {
        let mut inputs = plain_fire("RFL", 1, 1000);
        inputs["firer_mode"] = json!(mode);
        assert_eq!(casualties(&run("fire", inputs, &neutral).unwrap()), want, "{mode}");
    }
    let mut inputs = plain_fire("RFL", 1, 1000);
    inputs["flank"] = json!(true);
    assert_eq!(casualties(&run("fire", inputs, &neutral).unwrap()), 60);
    let mut inputs = plain_fire("N12", 1, 4);
    inputs["firer_mode"] = json!("routed");
    assert_eq!(casualties(&run("fire", inputs, &neutral).unwrap()), 42);
}
