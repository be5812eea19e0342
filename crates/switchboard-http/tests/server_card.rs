//! The server card (SEP-2127, experimental; `HttpConfig::with_server_card`) over HTTP on
//! 127.0.0.1: `<endpoint>/server-card` is the card built from the server's own metadata
//! (`Server::server_card`), valid against the draft's schema (vendored in `server-card/`) and
//! without primitives; `/.well-known/ai-catalog.json` (and `/.well-known/mcp/catalog.json`) is an
//! AI Catalog naming it; all public (CORS `*`), none served unless configured.
#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use serde_json::{Value, json};
use support::*;
use switchboard_http::HttpConfig;
use switchboard_server::{SERVER_CARD_SCHEMA, Server};

/// The schema's `maxLength` of a card's description.
const SERVER_CARD_DESCRIPTION_CHARS: usize = 100;
use switchboard_types::lifecycle::Implementation;
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

/// SEP-2127's `ServerCard` schema, from the vendored copy of the draft's `schema.json`.
fn card_schema() -> jsonschema::Validator {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/server-card/server.schema.json"
    );
    let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    schema["$ref"] = json!("#/$defs/ServerCard");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}

fn assert_valid(card: &Value) {
    let problems: Vec<String> = card_schema()
        .iter_errors(card)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(problems.is_empty(), "{problems:?}\n{card:#}");
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
    assert_eq!(headers["content-type"], "application/mcp-server-card+json");
    assert_eq!(headers["access-control-allow-origin"], "*");
    assert_valid(&card);
    assert_eq!(card["$schema"], SERVER_CARD_SCHEMA);
    // `http-test` is no card name (reverse DNS, one `/`): the card says `local/http-test`.
    assert_eq!(card["name"], "local/http-test");
    assert_eq!(card["remotes"][0]["type"], "streamable-http");
    assert_eq!(card["remotes"][0]["url"], "http://127.0.0.1/mcp");
    let versions = card["remotes"][0]["supportedProtocolVersions"]
        .as_array()
        .unwrap();
    assert!(versions.contains(&json!("2025-11-25")), "{versions:?}");
    assert!(versions.contains(&json!("2026-07-28")), "{versions:?}");
    // The draft: a card does not enumerate primitives nor capabilities (the list operations
    // do, for the clients allowed to see them).
    for absent in [
        "tools",
        "prompts",
        "resources",
        "resourceTemplates",
        "capabilities",
    ] {
        assert!(card.get(absent).is_none(), "{absent} in {card:#}");
    }
    server
        .add_tool(Tool::new("late", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("late"))
        })
        .unwrap();
    let (_, again) = get_json(live.addr, "/mcp/server-card").await;
    assert!(!again.to_string().contains("late"), "{again:#}");

    for path in [
        "/.well-known/ai-catalog.json",
        "/.well-known/mcp/catalog.json",
    ] {
        let (headers, catalog) = get_json(live.addr, path).await;
        assert_eq!(
            headers["content-type"], "application/ai-catalog+json",
            "{path}"
        );
        assert_eq!(headers["access-control-allow-origin"], "*");
        assert_eq!(
            catalog,
            json!({
                "specVersion": "1.0",
                "entries": [{
                    "identifier": "urn:air:local:mcp:http-test",
                    "type": "application/mcp-server-card+json",
                    "url": "http://127.0.0.1/mcp/server-card",
                }],
            }),
            "{path}"
        );
    }
    live.stop().await;
}

#[test]
fn a_card_name_and_a_description_within_the_schema_come_from_any_metadata() {
    // A reverse-DNS serverInfo name is the card's name; a description past 100 characters is
    // cut; without description, instructions or title, one is made.
    let mut info = Implementation::new("io.github.someone/weather", "2.1.0");
    info.description = Some("d".repeat(SERVER_CARD_DESCRIPTION_CHARS + 50));
    let server = Server::builder(info).build().unwrap();
    let card = server.server_card(None);
    assert_valid(&card);
    assert_eq!(card["name"], "io.github.someone/weather");
    assert_eq!(
        card["description"].as_str().unwrap().chars().count(),
        SERVER_CARD_DESCRIPTION_CHARS
    );
    assert!(card.get("remotes").is_none());

    let bare = Server::builder(Implementation::new("my server!", "0.1.0"))
        .build()
        .unwrap();
    let card = bare.server_card(Some("https://example.com/mcp"));
    assert_valid(&card);
    assert_eq!(card["name"], "local/my-server-");
    assert_eq!(card["description"], "MCP server my server! 0.1.0");
    // A serverInfo name past the schema's 200 characters still makes a valid card name.
    let long = Server::builder(Implementation::new("n".repeat(300), "0.1.0"))
        .build()
        .unwrap();
    let card = long.server_card(None);
    assert_valid(&card);
    assert!(card["name"].as_str().unwrap().len() <= 200);
    let named = bare.server_card_named("com.example/weather", None);
    assert_valid(&named);
    assert_eq!(named["name"], "com.example/weather");
}

#[test]
fn the_vendored_schema_refuses_what_the_draft_refuses() {
    // The schema really checks: a card without a description, with a date-versioned $schema, or
    // with a name that is not reverse DNS with one `/`, is refused.
    let schema = card_schema();
    let good = json!({
        "$schema": SERVER_CARD_SCHEMA,
        "name": "example-org/minimal",
        "version": "1.0.0",
        "description": "Smallest valid Server Card.",
    });
    assert!(schema.is_valid(&good));
    let mut no_description = good.clone();
    no_description
        .as_object_mut()
        .unwrap()
        .remove("description");
    let mut dated = good.clone();
    dated["$schema"] =
        json!("https://static.modelcontextprotocol.io/schemas/2025-11-25/server-card.schema.json");
    let mut bad_name = good.clone();
    bad_name["name"] = json!("no-slash");
    for bad in [no_description, dated, bad_name] {
        assert!(!schema.is_valid(&bad), "{bad:#}");
    }
}

#[tokio::test]
async fn no_server_card_is_served_unless_configured() {
    let live = live(&test_server(), HttpConfig::default()).await;
    for path in [
        "/mcp/server-card",
        "/.well-known/ai-catalog.json",
        "/.well-known/mcp/catalog.json",
    ] {
        assert_eq!(
            send(live.addr, get(live.addr, path)).await.status(),
            StatusCode::NOT_FOUND,
            "{path}"
        );
    }
    live.stop().await;
}
