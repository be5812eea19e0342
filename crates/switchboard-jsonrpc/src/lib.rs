//! # switchboard-jsonrpc
//!
//! The symmetric JSON-RPC 2.0 peer engine under both MCP roles. It knows no MCP method except the
//! cross-cutting `notifications/cancelled` and `notifications/progress`.
//!
//! # Layout
//! | module | role |
//! |---|---|
//! | `transport` | the [`Transport`] seam: JSON text frames in, frames with routing facts out |
//! | [`memory`] | the in-memory transport pair: only JSON text crosses |
//! | `session` | [`spawn`]: reader loop, writer task, decode, dispatch, response routing |
//! | `peer` | [`Peer`]: outbound requests (ids, pending map, timeouts, cancellation, progress) |
//! | `queue` | [`Queue`]: the bounded outbound queue, storage only while frames wait |
//! | `router` | [`MethodTable`]: one route per method, typed handlers erased |
//! | `service` | [`Service`]: the role's handler; [`RequestContext`] for handlers |
//! | `layer` | [`Layer`]: middleware around requests and notifications, both directions |
//! | `facts` | [`Facts`]: what a side knows of a message's session and caller |
//! | `framelog` | [`FrameHook`]: sees every frame with direction, kind and id |
//! | `related` | [`RelatedRequests`]: for relays, which client request a server frame belongs to |
//! | `config` | [`SessionConfig`]: every bound, on by default |
//! | `throttle` | [`LogThrottle`]: the per-session budget of log lines the peer's input causes |
//! | `error` | [`RequestError`] for callers |
//!
//! # Guarantees
//! * Messages are told apart by structure; `"id": null` is an invalid request (-32600).
//! * Inbound requests run concurrently; a panicking handler answers -32603 and the session lives
//!   on, whether it panics in [`Service::call`] itself or in the future it returns; a panic in
//!   [`Service::notify`] is logged and the session lives on.
//! * Log lines caused by the peer's input are bounded in size and rate per session
//!   ([`LogThrottle`]); answers that echo the peer's text cut it
//!   ([`switchboard_types::error::echo`]).
//! * Responses are routed by id in any order; an orphan response is logged with its frame and dropped.
//! * A duplicate in-flight id from the peer gets -32600; in-flight requests, pending requests,
//!   frame size and the outbound queue are bounded. When the queue is full the reader waits
//!   before it reads on, so a peer that does not read its answers cannot pile them up; an
//!   answer without id (to a frame whose id was unreadable) is dropped instead, so a peer
//!   flooding garbage while reading nothing cannot wedge the session.
//! * A cancelled request's handler future is dropped and no answer is sent.

mod config;
mod error;
mod facts;
mod framelog;
mod layer;
pub mod memory;
mod peer;
mod progress;
mod queue;
mod related;
mod router;
mod service;
mod session;
mod throttle;
mod transport;

pub use config::{DEFAULT_MAX_FRAME_BYTES, SessionConfig};
pub use error::RequestError;
pub use facts::Facts;
pub use framelog::{Flow, FrameEvent, FrameHook};
pub use layer::{Call, Layer, Layers, Next, Outgoing, Scope, SendNext};
pub use peer::{IdCallback, Peer, ProgressWatch, RequestOptions, WeakPeer};
pub use queue::Queue;
pub use related::RelatedRequests;
pub use router::{
    ErasedNotification, ErasedRequest, MethodTable, Route, RouteError, invalid_params,
    parse_params, typed_notification, typed_request,
};
pub use service::{
    BoxFuture, HandlerResult, ProgressCallback, ProgressError, ProgressUpdate, RequestContext,
    Service,
};
pub use session::{NullService, spawn, spawn_layered};
pub use throttle::LogThrottle;
pub use transport::{
    Attachment, Driver, DriverSlot, FrameSink, FrameSource, OutboundFrame, Transport,
    TransportControl, TransportError,
};
