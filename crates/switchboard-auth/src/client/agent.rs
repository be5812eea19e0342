//! The user agent of the authorization-code flow: whatever takes the authorization URL to the
//! authorization server and brings back the redirect with the code. [`HeadlessUserAgent`]
//! fetches the URL itself and follows the redirects with a cookie jar (for authorization
//! servers that approve without a person, as test servers do); a browser-based agent (the
//! CLI's) implements [`UserAgent`] itself.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use http::header::{LOCATION, SET_COOKIE};
use url::Url;

use super::error::{OAuthError, shown};
use super::fetch::{DEFAULT_MAX_BODY_BYTES, Fetcher};
use super::policy::UrlPolicy;

/// A boxed future of the OAuth client.
pub type OAuthFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, OAuthError>> + Send + 'a>>;

/// Takes an authorization request to the authorization server and returns the redirect to
/// `redirect_uri` it ends with (with `code`, `state`, maybe `iss`, or an `error`).
pub trait UserAgent: Send + Sync + std::fmt::Debug {
    /// The redirect URI to register and send; `None`: the client's configured one.
    fn redirect_uri(&self) -> Option<String> {
        None
    }
    /// Runs the authorization request `url` until the redirect to `redirect_uri`.
    fn authorize<'a>(&'a self, url: Url, redirect_uri: &'a str) -> OAuthFuture<'a, Url>;
}

/// The most redirects the headless agent follows.
const MAX_HOPS: usize = 20;

/// Fetches the authorization URL and follows the redirects (each hop checked by the fetch
/// policy, cookies kept per host) until one goes to the redirect URI, which is not fetched.
#[derive(Debug, Clone)]
pub struct HeadlessUserAgent {
    fetcher: Fetcher,
}

impl HeadlessUserAgent {
    /// A headless agent fetching under `policy`.
    ///
    /// # Errors
    /// The HTTP client cannot be built.
    pub fn new(policy: UrlPolicy) -> Result<Self, OAuthError> {
        Ok(Self {
            fetcher: Fetcher::new(
                policy,
                Duration::from_secs(10),
                DEFAULT_MAX_BODY_BYTES,
                concat!("switchboard-auth/", env!("CARGO_PKG_VERSION")),
            )?,
        })
    }
}

/// Whether `target` is the redirect URI (same scheme, host, port and path; any query): how a
/// user agent recognises the end of an authorization request.
pub(crate) fn is_redirect_to(target: &Url, redirect_uri: &str) -> bool {
    let Ok(r) = Url::parse(redirect_uri) else {
        return false;
    };
    target.scheme() == r.scheme()
        && target.host_str() == r.host_str()
        && target.port_or_known_default() == r.port_or_known_default()
        && target.path() == r.path()
}

impl UserAgent for HeadlessUserAgent {
    fn authorize<'a>(&'a self, url: Url, redirect_uri: &'a str) -> OAuthFuture<'a, Url> {
        Box::pin(async move {
            let mut jar: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
            let mut at = url;
            for _ in 0..MAX_HOPS {
                let host = at.host_str().unwrap_or("").to_owned();
                let cookie = jar.get(&host).filter(|c| !c.is_empty()).map(|c| {
                    c.iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join("; ")
                });
                let answer = self.fetcher.get_page(&at, cookie.as_deref()).await?;
                for v in answer.headers.get_all(SET_COOKIE) {
                    let Ok(v) = v.to_str() else { continue };
                    let pair = v.split(';').next().unwrap_or("");
                    if let Some((k, val)) = pair.split_once('=') {
                        let entry = jar.entry(host.clone()).or_default();
                        if val.is_empty() {
                            entry.remove(k.trim());
                        } else {
                            entry.insert(k.trim().to_owned(), val.trim().to_owned());
                        }
                    }
                }
                let location = answer
                    .headers
                    .get(LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .filter(|_| answer.status.is_redirection());
                let Some(location) = location else {
                    return Err(OAuthError::UserAgent(format!(
                        "{} answered HTTP {} instead of redirecting: this authorization server \
                         wants a person (use the browser flow)",
                        shown(at.as_str()),
                        answer.status.as_u16()
                    )));
                };
                let next = at
                    .join(location)
                    .map_err(|e| OAuthError::UserAgent(format!("a redirect to a bad URL ({e})")))?;
                if is_redirect_to(&next, redirect_uri) {
                    return Ok(next);
                }
                at = next;
            }
            Err(OAuthError::UserAgent(format!(
                "more than {MAX_HOPS} redirects without reaching the redirect URI"
            )))
        })
    }
}
