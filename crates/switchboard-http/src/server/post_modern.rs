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
        let (session, mut driver) = match self.start_session_inline(Arc::from(""), origin) {
            Ok(s) => s,
            Err(resp) => return resp,
        };
        // The engine left its reader and writer to this task: the request is read, handled
        // and answered here, and its answer routed back here, with no other task woken. Only an
        // answer that does not come first (a notification before it, a handler still running
        // when this task turns the response into a stream) sends the driver to a task of its
        // own. Dropped on any other way out, it finishes as a task of its own.
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
        if !session.receive(text, attachment).await {
            session.terminate().await;
            return internal("the request could not be handed to the server");
        }
        let first = match driver.as_mut() {
            Some(d) => tokio::select! {
                biased;
                first = rx.rx.recv() => first,
                // The session ended (its streams are closed): whatever was routed is queued.
                () = d => rx.rx.recv().await,
            },
            None => rx.rx.recv().await,
        };
        let Some(first) = first else {
            // Ended without an answer (the server went away).
            session.terminate().await;
            return internal("the server ended the request without an answer");
        };
        rx.took(&first);
        if first.last {
            session.terminate().await;
            if let Some(d) = driver {
                // Closed: the reader and the writer end at once (the role learns the session
                // closed, as it would from their tasks).
                d.await;
            }
            let answer = crate::modern::data_of(&first.bytes)
                .unwrap_or_default()
                .to_owned();
            let status = crate::modern::status_for(&answer);
            let mut resp = json_response(answer);
            *resp.status_mut() = status;
            return resp;
        }
        if let Some(d) = driver {
            tokio::spawn(d);
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
