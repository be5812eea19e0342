//! Token requests (OAuth 2.1 §4.1.3, §4.2, §4.3): the authorization-code exchange, refresh with
//! rotation and the client-credentials grant, each with `resource` `[AU-15]` and the client's
//! authentication (`none`, `client_secret_basic`, `client_secret_post`, `private_key_jwt`).

use serde::Deserialize;
use url::Url;

use super::dpop::DpopSigner;
use super::error::shorten;
use super::error::{OAuthError, shown};
use super::fetch::{Answer, Fetcher};
use super::pkce::random_token;
use super::store::{RegisteredClient, TokenAuthMethod, TokenSet};

/// The header a DPoP proof travels in.
pub(crate) const DPOP_HEADER: &str = "dpop";
/// The header a server hands a DPoP nonce in.
pub(crate) const DPOP_NONCE_HEADER: &str = "dpop-nonce";

/// The RFC 7523 assertion type.
pub(crate) const JWT_BEARER_ASSERTION: &str =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// A private key for `private_key_jwt` (RFC 7523 §2.2): a PEM key and its JWS algorithm.
#[derive(Clone)]
pub struct PrivateKeyJwt {
    /// The PKCS#8 PEM private key.
    pub private_key_pem: String,
    /// The JWS algorithm (`ES256`, `RS256`, `PS256`, `EdDSA`, ...).
    pub algorithm: String,
    /// The key id, when the client's JWKS names its keys.
    pub kid: Option<String>,
}

impl std::fmt::Debug for PrivateKeyJwt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrivateKeyJwt")
            .field("algorithm", &self.algorithm)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl PrivateKeyJwt {
    /// A signed client assertion: `iss` = `sub` = the client id, `aud` = the issuer, five
    /// minutes of validity, a random `jti`.
    ///
    /// # Errors
    /// The algorithm or the key is not usable.
    pub fn assertion(&self, client_id: &str, audience: &str) -> Result<String, OAuthError> {
        use jsonwebtoken::{Algorithm, EncodingKey, Header};
        let alg: Algorithm = self.algorithm.parse().map_err(|_| {
            OAuthError::Config(format!(
                "unsupported JWS algorithm {} for private_key_jwt",
                self.algorithm
            ))
        })?;
        let pem = self.private_key_pem.as_bytes();
        let key = match alg {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem),
            Algorithm::EdDSA => EncodingKey::from_ed_pem(pem),
            _ => {
                return Err(OAuthError::Config(format!(
                    "private_key_jwt needs an asymmetric algorithm, not {}",
                    self.algorithm
                )));
            }
        }
        .map_err(|e| OAuthError::Config(format!("the private key is not usable: {e}")))?;
        let mut header = Header::new(alg);
        header.kid = self.kid.clone();
        let now = super::now_secs();
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + 300,
            "jti": random_token(16)?,
        });
        jsonwebtoken::encode(&header, &claims, &key)
            .map_err(|e| OAuthError::Config(format!("cannot sign the client assertion: {e}")))
    }
}

/// The token endpoint's answer (RFC 6749 §5.1).
#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    token_type: String,
    #[serde(default)]
    expires_in: Option<serde_json::Value>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

/// The token endpoint's error (RFC 6749 §5.2).
#[derive(Deserialize)]
struct TokenError {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// A token request to one endpoint for one client.
#[derive(Debug)]
pub(crate) struct TokenRequest<'a> {
    pub(crate) endpoint: &'a Url,
    pub(crate) issuer: &'a str,
    pub(crate) client: &'a RegisteredClient,
    pub(crate) key: Option<&'a PrivateKeyJwt>,
    /// The client's DPoP state: each token request carries a proof, and the token is bound.
    pub(crate) dpop: Option<&'a DpopSigner>,
}

