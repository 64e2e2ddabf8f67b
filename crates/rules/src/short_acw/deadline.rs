//! The campaign clock: who the game waits for, since when, and until when; and what happens when
//! a side misses its deadline. Pure like the rest of the rules: the server stamps the posts, and
//! the clock is a fold of their stamps, so the audit recomputes every deadline from the log.
//!
//! A *wait* is one thing the game waits for from one side: its deployment, its player turn, or
//! one answer to a battle. A wait's clock starts when the wait begins and runs out at its
//! deadline. A player turn's clock stops while the game waits for the other side's answer to one
//! of that turn's battles (the time the other side takes is not the acting side's), and every
//! clock stops while the campaign is paused; a stopped clock keeps the time it had left.

use chrono::{DateTime, NaiveTime, TimeDelta, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::orders::{self, Applied, Order};
use super::scenario::Scenario;
use super::settings::Settings;
use super::state::GameState;
use crate::outcome::{
    AttackCancelled, DeadlineLeftToModerator, DeadlineNear, DeadlinePassed, ExtendedWait, MissedWait, Outcome,
    OutcomeData,
};
use crate::{Refusal, Side};

/// How long each wait lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `turn_deadline`: this long after the wait begins.
    After(TimeDelta),
    /// `turn_deadline_at`: at the first `at` in the campaign's time zone that is at least
    /// `at_least` (`turn_deadline_min`) after the wait begins.
    AtTimeOfDay { at: NaiveTime, at_least: TimeDelta },
}

/// `missed_turn`: what the server does when a deadline passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissedTurn {
    /// The side's wait ends as posted so far: its turn ends, or the default answer is given
    /// (docs/rules/short-acw.md, "Deadlines").
    #[default]
    EndTurn,
    /// Nothing is decided: the wait is marked overdue and the moderator carries the game on.
    Moderator,
}

impl MissedTurn {
    pub fn as_str(self) -> &'static str {
        match self {
            MissedTurn::EndTurn => "end_turn",
            MissedTurn::Moderator => "moderator",
        }
    }
}

/// A campaign's deadlines, from its settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadlines {
    pub limit: Limit,
    pub missed: MissedTurn,
}

impl Deadlines {
    /// When a wait that begins at `since` runs out, on a clock in `zone`.
    pub fn due(&self, since: DateTime<Utc>, zone: chrono_tz::Tz) -> DateTime<Utc> {
        match self.limit {
            Limit::After(length) => since + length,
            Limit::AtTimeOfDay { at, at_least } => {
                let earliest = since + at_least;
                let mut day = earliest.with_timezone(&zone).date_naive();
                loop {
                    // A time of day that a clock change skips is read as the first time after it.
                    let local = day.and_time(at);
                    let found = zone.from_local_datetime(&local).earliest().or_else(|| {
                        (1..=180).find_map(|minutes| {
                            zone.from_local_datetime(&(local + TimeDelta::minutes(minutes))).earliest()
                        })
                    });
                    if let Some(found) = found.map(|t| t.with_timezone(&Utc)).filter(|t| *t >= earliest) {
                        return found;
                    }
                    match day.succ_opt() {
                        Some(next) => day = next,
                        None => return earliest,
                    }
                }
            }
        }
    }
}

/// The clock of a campaign with deadlines (or one that has been paused), kept in its state.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TurnClock {
    /// What the game waits for now, from whom, since when and until when.
    pub waits: Vec<Wait>,
    /// Set while the moderator has paused the campaign.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<Paused>,
}

/// One thing the game waits for from one side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wait {
    pub side: Side,
    /// `deployment`, `turn 3` or `battle 2: casualty_order`: the wait's name, the same for as
    /// long as it lasts.
    pub stage: String,
    /// The post kind that ends the wait (`deploy`, `end_turn`, or the battle's answer).
    pub kind: String,
    /// When the wait began: the stamp of the post that began it (the campaign's creation for
    /// the deployment).
    pub since: DateTime<Utc>,
    /// The deadline, while the wait's clock runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<DateTime<Utc>>,
    /// The milliseconds left, while the wait's clock is stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_ms: Option<i64>,
    /// The deadline passed under `missed_turn: "moderator"`: nothing was decided, and nothing
    /// will be until the moderator or the player posts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overdue: bool,
    /// The reminders posted before this deadline, by how long before it (milliseconds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reminded: Vec<i64>,
}

