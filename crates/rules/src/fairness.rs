//! Statistics for the moderators' fairness report (`docs/fairness.md` explains how to read it).
//!
//! The Short ACW result number is read off the clock: a player who knows the victory number
//! can time the second of his attack post. These tests look for the traces that leaves:
//!
//! - attacker wins against what the victory numbers promise: attack i is won with probability
//!   p_i = (victory_i + 1)/100 (result numbers 0..=victory win, out of 100), so the number of wins
//!   follows a Poisson-binomial distribution, computed exactly by dynamic programming;
//! - the spread of result numbers against uniform 0–99 (chi-square);
//! - posts bunched at particular seconds of the minute, and milliseconds mod 6 (which decide
//!   the Rebel reinforcement roll), against uniform (chi-square).
//!
//! These are statistics, not result numbers, so they use `f64`.

use chrono::{DateTime, Timelike, Utc};
use serde::{Deserialize, Serialize};

// ---- distributions --------------------------------------------------------------------------

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, nine terms; about 15 significant digits).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const COEFFICIENTS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1 − x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEFFICIENTS[0];
    for (i, c) in COEFFICIENTS.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

const EPSILON: f64 = 1e-15;
const MAX_ITERATIONS: usize = 10_000;

/// The regularized upper incomplete gamma function Q(a, x) = Γ(a, x)/Γ(a), for a > 0, x ≥ 0.
///
/// Below x = a + 1 the series for P(a, x) converges fast and Q = 1 − P; above it the continued
/// fraction for Q converges fast (evaluated by the modified Lentz method). Computing the small
/// one directly keeps tiny p-values accurate instead of losing them in 1 − P.
pub fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 || a <= 0.0 {
        return 1.0;
    }
    let log_prefactor = a * x.ln() - x - ln_gamma(a);
    if x < a + 1.0 {
        // P(a, x) = e^−x x^a / Γ(a+1) · Σ x^n / ((a+1)…(a+n))
        let mut term = 1.0 / a;
        let mut sum = term;
        let mut ap = a;
        for _ in 0..MAX_ITERATIONS {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * EPSILON {
                break;
            }
        }
        (1.0 - sum * log_prefactor.exp()).clamp(0.0, 1.0)
    } else {
        // Q(a, x) = e^−x x^a / Γ(a) · 1/(x+1−a− 1·(1−a)/(x+3−a− 2·(2−a)/(x+5−a− …)))
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..MAX_ITERATIONS {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < EPSILON {
                break;
            }
        }
        (log_prefactor.exp() * h).clamp(0.0, 1.0)
    }
}

/// P(χ² ≥ statistic) with `degrees_of_freedom` degrees of freedom: Q(k/2, x/2).
pub fn chi_square_p_value(statistic: f64, degrees_of_freedom: u32) -> f64 {
    if degrees_of_freedom == 0 {
        return 1.0;
    }
    gamma_q(f64::from(degrees_of_freedom) / 2.0, statistic / 2.0)
}

/// The exact distribution of the number of successes of independent trials with success
/// probabilities `p` (Poisson-binomial): element k is P(exactly k successes).
pub fn poisson_binomial(p: &[f64]) -> Vec<f64> {
    let mut dist = vec![0.0; p.len() + 1];
    dist[0] = 1.0;
    for (i, &pi) in p.iter().enumerate() {
        let pi = pi.clamp(0.0, 1.0);
        // Walk down so each entry still holds the previous trial's value when read.
        for k in (0..=i + 1).rev() {
            let stay = dist[k] * (1.0 - pi);
            let step = if k > 0 { dist[k - 1] * pi } else { 0.0 };
            dist[k] = stay + step;
        }
    }
    dist
}

/// Two-sided p-value of `observed` under `dist`: the total probability of every outcome no
/// more likely than the observed one.
pub fn two_sided_p_value(dist: &[f64], observed: usize) -> f64 {
    let Some(&at) = dist.get(observed) else {
        return 0.0;
    };
    // A relative tolerance so outcomes exactly as likely (symmetric cases) count in full.
    let bound = at * (1.0 + 1e-7);
    dist.iter().filter(|&&q| q <= bound).sum::<f64>().min(1.0)
}

// ---- verdicts --------------------------------------------------------------------------------

