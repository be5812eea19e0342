//! [`ChildCommand`]: what to start, where, with which environment, and how to treat its stderr.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The default grace of each shutdown step (spec §3.5): after stdin is closed, and again after
/// `SIGTERM`, before escalating.
pub(crate) const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Default number of the child's stderr lines logged per second (also the burst); the rest are
/// counted and reported as one line. The stderr hook sees every line regardless.
pub(crate) const DEFAULT_STDERR_LINES_PER_SECOND: u32 = 100;

/// A callback that sees each line the child writes to its stderr.
pub(crate) type StderrHook = Arc<dyn Fn(&str) + Send + Sync>;

/// How to start a child process that speaks MCP on its stdin/stdout.
///
/// The child always gets piped stdin, stdout and stderr and its own process group (so shutdown
/// signals reach the processes it started too). If the runtime shuts down before the child has
/// been reaped, the child is killed.
#[derive(Clone)]
pub struct ChildCommand {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) env_clear: bool,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) on_stderr: Option<StderrHook>,
    pub(crate) shutdown_grace: Duration,
    pub(crate) max_frame_bytes: usize,
    pub(crate) stderr_lines_per_second: u32,
}

impl fmt::Debug for ChildCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildCommand")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &self.env)
            .field("env_clear", &self.env_clear)
            .field("cwd", &self.cwd)
            .field("on_stderr", &self.on_stderr.as_ref().map(|_| ".."))
            .field("shutdown_grace", &self.shutdown_grace)
            .field("max_frame_bytes", &self.max_frame_bytes)
            .field("stderr_lines_per_second", &self.stderr_lines_per_second)
            .finish()
    }
}

impl ChildCommand {
    /// A command running `program` (looked up in `PATH` unless it is a path), with no arguments,
    /// the parent's environment and working directory.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        ChildCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            env_clear: false,
            cwd: None,
            on_stderr: None,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            max_frame_bytes: crate::codec::ndjson::DEFAULT_MAX_FRAME_BYTES,
            stderr_lines_per_second: DEFAULT_STDERR_LINES_PER_SECOND,
        }
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds several arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets one environment variable for the child (stdio servers take credentials from the
    /// environment, spec §5).
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Starts the child with an empty environment plus the variables set with [`env`](Self::env).
    pub fn env_clear(mut self) -> Self {
        self.env_clear = true;
        self
    }

    /// Sets the child's working directory.
    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(dir.as_ref().to_owned());
        self
    }

    /// Calls `hook` with each line the child writes to stderr (without its line end; invalid
    /// UTF-8 replaced), in addition to the `tracing` event at info level, target
    /// `switchboard::child`. The hook runs on the forwarding task: keep it short.
    pub fn on_stderr(mut self, hook: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_stderr = Some(Arc::new(hook));
        self
    }

    /// Sets the grace of each shutdown step used when the session closes the transport
    /// (default 2 s).
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Sets the bound on one frame read from the child's stdout, in bytes (default
    /// [`DEFAULT_MAX_FRAME_BYTES`](switchboard_jsonrpc::DEFAULT_MAX_FRAME_BYTES)); a longer
    /// line is reported and skipped, the session goes on.
    pub fn max_frame_bytes(mut self, n: usize) -> Self {
        self.max_frame_bytes = n;
        self
    }

    /// Sets how many of the child's stderr lines are logged per second (at least 1; default
    /// 100). Each logged line shows at most 4 KiB; the hook still sees every line.
    pub fn stderr_lines_per_second(mut self, n: u32) -> Self {
        self.stderr_lines_per_second = n.max(1);
        self
    }
}
