//! `deploy`: each side places its units within 1 hex of its deployment cities (ruling 11: from
//! rules version 3 the first side's placements stay sealed until the second side has deployed).

use super::bodies::DeployBody;
use super::orders::{own_unit, set_hex};
use super::scenario::Scenario;
use super::settings::Settings;
use super::state::{GameState, SealedDeployment};
use super::turn::begin_player_turn;
use crate::outcome::{Deployed, DeploymentSealed, Outcome, Placed};
use crate::{Refusal, Side};

pub(crate) fn deploy(
    scenario: &Scenario,
    state: &mut GameState,
    side: Side,
    body: DeployBody,
    settings: &Settings,
    out: &mut Vec<Outcome>,
) -> Result<(), Refusal> {
    // Ruling 11: the side that deploys first is sealed; the second deployment reveals it, so the
    // second side's placements are checked against the first's (which tells the second side
    // something only where the two deployment zones touch).
    let revealed = state.sealed_deployment.take();
    if let Some(sealed) = &revealed {
        for (unit, hex) in &sealed.placements {
            set_hex(state, unit, Some(*hex));
        }
    }
    let zone = scenario.deployment_zone(side);
    let letters: Vec<String> = scenario.deployment.get(&side).into_iter().flatten().map(char::to_string).collect();
    let mut placed: Vec<String> = vec![];
    for (i, p) in body.placements.iter().enumerate() {
        let field = format!("body.placements[{i}]");
        let unit = own_unit(state, side, &p.unit, &format!("{field}.unit"))?;
        if placed.contains(&p.unit) {
            return Err(Refusal::new(
                format!("{field}.unit"),
                "deployment.twice",
                format!("{} is placed twice", unit.name),
            ));
        }
        if !zone.contains(&p.hex) {
            return Err(Refusal::new(
                format!("{field}.hex"),
                "deployment.zone",
                format!("hex {} is not within 1 hex of {}", p.hex, letters.join(", ")),
            ));
        }
        if state.occupant(p.hex) == Some(side.other()) {
            return Err(Refusal::new(
                format!("{field}.hex"),
                "deployment.enemy_hex",
                format!("hex {} is held by the enemy", p.hex),
            ));
        }
        let counts = unit.arm.counts_for_stacking();
        set_hex(state, &p.unit, Some(p.hex));
        if counts && state.stacking_count(p.hex) > scenario.movement.stacking_limit {
            return Err(Refusal::new(
                format!("{field}.hex"),
                "deployment.stacking",
                format!(
                    "hex {} would hold more than {} infantry and cavalry units",
                    p.hex, scenario.movement.stacking_limit
                ),
            ));
        }
        placed.push(p.unit.clone());
    }
    if let Some(missing) = state.units.iter().find(|u| u.side == side && !u.eliminated && !placed.contains(&u.id)) {
        return Err(Refusal::new(
            "body.placements",
            "deployment.all_units",
            format!("{} (`{}`) is not placed: deploy every unit at once", missing.name, missing.id),
        ));
    }
    let first = state.deployed.is_empty();
    state.deployed.push(side);
    // The campaign's first outcome (and so its first forum text) says the map is a stand-in
    // (rules version 2; earlier outcomes are audited as they were written).
    let stand_in = scenario.stand_in_map().filter(|_| first && settings.corrected());
    if first && settings.seals_deployment() {
        // Off the map again, into the seal: the outcome says that the side deployed, not where.
        for p in &body.placements {
            set_hex(state, &p.unit, None);
        }
        let units = body.placements.len();
        let data =
            DeploymentSealed { side, units, sealed_until: side.other(), stand_in_map: stand_in.map(str::to_owned) };
        out.push(Outcome::new(
            format!("The {side} deploys {units} units, sealed until the {} side has deployed", side.other()),
            data,
        ));
        state.sealed_deployment = Some(SealedDeployment {
            side,
            placements: body.placements.iter().map(|p| (p.unit.clone(), p.hex)).collect(),
        });
        return Ok(());
    }
    if let Some(sealed) = revealed {
        let placements: Vec<Placed> =
            sealed.placements.iter().map(|(unit, hex)| Placed { unit: unit.clone(), hex: *hex }).collect();
        out.push(Outcome::new(
            format!("The {}'s sealed deployment is revealed: {} units", sealed.side, placements.len()),
            Deployed { side: sealed.side, placements, revealed: true, stand_in_map: None },
        ));
    }
    let placements: Vec<Placed> = body.placements.iter().map(|p| Placed { unit: p.unit.clone(), hex: p.hex }).collect();
    let headline = format!("The {side} deploys {} units", placements.len());
    let data = Deployed { side, placements, revealed: false, stand_in_map: stand_in.map(str::to_owned) };
    out.push(Outcome::new(headline, data));
    if state.deployed.len() == 2 {
        state.turn = 1;
        state.refresh(scenario);
        begin_player_turn(scenario, state, scenario.first_side, out);
    }
    Ok(())
}
