//! Tests of the Chamberlain ACW ruleset: the tables against the sheet, every dice pool before
//! and after halving and bonuses, the resolution tables, the examples and the refusals.

use serde_json::{json, Value};

use super::tables::*;
use super::*;
use crate::resolver::testing::{assert_refused, refused};
use crate::resolver::{self, parse_inputs, Resolved, Ruleset};
use crate::{DiceStream, DieRoll};

/// The sheet itself (seed 004), kept beside the tests.
const SEED: &str = include_str!("../../../tests/data/seed_004_chamberlain_acw.txt");

/// The sheet's text without HTML tags and entities, whitespace collapsed.
fn sheet_text() -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in SEED.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    let out =
        out.replace('|', " ").replace("&amp;", "&").replace("&gt;", ">").replace("\\pm", "±").replace("$\\geq$", "≥");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn assert_on_sheet(words: &str) {
    let sheet = sheet_text();
    assert!(sheet.contains(words), "`{words}` is not on the sheet");
}

fn stream(n: u32) -> DiceStream {
    DiceStream::from_text(format!("chamberlain-test/{n}"))
}

fn run(action: &str, inputs: &Value, n: u32) -> (Resolved, Vec<DieRoll>) {
    let mut dice = stream(n);
    let resolved =
        Chamberlain.resolve(action, inputs, &mut dice).unwrap_or_else(|refusal| panic!("{action} refused: {refusal}"));
    (resolved, dice.into_rolls())
}

/// The first stream (from 0) whose resolution satisfies `wanted`.
fn find(action: &str, inputs: &Value, wanted: impl Fn(&Value) -> bool) -> (Resolved, Vec<DieRoll>) {
    for n in 0..20_000 {
        let (resolved, rolls) = run(action, inputs, n);
        if wanted(&resolved.result) {
            return (resolved, rolls);
        }
    }
    panic!("no stream gives the wanted {action} result");
}

fn values(rolls: &[DieRoll], purpose_starts: &str) -> Vec<u32> {
    rolls.iter().filter(|r| r.purpose.starts_with(purpose_starts)).map(|r| r.value).collect()
}

fn u(value: &Value) -> u32 {
    value.as_u64().expect("a number") as u32
}

// ---------------------------------------------------------------------------------------------
// The tables, cell by cell against the sheet
// ---------------------------------------------------------------------------------------------

#[test]
fn fire_penalty_tables_are_the_sheets_lists_in_order() {
    let infantry: Vec<&str> = INFANTRY_PENALTIES.iter().map(|(_, w)| *w).collect();
    assert_eq!(
        infantry,
        [
            "Firing at Skirmish range",
            "Firing unit is Impetuous",
            "Firing unit is Mounted",
            "Firing unit moved (RR)",
            "at target on crest",
            "at Artillery",
            "at mounted cavalry",
        ]
    );
    let artillery: Vec<&str> = ARTILLERY_PENALTIES.iter().map(|(_, w)| *w).collect();
    assert_eq!(
        artillery,
        ["Is in cover", "Is concealed", "Is uphill", "Moving Fire (HS)", "Is obstructed", "Is Counter Battery",]
    );
    for words in infantry.iter().chain(artillery.iter()) {
        assert_on_sheet(words);
    }
    assert_on_sheet("Optional Over-head Artillery fire:");
    assert_on_sheet("All fire half strength");
    assert_on_sheet("Infantry Penalties (1/2 once)");
    assert_on_sheet("Artillery Penalties: (1/2 once)");
    assert_on_sheet("Halve #D6 only once");
}

#[test]
fn fire_bonus_tables_are_the_sheets_lists_in_order() {
    let artillery: Vec<(&str, u32)> = ARTILLERY_BONUSES.iter().map(|(_, w, d)| (*w, *d)).collect();
    assert_eq!(
        artillery,
        [
            ("RH firing Counter battery (CB)", 1),
            ("Firing Cannister", 1),
            ("Firing at Flank", 1),
            ("Artillery Range Trait", 1),
            ("Attached Artillery (A) officer", 1),
        ]
    );
    for (words, _) in &artillery {
        assert_on_sheet(&format!("{words} = +1d6"));
    }
    assert_eq!(ARTILLERY_BONUS_LIMIT, 1);
    assert_on_sheet("Artillery Bonus (Only one)");
    let infantry: Vec<(&str, u32)> = INFANTRY_BONUSES.iter().map(|(_, w, d)| (*w, *d)).collect();
    assert_eq!(infantry, [("Firing at Flank", 1), ("(+1/0, or +1/-)", 1)]);
    assert_on_sheet("Firing at Flank = +1d6 &");
    assert_on_sheet("(+1/0, or +1/-) = +1d6");
}

#[test]
fn fire_ranges_and_hit_numbers_are_the_sheets() {
    assert_eq!(INFANTRY_FIRE_RANGE, [(FireRange::Volley, "Volley", 1), (FireRange::Skirmish, "Skirmish", 2)]);
    assert_eq!(ARTILLERY_FIRE_RANGE, [(FireRange::Canister, "Cannister", 2), (FireRange::Long, "Long Range", 8)]);
    for (_, words, bw) in INFANTRY_FIRE_RANGE.iter().chain(ARTILLERY_FIRE_RANGE.iter()) {
        assert_on_sheet(&format!("{words} {bw} BW"));
    }
    assert_eq!((FIRE_HITS_ON, REPEATERS_HIT_ON), (6, 5));
    assert_on_sheet("Sixes to hit (Repeaters 5, 6)");
    assert_eq!(ARTILLERY_HIT, [(1, "retreats"), (2, "retires")]);
    assert_on_sheet("1 hit = retreats");
    assert_on_sheet("2 hits = retires");
    assert_on_sheet("1 hit causes retreat or >1 hit causes to retire");
    assert_eq!(MOUNTED_RETREAT_BW, 2);
    assert_on_sheet("must immediately retreat away from the attacking unit 2BW");
}

#[test]
fn weapon_marks_are_the_sheets() {
    use WeaponEffect::*;
    let rows: Vec<(&str, &str, WeaponEffect, WeaponEffect, bool)> =
        WEAPONS.iter().map(|r| (r.name, r.mark, r.volley, r.skirmish, r.repeater)).collect();
    assert_eq!(
        rows,
        [
            ("Repeating Carbine (RR)", "5,6/0 Repeater (Range 1Bw)", HitsOnFiveSix, NoChange, true),
            ("Repeating Rifle (RR)", "5,6 Repeater (Range 2Bw)", HitsOnFiveSix, HitsOnFiveSix, true),
            ("Breechloading Carbine (RR)", "5,6/0 Repeater (Range 1Bw)", HitsOnFiveSix, NoChange, true),
            ("Breechloading Rifle (RR)", "5,6 Repeater (Range 2Bw)", HitsOnFiveSix, HitsOnFiveSix, true),
            ("Smoothbore Muskets", "+1/-", ExtraDie, MayNotFire, false),
            ("Shot guns", "+1/0", ExtraDie, NoChange, false),
        ]
    );
    for row in &WEAPONS {
        assert_on_sheet(&format!("{} {}", row.name, row.mark));
    }
    assert!(weapon_row(Weapon::Standard).is_none());
}

#[test]
fn melee_tables_are_the_sheets() {
    assert_eq!(MELEE_HITS_ON, 4);
    assert_on_sheet("How Many Dice & Hits (Hit 4+)");
    let dice: Vec<String> = MELEE_DICE.iter().map(|(row, _, cell)| format!("{row} = {cell}")).collect();
    assert_eq!(
        dice,
        [
            "Infantry = Elan ± Modifiers",
            "Cavalry = Elan ± Modifiers",
            "Artillery = Ammo ± Modifiers",
            "Mounted Infantry = Elan ± Modifiers",
        ]
    );
    for cell in &dice {
        assert_on_sheet(cell);
    }
    let minus: Vec<&str> = MELEE_MINUS_ONE.iter().map(|(_, w)| *w).collect();
    assert_eq!(
        minus,
        [
            "Attacking Uphill",
            "in Difficult Terrain",
            "Attacking Hasty works",
            "Streams & Crossing",
            "Light Woods & Orchards",
            "Attacking Entrenchment",
        ]
    );
    for words in &minus {
        assert_on_sheet(words);
    }
    assert_eq!(MELEE_MINUS_DICE, 1);
    for words in MELEE_PLUS_ONE {
        assert_on_sheet(words);
    }
    assert_on_sheet(FRONTAL_DEFENCE);
    assert_on_sheet("Cavalry & Mounted Infantry vs. Infantry & Artillery");
    assert_on_sheet("Frontally Attacking Infantry & Artillery • Re-roll successes");
    assert_on_sheet("behind defenders' front line at contact with the enemy unit. • Re-roll successes");
}

