//! What several resources send: a post's stamp numbers, its outcomes and receipt, the campaign
//! clock, and the audits' reports. A type one resource alone sends or receives lives beside its
//! handlers in `routes/`.

use adjutant_forum::Witness;
use adjutant_render::{forum_text, Stored};
use adjutant_rules::result_time::SealedDelay;
use adjutant_rules::{ReinforcementRoll, ResultNumber};
use adjutant_store::{Outcome, Post};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::campaign::LoadedCampaign;

/// Numbers that come from the post's stamp alone.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StampNumbers {
    /// The time of day on the campaign's clock, as counted (H:MM:SS).
    pub time_of_day: String,
    pub result_number: ResultNumberView,
    /// The stamp's milliseconds (0–999) and their remainder mod 6, for reinforcement rolls.
    pub milliseconds: u32,
    pub milliseconds_mod_6: u32,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ResultNumberView {
    /// N = H·10000 + MM·100 + SS.
    #[schema(example = 95145)]
    pub n: u32,
    /// √N to 12 decimal places, truncated.
    #[schema(example = "308.455831522115")]
    pub sqrt: String,
    /// The position of the first decimal taken (9 or 8).
    #[schema(example = 9)]
    pub first_digit: u32,
    /// The two decimals taken: the result number, 0–99.
    #[schema(example = 21)]
    pub result: u32,
    /// A `bc` command that shows √N.
    pub bc: String,
}

impl From<&ResultNumber> for ResultNumberView {
    fn from(r: &ResultNumber) -> Self {
        Self { n: r.n, sqrt: r.sqrt.clone(), first_digit: r.first_digit, result: r.result, bc: r.bc_command() }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OutcomeView {
    pub id: Uuid,
    pub campaign_id: Uuid,
    /// The feed cursor: 1, 2, … across the campaign.
    pub position: i64,
    /// The post it came from.
    pub seq: i64,
    pub kind: String,
    /// One line: what happened.
    pub headline: String,
    /// Every number the rules used.
    #[schema(value_type = Object)]
    pub data: Box<RawValue>,
    /// Ready to post: what happened, the numbers, a line to check them, the witness line
    /// `adjutant:post:<seq> hash:<hash> key:<key id> sig:<signature>` (the post's chain hash and
    /// the server's receipt signature), and the marker `adjutant:outcome:<id>`.
    pub text: ForumText,
    /// The bot's feed only, on an outcome that begins a side's player turn (`turn_begins`) or
    /// says its deadline is near (`deadline_near`): the player to tell,
    /// by the forum handle and Discord user id the moderator recorded for them. The bot mentions
    /// exactly this player; text players wrote never becomes a mention.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub mention: Option<Mention>,
}

/// Whom a bot mentions with an outcome.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Mention {
    #[schema(example = "confederate")]
    pub side: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "stonewall", nullable = false)]
    pub forum_handle: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "80351110224678912", nullable = false)]
    pub discord_user_id: Option<String>,
}

// An outcome's forum text as the API serves it (`adjutant_render::forum_text` writes it). A
// plain comment: a doc comment would become the schema's description in the OpenAPI document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ForumText {
    pub bbcode: String,
    pub markdown: String,
}

impl From<adjutant_render::ForumText> for ForumText {
    fn from(text: adjutant_render::ForumText) -> Self {
        Self { bbcode: text.bbcode, markdown: text.markdown }
    }
}

/// The post an outcome came from, as the outcome's forum text quotes it.
pub fn post_witness(post: &Post) -> Witness {
    Witness {
        seq: post.seq,
        hash: post.hash.clone(),
        key_id: post.receipt.as_ref().map(|r| r.key_id.clone()),
        signature: post.receipt.as_ref().map(|r| r.signature.clone()),
    }
}

/// An outcome's stored text, `{"data": …, "headline": …}`, read into its two parts: what a page
/// or a report that does not show the forum text needs ([`OutcomeView`] adds it).
pub struct StoredOutcome {
    pub headline: String,
    /// The data as its stored JSON text, which an answer carries as it is (the store keeps it as
    /// serde_json writes a value: compact, its keys sorted), rather than read and written again.
    pub data: Box<RawValue>,
}

impl StoredOutcome {
    pub fn of(o: &Outcome) -> Self {
        #[derive(serde::Deserialize, Default)]
        struct Parts<'a> {
            #[serde(default, borrow)]
            data: Option<&'a RawValue>,
            #[serde(default, borrow)]
            headline: Option<&'a RawValue>,
        }
        // Only an object has the two fields (serde would read an array's items into them).
        let object = o.data.trim_start().starts_with('{');
        let parts: Parts = if object { serde_json::from_str(&o.data).unwrap_or_default() } else { Parts::default() };
        // A headline that is not a string is none; a missing or `null` data is `null`.
        let headline = parts.headline.and_then(|h| serde_json::from_str::<String>(h.get()).ok()).unwrap_or_default();
        Self { headline, data: parts.data.map_or_else(null, RawValue::to_owned) }
    }

    /// The data as the kind's type (`None` for Adjutant's own records, which the rules do not
    /// write, or data of another shape).
    pub fn typed(&self, kind: &str) -> Option<adjutant_rules::outcome::OutcomeData> {
        adjutant_rules::outcome::OutcomeData::read_json(kind, self.data.get()).ok()
    }

    /// The data, read.
    pub fn data_value(&self) -> Value {
        serde_json::from_str(self.data.get()).unwrap_or(Value::Null)
    }
}

