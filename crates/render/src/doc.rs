//! The small document every forum text is built as — a title, bullet lines with bold parts and
//! a check line — written out in BBCode and in Markdown, so the two always say the same thing.

use serde::Serialize;

use crate::escape::{push_bbcode, push_markdown, push_markdown_line};

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
        let mut text = ForumText { bbcode: String::new(), markdown: String::new() };
        self.write(&mut text);
        text
    }

    /// The document in both dialects, written at the end of `text`'s two strings.
    fn write(&self, text: &mut ForumText) {
        let size = self.title.len()
            + self.lines.iter().flatten().map(|part| part.text().len() + 8).sum::<usize>()
            + self.check.as_ref().map_or(0, String::len)
            + 32;
        text.bbcode.reserve(size + 16);
        text.markdown.reserve(size);
        self.bbcode(&mut text.bbcode);
        self.markdown(&mut text.markdown);
    }

    fn markdown(&self, out: &mut String) {
        out.push_str("**");
        push_markdown(out, &self.title);
        out.push_str("**\n\n");
        let mut line_text = String::new();
        for line in &self.lines {
            line_text.clear();
            for part in line {
                match part {
                    Part::Plain(t) => push_markdown(&mut line_text, t),
                    Part::Bold(t) => {
                        line_text.push_str("**");
                        push_markdown(&mut line_text, t);
                        line_text.push_str("**");
                    }
                }
            }
            out.push_str("- ");
            push_markdown_line(out, &line_text);
            out.push('\n');
        }
        // The check line holds numbers, hexes and the dice stream's text, never a player's
        // words, and stays unescaped so it can be copied as it reads.
        if let Some(check) = &self.check {
            out.push('\n');
            out.push_str(check);
            out.push('\n');
        }
    }

    fn bbcode(&self, out: &mut String) {
        out.push_str("[b]");
        push_bbcode(out, &self.title);
        out.push_str("[/b]\n");
        if !self.lines.is_empty() {
            out.push_str("[list]\n");
            for line in &self.lines {
                out.push_str("[*]");
                for part in line {
                    match part {
                        Part::Plain(t) => push_bbcode(out, t),
                        Part::Bold(t) => {
                            out.push_str("[b]");
                            push_bbcode(out, t);
                            out.push_str("[/b]");
                        }
                    }
                }
                out.push('\n');
            }
            out.push_str("[/list]\n");
        }
        // As in Markdown, the check line is ours alone and stays as it reads.
        if let Some(check) = &self.check {
            out.push_str(check);
            out.push('\n');
        }
    }
}

impl Part {
    fn text(&self) -> &str {
        match self {
            Part::Plain(t) | Part::Bold(t) => t,
        }
    }
}
