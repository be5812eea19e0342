//! Several nodes serving one endpoint behind a load balancer: each session is served by one
//! node at a time, and every other node relays the session's requests to it.
//!
//! A [`Cluster`] (the Redis one is in `switchboard-redis`) tells a node where a session lives.
//! The session's record in the shared [`SessionStore`](crate::SessionStore) names the node serving it; nodes
//! announce themselves (an id, the URL other nodes reach their endpoint at) for as long as they
//! run. When a request names a session this node does not hold:
//!
//! | the record names | this node |
//! |---|---|
//! | no session | answers 404, as a single node does |
//! | a live node, reachable | relays the request there and streams the answer back unchanged (SSE included) |
//! | a node that does not answer or announces itself no more, or no node, or this node | claims the session ([`SessionStore::claim`](crate::SessionStore::claim), atomic in the store) and takes it over: the role resumes it from its snapshot, `Last-Event-ID` replays from the shared [`crate::EventStore`] |
//! | a node that answers that it is leaving ([`LEAVING`]: it is shutting down) | the same: claims the session and takes it over |
//!
//! A node shutting down (`serve_with_shutdown`, [`StreamableHttpService::close_all`](crate::StreamableHttpService::close_all))
//! ends its sessions here only, leaving their records and events to the cluster, and until its
//! listener closes answers every request 503 with `Retry-After` and [`LEAVING`], never 404:
//! the sessions live on, on the node that takes them over.
//!
//! So everything a session produces comes from one engine: notifications, progress, log
//! messages and the server's own requests reach the client on whichever node holds its stream;
//! the client's answers, `notifications/cancelled` and `DELETE`, posted to any node, reach the
//! engine waiting for them; the idle timeout is kept by the one node that sees all the
//! session's traffic, and the store's records expire only when no node serves them
//! ([`SessionStore::keep_alive`](crate::SessionStore::keep_alive)).
//!
//! A relayed request carries [`FORWARDED_BY`]: a node receiving one never relays it again (a
//! stale view of the cluster cannot loop); if the record names yet another live node, it
//! answers 503 with `Retry-After`. The relay keeps every end-to-end header (`Host`, `Origin`,
//! `Authorization` included: the serving node checks them again with the same configuration)
//! and drops the hop-by-hop ones.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use http::header::{self, HeaderName, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::event_store::StoreFuture;
use crate::reply::{TRANSPORT_ERROR, refuse};
use crate::session_store::SessionStoreError;

/// The header a relayed request carries: the id of the node that relayed it.
pub const FORWARDED_BY: &str = "x-switchboard-forwarded-by";

/// The header of a node's answer (503 `node_leaving`) while it leaves the cluster: the node relaying
/// to it takes the session over instead of passing the answer on.
pub const LEAVING: &str = "x-switchboard-node-leaving";

/// How long a relay waits for the serving node to accept its connection before that node is
/// taken for gone.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

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

/// Why a relay failed.
#[derive(Debug)]
pub(crate) enum RelayError {
    /// The serving node did not accept a connection: take it for gone.
    Unreachable(String),
    /// The relay failed after the request was sent.
    Failed(String),
}

/// How long a node trusts what it learned of a session's node before asking the store again.
pub const LOCATION_CACHE_TTL: Duration = Duration::from_secs(2);
/// The most session locations a node remembers.
pub const LOCATION_CACHE_MAX: usize = 10_000;

/// Relays requests to other nodes over pooled HTTP/1.1 connections, remembering for a moment
/// where each session was served (so that a relayed request costs no round trip to the store).
#[derive(Clone)]
pub(crate) struct Relay {
    client: Client<HttpConnector, Full<Bytes>>,
    node: HeaderValue,
    cache: Arc<std::sync::Mutex<LocationCache>>,
}

/// Recently located remote sessions: id → (node, URL, when learned). Bounded in count and age.
#[derive(Default)]
struct LocationCache {
    entries: std::collections::HashMap<Arc<str>, (Arc<str>, Arc<str>, std::time::Instant)>,
}

