//! The game state of a managed Short ACW campaign: a deterministic fold of its post log.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::deadline::TurnClock;
use super::hex::Hex;
use super::scenario::{Arm, Scenario, VictoryLevel};
use crate::Side;

/// Where the campaign stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Both sides place their units (`deploy`), in either order.
    Deployment,
    /// The start of a player turn: the Rebel reinforcement post and spending points.
    Reinforcement,
    /// Units move (`move`).
    Movement,
    /// Units attack (`attack`) and the battles' answers come in.
    Combat,
    /// The game is over; nothing more is accepted.
    Over,
}

/// One unit as it stands now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitState {
    pub id: String,
    pub name: String,
    pub side: Side,
    pub arm: Arm,
    pub factors: u32,
    /// `None` before deployment and once eliminated.
    pub hex: Option<Hex>,
    pub eliminated: bool,
    /// Seed: "Units may construct fortifications by not moving during a turn. If the Unit
    /// moves, the fortifications cease to exist."
    pub fortified: bool,
    /// Moved (or retreated) during the current player turn.
    pub moved: bool,
    /// Attacked during the current player turn.
    pub attacked: bool,
    /// Received factors during the current player turn (and so stays put).
    pub reinforced: bool,
    /// Entered a hex next to the enemy this turn and must attack before the turn ends.
    pub must_fight: bool,
}

impl UnitState {
    pub fn is_on_map(&self) -> bool {
        !self.eliminated && self.hex.is_some()
    }
}

/// Reinforcement points stored by each side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Points {
    pub union: u32,
    pub confederate: u32,
}

impl Points {
    pub fn get(&self, side: Side) -> u32 {
        match side {
            Side::Union => self.union,
            Side::Confederate => self.confederate,
        }
    }

    pub fn get_mut(&mut self, side: Side) -> &mut u32 {
        match side {
            Side::Union => &mut self.union,
            Side::Confederate => &mut self.confederate,
        }
    }
}

/// Casualties a side still has to take in the current battle, awaiting its order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CasualtiesDue {
    pub side: Side,
    pub units: Vec<String>,
    pub casualties: u32,
}

/// A battle that is waiting for answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingBattle {
    /// Battles are numbered from 1 in the order they are declared.
    pub number: u32,
    pub attacker: Side,
    pub attackers: Vec<String>,
    pub target: Hex,
    /// The defending units, fixed when the battle is fought.
    pub defenders: Vec<String>,
    /// Defending cavalry offered the option to retreat before the battle (decision 6).
    pub cavalry: Vec<String>,
    /// Whether the defender has answered the cavalry option.
    pub cavalry_answered: bool,
    /// Whether the result number has been fixed and the battle fought.
    pub fought: bool,
    /// Casualty orders still awaited.
    pub casualties_due: Vec<CasualtiesDue>,
    /// The side that must retreat, once the casualties are taken.
    pub loser: Option<Side>,
    /// Units that must retreat.
    pub retreating: Vec<String>,
}

/// Something the game waits for before it can go on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Awaiting {
    pub side: Side,
    /// The post kind expected.
    pub kind: String,
    pub detail: String,
}

/// How the game ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameResult {
    pub winner: Option<Side>,
    pub level: Option<VictoryLevel>,
    /// The victory condition met, in the scenario's words.
    pub condition: String,
    pub turn: u32,
}

/// The whole state of a campaign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameState {
    pub scenario: String,
    /// 0 during deployment, then 1 to the scenario's last turn.
    pub turn: u32,
    pub phase: Phase,
    /// The side whose player turn it is (`None` during deployment and once over).
    pub side_to_act: Option<Side>,
    /// Sides that have deployed.
    pub deployed: Vec<Side>,
    pub units: Vec<UnitState>,
    /// Hex control: "controlled by the last side to occupy it alone".
    pub control: BTreeMap<Hex, Side>,
    /// Control of each city by letter (a view of `control`).
    pub cities: BTreeMap<String, Option<Side>>,
    pub reinforcement_points: Points,
    /// Whether the Rebel reinforcement post has been made this player turn.
    pub reinforcement_roll_made: bool,
    /// Battles declared so far.
    pub battles: u32,
    /// Units created by reinforcement so far.
    pub new_units: u32,
    pub battle: Option<PendingBattle>,
    /// What the game waits for, from whom.
    pub awaiting: Vec<Awaiting>,
    pub result: Option<GameResult>,
    /// Rules version 3: the first side's deployment, kept off the map until the other side has
    /// deployed (ruling 11). Secret: readers are shown the state [`GameState::as_public`].
    /// Absent from the states of earlier versions, which stay byte for byte as they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_deployment: Option<SealedDeployment>,
    /// The campaign clock: what the game waits for, since when, until when (campaigns with
    /// deadlines, and campaigns that have been paused). Absent from every other state, which
    /// stays byte for byte as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<TurnClock>,
}

/// A deployment made and kept sealed until the other side's is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SealedDeployment {
    pub side: Side,
    /// Unit id → hex, as the side posted them.
    pub placements: Vec<(String, Hex)>,
}

