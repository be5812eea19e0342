//! [`OAuthError`]: every way the client side of authorization fails, each with a message that
//! says what to do next. No message carries a token, a secret or the body of a failed fetch.

/// A failure of discovery, registration, authorization or a token request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// A URL the server or the authorization server handed us breaks the fetch policy
    /// (`[AU-17]`, SECURITY-NOTES §4): not https, or a private, loopback or link-local address.
    #[error("refused to fetch {url}: {why}")]
    Refused {
        /// The URL, shortened.
        url: String,
        /// Why.
        why: String,
    },
    /// A fetch failed (network, timeout, size bound, HTTP status).
    #[error("fetching {url} failed: {why}")]
    Fetch {
        /// The URL, shortened.
        url: String,
        /// Why (no body of the answer).
        why: String,
    },
    /// Discovery found no usable metadata.
    #[error("authorization discovery failed: {0}")]
    Discovery(String),
    /// The protected-resource metadata names another resource (RFC 9728 §3.3).
    #[error(
        "the protected-resource metadata names resource {found}, not {expected}; refusing it \
         (RFC 9728 §3.3)"
    )]
    ResourceMismatch {
        /// The resource we asked about.
        expected: String,
        /// The resource the document names.
        found: String,
    },
    /// The authorization server metadata names another issuer (RFC 8414 §3.3).
    #[error(
        "the authorization server metadata at {url} names issuer {found}, not {expected}; \
         refusing it (RFC 8414 §3.3)"
    )]
    IssuerMismatch {
        /// Where the document came from.
        url: String,
        /// The issuer we looked up.
        expected: String,
        /// The issuer it names.
        found: String,
    },
    /// The authorization server does not offer PKCE with S256 (`[AU-14]`).
    #[error(
        "the authorization server {issuer} does not advertise PKCE S256 \
         (code_challenge_methods_supported); refusing to authorize (AU-14)"
    )]
    NoPkce {
        /// The issuer.
        issuer: String,
    },
    /// No way to identify this client to the authorization server.
    #[error("cannot register with {issuer}: {why}")]
    Registration {
        /// The issuer.
        issuer: String,
        /// Why.
        why: String,
    },
    /// The authorization response was refused (state, iss) or carried an error.
    #[error("the authorization response was refused: {0}")]
    Callback(String),
    /// The user agent could not complete the authorization (browser, redirects, listener).
    #[error("authorization was not completed: {0}")]
    UserAgent(String),
    /// The token endpoint answered with an error or an unusable answer.
    #[error("the token request failed: {0}")]
    Token(String),
    /// Step-up was tried as often as allowed for these scopes (`[AU-7]`, SEC-SC-6).
    #[error(
        "the server still asks for scopes {scopes} after {attempts} authorization attempts; \
         giving up"
    )]
    StepUpExhausted {
        /// The scopes asked for.
        scopes: String,
        /// Attempts made.
        attempts: u32,
    },
    /// The token store failed.
    #[error("the token store failed: {0}")]
    Store(String),
    /// The configuration cannot work (for example a client-credentials grant without credentials).
    #[error("{0}")]
    Config(String),
}

/// The most of a URL shown in messages.
const URL_SHOWN: usize = 200;

/// A URL for messages, without its query (which may carry a code or a state) and shortened.
pub(crate) fn shown(url: &str) -> String {
    let base = url.split(['?', '#']).next().unwrap_or(url);
    match base.char_indices().nth(URL_SHOWN) {
        Some((i, _)) => format!("{}…", &base[..i]),
        None => base.to_owned(),
    }
}

/// Text from a server, shortened for messages.
pub(crate) fn shorten(s: &str) -> String {
    let s: String = s.chars().filter(|c| !c.is_control()).take(200).collect();
    s
}
