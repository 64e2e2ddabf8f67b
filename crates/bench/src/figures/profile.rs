//! Figure 5: where a post's time goes. The server logs each step's span as it closes; one client
//! posts one after another, so the steps are not waiting on other posts.

use std::path::Path;
use std::time::Instant;

use crate::campaign::{game, order};
use crate::child::start_server_logging;
use crate::load::client;
use crate::Result;

pub const PROFILE_POSTS: u64 = 500;

/// A step of a post, as the server's spans name it, with what it is.
const STEPS: [(&str, &str); 21] = [
    ("request", "the whole request, as the service sees it (body read, JSON, handler, the answer made; its writing to the socket not counted)"),
    ("auth", "the token's principal (kept from an earlier read for at most 5 s; forgotten on every revocation)"),
    (
        "campaign",
        "the campaign's creation record, settings and game: read at its first post, then kept (it never changes)",
    ),
    ("context", "what the verdict reads beyond the tail (nothing for this post)"),
    ("append", "the write transaction, from waiting for the writer to the commit"),
    ("begin", "opening the batch's transaction (SQLite: the writer's `BEGIN IMMEDIATE`)"),
    ("lock_campaign", "the campaign held against other writers (PostgreSQL's row lock; nothing on SQLite)"),
    ("known_key", "the idempotency check, where it is asked apart from the tail (a batch's keys at once)"),
    ("tail", "the tail: the last post, the last snapshot, the last outcome position (once per campaign in a batch), and whether a key of the batch has a record, in one statement; for a campaign a batch of the last 2 s left its tail to, that tail is held and only its webhooks asked (with the keys)"),
    (
        "quota",
        "a player's daily quotas: every quota of a batch's posts counted in one statement (none here: the bench turns quotas off)",
    ),
    ("decide", "the verdict, inside the transaction"),
    ("chain", "the stamp and the SHA-256 link"),
    ("rules", "the rules: the dice, the table and the outcome's JSON"),
    ("sign", "the Ed25519 receipt (a batch's posts signed together, on every core)"),
    ("insert_post", "the batch's rows: its posts, their outcomes and its idempotency records in one call (SQLite: a statement a table)"),
    ("insert_outcome", "the outcomes' rows, where written apart from the posts (a batch written one by one)"),
    ("enqueue_deliveries", "webhook outbox rows (none: this campaign has no webhook, so the step is skipped)"),
    ("remember_key", "the idempotency record, where written apart from the posts (a batch written one by one)"),
    ("commit", "the commit: the durable write"),
    ("void_posts", "after the commit, for a replayed key only: the rollbacks read, for the answer's `void`"),
    ("view", "after the commit: the answer's JSON"),
];

/// Mean time per post of each step, in ms (busy + idle: the wall time the span was open).
pub struct Profile {
    pub posts: u64,
    pub client_p50_ms: f64,
    pub steps: Vec<(&'static str, &'static str, f64, u64)>,
}

fn duration_ms(text: &str) -> Option<f64> {
    let (number, unit) = text.split_at(text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?);
    let value: f64 = number.parse().ok()?;
    Some(match unit {
        "ns" => value / 1e6,
        "µs" => value / 1e3,
        "ms" => value,
        "s" => value * 1e3,
        _ => return None,
    })
}

/// The closing span's name and wall time from one line of the server's log.
fn closed_span(line: &str) -> Option<(String, f64)> {
    let (head, times) = line.split_once(": close ")?;
    let busy = times.split_whitespace().find_map(|t| t.strip_prefix("time.busy="))?;
    let idle = times.split_whitespace().find_map(|t| t.strip_prefix("time.idle="))?;
    let wall = duration_ms(busy)? + duration_ms(idle)?;
    // `request{…}:step{name="append"}:step{name="tail"}: adjutant::post` → the last span.
    let spans = head.rsplit_once(": ")?.0;
    let last = spans.rsplit(':').find(|s| !s.is_empty())?;
    let name = match last.split_once("{name=\"") {
        Some((_, rest)) => rest.trim_end_matches("\"}").to_owned(),
        None => last.split('{').next()?.rsplit(' ').next()?.to_owned(),
    };
    Some((name, wall))
}

pub async fn profile(binary: &Path, dir: &Path, admin: &str) -> Result<Profile> {
    let log = dir.join("spans.log");
    let db = dir.join("profile.db");
    let server = start_server_logging(binary, &format!("sqlite://{}", db.display()), admin, Some(&log)).await?;
    let game = game(&server.base, admin, "Profile").await?;
    let client = client()?;
    let url = format!("{}/v1/campaigns/{}/posts", server.base, game.campaign);
    let mut latencies = Vec::new();
    for i in 0..PROFILE_POSTS {
        let at = Instant::now();
        let answer = client
            .post(&url)
            .bearer_auth(&game.players[0])
            .header("Idempotency-Key", format!("profile-{i}"))
            .json(&order(0, i))
            .send()
            .await?;
        if answer.status().as_u16() != 201 {
            return Err(format!("profile post {i}: {}", answer.status()).into());
        }
        answer.bytes().await?;
        latencies.push(at.elapsed().as_micros() as u64);
    }
    drop(server);
    latencies.sort_unstable();
    let text = std::fs::read_to_string(&log)?;
    // Only the posts' requests: the set-up's requests (moderator, campaign, players) come first.
    let mut totals: std::collections::HashMap<String, (f64, u64)> = std::collections::HashMap::new();
    for line in text.lines().filter(|l| l.contains("uri=/v1/campaigns/") && l.contains("/posts ")) {
        if let Some((name, ms)) = closed_span(line) {
            let entry = totals.entry(name).or_default();
            entry.0 += ms;
            entry.1 += 1;
        }
    }
    let steps = STEPS
        .iter()
        .map(|(name, what)| {
            let (sum, count) = totals.get(*name).copied().unwrap_or_default();
            (*name, *what, sum / PROFILE_POSTS as f64, count)
        })
        .collect();
    Ok(Profile {
        posts: PROFILE_POSTS,
        client_p50_ms: latencies.get(latencies.len() / 2).map_or(f64::NAN, |us| *us as f64 / 1000.0),
        steps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_span_is_read_from_the_server_s_log_line() {
        let step = "2026-11-23T17:22:38.902811Z DEBUG request{method=POST uri=/v1/campaigns/4a93/posts version=HTTP/1.1}:step{name=\"append\"}:step{name=\"tail\"}: adjutant::post: close time.busy=96.7µs time.idle=2.10µs";
        let (name, ms) = closed_span(step).unwrap();
        assert_eq!(name, "tail");
        assert!((ms - 0.0988).abs() < 1e-9, "{ms}");
        let request = "2026-11-23T17:22:38.906228Z DEBUG request{method=POST uri=/v1/campaigns/4a93/posts version=HTTP/1.1}: adjutant::request: close time.busy=3.91ms time.idle=1.31ms";
        let (name, ms) = closed_span(request).unwrap();
        assert_eq!(name, "request");
        assert!((ms - 5.22).abs() < 1e-9, "{ms}");
        assert_eq!(duration_ms("650ns"), Some(0.00065));
        assert_eq!(duration_ms("2.5s"), Some(2500.0));
        assert_eq!(closed_span("2026-11-23T17:22:38Z DEBUG request{}: x: new"), None);
    }
}
