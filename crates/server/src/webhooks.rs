//! Delivering outcomes to webhooks, by the Standard Webhooks scheme
//! (<https://www.standardwebhooks.com/>).
//!
//! The outbox row of every outcome is written with the outcome, in the same transaction. The
//! deliverer, a background task of every server, claims due rows (one claimant per row, even
//! with several replicas: see `Store::claim_deliveries`), POSTs each row's payload, logs the
//! attempt and settles the row: delivered on 2xx, gone for good on 410 (the webhook is
//! disabled), otherwise tried again after an exponential back-off with full jitter. Everything
//! it knows is in the database, so a restart picks up where it left off.
//!
//! It does not wait for a timer to find new rows: each committed post wakes it
//! ([`crate::live::Live::deliveries`]; on PostgreSQL, posts other servers commit too), and when
//! the campaign has webhooks it claims at once. A timer remains for the retries it schedules
//! (each at its time) and, as a fallback, a look every `webhook_poll_ms` (rows left by a server
//! that stopped, retries another server scheduled).
//!
//! Each request carries:
//! The body is `{"type": "outcome.created", "timestamp": <post stamp>, "data": <the outcome as
//! the feed serves it: id, campaign_id, position, seq, kind, headline, data, text>}`.
//!
//! - `webhook-id`: the outcome's id, the same on every retry, so a receiver can drop repeats;
//! - `webhook-timestamp`: the attempt's time, Unix seconds;
//! - `webhook-signature`: `v1,` and the base64 of HMAC-SHA256 over `{id}.{timestamp}.{body}`,
//!   keyed with the base64-decoded part of the secret after `whsec_`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use adjutant_store::{ClaimedDelivery, DeliveryAttempt, DeliveryVerdict, Store, StoreError};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use chrono::{DateTime, TimeDelta, Utc};
use hmac::{Hmac, Mac};
use rand::{Rng, RngCore};
use sha2::Sha256;
use tokio::sync::watch;
use uuid::Uuid;

use crate::clock::ServerClock;
use crate::config::Config;
use crate::net_guard::{literal_allowed, Allowlist, GuardedResolver, NotAllowed};

/// The secret's prefix, as the Standard Webhooks libraries expect it.
pub const SECRET_PREFIX: &str = "whsec_";

/// A new signing secret: `whsec_` and the base64 of 32 random bytes.
pub fn new_secret() -> String {
    let mut key = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut key);
    format!("{SECRET_PREFIX}{}", BASE64.encode(key))
}

/// The `webhook-signature` value: `v1,` and base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}")).
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, String> {
    let key = BASE64
        .decode(secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret))
        .map_err(|e| format!("the webhook secret is not base64: {e}"))?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|e| e.to_string())?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Ok(format!("v1,{}", BASE64.encode(mac.finalize().into_bytes())))
}

/// The body sent: the stored payload (with the post's `hash` and `receipt` beside its `seq`) with
/// the outcome's forum text (`data.text`: `bbcode`, `markdown`, as in the feed) added. The text is rendered from the stored outcome, so every
/// attempt sends the same bytes.
pub fn body_of(payload: &str) -> String {
    let Ok(mut envelope) = serde_json::from_str::<serde_json::Value>(payload) else {
        return payload.to_owned();
    };
    let outcome = &envelope["data"];
    let id = outcome["id"].as_str().and_then(|id| uuid::Uuid::parse_str(id).ok());
    let (Some(id), Some(kind)) = (id, outcome["kind"].as_str()) else {
        return payload.to_owned();
    };
    // The post the outcome came from: its seq, chain hash and receipt, in the payload and in
    // the text's witness line.
    let witness = match (outcome["seq"].as_i64(), outcome["hash"].as_str()) {
        (Some(seq), Some(hash)) => Some(adjutant_forum::Witness {
            seq,
            hash: hash.to_owned(),
            key_id: outcome["receipt"]["key_id"].as_str().map(str::to_owned),
            signature: outcome["receipt"]["signature"].as_str().map(str::to_owned),
        }),
        _ => None,
    };
    let text = adjutant_render::forum_text(
        id,
        kind,
        outcome["headline"].as_str().unwrap_or_default(),
        &outcome["data"],
        witness.as_ref(),
    );
    match serde_json::to_value(text) {
        Ok(text) => envelope["data"]["text"] = text,
        Err(_) => return payload.to_owned(),
    }
    serde_json::to_string(&envelope).unwrap_or_else(|_| payload.to_owned())
}

