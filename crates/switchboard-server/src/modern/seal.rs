//! Sealed `requestState` (`[D26-38]`): the state of a multi round-trip request travels through
//! the client, so it is encrypted and authenticated (XChaCha20-Poly1305) under a server key,
//! bound to the request it belongs to (method and target), to the caller it was issued to
//! (the authorization subject's owner key, so that another user holding it cannot complete
//! the request with the first one's answers), and to an expiry. Its payload (the answers of
//! earlier rounds) is not readable by whoever holds it. State that fails any check is refused
//! with a JSON-RPC error, never re-prompted and never served (issue 25, finding 7).
//!
//! Every replica of a server must share the key ([`crate::ServerBuilder::shared_key`]); the
//! default is random per server.
//!
//! Wire form: `"v2." base64url(nonce ‖ ciphertext ‖ tag)`, a 24-byte random nonce, the
//! plaintext JSON `{"exp":unix_ms,"a":{key: answer}}`, the associated data the JSON array
//! `["v2", method, target, owner]`.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit as _, Payload as Sealed};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Sha256;
use switchboard_types::{ErrorCode, ErrorObject};

/// How long a sealed state stays valid by default.
pub(crate) const DEFAULT_STATE_TTL: Duration = Duration::from_secs(600);
/// The largest sealed state issued or accepted (the answers it carries grow with each round).
pub(crate) const MAX_STATE_BYTES: usize = 256 * 1024;

/// The version prefix of the wire form.
const PREFIX: &str = "v2.";
/// The nonce length of XChaCha20-Poly1305.
const NONCE_BYTES: usize = 24;

/// Seals and opens request states for one server.
pub(crate) struct Sealer {
    cipher: XChaCha20Poly1305,
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

/// 32 random bytes: from the system, or, without an entropy source, from the std hasher's
/// random seeds (never a constant).
pub(crate) fn random_key() -> [u8; 32] {
    let mut k = [0u8; 32];
    if getrandom::fill(&mut k).is_err() {
        use std::hash::BuildHasher;
        for (i, chunk) in k.chunks_mut(8).enumerate() {
            let h = std::collections::hash_map::RandomState::new().hash_one(i);
            chunk.copy_from_slice(&h.to_le_bytes());
        }
    }
    k
}

/// A key for one use (`label`) derived from the server's shared key: HMAC-SHA256(key, label).
pub(crate) fn derive_key(key: &[u8; 32], label: &str) -> [u8; 32] {
    let mut mac =
        <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(label.as_bytes());
    mac.finalize().into_bytes().into()
}

/// The associated data binding a state to its request and caller.
fn bound_to(method: &str, target: &str, owner: &str) -> Vec<u8> {
    serde_json::to_vec(&["v2", method, target, owner]).unwrap_or_default()
}

impl Sealer {
    /// A sealer keyed from `key` (every node of a deployment must share it) or a random one.
    pub(crate) fn new(key: Option<[u8; 32]>, ttl: Duration) -> Self {
        let key = derive_key(
            &key.unwrap_or_else(random_key),
            "switchboard/requestState/v2",
        );
        Sealer {
            cipher: XChaCha20Poly1305::new(&key.into()),
            ttl,
        }
    }

