//! The reference bot (`adjutant bot`): reads its outcome feed from Adjutant, delivers each
//! outcome, and acknowledges it with what the forum calls it. It is a client of Adjutant's HTTP
//! API like any other bot: it reads the feed's JSON into its own types, and shares with the
//! server only the forum texts' last lines (`adjutant_forum`). Three targets:
//!
//! - **Discourse** (the default): a reply to the campaign's topic, in Markdown (Discourse's
//!   native format) or, with `--format bbcode`, BBCode. API (as Discourse publishes it, and as
//!   `tests/bot_contract.rs` checks against that description): `POST /posts.json`
//!   `{topic_id, raw}` → `{id, …}`; `GET /t/{topic}.json` → `post_stream.stream` (every post id)
//!   and `post_stream.posts`; `GET /t/{topic}/posts.json?post_ids[]=…` → `post_stream.posts`;
//!   posts have `id`, `username` and `raw` or `cooked`. Requests carry `Api-Key` and
//!   `Api-Username`.
//! - **Discord**: a message through the channel's webhook (`POST /webhooks/{id}/{token}?wait=true`),
//!   in Discord Markdown, within Discord's limits (`adjutant_forum::discord_message`), mentions off.
//! - **Files**: one file per outcome, for a moderator or a forum-side script to post on a
//!   forum the bot cannot post to (phpBB, SMF, vBulletin, ProBoards: `--format bbcode`).
//!
//! After a crash between posting and acknowledging, the outcome is served again, and the bot
//! finds what it posted before instead of posting twice: on Discourse, its own reply whose LAST
//! line is the outcome's marker line (a marker elsewhere in a post, a player's quote or a seal
//! topic, is not a reply); on Discord, the message its journal names, read back through the
//! webhook's message endpoint and checked the same way; in files, the file already written.
//!
//! A 429 is waited out as the answer asks (`Retry-After`, Discord's `retry_after` and
//! `X-RateLimit-Reset-After`; capped), on the forum and on Adjutant alike, and an emptied
//! Discord rate-limit bucket (`X-RateLimit-Remaining: 0`) is waited out before the next message.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use reqwest::{Method, RequestBuilder, StatusCode};
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use adjutant_forum::{discord_markdown, discord_message, marker, trailing_marker, witness_of};

/// Which topic each campaign's outcomes go to.
#[derive(Debug, Clone, Default)]
pub struct Topics {
    /// For campaigns not named below.
    pub default: Option<u64>,
    pub by_campaign: HashMap<Uuid, u64>,
}

impl Topics {
    pub fn for_campaign(&self, campaign: Uuid) -> Option<u64> {
        self.by_campaign.get(&campaign).copied().or(self.default)
    }

    /// `123` (every campaign) or `<campaign uuid>=123`, comma-separated.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut topics = Topics::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            topics.add(part)?;
        }
        Ok(topics)
    }

    pub fn add(&mut self, part: &str) -> Result<(), String> {
        let topic = |t: &str| t.trim().parse::<u64>().map_err(|_| format!("{t:?} is not a topic id"));
        match part.split_once('=') {
            Some((campaign, id)) => {
                let campaign =
                    Uuid::parse_str(campaign.trim()).map_err(|_| format!("{campaign:?} is not a campaign id"))?;
                self.by_campaign.insert(campaign, topic(id)?);
            }
            None => self.default = Some(topic(part)?),
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct BotConfig {
    /// Adjutant's base address, e.g. `http://127.0.0.1:8080`.
    pub adjutant_url: String,
    pub bot_token: String,
    /// The forum's base address.
    pub forum_url: String,
    pub forum_api_key: String,
    /// The forum user the bot posts as; only its own posts count as earlier replies.
    pub forum_username: String,
    pub topics: Topics,
    /// Outcomes asked for at a time.
    pub batch: i64,
    /// Longest `Retry-After` honoured; longer ones are waited this long.
    pub max_wait: Duration,
    /// 429 answers waited out per request before giving up on it for this run.
    pub max_retries: u32,
    /// How far back into a topic to look for an earlier reply (most recent posts).
    pub search_depth: usize,
    pub timeout: Duration,
    /// Where the outcomes go: a Discourse topic (the default), a Discord channel, or files.
    pub target: Target,
    /// Attach the campaign's map picture (PNG) to the outcome that opens each turn (managed
    /// campaigns): a Discourse upload, or a Discord attachment. Off by default.
    pub map: bool,
}

/// Outcome kinds that open a turn: with `map`, their post carries the map picture.
pub const TURN_KINDS: [&str; 1] = ["turn_begins"];

/// The markup the bot writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Discourse's native format (CommonMark with Discourse's extensions).
    #[default]
    Markdown,
    /// phpBB, SMF, vBulletin, ProBoards (Discourse reads it too).
    Bbcode,
}

impl Format {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "markdown" | "md" => Ok(Format::Markdown),
            "bbcode" => Ok(Format::Bbcode),
            other => Err(format!("--format: {other:?} is neither markdown nor bbcode")),
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Bbcode => "bbcode",
        }
    }
}

/// Where the bot delivers outcomes.
#[derive(Debug, Clone)]
pub enum Target {
    /// Replies to the campaign's Discourse topic (`forum_url`, `topics`), in `format`.
    Discourse { format: Format },
    /// Messages to a Discord channel through its webhook, in Discord Markdown.
    Discord(DiscordTarget),
    /// One file per outcome in `dir` (`<outcome id>.bbcode` or `.md`), for a moderator or a
    /// forum-side script to post on a forum the bot cannot post to itself.
    Files { dir: PathBuf, format: Format },
}

