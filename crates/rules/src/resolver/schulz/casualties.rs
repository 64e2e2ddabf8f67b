//! Men under fire and their survival: who took which die, the survival roll, and the
//! casualties told group by group.

use serde_json::{json, Value};

use super::fire::Effect;
use super::tables::{SURVIVES_ARTILLERY_ON, SURVIVES_ON};
use super::{Cover, TargetGroup, Troops};
use crate::resolver::Lookup;
use crate::DiceStream;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fate {
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

    pub(super) fn dead(self) -> bool {
        matches!(self, Fate::Dead | Fate::DeadHitTwice | Fate::DeadNoSurvival)
    }
}

/// One man fired at (or fighting), numbered within his group from 1.
#[derive(Debug, Clone)]
pub(super) struct Man {
    pub(super) group: usize,
    pub(super) troops: Troops,
    pub(super) number: u32,
    pub(super) hit_earlier: bool,
    pub(super) dice: Vec<u32>,
    pub(super) hits: u32,
    pub(super) horse_hit: bool,
    pub(super) survival_die: Option<u32>,
    pub(super) fate: Fate,
}

impl Man {
    pub(super) fn take_die(&mut self, die: u32, effect: Effect) {
        self.dice.push(die);
        if effect.horse_hit_on == Some(die) {
            self.horse_hit = true;
        } else if die <= effect.hits_up_to {
            self.hits += 1;
        }
    }

    pub(super) fn to_json(&self) -> Value {
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

pub(super) fn men_of(groups: &[TargetGroup]) -> Vec<Man> {
    groups
        .iter()
        .enumerate()
        .flat_map(|(g, group)| men_of_group(g, group.troops, group.men, group.hit_earlier_this_turn))
        .collect()
}

/// The `men` of group `group`, numbered from 1, the first `hit_earlier` of them already hit once
/// this turn.
pub(super) fn men_of_group(group: usize, troops: Troops, men: u32, hit_earlier: u32) -> Vec<Man> {
    (1..=men)
        .map(|number| Man {
            group,
            troops,
            number,
            hit_earlier: number <= hit_earlier,
            dice: Vec::new(),
            hits: 0,
            horse_hit: false,
            survival_die: None,
            fate: Fate::Unhurt,
        })
        .collect()
}

/// What the men were hit by, for the survival roll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Weapon {
    SmallArms,
    Melee,
    /// Shells and grape shot: "5,6 or 6 for artillery".
    Artillery,
}

/// "Soldiers hit then roll for survival (5,6 or 6 for artillery= survive-flesh wound : 1-4 or
/// 1-5 for artillery= dead & removed from the game). Any man hit (in one turn) two or more
/// times is automatically dead (no survival)."
pub(super) fn survival_rolls(dice: &mut DiceStream, men: &mut [Man], weapon: Weapon, lookups: &mut Vec<Lookup>) {
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
pub(super) struct Casualties {
    pub(super) groups: Vec<Value>,
    pub(super) hits: u32,
    pub(super) dead: u32,
    pub(super) flesh_wounds: u32,
    pub(super) horses_killed: u32,
}

impl Casualties {
    /// Adds to an action's `result` the casualties group by group, man by man and in all.
    pub(super) fn add_to(self, result: &mut Value, men: &[Man]) {
        result["groups"] = Value::Array(self.groups);
        result["men"] = men.iter().map(Man::to_json).collect();
        result["hits"] = json!(self.hits);
        result["dead"] = json!(self.dead);
        result["flesh_wounds"] = json!(self.flesh_wounds);
        result["horses_killed"] = json!(self.horses_killed);
    }
}

pub(super) fn casualty_summary(men: &[Man], groups: &[TargetGroup]) -> Casualties {
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

pub(super) fn effect_words(effect: Option<Effect>, c: &Casualties) -> String {
    match effect {
        None => "cover leaves no effect at this range".to_owned(),
        Some(e) => format!("effect {}, {}", e.effect, casualty_words(c)),
    }
}

pub(super) fn casualty_words(c: &Casualties) -> String {
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

pub(super) fn plural<'a>(n: u32, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

pub(super) fn cover_suffix(cover: Cover) -> String {
    match cover {
        Cover::None => String::new(),
        other => format!(" ({})", other.words()),
    }
}
