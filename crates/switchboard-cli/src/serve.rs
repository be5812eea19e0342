//! `switchboard serve`: an example server (switchboard-example-servers) over stdio or over
//! Streamable HTTP.

use switchboard::jsonrpc::SessionConfig;
use switchboard_example_servers::Example;
use switchboard_http::{HttpConfig, StreamableHttpService};

/// How to serve.
#[derive(Debug, Clone)]
pub(crate) struct ServeArgs {
    /// Which server.
    pub(crate) example: Example,
    /// Serve Streamable HTTP on this address instead of stdio.
    pub(crate) http: Option<std::net::SocketAddr>,
    /// With `http`: one JSON body per POSTed request instead of an SSE stream.
    pub(crate) json_response: bool,
    /// With `http`: no sessions.
    pub(crate) stateless: bool,
    /// With `http`: the idle timeout of a session, when not the default.
    pub(crate) idle_timeout: Option<std::time::Duration>,
    /// With `http`: the most sessions at once, when not the default.
    pub(crate) max_sessions: Option<usize>,
    /// The largest frame accepted, in bytes.
    pub(crate) max_frame_bytes: usize,
    /// With `http`: the issuer whose access tokens are required (OAuth 2.1 resource server).
    pub(crate) auth_issuer: Option<String>,
    /// With `auth_issuer`: the audience tokens must name (default: the endpoint's URL).
    pub(crate) auth_audience: Option<String>,
    /// With `http`: the Redis keeping sessions and events, shared with other nodes.
    pub(crate) store: Option<String>,
    /// With `store`: the URL other nodes reach this one at.
    pub(crate) advertise: Option<String>,
    /// With `store`: this node's id.
    pub(crate) node_id: Option<String>,
    /// With the bench example: the further tools and resources it registers.
    pub(crate) lists: switchboard_example_servers::bench::BenchLists,
}

/// Builds the example server `args` name, with its tasks kept in `tasks` (`None`: in memory).
fn build_server(
    args: &ServeArgs,
    config: SessionConfig,
    tasks: Option<std::sync::Arc<dyn switchboard_tasks::TaskStore>>,
) -> anyhow::Result<switchboard::server::Server> {
    if args.example == Example::Bench {
        return Ok(switchboard_example_servers::bench::bench_server(
            config, args.lists,
        )?);
    }
    Ok(switchboard_example_servers::build_with_tasks(
        args.example,
        config,
        tasks,
    )?)
}

/// This node, joined to the cluster sharing the Redis at `url`: records live as long as the
/// idle timeout, plus the reaper's period and a margin; `max_sessions` bounds them.
async fn join_cluster(
    url: &str,
    advertise: String,
    node_id: Option<String>,
    idle: Option<std::time::Duration>,
    max_sessions: usize,
) -> anyhow::Result<(
    std::sync::Arc<switchboard_redis::RedisCluster>,
    switchboard_redis::RedisStore,
)> {
    use switchboard_redis::{RedisCluster, RedisConfig, RedisStore};
    let idle = idle.unwrap_or(switchboard_http::config::DEFAULT_IDLE_TIMEOUT);
    let redis = RedisConfig {
        session_ttl: idle + std::time::Duration::from_secs(60),
        max_sessions,
        ..RedisConfig::default()
    };
    let store = RedisStore::connect(url, redis).await.map_err(|e| {
        anyhow::anyhow!(
            "--store: {e}; check that Redis runs there and that the URL carries its password"
        )
    })?;
    let cluster = RedisCluster::join(store.clone(), node_id, &advertise)
        .await
        .map_err(|e| anyhow::anyhow!("--store: {e}"))?;
    Ok((cluster, store))
}

/// The endpoint's authorization: tokens of `issuer` for `audience`, checked against the
/// issuer's JWKS, with the example server's declared scopes.
fn authorization(
    server: &switchboard::server::Server,
    issuer: &str,
    audience: &str,
) -> anyhow::Result<switchboard_http::Authorization> {
    use switchboard_auth::resource::{JwtValidator, JwtValidatorConfig, fetchable};
    let issuer_url = url::Url::parse(issuer)
        .map_err(|e| anyhow::anyhow!("--auth-issuer {issuer:?} is not a URL ({e}); give the authorization server's issuer, such as https://auth.example.com"))?;
    if !fetchable(&issuer_url) {
        anyhow::bail!(
            "--auth-issuer must be an https URL (http is allowed only for a loopback host such as 127.0.0.1)"
        );
    }
    let audience = switchboard_http::Authorization::canonical_resource(audience)
        .map_err(|e| anyhow::anyhow!("--auth-audience: {e}"))?;
    let validator = JwtValidator::new(JwtValidatorConfig::new(issuer, &audience));
    Ok(switchboard_http::Authorization::new(
        &audience,
        vec![issuer.to_owned()],
        std::sync::Arc::new(validator),
    )
    .map_err(|e| anyhow::anyhow!("--auth-audience: {e}"))?
    .with_policy(server.scope_policy().clone()))
}

