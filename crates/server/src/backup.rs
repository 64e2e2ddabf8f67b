//! `adjutant backup`, `adjutant check-backup` and `adjutant restore`: a consistent copy of the
//! SQLite database taken while the server runs, the proof that a copy is the log as it stood,
//! and putting one back. On PostgreSQL, `pg_dump -Fc` and `pg_restore` take and put back the copy
//! (docs/hosting.md, "Backups and moving"); `check-backup` checks a restored database there too.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use adjutant_store::Store;
use uuid::Uuid;

use crate::campaign::{LoadedCampaign, Scenarios};
use crate::config::Config;
use crate::log::audit::replay_from;
use crate::signing::Keyring;

pub use adjutant_store_sqlite::backup::Head;

pub const USAGE: &str = "usage: adjutant backup DEST
       adjutant check-backup FILE|postgres://… [--heads HEADS]
       adjutant restore SRC

backup        writes a consistent copy of the SQLite database (ADJUTANT_DATABASE_URL) to DEST
              while the server runs, atomically (DEST appears whole or not at all), and prints
              each campaign's chain head as `head CAMPAIGN SEQ HASH`. On PostgreSQL use
              `pg_dump -Fc` (docs/hosting.md).
check-backup  replays every campaign of a backup file (read from a copy: the file is left as it
              is) or of a restored PostgreSQL database through the whole-campaign audit, and,
              with --heads (a file holding what `adjutant backup` printed), checks every chain
              head against the one printed at backup. Prints each campaign's head.
restore       puts the backup SRC in place of the SQLite database, keeping the database it
              replaces beside it; refused while a server has the database open.

Exit status: 0 done (every audit passed, every head matched); 1 it failed or a check did not
pass; 2 the command or the configuration is wrong.";

/// A campaign's head as `adjutant backup` prints it, and `check-backup --heads` reads it.
pub fn head_line(head: &Head) -> String {
    format!("head {} {} {}", head.campaign_id, head.seq, head.hash.as_deref().unwrap_or("-"))
}

/// The `head …` lines of what `adjutant backup` printed (other lines are passed over).
pub fn parse_heads(text: &str) -> Result<Vec<Head>, String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("head "))
        .map(|rest| {
            let bad = || format!("not a head line (`head CAMPAIGN SEQ HASH`): head {rest}");
            let mut words = rest.split_whitespace();
            let (Some(id), Some(seq), Some(hash), None) = (words.next(), words.next(), words.next(), words.next())
            else {
                return Err(bad());
            };
            Ok(Head {
                campaign_id: Uuid::parse_str(id).map_err(|_| bad())?,
                seq: seq.parse().map_err(|_| bad())?,
                hash: (hash != "-").then(|| hash.to_owned()),
            })
        })
        .collect()
}

/// The SQLite database file a URL names, or why it names none.
fn sqlite_file(url: &str, what: &str) -> Result<PathBuf, String> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Err(format!(
            "the database is PostgreSQL: {what} with pg_dump -Fc and pg_restore (docs/hosting.md, \"Backups and moving\")"
        ));
    }
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .ok_or_else(|| format!("ADJUTANT_DATABASE_URL must start with sqlite:// or postgres://, not {url:?}"))?;
    Ok(PathBuf::from(path.split('?').next().unwrap_or(path)))
}

/// What `adjutant backup` wrote.
#[derive(Debug)]
pub struct Backup {
    pub path: PathBuf,
    pub bytes: u64,
    pub elapsed: Duration,
    pub heads: Vec<Head>,
}

impl Backup {
    pub fn text(&self) -> String {
        let posts: i64 = self.heads.iter().map(|h| h.seq).sum();
        let mut text = format!(
            "backup {}: {} campaigns, {posts} posts, {} bytes, in {:.2} s\n",
            self.path.display(),
            self.heads.len(),
            self.bytes,
            self.elapsed.as_secs_f64()
        );
        for head in &self.heads {
            text.push_str(&head_line(head));
            text.push('\n');
        }
        text
    }
}

