//! The demo: its server, and the two client sessions `switchboard demo` plays and prints.
//!
//! * [`part_one`]: the worked session against the demo server: the handshake offering
//!   2025-06-18, `tools/list`, `add` 2 + 3 → `"5"`, a `delete_db` call refused by the client's
//!   allow-list (-32600), and the operator registering `subtract`, which sends
//!   `notifications/tools/list_changed` so that the client re-lists.
//! * [`part_two`]: the rest of the protocol against the everything server: sampling,
//!   elicitation, progress, logging, a cancellation and a resource subscription.
//!
//! Each part records every frame, in wire order, with the step it belongs to ([`TraceFrame`]).
//! Where the servers run is the caller's choice ([`Host`]): [`InMemory`], [`ChildProcess`]
//! (the `switchboard` binary over stdio or HTTP), or anything else that can start an
//! [`Example`](crate::Example) and connect a client to it.
//!
//! The modules depend one way: `server` ← `host` ← `child`, `part_one` / `part_two`, and all on
//! `trace`; `transcript` plays both parts on a host and renders them.

mod child;
mod host;
pub mod part_one;
pub mod part_two;
mod server;
mod trace;
mod transcript;

pub use child::{Child, ChildProcess};
pub use host::{Host, HostedServer, InMemory};
#[cfg(unix)]
pub use server::subtract_on_sigusr1;
pub use server::{add_subtract, demo_server, subtract_tool};
pub use trace::{DemoError, TraceFrame};
pub use transcript::{Wire, play, transcript};

/// The title of step `n` (1-based, numbered across both parts), if there is one.
pub fn step_title(n: usize) -> Option<&'static str> {
    let i = n.checked_sub(1)?;
    part_one::STEPS
        .get(i)
        .or_else(|| part_two::STEPS.get(i.checked_sub(part_one::STEPS.len())?))
        .copied()
}
