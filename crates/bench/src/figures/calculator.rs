//! Figure 3: the calculator beside a bare handler.

use std::borrow::Cow;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::child::{free_port, start_server, CpuSince, Process};
use crate::load::{cpu_per_request, load, Run, CLIENTS};
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
async fn calculator_throughput<P>(base: &str, pid: u32, seconds: u64, path: P) -> Result<Run>
where
    P: Fn(usize, u64) -> Cow<'static, str> + Send + Sync + 'static,
{
    let cpu = CpuSince::now(pid);
    let mut run = load(base, CLIENTS, seconds, move |host, client, i| {
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

/// The calculator and the bare handler in alternating halves of `seconds` each, then the
/// calculator for a half asked a new time each request ([`a_new_time`]).
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
    // Alternate halves so neither side gets the warmer machine.
    let half = seconds.div_ceil(2);
    let (server_pid, bare_pid) = (server.child.id(), bare.child.id());
    let mut service = calculator_throughput(base, server_pid, half, the_one_query).await?;
    let mut ceiling = calculator_throughput(&bare.base, bare_pid, half, the_one_query).await?;
    let service2 = calculator_throughput(base, server_pid, half, the_one_query).await?;
    let ceiling2 = calculator_throughput(&bare.base, bare_pid, half, the_one_query).await?;
    for (run, more) in [(&mut service, service2), (&mut ceiling, ceiling2)] {
        // CPU per request over both halves, weighted by their requests.
        let weighted = |a: f64, b: f64| {
            (a * run.requests as f64 + b * more.requests as f64) / (run.requests + more.requests).max(1) as f64
        };
        run.cpu_us = match (run.cpu_us, more.cpu_us) {
            (Some((s1, l1)), Some((s2, l2))) => Some((weighted(s1, s2), weighted(l1, l2))),
            _ => None,
        };
        run.requests += more.requests;
        run.errors += more.errors;
        run.seconds += more.seconds;
        run.latencies.extend(more.latencies);
        run.latencies.sort_unstable();
    }
    let fresh = calculator_throughput(base, server_pid, half, a_new_time).await?;
    Ok((service, ceiling, fresh))
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
}
