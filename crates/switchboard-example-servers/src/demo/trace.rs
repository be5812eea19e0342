//! What a demo session produces: its frames, each with its step, and why it can fail.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use switchboard::client::ClientError;
use switchboard::jsonrpc::{Flow, FrameHook};
use switchboard::server::ServerError;

/// One recorded frame, from the client's point of view.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceFrame {
    /// The step of the scenario the frame belongs to (1-based, numbered across both parts).
    pub step: usize,
    /// `Outbound`: client → server; `Inbound`: server → client.
    pub direction: Flow,
    /// The exact JSON text on the wire.
    pub text: String,
}

/// Why the demo failed.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The server could not be built or started.
    #[error("demo server: {0}")]
    Server(ServerError),
    /// A client call failed unexpectedly.
    #[error("demo client: {0}")]
    Client(ClientError),
    /// The session did not go as the scenario expects.
    #[error("demo: {0}")]
    Unexpected(String),
}

/// Collects a client's frames, each stamped with the current step.
#[derive(Debug, Clone)]
pub(crate) struct Recorder {
    frames: Arc<Mutex<Vec<TraceFrame>>>,
    step: Arc<AtomicUsize>,
}

impl Recorder {
    /// A recorder whose frames start at step `first`.
    pub(crate) fn new(first: usize) -> Recorder {
        Recorder {
            frames: Arc::default(),
            step: Arc::new(AtomicUsize::new(first)),
        }
    }

    /// The client's frame hook; `step_of` may place a frame in another step than the current one.
    pub(crate) fn hook(&self, step_of: fn(Option<&str>) -> Option<usize>) -> FrameHook {
        let this = self.clone();
        FrameHook::new(move |e| {
            let step = step_of(e.method).unwrap_or_else(|| this.step.load(Ordering::SeqCst));
            if let Ok(mut f) = this.frames.lock() {
                f.push(TraceFrame {
                    step,
                    direction: e.direction,
                    text: e.text.to_owned(),
                });
            }
        })
    }

    /// Frames from now on belong to step `n`.
    pub(crate) fn set_step(&self, n: usize) {
        self.step.store(n, Ordering::SeqCst);
    }

    /// Every frame so far, in wire order.
    pub(crate) fn frames(&self) -> Vec<TraceFrame> {
        self.frames.lock().map(|f| f.clone()).unwrap_or_default()
    }
}
