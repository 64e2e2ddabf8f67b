//! The "post time" result number of the Short ACW Campaign (docs/rules/short-acw.md, ruling 1).
//!
//! Seed rule 5: "Time of Attack Post in hours, minutes, and seconds gives the Result Number –
//! is counted as one number. Take the square root, and then the 8th and 9th decimal place."
//! The seed's worked example instead takes the 9th and 10th places (√95145 = 308.4558315221…
//! → 21), and that is Adjutant's default; the 8th and 9th are a campaign option.
//!
//! Everything here is integer arithmetic: the digits of √N come from ⌊√(N·10^2k)⌋, computed
//! with an exact integer square root. A binary floating-point square root carries about 16
//! significant digits, and √N for a six-digit N needs 13 to reach the 10th decimal, so `f64`
//! gets the last digits of real times of day wrong.

use chrono::{DateTime, Timelike, Utc};
use serde::{Deserialize, Serialize};

use crate::Refusal;

/// How the campaign's clock writes the hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockFormat {
    /// 0–23 hours (the default).
    #[default]
    H24,
    /// 1–12 hours: 0:05 is 12:05, 13:05 is 1:05.
    H12,
}

/// Which two decimals of √N make the result number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DigitPositions {
    /// The 9th and 10th places, as in the seed's worked example (the default).
    #[default]
    NinthTenth,
    /// The 8th and 9th places, as rule 5's wording says.
    EighthNinth,
}

impl DigitPositions {
    /// The position of the first digit taken (9 or 8).
    pub fn first(self) -> u32 {
        match self {
            DigitPositions::NinthTenth => 9,
            DigitPositions::EighthNinth => 8,
        }
    }

    pub fn from_first(first: u32) -> Option<Self> {
        match first {
            9 => Some(DigitPositions::NinthTenth),
            8 => Some(DigitPositions::EighthNinth),
            _ => None,
        }
    }
}

/// A time of day on the campaign's clock, as the hour reads on that clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TimeOfDay {
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

impl TimeOfDay {
    /// A time of day on a 24-hour clock.
    pub fn new(hour: u32, minute: u32, second: u32) -> Option<Self> {
        (hour < 24 && minute < 60 && second < 60).then_some(Self { hour, minute, second })
    }

    /// Parses `H:MM:SS` (or `HH:MM:SS`) as written on a 24-hour clock.
    pub fn parse(text: &str) -> Result<Self, Refusal> {
        let refuse = || {
            Refusal::new(
                "time",
                "result_number.time_format",
                "write the time as H:MM:SS on a 24-hour clock, for example 9:51:45",
            )
        };
        let mut parts = text.split(':');
        let mut field = |max_len: usize| -> Result<u32, Refusal> {
            let part = parts.next().ok_or_else(refuse)?;
            if part.is_empty() || part.len() > max_len || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(refuse());
            }
            part.parse().map_err(|_| refuse())
        };
        let (hour, minute, second) = (field(2)?, field(2)?, field(2)?);
        if parts.next().is_some() {
            return Err(refuse());
        }
        Self::new(hour, minute, second).ok_or_else(refuse)
    }

    /// The hour as the clock shows it.
    pub fn hour_on(self, format: ClockFormat) -> u32 {
        match format {
            ClockFormat::H24 => self.hour,
            ClockFormat::H12 => match self.hour % 12 {
                0 => 12,
                h => h,
            },
        }
    }

    /// N = H·10000 + MM·100 + SS, "counted as one number": no leading zero on the hour, so
    /// 9:51:45 is 95145 and 0:00:07 is 7.
    pub fn post_number(self, format: ClockFormat) -> u32 {
        self.hour_on(format) * 10_000 + self.minute * 100 + self.second
    }
}

/// A campaign's clock: the time zone its posts are read in, and how it writes the hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    pub zone: chrono_tz::Tz,
    pub format: ClockFormat,
    pub digits: DigitPositions,
}

impl Default for Clock {
    fn default() -> Self {
        Self { zone: chrono_tz::UTC, format: ClockFormat::H24, digits: DigitPositions::NinthTenth }
    }
}

impl Clock {
    /// The time of day a server stamp shows on this clock (24-hour reading).
    pub fn time_of_day(&self, stamp: DateTime<Utc>) -> TimeOfDay {
        let local = stamp.with_timezone(&self.zone);
        TimeOfDay { hour: local.hour(), minute: local.minute(), second: local.second() }
    }

