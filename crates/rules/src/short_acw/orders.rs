//! Posts (orders) of a managed Short ACW campaign and how the rules apply them.
//!
//! `apply` is a pure function of the scenario, the state and one post: it never mutates its
//! input, and a refusal changes nothing. Replaying a campaign's posts through it from
//! `GameState::new` rebuilds the state exactly.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use super::battle::{attack, cavalry_option, fight};
use super::bodies::{parse_body, post_kinds, EmptyBody};
use super::casualties::casualty_order;
use super::deployment::deploy;
use super::hex::Hex;
use super::movement::move_unit;
use super::reinforcement::{reinforce, reinforcement_roll};
use super::retreat::retreat;
use super::scenario::Scenario;
use super::settings::Settings;
use super::state::{GameState, Phase, UnitState};
use super::turn::{end_turn, still_to_fight};
use crate::outcome::Outcome;
use crate::result_time::ChainSecret;
use crate::words::listed;
use crate::{Refusal, Side};

/// One post, as the server stamped it.
#[derive(Debug, Clone, Copy)]
pub struct Order<'a> {
    pub seq: u64,
    /// `None` for a moderator (umpire).
    pub side: Option<Side>,
    pub kind: &'a str,
    pub body: &'a Value,
    pub stamp: DateTime<Utc>,
    pub settings: &'a Settings,
    /// In a `sealed_delay` campaign, the chain secret a result-fixing post uses and the post's
    /// chain hash: the result time is the stamp plus the delay they give
    /// (`crate::result_time`). `None`: the result time is the stamp, as the seed says.
    pub sealed: Option<SealedDraw<'a>>,
}

/// The sealed delay's inputs for one post.
#[derive(Debug, Clone, Copy)]
pub struct SealedDraw<'a> {
    pub secret: &'a ChainSecret,
    pub post_hash: &'a str,
}

/// An accepted post: the new state and its outcomes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Applied {
    pub state: GameState,
    pub outcomes: Vec<Outcome>,
}

// ---- bodies ---------------------------------------------------------------------------------

// ---- the rules ------------------------------------------------------------------------------

/// Applies one post. A refusal changes nothing.
pub fn apply(scenario: &Scenario, state: &GameState, order: &Order) -> Result<Applied, Refusal> {
    apply_as(scenario, state, order, false)
}

/// [`apply`]; `at_deadline`: the server ends a side's turn at its deadline, so a unit that had
/// to attack and did not does not hold the turn open (docs/rules/short-acw.md, "Deadlines").
pub(crate) fn apply_as(
    scenario: &Scenario,
    state: &GameState,
    order: &Order,
    at_deadline: bool,
) -> Result<Applied, Refusal> {
    let Some(side) = order.side else {
        return Err(Refusal::new(
            "side",
            "post.moderator",
            "a moderator does not post orders in a managed Short ACW campaign: void a post instead",
        ));
    };
    check_phase(scenario, state, side, order.kind)?;
    let mut next = state.clone();
    let mut out = vec![];
    match order.kind {
        "deploy" => deploy(scenario, &mut next, side, parse_body(order.body)?, order.settings, &mut out)?,
        "reinforcement" => {
            parse_body::<EmptyBody>(order.body)?;
            reinforcement_roll(scenario, &mut next, side, order, &mut out)?;
        }
        "reinforce" => reinforce(scenario, &mut next, side, parse_body(order.body)?, order.settings, &mut out)?,
        "move" => move_unit(scenario, &mut next, side, parse_body(order.body)?, &mut out)?,
        "attack" => attack(scenario, &mut next, side, parse_body(order.body)?, order, &mut out)?,
        "cavalry_option" => cavalry_option(scenario, &mut next, side, parse_body(order.body)?, &mut out)?,
        "resolve_attack" => {
            parse_body::<EmptyBody>(order.body)?;
            fight(scenario, &mut next, order, &mut out);
        }
        "casualty_order" => {
            casualty_order(scenario, &mut next, side, parse_body(order.body)?, order.settings, &mut out)?
        }
        "retreat" => retreat(scenario, &mut next, side, parse_body(order.body)?, order.settings, &mut out)?,
        "end_turn" => {
            parse_body::<EmptyBody>(order.body)?;
            end_turn(scenario, &mut next, side, at_deadline, &mut out)?;
        }
        _ => unreachable_kind()?,
    }
    finish(scenario, state, &mut next, order.settings, order.stamp, &mut out);
    Ok(Applied { state: next, outcomes: out })
}

/// What every accepted post ends with: control, the cities and the awaited answers follow the
/// units, and the campaign clock follows the waits.
pub(crate) fn finish(
    scenario: &Scenario,
    before: &GameState,
    next: &mut GameState,
    settings: &Settings,
    at: DateTime<Utc>,
    out: &mut [Outcome],
) {
    next.refresh(scenario);
    super::deadline::keep(before, next, settings, at, out);
}

fn unreachable_kind() -> Result<(), Refusal> {
    // `check_phase` refuses unknown kinds first.
    Err(Refusal::new("kind", "post.kind", "unknown post kind"))
}

const TURN_KINDS: [&str; 5] = ["reinforcement", "reinforce", "move", "attack", "end_turn"];
const ANSWER_KINDS: [&str; 4] = ["cavalry_option", "resolve_attack", "casualty_order", "retreat"];

