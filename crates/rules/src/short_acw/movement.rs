//! Movement (seed "Infantry and Artillery Units Move 3 hexes…", docs/rules/short-acw.md, ruling 7).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::bodies::MoveBody;
use super::hex::Hex;
use super::orders::own_unit;
use super::scenario::Arm;
use super::scenario::{Scenario, Terrain};
use super::state::Phase;
use super::state::{GameState, UnitState};
use crate::outcome::{Moved, Outcome};
use crate::Refusal;
use crate::Side;
/// A hex a unit can reach now, and what it costs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reach {
    pub hex: Hex,
    pub cost: u32,
    /// The cheapest path there (not counting the hex the unit stands in).
    pub path: Vec<Hex>,
    /// Whether the unit halts there next to the enemy (and must then attack).
    pub halts: bool,
}

/// The movement points a step from `from` into the adjacent `to` costs: 1, or 3 when it
/// enters woods or crosses a river hexside, or 1 when it crosses at a bridge. A step that both
/// enters woods and crosses a river costs 3, not 6: the seed gives one price, "3 movement to
/// cross or enter woods, and rivers".
pub fn step_cost(scenario: &Scenario, from: Hex, to: Hex) -> u32 {
    let rules = &scenario.movement;
    let woods = scenario.terrain(to) == Terrain::Woods;
    let river = scenario.river_between(from, to);
    let bridged = river && scenario.bridge_between(from, to).is_some();
    if woods || (river && !bridged) {
        rules.woods_or_river
    } else if bridged {
        rules.bridge
    } else {
        rules.step
    }
}

fn stack_has_room(scenario: &Scenario, state: &GameState, unit: &UnitState, hex: Hex) -> bool {
    !unit.arm.counts_for_stacking() || state.stacking_count(hex) < scenario.movement.stacking_limit
}

/// The checks that a unit may move at all this turn.
pub(crate) fn check_may_move(unit: &UnitState, field: &str) -> Result<Hex, Refusal> {
    // `own_unit` has refused eliminated units; after deployment the others stand on the map.
    let from = unit.hex.unwrap_or(Hex::new(0, 0));
    if unit.moved {
        return Err(Refusal::new(field, "movement.once_a_turn", format!("{} has already moved this turn", unit.name)));
    }
    if unit.reinforced {
        return Err(Refusal::new(
            field,
            "reinforcement.spends_turn_not_moving",
            format!("{} received reinforcements this turn and spends the turn not moving", unit.name),
        ));
    }
    Ok(from)
}

/// Every hex the unit can end a move in now, with the cheapest cost.
pub fn reachable(scenario: &Scenario, state: &GameState, unit: &UnitState) -> Vec<Reach> {
    let Some(start) = unit.hex else {
        return vec![];
    };
    let allowance = scenario.movement.allowance(unit.arm);
    // Dijkstra over the small map; ties broken by hex order so the answer is deterministic.
    let mut best: BTreeMap<Hex, (u32, Vec<Hex>)> = BTreeMap::new();
    best.insert(start, (0, vec![]));
    let mut frontier = vec![(0u32, start)];
    while let Some(index) = (0..frontier.len()).min_by_key(|&i| frontier[i]) {
        let (cost, hex) = frontier.swap_remove(index);
        if best.get(&hex).is_some_and(|(c, _)| *c < cost) {
            continue;
        }
        // Seed: "Units entering a hex adjacent to the enemy must halt".
        if hex != start && state.enemy_next_to(scenario, hex, unit.side).is_some() {
            continue;
        }
        for next in scenario.neighbours(hex) {
            if state.occupant(next) == Some(unit.side.other()) {
                continue;
            }
            let total = cost + step_cost(scenario, hex, next);
            if total > allowance || next == start {
                continue;
            }
            if best.get(&next).is_none_or(|(c, _)| total < *c) {
                let mut path = best.get(&hex).map(|(_, p)| p.clone()).unwrap_or_default();
                path.push(next);
                best.insert(next, (total, path));
                frontier.push((total, next));
            }
        }
    }
    best.into_iter()
        .filter(|(hex, _)| *hex != start && stack_has_room(scenario, state, unit, *hex))
        .map(|(hex, (cost, path))| Reach {
            hex,
            cost,
            path,
            halts: state.enemy_next_to(scenario, hex, unit.side).is_some(),
        })
        .collect()
}

