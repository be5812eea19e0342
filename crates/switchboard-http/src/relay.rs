//! The relay between the nodes of a cluster ([`crate::Cluster`]): a request naming a session
//! this node does not hold is sent on to the node serving it (over pooled HTTP/1.1 connections,
//! its location remembered for a moment), or, when that node is gone, the session is claimed in
//! the session store for this node to take over.

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

use crate::reply::{TRANSPORT_ERROR, refuse};
use crate::session_store::SessionStoreError;

use crate::cluster::{
    CONNECT_TIMEOUT, Cluster, ClusterSecret, FORWARDED_BY, LEAVING, LOCATION_CACHE_MAX,
    LOCATION_CACHE_TTL, Location, RELAY_MAC, now_ms,
};
use crate::config::HttpConfig;
use crate::headers::SESSION_ID;
use crate::session_store::Claim;

/// Why a relay failed.
#[derive(Debug)]
pub(crate) enum RelayError {
    /// The serving node did not accept a connection: take it for gone.
    Unreachable(String),
    /// The relay failed after the request was sent.
    Failed(String),
}

/// Relays requests to other nodes over pooled HTTP/1.1 connections, remembering for a moment
/// where each session was served (so that a relayed request costs no round trip to the store).
#[derive(Clone)]
pub(crate) struct Relay {
    client: Client<HttpConnector, Full<Bytes>>,
    node: HeaderValue,
    /// What relays are authenticated with; `None`: nothing is relayed.
    secret: Option<ClusterSecret>,
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
    /// A relay naming `node` in [`FORWARDED_BY`], its requests authenticated with `secret`.
    pub(crate) fn new(node: &str, secret: Option<ClusterSecret>) -> Self {
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
            secret,
            cache: Arc::default(),
        }
    }

    /// Whether `req`, naming session `id`, was relayed by a node of this cluster: it carries
    /// [`FORWARDED_BY`] with a valid, fresh [`RELAY_MAC`]. Anything else (an outside client
    /// sending the header) is taken as not relayed.
    fn authentic(&self, req: &Request<Body>, id: &str) -> bool {
        let (Some(secret), Some(node), Some(mac)) = (
            &self.secret,
            req.headers()
                .get(FORWARDED_BY)
                .and_then(|v| v.to_str().ok()),
            req.headers().get(RELAY_MAC).and_then(|v| v.to_str().ok()),
        ) else {
            return false;
        };
        secret.verify(mac, node, req.method().as_str(), id, now_ms())
    }

    /// Whether `req` was relayed by a node of this cluster (see `authentic`), for the session
    /// its `Mcp-Session-Id` names.
    pub(crate) fn relayed(&self, req: &Request<Body>) -> bool {
        req.headers().contains_key(FORWARDED_BY)
            && self.authentic(
                req,
                req.headers()
                    .get(SESSION_ID)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default(),
            )
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
        let mac = self.secret.as_ref().map(|s| {
            let session = parts
                .headers
                .get(SESSION_ID)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            let node = self.node.to_str().unwrap_or_default();
            s.sign(node, parts.method.as_str(), session, now_ms())
        });
        if let Some(h) = builder.headers_mut() {
            for (name, value) in &parts.headers {
                if !hop_by_hop(name) && name.as_str() != FORWARDED_BY && name.as_str() != RELAY_MAC
                {
                    h.append(name.clone(), value.clone());
                }
            }
            h.insert(HeaderName::from_static(FORWARDED_BY), self.node.clone());
            if let Some(mac) = mac.and_then(|m| HeaderValue::from_str(&m).ok()) {
                h.insert(HeaderName::from_static(RELAY_MAC), mac);
            }
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

/// The answer of a node of a cluster configured without a [`ClusterSecret`] to a request for
/// a session it does not hold, whether another node holds it or nobody does.
fn secret_missing() -> Response<Body> {
    refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        TRANSPORT_ERROR,
        "Service unavailable: this node of a cluster has no cluster secret and relays nothing",
        "cluster_secret_missing",
        None,
    )
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
/// over, or an unknown one to refuse as a single node does). `owner` is the caller's owner key
/// (with authorization on): a session bound to another subject is never claimed for it.
pub(crate) async fn route(
    cluster: &dyn Cluster,
    relay: &Relay,
    config: &HttpConfig,
    id: &str,
    owner: Option<&str>,
    req: Request<Body>,
) -> Result<Response<Body>, Request<Body>> {
    if relay.secret.is_none() {
        crate::throttle::warn_throttled!(
            "a node of a cluster without a cluster secret was asked for a session it does not hold"
        );
        return Ok(secret_missing());
    }
    let me = cluster.node_id();
    let relayed = relay.authentic(&req, id);
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
            return match claim(config, id, owner, node.as_deref(), me).await {
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
            match claim(config, id, owner, Some(&node), me).await {
                Ok(()) => Err(rebuilt),
                Err(answer) => Ok(answer),
            }
        }
    }
}

/// Claims `id` from `expected` for this node: `Ok` to serve it here (won, or gone: then the
/// local path answers 404), else the answer to send. A session bound to another subject than
/// `owner` is not claimed: `Ok`, and the local path answers 404 without taking it over.
async fn claim(
    config: &HttpConfig,
    id: &str,
    owner: Option<&str>,
    expected: Option<&str>,
    me: &str,
) -> Result<(), Response<Body>> {
    if let Some(owner) = owner {
        match config.session_store.load(id).await {
            Ok(Some(record)) if record.owner.as_deref() != Some(owner) => return Ok(()),
            Ok(_) => {}
            Err(e) => {
                crate::throttle::warn_throttled!(error = %e, "session store unreachable");
                return Err(store_unavailable(&e));
            }
        }
    }
    match config.session_store.claim(id, expected, me).await {
        Ok(Claim::Won(_) | Claim::Gone) => Ok(()),
        Ok(Claim::Lost(_)) => Err(moved()),
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
}
