//! The library against our server behind Streamable HTTP on 127.0.0.1, started in the test: every
//! Streamable HTTP rule passes with sessions, and a stateless server passes with the session
//! rules skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use switchboard_check::{Checker, Target, Verdict};
use switchboard_http::{HttpConfig, StreamableHttpService};
use switchboard_server::Server;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::tools::{CallToolResult, Tool};
use tokio::net::TcpListener;

/// Our server with one tool, served over Streamable HTTP with `config` on a free port.
async fn serve(config: HttpConfig) -> String {
    let server = Server::builder(Implementation::new("over-http", "1.0"))
        .tool(Tool::new("noop", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("ok"))
        })
        .build()
        .expect("a valid server");
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let service =
        StreamableHttpService::new(switchboard::server_http::session_factory(&server), config);
    tokio::spawn(switchboard_http::serve(listener, service));
    url
}

/// The Streamable HTTP rules: tags `HT…`, and `JR-12` (batches under 2025-03-26).
fn is_http_rule(tag: &str) -> bool {
    tag.starts_with("HT") || tag == "JR-12"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_streamable_http_rule_passes_against_our_server() {
    let url = serve(HttpConfig::default()).await;
    let report = Checker::new(Target::http(url))
        .run()
        .await
        .expect("the checks run");
    assert_eq!(report.failed(), 0, "{report}");
    let http: Vec<_> = report
        .results()
        .iter()
        .filter(|r| is_http_rule(r.tag))
        .collect();
    assert_eq!(http.len(), 15, "{report}");
    assert!(http.iter().all(|r| r.outcome == Verdict::Pass), "{report}");
    let delete = report
        .get("DELETE ends the session (then 404) or is 405")
        .unwrap();
    assert_eq!(delete.detail, "DELETE 200, then 404");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server_passes_with_the_session_rules_skipped() {
    let url = serve(HttpConfig::default().with_stateless(true)).await;
    let report = switchboard_check::run(&Target::http(url))
        .await
        .expect("the checks run");
    assert_eq!(report.failed(), 0, "{report}");
    for name in [
        "a request without the session id is 400",
        "an unknown session id is 404",
        "DELETE ends the session (then 404) or is 405",
        "a request before initialize is refused",
    ] {
        let r = report.get(name).unwrap();
        assert_eq!(r.outcome, Verdict::Skip, "{name}: {report}");
        assert!(r.detail.contains("stateless"), "{name}: {}", r.detail);
    }
}
