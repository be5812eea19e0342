//! Middleware on the engine: order, short-circuit, rewrite, scopes, notifications, our own
//! requests, and a panicking layer, over the in-memory transport (a real JSON round trip).
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use switchboard_jsonrpc::memory;
use switchboard_jsonrpc::{
    BoxFuture, Call, Facts, HandlerResult, Layer, Layers, Next, Outgoing, Peer, RequestContext,
    RequestError, RequestOptions, Scope, SendNext, Service, SessionConfig, spawn, spawn_layered,
};
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::methods;
use switchboard_types::{ErrorObject, Notification, RawJson, Request};

/// Echoes every request's method and params back; records notifications.
#[derive(Default)]
struct Echo {
    notes: Arc<Mutex<Vec<String>>>,
}

impl Service for Echo {
    fn call(&self, req: Request, _cx: RequestContext) -> BoxFuture<HandlerResult> {
        let params: Value = req
            .params
            .as_ref()
            .map(|p| serde_json::from_str(p.get()).unwrap())
            .unwrap_or(Value::Null);
        let method = req.method.clone();
        Box::pin(async move { Ok(to_raw(&json!({"method": method, "params": params})).unwrap()) })
    }

    fn notify(&self, n: Notification, _peer: &Peer) {
        self.notes.lock().unwrap().push(n.method);
    }

    fn facts(&self, _cx: Option<&RequestContext>) -> Facts {
        Facts::new("ignored").with_session_id("s-1")
    }
}

/// Records `name>` before and `<name` after, in a shared log.
struct Trace {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
}

impl Layer for Trace {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        self.log.lock().unwrap().push(format!("{}>", self.name));
        let log = self.log.clone();
        let name = self.name;
        let fut = next.run(call);
        Box::pin(async move {
            let r = fut.await;
            log.lock().unwrap().push(format!("<{name}"));
            r
        })
    }
}

/// Refuses every request it sees.
struct Refuse;
impl Layer for Refuse {
    fn handle(&self, call: Call, _next: Next) -> BoxFuture<HandlerResult> {
        let e = ErrorObject::invalid_request(format!("refused {}", call.method()), "refused");
        Box::pin(async move { Err(e) })
    }
}

/// Replaces the params with `{"rewritten": true}` and reports the facts it saw in the result.
struct Rewrite;
impl Layer for Rewrite {
    fn handle(&self, mut call: Call, next: Next) -> BoxFuture<HandlerResult> {
        let facts = call.facts().clone();
        call.set_params(Some(to_raw(&json!({"rewritten": true})).unwrap()));
        let fut = next.run(call);
        Box::pin(async move {
            let mut v: Value = serde_json::from_str(fut.await?.get()).unwrap();
            v["side"] = json!(facts.side);
            v["session"] = json!(facts.session_id.as_deref());
            Ok(to_raw(&v).unwrap())
        })
    }
}

/// Drops every notification.
struct Mute;
impl Layer for Mute {
    fn notification(&self, _n: &Notification, _facts: &Facts) -> bool {
        false
    }
}

/// Adds `_meta.mark` to our own requests.
struct Mark;
impl Layer for Mark {
    fn send(&self, mut call: Outgoing, next: SendNext) -> BoxFuture<Result<RawJson, RequestError>> {
        let mut v: Value = call
            .params
            .as_ref()
            .map(|p| serde_json::from_str(p.get()).unwrap())
            .unwrap_or(json!({}));
        v["_meta"] = json!({"mark": call.facts().side});
        call.params = Some(to_raw(&v).unwrap());
        next.run(call)
    }
}

struct Panics;
impl Layer for Panics {
    fn handle(&self, _call: Call, _next: Next) -> BoxFuture<HandlerResult> {
        panic!("layer bug")
    }
}

/// A server side with `layers` and a plain client side talking to it.
fn pair(layers: Layers) -> (Peer, Arc<Mutex<Vec<String>>>) {
    let (a, b) = memory::pair();
    let echo = Echo::default();
    let notes = echo.notes.clone();
    spawn_layered(
        a,
        Arc::new(echo),
        SessionConfig::default().with_name("server"),
        &layers,
    );
    let client = spawn(b, Arc::new(Echo::default()), SessionConfig::default());
    (client, notes)
}

async fn ask(peer: &Peer, method: &str, params: Value) -> Result<Value, RequestError> {
    let raw = peer
        .request(
            method,
            Some(to_raw(&params).unwrap()),
            RequestOptions::default(),
        )
        .await?;
    Ok(serde_json::from_str(raw.get()).unwrap())
}

#[tokio::test]
async fn layers_run_in_the_order_added_first_in_last_out() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let layers = Layers::new()
        .layer(Trace {
            name: "a",
            log: log.clone(),
        })
        .layer(Trace {
            name: "b",
            log: log.clone(),
        });
    let (client, _) = pair(layers);
    let v = ask(&client, "x", json!({"k": 1})).await.unwrap();
    assert_eq!(v["params"]["k"], 1);
    assert_eq!(*log.lock().unwrap(), vec!["a>", "b>", "<b", "<a"]);
}

#[tokio::test]
async fn a_layer_can_answer_by_itself_and_the_role_never_sees_the_request() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let layers = Layers::new()
        .layer_for(Scope::method("x"), Refuse)
        .layer(Trace {
            name: "inner",
            log: log.clone(),
        });
    let (client, _) = pair(layers);
    match ask(&client, "x", json!({})).await {
        Err(RequestError::Rejected(e)) => assert_eq!(e.message, "refused x"),
        other => panic!("expected the layer's error, got {other:?}"),
    }
    assert!(log.lock().unwrap().is_empty(), "inner layer ran");
    // The session lives on: the next request goes through.
    ask(&client, "y", json!({})).await.unwrap();
    assert_eq!(*log.lock().unwrap(), vec!["inner>", "<inner"]);
}

