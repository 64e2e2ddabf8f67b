//! The Chamberlain ACW quick-reference sheet (seed 004, "Last update: 03.29.22") as data.
//!
//! Every list keeps the sheet's order and the sheet's own words, so the sheet and this file can
//! be read side by side. The sheet's boxes are quoted in the doc comment of each table.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// Fire combat
// ---------------------------------------------------------------------------------------------

/// "Procedure for Fire" 5: "Sixes to hit (Repeaters 5, 6)".
pub const FIRE_HITS_ON: u32 = 6;
/// "Procedure for Fire" 5: "(Repeaters 5, 6)".
pub const REPEATERS_HIT_ON: u32 = 5;

/// Why a fire pool is halved ("1/2 once").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirePenalty {
    // Infantry Penalties (1/2 once)
    SkirmishRange,
    Impetuous,
    Mounted,
    MovedWithRepeaters,
    TargetOnCrest,
    AtArtillery,
    AtMountedCavalry,
    // Artillery Penalties: (1/2 once)
    InCover,
    Concealed,
    Uphill,
    MovingFire,
    Obstructed,
    CounterBattery,
    // Movement sheet, "Optional Over-head Artillery fire"
    OverheadFire,
}

/// "Infantry Penalties (1/2 once)": the list joined by "or" that ends at "at mounted cavalry".
/// Infantry and cavalry (and mounted infantry) fire by élan, so they share it.
pub const INFANTRY_PENALTIES: [(FirePenalty, &str); 7] = [
    (FirePenalty::SkirmishRange, "Firing at Skirmish range"),
    (FirePenalty::Impetuous, "Firing unit is Impetuous"),
    (FirePenalty::Mounted, "Firing unit is Mounted"),
    (FirePenalty::MovedWithRepeaters, "Firing unit moved (RR)"),
    (FirePenalty::TargetOnCrest, "at target on crest"),
    (FirePenalty::AtArtillery, "at Artillery"),
    (FirePenalty::AtMountedCavalry, "at mounted cavalry"),
];

/// "Artillery Penalties: (1/2 once)": the "Is …" list that ends at "Is Counter Battery".
pub const ARTILLERY_PENALTIES: [(FirePenalty, &str); 6] = [
    (FirePenalty::InCover, "Is in cover"),
    (FirePenalty::Concealed, "Is concealed"),
    (FirePenalty::Uphill, "Is uphill"),
    (FirePenalty::MovingFire, "Moving Fire (HS)"),
    (FirePenalty::Obstructed, "Is obstructed"),
    (FirePenalty::CounterBattery, "Is Counter Battery"),
];

/// Movement sheet: "Optional Over-head Artillery fire: … All fire half strength."
pub const OVERHEAD_FIRE: (FirePenalty, &str) =
    (FirePenalty::OverheadFire, "Optional Over-head Artillery fire: All fire half strength");

/// A bonus die in fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FireBonus {
    // Artillery Bonus (Only one)
    RhCounterBattery,
    Canister,
    ArtilleryFlank,
    RangeTrait,
    ArtilleryOfficer,
    // Infantry & Cavalry Bonus
    InfantryFlank,
    VolleyWeapon,
}

/// "Artillery Bonus (Only one)": each "+1d6", but a battery takes only one of them.
pub const ARTILLERY_BONUSES: [(FireBonus, &str, u32); 5] = [
    (FireBonus::RhCounterBattery, "RH firing Counter battery (CB)", 1),
    (FireBonus::Canister, "Firing Cannister", 1),
    (FireBonus::ArtilleryFlank, "Firing at Flank", 1),
    (FireBonus::RangeTrait, "Artillery Range Trait", 1),
    (FireBonus::ArtilleryOfficer, "Attached Artillery (A) officer", 1),
];
/// "Artillery Bonus (Only one)".
pub const ARTILLERY_BONUS_LIMIT: u32 = 1;

/// "Infantry & Cavalry Bonus": "Firing at Flank = +1d6 & (+1/0, or +1/-) = +1d6" (they add).
pub const INFANTRY_BONUSES: [(FireBonus, &str, u32); 2] =
    [(FireBonus::InfantryFlank, "Firing at Flank", 1), (FireBonus::VolleyWeapon, "(+1/0, or +1/-)", 1)];

/// A range band of the sheet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FireRange {
    /// Infantry fire range "Volley 1 BW".
    Volley,
    /// Infantry fire range "Skirmish 2 BW".
    Skirmish,
    /// Artillery fire range "Cannister 2 BW" (the seed's spelling, `cannister`, is accepted too).
    #[serde(alias = "cannister")]
    Canister,
    /// Artillery fire range "Long Range 8 BW".
    Long,
}

