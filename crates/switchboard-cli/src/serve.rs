//! `switchboard serve`: an example server (switchboard-example-servers) over stdio or over
//! Streamable HTTP.

use std::sync::Arc;

use crate::otel::Telemetry;
use anyhow::Context as _;
use switchboard::http::HttpConfig;
use switchboard::jsonrpc::SessionConfig;
use switchboard::redis::RedisTaskStore;
use switchboard::skills::SkillWatch;
use switchboard::tasks::TaskStore;
use switchboard_example_servers::bench::BenchLists;
use switchboard_example_servers::{Deployment, Example};

/// `switchboard serve`'s flags.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ServeArgs {
    /// Serve over this process's stdin and stdout (the default).
    #[arg(long)]
    stdio: bool,
    /// Serve Streamable HTTP on ADDR instead (endpoint /mcp; 127.0.0.1:8080 when no ADDR is
    /// given). Host and Origin must name loopback (or ADDR's own IP); port 0 picks a port.
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:8080",
        conflicts_with = "stdio"
    )]
    pub(crate) http: Option<std::net::SocketAddr>,
    /// Publish skills (the skills extension, SEP-2640): the folder DIR (one directory per
    /// skill, holding its SKILL file and any others; watched, so digests follow the files), or
    /// with no DIR the two example skills the conformance runs use. Any example server.
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    skills: Option<Option<std::path::PathBuf>>,
    /// With --http: answer each POSTed request with one application/json body instead of
    /// an SSE stream.
    #[arg(long, requires = "http")]
    json_response: bool,
    /// With --http: no sessions. Every POST is served on its own (no Mcp-Session-Id; GET and
    /// DELETE get 405); the client is anonymous, so the server sends it no request.
    #[arg(long, requires = "http", conflicts_with = "store")]
    stateless: bool,
    /// With --http: end a session after this many seconds without a request or an open
    /// stream (default 1800).
    #[arg(long, value_name = "SECS", requires = "http", value_parser = parse_seconds)]
    idle_timeout: Option<std::time::Duration>,
    /// With --http: the most sessions open at once; past it, initialize gets 503 (default
    /// 10000).
    #[arg(long, value_name = "N", requires = "http", value_parser = positive())]
    max_sessions: Option<usize>,
    #[command(flatten)]
    issuer: crate::cluster::IssuerArgs,
    #[command(flatten)]
    dpop: switchboard::auth::resource::dpop::DpopFlags,
    #[command(flatten)]
    cluster: crate::cluster::ClusterArgs,
    /// Which example server to run.
    #[arg(long, value_enum, default_value = "everything")]
    example: Example,
    /// Instead of an example, a malicious server for testing clients: it attacks the client
    /// as SCENARIO says and reports what the client did (findings, with the rule each breaks)
    /// on stderr and, over HTTP, at /hostile/report. OAuth scenarios need --http.
    #[arg(
        long,
        value_enum,
        value_name = "SCENARIO",
        conflicts_with_all = ["store", "auth_issuer", "stateless", "json_response"]
    )]
    hostile: Option<switchboard_example_servers::hostile::Scenario>,
    #[command(flatten)]
    lists: BenchLists,
    /// Runtime worker threads (1: a single-threaded runtime). Default: 1 for stdio (one
    /// session), one per core for --http.
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<usize>,
    /// The largest frame accepted, in bytes.
    #[arg(long, default_value_t = switchboard::jsonrpc::DEFAULT_MAX_FRAME_BYTES)]
    max_frame_bytes: usize,
    /// Export traces and metrics over OTLP HTTP/protobuf to the collector at URL (its base:
    /// traces to URL/v1/traces, metrics to URL/v1/metrics); `env`: where the OTEL_* variables say.
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    /// Serve the metrics as Prometheus text at GET PATH (default /metrics) beside /mcp.
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "/metrics", requires = "http")]
    metrics: Option<String>,
    /// Serve a server card (SEP-2127, experimental) named NAME (reverse DNS and one `/`;
    /// default io.github.switchboard-mcp/EXAMPLE) at /mcp/server-card, and an AI Catalog naming
    /// it at /.well-known/ai-catalog.json; made from the server's own metadata; public, no token.
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "", requires = "http")]
    server_card: Option<String>,
}

/// Builds the example server `args` name, with its tasks kept in `tasks` (`None`: in memory);
/// the demo server registers `subtract` on SIGUSR1.
fn build_server(
    args: &ServeArgs,
    config: SessionConfig,
    deployment: &Deployment,
) -> anyhow::Result<(switchboard::server::Server, Option<SkillWatch>)> {
    let server =
        switchboard_example_servers::build_deployed(args.example, args.lists, config, deployment)?;
    if args.example == Example::Demo {
        switchboard_example_servers::demo::subtract_on_sigusr1(&server)?;
    }
    // A folder of skills is watched while the server runs.
    let watch = match (&args.skills, &deployment.skills) {
        (Some(Some(dir)), Some(set)) => Some(
            set.watch(&server)
                .with_context(|| format!("cannot watch {}", dir.display()))?,
        ),
        _ => None,
    };
    Ok((server, watch))
}

