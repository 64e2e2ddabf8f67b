//! `attack`, the defending cavalry's option and the battle fought at the attacker's next post:
//! the orders of the combat procedure that `super::combat` works out.

use super::bodies::{AttackBody, CavalryOptionBody};
use super::casualties::take_casualties;
use super::casualties::{full_order, order_changes_casualties, order_matters, spread};
use super::combat::{battle, battle_by_unit, Defence, Defenders, Winner};
use super::hex::Hex;
use super::orders::{may_post, own_unit, Order};
use super::retreat::{retreat_losses, start_retreat};
use super::scenario::{Arm, Scenario, Terrain};
use super::state::{CasualtiesDue, GameState, PendingBattle, Phase, UnitState};
use crate::outcome::{AttackDeclared, AttackVoid, CavalryOption, Fought, Outcome};
use crate::{Refusal, Side};

pub(crate) fn attack(
    scenario: &Scenario,
    state: &mut GameState,
    side: Side,
    body: AttackBody,
    order: &Order,
    out: &mut Vec<Outcome>,
) -> Result<(), Refusal> {
    if body.units.is_empty() {
        return Err(Refusal::new("body.units", "combat.no_attackers", "name the attacking units"));
    }
    if !scenario.on_map(body.target) {
        return Err(Refusal::new("body.target", "movement.off_map", format!("hex {} is not on the map", body.target)));
    }
    if state.occupant(body.target) != Some(side.other()) {
        return Err(Refusal::new(
            "body.target",
            "combat.no_enemy",
            format!("there is no enemy unit in {}", body.target),
        ));
    }
    let mut factors: u32 = 0;
    let mut infantry = false;
    for (i, id) in body.units.iter().enumerate() {
        let field = format!("body.units[{i}]");
        let unit = own_unit(state, side, id, &field)?;
        if body.units[..i].contains(id) {
            return Err(Refusal::new(field, "combat.twice", format!("{} is named twice", unit.name)));
        }
        if unit.attacked {
            return Err(Refusal::new(
                field,
                "combat.once_a_turn",
                format!("{} has already attacked this turn", unit.name),
            ));
        }
        if !unit.hex.is_some_and(|h| h.is_adjacent(body.target)) {
            return Err(Refusal::new(
                field,
                "combat.adjacent",
                format!("{} is not next to {}", unit.name, body.target),
            ));
        }
        factors = factors.saturating_add(unit.factors);
        infantry |= unit.arm == Arm::Infantry;
    }
    if factors == 0 {
        return Err(Refusal::new("body.units", "combat.no_factors", "the attacking units have no factors"));
    }
    for id in &body.units {
        if let Some(u) = state.unit_mut(id) {
            u.attacked = true;
            u.must_fight = false;
        }
    }
    state.phase = Phase::Combat;
    state.battles += 1;
    // Seed: "Cavalry engaged by infantry may choose to retreat 1 hex before the battle is
    // calculated, and this option must be presented to the opposing player."
    let cavalry: Vec<String> = if infantry {
        state.units_in(body.target).filter(|u| u.arm == Arm::Cavalry).map(|u| u.id.clone()).collect()
    } else {
        vec![]
    };
    state.battle = Some(PendingBattle {
        number: state.battles,
        attacker: side,
        attackers: body.units.clone(),
        target: body.target,
        defenders: vec![],
        cavalry: cavalry.clone(),
        cavalry_answered: false,
        fought: false,
        casualties_due: vec![],
        loser: None,
        retreating: vec![],
    });
    if cavalry.is_empty() {
        fight(scenario, state, order, out);
    } else {
        out.push(Outcome::new(
            format!(
                "Battle {}: the {side} attacks {} with infantry; the {} cavalry there may retreat 1 hex before the battle",
                state.battles, body.target, side.other()
            ),
            AttackDeclared { battle: state.battles, attackers: body.units, target: body.target, cavalry },
        ));
    }
    Ok(())
}

/// The enemy-held hexes `unit` may attack now: those next to it, while its side may `attack`
/// and it has not attacked this player turn; nothing otherwise. Units attacking together must
/// each be next to the target, so their targets are the hexes every one of them may attack.
pub fn attack_targets(scenario: &Scenario, state: &GameState, unit: &str) -> Result<Vec<Hex>, Refusal> {
    let u =
        state.unit(unit).ok_or_else(|| Refusal::new("unit", "unit.unknown", format!("there is no unit `{unit}`")))?;
    let may_attack = may_post(scenario, state, u.side).contains(&"attack");
    let Some(at) = u.hex.filter(|_| may_attack && u.is_on_map() && !u.attacked) else {
        return Ok(vec![]);
    };
    let mut targets: Vec<Hex> =
        scenario.neighbours(at).into_iter().filter(|h| state.occupant(*h) == Some(u.side.other())).collect();
    targets.sort();
    Ok(targets)
}

