//! The report: docs/BENCHMARKS.md, every figure beside its ceiling.

use chrono::Utc;

use crate::cli::Options;
use crate::figures::backup::BackupFigure;
use crate::figures::calculator::{CALCULATOR, SLICES};
use crate::figures::followers::{Following, DRAIN_SECONDS, MEMORY_PER_STREAM, ROOM};
use crate::figures::scale::{SCALE_CAMPAIGNS, SCALE_POSTS};
use crate::load::{cpu_per_request, Run, CLIENTS};
use crate::run::{Backend, Measured};
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
pub fn thousands(n: u64) -> String {
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

/// A figure with `digits` decimals; whole numbers grouped by commas.
fn number(value: f64, digits: usize) -> String {
    if digits == 0 && (0.0..1e15).contains(&value) {
        thousands(value.round() as u64)
    } else {
        format!("{value:.digits$}")
    }
}

/// Figures of the runs as a range, `min–max`, or the single value when they agree as shown.
pub fn range(values: impl IntoIterator<Item = f64>, digits: usize) -> String {
    let values: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
    if values.is_empty() {
        return "—".to_owned();
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (low, high) = (number(min, digits), number(max, digits));
    if low == high {
        low
    } else {
        format!("{low}–{high}")
    }
}

/// "the run", "both runs" or "all N runs".
fn every_run(runs: usize) -> String {
    match runs {
        1 => "the run".to_owned(),
        2 => "both runs".to_owned(),
        n => format!("all {n} runs"),
    }
}

/// Which side of its bound a goal's figure must be on.
#[derive(Clone, Copy)]
pub enum Bound {
    AtLeast(f64),
    AtMost(f64),
}

/// A goal and its figure in each run (`None`: not measured in that run).
pub struct Goal {
    /// The figure of the report the goal belongs to.
    pub figure: u8,
    pub what: String,
    pub bound: Bound,
    pub unit: &'static str,
    pub digits: usize,
    pub values: Vec<Option<f64>>,
}

impl Goal {
    fn new(
        figure: u8,
        what: String,
        bound: Bound,
        unit: &'static str,
        digits: usize,
        values: Vec<Option<f64>>,
    ) -> Goal {
        Goal { figure, what, bound, unit, digits, values }
    }

    /// Whether a figure meets the goal; a figure that could not be computed does not.
    pub fn met(&self, value: f64) -> bool {
        match self.bound {
            Bound::AtLeast(bound) => value >= bound,
            Bound::AtMost(bound) => value <= bound,
        }
    }

    fn goal(&self) -> String {
        let (sign, bound) = match self.bound {
            // Nothing at all: "0", not "≤ 0".
            Bound::AtMost(0.0) => return "0".to_owned(),
            Bound::AtLeast(b) => ("≥", b),
            Bound::AtMost(b) => ("≤", b),
        };
        format!("{sign} {bound}{}", self.unit)
    }

    fn value(&self, value: Option<f64>) -> String {
        value.map_or("not measured".to_owned(), |v| format!("{}{}", number(v, self.digits), self.unit))
    }

    /// "met in both runs", or the runs that missed it with their figures.
    pub fn verdict(&self) -> String {
        let mut missed = Vec::new();
        for (i, value) in self.values.iter().enumerate() {
            match value {
                Some(v) if self.met(*v) => {}
                Some(_) => missed.push(format!("not met in run {} ({})", i + 1, self.value(*value))),
                None => missed.push(format!("not measured in run {}", i + 1)),
            }
        }
        if missed.is_empty() {
            format!("met in {}", every_run(self.values.len()))
        } else {
            missed.join(", ")
        }
    }

    /// "ratio 1.02–1.11, goal ≥ 1: met in both runs".
    pub fn summary(&self) -> String {
        let figures = range(self.values.iter().flatten().copied(), self.digits);
        format!("{} {figures}{}, goal {}: {}.", self.what, self.unit, self.goal(), self.verdict())
    }
}

/// Figure 1's and figure 4's runs of one backend, by name, in each run.
fn backend<'a>(runs: &'a [Measured], name: &str) -> Vec<Option<&'a Backend>> {
    runs.iter().map(|r| r.backends.iter().find(|b| b.name == name)).collect()
}

fn ratio(service: &Run, ceiling: &Run) -> f64 {
    service.per_second() / ceiling.per_second()
}

fn server_cpu(run: &Run) -> Option<f64> {
    run.cpu_us.map(|(server, _)| server)
}

