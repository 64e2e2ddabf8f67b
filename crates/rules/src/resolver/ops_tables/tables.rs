//! Seed 003's tables as data, rows and columns in the seed's own order, so a reader can hold
//! this file and `003_532c948ba9b90adf.txt` side by side. Modifiers are kept in hundredths
//! (`.80` is 80) so every product is exact integer arithmetic.

use std::fmt;

// ---------------------------------------------------------------------------------------------
// OPERATION COSTS TABLE

/// One cell of the Operation Costs Table, as printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cost {
    /// `2(3)`: the cost of an orthogonal move, and (in parentheses) of a diagonal one.
    Move(u32, u32),
    /// `1(P)`: the road bonus, "Diagonal moves are not allowed using the road bonus."
    OrthogonalOnly(u32),
    /// `+2`: added to the cost of entering the square.
    Plus(u32),
    /// `12`: the cost of the action.
    Flat(u32),
    /// `P`: prohibited.
    Prohibited,
    /// `N/A`: the row does not apply to this unit type.
    NotApplicable,
}

use Cost::{Flat, Move, NotApplicable, OrthogonalOnly, Plus, Prohibited};

impl fmt::Display for Cost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Move(orthogonal, diagonal) => write!(f, "{orthogonal}({diagonal})"),
            OrthogonalOnly(orthogonal) => write!(f, "{orthogonal}(P)"),
            Plus(points) => write!(f, "+{points}"),
            Flat(points) => write!(f, "{points}"),
            Prohibited => f.write_str("P"),
            NotApplicable => f.write_str("N/A"),
        }
    }
}

/// The table's columns, in the seed's order.
pub const UNIT_COLUMNS: [&str; 4] = ["INF./DIS. CAV.", "CAV.", "LIMB. ART.", "UNLIMB. ART."];

/// The table's rows, in the seed's order; `OPERATION_COSTS[row as usize]` is that row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostRow {
    Clear,
    Town,
    Woods,
    Cornfield,
    River,
    Stream,
    Ford,
    Bridge,
    RoadBonus,
    EnterHigherElevation,
    EnterOrLeaveEnemyZoc,
    MoveZocToZoc,
    ChangeMode,
    UnlimberInZoc,
    Fortify,
    FirePhase,
    MeleeAttack,
    MeleeDefence,
}

/// "OPERATION COSTS TABLE (Numbers in parentheses refer to diagonal moves … P = Prohibited.)"
pub const OPERATION_COSTS: [(&str, [Cost; 4]); 18] = [
    //                              INF./DIS. CAV.  CAV.          LIMB. ART.    UNLIMB. ART.
    ("Clear", [Move(2, 3), Move(1, 2), Move(2, 3), Prohibited]),
    ("Town", [Move(6, 9), Move(3, 5), Move(3, 5), Prohibited]),
    ("Woods", [Move(5, 7), Move(2, 3), Move(2, 3), Prohibited]),
    ("Cornfield", [Move(3, 5), Move(2, 3), Move(2, 3), Prohibited]),
    ("River", [Prohibited, Prohibited, Prohibited, Prohibited]),
    ("Stream", [Prohibited, Prohibited, Prohibited, Prohibited]),
    ("Ford", [Move(4, 6), Move(1, 2), Move(3, 5), Prohibited]),
    ("Bridge (1)", [Move(2, 3), Move(1, 2), Move(2, 3), Prohibited]),
    ("Road bonus (2)", [OrthogonalOnly(1), OrthogonalOnly(1), OrthogonalOnly(1), Prohibited]),
    ("Enter higher elevation (3)", [Plus(2), Plus(1), Plus(3), Prohibited]),
    ("Enter or leave enemy ZOC", [Plus(2), Plus(1), Plus(3), Prohibited]),
    ("Move ZOC to ZOC", [Plus(8), Plus(5), Prohibited, Prohibited]),
    ("Change mode (5)", [Flat(2), Flat(2), Flat(4), Flat(4)]),
    ("Unlimber in ZOC", [NotApplicable, NotApplicable, Flat(8), NotApplicable]),
    ("Fortify", [Flat(12), Prohibited, Prohibited, Prohibited]),
    ("Fire phase", [Flat(2), Flat(2), Prohibited, Flat(4)]),
    ("Melee: Att. (4)", [Flat(2), Flat(2), Prohibited, Prohibited]),
    ("Melee: Def.", [Flat(1), Flat(1), Flat(2), Flat(2)]),
];

/// "Mode change for CAV ART is 2."
pub const CAVALRY_ARTILLERY_MODE_CHANGE: u32 = 2;

