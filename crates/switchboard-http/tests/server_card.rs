//! The server card (SEP-2127, experimental; `HttpConfig::with_server_card`) over HTTP on
//! 127.0.0.1: `<endpoint>/server-card` is the card built from the server's own metadata
//! (`Server::server_card`), `/.well-known/mcp/catalog.json` names it, both public (CORS `*`),
//! the card follows a tool added at run time, and neither is served unless configured.
#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use serde_json::{Value, json};
use support::*;
use switchboard_http::HttpConfig;
use switchboard_server::SERVER_CARD_SCHEMA;
use switchboard_types::tools::{CallToolResult, Tool};

fn get(addr: std::net::SocketAddr, path: &str) -> Request<Full<Bytes>> {
    Request::get(path)
        .header("host", addr.to_string())
        .body(Full::new(Bytes::new()))
        .unwrap()
}

async fn get_json(addr: std::net::SocketAddr, path: &str) -> (http::HeaderMap, Value) {
    let resp = send(addr, get(addr, path)).await;
    assert_eq!(resp.status(), StatusCode::OK, "{path}");
    let headers = resp.headers().clone();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (headers, serde_json::from_slice(&body).unwrap())
}

#[tokio::test]
async fn the_server_card_and_the_catalog_are_served_from_the_servers_own_metadata() {
    let server = test_server();
    let card_of = server.clone();
    let config = HttpConfig::default().with_server_card(Arc::new(move || {
        card_of.server_card(Some("http://127.0.0.1/mcp"))
    }));
    let live = live(&server, config).await;

    let (headers, card) = get_json(live.addr, "/mcp/server-card").await;
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["access-control-allow-origin"], "*");
    assert_eq!(card["$schema"], SERVER_CARD_SCHEMA);
    assert_eq!(card["name"], "http-test");
    assert_eq!(
        card["capabilities"],
        serde_json::to_value(server.capabilities()).unwrap()
    );
    assert_eq!(card["remotes"][0]["type"], "streamable-http");
    let versions = card["remotes"][0]["supportedProtocolVersions"]
        .as_array()
        .unwrap();
    assert!(versions.contains(&json!("2025-11-25")), "{versions:?}");
    let names: Vec<&str> = card["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"reconnect"),
        "{names:?}"
    );
    let reconnect = card["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "reconnect")
        .unwrap();
    assert_eq!(reconnect["inputSchema"], json!({"type": "object"}));

    let (headers, catalog) = get_json(live.addr, "/.well-known/mcp/catalog.json").await;
    assert_eq!(headers["access-control-allow-origin"], "*");
    assert_eq!(catalog["servers"][0]["name"], "http-test");
    assert_eq!(catalog["servers"][0]["url"], "/mcp/server-card");

    // Made at each request: a tool the server gains is in the next card.
    server
        .add_tool(Tool::new("late", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("late"))
        })
        .unwrap();
    let (_, card) = get_json(live.addr, "/mcp/server-card").await;
    assert!(
        card["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "late")
    );
    live.stop().await;
}

#[tokio::test]
async fn no_server_card_is_served_unless_configured() {
    let live = live(&test_server(), HttpConfig::default()).await;
    for path in ["/mcp/server-card", "/.well-known/mcp/catalog.json"] {
        assert_eq!(
            send(live.addr, get(live.addr, path)).await.status(),
            StatusCode::NOT_FOUND,
            "{path}"
        );
    }
    live.stop().await;
}
