//! `adjutant_http_request_seconds`: the time to answer each request, by method and route.
//!
//! Kept apart from the `metrics` recorder because every request records into it: there a sample
//! is pushed onto a list the upkeep folds into the buckets later, and the route's histogram is
//! found under a lock shared by every thread and cloned. Here each worker thread counts into
//! counters of its own for each route and method, found in a table of its own: no lock, and no
//! count that another thread writes (two threads adding to one counter take turns at its cache
//! line). The threads' counts are summed when the metrics are rendered.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rustc_hash::FxHashMap;

/// The methods a request's time is counted under; any other is `other`.
pub const METHODS: [&str; 8] = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "other"];

/// Counts of one route and method.
struct Times {
    /// Requests in each bucket of [`RequestTimes::bounds`] alone (not yet cumulative), and past
    /// the last bound.
    buckets: Box<[AtomicU64]>,
    nanos: AtomicU64,
    count: AtomicU64,
}

impl Times {
    fn new(buckets: usize) -> Self {
        Self {
            buckets: (0..=buckets).map(|_| AtomicU64::new(0)).collect(),
            nanos: AtomicU64::new(0),
            count: AtomicU64::new(0),
        }
    }

    /// Adds a request, for the one thread that writes these counts: a read and a write of each,
    /// which the renderer may read between (it sees the request or not, never a torn count).
    /// The count is written last, releasing the rest: a renderer that reads it (acquiring) finds
    /// at least as many requests in the buckets.
    fn add_alone(&self, bucket: usize, nanos: u64) {
        let add =
            |counter: &AtomicU64, n: u64, order| counter.store(counter.load(Ordering::Relaxed).wrapping_add(n), order);
        add(&self.buckets[bucket], 1, Ordering::Relaxed);
        add(&self.nanos, nanos, Ordering::Relaxed);
        add(&self.count, 1, Ordering::Release);
    }

    /// Adds a request to counts that several threads write; the count last, as in
    /// [`Self::add_alone`].
    fn add_shared(&self, bucket: usize, nanos: u64) {
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.nanos.fetch_add(nanos, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Release);
    }
}

/// A route and method's counts: each thread's, and one for the threads that cannot keep their own.
struct Shares {
    shared: Times,
    threads: Vec<Arc<Times>>,
}

/// One server's request times.
pub struct RequestTimes {
    /// Distinguishes this server's entries in the threads' tables from another's in the same
    /// process (a test's servers), even one made where a dropped one was.
    id: u64,
    name: &'static str,
    help: &'static str,
    /// The buckets' upper bounds: as written, and in nanoseconds.
    bounds: Vec<(f64, u64)>,
    /// By route template (or `unmatched`), then method.
    routes: RwLock<HashMap<String, [Option<Shares>; METHODS.len()]>>,
}

/// A worker thread's own counts: by server, route and method.
type Own = FxHashMap<u64, FxHashMap<Box<str>, [Option<Arc<Times>>; METHODS.len()]>>;

thread_local! {
    static OWN: RefCell<Own> = RefCell::new(FxHashMap::default());
}

/// Past this many routes a thread's table starts again (its counts stay with their servers):
/// only a process running many servers one after another (the tests) gets there.
const MOST_OWN: usize = 4096;

impl RequestTimes {
    pub fn new(name: &'static str, help: &'static str, bounds: &[f64]) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Self {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            name,
            help,
            bounds: bounds.iter().map(|&b| (b, Duration::from_secs_f64(b).as_nanos() as u64)).collect(),
            routes: RwLock::default(),
        }
    }

    /// Counts one request to `route` by method `method` (an index into [`METHODS`]).
    pub fn record(&self, route: &str, method: usize, took: Duration) {
        let method = method.min(METHODS.len() - 1);
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        let bucket = self.bounds.partition_point(|&(_, bound)| bound < nanos);
        let counted = OWN.try_with(|own| {
            let mut own = own.borrow_mut();
            if let Some(times) = own.get(&self.id).and_then(|routes| routes.get(route)).and_then(|m| m[method].as_ref())
            {
                times.add_alone(bucket, nanos);
                return;
            }
            if own.values().map(HashMap::len).sum::<usize>() >= MOST_OWN {
                own.clear();
            }
            let times = Arc::new(Times::new(self.bounds.len()));
            self.with_shares(route, method, |shares| shares.threads.push(times.clone()));
            times.add_alone(bucket, nanos);
            own.entry(self.id).or_default().entry(route.into()).or_default()[method] = Some(times);
        });
        if counted.is_err() {
            // A thread being torn down has no table of its own.
            self.with_shares(route, method, |shares| shares.shared.add_shared(bucket, nanos));
        }
    }

    /// Runs `f` on the counts of `route` and `method`, made at their first request.
    fn with_shares(&self, route: &str, method: usize, f: impl FnOnce(&mut Shares)) {
        let mut routes = self.routes.write().unwrap_or_else(|e| e.into_inner());
        let by_method = routes.entry(route.to_owned()).or_default();
        f(by_method[method]
            .get_or_insert_with(|| Shares { shared: Times::new(self.bounds.len()), threads: Vec::new() }));
    }

    /// The histogram in Prometheus's text format, its series in the order of their routes and
    /// methods; only the help and type lines before the first request.
    pub fn render(&self, out: &mut String) {
        let name = self.name;
        let _ = writeln!(out, "# HELP {name} {}", self.help);
        let _ = writeln!(out, "# TYPE {name} histogram");
        let routes = self.routes.read().unwrap_or_else(|e| e.into_inner());
        let mut sorted: Vec<_> = routes.iter().collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (route, by_method) in sorted {
            let route = escape(route);
            for (method, shares) in METHODS.iter().zip(by_method) {
                let Some(shares) = shares else { continue };
                let all: Vec<&Times> =
                    std::iter::once(&shares.shared).chain(shares.threads.iter().map(|t| &**t)).collect();
                let sum = |read: &dyn Fn(&Times) -> u64| all.iter().map(|t| read(t)).fold(0u64, u64::wrapping_add);
                // The count is read first: the buckets, read after, hold at least as many.
                let count = sum(&|t| t.count.load(Ordering::Acquire));
                let mut cumulative = 0u64;
                for (i, (bound, _)) in self.bounds.iter().enumerate() {
                    cumulative += sum(&|t| t.buckets[i].load(Ordering::Relaxed));
                    let _ = writeln!(
                        out,
                        "{name}_bucket{{method=\"{method}\",route=\"{route}\",le=\"{bound}\"}} {}",
                        cumulative.min(count)
                    );
                }
                let _ = writeln!(out, "{name}_bucket{{method=\"{method}\",route=\"{route}\",le=\"+Inf\"}} {count}");
                let seconds = sum(&|t| t.nanos.load(Ordering::Relaxed)) as f64 / 1e9;
                let _ = writeln!(out, "{name}_sum{{method=\"{method}\",route=\"{route}\"}} {seconds}");
                let _ = writeln!(out, "{name}_count{{method=\"{method}\",route=\"{route}\"}} {count}");
            }
        }
    }
}

