//! The command line of a full run.

use std::path::PathBuf;

use crate::Result;

const USAGE: &str =
    "usage: adjutant-bench [--server PATH] [--postgres URL] [--seconds N] [--runs N] [--out FILE] [--command TEXT]

Runs Adjutant's benchmarks and writes them (default docs/BENCHMARKS.md). --server is the
adjutant binary (default: beside this one); --postgres adds the PostgreSQL figures (the URL of a
database the bench may fill; also ADJUTANT_BENCH_POSTGRES_URL); --seconds bounds each
throughput run (default 10); --runs is how many complete runs are measured one after the other,
each figure reported as the range over them (default 2; also ADJUTANT_BENCH_RUNS); --command is
the command recorded in the file.

One figure alone, its figures on the terminal (ADJUTANT_BENCH_SECONDS sets each run's length):
  adjutant-bench throughput [URL] | scale [URL] | history [DIR] | calculator
  adjutant-bench followers [URL]   (figure 6; with a PostgreSQL URL, or ADJUTANT_BENCH_POSTGRES_URL,
                                    the two servers' run too)
  adjutant-bench backup [URL]      (figure 7; the copy needs a PostgreSQL URL, as above)
  adjutant-bench audit-parts DB CAMPAIGN   (figure 2's pieces of the cold audit of CAMPAIGN in the
                                            SQLite file DB, as JSON)";

pub struct Options {
    pub server: PathBuf,
    pub postgres: Option<String>,
    pub seconds: u64,
    pub runs: usize,
    pub out: PathBuf,
    pub command: String,
}

pub fn options() -> Result<Options> {
    let mut args = std::env::args().skip(1);
    let exe = std::env::current_exe()?;
    let mut o = Options {
        server: exe.with_file_name("adjutant"),
        postgres: std::env::var("ADJUTANT_BENCH_POSTGRES_URL").ok().filter(|u| !u.is_empty()),
        seconds: 10,
        runs: match std::env::var("ADJUTANT_BENCH_RUNS") {
            Ok(n) if !n.is_empty() => n.parse().map_err(|e| format!("ADJUTANT_BENCH_RUNS={n:?}: {e}"))?,
            _ => 2,
        },
        out: PathBuf::from("docs/BENCHMARKS.md"),
        command: "./scripts/bench.sh".to_owned(),
    };
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value\n\n{USAGE}"));
        match arg.as_str() {
            "--server" => o.server = value()?.into(),
            "--postgres" => o.postgres = Some(value()?),
            "--seconds" => o.seconds = value()?.parse()?,
            "--runs" => o.runs = value()?.parse()?,
            "--out" => o.out = value()?.into(),
            "--command" => o.command = value()?,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}\n\n{USAGE}").into()),
        }
    }
    if o.runs == 0 {
        return Err(format!("--runs must be at least 1\n\n{USAGE}").into());
    }
    Ok(o)
}
