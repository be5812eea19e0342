//! Capability gates in both directions (SPEC-NOTES §1, §4.3): which declared capability each
//! method needs.
//!
//! * Inbound: a request for a capability the server did not declare gets -32601.
//! * Outbound: the server never sends what the client did not declare (`[LC-5]`, `[CP-5]`,
//!   `[CP-6]`): a local error, no frame.

use switchboard_types::capabilities::{ClientCapabilities, ServerCapabilities};
use switchboard_types::catalogue::{self, Direction};
use switchboard_types::{ErrorCode, ErrorObject, ProtocolVersion};

/// -32601 for a capability the server did not declare; the method is cut by
/// [`echo`](switchboard_types::error::echo).
pub(crate) fn undeclared(method: &str, capability: &str) -> ErrorObject {
    let method = switchboard_types::error::echo(method);
    ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {method} (capability {capability} not declared)"))
        .with_data(serde_json::json!({"reason": "capability_not_declared", "method": method, "capability": capability}))
}

/// Decides whether the server may send `method` (a request or notification) to this client, from
/// the method's `switchboard_types::catalogue` entry: its direction, the revisions it
/// exists in and the capability that gates it. Extension methods are not gated.
///
/// # Errors
/// A local error naming the missing capability (or revision); no frame is sent.
pub(crate) fn server_may_send(
    method: &str,
    ours: &ServerCapabilities,
    theirs: &ClientCapabilities,
    version: ProtocolVersion,
) -> Result<(), ErrorObject> {
    let Some(spec) = catalogue::find(method) else {
        return Ok(());
    };
    spec.check(
        Direction::ServerToClient,
        Some(version),
        Some(ours),
        Some(theirs),
    )
    .map_err(|refusal| {
        let what = refusal.describe();
        ErrorObject::new(ErrorCode::INVALID_REQUEST, format!("{method} not sent: {what}"))
            .with_data(serde_json::json!({"reason": "capability_not_negotiated", "method": method, "missing": what}))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_types::capabilities::{ElicitationCapability, ToolsCapability};
    use switchboard_types::methods;

    #[test]
    fn cp_1_inbound_gate_follows_declared_capabilities() {
        let mut caps = ServerCapabilities::default();
        assert_eq!(caps.declares_method(methods::TOOLS_LIST), Some(false));
        caps.tools = Some(ToolsCapability::default());
        assert_eq!(caps.declares_method(methods::TOOLS_LIST), Some(true));
        assert_eq!(
            caps.declares_method("acme/echo"),
            None,
            "an extension method"
        );
        assert_eq!(
            caps.declares_method(methods::SERVER_DISCOVER),
            Some(true),
            "ungated"
        );
    }

    #[test]
    fn lc_5_cp_6_outbound_gate_follows_client_capabilities() {
        let ours = ServerCapabilities::default();
        let mut theirs = ClientCapabilities::default();
        let v = ProtocolVersion::V2025_11_25;
        assert!(server_may_send(methods::SAMPLING_CREATE_MESSAGE, &ours, &theirs, v).is_err());
        assert!(server_may_send(methods::ELICITATION_CREATE, &ours, &theirs, v).is_err());
        theirs.elicitation = Some(ElicitationCapability::default());
        assert!(server_may_send(methods::ELICITATION_CREATE, &ours, &theirs, v).is_ok());
        assert!(
            server_may_send(
                methods::ELICITATION_CREATE,
                &ours,
                &theirs,
                ProtocolVersion::V2025_03_26
            )
            .is_err()
        );
        assert!(
            server_may_send(
                methods::NOTIFICATIONS_ELICITATION_COMPLETE,
                &ours,
                &theirs,
                v
            )
            .is_err(),
            "form-only client"
        );
        assert!(
            server_may_send(methods::NOTIFICATIONS_TOOLS_LIST_CHANGED, &ours, &theirs, v).is_err()
        );
        assert!(server_may_send(methods::PING, &ours, &theirs, v).is_ok());
    }
}
