//! The command line of a full run.

use std::path::PathBuf;

use crate::Result;

const USAGE: &str = "usage: adjutant-bench [--server PATH] [--postgres URL] [--seconds N] [--out FILE] [--command TEXT]

Runs Adjutant's benchmarks and writes them (default docs/BENCHMARKS.md). --server is the
adjutant binary (default: beside this one); --postgres adds the PostgreSQL figures (the URL of a
database the bench may fill; also ADJUTANT_BENCH_POSTGRES_URL); --seconds bounds each
throughput run (default 10); --command is the command recorded in the file.";

pub struct Options {
    pub server: PathBuf,
    pub postgres: Option<String>,
    pub seconds: u64,
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
        out: PathBuf::from("docs/BENCHMARKS.md"),
        command: "./scripts/bench.sh".to_owned(),
    };
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value\n\n{USAGE}"));
        match arg.as_str() {
            "--server" => o.server = value()?.into(),
            "--postgres" => o.postgres = Some(value()?),
            "--seconds" => o.seconds = value()?.parse()?,
            "--out" => o.out = value()?.into(),
            "--command" => o.command = value()?,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}\n\n{USAGE}").into()),
        }
    }
    Ok(o)
}
