//! "Chamberlain ACW Melee Combat (charge the enemy unit that is the greatest threat)".
//!
//! "1. Attacker allocates dice 2. Calculate defense scores 3. Calculate attack scores
//! 4. Resolve combats". Each side rolls élan (artillery: ammo) ± one die per modifier and
//! scores a hit on every 4+; the scores are compared on the resolution table.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::tables::{self, AttackHindrance, MeleeOutcome, Weapon, WeaponEffect};
use super::{at_risk_check, check_range, count_hits, refuse, to_result, Arm, AtRiskCheck, MAX_FATIGUE, MAX_RATING};
use crate::resolver::{Lookup, Resolved};
use crate::{DiceStream, Refusal};

/// One melee: one attacking unit against one defending unit.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeleeInputs {
    /// The charging unit (infantry, cavalry or mounted infantry).
    pub attacker: MeleeUnit,
    /// The unit charged.
    pub defender: MeleeUnit,
    /// The defender is flanked: "Attacking unit is not in Engagement zone & Center point is
    /// behind defenders' front line at contact". The defender re-rolls its successes and does
    /// not get the frontal defence die.
    #[serde(default)]
    pub flanked: bool,
    /// What the attack goes into ("Combat Modifiers -1D6"): `uphill`, `difficult_terrain`,
    /// `hasty_works`, `streams_and_crossing`, `light_woods_and_orchards`, `entrenchment`.
    /// Any number of them costs the attacker one die.
    #[serde(default)]
    pub attacking_into: Vec<AttackHindrance>,
    /// "Attacker allocates dice": when the attacker splits its dice between combats, the
    /// number of its dice (after modifiers) it puts into this one. Default: all of them.
    #[serde(default)]
    pub allocated_dice: Option<u32>,
}

/// One side of a melee.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeleeUnit {
    pub arm: Arm,
    /// Infantry, cavalry, mounted infantry: élan (1 to 12).
    #[serde(default)]
    pub elan: Option<u32>,
    /// Artillery (defending only): ammo left (0 to 12).
    #[serde(default)]
    pub ammo: Option<u32>,
    /// The weapon mark: smoothbore muskets (+1/-) and shot guns (+1/0) add a die at contact.
    #[serde(default)]
    pub weapon: Weapon,
    /// The unit has Yankee Hurrah! (YH) or Rebel Yell! (RY): +1D6.
    #[serde(default)]
    pub battle_cry: bool,
    /// An "Inspiring" (I) officer is attached: +1D6 to infantry in all combats; at risk.
    #[serde(default)]
    pub inspiring_officer: bool,
    /// A "Steadfast" (SF) officer is attached: an infantry defender gets +1D6 and retreats
    /// only if doubled; at risk.
    #[serde(default)]
    pub steadfast_officer: bool,
    /// Impetuous: an attacker that wins must advance.
    #[serde(default)]
    pub impetuous: bool,
    /// Fatigues the unit has before the melee (0 = fresh).
    #[serde(default)]
    pub fatigue: u32,
    /// The fatigue count at which the unit breaks. The sheet does not give it; without it the
    /// result only says how many fatigues were taken.
    #[serde(default)]
    pub breaks_at: Option<u32>,
}

/// One side's dice, step by step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MeleePool {
    /// Élan or ammo.
    pub base: u32,
    /// "+1D6" modifiers that apply, in the sheet's words.
    pub plus: Vec<&'static str>,
    /// "-1D6" modifiers that apply (any number cost one die).
    pub minus: Vec<&'static str>,
    /// Modifiers given that do nothing for this unit.
    pub not_applicable: Vec<&'static str>,
    /// base + plus − minus, at least 0.
    pub dice: u32,
    /// The dice rolled in this combat (the attacker's allocation, else `dice`).
    pub rolled: u32,
    /// Why this side re-rolls its successes, if it does.
    pub rerolls_successes: Option<&'static str>,
}

