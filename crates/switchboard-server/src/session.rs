//! Per-session state and [`ServerSession`], the handle handlers use to reach their own session:
//! its client, typed extensions, per-session tools, subscriptions and log level.

use std::any::{Any, TypeId};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex};

use switchboard_jsonrpc::{Peer, TransportControl};
use switchboard_types::ProtocolVersion;
use switchboard_types::logging::{LoggingLevel, LoggingMessageNotificationParams};

pub use crate::error::SessionError;
use crate::lifecycle::LifecycleState;
use crate::policy::{AllowList, ClientIdentity};
use switchboard_types::catalogue::{LoggingMessage, Method, ToolListChanged};

/// Default bound on resource subscriptions per session.
pub(crate) const DEFAULT_MAX_SUBSCRIPTIONS: usize = 1024;
/// Default bound on the bytes of the URIs one session is subscribed to (2025 era), with
/// [`DEFAULT_MAX_SUBSCRIPTIONS`]: a resource template can match URIs as long as a request body.
pub(crate) const DEFAULT_MAX_SUBSCRIPTION_BYTES: usize = 256 * 1024;
/// Default bound on tools registered for one session.
pub(crate) const DEFAULT_MAX_SESSION_TOOLS: usize = 256;
/// Default bound on the `initialize` params a session accepts, in bytes of JSON text. The
/// client's identity and capabilities are kept for the session's whole life, so without a bound
/// in bytes every session could hold a body's worth (a 1 MB `clientInfo.name` cost 1.1 MB a
/// session before it). The same figure as the Streamable HTTP session snapshot's bound.
pub(crate) const DEFAULT_MAX_INITIALIZE_BYTES: usize = 64 * 1024;

pub(crate) struct SessionFields {
    pub(crate) lifecycle: LifecycleState,
    pub(crate) version: Option<ProtocolVersion>,
    /// Shared with the other sessions of the same client (see `ServerInner::share_client`).
    pub(crate) client: Option<Arc<ClientIdentity>>,
    pub(crate) allow: AllowList,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) subscriptions: HashSet<String>,
    /// The bytes of the URIs in `subscriptions`.
    pub(crate) subscription_bytes: usize,
}

type Extensions = HashMap<TypeId, Arc<dyn Any + Send + Sync>>;

/// The state of one session, shared by its service and every handle to it.
pub(crate) struct SessionState {
    pub(crate) id: u64,
    pub(crate) data: Mutex<SessionFields>,
    /// Boxed when first used (session tools, a handler's own state): most sessions never do.
    extensions: Mutex<Option<Box<Extensions>>>,
    /// What the transport offers; it keeps the session's snapshot for a later resume.
    control: Option<Arc<dyn TransportControl>>,
    /// The HTTP headers of the one request a modern Streamable HTTP connection carries.
    http: Option<Arc<crate::modern::HttpFacts>>,
    /// The era this connection speaks (decided once by what opened it), read without a lock on
    /// every request.
    era: std::sync::atomic::AtomicU8,
}

impl SessionState {
    /// The owner of this session's tasks: the transport's session key when it has one (the
    /// same on every process serving the session, so a shared task store finds them after a
    /// take-over), else this process's session number.
    pub(crate) fn task_owner(&self) -> switchboard_tasks::Owner {
        match self.control.as_ref().and_then(|c| c.session_key()) {
            Some(key) => switchboard_tasks::Owner::new(format!("session-key-{key}")),
            None => crate::task::owner(self.id),
        }
    }

    pub(crate) fn new(id: u64, control: Option<Arc<dyn TransportControl>>) -> Self {
        SessionState {
            id,
            data: Mutex::new(SessionFields {
                lifecycle: LifecycleState::AwaitingInitialize,
                version: None,
                client: None,
                allow: AllowList::All,
                log_level: None,
                subscriptions: HashSet::new(),
                subscription_bytes: 0,
            }),
            era: std::sync::atomic::AtomicU8::new(crate::era::ConnEra::Undecided as u8),
            extensions: Mutex::default(),
            control,
            http: None,
        }
    }