impl LocationCache {
    fn get(&mut self, id: &str) -> Option<(Arc<str>, Arc<str>)> {
        let (node, url, at) = self.entries.get(id)?;
        if at.elapsed() < LOCATION_CACHE_TTL {
            return Some((node.clone(), url.clone()));
        }
        self.entries.remove(id);
        None
    }

    fn put(&mut self, id: &str, node: Arc<str>, url: Arc<str>) {
        if self.entries.len() >= LOCATION_CACHE_MAX {
            self.entries
                .retain(|_, (_, _, at)| at.elapsed() < LOCATION_CACHE_TTL);
            if self.entries.len() >= LOCATION_CACHE_MAX {
                self.entries.clear();
            }
        }
        self.entries
            .insert(Arc::from(id), (node, url, std::time::Instant::now()));
    }
}

impl fmt::Debug for Relay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Relay").field("node", &self.node).finish()
    }
}

/// Headers that concern one connection only (RFC 9110 §7.6.1), never relayed.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

fn hop_by_hop(name: &HeaderName) -> bool {
    HOP_BY_HOP.contains(&name.as_str()) || name == header::CONTENT_LENGTH
}

impl Relay {
    /// A relay naming `node` in [`FORWARDED_BY`].
    pub(crate) fn new(node: &str) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .pool_max_idle_per_host(64)
            .build(connector);
        Relay {
            client,
            node: HeaderValue::from_str(node)
                .unwrap_or_else(|_| HeaderValue::from_static("unnamed")),
            cache: Arc::default(),
        }
    }

    /// Sends `parts` with `body` to `url` and returns the answer, its body streamed as it
    /// arrives.
    pub(crate) async fn relay(
        &self,
        url: &str,
        parts: &http::request::Parts,
        body: Bytes,
    ) -> Result<Response<Body>, RelayError> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| RelayError::Failed(format!("node URL {url:?}: {e}")))?;
        let mut builder = Request::builder()
            .method(parts.method.clone())
            .uri(uri)
            .version(http::Version::HTTP_11);
        if let Some(h) = builder.headers_mut() {
            for (name, value) in &parts.headers {
                if !hop_by_hop(name) && name.as_str() != FORWARDED_BY {
                    h.append(name.clone(), value.clone());
                }
            }
            h.insert(HeaderName::from_static(FORWARDED_BY), self.node.clone());
        }
        let request = builder
            .body(Full::new(body))
            .map_err(|e| RelayError::Failed(e.to_string()))?;
        let answer = self.client.request(request).await.map_err(|e| {
            if e.is_connect() {
                RelayError::Unreachable(e.to_string())
            } else {
                RelayError::Failed(e.to_string())
            }
        })?;
        let (mut parts, incoming) = answer.into_parts();
        let names: Vec<HeaderName> = parts
            .headers
            .keys()
            .filter(|n| hop_by_hop(n))
            .cloned()
            .collect();
        for n in names {
            parts.headers.remove(n);
        }
        Ok(Response::from_parts(parts, Body::new(incoming)))
    }
}

