//! The Operation Costs Table: what one square entered, or one action, costs a unit.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::refuse;
use super::tables::{
    Cost, CostRow, CAVALRY_ARTILLERY_MODE_CHANGE, OPERATION_COSTS, ROAD_BONUS_HIGHER_ELEVATION, UNIT_COLUMNS,
};
use crate::resolver::{Lookup, Resolved};
use crate::Refusal;

const TABLE: &str = "Operation Costs Table";

/// What the unit does: a row (or, for a move, rows) of the Operation Costs Table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// Enter one square: the terrain (or road bonus), higher elevation and ZOC rows.
    EnterSquare,
    /// "Change mode" (cavalry artillery pays 2).
    ChangeMode,
    /// "Unlimber in ZOC": limbered artillery unlimbering in an enemy zone of control.
    UnlimberInZoc,
    /// "Fortify" one level.
    Fortify,
    /// "Fire phase".
    Fire,
    /// "Melee: Att." (a unit must also fire at the square it is to melee).
    MeleeAttack,
    /// "Melee: Def."
    MeleeDefence,
}

/// The table's unit columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnitType {
    /// INF./DIS. CAV.
    Infantry,
    /// INF./DIS. CAV.
    DismountedCavalry,
    /// CAV.
    Cavalry,
    /// LIMB. ART.
    LimberedArtillery,
    /// UNLIMB. ART.
    UnlimberedArtillery,
}

impl UnitType {
    fn column(self) -> usize {
        match self {
            UnitType::Infantry | UnitType::DismountedCavalry => 0,
            UnitType::Cavalry => 1,
            UnitType::LimberedArtillery => 2,
            UnitType::UnlimberedArtillery => 3,
        }
    }

    fn is_artillery(self) -> bool {
        matches!(self, UnitType::LimberedArtillery | UnitType::UnlimberedArtillery)
    }

    fn words(self) -> &'static str {
        match self {
            UnitType::Infantry => "Infantry",
            UnitType::DismountedCavalry => "Dismounted cavalry",
            UnitType::Cavalry => "Cavalry",
            UnitType::LimberedArtillery => "Limbered artillery",
            UnitType::UnlimberedArtillery => "Unlimbered artillery",
        }
    }
}

/// The terrain of the square entered: the table's terrain rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MoveTerrain {
    Clear,
    Town,
    Woods,
    Cornfield,
    River,
    Stream,
    Ford,
    Bridge,
}

impl MoveTerrain {
    fn row(self) -> CostRow {
        match self {
            MoveTerrain::Clear => CostRow::Clear,
            MoveTerrain::Town => CostRow::Town,
            MoveTerrain::Woods => CostRow::Woods,
            MoveTerrain::Cornfield => CostRow::Cornfield,
            MoveTerrain::River => CostRow::River,
            MoveTerrain::Stream => CostRow::Stream,
            MoveTerrain::Ford => CostRow::Ford,
            MoveTerrain::Bridge => CostRow::Bridge,
        }
    }
}

/// How the move touches enemy zones of control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ZocMove {
    /// No enemy zone of control entered or left.
    #[default]
    None,
    /// "Enter or leave enemy ZOC".
    EnterOrLeave,
    /// "Move ZOC to ZOC": from one enemy zone of control straight into another (this row
    /// replaces the enter-or-leave surcharge, it is not added to it).
    ZocToZoc,
}

/// Inputs of `operation_cost`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OperationCostInput {
    /// What the unit does.
    pub operation: Operation,
    /// The unit's column of the table.
    pub unit: UnitType,
    /// Cavalry (horse) artillery: "Mode change for CAV ART is 2." Artillery only.
    #[serde(default)]
    pub cavalry_artillery: bool,
    /// enter_square only (required there): the terrain of the square entered.
    pub terrain: Option<MoveTerrain>,
    /// enter_square only: a diagonal move (directions 2, 4, 6 and 8). Default false.
    pub diagonal: Option<bool>,
    /// enter_square only: the unit moves along a road, paying 1 whatever the terrain.
    /// Orthogonal moves only; infantry must be in column mode. Default false.
    pub road_bonus: Option<bool>,
    /// enter_square only: the infantry is in column mode (needed for the road bonus).
    pub column_mode: Option<bool>,
    /// enter_square only: the square entered is of higher elevation. Default false.
    pub higher_elevation: Option<bool>,
    /// enter_square only: enemy zones of control entered or left. Default none.
    pub zoc: Option<ZocMove>,
}

