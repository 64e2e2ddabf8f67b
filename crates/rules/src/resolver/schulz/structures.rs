//! Buildings, towers, walls, bridges and doors (BUILDINGS; BRIDGES; FORT AND BUILDINGS; FORT):
//! what an artillery shot on target takes off them.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::tables::{
    BUILDINGS, BUILDINGS_ALL_DEAD, BUILDING_COLUMNS, CANNON_HIT_WALL_POINTS, FOOT_BRIDGE, FORT_TOWER_POINTS,
    REGULAR_BRIDGE,
};
use super::MAX_WALL_POINTS;
use crate::resolver::{Lookup, Resolved};
use crate::{DiceStream, Refusal};

/// Regular or foot bridge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BridgeKind {
    /// 30 points at the start.
    Regular,
    /// 15 points at the start.
    Foot,
}

/// Something an artillery shot lands on.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Structure {
    /// A building or a part of one with its own points (a section with a separate roof, a
    /// first or second story).
    BuildingSection {
        /// Its full points: 50, 40, 30 or 20 (a row of the BUILDINGS table).
        size: u32,
        /// Points left before this shot (1 to `size`).
        points: u32,
        /// Points left on the story above this one; "Must erase 2nd floor to get 1st floor",
        /// so it must be 0 (default 0).
        #[serde(default)]
        floor_above_points: u32,
    },
    /// A fort tower: 25 points at the start.
    FortTower {
        /// Points left before this shot (1 to 25).
        points: u32,
    },
    /// A section of fort wall, with the points the referee gave it.
    WallSection {
        /// Points left before this shot (1 to 1000).
        points: u32,
    },
    /// A bridge.
    Bridge {
        /// `regular` (30 points) or `foot` (15 points).
        bridge: BridgeKind,
        /// Points left before this shot (1 to 30, or 15 for a foot bridge).
        points: u32,
    },
    /// A door: "Doors can be blown off with a 1 from artillery."
    Door {},
    /// A cannon on a fort wall: "When a cannon is hit by a 1, take 5 points off the wall
    /// section."
    WallCannon {
        /// Points left on the wall section it stands on (1 to 1000).
        wall_points: u32,
    },
}

/// One artillery shot on target at the structures listed.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StructureHit {
    /// What the shot lands on (at least one).
    pub structures: Vec<Structure>,
}

pub(super) fn structure_hit(i: &StructureHit, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    if i.structures.is_empty() {
        return Err(Refusal::new(
            "body.inputs.structures",
            "structure.none",
            "name at least one structure the shot lands on",
        ));
    }
    check_structures("body.inputs.structures", &i.structures)?;
    let mut lookups = Vec::new();
    let outcomes = hit_structures(dice, &i.structures, &mut lookups);
    let headline =
        format!("Artillery shot: {}", outcomes.iter().map(|o| o.words.clone()).collect::<Vec<_>>().join("; "));
    Ok(Resolved {
        headline,
        lookups,
        result: json!({
            "structures": outcomes.into_iter().map(|o| o.result).collect::<Vec<_>>(),
        }),
    })
}

