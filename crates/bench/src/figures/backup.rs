//! Figure 7: backing up and moving figure 2's database, with the real `adjutant` commands: `adjutant
//! backup` while the server runs, `adjutant check-backup` of the copy against the heads printed
//! at backup, and with a PostgreSQL URL `adjutant copy` of the backup into a new database there.

use std::path::Path;
use std::time::Instant;

use sqlx::{Connection, Executor};

use crate::child::BENCH_SIGNING_SEED;
use crate::Result;

/// The database the copy is written into, made anew on the PostgreSQL server for each run.
const COPY_DATABASE: &str = "adjutant_bench_copy";

pub struct BackupFigure {
    /// What the backup holds, as `adjutant backup` printed it.
    pub campaigns: u64,
    pub posts: u64,
    pub bytes: u64,
    /// Wall time of each command, as a process, in s.
    pub backup_seconds: f64,
    pub check_seconds: f64,
    pub copy: Option<CopyFigure>,
}

pub struct CopyFigure {
    /// Wall time of `adjutant copy` as a process, and its own two parts (the copy's transaction,
    /// then its checks: row counts, every campaign's audit and head, every token).
    pub seconds: f64,
    pub copying: f64,
    pub checking: f64,
    pub posts: u64,
}

impl CopyFigure {
    /// Posts copied a second, over the whole command, its checks included.
    pub fn rate(&self) -> f64 {
        self.posts as f64 / self.seconds
    }
}

/// Runs `adjutant ARGS` on `database_url` with the bench's receipt key; its output, and its
/// wall time in s.
async fn adjutant(binary: &Path, database_url: &str, data_dir: &Path, args: &[&str]) -> Result<(String, f64)> {
    let at = Instant::now();
    let output = tokio::process::Command::new(binary)
        .args(args)
        .env("ADJUTANT_DATABASE_URL", database_url)
        .env("ADJUTANT_SIGNING_KEY", hex::encode(BENCH_SIGNING_SEED))
        .env("ADJUTANT_DATA_DIR", data_dir)
        .env("ADJUTANT_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .output()
        .await?;
    let seconds = at.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        let tail: Vec<&str> = stdout.lines().rev().take(5).collect();
        return Err(format!(
            "adjutant {}: {}: {} {}",
            args.first().unwrap_or(&""),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim(),
            tail.join(" / ")
        )
        .into());
    }
    Ok((stdout, seconds))
}

/// The number just before `suffix` in `text` (`"12 posts,"` with `" posts,"` gives 12).
fn number_before(text: &str, suffix: &str) -> Option<f64> {
    let at = text.find(suffix)?;
    text[..at].split(|c: char| c.is_whitespace() || c == '(').next_back()?.parse().ok()
}

/// `url` with its database named `name` instead.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, None), |(base, query)| (base, Some(query)));
    let host_from = base.find("://").map_or(0, |i| i + 3);
    let host = base[host_from..].find('/').map_or(base, |i| &base[..host_from + i]);
    format!("{host}/{name}{}", query.map(|q| format!("?{q}")).unwrap_or_default())
}

