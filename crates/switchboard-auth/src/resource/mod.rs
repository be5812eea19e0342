//! The resource server's side (our MCP server): who the caller is, and what it may do.
//!
//! A [`TokenValidator`] turns the bearer token of a request into an [`AuthInfo`] or refuses it
//! (`[AU-20]`, `[AU-21]`, `[AU-22]`); the HTTP server answers a refusal with 401 and a
//! [`crate::BearerChallenge`], and never passes the token on (`[AU-23]`). A [`ScopePolicy`] says
//! which scopes each request needs: a default for every request, and more per tool, prompt or
//! resource; a token that lacks one gets 403 `insufficient_scope` naming what is needed
//! (`[AU-26]`, step-up).
//!
//! The trait has no dependencies of its own, so any validator can be plugged in. With the
//! `resource` feature this module also offers two built-in ones:
//!
//! - `JwtValidator`: JWT access tokens (RFC 9068) checked against the issuer's JWKS, found
//!   through the issuer's metadata (RFC 8414, then OpenID discovery), cached, and refreshed when
//!   a token names an unknown key (rate-limited; every fetch bounded in time and bytes).
//! - `IntrospectionValidator`: opaque tokens through RFC 7662 introspection.
//!
//! Neither logs nor echoes a token, nor puts one in an error.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};

use crate::scope::ScopeSet;

mod arrival;
#[cfg(feature = "resource")]
pub mod dpop;
#[cfg(feature = "resource")]
mod fetch;
#[cfg(feature = "resource")]
mod introspection;
#[cfg(feature = "resource")]
mod jwt;

pub use arrival::{Arrival, MAX_ARRIVAL_HEADER_BYTES, MAX_ARRIVAL_HEADERS};
#[cfg(feature = "resource")]
pub use introspection::{IntrospectionConfig, IntrospectionValidator};
#[cfg(feature = "resource")]
pub use jsonwebtoken::Algorithm;
#[cfg(feature = "resource")]
pub use jwt::{DEFAULT_ALGORITHMS, JwtValidator, JwtValidatorConfig};

/// What a valid access token says about its bearer, available to handlers.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct AuthInfo {
    /// The principal the token speaks for ([`subject_of`]): its `sub` (the user, or the client
    /// itself for a client-credentials grant), else the client it was issued to. Sessions and
    /// tasks are bound to it (`[SEC-SH-5]`).
    pub subject: String,
    /// The scopes the token grants.
    pub scopes: ScopeSet,
    /// The OAuth client the token was issued to (`client_id`, or `azp`), when it says.
    pub client_id: Option<String>,
    /// The issuer (`iss`).
    pub issuer: String,
    /// The audiences (`aud`); ours is among them.
    pub audience: Vec<String>,
    /// When the token expires, in seconds since the Unix epoch (`exp`).
    pub expires_at: Option<u64>,
    /// Every claim of the token (or of the introspection answer), as read.
    pub claims: Map<String, Value>,
}

impl AuthInfo {
    /// An `AuthInfo` for `subject` issued by `issuer` with `scopes` (for validators written
    /// outside this crate, and for tests).
    pub fn new(subject: impl Into<String>, issuer: impl Into<String>, scopes: ScopeSet) -> Self {
        AuthInfo {
            subject: subject.into(),
            scopes,
            issuer: issuer.into(),
            ..AuthInfo::default()
        }
    }

    /// Sets the client id.
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sets the audiences.
    pub fn with_audience(mut self, audience: Vec<String>) -> Self {
        self.audience = audience;
        self
    }

    /// Sets the expiry (seconds since the Unix epoch).
    pub fn with_expires_at(mut self, at: u64) -> Self {
        self.expires_at = Some(at);
        self
    }