#[test]
fn the_resolution_table_is_the_sheets() {
    let rows: Vec<(MeleeOutcome, &str, &str, u32)> =
        RESOLUTION.iter().map(|r| (r.outcome, r.artillery_defender, r.attacker, r.attacker_fatigue)).collect();
    assert_eq!(
        rows,
        [
            (
                MeleeOutcome::DefenderHolds,
                "Otherwise, it wins the combat & -1 ammo",
                "Attacker takes 2 fatigues & retreat 2BW Facing Enemy",
                2
            ),
            (
                MeleeOutcome::DefenderOutscored,
                "Outscored, it retreats 2BW & -1 ammo",
                "Take 1 fatigue & May advance",
                1
            ),
            (MeleeOutcome::DefenderDoubled, "Doubled, it breaks", "Take 1 fatigue & May advance", 1),
        ]
    );
    for row in &RESOLUTION {
        assert_on_sheet(row.artillery_defender);
        assert_on_sheet(row.attacker);
        assert_eq!(resolution_row(row.outcome), row);
    }
    assert_eq!(RESOLUTION[0].defender, "Takes 1 fatigue");
    assert_on_sheet("DEFENDER's score ≥");
    assert_on_sheet("• Takes 1 fatigue");
    assert_on_sheet("Takes Difference in Fatigues");
    assert_on_sheet("If not broken, retreat 2BW Facing away unless Steadfast which must be doubled.");
    assert_eq!((DEFENDER_HOLDS_FATIGUE, MELEE_RETREAT_BW, ADVANCE_BW, ARTILLERY_MELEE_AMMO_SPENT), (1, 2, 1, 1));
    assert_on_sheet("Move up to 1BW directly forward, no enemy contact");
}

#[test]
fn activation_sheet_numbers_are_the_sheets() {
    assert_eq!((AT_RISK_KILLED_ON, AT_RISK_KILLED_ON_SHARPSHOOTERS), (6, 5));
    assert_on_sheet("“At Risk” 1D6; 6 = Killed, Replace with average Officer Or 5,6 = killed if Firer is (SS)");
    assert_on_sheet("(5’s & 6’s to kill)");
    assert_eq!(RALLY_NEEDS, 3);
    assert_on_sheet("Rally (Roll to Rally 3+)");
    assert_eq!(RALLY_ENEMY_BW, 2);
    assert_on_sheet("Not Within 2 BW of Enemy (except attached Hero)");
    assert_eq!(IMMOBILE_PIPS, 3);
    let names: Vec<&str> = OFFICER_TRAITS.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["Immobile (IMB)", "Intuitive (INT)", "“Inspiring” (I)", "“Artillery” (A)", "“Steadfast” (SF)"]);
    for (name, text) in OFFICER_TRAITS {
        assert_on_sheet(name);
        assert_on_sheet(text);
    }
}

// ---------------------------------------------------------------------------------------------
// Fire: the pool before and after halving and bonuses
// ---------------------------------------------------------------------------------------------

fn fire_pool_of(inputs: &Value) -> fire::FirePool {
    let inputs: fire::FireInputs = parse_inputs(inputs).expect("parses");
    fire::validate(&inputs).expect("valid");
    fire::fire_pool(&inputs)
}

/// (base, after halving, bonus dice, dice rolled, hits on)
fn pool_sizes(pool: &fire::FirePool) -> (u32, u32, u32, u32, u32) {
    (pool.base, pool.after_halving, pool.bonus_dice, pool.dice, pool.hits_on)
}

fn infantry_fire(elan: u32) -> Value {
    json!({"firer": {"arm": "infantry", "elan": elan}, "target": {"arm": "infantry"}, "range": "volley"})
}

#[test]
fn infantry_fire_rolls_elan_without_penalties() {
    for elan in [1, 6, 12] {
        let pool = fire_pool_of(&infantry_fire(elan));
        assert_eq!(pool_sizes(&pool), (elan, elan, 0, elan, 6));
        assert!(!pool.halved);
        assert!(pool.penalties.is_empty());
    }
}

#[test]
fn each_infantry_penalty_halves_elan_once() {
    let cases = [
        (
            "Firing at Skirmish range",
            json!({"firer": {"arm": "infantry", "elan": 6}, "target": {"arm": "infantry"}, "range": "skirmish"}),
        ),
        (
            "Firing unit is Impetuous",
            json!({"firer": {"arm": "infantry", "elan": 6, "impetuous": true}, "target": {"arm": "infantry"}, "range": "volley"}),
        ),
        (
            "Firing unit is Mounted",
            json!({"firer": {"arm": "cavalry", "elan": 6, "mounted": true}, "target": {"arm": "infantry"}, "range": "volley"}),
        ),
        (
            "Firing unit moved (RR)",
            json!({"firer": {"arm": "cavalry", "elan": 6, "weapon": "breechloading_carbine", "moved": true}, "target": {"arm": "infantry"}, "range": "skirmish"}),
        ),
        (
            "at target on crest",
            json!({"firer": {"arm": "infantry", "elan": 6}, "target": {"arm": "infantry", "on_crest": true}, "range": "volley"}),
        ),
        (
            "at Artillery",
            json!({"firer": {"arm": "infantry", "elan": 6}, "target": {"arm": "horse_artillery"}, "range": "volley"}),
        ),
        (
            "at mounted cavalry",
            json!({"firer": {"arm": "mounted_infantry", "elan": 6}, "target": {"arm": "cavalry", "mounted": true}, "range": "volley"}),
        ),
    ];
    for (words, inputs) in cases {
        let pool = fire_pool_of(&inputs);
        // "Firing unit moved (RR)" at skirmish range has two penalties: still halved once.
        assert!(pool.penalties.contains(&words), "{words}: {pool:?}");
        assert!(pool.halved);
        assert_eq!((pool.base, pool.after_halving, pool.dice), (6, 3, 3), "{words}");
        let mut odd = inputs.clone();
        odd["firer"]["elan"] = json!(5);
        let pool = fire_pool_of(&odd);
        assert_eq!((pool.base, pool.after_halving, pool.dice), (5, 3, 3), "{words}");
        odd["halves_round"] = json!("down");
        let pool = fire_pool_of(&odd);
        assert_eq!((pool.base, pool.after_halving, pool.dice), (5, 2, 2), "{words}");
    }
}

#[test]
fn many_penalties_still_halve_only_once() {
    let inputs = json!({
        "firer": {"arm": "cavalry", "elan": 8, "mounted": true, "impetuous": true,
                  "weapon": "repeating_rifle", "moved": true},
        "target": {"arm": "cavalry", "mounted": true, "on_crest": true},
        "range": "skirmish"
    });
    let pool = fire_pool_of(&inputs);
    assert_eq!(pool.penalties.len(), 6);
    assert_eq!(pool_sizes(&pool), (8, 4, 0, 4, 5));
}

#[test]
fn halving_one_die_rounds_as_asked() {
    let mut inputs =
        json!({"firer": {"arm": "infantry", "elan": 1}, "target": {"arm": "infantry"}, "range": "skirmish"});
    assert_eq!(pool_sizes(&fire_pool_of(&inputs)), (1, 1, 0, 1, 6));
    inputs["halves_round"] = json!("down");
    assert_eq!(pool_sizes(&fire_pool_of(&inputs)), (1, 0, 0, 0, 6));
    inputs["firer"]["elan"] = json!(12);
    assert_eq!(pool_sizes(&fire_pool_of(&inputs)), (12, 6, 0, 6, 6));
}

#[test]
fn infantry_bonuses_add_after_halving() {
    // Flank: +1d6.
    let mut flank = infantry_fire(4);
    flank["at_flank"] = json!(true);
    let pool = fire_pool_of(&flank);
    assert_eq!(pool_sizes(&pool), (4, 4, 1, 5, 6));
    assert_eq!(pool.bonuses, ["Firing at Flank"]);
    // Halved at skirmish range, then the flank die: 5 → 3 → 4.
    flank["range"] = json!("skirmish");
    flank["firer"]["elan"] = json!(5);
    assert_eq!(pool_sizes(&fire_pool_of(&flank)), (5, 3, 1, 4, 6));
    // Smoothbore muskets +1/- at volley: +1d6, and with the flank both add.
    let mut smoothbore = infantry_fire(4);
    smoothbore["firer"]["weapon"] = json!("smoothbore_muskets");
    assert_eq!(pool_sizes(&fire_pool_of(&smoothbore)), (4, 4, 1, 5, 6));
    smoothbore["at_flank"] = json!(true);
    let pool = fire_pool_of(&smoothbore);
    assert_eq!(pool_sizes(&pool), (4, 4, 2, 6, 6));
    assert_eq!(pool.bonuses, ["Firing at Flank", "(+1/0, or +1/-)"]);
    // Shot guns +1/0: +1d6 at volley, nothing at skirmish (where the range halves).
    let mut shotguns = infantry_fire(5);
    shotguns["firer"]["weapon"] = json!("shot_guns");
    assert_eq!(pool_sizes(&fire_pool_of(&shotguns)), (5, 5, 1, 6, 6));
    shotguns["range"] = json!("skirmish");
    assert_eq!(pool_sizes(&fire_pool_of(&shotguns)), (5, 3, 0, 3, 6));
}

