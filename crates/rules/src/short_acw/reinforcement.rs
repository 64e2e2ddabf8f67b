//! Reinforcements (seed "Reinforcements", docs/rules/short-acw.md, ruling 8).
//!
//! Seed: "Units may have the number of Factors attached increased if they spend a turn not
//! moving and adjacent to or in a rail hex that is controlled to the edge of the map."

use std::collections::BTreeSet;

use super::hex::Hex;
use super::scenario::{Hexside, Scenario};
use super::state::GameState;
use crate::Side;

/// Rail hexes controlled by `side` and joined to a map edge by track through rail hexes the
/// side controls.
pub fn rail_to_edge(scenario: &Scenario, state: &GameState, side: Side) -> BTreeSet<Hex> {
    let friendly = |h: &Hex| state.control.get(h) == Some(&side);
    let mut reached: BTreeSet<Hex> =
        scenario.rail_hexes.iter().filter(|h| scenario.on_edge(**h) && friendly(h)).copied().collect();
    let mut frontier: Vec<Hex> = reached.iter().copied().collect();
    while let Some(hex) = frontier.pop() {
        for next in scenario.neighbours(hex) {
            if scenario.rail_links.contains(&Hexside::between(hex, next)) && friendly(&next) && reached.insert(next) {
                frontier.push(next);
            }
        }
    }
    reached
}

/// The rail hex that qualifies `hex` for reinforcement: the hex itself or one next to it.
pub fn qualifying_rail(scenario: &Scenario, rail: &BTreeSet<Hex>, hex: Hex) -> Option<Hex> {
    if rail.contains(&hex) {
        return Some(hex);
    }
    scenario.neighbours(hex).into_iter().find(|n| rail.contains(n))
}
