//! Pure framing: bytes in, frame text out, and back. No IO and no awaiting, so every codec can be
//! tested by feeding it bytes split at any point (and fuzzed the same way).
//!
//! | module | framing |
//! |---|---|
//! | [`ndjson`] | newline-delimited JSON (stdio, `[ST-1]`): one message per line |
//! | [`sse`] | Server-Sent Events (Streamable HTTP, `[HT-9]`): the parser and the event encoder |

pub mod ndjson;
pub mod sse;
