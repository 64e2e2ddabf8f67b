//! Ted Schulz's Civil War rules (seed 002, "ACW rules by Ted Schulz", December 17, 2000), as a
//! resolver ruleset: small-arms, Gatling and artillery fire, melee rounds, shots on buildings,
//! towers, walls, bridges and doors, pushing a storming ladder off a wall, and move allowances.
//!
//! "Dice are used for all shooting/fighting results (1 die/man)." Every die here is a d6 from
//! the post's stream. The referee keeps the table and says what is in range, under the burst
//! pattern and behind cover; the server rolls and reads the seed's tables. Every decision taken
//! where the seed is silent is written down in `docs/rules/schulz-acw.md`.

pub mod tables;

#[cfg(test)]
mod tests;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use self::tables::*;
use super::{parse_inputs, ActionSpec, Lookup, Resolved, Ruleset};
use crate::{DiceStream, Refusal};

/// The ruleset's name, as campaigns choose it.
pub const NAME: &str = "schulz-acw";

/// The most men one post may list in a group (a sanity bound, not the seed's).
pub const MAX_MEN: u32 = 100;
/// The most points a fort wall section may be given (the seed gives walls no number).
pub const MAX_WALL_POINTS: u32 = 1000;

/// Ted Schulz's Civil War rules.
pub struct Schulz;

impl Ruleset for Schulz {
    fn name(&self) -> &'static str {
        NAME
    }

    fn title(&self) -> &'static str {
        "Civil War rules by Ted Schulz (25mm)"
    }

    fn seed(&self) -> &'static str {
        "002_cb942155cba86818"
    }

    fn actions(&self) -> Vec<ActionSpec> {
        vec![
            ActionSpec::of::<SmallArmsFire>(
                "small-arms-fire",
                "Men fire one die each at a group of men; hits, horse hits, survival rolls",
                "GENERAL; SMALL ARMS RANGES/EFFECTS; COVER",
                json!({"shooters": "infantry", "men": 12, "slope": "normal", "range_inches": 7,
                       "target": {"troops": "infantry", "men": 10, "cover": "regular"}}),
            ),
            ActionSpec::of::<GatlingFire>(
                "gatling-fire",
                "A Gatling gun fires: one die for every man under the wedge pattern",
                "GATLING GUN; SMALL ARMS RANGES/EFFECTS; CREWS; COVER",
                json!({"mounting": "field", "crew": 2, "slope": "normal", "range_inches": 5,
                       "under_pattern": [{"troops": "cavalry", "men": 4},
                                         {"troops": "infantry", "men": 3, "cover": "regular"}]}),
            ),
            ActionSpec::of::<ArtilleryFire>(
                "artillery-fire",
                "A cannon or mortar fires: ranging shot by range band, then fire for effect \
                 (or grape shot) on everything under the pattern",
                "ARTILLERY; ARTILLERY RANGES; CREWS; COVER; BUILDINGS; BRIDGES; FORT",
                json!({"piece": "heavy_cannon", "crew": 4, "slope": "normal", "range_inches": 30,
                       "under_pattern": [{"troops": "infantry", "men": 5},
                                         {"troops": "artillery_men", "men": 2,
                                          "cover": "over_the_top"}],
                       "horses_under_pattern": 1,
                       "structures": [{"kind": "building_section", "size": 50, "points": 50}]}),
            ),
            ActionSpec::of::<StructureHit>(
                "structure-hit",
                "An artillery shot on target takes 2 dice off buildings, towers, wall sections \
                 and bridges; blows doors off and hits cannons on walls with a 1",
                "BUILDINGS; BRIDGES; FORT AND BUILDINGS; FORT",
                json!({"structures": [{"kind": "building_section", "size": 30, "points": 22},
                                      {"kind": "bridge", "bridge": "regular", "points": 30},
                                      {"kind": "fort_tower", "points": 25},
                                      {"kind": "door"},
                                      {"kind": "wall_cannon", "wall_points": 12}]}),
            ),
            ActionSpec::of::<MeleeRound>(
                "melee-round",
                "One round of melee between two groups of at most 10 men, with both groups' \
                 sealed stay-or-retreat choices from the round before",
                "MELEE; MELEE WITH GUN CREW; STORMING",
                json!({"round": 1, "attacker": {"troops": "infantry", "men": 4},
                       "defender": {"troops": "artillery_men", "men": 3},
                       "rest_of_gun_crew": 1}),
            ),
            ActionSpec::of::<LadderPushOff>(
                "ladder-push-off",
                "Two men on the wall try to push a storming ladder off (1,2); the men on it \
                 need 4,5,6 to survive the fall",
                "STORMING",
                json!({"men_on_ladder": 2}),
            ),
            ActionSpec::of::<MoveAllowance>(
                "move-allowance",
                "How far men, cavalry, vehicles or a hauled gun move: up, down, road, horses \
                 killed, rivers, ponds, blockades and half-move tasks",
                "MOVING; VEHICLE & ARMS MOVING; EXTRA MOVING RULES",
                json!({"mover": "four_horse_caisson", "load": "cannon", "ground": "up",
                       "horses_killed": 1, "dropping_dead_horse": true}),
            ),
        ]
    }

    fn resolve(&self, action: &str, inputs: &Value, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
        match action {
            "small-arms-fire" => small_arms_fire(&parse_inputs(inputs)?, dice),
            "gatling-fire" => gatling_fire(&parse_inputs(inputs)?, dice),
            "artillery-fire" => artillery_fire(&parse_inputs(inputs)?, dice),
            "structure-hit" => structure_hit(&parse_inputs(inputs)?, dice),
            "melee-round" => melee_round(&parse_inputs(inputs)?, dice),
            "ladder-push-off" => ladder_push_off(&parse_inputs(inputs)?, dice),
            "move-allowance" => move_allowance(&parse_inputs(inputs)?),
            other => Err(Refusal::new(
                "body.action",
                "resolver.unknown_action",
                format!("the {NAME} ruleset has no action `{other}`"),
            )),
        }
    }
}

// ==============================================================================================
// Words of the game
// ==============================================================================================

/// Level ground, uphill or downhill (the tables' NORMAL, UP and DOWN columns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Slope {
    #[default]
    Normal,
    Up,
    Down,
}

impl Slope {
    fn column(self) -> &'static str {
        match self {
            Slope::Normal => "NORMAL",
            Slope::Up => "UP",
            Slope::Down => "DOWN",
        }
    }

    fn index(self) -> usize {
        match self {
            Slope::Normal => 0,
            Slope::Up => 1,
            Slope::Down => 2,
        }
    }
}

/// Who fires small arms (the rows of SMALL ARMS RANGES/EFFECTS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Shooters {
    Infantry,
    ArtilleryMen,
    Cavalry,
    SharpshooterShort,
    SharpshooterLong,
}

impl Shooters {
    fn row(self) -> ShooterRow {
        match self {
            Shooters::Infantry => ShooterRow::Infantry,
            Shooters::ArtilleryMen => ShooterRow::ArtilleryMen,
            Shooters::Cavalry => ShooterRow::Cavalry,
            Shooters::SharpshooterShort => ShooterRow::SharpshooterShort,
            Shooters::SharpshooterLong => ShooterRow::SharpshooterLong,
        }
    }
}

/// What the men are (the rows of the melee NEEDED TO KILL table). `cavalry` is mounted
/// cavalry; dismounted troopers are `unmounted_cavalry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Troops {
    Infantry,
    Cavalry,
    UnmountedCavalry,
    Sharpshooters,
    ArtilleryMen,
}

