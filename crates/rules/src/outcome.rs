//! What an accepted post produced, one type per kind of outcome.
//!
//! The rules build these, the server stores them as JSON, and the forum texts, the pages and
//! the audit read them back as these types: a field renamed here fails to compile where it is
//! read, never prints a blank. Each type serialises to exactly the bytes stored before outcomes
//! were typed. Those bytes have every map's keys sorted, whether written through
//! `serde_json::Value`, whose maps keep them so, or straight from the type by
//! [`crate::sorted_json`], which sorts them alike: field order is free; which fields are left out
//! when empty and which are written as `null` is not, and is kept field by field.
//! `crates/rules/tests/data/stored_outcomes.jsonl` holds every kind as it is stored, and a test
//! reads each back and writes it again byte for byte.

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::resolver::Resolution;
use crate::result_time::SealedDelay;
use crate::short_acw::casualties::CasualtyShare;
use crate::short_acw::combat::Battle;
use crate::short_acw::hex::Hex;
use crate::short_acw::scenario::Arm;
use crate::short_acw::state::GameResult;
use crate::Side;

/// One outcome: its headline (one line, for logs and lists) and what it says in full.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub headline: String,
    pub data: OutcomeData,
}

impl Outcome {
    pub fn new(headline: impl Into<String>, data: impl Into<OutcomeData>) -> Outcome {
        Outcome { headline: headline.into(), data: data.into() }
    }

    /// The stored name of its kind (`battle`, `turn_begins`, …).
    pub fn kind(&self) -> &'static str {
        self.data.kind()
    }
}

impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Outcome", 3)?;
        s.serialize_field("kind", self.kind())?;
        s.serialize_field("headline", &self.headline)?;
        s.serialize_field("data", &self.data)?;
        s.end()
    }
}

macro_rules! outcome_kinds {
    ($($variant:ident($ty:ty) = $name:literal,)*) => {
        /// The data of every kind of outcome the rules and the campaign clock write.
        // A battle's numbers make its variant the largest; a post makes a handful of outcomes,
        // so they are kept inline rather than boxed.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq)]
        pub enum OutcomeData {
            $($variant($ty),)*
        }

        impl OutcomeData {
            /// The data as JSON, as it is stored: a map with its keys sorted.
            pub fn to_json(&self) -> Value {
                let value = match self {
                    $(OutcomeData::$variant(data) => serde_json::to_value(data),)*
                };
                // Every field is a plain number, string, list or map: this cannot fail.
                value.unwrap_or(Value::Null)
            }

            /// The text an outcome with this data and `headline` is stored as,
            /// `{"data":…,"headline":…}` with every map's keys sorted: the bytes
            /// [`OutcomeData::to_json`] gives, written from the data itself (see
            /// [`crate::sorted_json`]; through `Value` where that writer does not take it).
            pub fn stored_text(&self, headline: &str) -> String {
                #[derive(Serialize)]
                struct Stored<'a, T: ?Sized> {
                    data: &'a T,
                    headline: &'a str,
                }
                let sorted = match self {
                    $(OutcomeData::$variant(data) => crate::sorted_json::to_string(&Stored { data, headline }),)*
                };
                // Writing JSON values to a string cannot fail.
                sorted.unwrap_or_else(|| {
                    serde_json::to_string(&Stored { data: &self.to_json(), headline }).unwrap_or_default()
                })
            }

            /// The stored name of the kind.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(OutcomeData::$variant(_) => $name,)*
                }
            }

            /// Reads stored data of the named kind. An error: a kind this build does not know
            /// (a server record such as `rollback`, read by its headline) or data of another
            /// shape.
            pub fn read(kind: &str, data: &Value) -> Result<OutcomeData, UnreadOutcome> {
                match kind {
                    $($name => read(data).map(OutcomeData::$variant),)*
                    _ => Err(UnreadOutcome::Kind(kind.to_owned())),
                }
            }

            /// [`OutcomeData::read`] from the stored JSON text itself, without building a
            /// [`Value`] first.
            pub fn read_json(kind: &str, json: &str) -> Result<OutcomeData, UnreadOutcome> {
                match kind {
                    $($name => read_json(json).map(OutcomeData::$variant),)*
                    _ => Err(UnreadOutcome::Kind(kind.to_owned())),
                }
            }
        }

        $(impl From<$ty> for OutcomeData {
            fn from(data: $ty) -> Self {
                OutcomeData::$variant(data)
            }
        })*
    };
}

