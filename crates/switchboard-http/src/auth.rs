//! Authorization on the endpoint: [`Authorization`], this server as an OAuth 2.1 resource server.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use axum::body::Body;
use http::header::{ACCESS_CONTROL_ALLOW_ORIGIN, AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Response, StatusCode, Uri};
use serde::Deserialize;
use switchboard_auth::protected_resource_metadata_path;
use switchboard_auth::resource::{AuthInfo, ScopePolicy, ScopedItem, TokenError, TokenValidator};
use switchboard_auth::{BearerChallenge, ProtectedResourceMetadata, ScopeSet};
use switchboard_types::ErrorCode;
use switchboard_types::catalogue::{self, TargetKind};

use crate::reply::{JSON, TRANSPORT_ERROR, refuse};

#[cfg(feature = "dpop")]
mod dpop;

/// -32001 is the session code; authorization refusals use their own reason under -32000.
const AUTH_ERROR: ErrorCode = TRANSPORT_ERROR;

/// The longest `Authorization` header looked at; longer ones are refused unread.
const MAX_AUTHORIZATION_BYTES: usize = 16 * 1024;

/// Why an [`Authorization`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthorizationError {
    /// The resource URI is not an absolute `http(s)` URI without a fragment.
    #[error("the resource URI must be an absolute http(s) URI without a fragment: {0}")]
    BadResource(String),
    /// No authorization server was named (`[AU-2]`).
    #[error("at least one authorization server must be named")]
    NoAuthorizationServer,
    /// The issuer is not an https URL (http only for a loopback host such as 127.0.0.1).
    #[error(
        "the issuer must be an https URL (http only for a loopback host such as 127.0.0.1), such as https://auth.example.com: {0}"
    )]
    BadIssuer(String),
}

/// Authorization on the endpoint (SPEC-NOTES §7): this server as an OAuth 2.1 resource server.
///
/// With an [`Authorization`] in [`crate::HttpConfig::authorization`]:
/// - the protected-resource metadata (RFC 9728) is served at the path-suffixed well-known URL
///   of the endpoint (`/.well-known/oauth-protected-resource/mcp` for `/mcp`) to anyone, with
///   `Access-Control-Allow-Origin: *` `[AU-1]`, `[AU-2]`, `[AU-4]`;
/// - every request (POST, GET, DELETE, of either era) must carry `Authorization: Bearer …`
///   with a token the [`TokenValidator`] accepts, checked before the body is read `[AU-20]`,
///   `[SEC-SH-1]`; otherwise 401 with `WWW-Authenticate: Bearer resource_metadata="…",
///   scope="…"` (and `error="invalid_token"` when a token was there) `[AU-22]`. A token in the
///   query string gets 400 `invalid_request` `[AU-19]`;
/// - the scopes the request needs ([`ScopePolicy`]: the default, plus those of the tool, prompt
///   or resource the body names) must all be granted, or 403 `insufficient_scope` names them
///   (step-up, `[AU-26]`). This is the one place the transport peeks into `params`: the
///   `name` or `uri` a policy is keyed on, and only when the policy names any;
/// - a 2025 session is bound to the subject that opened it: a request naming it with another
///   subject's token gets 404, as an unknown session would (`[SEC-SH-6]`), and the session is
///   left untouched;
/// - the validated [`AuthInfo`] travels with the frame to the handlers
///   ([`switchboard_jsonrpc::RequestContext::attachment`]); the token itself goes nowhere
///   `[AU-23]`;
/// - with DPoP on ([`Authorization::with_dpop`], feature `dpop`), a token bound to a key
///   (`cnf.jkt`) must come with the `DPoP` scheme and one proof signed by that key, made for
///   this request's method and the endpoint's URL, fresh and never seen before (RFC 9449 §7);
///   a bound token sent as a bearer is refused, and so is every unbound token when DPoP is
///   required. Refusals are `WWW-Authenticate: DPoP error="invalid_dpop_proof"`,
///   `"invalid_token"` or `"use_dpop_nonce"` (with `DPoP-Nonce`).
///
/// The endpoint's authorization: the validator, our canonical resource URI, the authorization
/// servers, and the scopes requests need.
#[derive(Clone)]
pub struct Authorization {
    validator: Arc<dyn TokenValidator>,
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Option<Vec<String>>,
    resource_name: Option<String>,
    policy: ScopePolicy,
    metadata_path: String,
    metadata_url: String,
    #[cfg(feature = "dpop")]
    dpop: Option<dpop::Shared>,
}

