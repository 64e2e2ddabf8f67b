//! `adjutant bot` on the command line: its flags and environment, and the loop that runs the
//! bot until it is stopped.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use crate::follow::follow_events;
use crate::{Bot, BotConfig, Format, Target, Topics};

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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

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