#[derive(Debug, Clone)]
pub struct DiscordTarget {
    /// `https://discord.com/api/webhooks/{id}/{token}`, as Discord shows it.
    pub webhook_url: String,
    /// Outcome id → Discord message id of every message the bot has posted, one line each,
    /// written before the outcome is acknowledged; after a crash the bot reads each message
    /// back through the webhook to see that it is there before acknowledging it.
    pub journal: PathBuf,
}

impl BotConfig {
    pub fn new(
        adjutant_url: impl Into<String>,
        bot_token: impl Into<String>,
        forum_url: impl Into<String>,
        forum_api_key: impl Into<String>,
        forum_username: impl Into<String>,
        topics: Topics,
    ) -> Self {
        Self {
            adjutant_url: adjutant_url.into().trim_end_matches('/').to_owned(),
            bot_token: bot_token.into(),
            forum_url: forum_url.into().trim_end_matches('/').to_owned(),
            forum_api_key: forum_api_key.into(),
            forum_username: forum_username.into(),
            topics,
            batch: 20,
            max_wait: Duration::from_secs(120),
            max_retries: 5,
            search_depth: 200,
            timeout: Duration::from_secs(30),
            target: Target::Discourse { format: Format::Markdown },
            map: false,
        }
    }

    /// A bot that posts to a Discord channel through its webhook.
    pub fn discord(
        adjutant_url: impl Into<String>,
        bot_token: impl Into<String>,
        webhook_url: impl Into<String>,
        journal: impl Into<PathBuf>,
    ) -> Self {
        let mut config = Self::new(adjutant_url, bot_token, "", "", "", Topics::default());
        let webhook_url = webhook_url.into().trim_end_matches('/').to_owned();
        config.target = Target::Discord(DiscordTarget { webhook_url, journal: journal.into() });
        config
    }

    /// A bot that writes each outcome to a file in `dir`.
    pub fn files(
        adjutant_url: impl Into<String>,
        bot_token: impl Into<String>,
        dir: impl Into<PathBuf>,
        format: Format,
    ) -> Self {
        let mut config = Self::new(adjutant_url, bot_token, "", "", "", Topics::default());
        config.target = Target::Files { dir: dir.into(), format };
        config
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BotError {
    #[error("{what}: {error}")]
    Http { what: String, error: String },
    #[error("{what}: answered {status}: {body}")]
    Status { what: String, status: u16, body: String },
    #[error("{what}: still 429 after {retries} waits")]
    RateLimited { what: String, retries: u32 },
    #[error("{0}")]
    Other(String),
}

/// What one run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunReport {
    /// Outcomes posted to the forum and acknowledged.
    pub posted: usize,
    /// Outcomes whose earlier reply was found and acknowledged without posting.
    pub recovered: usize,
    /// Outcomes left for later (no topic for the campaign, or a failure; see the log).
    pub skipped: usize,
}

impl RunReport {
    pub fn acknowledged(&self) -> usize {
        self.posted + self.recovered
    }
}

/// Called after a reply is posted and before it is acknowledged, with the outcome id and the
/// forum post id; an error ends the run there (tests use it to play a crash).
pub type AfterPost = Arc<dyn Fn(Uuid, &str) -> Result<(), BotError> + Send + Sync>;

pub struct Bot {
    config: BotConfig,
    client: reqwest::Client,
    after_post: Option<AfterPost>,
}

#[derive(Debug, Deserialize)]
struct FeedOutcome {
    id: Uuid,
    campaign_id: Uuid,
    position: i64,
    /// The post it came from: the map attached is the map as it stood after that post.
    #[serde(default)]
    seq: Option<i64>,
    kind: String,
    text: FeedText,
    /// The player to tell, on an outcome that begins their turn (the server names them).
    #[serde(default)]
    mention: Option<Mention>,
}

/// Whom to mention with an outcome, as the server's feed names them.
#[derive(Debug, Deserialize)]
struct Mention {
    #[serde(default)]
    forum_handle: Option<String>,
    #[serde(default)]
    discord_user_id: Option<String>,
}

impl Mention {
    /// A Discourse `@username`, only if the handle is one (letters, digits, `_`, `.`, `-`).
    fn discourse(&self) -> Option<String> {
        let handle = self.forum_handle.as_deref()?;
        let fine = !handle.is_empty()
            && handle.len() <= 60
            && handle.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        fine.then(|| format!("@{handle}"))
    }

    /// A Discord user id, only if it is one (a snowflake of 17 to 20 digits).
    fn discord(&self) -> Option<&str> {
        let id = self.discord_user_id.as_deref()?;
        ((17..=20).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_digit())).then_some(id)
    }
}

#[derive(Debug, Deserialize)]
struct FeedText {
    bbcode: String,
    markdown: String,
}

impl FeedText {
    fn in_format(&self, format: Format) -> &str {
        match format {
            Format::Markdown => &self.markdown,
            Format::Bbcode => &self.bbcode,
        }
    }
}

#[derive(Debug, Deserialize)]
struct Feed {
    outcomes: Vec<FeedOutcome>,
}

