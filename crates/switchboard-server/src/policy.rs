//! Server side: who the client is ([`ClientIdentity`]) and which tools it may see and call
//! ([`AllowList`]), decided once per session by a [`ToolPolicy`].

use std::collections::HashSet;
use std::sync::Arc;

use switchboard_types::capabilities::ClientCapabilities;
use switchboard_types::lifecycle::Implementation;

/// Which tools one client may see and call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum AllowList {
    /// Every tool.
    #[default]
    All,
    /// Only these tools.
    Only(HashSet<String>),
    /// Every tool but these.
    AllExcept(HashSet<String>),
}

impl AllowList {
    /// Only the named tools.
    pub fn only<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        AllowList::Only(names.into_iter().map(Into::into).collect())
    }

    /// Every tool but the named ones.
    pub fn all_except<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        AllowList::AllExcept(names.into_iter().map(Into::into).collect())
    }

    /// Whether the tool `name` is allowed.
    pub fn allows(&self, name: &str) -> bool {
        match self {
            AllowList::All => true,
            AllowList::Only(s) => s.contains(name),
            AllowList::AllExcept(s) => !s.contains(name),
        }
    }
}

/// Who the client is, as the allow-list policy sees it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientIdentity {
    /// `clientInfo` from `initialize`.
    pub info: Implementation,
    /// The client's declared capabilities.
    pub capabilities: ClientCapabilities,
}

/// Decides a session's allow-list once, when the client has initialized.
pub(crate) type ToolPolicy = Arc<dyn Fn(&ClientIdentity) -> AllowList + Send + Sync>;
