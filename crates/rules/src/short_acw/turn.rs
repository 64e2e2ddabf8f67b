//! The player turn: how it begins (the Union's automatic point) and `end_turn` (fortification of
//! units that did not move, victory, the next side's turn).

use super::scenario::Scenario;
use super::state::{GameState, Phase, UnitState};
use super::victory::{after_last_turn, capture_met};
use crate::outcome::{Outcome, TurnBegins, TurnEnded};
use crate::{Refusal, Side};

pub(crate) fn begin_player_turn(scenario: &Scenario, state: &mut GameState, side: Side, out: &mut Vec<Outcome>) {
    for u in &mut state.units {
        u.moved = false;
        u.attacked = false;
        u.reinforced = false;
        u.must_fight = false;
    }
    state.side_to_act = Some(side);
    state.phase = Phase::Reinforcement;
    state.reinforcement_roll_made = false;
    let mut data = TurnBegins { turn: state.turn, side, points_gained: None, points_stored: None, deadline: None };
    let mut headline = format!("Turn {}: the {side} player turn begins", state.turn);
    if side == Side::Union {
        // Seed: "The Union will receive 1 reinforcement point each turn."
        let gain = scenario.reinforcement.union_points_per_turn;
        *state.reinforcement_points.get_mut(side) += gain;
        let stored = state.reinforcement_points.get(side);
        data.points_gained = Some(gain);
        data.points_stored = Some(stored);
        headline.push_str(&format!("; the Union gains {gain} reinforcement point ({stored} stored)"));
    }
    out.push(Outcome::new(headline, data));
}

/// A unit of `side` that entered a hex next to the enemy and has not fought yet: the side's
/// turn cannot end before it does.
pub(crate) fn still_to_fight<'s>(scenario: &Scenario, state: &'s GameState, side: Side) -> Option<&'s UnitState> {
    state.units.iter().find(|u| {
        u.side == side
            && u.is_on_map()
            && u.must_fight
            && !u.attacked
            // A unit with no factors cannot fight a combat on its own, so it only halts.
            && u.factors > 0
            // Every unit still next to the enemy, not just the first that ever halted.
            && u.hex.is_some_and(|h| state.enemy_next_to(scenario, h, side).is_some())
    })
}

pub(crate) fn end_turn(
    scenario: &Scenario,
    state: &mut GameState,
    side: Side,
    at_deadline: bool,
    out: &mut Vec<Outcome>,
) -> Result<(), Refusal> {
    if let Some(u) = still_to_fight(scenario, state, side).filter(|_| !at_deadline) {
        return Err(Refusal::new(
            "kind",
            "combat.must_fight",
            format!(
                "{} entered {} next to the enemy and must fight a combat before the turn ends",
                u.name,
                u.hex.map(|h| h.to_string()).unwrap_or_default()
            ),
        ));
    }
    // Seed: "Units may construct fortifications by not moving during a turn."
    let mut fortified = vec![];
    for u in &mut state.units {
        if u.side == side && u.is_on_map() && !u.moved && !u.fortified {
            u.fortified = true;
            fortified.push(u.id.clone());
        }
    }
    state.refresh(scenario);
    out.push(Outcome::new(
        format!("Turn {}: the {side} ends its player turn", state.turn),
        TurnEnded { turn: state.turn, side, newly_fortified: fortified },
    ));
    let second = scenario.first_side.other();
    let result = capture_met(scenario, state, side)
        .or_else(|| (side == second && state.turn >= scenario.turns).then(|| after_last_turn(scenario, state)));
    if let Some(result) = result {
        out.push(Outcome::new(format!("Game over on turn {}: {}", result.turn, result.condition), result.clone()));
        state.result = Some(result);
        state.phase = Phase::Over;
        state.side_to_act = None;
        return Ok(());
    }
    let next = if side == second {
        state.turn += 1;
        scenario.first_side
    } else {
        second
    };
    begin_player_turn(scenario, state, next, out);
    Ok(())
}