/// A pause: since when, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paused {
    pub since: DateTime<Utc>,
    pub reason: String,
}

impl TurnClock {
    /// The earliest deadline still to come (none while paused or when every wait is stopped).
    pub fn next_due(&self) -> Option<&Wait> {
        self.waits.iter().filter(|w| w.due.is_some()).min_by_key(|w| (w.due, w.side, w.stage.clone()))
    }

    /// Whether a deadline passed and the moderator has not yet carried the game on.
    pub fn overdue(&self) -> bool {
        self.waits.iter().any(|w| w.overdue)
    }
}

/// The waits of `state`: each side's deployment, the player turn, or the battle's answers; with
/// whether each one's clock runs.
fn live(state: &GameState) -> Vec<(Side, String, String, bool)> {
    let mut out: Vec<(Side, String, String, bool)> = state
        .awaiting
        .iter()
        .map(|a| {
            let stage = match (a.kind.as_str(), &state.battle) {
                ("deploy", _) => "deployment".to_owned(),
                ("end_turn", _) => format!("turn {}", state.turn),
                (kind, Some(b)) => format!("battle {}: {kind}", b.number),
                (kind, None) => kind.to_owned(),
            };
            (a.side, stage, a.kind.clone(), true)
        })
        .collect();
    if let (Some(side), Some(_)) = (state.side_to_act, &state.battle) {
        // The acting side's turn goes on once the battle is over; its clock waits meanwhile.
        if state.result.is_none() {
            out.push((side, format!("turn {}", state.turn), "end_turn".to_owned(), false));
        }
    }
    out
}

/// The clock after a post stamped `at`: waits that go on keep their start and deadline, new
/// ones start now, finished ones are gone; a wait whose clock stops keeps the time it had left,
/// and one whose clock starts again runs for that time from now.
pub fn follow(
    before: Option<&TurnClock>,
    state: &GameState,
    deadlines: &Deadlines,
    zone: chrono_tz::Tz,
    at: DateTime<Utc>,
) -> TurnClock {
    let paused = before.and_then(|c| c.paused.clone());
    let waits = live(state)
        .into_iter()
        .map(|(side, stage, kind, runs)| {
            let runs = runs && paused.is_none();
            let old = before.and_then(|c| c.waits.iter().find(|w| w.side == side && w.stage == stage));
            match old {
                Some(old) => {
                    let mut wait = old.clone();
                    match (wait.due, wait.remaining_ms, runs) {
                        (Some(due), _, false) => {
                            wait.remaining_ms = Some((due - at).num_milliseconds().max(0));
                            wait.due = None;
                        }
                        (None, Some(left), true) => {
                            wait.due = Some(at + TimeDelta::milliseconds(left));
                            wait.remaining_ms = None;
                            // A new deadline: its reminders are still to come.
                            wait.reminded.clear();
                        }
                        _ => {}
                    }
                    wait
                }
                None => {
                    let due = deadlines.due(at, zone);
                    Wait {
                        side,
                        stage,
                        kind,
                        since: at,
                        due: runs.then_some(due),
                        remaining_ms: (!runs).then(|| (due - at).num_milliseconds()),
                        overdue: false,
                        reminded: vec![],
                    }
                }
            }
        })
        .collect();
    TurnClock { waits, paused }
}

/// The clock of a campaign before any post: both sides' deployments, begun when the campaign
/// was created.
pub fn start(state: &GameState, deadlines: &Deadlines, zone: chrono_tz::Tz, created: DateTime<Utc>) -> TurnClock {
    follow(None, state, deadlines, zone, created)
}