/// "Infantry Fire Range" (infantry and cavalry).
pub const INFANTRY_FIRE_RANGE: [(FireRange, &str, u32); 2] =
    [(FireRange::Volley, "Volley", 1), (FireRange::Skirmish, "Skirmish", 2)];

/// "Artillery Fire Range".
pub const ARTILLERY_FIRE_RANGE: [(FireRange, &str, u32); 2] =
    [(FireRange::Canister, "Cannister", 2), (FireRange::Long, "Long Range", 8)];

/// A unit's weapon mark.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Weapon {
    /// No weapon mark on the unit (the ordinary rifled musket or carbine): sixes hit, no
    /// extra die.
    #[default]
    Standard,
    /// "Repeating Carbine (RR)": 5,6/0.
    RepeatingCarbine,
    /// "Repeating Rifle (RR)": 5,6.
    RepeatingRifle,
    /// "Breechloading Carbine (RR)": 5,6/0.
    BreechloadingCarbine,
    /// "Breechloading Rifle (RR)": 5,6.
    BreechloadingRifle,
    /// "Smoothbore Muskets": +1/-.
    SmoothboreMuskets,
    /// "Shot guns": +1/0.
    ShotGuns,
}

/// What a weapon mark does at one range (the mark reads "volley figure / skirmish figure").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeaponEffect {
    /// "0": no change.
    NoChange,
    /// "+1": one more die.
    ExtraDie,
    /// "5,6": hits on 5 and 6.
    HitsOnFiveSix,
    /// "-": may not fire at this range.
    MayNotFire,
}

impl WeaponEffect {
    /// In words.
    pub fn describe(self) -> &'static str {
        match self {
            WeaponEffect::NoChange => "no change",
            WeaponEffect::ExtraDie => "+1 die",
            WeaponEffect::HitsOnFiveSix => "hits on 5,6",
            WeaponEffect::MayNotFire => "may not fire",
        }
    }
}

/// One row of the weapon marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeaponRow {
    pub weapon: Weapon,
    /// The sheet's name for it.
    pub name: &'static str,
    /// The sheet's mark.
    pub mark: &'static str,
    /// Effect at volley range (1 BW), and in melee, which is fought at contact.
    pub volley: WeaponEffect,
    /// Effect at skirmish range (2 BW).
    pub skirmish: WeaponEffect,
    /// A repeater "(RR)": may move and fire half.
    pub repeater: bool,
}

/// "Repeaters (RR)" (fire sheet, read row by row) then the melee sheet's weapon line
/// "Smoothbore Muskets +1/- | Repeaters (RR) 5,6 | Shot guns +1/0".
pub const WEAPONS: [WeaponRow; 6] = [
    WeaponRow {
        weapon: Weapon::RepeatingCarbine,
        name: "Repeating Carbine (RR)",
        mark: "5,6/0 Repeater (Range 1Bw)",
        volley: WeaponEffect::HitsOnFiveSix,
        skirmish: WeaponEffect::NoChange,
        repeater: true,
    },
    WeaponRow {
        weapon: Weapon::RepeatingRifle,
        name: "Repeating Rifle (RR)",
        mark: "5,6 Repeater (Range 2Bw)",
        volley: WeaponEffect::HitsOnFiveSix,
        skirmish: WeaponEffect::HitsOnFiveSix,
        repeater: true,
    },
    WeaponRow {
        weapon: Weapon::BreechloadingCarbine,
        name: "Breechloading Carbine (RR)",
        mark: "5,6/0 Repeater (Range 1Bw)",
        volley: WeaponEffect::HitsOnFiveSix,
        skirmish: WeaponEffect::NoChange,
        repeater: true,
    },
    WeaponRow {
        weapon: Weapon::BreechloadingRifle,
        name: "Breechloading Rifle (RR)",
        mark: "5,6 Repeater (Range 2Bw)",
        volley: WeaponEffect::HitsOnFiveSix,
        skirmish: WeaponEffect::HitsOnFiveSix,
        repeater: true,
    },
    WeaponRow {
        weapon: Weapon::SmoothboreMuskets,
        name: "Smoothbore Muskets",
        mark: "+1/-",
        volley: WeaponEffect::ExtraDie,
        skirmish: WeaponEffect::MayNotFire,
        repeater: false,
    },
    WeaponRow {
        weapon: Weapon::ShotGuns,
        name: "Shot guns",
        mark: "+1/0",
        volley: WeaponEffect::ExtraDie,
        skirmish: WeaponEffect::NoChange,
        repeater: false,
    },
];

