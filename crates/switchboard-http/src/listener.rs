//! The accept loop (server side): every TCP connection the endpoint and the reverse proxy
//! accept, with the bounds a server reachable by anyone needs ([`ConnectionLimits`]).
//!
//! | bound | default | when it is crossed |
//! |---|---|---|
//! | `max_connections` | 1024 | a further connection is answered 503 (`too_many_connections`) and closed |
//! | `keep_alive_timeout` | 60 s | a connection that has sent nothing since it opened, or since its last answer, is closed |
//! | `header_read_timeout` | 10 s | a request whose headers are not complete this long after their first byte: the connection is closed |
//! | `body_read_timeout` | 30 s | a body not received whole in this time is answered 408 and the connection closed (enforced where the body is read) |
//! | `write_timeout` | 30 s | a connection whose socket takes no byte for this long (the client does not read) is closed |
//!
//! Each connection is served by hyper (HTTP/1.1) in its own task, which also runs a watchdog:
//! the connection's clock ([`ConnClock`]) is kept by a wrapper around the socket (first byte of a
//! request, a write that cannot proceed) and around each request (in flight until its response
//! body is dropped), so the hot path costs a few relaxed atomic operations and no allocation.
//! A request in flight is never cut for being slow: a long tool call or an SSE stream with no
//! event lives as long as its client reads.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use futures::StreamExt;
use http::{Request, Response};
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The default bound on connections served at once.
pub(crate) const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// The default time a request's headers may take, from their first byte.
pub(crate) const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time an idle connection is kept open.
pub(crate) const DEFAULT_KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(60);
/// The default time a request body may take to arrive whole.
pub(crate) const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The default time a socket may refuse every byte written to it.
pub(crate) const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Refused connections answered at once (each for at most [`REFUSAL_TIME`]); beyond, a further
/// connection is closed without an answer.
const MAX_REFUSALS: usize = 32;
/// How long a refused connection is given to send its request head and read the 503.
const REFUSAL_TIME: Duration = Duration::from_secs(2);
/// How much of a refused connection's request is read before the 503 goes out.
const REFUSAL_READ: usize = 16 * 1024;
/// "Never" in a [`ConnClock`] field.
const NEVER: u64 = u64::MAX;

/// The bounds on each TCP connection (see the module docs for defaults). A `None` timeout is off.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionLimits {
    /// Connections served at once; a further one is answered 503 and closed.
    pub max_connections: usize,
    /// How long a request's headers may take, counted from their first byte.
    pub header_read_timeout: Option<Duration>,
    /// How long a connection may wait for a request: since it opened, or since its last answer
    /// was sent.
    pub keep_alive_timeout: Option<Duration>,
    /// How long a request body may take to arrive whole; beyond, 408 and the connection closes.
    pub body_read_timeout: Option<Duration>,
    /// How long a socket may take no byte of an answer (a client that does not read) before the
    /// connection is closed.
    pub write_timeout: Option<Duration>,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_read_timeout: Some(DEFAULT_HEADER_READ_TIMEOUT),
            keep_alive_timeout: Some(DEFAULT_KEEP_ALIVE_TIMEOUT),
            body_read_timeout: Some(DEFAULT_BODY_READ_TIMEOUT),
            write_timeout: Some(DEFAULT_WRITE_TIMEOUT),
        }
    }
}

impl ConnectionLimits {
    /// Sets the bound on connections served at once (at least 1).
    pub fn with_max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        self
    }

    /// Sets the header read timeout (`None`: off).
    pub fn with_header_read_timeout(mut self, t: Option<Duration>) -> Self {
        self.header_read_timeout = t;
        self
    }

    /// Sets the keep-alive timeout of an idle connection (`None`: off).
    pub fn with_keep_alive_timeout(mut self, t: Option<Duration>) -> Self {
        self.keep_alive_timeout = t;
        self
    }

    /// Sets the body read timeout (`None`: off).
    pub fn with_body_read_timeout(mut self, t: Option<Duration>) -> Self {
        self.body_read_timeout = t;
        self
    }

    /// Sets the write timeout (`None`: off).
    pub fn with_write_timeout(mut self, t: Option<Duration>) -> Self {
        self.write_timeout = t;
        self
    }

    /// The shortest timeout that is on: the watchdog looks at a connection at least this often.
    fn shortest(&self) -> Option<Duration> {
        [
            self.header_read_timeout,
            self.keep_alive_timeout,
            self.write_timeout,
        ]
        .into_iter()
        .flatten()
        .min()
    }
}

