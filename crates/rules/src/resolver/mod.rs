//! The resolver framework: a ruleset is the impartial dice and tables of a tabletop game.
//!
//! A resolver campaign holds no map; the referee keeps the table. A `resolve` post names an
//! action of the campaign's ruleset and its inputs. The ruleset checks the inputs, rolls from
//! the post's [`DiceStream`], applies its tables and answers with every die and every table cell
//! it used, in order, so the audit can redo the whole resolution from the campaign id, the
//! post's sequence number and its stamp alone.

pub mod acw25mm;
pub mod chamberlain;
pub mod ops_tables;
pub mod schulz;
#[cfg(test)]
pub(crate) mod testing;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::{DiceStream, DieRoll, Refusal};

/// One action a ruleset resolves, as the API lists it.
#[derive(Debug, Clone, Serialize)]
pub struct ActionSpec {
    pub name: &'static str,
    pub summary: &'static str,
    /// The seed section the action implements.
    pub rule: &'static str,
    /// JSON Schema (2020-12) of the action's inputs.
    pub input_schema: Value,
    /// A valid input, for the documentation.
    pub example: Value,
    /// Names the action was once posted under, still accepted: a campaign's log keeps the name
    /// each post used, and its replay must decide those posts as they were decided.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub also_accepted: &'static [&'static str],
}

impl ActionSpec {
    /// Describes an action whose inputs deserialize into `I`.
    pub fn of<I: JsonSchema>(name: &'static str, summary: &'static str, rule: &'static str, example: Value) -> Self {
        Self { name, summary, rule, input_schema: crate::schema::inline_schema::<I>(), example, also_accepted: &[] }
    }

    /// The action also answers to its earlier `names`.
    pub fn also_accepting(self, names: &'static [&'static str]) -> Self {
        Self { also_accepted: names, ..self }
    }

    /// Whether a post naming `action` means this action.
    pub fn answers_to(&self, action: &str) -> bool {
        self.name == action || self.also_accepted.contains(&action)
    }
}

/// One table cell (or fixed rule) a resolution used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Lookup {
    /// The table's name as the seed gives it.
    pub table: String,
    /// The row and column read, in the seed's words.
    pub row: String,
    pub column: String,
    /// What the cell says.
    pub value: String,
}

impl Lookup {
    pub fn new(
        table: impl Into<String>,
        row: impl Into<String>,
        column: impl Into<String>,
        value: impl ToString,
    ) -> Self {
        Self { table: table.into(), row: row.into(), column: column.into(), value: value.to_string() }
    }
}

/// What a ruleset returns for one action, before the framework adds the dice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolved {
    /// One line for the forum: what happened.
    pub headline: String,
    /// Every table cell used, in order.
    pub lookups: Vec<Lookup>,
    /// The action's structured result (ruleset-specific).
    pub result: Value,
}

/// A complete resolution: the ruleset's answer and every die rolled for it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Resolution {
    pub ruleset: String,
    pub action: String,
    pub stream_text: String,
    pub headline: String,
    pub dice: Vec<DieRoll>,
    pub lookups: Vec<Lookup>,
    pub result: Value,
}

/// A tabletop ruleset served by the resolver.
pub trait Ruleset: Sync {
    /// The name campaigns choose it by (`acw-25mm`).
    fn name(&self) -> &'static str;
    fn title(&self) -> &'static str;
    /// The seed document it implements.
    fn seed(&self) -> &'static str;
    fn actions(&self) -> Vec<ActionSpec>;
    /// Resolves one action under the current rules. A refusal must not depend on the dice:
    /// inputs are checked first.
    fn resolve(&self, action: &str, inputs: &Value, dice: &mut DiceStream) -> Result<Resolved, Refusal>;
    /// Resolves one action under the rules version the campaign was created under
    /// (`crate::RULES_VERSION` is the current one). A ruleset whose rules never
    /// changed answers as `resolve`.
    fn resolve_under(
        &self,
        rules_version: u32,
        action: &str,
        inputs: &Value,
        dice: &mut DiceStream,
    ) -> Result<Resolved, Refusal> {
        let _ = rules_version;
        self.resolve(action, inputs, dice)
    }
}

/// Resolves `action` with `inputs` on `ruleset` under the current rules, rolling from `dice`.
pub fn resolve(ruleset: &dyn Ruleset, action: &str, inputs: &Value, dice: DiceStream) -> Result<Resolution, Refusal> {
    resolve_under(ruleset, crate::RULES_VERSION, action, inputs, dice)
}

/// Resolves `action` under the campaign's rules version (old posts are audited by it).
pub fn resolve_under(
    ruleset: &dyn Ruleset,
    rules_version: u32,
    action: &str,
    inputs: &Value,
    mut dice: DiceStream,
) -> Result<Resolution, Refusal> {
    let resolved = resolve_action(ruleset, rules_version, action, inputs, &mut dice)?;
    Ok(Resolution {
        ruleset: ruleset.name().to_owned(),
        // The name as posted: a post under an earlier name replays to the outcome it was given.
        action: action.to_owned(),
        stream_text: dice.text().to_owned(),
        headline: resolved.headline,
        dice: dice.into_rolls(),
        lookups: resolved.lookups,
        result: resolved.result,
    })
}

/// The action a post names, found by its name or an earlier one, resolved by its ruleset.
fn resolve_action(
    ruleset: &dyn Ruleset,
    rules_version: u32,
    action: &str,
    inputs: &Value,
    dice: &mut DiceStream,
) -> Result<Resolved, Refusal> {
    let Some(spec) = action_specs(ruleset).iter().find(|a| a.answers_to(action)) else {
        return Err(Refusal::new(
            "body.action",
            "resolver.unknown_action",
            format!("the {} ruleset has no action `{action}`", ruleset.name()),
        ));
    };
    ruleset.resolve_under(rules_version, spec.name, inputs, dice)
}

/// Reads an action's inputs into its typed form, naming the offending field on failure.
pub fn parse_inputs<T: DeserializeOwned>(inputs: &Value) -> Result<T, Refusal> {
    serde_path_to_error::deserialize(inputs).map_err(|err| {
        let path = err.path().to_string();
        let field = if path == "." { "body.inputs".to_owned() } else { format!("body.inputs.{path}") };
        Refusal::new(field, "resolver.inputs", err.into_inner().to_string())
    })
}

/// Every ruleset Adjutant serves.
pub fn rulesets() -> Vec<&'static dyn Ruleset> {
    vec![&acw25mm::Acw25mm, &schulz::Schulz, &ops_tables::OpsTables, &chamberlain::Chamberlain]
}

/// The actions of `ruleset`, described once: building their schemas is far dearer than
/// resolving an action, and they never change while the program runs.
pub fn action_specs(ruleset: &dyn Ruleset) -> &'static [ActionSpec] {
    static SPECS: std::sync::OnceLock<Vec<(&'static str, Vec<ActionSpec>)>> = std::sync::OnceLock::new();
    let specs = SPECS.get_or_init(|| rulesets().into_iter().map(|r| (r.name(), r.actions())).collect());
    specs.iter().find(|(name, _)| *name == ruleset.name()).map_or(&[], |(_, actions)| actions.as_slice())
}

/// The ruleset called `name`.
pub fn ruleset(name: &str) -> Option<&'static dyn Ruleset> {
    rulesets().into_iter().find(|r| r.name() == name)
}
