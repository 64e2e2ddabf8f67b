//! "Chamberlain ACW Activation": the activation roll, rally and the commander at risk, with
//! the officer traits that change them (Intuitive, Cavalry, Immobile, Hero).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::tables;
use super::{at_risk_check, check_range, refuse, to_result, AtRiskCheck, MAX_FATIGUE};
use crate::resolver::{Lookup, Resolved};
use crate::{DiceStream, Refusal};

/// "2. Movement Phase: Place Commanders & Roll to Activate units".
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActivationInputs {
    /// The score a d6 must reach to activate the unit, 2 to 6. The sheet says "Roll to
    /// Activate units" but gives no number, so the referee supplies it (from the full rules,
    /// the commander's rating or the scenario). Not needed for a free cavalry activation.
    #[serde(default)]
    pub needs: Option<u32>,
    /// The commander is "Intuitive" (INT) and has not used its re-roll this turn: "May
    /// reroll any one Failed activation roll this turn".
    #[serde(default)]
    pub intuitive: bool,
    /// The commander's "Cavalry" (C) trait: "One cavalry unit of the Commander's may activate
    /// for free (once per turn)". No die is rolled.
    #[serde(default)]
    pub free_cavalry: bool,
    /// The unit is activated by command (by the CnC).
    #[serde(default)]
    pub by_command: bool,
    /// The CnC is "Immobile" (IMB).
    #[serde(default)]
    pub immobile: bool,
    /// Pips left on the Immobile CnC's cool-down die (0 to 3); while any are left it may not
    /// activate by command.
    #[serde(default)]
    pub immobile_pips: u32,
    /// The unit is concealed: "Active Concealed Units are Revealed: If activated in the
    /// movement phase".
    #[serde(default)]
    pub concealed: bool,
}

/// The activation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ActivationResult {
    pub activated: bool,
    /// The score needed (none for a free activation).
    pub needs: Option<u32>,
    /// The first roll (none for a free activation).
    pub roll: Option<u32>,
    /// The Intuitive re-roll, if the first roll failed and the commander had it.
    pub intuitive_reroll: Option<u32>,
    pub free_cavalry: bool,
    /// Pips on the Immobile CnC's die after this activation.
    pub immobile_pips: Option<u32>,
    /// The unit was concealed and is now revealed.
    pub revealed: bool,
}

/// Resolves one activation roll.
pub fn activation(inputs: ActivationInputs, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    if let Some(needs) = inputs.needs {
        check_range("needs", "activation.needs", needs, 2..=6, "the score needed")?;
    } else if !inputs.free_cavalry {
        return Err(refuse(
            "needs",
            "activation.needs",
            "the sheet gives no activation number: give the score a d6 needs (`needs`, 2 to 6)",
        ));
    }
    check_range(
        "immobile_pips",
        "activation.immobile",
        inputs.immobile_pips,
        0..=tables::IMMOBILE_PIPS,
        "the Immobile die's pips",
    )?;
    if inputs.immobile_pips > 0 && !inputs.immobile {
        return Err(refuse("immobile_pips", "activation.immobile", "only an Immobile (IMB) CnC has a cool-down die"));
    }
    if inputs.by_command && inputs.immobile && inputs.immobile_pips > 0 {
        return Err(refuse(
            "by_command",
            "activation.immobile",
            format!(
                "the Immobile CnC's die still shows {} pips: \"When the last pip removed, may \
                 activate by CnC again\"",
                inputs.immobile_pips
            ),
        ));
    }

    let mut lookups = Vec::new();
    let mut roll = None;
    let mut intuitive_reroll = None;
    let activated = match inputs.needs.filter(|_| !inputs.free_cavalry) {
        None => {
            lookups.push(Lookup::new(
                "Officer Traits",
                "“Cavalry” (C)",
                "free activation",
                "One cavalry unit of the Commander's may activate for free (once per turn)",
            ));
            true
        }
        Some(needs) => {
            let first = dice.roll(6, "activation");
            roll = Some(first);
            lookups.push(Lookup::new(
                "A Game Turn",
                "2. Movement Phase: Roll to Activate units",
                format!("needs {needs}+ (referee)"),
                if first >= needs { "activated" } else { "failed" },
            ));
            if first >= needs {
                true
            } else if inputs.intuitive {
                let again = dice.roll(6, "activation, Intuitive re-roll");
                intuitive_reroll = Some(again);
                lookups.push(Lookup::new(
                    "Officer Traits",
                    "Intuitive (INT)",
                    format!("re-roll, needs {needs}+"),
                    if again >= needs { "activated" } else { "failed" },
                ));
                again >= needs
            } else {
                false
            }
        }
    };
    let immobile_pips = inputs.immobile.then(|| {
        if activated && inputs.by_command {
            lookups.push(Lookup::new(
                "Officer Traits",
                "Immobile (IMB)",
                "activated by command",
                "place 1d6 showing 3 pips beside CnC",
            ));
            tables::IMMOBILE_PIPS
        } else {
            inputs.immobile_pips
        }
    });
    let revealed = inputs.concealed && activated;
    if revealed {
        lookups.push(Lookup::new(
            "Concealed Units are Revealed",
            "When Active Concealed Units are Revealed",
            "If activated in the movement phase",
            "revealed",
        ));
    }
    let mut headline = match (roll, intuitive_reroll, inputs.needs) {
        (None, _, _) => "Activation: the Commander's cavalry unit activates for free".to_owned(),
        (Some(first), None, Some(needs)) => format!(
            "Activation: rolled {first} needing {needs}+: {}",
            if activated { "activated" } else { "not activated" }
        ),
        (Some(first), Some(again), Some(needs)) => format!(
            "Activation: rolled {first} needing {needs}+, Intuitive re-roll {again}: {}",
            if activated { "activated" } else { "not activated" }
        ),
        (Some(_), _, None) => "Activation".to_owned(),
    };
    if let Some(3) = immobile_pips.filter(|_| activated && inputs.by_command) {
        headline.push_str("; the Immobile CnC's die is set to 3 pips");
    }
    if revealed {
        headline.push_str("; the unit is revealed");
    }
    headline.push('.');
    let result = ActivationResult {
        activated,
        needs: inputs.needs.filter(|_| !inputs.free_cavalry),
        roll,
        intuitive_reroll,
        free_cavalry: inputs.free_cavalry,
        immobile_pips,
        revealed,
    };
    Ok(Resolved { headline, lookups, result: to_result(&result) })
}