impl Troops {
    fn words(self) -> &'static str {
        match self {
            Troops::Infantry => "infantry",
            Troops::Cavalry => "cavalry",
            Troops::UnmountedCavalry => "unmounted cavalry",
            Troops::Sharpshooters => "sharpshooters",
            Troops::ArtilleryMen => "artillery men",
        }
    }

    fn melee_row(self) -> MenRow {
        match self {
            Troops::Infantry => MenRow::Infantry,
            Troops::Cavalry => MenRow::Cavalry,
            Troops::UnmountedCavalry => MenRow::UnmountedCavalry,
            Troops::Sharpshooters => MenRow::Sharpshooters,
            Troops::ArtilleryMen => MenRow::ArtilleryMen,
        }
    }

    fn mounted(self) -> bool {
        self == Troops::Cavalry
    }
}

/// The cover men have from this fire, in the seed's words (see COVER).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Cover {
    /// In the open (cannons and live lone horses give no cover).
    #[default]
    None,
    /// Regular cover: anything reasonable, stone walls, boulders, dead horses, wagons,
    /// caissons and their horses, windows and doors. Reduces small arms, Gatling and grape
    /// shot effect by 1; no help against shells.
    Regular,
    /// Over-the-top artillery cover: within 2" of a building wall, cliff or fort wall. Counts
    /// as regular cover against small arms; shells (not mortars) cannot hit these men.
    OverTheTop,
    /// Complete artillery cover: inside a building with points, not at a door or window.
    /// Counts as regular cover against small arms; no shell can hit these men.
    Complete,
}

impl Cover {
    fn words(self) -> &'static str {
        match self {
            Cover::None => "no cover",
            Cover::Regular => "regular cover",
            Cover::OverTheTop => "over the top artillery cover",
            Cover::Complete => "complete artillery cover",
        }
    }
}

/// A group of men under fire.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetGroup {
    /// What the men are; `cavalry` is mounted (hits split between man and horse).
    pub troops: Troops,
    /// How many men (1 to 100).
    pub men: u32,
    /// Their cover from this fire (default `none`).
    #[serde(default)]
    pub cover: Cover,
    /// How many of these men (counted first) were already hit once this turn and survived;
    /// "Any man hit (in one turn) two or more times is automatically dead".
    #[serde(default)]
    pub hit_earlier_this_turn: u32,
}

// ==============================================================================================
// Small-arms fire
// ==============================================================================================

/// Small-arms fire: one die per man firing.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SmallArmsFire {
    /// Who fires (a row of SMALL ARMS RANGES/EFFECTS; Gatling guns use `gatling-fire`).
    pub shooters: Shooters,
    /// Men firing, one die each (1 to 100).
    pub men: u32,
    /// Shooting on the level, uphill or downhill (default `normal`).
    #[serde(default)]
    pub slope: Slope,
    /// Range to the target in inches (0 up to the table's range for the shooters and slope).
    pub range_inches: f64,
    /// The men fired at. The dice are spread over them in turn: die 1 at man 1, die 2 at man
    /// 2, … wrapping round when there are more dice than men.
    pub target: TargetGroup,
}

fn small_arms_fire(i: &SmallArmsFire, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    check_men("body.inputs.men", i.men)?;
    check_group("body.inputs.target", &i.target)?;
    let (row_name, ranges) = small_arms_row(i.shooters.row());
    let max = ranges[i.slope.index()];
    check_range("body.inputs.range_inches", i.range_inches, max, row_name, i.slope)?;

    let mut lookups = vec![Lookup::new("SMALL ARMS RANGES/EFFECTS", row_name, i.slope.column(), format!("{max}\""))];
    let band = effect_band(i.range_inches, max);
    lookups.push(effect_band_lookup(band, max));
    let effect = effect_for(&i.target, band, &mut lookups);

    let mut men = men_of(std::slice::from_ref(&i.target));
    if let Some(effect) = effect {
        for shot in 0..i.men {
            let target = (shot % i.target.men) as usize;
            let purpose = format!("to hit, firer {} at target man {}", shot + 1, men[target].number);
            men[target].take_die(dice.roll(6, purpose), effect);
        }
    }
    survival_rolls(dice, &mut men, Weapon::SmallArms, &mut lookups);

    let summary = casualty_summary(&men, std::slice::from_ref(&i.target));
    let headline = format!(
        "{} {} fire at {} {}{} at {}\": {}",
        i.men,
        row_name.to_lowercase(),
        i.target.men,
        i.target.troops.words(),
        cover_suffix(i.target.cover),
        i.range_inches,
        effect_words(effect, &summary),
    );
    Ok(Resolved {
        headline,
        lookups,
        result: json!({
            "max_range_inches": max,
            "effect": effect.map(|e| e.effect),
            "split_up": effect.and_then(|e| e.horse_hit_on).is_some(),
            "groups": summary.groups,
            "men": men.iter().map(Man::to_json).collect::<Vec<_>>(),
            "hits": summary.hits,
            "dead": summary.dead,
            "flesh_wounds": summary.flesh_wounds,
            "horses_killed": summary.horses_killed,
        }),
    })
}

fn small_arms_row(row: ShooterRow) -> (&'static str, [Inches; 3]) {
    SMALL_ARMS_RANGES
        .iter()
        .find(|(r, _, _)| *r == row)
        .map(|(_, name, ranges)| (*name, *ranges))
        .unwrap_or(("INFANTRY", [12.0, 9.0, 15.0]))
}

/// The effect row for a range: "There are different effects for different ranges." The seed
/// gives four effect rows and one maximum range; each row covers a quarter of the range, the
/// nearest quarter hitting on 1,2,3,4. A range on a quarter's edge belongs to the nearer band.
pub fn effect_band(range: Inches, max: Inches) -> usize {
    (1..=3).find(|&quarter| range * 4.0 <= max * quarter as f64).map(|quarter| quarter - 1).unwrap_or(3)
}

fn effect_band_lookup(band: usize, max: Inches) -> Lookup {
    let from = max * band as f64 / 4.0;
    let to = max * (band + 1) as f64 / 4.0;
    Lookup::new("EFFECT", format!("range quarter {} of 4 ({from}\"-{to}\")", band + 1), "EFFECT", EFFECTS[band].effect)
}

/// The effect against one group: cover moves it one row down ("COVER REDUCES EFFECT BY 1",
/// from "1" to nothing); mounted men in the open split it between man and horse.
fn effect_for(group: &TargetGroup, band: usize, lookups: &mut Vec<Lookup>) -> Option<Effect> {
    let covered = group.cover != Cover::None;
    let row = if covered { band + 1 } else { band };
    if covered {
        lookups.push(Lookup::new(
            "COVER",
            format!("{} ({})", group.troops.words(), group.cover.words()),
            "COVER REDUCES EFFECT BY 1",
            EFFECTS.get(row).map(|r| r.effect).unwrap_or("no effect"),
        ));
    }
    let row = EFFECTS.get(row)?;
    let horse_hit_on = if group.troops.mounted() {
        if covered {
            lookups.push(Lookup::new("COVER", "mounted cavalry under cover", "SPLIT UP", "only men can be shot at"));
            None
        } else {
            lookups.push(Lookup::new("EFFECT", row.effect, "SPLIT UP", row.split_up));
            row.horse_hit_on
        }
    } else {
        None
    };
    Some(Effect { effect: row.effect, hits_up_to: row.hits_up_to, horse_hit_on })
}

/// The dice that hit, and the one that hits the horse instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Effect {
    effect: &'static str,
    hits_up_to: u32,
    horse_hit_on: Option<u32>,
}

