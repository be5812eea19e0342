//! `switchboard call --url URL --oauth`: the OAuth 2.1 client of `switchboard-auth` as the HTTP
//! transport's auth provider, with the user agent the flags ask for.
//!
//! * `--oauth`: the system browser (`xdg-open` on Linux, `open` on macOS, started without a
//!   shell, the URL one argument; the URL is printed too) and a redirect listener on
//!   127.0.0.1 that receives the code.
//! * `--oauth-headless`: the client fetches the authorization URL itself and follows the
//!   redirects with a cookie jar, for authorization servers that approve without a person.
//! * `--oauth-client-credentials`: the client-credentials grant, for a machine acting for
//!   itself; `--client-id` with `--client-secret` or `--private-key` (`private_key_jwt`).
//!
//! Who the client is: `--client-id` (registered beforehand), else `--client-metadata-url` (a
//! client ID metadata document, where the authorization server accepts them), else dynamic
//! registration.
//!
//! Tokens are kept in a file written 0600: `$XDG_STATE_HOME/switchboard/oauth-tokens.json`
//! (else `~/.local/state/...`), or `--oauth-token-file`. Authorization URLs, metadata and
//! endpoints must be `https` and public, unless `--oauth-allow-loopback` allows loopback
//! hosts (over `http` too) for development. A server the user named on loopback
//! (`http://127.0.0.1:8080/mcp`, `localhost`) implies it: its metadata and authorization server
//! are on this machine too. A remote server may still never point the client at a loopback or
//! private address.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use switchboard::auth::ScopeSet;
use switchboard::auth::client::{
    BrowserUserAgent, DpopKey, FileTokenStore, GrantFlow, HeadlessUserAgent, OAuthClient,
    OAuthConfig, OAuthError, PreRegistered, PrivateKeyJwt, UrlPolicy, UserAgent, WorkloadAssertion,
};

/// The OAuth flags of `switchboard call`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct OAuthArgs {
    /// Authorize with OAuth 2.1 when the server asks (HTTP only): discovery from its 401,
    /// PKCE, the system browser for consent and a redirect listener on 127.0.0.1. Tokens are
    /// kept (mode 0600) in $XDG_STATE_HOME/switchboard/oauth-tokens.json and refreshed.
    #[arg(long, conflicts_with = "oauth_headless", requires = "url")]
    pub(crate) oauth: bool,
    /// Like --oauth, without a browser: the authorization URL is fetched and its redirects
    /// followed with a cookie jar (for authorization servers that approve without a person).
    #[arg(long, requires = "url")]
    oauth_headless: bool,
    /// Like --oauth, for a machine acting for itself: tokens come from the client-credentials
    /// grant, with no user and no browser. Needs --client-id and its --client-secret or
    /// --private-key.
    #[arg(
        long,
        requires = "url",
        requires = "client_id",
        conflicts_with_all = ["oauth", "oauth_headless", "client_metadata_url"]
    )]
    oauth_client_credentials: bool,
    /// A client id registered with the authorization server beforehand (else the client
    /// uses --client-metadata-url, or registers itself dynamically, RFC 7591, where the server
    /// allows it).
    #[arg(long, value_name = "ID")]
    client_id: Option<String>,
    /// The secret of --client-id (a confidential client). The process list shows it here:
    /// prefer --client-secret-file or SWITCHBOARD_CLIENT_SECRET.
    #[arg(
        long,
        value_name = "SECRET",
        requires = "client_id",
        env = "SWITCHBOARD_CLIENT_SECRET",
        hide_env_values = true
    )]
    client_secret: Option<String>,
    /// A file holding the secret of --client-id (its last line end dropped).
    #[arg(
        long,
        value_name = "FILE",
        requires = "client_id",
        conflicts_with = "client_secret"
    )]
    client_secret_file: Option<PathBuf>,
    /// Authenticate --client-id at the token endpoint with a JWT it signs with this PEM private
    /// key (PKCS#8, or SEC1 for EC and PKCS#1 for RSA keys) instead of a secret:
    /// private_key_jwt, RFC 7523. The authorization server must know the public key.
    #[arg(
        long,
        value_name = "FILE",
        requires = "client_id",
        conflicts_with_all = ["client_secret", "client_secret_file"]
    )]
    private_key: Option<PathBuf>,
    /// The JWS algorithm of --private-key: ES256 (the default), ES384, RS256, RS384, RS512,
    /// PS256, PS384, PS512 or EdDSA.
    #[arg(long, value_name = "ALG", requires = "private_key")]
    private_key_alg: Option<String>,
    /// The URL of this client's metadata document (https, with a path), used as its client id
    /// where the authorization server accepts client ID metadata documents, instead of
    /// registering dynamically.
    #[arg(long, value_name = "URL")]
    client_metadata_url: Option<String>,
    /// The scopes to ask for first (space-separated), instead of the server's.
    #[arg(long, value_name = "SCOPES")]
    scope: Option<String>,
    /// Allow OAuth metadata, endpoints and redirects on loopback hosts, over http too (for
    /// development: by default only public https URLs are fetched). Implied when the server's
    /// URL is itself on loopback.
    #[arg(long)]
    oauth_allow_loopback: bool,
    /// Where to keep the tokens (instead of $XDG_STATE_HOME/switchboard/oauth-tokens.json).
    #[arg(long, value_name = "PATH")]
    oauth_token_file: Option<PathBuf>,
    /// Like --oauth, for a workload with a platform-issued identity token (Kubernetes
    /// service-account token, CI OIDC token): the file's JWT is the JWT-bearer grant (RFC 7523,
    /// SEP-1933), read again for every token request, so a rotated token is picked up. No
    /// secret is stored; --client-id is sent when given.
    #[arg(
        long,
        value_name = "FILE",
        requires = "url",
        conflicts_with_all = ["oauth", "oauth_headless", "oauth_client_credentials", "client_metadata_url"]
    )]
    oauth_workload_identity: Option<PathBuf>,
    /// Bind the tokens to a key pair with DPoP (RFC 9449): a proof on every token request and
    /// every request to the server, so a stolen token is useless without the key. The ES256
    /// key is kept beside the tokens (`<token file>.dpop-key`, mode 0600).
    #[arg(long)]
    dpop: bool,
}

