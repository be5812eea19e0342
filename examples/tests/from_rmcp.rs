//! The Switchboard side of `docs/FROM-RMCP.md`: every Rust block of that page that is ours (a
//! block opened with a bare `rust` info string; rmcp's say `rust rmcp`) is one region of this
//! file, between a `// page: NAME` line and a `// page: end` line, word for word once the
//! region's indentation is removed. Each region sits in a module of its own (its `use` lines
//! are its own), with the test that runs it after the region.
#![allow(clippy::unwrap_used, dead_code)]

use std::collections::BTreeMap;

const PAGE: &str = include_str!("../../docs/FROM-RMCP.md");
const SOURCE: &str = include_str!("from_rmcp.rs");

/// The regions of this file, by name, their indentation removed.
fn regions() -> BTreeMap<String, String> {
    let mut regions = BTreeMap::new();
    let mut current: Option<(String, Vec<&str>)> = None;
    for line in SOURCE.lines() {
        let marker = line.trim_start().strip_prefix("// page: ");
        match (marker, &mut current) {
            (Some("end"), Some(_)) => {
                let (name, lines) = current.take().unwrap();
                let indent = lines
                    .iter()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| l.len() - l.trim_start().len())
                    .min()
                    .unwrap_or(0);
                let text: String = lines
                    .iter()
                    .map(|l| format!("{}\n", l.get(indent..).unwrap_or("")))
                    .collect();
                assert!(regions.insert(name.clone(), text).is_none(), "region {name} twice");
            }
            (Some(name), None) => current = Some((name.to_owned(), Vec::new())),
            (_, Some((_, lines))) => lines.push(line),
            _ => {}
        }
    }
    assert!(current.is_none(), "a region is not closed");
    regions
}

/// The page's Rust blocks that are ours (info string exactly `rust`).
fn our_blocks() -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in PAGE.lines() {
        match &mut current {
            None if line == "```rust" => current = Some(String::new()),
            Some(_) if line == "```" => blocks.push(current.take().unwrap()),
            Some(text) => {
                text.push_str(line);
                text.push('\n');
            }
            None => {}
        }
    }
    blocks
}

#[test]
fn every_block_of_ours_on_the_page_is_a_tested_region_and_back() {
    let regions = regions();
    let blocks = our_blocks();
    assert!(regions.len() >= 8, "{} regions", regions.len());
    for (name, text) in &regions {
        assert!(
            blocks.contains(text),
            "docs/FROM-RMCP.md must show region {name} of tests/from_rmcp.rs verbatim:\n{text}"
        );
    }
    for block in &blocks {
        assert!(
            regions.values().any(|r| r == block),
            "a block of docs/FROM-RMCP.md is not in tests/from_rmcp.rs:\n{block}"
        );
    }
}

#[test]
fn the_page_is_linked_from_the_readme_and_the_guide() {
    assert!(include_str!("../../README.md").contains("(docs/FROM-RMCP.md)"));
    assert!(include_str!("../../crates/switchboard/src/guide.rs").contains("docs/FROM-RMCP.md"));
}

/// A client of `server` in this process, in the era the client picks by default.
async fn connect(server: &switchboard::server::Server) -> switchboard::client::ClientSession {
    use switchboard::client::Client;
    use switchboard::types::lifecycle::Implementation;
    let (ours, theirs) = switchboard::jsonrpc::memory::pair();
    server.serve(theirs).unwrap();
    Client::builder(Implementation::new("test", "1"))
        .build()
        .connect(ours)
        .await
        .unwrap()
}

mod tools {
    // page: tools
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use switchboard::server::{Json, Server, ServerError};
    use switchboard::types::lifecycle::Implementation;

    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Matches {
        notes: Vec<String>,
    }

    #[derive(Default)]
    struct Notes {
        notes: Mutex<BTreeMap<String, String>>,
    }

