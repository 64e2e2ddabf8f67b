//! Small-arms and Gatling fire (SMALL ARMS RANGES/EFFECTS, GATLING GUN, COVER): one die per
//! man firing, or one die for every man under the Gatling gun's wedge pattern (which grape shot
//! uses too).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::casualties::{
    casualty_summary, casualty_words, cover_suffix, effect_words, men_of, survival_rolls, Man, Weapon,
};
use super::tables::{Inches, ShooterRow, EFFECTS, SMALL_ARMS_RANGES};
use super::{check_crew, check_group, check_groups, check_men, check_range, Cover, Shooters, Slope, TargetGroup};
use crate::resolver::{Lookup, Resolved};
use crate::{DiceStream, Refusal};

/// Small-arms fire: one die per man firing.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SmallArmsFire {
    /// Who fires (a row of SMALL ARMS RANGES/EFFECTS; Gatling guns use `gatling_fire`).
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

pub(super) fn small_arms_fire(i: &SmallArmsFire, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
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
    let mut result = json!({
        "max_range_inches": max,
        "effect": effect.map(|e| e.effect),
        "split_up": effect.and_then(|e| e.horse_hit_on).is_some(),
    });
    summary.add_to(&mut result, &men);
    Ok(Resolved { headline, lookups, result })
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

pub(super) fn effect_band_lookup(band: usize, max: Inches) -> Lookup {
    let from = max * band as f64 / 4.0;
    let to = max * (band + 1) as f64 / 4.0;
    Lookup::new("EFFECT", format!("range quarter {} of 4 ({from}\"-{to}\")", band + 1), "EFFECT", EFFECTS[band].effect)
}

/// The effect against one group: cover moves it one row down ("COVER REDUCES EFFECT BY 1",
/// from "1" to nothing); mounted men in the open split it between man and horse.
pub(super) fn effect_for(group: &TargetGroup, band: usize, lookups: &mut Vec<Lookup>) -> Option<Effect> {
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
pub(super) struct Effect {
    pub(super) effect: &'static str,
    pub(super) hits_up_to: u32,
    pub(super) horse_hit_on: Option<u32>,
}

// Gatling guns and grape shot: the wedge pattern.

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

pub(super) fn gatling_fire(i: &GatlingFire, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
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
    let mut result = json!({"max_range_inches": max, "effect": EFFECTS[band].effect});
    summary.add_to(&mut result, &men);
    Ok(Resolved { headline, lookups, result })
}

/// One die for every man under a wedge pattern, read against his group's effect.
pub(super) fn pattern_dice(
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
