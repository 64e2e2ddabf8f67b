//! Child processes: the `adjutant` server the bench measures, the bare handler beside it, and
//! what the bench reads of them from /proc (peak memory, CPU time).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Result;

pub fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

pub struct Process {
    pub child: Child,
    pub base: String,
}

impl Process {
    pub async fn wait_ready(self, path: &str) -> Result<Self> {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(r) = client.get(format!("{}{path}", self.base)).send().await {
                if r.status().is_success() {
                    return Ok(self);
                }
            }
            if Instant::now() > deadline {
                return Err(format!("{} did not answer in 30 s", self.base).into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Peak resident memory, from /proc: VmHWM in KiB.
    pub fn peak_kib(&self) -> Option<u64> {
        self.status_kib("VmHWM:")
    }

    /// Resident memory now, from /proc: VmRSS in KiB.
    pub fn rss_kib(&self) -> Option<u64> {
        self.status_kib("VmRSS:")
    }

    fn status_kib(&self, field: &str) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with(field))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// The address the server listens on.
    pub fn address(&self) -> Result<std::net::SocketAddr> {
        Ok(self.base.trim_start_matches("http://").parse()?)
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The seed of the server's receipt-signing key during the bench.
pub const BENCH_SIGNING_SEED: [u8; 32] = [7; 32];

pub async fn start_server(binary: &Path, database_url: &str, admin: &str) -> Result<Process> {
    start_server_logging(binary, database_url, admin, None).await
}

/// The server, with its log (every step's span as it closes) written to `spans` when given.
pub async fn start_server_logging(
    binary: &Path,
    database_url: &str,
    admin: &str,
    spans: Option<&Path>,
) -> Result<Process> {
    start_server_with(binary, database_url, admin, spans, &[]).await
}

/// The server as [`start_server_logging`] starts it, with `settings` (`ADJUTANT_*` variables)
/// laid over the bench's own.
pub async fn start_server_with(
    binary: &Path,
    database_url: &str,
    admin: &str,
    spans: Option<&Path>,
    settings: &[(&str, String)],
) -> Result<Process> {
    let port = free_port()?;
    let mut command = Command::new(binary);
    match spans {
        Some(file) => {
            command
                .env("ADJUTANT_LOG", "warn,adjutant::post=debug,adjutant::request=debug")
                .env("ADJUTANT_LOG_SPANS", "close")
                .env("NO_COLOR", "1")
                .stdout(std::fs::File::create(file)?);
        }
        None => {
            command.env("ADJUTANT_LOG", "warn").stdout(Stdio::null());
        }
    }
    let child = command
        .env("ADJUTANT_LISTEN", format!("127.0.0.1:{port}"))
        .env("ADJUTANT_DATABASE_URL", database_url)
        .env("ADJUTANT_ADMIN_TOKEN", admin)
        // A key the bench knows, so the posts it seeds carry receipts the audit accepts.
        .env("ADJUTANT_SIGNING_KEY", hex::encode(BENCH_SIGNING_SEED))
        // The limiter stays on the hot path, with a limit no client reaches.
        .env("ADJUTANT_RATE_LIMIT_PER_MINUTE", "4000000000")
        .env("ADJUTANT_EXPENSIVE_READS_PER_MINUTE", "4000000000")
        // The bench fills campaigns with far more posts a day than any player makes.
        .env("ADJUTANT_NOTES_PER_PLAYER_PER_DAY", "0")
        .env("ADJUTANT_SEALS_PER_PLAYER_PER_DAY", "0")
        .env("ADJUTANT_POSTS_PER_PLAYER_PER_DAY", "0")
        .env("ADJUTANT_MAX_POSTS_PER_CAMPAIGN", "0")
        // Its clients all come from one address, more of them at once than one client may hold.
        .env("ADJUTANT_MAX_CONNECTIONS_PER_CLIENT", "0")
        .envs(settings.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e} (build it with cargo build --release -p adjutant-server)", binary.display()))?;
    Process { child, base: format!("http://127.0.0.1:{port}") }.wait_ready("/healthz").await
}

/// The CPU time a server process and this one (the load generator) have spent from a moment on.
pub struct CpuSince {
    pid: u32,
    server: f64,
    own: f64,
}

impl CpuSince {
    pub fn now(pid: u32) -> Self {
        Self { pid, server: cpu_seconds(pid), own: cpu_seconds(std::process::id()) }
    }

    /// Since then, per request of `requests`, in µs: (server, load generator).
    pub fn per_request(&self, requests: u64) -> (f64, f64) {
        let per = |cpu: f64| cpu * 1e6 / requests.max(1) as f64;
        (per(cpu_seconds(self.pid) - self.server), per(cpu_seconds(std::process::id()) - self.own))
    }
}

/// User and system CPU time a process has spent, in seconds (from /proc/<pid>/stat).
fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return f64::NAN };
    // The fields after the command's name (which ends with the last ')').
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(f64::NAN);
    // utime and stime: fields 14 and 15 of proc(5), the 12th and 13th after the name; 100 ticks a second.
    (ticks(11) + ticks(12)) / 100.0
}
