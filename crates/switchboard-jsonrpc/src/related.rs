//! For relays, which have no engine on either side: which of the client's requests a frame from
//! the server belongs to, so that an HTTP relay can put it on that request's stream.
//!
//! Like the engine, this reads the params of the cross-cutting notifications only:
//! `_meta.progressToken` of the client's requests, `progressToken` of `notifications/progress`
//! and `requestId` of `notifications/cancelled`.

use std::collections::{HashMap, VecDeque};

use serde::Deserialize;
use serde_json::value::RawValue;
use switchboard_types::{Frame, Message, MessageKind, RequestId, methods};

/// The client's requests in flight (the oldest forgotten first beyond a bound) and the
/// progress tokens they carry.
#[derive(Debug)]
pub struct RelatedRequests {
    in_flight: VecDeque<RequestId>,
    tokens: HashMap<String, RequestId>,
    max_tracked: usize,
}

#[derive(Deserialize)]
struct Params {
    #[serde(rename = "_meta")]
    meta: Option<Meta>,
    #[serde(rename = "progressToken")]
    progress_token: Option<serde_json::Value>,
    #[serde(rename = "requestId")]
    request_id: Option<RequestId>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(rename = "progressToken")]
    progress_token: Option<serde_json::Value>,
}

fn params_of(raw: Option<&RawValue>) -> Option<Params> {
    raw.and_then(|p| serde_json::from_str::<Params>(p.get()).ok())
}

/// Every message of a frame (a batch entry by entry); nothing when it does not decode.
fn messages(text: &str) -> Vec<Message> {
    match Frame::decode(text) {
        Ok(Frame::Single(Ok(m))) => vec![m],
        Ok(Frame::Batch(items)) => items.into_iter().filter_map(Result::ok).collect(),
        _ => Vec::new(),
    }
}

impl RelatedRequests {
    /// Tracks at most `max_tracked` requests in flight.
    pub fn new(max_tracked: usize) -> RelatedRequests {
        RelatedRequests {
            in_flight: VecDeque::new(),
            tokens: HashMap::new(),
            max_tracked: max_tracked.max(1),
        }
    }

    fn forget(&mut self, id: &RequestId) {
        self.in_flight.retain(|r| r != id);
        self.tokens.retain(|_, r| r != id);
    }

    /// Notes the requests of a frame the client sent, and forgets the ones it cancels; returns
    /// the ids it cancels (a relay may end what waits for their answers, as the engine has its
    /// transport do through `TransportControl::request_cancelled`).
    pub fn client_sent(&mut self, text: &str) -> Vec<RequestId> {
        let mut cancelled = Vec::new();
        for m in messages(text) {
            match m {
                Message::Request(r) => {
                    let token = params_of(r.params.as_deref())
                        .and_then(|p| p.meta)
                        .and_then(|m| m.progress_token);
                    if let Some(token) = token {
                        self.tokens.insert(token.to_string(), r.id.clone());
                    }
                    if self.in_flight.len() >= self.max_tracked
                        && let Some(oldest) = self.in_flight.pop_front()
                    {
                        self.tokens.retain(|_, r| *r != oldest);
                    }
                    self.in_flight.push_back(r.id);
                }
                // A cancelled request may never be answered: stop relating frames to it.
                Message::Notification(n) if n.method == methods::NOTIFICATIONS_CANCELLED => {
                    if let Some(id) = params_of(n.params.as_deref()).and_then(|p| p.request_id) {
                        self.forget(&id);
                        cancelled.push(id);
                    }
                }
                _ => {}
            }
        }
        cancelled
    }

    /// The client request that a frame the server sent (`text`, of `kind`, with `id`) belongs
    /// to: a progress notification to the request whose token it names, any other request or
    /// notification to the one request in flight when there is exactly one; a response to
    /// none (and its request is forgotten).
    pub fn server_sent(
        &mut self,
        text: &str,
        kind: MessageKind,
        id: Option<&RequestId>,
    ) -> Option<RequestId> {
        match kind {
            MessageKind::Result | MessageKind::Error => {
                if let Some(id) = id {
                    self.forget(id);
                }
                None
            }
            MessageKind::Request | MessageKind::Notification => {
                if let Ok(Frame::Single(Ok(Message::Notification(n)))) = Frame::decode(text)
                    && n.method == methods::NOTIFICATIONS_PROGRESS
                {
                    let by_token = params_of(n.params.as_deref())
                        .and_then(|p| p.progress_token)
                        .and_then(|t| self.tokens.get(&t.to_string()).cloned());
                    if by_token.is_some() {
                        return by_token;
                    }
                }
                match (self.in_flight.len(), self.in_flight.front()) {
                    (1, Some(only)) => Some(only.clone()),
                    _ => None,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: i64) -> RequestId {
        RequestId::from(n)
    }

    const NOTE: &str = r#"{"jsonrpc":"2.0","method":"x/note","params":{}}"#;

    fn progress(token: &str) -> String {
        let p = methods::NOTIFICATIONS_PROGRESS;
        format!(
            r#"{{"jsonrpc":"2.0","method":"{p}","params":{{"progressToken":"{token}","progress":1}}}}"#
        )
    }

    #[test]
    fn progress_follows_its_token_and_the_rest_the_one_request_in_flight() {
        let mut r = RelatedRequests::new(16);
        r.client_sent(
            r#"{"jsonrpc":"2.0","id":1,"method":"x/call","params":{"_meta":{"progressToken":"t1"}}}"#,
        );
        let kind = MessageKind::Notification;
        assert_eq!(r.server_sent(NOTE, kind, None), Some(id(1)));
        r.client_sent(r#"[{"jsonrpc":"2.0","id":2,"method":"x/call"}]"#);
        assert_eq!(r.server_sent(NOTE, kind, None), None, "two in flight");
        assert_eq!(r.server_sent(&progress("t1"), kind, None), Some(id(1)));
        let answer = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        assert_eq!(
            r.server_sent(answer, MessageKind::Result, Some(&id(1))),
            None
        );
        assert_eq!(
            r.server_sent(&progress("t1"), kind, None),
            Some(id(2)),
            "t1 is forgotten with its request"
        );
        let c = methods::NOTIFICATIONS_CANCELLED;
        let cancelled = r.client_sent(&format!(
            r#"{{"jsonrpc":"2.0","method":"{c}","params":{{"requestId":2}}}}"#
        ));
        assert_eq!(cancelled, vec![id(2)], "the cancelled request is named");
        assert_eq!(r.server_sent(NOTE, kind, None), None);
    }

    #[test]
    fn the_oldest_request_is_forgotten_beyond_the_bound() {
        let mut r = RelatedRequests::new(1);
        r.client_sent(r#"{"jsonrpc":"2.0","id":1,"method":"x/call"}"#);
        r.client_sent(r#"{"jsonrpc":"2.0","id":2,"method":"x/call"}"#);
        assert_eq!(
            r.server_sent(NOTE, MessageKind::Notification, None),
            Some(id(2))
        );
    }
}
