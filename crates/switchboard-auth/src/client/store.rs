//! Where tokens live between requests and runs (`[AU-25]`): the [`TokenStore`] trait, an
//! in-memory store and a file store that writes with mode 0600.
//!
//! A [`Grant`] is everything one resource's authorization needs again: the issuer, the client
//! as registered with that issuer, and the tokens. It is stored under the resource's canonical
//! URI. A grant from another issuer is not reused (credentials belong to the authorization
//! server that issued them).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::error::OAuthError;

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TokenAuthMethod {
    /// A public client: `client_id` in the form, no secret.
    None,
    /// HTTP Basic with the id and secret.
    ClientSecretBasic,
    /// The id and secret in the form.
    ClientSecretPost,
    /// A JWT signed with the client's private key (RFC 7523).
    PrivateKeyJwt,
}

impl TokenAuthMethod {
    /// The registered name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
            Self::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// The method of a registered name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "none" => Self::None,
            "client_secret_basic" => Self::ClientSecretBasic,
            "client_secret_post" => Self::ClientSecretPost,
            "private_key_jwt" => Self::PrivateKeyJwt,
            _ => return None,
        })
    }
}

/// A client as known to one authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisteredClient {
    /// The client id (a URL for a client ID metadata document).
    pub client_id: String,
    /// The secret, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How it authenticates at the token endpoint.
    pub auth_method: TokenAuthMethod,
    /// The redirect URI it registered, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
}

impl std::fmt::Debug for RegisteredClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredClient")
            .field("client_id", &self.client_id)
            .field("has_secret", &self.client_secret.is_some())
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

/// Tokens from a token endpoint.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenSet {
    /// The access token.
    pub access_token: String,
    /// The refresh token, when one was issued (replaced on rotation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted (as the token endpoint said, or as asked when it did not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The token type when it is not `Bearer`: `DPoP` for a token bound to the client's DPoP
    /// key (RFC 9449 §5), sent with the `DPoP` scheme and a proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_type: Option<String>,
}

impl std::fmt::Debug for TokenSet {
    /// Never shows a token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSet")
            .field("has_refresh_token", &self.refresh_token.is_some())
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .field("token_type", &self.token_type)
            .finish_non_exhaustive()
    }
}

impl TokenSet {
    /// Whether the access token expires within `skew_secs` of `now` (a token without expiry
    /// never does).
    pub fn expires_within(&self, now: u64, skew_secs: u64) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now.saturating_add(skew_secs))
    }

    /// Whether the token is bound to the client's DPoP key (`token_type` `DPoP`).
    pub fn is_dpop(&self) -> bool {
        self.token_type
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("dpop"))
    }
}

/// One resource's authorization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// The issuer that issued the client and the tokens.
    pub issuer: String,
    /// The client, as registered with that issuer.
    pub client: RegisteredClient,
    /// The tokens, once there are some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenSet>,
}

/// Where grants are kept, by the resource's canonical URI.
pub trait TokenStore: Send + Sync + std::fmt::Debug {
    /// The grant stored for `resource`.
    ///
    /// # Errors
    /// The store cannot be read.
    fn load(&self, resource: &str) -> Result<Option<Grant>, OAuthError>;
    /// Stores (replaces) the grant for `resource`.
    ///
    /// # Errors
    /// The store cannot be written.
    fn save(&self, resource: &str, grant: &Grant) -> Result<(), OAuthError>;
    /// Forgets the grant for `resource`.
    ///
    /// # Errors
    /// The store cannot be written.
    fn remove(&self, resource: &str) -> Result<(), OAuthError>;
}

/// Grants in memory, for one process.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    grants: Mutex<BTreeMap<String, Grant>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, resource: &str) -> Result<Option<Grant>, OAuthError> {
        Ok(lock(&self.grants).get(resource).cloned())
    }
    fn save(&self, resource: &str, grant: &Grant) -> Result<(), OAuthError> {
        lock(&self.grants).insert(resource.to_owned(), grant.clone());
        Ok(())
    }
    fn remove(&self, resource: &str) -> Result<(), OAuthError> {
        lock(&self.grants).remove(resource);
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Grants in one JSON file, written whole to a temporary file with mode 0600 (by default) and
/// renamed over the old one, so that a reader sees the old or the new file and nobody else
/// on the machine can read the tokens.
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    mode: u32,
    io: Mutex<()>,
}

impl FileTokenStore {
    /// A store at `path` (created on the first save), mode 0600.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            mode: 0o600,
            io: Mutex::new(()),
        }
    }

    /// Another file mode (Unix).
    pub fn with_mode(mut self, mode: u32) -> Self {
        self.mode = mode;
        self
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read_all(&self) -> Result<BTreeMap<String, Grant>, OAuthError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                OAuthError::Store(format!(
                    "{} is not a token file ({e}); move it away to start afresh",
                    self.path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(OAuthError::Store(format!(
                "cannot read {}: {e}",
                self.path.display()
            ))),
        }
    }

    fn write_all(&self, all: &BTreeMap<String, Grant>) -> Result<(), OAuthError> {
        let text = serde_json::to_vec_pretty(all)
            .map_err(|e| OAuthError::Store(format!("cannot encode the grants: {e}")))?;
        write_private(&self.path, &text, self.mode)
    }
}