/// Checks a move along `path` and returns its cost. Fields are named under `field_path`.
pub(crate) fn check_path(
    scenario: &Scenario,
    state: &GameState,
    unit: &UnitState,
    from: Hex,
    path: &[Hex],
    field_path: &str,
) -> Result<u32, Refusal> {
    if path.is_empty() {
        return Err(Refusal::new(field_path, "movement.path", "name at least one hex to move to"));
    }
    let allowance = scenario.movement.allowance(unit.arm);
    let mut cost = 0;
    let mut at = from;
    let mut visited = vec![from];
    for (i, &hex) in path.iter().enumerate() {
        let field = format!("{field_path}[{i}]");
        if !scenario.on_map(hex) {
            return Err(Refusal::new(field, "movement.off_map", format!("hex {hex} is not on the map")));
        }
        if !at.is_adjacent(hex) {
            return Err(Refusal::new(
                field,
                "movement.adjacent",
                format!("hex {hex} does not touch {at}: a path goes hex by hex"),
            ));
        }
        if visited.contains(&hex) {
            return Err(Refusal::new(field, "movement.revisit", format!("the path enters {hex} twice")));
        }
        if state.occupant(hex) == Some(unit.side.other()) {
            return Err(Refusal::new(field, "movement.enemy_hex", format!("hex {hex} is held by the enemy")));
        }
        if at != from {
            if let Some(enemy) = state.enemy_next_to(scenario, at, unit.side) {
                return Err(Refusal::new(
                    field,
                    "movement.halt_next_to_enemy",
                    format!("{} must halt in {at}, next to the enemy in {enemy}, and cannot go on to {hex}", unit.name),
                ));
            }
        }
        cost += step_cost(scenario, at, hex);
        if cost > allowance {
            return Err(Refusal::new(
                field,
                "movement.points",
                format!(
                    "reaching {hex} costs {cost} movement points; {} ({}) has {allowance}",
                    unit.name,
                    unit.arm.name()
                ),
            ));
        }
        visited.push(hex);
        at = hex;
    }
    if !stack_has_room(scenario, state, unit, at) {
        return Err(Refusal::new(
            format!("{field_path}[{}]", path.len() - 1),
            "movement.stacking",
            format!(
                "hex {at} already holds {} infantry and cavalry units, the most allowed",
                scenario.movement.stacking_limit
            ),
        ));
    }
    Ok(cost)
}

// ---- the orders ----------------------------------------------------------------------------

pub(crate) fn move_unit(
    scenario: &Scenario,
    state: &mut GameState,
    side: Side,
    body: MoveBody,
    out: &mut Vec<Outcome>,
) -> Result<(), Refusal> {
    let unit = own_unit(state, side, &body.unit, "body.unit")?;
    let from = check_may_move(unit, "body.unit")?;
    let cost = check_path(scenario, state, unit, from, &body.path, "body.path")?;
    let name = unit.name.clone();
    let to = body.path[body.path.len() - 1];
    let halted_by = state.enemy_next_to(scenario, to, side);
    if let Some(u) = state.unit_mut(&body.unit) {
        u.hex = Some(to);
        u.moved = true;
        u.fortified = false;
        u.must_fight = halted_by.is_some();
    }
    state.phase = Phase::Movement;
    let mut headline = format!("{name} moves {from} → {to} ({cost} movement points)");
    if let Some(enemy) = halted_by {
        headline.push_str(&format!(", halts next to the enemy in {enemy} and must attack"));
    }
    let allowance = scenario.movement.allowance(state.unit(&body.unit).map_or(Arm::Infantry, |u| u.arm));
    out.push(Outcome::new(
        headline,
        Moved {
            unit: body.unit,
            from,
            path: body.path,
            cost,
            allowance,
            halted_next_to: halted_by,
            must_fight: halted_by.is_some(),
        },
    ));
    Ok(())
}

/// The hexes a unit can legally reach now, with costs.
pub fn legal_moves(scenario: &Scenario, state: &GameState, unit: &str) -> Result<Vec<Reach>, Refusal> {
    let u =
        state.unit(unit).ok_or_else(|| Refusal::new("unit", "unit.unknown", format!("there is no unit `{unit}`")))?;
    if state.phase == Phase::Over || state.phase == Phase::Deployment {
        return Ok(vec![]);
    }
    if state.side_to_act != Some(u.side) || state.phase == Phase::Combat || state.battle.is_some() {
        return Ok(vec![]);
    }
    if !u.is_on_map() || check_may_move(u, "unit").is_err() {
        return Ok(vec![]);
    }
    Ok(reachable(scenario, state, u))
}