/// What every accepted socket gets: `TCP_NODELAY` (a response is one small write; Nagle would
/// hold it back for the peer's delayed ACK).
pub(crate) fn tune(tcp: &TcpStream) {
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::debug!(error = %e, "TCP_NODELAY not set");
    }
}

/// Serves `router` on `listener` within `limits` until `shutdown` resolves; then stops
/// accepting, lets each connection finish its requests in flight, and returns once every
/// connection has ended.
///
/// # Errors
/// None today: accept errors are logged and retried. The `Result` leaves room for listener
/// failures that should end serving.
pub(crate) async fn run<F>(
    listener: TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    shutdown: F,
) -> io::Result<()>
where
    F: Future<Output = ()> + Send,
{
    let max = limits
        .max_connections
        .clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
    let permits = Arc::new(Semaphore::new(max));
    let refusals = Arc::new(Semaphore::new(MAX_REFUSALS));
    let stop = CancellationToken::new();
    let limits = Arc::new(limits);
    let mut shutdown = pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = &mut shutdown => break,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                // Out of file descriptors, say: wait a little rather than spin.
                crate::throttle::warn_throttled!(error = %e, "accept failed; retrying shortly");
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(100)) => continue,
                    () = &mut shutdown => break,
                }
            }
        };
        tune(&tcp);
        match permits.clone().try_acquire_owned() {
            Ok(permit) => {
                let conn = connection(tcp, router.clone(), limits.clone(), stop.clone(), permit);
                tokio::spawn(conn);
            }
            Err(_) => {
                crate::throttle::warn_throttled!(
                    limit = max,
                    "connection refused with 503: too many connections"
                );
                refuse(tcp, &refusals);
            }
        }
    }
    stop.cancel();
    // Every connection holds a permit until it ends.
    let _all = permits.acquire_many(max as u32).await;
    Ok(())
}

/// Accept errors that concern one connection only (it went away before it was accepted).
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Answers a connection beyond the bound with 503 and closes it, in a task of its own bounded
/// in time; beyond [`MAX_REFUSALS`] such tasks, the connection is closed at once.
fn refuse(mut tcp: TcpStream, refusals: &Arc<Semaphore>) {
    let Ok(permit) = refusals.clone().try_acquire_owned() else {
        tracing::debug!("connection closed without an answer: too many connections");
        return;
    };
    tokio::spawn(async move {
        let _permit = permit;
        let _ = tokio::time::timeout(REFUSAL_TIME, async {
            // The request head is read first: closing a socket with unread bytes resets it,
            // and the client could lose the answer.
            let mut head = Vec::with_capacity(1024);
            let mut chunk = [0u8; 1024];
            while head.len() < REFUSAL_READ && !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = tcp.read(&mut chunk).await?;
                if n == 0 {
                    break;
                }
                head.extend_from_slice(&chunk[..n]);
            }
            tcp.write_all(&busy_answer()).await?;
            tcp.shutdown().await?;
            // What else the client sends (a body) is read and dropped, briefly, for the same
            // reason.
            let mut drained = 0;
            while drained < REFUSAL_READ {
                match tokio::time::timeout(Duration::from_millis(200), tcp.read(&mut chunk)).await {
                    Ok(Ok(n)) if n > 0 => drained += n,
                    _ => break,
                }
            }
            Ok::<(), io::Error>(())
        })
        .await;
    });
}

