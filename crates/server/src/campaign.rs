//! Campaigns as the rules see them: their clock and settings, their scenario or ruleset, and
//! what a post to them decides.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use adjutant_rules::resolver::{self, Ruleset};
use adjutant_rules::result_time::ResultTime;
use adjutant_rules::short_acw::deadline::{Deadlines, Limit};
use adjutant_rules::short_acw::{self, GameState, Scenario, VictoryRounding};
use adjutant_rules::{Clock, ClockFormat, DigitPositions, Side};
use adjutant_store::Campaign;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use crate::log::{LogError, LogResult};

/// The sides of every campaign: Adjutant serves the American Civil War.
pub const SIDES: [&str; 2] = ["union", "confederate"];

/// The words for the two sides that the seeds use, each read as the side it names: `rebel` is
/// the Short ACW Campaign's and Chamberlain's word for the Confederates, `federal` the 25mm
/// rules', `yankee` Chamberlain's for the Union.
pub const SIDE_NAMES: [(&str, Side); 5] = [
    ("union", Side::Union),
    ("confederate", Side::Confederate),
    ("rebel", Side::Confederate),
    ("federal", Side::Union),
    ("yankee", Side::Union),
];

/// Reads a side as players write it, in lower case: one of [`SIDE_NAMES`].
pub fn parse_side(text: &str) -> Option<Side> {
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
    #[serde(default)]
    #[schema(example = "24h", schema_with = clock_schema)]
    pub clock: ClockSetting,
    /// 9 takes the 9th and 10th decimals of √N (the seed's worked example, default); 8 takes the
    /// 8th and 9th (the wording of rule 5).
    #[serde(default = "default_first_digit", deserialize_with = "crate::whole_number::json")]
    #[schema(example = 9, minimum = 8, maximum = 9)]
    pub first_digit: u32,
    /// `exact` (default): round-half-up(100·A/(A+D′)). `one_decimal`: round 100/(A+D′) to one
    /// decimal first, as the seed's worked example does.
    #[serde(default)]
    #[schema(schema_with = rounding_schema)]
    pub victory_rounding: VictoryRounding,
    /// The rules version of a campaign, recorded when it is created: its posts are decided and
    /// audited by it. 3 (the current rules, default for a new campaign: retreats named by the
    /// loser's hexes, casualty orders asked only where they count, the first deployment sealed);
    /// 2 and 1 the rules as they were (docs/rules/short-acw.md, "Rules versions"). A campaign
    /// stored without it was created under version 1.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "optional_version")]
    #[schema(example = 3, minimum = 1, maximum = 3, nullable = false)]
    pub rules_version: Option<u32>,
    /// When a battle's result time is (managed campaigns): `post` (default) the attack's stamp,
    /// as the seed says; `sealed_delay` the stamp plus a delay of 0 to 59.999 s from a hash chain
    /// the server committed to when the campaign was created (docs/fairness.md), so an attack
    /// cannot be aimed at a winning second. A campaign stored without it plays `post`.
    #[serde(default)]
    #[schema(schema_with = result_time_schema)]
    pub result_time: ResultTime,
    /// For `sealed_delay`: the hash chain's public commitment, drawn by the server when the
    /// campaign is created (never sent by a client).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub result_chain: Option<ResultChain>,
    /// Managed campaigns: how long each side has for its deployment, its player turn or an
    /// answer a battle waits for, counted from the moment that wait begins. An ISO 8601
    /// duration in days, hours, minutes and seconds, from `PT1M` to `P30D` (e.g. `PT48H`).
    /// Neither this nor `turn_deadline_at`: no deadlines.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    #[schema(
        example = "PT48H",
        nullable = false,
        pattern = "^P(?:[0-9]{1,2}D)?(?:T(?:[0-9]{1,3}H)?(?:[0-9]{1,5}M)?(?:[0-9]{1,7}S)?)?$"
    )]
    pub turn_deadline: Option<String>,
    /// Managed campaigns: each wait ends at this time of day (`HH:MM`, 24-hour) in the
    /// campaign's time zone, the first such time at least `turn_deadline_min` after it began.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    #[schema(example = "20:00", nullable = false, pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$")]
    pub turn_deadline_at: Option<String>,
    /// With `turn_deadline_at`: the least time a wait lasts (default `PT12H`), from `PT1M` to
    /// `P30D`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    #[schema(
        example = "PT12H",
        nullable = false,
        pattern = "^P(?:[0-9]{1,2}D)?(?:T(?:[0-9]{1,3}H)?(?:[0-9]{1,5}M)?(?:[0-9]{1,7}S)?)?$"
    )]
    pub turn_deadline_min: Option<String>,
    /// What the server does at a deadline: `end_turn` (default) ends the side's wait as posted
    /// so far, with the documented defaults; `moderator` decides nothing, marks the campaign
    /// overdue and leaves it to the moderator.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    #[schema(schema_with = missed_turn_schema, nullable = false)]
    pub missed_turn: Option<short_acw::deadline::MissedTurn>,
}