    #[switchboard::handlers]
    impl Notes {
        /// Writes a note, replacing one of the same title.
        #[tool]
        async fn add_note(
            &self,
            /// The note's title.
            title: String,
            /// The note's Markdown text.
            body: String,
        ) -> String {
            self.notes.lock().unwrap().insert(title.clone(), body);
            format!("saved note://{title}")
        }

        /// Names the notes whose title or text contains `query`.
        #[tool]
        async fn search_notes(
            &self,
            /// The text to look for.
            query: String,
        ) -> Json<Matches> {
            let notes = self.notes.lock().unwrap();
            let hits = notes.iter().filter(|(t, b)| t.contains(&query) || b.contains(&query));
            Json(Matches {
                notes: hits.map(|(t, _)| t.clone()).collect(),
            })
        }
    }

    fn notes_server() -> Result<Server, ServerError> {
        Server::builder(Implementation::new("notes", "1.0"))
            .register(Notes::default())
            .build()
    }
    // page: end

    #[tokio::test]
    async fn the_tools_are_listed_with_their_schemas_and_answer() {
        use serde_json::json;
        let server = notes_server().unwrap();
        let session = super::connect(&server).await;
        let tools = session.list_tools().await.unwrap();
        let add = tools.iter().find(|t| t.name == "add_note").unwrap();
        assert_eq!(
            add.description.as_deref(),
            Some("Writes a note, replacing one of the same title.")
        );
        assert_eq!(add.input_schema["required"], json!(["title", "body"]));
        assert_eq!(
            add.input_schema["properties"]["title"]["description"],
            "The note's title."
        );
        let search = tools.iter().find(|t| t.name == "search_notes").unwrap();
        assert!(search.output_schema.is_some(), "Json<T> declares an output schema");
        let r = session
            .call_tool("add_note", json!({"title": "hello", "body": "# Hello"}))
            .await
            .unwrap();
        assert_eq!(r.content[0].as_text(), Some("saved note://hello"));
        let r = session
            .call_tool("search_notes", json!({"query": "Hello"}))
            .await
            .unwrap();
        assert_eq!(r.structured_content, Some(json!({"notes": ["hello"]})));
        let bad = session.call_tool("add_note", json!({"title": "x"})).await;
        assert!(
            bad.map(|r| r.is_error()).unwrap_or(true),
            "a missing argument is refused"
        );
        session.close();
    }
}

mod prompts {
    // page: prompts
    use switchboard::server::{Server, ServerError};
    use switchboard::types::lifecycle::Implementation;

    /// Asks for a summary of every note.
    #[switchboard::prompt]
    async fn summarize_notes(
        /// How long the summary may be, e.g. "one paragraph".
        length: Option<String>,
    ) -> String {
        let length = length.unwrap_or_else(|| "a few sentences".into());
        format!("Summarize these notes in {length}.")
    }

    fn prompt_server() -> Result<Server, ServerError> {
        Server::builder(Implementation::new("notes", "1.0"))
            .register(summarize_notes)
            .build()
    }
    // page: end

    #[tokio::test]
    async fn the_prompt_is_listed_and_filled_in() {
        let server = prompt_server().unwrap();
        let session = super::connect(&server).await;
        let prompts = session.list_prompts().await.unwrap();
        assert_eq!(prompts[0].name, "summarize_notes");
        let length = &prompts[0].arguments.as_ref().unwrap()[0];
        assert_eq!((length.name.as_str(), length.required), ("length", Some(false)));
        let p = session
            .get_prompt("summarize_notes", [("length", "one line")])
            .await
            .unwrap();
        let text = serde_json::to_value(&p.messages[0].content).unwrap();
        assert_eq!(text["text"], "Summarize these notes in one line.");
        session.close();
    }
}

mod resources {
    // page: resources
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use switchboard::server::{ResourceRead, Server, ServerError, resource_not_found};
    use switchboard::types::ErrorObject;
    use switchboard::types::content::{ResourceContents, TextResourceContents};
    use switchboard::types::resources::{ReadResourceResult, Resource};

