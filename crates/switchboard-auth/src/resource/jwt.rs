//! JWT access tokens (RFC 9068) checked against the issuer's JWKS.
//!
//! The keys are found through the issuer's metadata (RFC 8414, then OpenID discovery, in the
//! order of [`crate::metadata::authorization_server_metadata_urls`]) unless a JWKS URL is
//! configured, kept in memory, and fetched again when a token names a key the cache does not
//! hold (at most once per [`JwtValidatorConfig::min_refresh_interval`], one fetch at a time) or
//! when they are older than [`JwtValidatorConfig::max_key_age`]. Every fetch is bounded in time
//! and bytes, and the key set in count. No fetch holds up a token whose key is already cached:
//! the cache is read under a short lock that is never held across a fetch, and only tokens that
//! need the fetch's answer (an unknown `kid`, or no keys yet) wait for it. So a flood of tokens
//! naming random key ids, or an issuer whose JWKS endpoint hangs, cannot stall valid requests.
//!
//! A token is accepted only if all of these hold:
//! - it is a compact JWS whose header `alg` is on the allow-list (asymmetric only: never
//!   `none`, never HMAC, so a token "signed" with the public key as an HMAC secret fails), and
//!   whose `typ` is `at+jwt` or `application/at+jwt` (so ID tokens and other JWTs fail);
//! - its signature verifies with the issuer's key named by `kid` (or the one key of that type
//!   when the token names none), and the key's own `alg` and `use`, if any, agree;
//! - `iss` is the configured issuer (a string: an array naming it among others is refused),
//!   `aud` is (or, as an array, contains) our canonical
//!   resource URI `[AU-21]`, `exp` is present and not past, `nbf` (if any) is not in the
//!   future, both with a small leeway, and the token names a subject: `sub`, or for a token
//!   without one the client it was issued to (`client_id`, else `azp`; see
//!   [`super::subject_of`]).
//!
//! A token that passed is remembered (at most [`JwtValidatorConfig::max_verified_tokens`], by
//! count and by bytes, the oldest forgotten first), so that a client sending the same token with
//! every request pays for its signature once: the token is taken again, without a new check of
//! its signature or claims, while it has not expired (the same leeway), the issuer's keys have
//! not been fetched again since (a fetch may have dropped the key that signed it) and are not
//! old enough to be fetched again. Each request's token is still validated before the request
//! is processed (`[AU-20]`): the signature of that exact text was verified, and the checks that
//! can change with time (`exp`, the keys) are made again.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex as SyncMutex, PoisonError};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use tokio::sync::Mutex;
use url::Url;

use super::fetch::{self, FetchError};
use super::{
    AuthInfo, TokenError, TokenValidator, ValidateFuture, audiences_of, client_of, scopes_of,
    subject_of,
};
use crate::metadata::authorization_server_metadata_urls;

/// The signature algorithms accepted by default: every asymmetric one RFC 9068 issuers use.
pub const DEFAULT_ALGORITHMS: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The longest token looked at; longer ones are refused unread.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// How a [`JwtValidator`] checks tokens and fetches keys.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct JwtValidatorConfig {
    /// The issuer (the authorization server's identifier); tokens must name it in `iss`, and its
    /// metadata must name it in `issuer`.
    pub issuer: String,
    /// Our canonical resource URI; tokens must name it in `aud`.
    pub audience: String,
    /// The JWKS URL; `None` (the default) finds it in the issuer's metadata.
    pub jwks_uri: Option<String>,
    /// The signature algorithms accepted ([`DEFAULT_ALGORITHMS`]); HMAC is always refused.
    pub algorithms: Vec<Algorithm>,
    /// Clock skew allowed on `exp` and `nbf` (default 30 s).
    pub leeway: Duration,
    /// Deadline of one fetch, connection included (default 5 s).
    pub fetch_timeout: Duration,
    /// The largest metadata or JWKS document read (default 64 KiB).
    pub max_document_bytes: usize,
    /// The most keys kept from a JWKS (default 32); the rest are ignored.
    pub max_keys: usize,
    /// The shortest time between two fetches of the JWKS caused by unknown `kid`s (default
    /// 10 s), so that tokens naming random keys cannot make us hammer the issuer.
    pub min_refresh_interval: Duration,
    /// Keys older than this are fetched again before use (default 1 hour); if that fetch fails
    /// the old keys stay in use.
    pub max_key_age: Duration,
    /// The longest lifetime a token may claim (default 24 hours): `exp` minus `iat`, or, for a
    /// token without `iat`, `exp` minus now. A longer-lived token is refused, so that a stolen
    /// one is not good for months because its issuer was generous.
    pub max_token_lifetime: Duration,
    /// The most tokens remembered as verified (default 4,096; 0 checks every token afresh).
    pub max_verified_tokens: usize,
    /// The most bytes the remembered tokens take, counted as three times each token's length
    /// (the token, its claims, what was read from them) plus 256 (default 8 MiB).
    pub max_verified_bytes: usize,
}

