//! Outcomes as forum posts, in BBCode and in Markdown.
//!
//! Each text says what happened, gives the numbers, and ends with ONE line a reader can use to
//! check it by hand ("Check: 9:51:45 → N = 95145, √N = 308.455831522115, decimals 9–10 = 21").
//! The text is built once as a small document (a title, bullet lines with bold parts, the
//! check line) and written out in both markups, so the two always say the same thing.
//!
//! Kinds: every outcome kind the Short ACW `apply` produces, and `resolution` for a resolver
//! campaign's `Resolution` (ruleset, action, headline, dice, lookups, result). Data with
//! `ruleset` and `dice` fields is read as a resolution whatever its kind; any other kind gets a
//! generic text listing its fields.

use adjutant_rules::outcome::{
    AttackDeclared, Casualties, CavalryOption, Deployed, DeploymentSealed, Fought, MissedWait, Moved, OutcomeData,
    Reinforced, ReinforcementRolled, Retreat, TurnBegins, TurnEnded, Vacated,
};
use adjutant_rules::resolver::Resolution;
use adjutant_rules::short_acw::state::GameResult;
use adjutant_rules::short_acw::{Hex, Winner};
use adjutant_rules::ResultNumber;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

pub use crate::doc::ForumText;
use crate::doc::{mixed, plain, Doc, Line, Part};
pub use crate::escape::{escape_bbcode, escape_markdown};

// ---- words for numbers ----------------------------------------------------------------------

/// A stored field that is not a string, as text (`null` as "—").
fn s(v: &Value) -> String {
    match v {
        Value::String(t) => t.clone(),
        Value::Null => "—".to_string(),
        other => other.to_string(),
    }
}

/// A value as the stored data names it (`river`, `infantry`).
fn named<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(name)) => name,
        Ok(other) => s(&other),
        Err(_) => String::new(),
    }
}

fn joined<T: ToString>(items: &[T], separator: &str) -> String {
    items.iter().map(T::to_string).collect::<Vec<_>>().join(separator)
}

/// "1 factor", "3 factors".
fn count(n: u32, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Each unit with its factors: "us-14th-inf 4, us-13th-inf 4".
fn units_with_factors(units: &[(String, u32)]) -> String {
    units.iter().map(|(unit, factors)| format!("{unit} {factors}")).collect::<Vec<_>>().join(", ")
}

/// The time of day N was made from: 95145 → "9:51:45".
fn time_of(n: u32) -> String {
    format!("{}:{:02}:{:02}", n / 10_000, n / 100 % 100, n % 100)
}

/// The check line of a post-time result number.
pub fn result_number_check(r: &ResultNumber) -> String {
    format!(
        "Check: {} → N = {}, √N = {}, decimals {}–{} = {:02}",
        time_of(r.n),
        r.n,
        r.sqrt,
        r.first_digit,
        r.first_digit + 1,
        r.result
    )
}

/// A stamp or deadline as people read it: `2026-11-27 20:00 UTC`.
fn when(at: &DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}

fn and_list(items: &[String]) -> String {
    adjutant_rules::words::listed(items, "and")
}

// ---- the kinds -----------------------------------------------------------------------------

/// An outcome's working as plain text, for a page to set as text: its title, its lines (each
/// number and how it was found) and its check line, the same as the forum text shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Working {
    pub title: String,
    pub lines: Vec<String>,
    pub check: Option<String>,
}

/// An outcome's stored data: read into a [`Value`], or still its JSON text (as the store keeps
/// it), which is read straight into its kind's type.
#[derive(Debug, Clone, Copy)]
pub enum Stored<'a> {
    Value(&'a Value),
    /// The text as serde_json writes a value, as the store keeps it: each key once. (Text with a
    /// key twice is refused by the typed read, where a [`Value`] keeps the last.)
    Json(&'a str),
}

impl<'a> From<&'a Value> for Stored<'a> {
    fn from(data: &'a Value) -> Self {
        Stored::Value(data)
    }
}

impl Stored<'_> {
    /// Whether the data has `ruleset` and `dice` fields (of any value, `null` too): a
    /// resolution, whatever its kind says.
    fn is_resolution(self) -> bool {
        match self {
            Stored::Value(data) => data.get("ruleset").is_some() && data.get("dice").is_some(),
            Stored::Json(json) => {
                /// A field that is there, whatever its value.
                fn there<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
                    <serde::de::IgnoredAny as serde::Deserialize>::deserialize(d).map(|_| true)
                }
                #[derive(serde::Deserialize)]
                struct Fields {
                    #[serde(default, deserialize_with = "there")]
                    ruleset: bool,
                    #[serde(default, deserialize_with = "there")]
                    dice: bool,
                }
                // Only an object has fields (serde would read an array's items into them).
                json.trim_start().starts_with('{')
                    && serde_json::from_str::<Fields>(json).is_ok_and(|f| f.ruleset && f.dice)
            }
        }
    }

    fn read(self, kind: &str) -> Result<OutcomeData, adjutant_rules::outcome::UnreadOutcome> {
        match self {
            Stored::Value(data) => OutcomeData::read(kind, data),
            Stored::Json(json) => OutcomeData::read_json(kind, json),
        }
    }
}

