//! The server's method table: extension requests and notifications with typed params, catalogue
//! methods routed by the user, and the build errors of a table that would be ambiguous.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use switchboard::jsonrpc::memory;
use switchboard::server::{RouteError, Server, ServerBuilder, ServerError};
use switchboard::types::catalogue::{
    CallTool, CreateMessage, Initialized, Method, NotificationMethod, RequestMethod,
    RootsListChanged,
};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::{ErrorObject, ProtocolVersion};
use switchboard_tests::RawPeer;

/// `acme/echo`: an extension request.
struct Echo;
impl Method for Echo {
    const NAME: &'static str = "acme/echo";
}
#[derive(Debug, Serialize, Deserialize)]
struct EchoParams {
    text: String,
    #[serde(default)]
    times: u32,
}
#[derive(Debug, Serialize, Deserialize)]
struct EchoResult {
    echoed: String,
}
impl RequestMethod for Echo {
    type Params = EchoParams;
    type Result = EchoResult;
}

/// `notifications/acme/poke`: an extension notification.
struct Poke;
impl Method for Poke {
    const NAME: &'static str = "notifications/acme/poke";
}
#[derive(Debug, Serialize, Deserialize)]
struct PokeParams {
    n: usize,
}
impl NotificationMethod for Poke {
    type Params = PokeParams;
}

/// `acme/boom`: an extension request whose handler panics before it returns a future.
struct Boom;
impl Method for Boom {
    const NAME: &'static str = "acme/boom";
}
impl RequestMethod for Boom {
    type Params = serde_json::Map<String, Value>;
    type Result = Value;
}

fn builder() -> ServerBuilder {
    Server::builder(Implementation::new("router", "1"))
}

fn server(pokes: Arc<AtomicUsize>, roots_changed: Arc<AtomicUsize>) -> Server {
    builder()
        .request::<Echo, _, _>(|p: EchoParams, _cx| async move {
            Ok(EchoResult {
                echoed: p.text.repeat(p.times.max(1) as usize),
            })
        })
        .request::<Boom, _, _>(|_, _cx| -> std::future::Ready<Result<Value, ErrorObject>> {
            panic!("a handler bug")
        })
        .notification::<Poke, _>(move |p: PokeParams, _session| {
            pokes.fetch_add(p.n, Ordering::SeqCst);
        })
        .notification::<RootsListChanged, _>(move |_, session| {
            assert!(session.client().is_some(), "the handler sees its session");
            roots_changed.fetch_add(1, Ordering::SeqCst);
        })
        .notification::<Panicky, _>(|_, _| panic!("a notification handler bug"))
        .build()
        .expect("a table without duplicates builds")
}

/// `notifications/acme/panicky`: its handler panics.
struct Panicky;
impl Method for Panicky {
    const NAME: &'static str = "notifications/acme/panicky";
}
impl NotificationMethod for Panicky {
    type Params = serde_json::Map<String, Value>;
}

async fn connect(s: &Server) -> RawPeer {
    let (a, b) = memory::pair();
    s.serve(b).expect("serve");
    RawPeer::new(a, "2025-11-25")
}

#[tokio::test]
async fn an_extension_request_gets_typed_params_and_a_typed_result() {
    let s = server(Arc::default(), Arc::default());
    let mut c = connect(&s).await;
    c.handshake("2025-11-25", json!({"roots": {"listChanged": true}}))
        .await;
    let r = c
        .request(json!(1), "acme/echo", json!({"text": "ab", "times": 2}))
        .await;
    assert_eq!(r["result"], json!({"echoed": "abab"}));
    let r = c.request(json!(2), "acme/echo", json!({"times": 2})).await;
    assert_eq!(r["error"]["code"], -32602, "params that do not parse: {r}");
    assert_eq!(r["error"]["data"]["method"], "acme/echo");
    let r = c.request(json!(3), "acme/echo", Value::Null).await;
    assert_eq!(
        r["error"]["code"], -32602,
        "absent params read as {{}}: {r}"
    );
    let r = c.request(json!(4), "acme/unknown", json!({})).await;
    assert_eq!(r["error"]["code"], -32601);
}

