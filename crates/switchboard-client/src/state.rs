//! The per-session state shared by the engine service and the [`ClientSession`] handle.
//!
//! [`ClientSession`]: crate::ClientSession

use std::sync::{Arc, Mutex};

use switchboard_types::ProtocolVersion;
use switchboard_types::capabilities::{ClientCapabilities, ServerCapabilities};
use switchboard_types::lifecycle::Implementation;
use switchboard_types::logging::LoggingLevel;
use switchboard_types::modern::RequestEnvelope;
use switchboard_types::roots::Root;

use crate::cache::Lists;
use crate::era::Era;
use crate::handlers::{Handlers, PendingElicitations};
use crate::listen::Listens;
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
    /// Which era the connection speaks (legacy until a probe says otherwise).
    pub(crate) era: Era,
    /// The revision every modern request names (set while probing and once modern).
    pub(crate) modern_version: Option<String>,
    /// The session-wide log level of modern requests (`None`: no log lines, `[D26-84]`).
    pub(crate) log_level: Option<LoggingLevel>,
}

/// Per-session settings copied from the [`Client`](crate::Client).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SessionOptions {
    pub(crate) max_pages: usize,
    pub(crate) auto_refresh: bool,
    /// The bound on input-required rounds of one modern call.
    pub(crate) max_input_rounds: usize,
    /// Whether modern requests declare the tasks extension (and task results are driven).
    pub(crate) tasks_extension: bool,
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
    /// Who the client is (sent in every modern request's envelope).
    pub(crate) info: Implementation,
    /// The open listen streams of a modern connection.
    pub(crate) listens: Listens,
    roots: Mutex<Vec<Root>>,
    elicitations: Mutex<PendingElicitations>,
    /// Set once a handle declares the tasks extension on its own
    /// ([`ClientSession::with_tasks_extension`](crate::ClientSession::with_tasks_extension)):
    /// the extension's methods may then be sent.
    pub(crate) handle_tasks: std::sync::atomic::AtomicBool,
}

impl ClientState {
    pub(crate) fn new(
        capabilities: ClientCapabilities,
        handlers: Arc<Handlers>,
        options: SessionOptions,
        max_subscriptions: usize,
        tasks: Option<Arc<ClientTasks>>,
        info: Implementation,
        listens: Listens,
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
                era: Era::Legacy,
                modern_version: None,
                log_level: None,
            }),
            lists: Lists::default(),
            subscriptions: Subscriptions::new(max_subscriptions),
            validators: OutputValidators::default(),
            tasks,
            scope: crate::serve_task::new_scope(),
            info,
            listens,
            roots: Mutex::new(roots),
            elicitations: Mutex::new(PendingElicitations::default()),
            handle_tasks: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub(crate) fn phase(&self) -> Phase {
        self.shared.lock().map(|s| s.phase).unwrap_or(Phase::Closed)
    }

    /// The negotiated revision, once the handshake has settled it.
    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        self.shared.lock().ok().and_then(|s| s.version)
    }

    /// Sets the revision modern requests name (`None`: not modern, or not yet).
    pub(crate) fn set_modern_version(&self, version: Option<ProtocolVersion>) {
        if let Ok(mut s) = self.shared.lock() {
            s.modern_version = version.map(|v| v.as_str().to_owned());
        }
    }

    /// The era the connection speaks.
    pub(crate) fn era(&self) -> Era {
        self.shared.lock().map(|s| s.era).unwrap_or(Era::Legacy)
    }

    /// The envelope of a modern request (`None` while the connection is legacy): the revision,
    /// this client's capabilities as 2026-07-28 has them, its identity and `log_level` (or the
    /// session-wide level when `None`).
    pub(crate) fn envelope(
        &self,
        log_level: Option<Option<LoggingLevel>>,
        tasks: bool,
    ) -> Option<RequestEnvelope> {
        let s = self.shared.lock().ok()?;
        let version = s.modern_version.clone()?;
        let mut caps = modern_capabilities(&self.capabilities);
        if self.options.tasks_extension || tasks {
            let extensions = caps
                .extra
                .entry("extensions")
                .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
            if let Some(e) = extensions.as_object_mut() {
                e.insert(
                    switchboard_types::modern::TASKS_EXTENSION.to_owned(),
                    serde_json::json!({}),
                );
            }
        }
        let mut envelope = RequestEnvelope::new(version, caps);
        envelope.client_info = Some(self.info.clone());
        envelope.log_level = log_level.unwrap_or(s.log_level);
        Some(envelope)
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

/// This client's capabilities as revision 2026-07-28 has them: `roots.listChanged` and the
/// core `tasks` capability no longer exist there.
pub(crate) fn modern_capabilities(caps: &ClientCapabilities) -> ClientCapabilities {
    let mut caps = caps.clone();
    if let Some(roots) = caps.roots.as_mut() {
        roots.list_changed = None;
    }
    caps.tasks = None;
    caps
}