/// The row for a weapon mark (`None` for an unmarked weapon).
pub fn weapon_row(weapon: Weapon) -> Option<&'static WeaponRow> {
    WEAPONS.iter().find(|row| row.weapon == weapon)
}

/// "If Defending artillery is hit": "1 hit = retreats", "2 hits = retires" (procedure 7:
/// "1 hit causes retreat or >1 hit causes to retire").
pub const ARTILLERY_HIT: [(u32, &str); 2] = [(1, "retreats"), (2, "retires")];

/// "Retreat due to fire": passive mounted troops hit retreat this far away from the firer.
pub const MOUNTED_RETREAT_BW: u32 = 2;

// ---------------------------------------------------------------------------------------------
// Melee combat
// ---------------------------------------------------------------------------------------------

/// "How Many Dice & Hits (Hit 4+)".
pub const MELEE_HITS_ON: u32 = 4;

/// Where a unit's melee dice come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiceSource {
    Elan,
    Ammo,
}

/// "How Many Dice & Hits (Hit 4+)", in the sheet's order.
pub const MELEE_DICE: [(&str, DiceSource, &str); 4] = [
    ("Infantry", DiceSource::Elan, "Elan ± Modifiers"),
    ("Cavalry", DiceSource::Elan, "Elan ± Modifiers"),
    ("Artillery", DiceSource::Ammo, "Ammo ± Modifiers"),
    ("Mounted Infantry", DiceSource::Elan, "Elan ± Modifiers"),
];

/// What an attack goes into: the "Combat Modifiers -1D6" list (joined by "Or").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttackHindrance {
    /// "Attacking Uphill".
    Uphill,
    /// "in Difficult Terrain".
    DifficultTerrain,
    /// "Attacking Hasty works".
    HastyWorks,
    /// "Streams & Crossing".
    StreamsAndCrossing,
    /// "Light Woods & Orchards".
    LightWoodsAndOrchards,
    /// "Attacking Entrenchment".
    Entrenchment,
}

/// "Combat Modifiers": "-1D6" for any of these (the list is joined by "Or": one die at most).
pub const MELEE_MINUS_ONE: [(AttackHindrance, &str); 6] = [
    (AttackHindrance::Uphill, "Attacking Uphill"),
    (AttackHindrance::DifficultTerrain, "in Difficult Terrain"),
    (AttackHindrance::HastyWorks, "Attacking Hasty works"),
    (AttackHindrance::StreamsAndCrossing, "Streams & Crossing"),
    (AttackHindrance::LightWoodsAndOrchards, "Light Woods & Orchards"),
    (AttackHindrance::Entrenchment, "Attacking Entrenchment"),
];
/// The "-1D6" row's die.
pub const MELEE_MINUS_DICE: u32 = 1;

/// "+1D6 Yankee Hurrah! (YH) & Or Rebel Yell! (RY) & Or Defender with Steadfast leader (SF)".
pub const MELEE_PLUS_ONE: [&str; 3] =
    ["Yankee Hurrah! (YH)", "Rebel Yell! (RY)", "Defender with Steadfast leader (SF)"];
/// "Defending in Frontal Melee +1d6".
pub const FRONTAL_DEFENCE: &str = "Defending in Frontal Melee +1d6";
/// "Flanked": "Attacking unit is not in Engagement zone & Center point is behind defenders'
/// front line at contact with the enemy unit. • Re-roll successes".
pub const FLANKED: &str = "Flanked: Re-roll successes";
/// "Cavalry & Mounted Infantry vs. Infantry & Artillery": "Frontally Attacking Infantry &
/// Artillery • Re-roll successes".
pub const CAVALRY_FRONTAL: &str =
    "Cavalry & Mounted Infantry vs. Infantry & Artillery: Frontally Attacking: Re-roll successes";

/// The melee resolution table. "Doubled" is the attacker's score at least twice the
/// defender's (and more than it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MeleeOutcome {
    /// "DEFENDER ≥ ATTACKER".
    DefenderHolds,
    /// "DEFENDER was outscored" / "If ATTACKERS > DEFENDER".
    DefenderOutscored,
    /// Outscored and "doubled".
    DefenderDoubled,
}

/// One row of the resolution table: what the defender and the attacker take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolutionRow {
    pub outcome: MeleeOutcome,
    /// The sheet's heading for the row.
    pub heading: &'static str,
    /// What an infantry, cavalry or mounted infantry defender takes.
    pub defender: &'static str,
    /// What an artillery defender takes ("Defender Is Artillery").
    pub artillery_defender: &'static str,
    /// What the attacker takes.
    pub attacker: &'static str,
    /// Fatigues the attacker takes.
    pub attacker_fatigue: u32,
}

