//! # switchboard-inspect
//!
//! Inspection as a library (DESIGN-NOTES §1): feed it the frames of any MCP session, in wire
//! order, and it tells what each one is and what is wrong with it. `switchboard trace` is its
//! face on the command line; any application can run it on its own traffic through the engine's
//! frame hook.
//!
//! | module | role |
//! |---|---|
//! | `annotate` | [`Inspector`]: one [`FrameReport`] per frame (kind, primitive, phase, capability, links, violations) |
//! | `violation` | [`Violation`]: a broken rule and its tag |
//! | `tasks` | task frames: links to the creating call, the TK rules a trace can judge (at most 4096 tasks remembered) |
//! | `modern` | 2026-07-28 sessions (no handshake; each request's envelope): the D26 rules a trace can judge |
//! | `summary` | [`Summary`]: counts, unanswered requests, latency per method, lifecycle share |
//! | `input` | reads recordings (JSONL), `->`/`<-` transcripts and bare frames: [`parse_input`] |
//! | [`render`] | the readable table |
//! | `html` | the session viewer: one self-contained HTML page (`trace --html`, [`html_page`]), its template `viewer/page.html`; the live page that polls its own origin ([`html_live_page`], [`html_session_json`]) |
//!
//! Modules are private but `render`; what a user names is re-exported here.
//!
//! Depends on serde / serde_json and the wire crate's method catalogue only (primitive,
//! capability and direction of each method come from there): it reads frames as JSON, never
//! through the engine, so it can judge peers that get the envelope wrong.

mod annotate;
mod html;
mod input;
mod modern;
pub mod render;
mod summary;
mod tasks;
mod violation;

pub use annotate::{Direction, FrameReport, Inspector, Kind, Phase, Violation};
pub use html::{html_live_page, html_page, html_session_json};
pub use input::{InputError, TraceInput, parse_input};
pub use summary::{Latency, Summary};
