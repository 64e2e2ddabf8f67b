//! Fire and melee: the Weapon/Range Casualty Table, the Melee Combat Results Table and the
//! strength/casualty modifiers they share.
//!
//! Every modifier is kept in hundredths and every product is exact integer arithmetic; a
//! fire's casualties are rounded to the nearest man (a half rounds up) only at the end.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::tables::{
    melee_row_for, range_column, WeaponClass, WeaponRow, BATTLE_TIME_DIVISOR, BATTLE_TIME_FLOOR_OP, DENSITY_BASE_MEN,
    DENSITY_CAP_PERCENT, DENSITY_MEN_PER_PERCENT, FLANK_MODIFIER_TO_ATTACKER, FLANK_MODIFIER_TO_DEFENDER,
    FORTIFICATION_PER_LEVEL, MELEE_DIFFERENTIAL_DIVISOR, MELEE_LOSS_DIE, MODE_MODIFIERS, RANDOM_MODIFIER_DIE,
    RANDOM_MODIFIER_OFFSET, RANGE_COLUMNS, SMALL_ARMS_MEN_PER_ROW, TERRAIN_BRIDGE_FORD, TERRAIN_CLEAR,
    TERRAIN_CORNFIELD, TERRAIN_HIGHER_ELEVATION, TERRAIN_MODIFIERS, TERRAIN_TOWN, TERRAIN_WOODS, WEAPONS,
};
use super::{decimal, percent_check, refuse, seed_decimal};
use crate::resolver::{Lookup, Resolved};
use crate::{DiceStream, Refusal};

const WEAPON_TABLE: &str = "Weapon/Range Casualty Table";
const MELEE_TABLE: &str = "Melee Combat Results Table";
const TERRAIN_TABLE: &str = "Fire and Melee Strength/Casualty Terrain Modifiers";
const MODE_TABLE: &str = "Mode Modifiers on Fire and Melee Strength/Casualties";
const OTHER_TABLE: &str = "Other Modifiers on Fire and Melee Strength/Casualties";

/// The weapon, by the seed's abbreviation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum Weapon {
    /// Rifle
    #[serde(rename = "RFL")]
    Rifle,
    /// Musket
    #[serde(rename = "MSK")]
    Musket,
    /// Rifle/Musket
    #[serde(rename = "R/M")]
    RifleMusket,
    /// Rifle/Sharps
    #[serde(rename = "R/S")]
    RifleSharps,
    /// Rifle/Shotgun
    #[serde(rename = "R/G")]
    RifleShotgun,
    /// Sharps Rifle
    #[serde(rename = "SHR")]
    SharpsRifle,
    /// Rifle/Carbine
    #[serde(rename = "R/C")]
    RifleCarbine,
    /// Carbine
    #[serde(rename = "CRB")]
    Carbine,
    /// Shotgun
    #[serde(rename = "SHG")]
    Shotgun,
    /// Pistol
    #[serde(rename = "PST")]
    Pistol,
    /// 6 lb. Smoothbore
    #[serde(rename = "SM6")]
    Smoothbore6,
    /// 12 lb. Napoleon
    #[serde(rename = "N12")]
    Napoleon12,
    /// 3" Rifled Gun
    #[serde(rename = "RG3")]
    RifledGun3,
    /// 12 lb. Howitzer
    #[serde(rename = "H12")]
    Howitzer12,
    /// 24 lb. Howitzer
    #[serde(rename = "H24")]
    Howitzer24,
    /// 10 lb. Parrott
    #[serde(rename = "P10")]
    Parrott10,
    /// 20 lb. Parrott
    #[serde(rename = "P20")]
    Parrott20,
}

