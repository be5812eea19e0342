//! Client side: resource subscriptions. [`ClientSession::subscribe`] registers a callback for a
//! URI (sending `resources/subscribe` for the URI's first callback); each
//! `notifications/resources/updated` is routed to the callbacks of the URI it names, and of any
//! subscribed URI it is a sub-resource of (the spec lets the server name a sub-resource).
//! The number of subscriptions is bounded.
//!
//! [`ClientSession::subscribe`]: crate::ClientSession::subscribe

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use switchboard_types::resources::ResourceUpdatedNotificationParams;

use crate::handlers::run_callback;

/// Default bound on resource subscriptions per session.
pub(crate) const DEFAULT_MAX_SUBSCRIPTIONS: usize = 1024;

/// Identifies one subscription (one callback for one URI) within a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubscriptionId(u64);

impl fmt::Display for SubscriptionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Why a subscription could not be added or removed; [`ClientError`](crate::ClientError) carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SubscriptionError {
    /// The bound is reached.
    TooMany {
        /// The bound.
        limit: usize,
    },
    /// No such subscription.
    Unknown(SubscriptionId),
    /// The registry's lock is poisoned.
    Poisoned,
}

/// Receives `notifications/resources/updated` for a subscribed URI. It runs on the session's
/// notification path, so it should return quickly (hand work to a task or channel).
pub type ResourceUpdateCallback = Arc<dyn Fn(ResourceUpdatedNotificationParams) + Send + Sync>;

#[derive(Default)]
struct Registry {
    next: u64,
    by_uri: HashMap<String, Vec<(SubscriptionId, ResourceUpdateCallback)>>,
    uri_of: HashMap<SubscriptionId, String>,
}

/// The session's subscriptions.
pub(crate) struct Subscriptions {
    limit: usize,
    registry: Mutex<Registry>,
}

impl Subscriptions {
    pub(crate) fn new(limit: usize) -> Self {
        Subscriptions {
            limit,
            registry: Mutex::new(Registry::default()),
        }
    }

    fn registry(&self) -> Result<std::sync::MutexGuard<'_, Registry>, SubscriptionError> {
        self.registry
            .lock()
            .map_err(|_| SubscriptionError::Poisoned)
    }

    /// Registers `callback` for `uri`; also whether it is the URI's first subscription.
    pub(crate) fn add(
        &self,
        uri: &str,
        callback: ResourceUpdateCallback,
    ) -> Result<(SubscriptionId, bool), SubscriptionError> {
        let mut r = self.registry()?;
        if r.uri_of.len() >= self.limit {
            return Err(SubscriptionError::TooMany { limit: self.limit });
        }
        r.next += 1;
        let id = SubscriptionId(r.next);
        r.uri_of.insert(id, uri.to_owned());
        let list = r.by_uri.entry(uri.to_owned()).or_default();
        list.push((id, callback));
        Ok((id, list.len() == 1))
    }

    /// Removes a subscription; its URI, and whether it was the URI's last.
    pub(crate) fn remove(&self, id: SubscriptionId) -> Result<(String, bool), SubscriptionError> {
        let mut r = self.registry()?;
        let uri = r.uri_of.remove(&id).ok_or(SubscriptionError::Unknown(id))?;
        let last = match r.by_uri.get_mut(&uri) {
            Some(list) => {
                list.retain(|(i, _)| *i != id);
                list.is_empty()
            }
            None => true,
        };
        if last {
            r.by_uri.remove(&uri);
        }
        Ok((uri, last))
    }

    /// How many subscriptions there are.
    pub(crate) fn len(&self) -> usize {
        self.registry.lock().map(|r| r.uri_of.len()).unwrap_or(0)
    }

    /// Whether `uri` has a subscription.
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.registry
            .lock()
            .is_ok_and(|r| r.by_uri.contains_key(uri))
    }

    /// Delivers an update to the callbacks of the URI it names or is a sub-resource of.
    pub(crate) fn route(&self, update: ResourceUpdatedNotificationParams) {
        let callbacks: Vec<ResourceUpdateCallback> = match self.registry.lock() {
            Ok(r) => r
                .by_uri
                .iter()
                .filter(|(uri, _)| covers(uri, &update.uri))
                .flat_map(|(_, list)| list.iter().map(|(_, cb)| cb.clone()))
                .collect(),
            Err(_) => return,
        };
        if callbacks.is_empty() {
            tracing::debug!(uri = %switchboard_types::error::echo(&update.uri), "resource update for no subscription ignored");
        }
        for cb in callbacks {
            let update = update.clone();
            run_callback("resources/updated", move || cb(update));
        }
    }
}

/// Whether an update of `updated` concerns a subscription to `subscribed`: the same URI, or a
/// sub-resource of it (the next character after the subscribed URI is `/`, `#` or `?`, or the
/// subscribed URI itself ends with `/`).
fn covers(subscribed: &str, updated: &str) -> bool {
    match updated.strip_prefix(subscribed) {
        Some("") => true,
        Some(rest) => {
            subscribed.ends_with('/')
                || rest.starts_with('/')
                || rest.starts_with('#')
                || rest.starts_with('?')
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{DEFAULT_MAX_SUBSCRIPTIONS, covers};

    #[test]
    fn the_default_bound_is_1024() {
        // The e2e test `client_subscriptions::the_default_bound_is_1024` fills it.
        assert_eq!(DEFAULT_MAX_SUBSCRIPTIONS, 1024);
    }

    #[test]
    fn sub_resources_are_covered_and_siblings_are_not() {
        assert!(covers("file:///a", "file:///a"));
        assert!(covers("file:///a", "file:///a/b"));
        assert!(covers("file:///a/", "file:///a/b"));
        assert!(!covers("file:///a", "file:///ab"));
        assert!(!covers("file:///a/b", "file:///a"));
    }
}
