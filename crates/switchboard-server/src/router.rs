//! The server's method table. Server side only.
//!
//! The MCP methods the server serves itself (`initialize`, `tools/call`, ...) are built-in
//! routes; users add routes for extension methods (a vendor-prefixed `acme/echo`, say) or for
//! catalogue methods the server does not serve itself (`notifications/roots/list_changed`) with
//! [`ServerBuilder::request`](crate::ServerBuilder::request) and
//! [`ServerBuilder::notification`](crate::ServerBuilder::notification). The table itself, its
//! duplicate checks and the typed erasure are [`switchboard_jsonrpc::MethodTable`]'s.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use switchboard_jsonrpc::{BoxFuture, HandlerResult, RequestContext};
use switchboard_jsonrpc::{ErasedNotification, ErasedRequest, MethodTable, invalid_params};
use switchboard_types::catalogue::{RequestMethod, Side};
use switchboard_types::{ErrorCode, ErrorObject, Request};

use crate::context::Context;
use crate::session::ServerSession;

/// A built-in request route: the server's own handler of one method, on its service `S`.
pub(crate) type Builtin<S> =
    Arc<dyn Fn(&S, Request, RequestContext) -> BoxFuture<HandlerResult> + Send + Sync>;

/// The handler of catalogue request `M` on the service `S`: its params, parsed once as the
/// marker's `M::Params`, and the request they came in.
pub(crate) type Typed<S, M> =
    fn(&S, <M as RequestMethod>::Params, Request, RequestContext) -> BoxFuture<HandlerResult>;

/// A check of a request's raw params made before they are parsed (a bound in bytes).
pub(crate) type Before<S> = fn(&S, &Request) -> Result<(), ErrorObject>;

/// The server's own request routes, each named by its catalogue marker: the method name and
/// the params type come from the marker, so a route cannot name a method the catalogue lacks
/// or parse what the method does not take.
pub(crate) struct Builtins<S> {
    routes: Vec<(&'static str, Builtin<S>)>,
}

impl<S: 'static> Builtins<S> {
    pub(crate) fn new() -> Self {
        Builtins { routes: Vec::new() }
    }

    /// Routes `M` to `f`, its params parsed as `M::Params` (-32602 when they do not parse).
    pub(crate) fn request<M: RequestMethod>(self, f: Typed<S, M>) -> Self {
        self.bounded::<M>(|_, _| Ok(()), f)
    }

    /// Routes `M` to `f` as [`Builtins::request`] does, once `before` accepted the raw params.
    pub(crate) fn bounded<M: RequestMethod>(mut self, before: Before<S>, f: Typed<S, M>) -> Self {
        let route: Builtin<S> =
            Arc::new(
                move |s, req, cx| match before(s, &req).and_then(|()| params::<M>(&req)) {
                    Ok(p) => f(s, p, req, cx),
                    Err(e) => ready(Err(e)),
                },
            );
        self.routes.push((M::NAME, route));
        self
    }

    /// Routes `M` to `f`, its params read as `P`: `M::Params`' members with its checks and
    /// errors, less what the route does not use (see [`ReadAs`]).
    pub(crate) fn request_as<M: RequestMethod, P: ReadAs<M> + 'static>(
        mut self,
        f: fn(&S, P, Request, RequestContext) -> BoxFuture<HandlerResult>,
    ) -> Self {
        let route: Builtin<S> = Arc::new(move |s, req, cx| match params_as::<M, P>(&req) {
            Ok(p) => f(s, p, req, cx),
            Err(e) => ready(Err(e)),
        });
        self.routes.push((M::NAME, route));
        self
    }

    /// Routes `M` to `f`, which takes no params and never parses them (`ping`,
    /// `server/discover`: whatever comes is ignored).
    pub(crate) fn unparsed<M: RequestMethod>(
        mut self,
        f: fn(&S, Request, RequestContext) -> BoxFuture<HandlerResult>,
    ) -> Self {
        self.routes.push((M::NAME, Arc::new(f)));
        self
    }

    /// The routes, by method name.
    pub(crate) fn into_routes(self) -> Vec<(&'static str, Builtin<S>)> {
        self.routes
    }
}

/// A future that is ready with `r`.
pub(crate) fn ready(r: HandlerResult) -> BoxFuture<HandlerResult> {
    Box::pin(std::future::ready(r))
}

/// The params of catalogue request `M`, parsed once; a failure is -32602 naming what is wrong.
/// Absent params are read as `{}` for a paginated list (its params are all optional) and as
/// `null` otherwise (its params are required, and their absence is reported as such).
pub(crate) fn params<M: RequestMethod>(req: &Request) -> Result<M::Params, ErrorObject> {
    parse_as(req, absent::<M>())
}

/// What absent params of `M` are read as (see [`params`]).
fn absent<M: RequestMethod>() -> &'static str {
    match M::SPEC.and_then(|s| s.list_member) {
        Some(_) => "{}",
        None => "null",
    }
}

/// A reader of the params of catalogue request `M` that a route uses in place of `M::Params`:
/// it takes and refuses exactly the texts `M::Params` does, with the same errors, and keeps
/// less (a member the route never reads is checked, not built).
pub(crate) trait ReadAs<M: RequestMethod>: DeserializeOwned {}

/// The params of `M` read as `P` (as [`params`] reads them as `M::Params`).
fn params_as<M: RequestMethod, P: ReadAs<M>>(req: &Request) -> Result<P, ErrorObject> {
    parse_as(req, absent::<M>())
}

/// Parses required params; a failure is -32602 naming what is wrong.
pub(crate) fn parse<T: DeserializeOwned>(req: &Request) -> Result<T, ErrorObject> {
    parse_as(req, "null")
}

fn parse_as<T: DeserializeOwned>(req: &Request, absent: &str) -> Result<T, ErrorObject> {
    let text = req.params.as_ref().map_or(absent, |p| p.get());
    serde_json::from_str(text).map_err(|e| invalid_params(&req.method, &e))
}

/// -32602 (`reason`, with the limit) when the request's params are longer than `limit` bytes
/// of JSON: for the requests whose params a session keeps while it lives (`initialize`, a
/// `subscriptions/listen` filter).
pub(crate) fn params_within(req: &Request, limit: usize, reason: &str) -> Result<(), ErrorObject> {
    let bytes = req.params.as_ref().map_or(0, |p| p.get().len());
    if bytes <= limit {
        return Ok(());
    }
    Err(ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        format!(
            "{} params of {bytes} bytes: at most {limit} are accepted",
            req.method
        ),
    )
    .with_data(serde_json::json!({"reason": reason, "limit": limit})))
}

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
            RequestRoute::Builtin(f) => RequestRoute::Builtin(f.clone()),
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
