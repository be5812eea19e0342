//! Redirects (client side): every request goes out through [`execute`], which follows a redirect
//! only while it stays on the MCP endpoint's origin.
//!
//! | answer | what happens |
//! |---|---|
//! | 307 / 308 to the endpoint's origin | followed with the same method, body and headers |
//! | 301 / 302 / 303 to the endpoint's origin, for a `GET` | followed |
//! | 301 / 302 / 303 for a POST or `DELETE` | not followed: it would turn the request into a `GET` and drop its body (a GET on the endpoint opens the standalone stream); the message suggests checking the URL |
//! | any redirect to another origin (scheme, host or port) | not followed |
//! | a `Location` with user info, or none, or one that does not parse | not followed |
//! | more than `max_redirects` hops | not followed |
//! | any other 3xx (304, 300 ...) | handed back as it is: an HTTP status like any other |
//!
//! A redirect that is not followed makes no request to its target and comes back as
//! [`Refused`], which names the status, the target and the reason; the callers turn it into a
//! local error for the requests concerned.
//!
//! Why this policy. Every request carries what belongs to the endpoint alone: the session id
//! (`[HT-19]`: a secret that lets its holder act in the session), `Authorization` and any header
//! the user configured (API keys under custom names). reqwest's own policy (like httpx's and
//! fetch's) strips only `Authorization` and cookies on a cross-origin hop and forwards the rest,
//! and it rewrites a POST into a `GET` on 301/302/303, so this crate turns reqwest's following
//! off and decides itself. The official SDKs arrived at the same rule: the Python SDK follows a
//! redirect only on the endpoint's origin and only when the method is kept (307/308, or any
//! status for a `GET`), up to a bound; the TypeScript SDK's explicit redirect handling follows
//! same-origin 307/308 for POST and refuses cross-origin POSTs with a typed error; rmcp follows
//! none. We do not carry a cross-origin `GET` with its credentials stripped (as the TypeScript
//! SDK does): a stream opened on another origin would feed the session with messages from a
//! server that is not the endpoint. Same-origin redirects are what deployments need (a trailing
//! slash, a moved path); an endpoint that moved to another origin is a new URL for the user to
//! configure, and the error names it.

use http::header::LOCATION;
use http::{Method, StatusCode};
use reqwest::{Request, Response, Url};
use serde_json::json;

use crate::shared::Shared;

/// The most of a `Location` shown in messages.
const LOCATION_SHOWN: usize = 200;

/// A redirect that was not followed.
#[derive(Debug, Clone)]
pub(crate) struct Refused {
    /// The method of the request that was redirected.
    pub(crate) method: Method,
    /// The redirect's status.
    pub(crate) status: StatusCode,
    /// The target (resolved when it parses), shortened for messages.
    pub(crate) location: String,
    /// Why it was not followed.
    pub(crate) why: String,
}

impl Refused {
    /// The message for a person.
    pub(crate) fn message(&self) -> String {
        format!(
            "the server redirected the {} (HTTP {}) to {}: not followed, {}",
            self.method,
            self.status.as_u16(),
            self.location,
            self.why
        )
    }

    /// The `data` of the local errors it causes.
    pub(crate) fn data(&self) -> serde_json::Value {
        json!({
            "reason": "redirect_refused",
            "status": self.status.as_u16(),
            "location": self.location,
        })
    }
}

/// The header a DPoP proof travels in (RFC 9449 §4.1).
const DPOP: http::HeaderName = http::HeaderName::from_static("dpop");
/// The header a server hands a DPoP nonce in (RFC 9449 §8.1).
const DPOP_NONCE: http::HeaderName = http::HeaderName::from_static("dpop-nonce");

/// The most step-up retries of one request (the provider bounds its own attempts too).
const MAX_STEP_UP_RETRIES: usize = 3;

