//! The server's method table. Server side only.
//!
//! The MCP methods the server serves itself (`initialize`, `tools/call`, ...) are built-in
//! routes; users add routes for extension methods (a vendor-prefixed `acme/echo`, say) or for
//! catalogue methods the server does not serve itself (`notifications/roots/list_changed`) with
//! [`ServerBuilder::request`](crate::ServerBuilder::request) and
//! [`ServerBuilder::notification`](crate::ServerBuilder::notification). The table itself, its
//! duplicate checks and the typed erasure are [`switchboard_jsonrpc::router`]'s.

use switchboard_jsonrpc::router::{ErasedNotification, ErasedRequest, MethodTable};
use switchboard_jsonrpc::{BoxFuture, HandlerResult, RequestContext};
use switchboard_types::Request;
use switchboard_types::catalogue::Side;

use crate::context::Context;
use crate::session::ServerSession;

/// A built-in request route: a method of the server's own service `S`.
pub(crate) type Builtin<S> = fn(&S, Request, RequestContext) -> BoxFuture<HandlerResult>;

/// What answers one request method.
pub(crate) enum RequestRoute<S> {
    /// The server's own handler.
    Builtin(Builtin<S>),
    /// A handler registered by the user.
    User(ErasedRequest<Context>),
}

impl<S> Clone for RequestRoute<S> {
    fn clone(&self) -> Self {
        match self {
            RequestRoute::Builtin(f) => RequestRoute::Builtin(*f),
            RequestRoute::User(h) => RequestRoute::User(h.clone()),
        }
    }
}

/// What takes one notification method.
#[derive(Clone)]
pub(crate) enum NotificationRoute {
    /// Handled by the server itself (the lifecycle) or by the engine (cancellation, progress).
    Builtin,
    /// A handler registered by the user; runs inline, in frame order.
    User(ErasedNotification<ServerSession>),
}

/// The method table of one server whose own service is `S`.
pub(crate) type Router<S> = MethodTable<RequestRoute<S>, NotificationRoute>;

/// The table with the server's own routes: `requests` answered by `S`, and `notifications`
/// taken by the server's lifecycle or the engine.
pub(crate) fn builtin_router<S>(
    requests: impl IntoIterator<Item = (&'static str, Builtin<S>)>,
    notifications: impl IntoIterator<Item = &'static str>,
) -> Router<S> {
    let mut router = Router::new(Side::Server);
    for (method, f) in requests {
        let added = router.add_request(method, RequestRoute::Builtin(f));
        debug_assert!(added.is_ok(), "built-in routes are distinct");
    }
    for method in notifications {
        let added = router.add_notification(method, NotificationRoute::Builtin);
        debug_assert!(added.is_ok(), "built-in routes are distinct");
    }
    router
}
