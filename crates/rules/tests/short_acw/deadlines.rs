//! The campaign clock: when deadlines fall, how a wait's clock stops and starts, and what a
//! missed deployment becomes.

use crate::common::*;
use adjutant_rules::short_acw::deadline::{self, Deadlines, Limit, MissedTurn};
use adjutant_rules::short_acw::{Phase, Settings};
use adjutant_rules::Side;
use chrono::{NaiveTime, TimeDelta, TimeZone, Utc};

fn at_eight(at_least: TimeDelta) -> Deadlines {
    Deadlines {
        limit: Limit::AtTimeOfDay { at: NaiveTime::from_hms_opt(20, 0, 0).unwrap(), at_least },
        missed: MissedTurn::EndTurn,
    }
}

#[test]
fn a_time_of_day_deadline_is_the_first_such_time_at_least_the_minimum_after_the_wait_began() {
    let zone = chrono_tz::America::New_York;
    let d = at_eight(TimeDelta::hours(12));
    // 07:00 in New York (12:00 UTC in November): 19:00 at the earliest, so 20:00 the same day.
    let morning = Utc.with_ymd_and_hms(2026, 11, 27, 12, 0, 0).unwrap();
    assert_eq!(d.due(morning, zone), Utc.with_ymd_and_hms(2026, 11, 28, 1, 0, 0).unwrap());
    // 10:00: 22:00 at the earliest, so 20:00 the next day.
    let later = Utc.with_ymd_and_hms(2026, 11, 27, 15, 0, 0).unwrap();
    assert_eq!(d.due(later, zone), Utc.with_ymd_and_hms(2026, 11, 29, 1, 0, 0).unwrap());
    // Across the spring clock change (8 March 2026): 20:00 EDT is 00:00 UTC.
    let before_change = Utc.with_ymd_and_hms(2026, 3, 7, 23, 0, 0).unwrap();
    assert_eq!(d.due(before_change, zone), Utc.with_ymd_and_hms(2026, 3, 9, 0, 0, 0).unwrap());
    // A time of day the change skips (02:30 on 8 March) is read as the first time after it.
    let skipped = Deadlines {
        limit: Limit::AtTimeOfDay { at: NaiveTime::from_hms_opt(2, 30, 0).unwrap(), at_least: TimeDelta::minutes(1) },
        missed: MissedTurn::EndTurn,
    };
    let evening = Utc.with_ymd_and_hms(2026, 3, 8, 4, 0, 0).unwrap(); // 23:00 EST on the 7th
    assert_eq!(skipped.due(evening, zone), Utc.with_ymd_and_hms(2026, 3, 8, 7, 0, 0).unwrap());
    // 03:00 EDT
}

#[test]
fn missed_deployments_place_every_unit_legally_and_the_turns_begin_with_their_deadlines() {
    let mut g = Game::new();
    let d = Deadlines { limit: Limit::After(TimeDelta::hours(48)), missed: MissedTurn::EndTurn };
    g.settings = Settings { deadlines: Some(d), ..g.settings };
    let created = g.clock;
    g.state.clock = Some(deadline::start(&g.state, &d, chrono_tz::UTC, created));
    let due = created + TimeDelta::hours(48);
    // Nobody deploys: the Union's deployment first (the earlier side of equal deadlines).
    let clock = g.state.clock.clone().unwrap();
    assert_eq!(clock.waits.len(), 2);
    assert!(clock.waits.iter().all(|w| w.due == Some(due) && w.stage == "deployment"));
    // Not before the deadline.
    let early = deadline::missed(
        &g.scenario,
        &g.state,
        &g.settings,
        due - TimeDelta::milliseconds(1),
        Side::Union,
        "deployment",
    );
    assert_eq!(early.unwrap_err().rule, "deadline.not_due");
    for side in [Side::Union, Side::Confederate] {
        let applied = deadline::missed(&g.scenario, &g.state, &g.settings, due, side, "deployment").unwrap();
        assert_eq!(applied.outcomes[0].kind(), "deadline");
        g.state = applied.state;
    }
    assert_eq!(g.state.phase, Phase::Reinforcement);
    assert_eq!(g.state.turn, 1);
    for u in &g.state.units {
        let hex = u.hex.expect("every unit placed");
        assert!(g.scenario.deployment_zone(u.side).contains(&hex), "{} in {hex}", u.id);
        assert!(g.state.stacking_count(hex) <= g.scenario.movement.stacking_limit);
    }
    // The first player turn's wait began at the deadline that ended the deployment.
    let wait = g.state.clock.as_ref().unwrap().waits.iter().find(|w| w.stage == "turn 1").unwrap().clone();
    assert_eq!((wait.side, wait.since, wait.due), (g.scenario.first_side, due, Some(due + TimeDelta::hours(48))));
}

#[test]
fn a_pause_keeps_the_time_left_and_a_resume_gives_it_back() {
    let mut g = scripted(2);
    let d = Deadlines { limit: Limit::After(TimeDelta::hours(1)), missed: MissedTurn::EndTurn };
    g.settings = Settings { deadlines: Some(d), ..g.settings };
    g.state.clock = Some(deadline::start(&g.state, &d, chrono_tz::UTC, g.clock));
    let began = g.clock;
    let paused = deadline::pause(&g.state, began + TimeDelta::minutes(15), "holidays").unwrap();
    let wait = &paused.clock.as_ref().unwrap().waits[0];
    assert_eq!((wait.due, wait.remaining_ms), (None, Some(45 * 60_000)));
    assert_eq!(deadline::pause(&paused, began, "again").unwrap_err().rule, "clock.paused");
    let resumed_at = began + TimeDelta::days(3);
    let resumed = deadline::resume(&paused, &g.settings, resumed_at).unwrap();
    assert_eq!(resumed.clock.as_ref().unwrap().waits[0].due, Some(resumed_at + TimeDelta::minutes(45)));
    assert_eq!(deadline::resume(&resumed, &g.settings, resumed_at).unwrap_err().rule, "clock.not_paused");
}