impl JwtValidatorConfig {
    /// A configuration for tokens of `issuer` meant for `audience` (our canonical resource
    /// URI), with the defaults above.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        JwtValidatorConfig {
            issuer: issuer.into(),
            audience: audience.into(),
            jwks_uri: None,
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: Duration::from_secs(30),
            fetch_timeout: Duration::from_secs(5),
            max_document_bytes: 64 * 1024,
            max_keys: 32,
            min_refresh_interval: Duration::from_secs(10),
            max_key_age: Duration::from_secs(3600),
            max_token_lifetime: Duration::from_secs(24 * 3600),
            max_verified_tokens: 4096,
            max_verified_bytes: 8 << 20,
        }
    }

    /// Uses `uri` as the JWKS URL instead of discovering it.
    pub fn with_jwks_uri(mut self, uri: impl Into<String>) -> Self {
        self.jwks_uri = Some(uri.into());
        self
    }

    /// Sets the clock-skew leeway.
    pub fn with_leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Sets the accepted algorithms (HMAC ones are dropped).
    pub fn with_algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algorithms.into_iter().filter(|a| !is_hmac(*a)).collect();
        self
    }

    /// Sets the fetch deadline.
    pub fn with_fetch_timeout(mut self, timeout: Duration) -> Self {
        self.fetch_timeout = timeout;
        self
    }

    /// Sets the largest document read.
    pub fn with_max_document_bytes(mut self, bytes: usize) -> Self {
        self.max_document_bytes = bytes;
        self
    }

    /// Sets the shortest time between two key refreshes caused by unknown `kid`s.
    pub fn with_min_refresh_interval(mut self, interval: Duration) -> Self {
        self.min_refresh_interval = interval;
        self
    }

    /// Sets the longest lifetime a token may claim.
    pub fn with_max_token_lifetime(mut self, lifetime: Duration) -> Self {
        self.max_token_lifetime = lifetime;
        self
    }
}

/// Seconds since the Unix epoch.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn is_hmac(a: Algorithm) -> bool {
    matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
}

/// One usable key of the issuer's JWKS.
struct Key {
    kid: Option<String>,
    alg: Option<String>,
    family: jsonwebtoken::AlgorithmFamily,
    key: DecodingKey,
}

#[derive(Default)]
struct Cache {
    jwks_uri: Option<Url>,
    keys: Arc<Vec<Key>>,
    fetched_at: Option<Instant>,
    last_attempt: Option<Instant>,
    /// Counts the fetches that stored keys: a token verified under an older set is checked again.
    generation: u64,
}

/// Tokens that passed lately (see the module docs), oldest first in `order`.
#[derive(Default)]
struct Verified {
    map: HashMap<Arc<str>, Remembered>,
    order: VecDeque<Arc<str>>,
    bytes: usize,
}

/// What a token that passed gave, under which key set, and what it counts for the bound.
struct Remembered {
    info: AuthInfo,
    generation: u64,
    bytes: usize,
}

