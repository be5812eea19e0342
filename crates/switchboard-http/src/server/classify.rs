//! A POST body read structurally: which request ids the engine will answer, whether it is an
//! `initialize`, whether it is a batch (envelopes only: `params` are never read). Bodies the
//! engine would answer without an id, or not at all, are refused here (400).

use std::collections::HashSet;

use axum::body::Body;
use http::{Response, StatusCode};
use switchboard_types::error::echo;
use switchboard_types::{ErrorObject, Frame, Message, RequestId, methods};

use crate::reply;

/// What a POST body holds, read structurally (envelopes only: `params` are never read).
pub(super) struct Post {
    /// Ids the engine will answer.
    pub(super) ids: Vec<RequestId>,
    /// The body is a single `initialize` request.
    pub(super) initialize: bool,
    /// The body is a batch.
    pub(super) batch: bool,
    /// The engine will answer (requests, or answerable invalid entries).
    pub(super) answered: bool,
}

/// Reads a POST body structurally: which ids will be answered, whether it is `initialize`
/// (the method name only; `params` stay unread).
/// Bodies the engine would answer without an id, or not at all, are refused here (400).
#[allow(clippy::result_large_err)] // the error is the ready answer
pub(super) fn classify(text: &str) -> Result<Post, Response<Body>> {
    let bad = |e: &ErrorObject| reply::error_body(StatusCode::BAD_REQUEST, None, e.clone());
    let single = |ids: Vec<RequestId>, initialize: bool| Post {
        answered: !ids.is_empty(),
        ids,
        initialize,
        batch: false,
    };
    match Frame::decode(text) {
        Err(e) => Err(bad(&e.error)),
        Ok(Frame::Single(Err(e))) => match (&e.id, e.answerable) {
            (Some(id), true) => Ok(single(vec![id.clone()], false)),
            _ => Err(bad(&e.error)),
        },
        Ok(Frame::Single(Ok(Message::Request(r)))) => {
            let initialize = r.method == methods::INITIALIZE;
            Ok(single(vec![r.id], initialize))
        }
        Ok(Frame::Single(Ok(_))) => Ok(single(Vec::new(), false)),
        Ok(Frame::Batch(items)) => {
            let mut post = Post {
                ids: Vec::new(),
                initialize: false,
                batch: true,
                answered: false,
            };
            for item in items {
                match item {
                    Ok(Message::Request(r)) if r.method == methods::INITIALIZE => {
                        return Err(bad(&ErrorObject::invalid_request(
                            "initialize must not be sent in a batch",
                            "initialize_in_batch",
                        )));
                    }
                    Ok(Message::Request(r)) => {
                        post.ids.push(r.id);
                        post.answered = true;
                    }
                    Err(e) if e.answerable => {
                        post.ids.extend(e.id);
                        post.answered = true;
                    }
                    _ => {}
                }
            }
            if let Some(id) = repeated_id(&post.ids) {
                let err = ErrorObject::invalid_request(
                    format!(
                        "request id {} appears more than once in the batch",
                        echo(&id.to_string())
                    ),
                    "duplicate_request_id",
                );
                return Err(reply::error_body(StatusCode::BAD_REQUEST, Some(id), err));
            }
            Ok(post)
        }
    }
}

/// The first id that appears twice among `ids`, found in one pass (a batch may hold thousands).
fn repeated_id(ids: &[RequestId]) -> Option<RequestId> {
    if ids.len() < 2 {
        return None;
    }
    let mut seen = HashSet::with_capacity(ids.len());
    ids.iter().find(|id| !seen.insert(*id)).cloned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_repeated_id_is_found_in_one_pass() {
        let ids: Vec<RequestId> = (0..20_000).map(RequestId::int).collect();
        assert_eq!(repeated_id(&ids), None);
        let mut again = ids.clone();
        again.push(RequestId::int(19_999));
        assert_eq!(repeated_id(&again), Some(RequestId::int(19_999)));
        assert_eq!(repeated_id(&[RequestId::int(1)]), None);
    }
}
