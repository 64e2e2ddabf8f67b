//! Chamberlain ACW (seed 004): the quick-reference sheet's dice as a resolver ruleset.
//!
//! The sheet is a player aid with four pages (Activation, Movement, Fire Combat, Melee
//! Combat). Its dice are d6 pools: fire rolls élan (or ammo) dice halved once for any penalty
//! and hits on sixes; melee rolls élan (or ammo) ± one die per modifier and hits on 4+. The
//! referee keeps the table; this module only counts dice, rolls them and reads the sheet.
//! Where the sheet leaves something out, `docs/rules/chamberlain-acw.md` says what was decided.

pub mod command;
pub mod fire;
pub mod melee;
pub mod tables;

use std::ops::RangeInclusive;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{parse_inputs, ActionSpec, Lookup, Resolved, Ruleset};
use crate::{DiceStream, Refusal};

/// The Chamberlain ACW ruleset.
pub struct Chamberlain;

/// The name campaigns choose it by.
pub const NAME: &str = "chamberlain-acw";

/// The largest élan or ammo the resolver accepts. The sheet gives no range; twelve is well
/// above any unit's rating and keeps a pool readable.
pub const MAX_RATING: u32 = 12;
/// The largest fatigue count accepted (same reasoning as [`MAX_RATING`]).
pub const MAX_FATIGUE: u32 = 12;

/// The arm of a unit, in the sheet's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arm {
    Infantry,
    Cavalry,
    /// Mounted infantry (when dismounted it may be given as `infantry`).
    MountedInfantry,
    Artillery,
    /// Horse artillery "(HS)".
    HorseArtillery,
}

impl Arm {
    /// Artillery rolls ammo dice, everyone else élan dice.
    pub fn is_artillery(self) -> bool {
        matches!(self, Arm::Artillery | Arm::HorseArtillery)
    }

    /// Only cavalry and mounted infantry can be mounted.
    pub fn can_be_mounted(self) -> bool {
        matches!(self, Arm::Cavalry | Arm::MountedInfantry)
    }

    pub fn label(self) -> &'static str {
        match self {
            Arm::Infantry => "infantry",
            Arm::Cavalry => "cavalry",
            Arm::MountedInfantry => "mounted infantry",
            Arm::Artillery => "artillery",
            Arm::HorseArtillery => "horse artillery",
        }
    }
}

/// How halving rounds an odd pool. The sheet says "Halve #D6 only once" but not how to round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rounding {
    /// Round up (the default): a halved unit of élan 5 rolls 3, and never fewer than 1.
    #[default]
    Up,
    /// Round down: élan 5 halved rolls 2, élan 1 halved rolls none.
    Down,
}

impl Rounding {
    pub fn halve(self, dice: u32) -> u32 {
        match self {
            Rounding::Up => dice.div_ceil(2),
            Rounding::Down => dice / 2,
        }
    }
}

/// Refuses `value` outside `range`.
pub(crate) fn check_range(
    field: &str,
    rule: &str,
    value: u32,
    range: RangeInclusive<u32>,
    what: &str,
) -> Result<(), Refusal> {
    if range.contains(&value) {
        Ok(())
    } else {
        Err(Refusal::new(
            format!("body.inputs.{field}"),
            rule,
            format!("{what} must be {} to {}, not {value}", range.start(), range.end()),
        ))
    }
}

pub(crate) fn refuse(field: &str, rule: &str, detail: impl Into<String>) -> Refusal {
    Refusal::new(format!("body.inputs.{field}"), rule, detail)
}

/// An officer's "At Risk" check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AtRiskCheck {
    /// The die.
    pub roll: u32,
    /// The lowest face that kills (6, or 5 against sharpshooters).
    pub killed_on: u32,
    pub killed: bool,
}

