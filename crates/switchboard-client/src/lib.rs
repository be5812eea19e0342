//! # switchboard-client
//!
//! The MCP client role on the Switchboard engine. Accepts any [`switchboard_jsonrpc::Transport`];
//! never sees bytes.
//!
//! # Layout
//! | module | role |
//! |---|---|
//! | [`client`] | [`Client`] (what the client offers) and [`ClientSession`] (one connected server) |
//! | [`service`] | the engine service: answers the server's requests, reacts to its notifications |
//! | [`error`] | [`ClientError`] |

pub mod client;
pub mod error;
pub(crate) mod service;

pub use client::{Client, ClientBuilder, ClientSession, Negotiated};
pub use error::ClientError;
