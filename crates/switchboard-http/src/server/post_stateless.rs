//! The stateless POST (`HttpConfig::stateless`): served by a session of its own that starts
//! ready (or, for `initialize`, is answered by a fresh one) and ends with the answer; no session
//! id is given or required, nothing can be resumed.

use std::sync::Arc;

use axum::body::Body;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Response};
use switchboard_jsonrpc::Attachment;

use crate::headers;
use crate::reply;
use crate::session::{Origin, Resume};

use super::classify::Post;
use super::{EphemeralSlot, StreamableHttpService, too_many_sessions};

impl StreamableHttpService {
    /// Stateless mode: the POST is served by a session of its own that starts ready (or, for
    /// `initialize`, is answered by a fresh one) and ends with the answer. No session id is
    /// given or required; there is nothing to resume.
    pub(super) async fn post_stateless(
        &self,
        req_headers: &http::HeaderMap,
        text: String,
        post: Post,
        attachment: Option<Attachment>,
    ) -> Response<Body> {
        let version = match headers::protocol_version(req_headers) {
            Ok(v) => v.map(|v| v.as_str().to_owned()),
            Err(v) => return reply::bad_protocol_version(&v),
        };
        if !post.answered {
            // Notifications and responses concern no session here: nothing is waiting for them.
            return reply::accepted();
        }
        let _slot = match EphemeralSlot::take(&self.inner.ephemeral, self.inner.registry.max) {
            Some(slot) => slot,
            None => return too_many_sessions(),
        };
        let origin = Origin {
            resume: (!post.initialize).then_some(Resume {
                modern: None,
                protocol_version: version,
                snapshot: None,
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
        let resp = self.dispatch(&session, text, post, attachment).await;
        if resp.headers().get(CONTENT_TYPE) != Some(&HeaderValue::from_static("text/event-stream"))
        {
            // Answered (JSON, 202 or an error): the session is done. An SSE answer ends it
            // when its stream ends (the `ConnGuard`).
            session.terminate().await;
        }
        resp
    }
}
