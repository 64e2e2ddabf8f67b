//! Posts (orders) of a managed Short ACW campaign and how the rules apply them.
//!
//! `apply` is a pure function of the scenario, the state and one post: it never mutates its
//! input, and a refusal changes nothing. Replaying a campaign's posts through it from
//! `GameState::new` rebuilds the state exactly.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::casualties::{full_order, order_changes_casualties, order_matters, spread, CasualtyShare};
use super::combat::{battle, battle_by_unit, Defence, Defenders, VictoryRounding, Winner};
use super::deadline::Deadlines;
use super::hex::Hex;
use super::movement::{check_may_move, check_path, reachable, Reach};
use super::reinforcement::{qualifying_rail, rail_to_edge};
use super::scenario::{Arm, Scenario, Terrain};
use super::state::{CasualtiesDue, GameState, PendingBattle, Phase, SealedDeployment, UnitState};
use super::victory::{after_last_turn, capture_met};
use crate::outcome::{
    AttackDeclared, AttackVoid, Casualties, CavalryOption, Deployed, DeploymentSealed, Eliminated, FactorsBought,
    Fought, Moved, Outcome, Placed, Reinforced, ReinforcementRolled, Retreat, RetreatLoss, RetreatMove, TurnBegins,
    TurnEnded, UnitBought, Vacated,
};
use crate::result_time::ChainSecret;
use crate::words::listed;
use crate::{Clock, Refusal, ReinforcementRoll, Side};

/// The most factors one `reinforce` post buys for a unit (or gives a new unit): far beyond what
/// a side can afford, and it keeps every sum well inside the integers.
pub const MAX_PURCHASE: u32 = 100;

/// The rules version new campaigns are played under (docs/rules/short-acw.md, "Rules
/// versions"). Version 1: fortification only when every defender is fortified, a unit at 0
/// factors survives a lost battle, an empty retreat path gives a unit up. Version 2:
/// fortification unit by unit, a unit of the losing side at 0 factors is eliminated, an empty
/// retreat path is refused while a legal retreat exists. Version 3: a retreat's outcome names the
/// hexes the loser left (not the battle's target, which is the winner's when the attacker loses)
/// and, in its headline, the factors lost next to the enemy; a casualty order is asked for only
/// where some order would spread the casualties differently; the side that deploys first is
/// sealed until the other side has deployed, then both are revealed together; a new unit's name
/// holds no bidirectional control or zero-width character.
pub const RULES_VERSION: u32 = 3;

/// Campaign options that change how numbers are worked out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub clock: Clock,
    pub victory_rounding: VictoryRounding,
    /// The rules version the campaign was created under: its posts are decided and audited by
    /// it (1 or 2; see `RULES_VERSION`).
    pub rules_version: u32,
    /// The campaign's deadlines, if it has any (`super::deadline`).
    pub deadlines: Option<Deadlines>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            clock: Clock::default(),
            victory_rounding: VictoryRounding::default(),
            rules_version: RULES_VERSION,
            deadlines: None,
        }
    }
}

impl Settings {
    /// Whether the version 2 corrections apply.
    pub fn corrected(&self) -> bool {
        self.rules_version >= 2
    }

    /// Whether a side is asked for its casualty order only where some order would spread the
    /// casualties differently (version 3).
    pub fn asks_casualty_order_only_when_it_counts(&self) -> bool {
        self.rules_version >= 3
    }

    /// Whether the side that deploys first is sealed until the other has deployed (version 3).
    pub fn seals_deployment(&self) -> bool {
        self.rules_version >= 3
    }

    /// Whether a new unit's name is refused for a bidirectional control or zero-width character,
    /// as every other name is (version 3).
    pub fn refuses_invisible_names(&self) -> bool {
        self.rules_version >= 3
    }

    /// Whether a retreat's outcome names the loser's own hexes and its losses in the headline
    /// (version 3).
    pub fn names_retreat_origins(&self) -> bool {
        self.rules_version >= 3
    }
}

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

/// A post kind, for the API documentation.
#[derive(Debug, Clone, Serialize)]
pub struct PostKindSpec {
    pub kind: &'static str,
    pub summary: &'static str,
    pub body_schema: Value,
    pub example: Value,
}

// ---- bodies ---------------------------------------------------------------------------------

/// `deploy`: place every unit of the side within 1 hex of its deployment cities.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeployBody {
    pub placements: Vec<Placement>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    pub unit: String,
    pub hex: Hex,
}

/// A post with no body (`{}`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmptyBody {}

/// `reinforce`: spend stored reinforcement points.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReinforceBody {
    /// Factors added to existing units.
    #[serde(default)]
    pub factors: Vec<FactorPurchase>,
    /// New units, created with no factors (plus any bought for them here).
    #[serde(default)]
    pub new_units: Vec<NewUnit>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FactorPurchase {
    pub unit: String,
    pub factors: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewUnit {
    pub name: String,
    pub arm: Arm,
    pub hex: Hex,
    #[serde(default)]
    pub factors: u32,
}

/// `move`: one unit along a path of adjacent hexes (not counting the hex it stands in).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveBody {
    pub unit: String,
    pub path: Vec<Hex>,
}