fn cell(row: CostRow, unit: UnitType) -> (Cost, Lookup) {
    let (row_name, cells) = OPERATION_COSTS[row as usize];
    let column = unit.column();
    let cost = cells[column];
    (cost, Lookup::new(TABLE, row_name, UNIT_COLUMNS[column], cost))
}

fn prohibited(field: &str, row: CostRow, unit: UnitType) -> Refusal {
    let (row_name, _) = OPERATION_COSTS[row as usize];
    refuse(
        field,
        "operation_costs.prohibited",
        format!("the Operation Costs Table reads P (prohibited) for {row_name} / {}", UNIT_COLUMNS[unit.column()]),
    )
}

/// Resolves `operation_cost`: a pure table read, no dice.
pub fn operation_cost(input: OperationCostInput) -> Result<Resolved, Refusal> {
    if input.cavalry_artillery && !input.unit.is_artillery() {
        return Err(refuse(
            "cavalry_artillery",
            "operation_costs.cavalry_artillery",
            format!("only artillery can be cavalry artillery, not {}", input.unit.words().to_lowercase()),
        ));
    }
    let Some((row, action)) = action_row(input.operation) else {
        return enter_square(&input);
    };
    let move_only = [
        ("terrain", input.terrain.is_some()),
        ("diagonal", input.diagonal.is_some()),
        ("road_bonus", input.road_bonus.is_some()),
        ("column_mode", input.column_mode.is_some()),
        ("higher_elevation", input.higher_elevation.is_some()),
        ("zoc", input.zoc.is_some()),
    ];
    if let Some((field, _)) = move_only.iter().find(|(_, given)| *given) {
        return Err(refuse(
            field,
            "operation_costs.move_only",
            format!("{field} belongs to enter_square, not to another operation"),
        ));
    }
    let (cost, lookup) = cell(row, input.unit);
    let mut lookups = vec![lookup];
    let points = match cost {
        Cost::Flat(points) => points,
        Cost::NotApplicable => {
            return Err(refuse(
                "unit",
                "operation_costs.not_applicable",
                format!(
                    "the Operation Costs Table reads N/A for Unlimber in ZOC / {}: only limbered artillery unlimbers",
                    UNIT_COLUMNS[input.unit.column()]
                ),
            ))
        }
        // Action rows hold flat costs, P or N/A.
        Cost::Prohibited | Cost::Move(..) | Cost::OrthogonalOnly(_) | Cost::Plus(_) => {
            return Err(prohibited("unit", row, input.unit))
        }
    };
    let points = if row == CostRow::ChangeMode && input.cavalry_artillery {
        lookups.push(Lookup::new(TABLE, "Note (5)", "CAV ART", CAVALRY_ARTILLERY_MODE_CHANGE));
        CAVALRY_ARTILLERY_MODE_CHANGE
    } else {
        points
    };
    let mut notes = Vec::new();
    if row == CostRow::MeleeAttack {
        notes.push("A unit must fire at the square it is to melee.");
    }
    let who = if input.cavalry_artillery { "Cavalry artillery" } else { input.unit.words() };
    Ok(Resolved {
        headline: format!("{who} {action}: {points} operation point{}", plural(points)),
        lookups,
        result: json!({
            "operation_points": points,
            "notes": notes,
        }),
    })
}

