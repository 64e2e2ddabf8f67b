//! The server's clock. Every post's stamp comes from here and nowhere else.

use std::sync::Mutex;

use chrono::{DateTime, DurationRound, TimeDelta, Utc};

pub trait ServerClock: Send + Sync + 'static {
    /// Now, to the millisecond.
    fn now(&self) -> DateTime<Utc>;
}

/// The machine's clock.
pub struct SystemClock;

impl ServerClock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        let now = Utc::now();
        now.duration_trunc(TimeDelta::milliseconds(1)).unwrap_or(now)
    }
}

/// A clock the embedding program sets by hand: for tests that must post at a given time of
/// day (the seed's 9:51:45). It is not reachable over HTTP or from configuration.
pub struct ManualClock(Mutex<DateTime<Utc>>);

impl ManualClock {
    pub fn new(at: DateTime<Utc>) -> Self {
        Self(Mutex::new(at))
    }

    pub fn set(&self, at: DateTime<Utc>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = at;
    }

    pub fn advance(&self, by: TimeDelta) {
        let mut now = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *now += by;
    }
}

impl ServerClock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
