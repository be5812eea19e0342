//! Session configuration: every bound the engine enforces, on by default.

use std::time::Duration;

use crate::framelog::FrameHook;
pub(crate) use crate::throttle::DEFAULT_LOG_LINES_PER_SECOND;

/// Default bound on one inbound frame: 16 MiB.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;
/// Default bound on the peer's requests being handled at once.
pub(crate) const DEFAULT_MAX_IN_FLIGHT: usize = 256;
/// Default bound on our own requests waiting for answers.
pub(crate) const DEFAULT_MAX_PENDING: usize = 1024;
/// Default bound on frames queued for the transport before senders wait.
pub(crate) const DEFAULT_OUTBOUND_QUEUE: usize = 1024;
/// Default time requests in flight may still finish after a clean end of input.
pub(crate) const DEFAULT_EOF_GRACE: Duration = Duration::from_secs(2);
/// Default timeout of an outbound request.
pub(crate) const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How a session behaves and what it bounds.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionConfig {
    /// Largest inbound frame accepted, in bytes; a larger one gets -32600 and is discarded.
    pub max_frame_bytes: usize,
    /// Most peer requests handled at once; one more gets -32603 with `reason: "too_many_requests"`.
    pub max_in_flight: usize,
    /// Most of our requests waiting for answers; one more fails locally.
    pub max_pending: usize,
    /// Frames queued for the transport before senders wait (backpressure).
    pub outbound_queue: usize,
    /// Timeout of an outbound request unless the call sets its own; `None`: wait forever.
    pub request_timeout: Option<Duration>,
    /// Sees every frame in both directions.
    pub frame_hook: Option<FrameHook>,
    /// A name for this side in logs (e.g. "server", "client").
    pub name: &'static str,
    /// After a clean end of input, how long requests already being handled may still finish.
    pub eof_grace: Duration,
    /// Log lines the peer's input may cause per second (bad frames, orphan responses, stray
    /// cancellations, handler panics), also the burst; the rest are counted and reported as
    /// one line. At least 1.
    pub log_lines_per_second: u32,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            max_pending: DEFAULT_MAX_PENDING,
            outbound_queue: DEFAULT_OUTBOUND_QUEUE,
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            frame_hook: None,
            name: "peer",
            eof_grace: DEFAULT_EOF_GRACE,
            log_lines_per_second: DEFAULT_LOG_LINES_PER_SECOND,
        }
    }
}

impl SessionConfig {
    /// Sets the frame-size bound.
    pub fn with_max_frame_bytes(mut self, n: usize) -> Self {
        self.max_frame_bytes = n;
        self
    }

    /// Sets the in-flight bound for the peer's requests.
    pub fn with_max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }

    /// Sets the bound on our own pending requests.
    pub fn with_max_pending(mut self, n: usize) -> Self {
        self.max_pending = n.max(1);
        self
    }

    /// Sets the default request timeout.
    pub fn with_request_timeout(mut self, t: Option<Duration>) -> Self {
        self.request_timeout = t;
        self
    }

    /// Installs a frame-log hook.
    pub fn with_frame_hook(mut self, hook: FrameHook) -> Self {
        self.frame_hook = Some(hook);
        self
    }

    /// Sets how long requests in flight may finish after a clean end of input.
    pub fn with_eof_grace(mut self, grace: Duration) -> Self {
        self.eof_grace = grace;
        self
    }

    /// Sets how many log lines per second the peer's input may cause (at least 1).
    pub fn with_log_lines_per_second(mut self, n: u32) -> Self {
        self.log_lines_per_second = n.max(1);
        self
    }

    /// Names this side in logs.
    pub fn with_name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }
}
