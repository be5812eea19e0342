//! The generated tools, prompts and resources, run through our client over the in-memory pair.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use switchboard::client::{Client, ClientSession, EraMode};
use switchboard::jsonrpc::memory;
use switchboard::server::{
    Args, Context, Json, Server, ServerBuilder, ToolError, resource_not_found,
};
use switchboard::types::ErrorObject;
use switchboard::types::content::ContentBlock;
use switchboard::types::lifecycle::Implementation;
use switchboard::types::prompts::PromptMessage;
use switchboard::types::tools::CallToolResult;

/// Add two integers.
#[switchboard::tool]
async fn add(
    /// The first addend.
    a: i64,
    b: i64,
) -> String {
    (a + b).to_string()
}

/// Greets someone, politely
/// or not.
#[switchboard::tool(name = "greet", title = "Greeter")]
fn greeting(name: String, shout: Option<bool>) -> CallToolResult {
    let text = format!("hello {name}");
    CallToolResult::text(if shout == Some(true) {
        text.to_uppercase()
    } else {
        text
    })
}

/// Divides, failing on zero.
#[switchboard::tool]
async fn divide(a: f64, b: f64) -> Result<String, String> {
    if b == 0.0 {
        Err("division by zero".into())
    } else {
        Ok((a / b).to_string())
    }
}

/// A deliberate protocol error.
#[switchboard::tool]
async fn refuse() -> Result<String, ToolError> {
    Err(ToolError::Rpc(ErrorObject::new(
        switchboard::types::ErrorCode::INVALID_REQUEST,
        "no",
    )))
}

#[derive(Deserialize, JsonSchema)]
struct Point {
    /// Horizontal.
    x: f64,
    /// Vertical.
    y: f64,
}

#[derive(Serialize, JsonSchema)]
struct Norm {
    length: f64,
}

/// The length of a vector.
#[switchboard::tool]
async fn norm(p: Args<Point>, cx: &Context) -> Json<Norm> {
    let _ = cx.request_id();
    Json(Norm {
        length: (p.x * p.x + p.y * p.y).sqrt(),
    })
}

/// Two blocks.
#[switchboard::tool]
async fn blocks(cx: Context) -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("one"),
        ContentBlock::text(format!("two {}", cx.is_modern())),
    ]
}

/// A code review.
#[switchboard::prompt]
async fn review(
    /// The code to review.
    code: String,
    language: Option<String>,
) -> String {
    format!(
        "Review this {} code: {code}",
        language.unwrap_or_else(|| "unknown".into())
    )
}

/// A fixed resource.
#[switchboard::resource("memo://readme", mime_type = "text/plain")]
async fn readme() -> String {
    "read me".into()
}

/// Users by id.
#[switchboard::resource("users://{id}/profile", name = "user", mime_type = "application/json")]
async fn user(id: String) -> Result<String, ErrorObject> {
    if id == "0" {
        Err(resource_not_found(&format!("users://{id}/profile")))
    } else {
        Ok(format!("{{\"id\":\"{id}\"}}"))
    }
}

/// A counter whose handlers share it.
#[derive(Default)]
struct Counter {
    n: AtomicUsize,
}

#[switchboard::handlers]
impl Counter {
    /// Adds `by` to the counter and returns the new value.
    #[tool]
    async fn bump(&self, by: usize) -> String {
        (self.n.fetch_add(by, Ordering::SeqCst) + by).to_string()
    }

    /// The counter's value.
    #[resource("counter://value")]
    fn value(&self, _cx: &Context) -> String {
        self.n.load(Ordering::SeqCst).to_string()
    }

    /// Asks about the counter.
    #[prompt(name = "ask")]
    fn ask(&self, question: String) -> Vec<PromptMessage> {
        vec![PromptMessage::user_text(format!(
            "{question} ({})",
            self.n.load(Ordering::SeqCst)
        ))]
    }

    /// Not a handler: left as it is.
    fn reset(&self) {
        self.n.store(0, Ordering::SeqCst);
    }
}

/// A 2025 session with the server `builder` makes, in memory.
async fn connect(builder: ServerBuilder) -> ClientSession {
    connect_in(builder, EraMode::Legacy).await
}

async fn connect_in(builder: ServerBuilder, era: EraMode) -> ClientSession {
    let server = builder.build().unwrap();
    let (a, b) = memory::pair();
    server.serve(b).unwrap();
    Client::builder(Implementation::new("test", "1"))
        .era(era)
        .build()
        .connect(a)
        .await
        .unwrap()
}

fn builder() -> ServerBuilder {
    Server::builder(Implementation::new("macros", "1"))
}

