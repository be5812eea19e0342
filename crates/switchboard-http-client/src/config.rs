//! The Streamable HTTP client transport's options: [`HttpClientConfig`].

use std::time::Duration;

use http::HeaderMap;

/// The default bound on opening a connection.
pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default bound on an awaited POST answer, a GET's headers, `DELETE` and the HTTP+SSE
/// `endpoint` event.
pub(crate) const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(30);
/// The default bound from sending a request's POST to its answer's headers.
pub(crate) const DEFAULT_POST_HEADER_TIMEOUT: Duration = Duration::from_secs(300);
/// The default bound from sending a request's POST to the end of an answer that does not stream.
pub(crate) const DEFAULT_POST_TIMEOUT: Duration = Duration::from_secs(300);
/// The default bound on silence on a POST's SSE answer.
pub(crate) const DEFAULT_SSE_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// The default bound on redirects followed per request (same origin only).
pub(crate) const DEFAULT_MAX_REDIRECTS: usize = 3;
/// The default time a request's POST may hold back the next frame.
pub(crate) const DEFAULT_SEND_ORDER_WAIT: Duration = Duration::from_millis(100);
/// The default bound on one SSE event or JSON body: 16 MiB.
pub(crate) const DEFAULT_MAX_EVENT_BYTES: usize =
    switchboard_transport::codec::sse::DEFAULT_MAX_EVENT_BYTES;
/// The default bound on POSTs in flight.
pub(crate) const DEFAULT_MAX_CONCURRENT_POSTS: usize = 256;
/// The default bound on consecutive failed reconnections of one stream.
pub(crate) const DEFAULT_MAX_RECONNECT_ATTEMPTS: u32 = 5;
/// The default bound on the reconnections of one POST stream in all.
pub(crate) const DEFAULT_MAX_RESUMPTIONS: u32 = 1000;
/// The default reconnection delay when the server sent no `retry:` (`[HT-11]`).
pub(crate) const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// The default shortest reconnection delay, whatever the server's `retry:` says: a server that
/// closes every connection at once with `retry: 0` gets no busy loop.
pub(crate) const DEFAULT_MIN_RETRY: Duration = Duration::from_millis(100);
/// The default longest reconnection delay, whatever the server's `retry:` says: a stream is not
/// left waiting for days on `retry: 999999999`.
pub(crate) const DEFAULT_MAX_RETRY: Duration = Duration::from_secs(30);
/// The default number of inbound messages queued for the engine.
pub(crate) const DEFAULT_INBOUND_QUEUE: usize = 256;
/// The default bound on the bytes of the messages queued for the engine: 64 MiB.
pub(crate) const DEFAULT_MAX_INBOUND_BYTES: usize = 64 * 1024 * 1024;
/// The largest `max_inbound_bytes` accepted (the byte budget is counted in `u32` permits).
const MAX_INBOUND_BYTES_CAP: usize = u32::MAX as usize;