/// The hexes the defending cavalry may retreat to before the battle, while `unit` is one of
/// them and their side has not answered the option; nothing otherwise. Seed: "Cavalry engaged
/// by infantry may choose to retreat 1 hex": next to the battle's hex, not enemy-held, with
/// room under the stacking limit for all of them.
pub fn cavalry_option_hexes(scenario: &Scenario, state: &GameState, unit: &str) -> Result<Vec<Hex>, Refusal> {
    let u =
        state.unit(unit).ok_or_else(|| Refusal::new("unit", "unit.unknown", format!("there is no unit `{unit}`")))?;
    let Some(b) = state.battle.as_ref().filter(|b| !b.cavalry_answered && b.cavalry.iter().any(|id| id == unit)) else {
        return Ok(vec![]);
    };
    let limit = scenario.movement.stacking_limit;
    let mut hexes: Vec<Hex> = scenario
        .neighbours(b.target)
        .into_iter()
        .filter(|h| state.occupant(*h) != Some(u.side.other()))
        .filter(|h| state.stacking_count(*h) + b.cavalry.len() as u32 <= limit)
        .collect();
    hexes.sort();
    Ok(hexes)
}

/// The hex's own defence for an attack on `target`: woods, river or open (no fortification).
pub(crate) fn hex_defence(scenario: &Scenario, state: &GameState, attackers: &[String], target: Hex) -> Defence {
    let woods = scenario.terrain(target) == Terrain::Woods;
    // "behind ... river": every attacking unit attacks across a river hexside (bridged or not:
    // the seed's example defends "a River Crossing").
    let river = attackers
        .iter()
        .all(|id| state.unit(id).and_then(|u| u.hex).is_some_and(|h| scenario.river_between(h, target)));
    if woods {
        Defence::Woods
    } else if river {
        Defence::River
    } else {
        Defence::Open
    }
}

/// The defence multiplier for an attack on `target` under rules version 1: fortified only when
/// every defender is.
pub(crate) fn defence_of(scenario: &Scenario, state: &GameState, attackers: &[String], target: Hex) -> Defence {
    let hex = hex_defence(scenario, state, attackers, target);
    let defenders: Vec<&UnitState> = state.units_in(target).collect();
    let fortified = !defenders.is_empty() && defenders.iter().all(|u| u.fortified);
    if hex != Defence::Open {
        hex
    } else if fortified {
        Defence::Fortified
    } else {
        Defence::Open
    }
}

pub(crate) fn battle_units(state: &GameState, ids: &[String]) -> Vec<(String, u32)> {
    ids.iter().filter_map(|id| state.unit(id)).filter(|u| u.is_on_map()).map(|u| (u.id.clone(), u.factors)).collect()
}