/// Sends `req`, with the auth provider's token when there is one (`crate::auth`): a 401 is
/// answered by the provider and the request sent again once; a 403 `insufficient_scope` is
/// stepped up and sent again while the provider agrees. Redirects are followed by the module's
/// policy. `Ok(Err(_))`: a redirect that was not followed; no request was made to its target.
///
/// # Errors
/// The HTTP exchange failed (on the first request or on a followed hop).
pub(crate) async fn execute(
    shared: &Shared,
    req: Request,
) -> Result<Result<Response, Refused>, reqwest::Error> {
    let Some(auth) = shared.config.auth.clone() else {
        return follow(shared, req, None).await;
    };
    let mut req = req;
    let mut retried_401 = false;
    let mut retried_nonce = false;
    let mut step_ups = 0_usize;
    loop {
        let creds = match auth.request_auth(req.method(), req.url()).await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "the auth provider has no token");
                crate::auth::RequestAuth::bearer(None)
            }
        };
        let headers = req.headers_mut();
        headers.remove(http::header::AUTHORIZATION);
        headers.remove(DPOP);
        if let Some(t) = &creds.token {
            match http::HeaderValue::from_str(&format!("{} {t}", creds.scheme)) {
                Ok(mut v) => {
                    v.set_sensitive(true);
                    headers.insert(http::header::AUTHORIZATION, v);
                }
                Err(_) => tracing::warn!("the access token cannot go in a header; sent without"),
            }
        }
        if let Some(p) = &creds.dpop_proof {
            match http::HeaderValue::from_str(p) {
                Ok(mut v) => {
                    v.set_sensitive(true);
                    headers.insert(DPOP, v);
                }
                Err(_) => tracing::warn!("the DPoP proof cannot go in a header; sent without"),
            }
        }
        let token = creds.token;
        let url = req.url().clone();
        let again = req.try_clone();
        let resp = match follow(shared, req, Some(&*auth)).await? {
            Ok(r) => r,
            refused @ Err(_) => return Ok(refused),
        };
        let nonce = resp.headers().get(DPOP_NONCE).and_then(|v| v.to_str().ok());
        if let Some(n) = nonce {
            auth.dpop_nonce(&url, n);
        }
        let challenge = resp
            .headers()
            .get(http::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let status = resp.status();
        let Some(next) = again else {
            return Ok(Ok(resp));
        };
        if status == StatusCode::UNAUTHORIZED
            && challenge
                .as_deref()
                .is_some_and(crate::auth::is_use_dpop_nonce)
        {
            // The resource wants a nonce in the proof (RFC 9449 §9): one more try with a new
            // proof carrying it, never a new authorization.
            if retried_nonce || creds.dpop_proof.is_none() || nonce.is_none() {
                return Ok(Ok(resp));
            }
            retried_nonce = true;
            tracing::debug!("the server asked for a DPoP nonce; sending again once");
            drop(resp);
            req = next;
            continue;
        }
        let retry = if status == StatusCode::UNAUTHORIZED && !retried_401 {
            retried_401 = true;
            auth.unauthorized(challenge.as_deref(), token.as_deref())
                .await
        } else if status == StatusCode::FORBIDDEN
            && step_ups < MAX_STEP_UP_RETRIES
            && challenge
                .as_deref()
                .is_some_and(crate::auth::is_insufficient_scope)
        {
            step_ups += 1;
            auth.insufficient_scope(challenge.as_deref().unwrap_or(""), token.as_deref())
                .await
        } else {
            return Ok(Ok(resp));
        };
        match retry {
            Ok(()) => {
                drop(resp);
                req = next;
            }
            Err(e) => {
                tracing::warn!(status = status.as_u16(), error = %e, "authorization failed");
                return Ok(Ok(resp));
            }
        }
    }
}

/// Sends `req`, following redirects by the module's policy. A request carrying a DPoP proof
/// gets a new one from `auth` at each hop: a proof names the URL it was made for (`htu`).
async fn follow(
    shared: &Shared,
    mut req: Request,
    auth: Option<&dyn crate::auth::AuthProvider>,
) -> Result<Result<Response, Refused>, reqwest::Error> {
    let mut hops = 0_usize;
    loop {
        let again = req.try_clone();
        let method = req.method().clone();
        let from = req.url().clone();
        let resp = shared.client.execute(req).await?;
        let status = resp.status();
        if !is_followable(status) {
            return Ok(Ok(resp));
        }
        let location = resp.headers().get(LOCATION).map(|v| v.as_bytes().to_vec());
        drop(resp);
        let next = match decide(
            &shared.url,
            &from,
            &method,
            status,
            location.as_deref(),
            hops,
            shared.config.max_redirects,
        ) {
            Ok(next) => next,
            Err(refused) => {
                tracing::warn!(
                    %method,
                    status = status.as_u16(),
                    location = refused.location,
                    why = refused.why,
                    "redirect not followed"
                );
                return Ok(Err(refused));
            }
        };
        let Some(mut retry) = again else {
            // Bodies are always in memory here, so this does not happen; refuse rather than
            // send an empty body.
            return Ok(Err(Refused {
                method,
                status,
                location: shown(next.as_str()),
                why: "the request body cannot be sent again".to_owned(),
            }));
        };
        tracing::debug!(%method, status = status.as_u16(), to = %next, "following a same-origin redirect");
        if let Some(auth) = auth.filter(|_| retry.headers().contains_key(DPOP)) {
            match auth.request_auth(&method, &next).await {
                Ok(creds) => {
                    if let Some(p) = creds
                        .dpop_proof
                        .and_then(|p| http::HeaderValue::from_str(&p).ok())
                    {
                        let mut p = p;
                        p.set_sensitive(true);
                        retry.headers_mut().insert(DPOP, p);
                    } else {
                        retry.headers_mut().remove(DPOP);
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "no DPoP proof for the redirect's target");
                    retry.headers_mut().remove(DPOP);
                }
            }
        }
        *retry.url_mut() = next;
        req = retry;
        hops += 1;
    }
}

