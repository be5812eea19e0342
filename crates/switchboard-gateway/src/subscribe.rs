//! Resource subscriptions through the gateway: a client's `resources/subscribe` of a gateway
//! URI subscribes the gateway's session to the upstream's URI (once however many clients
//! subscribe), and the upstream's `notifications/resources/updated` comes back with the
//! gateway's URI through the server, which tells the subscribed sessions only. The last
//! `resources/unsubscribe` unsubscribes upstream; a restarted upstream is subscribed again.

use std::collections::HashMap;
use std::sync::Mutex;

use switchboard_client::{ClientError, ClientSession, SubscriptionId};
use switchboard_server::WeakServer;

use crate::names;

/// One upstream's subscriptions: gateway URI → (subscribers, the upstream subscription).
#[derive(Default)]
pub(crate) struct Subscriptions {
    wanted: Mutex<HashMap<String, (usize, Option<SubscriptionId>)>>,
}

/// Subscribes `session` to the upstream URI of `gateway_uri`, its updates announced on
/// `server` with the gateway's URIs.
async fn subscribe_upstream(
    upstream: &str,
    session: &ClientSession,
    server: &WeakServer,
    gateway_uri: &str,
) -> Result<SubscriptionId, ClientError> {
    let original = names::upstream_uri(upstream, gateway_uri)
        .ok_or_else(|| ClientError::Handshake(format!("{gateway_uri} is not {upstream}'s")))?;
    let (server, name) = (server.clone(), upstream.to_owned());
    session
        .subscribe(&original, move |updated| {
            let Some(server) = server.upgrade() else {
                return;
            };
            if let Some(uri) = names::prefixed_uri(&name, &updated.uri) {
                server.resource_updated(&uri);
            }
        })
        .await
}

impl Subscriptions {
    /// One more subscriber of `gateway_uri`; the first subscribes upstream.
    pub(crate) async fn add(
        &self,
        upstream: &str,
        session: Option<ClientSession>,
        server: &WeakServer,
        gateway_uri: &str,
    ) -> Result<(), ClientError> {
        let first = {
            let Ok(mut wanted) = self.wanted.lock() else {
                return Ok(());
            };
            let entry = wanted.entry(gateway_uri.to_owned()).or_insert((0, None));
            entry.0 += 1;
            entry.0 == 1
        };
        if !first {
            return Ok(());
        }
        let Some(session) = session else {
            // Down: subscribed when it is back.
            return Ok(());
        };
        match subscribe_upstream(upstream, &session, server, gateway_uri).await {
            Ok(id) => {
                if let Ok(mut wanted) = self.wanted.lock()
                    && let Some(entry) = wanted.get_mut(gateway_uri)
                {
                    entry.1 = Some(id);
                }
                Ok(())
            }
            Err(e) => {
                if let Ok(mut wanted) = self.wanted.lock() {
                    wanted.remove(gateway_uri);
                }
                Err(e)
            }
        }
    }

    /// One subscriber fewer; the last unsubscribes upstream.
    pub(crate) async fn remove(&self, session: Option<ClientSession>, gateway_uri: &str) {
        let id = {
            let Ok(mut wanted) = self.wanted.lock() else {
                return;
            };
            let Some(entry) = wanted.get_mut(gateway_uri) else {
                return;
            };
            entry.0 = entry.0.saturating_sub(1);
            if entry.0 > 0 {
                return;
            }
            wanted.remove(gateway_uri).and_then(|(_, id)| id)
        };
        if let (Some(session), Some(id)) = (session, id)
            && let Err(e) = session.unsubscribe(id).await
        {
            tracing::debug!(uri = %gateway_uri, error = %e, "upstream unsubscribe failed");
        }
    }

    /// Subscribes a new session of the upstream to every wanted URI (after a restart).
    pub(crate) async fn renew(&self, upstream: &str, session: &ClientSession, server: &WeakServer) {
        let uris: Vec<String> = self
            .wanted
            .lock()
            .map(|w| w.keys().cloned().collect())
            .unwrap_or_default();
        for uri in uris {
            match subscribe_upstream(upstream, session, server, &uri).await {
                Ok(id) => {
                    if let Ok(mut wanted) = self.wanted.lock()
                        && let Some(entry) = wanted.get_mut(&uri)
                    {
                        entry.1 = Some(id);
                    }
                }
                Err(e) => {
                    tracing::warn!(upstream = %upstream, uri = %uri, error = %e, "not subscribed again")
                }
            }
        }
    }
}
