//! The bodies of the posts every campaign takes besides the game's own orders.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// The body of an `umpire` post: the moderator posts for a side whose player is absent (any
/// post that side's player may make now: a deployment, a move, an attack, an answer to a battle,
/// the end of its turn), with the reason on record.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UmpireBody {
    /// The side answered for: `union` or `confederate`.
    pub side: String,
    /// The post kind the side's player would send (`deploy`, `move`, `attack`, `end_turn`,
    /// `casualty_order`, …): one of those the side may post now.
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

/// The body of a `deadline` post, which only the server makes, when the wait of `side` named
/// `stage` runs out (GET …/state, `clock.waits`).
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeadlineBody {
    pub side: String,
    /// The wait's name: `deployment`, `turn 3`, `battle 2: casualty_order`.
    pub stage: String,
}

/// The body of a `reminder` post, which only the server makes, `lead_ms` before the deadline of
/// the wait of `side` named `stage` (its `reminder_leads`).
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReminderBody {
    pub side: String,
    pub stage: String,
    pub lead_ms: i64,
}

/// The body of a `pause` post: the moderator stops the campaign's clock; no player post is
/// accepted until `resume`.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseBody {
    /// Why, for the record (e.g. "holidays until the 3rd").
    #[schema(value_type = crate::free_text::Line)]
    pub reason: String,
}

/// The body of a `resume` post.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeBody {
    /// A word for the record (optional).
    #[serde(default)]
    #[schema(value_type = Option<crate::free_text::Line>)]
    pub reason: Option<String>,
}

/// The body of an `extend` post: every deadline still to come moves later.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtendBody {
    /// How much later: an ISO 8601 duration from `PT1M` to `P30D` (e.g. `PT24H`).
    #[schema(example = "PT24H", pattern = "^P(?:[0-9]{1,2}D)?(?:T(?:[0-9]{1,3}H)?(?:[0-9]{1,5}M)?(?:[0-9]{1,7}S)?)?$")]
    pub by: String,
    /// Only this side's deadline (default: every side the game waits for).
    #[serde(default)]
    pub side: Option<String>,
    /// Why, for the record.
    #[schema(value_type = crate::free_text::Line)]
    pub reason: String,
}

/// The body of a `replace_player` post, which the server makes when the moderator replaces a
/// side's player: who played the side, who plays it from now on.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplacePlayerBody {
    pub side: String,
    /// The player replaced (their token revoked).
    pub replaced: uuid::Uuid,
    pub replaced_name: String,
    /// The new player.
    pub by: uuid::Uuid,
    pub name: String,
}