// ==============================================================================================
// Men under fire and their survival
// ==============================================================================================

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Unhurt,
    FleshWound,
    Dead,
    /// Hit twice or more in one turn.
    DeadHitTwice,
    /// Hit in the first round of melee: "if hit, defender is dead (no survival)".
    DeadNoSurvival,
}

impl Fate {
    fn words(self) -> &'static str {
        match self {
            Fate::Unhurt => "unhurt",
            Fate::FleshWound => "flesh wound",
            Fate::Dead => "dead",
            Fate::DeadHitTwice => "dead (hit twice this turn)",
            Fate::DeadNoSurvival => "dead (no survival)",
        }
    }

    fn dead(self) -> bool {
        matches!(self, Fate::Dead | Fate::DeadHitTwice | Fate::DeadNoSurvival)
    }
}

/// One man fired at (or fighting), numbered within his group from 1.
#[derive(Debug, Clone)]
struct Man {
    group: usize,
    troops: Troops,
    number: u32,
    hit_earlier: bool,
    dice: Vec<u32>,
    hits: u32,
    horse_hit: bool,
    survival_die: Option<u32>,
    fate: Fate,
}

impl Man {
    fn take_die(&mut self, die: u32, effect: Effect) {
        self.dice.push(die);
        if effect.horse_hit_on == Some(die) {
            self.horse_hit = true;
        } else if die <= effect.hits_up_to {
            self.hits += 1;
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "group": self.group + 1,
            "man": self.number,
            "troops": self.troops.words(),
            "hit_earlier_this_turn": self.hit_earlier,
            "dice": self.dice,
            "hits": self.hits,
            "horse_hit": self.horse_hit,
            "survival_die": self.survival_die,
            "fate": self.fate.words(),
        })
    }
}

fn men_of(groups: &[TargetGroup]) -> Vec<Man> {
    groups
        .iter()
        .enumerate()
        .flat_map(|(g, group)| {
            (1..=group.men).map(move |number| Man {
                group: g,
                troops: group.troops,
                number,
                hit_earlier: number <= group.hit_earlier_this_turn,
                dice: Vec::new(),
                hits: 0,
                horse_hit: false,
                survival_die: None,
                fate: Fate::Unhurt,
            })
        })
        .collect()
}

/// What the men were hit by, for the survival roll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Weapon {
    SmallArms,
    Melee,
    /// Shells and grape shot: "5,6 or 6 for artillery".
    Artillery,
}

/// "Soldiers hit then roll for survival (5,6 or 6 for artillery= survive-flesh wound : 1-4 or
/// 1-5 for artillery= dead & removed from the game). Any man hit (in one turn) two or more
/// times is automatically dead (no survival)."
fn survival_rolls(dice: &mut DiceStream, men: &mut [Man], weapon: Weapon, lookups: &mut Vec<Lookup>) {
    let (row, needs, survives_on) = match weapon {
        Weapon::SmallArms => ("hit by small arms", "5,6", SURVIVES_ON),
        Weapon::Melee => ("hit in melee", "5,6", SURVIVES_ON),
        Weapon::Artillery => ("hit by artillery", "6", SURVIVES_ARTILLERY_ON),
    };
    let mut told_survival = false;
    let mut told_twice = false;
    for man in men.iter_mut().filter(|m| m.hits > 0 && m.fate == Fate::Unhurt) {
        if man.hits + u32::from(man.hit_earlier) >= 2 {
            if !told_twice {
                lookups.push(Lookup::new(
                    "SURVIVAL",
                    "man hit two or more times in one turn",
                    "survival",
                    "automatically dead (no survival)",
                ));
                told_twice = true;
            }
            man.fate = Fate::DeadHitTwice;
            continue;
        }
        if !told_survival {
            lookups.push(Lookup::new("SURVIVAL", row, "survives (flesh wound) on", needs));
            told_survival = true;
        }
        let die =
            dice.roll(6, format!("survival, {} man {} of group {}", man.troops.words(), man.number, man.group + 1));
        man.survival_die = Some(die);
        man.fate = if die >= survives_on { Fate::FleshWound } else { Fate::Dead };
    }
}

#[derive(Debug, Clone, Default)]
struct Casualties {
    groups: Vec<Value>,
    hits: u32,
    dead: u32,
    flesh_wounds: u32,
    horses_killed: u32,
}

fn casualty_summary(men: &[Man], groups: &[TargetGroup]) -> Casualties {
    let mut total = Casualties::default();
    for (g, group) in groups.iter().enumerate() {
        let of_group = || men.iter().filter(move |m| m.group == g);
        let hits: u32 = of_group().map(|m| m.hits).sum();
        let dead = of_group().filter(|m| m.fate.dead()).count() as u32;
        let wounds = of_group().filter(|m| m.fate == Fate::FleshWound).count() as u32;
        let horses = of_group().filter(|m| m.horse_hit).count() as u32;
        total.groups.push(json!({
            "group": g + 1,
            "troops": group.troops.words(),
            "men": group.men,
            "cover": group.cover.words(),
            "hits": hits,
            "dead": dead,
            "flesh_wounds": wounds,
            "horses_killed": horses,
            "men_left": group.men - dead,
        }));
        total.hits += hits;
        total.dead += dead;
        total.flesh_wounds += wounds;
        total.horses_killed += horses;
    }
    total
}

fn effect_words(effect: Option<Effect>, c: &Casualties) -> String {
    match effect {
        None => "cover leaves no effect at this range".to_owned(),
        Some(e) => format!("effect {}, {}", e.effect, casualty_words(c)),
    }
}

fn casualty_words(c: &Casualties) -> String {
    let mut words = format!(
        "{} {}, {} dead, {} flesh {}",
        c.hits,
        plural(c.hits, "hit", "hits"),
        c.dead,
        c.flesh_wounds,
        plural(c.flesh_wounds, "wound", "wounds")
    );
    if c.horses_killed > 0 {
        words.push_str(&format!(", {} {} killed", c.horses_killed, plural(c.horses_killed, "horse", "horses")));
    }
    words
}

fn plural<'a>(n: u32, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

fn cover_suffix(cover: Cover) -> String {
    match cover {
        Cover::None => String::new(),
        other => format!(" ({})", other.words()),
    }
}

// ==============================================================================================
// Gatling guns and grape shot: the wedge pattern
// ==============================================================================================

/// Where the Gatling gun stands (its row of CREWS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mounting {
    /// On its own carriage: GATLING GUN, crew 1 to 3.
    #[default]
    Field,
    /// In a wagon: WAGON GATLING, crew 1 to 2, not counting the driver.
    Wagon,
}

/// A Gatling gun fires: every man under the wedge pattern takes one die.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GatlingFire {
    /// `field` (crew 1 to 3) or `wagon` (crew 1 to 2, not counting the driver).
    #[serde(default)]
    pub mounting: Mounting,
    /// Men serving the gun.
    pub crew: u32,
    /// Firing on the level, uphill or downhill (default `normal`).
    #[serde(default)]
    pub slope: Slope,
    /// Range in inches to the men under the pattern (0 to 12", 9" up, 15" down).
    pub range_inches: f64,
    /// The groups of men the referee finds under the wedge pattern (at least one).
    pub under_pattern: Vec<TargetGroup>,
}

