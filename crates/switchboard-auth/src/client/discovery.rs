//! Discovery (`[AU-3]`..`[AU-9]`, `[AU-14]`): from the MCP endpoint and its challenge to the
//! authorization server's metadata.
//!
//! 1. The protected-resource metadata: the challenge's `resource_metadata` when it names one,
//!    otherwise the well-known URLs path-specific first, then the root `[AU-5]`. The document's
//!    `resource` must identify the endpoint (same origin, and a path that is the endpoint's or
//!    a prefix of it on a segment boundary; RFC 9728 §3.3, [SEC-SSRF-10]).
//! 2. The authorization server: the document's first `authorization_servers` entry `[AU-3]`;
//!    its metadata from the RFC 8414 URL, then the OpenID ones, with path insertion `[AU-9]`.
//!    The document's `issuer` must equal the issuer looked up, as a plain string (RFC 8414
//!    §3.3). An authorization server without PKCE S256 is refused `[AU-14]`.
//! 3. No protected-resource metadata at all: the 2025-03-26 model (SPEC-NOTES §7.8): the
//!    authorization base URL is the endpoint's origin; its RFC 8414 metadata, or failing that
//!    the default `/authorize`, `/token` and `/register` there.

use http::HeaderMap;
use url::Url;

use crate::challenge::BearerChallenge;
use crate::metadata::{
    AuthorizationServerMetadata, ProtectedResourceMetadata, authorization_server_metadata_urls,
    protected_resource_metadata_urls,
};
use crate::scope::ScopeSet;

use super::error::{OAuthError, shown};
use super::fetch::Fetcher;

/// What discovery found.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The resource indicator sent on the authorization and token requests `[AU-15]`: the
    /// metadata's `resource`, or the canonical endpoint URI without metadata.
    pub resource: String,
    /// The protected-resource metadata, when the server publishes it.
    pub resource_metadata: Option<ProtectedResourceMetadata>,
    /// The issuer, as the resource metadata names it (compared as a plain string).
    pub issuer: String,
    /// The authorization server's metadata (synthesised from default paths in the 2025-03-26
    /// fallback without metadata).
    pub server: AuthorizationServerMetadata,
    /// Whether this is the 2025-03-26 model (no protected-resource metadata).
    pub legacy: bool,
}

impl Discovered {
    /// The scopes to ask for first (SPEC-NOTES §7.5): the challenge's, else every scope the
    /// resource metadata lists, else none (the `scope` parameter is then left out).
    pub fn initial_scopes(&self, challenge: Option<&BearerChallenge>) -> Option<ScopeSet> {
        if let Some(s) = challenge.and_then(|c| c.scope.as_deref()) {
            let set = ScopeSet::parse(s);
            if !set.is_empty() {
                return Some(set);
            }
        }
        self.resource_metadata
            .as_ref()
            .and_then(|m| m.scopes_supported.as_ref())
            .map(|s| s.iter().cloned().collect::<ScopeSet>())
            .filter(|s| !s.is_empty())
    }
}

/// The canonical URI of an MCP endpoint (SPEC-NOTES §7.4): no fragment, no query, scheme and
/// host lower-case (the `url` crate's form), no trailing slash on a path other than `/`, and
/// no path at all for the root.
pub fn canonical_resource(endpoint: &Url) -> String {
    let mut u = endpoint.clone();
    u.set_fragment(None);
    u.set_query(None);
    u.to_string().trim_end_matches('/').to_owned()
}

/// Whether the resource a metadata document names identifies `endpoint`: same origin, and
/// its path is the endpoint's path or a prefix of it ending on a segment boundary.
pub(super) fn resource_matches(endpoint: &Url, resource: &str) -> bool {
    let Ok(r) = Url::parse(resource) else {
        return false;
    };
    if r.origin() != endpoint.origin() || r.fragment().is_some() {
        return false;
    }
    let rp = r.path().trim_end_matches('/');
    let ep = endpoint.path().trim_end_matches('/');
    rp.is_empty() || ep == rp || ep.starts_with(&format!("{rp}/"))
}

