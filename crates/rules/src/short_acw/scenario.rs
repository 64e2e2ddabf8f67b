//! Scenario files: the map, the orders of battle, deployment, victory and reinforcement
//! settings of a managed Short ACW campaign, read from TOML.
//!
//! The format is documented in `config/scenarios/short-acw.toml` (the shipped scenario) and in
//! `docs/rules/short-acw.md`. Loading checks the whole file and reports every problem at once,
//! each naming the file, the place (`line:column` for TOML syntax and type errors, the item
//! such as `map.cities[3]` or `units.union[2]` for rule errors) and the problem.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize, Serializer};

use super::hex::Hex;
use crate::Side;

/// The arm of service of a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arm {
    Infantry,
    Cavalry,
    Artillery,
    Hq,
}

impl Arm {
    /// Seed: "A Maximum of three Infantry or Cavalry Units may be in one hex at the same time.
    /// Artillery and HQ units may stack in addition to this limit of 3."
    pub fn counts_for_stacking(self) -> bool {
        matches!(self, Arm::Infantry | Arm::Cavalry)
    }

    pub fn name(self) -> &'static str {
        match self {
            Arm::Infantry => "infantry",
            Arm::Cavalry => "cavalry",
            Arm::Artillery => "artillery",
            Arm::Hq => "HQ",
        }
    }
}

/// The shared edge of two adjacent hexes, written `0506/0606` (lower hex first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hexside(pub Hex, pub Hex);

impl Hexside {
    pub fn between(a: Hex, b: Hex) -> Hexside {
        if a <= b {
            Hexside(a, b)
        } else {
            Hexside(b, a)
        }
    }

    fn parse(text: &str) -> Result<Hexside, String> {
        let (a, b) =
            text.split_once('/').ok_or_else(|| format!("`{text}` is not a hexside: write two hexes as 0506/0606"))?;
        Ok(Hexside::between(a.trim().parse()?, b.trim().parse()?))
    }
}

impl fmt::Display for Hexside {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.0, self.1)
    }
}