/// Writes a consistent copy of the SQLite database at `database_url` to `dest` while the server
/// goes on posting: `VACUUM INTO` a file beside `dest`, made durable, then renamed over `dest`,
/// so `dest` is either the whole copy or what it was before.
pub async fn backup(database_url: &str, dest: &Path) -> Result<Backup, String> {
    let started = Instant::now();
    let database = sqlite_file(database_url, "back it up")?;
    if !database.is_file() {
        return Err(format!("there is no database at {}", database.display()));
    }
    let name = dest.file_name().ok_or_else(|| format!("{} names no file", dest.display()))?;
    let dir = match dest.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(format!("{}: no such folder", dir.display()));
    }
    let partial = dir.join(format!(".{}.partial-{}", name.to_string_lossy(), std::process::id()));
    let _ = std::fs::remove_file(&partial);
    let written = async {
        adjutant_store_sqlite::backup::vacuum_into(database_url, &partial).await.map_err(|e| e.to_string())?;
        let heads = adjutant_store_sqlite::backup::heads(&partial).await.map_err(|e| e.to_string())?;
        let file = std::fs::File::open(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
        file.sync_all().map_err(|e| format!("{}: {e}", partial.display()))?;
        let bytes = file.metadata().map_err(|e| format!("{}: {e}", partial.display()))?.len();
        std::fs::rename(&partial, dest).map_err(|e| format!("{}: {e}", dest.display()))?;
        // The rename itself survives a power cut once the folder is synced.
        std::fs::File::open(&dir).and_then(|d| d.sync_all()).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok::<_, String>((heads, bytes))
    }
    .await;
    match written {
        Ok((heads, bytes)) => Ok(Backup { path: dest.to_path_buf(), bytes, elapsed: started.elapsed(), heads }),
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e)
        }
    }
}

/// One campaign as `check-backup` found it.
#[derive(Debug)]
pub struct CampaignCheck {
    pub head: Head,
    pub posts: i64,
    pub audit_ok: bool,
    /// The audit's differences, and a head that is not the one printed at backup.
    pub problems: Vec<String>,
}

/// What `adjutant check-backup` found.
#[derive(Debug)]
pub struct Check {
    pub source: String,
    pub campaigns: Vec<CampaignCheck>,
    /// Heads printed at backup whose campaign is not in the database.
    pub missing: Vec<Head>,
    /// Whether heads were given to compare with.
    pub compared: bool,
    pub elapsed: Duration,
}

impl Check {
    pub fn ok(&self) -> bool {
        self.missing.is_empty() && self.campaigns.iter().all(|c| c.problems.is_empty())
    }

    pub fn text(&self) -> String {
        let mut text = String::new();
        for c in &self.campaigns {
            let verdict = if c.problems.is_empty() { "ok" } else { "FAILED" };
            let audit = if c.audit_ok { "passed" } else { "FAILED" };
            text.push_str(&format!("{} ({verdict}: audit of {} posts {audit}", head_line(&c.head), c.posts));
            if self.compared {
                let printed = c.problems.iter().any(|p| p.starts_with("the head printed") || p.starts_with("no head"));
                text.push_str(if printed { ", head NOT as printed at backup" } else { ", head as printed at backup" });
            }
            text.push_str(")\n");
            for problem in &c.problems {
                text.push_str(&format!("  {problem}\n"));
            }
        }
        for head in &self.missing {
            text.push_str(&format!("{} (FAILED: no such campaign in the backup)\n", head_line(head)));
        }
        let posts: i64 = self.campaigns.iter().map(|c| c.posts).sum();
        let summary = if self.ok() {
            if self.compared {
                "every audit passed and every head is the one printed at backup"
            } else {
                "every audit passed"
            }
        } else {
            "NOT the log as it stood at backup"
        };
        text.push_str(&format!(
            "checked {}: {} campaigns, {posts} posts, in {:.2} s: {summary}\n",
            self.source,
            self.campaigns.len(),
            self.elapsed.as_secs_f64()
        ));
        text
    }
}

