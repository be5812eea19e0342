//! DPoP (RFC 9449) pieces both sides share: the JWK thumbprint (RFC 7638) and the check of a
//! proof's form and signature ([`verify_signature`]). What a resource server checks beyond
//! that (method, URL, time, `ath`, `cnf.jkt`, replay) is `resource::dpop`.

use aws_lc_rs::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use base64::Engine as _;
use serde_json::{Map, Value};

/// The most bytes of a proof that are read; a longer `DPoP` header is refused unread.
pub(crate) const MAX_PROOF_BYTES: usize = 8 * 1024;

/// The signature algorithms a proof may use: asymmetric only. `none` and the HMAC family
/// (`HS256` ...) are never accepted (RFC 9449 §4.3, step 5).
pub(crate) const PROOF_ALGORITHMS: &[&str] = &["ES256", "ES384", "EdDSA", "RS256", "PS256"];

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn unb64(s: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s.as_bytes())
        .ok()
}

/// Text from a peer for messages: printable ASCII, at most 40 characters.
pub(crate) fn shown(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(40)
        .collect()
}

fn sha256_b64(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    b64(&sha2::Sha256::digest(bytes))
}

/// `base64url(SHA-256(access_token))`, a proof's `ath` claim (RFC 9449 §4.2).
pub(crate) fn access_token_hash(access_token: &str) -> String {
    sha256_b64(access_token.as_bytes())
}

/// The RFC 7638 thumbprint of an EC public key.
pub(crate) fn ec_thumbprint(crv: &str, x: &str, y: &str) -> String {
    // Members in lexicographic order, no whitespace (RFC 7638 §3.2).
    let canonical = format!(r#"{{"crv":"{crv}","kty":"EC","x":"{x}","y":"{y}"}}"#);
    sha256_b64(canonical.as_bytes())
}

/// Why a proof's form or signature is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProofError(pub String);

fn bad(why: impl Into<String>) -> ProofError {
    ProofError(why.into())
}

/// A proof whose form and signature were checked: its header, its claims and the thumbprint
/// of the key that signed it.
#[derive(Debug, Clone)]
pub struct CheckedProof {
    /// The JOSE header.
    pub header: Map<String, Value>,
    /// The claims.
    pub claims: Map<String, Value>,
    /// The RFC 7638 SHA-256 thumbprint of the header's `jwk`.
    pub jkt: String,
}

/// Checks a proof's form (`typ` `dpop+jwt`, an allowed `alg`, a public `jwk` with no private
/// member) and its signature by that key. Claims are not judged here.
///
/// # Errors
/// The first thing wrong with it.
pub fn verify_signature(proof: &str) -> Result<CheckedProof, ProofError> {
    if proof.len() > MAX_PROOF_BYTES {
        return Err(bad(format!("the proof is over {MAX_PROOF_BYTES} bytes")));
    }
    let mut parts = proof.split('.');
    let (Some(h), Some(c), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad("the proof is not a compact JWS"));
    };
    let header: Map<String, Value> = unb64(h)
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| bad("the proof's header is not base64url JSON"))?;
    let claims: Map<String, Value> = unb64(c)
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| bad("the proof's claims are not base64url JSON"))?;
    let sig = unb64(s).ok_or_else(|| bad("the proof's signature is not base64url"))?;
    if header.get("typ").and_then(Value::as_str) != Some("dpop+jwt") {
        return Err(bad("typ is not dpop+jwt"));
    }
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("no alg"))?;
    if !PROOF_ALGORITHMS.contains(&alg) {
        return Err(bad(format!(
            "alg {} is not allowed (asymmetric only: {})",
            shown(alg),
            PROOF_ALGORITHMS.join(", ")
        )));
    }
    let jwk = header
        .get("jwk")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("no jwk in the header"))?;
    for private in ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] {
        if jwk.contains_key(private) {
            return Err(bad("the jwk holds a private or symmetric key"));
        }
    }
    let field = |n: &str| jwk.get(n).and_then(Value::as_str);
    let input = &proof[..h.len() + 1 + c.len()];
    let kty = field("kty").unwrap_or("");
    let (jkt, verified) = match (alg, kty) {
        ("ES256" | "ES384", "EC") => {
            let (crv, len, algo): (&str, usize, &'static dyn signature::VerificationAlgorithm) =
                if alg == "ES256" {
                    ("P-256", 32, &signature::ECDSA_P256_SHA256_FIXED)
                } else {
                    ("P-384", 48, &signature::ECDSA_P384_SHA384_FIXED)
                };
            let (Some(x), Some(y)) = (field("x"), field("y")) else {
                return Err(bad("the EC jwk lacks x or y"));
            };
            if field("crv") != Some(crv) {
                return Err(bad(format!("{alg} needs curve {crv}")));
            }
            let (xb, yb) = (unb64(x).unwrap_or_default(), unb64(y).unwrap_or_default());
            if xb.len() != len || yb.len() != len {
                return Err(bad("the EC jwk's coordinates have the wrong length"));
            }
            let mut point = Vec::with_capacity(1 + 2 * len);
            point.push(4);
            point.extend_from_slice(&xb);
            point.extend_from_slice(&yb);
            let ok = UnparsedPublicKey::new(algo, &point)
                .verify(input.as_bytes(), &sig)
                .is_ok();
            (ec_thumbprint(crv, x, y), ok)
        }
        ("EdDSA", "OKP") => {
            let Some(x) = field("x").filter(|_| field("crv") == Some("Ed25519")) else {
                return Err(bad("EdDSA needs an Ed25519 jwk with x"));
            };
            let xb = unb64(x).unwrap_or_default();
            let ok = UnparsedPublicKey::new(&signature::ED25519, &xb)
                .verify(input.as_bytes(), &sig)
                .is_ok();
            let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
            (sha256_b64(canonical.as_bytes()), ok)
        }
        ("RS256" | "PS256", "RSA") => {
            let (Some(n), Some(e)) = (field("n"), field("e")) else {
                return Err(bad("the RSA jwk lacks n or e"));
            };
            let (nb, eb) = (unb64(n).unwrap_or_default(), unb64(e).unwrap_or_default());
            let params: &'static signature::RsaParameters = if alg == "RS256" {
                &signature::RSA_PKCS1_2048_8192_SHA256
            } else {
                &signature::RSA_PSS_2048_8192_SHA256
            };
            let ok = RsaPublicKeyComponents { n: &nb, e: &eb }
                .verify(params, input.as_bytes(), &sig)
                .is_ok();
            let canonical = format!(r#"{{"e":"{e}","kty":"RSA","n":"{n}"}}"#);
            (sha256_b64(canonical.as_bytes()), ok)
        }
        _ => return Err(bad(format!("the jwk's kty does not fit alg {alg}"))),
    };
    if !verified {
        return Err(bad("the proof's signature does not verify with its jwk"));
    }
    Ok(CheckedProof {
        header,
        claims,
        jkt,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn rfc_7638_example_thumbprint_shape() {
        // RFC 7638 §3.1 gives an RSA example: its thumbprint is
        // NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs.
        let n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw";
        let canonical = format!(r#"{{"e":"AQAB","kty":"RSA","n":"{n}"}}"#);
        assert_eq!(
            sha256_b64(canonical.as_bytes()),
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
    }

    #[test]
    fn an_oversized_or_malformed_proof_is_refused_unread() {
        let big = "a".repeat(MAX_PROOF_BYTES + 1);
        assert!(verify_signature(&big).unwrap_err().0.contains("over"));
        assert!(verify_signature("a.b").is_err());
        assert!(verify_signature("a.b.c.d").is_err());
    }
}
