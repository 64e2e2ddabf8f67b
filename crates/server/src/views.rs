//! What the API sends and receives.

use adjutant_forum::Witness;
use adjutant_render::forum_text;
use adjutant_rules::dice::stamp_text;
use adjutant_rules::fairness::{PlayerFairness, PostTiming, ResultSpread};
use adjutant_rules::result_time::SealedDelay;
use adjutant_rules::{ReinforcementRoll, ResultNumber};
use adjutant_store::{Campaign, Outcome, Post};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::campaign::{CampaignSettings, LoadedCampaign, SIDES};
use crate::log::view::LogView;
use crate::signing::PublicKey;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewModerator {
    /// The moderator's name as players know it.
    #[schema(value_type = crate::free_text::Name, example = "Col. Hawkins")]
    pub name: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewPlayer {
    #[schema(value_type = crate::free_text::Name, example = "jeb_stuart_fan")]
    pub name: String,
    /// `union` or `confederate`; the seeds' other words are read as the side they name:
    /// `federal` and `yankee` as `union`, `rebel` as `confederate`.
    #[schema(example = "union")]
    #[schema(schema_with = side_schema)]
    pub side: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewBot {
    #[schema(value_type = crate::free_text::Name, example = "forum-bot")]
    pub name: String,
}

/// A token, shown once: keep it, Adjutant stores only its hash.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct IssuedToken {
    pub id: Uuid,
    /// `moderator`, `player` or `bot`.
    pub kind: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub campaign_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<String>,
    /// The bearer token. It is not shown again.
    pub token: String,
}

/// A new campaign. Its mode follows from what it names: a `scenario` (or neither) makes a managed
/// campaign, a `ruleset` a resolver campaign; `mode` may be given too, and must agree.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewCampaign {
    pub name: String,
    #[serde(default, deserialize_with = "present_string")]
    pub mode: Option<String>,
    #[serde(default, deserialize_with = "present_string")]
    pub scenario: Option<String>,
    #[serde(default, deserialize_with = "present_string")]
    pub ruleset: Option<String>,
    #[serde(default, deserialize_with = "crate::extract::optional_object")]
    pub settings: Option<CampaignSettings>,
}

/// A field that may be left out but, when given, is a string: `null` is refused, as the schema
/// says.
fn present_string<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    String::deserialize(deserializer).map(Some)
}

/// The schema says exactly what `create_campaign` accepts: one of the two modes, each with only
/// its own fields, the rulesets by name.
impl utoipa::PartialSchema for NewCampaign {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use serde_json::json;
        let rulesets: Vec<&str> = adjutant_rules::resolver::rulesets().iter().map(|r| r.name()).collect();
        let name = json!({"$ref": "#/components/schemas/Name"});
        // `null` reads as not given: the defaults.
        // A client never sends `result_chain`: the server draws it. Sealed delays are a managed
        // campaign's.
        let settings = json!({"anyOf": [{"$ref": "#/components/schemas/NewCampaignSettings"}, {"type": "null"}]});
        let resolver_settings =
            json!({"anyOf": [{"$ref": "#/components/schemas/NewResolverCampaignSettings"}, {"type": "null"}]});
        let schema = json!({
            "description": "A new campaign. Its mode follows from what it names: a `scenario` (or neither) makes a managed campaign, a `ruleset` a resolver campaign; `mode` may be given too, and must agree.",
            "oneOf": [
                {
                    "title": "Managed campaign",
                    "type": "object",
                    "required": ["name"],
                    "additionalProperties": false,
                    "properties": {
                        "name": name,
                        "mode": {"type": "string", "enum": ["managed"], "description": "`managed`: the server holds the whole game."},
                        "scenario": {"type": "string", "example": "short-acw",
                            "description": "A scenario file of the server's (`config/scenarios/<name>.toml`); `short-acw` when not given. The served description lists the server's scenarios as the enum."},
                        "settings": settings,
                    }
                },
                {
                    "title": "Resolver campaign",
                    "type": "object",
                    "required": ["name", "ruleset"],
                    "additionalProperties": false,
                    "properties": {
                        "name": name,
                        "mode": {"type": "string", "enum": ["resolver"], "description": "`resolver`: dice and tables only."},
                        "ruleset": {"type": "string", "enum": rulesets, "example": "acw-25mm"},
                        "settings": resolver_settings,
                    }
                }
            ],
            "example": {"name": "Shenandoah, spring 1862", "scenario": "short-acw"}
        });
        serde_json::from_value(schema).unwrap_or_else(|e| panic!("the NewCampaign schema is not a schema: {e}"))
    }
}

