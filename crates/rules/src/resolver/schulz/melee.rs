//! Melee (MELEE; MELEE WITH GUN CREW; STORMING): one round between two groups, with both
//! groups' sealed stay-or-retreat choices from the round before.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::casualties::{men_of_group, plural, survival_rolls, Fate, Man, Weapon};
use super::tables::{MAXIMUM_GROUP, NEEDED_TO_KILL, WALL_MELEE_MEN};
use super::{check_hit_earlier, list, Troops};
use crate::resolver::{Lookup, Resolved};
use crate::{DiceStream, Refusal};

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
    check_hit_earlier(field, "melee.hit_earlier", g.hit_earlier_this_turn, g.men)
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
    men_of_group(group, g.troops, g.men, g.hit_earlier_this_turn)
}

pub(super) fn melee_round(i: &MeleeRound, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
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
