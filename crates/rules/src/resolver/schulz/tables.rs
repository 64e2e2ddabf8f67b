//! The tables of Ted Schulz's Civil War rules, laid out row by row as the seed prints them
//! (seed 002, dated December 17, 2000). Every number here is the seed's own; where the seed's
//! printed table is ragged, the comment above the table says how its cells were read.

/// A number of inches on the table (the seed uses halves: 7.5", 12.5").
pub type Inches = f64;

// ----------------------------------------------------------------------------------------------
// VEHICLE & ARMS MOVING
//
//   HORSE           | MEN | RIDERS | EMPTY MOVE | WITH CANNON | WITH GATLING |
//   4-HORSE CAISSON |  2  |   2    |    12"     |     11"     |     12"      |
//   2-HORSE CAISSON |  2  |   1    |    12"     |     10"     |     12"      |
//   WAGON           | 10  |   1    |    11"     |      9"     |     11"      |
//   2 HORSES        |     |        |    12"     |      8"     |     10"      |
//
// The seed's header is spread over two lines ("HORSE | EMPTY | WITH | WITH" over
// "TYPE | MEN | RIDERS | MOVE | CANNON | GATLING"): the columns are the men carried, the
// riders, the move empty, with a cannon and with a Gatling gun. "2 HORSES" (two cavalry horses
// pulling a gun, "TWO CAVALRY HORSES CAN PULL A CANNON OR GATLING GUN") has no men or riders.
// ----------------------------------------------------------------------------------------------

/// One row of the vehicle table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VehicleRow {
    pub name: &'static str,
    /// Men carried (`None` where the seed leaves the cell empty).
    pub men: Option<u32>,
    pub riders: Option<u32>,
    pub empty: Inches,
    pub with_cannon: Inches,
    pub with_gatling: Inches,
    /// Horses in the team: 4 and 2 by name; the seed does not say how many pull a wagon.
    pub team: Option<u32>,
}

#[rustfmt::skip]
pub const VEHICLES: [VehicleRow; 4] = [
    VehicleRow { name: "4-HORSE CAISSON", men: Some(2), riders: Some(2), empty: 12.0, with_cannon: 11.0, with_gatling: 12.0, team: Some(4) },
    VehicleRow { name: "2-HORSE CAISSON", men: Some(2), riders: Some(1), empty: 12.0, with_cannon: 10.0, with_gatling: 12.0, team: Some(2) },
    VehicleRow { name: "WAGON",           men: Some(10), riders: Some(1), empty: 11.0, with_cannon: 9.0, with_gatling: 11.0, team: None },
    VehicleRow { name: "2 HORSES",        men: None, riders: None, empty: 12.0, with_cannon: 8.0, with_gatling: 10.0, team: Some(2) },
];

/// "ALL MEN MOVE 6 INCHES."
pub const MEN_MOVE: Inches = 6.0;
/// "CAVALRY MOVE 12 INCHES."
pub const CAVALRY_MOVE: Inches = 12.0;
/// "4 men can move a cannon 3/turn", and the same 3 for a mortar (3 men) or a Gatling (2 men).
pub const HAULED_MOVE: Inches = 3.0;

// ----------------------------------------------------------------------------------------------
//   MOVE | UP(-1/3) | DOWN(+1/3) | ROAD (+1/2) |
// ----------------------------------------------------------------------------------------------

/// One row of the slope and road table: the move and its up, down and road values.
#[rustfmt::skip]
pub const MOVE_TABLE: [(Inches, Inches, Inches, Inches); 6] = [
    //  MOVE  UP    DOWN   ROAD
    (6.0, 4.0, 8.0, 9.0),
    (8.0, 5.5, 10.5, 12.0),
    (9.0, 6.0, 12.0, 13.5),
    (10.0, 6.5, 13.5, 15.0),
    (11.0, 7.5, 14.5, 16.5),
    (12.0, 8.0, 16.0, 18.0),
];

// ----------------------------------------------------------------------------------------------
// SMALL ARMS RANGES/EFFECTS
//   TYPE                 | NORMAL | UP (-1/4) | DOWN (+1/4) |
// ----------------------------------------------------------------------------------------------

/// Who is shooting, as the range table names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShooterRow {
    Infantry,
    ArtilleryMen,
    Cavalry,
    SharpshooterShort,
    SharpshooterLong,
    GatlingGun,
}

#[rustfmt::skip]
pub const SMALL_ARMS_RANGES: [(ShooterRow, &str, [Inches; 3]); 6] = [
    //                                                    NORMAL UP   DOWN
    (ShooterRow::Infantry, "INFANTRY", [12.0, 9.0, 15.0]),
    (ShooterRow::ArtilleryMen, "ARTILLERY MEN", [8.0, 6.0, 10.0]),
    (ShooterRow::Cavalry, "CAVALRY", [12.0, 9.0, 15.0]),
    (ShooterRow::SharpshooterShort, "SHARPSHOOTER (SHORT)", [12.0, 9.0, 15.0]),
    (ShooterRow::SharpshooterLong, "SHARPSHOOTER (LONG)", [16.0, 12.0, 20.0]),
    (ShooterRow::GatlingGun, "GATLING GUN", [12.0, 9.0, 15.0]),
];

