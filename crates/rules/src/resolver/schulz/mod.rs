//! Ted Schulz's Civil War rules (seed 002, "ACW rules by Ted Schulz", December 17, 2000), as a
//! resolver ruleset: small-arms, Gatling and artillery fire, melee rounds, shots on buildings,
//! towers, walls, bridges and doors, pushing a storming ladder off a wall, and move allowances.
//!
//! "Dice are used for all shooting/fighting results (1 die/man)." Every die here is a d6 from
//! the post's stream. The referee keeps the table and says what is in range, under the burst
//! pattern and behind cover; the server rolls and reads the seed's tables. Every decision taken
//! where the seed is silent is written down in `docs/rules/schulz-acw.md`.

pub mod artillery;
pub mod casualties;
pub mod fire;
pub mod melee;
pub mod moving;
pub mod storming;
pub mod structures;
pub mod tables;

#[cfg(test)]
mod tests;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use self::tables::*;
use super::{parse_inputs, ActionSpec, Lookup, Resolved, Ruleset};
use crate::{DiceStream, Refusal};

/// The ruleset's name, as campaigns choose it.
pub const NAME: &str = "schulz-acw";

/// The most men one post may list in a group (a sanity bound, not the seed's).
pub const MAX_MEN: u32 = 100;
/// The most points a fort wall section may be given (the seed gives walls no number).
pub const MAX_WALL_POINTS: u32 = 1000;

/// Ted Schulz's Civil War rules.
pub struct Schulz;

impl Ruleset for Schulz {
    fn name(&self) -> &'static str {
        NAME
    }

    fn title(&self) -> &'static str {
        "Civil War rules by Ted Schulz (25mm)"
    }

    fn seed(&self) -> &'static str {
        "002_cb942155cba86818"
    }

    fn actions(&self) -> Vec<ActionSpec> {
        vec![
            ActionSpec::of::<fire::SmallArmsFire>(
                "small_arms_fire",
                "Men fire one die each at a group of men; hits, horse hits, survival rolls",
                "GENERAL; SMALL ARMS RANGES/EFFECTS; COVER",
                json!({"shooters": "infantry", "men": 12, "slope": "normal", "range_inches": 7,
                       "target": {"troops": "infantry", "men": 10, "cover": "regular"}}),
            )
            .also_accepting(&["small-arms-fire"]),
            ActionSpec::of::<fire::GatlingFire>(
                "gatling_fire",
                "A Gatling gun fires: one die for every man under the wedge pattern",
                "GATLING GUN; SMALL ARMS RANGES/EFFECTS; CREWS; COVER",
                json!({"mounting": "field", "crew": 2, "slope": "normal", "range_inches": 5,
                       "under_pattern": [{"troops": "cavalry", "men": 4},
                                         {"troops": "infantry", "men": 3, "cover": "regular"}]}),
            )
            .also_accepting(&["gatling-fire"]),
            ActionSpec::of::<artillery::ArtilleryFire>(
                "artillery_fire",
                "A cannon or mortar fires: ranging shot by range band, then fire for effect \
                 (or grape shot) on everything under the pattern",
                "ARTILLERY; ARTILLERY RANGES; CREWS; COVER; BUILDINGS; BRIDGES; FORT",
                json!({"piece": "heavy_cannon", "crew": 4, "slope": "normal", "range_inches": 30,
                       "under_pattern": [{"troops": "infantry", "men": 5},
                                         {"troops": "artillery_men", "men": 2,
                                          "cover": "over_the_top"}],
                       "horses_under_pattern": 1,
                       "structures": [{"kind": "building_section", "size": 50, "points": 50}]}),
            )
            .also_accepting(&["artillery-fire"]),
            ActionSpec::of::<structures::StructureHit>(
                "structure_hit",
                "An artillery shot on target takes 2 dice off buildings, towers, wall sections \
                 and bridges; blows doors off and hits cannons on walls with a 1",
                "BUILDINGS; BRIDGES; FORT AND BUILDINGS; FORT",
                json!({"structures": [{"kind": "building_section", "size": 30, "points": 22},
                                      {"kind": "bridge", "bridge": "regular", "points": 30},
                                      {"kind": "fort_tower", "points": 25},
                                      {"kind": "door"},
                                      {"kind": "wall_cannon", "wall_points": 12}]}),
            )
            .also_accepting(&["structure-hit"]),
            ActionSpec::of::<melee::MeleeRound>(
                "melee_round",
                "One round of melee between two groups of at most 10 men, with both groups' \
                 sealed stay-or-retreat choices from the round before",
                "MELEE; MELEE WITH GUN CREW; STORMING",
                json!({"round": 1, "attacker": {"troops": "infantry", "men": 4},
                       "defender": {"troops": "artillery_men", "men": 3},
                       "rest_of_gun_crew": 1}),
            )
            .also_accepting(&["melee-round"]),
            ActionSpec::of::<storming::LadderPushOff>(
                "ladder_push_off",
                "Two men on the wall try to push a storming ladder off (1,2); the men on it \
                 need 4,5,6 to survive the fall",
                "STORMING",
                json!({"men_on_ladder": 2}),
            )
            .also_accepting(&["ladder-push-off"]),
            ActionSpec::of::<moving::MoveAllowance>(
                "move_allowance",
                "How far men, cavalry, vehicles or a hauled gun move: up, down, road, horses \
                 killed, rivers, ponds, blockades and half-move tasks",
                "MOVING; VEHICLE & ARMS MOVING; EXTRA MOVING RULES",
                json!({"mover": "four_horse_caisson", "load": "cannon", "ground": "up",
                       "horses_killed": 1, "dropping_dead_horse": true}),
            )
            .also_accepting(&["move-allowance"]),
        ]
    }

    fn resolve(&self, action: &str, inputs: &Value, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
        match action {
            "small_arms_fire" => fire::small_arms_fire(&parse_inputs(inputs)?, dice),
            "gatling_fire" => fire::gatling_fire(&parse_inputs(inputs)?, dice),
            "artillery_fire" => artillery::artillery_fire(&parse_inputs(inputs)?, dice),
            "structure_hit" => structures::structure_hit(&parse_inputs(inputs)?, dice),
            "melee_round" => melee::melee_round(&parse_inputs(inputs)?, dice),
            "ladder_push_off" => storming::ladder_push_off(&parse_inputs(inputs)?, dice),
            "move_allowance" => moving::move_allowance(&parse_inputs(inputs)?),
            other => Err(Refusal::new(
                "body.action",
                "resolver.unknown_action",
                format!("the {NAME} ruleset has no action `{other}`"),
            )),
        }
    }
}

