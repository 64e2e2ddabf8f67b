//! Tests of the schulz-acw ruleset: the tables cell by cell against the seed's own lines, the
//! seed's examples, every modifier at its bounds, every action's example, and a refusal for
//! each kind of bad input. Where a result depends on the dice, the test reads the recorded dice
//! back and checks the rule against them over many streams.

use serde_json::{json, Value};

use super::artillery::artillery_band;
use super::fire::effect_band;
use super::moving::{move_on, to_half_inch, Ground};
use super::structures::{bridge_state, building_state, BridgeKind};
use super::tables::*;
use super::*;
use crate::resolver::testing::{assert_refused, refused};
use crate::resolver::{resolve, ruleset, Resolution};

fn run(action: &str, inputs: Value, text: &str) -> Result<Resolution, Refusal> {
    resolve(&Schulz, action, &inputs, DiceStream::from_text(text.to_owned()))
}

fn ok(action: &str, inputs: Value, text: &str) -> Resolution {
    match run(action, inputs, text) {
        Ok(r) => r,
        Err(refusal) => panic!("{action} refused: {refusal}"),
    }
}

fn streams(n: usize) -> impl Iterator<Item = String> {
    (0..n).map(|k| format!("c0ffee00-0000-4000-8000-000000000002/{k}/2026-11-21T09:51:45.123Z"))
}

// ----------------------------------------------------------------------------------------------
// The seed's tables, copied line for line from seeds/002_cb942155cba86818.txt
// ----------------------------------------------------------------------------------------------

const SEED_VEHICLES: &str = r#"4-HORSE CAISSON | 2 | 2 | 12" | 11" | 12" |
2-HORSE CAISSON | 2 | 1 | 12" | 10" | 12" |
WAGON | 10 | 1 | 11" | 9" | 11" |
2 HORSES | 12" | 8" | 10" |"#;

const SEED_MOVES: &str = r#"6" | 4" | 8" | 9" |
8" | 5.5" | 10.5" | 12" |
9" | 6" | 12" | 13.5" |
10" | 6.5" | 13.5" | 15" |
11" | 7.5" | 14.5" | 16.5" |
12" | 8" | 16" | 18" |"#;

const SEED_SMALL_ARMS: &str = r#"INFANTRY | 12" | 9" | 15" |
ARTILLERY MEN | 8" | 6" | 10" |
CAVALRY | 12" | 9" | 15" |
SHARPSHOOTER (SHORT) | 12" | 9" | 15" |
SHARPSHOOTER (LONG) | 16" | 12" | 20" |
GATLING GUN | 12" | 9" | 15" |"#;

const SEED_EFFECTS: &str = "1,2,3,4 | 1,2,3 = man hit 4 = horse hit |
1,2,3 | 1,2 = man hit 3 = horse hit |
1,2 | 1 = man hit 2 = horse hit |
1 | 1 = man hit |";

const SEED_HEAVY: &str = "HEAVY | 36-52 | 27-39 | 45-65 | 12 |
CANNON | 20-36 | 15-27 | 25-45 | 123 |
12-20 | 9-15 | 15-25 | NONE | |
0-12 | 0-9 | 0-15 | NONE-GRAPE SHOT | |";

const SEED_MEDIUM: &str = "MEDIUM | 28-44 | 21-33 | 35-55 | 12 |
CANNON | 20-28 | 15-21 | 25-35 | 123 |
12-20 | 9-15 | 15-25 | NONE | |
0-12 | 0-9 | 0-15 | NONE-GRAPE SHOT | |";

const SEED_LIGHT: &str = "LIGHT | 28-36 | 21-27 | 35-45 | 12 |
CANNON | 20-28 | 15-21 | 25-35 | 123 |
12-20 | 9-15 | 15-25 | NONE | |
0-12 | 0-9 | 0-15 | NONE-GRAPE SHOT | |";

const SEED_MORTAR: &str = "MORTAR | 20-32 | 15-24 | 25-40 | 12 |
16-20 | 12-15 | 20-25 | 123 | |
10-16 | 7.5-12 | 12.5-20 | NONE |";

const SEED_CREWS: &str = "CANNON | 4 | 2 |
MORTAR | 3 | 1 |
GATLING GUN | 3 | 1 |
WAGON GATLING | 2 | 1 |";

const SEED_NEEDED_TO_KILL: &str = "Infantry | 1,2,3 |
Unmounted cavalry | 1,2 |
Sharpshooters | 1,2,3 |
Artillery men | 1,2,3,4 |
Cavalry | 1,2 |";

const SEED_BUILDINGS: &str = "50-31 | 30-21 | 20-11 | <=10 |
40-25 | 24-17 | 16-9 | <=8 |
30-19 | 18-13 | 12-7 | <=6 |
20-13 | 12-9 | 8-5 | <=4 |";

/// The non-empty cells of a seed table line.
fn cells(line: &str) -> Vec<&str> {
    line.split('|').map(str::trim).filter(|c| !c.is_empty()).collect()
}

fn inches(cell: &str) -> f64 {
    cell.trim_end_matches('"').parse().expect("inches")
}

fn span(cell: &str) -> (f64, f64) {
    let (from, to) = cell.split_once('-').expect("a range");
    (from.parse().expect("from"), to.parse().expect("to"))
}

fn numbers(cell: &str) -> Vec<u32> {
    cell.split(',').map(|n| n.parse().expect("number")).collect()
}

#[test]
fn the_vehicle_table_matches_the_seed_cell_by_cell() {
    for (line, row) in SEED_VEHICLES.lines().zip(VEHICLES.iter()) {
        let c = cells(line);
        assert_eq!(c[0], row.name);
        if c.len() == 6 {
            assert_eq!(Some(c[1].parse().unwrap()), row.men, "{line}");
            assert_eq!(Some(c[2].parse().unwrap()), row.riders, "{line}");
            assert_eq!([inches(c[3]), inches(c[4]), inches(c[5])], [row.empty, row.with_cannon, row.with_gatling]);
        } else {
            assert_eq!((row.men, row.riders), (None, None));
            assert_eq!([inches(c[1]), inches(c[2]), inches(c[3])], [row.empty, row.with_cannon, row.with_gatling]);
        }
    }
    assert_eq!(SEED_VEHICLES.lines().count(), VEHICLES.len());
    assert_eq!((MEN_MOVE, CAVALRY_MOVE, HAULED_MOVE), (6.0, 12.0, 3.0));
}

#[test]
fn the_move_table_matches_the_seed_cell_by_cell() {
    assert_eq!(SEED_MOVES.lines().count(), MOVE_TABLE.len());
    for (line, row) in SEED_MOVES.lines().zip(MOVE_TABLE.iter()) {
        let c: Vec<f64> = cells(line).into_iter().map(inches).collect();
        assert_eq!(c, vec![row.0, row.1, row.2, row.3], "{line}");
    }
}

#[test]
fn the_move_fractions_rounded_to_half_inches_give_the_seeds_table() {
    // The fallback for moves not in the table must agree with every row that is.
    for row in MOVE_TABLE {
        for (ground, want) in [(Ground::Up, row.1), (Ground::Down, row.2), (Ground::Road, row.3)] {
            let exact = match ground {
                Ground::Up => row.0 * 2.0 / 3.0,
                Ground::Down => row.0 * 4.0 / 3.0,
                _ => row.0 * 1.5,
            };
            assert_eq!((exact * 2.0).round() / 2.0, want, "{} {ground:?}", row.0);
        }
    }
    assert_eq!(move_on(3.0, Ground::Up), (2.0, false));
    assert_eq!(move_on(7.0, Ground::Down), (9.5, false));
    assert_eq!(move_on(8.0, Ground::Up), (5.5, true));
    // A quarter goes down to the half inch below; anything past it goes up.
    assert_eq!(to_half_inch(8.25), 8.0);
    assert_eq!(to_half_inch(8.26), 8.5);
    assert_eq!(to_half_inch(7.74), 7.5);
    assert_eq!(to_half_inch(7.76), 8.0);
}

