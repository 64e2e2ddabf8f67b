//! Discourse: a reply to the campaign's topic. API (as Discourse publishes it, and as
//! `tests/e2e/bot_contract.rs` checks against that description): `POST /posts.json`
//! `{topic_id, raw}` → `{id, …}`; `GET /t/{topic}.json` → `post_stream.stream` (every post id)
//! and `post_stream.posts`; `GET /t/{topic}/posts.json?post_ids[]=…` → `post_stream.posts`;
//! posts have `id`, `username` and `raw` or `cooked`; `POST /uploads.json` for the map.
//! Requests carry `Api-Key` and `Api-Username`.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use adjutant_forum::{marker, trailing_marker};
use reqwest::Method;
use serde_json::{json, Value};

use super::{Deliver, Delivery};
use crate::feed::{FeedOutcome, Maps};
use crate::http::{multipart, post_id, Http};
use crate::text::{discourse_raw, with_picture, Upload};
use crate::{BotConfig, BotError, Format, Topics};

/// Replies to each campaign's topic, in `format`.
pub(crate) struct Discourse<'a> {
    forum: Forum<'a>,
    topics: &'a Topics,
    format: Format,
    maps: Maps<'a>,
    /// Marker → post id of the bot's own replies, per topic, read once a run.
    known: HashMap<u64, HashMap<String, String>>,
}

impl<'a> Discourse<'a> {
    pub(crate) fn new(forum: Forum<'a>, topics: &'a Topics, format: Format, maps: Maps<'a>) -> Self {
        Self { forum, topics, format, maps, known: HashMap::new() }
    }
}

impl Deliver for Discourse<'_> {
    async fn deliver(&mut self, outcome: &FeedOutcome) -> Result<Delivery, BotError> {
        let Some(topic) = self.topics.for_campaign(outcome.campaign_id) else {
            tracing::warn!(campaign = %outcome.campaign_id, "no forum topic for this campaign; outcome left unacknowledged");
            return Ok(Delivery::Skipped);
        };
        let replies = match self.known.entry(topic) {
            Entry::Occupied(slot) => slot.into_mut(),
            Entry::Vacant(slot) => slot.insert(self.forum.own_replies(topic).await?),
        };
        let mark = marker(outcome.id);
        if let Some(id) = replies.get(&mark) {
            return Ok(Delivery::Recovered(id.clone()));
        }
        let mut raw = discourse_raw(outcome, self.format);
        if let Some(png) = self.maps.for_outcome(outcome).await? {
            let upload = self.forum.upload(&png).await?;
            raw = with_picture(&raw, self.format, &upload);
        }
        let id = self.forum.reply(topic, &raw).await?;
        replies.insert(mark, id.clone());
        Ok(Delivery::Posted(id))
    }
}

/// A Discourse forum as the bot calls it: as its own user, through its API key.
#[derive(Clone, Copy)]
pub(crate) struct Forum<'a> {
    http: &'a Http,
    url: &'a str,
    api_key: &'a str,
    username: &'a str,
    /// How far back into a topic to look for an earlier reply (most recent posts).
    search_depth: usize,
}

impl<'a> Forum<'a> {
    pub(crate) fn new(http: &'a Http, config: &'a BotConfig) -> Self {
        Self {
            http,
            url: &config.forum_url,
            api_key: &config.forum_api_key,
            username: &config.forum_username,
            search_depth: config.search_depth,
        }
    }