/// What one side takes from the combat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SideOutcome {
    pub fatigue_taken: u32,
    pub fatigue_after: u32,
    /// Whether the unit broke (only known when `breaks_at` was given; an artillery defender
    /// breaks when doubled).
    pub broken: Option<bool>,
    /// Retreat in BW, if it retreats.
    pub retreat_bw: Option<u32>,
    /// "Facing away from enemy" (defender) or "Facing the enemy" (attacker).
    pub retreat_facing: Option<&'static str>,
    /// The attacker that won: "may advance" or, impetuous, "must advance" up to 1 BW.
    pub advance: Option<&'static str>,
    /// An artillery defender's ammo after the melee's "-1 ammo".
    pub ammo_left: Option<u32>,
    /// The at-risk check of its Inspiring or Steadfast officer.
    pub officer_at_risk: Option<AtRiskCheck>,
    /// In words.
    pub summary: String,
}

/// What the melee did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MeleeResult {
    pub defender_pool: MeleePool,
    pub attacker_pool: MeleePool,
    pub defender_dice: Vec<u32>,
    pub defender_rerolls: Vec<u32>,
    pub defender_score: u32,
    pub attacker_dice: Vec<u32>,
    pub attacker_rerolls: Vec<u32>,
    pub attacker_score: u32,
    pub outcome: MeleeOutcome,
    pub defender: SideOutcome,
    pub attacker: SideOutcome,
}

fn validate_unit(unit: &MeleeUnit, side: &str) -> Result<(), Refusal> {
    let field = |name: &str| format!("{side}.{name}");
    if unit.arm.is_artillery() {
        if unit.elan.is_some() {
            return Err(refuse(
                &field("elan"),
                "melee.dice",
                "\"Artillery = Ammo ± Modifiers\": give `ammo`, not `elan`",
            ));
        }
        let Some(ammo) = unit.ammo else {
            return Err(refuse(&field("ammo"), "melee.dice", "\"Artillery = Ammo ± Modifiers\": give `ammo`"));
        };
        check_range(&field("ammo"), "melee.dice", ammo, 0..=MAX_RATING, "ammo")?;
        if unit.weapon != Weapon::Standard {
            return Err(refuse(&field("weapon"), "melee.weapon", "artillery has no weapon mark"));
        }
        if unit.breaks_at.is_some() {
            return Err(refuse(
                &field("breaks_at"),
                "melee.artillery_breaks",
                "\"Defender Is Artillery: Doubled, it breaks\": artillery does not break by \
                 fatigue in melee",
            ));
        }
    } else {
        if unit.ammo.is_some() {
            return Err(refuse(
                &field("ammo"),
                "melee.dice",
                "infantry, cavalry and mounted infantry fight with élan: give `elan`, not `ammo`",
            ));
        }
        let Some(elan) = unit.elan else {
            return Err(refuse(&field("elan"), "melee.dice", "\"Elan ± Modifiers\": give `elan`"));
        };
        check_range(&field("elan"), "melee.dice", elan, 1..=MAX_RATING, "élan")?;
    }
    check_range(&field("fatigue"), "melee.fatigue", unit.fatigue, 0..=MAX_FATIGUE, "fatigue")?;
    if let Some(breaks_at) = unit.breaks_at {
        check_range(&field("breaks_at"), "melee.fatigue", breaks_at, 1..=MAX_FATIGUE, "breaks_at")?;
        if unit.fatigue >= breaks_at {
            return Err(refuse(
                &field("fatigue"),
                "melee.already_broken",
                format!("a unit with {} fatigues is already broken (it breaks at {breaks_at})", unit.fatigue),
            ));
        }
    }
    Ok(())
}

