//! The server under test: a command to spawn, an endpoint, or a connector in this process.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use switchboard_jsonrpc::{FrameSink, FrameSource, OutboundFrame, Transport, TransportError};

/// How the checks reach the server under test. The checks open several connections (the ones
/// about the handshake each need a fresh session), so a target says how to make one, not which
/// one to use.
///
/// ```
/// use switchboard_check::Target;
///
/// let spawned = Target::stdio("node dist/server.js");
/// let remote = Target::http("http://127.0.0.1:8080/mcp");
/// assert!(matches!(remote, Target::Http(ref url) if url.ends_with("/mcp")));
/// # let _ = spawned;
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub enum Target {
    /// Spawn this shell command (`sh -c`) for each connection and talk over its stdin/stdout.
    Stdio(String),
    /// Talk to this MCP endpoint over Streamable HTTP: a new session per connection, and the
    /// Streamable HTTP rules as raw HTTP on top of the shared checks.
    Http(String),
    /// Ask this connector for each connection (see [`Target::in_process`]).
    InProcess(Connector),
}

impl Target {
    /// A server started with a shell command, once per connection, over stdio.
    pub fn stdio(command: impl Into<String>) -> Target {
        Target::Stdio(command.into())
    }

    /// A Streamable HTTP endpoint (`http://host:port/mcp`).
    pub fn http(url: impl Into<String>) -> Target {
        Target::Http(url.into())
    }

    /// A server reached through transports that `connect` makes, one per connection: typically
    /// one end of the in-memory pair (`switchboard_jsonrpc::memory::pair`) whose other end a
    /// server built in the test serves. Called inside the Tokio runtime that runs the checks;
    /// an error is reported as [`CheckError::InProcess`](crate::CheckError::InProcess).
    ///
    /// ```
    /// use switchboard_check::Target;
    /// use switchboard_jsonrpc::memory;
    ///
    /// let target = Target::in_process(|| {
    ///     let (ours, theirs) = memory::pair();
    ///     // Here a server would serve `theirs`: `server.serve(theirs).map(|_| ours)`.
    ///     drop(theirs);
    ///     Ok::<_, std::convert::Infallible>(ours)
    /// });
    /// # let _ = target;
    /// ```
    pub fn in_process<F, T, E>(connect: F) -> Target
    where
        F: Fn() -> Result<T, E> + Send + Sync + 'static,
        T: Transport,
        E: fmt::Display,
    {
        Target::InProcess(Connector(Arc::new(move || {
            let (sink, source) = connect().map_err(|e| e.to_string())?.split();
            Ok(Box::new(Halves { sink, source }) as Box<dyn Link>)
        })))
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Stdio(cmd) => f.debug_tuple("Stdio").field(cmd).finish(),
            Target::Http(url) => f.debug_tuple("Http").field(url).finish(),
            Target::InProcess(c) => f.debug_tuple("InProcess").field(c).finish(),
        }
    }
}

/// Makes the transport of one in-process connection; built by [`Target::in_process`].
#[derive(Clone)]
pub struct Connector(Arc<ConnectFn>);

/// What a [`Connector`] holds: a factory of type-erased transports.
type ConnectFn = dyn Fn() -> Result<Box<dyn Link>, String> + Send + Sync;

impl Connector {
    /// A new connection, or why there is none.
    pub(crate) fn connect(&self) -> Result<Box<dyn Link>, String> {
        (self.0)()
    }
}

impl fmt::Debug for Connector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Connector(..)")
    }
}

/// A boxed future, so that [`Link`] can be used as a trait object.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Both halves of any [`Transport`], behind one object-safe face.
pub(crate) trait Link: Send {
    /// Sends one frame.
    fn send(&mut self, frame: OutboundFrame) -> BoxFuture<'_, Result<(), TransportError>>;
    /// The next frame, an error, or `None` at the end.
    fn recv(&mut self) -> BoxFuture<'_, Option<Result<String, TransportError>>>;
    /// Closes the sending direction.
    fn close(&mut self) -> BoxFuture<'_, Result<(), TransportError>>;
}

/// The halves of one split transport.
struct Halves<S, R> {
    sink: S,
    source: R,
}

impl<S: FrameSink, R: FrameSource> Link for Halves<S, R> {
    fn send(&mut self, frame: OutboundFrame) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(self.sink.send(frame))
    }

    fn recv(&mut self) -> BoxFuture<'_, Option<Result<String, TransportError>>> {
        Box::pin(self.source.recv())
    }

    fn close(&mut self) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(self.sink.close())
    }
}
