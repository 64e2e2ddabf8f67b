//! Where outcomes go: one module per kind of target, each delivering an outcome its own way
//! and finding, after a crash between delivering and acknowledging, what it delivered before.

mod discord;
mod discourse;
mod files;

pub(crate) use discord::{execute_webhook, Discord};
pub(crate) use discourse::{Discourse, Forum};
pub(crate) use files::Files;

use crate::feed::FeedOutcome;
use crate::BotError;

/// One kind of target, for one run: a value is made at the start of each pass over the feed,
/// so what it reads of the target's past (the bot's replies in a topic, the Discord journal)
/// is read once a run.
pub(crate) trait Deliver {
    /// Delivers `outcome`, or finds what was delivered for it before a crash.
    async fn deliver(&mut self, outcome: &FeedOutcome) -> Result<Delivery, BotError>;
}

/// What became of one outcome; the name given is what the acknowledgement tells Adjutant.
pub(crate) enum Delivery {
    /// Delivered now, under this name (a post id, a message id, a file).
    Posted(String),
    /// Delivered before a crash, and found again under this name.
    Recovered(String),
    /// Not delivered: left unacknowledged, to be served again (the target says why in the log).
    Skipped,
}
