//! What `serve --http` and `gateway --http` share: the issuer of the access tokens, the flags
//! of several nodes behind one load balancer (`switchboard::redis::join` joins them), and
//! serving until the process is stopped.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use switchboard::http::{ClusterSecret, DeploymentSecret, HttpConfig, StreamableHttpService};
use switchboard::redis::{RedisCluster, RedisStore};

/// `--auth-issuer` and `--auth-audience`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct IssuerArgs {
    /// With --http: act as an OAuth 2.1 resource server for tokens of this issuer (an
    /// authorization server publishing RFC 8414 or OpenID metadata with a jwks_uri; https,
    /// or http on loopback). Every request then needs a bearer token whose audience is this
    /// server. `serve`: the example's scopes apply (everything: mcp:basic, and mcp:write for
    /// test_scoped_write). `gateway`: the token's subject and scopes are what the
    /// configuration's [policy] rules match; client tokens never reach an upstream. Metadata
    /// at /.well-known/oauth-protected-resource/mcp.
    #[arg(long, value_name = "ISSUER_URL", requires = "http")]
    auth_issuer: Option<String>,
    /// With --auth-issuer: the audience tokens must name, this server's canonical URL
    /// (default: http://ADDR/mcp with the address served).
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    auth_audience: Option<String>,
}

impl IssuerArgs {
    /// With `--auth-issuer`: the endpoint's authorization, tokens checked against the issuer's
    /// JWKS, with `server`'s declared scopes.
    pub(crate) fn authorization(
        &self,
        server: &switchboard::server::Server,
        local: SocketAddr,
    ) -> anyhow::Result<Option<switchboard::http::Authorization>> {
        let Some(issuer) = &self.auth_issuer else {
            return Ok(None);
        };
        let audience =
            (self.auth_audience.clone()).unwrap_or_else(|| format!("http://{local}/mcp"));
        let auth = switchboard::http::Authorization::jwt(&audience, issuer).map_err(|e| {
            anyhow::anyhow!("--auth-issuer {issuer:?}, --auth-audience {audience:?}: {e}")
        })?;
        tracing::info!(issuer = %issuer, audience = %audience, "access tokens required");
        Ok(Some(auth.with_policy(server.scope_policy().clone())))
    }
}

/// `--store`, `--secret-file`, `--advertise` and `--node-id`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ClusterArgs {
    /// With --http: keep sessions and SSE event history in this Redis
    /// (redis://[:PASSWORD@]HOST:PORT[/DB]), shared with every other node given the same
    /// store (a gateway's nodes: and the same configuration): behind a load balancer, a
    /// session's requests reach the node serving it, and another node takes it over if that
    /// one dies. Needs the deployment secret (--secret-file). A URL carrying a password is
    /// better given in SWITCHBOARD_STORE than here, where the process list shows it.
    #[arg(
        long,
        value_name = "REDIS_URL",
        requires = "http",
        env = "SWITCHBOARD_STORE",
        hide_env_values = true
    )]
    pub(crate) store: Option<String>,
    /// A file holding the deployment secret (at least 32 bytes; `openssl rand -base64 32`),
    /// or the secret itself in SWITCHBOARD_SECRET. Every replica behind one load balancer
    /// must be given the same one: it keys the sealed requestState of 2026-07-28 multi-round
    /// requests and the pagination cursors, so that a retry or a next page may reach any
    /// replica, and with --store it authenticates the requests nodes relay to each other.
    /// Required with --store; without it each process has keys of its own.
    #[arg(long, value_name = "FILE")]
    secret_file: Option<PathBuf>,
    /// With --store: the URL the other nodes reach this node's endpoint at (default:
    /// http://ADDR/mcp with the address served; give it when binding 0.0.0.0).
    #[arg(long, value_name = "URL", requires = "store")]
    advertise: Option<String>,
    /// With --store: this node's id among the nodes (default: random).
    #[arg(long, value_name = "ID", requires = "store")]
    node_id: Option<String>,
}

/// A node joined to the cluster, and the store it shares.
pub(crate) type Joined = Option<(Arc<RedisCluster>, RedisStore)>;

impl ClusterArgs {
    /// The deployment secret: `--secret-file`, else `SWITCHBOARD_SECRET`; required with `--store`.
    pub(crate) fn secret(&self) -> anyhow::Result<Option<DeploymentSecret>> {
        let secret =
            DeploymentSecret::load(self.secret_file.as_deref()).map_err(|e| {
                match &self.secret_file {
                    Some(f) => anyhow::anyhow!("--secret-file {}: {e}", f.display()),
                    None => anyhow::anyhow!("{}: {e}", DeploymentSecret::ENV),
                }
            })?;
        if self.store.is_some() && secret.is_none() {
            anyhow::bail!(
                "--store needs the deployment secret every node shares: --secret-file FILE, or the \
                 secret in {} (at least 32 bytes; make one with `openssl rand -base64 32`)",
                DeploymentSecret::ENV
            );
        }
        Ok(secret)
    }

    /// With `--store`: joins the cluster as the node serving at `local`, `config` keeping its
    /// sessions in the store; without, `config` unchanged.
    pub(crate) async fn join(
        &self,
        config: HttpConfig,
        local: SocketAddr,
        secret: Option<&DeploymentSecret>,
    ) -> anyhow::Result<(HttpConfig, Joined)> {
        let (Some(url), Some(secret)) = (&self.store, secret) else {
            return Ok((config, None));
        };
        if local.ip().is_unspecified() && self.advertise.is_none() {
            anyhow::bail!(
                "--store with --http {local}: give --advertise URL, the address the other nodes reach this one at"
            );
        }
        let advertise = self
            .advertise
            .clone()
            .unwrap_or_else(|| format!("http://{local}/mcp"));
        let relay = ClusterSecret::new(secret.derive("cluster relay"))
            .ok_or_else(|| anyhow::anyhow!("the cluster secret is too short"))?;
        let (config, cluster, store) = switchboard::redis::join(
            url,
            &advertise,
            self.node_id.clone(),
            config,
            relay,
        )
        .await
        .map_err(|e| {
            anyhow::anyhow!(
                "--store: {e}; check that Redis runs there and that the URL carries its password"
            )
        })?;
        tracing::info!(node = %switchboard::http::Cluster::node_id(cluster.as_ref()), "sessions kept in Redis");
        Ok((config, Some((cluster, store))))
    }
}

/// Serves `server` over Streamable HTTP with `config` on `listener` (announced with `line`)
/// until Ctrl-C or SIGTERM; a node of a cluster then leaves it on purpose (withdrawing its
/// announcement, so that the others take its sessions over at once).
pub(crate) async fn serve_until_stopped(
    listener: tokio::net::TcpListener,
    server: &switchboard::server::Server,
    config: HttpConfig,
    joined: &Joined,
    line: &str,
) -> anyhow::Result<()> {
    let factory = switchboard::server_http::session_factory(server);
    let service = StreamableHttpService::new(factory, config);
    crate::ui::announce(line);
    let stop = async {
        #[cfg(unix)]
        if let Ok(mut term) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    };
    tokio::select! {
        served = switchboard::http::serve(listener, service) => served?,
        () = stop => {}
    }
    if let Some((cluster, store)) = joined {
        cluster.leave().await;
        tracing::info!(
            round_trips = store.round_trips(),
            "left the cluster; Redis round trips made"
        );
    }
    Ok(())
}
