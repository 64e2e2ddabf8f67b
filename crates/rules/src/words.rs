//! Text as people read it: lists in the words the outcomes, refusals and forum texts use, and
//! the characters that change how text shows without showing themselves.

/// A character that is not seen but changes how the text around it shows: the bidirectional
/// controls (U+202E turns "lanigiro" into "original") and the zero-width characters (which hide
/// inside a name so that two names look alike). Names refuse them; forum texts show them as
/// their code points.
pub fn invisible(c: char) -> bool {
    matches!(c,
        '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// The OpenAPI pattern's character class of [`invisible`] characters.
pub const INVISIBLE_CLASS: &str = "\\u061C\\u180E\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u2069\\uFEFF";

/// "0602", "0602 and 0702", "0501, 0602 and 0702" (with `or`: "move, attack or end_turn").
pub fn listed<S: AsRef<str>>(items: &[S], conjunction: &str) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.as_ref().to_owned(),
        Some((last, rest)) => {
            let rest: Vec<&str> = rest.iter().map(AsRef::as_ref).collect();
            format!("{} {conjunction} {}", rest.join(", "), last.as_ref())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_controls_and_zero_width_characters_are_invisible() {
        for c in
            ['\u{202E}', '\u{202A}', '\u{2066}', '\u{2069}', '\u{200B}', '\u{200D}', '\u{200F}', '\u{FEFF}', '\u{061C}']
        {
            assert!(invisible(c), "{:04X}", c as u32);
        }
        for c in ['a', ' ', '√', 'é', '\u{2010}', '\u{2028}'] {
            assert!(!invisible(c), "{:04X}", c as u32);
        }
    }

    #[test]
    fn one_two_and_three_items() {
        assert_eq!(listed::<&str>(&[], "and"), "");
        assert_eq!(listed(&["0602"], "and"), "0602");
        assert_eq!(listed(&["0602", "0702"], "and"), "0602 and 0702");
        assert_eq!(listed(&["move", "attack", "end_turn"], "or"), "move, attack or end_turn");
    }
}
