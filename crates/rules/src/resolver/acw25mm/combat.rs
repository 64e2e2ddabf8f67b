//! Firing, melee, the formation fail test, morale, the hazards of moving mounted, and guns
//! knocking down buildings, bridges, walls and works.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::tables::{
    artillery_to_hit, cover_row, formation_test_pass, hit_value, kill_score, range_bands, range_column,
    small_arms_to_hit, KillRow, RangedWeapon, Structure, ARTILLERY_SAVES, BEHIND_HARD_COVER, BEHIND_SOFT_COVER,
    ENEMY_CAVALRY_WITHIN_30CM, FIELD_GUN_DICE_PER_GUNNER, FORMATION_FAIL, HEAVY_GUN_DICE_PER_GUNNER,
    INFANTRY_CAVALRY_FIGURES, INFANTRY_CAVALRY_ROUT, NO_FRIENDS_WITHIN_30CM, OFFICER_ATTACHED, OFFICER_FAIL,
    SAW_ROUT_WITHIN_30CM, SHARPSHOOTERS_ARTILLERY_FIGURES, SHARPSHOOTERS_ARTILLERY_ROUT, SMALL_ARMS_SAVES,
};
use super::{check_within, field, Class, Cover, Range};
use crate::resolver::{Lookup, Resolved};
use crate::{DiceStream, Refusal};

/// The most figures a regiment can have: "10 figures … throw 1xD10 … extra figures".
const MAX_REGIMENT_FIGURES: u32 = 20;
/// The most men a battery has ("Federal Artillery Battery always have 5 Figures").
const MAX_BATTERY_CREW: u32 = 5;

// ---------------------------------------------------------------------------------------------
// Firing

/// How the firing unit fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FireBy {
    /// Infantry in line: 1xD6 per figure.
    Line,
    /// Infantry or cavalry in skirmish order: 1xD6 per 2 figures.
    Skirmish,
    /// Infantry or cavalry in column: 1xD6 per 2 figures.
    Column,
    /// A field gun: 2xD6 per artillery man, 1xD6 per infantry man crewing it.
    FieldGun,
    /// A heavy gun: 3xD6 per artillery man, 1xD6 per infantry man crewing it.
    HeavyGun,
}

/// The small arm an infantry or cavalry unit fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SmallArm {
    /// Infantry musket: short up to 15cm, long up to 30cm.
    Musket,
    /// Infantry musket after 1862 (25% of the army): short up to 15cm, long up to 90cm.
    #[serde(rename = "musket_after_1862")]
    MusketAfter1862,
    /// Infantry rifle: short up to 30cm, long up to 120cm.
    Rifle,
    /// Indian bow: long only, up to 20cm.
    Bow,
    /// Cavalry shotgun: short only, up to 5cm.
    Shotgun,
    /// Cavalry carbine: short up to 15cm, long up to 50cm.
    Carbine,
}

impl SmallArm {
    fn weapon(self) -> RangedWeapon {
        match self {
            SmallArm::Musket => RangedWeapon::Musket,
            SmallArm::MusketAfter1862 => RangedWeapon::MusketAfter1862,
            SmallArm::Rifle => RangedWeapon::Rifle,
            SmallArm::Bow => RangedWeapon::Bow,
            SmallArm::Shotgun => RangedWeapon::Shotgun,
            SmallArm::Carbine => RangedWeapon::Carbine,
        }
    }

    fn words(self) -> &'static str {
        match self {
            SmallArm::Musket => "musket",
            SmallArm::MusketAfter1862 => "musket (after 1862)",
            SmallArm::Rifle => "rifle",
            SmallArm::Bow => "bow",
            SmallArm::Shotgun => "shotgun",
            SmallArm::Carbine => "carbine",
        }
    }
}

/// The formation of the unit fired at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FireTarget {
    Line,
    /// "-1 target in Column".
    Column,
    /// "Add +1 firing at Skirmishers".
    Skirmish,
    /// A battery's artillery men: "classed as skirmishers behind soft cover".
    Gunners,
}