/// Serves until stdin ends (stdio) or the process is stopped (HTTP).
///
/// # Errors
/// The server cannot be built, the listener cannot bind, or serving fails.
pub(crate) async fn run(args: ServeArgs) -> anyhow::Result<()> {
    if args.example != Example::Bench && args.lists != BenchLists::default() {
        anyhow::bail!("--tools, --resources and --page-size go with --example bench");
    }
    if let Some(scenario) = args.hostile {
        return match args.http {
            Some(addr) => {
                Ok(switchboard_example_servers::hostile::serve_http(scenario, addr).await?)
            }
            None => Ok(switchboard_example_servers::hostile::serve_stdio(scenario).await?),
        };
    }
    let card_name = match args.server_card.as_deref() {
        None => None,
        Some("") => Some(format!("io.github.switchboard-mcp/{}", args.example.name())),
        Some(given) if switchboard::server::is_server_card_name(given) => Some(given.to_owned()),
        Some(given) => anyhow::bail!(
            "--server-card {given:?}: a card name is reverse DNS and one `/`, e.g. io.github.you/notes"
        ),
    };
    let config = SessionConfig::default().with_max_frame_bytes(args.max_frame_bytes);
    if args
        .metrics
        .as_deref()
        .is_some_and(|p| p == "/mcp" || !p.starts_with('/'))
    {
        anyhow::bail!("--metrics PATH must start with / and not be /mcp");
    }
    let transport = if args.http.is_some() { "tcp" } else { "pipe" };
    let telemetry = Telemetry::from_flags(
        "switchboard-serve",
        args.otlp.as_deref(),
        args.metrics.is_some(),
        transport,
    )?;
    let secret = args.cluster.secret()?;
    let mut deployment = Deployment {
        tasks: None,
        shared_key: secret.as_ref().map(|s| s.derive("server shared key")),
        layer: telemetry.clone().map(|t| Arc::new(t) as _),
        skills: switchboard_example_servers::everything_skills::from_flag(
            args.skills.as_ref().map(Option::as_deref),
        )?,
    };
    let Some(addr) = args.http else {
        let (server, _skills_watch) = build_server(&args, config, &deployment)?;
        let transport = switchboard::transport::StdioTransport::stdio()
            .with_max_frame_bytes(args.max_frame_bytes);
        let session = server.serve(transport)?;
        tracing::info!(example = args.example.name(), "serving on stdio");
        session.closed().await;
        flush(telemetry).await;
        return Ok(());
    };
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    // The body bound stays within the engine's frame bound.
    let http_config = HttpConfig::for_bind_address(local);
    let max_body_bytes = args.max_frame_bytes.min(http_config.max_body_bytes);
    let mut http_config = http_config
        .with_max_body_bytes(max_body_bytes)
        .with_json_response(args.json_response)
        .with_stateless(args.stateless);
    if let Some(t) = args.idle_timeout {
        http_config = http_config.with_idle_timeout(Some(t));
    }
    if let Some(n) = args.max_sessions {
        http_config = http_config.with_max_sessions(n);
    }
    // Joined before the server is built: its tasks are kept in the cluster's store.
    let (mut http_config, joined) = args
        .cluster
        .join(http_config, local, secret.as_ref())
        .await?;
    deployment.tasks = joined.as_ref().map(|(cluster, store)| {
        let node = switchboard::http::Cluster::node_id(cluster.as_ref());
        let limits = switchboard::tasks::TaskLimits::default();
        Arc::new(RedisTaskStore::new(store.clone(), node, limits)) as Arc<dyn TaskStore>
    });
    let (server, _skills_watch) = build_server(&args, config, &deployment)?;
    if let Some(mut auth) = args.issuer.authorization(&server, local)? {
        // Proofs seen are kept in the cluster's store; nonces keyed by the deployment secret.
        let replay = joined.as_ref().map(|(_, store)| {
            Arc::new(switchboard::redis::RedisReplayStore::new(store.clone())) as _
        });
        let nonce_key = secret.as_ref().map(|s| s.derive("dpop nonces"));
        if let Some(dpop) = args.dpop.config(replay, nonce_key)? {
            auth = auth.with_dpop(dpop);
            tracing::info!("DPoP-bound access tokens required");
        }
        http_config = http_config.with_authorization(auth);
    }
    if let (Some(path), Some(t)) = (&args.metrics, &telemetry) {
        http_config =
            http_config.with_metrics(path, Telemetry::PROMETHEUS_CONTENT_TYPE, t.metrics_page());
    }
    if let Some(name) = card_name {
        let (card_of, url) = (server.clone(), format!("http://{local}/mcp"));
        http_config = http_config.with_server_card(Arc::new(move || {
            card_of.server_card_named(&name, Some(&url))
        }));
    }
    let line = format!("listening on http://{local}/mcp");
    crate::cluster::serve_until_stopped(listener, &server, http_config, &joined, &line).await?;
    // What telemetry batched is exported once serving stops.
    flush(telemetry).await;
    Ok(())
}

/// Exports what telemetry has batched (the exporters block, so off the runtime's threads).
pub(crate) async fn flush(telemetry: Option<Telemetry>) {
    if let Some(t) = telemetry {
        let _ = tokio::task::spawn_blocking(move || t.shutdown()).await;
    }
}

/// A positive number of seconds (fractions allowed), as a duration.
fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !(secs > 0.0 && secs <= 1e9) {
        return Err(format!("{text} is not a positive number of seconds"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// A count of at least 1 (parsed as a `u32`, whose range the messages name).
fn positive() -> impl clap::builder::TypedValueParser<Value = usize> {
    clap::builder::TypedValueParser::map(clap::value_parser!(u32).range(1..), |n| n as usize)
}
