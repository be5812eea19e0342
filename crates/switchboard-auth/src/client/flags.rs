//! [`OAuthFlags`]: the OAuth client configured from command-line flags (feature `clap`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{
    BrowserUserAgent, DpopKey, FileTokenStore, GrantFlow, HeadlessUserAgent, OAuthClient,
    OAuthConfig, OAuthError, PreRegistered, PrivateKeyJwt, UrlPolicy, UserAgent, WorkloadAssertion,
};
use crate::ScopeSet;

/// The OAuth flags of an MCP client on the command line (`switchboard call`), as clap
/// arguments; `--oauth*` flags require the client's `--url` argument.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OAuthFlags {
    /// Authorize with OAuth 2.1 when the server asks (HTTP only): discovery from its 401,
    /// PKCE, the system browser for consent and a redirect listener on 127.0.0.1. Tokens are
    /// kept (mode 0600) in $XDG_STATE_HOME/switchboard/oauth-tokens.json and refreshed.
    #[arg(long, conflicts_with = "oauth_headless", requires = "url")]
    pub oauth: bool,
    /// Like --oauth, without a browser: the authorization URL is fetched and its redirects
    /// followed with a cookie jar (for authorization servers that approve without a person).
    #[arg(long, requires = "url")]
    pub oauth_headless: bool,
    /// Like --oauth, for a machine acting for itself: tokens come from the client-credentials
    /// grant, with no user and no browser. Needs --client-id and its --client-secret or
    /// --private-key.
    #[arg(
        long,
        requires = "url",
        requires = "client_id",
        conflicts_with_all = ["oauth", "oauth_headless", "client_metadata_url"]
    )]
    pub oauth_client_credentials: bool,
    /// A client id registered with the authorization server beforehand (else the client
    /// uses --client-metadata-url, or registers itself dynamically, RFC 7591, where the server
    /// allows it).
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,
    /// The secret of --client-id (a confidential client). The process list shows it here:
    /// prefer --client-secret-file or SWITCHBOARD_CLIENT_SECRET.
    #[arg(
        long,
        value_name = "SECRET",
        requires = "client_id",
        env = "SWITCHBOARD_CLIENT_SECRET",
        hide_env_values = true
    )]
    pub client_secret: Option<String>,
    /// A file holding the secret of --client-id (its last line end dropped).
    #[arg(
        long,
        value_name = "FILE",
        requires = "client_id",
        conflicts_with = "client_secret"
    )]
    pub client_secret_file: Option<PathBuf>,
    /// Authenticate --client-id at the token endpoint with a JWT it signs with this PEM private
    /// key (PKCS#8, or SEC1 for EC and PKCS#1 for RSA keys) instead of a secret:
    /// private_key_jwt, RFC 7523. The authorization server must know the public key.
    #[arg(
        long,
        value_name = "FILE",
        requires = "client_id",
        conflicts_with_all = ["client_secret", "client_secret_file"]
    )]
    pub private_key: Option<PathBuf>,
    /// The JWS algorithm of --private-key: ES256 (the default), ES384, RS256, RS384, RS512,
    /// PS256, PS384, PS512 or EdDSA.
    #[arg(long, value_name = "ALG", requires = "private_key")]
    pub private_key_alg: Option<String>,
    /// The URL of this client's metadata document (https, with a path), used as its client id
    /// where the authorization server accepts client ID metadata documents, instead of
    /// registering dynamically.
    #[arg(long, value_name = "URL")]
    pub client_metadata_url: Option<String>,
    /// The scopes to ask for first (space-separated), instead of the server's.
    #[arg(long, value_name = "SCOPES")]
    pub scope: Option<String>,
    /// Allow OAuth metadata, endpoints and redirects on loopback hosts, over http too (for
    /// development: by default only public https URLs are fetched). Implied when the server's
    /// URL is itself on loopback.
    #[arg(long)]
    pub oauth_allow_loopback: bool,
    /// Where to keep the tokens (instead of $XDG_STATE_HOME/switchboard/oauth-tokens.json).
    #[arg(long, value_name = "PATH")]
    pub oauth_token_file: Option<PathBuf>,
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
    pub oauth_workload_identity: Option<PathBuf>,
    /// Bind the tokens to a key pair with DPoP (RFC 9449): a proof on every token request and
    /// every request to the server, so a stolen token is useless without the key. The ES256
    /// key is kept beside the tokens (`<token file>.dpop-key`, mode 0600).
    #[arg(long)]
    pub dpop: bool,
}

