//! Accepting connections, so that idle or slow clients cannot hold the service.
//!
//! - At most `max_connections` connections are open at once. When all are taken, the next
//!   connection is not accepted (it waits in the operating system's backlog) until one closes.
//! - A connection must send a request's whole head (request line and headers) within
//!   `header_read_timeout_secs` of the service starting to wait for it (the connection's start,
//!   or the end of the last answer's body), for its first request and for every later one on a
//!   kept-alive connection; otherwise it is closed (see [`crate::paced`]). So a slot held
//!   by an idle or slowloris connection frees itself within that time, and a normal request
//!   waits at most that long for a slot when every slot is held by such connections.
//! - One client address (IPv6: its /64) holds at most `max_connections_per_client` of them; one
//!   more is answered 429 and closed. A trusted proxy's connections are not counted: its
//!   clients all arrive from its address, and only the request's forwarding headers tell them
//!   apart (the proxy must cap connections per client itself).
//! - An answer the client takes too slowly ends its connection (`send_timeout_secs`,
//!   `min_send_bytes_per_sec` over `send_rate_window_secs`; see [`crate::paced`]), so a slow
//!   reader frees its slot, and the event stream or export it held.
//! - A request head is at most `max_header_bytes` (431 past it), and the unfinished heads of all
//!   connections together draw on `header_bytes_budget` beyond their first 8 KiB each.
//! - Request bodies are limited by `body_limit_bytes`, and a request's handling by
//!   `request_timeout_secs`, in the router (see [`crate::app`]).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tower::Service;

use crate::paced::{HeadBudget, Heads, Paced, SendLimits};
use crate::rate_limit::{CallerKey, TrustedProxies};
use crate::shares::Shares;

mod finish;

/// The connection a request came on, as the listener tells it: the caller's address and the
/// socket's send queue (for an event stream's follower that falls behind). One extension for
/// both, so a request pays one insertion into its extensions.
#[derive(Debug, Clone, Copy)]
pub struct Peer {
    pub address: SocketAddr,
    pub send_queue: crate::live::SendQueue,
}

/// How connections are accepted.
#[derive(Debug, Clone)]
pub struct EdgeSettings {
    pub max_connections: usize,
    pub header_read_timeout: Duration,
    /// 0: no limit.
    pub max_connections_per_client: usize,
    /// Peers whose connections are not counted per client.
    pub trusted_proxies: TrustedProxies,
    pub send: SendLimits,
    /// SO_SNDBUF of each connection; 0: the system's.
    pub send_buffer_bytes: usize,
    pub max_header_bytes: usize,
    pub header_bytes_budget: usize,
}

impl EdgeSettings {
    pub fn from_config(config: &crate::config::Config) -> Self {
        Self {
            max_connections: config.max_connections.max(1),
            header_read_timeout: Duration::from_secs(config.header_read_timeout_secs.max(1)),
            max_connections_per_client: config.max_connections_per_client,
            // The service refuses to start with a list it cannot read (`Limits::from_config`).
            trusted_proxies: TrustedProxies::parse(&config.trusted_proxies).unwrap_or_default(),
            send: SendLimits {
                stall: Duration::from_secs(config.send_timeout_secs.max(1)),
                min_rate: config.min_send_bytes_per_sec,
                window: Duration::from_secs(config.send_rate_window_secs.max(1)),
            },
            send_buffer_bytes: config.send_buffer_bytes,
            // hyper's buffer is at least 8 KiB.
            max_header_bytes: config.max_header_bytes.max(8192),
            header_bytes_budget: config.header_bytes_budget,
        }
    }
}

/// Connections refused at once for holding too many, being answered: past it, one is closed
/// without an answer, so refusing costs the server little however fast they come.
const REFUSALS: usize = 64;
/// How long a refused connection is given to read its answer.
const REFUSAL_TIME: Duration = Duration::from_secs(1);

/// Answers 429 to a client that holds every connection it may, and closes the connection.
async fn refuse(mut stream: TcpStream, most: usize) {
    let detail = format!(
        "this client address has {most} connections open, the most one address may; close one or wait for one to finish, then try again"
    );
    let problem = serde_json::json!({
        "type": "https://adjutant.invalid/problems/connections.per_client",
        "title": "Too Many Requests",
        "status": 429,
        "detail": detail,
        "rule": "connections.per_client",
    })
    .to_string();
    let answer = format!(
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: {}\r\nretry-after: 5\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{problem}",
        crate::error::PROBLEM_JSON,
        problem.len()
    );
    let _ = tokio::time::timeout(REFUSAL_TIME, async {
        // The request is read (a little of it) first, so that closing does not reset the
        // connection before the client has read the answer.
        let mut head = [0u8; 2048];
        let _ = stream.read(&mut head).await;
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await
    })
    .await;
}

/// Serves `router` on `listener` until `shutdown` completes; then stops accepting, lets every
/// open connection finish the request it is on, and returns when all are closed.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    settings: EdgeSettings,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(settings.max_connections));
    let per_client = Shares::<CallerKey>::new(settings.max_connections_per_client);
    let refusals = Arc::new(Semaphore::new(REFUSALS));
    let budget = HeadBudget::new(settings.header_bytes_budget);
    let finish = Arc::new(finish::Finish::default());
    // Each connection holds a receiver of `open`; `closed()` waits for the last to go.
    let (open, connection_closed) = watch::channel(());
    // The time a head may take is kept by the socket (`Paced`), not hyper's timer: hyper's sets
    // a time-out for each request and tries one more read after each answer to start it.
    let mut http = hyper::server::conn::http1::Builder::new();
    http.max_buf_size(settings.max_header_bytes);
    tokio::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, or a connection reset before it was accepted:
                    // wait a little rather than spin.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let share = if settings.trusted_proxies.contains(peer.ip()) {
            None
        } else {
            match per_client.take(CallerKey::of_address(peer.ip())) {
                Some(share) => Some(share),
                None => {
                    drop(slot);
                    tracing::debug!(%peer, "a connection past the client's share was refused");
                    if let Ok(refusing) = refusals.clone().try_acquire_owned() {
                        let most = per_client.most();
                        tokio::spawn(async move {
                            refuse(stream, most).await;
                            drop(refusing);
                        });
                    }
                    continue;
                }
            }
        };
        let _ = stream.set_nodelay(true);
        if settings.send_buffer_bytes > 0 {
            let _ = socket2::SockRef::from(&stream).set_send_buffer_size(settings.send_buffer_bytes);
        }
        let heads = Heads::new(budget.clone());
        let router = router.clone();
        let handled = heads.clone();
        let send_queue = crate::live::SendQueue::of(&stream);
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(Peer { address: peer, send_queue });
            let mut router = router.clone();
            let handling = handled.handling();
            async move {
                let response = router.call(request).await.unwrap_or_else(|never| match never {});
                Ok::<_, Infallible>(response.map(|body| handling.until_sent(body)))
            }
        });
        let io = Paced::new(stream, settings.send, heads, settings.header_read_timeout);
        let connection = http.clone().serve_connection(TokioIo::new(io), service);
        let closed = connection_closed.clone();
        let served = finish.serve(Box::pin(connection), |connection| connection.get_mut().as_mut().graceful_shutdown());
        tokio::spawn(async move {
            if let Err(e) = served.await {
                tracing::debug!(error = %e, %peer, "connection ended");
            }
            drop(slot);
            drop(share);
            drop(closed);
        });
    }
    drop(listener);
    finish.now();
    drop(connection_closed);
    open.closed().await;
    Ok(())
}