/// How the deliverer paces itself.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How often to look for due rows when nothing woke it (a fallback when it is woken by
    /// posts, [`Deliverer::woken_by`]).
    pub poll: Duration,
    /// The back-off before the second attempt, doubled for each later one…
    pub retry_base: Duration,
    /// …up to this.
    pub retry_cap: Duration,
    /// Attempts in all before a row is given up.
    pub max_attempts: u32,
    /// How long to wait for the endpoint's answer.
    pub timeout: Duration,
    /// Rows claimed at a time.
    pub batch: i64,
    /// Attempts in flight at once.
    pub concurrency: usize,
}

impl Settings {
    pub fn from_config(config: &Config) -> Self {
        Self {
            poll: Duration::from_millis(config.webhook_poll_ms.max(1)),
            retry_base: Duration::from_millis(config.webhook_retry_base_ms),
            retry_cap: Duration::from_millis(config.webhook_retry_cap_ms),
            max_attempts: config.webhook_max_attempts.max(1),
            timeout: Duration::from_secs(config.webhook_timeout_secs.max(1)),
            batch: 16,
            concurrency: config.webhook_concurrency.max(1),
        }
    }

    /// The lease on a claimed row: long enough for the attempt to time out and be logged. A
    /// server that dies mid-attempt leaves its rows leased; another takes them up after this.
    fn lease(&self) -> Duration {
        self.timeout * 2
    }

    /// "Full jitter": a uniform delay in [0, min(cap, base × 2^(attempt−1))], after attempt
    /// number `attempt` failed.
    pub fn backoff(&self, attempt: u32, rng: &mut impl Rng) -> Duration {
        let doublings = attempt.saturating_sub(1).min(32);
        let ceiling = self.retry_base.saturating_mul(1u32 << doublings.min(31)).min(self.retry_cap);
        let ceiling_ms = u64::try_from(ceiling.as_millis()).unwrap_or(u64::MAX);
        Duration::from_millis(rng.gen_range(0..=ceiling_ms))
    }
}

/// The background task that sends the outbox.
#[derive(Clone)]
pub struct Deliverer {
    store: Arc<dyn Store>,
    client: reqwest::Client,
    settings: Settings,
    allow: Arc<Allowlist>,
    /// When rows are due, how long a claim's lease runs, when to retry, and each request's
    /// `webhook-timestamp`.
    clock: Arc<dyn ServerClock>,
    /// The server's metrics, told each attempt's result.
    metrics: Option<crate::monitoring::Metrics>,
    /// The campaigns posted to, which wake it; none: it only looks every `poll`.
    wake: Option<Arc<crate::live::Deliveries>>,
    /// Whether each campaign posted to lately has webhooks, and when that was read.
    hooked: Arc<Mutex<HashMap<Uuid, (bool, Instant)>>>,
    /// The retries it scheduled.
    retries: Arc<Retries>,
}

/// When the retries a deliverer scheduled fall due, soonest first, and the signal that one was
/// scheduled (its loop may be waiting for longer).
#[derive(Default)]
struct Retries {
    due: Mutex<BinaryHeap<Reverse<DateTime<Utc>>>>,
    scheduled: tokio::sync::Notify,
}

/// How long the deliverer believes a campaign has (or has no) webhooks before reading again: a
/// webhook registered meanwhile waits at most this for its first wake-up.
const HOOKED_FOR: Duration = Duration::from_secs(2);

