//! End to end against a real authorization server (`oidc-provider`, started by
//! `interop/oauth/e2e.sh`, which passes its issuer in `SWITCHBOARD_OAUTH_ISSUER`): our OAuth
//! client, headless, as the transport's auth provider, in front of a stub resource server that
//! publishes its metadata and records the `Authorization` header of every request.
//!
//! Ignored in plain `cargo test` (it needs the Node peer); `interop/oauth/e2e.sh` runs it with
//! `--ignored`, and without the issuer it fails rather than skips.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use support::raw::{RawRequest, Reply, serve};
use switchboard_auth::client::{
    FileTokenStore, GrantFlow, HeadlessUserAgent, OAuthClient, OAuthConfig, PreRegistered,
    TokenStore, UrlPolicy,
};
use switchboard_client::{Client, EraMode};
use switchboard_http_client::{HttpClientConfig, HttpClientTransport};
use switchboard_types::lifecycle::Implementation;

fn issuer() -> String {
    std::env::var("SWITCHBOARD_OAUTH_ISSUER")
        .expect("SWITCHBOARD_OAUTH_ISSUER is not set: run interop/oauth/e2e.sh")
}

/// The claims and header of a JWT, unverified (the resource server's validator checks
/// signatures; here we look at what the authorization server issued).
fn jwt_parts(token: &str) -> (Value, Value) {
    let mut parts = token.split('.');
    let mut next = || {
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(parts.next().expect("a JWT part"))
            .expect("base64url");
        serde_json::from_slice::<Value>(&raw).expect("JSON")
    };
    let header = next();
    let claims = next();
    (header, claims)
}

