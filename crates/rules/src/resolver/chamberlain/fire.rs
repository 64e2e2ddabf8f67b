//! "Chamberlain ACW Fire Combat".
//!
//! "2. INF rolls # of dice equal to élan. 3. ART rolls #D6 = to ammo # & Marks off 1.
//! 4. Halve #D6 only once. 5. Sixes to hit (Repeaters 5, 6). 6. Each hit causes 1 fatigue.
//! 7. If target is Artillery, 1 hit causes retreat or >1 hit causes to retire."

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::tables::{self, FireBonus, FirePenalty, FireRange, Weapon, WeaponEffect};
use super::{at_risk_check, check_range, count_hits, refuse, to_result, Arm, AtRiskCheck, Rounding, MAX_RATING};
use crate::resolver::{Lookup, Resolved};
use crate::{DiceStream, Refusal};

/// One unit's fire at one target.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FireInputs {
    /// The firing unit.
    pub firer: Firer,
    /// The unit fired at.
    pub target: Target,
    /// The range band: `volley` (1 BW) or `skirmish` (2 BW) for infantry and cavalry;
    /// `canister` (2 BW, +1d6) or `long` (8 BW) for artillery.
    pub range: FireRange,
    /// Firing at the target's flank (+1d6).
    #[serde(default)]
    pub at_flank: bool,
    /// Artillery: the line of fire "Is obstructed" (halves).
    #[serde(default)]
    pub obstructed: bool,
    /// Artillery: the optional over-head fire rule ("All fire half strength").
    #[serde(default)]
    pub overhead: bool,
    /// How halving rounds an odd pool, `up` (default) or `down`: the sheet does not say.
    #[serde(default)]
    pub halves_round: Rounding,
}

/// The firing unit.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Firer {
    pub arm: Arm,
    /// Cavalry or mounted infantry firing mounted ("Firing unit is Mounted": halves).
    #[serde(default)]
    pub mounted: bool,
    /// Infantry, cavalry and mounted infantry: élan, the number of dice (1 to 12).
    #[serde(default)]
    pub elan: Option<u32>,
    /// Artillery: ammo left before this shot, the number of dice (1 to 12); one is marked off.
    #[serde(default)]
    pub ammo: Option<u32>,
    /// Infantry and cavalry: the weapon mark (default `standard`, no mark).
    #[serde(default)]
    pub weapon: Weapon,
    /// "Firing unit is Impetuous" (infantry and cavalry; halves).
    #[serde(default)]
    pub impetuous: bool,
    /// The unit moved this turn and fires anyway: only repeaters "(RR)" (halves, "Firing unit
    /// moved (RR)") and horse artillery ("Moving Fire (HS)", halves) may.
    #[serde(default)]
    pub moved: bool,
    /// Sharpshooters "(SS)": an officer attached to the target takes an at-risk check, 5-6 kills.
    #[serde(default)]
    pub sharpshooters: bool,
    /// Artillery: the battery is RH ("RH firing Counter battery (CB) = +1d6").
    #[serde(default)]
    pub rh: bool,
    /// Artillery: the "Artillery Range Trait" applies to this shot (+1d6).
    #[serde(default)]
    pub range_trait: bool,
    /// Artillery: an attached "Artillery" (A) officer lays the guns (+1d6).
    #[serde(default)]
    pub artillery_officer: bool,
}

/// The unit fired at.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Target {
    pub arm: Arm,
    /// Cavalry or mounted infantry on horseback (infantry fire at it halves; hit while
    /// passive, it retreats 2 BW).
    #[serde(default)]
    pub mounted: bool,
    /// The target is passive (not activated this turn).
    #[serde(default)]
    pub passive: bool,
    /// Infantry and cavalry fire: "at target on crest" (halves).
    #[serde(default)]
    pub on_crest: bool,
    /// Artillery fire: the target "Is in cover" (halves).
    #[serde(default)]
    pub in_cover: bool,
    /// Artillery fire: the target "Is concealed" (halves). A concealed target hit is revealed.
    #[serde(default)]
    pub concealed: bool,
    /// Artillery fire: the target "Is uphill" (halves).
    #[serde(default)]
    pub uphill: bool,
    /// An officer is attached to the target (checked at risk if the firer is sharpshooters).
    #[serde(default)]
    pub officer_attached: bool,
}

