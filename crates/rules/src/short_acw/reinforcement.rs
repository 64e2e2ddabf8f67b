//! Reinforcements (seed "Reinforcements", docs/rules/short-acw.md, ruling 8).
//!
//! Seed: "Units may have the number of Factors attached increased if they spend a turn not
//! moving and adjacent to or in a rail hex that is controlled to the edge of the map."

use std::collections::BTreeSet;

use super::bodies::{ReinforceBody, MAX_PURCHASE};
use super::hex::Hex;
use super::orders::{own_unit, Order};
use super::scenario::Arm;
use super::scenario::{Hexside, Scenario};
use super::settings::Settings;
use super::state::GameState;
use super::state::UnitState;
use crate::outcome::{FactorsBought, Outcome, Reinforced, ReinforcementRolled, UnitBought};
use crate::Side;
use crate::{Refusal, ReinforcementRoll};
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

// ---- the orders ----------------------------------------------------------------------------

pub(crate) fn reinforcement_roll(
    scenario: &Scenario,
    state: &mut GameState,
    side: Side,
    order: &Order,
    out: &mut Vec<Outcome>,
) -> Result<(), Refusal> {
    if side != Side::Confederate {
        return Err(Refusal::new(
            "side",
            "reinforcement.union_automatic",
            "the Union receives its reinforcement point automatically each turn; only the Rebel makes a reinforcement post",
        ));
    }
    if state.reinforcement_roll_made {
        return Err(Refusal::new(
            "kind",
            "reinforcement.once_a_turn",
            "the Rebel makes a single reinforcement post each turn",
        ));
    }
    let held: Vec<String> = scenario
        .reinforcement
        .confederate_cities
        .iter()
        .filter(|l| scenario.city(**l).is_some_and(|c| state.control.get(&c.hex) == Some(&side)))
        .map(char::to_string)
        .collect();
    // A leap second can show 1000+ milliseconds; it reads as 999.
    let ms = order.stamp.timestamp_subsec_millis().min(999);
    let roll = ReinforcementRoll::roll(ms, held.len() as u32)?;
    state.reinforcement_roll_made = true;
    if roll.gains {
        *state.reinforcement_points.get_mut(side) += 1;
    }
    let stored = state.reinforcement_points.get(side);
    out.push(Outcome::new(
        format!(
            "Rebel reinforcement post at .{ms:03}: {ms} mod 6 = {} {} {} cities held — {} ({stored} stored)",
            roll.remainder,
            if roll.gains { "≤" } else { ">" },
            roll.cities,
            if roll.gains { "gains 1 point" } else { "no gain" }
        ),
        ReinforcementRolled {
            ms: roll.ms,
            remainder: roll.remainder,
            cities: roll.cities,
            cities_held: held,
            gains: roll.gains,
            points_stored: stored,
        },
    ));
    Ok(())
}