impl Serialize for Hexside {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BridgeKind {
    Road,
    Rail,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Terrain {
    Clear,
    Woods,
    City,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct City {
    pub letter: char,
    pub name: String,
    pub hex: Hex,
    /// Who holds the city when the campaign starts.
    pub control: Option<Side>,
}

/// A unit of an order of battle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnitSpec {
    pub id: String,
    pub name: String,
    pub side: Side,
    pub arm: Arm,
    pub factors: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VictoryLevel {
    Major,
    Minor,
}

/// What a victory condition asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum VictoryGoal {
    /// Hold the city at the end of a player turn, by the given turn if any.
    Capture { city: char, by_turn: Option<u32> },
    /// Reach the end of the last turn without the enemy winning.
    HoldOut,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VictoryCondition {
    pub side: Side,
    pub level: VictoryLevel,
    pub goal: VictoryGoal,
    /// The seed's words for it.
    pub text: String,
}

/// Movement allowances and the stacking limit (docs/rules/short-acw.md, ruling 7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MovementRules {
    pub infantry: u32,
    pub cavalry: u32,
    pub artillery: u32,
    pub hq: u32,
    /// Cost of a step into clear or city terrain.
    pub step: u32,
    /// Cost of a step into woods or across a river hexside without a bridge.
    pub woods_or_river: u32,
    /// Cost of a step across a river at a road or rail bridge.
    pub bridge: u32,
    /// Infantry and cavalry units allowed in one hex at the end of a move.
    pub stacking_limit: u32,
}

impl MovementRules {
    pub fn allowance(&self, arm: Arm) -> u32 {
        match arm {
            Arm::Infantry => self.infantry,
            Arm::Cavalry => self.cavalry,
            Arm::Artillery => self.artillery,
            Arm::Hq => self.hq,
        }
    }
}

/// Reinforcement settings and costs (docs/rules/short-acw.md, ruling 8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReinforcementRules {
    /// Points the Union receives at the start of each of its player turns.
    pub union_points_per_turn: u32,
    /// The cities whose Rebel control counts for the Rebel reinforcement post (at most 6).
    pub confederate_cities: Vec<char>,
    pub infantry_factor: u32,
    pub cavalry_factor: u32,
    pub artillery_factor: u32,
    /// HQ factors cannot be bought when this is absent.
    #[serde(default)]
    pub hq_factor: Option<u32>,
    pub new_unit: u32,
}

impl ReinforcementRules {
    pub fn factor_cost(&self, arm: Arm) -> Option<u32> {
        match arm {
            Arm::Infantry => Some(self.infantry_factor),
            Arm::Cavalry => Some(self.cavalry_factor),
            Arm::Artillery => Some(self.artillery_factor),
            Arm::Hq => self.hq_factor,
        }
    }
}

/// A checked scenario.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Scenario {
    pub file: String,
    pub name: String,
    pub title: String,
    pub note: String,
    pub first_side: Side,
    pub turns: u32,
    pub columns: u8,
    pub rows: u8,
    pub woods: BTreeSet<Hex>,
    pub cities: Vec<City>,
    pub rivers: BTreeMap<Hexside, String>,
    pub bridges: BTreeMap<Hexside, BridgeKind>,
    pub rail_hexes: BTreeSet<Hex>,
    /// Rail hexes joined by track (consecutive hexes of a rail line).
    pub rail_links: BTreeSet<Hexside>,
    /// Hexes controlled by a side before anyone moves (cities included).
    pub start_control: BTreeMap<Hex, Side>,
    /// The cities each side deploys within one hex of.
    pub deployment: BTreeMap<Side, Vec<char>>,
    pub units: Vec<UnitSpec>,
    pub victory: Vec<VictoryCondition>,
    pub movement: MovementRules,
    pub reinforcement: ReinforcementRules,
}

/// One problem in a scenario file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{file}:{place}: {problem}")]
pub struct ScenarioError {
    pub file: String,
    /// `line:column` or an item path such as `map.cities[3]`.
    pub place: String,
    /// The rule broken (`scenario.rail_gap`): one of [`rule`]'s names.
    pub rule: &'static str,
    pub problem: String,
}

/// The names of the rules a scenario can break, as [`ScenarioError::rule`] gives them.
pub mod rule {
    /// The text is not TOML, or a field is missing, unknown or of the wrong type (`place` is
    /// `line:column`).
    pub const SYNTAX: &str = "scenario.syntax";
    pub const MAP_SIZE: &str = "scenario.map_size";
    pub const TURNS: &str = "scenario.turns";
    /// A hex not written `CCRR`.
    pub const HEX: &str = "scenario.hex";
    pub const HEX_OFF_MAP: &str = "scenario.hex_off_map";
    pub const HEX_TWICE: &str = "scenario.hex_twice";
    pub const CITY_LETTER: &str = "scenario.city_letter";
    pub const CITY_LETTER_TWICE: &str = "scenario.city_letter_twice";
    pub const CITY_HEX_TWICE: &str = "scenario.city_hex_twice";
    pub const CITY_IN_WOODS: &str = "scenario.city_in_woods";
    /// A city letter that deployment, victory or reinforcement names is not on the map.
    pub const UNKNOWN_CITY: &str = "scenario.unknown_city";
    /// A hexside not written as two hexes, `0506/0606`.
    pub const HEXSIDE: &str = "scenario.hexside";
    pub const HEXSIDE_NOT_ADJACENT: &str = "scenario.hexside_not_adjacent";
    pub const HEXSIDE_TWICE: &str = "scenario.hexside_twice";
    pub const BRIDGE_OFF_RIVER: &str = "scenario.bridge_off_river";
    pub const BRIDGE_TWICE: &str = "scenario.bridge_twice";
    pub const RAIL_EMPTY: &str = "scenario.rail_empty";
    pub const RAIL_GAP: &str = "scenario.rail_gap";
    pub const START_CONTROL: &str = "scenario.start_control";
    /// A side with no deployment cities.
    pub const DEPLOYMENT_NO_CITY: &str = "scenario.deployment_no_city";
    pub const ORDER_OF_BATTLE_EMPTY: &str = "scenario.order_of_battle_empty";
    pub const UNIT_ID: &str = "scenario.unit_id";
    pub const UNIT_ID_TWICE: &str = "scenario.unit_id_twice";
    pub const FACTORS: &str = "scenario.factors";
    pub const MOVEMENT: &str = "scenario.movement";
    pub const VICTORY_GOAL: &str = "scenario.victory_goal";
    pub const VICTORY_TURN: &str = "scenario.victory_turn";
    pub const REINFORCEMENT_CITIES: &str = "scenario.reinforcement_cities";
    /// A name or text that players read (a title, a city's or unit's name, a victory's words)
    /// that is not one line of at most its length.
    pub const WORDING: &str = "scenario.wording";
}

