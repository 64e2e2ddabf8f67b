//! Helpers shared by the Short ACW tests: a campaign driven post by post.
#![allow(dead_code)]

use adjutant_rules::short_acw::{apply, Applied, GameState, Order, Outcome, Scenario, Settings};
use adjutant_rules::{Refusal, Side};
use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::{json, Value};

pub const U: Option<Side> = Some(Side::Union);
pub const R: Option<Side> = Some(Side::Confederate);

/// One post of a log.
#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
pub struct Post {
    pub side: Option<Side>,
    pub kind: String,
    pub body: Value,
    pub stamp: DateTime<Utc>,
}

pub struct Game {
    pub scenario: Scenario,
    pub state: GameState,
    pub settings: Settings,
    pub seq: u64,
    pub clock: DateTime<Utc>,
    pub log: Vec<Post>,
    pub last: Vec<Outcome>,
}

impl Game {
    pub fn new() -> Game {
        Game::with(Scenario::short_acw())
    }

    pub fn with(scenario: Scenario) -> Game {
        let state = GameState::new(&scenario);
        Game {
            scenario,
            state,
            settings: Settings::default(),
            seq: 0,
            clock: Utc.with_ymd_and_hms(2026, 3, 2, 8, 0, 0).unwrap(),
            log: vec![],
            last: vec![],
        }
    }

    /// Posts at the next stamp (a minute and a bit later).
    pub fn post(&mut self, side: Option<Side>, kind: &str, body: Value) -> Result<Applied, Refusal> {
        let stamp = self.clock + Duration::milliseconds(61_001);
        self.post_at(side, kind, body, stamp)
    }

    pub fn post_at(
        &mut self,
        side: Option<Side>,
        kind: &str,
        body: Value,
        stamp: DateTime<Utc>,
    ) -> Result<Applied, Refusal> {
        self.seq += 1;
        let order = Order { seq: self.seq, side, kind, body: &body, stamp, settings: &self.settings, sealed: None };
        let before = self.state.clone();
        let result = apply(&self.scenario, &self.state, &order);
        // `apply` never mutates its input.
        assert_eq!(self.state, before);
        if let Ok(applied) = &result {
            self.clock = stamp;
            self.state = applied.state.clone();
            self.last = applied.outcomes.clone();
            self.log.push(Post { side, kind: kind.to_string(), body, stamp });
        }
        result
    }

    #[track_caller]
    pub fn ok(&mut self, side: Option<Side>, kind: &str, body: Value) -> Vec<Outcome> {
        match self.post(side, kind, body) {
            Ok(a) => a.outcomes,
            Err(r) => panic!("{kind} refused: {r}"),
        }
    }

    /// Asserts a refusal: field, rule and a piece of the sentence.
    #[track_caller]
    pub fn refused(&mut self, side: Option<Side>, kind: &str, body: Value, field: &str, rule: &str, detail: &str) {
        let before = self.state.clone();
        match self.post(side, kind, body) {
            Ok(_) => panic!("{kind} was accepted; expected {rule}"),
            Err(r) => {
                assert_eq!((r.field.as_str(), r.rule.as_str()), (field, rule), "{r}");
                assert!(r.detail.contains(detail), "detail {:?} lacks {detail:?}", r.detail);
            }
        }
        assert_eq!(self.state, before, "a refusal changed the state");
    }

    pub fn hex_of(&self, unit: &str) -> Option<String> {
        self.state.unit(unit).and_then(|u| u.hex).map(|h| h.to_string())
    }

    pub fn factors(&self, unit: &str) -> u32 {
        self.state.unit(unit).map_or(0, |u| u.factors)
    }
}

pub fn script() -> Vec<Post> {
    serde_json::from_str(include_str!("../data/short_acw_script.json")).unwrap()
}

/// A game after the script's first `n` posts.
pub fn scripted(n: usize) -> Game {
    let mut g = Game::new();
    for p in script().into_iter().take(n) {
        if let Err(r) = g.post_at(p.side, &p.kind, p.body.clone(), p.stamp) {
            panic!("script post {} ({}) refused: {r}", g.seq, p.kind);
        }
    }
    g
}

pub fn outcome<'a>(outcomes: &'a [Outcome], kind: &str) -> &'a Outcome {
    outcomes.iter().find(|o| o.kind() == kind).unwrap_or_else(|| panic!("no {kind} outcome in {outcomes:#?}"))
}

pub fn empty() -> Value {
    json!({})
}

/// Answers every awaited battle decision: default casualty orders, standing cavalry, and
/// retreats to the first open neighbour (preferring hexes away from the enemy).
pub fn answer_everything(g: &mut Game) {
    while let Some(a) = g.state.awaiting.first().cloned() {
        if a.kind == "end_turn" {
            return;
        }
        let body = match a.kind.as_str() {
            "retreat" => {
                let battle = g.state.battle.clone().unwrap();
                let mut taken: Vec<adjutant_rules::short_acw::Hex> = vec![];
                let paths: Vec<Value> = battle
                    .retreating
                    .iter()
                    .map(|id| {
                        let unit = g.state.unit(id).unwrap();
                        let from = unit.hex.unwrap();
                        let mut options: Vec<_> = g
                            .scenario
                            .neighbours(from)
                            .into_iter()
                            .filter(|h| g.state.occupant(*h) != Some(unit.side.other()))
                            .filter(|h| {
                                g.state.stacking_count(*h) + (taken.iter().filter(|t| *t == h).count() as u32) < 3
                            })
                            .collect();
                        options.sort_by_key(|h| g.state.enemy_next_to(&g.scenario, *h, unit.side).is_some());
                        let to = options[0];
                        taken.push(to);
                        json!({"unit": id, "path": [to]})
                    })
                    .collect();
                json!({ "paths": paths })
            }
            "cavalry_option" => json!({"retreat": false}),
            _ => json!({}),
        };
        g.ok(Some(a.side), &a.kind, body);
    }
}