/// Checks everything before a die is rolled.
pub fn validate(inputs: &MeleeInputs) -> Result<(), Refusal> {
    if inputs.attacker.arm.is_artillery() {
        return Err(refuse(
            "attacker.arm",
            "melee.artillery_charge",
            "the Charge Move is for infantry and mounted troops: artillery defends in melee \
             but does not charge",
        ));
    }
    validate_unit(&inputs.attacker, "attacker")?;
    validate_unit(&inputs.defender, "defender")?;
    for (i, hindrance) in inputs.attacking_into.iter().enumerate() {
        if inputs.attacking_into[..i].contains(hindrance) {
            return Err(refuse(
                &format!("attacking_into[{i}]"),
                "melee.duplicate",
                format!("{hindrance:?} is listed twice"),
            ));
        }
    }
    if let Some(allocated) = inputs.allocated_dice {
        let pool = attacker_pool(inputs).dice;
        if allocated > pool {
            return Err(refuse(
                "allocated_dice",
                "melee.allocated_dice",
                format!("the attacker has {pool} dice and cannot allocate {allocated}"),
            ));
        }
    }
    Ok(())
}

fn is_infantry(unit: &MeleeUnit) -> bool {
    unit.arm == Arm::Infantry
}

/// An Inspiring officer with infantry, or a Steadfast officer with defending infantry: its die
/// counts, and it is "At risk".
fn officer_at_risk(unit: &MeleeUnit, defending: bool) -> bool {
    is_infantry(unit) && (unit.inspiring_officer || (defending && unit.steadfast_officer))
}

fn base_dice(unit: &MeleeUnit) -> u32 {
    if unit.arm.is_artillery() {
        unit.ammo.unwrap_or(0)
    } else {
        unit.elan.unwrap_or(0)
    }
}

fn battle_cry_words(unit: &MeleeUnit) -> Option<&'static str> {
    unit.battle_cry.then_some("Yankee Hurrah! (YH) & Or Rebel Yell! (RY)")
}

/// Modifiers both sides share: battle cry, Inspiring, the weapon's "+1" at contact.
fn common_modifiers(unit: &MeleeUnit, plus: &mut Vec<&'static str>, na: &mut Vec<&'static str>) {
    if let Some(words) = battle_cry_words(unit) {
        plus.push(words);
    }
    if unit.inspiring_officer {
        if is_infantry(unit) {
            plus.push("“Inspiring” (I): +1D6 in all combats");
        } else {
            na.push("“Inspiring” (I): infantry only");
        }
    }
    if let Some(row) = tables::weapon_row(unit.weapon) {
        // Melee is fought at contact, so the mark's first (volley) figure counts.
        if row.volley == WeaponEffect::ExtraDie {
            plus.push(row.name);
        } else {
            na.push("Repeaters (RR) 5,6: melee already hits on 4+");
        }
    }
}

fn pool(base: u32, plus: Vec<&'static str>, minus: Vec<&'static str>, na: Vec<&'static str>) -> MeleePool {
    let minus_dice = if minus.is_empty() { 0 } else { tables::MELEE_MINUS_DICE };
    let dice = (base + plus.len() as u32).saturating_sub(minus_dice);
    MeleePool { base, plus, minus, not_applicable: na, dice, rolled: dice, rerolls_successes: None }
}

/// The attacker re-rolls its successes when cavalry or mounted infantry attack infantry or
/// artillery frontally.
fn cavalry_frontal(inputs: &MeleeInputs) -> bool {
    matches!(inputs.attacker.arm, Arm::Cavalry | Arm::MountedInfantry)
        && matches!(inputs.defender.arm, Arm::Infantry | Arm::Artillery | Arm::HorseArtillery)
        && !inputs.flanked
}

