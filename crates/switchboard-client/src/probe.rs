//! Client side: the era probe (SPEC-2026-NOTES §20.3). [`probe`] sends `server/discover`
//! carrying the envelope: a discover result means modern; a recognised modern error (-32020,
//! -32021, -32022) means modern too and never falls back (-32022 is retried once with a revision
//! from `data.supported`); any other error, or no answer within the probe timeout, falls back to
//! `initialize` on the same connection (`[D26-121]`: the fall-back does not hang on one error
//! code) when the [`EraMode`](crate::EraMode) allows it.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use switchboard_jsonrpc::{Peer, RequestError, RequestOptions};
use switchboard_types::error::echo;
use switchboard_types::modern::DiscoverResult;
use switchboard_types::{ErrorCode, ProtocolVersion, methods};

use crate::error::ClientError;
use crate::exchange;
use crate::state::ClientState;

/// What the probe found.
pub(crate) enum Probe {
    /// A modern server, at this revision.
    Modern {
        version: ProtocolVersion,
        result: Box<DiscoverResult>,
    },
    /// No modern answer: do the 2025 handshake.
    Legacy,
}

/// The `data` of -32022.
#[derive(Deserialize)]
struct Unsupported {
    #[serde(default)]
    supported: Vec<String>,
}

/// Revisions the server named, for a message: cut like every echo.
fn quoted(versions: &[String]) -> String {
    echo(&format!("{versions:?}")).into_owned()
}

/// The `data.supported` of a -32022 error (empty when absent).
pub(crate) fn supported_of(e: &switchboard_types::ErrorObject) -> Vec<String> {
    e.data
        .clone()
        .and_then(|d| Unsupported::deserialize(d).ok())
        .map(|u| u.supported)
        .unwrap_or_default()
}

/// The newest modern revision in `offered` that this client speaks.
pub(crate) fn mutual(offered: &[String]) -> Option<ProtocolVersion> {
    ProtocolVersion::MODERN
        .into_iter()
        .find(|v| offered.iter().any(|o| o == v.as_str()))
}

/// Probes the server with `server/discover` at `version` (retried once at a revision from
/// `data.supported` after -32022). `fallback`: whether a non-modern answer may fall back to the
/// 2025 handshake ([`EraMode::Auto`]) or is an error ([`EraMode::Pin`]).
pub(crate) async fn probe(
    peer: &Peer,
    state: &Arc<ClientState>,
    version: ProtocolVersion,
    fallback: bool,
    timeout: Duration,
) -> Result<Probe, ClientError> {
    let mut version = version;
    let mut retried = false;
    loop {
        state.set_modern_version(Some(version));
        let opts = RequestOptions::default().with_timeout(timeout);
        let answer = exchange::call(
            peer,
            state,
            methods::SERVER_DISCOVER,
            None,
            opts,
            None,
            None,
            None,
        )
        .await;
        let legacy = |why: String| {
            // The reason may quote the server: cut, like every echo.
            let why = echo(&why).into_owned();
            state.set_modern_version(None);
            if fallback {
                tracing::debug!(
                    why,
                    "no modern answer to server/discover; falling back to initialize"
                );
                Ok(Probe::Legacy)
            } else {
                Err(ClientError::Discover(why))
            }
        };
        let e = match answer {
            Ok(raw) => {
                let result: DiscoverResult = match serde_json::from_str(raw.get()) {
                    Ok(r) => r,
                    Err(e) => {
                        return legacy(format!(
                            "the result does not parse: {}",
                            echo(&e.to_string())
                        ));
                    }
                };
                if result
                    .supported_versions
                    .iter()
                    .any(|v| v == version.as_str())
                {
                    return Ok(Probe::Modern {
                        version,
                        result: Box::new(result),
                    });
                }
                state.set_modern_version(None);
                return Err(ClientError::Discover(format!(
                    "the server serves {}, none of which this client speaks",
                    quoted(&result.supported_versions)
                )));
            }
            Err(e) => e,
        };
        let code = e.code();
        match code {
            Some(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION) => {
                let offered = e.rejection().map(supported_of).unwrap_or_default();
                match mutual(&offered) {
                    Some(v) if !retried => {
                        retried = true;
                        version = v;
                        continue;
                    }
                    _ => {
                        state.set_modern_version(None);
                        return Err(ClientError::Discover(format!(
                            "-32022: the server serves {}, none of which this client speaks",
                            quoted(&offered)
                        )));
                    }
                }
            }
            Some(ErrorCode::HEADER_MISMATCH | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY) => {
                state.set_modern_version(None);
                return Err(ClientError::Discover(format!(
                    "a modern server refused the probe: {}",
                    echo(&e.to_string())
                )));
            }
            _ => {}
        }
        return match e {
            ClientError::Request(RequestError::Timeout { after, .. }) => {
                legacy(format!("no answer within {after:?}"))
            }
            ClientError::Request(
                RequestError::Closed
                | RequestError::ConnectionLost(_)
                | RequestError::NotAllowed(_),
            ) => {
                state.set_modern_version(None);
                Err(e)
            }
            other => legacy(other.to_string()),
        };
    }
}