    /// The key a session or task is owned under: the issuer, the kind of principal and the
    /// subject together, written so that no two differ only in where one ends and the next
    /// begins. Two issuers' subjects never collide, and neither do a user and a client that
    /// share a name: a token without `sub` speaks for its client, and its key says so, so a
    /// client registered as `alice` is not the user `alice` (issue 25, finding 3).
    pub fn owner_key(&self) -> String {
        let kind = match self.claims.get("sub") {
            Some(Value::String(sub)) if !sub.is_empty() => "sub",
            // A validator written outside this crate names its subject itself.
            _ if self.claims.is_empty() => "sub",
            _ => "client",
        };
        format!(
            "{kind}:{}:{}|{}",
            self.issuer.len(),
            self.issuer,
            self.subject
        )
    }
}

/// Why a token was refused. The text never contains the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The token is malformed, badly signed, expired, not yet valid, not for us, or otherwise
    /// unacceptable: 401 `invalid_token` (`[AU-22]`). The reason is for logs and for the
    /// challenge's `error_description`; it names no claim value.
    #[error("invalid token: {0}")]
    Invalid(&'static str),
    /// The token could not be checked now (the issuer's keys or introspection endpoint could
    /// not be reached): 503, and the client may retry.
    #[error("token validation unavailable: {0}")]
    Unavailable(String),
}

/// A boxed future returned by [`TokenValidator::validate`].
pub type ValidateFuture<'a> =
    Pin<Box<dyn Future<Output = Result<AuthInfo, TokenError>> + Send + 'a>>;

/// Checks a bearer token for this resource server: signature or introspection, issuer,
/// audience (our canonical resource URI, `[AU-21]`), expiry. Implement it to plug in your own.
pub trait TokenValidator: Send + Sync + 'static {
    /// Validates `token` (the value after `Bearer `). Implementations must not log it.
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a>;
}

impl<F> TokenValidator for F
where
    F: Fn(&str) -> Result<AuthInfo, TokenError> + Send + Sync + 'static,
{
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        let r = self(token);
        Box::pin(async move { r })
    }
}

/// The kind of named item (a tool, a prompt, a resource) a scope can be declared for, in
/// [`ScopePolicy::required`]. Not the catalogue's `Primitive` (a part of the protocol).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ScopedItem {
    /// A tool, by name (`tools/call`).
    Tool,
    /// A prompt, by name (`prompts/get`).
    Prompt,
    /// A resource, by URI (`resources/read`, `resources/subscribe`, `resources/unsubscribe`).
    Resource,
}

/// The scopes requests need: `default` for every request, plus those declared for the tool,
/// prompt or resource a request names.
#[derive(Clone, Default, PartialEq)]
pub struct ScopePolicy {
    default: ScopeSet,
    named: HashMap<(ScopedItem, String), ScopeSet>,
}

impl fmt::Debug for ScopePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopePolicy")
            .field("default", &self.default.to_string())
            .field("named", &self.named.len())
            .finish()
    }
}

impl ScopePolicy {
    /// A policy requiring nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every request needs `scopes` (added to what was required before).
    pub fn require_default(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let add: ScopeSet = scopes.into_iter().collect();
        self.default = self.default.union(&add);
        self
    }

    /// Requests naming `name` (a tool or prompt name, a resource URI) of `kind` also need
    /// `scopes`.
    pub fn require(
        mut self,
        kind: ScopedItem,
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.insert(kind, name, scopes.into_iter().collect());
        self
    }

    /// Adds `scopes` to what requests naming `name` of `kind` need.
    pub fn insert(&mut self, kind: ScopedItem, name: impl Into<String>, scopes: ScopeSet) {
        let name = name.into();
        let name = match kind {
            ScopedItem::Resource => resource_key(&name).into_owned(),
            _ => name,
        };
        let e = self.named.entry((kind, name)).or_default();
        *e = e.union(&scopes);
    }

    /// Adds `scopes` to what every request needs.
    pub fn insert_default(&mut self, scopes: ScopeSet) {
        self.default = self.default.union(&scopes);
    }

    /// What every request needs.
    pub fn default_scopes(&self) -> &ScopeSet {
        &self.default
    }