/// The attacker's dice.
pub fn attacker_pool(inputs: &MeleeInputs) -> MeleePool {
    let unit = &inputs.attacker;
    let mut plus = Vec::new();
    let mut na = Vec::new();
    common_modifiers(unit, &mut plus, &mut na);
    if unit.steadfast_officer {
        na.push("“Steadfast” (SF): only when defending");
    }
    let minus: Vec<&'static str> = tables::MELEE_MINUS_ONE
        .iter()
        .filter(|(h, _)| inputs.attacking_into.contains(h))
        .map(|(_, words)| *words)
        .collect();
    let mut pool = pool(base_dice(unit), plus, minus, na);
    if let Some(allocated) = inputs.allocated_dice {
        pool.rolled = allocated.min(pool.dice);
    }
    if cavalry_frontal(inputs) {
        pool.rerolls_successes = Some(tables::CAVALRY_FRONTAL);
    }
    pool
}

/// The defender's dice.
pub fn defender_pool(inputs: &MeleeInputs) -> MeleePool {
    let unit = &inputs.defender;
    let mut plus = Vec::new();
    let mut na = Vec::new();
    common_modifiers(unit, &mut plus, &mut na);
    if unit.steadfast_officer {
        if is_infantry(unit) {
            plus.push(tables::MELEE_PLUS_ONE[2]);
        } else {
            na.push("“Steadfast” (SF): infantry only");
        }
    }
    if unit.impetuous {
        na.push("Impetuous: only an attacker advances");
    }
    if !inputs.flanked {
        plus.push(tables::FRONTAL_DEFENCE);
    }
    let mut pool = pool(base_dice(unit), plus, Vec::new(), na);
    if inputs.flanked {
        pool.rerolls_successes = Some(tables::FLANKED);
    }
    pool
}

/// The resolution table's row for two scores. "Doubled": the attacker scored more than the
/// defender and at least twice as much.
pub fn outcome(attacker_score: u32, defender_score: u32) -> MeleeOutcome {
    if defender_score >= attacker_score {
        MeleeOutcome::DefenderHolds
    } else if attacker_score >= 2 * defender_score {
        MeleeOutcome::DefenderDoubled
    } else {
        MeleeOutcome::DefenderOutscored
    }
}

/// Rolls a side's dice; with re-rolls, each success is rolled again and the new die stands.
fn roll_side(dice: &mut DiceStream, pool: &MeleePool, side: &str) -> (Vec<u32>, Vec<u32>, u32) {
    let n = pool.rolled;
    let first: Vec<u32> = (1..=n).map(|i| dice.roll(6, format!("{side}, die {i} of {n}"))).collect();
    let successes = count_hits(&first, tables::MELEE_HITS_ON);
    if pool.rerolls_successes.is_none() {
        return (first, Vec::new(), successes);
    }
    let again: Vec<u32> =
        (1..=successes).map(|i| dice.roll(6, format!("{side}, re-roll of success {i} of {successes}"))).collect();
    let score = count_hits(&again, tables::MELEE_HITS_ON);
    (first, again, score)
}

fn broken(unit: &MeleeUnit, fatigue_after: u32) -> Option<bool> {
    unit.breaks_at.map(|at| fatigue_after >= at)
}

