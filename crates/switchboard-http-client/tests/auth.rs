//! The authorization hook (`auth::AuthProvider`): the Bearer token on every request of both
//! eras (`[AU-18]`), a 401 answered by the provider and the request sent again once (`[AU-6]`),
//! a 403 `insufficient_scope` stepped up while the provider agrees (`[AU-7]`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use support::connect_authorized;
use support::raw::{RawRequest, Reply, raw};
use switchboard_client::{Client, EraMode};
use switchboard_http_client::{AuthFuture, AuthProvider};
use switchboard_http_client::{HttpClientConfig, HttpClientTransport};
use switchboard_types::lifecycle::Implementation;

/// Hands out `t0`, then `t1`, `t2` ... one per authorization; counts the calls.
#[derive(Debug, Default)]
struct Counting {
    generation: AtomicU32,
    unauthorized: AtomicU32,
    step_ups: AtomicU32,
    /// Step-ups allowed.
    max_step_ups: u32,
    challenges: Mutex<Vec<String>>,
}

impl AuthProvider for Counting {
    fn token(&self) -> AuthFuture<'_, Option<String>> {
        let g = self.generation.load(Ordering::SeqCst);
        Box::pin(async move { Ok(Some(format!("t{g}"))) })
    }
    fn unauthorized<'a>(
        &'a self,
        www_authenticate: Option<&'a str>,
        _sent: Option<&'a str>,
    ) -> AuthFuture<'a, ()> {
        Box::pin(async move {
            self.unauthorized.fetch_add(1, Ordering::SeqCst);
            self.challenges
                .lock()
                .unwrap()
                .push(www_authenticate.unwrap_or("").to_owned());
            self.generation.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
    }
    fn insufficient_scope<'a>(
        &'a self,
        _www_authenticate: &'a str,
        _sent: Option<&'a str>,
    ) -> AuthFuture<'a, ()> {
        Box::pin(async move {
            let n = self.step_ups.fetch_add(1, Ordering::SeqCst);
            if n >= self.max_step_ups {
                return Err("step-up exhausted".into());
            }
            self.generation.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
    }
}

fn body(r: &RawRequest) -> Value {
    serde_json::from_str(&r.body).unwrap_or(Value::Null)
}

const CHALLENGE: &str = "www-authenticate: Bearer resource_metadata=\"http://x/.well-known/oauth-protected-resource/mcp\"\r\n";

/// A 2025 server (or a modern one) that wants token `t1` on everything, and `t2` or better
/// for `tools/call` (403 `insufficient_scope` otherwise).
fn server(modern: bool) -> impl Fn(&RawRequest) -> Reply + Send + Sync + 'static {
    move |r: &RawRequest| {
        let token = r.header("authorization").unwrap_or("");
        let generation: u32 = token
            .strip_prefix("Bearer t")
            .and_then(|g| g.parse().ok())
            .unwrap_or(0);
        if generation < 1 {
            return Reply::json("401 Unauthorized", CHALLENGE, "");
        }
        let b = body(r);
        if r.method == "GET" {
            return Reply::json("405 Method Not Allowed", "", "");
        }
        if r.method == "DELETE" {
            return Reply::json("200 OK", "", "");
        }
        let id = b["id"].clone();
        let result = match b["method"].as_str() {
            Some("server/discover") if modern => json!({"resultType": "complete",
                "supportedVersions": ["2026-07-28"], "ttlMs": 0, "cacheScope": "private",
                "capabilities": {"tools": {}}}),
            Some("server/discover") => {
                let e =
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}});
                return Reply::json("200 OK", "", &e.to_string());
            }
            Some("initialize") => {
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "s", "version": "1"}})
            }
            Some("tools/list") => {
                json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})
            }
            Some("tools/call") if generation < 2 => {
                return Reply::json(
                    "403 Forbidden",
                    "www-authenticate: Bearer error=\"insufficient_scope\", scope=\"mcp:write\"\r\n",
                    "",
                );
            }
            Some("tools/call") => json!({"content": []}),
            _ => return Reply::json("202 Accepted", "", ""),
        };
        let extra = if modern {
            ""
        } else {
            "mcp-session-id: s-1\r\n"
        };
        let text = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        Reply::json("200 OK", extra, &text)
    }
}

async fn run(modern: bool) {
    let server = raw(server(modern)).await;
    let provider = Arc::new(Counting {
        max_step_ups: 3,
        ..Counting::default()
    });
    let config = HttpClientConfig::default().with_auth(provider.clone());
    let transport = HttpClientTransport::connect(&server.url, config).unwrap();
    let mode = if modern {
        EraMode::Auto
    } else {
        EraMode::Legacy
    };
    let session = Client::builder(Implementation::new("auth", "1"))
        .era(mode)
        .build()
        .connect(transport)
        .await
        .unwrap();
    session.list_tools().await.unwrap();
    session.call_tool("t", json!({})).await.unwrap();
    session.close();
    tokio::time::timeout(Duration::from_secs(5), session.closed())
        .await
        .unwrap();
    if !modern {
        // A 2025 session's last requests: its GET stream and the close's DELETE.
        support::eventually("the GET and the DELETE", || {
            server.count("GET") > 0 && server.count("DELETE") == 1
        })
        .await;
    }
    assert_eq!(provider.unauthorized.load(Ordering::SeqCst), 1, "one 401");
    assert!(provider.challenges.lock().unwrap()[0].contains("resource_metadata"));
    assert_eq!(provider.step_ups.load(Ordering::SeqCst), 1, "one step-up");
    let seen = server.seen();
    // AU-18: after the first (unauthenticated, answered 401) request, every request carries
    // the Bearer token, in the header only (AU-19).
    for r in &seen[1..] {
        assert!(
            r.header("authorization")
                .is_some_and(|a| a.starts_with("Bearer t")),
            "{} {} without a token",
            r.method,
            r.path
        );
        assert!(!r.path.contains('?'), "AU-19: nothing in the query");
    }
    let calls: Vec<&str> = seen
        .iter()
        .filter(|r| body(r)["method"] == "tools/call")
        .map(|r| r.header("authorization").unwrap())
        .collect();
    assert_eq!(
        calls,
        ["Bearer t1", "Bearer t2"],
        "403, stepped up, sent again"
    );
    if !modern {
        assert!(
            seen.iter().any(|r| r.method == "DELETE"),
            "DELETE carries it too"
        );
        assert!(
            seen.iter().any(|r| r.method == "GET"),
            "the GET stream carries it too"
        );
    }
}

#[tokio::test]
async fn au18_au6_bearer_on_every_request_401_retried_403_stepped_up_2025() {
    run(false).await;
}

#[tokio::test]
async fn au18_au6_bearer_on_every_request_401_retried_403_stepped_up_2026() {
    run(true).await;
}

#[tokio::test]
async fn au7_a_provider_that_refuses_step_up_leaves_the_403_to_the_caller() {
    let server = raw(server(false)).await;
    let provider = Arc::new(Counting::default());
    let session = connect_authorized(&server.url, provider.clone(), EraMode::Legacy)
        .await
        .unwrap();
    let e = session.call_tool("t", json!({})).await.unwrap_err();
    assert!(e.to_string().contains("403"), "{e}");
    assert_eq!(provider.step_ups.load(Ordering::SeqCst), 1);
}