impl Weapon {
    /// Every weapon in the table's order.
    pub const ALL: [Weapon; 17] = [
        Weapon::Rifle,
        Weapon::Musket,
        Weapon::RifleMusket,
        Weapon::RifleSharps,
        Weapon::RifleShotgun,
        Weapon::SharpsRifle,
        Weapon::RifleCarbine,
        Weapon::Carbine,
        Weapon::Shotgun,
        Weapon::Pistol,
        Weapon::Smoothbore6,
        Weapon::Napoleon12,
        Weapon::RifledGun3,
        Weapon::Howitzer12,
        Weapon::Howitzer24,
        Weapon::Parrott10,
        Weapon::Parrott20,
    ];

    /// Its row of the Weapon/Range Casualty Table.
    pub fn row(self) -> &'static WeaponRow {
        &WEAPONS[self as usize]
    }
}

/// A unit's mode: the rows of the Mode Modifiers table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Infantry (or dismounted cavalry) in normal mode.
    Normal,
    /// Infantry in column.
    Column,
    /// Mounted cavalry.
    Mounted,
    /// A routed unit of any arm.
    Routed,
    /// Limbered artillery.
    Limbered,
    /// Unlimbered artillery.
    Unlimbered,
}

impl Mode {
    fn row(self) -> usize {
        match self {
            Mode::Normal => 0,
            Mode::Column => 1,
            Mode::Mounted => 2,
            Mode::Routed => 3,
            Mode::Limbered | Mode::Unlimbered => 4,
        }
    }

    fn is_artillery(self) -> bool {
        matches!(self, Mode::Limbered | Mode::Unlimbered)
    }

    fn words(self) -> &'static str {
        match self {
            Mode::Normal => "normal",
            Mode::Column => "column",
            Mode::Mounted => "mounted",
            Mode::Routed => "routed",
            Mode::Limbered => "limbered",
            Mode::Unlimbered => "unlimbered",
        }
    }
}

/// The defender's terrain ("If the defender is in:"); higher elevation is its own input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetTerrain {
    Clear,
    Cornfield,
    Woods,
    Town,
    BridgeFord,
}

impl TargetTerrain {
    fn row(self) -> usize {
        match self {
            TargetTerrain::Clear => TERRAIN_CLEAR,
            TargetTerrain::Cornfield => TERRAIN_CORNFIELD,
            TargetTerrain::Woods => TERRAIN_WOODS,
            TargetTerrain::Town => TERRAIN_TOWN,
            TargetTerrain::BridgeFord => TERRAIN_BRIDGE_FORD,
        }
    }
}

/// One multiplier applied, in hundredths.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Factor {
    name: &'static str,
    hundredths: u32,
}

fn factors_json(factors: &[Factor]) -> Value {
    Value::Array(factors.iter().map(|f| json!({ "modifier": f.name, "value": decimal(f.hundredths) })).collect())
}

/// `count × Π factors` as an exact fraction (numerator, denominator).
fn product(count: u128, factors: &[Factor]) -> (u128, u128) {
    factors.iter().fold((count, 1), |(num, den), f| (num * u128::from(f.hundredths), den * 100))
}

/// A leader bonus given as a decimal (1.10), in hundredths.
fn leader_hundredths(field: &str, bonus: f64) -> Result<u32, Refusal> {
    let hundredths = (bonus * 100.0).round();
    if !(50.0..=200.0).contains(&hundredths) || (bonus * 100.0 - hundredths).abs() > 1e-6 {
        return Err(refuse(
            field,
            "modifiers.leader_bonus",
            format!("a leader bonus is a direct modifier from 0.50 to 2.00 in hundredths (1.10), not {bonus}"),
        ));
    }
    Ok(hundredths as u32)
}

fn mode_factor(mode: Mode, melee: bool, lookups: &mut Vec<Lookup>) -> Factor {
    let (name, unit_type, fire, melee_mod) = MODE_MODIFIERS[mode.row()];
    let value = if melee { melee_mod } else { fire };
    lookups.push(Lookup::new(
        MODE_TABLE,
        format!("{name} ({unit_type})"),
        if melee { "MELEE" } else { "FIRE" },
        seed_decimal(value),
    ));
    Factor { name: "mode", hundredths: value }
}