    /// Marker → post id of this bot's replies among the topic's latest `search_depth` posts.
    /// A reply counts only by its text's last line, the marker line exactly as Adjutant writes
    /// it (`adjutant_forum::trailing_marker`); a marker anywhere else in a post is somebody's words.
    async fn own_replies(&self, topic: u64) -> Result<HashMap<String, String>, BotError> {
        let what = format!("reading topic {topic}");
        let first: Value = self.call(Method::GET, &format!("/t/{topic}.json"), None, &what).await?;
        let stream: Vec<u64> = first["post_stream"]["stream"]
            .as_array()
            .map(|s| s.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        let recent: HashSet<u64> = stream.iter().rev().take(self.search_depth).copied().collect();
        let mine = |post: &Value| post["username"].as_str() == Some(self.username);
        // The first page's own posts that carry their raw text; every other recent post is
        // read with its raw text (the cooked HTML is not what the bot wrote).
        let mut posts: Vec<Value> = vec![];
        let mut have: HashSet<u64> = HashSet::new();
        for post in first["post_stream"]["posts"].as_array().into_iter().flatten() {
            let Some(id) = post["id"].as_u64() else { continue };
            if post["raw"].is_string() || !mine(post) {
                have.insert(id);
                posts.push(post.clone());
            }
        }
        let wanted: Vec<u64> =
            stream.iter().rev().filter(|id| recent.contains(id) && !have.contains(id)).copied().collect();
        for chunk in wanted.chunks(20) {
            let query: Vec<String> = chunk.iter().map(|id| format!("post_ids[]={id}")).collect();
            let page: Value = self
                .call(Method::GET, &format!("/t/{topic}/posts.json?include_raw=true&{}", query.join("&")), None, &what)
                .await?;
            posts.extend(page["post_stream"]["posts"].as_array().cloned().unwrap_or_default());
        }
        let mut found = HashMap::new();
        for post in posts.iter().filter(|p| mine(p)) {
            let Some(id) = post_id(&post["id"]) else { continue };
            if let Some(outcome) = post["raw"].as_str().and_then(trailing_marker) {
                found.entry(marker(outcome)).or_insert(id);
            }
        }
        Ok(found)
    }

    /// Posts a reply; returns the forum's post id.
    async fn reply(&self, topic: u64, raw: &str) -> Result<String, BotError> {
        let what = format!("replying to topic {topic}");
        let answer: Value =
            self.call(Method::POST, "/posts.json", Some(json!({"topic_id": topic, "raw": raw})), &what).await?;
        post_id(&answer["id"])
            .ok_or_else(|| BotError::Other(format!("{what}: the forum answered no post id: {answer}")))
    }

    /// Uploads a PNG (`POST /uploads.json`, `upload_type=composer`, `synchronous=true`) and
    /// returns what a post shows it by.
    pub(crate) async fn upload(&self, png: &[u8]) -> Result<Upload, BotError> {
        let what = "uploading the map";
        let (content_type, form) = multipart(&[
            ("upload_type", None, b"composer"),
            ("synchronous", None, b"true"),
            ("file", Some(("map.png", "image/png")), png),
        ]);
        let url = format!("{}/uploads.json", self.url);
        let answer: Value = self
            .http
            .send(what, || {
                self.http
                    .client()
                    .post(&url)
                    .header("Api-Key", self.api_key)
                    .header("Api-Username", self.username)
                    .header("Accept", "application/json")
                    .header(reqwest::header::CONTENT_TYPE, &content_type)
                    .body(form.clone())
            })
            .await?;
        // Only an address that cannot break out of the markup around it.
        let clean = |v: &Value| {
            v.as_str()
                .filter(|u| !u.is_empty() && u.len() < 2000)
                .filter(|u| !u.chars().any(|c| c.is_whitespace() || c.is_control() || "()[]<>\"'\\".contains(c)))
                .map(str::to_owned)
        };
        let url = clean(&answer["url"])
            .ok_or_else(|| BotError::Other(format!("{what}: the forum answered no usable url: {answer}")))?;
        let url = if url.starts_with('/') && !url.starts_with("//") { format!("{}{url}", self.url) } else { url };
        Ok(Upload { short_url: clean(&answer["short_url"]).unwrap_or_else(|| url.clone()), url })
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
            .send_json(what, body.as_ref(), || {
                self.http
                    .client()
                    .request(method.clone(), &url)
                    .header("Api-Key", self.api_key)
                    .header("Api-Username", self.username)
                    .header("Accept", "application/json")
            })
            .await
    }
}
