use std::time::Duration;
use switchboard::client::Client;
use switchboard::jsonrpc::{memory, Scope};
use switchboard::middleware::{Audit, RateLimit, Timeout};
use switchboard::server::Server;
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard::types::Implementation;

#[tokio::test]
async fn an_audit_log_a_rate_limit_and_a_timeout_in_three_lines() {
    let server = Server::builder(Implementation::new("guarded", "1.0"))
        .tool(Tool::new("whoami", serde_json::json!({"type": "object"})), |call| async move {
            // Over Streamable HTTP with authorization: the token's subject; over stdio: none.
            Ok(CallToolResult::text(call.cx.subject().unwrap_or("anonymous")))
        })
        .layer(Audit::to_stderr())                                        // one JSON line per call
        .layer(RateLimit::per_subject(100, Duration::from_secs(60)))      // -32000 past the limit
        .layer_for(Scope::tool("whoami"), Timeout::new(Duration::from_secs(5)))
        .build().unwrap();
    let (a, b) = memory::pair();
    server.serve(b).unwrap();
    let session = Client::builder(Implementation::new("host", "1.0")).build().connect(a).await.unwrap();
    let r = session.call_tool("whoami", serde_json::json!({})).await.unwrap();
    assert_eq!(r.content, CallToolResult::text("anonymous").content);
}
