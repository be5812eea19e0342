//! The authorization scenarios (`auth/*`), in both eras: our OAuth client
//! (`switchboard_auth::client::OAuthClient`, headless) as the HTTP transport's auth provider,
//! then the MCP work the scenario's server protects: connect, list the tools, call the first
//! one (so that a scenario which guards `tools/call` with more scope sees the step-up).
//!
//! | context (`MCP_CONFORMANCE_CONTEXT`) | what the client does |
//! |---|---|
//! | none | the authorization-code flow: a client ID metadata document where the server accepts them, else dynamic registration |
//! | `client_id` + `client_secret` (`auth/pre-registration`) | the authorization-code flow with those credentials |
//! | `client_id` + `client_secret`, `auth/client-credentials-basic` | the client-credentials grant with a secret |
//! | `client_id` + `private_key_pem` + `signing_algorithm` | the client-credentials grant with `private_key_jwt` |
//! | `idp_*` (`auth/cross-app-access-complete-flow`) | an RFC 8693 token exchange at the IdP, then the RFC 7523 JWT-bearer grant |
//! | `auth/wif-jwt-bearer` | workload identity federation: the context's `valid_jwt` written to a 0600 file, read by the client as the JWT-bearer grant's assertion |
//! | `auth/dpop`, `auth/dpop-nonce` | the authorization-code flow with a DPoP key (RFC 9449): proofs on the token requests and on every MCP request, nonces answered once |
//!
//! The suite's servers are on loopback over `http`, so the fetch policy allows loopback (for
//! development); everything else is the client as users get it.

use std::sync::Arc;

use serde_json::{Value, json};
use switchboard_auth::client::{
    DpopKey, GrantFlow, IdentityAssertion, OAuthClient, OAuthConfig, PreRegistered, PrivateKeyJwt,
    UrlPolicy, WorkloadAssertion,
};
use switchboard_client::{Client, ClientSession, EraMode};
use switchboard_http_client::{HttpClientConfig, HttpClientTransport};
use switchboard_types::ProtocolVersion;

use crate::{Outcome, finish, identity};

/// The client ID metadata document this client names (the suite's convention: it is never
/// fetched by the mock authorization server).
pub(crate) const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The scenario's context, if any.
fn context() -> Option<Value> {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
}

fn text(ctx: &Value, key: &str) -> Option<String> {
    ctx.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Where `auth/wif-jwt-bearer` puts the workload's token for the run.
fn wif_path() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("switchboard-wif-{}.jwt", std::process::id()))
}

/// Writes `text` to a new file at `path` readable by its owner only.
fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let _ = std::fs::remove_file(path);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        opts.mode(0o600);
    }
    opts.open(path)?.write_all(text.as_bytes())
}

/// The OAuth client for `scenario` at `url`.
fn oauth(scenario: &str, url: &str) -> Result<OAuthClient, String> {
    let endpoint = url::Url::parse(url).map_err(|e| format!("bad URL {url}: {e}"))?;
    let mut config = OAuthConfig::new(endpoint)
        .with_policy(UrlPolicy::loopback_for_development())
        .with_client_name("switchboard-conformance-client")
        .with_client_metadata_url(CLIENT_METADATA_URL)
        .with_redirect_uri("http://localhost:3000/callback");
    if let Some(ctx) = context() {
        if let Some(client_id) = text(&ctx, "client_id") {
            config = config.with_preregistered(PreRegistered {
                client_id,
                client_secret: text(&ctx, "client_secret"),
                issuer: None,
            });
        }
        if let Some(pem) = text(&ctx, "private_key_pem") {
            config = config.with_private_key(PrivateKeyJwt {
                private_key_pem: pem,
                algorithm: text(&ctx, "signing_algorithm").unwrap_or_else(|| "ES256".into()),
                kid: None,
            });
        }
        if let (Some(endpoint), Some(idp_client_id), Some(id_token)) = (
            text(&ctx, "idp_token_endpoint"),
            text(&ctx, "idp_client_id"),
            text(&ctx, "idp_id_token"),
        ) {
            config = config.with_identity_assertion(IdentityAssertion {
                idp_token_endpoint: endpoint,
                idp_client_id,
                id_token,
            });
        }
        if scenario.starts_with("auth/client-credentials") {
            config = config.with_flow(GrantFlow::ClientCredentials);
        }
    }
    if scenario == "auth/wif-jwt-bearer" {
        // The platform's token arrives as a file (as Kubernetes projects it): written 0600
        // here from the context's `valid_jwt`, then read by the client for each token request.
        let jwt = context()
            .and_then(|c| text(&c, "valid_jwt"))
            .ok_or("auth/wif-jwt-bearer: no valid_jwt in MCP_CONFORMANCE_CONTEXT")?;
        let path = wif_path();
        write_private(&path, &jwt).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        config = config.with_workload_identity(WorkloadAssertion::File(path));
    }
    if scenario.starts_with("auth/dpop") {
        // As `switchboard call --dpop`: a key pair of this run, every token bound to it.
        let key = DpopKey::generate().map_err(|e| e.to_string())?;
        config = config.with_dpop(Arc::new(key));
    }
    OAuthClient::headless(config).map_err(|e| e.to_string())
}

/// Runs an `auth/*` scenario.
pub(crate) async fn run(scenario: &str, url: &str, modern: bool) -> Outcome {
    let provider = Arc::new(oauth(scenario, url)?);
    let config = HttpClientConfig::default().with_auth(provider.clone());
    let transport = HttpClientTransport::connect(url, config).map_err(|e| e.to_string())?;
    let era = if modern {
        EraMode::Pin(ProtocolVersion::V2026_07_28)
    } else {
        EraMode::Legacy
    };
    let client = Client::builder(identity()).era(era).build();
    let why = |what: &str, e: &dyn std::fmt::Display| match provider.last_error() {
        Some(auth) => format!("{what} failed: {e} (authorization: {auth})"),
        None => format!("{what} failed: {e}"),
    };
    let session = client
        .connect(transport)
        .await
        .map_err(|e| why("connecting", &e))?;
    let outcome = work(&session).await.map_err(|(what, e)| why(&what, &e));
    finish(session).await;
    let _ = std::fs::remove_file(wif_path());
    outcome
}

/// Lists the tools and calls the first one with empty arguments.
async fn work(session: &ClientSession) -> Result<(), (String, String)> {
    let tools = session
        .list_tools()
        .await
        .map_err(|e| ("tools/list".to_owned(), e.to_string()))?;
    tracing::info!(tools = tools.len(), "tools listed");
    if let Some(tool) = tools.first() {
        session
            .call_tool(&tool.name, json!({}))
            .await
            .map_err(|e| (format!("tools/call {}", tool.name), e.to_string()))?;
        tracing::info!(tool = %tool.name, "tool called");
    }
    Ok(())
}
