//! The losing side's retreat: who must retreat, `retreat` paths and what ending next to the
//! enemy costs.

use super::bodies::RetreatBody;
use super::hex::Hex;
use super::orders::set_hex;
use super::scenario::Scenario;
use super::settings::Settings;
use super::state::{GameState, UnitState};
use crate::outcome::{Eliminated, Outcome, Retreat, RetreatLoss, RetreatMove, Vacated};
use crate::words::listed;
use crate::{Refusal, Side};

/// Whether a unit in `from` has any legal retreat of 1 or 2 hexes.
pub(crate) fn has_retreat(scenario: &Scenario, state: &GameState, unit: &UnitState, from: Hex) -> bool {
    let open = |h: Hex| state.occupant(h) != Some(unit.side.other());
    let room = |h: Hex| !unit.arm.counts_for_stacking() || state.stacking_count(h) < scenario.movement.stacking_limit;
    scenario.neighbours(from).into_iter().filter(|h| open(*h)).any(|first| {
        room(first)
            || scenario.neighbours(first).into_iter().any(|second| second != from && open(second) && room(second))
    })
}

/// Seed 6: "The loser must retreat from their hex." Units that cannot retreat are eliminated;
/// since rules version 2, so is every unit of the loser left with 0 factors after the
/// casualties ("a unit at 0 factors is eliminated", ruling 4).
pub(crate) fn start_retreat(scenario: &Scenario, state: &mut GameState, settings: &Settings, out: &mut Vec<Outcome>) {
    let Some(mut b) = state.battle.clone() else {
        return;
    };
    let Some(loser) = b.loser else {
        return;
    };
    let ids = if loser == b.attacker { b.attackers.clone() } else { b.defenders.clone() };
    let mut retreating = vec![];
    for id in ids {
        let Some(unit) = state.unit(&id).filter(|u| u.is_on_map()).cloned() else {
            continue;
        };
        let Some(from) = unit.hex else { continue };
        if settings.corrected() && unit.factors == 0 {
            if let Some(u) = state.unit_mut(&id) {
                u.eliminated = true;
                u.hex = None;
            }
            out.push(Outcome::new(
                format!("Battle {}: {} has lost with 0 factors in {from} and is eliminated", b.number, unit.name),
                Eliminated { battle: b.number, unit: id, hex: from, reason: "0 factors".to_owned() },
            ));
        } else if has_retreat(scenario, state, &unit, from) {
            retreating.push(id);
        } else {
            if let Some(u) = state.unit_mut(&id) {
                u.eliminated = true;
                u.hex = None;
            }
            out.push(Outcome::new(
                format!("Battle {}: {} has no legal retreat from {from} and is eliminated", b.number, unit.name),
                Eliminated { battle: b.number, unit: id, hex: from, reason: "no legal retreat".to_owned() },
            ));
        }
    }
    if retreating.is_empty() {
        state.battle = None;
    } else {
        b.retreating = retreating;
        state.battle = Some(b);
    }
}

/// Seed: "Armies that end their retreat movement in a hex adjacent to an enemy force
/// immediately lose HALF their factors" (rounded half up: 3 factors lose 2).
pub(crate) fn retreat_losses(scenario: &Scenario, state: &mut GameState, ids: &[String]) -> Vec<RetreatLoss> {
    let mut report = vec![];
    for id in ids {
        let Some(unit) = state.unit(id).cloned() else {
            continue;
        };
        let Some(hex) = unit.hex else { continue };
        let enemy = state.enemy_next_to(scenario, hex, unit.side);
        let lost = if enemy.is_some() { unit.factors.div_ceil(2) } else { 0 };
        if let Some(u) = state.unit_mut(id) {
            u.factors -= lost;
            if lost > 0 && u.factors == 0 {
                u.eliminated = true;
                u.hex = None;
            }
        }
        report.push(RetreatLoss {
            unit: id.clone(),
            hex,
            next_to_enemy: enemy,
            factors_before: unit.factors,
            factors_lost: lost,
            factors_after: unit.factors - lost,
            eliminated: lost > 0 && unit.factors == lost,
        });
    }
    report
}