impl Deliverer {
    /// The client connects only where `allow` permits (global addresses, and the operator's
    /// exceptions), checked address by address when it resolves a name; it follows no
    /// redirect and uses no proxy (a proxy would connect on its behalf, unchecked).
    pub fn new(
        store: Arc<dyn Store>,
        settings: Settings,
        allow: Arc<Allowlist>,
        clock: Arc<dyn ServerClock>,
    ) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .timeout(settings.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver::new(allow.clone())))
            .user_agent(concat!("Adjutant-Webhooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("webhook client: {e}"))?;
        Ok(Self {
            store,
            client,
            settings,
            allow,
            clock,
            metrics: None,
            wake: None,
            hooked: Arc::default(),
            retries: Arc::default(),
        })
    }

    /// Counts each attempt's result in `metrics`.
    pub fn with_metrics(mut self, metrics: crate::monitoring::Metrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Starts at once when a post is committed to a campaign with webhooks (`webhook_wake`);
    /// `None`: only every `poll`.
    pub fn woken_by(mut self, wake: Option<crate::live::Deliveries>) -> Self {
        self.wake = wake.map(Arc::new);
        self
    }

    /// Returns once a post was committed to a campaign with webhooks (or every campaign may have
    /// new posts); never without a wake-up.
    async fn woken(&self) {
        let Some(wake) = &self.wake else {
            return std::future::pending().await;
        };
        loop {
            wake.posted().await;
            match wake.take() {
                // Its posts were taken at an earlier wake-up.
                None => {}
                Some(crate::live::Woken::Every) => return,
                Some(crate::live::Woken::Campaigns(posted)) => {
                    for campaign in posted {
                        if self.hooked(campaign).await {
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Whether `campaign` has webhooks, as read at most [`HOOKED_FOR`] ago; a database that
    /// cannot say is taken for yes (the claim says what is wrong).
    async fn hooked(&self, campaign: Uuid) -> bool {
        let now = Instant::now();
        let known = self.hooked.lock().unwrap_or_else(|e| e.into_inner()).get(&campaign).copied();
        if let Some((hooked, read)) = known {
            if now.duration_since(read) < HOOKED_FOR {
                return hooked;
            }
        }
        let hooked = self.store.webhooks(campaign).await.map_or(true, |hooks| !hooks.is_empty());
        let mut known = self.hooked.lock().unwrap_or_else(|e| e.into_inner());
        if known.len() >= 4096 {
            // Only campaigns posted to lately are worth remembering.
            known.retain(|_, (_, read)| now.duration_since(*read) < HOOKED_FOR);
        }
        known.insert(campaign, (hooked, now));
        hooked
    }

    /// How long until the soonest retry this deliverer scheduled is due (zero when one is);
    /// `None` when it scheduled none.
    fn next_retry(&self) -> Option<Duration> {
        let mut retries = self.retries.due.lock().unwrap_or_else(|e| e.into_inner());
        let Reverse(at) = *retries.peek()?;
        // A little after the time itself, so that the database's rounding of it cannot leave the
        // row a moment short of due when the claim looks.
        let wait = (at + TimeDelta::milliseconds(5) - self.clock.now()).to_std().unwrap_or(Duration::ZERO);
        if wait.is_zero() {
            // Due: the next claim takes it up.
            retries.pop();
        }
        Some(wait)
    }

    /// Claims the rows due now and attempts each (concurrently); returns how many it attempted.
    pub async fn run_once(&self) -> Result<usize, StoreError> {
        let now = self.clock.now();
        let lease = TimeDelta::from_std(self.settings.lease()).unwrap_or(TimeDelta::minutes(1));
        let claimed = self.store.claim_deliveries(now, now + lease, self.settings.batch).await?;
        let count = claimed.len();
        let mut attempts = tokio::task::JoinSet::new();
        for delivery in claimed {
            let this = self.clone();
            attempts.spawn(async move { this.attempt(delivery).await });
        }
        while let Some(done) = attempts.join_next().await {
            match done {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "could not record a webhook attempt"),
                Err(e) => tracing::error!(error = %e, "a webhook attempt failed to run"),
            }
        }
        Ok(count)
    }

    /// Delivers until `stop` turns true: busy while there are due rows; otherwise waiting for a
    /// post to a campaign with webhooks, the next retry it scheduled, or the fallback `poll`.
    ///
    /// Each attempt runs as its own task, with its own time-out, up to `concurrency` at once;
    /// the loop claims more rows as soon as a slot is free, never waiting for a whole batch.
    /// An endpoint that never answers holds at most `PER_WEBHOOK_IN_FLIGHT` slots until their
    /// time-outs, however many rows it has due (the claim passes over its further rows), and
    /// delays nobody else's deliveries.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        tracing::debug!(?self.settings, "webhook deliverer started");
        let mut in_flight: tokio::task::JoinSet<Result<(), StoreError>> = tokio::task::JoinSet::new();
        let log = |done: Result<Result<(), StoreError>, tokio::task::JoinError>| match done {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "could not record a webhook attempt"),
            Err(e) => tracing::error!(error = %e, "a webhook attempt failed to run"),
        };
        loop {
            if *stop.borrow() {
                break;
            }
            while let Some(done) = in_flight.try_join_next() {
                log(done);
            }
            let free = self.settings.concurrency.saturating_sub(in_flight.len());
            let pause = if free == 0 {
                self.settings.poll
            } else {
                match self.claim(free).await {
                    Ok(claimed) if claimed.is_empty() => self.settings.poll,
                    Ok(claimed) => {
                        for delivery in claimed {
                            let this = self.clone();
                            in_flight.spawn(async move { this.attempt(delivery).await });
                        }
                        Duration::ZERO
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "webhook deliverer cannot reach the database");
                        self.settings.poll.max(Duration::from_secs(1))
                    }
                }
            };
            let pause = self.next_retry().map_or(pause, |retry| pause.min(retry));
            tokio::select! {
                _ = stop.changed() => {}
                () = tokio::time::sleep(pause) => {}
                Some(done) = in_flight.join_next(), if free == 0 => log(done),
                () = self.woken(), if free > 0 && !pause.is_zero() => {}
                () = self.retries.scheduled.notified() => {}
            }
        }
        // Attempts under way are finished and logged.
        while let Some(done) = in_flight.join_next().await {
            log(done);
        }
        tracing::debug!("webhook deliverer stopped");
    }

    /// Claims up to `room` due rows (at most a batch).
    async fn claim(&self, room: usize) -> Result<Vec<ClaimedDelivery>, StoreError> {
        let now = self.clock.now();
        let lease = TimeDelta::from_std(self.settings.lease()).unwrap_or(TimeDelta::minutes(1));
        let limit = self.settings.batch.min(i64::try_from(room).unwrap_or(i64::MAX)).max(1);
        self.store.claim_deliveries(now, now + lease, limit).await
    }

    async fn attempt(&self, d: ClaimedDelivery) -> Result<(), StoreError> {
        let attempted_at = self.clock.now();
        let started = Instant::now();
        // The client's time-out bounds the request; this bounds everything else around it.
        let limit = self.settings.timeout + Duration::from_secs(1);
        let sent = match tokio::time::timeout(limit, self.send(&d, attempted_at)).await {
            Ok(sent) => sent,
            Err(_) => Err("timed out".to_owned()),
        };
        let duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        let (status_code, error, retry_after) = match &sent {
            Ok((status, retry_after)) => (Some(i32::from(status.as_u16())), None, *retry_after),
            Err(e) => (None, Some(e.clone()), None),
        };
        let verdict = match status_code {
            Some(200..=299) => DeliveryVerdict::Delivered,
            Some(410) => DeliveryVerdict::Gone,
            _ if u32::try_from(d.attempt).unwrap_or(u32::MAX) >= self.settings.max_attempts => DeliveryVerdict::GiveUp,
            _ => {
                let attempt = u32::try_from(d.attempt).unwrap_or(1);
                let mut wait = self.settings.backoff(attempt, &mut rand::thread_rng());
                // An endpoint that says when to come back (429, 503) is taken at its word,
                // within the cap.
                if let Some(asked) = retry_after {
                    wait = wait.max(asked.min(self.settings.retry_cap));
                }
                DeliveryVerdict::RetryAt(self.clock.now() + TimeDelta::from_std(wait).unwrap_or(TimeDelta::hours(1)))
            }
        };
        if let Some(metrics) = &self.metrics {
            metrics.webhook_attempted(match verdict {
                DeliveryVerdict::Delivered => "delivered",
                DeliveryVerdict::Gone => "gone",
                DeliveryVerdict::RetryAt(_) => "retry",
                DeliveryVerdict::GiveUp => "gave_up",
            });
        }
        tracing::info!(
            webhook = %d.webhook_id, outcome = %d.outcome_id, attempt = d.attempt,
            status = ?status_code, error = ?error, ?verdict, "webhook attempt"
        );
        let attempt = DeliveryAttempt {
            outbox_id: d.outbox_id,
            attempt: d.attempt,
            attempted_at,
            status_code,
            error,
            duration_ms,
        };
        let retry_at = match verdict {
            DeliveryVerdict::RetryAt(at) => Some(at),
            _ => None,
        };
        self.store.finish_delivery(attempt, verdict).await?;
        // Once the row says when it is due again (not before, or the claim would find it still
        // leased), the loop waits for that time.
        if let Some(at) = retry_at {
            self.retries.due.lock().unwrap_or_else(|e| e.into_inner()).push(Reverse(at));
            self.retries.scheduled.notify_one();
        }
        Ok(())
    }

    /// Sends one request; the status and any Retry-After, or why there was no answer.
    async fn send(
        &self,
        d: &ClaimedDelivery,
        at: DateTime<Utc>,
    ) -> Result<(reqwest::StatusCode, Option<Duration>), String> {
        let id = d.outcome_id.to_string();
        let timestamp = at.timestamp();
        let body = body_of(&d.payload);
        let signature = sign(&d.secret, &id, timestamp, body.as_bytes())?;
        // A literal address is not resolved, so the resolver cannot check it: it is checked here.
        let url = reqwest::Url::parse(&d.url).map_err(|_| "bad address".to_owned())?;
        if !literal_allowed(&self.allow, &url) {
            return Err(NotAllowed.to_string());
        }
        let response = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", &id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body)
            .send()
            .await
            .map_err(|e| describe(&e))?;
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        Ok((response.status(), retry_after))
    }
}

/// Why a request got no answer, in a few words the moderator can read: "address not
/// allowed", "connection refused", "timed out", "could not connect", "request failed". Never
/// the client's error chain, which would tell a moderator about the network behind the server.
fn describe(error: &reqwest::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    let mut refused = false;
    while let Some(cause) = source {
        if cause.downcast_ref::<NotAllowed>().is_some() {
            return NotAllowed.to_string();
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            refused |= io.kind() == std::io::ErrorKind::ConnectionRefused;
        }
        source = cause.source();
    }
    let reason = if error.is_timeout() {
        "timed out"
    } else if refused {
        "connection refused"
    } else if error.is_connect() {
        "could not connect"
    } else {
        "request failed"
    };
    reason.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// The example of the Standard Webhooks specification (and of its reference libraries).
    #[test]
    fn signs_as_the_standard_webhooks_example() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        let signature = sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body).unwrap();
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn a_secret_is_whsec_and_32_bytes_of_base64() {
        let secret = new_secret();
        let key = BASE64.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
        assert_eq!(key.len(), 32);
        assert_ne!(secret, new_secret());
    }

    #[test]
    fn backoff_doubles_under_the_cap_with_full_jitter() {
        let settings = Settings {
            poll: Duration::from_millis(10),
            retry_base: Duration::from_millis(1000),
            retry_cap: Duration::from_millis(10_000),
            max_attempts: 5,
            timeout: Duration::from_secs(1),
            batch: 1,
            concurrency: 1,
        };
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for (attempt, ceiling) in [(1, 1000), (2, 2000), (3, 4000), (4, 8000), (5, 10_000), (40, 10_000)] {
            let waits: Vec<u128> = (0..500).map(|_| settings.backoff(attempt, &mut rng).as_millis()).collect();
            let max = *waits.iter().max().unwrap();
            let min = *waits.iter().min().unwrap();
            assert!(max <= ceiling, "attempt {attempt}: {max} > {ceiling}");
            // Full jitter spreads over the whole range, not just near the ceiling.
            assert!(max > ceiling * 9 / 10, "attempt {attempt}: max {max}");
            assert!(min < ceiling / 10, "attempt {attempt}: min {min}");
        }
    }
}