/// "Units using the road bonus pay only 1 operation point to enter a higher elevation."
pub const ROAD_BONUS_HIGHER_ELEVATION: u32 = 1;

// ---------------------------------------------------------------------------------------------
// AMMO RESUPPLY TABLES

/// A cell of the Eligibility Table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eligibility {
    /// "Auto - Resupply*" — "* Resupply Table is skipped."
    AutoResupply,
    /// "90%": the chance of going to the Resupply Table.
    Percent(u32),
    /// "Auto - No Resupply".
    AutoNoResupply,
}

impl fmt::Display for Eligibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Eligibility::AutoResupply => f.write_str("Auto - Resupply*"),
            Eligibility::Percent(p) => write!(f, "{p}%"),
            Eligibility::AutoNoResupply => f.write_str("Auto - No Resupply"),
        }
    }
}

/// "RANGE TO DIV. LEADER / PERCENT CHANCE OF GOING TO RESUPPLY TABLE", by range 0 to 7.
pub const ELIGIBILITY: [(u32, Eligibility); 8] = [
    (0, Eligibility::AutoResupply),
    (1, Eligibility::AutoResupply),
    (2, Eligibility::Percent(90)),
    (3, Eligibility::Percent(70)),
    (4, Eligibility::Percent(50)),
    (5, Eligibility::Percent(30)),
    (6, Eligibility::Percent(10)),
    (7, Eligibility::AutoNoResupply),
];

/// "50% chance to go to Resupply Table for CAV, CAV ART, Confederate ART, and Evans Brigade."
pub const FLAT_ELIGIBILITY_PERCENT: u32 = 50;

/// A Resupply Table cell: the chance at the end of the turn and (in parentheses) mid turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResupplyChance {
    pub full: u32,
    pub mid_turn: u32,
}

impl fmt::Display for ResupplyChance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}% ({}%)", self.full, self.mid_turn)
    }
}

const fn chance(full: u32, mid_turn: u32) -> ResupplyChance {
    ResupplyChance { full, mid_turn }
}

/// The Resupply Table's columns, in the seed's order.
pub const RESUPPLY_COLUMNS: [&str; 2] = ["UNION (Mid Turn)", "CONFED. (Mid Turn)"];

/// "Resupply Table: Chance to become resupplied with ammo."
pub const RESUPPLY: [(&str, [ResupplyChance; 2]); 2] = [
    //              UNION           CONFED.
    ("Art.", [chance(70, 35), chance(50, 25)]),
    ("Inf./Cav.", [chance(90, 45), chance(70, 35)]),
];

// ---------------------------------------------------------------------------------------------
// MELEE COMBAT RESULTS TABLE

/// "(Attacker's Mod. Strength − Def. Mod. Strength) / 50"
pub const MELEE_DIFFERENTIAL_DIVISOR: i128 = 50;

/// "Random of 25": the die every loss cell rolls.
pub const MELEE_LOSS_DIE: u32 = 25;

/// One row of the Melee Combat Results Table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeleeRow {
    /// The row's label, as printed.
    pub differential: &'static str,
    /// Lowest and highest differential of the row (`None`: open-ended).
    pub lowest: Option<i64>,
    pub highest: Option<i64>,
    /// What is added to the attacker's and defender's "Random of 25".
    pub attacker_loss_addition: u32,
    pub defender_loss_addition: u32,
    /// "% ATT. RETREAT" and "% DEF. RETREAT".
    pub attacker_retreat_percent: u32,
    pub defender_retreat_percent: u32,
}

const fn melee_row(
    differential: &'static str,
    lowest: Option<i64>,
    highest: Option<i64>,
    [attacker_loss_addition, defender_loss_addition, attacker_retreat_percent, defender_retreat_percent]: [u32; 4],
) -> MeleeRow {
    MeleeRow {
        differential,
        lowest,
        highest,
        attacker_loss_addition,
        defender_loss_addition,
        attacker_retreat_percent,
        defender_retreat_percent,
    }
}

/// The Melee Combat Results Table: `[att. loss addition, def. loss addition, % att. retreat,
/// % def. retreat]` per differential row.
pub const MELEE_CRT: [MeleeRow; 5] = [
    melee_row("-7 or less", None, Some(-7), [150, 0, 50, 0]),
    melee_row("-5 to -6", Some(-6), Some(-5), [50, 0, 50, 0]),
    melee_row("-4 to 4", Some(-4), Some(4), [0, 0, 20, 40]),
    melee_row("5 to 12", Some(5), Some(12), [0, 50, 0, 100]),
    melee_row("13 and more", Some(13), None, [0, 100, 0, 100]),
];

