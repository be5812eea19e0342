//! The per-revision seam: everything that differs between protocol eras lives behind [`Era`].
//!
//! Today one era is served: [`Stateful`] (2024-11-05 to 2025-11-25: `initialize` handshake,
//! per-connection session, server-to-client requests). Revision 2026-07-28 is stateless (no
//! handshake, `server/discover`, version and capabilities in each request's `_meta`, "input
//! required" results instead of server requests); it will be a second implementation of this
//! trait chosen per request, without touching the dispatch code that calls it.

use std::fmt;

use switchboard_types::{ErrorObject, Feature, MessageKind, ProtocolVersion};

use crate::lifecycle::{LifecycleState, Strictness};
use switchboard_types::methods;

/// Version-specific behaviour of the server role.
pub trait Era: Send + Sync + fmt::Debug + 'static {
    /// A name for traces, e.g. `"stateful"`.
    fn name(&self) -> &'static str;

    /// Picks the revision to answer an offered one with (`[LC-7]`, `[LC-8]`).
    fn negotiate(&self, offered: &str, supported: &[ProtocolVersion]) -> ProtocolVersion;

    /// Decides whether an inbound request may be served in `state`.
    ///
    /// # Errors
    /// The wire error to answer with.
    fn gate_request(
        &self,
        state: LifecycleState,
        method: &str,
        known: bool,
        strict: Strictness,
    ) -> Result<(), ErrorObject>;

    /// Decides whether we may send a message of `kind` and `method` in `state`.
    ///
    /// # Errors
    /// Why not; the caller gets a local error and no frame is sent.
    fn gate_outbound(
        &self,
        state: LifecycleState,
        kind: MessageKind,
        method: &str,
    ) -> Result<(), ErrorObject>;

    /// Whether a JSON-RPC batch is acceptable under `version` in `state`.
    fn batch_allowed(&self, state: LifecycleState, version: Option<ProtocolVersion>) -> bool;
}

/// The stateful era: 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stateful;

/// -32600 "server not initialized".
pub fn not_initialized(method: &str, state: LifecycleState) -> ErrorObject {
    let method = switchboard_types::error::echo(method);
    ErrorObject::new(
        switchboard_types::ErrorCode::INVALID_REQUEST,
        "server not initialized",
    )
    .with_data(serde_json::json!({
        "reason": "not_initialized",
        "method": method,
        "state": state.as_str(),
        "spec": "LC-1",
    }))
}

