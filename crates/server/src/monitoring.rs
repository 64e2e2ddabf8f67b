//! What an operator watches: the service's counters, gauges and histograms, kept by the
//! `metrics` crate's Prometheus recorder (the time of every request by route apart, in
//! [`request_times`]) and rendered in Prometheus's text format at `GET /metrics`
//! (`routes::metrics`).
//!
//! Each server keeps a recorder of its own rather than the process's global one, so that two
//! servers in one process (a test's, or a replica beside a copy) never count each other's work.
//! Every label's values come from a fixed set (rules, route templates, results), never from what
//! a caller sends, so the number of series stays bounded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use metrics::{Counter, Gauge, Histogram, Key, KeyName, Label, Level, Metadata, Recorder, SharedString, Unit};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder};

use crate::AppState;

mod request_times;

const POSTS_ACCEPTED: &str = "adjutant_posts_accepted_total";
const POSTS_REPLAYED: &str = "adjutant_posts_replayed_total";
const POSTS_REFUSED: &str = "adjutant_posts_refused_total";
const APPEND_SECONDS: &str = "adjutant_append_seconds";
const BATCH_POSTS: &str = "adjutant_batch_posts";
const REQUEST_SECONDS: &str = "adjutant_http_request_seconds";
const REQUEST_SECONDS_HELP: &str = "Time to answer a request, by method and route template.";
const EVENT_STREAMS: &str = "adjutant_event_streams_open";
const EVENT_STREAM_READS: &str = "adjutant_event_stream_reads_total";
const WEBHOOK_DELIVERIES: &str = "adjutant_webhook_deliveries_total";
const MAILS: &str = "adjutant_mails_total";
const LIMITED: &str = "adjutant_limited_total";
const AUDITS: &str = "adjutant_audits_total";
const AUDIT_SECONDS: &str = "adjutant_audit_seconds";
const DATABASE_ERRORS: &str = "adjutant_database_errors_total";

/// Upper bounds of the latency buckets, in seconds: a post answered in a millisecond up to a
/// request cut off at the time limit.
const SECONDS: &[f64] = &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];
/// Upper bounds of the batch-size buckets: posts per commit, up to the most one carries.
const BATCHES: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];

static METADATA: Metadata<'static> = Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// The media type of the text format.
pub const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A server's metrics: cheap to clone, every clone counting into the same recorder.
#[derive(Clone)]
pub struct Metrics(Arc<Inner>);