    /// The result number of a post stamped at `stamp`.
    pub fn result_number(&self, stamp: DateTime<Utc>) -> ResultNumber {
        ResultNumber::of(self.time_of_day(stamp).post_number(self.format), self.digits)
    }
}

/// Places after the decimal point shown in audits (enough to see the 8th to 10th).
pub const SHOWN_PLACES: u32 = 12;

/// The result number and the working that produced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ResultNumber {
    /// N, the time of day counted as one number.
    pub n: u32,
    /// √N truncated to 12 decimal places.
    pub sqrt: String,
    /// The position of the first digit taken (9 or 8).
    pub first_digit: u32,
    /// The two digits taken, 0–99.
    pub result: u32,
}

impl ResultNumber {
    pub fn of(n: u32, digits: DigitPositions) -> Self {
        let first = digits.first();
        // ⌊√N · 10^(first+1)⌋ = ⌊√(N · 10^(2·(first+1)))⌋; its last two digits are the decimals at
        // positions `first` and `first + 1`.
        let scaled = isqrt(u128::from(n) * 10u128.pow(2 * (first + 1)));
        let result = (scaled % 100) as u32;
        Self { n, sqrt: sqrt_decimal(n, SHOWN_PLACES), first_digit: first, result }
    }

    /// A `bc` command that prints √N to enough places to read the digits off.
    pub fn bc_command(&self) -> String {
        format!("echo 'scale={SHOWN_PLACES}; sqrt({})' | bc", self.n)
    }
}

/// √n truncated to `places` decimals, written out exactly.
pub fn sqrt_decimal(n: u32, places: u32) -> String {
    let scaled = isqrt(u128::from(n) * 10u128.pow(2 * places));
    let unit = 10u128.pow(places);
    format!("{}.{:0width$}", scaled / unit, scaled % unit, width = places as usize)
}

/// ⌊√x⌋, exactly.
pub fn isqrt(x: u128) -> u128 {
    x.isqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn the_seeds_worked_example_gives_21() {
        let t = TimeOfDay::parse("9:51:45").unwrap();
        let r = ResultNumber::of(t.post_number(ClockFormat::H24), DigitPositions::NinthTenth);
        assert_eq!(r.n, 95145);
        assert_eq!(r.sqrt, "308.455831522115");
        assert_eq!(r.result, 21);
    }

    #[test]
    fn eighth_and_ninth_places_are_an_option() {
        // 308.4558315 2 2 1 15: places 8–9 are "22", places 9–10 are "21".
        assert_eq!(ResultNumber::of(95145, DigitPositions::EighthNinth).result, 22);
    }

    #[test]
    fn the_hour_has_no_leading_zero() {
        assert_eq!(TimeOfDay::new(0, 0, 7).unwrap().post_number(ClockFormat::H24), 7);
        assert_eq!(TimeOfDay::new(23, 59, 59).unwrap().post_number(ClockFormat::H24), 235959);
    }

    #[test]
    fn twelve_hour_clock() {
        let midnight = TimeOfDay::new(0, 5, 0).unwrap();
        assert_eq!(midnight.post_number(ClockFormat::H12), 120500);
        assert_eq!(TimeOfDay::new(13, 5, 9).unwrap().post_number(ClockFormat::H12), 10509);
        assert_eq!(TimeOfDay::new(12, 0, 0).unwrap().post_number(ClockFormat::H12), 120000);
    }

    #[test]
    fn the_campaign_zone_decides_the_time_of_day() {
        let stamp = Utc.with_ymd_and_hms(2026, 7, 1, 13, 51, 45).unwrap();
        let clock = Clock { zone: chrono_tz::America::New_York, ..Clock::default() };
        assert_eq!(clock.time_of_day(stamp), TimeOfDay::new(9, 51, 45).unwrap());
        assert_eq!(clock.result_number(stamp).result, 21);
    }

    #[test]
    fn parsing_refuses_what_is_not_a_time() {
        for bad in ["", "9:51", "24:00:00", "9:60:00", "9:51:60", "9:51:45:1", "-1:00:00", "9:5a:00", "123:00:00"] {
            assert_eq!(TimeOfDay::parse(bad).unwrap_err().field, "time", "{bad:?}");
        }
        assert_eq!(TimeOfDay::parse("09:51:45").unwrap(), TimeOfDay::new(9, 51, 45).unwrap());
    }

    #[test]
    fn n_zero_has_result_zero() {
        let r = ResultNumber::of(0, DigitPositions::NinthTenth);
        assert_eq!(r.result, 0);
        assert_eq!(r.sqrt, "0.000000000000");
    }
}
