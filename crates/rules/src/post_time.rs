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
        // ⌊√N · 10^12⌋ = ⌊√(N · 10^24)⌋ gives the shown places; dropping its last 11 − `first`
        // digits leaves ⌊√N · 10^(first+1)⌋ (⌊⌊x⌋ / k⌋ = ⌊x / k⌋ for a whole k), whose last two
        // digits are the decimals at positions `first` and `first + 1`.
        let scaled = scaled_sqrt(n, SHOWN_PLACES);
        // Exact: √(2^32 − 1) · 10^12 < 6.6 · 10^16 < 2^64, so the rest is machine-word division.
        let word = scaled as u64;
        let result = (word / 10u64.pow(SHOWN_PLACES - first - 1) % 100) as u32;
        Self { n, sqrt: decimal(scaled, SHOWN_PLACES), first_digit: first, result }
    }

    /// The two decimals taken, as written: "21", "07".
    pub fn digits(&self) -> String {
        let mut two = String::with_capacity(2);
        two.push(char::from(b'0' + (self.result / 10 % 10) as u8));
        two.push(char::from(b'0' + (self.result % 10) as u8));
        two
    }

    /// A `bc` command that prints √N to enough places to read the digits off.
    pub fn bc_command(&self) -> String {
        const BEFORE: &str = "echo 'scale=12; sqrt(";
        const AFTER: &str = ")' | bc";
        const _: () = assert!(SHOWN_PLACES == 12, "the command's scale is the shown places");
        let mut command = String::with_capacity(BEFORE.len() + 10 + AFTER.len());
        command.push_str(BEFORE);
        push_whole(&mut command, u64::from(self.n));
        command.push_str(AFTER);
        command
    }
}

/// ⌊√n · 10^places⌋ = ⌊√(n · 10^(2·places))⌋.
fn scaled_sqrt(n: u32, places: u32) -> u128 {
    isqrt(u128::from(n) * 10u128.pow(2 * places))
}

/// `scaled` / 10^places written out with `places` decimals.
fn decimal(scaled: u128, places: u32) -> String {
    // Exact: the square root of a 128-bit number is below 2^64, so the rest is machine-word
    // division. (`places` is below 20: 10^(2·places) had to fit 128 bits.)
    let scaled = scaled as u64;
    let unit = 10u64.pow(places);
    let mut text = String::with_capacity(22 + places as usize);
    push_whole(&mut text, scaled / unit);
    text.push('.');
    let mut digits = [b'0'; 20];
    let mut rest = scaled % unit;
    for digit in digits[..places as usize].iter_mut().rev() {
        *digit = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    // No places: one zero, as `format!` writes a remainder of 0 at width 0.
    let shown = places.max(1) as usize;
    text.push_str(std::str::from_utf8(&digits[..shown]).unwrap_or_default());
    text
}

/// Appends `value` in decimal.
fn push_whole(text: &mut String, value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = value;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    text.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}

/// √n truncated to `places` decimals, written out exactly.
pub fn sqrt_decimal(n: u32, places: u32) -> String {
    decimal(scaled_sqrt(n, places), places)
}

/// ⌊√x⌋, exactly.
pub fn isqrt(x: u128) -> u128 {
    x.isqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    /// Every time of day on either clock, both digit positions: the digits read off the one
    /// root of N · 10^24 are those of the root taken at the positions' own scale, and the
    /// texts are those `format!` writes.
    #[test]
    fn one_root_gives_every_time_of_days_digits_and_texts() {
        for n in (0..24u32).flat_map(|h| (0..60).flat_map(move |m| (0..60).map(move |s| h * 10_000 + m * 100 + s))) {
            for digits in [DigitPositions::NinthTenth, DigitPositions::EighthNinth] {
                let first = digits.first();
                let r = ResultNumber::of(n, digits);
                let own_scale = isqrt(u128::from(n) * 10u128.pow(2 * (first + 1)));
                assert_eq!(u128::from(r.result), own_scale % 100, "N = {n}, first {first}");
                let scaled = isqrt(u128::from(n) * 10u128.pow(24));
                let unit = 10u128.pow(12);
                assert_eq!(r.sqrt, format!("{}.{:012}", scaled / unit, scaled % unit), "N = {n}");
                assert_eq!(r.digits(), format!("{:02}", r.result));
                assert_eq!(r.bc_command(), format!("echo 'scale=12; sqrt({n})' | bc"));
            }
        }
        assert_eq!(sqrt_decimal(2, 18), "1.414213562373095048");
        assert_eq!(sqrt_decimal(95145, 0), "308.0");
        assert_eq!(sqrt_decimal(95145, 1), "308.4");
        assert_eq!(sqrt_decimal(200, 18), "14.142135623730950488");
        assert_eq!(sqrt_decimal(u32::MAX, 12), "65535.999992370605");
    }

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
