//! The deployment secret: one secret every replica behind a load balancer shares, from which
//! each use (the server's sealing key, the cluster's relay key, DPoP nonces) derives a key of
//! its own. Given without the command line (issue 25, finding 15): a file
//! ([`switchboard_auth::read_secret_file`]), or an environment variable.

use std::fmt;
use std::io;
use std::path::Path;

use sha2::{Digest as _, Sha256};

/// The shortest deployment secret accepted, in bytes.
const MIN_BYTES: usize = 32;

/// A deployment secret of at least 32 bytes.
#[derive(Clone)]
pub struct DeploymentSecret(String);

impl fmt::Debug for DeploymentSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DeploymentSecret(..)")
    }
}

impl DeploymentSecret {
    /// The environment variable holding the secret when no file is given.
    pub const ENV: &'static str = "SWITCHBOARD_SECRET";

    /// The secret in `file`, else in [`DeploymentSecret::ENV`] (when set and not empty);
    /// `None` when neither is given.
    ///
    /// # Errors
    /// The file cannot be read, is empty or too large ([`switchboard_auth::read_secret_file`]), or the
    /// secret is shorter than 32 bytes (`InvalidInput`).
    pub fn load(file: Option<&Path>) -> io::Result<Option<Self>> {
        let secret = match file {
            Some(path) => Some(switchboard_auth::read_secret_file(path)?),
            None => std::env::var(Self::ENV).ok().filter(|v| !v.is_empty()),
        };
        match secret {
            Some(s) if s.len() < MIN_BYTES => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "the deployment secret must be at least {} bytes; make one with `openssl rand -base64 32`",
                    MIN_BYTES
                ),
            )),
            other => Ok(other.map(Self)),
        }
    }

    /// The 32-byte key for `use_`: SHA-256 over a label, `use_` and the secret, so that each
    /// use has a key of its own.
    #[must_use]
    pub fn derive(&self, use_: &str) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(b"switchboard/deployment-secret/v1\0");
        h.update(use_.as_bytes());
        h.update(b"\0");
        h.update(self.0.as_bytes());
        h.finalize().into()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_secret_file_is_read_bounded_and_its_line_end_dropped() {
        let dir = std::env::temp_dir().join(format!("sb-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("s");
        std::fs::write(&f, "hunter2\r\n").unwrap();
        assert_eq!(switchboard_auth::read_secret_file(&f).unwrap(), "hunter2");
        let err = |f: &Path| DeploymentSecret::load(Some(f)).unwrap_err().to_string();
        std::fs::write(&f, "\n").unwrap();
        assert!(err(&f).contains("is empty"));
        std::fs::write(&f, vec![b'a'; 64 * 1024 + 1]).unwrap();
        assert!(err(&f).contains("larger than"));
        std::fs::write(&f, "short").unwrap();
        assert!(err(&f).contains("at least 32 bytes"));
        std::fs::write(&f, "k".repeat(32)).unwrap();
        let a = DeploymentSecret::load(Some(&f)).unwrap().unwrap();
        std::fs::write(&f, "j".repeat(32)).unwrap();
        let b = DeploymentSecret::load(Some(&f)).unwrap().unwrap();
        assert_ne!(a.derive("x"), a.derive("y"));
        assert_ne!(a.derive("x"), b.derive("x"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