/// Every option of the Streamable HTTP client transport, each bound on by
/// default.
///
/// | option | default | what it does |
/// |---|---|---|
/// | `headers` | none | extra headers on every HTTP request (e.g. `Authorization`) |
/// | `connect_timeout` | 10 s | bound on opening a TCP connection |
/// | `response_timeout` | 30 s | bound on the answer to a POST the sender waits for (`initialize`, notifications, responses), on the headers of a GET (resumption, the standalone stream), on `DELETE` and on the HTTP+SSE `endpoint` event |
/// | `post_header_timeout` | 5 min | from sending a request's POST to its answer's status and headers (a server answering with JSON sends them when the result is ready) |
/// | `post_timeout` | 5 min | from sending a request's POST to the last byte of an answer that does not stream (JSON, an error body) |
/// | `sse_idle_timeout` | 5 min | the longest silence (no byte: no event, progress or keep-alive comment) on a POST's SSE answer before its requests fail |
/// | `max_redirects` | 3 | redirects followed per request, on the endpoint's origin only (see below) |
/// | `send_order_wait` | 100 ms | how long a notification or response sent after requests waits for their answers to start (keeps a cancellation behind its request on a prompt server); requests never wait for one another |
/// | `max_event_bytes` | 16 MiB | bound on one SSE event and on one JSON body; larger ones are discarded |
/// | `max_concurrent_posts` | 256 | POSTs in flight at once; the next frame waits for a free slot |
/// | `max_reconnect_attempts` | 5 | consecutive failed reconnections of one SSE stream (POST or GET) before giving up |
/// | `max_resumptions` | 1000 | reconnections of one POST stream in all, successful or not |
/// | `default_retry` | 1 s | the wait before a reconnection when the server sent no `retry:` |
/// | `min_retry`, `max_retry` | 100 ms, 30 s | the range a server's `retry:` is clamped to |
/// | `get_stream` | `true` | open the standalone GET stream after initialization (`[HT-12]`) |
/// | `http_sse_fallback` | `true` | fall back to the 2024-11-05 HTTP+SSE transport when `initialize` gets 400, 404 or 405 |
/// | `inbound_queue` | 256 | messages queued for the engine before the HTTP readers wait |
/// | `max_inbound_bytes` | 64 MiB | bytes of the messages queued for the engine before the HTTP readers wait |
/// | `user_agent` | `switchboard-http-client/<version>` | the `User-Agent` header |
/// | `auth` | none | the [`crate::auth::AuthProvider`]: a Bearer token on every request, authorization on 401, step-up on 403 |
///
/// A timeout fails only what it bounds: the requests of that POST get a local -32603 error whose
/// `data` is `{reason: "http_timeout", timeout: "<option name>", ms}`, the POST's slot is freed
/// and the session goes on. Past `response_timeout` on `initialize` or on a frame without
/// requests (a notification or a response, which the sender waits for) the transport fails, as
/// on a network error.
///
/// Redirects are followed only when they stay on the endpoint's origin (scheme, host and port),
/// keep the method (a POST or `DELETE` follows 307 and 308 only) and carry no user info, at
/// most `max_redirects` per request. Any other redirect is not followed and no request is made
/// to its target: the session id, `Authorization` and the configured `headers` stay with the
/// endpoint's origin.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpClientConfig {
    /// Extra headers sent on every HTTP request (for example `Authorization`).
    pub headers: HeaderMap,
    /// Bound on opening a TCP connection; `None`: the system's.
    pub connect_timeout: Option<Duration>,
    /// Bound on the answer to a POST the sending side waits for (`initialize`, notifications
    /// and responses: 202 expected), on the status and headers of a GET (a resumption, the
    /// standalone stream), on `DELETE` and on the HTTP+SSE `endpoint` event. Past it an awaited
    /// POST fails the transport as a network error would; a GET counts as a failed reconnection.
    pub response_timeout: Duration,
    /// From sending a request's POST to its answer's status and headers. A server answering
    /// with JSON sends them when the result is ready, so this bounds the longest such request.
    /// Past it the POST's requests get a local error and its slot is freed.
    pub post_header_timeout: Duration,
    /// From sending a request's POST to the last byte of an answer that does not stream (a JSON
    /// body, an error body). Past it the POST's requests get a local error.
    pub post_timeout: Duration,
    /// The longest silence on a POST's SSE answer: any byte (an event, a progress notification,
    /// a keep-alive comment) starts it again. Past it the stream's open requests get a local
    /// error and its slot is freed. The standalone GET stream may be silent for as long as the
    /// server likes.
    pub sse_idle_timeout: Duration,
    /// Redirects followed per request, on the endpoint's origin only; 0 follows none.
    pub max_redirects: usize,
    /// A notification or response sent after requests waits up to this long (from each
    /// request's sending) for their answers to begin, so that on a prompt server it arrives
    /// after them (a `notifications/cancelled` never overtakes its request); a slower answer
    /// does not hold it longer. Requests never wait for one another: each is its own POST.
    pub send_order_wait: Duration,
    /// Bound on one SSE event's data and on one `application/json` body.
    pub max_event_bytes: usize,
    /// POSTs in flight at once; a frame beyond waits for a slot (backpressure on the engine).
    pub max_concurrent_posts: usize,
    /// Consecutive failed reconnections of one SSE stream before it is given up. A connection
    /// that delivers an event resets the count.
    pub max_reconnect_attempts: u32,
    /// Reconnections of one POST stream in all, successful or not: a server that closes every
    /// connection after an event (SEP-1699 polling) is followed this many times, then the
    /// stream's open requests get a local error. The GET stream is not bounded so.
    pub max_resumptions: u32,
    /// The wait before reconnecting when the server sent no `retry:` field.
    pub default_retry: Duration,
    /// The shortest wait before reconnecting, whatever the server's `retry:` says.
    pub min_retry: Duration,
    /// The longest wait before reconnecting, whatever the server's `retry:` says.
    pub max_retry: Duration,
    /// Whether to open the standalone GET stream after initialization.
    pub get_stream: bool,
    /// Whether to fall back to the 2024-11-05 HTTP+SSE transport (SPEC-NOTES §6.9).
    pub http_sse_fallback: bool,
    /// Inbound messages queued for the engine before the HTTP readers wait.
    pub inbound_queue: usize,
    /// Bytes of the inbound messages queued for the engine before the HTTP readers wait (a
    /// message larger than the whole budget waits for an empty queue).
    pub max_inbound_bytes: usize,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// The authorization provider: its token goes on every request, and it answers 401 and
    /// 403 `insufficient_scope` (see [`crate::AuthProvider`]).
    pub auth: Option<std::sync::Arc<dyn crate::auth::AuthProvider>>,
}