impl OutcomeView {
    /// `witness`: the post the outcome came from, quoted in the forum text.
    pub fn of(o: &Outcome, witness: Option<&Witness>) -> Self {
        let StoredOutcome { headline, data } = StoredOutcome::of(o);
        Self {
            id: o.id,
            campaign_id: o.campaign_id,
            position: o.position,
            seq: o.seq,
            kind: o.kind.clone(),
            text: forum_text(o.id, &o.kind, &headline, Stored::Json(data.get()), witness).into(),
            headline,
            data,
            mention: None,
        }
    }

    /// The outcome's data as its kind's type ([`StoredOutcome::typed`]).
    pub fn typed(&self) -> Option<adjutant_rules::outcome::OutcomeData> {
        adjutant_rules::outcome::OutcomeData::read_json(&self.kind, self.data.get()).ok()
    }
}

/// JSON's `null`, as a raw value.
pub fn null() -> Box<RawValue> {
    RawValue::NULL.to_owned()
}

/// An Ed25519 signature by the server over the post's campaign, seq, stamp and hash.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ReceiptView {
    /// The key that signed, as `GET /v1/keys` lists it.
    #[schema(example = "ed25519:3f1c0a9e5b7d2468")]
    pub key_id: String,
    /// The Ed25519 signature, 128 hex digits.
    #[schema(pattern = "^[0-9a-f]{128}$")]
    pub signature: String,
    /// The exact text signed (UTF-8, no newline at the end):
    /// `adjutant-receipt-v1\n{campaign_id}\n{seq}\n{stamp}\n{hash}`.
    pub signed_text: String,
}

impl ReceiptView {
    pub fn of(post: &Post) -> Option<Self> {
        post.receipt.as_ref().map(|r| Self {
            key_id: r.key_id.clone(),
            signature: r.signature.clone(),
            signed_text: crate::signing::receipt_message(post),
        })
    }
}

pub fn stamp_numbers(campaign: &LoadedCampaign, stamp: chrono::DateTime<chrono::Utc>) -> StampNumbers {
    let t = campaign.clock.time_of_day(stamp);
    let result = campaign.clock.result_number(stamp);
    let ms = stamp.timestamp_subsec_millis();
    StampNumbers {
        time_of_day: format!("{}:{:02}:{:02}", t.hour_on(campaign.clock.format), t.minute, t.second),
        result_number: ResultNumberView::from(&result),
        milliseconds: ms,
        milliseconds_mod_6: ReinforcementRoll::roll(ms, 0).map(|r| r.remainder).unwrap_or(ms % 6),
    }
}

/// One thing the whole-campaign audit found wrong.
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema)]
pub struct Difference {
    pub seq: i64,
    /// `chain`, `receipt`, `outcomes`, `snapshot` or `rules`.
    pub check: String,
    pub detail: String,
}