impl OAuthFlags {
    /// Whether any OAuth flow was asked for.
    fn enabled(&self) -> bool {
        self.oauth
            || self.oauth_headless
            || self.oauth_client_credentials
            || self.oauth_workload_identity.is_some()
    }

    /// What to tell the user after `error`: `authorization failed: ...`, with the flag to try
    /// for the usual causes (a loopback authorization server refused, no registration, no
    /// browser, no PKCE).
    pub fn explain(error: &OAuthError) -> String {
        let hint = match error {
            OAuthError::Refused { .. } => {
                "; if that address is on this machine (the server was named by another name \
                 than localhost or a loopback IP), add --oauth-allow-loopback"
            }
            OAuthError::Registration { .. } => "; register a client with it and give --client-id",
            OAuthError::UserAgent(_) => "; try --oauth (the browser) instead of --oauth-headless",
            OAuthError::NoPkce { .. } => "; this authorization server cannot be used safely",
            _ => "",
        };
        format!("authorization failed: {error}{hint}")
    }

    /// The OAuth client for the MCP server at `url`, or `None` when no flow was asked for;
    /// `on_open` hears where the browser was sent (`--oauth`) and whether it started.
    ///
    /// # Errors
    /// [`OAuthError::Config`]: flags that go only with a flow, a missing client secret, a
    /// client metadata URL that is not https with a path, a key or secret file that cannot be
    /// read; the token file's place unknown; the redirect listener cannot bind.
    pub async fn client(
        &self,
        url: &str,
        on_open: impl Fn(&url::Url, Result<(), &std::io::Error>) + Send + Sync + 'static,
    ) -> Result<Option<Arc<OAuthClient>>, OAuthError> {
        let config = |why: String| OAuthError::Config(why);
        if !self.enabled() {
            if self.client_id.is_some()
                || self.client_secret.is_some()
                || self.client_secret_file.is_some()
                || self.scope.is_some()
                || self.private_key.is_some()
                || self.client_metadata_url.is_some()
                || self.dpop
            {
                return Err(config(
                    "--client-id, --client-secret(-file), --private-key, --client-metadata-url, \
                     --scope and --dpop need --oauth, --oauth-headless, --oauth-client-credentials \
                     or --oauth-workload-identity"
                        .into(),
                ));
            }
            return Ok(None);
        }
        let endpoint =
            url::Url::parse(url).map_err(|e| config(format!("`{url}` is not a URL ({e})")))?;
        let policy = if self.oauth_allow_loopback {
            UrlPolicy::loopback_for_development()
        } else {
            UrlPolicy::for_server(&endpoint)
        };
        let mut c = OAuthConfig::new(endpoint)
            .with_policy(policy)
            .with_client_name("switchboard");
        if let Some(s) = &self.scope {
            c = c.with_scope(ScopeSet::parse(s));
        }
        if self.oauth_client_credentials {
            if self.client_secret.is_none()
                && self.client_secret_file.is_none()
                && self.private_key.is_none()
            {
                return Err(config(
                    "--oauth-client-credentials needs --client-secret-file (or --client-secret, \
                     or SWITCHBOARD_CLIENT_SECRET) or --private-key with --client-id"
                        .into(),
                ));
            }
            c = c.with_flow(GrantFlow::ClientCredentials);
        }
        if let Some(url) = &self.client_metadata_url {
            let ok = url::Url::parse(url)
                .is_ok_and(|u| u.scheme() == "https" && u.path() != "/" && !u.path().is_empty());
            if !ok {
                return Err(config(
                    "--client-metadata-url must be an https URL with a path, such as \
                     https://app.example.com/oauth/client.json"
                        .into(),
                ));
            }
            c = c.with_client_metadata_url(url.clone());
        }
        if let Some(file) = &self.private_key {
            c = c.with_private_key(private_key(file, self.private_key_alg.as_deref())?);
        }
        // clap lets --client-secret through only with --client-id.
        if let Some(id) = &self.client_id {
            let client_secret = match &self.client_secret_file {
                Some(file) => Some(crate::read_secret_file(file).map_err(|e| {
                    config(format!("--client-secret-file {}: {e}", file.display()))
                })?),
                None => self.client_secret.clone(),
            };
            c = c.with_preregistered(PreRegistered {
                client_id: id.clone(),
                client_secret,
                issuer: None,
            });
        }
        let file = match &self.oauth_token_file {
            Some(f) => f.clone(),
            None => default_token_file()?,
        };
        if let Some(token) = &self.oauth_workload_identity {
            c = c.with_workload_identity(WorkloadAssertion::File(token.clone()));
        }
        if self.dpop {
            let mut name = file.clone().into_os_string();
            name.push(".dpop-key");
            let key = DpopKey::load_or_create(Path::new(&name))
                .map_err(|e| config(format!("--dpop: {e}")))?;
            c = c.with_dpop(Arc::new(key));
        }
        let store = Arc::new(FileTokenStore::new(file));
        // The client-credentials grant sends no one anywhere; the headless agent stands by
        // unused.
        let agent: Arc<dyn UserAgent> = if self.oauth_headless
            || self.oauth_client_credentials
            || self.oauth_workload_identity.is_some()
        {
            Arc::new(HeadlessUserAgent::new(policy)?)
        } else {
            let agent = BrowserUserAgent::bind().await.map_err(|e| {
                config(format!(
                    "cannot open the redirect listener on 127.0.0.1: {e}"
                ))
            })?;
            Arc::new(agent.on_open(on_open))
        };
        Ok(Some(Arc::new(OAuthClient::new(c, store, agent)?)))
    }
}