/// A label value as the text format writes it: backslash, double quote and newline escaped.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_in_their_buckets_by_route_and_method() {
        let times = RequestTimes::new("t_seconds", "Time.", &[0.001, 0.01, 0.1]);
        times.record("/a", 0, Duration::from_micros(500));
        times.record("/a", 0, Duration::from_millis(1));
        times.record("/a", 0, Duration::from_millis(5));
        times.record("/a", 0, Duration::from_secs(2));
        times.record("/a", 2, Duration::from_millis(50));
        times.record("unmatched", 99, Duration::from_micros(1));
        let mut out = String::new();
        times.render(&mut out);
        let expected = [
            "# HELP t_seconds Time.",
            "# TYPE t_seconds histogram",
            r#"t_seconds_bucket{method="GET",route="/a",le="0.001"} 2"#,
            r#"t_seconds_bucket{method="GET",route="/a",le="0.01"} 3"#,
            r#"t_seconds_bucket{method="GET",route="/a",le="0.1"} 3"#,
            r#"t_seconds_bucket{method="GET",route="/a",le="+Inf"} 4"#,
            r#"t_seconds_sum{method="GET",route="/a"} 2.0065"#,
            r#"t_seconds_count{method="GET",route="/a"} 4"#,
            r#"t_seconds_bucket{method="POST",route="/a",le="0.001"} 0"#,
            r#"t_seconds_bucket{method="POST",route="/a",le="0.01"} 0"#,
            r#"t_seconds_bucket{method="POST",route="/a",le="0.1"} 1"#,
            r#"t_seconds_bucket{method="POST",route="/a",le="+Inf"} 1"#,
            r#"t_seconds_sum{method="POST",route="/a"} 0.05"#,
            r#"t_seconds_count{method="POST",route="/a"} 1"#,
            r#"t_seconds_bucket{method="other",route="unmatched",le="0.001"} 1"#,
        ];
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(&lines[..expected.len()], &expected, "{out}");
        assert_eq!(lines.last(), Some(&r#"t_seconds_count{method="other",route="unmatched"} 1"#));
    }

    /// Two servers in one process, on one thread: neither counts the other's requests, though
    /// the thread's cache has both.
    #[test]
    fn two_servers_on_one_thread_count_apart() {
        let first = RequestTimes::new("t_seconds", "Time.", &[1.0]);
        let second = RequestTimes::new("t_seconds", "Time.", &[1.0]);
        for _ in 0..3 {
            first.record("/a", 0, Duration::from_millis(1));
        }
        second.record("/a", 0, Duration::from_millis(1));
        let (mut a, mut b) = (String::new(), String::new());
        first.render(&mut a);
        second.render(&mut b);
        assert!(a.contains(r#"t_seconds_count{method="GET",route="/a"} 3"#), "{a}");
        assert!(b.contains(r#"t_seconds_count{method="GET",route="/a"} 1"#), "{b}");
    }

    /// Requests counted on several threads at once are all in the sums, none lost or doubled.
    #[test]
    fn every_threads_requests_are_summed() {
        let times = Arc::new(RequestTimes::new("t_seconds", "Time.", &[0.001]));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let times = times.clone();
                std::thread::spawn(move || {
                    for i in 0..10_000u64 {
                        times.record("/a", 0, Duration::from_micros(i % 2 * 5_000));
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("counted");
        }
        let mut out = String::new();
        times.render(&mut out);
        assert!(out.contains(r#"t_seconds_bucket{method="GET",route="/a",le="0.001"} 20000"#), "{out}");
        assert!(out.contains(r#"t_seconds_count{method="GET",route="/a"} 40000"#), "{out}");
        assert!(out.contains(r#"t_seconds_sum{method="GET",route="/a"} 100"#), "{out}");
    }

    #[test]
    fn a_label_value_is_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
