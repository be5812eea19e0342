//! DPoP, the client's side (RFC 9449 as profiled for MCP by SEP-1932): a key pair per client
//! ([`DpopKey`], ES256), a proof per HTTP request ([`DpopKey::proof`]) and the nonces servers
//! hand out (`DPoP-Nonce`, RFC 9449 §8 and §9), kept per origin.
//!
//! A proof is a JWS with `typ` `dpop+jwt`, `alg` `ES256` and the public key as `jwk`; its claims
//! are a fresh random `jti`, `htm` (the method), `htu` (the URL without query and fragment),
//! `iat`, and, on requests to the resource server, `ath` (base64url of SHA-256 of the access
//! token) and, when the server asked for one, `nonce`. A proof is made for one request and never
//! sent twice.
//!
//! The private key never leaves this module: not in `Debug`, not in logs, not in errors. On disk
//! it is a small JSON document (the PKCS#8 key, base64url) written like the token file: mode
//! 0600, through a new unpredictably named file renamed over the old one.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use url::Url;

use super::error::OAuthError;
use super::pkce::random_token;

/// The proof's JWS algorithm.
pub const DPOP_ALG: &str = "ES256";
/// The most origins whose nonce is remembered; past it the oldest is forgotten (a server
/// whose nonce was forgotten asks again, costing one round trip).
pub(crate) const MAX_NONCE_ORIGINS: usize = 32;
/// The longest nonce kept (a longer one is ignored: the request then fails as without it).
pub(crate) const MAX_NONCE_BYTES: usize = 1024;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

pub(crate) use crate::dpop::access_token_hash;

/// The URL as `htu`: without query and fragment (RFC 9449 §4.2).
pub(crate) fn htu_of(url: &Url) -> String {
    let mut u = url.clone();
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

/// An ES256 key pair for DPoP proofs.
pub struct DpopKey {
    pair: EcdsaKeyPair,
    pkcs8: Vec<u8>,
    x: String,
    y: String,
    thumbprint: String,
}

impl std::fmt::Debug for DpopKey {
    /// Shows the public key's thumbprint only.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey")
            .field("alg", &DPOP_ALG)
            .field("jkt", &self.thumbprint)
            .finish_non_exhaustive()
    }
}

/// The key file's contents.
#[derive(Serialize, Deserialize)]
struct KeyFile {
    alg: String,
    pkcs8: String,
}

impl DpopKey {
    /// A new key pair from the system's random source.
    ///
    /// # Errors
    /// The random source or the key generation failed.
    pub fn generate() -> Result<Self, OAuthError> {
        let doc =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .map_err(|_| OAuthError::Config("cannot generate a DPoP key pair".into()))?;
        Self::from_pkcs8(doc.as_ref())
    }