pub(crate) fn retreat(
    scenario: &Scenario,
    state: &mut GameState,
    side: Side,
    body: RetreatBody,
    settings: &Settings,
    out: &mut Vec<Outcome>,
) -> Result<(), Refusal> {
    let Some(b) = state.battle.clone() else {
        return Err(Refusal::new("kind", "battle.not_awaited", "no battle is waiting"));
    };
    let before = state.clone();
    let mut named: Vec<String> = vec![];
    let mut moves = vec![];
    let mut no_retreat: Vec<String> = vec![];
    for (i, p) in body.paths.iter().enumerate() {
        let field = format!("body.paths[{i}]");
        if !b.retreating.contains(&p.unit) {
            return Err(Refusal::new(
                format!("{field}.unit"),
                "retreat.not_retreating",
                format!(
                    "`{}` is not one of the units retreating from battle {}: {}",
                    p.unit,
                    b.number,
                    b.retreating.join(", ")
                ),
            ));
        }
        if named.contains(&p.unit) {
            return Err(Refusal::new(format!("{field}.unit"), "retreat.twice", format!("`{}` is named twice", p.unit)));
        }
        named.push(p.unit.clone());
        if p.path.is_empty() {
            // The owner finds no legal retreat for the unit (for instance when the units'
            // retreats cannot all fit): "a unit with no legal retreat is eliminated".
            no_retreat.push(p.unit.clone());
            continue;
        }
        if p.path.len() > 2 {
            let name = before.unit(&p.unit).map_or(p.unit.as_str(), |u| u.name.as_str());
            return Err(Refusal::new(
                format!("{field}.path"),
                "retreat.length",
                format!(
                    "{name} was given {} hexes; a retreat is 1 or 2. Seed: \"Defeated Armies may retreat up to two hexes, and must retreat at least one.\"",
                    p.path.len()
                ),
            ));
        }
        let Some(from) = before.unit(&p.unit).and_then(|u| u.hex) else {
            continue;
        };
        let mut at = from;
        for (j, &hex) in p.path.iter().enumerate() {
            let f = format!("{field}.path[{j}]");
            if !scenario.on_map(hex) {
                return Err(Refusal::new(f, "movement.off_map", format!("hex {hex} is not on the map")));
            }
            if !at.is_adjacent(hex) {
                return Err(Refusal::new(
                    f,
                    "movement.adjacent",
                    format!("hex {hex} does not touch {at}: a retreat goes hex by hex"),
                ));
            }
            if hex == from {
                return Err(Refusal::new(f, "retreat.return", format!("a retreat cannot come back to {from}")));
            }
            if before.occupant(hex) == Some(side.other()) {
                return Err(Refusal::new(f, "retreat.enemy_hex", format!("hex {hex} is held by the enemy")));
            }
            at = hex;
        }
        moves.push(RetreatMove { unit: p.unit.clone(), from, path: p.path.clone() });
        set_hex(state, &p.unit, Some(at));
    }
    if let Some(missing) = b.retreating.iter().find(|id| !named.contains(id)) {
        return Err(Refusal::new(
            "body.paths",
            "retreat.all_units",
            format!("`{missing}` must retreat too: give every retreating unit a path"),
        ));
    }
    for (i, p) in body.paths.iter().enumerate() {
        let Some(hex) = p.path.last().copied() else {
            continue;
        };
        if state.stacking_count(hex) > scenario.movement.stacking_limit
            && state.unit(&p.unit).is_some_and(|u| u.arm.counts_for_stacking())
        {
            return Err(Refusal::new(
                format!("body.paths[{i}].path"),
                "retreat.stacking",
                format!(
                    "hex {hex} would hold more than {} infantry and cavalry units",
                    scenario.movement.stacking_limit
                ),
            ));
        }
    }
    if settings.corrected() {
        // Version 2: an empty path only where the unit, with the others where this post puts
        // them, has no legal retreat ("must retreat at least one" hex when it can).
        for (i, p) in body.paths.iter().enumerate().filter(|(_, p)| p.path.is_empty()) {
            let Some(unit) = state.unit(&p.unit).cloned() else { continue };
            let Some(from) = unit.hex else { continue };
            if has_retreat(scenario, state, &unit, from) {
                return Err(Refusal::new(
                    format!("body.paths[{i}].path"),
                    "retreat.empty_path",
                    format!(
                        "Seed: \"Defeated Armies may retreat up to two hexes, and must retreat at least one.\" {} has a legal retreat from {from}: give it a path of 1 or 2 hexes",
                        unit.name
                    ),
                ));
            }
        }
    }
    for id in &named {
        if let Some(u) = state.unit_mut(id) {
            u.moved = true;
            u.fortified = false;
            if no_retreat.contains(id) {
                u.eliminated = true;
                u.hex = None;
            }
        }
    }
    let retreated: Vec<String> = named.iter().filter(|id| !no_retreat.contains(id)).cloned().collect();
    let losses = retreat_losses(scenario, state, &retreated);
    state.battle = None;
    let outcome = if settings.names_retreat_origins() {
        retreat_outcome(&before, state, b.number, side, &named, moves, losses, no_retreat)
    } else {
        // Versions 1 and 2 named the battle's target as the hex left, which is the loser's own
        // hex only when the defender loses; their campaigns replay with the words they stored.
        Outcome::new(
            format!("Battle {}: the {side} retreats from {}", b.number, b.target),
            Retreat {
                battle: b.number,
                side,
                moves,
                losses,
                eliminated_without_retreat: no_retreat,
                left: None,
                vacated: Vacated::Target(b.target),
                advance: "none: the vacated hex stays empty until a unit moves in".to_owned(),
            },
        )
    };
    out.push(outcome);
    Ok(())
}