impl Verified {
    /// The info of `token` if it passed under key set `generation` and has not expired by `now`
    /// (seconds since the epoch) with `leeway`; an expired or outdated entry is forgotten.
    fn get(&mut self, token: &str, generation: u64, now: u64, leeway: u64) -> Option<AuthInfo> {
        let r = self.map.get(token)?;
        let live = r.generation == generation
            && r.info
                .expires_at
                .is_some_and(|exp| now < exp.saturating_add(leeway));
        if live {
            return Some(r.info.clone());
        }
        if let Some(r) = self.map.remove(token) {
            self.bytes -= r.bytes;
            self.order.retain(|t| &**t != token);
        }
        None
    }

    /// Remembers `token`, forgetting the oldest past `max` entries or `max_bytes`.
    fn put(&mut self, token: &str, info: &AuthInfo, generation: u64, max: usize, max_bytes: usize) {
        let bytes = token.len().saturating_mul(3).saturating_add(256);
        let unbounded = info.expires_at.is_none();
        if max == 0 || bytes > max_bytes || unbounded || self.map.contains_key(token) {
            return;
        }
        while self.map.len() >= max || self.bytes + bytes > max_bytes {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some(r) = self.map.remove(&old) {
                self.bytes -= r.bytes;
            }
        }
        let key: Arc<str> = Arc::from(token);
        self.order.push_back(key.clone());
        self.bytes += bytes;
        let info = info.clone();
        self.map.insert(
            key,
            Remembered {
                info,
                generation,
                bytes,
            },
        );
    }
}

/// Validates RFC 9068 JWT access tokens against the issuer's JWKS (see the module docs).
pub struct JwtValidator {
    config: JwtValidatorConfig,
    client: reqwest::Client,
    /// What is known, read and written under a short lock never held across an await.
    cache: SyncMutex<Cache>,
    /// Held while fetching, so that one fetch runs at a time; only callers that need its
    /// answer wait on it.
    fetching: Mutex<()>,
    /// Tokens that passed lately, under a short lock of their own.
    verified: SyncMutex<Verified>,
}

/// What a caller of [`JwtValidator::keys_for`] saw in the cache.
struct Seen {
    keys: Arc<Vec<Key>>,
    known: bool,
    stale: bool,
    may_retry: bool,
    never: bool,
}

impl std::fmt::Debug for JwtValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtValidator")
            .field("issuer", &self.config.issuer)
            .field("audience", &self.config.audience)
            .finish_non_exhaustive()
    }
}

