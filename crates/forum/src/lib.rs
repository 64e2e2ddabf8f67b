//! The lines an Adjutant forum text ends with, read and written the same way by the server that
//! renders the texts, the bot that posts them and `adjutant verify` that checks them:
//!
//! - a witness line naming the post the outcome came from, its chain hash and the server's
//!   receipt signature (`adjutant:post:<seq> hash:<hash> key:<key id> sig:<signature>`), which
//!   makes the forum thread a record of the log's head outside the database;
//! - a marker line (`adjutant:outcome:<id>`, the text's last line) by which the bot finds its own
//!   earlier reply after a crash.
//!
//! And Discord's Markdown and limits on one message, for the bot's Discord target.
//!
//! The texts themselves (and the escaping of what people wrote in them) are
//! `adjutant_render`'s; this crate knows only the lines around them, so that a client of the API
//! can read them without the server or the renderer.

use uuid::Uuid;

/// The marker the reference bot searches for.
pub fn marker(id: Uuid) -> String {
    format!("adjutant:outcome:{id}")
}

/// The last line of an outcome's BBCode: its marker, small and grey.
pub fn bbcode_marker_line(id: Uuid) -> String {
    format!("[size=1][color=gray]{}[/color][/size]", marker(id))
}

/// The last line of an outcome's Markdown.
pub fn markdown_marker_line(id: Uuid) -> String {
    format!("<sub>{}</sub>", marker(id))
}

/// The post an outcome came from, as the forum text quotes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Witness {
    pub seq: i64,
    pub hash: String,
    /// The receipt's key id and signature, when the post has one.
    pub key_id: Option<String>,
    pub signature: Option<String>,
}

impl Witness {
    /// `adjutant:post:<seq> hash:<hash> key:<key id> sig:<signature>` (no key and sig for a post
    /// written before receipts were signed).
    pub fn text(&self) -> String {
        let mut text = format!("adjutant:post:{} hash:{}", self.seq, self.hash);
        if let (Some(key_id), Some(signature)) = (&self.key_id, &self.signature) {
            text.push_str(&format!(" key:{key_id} sig:{signature}"));
        }
        text
    }

    /// Reads [`Self::text`] back.
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split(' ');
        let seq = parts.next()?.strip_prefix("adjutant:post:")?.parse().ok()?;
        let hash = parts.next()?.strip_prefix("hash:")?;
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let key_id = parts.next().map(|p| p.strip_prefix("key:").map(str::to_owned));
        let signature = parts.next().map(|p| p.strip_prefix("sig:").map(str::to_owned));
        if parts.next().is_some() {
            return None;
        }
        Some(Self { seq, hash: hash.to_owned(), key_id: key_id.flatten(), signature: signature.flatten() })
    }
}

/// The witness line of a forum text: the line (not counting empty ones) before its marker line,
/// small and grey as `adjutant_render::forum_text` writes it.
pub fn witness_of(raw: &str) -> Option<Witness> {
    trailing_marker(raw)?;
    let mut lines = raw.trim_end().lines().rev().skip(1).map(|l| l.trim_end_matches('\r')).filter(|l| !l.is_empty());
    let line = lines.next()?;
    let inner = line
        .strip_prefix("[size=1][color=gray]")
        .and_then(|rest| rest.strip_suffix("[/color][/size]"))
        .or_else(|| line.strip_prefix("<sub>").and_then(|rest| rest.strip_suffix("</sub>")))
        .or_else(|| line.strip_prefix("-# "))?;
    Witness::parse(inner)
}

/// The last line of an outcome's Discord Markdown: its marker as Discord's small grey subtext.
pub fn discord_marker_line(id: Uuid) -> String {
    format!("-# {}", marker(id))
}

/// The outcome a post's text is the reply for: read off its LAST line only, which must be one
/// of the three marker lines exactly as written above. A marker anywhere else (quoted by a
/// player, or typed into a name — where the renderers escape it anyway) does not count.
pub fn trailing_marker(raw: &str) -> Option<Uuid> {
    let last = raw.trim_end().rsplit('\n').next()?.trim_end_matches('\r');
    let inner = last
        .strip_prefix("[size=1][color=gray]")
        .and_then(|rest| rest.strip_suffix("[/color][/size]"))
        .or_else(|| last.strip_prefix("<sub>").and_then(|rest| rest.strip_suffix("</sub>")))
        .or_else(|| last.strip_prefix("-# "))?;
    let id = Uuid::parse_str(inner.strip_prefix("adjutant:outcome:")?).ok()?;
    (marker(id) == inner).then_some(id)
}

/// Discord's limits on one message: 2,000 characters of content; embeds of up to 4,096
/// characters of description each, at most 10, 6,000 characters in all.
pub const DISCORD_CONTENT_MAX: usize = 2000;
pub const DISCORD_EMBED_MAX: usize = 4096;
pub const DISCORD_EMBEDS_MAX: usize = 10;
pub const DISCORD_EMBEDS_TOTAL: usize = 6000;

