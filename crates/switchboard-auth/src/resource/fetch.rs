//! Bounded fetching of the documents token validation needs (issuer metadata, JWKS,
//! introspection answers): `https` only (or `http` to loopback), no redirects, a deadline for
//! the whole exchange, and a byte bound on the body.

use std::time::Duration;

use serde_json::Value;
use url::Url;

use super::fetchable;

/// How a fetch failed; the text names the URL's host at most, never a body.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FetchError {
    #[error("refused URL (https only, or http to a loopback host)")]
    Refused,
    #[error("timed out")]
    TimedOut,
    #[error("answer larger than {0} bytes")]
    TooLarge(usize),
    #[error("HTTP status {0}")]
    Status(u16),
    #[error("not a JSON object")]
    NotJson,
    #[error("request failed: {0}")]
    Request(String),
}

/// The HTTP client validators share: no redirects (a redirect is an answer we refuse), no
/// proxy from the environment for loopback, connect and total deadlines.
pub(crate) fn client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(timeout)
        .timeout(timeout)
        .build()
        .unwrap_or_default()
}

/// Sends `req` to `url` and reads a JSON object of at most `max_bytes`, within `timeout`.
pub(crate) async fn json(
    req: reqwest::RequestBuilder,
    url: &Url,
    max_bytes: usize,
    timeout: Duration,
) -> Result<serde_json::Map<String, Value>, FetchError> {
    if !fetchable(url) {
        return Err(FetchError::Refused);
    }
    let work = async {
        let mut resp = req
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| FetchError::Request(e.without_url().to_string()))?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(FetchError::Status(status));
        }
        if resp.content_length().is_some_and(|n| n > max_bytes as u64) {
            return Err(FetchError::TooLarge(max_bytes));
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| FetchError::Request(e.without_url().to_string()))?
        {
            if body.len() + chunk.len() > max_bytes {
                return Err(FetchError::TooLarge(max_bytes));
            }
            body.extend_from_slice(&chunk);
        }
        match serde_json::from_slice::<Value>(&body) {
            Ok(Value::Object(m)) => Ok(m),
            _ => Err(FetchError::NotJson),
        }
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(FetchError::TimedOut),
    }
}
