//! [`HttpClientConfig`]: every option of the Streamable HTTP client transport, each bound on by
//! default.
//!
//! | option | default | what it does |
//! |---|---|---|
//! | `headers` | none | extra headers on every HTTP request (e.g. `Authorization`) |
//! | `connect_timeout` | 10 s | bound on opening a TCP connection |
//! | `response_timeout` | 30 s | bound on the answer to a POST the sender waits for (`initialize`, notifications, responses) and on the legacy `endpoint` event |
//! | `send_order_wait` | 100 ms | how long a request's POST may hold back the next frame while waiting for its answer to start (keeps frames in order on a prompt server) |
//! | `max_event_bytes` | 16 MiB | bound on one SSE event and on one JSON body; larger ones are discarded |
//! | `max_concurrent_posts` | 256 | POSTs in flight at once; the next frame waits for a free slot |
//! | `max_reconnect_attempts` | 5 | consecutive failed reconnections of one SSE stream (POST or GET) before giving up |
//! | `default_retry` | 1 s | the wait before a reconnection when the server sent no `retry:` |
//! | `get_stream` | `true` | open the standalone GET stream after initialization (`[HT-12]`) |
//! | `legacy_fallback` | `true` | fall back to the 2024-11-05 HTTP+SSE transport when `initialize` gets 400, 404 or 405 |
//! | `inbound_queue` | 256 | messages queued for the engine before the HTTP readers wait |
//! | `user_agent` | `switchboard-http-client/<version>` | the `User-Agent` header |

use std::time::Duration;

use http::HeaderMap;

/// The default bound on opening a connection.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default bound on an awaited POST answer and on the legacy `endpoint` event.
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(30);
/// The default time a request's POST may hold back the next frame.
pub const DEFAULT_SEND_ORDER_WAIT: Duration = Duration::from_millis(100);
/// The default bound on one SSE event or JSON body: 16 MiB.
pub const DEFAULT_MAX_EVENT_BYTES: usize =
    switchboard_transport::codec::sse::DEFAULT_MAX_EVENT_BYTES;
/// The default bound on POSTs in flight.
pub const DEFAULT_MAX_CONCURRENT_POSTS: usize = 256;
/// The default bound on consecutive failed reconnections of one stream.
pub const DEFAULT_MAX_RECONNECT_ATTEMPTS: u32 = 5;
/// The default reconnection delay when the server sent no `retry:` (`[HT-11]`).
pub const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// The default number of inbound messages queued for the engine.
pub const DEFAULT_INBOUND_QUEUE: usize = 256;

/// How the client transport behaves and what it bounds. See the module docs for defaults.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpClientConfig {
    /// Extra headers sent on every HTTP request (for example `Authorization`).
    pub headers: HeaderMap,
    /// Bound on opening a TCP connection; `None`: the system's.
    pub connect_timeout: Option<Duration>,
    /// Bound on the answer to a POST the sending side waits for (`initialize`, notifications
    /// and responses: 202 expected) and on the legacy `endpoint` event. Past it the transport
    /// fails as on a network error.
    pub response_timeout: Duration,
    /// After a request's POST starts, the next frame waits up to this long for that POST's
    /// answer to begin, so that on a prompt server frames arrive in the order they were sent;
    /// a slower answer (a JSON reply to a long tool call) does not hold later frames longer.
    pub send_order_wait: Duration,
    /// Bound on one SSE event's data and on one `application/json` body.
    pub max_event_bytes: usize,
    /// POSTs in flight at once; a frame beyond waits for a slot (backpressure on the engine).
    pub max_concurrent_posts: usize,
    /// Consecutive failed reconnections of one SSE stream before it is given up. A connection
    /// that delivers an event resets the count.
    pub max_reconnect_attempts: u32,
    /// The wait before reconnecting when the server sent no `retry:` field.
    pub default_retry: Duration,
    /// Whether to open the standalone GET stream after initialization.
    pub get_stream: bool,
    /// Whether to fall back to the 2024-11-05 HTTP+SSE transport (SPEC-NOTES §6.9).
    pub legacy_fallback: bool,
    /// Inbound messages queued for the engine before the HTTP readers wait.
    pub inbound_queue: usize,
    /// The `User-Agent` header.
    pub user_agent: String,
}

