//! Hexes of the campaign map.
//!
//! Coordinates are the classic wargame "CCRR" numbering: a hex is written as two-digit column
//! then two-digit row, both counted from 1 at the top left (`0206` is column 2, row 6). Hexes
//! are flat-topped and stand in vertical columns; every even column sits half a hex lower than
//! the odd columns beside it (the "even-q" offset layout, counting from 1). So hex (c, r) in an
//! odd column touches rows r−1 and r of the columns either side, and in an even column rows r
//! and r+1.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A hex, by column and row (both from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hex {
    pub col: u8,
    pub row: u8,
}

impl Hex {
    pub const fn new(col: u8, row: u8) -> Hex {
        Hex { col, row }
    }

    /// The six hexes touching this one (some may lie off the map).
    pub fn neighbours(self) -> Vec<Hex> {
        let (c, r) = (i32::from(self.col), i32::from(self.row));
        let side_rows = if c % 2 == 1 { [r - 1, r] } else { [r, r + 1] };
        let mut out = vec![];
        let mut push = |c: i32, r: i32| {
            if (1..=99).contains(&c) && (1..=99).contains(&r) {
                out.push(Hex::new(c as u8, r as u8));
            }
        };
        push(c, r - 1);
        push(c, r + 1);
        for dc in [-1, 1] {
            for sr in side_rows {
                push(c + dc, sr);
            }
        }
        out
    }

    pub fn is_adjacent(self, other: Hex) -> bool {
        self.neighbours().contains(&other)
    }
}

impl fmt::Display for Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}{:02}", self.col, self.row)
    }
}

impl FromStr for Hex {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("`{s}` is not a hex: write column and row as four digits, like 0206");
        if s.len() != 4 || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let col: u8 = s[..2].parse().map_err(|_| bad())?;
        let row: u8 = s[2..].parse().map_err(|_| bad())?;
        if col == 0 || row == 0 {
            return Err(bad());
        }
        Ok(Hex::new(col, row))
    }
}

impl Serialize for Hex {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Hex {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for Hex {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Hex".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^[0-9]{4}$",
            "description": "A hex as column and row, two digits each (CCRR), e.g. \"0206\"."
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> Hex {
        s.parse().unwrap()
    }

    #[test]
    fn odd_and_even_columns_touch_different_rows() {
        let mut odd = h("0505").neighbours();
        odd.sort();
        assert_eq!(odd, vec![h("0404"), h("0405"), h("0504"), h("0506"), h("0604"), h("0605")]);
        let mut even = h("0604").neighbours();
        even.sort();
        assert_eq!(even, vec![h("0504"), h("0505"), h("0603"), h("0605"), h("0704"), h("0705")]);
        // Adjacency is symmetric.
        for c in 1..=10u8 {
            for r in 1..=10u8 {
                for n in Hex::new(c, r).neighbours() {
                    assert!(n.is_adjacent(Hex::new(c, r)), "{n} / {c} {r}");
                }
            }
        }
    }

    #[test]
    fn hexes_read_and_write_as_ccrr() {
        assert_eq!(h("0206"), Hex::new(2, 6));
        assert_eq!(Hex::new(12, 4).to_string(), "1204");
        for bad in ["206", "02061", "ab06", "0006", "0200", ""] {
            assert!(bad.parse::<Hex>().is_err(), "{bad}");
        }
    }
}
