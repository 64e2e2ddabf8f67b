//! Storming: two men on the wall push the ladder off, and the men on it survive the fall or not.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::list;
use super::tables::{PUSH_OFF_ON, SURVIVES_FALL_ON, WALL_MELEE_MEN};
use crate::resolver::{Lookup, Resolved};
use crate::{DiceStream, Refusal};

/// Two men on the wall try to push a storming ladder off.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LadderPushOff {
    /// Men on the ladder (0 to 2: "1 move - 2 men on ladder").
    pub men_on_ladder: u32,
}

pub(super) fn ladder_push_off(i: &LadderPushOff, dice: &mut DiceStream) -> Result<Resolved, Refusal> {
    if i.men_on_ladder > WALL_MELEE_MEN {
        return Err(Refusal::new(
            "body.inputs.men_on_ladder",
            "storming.ladder",
            format!("a ladder holds at most {WALL_MELEE_MEN} men, not {}", i.men_on_ladder),
        ));
    }
    let mut lookups = vec![Lookup::new("STORMING", "2 men can push ladder off wall", "by rolling", list(PUSH_OFF_ON))];
    let push = dice.roll(6, "push ladder off wall");
    let pushed_off = PUSH_OFF_ON.contains(&push);
    let mut falls = Vec::new();
    if pushed_off && i.men_on_ladder > 0 {
        lookups.push(Lookup::new("STORMING", "Men on ladder when pushed off", "need to survive", "4,5,6"));
        for man in 1..=i.men_on_ladder {
            let die = dice.roll(6, format!("fall survival, man {man} on ladder"));
            falls.push(json!({"man": man, "die": die, "survives": die >= SURVIVES_FALL_ON}));
        }
    }
    let survivors = falls.iter().filter(|f| f["survives"] == Value::Bool(true)).count();
    let headline = if pushed_off {
        format!(
            "Ladder push {push}: pushed off the wall; {} of {} men on it survive the fall",
            survivors, i.men_on_ladder
        )
    } else {
        format!("Ladder push {push}: the ladder stays on the wall")
    };
    Ok(Resolved {
        headline,
        lookups,
        result: json!({"push_die": push, "pushed_off": pushed_off, "falls": falls,
            "survivors": survivors}),
    })
}
