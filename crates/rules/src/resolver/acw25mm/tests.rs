//! The acw-25mm ruleset against its seed: every table cell, every worked example, every
//! modifier at its bounds, every action's example, and a refusal for each kind of bad input.

use serde_json::{json, Value};

use super::army::{average_die, brigade_sizes, regiment_figures};
use super::combat::{range_band, rout_points, score_to_hit, FireTarget, MoraleChart};
use super::setup::{daylight, flank_march_arrival, river_end_square, Flank};
use super::tables::*;
use super::{Acw25mm, Class, Cover, Range};
use crate::resolver::testing::{assert_refused, refused};
use crate::resolver::{self, Resolution, Ruleset};
use crate::DiceStream;

fn stream(n: u64) -> DiceStream {
    DiceStream::from_text(format!("acw-25mm tests/{n}"))
}

fn resolve(action: &str, inputs: &Value, n: u64) -> Resolution {
    resolver::resolve(&Acw25mm, action, inputs, stream(n))
        .unwrap_or_else(|refusal| panic!("{action} refused: {refusal}"))
}

/// The dice of a resolution whose purpose starts with `prefix`.
fn dice_for(resolution: &Resolution, prefix: &str) -> Vec<u32> {
    resolution.dice.iter().filter(|d| d.purpose.starts_with(prefix)).map(|d| d.value).collect()
}

fn count_at_least(dice: &[u32], score: u32) -> u64 {
    dice.iter().filter(|&&d| d >= score).count() as u64
}

/// The lowest number of a seed cell such as "+4 +5 +6" or "7 8  9 10", checking the cell
/// runs without a gap up to the die's top face.
fn lowest_of(cell: &str, top: u32) -> u32 {
    let numbers: Vec<u32> =
        cell.split_whitespace().map(|n| n.trim_start_matches('+').parse().expect("a number")).collect();
    let low = numbers[0];
    assert_eq!(numbers, (low..=top).collect::<Vec<_>>(), "cell {cell}");
    low
}

fn class(letter: &str) -> Class {
    serde_json::from_value(json!(letter)).expect("a class letter")
}

// ---------------------------------------------------------------------------------------------
// The ruleset as the API lists it

#[test]
fn the_ruleset_is_registered_by_name() {
    let ruleset = resolver::ruleset("acw-25mm").expect("registered");
    assert_eq!(ruleset.seed(), "001_4467c6c8e3357613.txt");
    let names: Vec<&str> = ruleset.actions().iter().map(|a| a.name).collect();
    assert_eq!(
        names,
        [
            "choose_sides",
            "town",
            "river_end",
            "terrain",
            "army",
            "fire",
            "melee",
            "formation_test",
            "morale",
            "jump_obstacle",
            "cross_river",
            "flank_march",
            "time_of_day",
            "wind",
            "bombard",
            "victory_points"
        ]
    );
}

#[test]
fn every_action_example_resolves() {
    for action in Acw25mm.actions() {
        for n in 0..20 {
            let resolution = resolver::resolve(&Acw25mm, action.name, &action.example, stream(n))
                .unwrap_or_else(|r| panic!("{} example refused: {r}", action.name));
            assert!(!resolution.headline.is_empty());
            assert_eq!(resolution.ruleset, "acw-25mm");
        }
    }
}

#[test]
fn input_schemas_carry_the_field_descriptions() {
    let fire = Acw25mm.actions().into_iter().find(|a| a.name == "fire").expect("fire");
    let figures = &fire.input_schema["properties"]["figures"];
    assert!(figures["description"].as_str().is_some_and(|d| d.contains("artillery men")));
    assert_eq!(figures["minimum"], 1);
    assert_eq!(figures["maximum"], 20);
    assert_eq!(fire.input_schema["additionalProperties"], false);
    let required = fire.input_schema["required"].as_array().expect("required");
    assert!(required.contains(&json!("range_cm")));
}

#[test]
fn an_unknown_action_or_field_is_refused() {
    let refusal = resolver::resolve(&Acw25mm, "parley", &json!({}), stream(0)).unwrap_err();
    assert_eq!(refusal.field, "body.action");
    let refusal = refused(&Acw25mm, "formation_test", json!({ "class": "A", "colour": "blue" }));
    assert_eq!(refusal.rule, "resolver.inputs");
    assert!(refusal.detail.contains("colour"), "{refusal}");
    assert_refused(&Acw25mm, "formation_test", json!({ "class": "F" }), "body.inputs.class", "resolver.inputs");
    assert_refused(
        &Acw25mm,
        "fire",
        json!({ "fire_by": "volley", "class": "A", "figures": 3, "range_cm": 3,
                "target": "line", "target_cover": "open" }),
        "body.inputs.fire_by",
        "resolver.inputs",
    );
}

// ---------------------------------------------------------------------------------------------
// Tables, cell by cell against the seed's text

#[test]
fn average_die_faces() {
    // The issue: "the average die (faces 2,3,3,4,4,5)".
    let faces: Vec<u32> = (1..=6).map(average_die).collect();
    assert_eq!(faces, [2, 3, 3, 4, 4, 5]);
}

#[test]
fn foot_regiment_classes_follow_the_seed_lists() {
    let count = |list: &[(&str, Class)], c: Class| list.iter().filter(|(_, k)| *k == c).count();
    // Federal: 3 A, 1 B, 5 C, 2 D, 1 E.
    let federal: Vec<usize> =
        [Class::A, Class::B, Class::C, Class::D, Class::E].iter().map(|&c| count(&FEDERAL_FOOT, c)).collect();
    assert_eq!(federal, [3, 1, 5, 2, 1]);
    // Confederate: 2 A, 1 B, 3 C, 2 D.
    let confederate: Vec<usize> =
        [Class::A, Class::B, Class::C, Class::D, Class::E].iter().map(|&c| count(&CONFEDERATE_FOOT, c)).collect();
    assert_eq!(confederate, [2, 1, 3, 2, 0]);
    assert_eq!(FEDERAL_FOOT[3], ("Regular Infantry", Class::B));
    assert_eq!(CONFEDERATE_FOOT[2], ("Regular Infantry", Class::B));
}

#[test]
fn cavalry_and_battery_class_by_d6() {
    // "1 2 C Class 3 4 B Class 5 6 A Class"
    let seed = [("1 2", Class::C), ("3 4", Class::B), ("5 6", Class::A)];
    for (faces, expected) in seed {
        for face in faces.split(' ') {
            let face: usize = face.parse().expect("face");
            assert_eq!(CAVALRY_AND_BATTERY_CLASS[face - 1], expected, "face {face}");
        }
    }
}