/// The shortest and longest deadline.
pub const DEADLINE_RANGE: (chrono::TimeDelta, chrono::TimeDelta) =
    (chrono::TimeDelta::minutes(1), chrono::TimeDelta::days(30));

/// Reads an ISO 8601 duration of days, hours, minutes and whole seconds (`P2D`, `PT48H`,
/// `P1DT12H30M`): years, months and weeks are refused, since a month's length varies.
pub fn parse_duration(text: &str) -> Option<chrono::TimeDelta> {
    let rest = text.strip_prefix('P')?;
    let (days, time) = match rest.split_once('T') {
        Some((days, time)) => (days, Some(time)),
        None => (rest, None),
    };
    let mut total = chrono::TimeDelta::zero();
    let mut any = false;
    let mut read = |part: &str, units: &[(char, i64)]| -> Option<()> {
        let mut number = String::new();
        let mut allowed = units.iter();
        for c in part.chars() {
            if c.is_ascii_digit() {
                number.push(c);
                continue;
            }
            let (_, seconds) = allowed.by_ref().find(|(unit, _)| *unit == c)?;
            if number.is_empty() || number.len() > 7 {
                return None;
            }
            total += chrono::TimeDelta::seconds(number.parse::<i64>().ok()? * seconds);
            number.clear();
            any = true;
        }
        number.is_empty().then_some(())
    };
    read(days, &[('D', 86_400)])?;
    if let Some(time) = time {
        if time.is_empty() {
            return None;
        }
        read(time, &[('H', 3_600), ('M', 60), ('S', 1)])?;
    }
    any.then_some(total)
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

/// How the campaign's clock writes the hour, as its settings name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ClockSetting {
    /// 0–23 hours (the default).
    #[default]
    #[serde(rename = "24h")]
    H24,
    /// 1–12 hours: 0:05 reads 12:05 and 13:05 reads 1:05.
    #[serde(rename = "12h")]
    H12,
}

impl ClockSetting {
    pub fn as_str(self) -> &'static str {
        match self {
            ClockSetting::H24 => "24h",
            ClockSetting::H12 => "12h",
        }
    }

    pub fn format(self) -> ClockFormat {
        match self {
            ClockSetting::H24 => ClockFormat::H24,
            ClockSetting::H12 => ClockFormat::H12,
        }
    }
}

impl std::fmt::Display for ClockSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A setting refused, named by its key in the settings (`time_zone`, `first_digit`): the
/// request's edge says where the settings sit (`body.settings.`, `query.`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingRefused {
    pub setting: &'static str,
    pub rule: &'static str,
    pub detail: String,
}

impl std::fmt::Display for SettingRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.setting, self.detail)
    }
}

/// An optional setting that, when sent, is a value: `null` is refused, as the schema says.
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

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

/// Every IANA zone the server knows, so a client cannot send one it would refuse: a pattern
/// that is the list of names, not an enum, since names such as `GMT0`, `GMT+0` and `GMT-0`
/// differ only in punctuation and client generators make one identifier of them.
pub fn time_zone_schema() -> utoipa::openapi::schema::Object {
    let names: Vec<String> = chrono_tz::TZ_VARIANTS.iter().map(|tz| time_zone_pattern_item(tz.name())).collect();
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .pattern(Some(format!("^(?:{})$", names.join("|"))))
        .description(Some(
            "An IANA time zone name (tz database), e.g. `UTC` (the default), `Europe/London` or \
             `America/New_York`; the pattern lists every name the server knows.",
        ))
        .examples([serde_json::json!("America/New_York")])
        .build()
}

