//! The two sides of an American Civil War campaign.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A side. Posts may write the Confederacy as `"rebel"`, as the seed does ("Rebel Forces").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Union,
    #[serde(alias = "rebel")]
    Confederate,
}

impl Side {
    /// The enemy.
    pub fn other(self) -> Side {
        match self {
            Side::Union => Side::Confederate,
            Side::Confederate => Side::Union,
        }
    }

    /// The side's name as the seed writes it in headlines.
    pub fn name(self) -> &'static str {
        match self {
            Side::Union => "Union",
            Side::Confederate => "Rebel",
        }
    }

    /// The name used in JSON (`union`, `confederate`).
    pub fn key(self) -> &'static str {
        match self {
            Side::Union => "union",
            Side::Confederate => "confederate",
        }
    }
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebel_is_accepted_for_confederate() {
        let side: Side = serde_json::from_str("\"rebel\"").unwrap();
        assert_eq!(side, Side::Confederate);
        assert_eq!(serde_json::to_string(&side).unwrap(), "\"confederate\"");
        assert_eq!(Side::Union.other(), Side::Confederate);
        assert_eq!(Side::Confederate.other(), Side::Union);
    }
}
