//! The server's method table: one route per request or notification method, built once per
//! server. Server side only.
//!
//! The MCP methods the server serves itself (`initialize`, `tools/call`, ...) are built-in
//! routes; users add routes for extension methods (a vendor-prefixed `acme/echo`, say) or for
//! catalogue methods the server does not serve itself (`notifications/roots/list_changed`) with
//! [`ServerBuilder::request`](crate::ServerBuilder::request) and
//! [`ServerBuilder::notification`](crate::ServerBuilder::notification). Params are parsed into the
//! method's type before the handler runs (a failure is -32602); the result is serialised after.
//! Registering a method twice, or a method this side never receives, fails the build.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use switchboard_jsonrpc::{BoxFuture, HandlerResult, RequestContext};
use switchboard_types::catalogue::{
    self, Direction, MethodKind, MethodSpec, NotificationMethod, RequestMethod,
};
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::{ErrorCode, ErrorObject, RawJson, Request};

use crate::context::Context;
use crate::service::ServerService;
use crate::session::SessionHandle;

/// A built-in request route: a method of the server's own service.
pub(crate) type Builtin = fn(&ServerService, Request, RequestContext) -> BoxFuture<HandlerResult>;

/// A user request route, type-erased.
pub(crate) type RequestHandler =
    Arc<dyn Fn(Option<RawJson>, Context) -> BoxFuture<HandlerResult> + Send + Sync>;

/// A user notification route, type-erased; runs inline, in frame order.
pub(crate) type NotificationHandler = Arc<dyn Fn(Option<&RawJson>, &SessionHandle) + Send + Sync>;

/// What answers one request method.
#[derive(Clone)]
pub(crate) enum RequestRoute {
    /// The server's own handler.
    Builtin(Builtin),
    /// A handler registered by the user.
    User(RequestHandler),
}

/// What takes one notification method.
#[derive(Clone)]
pub(crate) enum NotificationRoute {
    /// Handled by the server itself (the lifecycle) or by the engine (cancellation, progress).
    Builtin,
    /// A handler registered by the user.
    User(NotificationHandler),
}

/// Why a route could not be registered; reported by
/// [`ServerBuilder::build`](crate::ServerBuilder::build).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RouteError {
    /// The method already has a route (the server's own, or an earlier registration).
    #[error("method {method} is registered twice")]
    Duplicate {
        /// The method.
        method: String,
    },
    /// The catalogue says a server never receives this method (e.g. `sampling/createMessage`),
    /// or it is a request registered as a notification or the other way round.
    #[error("method {method} is not received by a server as a {kind}")]
    NotReceived {
        /// The method.
        method: String,
        /// `request` or `notification`.
        kind: &'static str,
    },
    /// Not a usable method name (empty).
    #[error("method names may not be empty")]
    EmptyName,
}

/// One method's route and its catalogue entry (none for an extension method).
#[derive(Clone)]
pub(crate) struct Entry<R> {
    pub(crate) route: R,
    pub(crate) spec: Option<&'static MethodSpec>,
}

/// The method table of one server.
#[derive(Clone, Default)]
pub(crate) struct Router {
    requests: HashMap<Box<str>, Entry<RequestRoute>>,
    notifications: HashMap<Box<str>, Entry<NotificationRoute>>,
}

impl fmt::Debug for Router {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut requests: Vec<&str> = self.requests.keys().map(|k| &**k).collect();
        requests.sort_unstable();
        let mut notifications: Vec<&str> = self.notifications.keys().map(|k| &**k).collect();
        notifications.sort_unstable();
        f.debug_struct("Router")
            .field("requests", &requests)
            .field("notifications", &notifications)
            .finish()
    }
}

