//! The audit log: one JSON line per request, written through a bounded queue.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use switchboard_jsonrpc::{
    BoxFuture, Call, Facts, HandlerResult, Layer, Next, Outgoing, RequestError, SendNext,
};
use switchboard_types::RawJson;
use switchboard_types::methods;

/// Most lines waiting for the writer; past it, lines are dropped and counted (a slow disk never
/// slows or blocks the requests, and never holds more than this many lines in memory).
pub const MAX_AUDIT_QUEUE: usize = 4096;
/// Most characters of one field taken from the peer (subject, method, target, id); the rest is
/// cut, marked with `…`.
pub const MAX_AUDIT_FIELD_CHARS: usize = 200;

/// What the audit log has written and dropped.
#[derive(Debug, Default)]
pub struct AuditStats {
    written: AtomicU64,
    dropped: AtomicU64,
}

impl AuditStats {
    /// Lines written.
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// Lines dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// One JSON line per request this side handles (`direction: "in"`) or sends (`"out"`, its
/// outcome also `timeout`, `cancelled` or `failed`): `time` (RFC 3339, UTC), `side`, `subject`,
/// `client`, `session`, `method`, `target` (tool or prompt name, resource URI), `id`,
/// `outcome` (`ok`, `tool_error` for an `isError` tool result, `error`), `code` (of an error),
/// `durationMs`. Fields from the peer are cut to [`MAX_AUDIT_FIELD_CHARS`]; the lines go to a
/// writer thread through a queue of [`MAX_AUDIT_QUEUE`] lines, and a line that finds it full
/// is dropped and counted (a `{"dropped": n}` line follows when the writer catches up).
#[derive(Clone)]
pub struct Audit {
    tx: SyncSender<String>,
    stats: Arc<AuditStats>,
}

impl std::fmt::Debug for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audit")
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl Audit {
    /// Lines to standard error.
    pub fn to_stderr() -> Self {
        Self::to_writer(std::io::stderr())
    }

    /// Lines appended to the file at `path` (created with mode 0600 where that exists). A
    /// symbolic link at `path` is refused, not followed: a link planted there cannot send the
    /// log into another file.
    ///
    /// # Errors
    /// The file cannot be opened for appending, or `path` is a symbolic link.
    pub fn to_file(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        let path = path.as_ref();
        let refuse_link = || {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "{}: a symbolic link; the audit log does not follow it",
                    path.display()
                ),
            )
        };
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(refuse_link());
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = options.open(path)?;
        // A link planted between the check and the open: the file opened is not the one at
        // `path` any more.
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let (opened, there) = (file.metadata()?, std::fs::symlink_metadata(path)?);
            if there.file_type().is_symlink()
                || (opened.dev(), opened.ino()) != (there.dev(), there.ino())
            {
                return Err(refuse_link());
            }
        }
        Ok(Self::to_writer(file))
    }

    /// Lines to `writer`, from a thread of their own.
    pub fn to_writer(writer: impl Write + Send + 'static) -> Self {
        Self::with_queue(writer, MAX_AUDIT_QUEUE)
    }

    /// Lines to `writer` through a queue of `lines` (at least 1) lines.
    pub fn with_queue(mut writer: impl Write + Send + 'static, lines: usize) -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel::<String>(lines.max(1));
        let stats = Arc::new(AuditStats::default());
        let counted = stats.clone();
        let spawned = std::thread::Builder::new()
            .name("switchboard-audit".into())
            .spawn(move || {
                let mut reported = 0;
                let mut write = |line: String, writer: &mut dyn Write| {
                    let dropped = counted.dropped();
                    if dropped > reported {
                        let _ = writeln!(writer, "{{\"dropped\":{}}}", dropped - reported);
                        reported = dropped;
                    }
                    if writeln!(writer, "{line}").is_ok() {
                        counted.written.fetch_add(1, Ordering::Relaxed);
                    }
                };
                // One flush per burst: everything waiting is written, then flushed.
                while let Ok(line) = rx.recv() {
                    write(line, &mut writer);
                    while let Ok(line) = rx.try_recv() {
                        write(line, &mut writer);
                    }
                    let _ = writer.flush();
                }
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "the audit writer thread could not start; audit lines are dropped");
        }
        Audit { tx, stats }
    }

    /// What has been written and dropped.
    pub fn stats(&self) -> Arc<AuditStats> {
        self.stats.clone()
    }

    fn emit(&self, line: String) {
        match self.tx.try_send(line) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.stats.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    time: String,
    side: &'a str,
    /// `in`: a request the peer sent us; `out`: one we sent.
    direction: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<String>,
    method: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    id: String,
    outcome: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<i64>,
    duration_ms: f64,
}