    /// The key pair of a PKCS#8 (DER) P-256 private key.
    ///
    /// # Errors
    /// The bytes are not a P-256 PKCS#8 key.
    pub fn from_pkcs8(der: &[u8]) -> Result<Self, OAuthError> {
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der)
            .map_err(|_| OAuthError::Config("the DPoP key is not a P-256 PKCS#8 key".into()))?;
        let point = pair.public_key().as_ref();
        if point.len() != 65 || point[0] != 4 {
            return Err(OAuthError::Config(
                "the DPoP public key is not an uncompressed P-256 point".into(),
            ));
        }
        let x = b64(&point[1..33]);
        let y = b64(&point[33..65]);
        let thumbprint = crate::dpop::ec_thumbprint("P-256", &x, &y);
        Ok(Self {
            pair,
            pkcs8: der.to_vec(),
            x,
            y,
            thumbprint,
        })
    }

    /// The key kept at `path`, or a new one written there (mode 0600, its directory 0700) when
    /// there is none yet.
    ///
    /// # Errors
    /// The file cannot be read or written, or holds no usable key.
    pub fn load_or_create(path: &Path) -> Result<Self, OAuthError> {
        match std::fs::read(path) {
            Ok(bytes) => {
                let file: KeyFile = serde_json::from_slice(&bytes).map_err(|_| {
                    OAuthError::Store(format!(
                        "{} is not a DPoP key file; move it away to start afresh",
                        path.display()
                    ))
                })?;
                if file.alg != DPOP_ALG {
                    return Err(OAuthError::Store(format!(
                        "{} holds a {} key; only {DPOP_ALG} is supported",
                        path.display(),
                        super::error::shorten(&file.alg)
                    )));
                }
                let der = base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .decode(file.pkcs8.as_bytes())
                    .map_err(|_| {
                        OAuthError::Store(format!("{} holds no readable key", path.display()))
                    })?;
                Self::from_pkcs8(&der)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let key = Self::generate()?;
                let file = KeyFile {
                    alg: DPOP_ALG.to_owned(),
                    pkcs8: b64(&key.pkcs8),
                };
                let text = serde_json::to_vec(&file)
                    .map_err(|e| OAuthError::Store(format!("cannot encode the key: {e}")))?;
                super::store::write_private(path, &text, 0o600)?;
                Ok(key)
            }
            Err(e) => Err(OAuthError::Store(format!(
                "cannot read {}: {e}",
                path.display()
            ))),
        }
    }

    /// The JWK SHA-256 thumbprint of the public key (RFC 7638), the `cnf.jkt` of bound tokens.
    pub fn thumbprint(&self) -> &str {
        &self.thumbprint
    }

    /// The public key as a JWK.
    pub fn public_jwk(&self) -> serde_json::Value {
        serde_json::json!({ "kty": "EC", "crv": "P-256", "x": self.x, "y": self.y })
    }

    /// A proof for one request: `htm` `method`, `htu` `url` without query and fragment, `iat`
    /// now, a random `jti`; `ath` when `access_token` is given; `nonce` when given.
    ///
    /// # Errors
    /// The random source or the signature failed.
    pub fn proof(
        &self,
        method: &str,
        url: &Url,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, OAuthError> {
        self.proof_at(method, url, access_token, nonce, super::now_secs())
    }

    pub(crate) fn proof_at(
        &self,
        method: &str,
        url: &Url,
        access_token: Option<&str>,
        nonce: Option<&str>,
        iat: u64,
    ) -> Result<String, OAuthError> {
        let header = serde_json::json!({
            "typ": "dpop+jwt",
            "alg": DPOP_ALG,
            "jwk": self.public_jwk(),
        });
        let mut claims = serde_json::json!({
            "jti": random_token(18)?,
            "htm": method,
            "htu": htu_of(url),
            "iat": iat,
        });
        if let Some(t) = access_token {
            claims["ath"] = access_token_hash(t).into();
        }
        if let Some(n) = nonce {
            claims["nonce"] = n.into();
        }
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let sig = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .map_err(|_| OAuthError::Config("cannot sign the DPoP proof".into()))?;
        Ok(format!("{input}.{}", b64(sig.as_ref())))
    }
}

/// Origin → (nonce, the counter when it was stored).
type NonceMap = HashMap<String, (String, u64)>;

/// A client's DPoP state: its key and the nonces servers gave it, by origin.
#[derive(Debug)]
pub struct DpopSigner {
    key: std::sync::Arc<DpopKey>,
    /// Origin → (nonce, when it was stored: a counter).
    nonces: Mutex<(u64, NonceMap)>,
}

impl DpopSigner {
    /// The signer of `key`.
    pub fn new(key: std::sync::Arc<DpopKey>) -> Self {
        Self {
            key,
            nonces: Mutex::new((0, HashMap::new())),
        }
    }

    /// The key.
    pub fn key(&self) -> &DpopKey {
        &self.key
    }

    /// Remembers the nonce `url`'s server sent (`DPoP-Nonce`). Nonces over
    /// 1 KiB or not visible ASCII are ignored.
    pub fn set_nonce(&self, url: &Url, nonce: &str) {
        if nonce.is_empty()
            || nonce.len() > MAX_NONCE_BYTES
            || !nonce.bytes().all(|b| (0x21..0x7f).contains(&b))
        {
            return;
        }
        let origin = url.origin().ascii_serialization();
        let mut g = super::lock(&self.nonces);
        let (counter, map) = &mut *g;
        *counter += 1;
        let stamp = *counter;
        if !map.contains_key(&origin)
            && map.len() >= MAX_NONCE_ORIGINS
            && let Some(oldest) = map
                .iter()
                .min_by_key(|(_, (_, s))| *s)
                .map(|(k, _)| k.clone())
        {
            map.remove(&oldest);
        }
        map.insert(origin, (nonce.to_owned(), stamp));
    }

