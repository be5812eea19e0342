//! The documents of OAuth 2.1 discovery and registration, and where they live.
//!
//! - [`ProtectedResourceMetadata`] (RFC 9728): what our MCP server publishes `[AU-1]`, `[AU-2]`;
//!   [`protected_resource_metadata_urls`] gives the well-known URLs a client tries `[AU-5]`.
//! - [`AuthorizationServerMetadata`] (RFC 8414 and OpenID Connect Discovery 1.0) `[AU-8]`;
//!   [`authorization_server_metadata_urls`] gives the order the client tries them in `[AU-9]`.
//! - [`ClientMetadata`] (RFC 7591 §2): sent for dynamic registration, and the body of a client
//!   ID metadata document `[AU-10]`, `[AU-11]`.
//!
//! Every document keeps the fields it does not name in `extra`, so nothing read is lost.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use url::Url;

/// RFC 9728 protected-resource metadata.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProtectedResourceMetadata {
    /// The resource's identifier: the MCP server's canonical URI.
    pub resource: String,
    /// The authorization servers' issuer identifiers (MCP requires at least one `[AU-2]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization_servers: Vec<String>,
    /// The scopes the resource understands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How the token may be sent; MCP allows only the header (`["header"]`) `[AU-19]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// Documentation for developers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_documentation: Option<String>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// RFC 8414 authorization-server metadata (also the shape of an OpenID provider configuration).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier; must equal the issuer the document was looked up for.
    pub issuer: String,
    /// The authorization endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// The token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// The dynamic client registration endpoint (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// The issuer's signing keys (JWKS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// The introspection endpoint (RFC 7662).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introspection_endpoint: Option<String>,
    /// The revocation endpoint (RFC 7009).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation_endpoint: Option<String>,
    /// Scopes the server offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// `response_type` values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_types_supported: Option<Vec<String>>,
    /// Grant types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// Client authentication methods at the token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Signing algorithms for `private_key_jwt` and `client_secret_jwt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// PKCE methods; a client refuses a server without it `[AU-14]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Whether the server accepts client ID metadata documents (URL client ids).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// Whether the server sends `iss` on authorization responses (RFC 9207).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AuthorizationServerMetadata {
    /// Whether the server offers PKCE with `S256` `[AU-13]`, `[AU-14]`.
    pub fn supports_s256(&self) -> bool {
        self.code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"))
    }
}

/// RFC 7591 client metadata, and the body of a client ID metadata document.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ClientMetadata {
    /// The client id: in a metadata document, the document's own URL `[AU-11]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_name: Option<String>,
    /// Redirect URIs, matched exactly by the server `[AU-16]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redirect_uris: Vec<String>,
    /// Grant types the client uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types: Option<Vec<String>>,
    /// Response types the client uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_types: Option<Vec<String>>,
    /// How the client authenticates at the token endpoint (`none` for a public client).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// The scopes the client may ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The client's home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_uri: Option<String>,
    /// Where the client's public keys are (for `private_key_jwt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The path where the metadata of a resource served at `resource_path` is published: the
/// well-known prefix with the resource's path appended (RFC 9728 §3.1), so `/mcp` gives
/// `/.well-known/oauth-protected-resource/mcp` and `/` gives the bare well-known path.
pub fn protected_resource_metadata_path(resource_path: &str) -> String {
    let trimmed = resource_path.trim_end_matches('/');
    if trimmed.is_empty() {
        "/.well-known/oauth-protected-resource".to_owned()
    } else if trimmed.starts_with('/') {
        format!("/.well-known/oauth-protected-resource{trimmed}")
    } else {
        format!("/.well-known/oauth-protected-resource/{trimmed}")
    }
}

