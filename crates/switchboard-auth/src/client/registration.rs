//! Who the client is to an authorization server (SPEC-NOTES §7.3): credentials the user gave
//! (pre-registered for that server), then a client ID metadata document when the server accepts
//! them and the user named one, then dynamic registration (RFC 7591).

use url::Url;

use crate::metadata::{AuthorizationServerMetadata, ClientMetadata};

use super::error::shorten;
use super::error::{OAuthError, shown};
use super::fetch::Fetcher;
use super::store::{RegisteredClient, TokenAuthMethod};

/// Credentials registered with an authorization server beforehand.
#[derive(Clone, PartialEq, Eq)]
pub struct PreRegistered {
    /// The client id.
    pub client_id: String,
    /// The secret, for a confidential client.
    pub client_secret: Option<String>,
    /// The issuer they belong to; `None`: whichever the resource names.
    pub issuer: Option<String>,
}

impl std::fmt::Debug for PreRegistered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreRegistered")
            .field("client_id", &self.client_id)
            .field("has_secret", &self.client_secret.is_some())
            .field("issuer", &self.issuer)
            .finish()
    }
}

/// What registration needs to know of the client.
#[derive(Debug, Clone)]
pub(crate) struct ClientIdentity<'a> {
    pub(crate) name: &'a str,
    pub(crate) redirect_uri: Option<&'a str>,
    pub(crate) metadata_url: Option<&'a str>,
    pub(crate) preregistered: Option<&'a PreRegistered>,
    pub(crate) private_key_jwt: bool,
    pub(crate) client_credentials: bool,
}

/// The method to use with a secret, by what the server supports (Basic when it does not say,
/// RFC 8414 §2).
fn secret_method(md: &AuthorizationServerMetadata) -> TokenAuthMethod {
    match &md.token_endpoint_auth_methods_supported {
        Some(m) if !m.iter().any(|m| m == "client_secret_basic") => {
            if m.iter().any(|m| m == "client_secret_post") {
                TokenAuthMethod::ClientSecretPost
            } else {
                TokenAuthMethod::ClientSecretBasic
            }
        }
        _ => TokenAuthMethod::ClientSecretBasic,
    }
}

/// Identifies the client to `issuer`, registering when needed.
pub(crate) async fn register(
    fetcher: &Fetcher,
    issuer: &str,
    md: &AuthorizationServerMetadata,
    me: &ClientIdentity<'_>,
) -> Result<RegisteredClient, OAuthError> {
    if let Some(pre) = me
        .preregistered
        .filter(|p| p.issuer.as_deref().is_none_or(|i| i == issuer))
    {
        let auth_method = if me.private_key_jwt {
            TokenAuthMethod::PrivateKeyJwt
        } else if pre.client_secret.is_some() {
            secret_method(md)
        } else {
            TokenAuthMethod::None
        };
        return Ok(RegisteredClient {
            client_id: pre.client_id.clone(),
            client_secret: pre.client_secret.clone(),
            auth_method,
            redirect_uri: me.redirect_uri.map(str::to_owned),
        });
    }
    if let Some(url) = me.metadata_url
        && md.client_id_metadata_document_supported == Some(true)
    {
        return Ok(RegisteredClient {
            client_id: url.to_owned(),
            client_secret: None,
            auth_method: if me.private_key_jwt {
                TokenAuthMethod::PrivateKeyJwt
            } else {
                TokenAuthMethod::None
            },
            redirect_uri: me.redirect_uri.map(str::to_owned),
        });
    }
    let Some(endpoint) = md.registration_endpoint.as_deref() else {
        return Err(OAuthError::Registration {
            issuer: issuer.to_owned(),
            why: "it offers no dynamic registration and no client id was given (use \
                  --client-id, or a client ID metadata document URL if it accepts them)"
                .into(),
        });
    };
    dynamic(fetcher, issuer, endpoint, md, me).await
}

