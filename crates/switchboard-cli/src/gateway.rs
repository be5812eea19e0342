//! `switchboard gateway CONFIG`: the upstreams a TOML file names (stdio commands, Streamable
//! HTTP URLs), served as one MCP server over stdio or Streamable HTTP, each under its prefix
//! (`switchboard-gateway`).

use std::path::PathBuf;

use anyhow::Context as _;
use switchboard::gateway::{Gateway, GatewayConfig};
use switchboard::http::{HttpConfig, StreamableHttpService};

/// `switchboard gateway`'s flags.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct GatewayArgs {
    /// The configuration (TOML): `[[upstream]]` tables with `name` (the prefix; "" for none),
    /// `stdio = "CMD ARGS"` or `url = "http://..."` (with `bearer_token_env` or
    /// `bearer_token_file`), and `era` (auto, legacy, 2026-07-28); optional top-level
    /// `separator` (default `_`), `max_upstreams`, `max_items`, `call_timeout_secs`.
    config: PathBuf,
    /// Serve over this process's stdin and stdout (the default).
    #[arg(long)]
    stdio: bool,
    /// Serve Streamable HTTP on ADDR instead (endpoint /mcp); Host and Origin must name
    /// loopback (or ADDR's own IP); port 0 picks a port.
    #[arg(long, value_name = "ADDR", conflicts_with = "stdio")]
    http: Option<std::net::SocketAddr>,
}

/// Reads the configuration; a mistake names the file, the line and the key.
fn config(path: &std::path::Path) -> anyhow::Result<GatewayConfig> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the gateway configuration {}", path.display()))?;
    GatewayConfig::from_toml(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// Serves until stdin ends (stdio) or the process is stopped (HTTP).
///
/// # Errors
/// The configuration is refused, the listener cannot bind, or serving fails.
pub(crate) async fn run(args: GatewayArgs) -> anyhow::Result<()> {
    let config = config(&args.config)?;
    let upstreams = config.upstreams.len();
    let gateway = Gateway::start(config)?;
    if let Some(addr) = args.http {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let service = StreamableHttpService::new(
            switchboard::server_http::session_factory(gateway.server()),
            HttpConfig::for_bind_address(local),
        );
        crate::ui::announce(&format!(
            "gateway to {upstreams} upstream(s) listening on http://{local}/mcp"
        ));
        tokio::select! {
            served = switchboard::http::serve(listener, service) => served?,
            _ = tokio::signal::ctrl_c() => {}
        }
    } else {
        let transport = switchboard::transport::StdioTransport::stdio();
        let session = gateway.server().serve(transport)?;
        tracing::info!(upstreams, "gateway serving on stdio");
        session.closed().await;
    }
    gateway.shutdown();
    Ok(())
}
