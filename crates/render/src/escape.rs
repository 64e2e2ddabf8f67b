//! Text people wrote (a name, a topic, a reason) inside forum text: escaped so that it shows as
//! typed in Markdown and in BBCode, never as markup, a mention, a link or reordered text.

/// Invisible, and breaks what forums would read as a mention (`@name`), a hashtag or heading
/// (`#name`) or a link (`http://`).
pub(crate) const ZWSP: char = '\u{200B}';

/// Characters Markdown (CommonMark, and Discourse's extensions) gives a meaning inline; in
/// people's text they are backslash-escaped in Markdown, and character references in BBCode
/// (which Discourse reads as Markdown too).
const MARKDOWN_PUNCTUATION: [char; 8] = ['\\', '*', '_', '`', '[', ']', '~', '|'];

/// Text people wrote (a name, a topic, a reason), as Markdown that shows exactly those
/// characters: Markdown punctuation backslash-escaped, `<` `>` `&` as entities (no HTML),
/// `@` and `#` followed by a zero-width space (no mention, no hashtag, no heading), `://`
/// broken the same way (no autolink), and line breaks as spaces.
pub fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    push_markdown(&mut out, text);
    out
}

/// [`escape_markdown`] of `text`, written at the end of `out`.
pub(crate) fn push_markdown(out: &mut String, text: &str) {
    escaped(out, text, |c, rest, out| match c {
        c if MARKDOWN_PUNCTUATION.contains(&c) => {
            out.push('\\');
            out.push(c);
        }
        c => shown_alike(c, rest, out),
    });
}

/// Text people wrote, as BBCode that shows exactly those characters, also when the forum reads
/// the post as Markdown (Discourse takes BBCode posts as Markdown with BBCode): `[` `]`, the
/// Markdown punctuation and `<` `>` `&` as character references (`&#91;` shows `[` on phpBB,
/// Discourse and most BBCode forums), `@`, `#` and `://` broken by a zero-width space, and line
/// breaks as spaces.
pub fn escape_bbcode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    push_bbcode(&mut out, text);
    out
}

/// [`escape_bbcode`] of `text`, written at the end of `out`.
pub(crate) fn push_bbcode(out: &mut String, text: &str) {
    escaped(out, text, |c, rest, out| match c {
        c if MARKDOWN_PUNCTUATION.contains(&c) => {
            use std::fmt::Write;
            let _ = write!(out, "&#{};", u32::from(c));
        }
        c => shown_alike(c, rest, out),
    });
}

/// `text` escaped a character at a time by `dialect` (after [`shown_plain`]), but for the runs
/// of characters that neither dialect changes, copied as they are; written at the end of `out`,
/// and escaped as it would be on its own (what `out` held before does not change it).
fn escaped(out: &mut String, text: &str, dialect: impl Fn(char, &mut std::str::Chars, &mut String)) {
    let start = out.len();
    out.reserve(text.len() + 8);
    let mut rest = text.chars();
    loop {
        let left = rest.as_str();
        let plain = left.bytes().position(|b| !unchanged(b)).unwrap_or(left.len());
        out.push_str(&left[..plain]);
        rest = left[plain..].chars();
        let Some(c) = rest.next() else { return };
        if !shown_plain(c, &mut rest, out, start) {
            dialect(c, &mut rest, out);
        }
    }
}

/// An ASCII character both dialects show as it is, wherever it stands (a `w` may start a
/// `www.` address, a `:` a `://`).
fn unchanged(b: u8) -> bool {
    (b.is_ascii_graphic() || b == b' ') && !b"\\*_`[]~|<>&@#:wW".contains(&b)
}

/// What both dialects escape alike: `<` `>` `&` as entities, `@` `#` and `://` broken by a
/// zero-width space, line breaks as spaces.
fn shown_alike(c: char, rest: &mut std::str::Chars, out: &mut String) {
    match c {
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '&' => out.push_str("&amp;"),
        '@' | '#' => {
            out.push(c);
            out.push(ZWSP);
        }
        ':' if rest.clone().next() == Some('/') => {
            out.push(':');
            out.push(ZWSP);
        }
        c if breaks_line(c) => out.push(' '),
        c => out.push(c),
    }
}