impl Era for Stateful {
    fn name(&self) -> &'static str {
        "stateful"
    }

    fn negotiate(&self, offered: &str, supported: &[ProtocolVersion]) -> ProtocolVersion {
        match ProtocolVersion::parse(offered) {
            Some(v) if supported.contains(&v) && v.supports(Feature::Handshake) => v,
            // A counter-offer: the newest we serve (`[LC-8]`), never an error.
            _ => supported
                .iter()
                .copied()
                .filter(|v| v.supports(Feature::Handshake))
                .max()
                .unwrap_or(ProtocolVersion::LATEST),
        }
    }

    fn gate_request(
        &self,
        state: LifecycleState,
        method: &str,
        known: bool,
        strict: Strictness,
    ) -> Result<(), ErrorObject> {
        match (state, method) {
            (_, methods::PING) => Ok(()),
            (LifecycleState::AwaitingInitialize, methods::INITIALIZE) => Ok(()),
            (_, methods::INITIALIZE) => Err(ErrorObject::invalid_request(
                "initialize was already received",
                "already_initialized",
            )),
            // A probe for a method we do not have (e.g. `server/discover`) is -32601, before and after.
            (_, m) if !known => Err(ErrorObject::method_not_found(m)),
            (LifecycleState::AwaitingInitialize, m) => Err(not_initialized(m, state)),
            (LifecycleState::Initializing, m) if strict == Strictness::Strict => {
                Err(not_initialized(m, state))
            }
            (LifecycleState::Closed, m) => Err(not_initialized(m, state)),
            _ => Ok(()),
        }
    }

    fn gate_outbound(
        &self,
        state: LifecycleState,
        kind: MessageKind,
        method: &str,
    ) -> Result<(), ErrorObject> {
        let allowed = match state {
            LifecycleState::Ready => true,
            // Between our `initialize` answer and the client's `initialized`: ping and logging only (§3.2).
            LifecycleState::Initializing => {
                method == methods::PING || method == methods::NOTIFICATIONS_MESSAGE
            }
            LifecycleState::AwaitingInitialize | LifecycleState::Closed => {
                kind == MessageKind::Notification
                    && method == methods::NOTIFICATIONS_MESSAGE
                    && state != LifecycleState::Closed
            }
        };
        if allowed {
            Ok(())
        } else {
            Err(ErrorObject::invalid_request(
                format!("{method} may not be sent before the handshake completes (state {state})"),
                "not_initialized",
            ))
        }
    }

    fn batch_allowed(&self, state: LifecycleState, version: Option<ProtocolVersion>) -> bool {
        // `initialize` never travels in a batch (`[JR-9]`), so no batch before it is answered.
        state != LifecycleState::AwaitingInitialize
            && version.is_some_and(|v| v.supports(Feature::Batching))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lc_7_lc_8_negotiation_echoes_or_counter_offers() {
        let all = ProtocolVersion::SUPPORTED;
        for v in all {
            assert_eq!(
                Stateful.negotiate(v.as_str(), &all),
                v,
                "LC-7: a supported version is echoed"
            );
        }
        assert_eq!(
            Stateful.negotiate("1999-01-01", &all),
            ProtocolVersion::V2025_11_25,
            "LC-8"
        );
        assert_eq!(
            Stateful.negotiate("2026-07-28", &all),
            ProtocolVersion::V2025_11_25,
            "stateless is not served by initialize"
        );
        assert_eq!(
            Stateful.negotiate("garbage", &[ProtocolVersion::V2025_03_26]),
            ProtocolVersion::V2025_03_26
        );
    }

    #[test]
    fn lc_1_only_initialize_and_ping_before_the_handshake() {
        let s = Strictness::Strict;
        assert!(
            Stateful
                .gate_request(
                    LifecycleState::AwaitingInitialize,
                    methods::INITIALIZE,
                    true,
                    s
                )
                .is_ok()
        );
        assert!(
            Stateful
                .gate_request(LifecycleState::AwaitingInitialize, methods::PING, true, s)
                .is_ok()
        );
        let e = Stateful
            .gate_request(
                LifecycleState::AwaitingInitialize,
                methods::TOOLS_LIST,
                true,
                s,
            )
            .unwrap_err();
        assert_eq!(e.code, switchboard_types::ErrorCode::INVALID_REQUEST);
        let e = Stateful
            .gate_request(
                LifecycleState::AwaitingInitialize,
                "server/discover",
                false,
                s,
            )
            .unwrap_err();
        assert_eq!(e.code, switchboard_types::ErrorCode::METHOD_NOT_FOUND);
        assert!(
            Stateful
                .gate_request(LifecycleState::Initializing, methods::TOOLS_LIST, true, s)
                .is_err()
        );
        assert!(
            Stateful
                .gate_request(
                    LifecycleState::Initializing,
                    methods::TOOLS_LIST,
                    true,
                    Strictness::Lenient
                )
                .is_ok()
        );
        assert!(
            Stateful
                .gate_request(LifecycleState::Ready, methods::INITIALIZE, true, s)
                .is_err()
        );
    }
}

/// Which era a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub(crate) enum ConnEra {
    /// Nothing has opened it yet.
    #[default]
    Undecided = 0,
    /// `initialize` opened it (or it resumed a 2025-era session).
    Legacy = 1,
    /// A modern request opened it, or its transport routed it to the modern era.
    Modern = 2,
}

impl ConnEra {
    pub(crate) fn from_u8(v: u8) -> Self {
        match v {
            1 => ConnEra::Legacy,
            2 => ConnEra::Modern,
            _ => ConnEra::Undecided,
        }
    }
}
