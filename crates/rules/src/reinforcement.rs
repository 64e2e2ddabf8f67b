//! The Rebel reinforcement roll of the Short ACW Campaign.
//!
//! Seed rule: "The time in milliseconds is divided by 6 and the remainder taken – if the
//! resulting number is equal to or less than the number of Cities controlled, they gain 1
//! Factor." The cities that count are E, G, I, O, M and L, so `cities` is 0 to 6.
//!
//! Taken literally, a remainder of 0 gains a point even with no city held (0 ≤ 0), and five or
//! six cities always gain. Adjutant follows the text as written.

use serde::Serialize;

use crate::Refusal;

/// The six cities whose control counts for the Rebel reinforcement roll.
pub const REINFORCEMENT_CITIES: [char; 6] = ['E', 'G', 'I', 'O', 'M', 'L'];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReinforcementRoll {
    /// The post's server milliseconds (0–999).
    pub ms: u32,
    /// Cities among E, G, I, O, M, L held by the Rebels.
    pub cities: u32,
    /// `ms mod 6`.
    pub remainder: u32,
    /// Whether the remainder is at most the cities held.
    pub gains: bool,
}

impl ReinforcementRoll {
    pub fn roll(ms: u32, cities: u32) -> Result<Self, Refusal> {
        if ms > 999 {
            return Err(Refusal::new("ms", "reinforcement.milliseconds", "milliseconds run from 0 to 999"));
        }
        if cities > REINFORCEMENT_CITIES.len() as u32 {
            return Err(Refusal::new(
                "cities",
                "reinforcement.cities",
                "only the six cities E, G, I, O, M and L count, so at most 6",
            ));
        }
        let remainder = ms % 6;
        Ok(Self { ms, cities, remainder, gains: remainder <= cities })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remainder_equal_to_cities_gains() {
        let roll = ReinforcementRoll::roll(123, 3).unwrap();
        assert_eq!(roll.remainder, 3);
        assert!(roll.gains);
    }

    #[test]
    fn remainder_above_cities_does_not_gain() {
        let roll = ReinforcementRoll::roll(124, 3).unwrap();
        assert_eq!(roll.remainder, 4);
        assert!(!roll.gains);
    }

    #[test]
    fn zero_cities_gain_only_on_remainder_zero() {
        assert!(ReinforcementRoll::roll(0, 0).unwrap().gains);
        assert!(ReinforcementRoll::roll(996, 0).unwrap().gains);
        for ms in [1, 2, 3, 4, 5, 997, 999] {
            assert!(!ReinforcementRoll::roll(ms, 0).unwrap().gains, "ms {ms}");
        }
    }

    #[test]
    fn five_or_six_cities_always_gain() {
        for ms in 0..1000 {
            assert!(ReinforcementRoll::roll(ms, 5).unwrap().gains);
            assert!(ReinforcementRoll::roll(ms, 6).unwrap().gains);
        }
    }

    #[test]
    fn the_gain_frequency_is_cities_plus_one_in_six() {
        for cities in 0..=4u32 {
            let gains = (0..996).filter(|&ms| ReinforcementRoll::roll(ms, cities).unwrap().gains).count();
            assert_eq!(gains as u32, 166 * (cities + 1), "cities {cities}");
        }
    }

    #[test]
    fn out_of_range_inputs_are_refused() {
        assert_eq!(ReinforcementRoll::roll(1000, 1).unwrap_err().field, "ms");
        assert_eq!(ReinforcementRoll::roll(5, 7).unwrap_err().field, "cities");
    }
}
