//! The rules version: which corrections and rulings a campaign is decided and audited under.
//! Every campaign records the version it was created under and keeps it; the managed Short ACW
//! game and the resolvers both read it.

/// The rules version new campaigns are played under (docs/rules/short-acw.md, "Rules
/// versions"). Version 1: fortification only when every defender is fortified, a unit at 0
/// factors survives a lost battle, an empty retreat path gives a unit up. Version 2:
/// fortification unit by unit, a unit of the losing side at 0 factors is eliminated, an empty
/// retreat path is refused while a legal retreat exists. Version 3: a retreat's outcome names the
/// hexes the loser left (not the battle's target, which is the winner's when the attacker loses)
/// and, in its headline, the factors lost next to the enemy; a casualty order is asked for only
/// where some order would spread the casualties differently; the side that deploys first is
/// sealed until the other side has deployed, then both are revealed together; a new unit's name
/// holds no bidirectional control or zero-width character.
pub const RULES_VERSION: u32 = 3;