impl MeleeRow {
    pub fn holds(&self, differential: i64) -> bool {
        self.lowest.is_none_or(|low| differential >= low) && self.highest.is_none_or(|high| differential <= high)
    }

    /// The "ATT. LOSSES" cell as printed.
    pub fn attacker_losses_text(&self) -> String {
        loss_text("Random of 25", self.attacker_loss_addition)
    }

    /// The "DEF. LOSSES" cell as printed.
    pub fn defender_losses_text(&self) -> String {
        loss_text("Random 25", self.defender_loss_addition)
    }
}

fn loss_text(random: &str, addition: u32) -> String {
    if addition == 0 {
        random.to_owned()
    } else {
        format!("{random} + {addition}")
    }
}

/// The row holding `differential` (the rows cover every integer).
pub fn melee_row_for(differential: i64) -> &'static MeleeRow {
    MELEE_CRT.iter().find(|row| row.holds(differential)).unwrap_or(if differential < 0 {
        &MELEE_CRT[0]
    } else {
        &MELEE_CRT[4]
    })
}

// ---------------------------------------------------------------------------------------------
// WEAPON/RANGE CASUALTY TABLE

/// Small arms lose "men lost per 100 men"; artillery "per one gun".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeaponClass {
    SmallArms,
    Artillery,
}

/// The range columns. The seed prints six headings over seven numbers, the seventh heading
/// blank and every seventh number 0: we read it as "beyond 15 squares".
pub const RANGE_COLUMNS: [&str; 7] = ["1", "2", "3", "4-6", "7-10", "11-15", "beyond 15"];

/// The column of a range in squares (1 or more).
pub fn range_column(squares: u32) -> usize {
    match squares {
        0 | 1 => 0,
        2 => 1,
        3 => 2,
        4..=6 => 3,
        7..=10 => 4,
        11..=15 => 5,
        _ => 6,
    }
}

/// One row of the Weapon/Range Casualty Table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeaponRow {
    pub weapon_type: &'static str,
    pub abbreviation: &'static str,
    pub class: WeaponClass,
    pub casualties: [u32; 7],
}

const fn small_arms(weapon_type: &'static str, abbreviation: &'static str, casualties: [u32; 7]) -> WeaponRow {
    WeaponRow { weapon_type, abbreviation, class: WeaponClass::SmallArms, casualties }
}

const fn gun(weapon_type: &'static str, abbreviation: &'static str, casualties: [u32; 7]) -> WeaponRow {
    WeaponRow { weapon_type, abbreviation, class: WeaponClass::Artillery, casualties }
}

/// "WEAPON/RANGE CASUALTY TABLE", range in squares 1, 2, 3, 4-6, 7-10, 11-15, (beyond).
pub const WEAPONS: [WeaponRow; 17] = [
    small_arms("Rifle", "RFL", [4, 2, 0, 0, 0, 0, 0]),
    small_arms("Musket", "MSK", [3, 0, 0, 0, 0, 0, 0]),
    small_arms("Rifle/Musket", "R/M", [3, 1, 0, 0, 0, 0, 0]),
    small_arms("Rifle/Sharps", "R/S", [6, 2, 0, 0, 0, 0, 0]),
    small_arms("Rifle/Shotgun", "R/G", [4, 1, 0, 0, 0, 0, 0]),
    small_arms("Sharps Rifle", "SHR", [8, 2, 0, 0, 0, 0, 0]),
    small_arms("Rifle/Carbine", "R/C", [4, 1, 0, 0, 0, 0, 0]),
    small_arms("Carbine", "CRB", [4, 1, 0, 0, 0, 0, 0]),
    small_arms("Shotgun", "SHG", [4, 0, 0, 0, 0, 0, 0]),
    small_arms("Pistol", "PST", [1, 0, 0, 0, 0, 0, 0]),
    gun("6 lb. Smoothbore", "SM6", [8, 2, 2, 1, 0, 0, 0]),
    gun("12 lb. Napoleon", "N12", [14, 4, 2, 1, 0, 0, 0]),
    gun("3\" Rifled Gun", "RG3", [8, 5, 4, 2, 1, 0, 0]),
    gun("12 lb. Howitzer", "H12", [16, 2, 2, 1, 0, 0, 0]),
    gun("24 lb. Howitzer", "H24", [17, 4, 2, 1, 0, 0, 0]),
    gun("10 lb. Parrott", "P10", [8, 5, 5, 2, 2, 1, 0]),
    gun("20 lb. Parrott", "P20", [8, 6, 6, 2, 2, 1, 0]),
];