/// Plain words for a p-value.
fn verdict_for(p: f64, what: &str) -> String {
    if p < 0.001 {
        format!("{what} would happen by chance less than once in a thousand fair campaigns (p = {p:.2e}): look closely at these posts")
    } else if p < 0.01 {
        format!("{what} is unlikely by chance (p = {p:.4}): worth a look")
    } else if p < 0.05 {
        format!("{what} is a little unusual (p = {p:.3}); about one fair player in twenty looks at least this odd")
    } else {
        format!("{what} is consistent with chance (p = {p:.3})")
    }
}

// ---- attacker wins ---------------------------------------------------------------------------

/// One attack: its victory number and the result number it got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attack {
    pub victory: u32,
    pub result: u32,
}

impl Attack {
    /// Seed: the attacker wins when the result number is at most the victory number.
    pub fn won(self) -> bool {
        self.result <= self.victory
    }

    /// (victory + 1)/100, clamped to [0, 1]: the share of result numbers 0–99 that win.
    pub fn win_probability(self) -> f64 {
        (f64::from(self.victory) + 1.0).min(100.0) / 100.0
    }
}

/// Attacker wins observed against expected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttackerWins {
    pub attacks: usize,
    pub observed: usize,
    /// Σ (victory + 1)/100.
    pub expected: f64,
    /// √Σ p(1 − p).
    pub standard_deviation: f64,
    /// (observed − expected) / standard deviation, for orientation only.
    pub z: f64,
    /// Exact two-sided p-value from the Poisson-binomial distribution.
    pub p_value: f64,
    pub method: String,
    pub verdict: String,
}

/// Attacker wins observed against the victory numbers' promise.
pub fn attacker_wins(attacks: &[Attack]) -> AttackerWins {
    let p: Vec<f64> = attacks.iter().map(|a| a.win_probability()).collect();
    let observed = attacks.iter().filter(|a| a.won()).count();
    let expected: f64 = p.iter().sum();
    let variance: f64 = p.iter().map(|q| q * (1.0 - q)).sum();
    let standard_deviation = variance.sqrt();
    let z = if standard_deviation > 0.0 { (observed as f64 - expected) / standard_deviation } else { 0.0 };
    let p_value = two_sided_p_value(&poisson_binomial(&p), observed);
    let what = format!("{observed} wins in {} attacks where {expected:.1} were expected", attacks.len());
    let verdict = if attacks.len() < 10 {
        format!("{what}: too few attacks to tell (p = {p_value:.3})")
    } else {
        verdict_for(p_value, &what)
    };
    AttackerWins {
        attacks: attacks.len(),
        observed,
        expected,
        standard_deviation,
        z,
        p_value,
        method: "exact Poisson-binomial distribution of the number of wins (p_i = (victory_i + 1)/100), two-sided: the probability of every win count no more likely than the observed one".into(),
        verdict,
    }
}

// ---- uniformity ------------------------------------------------------------------------------

/// A chi-square test of counts against a uniform spread over the cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UniformityTest {
    /// What a cell is ("result number", "second of the minute", …).
    pub cell: String,
    pub counts: Vec<u64>,
    pub total: u64,
    pub expected_per_cell: f64,
    pub chi_square: f64,
    pub degrees_of_freedom: u32,
    pub p_value: f64,
    /// Set when the expected count per cell is below 5, where the chi-square approximation is
    /// rough.
    pub note: Option<String>,
}

/// Chi-square against uniform for `counts`.
pub fn uniformity(cell: &str, counts: Vec<u64>) -> UniformityTest {
    let total: u64 = counts.iter().sum();
    let cells = counts.len();
    let expected = if cells == 0 { 0.0 } else { total as f64 / cells as f64 };
    let chi_square =
        if expected > 0.0 { counts.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum() } else { 0.0 };
    let degrees_of_freedom = cells.saturating_sub(1) as u32;
    let p_value = if total == 0 { 1.0 } else { chi_square_p_value(chi_square, degrees_of_freedom) };
    let note = (expected < 5.0).then(|| {
        format!("only {expected:.2} expected per {cell}: below 5, the chi-square p-value is only a rough guide")
    });
    UniformityTest {
        cell: cell.to_string(),
        counts,
        total,
        expected_per_cell: expected,
        chi_square,
        degrees_of_freedom,
        p_value,
        note,
    }
}

/// Result numbers against uniform 0–99.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultSpread {
    /// 100 cells, one per result number (99 degrees of freedom).
    pub by_number: UniformityTest,
    /// 10 cells by tens digit (0–9, 10–19, …), reported when fewer than 5 are expected per number.
    pub by_tens: Option<UniformityTest>,
    pub verdict: String,
}

