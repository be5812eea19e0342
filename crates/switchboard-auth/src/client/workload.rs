//! Workload identity federation (SEP-1933): the workload's platform-issued JWT is the RFC 7523
//! JWT-bearer grant. It is read from a file or an environment variable for every token request,
//! so a rotated token is picked up, and it is never logged or kept.

use super::error::OAuthError;

/// Where a workload's identity assertion is read from: it is read again for every token
/// request, so a platform that rotates the file (or the variable) is followed.
#[derive(Clone)]
#[non_exhaustive]
pub enum WorkloadAssertion {
    /// A file (as Kubernetes projects service-account tokens).
    File(std::path::PathBuf),
    /// An environment variable (as CI platforms provide OIDC tokens).
    Env(String),
}

impl std::fmt::Debug for WorkloadAssertion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::File(p) => f.debug_tuple("File").field(p).finish(),
            Self::Env(v) => f.debug_tuple("Env").field(v).finish(),
        }
    }
}

/// The longest workload assertion read (a larger file is refused unread past the bound).
pub const MAX_WORKLOAD_ASSERTION_BYTES: usize = 64 * 1024;

impl WorkloadAssertion {
    /// The assertion as it is now: surrounding white space dropped, never empty, at most
    /// [`MAX_WORKLOAD_ASSERTION_BYTES`].
    ///
    /// # Errors
    /// It cannot be read, is empty or too large.
    pub fn read(&self) -> Result<String, OAuthError> {
        let (text, what) = match self {
            Self::File(p) => {
                use std::io::Read as _;
                let f = std::fs::File::open(p).map_err(|e| {
                    OAuthError::Config(format!(
                        "cannot read the workload identity token {}: {e}",
                        p.display()
                    ))
                })?;
                let mut buf = Vec::new();
                f.take(MAX_WORKLOAD_ASSERTION_BYTES as u64 + 1)
                    .read_to_end(&mut buf)
                    .map_err(|e| OAuthError::Config(format!("cannot read {}: {e}", p.display())))?;
                (buf, p.display().to_string())
            }
            Self::Env(v) => (
                std::env::var(v).unwrap_or_default().into_bytes(),
                format!("the variable {v}"),
            ),
        };
        if text.len() > MAX_WORKLOAD_ASSERTION_BYTES {
            return Err(OAuthError::Config(format!(
                "the workload identity token in {what} is over {MAX_WORKLOAD_ASSERTION_BYTES} bytes"
            )));
        }
        let text = String::from_utf8(text)
            .map_err(|_| OAuthError::Config(format!("{what} holds no text token")))?;
        let t = text.trim();
        if t.is_empty() {
            return Err(OAuthError::Config(format!(
                "no workload identity token in {what}"
            )));
        }
        Ok(t.to_owned())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn wif_the_assertion_file_is_read_again_when_it_changes_and_is_bounded() {
        let dir = std::env::temp_dir().join(format!("sb-wif-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("token");
        let src = WorkloadAssertion::File(path.clone());
        assert!(src.read().is_err(), "no file yet");
        std::fs::write(&path, "first.jwt.sig\n").unwrap();
        assert_eq!(src.read().unwrap(), "first.jwt.sig");
        std::fs::write(&path, "second.jwt.sig").unwrap();
        assert_eq!(
            src.read().unwrap(),
            "second.jwt.sig",
            "read again, not cached"
        );
        std::fs::write(&path, "  \n").unwrap();
        assert!(src.read().is_err(), "an empty token is refused");
        std::fs::write(&path, "a".repeat(MAX_WORKLOAD_ASSERTION_BYTES)).unwrap();
        assert!(src.read().is_ok(), "at the bound");
        std::fs::write(&path, "a".repeat(MAX_WORKLOAD_ASSERTION_BYTES + 1)).unwrap();
        let e = src.read().unwrap_err().to_string();
        assert!(e.contains("over"), "{e}");
        assert!(!e.contains("aaaa"), "the token is not echoed");
        let _ = std::fs::remove_dir_all(dir);
        assert!(
            WorkloadAssertion::Env("SWITCHBOARD_TEST_NO_SUCH_VAR_29".into())
                .read()
                .is_err()
        );
        assert_eq!(
            WorkloadAssertion::Env("PATH".into()).read().unwrap(),
            std::env::var("PATH").unwrap().trim()
        );
    }
}
