//! What the terminal gets besides results: progress lines, colours, log levels. `--quiet`
//! turns progress and the CLI's own INFO lines off; colours follow `NO_COLOR`
//! (<https://no-color.org>) and whether the stream is a terminal.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

/// Records `--quiet`.
pub(crate) fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `--quiet` was given.
pub(crate) fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Whether `NO_COLOR` asks for no colour (set and not empty).
fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Whether progress lines go to stderr: it is a terminal and `--quiet` was not given.
pub(crate) fn progress_on_stderr() -> bool {
    !quiet() && std::io::stderr().is_terminal()
}

/// Whether stdout gets colours.
pub(crate) fn colour_on_stdout() -> bool {
    !no_color() && std::io::stdout().is_terminal()
}

/// Whether log lines on stderr get colours.
pub(crate) fn colour_on_stderr() -> bool {
    !no_color() && std::io::stderr().is_terminal()
}

/// Rewrites the progress line on stderr with `text` (`""` clears it).
pub(crate) fn progress_line(text: &str) {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[K{text}");
    let _ = err.flush();
}

/// Says where a server listens: an INFO log line, or with `--quiet` the bare line (the address
/// is what the user needs, not chatter).
pub(crate) fn announce(line: &str) {
    if quiet() {
        eprintln!("{line}");
    } else {
        tracing::info!("{line}");
    }
}

/// What to try next after an error, from its text (the libraries' errors name the cause; this
/// turns the common ones into advice). `None` when there is nothing useful to add.
pub(crate) fn hint(error: &str) -> Option<&'static str> {
    let e = error.to_ascii_lowercase();
    if e.contains("connection refused") {
        Some(
            "nothing listens there: start the server first (e.g. `switchboard serve --http 127.0.0.1:8080`), or check the host and port",
        )
    } else if e.contains("exit status: 127") {
        Some("the shell could not find the command: check its name, its path and PATH")
    } else if e.contains("exit status: 126") {
        Some("the command is not executable: check its permissions")
    } else if e.contains("did not complete the handshake") {
        Some(
            "the server gave no usable answer to initialize: `switchboard call` with the same target shows its answer, `switchboard record` captures the whole exchange",
        )
    } else if e.contains("dns error") || e.contains("failed to lookup address") {
        Some("the host name does not resolve: check the URL")
    } else if e.contains("timed out") || e.contains("timeout") {
        Some(
            "the server did not answer in time: is it busy or stuck? `--timeout` gives it longer where the command has one",
        )
    } else {
        None
    }
}

/// An error line for the user: the message, then the hint on a line of its own.
pub(crate) fn with_hint(message: String) -> String {
    match hint(&message) {
        Some(h) => format!("{message}\n  hint: {h}\n"),
        None => format!("{message}\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_failures_get_advice_and_others_none() {
        assert!(hint("tcp connect error: Connection refused (os error 111)").is_some());
        assert!(
            hint("child process exited: exit status: 127")
                .unwrap()
                .contains("PATH")
        );
        assert!(hint("the server did not complete the handshake").is_some());
        assert_eq!(hint("Unknown tool: x"), None);
        let line = with_hint("switchboard call: Connection refused".into());
        assert!(line.ends_with('\n') && line.contains("\n  hint: nothing listens there"));
    }
}
