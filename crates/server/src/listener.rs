//! Accepting connections, so that idle or slow clients cannot hold the service.
//!
//! - At most `max_connections` connections are open at once. When all are taken, the next
//!   connection is not accepted (it waits in the operating system's backlog) until one closes.
//! - A connection must send a request's whole head (request line and headers) within
//!   `header_read_timeout_secs` of the service starting to wait for it, for its first request
//!   and for every later one on a kept-alive connection; otherwise it is closed. So a slot held
//!   by an idle or slowloris connection frees itself within that time, and a normal request
//!   waits at most that long for a slot when every slot is held by such connections.
//! - Request bodies are limited by `body_limit_bytes`, and a request's handling by
//!   `request_timeout_secs`, in the router (see [`crate::app`]).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tower::Service;

/// How connections are accepted.
#[derive(Debug, Clone, Copy)]
pub struct EdgeSettings {
    pub max_connections: usize,
    pub header_read_timeout: Duration,
}

impl EdgeSettings {
    pub fn from_config(config: &crate::config::Config) -> Self {
        Self {
            max_connections: config.max_connections.max(1),
            header_read_timeout: Duration::from_secs(config.header_read_timeout_secs.max(1)),
        }
    }
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
    let (stop, stopping) = watch::channel(false);
    // Each connection holds a receiver of `open`; `closed()` waits for the last to go.
    let (open, connection_closed) = watch::channel(());
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(settings.header_read_timeout);
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
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
            let mut router = router.clone();
            async move { Ok::<_, Infallible>(router.call(request).await.unwrap_or_else(|never| match never {})) }
        });
        let connection = http.serve_connection(TokioIo::new(stream), service);
        let mut stopping = stopping.clone();
        let closed = connection_closed.clone();
        tokio::spawn(async move {
            tokio::pin!(connection);
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!(error = %e, %peer, "connection ended");
                    }
                }
                () = async { drop(stopping.wait_for(|stop| *stop).await) } => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            drop(slot);
            drop(closed);
        });
    }
    drop(listener);
    let _ = stop.send(true);
    drop(connection_closed);
    open.closed().await;
    Ok(())
}
