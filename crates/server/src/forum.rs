//! Forum-ready text for outcomes, in BBCode and Markdown.
//!
//! Every text ends with a line a reader can use to check the numbers, a witness line naming the
//! post the outcome came from, its chain hash and the server's receipt signature
//! (`adjutant:post:<seq> hash:<hash> key:<key id> sig:<signature>`), and a marker line
//! (`adjutant:outcome:<id>`, the text's last line) by which the bot finds its own earlier reply
//! after a crash. The witness line makes the forum thread a record of the log's head outside the
//! database: `adjutant verify --forum-texts` compares it with an export. Everything people wrote in it (names, topics, reasons) is escaped by
//! `adjutant_render::text` so that it shows as typed, never as markup.

use adjutant_render::text::{escape_bbcode, escape_markdown};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ForumText {
    pub bbcode: String,
    pub markdown: String,
}

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
    pub fn of(post: &adjutant_store::Post) -> Self {
        Self {
            seq: post.seq,
            hash: post.hash.clone(),
            key_id: post.receipt.as_ref().map(|r| r.key_id.clone()),
            signature: post.receipt.as_ref().map(|r| r.signature.clone()),
        }
    }

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
/// small and grey as [`outcome_text`] writes it.
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

/// The text of one outcome.
pub fn outcome_text(id: Uuid, kind: &str, headline: &str, data: &Value, witness: Option<&Witness>) -> ForumText {
    let body = match kind {
        // Adjutant's own records, not a rule's: their headline says it all.
        "rollback" | "umpire" => {
            let title = if kind == "rollback" { "Correction" } else { "Umpire" };
            adjutant_render::ForumText {
                bbcode: format!("[b]{title}[/b]\n{}", escape_bbcode(headline)),
                markdown: format!("**{title}**\n\n{}", escape_markdown(headline)),
            }
        }
        _ => adjutant_render::outcome_text(kind, data),
    };
    let (bbcode_witness, markdown_witness) = match witness {
        Some(w) => {
            (format!("[size=1][color=gray]{}[/color][/size]\n", w.text()), format!("<sub>{}</sub>\n\n", w.text()))
        }
        None => (String::new(), String::new()),
    };
    ForumText {
        bbcode: format!("{}\n{bbcode_witness}{}", body.bbcode.trim_end(), bbcode_marker_line(id)),
        markdown: format!("{}\n\n{markdown_witness}{}", body.markdown.trim_end(), markdown_marker_line(id)),
    }
}

/// Discord's limits on one message: 2,000 characters of content; embeds of up to 4,096
/// characters of description each, at most 10, 6,000 characters in all.
pub const DISCORD_CONTENT_MAX: usize = 2000;
pub const DISCORD_EMBED_MAX: usize = 4096;
pub const DISCORD_EMBEDS_MAX: usize = 10;
pub const DISCORD_EMBEDS_TOTAL: usize = 6000;

/// An outcome's Markdown (as `outcome_text` writes it) in Discord's Markdown. The escaping is
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
    fn the_marker_counts_only_as_the_last_line_exactly() {
        let id = Uuid::new_v4();
        let other = Uuid::new_v4();
        let text = outcome_text(id, "rollback", &format!("Reason: {}", bbcode_marker_line(other)), &Value::Null, None);
        assert_eq!(trailing_marker(&text.bbcode), Some(id));
        assert_eq!(trailing_marker(&text.markdown), Some(id));
        assert_eq!(trailing_marker(&format!("{}\n", text.bbcode)), Some(id));
        assert_eq!(trailing_marker(&format!("{}\nthanks", text.bbcode)), None);
        assert_eq!(trailing_marker(&format!("x {}", bbcode_marker_line(id))), None);
        assert_eq!(trailing_marker(&format!("[quote]{}[/quote]", marker(id))), None);
        assert_eq!(trailing_marker(&marker(id)), None);
        assert_eq!(trailing_marker(&bbcode_marker_line(id).to_uppercase()), None);
    }

    #[test]
    fn the_witness_line_names_the_post_its_hash_and_signature() {
        let id = Uuid::new_v4();
        let witness = Witness {
            seq: 12,
            hash: "ab".repeat(32),
            key_id: Some("ed25519:0123456789abcdef".into()),
            signature: Some("cd".repeat(64)),
        };
        let text = outcome_text(id, "umpire", "Umpire: adjutant:post:1 hash:x", &Value::Null, Some(&witness));
        assert_eq!(witness_of(&text.bbcode), Some(witness.clone()));
        assert_eq!(witness_of(&text.markdown), Some(witness.clone()));
        let discord = discord_markdown(&text.markdown);
        assert!(!discord.contains("<sub>"), "{discord}");
        assert!(discord.contains(&format!("\n-# {}\n", witness.text())), "{discord}");
        assert_eq!(witness_of(&discord), Some(witness.clone()));
        assert_eq!(trailing_marker(&text.bbcode), Some(id));
        // Only the line right before the marker counts.
        let plain = outcome_text(
            id,
            "umpire",
            &format!("[size=1][color=gray]{}[/color][/size]", witness.text()),
            &Value::Null,
            None,
        );
        assert_eq!(witness_of(&plain.bbcode), None);
        let unsigned = Witness { key_id: None, signature: None, ..witness };
        assert_eq!(Witness::parse(&unsigned.text()), Some(unsigned));
    }
}