/// One unit's fire.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FireInput {
    /// How the unit fires (its formation, or its gun).
    pub fire_by: FireBy,
    /// The firing unit's class (A to E; a battery A to C).
    pub class: Class,
    /// Figures firing (1 to 20); for a gun, its artillery men (1 to 5: a battery needs at
    /// least 1 artillery man to fire).
    #[schemars(range(min = 1, max = 20))]
    pub figures: u32,
    /// Guns only: infantry men serving the gun in place of killed artillery men (1xD6 each).
    #[serde(default)]
    #[schemars(range(max = 4))]
    pub infantry_crew: u32,
    /// Line, skirmish or column only: the small arm fired.
    #[serde(default)]
    pub weapon: Option<SmallArm>,
    /// The measured distance to the target in centimetres; sets short or long range.
    pub range_cm: u32,
    /// The firing unit has a formation fail (+1 to the score needed).
    #[serde(default)]
    pub formation_fail: bool,
    /// The target's formation.
    pub target: FireTarget,
    /// The target's cover; the cover's saves apply only if the target is behind it.
    pub target_cover: Cover,
    /// An officer is attached to the target regiment (the officer casualty check).
    #[serde(default)]
    pub officer_attached: bool,
}

/// The score needed to hit and the modifiers that made it, as lookups.
pub fn score_to_hit(base: u32, formation_fail: bool, target: FireTarget, lookups: &mut Vec<Lookup>) -> u32 {
    let mut score = base;
    if formation_fail {
        score += 1;
        lookups.push(Lookup::new("Score required to hit", "Formation Fail", "modifier", "+1"));
    }
    if matches!(target, FireTarget::Skirmish | FireTarget::Gunners) {
        score += 1;
        lookups.push(Lookup::new("Score required to hit", "firing at Skirmishers", "modifier", "+1"));
    }
    if target == FireTarget::Column {
        score -= 1;
        lookups.push(Lookup::new("Score required to hit", "target in Column", "modifier", "-1"));
    }
    score
}

fn fire_validate(input: &FireInput) -> Result<(RangedWeapon, &'static str), Refusal> {
    let gun = match input.fire_by {
        FireBy::FieldGun => Some(RangedWeapon::FieldGun),
        FireBy::HeavyGun => Some(RangedWeapon::HeavyGun),
        _ => None,
    };
    if let Some(gun) = gun {
        if artillery_to_hit(input.class).is_none() {
            return Err(Refusal::new(
                field("class"),
                "fire.artillery_class",
                "artillery firing has classes A to C only",
            ));
        }
        check_within(
            "figures",
            "fire.battery_crew",
            input.figures,
            1,
            MAX_BATTERY_CREW,
            "a battery needs at least 1 artillery man to fire and has at most 5",
        )?;
        if input.figures + input.infantry_crew > MAX_BATTERY_CREW {
            return Err(Refusal::new(
                field("infantry_crew"),
                "fire.battery_crew",
                "infantry men only replace killed artillery men: at most 5 men serve a gun",
            ));
        }
        if input.weapon.is_some() {
            return Err(Refusal::new(field("weapon"), "fire.weapon", "a gun fires its own shot: leave weapon out"));
        }
        let gun_words = if gun == RangedWeapon::FieldGun { "field gun" } else { "heavy gun" };
        Ok((gun, gun_words))
    } else {
        check_within(
            "figures",
            "fire.figures",
            input.figures,
            1,
            MAX_REGIMENT_FIGURES,
            "a regiment has at most 20 figures",
        )?;
        // "Formations permitted and Class": D class fight in line and column only.
        if input.fire_by == FireBy::Skirmish && input.class == Class::D {
            return Err(Refusal::new(
                field("fire_by"),
                "fire.formation_permitted",
                "D class may form line or column only, not skirmish order",
            ));
        }
        if input.infantry_crew != 0 {
            return Err(Refusal::new(field("infantry_crew"), "fire.infantry_crew", "only a gun has an infantry crew"));
        }
        match input.weapon {
            Some(arm) => Ok((arm.weapon(), arm.words())),
            None => Err(Refusal::new(
                field("weapon"),
                "fire.weapon",
                "name the small arm fired: musket, musket_after_1862, rifle, bow, shotgun or carbine",
            )),
        }
    }
}

/// The range band for a measured distance, or `None` if the weapon does not reach.
pub fn range_band(weapon: RangedWeapon, range_cm: u32) -> Option<Range> {
    let (short, long) = range_bands(weapon);
    if short.is_some_and(|s| range_cm <= s) {
        Some(Range::Short)
    } else if long.is_some_and(|l| range_cm <= l) {
        Some(Range::Long)
    } else {
        None
    }
}

