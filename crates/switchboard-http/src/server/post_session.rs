//! The POST of a session (2025 eras): an `initialize` opens a session (registered here, kept in
//! the session store once its `initialize` is answered with success); any other body names its
//! session with `MCP-Session-Id`.

use std::sync::Arc;

use axum::body::Body;
use http::{HeaderValue, Response};
use switchboard_jsonrpc::Attachment;

use crate::headers;
use crate::session::{Origin, Session, new_session_id};

use super::classify::Post;
use super::dispatch::InitializeRefused;
use super::{StreamableHttpService, internal, too_many_sessions, unavailable};

impl StreamableHttpService {
    /// A new session for an `initialize` POST, registered locally; it goes into the session
    /// store once its `initialize` has been answered.
    #[allow(clippy::result_large_err)] // the error is the ready answer
    pub(super) fn create_session(
        &self,
        owner: Option<Arc<str>>,
    ) -> Result<Arc<Session>, Response<Body>> {
        if self.inner.registry.len() >= self.inner.registry.max {
            return Err(too_many_sessions());
        }
        let id = new_session_id().map_err(|e| {
            tracing::error!(error = %e, "no random session id");
            internal("no session id could be generated")
        })?;
        let origin = Origin {
            owner,
            ..Origin::default()
        };
        let session = self.start_session(id, origin)?;
        if self.inner.registry.insert(session.clone()).is_err() {
            session.discard();
            return Err(too_many_sessions());
        }
        self.ensure_reaper();
        tracing::debug!(sessions = self.session_count(), "HTTP session created");
        Ok(session)
    }

    /// A POST of a session (2025 eras): an `initialize` without a session id opens one (its id
    /// goes out with a successful `InitializeResult`); anything else names its session.
    pub(super) async fn post_session(
        &self,
        req_headers: &http::HeaderMap,
        text: String,
        post: Post,
        attachment: Option<Attachment>,
        owner: Option<Arc<str>>,
    ) -> Response<Body> {
        let has_session_header = headers::session_id(req_headers).is_some();
        let (session, created) = if post.initialize && !has_session_header {
            match self.create_session(owner) {
                Ok(s) => (s, true),
                Err(resp) => return resp,
            }
        } else {
            match self.session_of(req_headers, owner.as_deref()).await {
                Ok(s) => (s, false),
                Err(resp) => return resp,
            }
        };
        let mut resp = self.dispatch(&session, text, post, attachment).await;
        if created {
            // An `initialize` answered with an error opens no session: the client is given no
            // id, and nothing is kept (the session id goes out only with an InitializeResult).
            let refused = resp.extensions().get::<InitializeRefused>().is_some();
            if !resp.status().is_success() || refused {
                session.terminate().await;
            } else if let Err(e) = session.write_record(true).await {
                crate::throttle::warn_throttled!(error = %e, "session not recorded; refused");
                session.terminate().await;
                return unavailable(&e.to_string(), "session_store_failed");
            } else if let Ok(v) = HeaderValue::from_str(&session.id) {
                resp.headers_mut().insert(headers::SESSION_ID, v);
            }
        }
        resp
    }
}
