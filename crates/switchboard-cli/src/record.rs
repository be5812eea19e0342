//! `switchboard record -o FILE`: a transparent recording proxy between any MCP client and any
//! MCP server, writing one JSONL object per frame: `{ts_ms, direction, transport, session, frame}`.
//!
//! | flags | mode | relay |
//! |---|---|---|
//! | `--stdio CMD` | stdio server to whoever launched us, relaying to the spawned server | `switchboard::transport::relay_child` |
//! | `--listen ADDR --url UPSTREAM` | Streamable HTTP reverse proxy (POST, GET, DELETE, SSE) | `switchboard::http::proxy` |
//! | `--listen ADDR --stdio CMD` | bridge: a stdio server exposed over Streamable HTTP | `switchboard::http::stdio_bridge` |
//! | `--url UPSTREAM` | bridge: a remote Streamable HTTP server exposed to a stdio host | `switchboard::http_client::stdio_bridge()` |
//!
//! The relays pass frames on unchanged and show each one to a frame tap first; the tap here
//! writes the recording. A batch is recorded entry by entry, each entry's exact text. The one
//! alteration is forced by stdio framing: a frame that reaches stdio from HTTP with raw line
//! breaks in it (JSON whitespace only) has them turned into spaces on the stdio side.
//!
//! `session` is the HTTP session id the frame travelled under (`MCP-Session-Id`), `null` over
//! stdio and for the `initialize` request of the HTTP proxy, which travels before the server
//! issues one.

use std::sync::Arc;

use anyhow::Context as _;
use switchboard::http::{HttpConfig, proxy, stdio_bridge};
use switchboard::http_client::{HttpClientConfig, HttpClientTransport};
use switchboard::transport::FrameTap;
use switchboard::transport::relay_child;

/// `switchboard record`'s flags: what it was asked to do. `--stdio` and `--url` are the shared
/// `ServerArgs`, with help that speaks of relaying.
#[derive(Debug, Clone, clap::Args)]
#[command(
    mut_arg("stdio", |a| a.help("The server command to spawn and relay to (one per HTTP session with --listen)")),
    mut_arg("url", |a| a.help("The upstream MCP endpoint (Streamable HTTP, or legacy HTTP+SSE without --listen)"))
)]
pub(crate) struct RecordArgs {
    /// The recording (JSONL: ts_ms, direction, transport, session, frame).
    #[arg(short, long)]
    output: String,
    /// The upstream: a server command to spawn, or an MCP endpoint.
    #[command(flatten)]
    server: crate::ServerArgs,
    /// Serve HTTP clients on ADDR (IP:PORT, or just PORT for 127.0.0.1; 127.0.0.1:8080 when
    /// no ADDR is given), endpoint /mcp. Binds exactly the address given.
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:8080",
        value_parser = parse_listen
    )]
    listen: Option<std::net::SocketAddr>,
    /// Serve the live session viewer on ADDR (PORT, or 127.0.0.1:PORT; loopback only).
    #[arg(long, value_name = "ADDR", value_parser = switchboard_dev::parse_viewer_addr)]
    ui: Option<std::net::SocketAddr>,
}

/// The command `--stdio CMD` names: `sh -c "exec CMD"`, its stderr passed through.
fn server_command(command: &str) -> tokio::process::Command {
    let mut c = tokio::process::Command::new("sh");
    c.args(["-c", &format!("exec {command}")])
        .stderr(std::process::Stdio::inherit());
    c
}

/// Runs the mode the flags select until it ends; returns the exit code.
///
/// # Errors
/// Usage errors (no upstream, or both), a server that cannot start, a listener that cannot bind,
/// a recording that cannot be created.
pub(crate) async fn run(args: RecordArgs) -> anyhow::Result<i32> {
    // clap lets through exactly one of --stdio and --url: every mode below is reachable.
    let kind = match (args.listen, &args.server.url) {
        (None, None) => "stdio",
        _ => "http",
    };
    let rec = crate::dev::with_ui(recording(&args.output, kind)?, args.ui, &args.output).await?;
    match (args.listen, args.server.stdio, args.server.url) {
        (None, Some(cmd), None) => {
            let mut child = server_command(&cmd)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .with_context(|| format!("cannot start `{cmd}`"))?;
            let status =
                relay_child(&mut child, tokio::io::stdin(), tokio::io::stdout(), rec).await?;
            Ok(status.code().unwrap_or(1))
        }
        (Some(addr), None, Some(url)) => {
            let listener = bind(addr).await?;
            let local = listener.local_addr()?;
            proxy::upstream_url(&url)?;
            crate::ui::announce(&format!(
                "listening on http://{local}/mcp, relaying to {url}"
            ));
            let config = proxy::ProxyConfig::for_bind_address(local);
            proxy::serve(listener, &url, rec, config).await?;
            Ok(0)
        }
        (Some(addr), Some(cmd), None) => {
            let listener = bind(addr).await?;
            let local = listener.local_addr()?;
            let config = HttpConfig::for_bind_address(local);
            let service = stdio_bridge(move || server_command(&cmd), rec, config);
            crate::ui::announce(&format!("listening on http://{local}/mcp"));
            switchboard::http::serve(listener, service).await?;
            Ok(0)
        }
        (None, None, Some(url)) => {
            let transport = HttpClientTransport::connect(&url, HttpClientConfig::default())?;
            let relayed = switchboard::http_client::stdio_bridge(
                transport,
                tokio::io::stdin(),
                tokio::io::stdout(),
                &*rec,
            )
            .await;
            match relayed {
                Ok(()) => Ok(0),
                Err(e) => {
                    eprintln!("switchboard record: {e}");
                    Ok(1)
                }
            }
        }
        _ => anyhow::bail!("give exactly one upstream: --stdio CMD or --url URL"),
    }
}

/// The recording at `path`, private to its owner.
fn recording(path: &str, transport: &'static str) -> anyhow::Result<Arc<dyn FrameTap>> {
    switchboard::transport::recording(path.as_ref(), transport)
        .with_context(|| format!("creating {path}"))
}

async fn bind(addr: std::net::SocketAddr) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))
}

/// Parses `--listen`: `IP:PORT`, or a bare `PORT` (or `:PORT`) on 127.0.0.1.
///
/// # Errors
/// Neither form.
fn parse_listen(s: &str) -> Result<std::net::SocketAddr, String> {
    let port = s.strip_prefix(':').unwrap_or(s);
    if let Ok(port) = port.parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse()
        .map_err(|_| format!("{s:?} is neither IP:PORT nor PORT"))
}
