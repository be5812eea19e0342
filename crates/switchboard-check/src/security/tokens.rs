//! Tokens for the authorization probes: minted with the private key of an issuer the server
//! trusts (`--issuer-key PEM --issuer URL [--kid KID]`, for testing one's own deployment), and the
//! hostile ones anybody can make (garbage, `alg: none`, HS256 keyed with the public key).

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

/// Mints access tokens (RFC 9068 `at+jwt`) of one issuer.
pub(crate) struct Minter {
    issuer: String,
    kid: Option<String>,
    alg: Algorithm,
    key: EncodingKey,
    /// The public key as a JWK (what an attacker reads from the JWKS).
    jwk: Value,
}

impl std::fmt::Debug for Minter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Minter")
            .field("issuer", &self.issuer)
            .field("kid", &self.kid)
            .field("alg", &self.alg)
            .finish_non_exhaustive()
    }
}

/// The client id minted tokens carry.
pub(crate) const CLIENT_ID: &str = "switchboard-check-client";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

impl Minter {
    /// A minter from a PEM private key (EC P-256 → ES256, RSA → RS256, Ed25519 → EdDSA).
    ///
    /// # Errors
    /// The PEM is none of those.
    pub(crate) fn new(pem: &str, issuer: &str, kid: Option<&str>) -> Result<Minter, String> {
        let bytes = pem.as_bytes();
        let (key, alg) = if let Ok(k) = EncodingKey::from_ec_pem(bytes) {
            (k, Algorithm::ES256)
        } else if let Ok(k) = EncodingKey::from_rsa_pem(bytes) {
            (k, Algorithm::RS256)
        } else if let Ok(k) = EncodingKey::from_ed_pem(bytes) {
            (k, Algorithm::EdDSA)
        } else {
            return Err("the issuer key is not an EC, RSA or Ed25519 private key in PEM".into());
        };
        let jwk = Jwk::from_encoding_key(&key, alg)
            .ok()
            .and_then(|mut j| {
                j.common.key_id = kid.map(str::to_owned);
                serde_json::to_value(&j).ok()
            })
            .unwrap_or(Value::Null);
        Ok(Minter {
            issuer: issuer.to_owned(),
            kid: kid.map(str::to_owned),
            alg,
            key,
            jwk,
        })
    }

    /// The claims of a good token for `sub` at `audience` with `scope`, five minutes long.
    pub(crate) fn claims(&self, sub: &str, audience: &str, scope: &str) -> Value {
        let now = now();
        json!({
            "iss": self.issuer,
            "sub": sub,
            "aud": audience,
            "client_id": CLIENT_ID,
            "scope": scope,
            "iat": now,
            "exp": now + 300,
            "jti": format!("switchboard-check-{sub}-{now}-{}", fastrand_ish()),
        })
    }

    /// A good token for `sub` at `audience` with `scope`.
    pub(crate) fn valid(&self, sub: &str, audience: &str, scope: &str) -> String {
        self.sign(&self.claims(sub, audience, scope))
    }

    /// A token with these claims, signed.
    pub(crate) fn sign(&self, claims: &Value) -> String {
        let mut h = Header::new(self.alg);
        h.typ = Some("at+jwt".into());
        h.kid.clone_from(&self.kid);
        jsonwebtoken::encode(&h, claims, &self.key).unwrap_or_default()
    }

    /// The issuer the tokens name.
    pub(crate) fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The public key as a JWK.
    pub(crate) fn jwk(&self) -> &Value {
        &self.jwk
    }
}

/// A token that is not a JWT at all.
pub(crate) const GARBAGE: &str = "switchboard-check.not-a.jwt";

/// An unsigned token (`alg: none`) with `claims`.
pub(crate) fn unsigned(claims: &Value) -> String {
    let h = json!({"alg": "none", "typ": "at+jwt"});
    format!("{}.{}.", b64(&h), b64(claims))
}

/// A token "signed" with HS256 keyed with the text of the public JWK `jwk`: what an attacker
/// who read the JWKS can make (the algorithm-confusion attack).
pub(crate) fn hmac_with_public_key(jwk: &Value, claims: &Value) -> String {
    let mut h = Header::new(Algorithm::HS256);
    h.typ = Some("at+jwt".into());
    h.kid = jwk.get("kid").and_then(Value::as_str).map(str::to_owned);
    let secret = jwk.to_string();
    jsonwebtoken::encode(&h, claims, &EncodingKey::from_secret(secret.as_bytes()))
        .unwrap_or_default()
}

fn b64(v: &Value) -> String {
    URL_SAFE_NO_PAD.encode(v.to_string())
}

/// A few bits that differ from call to call (token ids only; nothing secret).
fn fastrand_ish() -> u32 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default()
}
