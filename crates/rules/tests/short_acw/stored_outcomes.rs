//! Outcomes are stored as JSON and must read back byte for byte, whatever build wrote them: every
//! outcome that scripted and generated campaigns produce (each rules version, with deadlines
//! missed and reminded) is compared with `tests/data/stored_outcomes.jsonl`, written by the
//! build before outcomes were typed, and each reads back into its type and serialises to the
//! same bytes. `ADJUTANT_WRITE_STORED_OUTCOMES=1` writes the file afresh (only when the rules
//! deliberately change what an outcome says).

use crate::common::*;
use crate::properties::make_post;
use crate::victory::{before_the_fortified_attack, set_unit, stamp_with_result_at_most};
use adjutant_rules::outcome::OutcomeData;
use adjutant_rules::result_time::{top_secret, ChainSecret};
use adjutant_rules::short_acw::deadline::{self, Deadlines, Limit, MissedTurn};
use adjutant_rules::short_acw::{apply, Order, Outcome, SealedDraw, Settings, VictoryRounding};
use chrono::{Duration, NaiveTime, TimeDelta};
use serde_json::{json, Value};

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/stored_outcomes.jsonl");

/// A small deterministic generator, so the file is the same on every machine.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn line(o: &Outcome) -> String {
    serde_json::to_string(&json!({"kind": o.kind(), "headline": o.headline, "data": o.data})).unwrap()
}

fn settings(version: u32, variant: u64) -> Settings {
    let deadlines = match variant % 3 {
        0 => None,
        1 => Some(Deadlines { limit: Limit::After(TimeDelta::hours(24)), missed: MissedTurn::EndTurn }),
        _ => Some(Deadlines {
            limit: Limit::AtTimeOfDay {
                at: NaiveTime::from_hms_opt(20, 0, 0).unwrap(),
                at_least: TimeDelta::hours(12),
            },
            missed: if variant.is_multiple_of(2) { MissedTurn::Moderator } else { MissedTurn::EndTurn },
        }),
    };
    let victory_rounding = if variant % 4 == 3 { VictoryRounding::OneDecimal } else { VictoryRounding::Exact };
    Settings { rules_version: version, deadlines, victory_rounding, ..Settings::default() }
}

/// Every outcome of the campaigns, in order.
fn outcomes() -> Vec<String> {
    let mut lines = vec![];
    // The scripted campaign under each rules version, with and without deadlines.
    for version in 1..=3 {
        for variant in 0..4 {
            let mut g = Game::new();
            g.settings = settings(version, variant);
            if let Some(d) = g.settings.deadlines {
                g.state.clock = Some(deadline::start(&g.state, &d, chrono_tz::UTC, g.clock));
            }
            for p in script() {
                match g.post_at(p.side, &p.kind, p.body.clone(), p.stamp) {
                    Ok(applied) => lines.extend(applied.outcomes.iter().map(line)),
                    Err(_) => break,
                }
            }
        }
    }
    // A sealed-delay campaign: every result-fixing post draws its delay from the chain.
    let mut g = Game::new();
    let top = top_secret([7; 32]);
    for (draw, p) in script().into_iter().enumerate() {
        let secret = ChainSecret::from_top(draw as u64 + 1, 64, &top, None);
        let post_hash = format!("{:064x}", draw * 7919);
        let sealed = Some(SealedDraw { secret: &secret, post_hash: &post_hash });
        let order = Order {
            seq: draw as u64 + 1,
            side: p.side,
            kind: &p.kind,
            body: &p.body,
            stamp: p.stamp,
            settings: &g.settings,
            sealed,
        };
        let Ok(applied) = apply(&g.scenario, &g.state, &order) else { break };
        lines.extend(applied.outcomes.iter().map(line));
        g.state = applied.state;
    }
    // A unit at 0 factors attacked is eliminated (versions 2 and 3).
    for version in 2..=3 {
        let mut g = before_the_fortified_attack(version);
        set_unit(&mut g, "cs-51st-inf", 3, false);
        set_unit(&mut g, "cs-52nd-inf", 0, true);
        let stamp = stamp_with_result_at_most(&g, 99);
        let body = json!({"units": ["us-3rd-inf", "us-14th-inf"], "target": "0604"});
        lines.extend(g.post_at(U, "attack", body, stamp).unwrap().outcomes.iter().map(line));
    }
    // Generated campaigns: plausible posts, deadlines that run out and reminders before them.
    let mut rng = Lcg(20261127);
    for game in 0..60u64 {
        let version = 1 + (game % 3) as u32;
        let mut g = if game % 2 == 0 { scripted(13) } else { scripted(2) };
        g.settings = settings(version, game / 3);
        if let Some(d) = g.settings.deadlines {
            g.state.clock = Some(deadline::start(&g.state, &d, chrono_tz::UTC, g.clock));
        }
        for _ in 0..160 {
            if g.state.result.is_some() {
                break;
            }
            let roll = rng.next();
            if roll.is_multiple_of(9) && g.settings.deadlines.is_some() {
                let wait = g.state.clock.as_ref().and_then(|c| c.waits.iter().find(|w| w.due.is_some()).cloned());
                if let Some(wait) = wait {
                    let (due, side, stage) = (wait.due.unwrap(), wait.side, wait.stage.clone());
                    let applied = if roll.is_multiple_of(2) {
                        deadline::remind(
                            &g.state,
                            &g.settings,
                            due - TimeDelta::hours(1),
                            side,
                            &stage,
                            TimeDelta::hours(1),
                        )
                    } else {
                        deadline::missed(&g.scenario, &g.state, &g.settings, due, side, &stage)
                    };
                    if let Ok(applied) = applied {
                        lines.extend(applied.outcomes.iter().map(line));
                        g.state = applied.state;
                        g.clock = g.clock.max(due - TimeDelta::hours(1));
                    }
                    continue;
                }
            }
            let pick = (rng.next() as u8, rng.next() as u16, rng.next() as u16, rng.next() as u16);
            let (side, kind, body, _) = make_post(&g, pick);
            let stamp = g.clock + Duration::milliseconds(1_000 + i64::from(pick.3) * 37);
            if let Ok(applied) = g.post_at(side, &kind, body, stamp) {
                lines.extend(applied.outcomes.iter().map(line));
            }
        }
    }
    lines
}

