//! Campaigns as the rules see them: their clock and settings, their scenario or ruleset, and
//! what a post to them decides.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use adjutant_rules::resolver::{self, Ruleset};
use adjutant_rules::result_time::{ChainSecret, ResultTime};
use adjutant_rules::short_acw::{self, GameState, Scenario, VictoryRounding};
use adjutant_rules::{Clock, ClockFormat, DiceStream, DigitPositions, Refusal, Side};
use adjutant_store::{Campaign, NewOutcome, Post, Tail};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::error::AppError;

/// The sides of every campaign: Adjutant serves the American Civil War.
pub const SIDES: [&str; 2] = ["union", "confederate"];

/// The words for the two sides that the seeds use, each read as the side it names: `rebel` is
/// the Short ACW Campaign's and Chamberlain's word for the Confederates, `federal` the 25mm
/// rules', `yankee` Chamberlain's for the Union.
pub const SIDE_NAMES: [(&str, &str); 5] = [
    ("union", "union"),
    ("confederate", "confederate"),
    ("rebel", "confederate"),
    ("federal", "union"),
    ("yankee", "union"),
];

/// Reads a side as players write it, in lower case: one of [`SIDE_NAMES`].
pub fn parse_side(text: &str) -> Option<&'static str> {
    SIDE_NAMES.iter().find(|(name, _)| *name == text).map(|(_, side)| *side)
}

/// What a refused side is told: the campaign's sides and the other words accepted for them.
pub fn sides_detail(campaign: &LoadedCampaign) -> String {
    let what =
        campaign.campaign.ruleset.as_deref().or(campaign.campaign.scenario.as_deref()).unwrap_or("this campaign");
    format!(
        "{what} has the sides `union` and `confederate`; `federal` and `yankee` are read as `union`, `rebel` as `confederate`"
    )
}

/// How the campaign's clock reads a post's stamp, and how it rounds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignSettings {
    /// IANA time zone of the campaign's clock (default `UTC`).
    #[serde(default = "default_zone")]
    #[schema(schema_with = time_zone_schema)]
    pub time_zone: String,
    /// `24h` (default) or `12h`: 0:05 reads 12:05 and 13:05 reads 1:05 on a 12-hour clock.
    #[serde(default = "default_clock")]
    #[schema(example = "24h", schema_with = clock_schema)]
    pub clock: String,
    /// 9 takes the 9th and 10th decimals of √N (the seed's worked example, default); 8 takes the
    /// 8th and 9th (the wording of rule 5).
    #[serde(default = "default_first_digit", deserialize_with = "crate::whole_number::json")]
    #[schema(example = 9, minimum = 8, maximum = 9)]
    pub first_digit: u32,
    /// `exact` (default): round-half-up(100·A/(A+D′)). `one_decimal`: round 100/(A+D′) to one
    /// decimal first, as the seed's worked example does.
    #[serde(default = "default_rounding")]
    #[schema(schema_with = rounding_schema)]
    pub victory_rounding: String,
    /// The rules version of a managed campaign, recorded when it is created: its posts are
    /// decided and audited by it. 2 (the current rules, default for a new campaign); 1 the rules
    /// as first published (docs/rules/short-acw.md, "Rules versions"). A campaign stored without
    /// it was created under version 1.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "optional_version")]
    #[schema(example = 2, minimum = 1, maximum = 2, nullable = false)]
    pub rules_version: Option<u32>,
    /// When a battle's result time is (managed campaigns): `post` (default) the attack's stamp,
    /// as the seed says; `sealed_delay` the stamp plus a delay of 0 to 59.999 s from a hash chain
    /// the server committed to when the campaign was created (docs/fairness.md), so an attack
    /// cannot be aimed at a winning second. A campaign stored without it plays `post`.
    #[serde(default = "default_result_time")]
    #[schema(schema_with = result_time_schema)]
    pub result_time: String,
    /// For `sealed_delay`: the hash chain's public commitment, drawn by the server when the
    /// campaign is created (never sent by a client).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub result_chain: Option<ResultChain>,
}

/// The public part of a sealed-delay campaign's hash chain, in its creation record: `s_0`,
/// published before any post, and how many secrets the chain holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultChain {
    /// `s_0` (64 hex digits): SHA-256 of the hex text of `s_1`, and so on up the chain; the
    /// k-th battle reveals `s_k`.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub commitment: String,
    /// Secrets in the chain (K); the battle that uses the last one publishes the next chain's
    /// `s_0` in its outcome.
    #[schema(minimum = 1)]
    pub length: u64,
}

/// The values of `result_time`.
pub const RESULT_TIMES: [&str; 2] = ["post", "sealed_delay"];

fn optional_version<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    crate::whole_number::json(d).map(Some)
}

fn string_enum<'a>(values: impl IntoIterator<Item = &'a str>, example: &str) -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(values))
        .examples([serde_json::json!(example)])
        .build()
}