fn defender_outcome(
    inputs: &MeleeInputs,
    outcome: MeleeOutcome,
    attacker_score: u32,
    defender_score: u32,
    lookups: &mut Vec<Lookup>,
) -> SideOutcome {
    let unit = &inputs.defender;
    let row = tables::resolution_row(outcome);
    if unit.arm.is_artillery() {
        lookups.push(Lookup::new("Defender Is Artillery", row.heading, "artillery defender", row.artillery_defender));
        let ammo = unit.ammo.unwrap_or(0);
        let ammo_left = ammo.saturating_sub(tables::ARTILLERY_MELEE_AMMO_SPENT);
        let (broken, retreat, ammo_left, summary) = match outcome {
            MeleeOutcome::DefenderDoubled => (Some(true), None, None, "the battery breaks".into()),
            MeleeOutcome::DefenderOutscored => (
                Some(false),
                Some(tables::MELEE_RETREAT_BW),
                Some(ammo_left),
                format!("the battery retreats {} BW with {ammo_left} ammo left", tables::MELEE_RETREAT_BW),
            ),
            MeleeOutcome::DefenderHolds => {
                (Some(false), None, Some(ammo_left), format!("the battery wins the combat with {ammo_left} ammo left"))
            }
        };
        return SideOutcome {
            fatigue_taken: 0,
            fatigue_after: unit.fatigue,
            broken,
            retreat_bw: retreat,
            retreat_facing: retreat.map(|_| "facing away from enemy"),
            advance: None,
            ammo_left,
            officer_at_risk: None,
            summary,
        };
    }
    let taken = match outcome {
        MeleeOutcome::DefenderHolds => tables::DEFENDER_HOLDS_FATIGUE,
        MeleeOutcome::DefenderOutscored | MeleeOutcome::DefenderDoubled => attacker_score - defender_score,
    };
    lookups.push(Lookup::new("Combat Resolution", row.heading, "DEFENDER", row.defender));
    let fatigue_after = unit.fatigue + taken;
    let broken = broken(unit, fatigue_after);
    let steadfast = unit.steadfast_officer && is_infantry(unit);
    let mut retreat = None;
    let summary = if outcome == MeleeOutcome::DefenderHolds {
        format!("the defender holds and takes {taken} fatigue")
    } else if broken == Some(true) {
        format!("the defender takes {taken} fatigue and breaks")
    } else if steadfast && outcome != MeleeOutcome::DefenderDoubled {
        lookups.push(Lookup::new("Officer Traits", "“Steadfast” (SF)", "not doubled", "Unit does not retreat"));
        format!("the defender takes {taken} fatigue and, Steadfast, stands")
    } else {
        retreat = Some(tables::MELEE_RETREAT_BW);
        format!("the defender takes {taken} fatigue and retreats {} BW facing away", tables::MELEE_RETREAT_BW)
    };
    SideOutcome {
        fatigue_taken: taken,
        fatigue_after,
        broken,
        retreat_bw: retreat,
        retreat_facing: retreat.map(|_| "facing away from enemy"),
        advance: None,
        ammo_left: None,
        officer_at_risk: None,
        summary,
    }
}

fn attacker_outcome(inputs: &MeleeInputs, outcome: MeleeOutcome, lookups: &mut Vec<Lookup>) -> SideOutcome {
    let unit = &inputs.attacker;
    let row = tables::resolution_row(outcome);
    lookups.push(Lookup::new("Combat Resolution", row.heading, "ATTACKER", row.attacker));
    let taken = row.attacker_fatigue;
    let fatigue_after = unit.fatigue + taken;
    let broken = broken(unit, fatigue_after);
    let (retreat, advance, summary) = if broken == Some(true) {
        (None, None, format!("the attacker takes {taken} fatigues and breaks"))
    } else if outcome == MeleeOutcome::DefenderHolds {
        (
            Some(tables::MELEE_RETREAT_BW),
            None,
            format!(
                "the attacker takes {taken} fatigues and retreats {} BW facing the enemy",
                tables::MELEE_RETREAT_BW
            ),
        )
    } else {
        let advance = if unit.impetuous {
            lookups.push(Lookup::new(
                "Advance After Combat",
                "Impetuous must advance",
                "impetuous",
                "Move up to 1BW directly forward, no enemy contact",
            ));
            "must advance"
        } else {
            "may advance"
        };
        (
            None,
            Some(advance),
            format!("the attacker takes {taken} fatigue and {advance} up to {} BW", tables::ADVANCE_BW),
        )
    };
    SideOutcome {
        fatigue_taken: taken,
        fatigue_after,
        broken,
        retreat_bw: retreat,
        retreat_facing: retreat.map(|_| "facing the enemy"),
        advance,
        ammo_left: None,
        officer_at_risk: None,
        summary,
    }
}