// ==============================================================================================
// Words of the game
// ==============================================================================================

/// Level ground, uphill or downhill (the tables' NORMAL, UP and DOWN columns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Slope {
    #[default]
    Normal,
    Up,
    Down,
}

impl Slope {
    fn column(self) -> &'static str {
        match self {
            Slope::Normal => "NORMAL",
            Slope::Up => "UP",
            Slope::Down => "DOWN",
        }
    }

    fn index(self) -> usize {
        match self {
            Slope::Normal => 0,
            Slope::Up => 1,
            Slope::Down => 2,
        }
    }
}

/// Who fires small arms (the rows of SMALL ARMS RANGES/EFFECTS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Shooters {
    Infantry,
    ArtilleryMen,
    Cavalry,
    SharpshooterShort,
    SharpshooterLong,
}

impl Shooters {
    fn row(self) -> ShooterRow {
        match self {
            Shooters::Infantry => ShooterRow::Infantry,
            Shooters::ArtilleryMen => ShooterRow::ArtilleryMen,
            Shooters::Cavalry => ShooterRow::Cavalry,
            Shooters::SharpshooterShort => ShooterRow::SharpshooterShort,
            Shooters::SharpshooterLong => ShooterRow::SharpshooterLong,
        }
    }
}

/// What the men are (the rows of the melee NEEDED TO KILL table). `cavalry` is mounted
/// cavalry; dismounted troopers are `unmounted_cavalry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Troops {
    Infantry,
    Cavalry,
    UnmountedCavalry,
    Sharpshooters,
    ArtilleryMen,
}

impl Troops {
    fn words(self) -> &'static str {
        match self {
            Troops::Infantry => "infantry",
            Troops::Cavalry => "cavalry",
            Troops::UnmountedCavalry => "unmounted cavalry",
            Troops::Sharpshooters => "sharpshooters",
            Troops::ArtilleryMen => "artillery men",
        }
    }

    fn melee_row(self) -> MenRow {
        match self {
            Troops::Infantry => MenRow::Infantry,
            Troops::Cavalry => MenRow::Cavalry,
            Troops::UnmountedCavalry => MenRow::UnmountedCavalry,
            Troops::Sharpshooters => MenRow::Sharpshooters,
            Troops::ArtilleryMen => MenRow::ArtilleryMen,
        }
    }

    fn mounted(self) -> bool {
        self == Troops::Cavalry
    }
}