    /// The nonce for `url`'s origin, if one was given.
    pub fn nonce(&self, url: &Url) -> Option<String> {
        let origin = url.origin().ascii_serialization();
        super::lock(&self.nonces)
            .1
            .get(&origin)
            .map(|(n, _)| n.clone())
    }

    /// How many origins' nonces are kept.
    pub fn nonce_origins(&self) -> usize {
        super::lock(&self.nonces).1.len()
    }

    /// A proof for `method url`, with the origin's nonce when one is known.
    ///
    /// # Errors
    /// As [`DpopKey::proof`].
    pub fn proof(
        &self,
        method: &str,
        url: &Url,
        access_token: Option<&str>,
    ) -> Result<String, OAuthError> {
        let nonce = self.nonce(url);
        self.key.proof(method, url, access_token, nonce.as_deref())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn part(jws: &str, i: usize) -> serde_json::Value {
        let p = jws.split('.').nth(i).unwrap();
        serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p)
                .unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn dpop_proof_carries_the_rfc_9449_claims_and_verifies() {
        let key = DpopKey::generate().unwrap();
        let url = Url::parse("https://mcp.example/mcp?x=1#frag").unwrap();
        let p = key.proof("POST", &url, Some("tok"), Some("n-1")).unwrap();
        let h = part(&p, 0);
        assert_eq!(h["typ"], "dpop+jwt");
        assert_eq!(h["alg"], "ES256");
        assert!(h["jwk"].get("d").is_none(), "no private part in the header");
        let c = part(&p, 1);
        assert_eq!(c["htm"], "POST");
        assert_eq!(c["htu"], "https://mcp.example/mcp");
        assert_eq!(c["ath"], access_token_hash("tok"));
        assert_eq!(c["nonce"], "n-1");
        assert!(c["iat"].as_u64().unwrap() > 1_700_000_000);
        // The resource server's checker accepts it (the two sides agree).
        let checked = crate::dpop::verify_signature(&p).unwrap();
        assert_eq!(checked.jkt, key.thumbprint());
        let q = key.proof("POST", &url, Some("tok"), None).unwrap();
        assert_ne!(part(&q, 1)["jti"], c["jti"], "a fresh jti per proof");
        assert!(part(&q, 1).get("nonce").is_none());
        assert!(!format!("{key:?}").contains(&b64(&key.pkcs8)));
    }

    #[test]
    fn dpop_key_file_is_0600_and_round_trips() {
        let dir = std::env::temp_dir().join(format!("sb-dpop-{}", random_token(6).unwrap()));
        let path = dir.join("dpop-key.json");
        let a = DpopKey::load_or_create(&path).unwrap();
        let b = DpopKey::load_or_create(&path).unwrap();
        assert_eq!(a.thumbprint(), b.thumbprint());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        std::fs::write(&path, b"{}").unwrap();
        assert!(DpopKey::load_or_create(&path).is_err());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn dpop_nonces_are_kept_per_origin_and_bounded() {
        let s = DpopSigner::new(std::sync::Arc::new(DpopKey::generate().unwrap()));
        let a = Url::parse("https://as.example/token").unwrap();
        let r = Url::parse("https://rs.example/mcp").unwrap();
        s.set_nonce(&a, "as-nonce");
        s.set_nonce(&r, "rs-nonce");
        assert_eq!(s.nonce(&a).as_deref(), Some("as-nonce"));
        assert_eq!(s.nonce(&r).as_deref(), Some("rs-nonce"));
        s.set_nonce(&r, &"x".repeat(MAX_NONCE_BYTES + 1));
        s.set_nonce(&r, "bad nonce");
        assert_eq!(s.nonce(&r).as_deref(), Some("rs-nonce"));
        for i in 0..(MAX_NONCE_ORIGINS + 5) {
            let u = Url::parse(&format!("https://h{i}.example/")).unwrap();
            s.set_nonce(&u, "n");
        }
        assert_eq!(s.nonce_origins(), MAX_NONCE_ORIGINS);
        assert_eq!(s.nonce(&a), None, "the oldest origin was forgotten");
    }
}
