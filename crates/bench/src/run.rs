//! A full run: every figure on SQLite, figure 1 on PostgreSQL too when a URL is given, measured
//! in several complete runs one after the other, then the report of them all.

use std::sync::Arc;

use crate::campaign::{batches, game, Batches};
use crate::child::start_server;
use crate::cli::Options;
use crate::figures::backup::{backup, BackupFigure};
use crate::figures::calculator::calculator;
use crate::figures::followers::{followers_on_one_server, replicas, Following};
use crate::figures::history::{history, History};
use crate::figures::posts::{post_throughput, postgres_ceiling, postgres_durability, sqlite_ceiling};
use crate::figures::profile::{profile, Profile, PROFILE_POSTS};
use crate::figures::scale::{scale, Scale, SCALE_CAMPAIGNS, SCALE_POSTS};
use crate::load::{progress, Run, CLIENTS};
use crate::report::report;
use crate::seed::Database;
use crate::Result;

/// Figure 1 (and 4) on one backend.
pub struct Backend {
    pub name: &'static str,
    /// How the server wrote its batches during the run.
    pub batches: Batches,
    pub settings: String,
    pub service: Run,
    pub ceiling: Run,
    pub peak_kib: Option<u64>,
    /// The same posting spread over 1,000 campaigns of 1,000 earlier posts each.
    pub scale: Scale,
}

/// Every figure of one complete run.
pub struct Measured {
    pub backends: Vec<Backend>,
    pub history: History,
    pub calc: Run,
    pub bare: Run,
    /// The calculator asked a new time of day each request.
    pub calc_fresh: Run,
    pub profile: Profile,
    pub followers: Vec<Following>,
    pub backup: BackupFigure,
}

/// `o.runs` complete runs one after the other, then the report of them all: a figure that holds
/// in one run only is not a figure of the machine.
pub async fn run(o: Options) -> Result<()> {
    let mut runs = Vec::new();
    for n in 1..=o.runs {
        eprintln!("run {n} of {}", o.runs);
        let at = std::time::Instant::now();
        runs.push(measure(&o).await?);
        eprintln!("run {n} of {} measured in {:.0} s", o.runs, at.elapsed().as_secs_f64());
    }
    let report = report(&o, &runs);
    if let Some(parent) = o.out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&o.out, &report)?;
    print!("{report}");
    Ok(())
}

/// One complete run of every figure, on a temporary folder of its own.
async fn measure(o: &Options) -> Result<Measured> {
    let dir = tempfile::tempdir()?;
    let admin = format!("bench-{}", uuid::Uuid::new_v4());
    let mut backends = Vec::new();

    eprintln!("1. SQLite ceiling: durable single-row inserts, {} s", o.seconds);
    let sqlite_ceiling = sqlite_ceiling(dir.path(), o.seconds).await?;
    progress(&sqlite_ceiling);
    let db_file = dir.path().join("adjutant.db");
    let server = start_server(&o.server, &Database::Sqlite(&db_file).url(), &admin).await?;
    eprintln!("1. SQLite: POST posts, {CLIENTS} clients, {} s", o.seconds);
    let one = game(&server.base, &admin, "Throughput").await?;
    let service = post_throughput(&server, Arc::new(vec![one]), o.seconds).await?;
    progress(&service);
    let peak = server.peak_kib();
    let batch = batches(&server.base).await?;

    eprintln!("2. history: 100 and 100,000 earlier posts");
    let history = history(&server, &admin, &db_file).await?;
    eprintln!("7. backup of figure 2's database while its server runs, its check, and its copy to PostgreSQL");
    let backup = backup(&o.server, &db_file, o.postgres.as_deref(), dir.path()).await?;
    eprintln!("3. calculator beside a bare handler, {} s each", o.seconds);
    let (calc, bare, calc_fresh) = calculator(&server, o.seconds, dir.path()).await?;
    drop(server);
    eprintln!("5. where a post's time goes: {PROFILE_POSTS} posts, one client, the server's spans");
    let profile = profile(&o.server, dir.path(), &admin).await?;

    eprintln!(
        "1. SQLite at scale: {SCALE_CAMPAIGNS} campaigns × {SCALE_POSTS} earlier posts, {CLIENTS} clients, {} s",
        o.seconds
    );
    let scale_db = dir.path().join("scale.db");
    let sqlite_scale = scale(&o.server, Database::Sqlite(&scale_db), &admin, o.seconds).await?;
    let settings = "journal_mode=wal, synchronous=FULL (checked on the ceiling's connection)".to_owned();
    backends.push(Backend {
        name: "SQLite",
        batches: batch,
        settings,
        service,
        ceiling: sqlite_ceiling,
        peak_kib: peak,
        scale: sqlite_scale,
    });

    let mut followers = followers_on_one_server(&o.server, dir.path(), None, &admin, o.seconds).await?;

    if let Some(url) = &o.postgres {
        eprintln!("1. PostgreSQL ceiling: durable single-row inserts, {} s", o.seconds);
        let ceiling = postgres_ceiling(url, o.seconds).await?;
        progress(&ceiling);
        let server = start_server(&o.server, url, &admin).await?;
        eprintln!("1. PostgreSQL: POST posts, {CLIENTS} clients, {} s", o.seconds);
        let one = game(&server.base, &admin, "Throughput").await?;
        let service = post_throughput(&server, Arc::new(vec![one]), o.seconds).await?;
        progress(&service);
        let peak = server.peak_kib();
        let batch = batches(&server.base).await?;
        drop(server);
        eprintln!(
            "1. PostgreSQL at scale: {SCALE_CAMPAIGNS} campaigns × {SCALE_POSTS} earlier posts, {CLIENTS} clients, {} s",
            o.seconds
        );
        let scale = scale(&o.server, Database::Postgres(url), &admin, o.seconds).await?;
        let settings = postgres_durability(url).await?;
        backends.push(Backend {
            name: "PostgreSQL",
            batches: batch,
            settings,
            service,
            ceiling,
            peak_kib: peak,
            scale,
        });
        followers.push(replicas(&o.server, url, &admin, o.seconds).await?);
    }

    Ok(Measured { backends, history, calc, bare, calc_fresh, profile, followers, backup })
}