    /// What a request acting on `target` (a primitive and its name) needs: the default plus
    /// what that primitive declares.
    pub fn required(&self, target: Option<(ScopedItem, &str)>) -> ScopeSet {
        let key = target.map(|(k, n)| match k {
            ScopedItem::Resource => (k, resource_key(n).into_owned()),
            _ => (k, n.to_owned()),
        });
        match key.and_then(|key| self.named.get(&key)) {
            Some(extra) => self.default.union(extra),
            None => self.default.clone(),
        }
    }

    /// Every scope this policy names (for `scopes_supported`), in order.
    pub fn all_scopes(&self) -> ScopeSet {
        self.named
            .values()
            .fold(self.default.clone(), |acc, s| acc.union(s))
    }

    /// Whether the policy requires nothing at all.
    pub fn is_empty(&self) -> bool {
        self.default.is_empty() && self.named.values().all(ScopeSet::is_empty)
    }

    /// Merges `other` into this policy.
    pub fn merge(&mut self, other: &ScopePolicy) {
        self.insert_default(other.default.clone());
        for ((k, n), s) in &other.named {
            self.insert(*k, n.clone(), s.clone());
        }
    }
}

/// The form a resource URI is looked up in: percent-decoded whole, as a resource template
/// decodes the values it matches. Two URIs that reach the same resource through a template
/// (`test://item/42` and `test://item/%34%32`) need the same scopes (issue 25, finding 2); two
/// that differ only in what encodes a reserved character (`a%2Fb`, `a/b`) share theirs too,
/// which errs on the side of asking for more. A URI with a malformed escape is its own key
/// (no template matches it).
fn resource_key(uri: &str) -> std::borrow::Cow<'_, str> {
    if !uri.contains('%') {
        return std::borrow::Cow::Borrowed(uri);
    }
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = uri
                .get(i + 1..i + 3)
                .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
            let Some(byte) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) else {
                return std::borrow::Cow::Borrowed(uri);
            };
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    match String::from_utf8(out) {
        Ok(decoded) => std::borrow::Cow::Owned(decoded),
        Err(_) => std::borrow::Cow::Borrowed(uri),
    }
}

/// The `scope` claim of a token or introspection answer: a space-separated string (RFC 9068
/// §2.2.3, RFC 7662 §2.2), or, as some issuers write it, an array of strings (`scp` too).
pub fn scopes_of(claims: &Map<String, Value>) -> ScopeSet {
    let mut out = ScopeSet::new();
    for key in ["scope", "scp"] {
        match claims.get(key) {
            Some(Value::String(s)) => out = out.union(&ScopeSet::parse(s)),
            Some(Value::Array(a)) => {
                out = out.union(&a.iter().filter_map(Value::as_str).collect::<ScopeSet>());
            }
            _ => {}
        }
    }
    out
}

