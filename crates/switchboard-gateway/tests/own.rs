//! A client with upstream sessions of its own (it declared roots, so the upstream may ask it)
//! is served everything of its upstream from them: the tools its own session lists (and their
//! `list_changed`), its resource subscriptions and their updates, and its progress token as
//! it sent it. Another client sees none of it.
//!
//! The upstream here is one server per connection, as a stdio upstream is one process per
//! session: what a client's calls change there, only that client's session sees.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use switchboard_client::{Client, ClientSession, EraMode, RequestOptions};
use switchboard_gateway::{Connector, Gateway};
use switchboard_server::CompletionTarget;
use switchboard_server::Server;
use switchboard_test_support::wait;
use switchboard_types::RequestId;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::prompts::{GetPromptResult, Prompt, PromptArgument};
use switchboard_types::resources::Resource;
use switchboard_types::tools::{CallToolResult, Tool};

mod common;

use common::{connect, names, obj, one_upstream, read_text, text_of};

const WATCHED: &str = "test://watched";
const SERVED_WATCHED: &str = "test://up/watched";

/// One upstream process: `add_dynamic` / `remove_dynamic` register and remove `dynamic` for
/// the calling session (announced with `list_changed`), `trigger` announces an update of
/// `test://watched` and says how many subscribers it reached, `token` reports progress and
/// answers with the progress token it was given.
fn process(n: usize) -> Server {
    let mut prompt = Prompt::new("p");
    prompt.arguments = Some(vec![PromptArgument::new("x")]);
    Server::builder(Implementation::new("process", "1"))
        .prompt(prompt, |_| async { Ok(GetPromptResult::new(Vec::new())) })
        .completion(
            CompletionTarget::Prompt("p".into()),
            "x",
            Arc::new(move |_| vec![format!("process {n}")]),
        )
        .tool(Tool::new("add_dynamic", obj()), |call| async move {
            call.cx
                .session()
                .add_tool(Tool::new("dynamic", obj()), |_| async {
                    Ok(CallToolResult::text("dynamic tool response"))
                })
                .await
                .map_err(|e| switchboard_server::ToolError::new(e.to_string()))?;
            Ok(CallToolResult::text("added"))
        })
        .tool(Tool::new("remove_dynamic", obj()), |call| async move {
            call.cx
                .session()
                .remove_tool("dynamic")
                .await
                .map_err(|e| switchboard_server::ToolError::new(e.to_string()))?;
            Ok(CallToolResult::text("removed"))
        })
        .tool(Tool::new("trigger", obj()), |call| async move {
            let reached = call.cx.resource_updated(WATCHED).await;
            Ok(CallToolResult::text(format!("reached {reached}")))
        })
        .tool(Tool::new("token", obj()), |call| async move {
            let _ = call.cx.progress(1.0, Some(1.0), None).await;
            let token = call.cx.progress_token().map(RequestId::to_value);
            Ok(CallToolResult::text(
                token.map(|t| t.to_string()).unwrap_or_default(),
            ))
        })
        .resource(Resource::new(WATCHED, "watched"), |r| async move {
            Ok(read_text(&r.uri, "watched".into()))
        })
        .build()
        .expect("a server")
}

/// A connector that starts a new [`process`] for each session.
/// (Processes are numbered from 0 in the order they start: the gateway's shared session is
/// process 0.)
fn processes() -> Connector {
    let started = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    Arc::new(move |client: Client| {
        let n = started.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move {
            let (ours, theirs) = switchboard_jsonrpc::memory::pair();
            process(n)
                .serve(theirs)
                .map_err(|e| switchboard_client::ClientError::Handshake(e.to_string()))?;
            client.connect(ours).await
        })
    })
}

fn gateway() -> Gateway {
    one_upstream("up", processes(), EraMode::Legacy, |_| {})
}

/// A client of the gateway; with `roots` it declares roots (and gets sessions of its own).
async fn client(gateway: &Gateway, roots: bool) -> ClientSession {
    let mut b = Client::builder(Implementation::new("front", "1")).era(EraMode::Legacy);
    if roots {
        b = b.roots([serde_json::from_value(json!({"uri": "file:///a"})).expect("a root")]);
    }
    connect(gateway, b.build()).await
}

async fn tool_names(c: &ClientSession) -> Vec<String> {
    names(&c.list_tools().await.expect("tools"))
}

/// `[LC]` `list_changed`, `[SEC]` per-client upstream sessions: the tool a client's call added
/// on its own upstream session is listed for that client (after one `list_changed`), called on
/// its session, and gone (after another) when removed; another client never sees it.
#[tokio::test]
async fn a_tool_added_on_a_clients_own_session_is_listed_and_called_for_that_client_only() {
    let gateway = gateway();
    wait::until("up", || gateway.is_up("up") == Some(true)).await;
    let (a, b) = (client(&gateway, true).await, client(&gateway, false).await);
    assert!(!tool_names(&a).await.contains(&"up_dynamic".to_owned()));
    let changed = wait::spawn_polled({
        let a = a.clone();
        async move { a.tools_changed().await }
    })
    .await;
    let r = a
        .call_tool("up_add_dynamic", json!({}))
        .await
        .expect("added");
    assert_eq!(text_of(&r), "added");
    let listed = changed
        .await
        .expect("joined")
        .expect("a list_changed, re-listed");
    assert!(
        names(&listed).contains(&"up_dynamic".to_owned()),
        "{:?}",
        names(&listed)
    );
    let r = a.call_tool("up_dynamic", json!({})).await.expect("called");
    assert_eq!(text_of(&r), "dynamic tool response");
    // B shares the gateway's session, whose upstream process never added it.
    assert!(!tool_names(&b).await.contains(&"up_dynamic".to_owned()));
    assert!(b.call_tool("up_dynamic", json!({})).await.is_err());
    let changed = wait::spawn_polled({
        let a = a.clone();
        async move { a.tools_changed().await }
    })
    .await;
    a.call_tool("up_remove_dynamic", json!({}))
        .await
        .expect("removed");
    let listed = changed
        .await
        .expect("joined")
        .expect("a list_changed, re-listed");
    assert!(!names(&listed).contains(&"up_dynamic".to_owned()));
    assert!(tool_names(&a).await.contains(&"up_add_dynamic".to_owned()));
}