/// The retreat outcome from rules version 3 on: the hexes named are the loser's own — where its
/// retreating units stood (`left`) and those of them that nobody holds afterwards (`vacated`) —
/// and the headline says what the retreat cost, as the forum text does.
#[allow(clippy::too_many_arguments)]
pub(crate) fn retreat_outcome(
    before: &GameState,
    after: &GameState,
    battle: u32,
    side: Side,
    named: &[String],
    moves: Vec<RetreatMove>,
    losses: Vec<RetreatLoss>,
    no_retreat: Vec<String>,
) -> Outcome {
    let mut left: Vec<Hex> = named.iter().filter_map(|id| before.unit(id).and_then(|u| u.hex)).collect();
    left.sort();
    left.dedup();
    let vacated: Vec<Hex> = left.iter().copied().filter(|&hex| after.occupant(hex).is_none()).collect();
    let name = |id: &str| before.unit(id).map_or_else(|| id.to_owned(), |u| u.name.clone());
    let mut headline = format!("Battle {battle}: the {side} retreats from {}", hex_list(&left));
    for l in losses.iter().filter(|l| l.factors_lost > 0) {
        headline.push_str(&format!(
            "; {} loses {} of {} factors next to the enemy{}",
            name(&l.unit),
            l.factors_lost,
            l.factors_before,
            if l.eliminated { " and is eliminated" } else { "" }
        ));
    }
    for id in &no_retreat {
        headline.push_str(&format!("; {} has no retreat and is eliminated", name(id)));
    }
    Outcome::new(
        headline,
        Retreat {
            battle,
            side,
            moves,
            losses,
            eliminated_without_retreat: no_retreat,
            left: Some(left),
            vacated: Vacated::Hexes(vacated),
            advance: "none: the vacated hexes stay empty until a unit moves in".to_owned(),
        },
    )
}

/// "0602", "0602 and 0702", "0501, 0602 and 0702".
pub(crate) fn hex_list(hexes: &[Hex]) -> String {
    let names: Vec<String> = hexes.iter().map(Hex::to_string).collect();
    listed(&names, "and")
}
