//! The bodies of the posts every campaign takes besides the game's own orders.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// The answers a moderator may give for a side that does not give them.
pub const UMPIRE_KINDS: [&str; 3] = ["casualty_order", "retreat", "cavalry_option"];

/// The body of an `umpire` post: the moderator gives an answer the game waits for from a side
/// (a casualty order, a retreat, the cavalry option) when that side's player does not, with the
/// reason on record.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UmpireBody {
    /// The side answered for: `union` or `confederate`.
    pub side: String,
    /// `casualty_order`, `retreat` or `cavalry_option`.
    pub kind: String,
    /// That post kind's body.
    #[schema(value_type = Object)]
    pub body: Value,
    /// Why the moderator answers (e.g. the player has not posted for three days).
    #[schema(value_type = crate::free_text::Line)]
    pub reason: String,
}

/// Which group a sealed choice is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SealRole {
    Attacker,
    Defender,
}

impl SealRole {
    pub fn other(self) -> Self {
        match self {
            SealRole::Attacker => SealRole::Defender,
            SealRole::Defender => SealRole::Attacker,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SealRole::Attacker => "attacker",
            SealRole::Defender => "defender",
        }
    }
}

/// The body of a `seal` post. The server adds a random `salt` before it stores and hashes the
/// post, so the post's public hash does not give the choice away; the body is shown as
/// `"sealed"` until the other group's choice on the same topic is in.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SealBody {
    /// What the choice is about, agreed by the players (e.g. `melee-3-round-2`).
    pub topic: String,
    /// The group the choice is for.
    pub role: SealRole,
    /// The choice itself (e.g. `stay` or `retreat`).
    pub choice: String,
    /// Set by the server; a client may not send it.
    #[serde(default)]
    pub salt: String,
}

/// The body of a `rollback` post.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RollbackBody {
    /// The last post that stands; every later post is void.
    pub to_seq: i64,
    /// Why, for the record.
    #[schema(value_type = crate::free_text::Line)]
    pub reason: String,
}

/// The body of a `resolve` post.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveBody {
    /// The ruleset's action (see `GET /v1/rulesets/{name}`).
    pub action: String,
    /// The action's inputs.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub inputs: Value,
    /// A sealed topic whose two choices fill the inputs `attacker_choice` and `defender_choice`
    /// (both must be in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed: Option<String>,
}