#[test]
fn repeaters_hit_on_five_at_their_range() {
    let cases = [
        ("repeating_carbine", "volley", 5),
        ("repeating_carbine", "skirmish", 6),
        ("breechloading_carbine", "volley", 5),
        ("breechloading_carbine", "skirmish", 6),
        ("repeating_rifle", "volley", 5),
        ("repeating_rifle", "skirmish", 5),
        ("breechloading_rifle", "volley", 5),
        ("breechloading_rifle", "skirmish", 5),
        ("standard", "volley", 6),
        ("shot_guns", "skirmish", 6),
    ];
    for (weapon, range, hits_on) in cases {
        let inputs = json!({"firer": {"arm": "infantry", "elan": 6, "weapon": weapon}, "target": {"arm": "infantry"}, "range": range});
        let pool = fire_pool_of(&inputs);
        let after = if range == "skirmish" { 3 } else { 6 };
        assert_eq!(pool_sizes(&pool), (6, after, 0, after, hits_on), "{weapon} {range}");
    }
}

fn artillery_fire(ammo: u32, range: &str) -> Value {
    json!({"firer": {"arm": "artillery", "ammo": ammo}, "target": {"arm": "infantry"}, "range": range})
}

#[test]
fn artillery_rolls_ammo_and_canister_adds_a_die() {
    assert_eq!(pool_sizes(&fire_pool_of(&artillery_fire(4, "long"))), (4, 4, 0, 4, 6));
    let pool = fire_pool_of(&artillery_fire(4, "canister"));
    assert_eq!(pool_sizes(&pool), (4, 4, 1, 5, 6));
    assert_eq!(pool.bonuses, ["Firing Cannister"]);
    assert_eq!(pool_sizes(&fire_pool_of(&artillery_fire(1, "long"))), (1, 1, 0, 1, 6));
    assert_eq!(pool_sizes(&fire_pool_of(&artillery_fire(12, "long"))), (12, 12, 0, 12, 6));
}

#[test]
fn each_artillery_penalty_halves_ammo_once() {
    let cases = [
        (
            "Is in cover",
            json!({"firer": {"arm": "artillery", "ammo": 6}, "target": {"arm": "infantry", "in_cover": true}, "range": "long"}),
        ),
        (
            "Is concealed",
            json!({"firer": {"arm": "artillery", "ammo": 6}, "target": {"arm": "infantry", "concealed": true}, "range": "long"}),
        ),
        (
            "Is uphill",
            json!({"firer": {"arm": "artillery", "ammo": 6}, "target": {"arm": "infantry", "uphill": true}, "range": "long"}),
        ),
        (
            "Moving Fire (HS)",
            json!({"firer": {"arm": "horse_artillery", "ammo": 6, "moved": true}, "target": {"arm": "infantry"}, "range": "long"}),
        ),
        (
            "Is obstructed",
            json!({"firer": {"arm": "artillery", "ammo": 6}, "target": {"arm": "infantry"}, "range": "long", "obstructed": true}),
        ),
        (
            "Is Counter Battery",
            json!({"firer": {"arm": "artillery", "ammo": 6}, "target": {"arm": "artillery"}, "range": "long"}),
        ),
        (
            "Optional Over-head Artillery fire: All fire half strength",
            json!({"firer": {"arm": "artillery", "ammo": 6}, "target": {"arm": "infantry"}, "range": "long", "overhead": true}),
        ),
    ];
    for (words, inputs) in cases {
        let pool = fire_pool_of(&inputs);
        assert_eq!(pool.penalties, [words]);
        assert_eq!(pool_sizes(&pool), (6, 3, 0, 3, 6), "{words}");
        let mut odd = inputs.clone();
        odd["firer"]["ammo"] = json!(3);
        assert_eq!(pool_sizes(&fire_pool_of(&odd)), (3, 2, 0, 2, 6), "{words}");
        odd["halves_round"] = json!("down");
        assert_eq!(pool_sizes(&fire_pool_of(&odd)), (3, 1, 0, 1, 6), "{words}");
    }
}

#[test]
fn each_artillery_bonus_adds_one_die() {
    let cases = [
        (
            "RH firing Counter battery (CB)",
            json!({"firer": {"arm": "artillery", "ammo": 6, "rh": true}, "target": {"arm": "artillery"}, "range": "long"}),
            (6, 3, 1, 4, 6),
        ),
        ("Firing Cannister", artillery_fire(6, "canister"), (6, 6, 1, 7, 6)),
        (
            "Firing at Flank",
            json!({"firer": {"arm": "artillery", "ammo": 6}, "target": {"arm": "infantry"}, "range": "long", "at_flank": true}),
            (6, 6, 1, 7, 6),
        ),
        (
            "Artillery Range Trait",
            json!({"firer": {"arm": "artillery", "ammo": 6, "range_trait": true}, "target": {"arm": "infantry"}, "range": "long"}),
            (6, 6, 1, 7, 6),
        ),
        (
            "Attached Artillery (A) officer",
            json!({"firer": {"arm": "horse_artillery", "ammo": 6, "artillery_officer": true}, "target": {"arm": "infantry"}, "range": "long"}),
            (6, 6, 1, 7, 6),
        ),
    ];
    for (words, inputs, sizes) in cases {
        let pool = fire_pool_of(&inputs);
        assert_eq!(pool.bonuses, [words]);
        assert_eq!(pool_sizes(&pool), sizes, "{words}");
    }
    // An RH battery firing at infantry is not counter-battery fire: no bonus.
    let rh =
        json!({"firer": {"arm": "artillery", "ammo": 6, "rh": true}, "target": {"arm": "infantry"}, "range": "long"});
    assert_eq!(pool_sizes(&fire_pool_of(&rh)), (6, 6, 0, 6, 6));
}

#[test]
fn artillery_takes_only_one_bonus() {
    let inputs = json!({
        "firer": {"arm": "artillery", "ammo": 5, "rh": true, "range_trait": true, "artillery_officer": true},
        "target": {"arm": "artillery"},
        "range": "canister",
        "at_flank": true
    });
    let pool = fire_pool_of(&inputs);
    assert_eq!(pool.bonuses.len(), 5);
    assert_eq!(pool.penalties, ["Is Counter Battery"]);
    // 5 ammo halved (counter battery) to 3, then one bonus die of the five.
    assert_eq!(pool_sizes(&pool), (5, 3, 1, 4, 6));
    let mut two = artillery_fire(4, "canister");
    two["at_flank"] = json!(true);
    assert_eq!(pool_sizes(&fire_pool_of(&two)), (4, 4, 1, 5, 6));
}

#[test]
fn situations_the_sheet_does_not_penalise_are_noted_not_applied() {
    let infantry = json!({
        "firer": {"arm": "infantry", "elan": 6},
        "target": {"arm": "infantry", "in_cover": true, "concealed": true, "uphill": true},
        "range": "volley",
        "obstructed": true
    });
    let pool = fire_pool_of(&infantry);
    assert_eq!(pool_sizes(&pool), (6, 6, 0, 6, 6));
    assert_eq!(pool.not_applicable, ["Is in cover", "Is concealed", "Is uphill", "Is obstructed"]);
    let artillery = json!({"firer": {"arm": "artillery", "ammo": 6}, "target": {"arm": "infantry", "on_crest": true}, "range": "long"});
    let pool = fire_pool_of(&artillery);
    assert_eq!(pool_sizes(&pool), (6, 6, 0, 6, 6));
    assert_eq!(pool.not_applicable, ["at target on crest"]);
}

// ---------------------------------------------------------------------------------------------
// Fire: the dice and what they do
// ---------------------------------------------------------------------------------------------

#[test]
fn fire_rolls_the_pool_and_counts_hits() {
    let inputs = json!({"firer": {"arm": "infantry", "elan": 7, "weapon": "repeating_rifle"}, "target": {"arm": "infantry"}, "range": "skirmish", "at_flank": true});
    for n in 0..50 {
        let (resolved, rolls) = run("fire", &inputs, n);
        // 7 halved (skirmish) to 4, + 1 flank = 5 dice, repeaters hit on 5.
        assert_eq!(rolls.len(), 5);
        assert_eq!(rolls[0].purpose, "fire, die 1 of 5");
        let faces = values(&rolls, "fire");
        let hits = faces.iter().filter(|&&f| f >= 5).count() as u32;
        assert_eq!(u(&resolved.result["hits"]), hits);
        assert_eq!(u(&resolved.result["target_fatigue"]), hits);
        assert_eq!(resolved.result["dice"], json!(faces));
        assert!(resolved.result["artillery_target"].is_null());
        assert!(resolved.headline.contains(&format!("{hits} hit")), "{}", resolved.headline);
    }
}

