//! The report: docs/BENCHMARKS.md, every figure beside its ceiling.

use chrono::Utc;

use crate::cli::Options;
use crate::figures::calculator::CALCULATOR;
use crate::figures::history::History;
use crate::figures::profile::Profile;
use crate::figures::scale::{SCALE_CAMPAIGNS, SCALE_POSTS};
use crate::load::{cpu_per_request, Run, CLIENTS};
use crate::run::Backend;
use crate::seed::SEED_BATCH;

fn machine() -> (usize, String, String) {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let kib: u64 = m.lines().find(|l| l.starts_with("MemTotal:"))?.split_whitespace().nth(1)?.parse().ok()?;
            Some(format!("{:.1} GiB", kib as f64 / 1024.0 / 1024.0))
        })
        .unwrap_or_else(|| "unknown".into());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| Some(c.lines().find(|l| l.starts_with("model name"))?.split_once(':')?.1.trim().to_owned()))
        .unwrap_or_else(|| "unknown".into());
    (cores, memory, cpu)
}

/// `1000000` as `1,000,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut text = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}

pub fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(|| "unknown".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
}

pub fn report(
    o: &Options,
    backends: &[Backend],
    history: &History,
    calc: &Run,
    bare: &Run,
    profile: &Profile,
) -> String {
    let (cores, memory, cpu) = machine();
    let mut md = String::new();
    let mut line = |s: String| {
        md.push_str(&s);
        md.push('\n');
    };
    line("# Adjutant benchmarks".into());
    line(String::new());
    line(
        "Written by `adjutant-bench`; every figure is measured beside its ceiling in the same run, on the same".into(),
    );
    line(
        "machine, and given as a ratio to it. Loopback only; the load generator shares the machine with the server."
            .into(),
    );
    line(String::new());
    line(format!("- Command: `{}`", o.command));
    line(format!("- Date: {}", Utc::now().format("%Y-%m-%d %H:%M UTC")));
    line(format!("- Machine: {cores} CPUs (`nproc`), {memory} memory, {cpu}"));
    line(format!("- Each throughput run: {} s, {CLIENTS} concurrent clients, unique Idempotency-Keys", o.seconds));
    line(String::new());
    line("## 1. Posts per second and latency".into());
    line(String::new());
    line(
        "`POST /v1/campaigns/{id}/posts` (a `resolve` post: a formation fail test, one die and one table), beside the ceiling: a minimal loop".into(),
    );
    line("doing one durable single-row insert per transaction into the same database with the same settings".into());
    line("(SQLite: WAL, `synchronous=FULL`).".into());
    line(String::new());
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    line(format!("| backend | service posts/s | ceiling inserts/s | ratio (goal ≥ 1) | service p50 / p99 ms (goal p99 ≤ 20) | ceiling p50 / p99 ms | largest batch | CPU µs per post: server / load generator | cores busy (of {cores}): server and load generator | failed requests |"));
    line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |".into());
    for b in backends {
        let scale = format!(
            "{}, {} campaigns × {} posts",
            b.name,
            thousands(SCALE_CAMPAIGNS as u64),
            thousands(SCALE_POSTS as u64)
        );
        for (name, service, batch) in
            [(b.name.to_owned(), &b.service, b.largest_batch), (scale, &b.scale.service, b.scale.largest_batch)]
        {
            let cpu = service.cpu_us.map_or("—".to_owned(), |(server, client)| format!("{server:.0} / {client:.0}"));
            // CPU seconds a second: how much of the machine the run kept busy.
            let busy = service.cpu_us.map_or("—".to_owned(), |(server, client)| {
                format!("{:.2}", (server + client) * service.per_second() / 1e6)
            });
            line(format!(
                "| {} | {:.0} | {:.0} | **{:.2}** | {:.1} / {:.1} | {:.2} / {:.2} | {} | {} | {} | {} |",
                name,
                service.per_second(),
                b.ceiling.per_second(),
                service.per_second() / b.ceiling.per_second(),
                service.percentile_ms(0.5),
                service.percentile_ms(0.99),
                b.ceiling.percentile_ms(0.5),
                b.ceiling.percentile_ms(0.99),
                batch,
                cpu,
                busy,
                service.errors,
            ));
        }
    }
    line(String::new());
    for b in backends {
        line(format!("- {} settings: {}", b.name, b.settings));
    }
    if backends.len() == 1 {
        line("- PostgreSQL: not measured in this run (no `--postgres` URL).".into());
    }
    line(String::new());
    line("The service commits the posts waiting for the writer in one transaction (group commit, at most".into());
    line("`max_batch` = 64 a commit; the largest batch of the run is shown) and answers each only after".into());
    line("the commit. A batch is written together: its keys checked in one statement, each campaign's tail".into());
    line("read once, every post decided in memory on the tail the one before it left, then each table's".into());
    line("rows in one statement; the batch's receipts are signed together, on both cores. A post also".into());
    line("costs a token lookup, a SHA-256, an Ed25519 signature and the HTTP and JSON work, on the same".into());
    line("two cores as the load generator; the ceiling does one insert and nothing else (figure 5 has the".into());
    line("breakdown). The load generator is a minimal HTTP/1.1 client (one keep-alive connection per".into());
    line("client, each request written as ready-made bytes, each answer read whole by its Content-Length".into());
    line("and its status checked); the CPU time each process spent per post is shown beside the figures.".into());
    line("\"Cores busy\" is that CPU time times posts per second: where it stays below the machine's cores,".into());
    line("posts wait on the writer, which writes and commits one transaction at a time, and not on the".into());
    line("processor (on PostgreSQL the database's own processes are not counted). With 64 clients each".into());
    line("waiting for its answer, a post's mean time is 64 ÷ posts per second (Little's law); a post that".into());
    line("arrives while a batch is being written waits for that batch and then its own.".into());
    line(String::new());
    line("On SQLite the WAL is copied into the database file by a connection of its own, 30 ms after".into());
    line("posts were committed (a PASSIVE checkpoint, beside the writer); the writer's own checkpoint, in".into());
    line("its commit, comes only when the WAL reaches 16,384 pages, and finds little left to copy. With one".into());
    line("checkpoint a second, the WAL reached that size first, and every half second one batch waited".into());
    line("while its commit copied half a second of pages: p99 19.8 ms against a p90 of 6 ms. Where slow".into());
    line("requests fall in time: `ADJUTANT_BENCH_TIMELINE=FILE adjutant-bench throughput [URL]` (or `scale`)".into());
    line("writes each request's start and latency.".into());
    line(String::new());
    line(format!(
        "The rows \"{} campaigns × {} posts\": a fresh server on a fresh database (PostgreSQL: the same database, \
         with figure 1's campaign in it), {} resolver campaigns created through its API (one moderator, a player on \
         each side), then {} earlier `resolve` posts seeded into each through the store the server uses, on its \
         database (`adjutant-store`'s appends, {} posts a commit), with their outcomes and idempotency records, \
         chained, signed with the server's receipt key and rolled as the server does; then {CLIENTS} clients post \
         for {} s, each post to a campaign picked \
         uniformly at random of the {} (SplitMix64 of the client and its request number), by one of its players. \
         After the run a fresh whole-campaign audit of the first, a middle and the last campaign passes (the server \
         takes the seeded posts as its own).",
        thousands(SCALE_CAMPAIGNS as u64),
        thousands(SCALE_POSTS as u64),
        thousands(SCALE_CAMPAIGNS as u64),
        thousands(SCALE_POSTS as u64),
        thousands(SEED_BATCH as u64),
        o.seconds,
        thousands(SCALE_CAMPAIGNS as u64),
    ));
    line(String::new());
    for b in backends {
        line(format!(
            "- {}: the campaigns created in {:.1} s, {} posts seeded in {:.1} s ({} posts/s); audited campaigns \
             held {} posts.",
            b.name,
            b.scale.create_seconds,
            thousands(SCALE_CAMPAIGNS as u64 * SCALE_POSTS as u64),
            b.scale.seed_seconds,
            thousands(((SCALE_CAMPAIGNS as u64 * SCALE_POSTS as u64) as f64 / b.scale.seed_seconds) as u64),
            b.scale.audited.iter().map(|p| thousands(*p)).collect::<Vec<_>>().join(", "),
        ));
    }
    line(String::new());
    line("## 2. Cost as history grows (SQLite)".into());
    line(String::new());
    line("One client posting alternately to a campaign with 100 and one with 100,000 earlier posts (seeded".into());
    line(format!(
        "as `resolve` posts through the store the server uses, with their outcomes, chained and rolled as the server does); {} posts each.",
        history.small.requests
    ));
    line(String::new());
    line("| earlier posts | p50 ms | p99 ms |".into());
    line("| ---: | ---: | ---: |".into());
    line(format!("| 100 | {:.2} | {:.2} |", history.small.percentile_ms(0.5), history.small.percentile_ms(0.99)));
    line(format!("| 100,000 | {:.2} | {:.2} |", history.large.percentile_ms(0.5), history.large.percentile_ms(0.99)));
    line(String::new());
    line(format!(
        "Ratio of p50 latencies, 100,000 / 100: **{:.2}** (goal ≤ 1.2).",
        history.large.percentile_ms(0.5) / history.small.percentile_ms(0.5)
    ));
    line(String::new());
    line(format!(
        "Whole-campaign audit of the 100,300-post campaign (`GET /v1/campaigns/{{id}}/audit`: every link of \
         the chain, every post's dice rolled again from its stamp, every stored outcome compared): {:.0} ms (median of 3).",
        history.audit_ms[history.audit_ms.len() / 2]
    ));
    line(String::new());
    let cold = history.audit_ms[history.audit_ms.len() / 2];
    let repeat = history.repeat_audit_ms[history.repeat_audit_ms.len() / 2];
    line(format!(
        "Repeat whole-campaign audit after one new post (the server goes on from the prefix it verified, \
         trusted within its life; `?fresh=true` replays all): {repeat:.1} ms (median of 3), \
         **{:.4}** of the cold audit (goal ≤ 0.01).",
        repeat / cold
    ));
    line(String::new());
    line("## 3. Calculator".into());
    line(String::new());
    line(format!(
        "`GET {CALCULATOR}` beside a bare axum handler returning the same JSON bytes (its own process), \
         {CLIENTS} clients each, in alternating halves. Both share the two cores with the load generator; the \
         CPU time each process spent per request is shown beside the figures. The difference is what \
         Adjutant does for a request and the bare handler does not: the rate limiter and the time limit, \
         the trace and panic layers, the query's parsing, the result number's arithmetic and the JSON."
    ));
    line(String::new());
    line("| | requests/s | p50 / p99 ms | CPU µs per request: answering process / load generator |".into());
    line("| --- | ---: | ---: | ---: |".into());
    for (name, run) in [("Adjutant", calc), ("bare handler", bare)] {
        line(format!(
            "| {name} | {:.0} | {:.2} / {:.2} | {} |",
            run.per_second(),
            run.percentile_ms(0.5),
            run.percentile_ms(0.99),
            cpu_per_request(run)
        ));
    }
    line(String::new());
    line(format!("Ratio: **{:.2}** (goal ≥ 0.8).", calc.per_second() / bare.per_second()));
    line(String::new());
    line("## 4. Peak memory".into());
    line(String::new());
    line(
        "VmHWM of the `adjutant` process (from `/proc/<pid>/status`) at the end of figure 1's runs (each scale run"
            .into(),
    );
    line("has a server of its own, from the campaigns' creation on).".into());
    line(String::new());
    for b in backends {
        line(format!("- {}: {}", b.name, mib(b.peak_kib)));
        line(format!(
            "- {}, {} campaigns × {} posts: {}",
            b.name,
            thousands(SCALE_CAMPAIGNS as u64),
            thousands(SCALE_POSTS as u64),
            mib(b.scale.peak_kib)
        ));
    }
    line(String::new());
    line("## 5. Where a post's time goes (SQLite)".into());
    line(String::new());
    line(format!(
        "One client posts {} `resolve` posts one after another (the server's own steps, not waiting on other posts). \
         The server logs each step's span as it closes (`ADJUTANT_LOG_SPANS=close`, `adjutant::post=debug`); \
         each figure is the step's mean wall time per post. Indented steps are inside the one above. \
         The client saw a p50 of {:.2} ms.",
        profile.posts, profile.client_p50_ms
    ));
    line(String::new());
    line("| step | ms per post | share of the request | what it is |".into());
    line("| --- | ---: | ---: | --- |".into());
    let request = profile.steps.iter().find(|s| s.0 == "request").map_or(f64::NAN, |s| s.2);
    for (name, what, ms, count) in &profile.steps {
        let indent = match *name {
            "request" => "",
            "begin" | "lock_campaign" | "known_key" | "tail" | "decide" | "sign" | "insert_post" | "insert_outcome"
            | "enqueue_deliveries" | "remember_key" | "commit" => "&nbsp;&nbsp;&nbsp;&nbsp;",
            "chain" | "rules" => "&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;",
            _ => "&nbsp;&nbsp;",
        };
        let shown = if *count == 0 { "—".to_owned() } else { format!("{ms:.3}") };
        let share = if *count == 0 { "—".to_owned() } else { format!("{:.0} %", 100.0 * ms / request) };
        line(format!("| {indent}`{name}` | {shown} | {share} | {what} |"));
    }
    line(String::new());
    line(
        "A lone post is a batch of one, so it pays `begin` and `commit` alone; under load (figure 1) the posts waiting \
         for the writer share one `begin` and one `commit`. Everything outside `append` (the token, the campaign, the \
         answer) runs beside other posts' writes."
            .into(),
    );
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped_by_commas() {
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(999), "999");
    }
}