fn receivable(method: &str, kind: MethodKind) -> Result<Option<&'static MethodSpec>, RouteError> {
    if method.is_empty() {
        return Err(RouteError::EmptyName);
    }
    match catalogue::find(method) {
        None => Ok(None),
        Some(spec) if spec.kind == kind && spec.sender.sends(Direction::ClientToServer) => {
            Ok(Some(spec))
        }
        Some(_) => Err(RouteError::NotReceived {
            method: method.to_owned(),
            kind: match kind {
                MethodKind::Request => "request",
                MethodKind::Notification => "notification",
            },
        }),
    }
}

impl Router {
    /// Adds a request route.
    pub(crate) fn add_request(
        &mut self,
        method: &str,
        route: RequestRoute,
    ) -> Result<(), RouteError> {
        let spec = receivable(method, MethodKind::Request)?;
        if self.requests.contains_key(method) {
            return Err(RouteError::Duplicate {
                method: method.to_owned(),
            });
        }
        self.requests.insert(method.into(), Entry { route, spec });
        Ok(())
    }

    /// Adds a notification route.
    pub(crate) fn add_notification(
        &mut self,
        method: &str,
        route: NotificationRoute,
    ) -> Result<(), RouteError> {
        let spec = receivable(method, MethodKind::Notification)?;
        if self.notifications.contains_key(method) {
            return Err(RouteError::Duplicate {
                method: method.to_owned(),
            });
        }
        self.notifications
            .insert(method.into(), Entry { route, spec });
        Ok(())
    }

    /// The route of a request method.
    pub(crate) fn request(&self, method: &str) -> Option<&Entry<RequestRoute>> {
        self.requests.get(method)
    }

    /// The route of a notification method.
    pub(crate) fn notification(&self, method: &str) -> Option<&Entry<NotificationRoute>> {
        self.notifications.get(method)
    }
}

/// Parses params into `T`; absent params read as `{}`. A failure is -32602 naming the method.
pub(crate) fn parse_params<T: DeserializeOwned>(
    method: &str,
    params: Option<&RawJson>,
) -> Result<T, ErrorObject> {
    let text = params.map_or("{}", |p| p.get());
    serde_json::from_str(text).map_err(|e| invalid_params(method, &e))
}

/// -32602 for params that do not parse.
pub(crate) fn invalid_params(method: &str, e: &serde_json::Error) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        format!("Invalid params for {method}: {e}"),
    )
    .with_data(
        serde_json::json!({"reason": "invalid_params", "method": method, "detail": e.to_string()}),
    )
}

/// Erases a typed request handler.
pub(crate) fn request_handler<M, F, Fut>(handler: F) -> RequestHandler
where
    M: RequestMethod,
    F: Fn(M::Params, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<M::Result, ErrorObject>> + Send + 'static,
{
    let handler = Arc::new(handler);
    Arc::new(move |params, cx| {
        let handler = handler.clone();
        Box::pin(async move {
            let params: M::Params = parse_params(M::NAME, params.as_ref())?;
            // Called inside the future so that a panic in the handler's synchronous part is
            // caught with the rest (the engine answers -32603 and the session lives on).
            let result = handler(params, cx).await?;
            to_raw(&result)
                .map_err(|e| ErrorObject::internal(format!("result serialization failed: {e}")))
        })
    })
}

/// Erases a typed notification handler. A panic in it is caught and logged.
pub(crate) fn notification_handler<N, F>(handler: F) -> NotificationHandler
where
    N: NotificationMethod,
    F: Fn(N::Params, &SessionHandle) + Send + Sync + 'static,
{
    Arc::new(move |params, session| {
        let params: N::Params = match parse_params(N::NAME, params) {
            Ok(p) => p,
            Err(e) => {
                tracing::debug!(method = N::NAME, error = %e.message, "notification with unreadable params ignored");
                return;
            }
        };
        if std::panic::catch_unwind(AssertUnwindSafe(|| handler(params, session))).is_err() {
            tracing::error!(
                method = N::NAME,
                "notification handler panicked; the session goes on"
            );
        }
    })
}