/// The answer when a relayed request reaches a node that does not serve its session while
/// another live node does (the nodes' views differ for a moment): retry shortly.
pub(crate) fn moved() -> Response<Body> {
    let mut r = refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        TRANSPORT_ERROR,
        "Service unavailable: the session is moving between nodes; retry",
        "session_moving",
        None,
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// A leaving node's answer to every request (its sessions are the other nodes' now): 503 with
/// `Retry-After`, so that a client sent here again by its load balancer retries, and
/// [`LEAVING`], so that a node relaying here takes the session over at once.
pub(crate) fn leaving() -> Response<Body> {
    let mut r = refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        TRANSPORT_ERROR,
        "Service unavailable: this node is shutting down; retry",
        "node_leaving",
        None,
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r.headers_mut()
        .insert(LEAVING, HeaderValue::from_static("1"));
    r
}

/// The answer when the node serving a session failed in the middle of a relay.
pub(crate) fn bad_gateway(why: &str) -> Response<Body> {
    refuse(
        StatusCode::BAD_GATEWAY,
        TRANSPORT_ERROR,
        format!("Bad Gateway: the node serving this session failed ({why})"),
        "node_failed",
        None,
    )
}

/// Routes a request naming session `id`, which this node does not hold: relayed to the node
/// serving it (its answer is returned), or handed back to be served here (a session to take
/// over, or an unknown one to refuse as a single node does).
pub(crate) async fn route(
    cluster: &dyn Cluster,
    relay: &Relay,
    config: &crate::HttpConfig,
    id: &str,
    req: Request<Body>,
) -> Result<Response<Body>, Request<Body>> {
    let me = cluster.node_id();
    let relayed = req.headers().contains_key(FORWARDED_BY);
    let cached = if relayed {
        None
    } else {
        relay.cache.lock().ok().and_then(|mut c| c.get(id))
    };
    let location = match cached {
        Some((node, url)) => Location::Remote { node, url },
        None => match cluster.locate(id).await {
            Ok(l) => l,
            Err(e) => {
                crate::throttle::warn_throttled!(error = %e, "cluster store unreachable");
                return Ok(store_unavailable(&e));
            }
        },
    };
    if let (Location::Remote { node, url }, Ok(mut c)) = (&location, relay.cache.lock()) {
        c.put(id, node.clone(), url.clone());
    }
    let (node, url) = match location {
        Location::Unknown | Location::Here => return Err(req),
        Location::Orphan { node } => {
            return match claim(config, id, node.as_deref(), me).await {
                Ok(()) => Err(req),
                Err(answer) => Ok(answer),
            };
        }
        Location::Remote { node, url } if !relayed => (node, url),
        Location::Remote { .. } => return Ok(moved()),
    };
    let (parts, body) = req.into_parts();
    let body = match crate::listener::read_body(
        body,
        config.max_body_bytes,
        config.connection.body_read_timeout,
    )
    .await
    {
        Ok(b) => Bytes::from(b),
        Err(crate::listener::BodyError::TooLarge) => {
            return Ok(crate::reply::too_large(config.max_body_bytes));
        }
        Err(crate::listener::BodyError::TimedOut(t)) => return Ok(crate::reply::body_timeout(t)),
        Err(crate::listener::BodyError::Read) => {
            return Ok(refuse(
                StatusCode::BAD_REQUEST,
                TRANSPORT_ERROR,
                "Bad Request: the body could not be read",
                "body_read_failed",
                None,
            ));
        }
    };
    let relayed = match relay.relay(&url, &parts, body.clone()).await {
        // The serving node is leaving: taken over as from a node gone.
        Ok(answer) if answer.headers().contains_key(LEAVING) => {
            Err(RelayError::Unreachable("the node is leaving".to_owned()))
        }
        other => other,
    };
    match relayed {
        Ok(answer) => {
            // The serving node no longer knows the session (ended, or moved): ask the store
            // next time.
            if (answer.status() == StatusCode::NOT_FOUND
                || answer.status() == StatusCode::SERVICE_UNAVAILABLE)
                && let Ok(mut c) = relay.cache.lock()
            {
                c.entries.remove(id);
            }
            Ok(answer)
        }
        Err(RelayError::Failed(why)) => {
            crate::throttle::warn_throttled!(error = %why, "relay to the serving node failed");
            Ok(bad_gateway("the connection broke"))
        }
        Err(RelayError::Unreachable(why)) => {
            if let Ok(mut c) = relay.cache.lock() {
                c.entries.remove(id);
            }
            crate::throttle::warn_throttled!(node = %node, error = %why, "serving node unreachable; taking its session over");
            let rebuilt = Request::from_parts(parts, Body::from(body));
            match claim(config, id, Some(&node), me).await {
                Ok(()) => Err(rebuilt),
                Err(answer) => Ok(answer),
            }
        }
    }
}

/// Claims `id` from `expected` for this node: `Ok` to serve it here (won, or gone: then the
/// local path answers 404), else the answer to send.
async fn claim(
    config: &crate::HttpConfig,
    id: &str,
    expected: Option<&str>,
    me: &str,
) -> Result<(), Response<Body>> {
    match config.session_store.claim(id, expected, me).await {
        Ok(crate::Claim::Won(_) | crate::Claim::Gone) => Ok(()),
        Ok(crate::Claim::Lost(_)) => Err(moved()),
        Err(e) => {
            crate::throttle::warn_throttled!(error = %e, "session store unreachable");
            Err(store_unavailable(&e))
        }
    }
}

fn store_unavailable(e: &SessionStoreError) -> Response<Body> {
    refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        TRANSPORT_ERROR,
        format!("Service unavailable: {e}"),
        "session_store_failed",
        None,
    )
}

