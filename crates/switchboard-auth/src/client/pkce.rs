//! PKCE (RFC 7636) with `S256` `[AU-13]`, and the random values of an authorization request.

use base64::Engine as _;
use sha2::Digest as _;

use super::error::OAuthError;

/// A PKCE pair: the verifier kept by the client, the challenge sent in the authorization request.
#[derive(Clone)]
pub(super) struct Pkce {
    /// The verifier: 43 characters of base64url (32 random bytes), sent on the token request.
    pub verifier: String,
    /// `BASE64URL(SHA256(verifier))`.
    pub challenge: String,
}

impl std::fmt::Debug for Pkce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pkce")
            .field("challenge", &self.challenge)
            .finish_non_exhaustive()
    }
}

impl Pkce {
    /// A fresh pair.
    ///
    /// # Errors
    /// The system's random source failed.
    pub(super) fn new() -> Result<Self, OAuthError> {
        let verifier = random_token(32)?;
        let challenge = challenge_of(&verifier);
        Ok(Self {
            verifier,
            challenge,
        })
    }
}

/// The `S256` challenge of a verifier.
pub(super) fn challenge_of(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier))
}

/// `bytes` random bytes as base64url without padding (for `state`, verifiers, `jti`).
///
/// # Errors
/// The system's random source failed.
pub(super) fn random_token(bytes: usize) -> Result<String, OAuthError> {
    let mut buf = vec![0_u8; bytes];
    getrandom::fill(&mut buf)
        .map_err(|e| OAuthError::Config(format!("the system's random source failed: {e}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn au13_s256_is_base64url_of_sha256() {
        // Computed independently: `printf %s VERIFIER | openssl dgst -sha256 -binary | base64`
        // with the URL-safe alphabet and no padding.
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mJ0K2Ghm3LV5qE6lQgvBX3PxuIfbQw"),
            "1k3D2fYF0exc7LRT0IHpLiSeXC7_eQdQ96RkRCmpuqw"
        );
        let p = Pkce::new().unwrap();
        assert_eq!(p.verifier.len(), 43);
        assert_eq!(challenge_of(&p.verifier), p.challenge);
        assert_ne!(Pkce::new().unwrap().verifier, p.verifier);
    }
}