pub(super) fn check_structures(field: &str, structures: &[Structure]) -> Result<(), Refusal> {
    if structures.len() > 20 {
        return Err(Refusal::new(field, "structure.too_many", "at most 20 structures under one pattern"));
    }
    for (n, s) in structures.iter().enumerate() {
        let at = |name: &str| format!("{field}[{n}].{name}");
        let points_between = |name: &str, points: u32, most: u32, what: &str| {
            if (1..=most).contains(&points) {
                Ok(())
            } else {
                Err(Refusal::new(
                    at(name),
                    "structure.points",
                    format!("{what} has 1 to {most} points left, not {points}"),
                ))
            }
        };
        match *s {
            Structure::BuildingSection { size, points, floor_above_points } => {
                if building_row(size).is_none() {
                    return Err(Refusal::new(
                        at("size"),
                        "building.size",
                        format!("a building section is of 50, 40, 30 or 20 points, not {size}"),
                    ));
                }
                points_between("points", points, size, "this building section")?;
                if floor_above_points > 0 {
                    return Err(Refusal::new(
                        at("floor_above_points"),
                        "building.second_floor_first",
                        "must erase 2nd floor to get 1st floor: the story above still has points",
                    ));
                }
            }
            Structure::FortTower { points } => points_between("points", points, FORT_TOWER_POINTS, "a fort tower")?,
            Structure::WallSection { points } => points_between("points", points, MAX_WALL_POINTS, "a wall section")?,
            Structure::Bridge { bridge, points } => {
                let most = match bridge {
                    BridgeKind::Regular => REGULAR_BRIDGE.0,
                    BridgeKind::Foot => FOOT_BRIDGE.0,
                };
                points_between("points", points, most, "this bridge")?
            }
            Structure::Door {} => {}
            Structure::WallCannon { wall_points } => {
                points_between("wall_points", wall_points, MAX_WALL_POINTS, "a wall section")?
            }
        }
    }
    Ok(())
}

fn building_row(size: u32) -> Option<usize> {
    BUILDINGS.iter().position(|row| row[0].0 == size)
}

/// The BUILDINGS column for `points` left of a building of full points `size`.
pub fn building_state(size: u32, points: u32) -> Option<(usize, String)> {
    let row = building_row(size)?;
    let bands = BUILDINGS[row];
    if let Some(col) = bands.iter().position(|&(high, low)| (low..=high).contains(&points)) {
        let (high, low) = bands[col];
        return Some((col, format!("{high}-{low}")));
    }
    (points <= BUILDINGS_ALL_DEAD[row]).then(|| (3, format!("<={}", BUILDINGS_ALL_DEAD[row])))
}

/// What a bridge with `points` left can hold.
pub fn bridge_state(bridge: BridgeKind, points: u32) -> &'static str {
    let bands: &[(u32, &str)] = match bridge {
        BridgeKind::Regular => &REGULAR_BRIDGE.1,
        BridgeKind::Foot => &FOOT_BRIDGE.1,
    };
    bands.iter().find(|(lowest, _)| points >= *lowest).map(|(_, holds)| *holds).unwrap_or("gone")
}

pub(super) struct StructureOutcome {
    pub(super) words: String,
    pub(super) result: Value,
}

fn two_dice(dice: &mut DiceStream, what: &str) -> (u32, u32) {
    (
        dice.roll(6, format!("artillery shot on {what}, die 1 of 2")),
        dice.roll(6, format!("artillery shot on {what}, die 2 of 2")),
    )
}

