//! "The aim of the battle is to have more Victory Points than your opponent to win."

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::tables::{
    BAGGAGE_WAGON, BRIDGE, FARM, OFFICER_KILLED, POINTS_PER_DAY_PASSED, ROUTED_ENEMY_UNIT, SQUARE_IN_OPPONENTS_HALF,
    TOWN,
};
use super::{check_within, field, Side};
use crate::resolver::{Lookup, Resolved};
use crate::Refusal;

/// The highest count any item takes; only a guard against nonsense.
const MAX_COUNT: u32 = 999;

/// What one side holds and has done at the end of the battle.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SideScore {
    /// In control of the town (60 points).
    pub town: bool,
    /// Farms in its control (20 points each).
    pub farms: u32,
    /// Bridges in its control (20 points each).
    pub bridges: u32,
    /// Enemy units routed (5 points each).
    pub routed_enemy_units: u32,
    /// 30cm squares in the opponent's half it occupies, 0 to 10 (10 points each): at least
    /// half of a regiment in the square and no enemy unit in it.
    #[schemars(range(max = 10))]
    pub squares_occupied: u32,
    /// Enemy officers killed (10 points each).
    pub officers_killed: u32,
    /// Enemy baggage wagons captured (20 points each).
    pub baggage_captured: u32,
}

/// The count at the end of the battle.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VictoryInput {
    pub federal: SideScore,
    pub confederate: SideScore,
    /// Days passed in the time-of-day throw ("For each day passed your opponent gets 10
    /// Victory Points").
    #[serde(default)]
    pub days_passed: u32,
    /// Who made the time-of-day throw; its opponent gets the days-passed points.
    #[serde(default)]
    pub time_thrown_by: Option<Side>,
}

fn validate(side: &str, score: &SideScore) -> Result<(), Refusal> {
    for (name, value) in [
        ("farms", score.farms),
        ("bridges", score.bridges),
        ("routed_enemy_units", score.routed_enemy_units),
        ("officers_killed", score.officers_killed),
        ("baggage_captured", score.baggage_captured),
    ] {
        check_within(&format!("{side}.{name}"), "victory.count", value, 0, MAX_COUNT, "a count of the table's items")?;
    }
    check_within(
        &format!("{side}.squares_occupied"),
        "victory.squares",
        score.squares_occupied,
        0,
        10,
        "the opponent's half has 10 squares",
    )
}

/// One side's points and the lookups that made them.
fn count(side: Side, score: &SideScore, days_points: u32, lookups: &mut Vec<Lookup>) -> u32 {
    let mut total = 0;
    for (row, number, each) in [
        ("in control of the town", u32::from(score.town), TOWN),
        ("in control of a farm", score.farms, FARM),
        ("in control of a bridge", score.bridges, BRIDGE),
        ("each routed enemy unit", score.routed_enemy_units, ROUTED_ENEMY_UNIT),
        ("each 30cm square in opponents half occupied", score.squares_occupied, SQUARE_IN_OPPONENTS_HALF),
        ("each Officer killed", score.officers_killed, OFFICER_KILLED),
        ("baggage wagon captured", score.baggage_captured, BAGGAGE_WAGON),
    ] {
        if number > 0 {
            total += number * each;
            lookups.push(Lookup::new("Victory Points", row, side.words(), format!("{number} x {each}")));
        }
    }
    if days_points > 0 {
        total += days_points;
        lookups.push(Lookup::new(
            "Victory Points",
            "each day passed (opponent's time throw)",
            side.words(),
            format!("{} x {POINTS_PER_DAY_PASSED}", days_points / POINTS_PER_DAY_PASSED),
        ));
    }
    total
}

pub fn victory_points(input: VictoryInput) -> Result<Resolved, Refusal> {
    validate("federal", &input.federal)?;
    validate("confederate", &input.confederate)?;
    if input.federal.town && input.confederate.town {
        return Err(Refusal::new(field("confederate.town"), "victory.town", "only one side can control the town"));
    }
    check_within(
        "days_passed",
        "victory.days_passed",
        input.days_passed,
        0,
        MAX_COUNT,
        "days passed in the time-of-day throw",
    )?;
    let days_to = match (input.days_passed, input.time_thrown_by) {
        (0, _) => None,
        (_, Some(thrower)) => Some(thrower.opponent()),
        (_, None) => {
            return Err(Refusal::new(
                field("time_thrown_by"),
                "victory.days_passed",
                "days passed score for the opponent of whoever threw the time of day: name them",
            ))
        }
    };
    let days_points = input.days_passed * POINTS_PER_DAY_PASSED;
    let days_for = |side: Side| {
        if days_to == Some(side) {
            days_points
        } else {
            0
        }
    };
    let mut lookups = Vec::new();
    let federal = count(Side::Federal, &input.federal, days_for(Side::Federal), &mut lookups);
    let confederate = count(Side::Confederate, &input.confederate, days_for(Side::Confederate), &mut lookups);
    let winner = match federal.cmp(&confederate) {
        std::cmp::Ordering::Greater => Some(Side::Federal),
        std::cmp::Ordering::Less => Some(Side::Confederate),
        std::cmp::Ordering::Equal => None,
    };
    Ok(Resolved {
        headline: format!(
            "Victory points: Federal {federal}, Confederate {confederate}: {}",
            match winner {
                Some(side) => format!("the {} win", side.words()),
                None => "a draw".to_owned(),
            }
        ),
        lookups,
        result: json!({ "federal": federal, "confederate": confederate, "winner": winner }),
    })
}
