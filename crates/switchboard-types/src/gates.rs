//! Which declared capability each request needs (SPEC-NOTES §1.1): data shared by both roles,
//! so that the server answers -32601 and the client refuses locally from the same table.

use crate::capabilities::{ClientCapabilities, ServerCapabilities};

impl ServerCapabilities {
    /// Whether these server capabilities cover the client → server request `method`.
    /// `None` for a method that is not a client → server request of revisions up to 2025-11-25.
    pub fn declares_method(&self, method: &str) -> Option<bool> {
        Some(match method {
            "initialize" | "ping" => true,
            "tools/list" | "tools/call" => self.tools.is_some(),
            "resources/list" | "resources/templates/list" | "resources/read" => {
                self.resources.is_some()
            }
            "resources/subscribe" | "resources/unsubscribe" => self.supports_resource_subscribe(),
            "prompts/list" | "prompts/get" => self.prompts.is_some(),
            "logging/setLevel" => self.logging.is_some(),
            "completion/complete" => self.completions.is_some(),
            "tasks/get" | "tasks/result" => self.tasks.is_some(),
            "tasks/list" => self.tasks.as_ref().is_some_and(|t| t.list.is_some()),
            "tasks/cancel" => self.tasks.as_ref().is_some_and(|t| t.cancel.is_some()),
            _ => return None,
        })
    }
}

impl ClientCapabilities {
    /// Whether these client capabilities cover the server → client request `method`.
    /// `None` for a method that is not a server → client request.
    pub fn declares_method(&self, method: &str) -> Option<bool> {
        Some(match method {
            "ping" => true,
            "sampling/createMessage" => self.sampling.is_some(),
            "roots/list" => self.roots.is_some(),
            "elicitation/create" => self.elicitation.is_some(),
            "tasks/get" | "tasks/result" => self.tasks.is_some(),
            "tasks/list" => self.tasks.as_ref().is_some_and(|t| t.list.is_some()),
            "tasks/cancel" => self.tasks.as_ref().is_some_and(|t| t.cancel.is_some()),
            _ => return None,
        })
    }
}

/// The capability name a method belongs to, for error messages (`completion/*` → `completions`).
pub fn capability_of(method: &str) -> &'static str {
    match method.split('/').next().unwrap_or("") {
        "tools" => "tools",
        "resources" => "resources",
        "prompts" => "prompts",
        "logging" => "logging",
        "completion" => "completions",
        "tasks" => "tasks",
        "sampling" => "sampling",
        "elicitation" => "elicitation",
        "roots" => "roots",
        _ => "none",
    }
}
