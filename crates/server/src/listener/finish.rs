//! Telling every open connection to finish, at shutdown.
//!
//! A connection's task is woken for each read and write of its socket. Waiting for the stop
//! beside the connection in a `select!` would poll the stop's future at every one of those
//! wake-ups; a watch channel's future takes the channel's lock, shared by every connection, to
//! renew its place. Here each wake-up reads one flag, and a connection's waker is put in the
//! list of those to wake once, at its first poll: a spawned task's waker wakes that task for as
//! long as it lives.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// The listener's side: [`Finish::now`] tells every connection [`Finish::serve`] runs.
#[derive(Default)]
pub struct Finish {
    stopped: AtomicBool,
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, Waker>>,
}

impl Finish {
    /// Tells every connection, now and later, to finish.
    pub fn now(&self) {
        self.stopped.store(true, Ordering::Release);
        let waiting = std::mem::take(&mut *self.waiting.lock().unwrap_or_else(|e| e.into_inner()));
        for waker in waiting.into_values() {
            waker.wake();
        }
    }

    /// Runs `connection` to its end; once told to finish, calls `finish` on it once and runs
    /// it on until it ends. Polled only by the task it is spawned as.
    pub fn serve<C, F>(self: &Arc<Self>, connection: C, finish: F) -> Served<C, F>
    where
        C: Future + Unpin,
        F: FnMut(Pin<&mut C>) + Unpin,
    {
        Served { connection, finish: Some(finish), shared: self.clone(), id: None }
    }
}

/// A connection served until it ends, finished when told: see [`Finish::serve`].
pub struct Served<C, F> {
    connection: C,
    /// Taken when called.
    finish: Option<F>,
    shared: Arc<Finish>,
    /// Its place in the list of wakers, from its first poll.
    id: Option<u64>,
}

impl<C, F> Future for Served<C, F>
where
    C: Future + Unpin,
    F: FnMut(Pin<&mut C>) + Unpin,
{
    type Output = C::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<C::Output> {
        let this = self.get_mut();
        if this.finish.is_some() {
            if this.id.is_none() {
                let id = this.shared.next.fetch_add(1, Ordering::Relaxed);
                this.shared.waiting.lock().unwrap_or_else(|e| e.into_inner()).insert(id, cx.waker().clone());
                this.id = Some(id);
            }
            // Read after the waker is in the list: a stop that came before is seen here, and
            // one that comes after wakes it.
            if this.shared.stopped.load(Ordering::Acquire) {
                if let Some(mut finish) = this.finish.take() {
                    finish(Pin::new(&mut this.connection));
                }
            }
        }
        Pin::new(&mut this.connection).poll(cx)
    }
}

impl<C, F> Drop for Served<C, F> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.shared.waiting.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A connection that ends only after it is told to finish, and counts how often it was.
    struct Lingering {
        told: u32,
    }

    impl Future for Lingering {
        type Output = u32;

        fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<u32> {
            if self.told > 0 {
                Poll::Ready(self.told)
            } else {
                Poll::Pending
            }
        }
    }

    #[tokio::test]
    async fn every_connection_is_told_once_whether_it_began_before_the_stop_or_after() {
        let finish = Arc::new(Finish::default());
        let tell = |c: Pin<&mut Lingering>| c.get_mut().told += 1;
        let before = tokio::spawn(finish.serve(Lingering { told: 0 }, tell));
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!before.is_finished());
        finish.now();
        let told = tokio::time::timeout(Duration::from_secs(5), before).await.expect("woken").expect("ran");
        assert_eq!(told, 1);
        let after = finish.serve(Lingering { told: 0 }, tell);
        assert_eq!(tokio::time::timeout(Duration::from_secs(5), after).await.expect("finished"), 1);
        assert!(finish.waiting.lock().unwrap().is_empty(), "a connection ended and left its waker");
    }
}
