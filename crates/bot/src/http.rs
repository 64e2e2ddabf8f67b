//! The bot's HTTP: every request to Adjutant, the forum and Discord goes through `Http::send`,
//! which waits out 429s and emptied rate-limit buckets the same way for all of them.

use std::time::Duration;

use reqwest::{RequestBuilder, StatusCode};
use serde_json::Value;
use uuid::Uuid;

use crate::{BotConfig, BotError};

/// How the bot names itself to every server it talks to.
pub(crate) const USER_AGENT: &str = concat!("Adjutant-Bot/", env!("CARGO_PKG_VERSION"));

/// The bot's HTTP client and its patience with rate limits.
pub(crate) struct Http {
    client: reqwest::Client,
    max_retries: u32,
    max_wait: Duration,
}

impl Http {
    pub(crate) fn new(config: &BotConfig) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .user_agent(USER_AGENT)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self { client, max_retries: config.max_retries, max_wait: config.max_wait })
    }

    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Sends with `body`, when there is one, as JSON; reads the answer as JSON.
    pub(crate) async fn send_json<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        body: Option<&Value>,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<T, BotError> {
        self.send(what, || match body {
            Some(body) => build().json(body),
            None => build(),
        })
        .await
    }

    /// Sends and reads the answer as JSON.
    pub(crate) async fn send<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<T, BotError> {
        let body = self.send_raw(what, build).await?;
        serde_json::from_slice(&body).map_err(|e| {
            BotError::Other(format!(
                "{what}: unreadable answer ({e}): {}",
                String::from_utf8_lossy(&body).chars().take(200).collect::<String>()
            ))
        })
    }

    /// Sends, waiting out 429s as the answer asks (1 s when it says nothing readable).
    pub(crate) async fn send_raw(&self, what: &str, build: impl Fn() -> RequestBuilder) -> Result<Vec<u8>, BotError> {
        let mut waits = 0;
        loop {
            let response =
                build().send().await.map_err(|e| BotError::Http { what: what.to_owned(), error: e.to_string() })?;
            let status = response.status();
            if status == StatusCode::TOO_MANY_REQUESTS {
                if waits >= self.max_retries {
                    return Err(BotError::RateLimited { what: what.to_owned(), retries: waits });
                }
                waits += 1;
                // Discord says it in the body (`retry_after`, seconds with fractions) and in
                // headers; other servers in `Retry-After`. The longest wait asked for counts.
                let headers = retry_after(response.headers(), now()).into_iter().chain(reset_after(response.headers()));
                let body: Option<Value> = response.json().await.ok();
                let in_body = body.as_ref().and_then(|b| b["retry_after"].as_f64()).and_then(seconds);
                let wait = headers.chain(in_body).max().unwrap_or(Duration::from_secs(1)).min(self.max_wait);
                tracing::info!(what, ?wait, "429: waiting as asked");
                tokio::time::sleep(wait).await;
                continue;
            }
            // The bucket is empty (Discord's `X-RateLimit-Remaining: 0`): wait until it refills
            // rather than run into a 429.
            let exhausted = response.headers().get("x-ratelimit-remaining").is_some_and(|v| v.as_bytes() == b"0");
            let refill = if exhausted { reset_after(response.headers()) } else { None };
            let body =
                response.bytes().await.map_err(|e| BotError::Http { what: what.to_owned(), error: e.to_string() })?;
            if let Some(wait) = refill.filter(|_| status.is_success()) {
                tracing::info!(what, ?wait, "rate limit bucket empty: waiting for it to refill");
                tokio::time::sleep(wait.min(self.max_wait)).await;
            }
            if !status.is_success() {
                let body: String = String::from_utf8_lossy(&body).chars().take(500).collect();
                return Err(BotError::Status { what: what.to_owned(), status: status.as_u16(), body });
            }
            return Ok(body.to_vec());
        }
    }
}

/// The bot's clock: the machine's. The bot is a client in a process of its own, not the server
/// that stamps posts; it reads the time only to wait out an HTTP date in `Retry-After`.
fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

/// `Retry-After` as seconds (fractions allowed) or as an HTTP date (how long from `now`).
fn retry_after(headers: &reqwest::header::HeaderMap, now: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    (at.with_timezone(&chrono::Utc) - now).to_std().ok().or(Some(Duration::ZERO))
}

/// Discord's `X-RateLimit-Reset-After`: seconds (with fractions) until the bucket refills.
fn reset_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers.get("x-ratelimit-reset-after")?.to_str().ok()?.trim().parse::<f64>().ok().and_then(seconds)
}

fn seconds(value: f64) -> Option<Duration> {
    (value.is_finite() && (0.0..1e9).contains(&value)).then(|| Duration::from_secs_f64(value))
}

/// One part of a `multipart/form-data` body: its name, the file name and type for a file, and
/// its content.
pub(crate) type FormPart<'a> = (&'a str, Option<(&'a str, &'a str)>, &'a [u8]);

/// A `multipart/form-data` body, and its content type (with the boundary).
pub(crate) fn multipart(parts: &[FormPart]) -> (String, Vec<u8>) {
    let boundary = format!("adjutant-{}", Uuid::new_v4().simple());
    let mut body = Vec::new();
    for (name, file, content) in parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        match file {
            Some((filename, kind)) => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\nContent-Type: {kind}\r\n\r\n")
                    .as_bytes(),
            ),
            None if *name == "payload_json" => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"\r\nContent-Type: application/json\r\n\r\n").as_bytes(),
            ),
            None => body.extend_from_slice(format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes()),
        }
        body.extend_from_slice(content);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// A forum post id, whether the forum sends it as a number or as text.
pub(crate) fn post_id(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_in_seconds_or_a_date() {
        let now = chrono::DateTime::parse_from_rfc3339("2015-10-21T07:27:30Z").unwrap().to_utc();
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(2)));
        headers.insert("retry-after", "0.25".parse().unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::from_millis(250)));
        headers.insert("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(30)));
        let later = chrono::DateTime::parse_from_rfc3339("2015-10-21T08:00:00Z").unwrap().to_utc();
        assert_eq!(retry_after(&headers, later), Some(Duration::ZERO), "a date gone by: no wait");
        headers.insert("retry-after", "soon".parse().unwrap());
        assert_eq!(retry_after(&headers, now), None);
    }
}
