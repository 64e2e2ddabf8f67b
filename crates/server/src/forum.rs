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
        .or_else(|| line.strip_prefix("<sub>").and_then(|rest| rest.strip_suffix("</sub>")))?;
    Witness::parse(inner)
}

/// The outcome a post's text is the reply for: read off its LAST line only, which must be one
/// of the two marker lines exactly as written above. A marker anywhere else (quoted by a
/// player, or typed into a name — where the renderers escape it anyway) does not count.
pub fn trailing_marker(raw: &str) -> Option<Uuid> {
    let last = raw.trim_end().rsplit('\n').next()?.trim_end_matches('\r');
    let inner = last
        .strip_prefix("[size=1][color=gray]")
        .and_then(|rest| rest.strip_suffix("[/color][/size]"))
        .or_else(|| last.strip_prefix("<sub>").and_then(|rest| rest.strip_suffix("</sub>")))?;
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
