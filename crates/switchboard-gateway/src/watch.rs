//! [`reload_on_change`]: a running gateway follows its configuration file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::{Gateway, GatewayConfig};

/// How often the configuration file is looked at for a change.
const WATCH_PERIOD: Duration = Duration::from_secs(1);

/// The configuration in `path`, with `audit` (when given) over its `audit_log`; a mistake names
/// the file, the line and the key.
fn read(path: &Path, audit: Option<&PathBuf>) -> Result<GatewayConfig, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut config =
        GatewayConfig::from_toml(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if let Some(a) = audit {
        config.audit_log = Some(a.clone());
    }
    Ok(config)
}

/// Reloads `gateway` from the configuration file `path` (with `audit` over its `audit_log`) on
/// SIGHUP and, with `watch`, when the file's contents change (looked at every second; an
/// editor's rename-over counts): upstreams added, removed or restarted, the policy replaced
/// ([`Gateway::reload`]). A file the gateway refuses is logged and changes nothing. Runs until
/// dropped.
pub async fn reload_on_change(
    gateway: Arc<Gateway>,
    path: PathBuf,
    audit: Option<PathBuf>,
    watch: bool,
) {
    let mut last = std::fs::read(&path).ok();
    #[cfg(unix)]
    let mut hup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(error = %e, "SIGHUP is not watched");
            None
        }
    };
    let mut tick = tokio::time::interval(WATCH_PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        #[cfg(unix)]
        let signalled = async {
            match hup.as_mut() {
                Some(h) => h.recv().await.is_some(),
                None => std::future::pending().await,
            }
        };
        #[cfg(not(unix))]
        let signalled = std::future::pending::<bool>();
        let watched = async {
            if watch {
                tick.tick().await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        let why = tokio::select! {
            true = signalled => "SIGHUP",
            () = watched => "the file changed",
        };
        let now = std::fs::read(&path).ok();
        if why != "SIGHUP" && (now.is_none() || now == last) {
            continue;
        }
        last = now;
        let reloaded =
            read(&path, audit.as_ref()).and_then(|c| gateway.reload(c).map_err(|e| e.to_string()));
        match reloaded {
            Ok(r) => tracing::info!(
                reason = why,
                added = ?r.added,
                removed = ?r.removed,
                restarted = ?r.restarted,
                "configuration reloaded"
            ),
            Err(e) => tracing::error!(reason = why, error = %e, "reload refused; nothing changed"),
        }
    }
}