/// The working of an outcome, as [`outcome_text`] words it.
pub fn outcome_working<'a>(kind: &str, data: impl Into<Stored<'a>>) -> Working {
    let doc = outcome_doc(kind, data.into());
    let lines = doc
        .lines
        .iter()
        .map(|line| {
            line.iter()
                .map(|part| match part {
                    Part::Plain(t) | Part::Bold(t) => t.as_str(),
                })
                .collect()
        })
        .collect();
    Working { title: doc.title, lines, check: doc.check }
}

/// An outcome as forum text, in BBCode and Markdown, from its stored kind and data.
pub fn outcome_text<'a>(kind: &str, data: impl Into<Stored<'a>>) -> ForumText {
    outcome_doc(kind, data.into()).forum_text()
}

/// An outcome as forum text, from its data as the rules made it.
pub fn outcome_data_text(data: &OutcomeData) -> ForumText {
    doc_of(data).forum_text()
}

/// Stored data is read as its kind's type (data with `ruleset` and `dice` as a resolution,
/// whatever its kind); a kind the rules do not write (Adjutant's own records) or data of another
/// shape is listed field by field.
fn outcome_doc(kind: &str, data: Stored<'_>) -> Doc {
    // A `resolution` is read as one whatever its fields, so its text is not looked through
    // for them first.
    let read_as = if kind != "resolution" && data.is_resolution() { "resolution" } else { kind };
    match data.read(read_as) {
        Ok(typed) => doc_of(&typed),
        Err(_) => match data {
            Stored::Value(data) => generic(kind, data),
            Stored::Json(json) => generic(kind, &serde_json::from_str(json).unwrap_or(Value::Null)),
        },
    }
}

fn doc_of(data: &OutcomeData) -> Doc {
    let doc = |title: String, lines: Vec<Line>| Doc { title, lines, check: None };
    match data {
        OutcomeData::Battle(d) => battle(d),
        OutcomeData::Casualties(d) => casualties(d),
        OutcomeData::Retreat(d) => retreat(d),
        OutcomeData::ReinforcementRoll(d) => reinforcement_roll(d),
        OutcomeData::Reinforced(d) => reinforced(d),
        OutcomeData::Moved(d) => moved(d),
        OutcomeData::Deployed(d) => deployed(d),
        OutcomeData::DeploymentSealed(d) => deployment_sealed(d),
        OutcomeData::TurnBegins(d) => turn_begins(d),
        OutcomeData::TurnEnded(d) => turn_ended(d),
        OutcomeData::AttackDeclared(d) => attack_declared(d),
        OutcomeData::CavalryOption(d) => cavalry_option(d),
        OutcomeData::AttackVoid(d) => doc(
            format!("Battle {}: {} is empty, there is no battle", d.battle, d.target),
            vec![plain("The defending cavalry retreated before the battle and left the hex empty.")],
        ),
        OutcomeData::Eliminated(d) => doc(
            format!("Battle {}: {} is eliminated", d.battle, d.unit),
            vec![plain(format!("In {}: {}.", d.hex, d.reason))],
        ),
        OutcomeData::GameOver(d) => game_over(d),
        OutcomeData::Deadline(d) => deadline(&d.wait, Some(&d.applied)),
        OutcomeData::DeadlinePassed(d) => deadline(&d.wait, None),
        OutcomeData::DeadlineNear(d) => {
            doc(format!("The {}'s {} ends soon", d.side, d.stage), vec![plain(format!("Deadline {}", when(&d.due)))])
        }
        OutcomeData::AttackCancelled(d) => doc(
            format!("Battle {}: the attack is cancelled", d.battle),
            vec![plain(format!("The {} did not fix the result number by the deadline.", d.side))],
        ),
        OutcomeData::Paused(d) => doc(
            "The moderator has paused the campaign".to_owned(),
            vec![
                plain(format!("Reason: {}", d.reason)),
                plain("No post is taken and no deadline runs until the campaign resumes."),
            ],
        ),
        OutcomeData::PlayerReplaced(d) => doc(
            format!("The {} has a new player: {}", d.side, d.name),
            vec![plain(format!("{} replaces {}.", d.name, d.replaced_name))],
        ),
        OutcomeData::Resumed(_) => doc("The moderator has resumed the campaign".to_owned(), vec![]),
        OutcomeData::Extended(d) => doc(
            format!("The moderator gives {} more before the deadline", d.by),
            vec![plain(format!("Reason: {}", d.reason))],
        ),
        OutcomeData::Resolution(d) => resolution(d),
    }
}

