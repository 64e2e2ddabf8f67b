//! The reference bot (`adjutant bot`): reads its outcome feed from Adjutant, replies to the
//! campaign's topic on a Discourse-style forum with each outcome's BBCode, and acknowledges
//! the outcome with the forum's post id.
//!
//! After a crash between posting and acknowledging, the outcome is served again. Before posting
//! anything, the bot looks through the topic for its own earlier reply whose LAST line is the
//! outcome's marker line (`[size=1][color=gray]adjutant:outcome:<id>[/color][/size]`, exactly)
//! and acknowledges that reply instead of posting twice. A marker elsewhere in a post (a
//! player's quote, a seal topic) is not a reply.
//!
//! Forum API used (Discourse): `POST /posts.json` `{topic_id, raw}` → `{id, …}`;
//! `GET /t/{topic}.json` → `post_stream.stream` (every post id) and `post_stream.posts`;
//! `GET /t/{topic}/posts.json?post_ids[]=…` → `post_stream.posts`; posts have `id`,
//! `username` and `raw` or `cooked`. Requests carry `Api-Key` and `Api-Username`. A 429 is
//! waited out as its `Retry-After` says (capped), on the forum and on Adjutant alike.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use reqwest::{Method, RequestBuilder, StatusCode};
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use crate::forum::{marker, trailing_marker};

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
        }
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
    text: FeedText,
}

#[derive(Debug, Deserialize)]
struct FeedText {
    bbcode: String,
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
        for outcome in feed.outcomes {
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
            let (post_id, recovered) = match replies.get(&mark) {
                Some(id) => (id.clone(), true),
                None => {
                    let id = self.reply(topic, &outcome.text.bbcode).await?;
                    replies.insert(mark, id.clone());
                    if let Some(hook) = &self.after_post {
                        hook(outcome.id, &id)?;
                    }
                    (id, false)
                }
            };
            let _: Value = self
                .adjutant(
                    Method::POST,
                    &format!("/v1/campaigns/{}/outcomes/{}/ack", outcome.campaign_id, outcome.id),
                    Some(json!({"forum_post_id": post_id})),
                    "acknowledging",
                )
                .await?;
            tracing::info!(outcome = %outcome.id, topic, post = %post_id, recovered, "outcome on the forum");
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
    /// it (`forum::trailing_marker`); a marker anywhere else in a post is somebody's words.
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

    async fn forum<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        what: &str,
    ) -> Result<T, BotError> {
        let url = format!("{}{path}", self.config.forum_url);
        self.send(what, || {
            let mut request = self
                .client
                .request(method.clone(), &url)
                .header("Api-Key", &self.config.forum_api_key)
                .header("Api-Username", &self.config.forum_username)
                .header("Accept", "application/json");
            if let Some(body) = &body {
                request = request.json(body);
            }
            request
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
        self.send(what, || {
            let mut request = self.client.request(method.clone(), &url).bearer_auth(&self.config.bot_token);
            if let Some(body) = &body {
                request = request.json(body);
            }
            request
        })
        .await
    }

    /// Sends, waiting out 429s as `Retry-After` says (1 s when it says nothing readable).
    async fn send<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<T, BotError> {
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
                let wait = retry_after(response.headers()).unwrap_or(Duration::from_secs(1)).min(self.config.max_wait);
                tracing::info!(what, ?wait, "429: waiting as asked");
                tokio::time::sleep(wait).await;
                continue;
            }
            let text =
                response.text().await.map_err(|e| BotError::Http { what: what.to_owned(), error: e.to_string() })?;
            if !status.is_success() {
                let body: String = text.chars().take(500).collect();
                return Err(BotError::Status { what: what.to_owned(), status: status.as_u16(), body });
            }
            return serde_json::from_str(&text).map_err(|e| {
                BotError::Other(format!(
                    "{what}: unreadable answer ({e}): {}",
                    text.chars().take(200).collect::<String>()
                ))
            });
        }
    }
}

/// `Retry-After` as seconds (fractions allowed) or as an HTTP date.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    (at.with_timezone(&chrono::Utc) - chrono::Utc::now()).to_std().ok().or(Some(Duration::ZERO))
}