/// Fights the pending battle with the result number of this post's stamp.
pub(crate) fn fight(scenario: &Scenario, state: &mut GameState, order: &Order, out: &mut Vec<Outcome>) {
    let Some(mut b) = state.battle.clone() else {
        return;
    };
    let defenders: Vec<String> = state.units_in(b.target).map(|u| u.id.clone()).collect();
    let attackers = battle_units(state, &b.attackers);
    let defending = battle_units(state, &defenders);
    let a: u32 = attackers.iter().map(|(_, f)| f).sum();
    let d: u32 = defending.iter().map(|(_, f)| f).sum();
    // Sealed delay: the seed's rule on the stamp plus a delay the poster could not know.
    let sealed = order.sealed.map(|s| s.secret.delay(s.post_hash, order.stamp));
    let result_time = sealed.as_ref().and_then(|s| s.result_time()).unwrap_or(order.stamp);
    let result = order.settings.clock.result_number(result_time);
    let fought = if order.settings.corrected() {
        // Ruling 2 (version 2): each defender counts with its own multiplier.
        let fortified: u32 = state.units_in(b.target).filter(|u| u.fortified).map(|u| u.factors).sum();
        let hex = hex_defence(scenario, state, &b.attackers, b.target);
        battle_by_unit(a, Defenders { factors: d, fortified }, hex, &result, order.settings.victory_rounding)
    } else {
        let defence = defence_of(scenario, state, &b.attackers, b.target);
        battle(a, d, defence, &result, order.settings.victory_rounding)
    };
    let defence = fought.defence;
    let sealed_text = sealed.as_ref().map_or(String::new(), |s| {
        let t = order.settings.clock.time_of_day(result_time);
        format!(
            " (stamp + sealed delay {} ms = result time {}:{:02}:{:02})",
            s.delay_ms,
            t.hour_on(order.settings.clock.format),
            t.minute,
            t.second
        )
    });
    let winner_side = match fought.winner {
        Winner::Attacker => b.attacker,
        Winner::Defender => b.attacker.other(),
    };
    let headline = format!(
            "Battle {} at {}: {} {a} v {} {d} ({}, ×{}) — victory {}, result {} ({}{sealed_text}): the {winner_side} wins; casualties {} {}, {} {}",
            b.number,
            b.target,
            b.attacker,
            b.attacker.other(),
            serde_json::to_value(defence).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
            fought.multiplier,
            fought.victory,
            fought.result,
            fought.result_number.n,
            b.attacker,
            fought.attacker_casualties,
            b.attacker.other(),
            fought.defender_casualties,
    );
    let (attacker_casualties, defender_casualties) = (fought.attacker_casualties, fought.defender_casualties);
    out.push(Outcome::new(
        headline,
        Fought {
            battle: b.number,
            post: order.seq,
            target: b.target,
            attacker_side: b.attacker,
            attackers: attackers.clone(),
            defenders: defending.clone(),
            winner_side,
            loser_side: winner_side.other(),
            numbers: fought,
            sealed_delay: sealed,
        },
    ));
    b.fought = true;
    b.defenders = defenders;
    b.loser = Some(winner_side.other());
    let attacker_side = b.attacker;
    let mut dues = vec![];
    for (side, units, casualties) in
        [(attacker_side, attackers, attacker_casualties), (attacker_side.other(), defending, defender_casualties)]
    {
        let ask = if order.settings.asks_casualty_order_only_when_it_counts() {
            order_changes_casualties(&units, casualties)
        } else {
            order_matters(&units, casualties)
        };
        if ask {
            dues.push(CasualtiesDue { side, units: units.iter().map(|(id, _)| id.clone()).collect(), casualties });
        } else if casualties > 0 {
            let shares = spread(&units, casualties, &full_order(&units, &[]));
            take_casualties(state, b.number, side, &shares, out);
        }
    }
    b.casualties_due = dues;
    state.battle = Some(b);
    if state.battle.as_ref().is_some_and(|b| b.casualties_due.is_empty()) {
        start_retreat(scenario, state, order.settings, out);
    }
}