impl std::fmt::Debug for HttpClientConfig {
    /// Shows header names only: values may be credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.keys().map(|k| k.as_str()).collect();
        f.debug_struct("HttpClientConfig")
            .field("headers", &names)
            .field("connect_timeout", &self.connect_timeout)
            .field("response_timeout", &self.response_timeout)
            .field("post_header_timeout", &self.post_header_timeout)
            .field("post_timeout", &self.post_timeout)
            .field("sse_idle_timeout", &self.sse_idle_timeout)
            .field("max_redirects", &self.max_redirects)
            .field("send_order_wait", &self.send_order_wait)
            .field("max_event_bytes", &self.max_event_bytes)
            .field("max_concurrent_posts", &self.max_concurrent_posts)
            .field("max_reconnect_attempts", &self.max_reconnect_attempts)
            .field("max_resumptions", &self.max_resumptions)
            .field("default_retry", &self.default_retry)
            .field("min_retry", &self.min_retry)
            .field("max_retry", &self.max_retry)
            .field("get_stream", &self.get_stream)
            .field("http_sse_fallback", &self.http_sse_fallback)
            .field("inbound_queue", &self.inbound_queue)
            .field("max_inbound_bytes", &self.max_inbound_bytes)
            .field("user_agent", &self.user_agent)
            .field("auth", &self.auth.is_some())
            .finish()
    }
}

impl Default for HttpClientConfig {
    fn default() -> Self {
        HttpClientConfig {
            headers: HeaderMap::new(),
            connect_timeout: Some(DEFAULT_CONNECT_TIMEOUT),
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
            post_header_timeout: DEFAULT_POST_HEADER_TIMEOUT,
            post_timeout: DEFAULT_POST_TIMEOUT,
            sse_idle_timeout: DEFAULT_SSE_IDLE_TIMEOUT,
            max_redirects: DEFAULT_MAX_REDIRECTS,
            send_order_wait: DEFAULT_SEND_ORDER_WAIT,
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            max_concurrent_posts: DEFAULT_MAX_CONCURRENT_POSTS,
            max_reconnect_attempts: DEFAULT_MAX_RECONNECT_ATTEMPTS,
            max_resumptions: DEFAULT_MAX_RESUMPTIONS,
            default_retry: DEFAULT_RETRY,
            min_retry: DEFAULT_MIN_RETRY,
            max_retry: DEFAULT_MAX_RETRY,
            get_stream: true,
            http_sse_fallback: true,
            inbound_queue: DEFAULT_INBOUND_QUEUE,
            max_inbound_bytes: DEFAULT_MAX_INBOUND_BYTES,
            user_agent: concat!("switchboard-http-client/", env!("CARGO_PKG_VERSION")).to_owned(),
            auth: None,
        }
    }
}

