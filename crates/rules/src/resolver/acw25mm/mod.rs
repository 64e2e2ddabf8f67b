//! `acw-25mm`: the 25/28mm American Civil War tabletop rules (seed 001) as a resolver ruleset.
//!
//! The referee keeps the table and measures; the server throws the dice and reads the seed's
//! tables. Every action checks its inputs fully before the first die, records every table cell
//! it reads as a [`Lookup`], and answers with a one-line headline for the forum. The decisions
//! taken where the seed is silent are in `docs/rules/acw-25mm.md`.

mod army;
mod combat;
mod setup;
pub mod tables;
mod victory;

#[cfg(test)]
mod tests;

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{parse_inputs, ActionSpec, Resolved, Ruleset};
use crate::{DiceStream, Refusal};

/// The 25/28mm ACW rules.
pub struct Acw25mm;

/// A troop class, A (Zouaves — the seed's "Zouarves" —, veterans, guard) down to E (raw infantry, Indians).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Class {
    A,
    B,
    C,
    D,
    E,
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let letter = match self {
            Class::A => "A",
            Class::B => "B",
            Class::C => "C",
            Class::D => "D",
            Class::E => "E",
        };
        f.write_str(letter)
    }
}

/// Where a target stands: in the open, behind soft cover (fences, low walls, hedges, marshes,
/// hills, streams) or behind hard cover (field- and earthworks, woods, high walls, rivers,
/// buildings, bridges, swamps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Cover {
    Open,
    Soft,
    Hard,
}

impl Cover {
    fn words(self) -> &'static str {
        match self {
            Cover::Open => "in the open",
            Cover::Soft => "behind soft cover",
            Cover::Hard => "behind hard cover",
        }
    }
}

/// Short or long range, as the "Ranges" table bands a measured distance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Range {
    Short,
    Long,
}

impl Range {
    fn words(self) -> &'static str {
        match self {
            Range::Short => "short range",
            Range::Long => "long range",
        }
    }
}

/// One of the two armies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Federal,
    Confederate,
}

impl Side {
    fn opponent(self) -> Side {
        match self {
            Side::Federal => Side::Confederate,
            Side::Confederate => Side::Federal,
        }
    }

    fn words(self) -> &'static str {
        match self {
            Side::Federal => "Federal",
            Side::Confederate => "Confederate",
        }
    }
}

/// The path of an input field, as refusals name it.
fn field(name: &str) -> String {
    format!("body.inputs.{name}")
}

/// Refuses `value` unless it lies in `low..=high`.
fn check_within(name: &str, rule: &str, value: u32, low: u32, high: u32, why: &str) -> Result<(), Refusal> {
    if (low..=high).contains(&value) {
        Ok(())
    } else {
        Err(Refusal::new(field(name), rule, format!("{name} must be {low} to {high} ({why}), not {value}")))
    }
}

const SEED: &str = "001_4467c6c8e3357613.txt";