struct Inner {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    posts_accepted: Counter,
    posts_replayed: Counter,
    append_seconds: Histogram,
    batch_posts: Histogram,
    event_streams: Gauge,
    event_stream_reads: Counter,
    database_errors: Counter,
    /// Each route's request times by method, rendered after the recorder's metrics.
    request_seconds: request_times::RequestTimes,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let builder = [APPEND_SECONDS, AUDIT_SECONDS]
            .into_iter()
            .map(|name| (name, SECONDS))
            .chain([(BATCH_POSTS, BATCHES)])
            .try_fold(PrometheusBuilder::new(), |builder, (name, buckets)| {
                builder.set_buckets_for_metric(Matcher::Full(name.to_owned()), buckets)
            })
            .expect("the buckets are not empty");
        let recorder = builder.build_recorder();
        let described: [(&str, Unit, &str); 13] = [
            (POSTS_ACCEPTED, Unit::Count, "Posts stored."),
            (POSTS_REPLAYED, Unit::Count, "Posts answered from an idempotency key seen before."),
            (POSTS_REFUSED, Unit::Count, "Posts refused, by the rule that refused them."),
            (APPEND_SECONDS, Unit::Seconds, "Time to append a post: read, decide, write and commit."),
            (BATCH_POSTS, Unit::Count, "Posts per commit of the writer (group commit)."),
            (EVENT_STREAMS, Unit::Count, "Event streams open now."),
            (
                EVENT_STREAM_READS,
                Unit::Count,
                "Reads of the store by event streams (each the posts after the last one sent, with their outcomes).",
            ),
            (WEBHOOK_DELIVERIES, Unit::Count, "Webhook delivery attempts, by result."),
            (MAILS, Unit::Count, "Mail attempts, by result."),
            (LIMITED, Unit::Count, "Requests refused with 429, by the limit or quota met (its rule)."),
            (AUDITS, Unit::Count, "Audits run, by kind (campaign or post) and result."),
            (AUDIT_SECONDS, Unit::Seconds, "Time to run an audit, by kind."),
            (
                DATABASE_ERRORS,
                Unit::Count,
                "Requests answered 500 or 503 because the database failed or was unreachable.",
            ),
        ];
        for (name, unit, help) in described {
            let (name, help) = (KeyName::from_const_str(name), SharedString::const_str(help));
            if unit == Unit::Seconds || name.as_str() == BATCH_POSTS {
                recorder.describe_histogram(name, Some(unit), help);
            } else if name.as_str() == EVENT_STREAMS {
                recorder.describe_gauge(name, Some(unit), help);
            } else {
                recorder.describe_counter(name, Some(unit), help);
            }
        }
        let handle = recorder.handle();
        let counter = |name: &'static str| recorder.register_counter(&Key::from_static_name(name), &METADATA);
        let inner = Inner {
            posts_accepted: counter(POSTS_ACCEPTED),
            posts_replayed: counter(POSTS_REPLAYED),
            database_errors: counter(DATABASE_ERRORS),
            event_stream_reads: counter(EVENT_STREAM_READS),
            append_seconds: recorder.register_histogram(&Key::from_static_name(APPEND_SECONDS), &METADATA),
            batch_posts: recorder.register_histogram(&Key::from_static_name(BATCH_POSTS), &METADATA),
            event_streams: recorder.register_gauge(&Key::from_static_name(EVENT_STREAMS), &METADATA),
            request_seconds: request_times::RequestTimes::new(REQUEST_SECONDS, REQUEST_SECONDS_HELP, SECONDS),
            handle,
            recorder,
        };
        let metrics = Self(Arc::new(inner));
        // Every result shown from the start, at 0, so that a rate over it is defined before the
        // first delivery.
        for result in ["delivered", "retry", "gone", "gave_up"] {
            metrics.counter(WEBHOOK_DELIVERIES, vec![Label::from_static_parts("result", result)]).increment(0);
        }
        for result in ["sent", "failed", "skipped"] {
            metrics.counter(MAILS, vec![Label::from_static_parts("result", result)]).increment(0);
        }
        metrics
    }

    /// Everything counted so far, in Prometheus's text format.
    pub fn render(&self) -> String {
        let mut text = self.0.handle.render();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        self.0.request_seconds.render(&mut text);
        text
    }

    /// Folds the histograms' recent samples into their buckets, so that they hold no more memory
    /// between scrapes than the buckets do.
    pub fn run_upkeep(&self) {
        self.0.handle.run_upkeep();
    }

    fn counter(&self, name: &'static str, labels: Vec<Label>) -> Counter {
        self.0.recorder.register_counter(&Key::from_parts(name, labels), &METADATA)
    }

    fn histogram(&self, name: &'static str, labels: Vec<Label>) -> Histogram {
        self.0.recorder.register_histogram(&Key::from_parts(name, labels), &METADATA)
    }

    /// A post the log answered: stored, replayed, or refused by a rule.
    pub fn post_answered(&self, answer: &crate::log::LogResult<adjutant_store::Appended>, took: Duration) {
        match answer {
            Ok(adjutant_store::Appended::New(..)) => self.0.posts_accepted.increment(1),
            Ok(adjutant_store::Appended::Replayed(..)) => self.0.posts_replayed.increment(1),
            Err(crate::log::LogError::Refused(refusal)) => {
                self.counter(POSTS_REFUSED, vec![Label::new("rule", refusal.rule.clone())]).increment(1);
            }
            Err(_) => {}
        }
        self.0.append_seconds.record(took.as_secs_f64());
    }

    /// What the store tells of each batch it writes.
    pub fn batch_observer(&self) -> adjutant_store::append::BatchObserver {
        let batches = self.0.batch_posts.clone();
        Arc::new(move |posts| batches.record(posts as f64))
    }

    /// An open event stream, counted until dropped.
    pub fn event_stream(&self) -> OpenStream {
        self.0.event_streams.increment(1.0);
        OpenStream(self.0.event_streams.clone())
    }

    /// An event stream read the store: what followers cost the database.
    pub fn event_stream_read(&self) {
        self.0.event_stream_reads.increment(1);
    }

    /// A webhook delivery attempt's result: `delivered`, `gone`, `retry` or `gave_up`.
    pub fn webhook_attempted(&self, result: &'static str) {
        self.counter(WEBHOOK_DELIVERIES, vec![Label::from_static_parts("result", result)]).increment(1);
    }

    /// A mail attempt's result: `sent`, `skipped` or `failed`.
    pub fn mail_attempted(&self, result: &'static str) {
        self.counter(MAILS, vec![Label::from_static_parts("result", result)]).increment(1);
    }

    /// An audit run: `kind` is `campaign` or `post`.
    pub fn audited(&self, kind: &'static str, passed: bool, took: Duration) {
        let result = if passed { "passed" } else { "failed" };
        let labels = vec![Label::from_static_parts("kind", kind), Label::from_static_parts("result", result)];
        self.counter(AUDITS, labels).increment(1);
        self.histogram(AUDIT_SECONDS, vec![Label::from_static_parts("kind", kind)]).record(took.as_secs_f64());
    }
}

/// An event stream's place in the gauge of open streams.
pub struct OpenStream(Gauge);

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.decrement(1.0);
    }
}