// ----------------------------------------------------------------------------------------------
//   EFFECT  | SPLIT UP                          |
//   1,2,3,4 | 1,2,3 = man hit   4 = horse hit   |
//   1,2,3   | 1,2 = man hit     3 = horse hit   |
//   1,2     | 1 = man hit       2 = horse hit   |
//   1       | 1 = man hit                       |
// ----------------------------------------------------------------------------------------------

/// One effect row: the highest die that hits, and (split up, against mounted men) the die
/// that hits the horse instead of the man.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EffectRow {
    pub effect: &'static str,
    pub hits_up_to: u32,
    pub split_up: &'static str,
    pub horse_hit_on: Option<u32>,
}

#[rustfmt::skip]
pub const EFFECTS: [EffectRow; 4] = [
    EffectRow { effect: "1,2,3,4", hits_up_to: 4, split_up: "1,2,3 = man hit 4 = horse hit", horse_hit_on: Some(4) },
    EffectRow { effect: "1,2,3", hits_up_to: 3, split_up: "1,2 = man hit 3 = horse hit", horse_hit_on: Some(3) },
    EffectRow { effect: "1,2", hits_up_to: 2, split_up: "1 = man hit 2 = horse hit", horse_hit_on: Some(2) },
    EffectRow { effect: "1", hits_up_to: 1, split_up: "1 = man hit", horse_hit_on: None },
];

// ----------------------------------------------------------------------------------------------
// ARTILLERY RANGES (all ranges in inches; the GATLING PATTERN is used for grape shot)
//   ARTILLERY TYPE | NORMAL | UP | DOWN | RANGING SHOT |
// ----------------------------------------------------------------------------------------------

/// What the ranging shot needs in a range band.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranging {
    /// The die must show one of these ("12", "123").
    Needs(&'static [u32]),
    /// "NONE": no ranging shot, the piece fires for effect.
    None,
    /// "NONE-GRAPE SHOT": no ranging shot; grape shot under the Gatling pattern.
    GrapeShot,
}

impl Ranging {
    pub fn as_seed(self) -> &'static str {
        match self {
            Ranging::Needs(&[1, 2]) => "12",
            Ranging::Needs(_) => "123",
            Ranging::None => "NONE",
            Ranging::GrapeShot => "NONE-GRAPE SHOT",
        }
    }
}

/// One range band of a piece: (from, to) in inches on the level, uphill and downhill.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArtilleryBand {
    pub normal: (Inches, Inches),
    pub up: (Inches, Inches),
    pub down: (Inches, Inches),
    pub ranging: Ranging,
}

const fn band(
    normal: (Inches, Inches),
    up: (Inches, Inches),
    down: (Inches, Inches),
    ranging: Ranging,
) -> ArtilleryBand {
    ArtilleryBand { normal, up, down, ranging }
}

const R12: Ranging = Ranging::Needs(&[1, 2]);
const R123: Ranging = Ranging::Needs(&[1, 2, 3]);

#[rustfmt::skip]
pub const HEAVY_CANNON: [ArtilleryBand; 4] = [
    band((36.0, 52.0), (27.0, 39.0), (45.0, 65.0), R12),
    band((20.0, 36.0), (15.0, 27.0), (25.0, 45.0), R123),
    band((12.0, 20.0), (9.0, 15.0), (15.0, 25.0), Ranging::None),
    band((0.0, 12.0), (0.0, 9.0), (0.0, 15.0), Ranging::GrapeShot),
];

#[rustfmt::skip]
pub const MEDIUM_CANNON: [ArtilleryBand; 4] = [
    band((28.0, 44.0), (21.0, 33.0), (35.0, 55.0), R12),
    band((20.0, 28.0), (15.0, 21.0), (25.0, 35.0), R123),
    band((12.0, 20.0), (9.0, 15.0), (15.0, 25.0), Ranging::None),
    band((0.0, 12.0), (0.0, 9.0), (0.0, 15.0), Ranging::GrapeShot),
];

#[rustfmt::skip]
pub const LIGHT_CANNON: [ArtilleryBand; 4] = [
    band((28.0, 36.0), (21.0, 27.0), (35.0, 45.0), R12),
    band((20.0, 28.0), (15.0, 21.0), (25.0, 35.0), R123),
    band((12.0, 20.0), (9.0, 15.0), (15.0, 25.0), Ranging::None),
    band((0.0, 12.0), (0.0, 9.0), (0.0, 15.0), Ranging::GrapeShot),
];

#[rustfmt::skip]
pub const MORTAR: [ArtilleryBand; 3] = [
    band((20.0, 32.0), (15.0, 24.0), (25.0, 40.0), R12),
    band((16.0, 20.0), (12.0, 15.0), (20.0, 25.0), R123),
    band((10.0, 16.0), (7.5, 12.0), (12.5, 20.0), Ranging::None),
];

