//! Text people type — names, seal topics and choices, reasons, notes, resolver inputs — as it
//! is accepted at the door: one line, no control characters. The rule lives here once; the
//! request types point their OpenAPI schema at [`Name`] or [`Line`] so the description says
//! the same as the check.
//!
//! Such text is data everywhere after: the forum renderers (`adjutant_render::text`) quote it
//! so that it shows as the characters typed, never as markup.

use serde_json::Value;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;

use crate::error::{ApiResult, AppError};

/// The OpenAPI `pattern` of one-line text: no C0 or C1 control character (newlines and tabs
/// included), no Unicode line or paragraph separator, and no space at either end. With the
/// lengths, exactly what [`check_name`] and [`check_line`] accept: nothing is trimmed, so the
/// schema and the server cannot disagree about where a text starts and ends.
pub const ONE_LINE_PATTERN: &str = "^[^\\u0000-\\u001F\\u007F-\\u009F\\u2028\\u2029 ]([^\\u0000-\\u001F\\u007F-\\u009F\\u2028\\u2029]*[^\\u0000-\\u001F\\u007F-\\u009F\\u2028\\u2029 ])?$";

/// The longest name, in characters.
pub const NAME_MAX: usize = 80;

/// The longest free line (a reason, a note's text), in characters.
pub const LINE_MAX: usize = 1000;

/// Whether a character may not appear in text people type.
pub fn forbidden(c: char) -> bool {
    c.is_control() || c == '\u{2028}' || c == '\u{2029}'
}

/// The OpenAPI `pattern` of a name: one line (as [`ONE_LINE_PATTERN`]), and no bidirectional
/// control or zero-width character ([`adjutant_rules::words::invisible`]), so that no name can
/// turn the text around it back to front or pass for another.
pub fn name_pattern() -> String {
    ONE_LINE_PATTERN.replace("\\u2028\\u2029", &format!("\\u2028\\u2029{}", adjutant_rules::words::INVISIBLE_CLASS))
}

/// A name shown to people (a moderator, player, bot, campaign): 1 to 80 characters, one line,
/// no space at either end, nothing invisible. Schema only; the check is [`check_name`].
pub struct Name;

impl utoipa::PartialSchema for Name {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(NAME_MAX))
            .pattern(Some(name_pattern()))
            .description(Some(
                "1 to 80 characters, one line: no control characters (newlines included), no bidirectional control or zero-width character, no space at either end",
            ))
            .into()
    }
}

impl utoipa::ToSchema for Name {}

/// A line of free text (a reason): 1 to 1000 characters, one line. Schema only; the check is
/// [`check_line`].
pub struct Line;

impl utoipa::PartialSchema for Line {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(LINE_MAX))
            .pattern(Some(ONE_LINE_PATTERN))
            .description(Some(
                "1 to 1000 characters, one line: no control characters (newlines included), no space at either end",
            ))
            .into()
    }
}

impl utoipa::ToSchema for Line {}

fn refuse(field: &str, rule: &str, what: &str, max: usize) -> AppError {
    AppError::unprocessable(field, rule, one_line_detail(what, max))
}

/// What a refused line of free text is told.
pub fn one_line_detail(what: &str, max: usize) -> String {
    format!(
        "{what} has 1 to {max} characters on one line, with no control characters (newlines included) \
         and no space at either end"
    )
}

/// Whether `text` is one line of 1 to `max` characters with no space at either end: what
/// [`ONE_LINE_PATTERN`] says.
pub fn is_one_line(text: &str, max: usize) -> bool {
    let count = text.chars().count();
    (1..=max).contains(&count) && !text.chars().any(forbidden) && !text.starts_with(' ') && !text.ends_with(' ')
}

/// A name: 1 to 80 characters, one line, no space at either end, nothing invisible.
pub fn check_name(field: &str, name: &str) -> ApiResult<String> {
    if !is_one_line(name, NAME_MAX) {
        return Err(refuse(field, "name.format", "a name", NAME_MAX));
    }
    if let Some(c) = name.chars().find(|c| adjutant_rules::words::invisible(*c)) {
        return Err(AppError::unprocessable(
            field,
            "name.invisible",
            format!(
                "a name may not hold U+{:04X}, a character that is not seen but changes how the text around it shows",
                c as u32
            ),
        ));
    }
    Ok(name.to_owned())
}

/// A line of free text under `rule`: 1 to `max` characters, one line, no space at either end.
pub fn check_line(field: &str, rule: &str, what: &str, text: &str, max: usize) -> ApiResult<String> {
    if !is_one_line(text, max) {
        return Err(refuse(field, rule, what, max));
    }
    Ok(text.to_owned())
}