impl utoipa::ToSchema for NewCampaign {
    fn schemas(schemas: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
        use utoipa::PartialSchema;
        schemas.push(("Name".into(), crate::free_text::Name::schema()));
        schemas.push(("CampaignSettings".into(), CampaignSettings::schema()));
        schemas.push(("NewCampaignSettings".into(), new_campaign_settings_schema(false)));
        schemas.push(("NewResolverCampaignSettings".into(), new_campaign_settings_schema(true)));
        <CampaignSettings as utoipa::ToSchema>::schemas(schemas);
    }
}

/// The settings a client may send: the stored ones without the server's `result_chain`.
/// A resolver campaign's dice come from each post's own stamp: its `result_time` is `post`.
fn new_campaign_settings_schema(resolver: bool) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::PartialSchema;
    let mut schema = serde_json::to_value(CampaignSettings::schema()).unwrap_or_default();
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.remove("result_chain");
        if resolver {
            properties.insert(
                "result_time".into(),
                serde_json::json!({"type": "string", "enum": ["post"],
                    "description": "`post`: a resolver campaign's dice come from each post's own stamp (`sealed_delay` is for managed campaigns)."}),
            );
        }
    }
    schema["additionalProperties"] = Value::Bool(false);
    schema["description"] = Value::String(
        "How the campaign's clock reads a post's stamp, how it rounds, and when a battle's result time is. \
         The server draws a sealed-delay campaign's `result_chain` itself; a client that sends one is refused."
            .into(),
    );
    serde_json::from_value(schema).unwrap_or_else(|e| panic!("the NewCampaignSettings schema is not a schema: {e}"))
}

/// The side words a player token may name, for the schema.
fn side_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(crate::campaign::SIDE_NAMES.iter().map(|(name, _)| *name)))
        .examples([serde_json::json!("union")])
        .build()
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CampaignView {
    pub id: Uuid,
    pub name: String,
    pub mode: String,
    pub scenario: Option<String>,
    pub ruleset: Option<String>,
    pub moderator_id: Uuid,
    pub settings: CampaignSettings,
    pub sides: Vec<String>,
    pub created_at: String,
    /// How the log's hash chain starts: `creation_record` (the first post's `prev_hash` is the
    /// hash of the campaign's creation record: id, name, moderator, mode, scenario or ruleset
    /// and the scenario's text, every setting, created_at) or `legacy` (64 zeros, campaigns
    /// created before that).
    #[schema(pattern = "^(legacy|creation_record)$")]
    pub chain_genesis: String,
    /// The first post's `prev_hash`.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub genesis_hash: String,
    /// `GET /v1/campaigns/{id}` only: the campaign clock, as in `GET …/state`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub clock: Option<ClockView>,
}

