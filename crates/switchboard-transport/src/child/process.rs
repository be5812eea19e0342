//! The child process itself: the reaper task that owns it (and so always reaps it), the shutdown
//! escalation of spec §3.5, the sweep of its process group once it has exited, the stderr
//! forwarder, and [`ChildHandle`] to ask about all that.
//!
//! Signals go to the child's process group through `rustix` (a safe wrapper of `kill(2)`): no
//! external program is run.

use std::io;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use rustix::process::{Pid, Signal};
use switchboard_jsonrpc::LogThrottle;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin};
use tokio::sync::{Mutex, mpsc, watch};

use super::command::StderrHook;

/// The `tracing` target of everything about child processes, their stderr lines included.
pub const LOG_TARGET: &str = "switchboard::child";

/// Longest stderr line handed to the hook as one piece; a longer line is handed over in pieces.
pub(crate) const MAX_STDERR_LINE: usize = 64 * 1024;

/// The most bytes of one stderr line a log event shows (cut with an ellipsis); the hook gets
/// the whole piece.
pub(crate) const STDERR_LOG_BYTES: usize = 4 * 1024;

/// How often the sweep looks whether the group has emptied.
const SWEEP_POLL: Duration = Duration::from_millis(20);

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

/// Takes ownership of a spawned child: starts its reaper and its stderr forwarder, which logs
/// at most `stderr_lines_per_second` lines a second (the hook sees every line).
pub(crate) fn adopt(
    mut child: Child,
    grace: Duration,
    on_stderr: Option<StderrHook>,
    stderr_lines_per_second: u32,
) -> io::Result<(ChildHandle, Option<tokio::process::ChildStdout>)> {
    let pid = child
        .id()
        .ok_or_else(|| io::Error::other("the child exited before its pid was read"))?;
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    if let Some(stderr) = child.stderr.take() {
        let throttle = LogThrottle::new(stderr_lines_per_second);
        tokio::spawn(forward_stderr(stderr, pid, on_stderr, throttle));
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
/// shutdown request (or for every handle to be gone), then runs the escalation. Once the exit
/// is published, whatever the child left running in its process group is shut down too.
async fn reap(
    mut child: Child,
    pid: u32,
    default_grace: Duration,
    mut requests: mpsc::UnboundedReceiver<Duration>,
    exit: watch::Sender<Exit>,
) {
    let (result, grace, group_killed) = tokio::select! {
        status = child.wait() => (status, default_grace, false),
        grace = requests.recv() => {
            let grace = grace.unwrap_or(default_grace);
            let (status, killed) = escalate(&mut child, pid, grace).await;
            (status, grace, killed)
        }
    };
    match &result {
        Ok(status) => tracing::debug!(target: LOG_TARGET, pid, %status, "child process reaped"),
        Err(e) => {
            tracing::warn!(target: LOG_TARGET, pid, error = %e, "waiting for the child failed")
        }
    }
    exit.send_replace(Some(result.map_err(|e| e.to_string())));
    if !group_killed {
        sweep_group(pid, grace).await;
    }
}

/// Spec §3.5, once stdin is closed: wait, `SIGTERM` the group, wait, `SIGKILL` the group.
/// Every signal is sent before the child is reaped, so its pid (the group id) cannot have been
/// reused. Returns the exit status and whether the group was sent `SIGKILL`.
async fn escalate(child: &mut Child, pgid: u32, grace: Duration) -> (io::Result<ExitStatus>, bool) {
    if let Ok(status) = tokio::time::timeout(grace, child.wait()).await {
        return (status, false);
    }
    tracing::debug!(target: LOG_TARGET, pid = pgid, ?grace, "child still running after stdin was closed; sending SIGTERM to its group");
    signal_group(pgid, Signal::TERM);
    if let Ok(status) = tokio::time::timeout(grace, child.wait()).await {
        return (status, false);
    }
    tracing::warn!(target: LOG_TARGET, pid = pgid, ?grace, "child still running after SIGTERM; sending SIGKILL to its group");
    signal_group(pgid, Signal::KILL);
    // The leader is killed directly too, in case it left the group.
    let _ = child.start_kill();
    (child.wait().await, true)
}

/// After the leader has exited (on its own, or within a grace of the shutdown), the processes it
/// left in its group (a shell script's background jobs, a server's workers) are shut down the
/// same way: `SIGTERM`, up to `grace` for them to go, then `SIGKILL`.
///
/// The leader has been reaped by now, so its pid is free again; but the kernel keeps a pid in
/// use as long as a process group of that id has a member, so while anything is left to signal,
/// the id still names this group. Only an empty group's id can be reused, and then the first
/// probe finds nothing (or, in the one-in-a-wraparound race of a new process taking the freed id
/// and making it a group id in the same instant, that group would be signalled: the same window
/// every `kill -- -PGID` after a `wait` has).
async fn sweep_group(pgid: u32, grace: Duration) {
    if !group_alive(pgid) {
        return;
    }
    tracing::debug!(target: LOG_TARGET, pid = pgid, "the child exited leaving processes in its group; sending SIGTERM to the group");
    signal_group(pgid, Signal::TERM);
    let deadline = tokio::time::Instant::now() + grace;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(SWEEP_POLL).await;
        if !group_alive(pgid) {
            return;
        }
    }
    tracing::warn!(target: LOG_TARGET, pid = pgid, ?grace, "processes the child left are still running after SIGTERM; sending SIGKILL to the group");
    signal_group(pgid, Signal::KILL);
}

fn group_id(pgid: u32) -> Option<Pid> {
    i32::try_from(pgid).ok().and_then(Pid::from_raw)
}

/// Whether the group still has a process we may signal (zombies included: a zombie is gone as
/// soon as whoever inherited it reaps it).
fn group_alive(pgid: u32) -> bool {
    group_id(pgid).is_some_and(|g| rustix::process::test_kill_process_group(g).is_ok())
}

/// Sends `signal` to the process group `pgid`.
fn signal_group(pgid: u32, signal: Signal) {
    let Some(group) = group_id(pgid) else {
        return;
    };
    match rustix::process::kill_process_group(group, signal) {
        Ok(()) => {}
        // The group is gone already (the child exited just now): nothing to do.
        Err(rustix::io::Errno::SRCH) => {}
        Err(e) => {
            tracing::warn!(target: LOG_TARGET, pid = pgid, ?signal, error = %e, "could not signal the child's process group")
        }
    }
}

/// Forwards each stderr line to `tracing` (info, [`LOG_TARGET`], with the pid; at most the
/// throttle's budget of lines a second, each cut to [`STDERR_LOG_BYTES`]) and to the hook
/// (every line, in pieces of at most [`MAX_STDERR_LINE`]). Reads until end of input, so the
/// child never blocks on a full stderr pipe; memory is one piece.
async fn forward_stderr(
    stderr: ChildStderr,
    pid: u32,
    hook: Option<StderrHook>,
    throttle: LogThrottle,
) {
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
            emit_stderr_line(&line, pid, hook.as_ref(), &throttle);
            line.clear();
        }
    }
    emit_stderr_line(&line, pid, hook.as_ref(), &throttle);
    throttle.flush("child stderr");
}

fn emit_stderr_line(line: &[u8], pid: u32, hook: Option<&StderrHook>, throttle: &LogThrottle) {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() {
        return;
    }
    let text = String::from_utf8_lossy(line);
    if tracing::enabled!(target: LOG_TARGET, tracing::Level::INFO) && throttle.admit("child stderr")
    {
        let shown = switchboard_types::error::clip(&text, STDERR_LOG_BYTES);
        tracing::info!(target: LOG_TARGET, pid, "{shown}");
    }
    if let Some(hook) = hook {
        hook(&text);
    }
}