/// Every string in a post's body (keys included), at any depth, is one line: a note, a seal,
/// a reason, a resolver's names. The path below `value` (`""`, `.inputs.names[1]`) of the first
/// string, or key, that is not.
pub fn multi_line_at(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if s.chars().any(forbidden) => Some(String::new()),
        Value::Array(items) => {
            items.iter().enumerate().find_map(|(i, item)| multi_line_at(item).map(|p| format!("[{i}]{p}")))
        }
        Value::Object(map) => map.iter().find_map(|(key, item)| {
            if key.chars().any(forbidden) {
                return Some(String::new());
            }
            multi_line_at(item).map(|p| format!(".{key}{p}"))
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_refuse_bidi_controls_and_zero_width_characters() {
        for bad in ["Grant\u{202E}tnarg", "Gr\u{200B}ant", "\u{2066}Lee\u{2069}", "Lee\u{FEFF}"] {
            let e = check_name("body.name", bad).unwrap_err();
            assert!(e.to_string().contains("U+"), "{e}");
        }
        // The schema says the same: the class is in the name's pattern, not in a line's.
        assert!(name_pattern().contains("\\u202A-\\u202E") && !ONE_LINE_PATTERN.contains("\\u202A"));
        assert_eq!(name_pattern().matches("\\u200B-\\u200F").count(), 3, "{}", name_pattern());
        // A line (a note, a reason) may hold them; the forum texts show them.
        assert!(check_line("body.text", "note.text", "a note", "a\u{202E}b", LINE_MAX).is_ok());
    }

    #[test]
    fn one_line_only() {
        assert_eq!(check_name("body.name", "Alice @staff <b>x</b>").unwrap(), "Alice @staff <b>x</b>");
        for bad in [
            "",
            "   ",
            " Alice",
            "Alice ",
            "a\nb",
            "a\rb",
            "a\tb",
            "a\u{85}b",
            "a\u{2028}b",
            "a\u{7f}b",
            &"x".repeat(81),
        ] {
            assert!(check_name("body.name", bad).is_err(), "{bad:?}");
        }
        assert!(check_line("body.body.reason", "rollback.reason", "a reason", "typo\nCheck: 1", LINE_MAX).is_err());
        assert_eq!(
            multi_line_at(&json!({"topic": "a", "inputs": {"names": ["x", "y\nz"]}})).as_deref(),
            Some(".inputs.names[1]")
        );
        assert_eq!(multi_line_at(&json!({"a\nb": 1})).as_deref(), Some(""));
        assert_eq!(multi_line_at(&json!({"topic": "a [b] @c", "n": [1, 2, {"k": "v"}]})), None);
    }

    #[test]
    fn the_schema_pattern_says_the_same_as_the_check() {
        // The pattern's class, read by hand: C0, DEL and C1, and the two separators.
        for c in ['\u{0}', '\n', '\u{1f}', '\u{7f}', '\u{9f}', '\u{2028}', '\u{2029}'] {
            assert!(forbidden(c), "{c:?}");
        }
        for c in [' ', '~', '\u{a0}', '@', '<', '[', '\u{200b}'] {
            assert!(!forbidden(c), "{c:?}");
        }
        assert!(ONE_LINE_PATTERN.contains("\\u0000-\\u001F\\u007F-\\u009F\\u2028\\u2029 ]"));
    }

    #[test]
    fn the_openapi_description_carries_the_rule() {
        let doc = serde_json::to_value(crate::openapi::description(crate::routes::router().into_openapi())).unwrap();
        let schemas = &doc["components"]["schemas"];
        // Every `name` a request sends is checked as a name, so the description says so at each:
        // the bodies of every operation, each variant of a body with several.
        let mut named = Vec::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                let Some(reference) =
                    operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].as_str()
                else {
                    continue;
                };
                let body = reference.trim_start_matches("#/components/schemas/");
                let variants =
                    schemas[body]["oneOf"].as_array().cloned().unwrap_or_else(|| vec![schemas[body].clone()]);
                for variant in variants {
                    if let Some(name) = variant["properties"].get("name") {
                        assert_eq!(name["$ref"], "#/components/schemas/Name", "{method} {path}: {body}.name is {name}");
                        named.push(format!("{method} {path}"));
                    }
                }
            }
        }
        for expected in [
            "post /v1/moderators",
            "post /v1/campaigns",
            "post /v1/campaigns/{id}/players",
            "post /v1/campaigns/{id}/bots",
            "post /v1/campaigns/{id}/players/{player_id}/replace",
        ] {
            assert!(named.iter().any(|n| n == expected), "{expected} sends a name: {named:?}");
        }
        assert_eq!(schemas["Name"]["pattern"], name_pattern());
        assert_eq!(schemas["Name"]["maxLength"], NAME_MAX);
        assert_eq!(schemas["Name"]["minLength"], 1);
    }
}