pub(crate) fn reinforce(
    scenario: &Scenario,
    state: &mut GameState,
    side: Side,
    body: ReinforceBody,
    settings: &Settings,
    out: &mut Vec<Outcome>,
) -> Result<(), Refusal> {
    if body.factors.is_empty() && body.new_units.is_empty() {
        return Err(Refusal::new("body", "reinforcement.nothing", "name factors to add or new units to create"));
    }
    let rules = &scenario.reinforcement;
    let rail = rail_to_edge(scenario, state, side);
    let no_rail = |hex: Hex| {
        format!("hex {hex} is neither in nor next to a rail hex joined to a map edge by {side}-controlled rail hexes")
    };
    let mut cost: u32 = 0;
    let mut bought = vec![];
    let mut seen: Vec<&str> = vec![];
    for (i, f) in body.factors.iter().enumerate() {
        let field = format!("body.factors[{i}]");
        let unit = own_unit(state, side, &f.unit, &format!("{field}.unit"))?;
        if seen.contains(&f.unit.as_str()) {
            return Err(Refusal::new(
                format!("{field}.unit"),
                "reinforcement.twice",
                format!("{} is listed twice", unit.name),
            ));
        }
        seen.push(&f.unit);
        if f.factors == 0 {
            return Err(Refusal::new(format!("{field}.factors"), "reinforcement.factors", "buy at least one factor"));
        }
        if f.factors > MAX_PURCHASE {
            return Err(Refusal::new(
                format!("{field}.factors"),
                "reinforcement.factors",
                format!("buy at most {MAX_PURCHASE} factors for a unit in one post"),
            ));
        }
        let Some(each) = rules.factor_cost(unit.arm) else {
            return Err(Refusal::new(
                format!("{field}.unit"),
                "reinforcement.arm",
                format!("{} is an HQ: the seed prices infantry, cavalry and artillery factors only", unit.name),
            ));
        };
        // After deployment every unit that is not eliminated stands on the map.
        let hex = unit.hex.unwrap_or(Hex::new(0, 0));
        let Some(rail_hex) = qualifying_rail(scenario, &rail, hex) else {
            return Err(Refusal::new(format!("{field}.unit"), "reinforcement.rail", no_rail(hex)));
        };
        cost = cost.saturating_add(each * f.factors);
        bought.push(FactorsBought { unit: f.unit.clone(), factors: f.factors, cost: each * f.factors, rail_hex });
    }
    let mut created = vec![];
    for (i, n) in body.new_units.iter().enumerate() {
        let field = format!("body.new_units[{i}]");
        let name = n.name.trim();
        // Version 3: a name holds nothing invisible, as every name people give does.
        let hidden = settings.refuses_invisible_names() && name.chars().any(crate::words::invisible);
        if name.is_empty() || name.chars().count() > 40 || hidden {
            return Err(Refusal::new(
                format!("{field}.name"),
                "reinforcement.name",
                "a new unit needs a name of 1 to 40 characters, with no bidirectional control or zero-width character",
            ));
        }
        if n.factors > MAX_PURCHASE {
            return Err(Refusal::new(
                format!("{field}.factors"),
                "reinforcement.factors",
                format!("a new unit starts with 0 to {MAX_PURCHASE} factors"),
            ));
        }
        let Some(each) = rules.factor_cost(n.arm).filter(|_| n.arm != Arm::Hq) else {
            return Err(Refusal::new(
                format!("{field}.arm"),
                "reinforcement.arm",
                "new units are infantry, cavalry or artillery",
            ));
        };
        if !scenario.on_map(n.hex) {
            return Err(Refusal::new(
                format!("{field}.hex"),
                "movement.off_map",
                format!("hex {} is not on the map", n.hex),
            ));
        }
        if state.occupant(n.hex) == Some(side.other()) {
            return Err(Refusal::new(
                format!("{field}.hex"),
                "reinforcement.enemy_hex",
                format!("hex {} is held by the enemy", n.hex),
            ));
        }
        let Some(rail_hex) = qualifying_rail(scenario, &rail, n.hex) else {
            return Err(Refusal::new(format!("{field}.hex"), "reinforcement.rail", no_rail(n.hex)));
        };
        cost = cost.saturating_add(rules.new_unit + each * n.factors);
        state.new_units += 1;
        let id = format!("{}-new-{}", if side == Side::Union { "us" } else { "cs" }, state.new_units);
        state.units.push(UnitState {
            id: id.clone(),
            name: name.to_string(),
            side,
            arm: n.arm,
            factors: n.factors,
            hex: Some(n.hex),
            eliminated: false,
            fortified: false,
            moved: false,
            attacked: false,
            reinforced: true,
            must_fight: false,
        });
        if n.arm.counts_for_stacking() && state.stacking_count(n.hex) > scenario.movement.stacking_limit {
            return Err(Refusal::new(
                format!("{field}.hex"),
                "reinforcement.stacking",
                format!("hex {} already holds {} infantry and cavalry units", n.hex, scenario.movement.stacking_limit),
            ));
        }
        created.push(UnitBought {
            unit: id,
            name: name.to_owned(),
            arm: n.arm,
            hex: n.hex,
            factors: n.factors,
            cost: rules.new_unit + each * n.factors,
            rail_hex,
        });
    }
    let stored = state.reinforcement_points.get(side);
    if cost > stored {
        return Err(Refusal::new(
            "body",
            "reinforcement.points",
            format!("this costs {cost} reinforcement points; the {side} has {stored} stored"),
        ));
    }
    *state.reinforcement_points.get_mut(side) -= cost;
    for f in &body.factors {
        if let Some(u) = state.unit_mut(&f.unit) {
            u.factors = u.factors.saturating_add(f.factors);
            u.reinforced = true;
        }
    }
    out.push(Outcome::new(
        format!("The {side} spends {cost} reinforcement points ({} left)", stored - cost),
        Reinforced {
            side,
            cost,
            points_before: stored,
            points_left: stored - cost,
            factors: bought,
            new_units: created,
        },
    ));
    Ok(())
}