fn gatling_fire(i: &GatlingFire, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let crew_row = match i.mounting {
        Mounting::Field => "GATLING GUN",
        Mounting::Wagon => "WAGON GATLING",
    };
    let mut lookups = Vec::new();
    check_crew("body.inputs.crew", i.crew, crew_row, &mut lookups)?;
    check_groups("body.inputs.under_pattern", &i.under_pattern, 1)?;
    let (row_name, ranges) = small_arms_row(ShooterRow::GatlingGun);
    let max = ranges[i.slope.index()];
    check_range("body.inputs.range_inches", i.range_inches, max, row_name, i.slope)?;
    lookups.push(Lookup::new("SMALL ARMS RANGES/EFFECTS", row_name, i.slope.column(), format!("{max}\"")));
    let band = effect_band(i.range_inches, max);
    lookups.push(effect_band_lookup(band, max));

    let mut men = men_of(&i.under_pattern);
    pattern_dice(dice, &i.under_pattern, &mut men, band, "Gatling", &mut lookups);
    survival_rolls(dice, &mut men, Weapon::SmallArms, &mut lookups);
    let summary = casualty_summary(&men, &i.under_pattern);
    let headline = format!(
        "Gatling gun at {}\" on {} men under the pattern (effect {}): {}",
        i.range_inches,
        i.under_pattern.iter().map(|g| g.men).sum::<u32>(),
        EFFECTS[band].effect,
        casualty_words(&summary)
    );
    Ok(Resolved {
        headline,
        lookups,
        result: json!({
            "max_range_inches": max,
            "effect": EFFECTS[band].effect,
            "groups": summary.groups,
            "men": men.iter().map(Man::to_json).collect::<Vec<_>>(),
            "hits": summary.hits,
            "dead": summary.dead,
            "flesh_wounds": summary.flesh_wounds,
            "horses_killed": summary.horses_killed,
        }),
    })
}

/// One die for every man under a wedge pattern, read against his group's effect.
fn pattern_dice(
    dice: &mut DiceStream,
    groups: &[TargetGroup],
    men: &mut [Man],
    band: usize,
    weapon: &str,
    lookups: &mut Vec<Lookup>,
) {
    for (g, group) in groups.iter().enumerate() {
        let Some(effect) = effect_for(group, band, lookups) else {
            continue;
        };
        for man in men.iter_mut().filter(|m| m.group == g) {
            let purpose = format!("{weapon}, {} man {} of group {}", group.troops.words(), man.number, g + 1);
            man.take_die(dice.roll(6, purpose), effect);
        }
    }
}

// ==============================================================================================
// Artillery
// ==============================================================================================

/// The artillery piece (its table in ARTILLERY RANGES).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Piece {
    HeavyCannon,
    MediumCannon,
    LightCannon,
    Mortar,
}

impl Piece {
    fn table(self) -> (&'static str, &'static [ArtilleryBand]) {
        match self {
            Piece::HeavyCannon => ("HEAVY CANNON", &HEAVY_CANNON),
            Piece::MediumCannon => ("MEDIUM CANNON", &MEDIUM_CANNON),
            Piece::LightCannon => ("LIGHT CANNON", &LIGHT_CANNON),
            Piece::Mortar => ("MORTAR", &MORTAR),
        }
    }

    fn crew_row(self) -> &'static str {
        match self {
            Piece::Mortar => "MORTAR",
            _ => "CANNON",
        }
    }
}

/// The band of `bands` a range falls in on `slope`: each band runs from just above its
/// lower end to its upper end, the nearest band including its lower end (0, or the mortar's
/// least range). A range on the edge of two bands belongs to the nearer one.
pub fn artillery_band(bands: &[ArtilleryBand], slope: Slope, range: Inches) -> Option<usize> {
    let nearest = bands.len().checked_sub(1)?;
    bands.iter().enumerate().position(|(n, band)| {
        let (from, to) = band_of(band, slope);
        range <= to && (range > from || (n == nearest && range >= from))
    })
}

fn band_of(band: &ArtilleryBand, slope: Slope) -> (Inches, Inches) {
    match slope {
        Slope::Normal => band.normal,
        Slope::Up => band.up,
        Slope::Down => band.down,
    }
}

/// A cannon or mortar fires.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtilleryFire {
    /// `heavy_cannon`, `medium_cannon`, `light_cannon` or `mortar`.
    pub piece: Piece,
    /// Men serving the piece: a cannon needs 2 (at most 4), a mortar 1 (at most 3).
    pub crew: u32,
    /// Firing on the level, uphill or downhill (default `normal`).
    #[serde(default)]
    pub slope: Slope,
    /// Range in inches to where the shell should land (within the piece's table).
    pub range_inches: f64,
    /// Groups of men under the burst pattern (or, for grape shot, the Gatling pattern).
    #[serde(default)]
    pub under_pattern: Vec<TargetGroup>,
    /// Horses under the pattern apart from mounted cavalry (team, caisson, lone horses).
    #[serde(default)]
    pub horses_under_pattern: u32,
    /// Buildings, towers, wall sections, bridges, doors and cannons on walls under the pattern.
    #[serde(default)]
    pub structures: Vec<Structure>,
}

fn artillery_fire(i: &ArtilleryFire, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let mut lookups = Vec::new();
    check_crew("body.inputs.crew", i.crew, i.piece.crew_row(), &mut lookups)?;
    let (table, bands) = i.piece.table();
    let band_index =
        artillery_band(bands, i.slope, i.range_inches).filter(|_| i.range_inches.is_finite()).ok_or_else(|| {
            let (_, far) = band_of(&bands[0], i.slope);
            let (near, _) = band_of(&bands[bands.len() - 1], i.slope);
            Refusal::new(
                "body.inputs.range_inches",
                "artillery.range",
                format!(
                    "a {} firing {} reaches {near}\" to {far}\", not {}\"",
                    table.to_lowercase(),
                    i.slope.column().to_lowercase(),
                    i.range_inches
                ),
            )
        })?;
    check_groups("body.inputs.under_pattern", &i.under_pattern, 0)?;
    if i.horses_under_pattern > MAX_MEN {
        return Err(Refusal::new(
            "body.inputs.horses_under_pattern",
            "artillery.horses",
            format!("at most {MAX_MEN} horses, not {}", i.horses_under_pattern),
        ));
    }
    check_structures("body.inputs.structures", &i.structures)?;

    let band = bands[band_index];
    let (from, to) = band_of(&band, i.slope);
    lookups.push(Lookup::new(
        format!("ARTILLERY RANGES: {table}"),
        format!("{from}-{to}"),
        format!("{} / RANGING SHOT", i.slope.column()),
        band.ranging.as_seed(),
    ));

    // "For each shot a ranging shot is rolled with a die. The number shown is what is needed
    // for the cannon to fire ... If you dont get the ranging shot, remove the burst pattern."
    let ranging_die = match band.ranging {
        Ranging::Needs(needed) => Some((dice.roll(6, "ranging shot"), needed)),
        Ranging::None | Ranging::GrapeShot => None,
    };
    let on_target = ranging_die.is_none_or(|(die, needed)| needed.contains(&die));
    let grape = band.ranging == Ranging::GrapeShot;
    let ranging_words = match ranging_die {
        Some((die, needed)) => {
            format!("ranging shot {die} (needs {}) {}", list(needed), if on_target { "on target" } else { "missed" })
        }
        None if grape => "grape shot".to_owned(),
        None => "no ranging shot needed".to_owned(),
    };
    let mut men = men_of(&i.under_pattern);
    let mut horses_killed = 0;
    let mut structures = Vec::new();
    if on_target {
        if grape {
            // "GATLING PATTERN is used for grape shot": each man under it takes a die, the
            // effect by the quarter of the grape band's range, cover taking one off.
            let effect_band_index = effect_band(i.range_inches, to);
            lookups.push(effect_band_lookup(effect_band_index, to));
            pattern_dice(dice, &i.under_pattern, &mut men, effect_band_index, "grape shot", &mut lookups);
            let effect = &EFFECTS[effect_band_index];
            for horse in 1..=i.horses_under_pattern {
                let die = dice.roll(6, format!("grape shot, horse {horse}"));
                if die <= effect.hits_up_to {
                    horses_killed += 1;
                }
            }
        } else {
            // "If you do get it, then you fire for effect on everything under the pattern."
            for (g, group) in i.under_pattern.iter().enumerate() {
                let hit = shell_hits(group.cover, i.piece);
                lookups.push(Lookup::new(
                    "COVER",
                    format!("{} ({})", group.troops.words(), group.cover.words()),
                    if i.piece == Piece::Mortar { "mortar shell" } else { "shell" },
                    if hit { "hit" } else { "cannot be hit" },
                ));
                for man in men.iter_mut().filter(|m| m.group == g && hit) {
                    man.hits = 1;
                    if group.troops.mounted() {
                        man.horse_hit = true;
                    }
                }
            }
            horses_killed = i.horses_under_pattern;
        }
        survival_rolls(dice, &mut men, Weapon::Artillery, &mut lookups);
        structures = hit_structures(dice, &i.structures, &mut lookups);
    }
    let summary = casualty_summary(&men, &i.under_pattern);
    let total_horses = summary.horses_killed + horses_killed;
    let mut headline = format!(
        "{} at {}\" ({}): {ranging_words}",
        capitalise(&table.to_lowercase()),
        i.range_inches,
        i.slope.column().to_lowercase()
    );
    if on_target {
        let c = Casualties { horses_killed: total_horses, ..summary.clone() };
        headline.push_str(&format!("; {}", casualty_words(&c)));
        for s in &structures {
            headline.push_str(&format!("; {}", s.words));
        }
    } else {
        headline.push_str(", burst pattern removed");
    }
    Ok(Resolved {
        headline,
        lookups,
        result: json!({
            "band": {"from": from, "to": to, "ranging_shot": band.ranging.as_seed()},
            "ranging_die": ranging_die.map(|(d, _)| d),
            "on_target": on_target,
            "grape_shot": grape,
            "groups": summary.groups,
            "men": men.iter().filter(|m| !m.dice.is_empty() || m.hits > 0 || m.horse_hit)
                .map(Man::to_json).collect::<Vec<_>>(),
            "hits": summary.hits,
            "dead": summary.dead,
            "flesh_wounds": summary.flesh_wounds,
            "horses_killed": total_horses,
            "structures": structures.iter().map(|s| s.result.clone()).collect::<Vec<_>>(),
        }),
    })
}