/// A zone name as a literal alternative of the time-zone pattern: names hold letters, digits,
/// `/`, `_`, `-` and `+`, and only `+` means something outside a character class.
fn time_zone_pattern_item(name: &str) -> String {
    name.replace('+', "\\+")
}

fn clock_schema() -> utoipa::openapi::schema::Object {
    string_enum(["24h", "12h"], "24h")
}

fn result_time_schema() -> utoipa::openapi::schema::Object {
    string_enum(RESULT_TIMES, "post")
}

fn missed_turn_schema() -> utoipa::openapi::schema::Object {
    string_enum(["end_turn", "moderator"], "end_turn")
}

fn rounding_schema() -> utoipa::openapi::schema::Object {
    string_enum(["exact", "one_decimal"], "exact")
}

fn default_zone() -> String {
    "UTC".into()
}
fn default_first_digit() -> u32 {
    9
}

impl Default for CampaignSettings {
    fn default() -> Self {
        Self {
            time_zone: default_zone(),
            clock: ClockSetting::default(),
            first_digit: default_first_digit(),
            victory_rounding: VictoryRounding::default(),
            rules_version: None,
            result_time: ResultTime::default(),
            result_chain: None,
            turn_deadline: None,
            turn_deadline_at: None,
            turn_deadline_min: None,
            missed_turn: None,
        }
    }
}

impl CampaignSettings {
    /// The rules version the campaign plays under: as recorded, or 1 for a campaign recorded
    /// before versions were.
    pub fn rules_version(&self) -> u32 {
        self.rules_version.unwrap_or(1)
    }

    /// The campaign's clock, every setting the types leave open checked, naming the one at fault.
    pub fn clock_of(&self) -> Result<Clock, SettingRefused> {
        let zone = chrono_tz::Tz::from_str(&self.time_zone).map_err(|_| SettingRefused {
            setting: "time_zone",
            rule: "campaign.time_zone",
            detail: format!("{:?} is not an IANA time zone (for example UTC or America/New_York)", self.time_zone),
        })?;
        let digits = DigitPositions::from_first(self.first_digit).ok_or_else(|| SettingRefused {
            setting: "first_digit",
            rule: "result_number.digit_positions",
            detail: "the result number takes the 9th and 10th decimals (9) or the 8th and 9th (8)".into(),
        })?;
        if !(1..=adjutant_rules::RULES_VERSION).contains(&self.rules_version()) {
            return Err(SettingRefused {
                setting: "rules_version",
                rule: "campaign.rules_version",
                detail: format!("the rules version is 1 to {}", adjutant_rules::RULES_VERSION),
            });
        }
        self.deadlines()?;
        Ok(Clock { zone, format: self.clock.format(), digits })
    }

