//! The child process itself: the reaper task that owns it (and so always reaps it), the shutdown
//! escalation of spec §3.5, the stderr forwarder, and [`ChildHandle`] to ask about all that.

use std::io;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin};
use tokio::sync::{Mutex, mpsc, watch};

use super::command::StderrHook;

/// The `tracing` target of everything about child processes, their stderr lines included.
pub const LOG_TARGET: &str = "switchboard::child";

/// Longest stderr line forwarded as one event; a longer line is forwarded in pieces.
const MAX_STDERR_LINE: usize = 64 * 1024;

/// What the reaper publishes once the child is reaped (an error text if waiting failed).
type Exit = Option<Result<ExitStatus, String>>;

/// A handle to a spawned child: its pid, its exit status, and its shutdown. Cheap to clone.
///
/// While any handle (or the transport's halves) is alive, the child runs until it exits or is
/// shut down; once all are dropped, the shutdown sequence starts on its own.
#[derive(Debug, Clone)]
pub struct ChildHandle {
    inner: Arc<HandleInner>,
}

#[derive(Debug)]
struct HandleInner {
    pid: u32,
    grace: Duration,
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    exit: watch::Receiver<Exit>,
    shutdown: mpsc::UnboundedSender<Duration>,
}

impl ChildHandle {
    /// The child's process id; also the id of its process group.
    pub fn pid(&self) -> u32 {
        self.inner.pid
    }

    /// The exit status, once the child has exited and been reaped; `None` while it runs.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        match &*self.inner.exit.borrow() {
            Some(Ok(status)) => Some(*status),
            _ => None,
        }
    }

    /// Waits until the child has exited and been reaped.
    ///
    /// # Errors
    /// Waiting for the child failed, or the runtime stopped the reaper before the child exited.
    pub async fn wait(&self) -> io::Result<ExitStatus> {
        let mut rx = self.inner.exit.clone();
        let exit = rx
            .wait_for(Option::is_some)
            .await
            .map_err(|_| io::Error::other("the child's reaper stopped before the child exited"))?;
        match &*exit {
            Some(Ok(status)) => Ok(*status),
            Some(Err(e)) => Err(io::Error::other(e.clone())),
            None => Err(io::Error::other("the child has not exited")),
        }
    }

    /// Shuts the child down as spec §3.5 says: closes its stdin, waits up to `grace` for it to
    /// exit, then sends `SIGTERM` to its process group, waits up to `grace` again, then sends
    /// `SIGKILL`. Returns the exit status once the child is reaped; a child that has already
    /// exited returns its status at once.
    ///
    /// # Errors
    /// As for [`wait`](Self::wait).
    pub async fn shutdown(&self, grace: Duration) -> io::Result<ExitStatus> {
        // A write blocked on a child that no longer reads holds the lock; the signals below
        // end that write, so do not wait for the lock longer than one grace.
        if let Ok(mut stdin) = tokio::time::timeout(grace, self.inner.stdin.lock()).await {
            stdin.take();
        }
        let _ = self.inner.shutdown.send(grace);
        self.wait().await
    }

    /// The grace of each shutdown step when the transport is closed by the session.
    pub(crate) fn grace(&self) -> Duration {
        self.inner.grace
    }

    /// Closes stdin and starts the shutdown sequence without waiting for it.
    pub(crate) fn start_shutdown(&self, stdin: Option<ChildStdin>) {
        drop(stdin);
        let _ = self.inner.shutdown.send(self.inner.grace);
    }

    pub(crate) fn stdin(&self) -> &Arc<Mutex<Option<ChildStdin>>> {
        &self.inner.stdin
    }
}

/// Takes ownership of a spawned child: starts its reaper and its stderr forwarder.
pub(crate) fn adopt(
    mut child: Child,
    grace: Duration,
    on_stderr: Option<StderrHook>,
) -> io::Result<(ChildHandle, Option<tokio::process::ChildStdout>)> {
    let pid = child
        .id()
        .ok_or_else(|| io::Error::other("the child exited before its pid was read"))?;
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(forward_stderr(stderr, pid, on_stderr));
    }
    let (exit_tx, exit_rx) = watch::channel(None);
    let (shutdown_tx, shutdown_rx) = mpsc::unbounded_channel();
    tokio::spawn(reap(child, pid, grace, shutdown_rx, exit_tx));
    tracing::debug!(target: LOG_TARGET, pid, "child process started");
    let handle = ChildHandle {
        inner: Arc::new(HandleInner {
            pid,
            grace,
            stdin: Arc::new(Mutex::new(stdin)),
            exit: exit_rx,
            shutdown: shutdown_tx,
        }),
    };
    Ok((handle, stdout))
}