#[tokio::test]
async fn parameters_become_the_input_schema_and_docs_the_description() {
    let s = connect(builder().register(add).register(greeting).register(norm)).await;
    let tools = s.list_tools().await.unwrap();
    let t = tools.iter().find(|t| t.name == "add").unwrap();
    assert_eq!(t.description.as_deref(), Some("Add two integers."));
    assert_eq!(t.input_schema["required"], json!(["a", "b"]));
    assert_eq!(t.input_schema["properties"]["a"]["type"], json!("integer"));
    assert_eq!(
        t.input_schema["properties"]["a"]["description"],
        json!("The first addend.")
    );
    assert!(
        t.input_schema["properties"]["b"]
            .get("description")
            .is_none()
    );
    assert!(
        t.input_schema.get("title").is_none(),
        "{:?}",
        t.input_schema
    );
    assert!(t.output_schema.is_none());
    let greet = tools.iter().find(|t| t.name == "greet").unwrap();
    assert_eq!(greet.title.as_deref(), Some("Greeter"));
    assert_eq!(
        greet.description.as_deref(),
        Some("Greets someone, politely\nor not.")
    );
    assert_eq!(
        greet.input_schema["required"],
        json!(["name"]),
        "an Option is not required"
    );
    let n = tools.iter().find(|t| t.name == "norm").unwrap();
    assert_eq!(
        n.input_schema["properties"]["x"]["description"],
        json!("Horizontal.")
    );
    assert_eq!(
        n.output_schema.as_ref().unwrap()["properties"]["length"]["type"],
        json!("number")
    );
}

#[tokio::test]
async fn tools_run_and_map_their_return_values() {
    let s = connect(
        builder()
            .register(add)
            .register(greeting)
            .register(divide)
            .register(norm)
            .register(blocks)
            .register(refuse),
    )
    .await;
    assert_eq!(
        s.call_tool("add", json!({"a": 2, "b": 3})).await.unwrap(),
        CallToolResult::text("5")
    );
    assert!(
        s.call_tool("add", json!({"a": "two", "b": 3}))
            .await
            .unwrap()
            .is_error()
    );
    assert_eq!(
        s.call_tool("greet", json!({"name": "ada"})).await.unwrap(),
        CallToolResult::text("hello ada")
    );
    assert_eq!(
        s.call_tool("greet", json!({"name": "ada", "shout": true}))
            .await
            .unwrap(),
        CallToolResult::text("HELLO ADA")
    );
    assert_eq!(
        s.call_tool("divide", json!({"a": 1, "b": 4}))
            .await
            .unwrap(),
        CallToolResult::text("0.25")
    );
    let failed = s
        .call_tool("divide", json!({"a": 1, "b": 0}))
        .await
        .unwrap();
    assert_eq!(
        failed,
        CallToolResult::error("division by zero"),
        "an Err is a tool error, not a protocol error"
    );
    let n = s.call_tool("norm", json!({"x": 3, "y": 4})).await.unwrap();
    assert_eq!(n.structured_content, Some(json!({"length": 5.0})));
    let b = s.call_tool("blocks", json!({})).await.unwrap();
    assert_eq!(
        b.content,
        vec![ContentBlock::text("one"), ContentBlock::text("two false")]
    );
    let refused = s.call_tool("refuse", json!({})).await.unwrap_err();
    assert!(refused.to_string().contains("no"), "{refused}");
    // The function stays callable as written.
    assert_eq!(add::call(1, 1).await, "2");
}

#[tokio::test]
async fn prompts_and_resources_run() {
    let s = connect(builder().register(review).register(readme).register(user)).await;
    let prompts = s.list_prompts().await.unwrap();
    assert_eq!(prompts[0].name, "review");
    assert_eq!(prompts[0].description.as_deref(), Some("A code review."));
    let args = prompts[0].arguments.clone().unwrap();
    assert_eq!(args[0].description.as_deref(), Some("The code to review."));
    assert_eq!(
        (args[0].name.as_str(), args[0].required),
        ("code", Some(true))
    );
    assert_eq!(
        (args[1].name.as_str(), args[1].required),
        ("language", Some(false))
    );
    let got = s.get_prompt("review", [("code", "x()")]).await.unwrap();
    assert_eq!(
        got.messages,
        vec![PromptMessage::user_text("Review this unknown code: x()")]
    );
    assert!(
        s.get_prompt("review", Vec::<(String, String)>::new())
            .await
            .is_err(),
        "a required argument is checked"
    );

    let resources = s.list_resources().await.unwrap();
    assert_eq!(resources[0].uri, "memo://readme");
    assert_eq!(resources[0].mime_type.as_deref(), Some("text/plain"));
    let templates = s.list_resource_templates().await.unwrap();
    assert_eq!(
        (
            templates[0].uri_template.as_str(),
            templates[0].name.as_str()
        ),
        ("users://{id}/profile", "user")
    );
    let read = s.read_resource("users://7/profile").await.unwrap();
    let json = serde_json::to_value(&read.contents[0]).unwrap();
    assert_eq!(
        json,
        json!({"uri": "users://7/profile", "mimeType": "application/json", "text": "{\"id\":\"7\"}"})
    );
    let missing = s.read_resource("users://0/profile").await.unwrap_err();
    assert!(
        missing.to_string().contains("-32002") || missing.to_string().contains("not found"),
        "{missing}"
    );
}