/// The well-known URLs of a resource's metadata, in the order a client tries them when the
/// challenge names none `[AU-5]`: path-specific first, then the root.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) fn protected_resource_metadata_urls(resource: &Url) -> Vec<Url> {
    let mut out = Vec::new();
    let path = resource.path();
    let mut at = |p: &str| {
        let mut u = resource.clone();
        u.set_path(p);
        u.set_query(None);
        u.set_fragment(None);
        if !out.contains(&u) {
            out.push(u);
        }
    };
    if path != "/" && !path.is_empty() {
        at(&protected_resource_metadata_path(path));
    }
    at("/.well-known/oauth-protected-resource");
    out
}

/// The metadata URLs of an authorization server, in the order a client tries them `[AU-9]`:
/// for an issuer with a path, RFC 8414 with path insertion, OpenID with path insertion, then
/// OpenID with the path appended; without a path, RFC 8414 then OpenID.
#[cfg_attr(not(any(feature = "client", feature = "resource")), allow(dead_code))]
pub(crate) fn authorization_server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let with = |p: String| {
        let mut u = issuer.clone();
        u.set_path(&p);
        u.set_query(None);
        u.set_fragment(None);
        u
    };
    if path.is_empty() {
        vec![
            with("/.well-known/oauth-authorization-server".into()),
            with("/.well-known/openid-configuration".into()),
        ]
    } else {
        vec![
            with(format!("/.well-known/oauth-authorization-server{path}")),
            with(format!("/.well-known/openid-configuration{path}")),
            with(format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn au5_resource_metadata_urls_path_specific_then_root() {
        let u = Url::parse("https://ex.com/public/mcp?x=1").unwrap();
        let urls: Vec<String> = protected_resource_metadata_urls(&u)
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            urls,
            [
                "https://ex.com/.well-known/oauth-protected-resource/public/mcp",
                "https://ex.com/.well-known/oauth-protected-resource"
            ]
        );
        let root = Url::parse("http://127.0.0.1:8080/").unwrap();
        assert_eq!(protected_resource_metadata_urls(&root).len(), 1);
        assert_eq!(
            protected_resource_metadata_path("/mcp"),
            "/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            protected_resource_metadata_path("/"),
            "/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn au9_authorization_server_metadata_order() {
        let with_path = Url::parse("https://auth.ex.com/tenant1").unwrap();
        let urls: Vec<String> = authorization_server_metadata_urls(&with_path)
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            urls,
            [
                "https://auth.ex.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.ex.com/.well-known/openid-configuration/tenant1",
                "https://auth.ex.com/tenant1/.well-known/openid-configuration",
            ]
        );
        let bare = Url::parse("https://auth.ex.com").unwrap();
        let urls: Vec<String> = authorization_server_metadata_urls(&bare)
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            urls,
            [
                "https://auth.ex.com/.well-known/oauth-authorization-server",
                "https://auth.ex.com/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn documents_keep_unknown_members_and_check_pkce() {
        let raw = serde_json::json!({
            "issuer": "https://as.ex", "token_endpoint": "https://as.ex/token",
            "code_challenge_methods_supported": ["plain", "S256"], "x-vendor": 1
        });
        let md: AuthorizationServerMetadata = serde_json::from_value(raw.clone()).unwrap();
        assert!(md.supports_s256());
        assert_eq!(serde_json::to_value(&md).unwrap(), raw);
        let none: AuthorizationServerMetadata =
            serde_json::from_value(serde_json::json!({"issuer": "x"})).unwrap();
        assert!(
            !none.supports_s256(),
            "AU-14: no code_challenge_methods_supported means no PKCE"
        );
        let prm = ProtectedResourceMetadata {
            resource: "http://127.0.0.1:1/mcp".into(),
            authorization_servers: vec!["http://127.0.0.1:2".into()],
            bearer_methods_supported: Some(vec!["header".into()]),
            ..Default::default()
        };
        let v = serde_json::to_value(&prm).unwrap();
        assert_eq!(v["authorization_servers"][0], "http://127.0.0.1:2");
        assert!(v.get("scopes_supported").is_none());
    }
}
