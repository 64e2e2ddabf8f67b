//! Text people wrote (a name, a topic, a reason) inside forum text: escaped so that it shows as
//! typed in Markdown and in BBCode, never as markup, a mention, a link or reordered text.

/// Invisible, and breaks what forums would read as a mention (`@name`), a hashtag or heading
/// (`#name`) or a link (`http://`).
pub(crate) const ZWSP: char = '\u{200B}';

/// Characters Markdown (CommonMark, and Discourse's extensions) gives a meaning inline; they
/// are backslash-escaped in people's text.
const MARKDOWN_PUNCTUATION: [char; 8] = ['\\', '*', '_', '`', '[', ']', '~', '|'];

/// Text people wrote (a name, a topic, a reason), as Markdown that shows exactly those
/// characters: Markdown punctuation backslash-escaped, `<` `>` `&` as entities (no HTML),
/// `@` and `#` followed by a zero-width space (no mention, no hashtag, no heading), `://`
/// broken the same way (no autolink), and line breaks as spaces.
pub fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if shown_plain(c, &mut chars, &mut out) {
            continue;
        }
        match c {
            c if MARKDOWN_PUNCTUATION.contains(&c) => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' | '#' => {
                out.push(c);
                out.push(ZWSP);
            }
            ':' if chars.peek() == Some(&'/') => {
                out.push(':');
                out.push(ZWSP);
            }
            c if breaks_line(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text people wrote, as BBCode that shows exactly those characters, also when the forum reads
/// the post as Markdown (Discourse takes BBCode posts as Markdown with BBCode): `[` `]`, the
/// Markdown punctuation and `<` `>` `&` as character references (`&#91;` shows `[` on phpBB,
/// Discourse and most BBCode forums), `@`, `#` and `://` broken by a zero-width space, and line
/// breaks as spaces.
pub fn escape_bbcode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if shown_plain(c, &mut chars, &mut out) {
            continue;
        }
        match c {
            '[' | ']' | '\\' | '*' | '_' | '`' | '~' | '|' => out.push_str(&format!("&#{};", u32::from(c))),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' | '#' => {
                out.push(c);
                out.push(ZWSP);
            }
            ':' if chars.peek() == Some(&'/') => {
                out.push(':');
                out.push(ZWSP);
            }
            c if breaks_line(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Control characters and Unicode's line and paragraph separators: the input refuses them,
/// and older data that holds one still renders on one line.
/// What both dialects show the same way, written to `out` (true when `c` was): a character
/// that is not seen but reorders or hides text shows as its code point, "(U+202E)"; and a bare
/// `www.` address, which Discourse, GitHub-flavoured Markdown and many BBCode boards make a link
/// of, gets a zero-width space after its "www" so that it stays text.
fn shown_plain(c: char, rest: &mut std::iter::Peekable<std::str::Chars>, out: &mut String) -> bool {
    if adjutant_rules::words::invisible(c) {
        out.push_str(&format!("(U+{:04X})", c as u32));
        return true;
    }
    let w = |c: Option<char>| c.is_some_and(|c| c.eq_ignore_ascii_case(&'w'));
    if w(Some(c)) && !out.chars().next_back().is_some_and(char::is_alphanumeric) {
        let mut ahead = rest.clone();
        if w(ahead.next()) && w(ahead.next()) && ahead.next() == Some('.') {
            out.push(c);
            out.extend(rest.take(2));
            out.push(ZWSP);
            return true;
        }
    }
    false
}

pub(crate) fn breaks_line(c: char) -> bool {
    c.is_control() || c == '\u{2028}' || c == '\u{2029}'
}

/// A Markdown list item's text, escaped, when it starts with something Markdown would read as
/// the start of a block inside the item (`- x`, `+ x`, `= x`, `1. x`, `1) x`, or spaces that
/// would make an indented code block).
pub(crate) fn markdown_line_start(line: String) -> String {
    let line = line.trim_start().to_owned();
    if line.starts_with(['-', '+', '=']) {
        return format!("\\{line}");
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && line[digits..].starts_with(['.', ')']) {
        return format!("{}\\{}", &line[..digits], &line[digits..]);
    }
    line
}
