//! Requests and log lines from an upstream reach only the client that caused them.
//!
//! An upstream's `sampling/createMessage`, `elicitation/create` and `roots/list` carry nothing
//! on the wire that says which of the gateway's clients they are for (a 2025 stdio session is
//! one pipe), so a shared upstream session cannot route them safely. A client that can answer
//! them (it declared sampling, elicitation or roots) or asked for log lines (`logging/setLevel`)
//! therefore gets upstream sessions of its own: the first call it makes to an upstream opens
//! one (the same command or URL, with a client declaring what it declared), used by its calls
//! only and closed when its session ends. On that session, the upstream's requests are asked
//! of the client through one of its calls in flight ([`Context::create_message`],
//! [`Context::elicit`], [`Context::list_roots`], which speak both eras), and refused when none
//! is in flight; its log lines go to that client only. No other client ever holds the session,
//! so no other client can see or answer what it carries. The session serves everything else of
//! the upstream for its client too (`mirror`: the tools it lists, its `prompts/get` and
//! `resources/read`, each in flight like a call so that what the upstream asks during it
//! reaches that client, its resource subscriptions, the client's own progress token; `front`:
//! its `completion/complete` once the session is open, which a layer cannot open). A 2026-07-28 upstream's input request is asked under its
//! own key ([`InputKey`](switchboard_client::InputKey)). Past `max_affinity_sessions` for one
//! upstream, a client's calls share the gateway's session (logged), whose client declares none
//! of these, so the upstream cannot ask it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use switchboard_client::{Client, ClientSession};
use switchboard_server::{ClientRequestError, Context, ServerSession};
use switchboard_types::ErrorObject;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::logging::LoggingMessageNotificationParams;

use crate::config::UpstreamConfig;

/// Most log lines of one upstream session waiting to be passed on to its client; past it the
/// oldest is dropped.
pub(crate) const MAX_QUEUED_LOG_LINES: usize = 256;

/// One client's upstream session, and that client's calls in flight on it.
pub(crate) struct Bound {
    session: tokio::sync::OnceCell<Option<ClientSession>>,
    front: ServerSession,
    calls: Mutex<Vec<(u64, Context)>>,
    next: std::sync::atomic::AtomicU64,
    /// The upstream's log lines not yet passed on, in arrival order.
    logs: Mutex<std::collections::VecDeque<LoggingMessageNotificationParams>>,
    /// Held while lines are passed on, so that they leave in order.
    sending: tokio::sync::Mutex<()>,
    /// Set once something follows this session's tool list for its client.
    followed: std::sync::atomic::AtomicBool,
    /// The client's resource subscriptions held on this session: gateway URI → subscription.
    subscriptions: Mutex<HashMap<String, switchboard_client::SubscriptionId>>,
    /// How many of the client's requests are in flight here: a session outlives its client's
    /// until they end (a 2026-07-28 exchange ends when its call becomes a task, whose work
    /// goes on here).
    in_flight: tokio::sync::watch::Sender<usize>,
}

/// Removes a call from [`Bound::calls`] when the call ends.
pub(crate) struct InFlight {
    bound: Arc<Bound>,
    id: u64,
}

