//! DPoP on the resource server (RFC 9449 §4.3, §7, §9, as profiled by SEP-1932): a request
//! presenting a DPoP-bound token (`cnf.jkt`) must carry one proof, signed by that key, made for
//! this request (`htm`, `htu`), fresh (`iat` within the window), for this token (`ath`), never
//! seen before (`jti`, within the window), and with the server's nonce when nonces are on.
//!
//! [`DpopVerifier::check`] judges one proof; the HTTP layer decides which requests need one.
//! Replay is refused through a [`ReplayStore`]: [`MemoryReplayStore`] (bounded in entries and
//! bytes) for one process, or a shared one (Redis) so a proof replayed to another node is
//! refused too. Nonces ([`DpopConfig::nonces`]) need no state: a nonce is a time step and its
//! HMAC under a key the nodes share, valid for the current and the previous step.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;
use url::Url;

use crate::dpop::{PROOF_ALGORITHMS, verify_signature};

/// The default window a proof's `iat` may be old: 5 minutes (SEP-1932).
pub(crate) const DEFAULT_PROOF_MAX_AGE: Duration = Duration::from_secs(300);
/// The default most a proof's `iat` may be ahead of our clock: 5 seconds.
pub(crate) const DEFAULT_PROOF_MAX_SKEW: Duration = Duration::from_secs(5);
/// The largest clock skew accepted in a configuration (a larger one is clamped).
pub(crate) const MAX_PROOF_SKEW: Duration = Duration::from_secs(60);
/// The longest `jti` accepted.
pub(crate) const MAX_JTI_BYTES: usize = 256;
/// The default most proofs the in-memory replay store remembers.
pub const DEFAULT_REPLAY_ENTRIES: usize = 100_000;
/// The default most bytes the in-memory replay store holds (keys and bookkeeping).
pub(crate) const DEFAULT_REPLAY_BYTES: usize = 8 * 1024 * 1024;
/// The bytes one remembered proof costs in the in-memory store (its 43-character key twice,
/// the expiry, and the map's and queue's share).
pub(crate) const REPLAY_ENTRY_BYTES: usize = 128;
/// The default nonce time step: a nonce is good for one to two steps.
pub const DEFAULT_NONCE_STEP: Duration = Duration::from_secs(60);

/// A boxed future of a replay store.
pub type ReplayFuture<'a> = Pin<Box<dyn Future<Output = Result<bool, ReplayError>> + Send + 'a>>;

/// The replay store cannot answer (full, or unreachable): the proof is refused, never let
/// through unchecked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the DPoP replay store cannot answer: {0}")]
pub struct ReplayError(pub String);

/// Remembers the proofs seen until their window closes.
pub trait ReplayStore: Send + Sync + std::fmt::Debug {
    /// Records `key` until `expires_at` (seconds since the epoch). `Ok(true)`: first seen;
    /// `Ok(false)`: seen before (a replay).
    fn first_use(&self, key: &str, expires_at: u64) -> ReplayFuture<'_>;
}

/// Keys in insertion order with their expiry.
type ExpiryQueue = VecDeque<(u64, String)>;

/// The in-memory replay store: at most `max_entries` proofs and `max_bytes`, expired ones
/// dropped first; when full of live proofs it refuses new ones (fail closed).
#[derive(Debug)]
pub struct MemoryReplayStore {
    max_entries: usize,
    max_bytes: usize,
    inner: Mutex<(HashMap<String, u64>, ExpiryQueue)>,
}

impl MemoryReplayStore {
    /// A store with the defaults ([`DEFAULT_REPLAY_ENTRIES`] proofs, 8 MiB).
    pub fn new() -> Self {
        Self::with_bounds(DEFAULT_REPLAY_ENTRIES, DEFAULT_REPLAY_BYTES)
    }

    /// A store bounded by `max_entries` proofs and `max_bytes`.
    pub fn with_bounds(max_entries: usize, max_bytes: usize) -> Self {
        Self {
            max_entries,
            max_bytes,
            inner: Mutex::new((HashMap::new(), VecDeque::new())),
        }
    }

