//! Every HTTP exchange of the OAuth client: policy-checked, bounded in bytes and in time, no
//! redirect followed (a metadata or token endpoint that redirects is refused), no body of a
//! failed answer passed on ([SEC-SSRF-8]).

use std::time::Duration;

use http::{HeaderMap, HeaderValue, StatusCode, header};
use serde::de::DeserializeOwned;
use url::Url;

use super::error::{OAuthError, shown};
use super::policy::{GuardedResolver, UrlPolicy};

/// The default bound on one OAuth fetch: 10 s.
pub(crate) const DEFAULT_FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The default bound on one OAuth answer's body: 256 KiB.
pub(crate) const DEFAULT_MAX_BODY_BYTES: usize = 256 * 1024;

/// An answer: status, headers and the bounded body.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Vec<u8>,
}

impl Answer {
    /// The body as JSON of type `T`.
    pub(crate) fn json<T: DeserializeOwned>(&self, url: &Url) -> Result<T, OAuthError> {
        serde_json::from_slice(&self.body).map_err(|e| OAuthError::Fetch {
            url: shown(url.as_str()),
            why: format!("the answer is not the expected JSON document ({e})"),
        })
    }
}

/// The HTTP side of the OAuth client.
#[derive(Debug, Clone)]
pub(crate) struct Fetcher {
    client: reqwest::Client,
    pub(crate) policy: UrlPolicy,
    max_body: usize,
}

impl Fetcher {
    pub(crate) fn new(
        policy: UrlPolicy,
        timeout: Duration,
        max_body: usize,
        user_agent: &str,
    ) -> Result<Self, OAuthError> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(GuardedResolver::shared(policy))
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(user_agent)
            .build()
            .map_err(|e| OAuthError::Config(format!("cannot build the OAuth HTTP client: {e}")))?;
        Ok(Self {
            client,
            policy,
            max_body,
        })
    }

    /// GET `url` with `Accept: application/json` (and the extra headers).
    pub(crate) async fn get(&self, url: &Url, extra: &HeaderMap) -> Result<Answer, OAuthError> {
        self.policy.check_url(url)?;
        let rb = self
            .client
            .get(url.clone())
            .header(header::ACCEPT, "application/json")
            .headers(extra.clone());
        self.send(url, rb).await
    }

    /// POSTs a form (`application/x-www-form-urlencoded`), with HTTP Basic credentials when
    /// given. The form never goes in the URL (`[AU-19]`).
    pub(crate) async fn post_form(
        &self,
        url: &Url,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
        extra: &HeaderMap,
    ) -> Result<Answer, OAuthError> {
        self.policy.check_url(url)?;
        let body = {
            let mut ser = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in form {
                ser.append_pair(k, v);
            }
            ser.finish()
        };
        let mut rb = self
            .client
            .post(url.clone())
            .header(header::ACCEPT, "application/json")
            .header(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-www-form-urlencoded"),
            )
            .headers(extra.clone())
            .body(body);
        if let Some((id, secret)) = basic {
            rb = rb.header(header::AUTHORIZATION, basic_header(id, secret)?);
        }
        self.send(url, rb).await
    }

    /// POSTs JSON.
    pub(crate) async fn post_json(
        &self,
        url: &Url,
        body: &serde_json::Value,
    ) -> Result<Answer, OAuthError> {
        self.policy.check_url(url)?;
        let rb = self
            .client
            .post(url.clone())
            .header(header::ACCEPT, "application/json")
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        self.send(url, rb).await
    }

    /// A GET that follows nothing and reads nothing but the status and headers: the headless
    /// user agent's step. `cookie` is sent when given.
    pub(crate) async fn get_page(
        &self,
        url: &Url,
        cookie: Option<&str>,
    ) -> Result<Answer, OAuthError> {
        self.policy.check_url(url)?;
        let mut rb = self
            .client
            .get(url.clone())
            .header(header::ACCEPT, "text/html,application/json");
        if let Some(c) = cookie {
            rb = rb.header(header::COOKIE, c);
        }
        self.send(url, rb).await
    }

    async fn send(&self, url: &Url, rb: reqwest::RequestBuilder) -> Result<Answer, OAuthError> {
        let fail = |why: String| OAuthError::Fetch {
            url: shown(url.as_str()),
            why,
        };
        let mut resp = rb.send().await.map_err(|e| fail(describe(&e)))?;
        let status = resp.status();
        let headers = resp.headers().clone();
        if let Some(len) = resp.content_length()
            && len > self.max_body as u64
        {
            return Err(fail(format!(
                "the answer is {len} bytes, over the bound of {}",
                self.max_body
            )));
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| fail(describe(&e)))? {
            if body.len() + chunk.len() > self.max_body {
                return Err(fail(format!(
                    "the answer is over the bound of {} bytes",
                    self.max_body
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Answer {
            status,
            headers,
            body,
        })
    }
}

/// `Authorization: Basic` for a client id and secret (RFC 6749 §2.3.1: each form-encoded first).
pub(crate) fn basic_header(id: &str, secret: &str) -> Result<HeaderValue, OAuthError> {
    use base64::Engine as _;
    let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let raw = format!("{}:{}", enc(id), enc(secret));
    let mut v = HeaderValue::from_str(&format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(raw)
    ))
    .map_err(|_| OAuthError::Config("the client credentials cannot go in a header".into()))?;
    v.set_sensitive(true);
    Ok(v)
}

/// A reqwest error with its causes.
fn describe(e: &reqwest::Error) -> String {
    let mut s = if e.is_timeout() {
        "timed out".to_owned()
    } else {
        e.to_string()
    };
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let c = cause.to_string();
        if !s.contains(&c) {
            s.push_str(": ");
            s.push_str(&c);
        }
        source = cause.source();
    }
    s
}