pub fn fire(input: FireInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let (weapon, weapon_words) = fire_validate(&input)?;
    let Some(range) = range_band(weapon, input.range_cm) else {
        let (short, long) = range_bands(weapon);
        let reach = long.or(short).unwrap_or(0);
        return Err(Refusal::new(
            field("range_cm"),
            "fire.range",
            format!("the {weapon_words} reaches {reach}cm, the target is {}cm away", input.range_cm),
        ));
    };
    let gun = matches!(input.fire_by, FireBy::FieldGun | FireBy::HeavyGun);
    let mut lookups = Vec::new();

    let base = if gun { artillery_to_hit(input.class).unwrap_or(6) } else { small_arms_to_hit(input.class) };
    lookups.push(Lookup::new(
        "Score required to hit on 1xD6",
        format!("{} Class", input.class),
        if gun { "Artillery firing" } else { "Inf/Cav Firing" },
        format!("+{base}"),
    ));
    let needed = score_to_hit(base, input.formation_fail, input.target, &mut lookups);

    // "Throw 1xD6 per 2 Inf/Cav figure firing in skirmish order or Column. Throw 1xD6 per
    // Infantry figure firing in line. Throw 2xD6 per Artillery Figure firing Field Art, Throw
    // 3xD6 per Artillery Figure firing Heavy Art. Throw 1xD6 per Inf figure firing Artillery Gun"
    let mut to_hit = Vec::new();
    match input.fire_by {
        FireBy::Line => {
            for i in 1..=input.figures {
                to_hit.push(dice.roll(6, format!("to hit, figure {i}")));
            }
        }
        FireBy::Skirmish | FireBy::Column => {
            // An odd figure left over still throws its own die.
            for pair in 0..input.figures.div_ceil(2) {
                let first = pair * 2 + 1;
                let purpose = if first < input.figures {
                    format!("to hit, figures {first}-{}", first + 1)
                } else {
                    format!("to hit, figure {first}")
                };
                to_hit.push(dice.roll(6, purpose));
            }
        }
        FireBy::FieldGun | FireBy::HeavyGun => {
            let per_man =
                if input.fire_by == FireBy::FieldGun { FIELD_GUN_DICE_PER_GUNNER } else { HEAVY_GUN_DICE_PER_GUNNER };
            for man in 1..=input.figures {
                for die in 1..=per_man {
                    to_hit.push(dice.roll(6, format!("to hit, artillery man {man} die {die}")));
                }
            }
            for man in 1..=input.infantry_crew {
                to_hit.push(dice.roll(6, format!("to hit, infantry crew {man}")));
            }
        }
    }
    let hits = to_hit.iter().filter(|&&d| d >= needed).count() as u32;

    // "Artillery men are classed as skirmishers behind soft cover."
    let cover =
        if input.target == FireTarget::Gunners { input.target_cover.max(Cover::Soft) } else { input.target_cover };
    let (save_table, save_name) = if gun {
        (&ARTILLERY_SAVES, "Saves from Field/Heavy Artillery (1xD6 per figure hit)")
    } else {
        (&SMALL_ARMS_SAVES, "Saves from musket, rifle, bow, shotguns and carbine (1xD6 per figure hit)")
    };
    let save_on = save_table[cover_row(cover)][range_column(range)];
    lookups.push(Lookup::new(
        save_name,
        match cover {
            Cover::Open => "Open",
            Cover::Soft => "Soft Cover",
            Cover::Hard => "Hard Cover",
        },
        match range {
            Range::Short => "Saves at Short Range",
            Range::Long => "Saves at Long Range",
        },
        format!("+{save_on}"),
    ));
    let mut saves = Vec::new();
    for hit in 1..=hits {
        saves.push(dice.roll(6, format!("save, hit {hit}")));
    }
    let saved = saves.iter().filter(|&&d| d >= save_on).count() as u32;
    let casualties = hits - saved;

    // "When an Officer is attached to a Regiment and that Regiment receives 2 Figures
    // casualties from enemy fire, Roll 1xD6 if a 1 2 is scored roll again if a 1 is scored
    // the Officer is killed as well."
    let officer_check = if input.officer_attached && casualties >= 2 {
        let first = dice.roll(6, "officer casualty check");
        let second = (first <= 2).then(|| dice.roll(6, "officer casualty check, roll again"));
        Some((first, second, second == Some(1)))
    } else {
        None
    };

    let target_words = match input.target {
        FireTarget::Line => "a line",
        FireTarget::Column => "a column",
        FireTarget::Skirmish => "skirmishers",
        FireTarget::Gunners => "artillery men",
    };
    let fire_words = match input.fire_by {
        FireBy::Line => "in line",
        FireBy::Skirmish => "in skirmish order",
        FireBy::Column => "in column",
        FireBy::FieldGun | FireBy::HeavyGun => "serving the gun",
    };
    let officer_words = match officer_check {
        Some((_, _, true)) => "; the attached officer is killed",
        Some(_) => "; the attached officer survives",
        None => "",
    };
    Ok(Resolved {
        headline: format!(
            "{}-class, {} figures {fire_words}, {weapon_words}, at {target_words} {}, {} ({}cm): {} dice need {needed}+, {hits} hits, {saved} saved on {save_on}+, {casualties} casualties{officer_words}{}",
            input.class,
            input.figures + input.infantry_crew,
            cover.words(),
            range.words(),
            input.range_cm,
            to_hit.len(),
            if casualties > 0 { "; morale test" } else { "" },
        ),
        lookups,
        result: json!({
            "range": range,
            "cover": cover,
            "dice": to_hit.len(),
            "score_needed": needed,
            "to_hit": to_hit,
            "hits": hits,
            "save_on": save_on,
            "saves": saves,
            "saved": saved,
            "casualties": casualties,
            "officer_check": officer_check.map(|(first, second, killed)| json!({
                "first": first, "second": second, "officer_killed": killed,
            })),
            "morale_test": casualties > 0,
        }),
    })
}

