//! The per-session state shared by the engine service and the [`ClientSession`] handle.
//!
//! [`ClientSession`]: crate::ClientSession

use std::sync::{Arc, Mutex};

use switchboard_types::ProtocolVersion;
use switchboard_types::capabilities::{ClientCapabilities, ServerCapabilities};
use switchboard_types::roots::Root;

use crate::cache::Lists;
use crate::handlers::{Handlers, PendingElicitations};
use crate::serve_task::ClientTasks;
use crate::subscription::Subscriptions;
use crate::validation::OutputValidators;

/// Where the client is in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// `initialize` not yet answered.
    Handshake,
    /// The handshake is complete.
    Ready,
    /// The session has closed.
    Closed,
}

/// What the handshake settles.
pub(crate) struct Shared {
    pub(crate) phase: Phase,
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) server_caps: Option<ServerCapabilities>,
}

/// Per-session settings copied from the [`Client`](crate::Client).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SessionOptions {
    pub(crate) max_pages: usize,
    pub(crate) auto_refresh: bool,
}

/// State shared by the service and the session handle.
pub(crate) struct ClientState {
    /// What this client declared (explicit capabilities merged with installed handlers).
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) handlers: Arc<Handlers>,
    pub(crate) options: SessionOptions,
    pub(crate) shared: Mutex<Shared>,
    pub(crate) lists: Lists,
    pub(crate) subscriptions: Subscriptions,
    pub(crate) validators: OutputValidators,
    /// Where the server's task-augmented requests run, when this client serves tasks.
    pub(crate) tasks: Option<Arc<ClientTasks>>,
    /// This session's key among the tasks' owners.
    pub(crate) scope: u64,
    roots: Mutex<Vec<Root>>,
    elicitations: Mutex<PendingElicitations>,
}

impl ClientState {
    pub(crate) fn new(
        capabilities: ClientCapabilities,
        handlers: Arc<Handlers>,
        options: SessionOptions,
        max_subscriptions: usize,
        tasks: Option<Arc<ClientTasks>>,
    ) -> Self {
        let roots = handlers.roots.clone().unwrap_or_default();
        ClientState {
            capabilities,
            handlers,
            options,
            shared: Mutex::new(Shared {
                phase: Phase::Handshake,
                version: None,
                server_caps: None,
            }),
            lists: Lists::default(),
            subscriptions: Subscriptions::new(max_subscriptions),
            validators: OutputValidators::default(),
            tasks,
            scope: crate::serve_task::new_scope(),
            roots: Mutex::new(roots),
            elicitations: Mutex::new(PendingElicitations::default()),
        }
    }

    pub(crate) fn phase(&self) -> Phase {
        self.shared.lock().map(|s| s.phase).unwrap_or(Phase::Closed)
    }

    /// The negotiated revision, once the handshake has settled it.
    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        self.shared.lock().ok().and_then(|s| s.version)
    }

    /// The root list `roots/list` answers with when no provider is installed.
    pub(crate) fn roots(&self) -> Vec<Root> {
        self.roots.lock().map(|r| r.clone()).unwrap_or_default()
    }

    pub(crate) fn set_roots(&self, roots: Vec<Root>) {
        if let Ok(mut r) = self.roots.lock() {
            *r = roots;
        }
    }

    /// Whether this client declared `roots.listChanged` (`[RO-2]`).
    pub(crate) fn declares_roots_list_changed(&self) -> bool {
        self.capabilities
            .roots
            .as_ref()
            .and_then(|r| r.list_changed)
            == Some(true)
    }

    pub(crate) fn remember_elicitation(&self, id: String) {
        if let Ok(mut p) = self.elicitations.lock() {
            p.insert(id);
        }
    }

    /// Forgets a URL elicitation id; whether it was pending (`[EL-9]`).
    pub(crate) fn forget_elicitation(&self, id: &str) -> bool {
        self.elicitations.lock().is_ok_and(|mut p| p.remove(id))
    }
}