// ----------------------------------------------------------------------------------------------
// CREWS (MINIMUM IS NEEDED TO FIRE)
//   PIECE | MAXIMUM | MINIMUM |
// ----------------------------------------------------------------------------------------------

#[rustfmt::skip]
pub const CREWS: [(&str, u32, u32); 4] = [
    ("CANNON", 4, 2),
    ("MORTAR", 3, 1),
    ("GATLING GUN", 3, 1),
    ("WAGON GATLING", 2, 1),
];

// ----------------------------------------------------------------------------------------------
// MELEE
//   MEN               | NEEDED TO KILL |
// ----------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenRow {
    Infantry,
    UnmountedCavalry,
    Sharpshooters,
    ArtilleryMen,
    Cavalry,
}

#[rustfmt::skip]
pub const NEEDED_TO_KILL: [(MenRow, &str, &[u32]); 5] = [
    (MenRow::Infantry, "Infantry", &[1, 2, 3]),
    (MenRow::UnmountedCavalry, "Unmounted cavalry", &[1, 2]),
    (MenRow::Sharpshooters, "Sharpshooters", &[1, 2, 3]),
    (MenRow::ArtilleryMen, "Artillery men", &[1, 2, 3, 4]),
    (MenRow::Cavalry, "Cavalry", &[1, 2]),
];

/// "MAXIMUM GROUP = 10 MEN (for stay/retreat)."
pub const MAXIMUM_GROUP: u32 = 10;
/// "On walls, only 2 men can melee at a time in each direction." and "1 move - 2 men on ladder".
pub const WALL_MELEE_MEN: u32 = 2;

// ----------------------------------------------------------------------------------------------
// Survival: "Soldiers hit then roll for survival (5,6 or 6 for artillery= survive-flesh wound :
// 1-4 or 1-5 for artillery= dead & removed from the game)."
// ----------------------------------------------------------------------------------------------

/// The lowest die a man hit by small arms or in melee survives on.
pub const SURVIVES_ON: u32 = 5;
/// The lowest die a man hit by artillery survives on.
pub const SURVIVES_ARTILLERY_ON: u32 = 6;
/// "Men on ladder when pushed off need 4,5,6 to survive."
pub const SURVIVES_FALL_ON: u32 = 4;
/// "2 men can push ladder off wall by rolling 1,2."
pub const PUSH_OFF_ON: &[u32] = &[1, 2];

// ----------------------------------------------------------------------------------------------
// BUILDINGS
//   FULL   | NO ARTIL. | NO OVER   | ALL  |
//   POINTS | COVER     | TOP COVER | DEAD |
//   50-31  | 30-21     | 20-11     | <=10 |
//   40-25  | 24-17     | 16-9      | <=8  |
//   30-19  | 18-13     | 12-7      | <=6  |
//   20-13  | 12-9      | 8-5       | <=4  |
// ----------------------------------------------------------------------------------------------

/// One building row: (high, low) of the three standing bands, then the ALL DEAD ceiling.
#[rustfmt::skip]
pub const BUILDINGS: [[(u32, u32); 3]; 4] = [
    [(50, 31), (30, 21), (20, 11)],
    [(40, 25), (24, 17), (16, 9)],
    [(30, 19), (18, 13), (12, 7)],
    [(20, 13), (12, 9), (8, 5)],
];
pub const BUILDINGS_ALL_DEAD: [u32; 4] = [10, 8, 6, 4];
pub const BUILDING_COLUMNS: [&str; 4] = ["FULL POINTS", "NO ARTIL. COVER", "NO OVER TOP COVER", "ALL DEAD"];

/// "FORT TOWERS = 25 POINTS"
pub const FORT_TOWER_POINTS: u32 = 25;
/// "When a cannon is hit by a 1, take 5 points off the wall section."
pub const CANNON_HIT_WALL_POINTS: u32 = 5;

// ----------------------------------------------------------------------------------------------
// BRIDGES
//   Regular bridges have 30 points at the start.
//     at 20-30 points the bridge is OK.
//     at 10-20 points the bridge can hold men and cavalry only.
//     at 1-10 points the bridge can hold men only.
//   Foot bridges have 15 points at the start.
//     at 10-15 points the bridge is OK and can hold men and cavalry only.
//     at 1-10 points the bridge can hold men only.
// The seed's bands share their end points (20, 10); as in the buildings table, where the next
// band starts one below the last (50-31, 30-21), a shared end point belongs to the lower band.
// ----------------------------------------------------------------------------------------------

/// (lowest points of the band, what the bridge can hold), best band first.
#[rustfmt::skip]
pub const REGULAR_BRIDGE: (u32, [(u32, &str); 3]) = (
    30,
    [(21, "OK"), (11, "men and cavalry only"), (1, "men only")],
);
#[rustfmt::skip]
pub const FOOT_BRIDGE: (u32, [(u32, &str); 2]) = (
    15,
    [(11, "OK and can hold men and cavalry only"), (1, "men only")],
);
