//! Several nodes serving one endpoint: [`Cluster`], where a session is served.

use std::sync::Arc;
use std::time::Duration;

use crate::event_store::StoreFuture;
use crate::session_store::SessionStoreError;

/// The header a relayed request carries: the id of the node that relayed it.
pub(crate) const FORWARDED_BY: &str = "x-switchboard-forwarded-by";

/// The header of a node's answer (503 `node_leaving`) while it leaves the cluster: the node relaying
/// to it takes the session over instead of passing the answer on.
pub(crate) const LEAVING: &str = "x-switchboard-node-leaving";

/// How long a relay waits for the serving node to accept its connection before that node is
/// taken for gone.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Where a session is served, as the shared store sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// No such session.
    Unknown,
    /// This node serves it (its engine may have been dropped: it is taken over locally).
    Here,
    /// A live node serves it, reachable at `url`.
    Remote {
        /// The serving node's id.
        node: Arc<str>,
        /// Its endpoint's URL.
        url: Arc<str>,
    },
    /// No live node serves it: the node the record names (if any) announces itself no more.
    Orphan {
        /// The node the record names.
        node: Option<Arc<str>>,
    },
}

/// Several nodes serving one endpoint behind a load balancer: each session is served by one
/// node at a time, and every other node relays the session's requests to it.
///
/// A [`Cluster`] (the Redis one is in `switchboard-redis`) tells a node where a session lives.
/// The session's record in the shared [`SessionStore`](crate::SessionStore) names the node serving it; nodes
/// announce themselves (an id, the URL other nodes reach their endpoint at) for as long as they
/// run. When a request names a session this node does not hold:
///
/// | the record names | this node |
/// |---|---|
/// | no session | answers 404, as a single node does |
/// | a live node, reachable | relays the request there and streams the answer back unchanged (SSE included) |
/// | a node that does not answer or announces itself no more, or no node, or this node | claims the session ([`SessionStore::claim`](crate::SessionStore::claim), atomic in the store) and takes it over: the role resumes it from its snapshot, `Last-Event-ID` replays from the shared [`crate::EventStore`] |
/// | a node that answers that it is leaving (`x-switchboard-node-leaving`: it is shutting down) | the same: claims the session and takes it over |
///
/// A node shutting down (`serve_with_shutdown`, [`StreamableHttpService::close_all`](crate::StreamableHttpService::close_all))
/// ends its sessions here only, leaving their records and events to the cluster, and until its
/// listener closes answers every request 503 with `Retry-After` and `x-switchboard-node-leaving`, never 404:
/// the sessions live on, on the node that takes them over.
///
/// So everything a session produces comes from one engine: notifications, progress, log
/// messages and the server's own requests reach the client on whichever node holds its stream;
/// the client's answers, `notifications/cancelled` and `DELETE`, posted to any node, reach the
/// engine waiting for them; the idle timeout is kept by the one node that sees all the
/// session's traffic, and the store's records expire only when no node serves them
/// ([`SessionStore::keep_alive`](crate::SessionStore::keep_alive)).
///
/// A relayed request carries `x-switchboard-forwarded-by`: a node receiving one never relays it again (a
/// stale view of the cluster cannot loop); if the record names yet another live node, it
/// answers 503 with `Retry-After`. The relay keeps every end-to-end header (`Host`, `Origin`,
/// `Authorization` included: the serving node checks them again with the same configuration)
/// and drops the hop-by-hop ones.
///
/// The nodes of a cluster, as one node sees them. Implementations must be cheap to call
/// concurrently; [`Cluster::locate`] is called once per request naming a session this node
/// does not hold, so it should cost one round trip to the store.
pub trait Cluster: Send + Sync + 'static {
    /// This node's id: unique among the nodes sharing the store, not secret.
    fn node_id(&self) -> &str;

    /// Where `session` is served.
    ///
    /// # Errors
    /// The store is unreachable.
    fn locate<'a>(
        &'a self,
        session: &'a str,
    ) -> StoreFuture<'a, Result<Location, SessionStoreError>>;
}

/// How long a node trusts what it learned of a session's node before asking the store again.
pub(crate) const LOCATION_CACHE_TTL: Duration = Duration::from_secs(2);
/// The most session locations a node remembers.
pub(crate) const LOCATION_CACHE_MAX: usize = 10_000;