/// Writes `bytes` to `path` with `mode` (Unix), its directory created 0700 when missing,
/// through a new unpredictably named file renamed over the old one: the token file and the
/// DPoP key file.
pub(crate) fn write_private(path: &Path, bytes: &[u8], mode: u32) -> Result<(), OAuthError> {
    use std::io::Write as _;
    let fail =
        |e: std::io::Error| OAuthError::Store(format!("cannot write {}: {e}", path.display()));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt as _;
            builder.mode(0o700);
        }
        builder.create(dir).map_err(fail)?;
    }
    let text = bytes;
    // The temporary file gets an unpredictable name and is created new (O_CREAT|O_EXCL,
    // which never follows a symbolic link): a file or link planted at the name beforehand
    // makes the open fail and another name is tried, so the tokens are never written
    // through it (issue 25, finding 13).
    let (tmp, mut f) = (0..8)
        .find_map(|attempt| {
            let salt = std::hash::BuildHasher::hash_one(
                &std::collections::hash_map::RandomState::new(),
                (attempt, std::process::id()),
            );
            let tmp = path.with_extension(format!("tmp.{}.{salt:016x}", std::process::id()));
            let mut opts = std::fs::OpenOptions::new();
            opts.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt as _;
                opts.mode(mode);
            }
            match opts.open(&tmp) {
                Ok(f) => Some(Ok((tmp, f))),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
                Err(e) => Some(Err(e)),
            }
        })
        .unwrap_or_else(|| {
            Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "no free temporary name beside the file",
            ))
        })
        .map_err(fail)?;
    let written = (|| {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        f.write_all(text)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(fail)
}

impl TokenStore for FileTokenStore {
    fn load(&self, resource: &str) -> Result<Option<Grant>, OAuthError> {
        let _g = lock(&self.io);
        Ok(self.read_all()?.remove(resource))
    }
    fn save(&self, resource: &str, grant: &Grant) -> Result<(), OAuthError> {
        let _g = lock(&self.io);
        let mut all = self.read_all()?;
        all.insert(resource.to_owned(), grant.clone());
        self.write_all(&all)
    }
    fn remove(&self, resource: &str) -> Result<(), OAuthError> {
        let _g = lock(&self.io);
        let mut all = self.read_all()?;
        if all.remove(resource).is_some() {
            self.write_all(&all)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn grant() -> Grant {
        Grant {
            issuer: "https://as.example".into(),
            client: RegisteredClient {
                client_id: "c1".into(),
                client_secret: Some("s3cret".into()),
                auth_method: TokenAuthMethod::ClientSecretBasic,
                redirect_uri: None,
            },
            tokens: Some(TokenSet {
                access_token: "at-123".into(),
                refresh_token: Some("rt-456".into()),
                expires_at: Some(100),
                scope: Some("mcp:basic".into()),
                token_type: Some("DPoP".into()),
            }),
        }
    }

    #[test]
    fn au25_sec_tok_1_file_store_writes_mode_0600_and_round_trips() {
        let dir = std::env::temp_dir().join(format!("sb-auth-store-{}", std::process::id()));
        let path = dir.join("tokens.json");
        let store = FileTokenStore::new(&path);
        assert_eq!(store.load("https://r/mcp").unwrap(), None);
        store.save("https://r/mcp", &grant()).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        assert_eq!(store.load("https://r/mcp").unwrap(), Some(grant()));
        store.remove("https://r/mcp").unwrap();
        assert_eq!(store.load("https://r/mcp").unwrap(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Issue 25, finding 13: a link planted at the temporary name the store used to write
    /// through (`tokens.tmp.<pid>`) is not followed; the tokens never reach its target.
    #[cfg(unix)]
    #[test]
    fn finding_13_a_link_at_the_temporary_name_is_not_written_through() {
        let dir = std::env::temp_dir().join(format!("sb-store-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokens.json");
        let victim = dir.join("victim");
        std::fs::write(&victim, b"untouched").unwrap();
        let planted = path.with_extension(format!("tmp.{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        FileTokenStore::new(&path)
            .save("https://r/mcp", &grant())
            .unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"untouched");
        assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
        assert_eq!(
            FileTokenStore::new(&path).load("https://r/mcp").unwrap(),
            Some(grant())
        );
        // Nothing is left behind but the planted link, the victim and the store.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn debug_never_shows_tokens_or_secrets() {
        let text = format!("{:?}", grant());
        assert!(!text.contains("at-123") && !text.contains("rt-456") && !text.contains("s3cret"));
        let mem = MemoryTokenStore::new();
        mem.save("r", &grant()).unwrap();
        assert!(mem.load("r").unwrap().is_some());
        assert!(grant().tokens.unwrap().expires_within(50, 60));
        assert!(!grant().tokens.unwrap().expires_within(10, 60));
    }
}