impl Bot {
    pub fn new(config: BotConfig) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .user_agent(concat!("Adjutant-Bot/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self { config, client, after_post: None })
    }

    pub fn after_post(mut self, hook: AfterPost) -> Self {
        self.after_post = Some(hook);
        self
    }

    /// One pass: reads up to `batch` unacknowledged outcomes and delivers each.
    pub async fn run_once(&self) -> Result<RunReport, BotError> {
        let feed: Feed = self
            .adjutant(Method::GET, &format!("/v1/bot/feed?limit={}", self.config.batch), None, "reading the feed")
            .await?;
        let mut report = RunReport::default();
        // Marker → post id of the bot's own replies, per topic, read once a run.
        let mut known: HashMap<u64, HashMap<String, String>> = HashMap::new();
        let mut journal = match &self.config.target {
            Target::Discord(discord) => read_journal(&discord.journal)?,
            _ => HashMap::new(),
        };
        for outcome in feed.outcomes {
            let (post_id, recovered) = match &self.config.target {
                Target::Discourse { format } => {
                    let Some(topic) = self.config.topics.for_campaign(outcome.campaign_id) else {
                        tracing::warn!(campaign = %outcome.campaign_id, "no forum topic for this campaign; outcome left unacknowledged");
                        report.skipped += 1;
                        continue;
                    };
                    if let std::collections::hash_map::Entry::Vacant(slot) = known.entry(topic) {
                        slot.insert(self.own_replies(topic).await?);
                    }
                    let mark = marker(outcome.id);
                    let replies = known.entry(topic).or_default();
                    match replies.get(&mark) {
                        Some(id) => (id.clone(), true),
                        None => {
                            let mut raw = outcome.text.in_format(*format).to_owned();
                            // The player whose turn begins, and only that player, is mentioned.
                            if let Some(at) = outcome.mention.as_ref().and_then(Mention::discourse) {
                                raw = format!("{at}\n\n{raw}");
                            }
                            if self.wants_map(&outcome) {
                                let png = self.map_png_at(outcome.campaign_id, outcome.seq).await?;
                                let upload = self.upload_to_discourse(&png).await?;
                                raw = with_picture(&raw, *format, &upload);
                            }
                            let id = self.reply(topic, &raw).await?;
                            replies.insert(mark, id.clone());
                            (id, false)
                        }
                    }
                }
                Target::Discord(discord) => self.to_discord(discord, &outcome, &mut journal).await?,
                Target::Files { dir, format } => to_file(dir, *format, &outcome)?,
            };
            if !recovered {
                if let Some(hook) = &self.after_post {
                    hook(outcome.id, &post_id)?;
                }
            }
            let _: Value = self
                .adjutant(
                    Method::POST,
                    &format!("/v1/campaigns/{}/outcomes/{}/ack", outcome.campaign_id, outcome.id),
                    Some(json!({"forum_post_id": post_id})),
                    "acknowledging",
                )
                .await?;
            tracing::info!(outcome = %outcome.id, post = %post_id, recovered, "outcome delivered");
            if recovered {
                report.recovered += 1;
            } else {
                report.posted += 1;
            }
        }
        Ok(report)
    }

    /// Runs until a pass acknowledges nothing; returns the totals.
    pub async fn run_until_idle(&self) -> Result<RunReport, BotError> {
        let mut total = RunReport::default();
        loop {
            let run = self.run_once().await?;
            total.posted += run.posted;
            total.recovered += run.recovered;
            total.skipped = run.skipped;
            if run.acknowledged() == 0 {
                return Ok(total);
            }
        }
    }

    /// Marker → post id of this bot's replies among the topic's latest `search_depth` posts.
    /// A reply counts only by its text's last line, the marker line exactly as Adjutant writes
    /// it (`adjutant_forum::trailing_marker`); a marker anywhere else in a post is somebody's words.
    async fn own_replies(&self, topic: u64) -> Result<HashMap<String, String>, BotError> {
        let what = format!("reading topic {topic}");
        let first: Value = self.forum(Method::GET, &format!("/t/{topic}.json"), None, &what).await?;
        let stream: Vec<u64> = first["post_stream"]["stream"]
            .as_array()
            .map(|s| s.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        let recent: HashSet<u64> = stream.iter().rev().take(self.config.search_depth).copied().collect();
        let mine = |post: &Value| post["username"].as_str() == Some(self.config.forum_username.as_str());
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
                .forum(Method::GET, &format!("/t/{topic}/posts.json?include_raw=true&{}", query.join("&")), None, &what)
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
            self.forum(Method::POST, "/posts.json", Some(json!({"topic_id": topic, "raw": raw})), &what).await?;
        post_id(&answer["id"])
            .ok_or_else(|| BotError::Other(format!("{what}: the forum answered no post id: {answer}")))
    }

    /// Posts one outcome to Discord, or finds the message posted for it before a crash.
    async fn to_discord(
        &self,
        discord: &DiscordTarget,
        outcome: &FeedOutcome,
        journal: &mut HashMap<Uuid, String>,
    ) -> Result<(String, bool), BotError> {
        if let Some(message_id) = journal.get(&outcome.id).cloned() {
            let what = format!("reading back Discord message {message_id}");
            let url = format!("{}/messages/{message_id}", discord.webhook_url);
            match self.discord_request::<Value>(Method::GET, &url, None, &what).await {
                Ok(message) if message["content"].as_str().and_then(trailing_marker) == Some(outcome.id) => {
                    return Ok((message_id, true));
                }
                // Deleted in the channel, or not the outcome's: post it (again).
                Ok(_) | Err(BotError::Status { status: 404, .. }) => {}
                Err(e) => return Err(e),
            }
        }
        // The player whose turn begins, and only that player, may be pinged: `allowed_mentions`
        // lets Discord ping that one user and nothing else the text may hold.
        let user = outcome.mention.as_ref().and_then(Mention::discord);
        let text = discord_markdown(&outcome.text.markdown);
        let message = discord_message(&match user {
            Some(id) => format!("<@{id}>\n{text}"),
            None => text,
        });
        let allowed = match user {
            Some(id) => json!({"parse": [], "users": [id]}),
            None => json!({"parse": []}),
        };
        let mut body = json!({"content": message.content, "allowed_mentions": allowed});
        if !message.embeds.is_empty() {
            body["embeds"] = message.embeds.iter().map(|d| json!({"description": d})).collect();
        }
        let what = "posting to Discord";
        let png = match self.wants_map(outcome) {
            true => Some(self.map_png_at(outcome.campaign_id, outcome.seq).await?),
            false => None,
        };
        let answer = self.execute_webhook(&discord.webhook_url, body, png.as_deref()).await?;
        let id = post_id(&answer["id"])
            .ok_or_else(|| BotError::Other(format!("{what}: Discord answered no message id: {answer}")))?;
        append_journal(&discord.journal, outcome.id, &id)?;
        journal.insert(outcome.id, id.clone());
        Ok((id, false))
    }

    async fn discord_request<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        url: &str,
        body: Option<Value>,
        what: &str,
    ) -> Result<T, BotError> {
        self.send_json(what, body.as_ref(), || {
            self.client.request(method.clone(), url).header("Accept", "application/json")
        })
        .await
    }

    /// Discord's "execute webhook" with `wait=true`: the message `body` (JSON), and with
    /// `png` the map picture as its attachment (`multipart/form-data`: `payload_json` and
    /// `files[0]`). Returns Discord's message.
    pub async fn execute_webhook(
        &self,
        webhook_url: &str,
        mut body: Value,
        png: Option<&[u8]>,
    ) -> Result<Value, BotError> {
        let what = "posting to Discord";
        let url = format!("{webhook_url}?wait=true");
        let Some(png) = png else {
            return self.discord_request(Method::POST, &url, Some(body), what).await;
        };
        body["attachments"] = json!([{"id": 0, "filename": "map.png", "description": "The map"}]);
        let payload = body.to_string();
        let (content_type, form) =
            multipart(&[("payload_json", None, payload.as_bytes()), ("files[0]", Some(("map.png", "image/png")), png)]);
        self.send(what, || {
            self.client
                .post(&url)
                .header("Accept", "application/json")
                .header(reqwest::header::CONTENT_TYPE, &content_type)
                .body(form.clone())
        })
        .await
    }

    fn wants_map(&self, outcome: &FeedOutcome) -> bool {
        self.config.map && TURN_KINDS.contains(&outcome.kind.as_str())
    }

    /// The campaign's map picture, as Adjutant draws it now (`GET /v1/campaigns/{id}/map.png`).
    pub async fn map_png(&self, campaign: Uuid) -> Result<Vec<u8>, BotError> {
        self.map_png_at(campaign, None).await
    }

    /// The campaign's map picture as it stood after post `seq` (`…/map.png?at=seq`), so an
    /// outcome posted late still shows the map of its own moment; without it, the map now.
    pub async fn map_png_at(&self, campaign: Uuid, seq: Option<i64>) -> Result<Vec<u8>, BotError> {
        let at = seq.map(|seq| format!("?at={seq}")).unwrap_or_default();
        let url = format!("{}/v1/campaigns/{campaign}/map.png{at}", self.config.adjutant_url);
        let png =
            self.send_raw("reading the map", || self.client.get(&url).bearer_auth(&self.config.bot_token)).await?;
        if !png.starts_with(b"\x89PNG\r\n\x1a\n") {
            return Err(BotError::Other("reading the map: the answer is not a PNG".into()));
        }
        Ok(png)
    }

    /// Uploads a PNG to Discourse (`POST /uploads.json`, `upload_type=composer`,
    /// `synchronous=true`) and returns what a post shows it by.
    pub async fn upload_to_discourse(&self, png: &[u8]) -> Result<Upload, BotError> {
        let what = "uploading the map";
        let (content_type, form) = multipart(&[
            ("upload_type", None, b"composer"),
            ("synchronous", None, b"true"),
            ("file", Some(("map.png", "image/png")), png),
        ]);
        let url = format!("{}/uploads.json", self.config.forum_url);
        let answer: Value = self
            .send(what, || {
                self.client
                    .post(&url)
                    .header("Api-Key", &self.config.forum_api_key)
                    .header("Api-Username", &self.config.forum_username)
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
        let url = if url.starts_with('/') && !url.starts_with("//") {
            format!("{}{url}", self.config.forum_url)
        } else {
            url
        };
        Ok(Upload { short_url: clean(&answer["short_url"]).unwrap_or_else(|| url.clone()), url })
    }

    async fn forum<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        what: &str,
    ) -> Result<T, BotError> {
        let url = format!("{}{path}", self.config.forum_url);
        self.send_json(what, body.as_ref(), || {
            self.client
                .request(method.clone(), &url)
                .header("Api-Key", &self.config.forum_api_key)
                .header("Api-Username", &self.config.forum_username)
                .header("Accept", "application/json")
        })
        .await
    }

    async fn adjutant<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        what: &str,
    ) -> Result<T, BotError> {
        let url = format!("{}{path}", self.config.adjutant_url);
        self.send_json(what, body.as_ref(), || {
            self.client.request(method.clone(), &url).bearer_auth(&self.config.bot_token)
        })
        .await
    }

    /// Sends with `body`, when there is one, as JSON; reads the answer as JSON.
    async fn send_json<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        body: Option<&Value>,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<T, BotError> {
        self.send(what, || match body {
            Some(body) => build().json(body),
            None => build(),
        })
        .await
    }

    /// Sends and reads the answer as JSON.
    async fn send<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<T, BotError> {
        let body = self.send_raw(what, build).await?;
        serde_json::from_slice(&body).map_err(|e| {
            BotError::Other(format!(
                "{what}: unreadable answer ({e}): {}",
                String::from_utf8_lossy(&body).chars().take(200).collect::<String>()
            ))
        })
    }

    /// Sends, waiting out 429s as the answer asks (1 s when it says nothing readable).
    async fn send_raw(&self, what: &str, build: impl Fn() -> RequestBuilder) -> Result<Vec<u8>, BotError> {
        let mut waits = 0;
        loop {
            let response =
                build().send().await.map_err(|e| BotError::Http { what: what.to_owned(), error: e.to_string() })?;
            let status = response.status();
            if status == StatusCode::TOO_MANY_REQUESTS {
                if waits >= self.config.max_retries {
                    return Err(BotError::RateLimited { what: what.to_owned(), retries: waits });
                }
                waits += 1;
                // Discord says it in the body (`retry_after`, seconds with fractions) and in
                // headers; other servers in `Retry-After`. The longest wait asked for counts.
                let headers = retry_after(response.headers(), now()).into_iter().chain(reset_after(response.headers()));
                let body: Option<Value> = response.json().await.ok();
                let in_body = body.as_ref().and_then(|b| b["retry_after"].as_f64()).and_then(seconds);
                let wait = headers.chain(in_body).max().unwrap_or(Duration::from_secs(1)).min(self.config.max_wait);
                tracing::info!(what, ?wait, "429: waiting as asked");
                tokio::time::sleep(wait).await;
                continue;
            }
            // The bucket is empty (Discord's `X-RateLimit-Remaining: 0`): wait until it refills
            // rather than run into a 429.
            let exhausted = response.headers().get("x-ratelimit-remaining").is_some_and(|v| v.as_bytes() == b"0");
            let refill = if exhausted { reset_after(response.headers()) } else { None };
            let body =
                response.bytes().await.map_err(|e| BotError::Http { what: what.to_owned(), error: e.to_string() })?;
            if let Some(wait) = refill.filter(|_| status.is_success()) {
                tracing::info!(what, ?wait, "rate limit bucket empty: waiting for it to refill");
                tokio::time::sleep(wait.min(self.config.max_wait)).await;
            }
            if !status.is_success() {
                let body: String = String::from_utf8_lossy(&body).chars().take(500).collect();
                return Err(BotError::Status { what: what.to_owned(), status: status.as_u16(), body });
            }
            return Ok(body.to_vec());
        }
    }
}

/// The bot's clock: the machine's. The bot is a client in a process of its own, not the server
/// that stamps posts; it reads the time only to wait out an HTTP date in `Retry-After`.
fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

/// `Retry-After` as seconds (fractions allowed) or as an HTTP date (how long from `now`).
fn retry_after(headers: &reqwest::header::HeaderMap, now: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    (at.with_timezone(&chrono::Utc) - now).to_std().ok().or(Some(Duration::ZERO))
}

/// A picture uploaded to Discourse: `url` (for BBCode's `[img]`) and `short_url` (`upload://…`,
/// what Discourse's own composer writes in Markdown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    pub url: String,
    pub short_url: String,
}