#[test]
fn artillery_hit_retreats_on_one_and_retires_on_more() {
    let inputs = json!({"firer": {"arm": "infantry", "elan": 12}, "target": {"arm": "artillery"}, "range": "volley"});
    let (one, _) = find("fire", &inputs, |r| r["hits"] == 1);
    assert_eq!(one.result["artillery_target"], "retreats");
    assert_eq!(one.result["target_fatigue"], 0);
    let (more, _) = find("fire", &inputs, |r| u(&r["hits"]) >= 2);
    assert_eq!(more.result["artillery_target"], "retires");
    assert!(more.headline.contains("the battery retires"));
    let (none, _) = find("fire", &inputs, |r| r["hits"] == 0);
    assert!(none.result["artillery_target"].is_null());
}

#[test]
fn artillery_marks_off_one_ammo() {
    let (resolved, rolls) = run("fire", &artillery_fire(3, "long"), 1);
    assert_eq!(rolls.len(), 3);
    assert_eq!(resolved.result["ammo_left"], 2);
    let (resolved, rolls) = run("fire", &artillery_fire(1, "canister"), 1);
    assert_eq!(rolls.len(), 2);
    assert_eq!(resolved.result["ammo_left"], 0);
}

#[test]
fn passive_mounted_troops_hit_retreat_two_bw() {
    let passive = json!({"firer": {"arm": "infantry", "elan": 12}, "target": {"arm": "cavalry", "mounted": true, "passive": true}, "range": "volley"});
    let (hit, _) = find("fire", &passive, |r| u(&r["hits"]) >= 1);
    assert_eq!(hit.result["mounted_retreat_bw"], 2);
    let (missed, _) = find("fire", &passive, |r| r["hits"] == 0);
    assert!(missed.result["mounted_retreat_bw"].is_null());
    let mut active = passive.clone();
    active["target"]["passive"] = json!(false);
    let (hit, _) = find("fire", &active, |r| u(&r["hits"]) >= 1);
    assert!(hit.result["mounted_retreat_bw"].is_null());
}

#[test]
fn a_concealed_target_hit_is_revealed() {
    let inputs = json!({"firer": {"arm": "artillery", "ammo": 8}, "target": {"arm": "infantry", "concealed": true, "passive": true}, "range": "long"});
    let (hit, _) = find("fire", &inputs, |r| u(&r["hits"]) >= 1);
    assert_eq!(hit.result["target_revealed"], true);
    let (missed, _) = find("fire", &inputs, |r| r["hits"] == 0);
    assert_eq!(missed.result["target_revealed"], false);
}

#[test]
fn sharpshooters_put_the_attached_officer_at_risk_on_five_or_six() {
    let inputs = json!({"firer": {"arm": "infantry", "elan": 2, "sharpshooters": true}, "target": {"arm": "infantry", "officer_attached": true}, "range": "skirmish"});
    let mut seen = [false; 2];
    for n in 0..200 {
        let (resolved, rolls) = run("fire", &inputs, n);
        // élan 2 halved to 1 die, then the officer's die.
        assert_eq!(rolls.len(), 2);
        assert_eq!(rolls[1].purpose, "at risk, officer attached to the target");
        let check = &resolved.result["officer_at_risk"];
        assert_eq!(check["roll"], rolls[1].value);
        assert_eq!(check["killed_on"], 5);
        assert_eq!(check["killed"], rolls[1].value >= 5);
        seen[usize::from(rolls[1].value >= 5)] = true;
    }
    assert_eq!(seen, [true, true]);
    // Without sharpshooters, or without an officer, no check.
    let mut plain = inputs.clone();
    plain["firer"]["sharpshooters"] = json!(false);
    let (resolved, rolls) = run("fire", &plain, 0);
    assert_eq!(rolls.len(), 1);
    assert!(resolved.result["officer_at_risk"].is_null());
}

// ---------------------------------------------------------------------------------------------
// Melee: the pools
// ---------------------------------------------------------------------------------------------

fn melee_inputs(inputs: &Value) -> melee::MeleeInputs {
    let inputs: melee::MeleeInputs = parse_inputs(inputs).expect("parses");
    melee::validate(&inputs).expect("valid");
    inputs
}

/// (base, dice after modifiers, rolled)
fn melee_sizes(pool: &melee::MeleePool) -> (u32, u32, u32) {
    (pool.base, pool.dice, pool.rolled)
}

fn plain_melee() -> Value {
    json!({"attacker": {"arm": "infantry", "elan": 5}, "defender": {"arm": "infantry", "elan": 4}})
}

#[test]
fn melee_pools_start_at_elan_and_the_frontal_defender_adds_one() {
    let inputs = melee_inputs(&plain_melee());
    let attacker = melee::attacker_pool(&inputs);
    assert_eq!(melee_sizes(&attacker), (5, 5, 5));
    assert!(attacker.plus.is_empty() && attacker.minus.is_empty());
    let defender = melee::defender_pool(&inputs);
    assert_eq!(melee_sizes(&defender), (4, 5, 5));
    assert_eq!(defender.plus, [FRONTAL_DEFENCE]);
    assert!(defender.rerolls_successes.is_none());
}

#[test]
fn each_attack_hindrance_costs_one_die_and_together_only_one() {
    for (hindrance, words) in MELEE_MINUS_ONE {
        let mut value = plain_melee();
        value["attacking_into"] = json!([hindrance]);
        let pool = melee::attacker_pool(&melee_inputs(&value));
        assert_eq!(pool.minus, [words]);
        assert_eq!(melee_sizes(&pool), (5, 4, 4), "{words}");
    }
    let mut all = plain_melee();
    all["attacking_into"] = json!([
        "uphill",
        "difficult_terrain",
        "hasty_works",
        "streams_and_crossing",
        "light_woods_and_orchards",
        "entrenchment"
    ]);
    let pool = melee::attacker_pool(&melee_inputs(&all));
    assert_eq!(pool.minus.len(), 6);
    assert_eq!(melee_sizes(&pool), (5, 4, 4));
}

#[test]
fn each_plus_one_modifier_adds_a_die() {
    // (side, unit changes, words expected among the plus modifiers, attacker sizes, defender sizes)
    let cases = [
        ("attacker", json!({"battle_cry": true}), "Yankee Hurrah! (YH) & Or Rebel Yell! (RY)", (5, 6, 6)),
        ("attacker", json!({"inspiring_officer": true}), "“Inspiring” (I): +1D6 in all combats", (5, 6, 6)),
        ("attacker", json!({"weapon": "smoothbore_muskets"}), "Smoothbore Muskets", (5, 6, 6)),
        ("attacker", json!({"weapon": "shot_guns"}), "Shot guns", (5, 6, 6)),
        ("defender", json!({"battle_cry": true}), "Yankee Hurrah! (YH) & Or Rebel Yell! (RY)", (4, 6, 6)),
        ("defender", json!({"steadfast_officer": true}), "Defender with Steadfast leader (SF)", (4, 6, 6)),
        ("defender", json!({"inspiring_officer": true}), "“Inspiring” (I): +1D6 in all combats", (4, 6, 6)),
        ("defender", json!({"weapon": "shot_guns"}), "Shot guns", (4, 6, 6)),
    ];
    for (side, changes, words, sizes) in cases {
        let mut value = plain_melee();
        for (key, v) in changes.as_object().expect("object") {
            value[side][key] = v.clone();
        }
        let inputs = melee_inputs(&value);
        let pool = if side == "attacker" { melee::attacker_pool(&inputs) } else { melee::defender_pool(&inputs) };
        assert!(pool.plus.contains(&words), "{words}: {pool:?}");
        assert_eq!(melee_sizes(&pool), sizes, "{side} {words}");
    }
}

#[test]
fn modifiers_that_do_not_apply_add_nothing() {
    let value = json!({
        "attacker": {"arm": "cavalry", "elan": 5, "inspiring_officer": true, "steadfast_officer": true, "weapon": "repeating_carbine"},
        "defender": {"arm": "cavalry", "elan": 4, "steadfast_officer": true, "inspiring_officer": true}
    });
    let inputs = melee_inputs(&value);
    let attacker = melee::attacker_pool(&inputs);
    assert_eq!(melee_sizes(&attacker), (5, 5, 5));
    assert_eq!(attacker.not_applicable.len(), 3);
    let defender = melee::defender_pool(&inputs);
    // Only the frontal defence die: Steadfast and Inspiring are for infantry.
    assert_eq!(melee_sizes(&defender), (4, 5, 5));
    assert_eq!(defender.not_applicable.len(), 2);
    // Their officers' dice do not count, so they are not at risk either.
    let (resolved, rolls) = run("melee", &value, 0);
    assert!(rolls.iter().all(|r| !r.purpose.starts_with("at risk")));
    assert!(resolved.result["attacker"]["officer_at_risk"].is_null());
}

