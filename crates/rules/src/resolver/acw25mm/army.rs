//! "Allocation of Troops" and "Allocation of Figures": one side's army from its dice.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::tables::{
    AVERAGE_DIE, CAVALRY_AND_BATTERY_CLASS, CONFEDERATE_BATTERY_CREW, CONFEDERATE_FOOT, EXTRA_FOOT,
    FEDERAL_BATTERY_CREW, FEDERAL_FOOT, MIN_BRIGADES, MIN_REGIMENTS_PER_BRIGADE, REGIMENT_BASE_FIGURES,
    SHARPSHOOTER_CLASS, SHARPSHOOTER_COMPANIES, SHARPSHOOTER_FIGURES,
};
use super::{check_within, Class, Side};
use crate::resolver::{Lookup, Resolved};
use crate::{DiceStream, Refusal};

fn default_true() -> bool {
    true
}

/// One side's army generation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArmyInput {
    /// The side whose army is generated.
    pub side: Side,
    /// On a 4 or 5 on the average die "he can turn 1 Regiment into B Class": false declines it.
    #[serde(default = "default_true")]
    pub take_b_upgrade: bool,
    /// Swap 1 cavalry regiment for 4 companies of sharpshooters (8 figures).
    #[serde(default)]
    pub sharpshooter_swap: bool,
    /// How many brigades to divide the foot into, 3 to 5 (default 3). If the dice give too few
    /// regiments for 3 each, the army gets as many as they allow.
    #[serde(default)]
    #[schemars(range(min = 3, max = 5))]
    pub brigades: Option<u32>,
}

/// "Each Regiment of Foot and Cavalry start off with 10 figures. You must then throw 1xD10 for
/// each Regiment to see how many extra figures that Regiment gets."
pub fn regiment_figures(d10: u32) -> u32 {
    REGIMENT_BASE_FIGURES + d10
}

/// The value an average die shows for a d6 face.
pub fn average_die(face: u32) -> u32 {
    AVERAGE_DIE[(face - 1) as usize]
}

/// The foot divided into `wanted` brigades of at least 3 (fewer if the regiments run out), as
/// evenly as possible with the larger brigades first: 11 regiments in 3 brigades are 4 4 3.
pub fn brigade_sizes(regiments: u32, wanted: u32) -> Vec<u32> {
    let brigades = wanted.min(regiments / MIN_REGIMENTS_PER_BRIGADE).max(1);
    (0..brigades).map(|i| regiments / brigades + u32::from(i < regiments % brigades)).collect()
}

/// A regiment's kind as the campaign's rules version shows it.
fn seed_words(kind: &str, rules_version: u32) -> String {
    if rules_version < 2 {
        kind.replace("Zouarve", "Zouave")
    } else {
        kind.to_owned()
    }
}

