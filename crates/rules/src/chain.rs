//! The hash chain of a campaign's log.
//!
//! Each post's hash is SHA-256 (hex) over its fields and the previous post's hash, one per
//! line:
//! ```text
//! {prev_hash}\n{campaign_id}\n{seq}\n{stamp}\n{author_id}\n{side or -}\n{kind}\n{body}
//! ```
//! where the stamp is RFC 3339 UTC with milliseconds and the body is canonical JSON (keys
//! sorted, no white space). The first post's `prev_hash` is 64 zeros. Changing any stored field
//! of any post breaks every hash after it, which the audit reports.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use crate::dice::stamp_text;

/// The `prev_hash` of a campaign's first post.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The fields of a post that its hash covers.
#[derive(Debug, Clone, Copy)]
pub struct Link<'a> {
    pub prev_hash: &'a str,
    pub campaign_id: &'a str,
    pub seq: i64,
    pub stamp: DateTime<Utc>,
    pub author_id: &'a str,
    pub side: Option<&'a str>,
    pub kind: &'a str,
    pub body: &'a str,
}

impl Link<'_> {
    /// The exact text that is hashed.
    pub fn text(&self) -> String {
        format!(
            "{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}",
            self.prev_hash,
            self.campaign_id,
            self.seq,
            stamp_text(self.stamp),
            self.author_id,
            self.side.unwrap_or("-"),
            self.kind,
            self.body
        )
    }

    pub fn hash(&self) -> String {
        hex::encode(Sha256::digest(self.text().as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn link(body: &str) -> Link<'_> {
        Link {
            prev_hash: GENESIS,
            campaign_id: "c0ffee00-0000-4000-8000-000000000001",
            seq: 1,
            stamp: Utc.with_ymd_and_hms(2026, 11, 21, 9, 51, 45).unwrap(),
            author_id: "a0000000-0000-4000-8000-000000000002",
            side: Some("union"),
            kind: "note",
            body,
        }
    }

    #[test]
    fn the_hash_is_sha256_of_the_documented_text() {
        let l = link("{}");
        assert_eq!(
            l.text(),
            format!("{GENESIS}\nc0ffee00-0000-4000-8000-000000000001\n1\n2026-11-21T09:51:45.000Z\na0000000-0000-4000-8000-000000000002\nunion\nnote\n{{}}")
        );
        assert_eq!(l.hash(), hex::encode(Sha256::digest(l.text().as_bytes())));
        assert_eq!(l.hash().len(), 64);
    }

    #[test]
    fn any_change_changes_the_hash() {
        assert_ne!(link("{}").hash(), link("{\"a\":1}").hash());
        let mut other = link("{}");
        other.seq = 2;
        assert_ne!(link("{}").hash(), other.hash());
    }
}