/// Keeps the clock of a state after a post, when the campaign has deadlines (or a clock: a
/// pause without deadlines), and names the deadline in the outcome of a turn's beginning.
pub(crate) fn keep(
    before: &GameState,
    next: &mut GameState,
    settings: &Settings,
    at: DateTime<Utc>,
    out: &mut [Outcome],
) {
    let Some(deadlines) = settings.deadlines else {
        if let Some(clock) = &before.clock {
            next.clock = Some(TurnClock { waits: vec![], paused: clock.paused.clone() });
        }
        return;
    };
    let clock = follow(before.clock.as_ref(), next, &deadlines, settings.clock.zone, at);
    for outcome in out.iter_mut() {
        let OutcomeData::TurnBegins(begins) = &mut outcome.data else { continue };
        let stage = format!("turn {}", begins.turn);
        let wait = clock.waits.iter().find(|w| w.side == begins.side && w.stage == stage);
        if let Some(due) = wait.and_then(|w| w.due) {
            begins.deadline = Some(due);
            outcome.headline.push_str(&format!("; the turn ends by {}", in_words(due, settings.clock.zone)));
        }
    }
    next.clock = Some(clock);
}

/// A deadline as players read it: in the campaign's zone, with the zone's abbreviation.
pub fn in_words(at: DateTime<Utc>, zone: chrono_tz::Tz) -> String {
    at.with_timezone(&zone).format("%a %-d %b %Y %H:%M %Z").to_string()
}

/// The moderator pauses the campaign: every clock stops and keeps the time it had left.
pub fn pause(state: &GameState, at: DateTime<Utc>, reason: &str) -> Result<GameState, Refusal> {
    let mut next = state.clone();
    let clock = next.clock.get_or_insert_with(TurnClock::default);
    if let Some(paused) = &clock.paused {
        return Err(Refusal::new(
            "kind",
            "clock.paused",
            format!("the campaign is already paused (since {}: {})", paused.since.to_rfc3339(), paused.reason),
        ));
    }
    for wait in &mut clock.waits {
        if let Some(due) = wait.due.take() {
            wait.remaining_ms = Some((due - at).num_milliseconds().max(0));
        }
    }
    clock.paused = Some(Paused { since: at, reason: reason.to_owned() });
    Ok(next)
}

/// The moderator resumes the campaign: each running wait has the time it had left when paused.
pub fn resume(state: &GameState, settings: &Settings, at: DateTime<Utc>) -> Result<GameState, Refusal> {
    let mut next = state.clone();
    let Some(clock) = next.clock.as_mut().filter(|c| c.paused.is_some()) else {
        return Err(Refusal::new("kind", "clock.not_paused", "the campaign is not paused"));
    };
    clock.paused = None;
    if let Some(deadlines) = settings.deadlines {
        let before = clock.clone();
        next.clock = Some(follow(Some(&before), state, &deadlines, settings.clock.zone, at));
    }
    Ok(next)
}

/// The moderator gives more time: every deadline still to come (of `side` only, if named) moves
/// `by` later; an overdue wait gets `by` from now.
pub fn extend(
    state: &GameState,
    side: Option<Side>,
    by: TimeDelta,
    at: DateTime<Utc>,
) -> Result<(GameState, Vec<ExtendedWait>), Refusal> {
    let mut next = state.clone();
    let mut moved = vec![];
    for wait in next.clock.iter_mut().flat_map(|c| c.waits.iter_mut()).filter(|w| side.is_none_or(|s| w.side == s)) {
        wait.reminded.clear();
        if let Some(due) = wait.due.as_mut() {
            *due += by;
        } else if let Some(left) = wait.remaining_ms.as_mut() {
            *left += by.num_milliseconds();
        } else if wait.overdue {
            wait.overdue = false;
            wait.due = Some(at + by);
        }
        moved.push(ExtendedWait {
            side: wait.side,
            stage: wait.stage.clone(),
            due: wait.due,
            remaining_ms: wait.remaining_ms,
        });
    }
    if moved.is_empty() {
        return Err(Refusal::new(
            "body.side",
            "clock.nothing_waits",
            match side {
                Some(side) => format!("the game is not waiting for the {side}: there is no deadline to extend"),
                None => "the game is not waiting for anyone: there is no deadline to extend".to_owned(),
            },
        ));
    }
    Ok((next, moved))
}