/// A copy of a backup file in a folder of its own, removed when dropped: the check opens the
/// copy as the server would (which turns on its WAL), leaving the backup as it was.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self, String> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let dir = std::env::temp_dir().join(format!("adjutant-check-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Self(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Replays every campaign of the backup `source` (a SQLite file, or a PostgreSQL database's URL)
/// through the whole-campaign audit, and compares each head with `heads` when given.
pub async fn check_backup(config: &Config, source: &str, heads: Option<&[Head]>) -> Result<Check, String> {
    let started = Instant::now();
    let mut _scratch = None;
    let url = if source.starts_with("postgres://") || source.starts_with("postgresql://") {
        source.to_owned()
    } else {
        let file = sqlite_file(source, "check it").unwrap_or_else(|_| PathBuf::from(source));
        if !file.is_file() {
            return Err(format!("there is no backup at {}", file.display()));
        }
        let scratch = Scratch::new()?;
        let copy = scratch.0.join("adjutant.db");
        std::fs::copy(&file, &copy).map_err(|e| format!("{}: {e}", file.display()))?;
        _scratch = Some(scratch);
        format!("sqlite://{}", copy.display())
    };
    let store = crate::open_store(&url).await?;
    let scenarios = Scenarios::load(&config.scenarios_dir)?;
    let (keys, _) = Keyring::load(config)?;
    let keys = std::sync::Arc::new(keys);
    let mut campaigns = Vec::new();
    for campaign in all_campaigns(&*store).await? {
        let id = campaign.id;
        let head = |seq, hash| Head { campaign_id: id, seq, hash };
        let loaded = match LoadedCampaign::load(campaign, &scenarios) {
            Ok(loaded) => loaded,
            Err(e) => {
                let problems = vec![format!("cannot be read: {e}")];
                campaigns.push(CampaignCheck { head: head(0, None), posts: 0, audit_ok: false, problems });
                continue;
            }
        };
        let (audit, checkpoint) = replay_from(&*store, &keys, &loaded, None).await.map_err(|e| e.to_string())?;
        let found = head(checkpoint.seq(), audit.head_hash.clone());
        let mut problems: Vec<String> =
            audit.differences.iter().map(|d| format!("post {}: {}: {}", d.seq, d.check, d.detail)).collect();
        if let Some(heads) = heads {
            match heads.iter().find(|h| h.campaign_id == id) {
                Some(printed) if *printed == found => {}
                Some(printed) => problems.push(format!("the head printed at backup is {}", head_line(printed))),
                None => problems.push("no head was printed for it at backup".into()),
            }
        }
        campaigns.push(CampaignCheck { head: found, posts: audit.posts, audit_ok: audit.ok, problems });
    }
    let missing = heads
        .unwrap_or_default()
        .iter()
        .filter(|h| !campaigns.iter().any(|c| c.head.campaign_id == h.campaign_id))
        .cloned()
        .collect();
    drop(store);
    Ok(Check {
        source: crate::copy::shown(source),
        campaigns,
        missing,
        compared: heads.is_some(),
        elapsed: started.elapsed(),
    })
}

/// Every campaign, in the order they were created.
pub(crate) async fn all_campaigns(store: &dyn Store) -> Result<Vec<adjutant_store::Campaign>, String> {
    let mut all: Vec<adjutant_store::Campaign> = Vec::new();
    loop {
        let page = store.campaigns(None, all.last().map(|c| c.id), 500).await.map_err(|e| e.to_string())?;
        let done = page.len() < 500;
        all.extend(page);
        if done {
            return Ok(all);
        }
    }
}

/// What `adjutant restore` did.
#[derive(Debug)]
pub struct Restored {
    pub database: PathBuf,
    /// Where the database it replaced is kept, if there was one.
    pub kept: Option<PathBuf>,
    pub heads: Vec<Head>,
}