// ---------------------------------------------------------------------------------------------
// Melee

/// The row of the melee table the target is read on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum MeleeTargetClass {
    A,
    B,
    C,
    D,
    E,
    /// "To Kill Officers".
    #[serde(rename = "officer")]
    Officer,
}

impl MeleeTargetClass {
    fn row(self) -> KillRow {
        match self {
            MeleeTargetClass::A => KillRow::Class(Class::A),
            MeleeTargetClass::B => KillRow::Class(Class::B),
            MeleeTargetClass::C => KillRow::Class(Class::C),
            MeleeTargetClass::D => KillRow::Class(Class::D),
            MeleeTargetClass::E => KillRow::Class(Class::E),
            MeleeTargetClass::Officer => KillRow::Officers,
        }
    }
}

/// One side's melee, in its own turn.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeleeInput {
    /// Attacking figures in base-to-base contact (1 to 20), 1xD10 each.
    #[schemars(range(min = 1, max = 20))]
    pub figures: u32,
    /// Enemy figures in contact with them (1 to 20); at most 3 attackers to each.
    #[schemars(range(min = 1, max = 20))]
    pub target_figures: u32,
    /// The enemy's class (A to E), or `officer`.
    pub target_class: MeleeTargetClass,
    /// The enemy's cover (a building's defender is behind hard cover).
    pub target_cover: Cover,
    /// The enemy are artillery men ("classed as skirmishers behind soft cover").
    #[serde(default)]
    pub target_is_gunners: bool,
    /// The enemy have a formation fail (+1).
    #[serde(default)]
    pub target_formation_fail: bool,
    /// The enemy are skirmishers (+1).
    #[serde(default)]
    pub target_skirmishers: bool,
    /// The attackers are charging (+1).
    #[serde(default)]
    pub charging: bool,
    /// The attackers have a formation fail: "you get no additions above".
    #[serde(default)]
    pub attacker_formation_fail: bool,
}

/// The melee additions that apply, as lookups, and their total.
pub fn melee_additions(input: &MeleeInput, lookups: &mut Vec<Lookup>) -> u32 {
    // "If you are attacking and have a Formation Fail you get no additions above."
    if input.attacker_formation_fail {
        lookups.push(Lookup::new("Scores to Kill", "attacking with a Formation Fail", "additions", "none"));
        return 0;
    }
    let mut total = 0;
    for (applies, row) in [
        (input.target_formation_fail, "fighting troops with formation fail"),
        (input.target_skirmishers || input.target_is_gunners, "fighting Skirmishers"),
        (input.charging, "Charging"),
    ] {
        if applies {
            total += 1;
            lookups.push(Lookup::new("Scores to Kill", row, "addition", "+1"));
        }
    }
    total
}