/// When the reminders before a wait's deadline go, `leads` before it: those still to post, each
/// after the wait began, as (time, lead).
pub fn reminders(wait: &Wait, leads: &[TimeDelta]) -> Vec<(DateTime<Utc>, TimeDelta)> {
    let Some(due) = wait.due else { return vec![] };
    leads
        .iter()
        .filter(|lead| **lead > TimeDelta::zero())
        .filter(|lead| due - **lead > wait.since && !wait.reminded.contains(&lead.num_milliseconds()))
        .map(|lead| (due - *lead, *lead))
        .collect()
}

/// The server's post before a deadline: the wait of `side` named `stage` ends in `lead`. Posted
/// once per lead and deadline, from `lead` before the deadline until it.
pub fn remind(
    state: &GameState,
    settings: &Settings,
    at: DateTime<Utc>,
    side: Side,
    stage: &str,
    lead: TimeDelta,
) -> Result<Applied, Refusal> {
    if settings.deadlines.is_none() {
        return Err(Refusal::new("kind", "deadline.none", "the campaign has no deadlines"));
    }
    let mut next = state.clone();
    let clock = next.clock.get_or_insert_with(TurnClock::default);
    if clock.paused.is_some() {
        return Err(Refusal::new("kind", "clock.paused", "the campaign is paused: no deadline runs"));
    }
    let Some(wait) = clock.waits.iter_mut().find(|w| w.side == side && w.stage == stage) else {
        return Err(Refusal::new(
            "body.stage",
            "deadline.not_waiting",
            format!("the game is not waiting for the {side}'s {stage}"),
        ));
    };
    let Some(due) = wait.due.filter(|due| *due - lead <= at && at < *due) else {
        return Err(Refusal::new(
            "body.lead_ms",
            "deadline.not_due",
            format!(
                "a reminder {} ms before the deadline of the {side}'s {stage} is not due now",
                lead.num_milliseconds()
            ),
        ));
    };
    if lead <= TimeDelta::zero() || wait.reminded.contains(&lead.num_milliseconds()) {
        return Err(Refusal::new(
            "body.lead_ms",
            "deadline.reminded",
            "that reminder was posted before (or is no reminder)",
        ));
    }
    wait.reminded.push(lead.num_milliseconds());
    let since = wait.since;
    // The time left as it is when posted (a reminder due while the campaign was paused, say,
    // goes when it resumes, with less time left than its lead).
    let left = TimeDelta::minutes(((due - at).num_milliseconds() + 59_999) / 60_000);
    let headline =
        format!("The {side}'s {stage} ends in {}, at {}", lead_in_words(left), in_words(due, settings.clock.zone));
    let data = DeadlineNear { side, stage: stage.to_owned(), since, due, lead_ms: lead.num_milliseconds() };
    Ok(Applied { state: next, outcomes: vec![Outcome::new(headline, data)] })
}