#[test]
fn the_small_arms_table_matches_the_seed_cell_by_cell() {
    assert_eq!(SEED_SMALL_ARMS.lines().count(), SMALL_ARMS_RANGES.len());
    for (line, (_, name, ranges)) in SEED_SMALL_ARMS.lines().zip(SMALL_ARMS_RANGES.iter()) {
        let c = cells(line);
        assert_eq!(c[0], *name);
        assert_eq!([inches(c[1]), inches(c[2]), inches(c[3])], *ranges, "{line}");
        // UP (-1/4), DOWN (+1/4)
        assert_eq!(ranges[1], ranges[0] * 0.75);
        assert_eq!(ranges[2], ranges[0] * 1.25);
    }
}

#[test]
fn the_effect_table_matches_the_seed_cell_by_cell() {
    assert_eq!(SEED_EFFECTS.lines().count(), EFFECTS.len());
    for (line, row) in SEED_EFFECTS.lines().zip(EFFECTS.iter()) {
        let c = cells(line);
        assert_eq!(c[0], row.effect);
        assert_eq!(c[1], row.split_up);
        assert_eq!(numbers(c[0]).last().copied(), Some(row.hits_up_to));
        let horse =
            c[1].split_once(" = man hit ").map(|(_, h)| h.trim_end_matches(" = horse hit").parse::<u32>().unwrap());
        assert_eq!(horse, row.horse_hit_on, "{line}");
    }
}

fn check_artillery(seed: &str, table: &[ArtilleryBand]) {
    assert_eq!(seed.lines().count(), table.len());
    for (line, band) in seed.lines().zip(table.iter()) {
        let c: Vec<&str> = cells(line)
            .into_iter()
            .filter(|c| !matches!(*c, "HEAVY" | "MEDIUM" | "LIGHT" | "MORTAR" | "CANNON"))
            .collect();
        assert_eq!([span(c[0]), span(c[1]), span(c[2])], [band.normal, band.up, band.down], "{line}");
        assert_eq!(c[3], band.ranging.as_seed(), "{line}");
        if let Ranging::Needs(needed) = band.ranging {
            let seed_digits: Vec<u32> = c[3].chars().map(|d| d.to_digit(10).unwrap()).collect();
            assert_eq!(seed_digits, needed);
        }
    }
}

#[test]
fn the_artillery_tables_match_the_seed_cell_by_cell() {
    check_artillery(SEED_HEAVY, &HEAVY_CANNON);
    check_artillery(SEED_MEDIUM, &MEDIUM_CANNON);
    check_artillery(SEED_LIGHT, &LIGHT_CANNON);
    check_artillery(SEED_MORTAR, &MORTAR);
}

#[test]
fn the_crew_table_matches_the_seed_cell_by_cell() {
    assert_eq!(SEED_CREWS.lines().count(), CREWS.len());
    for (line, (name, most, least)) in SEED_CREWS.lines().zip(CREWS.iter()) {
        let c = cells(line);
        assert_eq!((c[0], c[1].parse().unwrap(), c[2].parse().unwrap()), (*name, *most, *least));
    }
}

#[test]
fn the_needed_to_kill_table_matches_the_seed_cell_by_cell() {
    assert_eq!(SEED_NEEDED_TO_KILL.lines().count(), NEEDED_TO_KILL.len());
    for (line, (_, name, needed)) in SEED_NEEDED_TO_KILL.lines().zip(NEEDED_TO_KILL.iter()) {
        let c = cells(line);
        assert_eq!(c[0], *name);
        assert_eq!(numbers(c[1]), *needed);
    }
}

#[test]
fn the_buildings_table_matches_the_seed_cell_by_cell() {
    assert_eq!(SEED_BUILDINGS.lines().count(), BUILDINGS.len());
    for (r, line) in SEED_BUILDINGS.lines().enumerate() {
        let c = cells(line);
        for (col, band) in BUILDINGS[r].iter().enumerate() {
            let (high, low) = c[col].split_once('-').unwrap();
            assert_eq!((high.parse().unwrap(), low.parse().unwrap()), *band, "{line}");
        }
        assert_eq!(c[3], format!("<={}", BUILDINGS_ALL_DEAD[r]));
    }
}

#[test]
fn every_building_points_value_has_exactly_its_seed_band() {
    for (r, size) in [50, 40, 30, 20].into_iter().enumerate() {
        for points in 0..=size {
            let (col, _) = building_state(size, points).expect("every points value has a band");
            let expected = if points <= BUILDINGS_ALL_DEAD[r] {
                3
            } else {
                BUILDINGS[r].iter().position(|&(high, low)| low <= points && points <= high).unwrap()
            };
            assert_eq!(col, expected, "{size}-point building at {points}");
        }
    }
    assert_eq!(building_state(50, 31).unwrap().1, "50-31");
    assert_eq!(building_state(50, 30).unwrap().1, "30-21");
    assert_eq!(building_state(40, 9).unwrap().1, "16-9");
    assert_eq!(building_state(40, 8).unwrap().1, "<=8");
    assert_eq!(building_state(20, 13).unwrap().1, "20-13");
    assert_eq!(building_state(20, 4).unwrap().1, "<=4");
    assert_eq!(building_state(45, 10), None);
}

#[test]
fn bridges_hold_what_the_seed_says_at_each_band_edge() {
    assert_eq!((REGULAR_BRIDGE.0, FOOT_BRIDGE.0, FORT_TOWER_POINTS), (30, 15, 25));
    let regular = [
        (30, "OK"),
        (21, "OK"),
        (20, "men and cavalry only"),
        (11, "men and cavalry only"),
        (10, "men only"),
        (1, "men only"),
        (0, "gone"),
    ];
    for (points, holds) in regular {
        assert_eq!(bridge_state(BridgeKind::Regular, points), holds, "regular at {points}");
    }
    let foot = [
        (15, "OK and can hold men and cavalry only"),
        (11, "OK and can hold men and cavalry only"),
        (10, "men only"),
        (1, "men only"),
        (0, "gone"),
    ];
    for (points, holds) in foot {
        assert_eq!(bridge_state(BridgeKind::Foot, points), holds, "foot at {points}");
    }
}

// ----------------------------------------------------------------------------------------------
// The registry and every action's example
// ----------------------------------------------------------------------------------------------

#[test]
fn the_ruleset_is_registered_by_its_name() {
    let found = ruleset("schulz-acw").expect("registered");
    assert_eq!(found.seed(), "002_cb942155cba86818");
    let names: Vec<&str> = found.actions().iter().map(|a| a.name).collect();
    assert_eq!(
        names,
        [
            "small_arms_fire",
            "gatling_fire",
            "artillery_fire",
            "structure_hit",
            "melee_round",
            "ladder_push_off",
            "move_allowance"
        ]
    );
}

#[test]
fn every_actions_example_resolves_and_has_a_schema() {
    for spec in Schulz.actions() {
        assert!(spec.input_schema.is_object(), "{}", spec.name);
        for text in streams(50) {
            let r = ok(spec.name, spec.example.clone(), &text);
            assert!(!r.headline.is_empty());
            assert!(!r.lookups.is_empty(), "{} records its table cells", spec.name);
            for (n, die) in r.dice.iter().enumerate() {
                assert_eq!(die.index as usize, n);
                assert_eq!(die.faces, 6, "every die in these rules is a d6");
            }
        }
    }
}

#[test]
fn a_resolution_is_the_same_every_time_from_the_same_stamp() {
    for spec in Schulz.actions() {
        let a = ok(spec.name, spec.example.clone(), "audit/1/2026-11-21T10:00:00.000Z");
        let b = ok(spec.name, spec.example.clone(), "audit/1/2026-11-21T10:00:00.000Z");
        assert_eq!(a, b);
    }
}