    #[derive(Default)]
    struct Notes {
        notes: Mutex<BTreeMap<String, String>>,
    }

    #[switchboard::handlers]
    impl Notes {
        /// A note, as Markdown.
        #[resource("note://{title}", mime_type = "text/markdown")]
        async fn note(&self, title: String) -> Result<String, ErrorObject> {
            let notes = self.notes.lock().unwrap();
            notes
                .get(&title)
                .cloned()
                .ok_or_else(|| resource_not_found(&format!("note://{title}")))
        }
    }

    /// Lists one note under `resources/list` (and sends `notifications/resources/list_changed`).
    fn list_note(server: &Server, title: &str, text: String) -> Result<(), ServerError> {
        let resource = Resource::new(format!("note://{title}"), title).with_mime_type("text/markdown");
        server.add_resource(resource, move |read: ResourceRead| {
            let contents = TextResourceContents::new(&read.uri, text.clone());
            async move { Ok(ReadResourceResult::new(vec![ResourceContents::Text(contents)])) }
        })
    }
    // page: end

    #[tokio::test]
    async fn the_template_and_the_listed_note_are_read() {
        use switchboard::types::lifecycle::Implementation;
        let notes = Notes::default();
        notes.notes.lock().unwrap().insert("hello".into(), "# Hello".into());
        let server = Server::builder(Implementation::new("notes", "1.0"))
            .register(notes)
            .build()
            .unwrap();
        list_note(&server, "listed", "# Listed".into()).unwrap();
        let session = super::connect(&server).await;
        let templates = session.list_resource_templates().await.unwrap();
        assert_eq!(templates[0].uri_template, "note://{title}");
        let listed = session.list_resources().await.unwrap();
        assert_eq!(listed[0].uri, "note://listed");
        let read = session.read_resource("note://hello").await.unwrap();
        let ResourceContents::Text(t) = &read.contents[0] else {
            panic!("{read:?}")
        };
        assert_eq!(
            (t.text.as_str(), t.mime_type.as_deref()),
            ("# Hello", Some("text/markdown"))
        );
        let read = session.read_resource("note://listed").await.unwrap();
        let ResourceContents::Text(t) = &read.contents[0] else {
            panic!("{read:?}")
        };
        assert_eq!(t.text, "# Listed");
        assert!(session.read_resource("note://missing").await.is_err());
        session.close();
    }
}

mod serve {
    // page: serve
    use switchboard::http::{HttpConfig, StreamableHttpService};
    use switchboard::server::Server;
    use switchboard::transport::StdioTransport;

    async fn serve_stdio(server: Server) -> Result<(), Box<dyn std::error::Error>> {
        server.serve(StdioTransport::stdio())?.closed().await;
        Ok(())
    }

    async fn serve_http(server: Server, addr: &str) -> Result<(), Box<dyn std::error::Error>> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let config = HttpConfig::for_bind_address(listener.local_addr()?);
        let service = StreamableHttpService::new(switchboard::server_http::session_factory(&server), config);
        switchboard::http::serve(listener, service).await?;
        Ok(())
    }
    // page: end

    #[tokio::test]
    async fn the_http_server_answers_our_http_client() {
        use switchboard::client::Client;
        use switchboard::http_client::{HttpClientConfig, HttpClientTransport};
        use switchboard::types::lifecycle::Implementation;
        // A free port: bound, read, released, then bound again by the server.
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let server = super::tools_server();
        tokio::spawn(async move { serve_http(server, &addr.to_string()).await.map_err(|e| e.to_string()) });
        let url = format!("http://{addr}/mcp");
        let mut session = None;
        for _ in 0..100 {
            let transport = HttpClientTransport::connect(&url, HttpClientConfig::default()).unwrap();
            match Client::builder(Implementation::new("test", "1"))
                .build()
                .connect(transport)
                .await
            {
                Ok(s) => {
                    session = Some(s);
                    break;
                }
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
            }
        }
        let session = session.expect("the HTTP server answers");
        assert_eq!(session.list_tools().await.unwrap()[0].name, "divide");
        session.close();
        // The stdio variant is the README's server (`readme_server`, run by tests/readme.rs).
        let _ = serve_stdio;
    }
}