/// Can a shell hit men with this cover? Regular cover is "not from artillery"; over-the-top
/// cover stops shells moving in an arc, "There is no over the top artillery cover from
/// mortars"; complete cover (inside a building with points) stops them all.
pub fn shell_hits(cover: Cover, piece: Piece) -> bool {
    match cover {
        Cover::None | Cover::Regular => true,
        Cover::OverTheTop => piece == Piece::Mortar,
        Cover::Complete => false,
    }
}

// ==============================================================================================
// Buildings, towers, walls, bridges, doors
// ==============================================================================================

/// Regular or foot bridge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BridgeKind {
    /// 30 points at the start.
    Regular,
    /// 15 points at the start.
    Foot,
}

/// Something an artillery shot lands on.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Structure {
    /// A building or a part of one with its own points (a section with a separate roof, a
    /// first or second story).
    BuildingSection {
        /// Its full points: 50, 40, 30 or 20 (a row of the BUILDINGS table).
        size: u32,
        /// Points left before this shot (1 to `size`).
        points: u32,
        /// Points left on the story above this one; "Must erase 2nd floor to get 1st floor",
        /// so it must be 0 (default 0).
        #[serde(default)]
        floor_above_points: u32,
    },
    /// A fort tower: 25 points at the start.
    FortTower {
        /// Points left before this shot (1 to 25).
        points: u32,
    },
    /// A section of fort wall, with the points the referee gave it.
    WallSection {
        /// Points left before this shot (1 to 1000).
        points: u32,
    },
    /// A bridge.
    Bridge {
        /// `regular` (30 points) or `foot` (15 points).
        bridge: BridgeKind,
        /// Points left before this shot (1 to 30, or 15 for a foot bridge).
        points: u32,
    },
    /// A door: "Doors can be blown off with a 1 from artillery."
    Door {},
    /// A cannon on a fort wall: "When a cannon is hit by a 1, take 5 points off the wall
    /// section."
    WallCannon {
        /// Points left on the wall section it stands on (1 to 1000).
        wall_points: u32,
    },
}

/// One artillery shot on target at the structures listed.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StructureHit {
    /// What the shot lands on (at least one).
    pub structures: Vec<Structure>,
}

fn structure_hit(i: &StructureHit, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    if i.structures.is_empty() {
        return Err(Refusal::new(
            "body.inputs.structures",
            "structure.none",
            "name at least one structure the shot lands on",
        ));
    }
    check_structures("body.inputs.structures", &i.structures)?;
    let mut lookups = Vec::new();
    let outcomes = hit_structures(dice, &i.structures, &mut lookups);
    let headline =
        format!("Artillery shot: {}", outcomes.iter().map(|o| o.words.clone()).collect::<Vec<_>>().join("; "));
    Ok(Resolved {
        headline,
        lookups,
        result: json!({
            "structures": outcomes.into_iter().map(|o| o.result).collect::<Vec<_>>(),
        }),
    })
}

fn check_structures(field: &str, structures: &[Structure]) -> Result<(), Refusal> {
    if structures.len() > 20 {
        return Err(Refusal::new(field, "structure.too_many", "at most 20 structures under one pattern"));
    }
    for (n, s) in structures.iter().enumerate() {
        let at = |name: &str| format!("{field}[{n}].{name}");
        let points_between = |name: &str, points: u32, most: u32, what: &str| {
            if (1..=most).contains(&points) {
                Ok(())
            } else {
                Err(Refusal::new(
                    at(name),
                    "structure.points",
                    format!("{what} has 1 to {most} points left, not {points}"),
                ))
            }
        };
        match *s {
            Structure::BuildingSection { size, points, floor_above_points } => {
                if building_row(size).is_none() {
                    return Err(Refusal::new(
                        at("size"),
                        "building.size",
                        format!("a building section is of 50, 40, 30 or 20 points, not {size}"),
                    ));
                }
                points_between("points", points, size, "this building section")?;
                if floor_above_points > 0 {
                    return Err(Refusal::new(
                        at("floor_above_points"),
                        "building.second_floor_first",
                        "must erase 2nd floor to get 1st floor: the story above still has points",
                    ));
                }
            }
            Structure::FortTower { points } => points_between("points", points, FORT_TOWER_POINTS, "a fort tower")?,
            Structure::WallSection { points } => points_between("points", points, MAX_WALL_POINTS, "a wall section")?,
            Structure::Bridge { bridge, points } => {
                let most = match bridge {
                    BridgeKind::Regular => REGULAR_BRIDGE.0,
                    BridgeKind::Foot => FOOT_BRIDGE.0,
                };
                points_between("points", points, most, "this bridge")?
            }
            Structure::Door {} => {}
            Structure::WallCannon { wall_points } => {
                points_between("wall_points", wall_points, MAX_WALL_POINTS, "a wall section")?
            }
        }
    }
    Ok(())
}

fn building_row(size: u32) -> Option<usize> {
    BUILDINGS.iter().position(|row| row[0].0 == size)
}