/// `[RS]` subscriptions: a client with its own session subscribes there, so the update its own
/// call causes reaches it (with the gateway's URI); unsubscribed, its session has no subscriber.
#[tokio::test]
async fn a_clients_subscription_is_held_on_its_own_session_and_its_updates_reach_it() {
    let gateway = gateway();
    wait::until("up", || gateway.is_up("up") == Some(true)).await;
    let a = client(&gateway, true).await;
    // A first call opens A's own session.
    let r = a.call_tool("up_trigger", json!({})).await.expect("called");
    assert_eq!(text_of(&r), "reached 0");
    assert_eq!(gateway.own_sessions("up"), Some(1));
    let updates = Arc::new(Mutex::new(Vec::new()));
    let seen = updates.clone();
    let id = a
        .subscribe(SERVED_WATCHED, move |u| {
            seen.lock().expect("lock").push(u.uri)
        })
        .await
        .expect("subscribed");
    let r = a.call_tool("up_trigger", json!({})).await.expect("called");
    assert_eq!(
        text_of(&r),
        "reached 1",
        "A's own process has A's subscription"
    );
    wait::until("the update reaches A", || {
        !updates.lock().expect("lock").is_empty()
    })
    .await;
    assert_eq!(*updates.lock().expect("lock"), [SERVED_WATCHED]);
    a.unsubscribe(id).await.expect("unsubscribed");
    let r = a.call_tool("up_trigger", json!({})).await.expect("called");
    assert_eq!(text_of(&r), "reached 0", "unsubscribed on A's own session");
}

/// Calls `up_token` with progress; returns the client's token, the token the upstream saw
/// and how many progress updates came back.
async fn call_with_progress(c: &ClientSession) -> (Value, String, usize) {
    let (mine, updates) = (Arc::new(Mutex::new(None)), Arc::new(Mutex::new(0)));
    let (m, u) = (mine.clone(), updates.clone());
    let opts = RequestOptions::default()
        .on_id(move |id| *m.lock().expect("lock") = Some(id.to_value()))
        .with_progress(move |_| *u.lock().expect("lock") += 1);
    let r = c
        .call_tool_with("up_token", json!({}), opts)
        .await
        .expect("called");
    let mine = mine.lock().expect("lock").clone().expect("an id");
    let n = *updates.lock().expect("lock");
    (mine, text_of(&r), n)
}

/// `[UT]` progress: on its own upstream session a client's progress token reaches the upstream
/// as it sent it (and the progress comes back under it); on the gateway's shared session the
/// gateway's own token is used, so that two clients' tokens never meet upstream.
#[tokio::test]
async fn a_clients_progress_token_is_passed_on_as_it_is_on_its_own_session_only() {
    let gateway = gateway();
    wait::until("up", || gateway.is_up("up") == Some(true)).await;
    let (a, b) = (client(&gateway, true).await, client(&gateway, false).await);
    // Several requests, so that the clients' numbers run ahead of the gateway's sessions'
    // (the gateway answers lists itself): a token passed on could not be one by chance.
    for _ in 0..10 {
        b.list_tools().await.expect("tools");
        a.list_tools().await.expect("tools");
    }
    let (mine, seen, updates) = call_with_progress(&a).await;
    assert_eq!(seen, mine.to_string(), "the upstream saw A's own token");
    assert_eq!(updates, 1, "A's progress came back");
    let (mine, seen, updates) = call_with_progress(&b).await;
    assert_ne!(
        seen,
        mine.to_string(),
        "the shared session uses the gateway's token"
    );
    assert!(!seen.is_empty());
    assert_eq!(updates, 1, "B's progress came back");
}

/// The completion values `c` gets for argument `x` of prompt `up_p`.
async fn completed(c: &ClientSession) -> Value {
    let r: Value = c
        .request(
            switchboard_types::methods::COMPLETION_COMPLETE,
            json!({"ref": {"type": "ref/prompt", "name": "up_p"}, "argument": {"name": "x", "value": ""}}),
            RequestOptions::default(),
        )
        .await
        .expect("completed");
    r["completion"]["values"].clone()
}

/// `[CP]` completion, `[SEC]` per-client upstream sessions: a client that holds an upstream
/// session of its own completes on it (what the upstream asks meanwhile can reach only that
/// client); another client completes on the gateway's shared session.
#[tokio::test]
async fn a_clients_completion_goes_through_its_own_upstream_session() {
    let gateway = gateway();
    wait::until("up", || gateway.is_up("up") == Some(true)).await;
    let (a, b) = (client(&gateway, true).await, client(&gateway, false).await);
    // Before A's first call it has no session of its own: the shared one (process 0) answers.
    assert_eq!(completed(&a).await, json!(["process 0"]));
    a.call_tool("up_trigger", json!({})).await.expect("called");
    assert_eq!(gateway.own_sessions("up"), Some(1));
    assert_eq!(completed(&a).await, json!(["process 1"]));
    assert_eq!(completed(&b).await, json!(["process 0"]));
}
