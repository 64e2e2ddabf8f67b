//! The losing side's retreat: who must retreat, `retreat` paths and what ending next to the
//! enemy costs.

use serde::{Deserialize, Serialize};

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

/// A retreat a unit may make now: the hexes it goes through, in order, and the enemy-held hex
/// next to where it ends, if any (ending there costs half its factors).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetreatPath {
    pub path: Vec<Hex>,
    pub next_to_enemy: Option<Hex>,
}

/// Every retreat of 1 or 2 hexes `unit` may make now, while it is one of the units retreating
/// from the pending battle; nothing otherwise. Seed: "Defeated Armies may retreat up to two
/// hexes, and must retreat at least one": hex by hex, never into an enemy-held hex nor back to
/// the hex left, and ending where the stacking limit leaves room with the other units where
/// they stand now (`retreat` checks the limit again once every retreating unit has moved).
/// A retreating unit with none of these has no legal retreat: its path is empty.
pub fn legal_retreats(scenario: &Scenario, state: &GameState, unit: &str) -> Result<Vec<RetreatPath>, Refusal> {
    let u =
        state.unit(unit).ok_or_else(|| Refusal::new("unit", "unit.unknown", format!("there is no unit `{unit}`")))?;
    let retreating = state.battle.as_ref().is_some_and(|b| b.retreating.iter().any(|id| id == unit));
    let Some(from) = u.hex.filter(|_| retreating && u.is_on_map()) else {
        return Ok(vec![]);
    };
    let open = |h: Hex| state.occupant(h) != Some(u.side.other());
    let room = |h: Hex| !u.arm.counts_for_stacking() || state.stacking_count(h) < scenario.movement.stacking_limit;
    let ending = |path: Vec<Hex>| {
        let end = path[path.len() - 1];
        RetreatPath { next_to_enemy: state.enemy_next_to(scenario, end, u.side), path }
    };
    let mut paths = vec![];
    for first in scenario.neighbours(from).into_iter().filter(|h| open(*h)) {
        if room(first) {
            paths.push(ending(vec![first]));
        }
        for second in scenario.neighbours(first) {
            if second != from && open(second) && room(second) {
                paths.push(ending(vec![first, second]));
            }
        }
    }
    paths.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(paths)
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

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::short_acw::orders::{apply, Applied, Order};

    /// A post of the scripted campaign's kind, posted by `side` at `stamp`.
    pub(crate) fn post(
        scenario: &Scenario,
        state: &GameState,
        side: Side,
        kind: &str,
        body: &Value,
        stamp: &str,
    ) -> Result<Applied, Refusal> {
        let settings = Settings::default();
        let stamp = stamp.parse().expect("an RFC 3339 stamp");
        let order = Order { seq: 1, side: Some(side), kind, body, stamp, settings: &settings, sealed: None };
        apply(scenario, state, &order)
    }

    /// The scripted campaign (tests/data/short_acw_script.json) after its first `n` posts.
    pub(crate) fn scripted(n: usize) -> (Scenario, GameState) {
        let script: Vec<Value> =
            serde_json::from_str(include_str!("../../tests/data/short_acw_script.json")).expect("the script");
        let scenario = Scenario::short_acw();
        let mut state = GameState::new(&scenario);
        for step in &script[..n] {
            let side: Side = serde_json::from_value(step["side"].clone()).expect("a side");
            let kind = step["kind"].as_str().expect("a kind");
            let stamp = step["stamp"].as_str().expect("a stamp");
            state = post(&scenario, &state, side, kind, &step["body"], stamp).expect("a scripted post").state;
        }
        (scenario, state)
    }

    fn hexes(path: &[Hex]) -> Vec<String> {
        path.iter().map(Hex::to_string).collect()
    }

    const RETREAT_STAMP: &str = "2026-03-02T09:56:36Z";

    #[test]
    fn every_retreat_offered_is_accepted_and_none_enters_the_enemy_or_goes_back() {
        // Script post 17: the Rebels in 0604 lost battle 1 and retreat.
        let (scenario, state) = scripted(16);
        let from: Hex = "0604".parse().unwrap();
        let offered = legal_retreats(&scenario, &state, "cs-51st-inf").unwrap();
        assert!(offered.iter().any(|r| hexes(&r.path) == ["0704", "0804"]), "{offered:?}");
        for retreat in &offered {
            assert!((1..=2).contains(&retreat.path.len()), "{retreat:?}");
            let mut at = from;
            for &hex in &retreat.path {
                assert!(at.is_adjacent(hex) && hex != from, "{retreat:?}");
                assert_ne!(state.occupant(hex), Some(Side::Union), "{retreat:?}");
                at = hex;
            }
            let end = retreat.path[retreat.path.len() - 1];
            assert_eq!(retreat.next_to_enemy, state.enemy_next_to(&scenario, end, Side::Confederate));
            let body = json!({"paths": [
                {"unit": "cs-51st-inf", "path": hexes(&retreat.path)},
                {"unit": "cs-52nd-inf", "path": ["0704", "0804"]},
            ]});
            let accepted = post(&scenario, &state, Side::Confederate, "retreat", &body, RETREAT_STAMP);
            assert!(accepted.is_ok(), "{retreat:?} was offered but refused: {accepted:?}");
        }
        // The Union next door is never a way out.
        assert!(offered.iter().all(|r| !hexes(&r.path).contains(&"0504".to_owned())));
        assert_eq!(!offered.is_empty(), has_retreat(&scenario, &state, state.unit("cs-51st-inf").unwrap(), from));
    }

    #[test]
    fn a_full_hex_is_passed_through_but_not_ended_in() {
        let (scenario, mut state) = scripted(16);
        let full: Hex = "0704".parse().unwrap();
        for id in ["cs-39th-inf", "cs-40th-inf", "cs-17th-inf"] {
            state.unit_mut(id).unwrap().hex = Some(full);
        }
        let offered = legal_retreats(&scenario, &state, "cs-52nd-inf").unwrap();
        assert!(offered.iter().all(|r| r.path.last() != Some(&full)), "{offered:?}");
        assert!(offered.iter().any(|r| r.path.first() == Some(&full)), "{offered:?}");
        let body = json!({"paths": [
            {"unit": "cs-51st-inf", "path": ["0704", "0804"]},
            {"unit": "cs-52nd-inf", "path": ["0704"]},
        ]});
        let refused = post(&scenario, &state, Side::Confederate, "retreat", &body, RETREAT_STAMP).unwrap_err();
        assert_eq!(refused.rule, "retreat.stacking");
    }

    #[test]
    fn only_the_units_retreating_now_have_retreats() {
        let (scenario, state) = scripted(16);
        assert_eq!(legal_retreats(&scenario, &state, "us-14th-inf").unwrap(), vec![]);
        assert_eq!(legal_retreats(&scenario, &state, "cs-39th-inf").unwrap(), vec![]);
        let (scenario, before) = scripted(15);
        assert_eq!(legal_retreats(&scenario, &before, "cs-51st-inf").unwrap(), vec![]);
        let (scenario, after) = scripted(17);
        assert_eq!(legal_retreats(&scenario, &after, "cs-51st-inf").unwrap(), vec![]);
        assert_eq!(legal_retreats(&scenario, &after, "no-such-unit").unwrap_err().rule, "unit.unknown");
    }
}