/// The statuses that redirect with a `Location` (RFC 9110 §15.4).
fn is_followable(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    )
}

/// Where to go next, or why not. `endpoint` gives the origin; `from` is the URL just asked
/// (a relative `Location` resolves against it).
fn decide(
    endpoint: &Url,
    from: &Url,
    method: &Method,
    status: StatusCode,
    location: Option<&[u8]>,
    hops: usize,
    max: usize,
) -> Result<Url, Refused> {
    let refuse = |location: String, why: String| Refused {
        method: method.clone(),
        status,
        location,
        why,
    };
    let Some(raw) = location else {
        return Err(refuse(
            "(no Location)".to_owned(),
            "the answer names no target".to_owned(),
        ));
    };
    let text = String::from_utf8_lossy(raw);
    let next = from.join(text.trim()).map_err(|e| {
        refuse(
            shown(&text),
            format!("the Location is not a URI reference ({e})"),
        )
    })?;
    if next.origin() != endpoint.origin() {
        return Err(refuse(
            shown(next.as_str()),
            format!(
                "it leaves the endpoint's origin {}: the session id, Authorization and the \
                 configured headers are sent to that origin only (use the new URL as the \
                 endpoint if you trust it)",
                endpoint.origin().ascii_serialization()
            ),
        ));
    }
    if !next.username().is_empty() || next.password().is_some() {
        return Err(refuse(
            shown(next.as_str()),
            "the target carries user info".to_owned(),
        ));
    }
    let keeps_method = matches!(
        status,
        StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
    );
    if *method != Method::GET && !keeps_method {
        return Err(refuse(
            shown(next.as_str()),
            format!(
                "following HTTP {} would send the {method} again as a GET without its body; \
                 check the endpoint URL (a trailing slash?)",
                status.as_u16()
            ),
        ));
    }
    if hops >= max {
        return Err(refuse(
            shown(next.as_str()),
            format!("more than {max} redirects (max_redirects)"),
        ));
    }
    Ok(next)
}

/// A URL or `Location` for messages: at most `LOCATION_SHOWN` characters.
fn shown(s: &str) -> String {
    match s.char_indices().nth(LOCATION_SHOWN) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn go(method: Method, status: u16, location: &str, hops: usize) -> Result<String, String> {
        let endpoint = url("http://127.0.0.1:8080/mcp");
        decide(
            &endpoint,
            &endpoint,
            &method,
            StatusCode::from_u16(status).unwrap(),
            Some(location.as_bytes()),
            hops,
            3,
        )
        .map(|u| u.to_string())
        .map_err(|r| r.message())
    }

    #[test]
    fn same_origin_redirects_that_keep_the_method_are_followed() {
        for status in [307, 308] {
            assert_eq!(
                go(Method::POST, status, "/mcp/", 0).unwrap(),
                "http://127.0.0.1:8080/mcp/"
            );
            assert_eq!(
                go(Method::DELETE, status, "http://127.0.0.1:8080/x", 2).unwrap(),
                "http://127.0.0.1:8080/x"
            );
        }
        for status in [301, 302, 303, 307, 308] {
            assert!(go(Method::GET, status, "other", 0).is_ok(), "{status}");
        }
    }

    #[test]
    fn another_origin_is_refused_whatever_the_method() {
        for (m, s) in [
            (Method::POST, 307),
            (Method::GET, 302),
            (Method::DELETE, 308),
        ] {
            for target in [
                "http://127.0.0.1:9090/mcp",
                "https://127.0.0.1:8080/mcp",
                "http://localhost:8080/mcp",
                "//evil.example/mcp",
            ] {
                let e = go(m.clone(), s, target, 0).unwrap_err();
                assert!(e.contains("leaves the endpoint's origin"), "{e}");
            }
        }
    }

    #[test]
    fn a_post_turned_into_a_get_user_info_and_too_many_hops_are_refused() {
        for status in [301, 302, 303] {
            let e = go(Method::POST, status, "/mcp/", 0).unwrap_err();
            assert!(e.contains("as a GET"), "{e}");
        }
        let e = go(Method::GET, 307, "http://u:p@127.0.0.1:8080/mcp", 0).unwrap_err();
        assert!(e.contains("user info"), "{e}");
        let e = go(Method::POST, 307, "/mcp/", 3).unwrap_err();
        assert!(e.contains("more than 3 redirects"), "{e}");
    }

    #[test]
    fn a_long_location_is_shortened_in_messages() {
        let long = format!("http://evil.example/{}", "a".repeat(10_000));
        let e = go(Method::POST, 307, &long, 0).unwrap_err();
        assert!(e.len() < 1000, "{}", e.len());
    }
}
