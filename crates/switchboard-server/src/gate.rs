//! Capability gates in both directions (SPEC-NOTES §1, §4.3): which declared capability each
//! method needs.
//!
//! * Inbound: a request for a capability the server did not declare gets -32601.
//! * Outbound: the server never sends what the client did not declare (`[LC-5]`, `[CP-5]`,
//!   `[CP-6]`): a local error, no frame.

use switchboard_types::capabilities::{ClientCapabilities, ServerCapabilities};
use switchboard_types::{ErrorCode, ErrorObject, Feature, ProtocolVersion};

/// -32601 for a capability the server did not declare.
pub fn undeclared(method: &str, capability: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {method} (capability {capability} not declared)"))
        .with_data(serde_json::json!({"reason": "capability_not_declared", "method": method, "capability": capability}))
}

pub use switchboard_types::gates::capability_of;

/// Decides whether the server may send `method` (a request or notification) to this client.
///
/// # Errors
/// A local error naming the missing capability (or revision); no frame is sent.
pub fn server_may_send(
    method: &str,
    ours: &ServerCapabilities,
    theirs: &ClientCapabilities,
    version: ProtocolVersion,
) -> Result<(), ErrorObject> {
    let refuse = |what: &str| {
        Err(ErrorObject::new(ErrorCode::INVALID_REQUEST, format!("{method} not sent: {what}"))
            .with_data(serde_json::json!({"reason": "capability_not_negotiated", "method": method, "missing": what})))
    };
    let flag = |b: Option<bool>| b == Some(true);
    match method {
        "ping" | "notifications/progress" | "notifications/cancelled" => Ok(()),
        "sampling/createMessage" if theirs.sampling.is_none() => {
            refuse("client capability sampling")
        }
        "roots/list" if theirs.roots.is_none() => refuse("client capability roots"),
        "elicitation/create" if !version.supports(Feature::Elicitation) => {
            refuse("revision without elicitation")
        }
        "elicitation/create" if theirs.elicitation.is_none() => {
            refuse("client capability elicitation")
        }
        "notifications/elicitation/complete" if !theirs.supports_url_elicitation() => {
            refuse("client capability elicitation.url")
        }
        "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" if theirs.tasks.is_none() => {
            refuse("client capability tasks")
        }
        "notifications/tools/list_changed"
            if !flag(ours.tools.as_ref().and_then(|t| t.list_changed)) =>
        {
            refuse("server capability tools.listChanged")
        }
        "notifications/prompts/list_changed"
            if !flag(ours.prompts.as_ref().and_then(|t| t.list_changed)) =>
        {
            refuse("server capability prompts.listChanged")
        }
        "notifications/resources/list_changed"
            if !flag(ours.resources.as_ref().and_then(|t| t.list_changed)) =>
        {
            refuse("server capability resources.listChanged")
        }
        "notifications/resources/updated" if !ours.supports_resource_subscribe() => {
            refuse("server capability resources.subscribe")
        }
        "notifications/message" if ours.logging.is_none() => refuse("server capability logging"),
        "notifications/tasks/status" if ours.tasks.is_none() && theirs.tasks.is_none() => {
            refuse("capability tasks")
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_types::capabilities::{ElicitationCapability, ToolsCapability};

    #[test]
    fn cp_1_inbound_gate_follows_declared_capabilities() {
        let mut caps = ServerCapabilities::default();
        assert_eq!(caps.declares_method("tools/list"), Some(false));
        caps.tools = Some(ToolsCapability::default());
        assert_eq!(caps.declares_method("tools/list"), Some(true));
        assert_eq!(caps.declares_method("server/discover"), None);
    }

    #[test]
    fn lc_5_cp_6_outbound_gate_follows_client_capabilities() {
        let ours = ServerCapabilities::default();
        let mut theirs = ClientCapabilities::default();
        let v = ProtocolVersion::V2025_11_25;
        assert!(server_may_send("sampling/createMessage", &ours, &theirs, v).is_err());
        assert!(server_may_send("elicitation/create", &ours, &theirs, v).is_err());
        theirs.elicitation = Some(ElicitationCapability::default());
        assert!(server_may_send("elicitation/create", &ours, &theirs, v).is_ok());
        assert!(
            server_may_send(
                "elicitation/create",
                &ours,
                &theirs,
                ProtocolVersion::V2025_03_26
            )
            .is_err()
        );
        assert!(
            server_may_send("notifications/elicitation/complete", &ours, &theirs, v).is_err(),
            "form-only client"
        );
        assert!(server_may_send("notifications/tools/list_changed", &ours, &theirs, v).is_err());
        assert!(server_may_send("ping", &ours, &theirs, v).is_ok());
    }
}