/// Every IANA zone the server knows, so a client cannot send one it would refuse.
pub fn time_zone_schema() -> utoipa::openapi::schema::Object {
    string_enum(chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name()), "America/New_York")
}

fn clock_schema() -> utoipa::openapi::schema::Object {
    string_enum(["24h", "12h"], "24h")
}

fn result_time_schema() -> utoipa::openapi::schema::Object {
    string_enum(RESULT_TIMES, "post")
}

fn default_result_time() -> String {
    "post".into()
}

fn rounding_schema() -> utoipa::openapi::schema::Object {
    string_enum(["exact", "one_decimal"], "exact")
}

fn default_zone() -> String {
    "UTC".into()
}
fn default_clock() -> String {
    "24h".into()
}
fn default_first_digit() -> u32 {
    9
}
fn default_rounding() -> String {
    "exact".into()
}

impl Default for CampaignSettings {
    fn default() -> Self {
        Self {
            time_zone: default_zone(),
            clock: default_clock(),
            first_digit: default_first_digit(),
            victory_rounding: default_rounding(),
            rules_version: None,
            result_time: default_result_time(),
            result_chain: None,
        }
    }
}

impl CampaignSettings {
    /// How the campaign fixes result times.
    pub fn result_time(&self) -> ResultTime {
        match self.result_time.as_str() {
            "sealed_delay" => ResultTime::SealedDelay,
            _ => ResultTime::Post,
        }
    }

    /// The rules version the campaign plays under: as recorded, or 1 for a campaign recorded
    /// before versions were.
    pub fn rules_version(&self) -> u32 {
        self.rules_version.unwrap_or(1)
    }

    /// Checks every setting, naming the one at fault.
    pub fn clock_of(&self) -> Result<Clock, AppError> {
        let zone = chrono_tz::Tz::from_str(&self.time_zone).map_err(|_| {
            AppError::unprocessable(
                "body.settings.time_zone",
                "campaign.time_zone",
                format!("{:?} is not an IANA time zone (for example UTC or America/New_York)", self.time_zone),
            )
        })?;
        let format = match self.clock.as_str() {
            "24h" => ClockFormat::H24,
            "12h" => ClockFormat::H12,
            _ => {
                return Err(AppError::unprocessable(
                    "body.settings.clock",
                    "campaign.clock",
                    "the clock is `24h` or `12h`",
                ))
            }
        };
        let digits = DigitPositions::from_first(self.first_digit).ok_or_else(|| {
            AppError::unprocessable(
                "body.settings.first_digit",
                "result_number.digit_positions",
                "the result number takes the 9th and 10th decimals (9) or the 8th and 9th (8)",
            )
        })?;
        if !matches!(self.victory_rounding.as_str(), "exact" | "one_decimal") {
            return Err(AppError::unprocessable(
                "body.settings.victory_rounding",
                "victory_number.rounding",
                "victory rounding is `exact` or `one_decimal`",
            ));
        }
        if !(1..=short_acw::RULES_VERSION).contains(&self.rules_version()) {
            return Err(AppError::unprocessable(
                "body.settings.rules_version",
                "campaign.rules_version",
                format!("the rules version is 1 to {}", short_acw::RULES_VERSION),
            ));
        }
        if !RESULT_TIMES.contains(&self.result_time.as_str()) {
            return Err(AppError::unprocessable(
                "body.settings.result_time",
                "campaign.result_time",
                "the result time is `post` (the attack's stamp) or `sealed_delay` (the stamp plus a sealed delay)",
            ));
        }
        Ok(Clock { zone, format, digits })
    }
}

/// What a campaign plays.
#[derive(Clone)]
pub enum Game {
    /// The server holds the whole game: map, units, turns.
    Managed { scenario: Arc<Scenario>, settings: short_acw::Settings },
    /// The server is the dice and tables of a ruleset; the referee keeps the table.
    Resolver {
        ruleset: &'static dyn Ruleset,
        /// The rules version the campaign was created under (see `CampaignSettings`).
        rules_version: u32,
    },
}

impl std::fmt::Debug for Game {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Game::Managed { scenario, .. } => write!(f, "Managed({})", scenario.name),
            Game::Resolver { ruleset, .. } => write!(f, "Resolver({})", ruleset.name()),
        }
    }
}

/// A stored campaign with its settings read and its game ready.
#[derive(Debug, Clone)]
pub struct LoadedCampaign {
    pub campaign: Campaign,
    pub settings: CampaignSettings,
    pub clock: Clock,
    pub game: Game,
}

