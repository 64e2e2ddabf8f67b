//! `adjutant copy --from URL --to URL`: every table of one database moved into another of
//! either backend, made by the target's own migrations, then checked: the rows of every table,
//! every campaign's whole-campaign audit and chain head, and every token.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use adjutant_store::transfer::{Source, Target, Value, TABLES};
use uuid::Uuid;

use crate::backup::{all_campaigns, head_line, Head};
use crate::campaign::{LoadedCampaign, Scenarios};
use crate::config::Config;
use crate::log::audit::replay_from;
use crate::signing::Keyring;

pub const USAGE: &str = "usage: adjutant copy --from URL --to URL

Copies every table of the database at --from into the empty database at --to (sqlite://… or
postgres://…, either way), whose schema the target's own migrations make. Stop the server first:
the copy is of the source as it stood when the copy began. The target must be empty; the copy is
written in one transaction, so a copy that fails leaves it empty. Afterwards it checks the target:
each table's rows against the source's, every campaign's whole-campaign audit and chain head (with
the receipt keys of this configuration), and every token (live ones authenticate, revoked ones do
not). Exit status: 0 copied and checked; 1 failed; 2 the command is wrong.";

/// Rows read and written at once.
const PAGE: i64 = 2000;

/// `--from` and `--to`.
#[derive(Debug)]
pub struct Options {
    pub from: String,
    pub to: String,
}

pub fn parse_args(args: &[String]) -> Result<Options, String> {
    let (mut from, mut to) = (None, None);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let slot = match arg.as_str() {
            "--from" => &mut from,
            "--to" => &mut to,
            other => return Err(format!("unknown argument {other:?}")),
        };
        *slot = Some(args.next().ok_or_else(|| format!("{arg} needs a database URL"))?.clone());
    }
    let from = from.ok_or("--from is missing")?;
    let to = to.ok_or("--to is missing")?;
    if from == to {
        return Err("--from and --to name the same database".into());
    }
    Ok(Options { from, to })
}

/// A database URL with its password left out, to print.
pub fn shown(url: &str) -> String {
    // A password may also stand in the query (`?password=…`, as libpq reads it).
    let url = match url.split_once('?') {
        Some((base, query)) => {
            let pairs: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                    _ => pair.to_owned(),
                })
                .collect();
            format!("{base}?{}", pairs.join("&"))
        }
        None => url.to_owned(),
    };
    let url = url.as_str();
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let user_info = &url[scheme + 3..at];
            match user_info.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

async fn source(url: &str) -> Result<Box<dyn Source>, String> {
    if is_postgres(url) {
        Ok(Box::new(adjutant_store_postgres::transfer::PostgresSource::open(url).await.map_err(|e| e.to_string())?))
    } else if is_sqlite(url) {
        Ok(Box::new(adjutant_store_sqlite::transfer::SqliteSource::open(url).await.map_err(|e| e.to_string())?))
    } else {
        Err(format!("--from must start with sqlite:// or postgres://, not {url:?}"))
    }
}

async fn target(url: &str) -> Result<Box<dyn Target>, String> {
    if is_postgres(url) {
        Ok(Box::new(adjutant_store_postgres::transfer::PostgresTarget::open(url).await.map_err(|e| e.to_string())?))
    } else if is_sqlite(url) {
        let file = url.trim_start_matches("sqlite:").trim_start_matches("//");
        if let Some(parent) = std::path::Path::new(file.split('?').next().unwrap_or(file)).parent() {
            if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
            }
        }
        Ok(Box::new(adjutant_store_sqlite::transfer::SqliteTarget::open(url).await.map_err(|e| e.to_string())?))
    } else {
        Err(format!("--to must start with sqlite:// or postgres://, not {url:?}"))
    }
}

