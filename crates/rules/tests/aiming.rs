//! A client that aims its attacks at winning seconds, played against both result-time rules.
//!
//! The client knows each attack's victory number and reads the public calculator: it waits for
//! the first second of the coming minute whose result number wins and posts then (its requests
//! arrive 250 ms into the second, well inside it). Under the seed's rule (`post`) every aimed
//! attack wins, and the fairness report's attacker-wins test flags the side at p < 0.01. Under
//! `sealed_delay`, with the same aimed stamps, the result time is the stamp plus a delay from
//! the campaign's hash chain: the side wins no more often than its victory numbers promise, and
//! the report does not flag it.
//!
//! The simulation runs the server's own arithmetic on stamps a test clock sets: the post's chain
//! hash (`chain::Link`), the chain secret and delay (`result_time`), the result number
//! (`post_time`) and the report's test (`fairness`). Nothing here reads the wall clock.

use adjutant_rules::chain::{Link, GENESIS};
use adjutant_rules::fairness::{player_fairness, Attack, PlayerFairness};
use adjutant_rules::result_time::{step_down, ChainSecret};
use adjutant_rules::Clock;
use chrono::{DateTime, Duration, TimeZone, Utc};

const ATTACKS: usize = 40;
const CAMPAIGN: &str = "5ea1ed00-0000-4000-8000-000000000020";
const PLAYER: &str = "a1a1a1a1-0000-4000-8000-000000000001";

#[derive(Clone, Copy, PartialEq)]
enum Rule {
    Post,
    SealedDelay,
}

/// Victory numbers from 25 to 60, as battles come.
fn victory(i: usize) -> u32 {
    25 + (i as u32 * 17) % 36
}

/// The first stamp in the coming minute whose own result number wins, as the calculator shows.
fn aimed_stamp(clock: &Clock, now: DateTime<Utc>, victory: u32) -> DateTime<Utc> {
    (1..=60)
        .map(|s| now + Duration::seconds(s))
        .find(|t| clock.result_number(*t).result <= victory)
        .unwrap_or(now + Duration::seconds(1))
}

/// Plays `ATTACKS` aimed attacks; `top` is the campaign's chain top secret (sealed delay).
fn play(rule: Rule, top: &str) -> (PlayerFairness, Vec<Attack>) {
    let clock = Clock::default();
    // A chain as long as the attacks: its length changes nothing but the hashing.
    let length = ATTACKS as u64;
    // The test clock: 9:00:00.250 on the seed's day, then wherever the attacks take it.
    let mut now = Utc.with_ymd_and_hms(2026, 11, 21, 9, 0, 0).unwrap() + Duration::milliseconds(250);
    let mut prev_hash = GENESIS.to_owned();
    let (mut attacks, mut stamps) = (vec![], vec![]);
    for i in 0..ATTACKS {
        let victory = victory(i);
        let stamp = aimed_stamp(&clock, now, victory);
        let body = format!("{{\"target\":\"0604\",\"units\":[\"us-{i}th-inf\"]}}");
        let hash = Link {
            prev_hash: &prev_hash,
            campaign_id: CAMPAIGN,
            seq: i as i64 + 14,
            stamp,
            author_id: PLAYER,
            side: Some("union"),
            kind: "attack",
            body: &body,
        }
        .hash();
        let result_time = match rule {
            Rule::Post => stamp,
            Rule::SealedDelay => {
                let secret = ChainSecret::from_top(i as u64 + 1, length, top, None);
                secret.delay(&hash, stamp).result_time().unwrap()
            }
        };
        attacks.push(Attack { victory, result: clock.result_number(result_time).result });
        stamps.push(stamp);
        prev_hash = hash;
        // The rest of the turn: casualties, retreats, the other side's turn.
        now = stamp + Duration::minutes(7) + Duration::seconds(i as i64 % 13);
    }
    (player_fairness("union", &attacks, &stamps), attacks)
}

#[test]
fn aimed_attacks_win_under_the_seeds_rule_and_are_flagged() {
    let (report, attacks) = play(Rule::Post, "");
    let wins = report.attacker_wins;
    assert_eq!(wins.observed, ATTACKS, "every aimed attack wins: {attacks:?}");
    assert!(wins.expected < ATTACKS as f64 * 0.5, "{}", wins.expected);
    assert!(wins.p_value < 0.01, "flagged: {}", wins.verdict);
    eprintln!("post: {}", wins.verdict);
}

#[test]
fn the_same_aim_wins_no_more_than_expected_under_sealed_delay() {
    let top = step_down("the campaign's chain top secret, drawn at creation");
    let (report, _) = play(Rule::SealedDelay, &top);
    let wins = report.attacker_wins;
    assert!(wins.observed < ATTACKS, "{}", wins.verdict);
    assert!(wins.p_value >= 0.01, "not flagged: {}", wins.verdict);
    assert!(wins.z < 2.33, "no more wins than expected: {}", wins.verdict);
    eprintln!("sealed delay, one campaign: {}", wins.verdict);

    // Over many campaigns (each its own secret), the aimed side's wins add up to what the
    // victory numbers promise.
    let (mut observed, mut expected, mut variance, mut flagged) = (0usize, 0f64, 0f64, 0);
    for c in 0..25 {
        let (report, _) = play(Rule::SealedDelay, &step_down(&format!("campaign {c}")));
        let w = report.attacker_wins;
        observed += w.observed;
        expected += w.expected;
        variance += w.standard_deviation * w.standard_deviation;
        flagged += usize::from(w.p_value < 0.01);
    }
    let z = (observed as f64 - expected) / variance.sqrt();
    eprintln!("sealed delay, 25 campaigns: {observed} wins, {expected:.1} expected, z = {z:.2}, {flagged} flagged");
    assert!(z.abs() < 3.0, "{observed} wins in {} aimed attacks, {expected:.1} expected (z = {z:.2})", 25 * ATTACKS);
    assert!(flagged <= 2, "{flagged} of 25 campaigns flagged at p < 0.01");
}