#[test]
fn ranges_table() {
    use RangedWeapon::*;
    // (weapon, short up to, long up to) as the seed's "Ranges" table gives them.
    let seed = [
        (Musket, Some(15), Some(30)),
        (MusketAfter1862, Some(15), Some(90)),
        (Rifle, Some(30), Some(120)),
        (Bow, None, Some(20)),
        (Shotgun, Some(5), None),
        (Carbine, Some(15), Some(50)),
        (FieldGun, Some(30), Some(120)),
        (HeavyGun, Some(45), Some(180)),
    ];
    for (weapon, short, long) in seed {
        assert_eq!(range_bands(weapon), (short, long), "{weapon:?}");
        if let Some(short) = short {
            assert_eq!(range_band(weapon, 0), Some(Range::Short));
            assert_eq!(range_band(weapon, short), Some(Range::Short));
        }
        let reach = long.or(short).expect("a reach");
        assert_eq!(range_band(weapon, reach + 1), None, "{weapon:?}");
        if let Some(long) = long {
            assert_eq!(range_band(weapon, long), Some(Range::Long));
            assert_eq!(range_band(weapon, short.unwrap_or(0) + 1), Some(Range::Long));
        }
    }
}

#[test]
fn score_required_to_hit() {
    // "Inf/Cav Firing A +2 B +3 C +4 D +5 E +6 / Artillery firing A +2 B +3 C +4"
    for (letter, small_arms, artillery) in
        [("A", 2, Some(2)), ("B", 3, Some(3)), ("C", 4, Some(4)), ("D", 5, None), ("E", 6, None)]
    {
        assert_eq!(small_arms_to_hit(class(letter)), small_arms);
        assert_eq!(artillery_to_hit(class(letter)), artillery);
    }
}

#[test]
fn saving_throw_tables() {
    // Rows Open, Soft Cover, Hard Cover; (short, long), copied from the seed's text.
    let small_arms = [("+5 +6", "+4 +5 +6"), ("+4 +5 +6", "+3  +4 +5 +6"), ("+3 +4 +5  +6", "+2 +3 +4 +5 +6")];
    let artillery = [("+6", "+5  +6"), ("+5 +6", "+4 +5 +6"), ("+4 +5 +6", "+3 +4 +5 +6")];
    for (cover, ((s_short, s_long), (a_short, a_long))) in
        [Cover::Open, Cover::Soft, Cover::Hard].into_iter().zip(small_arms.into_iter().zip(artillery))
    {
        let row = cover_row(cover);
        assert_eq!(SMALL_ARMS_SAVES[row][range_column(Range::Short)], lowest_of(s_short, 6));
        assert_eq!(SMALL_ARMS_SAVES[row][range_column(Range::Long)], lowest_of(s_long, 6));
        assert_eq!(ARTILLERY_SAVES[row][range_column(Range::Short)], lowest_of(a_short, 6));
        assert_eq!(ARTILLERY_SAVES[row][range_column(Range::Long)], lowest_of(a_long, 6));
    }
}

/// The melee table's rows as the seed prints them: open, behind soft, behind hard cover.
const SEED_SCORES_TO_KILL: [(&str, &str, &str, &str); 6] = [
    ("E", "3 4 5 6 7 8 9 10", "4  5 6 7 8 9 10", "5  6 7 8 9 10"),
    ("D", "4 5 6 7 8 9 10", "5 6 7  8 9 10", "6 7 8 9 10"),
    ("C", "5 6 7 8 9 10", "6 7 8 9 10", "7  8 9 10"),
    ("B", "7 8  9 10", "8 9 10", "9  10"),
    ("A", "8  9 10", "9 10", "10"),
    ("Officers", "8 9 10", "9 10", "10"),
];

#[test]
fn scores_to_kill_table() {
    for (row, open, soft, hard) in SEED_SCORES_TO_KILL {
        let kill_row = if row == "Officers" { KillRow::Officers } else { KillRow::Class(class(row)) };
        assert_eq!(kill_score(kill_row, Cover::Open), lowest_of(open, 10), "{row}");
        assert_eq!(kill_score(kill_row, Cover::Soft), lowest_of(soft, 10), "{row}");
        assert_eq!(kill_score(kill_row, Cover::Hard), lowest_of(hard, 10), "{row}");
    }
}

#[test]
fn melee_action_reads_every_cell() {
    for (row, open, soft, hard) in SEED_SCORES_TO_KILL {
        let target = if row == "Officers" { "officer" } else { row };
        for (cover, cell) in [("open", open), ("soft", soft), ("hard", hard)] {
            let resolution = resolve(
                "melee",
                &json!({ "figures": 3, "target_figures": 1, "target_class": target,
                         "target_cover": cover }),
                1,
            );
            assert_eq!(resolution.result["score_to_kill"], json!(lowest_of(cell, 10)), "{row} {cover}");
        }
    }
}

#[test]
fn formation_fail_test_table() {
    // "To Pass A Class +2 B Class +3 C Class +4 D Class +5 E Class +6"
    for (letter, pass) in [("A", 2), ("B", 3), ("C", 4), ("D", 5), ("E", 6)] {
        assert_eq!(formation_test_pass(class(letter)), pass);
    }
}

/// "Check Chart Infantry and Cavalry", as printed.
const SEED_INFANTRY_CAVALRY_CHART: &str = "\
Figures in Reg   11  12  13  14  15  16  17  18  19  20
A Class                4    5     5    6    6    6     7    7     8    8
B Class                5    5     6     6   7     7    8    8      9    9
C Class                6    6     7      7  7     8    9    9     10   10
D Class               7      7    8     9   9    10   11   11  12   12
E  Class              8      8     9    10  11  11  12   13  14   14";

/// "Check Chart Sharpshooters and Artillery men", as printed.
const SEED_SHARPSHOOTERS_ARTILLERY_CHART: &str = "\
Figures   in  Company or Battery            4  5   6  7  8
A  Class    2   2   2   3   3
B  Class    2   2   3   3   4
C  Class    2   3   3   4   4";

fn check_chart(text: &str, chart: MoraleChart) {
    let mut lines = text.lines();
    let header: Vec<u32> = lines.next().expect("header").split_whitespace().filter_map(|w| w.parse().ok()).collect();
    let mut rows = 0;
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        let letter = words[0];
        let cells: Vec<i32> = words[2..].iter().map(|w| w.parse().expect("cell")).collect();
        assert_eq!(cells.len(), header.len(), "{line}");
        for (&figures, &cell) in header.iter().zip(&cells) {
            assert_eq!(
                rout_points(chart, class(letter), figures),
                Some((figures, cell)),
                "{letter} class, {figures} figures"
            );
        }
        rows += 1;
    }
    assert!(rows >= 3);
}

#[test]
fn morale_charts() {
    check_chart(SEED_INFANTRY_CAVALRY_CHART, MoraleChart::InfantryCavalry);
    check_chart(SEED_SHARPSHOOTERS_ARTILLERY_CHART, MoraleChart::SharpshootersArtillery);
    assert_eq!(rout_points(MoraleChart::SharpshootersArtillery, Class::D, 5), None);
}