impl LoadedCampaign {
    pub fn load(campaign: Campaign, scenarios: &Scenarios) -> Result<Self, AppError> {
        let settings: CampaignSettings = serde_json::from_str(&campaign.settings)
            .map_err(|e| AppError::Internal(format!("campaign {} settings: {e}", campaign.id)))?;
        let clock = settings.clock_of()?;
        let game = match (campaign.mode.as_str(), &campaign.scenario_text, &campaign.ruleset) {
            ("managed", Some(text), _) => {
                let name = campaign.scenario.clone().unwrap_or_default();
                let scenario = scenarios.parse(&name, text).map_err(|e| AppError::Internal(e.join("; ")))?;
                let victory_rounding = match settings.victory_rounding.as_str() {
                    "one_decimal" => VictoryRounding::OneDecimal,
                    _ => VictoryRounding::Exact,
                };
                Game::Managed {
                    scenario,
                    settings: short_acw::Settings { clock, victory_rounding, rules_version: settings.rules_version() },
                }
            }
            ("resolver", _, Some(name)) => Game::Resolver {
                ruleset: resolver::ruleset(name)
                    .ok_or_else(|| AppError::Internal(format!("campaign {}: unknown ruleset {name}", campaign.id)))?,
                rules_version: settings.rules_version(),
            },
            _ => return Err(AppError::Internal(format!("campaign {} has no scenario or ruleset", campaign.id))),
        };
        Ok(Self { campaign, settings, clock, game })
    }

    pub fn scenario(&self) -> Option<&Scenario> {
        match &self.game {
            Game::Managed { scenario, .. } => Some(scenario),
            Game::Resolver { .. } => None,
        }
    }

    /// The managed game's state after the snapshot `snapshot` (or the opening state).
    pub fn state_from(&self, snapshot: Option<&str>) -> Result<Option<GameState>, AppError> {
        let Some(scenario) = self.scenario() else { return Ok(None) };
        match snapshot {
            Some(text) => serde_json::from_str(text)
                .map(Some)
                .map_err(|e| AppError::Internal(format!("campaign {} snapshot: {e}", self.campaign.id))),
            None => Ok(Some(GameState::new(scenario))),
        }
    }
}

/// The scenario files campaigns can be created from, by name (the file name without `.toml`),
/// and a cache of parsed scenarios by their text.
#[derive(Default)]
pub struct Scenarios {
    texts: BTreeMap<String, String>,
    parsed: Mutex<HashMap<[u8; 32], Arc<Scenario>>>,
}

impl Scenarios {
    /// Reads and checks every `*.toml` in `dir`; without the folder, the scenarios built into
    /// the binary. A broken file stops the server with every problem named.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let mut texts = BTreeMap::new();
        match std::fs::read_dir(dir) {
            Ok(entries) => {
                for entry in entries.flatten() {
                    let path = entry.path();
                    if path.extension().is_some_and(|e| e == "toml") {
                        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
                        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                        Scenario::from_toml(&path.display().to_string(), &text)
                            .map_err(|errors| errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))?;
                        texts.insert(name, text);
                    }
                }
            }
            Err(_) => {
                for (name, text) in BUILT_IN {
                    texts.insert((*name).to_owned(), (*text).to_owned());
                }
            }
        }
        Ok(Self { texts, parsed: Mutex::default() })
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.texts.get(name).map(String::as_str)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.texts.keys().map(String::as_str)
    }

    /// The scenario in `text`, parsed once per distinct text.
    pub fn parse(&self, name: &str, text: &str) -> Result<Arc<Scenario>, Vec<String>> {
        let key: [u8; 32] = Sha256::digest(text.as_bytes()).into();
        if let Some(found) = self.parsed.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(found.clone());
        }
        let scenario = Scenario::from_toml(&format!("{name}.toml"), text)
            .map_err(|errors| errors.iter().map(ToString::to_string).collect::<Vec<_>>())?;
        let scenario = Arc::new(scenario);
        self.parsed.lock().unwrap_or_else(|e| e.into_inner()).insert(key, scenario.clone());
        Ok(scenario)
    }
}

/// Scenarios shipped inside the binary.
const BUILT_IN: &[(&str, &str)] = &[("short-acw", include_str!("../../../config/scenarios/short-acw.toml"))];

/// The Short ACW post kinds that may fight a battle, and so fix a result number.
pub const RESULT_FIXING_KINDS: [&str; 2] = ["attack", "resolve_attack"];

/// Post kinds every campaign takes.
pub mod kinds {
    /// A remark in the log; it changes nothing.
    pub const NOTE: &str = "note";
    /// A moderator's correction: posts after `to_seq` are void.
    pub const ROLLBACK: &str = "rollback";
    /// A resolver action.
    pub const RESOLVE: &str = "resolve";
    /// A secret choice, revealed once the other side's choice on the same topic is in.
    pub const SEAL: &str = "seal";
    /// The moderator answers for a side the game is waiting on.
    pub const UMPIRE: &str = "umpire";
}

/// The answers a moderator may give for a side that does not give them.
pub const UMPIRE_KINDS: [&str; 3] = ["casualty_order", "retreat", "cavalry_option"];

/// The body of an `umpire` post: the moderator gives an answer the game waits for from a side
/// (a casualty order, a retreat, the cavalry option) when that side's player does not, with the
/// reason on record.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UmpireBody {
    /// The side answered for: `union` or `confederate`.
    pub side: String,
    /// `casualty_order`, `retreat` or `cavalry_option`.
    pub kind: String,
    /// That post kind's body.
    #[schema(value_type = Object)]
    pub body: Value,
    /// Why the moderator answers (e.g. the player has not posted for three days).
    #[schema(value_type = crate::free_text::Line)]
    pub reason: String,
}