/// The fire pool, step by step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FirePool {
    /// Élan or ammo: the dice before penalties.
    pub base: u32,
    /// The penalties that apply, in the sheet's words (any number halves once).
    pub penalties: Vec<&'static str>,
    pub halved: bool,
    pub after_halving: u32,
    /// The bonuses that apply, in the sheet's words.
    pub bonuses: Vec<&'static str>,
    /// Bonus dice added after halving (artillery: only one, however many apply).
    pub bonus_dice: u32,
    /// The dice rolled.
    pub dice: u32,
    /// The lowest face that hits.
    pub hits_on: u32,
    /// Situations given that the sheet does not penalise for this kind of firer.
    pub not_applicable: Vec<&'static str>,
}

/// What the fire did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FireResult {
    pub pool: FirePool,
    /// The faces rolled, in order.
    pub dice: Vec<u32>,
    pub hits: u32,
    /// "Each hit causes 1 fatigue" (an artillery target retreats or retires instead).
    pub target_fatigue: u32,
    /// An artillery target hit: `retreats` (1 hit) or `retires` (more than 1).
    pub artillery_target: Option<&'static str>,
    /// "Retreat due to fire": a passive mounted target hit retreats this many BW away.
    pub mounted_retreat_bw: Option<u32>,
    /// A concealed target hit is revealed.
    pub target_revealed: bool,
    /// Artillery: ammo left after marking one off.
    pub ammo_left: Option<u32>,
    /// The target's attached officer's check against sharpshooters.
    pub officer_at_risk: Option<AtRiskCheck>,
}

fn weapon_effect(weapon: Weapon, range: FireRange) -> WeaponEffect {
    match tables::weapon_row(weapon) {
        None => WeaponEffect::NoChange,
        Some(row) => match range {
            FireRange::Volley => row.volley,
            FireRange::Skirmish => row.skirmish,
            FireRange::Canister | FireRange::Long => WeaponEffect::NoChange,
        },
    }
}

fn is_repeater(weapon: Weapon) -> bool {
    tables::weapon_row(weapon).is_some_and(|row| row.repeater)
}

/// Checks everything before a die is rolled.
pub fn validate(inputs: &FireInputs) -> Result<(), Refusal> {
    let firer = &inputs.firer;
    let artillery = firer.arm.is_artillery();
    if artillery {
        if firer.elan.is_some() {
            return Err(refuse("firer.elan", "fire.dice", "artillery rolls its ammo, not élan: give `ammo`"));
        }
        let Some(ammo) = firer.ammo else {
            return Err(refuse("firer.ammo", "fire.dice", "artillery rolls #D6 equal to its ammo: give `ammo`"));
        };
        if ammo == 0 {
            return Err(refuse(
                "firer.ammo",
                "fire.no_ammo",
                "the battery has no ammo left to mark off and cannot fire",
            ));
        }
        check_range("firer.ammo", "fire.dice", ammo, 1..=MAX_RATING, "ammo")?;
    } else {
        if firer.ammo.is_some() {
            return Err(refuse("firer.ammo", "fire.dice", "infantry and cavalry roll élan, not ammo: give `elan`"));
        }
        let Some(elan) = firer.elan else {
            return Err(refuse(
                "firer.elan",
                "fire.dice",
                "infantry and cavalry roll # of dice equal to élan: give `elan`",
            ));
        };
        check_range("firer.elan", "fire.dice", elan, 1..=MAX_RATING, "élan")?;
    }
    if firer.mounted && !firer.arm.can_be_mounted() {
        return Err(refuse("firer.mounted", "fire.mounted", format!("{} cannot be mounted", firer.arm.label())));
    }
    if inputs.target.mounted && !inputs.target.arm.can_be_mounted() {
        return Err(refuse(
            "target.mounted",
            "fire.mounted",
            format!("{} cannot be mounted", inputs.target.arm.label()),
        ));
    }
    if artillery {
        if !matches!(inputs.range, FireRange::Canister | FireRange::Long) {
            return Err(refuse("range", "fire.range", "artillery fires at `canister` (2 BW) or `long` (8 BW) range"));
        }
        let infantry_only = [
            ("firer.weapon", firer.weapon != Weapon::Standard, "a weapon mark"),
            ("firer.impetuous", firer.impetuous, "the Impetuous penalty"),
            ("firer.sharpshooters", firer.sharpshooters, "sharpshooters"),
        ];
        for (field, given, what) in infantry_only {
            if given {
                return Err(refuse(
                    field,
                    "fire.infantry_only",
                    format!("{what} belongs to infantry and cavalry fire, not artillery"),
                ));
            }
        }
        if firer.moved && firer.arm != Arm::HorseArtillery {
            return Err(refuse(
                "firer.moved",
                "fire.moved",
                "\"Did not move may fire or (RR) (HS)\": only horse artillery may move and fire",
            ));
        }
    } else {
        if !matches!(inputs.range, FireRange::Volley | FireRange::Skirmish) {
            return Err(refuse(
                "range",
                "fire.range",
                "infantry and cavalry fire at `volley` (1 BW) or `skirmish` (2 BW) range",
            ));
        }
        let artillery_only = [
            ("firer.rh", firer.rh, "an RH battery"),
            ("firer.range_trait", firer.range_trait, "the Artillery Range Trait"),
            ("firer.artillery_officer", firer.artillery_officer, "an Artillery (A) officer laying the guns"),
            ("overhead", inputs.overhead, "over-head fire"),
        ];
        for (field, given, what) in artillery_only {
            if given {
                return Err(refuse(field, "fire.artillery_only", format!("{what} belongs to artillery fire")));
            }
        }
        if weapon_effect(firer.weapon, inputs.range) == WeaponEffect::MayNotFire {
            return Err(refuse(
                "range",
                "fire.weapon_range",
                "smoothbore muskets (+1/-) may not fire at skirmish range",
            ));
        }
        if firer.moved && !is_repeater(firer.weapon) {
            return Err(refuse(
                "firer.moved",
                "fire.moved",
                "\"Did not move may fire or (RR) (HS)\": only units with repeaters (RR) may \
                 move and fire",
            ));
        }
    }
    Ok(())
}

