//! The HTTP+SSE transport of 2024-11-05 (client side), reached by the fallback of
//! SPEC-NOTES §6.9: when `POST initialize` to the URL gets 400, 404 or 405, the client `GET`s the
//! same URL expecting an SSE stream whose first event is `endpoint` (`[SSE-2]`). Its data is the
//! URI to POST every message to (`[SSE-3]`), resolved against the URL; an endpoint on another
//! origin is refused. Every server message then arrives on that stream as an event named
//! `message`; a POST only gets 2xx (usually 202). The stream cannot be resumed: when it closes,
//! the transport fails.

use std::sync::Arc;

use http::StatusCode;
use http::header::ACCEPT;
use reqwest::Url;
use switchboard_transport::headers;

use switchboard_types::error::echo;

use crate::redirect;
use crate::shared::{HttpMode, Shared, describe};
use crate::stream::{self, StreamKind, is_event_stream};
use switchboard_transport::codec::sse::SseParser;

/// Opens the HTTP+SSE stream, reads its `endpoint` event and switches the transport to HTTP+SSE
/// mode; the stream is then read by its own task.
///
/// # Errors
/// A text saying why this is no HTTP+SSE server either (for the log).
pub(crate) async fn open(shared: &Arc<Shared>) -> Result<(), String> {
    let wait = shared.config.response_timeout;
    let opened = tokio::time::timeout(wait, endpoint(shared)).await;
    let (post_url, resp, parser) = match opened {
        Ok(r) => r?,
        Err(_) => return Err(format!("no endpoint event within {wait:?}")),
    };
    tracing::info!(%post_url, "the server speaks the HTTP+SSE transport (2024-11-05)");
    {
        let mut st = shared.state();
        st.mode = HttpMode::HttpSse;
        st.http_sse_post = Some(post_url);
    }
    tokio::spawn(stream::read(
        shared.clone(),
        Some(resp),
        parser,
        StreamKind::HttpSse,
    ));
    Ok(())
}

/// GETs the URL and reads up to the first event, which must be `endpoint`.
async fn endpoint(shared: &Shared) -> Result<(Url, reqwest::Response, SseParser), String> {
    let req = shared
        .client
        .get(shared.url.clone())
        .header(ACCEPT, headers::EVENT_STREAM)
        .build()
        .map_err(|e| describe(&e))?;
    let mut resp = redirect::execute(shared, req)
        .await
        .map_err(|e| describe(&e))?
        .map_err(|refused| refused.message())?;
    if resp.status() != StatusCode::OK || !is_event_stream(&resp) {
        return Err(format!(
            "GET answered HTTP {} without an SSE stream",
            resp.status()
        ));
    }
    let mut parser = SseParser::new(shared.config.max_event_bytes);
    loop {
        if let Some(item) = parser.next() {
            let ev = item.map_err(|e| e.to_string())?;
            if ev.event != "endpoint" {
                return Err(format!(
                    "the first event is {:?}, not endpoint",
                    echo(&ev.event)
                ));
            }
            let url = resolve(&shared.url, ev.data.trim())?;
            return Ok((url, resp, parser));
        }
        match resp.chunk().await.map_err(|e| describe(&e))? {
            Some(bytes) => parser.push(&bytes),
            None => return Err("the SSE stream ended before the endpoint event".to_owned()),
        }
    }
}

/// Resolves the endpoint URI against the stream's URL; it must stay on the same origin (the
/// session must not be sent elsewhere).
fn resolve(base: &Url, endpoint: &str) -> Result<Url, String> {
    let url = base.join(endpoint).map_err(|e| {
        let endpoint = echo(endpoint);
        format!("the endpoint {endpoint:?} is not a URI reference: {e}")
    })?;
    if url.origin() != base.origin() {
        return Err(format!(
            "the endpoint {} is not on the origin of {base}; refused",
            echo(url.as_str())
        ));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_endpoint_resolves_against_the_url_and_keeps_its_origin() {
        let base = Url::parse("http://127.0.0.1:8080/mcp/sse").unwrap();
        let r = |e: &str| resolve(&base, e).map(|u| u.to_string());
        assert_eq!(
            r("/messages?sessionId=abc").unwrap(),
            "http://127.0.0.1:8080/messages?sessionId=abc"
        );
        assert_eq!(
            r("messages?s=1").unwrap(),
            "http://127.0.0.1:8080/mcp/messages?s=1"
        );
        assert_eq!(
            r("http://127.0.0.1:8080/x").unwrap(),
            "http://127.0.0.1:8080/x"
        );
        assert!(r("http://evil.example/x").is_err());
        // The server's text in the reason is cut.
        let far = format!("http://evil.example/{}", "x".repeat(1 << 20));
        assert!(r(&far).unwrap_err().len() < 600);
        let bad = format!("http://[{}", "x".repeat(1 << 20));
        assert!(r(&bad).unwrap_err().len() < 600);
        assert!(r("http://127.0.0.1:9090/x").is_err());
    }
}