/// The names the actions were first posted under, before every ruleset named its actions in
/// snake_case. Campaigns' logs keep them.
const EARLIER_NAMES: [(&str, &str); 7] = [
    ("small-arms-fire", "small_arms_fire"),
    ("gatling-fire", "gatling_fire"),
    ("artillery-fire", "artillery_fire"),
    ("structure-hit", "structure_hit"),
    ("melee-round", "melee_round"),
    ("ladder-push-off", "ladder_push_off"),
    ("move-allowance", "move_allowance"),
];

#[test]
fn an_earlier_action_name_resolves_to_the_same_outcome() {
    for (earlier, name) in EARLIER_NAMES {
        let spec = Schulz.actions().into_iter().find(|a| a.name == name).expect("the action is listed");
        assert_eq!(spec.also_accepted, [earlier]);
        for text in streams(20) {
            let now = ok(name, spec.example.clone(), &text);
            let then = ok(earlier, spec.example.clone(), &text);
            // The outcome names the action as its post did; the rest is the same, die for die.
            assert_eq!(then.action, earlier);
            assert_eq!(Resolution { action: name.to_owned(), ..then }, now);
        }
        let bad = json!({"colour": "blue"});
        assert_eq!(run(earlier, bad.clone(), "refusal"), run(name, bad, "refusal"), "{earlier}");
    }
}

// ----------------------------------------------------------------------------------------------
// Small-arms fire
// ----------------------------------------------------------------------------------------------

fn fire(shooters: &str, men: u32, range: f64, target: Value) -> Value {
    json!({"shooters": shooters, "men": men, "range_inches": range, "target": target})
}

#[test]
fn the_effect_row_is_the_quarter_of_the_range() {
    // 12": 0-3 1,2,3,4; 3-6 1,2,3; 6-9 1,2; 9-12 1 — an edge belongs to the nearer quarter.
    for (range, band) in [(0.0, 0), (3.0, 0), (3.5, 1), (6.0, 1), (6.5, 2), (9.0, 2), (9.5, 3), (12.0, 3)] {
        assert_eq!(effect_band(range, 12.0), band, "{range}\"");
    }
    assert_eq!(effect_band(4.0, 16.0), 0);
    assert_eq!(effect_band(4.5, 16.0), 1);
}

#[test]
fn twenty_men_shooting_at_twenty_others_roll_twenty_dice() {
    // "If 20 men are shootingat 20 others, its much easier to roll 20 dice all at once."
    let r = ok("small_arms_fire", fire("infantry", 20, 2.0, json!({"troops": "infantry", "men": 20})), "twenty");
    let to_hit = r.dice.iter().filter(|d| d.purpose.starts_with("to hit")).count();
    assert_eq!(to_hit, 20);
    for (n, man) in r.result["men"].as_array().unwrap().iter().enumerate() {
        assert_eq!(man["man"], json!(n + 1));
        assert_eq!(man["dice"].as_array().unwrap().len(), 1, "one die at each man");
    }
}

/// Checks a fire result against its own dice: a die at or under the effect hits, the horse
/// die hits the horse, a hit man survives on `survives_on` or better, a man hit twice is dead.
fn check_fire(r: &Resolution, hits_up_to: u32, horse_on: Option<u32>, survives_on: u32) {
    let mut hits = 0;
    let mut dead = 0;
    for man in r.result["men"].as_array().unwrap() {
        let dice: Vec<u32> = man["dice"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as u32).collect();
        let man_hits = dice.iter().filter(|&&d| d <= hits_up_to && Some(d) != horse_on).count() as u64;
        let horse = dice.iter().any(|&d| Some(d) == horse_on);
        assert_eq!(man["hits"].as_u64().unwrap(), man_hits, "{man}");
        assert_eq!(man["horse_hit"].as_bool().unwrap(), horse, "{man}");
        let earlier = u64::from(man["hit_earlier_this_turn"].as_bool().unwrap());
        let fate = man["fate"].as_str().unwrap();
        match (man_hits, man_hits + earlier) {
            (0, _) => assert_eq!(fate, "unhurt"),
            (_, 1) => {
                let survival = man["survival_die"].as_u64().unwrap() as u32;
                let expected = if survival >= survives_on { "flesh wound" } else { "dead" };
                assert_eq!(fate, expected, "{man}");
            }
            _ => {
                assert_eq!(fate, "dead (hit twice this turn)");
                assert!(man["survival_die"].is_null(), "no survival roll");
            }
        }
        hits += man_hits;
        dead += u64::from(fate.starts_with("dead"));
    }
    assert_eq!(r.result["hits"].as_u64().unwrap(), hits);
    assert_eq!(r.result["dead"].as_u64().unwrap(), dead);
}

#[test]
fn small_arms_hit_kill_and_wound_as_the_dice_say() {
    for text in streams(100) {
        // Point blank, no cover: 1,2,3,4. Survival 5,6.
        let r = ok("small_arms_fire", fire("infantry", 8, 3.0, json!({"troops": "infantry", "men": 5})), &text);
        check_fire(&r, 4, None, 5);
        // Long range behind cover: 1 less one row is no effect at all, and no dice.
        let r = ok(
            "small_arms_fire",
            fire("infantry", 8, 12.0, json!({"troops": "infantry", "men": 5, "cover": "regular"})),
            &text,
        );
        assert!(r.dice.is_empty());
        assert_eq!(r.result["effect"], Value::Null);
        // Half range behind cover: 1,2,3 becomes 1,2.
        let r = ok(
            "small_arms_fire",
            fire("sharpshooter_long", 6, 8.0, json!({"troops": "sharpshooters", "men": 3, "cover": "regular"})),
            &text,
        );
        assert_eq!(r.result["effect"], "1,2");
        check_fire(&r, 2, None, 5);
    }
}

#[test]
fn mounted_cavalry_split_hits_with_their_horses_unless_under_cover() {
    let mut horses = 0;
    for text in streams(100) {
        let r = ok("small_arms_fire", fire("cavalry", 10, 4.0, json!({"troops": "cavalry", "men": 4})), &text);
        // 4" of 12" is the second quarter: 1,2 = man hit 3 = horse hit.
        assert_eq!(r.result["effect"], "1,2,3");
        assert!(r.lookups.iter().any(|l| l.column == "SPLIT UP" && l.value == "1,2 = man hit 3 = horse hit"));
        check_fire(&r, 3, Some(3), 5);
        horses += r.result["horses_killed"].as_u64().unwrap();

        // "When shooting at mounted cavalry under cover, only men can be shot at."
        let r = ok(
            "small_arms_fire",
            fire("cavalry", 10, 2.0, json!({"troops": "cavalry", "men": 4, "cover": "regular"})),
            &text,
        );
        assert_eq!(r.result["effect"], "1,2,3");
        check_fire(&r, 3, None, 5);
        assert_eq!(r.result["horses_killed"], 0);
    }
    assert!(horses > 0, "some horses are hit in 100 volleys");
}

#[test]
fn a_man_hit_twice_in_one_turn_is_dead_without_a_survival_roll() {
    let mut twice = 0;
    for text in streams(100) {
        // 3 firers at 1 man: up to three hits on him.
        let r = ok("small_arms_fire", fire("infantry", 3, 1.0, json!({"troops": "infantry", "men": 1})), &text);
        check_fire(&r, 4, None, 5);
        // A man already wounded this turn dies of any hit.
        let r = ok(
            "small_arms_fire",
            fire("infantry", 1, 1.0, json!({"troops": "infantry", "men": 1, "hit_earlier_this_turn": 1})),
            &text,
        );
        check_fire(&r, 4, None, 5);
        if r.result["hits"] == 1 {
            assert_eq!(r.result["men"][0]["fate"], "dead (hit twice this turn)");
            twice += 1;
        }
    }
    assert!(twice > 0);
}