outcome_kinds! {
    Deployed(Deployed) = "deployed",
    DeploymentSealed(DeploymentSealed) = "deployment_sealed",
    TurnBegins(TurnBegins) = "turn_begins",
    ReinforcementRoll(ReinforcementRolled) = "reinforcement_roll",
    Reinforced(Reinforced) = "reinforced",
    Moved(Moved) = "moved",
    AttackDeclared(AttackDeclared) = "attack_declared",
    CavalryOption(CavalryOption) = "cavalry_option",
    AttackVoid(AttackVoid) = "attack_void",
    Battle(Fought) = "battle",
    Casualties(Casualties) = "casualties",
    Eliminated(Eliminated) = "eliminated",
    Retreat(Retreat) = "retreat",
    TurnEnded(TurnEnded) = "turn_ended",
    GameOver(GameResult) = "game_over",
    Deadline(DeadlinePassed) = "deadline",
    DeadlinePassed(DeadlineLeftToModerator) = "deadline_passed",
    DeadlineNear(DeadlineNear) = "deadline_near",
    AttackCancelled(AttackCancelled) = "attack_cancelled",
    Paused(Paused) = "paused",
    Resumed(Resumed) = "resumed",
    Extended(Extended) = "extended",
    PlayerReplaced(PlayerReplaced) = "player_replaced",
    Resolution(Resolution) = "resolution",
}

/// Serialised through [`OutcomeData::to_json`], so that whatever writes it writes the stored
/// bytes, keys sorted.
impl Serialize for OutcomeData {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

impl OutcomeData {
    /// The side the outcome concerns, where it concerns one.
    pub fn side(&self) -> Option<Side> {
        match self {
            OutcomeData::Deployed(d) => Some(d.side),
            OutcomeData::DeploymentSealed(d) => Some(d.side),
            OutcomeData::TurnBegins(d) => Some(d.side),
            OutcomeData::Reinforced(d) => Some(d.side),
            OutcomeData::Casualties(d) => Some(d.side),
            OutcomeData::Retreat(d) => Some(d.side),
            OutcomeData::TurnEnded(d) => Some(d.side),
            OutcomeData::Deadline(d) => Some(d.wait.side),
            OutcomeData::DeadlinePassed(d) => Some(d.wait.side),
            OutcomeData::DeadlineNear(d) => Some(d.side),
            OutcomeData::AttackCancelled(d) => Some(d.side),
            OutcomeData::PlayerReplaced(d) => Some(d.side),
            OutcomeData::Extended(d) => d.side,
            _ => None,
        }
    }
}

/// Why stored outcome data could not be read as its type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnreadOutcome {
    #[error("`{0}` is not a kind of outcome the rules write")]
    Kind(String),
    #[error("the data is not of its kind's shape: {0}")]
    Shape(String),
}

fn read<T: DeserializeOwned>(data: &Value) -> Result<T, UnreadOutcome> {
    T::deserialize(data).map_err(|e| UnreadOutcome::Shape(e.to_string()))
}

fn read_json<T: DeserializeOwned>(json: &str) -> Result<T, UnreadOutcome> {
    serde_json::from_str(json).map_err(|e| UnreadOutcome::Shape(e.to_string()))
}

fn is_false(b: &bool) -> bool {
    !*b
}

// ---- deployment -----------------------------------------------------------------------------

/// A unit and the hex it was placed in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placed {
    pub unit: String,
    pub hex: Hex,
}

/// `deployed`: where a side's units stand (from rules version 3 the first side's placements are
/// revealed with the second's, `revealed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deployed {
    pub side: Side,
    pub placements: Vec<Placed>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub revealed: bool,
    /// On the campaign's first outcome: the scenario's note that its map is a stand-in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stand_in_map: Option<String>,
}

/// `deployment_sealed` (rules version 3): that a side deployed, not where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeploymentSealed {
    pub side: Side,
    pub units: usize,
    pub sealed_until: Side,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stand_in_map: Option<String>,
}

// ---- turns and reinforcements ---------------------------------------------------------------

/// `turn_begins`: a side's player turn, with the Union's automatic point and the turn's
/// deadline where the campaign has deadlines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnBegins {
    pub turn: u32,
    pub side: Side,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points_gained: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points_stored: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<DateTime<Utc>>,
}

/// `reinforcement_roll`: the Rebel's millisecond roll.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReinforcementRolled {
    pub ms: u32,
    pub remainder: u32,
    pub cities: u32,
    pub cities_held: Vec<String>,
    pub gains: bool,
    pub points_stored: u32,
}

/// Factors bought for a unit on the map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactorsBought {
    pub unit: String,
    pub factors: u32,
    pub cost: u32,
    pub rail_hex: Hex,
}

/// A new unit bought.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitBought {
    pub unit: String,
    pub name: String,
    pub arm: Arm,
    pub hex: Hex,
    pub factors: u32,
    pub cost: u32,
    pub rail_hex: Hex,
}

/// `reinforced`: what a side spent its points on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reinforced {
    pub side: Side,
    pub cost: u32,
    pub points_before: u32,
    pub points_left: u32,
    pub factors: Vec<FactorsBought>,
    pub new_units: Vec<UnitBought>,
}

/// `moved`: one unit's move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moved {
    pub unit: String,
    pub from: Hex,
    pub path: Vec<Hex>,
    pub cost: u32,
    pub allowance: u32,
    /// The enemy hex the move ended next to (`null` when none).
    pub halted_next_to: Option<Hex>,
    pub must_fight: bool,
}