/// Runs discovery for `endpoint` after a challenge (or none).
///
/// # Errors
/// Every refusal and failure of the module docs.
pub(crate) async fn discover(
    fetcher: &Fetcher,
    endpoint: &Url,
    challenge: Option<&BearerChallenge>,
    extra: &HeaderMap,
) -> Result<Discovered, OAuthError> {
    let Some(prm) = resource_metadata(fetcher, endpoint, challenge, extra).await? else {
        return legacy(fetcher, endpoint, extra).await;
    };
    let Some(issuer) = prm.authorization_servers.first().cloned() else {
        return Err(OAuthError::Discovery(
            "the protected-resource metadata names no authorization server (AU-2)".into(),
        ));
    };
    let issuer_url = Url::parse(&issuer).map_err(|e| {
        OAuthError::Discovery(format!(
            "the authorization server {} is not a URL ({e})",
            shown(&issuer)
        ))
    })?;
    fetcher.policy.check_url(&issuer_url)?;
    let server = server_metadata(fetcher, &issuer, &issuer_url, extra)
        .await?
        .ok_or_else(|| {
            OAuthError::Discovery(format!(
                "the authorization server {} publishes no metadata at any of its well-known \
                 URLs (RFC 8414, OpenID Connect Discovery)",
                shown(&issuer)
            ))
        })?;
    if !server.supports_s256() {
        return Err(OAuthError::NoPkce { issuer });
    }
    Ok(Discovered {
        resource: prm.resource.clone(),
        resource_metadata: Some(prm),
        issuer,
        server,
        legacy: false,
    })
}

/// Step 1: the protected-resource metadata, or `None` when the server publishes none.
async fn resource_metadata(
    fetcher: &Fetcher,
    endpoint: &Url,
    challenge: Option<&BearerChallenge>,
    extra: &HeaderMap,
) -> Result<Option<ProtectedResourceMetadata>, OAuthError> {
    let named = challenge.and_then(|c| c.resource_metadata.as_deref());
    let candidates: Vec<Url> = match named {
        Some(raw) => {
            let url = endpoint.join(raw).map_err(|e| {
                OAuthError::Discovery(format!(
                    "the challenge's resource_metadata {} is not a URL ({e})",
                    shown(raw)
                ))
            })?;
            vec![url]
        }
        None => protected_resource_metadata_urls(endpoint),
    };
    let mut last = None;
    for url in &candidates {
        let answer = match fetcher.get(url, extra).await {
            Ok(a) => a,
            Err(e @ OAuthError::Refused { .. }) => return Err(e),
            Err(e) => {
                tracing::debug!(url = %shown(url.as_str()), error = %e, "no resource metadata here");
                last = Some(e);
                continue;
            }
        };
        if !answer.status.is_success() {
            tracing::debug!(url = %shown(url.as_str()), status = answer.status.as_u16(), "no resource metadata here");
            continue;
        }
        let prm: ProtectedResourceMetadata = answer.json(url)?;
        if !resource_matches(endpoint, &prm.resource) {
            return Err(OAuthError::ResourceMismatch {
                expected: canonical_resource(endpoint),
                found: shown(&prm.resource),
            });
        }
        return Ok(Some(prm));
    }
    if named.is_some() {
        // The server named its metadata and it could not be had: that is no fallback case.
        return Err(last.unwrap_or_else(|| {
            OAuthError::Discovery(
                "the protected-resource metadata the challenge names could not be fetched".into(),
            )
        }));
    }
    Ok(None)
}