/// How strictly a scenario is checked. Files the operator installs keep the limits they have
/// always had, since campaigns created from them are read again with them; a scenario a
/// moderator uploads is held to tighter ones, so every map can be drawn and every number fits
/// the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Columns and rows, each at most this many.
    pub map_side: u8,
    /// A unit's factors and every movement allowance and cost, from 1 to this (`None`: any).
    pub max_number: Option<u32>,
    /// Whether each side must name at least one deployment city.
    pub deployment_named: bool,
    /// Whether the words players read (the title and note, the names of cities, rivers, rail
    /// lines and units, the victory conditions' text) must each be one line of at most
    /// [`WORDING_MAX`] characters (the note: [`NOTE_MAX`]), with nothing invisible.
    pub one_line_wording: bool,
}

/// The longest name or text of an uploaded scenario, in characters.
pub const WORDING_MAX: usize = 200;
/// The longest note of an uploaded scenario, in characters.
pub const NOTE_MAX: usize = 1000;

impl Limits {
    /// The operator's scenario files (and campaigns already stored).
    pub const FILE: Limits =
        Limits { map_side: 99, max_number: None, deployment_named: false, one_line_wording: false };
    /// A scenario a moderator uploads: at most 40 × 40 hexes, factors and movement 1 to 99,
    /// each side deploying at some city.
    pub const UPLOAD: Limits =
        Limits { map_side: 40, max_number: Some(99), deployment_named: true, one_line_wording: true };
}