/// What a post decides besides being stored.
#[derive(Debug, Default)]
pub struct Effects {
    pub outcomes: Vec<NewOutcome>,
    pub snapshot: Option<String>,
}

/// Everything `decide` needs that is not in the tail.
#[derive(Debug, Default)]
pub struct Context {
    /// For a rollback: the snapshot at or before the post rolled back to.
    pub rollback_snapshot: Option<(i64, String)>,
    /// Posts already void (by earlier rollbacks).
    pub void: VoidSet,
    /// Sealed choices already in (void ones left out).
    pub seals: SealBook,
    /// In a `sealed_delay` campaign, for a post that may fix a result: the chain secret it
    /// uses (the server's next one when the post is made; the one its outcome revealed when it
    /// is audited).
    pub chain_secret: Option<ChainSecret>,
    /// The last post when this context was read: the post must follow it directly, or the
    /// context is stale. `None` when the post needs no context.
    pub as_of: Option<i64>,
}

/// Which group a sealed choice is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SealRole {
    Attacker,
    Defender,
}

impl SealRole {
    pub fn other(self) -> Self {
        match self {
            SealRole::Attacker => SealRole::Defender,
            SealRole::Defender => SealRole::Attacker,
        }
    }

    fn name(self) -> &'static str {
        match self {
            SealRole::Attacker => "attacker",
            SealRole::Defender => "defender",
        }
    }
}

/// The body of a `seal` post. The server adds a random `salt` before it stores and hashes the
/// post, so the post's public hash does not give the choice away; the body is shown as
/// `"sealed"` until the other group's choice on the same topic is in.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SealBody {
    /// What the choice is about, agreed by the players (e.g. `melee-3-round-2`).
    pub topic: String,
    /// The group the choice is for.
    pub role: SealRole,
    /// The choice itself (e.g. `stay` or `retreat`).
    pub choice: String,
    /// Set by the server; a client may not send it.
    #[serde(default)]
    pub salt: String,
}

/// A sealed choice in the log.
#[derive(Debug, Clone)]
pub struct Seal {
    pub seq: i64,
    pub side: Option<String>,
    pub body: SealBody,
}

impl Seal {
    pub fn of(post: &Post) -> Option<Seal> {
        (post.kind == kinds::SEAL).then(|| serde_json::from_str(&post.body).ok()).flatten().map(|body| Seal {
            seq: post.seq,
            side: post.side.clone(),
            body,
        })
    }
}

thread_local! {
    static WORK: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Steps taken by this thread in [`VoidSet`] and [`SealBook`] (ranges and seals visited), so
/// tests can show that reads cost what the log's size says, not its square.
pub fn work_done() -> u64 {
    WORK.with(|w| w.get())
}

fn work(steps: u64) {
    WORK.with(|w| w.set(w.get().saturating_add(steps)));
}

/// The posts made void by rollbacks, as disjoint ranges of sequence numbers: a rollback voids
/// a range, and a thousand rollbacks cost a thousand range inserts, not the sum of their
/// lengths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VoidSet {
    /// start → end (exclusive); disjoint and not touching.
    ranges: std::collections::BTreeMap<i64, i64>,
    len: i64,
}

impl VoidSet {
    /// The void posts of a log's rollbacks, each given as (`to_seq`, its own seq).
    pub fn of_rollbacks(rollbacks: impl IntoIterator<Item = (i64, i64)>) -> Self {
        let mut void = VoidSet::default();
        for (to_seq, seq) in rollbacks {
            void.insert(to_seq + 1..seq);
        }
        void
    }

    pub fn contains(&self, seq: &i64) -> bool {
        work(1);
        self.ranges.range(..=*seq).next_back().is_some_and(|(_, end)| seq < end)
    }

    /// How many posts are void.
    pub fn len(&self) -> i64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Voids `range`, merging it with the ranges it overlaps or touches.
    pub fn insert(&mut self, range: std::ops::Range<i64>) {
        let (mut start, mut end) = (range.start, range.end);
        if start >= end {
            return;
        }
        work(1);
        if let Some((&s, &e)) = self.ranges.range(..=start).next_back() {
            if e >= start {
                start = s;
                end = end.max(e);
            }
        }
        let absorbed: Vec<(i64, i64)> = self.ranges.range(start..=end).map(|(s, e)| (*s, *e)).collect();
        for (s, e) in absorbed {
            work(1);
            self.ranges.remove(&s);
            self.len -= e - s;
            end = end.max(e);
        }
        self.ranges.insert(start, end);
        self.len += end - start;
    }

