//! Every one of the 86,400 times of day, checked against a square root taken digit by digit
//! the way it is done by hand (pairs of decimal digits, no binary square root at all).

use adjutant_rules::post_time::{ClockFormat, DigitPositions, ResultNumber, TimeOfDay};

/// The decimal digits of √n: the integer part, then `places` decimals, by the schoolbook
/// method: bring down two digits at a time and find the largest digit d with (20p + d)·d ≤ r.
fn longhand_sqrt(n: u32, places: usize) -> (u64, Vec<u8>) {
    let mut pairs: Vec<u32> = Vec::new();
    let mut rest = n;
    loop {
        pairs.push(rest % 100);
        rest /= 100;
        if rest == 0 {
            break;
        }
    }
    pairs.reverse();
    pairs.extend(std::iter::repeat_n(0, places));
    let integer_pairs = pairs.len() - places;

    let mut root: Vec<u8> = Vec::new();
    // Remainder and partial root as decimal strings would be the purest form; small big-ints
    // in u128 suffice because the root never exceeds 6 + 10 digits here.
    let mut remainder: u128 = 0;
    let mut partial: u128 = 0;
    for pair in pairs {
        remainder = remainder * 100 + u128::from(pair);
        let mut digit = 9u128;
        while (20 * partial + digit) * digit > remainder {
            digit -= 1;
        }
        remainder -= (20 * partial + digit) * digit;
        partial = partial * 10 + digit;
        root.push(digit as u8);
    }
    let integer = root[..integer_pairs].iter().fold(0u64, |acc, &d| acc * 10 + u64::from(d));
    (integer, root[integer_pairs..].to_vec())
}

#[test]
fn all_86400_times_match_the_longhand_square_root() {
    let mut checked = 0;
    for hour in 0..24 {
        for minute in 0..60 {
            for second in 0..60 {
                let t = TimeOfDay::new(hour, minute, second).unwrap();
                let n = t.post_number(ClockFormat::H24);
                let (integer, decimals) = longhand_sqrt(n, 12);
                let places_9_10 = u32::from(decimals[8]) * 10 + u32::from(decimals[9]);
                let places_8_9 = u32::from(decimals[7]) * 10 + u32::from(decimals[8]);

                let ours = ResultNumber::of(n, DigitPositions::NinthTenth);
                assert_eq!(ours.result, places_9_10, "{hour}:{minute:02}:{second:02} (N = {n})");
                assert_eq!(ResultNumber::of(n, DigitPositions::EighthNinth).result, places_8_9, "N = {n}");
                let shown: String = decimals.iter().map(|d| char::from(b'0' + d)).collect();
                assert_eq!(ours.sqrt, format!("{integer}.{shown}"), "N = {n}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 86_400);
}

#[test]
fn the_longhand_method_itself_knows_the_seed_example() {
    let (integer, decimals) = longhand_sqrt(95145, 10);
    assert_eq!(integer, 308);
    assert_eq!(decimals, vec![4, 5, 5, 8, 3, 1, 5, 2, 2, 1]);
}

#[test]
fn floating_point_gets_some_times_of_day_wrong() {
    // Why the rules insist on integers: count the times where f64 disagrees with the exact digits.
    let mut wrong = 0;
    for n in (0..24u32).flat_map(|h| (0..60u32).flat_map(move |m| (0..60u32).map(move |s| h * 10_000 + m * 100 + s))) {
        let float = ((f64::from(n)).sqrt() * 1e10).floor() as u128 % 100;
        if float != u128::from(ResultNumber::of(n, DigitPositions::NinthTenth).result) {
            wrong += 1;
        }
    }
    assert!(wrong > 0, "expected f64 to miss at least one time of day");
}
