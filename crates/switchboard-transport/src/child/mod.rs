//! The child-process transport (client side of stdio, spec §5 and §3.5): starts an MCP server as
//! a child and speaks newline-delimited JSON on its stdin/stdout.
//!
//! * The child runs in its own process group, with piped stdin, stdout and stderr. Its stderr
//!   lines go to `tracing` (info, target [`LOG_TARGET`], with the pid; at most
//!   [`ChildCommand::stderr_lines_per_second`] lines a second, each cut to [`STDERR_LOG_BYTES`])
//!   and to an optional hook (every line); stderr output is never taken as a failure.
//! * Stdout is read through the ndjson codec: a line over [`ChildCommand::max_frame_bytes`] is
//!   reported and skipped, garbage is answered (or, when the child reads nothing back, dropped)
//!   by the engine, and the session goes on; memory stays within the frame bound.
//! * When the child exits while the session is open, the source yields
//!   `TransportError::Other("child process exited: <status>")`, so the engine fails pending calls
//!   at once with `RequestError::ConnectionLost` carrying the exit status.
//! * Closing the sink (the session closing) or [`ChildHandle::shutdown`] shuts the child down:
//!   stdin closed, a grace period, `SIGTERM` to the group, another grace period, `SIGKILL` to the
//!   group. The child is always reaped: a task owns it until it has exited.
//! * Once the child has exited (on its own or in the shutdown), the processes it left in its
//!   group are shut down too: `SIGTERM` to the group, the grace, `SIGKILL`. Signals are sent
//!   with `kill(2)` through `rustix`, never by running a program.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use std::sync::Arc;
//! use std::time::Duration;
//! use switchboard_jsonrpc::{NullService, SessionConfig, spawn};
//! use switchboard_transport::{ChildCommand, ChildTransport};
//!
//! let transport = ChildTransport::spawn(ChildCommand::new("my-mcp-server").arg("--stdio"))?;
//! let child = transport.handle().clone();
//! let peer = spawn(transport, Arc::new(NullService), SessionConfig::default());
//! // ... use `peer` ...
//! peer.close();
//! let status = child.shutdown(Duration::from_secs(2)).await?;
//! # let _ = status; Ok(()) }
//! ```

mod command;
mod process;

use std::io;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use bytes::BytesMut;
use switchboard_jsonrpc::{FrameSink, FrameSource, OutboundFrame, Transport, TransportError};
use tokio::process::ChildStdout;
use tokio::time::Instant;

pub use command::ChildCommand;
pub use process::{ChildHandle, LOG_TARGET};

use crate::reader::FrameReader;
use crate::stdio::{encode_all, write_encoded, write_frame};

/// After the child is seen to exit, how long its stdout is still read for frames it wrote before
/// exiting (a grandchild may hold the pipe open, so end of input may never come).
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(250);

/// After a write fails because the child is gone, how long to wait for its exit status, so the
/// error names it.
const EXIT_AFTER_BROKEN_PIPE: Duration = Duration::from_secs(1);

/// A transport to a child process's stdin/stdout.
#[derive(Debug)]
pub struct ChildTransport {
    sink: ChildSink,
    source: ChildSource,
    handle: ChildHandle,
}

