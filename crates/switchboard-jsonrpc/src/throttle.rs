//! [`LogThrottle`]: the per-session bound on log lines that the peer's input causes.
//!
//! A peer decides how many bad frames, orphan responses or stray cancellations it sends, so a
//! log line per such event lets it write to our logs as fast as it can write to us. Each session
//! has one throttle, a token bucket: a burst of `per_second` lines, then `per_second` lines a
//! second. Lines over the budget are counted, not written; the next line admitted (or the
//! session's end) is preceded by one line saying how many were suppressed.
//!
//! Every line the peer causes also bounds what it echoes ([`LOG_ECHO_BYTES`]), so the volume
//! of the log is bounded per second whatever the peer sends.

use std::borrow::Cow;
use std::sync::Mutex;

use tokio::time::Instant;

/// Default number of log lines a session's peer may cause per second (also the burst).
pub(crate) const DEFAULT_LOG_LINES_PER_SECOND: u32 = 10;

/// The most bytes of a peer's frame, method or id that a log line shows; longer text is cut
/// (with an ellipsis) and the line gives the full length.
pub(crate) const LOG_ECHO_BYTES: usize = 256;

/// A token bucket over the log lines one session's peer causes. Cheap to check; shared by the
/// engine and the role (through [`crate::Peer::log_throttle`]).
#[derive(Debug)]
pub struct LogThrottle {
    per_second: u32,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    tokens: f64,
    refilled: Instant,
    suppressed: u64,
}

impl LogThrottle {
    /// A throttle admitting a burst of `per_second` lines, then `per_second` lines a second
    /// (at least 1).
    pub fn new(per_second: u32) -> Self {
        let per_second = per_second.max(1);
        LogThrottle {
            per_second,
            state: Mutex::new(State {
                tokens: f64::from(per_second),
                refilled: Instant::now(),
                suppressed: 0,
            }),
        }
    }

    /// The budget, in lines per second.
    pub fn per_second(&self) -> u32 {
        self.per_second
    }

    /// Whether one more line may be written now. When lines were suppressed since the last one
    /// admitted, a warning saying how many is written first (under `side`'s name).
    pub fn admit(&self, side: &str) -> bool {
        let Ok(mut s) = self.state.lock() else {
            return false;
        };
        let now = Instant::now();
        let rate = f64::from(self.per_second);
        let elapsed = now.saturating_duration_since(s.refilled).as_secs_f64();
        s.tokens = (s.tokens + elapsed * rate).min(rate);
        s.refilled = now;
        if s.tokens < 1.0 {
            s.suppressed += 1;
            return false;
        }
        s.tokens -= 1.0;
        let suppressed = std::mem::take(&mut s.suppressed);
        drop(s);
        if suppressed > 0 {
            report(side, suppressed);
        }
        true
    }

    /// How many lines were suppressed since the last one admitted.
    pub fn suppressed(&self) -> u64 {
        self.state.lock().map(|s| s.suppressed).unwrap_or(0)
    }

    /// Writes the count of lines still suppressed, if any (the session has ended).
    pub fn flush(&self, side: &str) {
        let suppressed = self
            .state
            .lock()
            .map(|mut s| std::mem::take(&mut s.suppressed))
            .unwrap_or(0);
        if suppressed > 0 {
            report(side, suppressed);
        }
    }
}

fn report(side: &str, suppressed: u64) {
    tracing::warn!(
        side,
        suppressed,
        "{suppressed} log lines caused by the peer suppressed (over its budget)"
    );
}

/// Peer-supplied text as a log line may show it: at most 256 bytes, then an
/// ellipsis.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
    switchboard_types::error::clip(text, LOG_ECHO_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn a_burst_then_the_rate_then_a_count_of_what_was_suppressed() {
        let t = LogThrottle::new(5);
        let admitted = (0..100).filter(|_| t.admit("test")).count();
        assert_eq!(admitted, 5);
        assert_eq!(t.suppressed(), 95);
        tokio::time::advance(Duration::from_millis(400)).await;
        assert_eq!((0..100).filter(|_| t.admit("test")).count(), 2);
        assert_eq!(
            t.suppressed(),
            98,
            "the count restarts after it is reported"
        );
        tokio::time::advance(Duration::from_secs(60)).await;
        assert_eq!(
            (0..100).filter(|_| t.admit("test")).count(),
            5,
            "never more than one burst"
        );
        t.flush("test");
        assert_eq!(t.suppressed(), 0);
    }
}