/// An outcome's text with the map picture above its witness and marker lines (the marker stays
/// the last line and the witness the line before it, where `adjutant verify` reads them).
pub fn with_picture(text: &str, format: Format, upload: &Upload) -> String {
    let text = text.trim_end();
    let (body, marker_line) = text.rsplit_once('\n').unwrap_or(("", text));
    let (body, tail) = match witness_of(text) {
        Some(_) => {
            // From the witness line on, as written (with the blank line Markdown keeps).
            let at = body.trim_end().rfind('\n').map_or(0, |i| i + 1);
            (&text[..at], text[at..].to_owned())
        }
        None => (body, marker_line.to_owned()),
    };
    let picture = match format {
        Format::Markdown => format!("![Map]({})", upload.short_url),
        Format::Bbcode => format!("[img]{}[/img]", upload.url),
    };
    format!("{}\n\n{picture}\n\n{tail}", body.trim_end())
}

/// One part of a `multipart/form-data` body: its name, the file name and type for a file, and
/// its content.
type FormPart<'a> = (&'a str, Option<(&'a str, &'a str)>, &'a [u8]);

/// A `multipart/form-data` body, and its content type (with the boundary).
fn multipart(parts: &[FormPart]) -> (String, Vec<u8>) {
    let boundary = format!("adjutant-{}", Uuid::new_v4().simple());
    let mut body = Vec::new();
    for (name, file, content) in parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        match file {
            Some((filename, kind)) => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\nContent-Type: {kind}\r\n\r\n")
                    .as_bytes(),
            ),
            None if *name == "payload_json" => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"\r\nContent-Type: application/json\r\n\r\n").as_bytes(),
            ),
            None => body.extend_from_slice(format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes()),
        }
        body.extend_from_slice(content);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// Discord's `X-RateLimit-Reset-After`: seconds (with fractions) until the bucket refills.
