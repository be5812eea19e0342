//! OAuth 2.0 Token Exchange (RFC 8693) as a building block: one token traded at a token endpoint
//! for another, for a given audience, resource and scope. A gateway exchanges the token its
//! client presented for one its upstream accepts (never passing the client's token on); the
//! client's enterprise-managed flow (ID-JAG, SEP-990) trades the user's ID token for an identity
//! assertion grant with it.

use std::time::Duration;

use serde::Deserialize;
use url::Url;

use super::error::{OAuthError, shorten, shown};
use super::fetch::{DEFAULT_FETCH_TIMEOUT, DEFAULT_MAX_BODY_BYTES, Fetcher};
use super::policy::UrlPolicy;
use super::store::RegisteredClient;
use super::token::{ClientAuthentication, PrivateKeyJwt};

/// The grant type of a token exchange request (RFC 8693 §2.1).
pub const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";

/// Token type identifiers (RFC 8693 §3, and SEP-990's identity assertion grant).
pub mod token_types {
    /// An OAuth access token.
    pub const ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";
    /// An OAuth refresh token.
    pub const REFRESH_TOKEN: &str = "urn:ietf:params:oauth:token-type:refresh_token";
    /// An OpenID Connect ID token.
    pub const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
    /// A JWT.
    pub const JWT: &str = "urn:ietf:params:oauth:token-type:jwt";
    /// An identity assertion authorization grant (ID-JAG, SEP-990).
    pub const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
}

/// The most `audience` and `resource` values one request carries (each); more is a
/// configuration error, never a request the endpoint must parse.
pub const MAX_EXCHANGE_TARGETS: usize = 16;

/// One token exchange request, built then sent with [`TokenExchange::exchange`]: a gateway
/// trading its client's token for one its upstream accepts.
///
/// ```no_run
/// # async fn run(client_token: &str) -> Result<(), switchboard_auth::client::OAuthError> {
/// use switchboard_auth::client::{RegisteredClient, TokenAuthMethod, TokenExchange, token_types};
///
/// let gateway = RegisteredClient {
///     client_id: "gateway".into(),
///     client_secret: Some("s3cret".into()),
///     auth_method: TokenAuthMethod::ClientSecretBasic,
///     redirect_uri: None,
/// };
/// let upstream = TokenExchange::new(
///     "https://as.example.com/token",
///     gateway,
///     client_token,
///     token_types::ACCESS_TOKEN,
/// )?
/// .resource("https://files.example.com/mcp")
/// .scope("files:read")
/// .exchange()
/// .await?;
/// println!("expires in {:?} s", upstream.expires_in);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct TokenExchange {
    endpoint: Url,
    client: RegisteredClient,
    key: Option<(PrivateKeyJwt, String)>,
    subject_token: String,
    subject_token_type: String,
    actor: Option<(String, String)>,
    requested_token_type: Option<String>,
    audience: Vec<String>,
    resource: Vec<String>,
    scope: Option<String>,
    policy: UrlPolicy,
    timeout: Duration,
}

impl std::fmt::Debug for TokenExchange {
    /// Never shows a token or a secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenExchange")
            .field("endpoint", &shown(self.endpoint.as_str()))
            .field("client", &self.client)
            .field("subject_token_type", &self.subject_token_type)
            .field("has_actor", &self.actor.is_some())
            .field("requested_token_type", &self.requested_token_type)
            .field("audience", &self.audience)
            .field("resource", &self.resource)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// What the token endpoint issued (RFC 8693 §2.2.1).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExchangedToken {
    /// The issued token (not always an access token: see `issued_token_type`).
    pub access_token: String,
    /// What the issued token is (one of [`token_types`], or another URI).
    pub issued_token_type: String,
    /// How to use it: `Bearer`, `DPoP`, or `N_A` when it is not an access token.
    pub token_type: String,
    /// Its lifetime in seconds, when the endpoint said.
    pub expires_in: Option<u64>,
    /// The scope granted, when the endpoint said.
    pub scope: Option<String>,
    /// A refresh token, when one was issued.
    pub refresh_token: Option<String>,
}

impl std::fmt::Debug for ExchangedToken {
    /// Never shows a token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExchangedToken")
            .field("issued_token_type", &self.issued_token_type)
            .field("token_type", &self.token_type)
            .field("expires_in", &self.expires_in)
            .field("scope", &self.scope)
            .field("has_refresh_token", &self.refresh_token.is_some())
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct Answer {
    access_token: String,
    issued_token_type: String,
    token_type: String,
    #[serde(default)]
    expires_in: Option<serde_json::Value>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    refresh_token: Option<String>,
}

#[derive(Deserialize)]
struct Refusal {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

impl TokenExchange {
    /// Trades `subject_token` (of `subject_token_type`, one of [`token_types`]) at
    /// `token_endpoint`, `client` authenticating as it registered. Endpoints are checked
    /// against [`UrlPolicy::strict`] unless [`TokenExchange::policy`] says otherwise.
    ///
    /// # Errors
    /// The endpoint is not a URL, or the subject token or its type is empty.
    pub fn new(
        token_endpoint: &str,
        client: RegisteredClient,
        subject_token: impl Into<String>,
        subject_token_type: &str,
    ) -> Result<Self, OAuthError> {
        let endpoint = Url::parse(token_endpoint)
            .map_err(|e| OAuthError::Config(format!("bad token endpoint: {e}")))?;
        let subject_token = subject_token.into();
        if subject_token.is_empty() || subject_token_type.is_empty() {
            return Err(OAuthError::Config(
                "a token exchange needs a subject token and its type".into(),
            ));
        }
        Ok(Self {
            endpoint,
            client,
            key: None,
            subject_token,
            subject_token_type: subject_token_type.to_owned(),
            actor: None,
            requested_token_type: None,
            audience: Vec::new(),
            resource: Vec::new(),
            scope: None,
            policy: UrlPolicy::strict(),
            timeout: DEFAULT_FETCH_TIMEOUT,
        })
    }