#[test]
fn modifiers_add_up_and_the_pool_never_goes_below_zero() {
    let value = json!({
        "attacker": {"arm": "infantry", "elan": 4, "battle_cry": true, "inspiring_officer": true, "weapon": "smoothbore_muskets"},
        "defender": {"arm": "infantry", "elan": 3, "steadfast_officer": true, "inspiring_officer": true, "battle_cry": true, "weapon": "shot_guns"},
        "attacking_into": ["entrenchment", "uphill"]
    });
    let inputs = melee_inputs(&value);
    // 4 + 3 − 1 = 6.
    assert_eq!(melee_sizes(&melee::attacker_pool(&inputs)), (4, 6, 6));
    // 3 + YH/RY + SF + I + shot guns + frontal = 8.
    assert_eq!(melee_sizes(&melee::defender_pool(&inputs)), (3, 8, 8));
    let floor = json!({"attacker": {"arm": "infantry", "elan": 1}, "defender": {"arm": "artillery", "ammo": 0}, "attacking_into": ["hasty_works"]});
    let inputs = melee_inputs(&floor);
    assert_eq!(melee_sizes(&melee::attacker_pool(&inputs)), (1, 0, 0));
    // Artillery: ammo 0 + frontal defence = 1.
    assert_eq!(melee_sizes(&melee::defender_pool(&inputs)), (0, 1, 1));
}

#[test]
fn flanked_defenders_lose_the_frontal_die_and_re_roll_successes() {
    let mut value = plain_melee();
    value["flanked"] = json!(true);
    let inputs = melee_inputs(&value);
    let defender = melee::defender_pool(&inputs);
    assert_eq!(melee_sizes(&defender), (4, 4, 4));
    assert_eq!(defender.rerolls_successes, Some(FLANKED));
    assert!(melee::attacker_pool(&inputs).rerolls_successes.is_none());
}

#[test]
fn cavalry_frontally_attacking_infantry_or_artillery_re_rolls_successes() {
    for (attacker, defender, flanked, rerolls) in [
        ("cavalry", json!({"arm": "infantry", "elan": 4}), false, true),
        ("mounted_infantry", json!({"arm": "artillery", "ammo": 3}), false, true),
        ("cavalry", json!({"arm": "horse_artillery", "ammo": 3}), false, true),
        ("cavalry", json!({"arm": "infantry", "elan": 4}), true, false),
        ("cavalry", json!({"arm": "cavalry", "elan": 4}), false, false),
        ("infantry", json!({"arm": "infantry", "elan": 4}), false, false),
    ] {
        let value = json!({"attacker": {"arm": attacker, "elan": 5}, "defender": defender, "flanked": flanked});
        let pool = melee::attacker_pool(&melee_inputs(&value));
        assert_eq!(pool.rerolls_successes.is_some(), rerolls, "{value}");
        assert_eq!(melee_sizes(&pool), (5, 5, 5));
    }
}

#[test]
fn the_attacker_allocates_dice_from_its_pool() {
    let mut value = plain_melee();
    value["attacker"]["battle_cry"] = json!(true);
    value["allocated_dice"] = json!(2);
    let pool = melee::attacker_pool(&melee_inputs(&value));
    assert_eq!(melee_sizes(&pool), (5, 6, 2));
    value["allocated_dice"] = json!(6);
    assert_eq!(melee_sizes(&melee::attacker_pool(&melee_inputs(&value))), (5, 6, 6));
    value["allocated_dice"] = json!(7);
    assert_refused(&Chamberlain, "melee", value, "body.inputs.allocated_dice", "melee.allocated_dice");
}

// ---------------------------------------------------------------------------------------------
// Melee: the dice and the resolution table
// ---------------------------------------------------------------------------------------------

#[test]
fn outcome_reads_the_resolution_table() {
    use MeleeOutcome::*;
    let cases = [
        ((0, 0), DefenderHolds),
        ((1, 1), DefenderHolds),
        ((2, 3), DefenderHolds),
        ((1, 0), DefenderDoubled),
        ((3, 2), DefenderOutscored),
        ((4, 2), DefenderDoubled),
        ((5, 3), DefenderOutscored),
        ((6, 3), DefenderDoubled),
    ];
    for ((attack, defence), expected) in cases {
        assert_eq!(melee::outcome(attack, defence), expected, "{attack} v {defence}");
    }
}

#[test]
fn melee_rolls_defence_then_attack_and_hits_on_four() {
    let value = plain_melee();
    for n in 0..50 {
        let (resolved, rolls) = run("melee", &value, n);
        // Defender 4 + frontal = 5 dice first, then the attacker's 5.
        assert_eq!(rolls.len(), 10);
        assert!(rolls[..5].iter().all(|r| r.purpose.starts_with("defence, die")));
        assert!(rolls[5..].iter().all(|r| r.purpose.starts_with("attack, die")));
        let defence = values(&rolls, "defence");
        let attack = values(&rolls, "attack");
        let d = defence.iter().filter(|&&f| f >= 4).count() as u32;
        let a = attack.iter().filter(|&&f| f >= 4).count() as u32;
        assert_eq!(u(&resolved.result["defender_score"]), d);
        assert_eq!(u(&resolved.result["attacker_score"]), a);
        let outcome = serde_json::to_value(melee::outcome(a, d)).expect("serialises");
        assert_eq!(resolved.result["outcome"], outcome);
    }
}

#[test]
fn re_rolled_successes_score_only_if_they_hit_again() {
    let value =
        json!({"attacker": {"arm": "cavalry", "elan": 6}, "defender": {"arm": "infantry", "elan": 5}, "flanked": true});
    for n in 0..50 {
        let (resolved, rolls) = run("melee", &value, n);
        let first = values(&rolls, "defence, die");
        let again = values(&rolls, "defence, re-roll");
        assert_eq!(first.len(), 5);
        assert_eq!(again.len(), first.iter().filter(|&&f| f >= 4).count());
        let score = again.iter().filter(|&&f| f >= 4).count() as u32;
        assert_eq!(u(&resolved.result["defender_score"]), score);
        // Flanked: the cavalry attacker does not re-roll.
        assert!(values(&rolls, "attack, re-roll").is_empty());
    }
    let frontal = json!({"attacker": {"arm": "cavalry", "elan": 6}, "defender": {"arm": "infantry", "elan": 5}});
    let (resolved, rolls) =
        find("melee", &frontal, |r| r["attacker_dice"].as_array().is_some_and(|d| d.iter().any(|f| u(f) >= 4)));
    let again = values(&rolls, "attack, re-roll");
    assert!(!again.is_empty());
    assert_eq!(u(&resolved.result["attacker_score"]), again.iter().filter(|&&f| f >= 4).count() as u32);
}

#[test]
fn a_defender_that_holds_takes_one_fatigue_and_repulses_the_attacker() {
    let mut value = plain_melee();
    value["attacker"]["fatigue"] = json!(1);
    value["defender"]["fatigue"] = json!(2);
    let (resolved, _) = find("melee", &value, |r| r["outcome"] == "defender_holds");
    let r = &resolved.result;
    assert!(u(&r["defender_score"]) >= u(&r["attacker_score"]));
    assert_eq!(r["defender"]["fatigue_taken"], 1);
    assert_eq!(r["defender"]["fatigue_after"], 3);
    assert!(r["defender"]["retreat_bw"].is_null());
    assert_eq!(r["attacker"]["fatigue_taken"], 2);
    assert_eq!(r["attacker"]["fatigue_after"], 3);
    assert_eq!(r["attacker"]["retreat_bw"], 2);
    assert_eq!(r["attacker"]["retreat_facing"], "facing the enemy");
    assert!(r["attacker"]["advance"].is_null());
    assert!(resolved.headline.contains("retreats 2 BW facing the enemy"));
}

#[test]
fn an_outscored_defender_takes_the_difference_and_retreats() {
    let value = plain_melee();
    for wanted in ["defender_outscored", "defender_doubled"] {
        let (resolved, _) = find("melee", &value, |r| r["outcome"] == wanted);
        let r = &resolved.result;
        let difference = u(&r["attacker_score"]) - u(&r["defender_score"]);
        assert_eq!(u(&r["defender"]["fatigue_taken"]), difference);
        assert_eq!(r["defender"]["retreat_bw"], 2);
        assert_eq!(r["defender"]["retreat_facing"], "facing away from enemy");
        assert_eq!(r["attacker"]["fatigue_taken"], 1);
        assert_eq!(r["attacker"]["advance"], "may advance");
    }
}