// ---- the file as written -------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    title: String,
    #[serde(default)]
    note: String,
    first_side: Side,
    turns: u32,
    map: RawMap,
    deployment: BTreeMap<Side, Vec<String>>,
    units: RawUnits,
    victory: Vec<RawVictory>,
    movement: MovementRules,
    reinforcement: RawReinforcement,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMap {
    columns: u8,
    rows: u8,
    #[serde(default)]
    woods: Vec<String>,
    cities: Vec<RawCity>,
    #[serde(default)]
    rivers: Vec<RawRiver>,
    #[serde(default)]
    bridges: Vec<RawBridge>,
    #[serde(default)]
    rail: Vec<RawRail>,
    #[serde(default)]
    start_control: BTreeMap<Side, Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCity {
    letter: String,
    #[serde(default)]
    name: String,
    hex: String,
    #[serde(default)]
    control: Option<Side>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRiver {
    name: String,
    hexsides: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBridge {
    hexside: String,
    kind: BridgeKind,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRail {
    name: String,
    hexes: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUnits {
    union: Vec<RawUnit>,
    confederate: Vec<RawUnit>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUnit {
    id: String,
    name: String,
    arm: Arm,
    factors: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVictory {
    side: Side,
    level: VictoryLevel,
    #[serde(default)]
    capture: Option<String>,
    #[serde(default)]
    by_turn: Option<u32>,
    #[serde(default)]
    hold_out: bool,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReinforcement {
    union_points_per_turn: u32,
    confederate_cities: Vec<String>,
    infantry_factor: u32,
    cavalry_factor: u32,
    artillery_factor: u32,
    #[serde(default)]
    hq_factor: Option<u32>,
    new_unit: u32,
}

/// Collects problems while checking a scenario.
struct Checker<'a> {
    file: &'a str,
    errors: Vec<ScenarioError>,
}

impl Checker<'_> {
    fn error(&mut self, place: impl Into<String>, rule: &'static str, problem: impl Into<String>) {
        self.errors.push(ScenarioError {
            file: self.file.to_string(),
            place: place.into(),
            rule,
            problem: problem.into(),
        });
    }
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

impl Scenario {
    /// Reads and checks a scenario file. `file_name` is used only in error messages.
    pub fn from_toml(file_name: &str, text: &str) -> Result<Scenario, Vec<ScenarioError>> {
        Scenario::checked(file_name, text, Limits::FILE)
    }

    /// Reads and checks a scenario under the given limits ([`Limits::UPLOAD`] for a moderator's
    /// upload), every problem reported.
    pub fn checked(file_name: &str, text: &str, limits: Limits) -> Result<Scenario, Vec<ScenarioError>> {
        let mut check = Checker { file: file_name, errors: vec![] };
        let raw: RawScenario = match toml::from_str(text) {
            Ok(raw) => raw,
            Err(e) => {
                let place = match e.span() {
                    Some(span) => {
                        let (line, column) = line_column(text, span.start);
                        format!("{line}:{column}")
                    }
                    None => "1:1".to_string(),
                };
                check.error(place, rule::SYNTAX, e.message().trim().to_string());
                return Err(check.errors);
            }
        };
        let scenario = check_scenario(&mut check, file_name, raw, limits);
        if check.errors.is_empty() {
            Ok(scenario)
        } else {
            Err(check.errors)
        }
    }

    /// The line that says the map is a stand-in, where players look (the state, the map's
    /// title, the campaign page, the first forum text): the first sentence of a `note` that
    /// begins "Stand-in map", as the shipped scenario's does ("Stand-in map: the seed publishes
    /// no map"). `None` for a scenario whose map is real.
    pub fn stand_in_map(&self) -> Option<&str> {
        let note = self.note.trim();
        if !note.starts_with("Stand-in map") {
            return None;
        }
        Some(note.split_once(". ").map_or(note.trim_end_matches('.'), |(first, _)| first))
    }

    /// The scenario shipped with Adjutant (`config/scenarios/short-acw.toml`).
    pub fn short_acw() -> Scenario {
        match Scenario::from_toml("short-acw.toml", SHORT_ACW_TOML) {
            Ok(s) => s,
            // The shipped file is checked by a test; this cannot happen in a released build.
            Err(errors) => panic!("the shipped short-acw scenario is broken: {errors:?}"),
        }
    }

    pub fn on_map(&self, hex: Hex) -> bool {
        (1..=self.columns).contains(&hex.col) && (1..=self.rows).contains(&hex.row)
    }

    pub fn on_edge(&self, hex: Hex) -> bool {
        hex.col == 1 || hex.row == 1 || hex.col == self.columns || hex.row == self.rows
    }

    /// The neighbours of a hex that lie on the map.
    pub fn neighbours(&self, hex: Hex) -> Vec<Hex> {
        hex.neighbours().into_iter().filter(|h| self.on_map(*h)).collect()
    }

    pub fn terrain(&self, hex: Hex) -> Terrain {
        if self.woods.contains(&hex) {
            Terrain::Woods
        } else if self.city_at(hex).is_some() {
            Terrain::City
        } else {
            Terrain::Clear
        }
    }

    pub fn city_at(&self, hex: Hex) -> Option<&City> {
        self.cities.iter().find(|c| c.hex == hex)
    }

    pub fn city(&self, letter: char) -> Option<&City> {
        self.cities.iter().find(|c| c.letter == letter)
    }

    pub fn river_between(&self, a: Hex, b: Hex) -> bool {
        self.rivers.contains_key(&Hexside::between(a, b))
    }

    pub fn bridge_between(&self, a: Hex, b: Hex) -> Option<BridgeKind> {
        self.bridges.get(&Hexside::between(a, b)).copied()
    }

    pub fn unit(&self, id: &str) -> Option<&UnitSpec> {
        self.units.iter().find(|u| u.id == id)
    }

    /// The hexes a side may deploy in: its deployment cities and the hexes next to them.
    pub fn deployment_zone(&self, side: Side) -> BTreeSet<Hex> {
        let mut zone = BTreeSet::new();
        for letter in self.deployment.get(&side).into_iter().flatten() {
            if let Some(city) = self.city(*letter) {
                zone.insert(city.hex);
                zone.extend(self.neighbours(city.hex));
            }
        }
        zone
    }
}

/// The shipped scenario's text.
pub const SHORT_ACW_TOML: &str = include_str!("../../../../config/scenarios/short-acw.toml");

fn letter(check: &mut Checker, place: &str, text: &str) -> Option<char> {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_uppercase() => Some(c),
        _ => {
            check.error(place, rule::CITY_LETTER, format!("`{text}` is not a city letter (one capital letter, A–Z)"));
            None
        }
    }
}

/// Whether `text` is one line of 1 to `max` characters with no control or invisible character
/// and no space at either end.
fn one_line(text: &str, max: usize) -> bool {
    (1..=max).contains(&text.chars().count())
        && !text.chars().any(|c| c.is_control() || c == '\u{2028}' || c == '\u{2029}' || crate::words::invisible(c))
        && text.trim() == text
}

/// The words of a scenario that players read, each with its place.
fn wording(raw: &RawScenario) -> Vec<(String, &str, usize)> {
    let mut words = vec![
        ("name".to_owned(), raw.name.as_str(), WORDING_MAX),
        ("title".to_owned(), raw.title.as_str(), WORDING_MAX),
    ];
    if !raw.note.is_empty() {
        words.push(("note".to_owned(), raw.note.as_str(), NOTE_MAX));
    }
    for (i, city) in raw.map.cities.iter().enumerate() {
        if !city.name.is_empty() {
            words.push((format!("map.cities[{i}].name"), city.name.as_str(), WORDING_MAX));
        }
    }
    for (i, river) in raw.map.rivers.iter().enumerate() {
        words.push((format!("map.rivers[{i}].name"), river.name.as_str(), WORDING_MAX));
    }
    for (i, line) in raw.map.rail.iter().enumerate() {
        words.push((format!("map.rail[{i}].name"), line.name.as_str(), WORDING_MAX));
    }
    for (key, list) in [("union", &raw.units.union), ("confederate", &raw.units.confederate)] {
        for (i, unit) in list.iter().enumerate() {
            words.push((format!("units.{key}[{i}].name"), unit.name.as_str(), WORDING_MAX));
        }
    }
    for (i, v) in raw.victory.iter().enumerate() {
        words.push((format!("victory[{i}].text"), v.text.as_str(), WORDING_MAX));
    }
    words
}

fn check_scenario(check: &mut Checker, file: &str, raw: RawScenario, limits: Limits) -> Scenario {
    if limits.one_line_wording {
        for (place, text, max) in wording(&raw) {
            if !one_line(text, max) {
                check.error(
                    place,
                    rule::WORDING,
                    format!("this is read by players: one line of 1 to {max} characters, no control or invisible character, no space at either end"),
                );
            }
        }
    }
    let (columns, rows) = (raw.map.columns, raw.map.rows);
    let most = limits.map_side;
    if !(2..=most).contains(&columns) || !(2..=most).contains(&rows) {
        check.error("map", rule::MAP_SIZE, format!("the map must be 2 to {most} hexes each way, not {columns}×{rows}"));
    }
    if raw.turns == 0 {
        check.error("turns", rule::TURNS, "a campaign needs at least one turn");
    }
    let on_map = |h: Hex| (1..=columns).contains(&h.col) && (1..=rows).contains(&h.row);
    let hex_at = |check: &mut Checker, place: String, text: &str| -> Option<Hex> {
        match text.parse::<Hex>() {
            Ok(h) if on_map(h) => Some(h),
            Ok(h) => {
                check.error(
                    place,
                    rule::HEX_OFF_MAP,
                    format!("unknown hex {h}: the map is {columns} columns by {rows} rows"),
                );
                None
            }
            Err(e) => {
                check.error(place, rule::HEX, e);
                None
            }
        }
    };

    let mut woods = BTreeSet::new();
    for (i, text) in raw.map.woods.iter().enumerate() {
        if let Some(h) = hex_at(check, format!("map.woods[{i}]"), text) {
            if !woods.insert(h) {
                check.error(format!("map.woods[{i}]"), rule::HEX_TWICE, format!("hex {h} is listed twice"));
            }
        }
    }

    let mut cities: Vec<City> = vec![];
    for (i, raw_city) in raw.map.cities.iter().enumerate() {
        let place = format!("map.cities[{i}]");
        let l = letter(check, &place, &raw_city.letter);
        let h = hex_at(check, format!("{place}.hex"), &raw_city.hex);
        if let (Some(l), Some(h)) = (l, h) {
            if cities.iter().any(|c| c.letter == l) {
                check.error(&place, rule::CITY_LETTER_TWICE, format!("city letter {l} is used twice"));
            } else if let Some(other) = cities.iter().find(|c| c.hex == h) {
                check.error(&place, rule::CITY_HEX_TWICE, format!("hex {h} already holds city {}", other.letter));
            } else if woods.contains(&h) {
                check.error(&place, rule::CITY_IN_WOODS, format!("hex {h} is both woods and city {l}"));
            } else {
                cities.push(City { letter: l, name: raw_city.name.clone(), hex: h, control: raw_city.control });
            }
        }
    }
    let city_letter = |check: &mut Checker, place: String, text: &str| -> Option<char> {
        let l = letter(check, &place, text)?;
        if cities.iter().any(|c| c.letter == l) {
            Some(l)
        } else {
            check.error(place, rule::UNKNOWN_CITY, format!("there is no city {l} on the map"));
            None
        }
    };

    let hexside_at = |check: &mut Checker, place: String, text: &str| -> Option<Hexside> {
        let side = match Hexside::parse(text) {
            Ok(s) => s,
            Err(e) => {
                check.error(place, rule::HEXSIDE, e);
                return None;
            }
        };
        for h in [side.0, side.1] {
            if !on_map(h) {
                check.error(
                    place,
                    rule::HEX_OFF_MAP,
                    format!("unknown hex {h}: the map is {columns} columns by {rows} rows"),
                );
                return None;
            }
        }
        if !side.0.is_adjacent(side.1) {
            check.error(
                place,
                rule::HEXSIDE_NOT_ADJACENT,
                format!("{} and {} are not adjacent, so they share no hexside", side.0, side.1),
            );
            return None;
        }
        Some(side)
    };

    let mut rivers = BTreeMap::new();
    for (i, river) in raw.map.rivers.iter().enumerate() {
        for (j, text) in river.hexsides.iter().enumerate() {
            let place = format!("map.rivers[{i}].hexsides[{j}]");
            if let Some(side) = hexside_at(check, place.clone(), text) {
                if rivers.insert(side, river.name.clone()).is_some() {
                    check.error(place, rule::HEXSIDE_TWICE, format!("hexside {side} is listed twice"));
                }
            }
        }
    }
    let mut bridges = BTreeMap::new();
    for (i, bridge) in raw.map.bridges.iter().enumerate() {
        let place = format!("map.bridges[{i}]");
        if let Some(side) = hexside_at(check, place.clone(), &bridge.hexside) {
            if !rivers.contains_key(&side) {
                check.error(
                    place,
                    rule::BRIDGE_OFF_RIVER,
                    format!("hexside {side} has no river, so it cannot have a bridge"),
                );
            } else if bridges.insert(side, bridge.kind).is_some() {
                check.error(place, rule::BRIDGE_TWICE, format!("hexside {side} already has a bridge"));
            }
        }
    }

    let mut rail_hexes = BTreeSet::new();
    let mut rail_links = BTreeSet::new();
    for (i, line) in raw.map.rail.iter().enumerate() {
        let mut previous: Option<Hex> = None;
        if line.hexes.is_empty() {
            check.error(format!("map.rail[{i}]"), rule::RAIL_EMPTY, format!("rail line {} has no hexes", line.name));
        }
        for (j, text) in line.hexes.iter().enumerate() {
            let place = format!("map.rail[{i}].hexes[{j}]");
            let Some(h) = hex_at(check, place.clone(), text) else {
                previous = None;
                continue;
            };
            if let Some(p) = previous {
                if !p.is_adjacent(h) {
                    check.error(
                        place,
                        rule::RAIL_GAP,
                        format!("rail line {}: {h} does not touch the hex before it, {p}", line.name),
                    );
                } else {
                    rail_links.insert(Hexside::between(p, h));
                }
            }
            rail_hexes.insert(h);
            previous = Some(h);
        }
    }

    let mut start_control = BTreeMap::new();
    for (side, hexes) in &raw.map.start_control {
        for (i, text) in hexes.iter().enumerate() {
            let place = format!("map.start_control.{}[{i}]", side.key());
            if let Some(h) = hex_at(check, place.clone(), text) {
                if start_control.insert(h, *side).is_some() {
                    check.error(place, rule::START_CONTROL, format!("hex {h} is given a starting side twice"));
                }
            }
        }
    }
    for city in &cities {
        if let Some(side) = city.control {
            if let Some(other) = start_control.insert(city.hex, side) {
                if other != side {
                    check.error(
                        "map.start_control",
                        rule::START_CONTROL,
                        format!("hex {} is city {} held by the {side}, not the {other}", city.hex, city.letter),
                    );
                }
            }
        }
    }

    let mut deployment = BTreeMap::new();
    for side in [Side::Union, Side::Confederate] {
        let Some(letters) = raw.deployment.get(&side) else {
            check.error("deployment", rule::DEPLOYMENT_NO_CITY, format!("no deployment cities for the {side}"));
            continue;
        };
        let mut list = vec![];
        for (i, text) in letters.iter().enumerate() {
            if let Some(l) = city_letter(check, format!("deployment.{}[{i}]", side.key()), text) {
                list.push(l);
            }
        }
        if limits.deployment_named && list.is_empty() && letters.is_empty() {
            check.error(
                format!("deployment.{}", side.key()),
                rule::DEPLOYMENT_NO_CITY,
                format!("the {side} deploys near no city: name at least one"),
            );
        }
        deployment.insert(side, list);
    }

    let mut units: Vec<UnitSpec> = vec![];
    for (side, list) in [(Side::Union, &raw.units.union), (Side::Confederate, &raw.units.confederate)] {
        if list.is_empty() {
            check.error(format!("units.{}", side.key()), rule::ORDER_OF_BATTLE_EMPTY, "the order of battle is empty");
        }
        for (i, unit) in list.iter().enumerate() {
            let place = format!("units.{}[{i}]", side.key());
            if let Some(most) = limits.max_number {
                if !(1..=most).contains(&unit.factors) {
                    check.error(
                        format!("{place}.factors"),
                        rule::FACTORS,
                        format!("unit `{}` has {} factors, not 1 to {most}", unit.id, unit.factors),
                    );
                }
            }
            let id_ok = !unit.id.is_empty()
                && unit.id.len() <= 40
                && unit.id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !id_ok {
                check.error(
                    &place,
                    rule::UNIT_ID,
                    format!("unit id `{}` must be 1 to 40 lower-case letters, digits or dashes", unit.id),
                );
            } else if units.iter().any(|u| u.id == unit.id) {
                check.error(&place, rule::UNIT_ID_TWICE, format!("duplicate unit id `{}`", unit.id));
            } else {
                units.push(UnitSpec {
                    id: unit.id.clone(),
                    name: unit.name.clone(),
                    side,
                    arm: unit.arm,
                    factors: unit.factors,
                });
            }
        }
    }

    let mut victory = vec![];
    for (i, v) in raw.victory.iter().enumerate() {
        let place = format!("victory[{i}]");
        let goal = match (&v.capture, v.hold_out) {
            (Some(text), false) => city_letter(check, format!("{place}.capture"), text)
                .map(|city| VictoryGoal::Capture { city, by_turn: v.by_turn }),
            (None, true) => Some(VictoryGoal::HoldOut),
            _ => {
                check.error(
                    &place,
                    rule::VICTORY_GOAL,
                    "a victory condition is either `capture = \"<city>\"` or `hold_out = true`",
                );
                None
            }
        };
        if let Some(t) = v.by_turn {
            if t == 0 || t > raw.turns {
                check.error(
                    format!("{place}.by_turn"),
                    rule::VICTORY_TURN,
                    format!("turn {t} is not a turn of this {}-turn campaign", raw.turns),
                );
            }
        }
        if let Some(goal) = goal {
            victory.push(VictoryCondition { side: v.side, level: v.level, goal, text: v.text.clone() });
        }
    }

    let mut confederate_cities = vec![];
    for (i, text) in raw.reinforcement.confederate_cities.iter().enumerate() {
        if let Some(l) = city_letter(check, format!("reinforcement.confederate_cities[{i}]"), text) {
            confederate_cities.push(l);
        }
    }
    if confederate_cities.len() > crate::reinforcement::REINFORCEMENT_CITIES.len() {
        check.error(
            "reinforcement.confederate_cities",
            rule::REINFORCEMENT_CITIES,
            "the reinforcement roll compares a remainder of division by 6, so at most 6 cities count",
        );
    }
    let movement = raw.movement;
    if let Some(most) = limits.max_number {
        let numbers = [
            ("infantry", movement.infantry),
            ("cavalry", movement.cavalry),
            ("artillery", movement.artillery),
            ("hq", movement.hq),
            ("step", movement.step),
            ("woods_or_river", movement.woods_or_river),
            ("bridge", movement.bridge),
            ("stacking_limit", movement.stacking_limit),
        ];
        for (key, value) in numbers {
            if !(1..=most).contains(&value) {
                check.error(format!("movement.{key}"), rule::MOVEMENT, format!("{key} is {value}, not 1 to {most}"));
            }
        }
    }
    if movement.stacking_limit == 0 && limits.max_number.is_none() {
        check.error("movement.stacking_limit", rule::MOVEMENT, "the stacking limit must be at least 1");
    }

    Scenario {
        file: file.to_string(),
        name: raw.name,
        title: raw.title,
        note: raw.note,
        first_side: raw.first_side,
        turns: raw.turns,
        columns,
        rows,
        woods,
        cities,
        rivers,
        bridges,
        rail_hexes,
        rail_links,
        start_control,
        deployment,
        units,
        victory,
        movement,
        reinforcement: ReinforcementRules {
            union_points_per_turn: raw.reinforcement.union_points_per_turn,
            confederate_cities,
            infantry_factor: raw.reinforcement.infantry_factor,
            cavalry_factor: raw.reinforcement.cavalry_factor,
            artillery_factor: raw.reinforcement.artillery_factor,
            hq_factor: raw.reinforcement.hq_factor,
            new_unit: raw.reinforcement.new_unit,
        },
    }
}
