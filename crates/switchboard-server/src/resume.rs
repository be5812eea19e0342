//! Sessions that start without a handshake of their own (server side): the snapshot this role
//! hands its transport when a handshake completes, and [`Resumption`], what a transport hands
//! back to start a session ready ([`crate::Server::serve_resumed`]).
//!
//! | when | what crosses, and which way |
//! |---|---|
//! | `initialize` succeeded | role → transport: the snapshot, through [`TransportControl::save_snapshot`] |
//! | a session is resumed | transport → role: a [`Resumption`] (the revision in force, the snapshot if any) |
//!
//! The snapshot of a server session is the client's `initialize` params as the client sent them
//! (JSON text: `clientInfo`, capabilities, the revision it offered). Only this module writes and
//! reads it; a transport keeps it verbatim and never parses it. Streamable HTTP resumes in two
//! cases: a stateless request (each POST is served on its own; there is no snapshot, so the
//! client is anonymous and declared nothing), and a session taken over from its session store
//! (another node created it, or this node dropped its engine).
//!
//! [`TransportControl::save_snapshot`]: switchboard_jsonrpc::TransportControl::save_snapshot

use std::sync::Arc;

use switchboard_types::ProtocolVersion;
use switchboard_types::lifecycle::InitializeRequestParams;

use crate::policy::ClientIdentity;

/// What a transport knows of a session whose handshake happened elsewhere.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Resumption {
    /// The revision in force, as the transport carried it (Streamable HTTP: the
    /// `MCP-Protocol-Version` header). `None`: 2025-03-26, the revision a request that names
    /// none is taken to speak (`[HT-23]`).
    pub protocol_version: Option<String>,
    /// The snapshot this role handed the transport when the handshake completed. `None`: an
    /// anonymous client that declared no capability.
    pub snapshot: Option<Arc<str>>,
    /// Set when the transport routed this connection to the modern era (2026-07-28): every
    /// request on it stands alone, with these HTTP headers when it came over Streamable HTTP.
    pub modern: Option<Option<crate::modern::HttpFacts>>,
}

impl Resumption {
    /// A resumption at `protocol_version` with `snapshot`.
    pub fn new(protocol_version: Option<String>, snapshot: Option<Arc<str>>) -> Self {
        Resumption {
            protocol_version,
            snapshot,
            modern: None,
        }
    }

    /// A connection the transport routed to the modern era, with the request's `Mcp-*` HTTP
    /// headers (`None` when the transport has none).
    pub fn modern(http: Option<crate::modern::HttpFacts>) -> Self {
        Resumption {
            protocol_version: None,
            snapshot: None,
            modern: Some(http),
        }
    }

    /// The revision in force and the client, as far as the snapshot tells (an unreadable
    /// snapshot is an anonymous client, as a missing one is).
    ///
    /// # Errors
    /// The revision named, cut to 64 characters, when it is not one this stack serves.
    pub(crate) fn read(&self) -> Result<(ProtocolVersion, Option<ClientIdentity>), String> {
        let version = match self.protocol_version.as_deref() {
            None => ProtocolVersion::V2025_03_26,
            Some(v) => ProtocolVersion::parse(v.trim())
                .filter(|p| p.is_supported())
                .ok_or_else(|| v.chars().take(64).collect::<String>())?,
        };
        let client = self.snapshot.as_deref().and_then(client_of);
        Ok((version, client))
    }
}

/// The snapshot of a session whose `initialize` carried `params` (see the module docs).
pub(crate) fn snapshot_of(params: &str) -> &str {
    params
}

