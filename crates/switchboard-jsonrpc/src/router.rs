//! The method table both roles dispatch through: one route per request method and one per
//! notification method, each with its catalogue entry (none for an extension method).
//!
//! A table belongs to one receiving side. Adding a method twice, or a method the catalogue says
//! that side never receives (or receives as the other kind), is refused with a [`RouteError`];
//! the roles turn that into a build error. The typed helpers ([`typed_request`],
//! [`typed_notification`]) erase a handler written against a method's marker type
//! ([`RequestMethod`], [`NotificationMethod`]): params are parsed before the handler runs (-32602
//! when they do not parse; absent params read as `{}`) and the result is serialised after.
//!
//! The table names no method itself: what is known about a method comes from
//! [`switchboard_types::catalogue`].

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use switchboard_types::catalogue::{
    self, MethodKind, MethodSpec, NotificationMethod, RequestMethod, Side,
};
use switchboard_types::error::echo;
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::{ErrorCode, ErrorObject, RawJson};

use crate::service::{BoxFuture, HandlerResult};

/// Why a route could not be added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RouteError {
    /// The method already has a route (the role's own, or an earlier registration).
    #[error("method {method} is registered twice")]
    Duplicate {
        /// The method.
        method: String,
    },
    /// The catalogue says this side never receives the method as this kind (a server never
    /// receives `sampling/createMessage`; `tools/call` is not a notification).
    #[error("method {method} is not received by a {side} as a {kind}")]
    NotReceived {
        /// The method.
        method: String,
        /// `client` or `server`.
        side: &'static str,
        /// `request` or `notification`.
        kind: &'static str,
    },
    /// An empty method name.
    #[error("method names may not be empty")]
    EmptyName,
}

/// One method's handler and its catalogue entry.
#[derive(Clone)]
pub struct Route<H> {
    /// What handles the method.
    pub handler: H,
    /// The catalogue entry; `None` for an extension method.
    pub spec: Option<&'static MethodSpec>,
}

impl<H> fmt::Debug for Route<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Route")
            .field("method", &self.spec.map(|s| s.name))
            .finish_non_exhaustive()
    }
}

/// The routes of one receiving side: requests answered with `R`, notifications taken by `N`.
#[derive(Clone)]
pub struct MethodTable<R, N> {
    side: Side,
    requests: HashMap<Box<str>, Route<R>>,
    notifications: HashMap<Box<str>, Route<N>>,
}

impl<R, N> fmt::Debug for MethodTable<R, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut requests: Vec<&str> = self.requests.keys().map(|k| &**k).collect();
        requests.sort_unstable();
        let mut notifications: Vec<&str> = self.notifications.keys().map(|k| &**k).collect();
        notifications.sort_unstable();
        f.debug_struct("MethodTable")
            .field("side", &self.side)
            .field("requests", &requests)
            .field("notifications", &notifications)
            .finish()
    }
}

impl<R, N> MethodTable<R, N> {
    /// An empty table for the side that receives (`Side::Server` for a server).
    pub fn new(side: Side) -> Self {
        MethodTable {
            side,
            requests: HashMap::new(),
            notifications: HashMap::new(),
        }
    }

    fn receivable(
        &self,
        method: &str,
        kind: MethodKind,
    ) -> Result<Option<&'static MethodSpec>, RouteError> {
        if method.is_empty() {
            return Err(RouteError::EmptyName);
        }
        match catalogue::find(method) {
            None => Ok(None),
            Some(spec) if spec.kind == kind && spec.sender.sends(self.side.other().sending()) => {
                Ok(Some(spec))
            }
            Some(_) => Err(RouteError::NotReceived {
                method: method.to_owned(),
                side: self.side.as_str(),
                kind: match kind {
                    MethodKind::Request => "request",
                    MethodKind::Notification => "notification",
                },
            }),
        }
    }

    /// Adds the route of a request method.
    ///
    /// # Errors
    /// A duplicate, or a method this side never receives as a request.
    pub fn add_request(&mut self, method: &str, handler: R) -> Result<(), RouteError> {
        let spec = self.receivable(method, MethodKind::Request)?;
        if self.requests.contains_key(method) {
            return Err(RouteError::Duplicate {
                method: method.to_owned(),
            });
        }
        self.requests.insert(method.into(), Route { handler, spec });
        Ok(())
    }

    /// Adds the route of a notification method.
    ///
    /// # Errors
    /// A duplicate, or a method this side never receives as a notification.
    pub fn add_notification(&mut self, method: &str, handler: N) -> Result<(), RouteError> {
        let spec = self.receivable(method, MethodKind::Notification)?;
        if self.notifications.contains_key(method) {
            return Err(RouteError::Duplicate {
                method: method.to_owned(),
            });
        }
        self.notifications
            .insert(method.into(), Route { handler, spec });
        Ok(())
    }

    /// The route of a request method.
    pub fn request(&self, method: &str) -> Option<&Route<R>> {
        self.requests.get(method)
    }

    /// The route of a notification method.
    pub fn notification(&self, method: &str) -> Option<&Route<N>> {
        self.notifications.get(method)
    }
}

