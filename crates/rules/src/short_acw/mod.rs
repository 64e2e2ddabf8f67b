//! "A Short ACW Campaign" (seed 000), fully managed: the server holds the map, the units and
//! the turns, and enforces every rule. `docs/rules/short-acw.md` is the rules as Adjutant plays
//! them, with the rulings on the seed's ambiguities ("The rulings") that the code cites by number.

pub mod battle;
pub mod bodies;
pub mod casualties;
pub mod combat;
pub mod deadline;
pub mod deployment;
pub mod hex;
pub mod movement;
pub mod orders;
pub mod reinforcement;
pub mod retreat;
pub mod scenario;
pub mod settings;
pub mod state;
pub mod turn;
pub mod victory;

pub use crate::outcome::Outcome;
pub use battle::{attack_targets, cavalry_option_hexes};
pub use bodies::{post_kinds, PostKindSpec};
pub use combat::{battle, battle_by_unit, Battle, Defence, Defenders, VictoryRounding, Winner};
pub use hex::Hex;
pub use movement::legal_moves;
pub use movement::Reach;
pub use orders::{apply, may_post, Applied, Order, SealedDraw};
pub use retreat::{legal_retreats, RetreatPath};
pub use scenario::{Arm, Limits, Scenario, ScenarioError};
pub use settings::Settings;
pub use state::{GameState, Phase};
