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

/// The gateway's client for one upstream: it serves none of the upstream's requests (sampling,
/// elicitation and roots are not forwarded in this version), so it declares none.
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
            if let Some(source) = source {
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
