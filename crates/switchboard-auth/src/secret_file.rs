//! [`read_secret_file`]: a secret given without the command line (issue 25, finding 15), where
//! the process list would show it to every user of the machine.

use std::io;
use std::path::Path;

/// The largest secret file read.
const MAX_SECRET_FILE_BYTES: u64 = 64 * 1024;

/// Reads the secret in the file at `path` (a client secret, a deployment secret): at most
/// 64 KiB, its last line end dropped; a warning is logged when others on the machine may read
/// the file.
///
/// # Errors
/// The file cannot be read, is larger than 64 KiB, or holds nothing (`InvalidData`).
pub fn read_secret_file(path: &Path) -> io::Result<String> {
    let meta = std::fs::metadata(path)?;
    let invalid = |why: String| io::Error::new(io::ErrorKind::InvalidData, why);
    if meta.len() > MAX_SECRET_FILE_BYTES {
        return Err(invalid(format!(
            "larger than {MAX_SECRET_FILE_BYTES} bytes; is it the secret?"
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(file = %path.display(), "others on this machine may read the secret file; chmod 600 it");
        }
    }
    let text = std::fs::read_to_string(path)?;
    let secret = text.strip_suffix('\n').unwrap_or(&text);
    let secret = secret.strip_suffix('\r').unwrap_or(secret);
    if secret.is_empty() {
        return Err(invalid("is empty".into()));
    }
    Ok(secret.to_owned())
}