/// `s` cut to [`MAX_AUDIT_FIELD_CHARS`] characters.
fn cut(s: &str) -> String {
    match s.char_indices().nth(MAX_AUDIT_FIELD_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// What a line knows before the request runs; [`Pending::finish`] writes it with the outcome.
struct Pending {
    audit: Audit,
    started: Instant,
    time: String,
    facts: Facts,
    direction: &'static str,
    method: String,
    target: Option<String>,
    id: String,
}

impl Pending {
    fn new(audit: &Audit, facts: &Facts, direction: &'static str, method: &str) -> Self {
        Pending {
            audit: audit.clone(),
            started: Instant::now(),
            time: rfc3339(SystemTime::now()),
            facts: facts.clone(),
            direction,
            method: method.to_owned(),
            target: None,
            id: String::new(),
        }
    }

    /// The outcome of a result: `tool_error` for an `isError` tool result, else `ok`.
    fn of_result(&self, raw: &RawJson) -> &'static str {
        if self.method == methods::TOOLS_CALL && is_error_result(raw.get()) {
            "tool_error"
        } else {
            "ok"
        }
    }

    fn finish(self, outcome: &str, code: Option<i64>) {
        let facts = &self.facts;
        let line = Line {
            time: self.time,
            side: facts.side,
            direction: self.direction,
            subject: facts.subject.as_deref().map(cut),
            client: facts.client_id.as_deref().map(cut),
            session: facts.session_id.as_deref().map(cut),
            method: cut(&self.method),
            target: self.target,
            id: self.id,
            outcome,
            code,
            duration_ms: (self.started.elapsed().as_secs_f64() * 1e6).round() / 1e3,
        };
        if let Ok(text) = serde_json::to_string(&line) {
            self.audit.emit(text);
        }
    }
}

impl Layer for Audit {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        let mut line = Pending::new(self, call.facts(), "in", call.method());
        line.target = call.target().map(cut);
        line.id = cut(&call.request.id.to_string());
        let fut = next.run(call);
        Box::pin(async move {
            let answer = fut.await;
            match &answer {
                Ok(raw) => {
                    let outcome = line.of_result(raw);
                    line.finish(outcome, None)
                }
                Err(e) => line.finish("error", Some(e.code.0)),
            }
            answer
        })
    }

    fn send(&self, call: Outgoing, next: SendNext) -> BoxFuture<Result<RawJson, RequestError>> {
        let mut line = Pending::new(self, call.facts(), "out", &call.method);
        line.target = call.target().as_deref().map(cut);
        let fut = next.run(call);
        Box::pin(async move {
            let answer = fut.await;
            match &answer {
                Ok(raw) => {
                    let outcome = line.of_result(raw);
                    line.finish(outcome, None)
                }
                Err(RequestError::Rejected(e)) => line.finish("error", Some(e.code.0)),
                Err(RequestError::Timeout { .. }) => line.finish("timeout", None),
                Err(RequestError::Cancelled) => line.finish("cancelled", None),
                Err(_) => line.finish("failed", None),
            }
            answer
        })
    }
}

fn is_error_result(text: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(rename = "isError")]
        is_error: Option<bool>,
    }
    text.contains("\"isError\"")
        && serde_json::from_str::<Flag>(text).is_ok_and(|f| f.is_error == Some(true))
}

/// `t` as RFC 3339 in UTC with milliseconds (`2026-12-04T20:41:06.123Z`).
pub(crate) fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_796_416_866_123);
        assert_eq!(rfc3339(t), "2026-12-04T20:41:06.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000Z");
    }

    #[cfg(unix)]
    #[test]
    fn the_audit_file_is_created_0600_and_a_planted_link_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("sb-audit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("audit.log");
        let audit = Audit::to_file(&path).unwrap();
        drop(audit);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let victim = dir.join("victim");
        std::fs::write(&victim, b"untouched").unwrap();
        let planted = dir.join("planted.log");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let err = Audit::to_file(&planted).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert_eq!(std::fs::read(&victim).unwrap(), b"untouched");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn peer_fields_are_cut_to_their_bound() {
        let long = "x".repeat(MAX_AUDIT_FIELD_CHARS + 50);
        let c = cut(&long);
        assert_eq!(c.chars().count(), MAX_AUDIT_FIELD_CHARS + 1);
        assert!(c.ends_with('…'));
        assert_eq!(cut("short"), "short");
    }
}