/// The progress token (as JSON text) and the progress of a `notifications/progress` frame.
pub(crate) fn progress_of(text: &str) -> Option<(String, f64)> {
    if !text.contains(switchboard_types::methods::NOTIFICATIONS_PROGRESS) {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    if v.get("method")?.as_str()? != switchboard_types::methods::NOTIFICATIONS_PROGRESS {
        return None;
    }
    let params = v.get("params")?;
    Some((
        params.get("progressToken")?.to_string(),
        params.get("progress")?.as_f64()?,
    ))
}

/// What the events of a stream say about its requests: which were answered, and the progress
/// each token reached.
#[derive(Debug, Default)]
pub(crate) struct StreamFacts {
    pub(crate) answered: std::collections::HashSet<switchboard_types::RequestId>,
    pub(crate) progress: std::collections::HashMap<String, f64>,
}

impl StreamFacts {
    /// Reads the stored events of one stream.
    pub(crate) fn of(events: &[crate::StoredEvent]) -> Self {
        use switchboard_types::{Frame, Message};
        let mut facts = StreamFacts::default();
        for e in events {
            if let Some((token, p)) = progress_of(&e.data) {
                let floor = facts.progress.entry(token).or_insert(p);
                *floor = floor.max(p);
                continue;
            }
            let messages = match Frame::decode(&e.data) {
                Ok(Frame::Single(m)) => vec![m],
                Ok(Frame::Batch(items)) => items,
                Err(_) => continue,
            };
            for m in messages.into_iter().flatten() {
                if let Message::Response(r) = m
                    && let Some(id) = r.id
                {
                    facts.answered.insert(id);
                }
            }
        }
        facts
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_location_cache_is_bounded_in_count() {
        let mut c = LocationCache::default();
        let (node, url): (Arc<str>, Arc<str>) = (Arc::from("a"), Arc::from("http://a/mcp"));
        for i in 0..LOCATION_CACHE_MAX {
            c.put(&format!("s{i}"), node.clone(), url.clone());
        }
        assert_eq!(c.entries.len(), LOCATION_CACHE_MAX);
        c.put("one-more", node.clone(), url.clone());
        assert!(c.entries.len() <= LOCATION_CACHE_MAX);
        assert_eq!(c.get("one-more").unwrap().0, node);
    }

    #[test]
    fn a_remembered_location_is_forgotten_after_its_time() {
        let mut c = LocationCache::default();
        let old = std::time::Instant::now() - LOCATION_CACHE_TTL - Duration::from_millis(1);
        c.entries.insert(
            Arc::from("s"),
            (Arc::from("a"), Arc::from("http://a/mcp"), old),
        );
        assert!(
            c.get("s").is_none(),
            "past its time: asked of the store again"
        );
        assert!(c.entries.is_empty());
    }

    #[test]
    fn progress_is_read_from_progress_notifications_only() {
        let p = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":3}}"#;
        assert_eq!(progress_of(p), Some((r#""t""#.to_owned(), 3.0)));
        let other = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"notifications/progress"}}"#;
        assert_eq!(progress_of(other), None);
    }
}