/// The 503 a connection beyond the bound gets: a JSON-RPC error without id, as every refusal.
fn busy_answer() -> Vec<u8> {
    let body = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Service unavailable: too many connections","data":{"reason":"too_many_connections"}}}"#;
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// One connection: hyper serves it while the watchdog closes it when a bound is crossed, and
/// a shutdown lets its requests in flight finish.
async fn connection(
    tcp: TcpStream,
    router: axum::Router,
    limits: Arc<ConnectionLimits>,
    stop: CancellationToken,
    _permit: OwnedSemaphorePermit,
) {
    let clock = Arc::new(ConnClock::new());
    let io = TokioIo::new(WatchedIo {
        inner: tcp,
        clock: clock.clone(),
    });
    let service = ConnService {
        router,
        clock: clock.clone(),
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    // The watchdog below keeps the time; hyper's own header timer would also count idle time.
    builder.header_read_timeout(None).keep_alive(true);
    let mut conn = pin!(builder.serve_connection(io, service));
    let Some(tick) = limits.shortest() else {
        // No timeout: only the shutdown matters.
        tokio::select! {
            _ = conn.as_mut() => return,
            () = stop.cancelled() => conn.as_mut().graceful_shutdown(),
        }
        let _ = conn.await;
        return;
    };
    let mut draining = false;
    let sleep = tokio::time::sleep(tick);
    let mut sleep = pin!(sleep);
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                return;
            }
            () = &mut sleep => {
                let now = Instant::now();
                match clock.verdict(&limits, now) {
                    Ok(None) => sleep.as_mut().reset(now + tick),
                    Ok(Some(at)) => sleep.as_mut().reset(at.min(now + tick)),
                    Err(why) => {
                        tracing::debug!(reason = why, "connection closed: a bound was crossed");
                        return;
                    }
                }
            }
            () = stop.cancelled(), if !draining => {
                draining = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// The state of one connection, in milliseconds since it opened ([`NEVER`] when unset).
struct ConnClock {
    start: Instant,
    /// Requests whose response body has not been dropped yet.
    in_flight: AtomicU32,
    /// When the last request ended (or the connection opened).
    idle_since: AtomicU64,
    /// When the first byte of the next request's head arrived.
    head_from: AtomicU64,
    /// Since when a write has been waiting for the socket.
    blocked_from: AtomicU64,
}

impl ConnClock {
    fn new() -> Self {
        ConnClock {
            start: Instant::now(),
            in_flight: AtomicU32::new(0),
            idle_since: AtomicU64::new(0),
            head_from: AtomicU64::new(NEVER),
            blocked_from: AtomicU64::new(NEVER),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(NEVER - 1)
    }

    fn at(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    /// Bytes were read: between requests, they begin the next request's head.
    fn read_some(&self) {
        if self.in_flight.load(Ordering::Relaxed) == 0
            && self.head_from.load(Ordering::Relaxed) == NEVER
        {
            self.head_from.store(self.now_ms(), Ordering::Relaxed);
        }
    }

    /// A write went through (`false`) or must wait for the socket (`true`).
    fn wrote(&self, blocked: bool) {
        let from = self.blocked_from.load(Ordering::Relaxed);
        if blocked && from == NEVER {
            self.blocked_from.store(self.now_ms(), Ordering::Relaxed);
        } else if !blocked && from != NEVER {
            self.blocked_from.store(NEVER, Ordering::Relaxed);
        }
    }

    fn request_started(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        self.head_from.store(NEVER, Ordering::Relaxed);
    }

    fn request_ended(&self) {
        if self.in_flight.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.idle_since.store(self.now_ms(), Ordering::Relaxed);
        }
    }

    /// The earliest deadline now in force (`Ok(None)`: none), or why the connection must close.
    fn verdict(
        &self,
        limits: &ConnectionLimits,
        now: Instant,
    ) -> Result<Option<Instant>, &'static str> {
        let mut earliest: Option<Instant> = None;
        let mut check = |from: u64, limit: Option<Duration>, why| {
            let (Some(limit), true) = (limit, from != NEVER) else {
                return Ok(());
            };
            let at = self.at(from) + limit;
            if at <= now {
                return Err(why);
            }
            earliest = Some(earliest.map_or(at, |e| e.min(at)));
            Ok(())
        };
        check(
            self.blocked_from.load(Ordering::Relaxed),
            limits.write_timeout,
            "the client takes no bytes (write timeout)",
        )?;
        if self.in_flight.load(Ordering::Relaxed) == 0 {
            let head = self.head_from.load(Ordering::Relaxed);
            if head == NEVER {
                check(
                    self.idle_since.load(Ordering::Relaxed),
                    limits.keep_alive_timeout,
                    "idle (keep-alive timeout)",
                )?;
            } else {
                check(
                    head,
                    limits.header_read_timeout,
                    "request headers incomplete (header read timeout)",
                )?;
            }
        }
        Ok(earliest)
    }
}

/// The socket, with its reads and writes noted on the connection's clock.
struct WatchedIo {
    inner: TcpStream,
    clock: Arc<ConnClock>,
}

impl AsyncRead for WatchedIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut this.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.clock.read_some();
        }
        r
    }
}

impl AsyncWrite for WatchedIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.clock.wrote(r.is_pending());
        r
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.clock.wrote(r.is_pending());
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// The router, with each request counted in flight until its response body is dropped.
struct ConnService {
    router: axum::Router,
    clock: Arc<ConnClock>,
}