fn is_postgres(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

fn is_sqlite(url: &str) -> bool {
    url.starts_with("sqlite:")
}

/// A principal's token as the source keeps it.
struct Token {
    id: Uuid,
    hash: [u8; 32],
    revoked: bool,
}

/// What `adjutant copy` did and found.
#[derive(Debug, Default)]
pub struct Copied {
    pub from: String,
    pub to: String,
    /// Each table: rows in the source, rows in the target afterwards.
    pub tables: Vec<(&'static str, i64, i64)>,
    /// Each campaign: the source's head, the target's audit (posts, passed) and head.
    pub campaigns: Vec<(Head, i64, bool, Head)>,
    pub live_tokens: usize,
    pub revoked_tokens: usize,
    /// Every check that did not hold.
    pub problems: Vec<String>,
    pub copying: Duration,
    pub checking: Duration,
}

impl Copied {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    pub fn text(&self) -> String {
        let mut text = format!("copied {} to {} in {:.2} s\n", self.from, self.to, self.copying.as_secs_f64());
        for (table, source, target) in &self.tables {
            let verdict = if source == target { "ok" } else { "DIFFERS" };
            text.push_str(&format!("  {table:<20} {target:>9} rows (source {source}): {verdict}\n"));
        }
        let posts: i64 = self.campaigns.iter().map(|(_, posts, _, _)| posts).sum();
        for (source, posts, passed, target) in &self.campaigns {
            let audit = if *passed { "audit passed" } else { "audit FAILED" };
            let head = if source == target { "same head as the source" } else { "head DIFFERS from the source" };
            text.push_str(&format!("{} ({audit} over {posts} posts, {head})\n", head_line(target)));
        }
        text.push_str(&format!(
            "tokens: {} live ones authenticate on the target, {} revoked ones stay refused\n",
            self.live_tokens, self.revoked_tokens
        ));
        for problem in &self.problems {
            text.push_str(&format!("PROBLEM: {problem}\n"));
        }
        let rate = posts as f64 / self.copying.as_secs_f64().max(0.001);
        text.push_str(&format!(
            "checked in {:.2} s: {} tables, {} campaigns ({posts} posts, {rate:.0} posts/s copied), {} tokens: {}\n",
            self.checking.as_secs_f64(),
            self.tables.len(),
            self.campaigns.len(),
            self.live_tokens + self.revoked_tokens,
            if self.ok() { "the copy is whole" } else { "the copy is NOT whole" }
        ));
        text
    }
}

/// Copies every table from `from` into the empty database at `to`, then checks the copy.
pub async fn copy(config: &Config, options: &Options) -> Result<Copied, String> {
    let started = Instant::now();
    let mut report = Copied { from: shown(&options.from), to: shown(&options.to), ..Copied::default() };
    let mut from = source(&options.from).await?;
    let mut to = target(&options.to).await?;
    for table in TABLES {
        let rows = to.count(table).await.map_err(|e| e.to_string())?;
        if rows > 0 {
            return Err(format!(
                "{} is not empty ({} holds {rows} rows): copy into a new, empty database",
                report.to, table.name
            ));
        }
    }
    let mut heads: BTreeMap<Uuid, Head> = BTreeMap::new();
    let mut tokens = Vec::new();
    let mut counts = Vec::new();
    for table in TABLES {
        let total = from.count(table).await.map_err(|e| format!("{}: {e}", table.name))?;
        let mut offset = 0;
        while offset < total {
            let page = from.page(table, offset, PAGE).await.map_err(|e| format!("{}: {e}", table.name))?;
            if page.is_empty() {
                break;
            }
            match table.name {
                "posts" => remember_heads(&page, &mut heads),
                "principals" => tokens.extend(page.iter().filter_map(|row| token(row))),
                _ => {}
            }
            to.insert(table, &page).await.map_err(|e| format!("{}: {e}", table.name))?;
            offset += page.len() as i64;
        }
        counts.push((table, total));
    }
    to.commit().await.map_err(|e| e.to_string())?;
    report.copying = started.elapsed();

    let checking = Instant::now();
    for (table, source_rows) in counts {
        let target_rows = to.count(table).await.map_err(|e| e.to_string())?;
        if target_rows != source_rows {
            report.problems.push(format!("{}: {target_rows} rows, the source {source_rows}", table.name));
        }
        report.tables.push((table.name, source_rows, target_rows));
    }
    drop((from, to));
    let store = crate::open_store(&options.to).await?;
    let scenarios = Scenarios::load(&config.scenarios_dir)?;
    let keys = std::sync::Arc::new(Keyring::load(config)?.0);
    let campaigns = all_campaigns(&*store).await?;
    for campaign in campaigns {
        let id = campaign.id;
        let source_head = heads.remove(&id).unwrap_or(Head { campaign_id: id, seq: 0, hash: None });
        let loaded = LoadedCampaign::load(campaign, &scenarios).map_err(|e| e.to_string())?;
        let (audit, checkpoint) = replay_from(&*store, &keys, &loaded, None).await.map_err(|e| e.to_string())?;
        let target_head = Head { campaign_id: id, seq: checkpoint.seq(), hash: audit.head_hash.clone() };
        for d in &audit.differences {
            report.problems.push(format!("campaign {id}: post {}: {}: {}", d.seq, d.check, d.detail));
        }
        if target_head != source_head {
            report.problems.push(format!("campaign {id}: the source's head is {}", head_line(&source_head)));
        }
        report.campaigns.push((source_head, audit.posts, audit.ok, target_head));
    }
    for (id, head) in heads {
        report.problems.push(format!("campaign {id} of the source is not in the target ({})", head_line(&head)));
    }
    for token in tokens {
        let found = store.principal_by_token_hash(&token.hash).await.map_err(|e| e.to_string())?;
        match (token.revoked, found) {
            (false, Some(p)) if p.id == token.id => report.live_tokens += 1,
            (true, None) => report.revoked_tokens += 1,
            (false, _) => report.problems.push(format!("principal {}: its token does not authenticate", token.id)),
            (true, Some(_)) => report.problems.push(format!("principal {}: its revoked token authenticates", token.id)),
        }
    }
    report.checking = checking.elapsed();
    Ok(report)
}

/// The last post of each campaign in a page of posts (`campaign_id`, `seq`, …, `hash`).
fn remember_heads(page: &[Vec<Value>], heads: &mut BTreeMap<Uuid, Head>) {
    let posts = TABLES.iter().find(|t| t.name == "posts").map_or(&[][..], |t| t.columns);
    let at = |name: &str| posts.iter().position(|c| c.name == name);
    let (Some(campaign), Some(seq), Some(hash)) = (at("campaign_id"), at("seq"), at("hash")) else { return };
    for row in page {
        if let (Some(Value::Uuid(id)), Some(Value::Int(seq)), Some(Value::Text(hash))) =
            (row.get(campaign), row.get(seq), row.get(hash))
        {
            let head = heads.entry(*id).or_insert(Head { campaign_id: *id, seq: 0, hash: None });
            if *seq > head.seq {
                *head = Head { campaign_id: *id, seq: *seq, hash: Some(hash.clone()) };
            }
        }
    }
}

/// A principal's token from its row (`id`, …, `token_hash`, …, `revoked_at`).
fn token(row: &[Value]) -> Option<Token> {
    let principals = TABLES.iter().find(|t| t.name == "principals")?.columns;
    let at = |name: &str| principals.iter().position(|c| c.name == name);
    let (Value::Uuid(id), Value::Blob(hash)) = (row.get(at("id")?)?, row.get(at("token_hash")?)?) else {
        return None;
    };
    Some(Token {
        id: *id,
        hash: hash.as_slice().try_into().ok()?,
        revoked: !matches!(row.get(at("revoked_at")?)?, Value::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_never_printed() {
        assert_eq!(shown("postgres://adjutant:s3cret@db:5432/adjutant"), "postgres://adjutant:***@db:5432/adjutant");
        assert_eq!(shown("postgres://postgres@127.0.0.1/x"), "postgres://postgres@127.0.0.1/x");
        assert_eq!(shown("sqlite://data/adjutant.db"), "sqlite://data/adjutant.db");
        assert_eq!(
            shown("postgres://db/adjutant?sslmode=require&password=s3cret"),
            "postgres://db/adjutant?sslmode=require&password=***"
        );
    }

    #[test]
    fn both_databases_are_named() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(parse_args(&args(&["--from", "sqlite://a.db"])).is_err());
        assert!(parse_args(&args(&["--from", "sqlite://a.db", "--to", "sqlite://a.db"])).is_err());
        let options = parse_args(&args(&["--to", "postgres://db/x", "--from", "sqlite://a.db"])).unwrap();
        assert_eq!((options.from.as_str(), options.to.as_str()), ("sqlite://a.db", "postgres://db/x"));
    }
}
