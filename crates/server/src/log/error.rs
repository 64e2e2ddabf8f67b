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

    /// The post as a whole: the root every other path is below.
    pub fn root() -> Self {
        Self(String::new())
    }

    /// The post's body, or a path inside it (`to_seq`, `inputs.attacker`).
    pub fn body(path: &str) -> Self {
        Self::inside(&Self::post("body"), path)
    }

    /// A path `path` below `self` (`.` or the empty path: `self`; a leading `.` is the same as none).
    pub fn inside(&self, path: &str) -> Self {
        let path = path.strip_prefix('.').unwrap_or(path);
        match path {
            "" => self.clone(),
            p if self.0.is_empty() => Self(p.to_owned()),
            p if p.starts_with('[') => Self(format!("{}{p}", self.0)),
            p => Self(format!("{}.{p}", self.0)),
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
pub struct PostRefusal {
    pub kind: RefusalKind,
    pub field: FieldPath,
    pub rule: String,
    pub detail: String,
}

impl PostRefusal {
    pub fn invalid(field: FieldPath, rule: impl Into<String>, detail: impl Into<String>) -> Self {
        Self { kind: RefusalKind::Invalid, field, rule: rule.into(), detail: detail.into() }
    }

    pub fn forbidden(rule: impl Into<String>, detail: impl Into<String>) -> Self {
        Self { kind: RefusalKind::Forbidden, field: FieldPath::post("side"), rule: rule.into(), detail: detail.into() }
    }

    pub fn conflict(field: FieldPath, rule: impl Into<String>, detail: impl Into<String>) -> Self {
        Self { kind: RefusalKind::Conflict, field, rule: rule.into(), detail: detail.into() }
    }

    /// The rules' refusal of an order that sits at `order` in the post: the rules name the
    /// order's fields (`kind`, `side`, `body.units[2]`), so a player's order (the post itself,
    /// [`FieldPath::root`]) keeps them, and an umpire's answer (the order in the post's `body`)
    /// has them below `body`.
    pub fn of_rules(order: &FieldPath, r: adjutant_rules::Refusal) -> Self {
        if r.depends_on_the_game_now() {
            Self::conflict(order.inside(&r.field), r.rule, r.detail)
        } else {
            Self::invalid(order.inside(&r.field), r.rule, r.detail)
        }
    }
}

/// Everything that can stop a post, or a read of the log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The rules or the log refuse the post.
    #[error("{}", .0.detail)]
    Refused(PostRefusal),
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

impl From<PostRefusal> for LogError {
    fn from(r: PostRefusal) -> Self {
        LogError::Refused(r)
    }
}

pub type LogResult<T> = Result<T, LogError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_fields_land_where_the_order_sits_in_the_post() {
        let field = |order: &FieldPath, name: &str| {
            PostRefusal::of_rules(order, adjutant_rules::Refusal::new(name, "r", "d")).field.as_str().to_owned()
        };
        let own = FieldPath::root();
        let umpired = FieldPath::post("body");
        assert_eq!(field(&own, "body.units[2]"), "body.units[2]");
        assert_eq!(field(&own, "side"), "side");
        assert_eq!(field(&umpired, "body.units[2]"), "body.body.units[2]");
        assert_eq!(field(&umpired, "kind"), "body.kind");
        assert_eq!(field(&umpired, "side"), "body.side");
        assert_eq!(FieldPath::body(".").as_str(), "body");
        assert_eq!(FieldPath::body("inputs.x").as_str(), "body.inputs.x");
        assert_eq!(FieldPath::body(".inputs[1]").as_str(), "body.inputs[1]");
        assert_eq!(FieldPath::post("body").inside("[0]").as_str(), "body[0]");
    }
}