#[tokio::test]
async fn an_impl_block_registers_its_marked_methods_and_shares_the_value() {
    let counter = Arc::new(Counter::default());
    let s = connect(builder().register(counter.clone())).await;
    assert_eq!(s.list_tools().await.unwrap().len(), 1);
    assert_eq!(
        s.call_tool("bump", json!({"by": 2})).await.unwrap(),
        CallToolResult::text("2")
    );
    assert_eq!(
        s.call_tool("bump", json!({"by": 3})).await.unwrap(),
        CallToolResult::text("5")
    );
    assert_eq!(
        counter.n.load(Ordering::SeqCst),
        5,
        "the handlers use the caller's value"
    );
    let read = s.read_resource("counter://value").await.unwrap();
    assert_eq!(read.contents[0].uri(), "counter://value");
    let got = s
        .get_prompt("ask", [("question", "how many?")])
        .await
        .unwrap();
    assert_eq!(
        got.messages,
        vec![PromptMessage::user_text("how many? (5)")]
    );
    counter.reset();
    // The value itself registers too.
    let s = connect(builder().register(Counter::default())).await;
    assert_eq!(
        s.call_tool("bump", json!({"by": 1})).await.unwrap(),
        CallToolResult::text("1")
    );
}

#[tokio::test]
async fn generated_tools_serve_revision_2026_07_28_too() {
    let s = connect_in(builder().register(add).register(divide), EraMode::Auto).await;
    assert_eq!(
        s.call_tool("add", json!({"a": 2, "b": 3}))
            .await
            .unwrap()
            .content,
        vec![ContentBlock::text("5")]
    );
    assert!(
        s.call_tool("divide", json!({"a": 1, "b": 0}))
            .await
            .unwrap()
            .is_error()
    );
}

/// Lists the notes in the view.
#[switchboard::tool(app = "ui://macros/list")]
async fn list_view() -> String {
    "a, b".into()
}

/// Refreshes the view; only the view calls it.
#[switchboard::tool(app = "ui://macros/list", visibility = "app")]
async fn refresh_view() -> String {
    "refreshed".into()
}

/// The model only.
#[switchboard::tool(name = "model_view", app = "ui://macros/list", visibility = "model")]
async fn model_only_view() -> String {
    "model".into()
}

fn with_views() -> ServerBuilder {
    builder()
        .app(switchboard::server::AppView::new(
            "ui://macros/list",
            "<!doctype html><html></html>",
        ))
        .register(list_view)
        .register(refresh_view)
        .register(model_only_view)
}

/// `app` and `visibility` become `_meta.ui`: a host with the extension sees every link, one
/// without sees plain tools and no app-only one (`[AP-5]`, `[AP-8]`).
#[tokio::test]
async fn ap_5_ap_8_app_and_visibility_become_the_tools_ui_links() {
    use switchboard::types::apps::Visibility;
    let server = with_views().build().unwrap();
    let (a, b) = memory::pair();
    server.serve(b).unwrap();
    let host = Client::builder(Implementation::new("host", "1"))
        .apps()
        .build()
        .connect(a)
        .await
        .unwrap();
    let tools = host.list_tools().await.unwrap();
    let ui = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.ui())
            .unwrap_or_else(|| panic!("{name} is linked: {tools:?}"))
    };
    assert_eq!(
        ui("list_view").resource_uri.as_deref(),
        Some("ui://macros/list")
    );
    assert_eq!(ui("list_view").visibility, None);
    assert_eq!(ui("refresh_view").visibility, Some(vec![Visibility::App]));
    assert_eq!(ui("model_view").visibility, Some(vec![Visibility::Model]));
    assert_eq!(
        host.call_tool("refresh_view", json!({}))
            .await
            .unwrap()
            .content,
        vec![ContentBlock::text("refreshed")]
    );

    let plain = connect(with_views()).await;
    let tools = plain.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["list_view", "model_view"], "no app-only tool");
    assert!(
        tools.iter().all(|t| t.ui().is_none()),
        "plain tools: {tools:?}"
    );
    assert!(plain.call_tool("refresh_view", json!({})).await.is_err());
}