    /// The posts of `range` that are not void yet, in order.
    pub fn gaps(&self, range: std::ops::Range<i64>) -> Vec<i64> {
        let mut out = Vec::new();
        let mut at = range.start;
        if let Some((_, &e)) = self.ranges.range(..=at).next_back() {
            at = at.max(e);
        }
        for (&s, &e) in self.ranges.range(range.start..range.end) {
            work(1);
            out.extend(at..s.min(range.end));
            at = at.max(e);
        }
        out.extend(at..range.end);
        out
    }
}

/// Sealed choices by topic, so a seal or a resolve post looks up its topic instead of reading
/// every seal.
#[derive(Debug, Clone, Default)]
pub struct SealBook {
    by_topic: std::collections::HashMap<String, Vec<Seal>>,
    /// seq → topic, to drop the seals a rollback voids.
    by_seq: std::collections::BTreeMap<i64, String>,
}

impl SealBook {
    pub fn insert(&mut self, seal: Seal) {
        work(1);
        self.by_seq.insert(seal.seq, seal.body.topic.clone());
        self.by_topic.entry(seal.body.topic.clone()).or_default().push(seal);
    }

    /// The seals on `topic`, in log order.
    pub fn on_topic(&self, topic: &str) -> &[Seal] {
        work(1);
        self.by_topic.get(topic).map(Vec::as_slice).unwrap_or_default()
    }

    /// Drops the seals of posts in `range` (voided by a rollback).
    pub fn void(&mut self, range: std::ops::Range<i64>) {
        let dropped: Vec<(i64, String)> = self.by_seq.range(range).map(|(s, t)| (*s, t.clone())).collect();
        for (seq, topic) in dropped {
            work(1);
            self.by_seq.remove(&seq);
            if let Some(seals) = self.by_topic.get_mut(&topic) {
                seals.retain(|s| s.seq != seq);
                if seals.is_empty() {
                    self.by_topic.remove(&topic);
                }
            }
        }
    }

    /// The attacker's and the defender's choices on `topic`, when both are in from the two
    /// sides.
    pub fn pair(&self, topic: &str) -> Option<(&Seal, &Seal)> {
        let seals = self.on_topic(topic);
        let find = |role: SealRole| seals.iter().find(|s| s.body.role == role);
        let (attacker, defender) = (find(SealRole::Attacker)?, find(SealRole::Defender)?);
        (attacker.side != defender.side).then_some((attacker, defender))
    }

    /// Topics whose two choices are both in: their seals can be shown.
    pub fn revealed_topics(&self) -> std::collections::BTreeSet<String> {
        self.by_topic.keys().filter(|topic| self.pair(topic).is_some()).cloned().collect()
    }
}

impl FromIterator<Seal> for SealBook {
    fn from_iter<I: IntoIterator<Item = Seal>>(seals: I) -> Self {
        let mut book = SealBook::default();
        for seal in seals {
            book.insert(seal);
        }
        book
    }
}

/// The body of a `rollback` post.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RollbackBody {
    /// The last post that stands; every later post is void.
    pub to_seq: i64,
    /// Why, for the record.
    #[schema(value_type = crate::free_text::Line)]
    pub reason: String,
}

/// The body of a `resolve` post.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveBody {
    /// The ruleset's action (see `GET /v1/rulesets/{name}`).
    pub action: String,
    /// The action's inputs.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub inputs: Value,
    /// A sealed topic whose two choices fill the inputs `attacker_choice` and `defender_choice`
    /// (both must be in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed: Option<String>,
}

fn outcome(kind: &str, headline: &str, data: &Value) -> NewOutcome {
    NewOutcome {
        id: Uuid::new_v4(),
        kind: kind.to_owned(),
        data: json!({"headline": headline, "data": data}).to_string(),
    }
}

fn body_of<T: serde::de::DeserializeOwned>(post: &Post) -> Result<T, AppError> {
    crate::extract::parse_json::<T>(post.body.as_bytes()).map_err(|e| match e {
        AppError::Client { status, field, rule, detail } => {
            AppError::Client { status, field: field.map(|f| f.replacen("body", "body.body", 1)), rule, detail }
        }
        other => other,
    })
}