impl OAuthArgs {
    /// Whether any OAuth flow was asked for.
    pub(crate) fn enabled(&self) -> bool {
        self.oauth
            || self.oauth_headless
            || self.oauth_client_credentials
            || self.oauth_workload_identity.is_some()
    }
}

/// Where tokens are kept by default.
fn default_token_file() -> anyhow::Result<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("state")))
        .context("neither XDG_STATE_HOME nor HOME is set: give --oauth-token-file PATH")?;
    Ok(base.join("switchboard").join("oauth-tokens.json"))
}

/// The OAuth client for `url`, or `None` without `--oauth` / `--oauth-headless`.
pub(crate) async fn client(a: &OAuthArgs, url: &str) -> anyhow::Result<Option<Arc<OAuthClient>>> {
    if !a.enabled() {
        if a.client_id.is_some()
            || a.client_secret.is_some()
            || a.client_secret_file.is_some()
            || a.scope.is_some()
            || a.private_key.is_some()
            || a.client_metadata_url.is_some()
            || a.dpop
        {
            anyhow::bail!(
                "--client-id, --client-secret(-file), --private-key, --client-metadata-url, \
                 --scope and --dpop need --oauth, --oauth-headless, --oauth-client-credentials \
                 or --oauth-workload-identity"
            );
        }
        return Ok(None);
    }
    let endpoint = url::Url::parse(url).with_context(|| format!("`{url}` is not a URL"))?;
    let policy = if a.oauth_allow_loopback {
        UrlPolicy::loopback_for_development()
    } else {
        UrlPolicy::for_server(&endpoint)
    };
    let mut config = OAuthConfig::new(endpoint)
        .with_policy(policy)
        .with_client_name("switchboard");
    if let Some(s) = &a.scope {
        config = config.with_scope(ScopeSet::parse(s));
    }
    if a.oauth_client_credentials {
        if a.client_secret.is_none() && a.client_secret_file.is_none() && a.private_key.is_none() {
            anyhow::bail!(
                "--oauth-client-credentials needs --client-secret-file (or --client-secret, or \
                 SWITCHBOARD_CLIENT_SECRET) or --private-key with --client-id"
            );
        }
        config = config.with_flow(GrantFlow::ClientCredentials);
    }
    if let Some(url) = &a.client_metadata_url {
        let ok = url::Url::parse(url)
            .is_ok_and(|u| u.scheme() == "https" && u.path() != "/" && !u.path().is_empty());
        if !ok {
            anyhow::bail!(
                "--client-metadata-url must be an https URL with a path, such as \
                 https://app.example.com/oauth/client.json"
            );
        }
        config = config.with_client_metadata_url(url.clone());
    }
    if let Some(file) = &a.private_key {
        config = config.with_private_key(private_key(file, a.private_key_alg.as_deref())?);
    }
    // clap lets --client-secret through only with --client-id.
    if let Some(id) = &a.client_id {
        let client_secret = match &a.client_secret_file {
            Some(file) => Some(
                switchboard::http::DeploymentSecret::read_file(file)
                    .map_err(|e| anyhow::anyhow!("--client-secret-file {}: {e}", file.display()))?,
            ),
            None => a.client_secret.clone(),
        };
        config = config.with_preregistered(PreRegistered {
            client_id: id.clone(),
            client_secret,
            issuer: None,
        });
    }
    let file = match &a.oauth_token_file {
        Some(f) => f.clone(),
        None => default_token_file()?,
    };
    if let Some(token) = &a.oauth_workload_identity {
        config = config.with_workload_identity(WorkloadAssertion::File(token.clone()));
    }
    if a.dpop {
        let mut name = file.clone().into_os_string();
        name.push(".dpop-key");
        let key = DpopKey::load_or_create(std::path::Path::new(&name))
            .map_err(|e| anyhow::anyhow!("--dpop: {e}"))?;
        config = config.with_dpop(Arc::new(key));
    }
    let store = Arc::new(FileTokenStore::new(file));
    // The client-credentials grant sends no one anywhere; the headless agent stands by unused.
    let agent: Arc<dyn UserAgent> = if a.oauth_headless
        || a.oauth_client_credentials
        || a.oauth_workload_identity.is_some()
    {
        Arc::new(HeadlessUserAgent::new(policy).map_err(|e| anyhow::anyhow!("{e}"))?)
    } else {
        let agent = BrowserUserAgent::bind()
            .await
            .context("cannot open the redirect listener on 127.0.0.1")?
            .on_open(|url, opened| {
                eprintln!("switchboard call: authorize in your browser:\n  {url}");
                if let Err(e) = opened {
                    eprintln!(
                        "switchboard call: could not start the browser ({e}); open the URL above yourself"
                    );
                }
            });
        Arc::new(agent)
    };
    let client = OAuthClient::new(config, store, agent).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Some(Arc::new(client)))
}