/// What both dialects show the same way, written to `out` (true when `c` was): a character
/// that is not seen but reorders or hides text shows as its code point, "(U+202E)"; and a bare
/// `www.` address, which Discourse, GitHub-flavoured Markdown and many BBCode boards make a link
/// of, gets a zero-width space after its "www" so that it stays text.
/// `start` is where the text's own escaping begins in `out`.
fn shown_plain(c: char, rest: &mut std::str::Chars, out: &mut String, start: usize) -> bool {
    if adjutant_rules::words::invisible(c) {
        use std::fmt::Write;
        let _ = write!(out, "(U+{:04X})", c as u32);
        return true;
    }
    let w = |c: Option<char>| c.is_some_and(|c| c.eq_ignore_ascii_case(&'w'));
    if w(Some(c)) && !out[start..].chars().next_back().is_some_and(char::is_alphanumeric) {
        let mut ahead = rest.clone();
        if w(ahead.next()) && w(ahead.next()) && ahead.next() == Some('.') {
            out.push(c);
            out.extend(rest.by_ref().take(2));
            out.push(ZWSP);
            return true;
        }
    }
    false
}

/// Control characters and Unicode's line and paragraph separators: the input refuses them,
/// and older data that holds one still renders on one line.
pub(crate) fn breaks_line(c: char) -> bool {
    c.is_control() || c == '\u{2028}' || c == '\u{2029}'
}

/// A Markdown list item's text, written at the end of `out`: escaped where it starts with
/// something Markdown would read as the start of a block inside the item (`- x`, `+ x`, `= x`,
/// `1. x`, `1) x`, or spaces that would make an indented code block).
pub(crate) fn push_markdown_line(out: &mut String, line: &str) {
    let line = line.trim_start();
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if line.starts_with(['-', '+', '=']) {
        out.push('\\');
    } else if digits > 0 && line[digits..].starts_with(['.', ')']) {
        out.push_str(&line[..digits]);
        out.push('\\');
        out.push_str(&line[digits..]);
        return;
    }
    out.push_str(line);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs of plain characters are copied; each character either dialect changes is changed
    /// where it stands, at the start, the end and between runs.
    #[test]
    fn plain_runs_are_copied_and_the_rest_escaped_where_it_stands() {
        let z = ZWSP;
        for (text, markdown, bbcode) in [
            ("", String::new(), String::new()),
            ("Hex 0602, turn 3.", "Hex 0602, turn 3.".into(), "Hex 0602, turn 3.".into()),
            ("[b]x[/b]", "\\[b\\]x\\[/b\\]".into(), "&#91;b&#93;x&#91;/b&#93;".into()),
            ("a*b_c", "a\\*b\\_c".into(), "a&#42;b&#95;c".into()),
            ("@all #1", format!("@{z}all #{z}1"), format!("@{z}all #{z}1")),
            ("see http://x or a:b", format!("see http:{z}//x or a:b"), format!("see http:{z}//x or a:b")),
            ("<i>&", "&lt;i&gt;&amp;".into(), "&lt;i&gt;&amp;".into()),
            ("go www.x.org, wow www", format!("go www{z}.x.org, wow www"), format!("go www{z}.x.org, wow www")),
            ("WWW.X swww.x", format!("WWW{z}.X swww.x"), format!("WWW{z}.X swww.x")),
            ("line\nbreak\u{2028}é\u{202E}!", "line break é(U+202E)!".into(), "line break é(U+202E)!".into()),
        ] {
            assert_eq!(escape_markdown(text), markdown, "{text:?}");
            assert_eq!(escape_bbcode(text), bbcode, "{text:?}");
        }
    }

    /// A piece written at the end of a string is escaped as it would be alone: what the string
    /// held before (here a word ending in a letter, before a bare `www.` address) changes nothing.
    #[test]
    fn a_piece_pushed_after_others_is_escaped_as_if_alone() {
        for prefix in ["", "Mac", "Mac ", "1", "**", "[b]"] {
            for text in ["www.x.org", "WWW.x.org and www.y", "a @b #c http://d", "*_`[]~|\\", "x\u{202E}y\nz"] {
                let mut markdown = prefix.to_owned();
                push_markdown(&mut markdown, text);
                assert_eq!(markdown, format!("{prefix}{}", escape_markdown(text)), "{prefix:?} then {text:?}");
                let mut bbcode = prefix.to_owned();
                push_bbcode(&mut bbcode, text);
                assert_eq!(bbcode, format!("{prefix}{}", escape_bbcode(text)), "{prefix:?} then {text:?}");
            }
        }
        // The case the start matters for: alone, the address is broken; after "Mac" in the same
        // string it would not be, were the string's earlier text looked at.
        assert_ne!(escape_markdown("www.x.org"), "www.x.org");
    }
}