fn terrain_row_factor(row: usize, melee: bool, lookups: &mut Vec<Lookup>) -> Factor {
    let (name, fire, melee_mod) = TERRAIN_MODIFIERS[row];
    let value = if melee { melee_mod } else { fire };
    let shown =
        if melee && row == TERRAIN_BRIDGE_FORD { format!("{}*", seed_decimal(value)) } else { seed_decimal(value) };
    lookups.push(Lookup::new(TERRAIN_TABLE, name, if melee { "MELEE MOD." } else { "FIRE MOD." }, shown));
    Factor {
        name: if row == TERRAIN_HIGHER_ELEVATION {
            "higher elevation"
        } else if row == TERRAIN_BRIDGE_FORD && melee {
            "attacker on bridge/ford"
        } else {
            "terrain"
        },
        hundredths: value,
    }
}

fn leader_factor(hundredths: u32, lookups: &mut Vec<Lookup>) -> Factor {
    lookups.push(Lookup::new(OTHER_TABLE, "Leader Bonus", "Direct Modifier", decimal(hundredths)));
    Factor { name: "leader", hundredths }
}

// ---------------------------------------------------------------------------------------------
// Fire

/// Inputs of `fire`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FireInput {
    /// The firing unit's weapon, by the table's abbreviation.
    pub weapon: Weapon,
    /// Range in squares, 1 or more (beyond 15 the table reads 0).
    pub range: u32,
    /// Men firing: small arms only ("men lost per 100 men").
    pub men: Option<u32>,
    /// Guns firing: artillery only ("per one gun").
    pub guns: Option<u32>,
    /// The firing unit's mode: normal, column, mounted or routed for small arms; unlimbered
    /// or routed for artillery (limbered artillery cannot fire).
    pub firer_mode: Mode,
    /// The defender's terrain.
    pub target_terrain: TargetTerrain,
    /// The defender is on higher elevation than the firer (Higher Elev. .90). Default false.
    #[serde(default)]
    pub target_higher_elevation: bool,
    /// The firer's leader bonus from the Order of Battle, a direct modifier (1.10); 0.50 to
    /// 2.00. Absent: no leader bonus.
    pub leader_bonus: Option<f64>,
    /// The fire strikes the defender's flank (Flank Modifier to Attacker 1.50). Default false.
    #[serde(default)]
    pub flank: bool,
    /// Men in the defender's square (every unit there), for the Density Modifier; 1 or more.
    pub men_in_target_square: u32,
    /// The firer's operation points remaining (Battle Time Modifier; counted as at least 5).
    pub operation_points_remaining: u32,
    /// Fortification level of the defender's square, 0 to 9 (each level takes .10 off the
    /// attacker's fire). Default 0.
    #[serde(default)]
    pub target_fortification_level: u32,
}

/// The most men or guns a single fire may count, far above any order of battle.
const MOST_FIRERS: u32 = 100_000;
/// The most operation points a unit may report remaining.
const MOST_OPERATION_POINTS: u32 = 100;
/// The highest fortification level: at 10 the works would stop every shot.
const HIGHEST_FORTIFICATION_LEVEL: u32 = 9;

/// The Density Modifier in hundredths: 1% per whole 12 men above or below 650, at most 25%.
pub fn density_hundredths(men_in_square: u32) -> u32 {
    let difference = i64::from(men_in_square) - i64::from(DENSITY_BASE_MEN);
    // Whole steps of 12 men, counted toward 650 (661 men is +0%, 662 is +1%).
    let percent = (difference / i64::from(DENSITY_MEN_PER_PERCENT)).clamp(-DENSITY_CAP_PERCENT, DENSITY_CAP_PERCENT);
    (100 + percent) as u32
}

/// The Battle Time Modifier in hundredths: (OP remaining, at least 5) / 10.
pub fn battle_time_hundredths(operation_points_remaining: u32) -> u32 {
    operation_points_remaining.max(BATTLE_TIME_FLOOR_OP) * 100 / BATTLE_TIME_DIVISOR
}

