//! `switchboard dev -- CMD...`: the development loop (`switchboard-dev`): the server behind one
//! front, rebuilt and restarted in place on each source change; and `--ui`, the live session
//! viewer, which `record --ui` serves too.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use switchboard::transport::{FrameTap, TappedFrame};
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
    #[arg(long, value_name = "ADDR", value_parser = parse_ui)]
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
        serve_ui(live.clone(), addr).await?;
    }
    let front = args.http.map_or(Front::Stdio, Front::Http);
    switchboard_dev::run(config, front, Some(live), Arc::new(|l| eprintln!("{l}"))).await?;
    Ok(())
}

/// Parses `--ui`: a bare `PORT` (or `:PORT`) on 127.0.0.1, or a loopback `IP:PORT`.
///
/// # Errors
/// Neither form, or an address that is not loopback.
pub(crate) fn parse_ui(s: &str) -> Result<SocketAddr, String> {
    let port = s.strip_prefix(':').unwrap_or(s);
    let addr = match port.parse::<u16>() {
        Ok(port) => SocketAddr::from(([127, 0, 0, 1], port)),
        Err(_) => s
            .parse()
            .map_err(|_| format!("{s:?} is neither IP:PORT nor PORT"))?,
    };
    if !addr.ip().is_loopback() {
        return Err(format!(
            "{addr} is not a loopback address: the viewer shows the session to this machine only"
        ));
    }
    Ok(addr)
}

/// Serves `live`'s page on `addr` in the background, once bound.
async fn serve_ui(live: Arc<LiveView>, addr: SocketAddr) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    anyhow::ensure!(
        addr.ip().is_loopback(),
        "--ui serves the session on a loopback address only (127.0.0.1:PORT), not {addr}"
    );
    let local = listener.local_addr()?;
    crate::ui::announce(&format!("the live session viewer is at http://{local}/"));
    tokio::spawn(async move {
        if let Err(e) = live.serve(listener).await {
            tracing::error!(error = %e, "the live viewer stopped");
        }
    });
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
    serve_ui(live.clone(), addr).await?;
    Ok(Arc::new(move |f: TappedFrame<'_>| {
        tap.frame(f);
        live.frame(f);
    }))
}

#[cfg(test)]
mod tests {
    use super::parse_ui;

    #[test]
    fn the_viewer_listens_on_loopback_only() {
        assert_eq!(parse_ui("8081").unwrap().to_string(), "127.0.0.1:8081");
        assert_eq!(parse_ui("[::1]:0").unwrap().to_string(), "[::1]:0");
        assert!(
            parse_ui("0.0.0.0:8081")
                .unwrap_err()
                .contains("not a loopback")
        );
        assert!(parse_ui("host:1").is_err());
    }
}
