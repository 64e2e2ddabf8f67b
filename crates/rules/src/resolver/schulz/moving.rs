//! Moving (MOVING; VEHICLE & ARMS MOVING; EXTRA MOVING RULES): how far men, cavalry, vehicles
//! or a hauled gun move this turn. No dice.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::casualties::plural;
use super::tables::{Inches, VehicleRow, CAVALRY_MOVE, HAULED_MOVE, MEN_MOVE, MOVE_TABLE, VEHICLES};
use super::MAX_MEN;
use crate::resolver::{Lookup, Resolved};
use crate::Refusal;

/// What is moving.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mover {
    /// "ALL MEN MOVE 6 INCHES."
    Men,
    /// "CAVALRY MOVE 12 INCHES."
    Cavalry,
    FourHorseCaisson,
    TwoHorseCaisson,
    Wagon,
    /// Two cavalry horses pulling a cannon or Gatling gun.
    TwoHorses,
    /// "4 men can move a cannon 3/turn (no fire in the same turn)."
    MenHaulingCannon,
    /// "3 men can move a mortar 3/turn (no fire in the same turn)."
    MenHaulingMortar,
    /// "2 men can move a gatling gun 3/turn (no fire in the same turn)."
    MenHaulingGatling,
}

impl Mover {
    fn vehicle(self) -> Option<&'static VehicleRow> {
        let name = match self {
            Mover::FourHorseCaisson => "4-HORSE CAISSON",
            Mover::TwoHorseCaisson => "2-HORSE CAISSON",
            Mover::Wagon => "WAGON",
            Mover::TwoHorses => "2 HORSES",
            _ => return None,
        };
        VEHICLES.iter().find(|v| v.name == name)
    }

    fn haulers_needed(self) -> Option<(u32, &'static str)> {
        match self {
            Mover::MenHaulingCannon => Some((4, "cannon")),
            Mover::MenHaulingMortar => Some((3, "mortar")),
            Mover::MenHaulingGatling => Some((2, "gatling gun")),
            _ => None,
        }
    }
}

/// What a vehicle or team pulls or carries (the columns of VEHICLE & ARMS MOVING).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Load {
    #[default]
    Empty,
    Cannon,
    Gatling,
}

/// The going (the columns of the MOVE table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Ground {
    #[default]
    Normal,
    /// UP (-1/3)
    Up,
    /// DOWN (+1/3)
    Down,
    /// ROAD (+1/2)
    Road,
}

/// Water crossed this move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Crossing {
    #[default]
    None,
    /// "Across river, men lose 1/2 move (once) and cant fire while in river." Vehicles too.
    River,
    /// "MEN & CAVALRY cross pond or bay at 1/2 move (cant fire)." No vehicles.
    PondOrBay,
}

/// How far something may move this turn.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveAllowance {
    /// What moves.
    pub mover: Mover,
    /// For vehicles and two horses: `empty` (default), `cannon` or `gatling`.
    #[serde(default)]
    pub load: Load,
    /// For men hauling a gun: how many men haul it (a cannon needs 4, a mortar 3, a Gatling 2).
    #[serde(default)]
    pub haulers: Option<u32>,
    /// `normal` (default), `up`, `down` or `road`.
    #[serde(default)]
    pub ground: Ground,
    /// Horses in the team, for a wagon whose horses are killed (the seed does not say how
    /// many pull a wagon). Caissons and two horses have their own.
    #[serde(default)]
    pub team_horses: Option<u32>,
    /// Team horses killed: "Vehicle moves decrease by the same percent as the number of
    /// horses killed out of the total."
    #[serde(default)]
    pub horses_killed: u32,
    /// "After a horse is killed, vehicle loses 1/2 move (once) to drop dead horse."
    #[serde(default)]
    pub dropping_dead_horse: bool,
    /// `none` (default), `river` or `pond_or_bay`.
    #[serde(default)]
    pub crossing: Crossing,
    /// Crossing a blockade of wagons and caissons (men and cavalry only, at 1/2 move).
    #[serde(default)]
    pub crossing_blockade: bool,
    /// Half-move tasks this turn: vehicle load/unload, artillery hitch/unhitch, mounting or
    /// unmounting horses, horse hitch/unhitch ("= 1/2 move") (0 to 2).
    #[serde(default)]
    pub half_move_tasks: u32,
}

/// A move on slopes and roads: the MOVE table where the move is one of its rows, otherwise
/// the same fractions (-1/3, +1/3, +1/2) rounded to the nearest half inch, which is how the
/// table's own rows are rounded (8" up is 5.5", 10" down is 13.5").
pub fn move_on(base: Inches, ground: Ground) -> (Inches, bool) {
    if let Some(row) = MOVE_TABLE.iter().find(|row| row.0 == base) {
        let value = match ground {
            Ground::Normal => row.0,
            Ground::Up => row.1,
            Ground::Down => row.2,
            Ground::Road => row.3,
        };
        return (value, true);
    }
    let exact = match ground {
        Ground::Normal => base,
        Ground::Up => base * 2.0 / 3.0,
        Ground::Down => base * 4.0 / 3.0,
        Ground::Road => base * 1.5,
    };
    (to_half_inch(exact), false)
}