/// Backs up the SQLite database at `db_file` (its server running), checks the backup, and,
/// given a PostgreSQL server's URL, copies the backup into a new database there.
pub async fn backup(binary: &Path, db_file: &Path, postgres: Option<&str>, dir: &Path) -> Result<BackupFigure> {
    let url = format!("sqlite://{}", db_file.display());
    let data_dir = dir.join("backup-data");
    std::fs::create_dir_all(&data_dir)?;
    let dest = dir.join("backup.db");
    let dest_text = dest.display().to_string();
    let (printed, backup_seconds) = adjutant(binary, &url, &data_dir, &["backup", &dest_text]).await?;
    let first = printed.lines().next().unwrap_or("");
    let read = |suffix: &str| number_before(first, suffix).ok_or_else(|| format!("adjutant backup printed {first:?}"));
    let (campaigns, posts, bytes) = (read(" campaigns,")? as u64, read(" posts,")? as u64, read(" bytes,")? as u64);
    eprintln!("   backup: {campaigns} campaigns, {posts} posts, {bytes} bytes in {backup_seconds:.2} s");
    let heads = dir.join("backup-heads.txt");
    std::fs::write(&heads, &printed)?;
    let heads_text = heads.display().to_string();
    let (checked, check_seconds) =
        adjutant(binary, &url, &data_dir, &["check-backup", &dest_text, "--heads", &heads_text]).await?;
    if !checked.contains("every audit passed and every head is the one printed at backup") {
        return Err(format!("adjutant check-backup: {}", checked.lines().last().unwrap_or("")).into());
    }
    eprintln!("   check-backup: {check_seconds:.2} s");
    let copy = match postgres {
        Some(server) => {
            let mut conn = sqlx::PgConnection::connect(server).await?;
            conn.execute(format!("DROP DATABASE IF EXISTS {COPY_DATABASE} WITH (FORCE)").as_str()).await?;
            // A role that may not make databases leaves the copy unmeasured, not the bench undone.
            if let Err(e) = conn.execute(format!("CREATE DATABASE {COPY_DATABASE}").as_str()).await {
                eprintln!("   the copy is not measured: CREATE DATABASE {COPY_DATABASE}: {e}");
                return Ok(BackupFigure { campaigns, posts, bytes, backup_seconds, check_seconds, copy: None });
            }
            let target = with_database(server, COPY_DATABASE);
            let source = format!("sqlite://{dest_text}");
            let copied = adjutant(binary, &url, &data_dir, &["copy", "--from", &source, "--to", &target]).await;
            conn.execute(format!("DROP DATABASE IF EXISTS {COPY_DATABASE} WITH (FORCE)").as_str()).await?;
            let (printed, seconds) = copied?;
            let last = printed.lines().last().unwrap_or("");
            if !last.ends_with("the copy is whole") {
                return Err(format!("adjutant copy: {last}").into());
            }
            let copying = printed
                .lines()
                .next()
                .and_then(|line| line.rsplit_once(" in ")?.1.strip_suffix(" s")?.parse().ok())
                .ok_or_else(|| format!("adjutant copy printed {printed:?}"))?;
            let checking = last
                .strip_prefix("checked in ")
                .and_then(|rest| rest.split_once(" s:")?.0.parse().ok())
                .ok_or_else(|| format!("adjutant copy printed {last:?}"))?;
            let copied_posts =
                number_before(last, " posts,").ok_or_else(|| format!("adjutant copy printed {last:?}"))?;
            let figure = CopyFigure { seconds, copying, checking, posts: copied_posts as u64 };
            eprintln!("   copy to PostgreSQL: {} posts in {seconds:.2} s, {:.0} posts/s", figure.posts, figure.rate());
            Some(figure)
        }
        None => None,
    };
    Ok(BackupFigure { campaigns, posts, bytes, backup_seconds, check_seconds, copy })
}

/// Figure 7 alone (`adjutant-bench backup [URL]`): figure 2's campaigns seeded on a server of
/// their own, then the backup, its check and (with a PostgreSQL URL, or
/// `ADJUTANT_BENCH_POSTGRES_URL`) the copy.
pub async fn backup_alone(url: Option<String>) -> Result<()> {
    let temp = tempfile::tempdir()?;
    let db_file = temp.path().join("adjutant.db");
    let admin = format!("bench-{}", uuid::Uuid::new_v4());
    let binary = std::env::current_exe()?.with_file_name("adjutant");
    let url = url.or_else(|| std::env::var("ADJUTANT_BENCH_POSTGRES_URL").ok()).filter(|u| !u.is_empty());
    let server = crate::child::start_server(&binary, &format!("sqlite://{}", db_file.display()), &admin).await?;
    crate::figures::history::history(&server, &admin, &db_file).await?;
    let figure = backup(&binary, &db_file, url.as_deref(), temp.path()).await?;
    drop(server);
    print!("{}", crate::report::backup_section(&[&figure]));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_commands_print_is_read() {
        let backup = "backup /tmp/x: y/backup.db: 3 campaigns, 100401 posts, 91234304 bytes, in 0.84 s\nhead a 1 b\n";
        let first = backup.lines().next().unwrap();
        assert_eq!(number_before(first, " campaigns,"), Some(3.0));
        assert_eq!(number_before(first, " posts,"), Some(100_401.0));
        assert_eq!(number_before(first, " bytes,"), Some(91_234_304.0));
        let copy =
            "checked in 4.20 s: 9 tables, 3 campaigns (100401 posts, 9000 posts/s copied), 7 tokens: the copy is whole";
        assert_eq!(number_before(copy, " posts,"), Some(100_401.0));
        assert_eq!(number_before(copy, " campaigns"), Some(3.0));
    }

    #[test]
    fn the_copy_goes_to_a_database_of_its_own_on_the_same_server() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:55432/postgres", "copy"),
            "postgres://postgres@127.0.0.1:55432/copy"
        );
        assert_eq!(
            with_database("postgres://u:p@db/x?sslmode=disable", "copy"),
            "postgres://u:p@db/copy?sslmode=disable"
        );
        assert_eq!(with_database("postgres://db", "copy"), "postgres://db/copy");
    }
}