#[test]
fn survival_needs_a_five_or_six_against_small_arms() {
    let mut seen = [false; 7];
    for text in streams(200) {
        let r = ok("small_arms_fire", fire("infantry", 10, 1.0, json!({"troops": "artillery_men", "men": 10})), &text);
        check_fire(&r, 4, None, 5);
        for man in r.result["men"].as_array().unwrap() {
            if let Some(d) = man["survival_die"].as_u64() {
                seen[d as usize] = true;
            }
        }
    }
    assert!(seen[1..].iter().all(|&s| s), "every survival die face was seen");
}

#[test]
fn small_arms_ranges_are_read_by_shooters_and_slope() {
    for (shooters, slope, max) in [
        ("infantry", "normal", 12.0),
        ("infantry", "up", 9.0),
        ("infantry", "down", 15.0),
        ("artillery_men", "normal", 8.0),
        ("artillery_men", "up", 6.0),
        ("artillery_men", "down", 10.0),
        ("sharpshooter_long", "down", 20.0),
    ] {
        let mut inputs = fire(shooters, 1, max, json!({"troops": "infantry", "men": 1}));
        inputs["slope"] = json!(slope);
        let r = ok("small_arms_fire", inputs.clone(), "range");
        assert_eq!(r.result["max_range_inches"], json!(max));
        assert_eq!(r.result["effect"], "1", "the far quarter");
        inputs["range_inches"] = json!(max + 0.5);
        let refusal = refused(&Schulz, "small_arms_fire", inputs);
        assert_eq!(refusal.field, "body.inputs.range_inches");
        assert_eq!(refusal.rule, "fire.range");
    }
}

// ----------------------------------------------------------------------------------------------
// Gatling guns and grape shot
// ----------------------------------------------------------------------------------------------

#[test]
fn a_gatling_gun_rolls_one_die_for_every_man_under_the_pattern() {
    for text in streams(50) {
        let r = ok(
            "gatling_fire",
            json!({"crew": 1, "range_inches": 2.5, "under_pattern": [
                {"troops": "infantry", "men": 3},
                {"troops": "infantry", "men": 2, "cover": "regular"}]}),
            &text,
        );
        let men = r.result["men"].as_array().unwrap();
        assert_eq!(men.len(), 5);
        assert!(men.iter().all(|m| m["dice"].as_array().unwrap().len() == 1));
        // Group 1 in the open at 1,2,3,4; group 2 under cover at 1,2,3.
        for man in men {
            let die = man["dice"][0].as_u64().unwrap();
            let reach = if man["group"] == 1 { 4 } else { 3 };
            assert_eq!(man["hits"].as_u64().unwrap(), u64::from(die <= reach), "{man}");
        }
    }
}

#[test]
fn gatling_crews_follow_the_crew_table() {
    let gatling = |mounting: &str, crew: u32| {
        json!({"mounting": mounting, "crew": crew, "range_inches": 6,
               "under_pattern": [{"troops": "infantry", "men": 1}]})
    };
    ok("gatling_fire", gatling("field", 1), "crew");
    ok("gatling_fire", gatling("field", 3), "crew");
    ok("gatling_fire", gatling("wagon", 2), "crew");
    let r = refused(&Schulz, "gatling_fire", gatling("field", 0));
    assert_eq!((r.field.as_str(), r.rule.as_str()), ("body.inputs.crew", "crew.minimum"));
    let r = refused(&Schulz, "gatling_fire", gatling("field", 4));
    assert_eq!((r.field.as_str(), r.rule.as_str()), ("body.inputs.crew", "crew.maximum"));
    let r = refused(&Schulz, "gatling_fire", gatling("wagon", 3));
    assert_eq!(r.rule, "crew.maximum");
}

// ----------------------------------------------------------------------------------------------
// Artillery
// ----------------------------------------------------------------------------------------------

#[test]
fn artillery_bands_edges_belong_to_the_nearer_band() {
    let ranging =
        |bands: &[ArtilleryBand], slope, range| artillery_band(bands, slope, range).map(|b| bands[b].ranging.as_seed());
    assert_eq!(ranging(&HEAVY_CANNON, Slope::Normal, 52.0), Some("12"));
    assert_eq!(ranging(&HEAVY_CANNON, Slope::Normal, 52.5), None);
    assert_eq!(ranging(&HEAVY_CANNON, Slope::Normal, 36.5), Some("12"));
    assert_eq!(ranging(&HEAVY_CANNON, Slope::Normal, 36.0), Some("123"));
    assert_eq!(ranging(&HEAVY_CANNON, Slope::Normal, 20.0), Some("NONE"));
    assert_eq!(ranging(&HEAVY_CANNON, Slope::Normal, 12.0), Some("NONE-GRAPE SHOT"));
    assert_eq!(ranging(&HEAVY_CANNON, Slope::Normal, 0.0), Some("NONE-GRAPE SHOT"));
    assert_eq!(ranging(&HEAVY_CANNON, Slope::Up, 39.0), Some("12"));
    assert_eq!(ranging(&HEAVY_CANNON, Slope::Up, 40.0), None);
    assert_eq!(ranging(&HEAVY_CANNON, Slope::Down, 65.0), Some("12"));
    assert_eq!(ranging(&HEAVY_CANNON, Slope::Down, 15.0), Some("NONE-GRAPE SHOT"));
    assert_eq!(ranging(&MEDIUM_CANNON, Slope::Normal, 44.0), Some("12"));
    assert_eq!(ranging(&LIGHT_CANNON, Slope::Normal, 36.0), Some("12"));
    assert_eq!(ranging(&LIGHT_CANNON, Slope::Normal, 37.0), None);
    assert_eq!(ranging(&MORTAR, Slope::Normal, 32.0), Some("12"));
    assert_eq!(ranging(&MORTAR, Slope::Normal, 16.0), Some("NONE"));
    assert_eq!(ranging(&MORTAR, Slope::Normal, 10.0), Some("NONE"));
    assert_eq!(ranging(&MORTAR, Slope::Normal, 9.5), None);
    assert_eq!(ranging(&MORTAR, Slope::Up, 7.5), Some("NONE"));
    assert_eq!(ranging(&MORTAR, Slope::Down, 12.5), Some("NONE"));
    assert_eq!(ranging(&MORTAR, Slope::Down, 12.0), None);
}

fn shell(piece: &str, crew: u32, range: f64, under: Value) -> Value {
    json!({"piece": piece, "crew": crew, "range_inches": range, "under_pattern": under})
}

#[test]
fn the_ranging_shot_decides_whether_the_shell_lands() {
    let (mut hit, mut missed) = (0, 0);
    for text in streams(100) {
        for (range, needed) in [(40.0, 2), (30.0, 3)] {
            let r =
                ok("artillery_fire", shell("heavy_cannon", 2, range, json!([{"troops": "infantry", "men": 3}])), &text);
            assert_eq!(r.dice[0].purpose, "ranging shot");
            let on_target = r.dice[0].value <= needed;
            assert_eq!(r.result["on_target"], on_target);
            if on_target {
                hit += 1;
                // Every man under the pattern is hit and rolls for survival.
                assert_eq!(r.result["hits"], 3);
                assert_eq!(r.dice.len(), 4);
            } else {
                missed += 1;
                assert_eq!(r.dice.len(), 1, "a missed ranging shot rolls nothing more");
                assert_eq!(r.result["hits"], 0);
                assert!(r.headline.contains("burst pattern removed"));
            }
        }
    }
    assert!(hit > 0 && missed > 0);
}

#[test]
fn no_ranging_shot_inside_twenty_inches() {
    let r = ok("artillery_fire", shell("light_cannon", 2, 15.0, json!([{"troops": "infantry", "men": 2}])), "near");
    assert_eq!(r.result["ranging_die"], Value::Null);
    assert_eq!(r.result["on_target"], true);
    assert!(r.dice.iter().all(|d| d.purpose.starts_with("survival")));
}