impl JwtValidator {
    /// A validator with `config`; keys are fetched on first use.
    pub fn new(config: JwtValidatorConfig) -> Self {
        let client = fetch::client(config.fetch_timeout);
        JwtValidator {
            config,
            client,
            cache: SyncMutex::new(Cache::default()),
            fetching: Mutex::new(()),
            verified: SyncMutex::new(Verified::default()),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &JwtValidatorConfig {
        &self.config
    }

    /// Fetches the issuer's keys now (for a start-up check).
    ///
    /// # Errors
    /// The keys could not be fetched.
    pub async fn refresh(&self) -> Result<usize, TokenError> {
        let _one_at_a_time = self.fetching.lock().await;
        self.fetch_keys().await
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A look at the cache for a token naming `kid` with an `alg` of `family`.
    fn seen(&self, kid: Option<&str>, family: jsonwebtoken::AlgorithmFamily) -> Seen {
        let cache = self.cache();
        let now = Instant::now();
        Seen {
            keys: cache.keys.clone(),
            known: cache.keys.iter().any(|k| match kid {
                Some(kid) => k.kid.as_deref() == Some(kid),
                None => k.family == family,
            }),
            stale: cache
                .fetched_at
                .is_none_or(|t| now.duration_since(t) >= self.config.max_key_age),
            may_retry: cache
                .last_attempt
                .is_none_or(|t| now.duration_since(t) >= self.config.min_refresh_interval),
            never: cache.fetched_at.is_none(),
        }
    }

    async fn check(&self, token: &str) -> Result<AuthInfo, TokenError> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(TokenError::Invalid("token too long"));
        }
        // Old keys are fetched again before use, remembered tokens or not.
        let (generation, young) = {
            let cache = self.cache();
            let age = cache.fetched_at.map(|t| t.elapsed());
            (
                cache.generation,
                age.is_some_and(|a| a < self.config.max_key_age),
            )
        };
        let (now, leeway) = (unix_now(), self.config.leeway.as_secs());
        if young && let Some(info) = self.verified().get(token, generation, now, leeway) {
            return Ok(info);
        }
        let info = self.verify(token).await?;
        let (max, max_bytes) = (
            self.config.max_verified_tokens,
            self.config.max_verified_bytes,
        );
        self.verified()
            .put(token, &info, generation, max, max_bytes);
        Ok(info)
    }

    fn verified(&self) -> std::sync::MutexGuard<'_, Verified> {
        self.verified.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Checks `token` in full: header, key, signature, claims.
    async fn verify(&self, token: &str) -> Result<AuthInfo, TokenError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| TokenError::Invalid("not a signed JWT with a known algorithm"))?;
        if is_hmac(header.alg) || !self.config.algorithms.contains(&header.alg) {
            return Err(TokenError::Invalid("signature algorithm not allowed"));
        }
        let typ_ok = header.typ.as_deref().is_some_and(|t| {
            t.eq_ignore_ascii_case("at+jwt") || t.eq_ignore_ascii_case("application/at+jwt")
        });
        if !typ_ok {
            return Err(TokenError::Invalid(
                "not an access token (typ is not at+jwt)",
            ));
        }
        if header.crit.is_some() {
            return Err(TokenError::Invalid(
                "critical header parameters not understood",
            ));
        }
        let keys = self.keys_for(header.kid.as_deref(), header.alg).await?;
        let family = family_of(header.alg);
        let candidate = keys.iter().find(|k| {
            k.family == family
                && k.alg.as_deref().is_none_or(|a| alg_name(header.alg) == a)
                && match (&header.kid, &k.kid) {
                    (Some(want), Some(have)) => want == have,
                    (Some(_), None) => false,
                    (None, _) => true,
                }
        });
        let Some(key) = candidate else {
            return Err(TokenError::Invalid(
                "no key of the issuer matches the token",
            ));
        };
        let mut v = Validation::new(header.alg);
        v.algorithms = vec![header.alg];
        v.leeway = self.config.leeway.as_secs();
        v.validate_exp = true;
        v.validate_nbf = true;
        v.validate_aud = true;
        v.set_issuer(&[&self.config.issuer]);
        v.set_audience(&[&self.config.audience]);
        v.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &v)
            .map_err(|e| TokenError::Invalid(reason(&e)))?;
        // jsonwebtoken accepts an `iss` array that contains ours; RFC 7519 §4.1.1 makes `iss`
        // one string, and an array would leave the recorded issuer empty.
        if data.claims.get("iss").and_then(Value::as_str) != Some(self.config.issuer.as_str()) {
            return Err(TokenError::Invalid("wrong issuer"));
        }
        self.check_times(&data.claims)?;
        info_of(data.claims)
    }

    /// `iat` (when present) is a number not in the future, and the lifetime the token claims
    /// is within [`JwtValidatorConfig::max_token_lifetime`] (`exp` was checked already).
    fn check_times(&self, claims: &Map<String, Value>) -> Result<(), TokenError> {
        let now = unix_now();
        let leeway = self.config.leeway.as_secs();
        let iat = match claims.get("iat") {
            None => None,
            Some(v) => match v.as_f64() {
                Some(t) if t >= 0.0 => Some(t as u64),
                _ => return Err(TokenError::Invalid("malformed iat")),
            },
        };
        if iat.is_some_and(|iat| iat > now.saturating_add(leeway)) {
            return Err(TokenError::Invalid("issued in the future"));
        }
        let exp = claims
            .get("exp")
            .and_then(Value::as_f64)
            .map_or(0, |t| t.max(0.0) as u64);
        let lifetime = exp.saturating_sub(iat.unwrap_or(now));
        if lifetime
            > self
                .config
                .max_token_lifetime
                .as_secs()
                .saturating_add(leeway)
        {
            return Err(TokenError::Invalid(
                "lifetime longer than this resource accepts",
            ));
        }
        Ok(())
    }

    /// The keys to try for a token naming `kid`: the cache, fetched first when empty or old,
    /// or again (rate-limited) when it lacks `kid`. A token whose key is cached and fresh never
    /// waits for a fetch; one whose key is cached but old waits only for a fetch it starts
    /// itself (others go on with the cached keys meanwhile).
    async fn keys_for(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Arc<Vec<Key>>, TokenError> {
        let family = family_of(alg);
        let seen = self.seen(kid, family);
        if seen.known && !seen.stale {
            return Ok(seen.keys);
        }
        if seen.never && !seen.may_retry {
            // The last attempt failed a moment ago: no new one until the interval has passed.
            return Err(TokenError::Unavailable(
                "the issuer's keys could not be fetched; retrying later".into(),
            ));
        }
        if !seen.may_retry && !seen.never {
            return Ok(seen.keys);
        }
        let _one_at_a_time = if seen.known {
            // Old but usable keys: refresh them if nobody else is, else use them as they are.
            match self.fetching.try_lock() {
                Ok(guard) => guard,
                Err(_) => return Ok(seen.keys),
            }
        } else {
            // This token cannot be checked without the fetch's answer: wait for it.
            self.fetching.lock().await
        };
        // Another caller may have fetched while this one waited.
        let seen = self.seen(kid, family);
        if (seen.known && !seen.stale) || !seen.may_retry {
            if seen.never {
                return Err(TokenError::Unavailable(
                    "the issuer's keys could not be fetched; retrying later".into(),
                ));
            }
            return Ok(seen.keys);
        }
        match self.fetch_keys().await {
            Ok(_) => {}
            Err(e) if self.cache().fetched_at.is_none() => return Err(e),
            // Keep serving with the keys we have; the next refresh may do better.
            Err(e) => {
                tracing::warn!(error = %e, "JWKS refresh failed; keeping the cached keys")
            }
        }
        Ok(self.cache().keys.clone())
    }

    /// Fetches the keys (the caller holds `fetching`) and stores them; the cache lock is taken
    /// only to read the JWKS URL and to store the answer.
    async fn fetch_keys(&self) -> Result<usize, TokenError> {
        let known_uri = {
            let mut cache = self.cache();
            cache.last_attempt = Some(Instant::now());
            cache.jwks_uri.clone()
        };
        let uri = match known_uri {
            Some(u) => u,
            None => {
                let u = self.jwks_uri().await?;
                self.cache().jwks_uri = Some(u.clone());
                u
            }
        };
        let doc = self.get(&uri).await.map_err(|e| {
            TokenError::Unavailable(format!("the issuer's keys could not be fetched: {e}"))
        })?;
        let Some(Value::Array(list)) = doc.get("keys") else {
            return Err(TokenError::Unavailable(
                "the issuer's JWKS has no keys array".into(),
            ));
        };
        let keys: Vec<Key> = list
            .iter()
            .filter_map(usable_key)
            .take(self.config.max_keys)
            .collect();
        tracing::debug!(keys = keys.len(), "issuer keys fetched");
        let count = keys.len();
        let mut cache = self.cache();
        cache.keys = Arc::new(keys);
        cache.fetched_at = Some(Instant::now());
        cache.generation += 1;
        Ok(count)
    }

    /// The JWKS URL: configured, or from the first metadata document (RFC 8414, then OpenID)
    /// that names our issuer.
    async fn jwks_uri(&self) -> Result<Url, TokenError> {
        if let Some(u) = &self.config.jwks_uri {
            return Url::parse(u)
                .map_err(|_| TokenError::Unavailable("the configured JWKS URL is invalid".into()));
        }
        let issuer = Url::parse(&self.config.issuer)
            .map_err(|_| TokenError::Unavailable("the issuer is not a URL".into()))?;
        let mut last = String::from("no metadata document found");
        for url in authorization_server_metadata_urls(&issuer) {
            match self.get(&url).await {
                Ok(doc) => {
                    if doc.get("issuer").and_then(Value::as_str) != Some(&self.config.issuer) {
                        last = "the metadata names another issuer".into();
                        continue;
                    }
                    let Some(jwks) = doc.get("jwks_uri").and_then(Value::as_str) else {
                        last = "the metadata names no jwks_uri".into();
                        continue;
                    };
                    return Url::parse(jwks).map_err(|_| {
                        TokenError::Unavailable("the metadata's jwks_uri is invalid".into())
                    });
                }
                Err(e) => last = e.to_string(),
            }
        }
        Err(TokenError::Unavailable(format!(
            "the issuer's metadata could not be read: {last}"
        )))
    }

    async fn get(&self, url: &Url) -> Result<Map<String, Value>, FetchError> {
        fetch::json(
            self.client.get(url.clone()),
            url,
            self.config.max_document_bytes,
            self.config.fetch_timeout,
        )
        .await
    }
}