impl Restored {
    pub fn text(&self) -> String {
        let mut text = format!("restored {}", self.database.display());
        match &self.kept {
            Some(kept) => text.push_str(&format!(" (the database it replaced is kept as {})\n", kept.display())),
            None => text.push('\n'),
        }
        for head in &self.heads {
            text.push_str(&head_line(head));
            text.push('\n');
        }
        text
    }
}

/// Puts the backup `src` in place of the SQLite database at `database_url`, which no server may
/// have open. The database it replaces (and its WAL, should its server have stopped without
/// folding it in) is renamed aside, not removed: a WAL left beside the restored file would be
/// read into it.
pub async fn restore(database_url: &str, src: &Path) -> Result<Restored, String> {
    let database = sqlite_file(database_url, "restore it")?;
    if !src.is_file() {
        return Err(format!("there is no backup at {}", src.display()));
    }
    let heads = adjutant_store_sqlite::backup::heads(src)
        .await
        .map_err(|e| format!("{} is not an Adjutant database: {e}", src.display()))?;
    // A running server holds the database's lock file (even with its connections idle and
    // closed); an older one, or another program, is found by its open connections.
    if adjutant_store_sqlite::backup::held(database_url).map_err(|e| e.to_string())?
        || database.exists() && adjutant_store_sqlite::backup::in_use(database_url).await.map_err(|e| e.to_string())?
    {
        return Err(format!("{} is open (is the server running?): stop the server first", database.display()));
    }
    let name = database.file_name().ok_or_else(|| format!("{} names no file", database.display()))?;
    let dir = match database.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let partial = dir.join(format!(".{}.restoring-{}", name.to_string_lossy(), std::process::id()));
    std::fs::copy(src, &partial).map_err(|e| format!("{} to {}: {e}", src.display(), partial.display()))?;
    std::fs::File::open(&partial).and_then(|f| f.sync_all()).map_err(|e| format!("{}: {e}", partial.display()))?;
    let kept = if database.exists() {
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
        let kept = dir.join(format!("{}.before-restore-{stamp}", name.to_string_lossy()));
        for suffix in ["-wal", "-shm"] {
            let side = dir.join(format!("{}{suffix}", name.to_string_lossy()));
            if side.exists() {
                let aside = PathBuf::from(format!("{}{suffix}", kept.display()));
                std::fs::rename(&side, &aside).map_err(|e| format!("{}: {e}", side.display()))?;
            }
        }
        std::fs::rename(&database, &kept).map_err(|e| format!("{}: {e}", database.display()))?;
        Some(kept)
    } else {
        None
    };
    std::fs::rename(&partial, &database).map_err(|e| format!("{}: {e}", database.display()))?;
    std::fs::File::open(&dir).and_then(|d| d.sync_all()).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(Restored { database, kept, heads })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_read_back_as_printed() {
        let heads = vec![
            Head { campaign_id: Uuid::new_v4(), seq: 42, hash: Some("ab".repeat(32)) },
            Head { campaign_id: Uuid::new_v4(), seq: 0, hash: None },
        ];
        let printed = Backup { path: "b.db".into(), bytes: 1, elapsed: Duration::ZERO, heads: heads.clone() }.text();
        assert_eq!(parse_heads(&printed).unwrap(), heads);
        assert!(parse_heads("head not-a-uuid 1 ab").is_err());
        assert!(parse_heads("head 0b7c3f9e-4c1a-4f0e-9a57-9d1c1e2f3a4b 1").is_err());
    }

    #[test]
    fn a_postgres_database_is_backed_up_with_its_own_tools() {
        let e = sqlite_file("postgres://db/adjutant", "back it up").unwrap_err();
        assert!(e.contains("pg_dump"), "{e}");
        assert_eq!(sqlite_file("sqlite://data/adjutant.db?mode=rwc", "x").unwrap(), PathBuf::from("data/adjutant.db"));
    }
}