/// Serves until stdin ends (stdio) or the process is stopped (HTTP).
///
/// # Errors
/// The server cannot be built, the listener cannot bind, or serving fails.
pub(crate) async fn run(args: ServeArgs) -> anyhow::Result<()> {
    if args.example != Example::Bench
        && args.lists != switchboard_example_servers::bench::BenchLists::default()
    {
        anyhow::bail!("--tools, --resources and --page-size go with --example bench");
    }
    let config = SessionConfig::default().with_max_frame_bytes(args.max_frame_bytes);
    if let Some(addr) = args.http {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        // Joined before the server is built: its tasks are kept in the cluster's store.
        let mut cluster = None;
        if let Some(url) = &args.store {
            let advertise = args
                .advertise
                .clone()
                .unwrap_or_else(|| format!("http://{local}/mcp"));
            if local.ip().is_unspecified() && args.advertise.is_none() {
                anyhow::bail!(
                    "--store with --http {local}: give --advertise URL, the address the other nodes reach this one at"
                );
            }
            let max_sessions = args
                .max_sessions
                .unwrap_or(switchboard_http::config::DEFAULT_MAX_SESSIONS);
            cluster = Some(
                join_cluster(
                    url,
                    advertise,
                    args.node_id.clone(),
                    args.idle_timeout,
                    max_sessions,
                )
                .await?,
            );
        }
        let tasks = cluster.as_ref().map(|(joined, store)| {
            let node = switchboard_http::Cluster::node_id(joined.as_ref());
            std::sync::Arc::new(switchboard_redis::RedisTaskStore::new(
                store.clone(),
                node,
                switchboard_tasks::TaskLimits::default(),
            )) as std::sync::Arc<dyn switchboard_tasks::TaskStore>
        });
        let server = build_server(&args, config, tasks)?;
        if args.example == Example::Demo {
            switchboard_example_servers::demo::subtract_on_sigusr1(&server)?;
        }
        // The body bound stays within the engine's frame bound.
        let mut http_config = HttpConfig::for_bind_address(local)
            .with_json_response(args.json_response)
            .with_stateless(args.stateless)
            .with_max_body_bytes(
                args.max_frame_bytes
                    .min(switchboard_http::config::DEFAULT_MAX_BODY_BYTES),
            );
        if let Some(t) = args.idle_timeout {
            http_config = http_config.with_idle_timeout(Some(t));
        }
        if let Some(n) = args.max_sessions {
            http_config = http_config.with_max_sessions(n);
        }
        if let Some(issuer) = &args.auth_issuer {
            let audience = args
                .auth_audience
                .clone()
                .unwrap_or_else(|| format!("http://{local}/mcp"));
            http_config =
                http_config.with_authorization(authorization(&server, issuer, &audience)?);
            tracing::info!(issuer = %issuer, audience = %audience, "access tokens required");
        }
        if let Some((joined, store)) = &cluster {
            http_config = switchboard_redis::apply(http_config, store, joined.clone());
            tracing::info!(node = %switchboard_http::Cluster::node_id(joined.as_ref()), "sessions and tasks kept in Redis");
        }
        let service = StreamableHttpService::new(
            switchboard::server_http::session_factory(&server),
            http_config,
        );
        crate::ui::announce(&format!("listening on http://{local}/mcp"));
        let stop = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        #[cfg(unix)]
        let stop = async {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
            tokio::select! {
                () = stop => {}
                _ = term.recv() => {}
            }
            Ok::<(), std::io::Error>(())
        };
        match &cluster {
            // A node leaving on purpose withdraws its announcement, so that the others take
            // its sessions over at once.
            Some((cluster, store)) => {
                tokio::select! {
                    served = switchboard_http::serve(listener, service) => served?,
                    _ = stop => {
                        cluster.leave().await;
                        tracing::info!(round_trips = store.round_trips(), "left the cluster; Redis round trips made");
                    }
                }
            }
            None => switchboard_http::serve(listener, service).await?,
        }
        return Ok(());
    }
    let server = build_server(&args, config, None)?;
    if args.example == Example::Demo {
        switchboard_example_servers::demo::subtract_on_sigusr1(&server)?;
    }
    let transport = switchboard::transport::stdio::StdioTransport::stdio()
        .with_max_frame_bytes(args.max_frame_bytes);
    let session = server.serve(transport)?;
    tracing::info!(example = args.example.name(), "serving on stdio");
    session.closed().await;
    Ok(())
}
