//! The kinds of post and of outcome, typed. The store keeps them as text; the log reads them
//! into these once.

/// What a post is: one of the kinds every campaign takes, or one of the game's own orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PostKind {
    /// A remark in the log; it changes nothing.
    Note,
    /// A moderator's correction: posts after `to_seq` are void.
    Rollback,
    /// A resolver action.
    Resolve,
    /// A secret choice, revealed once the other side's choice on the same topic is in.
    Seal,
    /// The moderator posts for a side (its player is absent), with the reason.
    Umpire,
    /// The server's own post when a wait's deadline passes.
    Deadline,
    /// The server's own post a while before a deadline (`reminder_leads`).
    Reminder,
    /// The moderator pauses the campaign: no player post, no deadline runs.
    Pause,
    /// The moderator resumes a paused campaign.
    Resume,
    /// The moderator gives more time before a deadline.
    Extend,
    /// A side's player is replaced by another (made by `POST …/players/{id}/replace`).
    ReplacePlayer,
    /// An order of a managed game (`move`, `attack`, …), decided by the rules, which name it.
    Order,
}

impl PostKind {
    /// The kinds with a name of their own (every other kind is an [`PostKind::Order`]).
    pub const NAMED: [PostKind; 11] = [
        PostKind::Note,
        PostKind::Rollback,
        PostKind::Resolve,
        PostKind::Seal,
        PostKind::Umpire,
        PostKind::Deadline,
        PostKind::Reminder,
        PostKind::Pause,
        PostKind::Resume,
        PostKind::Extend,
        PostKind::ReplacePlayer,
    ];

    /// The kind of a post stored or sent as `kind`.
    pub fn of(kind: &str) -> Self {
        Self::NAMED.into_iter().find(|k| k.as_str() == kind).unwrap_or(PostKind::Order)
    }

    /// The name of a kind with one (an order's name is the post's own).
    pub fn as_str(self) -> &'static str {
        match self {
            PostKind::Note => "note",
            PostKind::Rollback => "rollback",
            PostKind::Resolve => "resolve",
            PostKind::Seal => "seal",
            PostKind::Umpire => "umpire",
            PostKind::Deadline => "deadline",
            PostKind::Reminder => "reminder",
            PostKind::Pause => "pause",
            PostKind::Resume => "resume",
            PostKind::Extend => "extend",
            PostKind::ReplacePlayer => "replace_player",
            PostKind::Order => "order",
        }
    }

    /// A post kind as a client may send it: a lower-case word with underscores.
    pub fn well_formed(kind: &str) -> bool {
        (1..=40).contains(&kind.len())
            && kind.starts_with(|c: char| c.is_ascii_lowercase())
            && kind.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    }
}

/// The Short ACW orders that may fight a battle, and so fix a result number.
pub const RESULT_FIXING_ORDERS: [&str; 2] = ["attack", "resolve_attack"];

/// The kinds only the server makes, never a client's post: at a deadline, and when the moderator
/// replaces a player through `POST …/players/{id}/replace`.
pub const SERVER_MADE: [PostKind; 3] = [PostKind::Deadline, PostKind::Reminder, PostKind::ReplacePlayer];

/// The kinds of the campaign clock's posts: the server's at a deadline, the moderator's to
/// pause, resume and extend.
pub const CLOCK_KINDS: [PostKind; 5] =
    [PostKind::Deadline, PostKind::Reminder, PostKind::Pause, PostKind::Resume, PostKind::Extend];

/// What the rules decided, as the feed and the audit name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutcomeKind {
    /// A fought battle (one per draw of a sealed-delay chain).
    Battle,
    ReinforcementRoll,
    /// A resolver action's dice and tables.
    Resolution,
    Rollback,
    Umpire,
    Sealed,
    Revealed,
    Paused,
    Resumed,
    Extended,
    PlayerReplaced,
    /// Any other outcome of the managed game's rules.
    Other,
}

impl OutcomeKind {
    const NAMED: [(OutcomeKind, &'static str); 11] = [
        (OutcomeKind::Battle, "battle"),
        (OutcomeKind::ReinforcementRoll, "reinforcement_roll"),
        (OutcomeKind::Resolution, "resolution"),
        (OutcomeKind::Rollback, "rollback"),
        (OutcomeKind::Umpire, "umpire"),
        (OutcomeKind::Sealed, "sealed"),
        (OutcomeKind::Revealed, "revealed"),
        (OutcomeKind::Paused, "paused"),
        (OutcomeKind::Resumed, "resumed"),
        (OutcomeKind::Extended, "extended"),
        (OutcomeKind::PlayerReplaced, "player_replaced"),
    ];

    pub fn of(kind: &str) -> Self {
        Self::NAMED.iter().find(|(_, name)| *name == kind).map_or(OutcomeKind::Other, |(k, _)| *k)
    }

    /// The stored name of a named kind (`Other` has none of its own: empty).
    pub fn as_str(self) -> &'static str {
        Self::NAMED.iter().find(|(k, _)| *k == self).map_or("", |(_, name)| name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_back_as_they_are_written() {
        for kind in PostKind::NAMED {
            assert_eq!(PostKind::of(kind.as_str()), kind);
        }
        assert_eq!(PostKind::of("attack"), PostKind::Order);
        assert_eq!(PostKind::of("order"), PostKind::Order);
        for (kind, name) in OutcomeKind::NAMED {
            assert_eq!(OutcomeKind::of(name), kind);
            assert_eq!(kind.as_str(), name);
        }
        assert_eq!(OutcomeKind::of("movement"), OutcomeKind::Other);
        assert!(
            PostKind::well_formed("resolve_attack") && !PostKind::well_formed("Move") && !PostKind::well_formed("")
        );
    }

    /// The store finds these kinds by the names posts and outcomes are written with: a name
    /// that drifted would find nothing, and the log would read as if no rollback were made.
    #[test]
    fn the_kinds_found_by_kind_are_named_as_they_are_written() {
        use adjutant_rules::outcome::{OutcomeData, TurnBegins};
        use adjutant_store::{IndexedOutcomeKind, IndexedPostKind};
        assert_eq!(IndexedPostKind::Rollback.as_str(), PostKind::Rollback.as_str());
        assert_eq!(IndexedPostKind::Seal.as_str(), PostKind::Seal.as_str());
        let order_kinds = adjutant_rules::short_acw::bodies::post_kinds();
        assert!(order_kinds.iter().any(|spec| spec.kind == IndexedPostKind::Deploy.as_str()));
        assert_eq!(IndexedOutcomeKind::Battle.as_str(), OutcomeKind::Battle.as_str());
        let begun: TurnBegins = serde_json::from_value(serde_json::json!({"turn": 1, "side": "union"})).unwrap();
        assert_eq!(IndexedOutcomeKind::TurnBegins.as_str(), OutcomeData::TurnBegins(begun).kind());
    }
}
