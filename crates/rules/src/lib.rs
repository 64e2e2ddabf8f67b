//! Adjutant's rules: everything the server decides, as pure functions.
//!
//! No IO, no async, no database and no clock: the caller hands in the post's server time
//! stamp and gets back every number derived from it, so a moderator (or a test) can recompute
//! any outcome from the stored log alone.

pub mod chain;
pub mod dice;
pub mod fairness;
pub mod outcome;
pub mod post_time;
pub mod refusal;
pub mod reinforcement;
pub mod resolver;
pub mod result_time;
pub mod schema;
pub mod short_acw;
pub mod side;
pub mod sorted_json;
pub mod vectors;
pub mod version;
pub mod words;

pub use dice::{DiceStream, DieRoll};
pub use post_time::{Clock, ClockFormat, DigitPositions, ResultNumber, TimeOfDay};
pub use refusal::Refusal;
pub use reinforcement::ReinforcementRoll;
pub use side::Side;
pub use version::RULES_VERSION;
