//! Shared by the transport's tests: a service that echoes and records.
#![allow(dead_code, clippy::unwrap_used, unreachable_pub)]

use std::sync::{Arc, Mutex};

use switchboard_jsonrpc::{BoxFuture, HandlerResult, Peer, RequestContext, Service};
use switchboard_types::{ErrorObject, Notification, Request};

/// `echo` answers with its params; anything else is -32601. Notifications are recorded. Over a
/// `cat` child, our own requests come back to us, so this service answers them, and the answers
/// come back again to resolve the calls.
#[derive(Default)]
pub struct Echo {
    /// The methods of the notifications received, in order.
    pub notes: Arc<Mutex<Vec<String>>>,
}

impl Service for Echo {
    fn call(&self, req: Request, _cx: RequestContext) -> BoxFuture<HandlerResult> {
        Box::pin(async move {
            match req.method.as_str() {
                "echo" => Ok(req
                    .params
                    .unwrap_or_else(switchboard_types::jsonrpc::empty_object)),
                m => Err(ErrorObject::method_not_found(m)),
            }
        })
    }

    fn notify(&self, n: Notification, _peer: &Peer) {
        self.notes.lock().unwrap().push(n.method);
    }
}