/// "DEFENDER's score ≥ / DEFENDER was outscored / DEFENDER ≥ ATTACKER / If ATTACKERS >
/// DEFENDER / Defender Is Artillery".
pub const RESOLUTION: [ResolutionRow; 3] = [
    ResolutionRow {
        outcome: MeleeOutcome::DefenderHolds,
        heading: "DEFENDER ≥ ATTACKER",
        defender: "Takes 1 fatigue",
        artillery_defender: "Otherwise, it wins the combat & -1 ammo",
        attacker: "Attacker takes 2 fatigues & retreat 2BW Facing Enemy",
        attacker_fatigue: 2,
    },
    ResolutionRow {
        outcome: MeleeOutcome::DefenderOutscored,
        heading: "DEFENDER was outscored",
        defender: "Takes Difference in Fatigues; If not broken, retreat 2BW Facing away unless \
                   Steadfast which must be doubled.",
        artillery_defender: "Outscored, it retreats 2BW & -1 ammo",
        attacker: "Take 1 fatigue & May advance",
        attacker_fatigue: 1,
    },
    ResolutionRow {
        outcome: MeleeOutcome::DefenderDoubled,
        heading: "DEFENDER was outscored (doubled)",
        defender: "Takes Difference in Fatigues; If not broken, retreat 2BW Facing away \
                   (Steadfast too, since doubled)",
        artillery_defender: "Doubled, it breaks",
        attacker: "Take 1 fatigue & May advance",
        attacker_fatigue: 1,
    },
];

/// "DEFENDER's score ≥": "Takes 1 fatigue".
pub const DEFENDER_HOLDS_FATIGUE: u32 = 1;
/// "Retreat (Retreat 2BW)".
pub const MELEE_RETREAT_BW: u32 = 2;
/// "Advance After Combat (Impetuous must advance)": "Move up to 1BW directly forward, no
/// enemy contact".
pub const ADVANCE_BW: u32 = 1;
/// "Outscored, it retreats 2BW & -1 ammo" / "wins the combat & -1 ammo".
pub const ARTILLERY_MELEE_AMMO_SPENT: u32 = 1;

/// The row for an outcome.
pub fn resolution_row(outcome: MeleeOutcome) -> &'static ResolutionRow {
    match outcome {
        MeleeOutcome::DefenderHolds => &RESOLUTION[0],
        MeleeOutcome::DefenderOutscored => &RESOLUTION[1],
        MeleeOutcome::DefenderDoubled => &RESOLUTION[2],
    }
}

// ---------------------------------------------------------------------------------------------
// Activation sheet: commanders, rally, officer traits
// ---------------------------------------------------------------------------------------------

/// "Commander at Risk": "“At Risk” 1D6; 6 = Killed, Replace with average Officer".
pub const AT_RISK_KILLED_ON: u32 = 6;
/// "Or 5,6 = killed if Firer is (SS)" (and "Sharpshooters (SS): … 5’s & 6’s to kill").
pub const AT_RISK_KILLED_ON_SHARPSHOOTERS: u32 = 5;
/// "Rally (Roll to Rally 3+)".
pub const RALLY_NEEDS: u32 = 3;
/// "Rally": "Not Within 2 BW of Enemy (except attached Hero)".
pub const RALLY_ENEMY_BW: u32 = 2;
/// "Immobile (IMB)": "place 1d6 showing 3 pips beside CnC".
pub const IMMOBILE_PIPS: u32 = 3;

/// "Officer Traits" that change dice, in the sheet's order, with what they do.
pub const OFFICER_TRAITS: [(&str, &str); 5] = [
    (
        "Immobile (IMB)",
        "When units activated by command, place 1d6 showing 3 pips beside CnC. In status phase, \
         reduce the # of pips by 1. When the last pip removed, may activate by CnC again.",
    ),
    ("Intuitive (INT)", "May reroll any one Failed activation roll this turn."),
    ("“Inspiring” (I)", "Infantry unit to which attached receives a +1D6 in all combats. “At risk”"),
    ("“Artillery” (A)", "2) Lays the guns: Artillery Officer attached +1d6 (Does not modify melees)"),
    (
        "“Steadfast” (SF)",
        "Infantry it attached to gets a +1D6 when defending in all combats. Unit does not \
         retreat, unless the attackers scores doubled. “At risk”",
    ),
];
