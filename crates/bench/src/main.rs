//! `adjutant-bench`: measures Adjutant beside the physical ceiling of each figure, in the same
//! run on the same machine, and writes `docs/BENCHMARKS.md`.
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
//!
//! The server is the real `adjutant` binary in a child process; the bare handler runs in a
//! child process too (this binary, `bare-calculator`), so both sides of (3) pay the same. The
//! load generator runs here, on loopback, for a bounded time. Run it with `scripts/bench.sh`.

use std::path::PathBuf;

mod campaign;
mod child;
mod cli;
mod figures;
mod http;
mod load;
mod report;
mod run;
mod seed;

type Error = Box<dyn std::error::Error + Send + Sync>;
type Result<T, E = Error> = std::result::Result<T, E>;

fn main() -> std::process::ExitCode {
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
        Some("history") => runtime.block_on(figures::history::history_alone(arg(2).map(PathBuf::from))),
        Some("throughput") => runtime.block_on(figures::posts::throughput_alone(arg(2))),
        Some("scale") => runtime.block_on(figures::scale::scale_alone(arg(2))),
        Some("calculator") => runtime.block_on(figures::calculator::calculator_alone()),
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