/// Marks an error answer as the database's failure, for the middleware to count.
#[derive(Debug, Clone, Copy)]
pub struct DatabaseFailed;

/// Marks a 429 answer with the rule of the limit it met, for the middleware to count.
#[derive(Debug, Clone)]
pub struct Limited(pub String);

/// Times every request by its method and route template (`/v1/campaigns/{id}`, never the path
/// asked: an address that matches no route is `unmatched`), and counts the refusals and database
/// failures that the answers are marked with.
pub async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let route = request.extensions().get::<MatchedPath>().cloned();
    let response = next.run(request).await;
    answered(&state.metrics, &method, route.as_ref(), started.elapsed(), &response);
    response
}

/// What [`track`] records of a request answered: for the router's own layer (`crate::app`),
/// which times every request this way.
pub fn answered(metrics: &Metrics, method: &Method, route: Option<&MatchedPath>, took: Duration, response: &Response) {
    // A method the service never routes is `other`: a client may send any word as a method.
    let method = match *method {
        Method::GET => 0,
        Method::HEAD => 1,
        Method::POST => 2,
        Method::PUT => 3,
        Method::DELETE => 4,
        Method::PATCH => 5,
        Method::OPTIONS => 6,
        _ => 7,
    };
    let route = route.map_or("unmatched", MatchedPath::as_str);
    metrics.0.request_seconds.record(route, method, took);
    if let Some(Limited(rule)) = response.extensions().get::<Limited>() {
        metrics.counter(LIMITED, vec![Label::new("rule", rule.clone())]).increment(1);
    }
    if response.extensions().get::<DatabaseFailed>().is_some() {
        metrics.0.database_errors.increment(1);
    }
}

/// The separate address that serves the metrics with no token (`metrics_listen`), bound now so
/// that an address that cannot be had stops the start; none when it is empty.
pub async fn listen_apart(config: &crate::config::Config) -> std::io::Result<Option<tokio::net::TcpListener>> {
    let address = config.metrics_listen.trim();
    if address.is_empty() {
        return Ok(None);
    }
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| std::io::Error::new(e.kind(), format!("metrics_listen {address}: {e}")))?;
    let bound = listener.local_addr()?;
    tracing::info!(address = %bound, "metrics, with no token, at http://{bound}/metrics");
    Ok(Some(listener))
}

/// Serves `GET /metrics` on the separate address, if there is one, until `stop` turns true.
pub async fn serve_apart(
    listener: Option<tokio::net::TcpListener>,
    state: AppState,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let Some(listener) = listener else { return };
    let stopped = async move {
        let _ = stop.wait_for(|stopped| *stopped).await;
    };
    if let Err(e) = axum::serve(listener, crate::routes::metrics::apart(state)).with_graceful_shutdown(stopped).await {
        tracing::error!(error = %e, "the metrics address stopped serving");
    }
}

/// Keeps the histograms' memory bounded until `stop` turns true.
pub async fn upkeep(metrics: Metrics, mut stop: tokio::sync::watch::Receiver<bool>) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(5)) => metrics.run_upkeep(),
            _ = stop.changed() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_render_as_counters_and_histograms_with_their_buckets() {
        let metrics = Metrics::new();
        metrics.0.posts_accepted.increment(3);
        metrics.batch_observer()(5);
        metrics.audited("campaign", true, Duration::from_millis(30));
        let text = metrics.render();
        assert!(text.contains("# TYPE adjutant_posts_accepted_total counter\n"), "{text}");
        assert!(text.contains("\nadjutant_posts_accepted_total 3\n"), "{text}");
        assert!(text.contains("# TYPE adjutant_batch_posts histogram\n"), "{text}");
        assert!(text.contains("adjutant_batch_posts_bucket{le=\"4\"} 0\n"), "{text}");
        assert!(text.contains("adjutant_batch_posts_bucket{le=\"8\"} 1\n"), "{text}");
        assert!(text.contains("adjutant_audits_total{kind=\"campaign\",result=\"passed\"} 1\n"), "{text}");
        assert!(text.contains("adjutant_audit_seconds_bucket{kind=\"campaign\",le=\"0.05\"} 1\n"), "{text}");
    }

    #[test]
    fn an_open_stream_is_counted_until_it_closes() {
        let metrics = Metrics::new();
        let first = metrics.event_stream();
        let second = metrics.event_stream();
        drop(first);
        assert!(metrics.render().contains("\nadjutant_event_streams_open 1\n"));
        drop(second);
        assert!(metrics.render().contains("\nadjutant_event_streams_open 0\n"));
    }

    #[test]
    fn two_servers_count_apart() {
        let (one, other) = (Metrics::new(), Metrics::new());
        one.webhook_attempted("delivered");
        assert!(one.render().contains("adjutant_webhook_deliveries_total{result=\"delivered\"} 1"));
        assert!(other.render().contains("adjutant_webhook_deliveries_total{result=\"delivered\"} 0"));
    }
}