impl ChildTransport {
    /// Starts the child described by `command`.
    ///
    /// # Errors
    /// The program could not be started (not found, not executable, bad working directory).
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    pub fn spawn(command: ChildCommand) -> io::Result<ChildTransport> {
        let mut cmd = tokio::process::Command::new(&command.program);
        cmd.args(&command.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        if command.env_clear {
            cmd.env_clear();
        }
        cmd.envs(command.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &command.cwd {
            cmd.current_dir(dir);
        }
        let child = cmd.spawn()?;
        let (handle, stdout) = process::adopt(
            child,
            command.shutdown_grace,
            command.on_stderr,
            command.stderr_lines_per_second,
        )?;
        let stdout = stdout.ok_or_else(|| io::Error::other("the child's stdout is not piped"))?;
        Ok(ChildTransport {
            sink: ChildSink {
                handle: handle.clone(),
                buf: BytesMut::new(),
            },
            source: ChildSource {
                reader: FrameReader::new(stdout, command.max_frame_bytes),
                handle: handle.clone(),
                drain_until: None,
                done: false,
            },
            handle,
        })
    }

    /// The handle to the child: pid, exit status, shutdown. Clone it before handing the
    /// transport to the engine.
    pub fn handle(&self) -> &ChildHandle {
        &self.handle
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.handle.pid()
    }

    /// Shuts the child down without starting a session (see [`ChildHandle::shutdown`]).
    ///
    /// # Errors
    /// As for [`ChildHandle::wait`].
    pub async fn shutdown(self, grace: Duration) -> io::Result<ExitStatus> {
        let handle = self.handle.clone();
        drop(self);
        handle.shutdown(grace).await
    }
}

impl Transport for ChildTransport {
    type Sink = ChildSink;
    type Source = ChildSource;

    fn split(self) -> (ChildSink, ChildSource) {
        (self.sink, self.source)
    }
}

/// The writing half of a [`ChildTransport`]: frames to the child's stdin. Closing it starts the
/// child's shutdown (stdin closed, then the escalation, with the command's grace).
#[derive(Debug)]
pub struct ChildSink {
    handle: ChildHandle,
    buf: BytesMut,
}

impl FrameSink for ChildSink {
    async fn send(&mut self, frame: OutboundFrame) -> Result<(), TransportError> {
        let mut stdin = self.handle.stdin().lock().await;
        let Some(writer) = stdin.as_mut() else {
            return Err(TransportError::Closed);
        };
        match write_frame(writer, &mut self.buf, &frame.text).await {
            Ok(()) => Ok(()),
            Err(e) => {
                stdin.take();
                drop(stdin);
                Err(self.write_failed(e).await)
            }
        }
    }

    /// Every frame as one line, all in one write and one flush.
    async fn send_batch(&mut self, frames: &mut Vec<OutboundFrame>) -> Result<(), TransportError> {
        encode_all(&mut self.buf, frames);
        let mut stdin = self.handle.stdin().lock().await;
        let Some(writer) = stdin.as_mut() else {
            return Err(TransportError::Closed);
        };
        match write_encoded(writer, &mut self.buf).await {
            Ok(()) => Ok(()),
            Err(e) => {
                stdin.take();
                drop(stdin);
                Err(self.write_failed(e).await)
            }
        }
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        let stdin = self.handle.stdin().lock().await.take();
        self.handle.start_shutdown(stdin);
        Ok(())
    }
}

impl ChildSink {
    /// A write failed. When the child is gone (broken pipe), waits briefly for its exit status
    /// so the error names it, and gives the source (which reports the same exit) the first word,
    /// because the engine records the source's error as the reason the connection was lost.
    async fn write_failed(&self, e: io::Error) -> TransportError {
        if e.kind() != io::ErrorKind::BrokenPipe {
            return TransportError::Io(e);
        }
        match tokio::time::timeout(EXIT_AFTER_BROKEN_PIPE, self.handle.wait()).await {
            Ok(Ok(status)) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                TransportError::Other(format!("child process exited: {status}"))
            }
            _ => TransportError::Io(e),
        }
    }
}

/// The reading half of a [`ChildTransport`]: frames from the child's stdout, then the child's
/// exit as a fatal error.
#[derive(Debug)]
pub struct ChildSource {
    reader: FrameReader<ChildStdout>,
    handle: ChildHandle,
    /// Set once the child has exited: stdout is read until then at the latest.
    drain_until: Option<Instant>,
    done: bool,
}

impl FrameSource for ChildSource {
    async fn recv(&mut self) -> Option<Result<String, TransportError>> {
        if self.done {
            return None;
        }
        loop {
            if let Some(frame) = self.reader.buffered() {
                return Some(frame);
            }
            if self.reader.at_eof() {
                return Some(Err(self.ended().await));
            }
            let filled = match self.drain_until {
                Some(deadline) => {
                    match tokio::time::timeout_at(deadline, self.reader.fill()).await {
                        Ok(filled) => filled,
                        Err(_) => return Some(Err(self.ended().await)),
                    }
                }
                None => tokio::select! {
                    biased;
                    filled = self.reader.fill() => filled,
                    _ = self.handle.wait() => {
                        self.drain_until = Some(Instant::now() + DRAIN_AFTER_EXIT);
                        continue;
                    }
                },
            };
            if let Err(e) = filled {
                self.done = true;
                return Some(Err(TransportError::Io(e)));
            }
        }
    }
}

impl ChildSource {
    /// Stdout is finished (end of input, or drained after the exit): the error that ends the
    /// session, naming the exit status.
    async fn ended(&mut self) -> TransportError {
        self.done = true;
        let pid = self.handle.pid();
        match tokio::time::timeout(self.handle.grace(), self.handle.wait()).await {
            Ok(Ok(status)) => TransportError::Other(format!("child process exited: {status}")),
            Ok(Err(e)) => TransportError::Other(format!("child process {pid}: {e}")),
            Err(_) => TransportError::Other(format!(
                "child process {pid} closed its stdout but is still running"
            )),
        }
    }
}
