//! The timer behind a connection's header read timeout, one per connection.
//!
//! hyper starts the time-out as it begins to wait for each request head and drops it once the
//! head is read, so with tokio's timer every request on a kept-alive connection would put an
//! entry into the runtime's timer wheel and take it out again. Here a connection keeps one alarm
//! in the wheel: each request's time-out only notes its deadline, and the alarm, still set for
//! an earlier request's deadline, is moved on to the latest one when it goes off. Deadlines
//! only move later on a connection, so the alarm goes off at most once a time-out's length
//! while requests keep coming, and a head that is late is still cut off at its own deadline.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::rt::{Sleep, Timer};

/// A connection's timer for hyper: cheap to clone, every clone sharing the connection's alarm.
#[derive(Clone, Default)]
pub struct HeadTimer {
    alarm: Arc<Mutex<Option<Pin<Box<tokio::time::Sleep>>>>>,
}

impl Timer for HeadTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(Instant::now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(Deadline { at: tokio::time::Instant::from_std(deadline), alarm: self.alarm.clone() })
    }
}

/// One time-out: ready at `at`, woken by the connection's alarm.
struct Deadline {
    at: tokio::time::Instant,
    alarm: Arc<Mutex<Option<Pin<Box<tokio::time::Sleep>>>>>,
}

impl Sleep for Deadline {}

impl Future for Deadline {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let at = self.at;
        if tokio::time::Instant::now() >= at {
            return Poll::Ready(());
        }
        let mut alarm = self.alarm.lock().unwrap_or_else(|e| e.into_inner());
        let alarm = alarm.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
        if alarm.deadline() > at {
            alarm.as_mut().reset(at);
        }
        loop {
            match alarm.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                // Gone off at this deadline (or after it): the time is up.
                Poll::Ready(()) if alarm.deadline() >= at => return Poll::Ready(()),
                // Gone off at an earlier request's deadline: set for this one.
                Poll::Ready(()) => alarm.as_mut().reset(at),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polls `sleep` once.
    async fn poll_once(sleep: &mut Pin<Box<dyn Sleep>>) -> Poll<()> {
        std::future::poll_fn(|cx| Poll::Ready(sleep.as_mut().poll(cx))).await
    }

    #[tokio::test]
    async fn each_deadline_is_kept_with_one_alarm() {
        let timer = HeadTimer::default();
        let start = Instant::now();
        // A deadline met before it is due: dropped, its alarm left set.
        let first = timer.sleep(Duration::from_millis(40));
        drop(first);
        // The next, later: woken by the alarm at the first's time, it waits on for its own.
        timer.sleep(Duration::from_millis(120)).await;
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(120) && took < Duration::from_millis(1_000), "{took:?}");
        // An earlier deadline than the alarm's: the alarm is brought forward.
        let start = Instant::now();
        let mut late = timer.sleep(Duration::from_secs(30));
        assert!(poll_once(&mut late).await.is_pending());
        timer.sleep(Duration::from_millis(50)).await;
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(50) && took < Duration::from_millis(1_000), "{took:?}");
        assert!(poll_once(&mut late).await.is_pending());
    }

    #[tokio::test]
    async fn a_deadline_past_is_ready_at_once() {
        let timer = HeadTimer::default();
        let mut past = timer.sleep_until(Instant::now() - Duration::from_millis(5));
        assert!(poll_once(&mut past).await.is_ready());
    }
}
