//! `switchboard gateway CONFIG`: the upstreams a TOML file names (stdio commands, Streamable
//! HTTP URLs), served as one MCP server over stdio or Streamable HTTP, each under its prefix
//! (`switchboard-gateway`).

use std::path::PathBuf;

use anyhow::Context as _;
use switchboard::gateway::{Gateway, GatewayConfig};
use switchboard::http::HttpConfig;

/// `switchboard gateway`'s flags.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct GatewayArgs {
    /// The configuration (TOML): `[[upstream]]` tables with `name` (the prefix; "" for none),
    /// `stdio = "CMD ARGS"` or `url = "http://..."` (with `bearer_token_env` or
    /// `bearer_token_file`), `era` (auto, legacy, 2026-07-28) and `client_sessions` (own,
    /// shared); optional top-level
    /// `separator` (default `_`), `max_upstreams`, `max_items`, `call_timeout_secs`,
    /// `page_size`, `audit_log`, `search_tools`, and `[policy]` (`default`, `[[policy.rule]]` with
    /// `effect`, `subjects`, `scopes`, `upstreams`, `tools`). Reloaded on SIGHUP and when
    /// the file changes: upstreams added, removed or restarted, the policy replaced.
    config: PathBuf,
    /// Serve over this process's stdin and stdout (the default).
    #[arg(long)]
    stdio: bool,
    /// Serve Streamable HTTP on ADDR instead (endpoint /mcp); Host and Origin must name
    /// loopback (or ADDR's own IP); port 0 picks a port.
    #[arg(long, value_name = "ADDR", conflicts_with = "stdio")]
    pub(crate) http: Option<std::net::SocketAddr>,
    #[command(flatten)]
    issuer: crate::cluster::IssuerArgs,
    /// Append one JSON line per client request to FILE (the configuration's `audit_log`,
    /// which this overrides).
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,
    /// Reload the configuration on SIGHUP only, not when the file changes.
    #[arg(long)]
    no_watch: bool,
    #[command(flatten)]
    cluster: crate::cluster::ClusterArgs,
}

/// Serves until stdin ends (stdio) or the process is stopped (HTTP).
///
/// # Errors
/// The configuration is refused, the listener cannot bind, or serving fails.
pub(crate) async fn run(args: GatewayArgs) -> anyhow::Result<()> {
    // A mistake in the configuration names the file, the line and the key.
    let shown = args.config.display();
    let text = std::fs::read_to_string(&args.config)
        .with_context(|| format!("cannot read the gateway configuration {shown}"))?;
    let mut config = GatewayConfig::from_toml(&text).with_context(|| shown.to_string())?;
    if let Some(path) = &args.audit {
        config.audit_log = Some(path.clone());
    }
    let secret = args.cluster.secret()?;
    config.shared_key = secret.as_ref().map(|s| s.derive("server shared key"));
    let upstreams = config.upstreams.len();
    let gateway = std::sync::Arc::new(Gateway::start(config)?);
    let _reloader = tokio::spawn(switchboard::gateway::reload_on_change(
        gateway.clone(),
        args.config.clone(),
        args.audit.clone(),
        !args.no_watch,
    ));
    // Every upstream that can come up is listed before the first client is served.
    gateway.ready().await;
    if let Some(addr) = args.http {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let http_config = HttpConfig::for_bind_address(local);
        let (mut http_config, joined) = args
            .cluster
            .join(http_config, local, secret.as_ref())
            .await?;
        if let Some(auth) = args.issuer.authorization(gateway.server(), local)? {
            http_config = http_config.with_authorization(auth);
        }
        let line = format!("gateway to {upstreams} upstream(s) listening on http://{local}/mcp");
        let server = gateway.server();
        crate::cluster::serve_until_stopped(listener, server, http_config, &joined, &line).await?;
    } else {
        let transport = switchboard::transport::StdioTransport::stdio();
        let session = gateway.server().serve(transport)?;
        tracing::info!(upstreams, "gateway serving on stdio");
        session.closed().await;
    }
    gateway.shutdown();
    Ok(())
}
