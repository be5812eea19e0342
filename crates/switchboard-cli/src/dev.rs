//! `switchboard dev -- CMD...`: the development loop (`switchboard-dev`): the server behind one
//! front, rebuilt and restarted in place on each source change; and `--ui`, the live session
//! viewer, which `record --ui` serves too.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use switchboard::transport::FrameTap;
use switchboard_dev::{DevConfig, Front, LiveView};

/// `switchboard dev`'s flags.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DevArgs {
    /// Serve the host over Streamable HTTP on ADDR (endpoint /mcp; port 0 picks one) instead of
    /// stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// A file or directory to watch (repeatable; directories recursively, without `target`
    /// and hidden entries). Default: ./src and ./Cargo.toml.
    #[arg(long, value_name = "PATH")]
    watch: Vec<PathBuf>,
    /// The build command run on each change (`sh -c`); the server restarts only when it
    /// succeeds. Default: for `cargo run ARGS [-- ...]`, `cargo build ARGS`; otherwise none
    /// (each change restarts the server).
    #[arg(long, value_name = "CMD")]
    build: Option<String>,
    /// Serve the live session viewer on ADDR (PORT, or 127.0.0.1:PORT; loopback only).
    #[arg(long, value_name = "ADDR", value_parser = switchboard_dev::parse_viewer_addr)]
    ui: Option<SocketAddr>,
    /// The server command, e.g. `cargo run -p my-server` (after `--`).
    #[arg(required = true, last = true, value_name = "CMD")]
    command: Vec<String>,
}

/// Runs the loop until the host leaves (stdio) or the process is stopped (HTTP).
///
/// # Errors
/// The front or the viewer cannot be served.
pub(crate) async fn run(args: DevArgs) -> anyhow::Result<()> {
    let command = args.command.join(" ");
    let mut config = DevConfig::new(command.clone());
    if !args.watch.is_empty() {
        config.watch = args.watch;
    }
    config.build = args.build;
    let live = LiveView::new(format!("switchboard dev -- {command}"), !crate::ui::quiet());
    if let Some(addr) = args.ui {
        serve_ui(&live, addr).await?;
    }
    let front = args.http.map_or(Front::Stdio, Front::Http);
    switchboard_dev::run(config, front, Some(live), Arc::new(|l| eprintln!("{l}"))).await?;
    Ok(())
}

/// Serves `live`'s page on `addr` in the background (`switchboard_dev::LiveView::spawn_viewer`).
async fn serve_ui(live: &Arc<LiveView>, addr: SocketAddr) -> anyhow::Result<()> {
    let local = live.spawn_viewer(addr).await?;
    crate::ui::announce(&format!("the live session viewer is at http://{local}/"));
    Ok(())
}

/// `tap`, and with `ui` the live viewer too (`record --ui`).
///
/// # Errors
/// The viewer cannot be served.
pub(crate) async fn with_ui(
    tap: Arc<dyn FrameTap>,
    ui: Option<SocketAddr>,
    title: &str,
) -> anyhow::Result<Arc<dyn FrameTap>> {
    let Some(addr) = ui else {
        return Ok(tap);
    };
    let live = LiveView::new(title, false);
    serve_ui(&live, addr).await?;
    Ok(live.tee(tap))
}
