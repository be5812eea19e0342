//! # A guide, one primitive at a time
//!
//! Every example below runs (they are tests): a server and a client in the same process,
//! joined by the in-memory pair ([`jsonrpc::memory::pair`](crate::jsonrpc::memory::pair)),
//! which serializes each frame to JSON text and parses it again, as a pipe or a socket would.
//! Swap the pair for [`transport::StdioTransport`](crate::transport::StdioTransport)
//! (a server for a host), [`transport::ChildTransport`](crate::transport::ChildTransport) (a
//! client spawning a server) or the Streamable HTTP transports
//! ([`server_http`](crate::server_http), [`http_client`](crate::http_client)); nothing else
//! changes.
//!
//! Coming from rmcp, the official Rust SDK: the repository's `docs/FROM-RMCP.md` puts its API
//! and ours side by side (`#[tool_router]` and `#[tool_handler]` against `#[handlers]` and
//! `ServerBuilder::register`, `Parameters<T>` against one parameter per property, the
//! `ClientHandler` trait against the client builder's closures), each of our snippets a tested
//! region of `examples/tests/from_rmcp.rs`.
//!
//! Traces and metrics (feature `otel`, `switchboard::telemetry`) are one layer on either
//! builder; the repository's `docs/TELEMETRY.md` is their guide, with a runnable example.
//!
//! ## Server: tools
//!
//! A tool is a definition (name, JSON Schema of its arguments) and an async handler. Arguments
//! are validated against the schema before the handler runs; a handler's `Err` is a result with
//! `isError: true` that the model reads, never a protocol error. [`server::typed`](crate::server::typed) derives the
//! schema from a Rust type instead.
//!
//! ```
//! use serde_json::json;
//! use switchboard::client::Client;
//! use switchboard::jsonrpc::memory;
//! use switchboard::server::{Server, ToolError};
//! use switchboard::types::lifecycle::Implementation;
//! use switchboard::types::tools::{CallToolResult, Tool};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let divide = Tool::new(
//!     "divide",
//!     json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
//!            "required": ["a", "b"]}),
//! )
//! .with_description("Divides a by b");
//! let server = Server::builder(Implementation::new("calc", "1.0"))
//!     .tool(divide, |call| async move {
//!         let a = call.arguments["a"].as_f64().unwrap_or(0.0);
//!         let b = call.arguments["b"].as_f64().unwrap_or(0.0);
//!         if b == 0.0 {
//!             return Err(ToolError::new("cannot divide by zero"));
//!         }
//!         Ok(CallToolResult::text((a / b).to_string()))
//!     })
//!     .build()?;
//!
//! let (ours, theirs) = memory::pair();
//! server.serve(theirs)?;
//! let client = Client::builder(Implementation::new("guide", "1.0")).build().connect(ours).await?;
//! let r = client.call_tool("divide", json!({"a": 1, "b": 4})).await?;
//! assert!(!r.is_error());
//! let r = client.call_tool("divide", json!({"a": 1, "b": 0})).await?;
//! assert!(r.is_error(), "a tool's failure is a result the model reads");
//! # Ok(())
//! # }
//! ```
//!
//! ## Server: resources and templates
//!
//! A resource is a URI with a reader; a template (RFC 6570) hands its reader the variables.
//!
//! ```
//! use switchboard::client::Client;
//! use switchboard::jsonrpc::memory;
//! use switchboard::server::{ResourceRead, Server};
//! use switchboard::types::lifecycle::Implementation;
//! use switchboard::types::content::{ResourceContents, TextResourceContents};
//! use switchboard::types::resources::{ReadResourceResult, Resource, ResourceTemplate};
//!
//! fn text(uri: &str, body: String) -> ReadResourceResult {
//!     ReadResourceResult::new(vec![ResourceContents::Text(TextResourceContents::new(uri, body))])
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder(Implementation::new("docs", "1.0"))
//!     .resource(Resource::new("docs://readme", "readme"), |r: ResourceRead| async move {
//!         Ok(text(&r.uri, "Read me first.".into()))
//!     })
//!     .resource_template(
//!         ResourceTemplate::new("docs://pages/{page}", "page"),
//!         |r: ResourceRead| async move {
//!             let page = r.vars.get("page").cloned().unwrap_or_default();
//!             Ok(text(&r.uri, format!("This is page {page}.")))
//!         },
//!     )
//!     .build()?;
//!
//! let (ours, theirs) = memory::pair();
//! server.serve(theirs)?;
//! let client = Client::builder(Implementation::new("guide", "1.0")).build().connect(ours).await?;
//! assert_eq!(client.list_resources().await?.len(), 1);
//! let page = client.read_resource("docs://pages/7").await?;
//! let ResourceContents::Text(t) = &page.contents[0] else { unreachable!() };
//! assert_eq!(t.text, "This is page 7.");
//! # Ok(())
//! # }
//! ```
//!
//! ## Server: prompts
//!
//! A prompt is a named message template; its required arguments are checked before the
//! handler runs.
//!
//! ```
//! use switchboard::client::Client;
//! use switchboard::jsonrpc::memory;
//! use switchboard::server::{PromptGet, Server};
//! use switchboard::types::lifecycle::Implementation;
//! use switchboard::types::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut review = Prompt::new("review");
//! let mut lang = PromptArgument::new("language");
//! lang.required = Some(true);
//! review.arguments = Some(vec![lang]);
//! let server = Server::builder(Implementation::new("prompts", "1.0"))
//!     .prompt(review, |g: PromptGet| async move {
//!         let lang = g.arguments.get("language").cloned().unwrap_or_default();
//!         Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
//!             "Review this {lang} code for bugs."
//!         ))]))
//!     })
//!     .build()?;
//!
//! let (ours, theirs) = memory::pair();
//! server.serve(theirs)?;
//! let client = Client::builder(Implementation::new("guide", "1.0")).build().connect(ours).await?;
//! let p = client.get_prompt("review", [("language", "Rust")]).await?;
//! assert_eq!(p.messages.len(), 1);
//! assert!(client.get_prompt("review", [("other", "x")]).await.is_err(), "a required argument");
//! # Ok(())
//! # }
//! ```
//!
//! ## Client: roots, sampling and elicitation
//!
//! The server asks; the client's handlers answer. The same handler code works in both eras: a
//! 2025 session sends the server's requests to the client, revision 2026-07-28 answers the call
//! `input_required` and the client's retry carries the answers. The client declares each
//! capability because it installed the handler.
//!
//! ```
//! use serde_json::json;
//! use switchboard::client::Client;
//! use switchboard::jsonrpc::memory;
//! use switchboard::server::{Server, ToolError};
//! use switchboard::types::content::TextContent;
//! use switchboard::types::elicitation::{ElicitContentValue, ElicitRequestFormParams, ElicitResult};
//! use switchboard::types::lifecycle::Implementation;
//! use switchboard::types::meta::OrderedMap;
//! use switchboard::types::roots::Root;
//! use switchboard::types::sampling::{
//!     CreateMessageRequestParams, CreateMessageResult, SamplingMessage, SamplingMessageContentBlock,
//! };
//! use switchboard::types::tools::{CallToolResult, Tool};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let failed = |e: switchboard::server::ClientRequestError| ToolError::new(e.to_string());
//! let server = Server::builder(Implementation::new("asks", "1.0"))
//!     .tool(Tool::new("plan", json!({"type": "object"})), move |call| async move {
//!         // Roots: where the client lets the server look.
//!         let roots = call.cx.list_roots_as("roots").await.map_err(failed)?;
//!         // Elicitation: a question for the user, with a schema for the answer.
//!         let form: ElicitRequestFormParams = serde_json::from_value(json!({
//!             "message": "Which city?",
//!             "requestedSchema": {"type": "object", "properties": {"city": {"type": "string"}}}
//!         }))
//!         .map_err(|e| ToolError::new(e.to_string()))?;
//!         let answer = call.cx.elicit_as("city", form).await.map_err(failed)?;
//!         // Sampling: a completion from the client's model.
//!         let ask = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("Say hi")], 50);
//!         let said = call.cx.create_message_as("hi", ask).await.map_err(failed)?;
//!         Ok(CallToolResult::text(format!(
//!             "{} roots; city {:?}; model {}",
//!             roots.roots.len(),
//!             answer.content.map(|c| serde_json::to_value(c).unwrap_or_default()),
//!             said.model
//!         )))
//!     })
//!     .build()?;
//!
//! let (ours, theirs) = memory::pair();
//! server.serve(theirs)?;
//! let client = Client::builder(Implementation::new("guide", "1.0"))
//!     .roots([Root::new("file:///home/me/project")])
//!     .elicitation(|_params, _cx| async {
//!         let mut content = OrderedMap::new();
//!         content.insert("city", ElicitContentValue::String("Oslo".into()));
//!         Ok(ElicitResult::accept(content))
//!     })
//!     .sampling(|_params, _cx| async {
//!         Ok(CreateMessageResult::new(
//!             "my-model",
//!             SamplingMessageContentBlock::Text(TextContent::new("hi")),
//!         ))
//!     })
//!     .build()
//!     .connect(ours)
//!     .await?;
//! let r = client.call_tool("plan", json!({})).await?;
//! assert!(!r.is_error(), "{r:?}");
//! # Ok(())
//! # }
//! ```
//!
//! ## Middleware: a layer of your own
//!
//! A [`jsonrpc::Layer`](crate::jsonrpc::Layer) wraps every request a side handles (`handle`),
//! every notification it takes (`notification`) and every request it sends (`send`); each hook
//! defaults to going on unchanged. Go on with `next.run(call)` (call it before your first
//! `.await`, so the handshake keeps frame order), or answer yourself. The built-in layers
//! (timeouts, limits, the audit log) are in [`middleware`](crate::middleware). This one refuses
//! tool calls on sessions whose client did not say who it is, and counts the rest:
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use serde_json::json;
//! use switchboard::client::Client;
//! use switchboard::jsonrpc::{memory, BoxFuture, Call, HandlerResult, Layer, Next, Scope};
//! use switchboard::server::Server;
//! use switchboard::types::ErrorObject;
//! use switchboard::types::lifecycle::Implementation;
//! use switchboard::types::tools::{CallToolResult, Tool};
//!
//! struct KnownClientsOnly(Arc<AtomicUsize>);
//!
//! impl Layer for KnownClientsOnly {
//!     fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
//!         if call.facts().peer_name.as_deref() == Some("anonymous") {
//!             let refusal = ErrorObject::invalid_request("tell us who you are", "unknown_client");
//!             return Box::pin(async move { Err(refusal) });
//!         }
//!         self.0.fetch_add(1, Ordering::Relaxed);
//!         next.run(call)
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let calls = Arc::new(AtomicUsize::new(0));
//! let server = Server::builder(Implementation::new("guarded", "1.0"))
//!     .tool(Tool::new("hello", json!({"type": "object"})), |_| async {
//!         Ok(CallToolResult::text("hello"))
//!     })
//!     .layer_for(Scope::tools(), KnownClientsOnly(calls.clone()))
//!     .build()?;
//! for (name, ok) in [("guide", true), ("anonymous", false)] {
//!     let (ours, theirs) = memory::pair();
//!     server.serve(theirs)?;
//!     let client = Client::builder(Implementation::new(name, "1.0"))
//!         .era(switchboard::client::EraMode::Legacy)
//!         .build()
//!         .connect(ours)
//!         .await?;
//!     assert_eq!(client.call_tool("hello", json!({})).await.is_ok(), ok);
//! }
//! assert_eq!(calls.load(Ordering::Relaxed), 1);
//! # Ok(())
//! # }
//! ```