/// What `side` may post now, in the order of play: the one answer to "who acts now, and with
/// what" that the refusals, the state's readers and the player's page all give. A kind listed
/// here may still be refused for what its body says (a unit that already moved, a hex out of
/// reach); a kind not listed is refused whatever its body.
pub fn may_post(scenario: &Scenario, state: &GameState, side: Side) -> Vec<&'static str> {
    if state.result.is_some() {
        return vec![];
    }
    if state.phase == Phase::Deployment {
        return if state.deployed.contains(&side) { vec![] } else { vec!["deploy"] };
    }
    if state.battle.is_some() {
        return ANSWER_KINDS
            .into_iter()
            .filter(|kind| state.awaiting.iter().any(|a| a.side == side && a.kind == *kind))
            .collect();
    }
    if state.side_to_act != Some(side) {
        return vec![];
    }
    let roll = side == Side::Confederate && !state.reinforcement_roll_made;
    let mut kinds = match state.phase {
        Phase::Reinforcement if roll => vec!["reinforcement", "reinforce", "move", "attack", "end_turn"],
        Phase::Reinforcement => vec!["reinforce", "move", "attack", "end_turn"],
        Phase::Movement => vec!["move", "attack", "end_turn"],
        Phase::Combat => vec!["attack", "end_turn"],
        Phase::Deployment | Phase::Over => vec![],
    };
    if still_to_fight(scenario, state, side).is_some() {
        kinds.retain(|k| *k != "end_turn");
    }
    kinds
}

/// "`move`, `attack` or `end_turn`".
fn kinds_in_words(kinds: &[&str]) -> String {
    if kinds.is_empty() {
        return "nothing".to_owned();
    }
    let quoted: Vec<String> = kinds.iter().map(|k| format!("`{k}`")).collect();
    listed(&quoted, "or")
}

/// Out-of-phase and wrong-side posts are refused here, with the reason.
fn check_phase(scenario: &Scenario, state: &GameState, side: Side, kind: &str) -> Result<(), Refusal> {
    let known = kind == "deploy" || TURN_KINDS.contains(&kind) || ANSWER_KINDS.contains(&kind);
    if !known {
        let kinds: Vec<&str> = post_kinds().iter().map(|k| k.kind).collect();
        return Err(Refusal::new(
            "kind",
            "post.kind",
            format!("`{kind}` is not a post kind of this campaign; use one of {}", kinds.join(", ")),
        ));
    }
    if let Some(result) = &state.result {
        return Err(Refusal::new(
            "kind",
            "game.over",
            format!("the game is over ({}): nothing more is accepted", result.condition),
        ));
    }
    if state.phase == Phase::Deployment {
        if kind != "deploy" {
            return Err(Refusal::new(
                "kind",
                "phase.deployment",
                "the campaign is in deployment: each side posts `deploy` first",
            ));
        }
        if state.deployed.contains(&side) {
            return Err(Refusal::new("kind", "deployment.once", format!("the {side} has already deployed")));
        }
        return Ok(());
    }
    if kind == "deploy" {
        return Err(Refusal::new("kind", "phase.deployment_over", "deployment is over: the game is in its turns"));
    }
    if ANSWER_KINDS.contains(&kind) {
        if state.awaiting.iter().any(|a| a.side == side && a.kind == kind) {
            return Ok(());
        }
        let now = match &state.battle {
            Some(_) => {
                let waiting: Vec<String> =
                    state.awaiting.iter().map(|a| format!("`{}` from the {}", a.kind, a.side)).collect();
                format!("the battle awaits {}", waiting.join(" and "))
            }
            None => match state.side_to_act {
                Some(to_act) => format!(
                    "no battle is waiting; it is the {to_act}'s player turn, in which the {to_act} may post {}",
                    kinds_in_words(&may_post(scenario, state, to_act))
                ),
                None => "no battle is waiting".to_owned(),
            },
        };
        return Err(Refusal::new(
            "kind",
            "battle.not_awaited",
            format!("nothing awaits a `{kind}` from the {side}: {now}"),
        ));
    }
    let to_act = state.side_to_act.unwrap_or(Side::Union);
    if to_act != side {
        return Err(Refusal::new(
            "side",
            "turn.side",
            format!("it is the {to_act}'s player turn (turn {}): the {side} cannot `{kind}` now", state.turn),
        ));
    }
    if let Some(b) = &state.battle {
        let waiting: Vec<String> = state.awaiting.iter().map(|a| format!("`{}` from the {}", a.kind, a.side)).collect();
        return Err(Refusal::new(
            "kind",
            "battle.pending",
            format!("battle {} at {} is not finished: it awaits {}", b.number, b.target, waiting.join(" and ")),
        ));
    }
    match kind {
        "reinforcement" | "reinforce" if state.phase != Phase::Reinforcement => Err(Refusal::new(
            "kind",
            "phase.reinforcement_over",
            "reinforcements come at the start of the player turn, before any move or attack",
        )),
        "move" if state.phase == Phase::Combat => {
            Err(Refusal::new("kind", "phase.movement_over", "attacks have begun: no more moves this player turn"))
        }
        _ => Ok(()),
    }
}

pub(crate) fn own_unit<'s>(state: &'s GameState, side: Side, id: &str, field: &str) -> Result<&'s UnitState, Refusal> {
    let unit = state.unit(id).ok_or_else(|| Refusal::new(field, "unit.unknown", format!("there is no unit `{id}`")))?;
    if unit.side != side {
        return Err(Refusal::new(field, "unit.not_yours", format!("{} belongs to the {}", unit.name, unit.side)));
    }
    if unit.eliminated {
        return Err(Refusal::new(field, "unit.eliminated", format!("{} has been eliminated", unit.name)));
    }
    Ok(unit)
}

pub(crate) fn set_hex(state: &mut GameState, id: &str, hex: Option<Hex>) {
    if let Some(u) = state.unit_mut(id) {
        u.hex = hex;
    }
}
