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
    http: Option<std::net::SocketAddr>,
    /// With --http: act as an OAuth 2.1 resource server for tokens of this issuer (as
    /// `serve --auth-issuer`): every request needs a bearer token whose audience is this
    /// gateway; the token's subject and scopes are what the configuration's [policy] rules
    /// match. Client tokens never reach an upstream.
    #[arg(long, value_name = "ISSUER_URL", requires = "http")]
    auth_issuer: Option<String>,
    /// With --auth-issuer: the audience tokens must name, this gateway's canonical URL
    /// (default: http://ADDR/mcp with the address served).
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    auth_audience: Option<String>,
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
    let mut config = config(&args.config)?;
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
        if let Some(issuer) = &args.auth_issuer {
            let audience = args
                .auth_audience
                .clone()
                .unwrap_or_else(|| format!("http://{local}/mcp"));
            let auth = crate::serve::authorization(gateway.server(), issuer, &audience)?;
            http_config = http_config.with_authorization(auth);
            tracing::info!(issuer = %issuer, audience = %audience, "access tokens required");
        }
        let service = StreamableHttpService::new(
            switchboard::server_http::session_factory(gateway.server()),
            http_config,
        );
        crate::ui::announce(&format!(
            "gateway to {upstreams} upstream(s) listening on http://{local}/mcp"
        ));
        crate::cluster::serve_until_stopped(listener, service, &joined).await?;
    } else {
        let transport = switchboard::transport::StdioTransport::stdio();
        let session = gateway.server().serve(transport)?;
        tracing::info!(upstreams, "gateway serving on stdio");
        session.closed().await;
    }
    gateway.shutdown();
    Ok(())
}
