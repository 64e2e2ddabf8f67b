//! What the bot writes for an outcome: the server's text in the target's markup, the player
//! whose turn begins mentioned ahead of it, and the map picture placed where the witness and
//! marker lines stay readable. Pure: the targets do the sending.

use adjutant_forum::{discord_markdown, discord_message, witness_of};
use serde_json::{json, Value};

use crate::feed::{FeedOutcome, FeedText, Mention};
use crate::Format;

impl FeedText {
    pub(crate) fn in_format(&self, format: Format) -> &str {
        match format {
            Format::Markdown => &self.markdown,
            Format::Bbcode => &self.bbcode,
        }
    }
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

/// A Discourse reply's raw text: the outcome in `format`, after an `@mention` of the player
/// whose turn begins (and only that player).
pub(crate) fn discourse_raw(outcome: &FeedOutcome, format: Format) -> String {
    let raw = outcome.text.in_format(format).to_owned();
    match outcome.mention.as_ref().and_then(Mention::discourse) {
        Some(at) => format!("{at}\n\n{raw}"),
        None => raw,
    }
}

/// A Discord webhook message's JSON: the outcome in Discord Markdown within Discord's limits,
/// the overflow in embeds. The player whose turn begins, and only that player, may be pinged:
/// `allowed_mentions` lets Discord ping that one user and nothing else the text may hold.
pub(crate) fn discord_body(outcome: &FeedOutcome) -> Value {
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
    body
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

#[cfg(test)]
mod tests {
    use adjutant_forum::{trailing_marker, Witness};
    use adjutant_render::forum_text;
    use uuid::Uuid;

    use super::*;

    #[test]
    fn the_map_goes_above_the_witness_and_the_marker() {
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
}
