//! Campaigns as the rules see them: their clock and settings, their scenario or ruleset, and
//! what a post to them decides.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

use adjutant_rules::{Clock, ClockFormat, DigitPositions};
use adjutant_store::{Campaign, NewOutcome, Post, Tail};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::AppError;

/// The sides of every campaign: Adjutant serves the American Civil War.
pub const SIDES: [&str; 2] = ["union", "confederate"];

/// Reads a side as players write it ("rebel" is the Short ACW Campaign's word for "confederate").
pub fn parse_side(text: &str) -> Option<&'static str> {
    match text.to_ascii_lowercase().as_str() {
        "union" => Some("union"),
        "confederate" | "rebel" => Some("confederate"),
        _ => None,
    }
}

/// How the campaign's clock reads a post's stamp, and how it rounds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignSettings {
    /// IANA time zone of the campaign's clock.
    #[serde(default = "default_zone")]
    #[schema(example = "America/New_York")]
    pub time_zone: String,
    /// `24h` (default) or `12h`: 0:05 reads 12:05 and 13:05 reads 1:05 on a 12-hour clock.
    #[serde(default = "default_clock")]
    #[schema(example = "24h")]
    pub clock: String,
    /// 9 takes the 9th and 10th decimals of √N (the seed's worked example, default); 8 takes the
    /// 8th and 9th (the wording of rule 5).
    #[serde(default = "default_first_digit", deserialize_with = "crate::whole_number::json")]
    #[schema(example = 9, minimum = 8, maximum = 9)]
    pub first_digit: u32,
    /// `exact` (default): round-half-up(100·A/(A+D′)). `one_decimal`: round 100/(A+D′) to one
    /// decimal first, as the seed's worked example does.
    #[serde(default = "default_rounding")]
    #[schema(example = "exact")]
    pub victory_rounding: String,
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
        }
    }
}

impl CampaignSettings {
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
        Ok(Clock { zone, format, digits })
    }
}

/// A stored campaign with its settings read.
#[derive(Debug, Clone)]
pub struct LoadedCampaign {
    pub campaign: Campaign,
    pub settings: CampaignSettings,
    pub clock: Clock,
}

impl LoadedCampaign {
    pub fn load(campaign: Campaign) -> Result<Self, AppError> {
        let settings: CampaignSettings = serde_json::from_str(&campaign.settings)
            .map_err(|e| AppError::Internal(format!("campaign {} settings: {e}", campaign.id)))?;
        let clock = settings.clock_of()?;
        Ok(Self { campaign, settings, clock })
    }
}

/// The scenario files campaigns can be created from, by name (the file name without `.toml`).
#[derive(Debug, Default)]
pub struct Scenarios {
    texts: BTreeMap<String, String>,
}

impl Scenarios {
    /// Reads every `*.toml` in `dir`; without the folder, the scenarios built into the binary.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let mut texts = BTreeMap::new();
        match std::fs::read_dir(dir) {
            Ok(entries) => {
                for entry in entries.flatten() {
                    let path = entry.path();
                    if path.extension().is_some_and(|e| e == "toml") {
                        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
                        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
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
        Ok(Self { texts })
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.texts.get(name).map(String::as_str)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.texts.keys().map(String::as_str)
    }
}

/// Scenarios shipped inside the binary.
const BUILT_IN: &[(&str, &str)] = &[];

/// What a post decides besides being stored.
#[derive(Debug, Default)]
pub struct Effects {
    pub outcomes: Vec<NewOutcome>,
    pub snapshot: Option<String>,
}

/// Applies a post to its campaign: the rules' verdict on it, given the tail of the log.
pub fn decide(_campaign: &LoadedCampaign, _tail: &Tail, _post: &Post) -> Result<Effects, AppError> {
    Ok(Effects::default())
}