#[test]
fn a_steadfast_defender_retreats_only_if_doubled() {
    let mut value = plain_melee();
    value["defender"]["steadfast_officer"] = json!(true);
    value["attacker"]["elan"] = json!(10);
    let (resolved, _) = find("melee", &value, |r| r["outcome"] == "defender_outscored");
    let r = &resolved.result;
    assert!(u(&r["defender"]["fatigue_taken"]) >= 1);
    assert!(r["defender"]["retreat_bw"].is_null());
    assert!(resolved.headline.contains("Steadfast, stands"));
    let (resolved, _) = find("melee", &value, |r| r["outcome"] == "defender_doubled");
    assert_eq!(resolved.result["defender"]["retreat_bw"], 2);
}

#[test]
fn breaking_needs_the_referees_fatigue_limit() {
    let mut value = plain_melee();
    value["defender"]["fatigue"] = json!(3);
    value["defender"]["breaks_at"] = json!(4);
    value["attacker"]["impetuous"] = json!(true);
    let (resolved, _) = find("melee", &value, |r| r["outcome"] == "defender_outscored");
    let r = &resolved.result;
    assert_eq!(r["defender"]["broken"], true);
    assert!(r["defender"]["retreat_bw"].is_null());
    assert_eq!(r["attacker"]["advance"], "must advance");
    assert!(r["attacker"]["broken"].is_null());
    let (resolved, _) = find("melee", &value, |r| r["outcome"] == "defender_holds");
    // 3 + 1 = 4: a defender that holds can break too.
    assert_eq!(resolved.result["defender"]["broken"], true);
    value["defender"]["fatigue"] = json!(0);
    value["defender"]["breaks_at"] = json!(12);
    let (resolved, _) = find("melee", &value, |r| r["outcome"] == "defender_holds");
    assert_eq!(resolved.result["defender"]["broken"], false);
}

#[test]
fn an_artillery_defender_breaks_retreats_or_wins_and_spends_ammo() {
    let value = json!({"attacker": {"arm": "infantry", "elan": 6}, "defender": {"arm": "artillery", "ammo": 3}});
    let (held, _) = find("melee", &value, |r| r["outcome"] == "defender_holds");
    assert_eq!(held.result["defender"]["ammo_left"], 2);
    assert!(held.result["defender"]["retreat_bw"].is_null());
    assert_eq!(held.result["defender"]["fatigue_taken"], 0);
    assert_eq!(held.result["attacker"]["fatigue_taken"], 2);
    let (outscored, _) = find("melee", &value, |r| r["outcome"] == "defender_outscored");
    assert_eq!(outscored.result["defender"]["ammo_left"], 2);
    assert_eq!(outscored.result["defender"]["retreat_bw"], 2);
    let (doubled, _) = find("melee", &value, |r| r["outcome"] == "defender_doubled");
    assert_eq!(doubled.result["defender"]["broken"], true);
    assert!(doubled.headline.contains("the battery breaks"));
}

#[test]
fn inspiring_and_steadfast_officers_are_at_risk_after_the_combat() {
    let mut value = plain_melee();
    value["attacker"]["inspiring_officer"] = json!(true);
    value["defender"]["steadfast_officer"] = json!(true);
    let (resolved, rolls) = run("melee", &value, 3);
    let n = rolls.len();
    assert_eq!(rolls[n - 2].purpose, "at risk, the defender's officer");
    assert_eq!(rolls[n - 1].purpose, "at risk, the attacker's officer");
    let attacker_check = &resolved.result["attacker"]["officer_at_risk"];
    assert_eq!(attacker_check["roll"], rolls[n - 1].value);
    assert_eq!(attacker_check["killed"], rolls[n - 1].value == 6);
    let (_, rolls) = run("melee", &plain_melee(), 3);
    assert!(rolls.iter().all(|r| !r.purpose.starts_with("at risk")));
}

// ---------------------------------------------------------------------------------------------
// Activation, rally, commander at risk
// ---------------------------------------------------------------------------------------------

#[test]
fn activation_succeeds_on_the_referees_number() {
    for needs in 2..=6 {
        for n in 0..30 {
            let (resolved, rolls) = run("activation", &json!({"needs": needs}), n);
            assert_eq!(rolls.len(), 1);
            assert_eq!(resolved.result["activated"], rolls[0].value >= needs);
            assert_eq!(resolved.result["needs"], needs);
        }
    }
}

#[test]
fn the_intuitive_commander_re_rolls_one_failure() {
    let inputs = json!({"needs": 5, "intuitive": true});
    let (resolved, rolls) = find("activation", &inputs, |r| u(&r["roll"]) < 5);
    assert_eq!(rolls.len(), 2);
    assert_eq!(rolls[1].purpose, "activation, Intuitive re-roll");
    assert_eq!(resolved.result["intuitive_reroll"], rolls[1].value);
    assert_eq!(resolved.result["activated"], rolls[1].value >= 5);
    let (resolved, rolls) = find("activation", &inputs, |r| u(&r["roll"]) >= 5);
    assert_eq!(rolls.len(), 1);
    assert!(resolved.result["intuitive_reroll"].is_null());
}

#[test]
fn the_cavalry_trait_activates_for_free() {
    let (resolved, rolls) = run("activation", &json!({"free_cavalry": true}), 0);
    assert!(rolls.is_empty());
    assert_eq!(resolved.result["activated"], true);
}

#[test]
fn the_immobile_cnc_sets_its_die_to_three_when_it_activates_by_command() {
    let inputs = json!({"needs": 3, "by_command": true, "immobile": true});
    let (resolved, _) = find("activation", &inputs, |r| r["activated"] == true);
    assert_eq!(resolved.result["immobile_pips"], 3);
    let (resolved, _) = find("activation", &inputs, |r| r["activated"] == false);
    assert_eq!(resolved.result["immobile_pips"], 0);
    // Not by command: the die is untouched.
    let own = json!({"needs": 3, "immobile": true, "immobile_pips": 2});
    let (resolved, _) = find("activation", &own, |r| r["activated"] == true);
    assert_eq!(resolved.result["immobile_pips"], 2);
    assert_refused(
        &Chamberlain,
        "activation",
        json!({"needs": 3, "by_command": true, "immobile": true, "immobile_pips": 1}),
        "body.inputs.by_command",
        "activation.immobile",
    );
}

#[test]
fn rally_removes_one_fatigue_on_three_or_more() {
    let mut seen = [false; 2];
    for n in 0..60 {
        let (resolved, rolls) = run("rally", &json!({"fatigue": 2, "activated": true}), n);
        assert_eq!(rolls.len(), 1);
        let rallied = rolls[0].value >= 3;
        seen[usize::from(rallied)] = true;
        assert_eq!(resolved.result["rallied"], rallied);
        assert_eq!(resolved.result["fatigue_after"], if rallied { 1 } else { 2 });
        assert_eq!(resolved.result["counts_as_moved"], true);
    }
    assert_eq!(seen, [true, true]);
}

#[test]
fn a_hero_rallies_within_two_bw_at_risk() {
    let near = json!({"fatigue": 4, "activated": true, "enemy_within_2bw": true, "hero_attached": true});
    let (resolved, rolls) = run("rally", &near, 5);
    assert_eq!(rolls.len(), 2);
    assert_eq!(rolls[1].purpose, "at risk, the Hero");
    assert_eq!(resolved.result["hero_at_risk"]["killed"], rolls[1].value == 6);
    let far = json!({"fatigue": 4, "activated": true, "hero_attached": true});
    let (resolved, rolls) = run("rally", &far, 5);
    assert_eq!(rolls.len(), 1);
    assert!(resolved.result["hero_at_risk"].is_null());
}

#[test]
fn commander_at_risk_kills_on_six_or_five_against_sharpshooters() {
    for sharpshooters in [false, true] {
        let killed_on = if sharpshooters { 5 } else { 6 };
        let mut seen = [false; 2];
        for n in 0..100 {
            let (resolved, rolls) = run("commander_at_risk", &json!({"sharpshooters": sharpshooters}), n);
            assert_eq!(rolls.len(), 1);
            let killed = rolls[0].value >= killed_on;
            seen[usize::from(killed)] = true;
            assert_eq!(resolved.result["killed"], killed);
            assert_eq!(resolved.result["killed_on"], killed_on);
        }
        assert_eq!(seen, [true, true]);
    }
}

// ---------------------------------------------------------------------------------------------
// The ruleset as the API lists it
// ---------------------------------------------------------------------------------------------

#[test]
fn the_ruleset_is_registered() {
    let ruleset = resolver::ruleset("chamberlain-acw").expect("registered");
    assert_eq!(ruleset.seed(), "004_e6390402a3065789.txt");
    let names: Vec<&str> = ruleset.actions().iter().map(|a| a.name).collect();
    assert_eq!(names, ["fire", "melee", "activation", "rally", "commander_at_risk"]);
}

