//! A campaign's log, in one place: how a post is decided, chained, stored and audited. No HTTP
//! here: the routes call in and turn a [`LogError`] into problem+json.
//!
//! - [`view`]: the fold over the log (void posts, standing seals) every reader builds the same way;
//! - [`decide`]: the rules' verdict on a post, and the one rule of what context it reads;
//! - [`chain`]: a post's hash, and checking a chain link by link;
//! - [`append`]: stamp, chain, sign, decide and write a post, deciding again when the log moved on;
//! - [`replay`]: a stored post decided again and compared with what was stored;
//! - [`read`]: the fold and a post's context read back from the store.

pub mod append;
pub mod audit;
pub mod bodies;
pub mod chain;
pub mod decide;
pub mod error;
pub mod kinds;
pub mod read;
pub mod replay;
pub mod view;

pub use error::{FieldPath, LogError, LogResult, PostRefusal, RefusalKind};