impl fmt::Debug for Authorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorization")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Authorization {
    /// Authorization for the resource `resource` (our canonical URI, the endpoint's full URL,
    /// such as `https://mcp.example.com/mcp`), whose tokens come from `authorization_servers`
    /// and are checked by `validator`.
    ///
    /// # Errors
    /// `resource` is not an absolute `http(s)` URI without a fragment, or no authorization
    /// server is named.
    pub fn new(
        resource: &str,
        authorization_servers: Vec<String>,
        validator: Arc<dyn TokenValidator>,
    ) -> Result<Self, AuthorizationError> {
        let canonical = Self::canonical_resource(resource)?;
        if authorization_servers.is_empty() {
            return Err(AuthorizationError::NoAuthorizationServer);
        }
        let url = url::Url::parse(&canonical)
            .map_err(|_| AuthorizationError::BadResource(resource.to_owned()))?;
        let metadata_path = protected_resource_metadata_path(url.path());
        let mut meta = url.clone();
        meta.set_path(&metadata_path);
        meta.set_query(None);
        Ok(Authorization {
            validator,
            resource: canonical,
            authorization_servers,
            scopes_supported: None,
            resource_name: None,
            policy: ScopePolicy::new(),
            metadata_path,
            metadata_url: meta.to_string(),
            #[cfg(feature = "dpop")]
            dpop: None,
        })
    }

    /// Tokens of the authorization server `issuer` (RFC 8414 or OpenID metadata with a
    /// `jwks_uri`), JWTs checked against its JWKS, for the audience `resource` (made
    /// canonical); feature `dpop`, which brings switchboard-auth's validators.
    ///
    /// # Errors
    /// [`AuthorizationError::BadIssuer`], [`AuthorizationError::BadResource`].
    #[cfg(feature = "dpop")]
    pub fn jwt(resource: &str, issuer: &str) -> Result<Self, AuthorizationError> {
        use switchboard_auth::resource::{JwtValidator, JwtValidatorConfig, fetchable};
        if !url::Url::parse(issuer).is_ok_and(|u| fetchable(&u)) {
            return Err(AuthorizationError::BadIssuer(issuer.to_owned()));
        }
        let resource = Self::canonical_resource(resource)?;
        let validator = JwtValidator::new(JwtValidatorConfig::new(issuer, &resource));
        Self::new(&resource, vec![issuer.to_owned()], Arc::new(validator))
    }

    /// The canonical form of a resource URI (lower-case scheme and host, no trailing slash on a
    /// bare origin), which tokens must name in `aud`: give the same string to the validator.
    ///
    /// # Errors
    /// `resource` is not an absolute `http(s)` URI without a fragment.
    pub fn canonical_resource(resource: &str) -> Result<String, AuthorizationError> {
        let bad = || AuthorizationError::BadResource(resource.to_owned());
        let url = url::Url::parse(resource).map_err(|_| bad())?;
        if !matches!(url.scheme(), "http" | "https")
            || url.fragment().is_some()
            || url.host().is_none()
        {
            return Err(bad());
        }
        // The URL parser adds a lone trailing slash to a bare origin; the canonical URI has none.
        Ok(if url.path() == "/" && !resource.ends_with('/') {
            url.as_str().trim_end_matches('/').to_owned()
        } else {
            url.as_str().to_owned()
        })
    }

    /// Sets the scopes requests need.
    pub fn with_policy(mut self, policy: ScopePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Sets `scopes_supported` in the metadata. Default: the scopes every request needs (a
    /// minimal baseline, `[SEC-SC-1]`); the rest are asked for by step-up.
    pub fn with_scopes_supported(mut self, scopes: Vec<String>) -> Self {
        self.scopes_supported = Some(scopes);
        self
    }

    /// Sets `resource_name` in the metadata.
    pub fn with_resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// Turns DPoP (RFC 9449) on: tokens bound to a key need a proof by that key on every
    /// request; with [`DpopConfig::required`] every token must be bound, and the metadata says
    /// `dpop_bound_access_tokens_required`. `config` also names the URL clients reach the
    /// endpoint at behind a proxy ([`DpopConfig::with_public_url`], default: the resource URI),
    /// the proofs' time window, the replay store (a shared one for a cluster) and server
    /// nonces.
    ///
    /// [`DpopConfig::required`]: switchboard_auth::resource::dpop::DpopConfig::required
    /// [`DpopConfig::with_public_url`]: switchboard_auth::resource::dpop::DpopConfig::with_public_url
    #[cfg(feature = "dpop")]
    pub fn with_dpop(mut self, config: switchboard_auth::resource::dpop::DpopConfig) -> Self {
        if let Ok(resource) = url::Url::parse(&self.resource) {
            self.dpop = Some(Arc::new(
                switchboard_auth::resource::dpop::DpopVerifier::new(&resource, config),
            ));
        }
        self
    }

    /// The nonce to hand out in `DPoP-Nonce` now, when DPoP nonces are on.
    pub(crate) fn dpop_nonce(&self) -> Option<String> {
        #[cfg(feature = "dpop")]
        if let Some(v) = &self.dpop {
            return v.current_nonce();
        }
        None
    }

    /// Our canonical resource URI.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The scope policy.
    pub fn policy(&self) -> &ScopePolicy {
        &self.policy
    }

    /// The path the metadata is served at.
    pub fn metadata_path(&self) -> &str {
        &self.metadata_path
    }

    /// The metadata's full URL (the challenges' `resource_metadata`).
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// The protected-resource metadata document.
    pub fn metadata(&self) -> ProtectedResourceMetadata {
        let scopes = self.scopes_supported.clone().unwrap_or_else(|| {
            let base = self.policy.default_scopes();
            let s = if base.is_empty() {
                self.policy.all_scopes()
            } else {
                base.clone()
            };
            s.iter().map(str::to_owned).collect()
        });
        #[allow(unused_mut)] // without DPoP nothing is added
        let mut extra = serde_json::Map::new();
        #[cfg(feature = "dpop")]
        if let Some(v) = &self.dpop {
            // RFC 9449 §5.2.
            extra.insert(
                "dpop_signing_alg_values_supported".into(),
                v.algorithms().into(),
            );
            if v.config().required {
                extra.insert("dpop_bound_access_tokens_required".into(), true.into());
            }
        }
        ProtectedResourceMetadata {
            resource: self.resource.clone(),
            authorization_servers: self.authorization_servers.clone(),
            scopes_supported: (!scopes.is_empty()).then_some(scopes),
            bearer_methods_supported: Some(vec!["header".to_owned()]),
            resource_name: self.resource_name.clone(),
            extra,
            ..ProtectedResourceMetadata::default()
        }
    }

    /// The metadata as an HTTP answer: JSON, readable from any origin, briefly cacheable.
    pub(crate) fn metadata_response(&self) -> Response<Body> {
        let text = serde_json::to_string(&self.metadata()).unwrap_or_default();
        let mut r = Response::new(Body::from(text));
        r.headers_mut().insert(CONTENT_TYPE, JSON);
        r.headers_mut()
            .insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        r.headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
        r
    }

    /// Checks the request's credentials: its token, validated, and its DPoP proof when DPoP is
    /// on; the answer to send otherwise (400, 401, 503). `relayed`: the request was relayed by
    /// another node of the cluster, which checked its proof already.
    pub(crate) async fn authenticate(
        &self,
        method: &http::Method,
        uri: &Uri,
        headers: &HeaderMap,
        relayed: bool,
    ) -> Result<Arc<AuthInfo>, Response<Body>> {
        #[cfg(not(feature = "dpop"))]
        let _ = (method, relayed);
        if query_has_token(uri) {
            return Err(self.challenge(
                StatusCode::BAD_REQUEST,
                Some("invalid_request"),
                "access tokens are not accepted in the query string",
                None,
            ));
        }
        let mut values = headers.get_all(AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            // No credentials (or several): the plain challenge, no error code (RFC 6750 §3.1).
            return Err(self.challenge(StatusCode::UNAUTHORIZED, None, "", None));
        };
        let token = value
            .to_str()
            .ok()
            .filter(|v| v.len() <= MAX_AUTHORIZATION_BYTES)
            .and_then(|v| {
                let (scheme, rest) = v.split_once(' ')?;
                let dpop = scheme.eq_ignore_ascii_case("dpop");
                (scheme.eq_ignore_ascii_case("bearer") || (dpop && self.dpop_on()))
                    .then(|| (dpop, rest.trim()))
            });
        let Some((_dpop_scheme, token)) = token.filter(|(_, t)| !t.is_empty()) else {
            return Err(self.challenge(StatusCode::UNAUTHORIZED, None, "", None));
        };
        match self.validator.validate(token).await {
            #[cfg(feature = "dpop")]
            Ok(info) => {
                if let Some(v) = &self.dpop {
                    let scheme = if _dpop_scheme {
                        dpop::Scheme::Dpop
                    } else {
                        dpop::Scheme::Bearer
                    };
                    if let Err(r) =
                        dpop::check(v, scheme, token, &info, method, headers, relayed).await
                    {
                        return Err(self.dpop_refusal(v, r));
                    }
                }
                Ok(Arc::new(info))
            }
            #[cfg(not(feature = "dpop"))]
            Ok(info) => Ok(Arc::new(info)),
            Err(TokenError::Invalid(why)) => {
                tracing::debug!(reason = why, "bearer token refused");
                Err(self.challenge(
                    StatusCode::UNAUTHORIZED,
                    Some("invalid_token"),
                    "the access token is invalid",
                    None,
                ))
            }
            Err(e) => {
                crate::throttle::warn_throttled!(reason = %e, "token validation unavailable");
                Err(refuse(
                    StatusCode::SERVICE_UNAVAILABLE,
                    AUTH_ERROR,
                    "Service unavailable: the access token cannot be checked now",
                    "token_validation_unavailable",
                    None,
                ))
            }
        }
    }

    fn dpop_on(&self) -> bool {
        #[cfg(feature = "dpop")]
        return self.dpop.is_some();
        #[cfg(not(feature = "dpop"))]
        false
    }

    /// The answer to a DPoP refusal: 401 with a `DPoP` challenge (and `DPoP-Nonce` when asked
    /// for), or 503 when the replay store cannot answer.
    #[cfg(feature = "dpop")]
    fn dpop_refusal(
        &self,
        verifier: &switchboard_auth::resource::dpop::DpopVerifier,
        r: dpop::Refusal,
    ) -> Response<Body> {
        tracing::debug!(
            error = r.error,
            reason = %r.description,
            "DPoP request refused"
        );
        if r.unavailable {
            crate::throttle::warn_throttled!(reason = %r.description, "DPoP replay store unavailable");
            return refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                AUTH_ERROR,
                "Service unavailable: the DPoP proof cannot be checked now",
                "dpop_replay_store_unavailable",
                None,
            );
        }
        let mut resp = self.challenge(
            StatusCode::UNAUTHORIZED,
            Some(r.error),
            &r.description,
            None,
        );
        // The DPoP scheme's challenge, whatever the resource takes otherwise.
        let bearer = resp
            .headers()
            .get(http::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("Bearer")
            .to_owned();
        let value = if bearer.starts_with("DPoP") {
            bearer
        } else {
            dpop::challenge_value(&bearer, verifier)
        };
        if let Ok(v) = HeaderValue::from_str(&value) {
            resp.headers_mut().insert(http::header::WWW_AUTHENTICATE, v);
        }
        if let Some(n) = &r.nonce {
            dpop::set_nonce(resp.headers_mut(), n);
        }
        resp
    }

    /// Checks that `info` grants what every request in `body` needs (403 otherwise).
    #[allow(clippy::result_large_err)] // the error is the ready answer
    pub(crate) fn authorize(&self, info: &AuthInfo, body: &str) -> Result<(), Response<Body>> {
        let needed = self.needed(body);
        if info.scopes.covers(&needed) {
            return Ok(());
        }
        tracing::info!(
            needed = %needed,
            missing = %info.scopes.missing(&needed),
            "request refused for insufficient scope"
        );
        Err(self.challenge(
            StatusCode::FORBIDDEN,
            Some("insufficient_scope"),
            "the access token lacks a scope this request needs",
            Some(&needed),
        ))
    }

    /// Checks that `info` grants the default scopes (GET and DELETE, which carry no body).
    #[allow(clippy::result_large_err)] // the error is the ready answer
    pub(crate) fn authorize_default(&self, info: &AuthInfo) -> Result<(), Response<Body>> {
        let needed = self.policy.default_scopes();
        if info.scopes.covers(needed) {
            return Ok(());
        }
        Err(self.challenge(
            StatusCode::FORBIDDEN,
            Some("insufficient_scope"),
            "the access token lacks a scope this request needs",
            Some(needed),
        ))
    }

    /// The scopes the requests of `body` need together. A body the peek cannot read (but the
    /// server might) needs every scope the policy names: never fewer than it could.
    fn needed(&self, body: &str) -> ScopeSet {
        if self.policy.is_empty() {
            return ScopeSet::new();
        }
        match peek(body) {
            Some(targets) => targets.iter().fold(self.policy.required(None), |acc, t| {
                acc.union(
                    &self
                        .policy
                        .required(t.as_ref().map(|(k, n)| (*k, n.as_str()))),
                )
            }),
            None => self.policy.all_scopes(),
        }
    }

    /// A `WWW-Authenticate: Bearer` answer with `status`. `scope` defaults to what every request
    /// needs; the body is a JSON-RPC error without id that names the `error` code only.
    fn challenge(
        &self,
        status: StatusCode,
        error: Option<&str>,
        description: &str,
        scope: Option<&ScopeSet>,
    ) -> Response<Body> {
        let scope = scope.unwrap_or(self.policy.default_scopes());
        let challenge = BearerChallenge {
            resource_metadata: Some(self.metadata_url.clone()),
            scope: (!scope.is_empty()).then(|| scope.to_string()),
            error: error.map(str::to_owned),
            error_description: (!description.is_empty()).then(|| description.to_owned()),
            ..BearerChallenge::default()
        };
        let message = match status {
            StatusCode::UNAUTHORIZED => "Unauthorized",
            StatusCode::FORBIDDEN => "Forbidden: insufficient scope",
            _ => "Bad Request",
        };
        let mut r = refuse(
            status,
            AUTH_ERROR,
            message,
            error.unwrap_or("unauthorized"),
            Some(if status == StatusCode::FORBIDDEN {
                "AU-26"
            } else {
                "AU-22"
            }),
        );
        let value = challenge.to_header_value();
        #[cfg(feature = "dpop")]
        let value = match &self.dpop {
            // A resource that takes DPoP only: the DPoP scheme alone.
            Some(v) if v.config().required => dpop::challenge_value(&value, v),
            // No credentials: both schemes are offered (RFC 9449 §7.1), Bearer first.
            Some(v) if error.is_none() => {
                format!("{value}, {}", dpop::challenge_value("Bearer", v))
            }
            _ => value,
        };
        if let Ok(v) = HeaderValue::from_str(&value) {
            r.headers_mut().insert(http::header::WWW_AUTHENTICATE, v);
        }
        r
    }
}

/// Whether the query string carries a token (`access_token`, RFC 6750 §2.3), `[AU-19]`.
fn query_has_token(uri: &Uri) -> bool {
    uri.query().is_some_and(|q| {
        url::form_urlencoded::parse(q.as_bytes())
            .any(|(k, _)| k.eq_ignore_ascii_case("access_token"))
    })
}

/// The primitive a request of `method` names, for the policy, and how it names it: read from
/// the catalogue (a request whose entry has a [`TargetKind`]), so that a new targeted method needs
/// no edit here. `None` for a method that names nothing, or names something the policy has no
/// kind for.
fn scoped(method: &str) -> Option<(ScopedItem, TargetKind)> {
    let spec = catalogue::request(method)?;
    let target = spec.target?;
    let kind = match (target, spec.primitive) {
        (TargetKind::Uri, _) => ScopedItem::Resource,
        (TargetKind::Name(_), catalogue::Primitive::Tools) => ScopedItem::Tool,
        (TargetKind::Name(_), catalogue::Primitive::Prompts) => ScopedItem::Prompt,
        (TargetKind::Name(_), _) => return None,
    };
    Some((kind, target))
}

/// What each envelope of a body acts on: the primitive and its name for the methods a policy
/// can name, `None` for any other message. `None` overall when the body cannot be read.
fn peek(body: &str) -> Option<Vec<Option<(ScopedItem, String)>>> {
    #[derive(Deserialize)]
    struct Params {
        #[serde(default)]
        name: Option<serde_json::Value>,
        #[serde(default)]
        uri: Option<serde_json::Value>,
    }
    #[derive(Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow, default)]
        method: Option<Cow<'a, str>>,
        #[serde(default)]
        params: Option<Params>,
    }
    fn target(e: Envelope<'_>) -> Option<(ScopedItem, String)> {
        let (kind, by) = scoped(&e.method?)?;
        let params = e.params?;
        let key = match by {
            TargetKind::Name(_) => params.name,
            TargetKind::Uri => params.uri,
        };
        match key? {
            serde_json::Value::String(s) => Some((kind, s)),
            _ => None,
        }
    }
    let trimmed = body.trim_start();
    if trimmed.starts_with('[') {
        let list: Vec<Envelope<'_>> = serde_json::from_str(body).ok()?;
        Some(list.into_iter().map(target).collect())
    } else {
        let one: Envelope<'_> = serde_json::from_str(body).ok()?;
        Some(vec![target(one)])
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use switchboard_types::methods;

    fn auth() -> Authorization {
        let v: Arc<dyn TokenValidator> =
            Arc::new(|_: &str| -> Result<AuthInfo, TokenError> { Err(TokenError::Invalid("x")) });
        Authorization::new(
            "http://127.0.0.1:9/mcp",
            vec!["http://127.0.0.1:8".into()],
            v,
        )
        .unwrap()
        .with_policy(
            ScopePolicy::new()
                .require_default(["mcp:basic"])
                .require(ScopedItem::Tool, "w", ["mcp:write"])
                .require(ScopedItem::Resource, "file:///secret", ["files"]),
        )
    }

    #[test]
    fn au_1_metadata_names_the_resource_and_its_servers() {
        let a = auth();
        assert_eq!(
            a.metadata_path(),
            "/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            a.metadata_url(),
            "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"
        );
        let m = a.metadata();
        assert_eq!(m.resource, "http://127.0.0.1:9/mcp");
        assert_eq!(m.authorization_servers, ["http://127.0.0.1:8"]);
        assert_eq!(m.scopes_supported.unwrap(), ["mcp:basic"]);
        assert_eq!(m.bearer_methods_supported.unwrap(), ["header"]);
        assert_eq!(
            Authorization::canonical_resource("HTTP://MCP.Example.com:8443").unwrap(),
            "http://mcp.example.com:8443"
        );
        let bare = Authorization::new("http://127.0.0.1:9", vec!["x".into()], a.validator.clone())
            .unwrap();
        assert_eq!(bare.resource(), "http://127.0.0.1:9");
        assert_eq!(
            bare.metadata_url(),
            "http://127.0.0.1:9/.well-known/oauth-protected-resource"
        );
        assert!(
            Authorization::new("mcp.example.com", vec!["x".into()], a.validator.clone()).is_err()
        );
        assert!(
            Authorization::new("https://e.com/mcp#f", vec!["x".into()], a.validator.clone())
                .is_err()
        );
        assert!(Authorization::new("https://e.com/mcp", vec![], a.validator.clone()).is_err());
    }

    #[test]
    fn au_26_needed_scopes_come_from_the_named_primitive() {
        let a = auth();
        let call = |name: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}","arguments":{{"name":5}}}}}}"#
            )
        };
        assert_eq!(a.needed(&call("r")).to_string(), "mcp:basic");
        assert_eq!(a.needed(&call("w")).to_string(), "mcp:basic mcp:write");
        let read = r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///secret"}}"#;
        assert_eq!(a.needed(read).to_string(), "files mcp:basic");
        // Issue 25, finding 2: an encoded form of the URI needs the same scopes.
        let encoded = read.replace("secret", "%73ecre%74");
        assert_eq!(a.needed(&encoded).to_string(), "files mcp:basic");
        let batch = format!("[{},{}]", call("w"), read);
        assert_eq!(a.needed(&batch).to_string(), "files mcp:basic mcp:write");
        // A prompt named like the tool needs only the default.
        let prompt = r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"w"}}"#;
        assert_eq!(a.needed(prompt).to_string(), "mcp:basic");
        // What the peek cannot read needs everything (duplicate keys, say).
        let dup =
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"r","name":"w"}}"#;
        assert_eq!(a.needed(dup).to_string(), "files mcp:basic mcp:write");
    }

    #[test]
    fn the_scoped_methods_are_the_catalogue_targeted_requests() {
        let mut found: Vec<(&str, ScopedItem)> = catalogue::CATALOGUE
            .iter()
            .filter_map(|s| scoped(s.name).map(|(kind, _)| (s.name, kind)))
            .collect();
        found.sort_by_key(|(name, _)| *name);
        assert_eq!(
            found,
            [
                (methods::PROMPTS_GET, ScopedItem::Prompt),
                (methods::RESOURCES_READ, ScopedItem::Resource),
                (methods::RESOURCES_SUBSCRIBE, ScopedItem::Resource),
                (methods::RESOURCES_UNSUBSCRIBE, ScopedItem::Resource),
                (methods::TOOLS_CALL, ScopedItem::Tool),
            ]
        );
        assert!(scoped(methods::NOTIFICATIONS_TOOLS_LIST_CHANGED).is_none());
        assert!(scoped("x-vendor/call").is_none());
    }

    #[test]
    fn au_19_a_token_in_the_query_is_seen() {
        assert!(query_has_token(&"/mcp?access_token=x".parse().unwrap()));
        assert!(query_has_token(&"/mcp?a=1&ACCESS_TOKEN=x".parse().unwrap()));
        assert!(!query_has_token(&"/mcp?token_hint=x".parse().unwrap()));
        assert!(!query_has_token(&"/mcp".parse().unwrap()));
    }

    #[tokio::test]
    async fn an_authorization_header_over_16_kib_is_not_read() {
        let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = seen.clone();
        let v: Arc<dyn TokenValidator> = Arc::new(move |t: &str| {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(AuthInfo::new(t, "http://127.0.0.1:8", ScopeSet::new()))
        });
        let a = Authorization::new(
            "http://127.0.0.1:9/mcp",
            vec!["http://127.0.0.1:8".into()],
            v,
        )
        .unwrap();
        let uri: Uri = "/mcp".parse().unwrap();
        let with = |token: &str| {
            let mut h = HeaderMap::new();
            h.insert(
                AUTHORIZATION,
                HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
            );
            h
        };
        // Just under the bound: read and validated.
        let fits = "t".repeat(MAX_AUTHORIZATION_BYTES - "Bearer ".len());
        assert!(
            a.authenticate(&http::Method::POST, &uri, &with(&fits), false)
                .await
                .is_ok()
        );
        assert_eq!(seen.load(std::sync::atomic::Ordering::Relaxed), 1);
        // One byte over: answered as if no token came (the plain challenge), never validated.
        let over = "t".repeat(MAX_AUTHORIZATION_BYTES - "Bearer ".len() + 1);
        let refused = a
            .authenticate(&http::Method::POST, &uri, &with(&over), false)
            .await
            .unwrap_err();
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        let challenge = refused.headers()[http::header::WWW_AUTHENTICATE]
            .to_str()
            .unwrap();
        assert!(!challenge.contains("error="), "{challenge}");
        assert_eq!(seen.load(std::sync::atomic::Ordering::Relaxed), 1);
    }
}