    /// A connection a transport routed to the modern era, with its request's HTTP headers.
    pub(crate) fn modern(mut self, http: Option<crate::modern::HttpFacts>) -> Self {
        self.http = http.map(Arc::new);
        self.era = std::sync::atomic::AtomicU8::new(crate::era::ConnEra::Modern as u8);
        self
    }

    /// The HTTP headers of a modern Streamable HTTP request.
    pub(crate) fn http_facts(&self) -> Option<&crate::modern::HttpFacts> {
        self.http.as_deref()
    }

    /// The era this connection speaks.
    pub(crate) fn era(&self) -> crate::era::ConnEra {
        crate::era::ConnEra::from_u8(self.era.load(std::sync::atomic::Ordering::Acquire))
    }

    /// Decides the era of an undecided connection; returns the era in force.
    pub(crate) fn decide_era(&self, era: crate::era::ConnEra) -> crate::era::ConnEra {
        use std::sync::atomic::Ordering;
        let undecided = crate::era::ConnEra::Undecided as u8;
        match self
            .era
            .compare_exchange(undecided, era as u8, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => era,
            Err(now) => crate::era::ConnEra::from_u8(now),
        }
    }

    /// Moves a fresh session straight to ready: its handshake happened elsewhere (see
    /// [`crate::resume`]).
    pub(crate) fn establish(
        &self,
        version: ProtocolVersion,
        client: Option<Arc<ClientIdentity>>,
        allow: AllowList,
    ) {
        self.decide_era(crate::era::ConnEra::Legacy);
        if let Ok(mut d) = self.data.lock() {
            d.lifecycle = LifecycleState::Ready;
            d.version = Some(version);
            d.client = client;
            d.allow = allow;
        }
    }

    /// The handshake has completed with `initialize_params`: the transport is handed the
    /// session's snapshot (see [`crate::resume`]).
    pub(crate) fn handshake_completed(&self, initialize_params: &str) {
        if let Some(control) = &self.control {
            control.save_snapshot(crate::resume::snapshot_of(initialize_params));
        }
    }

    pub(crate) fn lifecycle(&self) -> LifecycleState {
        self.data
            .lock()
            .map(|d| d.lifecycle)
            .unwrap_or(LifecycleState::Closed)
    }

    /// The lifecycle state and the negotiated revision, read under one lock.
    pub(crate) fn lifecycle_and_version(&self) -> (LifecycleState, Option<ProtocolVersion>) {
        self.data
            .lock()
            .map(|d| (d.lifecycle, d.version))
            .unwrap_or((LifecycleState::Closed, None))
    }

    /// The transport's id of this session (the `Mcp-Session-Id` of Streamable HTTP), if any.
    pub(crate) fn session_key(&self) -> Option<Arc<str>> {
        self.control.as_ref().and_then(|c| c.session_key())
    }

    /// The session's version and its client's name, under one lock (for layers' facts).
    pub(crate) fn version_and_client_name(&self) -> (Option<ProtocolVersion>, Option<Arc<str>>) {
        self.data
            .lock()
            .map(|d| {
                (
                    d.version,
                    d.client.as_ref().map(|c| Arc::from(c.info.name.as_str())),
                )
            })
            .unwrap_or((None, None))
    }

    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        self.data.lock().ok().and_then(|d| d.version)
    }

    pub(crate) fn client(&self) -> Option<ClientIdentity> {
        self.data
            .lock()
            .ok()
            .and_then(|d| d.client.as_deref().cloned())
    }

    /// Whether this session subscribed to `uri` (`resources/subscribe`).
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.data
            .lock()
            .map(|d| d.subscriptions.contains(uri))
            .unwrap_or(false)
    }

    pub(crate) fn allows(&self, tool: &str) -> bool {
        self.data
            .lock()
            .map(|d| d.allow.allows(tool))
            .unwrap_or(false)
    }

    /// The session's value of type `T`, inserting `T::default()` the first time.
    pub(crate) fn extension<T: Any + Send + Sync + Default>(&self) -> Arc<T> {
        let Ok(mut map) = self.extensions.lock() else {
            return Arc::new(T::default());
        };
        let entry = map
            .get_or_insert_default()
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(T::default()));
        entry
            .clone()
            .downcast::<T>()
            .unwrap_or_else(|_| Arc::new(T::default()))
    }

    /// The session's value of type `T`, if one was ever inserted.
    pub(crate) fn existing_extension<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let map = self.extensions.lock().ok()?;
        map.as_ref()?
            .get(&TypeId::of::<T>())?
            .clone()
            .downcast::<T>()
            .ok()
    }
}

