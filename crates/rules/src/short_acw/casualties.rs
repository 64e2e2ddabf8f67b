//! Spreading casualties over the units present (docs/rules/short-acw.md, ruling 4).
//!
//! Seed: "Casualties must be spread evenly across units present (no unit can take 2 casualties
//! until all other units present have taken at least 1)." Each factor goes to the unit that has
//! taken fewest so far in this battle; ties go by the owner's casualty order, or by default to
//! the largest unit first, then by unit id. A unit at 0 factors is eliminated.

use super::battle::battle_units;
use super::bodies::CasualtyOrderBody;
use super::retreat::start_retreat;
use super::scenario::Scenario;
use super::settings::Settings;
use super::state::GameState;
use crate::outcome::{Casualties, Outcome};
use crate::{Refusal, Side};
use serde::{Deserialize, Serialize};
/// A unit's share of a battle's casualties.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CasualtyShare {
    pub unit: String,
    pub before: u32,
    pub taken: u32,
    pub after: u32,
    pub eliminated: bool,
}

/// The default casualty order: largest unit first, then unit id.
pub fn default_order(units: &[(String, u32)]) -> Vec<String> {
    let mut sorted: Vec<&(String, u32)> = units.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    sorted.into_iter().map(|(id, _)| id.clone()).collect()
}

/// The owner's order first (units named in it), then the rest in the default order.
pub fn full_order(units: &[(String, u32)], owner: &[String]) -> Vec<String> {
    let mut order: Vec<String> = owner.iter().filter(|id| units.iter().any(|(u, _)| u == *id)).cloned().collect();
    for id in default_order(units) {
        if !order.contains(&id) {
            order.push(id);
        }
    }
    order
}

/// Spreads `casualties` over `units` (id, factors) in `order`. Never takes more factors than
/// are present.
pub fn spread(units: &[(String, u32)], casualties: u32, order: &[String]) -> Vec<CasualtyShare> {
    let mut shares: Vec<CasualtyShare> = order
        .iter()
        .filter_map(|id| units.iter().find(|(u, _)| u == id))
        .map(|(id, factors)| CasualtyShare {
            unit: id.clone(),
            before: *factors,
            taken: 0,
            after: *factors,
            eliminated: false,
        })
        .collect();
    for _ in 0..casualties {
        // The unit with fewest taken so far that still has a factor; the first in order wins ties.
        let next = shares.iter_mut().filter(|s| s.after > 0).min_by_key(|s| s.taken);
        match next {
            Some(share) => {
                share.taken += 1;
                share.after -= 1;
            }
            None => break,
        }
    }
    for share in &mut shares {
        share.eliminated = share.before > 0 && share.after == 0;
    }
    shares
}

/// Whether the owner's order could change who takes what: more than one unit with factors,
/// and casualties that neither miss everyone nor take everything.
pub fn order_matters(units: &[(String, u32)], casualties: u32) -> bool {
    let with_factors = units.iter().filter(|(_, f)| *f > 0).count();
    let total: u32 = units.iter().map(|(_, f)| f).sum();
    with_factors > 1 && casualties > 0 && casualties < total
}

/// Whether some order of the owner's gives a different spread than another (rules version 3,
/// where the owner is asked only then). The spread goes round the units that still have
/// factors, one factor each: a full round takes one from every unit whatever the order, so only
/// a round the casualties cannot complete leaves a choice of who takes the rest. Two casualties
/// on two 4-factor units are one full round: there is nothing to choose.
pub fn order_changes_casualties(units: &[(String, u32)], casualties: u32) -> bool {
    let mut left: Vec<u32> = units.iter().map(|(_, f)| *f).filter(|f| *f > 0).collect();
    let mut due = casualties;
    while due > 0 && !left.is_empty() {
        let round = left.len() as u32;
        if due < round {
            return true;
        }
        due -= round;
        left = left.into_iter().map(|f| f - 1).filter(|f| *f > 0).collect();
    }
    false
}

// ---- the orders ----------------------------------------------------------------------------

pub(crate) fn take_casualties(
    state: &mut GameState,
    battle: u32,
    side: Side,
    shares: &[CasualtyShare],
    out: &mut Vec<Outcome>,
) {
    for s in shares {
        if let Some(u) = state.unit_mut(&s.unit) {
            u.factors = s.after;
            if s.eliminated {
                u.eliminated = true;
                u.hex = None;
            }
        }
    }
    let total: u32 = shares.iter().map(|s| s.taken).sum();
    let text: Vec<String> = shares
        .iter()
        .filter(|s| s.taken > 0)
        .map(|s| format!("{} −{}{}", s.unit, s.taken, if s.eliminated { " (eliminated)" } else { "" }))
        .collect();
    out.push(Outcome::new(
        format!("Battle {battle}: the {side} loses {total} factors: {}", text.join(", ")),
        Casualties { battle, side, casualties: total, units: shares.to_vec() },
    ));
}

