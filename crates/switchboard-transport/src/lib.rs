//! # switchboard-transport
//!
//! L1 bytes: turns byte streams into the JSON text frames the engine
//! ([`switchboard_jsonrpc`]) moves, and back. It never reads `params` and knows no role.
//!
//! The pure parts (`codec`, `headers`) are shared with the Streamable HTTP crates, so that the
//! server, the client and the checker read and write Server-Sent Events and name headers one way.
//!
//! # Layout
//! | module | side | role |
//! |---|---|---|
//! | [`codec::ndjson`] | both | pure newline-delimited JSON framing: [`NdjsonDecoder`], [`codec::ndjson::encode`] |
//! | [`codec::sse`] | both | pure, bounded Server-Sent Events: [`SseParser`], [`codec::sse::encode`] |
//! | [`headers`] | both | the Streamable HTTP header names and media types (`MCP-Session-Id`, ...) |
//! | `stdio` | server (and tests) | [`StdioTransport`] over any `AsyncRead`/`AsyncWrite` pair, or the process's stdin/stdout |
//! | `child` | client | [`ChildTransport`]: starts a server as a child process, forwards its stderr, shuts it down per spec §3.5 (Unix only) |
//! | `relay` | neither | relays between two peers, byte for byte, each frame shown to a [`FrameTap`] first; helpers for the HTTP relays |
//!
//! # Guarantees
//! * Memory per connection is bounded by the frame bound plus one read: an oversized line is
//!   reported once and discarded as it arrives.
//! * Bad frames (too large, not UTF-8) are recoverable errors: the engine answers an error
//!   without id and reads on. End of input ends the stream cleanly.
//! * A child process is always reaped; its exit while the session is open fails pending calls at
//!   once with the exit status. What it leaves running in its process group is shut down after
//!   it (`SIGTERM`, a grace, `SIGKILL`), and its stderr is logged within a budget of lines a
//!   second.
//! * Relays hold at most one frame bound per line: a longer line is discarded and reported.

#[cfg(unix)]
mod child;
pub mod codec;
pub mod headers;
mod reader;
mod recording;
mod relay;
mod stdio;

#[cfg(unix)]
pub use child::{ChildCommand, ChildHandle, ChildSink, ChildSource, ChildTransport, LOG_TARGET};
pub use codec::ndjson::{FrameError, NdjsonDecoder};
pub use codec::sse::{SseError, SseEvent, SseParser};
pub use recording::recording;
pub use relay::{FrameTap, TappedFrame, one_line, read_frame, relay_child, relay_lines, tap_body};
pub use stdio::{StdinReader, StdioSink, StdioSource, StdioTransport, StdoutWriter};