impl TokenValidator for JwtValidator {
    fn validate<'a>(&'a self, token: &'a str) -> ValidateFuture<'a> {
        Box::pin(self.check(token))
    }
}

/// A JWKS entry we can verify with: a public signature key (never `oct`), usable for
/// signatures.
fn usable_key(v: &Value) -> Option<Key> {
    let jwk: Jwk = serde_json::from_value(v.clone()).ok()?;
    if matches!(
        jwk.algorithm,
        jsonwebtoken::jwk::AlgorithmParameters::OctetKey(_)
    ) {
        return None;
    }
    if matches!(&jwk.common.public_key_use, Some(u) if *u != PublicKeyUse::Signature) {
        return None;
    }
    let key = DecodingKey::from_jwk(&jwk).ok()?;
    let alg = v.get("alg").and_then(Value::as_str).map(str::to_owned);
    Some(Key {
        kid: jwk.common.key_id.clone(),
        alg,
        family: key.family(),
        key,
    })
}

fn family_of(a: Algorithm) -> jsonwebtoken::AlgorithmFamily {
    use jsonwebtoken::AlgorithmFamily as F;
    [F::Hmac, F::Rsa, F::Ec, F::Ed]
        .into_iter()
        .find(|f| f.algorithms().contains(&a))
        .unwrap_or(F::Hmac)
}

