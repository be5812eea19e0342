//! (feature `wait`) Waiting for an event instead of sleeping for it: a bounded poll of a
//! condition, with a deadline generous enough for a loaded machine.
//!
//! ```text
//! wait::until("the session closed", || !session.is_open()).await;
//! ```
//!
//! On tokio's paused clock the poll's sleeps advance the clock, so the deadline is in paused
//! time there.

use std::future::Future;
use std::time::Duration;

/// How long a wait lasts before the test fails: generous, the machine may be loaded.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// How often a condition is polled.
const POLL: Duration = Duration::from_millis(5);

/// Polls `condition` until it holds.
///
/// # Panics
/// When it does not hold within [`DEADLINE`], naming `what` was awaited.
pub async fn until(what: &str, mut condition: impl FnMut() -> bool) {
    until_async(what, || std::future::ready(condition())).await;
}

/// Polls the asynchronous `condition` until it holds.
///
/// # Panics
/// When it does not hold within [`DEADLINE`], naming `what` was awaited.
pub async fn until_async<F, Fut>(what: &str, mut condition: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        if condition().await {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still waiting after {DEADLINE:?} for {what}"
        );
        tokio::time::sleep(POLL).await;
    }
}