/// "Rally (Roll to Rally 3+)".
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RallyInputs {
    /// Fatigues the unit has, 2 to 12: rally removes one "(not to fresh)", so a unit with one
    /// fatigue cannot rally.
    pub fatigue: u32,
    /// "Unit must be activated": the unit has been activated this turn (must be true).
    pub activated: bool,
    /// An enemy unit is within 2 BW.
    #[serde(default)]
    pub enemy_within_2bw: bool,
    /// A "Hero" (H) is attached: "May rally within 2BW of enemy but if the enemy is within
    /// 2BW, “At risk”".
    #[serde(default)]
    pub hero_attached: bool,
}

/// The rally.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RallyResult {
    pub roll: u32,
    pub needs: u32,
    pub rallied: bool,
    pub fatigue_after: u32,
    /// "Unit treated as having moved if it succeeds or not".
    pub counts_as_moved: bool,
    /// The Hero's at-risk check when the enemy is within 2 BW.
    pub hero_at_risk: Option<AtRiskCheck>,
}

/// Resolves one rally.
pub fn rally(inputs: RallyInputs, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    if !inputs.activated {
        return Err(refuse("activated", "rally.activated", "\"Unit must be activated\" to rally"));
    }
    check_range("fatigue", "rally.fatigue", inputs.fatigue, 0..=MAX_FATIGUE, "fatigue")?;
    if inputs.fatigue < 2 {
        return Err(refuse(
            "fatigue",
            "rally.not_to_fresh",
            format!("rally removes 1 fatigue \"(not to fresh)\": a unit with {} fatigue cannot rally", inputs.fatigue),
        ));
    }
    if inputs.enemy_within_2bw && !inputs.hero_attached {
        return Err(refuse(
            "enemy_within_2bw",
            "rally.enemy_near",
            "\"Not Within 2 BW of Enemy (except attached Hero)\"",
        ));
    }
    let mut lookups = Vec::new();
    let roll = dice.roll(6, "rally");
    let rallied = roll >= tables::RALLY_NEEDS;
    lookups.push(Lookup::new(
        "Rally (Roll to Rally 3+)",
        "If roll successful remove 1 fatigue (not to fresh)",
        format!("rolled {roll}"),
        if rallied { "remove 1 fatigue" } else { "no change" },
    ));
    lookups.push(Lookup::new(
        "Rally (Roll to Rally 3+)",
        "Unit treated as having moved if it succeeds or not",
        "",
        "moved",
    ));
    let fatigue_after = if rallied { inputs.fatigue - 1 } else { inputs.fatigue };
    let hero_at_risk = (inputs.hero_attached && inputs.enemy_within_2bw).then(|| {
        lookups.push(Lookup::new(
            "“Hero” (H)",
            "May rally within 2BW of enemy",
            "the enemy is within 2BW",
            "“At risk”",
        ));
        at_risk_check(dice, false, "at risk, the Hero", &mut lookups)
    });
    let mut headline = format!(
        "Rally: rolled {roll} needing {}+: {}",
        tables::RALLY_NEEDS,
        if rallied {
            format!("rallied, fatigue {} → {fatigue_after}", inputs.fatigue)
        } else {
            format!("failed, fatigue stays {}", inputs.fatigue)
        }
    );
    if let Some(check) = hero_at_risk {
        headline.push_str(if check.killed { "; the Hero is killed" } else { "; the Hero survives" });
    }
    headline.push_str("; the unit counts as having moved.");
    let result =
        RallyResult { roll, needs: tables::RALLY_NEEDS, rallied, fatigue_after, counts_as_moved: true, hero_at_risk };
    Ok(Resolved { headline, lookups, result: to_result(&result) })
}

/// "Commander at Risk".
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AtRiskInputs {
    /// The firer is sharpshooters (SS): 5 or 6 kills instead of 6.
    #[serde(default)]
    pub sharpshooters: bool,
}

/// Resolves one at-risk check.
pub fn commander_at_risk(inputs: AtRiskInputs, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let mut lookups = Vec::new();
    let check = at_risk_check(dice, inputs.sharpshooters, "at risk", &mut lookups);
    let headline = format!(
        "Commander at risk: rolled {} (killed on {}{}): {}.",
        check.roll,
        check.killed_on,
        if check.killed_on < 6 { "-6" } else { "" },
        if check.killed { "killed, replace with an average officer" } else { "survives" }
    );
    Ok(Resolved { headline, lookups, result: to_result(&check) })
}
