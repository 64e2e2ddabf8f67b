//! Every post kind's documented example is accepted in a game where it fits.

use crate::common::*;
use adjutant_rules::short_acw::post_kinds;
use serde_json::json;

#[test]
fn every_post_kind_example_is_accepted() {
    let kinds = post_kinds();
    let names: Vec<&str> = kinds.iter().map(|k| k.kind).collect();
    assert_eq!(
        names,
        [
            "deploy",
            "reinforcement",
            "reinforce",
            "move",
            "attack",
            "cavalry_option",
            "resolve_attack",
            "casualty_order",
            "retreat",
            "end_turn"
        ]
    );
    for spec in &kinds {
        assert!(spec.body_schema.is_object(), "{}", spec.kind);
        assert!(!spec.summary.is_empty());
        let example = spec.example.clone();
        let result = match spec.kind {
            "deploy" => {
                // The example places two units; a full deployment places all.
                let mut g = Game::new();
                let r = g.post(U, "deploy", example).unwrap_err();
                assert_eq!(r.rule, "deployment.all_units");
                continue;
            }
            "reinforcement" => scripted(4).post(R, spec.kind, example),
            "reinforce" => {
                let mut g = scripted(2);
                g.state.reinforcement_points.union = 2;
                g.post(U, spec.kind, example)
            }
            "move" | "end_turn" => scripted(2).post(U, spec.kind, example),
            "attack" => scripted(13).post(U, spec.kind, example),
            "cavalry_option" | "resolve_attack" => {
                let mut g = scripted(5);
                for unit in ["cs-37th-cav", "cs-45th-cav"] {
                    g.ok(R, "move", json!({"unit": unit, "path": ["0703", "0603", "0604"]}));
                }
                g.ok(R, "end_turn", empty());
                g.ok(U, "move", json!({"unit": "us-14th-inf", "path": ["0504"]}));
                g.ok(U, "move", json!({"unit": "us-13th-inf", "path": ["0504"]}));
                g.ok(U, "attack", json!({"units": ["us-14th-inf", "us-13th-inf"], "target": "0604"}));
                if spec.kind == "cavalry_option" {
                    g.post(R, spec.kind, example)
                } else {
                    g.ok(R, "cavalry_option", json!({"retreat": false}));
                    g.post(U, spec.kind, example)
                }
            }
            "casualty_order" => scripted(15).post(R, spec.kind, example),
            "retreat" => scripted(16).post(R, spec.kind, example),
            other => panic!("no test for {other}"),
        };
        assert!(result.is_ok(), "{}: {:?}", spec.kind, result.err());
    }
}
