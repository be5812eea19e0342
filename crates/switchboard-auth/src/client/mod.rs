//! The OAuth 2.1 client of an MCP client (SPEC-NOTES §7, feature `client`).
//!
//! [`OAuthClient`] holds one MCP endpoint's authorization. The HTTP transport asks it for the
//! access token before every request (`[AU-18]`: the token goes in `Authorization: Bearer`,
//! never in a URL `[AU-19]`), hands it the `WWW-Authenticate` value of a 401 (discovery, then
//! a refresh or a new authorization) and of a 403 `insufficient_scope` (step-up with the union
//! of the held and the challenged scopes, at most [`OAuthConfig::max_step_up`] times per scope
//! set `[AU-7]`).
//!
//! | module | role |
//! |---|---|
//! | `policy` | which URLs may be fetched (https, no private or link-local targets) `[AU-17]` |
//! | `fetch` | every fetch bounded in bytes and time, no redirect followed |
//! | `discovery` | protected-resource metadata, then authorization-server metadata `[AU-5]`, `[AU-9]`, `[AU-14]` |
//! | `registration` | pre-registered credentials, client ID metadata documents, dynamic registration |
//! | `pkce` | PKCE S256 and random values `[AU-13]` |
//! | `token` | token requests and client authentication (secrets, `private_key_jwt`) |
//! | `exchange` | [`TokenExchange`]: RFC 8693 token exchange as a building block (a gateway's upstream token; the ID-JAG step) |
//! | `dpop` | DPoP (RFC 9449, SEP-1932): the client's key pair, a proof per request, nonces per origin |
//! | `workload` | workload identity federation (SEP-1933): the platform's JWT, read again for each token request |
//! | `store` | [`TokenStore`]: in memory, or a file written 0600 `[AU-25]` |
//! | `agent` | [`UserAgent`]: how the authorization request reaches the server; [`HeadlessUserAgent`] |
//!
//! Tokens and secrets never appear in logs, errors or `Debug` output.

mod agent;
mod browser;
mod discovery;
mod dpop;
mod error;
mod exchange;
mod fetch;
#[cfg(feature = "clap")]
mod flags;
mod pkce;
mod policy;
mod registration;
mod store;
mod token;
mod workload;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::HeaderMap;
use url::Url;

use crate::challenge::BearerChallenge;
use crate::scope::ScopeSet;

pub use agent::{HeadlessUserAgent, OAuthFuture, UserAgent};
pub use browser::BrowserUserAgent;
pub use discovery::{Discovered, canonical_resource};
pub use dpop::{DPOP_ALG, DpopKey, DpopSigner};
pub use error::OAuthError;
pub use exchange::{
    ExchangedToken, MAX_EXCHANGE_TARGETS, TOKEN_EXCHANGE_GRANT, TokenExchange, token_types,
};
#[cfg(feature = "clap")]
pub use flags::OAuthFlags;
pub use policy::{AddressRange, RefusedAddress, UrlPolicy};
pub use registration::PreRegistered;
pub use store::{
    FileTokenStore, Grant, MemoryTokenStore, RegisteredClient, TokenAuthMethod, TokenSet,
    TokenStore,
};
pub use token::PrivateKeyJwt;
pub use workload::{MAX_WORKLOAD_ASSERTION_BYTES, WorkloadAssertion};

use fetch::{DEFAULT_FETCH_TIMEOUT, DEFAULT_MAX_BODY_BYTES, Fetcher};
use registration::ClientIdentity;
use token::TokenRequest;

/// The default most authorizations for one set of scopes, the first one included, past which
/// step-up stops (`[AU-7]`, SEC-SC-6).
pub(crate) const DEFAULT_MAX_STEP_UP: u32 = 3;
/// The default margin before expiry at which a token is refreshed: 60 s.
pub(crate) const DEFAULT_REFRESH_SKEW: Duration = Duration::from_secs(60);
/// The redirect URI used when none is configured (the headless agent never fetches it).
pub(crate) const DEFAULT_REDIRECT_URI: &str = "http://127.0.0.1/callback";
/// The `offline_access` scope (SEP-2207).
const OFFLINE_ACCESS: &str = "offline_access";

