//! `ops-tables`: seed 003's Operation Costs, Ammo Resupply, Melee Combat Results, Weapon/Range
//! Casualty, Fatigue Gain and strength/casualty modifier tables.
//!
//! Every percentage chance is a d100 from the post's stream: the event happens when the die
//! shows the percentage or less (70%: 1–70 succeeds, 71–100 fails). "Random of 25" is a d25
//! (1–25). The ±50% Random Modifier is a d101 read as 0.49 + face/100 (.50 to 1.50). The
//! decisions taken where the seed is silent are in `docs/rules/ops-tables.md`.

mod combat;
mod fatigue;
mod operations;
mod resupply;
pub mod tables;

#[cfg(test)]
mod tests;

use serde_json::{json, Value};

use super::{parse_inputs, ActionSpec, Resolved, Ruleset};
use crate::{DiceStream, Refusal};

pub use combat::{FireInput, MeleeInput, MeleeUnit, Mode, TargetTerrain, Weapon};
pub use fatigue::FatigueGainInput;
pub use operations::{MoveTerrain, Operation, OperationCostInput, UnitType, ZocMove};
pub use resupply::{AmmoResupplyInput, Arm, Side};

/// The operation costs, resupply, melee and fire casualty tables of seed 003.
pub struct OpsTables;

impl Ruleset for OpsTables {
    fn name(&self) -> &'static str {
        "ops-tables"
    }

    fn title(&self) -> &'static str {
        "Operation costs, ammunition resupply, melee and fire casualty tables"
    }

    fn seed(&self) -> &'static str {
        "003_532c948ba9b90adf"
    }

    fn actions(&self) -> Vec<ActionSpec> {
        vec![
            ActionSpec::of::<OperationCostInput>(
                "operation_cost",
                "Operation points for one square entered or one action, by terrain and unit type: diagonals, road bonus, higher elevation, zones of control, mode change, unlimbering in a ZOC, fortify, fire, melee. P is refused.",
                "Operation Costs Table",
                json!({
                    "operation": "enter_square",
                    "unit": "infantry",
                    "terrain": "woods",
                    "diagonal": true,
                    "zoc": "enter_or_leave"
                }),
            ),
            ActionSpec::of::<AmmoResupplyInput>(
                "ammo_resupply",
                "Ammunition resupply: eligibility by range to the division leader (or the flat 50% for cavalry, cavalry artillery, Confederate artillery and Evans' Brigade), then the Resupply Table by side, arm and mid turn; each chance a d100.",
                "Ammo Resupply Tables",
                json!({
                    "side": "union",
                    "arm": "infantry",
                    "range_to_division_leader": 3,
                    "mid_turn": false
                }),
            ),
            ActionSpec::of::<MeleeInput>(
                "melee",
                "Melee: modified strengths (mode, leader, terrain, flank, and the Density and Random Modifiers, a d101 each), (attacker − defender) / 50 to the differential row, losses of a d25 plus the row's addition, then the defender's retreat check and the attacker's (never both, routed units aside).",
                "Melee Combat Results Table",
                json!({
                    "attacker": { "men": 600, "mode": "normal" },
                    "defender": { "men": 400, "mode": "normal" },
                    "defender_terrain": "woods",
                    "flank": true
                }),
            ),
            ActionSpec::of::<FireInput>(
                "fire",
                "Fire casualties: the Weapon/Range Casualty Table (per 100 men, or per gun) times terrain, mode, leader, flank, density, random (d101), battle time and fortification modifiers.",
                "Weapon/Range Casualty Table",
                json!({
                    "weapon": "RFL",
                    "range": 2,
                    "men": 500,
                    "firer_mode": "normal",
                    "target_terrain": "woods",
                    "men_in_target_square": 800,
                    "operation_points_remaining": 8
                }),
            ),
            ActionSpec::of::<FatigueGainInput>(
                "fatigue_gain",
                "Fatigue gained for squares entered, fortifying, casualties (less for units over 600 men), force marching, a leader's death and routed units passing through.",
                "Fatigue Gain Table",
                json!({
                    "squares_entered_normal_mode": 3,
                    "casualties": 45,
                    "unit_men": 900
                }),
            ),
        ]
    }

    fn resolve(&self, action: &str, inputs: &Value, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
        self.resolve_under(crate::RULES_VERSION, action, inputs, dice)
    }

    /// Version 1: melee strength without the Density and Random Modifiers (as first published).
    fn resolve_under(
        &self,
        rules_version: u32,
        action: &str,
        inputs: &Value,
        dice: &mut DiceStream,
    ) -> Result<Resolved, Refusal> {
        match action {
            "operation_cost" => operations::operation_cost(parse_inputs(inputs)?),
            "ammo_resupply" => resupply::ammo_resupply(parse_inputs(inputs)?, dice),
            "melee" => combat::melee(parse_inputs(inputs)?, dice, rules_version),
            "fire" => combat::fire(parse_inputs(inputs)?, dice),
            "fatigue_gain" => fatigue::fatigue_gain(parse_inputs(inputs)?),
            _ => Err(Refusal::new(
                "body.action",
                "resolver.unknown_action",
                format!("the ops-tables ruleset has no action `{action}`"),
            )),
        }
    }
}

/// A refusal of the input `field` (a path below `body.inputs`).
fn refuse(field: &str, rule: &str, detail: impl Into<String>) -> Refusal {
    Refusal::new(format!("body.inputs.{field}"), rule, detail)
}

/// The percentile die: "70%" happens on 1–70 of a d100.
fn percent_check(dice: &mut DiceStream, percent: u32, purpose: &str) -> (u32, bool) {
    let roll = dice.roll(100, purpose);
    (roll, roll <= percent)
}

/// A modifier in hundredths as the seed prints it: `.80`, `1.00`, `1.50`.
fn seed_decimal(hundredths: u32) -> String {
    if hundredths < 100 {
        format!(".{hundredths:02}")
    } else {
        format!("{}.{:02}", hundredths / 100, hundredths % 100)
    }
}

/// A modifier in hundredths as a plain decimal: `0.80`.
fn decimal(hundredths: u32) -> String {
    format!("{}.{:02}", hundredths / 100, hundredths % 100)
}