/// The nearest half inch, a quarter going down (the seed's moves are in half inches; no row
/// of its table falls on a quarter, so the tie is ours to break, against the mover).
pub fn to_half_inch(inches: Inches) -> Inches {
    (inches * 2.0 - 0.5).ceil() / 2.0
}

fn ground_column(ground: Ground) -> &'static str {
    match ground {
        Ground::Normal => "MOVE",
        Ground::Up => "UP(-1/3)",
        Ground::Down => "DOWN(+1/3)",
        Ground::Road => "ROAD (+1/2)",
    }
}

pub(super) fn move_allowance(i: &MoveAllowance) -> Result<Resolved, Refusal> {
    let vehicle = i.mover.vehicle();
    let hauling = i.mover.haulers_needed();
    let is_foot_or_horse = matches!(i.mover, Mover::Men | Mover::Cavalry);
    if vehicle.is_none() && i.load != Load::Empty {
        return Err(Refusal::new("body.inputs.load", "move.load", "only vehicles and two horses carry or pull a load"));
    }
    if let Some((needed, gun)) = hauling {
        match i.haulers {
            Some(n) if (needed..=MAX_MEN).contains(&n) => {}
            Some(n) => {
                return Err(Refusal::new(
                    "body.inputs.haulers",
                    "move.haulers",
                    format!("{needed} men can move a {gun}, not {n}"),
                ))
            }
            None => {
                return Err(Refusal::new(
                    "body.inputs.haulers",
                    "move.haulers",
                    format!("say how many men haul the {gun} ({needed} are needed)"),
                ))
            }
        }
    } else if i.haulers.is_some() {
        return Err(Refusal::new(
            "body.inputs.haulers",
            "move.haulers",
            "haulers are only for men moving a gun by hand",
        ));
    }
    let team = match vehicle {
        Some(v) => v.team.or(i.team_horses),
        None => None,
    };
    if vehicle.is_none() && (i.horses_killed > 0 || i.dropping_dead_horse) {
        return Err(Refusal::new(
            if i.horses_killed > 0 { "body.inputs.horses_killed" } else { "body.inputs.dropping_dead_horse" },
            "move.horses_killed",
            "only vehicles and teams lose horses from their move",
        ));
    }
    if i.team_horses.is_some() && i.mover != Mover::Wagon {
        return Err(Refusal::new(
            "body.inputs.team_horses",
            "move.team_horses",
            "only a wagon's team is given: caissons and two horses have their own",
        ));
    }
    if let Some(n) = i.team_horses {
        if !(1..=12).contains(&n) {
            return Err(Refusal::new(
                "body.inputs.team_horses",
                "move.team_horses",
                format!("a wagon team is 1 to 12 horses, not {n}"),
            ));
        }
    }
    if i.horses_killed > 0 {
        match team {
            None => {
                return Err(Refusal::new(
                    "body.inputs.team_horses",
                    "move.team_horses",
                    "say how many horses pull the wagon, to take off the killed ones' share",
                ))
            }
            Some(t) if i.horses_killed > t => {
                return Err(Refusal::new(
                    "body.inputs.horses_killed",
                    "move.horses_killed",
                    format!("the team has {t} horses, not {} to kill", i.horses_killed),
                ))
            }
            Some(_) => {}
        }
    }
    match i.crossing {
        Crossing::PondOrBay if vehicle.is_some() => {
            return Err(Refusal::new("body.inputs.crossing", "move.pond", "No vehicles can enter pond or bay"))
        }
        Crossing::PondOrBay if hauling.is_some() => {
            return Err(Refusal::new(
                "body.inputs.crossing",
                "move.pond",
                "Gatling guns and mortars can not be in pond or bay (too deep); nor can a cannon",
            ))
        }
        Crossing::River if i.mover == Mover::MenHaulingCannon => {
            return Err(Refusal::new(
                "body.inputs.crossing",
                "move.river",
                "Men can carry gatling guns and mortars across rivers, not cannons",
            ))
        }
        _ => {}
    }
    if i.crossing_blockade && !is_foot_or_horse {
        return Err(Refusal::new(
            "body.inputs.crossing_blockade",
            "move.blockade",
            "a blockade of wagons and caissons is crossed by men and cavalry only",
        ));
    }
    if i.half_move_tasks > 2 {
        return Err(Refusal::new(
            "body.inputs.half_move_tasks",
            "move.half_move_tasks",
            format!("each task takes 1/2 move: at most 2 in a turn, not {}", i.half_move_tasks),
        ));
    }

    let mut lookups = Vec::new();
    let base = match (vehicle, hauling) {
        (Some(v), _) => {
            let (column, value) = match i.load {
                Load::Empty => ("EMPTY MOVE", v.empty),
                Load::Cannon => ("WITH CANNON", v.with_cannon),
                Load::Gatling => ("WITH GATLING", v.with_gatling),
            };
            lookups.push(Lookup::new("VEHICLE & ARMS MOVING", v.name, column, format!("{value}\"")));
            value
        }
        (None, Some((needed, gun))) => {
            lookups.push(Lookup::new(
                "EXTRA MOVING RULES",
                format!("{needed} men can move a {gun}"),
                "per turn",
                format!("{HAULED_MOVE}\""),
            ));
            HAULED_MOVE
        }
        (None, None) => {
            let (row, value) = if i.mover == Mover::Cavalry {
                ("CAVALRY MOVE 12 INCHES", CAVALRY_MOVE)
            } else {
                ("ALL MEN MOVE 6 INCHES", MEN_MOVE)
            };
            lookups.push(Lookup::new("MOVING", row, "move", format!("{value}\"")));
            value
        }
    };
    let mut after_horses = base;
    if let (Some(team), true) = (team, i.horses_killed > 0) {
        after_horses = to_half_inch(base * f64::from(team - i.horses_killed) / f64::from(team));
        lookups.push(Lookup::new(
            "EXTRA MOVING RULES",
            format!("{} of {team} horses killed", i.horses_killed),
            "move decreases by the same percent",
            format!("{after_horses}\""),
        ));
    }
    let (on_ground, from_table) = move_on(after_horses, i.ground);
    if i.ground != Ground::Normal {
        lookups.push(Lookup::new(
            if from_table { "MOVE" } else { "MOVE (fraction, to the nearest 1/2\")" },
            format!("{after_horses}\""),
            ground_column(i.ground),
            format!("{on_ground}\""),
        ));
    }

    // Every half-move cost takes half of the move; two of them take it all.
    let mut halves: Vec<&str> = Vec::new();
    match i.crossing {
        Crossing::River => halves.push("across river: lose 1/2 move (once)"),
        Crossing::PondOrBay => halves.push("cross pond or bay at 1/2 move"),
        Crossing::None => {}
    }
    if i.crossing_blockade {
        halves.push("blockade reduces moves by 1/2 when crossing");
    }
    if i.dropping_dead_horse {
        halves.push("lose 1/2 move (once) to drop dead horse");
    }
    halves.extend(std::iter::repeat_n(
        "load/unload, hitch/unhitch or mount/unmount = 1/2 move",
        i.half_move_tasks as usize,
    ));
    for half in &halves {
        lookups.push(Lookup::new("EXTRA MOVING RULES", *half, "move", "-1/2"));
    }
    let left = on_ground * (2.0 - halves.len() as f64).max(0.0) / 2.0;
    let mut notes: Vec<&str> = Vec::new();
    if hauling.is_some() {
        notes.push("no fire in the same turn");
    }
    if i.crossing != Crossing::None && vehicle.is_none() {
        notes.push("cannot fire while in the water");
    }
    if vehicle.is_some() {
        notes.push("vehicles must have one man driving to move");
    }
    let mover_words = match vehicle {
        Some(v) => format!(
            "{}{}",
            v.name.to_lowercase(),
            match i.load {
                Load::Empty => "",
                Load::Cannon => " with cannon",
                Load::Gatling => " with gatling",
            }
        ),
        None => match i.mover {
            Mover::Men => "men".to_owned(),
            Mover::Cavalry => "cavalry".to_owned(),
            Mover::MenHaulingCannon => "men hauling a cannon".to_owned(),
            Mover::MenHaulingMortar => "men hauling a mortar".to_owned(),
            _ => "men hauling a gatling gun".to_owned(),
        },
    };
    let mut headline = format!(
        "Move: {mover_words}, {}: {left}\"",
        match i.ground {
            Ground::Normal => "level",
            Ground::Up => "uphill",
            Ground::Down => "downhill",
            Ground::Road => "on road",
        }
    );
    if !halves.is_empty() {
        headline.push_str(&format!(
            " ({on_ground}\" less {} half {})",
            halves.len(),
            plural(halves.len() as u32, "move", "moves")
        ));
    }
    Ok(Resolved {
        headline,
        lookups,
        result: json!({
            "base_inches": base,
            "after_horses_killed_inches": after_horses,
            "on_ground_inches": on_ground,
            "half_moves_lost": halves.len(),
            "move_inches": left,
            "notes": notes,
        }),
    })
}