/// Seconds since the Unix epoch.
pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// How tokens are obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum GrantFlow {
    /// The authorization-code grant with PKCE, through a [`UserAgent`] (for a user).
    #[default]
    AuthorizationCode,
    /// The client-credentials grant (for a machine): needs pre-registered credentials (a
    /// secret or a private key).
    ClientCredentials,
    /// Enterprise-managed authorization (SEP-990): the user's ID token from the enterprise
    /// identity provider is exchanged there for an identity assertion grant (RFC 8693), which
    /// the authorization server takes as a JWT-bearer grant (RFC 7523). Needs
    /// [`OAuthConfig::identity_assertion`] and pre-registered credentials.
    IdentityAssertion,
    /// Workload identity federation (SEP-1933): the workload's platform-issued JWT (a
    /// Kubernetes service-account token, a CI job's OIDC token) is the RFC 7523 JWT-bearer
    /// grant itself; no secret is stored. Needs [`OAuthConfig::workload_assertion`]; a client
    /// id is sent only when one is pre-registered.
    WorkloadIdentity,
}

/// What the identity-assertion flow needs of the enterprise identity provider.
#[derive(Clone)]
pub struct IdentityAssertion {
    /// The identity provider's token endpoint.
    pub idp_token_endpoint: String,
    /// This client's id at the identity provider.
    pub idp_client_id: String,
    /// The user's ID token from the identity provider.
    pub id_token: String,
}

impl std::fmt::Debug for IdentityAssertion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityAssertion")
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("idp_client_id", &self.idp_client_id)
            .finish_non_exhaustive()
    }
}

/// RFC 8693 and SEP-990 names.
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// What the OAuth client does, and for which endpoint.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OAuthConfig {
    /// The MCP endpoint (the protected resource).
    pub endpoint: Url,
    /// The flow.
    pub flow: GrantFlow,
    /// The client's name, for registration.
    pub client_name: String,
    /// The redirect URI (the user agent's, when it has one, wins).
    pub redirect_uri: String,
    /// Scopes to ask for on the first authorization instead of the challenge's or the
    /// metadata's.
    pub scope: Option<ScopeSet>,
    /// The URL of this client's metadata document, used as the client id where the
    /// authorization server accepts them.
    pub client_metadata_url: Option<String>,
    /// Credentials registered beforehand.
    pub preregistered: Option<PreRegistered>,
    /// The private key for `private_key_jwt`.
    pub private_key: Option<PrivateKeyJwt>,
    /// The identity provider's part of [`GrantFlow::IdentityAssertion`].
    pub identity_assertion: Option<IdentityAssertion>,
    /// The workload's assertion for [`GrantFlow::WorkloadIdentity`].
    pub workload_assertion: Option<WorkloadAssertion>,
    /// Which URLs may be fetched.
    pub policy: UrlPolicy,
    /// The bound on each fetch.
    pub fetch_timeout: Duration,
    /// The bound on each answer's body.
    pub max_body_bytes: usize,
    /// Authorizations allowed per set of scopes (the first one included) before step-up stops.
    pub max_step_up: u32,
    /// How long before expiry a token is refreshed.
    pub refresh_skew: Duration,
    /// Ask for `offline_access` (a refresh token) when the authorization server lists it.
    pub offline_access: bool,
    /// Headers for discovery fetches (for example `MCP-Protocol-Version`).
    pub discovery_headers: HeaderMap,
    /// The DPoP key (RFC 9449): when set, every token request carries a proof, so the tokens
    /// issued are bound to it, and every request with a bound token carries a fresh proof.
    pub dpop: Option<Arc<DpopKey>>,
}

impl OAuthConfig {
    /// The defaults for `endpoint`: authorization code, strict fetch policy.
    pub fn new(endpoint: Url) -> Self {
        Self {
            endpoint,
            flow: GrantFlow::AuthorizationCode,
            client_name: "switchboard".to_owned(),
            redirect_uri: DEFAULT_REDIRECT_URI.to_owned(),
            scope: None,
            client_metadata_url: None,
            preregistered: None,
            private_key: None,
            identity_assertion: None,
            workload_assertion: None,
            policy: UrlPolicy::strict(),
            fetch_timeout: DEFAULT_FETCH_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_step_up: DEFAULT_MAX_STEP_UP,
            refresh_skew: DEFAULT_REFRESH_SKEW,
            offline_access: true,
            discovery_headers: HeaderMap::new(),
            dpop: None,
        }
    }

    /// Binds the tokens to `key` with DPoP (RFC 9449, SEP-1932).
    pub fn with_dpop(mut self, key: Arc<DpopKey>) -> Self {
        self.dpop = Some(key);
        self
    }

    /// Sets the flow.
    pub fn with_flow(mut self, flow: GrantFlow) -> Self {
        self.flow = flow;
        self
    }

