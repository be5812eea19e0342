//! The session lifecycle as an explicit state machine (SPEC-NOTES §3; server side).
//!
//! ```text
//! AwaitingInitialize --initialize--> Initializing --notifications/initialized--> Ready --close--> Closed
//! ```
//!
//! Until `initialize` has been answered and `notifications/initialized` received, only
//! `initialize` and `ping` are served; anything else gets -32600 "server not initialized" and the
//! session stays usable. The spec only says SHOULD for the window between the `initialize`
//! response and `notifications/initialized` (SPEC-NOTES §3.2); strict is our default and
//! [`Strictness::Lenient`] serves requests in that window.

use std::fmt;

/// Where a session is in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LifecycleState {
    /// Nothing but `initialize` (and `ping`) has been received.
    AwaitingInitialize,
    /// `initialize` was answered; `notifications/initialized` has not arrived.
    Initializing,
    /// The handshake is complete: normal operation.
    Ready,
    /// The transport has closed.
    Closed,
}

impl LifecycleState {
    /// A short name for traces.
    pub fn as_str(self) -> &'static str {
        match self {
            LifecycleState::AwaitingInitialize => "awaiting-initialize",
            LifecycleState::Initializing => "initializing",
            LifecycleState::Ready => "ready",
            LifecycleState::Closed => "closed",
        }
    }
}

impl fmt::Display for LifecycleState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How strictly the window between the `initialize` response and `notifications/initialized`
/// is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strictness {
    /// The default: the handshake is an invariant, and every request but `ping` gets -32600
    /// until `notifications/initialized` arrives.
    #[default]
    Strict,
    /// The spec's recommendation (it only says SHOULD here): serve requests once `initialize`
    /// has been answered, for hosts that race the two messages.
    Lenient,
}

/// An event that moves the state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LifecycleEvent {
    /// A valid `initialize` request was accepted and is being answered.
    Initialize,
    /// `notifications/initialized` arrived.
    Initialized,
    /// The transport closed.
    Close,
}

/// The outcome of applying an event in a state where it does not belong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{event:?} is not valid in state {state}")]
pub(crate) struct InvalidTransition {
    /// The state the session was in (and stays in).
    pub(crate) state: LifecycleState,
    /// The refused event.
    pub(crate) event: LifecycleEvent,
}

impl LifecycleState {
    /// Applies an event.
    ///
    /// # Errors
    /// [`InvalidTransition`] when the event does not belong in this state; the state is unchanged.
    pub(crate) fn apply(self, event: LifecycleEvent) -> Result<LifecycleState, InvalidTransition> {
        use LifecycleEvent as E;
        use LifecycleState as S;
        match (self, event) {
            (S::AwaitingInitialize, E::Initialize) => Ok(S::Initializing),
            (S::Initializing, E::Initialized) => Ok(S::Ready),
            (_, E::Close) => Ok(S::Closed),
            (state, event) => Err(InvalidTransition { state, event }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lc_1_lc_4_transitions_follow_the_handshake() {
        use LifecycleEvent as E;
        use LifecycleState as S;
        assert_eq!(
            S::AwaitingInitialize.apply(E::Initialize),
            Ok(S::Initializing)
        );
        assert_eq!(S::Initializing.apply(E::Initialized), Ok(S::Ready));
        assert!(
            S::AwaitingInitialize.apply(E::Initialized).is_err(),
            "initialized before initialize"
        );
        assert!(
            S::Ready.apply(E::Initialize).is_err(),
            "a second initialize"
        );
        assert!(S::Initializing.apply(E::Initialize).is_err());
        assert_eq!(S::Ready.apply(E::Close), Ok(S::Closed));
    }
}