pub(crate) fn cavalry_option(
    scenario: &Scenario,
    state: &mut GameState,
    side: Side,
    body: CavalryOptionBody,
    out: &mut Vec<Outcome>,
) -> Result<(), Refusal> {
    let Some(mut b) = state.battle.clone() else {
        return Err(Refusal::new("kind", "battle.not_awaited", "no battle is waiting"));
    };
    b.cavalry_answered = true;
    if !body.retreat {
        if body.hex.is_some() {
            return Err(Refusal::new(
                "body.hex",
                "cavalry.hex_without_retreat",
                "a hex is named only when the cavalry retreat",
            ));
        }
        out.push(Outcome::new(
            format!("Battle {}: the {side} cavalry in {} stand", b.number, b.target),
            CavalryOption { battle: b.number, retreat: false, hex: None, cavalry: b.cavalry.clone(), losses: None },
        ));
        state.battle = Some(b);
        return Ok(());
    }
    let Some(hex) = body.hex else {
        return Err(Refusal::new("body.hex", "cavalry.hex", "name the hex the cavalry retreat to"));
    };
    if !scenario.on_map(hex) {
        return Err(Refusal::new("body.hex", "movement.off_map", format!("hex {hex} is not on the map")));
    }
    if !hex.is_adjacent(b.target) {
        return Err(Refusal::new(
            "body.hex",
            "cavalry.one_hex",
            format!("hex {hex} is not next to {}: the cavalry retreat 1 hex", b.target),
        ));
    }
    if state.occupant(hex) == Some(side.other()) {
        return Err(Refusal::new("body.hex", "retreat.enemy_hex", format!("hex {hex} is held by the enemy")));
    }
    if state.stacking_count(hex) + b.cavalry.len() as u32 > scenario.movement.stacking_limit {
        return Err(Refusal::new(
            "body.hex",
            "retreat.stacking",
            format!("hex {hex} would hold more than {} infantry and cavalry units", scenario.movement.stacking_limit),
        ));
    }
    for id in &b.cavalry {
        if let Some(u) = state.unit_mut(id) {
            u.hex = Some(hex);
            u.moved = true;
            u.fortified = false;
        }
    }
    let losses = retreat_losses(scenario, state, &b.cavalry);
    let defenders_left = state.units_in(b.target).count();
    out.push(Outcome::new(
        format!("Battle {}: the {side} cavalry retreat from {} to {hex} before the battle", b.number, b.target),
        CavalryOption {
            battle: b.number,
            retreat: true,
            hex: Some(hex),
            cavalry: b.cavalry.clone(),
            losses: Some(losses),
        },
    ));
    if defenders_left == 0 {
        out.push(Outcome::new(
            format!("Battle {}: {} is empty; there is no battle", b.number, b.target),
            AttackVoid { battle: b.number, target: b.target },
        ));
        state.battle = None;
    } else {
        state.battle = Some(b);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::short_acw::retreat::tests::{post, scripted};

    const ATTACK_STAMP: &str = "2026-03-02T09:51:45.250Z";

    #[test]
    fn a_unit_may_attack_the_enemy_next_to_it_until_it_has_attacked() {
        // Script post 14: the Union's four infantry next to the Rebels in 0604.
        let (scenario, state) = scripted(13);
        let target: Hex = "0604".parse().unwrap();
        let attackers = ["us-14th-inf", "us-13th-inf", "us-12th-inf", "us-27th-inf"];
        for id in attackers {
            assert_eq!(attack_targets(&scenario, &state, id).unwrap(), vec![target], "{id}");
        }
        // Far from the enemy, or not this side's player turn: nothing.
        assert_eq!(attack_targets(&scenario, &state, "us-hq").unwrap(), vec![]);
        assert_eq!(attack_targets(&scenario, &state, "cs-51st-inf").unwrap(), vec![]);
        // The target offered is accepted for the units offered it.
        let body = json!({"units": attackers, "target": "0604"});
        let attacked = post(&scenario, &state, Side::Union, "attack", &body, ATTACK_STAMP).unwrap().state;
        // Once a battle is pending (and after it, for the units that attacked), nothing.
        assert_eq!(attack_targets(&scenario, &attacked, "us-14th-inf").unwrap(), vec![]);
        let (scenario, after) = scripted(17);
        assert_eq!(attack_targets(&scenario, &after, "us-14th-inf").unwrap(), vec![]);
        assert_eq!(attack_targets(&scenario, &after, "no-such-unit").unwrap_err().rule, "unit.unknown");
    }

    #[test]
    fn the_cavalry_may_retreat_to_a_hex_next_to_the_battle_with_room_for_them() {
        // The Union infantry attacks 0802, where two Rebel cavalry stand with an infantry unit.
        let (scenario, mut state) = scripted(2);
        state.unit_mut("us-14th-inf").unwrap().hex = Some("0702".parse().unwrap());
        let body = json!({"units": ["us-14th-inf"], "target": "0802"});
        let declared = post(&scenario, &state, Side::Union, "attack", &body, ATTACK_STAMP).unwrap().state;
        let offered = cavalry_option_hexes(&scenario, &declared, "cs-37th-cav").unwrap();
        assert!(!offered.is_empty());
        let target: Hex = "0802".parse().unwrap();
        for hex in &offered {
            assert!(hex.is_adjacent(target));
            let body = json!({"retreat": true, "hex": hex.to_string()});
            let answered = post(&scenario, &declared, Side::Confederate, "cavalry_option", &body, ATTACK_STAMP);
            assert!(answered.is_ok(), "{hex} was offered but refused: {answered:?}");
        }
        // Not the Union's hex, nor 0703 where two Rebel infantry leave room for one unit only.
        for (hex, rule) in [("0702", "retreat.enemy_hex"), ("0703", "retreat.stacking")] {
            assert!(!offered.contains(&hex.parse().unwrap()), "{hex} in {offered:?}");
            let body = json!({"retreat": true, "hex": hex});
            let refused = post(&scenario, &declared, Side::Confederate, "cavalry_option", &body, ATTACK_STAMP);
            assert_eq!(refused.unwrap_err().rule, rule);
        }
        // The infantry beside them has no such option.
        assert_eq!(cavalry_option_hexes(&scenario, &declared, "cs-34th-inf").unwrap(), vec![]);
    }
}
