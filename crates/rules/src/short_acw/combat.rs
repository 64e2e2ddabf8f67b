//! The combat procedure (seed "Combat Procedure" 1–8, docs/rules/short-acw.md, rulings 2 and 3).
//!
//! Every number is an exact integer or fraction: the victory number is
//! round-half-up(100·A / (A + D′)) computed on rationals, and each side's casualties are
//! round-half-up(rate × basic rate) where the basic rate is (A + D)/15 with raw factors.

use serde::{Deserialize, Serialize};

use crate::ResultNumber;

/// What the defender stands in or behind. Seed 1: "Defenders in or behind woods or river count
/// as double factors – Defenders in fortifications count 1 ½ Factors". The larger multiplier
/// applies; they do not stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Defence {
    Open,
    Woods,
    River,
    Fortified,
}

impl Defence {
    /// The defence multiplier in halves (×2 = 4 halves, ×1½ = 3 halves).
    pub fn multiplier_halves(self) -> u64 {
        match self {
            Defence::Open => 2,
            Defence::Woods | Defence::River => 4,
            Defence::Fortified => 3,
        }
    }

    pub fn multiplier_text(self) -> &'static str {
        match self {
            Defence::Open => "1",
            Defence::Woods | Defence::River => "2",
            Defence::Fortified => "1.5",
        }
    }

    pub fn parse(text: &str) -> Option<Defence> {
        match text {
            "open" => Some(Defence::Open),
            "woods" => Some(Defence::Woods),
            "river" => Some(Defence::River),
            "fortified" => Some(Defence::Fortified),
            _ => None,
        }
    }
}

/// How the victory number is rounded (docs/rules/short-acw.md, ruling 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VictoryRounding {
    /// round-half-up(100·A / (A + D′)) on exact fractions (the default).
    #[default]
    Exact,
    /// The worked example's two steps: 100 / (A + D′) rounded half up to one decimal
    /// ("100 / 27 = 3.7"), times A, rounded half up ("15 × 3.7 = 56").
    OneDecimal,
}

/// One row of the casualty table (seed rule 7), rates in halves.
pub struct CasualtyBand {
    /// The smallest difference in the band; the band runs to the next row's `from` − 1.
    pub from: u32,
    pub label: &'static str,
    /// Winner's rate ×2 (W0.5 = 1).
    pub winner_halves: u64,
    /// Loser's rate ×2 (L1.5 = 3).
    pub loser_halves: u64,
}

/// Seed rule 7, row for row: "0 to 5: W2, L2 / 6 to 10: W1, L1 / 11 – 20: W1, L1.5 /
/// 21 – 30: W1, L2 / 31 – 40: W0.5, L2 / 41 – 50: W0.5, L2.5 / 51+: W0.5, L3".
pub const CASUALTY_BANDS: [CasualtyBand; 7] = [
    CasualtyBand { from: 0, label: "0–5", winner_halves: 4, loser_halves: 4 },
    CasualtyBand { from: 6, label: "6–10", winner_halves: 2, loser_halves: 2 },
    CasualtyBand { from: 11, label: "11–20", winner_halves: 2, loser_halves: 3 },
    CasualtyBand { from: 21, label: "21–30", winner_halves: 2, loser_halves: 4 },
    CasualtyBand { from: 31, label: "31–40", winner_halves: 1, loser_halves: 4 },
    CasualtyBand { from: 41, label: "41–50", winner_halves: 1, loser_halves: 5 },
    CasualtyBand { from: 51, label: "51+", winner_halves: 1, loser_halves: 6 },
];

pub fn casualty_band(difference: u32) -> &'static CasualtyBand {
    CASUALTY_BANDS.iter().rev().find(|b| difference >= b.from).unwrap_or(&CASUALTY_BANDS[0])
}

/// ⌊p/q + ½⌋ for q > 0: rounding half up on an exact fraction.
pub fn round_half_up(p: u64, q: u64) -> u64 {
    (2 * p + q) / (2 * q)
}

