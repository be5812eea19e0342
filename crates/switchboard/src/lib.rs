//! # switchboard
//!
//! A Model Context Protocol (MCP) stack: wire types, a symmetric JSON-RPC engine, the
//! transports, and the server and client roles. This crate re-exports; each layer is its own
//! crate. The one piece of its own is [`server_http`], the session factory that joins the
//! server role and the Streamable HTTP server (the two never depend on each other).
//!
//! | re-export | crate | feature |
//! |---|---|---|
//! | [`types`] | `switchboard-types`: every wire type, [`types::ProtocolVersion`] | always |
//! | [`jsonrpc`] | `switchboard-jsonrpc`: engine, [`jsonrpc::Transport`], in-memory pair | always |
//! | `server` | `switchboard-server`: `server::Server` | `server` |
//! | `client` | `switchboard-client`: `client::Client` | `client` |
//! | `transport` | `switchboard-transport`: stdio (both ends), child processes, framing | `stdio` |
//! | `http` | `switchboard-http`: the Streamable HTTP server transport (axum) | `http-server` |
//! | `http_client` | `switchboard-http-client`: the Streamable HTTP client transport (reqwest) | `http-client` |
//! | `server_http` | the session factory serving a `Server` over Streamable HTTP | `server` and `http-server` |
//! | `tool`, `prompt`, `resource`, `handlers` | `switchboard-macros`: attribute macros for server handlers | `macros` (brings `server`) |
//! | `auth` | `switchboard-auth`: OAuth 2.1 documents, challenges, scope sets, the validator trait | `auth` |
//! | `auth::client` | the OAuth 2.1 client, and the HTTP client transport's use of it | `oauth-client` (brings `auth`, `http-client`) |
//! | `auth::resource` | the resource server's JWT and introspection validators | `resource-server` (brings `auth`) |
//! | (https issuers) | those validators reaching https issuers through rustls | `rustls` (brings `resource-server`) |
//! | `http::proxy` | the Streamable HTTP reverse proxy | `proxy` (brings `http-server`) |
//! | `middleware` | `switchboard-middleware`: built-in layers (timeout, limits, result size, audit) for `jsonrpc::Layer` | `middleware` |
//! | `tasks` | `switchboard-tasks`: task stores, the `TaskStore` that `ServerBuilder::task_store` takes | `tasks` |
//! | `redis` | `switchboard-redis`: sessions, events, nodes and tasks shared in Redis | `redis` (brings `http-server`, `tasks`) |
//! | `inspect` | `switchboard-inspect`: annotate a session frame by frame | `inspect` |
//! | `check` | `switchboard-check`: conformance checks and the fuzzer against any server | `check` |
//! | `gateway` | `switchboard-gateway`: many upstream servers served as one, each under its prefix | `gateway` (brings `server`, `client`, `stdio`, `http-client`) |
//! | `skills` | `switchboard-skills`: the skills extension (SEP-2640): `skills::SkillSet` on a server, `skills::Skills` on a client | `skills` (brings `server`, `client`) |
//! | `telemetry` | `switchboard-telemetry`: OpenTelemetry spans and metrics of MCP traffic, OTLP export, Prometheus text | `otel` |
//! | `client::pack` | an MCPB bundle and a registry `server.json` read from a running server | `pack` (brings `client`) |
//!
//! [`guide`] walks through each primitive with runnable examples.
//!
//! The default features are the roles, the transports, the macros, `auth` and `middleware`; the rest are
//! opt-in. A stdio-only server needs `server,stdio`, and compiles no HTTP stack (no axum, hyper
//! or reqwest); a stdio client needs `client,stdio`, which compiles no OAuth stack either; a
//! client of remote servers needs `client,http-client`, which compiles no axum.

#[cfg(all(
    feature = "server",
    feature = "client",
    feature = "stdio",
    feature = "http-server",
    feature = "http-client"
))]
pub mod guide;

pub use switchboard_jsonrpc as jsonrpc;
pub use switchboard_types as types;