mod client {
    // page: client
    use serde_json::json;
    use switchboard::client::Client;
    use switchboard::transport::{ChildCommand, ChildTransport};
    use switchboard::types::elicitation::{ElicitAction, ElicitResult};
    use switchboard::types::lifecycle::Implementation;
    use switchboard::types::sampling::{CreateMessageResult, SamplingMessageContentBlock};
    use switchboard::types::tools::CallToolResult;

    async fn search(notes: &str, dir: &str) -> Result<CallToolResult, Box<dyn std::error::Error>> {
        let client = Client::builder(Implementation::new("host", "1.0"))
            .sampling(|_params, _cx| async {
                Ok(CreateMessageResult::new(
                    "my-model",
                    SamplingMessageContentBlock::text("A summary."),
                ))
            })
            .elicitation(|_request, _cx| async { Ok(ElicitResult::new(ElicitAction::Decline)) })
            .build();
        let session = client
            .connect(ChildTransport::spawn(ChildCommand::new(notes).arg(dir))?)
            .await?;
        for tool in session.list_tools().await? {
            println!("{}", tool.name);
        }
        let result = session.call_tool("search_notes", json!({"query": "hello"})).await?;
        session.close();
        Ok(result)
    }
    // page: end

    #[tokio::test]
    async fn the_client_searches_the_notes_example() {
        let dir = std::env::temp_dir().join(format!("switchboard-from-rmcp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("hello.md"), "# Hello").unwrap();
        let result = search(env!("CARGO_BIN_EXE_notes"), dir.to_str().unwrap()).await;
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(result.unwrap().structured_content, Some(json!({"notes": ["hello"]})));
    }
}

mod errors {
    // page: errors
    use switchboard::server::ToolError;
    use switchboard::types::{ErrorCode, ErrorObject};

    /// Divides `a` by `b`.
    #[switchboard::tool]
    async fn divide(a: f64, b: f64) -> Result<String, ToolError> {
        if b == 0.0 {
            // The model reads this: a result with `isError: true`.
            return Err(ToolError::new("cannot divide by zero"));
        }
        if a.abs() > 1e15 {
            // A JSON-RPC error: the host sees a failed request.
            return Err(ToolError::Rpc(ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                "a is too large",
            )));
        }
        Ok((a / b).to_string())
    }
    // page: end

    pub(super) fn server() -> switchboard::server::Server {
        use switchboard::types::lifecycle::Implementation;
        switchboard::server::Server::builder(Implementation::new("calc", "1.0"))
            .register(divide)
            .build()
            .unwrap()
    }

    #[tokio::test]
    async fn a_failure_is_an_is_error_result_and_an_rpc_error_is_an_error() {
        use serde_json::json;
        let server = server();
        let session = super::connect(&server).await;
        let r = session.call_tool("divide", json!({"a": 1, "b": 4})).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("0.25"));
        let r = session.call_tool("divide", json!({"a": 1, "b": 0})).await.unwrap();
        assert!(r.is_error());
        assert_eq!(r.content[0].as_text(), Some("cannot divide by zero"));
        let e = session
            .call_tool("divide", json!({"a": 1e16, "b": 2}))
            .await
            .unwrap_err();
        assert!(e.to_string().contains("a is too large"), "{e}");
        session.close();
    }
}

/// The errors module's server, for the HTTP test.
fn tools_server() -> switchboard::server::Server {
    errors::server()
}

mod progress {
    // page: progress
    use serde_json::json;
    use switchboard::server::{Context, ToolError};
    use switchboard::types::logging::LoggingLevel;