fn penalty_words(penalty: FirePenalty) -> &'static str {
    tables::INFANTRY_PENALTIES
        .iter()
        .chain(tables::ARTILLERY_PENALTIES.iter())
        .chain(std::iter::once(&tables::OVERHEAD_FIRE))
        .find(|(p, _)| *p == penalty)
        .map_or("", |(_, words)| words)
}

/// Counts the dice of a valid fire: penalties halve the élan or ammo once, then bonus dice
/// are added.
pub fn fire_pool(inputs: &FireInputs) -> FirePool {
    let firer = &inputs.firer;
    let target = &inputs.target;
    let at_artillery = target.arm.is_artillery();
    let mut penalties = Vec::new();
    let mut bonuses = Vec::new();
    let mut not_applicable = Vec::new();
    let (base, bonus_dice, hits_on);
    if firer.arm.is_artillery() {
        base = firer.ammo.unwrap_or(0);
        for (penalty, words) in tables::ARTILLERY_PENALTIES {
            let applies = match penalty {
                FirePenalty::InCover => target.in_cover,
                FirePenalty::Concealed => target.concealed,
                FirePenalty::Uphill => target.uphill,
                FirePenalty::MovingFire => firer.moved,
                FirePenalty::Obstructed => inputs.obstructed,
                FirePenalty::CounterBattery => at_artillery,
                _ => false,
            };
            if applies {
                penalties.push(words);
            }
        }
        if inputs.overhead {
            penalties.push(tables::OVERHEAD_FIRE.1);
        }
        if target.on_crest {
            not_applicable.push(penalty_words(FirePenalty::TargetOnCrest));
        }
        for (bonus, words, _) in tables::ARTILLERY_BONUSES {
            let applies = match bonus {
                FireBonus::RhCounterBattery => firer.rh && at_artillery,
                FireBonus::Canister => inputs.range == FireRange::Canister,
                FireBonus::ArtilleryFlank => inputs.at_flank,
                FireBonus::RangeTrait => firer.range_trait,
                FireBonus::ArtilleryOfficer => firer.artillery_officer,
                _ => false,
            };
            if applies {
                bonuses.push(words);
            }
        }
        // "Artillery Bonus (Only one)".
        bonus_dice = (bonuses.len() as u32).min(tables::ARTILLERY_BONUS_LIMIT);
        hits_on = tables::FIRE_HITS_ON;
    } else {
        base = firer.elan.unwrap_or(0);
        let effect = weapon_effect(firer.weapon, inputs.range);
        for (penalty, words) in tables::INFANTRY_PENALTIES {
            let applies = match penalty {
                FirePenalty::SkirmishRange => inputs.range == FireRange::Skirmish,
                FirePenalty::Impetuous => firer.impetuous,
                FirePenalty::Mounted => firer.mounted,
                FirePenalty::MovedWithRepeaters => firer.moved,
                FirePenalty::TargetOnCrest => target.on_crest,
                FirePenalty::AtArtillery => at_artillery,
                FirePenalty::AtMountedCavalry => target.mounted,
                _ => false,
            };
            if applies {
                penalties.push(words);
            }
        }
        let artillery_penalties_given = [
            (FirePenalty::InCover, target.in_cover),
            (FirePenalty::Concealed, target.concealed),
            (FirePenalty::Uphill, target.uphill),
            (FirePenalty::Obstructed, inputs.obstructed),
        ];
        for (penalty, given) in artillery_penalties_given {
            if given {
                not_applicable.push(penalty_words(penalty));
            }
        }
        let mut dice = 0;
        for (bonus, words, extra) in tables::INFANTRY_BONUSES {
            let applies = match bonus {
                FireBonus::InfantryFlank => inputs.at_flank,
                FireBonus::VolleyWeapon => effect == WeaponEffect::ExtraDie,
                _ => false,
            };
            if applies {
                bonuses.push(words);
                dice += extra;
            }
        }
        bonus_dice = dice;
        hits_on = if effect == WeaponEffect::HitsOnFiveSix { tables::REPEATERS_HIT_ON } else { tables::FIRE_HITS_ON };
    }
    let halved = !penalties.is_empty();
    let after_halving = if halved { inputs.halves_round.halve(base) } else { base };
    FirePool {
        base,
        penalties,
        halved,
        after_halving,
        bonuses,
        bonus_dice,
        dice: after_halving + bonus_dice,
        hits_on,
        not_applicable,
    }
}

