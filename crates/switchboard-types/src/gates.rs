//! Which declared capability each request needs (SPEC-NOTES §1.1), read from the
//! [`catalogue`]: data shared by both roles, so that the server answers -32601
//! and the client refuses locally from the same table.

use crate::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::catalogue::{self, Direction};

impl ServerCapabilities {
    /// Whether these server capabilities cover the client → server request `method`.
    /// `None` for a method that is not a client → server request of revisions up to 2025-11-25.
    pub fn declares_method(&self, method: &str) -> Option<bool> {
        let spec = catalogue::request(method)?;
        spec.sender.sends(Direction::ClientToServer).then(|| {
            spec.check(Direction::ClientToServer, None, Some(self), None)
                .is_ok()
        })
    }
}

impl ClientCapabilities {
    /// Whether these client capabilities cover the server → client request `method`.
    /// `None` for a method that is not a server → client request.
    pub fn declares_method(&self, method: &str) -> Option<bool> {
        let spec = catalogue::request(method)?;
        spec.sender.sends(Direction::ServerToClient).then(|| {
            spec.check(Direction::ServerToClient, None, None, Some(self))
                .is_ok()
        })
    }
}

/// The capability name a method belongs to, for error messages (`completion/*` → `completions`);
/// `none` for an ungated or unknown method.
pub fn capability_of(method: &str) -> &'static str {
    catalogue::find(method)
        .and_then(|s| s.gate)
        .map_or("none", |g| g.capability.name())
}
