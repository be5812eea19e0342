//! The [`SessionStore`]: which session ids exist and the snapshot their role handed over, kept
//! apart from the engines that serve them (DESIGN-NOTES 3).
//!
//! A node keeps its live sessions (engine, streams) in memory. The store keeps the little that
//! another node, or this one after its engine was dropped, needs to take a session over: its id
//! and the snapshot the role handed over when the handshake completed
//! ([`switchboard_jsonrpc::TransportControl::save_snapshot`]; opaque text, stored verbatim and
//! never parsed here). When a request names a session this node does not hold, the service asks
//! the store; if the id is there, the session factory is given a [`crate::Resume`] (the
//! request's `MCP-Protocol-Version` and that snapshot) so that the role starts the session
//! *ready*, and the request is served. Unknown ids get 404 as before.
//!
//! [`InMemorySessionStore`] is the default (bounded; one process). An external store (Redis, a
//! database) implements the same trait and is shared by every node, together with a shared
//! [`crate::EventStore`].

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use crate::event_store::StoreFuture;

/// The default bound on records kept by [`InMemorySessionStore`].
pub(crate) const DEFAULT_MAX_STORED_SESSIONS: usize = 10_000;

/// What is kept of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    /// The `Mcp-Session-Id` (a secret: never log it).
    pub id: Arc<str>,
    /// The role's snapshot of the session (opaque text; `None` until the role hands one over).
    pub snapshot: Option<Arc<str>>,
    /// With authorization on, who opened the session (the token's issuer and subject, as
    /// `issuer|subject`): a node taking the session over serves only that subject.
    pub owner: Option<Arc<str>>,
    /// With several nodes sharing the store ([`crate::Cluster`]), the node serving the session:
    /// every other node relays the session's requests to it, until it stops answering and
    /// another node claims the session ([`SessionStore::claim`]).
    pub node: Option<Arc<str>>,
}

/// What [`SessionStore::claim`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The record named the expected node (or none) and now names the claiming node.
    Won(SessionRecord),
    /// Another node claimed the session first: its record as it stands.
    Lost(SessionRecord),
    /// No such session.
    Gone,
}

/// Why the store failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionStoreError {
    /// The store's bound is reached.
    #[error("session store full (limit {limit})")]
    Full {
        /// The bound.
        limit: usize,
    },
    /// A backend failure, described.
    #[error("session store: {0}")]
    Backend(String),
}

/// Where session records live. Implementations must be cheap to call concurrently.
pub trait SessionStore: Send + Sync + 'static {
    /// Records a new session (once its `initialize` POST was answered), or replaces the record
    /// of an id already stored (the role's snapshot arrived after the first write).
    ///
    /// # Errors
    /// The store is full or unreachable; the session is then refused.
    fn create(&self, record: SessionRecord) -> StoreFuture<'_, Result<(), SessionStoreError>>;

    /// The record of `id`, if the session exists.
    ///
    /// # Errors
    /// The store is unreachable.
    fn load<'a>(
        &'a self,
        id: &'a str,
    ) -> StoreFuture<'a, Result<Option<SessionRecord>, SessionStoreError>>;

    /// Forgets `id` (DELETE, expiry, a failed handshake). Idempotent.
    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()>;

    /// Forgets `id` if its record names `node` as the node serving it (or `node` is `None`):
    /// a node ending a session it no longer serves leaves the new server's record alone.
    /// The default reads then removes (one process: nothing runs in between that matters).
    fn remove_served_by<'a>(&'a self, id: &'a str, node: Option<&'a str>) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let Some(node) = node else {
                return self.remove(id).await;
            };
            if let Ok(Some(r)) = self.load(id).await
                && r.node.as_deref().is_none_or(|n| n == node)
            {
                self.remove(id).await;
            }
        })
    }

    /// Makes `node` the node serving `id` if the record still names `expected` (`None`: no
    /// node), atomically for a store shared by several processes. The default reads then
    /// writes, which is atomic enough within one process only.
    ///
    /// # Errors
    /// The store is unreachable.
    fn claim<'a>(
        &'a self,
        id: &'a str,
        expected: Option<&'a str>,
        node: &'a str,
    ) -> StoreFuture<'a, Result<Claim, SessionStoreError>> {
        Box::pin(async move {
            let Some(mut record) = self.load(id).await? else {
                return Ok(Claim::Gone);
            };
            if record.node.as_deref() != expected && record.node.as_deref() != Some(node) {
                return Ok(Claim::Lost(record));
            }
            record.node = Some(Arc::from(node));
            self.create(record.clone()).await?;
            Ok(Claim::Won(record))
        })
    }

    /// Tells the store that this node still serves `ids` (called periodically by the idle
    /// reaper for every live session): a store whose records expire on their own extends
    /// them. The default does nothing (records of a store in memory live until removed).
    fn keep_alive<'a>(&'a self, ids: &'a [Arc<str>]) -> StoreFuture<'a, ()> {
        let _ = ids;
        Box::pin(async {})
    }
}

