//! Lists in the words the outcomes, refusals and forum texts use.

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
    fn one_two_and_three_items() {
        assert_eq!(listed::<&str>(&[], "and"), "");
        assert_eq!(listed(&["0602"], "and"), "0602");
        assert_eq!(listed(&["0602", "0702"], "and"), "0602 and 0702");
        assert_eq!(listed(&["move", "attack", "end_turn"], "or"), "move, attack or end_turn");
    }
}
