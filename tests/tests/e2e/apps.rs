//! MCP Apps (`io.modelcontextprotocol/ui`, docs/APPS.md) on the wire, both eras, in memory:
//! every frame the server emits is checked against the schema of the revision spoken (tests
//! named after the AP tags they cover).

use serde_json::{Value, json};
use switchboard::client::Client;
use switchboard::jsonrpc::memory;
use switchboard::server::{AppView, Server};
use switchboard::types::apps::{
    APP_MIME_TYPE, UI_EXTENSION, UiCsp, UiPermissions, UiResourceMeta, UiToolMeta, host_settings,
};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard_tests::RawPeer;

const VIEW: &str = "ui://board/view";
const HTML: &str = "<!doctype html><html><body><ul id=\"items\"></ul></body></html>";

fn server() -> Server {
    let obj = json!({"type": "object"});
    let meta = UiResourceMeta {
        csp: Some(UiCsp {
            connect_domains: Some(vec!["https://api.example.com".into()]),
            ..UiCsp::none()
        }),
        permissions: Some(UiPermissions {
            clipboard_write: Some(Default::default()),
            ..Default::default()
        }),
        prefers_border: Some(true),
        ..Default::default()
    };
    Server::builder(Implementation::new("board", "1"))
        .app(
            AppView::new(VIEW, HTML)
                .title("Board")
                .description("The board's items")
                .meta(meta),
        )
        .tool(
            Tool::new("show_board", obj.clone()).with_ui(UiToolMeta::linked(VIEW)),
            |_| async { Ok(CallToolResult::text("2 items: a, b")) },
        )
        .tool(
            Tool::new("refresh_board", obj.clone()).with_ui(UiToolMeta::app_only(VIEW)),
            |_| async { Ok(CallToolResult::text("refreshed")) },
        )
        .tool(Tool::new("plain", obj), |_| async {
            Ok(CallToolResult::text("plain"))
        })
        .build()
        .expect("server")
}

fn with_apps() -> Value {
    json!({"extensions": {UI_EXTENSION: host_settings()}})
}

/// A 2025 session whose `initialize` declared `capabilities`.
async fn legacy(s: &Server, version: &str, capabilities: Value) -> (RawPeer, Value) {
    let (a, b) = memory::pair();
    s.serve(b).expect("serve");
    let mut c = RawPeer::new(a, version);
    let init = c.handshake(version, capabilities).await;
    (c, init)
}

/// A modern connection: each request carries `capabilities` in its envelope.
async fn modern(s: &Server) -> RawPeer {
    let (a, b) = memory::pair();
    s.serve(b).expect("serve");
    RawPeer::new(a, "2026-07-28")
}

fn envelope(params: Value, capabilities: &Value) -> Value {
    let mut p = params;
    p["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    p
}

fn names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn tool<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["result"]["tools"]
        .as_array()
        .and_then(|a| a.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("{name} listed: {list}"))
}

/// The server declares the extension in `initialize` (every 2025 revision) and in
/// `server/discover`, whether or not the host declared it.
#[tokio::test]
async fn ap_9_the_extension_is_declared_in_initialize_and_discover() {
    let s = server();
    for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let (_c, init) = legacy(&s, version, json!({})).await;
        assert_eq!(
            init["capabilities"]["extensions"][UI_EXTENSION],
            json!({}),
            "{version}: {init}"
        );
    }
    let mut c = modern(&s).await;
    let r = c
        .request(
            json!(1),
            switchboard::types::methods::SERVER_DISCOVER,
            envelope(json!({}), &json!({})),
        )
        .await;
    assert_eq!(
        r["result"]["capabilities"]["extensions"][UI_EXTENSION],
        json!({}),
        "{r}"
    );
}