#[test]
fn every_actions_example_resolves() {
    for action in Chamberlain.actions() {
        assert!(action.input_schema.is_object(), "{}", action.name);
        let resolution = resolver::resolve(&Chamberlain, action.name, &action.example, stream(7))
            .unwrap_or_else(|refusal| panic!("{} example refused: {refusal}", action.name));
        assert!(!resolution.headline.is_empty());
        assert!(!resolution.dice.is_empty(), "{}", action.name);
        assert!(!resolution.lookups.is_empty(), "{}", action.name);
    }
}

#[test]
fn input_schemas_describe_the_fields() {
    let actions = Chamberlain.actions();
    let fire = actions.iter().find(|a| a.name == "fire").expect("fire");
    let text = fire.input_schema.to_string();
    assert!(text.contains("Firing unit is Impetuous"));
    assert!(text.contains("\"skirmish\""));
    let activation = actions.iter().find(|a| a.name == "activation").expect("activation");
    assert!(activation.input_schema.to_string().contains("gives no number"));
}

// ---------------------------------------------------------------------------------------------
// Refusals: each names its field, and none rolls a die
// ---------------------------------------------------------------------------------------------

#[test]
fn fire_refusals_name_the_field() {
    let inf = |firer: Value, target: Value, range: &str| json!({"firer": firer, "target": target, "range": range});
    let cases = [
        (inf(json!({"arm": "infantry"}), json!({"arm": "infantry"}), "volley"), "body.inputs.firer.elan", "fire.dice"),
        (
            inf(json!({"arm": "infantry", "elan": 0}), json!({"arm": "infantry"}), "volley"),
            "body.inputs.firer.elan",
            "fire.dice",
        ),
        (
            inf(json!({"arm": "infantry", "elan": 13}), json!({"arm": "infantry"}), "volley"),
            "body.inputs.firer.elan",
            "fire.dice",
        ),
        (
            inf(json!({"arm": "infantry", "elan": 4, "ammo": 3}), json!({"arm": "infantry"}), "volley"),
            "body.inputs.firer.ammo",
            "fire.dice",
        ),
        (
            inf(json!({"arm": "artillery", "elan": 4}), json!({"arm": "infantry"}), "long"),
            "body.inputs.firer.elan",
            "fire.dice",
        ),
        (inf(json!({"arm": "artillery"}), json!({"arm": "infantry"}), "long"), "body.inputs.firer.ammo", "fire.dice"),
        (
            inf(json!({"arm": "artillery", "ammo": 0}), json!({"arm": "infantry"}), "long"),
            "body.inputs.firer.ammo",
            "fire.no_ammo",
        ),
        (
            inf(json!({"arm": "artillery", "ammo": 13}), json!({"arm": "infantry"}), "long"),
            "body.inputs.firer.ammo",
            "fire.dice",
        ),
        (
            inf(json!({"arm": "infantry", "elan": 4, "mounted": true}), json!({"arm": "infantry"}), "volley"),
            "body.inputs.firer.mounted",
            "fire.mounted",
        ),
        (
            inf(json!({"arm": "infantry", "elan": 4}), json!({"arm": "artillery", "mounted": true}), "volley"),
            "body.inputs.target.mounted",
            "fire.mounted",
        ),
        (
            inf(json!({"arm": "artillery", "ammo": 4}), json!({"arm": "infantry"}), "volley"),
            "body.inputs.range",
            "fire.range",
        ),
        (
            inf(json!({"arm": "infantry", "elan": 4}), json!({"arm": "infantry"}), "canister"),
            "body.inputs.range",
            "fire.range",
        ),
        (
            inf(json!({"arm": "artillery", "ammo": 4, "weapon": "shot_guns"}), json!({"arm": "infantry"}), "long"),
            "body.inputs.firer.weapon",
            "fire.infantry_only",
        ),
        (
            inf(json!({"arm": "artillery", "ammo": 4, "impetuous": true}), json!({"arm": "infantry"}), "long"),
            "body.inputs.firer.impetuous",
            "fire.infantry_only",
        ),
        (
            inf(json!({"arm": "artillery", "ammo": 4, "sharpshooters": true}), json!({"arm": "infantry"}), "long"),
            "body.inputs.firer.sharpshooters",
            "fire.infantry_only",
        ),
        (
            inf(json!({"arm": "artillery", "ammo": 4, "moved": true}), json!({"arm": "infantry"}), "long"),
            "body.inputs.firer.moved",
            "fire.moved",
        ),
        (
            inf(json!({"arm": "infantry", "elan": 4, "rh": true}), json!({"arm": "infantry"}), "volley"),
            "body.inputs.firer.rh",
            "fire.artillery_only",
        ),
        (
            inf(json!({"arm": "infantry", "elan": 4, "range_trait": true}), json!({"arm": "infantry"}), "volley"),
            "body.inputs.firer.range_trait",
            "fire.artillery_only",
        ),
        (
            inf(json!({"arm": "infantry", "elan": 4, "artillery_officer": true}), json!({"arm": "infantry"}), "volley"),
            "body.inputs.firer.artillery_officer",
            "fire.artillery_only",
        ),
        (
            inf(
                json!({"arm": "infantry", "elan": 4, "weapon": "smoothbore_muskets"}),
                json!({"arm": "infantry"}),
                "skirmish",
            ),
            "body.inputs.range",
            "fire.weapon_range",
        ),
        (
            inf(json!({"arm": "infantry", "elan": 4, "moved": true}), json!({"arm": "infantry"}), "volley"),
            "body.inputs.firer.moved",
            "fire.moved",
        ),
        (
            inf(json!({"arm": "infantry", "elan": 4, "weapon": "musket"}), json!({"arm": "infantry"}), "volley"),
            "body.inputs.firer.weapon",
            "resolver.inputs",
        ),
        (
            inf(json!({"arm": "dragoons", "elan": 4}), json!({"arm": "infantry"}), "volley"),
            "body.inputs.firer.arm",
            "resolver.inputs",
        ),
        (
            inf(json!({"arm": "infantry", "elan": 4, "morale": 3}), json!({"arm": "infantry"}), "volley"),
            "body.inputs.firer",
            "resolver.inputs",
        ),
        (
            inf(json!({"arm": "infantry", "elan": -1}), json!({"arm": "infantry"}), "volley"),
            "body.inputs.firer.elan",
            "resolver.inputs",
        ),
        (json!({"firer": {"arm": "infantry", "elan": 4}, "range": "volley"}), "body.inputs", "resolver.inputs"),
    ];
    for (inputs, field, rule) in cases {
        let refusal = refused(&Chamberlain, "fire", inputs.clone());
        assert!(refusal.field.starts_with(field) && refusal.rule == rule, "{inputs}: {refusal:?}");
    }
    let mut overhead = infantry_fire(4);
    overhead["overhead"] = json!(true);
    assert_refused(&Chamberlain, "fire", overhead, "body.inputs.overhead", "fire.artillery_only");
}

#[test]
fn melee_refusals_name_the_field() {
    let cases = [
        (
            json!({"attacker": {"arm": "artillery", "ammo": 3}, "defender": {"arm": "infantry", "elan": 4}}),
            "body.inputs.attacker.arm",
            "melee.artillery_charge",
        ),
        (
            json!({"attacker": {"arm": "infantry"}, "defender": {"arm": "infantry", "elan": 4}}),
            "body.inputs.attacker.elan",
            "melee.dice",
        ),
        (
            json!({"attacker": {"arm": "infantry", "elan": 13}, "defender": {"arm": "infantry", "elan": 4}}),
            "body.inputs.attacker.elan",
            "melee.dice",
        ),
        (
            json!({"attacker": {"arm": "infantry", "elan": 0}, "defender": {"arm": "infantry", "elan": 4}}),
            "body.inputs.attacker.elan",
            "melee.dice",
        ),
        (
            json!({"attacker": {"arm": "infantry", "elan": 4, "ammo": 2}, "defender": {"arm": "infantry", "elan": 4}}),
            "body.inputs.attacker.ammo",
            "melee.dice",
        ),
        (
            json!({"attacker": {"arm": "infantry", "elan": 4}, "defender": {"arm": "artillery", "elan": 4}}),
            "body.inputs.defender.elan",
            "melee.dice",
        ),
        (
            json!({"attacker": {"arm": "infantry", "elan": 4}, "defender": {"arm": "artillery"}}),
            "body.inputs.defender.ammo",
            "melee.dice",
        ),
        (
            json!({"attacker": {"arm": "infantry", "elan": 4}, "defender": {"arm": "artillery", "ammo": 13}}),
            "body.inputs.defender.ammo",
            "melee.dice",
        ),
        (
            json!({"attacker": {"arm": "infantry", "elan": 4}, "defender": {"arm": "artillery", "ammo": 3, "weapon": "shot_guns"}}),
            "body.inputs.defender.weapon",
            "melee.weapon",
        ),
        (
            json!({"attacker": {"arm": "infantry", "elan": 4}, "defender": {"arm": "artillery", "ammo": 3, "breaks_at": 3}}),
            "body.inputs.defender.breaks_at",
            "melee.artillery_breaks",
        ),
        (
            json!({"attacker": {"arm": "infantry", "elan": 4, "fatigue": 13}, "defender": {"arm": "infantry", "elan": 4}}),
            "body.inputs.attacker.fatigue",
            "melee.fatigue",
        ),
        (
            json!({"attacker": {"arm": "infantry", "elan": 4, "breaks_at": 0}, "defender": {"arm": "infantry", "elan": 4}}),
            "body.inputs.attacker.breaks_at",
            "melee.fatigue",
        ),
        (
            json!({"attacker": {"arm": "infantry", "elan": 4}, "defender": {"arm": "infantry", "elan": 4, "fatigue": 3, "breaks_at": 3}}),
            "body.inputs.defender.fatigue",
            "melee.already_broken",
        ),
        (
            json!({"attacker": {"arm": "infantry", "elan": 4}, "defender": {"arm": "infantry", "elan": 4}, "attacking_into": ["uphill", "uphill"]}),
            "body.inputs.attacking_into[1]",
            "melee.duplicate",
        ),
        (
            json!({"attacker": {"arm": "infantry", "elan": 4}, "defender": {"arm": "infantry", "elan": 4}, "attacking_into": ["swamp"]}),
            "body.inputs.attacking_into[0]",
            "resolver.inputs",
        ),
        (
            json!({"attacker": {"arm": "infantry", "elan": 4}, "defender": {"arm": "infantry", "elan": 4}, "flank": true}),
            "body.inputs",
            "resolver.inputs",
        ),
    ];
    for (inputs, field, rule) in cases {
        let refusal = refused(&Chamberlain, "melee", inputs.clone());
        assert!(refusal.field.starts_with(field) && refusal.rule == rule, "{inputs}: {refusal:?}");
    }
}