    /// Counts to ten, slowly.
    #[switchboard::tool]
    async fn count(cx: &Context) -> Result<String, ToolError> {
        for step in 1..=10 {
            // A cancelled request's handler is dropped at its next await; this ends it sooner.
            if cx.cancellation().is_cancelled() {
                return Err(ToolError::new("cancelled"));
            }
            let _ = cx.progress(f64::from(step), Some(10.0), None).await;
            let _ = cx.log(LoggingLevel::Info, json!({"step": step})).await;
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        Ok("10".into())
    }
    // page: end

    // page: progress-client
    use switchboard::client::{CancellationToken, ClientSession, RequestOptions};

    async fn count_with_progress(
        session: &ClientSession,
        cancel: CancellationToken,
    ) -> Result<String, Box<dyn std::error::Error>> {
        let options = RequestOptions::default()
            .with_progress(|p| eprintln!("{}/{:?}", p.progress, p.total))
            .with_cancel(cancel);
        let result = session.call_tool_with("count", json!({}), options).await?;
        Ok(result.content[0].as_text().unwrap_or_default().to_owned())
    }
    // page: end

    #[tokio::test]
    async fn progress_arrives_log_lines_arrive_and_cancel_ends_the_call() {
        use std::sync::{Arc, Mutex};
        use switchboard::client::Client;
        use switchboard::server::Server;
        use switchboard::types::lifecycle::Implementation;
        let server = Server::builder(Implementation::new("count", "1.0"))
            .register(count)
            .enable_logging()
            .build()
            .unwrap();
        let (ours, theirs) = switchboard::jsonrpc::memory::pair();
        server.serve(theirs).unwrap();
        let lines = Arc::new(Mutex::new(0));
        let seen = lines.clone();
        let session = Client::builder(Implementation::new("test", "1"))
            .log_level(Some(LoggingLevel::Info))
            .on_log(move |_| *seen.lock().unwrap() += 1)
            .build()
            .connect(ours)
            .await
            .unwrap();
        let _ = session.set_level(LoggingLevel::Info).await;
        assert_eq!(
            count_with_progress(&session, CancellationToken::new()).await.unwrap(),
            "10"
        );
        assert!(*lines.lock().unwrap() > 0, "log lines reach on_log");
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert!(
            count_with_progress(&session, cancel).await.is_err(),
            "a cancelled call ends with an error"
        );
        session.close();
    }
}

mod tasks {
    // page: tasks
    use std::time::Duration;

    use serde_json::json;
    use switchboard::client::{Client, EraMode};
    use switchboard::jsonrpc::memory;
    use switchboard::server::Server;
    use switchboard::types::lifecycle::Implementation;
    use switchboard::types::tools::{CallToolResult, TaskSupport, Tool};

    async fn slow_as_a_task() -> Result<CallToolResult, Box<dyn std::error::Error>> {
        let slow = Tool::new("slow", json!({"type": "object"})).with_task_support(TaskSupport::Optional);
        let server = Server::builder(Implementation::new("tasks", "1.0"))
            .tool(slow, |_call| async {
                tokio::time::sleep(Duration::from_millis(50)).await;
                Ok(CallToolResult::text("done"))
            })
            .build()?;
        let (ours, theirs) = memory::pair();
        server.serve(theirs)?;
        // 2025-11-25: the client asks for a task, waits for it, then fetches its result.
        let client = Client::builder(Implementation::new("host", "1.0"))
            .era(EraMode::Legacy)
            .build();
        let session = client.connect(ours).await?;
        let task = session.start_tool_task("slow", json!({}), None).await?;
        session.wait_task(&task.task_id).await?;
        Ok(session.tool_task_result(&task.task_id).await?)
    }
    // page: end

    #[tokio::test]
    async fn the_tool_runs_as_a_task() {
        let result = slow_as_a_task().await.unwrap();
        assert_eq!(result.content, CallToolResult::text("done").content);
        assert!(result.meta.is_some(), "the result names its task (related-task _meta)");
    }
}
