//! The MCP Apps checks (docs/APPS.md, tags `AP-n`) against servers in the test's own process:
//! our server with a view passes every one, a hand-written server that breaks the rules fails
//! exactly those it breaks, and a server without apps gets one skip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};
use support::{in_process, scripted};
use switchboard_check::{Checker, Report, Target, Verdict};
use switchboard_server::{AppView, Server};
use switchboard_types::apps::{UiCsp, UiResourceMeta, UiToolMeta};
use switchboard_types::lifecycle::Implementation;
use switchboard_types::methods;
use switchboard_types::tools::{CallToolResult, Tool};

/// Each AP result's verdict, by tag.
fn apps(report: &Report) -> BTreeMap<&'static str, Verdict> {
    report
        .results()
        .iter()
        .filter(|r| r.tag.starts_with("AP-"))
        .map(|r| (r.tag, r.outcome))
        .collect()
}

async fn run(target: Target) -> Report {
    Checker::new(target)
        .with_timeout(Duration::from_secs(2))
        .run()
        .await
        .expect("the checks run")
}

#[tokio::test]
async fn ap_our_server_with_a_view_passes_every_apps_check() {
    let obj = json!({"type": "object"});
    let server = Server::builder(Implementation::new("app", "1"))
        .app(
            AppView::new(
                "ui://app/view",
                "<!doctype html><html><body>hi</body></html>",
            )
            .meta(UiResourceMeta {
                csp: Some(UiCsp::none()),
                prefers_border: Some(true),
                ..Default::default()
            }),
        )
        .tool(
            Tool::new("show", obj.clone()).with_ui(UiToolMeta::linked("ui://app/view")),
            |_| async { Ok(CallToolResult::text("shown")) },
        )
        .tool(
            Tool::new("refresh", obj).with_ui(UiToolMeta::app_only("ui://app/view")),
            |_| async { Ok(CallToolResult::text("refreshed")) },
        )
        .build()
        .unwrap();
    let report = run(in_process(server)).await;
    assert_eq!(report.failed(), 0, "{report}");
    let expected: BTreeMap<&str, Verdict> = [
        "AP-1", "AP-2", "AP-3", "AP-4", "AP-5", "AP-6", "AP-9", "AP-10",
    ]
    .into_iter()
    .map(|t| (t, Verdict::Pass))
    .collect();
    assert_eq!(apps(&report), expected, "{report}");
}

#[tokio::test]
async fn ap_9_a_server_without_apps_gets_one_skip() {
    let server = Server::builder(Implementation::new("plain", "1"))
        .tool(Tool::new("t", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("t"))
        })
        .build()
        .unwrap();
    let report = run(in_process(server)).await;
    assert_eq!(
        apps(&report),
        [("AP-9", Verdict::Skip)].into_iter().collect(),
        "{report}"
    );
}

/// A hand-written 2025 server whose apps break the rules: no extension declared, a link that
/// is not ui://, a bad visibility, a view served as text/html with a CSP source that would end
/// its directive, a view served as JSON, a linked view that does not exist, and no CSP at all.
fn broken() -> Target {
    scripted(|method, frame| {
        let uri = frame.pointer("/params/uri").and_then(Value::as_str);
        match (method, uri) {
            (methods::INITIALIZE, _) => json!({"result": {"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}, "resources": {}},
                "serverInfo": {"name": "broken", "version": "1"}}}),
            (methods::TOOLS_LIST, _) => json!({"result": {"tools": [
                {"name": "web", "inputSchema": {"type": "object"},
                    "_meta": {"ui": {"resourceUri": "https://example.com/app"}}},
                {"name": "who", "inputSchema": {"type": "object"},
                    "_meta": {"ui": {"resourceUri": "ui://b/html", "visibility": ["agent"]}}},
                {"name": "gone", "inputSchema": {"type": "object"},
                    "_meta": {"ui": {"resourceUri": "ui://b/gone"}}}
            ]}}),
            (methods::RESOURCES_LIST, _) => json!({"result": {"resources": [
                {"uri": "ui://b/html", "name": "html", "mimeType": "text/html;profile=mcp-app",
                    "_meta": {"ui": {"csp": {"connectDomains": ["https://a.com; script-src *"]}}}},
                {"uri": "ui://b/json", "name": "json"}
            ]}}),
            (methods::RESOURCES_READ, Some("ui://b/html")) => {
                json!({"result": {"contents": [
                {"uri": "ui://b/html", "mimeType": "text/html", "text": "<!doctype html><p>x"}]}})
            }
            (methods::RESOURCES_READ, Some("ui://b/json")) => {
                json!({"result": {"contents": [
                {"uri": "ui://b/json", "mimeType": "text/html;profile=mcp-app", "text": "{}"}]}})
            }
            (methods::RESOURCES_READ, _) => {
                json!({"error": {"code": -32002, "message": "no"}})
            }
            (methods::PING, _) => json!({"result": {}}),
            _ => json!({"error": {"code": -32601, "message": "no"}}),
        }
    })
}

#[tokio::test]
async fn ap_a_server_that_breaks_the_apps_rules_fails_exactly_those() {
    let report = run(broken()).await;
    let expected: BTreeMap<&str, Verdict> = [
        ("AP-1", Verdict::Pass),
        ("AP-2", Verdict::Fail),
        ("AP-3", Verdict::Fail),
        ("AP-4", Verdict::Fail),
        ("AP-5", Verdict::Fail),
        ("AP-6", Verdict::Fail),
        ("AP-9", Verdict::Fail),
        ("AP-10", Verdict::Skip),
    ]
    .into_iter()
    .collect();
    assert_eq!(apps(&report), expected, "{report}");
    let detail = |tag: &str| {
        report
            .results()
            .iter()
            .find(|r| r.tag == tag)
            .map(|r| r.detail.clone())
            .unwrap()
    };
    assert!(detail("AP-2").contains("ui://b/html"), "{report}");
    assert!(detail("AP-3").contains("ui://b/json"), "{report}");
    assert!(detail("AP-4").contains("script-src"), "{report}");
    assert!(
        detail("AP-5").contains("web") && detail("AP-5").contains("who"),
        "{report}"
    );
    assert!(detail("AP-6").contains("ui://b/gone"), "{report}");
}
