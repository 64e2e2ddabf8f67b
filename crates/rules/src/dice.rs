//! The dice stream: every die a resolver ruleset rolls comes from the post's public stamp.
//!
//! The stream's text is `{campaign_id}/{post_seq}/{stamp}`, the stamp in RFC 3339 UTC with
//! milliseconds (`2026-11-21T09:51:45.123Z`). Block i is SHA-256(text + "/" + i), i = 0, 1, …;
//! the stream is the blocks' bytes in order. A die of k faces (2 ≤ k ≤ 256) takes the next
//! byte b; if b ≥ 256 − (256 mod k) the byte is rejected and the next one taken (so every face
//! is exactly equally likely); otherwise the die shows b mod k + 1.
//!
//! A moderator redoes it with standard tools:
//! ```text
//! printf '%s' 'c0ffee00-0000-4000-8000-000000000001/7/2026-11-21T09:51:45.123Z/0' | sha256sum
//! ```
//! and reads the bytes of the hex digest two characters at a time.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The canonical stamp text: RFC 3339, UTC, milliseconds, `Z`.
pub fn stamp_text(stamp: DateTime<Utc>) -> String {
    stamp.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// One die rolled from the stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DieRoll {
    /// 0 for the first die of the post, 1 for the next, …
    pub index: u32,
    /// What the die was for, in the ruleset's words.
    pub purpose: String,
    /// Faces of the die (6 for a d6).
    pub faces: u32,
    /// The face shown, 1..=faces.
    pub value: u32,
    /// Position in the stream of the byte that gave the value (block·32 + offset).
    pub byte_index: u64,
    /// That byte.
    pub byte: u8,
    /// Bytes rejected before it (each ≥ 256 − (256 mod faces)).
    pub rejected: Vec<u8>,
}

/// The byte stream of one post.
#[derive(Debug, Clone)]
pub struct DiceStream {
    text: String,
    block: [u8; 32],
    block_number: u64,
    offset: usize,
    rolls: Vec<DieRoll>,
}

impl DiceStream {
    pub fn new(campaign_id: &str, post_seq: u64, stamp: DateTime<Utc>) -> Self {
        Self::from_text(format!("{campaign_id}/{post_seq}/{}", stamp_text(stamp)))
    }

    /// A stream over any canonical text (tests and the public calculator use this).
    pub fn from_text(text: String) -> Self {
        let block = Self::block_of(&text, 0);
        Self { text, block, block_number: 0, offset: 0, rolls: Vec::new() }
    }

    /// The canonical text the stream hashes.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// SHA-256(text + "/" + i).
    pub fn block_of(text: &str, i: u64) -> [u8; 32] {
        let mut hasher = Sha256::new();
        hasher.update(text.as_bytes());
        hasher.update(format!("/{i}").as_bytes());
        hasher.finalize().into()
    }

    fn next_byte(&mut self) -> (u64, u8) {
        if self.offset == 32 {
            self.block_number += 1;
            self.block = Self::block_of(&self.text, self.block_number);
            self.offset = 0;
        }
        let index = self.block_number * 32 + self.offset as u64;
        let byte = self.block[self.offset];
        self.offset += 1;
        (index, byte)
    }

    /// Rolls one die of `faces` faces (2 to 256) and records it.
    ///
    /// # Panics
    /// If `faces` is outside 2..=256: the rulesets only roll dice they define.
    pub fn roll(&mut self, faces: u32, purpose: impl Into<String>) -> u32 {
        assert!((2..=256).contains(&faces), "a die has 2 to 256 faces, not {faces}");
        let limit = 256 - (256 % faces);
        let mut rejected = Vec::new();
        loop {
            let (byte_index, byte) = self.next_byte();
            if u32::from(byte) >= limit {
                rejected.push(byte);
                continue;
            }
            let value = u32::from(byte) % faces + 1;
            self.rolls.push(DieRoll {
                index: self.rolls.len() as u32,
                purpose: purpose.into(),
                faces,
                value,
                byte_index,
                byte,
                rejected,
            });
            return value;
        }
    }

    /// Rolls `count` dice of `faces` faces.
    pub fn roll_many(&mut self, count: u32, faces: u32, purpose: &str) -> Vec<u32> {
        (0..count).map(|_| self.roll(faces, purpose)).collect()
    }

    /// Every die rolled so far, in order.
    pub fn rolls(&self) -> &[DieRoll] {
        &self.rolls
    }

    pub fn into_rolls(self) -> Vec<DieRoll> {
        self.rolls
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn example() -> DiceStream {
        let stamp = Utc.with_ymd_and_hms(2026, 11, 21, 9, 51, 45).unwrap() + chrono::Duration::milliseconds(123);
        DiceStream::new("c0ffee00-0000-4000-8000-000000000001", 7, stamp)
    }

    #[test]
    fn the_text_is_canonical() {
        assert_eq!(example().text(), "c0ffee00-0000-4000-8000-000000000001/7/2026-11-21T09:51:45.123Z");
    }

    #[test]
    fn the_documented_worked_example() {
        // printf '%s' 'c0ffee00-0000-4000-8000-000000000001/7/2026-11-21T09:51:45.123Z/0' | sha256sum
        let block = DiceStream::block_of(example().text(), 0);
        assert_eq!(hex::encode(block), WORKED_EXAMPLE_BLOCK_0);
        let mut stream = example();
        let dice: Vec<u32> = (0..4).map(|_| stream.roll(6, "example")).collect();
        let expected: Vec<u32> = block.iter().filter(|&&b| b < 252).take(4).map(|&b| u32::from(b) % 6 + 1).collect();
        assert_eq!(dice, expected);
    }

    const WORKED_EXAMPLE_BLOCK_0: &str = include_str!("../tests/data/worked_example_block0.txt");

    #[test]
    fn bytes_at_or_above_the_limit_are_rejected() {
        let mut stream = example();
        for _ in 0..2000 {
            stream.roll(10, "d10");
        }
        for roll in stream.rolls() {
            assert!(roll.byte < 250);
            assert!(roll.rejected.iter().all(|&b| b >= 250));
            assert_eq!(roll.value, u32::from(roll.byte) % 10 + 1);
        }
        assert!(stream.rolls().iter().any(|r| !r.rejected.is_empty()));
    }

    #[test]
    fn the_stream_crosses_blocks_in_order() {
        let mut stream = example();
        let text = stream.text().to_owned();
        let bytes: Vec<u8> = (0..3).flat_map(|i| DiceStream::block_of(&text, i)).collect();
        for _ in 0..80 {
            stream.roll(256, "byte");
        }
        for roll in stream.rolls() {
            assert_eq!(roll.byte, bytes[roll.byte_index as usize]);
            assert_eq!(roll.value, u32::from(roll.byte) + 1);
        }
        assert_eq!(stream.rolls()[79].byte_index, 79);
    }
}
