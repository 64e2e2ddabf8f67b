//! Rolls before and around the battle: sides, the town, the river, terrain, flank marches,
//! the time of day and the wind.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::tables::{
    EARLIEST_HOUR, LATEST_HOUR, POINTS_PER_DAY_PASSED, SPRING_AUTUMN_DUSK, SUMMER_DUSK, TURNS_PER_HOUR,
};
use super::{check_within, field, Side};
use crate::resolver::{Lookup, Resolved};
use crate::{DiceStream, Refusal};

/// Both throw 1xD6 until one is higher; returns the winner (0 or 1) and every pair thrown.
fn dice_off(dice: &mut DiceStream, what: &str, names: [&str; 2]) -> (usize, Vec<[u32; 2]>) {
    let mut throws = Vec::new();
    loop {
        let round = throws.len() + 1;
        let first = dice.roll(6, format!("{what}, {}, throw {round}", names[0]));
        let second = dice.roll(6, format!("{what}, {}, throw {round}", names[1]));
        throws.push([first, second]);
        if first != second {
            return (usize::from(second > first), throws);
        }
    }
}

/// Who throws for sides.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChooseSidesInput {
    /// The first player's name, as the forum knows them.
    pub first_player: String,
    /// The second player's name.
    pub second_player: String,
}

/// "Pick who wants to be Federal/Confederate or dice for it. Highest picks 1xD6."
pub fn choose_sides(input: ChooseSidesInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    for (name, value) in [("first_player", &input.first_player), ("second_player", &input.second_player)] {
        let length = value.trim().chars().count();
        if !(1..=60).contains(&length) {
            return Err(Refusal::new(field(name), "setup.player_name", format!("{name} must be 1 to 60 characters")));
        }
    }
    if input.first_player.trim() == input.second_player.trim() {
        return Err(Refusal::new(
            field("second_player"),
            "setup.player_name",
            "the two players must have different names",
        ));
    }
    let names = [input.first_player.trim(), input.second_player.trim()];
    let (winner, throws) = dice_off(dice, "choose sides", names);
    let last = throws[throws.len() - 1];
    Ok(Resolved {
        headline: format!(
            "{} throws {} to {}'s {}: {} picks Federal or Confederate",
            names[0], last[0], names[1], last[1], names[winner]
        ),
        lookups: Vec::new(),
        result: json!({ "picks": names[winner], "throws": throws }),
    })
}

/// The town throw takes no inputs: both sides throw.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TownInput {}

/// "Each side then has to throw 1xD6 to see who has the local town or village … The highest
/// wins and places the town in square 3 and also places a bridge in square 3."
pub fn town(_input: TownInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let (winner, throws) = dice_off(dice, "town", ["Federal", "Confederate"]);
    let holder = [Side::Federal, Side::Confederate][winner];
    let last = throws[throws.len() - 1];
    Ok(Resolved {
        headline: format!(
            "Federal {} to Confederate {}: the {} hold the town (square 3, with a bridge) and move second",
            last[0],
            last[1],
            holder.words()
        ),
        lookups: Vec::new(),
        result: json!({
            "holder": holder,
            "town_square": 3,
            "bridge_square": 3,
            // "The army holding the town picks which way the river flows."
            "picks_river_flow": holder,
            // "Alternative Move Sequence. (Who holds the town goes second.)"
            "moves_second": holder,
            "throws_river_end_and_time_of_day": holder.opponent(),
            "throws": throws,
        }),
    })
}

/// The river's end.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RiverEndInput {
    /// The side throwing: the one that does not hold the town.
    pub thrown_by: Side,
}

/// "Your opponent throw 1xD10 to see which square edge the river finishes in, a 6 becomes a 1,
/// a 7 becomes a 2 etc."
pub fn river_end_square(d10: u32) -> u32 {
    (d10 - 1) % 5 + 1
}

pub fn river_end(input: RiverEndInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let d10 = dice.roll(10, "river end square");
    let square = river_end_square(d10);
    let side = input.thrown_by.words();
    Ok(Resolved {
        headline: format!("{side} throws {d10}: the river ends at the table edge of {side} square {square}"),
        lookups: vec![Lookup::new("River end", format!("D10 {d10}"), "square", square)],
        result: json!({ "d10": d10, "square": square, "side": input.thrown_by }),
    })
}