    /// Sets the fetch policy.
    pub fn with_policy(mut self, policy: UrlPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Sets pre-registered credentials.
    pub fn with_preregistered(mut self, pre: PreRegistered) -> Self {
        self.preregistered = Some(pre);
        self
    }

    /// Sets the scopes of the first authorization.
    pub fn with_scope(mut self, scope: ScopeSet) -> Self {
        self.scope = Some(scope);
        self
    }

    /// Sets the client ID metadata document URL.
    pub fn with_client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Sets the private key for `private_key_jwt`.
    pub fn with_private_key(mut self, key: PrivateKeyJwt) -> Self {
        self.private_key = Some(key);
        self
    }

    /// Sets the identity provider's part of [`GrantFlow::IdentityAssertion`] (and that flow).
    pub fn with_identity_assertion(mut self, ia: IdentityAssertion) -> Self {
        self.identity_assertion = Some(ia);
        self.flow = GrantFlow::IdentityAssertion;
        self
    }

    /// Sets where the workload's identity assertion is read (and that flow, SEP-1933).
    pub fn with_workload_identity(mut self, source: WorkloadAssertion) -> Self {
        self.workload_assertion = Some(source);
        self.flow = GrantFlow::WorkloadIdentity;
        self
    }

    /// Sets the redirect URI: `https`, or `http` to a loopback host; any other is refused
    /// before registration (`[AU-17]`, `[SEC-URL-8]`).
    pub fn with_redirect_uri(mut self, uri: impl Into<String>) -> Self {
        self.redirect_uri = uri.into();
        self
    }

    /// Sets the client name.
    pub fn with_client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }
}

/// One MCP endpoint's OAuth client. Cheap to share (`Arc`); authorizations run one at a time.
pub struct OAuthClient {
    config: OAuthConfig,
    /// The store key: the endpoint's canonical URI.
    key: String,
    fetcher: Fetcher,
    store: Arc<dyn TokenStore>,
    agent: Arc<dyn UserAgent>,
    /// Held while discovery, registration or a token request runs.
    flow: tokio::sync::Mutex<Option<Discovered>>,
    /// Authorizations made, by the scope set asked for.
    step_ups: Mutex<HashMap<String, u32>>,
    last_error: Mutex<Option<OAuthError>>,
    dpop: Option<DpopSigner>,
}

/// What one HTTP request to the resource carries: the `Authorization` scheme and token, and
/// the DPoP proof when the token is bound.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct RequestCredentials {
    /// The access token, if there is one yet.
    pub token: Option<String>,
    /// `Bearer`, or `DPoP` for a bound token.
    pub scheme: &'static str,
    /// The `DPoP` header's proof, made for this request only.
    pub dpop_proof: Option<String>,
}