/// The spread of result numbers (values above 99 are ignored).
pub fn result_spread(results: &[u32]) -> ResultSpread {
    let mut by_number = vec![0u64; 100];
    let mut by_tens = vec![0u64; 10];
    for &r in results.iter().filter(|&&r| r < 100) {
        by_number[r as usize] += 1;
        by_tens[(r / 10) as usize] += 1;
    }
    let by_number = uniformity("result number", by_number);
    let coarse = by_number.note.is_some().then(|| uniformity("ten result numbers", by_tens));
    let (p, what) = match &coarse {
        Some(t) => (t.p_value, format!("the spread of {} result numbers over tens 0–9 … 90–99", t.total)),
        None => (by_number.p_value, format!("the spread of {} result numbers over 0–99", by_number.total)),
    };
    let verdict = if by_number.total < 20 {
        format!("{} result numbers: too few to tell", by_number.total)
    } else {
        verdict_for(p, &capitalise(&what))
    };
    ResultSpread { by_number, by_tens: coarse, verdict }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

// ---- timing of posts -------------------------------------------------------------------------

/// A second of the minute with more posts than its share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusySecond {
    pub second: u32,
    pub posts: u64,
    pub expected: f64,
    /// posts / expected.
    pub ratio: f64,
}

/// Posts bunched at particular seconds or milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostTiming {
    pub posts: usize,
    /// 60 cells: the second of the minute (which, with the hour and minute, fixes the result
    /// number).
    pub by_second: UniformityTest,
    /// 6 cells: the millisecond mod 6 (which decides the Rebel reinforcement roll).
    pub by_millisecond_mod_6: UniformityTest,
    /// Up to five seconds with the most posts above their share, busiest first.
    pub busiest_seconds: Vec<BusySecond>,
    pub verdict: String,
}

/// How a player's posts fall on the seconds of the minute and on milliseconds mod 6.
pub fn post_timing(stamps: &[DateTime<Utc>]) -> PostTiming {
    let mut by_second = vec![0u64; 60];
    let mut by_mod_6 = vec![0u64; 6];
    for s in stamps {
        // A leap second shows as second 59 with 1000+ milliseconds; read it as 59.999.
        by_second[(s.second().min(59)) as usize] += 1;
        by_mod_6[(s.timestamp_subsec_millis().min(999) % 6) as usize] += 1;
    }
    let seconds = uniformity("second of the minute", by_second);
    let millis = uniformity("millisecond mod 6", by_mod_6);
    let mut busiest: Vec<BusySecond> = seconds
        .counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c as f64 > seconds.expected_per_cell)
        .map(|(second, &posts)| BusySecond {
            second: second as u32,
            posts,
            expected: seconds.expected_per_cell,
            ratio: posts as f64 / seconds.expected_per_cell,
        })
        .collect();
    busiest.sort_by(|a, b| b.posts.cmp(&a.posts).then(a.second.cmp(&b.second)));
    busiest.truncate(5);
    let verdict = if stamps.len() < 30 {
        format!("{} posts: too few to tell whether they bunch at particular seconds", stamps.len())
    } else {
        let p = seconds.p_value.min(millis.p_value);
        let which = if seconds.p_value <= millis.p_value { "seconds of the minute" } else { "milliseconds mod 6" };
        verdict_for(p, &format!("How {} posts fall on the {which}", stamps.len()))
    };
    PostTiming {
        posts: stamps.len(),
        by_second: seconds,
        by_millisecond_mod_6: millis,
        busiest_seconds: busiest,
        verdict,
    }
}

// ---- one player ------------------------------------------------------------------------------

/// The three parts of the report for one player.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlayerFairness {
    pub player: String,
    pub attacker_wins: AttackerWins,
    /// The result numbers of the player's attacks.
    pub result_spread: ResultSpread,
    pub post_timing: PostTiming,
}