/// The client a snapshot describes; `None` when it cannot be read.
fn client_of(snapshot: &str) -> Option<ClientIdentity> {
    match serde_json::from_str::<InitializeRequestParams>(snapshot) {
        Ok(p) => Some(ClientIdentity {
            info: p.client_info,
            capabilities: p.capabilities,
        }),
        Err(e) => {
            tracing::warn!(error = %e, "session snapshot unreadable; the client is taken as anonymous");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ht23_a_resumption_without_a_revision_is_2025_03_26_and_a_bad_one_is_refused() {
        let (v, client) = Resumption::default().read().unwrap();
        assert_eq!(v, ProtocolVersion::V2025_03_26);
        assert!(client.is_none());
        let (v, _) = Resumption::new(Some("2025-11-25".into()), None)
            .read()
            .unwrap();
        assert_eq!(v, ProtocolVersion::V2025_11_25);
        for bad in ["1999-01-01", "2026-07-28", "soon"] {
            assert_eq!(
                Resumption::new(Some(bad.into()), None)
                    .read()
                    .err()
                    .as_deref(),
                Some(bad)
            );
        }
    }

    #[test]
    fn the_snapshot_is_the_initialize_params_and_reads_back_as_the_client() {
        let params = r#"{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}"#;
        let snapshot = snapshot_of(params);
        let resumed = Resumption::new(Some("2025-06-18".into()), Some(Arc::from(snapshot)));
        let (_, client) = resumed.read().unwrap();
        let client = client.unwrap();
        assert_eq!(client.info.name, "c");
        assert!(client.capabilities.sampling.is_some());
        let unreadable = Resumption::new(None, Some(Arc::from("{not json")));
        assert!(unreadable.read().unwrap().1.is_none());
    }

    #[tokio::test]
    async fn a_resumed_session_is_ready_with_the_snapshot_client_and_its_allow_list() {
        use switchboard_types::lifecycle::Implementation;
        use switchboard_types::tools::{CallToolResult, Tool};

        use crate::{AllowList, LifecycleState, Server};

        let tool = |name: &str| Tool::new(name, serde_json::json!({"type": "object"}));
        let server = Server::builder(Implementation::new("s", "1"))
            .tool(tool("a"), |_| async { Ok(CallToolResult::text("a")) })
            .tool(tool("b"), |_| async { Ok(CallToolResult::text("b")) })
            .tool_policy(|c| match c.info.name.as_str() {
                "c" => AllowList::only(["a"]),
                _ => AllowList::All,
            })
            .build()
            .unwrap();
        let params = r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}"#;
        let (ours, mut theirs) = switchboard_jsonrpc::memory::pair();
        let resumption = Resumption::new(
            Some("2025-06-18".into()),
            Some(Arc::from(snapshot_of(params))),
        );
        let session = server.serve_resumed(ours, &resumption).unwrap();
        assert_eq!(session.lifecycle(), LifecycleState::Ready);
        assert_eq!(
            session.protocol_version(),
            Some(ProtocolVersion::V2025_06_18)
        );
        assert_eq!(session.client().unwrap().info.name, "c");
        theirs
            .send_text(
                serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": switchboard_types::methods::TOOLS_LIST})
                    .to_string(),
            )
            .await
            .unwrap();
        let answer: serde_json::Value =
            serde_json::from_str(&theirs.recv_text().await.unwrap()).unwrap();
        assert_eq!(
            answer["result"]["tools"].as_array().unwrap().len(),
            1,
            "{answer}"
        );
        assert_eq!(answer["result"]["tools"][0]["name"], "a");
        let (other, _keep) = switchboard_jsonrpc::memory::pair();
        assert!(matches!(
            server.serve_resumed(other, &Resumption::new(Some("1999-01-01".into()), None)),
            Err(crate::ServerError::UnsupportedRevision(v)) if v == "1999-01-01"
        ));
    }

    /// A memory transport whose control records the snapshots handed over.
    struct Recorded(
        switchboard_jsonrpc::memory::MemoryTransport,
        Arc<std::sync::Mutex<Vec<String>>>,
    );

    struct Recorder(Arc<std::sync::Mutex<Vec<String>>>);

    impl switchboard_jsonrpc::TransportControl for Recorder {
        fn save_snapshot(&self, snapshot: &str) {
            self.0.lock().unwrap().push(snapshot.to_owned());
        }
    }

    impl switchboard_jsonrpc::Transport for Recorded {
        type Sink = switchboard_jsonrpc::memory::MemorySink;
        type Source = switchboard_jsonrpc::memory::MemorySource;

        fn control(&self) -> Option<Arc<dyn switchboard_jsonrpc::TransportControl>> {
            Some(Arc::new(Recorder(self.1.clone())))
        }

        fn split(self) -> (Self::Sink, Self::Source) {
            self.0.split()
        }
    }

    #[tokio::test]
    async fn a_successful_initialize_hands_the_transport_its_params_as_the_snapshot() {
        use switchboard_types::lifecycle::Implementation;
        use switchboard_types::methods;

        let server = crate::Server::builder(Implementation::new("s", "1"))
            .build()
            .unwrap();
        let saved = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (ours, mut theirs) = switchboard_jsonrpc::memory::pair();
        let _session = server.serve(Recorded(ours, saved.clone())).unwrap();
        let params = serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {}},
            "clientInfo": {"name": "c", "version": "1"}});
        for (id, params) in [(1, serde_json::json!({"bad": true})), (2, params.clone())] {
            let frame = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": methods::INITIALIZE, "params": params});
            theirs.send_text(frame.to_string()).await.unwrap();
            let _ = theirs.recv_text().await.unwrap();
        }
        let saved = saved.lock().unwrap().clone();
        assert_eq!(saved.len(), 1, "only the successful initialize: {saved:?}");
        let back: serde_json::Value = serde_json::from_str(&saved[0]).unwrap();
        assert_eq!(back, params);
    }
}