/// A forum post id, whether the forum sends it as a number or as text.
fn post_id(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

pub const BOT_USAGE: &str = "usage: adjutant bot [--once] [--poll-secs N] [--adjutant-url URL] [--forum-url URL]
                    [--forum-username NAME] [--topic TOPIC | --topic CAMPAIGN=TOPIC]...

Posts each outcome of the bot's feed as a reply to the campaign's forum topic (Discourse API),
then acknowledges it with the forum post id. Settings by flag or environment:
  --adjutant-url    ADJUTANT_BOT_ADJUTANT_URL   Adjutant's address (default http://127.0.0.1:8080)
                    ADJUTANT_BOT_TOKEN          the bot token (environment only)
  --forum-url       ADJUTANT_BOT_FORUM_URL      the forum's address
                    ADJUTANT_BOT_FORUM_API_KEY  the forum API key (environment only)
  --forum-username  ADJUTANT_BOT_FORUM_USERNAME the forum user to post as
  --topic           ADJUTANT_BOT_TOPICS         a topic id for every campaign, and/or
                                                CAMPAIGN_UUID=TOPIC_ID per campaign (comma-separated)
  --poll-secs       ADJUTANT_BOT_POLL_SECS      pause between passes (default 30)
  --once                                        one pass until idle, then exit";

/// `adjutant bot` as parsed.
#[derive(Debug, Clone)]
pub struct BotCommand {
    pub config: BotConfig,
    pub once: bool,
    pub poll: Duration,
}

/// Reads the command line after `bot`, and the environment through `var`.
pub fn parse_command(args: &[String], var: impl Fn(&str) -> Option<String>) -> Result<BotCommand, String> {
    let mut flags: HashMap<&str, String> = HashMap::new();
    let mut topics = Topics::parse(&var("ADJUTANT_BOT_TOPICS").unwrap_or_default())?;
    let mut once = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        match name {
            "--once" => once = true,
            "--adjutant-url" | "--forum-url" | "--forum-username" | "--poll-secs" | "--topic" => {
                let value = match inline {
                    Some(v) => v,
                    None => args.next().cloned().ok_or_else(|| format!("{name} needs a value"))?,
                };
                if name == "--topic" {
                    topics.add(&value)?;
                } else {
                    flags.insert(name, value);
                }
            }
            "--token" | "--forum-api-key" => {
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
    let forum_url = required(setting("--forum-url", "ADJUTANT_BOT_FORUM_URL"), "--forum-url (ADJUTANT_BOT_FORUM_URL)")?;
    let api_key = required(var("ADJUTANT_BOT_FORUM_API_KEY").filter(|v| !v.is_empty()), "ADJUTANT_BOT_FORUM_API_KEY")?;
    let username = required(
        setting("--forum-username", "ADJUTANT_BOT_FORUM_USERNAME"),
        "--forum-username (ADJUTANT_BOT_FORUM_USERNAME)",
    )?;
    if topics.default.is_none() && topics.by_campaign.is_empty() {
        return Err("no forum topic: give --topic (or ADJUTANT_BOT_TOPICS)".into());
    }
    let poll = match setting("--poll-secs", "ADJUTANT_BOT_POLL_SECS") {
        Some(v) => Duration::from_secs(v.parse().map_err(|_| format!("--poll-secs: cannot read {v:?}"))?),
        None => Duration::from_secs(30),
    };
    Ok(BotCommand { config: BotConfig::new(adjutant_url, token, forum_url, api_key, username, topics), once, poll })
}

/// Runs the bot: passes until idle, then a pause, until Ctrl-C (or once, with `--once`).
pub async fn run_command(command: BotCommand) -> Result<(), String> {
    let bot = Bot::new(command.config)?;
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
            _ = tokio::signal::ctrl_c() => return Ok(()),
            () = tokio::time::sleep(command.poll) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after", "0.25".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        headers.insert("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::ZERO));
        headers.insert("retry-after", "soon".parse().unwrap());
        assert_eq!(retry_after(&headers), None);
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
    }
}
