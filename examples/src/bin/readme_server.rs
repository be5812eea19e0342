use switchboard::server::Server;
use switchboard::transport::StdioTransport;
use switchboard::types::lifecycle::Implementation;

/// Add two integers.
#[switchboard::tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder(Implementation::new("calc", "1.0")).register(add).build()?;
    server.serve(StdioTransport::stdio())?.closed().await;
    Ok(())
}