/// The Fortification modifier in hundredths: 1 − level × .10.
pub fn fortification_hundredths(level: u32) -> u32 {
    100 - level * FORTIFICATION_PER_LEVEL
}

fn validate_fire(input: &FireInput) -> Result<(u32, Option<u32>), Refusal> {
    let row = input.weapon.row();
    let (count_field, count, other_field, other) = match row.class {
        WeaponClass::SmallArms => ("men", input.men, "guns", input.guns),
        WeaponClass::Artillery => ("guns", input.guns, "men", input.men),
    };
    if other.is_some() {
        return Err(refuse(
            other_field,
            "fire.strength",
            format!("{} ({}) counts {count_field}, not {other_field}", row.weapon_type, row.abbreviation),
        ));
    }
    let count = match count {
        Some(count) if (1..=MOST_FIRERS).contains(&count) => count,
        Some(count) => {
            return Err(refuse(
                count_field,
                "fire.strength",
                format!("{count_field} firing must be 1 to {MOST_FIRERS}, not {count}"),
            ))
        }
        None => {
            return Err(refuse(
                count_field,
                "fire.strength",
                format!("{} ({}) needs the number of {count_field} firing", row.weapon_type, row.abbreviation),
            ))
        }
    };
    if input.range == 0 {
        return Err(refuse("range", "fire.range", "range is counted in squares from 1 (the adjacent square)"));
    }
    let mode_ok = match row.class {
        WeaponClass::SmallArms => !input.firer_mode.is_artillery(),
        WeaponClass::Artillery => matches!(input.firer_mode, Mode::Unlimbered | Mode::Routed),
    };
    if !mode_ok {
        let detail = if input.firer_mode == Mode::Limbered {
            "limbered artillery cannot fire (Operation Costs Table: Fire phase / LIMB. ART. is P)".to_owned()
        } else {
            format!("a unit firing {} cannot be in {} mode", row.abbreviation, input.firer_mode.words())
        };
        return Err(refuse("firer_mode", "fire.mode", detail));
    }
    let leader = input.leader_bonus.map(|bonus| leader_hundredths("leader_bonus", bonus)).transpose()?;
    if !(1..=MOST_FIRERS).contains(&input.men_in_target_square) {
        return Err(refuse(
            "men_in_target_square",
            "fire.density",
            format!("the defender's square holds 1 to {MOST_FIRERS} men, not {}", input.men_in_target_square),
        ));
    }
    if input.operation_points_remaining > MOST_OPERATION_POINTS {
        return Err(refuse(
            "operation_points_remaining",
            "fire.battle_time",
            format!(
                "operation points remaining must be 0 to {MOST_OPERATION_POINTS}, not {}",
                input.operation_points_remaining
            ),
        ));
    }
    if input.target_fortification_level > HIGHEST_FORTIFICATION_LEVEL {
        return Err(refuse(
            "target_fortification_level",
            "fire.fortification",
            format!(
                "a fortification level is 0 to {HIGHEST_FORTIFICATION_LEVEL}, not {}",
                input.target_fortification_level
            ),
        ));
    }
    Ok((count, leader))
}