/// Owns the child until it is reaped, so no zombie is left: waits for its exit, or for a
/// shutdown request (or for every handle to be gone), then runs the escalation.
async fn reap(
    mut child: Child,
    pid: u32,
    default_grace: Duration,
    mut requests: mpsc::UnboundedReceiver<Duration>,
    exit: watch::Sender<Exit>,
) {
    let result = tokio::select! {
        status = child.wait() => status,
        grace = requests.recv() => escalate(&mut child, pid, grace.unwrap_or(default_grace)).await,
    };
    match &result {
        Ok(status) => tracing::debug!(target: LOG_TARGET, pid, %status, "child process reaped"),
        Err(e) => {
            tracing::warn!(target: LOG_TARGET, pid, error = %e, "waiting for the child failed")
        }
    }
    exit.send_replace(Some(result.map_err(|e| e.to_string())));
}

/// Spec §3.5, once stdin is closed: wait, `SIGTERM` the group, wait, `SIGKILL` the group.
/// Every signal is sent before the child is reaped, so its pid (the group id) cannot have been
/// reused.
async fn escalate(child: &mut Child, pgid: u32, grace: Duration) -> io::Result<ExitStatus> {
    if let Ok(status) = tokio::time::timeout(grace, child.wait()).await {
        return status;
    }
    tracing::debug!(target: LOG_TARGET, pid = pgid, ?grace, "child still running after stdin was closed; sending SIGTERM to its group");
    signal_group(pgid, "TERM").await;
    if let Ok(status) = tokio::time::timeout(grace, child.wait()).await {
        return status;
    }
    tracing::warn!(target: LOG_TARGET, pid = pgid, ?grace, "child still running after SIGTERM; sending SIGKILL to its group");
    signal_group(pgid, "KILL").await;
    // The leader is killed directly too, in case the `kill` program could not be run.
    let _ = child.start_kill();
    child.wait().await
}

/// Sends `signal` to the process group `pgid` by running `kill -s SIGNAL -- -PGID`: sending a
/// signal from Rust needs `unsafe` libc (forbidden here) or another dependency.
async fn signal_group(pgid: u32, signal: &str) {
    let status = tokio::process::Command::new("kill")
        .args(["-s", signal, "--", &format!("-{pgid}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await;
    match status {
        Ok(s) if s.success() => {}
        // The group may be gone already (the child exited just now): nothing to do.
        Ok(s) => {
            tracing::debug!(target: LOG_TARGET, pid = pgid, signal, status = %s, "kill reported failure")
        }
        Err(e) => {
            tracing::warn!(target: LOG_TARGET, pid = pgid, signal, error = %e, "could not run kill")
        }
    }
}

/// Forwards each stderr line to `tracing` (info, [`LOG_TARGET`], with the pid) and to the hook.
/// Reads until end of input, so the child never blocks on a full stderr pipe.
async fn forward_stderr(stderr: ChildStderr, pid: u32, hook: Option<StderrHook>) {
    let mut reader = BufReader::new(stderr);
    let mut line: Vec<u8> = Vec::new();
    loop {
        let chunk = match reader.fill_buf().await {
            Ok([]) => break,
            Ok(chunk) => chunk,
            Err(e) => {
                tracing::debug!(target: LOG_TARGET, pid, error = %e, "reading the child's stderr failed");
                break;
            }
        };
        let room = MAX_STDERR_LINE - line.len();
        let (taken, line_done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) if i < room => (i + 1, true),
            _ => {
                let n = chunk.len().min(room);
                (n, n == room)
            }
        };
        line.extend_from_slice(&chunk[..taken]);
        reader.consume(taken);
        if line_done {
            emit_stderr_line(&line, pid, hook.as_ref());
            line.clear();
        }
    }
    emit_stderr_line(&line, pid, hook.as_ref());
}

fn emit_stderr_line(line: &[u8], pid: u32, hook: Option<&StderrHook>) {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() {
        return;
    }
    let text = String::from_utf8_lossy(line);
    tracing::info!(target: LOG_TARGET, pid, "{text}");
    if let Some(hook) = hook {
        hook(&text);
    }
}