#[test]
fn command_refusals_name_the_field() {
    let cases = [
        ("activation", json!({}), "body.inputs.needs", "activation.needs"),
        ("activation", json!({"needs": 1}), "body.inputs.needs", "activation.needs"),
        ("activation", json!({"needs": 7}), "body.inputs.needs", "activation.needs"),
        (
            "activation",
            json!({"needs": 4, "immobile": true, "immobile_pips": 4}),
            "body.inputs.immobile_pips",
            "activation.immobile",
        ),
        ("activation", json!({"needs": 4, "immobile_pips": 2}), "body.inputs.immobile_pips", "activation.immobile"),
        ("activation", json!({"needs": 4, "intuitive": "yes"}), "body.inputs.intuitive", "resolver.inputs"),
        ("rally", json!({"fatigue": 3, "activated": false}), "body.inputs.activated", "rally.activated"),
        ("rally", json!({"fatigue": 3}), "body.inputs", "resolver.inputs"),
        ("rally", json!({"fatigue": 1, "activated": true}), "body.inputs.fatigue", "rally.not_to_fresh"),
        ("rally", json!({"fatigue": 0, "activated": true}), "body.inputs.fatigue", "rally.not_to_fresh"),
        ("rally", json!({"fatigue": 13, "activated": true}), "body.inputs.fatigue", "rally.fatigue"),
        (
            "rally",
            json!({"fatigue": 3, "activated": true, "enemy_within_2bw": true}),
            "body.inputs.enemy_within_2bw",
            "rally.enemy_near",
        ),
        ("commander_at_risk", json!({"sharpshooter": true}), "body.inputs", "resolver.inputs"),
    ];
    for (action, inputs, field, rule) in cases {
        let refusal = refused(&Chamberlain, action, inputs.clone());
        assert!(refusal.field.starts_with(field) && refusal.rule == rule, "{action} {inputs}: {refusal:?}");
    }
}

#[test]
fn an_unknown_action_is_refused() {
    let refusal = resolver::resolve(&Chamberlain, "bombard", &json!({}), stream(0)).expect_err("no such action");
    assert_eq!(refusal.field, "body.action");
}

// ---------------------------------------------------------------------------------------------
// The worked examples of docs/rules/chamberlain-acw.md
// ---------------------------------------------------------------------------------------------

fn documented_stream() -> DiceStream {
    DiceStream::from_text("c0ffee00-0000-4000-8000-000000000001/7/2026-11-21T09:51:45.123Z".into())
}

fn example_of(action: &str) -> Value {
    Chamberlain.actions().into_iter().find(|a| a.name == action).map(|a| a.example).expect("the action exists")
}

#[test]
fn the_documented_worked_examples() {
    let fire = resolver::resolve(&Chamberlain, "fire", &example_of("fire"), documented_stream()).expect("resolves");
    let faces: Vec<u32> = fire.dice.iter().map(|d| d.value).collect();
    let bytes: Vec<u8> = fire.dice.iter().map(|d| d.byte).collect();
    assert_eq!(bytes, [192, 228, 245]);
    assert_eq!(faces, [1, 1, 6]);
    assert_eq!(fire.result["pool"]["base"], 6);
    assert_eq!(fire.result["pool"]["after_halving"], 3);
    assert_eq!(fire.result["hits"], 1);
    assert_eq!(fire.result["target_fatigue"], 1);

    let melee = resolver::resolve(&Chamberlain, "melee", &example_of("melee"), documented_stream()).expect("resolves");
    let faces: Vec<u32> = melee.dice.iter().map(|d| d.value).collect();
    assert_eq!(faces, [1, 1, 6, 6, 6, 2, 2, 1, 1, 4]);
    let r = &melee.result;
    assert_eq!((r["attacker_pool"]["dice"].clone(), r["defender_pool"]["dice"].clone()), (json!(5), json!(5)));
    assert_eq!((r["defender_score"].clone(), r["attacker_score"].clone()), (json!(3), json!(1)));
    assert_eq!(r["outcome"], "defender_holds");
    assert_eq!(r["defender"]["fatigue_taken"], 1);
    assert_eq!(r["attacker"]["fatigue_taken"], 2);
    assert_eq!(r["attacker"]["retreat_bw"], 2);
}

/// Decision 29: "Long Range 8 BW" is artillery's. The seed's row puts it in the first column
/// under "Sharpshooters (SS)", bold like every range entry; the Sharpshooters box ends in the
/// row above it, and "Artillery Fire Range" lists only "Cannister 2 BW" without it.
#[test]
fn long_range_8_bw_is_read_as_the_artillery_range() {
    let rows: Vec<&str> = SEED.lines().collect();
    let ss = rows.iter().position(|r| r.contains("Sharpshooters (SS):")).expect("the SS row");
    assert!(rows[ss].contains("Artillery Fire Range"), "the SS box shares its row with the artillery heading");
    assert!(rows[ss + 1].contains("Attached Officers takes") && rows[ss + 1].contains("<b>Cannister 2 BW</b>"));
    assert!(rows[ss + 2].trim_start().starts_with("| <b>Long Range 8 BW</b>"), "{}", rows[ss + 2]);
    for band in ["<b>Volley 1 BW</b>", "<b>Skirmish 2 BW</b>", "<b>Cannister 2 BW</b>", "<b>Long Range 8 BW</b>"] {
        assert!(SEED.contains(band), "{band} is bold on the sheet");
    }
    assert_on_sheet("LOS (8Bw)");
    assert_eq!(ARTILLERY_FIRE_RANGE[1], (FireRange::Long, "Long Range", 8));
    // Artillery may fire long; sharpshooters may not.
    run("fire", &json!({"firer": {"arm": "artillery", "ammo": 4}, "target": {"arm": "infantry"}, "range": "long"}), 0);
    assert_refused(
        &Chamberlain,
        "fire",
        json!({"firer": {"arm": "infantry", "elan": 6, "sharpshooters": true}, "target": {"arm": "infantry"}, "range": "long"}),
        "body.inputs.range",
        "fire.range",
    );
}

#[test]
fn the_seeds_cannister_is_accepted_beside_canister() {
    // Seed: "<b>Cannister 2 BW</b>" and "Firing Cannister = +1d6": the tables show the seed's
    // word, and `range` takes `canister` or the seed's `cannister`.
    assert_on_sheet("Cannister 2 BW");
    assert_eq!(ARTILLERY_FIRE_RANGE[0], (FireRange::Canister, "Cannister", 2));
    let fire =
        |range: &str| json!({"firer": {"arm": "artillery", "ammo": 4}, "target": {"arm": "infantry"}, "range": range});
    let (ours, our_dice) = run("fire", &fire("canister"), 3);
    let (seeds, seed_dice) = run("fire", &fire("cannister"), 3);
    assert_eq!(ours.result, seeds.result);
    assert_eq!(our_dice, seed_dice);
    assert!(
        ours.lookups.iter().any(|l| l.row.contains("Cannister") || l.value.contains("Cannister")),
        "{:?}",
        ours.lookups
    );
}