    /// Seals `answers` for a request of `method` on `target` by the caller `owner` (the
    /// authorization owner key, empty without authorization).
    ///
    /// # Errors
    /// -32603 when the state would exceed [`MAX_STATE_BYTES`].
    pub(crate) fn seal(
        &self,
        method: &str,
        target: &str,
        owner: &str,
        answers: BTreeMap<String, Value>,
    ) -> Result<String, ErrorObject> {
        let payload = Payload {
            exp: now_ms().saturating_add(self.ttl.as_millis() as u64),
            a: answers,
        };
        let json = serde_json::to_vec(&payload)
            .map_err(|e| ErrorObject::internal(format!("requestState: {e}")))?;
        let too_large = || {
            ErrorObject::internal("the answers gathered so far exceed the requestState bound")
                .with_data(
                    serde_json::json!({"reason": "request_state_too_large", "limit": MAX_STATE_BYTES}),
                )
        };
        // Base64 grows the bytes by a third: refuse before encrypting what cannot be sent.
        if (json.len() + NONCE_BYTES + 16) / 3 * 4 + PREFIX.len() > MAX_STATE_BYTES {
            return Err(too_large());
        }
        let mut nonce = [0u8; NONCE_BYTES];
        nonce.copy_from_slice(&random_key()[..NONCE_BYTES]);
        let aad = bound_to(method, target, owner);
        let sealed = self
            .cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Sealed {
                    msg: &json,
                    aad: &aad,
                },
            )
            .map_err(|_| ErrorObject::internal("requestState: sealing failed"))?;
        let mut wire = Vec::with_capacity(NONCE_BYTES + sealed.len());
        wire.extend_from_slice(&nonce);
        wire.extend_from_slice(&sealed);
        let state = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(wire));
        if state.len() > MAX_STATE_BYTES {
            return Err(too_large());
        }
        Ok(state)
    }

    /// Opens a state this server sealed for `method` on `target` and the caller `owner`: the
    /// answers it carries.
    ///
    /// # Errors
    /// -32602 for a state that is too large, malformed, forged or edited, issued for another
    /// request or another caller, or expired.
    pub(crate) fn open(
        &self,
        state: &str,
        method: &str,
        target: &str,
        owner: &str,
    ) -> Result<BTreeMap<String, Value>, ErrorObject> {
        if state.len() > MAX_STATE_BYTES {
            return Err(bad_state("too large"));
        }
        let wire = state
            .strip_prefix(PREFIX)
            .and_then(|b| URL_SAFE_NO_PAD.decode(b).ok())
            .filter(|w| w.len() > NONCE_BYTES)
            .ok_or_else(|| bad_state("malformed"))?;
        let (nonce, sealed) = wire.split_at(NONCE_BYTES);
        // A state for another request, or another caller, fails like a forged one: its
        // associated data differs.
        let json = self
            .cipher
            .decrypt(
                XNonce::from_slice(nonce),
                Sealed {
                    msg: sealed,
                    aad: &bound_to(method, target, owner),
                },
            )
            .map_err(|_| {
                bad_state(
                    "failed verification (forged, edited, or issued for another request or caller)",
                )
            })?;
        let p: Payload = serde_json::from_slice(&json).map_err(|_| bad_state("malformed"))?;
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
        let key = random_key();
        let s = Sealer::new(Some(key), DEFAULT_STATE_TTL);
        let mut answers = BTreeMap::new();
        answers.insert("name".to_owned(), serde_json::json!({"action": "accept"}));
        let sealed = s
            .seal(methods::TOOLS_CALL, "greet", "alice", answers.clone())
            .unwrap();
        assert_eq!(
            s.open(&sealed, methods::TOOLS_CALL, "greet", "alice")
                .unwrap(),
            answers
        );
        let refused = |state: &str, m: &str, t: &str| s.open(state, m, t, "alice").unwrap_err();
        assert_eq!(
            refused(&format!("{sealed}-TAMPERED"), methods::TOOLS_CALL, "greet").code,
            ErrorCode::INVALID_PARAMS
        );
        let mut flipped = sealed.clone().into_bytes();
        flipped[10] ^= 1;
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
                .seal(methods::TOOLS_CALL, "greet", "alice", BTreeMap::new())
                .unwrap(),
            methods::TOOLS_CALL,
            "greet",
        );
        let expired = Sealer::new(Some(key), Duration::ZERO);
        let old = expired
            .seal(methods::TOOLS_CALL, "greet", "alice", BTreeMap::new())
            .unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(
            s.open(&old, methods::TOOLS_CALL, "greet", "alice").is_err(),
            "expired"
        );
    }

    /// Issue 25, finding 7: a state is bound to the caller it was issued to, and what it
    /// carries cannot be read from it.
    #[test]
    fn finding_7_a_state_is_bound_to_its_caller_and_its_answers_are_not_readable() {
        let s = Sealer::new(None, DEFAULT_STATE_TTL);
        let mut answers = BTreeMap::new();
        answers.insert(
            "secret".to_owned(),
            serde_json::json!({"action": "accept", "content": {"pin": "4711-UNIQUE"}}),
        );
        let sealed = s
            .seal(methods::TOOLS_CALL, "greet", "sub:alice", answers.clone())
            .unwrap();
        let err = s
            .open(&sealed, methods::TOOLS_CALL, "greet", "sub:mallory")
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
        assert!(
            s.open(&sealed, methods::TOOLS_CALL, "greet", "").is_err(),
            "nor by an unauthenticated caller"
        );
        assert_eq!(
            s.open(&sealed, methods::TOOLS_CALL, "greet", "sub:alice")
                .unwrap(),
            answers
        );
        let wire = URL_SAFE_NO_PAD
            .decode(sealed.strip_prefix(PREFIX).unwrap())
            .unwrap();
        assert!(
            !String::from_utf8_lossy(&wire).contains("4711-UNIQUE") && !sealed.contains("4711"),
            "the answers travel encrypted"
        );
        // Two replicas sharing the key open each other's states; a key of its own does not.
        let key = random_key();
        let (a, b) = (
            Sealer::new(Some(key), DEFAULT_STATE_TTL),
            Sealer::new(Some(key), DEFAULT_STATE_TTL),
        );
        let st = a
            .seal(methods::TOOLS_CALL, "t", "", BTreeMap::new())
            .unwrap();
        assert!(b.open(&st, methods::TOOLS_CALL, "t", "").is_ok());
        assert!(s.open(&st, methods::TOOLS_CALL, "t", "").is_err());
    }

    #[test]
    fn a_state_over_the_bound_is_neither_issued_nor_read() {
        let s = Sealer::new(None, DEFAULT_STATE_TTL);
        let mut answers = BTreeMap::new();
        answers.insert("big".to_owned(), Value::String("x".repeat(MAX_STATE_BYTES)));
        assert_eq!(
            s.seal(methods::TOOLS_CALL, "t", "", answers)
                .unwrap_err()
                .code,
            ErrorCode::INTERNAL_ERROR
        );
        assert!(
            s.open(
                &"a".repeat(MAX_STATE_BYTES + 1),
                methods::TOOLS_CALL,
                "t",
                ""
            )
            .is_err()
        );
    }
}
