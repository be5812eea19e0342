use schemars::JsonSchema;
use serde::Deserialize;
use switchboard::jsonrpc::memory;
use switchboard::server::{Server, typed};
use switchboard::types::{lifecycle::Implementation, tools::CallToolResult};
use switchboard_check::Target;

#[derive(Deserialize, JsonSchema)]
struct Add { a: i64, b: i64 }

#[tokio::test]
async fn my_server_passes_every_check() -> Result<(), Box<dyn std::error::Error>> {
    let add = typed::tool("add", "Add two integers", |x: Add, _| async move { Ok(CallToolResult::text((x.a + x.b).to_string())) });
    let server = Server::builder(Implementation::new("calc", "1.0")).registered_tool(add).build()?;
    // The checks open several connections: each is a fresh in-memory pair whose far end the server serves.
    let target = Target::in_process(move || {
        let (ours, theirs) = memory::pair();
        server.serve(theirs).map(|_session| ours)
    });
    let report = switchboard_check::run(&target).await?;
    assert_eq!(report.failed(), 0, "{report}");
    Ok(())
}