/// Where tokens are kept by default: `$XDG_STATE_HOME/switchboard/oauth-tokens.json`, else
/// under `~/.local/state`.
fn default_token_file() -> Result<PathBuf, OAuthError> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("state")))
        .ok_or_else(|| {
            OAuthError::Config(
                "neither XDG_STATE_HOME nor HOME is set: give --oauth-token-file PATH".into(),
            )
        })?;
    Ok(base.join("switchboard").join("oauth-tokens.json"))
}

/// The `private_key_jwt` key in `file`, checked by signing a first assertion now, so that a
/// key that cannot sign is reported before any request.
fn private_key(file: &Path, alg: Option<&str>) -> Result<PrivateKeyJwt, OAuthError> {
    let shown = file.display();
    let pem = std::fs::read_to_string(file)
        .map_err(|e| OAuthError::Config(format!("cannot read the private key {shown}: {e}")))?;
    let key = PrivateKeyJwt {
        private_key_pem: pem,
        algorithm: alg.unwrap_or("ES256").to_owned(),
        kid: None,
    };
    key.assertion("switchboard", "https://issuer.invalid")
        .map_err(|e| OAuthError::Config(format!("--private-key {shown}: {e}")))?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explained_failure_names_the_flag_to_try_for_the_usual_causes() {
        let refused = OAuthError::Refused {
            url: "http://auth.test/".into(),
            why: "a loopback address".into(),
        };
        let text = OAuthFlags::explain(&refused);
        assert!(text.starts_with("authorization failed: refused to fetch http://auth.test/"));
        assert!(text.ends_with("add --oauth-allow-loopback"), "{text}");
        let other = OAuthError::Discovery("no metadata".into());
        assert_eq!(
            OAuthFlags::explain(&other),
            "authorization failed: authorization discovery failed: no metadata"
        );
    }
}