#[test]
fn artillery_hits_are_survived_only_on_a_six() {
    let mut seen_five = false;
    for text in streams(100) {
        let r = ok("artillery_fire", shell("medium_cannon", 3, 14.0, json!([{"troops": "infantry", "men": 6}])), &text);
        for man in r.result["men"].as_array().unwrap() {
            let die = man["survival_die"].as_u64().unwrap();
            seen_five |= die == 5;
            let expected = if die == 6 { "flesh wound" } else { "dead" };
            assert_eq!(man["fate"], expected, "{man}");
        }
    }
    assert!(seen_five, "a 5 was rolled and killed");
}

#[test]
fn cover_against_shells_follows_the_seed() {
    for (piece, cover, hit) in [
        ("heavy_cannon", "none", true),
        ("heavy_cannon", "regular", true),
        ("heavy_cannon", "over_the_top", false),
        ("heavy_cannon", "complete", false),
        ("mortar", "over_the_top", true),
        ("mortar", "complete", false),
    ] {
        let range = if piece == "mortar" { 12.0 } else { 14.0 };
        let crew = if piece == "mortar" { 1 } else { 2 };
        let r = ok(
            "artillery_fire",
            shell(piece, crew, range, json!([{"troops": "infantry", "men": 2, "cover": cover}])),
            "cover",
        );
        assert_eq!(r.result["hits"], if hit { 2 } else { 0 }, "{piece} {cover}");
    }
}

#[test]
fn shells_kill_the_horses_under_the_pattern() {
    let r = ok(
        "artillery_fire",
        json!({"piece": "light_cannon", "crew": 2, "range_inches": 18,
               "under_pattern": [{"troops": "cavalry", "men": 2}], "horses_under_pattern": 3}),
        "horses",
    );
    assert_eq!(r.result["horses_killed"], 5, "two riders' horses and three more");
}

#[test]
fn grape_shot_uses_the_gatling_pattern_and_the_artillery_survival() {
    for text in streams(100) {
        let r = ok("artillery_fire", shell("light_cannon", 2, 5.0, json!([{"troops": "infantry", "men": 4}])), &text);
        assert_eq!(r.result["grape_shot"], true);
        // 5" of the 12" grape band is its second quarter: 1,2,3.
        check_fire(&r, 3, None, 6);
    }
}

#[test]
fn artillery_crews_follow_the_crew_table() {
    let one = json!([{"troops": "infantry", "men": 1}]);
    ok("artillery_fire", shell("heavy_cannon", 2, 14.0, one.clone()), "crew");
    ok("artillery_fire", shell("heavy_cannon", 4, 14.0, one.clone()), "crew");
    ok("artillery_fire", shell("mortar", 1, 14.0, one.clone()), "crew");
    ok("artillery_fire", shell("mortar", 3, 14.0, one.clone()), "crew");
    for (piece, crew, rule) in [
        ("heavy_cannon", 1, "crew.minimum"),
        ("light_cannon", 5, "crew.maximum"),
        ("mortar", 0, "crew.minimum"),
        ("mortar", 4, "crew.maximum"),
    ] {
        let r = refused(&Schulz, "artillery_fire", shell(piece, crew, 14.0, one.clone()));
        assert_eq!((r.field.as_str(), r.rule.as_str()), ("body.inputs.crew", rule));
    }
}

// ----------------------------------------------------------------------------------------------
// Structures
// ----------------------------------------------------------------------------------------------

#[test]
fn two_dice_come_off_a_building_and_its_band_is_read() {
    for text in streams(50) {
        let r =
            ok("structure_hit", json!({"structures": [{"kind": "building_section", "size": 30, "points": 20}]}), &text);
        let s = &r.result["structures"][0];
        let total = r.dice[0].value + r.dice[1].value;
        let after = 20u32.saturating_sub(total);
        assert_eq!(s["points_after"], after);
        let state = match after {
            19..=30 => "FULL POINTS",
            13..=18 => "NO ARTIL. COVER",
            7..=12 => "NO OVER TOP COVER",
            _ => "ALL DEAD",
        };
        assert_eq!(s["state"], state);
    }
}

#[test]
fn towers_walls_bridges_doors_and_wall_cannons() {
    let mut blown = false;
    let mut cannon_hit = false;
    for text in streams(100) {
        let r = ok(
            "structure_hit",
            json!({"structures": [
                {"kind": "fort_tower", "points": 3},
                {"kind": "bridge", "bridge": "foot", "points": 15},
                {"kind": "door"},
                {"kind": "wall_cannon", "wall_points": 5},
                {"kind": "wall_section", "points": 40}]}),
            &text,
        );
        let d: Vec<u32> = r.dice.iter().map(|d| d.value).collect();
        let s = &r.result["structures"];
        assert_eq!(s[0]["points_after"], 3u32.saturating_sub(d[0] + d[1]));
        assert_eq!(s[0]["all_on_top_gone"], d[0] + d[1] >= 3);
        let bridge = 15 - (d[2] + d[3]);
        assert_eq!(s[1]["points_after"], bridge);
        assert_eq!(s[1]["holds"], if bridge >= 11 { "OK and can hold men and cavalry only" } else { "men only" });
        assert_eq!(s[2]["blown_off"], d[4] == 1);
        blown |= d[4] == 1;
        assert_eq!(s[3]["hit"], d[5] == 1);
        assert_eq!(s[3]["wall_points_after"], if d[5] == 1 { 0 } else { 5 });
        assert_eq!(s[3]["all_on_top_gone"], d[5] == 1);
        cannon_hit |= d[5] == 1;
        assert_eq!(s[4]["points_after"], 40 - (d[6] + d[7]));
    }
    assert!(blown && cannon_hit);
}

#[test]
fn the_second_floor_must_be_erased_first() {
    let r = refused(
        &Schulz,
        "structure_hit",
        json!({"structures": [{"kind": "building_section", "size": 40, "points": 40,
                                "floor_above_points": 3}]}),
    );
    assert_eq!(r.field, "body.inputs.structures[0].floor_above_points");
    assert_eq!(r.rule, "building.second_floor_first");
}

#[test]
fn structures_refuse_points_outside_their_tables() {
    for (structure, field, rule) in [
        (json!({"kind": "building_section", "size": 45, "points": 40}), "size", "building.size"),
        (json!({"kind": "building_section", "size": 20, "points": 21}), "points", "structure.points"),
        (json!({"kind": "building_section", "size": 20, "points": 0}), "points", "structure.points"),
        (json!({"kind": "fort_tower", "points": 26}), "points", "structure.points"),
        (json!({"kind": "bridge", "bridge": "foot", "points": 16}), "points", "structure.points"),
        (json!({"kind": "bridge", "bridge": "regular", "points": 31}), "points", "structure.points"),
        (json!({"kind": "wall_cannon", "wall_points": 0}), "wall_points", "structure.points"),
    ] {
        let r = refused(&Schulz, "structure_hit", json!({"structures": [{"kind": "door"}, structure]}));
        assert_eq!(r.field, format!("body.inputs.structures[1].{field}"));
        assert_eq!(r.rule, rule);
    }
    ok("structure_hit", json!({"structures": [{"kind": "bridge", "bridge": "regular", "points": 30}]}), "edge");
    ok("structure_hit", json!({"structures": [{"kind": "fort_tower", "points": 25}]}), "edge");
    let r = refused(&Schulz, "structure_hit", json!({"structures": []}));
    assert_eq!(r.field, "body.inputs.structures");
    let r = refused(&Schulz, "structure_hit", json!({"structures": [{"kind": "door", "points": 3}]}));
    assert!(r.field.starts_with("body.inputs.structures"), "{r:?}");
    let r = refused(&Schulz, "structure_hit", json!({"structures": [{"kind": "church"}]}));
    assert!(r.field.starts_with("body.inputs.structures"), "{r:?}");
}