/// The stub resource server: metadata at the path-specific well-known URL, 401 with a
/// challenge without a token, 403 `insufficient_scope` on `tools/call` unless the token holds
/// `mcp:write`, and a minimal MCP server otherwise.
async fn resource_server(issuer: String) -> support::raw::RawServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    serve(listener, move |r: &RawRequest| {
        let resource = format!("{base}/mcp");
        if r.path == "/.well-known/oauth-protected-resource/mcp" {
            let prm = json!({"resource": resource, "authorization_servers": [issuer],
                "scopes_supported": ["mcp:basic"], "bearer_methods_supported": ["header"]});
            return Reply::json("200 OK", "", &prm.to_string());
        }
        let challenge = format!(
            "www-authenticate: Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:basic\"\r\n"
        );
        let Some(token) = r
            .header("authorization")
            .and_then(|a| a.strip_prefix("Bearer "))
        else {
            return Reply::json("401 Unauthorized", &challenge, "");
        };
        let (_, claims) = jwt_parts(token);
        if claims["aud"] != resource.as_str() {
            return Reply::json("401 Unauthorized", &challenge, "");
        }
        let scopes = claims["scope"].as_str().unwrap_or("").to_owned();
        let b: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
        if r.method != "POST" {
            return Reply::json("405 Method Not Allowed", "", "");
        }
        let id = b["id"].clone();
        let result = match b["method"].as_str() {
            Some("initialize") => json!({"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}}, "serverInfo": {"name": "rs", "version": "1"}}),
            Some("tools/list") => {
                json!({"tools": [{"name": "write", "inputSchema": {"type": "object"}}]})
            }
            Some("tools/call") if !scopes.split(' ').any(|s| s == "mcp:write") => {
                return Reply::json(
                    "403 Forbidden",
                    "www-authenticate: Bearer error=\"insufficient_scope\", scope=\"mcp:write\"\r\n",
                    "",
                );
            }
            Some("tools/call") => json!({"content": [{"type": "text", "text": "written"}]}),
            _ => return Reply::json("202 Accepted", "", ""),
        };
        let text = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        Reply::json("200 OK", "", &text)
    })
}

#[tokio::test]
#[ignore = "needs the oidc-provider peer: interop/oauth/e2e.sh"]
async fn au13_au15_au18_authorization_code_refresh_and_step_up_against_oidc_provider() {
    let issuer = issuer();
    let rs = resource_server(issuer.clone()).await;
    let dir = std::env::temp_dir().join(format!("sb-oauth-e2e-{}", std::process::id()));
    let store = Arc::new(FileTokenStore::new(dir.join("tokens.json")));
    let policy = UrlPolicy::loopback_for_development();
    let config = OAuthConfig::new(url::Url::parse(&rs.url).unwrap()).with_policy(policy);
    let oauth = Arc::new(
        OAuthClient::new(
            config,
            store.clone(),
            Arc::new(HeadlessUserAgent::new(policy).unwrap()),
        )
        .unwrap(),
    );
    let transport = HttpClientTransport::connect(
        &rs.url,
        HttpClientConfig::default().with_auth(oauth.clone()),
    )
    .unwrap();
    let session = Client::builder(Implementation::new("e2e", "1"))
        .era(EraMode::Legacy)
        .build()
        .connect(transport)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}; auth: {:?}", oauth.last_error()));
    session.list_tools().await.unwrap();
    // The call needs mcp:write: 403, step-up (asking for the union), the call again.
    session
        .call_tool("write", json!({}))
        .await
        .unwrap_or_else(|e| panic!("call: {e}; auth: {:?}", oauth.last_error()));
    session.close();
    let _ = tokio::time::timeout(Duration::from_secs(5), session.closed()).await;

    let seen = rs.seen();
    let tokens: Vec<&str> = seen
        .iter()
        .filter(|r| r.path == "/mcp")
        .filter_map(|r| r.header("authorization"))
        .filter_map(|a| a.strip_prefix("Bearer "))
        .collect();
    assert!(tokens.len() >= 4, "{} authorized requests", tokens.len());
    let (header, claims) = jwt_parts(tokens[0]);
    assert_eq!(header["typ"], "at+jwt", "RFC 9068 access token");
    assert_eq!(
        claims["aud"],
        rs.url.as_str(),
        "AU-15: bound to the resource"
    );
    assert_eq!(claims["iss"], issuer.as_str());
    let (_, last) = jwt_parts(tokens.last().unwrap());
    let scopes = last["scope"].as_str().unwrap();
    assert!(
        scopes.contains("mcp:basic") && scopes.contains("mcp:write"),
        "step-up kept the held scope and added the challenged one: {scopes}"
    );

    // AU-25: the grant is in the file, mode 0600, with a refresh token; a refresh rotates it.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
    }
    let key = switchboard_auth::client::canonical_resource(&url::Url::parse(&rs.url).unwrap());
    let mut grant = store.load(&key).unwrap().expect("a stored grant");
    let before = grant.tokens.clone().unwrap();
    let old_refresh = before.refresh_token.clone().expect("a refresh token");
    grant.tokens.as_mut().unwrap().expires_at = Some(0);
    store.save(&key, &grant).unwrap();
    let fresh = oauth.access_token().await.unwrap().unwrap();
    assert_ne!(fresh, before.access_token);
    let after = store.load(&key).unwrap().unwrap().tokens.unwrap();
    assert_ne!(
        after.refresh_token.as_deref(),
        Some(old_refresh.as_str()),
        "rotated"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
#[ignore = "needs the oidc-provider peer: interop/oauth/e2e.sh"]
async fn client_credentials_and_client_id_metadata_document_against_oidc_provider() {
    let issuer = issuer();
    let rs = resource_server(issuer.clone()).await;
    let endpoint = url::Url::parse(&rs.url).unwrap();
    let policy = UrlPolicy::loopback_for_development();

    let machine = OAuthConfig::new(endpoint.clone())
        .with_policy(policy)
        .with_flow(GrantFlow::ClientCredentials)
        .with_preregistered(PreRegistered {
            client_id: "switchboard-machine".into(),
            client_secret: Some("switchboard-machine-secret".into()),
            issuer: Some(issuer.clone()),
        });
    let c = OAuthClient::headless(machine).unwrap();
    c.unauthorized(None, None).await.unwrap();
    let token = c.access_token().await.unwrap().unwrap();
    let (header, claims) = jwt_parts(&token);
    assert_eq!(header["typ"], "at+jwt");
    assert_eq!(claims["aud"], rs.url.as_str());
    assert_eq!(claims["client_id"], "switchboard-machine");

    let cimd = "https://client.switchboard.test/oauth/client.json";
    let config = OAuthConfig::new(endpoint)
        .with_policy(policy)
        .with_client_metadata_url(cimd);
    let c = OAuthClient::headless(config).unwrap();
    c.unauthorized(None, None)
        .await
        .unwrap_or_else(|e| panic!("CIMD authorization: {e}"));
    let token = c.access_token().await.unwrap().unwrap();
    let (_, claims) = jwt_parts(&token);
    assert_eq!(
        claims["client_id"], cimd,
        "the metadata document URL is the client id"
    );
    assert_eq!(claims["aud"], rs.url.as_str());
}