/// The BUILDINGS column for `points` left of a building of full points `size`.
pub fn building_state(size: u32, points: u32) -> Option<(usize, String)> {
    let row = building_row(size)?;
    let bands = BUILDINGS[row];
    if let Some(col) = bands.iter().position(|&(high, low)| (low..=high).contains(&points)) {
        let (high, low) = bands[col];
        return Some((col, format!("{high}-{low}")));
    }
    (points <= BUILDINGS_ALL_DEAD[row]).then(|| (3, format!("<={}", BUILDINGS_ALL_DEAD[row])))
}

/// What a bridge with `points` left can hold.
pub fn bridge_state(bridge: BridgeKind, points: u32) -> &'static str {
    let bands: &[(u32, &str)] = match bridge {
        BridgeKind::Regular => &REGULAR_BRIDGE.1,
        BridgeKind::Foot => &FOOT_BRIDGE.1,
    };
    bands.iter().find(|(lowest, _)| points >= *lowest).map(|(_, holds)| *holds).unwrap_or("gone")
}

struct StructureOutcome {
    words: String,
    result: Value,
}

fn two_dice(dice: &mut DiceStream, what: &str) -> (u32, u32) {
    (
        dice.roll(6, format!("artillery shot on {what}, die 1 of 2")),
        dice.roll(6, format!("artillery shot on {what}, die 2 of 2")),
    )
}

/// "For each artillery shot on the building 2 dice are rolled and the total value is
/// subtracted from the buildings point total." Towers, wall sections and bridges alike;
/// doors and cannons on walls are hit by a 1.
fn hit_structures(dice: &mut DiceStream, structures: &[Structure], lookups: &mut Vec<Lookup>) -> Vec<StructureOutcome> {
    structures
        .iter()
        .enumerate()
        .map(|(n, s)| {
            let label = format!("structure {}", n + 1);
            match *s {
                Structure::BuildingSection { size, points, .. } => {
                    let what = format!("building section ({label}, {size} points)");
                    let (a, b) = two_dice(dice, &what);
                    let after = points.saturating_sub(a + b);
                    let (col, cell) = if after == 0 {
                        (3, "0".to_owned())
                    } else {
                        building_state(size, after).unwrap_or((3, String::new()))
                    };
                    lookups.push(Lookup::new(
                        "BUILDINGS",
                        format!("{size}-point building, {after} points"),
                        BUILDING_COLUMNS[col],
                        cell,
                    ));
                    let state = BUILDING_COLUMNS[col];
                    StructureOutcome {
                        words: format!(
                            "{size}-point building {points} - {} = {after} ({})",
                            a + b,
                            state.to_lowercase()
                        ),
                        result: json!({"kind": "building_section", "size": size,
                            "points_before": points, "dice": [a, b], "points_after": after,
                            "state": state}),
                    }
                }
                Structure::FortTower { points } => {
                    points_off(dice, "fort tower", &label, points, lookups, "FORT AND BUILDINGS")
                }
                Structure::WallSection { points } => points_off(dice, "wall section", &label, points, lookups, "FORT"),
                Structure::Bridge { bridge, points } => {
                    let kind = match bridge {
                        BridgeKind::Regular => "regular bridge",
                        BridgeKind::Foot => "foot bridge",
                    };
                    let (a, b) = two_dice(dice, &format!("{kind} ({label})"));
                    let after = points.saturating_sub(a + b);
                    let holds = bridge_state(bridge, after);
                    lookups.push(Lookup::new("BRIDGES", format!("{kind}, {after} points"), "can hold", holds));
                    StructureOutcome {
                        words: format!("{kind} {points} - {} = {after} ({holds})", a + b),
                        result: json!({"kind": "bridge", "bridge": kind, "points_before": points,
                            "dice": [a, b], "points_after": after, "holds": holds}),
                    }
                }
                Structure::Door {} => {
                    let die = dice.roll(6, format!("artillery shot on door ({label})"));
                    let blown = die == 1;
                    lookups.push(Lookup::new(
                        "FORT",
                        "Doors can be blown off with a 1 from artillery",
                        format!("die {die}"),
                        if blown { "blown off" } else { "stands" },
                    ));
                    StructureOutcome {
                        words: format!("door {}", if blown { "blown off" } else { "stands" }),
                        result: json!({"kind": "door", "die": die, "blown_off": blown}),
                    }
                }
                Structure::WallCannon { wall_points } => {
                    let die = dice.roll(6, format!("artillery shot on cannon on wall ({label})"));
                    let hit = die == 1;
                    let after = if hit { wall_points.saturating_sub(CANNON_HIT_WALL_POINTS) } else { wall_points };
                    lookups.push(Lookup::new(
                        "FORT",
                        "When a cannon is hit by a 1, take 5 points off the wall section",
                        format!("die {die}"),
                        if hit { "5 points off" } else { "no hit" },
                    ));
                    let gone = after == 0;
                    StructureOutcome {
                        words: if hit {
                            format!(
                                "cannon on wall hit, wall section {wall_points} - 5 = {after}{}",
                                if gone { " (all men and cannons on top gone)" } else { "" }
                            )
                        } else {
                            "cannon on wall not hit".to_owned()
                        },
                        result: json!({"kind": "wall_cannon", "die": die, "hit": hit,
                            "wall_points_before": wall_points, "wall_points_after": after,
                            "all_on_top_gone": gone}),
                    }
                }
            }
        })
        .collect()
}

/// Towers and wall sections lose 2 dice of points; "When all points on a wall section are
/// gone, all men and cannons on top are gone."
fn points_off(
    dice: &mut DiceStream,
    kind: &str,
    label: &str,
    points: u32,
    lookups: &mut Vec<Lookup>,
    table: &str,
) -> StructureOutcome {
    let (a, b) = two_dice(dice, &format!("{kind} ({label})"));
    let after = points.saturating_sub(a + b);
    let gone = after == 0;
    lookups.push(Lookup::new(
        table,
        format!("{kind}, {after} points"),
        "all men and cannons on top",
        if gone { "gone" } else { "stay" },
    ));
    StructureOutcome {
        words: format!(
            "{kind} {points} - {} = {after}{}",
            a + b,
            if gone { " (all men and cannons on top gone)" } else { "" }
        ),
        result: json!({"kind": kind.replace(' ', "_"), "points_before": points, "dice": [a, b],
            "points_after": after, "all_on_top_gone": gone}),
    }
}

// ==============================================================================================
// Melee
// ==============================================================================================

/// A group's sealed choice after a round in which neither side finished the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    Stay,
    /// "Retreat is a full move away from the enemy."
    Retreat,
}

/// Where the melee is fought.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    #[default]
    Open,
    /// Men on a storming ladder against the men in the fort: "no attack advantage", and
    /// 2 men a side.
    Ladder,
    /// On a fort wall: "only 2 men can melee at a time in each direction".
    Wall,
}

/// One side of a melee: a group of at most 10 men of one kind.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeleeGroup {
    /// What the men are; the NEEDED TO KILL row used against them.
    pub troops: Troops,
    /// Men in the group still fighting (1 to 10; 1 to 2 on a ladder or wall).
    pub men: u32,
    /// How many of them (counted first) were already hit once this turn and survived.
    #[serde(default)]
    pub hit_earlier_this_turn: u32,
}