/// Since rules version 2 the regiments carry the seed's own words ("Veteran/Zouarve");
/// version 1 showed "Zouave", and campaigns created under it still do.
pub fn army(input: ArmyInput, dice: &mut DiceStream, rules_version: u32) -> Result<Resolved, Refusal> {
    let wanted = input.brigades.unwrap_or(MIN_BRIGADES);
    check_within(
        "brigades",
        "army.brigades",
        wanted,
        MIN_BRIGADES,
        5,
        "at least 3 brigadiers; a division is 2 to 5 brigades",
    )?;
    let side = input.side;
    let (base_foot, extra_die, crew): (&[(&str, Class)], u32, u32) = match side {
        Side::Federal => (&FEDERAL_FOOT, 3, FEDERAL_BATTERY_CREW),
        Side::Confederate => (&CONFEDERATE_FOOT, 2, CONFEDERATE_BATTERY_CREW),
    };
    let mut lookups = Vec::new();

    // "throws 1xAverage Dice to see how many extra regiments of foot he gets".
    let face = dice.roll(6, "average die: extra regiments of foot");
    let extra = average_die(face);
    lookups.push(Lookup::new("Average Dice", format!("face {face}"), "shows", extra));
    let upgrade = input.take_b_upgrade && (4..=5).contains(&extra);

    let cavalry_rolled = dice.roll(extra_die, format!("D{extra_die}: regiments of cavalry"));
    let batteries = dice.roll(extra_die, format!("D{extra_die}: artillery batteries"));
    // The swap is made before the cavalry's class and figures are thrown; the dice give at
    // least one cavalry regiment, so the swap is always possible.
    let cavalry = cavalry_rolled - u32::from(input.sharpshooter_swap);

    let mut foot = Vec::new();
    let mut regiments: Vec<(String, Class)> =
        base_foot.iter().map(|(kind, class)| (seed_words(kind, rules_version), *class)).collect();
    for n in 0..extra {
        // "he can turn 1 Regiment into B Class": the first of the extra regiments.
        let class = if upgrade && n == 0 { Class::B } else { EXTRA_FOOT.1 };
        regiments.push((EXTRA_FOOT.0.to_owned(), class));
    }
    for (i, (kind, class)) in regiments.iter().enumerate() {
        let number = i + 1;
        let table =
            if i < base_foot.len() { "Allocation of Foot regiments and Class" } else { "Extra regiments of foot" };
        lookups.push(Lookup::new(
            table,
            format!("{} regiment {number}", side.words()),
            "class",
            format!("{class} ({kind})"),
        ));
        let d10 = dice.roll(10, format!("extra figures, foot regiment {number}"));
        foot.push(json!({
            "number": number, "kind": kind, "class": class, "d10": d10,
            "figures": regiment_figures(d10),
        }));
    }

    let mut mounted = Vec::new();
    for number in 1..=cavalry {
        let d6 = dice.roll(6, format!("class, cavalry regiment {number}"));
        let class = CAVALRY_AND_BATTERY_CLASS[(d6 - 1) as usize];
        lookups.push(Lookup::new("Cavalry Regiment class", format!("D6 {d6}"), "class", class));
        let d10 = dice.roll(10, format!("extra figures, cavalry regiment {number}"));
        mounted.push(json!({
            "number": number, "class": class, "class_d6": d6, "d10": d10,
            "figures": regiment_figures(d10),
        }));
    }

    let mut guns = Vec::new();
    for number in 1..=batteries {
        let d6 = dice.roll(6, format!("class, artillery battery {number}"));
        let class = CAVALRY_AND_BATTERY_CLASS[(d6 - 1) as usize];
        lookups.push(Lookup::new("Artillery Battery class", format!("D6 {d6}"), "class", class));
        guns.push(json!({
            "number": number, "class": class, "class_d6": d6,
            "figures": crew, "guns": 1, "limber_horses": 2,
        }));
    }

    let sharpshooters = input.sharpshooter_swap.then(|| {
        json!({
            "companies": SHARPSHOOTER_COMPANIES, "figures": SHARPSHOOTER_FIGURES,
            "class": SHARPSHOOTER_CLASS,
        })
    });
    let brigades = brigade_sizes(regiments.len() as u32, wanted);
    let brigade_text: Vec<String> = brigades.iter().map(u32::to_string).collect();
    Ok(Resolved {
        headline: format!(
            "{} army: {} regiments of foot (average die {extra}{}), {} regiments of cavalry, {} batteries{}; brigades {}",
            side.words(),
            regiments.len(),
            if upgrade { ", one made B class" } else { "" },
            cavalry,
            batteries,
            if input.sharpshooter_swap {
                ", 4 companies of sharpshooters"
            } else {
                ""
            },
            brigade_text.join(" ")
        ),
        lookups,
        result: json!({
            "side": side,
            "average_die": { "face": face, "extra_regiments": extra, "b_upgrade": upgrade },
            "cavalry_rolled": cavalry_rolled,
            "foot": foot,
            "cavalry": mounted,
            "batteries": guns,
            "sharpshooters": sharpshooters,
            "brigades_requested": wanted,
            "brigades": brigades,
            "brigadiers": brigades.len(),
            "divisional_officers": 1,
        }),
    })
}