pub(crate) fn casualty_order(
    scenario: &Scenario,
    state: &mut GameState,
    side: Side,
    body: CasualtyOrderBody,
    settings: &Settings,
    out: &mut Vec<Outcome>,
) -> Result<(), Refusal> {
    let Some(mut b) = state.battle.clone() else {
        return Err(Refusal::new("kind", "battle.not_awaited", "no battle is waiting"));
    };
    let Some(pos) = b.casualties_due.iter().position(|d| d.side == side) else {
        return Err(Refusal::new("kind", "battle.not_awaited", "no casualty order is awaited from you"));
    };
    let due = b.casualties_due.remove(pos);
    for (i, id) in body.order.iter().enumerate() {
        let field = format!("body.order[{i}]");
        if !due.units.contains(id) {
            return Err(Refusal::new(
                field,
                "casualties.not_in_battle",
                format!("`{id}` is not one of the {side} units in battle {}: {}", b.number, due.units.join(", ")),
            ));
        }
        if body.order[..i].contains(id) {
            return Err(Refusal::new(field, "casualties.twice", format!("`{id}` is named twice")));
        }
    }
    let units = battle_units(state, &due.units);
    let shares = spread(&units, due.casualties, &full_order(&units, &body.order));
    take_casualties(state, b.number, side, &shares, out);
    let done = b.casualties_due.is_empty();
    state.battle = Some(b);
    if done {
        start_retreat(scenario, state, settings, out);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(list: &[(&str, u32)]) -> Vec<(String, u32)> {
        list.iter().map(|(id, f)| (id.to_string(), *f)).collect()
    }

    #[test]
    fn the_worked_example_spreads_three_over_two_units() {
        let rebels = units(&[("cs-51st-inf", 3), ("cs-52nd-inf", 3)]);
        let order = default_order(&rebels);
        let shares = spread(&rebels, 3, &order);
        assert_eq!(shares[0].unit, "cs-51st-inf");
        assert_eq!((shares[0].taken, shares[0].after), (2, 1));
        assert_eq!((shares[1].taken, shares[1].after), (1, 2));
        let mine = full_order(&rebels, &["cs-52nd-inf".to_string()]);
        let shares = spread(&rebels, 3, &mine);
        assert_eq!(shares[0].unit, "cs-52nd-inf");
        assert_eq!(shares[0].taken, 2);
    }

    #[test]
    fn largest_first_then_id_and_no_second_hit_before_everyone_has_one() {
        let u = units(&[("b", 2), ("a", 2), ("c", 4), ("d", 1)]);
        assert_eq!(default_order(&u), ["c", "a", "b", "d"]);
        let shares = spread(&u, 5, &default_order(&u));
        let taken: Vec<(&str, u32)> = shares.iter().map(|s| (s.unit.as_str(), s.taken)).collect();
        assert_eq!(taken, [("c", 2), ("a", 1), ("b", 1), ("d", 1)]);
        assert!(shares[3].eliminated);
    }

    #[test]
    fn never_more_than_present() {
        let u = units(&[("a", 1), ("b", 2)]);
        let shares = spread(&u, 9, &default_order(&u));
        assert_eq!(shares.iter().map(|s| s.taken).sum::<u32>(), 3);
        assert!(shares.iter().all(|s| s.eliminated));
    }

    #[test]
    fn a_casualty_order_changes_something_only_in_a_round_left_unfinished() {
        // The worked example: 3 on two units of 3 leaves one casualty for one of them.
        assert!(order_changes_casualties(&units(&[("a", 3), ("b", 3)]), 3));
        // 2 on two 4-factor units: one each, whatever the order.
        assert!(!order_changes_casualties(&units(&[("a", 4), ("b", 4)]), 2));
        assert!(!order_changes_casualties(&units(&[("a", 4), ("b", 4)]), 4));
        // Units that run out leave the round: 4 on (1, 3) is 1 + 1, then 2 on the 3.
        assert!(!order_changes_casualties(&units(&[("a", 1), ("b", 3)]), 4));
        assert!(order_changes_casualties(&units(&[("a", 1), ("b", 3), ("c", 3)]), 4));
        assert!(!order_changes_casualties(&units(&[("a", 5)]), 3));
        assert!(!order_changes_casualties(&units(&[("a", 2), ("b", 0)]), 1));
        assert!(!order_changes_casualties(&units(&[("a", 2), ("b", 2)]), 0));
        // Everything taken: no choice.
        assert!(!order_changes_casualties(&units(&[("a", 2), ("b", 1)]), 5));
    }

    #[test]
    fn where_no_order_changes_anything_every_order_spreads_alike() {
        let cases: &[(&[(&str, u32)], u32)] =
            &[(&[("a", 4), ("b", 4)], 2), (&[("a", 1), ("b", 3)], 4), (&[("a", 3), ("b", 2), ("c", 2)], 6)];
        for (list, casualties) in cases {
            let u = units(list);
            assert!(!order_changes_casualties(&u, *casualties));
            let spreads: Vec<Vec<(String, u32)>> =
                [vec![], vec!["b".to_string()], vec!["c".to_string(), "b".to_string()]]
                    .iter()
                    .map(|first| {
                        let mut s: Vec<(String, u32)> = spread(&u, *casualties, &full_order(&u, first))
                            .into_iter()
                            .map(|s| (s.unit, s.taken))
                            .collect();
                        s.sort();
                        s
                    })
                    .collect();
            assert!(spreads.windows(2).all(|w| w[0] == w[1]), "{spreads:?}");
        }
    }
}
