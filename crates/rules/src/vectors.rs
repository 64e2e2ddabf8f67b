//! Published test vectors for other tool makers (`docs/vectors/`): every time of day's result
//! numbers, the reinforcement roll for every millisecond, and combat cases with every
//! intermediate figure. `crates/rules/tests/vectors.rs` checks the files are what this module
//! gives, and writes them with `ADJUTANT_WRITE_VECTORS=1` (`./scripts/vectors.sh`).

use crate::short_acw::combat::{battle, battle_by_unit, Defence, Defenders, VictoryRounding};
use crate::{ClockFormat, DigitPositions, ReinforcementRoll, ResultNumber, TimeOfDay};

/// `result-numbers.csv`: all 86,400 times of day on a 24-hour clock, `H:MM:SS`, N (the time
/// counted as one number) and the result numbers from the 9th–10th and the 8th–9th decimals of
/// √N. A 12-hour clock reads hour 0 as 12 and 13–23 as 1–11: its N is the row of that time.
pub fn result_numbers_csv() -> String {
    let mut out = String::with_capacity(2_000_000);
    out.push_str("time,n,result_9_10,result_8_9\n");
    for hour in 0..24 {
        for minute in 0..60 {
            for second in 0..60 {
                let n = TimeOfDay { hour, minute, second }.post_number(ClockFormat::H24);
                let ninth = ResultNumber::of(n, DigitPositions::NinthTenth).result;
                let eighth = ResultNumber::of(n, DigitPositions::EighthNinth).result;
                out.push_str(&format!("{hour}:{minute:02}:{second:02},{n},{ninth},{eighth}\n"));
            }
        }
    }
    out
}

/// `reinforcement.csv`: for each millisecond field 0–999 of a stamp (the roll reads only the
/// milliseconds, so this is every millisecond of the day), the remainder mod 6 and whether the
/// Rebels gain a factor holding 0, 1, … 6 of the cities E, G, I, O, M, L (1 gains, 0 not).
pub fn reinforcement_csv() -> String {
    let mut out = String::from("ms,remainder,gains_0,gains_1,gains_2,gains_3,gains_4,gains_5,gains_6\n");
    for ms in 0..1000 {
        let rolls: Vec<ReinforcementRoll> =
            (0..=6).filter_map(|cities| ReinforcementRoll::roll(ms, cities).ok()).collect();
        out.push_str(&format!("{ms},{}", ms % 6));
        for roll in rolls {
            out.push_str(if roll.gains { ",1" } else { ",0" });
        }
        out.push('\n');
    }
    out
}

/// `combat.json`: battles worked out in full, one case a line: the inputs (attacker factors,
/// defender factors and how many are fortified when counted unit by unit, the defence, the
/// time of day, the digit positions, the rounding) and every figure of the procedure.
pub fn combat_json() -> String {
    let times = ["9:51:45", "0:00:07", "12:30:00", "23:59:59", "14:02:09", "6:18:33"];
    let mut cases = Vec::new();
    for (i, (attacker, defender)) in
        [(15, 6), (10, 10), (3, 12), (40, 1), (0, 5), (7, 0), (25, 17)].into_iter().enumerate()
    {
        for (j, defence) in [Defence::Open, Defence::Woods, Defence::Fortified].into_iter().enumerate() {
            // The seed's worked example's time, and one other.
            for time in [times[0], times[1 + (i + j) % (times.len() - 1)]] {
                let t = TimeOfDay::parse(time).unwrap_or(TimeOfDay { hour: 9, minute: 51, second: 45 });
                for digits in [DigitPositions::NinthTenth, DigitPositions::EighthNinth] {
                    let result = ResultNumber::of(t.post_number(ClockFormat::H24), digits);
                    for rounding in [VictoryRounding::Exact, VictoryRounding::OneDecimal] {
                        let whole = battle(attacker, defender, defence, &result, rounding);
                        cases.push(serde_json::json!({
                            "rules_version": 1, "time": time, "digits": digits, "counting": "all_defenders",
                            "battle": whole,
                        }));
                    }
                    if defence == Defence::Fortified && defender > 1 {
                        let defenders = Defenders { factors: defender, fortified: defender / 2 };
                        let by_unit =
                            battle_by_unit(attacker, defenders, Defence::Open, &result, VictoryRounding::Exact);
                        cases.push(serde_json::json!({
                            "rules_version": 2, "time": time, "digits": digits, "counting": "unit_by_unit",
                            "battle": by_unit,
                        }));
                    }
                }
            }
        }
    }
    let mut out = String::from("[\n");
    for (i, case) in cases.iter().enumerate() {
        out.push_str(&case.to_string());
        out.push_str(if i + 1 < cases.len() { ",\n" } else { "\n" });
    }
    out.push_str("]\n");
    out
}
