//! A stdio server exposed over Streamable HTTP: this crate's endpoint (sessions, SSE routing,
//! resumption, Host/Origin checks) fronting a raw frame relay to one child process per session.
//!
//! * Each HTTP session spawns its own child from the command the caller makes. POSTed frames go
//!   to its stdin unchanged (a frame with raw line breaks, JSON whitespace only, gets them as
//!   spaces: stdio framing cannot carry them); each line of its stdout comes back unchanged,
//!   routed like any server's frame: a response to the POST stream of its request; a request
//!   or notification to the POST stream of the request it belongs to
//!   ([`switchboard_jsonrpc::RelatedRequests`]), else to the GET stream.
//! * The child ends with its session (DELETE, idle reaper); the session ends with the child.
//! * Every frame is shown to the [`FrameTap`] before it is passed on, with the session id.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use switchboard_jsonrpc::{
    FrameSink, FrameSource, NullService, Peer, RelatedRequests, SessionConfig, Transport,
};
use switchboard_transport::FrameTap;
use switchboard_transport::{one_line, read_frame, tap_body};
use switchboard_types::Direction;
use tokio::io::{AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::{HttpConfig, HttpSessionTransport, HttpSink, SessionStartError, StreamableHttpService};

/// The most client requests tracked per session for routing (the oldest is forgotten first).
const MAX_TRACKED: usize = 4096;

/// How long a child may take to exit after its session ended and its stdin closed.
const CHILD_GRACE: Duration = Duration::from_secs(3);

/// The Streamable HTTP endpoint fronting one child per session. `command` makes the command
/// to spawn for a new session (its stdin and stdout are piped here, its stderr is left as the
/// command sets it, and it is killed if it outlives its session's relay).
pub fn service<F>(command: F, tap: Arc<dyn FrameTap>, config: HttpConfig) -> StreamableHttpService
where
    F: Fn() -> Command + Send + Sync + 'static,
{
    StreamableHttpService::new(move |t| start_session(t, command(), &tap), config)
}

/// The session factory: spawns the child and the relay. The HTTP layer wants an engine `Peer`
/// for the session's lifetime; a relay has no engine, so an idle one stands in for it (on an
/// in-memory transport nobody writes to), closed when the relay ends.
fn start_session(
    t: HttpSessionTransport,
    mut command: Command,
    tap: &Arc<dyn FrameTap>,
) -> Result<Peer, SessionStartError> {
    let session: Arc<str> = Arc::from(t.session_id());
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(SessionStartError::Spawn)?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(SessionStartError::MissingPipes);
    };
    let (mine, theirs) = switchboard_jsonrpc::memory::pair();
    let peer = switchboard_jsonrpc::spawn(mine, Arc::new(NullService), SessionConfig::default());
    let relay = SessionRelay {
        session,
        tap: tap.clone(),
        routes: Arc::new(Mutex::new(RelatedRequests::new(MAX_TRACKED))),
    };
    let stand_in = peer.clone();
    tokio::spawn(async move {
        relay.run(t, child, stdin, stdout).await;
        stand_in.close();
        drop(theirs);
    });
    Ok(peer)
}

/// One HTTP session's relay to its child.
struct SessionRelay {
    session: Arc<str>,
    tap: Arc<dyn FrameTap>,
    routes: Arc<Mutex<RelatedRequests>>,
}

impl SessionRelay {
    async fn run(
        self,
        t: HttpSessionTransport,
        mut child: Child,
        mut stdin: ChildStdin,
        stdout: ChildStdout,
    ) {
        let control = t.control();
        let (sink, mut source) = t.split();
        let (session, tap, routes) = (self.session.clone(), self.tap.clone(), self.routes.clone());
        // HTTP → child: ends when the session ends (DELETE, reaper) or the child's stdin breaks.
        let mut up = tokio::spawn(async move {
            while let Some(Ok(text)) = source.recv().await {
                tap_body(&*tap, Direction::ClientToServer, Some(&session), &text);
                let cancelled = routes
                    .lock()
                    .map(|mut r| r.client_sent(&text))
                    .unwrap_or_default();
                // A cancelled request will never be answered: its POST stream ends now, as the
                // engine has the transport do when it serves a session itself.
                if let Some(control) = &control {
                    for id in &cancelled {
                        control.request_cancelled(id);
                    }
                }
                let line = one_line(&text);
                let wrote = async {
                    stdin.write_all(line.as_bytes()).await?;
                    stdin.write_all(b"\n").await?;
                    stdin.flush().await
                };
                if wrote.await.is_err() {
                    break;
                }
            }
            // Dropping stdin here tells the child the session is over.
        });
        let down = self.child_to_http(stdout, sink);
        tokio::pin!(down);
        let mut sink = tokio::select! {
            sink = &mut down => {
                up.abort();
                sink
            }
            _ = &mut up => match tokio::time::timeout(CHILD_GRACE, &mut down).await {
                Ok(sink) => sink,
                Err(_) => {
                    let _ = child.start_kill();
                    down.await
                }
            },
        };
        // Ends the HTTP session (idempotent when it has already ended).
        let _ = sink.close().await;
        if tokio::time::timeout(CHILD_GRACE, child.wait())
            .await
            .is_err()
        {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }

    /// Child → HTTP: every line of the child's stdout, routed; ends with the child's stdout.
    async fn child_to_http(&self, stdout: impl AsyncRead + Unpin, mut sink: HttpSink) -> HttpSink {
        let mut reader = BufReader::new(stdout);
        let mut line = Vec::with_capacity(4096);
        while let Some(mut frame) = read_frame(&mut reader, &mut line).await {
            tap_body(
                &*self.tap,
                Direction::ServerToClient,
                Some(&self.session),
                &frame.text,
            );
            frame.related = self
                .routes
                .lock()
                .ok()
                .and_then(|mut r| r.server_sent(&frame.text, frame.kind, frame.id.as_ref()));
            if sink.send(frame).await.is_err() {
                break;
            }
        }
        sink
    }
}
