//! `adjutant-bench`: measures Adjutant beside the physical ceiling of each figure, in the same
//! run on the same machine, in complete runs one after the other (`--runs`, default 2), and
//! writes `docs/BENCHMARKS.md`: each figure as the range over the runs, each ratio beside its
//! own run's ceiling, and each goal met only where every run meets it.
//!
//! 1. POST posts on SQLite (`synchronous=FULL`), 64 concurrent clients with unique keys, beside
//!    a minimal loop of durable single-row inserts, one per transaction, with the same settings;
//!    the same on PostgreSQL when a URL is given. Then the same 64 clients at scale: 1,000
//!    campaigns with 1,000 earlier posts each, every post to a campaign picked at random.
//! 2. Post latency with 100 and with 100,000 earlier posts in the campaign, and the
//!    whole-campaign audit of the larger (every post replayed through the rules).
//! 3. `/v1/tools/result-number` requests per second beside a bare axum handler that returns the
//!    same JSON.
//! 4. The server's peak resident memory (VmHWM) under (1), and under (1) at scale.
//! 5. Where a lone post's time goes, step by step, from the server's own spans.
//! 6. Followers: 1,000 event streams on one campaign and 10,000 over 1,000 campaigns while 64
//!    clients post; delivery latency, posts missed or repeated, and the cost to the server
//!    beside the same posting without them; with PostgreSQL, followers and posters on two servers.
//! 7. `adjutant backup`, `check-backup` and `copy` (to PostgreSQL) of figure 2's database.
//!
//! The server is the real `adjutant` binary in a child process; the bare handler runs in a
//! child process too (this binary, `bare-calculator`), so both sides of (3) pay the same. The
//! load generator runs here, on loopback, for a bounded time. Run it with `scripts/bench.sh`.

use std::path::PathBuf;

mod campaign;
mod child;
mod cli;
mod figures;
mod follow;
mod http;
mod load;
mod report;
mod run;
mod seed;

type Error = Box<dyn std::error::Error + Send + Sync>;
type Result<T, E = Error> = std::result::Result<T, E>;

/// Raises this process's limit of open files to the most it may have: the followers of figure 6
/// hold 10,000 connections, and the servers it starts inherit the limit.
fn raise_open_files() {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit read and write only the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                eprintln!("adjutant-bench: cannot raise the limit of open files to {}", limit.rlim_max);
            }
        }
    }
}

fn main() -> std::process::ExitCode {
    raise_open_files();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("adjutant-bench: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize| args.get(i).cloned();
    // The figures alone, to measure one while working on it; the bare handler, as a child.
    let outcome = match arg(1).as_deref() {
        Some("bare-calculator") => runtime.block_on(figures::calculator::bare_calculator(arg(2).unwrap_or_default())),
        Some("audit-parts") => runtime.block_on(figures::history::audit_parts_alone(arg(2).map(PathBuf::from), arg(3))),
        Some("history") => runtime.block_on(figures::history::history_alone(arg(2).map(PathBuf::from))),
        Some("throughput") => runtime.block_on(figures::posts::throughput_alone(arg(2))),
        Some("scale") => runtime.block_on(figures::scale::scale_alone(arg(2))),
        Some("calculator") => runtime.block_on(figures::calculator::calculator_alone()),
        Some("followers") => runtime.block_on(figures::followers::followers_alone(arg(2))),
        Some("backup") => runtime.block_on(figures::backup::backup_alone(arg(2))),
        _ => cli::options().and_then(|o| runtime.block_on(run::run(o))),
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("adjutant-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
