//! The seed's tables as data, rows and columns in the seed's own order, so a reader can hold
//! this file and `001_4467c6c8e3357613.txt` side by side.

use super::{Class, Cover, Range};

use Class::{A, B, C, D, E};

// ---------------------------------------------------------------------------------------------
// Allocation of troops

/// "1xAverage Dice": the six faces of an average die, in face order (a d6 showing 1 reads 2).
pub const AVERAGE_DIE: [u32; 6] = [2, 3, 3, 4, 4, 5];

/// "Allocation of Foot regiments and Class", Federal 12 Regiments, in the seed's order and in
/// the seed's spelling ("Veteran/Zouarve": the seed's word for Zouave, shown as the seed has it).
pub const FEDERAL_FOOT: [(&str, Class); 12] = [
    ("Veteran/Zouarve", A),
    ("Veteran/Zouarve", A),
    ("Veteran/Zouarve", A),
    ("Regular Infantry", B),
    ("Experienced Infantry/Volunteers", C),
    ("Experienced Infantry/Volunteers", C),
    ("Experienced Infantry/Volunteers", C),
    ("Experienced Infantry/Volunteers", C),
    ("Experienced Infantry/Volunteers", C),
    ("Recruits/Volunteers", D),
    ("Recruits/Volunteers", D),
    ("Recruits/Volunteers", E),
];

/// "Confederate foot 8 regiments", in the seed's order.
pub const CONFEDERATE_FOOT: [(&str, Class); 8] = [
    ("Zouarve/Veteran", A),
    ("Zouarve/Veteran", A),
    ("Regular Infantry", B),
    ("Experienced Infantry/Volunteers", C),
    ("Experienced Infantry/Volunteers", C),
    ("Experienced Infantry/Volunteers", C),
    ("Recruits/Volunteers", D),
    ("Recruits/Volunteers", D),
];

/// What the extra regiments from the average die are: "These will be C Class."
pub const EXTRA_FOOT: (&str, Class) = ("Experienced Infantry/Volunteers", C);

/// "You throw 1xD6 per Cavalry Regiment 1 2 C Class 3 4 B Class 5 6 A Class" (and the same
/// per Artillery Battery), indexed by the die's face − 1.
pub const CAVALRY_AND_BATTERY_CLASS: [Class; 6] = [C, C, B, B, A, A];

/// "Each Regiment of Foot and Cavalry start off with 10 figures" (then + 1xD10).
pub const REGIMENT_BASE_FIGURES: u32 = 10;

/// "Federal Artillery Battery always have 5 Figures … Confederate … 4 Figures".
pub const FEDERAL_BATTERY_CREW: u32 = 5;
pub const CONFEDERATE_BATTERY_CREW: u32 = 4;

/// "4 Companies of Sharpshooters (8 figures)".
pub const SHARPSHOOTER_COMPANIES: u32 = 4;
pub const SHARPSHOOTER_FIGURES: u32 = 8;
/// "B Reg Inf *Sharpshooters*" in "Formations permitted and Class".
pub const SHARPSHOOTER_CLASS: Class = B;

/// "Brigades of a minimum of 3 regiments and there must be at least 3 Brigadier figures".
pub const MIN_REGIMENTS_PER_BRIGADE: u32 = 3;
pub const MIN_BRIGADES: u32 = 3;

// ---------------------------------------------------------------------------------------------
// Firing

/// A weapon of the "Ranges" table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangedWeapon {
    Musket,
    MusketAfter1862,
    Rifle,
    Bow,
    Shotgun,
    Carbine,
    FieldGun,
    HeavyGun,
}

/// "Ranges": (short up to cm, long up to cm); `None` where the seed leaves the cell empty.
pub const fn range_bands(weapon: RangedWeapon) -> (Option<u32>, Option<u32>) {
    match weapon {
        //                                   Short      Long
        RangedWeapon::Musket => (Some(15), Some(30)),
        RangedWeapon::MusketAfter1862 => (Some(15), Some(90)),
        RangedWeapon::Rifle => (Some(30), Some(120)),
        RangedWeapon::Bow => (None, Some(20)),
        RangedWeapon::Shotgun => (Some(5), None),
        RangedWeapon::Carbine => (Some(15), Some(50)),
        RangedWeapon::FieldGun => (Some(30), Some(120)),
        RangedWeapon::HeavyGun => (Some(45), Some(180)),
    }
}