/// A player's report from his attacks and the stamps of his posts. The stamps that matter most
/// are those of the posts that fixed result numbers (`attack`, `resolve_attack`); passing all
/// of his posts dilutes a bunching at particular seconds with his ordinary moves.
pub fn player_fairness(player: &str, attacks: &[Attack], stamps: &[DateTime<Utc>]) -> PlayerFairness {
    let results: Vec<u32> = attacks.iter().map(|a| a.result).collect();
    PlayerFairness {
        player: player.to_string(),
        attacker_wins: attacker_wins(attacks),
        result_spread: result_spread(&results),
        post_timing: post_timing(stamps),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        // Γ(n) = (n − 1)!
        let mut factorial = 1.0f64;
        for n in 1..30 {
            assert!(close(ln_gamma(f64::from(n)), factorial.ln(), 1e-10), "Γ({n})");
            factorial *= f64::from(n);
        }
        // Γ(½) = √π
        assert!(close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-12));
    }

    #[test]
    fn chi_square_p_values_match_the_published_tables() {
        // Critical values from the standard chi-square table (upper-tail probabilities).
        let table = [
            (3.841, 1, 0.05),
            (6.635, 1, 0.01),
            (10.828, 1, 0.001),
            (5.991, 2, 0.05),
            (16.919, 9, 0.05),
            (21.666, 9, 0.01),
            (18.307, 10, 0.05),
            (11.070, 5, 0.05),
            (15.086, 5, 0.01),
            (77.931, 59, 0.05),
            (123.225, 99, 0.05),
            (134.642, 99, 0.01),
            (148.230, 99, 0.001),
            (98.334, 99, 0.5),
        ];
        for (x, df, p) in table {
            let got = chi_square_p_value(x, df);
            assert!(close(got, p, p * 2e-3), "χ²({df}) ≥ {x}: {got}, table {p}");
        }
        // Two degrees of freedom: the p-value is exactly e^(−x/2).
        for x in [0.5, 2.0, 10.0, 40.0] {
            assert!(close(chi_square_p_value(x, 2), (-x / 2.0f64).exp(), 1e-14));
        }
        assert_eq!(chi_square_p_value(0.0, 99), 1.0);
        assert!(chi_square_p_value(1000.0, 99) < 1e-100);
    }

    #[test]
    fn equal_chances_give_the_binomial() {
        let n = 12;
        let p = 0.3f64;
        let dist = poisson_binomial(&vec![p; n]);
        let mut choose = 1.0f64;
        for (k, &d) in dist.iter().enumerate() {
            let binomial = choose * p.powi(k as i32) * (1.0 - p).powi((n - k) as i32);
            assert!(close(d, binomial, 1e-15), "k = {k}: {d} vs {binomial}");
            choose = choose * (n - k) as f64 / (k + 1) as f64;
        }
        assert!(close(dist.iter().sum(), 1.0, 1e-14));
    }

    #[test]
    fn a_small_case_by_hand() {
        // p = ½ and ⅕: P(0) = ½·⅘ = 0.4, P(1) = ½·⅘ + ½·⅕ = 0.5, P(2) = ½·⅕ = 0.1.
        let dist = poisson_binomial(&[0.5, 0.2]);
        assert!(close(dist[0], 0.4, 1e-15) && close(dist[1], 0.5, 1e-15) && close(dist[2], 0.1, 1e-15));
        assert!(close(two_sided_p_value(&dist, 2), 0.1, 1e-15));
        assert!(close(two_sided_p_value(&dist, 0), 0.5, 1e-15));
        assert!(close(two_sided_p_value(&dist, 1), 1.0, 1e-15));
        // Symmetric: 10 fair coins, 8 heads → P(≤2) + P(≥8) = 2·56/1024.
        let coins = poisson_binomial(&[0.5; 10]);
        assert!(close(two_sided_p_value(&coins, 8), 112.0 / 1024.0, 1e-12));
    }

    #[test]
    fn win_probability_counts_the_winning_result_numbers() {
        assert_eq!(Attack { victory: 56, result: 21 }.win_probability(), 0.57);
        assert!(Attack { victory: 56, result: 56 }.won());
        assert!(!Attack { victory: 56, result: 57 }.won());
        assert_eq!(Attack { victory: 0, result: 0 }.win_probability(), 0.01);
        assert_eq!(Attack { victory: 100, result: 99 }.win_probability(), 1.0);
    }

    #[test]
    fn an_aimed_player_shows_a_tiny_p_value() {
        // Forty attacks at victory 40 (41 % each), every one won: the result was always aimed low.
        let aimed: Vec<Attack> = (0..40).map(|i| Attack { victory: 40, result: (i * 7) % 41 }).collect();
        let report = attacker_wins(&aimed);
        assert_eq!(report.observed, 40);
        assert!(close(report.expected, 16.4, 1e-9));
        // P(all 40 won) = 0.41^40 ≈ 3·10⁻¹⁶, and nothing is less likely.
        assert!(report.p_value < 1e-15, "{}", report.p_value);
        assert!(report.verdict.contains("less than once in a thousand"), "{}", report.verdict);
        // A fair player: wins where results fall uniformly.
        let fair: Vec<Attack> = (0..100).map(|i| Attack { victory: 50, result: (i * 37) % 100 }).collect();
        let report = attacker_wins(&fair);
        assert_eq!(report.observed, 51);
        assert!(report.p_value > 0.5, "{}", report.p_value);
        assert!(report.verdict.contains("consistent with chance"), "{}", report.verdict);
    }

    #[test]
    fn result_numbers_against_uniform() {
        // Every number exactly five times: χ² = 0.
        let even: Vec<u32> = (0..500).map(|i| i % 100).collect();
        let s = result_spread(&even);
        assert_eq!(s.by_number.chi_square, 0.0);
        assert_eq!(s.by_number.degrees_of_freedom, 99);
        assert!(close(s.by_number.p_value, 1.0, 1e-12));
        assert!(s.by_tens.is_none());
        // Forty results all below 20: few per cell, so the ten-bucket test is reported too.
        let low: Vec<u32> = (0..40).map(|i| i % 20).collect();
        let s = result_spread(&low);
        assert!(s.by_number.note.is_some());
        let tens = s.by_tens.expect("coarse test");
        assert_eq!(tens.counts, vec![20, 20, 0, 0, 0, 0, 0, 0, 0, 0]);
        // χ² = 2·(20 − 4)²/4 + 8·4 = 128 + 32 = 160 on 9 degrees of freedom.
        assert!(close(tens.chi_square, 160.0, 1e-9));
        assert!(tens.p_value < 1e-20);
        assert!(s.verdict.contains("less than once in a thousand"), "{}", s.verdict);
    }

    #[test]
    fn posts_bunched_at_one_second_stand_out() {
        let base = Utc.with_ymd_and_hms(2026, 3, 2, 9, 0, 0).unwrap();
        // Sixty posts, one each minute, at second 7 and varied milliseconds.
        let bunched: Vec<DateTime<Utc>> = (0..60)
            .map(|i| base + chrono::Duration::minutes(i) + chrono::Duration::milliseconds(7_000 + i * 13))
            .collect();
        let t = post_timing(&bunched);
        assert_eq!(t.by_second.counts[7], 60);
        assert_eq!(t.busiest_seconds[0].second, 7);
        assert_eq!(t.busiest_seconds[0].posts, 60);
        assert!(close(t.busiest_seconds[0].ratio, 60.0, 1e-12));
        // χ² = (60 − 1)²/1 + 59·1 = 3540 on 59 degrees of freedom.
        assert!(close(t.by_second.chi_square, 3540.0, 1e-9));
        assert!(t.by_second.p_value < 1e-100);
        assert!(t.verdict.contains("seconds of the minute"), "{}", t.verdict);
        // Posts spread over every second: nothing stands out.
        let spread: Vec<DateTime<Utc>> = (0..120).map(|i| base + chrono::Duration::milliseconds(i * 61_001)).collect();
        let t = post_timing(&spread);
        assert!(t.by_second.p_value > 0.05, "{:?}", t.by_second);
        assert_eq!(t.by_millisecond_mod_6.counts.iter().sum::<u64>(), 120);
        assert!(t.verdict.contains("consistent with chance"), "{}", t.verdict);
    }

    #[test]
    fn a_player_report_puts_the_parts_together() {
        let base = Utc.with_ymd_and_hms(2026, 3, 2, 9, 51, 0).unwrap();
        let attacks: Vec<Attack> = (0..40).map(|i| Attack { victory: 20, result: (i * 3) % 21 }).collect();
        let stamps: Vec<DateTime<Utc>> =
            (0..40).map(|i| base + chrono::Duration::minutes(i) + chrono::Duration::seconds(5)).collect();
        let r = player_fairness("alice", &attacks, &stamps);
        assert_eq!(r.player, "alice");
        assert_eq!(r.attacker_wins.observed, 40);
        assert_eq!(r.result_spread.by_number.total, 40);
        assert_eq!(r.post_timing.busiest_seconds[0].second, 5);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["attacker_wins"]["observed"], 40);
        assert!(json["post_timing"]["verdict"].as_str().unwrap().contains("less than once in a thousand"));
    }

    #[test]
    fn reports_serialize_without_nan() {
        let empty = post_timing(&[]);
        let text = serde_json::to_string(&empty).unwrap();
        assert!(!text.contains("null,\"degrees") && !text.contains("NaN"));
        assert_eq!(empty.by_second.p_value, 1.0);
        let wins = attacker_wins(&[]);
        assert_eq!((wins.observed, wins.p_value), (0, 1.0));
        serde_json::to_string(&wins).unwrap();
        serde_json::to_string(&result_spread(&[])).unwrap();
    }
}