/// One round of melee. The stay-or-retreat choices are the two groups' sealed choices made
/// after the round before; the server reveals both together and passes them in here.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeleeRound {
    /// The round: 1 for the first (attacker advantage), 2 or more after.
    pub round: u32,
    /// The group that moved into melee.
    pub attacker: MeleeGroup,
    /// The group attacked.
    pub defender: MeleeGroup,
    /// From round 2 on: the attacking group's sealed choice after the previous round.
    #[serde(default)]
    pub attacker_choice: Option<Choice>,
    /// From round 2 on: the defending group's sealed choice after the previous round.
    #[serde(default)]
    pub defender_choice: Option<Choice>,
    /// `open` (default), `ladder` (storming: no attacker advantage) or `wall`.
    #[serde(default)]
    pub place: Place,
    /// Men of the defending gun crew not in this melee; if the attacker wins they "MUST
    /// ATTACK in the same turn and finish the melee" (defenders must be artillery men).
    #[serde(default)]
    pub rest_of_gun_crew: u32,
}

fn check_melee_group(field: &str, g: &MeleeGroup, most: u32) -> Result<(), Refusal> {
    if !(1..=most).contains(&g.men) {
        return Err(Refusal::new(
            format!("{field}.men"),
            "melee.group",
            format!("a melee group is 1 to {most} men here, not {}", g.men),
        ));
    }
    if g.hit_earlier_this_turn > g.men {
        return Err(Refusal::new(
            format!("{field}.hit_earlier_this_turn"),
            "melee.hit_earlier",
            format!("{} men hit earlier this turn, but the group has only {}", g.hit_earlier_this_turn, g.men),
        ));
    }
    Ok(())
}

fn needed_to_kill(troops: Troops, lookups: &mut Vec<Lookup>) -> &'static [u32] {
    let (name, needed) = NEEDED_TO_KILL
        .iter()
        .find(|(row, _, _)| *row == troops.melee_row())
        .map(|(_, name, needed)| (*name, *needed))
        .unwrap_or(("Infantry", &[1, 2, 3]));
    lookups.push(Lookup::new("MELEE", name, "NEEDED TO KILL", list(needed)));
    needed
}

fn melee_men(g: &MeleeGroup, group: usize) -> Vec<Man> {
    (1..=g.men)
        .map(|number| Man {
            group,
            troops: g.troops,
            number,
            hit_earlier: number <= g.hit_earlier_this_turn,
            dice: Vec::new(),
            hits: 0,
            horse_hit: false,
            survival_die: None,
            fate: Fate::Unhurt,
        })
        .collect()
}

fn melee_round(i: &MeleeRound, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let most = match i.place {
        Place::Open => MAXIMUM_GROUP,
        Place::Ladder | Place::Wall => WALL_MELEE_MEN,
    };
    if i.round == 0 {
        return Err(Refusal::new("body.inputs.round", "melee.round", "the first round of melee is round 1"));
    }
    check_melee_group("body.inputs.attacker", &i.attacker, most)?;
    check_melee_group("body.inputs.defender", &i.defender, most)?;
    if i.rest_of_gun_crew > 0 && i.defender.troops != Troops::ArtilleryMen {
        return Err(Refusal::new(
            "body.inputs.rest_of_gun_crew",
            "melee.gun_crew",
            "the rest of a gun crew only matters when the defenders are artillery men",
        ));
    }
    if i.rest_of_gun_crew > 0 && i.rest_of_gun_crew + i.defender.men > 4 {
        return Err(Refusal::new(
            "body.inputs.rest_of_gun_crew",
            "melee.gun_crew",
            "a gun crew is at most 4 men (CREWS)",
        ));
    }
    let choices = match (i.round, i.attacker_choice, i.defender_choice) {
        (1, None, None) => None,
        (1, Some(_), _) => {
            return Err(Refusal::new(
                "body.inputs.attacker_choice",
                "melee.choice",
                "no stay-or-retreat choice comes before the first round",
            ))
        }
        (1, _, Some(_)) => {
            return Err(Refusal::new(
                "body.inputs.defender_choice",
                "melee.choice",
                "no stay-or-retreat choice comes before the first round",
            ))
        }
        (_, None, _) => {
            return Err(Refusal::new(
                "body.inputs.attacker_choice",
                "melee.choice",
                "from round 2 on, both groups' sealed stay-or-retreat choices are needed",
            ))
        }
        (_, _, None) => {
            return Err(Refusal::new(
                "body.inputs.defender_choice",
                "melee.choice",
                "from round 2 on, both groups' sealed stay-or-retreat choices are needed",
            ))
        }
        (_, Some(a), Some(d)) => Some((a, d)),
    };

    let mut lookups = Vec::new();
    if let Some((a, d)) = choices {
        lookups.push(Lookup::new(
            "MELEE",
            "stay/retreat (hidden paper, show at same time)",
            "attacker / defender",
            format!("{} / {}", choice_words(a), choice_words(d)),
        ));
        if a == Choice::Retreat || d == Choice::Retreat {
            let who = match (a, d) {
                (Choice::Retreat, Choice::Retreat) => "both groups retreat",
                (Choice::Retreat, _) => "the attackers retreat",
                _ => "the defenders retreat",
            };
            return Ok(Resolved {
                headline: format!("Melee round {}: {who} a full move away from the enemy; the melee ends", i.round),
                lookups,
                result: json!({
                    "round": i.round,
                    "attacker_choice": choice_words(a),
                    "defender_choice": choice_words(d),
                    "fought": false,
                    "attacker_retreats": a == Choice::Retreat,
                    "defender_retreats": d == Choice::Retreat,
                    "melee_over": true,
                    "winner": Value::Null,
                }),
            });
        }
    }

    // "1 ST ROUND Attacker rolls-if hit, defender is dead (no survival).[attacker advantage]"
    // Storming ladders have "no attack advantage": their first round is fought like later ones.
    let advantage = i.round == 1 && i.place != Place::Ladder;
    lookups.push(Lookup::new(
        "MELEE",
        if advantage { "1ST ROUND" } else { "2ND... ROUND" },
        "attacker hits",
        if advantage {
            "defender is dead (no survival)"
        } else {
            "defender rolls for survival, the dead fight back before being removed"
        },
    ));
    let kill_defender = needed_to_kill(i.defender.troops, &mut lookups);
    let kill_attacker = needed_to_kill(i.attacker.troops, &mut lookups);
    let mut attackers = melee_men(&i.attacker, 0);
    let mut defenders = melee_men(&i.defender, 1);

    // The attackers' dice, one a man, spread over the defenders in turn.
    for (a, attacker) in attackers.iter_mut().enumerate() {
        let d = a % defenders.len();
        let die = dice.roll(6, format!("melee, attacker {} at defender {}", a + 1, d + 1));
        attacker.dice.push(die);
        if kill_defender.contains(&die) {
            defenders[d].hits += 1;
        }
    }
    if advantage {
        for man in defenders.iter_mut().filter(|m| m.hits > 0) {
            man.fate = Fate::DeadNoSurvival;
        }
    } else {
        survival_rolls(dice, &mut defenders, Weapon::Melee, &mut lookups);
    }
    // "if miss, defender fights back"; in later rounds "DEAD fight back before being removed".
    let fighting_back: Vec<usize> = (0..defenders.len()).filter(|&d| !advantage || defenders[d].hits == 0).collect();
    // Each fights back at the man who attacked him: defender n at attacker n, wrapping round.
    for &d in &fighting_back {
        let a = d % attackers.len();
        let die = dice.roll(6, format!("melee, defender {} fights back at attacker {}", d + 1, a + 1));
        defenders[d].dice.push(die);
        if kill_attacker.contains(&die) {
            attackers[a].hits += 1;
        }
    }
    // "Defender rolls-if hit, attacker rolls for survival."
    survival_rolls(dice, &mut attackers, Weapon::Melee, &mut lookups);

    let attackers_left = attackers.iter().filter(|m| !m.fate.dead()).count() as u32;
    let defenders_left = defenders.iter().filter(|m| !m.fate.dead()).count() as u32;
    let winner = match (attackers_left, defenders_left) {
        (0, 0) => Some("none: both groups are dead"),
        (_, 0) => Some("attacker"),
        (0, _) => Some("defender"),
        _ => None,
    };
    let mut headline = format!(
        "Melee round {}{}: {} {} against {} {}: attackers lose {}, defenders lose {}",
        i.round,
        match i.place {
            Place::Open => "",
            Place::Ladder => " (storming ladder)",
            Place::Wall => " (on the wall)",
        },
        i.attacker.men,
        i.attacker.troops.words(),
        i.defender.men,
        i.defender.troops.words(),
        i.attacker.men - attackers_left,
        i.defender.men - defenders_left,
    );
    let crew_must_attack = winner == Some("attacker") && i.rest_of_gun_crew > 0;
    match winner {
        Some("attacker") => headline.push_str("; the attackers win"),
        Some("defender") => headline.push_str("; the defenders win"),
        Some(_) => headline.push_str("; no one is left standing"),
        None => headline
            .push_str(&format!("; both groups now choose, sealed, to stay or retreat before round {}", i.round + 1)),
    }
    if crew_must_attack {
        lookups.push(Lookup::new(
            "MELEE WITH GUN CREW",
            "not fighting the whole crew and the attacker wins",
            "rest of the gun crew",
            "MUST ATTACK in the same turn and finish the melee",
        ));
        headline.push_str(&format!(
            "; the rest of the gun crew ({} {}) must attack this turn",
            i.rest_of_gun_crew,
            plural(i.rest_of_gun_crew, "man", "men")
        ));
    }
    if winner == Some("attacker") && i.place == Place::Ladder {
        headline.push_str("; the ladder men are put on the wall");
    }
    Ok(Resolved {
        headline,
        lookups,
        result: json!({
            "round": i.round,
            "attacker_advantage": advantage,
            "fought": true,
            "attackers": attackers.iter().map(Man::to_json).collect::<Vec<_>>(),
            "defenders": defenders.iter().map(Man::to_json).collect::<Vec<_>>(),
            "attackers_left": attackers_left,
            "defenders_left": defenders_left,
            "melee_over": winner.is_some(),
            "winner": winner,
            "choices_needed_for_round": if winner.is_none() { Some(i.round + 1) } else { None },
            "rest_of_gun_crew_must_attack": crew_must_attack,
            "ladder_men_on_wall": winner == Some("attacker") && i.place == Place::Ladder,
        }),
    })
}