fn halves_text(halves: u64) -> String {
    if halves & 1 == 0 {
        (halves / 2).to_string()
    } else {
        format!("{}.5", halves / 2)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Winner {
    Attacker,
    Defender,
}

/// The defender's factors as the combat counts them: the raw total and, since rules version 2,
/// how many of them are in fortifications (docs/rules/short-acw.md, ruling 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defenders {
    /// D: every defending factor.
    pub factors: u32,
    /// The part of D in units that are fortified (never more than `factors`).
    pub fortified: u32,
}

/// A battle worked out in full: every number a moderator needs to check it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Battle {
    /// A: the attacker's factors.
    pub attacker: u32,
    /// D: the defender's raw factors.
    pub defender: u32,
    /// The part of D in fortified units, when fortification counts unit by unit (rules
    /// version 2). Absent from battles decided under version 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defender_fortified: Option<u32>,
    pub defence: Defence,
    pub multiplier: String,
    /// D′: the defender's factors after the multiplier, exactly ("12", "4.5").
    pub defender_counted: String,
    /// A + D′, exactly.
    pub total_counted: String,
    pub victory_rounding: VictoryRounding,
    /// 100 / (A + D′) rounded to one decimal, when that option is used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_factor: Option<String>,
    pub victory: u32,
    pub result_number: ResultNumber,
    pub result: u32,
    pub winner: Winner,
    /// |victory − result|.
    pub difference: u32,
    pub band: String,
    pub winner_rate: String,
    pub loser_rate: String,
    /// (A + D) / 15 as an exact fraction, e.g. "21/15".
    pub basic_rate: String,
    /// Casualties the rates call for, before the cap at the factors present.
    pub winner_casualties_called: u32,
    pub loser_casualties_called: u32,
    /// Casualties inflicted: never more than the factors present.
    pub winner_casualties: u32,
    pub loser_casualties: u32,
    pub attacker_casualties: u32,
    pub defender_casualties: u32,
}

/// The combat procedure for `attacker` factors against `defender` factors, every defender
/// counting with `defence` (rules version 1, and the calculator's `defence=fortified`).
///
/// If A + D′ is 0 (nobody has factors) the victory number is taken as 0.
pub fn battle(
    attacker: u32,
    defender: u32,
    defence: Defence,
    result: &ResultNumber,
    rounding: VictoryRounding,
) -> Battle {
    let counted = defence.multiplier_halves() * u64::from(defender);
    work_out(attacker, defender, None, defence, defence.multiplier_text(), counted, result, rounding)
}

/// The combat procedure with fortification counted unit by unit (rules version 2, ruling 2):
/// D′ = Σ factors × that defender's multiplier, the multiplier being 2 in woods or across a
/// river (`hex` is `Woods` or `River`), else 1½ for a fortified unit, else 1; never both.
/// `hex` is `Open` when neither woods nor river applies (`Fortified` reads as `Open` here: the
/// fortified part is `defenders.fortified`).
pub fn battle_by_unit(
    attacker: u32,
    defenders: Defenders,
    hex: Defence,
    result: &ResultNumber,
    rounding: VictoryRounding,
) -> Battle {
    let d = defenders.factors;
    let fortified = defenders.fortified.min(d);
    let (defence, multiplier, counted) = match hex {
        Defence::Woods | Defence::River => (hex, hex.multiplier_text(), 4 * u64::from(d)),
        Defence::Open | Defence::Fortified => {
            let counted = 2 * u64::from(d - fortified) + 3 * u64::from(fortified);
            if fortified == 0 {
                (Defence::Open, "1", counted)
            } else if fortified == d {
                (Defence::Fortified, "1.5", counted)
            } else {
                (Defence::Fortified, "1.5 on fortified units, 1 on the others", counted)
            }
        }
    };
    work_out(attacker, d, Some(fortified), defence, multiplier, counted, result, rounding)
}