impl HttpClientConfig {
    /// Sets the authorization provider (see [`crate::AuthProvider`]).
    pub fn with_auth(mut self, provider: std::sync::Arc<dyn crate::auth::AuthProvider>) -> Self {
        self.auth = Some(provider);
        self
    }

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

    /// Sets the bound on awaited POST answers, GET headers, `DELETE` and the HTTP+SSE `endpoint`
    /// event.
    pub fn with_response_timeout(mut self, t: Duration) -> Self {
        self.response_timeout = t;
        self
    }

    /// Sets the bound from sending a request's POST to its answer's headers.
    pub fn with_post_header_timeout(mut self, t: Duration) -> Self {
        self.post_header_timeout = t;
        self
    }

    /// Sets the bound from sending a request's POST to the end of an answer that does not
    /// stream.
    pub fn with_post_timeout(mut self, t: Duration) -> Self {
        self.post_timeout = t;
        self
    }

    /// Sets the longest silence on a POST's SSE answer.
    pub fn with_sse_idle_timeout(mut self, t: Duration) -> Self {
        self.sse_idle_timeout = t;
        self
    }

    /// Sets how many same-origin redirects a request may follow (0: none).
    pub fn with_max_redirects(mut self, n: usize) -> Self {
        self.max_redirects = n;
        self
    }

    /// Sets how long a notification or response may wait for the requests sent before it.
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

    /// Sets the bound on the reconnections of one POST stream in all.
    pub fn with_max_resumptions(mut self, n: u32) -> Self {
        self.max_resumptions = n;
        self
    }

    /// Sets the reconnection delay used when the server sent no `retry:`.
    pub fn with_default_retry(mut self, t: Duration) -> Self {
        self.default_retry = t;
        self
    }

    /// Sets the range a server's `retry:` is clamped to (`max` is raised to `min` if below it).
    pub fn with_retry_range(mut self, min: Duration, max: Duration) -> Self {
        self.min_retry = min;
        self.max_retry = max.max(min);
        self
    }

    /// The wait before a reconnection: the server's `retry:` clamped to
    /// [`min_retry`](Self::min_retry)..=[`max_retry`](Self::max_retry), or
    /// [`default_retry`](Self::default_retry) when it sent none.
    pub fn reconnect_delay(&self, server_retry: Option<Duration>) -> Duration {
        match server_retry {
            Some(r) => r.clamp(self.min_retry, self.max_retry.max(self.min_retry)),
            None => self.default_retry,
        }
    }

    /// Opens the standalone GET stream after initialization, or not.
    pub fn with_get_stream(mut self, on: bool) -> Self {
        self.get_stream = on;
        self
    }

    /// Allows the HTTP+SSE fallback, or not.
    pub fn with_http_sse_fallback(mut self, on: bool) -> Self {
        self.http_sse_fallback = on;
        self
    }

    /// Sets the inbound queue (at least 1).
    pub fn with_inbound_queue(mut self, n: usize) -> Self {
        self.inbound_queue = n.max(1);
        self
    }

    /// Sets the bound on the bytes queued for the engine (1 KiB to 4 GiB).
    pub fn with_max_inbound_bytes(mut self, n: usize) -> Self {
        self.max_inbound_bytes = n.clamp(1024, MAX_INBOUND_BYTES_CAP);
        self
    }

    /// Sets the `User-Agent` header.
    pub fn with_user_agent(mut self, ua: impl Into<String>) -> Self {
        self.user_agent = ua.into();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_retry_is_clamped_to_the_range() {
        let c = HttpClientConfig::default();
        let ms = Duration::from_millis;
        assert_eq!(c.reconnect_delay(Some(ms(999_999_999))), DEFAULT_MAX_RETRY);
        assert_eq!(c.reconnect_delay(Some(ms(u64::MAX))), DEFAULT_MAX_RETRY);
        assert_eq!(c.reconnect_delay(Some(ms(0))), DEFAULT_MIN_RETRY);
        assert_eq!(c.reconnect_delay(Some(ms(500))), ms(500));
        assert_eq!(c.reconnect_delay(None), DEFAULT_RETRY);
        let c = c.with_retry_range(ms(10), ms(5));
        assert_eq!(c.reconnect_delay(Some(ms(999_999_999))), ms(10));
    }
}