pub fn melee(input: MeleeInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    check_within(
        "figures",
        "melee.figures",
        input.figures,
        1,
        MAX_REGIMENT_FIGURES,
        "a regiment has at most 20 figures",
    )?;
    check_within(
        "target_figures",
        "melee.figures",
        input.target_figures,
        1,
        MAX_REGIMENT_FIGURES,
        "a regiment has at most 20 figures",
    )?;
    if input.figures > 3 * input.target_figures {
        return Err(Refusal::new(
            field("figures"),
            "melee.three_to_one",
            format!(
                "3 figures can melee with 1 figure: {} enemy figures take at most {} attackers",
                input.target_figures,
                3 * input.target_figures
            ),
        ));
    }
    if input.target_class == MeleeTargetClass::Officer && input.target_figures != 1 {
        return Err(Refusal::new(field("target_figures"), "melee.officer", "an officer is one figure"));
    }
    if input.target_is_gunners
        && !matches!(input.target_class, MeleeTargetClass::A | MeleeTargetClass::B | MeleeTargetClass::C)
    {
        return Err(Refusal::new(field("target_class"), "melee.artillery_class", "artillery men are class A to C"));
    }

    if input.target_skirmishers && input.target_class == MeleeTargetClass::D {
        return Err(Refusal::new(
            field("target_skirmishers"),
            "melee.formation_permitted",
            "D class may form line or column only, not skirmish order",
        ));
    }

    let cover = if input.target_is_gunners { input.target_cover.max(Cover::Soft) } else { input.target_cover };
    let row = input.target_class.row();
    let base = kill_score(row, cover);
    let row_words = match row {
        KillRow::Class(class) => format!("To Kill {class} Class"),
        KillRow::Officers => "To Kill Officers".to_owned(),
    };
    let mut lookups = vec![Lookup::new("Scores to Kill (1xD10)", row_words, cover.words(), format!("{base} to 10"))];
    let additions = melee_additions(&input, &mut lookups);
    // The additions go on the die, so each lowers the score to kill by 1.
    let needed = base.saturating_sub(additions).max(1);
    let rolls: Vec<u32> = (1..=input.figures).map(|i| dice.roll(10, format!("to kill, figure {i}"))).collect();
    let killing = rolls.iter().filter(|&&d| d >= needed).count() as u32;
    let kills = killing.min(input.target_figures);
    Ok(Resolved {
        headline: format!(
            "{} figures melee {} {} {} (needing {needed}+ on D10): {kills} killed; both sides now have a formation fail",
            input.figures,
            input.target_figures,
            target_words(row),
            cover.words()
        ),
        lookups,
        result: json!({
            "score_to_kill": needed,
            "cover": cover,
            "dice": rolls,
            "killing_dice": killing,
            "kills": kills,
            // "You get a formation fail: … after melee".
            "formation_fail_after": true,
            "morale_test": kills > 0,
        }),
    })
}

fn target_words(row: KillRow) -> String {
    match row {
        KillRow::Class(class) => format!("{class}-class figures"),
        KillRow::Officers => "officer".to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// Formation Fail Test

/// A formation fail test.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FormationTestInput {
    /// The unit's class.
    pub class: Class,
}

pub fn formation_test(input: FormationTestInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let pass_on = formation_test_pass(input.class);
    let d6 = dice.roll(6, "formation fail test");
    let passed = d6 >= pass_on;
    Ok(Resolved {
        headline: format!(
            "{}-class formation fail test: {d6} against {pass_on}+, {}",
            input.class,
            if passed {
                "passed, the formation fail is over"
            } else {
                "failed, the formation fail stays (test again next move)"
            }
        ),
        lookups: vec![Lookup::new(
            "Formation Fail Test (1xD6)",
            format!("{} Class", input.class),
            "To Pass",
            format!("+{pass_on}"),
        )],
        result: json!({ "d6": d6, "pass_on": pass_on, "passed": passed }),
    })
}

// ---------------------------------------------------------------------------------------------
// Morale

/// Which morale chart the unit reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MoraleChart {
    /// "Check Chart Infantry and Cavalry" (11 to 20 figures, classes A to E).
    InfantryCavalry,
    /// "Check Chart Sharpshooters and Artillery men" (4 to 8 figures, classes A to C).
    SharpshootersArtillery,
}