    /// How many proofs are remembered.
    pub fn len(&self) -> usize {
        lock(&self.inner).0.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn first_use_now(&self, key: &str, expires_at: u64, now: u64) -> Result<bool, ReplayError> {
        let mut g = lock(&self.inner);
        let (map, queue) = &mut *g;
        // Drop what expired (the queue is in insertion order; expiries are close to it, so
        // anything still live at the front stops the sweep).
        while let Some((at, _)) = queue.front() {
            if *at > now {
                break;
            }
            if let Some((_, k)) = queue.pop_front()
                && map.get(&k).is_some_and(|e| *e <= now)
            {
                map.remove(&k);
            }
        }
        if map.get(key).is_some_and(|e| *e > now) {
            return Ok(false);
        }
        let entries = self
            .max_entries
            .min(self.max_bytes / REPLAY_ENTRY_BYTES.max(1));
        if map.len() >= entries {
            return Err(ReplayError(format!(
                "full ({} proofs in their window)",
                map.len()
            )));
        }
        map.insert(key.to_owned(), expires_at);
        queue.push_back((expires_at, key.to_owned()));
        Ok(true)
    }
}

impl Default for MemoryReplayStore {
    fn default() -> Self {
        Self::new()
    }
}

impl ReplayStore for MemoryReplayStore {
    fn first_use(&self, key: &str, expires_at: u64) -> ReplayFuture<'_> {
        let r = self.first_use_now(key, expires_at, now_secs());
        Box::pin(async move { r })
    }
}

/// Server-issued nonces (RFC 9449 §9): stateless, a time step and its HMAC-SHA256 under `key`
/// (the same key on every node, so any node accepts another's nonce).
#[derive(Clone)]
pub struct NonceSource {
    key: [u8; 32],
    step: Duration,
}

impl std::fmt::Debug for NonceSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NonceSource")
            .field("step", &self.step)
            .finish_non_exhaustive()
    }
}

impl NonceSource {
    /// Nonces under `key`, rotated every `step` (at least one second).
    pub fn new(key: [u8; 32], step: Duration) -> Self {
        Self {
            key,
            step: step.max(Duration::from_secs(1)),
        }
    }

    /// Nonces under a random key (one process).
    ///
    /// # Errors
    /// The system's random source failed.
    pub fn random(step: Duration) -> Result<Self, ReplayError> {
        let mut key = [0_u8; 32];
        getrandom::fill(&mut key).map_err(|e| ReplayError(format!("no randomness: {e}")))?;
        Ok(Self::new(key, step))
    }

    fn at(&self, step_no: u64) -> String {
        use sha2::Digest as _;
        // HMAC-SHA256 (RFC 2104) over the step number.
        let mut ipad = [0x36_u8; 64];
        let mut opad = [0x5c_u8; 64];
        for (i, b) in self.key.iter().enumerate() {
            ipad[i] ^= b;
            opad[i] ^= b;
        }
        let inner = sha2::Sha256::new()
            .chain_update(ipad)
            .chain_update(step_no.to_be_bytes())
            .finalize();
        let mac = sha2::Sha256::new()
            .chain_update(opad)
            .chain_update(inner)
            .finalize();
        format!(
            "{step_no}.{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac)
        )
    }

    fn step_no(&self, now: u64) -> u64 {
        now / self.step.as_secs().max(1)
    }

    /// The nonce to hand out now.
    pub fn current(&self) -> String {
        self.at(self.step_no(now_secs()))
    }

    /// Whether `nonce` is the current or the previous step's.
    pub fn accepts(&self, nonce: &str, now: u64) -> bool {
        let n = self.step_no(now);
        [n, n.saturating_sub(1)]
            .iter()
            .any(|s| constant_time_eq(self.at(*s).as_bytes(), nonce.as_bytes()))
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0_u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The resource server's DPoP settings.
///
/// The defaults and fixed bounds (docs/BOUNDS.md): a proof's `iat` may be 5 minutes old and
/// 5 seconds ahead of our clock (a configured skew is clamped to 60 s); a `jti` is at most 256
/// bytes; the in-memory replay store remembers at most [`DEFAULT_REPLAY_ENTRIES`] proofs and
/// 8 MiB (128 bytes a proof); a nonce is good for one to two [`DEFAULT_NONCE_STEP`]s.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DpopConfig {
    /// Every token must be DPoP-bound: a Bearer token is refused, and the metadata says
    /// `dpop_bound_access_tokens_required` (RFC 9449 §5.2).
    pub required: bool,
    /// The URL clients reach the endpoint at (`htu`), when it differs from the resource URI
    /// (behind a proxy that rewrites the path or the port). Default: the resource URI.
    pub public_url: Option<Url>,
    /// How old a proof's `iat` may be.
    pub max_age: Duration,
    /// How far ahead of our clock a proof's `iat` may be (clamped to 60 s).
    pub max_skew: Duration,
    /// Where seen proofs are remembered.
    pub replay: Arc<dyn ReplayStore>,
    /// Server nonces, when wanted.
    pub nonces: Option<NonceSource>,
}

impl Default for DpopConfig {
    fn default() -> Self {
        Self {
            required: false,
            public_url: None,
            max_age: DEFAULT_PROOF_MAX_AGE,
            max_skew: DEFAULT_PROOF_MAX_SKEW,
            replay: Arc::new(MemoryReplayStore::new()),
            nonces: None,
        }
    }
}

impl DpopConfig {
    /// Bound tokens need proofs; Bearer tokens are still accepted unless [`Self::required`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Refuses every token that is not DPoP-bound.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// Sets the URL clients reach the endpoint at.
    pub fn with_public_url(mut self, url: Url) -> Self {
        self.public_url = Some(url);
        self
    }