#[test]
fn a_shell_that_misses_spares_the_structures() {
    for text in streams(40) {
        let r = ok(
            "artillery_fire",
            json!({"piece": "heavy_cannon", "crew": 4, "range_inches": 45,
                   "structures": [{"kind": "fort_tower", "points": 25}]}),
            &text,
        );
        let structures = r.result["structures"].as_array().unwrap();
        assert_eq!(structures.is_empty(), r.result["on_target"] == false);
    }
}

// ----------------------------------------------------------------------------------------------
// Melee
// ----------------------------------------------------------------------------------------------

fn melee(round: u32, attacker: Value, defender: Value) -> Value {
    json!({"round": round, "attacker": attacker, "defender": defender})
}

fn die_values(man: &Value) -> Vec<u32> {
    man["dice"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as u32).collect()
}

#[test]
fn the_first_round_kills_outright_and_only_the_missed_fight_back() {
    let mut kills = 0;
    for text in streams(100) {
        let r = ok(
            "melee_round",
            melee(1, json!({"troops": "infantry", "men": 3}), json!({"troops": "artillery_men", "men": 3})),
            &text,
        );
        assert_eq!(r.result["attacker_advantage"], true);
        let attackers = r.result["attackers"].as_array().unwrap();
        let defenders = r.result["defenders"].as_array().unwrap();
        for (n, defender) in defenders.iter().enumerate() {
            // Attacker n fought defender n; artillery men die to 1,2,3,4.
            let attack = die_values(&attackers[n])[0];
            if attack <= 4 {
                kills += 1;
                assert_eq!(defender["fate"], "dead (no survival)");
                assert!(defender["survival_die"].is_null());
                assert!(die_values(defender).is_empty(), "the dead do not fight back");
            } else {
                assert_eq!(defender["fate"], "unhurt");
                let back = die_values(defender);
                assert_eq!(back.len(), 1, "the missed defender fights back");
                // Infantry die to 1,2,3; the attacker then rolls for survival (5,6).
                let target = &attackers[n];
                assert_eq!(target["hits"].as_u64().unwrap(), u64::from(back[0] <= 3));
            }
        }
        for a in attackers {
            if a["hits"] == 1 {
                let s = a["survival_die"].as_u64().unwrap();
                assert_eq!(a["fate"], if s >= 5 { "flesh wound" } else { "dead" });
            }
        }
    }
    assert!(kills > 0);
}

#[test]
fn later_rounds_roll_survival_and_the_dead_fight_back() {
    let mut dead_fought = false;
    for text in streams(100) {
        let r = ok(
            "melee_round",
            json!({"round": 2, "attacker": {"troops": "cavalry", "men": 2},
                   "defender": {"troops": "infantry", "men": 2},
                   "attacker_choice": "stay", "defender_choice": "stay"}),
            &text,
        );
        assert_eq!(r.result["attacker_advantage"], false);
        let attackers = r.result["attackers"].as_array().unwrap();
        for (n, defender) in r.result["defenders"].as_array().unwrap().iter().enumerate() {
            let attack = die_values(&attackers[n])[0];
            assert_eq!(die_values(defender).len(), 1, "every defender fights back");
            if attack <= 3 {
                let s = defender["survival_die"].as_u64().unwrap();
                assert_eq!(defender["fate"], if s >= 5 { "flesh wound" } else { "dead" });
                dead_fought |= s < 5;
            }
            // Cavalry die to 1,2 only.
            let back = die_values(defender)[0];
            assert_eq!(attackers[n]["hits"].as_u64().unwrap(), u64::from(back <= 2));
        }
    }
    assert!(dead_fought);
}

#[test]
fn a_storming_ladder_has_no_attack_advantage() {
    let r = ok(
        "melee_round",
        json!({"round": 1, "place": "ladder", "attacker": {"troops": "infantry", "men": 2},
               "defender": {"troops": "infantry", "men": 2}}),
        "ladder",
    );
    assert_eq!(r.result["attacker_advantage"], false);
    let r = refused(
        &Schulz,
        "melee_round",
        json!({"round": 1, "place": "wall", "attacker": {"troops": "infantry", "men": 3},
               "defender": {"troops": "infantry", "men": 2}}),
    );
    assert_eq!((r.field.as_str(), r.rule.as_str()), ("body.inputs.attacker.men", "melee.group"));
}

#[test]
fn a_retreat_ends_the_melee_without_dice() {
    for (a, d, attacker_retreats, defender_retreats) in
        [("retreat", "stay", true, false), ("stay", "retreat", false, true), ("retreat", "retreat", true, true)]
    {
        let r = ok(
            "melee_round",
            json!({"round": 3, "attacker": {"troops": "infantry", "men": 2},
                   "defender": {"troops": "infantry", "men": 2},
                   "attacker_choice": a, "defender_choice": d}),
            "retreat",
        );
        assert!(r.dice.is_empty());
        assert_eq!(r.result["fought"], false);
        assert_eq!(r.result["melee_over"], true);
        assert_eq!(r.result["attacker_retreats"], attacker_retreats);
        assert_eq!(r.result["defender_retreats"], defender_retreats);
    }
}

#[test]
fn an_undecided_round_asks_both_groups_for_their_sealed_choice() {
    let mut undecided = 0;
    for text in streams(60) {
        let r = ok(
            "melee_round",
            melee(1, json!({"troops": "cavalry", "men": 1}), json!({"troops": "cavalry", "men": 1})),
            &text,
        );
        if r.result["melee_over"] == false {
            undecided += 1;
            assert_eq!(r.result["choices_needed_for_round"], 2);
            assert!(r.headline.contains("sealed"));
        } else {
            assert!(r.result["winner"].is_string());
        }
    }
    assert!(undecided > 0);
}

#[test]
fn the_choices_belong_to_rounds_after_the_first() {
    let first = |field: &str| {
        let mut inputs = melee(1, json!({"troops": "infantry", "men": 1}), json!({"troops": "infantry", "men": 1}));
        inputs[field] = json!("stay");
        inputs
    };
    let r = refused(&Schulz, "melee_round", first("attacker_choice"));
    assert_eq!((r.field.as_str(), r.rule.as_str()), ("body.inputs.attacker_choice", "melee.choice"));
    let r = refused(&Schulz, "melee_round", first("defender_choice"));
    assert_eq!(r.field, "body.inputs.defender_choice");
    let mut second = melee(2, json!({"troops": "infantry", "men": 1}), json!({"troops": "infantry", "men": 1}));
    second["attacker_choice"] = json!("stay");
    let r = refused(&Schulz, "melee_round", second.clone());
    assert_eq!((r.field.as_str(), r.rule.as_str()), ("body.inputs.defender_choice", "melee.choice"));
    second["defender_choice"] = json!("charge");
    let r = refused(&Schulz, "melee_round", second);
    assert_eq!(r.field, "body.inputs.defender_choice");
}

#[test]
fn melee_groups_are_one_to_ten_men() {
    let group = |men: u32| json!({"troops": "infantry", "men": men});
    ok("melee_round", melee(1, group(10), group(1)), "ten");
    let r = refused(&Schulz, "melee_round", melee(1, group(11), group(1)));
    assert_eq!((r.field.as_str(), r.rule.as_str()), ("body.inputs.attacker.men", "melee.group"));
    let r = refused(&Schulz, "melee_round", melee(1, group(1), group(0)));
    assert_eq!(r.field, "body.inputs.defender.men");
    let r = refused(&Schulz, "melee_round", melee(0, group(1), group(1)));
    assert_eq!((r.field.as_str(), r.rule.as_str()), ("body.inputs.round", "melee.round"));
}

