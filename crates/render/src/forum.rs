//! An outcome as the forum shows it: what happened, in BBCode and Markdown, then the witness line
//! and the marker line (`adjutant_forum`) that the bot and `adjutant verify` read back.
//! Everything people wrote in it (names, topics, reasons) is escaped so that it shows as typed,
//! never as markup.

use adjutant_forum::{bbcode_marker_line, markdown_marker_line, Witness};
use uuid::Uuid;

use crate::escape::{push_bbcode, push_markdown};
use crate::text::{outcome_text, ForumText, Stored};

/// The text of one outcome as the forum shows it: what happened (`outcome_text`, or the
/// headline of Adjutant's own records), then the witness line when the post is known, then the
/// marker line.
pub fn forum_text<'a>(
    id: Uuid,
    kind: &str,
    headline: &str,
    data: impl Into<Stored<'a>>,
    witness: Option<&Witness>,
) -> ForumText {
    let mut text = match kind {
        // Adjutant's own records, not a rule's: their headline says it all.
        "rollback" | "umpire" => {
            let title = if kind == "rollback" { "Correction" } else { "Umpire" };
            let mut text = ForumText { bbcode: format!("[b]{title}[/b]\n"), markdown: format!("**{title}**\n\n") };
            push_bbcode(&mut text.bbcode, headline);
            push_markdown(&mut text.markdown, headline);
            text
        }
        _ => outcome_text(kind, data),
    };
    let witness = witness.map(Witness::text);
    let ends = witness.as_ref().map_or(0, String::len) + 128;
    for (out, gap) in [(&mut text.bbcode, "\n"), (&mut text.markdown, "\n\n")] {
        out.truncate(out.trim_end().len());
        out.reserve(ends);
        out.push_str(gap);
    }
    if let Some(witness) = witness {
        use std::fmt::Write;
        let _ = writeln!(text.bbcode, "[size=1][color=gray]{witness}[/color][/size]");
        let _ = write!(text.markdown, "<sub>{witness}</sub>\n\n");
    }
    text.bbcode.push_str(&bbcode_marker_line(id));
    text.markdown.push_str(&markdown_marker_line(id));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use adjutant_forum::{discord_markdown, marker, trailing_marker, witness_of};
    use serde_json::Value;

    #[test]
    fn the_marker_counts_only_as_the_last_line_exactly() {
        let id = Uuid::new_v4();
        let other = Uuid::new_v4();
        let text = forum_text(id, "rollback", &format!("Reason: {}", bbcode_marker_line(other)), &Value::Null, None);
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
        let text = forum_text(id, "umpire", "Umpire: adjutant:post:1 hash:x", &Value::Null, Some(&witness));
        assert_eq!(witness_of(&text.bbcode), Some(witness.clone()));
        assert_eq!(witness_of(&text.markdown), Some(witness.clone()));
        let discord = discord_markdown(&text.markdown);
        assert!(!discord.contains("<sub>"), "{discord}");
        assert!(discord.contains(&format!("\n-# {}\n", witness.text())), "{discord}");
        assert_eq!(witness_of(&discord), Some(witness.clone()));
        assert_eq!(trailing_marker(&text.bbcode), Some(id));
        // Only the line right before the marker counts.
        let plain = forum_text(
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
    use crate::escape::escape_markdown;
    use adjutant_forum::{discord_markdown, discord_marker_line, discord_message, trailing_marker, witness_of};
    use serde_json::Value;

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
                // The zero-width space that keeps a bare www. address from being linked.
                ZWSP if out.to_lowercase().ends_with("www") && chars.peek() == Some(&'.') => {}
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
            // Controls show as spaces, invisible characters as their code points.
            let expected: String = text
                .chars()
                .map(|c| match c {
                    c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => " ".to_owned(),
                    c if adjutant_rules::words::invisible(c) => format!("(U+{:04X})", c as u32),
                    c => c.to_string(),
                })
                .collect();
            let discord = discord_markdown(&escape_markdown(&text));
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
            let template = discord_markdown(&forum_text(id, "rollback", hole, &Value::Null, Some(&witness)).markdown);
            let filled = discord_markdown(&forum_text(id, "rollback", &text, &Value::Null, Some(&witness)).markdown);
            proptest::prop_assert_eq!(witness_of(&filled), Some(witness));
            // (Text that is all blank leaves no line of its own: the template's blank lines close up.)
            if !escape_markdown(&text).trim().is_empty() {
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
        let text = forum_text(id, "rollback", "<@123> & @everyone **x** &lt;", &Value::Null, None);
        let discord = discord_markdown(&text.markdown);
        assert_eq!(
            discord,
            format!(
                "**Correction**\n\n\\<@\u{200B}123\\> & @\u{200B}everyone \\*\\*x\\*\\* &lt;\n-# adjutant:outcome:{id}"
            )
        );
        assert!(!discord.contains("<sub>"));
    }
}