    /// Sets the replay store (a shared one for several nodes).
    pub fn with_replay_store(mut self, store: Arc<dyn ReplayStore>) -> Self {
        self.replay = store;
        self
    }

    /// Turns server nonces on.
    pub fn with_nonces(mut self, nonces: NonceSource) -> Self {
        self.nonces = Some(nonces);
        self
    }

    /// Sets the `iat` window.
    pub fn with_window(mut self, max_age: Duration, max_skew: Duration) -> Self {
        self.max_age = max_age;
        self.max_skew = max_skew.min(MAX_PROOF_SKEW);
        self
    }
}

/// Why a proof is refused: the RFC 9449 error code and a description (no token, no proof).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{error}: {description}")]
#[non_exhaustive]
pub struct DpopError {
    /// `invalid_dpop_proof`, `use_dpop_nonce` or `invalid_token`.
    pub error: &'static str,
    /// For people.
    pub description: String,
    /// The nonce to send back in `DPoP-Nonce` (for `use_dpop_nonce`).
    pub nonce: Option<String>,
    /// The replay store could not answer (503 rather than 401).
    pub unavailable: bool,
}

fn invalid(description: impl Into<String>) -> DpopError {
    DpopError {
        error: "invalid_dpop_proof",
        description: description.into(),
        nonce: None,
        unavailable: false,
    }
}

/// Checks proofs for one endpoint.
#[derive(Debug, Clone)]
pub struct DpopVerifier {
    config: DpopConfig,
    /// The `htu` proofs must name (no query, no fragment).
    htu: String,
}

impl DpopVerifier {
    /// A verifier for the endpoint `resource` (its canonical URI) under `config`.
    pub fn new(resource: &Url, config: DpopConfig) -> Self {
        let url = config
            .public_url
            .clone()
            .unwrap_or_else(|| resource.clone());
        Self {
            htu: normalize_htu(&url),
            config,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &DpopConfig {
        &self.config
    }

    /// The algorithms proofs may use (`algs` of challenges, RFC 9449 §7.1).
    pub fn algorithms(&self) -> &'static [&'static str] {
        PROOF_ALGORITHMS
    }

    /// Checks `proof` for a request `method` presenting `access_token` bound to `jkt`.
    ///
    /// # Errors
    /// The first thing wrong, as RFC 9449 names it.
    pub async fn check(
        &self,
        proof: &str,
        method: &str,
        access_token: &str,
        jkt: &str,
    ) -> Result<(), DpopError> {
        self.check_at(proof, method, access_token, jkt, now_secs())
            .await
    }

    pub(crate) async fn check_at(
        &self,
        proof: &str,
        method: &str,
        access_token: &str,
        jkt: &str,
        now: u64,
    ) -> Result<(), DpopError> {
        let p = verify_signature(proof).map_err(|e| invalid(e.0))?;
        let claim = |n: &str| p.claims.get(n).and_then(Value::as_str);
        let jti = claim("jti").ok_or_else(|| invalid("no jti"))?;
        if jti.is_empty() || jti.len() > MAX_JTI_BYTES {
            return Err(invalid(format!("jti must be 1 to {MAX_JTI_BYTES} bytes")));
        }
        if claim("htm") != Some(method) {
            return Err(invalid("htm is not the request's method"));
        }
        let htu = claim("htu").ok_or_else(|| invalid("no htu"))?;
        let htu = Url::parse(htu).map_err(|_| invalid("htu is not a URL"))?;
        if normalize_htu(&htu) != self.htu {
            return Err(invalid("htu is not this endpoint's URL"));
        }
        let iat = p
            .claims
            .get("iat")
            .and_then(Value::as_u64)
            .ok_or_else(|| invalid("no numeric iat"))?;
        let skew = self.config.max_skew.min(MAX_PROOF_SKEW).as_secs();
        if iat > now.saturating_add(skew) {
            return Err(invalid("iat is in the future"));
        }
        if iat.saturating_add(self.config.max_age.as_secs()) < now {
            return Err(invalid("iat is too old"));
        }
        let ath = crate::dpop::access_token_hash(access_token);
        if claim("ath") != Some(ath.as_str()) {
            return Err(invalid("ath is missing or not this access token's hash"));
        }
        if p.jkt != jkt {
            return Err(DpopError {
                error: "invalid_token",
                description: "the proof's key is not the one the token is bound to".into(),
                nonce: None,
                unavailable: false,
            });
        }
        if let Some(nonces) = &self.config.nonces
            && !claim("nonce").is_some_and(|n| nonces.accepts(n, now))
        {
            return Err(DpopError {
                error: "use_dpop_nonce",
                description: "the proof needs the server's current nonce".into(),
                nonce: Some(nonces.current()),
                unavailable: false,
            });
        }
        // Replay: the key's thumbprint and the jti, hashed to a fixed size.
        let key = crate::dpop::access_token_hash(&format!("{}.{jti}", p.jkt));
        let until = iat
            .saturating_add(self.config.max_age.as_secs())
            .saturating_add(skew)
            .max(now.saturating_add(1));
        match self.config.replay.first_use(&key, until).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(invalid("the proof was used before (jti replayed)")),
            Err(e) => Err(DpopError {
                error: "invalid_dpop_proof",
                description: e.to_string(),
                nonce: None,
                unavailable: true,
            }),
        }
    }

