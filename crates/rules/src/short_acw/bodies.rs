//! The bodies of a managed campaign's posts, as players send them, and their documentation.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::hex::Hex;
use super::scenario::Arm;
use crate::Refusal;

/// The most factors one `reinforce` post buys for a unit (or gives a new unit): far beyond what
/// a side can afford, and it keeps every sum well inside the integers.
pub const MAX_PURCHASE: u32 = 100;

/// A post kind, for the API documentation.
#[derive(Debug, Clone, Serialize)]
pub struct PostKindSpec {
    pub kind: &'static str,
    pub summary: &'static str,
    pub body_schema: Value,
    pub example: Value,
}

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

pub(crate) fn spec<T: JsonSchema>(kind: &'static str, summary: &'static str, example: Value) -> PostKindSpec {
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

pub(crate) fn parse_body<T: DeserializeOwned>(body: &Value) -> Result<T, Refusal> {
    let body = if body.is_null() { &json!({}) } else { body };
    serde_path_to_error::deserialize(body).map_err(|err| {
        let path = err.path().to_string();
        let field = if path == "." { "body".to_owned() } else { format!("body.{path}") };
        Refusal::new(field, "post.body", err.into_inner().to_string())
    })
}