/// Step 2: the authorization server's metadata, from the first of its URLs that has it.
async fn server_metadata(
    fetcher: &Fetcher,
    issuer: &str,
    issuer_url: &Url,
    extra: &HeaderMap,
) -> Result<Option<AuthorizationServerMetadata>, OAuthError> {
    for url in authorization_server_metadata_urls(issuer_url) {
        let answer = match fetcher.get(&url, extra).await {
            Ok(a) => a,
            Err(e @ OAuthError::Refused { .. }) => return Err(e),
            Err(e) => {
                tracing::debug!(url = %shown(url.as_str()), error = %e, "no server metadata here");
                continue;
            }
        };
        if !answer.status.is_success() {
            continue;
        }
        let md: AuthorizationServerMetadata = answer.json(&url)?;
        if md.issuer != issuer {
            return Err(OAuthError::IssuerMismatch {
                url: shown(url.as_str()),
                expected: issuer.to_owned(),
                found: shown(&md.issuer),
            });
        }
        check_endpoints(fetcher, &md)?;
        return Ok(Some(md));
    }
    Ok(None)
}

/// Every endpoint the client may use is checked by the fetch policy before it is trusted.
fn check_endpoints(fetcher: &Fetcher, md: &AuthorizationServerMetadata) -> Result<(), OAuthError> {
    for ep in [
        &md.authorization_endpoint,
        &md.token_endpoint,
        &md.registration_endpoint,
    ]
    .into_iter()
    .flatten()
    {
        let url = Url::parse(ep).map_err(|e| {
            OAuthError::Discovery(format!(
                "the authorization server's endpoint {} is not a URL ({e})",
                shown(ep)
            ))
        })?;
        fetcher.policy.check_url(&url)?;
    }
    Ok(())
}

/// Step 3: the 2025-03-26 model.
async fn legacy(
    fetcher: &Fetcher,
    endpoint: &Url,
    extra: &HeaderMap,
) -> Result<Discovered, OAuthError> {
    let mut base = endpoint.clone();
    base.set_path("/");
    base.set_query(None);
    base.set_fragment(None);
    let issuer = base.as_str().trim_end_matches('/').to_owned();
    let md_url = base
        .join(".well-known/oauth-authorization-server")
        .map_err(|e| OAuthError::Discovery(e.to_string()))?;
    let from_metadata = match fetcher.get(&md_url, extra).await {
        Ok(a) if a.status.is_success() => Some(a.json::<AuthorizationServerMetadata>(&md_url)?),
        Ok(_) => None,
        Err(e @ OAuthError::Refused { .. }) => return Err(e),
        Err(_) => None,
    };
    let server = match from_metadata {
        Some(md) => {
            check_endpoints(fetcher, &md)?;
            md
        }
        None => {
            let at = |p: &str| base.join(p).map(|u| u.to_string()).ok();
            AuthorizationServerMetadata {
                issuer: issuer.clone(),
                authorization_endpoint: at("authorize"),
                token_endpoint: at("token"),
                registration_endpoint: at("register"),
                // The 2025-03-26 model requires PKCE; without metadata S256 is assumed.
                code_challenge_methods_supported: Some(vec!["S256".into()]),
                ..Default::default()
            }
        }
    };
    tracing::debug!(
        issuer = %shown(&issuer),
        "no protected-resource metadata: 2025-03-26 discovery"
    );
    Ok(Discovered {
        resource: canonical_resource(endpoint),
        resource_metadata: None,
        issuer: server.issuer.clone(),
        server,
        legacy: true,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn au15_canonical_resource_and_matching() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert_eq!(
            canonical_resource(&u("HTTPS://MCP.Example.com/mcp/#x")),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(
            canonical_resource(&u("https://mcp.example.com")),
            "https://mcp.example.com"
        );
        let ep = u("https://ex.com/public/mcp");
        assert!(resource_matches(&ep, "https://ex.com/public/mcp"));
        assert!(resource_matches(&ep, "https://ex.com/public"));
        assert!(resource_matches(&ep, "https://ex.com"));
        assert!(resource_matches(&ep, "https://ex.com/"));
        assert!(!resource_matches(&ep, "https://ex.com/pub"));
        assert!(!resource_matches(
            &ep,
            "https://evil.example.com/public/mcp"
        ));
        assert!(!resource_matches(&ep, "http://ex.com/public/mcp"));
        assert!(!resource_matches(&ep, "https://ex.com/public/mcp/deeper"));
    }
}