/// A host without the extension (none declared, or declared without the app MIME type) sees
/// plain tools and no app-only one, and a call to one is refused: -32602 in a 2025 session,
/// -32021 naming the extension in 2026-07-28 (`[D26-29]`).
#[tokio::test]
async fn ap_8_a_host_without_the_extension_sees_plain_tools_and_cannot_call_app_only_ones() {
    let s = server();
    let no_mime = json!({"extensions": {UI_EXTENSION: {}}});
    for caps in [json!({}), no_mime.clone()] {
        let (mut c, _) = legacy(&s, "2025-11-25", caps).await;
        let list = c.request(json!(1), "tools/list", json!({})).await;
        assert_eq!(names(&list), ["plain", "show_board"], "{list}");
        assert!(tool(&list, "show_board").get("_meta").is_none(), "{list}");
        let r = c
            .request(
                json!(2),
                "tools/call",
                json!({"name": "refresh_board", "arguments": {}}),
            )
            .await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert_eq!(r["error"]["data"]["reason"], "app_only_tool", "{r}");
        let r = c
            .request(
                json!(3),
                "tools/call",
                json!({"name": "show_board", "arguments": {}}),
            )
            .await;
        assert_eq!(r["result"]["content"][0]["text"], "2 items: a, b", "{r}");
    }
    let mut c = modern(&s).await;
    for (i, caps) in [json!({}), no_mime].iter().enumerate() {
        let id = i64::try_from(i).expect("small") * 10;
        let list = c
            .request(json!(id), "tools/list", envelope(json!({}), caps))
            .await;
        assert_eq!(names(&list), ["plain", "show_board"], "{list}");
        let r = c
            .request(
                json!(id + 1),
                "tools/call",
                envelope(json!({"name": "refresh_board", "arguments": {}}), caps),
            )
            .await;
        assert_eq!(r["error"]["code"], -32021, "{r}");
        assert_eq!(
            r["error"]["data"]["requiredCapabilities"]["extensions"][UI_EXTENSION],
            host_settings(),
            "{r}"
        );
    }
}

/// A host with the extension sees every tool with its link, app-only ones included, and may
/// call them (it hides them from its model itself); in both eras.
#[tokio::test]
async fn ap_5_a_host_with_the_extension_sees_the_links_and_the_app_only_tools() {
    let s = server();
    let (mut c, _) = legacy(&s, "2025-11-25", with_apps()).await;
    let list = c.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(names(&list), ["plain", "refresh_board", "show_board"]);
    assert_eq!(
        tool(&list, "show_board")["_meta"]["ui"],
        json!({"resourceUri": VIEW})
    );
    assert_eq!(
        tool(&list, "refresh_board")["_meta"]["ui"],
        json!({"resourceUri": VIEW, "visibility": ["app"]})
    );
    assert!(tool(&list, "plain").get("_meta").is_none());
    let r = c
        .request(
            json!(2),
            "tools/call",
            json!({"name": "refresh_board", "arguments": {}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "refreshed", "{r}");

    let mut c = modern(&s).await;
    let list = c
        .request(json!(1), "tools/list", envelope(json!({}), &with_apps()))
        .await;
    assert_eq!(names(&list), ["plain", "refresh_board", "show_board"]);
    let r = c
        .request(
            json!(2),
            "tools/call",
            envelope(
                json!({"name": "refresh_board", "arguments": {}}),
                &with_apps(),
            ),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "refreshed", "{r}");
}

/// The view is listed and read with the app MIME type, its HTML as text, and `_meta.ui` on
/// the list entry and on the contents alike.
#[tokio::test]
async fn ap_1_ap_2_ap_3_ap_4_the_view_is_listed_and_read_with_its_mime_type_and_metadata() {
    let s = server();
    let expected = json!({
        "csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": []},
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": true
    });
    let (mut c, _) = legacy(&s, "2025-11-25", with_apps()).await;
    let list = c.request(json!(1), "resources/list", json!({})).await;
    let entry = &list["result"]["resources"][0];
    assert_eq!(entry["uri"], VIEW, "{list}");
    assert_eq!(entry["mimeType"], APP_MIME_TYPE);
    assert_eq!(entry["title"], "Board");
    assert_eq!(entry["_meta"]["ui"], expected);
    let read = c
        .request(json!(2), "resources/read", json!({"uri": VIEW}))
        .await;
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["uri"], VIEW, "{read}");
    assert_eq!(contents["mimeType"], APP_MIME_TYPE);
    assert_eq!(contents["text"], HTML);
    assert_eq!(contents["_meta"]["ui"], expected);

    let mut c = modern(&s).await;
    let read = c
        .request(
            json!(1),
            "resources/read",
            envelope(json!({"uri": VIEW}), &with_apps()),
        )
        .await;
    assert_eq!(read["result"]["contents"][0]["mimeType"], APP_MIME_TYPE);
    assert_eq!(read["result"]["contents"][0]["_meta"]["ui"], expected);
}