fn choice_words(c: Choice) -> &'static str {
    match c {
        Choice::Stay => "stay",
        Choice::Retreat => "retreat",
    }
}

// ==============================================================================================
// Storming: pushing the ladder off
// ==============================================================================================

/// Two men on the wall try to push a storming ladder off.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LadderPushOff {
    /// Men on the ladder (0 to 2: "1 move - 2 men on ladder").
    pub men_on_ladder: u32,
}

fn ladder_push_off(i: &LadderPushOff, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    if i.men_on_ladder > WALL_MELEE_MEN {
        return Err(Refusal::new(
            "body.inputs.men_on_ladder",
            "storming.ladder",
            format!("a ladder holds at most {WALL_MELEE_MEN} men, not {}", i.men_on_ladder),
        ));
    }
    let mut lookups = vec![Lookup::new("STORMING", "2 men can push ladder off wall", "by rolling", list(PUSH_OFF_ON))];
    let push = dice.roll(6, "push ladder off wall");
    let pushed_off = PUSH_OFF_ON.contains(&push);
    let mut falls = Vec::new();
    if pushed_off && i.men_on_ladder > 0 {
        lookups.push(Lookup::new("STORMING", "Men on ladder when pushed off", "need to survive", "4,5,6"));
        for man in 1..=i.men_on_ladder {
            let die = dice.roll(6, format!("fall survival, man {man} on ladder"));
            falls.push(json!({"man": man, "die": die, "survives": die >= SURVIVES_FALL_ON}));
        }
    }
    let survivors = falls.iter().filter(|f| f["survives"] == Value::Bool(true)).count();
    let headline = if pushed_off {
        format!(
            "Ladder push {push}: pushed off the wall; {} of {} men on it survive the fall",
            survivors, i.men_on_ladder
        )
    } else {
        format!("Ladder push {push}: the ladder stays on the wall")
    };
    Ok(Resolved {
        headline,
        lookups,
        result: json!({"push_die": push, "pushed_off": pushed_off, "falls": falls,
            "survivors": survivors}),
    })
}

// ==============================================================================================
// Moving
// ==============================================================================================

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

fn move_allowance(i: &MoveAllowance) -> Result<Resolved, Refusal> {
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

// ==============================================================================================
// Checks shared by the actions
// ==============================================================================================

fn check_men(field: &str, men: u32) -> Result<(), Refusal> {
    if (1..=MAX_MEN).contains(&men) {
        Ok(())
    } else {
        Err(Refusal::new(field, "fire.men", format!("1 to {MAX_MEN} men, not {men}")))
    }
}

fn check_group(field: &str, g: &TargetGroup) -> Result<(), Refusal> {
    check_men(&format!("{field}.men"), g.men)?;
    if g.hit_earlier_this_turn > g.men {
        return Err(Refusal::new(
            format!("{field}.hit_earlier_this_turn"),
            "fire.hit_earlier",
            format!("{} men hit earlier this turn, but the group has only {}", g.hit_earlier_this_turn, g.men),
        ));
    }
    Ok(())
}

fn check_groups(field: &str, groups: &[TargetGroup], least: usize) -> Result<(), Refusal> {
    if groups.len() < least {
        return Err(Refusal::new(field, "fire.targets", "name at least one group of men under the pattern"));
    }
    if groups.len() > 20 {
        return Err(Refusal::new(field, "fire.targets", "at most 20 groups under one pattern"));
    }
    for (n, g) in groups.iter().enumerate() {
        check_group(&format!("{field}[{n}]"), g)?;
    }
    Ok(())
}

fn check_range(field: &str, range: Inches, max: Inches, row: &str, slope: Slope) -> Result<(), Refusal> {
    if range.is_finite() && (0.0..=max).contains(&range) {
        Ok(())
    } else {
        Err(Refusal::new(
            field,
            "fire.range",
            format!(
                "{} firing {} reach 0\" to {max}\", not {range}\"",
                row.to_lowercase(),
                slope.column().to_lowercase()
            ),
        ))
    }
}

/// "CREWS (MINIMUM IS NEEDED TO FIRE)"
fn check_crew(field: &str, crew: u32, row: &str, lookups: &mut Vec<Lookup>) -> Result<(), Refusal> {
    let (name, most, least) = CREWS.iter().find(|(name, _, _)| *name == row).copied().unwrap_or(("CANNON", 4, 2));
    if crew < least {
        return Err(Refusal::new(
            field,
            "crew.minimum",
            format!("a {} needs a crew of {least} to fire, not {crew}", name.to_lowercase()),
        ));
    }
    if crew > most {
        return Err(Refusal::new(
            field,
            "crew.maximum",
            format!("a {} has a crew of at most {most}, not {crew}", name.to_lowercase()),
        ));
    }
    lookups.push(Lookup::new("CREWS", name, "MAXIMUM / MINIMUM", format!("{most} / {least}")));
    Ok(())
}

fn list(values: &[u32]) -> String {
    values.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

fn capitalise(words: &str) -> String {
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