fn reset_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers.get("x-ratelimit-reset-after")?.to_str().ok()?.trim().parse::<f64>().ok().and_then(seconds)
}

fn seconds(value: f64) -> Option<Duration> {
    (value.is_finite() && (0.0..1e9).contains(&value)).then(|| Duration::from_secs_f64(value))
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

/// Writes one outcome to `<dir>/<campaign>/<position>-<outcome>.<ext>` (through a temporary
/// file, so a reader never sees half of it); a file already there with the same text is the
/// one written before a crash. The acknowledgement names the file.
fn to_file(dir: &Path, format: Format, outcome: &FeedOutcome) -> Result<(String, bool), BotError> {
    let name = format!("{:010}-{}.{}", outcome.position, outcome.id, format.extension());
    let folder = dir.join(outcome.campaign_id.to_string());
    let path = folder.join(&name);
    let text = outcome.text.in_format(format);
    let written = format!("file:{}/{name}", outcome.campaign_id);
    if std::fs::read_to_string(&path).ok().as_deref() == Some(text) {
        return Ok((written, true));
    }
    let fail = |e: std::io::Error| BotError::Other(format!("writing {}: {e}", path.display()));
    std::fs::create_dir_all(&folder).map_err(fail)?;
    let partial = folder.join(format!(".{name}.partial"));
    std::fs::write(&partial, text).map_err(fail)?;
    std::fs::rename(&partial, &path).map_err(fail)?;
    Ok((written, false))
}

/// A forum post id, whether the forum sends it as a number or as text.
fn post_id(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

pub const BOT_USAGE: &str =
    "usage: adjutant bot [--once] [--poll-secs N] [--adjutant-url URL] [--format markdown|bbcode]
                    Discourse: --forum-url URL --forum-username NAME [--topic TOPIC | --topic CAMPAIGN=TOPIC]...
                    Discord:   (ADJUTANT_BOT_DISCORD_WEBHOOK) [--discord-journal FILE]
                    files:     --out-dir DIR

Delivers each outcome of the bot's feed, then acknowledges it: as a reply to the campaign's
Discourse topic (Markdown, or BBCode with --format bbcode), as a message to a Discord channel
through its webhook (Discord Markdown), or as a file per outcome in a folder for a moderator
or a forum-side script to post (BBCode forums: --format bbcode --out-dir DIR). Settings by flag
or environment:
  --adjutant-url    ADJUTANT_BOT_ADJUTANT_URL   Adjutant's address (default http://127.0.0.1:8080)
                    ADJUTANT_BOT_TOKEN          the bot token (environment only)
  --format          ADJUTANT_BOT_FORMAT         markdown (default) or bbcode
  --forum-url       ADJUTANT_BOT_FORUM_URL      the Discourse forum's address
                    ADJUTANT_BOT_FORUM_API_KEY  the forum API key (environment only)
  --forum-username  ADJUTANT_BOT_FORUM_USERNAME the forum user to post as
  --topic           ADJUTANT_BOT_TOPICS         a topic id for every campaign, and/or
                                                CAMPAIGN_UUID=TOPIC_ID per campaign (comma-separated)
                    ADJUTANT_BOT_DISCORD_WEBHOOK the Discord webhook's URL (environment only: it
                                                holds the webhook's token)
  --discord-journal ADJUTANT_BOT_DISCORD_JOURNAL the file of messages posted to Discord
                                                (default adjutant-bot-discord.journal)
  --out-dir         ADJUTANT_BOT_OUT_DIR        write files here instead of posting
  --follow          ADJUTANT_BOT_FOLLOW         campaign ids (comma-separated, or the flag repeated)
                                                whose event streams the bot follows, so each
                                                outcome goes out as soon as it is posted
  --poll-secs       ADJUTANT_BOT_POLL_SECS      pause between passes (default 30)
  --map             ADJUTANT_BOT_MAP=1          attach the map picture to the outcome that opens
                                                each turn (Discourse upload, Discord attachment)
  --once                                        one pass until idle, then exit";

/// `adjutant bot` as parsed.
#[derive(Debug, Clone)]
pub struct BotCommand {
    pub config: BotConfig,
    pub once: bool,
    pub poll: Duration,
    /// Campaigns whose event streams wake the bot as soon as something is posted.
    pub follow: Vec<Uuid>,
}

/// Reads the command line after `bot`, and the environment through `var`.
pub fn parse_command(args: &[String], var: impl Fn(&str) -> Option<String>) -> Result<BotCommand, String> {
    let mut flags: HashMap<&str, String> = HashMap::new();
    let mut topics = Topics::parse(&var("ADJUTANT_BOT_TOPICS").unwrap_or_default())?;
    let mut once = false;
    let mut map = var("ADJUTANT_BOT_MAP").is_some_and(|v| matches!(v.trim(), "1" | "true" | "yes"));
    let mut follow: Vec<Uuid> = vec![];
    let mut add_follow = |text: &str| -> Result<(), String> {
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            follow.push(Uuid::parse_str(part).map_err(|_| format!("--follow: {part:?} is not a campaign id"))?);
        }
        Ok(())
    };
    add_follow(&var("ADJUTANT_BOT_FOLLOW").unwrap_or_default())?;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        match name {
            "--once" => once = true,
            "--map" => map = true,
            "--adjutant-url" | "--forum-url" | "--forum-username" | "--poll-secs" | "--topic" | "--format"
            | "--discord-journal" | "--out-dir" | "--follow" => {
                let value = match inline {
                    Some(v) => v,
                    None => args.next().cloned().ok_or_else(|| format!("{name} needs a value"))?,
                };
                if name == "--topic" {
                    topics.add(&value)?;
                } else if name == "--follow" {
                    add_follow(&value)?;
                } else {
                    flags.insert(name, value);
                }
            }
            "--token" | "--forum-api-key" | "--discord-webhook" => {
                return Err(format!("{name}: pass secrets in the environment, not on the command line"))
            }
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    let setting = |flag: &str, env: &str| flags.get(flag).cloned().or_else(|| var(env)).filter(|v| !v.is_empty());
    let required = |value: Option<String>, name: &str| value.ok_or_else(|| format!("{name} is not set"));
    let adjutant_url =
        setting("--adjutant-url", "ADJUTANT_BOT_ADJUTANT_URL").unwrap_or_else(|| "http://127.0.0.1:8080".into());
    let token = required(var("ADJUTANT_BOT_TOKEN").filter(|v| !v.is_empty()), "ADJUTANT_BOT_TOKEN")?;
    let poll = match setting("--poll-secs", "ADJUTANT_BOT_POLL_SECS") {
        Some(v) => Duration::from_secs(v.parse().map_err(|_| format!("--poll-secs: cannot read {v:?}"))?),
        None => Duration::from_secs(30),
    };
    let format = setting("--format", "ADJUTANT_BOT_FORMAT").map(|f| Format::parse(&f)).transpose()?.unwrap_or_default();
    let discord = var("ADJUTANT_BOT_DISCORD_WEBHOOK").filter(|v| !v.is_empty());
    if let Some(dir) = setting("--out-dir", "ADJUTANT_BOT_OUT_DIR") {
        let mut config = BotConfig::files(adjutant_url, token, dir, format);
        config.map = false;
        return Ok(BotCommand { config, once, poll, follow });
    }
    if let Some(webhook) = discord {
        if format != Format::Markdown {
            return Err("--format: Discord reads Markdown only".into());
        }
        let url = reqwest::Url::parse(&webhook).map_err(|e| format!("ADJUTANT_BOT_DISCORD_WEBHOOK: {e}"))?;
        if !url.path().contains("/webhooks/") || url.query().is_some() {
            return Err("ADJUTANT_BOT_DISCORD_WEBHOOK: not a webhook URL (…/api/webhooks/ID/TOKEN)".into());
        }
        let journal = setting("--discord-journal", "ADJUTANT_BOT_DISCORD_JOURNAL")
            .unwrap_or_else(|| "adjutant-bot-discord.journal".into());
        let mut config = BotConfig::discord(adjutant_url, token, webhook, journal);
        config.map = map;
        return Ok(BotCommand { config, once, poll, follow });
    }
    let forum_url = required(setting("--forum-url", "ADJUTANT_BOT_FORUM_URL"), "--forum-url (ADJUTANT_BOT_FORUM_URL)")?;
    let api_key = required(var("ADJUTANT_BOT_FORUM_API_KEY").filter(|v| !v.is_empty()), "ADJUTANT_BOT_FORUM_API_KEY")?;
    let username = required(
        setting("--forum-username", "ADJUTANT_BOT_FORUM_USERNAME"),
        "--forum-username (ADJUTANT_BOT_FORUM_USERNAME)",
    )?;
    if topics.default.is_none() && topics.by_campaign.is_empty() {
        return Err("no forum topic: give --topic (or ADJUTANT_BOT_TOPICS)".into());
    }
    let mut config = BotConfig::new(adjutant_url, token, forum_url, api_key, username, topics);
    config.target = Target::Discourse { format };
    config.map = map;
    Ok(BotCommand { config, once, poll, follow })
}

/// Runs the bot: passes until idle, then a pause, until Ctrl-C (or once, with `--once`).
pub async fn run_command(command: BotCommand) -> Result<(), String> {
    run_until(command, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await
}

/// Runs the bot until `stop` completes: a pass until idle, then a pause of `poll`, cut short
/// as soon as a followed campaign's event stream tells of a new post.
pub async fn run_until(command: BotCommand, stop: impl std::future::Future<Output = ()>) -> Result<(), String> {
    let wake = Arc::new(tokio::sync::Notify::new());
    let mut followers = tokio::task::JoinSet::new();
    for campaign in &command.follow {
        let (url, token) = (command.config.adjutant_url.clone(), command.config.bot_token.clone());
        followers.spawn(follow_events(url, token, *campaign, wake.clone()));
    }
    let bot = Bot::new(command.config)?;
    tokio::pin!(stop);
    loop {
        match bot.run_until_idle().await {
            Ok(report) => tracing::info!(?report, "bot pass done"),
            Err(e) if command.once => return Err(e.to_string()),
            Err(e) => tracing::warn!(error = %e, "bot pass failed; trying again after the pause"),
        }
        if command.once {
            return Ok(());
        }
        tokio::select! {
            () = &mut stop => return Ok(()),
            () = tokio::time::sleep(command.poll) => {}
            () = wake.notified() => {}
        }
    }
}

/// Follows a campaign's event stream (`GET /v1/campaigns/{id}/events`), waking the bot at each
/// `post` event; reconnects with `Last-Event-ID` when the stream ends or breaks.
async fn follow_events(adjutant_url: String, token: String, campaign: Uuid, wake: Arc<tokio::sync::Notify>) {
    // No overall time-out: the stream stays open (the server sends a comment every 15 s).
    let client = match reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("Adjutant-Bot/", env!("CARGO_PKG_VERSION")))
        .build()
    {
        Ok(client) => client,
        Err(e) => return tracing::warn!(error = %e, "cannot follow the event stream"),
    };
    let url = format!("{adjutant_url}/v1/campaigns/{campaign}/events");
    let mut last: Option<String> = None;
    loop {
        let mut request = client.get(&url).bearer_auth(&token).header("Accept", "text/event-stream");
        if let Some(id) = &last {
            request = request.header("Last-Event-ID", id);
        }
        match request.send().await {
            Ok(mut response) if response.status().is_success() => {
                let mut buffer: Vec<u8> = vec![];
                while let Ok(Some(chunk)) = response.chunk().await {
                    buffer.extend_from_slice(&chunk);
                    while let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
                        let event: Vec<u8> = buffer.drain(..end + 2).collect();
                        let event = String::from_utf8_lossy(&event);
                        let mut post = false;
                        for line in event.lines() {
                            if let Some(id) = line.strip_prefix("id:") {
                                last = Some(id.trim().to_owned());
                            }
                            post |= line.strip_prefix("event:").is_some_and(|e| e.trim() == "post");
                        }
                        if post {
                            wake.notify_one();
                        }
                    }
                }
            }
            Ok(response) => tracing::warn!(%campaign, status = %response.status(), "the event stream was refused"),
            Err(e) => tracing::warn!(%campaign, error = %e, "the event stream broke"),
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_goes_above_the_witness_and_the_marker() {
        use adjutant_forum::Witness;
        use adjutant_render::forum_text;
        let id = Uuid::from_u128(9);
        let witness =
            Witness { seq: 4, hash: "cd".repeat(32), key_id: Some("ed25519:1".into()), signature: Some("ab".into()) };
        let text = forum_text(id, "umpire", "Turn 2 begins", &serde_json::Value::Null, Some(&witness));
        let upload = Upload { url: "https://forum.example/u/map.png".into(), short_url: "upload://map.png".into() };
        for (raw, format, picture) in [
            (&text.markdown, Format::Markdown, "![Map](upload://map.png)"),
            (&text.bbcode, Format::Bbcode, "[img]https://forum.example/u/map.png[/img]"),
        ] {
            let with_map = with_picture(raw, format, &upload);
            assert_eq!(trailing_marker(&with_map), Some(id), "{with_map}");
            assert_eq!(witness_of(&with_map), Some(witness.clone()), "{with_map}");
            let at = with_map.find(picture).expect("the picture is in");
            assert!(at > with_map.find("Turn 2 begins").unwrap(), "{with_map}");
            assert!(at < with_map.find("adjutant:post:4").unwrap(), "{with_map}");
        }
        // A text without a witness line (written before receipts): the picture above the marker.
        let plain = forum_text(id, "umpire", "Turn 2 begins", &serde_json::Value::Null, None);
        let with_map = with_picture(&plain.markdown, Format::Markdown, &upload);
        assert_eq!(trailing_marker(&with_map), Some(id));
        assert!(with_map.contains("![Map](upload://map.png)"));
    }

    #[test]
    fn topics_by_campaign_or_one_for_all() {
        let campaign = Uuid::new_v4();
        let topics = Topics::parse(&format!("7, {campaign}=42")).unwrap();
        assert_eq!(topics.for_campaign(campaign), Some(42));
        assert_eq!(topics.for_campaign(Uuid::new_v4()), Some(7));
        assert!(Topics::parse("seven").is_err());
        assert!(Topics::parse("not-a-uuid=3").is_err());
        assert_eq!(Topics::parse("").unwrap().for_campaign(campaign), None);
    }

    #[test]
    fn retry_after_in_seconds_or_a_date() {
        let now = chrono::DateTime::parse_from_rfc3339("2015-10-21T07:27:30Z").unwrap().to_utc();
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(2)));
        headers.insert("retry-after", "0.25".parse().unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::from_millis(250)));
        headers.insert("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(30)));
        let later = chrono::DateTime::parse_from_rfc3339("2015-10-21T08:00:00Z").unwrap().to_utc();
        assert_eq!(retry_after(&headers, later), Some(Duration::ZERO), "a date gone by: no wait");
        headers.insert("retry-after", "soon".parse().unwrap());
        assert_eq!(retry_after(&headers, now), None);
    }

    #[test]
    fn the_command_line_and_environment() {
        let env = |key: &str| match key {
            "ADJUTANT_BOT_TOKEN" => Some("adj_x".to_owned()),
            "ADJUTANT_BOT_FORUM_API_KEY" => Some("key".to_owned()),
            "ADJUTANT_BOT_FORUM_URL" => Some("http://forum.example/".to_owned()),
            "ADJUTANT_BOT_TOPICS" => Some("5".to_owned()),
            _ => None,
        };
        let args: Vec<String> =
            ["--forum-username", "adjutant", "--once", "--poll-secs=3"].iter().map(|s| s.to_string()).collect();
        let command = parse_command(&args, env).unwrap();
        assert!(command.once);
        assert_eq!(command.poll, Duration::from_secs(3));
        assert_eq!(command.config.forum_url, "http://forum.example");
        assert_eq!(command.config.adjutant_url, "http://127.0.0.1:8080");
        assert_eq!(command.config.topics.default, Some(5));
        let no_user = parse_command(&[], env).unwrap_err();
        assert!(no_user.contains("forum-username"), "{no_user}");
        let secret = parse_command(&["--token".to_owned(), "x".to_owned()], env).unwrap_err();
        assert!(secret.contains("environment"), "{secret}");
        assert!(matches!(command.config.target, Target::Discourse { format: Format::Markdown }));
        let args: Vec<String> = ["--forum-username", "a", "--format", "bbcode"].iter().map(|s| s.to_string()).collect();
        assert!(matches!(
            parse_command(&args, env).unwrap().config.target,
            Target::Discourse { format: Format::Bbcode }
        ));
        let args: Vec<String> = ["--format=bbcode", "--out-dir", "/tmp/x"].iter().map(|s| s.to_string()).collect();
        let files = parse_command(&args, env).unwrap();
        assert!(
            matches!(files.config.target, Target::Files { format: Format::Bbcode, ref dir } if dir == Path::new("/tmp/x"))
        );
        let with_discord = |key: &str| match key {
            "ADJUTANT_BOT_DISCORD_WEBHOOK" => Some("https://discord.com/api/webhooks/1/tok".to_owned()),
            other => env(other),
        };
        let discord = parse_command(&[], with_discord).unwrap();
        let Target::Discord(target) = discord.config.target else { panic!("not Discord") };
        assert_eq!(target.webhook_url, "https://discord.com/api/webhooks/1/tok");
        assert_eq!(target.journal, Path::new("adjutant-bot-discord.journal"));
        let flag = parse_command(&["--discord-webhook".to_owned(), "x".to_owned()], env).unwrap_err();
        assert!(flag.contains("environment"), "{flag}");
        assert!(parse_command(&["--format".to_owned(), "html".to_owned()], env).is_err());
    }
}