fn battle(d: &Fought) -> Doc {
    let nums = &d.numbers;
    let attacker = d.attacker_side;
    let defender = attacker.other();
    let winner = d.winner_side;
    let (a, dd) = (nums.attacker, nums.defender);
    let defender_line = if nums.multiplier == "1" {
        format!("Defender ({defender}): {} = {dd} factors, in the open", units_with_factors(&d.defenders))
    } else {
        format!(
            "Defender ({defender}): {} = {dd} factors, {} ×{} → {}",
            units_with_factors(&d.defenders),
            named(&nums.defence),
            nums.multiplier,
            nums.defender_counted
        )
    };
    let victory = nums.victory;
    let victory_line = match &nums.per_factor {
        Some(per) => format!("Victory number {victory}: 100 / {} = {per}, × {a} = {victory}", nums.total_counted),
        None => {
            let total = &nums.total_counted;
            // The exact quotient is shown to two places beside the rounded number; the victory
            // number itself is worked out exactly by the rules.
            let exact = total.parse::<f64>().ok().filter(|t| *t > 0.0).map(|t| 100.0 * f64::from(a) / t);
            match exact {
                Some(x) => format!("Victory number {victory} = 100 × {a} / {total} = {x:.2}, rounded half up"),
                None => format!("Victory number {victory} = 100 × {a} / {total}, rounded half up"),
            }
        }
    };
    let result = nums.result;
    let verdict = if nums.winner == Winner::Attacker {
        format!("Result number {result} ≤ victory {victory}: the attacker wins")
    } else {
        format!("Result number {result} > victory {victory}: the defender wins")
    };
    // A sealed-delay campaign: the result time is the stamp plus the delay the revealed chain
    // secret gives, and the check line shows each step.
    let result_time_line = d.sealed_delay.as_ref().map(|sd| {
        plain(format!(
            "Stamp {} + sealed delay {} ms = result time {} ({} on the campaign clock): result number {result}",
            sd.stamp,
            sd.delay_ms,
            sd.result_time,
            time_of(nums.result_number.n),
        ))
    });
    let check = match &d.sealed_delay {
        Some(sd) => format!(
            "Check: SHA-256(secret {} {}) = {}, and so back to the chain's published start {}; \
             SHA-256(secret ‖ post hash {}) begins {} = {}, mod 60000 = {} ms; {}",
            sd.draw,
            sd.secret,
            sd.previous,
            sd.commitment,
            sd.post_hash,
            sd.first_8_bytes,
            sd.first_8_bytes_decimal,
            sd.delay_ms,
            result_number_check(&nums.result_number).trim_start_matches("Check: "),
        ),
        None => result_number_check(&nums.result_number),
    };
    let mut lines = vec![
        plain(format!("Attacker ({attacker}): {} = {a} factors", units_with_factors(&d.attackers))),
        plain(defender_line),
        plain(victory_line),
    ];
    lines.extend(result_time_line);
    lines.extend([
        mixed("", verdict, format!(" ({winner})")),
        plain(format!(
            "Difference {} (band {}): winner ×{}, loser ×{} of the basic rate {}",
            nums.difference, nums.band, nums.winner_rate, nums.loser_rate, nums.basic_rate
        )),
        mixed(
            "Casualties: ",
            format!("{attacker} {}, {defender} {}", nums.attacker_casualties, nums.defender_casualties),
            "",
        ),
    ]);
    Doc { title: format!("Battle {} at {}: the {winner} wins", d.battle, d.target), lines, check: Some(check) }
}

fn casualties(d: &Casualties) -> Doc {
    let mut lines = vec![];
    let mut check = vec![];
    for share in d.units.iter().filter(|share| share.taken > 0) {
        lines.push(plain(format!(
            "{}: {} → {} (−{}){}",
            share.unit,
            share.before,
            share.after,
            share.taken,
            if share.eliminated { ", eliminated" } else { "" }
        )));
        check.push(share.taken.to_string());
    }
    let total = d.casualties;
    Doc {
        title: format!("Battle {}: the {} loses {}", d.battle, d.side, count(total, "factor")),
        lines,
        check: Some(format!(
            "Check: {}battle {} called for {total}; no unit takes a second casualty before every unit present has taken one",
            if check.len() > 1 { format!("{} = {total}, as ", check.join(" + ")) } else { String::new() },
            d.battle
        )),
    }
}