impl Ruleset for Acw25mm {
    fn name(&self) -> &'static str {
        "acw-25mm"
    }

    fn title(&self) -> &'static str {
        "American Civil War, 25/28mm tabletop rules"
    }

    fn seed(&self) -> &'static str {
        SEED
    }

    fn actions(&self) -> Vec<ActionSpec> {
        vec![
            ActionSpec::of::<setup::ChooseSidesInput>(
                "choose_sides",
                "Dice for who picks Federal or Confederate: 1xD6 each, highest picks, ties throw again.",
                "To start",
                json!({ "first_player": "Alice", "second_player": "Bob" }),
            ),
            ActionSpec::of::<setup::TownInput>(
                "town",
                "Who holds the town: 1xD6 each side, highest places the town and bridge in square 3.",
                "To start",
                json!({}),
            ),
            ActionSpec::of::<setup::RiverEndInput>(
                "river_end",
                "The river's end square on the opponent's table edge: 1xD10, a 6 becomes a 1, a 7 a 2 …",
                "To start",
                json!({ "thrown_by": "confederate" }),
            ),
            ActionSpec::of::<setup::TerrainInput>(
                "terrain",
                "Place one side's 2 hills, farm, 2 woods and broken ground by 1xD10 each, throwing again onto an occupied square.",
                "To start",
                json!({ "side": "federal", "holds_town": true }),
            ),
            ActionSpec::of::<army::ArmyInput>(
                "army",
                "Generate one side's army: extra foot (average die), B upgrade, cavalry, batteries, classes, figures, brigades.",
                "Allocation of Troops; Allocation of Figures",
                json!({ "side": "confederate", "sharpshooter_swap": true }),
            ),
            ActionSpec::of::<combat::FireInput>(
                "fire",
                "One unit fires: dice by formation and arm, score to hit by class and modifiers, saving throws, officer check.",
                "Firing",
                json!({
                    "fire_by": "line", "class": "B", "figures": 14, "weapon": "rifle",
                    "range_cm": 60, "formation_fail": true,
                    "target": "skirmish", "target_cover": "soft", "officer_attached": true
                }),
            ),
            ActionSpec::of::<combat::MeleeInput>(
                "melee",
                "One side's melee: 1xD10 per figure in base-to-base contact against the scores to kill.",
                "Melee",
                json!({
                    "figures": 6, "target_figures": 4, "target_class": "B",
                    "target_cover": "open", "charging": true
                }),
            ),
            ActionSpec::of::<combat::FormationTestInput>(
                "formation_test",
                "Formation fail test: 1xD6 against the class's score to pass.",
                "Formation Fail Test",
                json!({ "class": "A" }),
            ),
            ActionSpec::of::<combat::MoraleInput>(
                "morale",
                "Morale by points against the Infantry and Cavalry or the Sharpshooters and Artillery men chart.",
                "Morale",
                json!({
                    "chart": "infantry_cavalry", "class": "B", "original_figures": 12,
                    "figures_present": 7
                }),
            ),
            ActionSpec::of::<combat::JumpInput>(
                "jump_obstacle",
                "Mounted figures jump a fence or wall: 1xD6 each, a 6 kills the trooper.",
                "Movement",
                json!({ "figures": 12, "obstacle": "fence" }),
            ),
            ActionSpec::of::<combat::CrossRiverInput>(
                "cross_river",
                "Mounted figures cross a river: 1xD6 each, a 5 or 6 drowns the trooper.",
                "Movement",
                json!({ "figures": 12 }),
            ),
            ActionSpec::of::<setup::FlankMarchInput>(
                "flank_march",
                "Flank march: 1xD20 gives the move the units arrive on and the square.",
                "OPTIONAL: Flank marches",
                json!({ "units": 2, "flank": "squares_1_and_6" }),
            ),
            ActionSpec::of::<setup::TimeOfDayInput>(
                "time_of_day",
                "Time of day: 3xD6 hours after midnight, throwing again (a day passes) on 6 or less or 17 or more.",
                "Night and Day",
                json!({ "thrown_by": "federal", "season": "summer" }),
            ),
            ActionSpec::of::<setup::WindInput>(
                "wind",
                "Wind: 1xD6, a 1 means no wind (smoke builds up).",
                "Wind",
                json!({}),
            ),
            ActionSpec::of::<combat::BombardInput>(
                "bombard",
                "A field or heavy gun fires at a building, bridge, wall, fence or works; hits carry across shots to its hit value.",
                "Destruction of",
                json!({
                    "gun": "field", "class": "B", "artillery_men": 5,
                    "structure": "wooden_bridge", "hits_so_far": 12
                }),
            ),
            ActionSpec::of::<victory::VictoryInput>(
                "victory_points",
                "Count both sides' victory points and name the winner.",
                "Victory Points",
                json!({
                    "federal": { "routed_enemy_units": 2, "squares_occupied": 1, "farms": 1 },
                    "confederate": { "town": true, "bridges": 1, "officers_killed": 1 },
                    "days_passed": 1, "time_thrown_by": "federal"
                }),
            ),
        ]
    }

    fn resolve(&self, action: &str, inputs: &Value, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
        self.resolve_under(crate::RULES_VERSION, action, inputs, dice)
    }

    /// Version 1: the army's regiments read "Zouave" where the seed writes "Zouarve".
    fn resolve_under(
        &self,
        rules_version: u32,
        action: &str,
        inputs: &Value,
        dice: &mut DiceStream,
    ) -> Result<Resolved, Refusal> {
        match action {
            "choose_sides" => setup::choose_sides(parse_inputs(inputs)?, dice),
            "town" => setup::town(parse_inputs(inputs)?, dice),
            "river_end" => setup::river_end(parse_inputs(inputs)?, dice),
            "terrain" => setup::terrain(parse_inputs(inputs)?, dice),
            "army" => army::army(parse_inputs(inputs)?, dice, rules_version),
            "fire" => combat::fire(parse_inputs(inputs)?, dice),
            "melee" => combat::melee(parse_inputs(inputs)?, dice),
            "formation_test" => combat::formation_test(parse_inputs(inputs)?, dice),
            "morale" => combat::morale(parse_inputs(inputs)?),
            "jump_obstacle" => combat::jump_obstacle(parse_inputs(inputs)?, dice),
            "cross_river" => combat::cross_river(parse_inputs(inputs)?, dice),
            "flank_march" => setup::flank_march(parse_inputs(inputs)?, dice),
            "time_of_day" => setup::time_of_day(parse_inputs(inputs)?, dice),
            "wind" => setup::wind(parse_inputs(inputs)?, dice),
            "bombard" => combat::bombard(parse_inputs(inputs)?, dice),
            "victory_points" => victory::victory_points(parse_inputs(inputs)?),
            _ => Err(Refusal::new(
                "body.action",
                "resolver.unknown_action",
                format!("the acw-25mm ruleset has no action `{action}`"),
            )),
        }
    }
}
