//! DPoP on the endpoint (RFC 9449 §7, as profiled by SEP-1932), turned on by
//! [`super::Authorization::with_dpop`]: which requests need a proof, and the answers when one is
//! missing or wrong. The proof itself is judged by [`DpopVerifier`].
//!
//! | token | scheme | answer |
//! |---|---|---|
//! | bound (`cnf.jkt`) | `DPoP`, one valid proof by that key | served |
//! | bound | `DPoP`, no proof, two proofs, or a bad one | 401 `DPoP error="invalid_dpop_proof"` |
//! | bound | `DPoP`, a proof by another key | 401 `DPoP error="invalid_token"` |
//! | bound | `DPoP`, nonces on, no or a stale nonce | 401 `DPoP error="use_dpop_nonce"` and `DPoP-Nonce` |
//! | bound | `Bearer` | 401 `DPoP error="invalid_token"`: a stolen bound token is useless as a bearer |
//! | not bound | `DPoP` | 401 `DPoP error="invalid_token"` |
//! | not bound | `Bearer` | served, unless DPoP is required (401 `DPoP error="invalid_token"`) |
//! | any | replay store unreachable or full | 503, never let through unchecked |
//!
//! A request relayed by another node of the cluster (authenticated by the cluster secret) had
//! its proof checked by the node it reached first, with the same replay store: it is not
//! checked twice (its `jti` would be taken for a replay).

use std::sync::Arc;

use http::{HeaderMap, HeaderValue, Method};
use switchboard_auth::resource::AuthInfo;
use switchboard_auth::resource::dpop::{DpopError, DpopVerifier, bound_jkt};

/// The header a proof travels in (RFC 9449 §4.1).
pub(crate) const DPOP: &str = "dpop";
/// The header a nonce is handed out in (RFC 9449 §9).
pub(crate) const DPOP_NONCE: &str = "dpop-nonce";

/// The `Authorization` scheme a token came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// `Bearer` (RFC 6750).
    Bearer,
    /// `DPoP` (RFC 9449 §7.1).
    Dpop,
}

/// A refusal: status 401 (or 503), the challenge's `error`, its description, and a nonce to
/// hand out.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) error: &'static str,
    pub(crate) description: String,
    pub(crate) nonce: Option<String>,
    pub(crate) unavailable: bool,
}

fn token_refused(description: &str) -> Refusal {
    Refusal {
        error: "invalid_token",
        description: description.to_owned(),
        nonce: None,
        unavailable: false,
    }
}

impl From<DpopError> for Refusal {
    fn from(e: DpopError) -> Self {
        Refusal {
            error: e.error,
            description: e.description,
            nonce: e.nonce,
            unavailable: e.unavailable,
        }
    }
}

/// Checks the DPoP side of a request whose token `info` was validated: see the module's table.
pub(crate) async fn check(
    verifier: &DpopVerifier,
    scheme: Scheme,
    token: &str,
    info: &AuthInfo,
    method: &Method,
    headers: &HeaderMap,
    relayed: bool,
) -> Result<(), Refusal> {
    let jkt = bound_jkt(&info.claims);
    match (scheme, jkt) {
        (Scheme::Bearer, Some(_)) => Err(token_refused(
            "a DPoP-bound token must be sent with the DPoP scheme and a proof",
        )),
        (Scheme::Bearer, None) if verifier.config().required => Err(token_refused(
            "this resource accepts DPoP-bound tokens only",
        )),
        (Scheme::Bearer, None) => Ok(()),
        (Scheme::Dpop, None) => Err(token_refused(
            "the token sent with the DPoP scheme is not DPoP-bound",
        )),
        (Scheme::Dpop, Some(_)) if relayed => Ok(()),
        (Scheme::Dpop, Some(jkt)) => {
            let mut proofs = headers.get_all(DPOP).iter();
            let proof = match (proofs.next(), proofs.next()) {
                (Some(p), None) => p.to_str().ok(),
                _ => None,
            };
            let Some(proof) = proof else {
                return Err(Refusal::from_description(
                    "a request with a DPoP-bound token needs exactly one DPoP proof header",
                ));
            };
            verifier
                .check(proof, method.as_str(), token, jkt)
                .await
                .map_err(Refusal::from)
        }
    }
}

impl Refusal {
    fn from_description(description: &str) -> Self {
        Refusal {
            error: "invalid_dpop_proof",
            description: description.to_owned(),
            nonce: None,
            unavailable: false,
        }
    }
}

/// The `WWW-Authenticate` value of a DPoP challenge: `bearer` (a Bearer challenge's value, whose
/// parameters it takes) turned into `DPoP` with the algorithms proofs may use.
pub(crate) fn challenge_value(bearer: &str, verifier: &DpopVerifier) -> String {
    let params = bearer.strip_prefix("Bearer").unwrap_or("").trim_start();
    let algs = verifier.algorithms().join(" ");
    if params.is_empty() {
        format!("DPoP algs=\"{algs}\"")
    } else {
        format!("DPoP {params}, algs=\"{algs}\"")
    }
}

/// Sets the `DPoP-Nonce` header to `nonce`.
pub(crate) fn set_nonce(headers: &mut HeaderMap, nonce: &str) {
    if let Ok(v) = HeaderValue::from_str(nonce) {
        headers.insert(DPOP_NONCE, v);
    }
}

/// The verifier for an endpoint, shared by clones of its [`super::Authorization`].
pub(crate) type Shared = Arc<DpopVerifier>;