fn alg_name(a: Algorithm) -> &'static str {
    match a {
        Algorithm::HS256 => "HS256",
        Algorithm::HS384 => "HS384",
        Algorithm::HS512 => "HS512",
        Algorithm::ES256 => "ES256",
        Algorithm::ES384 => "ES384",
        Algorithm::RS256 => "RS256",
        Algorithm::RS384 => "RS384",
        Algorithm::RS512 => "RS512",
        Algorithm::PS256 => "PS256",
        Algorithm::PS384 => "PS384",
        Algorithm::PS512 => "PS512",
        Algorithm::EdDSA => "EdDSA",
    }
}

/// The reason of a failed check, with no value from the token.
fn reason(e: &jsonwebtoken::errors::Error) -> &'static str {
    use jsonwebtoken::errors::ErrorKind as K;
    match e.kind() {
        K::InvalidSignature => "bad signature",
        K::ExpiredSignature => "expired",
        K::ImmatureSignature => "not yet valid",
        K::InvalidIssuer => "wrong issuer",
        K::InvalidAudience => "not issued for this resource",
        K::MissingRequiredClaim(c) if c == "exp" => "no expiry",
        K::MissingRequiredClaim(c) if c == "aud" => "no audience",
        K::MissingRequiredClaim(_) => "a required claim is missing",
        K::InvalidAlgorithm | K::InvalidAlgorithmName => "signature algorithm not allowed",
        _ => "malformed token",
    }
}