impl std::fmt::Debug for RequestCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestCredentials")
            .field("has_token", &self.token.is_some())
            .field("scheme", &self.scheme)
            .field("has_dpop_proof", &self.dpop_proof.is_some())
            .finish()
    }
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("endpoint", &self.key)
            .field("flow", &self.config.flow)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// A client for `config`, keeping its grant in `store` and authorizing through `agent`
    /// (unused by the client-credentials flow).
    ///
    /// # Errors
    /// The HTTP client cannot be built, or the flow lacks what it needs.
    pub fn new(
        config: OAuthConfig,
        store: Arc<dyn TokenStore>,
        agent: Arc<dyn UserAgent>,
    ) -> Result<Self, OAuthError> {
        if config.flow == GrantFlow::IdentityAssertion
            && (config.identity_assertion.is_none()
                || config
                    .preregistered
                    .as_ref()
                    .is_none_or(|p| p.client_secret.is_none()))
        {
            return Err(OAuthError::Config(
                "the identity-assertion flow needs the identity provider's token endpoint, \
                 client id and ID token, and a client id with a secret"
                    .into(),
            ));
        }
        if config.flow == GrantFlow::WorkloadIdentity && config.workload_assertion.is_none() {
            return Err(OAuthError::Config(
                "workload identity federation needs the file or variable holding the \
                 workload's token"
                    .into(),
            ));
        }
        if config.flow == GrantFlow::ClientCredentials
            && config
                .preregistered
                .as_ref()
                .is_none_or(|p| p.client_secret.is_none() && config.private_key.is_none())
        {
            return Err(OAuthError::Config(
                "the client-credentials flow needs a client id with a secret or a private key"
                    .into(),
            ));
        }
        let fetcher = Fetcher::new(
            config.policy,
            config.fetch_timeout,
            config.max_body_bytes,
            concat!("switchboard-auth/", env!("CARGO_PKG_VERSION")),
        )?;
        let dpop = config.dpop.clone().map(DpopSigner::new);
        Ok(Self {
            key: canonical_resource(&config.endpoint),
            config,
            fetcher,
            store,
            agent,
            flow: tokio::sync::Mutex::new(None),
            step_ups: Mutex::new(HashMap::new()),
            last_error: Mutex::new(None),
            dpop,
        })
    }

    /// A client with the headless user agent and an in-memory store.
    ///
    /// # Errors
    /// As [`OAuthClient::new`].
    pub fn headless(config: OAuthConfig) -> Result<Self, OAuthError> {
        let agent = HeadlessUserAgent::new(config.policy)?;
        Self::new(config, Arc::new(MemoryTokenStore::new()), Arc::new(agent))
    }

    /// The configuration.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// The last failure of an authorization, for messages.
    pub fn last_error(&self) -> Option<OAuthError> {
        lock(&self.last_error).clone()
    }

    /// The scopes the current token holds, if known.
    pub fn granted_scopes(&self) -> Option<ScopeSet> {
        let grant = self.store.load(&self.key).ok().flatten()?;
        grant.tokens?.scope.map(|s| ScopeSet::parse(&s))
    }

    /// The access token to send, refreshed first when it is about to expire; `None` when
    /// there is none yet (the request goes without, and its 401 starts the authorization).
    ///
    /// # Errors
    /// The store cannot be read.
    pub async fn access_token(&self) -> Result<Option<String>, OAuthError> {
        Ok(self.current_tokens().await?.map(|t| t.access_token))
    }

    /// The credentials for one request, `method url`, to the resource: the access token (as
    /// [`OAuthClient::access_token`]) with its scheme, and for a DPoP-bound token a fresh proof
    /// with `ath` and the resource's nonce when it gave one.
    ///
    /// # Errors
    /// The store cannot be read, or the proof cannot be made.
    pub async fn credentials(
        &self,
        method: &str,
        url: &Url,
    ) -> Result<RequestCredentials, OAuthError> {
        let Some(tokens) = self.current_tokens().await? else {
            return Ok(RequestCredentials {
                token: None,
                scheme: "Bearer",
                dpop_proof: None,
            });
        };
        match self.dpop.as_ref().filter(|_| tokens.is_dpop()) {
            Some(dpop) => Ok(RequestCredentials {
                dpop_proof: Some(dpop.proof(method, url, Some(&tokens.access_token))?),
                token: Some(tokens.access_token),
                scheme: "DPoP",
            }),
            None => Ok(RequestCredentials {
                token: Some(tokens.access_token),
                scheme: "Bearer",
                dpop_proof: None,
            }),
        }
    }

    /// A server answered a request to `url` with a `DPoP-Nonce` (RFC 9449 §8, §9): later
    /// proofs to its origin carry it. Without DPoP, nothing happens.
    pub fn dpop_nonce(&self, url: &Url, nonce: &str) {
        if let Some(d) = &self.dpop {
            d.set_nonce(url, nonce);
        }
    }

    /// Whether the client binds its tokens with DPoP.
    pub fn uses_dpop(&self) -> bool {
        self.dpop.is_some()
    }

    async fn current_tokens(&self) -> Result<Option<TokenSet>, OAuthError> {
        let Some(grant) = self.store.load(&self.key)? else {
            return Ok(None);
        };
        let Some(tokens) = grant.tokens.clone() else {
            return Ok(None);
        };
        if !tokens.expires_within(now_secs(), self.config.refresh_skew.as_secs()) {
            return Ok(Some(tokens));
        }
        let mut flow = self.flow.lock().await;
        // Another caller may have refreshed while this one waited.
        if let Some(g) = self.store.load(&self.key)?
            && let Some(t) = g.tokens.filter(|t| t.access_token != tokens.access_token)
        {
            return Ok(Some(t));
        }
        match self.refresh(&mut flow, &grant, &tokens).await {
            Ok(_) => Ok(self.store.load(&self.key)?.and_then(|g| g.tokens)),
            Err(e) => {
                tracing::debug!(error = %e, "refresh before expiry failed");
                // The old token may still be good for a moment; a 401 starts over.
                Ok(Some(tokens))
            }
        }
    }

    /// After a 401: discovery from the challenge, then a refresh (when the token sent was
    /// the current one and a refresh token is held) or a new authorization.
    ///
    /// # Errors
    /// Every failure of discovery, registration, authorization and token requests.
    pub async fn unauthorized(
        &self,
        www_authenticate: Option<&str>,
        sent: Option<&str>,
    ) -> Result<(), OAuthError> {
        let r = self.unauthorized_inner(www_authenticate, sent).await;
        self.note(r)
    }

    async fn unauthorized_inner(
        &self,
        www_authenticate: Option<&str>,
        sent: Option<&str>,
    ) -> Result<(), OAuthError> {
        let challenge = parse_challenge(www_authenticate);
        let mut flow = self.flow.lock().await;
        let grant = self.store.load(&self.key)?;
        let current = grant
            .as_ref()
            .and_then(|g| g.tokens.as_ref())
            .map(|t| t.access_token.clone());
        if current.is_some() && current.as_deref() != sent {
            // Another request got a new token meanwhile: retry with it.
            return Ok(());
        }
        let found = self.discover(challenge.as_ref()).await?;
        *flow = Some(found.clone());
        if let Some(g) = grant.as_ref().filter(|g| g.issuer == found.issuer)
            && let Some(t) = g.tokens.as_ref().filter(|t| t.refresh_token.is_some())
        {
            match self.refresh(&mut flow, g, t).await {
                Ok(_) => return Ok(()),
                Err(e) => tracing::debug!(error = %e, "refresh after 401 failed; authorizing"),
            }
        }
        let scopes = self
            .config
            .scope
            .clone()
            .or_else(|| found.initial_scopes(challenge.as_ref()));
        self.count_attempt(scopes.as_ref());
        self.authorize_with(&found, scopes).await
    }

    /// Counts one authorization asking for `scopes`; the count so far. Every authorization
    /// counts, the first one too, so that step-up stops after `max_step_up` authorizations
    /// for one set of scopes in all.
    fn count_attempt(&self, scopes: Option<&ScopeSet>) -> u32 {
        let key = scopes.map(ToString::to_string).unwrap_or_default();
        let mut counts = lock(&self.step_ups);
        let n = counts.entry(key).or_insert(0);
        *n += 1;
        *n
    }

    /// After a 403 with `error="insufficient_scope"`: a new authorization asking for the union
    /// of the held and the challenged scopes; no more once `max_step_up` authorizations asked for
    /// that union.
    ///
    /// # Errors
    /// The challenge is not an `insufficient_scope` one, step-up is exhausted, or the
    /// authorization fails.
    pub async fn insufficient_scope(
        &self,
        www_authenticate: &str,
        sent: Option<&str>,
    ) -> Result<(), OAuthError> {
        let r = self.insufficient_scope_inner(www_authenticate, sent).await;
        self.note(r)
    }

    async fn insufficient_scope_inner(
        &self,
        www_authenticate: &str,
        sent: Option<&str>,
    ) -> Result<(), OAuthError> {
        let challenge = parse_challenge(Some(www_authenticate))
            .filter(|c| c.error.as_deref() == Some("insufficient_scope"))
            .ok_or_else(|| {
                OAuthError::Callback(
                    "HTTP 403 without an insufficient_scope Bearer challenge: not a scope \
                     problem, so no step-up"
                        .into(),
                )
            })?;
        let mut flow = self.flow.lock().await;
        let grant = self.store.load(&self.key)?;
        let tokens = grant.as_ref().and_then(|g| g.tokens.as_ref());
        let challenged = ScopeSet::parse(challenge.scope.as_deref().unwrap_or(""));
        if let Some(t) = tokens {
            let held = ScopeSet::parse(t.scope.as_deref().unwrap_or(""));
            if t.access_token.as_str() != sent.unwrap_or("") && held.covers(&challenged) {
                // Another request stepped up meanwhile.
                return Ok(());
            }
        }
        let held = tokens
            .and_then(|t| t.scope.as_deref())
            .map(ScopeSet::parse)
            .unwrap_or_default();
        let want = held.union(&challenged);
        let key = want.to_string();
        let made = lock(&self.step_ups).get(&key).copied().unwrap_or(0);
        if made >= self.config.max_step_up {
            return Err(OAuthError::StepUpExhausted {
                scopes: key,
                attempts: made,
            });
        }
        let attempts = self.count_attempt(Some(&want));
        tracing::info!(scopes = %key, attempt = attempts, "stepping up authorization");
        let found = self.discover(Some(&challenge)).await?;
        *flow = Some(found.clone());
        let want = (!want.is_empty()).then_some(want);
        self.authorize_with(&found, want).await
    }

    /// Runs discovery and a full authorization now, without waiting for a 401.
    ///
    /// # Errors
    /// As [`OAuthClient::unauthorized`].
    pub async fn authorize(&self) -> Result<(), OAuthError> {
        let r = async {
            let mut flow = self.flow.lock().await;
            let found = self.discover(None).await?;
            *flow = Some(found.clone());
            let scopes = self
                .config
                .scope
                .clone()
                .or_else(|| found.initial_scopes(None));
            self.authorize_with(&found, scopes).await
        }
        .await;
        self.note(r)
    }

    fn note(&self, r: Result<(), OAuthError>) -> Result<(), OAuthError> {
        if let Err(e) = &r {
            tracing::warn!(error = %e, "authorization failed");
            *lock(&self.last_error) = Some(e.clone());
        }
        r
    }

    async fn discover(
        &self,
        challenge: Option<&BearerChallenge>,
    ) -> Result<Discovered, OAuthError> {
        discovery::discover(
            &self.fetcher,
            &self.config.endpoint,
            challenge,
            &self.config.discovery_headers,
        )
        .await
    }

    fn redirect_uri(&self) -> String {
        self.agent
            .redirect_uri()
            .unwrap_or_else(|| self.config.redirect_uri.clone())
    }

    /// The client registered with the discovered issuer: the stored one when it belongs to
    /// that issuer (and, for the code flow, to this redirect URI), else a new registration.
    async fn client_for(&self, found: &Discovered) -> Result<Grant, OAuthError> {
        let redirect = self.redirect_uri();
        let code_flow = self.config.flow == GrantFlow::AuthorizationCode;
        if code_flow {
            policy::check_redirect_uri(&redirect)?;
        }
        if self.config.flow == GrantFlow::WorkloadIdentity && self.config.preregistered.is_none() {
            // The assertion is the client's whole identity: no client id, no registration.
            let grant = Grant {
                issuer: found.issuer.clone(),
                client: RegisteredClient {
                    client_id: String::new(),
                    client_secret: None,
                    auth_method: TokenAuthMethod::None,
                    redirect_uri: None,
                },
                tokens: None,
            };
            self.store.save(&self.key, &grant)?;
            return Ok(grant);
        }
        if let Some(g) = self.store.load(&self.key)? {
            let same_redirect = !code_flow || g.client.redirect_uri.as_deref() == Some(&redirect);
            if g.issuer == found.issuer && same_redirect {
                return Ok(g);
            }
            if g.issuer != found.issuer {
                tracing::info!(
                    "the resource moved to another authorization server: registering anew"
                );
            }
        }
        let me = ClientIdentity {
            name: &self.config.client_name,
            redirect_uri: code_flow.then_some(redirect.as_str()),
            metadata_url: self.config.client_metadata_url.as_deref(),
            preregistered: self.config.preregistered.as_ref(),
            private_key_jwt: self.config.private_key.is_some(),
            client_credentials: !code_flow,
        };
        let client =
            registration::register(&self.fetcher, &found.issuer, &found.server, &me).await?;
        let grant = Grant {
            issuer: found.issuer.clone(),
            client,
            tokens: None,
        };
        self.store.save(&self.key, &grant)?;
        Ok(grant)
    }

    fn token_endpoint(found: &Discovered) -> Result<Url, OAuthError> {
        let raw = found.server.token_endpoint.as_deref().ok_or_else(|| {
            OAuthError::Discovery(format!(
                "the authorization server {} names no token endpoint",
                error::shown(&found.issuer)
            ))
        })?;
        Url::parse(raw).map_err(|e| OAuthError::Discovery(format!("bad token endpoint: {e}")))
    }

    /// The scopes to ask for, with `offline_access` added for the code flow when the
    /// authorization server lists it (SEP-2207) and some scope is asked for anyway.
    fn with_offline(&self, found: &Discovered, scopes: Option<ScopeSet>) -> Option<ScopeSet> {
        let offered = found
            .server
            .scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|s| s == OFFLINE_ACCESS));
        match scopes {
            Some(mut s)
                if self.config.offline_access
                    && offered
                    && self.config.flow == GrantFlow::AuthorizationCode =>
            {
                s.insert(OFFLINE_ACCESS);
                Some(s)
            }
            other => other,
        }
    }

    async fn authorize_with(
        &self,
        found: &Discovered,
        scopes: Option<ScopeSet>,
    ) -> Result<(), OAuthError> {
        let scopes = self.with_offline(found, scopes);
        let mut grant = self.client_for(found).await?;
        let token_url = Self::token_endpoint(found)?;
        let scope_text = scopes.as_ref().map(ToString::to_string);
        let req = TokenRequest {
            endpoint: &token_url,
            issuer: &found.issuer,
            client: &grant.client,
            key: self.config.private_key.as_ref(),
            dpop: self.dpop.as_ref(),
        };
        let tokens = match self.config.flow {
            GrantFlow::ClientCredentials => {
                let mut form = vec![
                    ("grant_type", "client_credentials"),
                    ("resource", found.resource.as_str()),
                ];
                if let Some(s) = &scope_text {
                    form.push(("scope", s));
                }
                req.send(&self.fetcher, &form, scope_text.as_deref(), None)
                    .await?
            }
            GrantFlow::WorkloadIdentity => {
                let source = self.config.workload_assertion.as_ref().ok_or_else(|| {
                    OAuthError::Config("workload identity federation has no assertion".into())
                })?;
                let assertion = source.read()?;
                let mut form = vec![
                    ("grant_type", JWT_BEARER_GRANT),
                    ("assertion", assertion.as_str()),
                    ("resource", found.resource.as_str()),
                ];
                if let Some(s) = &scope_text {
                    form.push(("scope", s));
                }
                req.send(&self.fetcher, &form, scope_text.as_deref(), None)
                    .await?
            }
            GrantFlow::IdentityAssertion => {
                let assertion = self
                    .identity_assertion_grant(found, scope_text.as_deref())
                    .await?;
                let mut form = vec![
                    ("grant_type", JWT_BEARER_GRANT),
                    ("assertion", assertion.as_str()),
                    ("resource", found.resource.as_str()),
                ];
                if let Some(s) = &scope_text {
                    form.push(("scope", s));
                }
                req.send(&self.fetcher, &form, scope_text.as_deref(), None)
                    .await?
            }
            GrantFlow::AuthorizationCode => {
                let redirect = self.redirect_uri();
                let (code, verifier) = self
                    .code(found, &grant.client, &redirect, scope_text.as_deref())
                    .await?;
                let form = [
                    ("grant_type", "authorization_code"),
                    ("code", code.as_str()),
                    ("redirect_uri", redirect.as_str()),
                    ("code_verifier", verifier.as_str()),
                    ("resource", found.resource.as_str()),
                ];
                req.send(&self.fetcher, &form, scope_text.as_deref(), None)
                    .await?
            }
        };
        grant.tokens = Some(tokens);
        self.store.save(&self.key, &grant)?;
        tracing::info!(issuer = %error::shown(&found.issuer), "authorized");
        Ok(())
    }

    /// RFC 8693 at the identity provider: the ID token for an identity assertion grant
    /// (ID-JAG) for this authorization server and resource.
    async fn identity_assertion_grant(
        &self,
        found: &Discovered,
        scope: Option<&str>,
    ) -> Result<String, OAuthError> {
        let ia = self.config.identity_assertion.as_ref().ok_or_else(|| {
            OAuthError::Config("the identity-assertion flow has no identity provider".into())
        })?;
        let idp = RegisteredClient {
            client_id: ia.idp_client_id.clone(),
            client_secret: None,
            auth_method: TokenAuthMethod::None,
            redirect_uri: None,
        };
        let mut exchange = TokenExchange::new(
            &ia.idp_token_endpoint,
            idp,
            ia.id_token.as_str(),
            token_types::ID_TOKEN,
        )
        .map_err(|e| match e {
            OAuthError::Config(why) => OAuthError::Config(format!("the identity provider: {why}")),
            e => e,
        })?
        .requested_token_type(token_types::ID_JAG)
        .audience(found.issuer.as_str())
        .resource(found.resource.as_str());
        if let Some(s) = scope {
            exchange = exchange.scope(s);
        }
        let issued = exchange.exchange_with(&self.fetcher).await?;
        Ok(issued.access_token)
    }

    /// The authorization request through the user agent; the code and the PKCE verifier.
    async fn code(
        &self,
        found: &Discovered,
        client: &RegisteredClient,
        redirect: &str,
        scope: Option<&str>,
    ) -> Result<(String, String), OAuthError> {
        let endpoint = found
            .server
            .authorization_endpoint
            .as_deref()
            .ok_or_else(|| {
                OAuthError::Discovery(format!(
                    "the authorization server {} names no authorization endpoint",
                    error::shown(&found.issuer)
                ))
            })?;
        let mut url = Url::parse(endpoint)
            .map_err(|e| OAuthError::Discovery(format!("bad authorization endpoint: {e}")))?;
        self.config.policy.check_url(&url)?;
        let pkce = pkce::Pkce::new()?;
        let state = pkce::random_token(24)?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &client.client_id)
                .append_pair("redirect_uri", redirect)
                .append_pair("code_challenge", &pkce.challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &state)
                .append_pair("resource", &found.resource);
            if let Some(s) = scope {
                q.append_pair("scope", s);
            }
        }
        let back = self.agent.authorize(url, redirect).await?;
        let code = check_callback(&back, &state, &found.issuer, &found.server)?;
        Ok((code, pkce.verifier))
    }

    /// A refresh (with rotation: a new refresh token replaces the old one); the new access
    /// token.
    async fn refresh(
        &self,
        flow: &mut Option<Discovered>,
        grant: &Grant,
        tokens: &TokenSet,
    ) -> Result<String, OAuthError> {
        let Some(refresh) = tokens.refresh_token.as_deref() else {
            return Err(OAuthError::Token("no refresh token is held".into()));
        };
        let found = match flow.as_ref().filter(|f| f.issuer == grant.issuer) {
            Some(f) => f.clone(),
            None => {
                let f = self.discover(None).await?;
                *flow = Some(f.clone());
                f
            }
        };
        if found.issuer != grant.issuer {
            return Err(OAuthError::Token(
                "the resource's authorization server changed; the refresh token is not sent to \
                 another one"
                    .into(),
            ));
        }
        let token_url = Self::token_endpoint(&found)?;
        let req = TokenRequest {
            endpoint: &token_url,
            issuer: &found.issuer,
            client: &grant.client,
            key: self.config.private_key.as_ref(),
            dpop: self.dpop.as_ref(),
        };
        let form = [
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("resource", found.resource.as_str()),
        ];
        let result = req
            .send(&self.fetcher, &form, tokens.scope.as_deref(), Some(refresh))
            .await;
        let new = match result {
            Ok(t) => t,
            Err(e) => {
                // A refused refresh token is dead: forget the tokens, keep the client.
                let mut g = grant.clone();
                g.tokens = None;
                self.store.save(&self.key, &g)?;
                return Err(e);
            }
        };
        let access = new.access_token.clone();
        let mut g = grant.clone();
        g.tokens = Some(new);
        self.store.save(&self.key, &g)?;
        tracing::debug!("token refreshed");
        Ok(access)
    }
}