/// An outcome's Markdown (as `adjutant_render::forum_text` writes it) in Discord's Markdown. The escaping is
/// the same but for what Discord does not read: it shows HTML entities as typed, so `&lt;`
/// `&gt;` become `\<` `\>` (backslash-escaped, so no `<@…>` mention, `<#…>` channel or
/// `<t:…>` time can form) and `&amp;` becomes `&`; and it has no `<sub>`, so the marker line
/// becomes Discord's small grey subtext line (`-# adjutant:outcome:<id>`).
pub fn discord_markdown(markdown: &str) -> String {
    let trimmed = markdown.trim_end_matches(['\n', '\r']);
    let (body, id) = match trailing_marker(trimmed) {
        Some(id) => (trimmed.rsplit_once('\n').map_or("", |(body, _)| body), Some(id)),
        None => (trimmed, None),
    };
    let mut out = String::with_capacity(body.len() + 64);
    let mut rest = body;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let (replacement, taken) = if rest.starts_with("&lt;") {
            ("\\<", 4)
        } else if rest.starts_with("&gt;") {
            ("\\>", 4)
        } else if rest.starts_with("&amp;") {
            ("&", 5)
        } else {
            ("&", 1)
        };
        out.push_str(replacement);
        rest = &rest[taken..];
    }
    out.push_str(rest);
    // The witness line is small grey subtext too (player text never holds `<sub>`: its `<` is
    // escaped before this point).
    let out = out
        .split('\n')
        .map(|line| {
            let inner = line.strip_prefix("<sub>").and_then(|rest| rest.strip_suffix("</sub>"));
            match inner.filter(|inner| Witness::parse(inner).is_some()) {
                Some(inner) => format!("-# {inner}"),
                None => line.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    match id {
        Some(id) => format!("{}\n{}", out.trim_end(), discord_marker_line(id)),
        None => out,
    }
}

/// One Discord message: its content and the descriptions of its embeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscordMessage {
    pub content: String,
    pub embeds: Vec<String>,
}

/// A Discord text as one message within Discord's limits: as the content when it fits in
/// 2,000 characters; otherwise the content is the marker line alone (so the message is still
/// found by its last line) and the body goes into embeds, cut between lines. What would pass
/// 6,000 characters in all is cut and says so.
pub fn discord_message(text: &str) -> DiscordMessage {
    let text = text.trim_end();
    if text.chars().count() <= DISCORD_CONTENT_MAX {
        return DiscordMessage { content: text.to_owned(), embeds: vec![] };
    }
    let (body, content) = match trailing_marker(text) {
        Some(_) => text.rsplit_once('\n').map_or((text, String::new()), |(b, m)| (b, m.to_owned())),
        None => (text, String::new()),
    };
    const CUT: &str = "… (cut here: the whole outcome is on Adjutant)";
    let budget = DISCORD_EMBEDS_TOTAL - CUT.chars().count() - 1;
    let mut embeds: Vec<String> = vec![String::new()];
    let mut total = 0;
    let mut cut = false;
    for line in body.lines().flat_map(|l| split_chars(l, DISCORD_EMBED_MAX)) {
        let len = line.chars().count() + 1;
        if total + len > budget {
            cut = true;
            break;
        }
        let current = embeds.last_mut().expect("one embed at least");
        if current.chars().count() + len > DISCORD_EMBED_MAX {
            if embeds.len() == DISCORD_EMBEDS_MAX {
                cut = true;
                break;
            }
            embeds.push(String::new());
        }
        let current = embeds.last_mut().expect("one embed at least");
        current.push_str(&line);
        current.push('\n');
        total += len;
    }
    if cut {
        let last = embeds.last_mut().expect("one embed at least");
        if last.chars().count() + CUT.chars().count() > DISCORD_EMBED_MAX {
            let keep: String = last.chars().take(DISCORD_EMBED_MAX - CUT.chars().count() - 1).collect();
            *last = format!("{keep}\n");
        }
        last.push_str(CUT);
    }
    for embed in &mut embeds {
        *embed = embed.trim_end().to_owned();
    }
    embeds.retain(|e| !e.is_empty());
    DiscordMessage { content, embeds }
}

/// A line in pieces of at most `max` characters (only an overlong line is cut).
fn split_chars(line: &str, max: usize) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(max).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_outcomes_go_into_embeds_within_discords_limits() {
        let id = Uuid::from_u128(2);
        let line = "- Union 1st Brigade moves 0101 → 0102 → 0103, and holds.";
        let body: Vec<String> = (0..60).map(|i| format!("{line} {i}")).collect();
        let text = format!("**Turn 3**\n{}\n-# {}", body.join("\n"), marker(id));
        assert!(text.chars().count() > DISCORD_CONTENT_MAX);
        let message = discord_message(&text);
        assert_eq!(message.content, discord_marker_line(id), "the marker stays the content's last line");
        assert_eq!(trailing_marker(&message.content), Some(id));
        assert!(message.embeds.iter().all(|e| e.chars().count() <= DISCORD_EMBED_MAX));
        let joined = message.embeds.join("\n");
        assert_eq!(joined, text.rsplit_once('\n').unwrap().0, "every line, none cut in two");

        // Far too long: embeds up to the total, then a note that it was cut, between lines.
        let body: Vec<String> = (0..400).map(|i| format!("{line} {i}")).collect();
        let text = format!("{}\n-# {}", body.join("\n"), marker(id));
        let message = discord_message(&text);
        let total: usize = message.embeds.iter().map(|e| e.chars().count()).sum();
        assert!(total <= DISCORD_EMBEDS_TOTAL && message.embeds.len() <= DISCORD_EMBEDS_MAX, "{total}");
        assert!(message.embeds.iter().all(|e| e.chars().count() <= DISCORD_EMBED_MAX));
        let last = message.embeds.last().unwrap();
        assert!(last.ends_with("(cut here: the whole outcome is on Adjutant)"), "{last}");
        for embed in &message.embeds {
            for l in embed.lines().filter(|l| l.starts_with("- ")) {
                assert!(body.iter().any(|b| b == l), "a line cut in two: {l:?}");
            }
        }
        // Short: the content, as it is.
        let short = format!("**x**\n-# {}", marker(id));
        assert_eq!(discord_message(&short), DiscordMessage { content: short.clone(), embeds: vec![] });
    }
}
