//! Concurrency and rate limits, per session, per subject or in all.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use switchboard_jsonrpc::{BoxFuture, Call, HandlerResult, Layer, Next};
use switchboard_types::error::echo;
use tokio::time::Instant;

use crate::answer::limited;
use crate::keyed::{KeyedMap, MAX_KEYS, Per};

fn refuse(e: switchboard_types::ErrorObject) -> BoxFuture<HandlerResult> {
    Box::pin(std::future::ready(Err(e)))
}

/// At most `max` requests handled at once per [`Per`] key; one more is refused at once with
/// -32000 (`reason: "concurrency_limited"`), never queued or dropped.
#[derive(Clone)]
pub struct ConcurrencyLimit {
    per: Per,
    max: usize,
    running: Arc<Mutex<KeyedMap<usize>>>,
}

impl std::fmt::Debug for ConcurrencyLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConcurrencyLimit")
            .field("per", &self.per)
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

impl ConcurrencyLimit {
    /// At most `max` (at least 1) at once per `per`.
    pub fn new(per: Per, max: usize) -> Self {
        ConcurrencyLimit {
            per,
            max: max.max(1),
            running: Arc::new(Mutex::new(KeyedMap::new(MAX_KEYS))),
        }
    }

    /// At most `max` at once per session.
    pub fn per_session(max: usize) -> Self {
        Self::new(Per::Session, max)
    }

    /// At most `max` at once per authorization subject.
    pub fn per_subject(max: usize) -> Self {
        Self::new(Per::Subject, max)
    }

    /// Keeps state for at most `n` keys (default [`MAX_KEYS`]).
    pub fn with_max_keys(self, n: usize) -> Self {
        ConcurrencyLimit {
            running: Arc::new(Mutex::new(KeyedMap::new(n))),
            ..self
        }
    }
}

/// Gives the slot back when the request ends, however it ends (answered, cancelled, dropped).
struct Slot {
    running: Arc<Mutex<KeyedMap<usize>>>,
    key: Arc<str>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut m) = self.running.lock()
            && let Some(n) = m.get_mut(&self.key)
        {
            *n = n.saturating_sub(1);
        }
    }
}

impl Layer for ConcurrencyLimit {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        let key = self.per.key(call.facts());
        let admitted = match self.running.lock() {
            Ok(mut m) => match m.entry(&key, || 0, |n| *n == 0) {
                Some(n) if *n < self.max => {
                    *n += 1;
                    true
                }
                _ => false,
            },
            Err(_) => false,
        };
        if !admitted {
            return refuse(limited(
                format!(
                    "Too many requests at once: {} is limited to {} per {}",
                    echo(call.method()),
                    self.max,
                    self.per.as_str()
                ),
                json!({"reason": "concurrency_limited", "limit": self.max, "per": self.per.as_str()}),
            ));
        }
        let slot = Slot {
            running: self.running.clone(),
            key,
        };
        let fut = next.run(call);
        Box::pin(async move {
            let _slot = slot;
            fut.await
        })
    }
}

/// A token bucket: `burst` requests at once, refilled at `per_second`.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// At most `n` requests per `interval` per [`Per`] key (a token bucket holding `n`, refilled
/// evenly over `interval`); one more is refused with -32000 (`reason: "rate_limited"`,
/// `retryAfterMs`: when the next would be admitted).
#[derive(Clone)]
pub struct RateLimit {
    per: Per,
    burst: f64,
    per_second: f64,
    buckets: Arc<Mutex<KeyedMap<Bucket>>>,
}

impl std::fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimit")
            .field("per", &self.per)
            .field("burst", &self.burst)
            .field("per_second", &self.per_second)
            .finish_non_exhaustive()
    }
}

impl RateLimit {
    /// At most `n` (at least 1) requests per `interval` per `per`.
    pub fn new(per: Per, n: u32, interval: Duration) -> Self {
        let n = f64::from(n.max(1));
        let secs = interval.as_secs_f64().max(1e-3);
        RateLimit {
            per,
            burst: n,
            per_second: n / secs,
            buckets: Arc::new(Mutex::new(KeyedMap::new(MAX_KEYS))),
        }
    }

    /// At most `n` requests per `interval` per session.
    pub fn per_session(n: u32, interval: Duration) -> Self {
        Self::new(Per::Session, n, interval)
    }

    /// At most `n` requests per `interval` per authorization subject.
    pub fn per_subject(n: u32, interval: Duration) -> Self {
        Self::new(Per::Subject, n, interval)
    }

    /// Keeps buckets for at most `n` keys (default [`MAX_KEYS`]); a full bucket is forgotten
    /// first (it holds nothing a new one would not).
    pub fn with_max_keys(self, n: usize) -> Self {
        RateLimit {
            buckets: Arc::new(Mutex::new(KeyedMap::new(n))),
            ..self
        }
    }

    /// Takes one token for `key`: `Ok` or the wait until one is there.
    fn take(&self, key: &Arc<str>) -> Result<(), Duration> {
        let now = Instant::now();
        let (burst, rate) = (self.burst, self.per_second);
        let refill =
            |b: &Bucket| (b.tokens + now.duration_since(b.at).as_secs_f64() * rate).min(burst);
        let Ok(mut m) = self.buckets.lock() else {
            return Err(Duration::from_secs(1));
        };
        let Some(bucket) = m.entry(
            key,
            || Bucket {
                tokens: burst,
                at: now,
            },
            |b| refill(b) >= burst,
        ) else {
            return Err(Duration::from_secs_f64(1.0 / rate));
        };
        let tokens = refill(bucket);
        bucket.at = now;
        if tokens >= 1.0 {
            bucket.tokens = tokens - 1.0;
            Ok(())
        } else {
            bucket.tokens = tokens;
            Err(Duration::from_secs_f64((1.0 - tokens) / rate))
        }
    }
}

impl Layer for RateLimit {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        let key = self.per.key(call.facts());
        match self.take(&key) {
            Ok(()) => next.run(call),
            Err(wait) => {
                let retry_ms = wait.as_millis().max(1) as u64;
                refuse(limited(
                    format!(
                        "Rate limit exceeded for {}: retry in {retry_ms} ms",
                        echo(call.method())
                    ),
                    json!({
                        "reason": "rate_limited",
                        "retryAfterMs": retry_ms,
                        "limit": self.burst as u64,
                        "per": self.per.as_str(),
                    }),
                ))
            }
        }
    }
}
