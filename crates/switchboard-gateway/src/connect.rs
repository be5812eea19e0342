//! Reaching an upstream: the gateway's own client connected to a child process over stdio, a
//! Streamable HTTP URL (with its bearer token), or the user's connector. Below `upstream` (one
//! upstream's life) and `affinity` (an upstream session per client), which both connect.

use switchboard_client::{Client, ClientError, ClientSession};
use switchboard_http_client::{HttpClientConfig, HttpClientTransport};
use switchboard_transport::{ChildCommand, ChildTransport};
use switchboard_types::lifecycle::Implementation;

use crate::config::{TokenSource, UpstreamConfig, UpstreamKind};

/// Why an attempt to bring an upstream up failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Attempt {
    #[error("cannot start or reach it: {0}")]
    Start(String),
    #[error("{0}")]
    Client(#[from] ClientError),
    #[error("no answer within {0:?} (connect_timeout)")]
    TimedOut(std::time::Duration),
}

/// The gateway's shared client for one upstream: it serves none of the upstream's requests
/// (those reach a client through its own upstream session, `affinity`), so it declares none.
fn client(config: &UpstreamConfig) -> Client {
    Client::builder(Implementation::new(
        "switchboard-gateway",
        env!("CARGO_PKG_VERSION"),
    ))
    .era(config.era)
    .build()
}

/// The bearer token from its source (the first line of a file, trimmed).
fn token(source: &TokenSource) -> Result<String, String> {
    let text = match source {
        TokenSource::ClientCredentials(_) => {
            return Err("client credentials are not a bearer token".into());
        }
        TokenSource::Env(var) => std::env::var(var)
            .map_err(|_| format!("the bearer token's variable {var} is not set"))?,
        TokenSource::File(path) => std::fs::read_to_string(path).map_err(|e| {
            format!(
                "the bearer token's file {} cannot be read: {e}",
                path.display()
            )
        })?,
    };
    let token = text.lines().next().unwrap_or_default().trim().to_owned();
    if token.is_empty() {
        return Err("the bearer token is empty".into());
    }
    Ok(token)
}

pub(crate) async fn connect(config: &UpstreamConfig) -> Result<ClientSession, Attempt> {
    connect_with(config, client(config)).await
}

/// Connects `client` to the upstream `config` names.
pub(crate) async fn connect_with(
    config: &UpstreamConfig,
    client: Client,
) -> Result<ClientSession, Attempt> {
    match &config.kind {
        UpstreamKind::Stdio(cmd) => {
            let command = ChildCommand::new("sh").args(["-c", &format!("exec {cmd}")]);
            let child = ChildTransport::spawn(command)
                .map_err(|e| Attempt::Start(format!("`{cmd}`: {e}")))?;
            Ok(client.connect(child).await?)
        }
        UpstreamKind::Http { url, token: source } => {
            let mut http = HttpClientConfig::default();
            if let Some(TokenSource::ClientCredentials(cc)) = source {
                http = http.with_auth(oauth::provider(url, cc).map_err(Attempt::Start)?);
            } else if let Some(source) = source {
                let value = format!("Bearer {}", token(source).map_err(Attempt::Start)?);
                let mut value = http::HeaderValue::from_str(&value)
                    .map_err(|_| Attempt::Start("the bearer token is not a header value".into()))?;
                value.set_sensitive(true);
                http = http.with_header(http::header::AUTHORIZATION, value);
            }
            let transport = HttpClientTransport::connect(url, http)
                .map_err(|e| Attempt::Start(format!("`{url}`: {e}")))?;
            Ok(client.connect(transport).await?)
        }
        UpstreamKind::Custom(connector) => Ok(connector(client).await?),
    }
}

/// The gateway's OAuth client for an upstream (the client-credentials grant).
#[cfg(feature = "oauth")]
mod oauth {
    use std::sync::Arc;

    use switchboard_auth::ScopeSet;
    use switchboard_auth::client::{GrantFlow, OAuthClient, OAuthConfig, PreRegistered, UrlPolicy};
    use switchboard_http_client::AuthProvider;

    use crate::config::ClientCredentials;

    /// An auth provider getting the gateway's own token for `url` with `cc`.
    pub(super) fn provider(
        url: &str,
        cc: &ClientCredentials,
    ) -> Result<Arc<dyn AuthProvider>, String> {
        let endpoint = url::Url::parse(url).map_err(|e| format!("`{url}`: {e}"))?;
        // A loopback upstream (a development setup) may use plain http for its authorization
        // server too; any other is held to https.
        let loopback = match endpoint.host() {
            Some(url::Host::Domain(d)) => d == "localhost",
            Some(url::Host::Ipv4(a)) => a.is_loopback(),
            Some(url::Host::Ipv6(a)) => a.is_loopback(),
            None => false,
        };
        let policy = if loopback {
            UrlPolicy::loopback_for_development()
        } else {
            UrlPolicy::strict()
        };
        let secret = super::token(&cc.secret)
            .map_err(|e| e.replace("bearer token", "OAuth client secret"))?;
        let mut config = OAuthConfig::new(endpoint)
            .with_policy(policy)
            .with_flow(GrantFlow::ClientCredentials)
            .with_preregistered(PreRegistered {
                client_id: cc.client_id.clone(),
                client_secret: Some(secret),
                issuer: None,
            });
        if let Some(scope) = &cc.scope {
            config = config.with_scope(ScopeSet::parse(scope));
        }
        let client = OAuthClient::headless(config).map_err(|e| e.to_string())?;
        Ok(Arc::new(client))
    }
}

#[cfg(not(feature = "oauth"))]
mod oauth {
    use crate::config::ClientCredentials;

    pub(super) fn provider(
        _: &str,
        _: &ClientCredentials,
    ) -> Result<std::sync::Arc<dyn switchboard_http_client::AuthProvider>, String> {
        Err("OAuth client credentials need switchboard-gateway's `oauth` feature".into())
    }
}