#[test]
fn the_rest_of_a_beaten_gun_crew_must_attack() {
    let mut seen = false;
    for text in streams(100) {
        let r = ok(
            "melee_round",
            json!({"round": 1, "attacker": {"troops": "infantry", "men": 2},
                   "defender": {"troops": "artillery_men", "men": 1}, "rest_of_gun_crew": 2}),
            &text,
        );
        let won = r.result["winner"] == "attacker";
        assert_eq!(r.result["rest_of_gun_crew_must_attack"], won);
        seen |= won;
    }
    assert!(seen);
    let r = refused(
        &Schulz,
        "melee_round",
        json!({"round": 1, "attacker": {"troops": "infantry", "men": 2},
               "defender": {"troops": "infantry", "men": 1}, "rest_of_gun_crew": 2}),
    );
    assert_eq!((r.field.as_str(), r.rule.as_str()), ("body.inputs.rest_of_gun_crew", "melee.gun_crew"));
    // Three in the melee and one left out is a full crew of 4; two left out is one too many.
    let crew = |rest: u32| {
        json!({"round": 1, "attacker": {"troops": "infantry", "men": 5},
               "defender": {"troops": "artillery_men", "men": 3}, "rest_of_gun_crew": rest})
    };
    ok("melee_round", crew(1), "crew");
    let r = refused(&Schulz, "melee_round", crew(2));
    assert_eq!(r.field, "body.inputs.rest_of_gun_crew");
    // Artillery men fighting as a group of their own need no crew count.
    ok(
        "melee_round",
        melee(1, json!({"troops": "infantry", "men": 6}), json!({"troops": "artillery_men", "men": 6})),
        "crew",
    );
}

// ----------------------------------------------------------------------------------------------
// Storming
// ----------------------------------------------------------------------------------------------

#[test]
fn a_ladder_is_pushed_off_on_one_or_two_and_the_fall_is_survived_on_four_to_six() {
    let (mut pushed, mut stayed) = (0, 0);
    for text in streams(100) {
        let r = ok("ladder_push_off", json!({"men_on_ladder": 2}), &text);
        let push = r.dice[0].value;
        assert_eq!(r.result["pushed_off"], push <= 2);
        if push <= 2 {
            pushed += 1;
            assert_eq!(r.dice.len(), 3);
            for (n, fall) in r.result["falls"].as_array().unwrap().iter().enumerate() {
                assert_eq!(fall["survives"], r.dice[n + 1].value >= 4);
            }
        } else {
            stayed += 1;
            assert_eq!(r.dice.len(), 1);
        }
    }
    assert!(pushed > 0 && stayed > 0);
    let r = refused(&Schulz, "ladder_push_off", json!({"men_on_ladder": 3}));
    assert_eq!((r.field.as_str(), r.rule.as_str()), ("body.inputs.men_on_ladder", "storming.ladder"));
}

// ----------------------------------------------------------------------------------------------
// Moving
// ----------------------------------------------------------------------------------------------

fn moves(inputs: Value) -> f64 {
    ok("move_allowance", inputs, "move").result["move_inches"].as_f64().unwrap()
}

#[test]
fn men_and_cavalry_move_by_the_table() {
    assert_eq!(moves(json!({"mover": "men"})), 6.0);
    assert_eq!(moves(json!({"mover": "men", "ground": "up"})), 4.0);
    assert_eq!(moves(json!({"mover": "men", "ground": "down"})), 8.0);
    assert_eq!(moves(json!({"mover": "men", "ground": "road"})), 9.0);
    assert_eq!(moves(json!({"mover": "cavalry"})), 12.0);
    assert_eq!(moves(json!({"mover": "cavalry", "ground": "up"})), 8.0);
    assert_eq!(moves(json!({"mover": "cavalry", "ground": "road"})), 18.0);
}

#[test]
fn vehicles_move_by_their_load() {
    assert_eq!(moves(json!({"mover": "four_horse_caisson", "load": "cannon"})), 11.0);
    assert_eq!(moves(json!({"mover": "two_horse_caisson", "load": "cannon"})), 10.0);
    assert_eq!(moves(json!({"mover": "wagon"})), 11.0);
    assert_eq!(moves(json!({"mover": "wagon", "load": "cannon", "ground": "down"})), 12.0);
    assert_eq!(moves(json!({"mover": "two_horses", "load": "gatling", "ground": "up"})), 6.5);
    assert_eq!(moves(json!({"mover": "wagon", "load": "gatling", "ground": "up"})), 7.5);
    assert_eq!(moves(json!({"mover": "two_horses", "load": "cannon", "ground": "down"})), 10.5);
}

#[test]
fn killed_horses_take_their_share_and_dropping_one_takes_half() {
    // 4-horse caisson empty 12", one of four killed: 9", uphill 6"; dropping it: 3".
    assert_eq!(moves(json!({"mover": "four_horse_caisson", "horses_killed": 1})), 9.0);
    assert_eq!(moves(json!({"mover": "four_horse_caisson", "horses_killed": 1, "ground": "up"})), 6.0);
    assert_eq!(
        moves(json!({"mover": "four_horse_caisson", "horses_killed": 1, "ground": "up",
                     "dropping_dead_horse": true})),
        3.0
    );
    assert_eq!(moves(json!({"mover": "two_horses", "horses_killed": 2})), 0.0);
    // 11" with cannon less a quarter (one of four horses) is 8.25", to 8"; up 5.5"; halved.
    assert_eq!(
        moves(json!({"mover": "four_horse_caisson", "load": "cannon", "horses_killed": 1,
                     "ground": "up", "dropping_dead_horse": true})),
        2.75
    );
    assert_eq!(
        moves(json!({"mover": "wagon", "team_horses": 6, "horses_killed": 2})),
        7.5,
        "11\" less a third is 7.33\", to the half inch 7.5\""
    );
    let r = refused(&Schulz, "move_allowance", json!({"mover": "wagon", "horses_killed": 1}));
    assert_eq!((r.field.as_str(), r.rule.as_str()), ("body.inputs.team_horses", "move.team_horses"));
    let r = refused(&Schulz, "move_allowance", json!({"mover": "two_horse_caisson", "horses_killed": 3}));
    assert_eq!((r.field.as_str(), r.rule.as_str()), ("body.inputs.horses_killed", "move.horses_killed"));
    let r = refused(&Schulz, "move_allowance", json!({"mover": "men", "horses_killed": 1}));
    assert_eq!(r.field, "body.inputs.horses_killed");
}

#[test]
fn water_blockades_and_tasks_cost_half_a_move_each() {
    assert_eq!(moves(json!({"mover": "men", "crossing": "river"})), 3.0);
    assert_eq!(moves(json!({"mover": "cavalry", "crossing": "pond_or_bay"})), 6.0);
    assert_eq!(moves(json!({"mover": "men", "crossing_blockade": true})), 3.0);
    assert_eq!(moves(json!({"mover": "wagon", "crossing": "river"})), 5.5);
    assert_eq!(moves(json!({"mover": "cavalry", "half_move_tasks": 1})), 6.0);
    assert_eq!(moves(json!({"mover": "cavalry", "half_move_tasks": 2})), 0.0);
    assert_eq!(
        moves(json!({"mover": "men", "crossing": "river", "crossing_blockade": true,
                     "half_move_tasks": 1})),
        0.0
    );
    // "4 men can move a cannon 3/turn", uphill a third less.
    assert_eq!(moves(json!({"mover": "men_hauling_cannon", "haulers": 4})), 3.0);
    assert_eq!(moves(json!({"mover": "men_hauling_cannon", "haulers": 6, "ground": "up"})), 2.0);
    assert_eq!(moves(json!({"mover": "men_hauling_mortar", "haulers": 3, "crossing": "river"})), 1.5);
    assert_eq!(moves(json!({"mover": "men_hauling_gatling", "haulers": 2, "ground": "road"})), 4.5);
    for (inputs, field, rule) in [
        (json!({"mover": "wagon", "crossing": "pond_or_bay"}), "crossing", "move.pond"),
        (json!({"mover": "men_hauling_gatling", "haulers": 2, "crossing": "pond_or_bay"}), "crossing", "move.pond"),
        (json!({"mover": "men_hauling_cannon", "haulers": 4, "crossing": "river"}), "crossing", "move.river"),
        (json!({"mover": "wagon", "crossing_blockade": true}), "crossing_blockade", "move.blockade"),
        (json!({"mover": "men_hauling_cannon", "haulers": 3}), "haulers", "move.haulers"),
        (json!({"mover": "men_hauling_cannon"}), "haulers", "move.haulers"),
        (json!({"mover": "men", "haulers": 3}), "haulers", "move.haulers"),
        (json!({"mover": "men", "load": "cannon"}), "load", "move.load"),
        (json!({"mover": "men", "half_move_tasks": 3}), "half_move_tasks", "move.half_move_tasks"),
        (json!({"mover": "cavalry", "team_horses": 3}), "team_horses", "move.team_horses"),
        (json!({"mover": "tram"}), "mover", "resolver.inputs"),
    ] {
        let r = refused(&Schulz, "move_allowance", inputs);
        assert_eq!((r.field.as_str(), r.rule.as_str()), (format!("body.inputs.{field}").as_str(), rule));
    }
}

