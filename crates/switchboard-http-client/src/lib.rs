//! # switchboard-http-client
//!
//! The MCP Streamable HTTP transport, client side (SPEC-NOTES §6, revisions 2025-03-26 onward),
//! with the fallback to the HTTP+SSE transport of 2024-11-05 (§6.9). It implements the
//! engine's [`switchboard_jsonrpc::Transport`], so any role runs over it; with
//! `switchboard-client`:
//!
//! ```text
//! let transport = HttpClientTransport::connect("http://127.0.0.1:8080/mcp", HttpClientConfig::default())?;
//! let session = Client::builder(info).build().connect(transport).await?;
//! ```
//!
//! The crate knows no MCP role and does not pull in a server framework. It reads envelopes
//! (`Frame::decode`: kinds, ids, the method of `initialize`) and one result, the initialize
//! result's `protocolVersion`; never `params`.
//!
//! # Layout
//! | module | role |
//! |---|---|
//! | `transport` | [`HttpClientTransport`], its halves [`HttpClientSink`] / [`HttpClientSource`], [`HttpClientHandle`], [`ConnectError`] |
//! | `config` | [`HttpClientConfig`]: every option and bound, with defaults |
//! | `auth` | [`AuthProvider`]: the Bearer token on every request, 401 and 403 answered (`[AU-6]`, `[AU-18]`) |
//! | [`sse`] | [`SseParser`]: the pure, bounded `text/event-stream` parser (`switchboard_transport::codec::sse`, re-exported) |
//! | `post` | one POST per frame and what its answer means (202, JSON, SSE, 404, 4xx/5xx) |
//! | `stream` | SSE streams: POST streams, the GET stream, resumption with `Last-Event-ID` |
//! | `http_sse` | the 2024-11-05 HTTP+SSE fallback (`endpoint` event, POSTs answered on the stream) |
//! | `redirect` | every request goes out through it: redirects followed on the endpoint's origin only |
//! | `shared` | state shared by the tasks: session id, negotiated version, mode, failure |
//! | `abandon` | request POSTs whose callers all gave up (engine's `request_abandoned`) are stopped |
//! | `stdio_bridge` | [`stdio_bridge()`]: a remote server exposed to a stdio host, every frame shown to a tap |
//!
//! # Behaviour
//! * Every POST sends `Accept: application/json, text/event-stream` (`[HT-5]`) and
//!   `Content-Type: application/json`; after the initialize answer, every request carries
//!   `MCP-Session-Id` when the server issued one (`[HT-19]`) and `MCP-Protocol-Version` with the
//!   negotiated version (`[HT-22]`).
//! * Replies (`[HT-9]`, `[HT-10]`): 202 is nothing; `application/json` is one message or a batch;
//!   `text/event-stream` is parsed and every message (server requests, notifications, the
//!   response) goes to the engine in order.
//! * A POST stream or the GET stream that drops early is resumed with `GET` + `Last-Event-ID`
//!   after the server's `retry` (default 1 s; clamped to 100 ms ..= 30 s) (`[HT-11]`, SEP-1699
//!   polling); attempts are bounded.
//! * Redirects are followed only on the endpoint's origin, keeping the method, at most 3 per
//!   request; any other redirect is not followed (no request goes to its target), so the session
//!   id, `Authorization` and the configured headers never reach another origin. The requests
//!   concerned get a local -32603 with `data: {reason: "redirect_refused", status, location}`.
//! * Timeouts (defaults in [`HttpClientConfig`]): connecting, a request POST's headers and its whole JSON
//!   answer, silence on a POST's SSE answer. A timeout fails the requests of that POST with a
//!   local -32603 (`data: {reason: "http_timeout", timeout, ms}`), frees its slot, and the
//!   session goes on. A request our own caller gives up on (its timeout, its cancellation, its
//!   future dropped: `TransportControl::request_abandoned`) stops its POST once every request
//!   the POST carries is given up: the answer is dropped and the slot freed.
//! * The standalone GET stream opens after `notifications/initialized` is accepted (405: none,
//!   `[HT-12]`/`[HT-13]`).
//! * 404 to a request carrying the session id: the session is gone (`[HT-21]`); the transport
//!   fails with a message starting with [`SESSION_EXPIRED`] and
//!   [`HttpClientHandle::session_expired`] turns true. Starting over (a new transport and a new
//!   `initialize`) is the client role's choice.
//! * Any other 4xx / 5xx to a request: the caller gets a local -32603 error with
//!   `data: {reason: "http_status", status}` (or the server's own JSON-RPC error when it names
//!   the request), never a hang. A POST that breaks off after connecting (typically a server
//!   refusing an oversized body by closing the connection) fails its requests the same way
//!   (`reason: "http_send_failed"`). A network failure (cannot connect, no awaited answer in
//!   time, a stream lost past its reconnections) fails the transport with the reason.
//! * Closing the sink sends `DELETE` with the session id (405 ignored) and stops every stream.
//! * Revision 2026-07-28 ([`HttpMode::Modern`], SPEC-2026-NOTES §14): a frame carrying the client
//!   role's header lines (`OutboundFrame::headers`: `MCP-Protocol-Version`, `Mcp-Method`,
//!   `Mcp-Name`, `Mcp-Param-*`) is sent with them and without session headers; no session id is
//!   kept, so no GET stream and no `DELETE`; cancelling a modern request closes its response
//!   stream (`[D26-77]`) instead of POSTing `notifications/cancelled`; a 400 whose JSON-RPC error
//!   has no id is the answer of the POST's one modern request (§14.5).
//! * Bounded, each with a default in [`HttpClientConfig`] and in `docs/BOUNDS.md`: SSE event and JSON
//!   body size, POSTs in flight, reconnection attempts and delays, redirects, the queue to the
//!   engine (by count and by bytes), and the time of every exchange but the standalone GET
//!   stream's.
//!
//! # Features
//! | feature | default | what it adds |
//! |---|---|---|
//! | `rustls` | off | `https://` endpoints (reqwest with rustls) |
//! | `http2` | off | HTTP/2 (negotiated over TLS) |
//! | `oauth` | off | `switchboard_auth::client::OAuthClient` as the [`AuthProvider`] (OAuth 2.1) |

mod abandon;
mod auth;
mod config;
mod http_sse;
mod post;
mod redirect;
mod shared;
mod stdio_bridge;
mod stream;
mod transport;

pub use switchboard_transport::codec::sse;

pub use auth::{AuthError, AuthFuture, AuthProvider, RequestAuth};
pub use config::HttpClientConfig;
pub use shared::{HttpMode, SESSION_EXPIRED};
pub use sse::{SseError, SseEvent, SseParser};
pub use stdio_bridge::relay as stdio_bridge;
pub use transport::{
    ConnectError, HttpClientHandle, HttpClientSink, HttpClientSource, HttpClientTransport,
};