fn retreat(d: &Retreat) -> Doc {
    let mut lines = vec![];
    for m in &d.moves {
        lines.push(plain(format!("{}: {} → {}", m.unit, m.from, joined(&m.path, " → "))));
    }
    for id in &d.eliminated_without_retreat {
        lines.push(plain(format!("{id}: no legal retreat, eliminated")));
    }
    let mut check = None;
    for l in d.losses.iter().filter(|l| l.factors_lost > 0) {
        let before = l.factors_before;
        let at = l.next_to_enemy.map_or_else(|| "—".to_owned(), |h| h.to_string());
        lines.push(mixed(
            format!("{} ends next to the enemy in {at}: ", l.unit),
            format!("loses {} of {before} factors", l.factors_lost),
            "",
        ));
        check = Some(format!(
            "Check: half of {before} factors, rounded up, is {} (the seed: \"immediately lose HALF their factors\")",
            before.div_ceil(2)
        ));
    }
    // The hexes the retreat left are the loser's own. From rules version 3 the outcome names
    // them (`left`) and those nobody holds afterwards (`vacated`, a list). Before, `vacated` was
    // the battle's target, which is the winner's hex when the attacker loses: it is said to be
    // left empty only where the retreating units stood there.
    let (left, vacated): (Vec<String>, Vec<String>) = match &d.vacated {
        Vacated::Hexes(vacated) => {
            (d.left.iter().flatten().map(Hex::to_string).collect(), vacated.iter().map(Hex::to_string).collect())
        }
        Vacated::Target(target) => {
            let mut left: Vec<Hex> = d.moves.iter().map(|m| m.from).collect();
            left.sort();
            left.dedup();
            let vacated = if left.contains(target) { vec![target.to_string()] } else { vec![] };
            (left.iter().map(Hex::to_string).collect(), vacated)
        }
    };
    match vacated.as_slice() {
        [] => {}
        [hex] => lines.push(plain(format!("{hex} is left empty; nobody advances into it."))),
        hexes => lines.push(plain(format!("{} are left empty; nobody advances into them.", and_list(hexes)))),
    }
    let title = match left.as_slice() {
        [] => format!("Battle {}: the {} retreats", d.battle, d.side),
        hexes => format!("Battle {}: the {} retreats from {}", d.battle, d.side, and_list(hexes)),
    };
    Doc { title, lines, check }
}

fn reinforcement_roll(d: &ReinforcementRolled) -> Doc {
    let (ms, rem, cities) = (d.ms, d.remainder, d.cities);
    let gains = if d.gains { "gains 1 point" } else { "no gain" };
    Doc {
        title: format!("Rebel reinforcement post: {gains}"),
        lines: vec![
            plain(format!(
                "Reinforcement cities held: {cities}{}",
                if d.cities_held.is_empty() { String::new() } else { format!(" ({})", d.cities_held.join(", ")) }
            )),
            mixed("Milliseconds of the post: ", format!(".{ms:03}"), ""),
            plain(format!("Points stored: {}", d.points_stored)),
        ],
        check: Some(format!(
            "Check: {ms} mod 6 = {rem} {} {cities} cities held → {gains}",
            if d.gains { "≤" } else { ">" }
        )),
    }
}

fn reinforced(d: &Reinforced) -> Doc {
    let mut lines = vec![];
    let mut costs = vec![];
    for f in &d.factors {
        lines.push(plain(format!(
            "{}: +{} for {} (rail at {})",
            f.unit,
            count(f.factors, "factor"),
            count(f.cost, "point"),
            f.rail_hex
        )));
        costs.push(f.cost.to_string());
    }
    for n in &d.new_units {
        lines.push(plain(format!(
            "New {} unit {} ({}) in {} with {} for {}",
            named(&n.arm),
            n.name,
            n.unit,
            n.hex,
            count(n.factors, "factor"),
            count(n.cost, "point")
        )));
        costs.push(n.cost.to_string());
    }
    let (before, cost, left) = (d.points_before, d.cost, d.points_left);
    Doc {
        title: format!("The {} spends {}", d.side, count(cost, "reinforcement point")),
        lines,
        check: Some(format!(
            "Check: {}{before} − {cost} = {left} left",
            if costs.len() > 1 { format!("{} = {cost}; ", costs.join(" + ")) } else { String::new() }
        )),
    }
}

fn moved(d: &Moved) -> Doc {
    let mut lines = vec![plain(format!(
        "Path: {} → {} ({} of {} movement points)",
        d.from,
        joined(&d.path, " → "),
        d.cost,
        d.allowance
    ))];
    if let Some(enemy) = d.halted_next_to {
        lines.push(mixed("", format!("Halts next to the enemy in {enemy}"), " and must attack"));
    }
    let to = d.path.last().map(Hex::to_string).unwrap_or_default();
    Doc { title: format!("{} moves {} → {to}", d.unit, d.from), lines, check: None }
}

fn deployed(d: &Deployed) -> Doc {
    let mut lines: Vec<Line> = d.placements.iter().map(|p| plain(format!("{} in {}", p.unit, p.hex))).collect();
    lines.extend(d.stand_in_map.as_ref().map(|label| plain(format!("{label}."))));
    let title = if d.revealed {
        format!("The {}'s sealed deployment is revealed: {} units", d.side, d.placements.len())
    } else {
        format!("The {} deploys {} units", d.side, d.placements.len())
    };
    Doc { title, lines, check: None }
}

