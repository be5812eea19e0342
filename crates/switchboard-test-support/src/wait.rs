//! (feature `wait`) Waiting for an event instead of sleeping for it: a bounded poll of a
//! condition with a deadline generous enough for a loaded machine, and a spawned waiter known to
//! be registered before the test causes what it waits for.
//!
//! ```text
//! wait::until("the listen stream is forgotten", || s.listen_stream_count() == 0).await;
//! let waiter = wait::spawn_polled(async move { c.tools_changed().await }).await;
//! ```
//!
//! On tokio's paused clock the poll's sleeps advance the clock, so the deadline is in paused
//! time there.

use std::future::Future;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;

/// How long a wait lasts before the test fails: generous, the machine may be loaded.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// How often a condition is polled.
const POLL: Duration = Duration::from_millis(5);

/// A deadline for a poll written as a loop (when the condition needs `&mut` state, a request to
/// a peer say): [`Deadline::tick`] between two looks.
#[derive(Debug)]
pub struct Deadline {
    what: String,
    at: Instant,
}

impl Deadline {
    /// A deadline [`DEADLINE`] from now for `what` is awaited.
    pub fn new(what: impl Into<String>) -> Self {
        Deadline {
            what: what.into(),
            at: Instant::now() + DEADLINE,
        }
    }

    /// Sleeps one poll interval.
    ///
    /// # Panics
    /// When the deadline has passed, naming what was awaited.
    pub async fn tick(&self) {
        assert!(
            Instant::now() < self.at,
            "still waiting after {DEADLINE:?} for {}",
            self.what
        );
        tokio::time::sleep(POLL).await;
    }
}

/// [`until`] for a test without a runtime (one that polls a child process, say): the calling
/// thread blocks between two looks.
///
/// # Panics
/// When `condition` does not hold within [`DEADLINE`], naming `what` was awaited.
pub fn until_blocking(what: &str, mut condition: impl FnMut() -> bool) {
    let at = std::time::Instant::now() + DEADLINE;
    while !condition() {
        assert!(
            std::time::Instant::now() < at,
            "still waiting after {DEADLINE:?} for {what}"
        );
        std::thread::sleep(POLL);
    }
}

/// Polls `condition` until it holds.
///
/// # Panics
/// When it does not hold within [`DEADLINE`], naming `what` was awaited.
pub async fn until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Deadline::new(what);
    while !condition() {
        deadline.tick().await;
    }
}

/// Spawns `future` and returns its handle once it has been polled a first time: a waiter
/// (a `Notify`, a watch, a list-changed waiter) is then registered, so what the test does next
/// cannot come before it.
pub async fn spawn_polled<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (polled, first_poll) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(async move {
        let mut future = std::pin::pin!(future);
        let mut polled = Some(polled);
        std::future::poll_fn(|cx| {
            let p = future.as_mut().poll(cx);
            if let Some(polled) = polled.take() {
                let _ = polled.send(());
            }
            p
        })
        .await
    });
    // An error here is a panic in the first poll: the handle reports it.
    let _ = first_poll.await;
    handle
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use tokio::sync::Notify;

    use super::*;

    #[tokio::test(start_paused = true)]
    #[should_panic(expected = "still waiting after 20s for a condition that never holds")]
    async fn until_gives_up_at_the_deadline() {
        until("a condition that never holds", || false).await;
    }

    #[test]
    fn until_blocking_returns_once_the_condition_holds() {
        let mut looks = 0;
        until_blocking("the third look", || {
            looks += 1;
            looks == 3
        });
        assert_eq!(looks, 3);
    }

    #[tokio::test(start_paused = true)]
    async fn until_returns_once_the_condition_holds() {
        let flag = Arc::new(AtomicBool::new(false));
        let set = flag.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            set.store(true, Ordering::SeqCst);
        });
        let started = Instant::now();
        until("the flag", || flag.load(Ordering::SeqCst)).await;
        assert!(started.elapsed() >= Duration::from_secs(1));
        assert!(started.elapsed() < DEADLINE);
    }

    /// `notify_waiters` wakes only the waiters already registered: a waiter merely spawned
    /// would miss it, one from `spawn_polled` does not.
    #[tokio::test]
    async fn a_spawned_polled_waiter_is_registered_before_it_returns() {
        let notify = Arc::new(Notify::new());
        let n = notify.clone();
        let waiter = spawn_polled(async move { n.notified().await }).await;
        notify.notify_waiters();
        tokio::time::timeout(DEADLINE, waiter)
            .await
            .expect("woken")
            .expect("joined");
    }
}
