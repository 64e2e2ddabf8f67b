//! The lines of a campaign's export (`GET /v1/campaigns/{id}/export`, JSON Lines), read back by
//! `adjutant verify`.
//!
//! One JSON object a line, each with a `type`:
//! 1. `export` — the format, when it was made, and the server's public keys;
//! 2. `campaign` — the creation record, how the chain starts and its genesis hash;
//! 3. for each post in order: `post` (its fields as hashed, the body as the exact text hashed,
//!    and its receipt), then its `outcome`s (the data as the exact text stored), then its
//!    `snapshot` when it changed the state. A sealed choice whose topic is not revealed yet has
//!    `body: null` and `sealed: true`: its hash and receipt are there, its content is not;
//! 4. `end` — how many posts and the head's hash, so a cut-off file is told from a whole one.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::signing::PublicKey;

/// The format's name, in the first line.
pub const FORMAT: &str = "adjutant-export-v1";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    Export(ExportHeader),
    Campaign(CampaignRecord),
    Post(PostRecord),
    Outcome(OutcomeRecord),
    Snapshot(SnapshotRecord),
    End(EndRecord),
    /// The server could not finish the export (the file is incomplete).
    Error(ErrorRecord),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExportHeader {
    pub format: String,
    pub exported_at: String,
    /// The keys the server lists now (`GET /v1/keys`). A verifier pins the key it trusts with
    /// `--key`; these are what the file itself claims.
    pub keys: Vec<PublicKey>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CampaignRecord {
    pub id: Uuid,
    pub name: String,
    pub moderator_id: Uuid,
    pub mode: String,
    pub scenario: Option<String>,
    pub scenario_text: Option<String>,
    pub ruleset: Option<String>,
    /// The settings as stored, the exact text.
    pub settings: String,
    pub created_at: String,
    /// `creation_record` or `legacy`.
    pub chain_genesis: String,
    /// The first post's `prev_hash`, as the server computes it.
    pub genesis_hash: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PostRecord {
    pub seq: i64,
    pub stamp: String,
    pub author_id: Uuid,
    pub side: Option<String>,
    pub kind: String,
    /// The exact text hashed; `null` for a sealed choice not revealed yet.
    pub body: Option<String>,
    #[serde(default)]
    pub sealed: bool,
    pub prev_hash: String,
    pub hash: String,
    pub receipt: Option<ReceiptRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReceiptRecord {
    pub key_id: String,
    pub signature: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OutcomeRecord {
    pub id: Uuid,
    pub position: i64,
    pub seq: i64,
    pub kind: String,
    /// The exact text stored.
    pub data: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SnapshotRecord {
    pub seq: i64,
    /// The state after the post, the exact text stored.
    pub state: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndRecord {
    pub posts: i64,
    pub head_hash: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorRecord {
    pub detail: String,
}