/// The client a token or introspection answer names: `client_id` (RFC 9068 §2.2, RFC 7662
/// §2.2), else `azp` (OpenID Connect's authorized party).
pub fn client_of(claims: &Map<String, Value>) -> Option<String> {
    ["client_id", "azp"]
        .iter()
        .filter_map(|k| claims.get(*k).and_then(Value::as_str))
        .find(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The principal a token speaks for, which sessions and tasks are bound to (`[SEC-SH-5]`,
/// `[SEC-SH-10]`, `[SEC-TK-1]`): its `sub`; for a token without one (a client-credentials token
/// from an issuer that leaves `sub` out), the client it was issued to ([`client_of`]), since
/// such a client acts for itself and RFC 9068 §2.2 makes it its own subject. `None` when the
/// token names neither: nothing could be bound to it, so validators refuse it.
pub fn subject_of(claims: &Map<String, Value>) -> Option<String> {
    claims
        .get("sub")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .or_else(|| client_of(claims))
}

/// The `aud` claim as a list (a string or an array of strings).
pub fn audiences_of(claims: &Map<String, Value>) -> Vec<String> {
    match claims.get("aud") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether `url` may be fetched for token validation: `https`, or `http` to a loopback host
/// (for development and tests, `[SEC-SSRF-2]`).
pub fn fetchable(url: &url::Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => match url.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn au_26_policy_adds_the_primitive_scopes_to_the_default() {
        let p = ScopePolicy::new().require_default(["mcp:basic"]).require(
            ScopedItem::Tool,
            "write",
            ["mcp:write"],
        );
        assert_eq!(p.required(None).to_string(), "mcp:basic");
        assert_eq!(
            p.required(Some((ScopedItem::Tool, "write"))).to_string(),
            "mcp:basic mcp:write"
        );
        assert_eq!(
            p.required(Some((ScopedItem::Prompt, "write"))).to_string(),
            "mcp:basic",
            "a prompt of the same name is another primitive"
        );
        assert_eq!(p.all_scopes().to_string(), "mcp:basic mcp:write");
        assert!(!p.is_empty());
        assert!(ScopePolicy::new().is_empty());
    }

    /// Issue 25, finding 2: a resource template matches the percent-decoded URI, so the
    /// scopes declared for a URI apply to every encoding of it.
    #[test]
    fn finding_2_resource_scopes_apply_to_every_encoding_of_the_uri() {
        let p = ScopePolicy::new()
            .require(ScopedItem::Resource, "test://template/42/data", ["secret"])
            .require(ScopedItem::Resource, "test://a%2Fb", ["slash"]);
        let need = |uri: &str| p.required(Some((ScopedItem::Resource, uri))).to_string();
        assert_eq!(need("test://template/42/data"), "secret");
        assert_eq!(need("test://template/%34%32/data"), "secret");
        assert_eq!(need("test://template/%34%32%2Fdata"), "secret");
        assert_eq!(need("test://%74emplate/4%32/data"), "secret");
        assert_eq!(need("test://a%2fb"), "slash");
        assert_eq!(need("test://a/b"), "slash");
        assert_eq!(need("test://template/43/data"), "");
        assert_eq!(need("test://template/%3/data"), "", "a malformed escape");
        assert_eq!(
            p.required(Some((ScopedItem::Tool, "test://template/%34%32/data")))
                .to_string(),
            "",
            "only resources are decoded"
        );
    }

    #[test]
    fn scope_and_audience_claims_in_both_shapes() {
        let c = json!({"scope": "a b", "scp": ["c"], "aud": ["x", "y"]});
        let c = c.as_object().cloned().unwrap_or_default();
        assert_eq!(scopes_of(&c).to_string(), "a b c");
        assert_eq!(audiences_of(&c), ["x", "y"]);
        let c = json!({"aud": "x"}).as_object().cloned().unwrap_or_default();
        assert_eq!(audiences_of(&c), ["x"]);
    }

    #[test]
    fn sec_sh_5_the_subject_is_sub_else_the_client() {
        let of = |v: serde_json::Value| v.as_object().cloned().unwrap_or_default();
        let both = of(json!({"sub": "alice", "client_id": "app"}));
        assert_eq!(subject_of(&both).as_deref(), Some("alice"));
        assert_eq!(client_of(&both).as_deref(), Some("app"));
        let machine = of(json!({"client_id": "machine", "azp": "other"}));
        assert_eq!(subject_of(&machine).as_deref(), Some("machine"));
        let azp = of(json!({"azp": "machine", "sub": ""}));
        assert_eq!(subject_of(&azp).as_deref(), Some("machine"));
        assert_eq!(client_of(&azp).as_deref(), Some("machine"));
        assert_eq!(
            subject_of(&of(json!({"client_id": "", "scope": "a"}))),
            None
        );
        assert_eq!(
            subject_of(&of(json!({"sub": 7}))),
            None,
            "sub must be a string"
        );
    }

    #[test]
    fn sec_ssrf_2_http_only_for_loopback() {
        let ok = |s: &str| fetchable(&url::Url::parse(s).unwrap_or_else(|_| unreachable!()));
        assert!(ok("https://as.example.com"));
        assert!(ok("http://127.0.0.1:8080"));
        assert!(ok("http://[::1]:8080"));
        assert!(ok("http://localhost:1"));
        assert!(!ok("http://as.example.com"));
        assert!(!ok("http://10.0.0.1"));
        assert!(!ok("file:///etc/passwd"));
    }
}