/// "For each artillery shot on the building 2 dice are rolled and the total value is
/// subtracted from the buildings point total." Towers, wall sections and bridges alike;
/// doors and cannons on walls are hit by a 1.
pub(super) fn hit_structures(
    dice: &mut DiceStream,
    structures: &[Structure],
    lookups: &mut Vec<Lookup>,
) -> Vec<StructureOutcome> {
    structures
        .iter()
        .enumerate()
        .map(|(n, s)| {
            let label = format!("structure {}", n + 1);
            match *s {
                Structure::BuildingSection { size, points, .. } => {
                    let what = format!("building section ({label}, {size} points)");
                    let (a, b) = two_dice(dice, &what);
                    let after = points.saturating_sub(a + b);
                    let (col, cell) = if after == 0 {
                        (3, "0".to_owned())
                    } else {
                        building_state(size, after).unwrap_or((3, String::new()))
                    };
                    lookups.push(Lookup::new(
                        "BUILDINGS",
                        format!("{size}-point building, {after} points"),
                        BUILDING_COLUMNS[col],
                        cell,
                    ));
                    let state = BUILDING_COLUMNS[col];
                    StructureOutcome {
                        words: format!(
                            "{size}-point building {points} - {} = {after} ({})",
                            a + b,
                            state.to_lowercase()
                        ),
                        result: json!({"kind": "building_section", "size": size,
                            "points_before": points, "dice": [a, b], "points_after": after,
                            "state": state}),
                    }
                }
                Structure::FortTower { points } => {
                    points_off(dice, "fort tower", &label, points, lookups, "FORT AND BUILDINGS")
                }
                Structure::WallSection { points } => points_off(dice, "wall section", &label, points, lookups, "FORT"),
                Structure::Bridge { bridge, points } => {
                    let kind = match bridge {
                        BridgeKind::Regular => "regular bridge",
                        BridgeKind::Foot => "foot bridge",
                    };
                    let (a, b) = two_dice(dice, &format!("{kind} ({label})"));
                    let after = points.saturating_sub(a + b);
                    let holds = bridge_state(bridge, after);
                    lookups.push(Lookup::new("BRIDGES", format!("{kind}, {after} points"), "can hold", holds));
                    StructureOutcome {
                        words: format!("{kind} {points} - {} = {after} ({holds})", a + b),
                        result: json!({"kind": "bridge", "bridge": kind, "points_before": points,
                            "dice": [a, b], "points_after": after, "holds": holds}),
                    }
                }
                Structure::Door {} => {
                    let die = dice.roll(6, format!("artillery shot on door ({label})"));
                    let blown = die == 1;
                    lookups.push(Lookup::new(
                        "FORT",
                        "Doors can be blown off with a 1 from artillery",
                        format!("die {die}"),
                        if blown { "blown off" } else { "stands" },
                    ));
                    StructureOutcome {
                        words: format!("door {}", if blown { "blown off" } else { "stands" }),
                        result: json!({"kind": "door", "die": die, "blown_off": blown}),
                    }
                }
                Structure::WallCannon { wall_points } => {
                    let die = dice.roll(6, format!("artillery shot on cannon on wall ({label})"));
                    let hit = die == 1;
                    let after = if hit { wall_points.saturating_sub(CANNON_HIT_WALL_POINTS) } else { wall_points };
                    lookups.push(Lookup::new(
                        "FORT",
                        "When a cannon is hit by a 1, take 5 points off the wall section",
                        format!("die {die}"),
                        if hit { "5 points off" } else { "no hit" },
                    ));
                    let gone = after == 0;
                    StructureOutcome {
                        words: if hit {
                            format!(
                                "cannon on wall hit, wall section {wall_points} - 5 = {after}{}",
                                if gone { " (all men and cannons on top gone)" } else { "" }
                            )
                        } else {
                            "cannon on wall not hit".to_owned()
                        },
                        result: json!({"kind": "wall_cannon", "die": die, "hit": hit,
                            "wall_points_before": wall_points, "wall_points_after": after,
                            "all_on_top_gone": gone}),
                    }
                }
            }
        })
        .collect()
}

/// Towers and wall sections lose 2 dice of points; "When all points on a wall section are
/// gone, all men and cannons on top are gone."
fn points_off(
    dice: &mut DiceStream,
    kind: &str,
    label: &str,
    points: u32,
    lookups: &mut Vec<Lookup>,
    table: &str,
) -> StructureOutcome {
    let (a, b) = two_dice(dice, &format!("{kind} ({label})"));
    let after = points.saturating_sub(a + b);
    let gone = after == 0;
    lookups.push(Lookup::new(
        table,
        format!("{kind}, {after} points"),
        "all men and cannons on top",
        if gone { "gone" } else { "stay" },
    ));
    StructureOutcome {
        words: format!(
            "{kind} {points} - {} = {after}{}",
            a + b,
            if gone { " (all men and cannons on top gone)" } else { "" }
        ),
        result: json!({"kind": kind.replace(' ', "_"), "points_before": points, "dice": [a, b],
            "points_after": after, "all_on_top_gone": gone}),
    }
}
