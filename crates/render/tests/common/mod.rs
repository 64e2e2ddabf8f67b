//! The scripted campaign replayed through `apply`.
#![allow(dead_code)]

use adjutant_rules::short_acw::{apply, GameState, Order, Outcome, Scenario, Settings};
use adjutant_rules::Side;
use chrono::{DateTime, Utc};
use serde_json::Value;

#[derive(serde::Deserialize)]
pub struct Post {
    pub side: Option<Side>,
    pub kind: String,
    pub body: Value,
    pub stamp: DateTime<Utc>,
}

/// The state after the script's first `posts` posts, and every outcome so far.
pub fn replay(posts: usize) -> (Scenario, GameState, Vec<Outcome>) {
    let script: Vec<Post> =
        serde_json::from_str(include_str!("../../../rules/tests/data/short_acw_script.json")).expect("script");
    let scenario = Scenario::short_acw();
    let settings = Settings::default();
    let mut state = GameState::new(&scenario);
    let mut outcomes = vec![];
    for (i, p) in script.iter().take(posts).enumerate() {
        let order = Order {
            seq: i as u64 + 1,
            side: p.side,
            kind: &p.kind,
            body: &p.body,
            stamp: p.stamp,
            settings: &settings,
            sealed: None,
        };
        let applied = apply(&scenario, &state, &order).unwrap_or_else(|r| panic!("post {} refused: {r}", i + 1));
        state = applied.state;
        outcomes.extend(applied.outcomes);
    }
    (scenario, state, outcomes)
}
