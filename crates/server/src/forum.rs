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
    let check = check_line(data);
    let marker = marker(id);
    let mut bbcode = format!("[b]{}[/b]\n{headline}", title(kind));
    let mut markdown = format!("**{}**\n\n{headline}", title(kind));
    if let Some(check) = check {
        bbcode.push_str(&format!("\n[i]Check: {check}[/i]"));
        markdown.push_str(&format!("\n\n*Check: {check}*"));
    }
    bbcode.push_str(&format!("\n[size=1][color=gray]{marker}[/color][/size]"));
    markdown.push_str(&format!("\n\n<sub>{marker}</sub>"));
    ForumText { bbcode, markdown }
}

fn title(kind: &str) -> String {
    let mut words = kind.replace('_', " ");
    if let Some(first) = words.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    words
}

/// "9:51:45 → N = 95145, √N = 308.455831522115, decimals 9–10 = 21", from any result number
/// in the data.
fn check_line(data: &Value) -> Option<String> {
    let r = find(data, "result_number")?;
    let first = r.get("first_digit")?.as_u64()?;
    Some(format!(
        "N = {}, √N = {}, decimals {}–{} = {:02}",
        r.get("n")?,
        r.get("sqrt")?.as_str()?,
        first,
        first + 1,
        r.get("result")?.as_u64()?
    ))
}

fn find<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map.get(key).or_else(|| map.values().find_map(|v| find(v, key))),
        Value::Array(items) => items.iter().find_map(|v| find(v, key)),
        _ => None,
    }
}
