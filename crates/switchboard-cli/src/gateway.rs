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
    /// With --http: keep the front's sessions and SSE event history in this Redis
    /// (redis://[:PASSWORD@]HOST:PORT[/DB]), shared by every gateway node given the same
    /// store and the same configuration: behind a load balancer, a session's requests reach
    /// the node serving it, and another node takes it over if that one dies. Needs the
    /// deployment secret (--secret-file or SWITCHBOARD_SECRET), as `serve --store` does.
    #[arg(
        long,
        value_name = "REDIS_URL",
        requires = "http",
        env = "SWITCHBOARD_STORE",
        hide_env_values = true
    )]
    store: Option<String>,
    /// A file holding the deployment secret (at least 32 bytes), or the secret itself in
    /// SWITCHBOARD_SECRET; every node behind one load balancer gets the same one.
    #[arg(long, value_name = "FILE")]
    secret_file: Option<PathBuf>,
    /// With --store: the URL the other nodes reach this node's endpoint at (default:
    /// http://ADDR/mcp with the address served).
    #[arg(long, value_name = "URL", requires = "store")]
    advertise: Option<String>,
    /// With --store: this node's id among the nodes (default: random).
    #[arg(long, value_name = "ID", requires = "store")]
    node_id: Option<String>,
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
    let secret = crate::secret::deployment_secret(args.secret_file.as_deref())?;
    config.shared_key = secret
        .as_deref()
        .map(|s| crate::secret::derive(s, "server shared key"));
    let upstreams = config.upstreams.len();
    let gateway = std::sync::Arc::new(Gateway::start(config)?);
    let _reloader = tokio::spawn(reload_on_change(
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
        let mut http_config = HttpConfig::for_bind_address(local);
        let cluster = match &args.store {
            Some(url) => {
                let Some(secret) = secret.as_deref() else {
                    anyhow::bail!(
                        "--store needs the deployment secret every node shares: --secret-file FILE, or the \
                         secret in {} (at least 32 bytes; make one with `openssl rand -base64 32`)",
                        crate::secret::DEPLOYMENT_SECRET_ENV
                    );
                };
                let (joined, store) = crate::serve::join(
                    url,
                    local,
                    args.advertise.clone(),
                    args.node_id.clone(),
                    None,
                    None,
                )
                .await?;
                http_config = switchboard::redis::apply(http_config, &store, joined.clone());
                let relay = switchboard::http::ClusterSecret::new(crate::secret::derive(
                    secret,
                    "cluster relay",
                ))
                .context("the cluster secret")?;
                http_config = http_config.with_cluster_secret(relay);
                tracing::info!(node = %switchboard::http::Cluster::node_id(joined.as_ref()), "the front's sessions kept in Redis");
                Some(joined)
            }
            None => None,
        };
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
        tokio::select! {
            served = switchboard::http::serve(listener, service) => served?,
            _ = tokio::signal::ctrl_c() => {}
        }
        // A node leaving on purpose withdraws its announcement: the others take its sessions.
        if let Some(cluster) = cluster {
            cluster.leave().await;
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

/// How often the configuration file is looked at for a change.
const WATCH_PERIOD: std::time::Duration = std::time::Duration::from_secs(1);

/// Reloads the configuration on SIGHUP and when the file's contents change (looked at every
/// [`WATCH_PERIOD`]; an editor's rename-over counts). A file the gateway refuses is logged
/// and changes nothing.
async fn reload_on_change(
    gateway: std::sync::Arc<Gateway>,
    path: PathBuf,
    audit: Option<PathBuf>,
    watch: bool,
) {
    let mut last = std::fs::read(&path).ok();
    #[cfg(unix)]
    let mut hup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(error = %e, "SIGHUP is not watched");
            None
        }
    };
    let mut tick = tokio::time::interval(WATCH_PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        #[cfg(unix)]
        let signalled = async {
            match hup.as_mut() {
                Some(h) => h.recv().await.is_some(),
                None => std::future::pending().await,
            }
        };
        #[cfg(not(unix))]
        let signalled = std::future::pending::<bool>();
        let watched = async {
            if watch {
                tick.tick().await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        let why = tokio::select! {
            true = signalled => "SIGHUP",
            () = watched => "the file changed",
        };
        let now = std::fs::read(&path).ok();
        if why != "SIGHUP" && (now.is_none() || now == last) {
            continue;
        }
        last = now;
        match config(&path) {
            Ok(mut c) => {
                if let Some(a) = &audit {
                    c.audit_log = Some(a.clone());
                }
                match gateway.reload(c) {
                    Ok(r) => tracing::info!(
                        reason = why,
                        added = ?r.added,
                        removed = ?r.removed,
                        restarted = ?r.restarted,
                        "configuration reloaded"
                    ),
                    Err(e) => {
                        tracing::error!(reason = why, error = %e, "reload refused; nothing changed")
                    }
                }
            }
            Err(e) => tracing::error!(reason = why, error = %e, "reload refused; nothing changed"),
        }
    }
}
