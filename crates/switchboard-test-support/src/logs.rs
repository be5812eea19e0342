//! (feature `logs`) Counting what is logged: a tracing subscriber scoped to the current thread
//! whose writer only counts bytes, for tests that bound the log a hostile peer can cause.
//!
//! ```text
//! let (logged, _guard) = count_logs(tracing::Level::TRACE);
//! // ... the hostile input ...
//! assert!(logged.bytes() < 64 * 1024);
//! ```
//!
//! The subscriber is the thread's default (`tracing::subscriber::set_default`), not the
//! process's: tests sharing a binary do not see each other's lines. On tokio's current-thread
//! runtime (`#[tokio::test]`) the tasks the test spawns log on its thread too.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tracing::subscriber::DefaultGuard;

/// A tracing writer that counts the bytes written to it.
#[derive(Debug, Clone, Default)]
pub struct LogBytes(Arc<AtomicUsize>);

impl LogBytes {
    /// The bytes written so far.
    pub fn bytes(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

impl Write for LogBytes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.fetch_add(buf.len(), Ordering::Relaxed);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Counts every byte logged at `level` or more severe on this thread while the guard lives.
pub fn count_logs(level: tracing::Level) -> (LogBytes, DefaultGuard) {
    let counter = LogBytes::default();
    let writer = counter.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(move || writer.clone())
        .finish();
    (counter, tracing::subscriber::set_default(subscriber))
}