impl fmt::Debug for SessionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionState")
            .field("id", &self.id)
            .field("lifecycle", &self.lifecycle())
            .finish()
    }
}

/// One connected client: the handle [`Server::serve`](crate::Server::serve) returns and handlers
/// reach through [`Context::session`](crate::Context::session). Cheap to clone.
#[derive(Clone)]
pub struct ServerSession {
    pub(crate) state: Arc<SessionState>,
    pub(crate) peer: Peer,
    pub(crate) max_session_tools: usize,
}

impl fmt::Debug for ServerSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerSession")
            .field("id", &self.state.id)
            .finish()
    }
}

impl ServerSession {
    /// A number unique among this server's sessions.
    pub fn id(&self) -> u64 {
        self.state.id
    }

    /// Where the session is in its lifecycle.
    pub fn lifecycle(&self) -> LifecycleState {
        self.state.lifecycle()
    }

    /// The negotiated revision, once `initialize` was answered.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.state.version()
    }

    /// The client, once it has sent `initialize`.
    pub fn client(&self) -> Option<ClientIdentity> {
        self.state.client()
    }

    /// The engine handle (sends are not related to any request).
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Resolves when the session has closed.
    pub async fn closed(&self) {
        self.peer.closed().await
    }

    /// Closes the session.
    pub fn close(&self) {
        self.peer.close()
    }

    /// The session's value of type `T`, inserting `T::default()` the first time.
    pub fn extension<T: Any + Send + Sync + Default>(&self) -> Arc<T> {
        self.state.extension::<T>()
    }

    /// Sends `notifications/tools/list_changed` to this client (when `tools.listChanged` was declared).
    ///
    /// # Errors
    /// Refused locally when not declared, or the session is closed.
    pub async fn tools_changed(&self) -> Result<(), SessionError> {
        Ok(self.peer.notify::<()>(ToolListChanged::NAME, None).await?)
    }

    /// Whether this client subscribed to `uri`. To announce that a resource changed, to this
    /// session and every other subscriber alike, see
    /// [`Context::resource_updated`](crate::Context::resource_updated) and
    /// [`Server::resource_updated`](crate::Server::resource_updated).
    pub fn is_subscribed(&self, uri: &str) -> bool {
        self.state.is_subscribed(uri)
    }

    /// The level set by `logging/setLevel`, if any.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.state.data.lock().ok().and_then(|d| d.log_level)
    }

    /// Sends `notifications/message` unless it is below the client's level (default: `info`).
    /// Returns whether it was sent.
    ///
    /// # Errors
    /// Refused locally (no `logging` capability), or the session is closed.
    pub async fn log(
        &self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: serde_json::Value,
    ) -> Result<bool, SessionError> {
        log_via(&self.peer, self.log_level(), level, logger, data).await
    }
}

pub(crate) async fn log_via(
    peer: &Peer,
    threshold: Option<LoggingLevel>,
    level: LoggingLevel,
    logger: Option<&str>,
    data: serde_json::Value,
) -> Result<bool, SessionError> {
    if level < threshold.unwrap_or(LoggingLevel::Info) {
        return Ok(false);
    }
    let mut params = LoggingMessageNotificationParams::new(level, data);
    params.logger = logger.map(str::to_owned);
    peer.notify(LoggingMessage::NAME, Some(&params)).await?;
    Ok(true)
}

#[cfg(all(test, target_pointer_width = "64"))]
mod size_tests {
    /// Every session keeps one `SessionState` (in an `Arc`, 16 bytes more): at 208 bytes or
    /// less it takes jemalloc's 224-byte class.
    #[test]
    fn the_server_state_of_a_session_fits_its_allocation_class() {
        let size = std::mem::size_of::<super::SessionState>();
        assert!(size <= 208, "SessionState is {size} bytes");
    }
}
