//! [`recording`]: a [`FrameTap`] writing each frame as a JSON line (what `switchboard record`
//! writes and `switchboard trace` reads).

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::relay::{FrameTap, TappedFrame};

/// The recording file: one JSON object per frame, `{ts_ms, direction, transport, session,
/// frame}`, written and flushed before the frame is relayed, so that a crash loses nothing
/// already relayed. A write failure is logged; it never breaks the session.
struct Recording {
    file: Mutex<std::io::BufWriter<std::fs::File>>,
    /// `stdio` or `http`: the transport the client side speaks.
    transport: &'static str,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}

/// A tap writing the recording `path` (created or truncated, readable by its owner only: it
/// holds session ids and whatever the peers said, issue 25, finding 10): one JSON object per
/// frame, `{ts_ms, direction, transport, session, frame}`, where `transport` says what the
/// client side speaks (`stdio`, `http`).
///
/// # Errors
/// The file cannot be created or made private.
pub fn recording(path: &Path, transport: &'static str) -> std::io::Result<Arc<dyn FrameTap>> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        opts.mode(0o600);
    }
    let file = opts.open(path)?;
    // A file that was there already keeps its mode through `open`: narrow it too.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(Arc::new(Recording {
        file: Mutex::new(std::io::BufWriter::new(file)),
        transport,
    }))
}

impl FrameTap for Recording {
    fn frame(&self, f: TappedFrame<'_>) {
        let ts_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0);
        let mut line = serde_json::json!({"ts_ms": ts_ms, "direction": f.direction, "transport": self.transport, "session": f.session, "frame": f.text}).to_string();
        line.push('\n');
        let written = match self.file.lock() {
            Ok(mut w) => w.write_all(line.as_bytes()).and_then(|()| w.flush()),
            Err(_) => Err(std::io::Error::other("the recording's lock is poisoned")),
        };
        if let Err(e) = written {
            tracing::error!(error = %e, "recording failed");
        }
    }
}