/// A lead time in words: "24 hours", "1 hour", "90 minutes".
pub fn lead_in_words(lead: TimeDelta) -> String {
    let (n, unit) = match lead.num_minutes() {
        m if m > 0 && m % 1440 == 0 => (m / 1440, "day"),
        m if m > 0 && m % 60 == 0 => (m / 60, "hour"),
        m => (m, "minute"),
    };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

/// The server's post at a deadline: the wait of `side` named `stage` has run out by `at`. Under
/// `missed_turn: "end_turn"` the side's wait ends with the default (docs/rules/short-acw.md,
/// "Deadlines"); under `"moderator"` nothing is decided and the wait is marked overdue.
pub fn missed(
    scenario: &Scenario,
    state: &GameState,
    settings: &Settings,
    at: DateTime<Utc>,
    side: Side,
    stage: &str,
) -> Result<Applied, Refusal> {
    let Some(deadlines) = settings.deadlines else {
        return Err(Refusal::new("kind", "deadline.none", "the campaign has no deadlines"));
    };
    let clock = state.clock.clone().unwrap_or_default();
    if clock.paused.is_some() {
        return Err(Refusal::new("kind", "clock.paused", "the campaign is paused: no deadline runs"));
    }
    let Some(wait) = clock.waits.iter().find(|w| w.side == side && w.stage == stage).cloned() else {
        return Err(Refusal::new(
            "body.stage",
            "deadline.not_waiting",
            format!("the game is not waiting for the {side}'s {stage}"),
        ));
    };
    let Some(due) = wait.due.filter(|due| *due <= at) else {
        return Err(Refusal::new(
            "body.stage",
            "deadline.not_due",
            match wait.due {
                Some(due) => format!("the {side}'s {stage} runs until {}", due.to_rfc3339()),
                None => format!("the clock of the {side}'s {stage} is stopped"),
            },
        ));
    };
    let zone = settings.clock.zone;
    let mut data = MissedWait {
        side,
        stage: stage.to_owned(),
        kind: wait.kind.clone(),
        since: wait.since,
        due,
        policy: deadlines.missed.as_str().to_owned(),
        turn_deadline_ms: None,
        turn_deadline_at: None,
        turn_deadline_min_ms: None,
    };
    match deadlines.limit {
        Limit::After(length) => data.turn_deadline_ms = Some(length.num_milliseconds()),
        Limit::AtTimeOfDay { at: time, at_least } => {
            data.turn_deadline_at = Some(time.format("%H:%M").to_string());
            data.turn_deadline_min_ms = Some(at_least.num_milliseconds());
        }
    }
    let when = in_words(due, zone);
    if deadlines.missed == MissedTurn::Moderator {
        let mut next = state.clone();
        if let Some(w) =
            next.clock.as_mut().and_then(|c| c.waits.iter_mut().find(|w| w.side == side && w.stage == stage))
        {
            w.due = None;
            w.overdue = true;
        }
        let outcome = Outcome::new(
            format!("The {side}'s deadline for {stage} passed at {when}: the moderator decides what happens"),
            DeadlineLeftToModerator { wait: data },
        );
        return Ok(Applied { state: next, outcomes: vec![outcome] });
    }
    let default = default_order(scenario, state, settings, side, &wait.kind, at);
    let (mut applied, what) = match default {
        Default::Order { kind, body, what } => {
            let order = Order { seq: 0, side: Some(side), kind, body: &body, stamp: at, settings, sealed: None };
            (orders::apply_as(scenario, state, &order, true)?, what)
        }
        Default::CancelAttack => {
            let mut next = state.clone();
            let number = next.battle.as_ref().map_or(0, |b| b.number);
            next.battle = None;
            let mut out = vec![Outcome::new(
                format!("Battle {number}: the {side} did not fix the result number by the deadline; the attack is cancelled"),
                AttackCancelled { battle: number, side },
            )];
            orders::finish(scenario, state, &mut next, settings, at, &mut out);
            (Applied { state: next, outcomes: out }, "the attack is cancelled".to_owned())
        }
    };
    let headline = format!("The {side}'s deadline for {stage} passed at {when}: {what}");
    applied.outcomes.insert(0, Outcome::new(headline, DeadlinePassed { wait: data, applied: what }));
    Ok(applied)
}

/// What a missed wait becomes.
enum Default {
    Order { kind: &'static str, body: Value, what: String },
    CancelAttack,
}

fn default_order(
    scenario: &Scenario,
    state: &GameState,
    settings: &Settings,
    side: Side,
    kind: &str,
    at: DateTime<Utc>,
) -> Default {
    match kind {
        "deploy" => Default::Order {
            kind: "deploy",
            body: json!({"placements": default_deployment(scenario, state, side)}),
            what: "its units are placed by the default deployment".to_owned(),
        },
        "cavalry_option" => Default::Order {
            kind: "cavalry_option",
            body: json!({"retreat": false}),
            what: "the cavalry stand".to_owned(),
        },
        "casualty_order" => Default::Order {
            kind: "casualty_order",
            body: json!({"order": []}),
            what: "casualties are taken in the default order (largest first)".to_owned(),
        },
        "retreat" => Default::Order {
            kind: "retreat",
            body: json!({"paths": default_retreat(scenario, state, settings, side, at)}),
            what: "the units retreat by the default paths".to_owned(),
        },
        "resolve_attack" => Default::CancelAttack,
        _ => Default::Order { kind: "end_turn", body: json!({}), what: "its player turn ends as posted".to_owned() },
    }
}

/// Each unit of the side, in the scenario's order, in the first hex of its deployment zone (in
/// hex-number order) that the enemy does not hold (its sealed deployment included) and that has
/// room for it.
fn default_deployment(scenario: &Scenario, state: &GameState, side: Side) -> Vec<Value> {
    let zone = scenario.deployment_zone(side);
    let mut placed: Vec<(String, super::hex::Hex, bool)> = vec![];
    let mut out = vec![];
    for unit in state.units.iter().filter(|u| u.side == side && !u.eliminated) {
        let counts = unit.arm.counts_for_stacking();
        let room = |hex: super::hex::Hex| {
            !counts
                || (state.stacking_count(hex) as usize + placed.iter().filter(|(_, h, c)| *h == hex && *c).count())
                    < scenario.movement.stacking_limit as usize
        };
        // The enemy's sealed deployment counts: it is on the map once this one is in.
        let sealed = |hex: super::hex::Hex| {
            state
                .sealed_deployment
                .as_ref()
                .is_some_and(|s| s.side != side && s.placements.iter().any(|(_, h)| *h == hex))
        };
        let open = |hex: super::hex::Hex| state.occupant(hex) != Some(side.other()) && !sealed(hex);
        if let Some(hex) = zone.iter().copied().find(|h| open(*h) && room(*h)) {
            placed.push((unit.id.clone(), hex, counts));
            out.push(json!({"unit": unit.id, "hex": hex}));
        }
    }
    out
}

/// The retreat the rules accept first, trying for each retreating unit in turn: 1-hex paths, then
/// 2-hex paths, each in hex-number order, those ending away from the enemy first; and last no
/// path (elimination), which the rules accept only where no legal retreat is left.
fn default_retreat(
    scenario: &Scenario,
    state: &GameState,
    settings: &Settings,
    side: Side,
    at: DateTime<Utc>,
) -> Vec<Value> {
    let Some(battle) = &state.battle else { return vec![] };
    let units = battle.retreating.clone();
    let mut choices: Vec<Vec<Vec<super::hex::Hex>>> = vec![];
    for id in &units {
        let Some(from) = state.unit(id).and_then(|u| u.hex) else {
            choices.push(vec![vec![]]);
            continue;
        };
        let mut paths: Vec<Vec<super::hex::Hex>> = vec![];
        for first in scenario.neighbours(from) {
            paths.push(vec![first]);
        }
        for first in scenario.neighbours(from) {
            for second in scenario.neighbours(first) {
                if second != from {
                    paths.push(vec![first, second]);
                }
            }
        }
        let end_next_to_enemy =
            |p: &Vec<super::hex::Hex>| p.last().is_some_and(|h| state.enemy_next_to(scenario, *h, side).is_some());
        paths.sort_by_key(|p| (end_next_to_enemy(p), p.len()));
        paths.push(vec![]);
        choices.push(paths);
    }
    let body = |picked: &[usize]| -> Vec<Value> {
        units
            .iter()
            .zip(picked)
            .zip(&choices)
            .map(|((unit, i), paths)| json!({"unit": unit, "path": paths[*i]}))
            .collect()
    };
    let accepted = |picked: &[usize]| {
        let body = json!({"paths": body(picked)});
        let order = Order { seq: 0, side: Some(side), kind: "retreat", body: &body, stamp: at, settings, sealed: None };
        orders::apply(scenario, state, &order).is_ok()
    };
    // Depth first over the units' choices, at most a bounded number of tries.
    let mut picked = vec![0usize; units.len()];
    let mut tries = 0;
    loop {
        tries += 1;
        if accepted(&picked) || tries > 20_000 {
            return body(&picked);
        }
        // The next combination, the last unit's choice turning fastest.
        let mut i = units.len();
        loop {
            if i == 0 {
                return body(&vec![0; units.len()].iter().zip(&choices).map(|(_, c)| c.len() - 1).collect::<Vec<_>>());
            }
            i -= 1;
            picked[i] += 1;
            if picked[i] < choices[i].len() {
                break;
            }
            picked[i] = 0;
        }
    }
}
