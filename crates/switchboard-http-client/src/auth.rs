//! The authorization hook (SPEC-NOTES §7): an [`AuthProvider`] on [`crate::HttpClientConfig`]
//! gives every HTTP request of the transport (POST, GET, `DELETE`, in every mode) its
//! `Authorization: Bearer` header (`[AU-18]`), and is told of the answers that ask for
//! authorization:
//!
//! * 401: the provider runs discovery and authorization (or a refresh) with the
//!   `WWW-Authenticate` value, and the request is sent again once with the new token `[AU-6]`;
//! * 403 with `error="insufficient_scope"`: the provider steps up, and the request is sent
//!   again, as long as the provider agrees (it bounds its attempts `[AU-7]`).
//!
//! With DPoP (RFC 9449) the provider gives each request its scheme (`DPoP`) and a proof made
//! for that request's method and URL ([`AuthProvider::request_auth`]); a `DPoP-Nonce` on any
//! answer goes to the provider, and a 401 `use_dpop_nonce` challenge is answered by sending the
//! request once more with a new proof carrying the nonce.
//!
//! When the provider fails, the answer (401 or 403) goes to the caller as any HTTP status
//! does, and the provider keeps the reason. The token is never put in a URL `[AU-19]` and the
//! header value is marked sensitive, so it is left out of reqwest's and hyper's logs.
//!
//! With the `oauth` feature, `switchboard_auth::client::OAuthClient` implements the trait.

use std::future::Future;
use std::pin::Pin;

/// A boxed future of a provider.
pub type AuthFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, AuthError>> + Send + 'a>>;

/// Why an [`AuthProvider`] has no token, or could not renew one: the provider's own error,
/// kept as its source (its text is for people and never holds a token or a secret).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct AuthError(Box<dyn std::error::Error + Send + Sync>);

impl AuthError {
    /// Wraps the provider's error (or a message).
    pub fn new(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        AuthError(error.into())
    }

    /// The provider's error, to downcast to its own type.
    pub fn into_inner(self) -> Box<dyn std::error::Error + Send + Sync> {
        self.0
    }
}

impl From<&str> for AuthError {
    fn from(message: &str) -> Self {
        AuthError::new(message)
    }
}

impl From<String> for AuthError {
    fn from(message: String) -> Self {
        AuthError::new(message)
    }
}

/// What one request carries: the `Authorization` scheme and token, and a DPoP proof
/// (RFC 9449) made for that request only.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct RequestAuth {
    /// The access token; `None` sends the request without.
    pub token: Option<String>,
    /// The scheme: `Bearer`, or `DPoP` for a DPoP-bound token.
    pub scheme: &'static str,
    /// The `DPoP` header.
    pub dpop_proof: Option<String>,
}

impl RequestAuth {
    /// A bearer token (or none).
    pub fn bearer(token: Option<String>) -> Self {
        Self {
            token,
            scheme: "Bearer",
            dpop_proof: None,
        }
    }

    /// A DPoP-bound token with its proof.
    pub fn dpop(token: String, proof: String) -> Self {
        Self {
            token: Some(token),
            scheme: "DPoP",
            dpop_proof: Some(proof),
        }
    }
}

impl std::fmt::Debug for RequestAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestAuth")
            .field("has_token", &self.token.is_some())
            .field("scheme", &self.scheme)
            .field("has_dpop_proof", &self.dpop_proof.is_some())
            .finish()
    }
}

/// Supplies and renews the transport's access token.
pub trait AuthProvider: Send + Sync + std::fmt::Debug {
    /// The access token for the next request; `None` sends it without (its 401 then starts
    /// the authorization).
    fn token(&self) -> AuthFuture<'_, Option<String>>;

    /// The server answered 401 to a request that carried `sent`; `www_authenticate` is its
    /// challenge. `Ok`: a new token is ready, the request goes again once.
    fn unauthorized<'a>(
        &'a self,
        www_authenticate: Option<&'a str>,
        sent: Option<&'a str>,
    ) -> AuthFuture<'a, ()>;

    /// The server answered 403 with an `insufficient_scope` challenge to a request that
    /// carried `sent`. `Ok`: a token with more scope is ready, the request goes again.
    fn insufficient_scope<'a>(
        &'a self,
        www_authenticate: &'a str,
        sent: Option<&'a str>,
    ) -> AuthFuture<'a, ()>;

    /// What the request `method url` carries, asked once per HTTP request (every POST, GET,
    /// resumption and `DELETE`, and each retry): by default the token of
    /// [`AuthProvider::token`] as a Bearer token. A DPoP provider returns the `DPoP` scheme
    /// and a fresh proof for this method and URL.
    fn request_auth<'a>(
        &'a self,
        method: &'a http::Method,
        url: &'a reqwest::Url,
    ) -> AuthFuture<'a, RequestAuth> {
        let _ = (method, url);
        Box::pin(async move { Ok(RequestAuth::bearer(self.token().await?)) })
    }

    /// A response to a request to `url` carried `DPoP-Nonce` (RFC 9449 §8, §9). By default
    /// ignored.
    fn dpop_nonce(&self, url: &reqwest::Url, nonce: &str) {
        let _ = (url, nonce);
    }
}

#[cfg(feature = "oauth")]
mod oauth {
    use switchboard_auth::client::OAuthClient;

    use super::{AuthError, AuthFuture, AuthProvider, RequestAuth};

    impl AuthProvider for OAuthClient {
        fn request_auth<'a>(
            &'a self,
            method: &'a http::Method,
            url: &'a reqwest::Url,
        ) -> AuthFuture<'a, RequestAuth> {
            Box::pin(async move {
                let c = self
                    .credentials(method.as_str(), url)
                    .await
                    .map_err(AuthError::new)?;
                Ok(match (c.token, c.dpop_proof) {
                    (Some(t), Some(p)) => RequestAuth::dpop(t, p),
                    (t, _) => RequestAuth::bearer(t),
                })
            })
        }

        fn dpop_nonce(&self, url: &reqwest::Url, nonce: &str) {
            OAuthClient::dpop_nonce(self, url, nonce);
        }

        fn token(&self) -> AuthFuture<'_, Option<String>> {
            Box::pin(async move { self.access_token().await.map_err(AuthError::new) })
        }

        fn unauthorized<'a>(
            &'a self,
            www_authenticate: Option<&'a str>,
            sent: Option<&'a str>,
        ) -> AuthFuture<'a, ()> {
            Box::pin(async move {
                OAuthClient::unauthorized(self, www_authenticate, sent)
                    .await
                    .map_err(AuthError::new)
            })
        }

        fn insufficient_scope<'a>(
            &'a self,
            www_authenticate: &'a str,
            sent: Option<&'a str>,
        ) -> AuthFuture<'a, ()> {
            Box::pin(async move {
                OAuthClient::insufficient_scope(self, www_authenticate, sent)
                    .await
                    .map_err(AuthError::new)
            })
        }
    }
}

/// Whether a `WWW-Authenticate` value is a Bearer (or DPoP) `insufficient_scope` challenge.
pub(crate) fn is_insufficient_scope(value: &str) -> bool {
    let v = value.to_ascii_lowercase();
    let v = v.trim_start();
    (v.starts_with("bearer") || v.starts_with("dpop")) && v.contains("insufficient_scope")
}

/// Whether a `WWW-Authenticate` value is a DPoP `use_dpop_nonce` challenge (RFC 9449 §9).
pub(crate) fn is_use_dpop_nonce(value: &str) -> bool {
    let v = value.to_ascii_lowercase();
    v.contains("dpop") && v.contains("use_dpop_nonce")
}
