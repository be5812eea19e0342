//! `rmcp-add`: the official Rust SDK (`rmcp`) serving the benchmark's `add` tool
//! ({a: number, b: number} → one text block with the sum) and `blob` ({bytes: integer} → one
//! text block of that many `x`), written the way its documentation and tests write a server
//! (`#[tool_router]`, `#[tool]`, `Parameters<T>`), in its fastest configuration. `--tools N`
//! adds N further tools `tool_{i}` (routes that call `add`, as a server generating tools at run
//! time would register them); `--resources N` serves N resources `bench://resource/{i}`
//! (`list_resources` answers every one in one page, rmcp's `with_all_items`).
//!
//! - `--stdio`: rmcp's stdio server on a current-thread tokio runtime (one session: no
//!   cross-thread wake-ups; `--threads N` picks a multi-threaded runtime instead). When stdin and
//!   stdout are pipes, rmcp gets reactor-driven pipe ends through the same AsyncRead/AsyncWrite
//!   seam that `rmcp::transport::stdio()` fills (tokio's Stdin/Stdout hop to the blocking pool
//!   on every read and write); `--tokio-stdio` keeps `stdio()` as documented.
//! - `--http ADDR`: `StreamableHttpService` with the `LocalSessionManager`, served by hyper 1.x
//!   (HTTP/1.1 keep-alive, TCP_NODELAY) on the multi-threaded runtime, endpoint `/mcp`, SSE
//!   keep-alive pings off. Stateful by default (rmcp's `legacy_session_mode`: a session per
//!   `initialize`, answers on SSE). `--stateless` turns sessions off; `--json-response` (which
//!   rmcp honours only when stateless) answers with `application/json`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, combinators::BoxBody};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::handler::server::router::tool::ToolRoute;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer};
use rmcp::{ServerHandler, ServiceExt as _, schemars, tool, tool_handler, tool_router};
use tower_service::Service as _;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: f64,
    b: f64,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct BlobArgs {
    bytes: u64,
}

/// The largest answer `blob` writes: 16 MiB.
const MAX_BLOB_BYTES: u64 = 16 << 20;

#[derive(Debug, Clone)]
struct Add {
    tool_router: ToolRouter<Self>,
    /// Resources served (`--resources N`), built once.
    resources: Arc<Vec<Resource>>,
}

impl Add {
    fn new(lists: Lists) -> Self {
        let mut tool_router = Self::tool_router();
        if lists.tools > 0 {
            let add = tool_router.map.get("add").cloned();
            for i in 0..lists.tools {
                if let Some(mut route) = add.clone() {
                    route.attr.name = format!("tool_{i}").into();
                    route.attr.description =
                        Some(format!("Benchmark tool {i}: add two numbers").into());
                    tool_router.add_route(ToolRoute::clone(&route));
                }
            }
        }
        let resources = (0..lists.resources)
            .map(|i| {
                Resource::new(format!("bench://resource/{i}"), format!("resource-{i}"))
                    .with_mime_type("text/plain")
            })
            .collect();
        Self {
            tool_router,
            resources: Arc::new(resources),
        }
    }
}

/// What `--tools N` and `--resources N` ask for.
#[derive(Debug, Clone, Copy, Default)]
struct Lists {
    tools: usize,
    resources: usize,
}