    /// A nonce to hand out now, when nonces are on.
    pub fn current_nonce(&self) -> Option<String> {
        self.config.nonces.as_ref().map(NonceSource::current)
    }
}

/// A resource server's DPoP flags on the command line (`switchboard serve --auth-dpop`), as
/// clap arguments (feature `clap`); they require the command's `--auth-issuer` argument.
#[cfg(feature = "clap")]
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DpopFlags {
    /// With --auth-issuer: require DPoP-bound access tokens (RFC 9449): every request needs
    /// the DPoP scheme and a fresh proof by the token's key, replays refused (across the
    /// nodes with --store), and a bound token sent as a bearer refused. The metadata says
    /// dpop_bound_access_tokens_required.
    #[arg(long, requires = "auth_issuer")]
    pub auth_dpop: bool,
    /// With --auth-dpop: ask for server nonces in the proofs (keyed by the deployment secret
    /// when there is one, so every node accepts another's).
    #[arg(long, requires = "auth_dpop")]
    pub auth_dpop_nonce: bool,
    /// With --auth-dpop: the URL clients reach this endpoint at, when a proxy in front
    /// changes it (the proofs' htu; default: the audience).
    #[arg(long, value_name = "URL", requires = "auth_dpop")]
    pub auth_public_url: Option<Url>,
}

#[cfg(feature = "clap")]
impl DpopFlags {
    /// With `--auth-dpop`, the configuration: bound tokens required, seen proofs kept in
    /// `replay` (in memory when `None`), and with `--auth-dpop-nonce` nonces keyed by
    /// `nonce_key` (one every node shares) or by a random key; `None` without `--auth-dpop`.
    ///
    /// # Errors
    /// No random nonce key could be made.
    pub fn config(
        &self,
        replay: Option<Arc<dyn ReplayStore>>,
        nonce_key: Option<[u8; 32]>,
    ) -> Result<Option<DpopConfig>, ReplayError> {
        if !self.auth_dpop {
            return Ok(None);
        }
        let mut config = DpopConfig::new().required();
        config.public_url.clone_from(&self.auth_public_url);
        if let Some(store) = replay {
            config = config.with_replay_store(store);
        }
        if self.auth_dpop_nonce {
            config = config.with_nonces(match nonce_key {
                Some(key) => NonceSource::new(key, DEFAULT_NONCE_STEP),
                None => NonceSource::random(DEFAULT_NONCE_STEP)?,
            });
        }
        Ok(Some(config))
    }
}

/// The `cnf.jkt` of a token's claims (RFC 9449 §6.1), if it is bound.
pub fn bound_jkt(claims: &serde_json::Map<String, Value>) -> Option<&str> {
    claims.get("cnf")?.get("jkt")?.as_str()
}

/// `htu` compared: scheme and host lower-cased by the parser, no query, no fragment, a bare
/// origin's lone slash dropped.
fn normalize_htu(url: &Url) -> String {
    let mut u = url.clone();
    u.set_query(None);
    u.set_fragment(None);
    let s = u.to_string();
    if u.path() == "/" {
        s.trim_end_matches('/').to_owned()
    } else {
        s
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
#[path = "dpop_tests.rs"]
mod tests;
