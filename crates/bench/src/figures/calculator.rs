//! Figure 3: the calculator beside a bare handler.

use std::borrow::Cow;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::child::{free_port, start_server, CpuSince, Process};
use crate::load::{cpu_per_request, load_for, Run, CLIENTS};
use crate::{http, Result};

pub const CALCULATOR: &str = "/v1/tools/result-number?time=9:51:45";

/// The bare handler: the same JSON bytes, nothing else. Runs as a child process.
pub async fn bare_calculator(body_file: String) -> Result<()> {
    let body = std::fs::read(&body_file)?;
    let app = axum::Router::new().route(
        "/v1/tools/result-number",
        axum::routing::get(move || {
            let body = body.clone();
            async move { ([(axum::http::header::CONTENT_TYPE, "application/json")], body) }
        }),
    );
    let listener = tokio::net::TcpListener::bind(std::env::var("BARE_LISTEN")?).await?;
    axum::serve(listener, app).await?;
    Ok(())
}

/// `adjutant-bench calculator`: figure 3 alone, beside a server of its own on SQLite.
pub async fn calculator_alone() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let url = format!("sqlite://{}", temp.path().join("adjutant.db").display());
    let admin = format!("bench-{}", uuid::Uuid::new_v4());
    let binary = std::env::current_exe()?.with_file_name("adjutant");
    let server = start_server(&binary, &url, &admin).await?;
    println!("server pid {}", server.child.id());
    let seconds = std::env::var("ADJUTANT_BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let (calc, bare, fresh) = calculator(&server, seconds, temp.path()).await?;
    for (name, run) in [("Adjutant", &calc), ("bare handler", &bare), ("Adjutant, a new time each request", &fresh)] {
        println!(
            "{name}: {} requests, {:.0} requests/s, p50 {:.2} ms, p99 {:.2} ms, CPU µs per request {}, {} failed",
            run.requests,
            run.per_second(),
            run.percentile_ms(0.5),
            run.percentile_ms(0.99),
            cpu_per_request(run),
            run.errors
        );
    }
    drop(server);
    println!("ratio {:.2}", calc.per_second() / bare.per_second());
    Ok(())
}

/// The calculator under load from [`CLIENTS`] clients, each asking `path(client, i)` as its
/// `i`th request, with the CPU time per request of the process answering (`pid`) and of the load
/// generator.
async fn calculator_throughput<P>(base: &str, pid: u32, length: Duration, path: P) -> Result<Run>
where
    P: Fn(usize, u64) -> Cow<'static, str> + Send + Sync + 'static,
{
    let cpu = CpuSince::now(pid);
    let mut run = load_for(base, CLIENTS, length, move |host, client, i| {
        http::Request::new("GET", host, &path(client, i), &[], b"", 200)
    })
    .await;
    run.cpu_us = Some(cpu.per_request(run.requests));
    Ok(run)
}

/// [`CALCULATOR`], the one query the goal's rows ask again and again.
fn the_one_query(_client: usize, _i: u64) -> Cow<'static, str> {
    Cow::Borrowed(CALCULATOR)
}

/// A time of day not asked just before by anyone: each client walks the day from a start of
/// its own, so the server works each answer out rather than sending one it kept.
fn a_new_time(client: usize, i: u64) -> Cow<'static, str> {
    const DAY: u64 = 86_400;
    let second = (client as u64 * DAY / CLIENTS as u64 + i) % DAY;
    let (path, _) = CALCULATOR.split_once('?').unwrap_or((CALCULATOR, ""));
    Cow::Owned(format!("{path}?time={}:{:02}:{:02}", second / 3600, second / 60 % 60, second % 60))
}

/// Slices each side of the goal's ratio is measured in: half of them the calculator's, half the
/// bare handler's, in the order A B B A A B B A.
pub const SLICES: u32 = 8;

/// Whose slice the `i`th is, in the order A B B A …: true for the calculator's. Each pair of
/// slices around a turn goes to one side, so a machine whose speed drifts in the figure's
/// minute slows both sides alike, whichever way it drifts.
fn calculator_s_slice(i: u32) -> bool {
    i.div_ceil(2).is_multiple_of(2)
}

