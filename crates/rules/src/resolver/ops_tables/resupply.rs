//! The Ammo Resupply Tables: the Eligibility Table, then the Resupply Table.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::tables::{Eligibility, ELIGIBILITY, FLAT_ELIGIBILITY_PERCENT, RESUPPLY, RESUPPLY_COLUMNS};
use super::{percent_check, refuse};
use crate::resolver::{Lookup, Resolved};
use crate::{DiceStream, Refusal};

const ELIGIBILITY_TABLE: &str = "Eligibility Table";
const RESUPPLY_TABLE: &str = "Resupply Table";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Union,
    Confederate,
}

/// The unit's arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arm {
    /// Inf./Cav. row.
    Infantry,
    /// Inf./Cav. row; always the flat 50% eligibility ("CAV").
    Cavalry,
    /// Art. row; Confederate artillery has the flat 50% eligibility.
    Artillery,
    /// Art. row; always the flat 50% eligibility ("CAV ART").
    CavalryArtillery,
}

/// Inputs of `ammo_resupply`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AmmoResupplyInput {
    /// The unit's side: the Resupply Table's column.
    pub side: Side,
    /// The unit's arm: the Resupply Table's row, and whether the flat 50% applies.
    pub arm: Arm,
    /// The unit belongs to Evans' Brigade (Confederate): flat 50% eligibility.
    #[serde(default)]
    pub evans_brigade: bool,
    /// Range in squares to the division leader: 0 and 1 resupply automatically, 7 or more
    /// never. Required unless the unit has the flat 50% eligibility (which ignores range).
    pub range_to_division_leader: Option<u32>,
    /// A mid-turn resupply: the Resupply Table's chances in parentheses. Default false.
    #[serde(default)]
    pub mid_turn: bool,
}

impl AmmoResupplyInput {
    /// "50% chance to go to Resupply Table for CAV, CAV ART, Confederate ART, and Evans
    /// Brigade" — whatever their range to a division leader.
    fn flat_eligibility(&self) -> Option<&'static str> {
        match (self.arm, self.side) {
            (Arm::Cavalry, _) => Some("CAV"),
            (Arm::CavalryArtillery, _) => Some("CAV ART"),
            (Arm::Artillery, Side::Confederate) => Some("Confederate ART"),
            _ if self.evans_brigade => Some("Evans Brigade"),
            _ => None,
        }
    }

    fn words(&self) -> String {
        let side = match self.side {
            Side::Union => "Union",
            Side::Confederate => "Confederate",
        };
        let arm = match self.arm {
            Arm::Infantry => "infantry",
            Arm::Cavalry => "cavalry",
            Arm::Artillery => "artillery",
            Arm::CavalryArtillery => "cavalry artillery",
        };
        if self.evans_brigade {
            format!("{side} {arm} of Evans' Brigade")
        } else {
            format!("{side} {arm}")
        }
    }
}

/// Resolves `ammo_resupply`.
pub fn ammo_resupply(input: AmmoResupplyInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    if input.evans_brigade && input.side == Side::Union {
        return Err(refuse("evans_brigade", "ammo_resupply.evans_brigade", "Evans' Brigade is Confederate"));
    }
    let flat = input.flat_eligibility();
    let range = match (flat, input.range_to_division_leader) {
        (None, None) => {
            return Err(refuse(
                "range_to_division_leader",
                "ammo_resupply.range_required",
                "the Eligibility Table needs the range in squares to the division leader",
            ))
        }
        (_, range) => range,
    };

    let mut lookups = Vec::new();
    let mut eligibility_roll = None;
    let mut resupply_roll = None;
    let unit = input.words();

    // The Eligibility Table: straight to the Resupply Table, a percentage, or no resupply.
    let eligibility = match flat {
        Some(who) => {
            lookups.push(Lookup::new(
                ELIGIBILITY_TABLE,
                who,
                "PERCENT CHANCE OF GOING TO RESUPPLY TABLE",
                format!("{FLAT_ELIGIBILITY_PERCENT}%"),
            ));
            Eligibility::Percent(FLAT_ELIGIBILITY_PERCENT)
        }
        None => {
            let range = range.unwrap_or_default();
            // Range 7 reads "Auto - No Resupply"; a division leader further away is no nearer.
            let (row, cell) = ELIGIBILITY[usize::try_from(range).unwrap_or(7).min(7)];
            let row = if range > 7 { format!("{row} (range {range})") } else { row.to_string() };
            lookups.push(Lookup::new(ELIGIBILITY_TABLE, row, "PERCENT CHANCE OF GOING TO RESUPPLY TABLE", cell));
            cell
        }
    };
    let goes_to_resupply_table = match eligibility {
        Eligibility::AutoResupply => None,
        Eligibility::AutoNoResupply => Some(false),
        Eligibility::Percent(percent) => {
            let (roll, eligible) = percent_check(dice, percent, &format!("eligibility, {percent}% (d100)"));
            eligibility_roll = Some(json!({ "percent": percent, "roll": roll, "eligible": eligible }));
            Some(eligible)
        }
    };

    let resupplied = match goes_to_resupply_table {
        // "* Resupply Table is skipped."
        None => true,
        Some(false) => false,
        Some(true) => {
            let (row_name, cells) = match input.arm {
                Arm::Artillery | Arm::CavalryArtillery => RESUPPLY[0],
                Arm::Infantry | Arm::Cavalry => RESUPPLY[1],
            };
            let column = match input.side {
                Side::Union => 0,
                Side::Confederate => 1,
            };
            let cell = cells[column];
            lookups.push(Lookup::new(RESUPPLY_TABLE, row_name, RESUPPLY_COLUMNS[column], cell));
            let percent = if input.mid_turn { cell.mid_turn } else { cell.full };
            let when = if input.mid_turn { "mid turn " } else { "" };
            let (roll, resupplied) = percent_check(dice, percent, &format!("resupply, {when}{percent}% (d100)"));
            resupply_roll = Some(json!({ "percent": percent, "roll": roll, "resupplied": resupplied }));
            resupplied
        }
    };

    let how = match (eligibility, &eligibility_roll, &resupply_roll) {
        (Eligibility::AutoResupply, ..) => "automatic (Resupply Table skipped)".to_owned(),
        (Eligibility::AutoNoResupply, ..) => "out of reach of its division leader".to_owned(),
        (_, Some(e), None) => format!("eligibility {}%, rolled {}", e["percent"], e["roll"]),
        (_, Some(e), Some(r)) => format!(
            "eligibility {}%, rolled {}; resupply {}%, rolled {}",
            e["percent"], e["roll"], r["percent"], r["roll"]
        ),
        (_, None, _) => String::new(),
    };
    let range_words = match (flat, range) {
        (None, Some(range)) => format!(" {range} square{} from its division leader", if range == 1 { "" } else { "s" }),
        _ => String::new(),
    };
    let outcome = if resupplied { "RESUPPLIED" } else { "not resupplied" };
    Ok(Resolved {
        headline: format!("{unit}{range_words}: {outcome} — {how}"),
        lookups,
        result: json!({
            "resupplied": resupplied,
            "flat_eligibility": flat,
            "range_to_division_leader_used": flat.is_none(),
            "eligibility": eligibility_roll,
            "resupply": resupply_roll,
            "mid_turn": input.mid_turn,
        }),
    })
}