// ----------------------------------------------------------------------------------------------
// Refusals: each kind of bad input names its field (and, as every refusal here, comes before
// any die: `resolver::testing`)
// ----------------------------------------------------------------------------------------------

#[test]
fn bad_inputs_are_refused_naming_the_field() {
    let target = json!({"troops": "infantry", "men": 2});
    for (action, inputs, field, rule) in [
        (
            "small_arms_fire",
            json!({"shooters": "infantry", "men": 0, "range_inches": 3, "target": target}),
            "body.inputs.men",
            "fire.men",
        ),
        (
            "small_arms_fire",
            json!({"shooters": "infantry", "men": 101, "range_inches": 3, "target": target}),
            "body.inputs.men",
            "fire.men",
        ),
        (
            "small_arms_fire",
            json!({"shooters": "infantry", "men": 1, "range_inches": -1, "target": target}),
            "body.inputs.range_inches",
            "fire.range",
        ),
        (
            "small_arms_fire",
            json!({"shooters": "gatling_gun", "men": 1, "range_inches": 3, "target": target}),
            "body.inputs.shooters",
            "resolver.inputs",
        ),
        (
            "small_arms_fire",
            json!({"shooters": "infantry", "men": 1, "range_inches": 3, "target": target, "dice": 3}),
            "body.inputs.dice",
            "resolver.inputs",
        ),
        (
            "small_arms_fire",
            json!({"shooters": "infantry", "men": 1, "range_inches": 3}),
            "body.inputs",
            "resolver.inputs",
        ),
        (
            "small_arms_fire",
            json!({"shooters": "infantry", "men": 1, "range_inches": "far", "target": target}),
            "body.inputs.range_inches",
            "resolver.inputs",
        ),
        (
            "small_arms_fire",
            json!({"shooters": "infantry", "men": 1, "range_inches": 3, "target": {"troops": "zouaves", "men": 1}}),
            "body.inputs.target.troops",
            "resolver.inputs",
        ),
        (
            "small_arms_fire",
            json!({"shooters": "infantry", "men": 1, "range_inches": 3, "target": {"troops": "infantry", "men": 2, "hit_earlier_this_turn": 3}}),
            "body.inputs.target.hit_earlier_this_turn",
            "fire.hit_earlier",
        ),
        (
            "melee_round",
            json!({"round": 1, "attacker": {"troops": "infantry", "men": 2, "hit_earlier_this_turn": 3},
                   "defender": {"troops": "infantry", "men": 2}}),
            "body.inputs.attacker.hit_earlier_this_turn",
            "melee.hit_earlier",
        ),
        (
            "small_arms_fire",
            json!({"shooters": "infantry", "men": 1, "range_inches": 3, "target": {"troops": "infantry", "men": 2, "cover": "hedge"}}),
            "body.inputs.target.cover",
            "resolver.inputs",
        ),
        (
            "gatling_fire",
            json!({"crew": 1, "range_inches": 3, "under_pattern": []}),
            "body.inputs.under_pattern",
            "fire.targets",
        ),
        (
            "gatling_fire",
            json!({"crew": 1, "range_inches": 13, "under_pattern": [target]}),
            "body.inputs.range_inches",
            "fire.range",
        ),
        (
            "gatling_fire",
            json!({"crew": 1, "range_inches": 3, "under_pattern": [target, {"troops": "infantry", "men": 0}]}),
            "body.inputs.under_pattern[1].men",
            "fire.men",
        ),
        (
            "artillery_fire",
            json!({"piece": "mortar", "crew": 1, "range_inches": 5}),
            "body.inputs.range_inches",
            "artillery.range",
        ),
        (
            "artillery_fire",
            json!({"piece": "howitzer", "crew": 1, "range_inches": 5}),
            "body.inputs.piece",
            "resolver.inputs",
        ),
        (
            "artillery_fire",
            json!({"piece": "mortar", "crew": 1, "range_inches": 12, "horses_under_pattern": 101}),
            "body.inputs.horses_under_pattern",
            "artillery.horses",
        ),
        (
            "artillery_fire",
            json!({"piece": "mortar", "crew": 1, "range_inches": 12, "structures": [{"kind": "fort_tower", "points": 30}]}),
            "body.inputs.structures[0].points",
            "structure.points",
        ),
    ] {
        assert_refused(&Schulz, action, inputs, field, rule);
    }
}

#[test]
fn an_unknown_action_is_refused() {
    let r = refused(&Schulz, "cavalry-charge", json!({}));
    assert_eq!((r.field.as_str(), r.rule.as_str()), ("body.action", "resolver.unknown_action"));
}
// ----------------------------------------------------------------------------------------------
// The worked example in docs/rules/schulz-acw.md
// ----------------------------------------------------------------------------------------------

const WORKED_TEXT: &str = "c0ffee00-0000-4000-8000-000000000001/7/2026-11-21T09:51:45.123Z";

#[test]
fn the_documented_worked_example() {
    // SHA-256(text + "/0") begins c0 e4 f5 6b 89: bytes 192, 228, 245, 107, 137, all under 252,
    // so the d6s are 192 mod 6 + 1 = 1, 1, 6, 6, 6.
    let block = DiceStream::block_of(WORKED_TEXT, 0);
    assert_eq!(&block[..5], &[0xc0, 0xe4, 0xf5, 0x6b, 0x89]);

    let r = ok(
        "melee_round",
        json!({"round": 1, "attacker": {"troops": "infantry", "men": 4},
               "defender": {"troops": "artillery_men", "men": 3}, "rest_of_gun_crew": 1}),
        WORKED_TEXT,
    );
    let dice: Vec<(u32, &str)> = r.dice.iter().map(|d| (d.value, d.purpose.as_str())).collect();
    assert_eq!(
        dice,
        [
            (1, "melee, attacker 1 at defender 1"),
            (1, "melee, attacker 2 at defender 2"),
            (6, "melee, attacker 3 at defender 3"),
            (6, "melee, attacker 4 at defender 1"),
            (6, "melee, defender 3 fights back at attacker 3"),
        ]
    );
    assert_eq!(
        r.headline,
        "Melee round 1: 4 infantry against 3 artillery men: attackers lose 0, defenders lose 2; \
         both groups now choose, sealed, to stay or retreat before round 2"
    );
    assert_eq!(r.result["choices_needed_for_round"], 2);
    assert_eq!(r.result["rest_of_gun_crew_must_attack"], false);

    let r = ok("ladder_push_off", json!({"men_on_ladder": 2}), WORKED_TEXT);
    assert_eq!(r.headline, "Ladder push 1: pushed off the wall; 1 of 2 men on it survive the fall");
}
