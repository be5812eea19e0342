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
