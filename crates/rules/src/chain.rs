//! The hash chain of a campaign's log.
//!
//! Each post's hash is SHA-256 (hex) over its fields and the previous post's hash, one per
//! line:
//! ```text
//! {prev_hash}\n{campaign_id}\n{seq}\n{stamp}\n{author_id}\n{side or -}\n{kind}\n{body}
//! ```
//! where the stamp is RFC 3339 UTC with milliseconds and the body is canonical JSON (keys
//! sorted, no white space). The first post's `prev_hash` is the campaign's genesis: the hash of
//! its creation record ([`CreationRecord::genesis`]), so changing a setting or the scenario
//! breaks the chain; campaigns created before the record was hashed start from 64 zeros
//! ([`GENESIS`], recorded as `legacy`). Changing any stored field of any post breaks every hash
//! after it, which the audit reports.
//!
//! A chain consistent with itself proves nothing against someone who rewrites the database and
//! recomputes every hash after the change; the server's signed receipts
//! ([`receipt_message`]) and the hashes quoted in the forum thread do.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use crate::dice::stamp_text;

/// The `prev_hash` of a campaign's first post.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// How a campaign's chain starts.
pub mod genesis_rule {
    /// The first post's `prev_hash` is [`super::GENESIS`] (campaigns created before the
    /// creation record was hashed).
    pub const LEGACY: &str = "legacy";
    /// The first post's `prev_hash` is [`super::CreationRecord::genesis`].
    pub const CREATION_RECORD: &str = "creation_record";
}

/// What a campaign was created with: the fields its chain's genesis binds.
#[derive(Debug, Clone, Copy)]
pub struct CreationRecord<'a> {
    pub campaign_id: &'a str,
    pub name: &'a str,
    pub moderator_id: &'a str,
    pub mode: &'a str,
    pub scenario: Option<&'a str>,
    pub scenario_text: Option<&'a str>,
    pub ruleset: Option<&'a str>,
    /// The settings as stored (a JSON object): every field is bound, whatever fields there are.
    pub settings: &'a str,
    pub created_at: DateTime<Utc>,
}

impl CreationRecord<'_> {
    /// The exact text that is hashed: `adjutant-campaign-v1\n` and then one line of canonical
    /// JSON (keys sorted, no white space; absent fields are `null`; `settings` is the stored
    /// settings object re-written canonically, so every setting is bound):
    /// ```text
    /// adjutant-campaign-v1
    /// {"created_at":"…Z","id":"…","mode":"managed","moderator_id":"…","name":"…","ruleset":null,"scenario":"short-acw","scenario_text":"…","settings":{…}}
    /// ```
    /// Settings that are not JSON are bound as the string they are.
    pub fn text(&self) -> String {
        let settings = serde_json::from_str::<serde_json::Value>(self.settings)
            .unwrap_or_else(|_| serde_json::Value::String(self.settings.to_owned()));
        // serde_json's map keeps keys sorted, and `to_string` writes no white space.
        let record = serde_json::json!({
            "created_at": stamp_text(self.created_at),
            "id": self.campaign_id,
            "mode": self.mode,
            "moderator_id": self.moderator_id,
            "name": self.name,
            "ruleset": self.ruleset,
            "scenario": self.scenario,
            "scenario_text": self.scenario_text,
            "settings": settings,
        });
        format!("adjutant-campaign-v1\n{record}")
    }

    /// SHA-256 (hex) of [`Self::text`]: the first post's `prev_hash`.
    pub fn genesis(&self) -> String {
        hex::encode(Sha256::digest(self.text().as_bytes()))
    }
}

/// The bytes a post's receipt signs (Ed25519), four lines after a fixed first one:
/// ```text
/// adjutant-receipt-v1\n{campaign_id}\n{seq}\n{stamp}\n{hash}
/// ```
/// with the stamp as RFC 3339 UTC with milliseconds and the hash as 64 lower-case hex digits;
/// no newline at the end.
pub fn receipt_message(campaign_id: &str, seq: i64, stamp: DateTime<Utc>, hash: &str) -> String {
    format!("adjutant-receipt-v1\n{campaign_id}\n{seq}\n{}\n{hash}", stamp_text(stamp))
}

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

    fn record<'a>(settings: &'a str) -> CreationRecord<'a> {
        CreationRecord {
            campaign_id: "c0ffee00-0000-4000-8000-000000000001",
            name: "Gettysburg",
            moderator_id: "a0000000-0000-4000-8000-000000000002",
            mode: "resolver",
            scenario: None,
            scenario_text: None,
            ruleset: Some("ops-tables"),
            settings,
            created_at: Utc.with_ymd_and_hms(2026, 11, 21, 9, 0, 0).unwrap(),
        }
    }

    #[test]
    fn the_creation_record_is_canonical_and_binds_every_setting() {
        let r = record(r#"{"time_zone":"UTC", "clock":"24h"}"#);
        assert_eq!(
            r.text(),
            "adjutant-campaign-v1\n{\"created_at\":\"2026-11-21T09:00:00.000Z\",\"id\":\"c0ffee00-0000-4000-8000-000000000001\",\"mode\":\"resolver\",\"moderator_id\":\"a0000000-0000-4000-8000-000000000002\",\"name\":\"Gettysburg\",\"ruleset\":\"ops-tables\",\"scenario\":null,\"scenario_text\":null,\"settings\":{\"clock\":\"24h\",\"time_zone\":\"UTC\"}}"
        );
        // The same settings written another way bind the same; any new field changes it.
        assert_eq!(r.genesis(), record(r#"{"clock":"24h","time_zone":"UTC"}"#).genesis());
        assert_ne!(r.genesis(), record(r#"{"clock":"24h","time_zone":"UTC","result_time":"s0"}"#).genesis());
        assert_ne!(r.genesis(), record(r#"{"clock":"12h","time_zone":"UTC"}"#).genesis());
    }

    #[test]
    fn the_receipt_message_is_the_documented_text() {
        let stamp = Utc.with_ymd_and_hms(2026, 11, 21, 9, 51, 45).unwrap();
        assert_eq!(receipt_message("c", 7, stamp, "ab"), "adjutant-receipt-v1\nc\n7\n2026-11-21T09:51:45.000Z\nab");
    }

    #[test]
    fn any_change_changes_the_hash() {
        assert_ne!(link("{}").hash(), link("{\"a\":1}").hash());
        let mut other = link("{}");
        other.seq = 2;
        assert_ne!(link("{}").hash(), other.hash());
    }
}