impl TokenRequest<'_> {
    /// Sends `grant` (the grant's own parameters) with the client's authentication; a new
    /// token set, the refresh token kept from `previous` when none is issued (no rotation).
    pub(crate) async fn send(
        &self,
        fetcher: &Fetcher,
        grant: &[(&str, &str)],
        asked_scope: Option<&str>,
        previous_refresh: Option<&str>,
    ) -> Result<TokenSet, OAuthError> {
        let mut form: Vec<(&str, &str)> = grant.to_vec();
        let auth = ClientAuthentication::of(self.client, self.key, self.issuer)?;
        auth.extend(&mut form);
        let basic = auth.basic();
        let answer = self.post(fetcher, &form, basic).await?;
        if !answer.status.is_success() {
            let detail = serde_json::from_slice::<TokenError>(&answer.body)
                .map(|e| match e.error_description {
                    Some(d) => format!("{}: {}", e.error, shorten(&d)),
                    None => e.error,
                })
                .unwrap_or_else(|_| "no OAuth error in the answer".to_owned());
            return Err(OAuthError::Token(format!(
                "{} answered HTTP {} ({detail})",
                shown(self.endpoint.as_str()),
                answer.status.as_u16()
            )));
        }
        let t: TokenResponse = answer.json(self.endpoint).map_err(|_| {
            OAuthError::Token(format!(
                "{} answered without access_token and token_type",
                shown(self.endpoint.as_str())
            ))
        })?;
        let bound = self.dpop.is_some() && t.token_type.eq_ignore_ascii_case("dpop");
        if !bound && !t.token_type.eq_ignore_ascii_case("bearer") {
            return Err(OAuthError::Token(format!(
                "the token type is {}, not Bearer{}",
                shorten(&t.token_type),
                if self.dpop.is_some() { " or DPoP" } else { "" }
            )));
        }
        let expires_in = t.expires_in.as_ref().and_then(|v| match v {
            serde_json::Value::Number(n) => n.as_u64(),
            serde_json::Value::String(s) => s.parse().ok(),
            _ => None,
        });
        Ok(TokenSet {
            access_token: t.access_token,
            refresh_token: t
                .refresh_token
                .or_else(|| previous_refresh.map(str::to_owned)),
            expires_at: expires_in.map(|s| super::now_secs().saturating_add(s)),
            scope: t.scope.or_else(|| asked_scope.map(str::to_owned)),
            token_type: bound.then(|| "DPoP".to_owned()),
        })
    }

    /// POSTs the form, with a fresh DPoP proof when the client has a key. A nonce the server
    /// sends (`DPoP-Nonce`) is kept for its origin; a 400 `use_dpop_nonce` is answered by
    /// sending the request once more with a new proof carrying the nonce (RFC 9449 §8).
    async fn post(
        &self,
        fetcher: &Fetcher,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<Answer, OAuthError> {
        let Some(dpop) = self.dpop else {
            return fetcher
                .post_form(self.endpoint, form, basic, &http::HeaderMap::new())
                .await;
        };
        let mut retried = false;
        loop {
            let proof = dpop.proof("POST", self.endpoint, None)?;
            let mut headers = http::HeaderMap::new();
            let value = http::HeaderValue::from_str(&proof)
                .map_err(|_| OAuthError::Config("the DPoP proof is not a header value".into()))?;
            headers.insert(DPOP_HEADER, value);
            let answer = fetcher
                .post_form(self.endpoint, form, basic, &headers)
                .await?;
            let nonce = answer
                .headers
                .get(DPOP_NONCE_HEADER)
                .and_then(|v| v.to_str().ok());
            if let Some(n) = nonce {
                dpop.set_nonce(self.endpoint, n);
            }
            let asks_nonce = answer.status == http::StatusCode::BAD_REQUEST
                && serde_json::from_slice::<TokenError>(&answer.body)
                    .is_ok_and(|e| e.error == "use_dpop_nonce");
            if asks_nonce && nonce.is_some() && !retried {
                retried = true;
                tracing::debug!("the token endpoint asked for a DPoP nonce; sending again once");
                continue;
            }
            return Ok(answer);
        }
    }
}

/// How a client authenticates at a token endpoint, ready to go on a form: `none` (its id in the
/// form, or nothing for a workload identity client without one), `client_secret_basic`,
/// `client_secret_post` or `private_key_jwt` (an assertion signed for `issuer`).
pub(crate) struct ClientAuthentication<'a> {
    client: &'a RegisteredClient,
    secret: Option<&'a str>,
    assertion: Option<String>,
}

impl<'a> ClientAuthentication<'a> {
    pub(crate) fn of(
        client: &'a RegisteredClient,
        key: Option<&PrivateKeyJwt>,
        issuer: &str,
    ) -> Result<Self, OAuthError> {
        let needs_secret = matches!(
            client.auth_method,
            TokenAuthMethod::ClientSecretBasic | TokenAuthMethod::ClientSecretPost
        );
        let secret = match client.client_secret.as_deref() {
            Some(s) if needs_secret => Some(s),
            None if needs_secret => {
                return Err(OAuthError::Config(format!(
                    "{} needs a client secret; none was given",
                    client.auth_method.as_str()
                )));
            }
            _ => None,
        };
        let assertion = match client.auth_method {
            TokenAuthMethod::PrivateKeyJwt => {
                let key = key.ok_or_else(|| {
                    OAuthError::Config(
                        "private_key_jwt needs the client's private key; none was given".into(),
                    )
                })?;
                Some(key.assertion(&client.client_id, issuer)?)
            }
            _ => None,
        };
        Ok(Self {
            client,
            secret,
            assertion,
        })
    }

    /// Adds what goes in the form.
    pub(crate) fn extend<'b>(&'b self, form: &mut Vec<(&'b str, &'b str)>) {
        let id = self.client.client_id.as_str();
        match self.client.auth_method {
            TokenAuthMethod::None if id.is_empty() => {}
            TokenAuthMethod::None => form.push(("client_id", id)),
            TokenAuthMethod::ClientSecretBasic => {}
            TokenAuthMethod::ClientSecretPost => {
                form.push(("client_id", id));
                form.push(("client_secret", self.secret.unwrap_or_default()));
            }
            TokenAuthMethod::PrivateKeyJwt => {
                form.push(("client_id", id));
                form.push(("client_assertion_type", JWT_BEARER_ASSERTION));
                form.push((
                    "client_assertion",
                    self.assertion.as_deref().unwrap_or_default(),
                ));
            }
        }
    }

    /// The HTTP Basic credentials, for `client_secret_basic`.
    pub(crate) fn basic(&self) -> Option<(&'a str, &'a str)> {
        match self.client.auth_method {
            TokenAuthMethod::ClientSecretBasic => {
                Some((self.client.client_id.as_str(), self.secret?))
            }
            _ => None,
        }
    }
}