/// Resolves one fire.
pub fn resolve(inputs: FireInputs, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    validate(&inputs)?;
    let pool = fire_pool(&inputs);
    let firer = &inputs.firer;
    let target = &inputs.target;
    let artillery = firer.arm.is_artillery();
    let mut lookups = Vec::new();

    lookups.push(if artillery {
        Lookup::new(
            "Procedure for Fire",
            "3. ART rolls #D6 = to ammo # & Marks off 1",
            format!("ammo {}", pool.base),
            format!("{} dice", pool.base),
        )
    } else {
        Lookup::new(
            "Procedure for Fire",
            "2. INF rolls # of dice equal to élan",
            format!("élan {}", pool.base),
            format!("{} dice", pool.base),
        )
    });
    let (range_table, ranges) = if artillery {
        ("Artillery Fire Range", &tables::ARTILLERY_FIRE_RANGE)
    } else {
        ("Infantry Fire Range", &tables::INFANTRY_FIRE_RANGE)
    };
    if let Some((_, words, bw)) = ranges.iter().find(|(r, _, _)| *r == inputs.range) {
        lookups.push(Lookup::new(range_table, *words, "range", format!("{bw} BW")));
    }
    let penalty_table = if artillery { "Artillery Penalties: (1/2 once)" } else { "Infantry Penalties (1/2 once)" };
    for words in &pool.penalties {
        lookups.push(Lookup::new(penalty_table, *words, "penalty", "1/2"));
    }
    if pool.halved {
        lookups.push(Lookup::new(
            "Procedure for Fire",
            "4. Halve #D6 only once",
            format!("{} dice, rounded {:?}", pool.base, inputs.halves_round).to_lowercase(),
            format!("{} dice", pool.after_halving),
        ));
    }
    let bonus_table = if artillery { "Artillery Bonus (Only one)" } else { "Infantry & Cavalry Bonus" };
    for words in &pool.bonuses {
        lookups.push(Lookup::new(bonus_table, *words, "bonus", "+1d6"));
    }
    if artillery && pool.bonuses.len() > 1 {
        lookups.push(Lookup::new(
            bonus_table,
            "Only one",
            format!("{} bonuses apply", pool.bonuses.len()),
            format!("+{}d6", pool.bonus_dice),
        ));
    }
    if let Some(row) = tables::weapon_row(firer.weapon) {
        let effect = weapon_effect(firer.weapon, inputs.range);
        lookups.push(Lookup::new(
            "Repeaters (RR) / weapon marks",
            row.name,
            format!("{:?}", inputs.range).to_lowercase(),
            format!("{} → {}", row.mark, effect.describe()),
        ));
    }
    lookups.push(Lookup::new(
        "Procedure for Fire",
        "5. Sixes to hit (Repeaters 5, 6)",
        firer.weapon_label(artillery),
        format!("hits on {}+", pool.hits_on),
    ));

    let rolls: Vec<u32> = (1..=pool.dice).map(|i| dice.roll(6, format!("fire, die {i} of {}", pool.dice))).collect();
    let hits = count_hits(&rolls, pool.hits_on);

    let mut artillery_target = None;
    let mut target_fatigue = 0;
    if target.arm.is_artillery() {
        if hits > 0 {
            let row = if hits == 1 { tables::ARTILLERY_HIT[0] } else { tables::ARTILLERY_HIT[1] };
            artillery_target = Some(row.1);
            lookups.push(Lookup::new("If Defending artillery is hit", format!("{hits} hit(s)"), "artillery", row.1));
        }
    } else {
        target_fatigue = hits;
        lookups.push(Lookup::new(
            "Procedure for Fire",
            "6. Each hit causes 1 fatigue",
            format!("{hits} hit(s)"),
            format!("{hits} fatigue"),
        ));
    }
    let mounted_retreat_bw = (target.mounted && target.passive && hits > 0).then(|| {
        lookups.push(Lookup::new(
            "Retreat due to fire",
            "Passive mounted troops that take at least one hit",
            format!("{hits} hit(s)"),
            format!("retreat {} BW away", tables::MOUNTED_RETREAT_BW),
        ));
        tables::MOUNTED_RETREAT_BW
    });
    let target_revealed = target.concealed && hits > 0;
    if target_revealed {
        lookups.push(Lookup::new(
            "Concealed Units are Revealed",
            "If they are fired upon and hit",
            format!("{hits} hit(s)"),
            "revealed",
        ));
    }
    let ammo_left = artillery.then(|| pool.base - 1);
    let officer_at_risk = (firer.sharpshooters && target.officer_attached).then(|| {
        lookups.push(Lookup::new(
            "Sharpshooters (SS)",
            "Attached Officers takes an “at risk” check",
            "officer attached",
            "5’s & 6’s to kill",
        ));
        at_risk_check(dice, true, "at risk, officer attached to the target", &mut lookups)
    });

    let mut headline = format!(
        "{} fires {} {} ({} {}{}{}) at {}{}, {}: {} hit{}",
        capitalised(firer.arm.label()),
        pool.dice,
        if pool.dice == 1 { "die" } else { "dice" },
        if artillery { "ammo" } else { "élan" },
        pool.base,
        if pool.halved {
            format!(" halved to {}: {}", pool.after_halving, pool.penalties.join(", "))
        } else {
            String::new()
        },
        if pool.bonus_dice > 0 {
            let only_one = if pool.bonuses.len() as u32 > pool.bonus_dice { " (only one of)" } else { "" };
            format!("; +{}{only_one}: {}", pool.bonus_dice, pool.bonuses.join(", "))
        } else {
            String::new()
        },
        if target.mounted { "mounted " } else { "" },
        target.arm.label(),
        if pool.hits_on < 6 { "5-6 hit" } else { "6s hit" },
        hits,
        if hits == 1 { "" } else { "s" },
    );
    if let Some(what) = artillery_target {
        headline.push_str(&format!("; the battery {what}"));
    } else if hits > 0 {
        headline.push_str(&format!("; {target_fatigue} fatigue"));
    }
    if let Some(bw) = mounted_retreat_bw {
        headline.push_str(&format!("; it retreats {bw} BW"));
    }
    if target_revealed {
        headline.push_str("; revealed");
    }
    if let Some(left) = ammo_left {
        headline.push_str(&format!("; {left} ammo left"));
    }
    if let Some(check) = officer_at_risk {
        headline.push_str(if check.killed {
            "; the attached officer is killed"
        } else {
            "; the attached officer survives"
        });
    }
    headline.push('.');

    let result = FireResult {
        pool,
        dice: rolls,
        hits,
        target_fatigue,
        artillery_target,
        mounted_retreat_bw,
        target_revealed,
        ammo_left,
        officer_at_risk,
    };
    Ok(Resolved { headline, lookups, result: to_result(&result) })
}

impl Firer {
    fn weapon_label(&self, artillery: bool) -> String {
        if artillery {
            "artillery".to_owned()
        } else {
            tables::weapon_row(self.weapon).map_or_else(|| "no weapon mark".to_owned(), |row| row.name.to_owned())
        }
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