/// The runs of one side's slices, as one run: its requests over all its seconds, and its CPU
/// time per request weighted by each slice's requests.
fn merged(slices: Vec<Run>) -> Run {
    let mut run = Run::default();
    let (mut server, mut generator, mut weighed) = (0.0, 0.0, 0u64);
    for slice in slices {
        if let Some((s, g)) = slice.cpu_us {
            server += s * slice.requests as f64;
            generator += g * slice.requests as f64;
            weighed += slice.requests;
        }
        run.requests += slice.requests;
        run.errors += slice.errors;
        run.seconds += slice.seconds;
        run.latencies.extend(slice.latencies);
    }
    run.latencies.sort_unstable();
    run.cpu_us = (weighed > 0).then(|| (server / weighed as f64, generator / weighed as f64));
    run
}

/// The calculator and the bare handler for `seconds` each, in [`SLICES`] alternating slices,
/// then the calculator for half of `seconds` asked a new time each request ([`a_new_time`]).
pub async fn calculator(server: &Process, seconds: u64, dir: &Path) -> Result<(Run, Run, Run)> {
    let base = server.base.as_str();
    let body = reqwest::get(format!("{base}{CALCULATOR}")).await?.bytes().await?;
    let body_file = dir.join("result-number.json");
    std::fs::write(&body_file, &body)?;
    let port = free_port()?;
    let child = Command::new(std::env::current_exe()?)
        .arg("bare-calculator")
        .arg(&body_file)
        .env("BARE_LISTEN", format!("127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .spawn()?;
    let bare = Process { child, base: format!("http://127.0.0.1:{port}") }.wait_ready(CALCULATOR).await?;
    let bare_body = reqwest::get(format!("{}{CALCULATOR}", bare.base)).await?.bytes().await?;
    if bare_body != body {
        return Err("the bare handler does not answer the same JSON".into());
    }
    let slice = Duration::from_secs(seconds) * 2 / SLICES;
    let (server_pid, bare_pid) = (server.child.id(), bare.child.id());
    let (mut service, mut ceiling) = (Vec::new(), Vec::new());
    for i in 0..SLICES {
        if calculator_s_slice(i) {
            service.push(calculator_throughput(base, server_pid, slice, the_one_query).await?);
        } else {
            ceiling.push(calculator_throughput(&bare.base, bare_pid, slice, the_one_query).await?);
        }
    }
    let fresh = calculator_throughput(base, server_pid, Duration::from_secs(seconds) / 2, a_new_time).await?;
    Ok((merged(service), merged(ceiling), fresh))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_time_walks_the_day_from_each_client_s_start() {
        assert_eq!(a_new_time(0, 0), "/v1/tools/result-number?time=0:00:00");
        assert_eq!(a_new_time(0, 35_505), "/v1/tools/result-number?time=9:51:45");
        assert_eq!(a_new_time(0, 86_400), a_new_time(0, 0));
        assert_eq!(a_new_time(1, 0), "/v1/tools/result-number?time=0:22:30");
        assert_ne!(a_new_time(0, 1), a_new_time(0, 2));
        assert_eq!(the_one_query(3, 9), CALCULATOR);
    }

    #[test]
    fn the_slices_go_a_b_b_a_half_to_each_side() {
        let order: String = (0..SLICES).map(|i| if calculator_s_slice(i) { 'A' } else { 'B' }).collect();
        assert_eq!(order, "ABBAABBA");
    }

    #[test]
    fn a_side_s_slices_merge_into_one_run_weighted_by_their_requests() {
        let slice = |requests: u64, seconds: f64, cpu: Option<(f64, f64)>, latencies: Vec<u64>| Run {
            requests,
            errors: 1,
            seconds,
            latencies,
            timeline: Vec::new(),
            cpu_us: cpu,
        };
        let run = merged(vec![
            slice(300, 2.5, Some((20.0, 10.0)), vec![5, 9]),
            slice(100, 2.5, Some((40.0, 30.0)), vec![1, 7]),
        ]);
        assert_eq!((run.requests, run.errors), (400, 2));
        assert_eq!(run.seconds, 5.0);
        assert_eq!(run.per_second(), 80.0);
        assert_eq!(run.latencies, vec![1, 5, 7, 9]);
        assert_eq!(run.cpu_us, Some((25.0, 15.0)));
        // A slice whose CPU time was not measured counts in the requests, not in the weights.
        let partial = merged(vec![slice(300, 2.5, Some((20.0, 10.0)), vec![]), slice(100, 2.5, None, vec![])]);
        assert_eq!((partial.requests, partial.cpu_us), (400, Some((20.0, 10.0))));
        assert_eq!(merged(Vec::new()).cpu_us, None);
    }
}
