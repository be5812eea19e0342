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

/// Says where a server listens: an INFO log line, or with `--quiet` the bare line (the address
/// is what the user needs, not chatter).
pub(crate) fn announce(line: &str) {
    if quiet() {
        eprintln!("{line}");
    } else {
        tracing::info!("{line}");
    }
}