/// What the claims of a verified token say.
fn info_of(claims: Map<String, Value>) -> Result<AuthInfo, TokenError> {
    let subject = subject_of(&claims).ok_or(TokenError::Invalid("no subject"))?;
    let issuer = claims
        .get("iss")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let client_id = client_of(&claims);
    Ok(AuthInfo {
        subject,
        scopes: scopes_of(&claims),
        client_id,
        issuer,
        audience: audiences_of(&claims),
        expires_at: claims.get("exp").and_then(Value::as_u64),
        claims,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn info(exp: u64) -> AuthInfo {
        AuthInfo {
            expires_at: Some(exp),
            ..AuthInfo::new("alice", "http://issuer", crate::scope::ScopeSet::default())
        }
    }

    #[test]
    fn remembered_tokens_are_bounded_by_count_and_by_bytes_oldest_first() {
        let mut v = Verified::default();
        for t in ["a", "b", "c"] {
            v.put(t, &info(100), 1, 2, 1 << 20);
        }
        assert_eq!(v.map.len(), 2, "the count bound");
        assert!(v.get("a", 1, 50, 0).is_none(), "the oldest went first");
        assert!(v.get("b", 1, 50, 0).is_some() && v.get("c", 1, 50, 0).is_some());
        // By bytes: three times the token plus 256 each; the budget holds two of 100 bytes.
        let (long1, long2, long3) = ("x".repeat(100), "y".repeat(100), "z".repeat(100));
        let mut v = Verified::default();
        for t in [&long1, &long2, &long3] {
            v.put(t, &info(100), 1, 100, 2 * 556);
        }
        assert_eq!((v.map.len(), v.bytes), (2, 2 * 556));
        assert!(v.get(&long1, 1, 50, 0).is_none());
        // One token larger than the whole budget is not remembered; nor with a bound of 0.
        v.put(&"w".repeat(1000), &info(100), 1, 100, 2 * 556);
        v.put("q", &info(100), 1, 0, 1 << 20);
        assert_eq!(v.map.len(), 2);
        assert_eq!(v.order.len(), 2);
    }

    #[test]
    fn a_remembered_token_lapses_at_its_expiry_and_with_the_key_set() {
        let mut v = Verified::default();
        v.put("t", &info(100), 1, 10, 1 << 20);
        assert!(v.get("t", 1, 99, 0).is_some());
        assert!(v.get("t", 1, 100, 5).is_some(), "within the leeway");
        assert!(v.get("t", 1, 100, 0).is_none(), "expired");
        assert_eq!(
            (v.map.len(), v.bytes, v.order.len()),
            (0, 0, 0),
            "and forgotten"
        );
        v.put("t", &info(100), 1, 10, 1 << 20);
        assert!(
            v.get("t", 2, 50, 0).is_none(),
            "the keys were fetched again since"
        );
        assert!(v.map.is_empty());
        // A token without an expiry is never remembered.
        let mut open = info(0);
        open.expires_at = None;
        v.put("n", &open, 1, 10, 1 << 20);
        assert!(v.map.is_empty());
    }

    #[tokio::test]
    async fn a_remembered_token_is_taken_without_its_signature_checked_again() {
        // No issuer is reachable at this address: only the remembered entry can make it pass.
        let v = JwtValidator::new(JwtValidatorConfig::new("http://127.0.0.1:1", "aud"));
        let far = unix_now() + 600;
        v.cache().fetched_at = Some(Instant::now());
        v.verified()
            .put("not-even-a-jwt", &info(far), 0, 10, 1 << 20);
        assert_eq!(v.check("not-even-a-jwt").await.unwrap().subject, "alice");
        assert!(v.check("another-token").await.is_err());
        // Keys old enough to be fetched again: checked afresh (and refused here).
        v.cache().fetched_at = Instant::now().checked_sub(Duration::from_secs(7200));
        assert!(v.check("not-even-a-jwt").await.is_err());
        // Once the keys are fetched (the generation moves on), it is checked afresh.
        v.cache().fetched_at = Some(Instant::now());
        assert!(v.check("not-even-a-jwt").await.is_ok());
        v.cache().generation = 1;
        assert!(v.check("not-even-a-jwt").await.is_err());
    }
}
