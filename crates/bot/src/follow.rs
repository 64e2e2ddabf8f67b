//! Following campaigns' event streams, so the bot wakes as soon as something is posted rather
//! than at its next poll.

use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use crate::http::USER_AGENT;

/// Follows a campaign's event stream (`GET /v1/campaigns/{id}/events`), waking the bot at each
/// `post` event; reconnects with `Last-Event-ID` when the stream ends or breaks (the server ends
/// a stream after a while, after a page of a long catch-up, and when its follower falls too far
/// behind), so no post is missed. It never polls: between posts it waits on the open stream.
pub(crate) async fn follow_events(adjutant_url: String, token: String, campaign: Uuid, wake: Arc<tokio::sync::Notify>) {
    // No overall time-out: the stream stays open (the server sends a comment every 15 s).
    let client =
        match reqwest::Client::builder().connect_timeout(Duration::from_secs(10)).user_agent(USER_AGENT).build() {
            Ok(client) => client,
            Err(e) => return tracing::warn!(error = %e, "cannot follow the event stream"),
        };
    let url = format!("{adjutant_url}/v1/campaigns/{campaign}/events");
    let mut last: Option<String> = None;
    // How long to wait before reconnecting: what the server asked (`retry:`) after a stream it
    // ended, and a little longer after a refusal or a broken connection.
    let mut retry = None;
    loop {
        let mut request = client.get(&url).bearer_auth(&token).header("Accept", "text/event-stream");
        if let Some(id) = &last {
            request = request.header("Last-Event-ID", id);
        }
        match request.send().await {
            Ok(mut response) if response.status().is_success() => {
                let mut buffer: Vec<u8> = vec![];
                while let Ok(Some(chunk)) = response.chunk().await {
                    buffer.extend_from_slice(&chunk);
                    while let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
                        let event: Vec<u8> = buffer.drain(..end + 2).collect();
                        let event = String::from_utf8_lossy(&event);
                        let mut post = false;
                        for line in event.lines() {
                            if let Some(id) = line.strip_prefix("id:") {
                                last = Some(id.trim().to_owned());
                            }
                            post |= line.strip_prefix("event:").is_some_and(|e| e.trim() == "post");
                            if let Some(ms) = line.strip_prefix("retry:").and_then(|ms| ms.trim().parse().ok()) {
                                retry = Some(Duration::from_millis(ms));
                            }
                        }
                        if post {
                            wake.notify_one();
                        }
                    }
                }
            }
            Ok(response) => {
                retry = None;
                tracing::warn!(%campaign, status = %response.status(), "the event stream was refused");
            }
            Err(e) => {
                retry = None;
                tracing::warn!(%campaign, error = %e, "the event stream broke");
            }
        }
        tokio::time::sleep(retry.take().unwrap_or(Duration::from_secs(2))).await;
    }
}