/// A `ui://` URI that is not a registered view (traversal, encoded or not, or just unknown)
/// reads nothing: the resource-not-found error of each era, never another view's contents.
#[tokio::test]
async fn ap_12_traversal_and_unknown_views_are_refused_cleanly() {
    let s = server();
    let attempts = [
        "ui://board/../view",
        "ui://board/view/..",
        "ui://board/%2e%2e/view",
        "ui://board/view/../../etc/passwd",
        "ui://board/VIEW",
        "ui://board/view/",
        "ui://nope",
    ];
    let (mut c, _) = legacy(&s, "2025-11-25", with_apps()).await;
    for (i, uri) in attempts.iter().enumerate() {
        let r = c
            .request(json!(i), "resources/read", json!({"uri": uri}))
            .await;
        assert_eq!(r["error"]["code"], -32002, "{uri}: {r}");
        assert!(r.get("result").is_none());
    }
    let mut c = modern(&s).await;
    for (i, uri) in attempts.iter().enumerate() {
        let r = c
            .request(
                json!(i),
                "resources/read",
                envelope(json!({"uri": uri}), &with_apps()),
            )
            .await;
        assert_eq!(r["error"]["code"], -32602, "{uri}: {r}");
    }
}

/// Our client declares the extension, reads the view typed, and sees the links typed; the
/// contents' metadata wins over the list entry's, and the entry's is the fallback (`[AP-7]`).
#[tokio::test]
async fn ap_7_the_client_reads_a_view_typed_with_its_metadata() {
    let s = server();
    for era in [
        switchboard::client::EraMode::Legacy,
        switchboard::client::EraMode::Auto,
    ] {
        let (a, b) = memory::pair();
        s.serve(b).expect("serve");
        let host = Client::builder(Implementation::new("host", "1"))
            .apps()
            .era(era)
            .build()
            .connect(a)
            .await
            .expect("connect");
        assert!(host.offers_apps());
        let tools = host.list_tools().await.expect("tools");
        let link = tools
            .iter()
            .find(|t| t.name == "show_board")
            .and_then(|t| t.ui())
            .expect("linked");
        let uri = link.resource_uri.expect("a view");
        let view = host.read_app(&uri).await.expect("the view");
        assert_eq!(view.html, HTML);
        assert_eq!(view.meta.prefers_border, Some(true));
        let csp = view.meta.csp.expect("csp");
        assert_eq!(
            csp.connect_domains,
            Some(vec!["https://api.example.com".to_owned()])
        );
        assert!(
            view.meta
                .permissions
                .expect("permissions")
                .clipboard_write
                .is_some()
        );
        let missing = host.read_app("ui://board/../view").await.unwrap_err();
        assert!(missing.is_resource_not_found(), "{missing}");
        let not_ui = host.read_app("https://example.com/").await.unwrap_err();
        assert!(
            matches!(not_ui, switchboard::client::ClientError::InvalidApp { .. }),
            "{not_ui}"
        );
    }
}

/// A view whose contents carry no `_meta.ui` gets the list entry's; one served under another
/// MIME type is refused by the client (`[AP-2]`, `[AP-7]`).
#[tokio::test]
async fn ap_2_ap_7_the_client_falls_back_to_the_listing_and_refuses_another_mime_type() {
    use switchboard::types::content::{Resource, ResourceContents, TextResourceContents};
    use switchboard::types::meta::Meta;
    use switchboard::types::resources::ReadResourceResult;
    let mut listed_meta = Meta::new();
    listed_meta.0.insert(
        "ui".into(),
        json!({"prefersBorder": false, "domain": "x.example"}),
    );
    let mut bare = Resource::new("ui://raw/bare", "bare").with_mime_type(APP_MIME_TYPE);
    bare.meta = Some(listed_meta);
    let s = Server::builder(Implementation::new("raw", "1"))
        .resource(bare, |read| async move {
            let mut c = TextResourceContents::new(read.uri, "<!doctype html>");
            c.mime_type = Some(APP_MIME_TYPE.into());
            Ok(ReadResourceResult::new(vec![ResourceContents::Text(c)]))
        })
        .resource(
            Resource::new("ui://raw/plain", "plain").with_mime_type("text/html"),
            |read| async move {
                let mut c = TextResourceContents::new(read.uri, "<!doctype html>");
                c.mime_type = Some("text/html".into());
                Ok(ReadResourceResult::new(vec![ResourceContents::Text(c)]))
            },
        )
        .build()
        .expect("server");
    let (a, b) = memory::pair();
    s.serve(b).expect("serve");
    let host = Client::builder(Implementation::new("host", "1"))
        .apps()
        .build()
        .connect(a)
        .await
        .expect("connect");
    let view = host.read_app("ui://raw/bare").await.expect("read");
    assert_eq!(view.meta.prefers_border, Some(false));
    assert_eq!(view.meta.domain.as_deref(), Some("x.example"));
    let err = host.read_app("ui://raw/plain").await.unwrap_err();
    assert!(
        matches!(err, switchboard::client::ClientError::InvalidApp { .. }),
        "{err}"
    );
}
