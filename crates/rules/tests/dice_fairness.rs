//! The dice stream is unbiased: 600,000 d6 and 600,000 d10 drawn from real post streams, their
//! face counts checked against uniform with a chi-square bound.

use adjutant_rules::DiceStream;

/// Chi-square critical values at p = 0.001 (5 and 9 degrees of freedom).
const CRITICAL_5_DF: f64 = 20.515;
const CRITICAL_9_DF: f64 = 27.877;

fn chi_square(faces: u32, draws: usize) -> f64 {
    let mut counts = vec![0u64; faces as usize];
    let mut drawn = 0;
    let mut post = 0u64;
    while drawn < draws {
        // Many posts of a campaign, 100 dice each, the way rulesets use the stream.
        let mut stream =
            DiceStream::from_text(format!("5b0d1c2e-8a7f-4e21-9c3d-000000000000/{post}/2026-11-21T09:51:45.123Z"));
        for _ in 0..100.min(draws - drawn) {
            counts[(stream.roll(faces, "fairness") - 1) as usize] += 1;
            drawn += 1;
        }
        post += 1;
    }
    let expected = draws as f64 / f64::from(faces);
    counts.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum()
}

#[test]
fn six_hundred_thousand_d6_are_uniform() {
    let x2 = chi_square(6, 600_000);
    assert!(x2 < CRITICAL_5_DF, "chi-square {x2} over {CRITICAL_5_DF}");
}

#[test]
fn six_hundred_thousand_d10_are_uniform() {
    let x2 = chi_square(10, 600_000);
    assert!(x2 < CRITICAL_9_DF, "chi-square {x2} over {CRITICAL_9_DF}");
}

#[test]
fn a_biased_die_would_fail_the_bound() {
    // The bound has teeth: modulo without rejection over 256 byte values favours low faces of a
    // d10 (26 ways for faces 1–6, 25 for 7–10); with 600,000 draws that shows plainly.
    let mut counts = [0u64; 10];
    let mut post = 0u64;
    let mut drawn = 0;
    while drawn < 600_000 {
        let text = format!("bias/{post}/x");
        for i in 0..4 {
            for byte in DiceStream::block_of(&text, i) {
                if drawn < 600_000 {
                    counts[usize::from(byte) % 10] += 1;
                    drawn += 1;
                }
            }
        }
        post += 1;
    }
    let expected = 60_000.0;
    let x2: f64 = counts.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum();
    assert!(x2 > CRITICAL_9_DF, "modulo bias went unseen: {x2}");
}
