//! The bot's side of Adjutant's API: the outcome feed, the acknowledgement that moves the feed
//! on (an acknowledged outcome is never served again; one left unacknowledged is served again
//! next run), and the map pictures some outcomes carry.

use reqwest::Method;
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use crate::http::Http;
use crate::{BotError, TURN_KINDS};

/// An outcome as the feed serves it.
#[derive(Debug, Deserialize)]
pub(crate) struct FeedOutcome {
    pub(crate) id: Uuid,
    pub(crate) campaign_id: Uuid,
    pub(crate) position: i64,
    /// The post it came from: the map attached is the map as it stood after that post.
    #[serde(default)]
    pub(crate) seq: Option<i64>,
    pub(crate) kind: String,
    pub(crate) text: FeedText,
    /// The player to tell, on an outcome that begins their turn (the server names them).
    #[serde(default)]
    pub(crate) mention: Option<Mention>,
}

impl FeedOutcome {
    /// Whether the outcome opens a turn, and so may carry the map.
    fn opens_turn(&self) -> bool {
        TURN_KINDS.contains(&self.kind.as_str())
    }
}

/// Whom to mention with an outcome, as the server's feed names them.
#[derive(Debug, Deserialize)]
pub(crate) struct Mention {
    #[serde(default)]
    pub(crate) forum_handle: Option<String>,
    #[serde(default)]
    pub(crate) discord_user_id: Option<String>,
}

/// An outcome's text in each markup the server writes.
#[derive(Debug, Deserialize)]
pub(crate) struct FeedText {
    pub(crate) bbcode: String,
    pub(crate) markdown: String,
}

#[derive(Debug, Deserialize)]
struct Feed {
    outcomes: Vec<FeedOutcome>,
}

/// Adjutant as the bot calls it: its address and the bot's token.
#[derive(Clone, Copy)]
pub(crate) struct Adjutant<'a> {
    pub(crate) http: &'a Http,
    pub(crate) url: &'a str,
    pub(crate) token: &'a str,
}

impl Adjutant<'_> {
    /// Up to `limit` unacknowledged outcomes, in the order they are to be delivered.
    pub(crate) async fn feed(&self, limit: i64) -> Result<Vec<FeedOutcome>, BotError> {
        let feed: Feed =
            self.call(Method::GET, &format!("/v1/bot/feed?limit={limit}"), None, "reading the feed").await?;
        Ok(feed.outcomes)
    }

    /// Tells Adjutant the outcome is delivered, under what the forum calls it.
    pub(crate) async fn acknowledge(&self, outcome: &FeedOutcome, post_id: &str) -> Result<(), BotError> {
        let path = format!("/v1/campaigns/{}/outcomes/{}/ack", outcome.campaign_id, outcome.id);
        let _: Value = self.call(Method::POST, &path, Some(json!({"forum_post_id": post_id})), "acknowledging").await?;
        Ok(())
    }

    /// The campaign's map picture as it stood after post `seq` (`…/map.png?at=seq`), so an
    /// outcome posted late still shows the map of its own moment; without it, the map now.
    pub(crate) async fn map_png_at(&self, campaign: Uuid, seq: Option<i64>) -> Result<Vec<u8>, BotError> {
        let at = seq.map(|seq| format!("?at={seq}")).unwrap_or_default();
        let url = format!("{}/v1/campaigns/{campaign}/map.png{at}", self.url);
        let png =
            self.http.send_raw("reading the map", || self.http.client().get(&url).bearer_auth(self.token)).await?;
        if !png.starts_with(b"\x89PNG\r\n\x1a\n") {
            return Err(BotError::Other("reading the map: the answer is not a PNG".into()));
        }
        Ok(png)
    }

    async fn call<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        what: &str,
    ) -> Result<T, BotError> {
        let url = format!("{}{path}", self.url);
        self.http
            .send_json(what, body.as_ref(), || self.http.client().request(method.clone(), &url).bearer_auth(self.token))
            .await
    }
}

/// The map pictures the targets attach: to the outcome that opens each turn, when the bot is
/// set to attach maps.
#[derive(Clone, Copy)]
pub(crate) struct Maps<'a> {
    pub(crate) adjutant: Adjutant<'a>,
    pub(crate) attach: bool,
}

impl Maps<'_> {
    /// The map the outcome carries, as it stood after the outcome's post; none for an
    /// outcome that does not open a turn, or with maps off.
    pub(crate) async fn for_outcome(&self, outcome: &FeedOutcome) -> Result<Option<Vec<u8>>, BotError> {
        if !(self.attach && outcome.opens_turn()) {
            return Ok(None);
        }
        self.adjutant.map_png_at(outcome.campaign_id, outcome.seq).await.map(Some)
    }
}