/// Resolves `fire`: the table's men lost per 100 men (or per gun) times every modifier.
pub fn fire(input: FireInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let (count, leader) = validate_fire(&input)?;
    let row = input.weapon.row();
    let column = range_column(input.range);
    let table_value = row.casualties[column];
    let mut lookups = vec![Lookup::new(
        WEAPON_TABLE,
        format!("{} ({})", row.weapon_type, row.abbreviation),
        RANGE_COLUMNS[column],
        table_value,
    )];

    let mut factors = vec![terrain_row_factor(input.target_terrain.row(), false, &mut lookups)];
    if input.target_higher_elevation {
        factors.push(terrain_row_factor(TERRAIN_HIGHER_ELEVATION, false, &mut lookups));
    }
    factors.push(mode_factor(input.firer_mode, false, &mut lookups));
    if let Some(leader) = leader {
        factors.push(leader_factor(leader, &mut lookups));
    }
    if input.flank {
        lookups.push(Lookup::new(
            OTHER_TABLE,
            "Flank Modifier to Attacker",
            "modifier",
            seed_decimal(FLANK_MODIFIER_TO_ATTACKER),
        ));
        factors.push(Factor { name: "flank", hundredths: FLANK_MODIFIER_TO_ATTACKER });
    }
    let density = density_hundredths(input.men_in_target_square);
    lookups.push(Lookup::new(
        OTHER_TABLE,
        "Density Modifier",
        format!("{} men in the square", input.men_in_target_square),
        decimal(density),
    ));
    factors.push(Factor { name: "density", hundredths: density });
    let face = dice.roll(RANDOM_MODIFIER_DIE, "random modifier (d101: 0.49 + face/100)");
    let random = RANDOM_MODIFIER_OFFSET + face;
    lookups.push(Lookup::new(OTHER_TABLE, "Random Modifier", format!("d101 showed {face}"), decimal(random)));
    factors.push(Factor { name: "random", hundredths: random });
    let battle_time = battle_time_hundredths(input.operation_points_remaining);
    lookups.push(Lookup::new(
        OTHER_TABLE,
        "Battle Time Modifier",
        format!(
            "{} OP remaining{}",
            input.operation_points_remaining,
            if input.operation_points_remaining < BATTLE_TIME_FLOOR_OP { " (counted as 5)" } else { "" }
        ),
        decimal(battle_time),
    ));
    factors.push(Factor { name: "battle time", hundredths: battle_time });
    if input.target_fortification_level > 0 {
        let fortification = fortification_hundredths(input.target_fortification_level);
        lookups.push(Lookup::new(
            OTHER_TABLE,
            "Fortification",
            format!("level {}", input.target_fortification_level),
            decimal(fortification),
        ));
        factors.push(Factor { name: "fortification", hundredths: fortification });
    }

    let (per, unit) = match row.class {
        WeaponClass::SmallArms => (u128::from(SMALL_ARMS_MEN_PER_ROW), if count == 1 { "man" } else { "men" }),
        WeaponClass::Artillery => (1, if count == 1 { "gun" } else { "guns" }),
    };
    let (numerator, denominator) = product(u128::from(table_value) * u128::from(count), &factors);
    let denominator = denominator * per;
    // To the nearest man, a half rounding up.
    let rounded = (numerator * 2 + denominator) / (denominator * 2);
    let casualties = rounded.min(u128::from(input.men_in_target_square)) as u32;
    let exact = numerator as f64 / denominator as f64;
    let multiplier = product(1, &factors);
    let multiplier = multiplier.0 as f64 / multiplier.1 as f64;
    let base = (u128::from(table_value) * u128::from(count)) as f64 / per as f64;

    Ok(Resolved {
        headline: format!(
            "{count} {unit} with {} at range {}: {casualties} casualt{} (table {table_value} → {base:.2} × modifiers {multiplier:.4})",
            row.abbreviation,
            input.range,
            if casualties == 1 { "y" } else { "ies" },
        ),
        lookups,
        result: json!({
            "casualties": casualties,
            "casualties_exact": exact,
            "table_casualties": table_value,
            "base_casualties": base,
            "modifiers": factors_json(&factors),
            "total_modifier": multiplier,
            "random_modifier_die": face,
            "capped_at_men_in_square": rounded > u128::from(input.men_in_target_square),
        }),
    })
}

// ---------------------------------------------------------------------------------------------
// Melee

/// One side of a melee.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeleeUnit {
    /// Men in the unit (its strength), 1 or more.
    pub men: u32,
    /// Its mode (Mode Modifiers, MELEE column). Artillery cannot attack.
    pub mode: Mode,
    /// Its leader bonus from the Order of Battle, a direct modifier (1.10); 0.50 to 2.00.
    /// Absent: no leader bonus.
    pub leader_bonus: Option<f64>,
}

