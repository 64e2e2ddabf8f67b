//! Why the rules refused a post. Every refusal names the field it is about and the rule it
//! breaks, so the API can answer with a problem+json document a player can act on.

use serde::Serialize;

/// A post the rules will not accept, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{field}: {detail} ({rule})")]
pub struct Refusal {
    /// The input field at fault, as a JSON pointer-like path (`body.units[2]`), or the post
    /// as a whole (`kind`, `side`, ...).
    pub field: String,
    /// A short name of the rule broken, in the rules' own words (`movement.woods_cost`).
    pub rule: String,
    /// A sentence for the player.
    pub detail: String,
}

impl Refusal {
    pub fn new(field: impl Into<String>, rule: impl Into<String>, detail: impl Into<String>) -> Self {
        Self { field: field.into(), rule: rule.into(), detail: detail.into() }
    }

    /// Whether the game as it stands refuses the order, which the same order could pass at
    /// another moment (not your turn, wrong phase, a unit that already moved, an enemy in the
    /// way): answered 409. Any other refusal is of an order that could never be right as sent
    /// (an unknown unit, a hex off the map or out of the zone, a path that skips a hex): 422.
    pub fn depends_on_the_game_now(&self) -> bool {
        STATE_RULES.contains(&self.rule.as_str())
    }
}

/// The rules whose refusal the game's current state decides (docs/rules/short-acw.md,
/// "Refusals").
pub const STATE_RULES: [&str; 37] = [
    // Whose turn, which phase, whether the game goes on.
    "turn.side",
    "phase.deployment",
    "phase.deployment_over",
    "phase.movement_over",
    "phase.reinforcement_over",
    "battle.not_awaited",
    "battle.pending",
    "game.over",
    "deployment.once",
    // What a unit or side has already done this turn.
    "movement.once_a_turn",
    "combat.once_a_turn",
    "combat.must_fight",
    "reinforcement.once_a_turn",
    "reinforcement.spends_turn_not_moving",
    "reinforcement.points",
    // Where the units stand now.
    "unit.eliminated",
    "combat.no_enemy",
    "combat.adjacent",
    "combat.no_factors",
    "movement.enemy_hex",
    "movement.halt_next_to_enemy",
    "movement.stacking",
    "deployment.enemy_hex",
    "retreat.enemy_hex",
    "retreat.stacking",
    "retreat.empty_path",
    "retreat.not_retreating",
    "reinforcement.enemy_hex",
    "reinforcement.stacking",
    "reinforcement.rail",
    "casualties.not_in_battle",
    // The campaign clock.
    "clock.paused",
    "clock.not_paused",
    "clock.nothing_waits",
    "deadline.not_waiting",
    "deadline.not_due",
    "deadline.reminded",
];
