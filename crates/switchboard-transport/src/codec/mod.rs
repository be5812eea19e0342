//! Pure framing: bytes in, frame text out, and back. No IO and no awaiting, so every codec can be
//! tested by feeding it bytes split at any point (and fuzzed the same way).
//!
//! | module | framing |
//! |---|---|
//! | [`ndjson`] | newline-delimited JSON (stdio, `[ST-1]`): one message per line |

pub mod ndjson;
