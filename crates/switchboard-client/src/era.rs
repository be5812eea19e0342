//! Client side: which era a connection speaks ([`Era`]) and how a client chooses it
//! ([`EraMode`], SPEC-2026-NOTES §20.3). The probe itself is `probe`'s.
//!
//! [`EraMode::Legacy`] performs the 2025 handshake as always. [`EraMode::Pin`] speaks one modern
//! revision only: `server/discover` first, then every request with its envelope.
//! [`EraMode::Auto`] (the default) probes with `server/discover` carrying the envelope and falls
//! back to `initialize` on the same connection when no modern answer comes.

use std::time::Duration;

use switchboard_types::ProtocolVersion;

/// How a client chooses the era of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EraMode {
    /// The 2025 handshake (`initialize`), no probe: what every 2025-era server expects.
    Legacy,
    /// Probe with `server/discover`; modern when the server answers it, `initialize` otherwise.
    #[default]
    Auto,
    /// Modern only, at this revision (which must be a modern one): `server/discover`, no
    /// fall-back.
    Pin(ProtocolVersion),
}

/// `auto`, `legacy`, or a modern revision to pin (`2026-07-28`): how a configuration file or a
/// command line names an [`EraMode`].
impl std::str::FromStr for EraMode {
    type Err = ParseEraModeError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "auto" => Ok(Self::Auto),
            "legacy" => Ok(Self::Legacy),
            other => match ProtocolVersion::parse(other) {
                Some(v) if v.is_modern() => Ok(Self::Pin(v)),
                _ => Err(ParseEraModeError(other.to_owned())),
            },
        }
    }
}

/// A text that names no [`EraMode`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an era: auto, legacy, or {modern}", modern = modern_revisions())]
pub struct ParseEraModeError(String);

/// The modern revisions, comma-separated, for the error's message.
fn modern_revisions() -> String {
    let names: Vec<&str> = ProtocolVersion::MODERN.iter().map(|v| v.as_str()).collect();
    names.join(", ")
}

/// The era a connection settled on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// 2025 and before: a handshake and a stateful session.
    Legacy,
    /// 2026-07-28 and after: every request carries its envelope; no session.
    Modern,
}

/// The default bound on waiting for the answer to the `server/discover` probe in
/// [`EraMode::Auto`] before falling back to `initialize`.
pub(crate) const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_era_mode_is_named_auto_legacy_or_a_modern_revision() {
        assert_eq!("auto".parse(), Ok(EraMode::Auto));
        assert_eq!("legacy".parse(), Ok(EraMode::Legacy));
        assert_eq!(
            "2026-07-28".parse(),
            Ok(EraMode::Pin(ProtocolVersion::V2026_07_28))
        );
        // A 2025 revision is not pinnable: it has no server/discover.
        for bad in ["2025-11-25", "modern", "", "AUTO"] {
            let e = bad.parse::<EraMode>().unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("{bad:?} is not an era: auto, legacy, or 2026-07-28")
            );
        }
    }
}
