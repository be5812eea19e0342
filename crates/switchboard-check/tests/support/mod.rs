//! What the check tests share: a server of ours in process, and a hand-written server that
//! answers each request as a script says.
#![allow(dead_code)]

use std::convert::Infallible;

use serde_json::{Value, json};
use switchboard_check::Target;
use switchboard_jsonrpc::memory::{self, MemoryTransport};
use switchboard_server::Server;

/// `server` in process: each connection is a fresh in-memory pair whose far end it serves.
pub(crate) fn in_process(server: Server) -> Target {
    Target::in_process(move || {
        let (ours, theirs) = memory::pair();
        server.serve(theirs).map(|_session| ours)
    })
}

/// A hand-written server in process: each request (a frame with an id and a method) is
/// answered with what `reply` gives for its method and the whole frame (`{"result": ...}` or
/// `{"error": ...}`, to which the id is added); whatever it cannot read is ignored.
pub(crate) fn scripted(reply: fn(&str, &Value) -> Value) -> Target {
    Target::in_process(move || {
        let (ours, mut theirs) = memory::pair();
        tokio::spawn(async move {
            while let Some(text) = theirs.recv_text().await {
                let Ok(frame) = serde_json::from_str::<Value>(&text) else {
                    continue;
                };
                let (Some(id), Some(method)) =
                    (frame.get("id"), frame.get("method").and_then(Value::as_str))
                else {
                    continue;
                };
                let mut answer = reply(method, &frame);
                answer["jsonrpc"] = json!("2.0");
                answer["id"] = id.clone();
                if theirs.send_text(answer.to_string()).await.is_err() {
                    break;
                }
            }
        });
        Ok::<MemoryTransport, Infallible>(ours)
    })
}