/// Rules version 3: the first deployment, sealed (ruling 11): that the side deployed, not where.
fn deployment_sealed(d: &DeploymentSealed) -> Doc {
    let mut lines = vec![plain(format!(
        "Where stays sealed until the {} side has deployed; both deployments are then revealed together.",
        d.sealed_until
    ))];
    lines.extend(d.stand_in_map.as_ref().map(|label| plain(format!("{label}."))));
    Doc { title: format!("The {} has deployed {} units, sealed", d.side, d.units), lines, check: None }
}

fn turn_begins(d: &TurnBegins) -> Doc {
    let mut lines = vec![];
    if let Some(gain) = d.points_gained {
        let stored = d.points_stored.unwrap_or_default();
        lines.push(plain(format!("The Union receives {gain} reinforcement point ({stored} stored)")));
    }
    if let Some(due) = &d.deadline {
        lines.push(plain(format!("The turn ends by {}", when(due))));
    }
    Doc { title: format!("Turn {}: the {} player turn begins", d.turn, d.side), lines, check: None }
}

/// The server's post at a deadline: what was due, since when, and what it decided.
fn deadline(d: &MissedWait, applied: Option<&str>) -> Doc {
    let mut lines =
        vec![plain(format!("Waited for since {}", when(&d.since))), plain(format!("Deadline {}", when(&d.due)))];
    match applied {
        Some(applied) => lines.push(plain(format!("At the deadline: {applied}"))),
        None => lines.push(plain("Nothing is decided: the moderator carries the game on")),
    }
    Doc { title: format!("The {}'s deadline for {} has passed", d.side, d.stage), lines, check: None }
}

fn turn_ended(d: &TurnEnded) -> Doc {
    let lines = if d.newly_fortified.is_empty() {
        vec![]
    } else {
        vec![plain(format!("Fortified (did not move): {}", d.newly_fortified.join(", ")))]
    };
    Doc { title: format!("Turn {}: the {} ends its player turn", d.turn, d.side), lines, check: None }
}

fn attack_declared(d: &AttackDeclared) -> Doc {
    Doc {
        title: format!("Battle {}: attack on {}", d.battle, d.target),
        lines: vec![
            plain(format!("Attackers: {}", d.attackers.join(", "))),
            mixed(
                "The defending cavalry (",
                d.cavalry.join(", "),
                ") may retreat 1 hex before the battle; the attacker's next post fixes the result number.",
            ),
        ],
        check: None,
    }
}

fn cavalry_option(d: &CavalryOption) -> Doc {
    let cavalry = d.cavalry.join(", ");
    if d.retreat {
        let to = d.hex.map_or_else(|| "—".to_owned(), |h| h.to_string());
        let mut lines = vec![plain(format!("{cavalry} retreat to {to}"))];
        for l in d.losses.iter().flatten().filter(|l| l.factors_lost > 0) {
            lines.push(plain(format!(
                "{} ends next to the enemy: loses {} of {} factors",
                l.unit, l.factors_lost, l.factors_before
            )));
        }
        Doc { title: format!("Battle {}: the cavalry retreat before the battle", d.battle), lines, check: None }
    } else {
        Doc {
            title: format!("Battle {}: the cavalry stand", d.battle),
            lines: vec![plain(format!("{cavalry} stay and fight"))],
            check: None,
        }
    }
}

fn game_over(d: &GameResult) -> Doc {
    let winner = d.winner.map_or_else(|| "nobody".to_owned(), |w| w.to_string());
    let level = d.level.as_ref().map_or_else(String::new, |level| format!(" ({})", named(level)));
    Doc {
        title: format!("Game over on turn {}: {}", d.turn, d.condition),
        lines: vec![mixed("Winner: ", winner, level)],
        check: None,
    }
}

fn resolution(d: &Resolution) -> Doc {
    let mut lines = vec![plain(format!("Ruleset {}, action {}", d.ruleset, d.action))];
    if !d.dice.is_empty() {
        let rolled: Vec<String> =
            d.dice.iter().map(|r| format!("d{} = {} ({})", r.faces, r.value, r.purpose)).collect();
        lines.push(mixed("Dice: ", rolled.join(", "), ""));
    }
    for l in &d.lookups {
        lines.push(plain(format!("{}: {} × {} → {}", l.table, l.row, l.column, l.value)));
    }
    match &d.result {
        Value::Object(fields) => {
            for (k, v) in fields {
                lines.push(plain(format!("{}: {}", k.replace('_', " "), s(v))));
            }
        }
        Value::Null => {}
        other => lines.push(plain(format!("Result: {}", s(other)))),
    }
    let check = d.dice.first().map(|first| {
        let faces = first.faces.max(1);
        let byte = u32::from(first.byte);
        format!(
            "Check: printf '%s' '{}/{}' | sha256sum → byte {} = {byte} → {byte} mod {faces} + 1 = {} (the first die; each die takes the next byte)",
            d.stream_text,
            first.byte_index / 32,
            first.byte_index % 32,
            byte % faces + 1
        )
    });
    Doc { title: d.headline.clone(), lines, check }
}

