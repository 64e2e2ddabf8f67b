//! Campaigns to post to, made through the server's API as a moderator would.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::load::client;
use crate::{Error, Result};

pub struct Game {
    pub campaign: String,
    pub players: Vec<String>,
}

async fn created(client: &reqwest::Client, url: String, token: &str, body: Value) -> Result<Value> {
    let response = client.post(&url).bearer_auth(token).json(&body).send().await?;
    let status = response.status();
    let text = response.text().await?;
    if status.as_u16() != 201 {
        return Err(format!("{url}: {status} {text}").into());
    }
    Ok(serde_json::from_str(&text)?)
}

async fn moderator(client: &reqwest::Client, base: &str, admin: &str) -> Result<String> {
    let moderator = created(client, format!("{base}/v1/moderators"), admin, json!({"name": "Bench"})).await?;
    Ok(moderator["token"].as_str().ok_or("no token")?.to_owned())
}

pub async fn game(base: &str, admin: &str, name: &str) -> Result<Game> {
    let client = client()?;
    let moderator = moderator(&client, base, admin).await?;
    campaign(&client, base, &moderator, name).await
}

/// A resolver campaign of the moderator's, with a player on each side.
async fn campaign(client: &reqwest::Client, base: &str, moderator: &str, name: &str) -> Result<Game> {
    let body = json!({"name": name, "mode": "resolver", "ruleset": RULESET});
    let campaign = created(client, format!("{base}/v1/campaigns"), moderator, body).await?;
    let campaign = campaign["id"].as_str().ok_or("no id")?.to_owned();
    let mut players = Vec::new();
    for side in ["union", "confederate"] {
        let body = json!({"name": side, "side": side});
        let player = created(client, format!("{base}/v1/campaigns/{campaign}/players"), moderator, body).await?;
        players.push(player["token"].as_str().ok_or("no token")?.to_owned());
    }
    Ok(Game { campaign, players })
}

/// The campaigns measured are resolver campaigns of this ruleset: every post rolls dice.
pub const RULESET: &str = "acw-25mm";

/// A post that rolls a die and reads a table: a formation fail test, its class varying.
pub fn order(client: usize, i: u64) -> Value {
    json!({"kind": "resolve", "body": {"action": "formation_test", "inputs": {"class": CLASSES[(client + i as usize) % 4]}}})
}

const CLASSES: [&str; 4] = ["A", "B", "C", "D"];

/// Requests creating the campaigns at once.
const CREATORS: usize = 8;

/// `n` resolver campaigns of one moderator, created through the API, in order.
pub async fn campaigns(base: &str, admin: &str, n: usize) -> Result<Vec<Game>> {
    let client = client()?;
    let moderator = Arc::new(moderator(&client, base, admin).await?);
    let next = Arc::new(AtomicUsize::new(0));
    let mut creators = Vec::new();
    for _ in 0..CREATORS {
        let (client, base, moderator, next) = (client.clone(), base.to_owned(), moderator.clone(), next.clone());
        creators.push(tokio::spawn(async move {
            let mut made = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return Ok::<_, Error>(made);
                }
                made.push((i, campaign(&client, &base, &moderator, &format!("Scale {i}")).await?));
            }
        }));
    }
    let mut games = Vec::with_capacity(n);
    for creator in creators {
        games.extend(creator.await??);
    }
    games.sort_by_key(|(i, _)| *i);
    Ok(games.into_iter().map(|(_, game)| game).collect())
}

/// How the server wrote its batches (`GET /healthz`).
#[derive(Clone, Copy, Default)]
pub struct Batches {
    /// The most posts one commit carried.
    pub largest: u64,
    /// Batches written one by one, each post in a savepoint, rather than together. The bench's
    /// posts (new keys, nothing refused) go one by one only when a statement of the batch failed
    /// (a deadlock or a serialization failure on a busy database): the run's figures then hold
    /// that slower path, so the count is reported beside them, and the server's log says why.
    pub one_by_one: u64,
}

pub async fn batches(base: &str) -> Result<Batches> {
    let health: Value = client()?.get(format!("{base}/healthz")).send().await?.json().await?;
    let one_by_one = health["batches_one_by_one"].as_u64().ok_or("GET /healthz has no batches_one_by_one")?;
    if one_by_one > 0 {
        eprintln!("   the server wrote {one_by_one} batches one by one, not together: see its log");
    }
    Ok(Batches { largest: health["largest_batch"].as_u64().unwrap_or(0), one_by_one })
}
