//! # switchboard-dev
//!
//! The development loop behind `switchboard dev`: a server command runs behind one front (stdio,
//! or Streamable HTTP) that a host or the MCP Inspector connects to once; when a watched source
//! changes, the build command runs and, only if it succeeds, the server is restarted in place:
//! the new process is initialized in the era the old one settled on and listed while the old one
//! still serves, then takes over, and the host is sent `notifications/tools/list_changed` (and
//! the prompts' and resources') for each list whose items changed. The host's session is never
//! re-initialized. A failed build prints its output (the last 64 KiB) and changes nothing: the
//! previous build keeps serving.
//!
//! It is the gateway ([`switchboard::gateway::Gateway`]) with one upstream mounted without a
//! prefix, restarted by [`Gateway::restart`](switchboard::gateway::Gateway::restart), not a relay
//! of its own; the front's frames are annotated by the inspector as they pass ([`LiveView`]).
//!
//! | module | role |
//! |---|---|
//! | `watch` | polling the watched paths (skipping `target` and hidden entries), debounced, bounded |
//! | `build` | the build command, its output bounded, its time bounded; the build derived from `cargo run` |
//! | `live` | [`LiveView`]: frames annotated on stderr and served as the live session viewer |
//!
//! Modules depend one way: `watch`, `build`, `live` ← the crate root.

mod build;
mod live;
mod watch;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use switchboard::gateway::{Gateway, GatewayConfig, GatewayError, UpstreamConfig, UpstreamKind};

pub use live::{LiveView, MAX_LIVE_FRAMES, parse_viewer_addr};

/// What `dev` runs and watches.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DevConfig {
    /// The server command (run with `sh -c "exec COMMAND"`), speaking MCP on stdio.
    pub command: String,
    /// The files and directories watched (directories recursively, without `target` and hidden
    /// entries); default `src` and `Cargo.toml` of the current directory.
    pub watch: Vec<PathBuf>,
    /// The build command (`sh -c`), run on each change; `None`: derived from a `cargo run`
    /// server command (`cargo run ARGS -- ...` builds with `cargo build ARGS`), else no build
    /// (each change restarts the server).
    pub build: Option<String>,
    /// How often the watched paths are looked at (default 250 ms).
    pub poll: Duration,
    /// How long the sources must hold still before a change is acted on (default 200 ms).
    pub debounce: Duration,
    /// The longest a build may run (default 10 minutes); past it the build is stopped and
    /// counts as failed.
    pub build_timeout: Duration,
}

impl DevConfig {
    /// `command` with the defaults.
    pub fn new(command: impl Into<String>) -> Self {
        DevConfig {
            command: command.into(),
            watch: vec![PathBuf::from("src"), PathBuf::from("Cargo.toml")],
            build: None,
            poll: Duration::from_millis(250),
            debounce: Duration::from_millis(200),
            build_timeout: Duration::from_secs(600),
        }
    }

    /// The build command that runs: the one given, else the one derived from the command.
    pub fn build_command(&self) -> Option<String> {
        self.build.clone().or_else(|| build::derived(&self.command))
    }
}

/// Where the host connects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Front {
    /// This process's stdin and stdout (a host that launches `switchboard dev`).
    Stdio,
    /// Streamable HTTP on this address, endpoint `/mcp`.
    Http(SocketAddr),
}

/// Why `dev` stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DevError {
    /// The gateway behind the front did not start.
    #[error(transparent)]
    Gateway(#[from] GatewayError),
    /// The front could not be served.
    #[error("the front: {0}")]
    Front(#[from] std::io::Error),
    /// The server could not be served on the front.
    #[error("the front: {0}")]
    Serve(String),
}

/// Says what the loop does (a change, a build, a restart), one line each; `dev` prints them on
/// stderr.
pub type Say = Arc<dyn Fn(&str) + Send + Sync>;

/// Runs the loop until the host leaves (stdio: stdin ends) or the process is stopped (HTTP).
/// `live`, when given, sees every frame between the host and the front.
///
/// # Errors
/// The front cannot be served.
pub async fn run(
    config: DevConfig,
    front: Front,
    live: Option<Arc<LiveView>>,
    say: Say,
) -> Result<(), DevError> {
    let build = config.build_command();
    if let Some(cmd) = &build {
        // The first build, so that the server starts from the sources as they are.
        say(&format!("dev: building: {cmd}"));
        report_build(&build::run(cmd, config.build_timeout).await, &say);
    }
    let mut gw = GatewayConfig::default();
    gw.upstreams = vec![UpstreamConfig::new(
        "",
        UpstreamKind::Stdio(config.command.clone()),
    )];
    gw.frame_hook = live.as_ref().map(LiveView::server_hook);
    // The host sees the server it develops, not the gateway.
    gw.pass_server_info = true;
    let gateway = Arc::new(Gateway::start(gw)?);
    gateway.ready().await;
    let watcher = watch::Watcher::new(config.watch.clone(), config.poll, config.debounce);
    say(&format!(
        "dev: serving `{}`; watching {} file(s){}",
        config.command,
        watcher.watched(),
        build
            .as_ref()
            .map(|b| format!(", building with `{b}`"))
            .unwrap_or_default()
    ));
    let looping = tokio::spawn(rebuild_on_change(
        gateway.clone(),
        watcher,
        build,
        config.build_timeout,
        say.clone(),
    ));
    let served = serve(&gateway, front, &say).await;
    looping.abort();
    gateway.shutdown();
    served
}

async fn serve(gateway: &Gateway, front: Front, say: &Say) -> Result<(), DevError> {
    match front {
        Front::Stdio => {
            let transport = switchboard::transport::StdioTransport::stdio();
            let session = gateway
                .server()
                .serve(transport)
                .map_err(|e| DevError::Serve(e.to_string()))?;
            session.closed().await;
        }
        Front::Http(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            let local = listener.local_addr()?;
            let service = switchboard::http::StreamableHttpService::new(
                switchboard::server_http::session_factory(gateway.server()),
                switchboard::http::HttpConfig::for_bind_address(local),
            );
            say(&format!("dev: the front listens on http://{local}/mcp"));
            switchboard::http::serve(listener, service).await?;
        }
    }
    Ok(())
}

/// Prints a failed build's output (what the user must see); a good build is one line.
fn report_build(b: &build::Built, say: &Say) -> bool {
    if b.ok {
        say("dev: build succeeded");
    } else {
        let cut = if b.cut {
            format!("(the last {} bytes)\n", build::MAX_BUILD_OUTPUT)
        } else {
            String::new()
        };
        say(&format!(
            "dev: build failed ({}); the previous build keeps serving\n{cut}{}",
            b.status,
            b.output.trim_end()
        ));
    }
    b.ok
}

async fn rebuild_on_change(
    gateway: Arc<Gateway>,
    mut watcher: watch::Watcher,
    build: Option<String>,
    timeout: Duration,
    say: Say,
) {
    loop {
        let changed = watcher.changed().await;
        let shown: Vec<String> = changed
            .iter()
            .take(3)
            .map(|p| p.display().to_string())
            .collect();
        let more = changed.len().saturating_sub(shown.len());
        say(&format!(
            "dev: changed: {}{}",
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
        if let Some(cmd) = &build {
            say(&format!("dev: building: {cmd}"));
            if !report_build(&build::run(cmd, timeout).await, &say) {
                continue;
            }
        }
        match gateway.restart("").await {
            Ok(()) => say("dev: restarted; the host was told what changed"),
            Err(e) => say(&format!("dev: {e}; the previous build keeps serving")),
        }
    }
}