fn generic(kind: &str, d: &Value) -> Doc {
    let mut title = kind.replace('_', " ");
    if let Some(first) = title.get(..1) {
        title = first.to_uppercase() + &title[1..];
    }
    let lines = match d {
        Value::Object(fields) => {
            fields.iter().map(|(k, v)| plain(format!("{}: {}", k.replace('_', " "), s(v)))).collect()
        }
        Value::Null => vec![],
        other => vec![plain(s(other))],
    };
    Doc { title, lines, check: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::escape::{breaks_line, ZWSP};
    use serde_json::json;

    #[test]
    fn names_from_players_cannot_inject_markup() {
        let t = outcome_text(
            "moved",
            &json!({"unit": "[url=x]*evil*[/url]", "from": "0101", "path": ["0102"], "cost": 1, "allowance": 4, "halted_next_to": null, "must_fight": false}),
        );
        assert!(
            t.bbcode.starts_with("[b]&#91;url=x&#93;&#42;evil&#42;&#91;/url&#93; moves 0101 → 0102[/b]"),
            "{}",
            t.bbcode
        );
        assert!(t.markdown.starts_with(r"**\[url=x\]\*evil\*\[/url\] moves 0101 → 0102**"), "{}", t.markdown);
    }

    #[test]
    fn bare_www_addresses_stay_text_and_invisible_characters_show() {
        for (text, markdown) in [
            ("see www.evil.example/login", "see www\u{200B}.evil.example/login"),
            ("WWW.Evil.example", "WWW\u{200B}.Evil.example"),
            ("awww.no", "awww.no"),
            ("Grant\u{202E}tnarg", "Grant(U+202E)tnarg"),
            ("Le\u{200B}e", "Le(U+200B)e"),
        ] {
            assert_eq!(escape_markdown(text), markdown);
            assert_eq!(escape_bbcode(text), markdown);
        }
        let t = outcome_text(
            "moved",
            &json!({"unit": "www.evil.example/login\u{202E}", "from": "0101", "path": ["0102"], "cost": 1, "allowance": 4, "halted_next_to": null, "must_fight": false}),
        );
        assert!(t.markdown.starts_with("**www\u{200B}.evil.example/login(U+202E) moves"), "{}", t.markdown);
        assert!(!t.bbcode.contains("www.") && !t.bbcode.contains('\u{202E}'), "{}", t.bbcode);
    }

    const ATTACK: &str =
        "Alice @staff <b>x</b> [url=http://evil.example]x[/url] ![img](http://x) # heading\nCheck: 1 → N = 1 & <script>";

    #[test]
    fn the_attack_shows_as_literal_text() {
        let t = outcome_text(
            "moved",
            &json!({"unit": ATTACK, "from": "0101", "path": ["0102"], "cost": 1, "allowance": 4, "halted_next_to": null, "must_fight": false}),
        );
        for forbidden in ["@staff", "<b>", "[url", "[/url]", "![img]", "http://", "\nCheck:", "<script>", "# heading"] {
            assert!(!unescaped(&t.bbcode, forbidden), "{forbidden:?} in {}", t.bbcode);
            assert!(!unescaped(&t.markdown, forbidden), "{forbidden:?} in {}", t.markdown);
        }
        assert_eq!(shown_markdown(&escape_markdown(ATTACK)), ATTACK.replace('\n', " "));
        assert_eq!(shown_bbcode(&escape_bbcode(ATTACK)), ATTACK.replace('\n', " "));
        // At the start of a list item, block markup is escaped too.
        for start in ["- x", "+ x", "= x", "12. x", "3) x", "    code", "# x", "> x"] {
            let t = outcome_text("deployed", &json!({"side": "union", "placements": [{"unit": start, "hex": "0101"}]}));
            let item = t.markdown.lines().find(|l| l.starts_with("- ")).unwrap_or_default();
            markdown_item_is_text(&item[2..]).unwrap_or_else(|e| panic!("{start:?}: {e}: {item:?}"));
        }
    }

    /// Whether `needle` occurs in `text` other than right after a backslash (Markdown's escape).
    fn unescaped(text: &str, needle: &str) -> bool {
        text.match_indices(needle).any(|(at, _)| !text[..at].ends_with('\\'))
    }

    /// What a Markdown reader shows for escaped text: the characters typed.
    fn shown_markdown(escaped: &str) -> String {
        let mut out = String::new();
        let mut chars = escaped.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.extend(chars.next()),
                '&' => out.push(entity(&mut chars)),
                '@' | '#' | ':' if chars.peek() == Some(&ZWSP) => {
                    out.push(c);
                    chars.next();
                }
                // The zero-width space that keeps a bare www. address from being linked.
                ZWSP if out.to_lowercase().ends_with("www") && chars.peek() == Some(&'.') => {}
                c => out.push(c),
            }
        }
        out
    }

    /// What a BBCode forum (or Discourse) shows for escaped text.
    fn shown_bbcode(escaped: &str) -> String {
        let mut out = String::new();
        let mut chars = escaped.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '&' => out.push(entity(&mut chars)),
                '@' | '#' | ':' if chars.peek() == Some(&ZWSP) => {
                    out.push(c);
                    chars.next();
                }
                // The zero-width space that keeps a bare www. address from being linked.
                ZWSP if out.to_lowercase().ends_with("www") && chars.peek() == Some(&'.') => {}
                c => out.push(c),
            }
        }
        out
    }

    fn entity(chars: &mut std::iter::Peekable<std::str::Chars>) -> char {
        let name: String = chars.by_ref().take_while(|c| *c != ';').collect();
        match name.as_str() {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            n => n.strip_prefix('#').and_then(|d| d.parse().ok()).and_then(char::from_u32).unwrap_or('\u{FFFD}'),
        }
    }

    /// Escaped text holds no markup: every special character is escaped, every `&` starts one
    /// of our references, `@`, `#` and `:/` are broken, and it is one line.
    fn is_text(escaped: &str, markdown: bool) -> Result<(), String> {
        let mut chars = escaped.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            let rest = &escaped[at..];
            match c {
                '\\' if markdown => match chars.next() {
                    Some((_, e)) if e.is_ascii_punctuation() => {}
                    other => return Err(format!("backslash before {other:?} at {at}")),
                },
                '&' => {
                    let ok = ["&lt;", "&gt;", "&amp;"].iter().any(|e| rest.starts_with(e))
                        || (!markdown
                            && ['[', ']', '\\', '*', '_', '`', '~', '|']
                                .iter()
                                .any(|c| rest.starts_with(&format!("&#{};", u32::from(*c)))));
                    if !ok {
                        return Err(format!("a bare & at {at}"));
                    }
                    for (_, c) in chars.by_ref() {
                        if c == ';' {
                            break;
                        }
                    }
                }
                '@' | '#' if chars.peek().map(|(_, n)| *n) != Some(ZWSP) => {
                    return Err(format!("{c} not broken at {at}"))
                }
                ':' if rest.starts_with(":/") => return Err(format!(":/ at {at}")),
                '[' | ']' | '\\' | '*' | '_' | '`' | '~' | '|' | '<' | '>' => {
                    return Err(format!("{c} unescaped at {at}"))
                }
                c if breaks_line(c) => return Err(format!("{c:?} at {at}")),
                _ => {}
            }
        }
        Ok(())
    }

    fn markdown_item_is_text(item: &str) -> Result<(), String> {
        if item.starts_with(|c: char| c.is_whitespace() || matches!(c, '-' | '+' | '=')) {
            return Err("starts a block".into());
        }
        let digits = item.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && item[digits..].starts_with(['.', ')']) {
            return Err("starts an ordered list".into());
        }
        is_text(item.trim_end_matches(" in 0101"), true)
    }

    /// An outcome rendered with `text` where the people's text goes, for each kind that shows
    /// such text, and the part of each output that is theirs (what the template leaves).
    fn rendered_parts(text: &str) -> Vec<(ForumText, ForumText, String)> {
        const HOLE: &str = "HOLEHOLEHOLE";
        let kinds = |t: &str| {
            vec![
                outcome_text(
                    "moved",
                    &json!({"unit": t, "from": "0101", "path": ["0102"], "cost": 1, "allowance": 4, "halted_next_to": null, "must_fight": false}),
                ),
                outcome_text("eliminated", &json!({"battle": 3, "unit": "cs-hq", "hex": "0905", "reason": t})),
                outcome_text("rollback", &json!({"to_post": 12, "reason": t})),
                outcome_text("sealed", &json!({"topic": t, "role": "attacker", "side": "union"})),
                outcome_text(
                    "resolution",
                    &json!({"ruleset": "r", "action": "a", "stream_text": "s", "headline": t, "dice": [], "lookups": [], "result": null}),
                ),
            ]
        };
        kinds(HOLE).into_iter().zip(kinds(text)).map(|(template, filled)| (template, filled, HOLE.to_owned())).collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        #[test]
        fn people_text_renders_as_itself_in_both_markups(text in "(?s).{0,40}|[@#:/<>&\\[\\]*_`~|!()\\\\\nwW.\u{202E}\u{200B} -]{0,40}") {
            let md = escape_markdown(&text);
            let bb = escape_bbcode(&text);
            let expected: String = text
                .chars()
                .map(|c| match c {
                    c if breaks_line(c) => " ".to_owned(),
                    c if adjutant_rules::words::invisible(c) => format!("(U+{:04X})", c as u32),
                    c => c.to_string(),
                })
                .collect();
            proptest::prop_assert_eq!(shown_markdown(&md), expected.clone());
            proptest::prop_assert_eq!(shown_bbcode(&bb), expected);
            if let Err(e) = is_text(&md, true) { proptest::prop_assert!(false, "markdown {:?}: {}", md, e); }
            if let Err(e) = is_text(&bb, false) { proptest::prop_assert!(false, "bbcode {:?}: {}", bb, e); }
            // In whole outcomes, everything outside the people's text is the template's own.
            for (template, filled, hole) in rendered_parts(&text) {
                let (pre, post) = template.markdown.split_once(&hole).unwrap_or_default();
                proptest::prop_assert!(filled.markdown.starts_with(pre) && filled.markdown.ends_with(post));
                let theirs = &filled.markdown[pre.len()..filled.markdown.len() - post.len()];
                if let Err(e) = is_text(theirs, true) { proptest::prop_assert!(false, "{:?}: {}", filled.markdown, e); }
                let (pre, post) = template.bbcode.split_once(&hole).unwrap_or_default();
                proptest::prop_assert!(filled.bbcode.starts_with(pre) && filled.bbcode.ends_with(post));
                let theirs = &filled.bbcode[pre.len()..filled.bbcode.len() - post.len()];
                if let Err(e) = is_text(theirs, false) { proptest::prop_assert!(false, "{:?}: {}", filled.bbcode, e); }
            }
        }
    }

    #[test]
    fn the_check_line_of_the_worked_example() {
        let r = ResultNumber::of(95145, adjutant_rules::DigitPositions::NinthTenth);
        assert_eq!(result_number_check(&r), "Check: 9:51:45 → N = 95145, √N = 308.455831522115, decimals 9–10 = 21");
        let r = ResultNumber::of(1005, adjutant_rules::DigitPositions::EighthNinth);
        assert_eq!(result_number_check(&r), "Check: 0:10:05 → N = 1005, √N = 31.701734968294, decimals 8–9 = 68");
    }

    #[test]
    fn the_cavalry_option_and_its_consequences() {
        // Data shaped as `short_acw::orders` writes it.
        let t = outcome_text(
            "attack_declared",
            &json!({"battle": 2, "attackers": ["us-14th-inf"], "target": "0802", "cavalry": ["cs-37th-cav", "cs-45th-cav"]}),
        );
        assert_eq!(
            t.markdown,
            "**Battle 2: attack on 0802**\n\n- Attackers: us-14th-inf\n- The defending cavalry (**cs-37th-cav, cs-45th-cav**) may retreat 1 hex before the battle; the attacker's next post fixes the result number.\n"
        );
        let losses = json!([{"unit": "cs-37th-cav", "hex": "0901", "next_to_enemy": "0801", "factors_before": 3,
                             "factors_lost": 2, "factors_after": 1, "eliminated": false}]);
        let t = outcome_text(
            "cavalry_option",
            &json!({"battle": 2, "retreat": true, "hex": "0901", "cavalry": ["cs-37th-cav"], "losses": losses}),
        );
        assert!(t.bbcode.starts_with("[b]Battle 2: the cavalry retreat before the battle[/b]\n"), "{}", t.bbcode);
        assert!(t.bbcode.contains("[*]cs-37th-cav retreat to 0901\n"), "{}", t.bbcode);
        assert!(t.bbcode.contains("[*]cs-37th-cav ends next to the enemy: loses 2 of 3 factors\n"), "{}", t.bbcode);
        let t = outcome_text("cavalry_option", &json!({"battle": 2, "retreat": false, "cavalry": ["cs-37th-cav"]}));
        assert_eq!(t.markdown, "**Battle 2: the cavalry stand**\n\n- cs-37th-cav stay and fight\n");
        let t = outcome_text("attack_void", &json!({"battle": 2, "target": "0802"}));
        assert!(t.markdown.starts_with("**Battle 2: 0802 is empty, there is no battle**"));
        let t = outcome_text(
            "eliminated",
            &json!({"battle": 3, "unit": "cs-hq", "hex": "0905", "reason": "no legal retreat"}),
        );
        assert_eq!(t.bbcode, "[b]Battle 3: cs-hq is eliminated[/b]\n[list]\n[*]In 0905: no legal retreat.\n[/list]\n");
        let t = outcome_text("game_over", &json!({"winner": null, "level": null, "condition": "Draw", "turn": 12}));
        assert!(t.markdown.contains("- Winner: **nobody**\n"), "{}", t.markdown);
        let t = outcome_text("turn_begins", &json!({"turn": 3, "side": "confederate"}));
        assert_eq!(t.markdown, "**Turn 3: the Rebel player turn begins**\n\n");
    }

    #[test]
    fn unknown_kinds_list_their_fields() {
        let t = outcome_text("rollback", &json!({"to_post": 12, "reason": "typo"}));
        assert_eq!(t.markdown, "**Rollback**\n\n- reason: typo\n- to post: 12\n");
        assert_eq!(t.bbcode, "[b]Rollback[/b]\n[list]\n[*]reason: typo\n[*]to post: 12\n[/list]\n");
    }
}
