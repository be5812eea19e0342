//! Who hears of a server-side change, in every era and on every transport: the one path a
//! resource update or a list change takes.
//!
//! [`Audience`] holds the server's open sessions (2024-11-05 to 2025-11-25 sessions keep
//! their `resources/subscribe` subscriptions) and its open `subscriptions/listen` streams
//! (2026-07-28). [`Server::resource_updated`](crate::Server::resource_updated),
//! [`Context::resource_updated`](crate::Context::resource_updated) and the run-time list
//! changes ([`Server::add_tool`](crate::Server::add_tool), ...) all end here, so no caller
//! reaches one kind of subscriber and silently misses the other. A session's own tool list
//! ([`ServerSession::add_tool`](crate::ServerSession::add_tool)) is the exception by design:
//! it changed for that session only, so only that session is told.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use switchboard_jsonrpc::{Peer, WeakPeer};
use switchboard_types::catalogue::{
    Method, PromptListChanged, ResourceListChanged, ResourceUpdated, ToolListChanged,
};
use switchboard_types::resources::ResourceUpdatedNotificationParams;

use crate::lifecycle::LifecycleState;
use crate::modern::listen::{Event, Listeners};
use crate::session::SessionState;

/// A session of one server, as the server's registry keeps it.
pub(crate) struct OpenSession {
    pub(crate) peer: WeakPeer,
    pub(crate) state: Arc<SessionState>,
    pub(crate) runtime: tokio::runtime::Handle,
}

/// One of the lists whose changes the server announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum List {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
}

impl List {
    fn method(self) -> &'static str {
        match self {
            List::Tools => ToolListChanged::NAME,
            List::Prompts => PromptListChanged::NAME,
            List::Resources => ResourceListChanged::NAME,
        }
    }

    fn event(self) -> Event {
        match self {
            List::Tools => Event::ToolsListChanged,
            List::Prompts => Event::PromptsListChanged,
            List::Resources => Event::ResourcesListChanged,
        }
    }
}

/// Everyone a server-side change may concern: the open sessions and the open listen streams.
pub(crate) struct Audience {
    pub(crate) sessions: Mutex<HashMap<u64, OpenSession>>,
    pub(crate) next_session: AtomicU64,
    /// The open `subscriptions/listen` streams.
    pub(crate) listeners: Arc<Listeners>,
    /// List changes held back ([`Audience::hold`]): how many holds are open, and which lists
    /// changed meanwhile (tools, prompts, resources).
    held: Mutex<(usize, [bool; 3])>,
}

impl Audience {
    pub(crate) fn new(max_listeners: usize) -> Self {
        Audience {
            sessions: Mutex::default(),
            next_session: AtomicU64::new(1),
            listeners: Arc::new(Listeners::new(max_listeners)),
            held: Mutex::default(),
        }
    }

    /// Holds list changes back until as many [`Audience::release`]s: a burst of changes is
    /// then announced once per list.
    pub(crate) fn hold(&self) {
        if let Ok(mut held) = self.held.lock() {
            held.0 += 1;
        }
    }

    /// Ends one hold; the last announces each list that changed while held.
    pub(crate) fn release(&self) {
        let pending = {
            let Ok(mut held) = self.held.lock() else {
                return;
            };
            held.0 = held.0.saturating_sub(1);
            if held.0 > 0 {
                return;
            }
            std::mem::take(&mut held.1)
        };
        for (list, changed) in [List::Tools, List::Prompts, List::Resources]
            .into_iter()
            .zip(pending)
        {
            if changed {
                self.list_changed(list);
            }
        }
    }

    /// Announces that resource `uri` changed: `notifications/resources/updated` to every
    /// session subscribed to it and every listen stream whose filter names it. Returns how
    /// many were reached, and whether session `inline` is among the subscribed: that one is
    /// not sent to here, its caller sends it in order with its own messages.
    pub(crate) fn resource_updated(&self, uri: &str, inline: Option<u64>) -> (usize, bool) {
        let mut reached = self
            .listeners
            .publish(&Event::ResourceUpdated(uri.to_owned()));
        let mut own = false;
        let Ok(sessions) = self.sessions.lock() else {
            return (reached, own);
        };
        for (id, entry) in sessions.iter() {
            if !entry.state.is_subscribed(uri) {
                continue;
            }
            if Some(*id) == inline {
                own = true;
                reached += 1;
                continue;
            }
            if let Some(peer) = entry.peer.upgrade() {
                reached += 1;
                let params = ResourceUpdatedNotificationParams::new(uri);
                entry.runtime.spawn(async move {
                    let _ = peer.notify(ResourceUpdated::NAME, Some(&params)).await;
                });
            }
        }
        (reached, own)
    }

    /// Announces that `list` changed: its `list_changed` notification to every ready session
    /// and every listen stream that asked for it.
    pub(crate) fn list_changed(&self, list: List) {
        if let Ok(mut held) = self.held.lock()
            && held.0 > 0
        {
            held.1[list as usize] = true;
            return;
        }
        self.listeners.publish(&list.event());
        let method = list.method();
        let Ok(sessions) = self.sessions.lock() else {
            return;
        };
        for entry in sessions.values() {
            if entry.state.lifecycle() != LifecycleState::Ready {
                continue;
            }
            if let Some(peer) = entry.peer.upgrade() {
                entry.runtime.spawn(async move {
                    if let Err(e) = peer.notify::<()>(method, None).await {
                        tracing::debug!(%method, error = %e, "notification not sent");
                    }
                });
            }
        }
    }
}

/// Sends `notifications/resources/updated` for `uri` on `peer` now, in order with what the
/// caller sends next.
pub(crate) async fn send_resource_updated(peer: &Peer, uri: &str) {
    let params = ResourceUpdatedNotificationParams::new(uri);
    if let Err(e) = peer.notify(ResourceUpdated::NAME, Some(&params)).await {
        tracing::debug!(%uri, error = %e, "resource update not sent");
    }
}