/// "Score required to hit on 1xD6", Inf/Cav firing: A +2 … E +6.
pub const fn small_arms_to_hit(class: Class) -> u32 {
    match class {
        A => 2,
        B => 3,
        C => 4,
        D => 5,
        E => 6,
    }
}

/// "Score required to hit on 1xD6", Artillery firing: A +2, B +3, C +4 (no D or E row).
pub const fn artillery_to_hit(class: Class) -> Option<u32> {
    match class {
        A => Some(2),
        B => Some(3),
        C => Some(4),
        D | E => None,
    }
}

/// "Throw 1xD6 per figure hit, for save from musket, rifle, bow, shotguns and carbine": the
/// lowest die that saves. Rows Open, Soft Cover, Hard Cover; columns Short, Long.
pub const SMALL_ARMS_SAVES: [[u32; 2]; 3] = [
    //  Short  Long
    [5, 4], // Open        +5 +6        +4 +5 +6
    [4, 3], // Soft Cover  +4 +5 +6     +3 +4 +5 +6
    [3, 2], // Hard Cover  +3 +4 +5 +6  +2 +3 +4 +5 +6
];

/// "Throw 1xD6 per figure hit for save from Field/Heavy Artillery", laid out as above.
pub const ARTILLERY_SAVES: [[u32; 2]; 3] = [
    //  Short  Long
    [6, 5], // Open        +6           +5 +6
    [5, 4], // Soft Cover  +5 +6        +4 +5 +6
    [4, 3], // Hard Cover  +4 +5 +6     +3 +4 +5 +6
];

pub const fn cover_row(cover: Cover) -> usize {
    match cover {
        Cover::Open => 0,
        Cover::Soft => 1,
        Cover::Hard => 2,
    }
}

pub const fn range_column(range: Range) -> usize {
    match range {
        Range::Short => 0,
        Range::Long => 1,
    }
}

// ---------------------------------------------------------------------------------------------
// Melee

/// A row of the melee table: a class, or an officer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillRow {
    Class(Class),
    Officers,
}

/// "Scores to Kill" on 1xD10: the lowest die that kills. Rows in the seed's order (E first);
/// columns open, behind soft cover, behind hard cover.
pub const KILL_SCORES: [(KillRow, [u32; 3]); 6] = [
    //                              open  soft  hard
    (KillRow::Class(E), [3, 4, 5]),
    (KillRow::Class(D), [4, 5, 6]),
    (KillRow::Class(C), [5, 6, 7]),
    (KillRow::Class(B), [7, 8, 9]),
    (KillRow::Class(A), [8, 9, 10]),
    (KillRow::Officers, [8, 9, 10]),
];

pub fn kill_score(row: KillRow, cover: Cover) -> u32 {
    KILL_SCORES.iter().find(|(r, _)| *r == row).map_or(10, |(_, cells)| cells[cover_row(cover)])
}

// ---------------------------------------------------------------------------------------------
// Formation Fail Test

/// "To get out of a Formation Fail Throw 1xD6 — To Pass A Class +2 … E Class +6".
pub const fn formation_test_pass(class: Class) -> u32 {
    match class {
        A => 2,
        B => 3,
        C => 4,
        D => 5,
        E => 6,
    }
}

// ---------------------------------------------------------------------------------------------
// Morale

/// "Check Chart Infantry and Cavalry": figures in the regiment 11 … 20 (the columns).
pub const INFANTRY_CAVALRY_FIGURES: [u32; 10] = [11, 12, 13, 14, 15, 16, 17, 18, 19, 20];