/// The middle of `values`, sorted.
pub(crate) fn median(values: &[f64]) -> f64 {
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Every goal the figures are held to, in the order of the figures.
pub fn goals(runs: &[Measured]) -> Vec<Goal> {
    let mut goals = Vec::new();
    let names: Vec<&str> = runs.first().map_or(Vec::new(), |r| r.backends.iter().map(|b| b.name).collect());
    for name in names {
        let of = backend(runs, name);
        let each = |f: &dyn Fn(&Backend) -> Option<f64>| of.iter().map(|b| b.and_then(f)).collect::<Vec<_>>();
        goals.push(Goal::new(
            1,
            format!("{name}: posts/s ÷ its ceiling"),
            Bound::AtLeast(1.0),
            "",
            2,
            each(&|b| Some(ratio(&b.service, &b.ceiling))),
        ));
        if name == "PostgreSQL" {
            goals.push(Goal::new(
                1,
                format!("{name}: post p99"),
                Bound::AtMost(20.0),
                " ms",
                1,
                each(&|b| Some(b.service.percentile_ms(0.99))),
            ));
        }
        goals.push(Goal::new(
            1,
            format!(
                "{name}, {} campaigns × {} posts: posts/s ÷ its ceiling",
                thousands(SCALE_CAMPAIGNS as u64),
                thousands(SCALE_POSTS as u64)
            ),
            Bound::AtLeast(0.8),
            "",
            2,
            each(&|b| Some(ratio(&b.scale.service, &b.ceiling))),
        ));
        if name == "SQLite" {
            goals.push(Goal::new(
                1,
                format!("{name}: server CPU per post"),
                Bound::AtMost(110.0),
                " µs",
                0,
                each(&|b| server_cpu(&b.service)),
            ));
        }
    }
    let each = |f: &dyn Fn(&Measured) -> f64| runs.iter().map(|r| Some(f(r)).filter(|v| v.is_finite())).collect();
    goals.push(Goal::new(
        2,
        "History: p50 with 100,000 earlier posts ÷ with 100".into(),
        Bound::AtMost(1.2),
        "",
        2,
        each(&|r| r.history.large.percentile_ms(0.5) / r.history.small.percentile_ms(0.5)),
    ));
    goals.push(Goal::new(
        2,
        "Cold audit of 100,300 posts".into(),
        Bound::AtMost(1000.0),
        " ms",
        0,
        each(&|r| median(&r.history.audit_ms)),
    ));
    goals.push(Goal::new(
        2,
        "Repeat audit ÷ cold audit".into(),
        Bound::AtMost(0.01),
        "",
        4,
        each(&|r| median(&r.history.repeat_audit_ms) / median(&r.history.audit_ms)),
    ));
    goals.push(Goal::new(
        3,
        "Calculator: requests/s ÷ the bare handler's".into(),
        Bound::AtLeast(0.8),
        "",
        2,
        each(&|r| ratio(&r.calc, &r.bare)),
    ));
    let followers: Vec<&[Following]> = runs.iter().map(|r| r.followers.as_slice()).collect();
    goals.extend(follower_goals(&followers));
    goals
}

/// Figure 6's goals: for the runs spread over many campaigns (and on two servers) delivery p99
/// and the posting's rate beside the same posting without followers; for every run, no post
/// missed, repeated or left undelivered.
pub fn follower_goals(runs: &[&[Following]]) -> Vec<Goal> {
    let mut goals = Vec::new();
    let Some(first) = runs.first() else { return goals };
    for shape in first.iter() {
        let of: Vec<Option<&Following>> = runs.iter().map(|r| r.iter().find(|f| f.name == shape.name)).collect();
        let each = |f: &dyn Fn(&Following) -> Option<f64>| of.iter().map(|r| r.and_then(f)).collect::<Vec<_>>();
        let two_servers = shape.without.is_none();
        if shape.followers >= crate::figures::followers::SPREAD_FOLLOWERS || two_servers {
            let goal = if two_servers { 200.0 } else { 100.0 };
            goals.push(Goal::new(
                6,
                format!("{}: delivery p99", shape.name),
                Bound::AtMost(goal),
                " ms",
                1,
                each(&|f| Some(f.latency_ms.1).filter(|v| v.is_finite())),
            ));
            if !two_servers {
                goals.push(Goal::new(
                    6,
                    format!("{}: posts/s ÷ without followers", shape.name),
                    Bound::AtLeast(0.9),
                    "",
                    2,
                    each(&Following::ratio),
                ));
            }
        }
        goals.push(Goal::new(
            6,
            format!("{}: posts missed, repeated or not delivered", shape.name),
            Bound::AtMost(0.0),
            "",
            0,
            each(&|f| Some((f.missed + f.repeated + f.undelivered) as f64)),
        ));
    }
    goals
}

/// The goals at a glance: each goal's figure in each run, and whether every run met it.
fn goals_table(goals: &[Goal], runs: usize) -> String {
    let mut md = String::new();
    let heads: String = (1..=runs).map(|i| format!(" run {i} |")).collect();
    md.push_str(&format!("| figure | goal | goal's bound |{heads} met in every run? |\n"));
    md.push_str(&format!("| ---: | --- | ---: |{} --- |\n", " ---: |".repeat(runs)));
    for goal in goals {
        let cells: String = goal
            .values
            .iter()
            .map(|v| match v {
                Some(x) if goal.met(*x) => format!(" {} |", goal.value(*v)),
                _ => format!(" **{}** |", goal.value(*v)),
            })
            .collect();
        let met = goal.values.iter().all(|v| v.is_some_and(|x| goal.met(x)));
        let answer = if met { "yes".to_owned() } else { format!("**no**: {}", goal.verdict()) };
        md.push_str(&format!("| {} | {} | {} |{cells} {answer} |\n", goal.figure, goal.what, goal.goal()));
    }
    md
}

/// A figure's goals, each as a line of the list under it.
fn summaries(goals: &[Goal], figure: u8) -> Vec<String> {
    goals.iter().filter(|g| g.figure == figure).map(|g| format!("- {}", g.summary())).collect()
}

pub fn report(o: &Options, runs: &[Measured]) -> String {
    let (cores, memory, cpu) = machine();
    let goals = goals(runs);
    let n = runs.len();
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
    line(format!(
        "The report holds {n} complete runs, one after the other: each figure is given as the range over the \
         runs (lowest–highest; one value where they agree), each ratio beside its own run's ceiling, and a goal \
         counts as met only when it holds in every run."
    ));
    line(String::new());
    line(format!("- Command: `{}`", o.command));
    line(format!("- Date: {} (the last run's end)", Utc::now().format("%Y-%m-%d %H:%M UTC")));
    line(format!("- Machine: {cores} CPUs (`nproc`), {memory} memory, {cpu}"));
    line(format!(
        "- Runs: {n}; each throughput run: {} s, {CLIENTS} concurrent clients, unique Idempotency-Keys",
        o.seconds
    ));
    for (i, run) in runs.iter().enumerate() {
        let ceilings: Vec<String> = run
            .backends
            .iter()
            .map(|b| {
                format!(
                    "{} {} durable inserts/s (p99 {:.2} ms)",
                    b.name,
                    number(b.ceiling.per_second(), 0),
                    b.ceiling.percentile_ms(0.99)
                )
            })
            .collect();
        line(format!("- The machine's ceiling in run {}: {}", i + 1, ceilings.join("; ")));
    }
    line(String::new());
    line("## Goals".into());
    line(String::new());
    md.push_str(&goals_table(&goals, n));
    let mut line = |s: String| {
        md.push_str(&s);
        md.push('\n');
    };
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
    line(format!("| backend | run | service posts/s | ceiling inserts/s | ratio (goal ≥ 1) | service p50 / p99 ms (goal p99 ≤ 20) | ceiling p50 / p99 ms | largest batch (batches one by one) | CPU µs per post: server / load generator | cores busy (of {cores}): server and load generator | failed requests |"));
    line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |".into());
    let names: Vec<&str> = runs.first().map_or(Vec::new(), |r| r.backends.iter().map(|b| b.name).collect());
    for name in &names {
        let scale_name = format!(
            "{name}, {} campaigns × {} posts",
            thousands(SCALE_CAMPAIGNS as u64),
            thousands(SCALE_POSTS as u64)
        );
        for at_scale in [false, true] {
            for (i, b) in backend(runs, name).into_iter().enumerate() {
                let Some(b) = b else { continue };
                let (row, service, batches) = if at_scale {
                    (scale_name.as_str(), &b.scale.service, b.scale.batches)
                } else {
                    (*name, &b.service, b.batches)
                };
                let cpu =
                    service.cpu_us.map_or("—".to_owned(), |(server, client)| format!("{server:.0} / {client:.0}"));
                // CPU seconds a second: how much of the machine the run kept busy.
                let busy = service.cpu_us.map_or("—".to_owned(), |(server, client)| {
                    format!("{:.2}", (server + client) * service.per_second() / 1e6)
                });
                let batch = if batches.one_by_one == 0 {
                    batches.largest.to_string()
                } else {
                    format!("{} (**{}**)", batches.largest, batches.one_by_one)
                };
                line(format!(
                    "| {} | {} | {:.0} | {:.0} | **{:.2}** | {:.1} / {:.1} | {:.2} / {:.2} | {} | {} | {} | {} |",
                    row,
                    i + 1,
                    service.per_second(),
                    b.ceiling.per_second(),
                    ratio(service, &b.ceiling),
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
    }
    line(String::new());
    for summary in summaries(&goals, 1) {
        line(summary);
    }
    line(String::new());
    if let Some(last) = runs.last() {
        for b in &last.backends {
            line(format!("- {} settings: {}", b.name, b.settings));
        }
    }
    if names.len() == 1 {
        line("- PostgreSQL: not measured (no `--postgres` URL).".into());
    }
    line(
        "- Batches one by one: batches the server could not write together (a statement of the batch failed, a \
         deadlock or a serialization failure on a busy database, and it wrote each post in a savepoint instead); \
         none is expected, and a row with any measured that slower path (the server's log says why)."
            .into(),
    );
    line(String::new());
    line("The service commits the posts waiting for the writer in one transaction (group commit, at most".into());
    line("`max_batch` = 64 a commit; the largest batch of the run is shown) and answers each only after".into());
    line("the commit. A batch is written together: its keys checked in one statement, each campaign's tail".into());
    line("read once (on SQLite, where the server is the one writer, only for a campaign no batch of the last".into());
    line("2 s committed a post to: the tail that batch left is held), every post decided in memory on the".into());
    line("tail the one before it left, then each table's rows in one statement; the batch's receipts are".into());
    line("signed together, on both cores. On SQLite the commit's WAL frames reach the file in one write".into());
    line("for each 120 KiB, not in two a frame (the writer's VFS, `wal_writes.rs`). A post also".into());
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
    line("On SQLite the WAL is copied into the database file by a connection of its own, 250 ms after".into());
    line("posts were committed (a PASSIVE checkpoint, beside the writer: each page the batches of that".into());
    line("quarter second changed is copied once, and the file synced once; at 30 ms the same pages were".into());
    line("copied some thirty times a second), and 30 ms after once the WAL holds 49,152 pages, so that the".into());
    line("writer's own checkpoint, in its commit, which comes only when the WAL reaches 65,536 pages, finds".into());
    line("little left to copy; it lets the WAL start again from its beginning, which the other seldom can".into());
    line("while batches commit back to back. At 16,384 pages it came every 0.65 s with posts over 1,000".into());
    line("campaigns, each time holding up a batch (p99 75 ms). With one checkpoint a second, the WAL reached".into());
    line("that size first, and every half second one batch waited while its commit copied half a second of".into());
    line("pages; with one every 250 ms and none sooner near 65,536 pages, the post p99 over 1,000 campaigns".into());
    line("was 284 ms in one of two runs (57 ms in the other), the writer's checkpoint finding up to a".into());
    line("quarter second of pages to copy. Where slow".into());
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
    for name in &names {
        let of: Vec<&Backend> = backend(runs, name).into_iter().flatten().collect();
        let seeded = SCALE_CAMPAIGNS as u64 * SCALE_POSTS as u64;
        let mut audited: Vec<u64> = of.iter().flat_map(|b| b.scale.audited.iter().copied()).collect();
        audited.sort_unstable();
        audited.dedup();
        line(format!(
            "- {}: the campaigns created in {} s, {} posts seeded in {} s ({} posts/s); audited campaigns \
             held {} posts.",
            name,
            range(of.iter().map(|b| b.scale.create_seconds), 1),
            thousands(seeded),
            range(of.iter().map(|b| b.scale.seed_seconds), 1),
            range(of.iter().map(|b| (seeded as f64 / b.scale.seed_seconds).floor()), 0),
            audited.iter().map(|p| thousands(*p)).collect::<Vec<_>>().join(", "),
        ));
    }
    line(String::new());
    line("## 2. Cost as history grows (SQLite)".into());
    line(String::new());
    line("One client posting alternately to a campaign with 100 and one with 100,000 earlier posts (seeded".into());
    line(format!(
        "as `resolve` posts through the store the server uses, with their outcomes, chained and rolled as the server does); {} posts each.",
        range(runs.iter().map(|r| r.history.small.requests as f64), 0)
    ));
    line(String::new());
    line("| run | earlier posts | p50 ms | p99 ms |".into());
    line("| ---: | ---: | ---: | ---: |".into());
    for (i, r) in runs.iter().enumerate() {
        for (posts, run) in [("100", &r.history.small), ("100,000", &r.history.large)] {
            line(format!("| {} | {posts} | {:.2} | {:.2} |", i + 1, run.percentile_ms(0.5), run.percentile_ms(0.99)));
        }
    }
    line(String::new());
    line(format!(
        "Whole-campaign audit of the 100,300-post campaign (`GET /v1/campaigns/{{id}}/audit`: every link of \
         the chain, every post's dice rolled again from its stamp, every stored outcome compared), median of 3 \
         in each run. Repeat whole-campaign audit after one new post (the server goes on from the prefix it \
         verified, trusted within its life; `?fresh=true` replays all), median of 3 in each run: {} ms.",
        range(runs.iter().map(|r| median(&r.history.repeat_audit_ms)), 1)
    ));
    line(String::new());
    line(audit_parts_section(runs));
    line(String::new());
    for summary in summaries(&goals, 2) {
        line(summary);
    }
    line(String::new());
    line("## 3. Calculator".into());
    line(String::new());
    line(format!(
        "`GET {CALCULATOR}` beside a bare axum handler returning the same JSON bytes (its own process), \
         {CLIENTS} clients each, for the same seconds each, in {SLICES} slices of one length taken in turn, \
         Adjutant's (A) and the bare handler's (B) in the order A B B A A B B A, so that a machine whose speed \
         drifts within the figure's minute slows both alike. Both share the two cores with the load generator; the \
         CPU time each process spent per request is shown beside the figures. The difference is what \
         Adjutant does for a request and the bare handler does not: the rate limiter and the time limit, \
         the request's span and panic catcher, its route's metrics, and the look-up of the answer kept for \
         the query (an answer is a function of its query alone, and a query asked before is answered with \
         the bytes written for it then, from 1,024 kept). The goal's ratio is of that query, asked again \
         and again; the last rows, not a goal, ask a new time of day each request (each client walking the \
         day from a start of its own, for half the time), so the server parses the query, works the result \
         number out and writes its JSON each time."
    ));
    line(String::new());
    line("| | run | requests/s | p50 / p99 ms | CPU µs per request: answering process / load generator |".into());
    line("| --- | ---: | ---: | ---: | ---: |".into());
    type Pick = fn(&Measured) -> &Run;
    let picks: [(&str, Pick); 3] = [
        ("Adjutant", |r| &r.calc),
        ("bare handler", |r| &r.bare),
        ("Adjutant, a new time each request", |r| &r.calc_fresh),
    ];
    for (name, pick) in picks {
        for (i, r) in runs.iter().enumerate() {
            let run = pick(r);
            line(format!(
                "| {name} | {} | {:.0} | {:.2} / {:.2} | {} |",
                i + 1,
                run.per_second(),
                run.percentile_ms(0.5),
                run.percentile_ms(0.99),
                cpu_per_request(run)
            ));
        }
    }
    line(String::new());
    for summary in summaries(&goals, 3) {
        line(summary);
    }
    line(String::new());
    line("## 4. Peak memory".into());
    line(String::new());
    line(
        "VmHWM of the `adjutant` process (from `/proc/<pid>/status`) at the end of figure 1's runs (each scale run"
            .into(),
    );
    line("has a server of its own, from the campaigns' creation on).".into());
    line(String::new());
    let peak = |kib: &[Option<u64>]| -> String {
        let r = range(kib.iter().flatten().map(|k| *k as f64 / 1024.0), 1);
        if r == "—" {
            "unknown".to_owned()
        } else {
            format!("{r} MiB")
        }
    };
    for name in &names {
        let of: Vec<&Backend> = backend(runs, name).into_iter().flatten().collect();
        line(format!("- {name}: {}", peak(&of.iter().map(|b| b.peak_kib).collect::<Vec<_>>())));
        line(format!(
            "- {name}, {} campaigns × {} posts: {}",
            thousands(SCALE_CAMPAIGNS as u64),
            thousands(SCALE_POSTS as u64),
            peak(&of.iter().map(|b| b.scale.peak_kib).collect::<Vec<_>>())
        ));
    }
    line(String::new());
    line("## 5. Where a post's time goes (SQLite)".into());
    line(String::new());
    line(format!(
        "One client posts {} `resolve` posts one after another (the server's own steps, not waiting on other posts). \
         The server logs each step's span as it closes (`ADJUTANT_LOG_SPANS=close`, `adjutant::post=debug`); \
         each figure is the step's mean wall time per post, as the range over the runs. Indented steps are inside \
         the one above. The client saw a p50 of {} ms.",
        range(runs.iter().map(|r| r.profile.posts as f64), 0),
        range(runs.iter().map(|r| r.profile.client_p50_ms), 2)
    ));
    line(String::new());
    line("| step | ms per post | share of the request | what it is |".into());
    line("| --- | ---: | ---: | --- |".into());
    let requests: Vec<f64> =
        runs.iter().map(|r| r.profile.steps.iter().find(|s| s.0 == "request").map_or(f64::NAN, |s| s.2)).collect();
    if let Some(first) = runs.first() {
        for (name, what, _, _) in &first.profile.steps {
            let indent = match *name {
                "request" => "",
                "begin" | "lock_campaign" | "known_key" | "tail" | "quota" | "decide" | "sign" | "insert_post"
                | "insert_outcome" | "enqueue_deliveries" | "remember_key" | "commit" => "&nbsp;&nbsp;&nbsp;&nbsp;",
                "chain" | "rules" => "&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;",
                _ => "&nbsp;&nbsp;",
            };
            // The step in each run that logged it, with that run's whole request.
            let seen: Vec<(f64, f64)> = runs
                .iter()
                .zip(&requests)
                .filter_map(|(r, request)| {
                    r.profile.steps.iter().find(|s| s.0 == *name && s.3 > 0).map(|s| (s.2, *request))
                })
                .collect();
            let shown = range(seen.iter().map(|(ms, _)| *ms), 3);
            let share = range(seen.iter().map(|(ms, request)| 100.0 * ms / request), 0);
            let share = if share == "—" { share } else { format!("{share} %") };
            line(format!("| {indent}`{name}` | {shown} | {share} | {what} |"));
        }
    }
    line(String::new());
    line(
        "A lone post is a batch of one, so it pays `begin` and `commit` alone; under load (figure 1) the posts waiting \
         for the writer share one `begin` and one `commit`. Everything outside `append` (the token, the campaign, the \
         answer) runs beside other posts' writes."
            .into(),
    );
    let followers: Vec<&[Following]> = runs.iter().map(|r| r.followers.as_slice()).collect();
    if followers.iter().any(|f| !f.is_empty()) {
        md.push('\n');
        md.push_str(&followers_section(&followers));
    }
    let backups: Vec<&BackupFigure> = runs.iter().map(|r| &r.backup).collect();
    if !backups.is_empty() {
        md.push('\n');
        md.push_str(&backup_section(&backups));
    }
    md
}

/// Figure 2's breakdown of the cold audit ([`crate::figures::history::AuditParts`]).
fn audit_parts_section(runs: &[Measured]) -> String {
    let cores = runs.first().map_or(1, |r| r.history.audit_parts.pieces.cores);
    let share = |r: &Measured| 100.0 * r.history.audit_parts.pieces.receipts_one_core_ms / r.history.audit_parts.cpu_ms;
    let mut rows = vec![
        "What the cold audit's time goes to: the server's CPU time in it, and its pieces, each timed with the \
         server's own functions in a process of the bench's started for them (which allocates with the system's \
         malloc, where the server uses mimalloc), on the server's database while the server is idle, median of \
         3 in each run. The audit overlaps them (it reads the next page of posts while it checks the page \
         before on every core), so they do not add up to its time; the rest of it includes the reads of the \
         stored outcomes, the rules' replay of every post and the comparison with every stored outcome. The \
         receipts are checked as the audit checks them: each page's posts split over the cores (at most 8), one \
         batch equation for each part; on one core, the same parts one after another."
            .to_owned(),
        String::new(),
        format!(
            "| run | cold audit ms | server CPU ms (cores busy, of {cores}) | the chain alone: posts read, links, \
             receipts on {cores} cores | posts read alone | receipts on {cores} cores | receipts on one core | \
             receipts' share of the audit's CPU |"
        ),
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |".to_owned(),
    ];
    for (i, r) in runs.iter().enumerate() {
        let (parts, pieces) = (&r.history.audit_parts, &r.history.audit_parts.pieces);
        rows.push(format!(
            "| {} | {} | {} ({}) | {} | {} | {} | {} | {} % |",
            i + 1,
            number(median(&r.history.audit_ms), 0),
            number(parts.cpu_ms, 0),
            or_dash(Some(parts.busy), 2),
            number(pieces.chain_ms, 0),
            number(pieces.read_ms, 0),
            number(pieces.receipts_ms, 0),
            number(pieces.receipts_one_core_ms, 0),
            or_dash(Some(share(r)), 0),
        ));
    }
    rows.push(String::new());
    let busy = range(runs.iter().map(|r| r.history.audit_parts.busy), 2);
    // The cores bound the audit where it keeps nine tenths of them busy in every run.
    let bound = if runs.iter().all(|r| r.history.audit_parts.busy >= 0.9 * cores as f64) {
        format!("What bounds the cold audit: the cores. It keeps {busy} of the {cores} busy")
    } else {
        format!("The cold audit keeps {busy} of the {cores} cores busy: it waits on more than the processor")
    };
    rows.push(format!(
        "- {bound}, for {} ms of CPU. Its receipts take {} ms of that ({} % of it); split over the cores as it \
         splits them, they take {} ms, which no cold audit of these posts on this machine takes less than. \
         Reading the posts alone, one page after another, takes {} ms.",
        range(runs.iter().map(|r| r.history.audit_parts.cpu_ms), 0),
        range(runs.iter().map(|r| r.history.audit_parts.pieces.receipts_one_core_ms), 0),
        range(runs.iter().map(share), 0),
        range(runs.iter().map(|r| r.history.audit_parts.pieces.receipts_ms), 0),
        range(runs.iter().map(|r| r.history.audit_parts.pieces.read_ms), 0),
    ));
    rows.join("\n")
}

/// Text for a figure that may be missing (`—`).
fn or_dash(value: Option<f64>, digits: usize) -> String {
    value.filter(|v| v.is_finite()).map_or("—".to_owned(), |v| format!("{v:.digits$}"))
}

/// Figure 6: followers, each of its runs (one server, two servers) in each complete run.
pub fn followers_section(runs: &[&[Following]]) -> String {
    let shapes: Vec<&Following> = runs.first().map_or(Vec::new(), |r| r.iter().collect());
    // Each of figure 6's runs in each complete run, with the complete run's number.
    let each: Vec<(usize, &Following)> = shapes
        .iter()
        .flat_map(|shape| {
            runs.iter()
                .enumerate()
                .filter_map(move |(i, r)| r.iter().find(|f| f.name == shape.name).map(|f| (i + 1, f)))
        })
        .collect();
    let mut md = String::new();
    let mut line = |s: String| {
        md.push_str(&s);
        md.push('\n');
    };
    line("## 6. Followers".into());
    line(String::new());
    line(format!(
        "Event streams (`GET /v1/campaigns/{{id}}/events`) held open while {CLIENTS} clients post as in figure 1: \
         to one campaign, or spread over the campaigns followed as in figure 1's scale rows (campaigns without \
         earlier posts). Each run has a server of its own; the same posting without followers is measured on it \
         just before the streams open. The followers are tasks of the load generator, each on a connection of \
         its own speaking HTTP/1.1 by hand (the chunked body undone, the `id:` and `event:` lines and the \
         post's `stamp` read); each starts after its campaign's last post and checks that every later post \
         comes once and in order (a stream the server ends is opened again with `Last-Event-ID`, as an \
         `EventSource` does). They come from loopback addresses of their own, {} streams each, so the server's \
         share of streams per address (`event_streams_per_client`, default 8) holds, and so does the bound on \
         what one stream may leave unsent (`event_stream_unsent_bytes`: a follower further behind is dropped \
         and comes back; counted below as reopened, with the streams that ended a page of 1,000 posts). The server is started with `ADJUTANT_MAX_CONNECTIONS` \
         and `ADJUTANT_MAX_EVENT_STREAMS` of the followers and {} more, and `ADJUTANT_EVENT_STREAMS_MEMORY` \
         of {} KiB for each of those, so that no follower is refused.",
        crate::follow::STREAMS_PER_ADDRESS,
        thousands(ROOM as u64),
        MEMORY_PER_STREAM / 1024
    ));
    line(String::new());
    line("| followers | run | posts/s without followers | posts/s with | ratio (goal ≥ 0.9) | post p50 / p99 ms without followers | post p50 / p99 ms with | server CPU µs per post: without / with | streams' store reads/s: without / with | server memory per open stream |".into());
    line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |".into());
    for (i, run) in &each {
        let without = run.without.as_ref();
        let latency = |r: &Run| format!("{:.1} / {:.1}", r.percentile_ms(0.5), r.percentile_ms(0.99));
        let cpu = |r: &Run| r.cpu_us.map_or("—".to_owned(), |(server, _)| format!("{server:.0}"));
        // On two servers: the posters' server's, then the followers'.
        let cpu_with = match run.follower_cpu_us {
            Some(follower) => format!("{} + {follower:.0}", cpu(&run.with)),
            None => cpu(&run.with),
        };
        line(format!(
            "| {} | {i} | {} | {:.0} | {} | {} | {} | {} / {} | {} / {} | {} |",
            run.name,
            without.map_or("—".to_owned(), |r| format!("{:.0}", r.per_second())),
            run.with.per_second(),
            run.ratio().map_or("—".to_owned(), |r| format!("**{r:.2}**")),
            without.map_or("—".to_owned(), latency),
            latency(&run.with),
            without.map_or("—".to_owned(), cpu),
            cpu_with,
            or_dash(run.reads_without, 0),
            or_dash(run.reads_with, 0),
            run.kib_per_stream().map_or("—".to_owned(), |k| format!("{k:.1} KiB")),
        ));
    }
    line(String::new());
    line("| followers | run | delivery p50 / p99 / max ms (goal p99 ≤ 100; two servers ≤ 200) | posts delivered, of those due | missed / repeated (goal 0) | not delivered at the end | every follower had the last post | streams opened in | streams reopened / refused / failed |".into());
    line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |".into());
    for (i, run) in &each {
        let (p50, p99, max) = run.latency_ms;
        line(format!(
            "| {} | {i} | {p50:.1} / **{p99:.1}** / {max:.1} | {} of {} | **{} / {}** | {} | {} | {:.1} s | {} / {} / {} |",
            run.name,
            thousands(run.delivered),
            thousands(run.expected),
            run.missed,
            run.repeated,
            thousands(run.undelivered),
            run.caught_up
                .map_or(format!("not within {DRAIN_SECONDS} s"), |s| format!("{s:.2} s after the last answer")),
            run.connect_seconds,
            run.reconnects,
            run.refused,
            run.failed,
        ));
    }
    line(String::new());
    line(
        "Delivery latency is from the post's `stamp` to the moment the follower's read that carried it returned. \
         The stamp is the server's clock when the writer decided the post, inside the batch's transaction and \
         before its commit, cut to the millisecond; the follower reads the same machine's clock. So the figure \
         is an overestimate of commit-to-receipt: it holds the rest of the batch's write, its commit, and up to \
         1 ms of the cut. On two servers the stamp is the posting server's. \"Not delivered at the end\": posts \
         a follower had not received when the wait after the posting ended. The streams' store reads are the \
         server's counter `adjutant_event_stream_reads_total` (`GET /metrics`, the operator's token), each a \
         read of the posts after the last one a stream sent, with their outcomes, a second of posting; memory \
         per stream is the server's VmRSS after the streams opened less before, over the streams. Server CPU \
         per post is the server's CPU time during the posting over the posts, the followers' work included \
         (on two servers: the posters' server's + the followers' server's)."
            .into(),
    );
    line(String::new());
    for goal in follower_goals(runs) {
        line(format!("- {}", goal.summary()));
    }
    md
}

/// Figure 7: backups and the move to PostgreSQL.
pub fn backup_section(runs: &[&BackupFigure]) -> String {
    let mut md = String::new();
    let mut line = |s: String| {
        md.push_str(&s);
        md.push('\n');
    };
    line("## 7. Backups and the move to PostgreSQL".into());
    line(String::new());
    line(format!(
        "The database of figures 1 and 2 of each run (SQLite: {} campaigns, {} posts, figure 2's 100,000-post campaign among them), with the \
         `adjutant` binary's own commands, each timed as a whole process: `adjutant backup DEST` while the server \
         runs (`VACUUM INTO` a file beside DEST, synced, renamed over it); `adjutant check-backup DEST --heads \
         HEADS` (every campaign of the backup replayed through the whole-campaign audit, every chain head \
         compared with the one `backup` printed); and, with a PostgreSQL URL, `adjutant copy --from \
         sqlite://DEST --to postgres://…` into a new, empty database on that server (every table in one \
         transaction, then the checks it prints: row counts, every campaign's audit and head, every token).",
        range(runs.iter().map(|b| b.campaigns as f64), 0),
        range(runs.iter().map(|b| b.posts as f64), 0)
    ));
    line(String::new());
    line("| command | run | s | |".into());
    line("| --- | ---: | ---: | --- |".into());
    for (i, b) in runs.iter().enumerate() {
        line(format!(
            "| `adjutant backup` | {} | {:.2} | {:.1} MiB written, {:.0} posts/s |",
            i + 1,
            b.backup_seconds,
            b.bytes as f64 / 1024.0 / 1024.0,
            b.posts as f64 / b.backup_seconds
        ));
    }
    for (i, b) in runs.iter().enumerate() {
        line(format!(
            "| `adjutant check-backup --heads` | {} | {:.2} | every audit passed, every head as printed at backup; {:.0} posts/s |",
            i + 1,
            b.check_seconds,
            b.posts as f64 / b.check_seconds
        ));
    }
    for (i, b) in runs.iter().enumerate() {
        match &b.copy {
            Some(c) => line(format!(
                "| `adjutant copy` to PostgreSQL | {} | {:.2} | {} posts: copied in {:.2} s, checked in {:.2} s; **{:.0} posts/s**, the checks included |",
                i + 1,
                c.seconds,
                thousands(c.posts),
                c.copying,
                c.checking,
                c.rate()
            )),
            None => line(format!(
                "| `adjutant copy` to PostgreSQL | {} | — | not measured (no `--postgres` URL, or no right to make a database) |",
                i + 1
            )),
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_one_value_where_the_runs_agree_as_shown() {
        assert_eq!(range([1.02, 1.11], 2), "1.02–1.11");
        assert_eq!(range([1.11, 1.02, 1.05], 2), "1.02–1.11");
        assert_eq!(range([0.501, 0.499], 2), "0.50");
        assert_eq!(range([f64::NAN, 3.0], 1), "3.0");
        assert_eq!(range([], 1), "—");
        assert_eq!(range([1_093_130.0, 1_411_310.4], 0), "1,093,130–1,411,310");
    }

    #[test]
    fn a_goal_is_met_only_when_every_run_meets_it() {
        let goal = |values| Goal::new(1, "ratio".into(), Bound::AtLeast(1.0), "", 2, values);
        let both = goal(vec![Some(1.02), Some(1.11)]);
        assert_eq!(both.summary(), "ratio 1.02–1.11, goal ≥ 1: met in both runs.");
        let second = goal(vec![Some(1.02), Some(0.93)]);
        assert_eq!(second.summary(), "ratio 0.93–1.02, goal ≥ 1: not met in run 2 (0.93).");
        let missing = goal(vec![Some(1.5), None]);
        assert_eq!(missing.verdict(), "not measured in run 2");
        let at_most =
            Goal::new(1, "p99".into(), Bound::AtMost(20.0), " ms", 1, vec![Some(20.0), Some(14.2), Some(3.0)]);
        assert_eq!(at_most.summary(), "p99 3.0–20.0 ms, goal ≤ 20 ms: met in all 3 runs.");
        let table = goals_table(&[second], 2);
        assert!(table.contains("| 1 | ratio | ≥ 1 | 1.02 | **0.93** | **no**: not met in run 2 (0.93) |"), "{table}");
    }

    /// A run of `per_second` requests a second for 10 s, every latency `ms`.
    fn run(per_second: u64, ms: u64, cpu_us: Option<(f64, f64)>) -> Run {
        Run { requests: per_second * 10, seconds: 10.0, latencies: vec![ms * 1000; 100], cpu_us, ..Run::default() }
    }

    /// A complete run on SQLite whose service posts `posts` a second beside a ceiling of `ceiling`.
    fn measured(posts: u64, ceiling: u64) -> Measured {
        let batches = crate::campaign::Batches { largest: 63, one_by_one: 0 };
        let scale = crate::figures::scale::Scale {
            service: run(posts * 9 / 10, 12, Some((100.0, 15.0))),
            batches,
            peak_kib: Some(40 * 1024),
            create_seconds: 6.0,
            seed_seconds: 100.0,
            audited: vec![1_000, 1_000, 1_000],
        };
        let following = Following {
            name: "SQLite, 10,000 followers over 1,000 campaigns".into(),
            followers: crate::figures::followers::SPREAD_FOLLOWERS,
            without: Some(run(posts, 10, Some((100.0, 15.0)))),
            with: run(posts * 95 / 100, 11, Some((120.0, 30.0))),
            follower_cpu_us: None,
            reads_without: Some(0.0),
            reads_with: Some(50.0),
            connect_seconds: 1.5,
            rss_before_kib: Some(30_000),
            rss_after_kib: Some(80_000),
            latency_ms: (20.0, 45.0, 60.0),
            expected: 1_000,
            delivered: 1_000,
            missed: 0,
            repeated: 0,
            undelivered: 0,
            reconnects: 0,
            refused: 0,
            failed: 0,
            caught_up: Some(0.1),
        };
        Measured {
            backends: vec![Backend {
                name: "SQLite",
                batches,
                settings: "journal_mode=wal, synchronous=FULL".into(),
                service: run(posts, 8, Some((100.0, 15.0))),
                ceiling: run(ceiling, 0, None),
                peak_kib: Some(30 * 1024),
                scale,
            }],
            history: crate::figures::history::History {
                small: run(100, 2, None),
                large: run(100, 2, None),
                audit_ms: vec![800.0, 850.0, 900.0],
                repeat_audit_ms: vec![1.0, 2.0, 3.0],
                audit_parts: crate::figures::history::AuditParts {
                    cpu_ms: 1600.0,
                    busy: 1.9,
                    pieces: crate::figures::history::AuditPieces {
                        cores: 2,
                        read_ms: 150.0,
                        chain_ms: 600.0,
                        receipts_ms: 500.0,
                        receipts_one_core_ms: 950.0,
                    },
                },
            },
            calc: run(9_000, 5, Some((50.0, 10.0))),
            bare: run(10_000, 5, Some((40.0, 10.0))),
            calc_fresh: run(8_000, 5, Some((55.0, 10.0))),
            profile: crate::figures::profile::Profile {
                posts: 500,
                client_p50_ms: 0.5,
                steps: vec![("request", "the whole request", 0.4, 500), ("commit", "the commit", 0.1, 500)],
            },
            followers: vec![following],
            backup: BackupFigure {
                campaigns: 3,
                posts: 100_300,
                bytes: 1 << 20,
                backup_seconds: 1.0,
                check_seconds: 5.0,
                copy: None,
            },
        }
    }

    #[test]
    fn the_cold_audit_is_said_bound_by_the_cores_only_where_it_keeps_them_busy() {
        let busy = audit_parts_section(&[measured(5_000, 5_000)]);
        assert!(busy.contains("- What bounds the cold audit: the cores. It keeps 1.90 of the 2 busy,"), "{busy}");
        let mut waiting = measured(5_000, 5_000);
        waiting.history.audit_parts.busy = 1.2;
        let section = audit_parts_section(&[measured(5_000, 5_000), waiting]);
        assert!(
            section
                .contains("- The cold audit keeps 1.20–1.90 of the 2 cores busy: it waits on more than the processor,"),
            "{section}"
        );
        assert!(!section.contains("What bounds"));
        assert!(section.contains("| 2 | 850 | 1,600 (1.20) |"));
    }

    #[test]
    fn the_report_of_two_runs_gives_ranges_and_each_run_s_own_ceiling() {
        let o = Options {
            server: "adjutant".into(),
            postgres: None,
            seconds: 10,
            runs: 2,
            out: "BENCHMARKS.md".into(),
            command: "./scripts/bench.sh".into(),
        };
        let md = report(&o, &[measured(5_500, 5_000), measured(4_500, 5_000)]);
        for expected in [
            "- The machine's ceiling in run 1: SQLite 5,000 durable inserts/s (p99 0.00 ms)",
            "- The machine's ceiling in run 2: SQLite 5,000 durable inserts/s",
            "| figure | goal | goal's bound | run 1 | run 2 | met in every run? |",
            "| 1 | SQLite: posts/s ÷ its ceiling | ≥ 1 | 1.10 | **0.90** | **no**: not met in run 2 (0.90) |",
            "| 3 | Calculator: requests/s ÷ the bare handler's | ≥ 0.8 | 0.90 | 0.90 | yes |",
            "| Adjutant, a new time each request | 2 | 8000 |",
            "| SQLite | 2 | 4500 | 5000 | **0.90** |",
            "- SQLite: posts/s ÷ its ceiling 0.90–1.10, goal ≥ 1: not met in run 2 (0.90).",
            "- Cold audit of 100,300 posts 850 ms, goal ≤ 1000 ms: met in both runs.",
            "- SQLite, 10,000 followers over 1,000 campaigns: delivery p99 45.0 ms, goal ≤ 100 ms: met in both runs.",
            "`commit` | 0.100 | 25 % | the commit |",
            "| 2 | 850 | 1,600 (1.90) | 600 | 150 | 500 | 950 | 59 % |",
            "- What bounds the cold audit: the cores. It keeps 1.90 of the 2 busy, for 1,600 ms of CPU. Its receipts \
             take 950 ms of that (59 % of it); split over the cores as it splits them, they take 500 ms, which no \
             cold audit of these posts on this machine takes less than. Reading the posts alone, one page after \
             another, takes 150 ms.",
            "| 6 | SQLite, 10,000 followers over 1,000 campaigns: posts missed, repeated or not delivered | 0 | 0 | 0 | yes |",
        ] {
            assert!(md.contains(expected), "{expected:?} is not in\n{md}");
        }
        // A figure's goals are listed under that figure, not another that shares a backend's name.
        let figure_1_on = md.split_once("## 1.").expect("figure 1").1;
        let (figure_1, rest) = figure_1_on.split_once("## 2.").expect("figure 2");
        assert!(!figure_1.contains("delivery p99"));
        assert!(rest.split_once("## 6.").expect("figure 6").1.contains("delivery p99"));
        assert!(md.contains("- PostgreSQL: not measured (no `--postgres` URL)."));
    }

    #[test]
    fn thousands_are_grouped_by_commas() {
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(999), "999");
    }
}