#[cfg(test)]
mod discord_tests {
    use super::*;

    const ZWSP: char = '\u{200B}';

    /// What Discord shows for escaped text: a backslash before punctuation shows the
    /// punctuation; the zero-width space after `@`, `#` and `:` is invisible.
    fn shown_discord(escaped: &str) -> String {
        let mut out = String::new();
        let mut chars = escaped.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek().is_some_and(char::is_ascii_punctuation) => out.extend(chars.next()),
                '@' | '#' | ':' if chars.peek() == Some(&ZWSP) => {
                    out.push(c);
                    chars.next();
                }
                c => out.push(c),
            }
        }
        out
    }

    /// Escaped text holds nothing Discord reads as markup: every character Discord's Markdown
    /// gives a meaning (emphasis, code, strike, spoiler, masked links, `<@…>` mentions, `<t:…>`
    /// times) is backslash-escaped, `@` and `#` are broken (no `@everyone`, no heading), no
    /// `://` makes a link, no entity is left for Discord to show as typed, and it is one line.
    fn is_discord_text(escaped: &str) -> Result<(), String> {
        let mut chars = escaped.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, e)) if e.is_ascii_punctuation() => {}
                    other => return Err(format!("backslash before {other:?} at {at}")),
                },
                '@' | '#' if chars.peek().map(|(_, n)| *n) != Some(ZWSP) => {
                    return Err(format!("{c} not broken at {at}"))
                }
                ':' if escaped[at..].starts_with(":/") => return Err(format!(":/ at {at}")),
                '*' | '_' | '`' | '~' | '|' | '[' | ']' | '<' | '>' => return Err(format!("{c} unescaped at {at}")),
                c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => return Err(format!("{c:?} at {at}")),
                _ => {}
            }
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        #[test]
        fn people_text_shows_as_itself_on_discord(text in "(?s).{0,40}|[@#:/<>&;\\[\\]*_`~|!()lgtamp\\\\\n -]{0,40}") {
            let expected: String =
                text.chars().map(|c| if c.is_control() || c == '\u{2028}' || c == '\u{2029}' { ' ' } else { c }).collect();
            let discord = discord_markdown(&adjutant_render::text::escape_markdown(&text));
            proptest::prop_assert_eq!(shown_discord(&discord), expected);
            if let Err(e) = is_discord_text(&discord) { proptest::prop_assert!(false, "{:?}: {}", discord, e); }

            // In a whole outcome, everything but the people's text is the template's own, and
            // the last line is the marker, which people's text cannot forge or displace.
            let id = Uuid::from_u128(0x5eed);
            let hole = "HOLEHOLEHOLE";
            let witness = Witness {
                seq: 3,
                hash: "ab".repeat(32),
                key_id: Some("k1".into()),
                signature: Some("c2lnbmF0dXJl".into()),
            };
            let template = discord_markdown(&outcome_text(id, "rollback", hole, &Value::Null, Some(&witness)).markdown);
            let filled = discord_markdown(&outcome_text(id, "rollback", &text, &Value::Null, Some(&witness)).markdown);
            proptest::prop_assert_eq!(witness_of(&filled), Some(witness));
            // (Text that is all blank leaves no line of its own: the template's blank lines close up.)
            if !adjutant_render::text::escape_markdown(&text).trim().is_empty() {
                let (pre, post) = template.split_once(hole).unwrap();
                proptest::prop_assert!(filled.starts_with(pre) && filled.ends_with(post), "{:?}", filled);
                let theirs = &filled[pre.len()..filled.len() - post.len()];
                if let Err(e) = is_discord_text(theirs) { proptest::prop_assert!(false, "{:?}: {}", filled, e); }
            }
            let marker_line = discord_marker_line(id);
            proptest::prop_assert_eq!(filled.lines().last(), Some(marker_line.as_str()));
            proptest::prop_assert_eq!(trailing_marker(&filled), Some(id));
            let message = discord_message(&filled);
            proptest::prop_assert_eq!(message.content, filled);
        }
    }

    #[test]
    fn discord_markdown_of_an_outcome() {
        let id = Uuid::from_u128(1);
        let text = outcome_text(id, "rollback", "<@123> & @everyone **x** &lt;", &Value::Null, None);
        let discord = discord_markdown(&text.markdown);
        assert_eq!(
            discord,
            format!(
                "**Correction**\n\n\\<@\u{200B}123\\> & @\u{200B}everyone \\*\\*x\\*\\* &lt;\n-# adjutant:outcome:{id}"
            )
        );
        assert!(!discord.contains("<sub>"));
    }

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