/// "“At Risk” 1D6; 6 = Killed, Replace with average Officer Or 5,6 = killed if Firer is (SS)".
pub(crate) fn at_risk_check(
    dice: &mut DiceStream,
    sharpshooters: bool,
    purpose: &str,
    lookups: &mut Vec<Lookup>,
) -> AtRiskCheck {
    let killed_on = if sharpshooters { tables::AT_RISK_KILLED_ON_SHARPSHOOTERS } else { tables::AT_RISK_KILLED_ON };
    let roll = dice.roll(6, purpose);
    let killed = roll >= killed_on;
    lookups.push(Lookup::new(
        "Commander at Risk",
        if sharpshooters { "Firer is (SS): 5,6 = killed" } else { "“At Risk” 1D6: 6 = Killed" },
        format!("rolled {roll}"),
        if killed { "Killed, replace with average Officer" } else { "survives" },
    ));
    AtRiskCheck { roll, killed_on, killed }
}

pub(crate) fn to_result<T: Serialize>(result: &T) -> Value {
    serde_json::to_value(result).unwrap_or(Value::Null)
}

/// Counts the dice showing `hits_on` or more.
pub fn count_hits(dice: &[u32], hits_on: u32) -> u32 {
    dice.iter().filter(|&&d| d >= hits_on).count() as u32
}

impl Ruleset for Chamberlain {
    fn name(&self) -> &'static str {
        NAME
    }

    fn title(&self) -> &'static str {
        "Chamberlain ACW (quick-reference sheet)"
    }

    fn seed(&self) -> &'static str {
        "004_e6390402a3065789.txt"
    }

    fn actions(&self) -> Vec<ActionSpec> {
        vec![
            ActionSpec::of::<fire::FireInputs>(
                "fire",
                "Fire combat: élan or ammo dice, halved once for any penalty, bonus dice, sixes \
                 hit (5-6 for repeaters); fatigue, artillery retreat or retire, mounted retreat, \
                 the sharpshooters' at-risk check",
                "Chamberlain ACW Fire Combat",
                json!({
                    "firer": {"arm": "infantry", "elan": 6},
                    "target": {"arm": "infantry"},
                    "range": "skirmish"
                }),
            ),
            ActionSpec::of::<melee::MeleeInputs>(
                "melee",
                "Melee combat: élan or ammo ± one die per modifier, hits on 4+, re-rolled \
                 successes when flanked or when cavalry charges infantry or guns frontally; \
                 the combat resolution table",
                "Chamberlain ACW Melee Combat",
                json!({
                    "attacker": {"arm": "infantry", "elan": 5, "battle_cry": true},
                    "defender": {"arm": "infantry", "elan": 4},
                    "attacking_into": ["uphill"]
                }),
            ),
            ActionSpec::of::<command::ActivationInputs>(
                "activation",
                "Roll to activate a unit (the referee gives the score needed: the sheet does \
                 not), with the Intuitive re-roll, the Cavalry free activation and the Immobile \
                 cool-down",
                "Chamberlain ACW Activation: Movement Phase, Officer Traits",
                json!({"needs": 4, "intuitive": true}),
            ),
            ActionSpec::of::<command::RallyInputs>(
                "rally",
                "Rally (3+): removes one fatigue, not to fresh; a Hero lets a unit rally within \
                 2 BW of the enemy at risk to himself",
                "Chamberlain ACW Activation: Rally (Roll to Rally 3+)",
                json!({"fatigue": 3, "activated": true}),
            ),
            ActionSpec::of::<command::AtRiskInputs>(
                "commander_at_risk",
                "An officer's at-risk check: 1D6, 6 kills (5-6 if the firer is sharpshooters)",
                "Chamberlain ACW Activation: Commander at Risk",
                json!({"sharpshooters": false}),
            ),
        ]
    }

    fn resolve(&self, action: &str, inputs: &Value, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
        match action {
            "fire" => fire::resolve(parse_inputs(inputs)?, dice),
            "melee" => melee::resolve(parse_inputs(inputs)?, dice),
            "activation" => command::activation(parse_inputs(inputs)?, dice),
            "rally" => command::rally(parse_inputs(inputs)?, dice),
            "commander_at_risk" => command::commander_at_risk(parse_inputs(inputs)?, dice),
            other => Err(Refusal::new(
                "body.action",
                "resolver.unknown_action",
                format!("the {NAME} ruleset has no action `{other}`"),
            )),
        }
    }
}

#[cfg(test)]
mod tests;
