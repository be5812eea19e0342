//! Secrets given to the CLI without the command line (issue 25, finding 15).
//!
//! A value on the command line is visible to every user of the machine in the process list, so
//! each secret has a way in that is not: a file (`--client-secret-file`, `--secret-file`) or an
//! environment variable (`SWITCHBOARD_CLIENT_SECRET`, `SWITCHBOARD_SECRET`, and
//! `SWITCHBOARD_STORE` for a Redis URL that carries a password). A secret file is read bounded
//! in size, its last line end dropped, and a warning is logged when others may read it.

use std::path::Path;

use anyhow::Context as _;
use sha2::{Digest as _, Sha256};

/// The largest secret file read.
const MAX_SECRET_FILE_BYTES: u64 = 64 * 1024;

/// The shortest deployment secret accepted, in bytes.
const MIN_DEPLOYMENT_SECRET: usize = 32;

/// The environment variable holding the deployment secret.
pub(crate) const DEPLOYMENT_SECRET_ENV: &str = "SWITCHBOARD_SECRET";

/// Reads the secret in `path`, given with `flag`.
pub(crate) fn read_file(flag: &str, path: &Path) -> anyhow::Result<String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).with_context(|| format!("{flag} {shown}"))?;
    if meta.len() > MAX_SECRET_FILE_BYTES {
        anyhow::bail!(
            "{flag} {shown}: larger than {MAX_SECRET_FILE_BYTES} bytes; is it the secret?"
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(file = %shown, "{flag}: others on this machine may read the file; chmod 600 it");
        }
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("{flag} {shown}"))?;
    let secret = text.strip_suffix('\n').unwrap_or(&text);
    let secret = secret.strip_suffix('\r').unwrap_or(secret);
    if secret.is_empty() {
        anyhow::bail!("{flag} {shown} is empty");
    }
    Ok(secret.to_owned())
}

/// The value of the environment variable `name`, when set and not empty.
pub(crate) fn from_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The deployment secret: from `file` (given with `--secret-file`), else from
/// [`DEPLOYMENT_SECRET_ENV`]; `None` when neither is given.
pub(crate) fn deployment_secret(file: Option<&Path>) -> anyhow::Result<Option<String>> {
    let secret = match file {
        Some(path) => Some(read_file("--secret-file", path)?),
        None => from_env(DEPLOYMENT_SECRET_ENV),
    };
    if secret
        .as_ref()
        .is_some_and(|s| s.len() < MIN_DEPLOYMENT_SECRET)
    {
        anyhow::bail!(
            "the deployment secret (--secret-file or {DEPLOYMENT_SECRET_ENV}) must be at least \
             {MIN_DEPLOYMENT_SECRET} bytes; make one with `openssl rand -base64 32`"
        );
    }
    Ok(secret)
}

/// The 32-byte key for `use_` derived from the deployment secret: SHA-256 over a label and the
/// secret, so that each use has a key of its own.
pub(crate) fn derive(secret: &str, use_: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"switchboard/deployment-secret/v1\0");
    h.update(use_.as_bytes());
    h.update(b"\0");
    h.update(secret.as_bytes());
    h.finalize().into()
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
        assert_eq!(read_file("--x", &f).unwrap(), "hunter2");
        std::fs::write(&f, "\n").unwrap();
        assert!(
            read_file("--x", &f)
                .unwrap_err()
                .to_string()
                .contains("is empty")
        );
        std::fs::write(&f, vec![b'a'; MAX_SECRET_FILE_BYTES as usize + 1]).unwrap();
        assert!(
            read_file("--x", &f)
                .unwrap_err()
                .to_string()
                .contains("larger than")
        );
        std::fs::write(&f, "short").unwrap();
        assert!(
            deployment_secret(Some(&f))
                .unwrap_err()
                .to_string()
                .contains("at least 32 bytes")
        );
        std::fs::write(&f, "k".repeat(32)).unwrap();
        assert_eq!(deployment_secret(Some(&f)).unwrap().unwrap().len(), 32);
        assert_ne!(derive("a", "x"), derive("a", "y"));
        assert_ne!(derive("a", "x"), derive("b", "x"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
