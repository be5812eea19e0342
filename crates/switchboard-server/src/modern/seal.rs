//! Sealed `requestState` (`[D26-38]`): the state of a multi round-trip request travels through
//! the client, so it is integrity-protected with HMAC-SHA256 under a server key, bound to the
//! request it belongs to (method and target) and to an expiry. State that fails any check is
//! refused with a JSON-RPC error, never re-prompted and never served.
//!
//! Wire form: `base64url(payload) "." base64url(mac)`, payload = JSON
//! `{"v":1,"m":method,"t":target,"exp":unix_ms,"a":{key: answer}}`.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Sha256;
use switchboard_types::{ErrorCode, ErrorObject};

/// How long a sealed state stays valid by default.
pub(crate) const DEFAULT_STATE_TTL: Duration = Duration::from_secs(600);
/// The largest sealed state issued or accepted (the answers it carries grow with each round).
pub(crate) const MAX_STATE_BYTES: usize = 256 * 1024;

/// Seals and opens request states for one server.
pub(crate) struct Sealer {
    key: [u8; 32],
    ttl: Duration,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealer")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize, Deserialize)]
struct Payload {
    v: u8,
    m: String,
    t: String,
    exp: u64,
    a: BTreeMap<String, Value>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// -32602: the state is not one this server issued for this request, or it expired.
pub(crate) fn bad_state(why: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        format!("Invalid requestState: {why}"),
    )
    .with_data(
        serde_json::json!({"reason": "invalid_request_state", "detail": why, "spec": "D26-38"}),
    )
}

impl Sealer {
    /// A sealer with `key` (32 bytes; every node of a deployment must share it) or a random one.
    pub(crate) fn new(key: Option<[u8; 32]>, ttl: Duration) -> Self {
        let key = key.unwrap_or_else(|| {
            let mut k = [0u8; 32];
            if getrandom::fill(&mut k).is_err() {
                // No entropy source: a key from the std hasher's random seed, never a constant.
                use std::hash::BuildHasher;
                for (i, chunk) in k.chunks_mut(8).enumerate() {
                    let h = std::collections::hash_map::RandomState::new().hash_one(i);
                    chunk.copy_from_slice(&h.to_le_bytes());
                }
            }
            k
        });
        Sealer { key, ttl }
    }

    fn mac(&self, payload: &[u8]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .expect("HMAC takes any key length");
        mac.update(payload);
        mac
    }

    /// Seals `answers` for a request of `method` on `target`.
    ///
    /// # Errors
    /// -32603 when the state would exceed [`MAX_STATE_BYTES`].
    pub(crate) fn seal(
        &self,
        method: &str,
        target: &str,
        answers: BTreeMap<String, Value>,
    ) -> Result<String, ErrorObject> {
        let payload = Payload {
            v: 1,
            m: method.to_owned(),
            t: target.to_owned(),
            exp: now_ms().saturating_add(self.ttl.as_millis() as u64),
            a: answers,
        };
        let json = serde_json::to_vec(&payload)
            .map_err(|e| ErrorObject::internal(format!("requestState: {e}")))?;
        let tag = self.mac(&json).finalize().into_bytes();
        let sealed = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&json),
            URL_SAFE_NO_PAD.encode(tag)
        );
        if sealed.len() > MAX_STATE_BYTES {
            return Err(ErrorObject::internal(
                "the answers gathered so far exceed the requestState bound",
            )
            .with_data(
                serde_json::json!({"reason": "request_state_too_large", "limit": MAX_STATE_BYTES}),
            ));
        }
        Ok(sealed)
    }

    /// Opens a state this server sealed for `method` on `target`: the answers it carries.
    ///
    /// # Errors
    /// -32602 for a state that is too large, malformed, forged or edited, issued for another
    /// request, or expired.
    pub(crate) fn open(
        &self,
        state: &str,
        method: &str,
        target: &str,
    ) -> Result<BTreeMap<String, Value>, ErrorObject> {
        if state.len() > MAX_STATE_BYTES {
            return Err(bad_state("too large"));
        }
        let (payload, tag) = state
            .split_once('.')
            .ok_or_else(|| bad_state("malformed"))?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| bad_state("malformed"))?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| bad_state("malformed"))?;
        self.mac(&payload)
            .verify_slice(&tag)
            .map_err(|_| bad_state("failed verification"))?;
        let p: Payload = serde_json::from_slice(&payload).map_err(|_| bad_state("malformed"))?;
        if p.v != 1 || p.m != method || p.t != target {
            return Err(bad_state("issued for another request"));
        }
        if now_ms() > p.exp {
            return Err(bad_state("expired"));
        }
        Ok(p.a)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use switchboard_types::methods;

    #[test]
    fn d26_38_tampered_forged_foreign_and_expired_states_are_refused() {
        let s = Sealer::new(None, DEFAULT_STATE_TTL);
        let mut answers = BTreeMap::new();
        answers.insert("name".to_owned(), serde_json::json!({"action": "accept"}));
        let sealed = s
            .seal(methods::TOOLS_CALL, "greet", answers.clone())
            .unwrap();
        assert_eq!(
            s.open(&sealed, methods::TOOLS_CALL, "greet").unwrap(),
            answers
        );
        let refused = |state: &str, m: &str, t: &str| s.open(state, m, t).unwrap_err();
        assert_eq!(
            refused(&format!("{sealed}-TAMPERED"), methods::TOOLS_CALL, "greet").code,
            ErrorCode::INVALID_PARAMS
        );
        let mut flipped = sealed.clone().into_bytes();
        flipped[3] ^= 1;
        refused(
            std::str::from_utf8(&flipped).unwrap(),
            methods::TOOLS_CALL,
            "greet",
        );
        refused(&sealed, methods::TOOLS_CALL, "other-tool");
        refused(&sealed, methods::PROMPTS_GET, "greet");
        refused("not-a-state", methods::TOOLS_CALL, "greet");
        let other = Sealer::new(None, DEFAULT_STATE_TTL);
        refused(
            &other
                .seal(methods::TOOLS_CALL, "greet", BTreeMap::new())
                .unwrap(),
            methods::TOOLS_CALL,
            "greet",
        );
        let expired = Sealer::new(Some(s.key), Duration::ZERO);
        let old = expired
            .seal(methods::TOOLS_CALL, "greet", BTreeMap::new())
            .unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(
            s.open(&old, methods::TOOLS_CALL, "greet").is_err(),
            "expired"
        );
    }

    #[test]
    fn a_state_over_the_bound_is_neither_issued_nor_read() {
        let s = Sealer::new(None, DEFAULT_STATE_TTL);
        let mut answers = BTreeMap::new();
        answers.insert("big".to_owned(), Value::String("x".repeat(MAX_STATE_BYTES)));
        assert_eq!(
            s.seal(methods::TOOLS_CALL, "t", answers).unwrap_err().code,
            ErrorCode::INTERNAL_ERROR
        );
        assert!(
            s.open(&"a".repeat(MAX_STATE_BYTES + 1), methods::TOOLS_CALL, "t")
                .is_err()
        );
    }
}
