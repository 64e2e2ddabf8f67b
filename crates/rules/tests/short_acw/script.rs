//! The scripted campaign in `tests/data/short_acw_script.json`, from deployment to a Major
//! Union Victory. The server's end-to-end test replays the same file over HTTP.

use crate::common::*;
use adjutant_rules::short_acw::{GameState, Phase};
use adjutant_rules::Side;

#[test]
fn the_script_plays_from_deployment_to_a_major_union_victory() {
    let posts = script();
    for pair in posts.windows(2) {
        assert!(pair[0].stamp < pair[1].stamp, "stamps must increase");
    }
    let g = scripted(posts.len());
    let result = g.state.result.clone().expect("the game is over");
    assert_eq!(result.winner, Some(Side::Union));
    assert_eq!(result.condition, "Major Union Victory: Capture City 'M' within 7 turns.");
    assert_eq!(result.turn, 3);
    assert_eq!(g.state.phase, Phase::Over);
    assert_eq!(g.state.cities["M"], Some(Side::Union));
    assert_eq!(g.hex_of("us-3rd-cav").as_deref(), Some("1407"));
    // Reinforcements: the Union gained 3 points and spent 1; the Rebels gained 2, spent 1.
    assert_eq!(g.state.reinforcement_points.union, 2);
    assert_eq!(g.state.reinforcement_points.confederate, 1);
    assert_eq!(g.factors("us-3rd-inf"), 5);
    assert_eq!(g.factors("cs-39th-inf"), 5);
    // The battle's casualties.
    assert_eq!(g.factors("us-12th-inf"), 3);
    assert_eq!(g.factors("cs-52nd-inf"), 1);
    assert_eq!(g.factors("cs-51st-inf"), 2);
    // Units that never moved are fortified.
    assert!(g.state.unit("cs-40th-inf").unwrap().fortified);
    assert!(!g.state.unit("us-3rd-cav").unwrap().fortified);
    assert!(g.state.awaiting.is_empty());
    // Nothing is accepted after the end.
    let mut g = g;
    g.refused(R, "end_turn", empty(), "kind", "game.over", "the game is over");
}

#[test]
fn replaying_the_log_gives_the_same_state_and_it_round_trips_as_json() {
    let a = scripted(script().len());
    let b = scripted(script().len());
    assert_eq!(a.state, b.state);
    let text = serde_json::to_string(&a.state).unwrap();
    let back: GameState = serde_json::from_str(&text).unwrap();
    assert_eq!(back, a.state);
}
