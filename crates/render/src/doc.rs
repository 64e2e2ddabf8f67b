//! The small document every forum text is built as — a title, bullet lines with bold parts and
//! a check line — written out in BBCode and in Markdown, so the two always say the same thing.

use serde::Serialize;

use crate::escape::{escape_bbcode, escape_markdown, markdown_line_start};

/// One outcome, ready to post.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForumText {
    pub bbcode: String,
    pub markdown: String,
}

/// A piece of a line: plain or bold.
pub(crate) enum Part {
    Plain(String),
    Bold(String),
}

pub(crate) type Line = Vec<Part>;

pub(crate) struct Doc {
    pub title: String,
    pub lines: Vec<Line>,
    pub check: Option<String>,
}

pub(crate) fn plain(text: impl Into<String>) -> Line {
    vec![Part::Plain(text.into())]
}

/// "Casualties: **Union 1**" and the like: plain text, then a bold part, then plain text.
pub(crate) fn mixed(before: impl Into<String>, bold: impl Into<String>, after: impl Into<String>) -> Line {
    vec![Part::Plain(before.into()), Part::Bold(bold.into()), Part::Plain(after.into())]
}

impl Doc {
    pub fn forum_text(&self) -> ForumText {
        ForumText { bbcode: self.bbcode(), markdown: self.markdown() }
    }

    fn markdown(&self) -> String {
        let mut out = format!("**{}**\n\n", escape_markdown(&self.title));
        for line in &self.lines {
            let mut text = String::new();
            for part in line {
                match part {
                    Part::Plain(t) => text.push_str(&escape_markdown(t)),
                    Part::Bold(t) => text.push_str(&format!("**{}**", escape_markdown(t))),
                }
            }
            out.push_str("- ");
            out.push_str(&markdown_line_start(text));
            out.push('\n');
        }
        // The check line holds numbers, hexes and the dice stream's text, never a player's
        // words, and stays unescaped so it can be copied as it reads.
        if let Some(check) = &self.check {
            out.push_str(&format!("\n{check}\n"));
        }
        out
    }

    fn bbcode(&self) -> String {
        let mut out = format!("[b]{}[/b]\n", escape_bbcode(&self.title));
        if !self.lines.is_empty() {
            out.push_str("[list]\n");
            for line in &self.lines {
                out.push_str("[*]");
                for part in line {
                    match part {
                        Part::Plain(t) => out.push_str(&escape_bbcode(t)),
                        Part::Bold(t) => out.push_str(&format!("[b]{}[/b]", escape_bbcode(t))),
                    }
                }
                out.push('\n');
            }
            out.push_str("[/list]\n");
        }
        // As in Markdown, the check line is ours alone and stays as it reads.
        if let Some(check) = &self.check {
            out.push_str(&format!("{check}\n"));
        }
        out
    }
}