#[tool_router]
impl Add {
    #[tool(description = "Add two numbers")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string()
    }

    #[tool(description = "Return a text block of this many bytes")]
    fn blob(&self, Parameters(BlobArgs { bytes }): Parameters<BlobArgs>) -> Result<String, String> {
        if bytes > MAX_BLOB_BYTES {
            return Err(format!("argument 'bytes' must be at most {MAX_BLOB_BYTES}"));
        }
        Ok("x".repeat(bytes as usize))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Add {
    fn get_info(&self) -> ServerConfig {
        if self.resources.is_empty() {
            return ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        }
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            self.resources.as_ref().clone(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let Some(i) = request.uri.strip_prefix("bench://resource/") else {
            return Err(ErrorData::resource_not_found("no such resource", None));
        };
        Ok(ReadResourceResult::new(vec![ResourceContents::text(
            format!("resource {i}"),
            request.uri.clone(),
        )])
        .into())
    }
}

struct Options {
    http: Option<SocketAddr>,
    stateless: bool,
    json_response: bool,
    threads: Option<usize>,
    tokio_stdio: bool,
    lists: Lists,
}

/// This process's stdin as a reactor-driven pipe end (fails when it is not a pipe).
fn pipe_in() -> std::io::Result<tokio::net::unix::pipe::Receiver> {
    use std::os::fd::AsFd as _;
    let fd = std::io::stdin().as_fd().try_clone_to_owned()?;
    tokio::net::unix::pipe::Receiver::from_owned_fd(fd)
}

/// This process's stdout as a reactor-driven pipe end (fails when it is not a pipe).
fn pipe_out() -> std::io::Result<tokio::net::unix::pipe::Sender> {
    use std::os::fd::AsFd as _;
    let fd = std::io::stdout().as_fd().try_clone_to_owned()?;
    tokio::net::unix::pipe::Sender::from_owned_fd(fd)
}

fn usage() -> ! {
    eprintln!(
        "usage: rmcp-add (--stdio [--threads N] [--tokio-stdio] | --http 127.0.0.1:PORT [--stateless] [--json-response]) [--tools N] [--resources N]"
    );
    std::process::exit(2)
}

fn parse() -> Options {
    let mut o = Options {
        http: None,
        stateless: false,
        json_response: false,
        threads: None,
        tokio_stdio: false,
        lists: Lists::default(),
    };
    let mut stdio = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--stdio" => stdio = true,
            "--http" => {
                o.http = Some(
                    args.next()
                        .and_then(|v| v.parse().ok())
                        .unwrap_or_else(|| usage()),
                )
            }
            "--tokio-stdio" => o.tokio_stdio = true,
            "--stateless" => o.stateless = true,
            "--json-response" => o.json_response = true,
            "--tools" => {
                o.lists.tools = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| usage())
            }
            "--resources" => {
                o.lists.resources = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| usage())
            }
            "--threads" => {
                o.threads = Some(
                    args.next()
                        .and_then(|v| v.parse().ok())
                        .unwrap_or_else(|| usage()),
                )
            }
            _ => usage(),
        }
    }
    if stdio == o.http.is_some() {
        usage();
    }
    o
}

type Body = BoxBody<Bytes, Infallible>;

async fn serve_http(addr: SocketAddr, o: &Options) -> anyhow_free::Result {
    let config = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(None)
        .with_legacy_session_mode(!o.stateless)
        .with_json_response(o.json_response);
    let lists = o.lists;
    let service: StreamableHttpService<Add, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(Add::new(lists)),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!(
        "rmcp-add listening on http://{}/mcp",
        listener.local_addr()?
    );
    loop {
        let (tcp, _) = listener.accept().await?;
        tcp.set_nodelay(true)?;
        let service = service.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let mut service = service.clone();
                async move {
                    if req.uri().path() != "/mcp" {
                        let mut r: Response<Body> = Response::new(Full::new(Bytes::new()).boxed());
                        *r.status_mut() = StatusCode::NOT_FOUND;
                        return Ok::<_, Infallible>(r);
                    }
                    service.call(req).await
                }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), svc)
                .await;
        });
    }
}

/// Errors as boxed std errors (no extra crate).
mod anyhow_free {
    pub(crate) type Result = std::result::Result<(), Box<dyn std::error::Error + Send + Sync>>;
}

fn main() -> anyhow_free::Result {
    let o = parse();
    let rt = match (o.http, o.threads) {
        (None, None) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
        (_, Some(n)) => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n.max(1))
            .enable_all()
            .build()?,
        (Some(_), None) => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?,
    };
    rt.block_on(async {
        if let Some(addr) = o.http {
            return serve_http(addr, &o).await;
        }
        // When stdin and stdout are pipes, hand rmcp reactor-driven pipe ends (the same
        // AsyncRead/AsyncWrite seam `stdio()` fills): tokio's Stdin/Stdout go through the
        // blocking pool, a thread hop per read and write. `--tokio-stdio` keeps `stdio()`.
        if !o.tokio_stdio
            && let (Ok(rx), Ok(tx)) = (pipe_in(), pipe_out())
        {
            Add::new(o.lists).serve((rx, tx)).await?.waiting().await?;
        } else {
            Add::new(o.lists)
                .serve(rmcp::transport::stdio())
                .await?
                .waiting()
                .await?;
        }
        Ok(())
    })
}