/// The `private_key_jwt` key in `file`, checked by signing a first assertion now, so that a
/// key that cannot sign is reported before any request.
fn private_key(file: &std::path::Path, alg: Option<&str>) -> anyhow::Result<PrivateKeyJwt> {
    let pem = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read the private key {}", file.display()))?;
    let key = PrivateKeyJwt {
        private_key_pem: pem,
        algorithm: alg.unwrap_or("ES256").to_owned(),
        kid: None,
    };
    key.assertion("switchboard", "https://issuer.invalid")
        .map_err(|e| anyhow::anyhow!("--private-key {}: {e}", file.display()))?;
    Ok(key)
}

/// What to say after an authorization failure, with a hint for the usual causes.
pub(crate) fn explain(e: &OAuthError) -> String {
    let hint = match e {
        OAuthError::Refused { .. } => {
            "; if that address is on this machine (the server was named by another name than \
             localhost or a loopback IP), add --oauth-allow-loopback"
        }
        OAuthError::Registration { .. } => "; register a client with it and give --client-id",
        OAuthError::UserAgent(_) => "; try --oauth (the browser) instead of --oauth-headless",
        OAuthError::NoPkce { .. } => "; this authorization server cannot be used safely",
        _ => "",
    };
    format!("authorization failed: {e}{hint}")
}
