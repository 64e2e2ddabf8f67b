//! Discord: a message through the channel's webhook (`POST /webhooks/{id}/{token}?wait=true`),
//! in Discord Markdown, within Discord's limits, mentions off but for the player whose turn
//! begins. Each message posted is written to a journal before it is acknowledged; after a
//! crash the journal's message is read back through the webhook's message endpoint, and counts
//! only if its last line is the outcome's marker.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use adjutant_forum::trailing_marker;
use reqwest::Method;
use serde_json::{json, Value};
use uuid::Uuid;

use super::{Deliver, Delivery};
use crate::feed::{FeedOutcome, Maps};
use crate::http::{multipart, post_id, Http};
use crate::text::discord_body;
use crate::{BotError, DiscordTarget};

/// Posts to one channel's webhook.
pub(crate) struct Discord<'a> {
    http: &'a Http,
    target: &'a DiscordTarget,
    maps: Maps<'a>,
    /// Outcome id → message id, as the journal held it at the start of the run and since.
    journal: HashMap<Uuid, String>,
}

impl<'a> Discord<'a> {
    /// Reads the journal.
    pub(crate) fn open(http: &'a Http, target: &'a DiscordTarget, maps: Maps<'a>) -> Result<Self, BotError> {
        Ok(Self { http, target, maps, journal: read_journal(&target.journal)? })
    }
}

impl Deliver for Discord<'_> {
    async fn deliver(&mut self, outcome: &FeedOutcome) -> Result<Delivery, BotError> {
        if let Some(message_id) = self.journal.get(&outcome.id).cloned() {
            let what = format!("reading back Discord message {message_id}");
            let url = format!("{}/messages/{message_id}", self.target.webhook_url);
            match request::<Value>(self.http, Method::GET, &url, None, &what).await {
                Ok(message) if message["content"].as_str().and_then(trailing_marker) == Some(outcome.id) => {
                    return Ok(Delivery::Recovered(message_id));
                }
                // Deleted in the channel, or not the outcome's: post it (again).
                Ok(_) | Err(BotError::Status { status: 404, .. }) => {}
                Err(e) => return Err(e),
            }
        }
        let body = discord_body(outcome);
        let png = self.maps.for_outcome(outcome).await?;
        let answer = execute_webhook(self.http, &self.target.webhook_url, body, png.as_deref()).await?;
        let id = post_id(&answer["id"])
            .ok_or_else(|| BotError::Other(format!("posting to Discord: Discord answered no message id: {answer}")))?;
        append_journal(&self.target.journal, outcome.id, &id)?;
        self.journal.insert(outcome.id, id.clone());
        Ok(Delivery::Posted(id))
    }
}

/// Discord's "execute webhook" with `wait=true`: the message `body` (JSON), and with
/// `png` the map picture as its attachment (`multipart/form-data`: `payload_json` and
/// `files[0]`). Returns Discord's message.
pub(crate) async fn execute_webhook(
    http: &Http,
    webhook_url: &str,
    mut body: Value,
    png: Option<&[u8]>,
) -> Result<Value, BotError> {
    let what = "posting to Discord";
    let url = format!("{webhook_url}?wait=true");
    let Some(png) = png else {
        return request(http, Method::POST, &url, Some(body), what).await;
    };
    body["attachments"] = json!([{"id": 0, "filename": "map.png", "description": "The map"}]);
    let payload = body.to_string();
    let (content_type, form) =
        multipart(&[("payload_json", None, payload.as_bytes()), ("files[0]", Some(("map.png", "image/png")), png)]);
    http.send(what, || {
        http.client()
            .post(&url)
            .header("Accept", "application/json")
            .header(reqwest::header::CONTENT_TYPE, &content_type)
            .body(form.clone())
    })
    .await
}

async fn request<T: serde::de::DeserializeOwned>(
    http: &Http,
    method: Method,
    url: &str,
    body: Option<Value>,
    what: &str,
) -> Result<T, BotError> {
    http.send_json(what, body.as_ref(), || {
        http.client().request(method.clone(), url).header("Accept", "application/json")
    })
    .await
}

/// The Discord journal: `<outcome id> <message id>` a line.
fn read_journal(path: &Path) -> Result<HashMap<Uuid, String>, BotError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => return Err(BotError::Other(format!("reading the journal {}: {e}", path.display()))),
    };
    Ok(text
        .lines()
        .filter_map(|line| {
            let (outcome, message) = line.trim().split_once(' ')?;
            Some((Uuid::parse_str(outcome).ok()?, message.trim().to_owned()))
        })
        .collect())
}

/// Appends one line to the journal and syncs it to disk before the outcome is acknowledged.
fn append_journal(path: &Path, outcome: Uuid, message: &str) -> Result<(), BotError> {
    let fail = |e: std::io::Error| BotError::Other(format!("writing the journal {}: {e}", path.display()));
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(fail)?;
    file.write_all(format!("{outcome} {message}\n").as_bytes()).map_err(fail)?;
    file.sync_data().map_err(fail)
}