impl hyper::service::Service<Request<Incoming>> for ConnService {
    type Response = Response<WatchedBody>;
    type Error = Infallible;
    type Future = WatchedFuture<axum::routing::future::RouteFuture<Infallible>>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        let guard = InFlight::start(self.clock.clone());
        // `Router` is always ready: `poll_ready` has nothing to wait for.
        let mut router = self.router.clone();
        let inner = tower::Service::call(&mut router, req.map(Body::new));
        WatchedFuture {
            inner,
            guard: Some(guard),
        }
    }
}

/// One request in flight on its connection's clock.
struct InFlight(Arc<ConnClock>);

impl InFlight {
    fn start(clock: Arc<ConnClock>) -> Self {
        clock.request_started();
        InFlight(clock)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.request_ended();
    }
}

/// The router's future; its response body carries the request's [`InFlight`] on.
struct WatchedFuture<F> {
    inner: F,
    guard: Option<InFlight>,
}

impl<F> Future for WatchedFuture<F>
where
    F: Future<Output = Result<Response<Body>, Infallible>> + Unpin,
{
    type Output = Result<Response<WatchedBody>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let Poll::Ready(result) = Pin::new(&mut this.inner).poll(cx) else {
            return Poll::Pending;
        };
        let guard = this.guard.take();
        Poll::Ready(result.map(|resp| {
            resp.map(|inner| WatchedBody {
                inner,
                _guard: guard,
            })
        }))
    }
}

/// A response body that keeps its request in flight until it is dropped.
struct WatchedBody {
    inner: Body,
    _guard: Option<InFlight>,
}

impl http_body::Body for WatchedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Why a request body could not be read.
pub(crate) enum BodyError {
    /// Over the bound (413).
    TooLarge,
    /// The connection failed (400).
    Read,
    /// Not whole within the body read timeout (408).
    TimedOut(Duration),
}

/// The body as one buffer, at most `limit` bytes, within `timeout` (the body read timeout of
/// [`ConnectionLimits`]; it applies wherever the service is mounted).
pub(crate) async fn read_body(
    body: Body,
    limit: usize,
    timeout: Option<Duration>,
) -> Result<Vec<u8>, BodyError> {
    match timeout {
        Some(t) => tokio::time::timeout(t, read_all(body, limit))
            .await
            .unwrap_or(Err(BodyError::TimedOut(t))),
        None => read_all(body, limit).await,
    }
}

/// The body as one buffer (moved into the frame text without a copy), at most `limit` bytes.
/// The buffer grows as bytes arrive: a `Content-Length` reserves nothing, so a client that
/// declares a large body and stalls holds only what it sent.
async fn read_all(body: Body, limit: usize) -> Result<Vec<u8>, BodyError> {
    let mut stream = body.into_data_stream();
    let mut buf = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| BodyError::Read)?;
        if buf.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge);
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn accepted_sockets_get_nodelay() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let _client = TcpStream::connect(addr).await.unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        tune(&accepted);
        assert!(accepted.nodelay().unwrap());
    }

    #[tokio::test(start_paused = true)]
    async fn the_clock_names_the_bound_in_force() {
        let limits = ConnectionLimits::default()
            .with_header_read_timeout(Some(Duration::from_secs(2)))
            .with_keep_alive_timeout(Some(Duration::from_secs(5)))
            .with_write_timeout(Some(Duration::from_secs(3)));
        let clock = ConnClock::new();
        let t0 = clock.start;
        // Idle since it opened: the keep-alive timeout.
        assert_eq!(
            clock.verdict(&limits, t0),
            Ok(Some(t0 + Duration::from_secs(5)))
        );
        tokio::time::advance(Duration::from_secs(1)).await;
        clock.read_some();
        // A head began at 1 s: 2 s from there.
        assert_eq!(
            clock.verdict(&limits, Instant::now()),
            Ok(Some(t0 + Duration::from_secs(3)))
        );
        assert!(clock.verdict(&limits, t0 + Duration::from_secs(3)).is_err());
        // In flight: only a blocked write counts.
        clock.request_started();
        assert_eq!(
            clock.verdict(&limits, t0 + Duration::from_secs(100)),
            Ok(None)
        );
        clock.wrote(true);
        assert_eq!(
            clock.verdict(&limits, Instant::now()),
            Ok(Some(t0 + Duration::from_secs(4)))
        );
        clock.wrote(false);
        tokio::time::advance(Duration::from_secs(1)).await;
        clock.request_ended();
        // Idle again from 2 s.
        assert_eq!(
            clock.verdict(&limits, Instant::now()),
            Ok(Some(t0 + Duration::from_secs(7)))
        );
    }
}