impl CampaignView {
    pub fn of(loaded: &LoadedCampaign) -> Self {
        let c: &Campaign = &loaded.campaign;
        Self {
            id: c.id,
            name: c.name.clone(),
            mode: c.mode.clone(),
            scenario: c.scenario.clone(),
            ruleset: c.ruleset.clone(),
            moderator_id: c.moderator_id,
            settings: loaded.settings.clone(),
            sides: SIDES.iter().map(|s| (*s).to_owned()).collect(),
            created_at: stamp_text(c.created_at),
            chain_genesis: c.chain_genesis.clone(),
            genesis_hash: crate::campaign::genesis(c),
            clock: None,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CampaignList {
    pub campaigns: Vec<CampaignView>,
    /// Pass as `after` for the next page; absent on the last page.
    pub next_after: Option<Uuid>,
}

/// A post as a player sends it. The server sets the time stamp; there is no field for it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewPost {
    /// What the post is: an order of the campaign's rules (`move`, `attack`, `reinforcement`, …).
    #[schema(example = "attack", pattern = "^[a-z][a-z0-9_]{0,39}$")]
    pub kind: String,
    /// The side the post acts for; must be the token's own side. Optional.
    #[serde(default)]
    pub side: Option<String>,
    /// The order's details, as the post kind describes.
    #[serde(default = "empty_object")]
    #[schema(value_type = Object)]
    pub body: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

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
    pub data: Value,
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

impl OutcomeView {
    /// `witness`: the post the outcome came from, quoted in the forum text.
    pub fn of(o: &Outcome, witness: Option<&Witness>) -> Self {
        let mut stored: Value = serde_json::from_str(&o.data).unwrap_or(Value::Null);
        let headline = stored.get("headline").and_then(Value::as_str).unwrap_or_default().to_owned();
        let data = stored.get_mut("data").map(Value::take).unwrap_or(Value::Null);
        Self {
            id: o.id,
            campaign_id: o.campaign_id,
            position: o.position,
            seq: o.seq,
            kind: o.kind.clone(),
            text: forum_text(o.id, &o.kind, &headline, &data, witness).into(),
            headline,
            data,
            mention: None,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PostView {
    pub campaign_id: Uuid,
    pub seq: i64,
    /// The server's time stamp, RFC 3339 UTC with milliseconds.
    #[schema(example = "2026-11-21T09:51:45.123Z")]
    pub stamp: String,
    pub author_id: Uuid,
    /// Who made the post, by name: the player (as the moderator named them when issuing their
    /// token), `moderator`, or `server` for the server's own `deadline` and `reminder` posts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub author: Option<String>,
    pub side: Option<String>,
    pub kind: String,
    #[schema(value_type = Object)]
    pub body: Value,
    pub prev_hash: String,
    pub hash: String,
    /// The server's signed receipt for the post: keep it as proof that the server accepted
    /// this post at this time. Absent on posts written before receipts were signed.
    pub receipt: Option<ReceiptView>,
    pub numbers: StampNumbers,
    pub outcomes: Vec<OutcomeView>,
    /// True when a moderator's rollback made this post void: it stays in the log but no
    /// longer counts.
    pub void: bool,
    /// Where the audit of this post is.
    pub audit: String,
}

impl PostView {
    /// Hides the choice and salt of every sealed post among `views` whose topic is not revealed
    /// yet in `log` ([`LogView::hides`]).
    pub fn redact(views: &mut [PostView], log: &LogView) {
        for post in views.iter_mut().filter(|v| log.hides(&v.kind, &v.body)) {
            if let Some(map) = post.body.as_object_mut() {
                map.insert("choice".into(), Value::String("sealed".into()));
                map.insert("salt".into(), Value::String("sealed".into()));
            }
        }
    }

    /// Names each post's author from `authors` (a campaign's players' names by id).
    pub fn name_authors(views: &mut [PostView], authors: &Authors) {
        for view in views {
            view.author = Some(authors.name(view.author_id, &view.kind).to_owned());
        }
    }

    /// Withholds the placements of the deployment still sealed (`log::read::sealed_deployment`).
    pub fn withhold_deployment(views: &mut [PostView], sealed: Option<i64>) {
        for post in views.iter_mut().filter(|v| Some(v.seq) == sealed) {
            post.body = serde_json::json!({"placements": "sealed"});
        }
    }

    pub fn of(campaign: &LoadedCampaign, post: &Post, outcomes: &[Outcome], void: bool) -> Self {
        Self {
            campaign_id: post.campaign_id,
            seq: post.seq,
            stamp: stamp_text(post.stamp),
            author_id: post.author_id,
            author: None,
            side: post.side.clone(),
            kind: post.kind.clone(),
            body: serde_json::from_str(&post.body).unwrap_or(Value::Null),
            prev_hash: post.prev_hash.clone(),
            hash: post.hash.clone(),
            receipt: ReceiptView::of(post),
            numbers: stamp_numbers(campaign, post.stamp),
            outcomes: {
                let witness = post_witness(post);
                outcomes.iter().map(|o| OutcomeView::of(o, Some(&witness))).collect()
            },
            void,
            audit: format!("/v1/campaigns/{}/posts/{}/audit", post.campaign_id, post.seq),
        }
    }
}

/// Who made a campaign's posts, by principal id.
#[derive(Debug, Default)]
pub struct Authors {
    pub players: std::collections::HashMap<Uuid, String>,
}

impl Authors {
    /// The name of a post's author: the player's, `server` for the server's own deadline and
    /// reminder posts, or `moderator`.
    pub fn name(&self, author: Uuid, kind: &str) -> &str {
        use crate::log::kinds::PostKind;
        match self.players.get(&author) {
            Some(name) => name,
            None if matches!(PostKind::of(kind), PostKind::Deadline | PostKind::Reminder) => "server",
            None => "moderator",
        }
    }
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

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PostPage {
    pub posts: Vec<PostView>,
    /// Pass as `after` for the next page; absent when this page is the end of the log so far.
    pub next_after: Option<i64>,
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

/// One event of the stream, as a client's event-stream parser reads it.
#[derive(Debug, Serialize, ToSchema)]
#[allow(dead_code)]
pub struct PostEvent {
    /// Always `post`.
    #[schema(pattern = "^post$")]
    pub event: String,
    /// The post's sequence number: send it back as `Last-Event-ID` to resume after it.
    #[schema(pattern = "^[0-9]+$")]
    pub id: String,
    /// The post as JSON, as `GET /v1/campaigns/{id}/posts/{seq}` shows it (`PostView`).
    #[schema(content_media_type = "application/json")]
    pub data: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct FairnessReport {
    pub campaign_id: Uuid,
    /// The campaign's `result_time`: `post` (a battle's result number is its attack's stamp, so
    /// wins above expectation or bunched seconds may be aimed) or `sealed_delay` (the stamp plus a
    /// delay the poster could not know: post seconds no longer choose result numbers).
    #[schema(example = "post")]
    pub result_time: String,
    /// Battles counted (void posts left out).
    pub battles: usize,
    /// One report per side: attacker wins observed against expected (Σ (victory+1)/100, exact
    /// Poisson-binomial p-value), the spread of its result numbers against uniform, and the
    /// seconds its result-fixing posts were sent at.
    #[schema(value_type = Vec<Object>)]
    pub players: Vec<PlayerFairness>,
    /// All result numbers of the campaign against uniform 0–99.
    #[schema(value_type = Object)]
    pub result_spread: ResultSpread,
    /// Every post's second-of-minute and millisecond mod 6 against uniform.
    #[schema(value_type = Object)]
    pub post_timing: PostTiming,
    /// How to read it.
    pub method: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct KeyList {
    /// The key signing new receipts first, then retired keys (they verify older receipts).
    pub keys: Vec<PublicKey>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OutcomePage {
    pub outcomes: Vec<OutcomeView>,
    /// Pass as `after` for the next page; absent at the end of the feed so far.
    pub next_after: Option<i64>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct BotFeed {
    /// Outcomes this bot has not acknowledged yet, oldest first. They are served again until
    /// acknowledged.
    pub outcomes: Vec<OutcomeView>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAcknowledgement {
    /// The forum's id of the post that carried the outcome.
    #[schema(example = "48213")]
    pub forum_post_id: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AcknowledgementView {
    pub bot_id: Uuid,
    pub outcome_id: Uuid,
    pub campaign_id: Uuid,
    pub forum_post_id: String,
    pub acked_at: String,
}

/// Where a managed campaign stands.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StateView {
    pub campaign_id: Uuid,
    /// The state follows this post (0: nothing posted yet).
    pub after_seq: i64,
    /// Turn, phase, side to act, units with positions and factors, hex and city control,
    /// stored reinforcement points, the pending battle, what is awaited from whom, and the
    /// result once the game is over.
    #[schema(value_type = Object)]
    pub state: Value,
    /// Present when the scenario's map is a stand-in (the seed publishes no map): the line
    /// that says so, e.g. "Stand-in map: the seed publishes no map".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stand_in_map: Option<String>,
    /// What each side may post now (`union`, `confederate`), in the order of play: the kinds
    /// the turn and the pending battle allow. A kind not listed is refused whatever its body.
    #[schema(value_type = Object, example = json!({"union": ["move", "attack", "end_turn"], "confederate": []}))]
    pub may_post: std::collections::BTreeMap<String, Vec<String>>,
    /// During deployment: the hexes each side may deploy in (within 1 hex of its deployment
    /// cities), for the page to highlight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub deployment_zones: Option<std::collections::BTreeMap<String, Vec<String>>>,
    /// The campaign clock: deadlines, a pause, who holds the game up (campaigns with deadlines,
    /// and campaigns that have been paused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub clock: Option<ClockView>,
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

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MovesView {
    pub unit: String,
    /// Every hex the unit can legally reach now, with its cost, the cheapest path and whether
    /// the unit would halt there next to the enemy.
    #[schema(value_type = Vec<Object>)]
    pub moves: Vec<Value>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PostKind {
    pub kind: String,
    pub summary: String,
    /// JSON Schema of the post's `body`.
    #[schema(value_type = Object)]
    pub body_schema: Value,
    #[schema(value_type = Object)]
    pub example: Value,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RulesetSummary {
    pub name: String,
    pub title: String,
    /// The rules document it implements.
    pub seed: String,
    pub actions: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ActionView {
    pub name: String,
    pub summary: String,
    /// The section of the rules it implements.
    pub rule: String,
    /// JSON Schema of the action's `inputs`.
    #[schema(value_type = Object)]
    pub input_schema: Value,
    #[schema(value_type = Object)]
    pub example: Value,
    /// Earlier names of the action, still accepted (a campaign's old posts keep theirs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_accepted: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RulesetView {
    pub name: String,
    pub title: String,
    pub seed: String,
    pub actions: Vec<ActionView>,
}

#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `ok` when the database answers.
    pub status: String,
    /// `sqlite` or `postgres`.
    pub backend: String,
    /// The most posts one commit of this server has carried since it started (group commit:
    /// posts waiting for the writer are written in one transaction).
    #[schema(minimum = 0)]
    pub largest_batch: u64,
    /// How many batches were written one post at a time rather than together (a key seen
    /// before, or a statement that failed; their posts still answered each on its own).
    #[schema(minimum = 0)]
    pub batches_one_by_one: u64,
}

/// Who a token speaks for.
#[derive(Debug, Serialize, ToSchema)]
pub struct WhoAmI {
    /// The token's principal (a moderator's id is the `moderator_id` of their campaigns); none
    /// for the operator.
    pub id: Option<Uuid>,
    /// `operator`, `moderator`, `player` or `bot`.
    pub kind: String,
    pub name: String,
    /// The campaign a player or bot token is bound to.
    pub campaign_id: Option<Uuid>,
    /// The side a player token acts for.
    pub side: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ResultNumberAnswer {
    #[schema(example = 95145)]
    pub n: u32,
    #[schema(example = "308.455831522115")]
    pub sqrt: String,
    #[schema(example = 9)]
    pub first_digit: u32,
    /// The two decimals taken.
    #[schema(example = "21")]
    pub digits: String,
    #[schema(example = 21)]
    pub result: u32,
    /// A `bc` command that shows √N.
    pub bc: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ReinforcementAnswer {
    pub ms: u32,
    pub cities: u32,
    /// ms mod 6.
    #[schema(example = 3)]
    pub remainder: u32,
    /// Whether the remainder is at most the cities held: one reinforcement point gained.
    #[schema(example = true)]
    pub gains: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SealedDelayAnswer {
    /// `s_{k-1}` = SHA-256 of the secret's 64 characters, in hex.
    pub previous: String,
    /// SHA-256 of the secret followed by the post hash (128 characters), in hex.
    pub digest: String,
    /// The digest's first 16 hex digits, and their value.
    pub first_8_bytes: String,
    pub first_8_bytes_decimal: String,
    /// That value mod 60,000.
    pub delay_ms: u64,
    /// The stamp and stamp + delay, RFC 3339 UTC with milliseconds.
    pub stamp: String,
    pub result_time: String,
    /// The result time on the campaign's clock (H:MM:SS).
    pub time_of_day: String,
    pub result_number: crate::views::ResultNumberView,
    /// Shell commands that redo each step with `sha256sum` and `bc`.
    pub commands: Vec<String>,
}

/// A webhook's new signing secret: shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct RotatedSecret {
    pub id: Uuid,
    /// `whsec_…`: every delivery attempted from now on is signed with it.
    pub secret: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewWebhook {
    /// Where to POST each outcome: an `https://` (or `http://`) address with a host, no
    /// credentials, at most 2000 characters, that reaches a public (global) address. Loopback,
    /// private, link-local, unique-local, shared, multicast and metadata addresses, and
    /// `localhost`, are refused (422 `webhook.address`) unless the operator allows them; a
    /// campaign has at most `webhooks_per_campaign` (default 5) webhooks (409 `webhook.limit`).
    #[schema(
        example = "http://forum-bridge.example:8090/adjutant",
        max_length = 2000,
        pattern = "^[Hh][Tt][Tt][Pp][Ss]?://"
    )]
    pub url: String,
}

/// A webhook just registered, with its signing secret: shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct RegisteredWebhook {
    pub id: Uuid,
    pub campaign_id: Uuid,
    pub url: String,
    /// `whsec_…`: verify each request's `webhook-signature` with it (Standard Webhooks).
    pub secret: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookView {
    pub id: Uuid,
    pub campaign_id: Uuid,
    pub url: String,
    pub created_at: DateTime<Utc>,
    /// `true` until the endpoint answers 410 Gone or the moderator deletes the webhook.
    pub active: bool,
    pub disabled_at: Option<DateTime<Utc>>,
    pub disabled_reason: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookList {
    pub webhooks: Vec<WebhookView>,
}

/// One attempt to deliver one outcome.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryView {
    /// The log's cursor.
    pub id: i64,
    /// The outcome sent, also the request's `webhook-id`.
    pub outcome_id: Uuid,
    /// 1 for the first attempt at this outcome.
    pub attempt: i32,
    pub attempted_at: DateTime<Utc>,
    /// The status the endpoint answered, if it answered.
    pub status_code: Option<i32>,
    /// Why there was no answer (could not connect, timed out), if so.
    pub error: Option<String>,
    pub duration_ms: i64,
    /// A 2xx answer.
    pub delivered: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryPage {
    pub deliveries: Vec<DeliveryView>,
    /// Pass as `after` for the next page; absent on the last page.
    pub next_after: Option<i64>,
}