/// Whether the sorted writer takes `data` itself, not leaving it to a `Value`.
fn sorted_written(data: &OutcomeData) -> bool {
    use adjutant_rules::sorted_json::to_string;
    match data {
        OutcomeData::Deployed(d) => to_string(d),
        OutcomeData::DeploymentSealed(d) => to_string(d),
        OutcomeData::TurnBegins(d) => to_string(d),
        OutcomeData::ReinforcementRoll(d) => to_string(d),
        OutcomeData::Reinforced(d) => to_string(d),
        OutcomeData::Moved(d) => to_string(d),
        OutcomeData::AttackDeclared(d) => to_string(d),
        OutcomeData::CavalryOption(d) => to_string(d),
        OutcomeData::AttackVoid(d) => to_string(d),
        OutcomeData::Battle(d) => to_string(d),
        OutcomeData::Casualties(d) => to_string(d),
        OutcomeData::Eliminated(d) => to_string(d),
        OutcomeData::Retreat(d) => to_string(d),
        OutcomeData::TurnEnded(d) => to_string(d),
        OutcomeData::GameOver(d) => to_string(d),
        OutcomeData::Deadline(d) => to_string(d),
        OutcomeData::DeadlinePassed(d) => to_string(d),
        OutcomeData::DeadlineNear(d) => to_string(d),
        OutcomeData::AttackCancelled(d) => to_string(d),
        OutcomeData::Paused(d) => to_string(d),
        OutcomeData::Resumed(d) => to_string(d),
        OutcomeData::Extended(d) => to_string(d),
        OutcomeData::PlayerReplaced(d) => to_string(d),
        OutcomeData::Resolution(d) => to_string(d),
    }
    .is_some()
}

#[test]
fn every_outcome_is_stored_byte_for_byte_as_before() {
    let lines = outcomes();
    let text = lines.join("\n") + "\n";
    if std::env::var_os("ADJUTANT_WRITE_STORED_OUTCOMES").is_some() {
        std::fs::write(FILE, &text).unwrap();
        return;
    }
    let stored = std::fs::read_to_string(FILE).unwrap();
    let mut kinds = std::collections::BTreeSet::new();
    for (i, (now, then)) in text.lines().zip(stored.lines()).enumerate() {
        assert_eq!(now, then, "outcome {} is stored differently", i + 1);
        let v: Value = serde_json::from_str(then).unwrap();
        let kind = v["kind"].as_str().unwrap();
        kinds.insert(kind.to_owned());
        // Read back as its type, it is written again byte for byte.
        let typed = OutcomeData::read(kind, &v["data"]).unwrap_or_else(|e| panic!("outcome {}: {e}", i + 1));
        assert_eq!(typed.kind(), kind);
        assert_eq!(serde_json::to_string(&typed).unwrap(), serde_json::to_string(&v["data"]).unwrap());
        // And written as it is stored, straight from its type, without going through a `Value`.
        let headline = v["headline"].as_str().unwrap();
        let stored_text = serde_json::to_string(&json!({"data": v["data"], "headline": headline})).unwrap();
        assert_eq!(typed.stored_text(headline), stored_text, "outcome {}", i + 1);
        assert!(sorted_written(&typed), "outcome {} went through a `Value`", i + 1);
    }
    assert_eq!(text.lines().count(), stored.lines().count());
    // The campaigns reach every kind of outcome the rules write.
    for kind in [
        "deployed",
        "deployment_sealed",
        "turn_begins",
        "reinforcement_roll",
        "reinforced",
        "moved",
        "attack_declared",
        "cavalry_option",
        "battle",
        "casualties",
        "retreat",
        "eliminated",
        "turn_ended",
        "game_over",
        "deadline",
        "deadline_passed",
        "deadline_near",
    ] {
        assert!(kinds.contains(kind), "no {kind} outcome among {kinds:?}");
    }
}
