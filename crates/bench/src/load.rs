//! The load generator: clients posting or reading for a bounded time, and what a run measured.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::{http, Result};

pub const CLIENTS: usize = 64;

#[derive(Debug, Default, Clone)]
pub struct Run {
    pub requests: u64,
    pub errors: u64,
    pub seconds: f64,
    /// Latencies of the successful requests, in microseconds, sorted.
    pub latencies: Vec<u64>,
    /// Each successful request's start (µs from the run's start) and latency (µs), in the
    /// order they started: where the slow ones fall in time.
    pub timeline: Vec<(u64, u64)>,
    /// CPU time per successful request, in microseconds: the server's process, and the load
    /// generator's (this process), when measured.
    pub cpu_us: Option<(f64, f64)>,
}

impl Run {
    pub fn per_second(&self) -> f64 {
        self.requests as f64 / self.seconds
    }

    pub fn percentile_ms(&self, p: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let i = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
        self.latencies[i] as f64 / 1000.0
    }
}

/// `clients` loops, each on a connection of its own to `base`, sending `request(host, client, i)`
/// one after another until `seconds` pass (see [`http`]: the load generator does no more than a
/// client must, as it shares the cores with the server).
pub async fn load<F>(base: &str, clients: usize, seconds: u64, request: F) -> Run
where
    F: Fn(&str, usize, u64) -> http::Request + Send + Sync + 'static,
{
    load_for(base, clients, Duration::from_secs(seconds), request).await
}

/// [`load`] for a `length` that need not be whole seconds.
pub async fn load_for<F>(base: &str, clients: usize, length: Duration, request: F) -> Run
where
    F: Fn(&str, usize, u64) -> http::Request + Send + Sync + 'static,
{
    let request = Arc::new(request);
    let errors = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let end = start + length;
    let mut tasks = Vec::new();
    for client in 0..clients {
        let (request, errors) = (request.clone(), errors.clone());
        let mut connection = http::Connection::new(base);
        tasks.push(tokio::spawn(async move {
            let mut timeline = Vec::new();
            let mut i = 0;
            while Instant::now() < end {
                let asked = request(connection.host(), client, i);
                let at = Instant::now();
                if connection.send(&asked).await.unwrap_or(false) {
                    timeline.push((at.duration_since(start).as_micros() as u64, at.elapsed().as_micros() as u64));
                } else {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
                i += 1;
            }
            timeline
        }));
    }
    let mut timeline = Vec::new();
    for task in tasks {
        timeline.extend(task.await.unwrap_or_default());
    }
    let seconds = start.elapsed().as_secs_f64();
    timeline.sort_unstable();
    let mut latencies: Vec<u64> = timeline.iter().map(|&(_, latency)| latency).collect();
    latencies.sort_unstable();
    let requests = latencies.len() as u64;
    Run { requests, errors: errors.load(Ordering::Relaxed), seconds, latencies, timeline, cpu_us: None }
}

/// A run's CPU time per request, "server / load generator" in µs ("—" when not measured).
pub fn cpu_per_request(run: &Run) -> String {
    run.cpu_us.map_or("—".to_owned(), |(server, client)| format!("{server:.1} / {client:.1}"))
}

/// A throughput run's figures, on the terminal as soon as they are measured.
pub fn progress(run: &Run) {
    let cpu = run.cpu_us.map_or(String::new(), |(server, client)| {
        format!("; CPU per post: server {server:.0} µs, load generator {client:.0} µs")
    });
    eprintln!(
        "   {:.0}/s, p50 {:.2} ms, p99 {:.2} ms, {} failed{cpu}",
        run.per_second(),
        run.percentile_ms(0.5),
        run.percentile_ms(0.99),
        run.errors
    );
}

pub fn client() -> Result<reqwest::Client> {
    Ok(reqwest::Client::builder().pool_max_idle_per_host(CLIENTS * 2).timeout(Duration::from_secs(30)).build()?)
}