#[allow(clippy::too_many_arguments)]
fn work_out(
    attacker: u32,
    defender: u32,
    defender_fortified: Option<u32>,
    defence: Defence,
    multiplier: &'static str,
    counted_halves: u64,
    result: &ResultNumber,
    rounding: VictoryRounding,
) -> Battle {
    let a = u64::from(attacker);
    let d = u64::from(defender);
    // In halves: 2·(A + D′) = 2A + 2·D′.
    let total_halves = 2 * a + counted_halves;
    let (victory, per_factor) = if total_halves == 0 {
        (0, None)
    } else {
        match rounding {
            // 100·A / (A + D′) = 200·A / (2A + m·D)
            VictoryRounding::Exact => (round_half_up(200 * a, total_halves), None),
            VictoryRounding::OneDecimal => {
                // Tenths of 100 / (A + D′) = 2000 / (2A + m·D), rounded half up.
                let tenths = round_half_up(2000, total_halves);
                let per = format!("{}.{}", tenths / 10, tenths % 10);
                (round_half_up(tenths * a, 10), Some(per))
            }
        }
    };
    let victory = victory as u32;
    let winner = if result.result <= victory { Winner::Attacker } else { Winner::Defender };
    let difference = victory.abs_diff(result.result);
    let band = casualty_band(difference);
    // Casualties = rate × (A + D)/15 = halves × (A + D) / 30.
    let raw_total = a + d;
    let winner_called = round_half_up(band.winner_halves * raw_total, 30) as u32;
    let loser_called = round_half_up(band.loser_halves * raw_total, 30) as u32;
    let (winner_present, loser_present) = match winner {
        Winner::Attacker => (attacker, defender),
        Winner::Defender => (defender, attacker),
    };
    let winner_casualties = winner_called.min(winner_present);
    let loser_casualties = loser_called.min(loser_present);
    let (attacker_casualties, defender_casualties) = match winner {
        Winner::Attacker => (winner_casualties, loser_casualties),
        Winner::Defender => (loser_casualties, winner_casualties),
    };
    Battle {
        attacker,
        defender,
        defender_fortified,
        defence,
        multiplier: multiplier.to_owned(),
        defender_counted: halves_text(counted_halves),
        total_counted: halves_text(total_halves),
        victory_rounding: rounding,
        per_factor,
        victory,
        result_number: result.clone(),
        result: result.result,
        winner,
        difference,
        band: band.label.to_owned(),
        winner_rate: halves_text(band.winner_halves),
        loser_rate: halves_text(band.loser_halves),
        basic_rate: format!("{raw_total}/15"),
        winner_casualties_called: winner_called,
        loser_casualties_called: loser_called,
        winner_casualties,
        loser_casualties,
        attacker_casualties,
        defender_casualties,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DigitPositions;

    fn at(n: u32) -> ResultNumber {
        ResultNumber::of(n, DigitPositions::NinthTenth)
    }

    #[test]
    fn the_seeds_worked_example() {
        // 15 Union factors attack 6 Rebel behind a river at 9:51:45.
        let b = battle(15, 6, Defence::River, &at(95145), VictoryRounding::Exact);
        assert_eq!(b.defender_counted, "12");
        assert_eq!(b.total_counted, "27");
        assert_eq!(b.victory, 56);
        assert_eq!(b.result, 21);
        assert_eq!(b.winner, Winner::Attacker);
        assert_eq!(b.difference, 35);
        assert_eq!(b.band, "31–40");
        assert_eq!((b.winner_rate.as_str(), b.loser_rate.as_str()), ("0.5", "2"));
        assert_eq!(b.basic_rate, "21/15");
        assert_eq!((b.winner_casualties, b.loser_casualties), (1, 3));
        assert_eq!((b.attacker_casualties, b.defender_casualties), (1, 3));
        let one = battle(15, 6, Defence::River, &at(95145), VictoryRounding::OneDecimal);
        assert_eq!(one.per_factor.as_deref(), Some("3.7"));
        assert_eq!(one.victory, 56);
    }

    #[test]
    fn the_two_roundings_can_differ() {
        // 100·10/(10+3) = 76.92 → 77 exactly; 100/13 = 7.7 then ×10 = 77. With A=7, D=6 open:
        // exact 100·7/13 = 53.85 → 54; one decimal 7.7 × 7 = 53.9 → 54. A=9, D=2 fortified:
        // exact 900/12 = 75; one decimal 8.3 × 9 = 74.7 → 75. A=3, D=3 fortified (D′ 4.5):
        // exact 300/7.5 = 40; one decimal 13.3 × 3 = 39.9 → 40. A=11, D=1 open: exact
        // 1100/12 = 91.67 → 92; one decimal 8.3 × 11 = 91.3 → 91.
        let r = at(95145);
        assert_eq!(battle(11, 1, Defence::Open, &r, VictoryRounding::Exact).victory, 92);
        assert_eq!(battle(11, 1, Defence::Open, &r, VictoryRounding::OneDecimal).victory, 91);
        let f = battle(3, 3, Defence::Fortified, &r, VictoryRounding::Exact);
        assert_eq!((f.defender_counted.as_str(), f.total_counted.as_str()), ("4.5", "7.5"));
        assert_eq!(f.victory, 40);
    }

    #[test]
    fn defence_multipliers() {
        let r = at(95145);
        // 6 v 6: open 50, fortified 100·6/15 = 40, woods 100·6/18 = 33.3 → 33.
        assert_eq!(battle(6, 6, Defence::Open, &r, VictoryRounding::Exact).victory, 50);
        assert_eq!(battle(6, 6, Defence::Fortified, &r, VictoryRounding::Exact).victory, 40);
        assert_eq!(battle(6, 6, Defence::Woods, &r, VictoryRounding::Exact).victory, 33);
    }

    #[test]
    fn fortification_counts_unit_by_unit() {
        // Seed: "Defenders in fortifications count 1 ½ Factors". 6 attack 4 fortified + 2 that
        // just moved in: D′ = 4 × 1½ + 2 × 1 = 8; victory 100·6/14 = 42.86 → 43. Under the
        // version 1 rule the newcomer took the bonus from everyone: 100·6/12 = 50.
        let r = at(95145);
        let mixed = Defenders { factors: 6, fortified: 4 };
        let b = battle_by_unit(6, mixed, Defence::Open, &r, VictoryRounding::Exact);
        assert_eq!((b.defender_counted.as_str(), b.total_counted.as_str()), ("8", "14"));
        assert_eq!(b.victory, 43);
        assert_eq!(b.defender_fortified, Some(4));
        assert_eq!(b.defence, Defence::Fortified);
        assert_eq!(battle(6, 6, Defence::Open, &r, VictoryRounding::Exact).victory, 50);
        // 3 fortified of 5: D′ = 4.5 + 2 = 6.5, an exact half; 100·7/13.5 = 51.85 → 52.
        let half = battle_by_unit(7, Defenders { factors: 5, fortified: 3 }, Defence::Open, &r, VictoryRounding::Exact);
        assert_eq!(half.defender_counted, "6.5");
        assert_eq!(half.victory, 52);
        // All fortified or none: the same numbers as the whole-hex rule.
        let all = battle_by_unit(6, Defenders { factors: 6, fortified: 6 }, Defence::Open, &r, VictoryRounding::Exact);
        let old = battle(6, 6, Defence::Fortified, &r, VictoryRounding::Exact);
        assert_eq!((all.victory, all.defender_counted.clone()), (old.victory, old.defender_counted));
        let none = battle_by_unit(6, Defenders { factors: 6, fortified: 0 }, Defence::Open, &r, VictoryRounding::Exact);
        assert_eq!((none.victory, none.defence), (50, Defence::Open));
        // Woods or river: ×2 for everyone, fortified or not; never ×2 and ×1½ together.
        let woods = battle_by_unit(6, mixed, Defence::Woods, &r, VictoryRounding::Exact);
        assert_eq!((woods.defender_counted.as_str(), woods.victory), ("12", 33));
        let river =
            battle_by_unit(15, Defenders { factors: 6, fortified: 6 }, Defence::River, &r, VictoryRounding::Exact);
        assert_eq!((river.defender_counted.as_str(), river.victory), ("12", 56));
    }

    #[test]
    fn victory_rounds_half_up() {
        // 100·1/(1+1) = 50 exactly; 100·1/8 = 12.5 → 13.
        let r = at(95145);
        assert_eq!(battle(1, 7, Defence::Open, &r, VictoryRounding::Exact).victory, 13);
    }

    #[test]
    fn the_casualty_table_row_by_row() {
        let rows: Vec<(u32, &str, &str, &str)> = [0, 5, 6, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51, 99]
            .into_iter()
            .map(|d| {
                let b = casualty_band(d);
                (d, b.label, "", "")
            })
            .collect();
        let labels: Vec<&str> = rows.iter().map(|r| r.1).collect();
        assert_eq!(
            labels,
            [
                "0–5", "0–5", "6–10", "6–10", "11–20", "11–20", "21–30", "21–30", "31–40", "31–40", "41–50", "41–50",
                "51+", "51+"
            ]
        );
        let rates: Vec<(String, String)> =
            CASUALTY_BANDS.iter().map(|b| (halves_text(b.winner_halves), halves_text(b.loser_halves))).collect();
        let expect = [("2", "2"), ("1", "1"), ("1", "1.5"), ("1", "2"), ("0.5", "2"), ("0.5", "2.5"), ("0.5", "3")];
        for (got, want) in rates.iter().zip(expect) {
            assert_eq!((got.0.as_str(), got.1.as_str()), want);
        }
    }

    #[test]
    fn a_defender_win_and_the_cap() {
        // 2 attack 10 in the open: victory 100·2/12 = 16.67 → 17; result 21 > 17, defender wins,
        // difference 4: W2 L2, basic 12/15 → 1.6 each → 2 each; the attacker has only 2.
        let b = battle(2, 10, Defence::Open, &at(95145), VictoryRounding::Exact);
        assert_eq!(b.victory, 17);
        assert_eq!(b.winner, Winner::Defender);
        assert_eq!(b.band, "0–5");
        assert_eq!((b.winner_casualties, b.loser_casualties), (2, 2));
        // 1 attacks 20: victory 100/21 = 4.76 → 5; result 21, defender wins by 16 (W1 L1.5);
        // basic 21/15: the loser is called for 1.5 × 1.4 = 2.1 → 2 but has only 1 factor.
        let tiny = battle(1, 20, Defence::Open, &at(95145), VictoryRounding::Exact);
        assert_eq!(tiny.victory, 5);
        assert_eq!(tiny.band, "11–20");
        assert_eq!(tiny.loser_casualties_called, 2);
        assert_eq!(tiny.loser_casualties, 1);
        assert_eq!(tiny.winner_casualties, 1);
        assert_eq!(tiny.attacker_casualties, 1);
    }
}