/// The OpenID `application_type` a registration carries (`[D26-114]`, SEP-837): `web` for a
/// client whose redirect URI is an `https` URL off loopback (a remote browser application),
/// `native` otherwise (desktop, command line, a loopback or private-scheme redirect, or none).
pub(crate) fn application_type(redirect_uri: Option<&str>) -> &'static str {
    let web = redirect_uri
        .and_then(|r| Url::parse(r).ok())
        .is_some_and(|u| {
            u.scheme() == "https"
                && !matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"))
        });
    if web { "web" } else { "native" }
}

/// RFC 7591 dynamic registration.
async fn dynamic(
    fetcher: &Fetcher,
    issuer: &str,
    endpoint: &str,
    md: &AuthorizationServerMetadata,
    me: &ClientIdentity<'_>,
) -> Result<RegisteredClient, OAuthError> {
    let fail = |why: String| OAuthError::Registration {
        issuer: issuer.to_owned(),
        why,
    };
    let url = Url::parse(endpoint).map_err(|e| fail(format!("bad registration endpoint: {e}")))?;
    let supported = md.token_endpoint_auth_methods_supported.as_deref();
    let asked = if me.client_credentials {
        secret_method(md)
    } else if supported.is_none_or(|m| m.iter().any(|m| m == "none")) {
        TokenAuthMethod::None
    } else {
        secret_method(md)
    };
    let mut grant_types = Vec::new();
    if me.client_credentials {
        grant_types.push("client_credentials".to_owned());
    } else {
        grant_types.push("authorization_code".to_owned());
        grant_types.push("refresh_token".to_owned());
    }
    let body = ClientMetadata {
        client_name: Some(me.name.to_owned()),
        redirect_uris: me.redirect_uri.map(str::to_owned).into_iter().collect(),
        grant_types: Some(grant_types),
        response_types: (!me.client_credentials).then(|| vec!["code".to_owned()]),
        token_endpoint_auth_method: Some(asked.as_str().to_owned()),
        // No `scope`: an authorization server may hold the client to the scopes it registered
        // with, and step-up asks for more later.
        ..Default::default()
    };
    let mut body = serde_json::to_value(&body).map_err(|e| fail(e.to_string()))?;
    if let Some(obj) = body.as_object_mut() {
        obj.insert(
            "application_type".into(),
            application_type(me.redirect_uri).into(),
        );
    }
    let answer = fetcher.post_json(&url, &body).await?;
    if !answer.status.is_success() {
        let detail = serde_json::from_slice::<serde_json::Value>(&answer.body)
            .ok()
            .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(shorten))
            .unwrap_or_default();
        return Err(fail(format!(
            "{} answered HTTP {} {detail}",
            shown(endpoint),
            answer.status.as_u16()
        )));
    }
    let got: ClientMetadata = answer.json(&url)?;
    let client_id = got
        .client_id
        .ok_or_else(|| fail("the registration answer has no client_id".into()))?;
    let client_secret = got
        .extra
        .get("client_secret")
        .and_then(|s| s.as_str())
        .map(str::to_owned);
    let auth_method = match got
        .token_endpoint_auth_method
        .as_deref()
        .and_then(TokenAuthMethod::parse)
    {
        Some(m) => m,
        None if client_secret.is_some() && asked == TokenAuthMethod::None => secret_method(md),
        None => asked,
    };
    let auth_method = if auth_method != TokenAuthMethod::None && client_secret.is_none() {
        // A method needing a secret without one cannot work; fall back to a public client.
        TokenAuthMethod::None
    } else {
        auth_method
    };
    Ok(RegisteredClient {
        client_id,
        client_secret,
        auth_method,
        redirect_uri: me.redirect_uri.map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::application_type;

    #[test]
    fn d26_114_application_type_native_unless_a_remote_https_redirect() {
        assert_eq!(
            application_type(Some("http://127.0.0.1:8123/callback")),
            "native"
        );
        assert_eq!(
            application_type(Some("http://localhost:3000/callback")),
            "native"
        );
        assert_eq!(application_type(Some("com.example.app:/cb")), "native");
        assert_eq!(application_type(None), "native");
        assert_eq!(application_type(Some("https://app.example.com/cb")), "web");
    }
}