#[tokio::test]
async fn a_layer_rewrites_params_and_result_and_sees_the_sides_facts() {
    let (client, _) = pair(Layers::new().layer(Rewrite));
    let v = ask(&client, "x", json!({"original": 1})).await.unwrap();
    assert_eq!(v["params"], json!({"rewritten": true}));
    assert_eq!(v["side"], "server", "the engine names the side");
    assert_eq!(v["session"], "s-1", "the role's facts reach the layer");
}

#[tokio::test]
async fn a_scoped_layer_applies_to_its_tool_only() {
    let layers = Layers::new().layer_for(Scope::tool("secret"), Refuse);
    let (client, _) = pair(layers);
    let call = |name: &str| json!({"name": name, "arguments": {}});
    assert!(matches!(
        ask(&client, methods::TOOLS_CALL, call("secret")).await,
        Err(RequestError::Rejected(_))
    ));
    let v = ask(&client, methods::TOOLS_CALL, call("open"))
        .await
        .unwrap();
    assert_eq!(v["params"]["name"], "open");
    // Another method naming the same thing is not in scope.
    ask(&client, methods::PROMPTS_GET, call("secret"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_primitive_scope_takes_every_method_of_it_and_nothing_else() {
    let layers = Layers::new().layer_for(Scope::tools(), Refuse);
    let (client, _) = pair(layers);
    assert!(ask(&client, methods::TOOLS_LIST, json!({})).await.is_err());
    assert!(
        ask(&client, methods::TOOLS_CALL, json!({"name": "t"}))
            .await
            .is_err()
    );
    ask(&client, methods::PROMPTS_LIST, json!({}))
        .await
        .unwrap();
    ask(&client, "custom/thing", json!({})).await.unwrap();
}

#[tokio::test]
async fn a_layer_can_stop_a_notification_before_the_role() {
    let (client, notes) = pair(Layers::new().layer_for(Scope::method("muted"), Mute));
    client.notify("muted", Some(&json!({}))).await.unwrap();
    client.notify("heard", Some(&json!({}))).await.unwrap();
    // A request answered after both: notifications are delivered in frame order before it.
    ask(&client, "x", json!({})).await.unwrap();
    assert_eq!(*notes.lock().unwrap(), vec!["heard".to_owned()]);
}

#[tokio::test]
async fn a_layer_rewrites_our_own_requests_before_they_leave() {
    let (a, b) = memory::pair();
    spawn(a, Arc::new(Echo::default()), SessionConfig::default());
    let client = spawn_layered(
        b,
        Arc::new(Echo::default()),
        SessionConfig::default().with_name("client"),
        &Layers::new().layer(Mark),
    );
    let v = ask(&client, "x", json!({"k": 2})).await.unwrap();
    assert_eq!(v["params"], json!({"k": 2, "_meta": {"mark": "client"}}));
}

#[tokio::test]
async fn a_panicking_layer_is_an_internal_error_and_the_session_lives_on() {
    let (client, _) = pair(Layers::new().layer_for(Scope::method("boom"), Panics));
    match ask(&client, "boom", json!({})).await {
        Err(RequestError::Rejected(e)) => assert_eq!(e.code.0, -32603),
        other => panic!("expected -32603, got {other:?}"),
    }
    ask(&client, "fine", json!({})).await.unwrap();
}

/// Counts sessions and frame bytes, as a metrics layer does.
#[derive(Default)]
struct Counts {
    opened: std::sync::atomic::AtomicUsize,
    closed: std::sync::atomic::AtomicUsize,
    bytes_in: std::sync::atomic::AtomicUsize,
    bytes_out: std::sync::atomic::AtomicUsize,
}
struct Count(Arc<Counts>);
impl Layer for Count {
    fn session_opened(&self, side: &'static str) {
        assert_eq!(side, "server");
        self.0
            .opened
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    fn session_closed(&self, _side: &'static str) {
        self.0
            .closed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    fn frame(&self, _side: &'static str, e: &switchboard_jsonrpc::FrameEvent<'_>) {
        let n = e.text.len();
        let c = match e.direction {
            switchboard_jsonrpc::Flow::Inbound => &self.0.bytes_in,
            switchboard_jsonrpc::Flow::Outbound => &self.0.bytes_out,
        };
        c.fetch_add(n, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test]
async fn every_layer_is_told_of_its_sessions_and_frames_whatever_its_scope() {
    use std::sync::atomic::Ordering::SeqCst;
    let counts = Arc::new(Counts::default());
    // Scoped to a method no frame uses: sessions and frames are still seen.
    let (client, _) = pair(Layers::new().layer_for(Scope::method("never"), Count(counts.clone())));
    assert_eq!(counts.opened.load(SeqCst), 1);
    ask(&client, "x", json!({"k": 1})).await.unwrap();
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"k":1}}"#.len();
    assert!(
        counts.bytes_in.load(SeqCst) >= request,
        "the request's bytes"
    );
    assert!(counts.bytes_out.load(SeqCst) > 0, "the answer's bytes");
    client.close();
    switchboard_test_support::wait::until("the server side's session ends", || {
        counts.closed.load(SeqCst) == 1
    })
    .await;
}
