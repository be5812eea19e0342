//! # switchboard-server
//!
//! The MCP server role on the Switchboard engine. Accepts any [`switchboard_jsonrpc::Transport`];
//! never sees bytes.
//!
//! # Layout
//! | module | role |
//! |---|---|
//! | [`server`] | [`Server`] (shared by sessions) and its builder; [`ServerSession`] per client |
//! | [`service`] | the engine [`switchboard_jsonrpc::Service`] of one session: gating and dispatch |
//! | [`lifecycle`] | the handshake state machine and its strictness |
//! | [`era`] | the per-revision seam ([`Era`]); today the stateful era |
//! | [`gate`] | capability gates in both directions |
//! | [`tool`] | tool registry, allow-lists, the `tools/call` error lattice |

pub mod era;
pub mod gate;
pub mod lifecycle;
pub mod server;
pub(crate) mod service;
pub mod tool;

pub use era::{Era, Stateful};
pub use lifecycle::{LifecycleState, Strictness};
pub use server::{Server, ServerBuilder, ServerError, ServerSession};
pub use tool::{AllowList, ClientIdentity, RegistryError, ToolCall, ToolError};
