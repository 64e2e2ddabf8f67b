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

mod check;

/// The shipped scenario's text.
pub const SHORT_ACW_TOML: &str = include_str!("../../../../../config/scenarios/short-acw.toml");

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

impl Scenario {
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
