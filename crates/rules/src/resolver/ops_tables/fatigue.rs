//! The Fatigue Gain Table, with the NOTE's smaller gain from casualties for big units.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::refuse;
use super::tables::{
    FATIGUE_FULL_GAIN_UP_TO_MEN, FATIGUE_GAIN, FATIGUE_MEN_PER_CASUALTY_STEP, FATIGUE_REDUCTION_STOPS_AT_MEN,
};
use crate::resolver::{Lookup, Resolved};
use crate::Refusal;

const TABLE: &str = "Fatigue Gain Table";

/// Inputs of `fatigue_gain`: how often the unit did each thing in the table (all default 0).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FatigueGainInput {
    /// Squares entered in normal mode (2 each).
    #[serde(default)]
    pub squares_entered_normal_mode: u32,
    /// Squares entered in column mode (1 each).
    #[serde(default)]
    pub squares_entered_column_mode: u32,
    /// Fortification levels built (20 each).
    #[serde(default)]
    pub fortify_levels: u32,
    /// Men lost (1 per 2, less for units over 400 men: see the NOTE).
    #[serde(default)]
    pub casualties: u32,
    /// Men in the unit before these casualties; required when casualties are given.
    pub unit_men: Option<u32>,
    /// Operation points of force march (6 each).
    #[serde(default)]
    pub force_march_operation_points: u32,
    /// A leader died in the unit (5). Default false.
    #[serde(default)]
    pub leader_died: bool,
    /// Times the unit, routed, passed through a friendly unit (5 each).
    #[serde(default)]
    pub routed_passes_through_friendly: u32,
}

/// Fatigue from `casualties` men lost by a unit of `men` men: one point per (men / 200) men
/// lost, never more than one per 2 (400 men or fewer) nor less than one per 5 (1000 men or
/// more); whole points only.
///
/// The seed's NOTE: "a 600-man unit gains 1 fatigue point per 3 losses … A 900-man unit would
/// gain 1 fatigue per 4½ men lost".
pub fn casualty_fatigue(casualties: u32, men: u32) -> u64 {
    let men = men.clamp(FATIGUE_FULL_GAIN_UP_TO_MEN, FATIGUE_REDUCTION_STOPS_AT_MEN);
    u64::from(casualties) * u64::from(FATIGUE_MEN_PER_CASUALTY_STEP) / u64::from(men)
}

/// Resolves `fatigue_gain`: a pure table read, no dice.
pub fn fatigue_gain(input: FatigueGainInput) -> Result<Resolved, Refusal> {
    let men = match (input.casualties, input.unit_men) {
        (0, men) => men,
        (_, None) => {
            return Err(refuse(
                "unit_men",
                "fatigue.unit_men",
                "fatigue from casualties depends on the unit's size: give unit_men",
            ))
        }
        (casualties, Some(men)) if casualties > men => {
            return Err(refuse(
                "casualties",
                "fatigue.casualties",
                format!("a unit of {men} men cannot lose {casualties}"),
            ))
        }
        (_, men) => men,
    };
    if men == Some(0) {
        return Err(refuse("unit_men", "fatigue.unit_men", "a unit has at least 1 man"));
    }

    let counts = [
        u64::from(input.squares_entered_normal_mode),
        u64::from(input.squares_entered_column_mode),
        u64::from(input.fortify_levels),
        0, // casualties: below, by the NOTE
        u64::from(input.force_march_operation_points),
        u64::from(input.leader_died),
        u64::from(input.routed_passes_through_friendly),
    ];
    // What the headline calls each row's count.
    let words = [
        "squares entered in normal mode",
        "squares entered in column mode",
        "fortification levels",
        "casualties",
        "operation points of force march",
        "leader's death",
        "passes through friendly units while routed",
    ];
    let mut lookups = Vec::new();
    let mut said = Vec::new();
    let mut parts = Vec::new();
    let mut total = 0;
    for (index, ((action, gain), count)) in FATIGUE_GAIN.iter().zip(counts).enumerate() {
        let fatigue = if index == 3 {
            if input.casualties == 0 {
                continue;
            }
            let men = men.unwrap_or_default();
            let fatigue = casualty_fatigue(input.casualties, men);
            lookups.push(Lookup::new(TABLE, *action, "FATIGUE GAIN", gain));
            let per = f64::from(men.clamp(FATIGUE_FULL_GAIN_UP_TO_MEN, FATIGUE_REDUCTION_STOPS_AT_MEN))
                / f64::from(FATIGUE_MEN_PER_CASUALTY_STEP);
            lookups.push(Lookup::new(
                TABLE,
                "NOTE: units over 600 men",
                format!("{men} men"),
                format!("1 per {per} men lost"),
            ));
            parts.push(json!({ "for": action, "count": input.casualties, "fatigue": fatigue, "men_per_point": per }));
            said.push(format!("{fatigue} for {} {} (1 per {per} men lost)", input.casualties, words[index]));
            fatigue
        } else {
            if count == 0 {
                continue;
            }
            lookups.push(Lookup::new(TABLE, *action, "FATIGUE GAIN", gain));
            let fatigue = count * u64::from(*gain);
            parts.push(json!({ "for": action, "count": count, "fatigue": fatigue }));
            said.push(if index == 5 {
                format!("{fatigue} for the {}", words[index])
            } else {
                format!("{fatigue} for {count} {}", words[index])
            });
            fatigue
        };
        total += fatigue;
    }
    Ok(Resolved {
        headline: if said.is_empty() {
            "Fatigue gain 0: nothing done".to_owned()
        } else {
            format!("Fatigue gain {total}: {}", said.join(", "))
        },
        lookups,
        result: json!({ "fatigue": total, "parts": parts }),
    })
}
