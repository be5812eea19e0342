//! The POST of revision 2026-07-28 (see [`crate::modern`]): one request per connection, no
//! session; JSON with the status of its error code when the answer comes first, SSE otherwise.

use std::collections::VecDeque;
use std::sync::Arc;

use axum::body::Body;
use http::{HeaderValue, Response};
use switchboard_jsonrpc::Attachment;

use crate::headers;
use crate::reply;
use crate::routing::{Registration, RouteError};
use crate::session::{Origin, Resume};
use crate::sse::SseBody;

use super::classify::Post;
use super::{EphemeralSlot, StreamableHttpService, internal, json_response, too_many_sessions};

impl StreamableHttpService {
    /// A request of the modern era (see [`crate::modern`]): a connection of its own, no session;
    /// JSON with the status of its error code when the answer comes first, SSE otherwise.
    pub(super) async fn post_modern(
        &self,
        req_headers: &http::HeaderMap,
        text: String,
        post: Post,
        attachment: Option<Attachment>,
    ) -> Response<Body> {
        if !post.answered {
            // Notifications concern no session in this era (`[D26-54]`).
            return reply::accepted();
        }
        let _slot = match EphemeralSlot::take(&self.inner.ephemeral, self.inner.registry.max) {
            Some(slot) => slot,
            None => return too_many_sessions(),
        };
        let version = req_headers
            .get(headers::PROTOCOL_VERSION)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_owned());
        let origin = Origin {
            resume: Some(Resume {
                protocol_version: version,
                snapshot: None,
                modern: Some(crate::modern::mcp_headers(req_headers)),
            }),
            stored: false,
            ephemeral: true,
            stream_base: 0,
            owner: None,
            node: None,
        };
        let session = match self.start_session(Arc::from(""), origin) {
            Ok(s) => s,
            Err(resp) => return resp,
        };
        let registered = match session.routing.lock() {
            Ok(mut r) => r.register(post.ids, false, post.batch),
            Err(_) => Err(RouteError::Closed),
        };
        let Ok(Registration::Sse {
            stream,
            conn,
            mut rx,
        }) = registered
        else {
            session.terminate().await;
            return internal("the request could not be registered");
        };
        if !session.forward(text, attachment).await {
            session.terminate().await;
            return internal("the request could not be handed to the server");
        }
        let Some(first) = rx.rx.recv().await else {
            // Ended without an answer (the server went away).
            session.terminate().await;
            return internal("the server ended the request without an answer");
        };
        rx.took(&first);
        if first.last {
            session.terminate().await;
            let answer = crate::modern::data_of(&first.bytes)
                .unwrap_or_default()
                .to_owned();
            let status = crate::modern::status_for(&answer);
            let mut resp = json_response(answer);
            *resp.status_mut() = status;
            return resp;
        }
        let body = SseBody {
            preface: VecDeque::from([first.bytes.clone()]),
            replay: None,
            live: Some(rx),
            floor: first.seq,
            _guard: None,
            keep_alive: self.inner.config.keep_alive,
            close_at: None,
        };
        let mut resp = self.sse_response(&session, stream, conn, body);
        resp.headers_mut()
            .insert("x-accel-buffering", HeaderValue::from_static("no"));
        resp
    }
}
