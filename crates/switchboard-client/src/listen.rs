//! Client side: `subscriptions/listen` (2026-07-28, SPEC-2026-NOTES §9) as a typed stream: the
//! stream, its events and the registry that routes them (the request itself is sent by
//! [`ClientSession::listen`](crate::ClientSession::listen), in `session`).
//!
//! [`ClientSession::listen`](crate::ClientSession::listen) sends the request and returns once the
//! server has acknowledged it (`[D26-70]`: the acknowledgement comes first), with the filter the
//! server agreed to. Every notification tagged with the listen's id (`[D26-72]`) is delivered to
//! that stream only (`[D26-73]`: streams are told apart by subscription id, whatever the
//! transport). Dropping the stream cancels the listen (`[D26-75]`): on stdio the engine sends
//! `notifications/cancelled`, on Streamable HTTP the transport closes the response stream.
//!
//! Bounded: listens per session ([`DEFAULT_MAX_LISTENS`]) and events buffered per stream
//! ([`DEFAULT_LISTEN_BUFFER`]; past it an event is dropped, logged at debug level, and the stream
//! goes on).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{Map, Value};
use switchboard_types::error::echo;
use switchboard_types::modern::{
    SUBSCRIPTION_ID_KEY, SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams,
};
use switchboard_types::resources::ResourceUpdatedNotificationParams;
use switchboard_types::{Notification, RequestId, methods};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::DropGuard;

use crate::error::ClientError;

/// Default bound on the listen streams one session holds open.
pub(crate) const DEFAULT_MAX_LISTENS: usize = 16;
/// Default bound on the events waiting in one listen stream.
pub(crate) const DEFAULT_LISTEN_BUFFER: usize = 64;

/// One notification delivered on a listen stream.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ListenEvent {
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated` for a URI of the filter.
    ResourceUpdated(ResourceUpdatedNotificationParams),
    /// Any other notification tagged with this listen (an extension's, such as the tasks
    /// extension's `notifications/tasks`): its method and params.
    Other {
        /// The method.
        method: String,
        /// The params, as received.
        params: Option<Value>,
    },
}

/// What the registry holds for one listen.
enum Slot {
    /// Waiting for the acknowledgement.
    Pending(
        oneshot::Sender<SubscriptionFilter>,
        mpsc::Sender<ListenEvent>,
    ),
    /// Acknowledged: events flow.
    Open(mpsc::Sender<ListenEvent>),
}

/// The listens of one session, by the id of their request.
pub(crate) struct Listens {
    pub(crate) limit: usize,
    pub(crate) buffer: usize,
    slots: Mutex<HashMap<RequestId, Slot>>,
}

impl Listens {
    pub(crate) fn new(limit: usize, buffer: usize) -> Self {
        Listens {
            limit,
            buffer: buffer.max(1),
            slots: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.lock().map(|s| s.len()).unwrap_or(0)
    }

    pub(crate) fn insert(
        &self,
        id: RequestId,
        ack: oneshot::Sender<SubscriptionFilter>,
        events: mpsc::Sender<ListenEvent>,
    ) {
        if let Ok(mut s) = self.slots.lock() {
            s.insert(id, Slot::Pending(ack, events));
        }
    }

    pub(crate) fn remove(&self, id: &RequestId) {
        if let Ok(mut s) = self.slots.lock() {
            s.remove(id);
        }
    }

    /// Delivers `n` to the listen it is tagged with, if any; whether it was a listen's.
    pub(crate) fn route(&self, n: &Notification) -> bool {
        let Some(params) = n.params.as_ref() else {
            return false;
        };
        if !params.get().contains(SUBSCRIPTION_ID_KEY) {
            return false;
        }
        #[derive(Deserialize)]
        struct Tagged {
            #[serde(rename = "_meta")]
            meta: Option<Map<String, Value>>,
        }
        let Some(id) = serde_json::from_str::<Tagged>(params.get())
            .ok()
            .and_then(|t| t.meta)
            .and_then(|m| m.get(SUBSCRIPTION_ID_KEY).cloned())
            .and_then(|v| serde_json::from_value::<RequestId>(v).ok())
        else {
            return false;
        };
        let Ok(mut slots) = self.slots.lock() else {
            return false;
        };
        let Some(slot) = slots.remove(&id) else {
            tracing::debug!(method = %echo(&n.method), "notification for no open listen ignored");
            return true;
        };
        let method = n.method.as_str();
        let next = match slot {
            Slot::Pending(ack, events)
                if method == methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED =>
            {
                let agreed = serde_json::from_str::<SubscriptionsAcknowledgedNotificationParams>(
                    params.get(),
                )
                .map(|p| p.notifications)
                .unwrap_or_default();
                let _ = ack.send(agreed);
                Slot::Open(events)
            }
            Slot::Pending(ack, events) => {
                // `[D26-70]`: nothing may precede the acknowledgement.
                tracing::debug!(
                    method,
                    "listen notification before its acknowledgement ignored"
                );
                Slot::Pending(ack, events)
            }
            Slot::Open(events) => {
                if let Some(event) = event(method, params.get())
                    && events.try_send(event).is_err()
                {
                    // At debug level: the server decides how often this happens.
                    tracing::debug!(
                        method = %echo(method),
                        "listen stream full or gone; notification dropped"
                    );
                }
                Slot::Open(events)
            }
        };
        slots.insert(id, next);
        true
    }
}

fn event(method: &str, params: &str) -> Option<ListenEvent> {
    Some(match method {
        methods::NOTIFICATIONS_TOOLS_LIST_CHANGED => ListenEvent::ToolsListChanged,
        methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED => ListenEvent::PromptsListChanged,
        methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED => ListenEvent::ResourcesListChanged,
        methods::NOTIFICATIONS_RESOURCES_UPDATED => {
            ListenEvent::ResourceUpdated(serde_json::from_str(params).ok()?)
        }
        methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED => return None,
        other => ListenEvent::Other {
            method: other.to_owned(),
            params: serde_json::from_str(params).ok(),
        },
    })
}

/// An open `subscriptions/listen`: the notifications the server sends for it, in order.
/// Dropping it cancels the listen.
#[derive(Debug)]
pub struct ListenStream {
    pub(crate) id: RequestId,
    pub(crate) acknowledged: SubscriptionFilter,
    pub(crate) events: mpsc::Receiver<ListenEvent>,
    pub(crate) ended: Arc<Mutex<Option<ClientError>>>,
    pub(crate) _cancel: DropGuard,
}

impl ListenStream {
    /// The id of the listen request (the subscription id notifications carry).
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// What the server agreed to send (`[D26-68]`: a subset of what was asked).
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.acknowledged
    }

    /// The next notification; `None` once the listen has ended (the server's final result, an
    /// error, the session closed). [`ListenStream::error`] then says why, if it failed.
    pub async fn next(&mut self) -> Option<ListenEvent> {
        self.events.recv().await
    }

    /// Why the listen ended, when it ended with an error.
    pub fn error(&self) -> Option<ClientError> {
        self.ended.lock().ok().and_then(|e| e.clone())
    }

    /// Cancels the listen (the same as dropping it).
    pub fn cancel(self) {}
}