/// Points at which the unit routs, rows A … E, columns as [`INFANTRY_CAVALRY_FIGURES`].
pub const INFANTRY_CAVALRY_ROUT: [(Class, [i32; 10]); 5] = [
    //      11 12 13 14 15 16 17 18 19 20
    (A, [4, 5, 5, 6, 6, 6, 7, 7, 8, 8]),
    (B, [5, 5, 6, 6, 7, 7, 8, 8, 9, 9]),
    (C, [6, 6, 7, 7, 7, 8, 9, 9, 10, 10]),
    (D, [7, 7, 8, 9, 9, 10, 11, 11, 12, 12]),
    (E, [8, 8, 9, 10, 11, 11, 12, 13, 14, 14]),
];

/// "Check Chart Sharpshooters and Artillery men": figures in company or battery 4 … 8.
pub const SHARPSHOOTERS_ARTILLERY_FIGURES: [u32; 5] = [4, 5, 6, 7, 8];

/// Points at which the unit routs, rows A … C.
pub const SHARPSHOOTERS_ARTILLERY_ROUT: [(Class, [i32; 5]); 3] = [
    //      4  5  6  7  8
    (A, [2, 2, 2, 3, 3]),
    (B, [2, 2, 3, 3, 4]),
    (C, [2, 3, 3, 4, 4]),
];

/// "add or subtract" — the morale modifiers, in the seed's order.
pub const NO_FRIENDS_WITHIN_30CM: i32 = -1;
pub const ENEMY_CAVALRY_WITHIN_30CM: i32 = -1;
pub const OFFICER_FAIL: i32 = -1;
pub const FORMATION_FAIL: i32 = -1;
pub const SAW_ROUT_WITHIN_30CM: i32 = -1;
pub const OFFICER_ATTACHED: i32 = 1;
pub const BEHIND_SOFT_COVER: i32 = 1;
pub const BEHIND_HARD_COVER: i32 = 2;

// ---------------------------------------------------------------------------------------------
// Destruction of

/// What a gun can knock down, with its hit value (per 6" where the seed says so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structure {
    StoneBuilding,
    StoneBridge,
    WoodenBuilding,
    WoodenBridge,
    Earthworks,
    Fieldworks,
    StoneWall,
    Fence,
}

/// (hit value, counted per 6" length, troops in or on it are destroyed with it).
pub const fn hit_value(structure: Structure) -> (u32, bool, bool) {
    match structure {
        //                                hits  per 6"  troops in/on destroyed
        Structure::StoneBuilding => (40, false, true),
        Structure::StoneBridge => (40, false, true),
        Structure::WoodenBuilding => (20, false, true),
        Structure::WoodenBridge => (20, false, true),
        Structure::Earthworks => (40, true, false),
        Structure::Fieldworks => (40, true, false),
        Structure::StoneWall => (20, true, false),
        Structure::Fence => (10, true, false),
    }
}

/// "Throw 2xD6 per Artillery man field gun and 3xD6 per Artillery man Heavy gun".
pub const FIELD_GUN_DICE_PER_GUNNER: u32 = 2;
pub const HEAVY_GUN_DICE_PER_GUNNER: u32 = 3;

// ---------------------------------------------------------------------------------------------
// Night and Day

/// The hour daylight ends: "if you threw 13 the time is 1 o'clock in the afternoon, so you
/// will have 7 hours left in summer and 6 hours left in spring/autumn".
pub const SUMMER_DUSK: u32 = 20;
pub const SPRING_AUTUMN_DUSK: u32 = 19;
/// "Each 1 hour is equal to 4 turns per player."
pub const TURNS_PER_HOUR: u32 = 4;
/// "A score of 6 or less throw again, a score of 17 or above throw again".
pub const EARLIEST_HOUR: u32 = 7;
pub const LATEST_HOUR: u32 = 16;
/// "For each day passed your opponent gets 10 Victory Points".
pub const POINTS_PER_DAY_PASSED: u32 = 10;

// ---------------------------------------------------------------------------------------------
// Victory Points

pub const TOWN: u32 = 60;
pub const FARM: u32 = 20;
pub const BRIDGE: u32 = 20;
pub const ROUTED_ENEMY_UNIT: u32 = 5;
pub const SQUARE_IN_OPPONENTS_HALF: u32 = 10;
pub const OFFICER_KILLED: u32 = 10;
/// "You can have 1 baggage wagon per Division, if captured you get 20 Victory Points."
pub const BAGGAGE_WAGON: u32 = 20;
