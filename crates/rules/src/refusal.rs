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
}
