//! Forum-ready text for outcomes, in BBCode and Markdown.
//!
//! Every text ends with a line a reader can use to check the numbers, and a marker
//! `adjutant:outcome:<id>` by which the bot finds its own earlier reply after a crash.

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

/// The text of one outcome.
pub fn outcome_text(id: Uuid, kind: &str, headline: &str, data: &Value) -> ForumText {
    let body = match kind {
        // Adjutant's own records, not a rule's: their headline says it all.
        "rollback" | "umpire" => {
            let title = if kind == "rollback" { "Correction" } else { "Umpire" };
            adjutant_render::ForumText {
                bbcode: format!("[b]{title}[/b]\n{}", headline.replace(['[', ']'], "")),
                markdown: format!("**{title}**\n\n{}", headline.replace(['*', '_', '`', '<', '>'], "")),
            }
        }
        _ => adjutant_render::outcome_text(kind, data),
    };
    let marker = marker(id);
    ForumText {
        bbcode: format!("{}\n[size=1][color=gray]{marker}[/color][/size]", body.bbcode.trim_end()),
        markdown: format!("{}\n\n<sub>{marker}</sub>", body.markdown.trim_end()),
    }
}