/// One side's terrain placement.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TerrainInput {
    /// The side placing terrain in its own ten squares.
    pub side: Side,
    /// True if this side holds the town (square 3 is then taken by the town and bridge).
    pub holds_town: bool,
    /// Any other squares (1 to 10) already taken, which a piece may not land on.
    #[serde(default)]
    pub occupied: Vec<u32>,
}

/// "Then each places 2 hills, 1 farm with 2 fields both enclosed, 2 woods, 1 broken ground."
pub const TERRAIN_PIECES: [&str; 6] = ["hill", "hill", "farm with 2 enclosed fields", "wood", "wood", "broken ground"];

pub fn terrain(input: TerrainInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let mut taken = [false; 11];
    for (i, &square) in input.occupied.iter().enumerate() {
        check_within(
            &format!("occupied[{i}]"),
            "terrain.square",
            square,
            1,
            10,
            "each side's area has squares 1 to 10",
        )?;
        taken[square as usize] = true;
    }
    if input.holds_town {
        taken[3] = true;
    }
    let free = taken[1..].iter().filter(|t| !**t).count();
    if free < TERRAIN_PIECES.len() {
        return Err(Refusal::new(
            field("occupied"),
            "terrain.no_room",
            format!("{} pieces need {} free squares, only {free} are free", TERRAIN_PIECES.len(), TERRAIN_PIECES.len()),
        ));
    }
    let mut placements = Vec::new();
    let mut lookups = Vec::new();
    for (n, piece) in TERRAIN_PIECES.iter().enumerate() {
        // "If a square is occupied throw again."
        let mut throw = 1;
        let square = loop {
            let square = dice.roll(10, format!("{piece} ({}), throw {throw}", n + 1));
            if !taken[square as usize] {
                break square;
            }
            throw += 1;
        };
        taken[square as usize] = true;
        lookups.push(Lookup::new("Terrain squares", *piece, "square", square));
        placements.push(json!({ "piece": piece, "square": square, "throws": throw }));
    }
    let summary: Vec<String> = lookups.iter().map(|l| format!("{} {}", l.row, l.value)).collect();
    Ok(Resolved {
        headline: format!("{} terrain: {}", input.side.words(), summary.join(", ")),
        lookups,
        result: json!({ "side": input.side, "placements": placements }),
    })
}

/// Which flank the flank march takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Flank {
    /// The flank of squares 1 and 6 (both sides' 1 and 6 squares share this table edge).
    #[serde(rename = "squares_1_and_6")]
    Squares1And6,
    /// The flank of squares 5 and 10.
    #[serde(rename = "squares_5_and_10")]
    Squares5And10,
}

/// A flank march.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlankMarchInput {
    /// How many units march ("Up to 2 units can flank march but only on 1 flank"); one throw
    /// brings them all.
    #[schemars(range(min = 1, max = 2))]
    pub units: u32,
    /// The flank they march on.
    pub flank: Flank,
}

/// Where a flank march arrives: (whose squares, which square).
/// "If you throw 5 or less your unit appears on your Squares 1 or 5 … 6-10 … your Squares 6-10
/// … 11-15 … your opponents Squares 6-10 … 16-20 … your opponents Squares 1-5".
pub fn flank_march_arrival(d20: u32, flank: Flank) -> (&'static str, &'static str, u32) {
    let (band, whose, back_row) = match d20 {
        1..=5 => ("5 or less", "your", true),
        6..=10 => ("6-10", "your", false),
        11..=15 => ("11-15", "opponent's", false),
        _ => ("16-20", "opponent's", true),
    };
    let square = match (back_row, flank) {
        (true, Flank::Squares1And6) => 1,
        (true, Flank::Squares5And10) => 5,
        (false, Flank::Squares1And6) => 6,
        (false, Flank::Squares5And10) => 10,
    };
    (band, whose, square)
}

pub fn flank_march(input: FlankMarchInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    check_within("units", "flank_march.units", input.units, 1, 2, "up to 2 units can flank march")?;
    let d20 = dice.roll(20, "flank march arrival");
    let (band, whose, square) = flank_march_arrival(d20, input.flank);
    let flank = match input.flank {
        Flank::Squares1And6 => "squares 1 and 6",
        Flank::Squares5And10 => "squares 5 and 10",
    };
    Ok(Resolved {
        headline: format!(
            "Flank march ({} unit(s)) throws {d20}: arrives on move {d20} in {whose} square {square}",
            input.units
        ),
        lookups: vec![Lookup::new("Flank marches", format!("D20 {band}"), flank, format!("{whose} square {square}"))],
        result: json!({
            "d20": d20, "arrives_on_move": d20, "whose_squares": if whose == "your" { "own" } else { "opponent" }, "square": square,
            "units": input.units,
        }),
    })
}

