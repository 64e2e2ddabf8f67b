//! Forum-ready text for outcomes, in BBCode and Markdown.
//!
//! Every text ends with a line a reader can use to check the numbers, and a marker line
//! (`adjutant:outcome:<id>`, the text's last line) by which the bot finds its own earlier reply
//! after a crash. Everything people wrote in it (names, topics, reasons) is escaped by
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
pub fn outcome_text(id: Uuid, kind: &str, headline: &str, data: &Value) -> ForumText {
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
    ForumText {
        bbcode: format!("{}\n{}", body.bbcode.trim_end(), bbcode_marker_line(id)),
        markdown: format!("{}\n\n{}", body.markdown.trim_end(), markdown_marker_line(id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_counts_only_as_the_last_line_exactly() {
        let id = Uuid::new_v4();
        let other = Uuid::new_v4();
        let text = outcome_text(id, "rollback", &format!("Reason: {}", bbcode_marker_line(other)), &Value::Null);
        assert_eq!(trailing_marker(&text.bbcode), Some(id));
        assert_eq!(trailing_marker(&text.markdown), Some(id));
        assert_eq!(trailing_marker(&format!("{}\n", text.bbcode)), Some(id));
        assert_eq!(trailing_marker(&format!("{}\nthanks", text.bbcode)), None);
        assert_eq!(trailing_marker(&format!("x {}", bbcode_marker_line(id))), None);
        assert_eq!(trailing_marker(&format!("[quote]{}[/quote]", marker(id))), None);
        assert_eq!(trailing_marker(&marker(id)), None);
        assert_eq!(trailing_marker(&bbcode_marker_line(id).to_uppercase()), None);
    }
}