fn pool_lookups(pool: &MeleePool, unit: &MeleeUnit, side: &str, lookups: &mut Vec<Lookup>) {
    let arm = match unit.arm {
        Arm::Infantry => "Infantry",
        Arm::Cavalry => "Cavalry",
        Arm::MountedInfantry => "Mounted Infantry",
        Arm::Artillery | Arm::HorseArtillery => "Artillery",
    };
    if let Some((row, _, cell)) = tables::MELEE_DICE.iter().find(|(r, _, _)| *r == arm) {
        lookups.push(Lookup::new("How Many Dice & Hits (Hit 4+)", *row, side, format!("{cell}: {}", pool.base)));
    }
    for words in &pool.plus {
        lookups.push(Lookup::new("Combat Modifiers", *words, side, "+1D6"));
    }
    for words in &pool.minus {
        lookups.push(Lookup::new("Combat Modifiers", *words, side, "-1D6"));
    }
    if pool.minus.len() > 1 {
        lookups.push(Lookup::new(
            "Combat Modifiers",
            "-1D6 (joined by Or)",
            side,
            format!("{} apply, -1D6 once", pool.minus.len()),
        ));
    }
    if let Some(why) = pool.rerolls_successes {
        lookups.push(Lookup::new("Combat Modifiers", why, side, "Re-roll successes"));
    }
}

/// Resolves one melee.
pub fn resolve(inputs: MeleeInputs, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    validate(&inputs)?;
    let attacker_pool = attacker_pool(&inputs);
    let defender_pool = defender_pool(&inputs);
    let mut lookups = Vec::new();
    if let Some(allocated) = inputs.allocated_dice {
        lookups.push(Lookup::new(
            "Combat Resolution",
            "1. Attacker allocates dice",
            format!("{} dice", attacker_pool.dice),
            format!("{allocated} to this combat"),
        ));
    }
    pool_lookups(&defender_pool, &inputs.defender, "defender", &mut lookups);
    pool_lookups(&attacker_pool, &inputs.attacker, "attacker", &mut lookups);

    // "2. Calculate defense scores 3. Calculate attack scores".
    let (defender_dice, defender_rerolls, defender_score) = roll_side(dice, &defender_pool, "defence");
    let (attacker_dice, attacker_rerolls, attacker_score) = roll_side(dice, &attacker_pool, "attack");

    let outcome = outcome(attacker_score, defender_score);
    let mut defender = defender_outcome(&inputs, outcome, attacker_score, defender_score, &mut lookups);
    let mut attacker = attacker_outcome(&inputs, outcome, &mut lookups);

    // The Inspiring and Steadfast officers are "At risk" in the combats their die counts in.
    if officer_at_risk(&inputs.defender, true) {
        defender.officer_at_risk = Some(at_risk_check(dice, false, "at risk, the defender's officer", &mut lookups));
    }
    if officer_at_risk(&inputs.attacker, false) {
        attacker.officer_at_risk = Some(at_risk_check(dice, false, "at risk, the attacker's officer", &mut lookups));
    }

    let officer = |side: &SideOutcome, whose: &str| match side.officer_at_risk {
        Some(check) if check.killed => format!("; the {whose} officer is killed"),
        Some(_) => format!("; the {whose} officer survives"),
        None => String::new(),
    };
    let headline = format!(
        "Melee: {} attacks with {} dice and scores {}, {} defends with {} dice and scores {}: \
         {}; {}{}{}.",
        inputs.attacker.arm.label(),
        attacker_pool.rolled,
        attacker_score,
        inputs.defender.arm.label(),
        defender_pool.rolled,
        defender_score,
        defender.summary,
        attacker.summary,
        officer(&defender, "defender's"),
        officer(&attacker, "attacker's"),
    );
    let result = MeleeResult {
        defender_pool,
        attacker_pool,
        defender_dice,
        defender_rerolls,
        defender_score,
        attacker_dice,
        attacker_rerolls,
        attacker_score,
        outcome,
        defender,
        attacker,
    };
    Ok(Resolved { headline, lookups, result: to_result(&result) })
}