/// The whole campaign replayed through the rules.
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema)]
pub struct CampaignAudit {
    pub campaign_id: Uuid,
    /// Posts replayed and chain links verified.
    pub posts: i64,
    /// Stored outcomes compared with the rules' outcomes.
    pub outcomes: i64,
    /// Stored state snapshots compared with the replayed state.
    pub snapshots: i64,
    /// Result numbers recomputed (one per battle) and reinforcement rolls recomputed.
    pub result_numbers: i64,
    pub reinforcement_rolls: i64,
    /// Dice rerolled from resolver posts' streams.
    pub dice: i64,
    /// Posts voided by rollbacks (still replayed and checked as they were when written).
    pub void_posts: i64,
    /// The hash of the last post: quote it to pin the log as it is now.
    pub head_hash: Option<String>,
    pub differences: Vec<Difference>,
    pub ok: bool,
    /// Posts replayed by this request. A repeat audit replays only the posts added since this
    /// server last verified the campaign, and trusts the prefix it verified then (within the
    /// server's life: a restart, or `?fresh=true`, replays everything).
    #[serde(default)]
    pub replayed_now: i64,
    pub elapsed_ms: u64,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PostAudit {
    pub campaign_id: Uuid,
    pub seq: i64,
    pub stamp: String,
    /// The campaign clock the stamp was read on.
    pub time_zone: String,
    pub clock: String,
    /// Every number from the stamp, recomputed now.
    pub numbers: StampNumbers,
    /// How to redo the result number by hand.
    pub steps: Vec<String>,
    pub dice_stream: DiceStreamAudit,
    pub chain: ChainAudit,
    /// For a battle of a `sealed_delay` campaign: the delay that moved its result time, from the
    /// chain secret its outcome revealed, and the result number of that time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_delay: Option<SealedDelayAudit>,
    /// Whether the stored outcomes equal what the rules give now.
    pub outcomes_match: bool,
    /// Every difference found; empty when the post checks out.
    pub problems: Vec<String>,
    /// True when there are no problems.
    pub ok: bool,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SealedDelayAudit {
    /// Every number of the delay: the draw, the revealed secret `s_k` and `s_{k-1}`, the post
    /// hash, the digest, its first 8 bytes, the delay, the stamp and the result time.
    #[schema(value_type = Object)]
    pub working: SealedDelay,
    /// The result time on the campaign's clock and its result number (the seed's rule).
    pub result_time_numbers: StampNumbers,
    /// Shell commands that redo each step (`sha256sum`, `bc`).
    pub commands: Vec<String>,
    /// True when the revealed secret leads back to the published `s_0`.
    pub links_to_published: bool,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DiceStreamAudit {
    /// The text whose SHA-256 blocks give the post's dice.
    pub text: String,
    /// SHA-256(text + "/0") in hex: the first 32 bytes of the stream.
    pub block_0: String,
    /// A shell command that prints block 0.
    pub command: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ChainAudit {
    /// Posts 1 to this one were checked.
    pub checked_through: i64,
    pub stored_hash: String,
    pub recomputed_hash: String,
    /// True when every link up to this post holds.
    pub ok: bool,
    /// Posts read and checked by this request: the chain is checked from the prefix this server
    /// verified before (trusted within its life; `?fresh=true` walks from post 1), and when that
    /// prefix reaches this post, only the post and the one before it are checked again.
    #[serde(default)]
    pub checked_now: i64,
}

/// The campaign clock (campaigns with deadlines, and campaigns that have been paused): who the
/// game waits for, since when, and until when.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ClockView {
    /// `waiting` (a deadline runs), `overdue` (a deadline passed under `missed_turn:
    /// "moderator"` and the moderator has not carried the game on), `paused`, `finished`, or
    /// `stopped` (nothing runs: every wait's clock is stopped).
    #[schema(pattern = "^(waiting|overdue|paused|finished|stopped)$")]
    pub status: String,
    /// One line for people: who the game waits for, since when, and the deadline in the
    /// campaign's time zone.
    pub summary: String,
    /// The server's clock now (RFC 3339, milliseconds), for a countdown that does not trust the
    /// reader's own clock.
    pub now: String,
    pub waits: Vec<WaitView>,
    /// Set while the campaign is paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<PausedView>,
}

/// One thing the game waits for.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WaitView {
    pub side: String,
    /// `deployment`, `turn 3`, `battle 2: casualty_order`.
    pub stage: String,
    /// The post kind that ends the wait.
    pub kind: String,
    /// When the wait began (RFC 3339).
    pub since: String,
    /// The deadline (RFC 3339), while the wait's clock runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<String>,
    /// The deadline in the campaign's time zone, as people read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_local: Option<String>,
    /// Milliseconds left, while the wait's clock is stopped (the campaign paused, or the other
    /// side answering a battle of this side's turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_ms: Option<i64>,
    /// The deadline passed and the moderator decides.
    pub overdue: bool,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PausedView {
    pub since: String,
    pub reason: String,
}

impl ClockView {
    /// The clock of `game`, if it has one.
    pub fn of(
        campaign: &LoadedCampaign,
        game: &adjutant_rules::short_acw::GameState,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Option<Self> {
        use adjutant_rules::short_acw::deadline::in_words;
        let clock = game.clock.as_ref()?;
        let zone = campaign.clock.zone;
        let time = |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let waits: Vec<WaitView> = clock
            .waits
            .iter()
            .map(|w| WaitView {
                side: w.side.key().to_owned(),
                stage: w.stage.clone(),
                kind: w.kind.clone(),
                since: time(w.since),
                due: w.due.map(time),
                due_local: w.due.map(|d| in_words(d, zone)),
                remaining_ms: w.remaining_ms,
                overdue: w.overdue,
            })
            .collect();
        let waited: Vec<String> = clock
            .waits
            .iter()
            .filter(|w| w.due.is_some() || w.overdue || clock.paused.is_some())
            .map(|w| format!("the {} ({}) since {}", w.side, w.stage, in_words(w.since, zone)))
            .collect();
        let (status, summary) = if game.result.is_some() {
            ("finished", "The game is over.".to_owned())
        } else if let Some(p) = &clock.paused {
            ("paused", format!("Paused by the moderator since {}: {}", in_words(p.since, zone), p.reason))
        } else if clock.overdue() {
            (
                "overdue",
                format!(
                    "Overdue: waiting for {}; the deadline passed and the moderator decides",
                    adjutant_rules::words::listed(&waited, "and")
                ),
            )
        } else if let Some(next) = clock.next_due() {
            (
                "waiting",
                format!(
                    "Waiting for {}; the next deadline is {}",
                    adjutant_rules::words::listed(&waited, "and"),
                    next.due.map(|d| in_words(d, zone)).unwrap_or_default()
                ),
            )
        } else {
            ("stopped", "No deadline runs now.".to_owned())
        };
        let paused = clock.paused.as_ref().map(|p| PausedView { since: time(p.since), reason: p.reason.clone() });
        Some(Self { status: status.to_owned(), summary, now: time(now), waits, paused })
    }
}
