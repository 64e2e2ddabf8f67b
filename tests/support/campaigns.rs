//! The shapes of set-up the tests repeat: a managed Short ACW game with a moderator and a
//! player per side, and a resolver table with the same cast. Each owns its server, so a test
//! can stop it (drop the app) and start another on the same database.

use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::TestApp;

/// The Short ACW Campaign played from deployment to a Major Union Victory (the rules crate's test
/// data): each step's side, stamp, kind and body.
pub fn short_acw_script() -> &'static [Value] {
    static SCRIPT: OnceLock<Vec<Value>> = OnceLock::new();
    SCRIPT.get_or_init(|| {
        serde_json::from_str(include_str!("../../crates/rules/tests/data/short_acw_script.json")).expect("the script")
    })
}

/// Step `i` of the script as the post that makes it: its kind and body.
pub fn scripted(i: usize) -> Value {
    let step = &short_acw_script()[i];
    json!({"kind": step["kind"], "body": step["body"]})
}

/// A managed Short ACW campaign on a server of its own: the moderator who made it, and a player
/// of each side (their tokens).
pub struct Game {
    pub app: TestApp,
    pub moderator: String,
    pub campaign: String,
    pub union: String,
    pub confederate: String,
    /// The scripted campaign `step` plays.
    pub script: &'static [Value],
}

impl Game {
    /// A new moderator on `app` creates the campaign `name` with `settings` and issues a player
    /// for the Union, then one for the Rebels.
    pub async fn start(app: TestApp, name: &str, settings: Value) -> Self {
        let moderator = app.moderator().await;
        let body = json!({"name": name, "mode": "managed", "scenario": "short-acw", "settings": settings});
        let campaign = app.campaign(&moderator, body).await;
        let union = app.player(&moderator, &campaign, "union").await;
        let confederate = app.player(&moderator, &campaign, "confederate").await;
        Self { app, moderator, campaign, union, confederate, script: short_acw_script() }
    }

    /// The token of `side`'s player.
    pub fn token(&self, side: &str) -> &str {
        match side {
            "union" => &self.union,
            _ => &self.confederate,
        }
    }

    /// Posts script step `i` (0-based) as its side, at its stamp; the stored post.
    pub async fn step(&self, i: usize) -> Value {
        let step = &self.script[i];
        self.app.clock.set(step["stamp"].as_str().expect("a stamp").parse().expect("an RFC 3339 stamp"));
        let answer =
            self.app.post(self.token(step["side"].as_str().expect("a side")), &self.campaign, scripted(i)).await;
        assert_eq!(answer.status.as_u16(), 201, "step {}: {}", i + 1, answer.text);
        answer.body
    }

    /// The campaign as anyone reads it (`GET /v1/campaigns/{id}`).
    pub async fn view(&self) -> Value {
        self.app.get(&format!("/v1/campaigns/{}", self.campaign)).await.ok(200).clone()
    }

    /// The game's state now.
    pub async fn state(&self) -> Value {
        self.app.get(&format!("/v1/campaigns/{}/state", self.campaign)).await.ok(200)["state"].clone()
    }
}

/// A resolver campaign (a table for one ruleset's dice) on a server of its own: the moderator
/// who made it, and a player of each side (their tokens).
pub struct Table {
    pub app: TestApp,
    pub moderator: String,
    pub campaign: String,
    pub union: String,
    pub confederate: String,
}

impl Table {
    /// A new moderator on `app` creates the campaign `name` for `ruleset` and issues a player for
    /// the Union, then one for the Rebels.
    pub async fn open(app: TestApp, name: &str, ruleset: &str) -> Self {
        let moderator = app.moderator().await;
        let campaign = app.campaign(&moderator, json!({"name": name, "mode": "resolver", "ruleset": ruleset})).await;
        let union = app.player(&moderator, &campaign, "union").await;
        let confederate = app.player(&moderator, &campaign, "confederate").await;
        Self { app, moderator, campaign, union, confederate }
    }
}
