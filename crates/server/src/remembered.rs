//! A public calculator's answers, kept by the text of the query that asked for them.
//!
//! A calculator's answer is a function of its query alone: no campaign, no caller, no clock. A
//! query asked again is answered with the bytes written the first time, without parsing it,
//! working the answer out or writing its JSON again; that work is most of what the read costs
//! beyond sending it. The memory is bounded whatever callers ask: a fixed number of slots, each
//! holding the last query that fell on it (and only a short one) with its answer.

use std::hash::BuildHasher;
use std::sync::Mutex;

use axum::body::Bytes;

/// How many answers are kept.
const SLOTS: usize = 1024;

/// A longer query is answered but not kept: a slot holds at most this many bytes of query, so
/// the whole holds at most [`SLOTS`] of them and their answers.
const MOST_QUERY_BYTES: usize = 64;

/// A slot: the last query kept in it, with its answer.
type Slot = Mutex<Option<(Box<str>, Bytes)>>;

/// The answers of one calculator, by query text (see the module's documentation).
pub struct Remembered {
    slots: [Slot; SLOTS],
}

impl Remembered {
    pub const fn new() -> Self {
        Self { slots: [const { Mutex::new(None) }; SLOTS] }
    }

    /// The answer kept for `query`, if it is the last query kept in its slot.
    pub fn get(&self, query: &str) -> Option<Bytes> {
        let slot = self.slot(query)?.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match &*slot {
            Some((kept, answer)) if **kept == *query => Some(answer.clone()),
            _ => None,
        }
    }

    /// Keeps `answer` as the answer to `query`, in place of whatever its slot held.
    pub fn keep(&self, query: &str, answer: Bytes) {
        if let Some(slot) = self.slot(query) {
            *slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some((query.into(), answer));
        }
    }

    /// The slot of `query`: none for a query too long to keep. Queries that share a slot only
    /// take each other's place; a caller who makes them collide on purpose gains nothing.
    fn slot(&self, query: &str) -> Option<&Slot> {
        if query.len() > MOST_QUERY_BYTES {
            return None;
        }
        let hash = rustc_hash::FxBuildHasher.hash_one(query);
        Some(&self.slots[(hash as usize) % SLOTS])
    }
}

impl Default for Remembered {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_given_again_for_the_same_query_only() {
        let remembered = Remembered::new();
        assert_eq!(remembered.get("time=9:51:45"), None);
        remembered.keep("time=9:51:45", Bytes::from_static(b"{\"n\":95145}"));
        assert_eq!(remembered.get("time=9:51:45").as_deref(), Some(&b"{\"n\":95145}"[..]));
        // Another query's text, even one that means the same time, is not that query.
        assert_eq!(remembered.get("time=09:51:45"), None);
        assert_eq!(remembered.get("time=9:51:45&first_digit=9"), None);
    }

    #[test]
    fn a_query_takes_the_place_of_the_one_in_its_slot() {
        let remembered = Remembered::new();
        let first = "time=0:00:00".to_owned();
        let slot_of = |q: &str| rustc_hash::FxBuildHasher.hash_one(q) as usize % SLOTS;
        // Another query that falls on the same slot.
        let other = (1..).map(|s| format!("time=0:00:{s}")).find(|q| slot_of(q) == slot_of(&first)).unwrap();
        remembered.keep(&first, Bytes::from_static(b"first"));
        remembered.keep(&other, Bytes::from_static(b"other"));
        assert_eq!(remembered.get(&first), None);
        assert_eq!(remembered.get(&other).as_deref(), Some(&b"other"[..]));
    }

    #[test]
    fn a_long_query_is_not_kept() {
        let remembered = Remembered::new();
        let long = format!("time=9:51:45&{}", "x".repeat(MOST_QUERY_BYTES));
        remembered.keep(&long, Bytes::from_static(b"answer"));
        assert_eq!(remembered.get(&long), None);
        let longest = "t".repeat(MOST_QUERY_BYTES);
        remembered.keep(&longest, Bytes::from_static(b"answer"));
        assert_eq!(remembered.get(&longest).as_deref(), Some(&b"answer"[..]));
    }
}