/// The cover men have from this fire, in the seed's words (see COVER).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Cover {
    /// In the open (cannons and live lone horses give no cover).
    #[default]
    None,
    /// Regular cover: anything reasonable, stone walls, boulders, dead horses, wagons,
    /// caissons and their horses, windows and doors. Reduces small arms, Gatling and grape
    /// shot effect by 1; no help against shells.
    Regular,
    /// Over-the-top artillery cover: within 2" of a building wall, cliff or fort wall. Counts
    /// as regular cover against small arms; shells (not mortars) cannot hit these men.
    OverTheTop,
    /// Complete artillery cover: inside a building with points, not at a door or window.
    /// Counts as regular cover against small arms; no shell can hit these men.
    Complete,
}

impl Cover {
    fn words(self) -> &'static str {
        match self {
            Cover::None => "no cover",
            Cover::Regular => "regular cover",
            Cover::OverTheTop => "over the top artillery cover",
            Cover::Complete => "complete artillery cover",
        }
    }
}

/// A group of men under fire.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetGroup {
    /// What the men are; `cavalry` is mounted (hits split between man and horse).
    pub troops: Troops,
    /// How many men (1 to 100).
    pub men: u32,
    /// Their cover from this fire (default `none`).
    #[serde(default)]
    pub cover: Cover,
    /// How many of these men (counted first) were already hit once this turn and survived;
    /// "Any man hit (in one turn) two or more times is automatically dead".
    #[serde(default)]
    pub hit_earlier_this_turn: u32,
}

// ==============================================================================================
// Checks shared by the actions
// ==============================================================================================

fn check_men(field: &str, men: u32) -> Result<(), Refusal> {
    if (1..=MAX_MEN).contains(&men) {
        Ok(())
    } else {
        Err(Refusal::new(field, "fire.men", format!("1 to {MAX_MEN} men, not {men}")))
    }
}

fn check_group(field: &str, g: &TargetGroup) -> Result<(), Refusal> {
    check_men(&format!("{field}.men"), g.men)?;
    check_hit_earlier(field, "fire.hit_earlier", g.hit_earlier_this_turn, g.men)
}

/// The men of a group hit earlier this turn are some of its men.
fn check_hit_earlier(group_field: &str, rule: &str, hit_earlier: u32, men: u32) -> Result<(), Refusal> {
    if hit_earlier > men {
        return Err(Refusal::new(
            format!("{group_field}.hit_earlier_this_turn"),
            rule,
            format!("{hit_earlier} men hit earlier this turn, but the group has only {men}"),
        ));
    }
    Ok(())
}

fn check_groups(field: &str, groups: &[TargetGroup], least: usize) -> Result<(), Refusal> {
    if groups.len() < least {
        return Err(Refusal::new(field, "fire.targets", "name at least one group of men under the pattern"));
    }
    if groups.len() > 20 {
        return Err(Refusal::new(field, "fire.targets", "at most 20 groups under one pattern"));
    }
    for (n, g) in groups.iter().enumerate() {
        check_group(&format!("{field}[{n}]"), g)?;
    }
    Ok(())
}

fn check_range(field: &str, range: Inches, max: Inches, row: &str, slope: Slope) -> Result<(), Refusal> {
    if range.is_finite() && (0.0..=max).contains(&range) {
        Ok(())
    } else {
        Err(Refusal::new(
            field,
            "fire.range",
            format!(
                "{} firing {} reach 0\" to {max}\", not {range}\"",
                row.to_lowercase(),
                slope.column().to_lowercase()
            ),
        ))
    }
}

/// "CREWS (MINIMUM IS NEEDED TO FIRE)"
fn check_crew(field: &str, crew: u32, row: &str, lookups: &mut Vec<Lookup>) -> Result<(), Refusal> {
    let (name, most, least) = CREWS.iter().find(|(name, _, _)| *name == row).copied().unwrap_or(("CANNON", 4, 2));
    if crew < least {
        return Err(Refusal::new(
            field,
            "crew.minimum",
            format!("a {} needs a crew of {least} to fire, not {crew}", name.to_lowercase()),
        ));
    }
    if crew > most {
        return Err(Refusal::new(
            field,
            "crew.maximum",
            format!("a {} has a crew of at most {most}, not {crew}", name.to_lowercase()),
        ));
    }
    lookups.push(Lookup::new("CREWS", name, "MAXIMUM / MINIMUM", format!("{most} / {least}")));
    Ok(())
}

fn list(values: &[u32]) -> String {
    values.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

fn capitalise(words: &str) -> String {
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