/// The row of an action other than entering a square, and what the headline says.
fn action_row(operation: Operation) -> Option<(CostRow, &'static str)> {
    match operation {
        Operation::EnterSquare => None,
        Operation::ChangeMode => Some((CostRow::ChangeMode, "changes mode")),
        Operation::UnlimberInZoc => Some((CostRow::UnlimberInZoc, "unlimbers in an enemy ZOC")),
        Operation::Fortify => Some((CostRow::Fortify, "fortifies one level")),
        Operation::Fire => Some((CostRow::FirePhase, "fires")),
        Operation::MeleeAttack => Some((CostRow::MeleeAttack, "attacks in melee")),
        Operation::MeleeDefence => Some((CostRow::MeleeDefence, "defends in melee")),
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn enter_square(input: &OperationCostInput) -> Result<Resolved, Refusal> {
    let unit = input.unit;
    let Some(terrain) = input.terrain else {
        return Err(refuse(
            "terrain",
            "operation_costs.terrain_required",
            "enter_square needs the terrain of the square entered",
        ));
    };
    let diagonal = input.diagonal.unwrap_or(false);
    let road_bonus = input.road_bonus.unwrap_or(false);
    let higher_elevation = input.higher_elevation.unwrap_or(false);
    let zoc = input.zoc.unwrap_or_default();

    // The checks that name a field other than the cell's own come first; a P met while
    // reading the rows below refuses naming the row's input.
    let (terrain_cost, terrain_lookup) = cell(terrain.row(), unit);
    if unit == UnitType::UnlimberedArtillery {
        return Err(prohibited("unit", terrain.row(), unit));
    }
    if terrain_cost == Cost::Prohibited {
        return Err(prohibited("terrain", terrain.row(), unit));
    }
    if road_bonus {
        if diagonal {
            return Err(refuse(
                "diagonal",
                "operation_costs.road_bonus_diagonal",
                "Diagonal moves are not allowed using the road bonus (Road bonus reads 1(P))",
            ));
        }
        if unit == UnitType::Infantry && input.column_mode != Some(true) {
            return Err(refuse(
                "column_mode",
                "operation_costs.road_bonus_column",
                "Infantry must be in Column mode to use the road bonus",
            ));
        }
    }

    let mut lookups = Vec::new();
    let mut parts = Vec::new();
    let base = if road_bonus {
        // "Units using the road bonus pay only 1 operation point to enter."
        let (cost, lookup) = cell(CostRow::RoadBonus, unit);
        lookups.push(lookup);
        let Cost::OrthogonalOnly(points) = cost else {
            return Err(prohibited("road_bonus", CostRow::RoadBonus, unit));
        };
        parts.push(("road bonus", points));
        points
    } else {
        lookups.push(terrain_lookup);
        let Cost::Move(orthogonal, diagonal_cost) = terrain_cost else {
            return Err(prohibited("terrain", terrain.row(), unit));
        };
        let points = if diagonal { diagonal_cost } else { orthogonal };
        parts.push(("terrain", points));
        points
    };
    let mut total = base;
    if higher_elevation {
        let (cost, lookup) = cell(CostRow::EnterHigherElevation, unit);
        lookups.push(lookup);
        let Cost::Plus(surcharge) = cost else {
            return Err(prohibited("higher_elevation", CostRow::EnterHigherElevation, unit));
        };
        if road_bonus {
            // "Units using the road bonus pay only 1 operation point to enter a higher
            // elevation": the road's 1 is the whole price, the surcharge is not added.
            lookups.push(Lookup::new(
                TABLE,
                "Road bonus note",
                UNIT_COLUMNS[unit.column()],
                format!("{ROAD_BONUS_HIGHER_ELEVATION} in all (no +{surcharge})"),
            ));
        } else {
            parts.push(("higher elevation", surcharge));
            total += surcharge;
        }
    }
    let zoc_row = match zoc {
        ZocMove::None => None,
        ZocMove::EnterOrLeave => Some((CostRow::EnterOrLeaveEnemyZoc, "enemy ZOC")),
        ZocMove::ZocToZoc => Some((CostRow::MoveZocToZoc, "ZOC to ZOC")),
    };
    if let Some((row, words)) = zoc_row {
        let (cost, lookup) = cell(row, unit);
        lookups.push(lookup);
        let Cost::Plus(surcharge) = cost else {
            return Err(prohibited("zoc", row, unit));
        };
        parts.push((words, surcharge));
        total += surcharge;
    }

    let terrain_words = OPERATION_COSTS[terrain.row() as usize].0.trim_end_matches(" (1)").to_lowercase();
    let mut how = Vec::new();
    if diagonal {
        how.push("diagonally".to_owned());
    }
    if road_bonus {
        how.push("by road".to_owned());
    }
    if higher_elevation {
        how.push("uphill".to_owned());
    }
    match zoc {
        ZocMove::None => {}
        ZocMove::EnterOrLeave => how.push("entering or leaving an enemy ZOC".to_owned()),
        ZocMove::ZocToZoc => how.push("from one enemy ZOC to another".to_owned()),
    }
    let how = if how.is_empty() { String::new() } else { format!(" {}", how.join(", ")) };
    let sum = parts.iter().map(|(_, p)| p.to_string()).collect::<Vec<_>>().join(" + ");
    Ok(Resolved {
        headline: format!(
            "{} entering {terrain_words}{how}: {total} operation point{} ({sum})",
            unit.words(),
            plural(total)
        ),
        lookups,
        result: json!({
            "operation_points": total,
            "parts": parts
                .iter()
                .map(|(what, points)| json!({ "for": what, "operation_points": points }))
                .collect::<Vec<_>>(),
        }),
    })
}