impl GameState {
    /// The state before anyone has posted: nothing deployed, the scenario's starting control.
    pub fn new(scenario: &Scenario) -> GameState {
        let units = scenario
            .units
            .iter()
            .map(|u| UnitState {
                id: u.id.clone(),
                name: u.name.clone(),
                side: u.side,
                arm: u.arm,
                factors: u.factors,
                hex: None,
                eliminated: false,
                fortified: false,
                moved: false,
                attacked: false,
                reinforced: false,
                must_fight: false,
            })
            .collect();
        let mut state = GameState {
            scenario: scenario.name.clone(),
            turn: 0,
            phase: Phase::Deployment,
            side_to_act: None,
            deployed: vec![],
            units,
            control: scenario.start_control.clone(),
            cities: BTreeMap::new(),
            reinforcement_points: Points::default(),
            reinforcement_roll_made: false,
            battles: 0,
            new_units: 0,
            battle: None,
            awaiting: vec![],
            result: None,
            sealed_deployment: None,
            clock: None,
        };
        state.refresh(scenario);
        state
    }

    /// The state as anyone but the server may see it: a sealed deployment withheld (its side
    /// is known to have deployed, from `deployed`; where, not).
    pub fn as_public(&self) -> GameState {
        GameState { sealed_deployment: None, ..self.clone() }
    }

    pub fn unit(&self, id: &str) -> Option<&UnitState> {
        self.units.iter().find(|u| u.id == id)
    }

    pub(crate) fn unit_mut(&mut self, id: &str) -> Option<&mut UnitState> {
        self.units.iter_mut().find(|u| u.id == id)
    }

    /// Units standing in a hex.
    pub fn units_in(&self, hex: Hex) -> impl Iterator<Item = &UnitState> {
        self.units.iter().filter(move |u| !u.eliminated && u.hex == Some(hex))
    }

    /// The side with units in the hex, if any.
    pub fn occupant(&self, hex: Hex) -> Option<Side> {
        self.units_in(hex).next().map(|u| u.side)
    }

    /// Infantry and cavalry units in a hex (the ones the stacking limit counts).
    pub fn stacking_count(&self, hex: Hex) -> u32 {
        self.units_in(hex).filter(|u| u.arm.counts_for_stacking()).count() as u32
    }

    /// An enemy-held hex next to `hex`, if any.
    pub fn enemy_next_to(&self, scenario: &Scenario, hex: Hex, side: Side) -> Option<Hex> {
        scenario.neighbours(hex).into_iter().find(|n| self.occupant(*n) == Some(side.other()))
    }

    /// Control follows occupation, and the city view and the awaited answers follow the state.
    pub(crate) fn refresh(&mut self, scenario: &Scenario) {
        let occupied: Vec<(Hex, Side)> =
            self.units.iter().filter(|u| !u.eliminated).filter_map(|u| u.hex.map(|h| (h, u.side))).collect();
        for (hex, side) in occupied {
            self.control.insert(hex, side);
        }
        self.cities =
            scenario.cities.iter().map(|c| (c.letter.to_string(), self.control.get(&c.hex).copied())).collect();
        self.awaiting = self.compute_awaiting();
    }

    fn compute_awaiting(&self) -> Vec<Awaiting> {
        let mut out = vec![];
        match self.phase {
            Phase::Over => {}
            Phase::Deployment => {
                for side in [Side::Union, Side::Confederate] {
                    if !self.deployed.contains(&side) {
                        out.push(Awaiting {
                            side,
                            kind: "deploy".into(),
                            detail: format!("the {side} deploys its units"),
                        });
                    }
                }
            }
            _ => {
                if let Some(b) = &self.battle {
                    let defender = b.attacker.other();
                    if !b.cavalry.is_empty() && !b.cavalry_answered {
                        out.push(Awaiting {
                            side: defender,
                            kind: "cavalry_option".into(),
                            detail: format!(
                                "battle {}: the {defender} cavalry in {} may retreat 1 hex before the battle",
                                b.number, b.target
                            ),
                        });
                    } else if !b.fought {
                        out.push(Awaiting {
                            side: b.attacker,
                            kind: "resolve_attack".into(),
                            detail: format!(
                                "battle {}: the {} fixes the result number with its next post",
                                b.number, b.attacker
                            ),
                        });
                    } else if !b.casualties_due.is_empty() {
                        for due in &b.casualties_due {
                            out.push(Awaiting {
                                side: due.side,
                                kind: "casualty_order".into(),
                                detail: format!(
                                    "battle {}: the {} takes {} casualties among {}",
                                    b.number,
                                    due.side,
                                    due.casualties,
                                    due.units.join(", ")
                                ),
                            });
                        }
                    } else if let Some(loser) = b.loser {
                        out.push(Awaiting {
                            side: loser,
                            kind: "retreat".into(),
                            detail: format!("battle {}: the {loser} retreats {}", b.number, b.retreating.join(", ")),
                        });
                    }
                } else if let Some(side) = self.side_to_act {
                    out.push(Awaiting {
                        side,
                        kind: "end_turn".into(),
                        detail: format!(
                            "turn {}: the {side} reinforces, moves and attacks, then ends its turn",
                            self.turn
                        ),
                    });
                }
            }
        }
        out
    }
}
