use schemars::JsonSchema;
use serde::Deserialize;
use switchboard::server::{Server, typed};
use switchboard::transport::stdio::StdioTransport;
use switchboard::types::{lifecycle::Implementation, tools::CallToolResult};

#[derive(Deserialize, JsonSchema)]
struct Add { a: i64, b: i64 }

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let add = typed::tool("add", "Add two integers", |x: Add, _| async move { Ok(CallToolResult::text((x.a + x.b).to_string())) });
    let server = Server::builder(Implementation::new("calc", "1.0")).registered_tool(add).build()?;
    server.serve(StdioTransport::stdio())?.closed().await;
    Ok(())
}
