//! Artillery (ARTILLERY; ARTILLERY RANGES): the ranging shot by range band, then fire for
//! effect or grape shot on everything under the pattern.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::casualties::{casualty_summary, casualty_words, men_of, survival_rolls, Casualties, Man, Weapon};
use super::fire::{effect_band, effect_band_lookup, pattern_dice};
use super::structures::{check_structures, hit_structures, Structure};
use super::tables::{ArtilleryBand, Inches, Ranging, EFFECTS, HEAVY_CANNON, LIGHT_CANNON, MEDIUM_CANNON, MORTAR};
use super::{capitalise, check_crew, check_groups, list, Cover, Slope, TargetGroup, MAX_MEN};
use crate::resolver::{Lookup, Resolved};
use crate::{DiceStream, Refusal};

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

pub(super) fn artillery_fire(i: &ArtilleryFire, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
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