/// A morale check by points.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoraleInput {
    pub chart: MoraleChart,
    pub class: Class,
    /// The unit's original number of figures (1 to 40): "You must count the original number
    /// of figures in a regiment even if you detached figures to a Artillery Battery".
    #[schemars(range(min = 1, max = 40))]
    pub original_figures: u32,
    /// Figures still with the unit, 1 point each (for a battery, its artillery men and the
    /// infantry men serving it); at most the original number.
    pub figures_present: u32,
    /// No friendly troops within 30cm (-1).
    #[serde(default)]
    pub no_friends_within_30cm: bool,
    /// Enemy cavalry within 30cm (-1).
    #[serde(default)]
    pub enemy_cavalry_within_30cm: bool,
    /// The unit has an Officer Fail (-1).
    #[serde(default)]
    pub officer_fail: bool,
    /// The unit has a Formation Fail (-1).
    #[serde(default)]
    pub formation_fail: bool,
    /// The unit saw a regiment rout within 30cm (-1).
    #[serde(default)]
    pub saw_rout_within_30cm: bool,
    /// An officer is attached to the unit (+1).
    #[serde(default)]
    pub officer_attached: bool,
    /// The unit's cover: soft +1, hard +2 (default open).
    #[serde(default)]
    pub cover: Option<Cover>,
}

/// The chart cell for a unit: (column read, points at which it routs). Units outside the
/// chart's figure range read its nearest column.
pub fn rout_points(chart: MoraleChart, class: Class, original_figures: u32) -> Option<(u32, i32)> {
    match chart {
        MoraleChart::InfantryCavalry => {
            let column = original_figures.clamp(11, 20);
            let i = INFANTRY_CAVALRY_FIGURES.iter().position(|&f| f == column)?;
            let (_, row) = INFANTRY_CAVALRY_ROUT.iter().find(|(c, _)| *c == class)?;
            Some((column, row[i]))
        }
        MoraleChart::SharpshootersArtillery => {
            let column = original_figures.clamp(4, 8);
            let i = SHARPSHOOTERS_ARTILLERY_FIGURES.iter().position(|&f| f == column)?;
            let (_, row) = SHARPSHOOTERS_ARTILLERY_ROUT.iter().find(|(c, _)| *c == class)?;
            Some((column, row[i]))
        }
    }
}

pub fn morale(input: MoraleInput) -> Result<Resolved, Refusal> {
    check_within("original_figures", "morale.figures", input.original_figures, 1, 40, "a unit's original figures")?;
    check_within(
        "figures_present",
        "morale.figures",
        input.figures_present,
        0,
        input.original_figures,
        "figures present cannot exceed the original number",
    )?;
    let Some((column, routs_at)) = rout_points(input.chart, input.class, input.original_figures) else {
        return Err(Refusal::new(
            field("class"),
            "morale.chart_class",
            "the Sharpshooters and Artillery men chart has classes A to C only",
        ));
    };
    let chart_name = match input.chart {
        MoraleChart::InfantryCavalry => "Check Chart Infantry and Cavalry",
        MoraleChart::SharpshootersArtillery => "Check Chart Sharpshooters and Artillery men",
    };
    let mut lookups = Vec::new();
    let mut points = input.figures_present as i32;
    let cover = input.cover.unwrap_or(Cover::Open);
    for (applies, row, value) in [
        (input.no_friends_within_30cm, "No friendly troops within 30cm", NO_FRIENDS_WITHIN_30CM),
        (input.enemy_cavalry_within_30cm, "Enemy Cavalry within 30cm", ENEMY_CAVALRY_WITHIN_30CM),
        (input.officer_fail, "Officer Fail", OFFICER_FAIL),
        (input.formation_fail, "Formation Fail", FORMATION_FAIL),
        (input.saw_rout_within_30cm, "seeing a Regiment rout within 30cm", SAW_ROUT_WITHIN_30CM),
        (input.officer_attached, "Officer attached to Regiment", OFFICER_ATTACHED),
        (cover == Cover::Soft, "behind soft cover", BEHIND_SOFT_COVER),
        (cover == Cover::Hard, "behind hard cover", BEHIND_HARD_COVER),
    ] {
        if applies {
            points += value;
            lookups.push(Lookup::new("Morale add or subtract", row, "points", format!("{value:+}")));
        }
    }
    lookups.push(Lookup::new(chart_name, format!("{} Class", input.class), format!("{column} figures"), routs_at));
    // "if your regiment, company or Battery is level or below on the points chart that unit
    // will rout off the battlefield and will not come back into play."
    let routs = points <= routs_at;
    Ok(Resolved {
        headline: format!(
            "{}-class unit of {} original figures, {} present: {points} points against rout at {routs_at}: {}",
            input.class,
            input.original_figures,
            input.figures_present,
            if routs { "it routs off the battlefield" } else { "it carries on as normal" }
        ),
        lookups,
        result: json!({
            "points": points,
            "chart_column": column,
            "column_clamped": column != input.original_figures,
            "routs_at": routs_at,
            "routs": routs,
        }),
    })
}