    /// The campaign's deadlines, if it has any, every setting checked.
    pub fn deadlines(&self) -> Result<Option<Deadlines>, SettingRefused> {
        let duration = |setting: &'static str, text: &str| {
            parse_duration(text).filter(|d| (DEADLINE_RANGE.0..=DEADLINE_RANGE.1).contains(d)).ok_or_else(|| {
                SettingRefused {
                    setting,
                    rule: "campaign.deadline",
                    detail: format!(
                        "{text:?} is not a duration from PT1M to P30D in days, hours, minutes and seconds (e.g. PT48H or P1DT12H)"
                    ),
                }
            })
        };
        let limit = match (&self.turn_deadline, &self.turn_deadline_at) {
            (Some(_), Some(_)) => {
                return Err(SettingRefused {
                    setting: "turn_deadline_at",
                    rule: "campaign.deadline",
                    detail: "set `turn_deadline` (a duration) or `turn_deadline_at` (a time of day), not both".into(),
                })
            }
            (Some(text), None) => Limit::After(duration("turn_deadline", text)?),
            (None, Some(at)) => {
                let time = (at.len() == 5)
                    .then(|| chrono::NaiveTime::parse_from_str(at, "%H:%M").ok())
                    .flatten()
                    .ok_or_else(|| SettingRefused {
                        setting: "turn_deadline_at",
                        rule: "campaign.deadline",
                        detail: format!("{at:?} is not a time of day written HH:MM (00:00 to 23:59)"),
                    })?;
                let at_least = match &self.turn_deadline_min {
                    Some(text) => duration("turn_deadline_min", text)?,
                    None => chrono::TimeDelta::hours(12),
                };
                Limit::AtTimeOfDay { at: time, at_least }
            }
            (None, None) => {
                for (setting, set) in [
                    ("turn_deadline_min", self.turn_deadline_min.is_some()),
                    ("missed_turn", self.missed_turn.is_some()),
                ] {
                    if set {
                        return Err(SettingRefused {
                            setting,
                            rule: "campaign.deadline",
                            detail: "this setting needs a deadline: set `turn_deadline` or `turn_deadline_at`".into(),
                        });
                    }
                }
                return Ok(None);
            }
        };
        if self.turn_deadline.is_some() && self.turn_deadline_min.is_some() {
            return Err(SettingRefused {
                setting: "turn_deadline_min",
                rule: "campaign.deadline",
                detail: "`turn_deadline_min` goes with `turn_deadline_at`; `turn_deadline` is the whole time".into(),
            });
        }
        Ok(Some(Deadlines { limit, missed: self.missed_turn.unwrap_or_default() }))
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
    /// The hash the chain starts from ([`genesis`]), worked out once.
    pub genesis: String,
}

impl LoadedCampaign {
    pub fn load(campaign: Campaign, scenarios: &Scenarios) -> LogResult<Self> {
        let broken = |what: String| LogError::Broken(format!("campaign {}: {what}", campaign.id));
        let settings: CampaignSettings =
            serde_json::from_str(&campaign.settings).map_err(|e| broken(format!("settings: {e}")))?;
        let clock = settings.clock_of().map_err(|e| broken(format!("settings: {e}")))?;
        let game = match (campaign.mode.as_str(), &campaign.scenario_text, &campaign.ruleset) {
            ("managed", Some(text), _) => {
                let name = campaign.scenario.clone().unwrap_or_default();
                let scenario = scenarios.parse(&name, text).map_err(|e| broken(e.join("; ")))?;
                Game::Managed {
                    scenario,
                    settings: short_acw::Settings {
                        clock,
                        victory_rounding: settings.victory_rounding,
                        rules_version: settings.rules_version(),
                        deadlines: settings.deadlines().map_err(|e| broken(format!("settings: {e}")))?,
                    },
                }
            }
            ("resolver", _, Some(name)) => Game::Resolver {
                ruleset: resolver::ruleset(name).ok_or_else(|| broken(format!("unknown ruleset {name}")))?,
                rules_version: settings.rules_version(),
            },
            _ => return Err(broken("no scenario or ruleset".into())),
        };
        let genesis = genesis(&campaign);
        Ok(Self { campaign, settings, clock, game, genesis })
    }

    /// Whether the side that deploys first is sealed until the other has (a managed campaign of
    /// rules version 3 on): its deployment post's body is withheld from every reader until then.
    pub fn seals_deployment(&self) -> bool {
        matches!(&self.game, Game::Managed { settings, .. } if settings.seals_deployment())
    }

    pub fn scenario(&self) -> Option<&Scenario> {
        match &self.game {
            Game::Managed { scenario, .. } => Some(scenario),
            Game::Resolver { .. } => None,
        }
    }

    /// The managed game's state after the snapshot `snapshot` (or the opening state).
    pub fn state_from(&self, snapshot: Option<&str>) -> LogResult<Option<GameState>> {
        let Some(scenario) = self.scenario() else { return Ok(None) };
        match snapshot {
            Some(text) => serde_json::from_str(text)
                .map(Some)
                .map_err(|e| LogError::Broken(format!("campaign {} snapshot: {e}", self.campaign.id))),
            None => Ok(Some(self.opening_state(scenario))),
        }
    }

