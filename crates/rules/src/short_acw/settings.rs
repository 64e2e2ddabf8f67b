//! The options a managed campaign is created with that change how numbers are worked out.

use super::combat::VictoryRounding;
use super::deadline::Deadlines;
use crate::{Clock, RULES_VERSION};

/// Campaign options that change how numbers are worked out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub clock: Clock,
    pub victory_rounding: VictoryRounding,
    /// The rules version the campaign was created under: its posts are decided and audited by
    /// it (1 to `RULES_VERSION`).
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
