//! # switchboard
//!
//! A Model Context Protocol (MCP) stack: wire types, a symmetric JSON-RPC engine, and the server
//! and client roles. This crate only re-exports; each layer is its own crate.
//!
//! | re-export | crate | feature |
//! |---|---|---|
//! | [`types`] | `switchboard-types`: every wire type, [`types::ProtocolVersion`] | always |
//! | [`jsonrpc`] | `switchboard-jsonrpc`: engine, [`jsonrpc::Transport`], in-memory pair | always |
//! | [`transport`] | `switchboard-transport`: stdio (both ends), framing | always |
//! | [`server`] | `switchboard-server`: [`server::Server`] | `server` (default) |
//! | [`client`] | `switchboard-client`: [`client::Client`] | `client` (default) |

pub use switchboard_http as http;
pub use switchboard_http_client as http_client;
pub use switchboard_jsonrpc as jsonrpc;
pub use switchboard_transport as transport;
pub use switchboard_types as types;

#[cfg(feature = "client")]
pub use switchboard_client as client;
#[cfg(feature = "server")]
pub use switchboard_server as server;
