//! DPoP through the transport (RFC 9449, SEP-1932): the provider's scheme and a proof made for
//! each HTTP request (POST, the GET stream, `DELETE`, every retry), `DPoP-Nonce` handed to the
//! provider, and a 401 `use_dpop_nonce` answered by exactly one more try, never by a new
//! authorization.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::connect_authorized;
use support::raw::{RawRequest, Reply, raw};
use switchboard_client::{Client, EraMode};
use switchboard_http_client::{AuthFuture, AuthProvider, RequestAuth};
use switchboard_http_client::{HttpClientConfig, HttpClientTransport};
use switchboard_types::lifecycle::Implementation;

/// A DPoP provider whose "proof" names the request it was made for, a serial number and the
/// nonce it carries, so the server can check each one is fresh and fits the request.
#[derive(Debug, Default)]
struct Proving {
    serial: AtomicU32,
    unauthorized: AtomicU32,
    nonce: Mutex<Option<String>>,
}

impl AuthProvider for Proving {
    fn token(&self) -> AuthFuture<'_, Option<String>> {
        Box::pin(async { Ok(Some("bound".to_owned())) })
    }
    fn unauthorized<'a>(&'a self, _: Option<&'a str>, _: Option<&'a str>) -> AuthFuture<'a, ()> {
        Box::pin(async move {
            self.unauthorized.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
    }
    fn insufficient_scope<'a>(&'a self, _: &'a str, _: Option<&'a str>) -> AuthFuture<'a, ()> {
        Box::pin(async { Err("no".into()) })
    }
    fn request_auth<'a>(
        &'a self,
        method: &'a http::Method,
        url: &'a reqwest::Url,
    ) -> AuthFuture<'a, RequestAuth> {
        Box::pin(async move {
            let n = self.serial.fetch_add(1, Ordering::SeqCst);
            let nonce = self.nonce.lock().unwrap().clone().unwrap_or_default();
            let proof = format!("{n}|{method}|{}|{nonce}", url.path());
            Ok(RequestAuth::dpop("bound".to_owned(), proof))
        })
    }
    fn dpop_nonce(&self, _url: &reqwest::Url, nonce: &str) {
        *self.nonce.lock().unwrap() = Some(nonce.to_owned());
    }
}

const NONCE_CHALLENGE: &str =
    "www-authenticate: DPoP error=\"use_dpop_nonce\"\r\ndpop-nonce: n-1\r\n";

/// A 2025 server that wants the DPoP scheme and a proof carrying nonce `n-1`; with
/// `rotate`, it asks for a new nonce on every request (a server that never accepts).
fn server(rotate: bool) -> impl Fn(&RawRequest) -> Reply + Send + Sync + 'static {
    move |r: &RawRequest| {
        let proof = r.header("dpop").unwrap_or("");
        if r.header("authorization") != Some("DPoP bound") || proof.is_empty() {
            return Reply::json("401 Unauthorized", "www-authenticate: DPoP\r\n", "");
        }
        if rotate || !proof.ends_with("|n-1") {
            return Reply::json("401 Unauthorized", NONCE_CHALLENGE, "");
        }
        let b: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
        match (r.method.as_str(), b["method"].as_str()) {
            ("GET", _) => Reply::json("405 Method Not Allowed", "", ""),
            ("DELETE", _) => Reply::json("200 OK", "", ""),
            (_, Some("initialize")) => {
                let result = json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "s", "version": "1"}});
                let text = json!({"jsonrpc": "2.0", "id": b["id"], "result": result}).to_string();
                Reply::json("200 OK", "mcp-session-id: s-1\r\n", &text)
            }
            (_, Some("tools/list")) => {
                let result = json!({"tools": []});
                let text = json!({"jsonrpc": "2.0", "id": b["id"], "result": result}).to_string();
                Reply::json("200 OK", "", &text)
            }
            _ => Reply::json("202 Accepted", "", ""),
        }
    }
}

#[tokio::test]
async fn dpop_a_fresh_proof_per_request_and_one_retry_for_the_resource_nonce() {
    let server = raw(server(false)).await;
    let provider = Arc::new(Proving::default());
    let session = connect_authorized(&server.url, provider.clone(), EraMode::Legacy)
        .await
        .unwrap();
    session.list_tools().await.unwrap();
    session.close();
    let _ = session.closed().await;
    switchboard_test_support::wait::until("the DELETE", || server.count("DELETE") == 1).await;
    let seen = server.seen();
    assert_eq!(
        provider.unauthorized.load(Ordering::SeqCst),
        0,
        "a nonce challenge is no reason to authorize again"
    );
    // The first request met the nonce challenge and went once more with the nonce.
    assert!(
        seen[0].header("dpop").unwrap().ends_with('|'),
        "no nonce yet"
    );
    assert!(seen[1].header("dpop").unwrap().ends_with("|n-1"));
    let mut proofs: Vec<&str> = seen.iter().map(|r| r.header("dpop").unwrap()).collect();
    for r in &seen {
        let p = r.header("dpop").unwrap();
        assert!(
            p.contains(&format!("|{}|{}|", r.method, r.path)),
            "{p} was not made for {} {}",
            r.method,
            r.path
        );
        assert_eq!(r.header("authorization"), Some("DPoP bound"));
    }
    let n = proofs.len();
    proofs.sort_unstable();
    proofs.dedup();
    assert_eq!(proofs.len(), n, "no proof is sent twice");
    assert!(seen.iter().any(|r| r.method == "GET"), "the GET stream");
}

#[tokio::test]
async fn dpop_a_server_that_keeps_asking_for_nonces_gets_one_retry_only() {
    let server = raw(server(true)).await;
    let provider = Arc::new(Proving::default());
    let e = connect_authorized(&server.url, provider.clone(), EraMode::Legacy)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("401"), "{e}");
    assert_eq!(provider.unauthorized.load(Ordering::SeqCst), 0);
    let initializes = server
        .seen()
        .iter()
        .filter(|r| r.body.contains("\"initialize\""))
        .count();
    assert_eq!(initializes, 2, "the request and exactly one retry");
}

#[tokio::test]
async fn dpop_a_followed_redirect_gets_a_proof_made_for_its_target() {
    let inner = server(false);
    let server = raw(move |r: &RawRequest| {
        if r.path == "/old" {
            return Reply::json("307 Temporary Redirect", "location: /mcp\r\n", "");
        }
        inner(r)
    })
    .await;
    let provider = Arc::new(Proving::default());
    let config = HttpClientConfig::default().with_auth(provider.clone());
    let old = server.url.replace("/mcp", "/old");
    let transport = HttpClientTransport::connect(&old, config).unwrap();
    let session = Client::builder(Implementation::new("dpop", "1"))
        .era(EraMode::Legacy)
        .build()
        .connect(transport)
        .await
        .unwrap();
    session.list_tools().await.unwrap();
    let seen = server.seen();
    let redirected: Vec<_> = seen.iter().filter(|r| r.path == "/mcp").collect();
    assert!(!redirected.is_empty());
    for r in redirected {
        let p = r.header("dpop").unwrap();
        assert!(
            p.contains(&format!("|{}|/mcp|", r.method)),
            "{p}: the proof of a redirected request names its target"
        );
    }
    session.close();
}