/// `attack`: units next to the target hex attack it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttackBody {
    pub units: Vec<String>,
    pub target: Hex,
}

/// `cavalry_option`: the defender's answer before the battle.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CavalryOptionBody {
    pub retreat: bool,
    /// Where the cavalry retreat to (1 hex), when `retreat` is true.
    #[serde(default)]
    pub hex: Option<Hex>,
}

/// `casualty_order`: which units take casualties first on ties.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CasualtyOrderBody {
    /// Unit ids; units left out follow in the default order (largest first, then id).
    #[serde(default)]
    pub order: Vec<String>,
}

/// `retreat`: the loser's retreat paths, one per unit.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetreatBody {
    pub paths: Vec<RetreatPath>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetreatPath {
    pub unit: String,
    /// 1 or 2 hexes.
    pub path: Vec<Hex>,
}

fn spec<T: JsonSchema>(kind: &'static str, summary: &'static str, example: Value) -> PostKindSpec {
    PostKindSpec { kind, summary, body_schema: crate::schema::inline_schema::<T>(), example }
}

/// Every post kind of the managed Short ACW campaign.
pub fn post_kinds() -> Vec<PostKindSpec> {
    vec![
        spec::<DeployBody>(
            "deploy",
            "Place all of the side's units within 1 hex of its deployment cities (once, during deployment). From rules version 3 the first side's deployment is sealed until the other side has deployed; then both are revealed together.",
            json!({"placements": [{"unit": "us-14th-inf", "hex": "0403"}, {"unit": "us-hq", "hex": "0206"}]}),
        ),
        spec::<EmptyBody>(
            "reinforcement",
            "The Rebel reinforcement post (once a player turn, before moving): its server milliseconds mod 6 ≤ cities held among E, G, I, O, M, L gains 1 point.",
            json!({}),
        ),
        spec::<ReinforceBody>(
            "reinforce",
            "Spend stored points (before moving): infantry factor 1, cavalry or artillery factor 2, new unit 1; only in or next to a rail hex joined to a map edge by friendly rail. Reinforced units do not move this turn.",
            json!({"factors": [{"unit": "us-14th-inf", "factors": 1}], "new_units": [{"name": "1st Volunteers", "arm": "infantry", "hex": "0106", "factors": 0}]}),
        ),
        spec::<MoveBody>(
            "move",
            "Move one unit along a path of adjacent hexes (3 movement points for infantry and artillery, 5 for cavalry and HQ).",
            json!({"unit": "us-14th-inf", "path": ["0504"]}),
        ),
        spec::<AttackBody>(
            "attack",
            "Attack an enemy-held hex with units next to it. The post's server time fixes the result number, unless defending cavalry is first offered the option to retreat.",
            json!({"units": ["us-14th-inf", "us-13th-inf"], "target": "0604"}),
        ),
        spec::<CavalryOptionBody>(
            "cavalry_option",
            "The defender's answer when infantry attack its cavalry: retreat the cavalry 1 hex before the battle, or stand.",
            json!({"retreat": true, "hex": "0705"}),
        ),
        spec::<EmptyBody>(
            "resolve_attack",
            "After the cavalry option is answered, the attacker's post whose server time fixes the result number.",
            json!({}),
        ),
        spec::<CasualtyOrderBody>(
            "casualty_order",
            "The order in which the side's units take casualties on ties (an empty order accepts the default: largest first, then id).",
            json!({"order": ["cs-52nd-inf", "cs-51st-inf"]}),
        ),
        spec::<RetreatBody>(
            "retreat",
            "The loser's retreat: 1 or 2 hexes for each unit; ending next to the enemy costs half the unit's factors.",
            json!({"paths": [{"unit": "cs-51st-inf", "path": ["0704", "0804"]}, {"unit": "cs-52nd-inf", "path": ["0704"]}]}),
        ),
        spec::<EmptyBody>(
            "end_turn",
            "End the side's player turn: units that did not move are fortified, victory is checked.",
            json!({}),
        ),
    ]
}

fn parse_body<T: DeserializeOwned>(body: &Value) -> Result<T, Refusal> {
    let body = if body.is_null() { &json!({}) } else { body };
    serde_path_to_error::deserialize(body).map_err(|err| {
        let path = err.path().to_string();
        let field = if path == "." { "body".to_owned() } else { format!("body.{path}") };
        Refusal::new(field, "post.body", err.into_inner().to_string())
    })
}

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