impl InFlight {
    /// Passes on the log lines that arrived before the upstream's answer, so that the client
    /// has them before the gateway's answer.
    pub(crate) async fn flush(&self) {
        self.bound.drain().await;
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.bound.calls.lock() {
            calls.retain(|(id, _)| *id != self.id);
        }
        self.bound
            .in_flight
            .send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Bound {
    /// The latest call of the client in flight on this session.
    fn current(&self) -> Option<Context> {
        self.calls
            .lock()
            .ok()
            .and_then(|c| c.last().map(|(_, cx)| cx.clone()))
    }

    /// Registers `cx` as in flight until the guard drops.
    pub(crate) fn enter(self: &Arc<Self>, cx: &Context) -> InFlight {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.in_flight.send_modify(|n| *n += 1);
        if let Ok(mut calls) = self.calls.lock() {
            calls.push((id, cx.clone()));
        }
        InFlight {
            bound: self.clone(),
            id,
        }
    }

    /// Passes on the waiting log lines, in order: through the client's call in flight (which
    /// speaks its era), else on its session.
    async fn drain(&self) {
        let _order = self.sending.lock().await;
        loop {
            let Some(line) = self.logs.lock().ok().and_then(|mut l| l.pop_front()) else {
                return;
            };
            let sent = match self.current() {
                Some(cx) => cx.log(line.level, line.data).await,
                None => {
                    self.front
                        .log(line.level, line.logger.as_deref(), line.data)
                        .await
                }
            };
            if let Err(e) = sent {
                tracing::debug!(error = %e, "an upstream's log line was not passed on");
            }
        }
    }

    /// The upstream session, once it is open.
    pub(crate) fn session(&self) -> Option<ClientSession> {
        self.session.get().cloned().flatten()
    }

    /// The gateway's client session this upstream session is for.
    pub(crate) fn front(&self) -> &ServerSession {
        &self.front
    }

    /// True the first time only: the caller starts following the session's tool list.
    pub(crate) fn start_following(&self) -> bool {
        !self
            .followed
            .swap(true, std::sync::atomic::Ordering::SeqCst)
    }

    /// Records the client's subscription to `gateway_uri` on this session.
    pub(crate) fn subscribed(&self, gateway_uri: &str, id: switchboard_client::SubscriptionId) {
        if let Ok(mut s) = self.subscriptions.lock() {
            s.insert(gateway_uri.to_owned(), id);
        }
    }

    /// Takes the client's subscription to `gateway_uri` on this session, if it holds one.
    pub(crate) fn take_subscription(
        &self,
        gateway_uri: &str,
    ) -> Option<switchboard_client::SubscriptionId> {
        self.subscriptions.lock().ok()?.remove(gateway_uri)
    }
}

/// Whether the client of `cx` gets sessions of its own.
pub(crate) fn wants_own_session(cx: &Context) -> bool {
    let caps = cx.client_capabilities();
    caps.sampling.is_some()
        || caps.elicitation.is_some()
        || caps.roots.is_some()
        || cx.session().log_level().is_some()
}

fn refused(e: ClientRequestError) -> ErrorObject {
    match e {
        ClientRequestError::Request(switchboard_jsonrpc::RequestError::Rejected(obj)) => obj,
        other => ErrorObject::internal(format!("the gateway's client did not answer: {other}")),
    }
}

fn no_call() -> ErrorObject {
    ErrorObject::internal(
        "no request of the gateway's client is in flight on this session to ask it through",
    )
}

/// The key a 2026-07-28 upstream gave the input request being answered: the gateway asks its
/// own client under the same key, so that the client sees the upstream's names.
fn input_key(rcx: &switchboard_client::RequestContext) -> Option<String> {
    rcx.attachment_as::<switchboard_client::InputKey>()
        .map(|k| k.0.clone())
}

/// The client the gateway opens an affinity session with: it declares what the gateway's
/// client declared, and each handler asks that client through a call of its in flight.
fn client(config: &UpstreamConfig, front: &Context, bound: Weak<Bound>) -> Client {
    let caps = front.client_capabilities();
    let mut b = Client::builder(Implementation::new(
        "switchboard-gateway",
        env!("CARGO_PKG_VERSION"),
    ))
    .era(config.era);
    let current = {
        let bound = bound.clone();
        move || bound.upgrade().and_then(|b| b.current())
    };
    if caps.sampling.is_some() {
        let current = current.clone();
        b = b.sampling(move |params, rcx| {
            let (cx, key) = (current(), input_key(&rcx));
            async move {
                let cx = cx.ok_or_else(no_call)?;
                match key {
                    Some(key) => cx.create_message_as(&key, params).await,
                    None => cx.create_message(params).await,
                }
                .map_err(refused)
            }
        });
    }
    if let Some(e) = &caps.elicitation {
        let url = e.url.is_some();
        let form = e.form.is_some() || !url;
        let current = current.clone();
        b = b
            .elicitation(move |params, rcx| {
                let (cx, key) = (current(), input_key(&rcx));
                async move {
                    let cx = cx.ok_or_else(no_call)?;
                    match key {
                        Some(key) => cx.elicit_as(&key, params).await,
                        None => cx.elicit(params).await,
                    }
                    .map_err(refused)
                }
            })
            .elicitation_modes(form, url);
    }
    if caps.roots.is_some() {
        let current = current.clone();
        b = b.roots_provider(move |rcx| {
            let (cx, key) = (current(), input_key(&rcx));
            async move {
                let cx = cx.ok_or_else(no_call)?;
                match key {
                    Some(key) => cx.list_roots_as(&key).await,
                    None => cx.list_roots().await,
                }
                .map(|r| r.roots)
                .map_err(refused)
            }
        });
    }
    b = b.on_log(move |line: LoggingMessageNotificationParams| {
        let Some(bound) = bound.upgrade() else {
            return;
        };
        if let Ok(mut logs) = bound.logs.lock() {
            queue_line(&mut logs, line);
        }
        tokio::spawn(async move { bound.drain().await });
    });
    b.build()
}

/// Queues a log line; past [`MAX_QUEUED_LOG_LINES`] the oldest is dropped (a client that reads
/// nothing does not make the gateway hold every line).
fn queue_line<T>(logs: &mut std::collections::VecDeque<T>, line: T) {
    if logs.len() >= MAX_QUEUED_LOG_LINES {
        logs.pop_front();
    }
    logs.push_back(line);
}

/// One upstream's affinity sessions, by the gateway client's session.
#[derive(Default)]
pub(crate) struct Affinity {
    bound: Mutex<HashMap<u64, Arc<Bound>>>,
}

impl Affinity {
    /// The session of `cx`'s client for this upstream, opened on its first call; `None` past
    /// `max` sessions or when it cannot be opened (the caller then uses the shared session).
    pub(crate) async fn bound(
        self: &Arc<Self>,
        config: &UpstreamConfig,
        cx: &Context,
        max: usize,
    ) -> Option<Arc<Bound>> {
        let key = cx.session().id();
        let bound = {
            let mut map = self.bound.lock().ok()?;
            match map.get(&key) {
                Some(b) => b.clone(),
                None => {
                    if map.len() >= max {
                        tracing::warn!(
                            upstream = %config.name,
                            max_affinity_sessions = max,
                            "too many clients with sessions of their own; this one shares the gateway's (it cannot be asked for sampling, elicitation or roots)"
                        );
                        return None;
                    }
                    let b = Arc::new(Bound {
                        session: tokio::sync::OnceCell::new(),
                        front: cx.session().clone(),
                        calls: Mutex::new(Vec::new()),
                        next: Default::default(),
                        logs: Mutex::default(),
                        sending: tokio::sync::Mutex::new(()),
                        followed: Default::default(),
                        subscriptions: Mutex::default(),
                        in_flight: tokio::sync::watch::Sender::new(0),
                    });
                    map.insert(key, b.clone());
                    b
                }
            }
        };
        let opened = bound
            .session
            .get_or_init(|| async {
                let client = client(config, cx, Arc::downgrade(&bound));
                match crate::connect::connect_with(config, client).await {
                    Ok(session) => {
                        // Closed with the client's session once none of its requests is in
                        // flight here; forgotten when either ends.
                        let (me, front, up) =
                            (self.clone(), cx.session().clone(), session.clone());
                        let mut in_flight = bound.in_flight.subscribe();
                        tokio::spawn(async move {
                            let ended = async {
                                front.closed().await;
                                let _ = in_flight.wait_for(|n| *n == 0).await;
                            };
                            tokio::select! {
                                () = ended => {}
                                () = up.closed() => {}
                            }
                            up.close();
                            if let Ok(mut map) = me.bound.lock() {
                                map.remove(&key);
                            }
                        });
                        Some(session)
                    }
                    Err(e) => {
                        tracing::warn!(upstream = %config.name, error = %e, "a client's own session could not be opened; it shares the gateway's");
                        None
                    }
                }
            })
            .await;
        if opened.is_none() {
            if let Ok(mut map) = self.bound.lock() {
                map.remove(&key);
            }
            return None;
        }
        Some(bound)
    }

    /// The open session of the gateway's client session `key` ([`ServerSession::id`]), if it
    /// has one.
    pub(crate) fn of(&self, key: u64) -> Option<Arc<Bound>> {
        let bound = self.bound.lock().ok()?.get(&key).cloned()?;
        bound.session().is_some().then_some(bound)
    }

    /// How many client sessions are open.
    pub(crate) fn len(&self) -> usize {
        self.bound.lock().map_or(0, |m| m.len())
    }

    /// Closes every client session (the upstream went down or was removed).
    pub(crate) fn close_all(&self) {
        let all: Vec<Arc<Bound>> = self
            .bound
            .lock()
            .map(|mut m| m.drain().map(|(_, b)| b).collect())
            .unwrap_or_default();
        for b in all {
            if let Some(s) = b.session() {
                s.close();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bound: log lines waiting for one client (`MAX_QUEUED_LOG_LINES`): the oldest go first.
    #[test]
    fn past_max_queued_log_lines_the_oldest_line_is_dropped() {
        let mut logs = std::collections::VecDeque::new();
        for i in 0..MAX_QUEUED_LOG_LINES + 10 {
            queue_line(&mut logs, i);
        }
        assert_eq!(logs.len(), MAX_QUEUED_LOG_LINES);
        assert_eq!(logs.front(), Some(&10));
        assert_eq!(logs.back(), Some(&(MAX_QUEUED_LOG_LINES + 9)));
    }
}