/// The default store: a bounded map in this process (by default, at most 10,000 records).
pub struct InMemorySessionStore {
    records: Mutex<HashMap<Arc<str>, SessionRecord>>,
    max: usize,
}

impl InMemorySessionStore {
    /// A store keeping at most `max` records (at least 1).
    pub fn new(max: usize) -> Self {
        InMemorySessionStore {
            records: Mutex::default(),
            max: max.max(1),
        }
    }

    /// How many records are kept.
    pub fn len(&self) -> usize {
        self.records.lock().map(|r| r.len()).unwrap_or(0)
    }

    /// Whether no record is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Default for InMemorySessionStore {
    fn default() -> Self {
        InMemorySessionStore::new(DEFAULT_MAX_STORED_SESSIONS)
    }
}

impl fmt::Debug for InMemorySessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemorySessionStore")
            .field("records", &self.len())
            .field("max", &self.max)
            .finish()
    }
}

impl SessionStore for InMemorySessionStore {
    fn create(&self, record: SessionRecord) -> StoreFuture<'_, Result<(), SessionStoreError>> {
        let result = match self.records.lock() {
            Ok(map) if map.len() >= self.max && !map.contains_key(&record.id) => {
                Err(SessionStoreError::Full { limit: self.max })
            }
            Ok(mut map) => {
                map.insert(record.id.clone(), record);
                Ok(())
            }
            Err(_) => Err(SessionStoreError::Backend("poisoned".into())),
        };
        Box::pin(async move { result })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
    ) -> StoreFuture<'a, Result<Option<SessionRecord>, SessionStoreError>> {
        let found = self
            .records
            .lock()
            .map(|m| m.get(id).cloned())
            .map_err(|_| SessionStoreError::Backend("poisoned".into()));
        Box::pin(async move { found })
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        if let Ok(mut m) = self.records.lock() {
            m.remove(id);
        }
        Box::pin(async {})
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn record(id: &str) -> SessionRecord {
        SessionRecord {
            owner: None,
            node: None,
            id: Arc::from(id),
            snapshot: None,
        }
    }

    #[tokio::test]
    async fn in_memory_store_is_bounded_and_forgets_on_remove() {
        let store = InMemorySessionStore::new(2);
        store.create(record("a")).await.unwrap();
        store.create(record("b")).await.unwrap();
        assert_eq!(
            store.create(record("c")).await,
            Err(SessionStoreError::Full { limit: 2 })
        );
        assert_eq!(store.load("a").await.unwrap(), Some(record("a")));
        store.remove("a").await;
        assert_eq!(store.load("a").await.unwrap(), None);
        store.create(record("c")).await.unwrap();
        assert_eq!(store.len(), 2);
    }

    #[tokio::test]
    async fn a_claim_moves_a_session_only_from_the_node_expected() {
        let store = InMemorySessionStore::new(4);
        let mut r = record("s");
        r.node = Some(Arc::from("a"));
        store.create(r).await.unwrap();
        // "b" believes "c" serves it: the record says "a", so the claim is lost.
        match store.claim("s", Some("c"), "b").await.unwrap() {
            Claim::Lost(r) => assert_eq!(r.node.as_deref(), Some("a")),
            other => panic!("{other:?}"),
        }
        match store.claim("s", Some("a"), "b").await.unwrap() {
            Claim::Won(r) => assert_eq!(r.node.as_deref(), Some("b")),
            other => panic!("{other:?}"),
        }
        assert_eq!(store.claim("t", None, "b").await.unwrap(), Claim::Gone);
        // "a" ends its stale copy: the record "b" serves stays.
        store.remove_served_by("s", Some("a")).await;
        assert!(store.load("s").await.unwrap().is_some());
        store.remove_served_by("s", Some("b")).await;
        assert!(store.load("s").await.unwrap().is_none());
    }
}