impl std::fmt::Debug for HttpClientConfig {
    /// Shows header names only: values may be credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.keys().map(|k| k.as_str()).collect();
        f.debug_struct("HttpClientConfig")
            .field("headers", &names)
            .field("connect_timeout", &self.connect_timeout)
            .field("response_timeout", &self.response_timeout)
            .field("send_order_wait", &self.send_order_wait)
            .field("max_event_bytes", &self.max_event_bytes)
            .field("max_concurrent_posts", &self.max_concurrent_posts)
            .field("max_reconnect_attempts", &self.max_reconnect_attempts)
            .field("default_retry", &self.default_retry)
            .field("get_stream", &self.get_stream)
            .field("legacy_fallback", &self.legacy_fallback)
            .field("inbound_queue", &self.inbound_queue)
            .field("user_agent", &self.user_agent)
            .finish()
    }
}

impl Default for HttpClientConfig {
    fn default() -> Self {
        HttpClientConfig {
            headers: HeaderMap::new(),
            connect_timeout: Some(DEFAULT_CONNECT_TIMEOUT),
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
            send_order_wait: DEFAULT_SEND_ORDER_WAIT,
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            max_concurrent_posts: DEFAULT_MAX_CONCURRENT_POSTS,
            max_reconnect_attempts: DEFAULT_MAX_RECONNECT_ATTEMPTS,
            default_retry: DEFAULT_RETRY,
            get_stream: true,
            legacy_fallback: true,
            inbound_queue: DEFAULT_INBOUND_QUEUE,
            user_agent: concat!("switchboard-http-client/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

impl HttpClientConfig {
    /// Adds one header sent on every request.
    pub fn with_header(mut self, name: http::HeaderName, value: http::HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// Sets the connect timeout (`None`: the system's).
    pub fn with_connect_timeout(mut self, t: Option<Duration>) -> Self {
        self.connect_timeout = t;
        self
    }

    /// Sets the bound on awaited POST answers and on the legacy `endpoint` event.
    pub fn with_response_timeout(mut self, t: Duration) -> Self {
        self.response_timeout = t;
        self
    }

    /// Sets how long a request's POST may hold back the next frame.
    pub fn with_send_order_wait(mut self, t: Duration) -> Self {
        self.send_order_wait = t;
        self
    }

    /// Sets the bound on one SSE event or JSON body (at least 1 KiB).
    pub fn with_max_event_bytes(mut self, n: usize) -> Self {
        self.max_event_bytes = n.max(1024);
        self
    }

    /// Sets the bound on POSTs in flight (at least 1).
    pub fn with_max_concurrent_posts(mut self, n: usize) -> Self {
        self.max_concurrent_posts = n.max(1);
        self
    }

    /// Sets the bound on consecutive failed reconnections of one stream.
    pub fn with_max_reconnect_attempts(mut self, n: u32) -> Self {
        self.max_reconnect_attempts = n;
        self
    }

    /// Sets the reconnection delay used when the server sent no `retry:`.
    pub fn with_default_retry(mut self, t: Duration) -> Self {
        self.default_retry = t;
        self
    }

    /// Opens the standalone GET stream after initialization, or not.
    pub fn with_get_stream(mut self, on: bool) -> Self {
        self.get_stream = on;
        self
    }

    /// Allows the legacy HTTP+SSE fallback, or not.
    pub fn with_legacy_fallback(mut self, on: bool) -> Self {
        self.legacy_fallback = on;
        self
    }

    /// Sets the inbound queue (at least 1).
    pub fn with_inbound_queue(mut self, n: usize) -> Self {
        self.inbound_queue = n.max(1);
        self
    }

    /// Sets the `User-Agent` header.
    pub fn with_user_agent(mut self, ua: impl Into<String>) -> Self {
        self.user_agent = ua.into();
        self
    }
}
