//! What the log answers when a post is not taken: a refusal in the rules' own words, naming the
//! post's field at fault, or a fault of the server or its database. No HTTP here: the edge
//! (`crate::error`) turns these into problem+json, adding the request's field prefix once.

use adjutant_store::StoreError;

/// A field of a post, as the post names it: `kind`, `side`, `body`, `body.to_seq`,
/// `body.units[2]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath(String);

impl FieldPath {
    /// The post's own field `path`.
    pub fn post(path: impl Into<String>) -> Self {
        Self(path.into())
    }

    /// The post's body, or a path inside it (`to_seq`, `inputs.attacker`).
    pub fn body(path: &str) -> Self {
        Self::inside(&Self::post("body"), path)
    }

    /// A path `path` below `self` (`.` or the empty path: `self`).
    pub fn inside(&self, path: &str) -> Self {
        match path {
            "" | "." => self.clone(),
            p if p.starts_with('[') => Self(format!("{}{p}", self.0)),
            p => Self(format!("{}.{p}", self.0)),
        }
    }

    /// A field the rules named in an order whose body sits at `order_body` in the post: the
    /// rules name an order's body `body` (`body.units[2]`) and the order's other fields by
    /// themselves (`side`, `kind`). A player's order is the post itself (`order_body` is
    /// `body`); an umpire's answer is the order inside the post's `body.body`.
    pub fn of_rules(order_body: &FieldPath, rules_field: &str) -> Self {
        match rules_field.strip_prefix("body") {
            Some(rest) if rest.is_empty() || rest.starts_with(['.', '[']) => Self(format!("{}{rest}", order_body.0)),
            _ => Self::post(rules_field),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for FieldPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a post is refused, which decides how the refusal is answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusalKind {
    /// The post breaks a rule of the game or of the log.
    Invalid,
    /// The author may not make this post (a player's rollback, a moderator's seal).
    Forbidden,
    /// The post clashes with one already in the log (a role sealed twice).
    Conflict,
    /// The author's daily quota of this kind of post is spent; it renews in this many seconds.
    QuotaSpent { retry_after_secs: u64 },
}

/// A post the log does not take, nothing written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub kind: RefusalKind,
    pub field: FieldPath,
    pub rule: String,
    pub detail: String,
}

impl Refusal {
    pub fn invalid(field: FieldPath, rule: impl Into<String>, detail: impl Into<String>) -> Self {
        Self { kind: RefusalKind::Invalid, field, rule: rule.into(), detail: detail.into() }
    }

    pub fn forbidden(rule: impl Into<String>, detail: impl Into<String>) -> Self {
        Self { kind: RefusalKind::Forbidden, field: FieldPath::post("side"), rule: rule.into(), detail: detail.into() }
    }

    pub fn conflict(field: FieldPath, rule: impl Into<String>, detail: impl Into<String>) -> Self {
        Self { kind: RefusalKind::Conflict, field, rule: rule.into(), detail: detail.into() }
    }

    /// The rules' refusal of an order whose body sits at `order_body` in the post.
    pub fn of_rules(order_body: &FieldPath, r: adjutant_rules::Refusal) -> Self {
        Self::invalid(FieldPath::of_rules(order_body, &r.field), r.rule, r.detail)
    }
}

/// Everything that can stop a post, or a read of the log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The rules or the log refuse the post.
    #[error("{}", .0.detail)]
    Refused(Refusal),
    /// Other posts kept landing while this one was decided; nothing was written.
    #[error("the campaign is too busy to decide this post; retry")]
    Busy,
    /// The database.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Something stored cannot be read back (a campaign's settings, a state snapshot): the
    /// server's fault, never the author's.
    #[error("{0}")]
    Broken(String),
}

impl From<Refusal> for LogError {
    fn from(r: Refusal) -> Self {
        LogError::Refused(r)
    }
}

pub type LogResult<T> = Result<T, LogError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_fields_land_where_the_order_sits_in_the_post() {
        let post_body = FieldPath::post("body");
        let umpired = FieldPath::body("body");
        assert_eq!(FieldPath::of_rules(&post_body, "body.units[2]").as_str(), "body.units[2]");
        assert_eq!(FieldPath::of_rules(&umpired, "body.units[2]").as_str(), "body.body.units[2]");
        assert_eq!(FieldPath::of_rules(&umpired, "body").as_str(), "body.body");
        assert_eq!(FieldPath::of_rules(&umpired, "body[0]").as_str(), "body.body[0]");
        // Only the segment `body` is the order's body; a field merely starting with the letters is not.
        assert_eq!(FieldPath::of_rules(&umpired, "bodyguard").as_str(), "bodyguard");
        assert_eq!(FieldPath::of_rules(&umpired, "side").as_str(), "side");
        assert_eq!(FieldPath::body(".").as_str(), "body");
        assert_eq!(FieldPath::body("inputs.x").as_str(), "body.inputs.x");
    }
}
