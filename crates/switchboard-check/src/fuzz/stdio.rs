//! A server spawned for the fuzzer, spoken to byte by byte: whatever a case writes reaches the
//! child's stdin exactly (partial lines, bytes that are not UTF-8), and its stdout is read as
//! newline-delimited frames, bounded.

use std::collections::VecDeque;
use std::io;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::BytesMut;
use switchboard_transport::NdjsonDecoder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The largest line read from the server (an answer echoing a large frame fits).
const MAX_LINE: usize = 64 << 20;
/// How much of the server's stderr is kept, to show when it dies.
const STDERR_TAIL: usize = 2048;
/// Lines read ahead of the fuzzer before the reader waits.
const READ_AHEAD: usize = 1024;

/// One thing read from the server's stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    /// A line of text.
    Text(String),
    /// A line that could not be a frame (too long, not UTF-8).
    Bad(String),
}

/// What waiting for a line gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Recv {
    /// A line.
    Line(Line),
    /// Nothing before the deadline.
    Timeout,
    /// The server closed its stdout.
    Closed,
}

/// A spawned server.
#[derive(Debug)]
pub(crate) struct StdioLink {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Line>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
}

impl StdioLink {
    /// Spawns `command` with `sh -c` (its own process group, killed when dropped).
    ///
    /// # Errors
    /// The shell could not be started.
    pub(crate) fn spawn(command: &str) -> io::Result<StdioLink> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("exec {command}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0)
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("no stdout"))?;
        let stderr_pipe = child.stderr.take();
        let (tx, lines) = mpsc::channel(READ_AHEAD);
        tokio::spawn(read_lines(stdout, tx));
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(pipe) = stderr_pipe {
            tokio::spawn(keep_tail(pipe, stderr.clone()));
        }
        Ok(StdioLink {
            child,
            stdin,
            lines,
            stderr,
        })
    }

    /// Writes `bytes` to the server's stdin, giving up after `timeout` (a server that stops
    /// reading its input fills the pipe).
    ///
    /// # Errors
    /// The write failed (the server closed its stdin or exited) or took longer than `timeout`.
    pub(crate) async fn write(&mut self, bytes: &[u8], timeout: Duration) -> Result<(), String> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err("stdin is closed".into());
        };
        let write = async {
            stdin.write_all(bytes).await?;
            stdin.flush().await
        };
        match tokio::time::timeout(timeout, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                self.stdin = None;
                Err(format!("writing to the server failed: {e}"))
            }
            Err(_) => {
                self.stdin = None;
                Err(format!(
                    "the server stopped reading its input ({} bytes not taken within {} s)",
                    bytes.len(),
                    timeout.as_secs_f32()
                ))
            }
        }
    }

    /// The next line, waiting until `deadline`.
    pub(crate) async fn recv(&mut self, deadline: Instant) -> Recv {
        match tokio::time::timeout_at(deadline, self.lines.recv()).await {
            Ok(Some(line)) => Recv::Line(line),
            Ok(None) => Recv::Closed,
            Err(_) => Recv::Timeout,
        }
    }

    /// The last bytes the server wrote to stderr, on one line.
    pub(crate) fn stderr_tail(&self) -> String {
        let tail = self.stderr.lock().map(|t| t.clone()).unwrap_or_default();
        let (a, b) = tail.as_slices();
        let text = String::from_utf8_lossy(&[a, b].concat()).into_owned();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Waits up to `grace` for the server to exit, then returns how it exited.
    pub(crate) async fn wait_exit(&mut self, grace: Duration) -> Option<String> {
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) => Some(status.to_string()),
            _ => None,
        }
    }

    /// Ends the server: closes its stdin, waits a moment, then kills it.
    pub(crate) async fn close(mut self) {
        self.stdin = None;
        if self.wait_exit(Duration::from_millis(500)).await.is_none() {
            let _ = self.child.start_kill();
            let _ = self.child.wait().await;
        }
    }
}

/// Reads the server's stdout as lines until it ends.
async fn read_lines(mut stdout: tokio::process::ChildStdout, tx: mpsc::Sender<Line>) {
    let mut decoder = NdjsonDecoder::new(MAX_LINE);
    let mut buf = BytesMut::with_capacity(64 << 10);
    loop {
        let eof = match stdout.read_buf(&mut buf).await {
            Ok(0) | Err(_) => true,
            Ok(_) => false,
        };
        loop {
            let next = if eof {
                decoder.decode_eof(&mut buf)
            } else {
                decoder.decode(&mut buf)
            };
            let line = match next {
                Ok(Some(text)) => Line::Text(text),
                Ok(None) => break,
                Err(e) => Line::Bad(e.to_string()),
            };
            if tx.send(line).await.is_err() {
                return;
            }
        }
        if eof {
            return;
        }
    }
}

/// Keeps the last [`STDERR_TAIL`] bytes of the server's stderr.
async fn keep_tail(mut stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<u8>>>) {
    let mut chunk = vec![0u8; 8192];
    loop {
        let n = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if let Ok(mut t) = tail.lock() {
            t.extend(&chunk[..n]);
            let excess = t.len().saturating_sub(STDERR_TAIL);
            t.drain(..excess);
        }
    }
}