#[cfg(feature = "auth")]
pub use switchboard_auth as auth;
#[cfg(feature = "check")]
pub use switchboard_check as check;
#[cfg(feature = "gateway")]
pub use switchboard_gateway as gateway;
#[cfg(feature = "inspect")]
pub use switchboard_inspect as inspect;
#[cfg(feature = "middleware")]
pub use switchboard_middleware as middleware;
#[cfg(feature = "redis")]
pub use switchboard_redis as redis;
#[cfg(feature = "skills")]
pub use switchboard_skills as skills;
#[cfg(feature = "tasks")]
pub use switchboard_tasks as tasks;
#[cfg(feature = "otel")]
pub use switchboard_telemetry as telemetry;

#[cfg(feature = "client")]
pub use switchboard_client as client;
#[cfg(feature = "http-server")]
pub use switchboard_http as http;
#[cfg(feature = "http-client")]
pub use switchboard_http_client as http_client;
#[cfg(feature = "server")]
pub use switchboard_server as server;
#[cfg(feature = "stdio")]
pub use switchboard_transport as transport;

/// Attribute macros for server handlers (feature `macros`): `#[switchboard::tool]`,
/// `#[switchboard::prompt]`, `#[switchboard::resource("uri")]` on functions, or on the methods of
/// an impl block marked `#[switchboard::handlers]`; registered with
/// `ServerBuilder::register`. See `switchboard::server::register` for what the handlers may take
/// and return.
///
/// ```
/// use switchboard::server::Server;
/// use switchboard::types::lifecycle::Implementation;
///
/// /// Add two integers.
/// #[switchboard::tool]
/// async fn add(a: i64, b: i64) -> String {
///     (a + b).to_string()
/// }
///
/// let server = Server::builder(Implementation::new("calc", "1.0")).register(add).build().unwrap();
/// assert!(server.capabilities().tools.is_some());
/// ```
#[cfg(feature = "macros")]
pub use switchboard_macros::{handlers, prompt, resource, tool};

/// Serving a [`server::Server`] over Streamable HTTP (features `server` and `http-server`).
///
/// ```no_run
/// # async fn run(server: switchboard::server::Server) -> std::io::Result<()> {
/// use switchboard::http::{HttpConfig, StreamableHttpService};
///
/// let service = StreamableHttpService::new(
///     switchboard::server_http::session_factory(&server),
///     HttpConfig::default(),
/// );
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// switchboard::http::serve(listener, service).await
/// # }
/// ```
#[cfg(all(feature = "server", feature = "http-server"))]
pub mod server_http {
    use switchboard_http::{HttpSessionTransport, SessionStartError};
    use switchboard_jsonrpc::Peer;
    use switchboard_server::{Resumption, Server};

    /// The session factory for `StreamableHttpService::new`: each call serves one HTTP session
    /// with `server`. A session that begins with `initialize` is served as any transport's
    /// ([`Server::serve`]); a stateless request or a session taken over from the session store
    /// is resumed ([`Server::serve_resumed`]) with what the transport carried: the
    /// `MCP-Protocol-Version` header and the stored snapshot. A refusal is the role's error
    /// ([`SessionStartError::Role`] holding the `ServerError`).
    pub fn session_factory(
        server: &Server,
    ) -> impl Fn(HttpSessionTransport) -> Result<Peer, SessionStartError> + Send + Sync + 'static
    {
        let server = server.clone();
        move |transport| {
            let session = match transport.resume() {
                None => server.serve(transport),
                Some(resume) if resume.modern.is_some() => {
                    let headers = resume.modern.clone().unwrap_or_default();
                    let facts = switchboard_server::HttpFacts::new(headers);
                    server.serve_resumed(transport, &Resumption::modern(Some(facts)))
                }
                Some(resume) => {
                    let resumption =
                        Resumption::new(resume.protocol_version.clone(), resume.snapshot.clone());
                    server.serve_resumed(transport, &resumption)
                }
            };
            session
                .map(|s| s.peer().clone())
                .map_err(SessionStartError::role)
        }
    }
}
