//! What a side knows about the session a message belongs to ([`Facts`]), for layers and handlers.

use std::sync::Arc;

use switchboard_types::ProtocolVersion;

/// What a side knows about the session a message belongs to, for layers (and, on the server,
/// for handlers through its context). Fields a transport or era does not have are `None`.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Facts {
    /// This side's name in logs (`server`, `client`).
    pub side: &'static str,
    /// The session id (the MCP session of a 2025 connection; `None` for a 2026-07-28 request,
    /// which has no session, and before one exists).
    pub session_id: Option<Arc<str>>,
    /// The protocol revision the message speaks, once known.
    pub protocol_version: Option<ProtocolVersion>,
    /// The authorization subject (`sub` of the validated token), when the transport authorized
    /// the request.
    pub subject: Option<Arc<str>>,
    /// The OAuth client the token was issued to (`client_id`/`azp`), when known.
    pub client_id: Option<Arc<str>>,
    /// The token's scopes; empty without authorization.
    pub scopes: Arc<[String]>,
    /// The peer's implementation name, once it declared one (`clientInfo.name` on a server).
    pub peer_name: Option<Arc<str>>,
    /// This process's number for the connection the message travels on (a stdio connection,
    /// an HTTP session, one 2026-07-28 request's exchange): a key for per-connection state
    /// where there is no session id.
    pub connection: Option<u64>,
}

impl Facts {
    /// Facts for side `side` with nothing known yet.
    pub fn new(side: &'static str) -> Self {
        Facts {
            side,
            ..Facts::default()
        }
    }

    /// With a session id.
    pub fn with_session_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// With the protocol revision.
    pub fn with_protocol_version(mut self, v: Option<ProtocolVersion>) -> Self {
        self.protocol_version = v;
        self
    }

    /// With the caller's identity: subject, client id and scopes.
    pub fn with_caller(
        mut self,
        subject: Option<Arc<str>>,
        client_id: Option<Arc<str>>,
        scopes: Arc<[String]>,
    ) -> Self {
        self.subject = subject;
        self.client_id = client_id;
        self.scopes = scopes;
        self
    }

    /// With this process's number for the connection.
    pub fn with_connection(mut self, n: u64) -> Self {
        self.connection = Some(n);
        self
    }

    /// With the peer's implementation name.
    pub fn with_peer_name(mut self, name: Option<Arc<str>>) -> Self {
        self.peer_name = name;
        self
    }
}