fn own_unit<'s>(state: &'s GameState, side: Side, id: &str, field: &str) -> Result<&'s UnitState, Refusal> {
    let unit = state.unit(id).ok_or_else(|| Refusal::new(field, "unit.unknown", format!("there is no unit `{id}`")))?;
    if unit.side != side {
        return Err(Refusal::new(field, "unit.not_yours", format!("{} belongs to the {}", unit.name, unit.side)));
    }
    if unit.eliminated {
        return Err(Refusal::new(field, "unit.eliminated", format!("{} has been eliminated", unit.name)));
    }
    Ok(unit)
}

fn set_hex(state: &mut GameState, id: &str, hex: Option<Hex>) {
    if let Some(u) = state.unit_mut(id) {
        u.hex = hex;
    }
}

fn deploy(
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

fn begin_player_turn(scenario: &Scenario, state: &mut GameState, side: Side, out: &mut Vec<Outcome>) {
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

fn reinforcement_roll(
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

fn reinforce(
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

fn move_unit(
    scenario: &Scenario,
    state: &mut GameState,
    side: Side,
    body: MoveBody,
    out: &mut Vec<Outcome>,
) -> Result<(), Refusal> {
    let unit = own_unit(state, side, &body.unit, "body.unit")?;
    let from = check_may_move(unit, "body.unit")?;
    let cost = check_path(scenario, state, unit, from, &body.path, "body.path")?;
    let name = unit.name.clone();
    let to = body.path[body.path.len() - 1];
    let halted_by = state.enemy_next_to(scenario, to, side);
    if let Some(u) = state.unit_mut(&body.unit) {
        u.hex = Some(to);
        u.moved = true;
        u.fortified = false;
        u.must_fight = halted_by.is_some();
    }
    state.phase = Phase::Movement;
    let mut headline = format!("{name} moves {from} → {to} ({cost} movement points)");
    if let Some(enemy) = halted_by {
        headline.push_str(&format!(", halts next to the enemy in {enemy} and must attack"));
    }
    let allowance = scenario.movement.allowance(state.unit(&body.unit).map_or(Arm::Infantry, |u| u.arm));
    out.push(Outcome::new(
        headline,
        Moved {
            unit: body.unit,
            from,
            path: body.path,
            cost,
            allowance,
            halted_next_to: halted_by,
            must_fight: halted_by.is_some(),
        },
    ));
    Ok(())
}

/// The hexes a unit can legally reach now, with costs.
pub fn legal_moves(scenario: &Scenario, state: &GameState, unit: &str) -> Result<Vec<Reach>, Refusal> {
    let u =
        state.unit(unit).ok_or_else(|| Refusal::new("unit", "unit.unknown", format!("there is no unit `{unit}`")))?;
    if state.phase == Phase::Over || state.phase == Phase::Deployment {
        return Ok(vec![]);
    }
    if state.side_to_act != Some(u.side) || state.phase == Phase::Combat || state.battle.is_some() {
        return Ok(vec![]);
    }
    if !u.is_on_map() || check_may_move(u, "unit").is_err() {
        return Ok(vec![]);
    }
    Ok(reachable(scenario, state, u))
}

/// The hex's own defence for an attack on `target`: woods, river or open (no fortification).
fn hex_defence(scenario: &Scenario, state: &GameState, attackers: &[String], target: Hex) -> Defence {
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
fn defence_of(scenario: &Scenario, state: &GameState, attackers: &[String], target: Hex) -> Defence {
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

fn attack(
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

fn battle_units(state: &GameState, ids: &[String]) -> Vec<(String, u32)> {
    ids.iter().filter_map(|id| state.unit(id)).filter(|u| u.is_on_map()).map(|u| (u.id.clone(), u.factors)).collect()
}

/// Fights the pending battle with the result number of this post's stamp.
fn fight(scenario: &Scenario, state: &mut GameState, order: &Order, out: &mut Vec<Outcome>) {
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

fn take_casualties(state: &mut GameState, battle: u32, side: Side, shares: &[CasualtyShare], out: &mut Vec<Outcome>) {
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

fn casualty_order(
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

/// Whether a unit in `from` has any legal retreat of 1 or 2 hexes.
fn has_retreat(scenario: &Scenario, state: &GameState, unit: &UnitState, from: Hex) -> bool {
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
fn start_retreat(scenario: &Scenario, state: &mut GameState, settings: &Settings, out: &mut Vec<Outcome>) {
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
fn retreat_losses(scenario: &Scenario, state: &mut GameState, ids: &[String]) -> Vec<RetreatLoss> {
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

fn retreat(
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
fn retreat_outcome(
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
fn hex_list(hexes: &[Hex]) -> String {
    let names: Vec<String> = hexes.iter().map(Hex::to_string).collect();
    listed(&names, "and")
}

fn cavalry_option(
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

/// A unit of `side` that entered a hex next to the enemy and has not fought yet: the side's
/// turn cannot end before it does.
fn still_to_fight<'s>(scenario: &Scenario, state: &'s GameState, side: Side) -> Option<&'s UnitState> {
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

fn end_turn(
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