/// Applies a post to its campaign: the rules' verdict on it, given the tail of the log.
pub fn decide(campaign: &LoadedCampaign, tail: &Tail, post: &Post, context: &Context) -> Result<Effects, AppError> {
    match post.kind.as_str() {
        kinds::NOTE => return Ok(Effects::default()),
        kinds::ROLLBACK => return rollback(campaign, post, context),
        kinds::SEAL => return seal(campaign, post, context),
        _ => {}
    }
    match &campaign.game {
        Game::Managed { scenario, settings } => {
            let state = campaign
                .state_from(tail.snapshot.as_ref().map(|(_, text)| text.as_str()))?
                .unwrap_or_else(|| GameState::new(scenario));
            if post.kind == kinds::UMPIRE {
                return umpire(scenario, settings, &state, post);
            }
            let body: Value = serde_json::from_str(&post.body).map_err(|e| AppError::Internal(e.to_string()))?;
            let side = post.side.as_deref().and_then(|s| serde_json::from_value::<Side>(json!(s)).ok());
            let order = short_acw::Order {
                seq: post.seq as u64,
                side,
                kind: &post.kind,
                body: &body,
                stamp: post.stamp,
                settings,
                sealed: context
                    .chain_secret
                    .as_ref()
                    .map(|secret| short_acw::SealedDraw { secret, post_hash: &post.hash }),
            };
            let applied = short_acw::apply(scenario, &state, &order).map_err(refusal_in_body)?;
            Ok(Effects {
                outcomes: applied.outcomes.iter().map(|o| outcome(&o.kind, &o.headline, &o.data)).collect(),
                snapshot: Some(serde_json::to_string(&applied.state).map_err(|e| AppError::Internal(e.to_string()))?),
            })
        }
        Game::Resolver { ruleset, rules_version } => {
            if post.kind != kinds::RESOLVE {
                return Err(AppError::unprocessable(
                    "body.kind",
                    "post.kind",
                    format!(
                        "a resolver campaign takes `resolve`, `note` and (moderators) `rollback` posts, not `{}`",
                        post.kind
                    ),
                ));
            }
            let mut body: ResolveBody = body_of(post)?;
            if let Some(topic) = &body.sealed {
                fill_sealed_choices(&mut body.inputs, topic, context)?;
            }
            let dice = DiceStream::new(&post.campaign_id.to_string(), post.seq as u64, post.stamp);
            let resolution = resolver::resolve_under(*ruleset, *rules_version, &body.action, &body.inputs, dice)
                .map_err(refusal_in_body)?;
            let data = serde_json::to_value(&resolution).map_err(|e| AppError::Internal(e.to_string()))?;
            Ok(Effects { outcomes: vec![outcome("resolution", &resolution.headline, &data)], snapshot: None })
        }
    }
}

fn umpire(
    scenario: &Scenario,
    settings: &short_acw::Settings,
    state: &GameState,
    post: &Post,
) -> Result<Effects, AppError> {
    if post.side.is_some() {
        return Err(AppError::forbidden("umpire.moderator_only", "only the campaign's moderator umpires"));
    }
    let body: UmpireBody = body_of(post)?;
    let Some(side) = parse_side(&body.side).and_then(|s| serde_json::from_value::<Side>(json!(s)).ok()) else {
        return Err(AppError::unprocessable(
            "body.body.side",
            "campaign.sides",
            "the side is `union` or `confederate` (`federal` and `yankee` are read as `union`, `rebel` as `confederate`)",
        ));
    };
    if !UMPIRE_KINDS.contains(&body.kind.as_str()) {
        return Err(AppError::unprocessable(
            "body.body.kind",
            "umpire.kind",
            format!("a moderator answers only {}", UMPIRE_KINDS.join(", ")),
        ));
    }
    crate::free_text::check_line(
        "body.body.reason",
        "umpire.reason",
        "an umpire's answer records its reason, which",
        &body.reason,
        crate::free_text::LINE_MAX,
    )?;
    if !state.awaiting.iter().any(|a| a.side == side && a.kind == body.kind) {
        return Err(AppError::unprocessable(
            "body.body.kind",
            "umpire.not_awaited",
            format!("the game is not waiting for a {} from the {}", body.kind, body.side),
        ));
    }
    let order = short_acw::Order {
        seq: post.seq as u64,
        side: Some(side),
        kind: &body.kind,
        body: &body.body,
        stamp: post.stamp,
        settings,
        sealed: None,
    };
    let applied = short_acw::apply(scenario, state, &order).map_err(|r| {
        let field = if r.field.starts_with("body") { r.field.replacen("body", "body.body.body", 1) } else { r.field };
        AppError::unprocessable(field, r.rule, r.detail)
    })?;
    let mut outcomes = vec![outcome(
        "umpire",
        &format!("The moderator answers the {} for the {}: {}", body.kind, body.side, body.reason.trim()),
        &json!({"side": side, "kind": body.kind, "reason": body.reason.trim()}),
    )];
    outcomes.extend(applied.outcomes.iter().map(|o| outcome(&o.kind, &o.headline, &o.data)));
    Ok(Effects {
        outcomes,
        snapshot: Some(serde_json::to_string(&applied.state).map_err(|e| AppError::Internal(e.to_string()))?),
    })
}

