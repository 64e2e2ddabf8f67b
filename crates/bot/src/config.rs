//! What the bot is told: where Adjutant is, where the outcomes go and how, and how patient to be.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use uuid::Uuid;

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

    pub(crate) fn extension(self) -> &'static str {
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
}
