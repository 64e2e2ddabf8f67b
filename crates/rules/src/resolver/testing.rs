//! The framework's rule for every ruleset, tested in one place: "A refusal must not depend on
//! the dice: inputs are checked first." Each ruleset's tests hand their refused inputs to
//! [`refused`] or [`assert_refused`], which resolve them as a post would be and check that no
//! die was drawn before the refusal.

use serde_json::{json, Value};

use super::{resolve_action, rulesets, Ruleset};
use crate::{DiceStream, Refusal};

/// The refusal `ruleset` gives `action` with `inputs`. Fails unless the inputs are refused, with
/// no die drawn first, and refused alike from another stamp.
pub(crate) fn refused(ruleset: &dyn Ruleset, action: &str, inputs: Value) -> Refusal {
    refused_under(ruleset, crate::RULES_VERSION, action, inputs)
}

/// As [`refused`], under the rules version a campaign was created under.
pub(crate) fn refused_under(ruleset: &dyn Ruleset, version: u32, action: &str, inputs: Value) -> Refusal {
    let refusal_from = |text: &str| {
        let mut dice = DiceStream::from_text(format!("{}/refusal/{text}", ruleset.name()));
        let answer = resolve_action(ruleset, version, action, &inputs, &mut dice);
        let refusal = match answer {
            Ok(resolved) => panic!("{action} {inputs} should be refused, but resolved: {}", resolved.headline),
            Err(refusal) => refusal,
        };
        let rolled: Vec<&str> = dice.rolls().iter().map(|roll| roll.purpose.as_str()).collect();
        assert!(rolled.is_empty(), "{action} {inputs} rolled {rolled:?} before refusing: {refusal}");
        refusal
    };
    let refusal = refusal_from("a");
    assert_eq!(refusal_from("b"), refusal, "{action} {inputs}: the refusal depends on the stamp");
    refusal
}

/// Checks that `ruleset` refuses `action` with `inputs` before any die, naming `field` and `rule`.
pub(crate) fn assert_refused(ruleset: &dyn Ruleset, action: &str, inputs: Value, field: &str, rule: &str) {
    let refusal = refused(ruleset, action, inputs);
    assert_eq!((refusal.field.as_str(), refusal.rule.as_str()), (field, rule), "{action}: {refusal}");
    assert!(!refusal.detail.is_empty(), "{action}: a refusal says why");
}

#[test]
fn every_action_of_every_ruleset_refuses_inputs_of_the_wrong_shape_before_any_die() {
    for ruleset in rulesets() {
        for spec in ruleset.actions() {
            for inputs in [json!(null), json!([spec.example]), json!({"no_such_input": true})] {
                let refusal = refused(ruleset, spec.name, inputs);
                assert_eq!(refusal.rule, "resolver.inputs", "{} {}", ruleset.name(), spec.name);
            }
        }
        assert_refused(ruleset, "no_such_action", json!({}), "body.action", "resolver.unknown_action");
    }
}
