//! Victory conditions (seed "Victory Conditions"), checked at the end of every player turn.

use super::scenario::{Scenario, VictoryGoal};
use super::state::{GameResult, GameState};
use crate::Side;

/// A capture condition met at the end of `acting`'s player turn, if any. The acting side's
/// conditions are checked first, each side's in the scenario's order (major before minor in the
/// shipped file).
pub fn capture_met(scenario: &Scenario, state: &GameState, acting: Side) -> Option<GameResult> {
    for side in [acting, acting.other()] {
        for condition in scenario.victory.iter().filter(|c| c.side == side) {
            if let VictoryGoal::Capture { city, by_turn } = condition.goal {
                let held = scenario.city(city).is_some_and(|c| state.control.get(&c.hex) == Some(&side));
                let in_time = by_turn.is_none_or(|t| state.turn <= t);
                if held && in_time {
                    return Some(GameResult {
                        winner: Some(side),
                        level: Some(condition.level),
                        condition: condition.text.clone(),
                        turn: state.turn,
                    });
                }
            }
        }
    }
    None
}

/// The result when the last turn ends with no capture: the hold-out condition, or a draw.
pub fn after_last_turn(scenario: &Scenario, state: &GameState) -> GameResult {
    match scenario.victory.iter().find(|c| c.goal == VictoryGoal::HoldOut) {
        Some(condition) => GameResult {
            winner: Some(condition.side),
            level: Some(condition.level),
            condition: condition.text.clone(),
            turn: state.turn,
        },
        None => GameResult {
            winner: None,
            level: None,
            condition: "the last turn ended with no victory condition met".into(),
            turn: state.turn,
        },
    }
}