/// `turn_ended`: a side's player turn over, and the units it fortified by not moving.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnEnded {
    pub turn: u32,
    pub side: Side,
    pub newly_fortified: Vec<String>,
}

// ---- battles --------------------------------------------------------------------------------

/// `attack_declared`: an attack on a hex with defending cavalry, which may retreat first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttackDeclared {
    pub battle: u32,
    pub attackers: Vec<String>,
    pub target: Hex,
    pub cavalry: Vec<String>,
}

/// What a unit's retreat cost it: half its factors when it ends next to the enemy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetreatLoss {
    pub unit: String,
    pub hex: Hex,
    pub next_to_enemy: Option<Hex>,
    pub factors_before: u32,
    pub factors_lost: u32,
    pub factors_after: u32,
    pub eliminated: bool,
}

/// `cavalry_option`: the defending cavalry stand, or retreat 1 hex before the battle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CavalryOption {
    pub battle: u32,
    pub retreat: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hex: Option<Hex>,
    pub cavalry: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub losses: Option<Vec<RetreatLoss>>,
}

/// `attack_void`: the cavalry left the hex empty, so there is no battle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttackVoid {
    pub battle: u32,
    pub target: Hex,
}

/// `battle`: a battle fought, with every number of the combat procedure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fought {
    pub battle: u32,
    /// The post whose stamp fixed the result number.
    pub post: u64,
    pub target: Hex,
    pub attacker_side: Side,
    /// Each unit and its factors.
    pub attackers: Vec<(String, u32)>,
    pub defenders: Vec<(String, u32)>,
    pub winner_side: Side,
    pub loser_side: Side,
    pub numbers: Battle,
    /// In a sealed-delay campaign: the delay's working.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_delay: Option<SealedDelay>,
}

/// `casualties`: a side's casualties, unit by unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Casualties {
    pub battle: u32,
    pub side: Side,
    pub casualties: u32,
    pub units: Vec<CasualtyShare>,
}

/// `eliminated`: a unit of the losing side gone without a retreat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Eliminated {
    pub battle: u32,
    pub unit: String,
    pub hex: Hex,
    pub reason: String,
}

/// A retreating unit's path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetreatMove {
    pub unit: String,
    pub from: Hex,
    pub path: Vec<Hex>,
}

/// The hexes a retreat left empty: from rules version 3 a list of the loser's own hexes; before,
/// the battle's target (which is the winner's hex when the attacker loses).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Vacated {
    Hexes(Vec<Hex>),
    Target(Hex),
}

/// `retreat`: the losing side's retreat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retreat {
    pub battle: u32,
    pub side: Side,
    pub moves: Vec<RetreatMove>,
    pub losses: Vec<RetreatLoss>,
    pub eliminated_without_retreat: Vec<String>,
    /// Rules version 3: the hexes the retreating units stood in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<Vec<Hex>>,
    pub vacated: Vacated,
    pub advance: String,
}

// ---- the campaign clock ---------------------------------------------------------------------

/// The wait a deadline ended, and the campaign's deadline setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissedWait {
    pub side: Side,
    pub stage: String,
    /// The post kind the wait was for.
    pub kind: String,
    pub since: DateTime<Utc>,
    pub due: DateTime<Utc>,
    /// `end_turn` or `moderator`.
    pub policy: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_deadline_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_deadline_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_deadline_min_ms: Option<i64>,
}

/// `deadline`: a wait ran out and its default was applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlinePassed {
    #[serde(flatten)]
    pub wait: MissedWait,
    /// What the default did, in words.
    pub applied: String,
}

/// `deadline_passed`: a wait ran out under `missed_turn: "moderator"`; nothing was decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlineLeftToModerator {
    #[serde(flatten)]
    pub wait: MissedWait,
}

/// `deadline_near`: a reminder before a deadline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlineNear {
    pub side: Side,
    pub stage: String,
    pub since: DateTime<Utc>,
    pub due: DateTime<Utc>,
    pub lead_ms: i64,
}

/// `attack_cancelled`: the attacker did not fix the result number by the deadline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttackCancelled {
    pub battle: u32,
    pub side: Side,
}

/// `paused`: the moderator stopped every clock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paused {
    pub reason: String,
}

/// `resumed`: the clocks run again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resumed {
    pub reason: Option<String>,
}

/// A wait an extension moved: its new deadline, or the time it has left while stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtendedWait {
    pub side: Side,
    pub stage: String,
    pub due: Option<DateTime<Utc>>,
    pub remaining_ms: Option<i64>,
}

/// `extended`: the moderator gave more time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extended {
    /// As the moderator gave it (ISO 8601, `PT24H`).
    pub by: String,
    /// The side given more time; `null`: both.
    pub side: Option<Side>,
    pub reason: String,
    pub waits: Vec<ExtendedWait>,
}

/// `player_replaced`: a side's new player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerReplaced {
    pub side: Side,
    pub name: String,
    pub replaced_name: String,
    /// The new player's id.
    pub player: String,
    /// The replaced player's id.
    pub replaced: String,
}
