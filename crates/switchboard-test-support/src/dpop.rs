//! DPoP proofs made by hand (RFC 9449), for the tests of the resource server's checks: an ES256
//! key, its public JWK and RFC 7638 thumbprint, and proofs signed with it whose every part a
//! test may forge.

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use base64::Engine as _;
use serde_json::{Value, json};
use sha2::Digest as _;

/// Base64url without padding, as JOSE writes it.
pub fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The `ath` claim for `token`: its SHA-256, base64url.
pub fn ath(token: &str) -> String {
    b64url(&sha2::Sha256::digest(token.as_bytes()))
}

/// A fresh random `jti`.
pub fn random_jti() -> String {
    let mut b = [0_u8; 16];
    aws_lc_rs::rand::fill(&mut b).expect("the system's random source");
    b64url(&b)
}

/// A client's DPoP key: ES256 on P-256.
pub struct DpopTestKey {
    pair: EcdsaKeyPair,
    /// The public key as a JWK (`kty`, `crv`, `x`, `y`).
    pub jwk: Value,
    /// Its RFC 7638 thumbprint: what a bound token's `cnf.jkt` names.
    pub jkt: String,
}

impl std::fmt::Debug for DpopTestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopTestKey")
            .field("jkt", &self.jkt)
            .finish_non_exhaustive()
    }
}

impl Default for DpopTestKey {
    fn default() -> Self {
        Self::new()
    }
}

impl DpopTestKey {
    /// A new key.
    ///
    /// # Panics
    /// When the system's random source fails.
    pub fn new() -> Self {
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .expect("an ES256 key");
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, doc.as_ref())
            .expect("the key just made");
        let pt = pair.public_key().as_ref();
        let (x, y) = (b64url(&pt[1..33]), b64url(&pt[33..65]));
        let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
        Self {
            pair,
            jwk: json!({"kty": "EC", "crv": "P-256", "x": x, "y": y}),
            jkt: b64url(&sha2::Sha256::digest(canonical.as_bytes())),
        }
    }

    /// The token the tests' validators take as bound to this key: `bound.<jkt>`.
    pub fn bound_token(&self) -> String {
        format!("bound.{}", self.jkt)
    }

    /// A proof's header: `typ` `dpop+jwt`, `alg` `ES256`, this key's JWK.
    pub fn header(&self) -> Value {
        json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk})
    }

    /// Good claims for `method url` with `token`'s hash: a fresh `jti`, `iat` now.
    pub fn claims(&self, method: &str, url: &str, token: &str) -> Value {
        json!({"jti": random_jti(), "htm": method, "htu": url, "iat": crate::issuer::now(),
            "ath": ath(token)})
    }

    /// `header.claims` signed with this key (ES256, the JWS compact form).
    ///
    /// # Panics
    /// When signing fails.
    pub fn sign(&self, header: &Value, claims: &Value) -> String {
        let input = format!(
            "{}.{}",
            b64url(header.to_string().as_bytes()),
            b64url(claims.to_string().as_bytes())
        );
        let sig = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .expect("an ES256 signature");
        format!("{input}.{}", b64url(sig.as_ref()))
    }

    /// A good proof for `method url` carrying `token`'s hash.
    pub fn proof(&self, method: &str, url: &str, token: &str) -> String {
        self.sign(&self.header(), &self.claims(method, url, token))
    }
}