#[tokio::test]
async fn lc_1_an_extension_request_waits_for_the_handshake_like_any_other() {
    let s = server(Arc::default(), Arc::default());
    let mut c = connect(&s).await;
    let r = c.request(json!(1), "acme/echo", json!({"text": "x"})).await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
    let r = c.request(json!(2), "acme/unknown", json!({})).await;
    assert_eq!(
        r["error"]["code"], -32601,
        "unknown is unknown, before and after"
    );
}

#[tokio::test]
async fn extension_and_catalogue_notifications_reach_their_handlers_after_the_handshake() {
    let pokes = Arc::new(AtomicUsize::new(0));
    let roots = Arc::new(AtomicUsize::new(0));
    let s = server(pokes.clone(), roots.clone());
    let mut c = connect(&s).await;
    c.notify("notifications/acme/poke", json!({"n": 100})).await;
    c.handshake("2025-11-25", json!({"roots": {"listChanged": true}}))
        .await;
    assert_eq!(
        pokes.load(Ordering::SeqCst),
        0,
        "ignored before the handshake"
    );
    c.notify("notifications/acme/poke", json!({"n": 2})).await;
    c.notify("notifications/acme/poke", json!({"n": "not a number"}))
        .await;
    c.notify("notifications/acme/poke", json!({"n": 3})).await;
    c.notify("notifications/roots/list_changed", Value::Null)
        .await;
    c.sync().await;
    assert_eq!(
        pokes.load(Ordering::SeqCst),
        5,
        "unreadable params are dropped"
    );
    assert_eq!(roots.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_panicking_extension_handler_never_takes_the_session_down() {
    let s = server(Arc::default(), Arc::default());
    let mut c = connect(&s).await;
    c.handshake("2025-11-25", json!({})).await;
    let r = c.request(json!(1), "acme/boom", json!({})).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    c.notify("notifications/acme/panicky", json!({})).await;
    c.sync().await;
    let r = c
        .request(json!(2), "acme/echo", json!({"text": "alive"}))
        .await;
    assert_eq!(r["result"]["echoed"], "alive");
}

#[tokio::test]
async fn cp_1_a_routed_catalogue_method_is_gated_by_its_capability() {
    let s = server(Arc::default(), Arc::default());
    let mut c = connect(&s).await;
    c.handshake("2025-11-25", json!({})).await;
    let r = c
        .request(json!(1), "tasks/get", json!({"taskId": "t"}))
        .await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
    assert_eq!(r["error"]["data"]["reason"], "capability_not_declared");
    assert_eq!(r["error"]["data"]["capability"], "tasks");
}

fn route_error(b: ServerBuilder) -> RouteError {
    match b.build() {
        Err(ServerError::Route(e)) => e,
        other => panic!("expected a route error, got {other:?}"),
    }
}

#[test]
fn registering_a_method_twice_fails_the_build() {
    let echo = |p: EchoParams, _cx| async move { Ok(EchoResult { echoed: p.text }) };
    let e = route_error(
        builder()
            .request::<Echo, _, _>(echo)
            .request::<Echo, _, _>(echo),
    );
    assert_eq!(
        e,
        RouteError::Duplicate {
            method: "acme/echo".into()
        }
    );
    let e = route_error(builder().request::<CallTool, _, _>(|_, _cx| async move {
        Err(ErrorObject::internal(
            "shadowing the server's own tools/call",
        ))
    }));
    assert!(matches!(e, RouteError::Duplicate { .. }), "{e}");
    let e = route_error(builder().notification::<Initialized, _>(|_, _| {}));
    assert!(matches!(e, RouteError::Duplicate { .. }), "{e}");
    let e = route_error(
        builder()
            .notification::<Poke, _>(|_, _| {})
            .notification::<Poke, _>(|_, _| {}),
    );
    assert!(matches!(e, RouteError::Duplicate { .. }), "{e}");
}

#[test]
fn a_method_servers_never_receive_cannot_be_routed() {
    let e = route_error(
        builder().request::<CreateMessage, _, _>(|_, _cx| async move {
            Err(ErrorObject::internal(
                "a server never receives sampling requests",
            ))
        }),
    );
    assert_eq!(
        e,
        RouteError::NotReceived {
            method: "sampling/createMessage".into(),
            side: "server",
            kind: "request"
        }
    );
    assert!(ProtocolVersion::LATEST.is_supported());
}
