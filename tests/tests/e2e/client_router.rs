//! The client's method table: the server's extension requests and notifications reach typed
//! handlers; an ambiguous table makes `connect` fail before anything is sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::json;
use switchboard::client::{Client, ClientError};
use switchboard::jsonrpc::{RequestOptions, RouteError, memory};
use switchboard::server::{Server, ToolError};
use switchboard::types::catalogue::{
    CreateMessage, LoggingMessage, Method, NotificationMethod, RequestMethod,
};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, Tool};

/// `acme/confirm`: the server asks the host to confirm something.
struct Confirm;
impl Method for Confirm {
    const NAME: &'static str = "acme/confirm";
}
#[derive(Serialize, Deserialize)]
struct Question {
    question: String,
}
#[derive(Serialize, Deserialize)]
struct Answer {
    yes: bool,
}
impl RequestMethod for Confirm {
    type Params = Question;
    type Result = Answer;
}

/// `notifications/acme/hello`.
struct Hello;
impl Method for Hello {
    const NAME: &'static str = "notifications/acme/hello";
}
#[derive(Serialize, Deserialize)]
struct Greeting {
    n: usize,
}
impl NotificationMethod for Hello {
    type Params = Greeting;
}

fn server() -> Server {
    Server::builder(Implementation::new("asks", "1"))
        .tool(
            Tool::new("ask", json!({"type": "object"})),
            |call| async move {
                let peer = call.cx.session().peer().clone();
                peer.notify(Hello::NAME, Some(&Greeting { n: 7 }))
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?;
                let a: Answer = peer
                    .call(
                        Confirm::NAME,
                        Some(&Question {
                            question: "deploy?".into(),
                        }),
                        RequestOptions::default(),
                    )
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?;
                let bad: Result<Answer, _> = peer
                    .call(
                        Confirm::NAME,
                        Some(&json!({"q": 1})),
                        RequestOptions::default(),
                    )
                    .await;
                let code = bad.err().and_then(|e| e.as_rejection().map(|r| r.code.0));
                Ok(CallToolResult::text(format!("{} {code:?}", a.yes)))
            },
        )
        .build()
        .expect("server")
}

#[tokio::test]
async fn the_servers_extension_request_and_notification_reach_typed_handlers() {
    let hellos = Arc::new(AtomicUsize::new(0));
    let seen = hellos.clone();
    let client = Client::builder(Implementation::new("host", "1"))
        .era(switchboard::client::EraMode::Legacy)
        .request::<Confirm, _, _>(|q: Question, _cx| async move {
            Ok(Answer {
                yes: q.question == "deploy?",
            })
        })
        .notification::<Hello, _>(move |g: Greeting, session| {
            assert!(session.negotiated().capabilities.tools.is_some());
            seen.fetch_add(g.n, Ordering::SeqCst);
        })
        .build();
    let (a, b) = memory::pair();
    server().serve(b).expect("serve");
    let session = client.connect(a).await.expect("connect");
    let r = session.call_tool("ask", json!({})).await.expect("call");
    assert_eq!(r.is_error, None, "{r:?}");
    let text = serde_json::to_value(&r.content).expect("json")[0]["text"].clone();
    assert_eq!(
        text, "true Some(-32602)",
        "typed answer; bad params are -32602"
    );
    assert_eq!(hellos.load(Ordering::SeqCst), 7);
}

#[tokio::test]
async fn an_ambiguous_client_table_fails_connect_and_sends_nothing() {
    let client = Client::builder(Implementation::new("host", "1"))
        .era(switchboard::client::EraMode::Legacy)
        .notification::<LoggingMessage, _>(|_, _| {})
        .build();
    let (a, mut b) = memory::pair();
    match client.connect(a).await {
        Err(ClientError::Route(RouteError::Duplicate { method })) => {
            assert_eq!(method, "notifications/message")
        }
        other => panic!("expected a duplicate route, got {other:?}"),
    }
    let client = Client::builder(Implementation::new("host", "1"))
        .era(switchboard::client::EraMode::Legacy)
        .request::<switchboard::types::catalogue::ListTools, _, _>(|_, _cx| async move {
            Err(switchboard::types::ErrorObject::internal(
                "clients never receive tools/list",
            ))
        })
        .build();
    assert!(matches!(
        client.connect(memory::pair().0).await,
        Err(ClientError::Route(RouteError::NotReceived {
            side: "client",
            ..
        }))
    ));
    let sampling_twice = Client::builder(Implementation::new("host", "1"))
        .era(switchboard::client::EraMode::Legacy)
        .request::<CreateMessage, _, _>(|_, _cx| async move {
            Err(switchboard::types::ErrorObject::internal(
                "the built-in route answers sampling",
            ))
        })
        .build();
    assert!(matches!(
        sampling_twice.connect(memory::pair().0).await,
        Err(ClientError::Route(RouteError::Duplicate { .. }))
    ));
    let sent = tokio::time::timeout(std::time::Duration::from_millis(50), b.recv_text()).await;
    assert!(!matches!(sent, Ok(Some(_))), "nothing is sent: {sent:?}");
}
