//! Warnings a client can cause at will (a refused request, a slow stream, a dropped message)
//! are throttled: at most one per call site per second, with the count of those left out since.
//! A hostile client cannot turn its requests into a log flood.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// How often one call site may log.
const EVERY_MS: u64 = 1000;

/// The state of one throttled call site.
pub(crate) struct Throttle {
    /// The earliest time (ms since the first use of any throttle) of the next warning.
    next: AtomicU64,
    /// Warnings left out since the last one logged.
    suppressed: AtomicU64,
}

impl Throttle {
    /// A call site that may log at once.
    pub(crate) const fn new() -> Self {
        Throttle {
            next: AtomicU64::new(0),
            suppressed: AtomicU64::new(0),
        }
    }

    /// `Some(n)`: log now (`n` warnings were left out since the last one); `None`: leave this
    /// one out.
    pub(crate) fn allow(&self) -> Option<u64> {
        let now = now_ms();
        let next = self.next.load(Ordering::Relaxed);
        if now >= next
            && self
                .next
                .compare_exchange(next, now + EVERY_MS, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            return Some(self.suppressed.swap(0, Ordering::Relaxed));
        }
        self.suppressed.fetch_add(1, Ordering::Relaxed);
        None
    }
}

/// A request id as a log line may show it: its JSON text, at most 256 bytes of it (the peer
/// chooses ids of any length), `-` when there is none.
pub(crate) fn shown_id(id: Option<&switchboard_types::RequestId>) -> String {
    id.map_or_else(
        || "-".to_owned(),
        |id| switchboard_types::error::echo(&id.to_string()).into_owned(),
    )
}

fn now_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    u64::try_from(START.get_or_init(Instant::now).elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// `tracing::warn!`, at most once per second at this call site; the warning carries
/// `suppressed`, how many were left out since the last one.
macro_rules! warn_throttled {
    ($($arg:tt)+) => {{
        static THROTTLE: $crate::throttle::Throttle = $crate::throttle::Throttle::new();
        if let Some(suppressed) = THROTTLE.allow() {
            tracing::warn!(suppressed, $($arg)+);
        }
    }};
}
pub(crate) use warn_throttled;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_warning_per_second_and_the_rest_counted() {
        let t = Throttle::new();
        assert_eq!(t.allow(), Some(0));
        for _ in 0..1000 {
            assert_eq!(t.allow(), None);
        }
        // As if a second had passed.
        t.next.store(0, Ordering::Relaxed);
        assert_eq!(t.allow(), Some(1000));
    }

    #[test]
    fn a_huge_id_is_shown_cut() {
        let id = switchboard_types::RequestId::string("x".repeat(1 << 20));
        let shown = shown_id(Some(&id));
        assert!(shown.len() < 300, "{} bytes", shown.len());
        assert_eq!(shown_id(None), "-");
        let small = switchboard_types::RequestId::int(7);
        assert_eq!(shown_id(Some(&small)), "7");
    }
}