    /// Adds a logical name of the target service (`audience`; may be given several times).
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audience.push(audience.into());
        self
    }

    /// Adds the URI of the resource the new token is for (`resource`, RFC 8707; may be given
    /// several times).
    pub fn resource(mut self, resource: impl Into<String>) -> Self {
        self.resource.push(resource.into());
        self
    }

    /// The scope asked for (space-separated).
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// The type of token wanted (`requested_token_type`; the endpoint chooses when absent).
    pub fn requested_token_type(mut self, token_type: impl Into<String>) -> Self {
        self.requested_token_type = Some(token_type.into());
        self
    }

    /// The acting party's token (delegation, RFC 8693 §1.1): `actor_token` and its type.
    pub fn actor_token(mut self, token: impl Into<String>, token_type: impl Into<String>) -> Self {
        self.actor = Some((token.into(), token_type.into()));
        self
    }

    /// The key for `private_key_jwt` client authentication, and the authorization server's
    /// issuer the assertion is addressed to.
    pub fn private_key(mut self, key: PrivateKeyJwt, issuer: impl Into<String>) -> Self {
        self.key = Some((key, issuer.into()));
        self
    }

    /// Which endpoints may be reached (default [`UrlPolicy::strict`]).
    pub fn policy(mut self, policy: UrlPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The bound on the whole exchange (default 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sends the request and reads the answer.
    ///
    /// # Errors
    /// [`OAuthError::Config`] for a request that cannot be sent as built (too many audiences
    /// or resources, a client authentication lacking its secret or key); the fetch errors of
    /// the client (policy, time, size); [`OAuthError::Token`] when the endpoint refuses (with
    /// its OAuth error code) or answers without `access_token`, `issued_token_type` and
    /// `token_type`, or with another token type than the one requested.
    pub async fn exchange(&self) -> Result<ExchangedToken, OAuthError> {
        let fetcher = Fetcher::new(
            self.policy,
            self.timeout,
            DEFAULT_MAX_BODY_BYTES,
            concat!("switchboard-auth/", env!("CARGO_PKG_VERSION")),
        )?;
        self.exchange_with(&fetcher).await
    }

    /// [`TokenExchange::exchange`] through the client's own fetcher.
    pub(crate) async fn exchange_with(
        &self,
        fetcher: &Fetcher,
    ) -> Result<ExchangedToken, OAuthError> {
        if self.audience.len() > MAX_EXCHANGE_TARGETS || self.resource.len() > MAX_EXCHANGE_TARGETS
        {
            return Err(OAuthError::Config(format!(
                "a token exchange names at most {MAX_EXCHANGE_TARGETS} audiences and as many resources"
            )));
        }
        let issuer = self.key.as_ref().map_or("", |(_, i)| i.as_str());
        let auth =
            ClientAuthentication::of(&self.client, self.key.as_ref().map(|(k, _)| k), issuer)?;
        let mut form: Vec<(&str, &str)> = vec![
            ("grant_type", TOKEN_EXCHANGE_GRANT),
            ("subject_token", &self.subject_token),
            ("subject_token_type", &self.subject_token_type),
        ];
        if let Some((token, kind)) = &self.actor {
            form.push(("actor_token", token));
            form.push(("actor_token_type", kind));
        }
        if let Some(t) = &self.requested_token_type {
            form.push(("requested_token_type", t));
        }
        form.extend(self.audience.iter().map(|a| ("audience", a.as_str())));
        form.extend(self.resource.iter().map(|r| ("resource", r.as_str())));
        if let Some(s) = &self.scope {
            form.push(("scope", s));
        }
        auth.extend(&mut form);
        let answer = fetcher
            .post_form(&self.endpoint, &form, auth.basic(), &http::HeaderMap::new())
            .await?;
        let at = shown(self.endpoint.as_str());
        if !answer.status.is_success() {
            let detail = serde_json::from_slice::<Refusal>(&answer.body)
                .map(|e| match e.error_description {
                    Some(d) => format!("{}: {}", shorten(&e.error), shorten(&d)),
                    None => shorten(&e.error),
                })
                .unwrap_or_else(|_| "no OAuth error in the answer".to_owned());
            return Err(OAuthError::Token(format!(
                "the token exchange at {at} answered HTTP {} ({detail})",
                answer.status.as_u16()
            )));
        }
        let a: Answer = serde_json::from_slice(&answer.body).map_err(|_| {
            OAuthError::Token(format!(
                "the token exchange at {at} answered without access_token, issued_token_type and token_type"
            ))
        })?;
        if a.access_token.is_empty() {
            return Err(OAuthError::Token(format!(
                "the token exchange at {at} issued an empty token"
            )));
        }
        if let Some(wanted) = self
            .requested_token_type
            .as_ref()
            .filter(|w| **w != a.issued_token_type)
        {
            return Err(OAuthError::Token(format!(
                "the token exchange at {at} issued {}, not the {} asked for",
                shorten(&a.issued_token_type),
                shorten(wanted)
            )));
        }
        let expires_in = a.expires_in.as_ref().and_then(|v| match v {
            serde_json::Value::Number(n) => n.as_u64(),
            serde_json::Value::String(s) => s.parse().ok(),
            _ => None,
        });
        Ok(ExchangedToken {
            access_token: a.access_token,
            issued_token_type: a.issued_token_type,
            token_type: a.token_type,
            expires_in,
            scope: a.scope,
            refresh_token: a.refresh_token,
        })
    }
}

#[cfg(test)]
#[path = "exchange_tests.rs"]
mod tests;