/// "The number under the range column is the number of men lost per 100 men for small arms".
pub const SMALL_ARMS_MEN_PER_ROW: u32 = 100;

// ---------------------------------------------------------------------------------------------
// FATIGUE GAIN TABLE

/// The Fatigue Gain Table's rows, in the seed's order.
pub const FATIGUE_GAIN: [(&str, u32); 7] = [
    ("Enter square in normal mode", 2),
    ("Enter square in column mode", 1),
    ("Fortify one level", 20),
    ("Per 2 casualties in men (see below)", 1),
    ("Per one operation point of force march", 6),
    ("Leader dies in unit", 5),
    ("Routed unit passes through friendly unit", 5),
];

/// "Per 2 casualties in men": one fatigue point per this many men lost, for small units.
pub const CASUALTIES_PER_FATIGUE: u32 = 2;

/// The NOTE's worked examples (600 men: 1 per 3; 900 men: 1 per 4½) are both "1 fatigue per
/// (men / 200) men lost"; the table's "1 per 2" is that rule at 400 men, and "up to 1000 men"
/// stops it at 1 per 5. See docs/rules/ops-tables.md.
pub const FATIGUE_MEN_PER_CASUALTY_STEP: u32 = 200;
pub const FATIGUE_FULL_GAIN_UP_TO_MEN: u32 = 400;
pub const FATIGUE_REDUCTION_STOPS_AT_MEN: u32 = 1000;

// ---------------------------------------------------------------------------------------------
// FIRE AND MELEE STRENGTH/CASUALTY TERRAIN MODIFIERS ("If the defender is in:")

/// `(TERRAIN, FIRE MOD., MELEE MOD.)` in hundredths. Bridge/Ford's melee `.80*` is for an
/// "Attacker on bridge/ford".
pub const TERRAIN_MODIFIERS: [(&str, u32, u32); 6] = [
    ("Clear", 100, 100),
    ("Cornfield", 100, 100),
    ("Woods", 80, 100),
    ("Higher Elev.", 90, 90),
    ("Town", 70, 100),
    ("Bridge/Ford", 100, 80),
];

pub const TERRAIN_CLEAR: usize = 0;
pub const TERRAIN_CORNFIELD: usize = 1;
pub const TERRAIN_WOODS: usize = 2;
pub const TERRAIN_HIGHER_ELEVATION: usize = 3;
pub const TERRAIN_TOWN: usize = 4;
pub const TERRAIN_BRIDGE_FORD: usize = 5;

// ---------------------------------------------------------------------------------------------
// MODE MODIFIERS ON FIRE AND MELEE STRENGTH/CASUALTIES

/// `(MODE, UNIT TYPE, FIRE, MELEE)` in hundredths.
pub const MODE_MODIFIERS: [(&str, &str, u32, u32); 5] = [
    ("Normal", "INF", 100, 100),
    ("Column", "INF", 75, 75),
    ("Mounted", "CAV", 75, 150),
    ("Routed", "ALL", 75, 50),
    ("Lim. or Unlim. Art.", "ART", 100, 100),
];

// ---------------------------------------------------------------------------------------------
// OTHER MODIFIERS ON FIRE AND MELEE STRENGTH/CASUALTIES

/// "Flank Modifier to Attacker = 1.50"
pub const FLANK_MODIFIER_TO_ATTACKER: u32 = 150;
/// "Flank Modifier to Defender = .50"
pub const FLANK_MODIFIER_TO_DEFENDER: u32 = 50;

/// "Density Modifier = 1% more or less casualties per 12 men more or less than 650 men in the
/// square. No more or less casualties than 25%."
pub const DENSITY_BASE_MEN: u32 = 650;
pub const DENSITY_MEN_PER_PERCENT: u32 = 12;
pub const DENSITY_CAP_PERCENT: i64 = 25;

/// "Random Modifier = ±50% (.5 to 1.5)": a d101 read as 0.49 + face/100, so .50 to 1.50 in
/// steps of .01, 1.00 in the middle.
pub const RANDOM_MODIFIER_DIE: u32 = 101;
pub const RANDOM_MODIFIER_OFFSET: u32 = 49;

/// "Battle Time Modifier = (OP Remaining)/10 … A unit is assumed to always have at least five
/// operation points remaining."
pub const BATTLE_TIME_DIVISOR: u32 = 10;
pub const BATTLE_TIME_FLOOR_OP: u32 = 5;

/// "Fortification = Level × .10 — This modifies Att. Fire Strength." (taken as 1 − level × .10)
pub const FORTIFICATION_PER_LEVEL: u32 = 10;
