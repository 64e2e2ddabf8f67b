//! The reference bot (`adjutant bot`): reads its outcome feed from Adjutant, delivers each
//! outcome, and acknowledges it with what the forum calls it. It is a client of Adjutant's HTTP
//! API like any other bot: it reads the feed's JSON into its own types, and shares with the
//! server only the forum texts' last lines (`adjutant_forum`). Three targets, one module each
//! under `targets` behind one trait (`Deliver`):
//!
//! - **Discourse** (the default): a reply to the campaign's topic, in Markdown (Discourse's
//!   native format) or, with `--format bbcode`, BBCode.
//! - **Discord**: a message through the channel's webhook, in Discord Markdown, within
//!   Discord's limits (`adjutant_forum::discord_message`), mentions off.
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

mod command;
mod config;
mod feed;
mod follow;
mod http;
mod targets;
mod text;

use std::sync::Arc;

use serde_json::Value;
use uuid::Uuid;

pub use command::{parse_command, run_command, run_until, BotCommand, BOT_USAGE};
pub use config::{BotConfig, DiscordTarget, Format, Target, Topics, TURN_KINDS};
pub use text::{with_picture, Upload};

use feed::{Adjutant, Maps};
use http::Http;
use targets::{Deliver, Delivery, Discord, Discourse, Files, Forum};

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
    http: Http,
    after_post: Option<AfterPost>,
}

impl Bot {
    pub fn new(config: BotConfig) -> Result<Self, String> {
        let http = Http::new(&config)?;
        Ok(Self { config, http, after_post: None })
    }

    pub fn after_post(mut self, hook: AfterPost) -> Self {
        self.after_post = Some(hook);
        self
    }

    /// One pass: reads up to `batch` unacknowledged outcomes and delivers each.
    pub async fn run_once(&self) -> Result<RunReport, BotError> {
        let feed = self.adjutant().feed(self.config.batch).await?;
        let maps = Maps { adjutant: self.adjutant(), attach: self.config.map };
        match &self.config.target {
            Target::Discourse { format } => {
                let forum = Forum::new(&self.http, &self.config);
                self.deliver_all(feed, Discourse::new(forum, &self.config.topics, *format, maps)).await
            }
            Target::Discord(discord) => self.deliver_all(feed, Discord::open(&self.http, discord, maps)?).await,
            Target::Files { dir, format } => self.deliver_all(feed, Files::new(dir, *format)).await,
        }
    }

    /// Delivers each outcome and acknowledges it with what the target calls it.
    async fn deliver_all(&self, feed: Vec<feed::FeedOutcome>, mut target: impl Deliver) -> Result<RunReport, BotError> {
        let mut report = RunReport::default();
        for outcome in feed {
            let (post_id, recovered) = match target.deliver(&outcome).await? {
                Delivery::Posted(id) => (id, false),
                Delivery::Recovered(id) => (id, true),
                Delivery::Skipped => {
                    report.skipped += 1;
                    continue;
                }
            };
            if !recovered {
                if let Some(hook) = &self.after_post {
                    hook(outcome.id, &post_id)?;
                }
            }
            self.adjutant().acknowledge(&outcome, &post_id).await?;
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

    /// Discord's "execute webhook" with `wait=true`: the message `body` (JSON), and with
    /// `png` the map picture as its attachment (`multipart/form-data`: `payload_json` and
    /// `files[0]`). Returns Discord's message.
    pub async fn execute_webhook(&self, webhook_url: &str, body: Value, png: Option<&[u8]>) -> Result<Value, BotError> {
        targets::execute_webhook(&self.http, webhook_url, body, png).await
    }

    /// The campaign's map picture, as Adjutant draws it now (`GET /v1/campaigns/{id}/map.png`).
    pub async fn map_png(&self, campaign: Uuid) -> Result<Vec<u8>, BotError> {
        self.map_png_at(campaign, None).await
    }

    /// The campaign's map picture as it stood after post `seq` (`…/map.png?at=seq`), so an
    /// outcome posted late still shows the map of its own moment; without it, the map now.
    pub async fn map_png_at(&self, campaign: Uuid, seq: Option<i64>) -> Result<Vec<u8>, BotError> {
        self.adjutant().map_png_at(campaign, seq).await
    }

    /// Uploads a PNG to Discourse (`POST /uploads.json`, `upload_type=composer`,
    /// `synchronous=true`) and returns what a post shows it by.
    pub async fn upload_to_discourse(&self, png: &[u8]) -> Result<Upload, BotError> {
        Forum::new(&self.http, &self.config).upload(png).await
    }

    fn adjutant(&self) -> Adjutant<'_> {
        Adjutant { http: &self.http, url: &self.config.adjutant_url, token: &self.config.bot_token }
    }
}