// ---------------------------------------------------------------------------------------------
// Hazards of moving mounted

/// What the mounted figures jump.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Obstacle {
    Fence,
    Wall,
}

/// Mounted figures jumping a fence or wall.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JumpInput {
    /// Mounted figures (troopers or Indians) jumping, 1 to 20; 1xD6 each.
    #[schemars(range(min = 1, max = 20))]
    pub figures: u32,
    pub obstacle: Obstacle,
}

/// Mounted figures crossing a river.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrossRiverInput {
    /// Mounted figures (troopers or Indians) crossing, 1 to 20; 1xD6 each.
    #[schemars(range(min = 1, max = 20))]
    pub figures: u32,
}

fn hazard(
    figures: u32,
    dice: &mut DiceStream,
    purpose: &str,
    lost_on: u32,
    table: &str,
) -> Result<(Vec<u32>, u32, Lookup), Refusal> {
    check_within("figures", "hazard.figures", figures, 1, MAX_REGIMENT_FIGURES, "a regiment has at most 20 figures")?;
    let mut rolls = Vec::new();
    for i in 1..=figures {
        rolls.push(dice.roll(6, format!("{purpose}, figure {i}")));
    }
    let lost = rolls.iter().filter(|&&d| d >= lost_on).count() as u32;
    let lookup = Lookup::new(table, "1xD6 per figure", "lost on", format!("{lost_on}+"));
    Ok((rolls, lost, lookup))
}

/// "They may decide to jump over fence/walls Throw 1xD6 on a score of 6 and the trooper/Indian
/// is killed".
pub fn jump_obstacle(input: JumpInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let obstacle = match input.obstacle {
        Obstacle::Fence => "fence",
        Obstacle::Wall => "wall",
    };
    let (rolls, killed, lookup) =
        hazard(input.figures, dice, &format!("jump the {obstacle}"), 6, "Jumping fences/walls")?;
    Ok(Resolved {
        headline: format!("{} mounted figures jump the {obstacle}: {killed} killed", input.figures),
        lookups: vec![lookup],
        result: json!({ "dice": rolls, "killed": killed }),
    })
}

/// "Cavalry/Mounted may decide to cross rivers. Throw 1xD6 on a score of 5 6 the
/// trooper/Indian is drowned."
pub fn cross_river(input: CrossRiverInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let (rolls, drowned, lookup) = hazard(input.figures, dice, "cross the river", 5, "Mounted crossing rivers")?;
    Ok(Resolved {
        headline: format!("{} mounted figures cross the river: {drowned} drowned", input.figures),
        lookups: vec![lookup],
        result: json!({ "dice": rolls, "drowned": drowned }),
    })
}

// ---------------------------------------------------------------------------------------------
// Destruction of

/// The gun firing at a structure: "Only Field and Heavy Guns can destroy".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Gun {
    Field,
    Heavy,
}

/// What the gun fires at; walls, fences and works are shot at one 6" section at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StructureKind {
    /// 40 hits.
    StoneBuilding,
    /// 40 hits.
    StoneBridge,
    /// 20 hits.
    WoodenBuilding,
    /// 20 hits.
    WoodenBridge,
    /// 40 hits per 6".
    Earthworks,
    /// 40 hits per 6".
    Fieldworks,
    /// 20 hits per 6".
    StoneWall,
    /// 10 hits per 6".
    Fence,
}

