//! A scenario file read and checked: the TOML as written, then every rule of the format, each
//! problem reported with its place and rule.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use super::*;

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

    /// Reads and checks a scenario written as JSON, the same structure as the TOML (its tables
    /// objects, its arrays of tables arrays of objects; a `null` member counts as absent), every
    /// problem reported. A problem of the structure itself (a missing or unknown key, a value
    /// of the wrong type) is one [`rule::SYNTAX`] problem whose place is the path of the value
    /// at fault (`units.union[0].factors`), or `.` for the whole.
    pub fn checked_json(
        file_name: &str,
        value: serde_json::Value,
        limits: Limits,
    ) -> Result<Scenario, Vec<ScenarioError>> {
        let mut check = Checker { file: file_name, errors: vec![] };
        let raw: RawScenario = match serde_path_to_error::deserialize(without_nulls(value)) {
            Ok(raw) => raw,
            Err(e) => {
                check.error(e.path().to_string(), rule::SYNTAX, e.inner().to_string());
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

    /// The TOML text of a scenario written as JSON (as [`Scenario::checked_json`] reads it),
    /// for keeping: campaigns bind a scenario's text, and every scenario's text is TOML.
    pub fn json_to_toml(value: serde_json::Value) -> Result<String, String> {
        let table: toml::Value = serde_json::from_value(without_nulls(value)).map_err(|e| e.to_string())?;
        toml::to_string(&table).map_err(|e| e.to_string())
    }

    /// A scenario's TOML text as JSON of the same structure, or None when the text is not TOML.
    pub fn toml_to_json(text: &str) -> Option<serde_json::Value> {
        let table: toml::Table = toml::from_str(text).ok()?;
        serde_json::to_value(table).ok()
    }
}

/// A JSON value with every `null` member of an object left out, as TOML, which has no null,
/// would leave the key out.
fn without_nulls(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(members) => serde_json::Value::Object(
            members.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, without_nulls(v))).collect(),
        ),
        serde_json::Value::Array(items) => serde_json::Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

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