    /// The state before any post: with deadlines, both sides' deployments waited for since the
    /// campaign was created.
    pub fn opening_state(&self, scenario: &Scenario) -> GameState {
        let mut state = GameState::new(scenario);
        if let Game::Managed { settings: game, .. } = &self.game {
            if let Some(deadlines) = &game.deadlines {
                state.clock =
                    Some(short_acw::deadline::start(&state, deadlines, self.clock.zone, self.campaign.created_at));
            }
        }
        state
    }

    /// The campaign's deadlines, if it has any.
    pub fn deadlines(&self) -> Option<Deadlines> {
        match &self.game {
            Game::Managed { settings, .. } => settings.deadlines,
            Game::Resolver { .. } => None,
        }
    }
}

/// The scenario files campaigns can be created from, by name (the file name without `.toml`),
/// and a cache of parsed scenarios by their text.
#[derive(Default)]
pub struct Scenarios {
    texts: BTreeMap<String, String>,
    parsed: Mutex<HashMap<[u8; 32], Arc<Scenario>>>,
    problems: Vec<String>,
}

impl Scenarios {
    /// Reads and checks every `*.toml` in `dir`, besides the scenarios built into the binary
    /// (a file of the same name replaces one). A file that cannot be read or fails its checks is
    /// left out and named in [`Scenarios::problems`]: one broken file never stops the server,
    /// and the shipped `short-acw` is always offered.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let mut texts: BTreeMap<String, String> =
            BUILT_IN.iter().map(|(name, text)| ((*name).to_owned(), (*text).to_owned())).collect();
        let mut problems = vec![];
        if let Ok(entries) = std::fs::read_dir(dir) {
            let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
            paths.sort();
            for path in paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "toml")) {
                let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
                if crate::routes::scenarios::is_uploaded_id(&name) {
                    // Such a name would read as an uploaded scenario's id.
                    problems.push(format!("{}: left out: 64 hex digits name uploaded scenarios", path.display()));
                    continue;
                }
                let checked = std::fs::read_to_string(&path).map_err(|e| e.to_string()).and_then(|text| {
                    Scenario::from_toml(&path.display().to_string(), &text)
                        .map(|_| text)
                        .map_err(|errors| errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))
                });
                match checked {
                    Ok(text) => {
                        texts.insert(name, text);
                    }
                    Err(e) => problems.push(format!("{}: left out: {e}", path.display())),
                }
            }
        }
        Ok(Self { texts, parsed: Mutex::default(), problems })
    }

    /// The scenario files left out when the server started, each with why.
    pub fn problems(&self) -> &[String] {
        &self.problems
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

    #[test]
    fn a_broken_scenario_file_is_left_out_and_named_and_the_shipped_one_is_always_offered() {
        let dir = std::env::temp_dir().join(format!("adjutant-scenarios-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("broken.toml"), "name = \"Broken\"\n[map\ncolumns = 3").unwrap();
        let valley = BUILT_IN[0].1.replace("name = \"short-acw\"", "name = \"valley\"");
        std::fs::write(dir.join("valley.toml"), valley).unwrap();
        std::fs::write(dir.join("notes.txt"), "not a scenario").unwrap();
        let scenarios = Scenarios::load(&dir).unwrap();
        let names: Vec<&str> = scenarios.names().collect();
        assert_eq!(names, ["short-acw", "valley"]);
        assert_eq!(scenarios.problems().len(), 1, "{:?}", scenarios.problems());
        assert!(scenarios.problems()[0].contains("broken.toml"), "{:?}", scenarios.problems());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn durations_are_days_hours_minutes_and_seconds() {
        assert_eq!(parse_duration("PT48H"), Some(chrono::TimeDelta::hours(48)));
        assert_eq!(parse_duration("P1DT12H30M"), Some(chrono::TimeDelta::minutes(36 * 60 + 30)));
        assert_eq!(parse_duration("PT90S"), Some(chrono::TimeDelta::seconds(90)));
        for refused in ["", "P", "PT", "48H", "P1M", "P1W", "PT1H30", "PT-1H", "P1Y", "PTH"] {
            assert_eq!(parse_duration(refused), None, "{refused:?}");
        }
    }
}
