//! A transport that runs the session itself (`Transport::driver_slot`): the engine spawns no
//! task, the session answers only while its `Driver` is polled, a `Driver` dropped before its
//! end goes on as a task, and a closed session's `Driver` ends.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use futures::FutureExt;
use serde_json::Value;
use switchboard_jsonrpc::memory::{self, MemorySink, MemorySource, MemoryTransport};
use switchboard_jsonrpc::{
    BoxFuture, DriverSlot, HandlerResult, Peer, RequestContext, Service, SessionConfig, Transport,
    spawn,
};
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::{ErrorObject, Notification, Request};

/// `echo` answers its params at once.
struct Echo;

impl Service for Echo {
    fn call(&self, req: Request, _cx: RequestContext) -> BoxFuture<HandlerResult> {
        Box::pin(async move {
            match req.method.as_str() {
                "echo" => Ok(req.params.unwrap_or_else(|| to_raw(&Value::Null).unwrap())),
                m => Err(ErrorObject::method_not_found(m)),
            }
        })
    }

    fn notify(&self, _notification: Notification, _peer: &Peer) {}
}

/// The in-memory transport, offering a driver slot.
struct Slotted(MemoryTransport, DriverSlot);

impl Transport for Slotted {
    type Sink = MemorySink;
    type Source = MemorySource;

    fn driver_slot(&self) -> Option<DriverSlot> {
        Some(self.1.clone())
    }

    fn split(self) -> (MemorySink, MemorySource) {
        self.0.split()
    }
}

const ECHO: &str = r#"{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":1}}"#;

/// Lets every task that is ready run (the runtime has one thread).
async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
}

/// Sends `ECHO` from the other end and waits (at most 5 s) for its answer.
async fn echo_is_answered(b: &mut MemoryTransport, how: &str) {
    b.send_text(ECHO.to_owned()).await.unwrap();
    let answer = tokio::time::timeout(std::time::Duration::from_secs(5), b.recv_text())
        .await
        .expect(how)
        .unwrap();
    assert!(answer.contains(r#""id":7"#), "{answer}");
}

/// A session on a transport offering a slot: its handle, the other end, the slot.
fn slotted() -> (Peer, MemoryTransport, DriverSlot) {
    let (a, b) = memory::pair();
    let slot = DriverSlot::new();
    let peer = spawn(
        Slotted(a, slot.clone()),
        Arc::new(Echo),
        SessionConfig::default(),
    );
    (peer, b, slot)
}

#[tokio::test(flavor = "current_thread")]
async fn a_session_left_in_its_slot_answers_only_while_its_driver_runs() {
    let (peer, mut b, slot) = slotted();
    let mut driver = slot.take().expect("the engine left its driver in the slot");
    assert!(slot.take().is_none(), "taken once");
    b.send_text(ECHO.to_owned()).await.unwrap();
    settle().await;
    assert!(
        b.recv_text().now_or_never().is_none(),
        "no task of the session runs: nothing is answered before the driver is polled"
    );
    let answer = tokio::select! {
        biased;
        t = b.recv_text() => t.unwrap(),
        () = &mut driver => panic!("the session ended"),
    };
    let v: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(v["id"], 7);
    assert_eq!(v["result"]["a"], 1);
    peer.close();
    tokio::time::timeout(std::time::Duration::from_secs(5), driver)
        .await
        .expect("a closed session's driver ends");
    assert!(peer.is_closed());
}

#[tokio::test(flavor = "current_thread")]
async fn a_driver_dropped_before_its_end_goes_on_as_a_task() {
    let (peer, mut b, slot) = slotted();
    drop(slot.take().unwrap());
    echo_is_answered(&mut b, "answered by the driver's own task").await;
    assert!(!peer.is_closed());
}

#[tokio::test(flavor = "current_thread")]
async fn without_a_slot_the_engine_runs_its_own_tasks() {
    let (a, mut b) = memory::pair();
    let _peer = spawn(a, Arc::new(Echo), SessionConfig::default());
    echo_is_answered(&mut b, "answered").await;
}