/// Inputs of `melee`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeleeInput {
    /// The attacking unit.
    pub attacker: MeleeUnit,
    /// The defending unit.
    pub defender: MeleeUnit,
    /// The defender's terrain (its MELEE MOD. multiplies the attacker's strength).
    pub defender_terrain: TargetTerrain,
    /// The defender is on higher elevation than the attacker (.90). Default false.
    #[serde(default)]
    pub defender_higher_elevation: bool,
    /// The attacker attacks from a bridge or ford (.80*). Default false.
    #[serde(default)]
    pub attacker_on_bridge_or_ford: bool,
    /// A flank attack: attacker's strength × 1.50, defender's × .50. Default false.
    #[serde(default)]
    pub flank: bool,
    /// Men in the defender's square (every unit there), for the Density Modifier on the
    /// attacker's strength; default the defender's men. Rules version 2.
    pub men_in_defender_square: Option<u32>,
    /// Men in the attacker's square, for the Density Modifier on the defender's strength;
    /// default the attacker's men. Rules version 2.
    pub men_in_attacker_square: Option<u32>,
}

fn validate_square(field: &str, men: Option<u32>, rules_version: u32) -> Result<(), Refusal> {
    match men {
        Some(_) if rules_version < 2 => Err(refuse(
            field,
            "melee.density",
            "this campaign plays rules version 1, where melee takes no Density Modifier: leave the square's men out",
        )),
        Some(men) if !(1..=MOST_FIRERS).contains(&men) => {
            Err(refuse(field, "melee.density", format!("a square holds 1 to {MOST_FIRERS} men, not {men}")))
        }
        _ => Ok(()),
    }
}

/// Density and Random Modifiers on one side's melee strength (rules version 2): "OTHER
/// MODIFIERS ON FIRE AND MELEE STRENGTH/CASUALTIES"; only Battle Time is "for fire combat,
/// not melee".
fn density_and_random(
    side: &str,
    men_in_square_struck: u32,
    factors: &mut Vec<Factor>,
    lookups: &mut Vec<Lookup>,
    dice: &mut DiceStream,
) -> u32 {
    let density = density_hundredths(men_in_square_struck);
    lookups.push(Lookup::new(
        OTHER_TABLE,
        format!("Density Modifier ({side})"),
        format!("{men_in_square_struck} men in the square it melees"),
        decimal(density),
    ));
    factors.push(Factor { name: "density", hundredths: density });
    let face = dice.roll(RANDOM_MODIFIER_DIE, format!("{side}'s random modifier (d101: 0.49 + face/100)"));
    let random = RANDOM_MODIFIER_OFFSET + face;
    lookups.push(Lookup::new(
        OTHER_TABLE,
        format!("Random Modifier ({side})"),
        format!("d101 showed {face}"),
        decimal(random),
    ));
    factors.push(Factor { name: "random", hundredths: random });
    face
}

fn validate_unit(side: &str, unit: &MeleeUnit) -> Result<Option<u32>, Refusal> {
    if !(1..=MOST_FIRERS).contains(&unit.men) {
        return Err(refuse(
            &format!("{side}.men"),
            "melee.strength",
            format!("a unit in melee has 1 to {MOST_FIRERS} men, not {}", unit.men),
        ));
    }
    unit.leader_bonus.map(|bonus| leader_hundredths(&format!("{side}.leader_bonus"), bonus)).transpose()
}

/// Modified strength as an exact fraction, and the factors behind it.
struct Strength {
    factors: Vec<Factor>,
    numerator: u128,
    denominator: u128,
}

impl Strength {
    fn new(men: u32, factors: Vec<Factor>) -> Self {
        let (numerator, denominator) = product(u128::from(men), &factors);
        Self { factors, numerator, denominator }
    }

    fn value(&self) -> f64 {
        self.numerator as f64 / self.denominator as f64
    }
}