fn seal(campaign: &LoadedCampaign, post: &Post, context: &Context) -> Result<Effects, AppError> {
    if matches!(campaign.game, Game::Managed { .. }) {
        return Err(AppError::unprocessable(
            "body.kind",
            "post.kind",
            "sealed choices are for resolver campaigns; the Short ACW Campaign asks its questions itself",
        ));
    }
    if post.side.is_none() {
        return Err(AppError::forbidden("seal.players_only", "a sealed choice is a player's"));
    }
    let body: SealBody = body_of(post)?;
    let topic = body.topic.as_str();
    if topic.is_empty() || topic.len() > 80 || topic.trim() != topic || topic.chars().any(crate::free_text::forbidden) {
        return Err(AppError::unprocessable(
            "body.body.topic",
            "seal.topic",
            "a topic has 1 to 80 characters, with no space at either end",
        ));
    }
    if body.choice.trim().is_empty() || body.choice.len() > 40 || body.choice.chars().any(crate::free_text::forbidden) {
        return Err(AppError::unprocessable(
            "body.body.choice",
            "seal.choice",
            "a choice has 1 to 40 characters on one line",
        ));
    }
    let on_topic = context.seals.on_topic(topic);
    if on_topic.iter().any(|s| s.body.role == body.role) {
        return Err(AppError::conflict(
            "body.body.role",
            "seal.once",
            format!("the {} choice on {topic:?} is already sealed", body.role.name()),
        ));
    }
    // The two choices of a topic are the two sides': one side cannot seal both, nor the
    // other side's role once that side has sealed its own.
    if on_topic.iter().any(|s| s.side == post.side) {
        return Err(AppError::forbidden(
            "seal.other_side",
            format!("your side has already sealed a choice on {topic:?}; the other choice is the other side's"),
        ));
    }
    let side = post.side.clone().unwrap_or_default();
    let mut outcomes = vec![outcome(
        "sealed",
        &format!("The {side} player has sealed the {} choice on {topic}.", body.role.name()),
        &json!({"topic": topic, "role": body.role, "side": side}),
    )];
    if let Some(other) = on_topic.iter().find(|s| s.body.role == body.role.other() && s.side != post.side) {
        let (attacker, defender) = match body.role {
            SealRole::Attacker => (&body, &other.body),
            SealRole::Defender => (&other.body, &body),
        };
        outcomes.push(outcome(
            "revealed",
            &format!(
                "Both choices on {topic} are in: the attacker {}, the defender {}.",
                attacker.choice, defender.choice
            ),
            &json!({"topic": topic, "attacker_choice": attacker.choice, "defender_choice": defender.choice,
                    "sealed_posts": [other.seq, post.seq]}),
        ));
    }
    Ok(Effects { outcomes, snapshot: None })
}

fn fill_sealed_choices(inputs: &mut Value, topic: &str, context: &Context) -> Result<(), AppError> {
    let Some((attacker, defender)) =
        context.seals.pair(topic).map(|(a, d)| (a.body.choice.clone(), d.body.choice.clone()))
    else {
        return Err(AppError::unprocessable(
            "body.body.sealed",
            "seal.both_in",
            format!("both the attacker's and the defender's choices on {topic:?} must be sealed first"),
        ));
    };
    let Some(map) = inputs.as_object_mut() else {
        return Err(AppError::unprocessable("body.body.inputs", "resolver.inputs", "the inputs are a JSON object"));
    };
    for key in ["attacker_choice", "defender_choice"] {
        if map.contains_key(key) {
            return Err(AppError::unprocessable(
                format!("body.body.inputs.{key}"),
                "seal.from_seals",
                "with `sealed`, the choices come from the sealed posts, not the inputs",
            ));
        }
    }
    map.insert("attacker_choice".into(), Value::String(attacker));
    map.insert("defender_choice".into(), Value::String(defender));
    Ok(())
}

/// Rules name fields from the post's body (`body.units[0]`); the request nests it one deeper.
fn refusal_in_body(r: Refusal) -> AppError {
    let field = if r.field.starts_with("body") { r.field.replacen("body", "body.body", 1) } else { r.field };
    AppError::unprocessable(field, r.rule, r.detail)
}

fn rollback(campaign: &LoadedCampaign, post: &Post, context: &Context) -> Result<Effects, AppError> {
    if post.side.is_some() {
        return Err(AppError::forbidden("rollback.moderator_only", "only the campaign's moderator can roll it back"));
    }
    let body: RollbackBody = body_of(post)?;
    crate::free_text::check_line(
        "body.body.reason",
        "rollback.reason",
        "a rollback records its reason, which",
        &body.reason,
        crate::free_text::LINE_MAX,
    )?;
    if body.to_seq < 0 || body.to_seq >= post.seq - 1 {
        return Err(AppError::unprocessable(
            "body.body.to_seq",
            "rollback.to_seq",
            format!("roll back to an earlier post: 0 to {} (0 voids every post)", post.seq - 2),
        ));
    }
    if context.void.contains(&body.to_seq) {
        return Err(AppError::unprocessable(
            "body.body.to_seq",
            "rollback.void_target",
            format!("post {} is already void; roll back to a post that stands", body.to_seq),
        ));
    }
    let voided: Vec<i64> = context.void.gaps(body.to_seq + 1..post.seq);
    let snapshot = match campaign.scenario() {
        Some(scenario) => {
            let state = match &context.rollback_snapshot {
                Some((_, text)) => campaign.state_from(Some(text))?,
                None => Some(GameState::new(scenario)),
            };
            Some(serde_json::to_string(&state).map_err(|e| AppError::Internal(e.to_string()))?)
        }
        None => None,
    };
    let headline = format!(
        "The moderator rolled the campaign back to post {}: {} void. Reason: {}",
        body.to_seq,
        match voided.len() {
            1 => "1 post".to_owned(),
            n => format!("{n} posts"),
        },
        body.reason.trim()
    );
    let data = json!({"to_seq": body.to_seq, "reason": body.reason.trim(), "voided": voided});
    Ok(Effects { outcomes: vec![outcome("rollback", &headline, &data)], snapshot })
}

