use switchboard::client::Client;
use switchboard::jsonrpc::memory;
use switchboard::server::{AppView, Server};
use switchboard::types::apps::{UiCsp, UiResourceMeta};
use switchboard::types::Implementation;

/// Counts the notes; a host with MCP Apps shows the result in the `ui://notes/count` view.
#[switchboard::tool(app = "ui://notes/count")]
async fn count_notes() -> String { "3 notes".into() }

#[tokio::test]
async fn a_tool_renders_in_an_app_view() {
    let html = "<!doctype html><html><body><p id=count></p></body></html>";
    let meta = UiResourceMeta { csp: Some(UiCsp::none()), prefers_border: Some(true), ..Default::default() };
    let server = Server::builder(Implementation::new("notes", "1.0"))
        .app(AppView::new("ui://notes/count", html).meta(meta))
        .register(count_notes)
        .build().unwrap();
    let (a, b) = memory::pair();
    server.serve(b).unwrap();
    let host = Client::builder(Implementation::new("host", "1.0")).apps().build().connect(a).await.unwrap();
    let tools = host.list_tools().await.unwrap();
    let uri = tools[0].ui().and_then(|ui| ui.resource_uri).unwrap();
    let view = host.read_app(&uri).await.unwrap();
    assert_eq!((view.html.as_str(), view.meta.prefers_border), (html, Some(true)));
}