/// The season the thrower chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Season {
    Summer,
    Spring,
    Autumn,
    /// The seed gives no winter daylight: the referee names dusk in `winter_dusk_hour`.
    Winter,
}

/// The time of day throw.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeOfDayInput {
    /// The side throwing: the one that does not hold the town.
    pub thrown_by: Side,
    /// The season the thrower chooses.
    pub season: Season,
    /// Winter only: the hour (17 to 23) at which daylight ends.
    #[serde(default)]
    #[schemars(range(min = 17, max = 23))]
    pub winter_dusk_hour: Option<u32>,
}

/// Hours of daylight left and turns each player gets: "if you threw 13 the time is 1 o'clock
/// in the afternoon, so you will have 7 hours left in summer … Each 1 hour is equal to 4 turns
/// per player."
pub fn daylight(hour: u32, dusk: u32) -> (u32, u32) {
    let hours_left = dusk.saturating_sub(hour);
    (hours_left, hours_left * TURNS_PER_HOUR)
}

pub fn time_of_day(input: TimeOfDayInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let (dusk, season) = match (input.season, input.winter_dusk_hour) {
        (Season::Winter, Some(hour)) => {
            check_within(
                "winter_dusk_hour",
                "time_of_day.dusk",
                hour,
                17,
                23,
                "daylight must last past the latest start, 16:00",
            )?;
            (hour, "winter")
        }
        (Season::Winter, None) => {
            return Err(Refusal::new(
                field("winter_dusk_hour"),
                "time_of_day.dusk",
                "the seed gives no winter daylight: name the hour dusk falls",
            ))
        }
        (_, Some(_)) => {
            return Err(Refusal::new(
                field("winter_dusk_hour"),
                "time_of_day.dusk",
                "only a winter battle takes a dusk hour; the seed fixes the others",
            ))
        }
        (Season::Summer, None) => (SUMMER_DUSK, "summer"),
        (Season::Spring, None) => (SPRING_AUTUMN_DUSK, "spring"),
        (Season::Autumn, None) => (SPRING_AUTUMN_DUSK, "autumn"),
    };
    let mut throws = Vec::new();
    let hour = loop {
        let n = throws.len() + 1;
        let sum: u32 = dice.roll_many(3, 6, &format!("time of day, throw {n}")).iter().sum();
        throws.push(sum);
        // "A score of 6 or less throw again, a score of 17 or above throw again".
        if (EARLIEST_HOUR..=LATEST_HOUR).contains(&sum) {
            break sum;
        }
    };
    // "if you throw again one day has already passed": one day for each throw again.
    let days_passed = (throws.len() - 1) as u32;
    let (hours_left, turns) = daylight(hour, dusk);
    let points = days_passed * POINTS_PER_DAY_PASSED;
    let to = input.thrown_by.opponent();
    Ok(Resolved {
        headline: format!(
            "{} throws {hour}: {hour}:00 in {season}, {hours_left} hours of daylight ({turns} turns each); {days_passed} day(s) passed, {points} VP to the {}",
            input.thrown_by.words(),
            to.words()
        ),
        lookups: vec![Lookup::new("Night and Day", season, "daylight ends", format!("{dusk}:00"))],
        result: json!({
            "throws": throws, "hour": hour, "time": format!("{hour}:00"), "season": season,
            "dusk_hour": dusk, "hours_left": hours_left, "turns_per_player": turns,
            "days_passed": days_passed, "victory_points": points, "victory_points_to": to,
        }),
    })
}

/// The wind throw takes no inputs.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindInput {}

/// "Throw a 1xD6, a score of 1 means that there is no wind."
pub fn wind(_input: WindInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let d6 = dice.roll(6, "wind");
    let wind = d6 != 1;
    let words = if wind {
        "wind disperses the smoke"
    } else {
        "no wind: a unit firing from the same place for more than 2 moves is stopped by smoke"
    };
    Ok(Resolved {
        headline: format!("Wind throw {d6}: {words}"),
        lookups: vec![Lookup::new("Wind", format!("D6 {d6}"), "wind", if wind { "wind" } else { "no wind" })],
        result: json!({ "d6": d6, "wind": wind }),
    })
}
