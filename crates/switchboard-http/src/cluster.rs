//! Several nodes serving one endpoint: [`Cluster`], where a session is served.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::event_store::StoreFuture;
use crate::session_store::SessionStoreError;

/// The header a relayed request carries: the id of the node that relayed it.
pub(crate) const FORWARDED_BY: &str = "x-switchboard-forwarded-by";

/// The header authenticating a relayed request: `<unix time in ms>.<HMAC-SHA256 in hex>`
/// under the [`ClusterSecret`] (see the module docs).
pub(crate) const RELAY_MAC: &str = "x-switchboard-relay-mac";

/// How far the time in [`RELAY_MAC`] may be from the receiving node's clock (the nodes'
/// clocks must agree within this).
pub(crate) const RELAY_MAC_MAX_SKEW: Duration = Duration::from_secs(30);

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

/// The secret the nodes of one cluster share, authenticating the requests they relay to each
/// other. Give every node the same one; its bytes are never sent.
///
/// Every node of a cluster is given the same [`ClusterSecret`]
/// ([`HttpConfig::with_cluster_secret`](crate::HttpConfig::with_cluster_secret)). A relayed
/// request carries, in `x-switchboard-relay-mac`, the time it was relayed and an HMAC-SHA256 under that
/// secret over the relaying node's id, the method, the session id and that time (not the path:
/// every node serves the one endpoint, which a `nest_service` mounting sees stripped). A
/// node honours `x-switchboard-forwarded-by` only with a MAC that verifies and is at most
/// 30 s old (or early: the nodes' clocks must agree within that); otherwise the header is ignored, as if absent: an
/// outside client sending it gets the answer it gets without it (the session relayed, or 404),
/// never one that tells a session held by another node from an unknown one. Without a secret
/// a node of a cluster does not start ([`crate::serve`] refuses with `InvalidInput`); a service
/// mounted elsewhere relays nothing and answers every session it does not hold 503
/// `cluster_secret_missing`.
///
/// The secret authenticates the relaying node to the receiving one. It does not hide the
/// relayed request (bearer token included: run the nodes on a private network, or behind TLS
/// between them) and does not authenticate the node a relay goes to: the URL a node announces
/// in the shared store is trusted, so whoever may write to the store may receive relayed
/// requests (`docs/SECURITY.md, "Several nodes"`).
#[derive(Clone)]
pub struct ClusterSecret {
    /// HMAC-SHA256 of the given bytes under a fixed label: the key the MACs are made with.
    key: [u8; 32],
}

impl fmt::Debug for ClusterSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClusterSecret(..)")
    }
}

type HmacSha256 = Hmac<Sha256>;

/// What a relay MAC covers: each field is header text (no line break), so the lines cannot
/// be confused.
fn relay_mac(key: &[u8; 32], node: &str, method: &str, session: &str, at_ms: u64) -> HmacSha256 {
    let mut mac = <HmacSha256 as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
    for field in ["switchboard-relay-v1", node, method, session] {
        mac.update(field.as_bytes());
        mac.update(b"\n");
    }
    mac.update(at_ms.to_string().as_bytes());
    mac
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl ClusterSecret {
    /// The fewest bytes a secret is made from.
    pub const MIN_BYTES: usize = 32;

    /// A secret made from `bytes` (at least [`ClusterSecret::MIN_BYTES`] of them, as random
    /// as a key: for instance 32 random bytes, or their hex or base64 text, used as given);
    /// `None` when there are fewer.
    pub fn new(bytes: impl AsRef<[u8]>) -> Option<Self> {
        let bytes = bytes.as_ref();
        if bytes.len() < Self::MIN_BYTES {
            return None;
        }
        let mut mac =
            <HmacSha256 as KeyInit>::new_from_slice(bytes).expect("HMAC takes any key length");
        mac.update(b"switchboard cluster relay key v1");
        Some(ClusterSecret {
            key: mac.finalize().into_bytes().into(),
        })
    }

    /// The [`RELAY_MAC`] value for a request `node` relays at `at_ms`.
    pub(crate) fn sign(&self, node: &str, method: &str, session: &str, at_ms: u64) -> String {
        let tag = relay_mac(&self.key, node, method, session, at_ms)
            .finalize()
            .into_bytes();
        let mut out = format!("{at_ms}.");
        for b in tag {
            out.push_str(&format!("{b:02x}"));
        }
        out
    }

    /// Whether `value` (a [`RELAY_MAC`]) is this secret's MAC over these fields, made within
    /// [`RELAY_MAC_MAX_SKEW`] of `now_ms`. Compared in constant time.
    pub(crate) fn verify(
        &self,
        value: &str,
        node: &str,
        method: &str,
        session: &str,
        now_ms: u64,
    ) -> bool {
        let Some((at, hex)) = value.split_once('.') else {
            return false;
        };
        let Ok(at_ms) = at.parse::<u64>() else {
            return false;
        };
        let skew = u64::try_from(RELAY_MAC_MAX_SKEW.as_millis()).unwrap_or(u64::MAX);
        if at_ms.abs_diff(now_ms) > skew || hex.len() != 64 {
            return false;
        }
        let Some(tag) = (0..32)
            .map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
            .collect::<Option<Vec<u8>>>()
        else {
            return false;
        };
        relay_mac(&self.key, node, method, session, at_ms)
            .verify_slice(&tag)
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_secret_needs_32_bytes_and_never_prints() {
        assert!(ClusterSecret::new([7u8; 31]).is_none());
        let s = ClusterSecret::new([7u8; 32]).unwrap();
        assert_eq!(format!("{s:?}"), "ClusterSecret(..)");
    }

    /// Finding 5 of issue 25: only a node holding the secret makes a relay MAC the others
    /// accept, for that node, method, session and moment only.
    #[test]
    fn finding_5_a_relay_mac_verifies_only_for_what_it_covers() {
        let s = ClusterSecret::new(b"0123456789abcdef0123456789abcdef").unwrap();
        let now = now_ms();
        let v = s.sign("a", "POST", "sid", now);
        assert!(s.verify(&v, "a", "POST", "sid", now));
        assert!(s.verify(&v, "a", "POST", "sid", now + 1_000));
        for (node, method, session) in [
            ("b", "POST", "sid"),
            ("a", "GET", "sid"),
            ("a", "POST", "sid2"),
        ] {
            assert!(
                !s.verify(&v, node, method, session, now),
                "{node} {method} {session}"
            );
        }
        let skew = u64::try_from(RELAY_MAC_MAX_SKEW.as_millis()).unwrap();
        assert!(!s.verify(&v, "a", "POST", "sid", now + skew + 1), "stale");
        assert!(
            !s.verify(&v, "a", "POST", "sid", now - skew - 1),
            "from the future"
        );
        let other = ClusterSecret::new(b"another secret of at least 32 bytes").unwrap();
        assert!(
            !other.verify(&v, "a", "POST", "sid", now),
            "another cluster's"
        );
        let (at, hex) = v.split_once('.').unwrap();
        for forged in [
            String::new(),
            "garbage".to_owned(),
            format!("{}.{hex}", now + 1),
            format!("{at}.{}", "0".repeat(64)),
            format!("{at}.{}", &hex[..62]),
            format!("{at}.{hex}00"),
            format!("{at}.{}é", &hex[..62]),
        ] {
            assert!(!s.verify(&forged, "a", "POST", "sid", now), "{forged}");
        }
    }
}