/// Parses params into `T`; absent params read as `{}`.
///
/// # Errors
/// -32602 naming the method and what did not parse.
pub fn parse_params<T: DeserializeOwned>(
    method: &str,
    params: Option<&RawJson>,
) -> Result<T, ErrorObject> {
    let text = params.map_or("{}", |p| p.get());
    serde_json::from_str(text).map_err(|e| invalid_params(method, &e))
}

/// -32602 for params of `method` that do not parse. The method and the parser's detail (which
/// can quote the peer's value) are cut by [`echo`].
pub fn invalid_params(method: &str, e: &serde_json::Error) -> ErrorObject {
    let method = echo(method);
    let detail = e.to_string();
    let detail = echo(&detail);
    ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        format!("Invalid params for {method}: {detail}"),
    )
    .with_data(serde_json::json!({"reason": "invalid_params", "method": method, "detail": detail}))
}

/// A type-erased request handler: raw params and a context `C` in, a raw result out.
pub type ErasedRequest<C> =
    Arc<dyn Fn(Option<RawJson>, C) -> BoxFuture<HandlerResult> + Send + Sync>;

/// A type-erased notification handler: raw params and a context `C` in; runs inline.
pub type ErasedNotification<C> = Arc<dyn Fn(Option<&RawJson>, &C) + Send + Sync>;

/// Erases a handler of request method `M` that takes `M::Params` and a context `C`.
///
/// The handler is called inside the returned future, so a panic in its synchronous part is
/// caught with the rest (the engine answers -32603 and the session lives on).
pub fn typed_request<M, C, F, Fut>(handler: F) -> ErasedRequest<C>
where
    M: RequestMethod,
    C: Send + 'static,
    F: Fn(M::Params, C) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<M::Result, ErrorObject>> + Send + 'static,
{
    let handler = Arc::new(handler);
    Arc::new(move |params, cx| {
        let handler = handler.clone();
        Box::pin(async move {
            let params: M::Params = parse_params(M::NAME, params.as_ref())?;
            let result = handler(params, cx).await?;
            to_raw(&result)
                .map_err(|e| ErrorObject::internal(format!("result serialization failed: {e}")))
        })
    })
}

/// Erases a handler of notification method `N`. Params that do not parse are logged and dropped
/// (a notification is never answered); a panic in the handler is caught and logged.
pub fn typed_notification<N, C, F>(handler: F) -> ErasedNotification<C>
where
    N: NotificationMethod,
    C: 'static,
    F: Fn(N::Params, &C) + Send + Sync + 'static,
{
    Arc::new(move |params, cx| {
        let params: N::Params = match parse_params(N::NAME, params) {
            Ok(p) => p,
            Err(e) => {
                tracing::debug!(method = N::NAME, error = %e.message, "notification with unreadable params ignored");
                return;
            }
        };
        if std::panic::catch_unwind(AssertUnwindSafe(|| handler(params, cx))).is_err() {
            tracing::error!(
                method = N::NAME,
                "notification handler panicked; the session goes on"
            );
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_types::methods;

    #[test]
    fn duplicates_and_methods_of_the_other_side_are_refused() {
        let mut t: MethodTable<u8, u8> = MethodTable::new(Side::Server);
        assert_eq!(t.add_request(methods::TOOLS_LIST, 1), Ok(()));
        assert!(matches!(
            t.add_request(methods::TOOLS_LIST, 2),
            Err(RouteError::Duplicate { .. })
        ));
        assert!(matches!(
            t.add_request(methods::SAMPLING_CREATE_MESSAGE, 3),
            Err(RouteError::NotReceived { side: "server", .. })
        ));
        assert!(matches!(
            t.add_notification(methods::TOOLS_CALL, 3),
            Err(RouteError::NotReceived {
                kind: "notification",
                ..
            })
        ));
        assert_eq!(t.add_request("acme/x", 4), Ok(()));
        assert!(t.request("acme/x").is_some_and(|r| r.spec.is_none()));
        assert_eq!(t.add_request("", 5), Err(RouteError::EmptyName));
        let mut c: MethodTable<u8, u8> = MethodTable::new(Side::Client);
        assert_eq!(c.add_request(methods::SAMPLING_CREATE_MESSAGE, 1), Ok(()));
        assert_eq!(
            c.add_request(methods::PING, 1),
            Ok(()),
            "either side receives ping"
        );
    }
}