#[test]
fn hit_values_for_destruction() {
    // "Stone Buildings … 40 hits Stone Bridges … 40 hits Wooden buildings and bridges … 20hits.
    // Earthworks /fieldworks … 40hits per 6" … Each 6" of stone wall … 20 hits. Each 6" of
    // fence … 10 hits."
    use Structure::*;
    for (structure, hits, per_six, troops) in [
        (StoneBuilding, 40, false, true),
        (StoneBridge, 40, false, true),
        (WoodenBuilding, 20, false, true),
        (WoodenBridge, 20, false, true),
        (Earthworks, 40, true, false),
        (Fieldworks, 40, true, false),
        (StoneWall, 20, true, false),
        (Fence, 10, true, false),
    ] {
        assert_eq!(hit_value(structure), (hits, per_six, troops), "{structure:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Worked examples

#[test]
fn worked_example_b_class_hit_score_is_5() {
    // "I.e a B class foot regiment has a formation fail +1 and is firing at skirmishers+1 in
    // the open so the dice score needed to hit would be +5"
    let mut lookups = Vec::new();
    assert_eq!(score_to_hit(small_arms_to_hit(Class::B), true, FireTarget::Skirmish, &mut lookups), 5);
    let resolution = resolve(
        "fire",
        &json!({ "fire_by": "line", "class": "B", "figures": 12, "weapon": "musket",
                 "range_cm": 10, "formation_fail": true, "target": "skirmish",
                 "target_cover": "open" }),
        7,
    );
    assert_eq!(resolution.result["score_needed"], 5);
    let cells: Vec<&str> = resolution.lookups.iter().map(|l| l.value.as_str()).collect();
    assert_eq!(cells[..3], ["+3", "+1", "+1"]);
}

#[test]
fn worked_example_morale_detached_figures() {
    // "You have a B Class 12 figure foot regiment in the open and detach 2 figures to a
    // Artillery Battery. You then lose 2 figures to Infantry fire. So you will have 8 figures
    // left that is 8 points look at chart B Class and 12 figs so your regiment is ok"
    let resolution = resolve(
        "morale",
        &json!({ "chart": "infantry_cavalry", "class": "B", "original_figures": 12,
                 "figures_present": 8 }),
        0,
    );
    assert_eq!(resolution.result["points"], 8);
    assert_eq!(resolution.result["routs_at"], 5);
    assert_eq!(resolution.result["routs"], false);
    assert!(resolution.dice.is_empty());
}

#[test]
fn worked_example_morale_five_casualties() {
    // "A B class Regiment with 12 figures in the open sustains 5 casualties to Infantry fire
    // so 7 figures are left that is 7points … The regiment is ok 5 points is the total which
    // the unit will rout at"
    let resolution = resolve(
        "morale",
        &json!({ "chart": "infantry_cavalry", "class": "B", "original_figures": 12,
                 "figures_present": 7 }),
        0,
    );
    assert_eq!(resolution.result["points"], 7);
    assert_eq!(resolution.result["routs_at"], 5);
    assert_eq!(resolution.result["routs"], false);
    assert_eq!(resolution.lookups.last().map(|l| l.value.as_str()), Some("5"));
}

#[test]
fn worked_example_battery_morale() {
    // "A Federal B Class Artillery Battery in the open loses 2 Artillery Men to Infantry Fire
    // so 3 figures left that is 3 points … B Class then look up 5 figures. The battery is ok
    // 2 points is the total which the unit will rout at"
    let resolution = resolve(
        "morale",
        &json!({ "chart": "sharpshooters_artillery", "class": "B",
                 "original_figures": FEDERAL_BATTERY_CREW, "figures_present": 3 }),
        0,
    );
    assert_eq!(resolution.result["points"], 3);
    assert_eq!(resolution.result["routs_at"], 2);
    assert_eq!(resolution.result["routs"], false);
}

#[test]
fn worked_example_figure_allocation() {
    // "You're A Class Regiment has 10 figures to start with and you throw 1xD10. You get a 7
    // so the A Class Regiment starts with 17 figures."
    assert_eq!(regiment_figures(7), 17);
    // Through the army action: the Federal first regiment is A class, 10 + its D10.
    for n in 0..20 {
        let army = resolve("army", &json!({ "side": "federal" }), n);
        let first = &army.result["foot"][0];
        assert_eq!(first["class"], "A");
        let d10 = dice_for(&army, "extra figures, foot regiment 1")[0];
        assert_eq!(first["figures"], json!(10 + d10));
    }
}

#[test]
fn worked_example_brigades_4_4_3() {
    // "The Confederate player has 8 Regiments of foot to start with and has thrown a 3 on the
    // Average Dice giving him a total of 11 Regiments … divide your regiments as follows 4 4 3.
    // You could squeeze 4 or 5 Brigades out if you wanted depending on the Dice throw"
    assert_eq!(brigade_sizes(11, 3), [4, 4, 3]);
    assert_eq!(brigade_sizes(11, 4), [4, 4, 3], "11 cannot make 4 brigades of 3");
    assert_eq!(brigade_sizes(13, 4), [4, 3, 3, 3]);
    assert_eq!(brigade_sizes(17, 5), [4, 4, 3, 3, 3]);
    let threes = (0..100)
        .map(|n| resolve("army", &json!({ "side": "confederate" }), n))
        .find(|army| army.result["average_die"]["extra_regiments"] == 3)
        .expect("an average die of 3 within 100 throws");
    assert_eq!(threes.result["foot"].as_array().map(Vec::len), Some(11));
    assert_eq!(threes.result["brigades"], json!([4, 4, 3]));
    assert_eq!(threes.result["brigadiers"], 3);
    assert_eq!(threes.result["divisional_officers"], 1);
}

#[test]
fn worked_example_formation_fail_test() {
    // "A Foot Regiment A Class … throws a Formation Fail Test 1xD6 The score is a 1 so the
    // Regiment fails … The score is a 4, the unit passes".
    let mut seen = [false; 7];
    for n in 0..200 {
        let test = resolve("formation_test", &json!({ "class": "A" }), n);
        let d6 = test.dice[0].value;
        assert_eq!(test.result["passed"], d6 >= 2);
        seen[d6 as usize] = true;
        if d6 == 1 {
            assert_eq!(test.result["passed"], false);
        }
        if d6 == 4 {
            assert_eq!(test.result["passed"], true);
        }
    }
    assert!(seen[1] && seen[4]);
}

#[test]
fn worked_example_time_of_day() {
    // "if you threw 13 the time is 1 o'clock in the afternoon, so you will have 7 hours left in
    // summer and 6 hours left in spring/autumn … Each 1 hour is equal to 4 turns per player."
    assert_eq!(daylight(13, SUMMER_DUSK), (7, 28));
    assert_eq!(daylight(13, SPRING_AUTUMN_DUSK), (6, 24));
}

#[test]
fn worked_example_terrain_hill_on_7() {
    // "1 Hill you throw a 7 so the hill is place in square 7": the first piece goes where its
    // first D10 says when the square is free.
    for n in 0..50 {
        let terrain = resolve("terrain", &json!({ "side": "federal", "holds_town": false }), n);
        let first = terrain.dice[0].value;
        assert_eq!(terrain.result["placements"][0]["square"], first);
    }
}

// ---------------------------------------------------------------------------------------------
// Army generation

#[test]
fn army_generation_follows_the_allocation_rules() {
    let mut upgrades = 0;
    for n in 0..200 {
        for (side, base, cavalry_die, crew) in [
            ("federal", &FEDERAL_FOOT[..], 3, FEDERAL_BATTERY_CREW),
            ("confederate", &CONFEDERATE_FOOT[..], 2, CONFEDERATE_BATTERY_CREW),
        ] {
            let swap = n % 2 == 0;
            let army = resolve("army", &json!({ "side": side, "sharpshooter_swap": swap }), n);
            let r = &army.result;
            assert_eq!(army.dice[0].faces, 6);
            let extra = average_die(army.dice[0].value);
            assert_eq!(r["average_die"]["extra_regiments"], extra);
            let foot = r["foot"].as_array().expect("foot");
            assert_eq!(foot.len(), base.len() + extra as usize);
            for (i, regiment) in foot.iter().enumerate() {
                let expected = match base.get(i) {
                    Some((_, class)) => *class,
                    None if i == base.len() && (4..=5).contains(&extra) => Class::B,
                    None => Class::C,
                };
                assert_eq!(regiment["class"], json!(expected), "{side} regiment {i}");
                let figures = regiment["figures"].as_u64().expect("figures");
                assert!((11..=20).contains(&figures));
            }
            upgrades += u32::from(r["average_die"]["b_upgrade"] == true);
            assert_eq!(army.dice[1].faces, cavalry_die);
            assert_eq!(army.dice[2].faces, cavalry_die);
            let cavalry = army.dice[1].value - u32::from(swap);
            assert_eq!(r["cavalry"].as_array().map(Vec::len), Some(cavalry as usize));
            assert_eq!(r["batteries"].as_array().map(Vec::len), Some(army.dice[2].value as usize));
            for battery in r["batteries"].as_array().expect("batteries") {
                assert_eq!(battery["figures"], crew);
                let d6 = battery["class_d6"].as_u64().expect("d6") as usize;
                assert_eq!(battery["class"], json!(CAVALRY_AND_BATTERY_CLASS[d6 - 1]));
            }
            for regiment in r["cavalry"].as_array().expect("cavalry") {
                let d6 = regiment["class_d6"].as_u64().expect("d6") as usize;
                assert_eq!(regiment["class"], json!(CAVALRY_AND_BATTERY_CLASS[d6 - 1]));
                assert_eq!(regiment["figures"], json!(10 + regiment["d10"].as_u64().unwrap()));
            }
            if swap {
                assert_eq!(r["sharpshooters"], json!({ "companies": 4, "figures": 8, "class": "B" }));
            } else {
                assert_eq!(r["sharpshooters"], Value::Null);
            }
            let brigades: Vec<u64> = serde_json::from_value(r["brigades"].clone()).unwrap();
            assert_eq!(brigades.len(), 3);
            assert_eq!(brigades.iter().sum::<u64>(), foot.len() as u64);
            assert!(brigades.iter().all(|&b| b >= 3));
        }
    }
    assert!(upgrades > 0);
}

#[test]
fn the_b_upgrade_can_be_declined() {
    let army = (0..100)
        .map(|n| resolve("army", &json!({ "side": "federal", "take_b_upgrade": false }), n))
        .find(|a| a.result["average_die"]["extra_regiments"].as_u64() >= Some(4))
        .expect("a 4 or 5 on the average die");
    assert_eq!(army.result["average_die"]["b_upgrade"], false);
    assert_eq!(army.result["foot"][12]["class"], "C");
}

// ---------------------------------------------------------------------------------------------
// Fire

fn fire(inputs: Value, n: u64) -> Resolution {
    resolve("fire", &inputs, n)
}

#[test]
fn dice_per_figure_by_formation_and_arm() {
    for (fire_by, figures, infantry, weapon, expected) in [
        ("line", 14, 0, Some("rifle"), 14),
        ("skirmish", 7, 0, Some("carbine"), 4),
        ("column", 8, 0, Some("musket"), 4),
        ("field_gun", 5, 0, None, 10),
        ("heavy_gun", 3, 2, None, 11),
        ("field_gun", 1, 4, None, 6),
    ] {
        let mut inputs = json!({ "fire_by": fire_by, "class": "C", "figures": figures,
                                 "infantry_crew": infantry, "range_cm": 10,
                                 "target": "line", "target_cover": "open" });
        if let Some(weapon) = weapon {
            inputs["weapon"] = json!(weapon);
        }
        let resolution = fire(inputs, 3);
        assert_eq!(resolution.result["dice"], expected, "{fire_by}");
        assert_eq!(dice_for(&resolution, "to hit").len(), expected as usize);
        assert_eq!(dice_for(&resolution, "to hit, infantry crew").len(), infantry as usize);
    }
}

#[test]
fn hits_saves_and_casualties_agree_with_the_dice() {
    for n in 0..100 {
        let resolution = fire(
            json!({ "fire_by": "line", "class": "C", "figures": 16, "weapon": "musket",
                    "range_cm": 25, "target": "line", "target_cover": "soft" }),
            n,
        );
        let r = &resolution.result;
        let to_hit = dice_for(&resolution, "to hit");
        let hits = count_at_least(&to_hit, 4);
        assert_eq!(r["hits"], hits);
        // Musket, long range, soft cover: "+3 +4 +5 +6".
        assert_eq!(r["save_on"], 3);
        let saves = dice_for(&resolution, "save");
        assert_eq!(saves.len() as u64, hits);
        let saved = count_at_least(&saves, 3);
        assert_eq!(r["saved"], saved);
        assert_eq!(r["casualties"], hits - saved);
        assert_eq!(r["morale_test"], hits > saved);
    }
}

#[test]
fn save_cells_through_the_fire_action() {
    for (cover, row) in [("open", 0), ("soft", 1), ("hard", 2)] {
        for (range_cm, column) in [(10, 0), (25, 1)] {
            let small = fire(
                json!({ "fire_by": "skirmish", "class": "A", "figures": 2, "weapon": "musket",
                        "range_cm": range_cm, "target": "line", "target_cover": cover }),
                1,
            );
            assert_eq!(small.result["save_on"], SMALL_ARMS_SAVES[row][column]);
        }
        for (range_cm, column) in [(30, 0), (31, 1)] {
            let gun = fire(
                json!({ "fire_by": "field_gun", "class": "A", "figures": 1,
                        "range_cm": range_cm, "target": "line", "target_cover": cover }),
                1,
            );
            assert_eq!(gun.result["save_on"], ARTILLERY_SAVES[row][column]);
        }
    }
}

#[test]
fn hit_score_modifiers_at_their_bounds() {
    // Lowest: A class firing at a column, no formation fail: 2 − 1 = 1, every die hits.
    let easiest = fire(
        json!({ "fire_by": "line", "class": "A", "figures": 20, "weapon": "rifle",
                "range_cm": 100, "target": "column", "target_cover": "open" }),
        2,
    );
    assert_eq!(easiest.result["score_needed"], 1);
    assert_eq!(easiest.result["hits"], 20);
    // Highest: E class in formation fail firing at skirmishers: 6 + 1 + 1 = 8, nothing hits.
    let hardest = fire(
        json!({ "fire_by": "line", "class": "E", "figures": 20, "weapon": "musket",
                "range_cm": 5, "formation_fail": true, "target": "skirmish",
                "target_cover": "open" }),
        2,
    );
    assert_eq!(hardest.result["score_needed"], 8);
    assert_eq!(hardest.result["hits"], 0);
    assert_eq!(hardest.result["morale_test"], false);
    // A battery: C class +4, formation fail +1.
    let battery = fire(
        json!({ "fire_by": "heavy_gun", "class": "C", "figures": 4, "range_cm": 180,
                "formation_fail": true, "target": "line", "target_cover": "hard" }),
        2,
    );
    assert_eq!(battery.result["score_needed"], 5);
    assert_eq!(battery.result["range"], "long");
    assert_eq!(battery.result["save_on"], 3);
}

#[test]
fn gunners_are_skirmishers_behind_soft_cover() {
    let open = fire(
        json!({ "fire_by": "line", "class": "C", "figures": 10, "weapon": "rifle",
                "range_cm": 20, "target": "gunners", "target_cover": "open" }),
        4,
    );
    assert_eq!(open.result["score_needed"], 5);
    assert_eq!(open.result["cover"], "soft");
    assert_eq!(open.result["save_on"], 4);
    let hard = fire(
        json!({ "fire_by": "line", "class": "C", "figures": 10, "weapon": "rifle",
                "range_cm": 20, "target": "gunners", "target_cover": "hard" }),
        4,
    );
    assert_eq!(hard.result["cover"], "hard");
    assert_eq!(hard.result["save_on"], 3);
}

#[test]
fn the_officer_casualty_check() {
    let mut checks = 0;
    let mut killed = 0;
    for n in 0..300 {
        let resolution = fire(
            json!({ "fire_by": "line", "class": "A", "figures": 20, "weapon": "rifle",
                    "range_cm": 10, "target": "line", "target_cover": "open",
                    "officer_attached": true }),
            n,
        );
        let r = &resolution.result;
        let casualties = r["casualties"].as_u64().expect("casualties");
        let check = &r["officer_check"];
        if casualties < 2 {
            assert_eq!(*check, Value::Null);
            continue;
        }
        checks += 1;
        let officer_dice = dice_for(&resolution, "officer casualty check");
        let first = officer_dice[0];
        assert_eq!(check["first"], first);
        // "if a 1 2 is scored roll again if a 1 is scored the Officer is killed as well"
        if first <= 2 {
            assert_eq!(officer_dice.len(), 2);
            assert_eq!(check["second"], officer_dice[1]);
            assert_eq!(check["officer_killed"], officer_dice[1] == 1);
        } else {
            assert_eq!(officer_dice.len(), 1);
            assert_eq!(check["officer_killed"], false);
        }
        killed += u32::from(check["officer_killed"] == true);
    }
    assert!(checks > 100 && killed > 0);
}

#[test]
fn fire_refusals_name_the_field() {
    let base = || {
        json!({ "fire_by": "line", "class": "B", "figures": 10, "weapon": "musket",
                "range_cm": 20, "target": "line", "target_cover": "open" })
    };
    let with = |key: &str, value: Value| {
        let mut inputs = base();
        inputs[key] = value;
        inputs
    };
    assert_refused(&Acw25mm, "fire", with("range_cm", json!(31)), "body.inputs.range_cm", "fire.range");
    assert_refused(&Acw25mm, "fire", with("figures", json!(0)), "body.inputs.figures", "fire.figures");
    assert_refused(&Acw25mm, "fire", with("figures", json!(21)), "body.inputs.figures", "fire.figures");
    assert_refused(&Acw25mm, "fire", with("weapon", Value::Null), "body.inputs.weapon", "fire.weapon");
    let mut d_skirmish = with("fire_by", json!("skirmish"));
    d_skirmish["class"] = json!("D");
    assert_refused(&Acw25mm, "fire", d_skirmish, "body.inputs.fire_by", "fire.formation_permitted");
    assert_refused(
        &Acw25mm,
        "fire",
        with("infantry_crew", json!(1)),
        "body.inputs.infantry_crew",
        "fire.infantry_crew",
    );
    assert_refused(
        &Acw25mm,
        "fire",
        json!({ "fire_by": "skirmish", "class": "A", "figures": 4, "weapon": "shotgun",
                "range_cm": 6, "target": "line", "target_cover": "open" }),
        "body.inputs.range_cm",
        "fire.range",
    );
    let gun = |class: &str, men: u32, infantry: u32| {
        json!({ "fire_by": "field_gun", "class": class, "figures": men,
                "infantry_crew": infantry, "range_cm": 50, "target": "line",
                "target_cover": "open" })
    };
    assert_refused(&Acw25mm, "fire", gun("D", 4, 0), "body.inputs.class", "fire.artillery_class");
    assert_refused(&Acw25mm, "fire", gun("A", 0, 3), "body.inputs.figures", "fire.battery_crew");
    assert_refused(&Acw25mm, "fire", gun("A", 4, 2), "body.inputs.infantry_crew", "fire.battery_crew");
    let mut armed_gun = gun("A", 4, 0);
    armed_gun["weapon"] = json!("rifle");
    assert_refused(&Acw25mm, "fire", armed_gun, "body.inputs.weapon", "fire.weapon");
    assert_refused(
        &Acw25mm,
        "fire",
        with("target_cover", json!("trench")),
        "body.inputs.target_cover",
        "resolver.inputs",
    );
}

// ---------------------------------------------------------------------------------------------
// Melee

fn melee(inputs: Value) -> Resolution {
    resolve("melee", &inputs, 5)
}

#[test]
fn melee_additions_as_the_seed_shows_them() {
    // Each of: "trying to kill B Class in the open 6 7 8 9 10".
    for addition in ["target_formation_fail", "target_skirmishers", "charging"] {
        let mut inputs = json!({ "figures": 3, "target_figures": 1, "target_class": "B",
                                 "target_cover": "open" });
        inputs[addition] = json!(true);
        assert_eq!(melee(inputs).result["score_to_kill"], 6, "{addition}");
    }
    // "If you are attacking and have a Formation Fail you get no additions above."
    let failed = melee(json!({ "figures": 3, "target_figures": 1, "target_class": "B",
                               "target_cover": "open", "charging": true,
                               "target_skirmishers": true,
                               "attacker_formation_fail": true }));
    assert_eq!(failed.result["score_to_kill"], 7);
    // All three together.
    let all = melee(json!({ "figures": 3, "target_figures": 1, "target_class": "B",
                            "target_cover": "open", "charging": true,
                            "target_skirmishers": true, "target_formation_fail": true }));
    assert_eq!(all.result["score_to_kill"], 4);
}

#[test]
fn melee_at_its_bounds() {
    // E class in the open with every addition: 3 − 3 = 0; every die kills, but no more
    // figures die than are in contact.
    let easiest = melee(json!({ "figures": 6, "target_figures": 2, "target_class": "E",
                                "target_cover": "open", "charging": true,
                                "target_skirmishers": true, "target_formation_fail": true }));
    assert_eq!(easiest.result["score_to_kill"], 1);
    assert_eq!(easiest.result["killing_dice"], 6);
    assert_eq!(easiest.result["kills"], 2);
    // An A class or an officer behind hard cover dies only on a 10.
    for target in ["A", "officer"] {
        let hardest = melee(json!({ "figures": 3, "target_figures": 1,
                                    "target_class": target, "target_cover": "hard" }));
        assert_eq!(hardest.result["score_to_kill"], 10);
        let dice = dice_for(&hardest, "to kill");
        assert_eq!(dice.len(), 3);
        assert_eq!(hardest.result["killing_dice"], count_at_least(&dice, 10));
    }
}

#[test]
fn gunners_in_melee_are_skirmishers_behind_soft_cover() {
    let gunners = melee(json!({ "figures": 6, "target_figures": 4, "target_class": "B",
                                "target_cover": "open", "target_is_gunners": true }));
    // B behind soft cover 8, skirmishers +1.
    assert_eq!(gunners.result["score_to_kill"], 7);
    assert_eq!(gunners.result["cover"], "soft");
}

#[test]
fn melee_kills_agree_with_the_dice() {
    for n in 0..50 {
        let resolution = resolve(
            "melee",
            &json!({ "figures": 12, "target_figures": 10, "target_class": "C",
                     "target_cover": "soft", "charging": true }),
            n,
        );
        let dice = dice_for(&resolution, "to kill");
        assert_eq!(dice.len(), 12);
        let killing = count_at_least(&dice, 5);
        assert_eq!(resolution.result["killing_dice"], killing);
        assert_eq!(resolution.result["kills"], killing.min(10));
        assert_eq!(resolution.result["formation_fail_after"], true);
    }
}

#[test]
fn melee_refusals_name_the_field() {
    assert_refused(
        &Acw25mm,
        "melee",
        json!({ "figures": 7, "target_figures": 2, "target_class": "C", "target_cover": "open" }),
        "body.inputs.figures",
        "melee.three_to_one",
    );
    assert_refused(
        &Acw25mm,
        "melee",
        json!({ "figures": 2, "target_figures": 0, "target_class": "C", "target_cover": "open" }),
        "body.inputs.target_figures",
        "melee.figures",
    );
    assert_refused(
        &Acw25mm,
        "melee",
        json!({ "figures": 3, "target_figures": 2, "target_class": "officer",
                "target_cover": "open" }),
        "body.inputs.target_figures",
        "melee.officer",
    );
    assert_refused(
        &Acw25mm,
        "melee",
        json!({ "figures": 3, "target_figures": 2, "target_class": "D",
                "target_cover": "open", "target_is_gunners": true }),
        "body.inputs.target_class",
        "melee.artillery_class",
    );
    assert_refused(
        &Acw25mm,
        "melee",
        json!({ "figures": 3, "target_figures": 2, "target_class": "D",
                "target_cover": "open", "target_skirmishers": true }),
        "body.inputs.target_skirmishers",
        "melee.formation_permitted",
    );
}

// ---------------------------------------------------------------------------------------------
// Formation fail test and morale

#[test]
fn formation_test_pass_numbers_through_the_action() {
    for (letter, pass) in [("A", 2), ("B", 3), ("C", 4), ("D", 5), ("E", 6)] {
        for n in 0..30 {
            let test = resolve("formation_test", &json!({ "class": letter }), n);
            assert_eq!(test.result["pass_on"], pass);
            assert_eq!(test.result["passed"], test.dice[0].value >= pass);
        }
    }
}

#[test]
fn morale_modifiers_at_their_bounds() {
    // Every minus: 12 present − 5 = 7 against B/12's 5: still ok.
    let worst = resolve(
        "morale",
        &json!({ "chart": "infantry_cavalry", "class": "B", "original_figures": 12,
                 "figures_present": 12, "no_friends_within_30cm": true,
                 "enemy_cavalry_within_30cm": true, "officer_fail": true,
                 "formation_fail": true, "saw_rout_within_30cm": true }),
        0,
    );
    assert_eq!(worst.result["points"], 7);
    assert_eq!(worst.lookups.len(), 6);
    // Every plus: officer +1, hard cover +2.
    let best = resolve(
        "morale",
        &json!({ "chart": "infantry_cavalry", "class": "E", "original_figures": 20,
                 "figures_present": 11, "officer_attached": true, "cover": "hard" }),
        0,
    );
    assert_eq!(best.result["points"], 14);
    assert_eq!(best.result["routs_at"], 14);
    assert_eq!(best.result["routs"], true, "level on the chart routs");
    let soft = resolve(
        "morale",
        &json!({ "chart": "infantry_cavalry", "class": "E", "original_figures": 20,
                 "figures_present": 14, "cover": "soft" }),
        0,
    );
    assert_eq!(soft.result["points"], 15);
    assert_eq!(soft.result["routs"], false);
    // No figures left and every minus: points go below zero and the unit routs.
    let gone = resolve(
        "morale",
        &json!({ "chart": "sharpshooters_artillery", "class": "A", "original_figures": 4,
                 "figures_present": 0, "formation_fail": true }),
        0,
    );
    assert_eq!(gone.result["points"], -1);
    assert_eq!(gone.result["routs"], true);
}

#[test]
fn morale_outside_the_chart_reads_the_nearest_column() {
    let big = resolve(
        "morale",
        &json!({ "chart": "infantry_cavalry", "class": "A", "original_figures": 24,
                 "figures_present": 9 }),
        0,
    );
    assert_eq!(big.result["chart_column"], 20);
    assert_eq!(big.result["column_clamped"], true);
    assert_eq!(big.result["routs_at"], 8);
    let small = resolve(
        "morale",
        &json!({ "chart": "infantry_cavalry", "class": "C", "original_figures": 10,
                 "figures_present": 6 }),
        0,
    );
    assert_eq!(small.result["chart_column"], 11);
    assert_eq!(small.result["routs"], true);
    let crew = resolve(
        "morale",
        &json!({ "chart": "sharpshooters_artillery", "class": "C", "original_figures": 3,
                 "figures_present": 3 }),
        0,
    );
    assert_eq!(crew.result["chart_column"], 4);
    assert_eq!(crew.result["routs_at"], 2);
    assert_eq!(crew.result["column_clamped"], true);
}

#[test]
fn morale_refusals_name_the_field() {
    assert_refused(
        &Acw25mm,
        "morale",
        json!({ "chart": "infantry_cavalry", "class": "B", "original_figures": 12,
                "figures_present": 13 }),
        "body.inputs.figures_present",
        "morale.figures",
    );
    assert_refused(
        &Acw25mm,
        "morale",
        json!({ "chart": "infantry_cavalry", "class": "B", "original_figures": 0,
                "figures_present": 0 }),
        "body.inputs.original_figures",
        "morale.figures",
    );
    assert_refused(
        &Acw25mm,
        "morale",
        json!({ "chart": "sharpshooters_artillery", "class": "E", "original_figures": 8,
                "figures_present": 5 }),
        "body.inputs.class",
        "morale.chart_class",
    );
}

// ---------------------------------------------------------------------------------------------
// Hazards, flank marches, time, wind

#[test]
fn jumping_kills_on_a_6_and_rivers_drown_on_5_or_6() {
    for n in 0..30 {
        let jump = resolve("jump_obstacle", &json!({ "figures": 15, "obstacle": "wall" }), n);
        let dice = dice_for(&jump, "jump the wall");
        assert_eq!(dice.len(), 15);
        assert_eq!(jump.result["killed"], count_at_least(&dice, 6));
        let river = resolve("cross_river", &json!({ "figures": 15 }), n);
        let dice = dice_for(&river, "cross the river");
        assert_eq!(river.result["drowned"], count_at_least(&dice, 5));
    }
    assert_refused(
        &Acw25mm,
        "jump_obstacle",
        json!({ "figures": 0, "obstacle": "fence" }),
        "body.inputs.figures",
        "hazard.figures",
    );
    assert_refused(&Acw25mm, "cross_river", json!({ "figures": 21 }), "body.inputs.figures", "hazard.figures");
}

#[test]
fn flank_march_arrival_squares() {
    use Flank::*;
    for (d20, flank, whose, square) in [
        (1, Squares1And6, "your", 1),
        (5, Squares5And10, "your", 5),
        (6, Squares1And6, "your", 6),
        (10, Squares5And10, "your", 10),
        (11, Squares1And6, "opponent's", 6),
        (15, Squares5And10, "opponent's", 10),
        (16, Squares1And6, "opponent's", 1),
        (20, Squares5And10, "opponent's", 5),
    ] {
        let (_, w, s) = flank_march_arrival(d20, flank);
        assert_eq!((w, s), (whose, square), "d20 {d20}");
    }
    let march = resolve("flank_march", &json!({ "units": 1, "flank": "squares_5_and_10" }), 9);
    assert_eq!(march.result["arrives_on_move"], march.dice[0].value);
    assert_eq!(march.dice[0].faces, 20);
    assert_refused(
        &Acw25mm,
        "flank_march",
        json!({ "units": 3, "flank": "squares_1_and_6" }),
        "body.inputs.units",
        "flank_march.units",
    );
}

#[test]
fn time_of_day_throws_again_and_counts_days() {
    let mut rethrows = 0;
    for n in 0..150 {
        let time = resolve("time_of_day", &json!({ "thrown_by": "confederate", "season": "autumn" }), n);
        let r = &time.result;
        let throws: Vec<u32> = serde_json::from_value(r["throws"].clone()).unwrap();
        assert_eq!(time.dice.len(), throws.len() * 3);
        for (i, sum) in throws.iter().enumerate() {
            let dice: u32 = time.dice[i * 3..i * 3 + 3].iter().map(|d| d.value).sum();
            assert_eq!(*sum, dice);
            let last = i + 1 == throws.len();
            assert_eq!((7..=16).contains(sum), last, "throw {i}: {sum}");
        }
        let hour = r["hour"].as_u64().unwrap() as u32;
        assert_eq!(r["hours_left"], 19 - hour);
        assert_eq!(r["turns_per_player"], (19 - hour) * 4);
        let days = throws.len() as u32 - 1;
        assert_eq!(r["days_passed"], days);
        assert_eq!(r["victory_points"], days * 10);
        assert_eq!(r["victory_points_to"], "federal");
        rethrows += days;
    }
    assert!(rethrows > 0);
    let winter =
        resolve("time_of_day", &json!({ "thrown_by": "federal", "season": "winter", "winter_dusk_hour": 17 }), 3);
    assert_eq!(winter.result["dusk_hour"], 17);
    assert_refused(
        &Acw25mm,
        "time_of_day",
        json!({ "thrown_by": "federal", "season": "winter" }),
        "body.inputs.winter_dusk_hour",
        "time_of_day.dusk",
    );
    assert_refused(
        &Acw25mm,
        "time_of_day",
        json!({ "thrown_by": "federal", "season": "summer", "winter_dusk_hour": 18 }),
        "body.inputs.winter_dusk_hour",
        "time_of_day.dusk",
    );
    assert_refused(
        &Acw25mm,
        "time_of_day",
        json!({ "thrown_by": "federal", "season": "winter", "winter_dusk_hour": 16 }),
        "body.inputs.winter_dusk_hour",
        "time_of_day.dusk",
    );
}

#[test]
fn wind_is_none_only_on_a_1() {
    for n in 0..30 {
        let wind = resolve("wind", &json!({}), n);
        assert_eq!(wind.result["wind"], wind.dice[0].value != 1);
    }
}

// ---------------------------------------------------------------------------------------------
// Table set-up

#[test]
fn the_river_end_square() {
    // "a 6 becomes a 1, a 7 becomes a 2 etc."
    let squares: Vec<u32> = (1..=10).map(river_end_square).collect();
    assert_eq!(squares, [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]);
    let river = resolve("river_end", &json!({ "thrown_by": "federal" }), 2);
    assert_eq!(river.dice[0].faces, 10);
    assert_eq!(river.result["square"], river_end_square(river.dice[0].value));
}

#[test]
fn dice_offs_throw_again_on_a_tie() {
    let mut ties = 0;
    for n in 0..100 {
        let town = resolve("town", &json!({}), n);
        let throws: Vec<[u32; 2]> = serde_json::from_value(town.result["throws"].clone()).unwrap();
        let (last, earlier) = throws.split_last().unwrap();
        assert!(earlier.iter().all(|[f, c]| f == c));
        ties += earlier.len();
        let holder = if last[0] > last[1] { "federal" } else { "confederate" };
        assert_eq!(town.result["holder"], holder);
        assert_eq!(town.result["moves_second"], holder);
        assert_ne!(town.result["throws_river_end_and_time_of_day"], holder);

        let sides = resolve("choose_sides", &json!({ "first_player": "Ann", "second_player": "Ben" }), n);
        let throws: Vec<[u32; 2]> = serde_json::from_value(sides.result["throws"].clone()).unwrap();
        let last = throws.last().unwrap();
        assert_eq!(sides.result["picks"], if last[0] > last[1] { "Ann" } else { "Ben" });
    }
    assert!(ties > 0);
    assert_refused(
        &Acw25mm,
        "choose_sides",
        json!({ "first_player": "Ann", "second_player": "Ann" }),
        "body.inputs.second_player",
        "setup.player_name",
    );
    assert_refused(
        &Acw25mm,
        "choose_sides",
        json!({ "first_player": " ", "second_player": "Ann" }),
        "body.inputs.first_player",
        "setup.player_name",
    );
}

#[test]
fn terrain_lands_only_on_free_squares() {
    for n in 0..100 {
        let terrain =
            resolve("terrain", &json!({ "side": "confederate", "holds_town": true, "occupied": [1, 7, 9] }), n);
        let squares: Vec<u64> =
            terrain.result["placements"].as_array().unwrap().iter().map(|p| p["square"].as_u64().unwrap()).collect();
        assert_eq!(squares.len(), 6);
        let mut sorted = squares.clone();
        sorted.sort_unstable();
        // Squares 1, 3, 7, 9 are taken: the six pieces fill the other six.
        assert_eq!(sorted, [2, 4, 5, 6, 8, 10]);
        assert!(terrain.dice.len() >= 6);
    }
    assert_refused(
        &Acw25mm,
        "terrain",
        json!({ "side": "federal", "holds_town": false, "occupied": [2, 11] }),
        "body.inputs.occupied[1]",
        "terrain.square",
    );
    assert_refused(
        &Acw25mm,
        "terrain",
        json!({ "side": "federal", "holds_town": true, "occupied": [1, 2, 4, 5, 6] }),
        "body.inputs.occupied",
        "terrain.no_room",
    );
}

#[test]
fn army_refusals_name_the_field() {
    assert_refused(
        &Acw25mm,
        "army",
        json!({ "side": "federal", "brigades": 6 }),
        "body.inputs.brigades",
        "army.brigades",
    );
    assert_refused(
        &Acw25mm,
        "army",
        json!({ "side": "federal", "brigades": 2 }),
        "body.inputs.brigades",
        "army.brigades",
    );
    assert_refused(&Acw25mm, "army", json!({ "side": "union" }), "body.inputs.side", "resolver.inputs");
}

// ---------------------------------------------------------------------------------------------
// Destruction and victory

#[test]
fn gun_hits_carry_across_shots() {
    let mut so_far = 0;
    let mut shots = 0;
    while so_far < 20 {
        let shot = resolve(
            "bombard",
            &json!({ "gun": "field", "class": "C", "artillery_men": 4,
                     "structure": "wooden_building", "hits_so_far": so_far }),
            shots,
        );
        let dice = dice_for(&shot, "hits");
        assert_eq!(dice.len(), 8);
        let hits = count_at_least(&dice, 4) as u32;
        assert_eq!(shot.result["hits"], hits);
        so_far += hits;
        assert_eq!(shot.result["hits_total"], so_far);
        assert_eq!(shot.result["destroyed"], so_far >= 20);
        assert_eq!(shot.result["troops_in_or_on_destroyed"], so_far >= 20);
        shots += 1;
    }
    assert!(shots >= 3, "8 dice a shot cannot score 20 in two shots");
    let heavy = resolve(
        "bombard",
        &json!({ "gun": "heavy", "class": "A", "artillery_men": 5, "formation_fail": true,
                 "structure": "fence", "hits_so_far": 9 }),
        1,
    );
    assert_eq!(heavy.result["score_needed"], 3);
    assert_eq!(dice_for(&heavy, "hits").len(), 15);
    assert_eq!(heavy.result["hit_value"], 10);
    if heavy.result["destroyed"] == true {
        assert_eq!(heavy.result["troops_in_or_on_destroyed"], false);
    }
    assert_refused(
        &Acw25mm,
        "bombard",
        json!({ "gun": "field", "class": "B", "artillery_men": 5,
                "structure": "stone_wall", "hits_so_far": 20 }),
        "body.inputs.hits_so_far",
        "bombard.already_destroyed",
    );
    assert_refused(
        &Acw25mm,
        "bombard",
        json!({ "gun": "field", "class": "E", "artillery_men": 5, "structure": "fence" }),
        "body.inputs.class",
        "bombard.artillery_class",
    );
    assert_refused(
        &Acw25mm,
        "bombard",
        json!({ "gun": "field", "class": "A", "artillery_men": 6, "structure": "fence" }),
        "body.inputs.artillery_men",
        "bombard.artillery_men",
    );
}

#[test]
fn victory_point_count() {
    let count = resolve(
        "victory_points",
        &json!({
            "federal": { "routed_enemy_units": 2, "squares_occupied": 1, "farms": 1 },
            "confederate": { "town": true, "bridges": 1, "officers_killed": 1,
                             "baggage_captured": 1 },
            "days_passed": 1, "time_thrown_by": "federal"
        }),
        0,
    );
    // Federal: 2×5 + 1×10 + 1×20 = 40. Confederate: 60 + 20 + 10 + 20 + one day passed 10.
    assert_eq!(count.result["federal"], 40);
    assert_eq!(count.result["confederate"], 120);
    assert_eq!(count.result["winner"], "confederate");
    let everything = resolve(
        "victory_points",
        &json!({
            "federal": { "town": true, "farms": 1, "bridges": 1, "routed_enemy_units": 1,
                         "squares_occupied": 10, "officers_killed": 1, "baggage_captured": 1 },
            "confederate": { "farms": 1, "routed_enemy_units": 31, "squares_occupied": 10,
                             "officers_killed": 2 }
        }),
        0,
    );
    // 60 + 20 + 20 + 5 + 100 + 10 + 20 = 235; 20 + 155 + 100 + 20 = 295.
    assert_eq!(everything.result["federal"], 235);
    assert_eq!(everything.result["confederate"], 295);
    let draw = resolve("victory_points", &json!({ "federal": {}, "confederate": {} }), 0);
    assert_eq!(draw.result["winner"], Value::Null);
    assert_refused(
        &Acw25mm,
        "victory_points",
        json!({ "federal": { "town": true }, "confederate": { "town": true } }),
        "body.inputs.confederate.town",
        "victory.town",
    );
    assert_refused(
        &Acw25mm,
        "victory_points",
        json!({ "federal": { "squares_occupied": 11 }, "confederate": {} }),
        "body.inputs.federal.squares_occupied",
        "victory.squares",
    );
    assert_refused(
        &Acw25mm,
        "victory_points",
        json!({ "federal": {}, "confederate": {}, "days_passed": 2 }),
        "body.inputs.time_thrown_by",
        "victory.days_passed",
    );
    assert_refused(
        &Acw25mm,
        "victory_points",
        json!({ "federal": { "farms": 1000 }, "confederate": {} }),
        "body.inputs.federal.farms",
        "victory.count",
    );
}

#[test]
fn the_army_shows_the_seeds_spelling_zouarve() {
    // Seed: "Veteran/Zouarve   A Class" (Federal) and "Zouarve/Veteran    A  Class" (Confederate).
    for (side, first) in [("federal", "Veteran/Zouarve"), ("confederate", "Zouarve/Veteran")] {
        let army = resolve("army", &json!({ "side": side }), 1);
        assert_eq!(army.result["foot"][0]["kind"], first);
        assert!(army.lookups.iter().any(|l| l.value == format!("A ({first})")), "{:?}", army.lookups);
        // A campaign created under rules version 1 keeps the words it was resolved with.
        let old = resolver::resolve_under(&Acw25mm, 1, "army", &json!({ "side": side }), stream(1)).unwrap();
        assert_eq!(old.result["foot"][0]["kind"], first.replace("Zouarve", "Zouave"));
        assert_eq!(old.dice, army.dice);
    }
    assert_eq!(FEDERAL_FOOT[0].0, "Veteran/Zouarve");
    assert_eq!(CONFEDERATE_FOOT[0].0, "Zouarve/Veteran");
}
