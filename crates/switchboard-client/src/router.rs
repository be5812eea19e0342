//! Client side: the client's method table. The methods the client answers itself are routed by
//! their catalogue marker ([`Answer`]: the params typed by the marker, -32602 when they do not
//! fit); a method without a route is -32601 (the engine service's). Users add routes for
//! extension methods, or for catalogue methods the client does not answer itself, with
//! [`ClientBuilder::request`](crate::ClientBuilder::request) and
//! [`ClientBuilder::notification`](crate::ClientBuilder::notification).

use std::sync::Arc;

use serde::de::DeserializeOwned;
use switchboard_jsonrpc::{BoxFuture, HandlerResult, RequestContext};
use switchboard_jsonrpc::{ErasedNotification, ErasedRequest, MethodTable};
use switchboard_types::catalogue::{
    CancelTask, Cancelled, CreateMessage, Elicit, ElicitationComplete, GetTask, GetTaskPayload,
    ListRoots, ListTasks, LoggingMessage, Method, Ping, Progress, PromptListChanged,
    ResourceListChanged, ResourceUpdated, Side, SubscriptionsAcknowledged, ToolListChanged,
};
use switchboard_types::error::echo;
use switchboard_types::{ErrorObject, RawJson, Request};

use crate::answer::Answer;
use crate::serve_task::{self, TaskMethod};
use crate::session::ClientSession;
use crate::state::ClientState;

/// A built-in request route: one of the client's own answers.
pub(crate) type Builtin = fn(Arc<ClientState>, Request, RequestContext) -> BoxFuture<HandlerResult>;

/// What answers one request method.
#[derive(Clone)]
pub(crate) enum RequestRoute {
    /// The client's own answer (through the handler installed for it, if any).
    Builtin(Builtin),
    /// A handler registered by the user.
    User(ErasedRequest<RequestContext>),
}

/// What takes one notification method.
#[derive(Clone)]
pub(crate) enum NotificationRoute {
    /// Handled by the client itself (caches, subscriptions, callbacks) or by the engine.
    Builtin,
    /// A handler registered by the user; runs inline, in frame order.
    User(ErasedNotification<ClientSession>),
}

/// The route of a request the client answers itself: `M`'s params, then `M`'s answer.
fn answered<M: Answer>() -> (&'static str, Builtin) {
    fn route<M: Answer>(
        state: Arc<ClientState>,
        req: Request,
        cx: RequestContext,
    ) -> BoxFuture<HandlerResult> {
        match M::params(&req) {
            Ok(params) => M::answer(state, params, cx),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
    (M::NAME, route::<M>)
}

/// The method table of one client.
pub(crate) type Router = MethodTable<RequestRoute, NotificationRoute>;

/// The table with the routes of the methods the client answers or takes itself.
pub(crate) fn builtin_router() -> Router {
    let mut router = Router::new(Side::Client);
    let requests = [
        answered::<Ping>(),
        answered::<CreateMessage>(),
        answered::<Elicit>(),
        answered::<ListRoots>(),
    ];
    for (method, f) in requests {
        let added = router.add_request(method, RequestRoute::Builtin(f));
        debug_assert!(added.is_ok(), "built-in routes are distinct");
    }
    for method in [
        ToolListChanged::NAME,
        ResourceListChanged::NAME,
        PromptListChanged::NAME,
        ResourceUpdated::NAME,
        LoggingMessage::NAME,
        ElicitationComplete::NAME,
        Cancelled::NAME,
        Progress::NAME,
        SubscriptionsAcknowledged::NAME,
    ] {
        let added = router.add_notification(method, NotificationRoute::Builtin);
        debug_assert!(added.is_ok(), "built-in routes are distinct");
    }
    router
}

/// The client's answer to one of the task methods, from its own store.
fn task_route(
    state: Arc<ClientState>,
    req: Request,
    cx: RequestContext,
    method: TaskMethod,
) -> BoxFuture<HandlerResult> {
    Box::pin(async move {
        let Some(tasks) = &state.tasks else {
            return Err(ErrorObject::internal("this client keeps no tasks"));
        };
        serve_task::answer(tasks, state.scope, method, &req, &cx).await
    })
}

/// The built-in routes of the task methods, added when the client serves tasks.
pub(crate) fn task_routes() -> [(&'static str, Builtin); 4] {
    [
        (GetTask::NAME, |s, r, cx| {
            task_route(s, r, cx, TaskMethod::Get)
        }),
        (GetTaskPayload::NAME, |s, r, cx| {
            task_route(s, r, cx, TaskMethod::Result)
        }),
        (ListTasks::NAME, |s, r, cx| {
            task_route(s, r, cx, TaskMethod::List)
        }),
        (CancelTask::NAME, |s, r, cx| {
            task_route(s, r, cx, TaskMethod::Cancel)
        }),
    ]
}

/// Parses notification params, logging (not answering, `[JR-11]`) when they are malformed.
pub(crate) fn parse_notification<P: DeserializeOwned>(
    method: &str,
    params: Option<&RawJson>,
) -> Option<P> {
    let text = params.map_or("{}", |p| p.get());
    match serde_json::from_str(text) {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::debug!(
                method = %echo(method),
                error = %echo(&e.to_string()),
                "malformed notification ignored"
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use switchboard_types::catalogue::{CATALOGUE, MethodKind, Sender, TaskStatus};

    use super::*;

    /// Catalogue methods a server may send that the client routes to nothing of its own; a user
    /// adds a route for one with `ClientBuilder::request` or `ClientBuilder::notification`.
    const LEFT_TO_THE_USER: &[&str] = &[
        // A task's status, pushed by a server running a task for this client: the client's
        // task calls poll `tasks/get` instead (`[TK-20]`: the notification is optional).
        TaskStatus::NAME,
    ];

    #[test]
    fn every_catalogue_method_the_server_sends_has_a_route_or_is_left_to_the_user() {
        let mut router = builtin_router();
        for (method, f) in task_routes() {
            router
                .add_request(method, RequestRoute::Builtin(f))
                .expect("the task routes are distinct from the built-in ones");
        }
        let mut wrong = Vec::new();
        for spec in CATALOGUE.iter().filter(|s| s.sender != Sender::Client) {
            let routed = match spec.kind {
                MethodKind::Request => router.request(spec.name).is_some(),
                MethodKind::Notification => router.notification(spec.name).is_some(),
            };
            let left = LEFT_TO_THE_USER.contains(&spec.name);
            match (routed, left) {
                (false, false) => wrong.push(format!("{}: no route", spec.name)),
                (true, true) => wrong.push(format!("{}: routed, yet left to the user", spec.name)),
                _ => {}
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }
}
