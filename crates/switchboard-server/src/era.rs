//! The eras a connection may speak, and the rules of the 2025 era.
//!
//! A connection's era is decided by what opens it ([`ConnEra`], `[D26-120]`): `initialize`
//! opens a 2025-era session (2024-11-05 to 2025-11-25: handshake, per-connection session,
//! server-to-client requests), whose version-dependent decisions (negotiation, lifecycle
//! gating, outbound gating, batch policy) are [`Stateful`]'s; a request whose `_meta` names
//! the protocol version opens a 2026-07-28 connection, served by the modern front door
//! (`service::front`, with [`crate::modern`]) over the same route table and handlers.

use switchboard_types::{ErrorObject, Feature, MessageKind, ProtocolVersion};

use crate::lifecycle::{LifecycleState, Strictness};
use switchboard_types::methods;

/// The 2025 era's rules: 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Stateful;

/// -32600 "server not initialized".
pub(crate) fn not_initialized(method: &str, state: LifecycleState) -> ErrorObject {
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

impl Stateful {
    /// Picks the revision to answer an offered one with (`[LC-7]`, `[LC-8]`).
    pub(crate) fn negotiate(
        &self,
        offered: &str,
        supported: &[ProtocolVersion],
    ) -> ProtocolVersion {
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

    /// Decides whether an inbound request may be served in `state`.
    ///
    /// # Errors
    /// The wire error to answer with.
    pub(crate) fn gate_request(
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

    /// Decides whether we may send a message of `kind` and `method` in `state`.
    ///
    /// # Errors
    /// Why not; the caller gets a local error and no frame is sent.
    pub(crate) fn gate_outbound(
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

    /// Whether a JSON-RPC batch is acceptable under `version` in `state`.
    pub(crate) fn batch_allowed(
        &self,
        state: LifecycleState,
        version: Option<ProtocolVersion>,
    ) -> bool {
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
                switchboard_types::methods::SERVER_DISCOVER,
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