/// The first Bearer or DPoP challenge of a `WWW-Authenticate` value (a malformed one counts
/// as none). A DPoP challenge (RFC 9449 §7.1) carries the same parameters.
fn parse_challenge(value: Option<&str>) -> Option<BearerChallenge> {
    let all = crate::challenge::parse_challenges(value?).ok()?;
    all.iter()
        .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))
        .or_else(|| all.iter().find(|c| c.scheme.eq_ignore_ascii_case("dpop")))
        .map(BearerChallenge::from_challenge)
}

/// Checks the redirect that ends an authorization request: an `error` is reported, `state`
/// must be ours, `iss` (RFC 9207) must be the issuer when present and must be present when the
/// server says it sends it; the code.
pub(crate) fn check_callback(
    back: &Url,
    state: &str,
    issuer: &str,
    server: &crate::metadata::AuthorizationServerMetadata,
) -> Result<String, OAuthError> {
    let get = |name: &str| {
        back.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    if get("state").as_deref() != Some(state) {
        return Err(OAuthError::Callback(
            "the state is missing or not the one sent (a forged or stale redirect)".into(),
        ));
    }
    match get("iss") {
        Some(iss) if iss != issuer => {
            return Err(OAuthError::Callback(format!(
                "the iss parameter {} is not the issuer {} (RFC 9207: a mix-up attack?)",
                error::shorten(&iss),
                error::shown(issuer)
            )));
        }
        None if server.authorization_response_iss_parameter_supported == Some(true) => {
            return Err(OAuthError::Callback(
                "the authorization server says it sends iss (RFC 9207) but the redirect has none"
                    .into(),
            ));
        }
        _ => {}
    }
    if let Some(err) = get("error") {
        let desc = get("error_description")
            .map(|d| format!(": {}", error::shorten(&d)))
            .unwrap_or_default();
        return Err(OAuthError::Callback(format!(
            "the authorization server answered {}{desc}",
            error::shorten(&err)
        )));
    }
    get("code")
        .filter(|c| !c.is_empty())
        .ok_or_else(|| OAuthError::Callback("the redirect carries no code".into()))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