/// A strength for the headline: 712.8, 900.
fn short(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The melee differential, truncated toward zero as whole-number division does.
pub fn melee_differential_of(attacker: (u128, u128), defender: (u128, u128)) -> i64 {
    let (a_num, a_den) = (attacker.0 as i128, attacker.1 as i128);
    let (d_num, d_den) = (defender.0 as i128, defender.1 as i128);
    let difference = a_num * d_den - d_num * a_den;
    (difference / (a_den * d_den * MELEE_DIFFERENTIAL_DIVISOR)) as i64
}

/// Resolves `melee`. Since rules version 2 each side's strength also takes the Density
/// Modifier (men in the square it melees) and its own Random Modifier (a d101 each, attacker's
/// first, rolled before the loss dice).
pub fn melee(input: MeleeInput, dice: &mut DiceStream, rules_version: u32) -> Result<Resolved, Refusal> {
    let attacker_leader = validate_unit("attacker", &input.attacker)?;
    let defender_leader = validate_unit("defender", &input.defender)?;
    validate_square("men_in_defender_square", input.men_in_defender_square, rules_version)?;
    validate_square("men_in_attacker_square", input.men_in_attacker_square, rules_version)?;
    if input.attacker.mode.is_artillery() {
        return Err(refuse(
            "attacker.mode",
            "melee.artillery_attack",
            "artillery cannot attack in melee (Operation Costs Table: Melee: Att. is P for artillery)",
        ));
    }

    let mut lookups = Vec::new();
    // The attacker's strength: its mode, its leader, the defender's ground and the flank.
    let mut attacker_factors = vec![mode_factor(input.attacker.mode, true, &mut lookups)];
    if let Some(leader) = attacker_leader {
        attacker_factors.push(leader_factor(leader, &mut lookups));
    }
    if input.defender_terrain == TargetTerrain::BridgeFord {
        // "Bridge/Ford … .80* — * Attacker on bridge/ford": a defender on one gives nothing.
        lookups.push(Lookup::new(
            TERRAIN_TABLE,
            "Bridge/Ford (defender)",
            "MELEE MOD.",
            "1.00 (the .80* is for an attacker on a bridge/ford)",
        ));
        attacker_factors.push(Factor { name: "terrain", hundredths: 100 });
    } else {
        attacker_factors.push(terrain_row_factor(input.defender_terrain.row(), true, &mut lookups));
    }
    if input.defender_higher_elevation {
        attacker_factors.push(terrain_row_factor(TERRAIN_HIGHER_ELEVATION, true, &mut lookups));
    }
    if input.attacker_on_bridge_or_ford {
        attacker_factors.push(terrain_row_factor(TERRAIN_BRIDGE_FORD, true, &mut lookups));
    }
    if input.flank {
        lookups.push(Lookup::new(
            OTHER_TABLE,
            "Flank Modifier to Attacker",
            "modifier",
            seed_decimal(FLANK_MODIFIER_TO_ATTACKER),
        ));
        attacker_factors.push(Factor { name: "flank", hundredths: FLANK_MODIFIER_TO_ATTACKER });
    }
    let mut defender_factors = vec![mode_factor(input.defender.mode, true, &mut lookups)];
    if let Some(leader) = defender_leader {
        defender_factors.push(leader_factor(leader, &mut lookups));
    }
    if input.flank {
        lookups.push(Lookup::new(
            OTHER_TABLE,
            "Flank Modifier to Defender",
            "modifier",
            seed_decimal(FLANK_MODIFIER_TO_DEFENDER),
        ));
        defender_factors.push(Factor { name: "flank", hundredths: FLANK_MODIFIER_TO_DEFENDER });
    }
    let mut random_faces = None;
    if rules_version >= 2 {
        let struck_by_attacker = input.men_in_defender_square.unwrap_or(input.defender.men);
        let struck_by_defender = input.men_in_attacker_square.unwrap_or(input.attacker.men);
        let a = density_and_random("attacker", struck_by_attacker, &mut attacker_factors, &mut lookups, dice);
        let d = density_and_random("defender", struck_by_defender, &mut defender_factors, &mut lookups, dice);
        random_faces = Some((a, d));
    }
    let attacker = Strength::new(input.attacker.men, attacker_factors);
    let defender = Strength::new(input.defender.men, defender_factors);
    let differential =
        melee_differential_of((attacker.numerator, attacker.denominator), (defender.numerator, defender.denominator));
    let row = melee_row_for(differential);
    lookups.push(Lookup::new(MELEE_TABLE, row.differential, "ATT. LOSSES", row.attacker_losses_text()));
    lookups.push(Lookup::new(MELEE_TABLE, row.differential, "DEF. LOSSES", row.defender_losses_text()));

    let attacker_die = dice.roll(MELEE_LOSS_DIE, "attacker's losses, random of 25 (d25)");
    let defender_die = dice.roll(MELEE_LOSS_DIE, "defender's losses, random of 25 (d25)");
    let attacker_table_losses = attacker_die + row.attacker_loss_addition;
    let defender_table_losses = defender_die + row.defender_loss_addition;
    // A unit cannot lose more men than it has.
    let attacker_losses = attacker_table_losses.min(input.attacker.men);
    let defender_losses = defender_table_losses.min(input.defender.men);

    // "Defender's retreat is checked first and then the Attacker is checked. Both the attacker
    // and defender (except for routed units) will not retreat at the same time."
    lookups.push(Lookup::new(
        MELEE_TABLE,
        row.differential,
        "% DEF. RETREAT",
        format!("{}%", row.defender_retreat_percent),
    ));
    let (defender_roll, defender_retreats) = percent_check(
        dice,
        row.defender_retreat_percent,
        &format!("defender's retreat, {}% (d100)", row.defender_retreat_percent),
    );
    let either_routed = input.attacker.mode == Mode::Routed || input.defender.mode == Mode::Routed;
    let attacker_check = if defender_retreats && !either_routed {
        None
    } else {
        lookups.push(Lookup::new(
            MELEE_TABLE,
            row.differential,
            "% ATT. RETREAT",
            format!("{}%", row.attacker_retreat_percent),
        ));
        Some(percent_check(
            dice,
            row.attacker_retreat_percent,
            &format!("attacker's retreat, {}% (d100)", row.attacker_retreat_percent),
        ))
    };
    let attacker_retreats = attacker_check.is_some_and(|(_, retreats)| retreats);

    let retreat_words = match (defender_retreats, attacker_retreats) {
        (true, true) => "both retreat",
        (true, false) => "the defender retreats",
        (false, true) => "the attacker retreats",
        (false, false) => "neither retreats",
    };
    let mut result = json!({
            "attacker_modified_strength": attacker.value(),
            "defender_modified_strength": defender.value(),
            "attacker_modifiers": factors_json(&attacker.factors),
            "defender_modifiers": factors_json(&defender.factors),
            "differential": differential,
            "row": row.differential,
            "attacker_losses": attacker_losses,
            "defender_losses": defender_losses,
            "attacker_table_losses": attacker_table_losses,
            "defender_table_losses": defender_table_losses,
            "defender_retreat": { "percent": row.defender_retreat_percent, "roll": defender_roll, "retreats": defender_retreats },
            "attacker_retreat": attacker_check.map(|(roll, retreats)| json!({ "percent": row.attacker_retreat_percent, "roll": roll, "retreats": retreats })),
            "defender_retreats": defender_retreats,
            "attacker_retreats": attacker_retreats,
    });
    if let Some((a, d)) = random_faces {
        result["random_modifier_dice"] = json!({ "attacker": a, "defender": d });
    }
    Ok(Resolved {
        headline: format!(
            "Melee {} v {} (modified {} v {}), differential {differential:+}: attacker loses {attacker_losses}, defender loses {defender_losses}; {retreat_words}",
            input.attacker.men,
            input.defender.men,
            short(attacker.value()),
            short(defender.value()),
        ),
        lookups,
        result,
    })
}