impl StructureKind {
    fn structure(self) -> Structure {
        match self {
            StructureKind::StoneBuilding => Structure::StoneBuilding,
            StructureKind::StoneBridge => Structure::StoneBridge,
            StructureKind::WoodenBuilding => Structure::WoodenBuilding,
            StructureKind::WoodenBridge => Structure::WoodenBridge,
            StructureKind::Earthworks => Structure::Earthworks,
            StructureKind::Fieldworks => Structure::Fieldworks,
            StructureKind::StoneWall => Structure::StoneWall,
            StructureKind::Fence => Structure::Fence,
        }
    }

    fn words(self) -> &'static str {
        match self {
            StructureKind::StoneBuilding => "stone building",
            StructureKind::StoneBridge => "stone bridge",
            StructureKind::WoodenBuilding => "wooden building",
            StructureKind::WoodenBridge => "wooden bridge",
            StructureKind::Earthworks => "6\" of earthworks",
            StructureKind::Fieldworks => "6\" of fieldworks",
            StructureKind::StoneWall => "6\" of stone wall",
            StructureKind::Fence => "6\" of fence",
        }
    }
}

/// One gun's shot at a structure.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BombardInput {
    pub gun: Gun,
    /// The battery's class (A to C): a die that would hit scores 1 point.
    pub class: Class,
    /// Artillery men serving the gun, 1 to 5 ("none for detached Infantry figures").
    #[schemars(range(min = 1, max = 5))]
    pub artillery_men: u32,
    /// The battery has a formation fail (+1 to the score needed).
    #[serde(default)]
    pub formation_fail: bool,
    pub structure: StructureKind,
    /// Hits already scored on this structure (or 6" section) by earlier shots.
    #[serde(default)]
    pub hits_so_far: u32,
}

pub fn bombard(input: BombardInput, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    let Some(base) = artillery_to_hit(input.class) else {
        return Err(Refusal::new(
            field("class"),
            "bombard.artillery_class",
            "artillery firing has classes A to C only",
        ));
    };
    check_within(
        "artillery_men",
        "bombard.artillery_men",
        input.artillery_men,
        1,
        MAX_BATTERY_CREW,
        "a battery needs at least 1 artillery man to fire and has at most 5",
    )?;
    let (value, per_six_inches, troops_destroyed) = hit_value(input.structure.structure());
    if input.hits_so_far >= value {
        return Err(Refusal::new(
            field("hits_so_far"),
            "bombard.already_destroyed",
            format!("the {} was destroyed at {value} hits", input.structure.words()),
        ));
    }
    let mut lookups = vec![
        Lookup::new(
            "Destruction of: hit values",
            input.structure.words(),
            if per_six_inches { "hits per 6\"" } else { "hits" },
            value,
        ),
        Lookup::new(
            "Score required to hit on 1xD6",
            format!("{} Class", input.class),
            "Artillery firing",
            format!("+{base}"),
        ),
    ];
    let needed = score_to_hit(base, input.formation_fail, FireTarget::Line, &mut lookups);
    let per_man = match input.gun {
        Gun::Field => FIELD_GUN_DICE_PER_GUNNER,
        Gun::Heavy => HEAVY_GUN_DICE_PER_GUNNER,
    };
    let mut rolls = Vec::new();
    for man in 1..=input.artillery_men {
        for die in 1..=per_man {
            rolls.push(dice.roll(6, format!("hits, artillery man {man} die {die}")));
        }
    }
    let hits = rolls.iter().filter(|&&d| d >= needed).count() as u32;
    let total = input.hits_so_far + hits;
    let destroyed = total >= value;
    let fate = match (destroyed, troops_destroyed) {
        (false, _) => format!("{} of {value} hits, still standing", total.min(value)),
        (true, true) => "destroyed, with any troops in or on it".to_owned(),
        (true, false) => "destroyed; troops behind it are not affected".to_owned(),
    };
    Ok(Resolved {
        headline: format!(
            "{} gun ({} men) fires at the {}: {} dice need {needed}+, {hits} hits; {fate}",
            match input.gun {
                Gun::Field => "Field",
                Gun::Heavy => "Heavy",
            },
            input.artillery_men,
            input.structure.words(),
            rolls.len()
        ),
        lookups,
        result: json!({
            "dice": rolls,
            "score_needed": needed,
            "hits": hits,
            "hits_total": total,
            "hit_value": value,
            "destroyed": destroyed,
            "troops_in_or_on_destroyed": destroyed && troops_destroyed,
        }),
    })
}