/// The creation record of a campaign, as its chain's genesis binds it.
pub fn creation_record<'a>(
    campaign: &'a Campaign,
    ids: &'a (String, String),
) -> adjutant_rules::chain::CreationRecord<'a> {
    adjutant_rules::chain::CreationRecord {
        campaign_id: &ids.0,
        name: &campaign.name,
        moderator_id: &ids.1,
        mode: &campaign.mode,
        scenario: campaign.scenario.as_deref(),
        scenario_text: campaign.scenario_text.as_deref(),
        ruleset: campaign.ruleset.as_deref(),
        settings: &campaign.settings,
        created_at: campaign.created_at,
    }
}

/// The `prev_hash` of a campaign's first post: the hash of its creation record, recomputed
/// from the stored row (so a changed setting or scenario breaks the chain), or 64 zeros for a
/// campaign created before the record was hashed.
pub fn genesis(campaign: &Campaign) -> String {
    use adjutant_rules::chain::{genesis_rule, GENESIS};
    if campaign.chain_genesis == genesis_rule::LEGACY {
        return GENESIS.to_owned();
    }
    let ids = (campaign.id.to_string(), campaign.moderator_id.to_string());
    creation_record(campaign, &ids).genesis()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seal(seq: i64, topic: &str, role: SealRole, side: &str) -> Seal {
        Seal {
            seq,
            side: Some(side.to_owned()),
            body: SealBody { topic: topic.to_owned(), role, choice: "stay".into(), salt: String::new() },
        }
    }

    #[test]
    fn void_ranges_merge_and_answer_as_a_set_would() {
        let mut void = VoidSet::default();
        let mut naive = std::collections::BTreeSet::new();
        for (to_seq, seq) in [(5, 9), (1, 3), (8, 12), (20, 22), (2, 21), (30, 31), (40, 45)] {
            assert_eq!(
                void.gaps(to_seq + 1..seq),
                (to_seq + 1..seq).filter(|s| !naive.contains(s)).collect::<Vec<_>>()
            );
            void.insert(to_seq + 1..seq);
            naive.extend(to_seq + 1..seq);
            for s in 0..50 {
                assert_eq!(void.contains(&s), naive.contains(&s), "{s} after ({to_seq}, {seq})");
            }
            assert_eq!(void.len(), naive.len() as i64);
        }
    }

    /// 5,000 rollbacks and 5,000 seals: reading the void posts, checking every post against
    /// them, a new rollback's voided posts, the revealed topics and a seal's lookups take a
    /// number of steps proportional to the log, where the lists they replace took its square
    /// (12.5 million steps for the rollbacks alone).
    #[test]
    fn thousands_of_rollbacks_and_seals_cost_a_fixed_budget_per_item() {
        const N: i64 = 5_000;
        // Every rollback back to post 1 (each voids the whole log since), then disjoint ones.
        let all_back: Vec<(i64, i64)> = (0..N).map(|i| (1, 3 + 2 * i)).collect();
        let disjoint: Vec<(i64, i64)> = (0..N).map(|i| (3 * i + 1, 3 * i + 3)).collect();
        for rollbacks in [all_back, disjoint] {
            let start = work_done();
            let void = VoidSet::of_rollbacks(rollbacks.iter().copied());
            let last = rollbacks.last().map_or(0, |r| r.1);
            let void_count = (1..=last).filter(|s| void.contains(s)).count();
            assert!(void_count > 0);
            // The next rollback, back to post 1.
            let voided = void.gaps(2..last + 2);
            assert!(!voided.is_empty());
            let steps = work_done() - start;
            assert!(steps <= 6 * N as u64, "{steps} steps for {N} rollbacks");
        }

        let start = work_done();
        let mut book = SealBook::default();
        for i in 0..N {
            let (role, side) =
                if i % 2 == 0 { (SealRole::Attacker, "union") } else { (SealRole::Defender, "confederate") };
            book.insert(seal(i + 1, &format!("topic-{}", i / 2), role, side));
        }
        assert_eq!(book.revealed_topics().len() as i64, N / 2);
        for i in 0..N / 2 {
            assert!(book.pair(&format!("topic-{i}")).is_some());
        }
        book.void(N / 2..N + 1);
        assert!(book.revealed_topics().len() as i64 <= N / 4 + 1);
        let steps = work_done() - start;
        assert!(steps <= 8 * N as u64, "{steps} steps for {N} seals");
    }
}
