//! `hyper-add`: the upper limit for Streamable HTTP. A hand-written server on hyper 1.x (HTTP/1.1,
//! keep-alive, TCP_NODELAY, the multi-threaded tokio runtime) with no SDK:
//!
//! - `POST /mcp`: the body is one JSON-RPC message handled by `bench_peers::handle`; a request is
//!   answered with one `application/json` body, a notification or response with `202`.
//!   `initialize` opens a session (`Mcp-Session-Id`, a 128-bit hex id kept in a set) unless
//!   `--stateless`; in stateful mode every other POST must carry a known session id (400 when it
//!   is missing, 404 when it is unknown), as the specification asks.
//! - `DELETE /mcp`: ends the session (200; 404 when unknown).
//! - anything else: 405 (no standalone SSE stream: this server never sends one).
//!
//! It skips what a real server must also do (Host/Origin checks, `Accept` negotiation, body
//! bounds beyond a fixed cap, SSE), which is why it is the limit and not a peer.
//!
//! Usage: `hyper-add --http 127.0.0.1:PORT [--stateless]`

use std::collections::HashSet;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

const SESSION_HEADER: &str = "mcp-session-id";
const MAX_BODY: usize = 4 << 20;

struct State {
    stateless: bool,
    sessions: RwLock<HashSet<Box<str>>>,
    seed: u64,
    counter: AtomicU64,
}

impl State {
    /// A new session id: a per-process random seed mixed with a counter (splitmix64), 32 hex digits.
    fn new_id(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let mix = |mut z: u64| {
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let a = mix(self
            .seed
            .wrapping_add(n.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        let b = mix(a ^ self.seed.rotate_left(17));
        format!("{a:016x}{b:016x}")
    }
}

fn reply(status: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body));
    *r.status_mut() = status;
    r
}

fn json(body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

async fn serve(
    state: Arc<State>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.uri().path() != "/mcp" {
        return Ok(reply(StatusCode::NOT_FOUND, Bytes::new()));
    }
    let session = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let known = |id: &Option<String>| -> Result<(), StatusCode> {
        if state.stateless {
            return Ok(());
        }
        match id {
            None => Err(StatusCode::BAD_REQUEST),
            Some(id)
                if state
                    .sessions
                    .read()
                    .map(|s| s.contains(id.as_str()))
                    .unwrap_or(false) =>
            {
                Ok(())
            }
            Some(_) => Err(StatusCode::NOT_FOUND),
        }
    };
    match *req.method() {
        Method::POST => {}
        Method::DELETE if !state.stateless => {
            let removed = session.as_deref().is_some_and(|id| {
                state
                    .sessions
                    .write()
                    .map(|mut s| s.remove(id))
                    .unwrap_or(false)
            });
            let status = if removed {
                StatusCode::OK
            } else {
                StatusCode::NOT_FOUND
            };
            return Ok(reply(status, Bytes::new()));
        }
        _ => return Ok(reply(StatusCode::METHOD_NOT_ALLOWED, Bytes::new())),
    }
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return Ok(reply(StatusCode::PAYLOAD_TOO_LARGE, Bytes::new())),
    };
    let (kind, answer) = bench_peers::handle(&body);
    if kind != bench_peers::Kind::Initialize
        && let Err(status) = known(&session)
    {
        return Ok(reply(status, Bytes::new()));
    }
    let Some(answer) = answer else {
        return Ok(reply(StatusCode::ACCEPTED, Bytes::new()));
    };
    let mut resp = json(answer);
    if kind == bench_peers::Kind::Invalid {
        *resp.status_mut() = StatusCode::BAD_REQUEST;
    }
    if kind == bench_peers::Kind::Initialize && !state.stateless {
        let id = state.new_id();
        if let Ok(v) = HeaderValue::from_str(&id) {
            resp.headers_mut().insert(SESSION_HEADER, v);
        }
        if let Ok(mut s) = state.sessions.write() {
            s.insert(id.into_boxed_str());
        }
    }
    Ok(resp)
}

fn usage() -> ! {
    eprintln!("usage: hyper-add --http 127.0.0.1:PORT [--stateless]");
    std::process::exit(2)
}

fn main() -> std::io::Result<()> {
    let mut addr: Option<SocketAddr> = None;
    let mut stateless = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--http" => addr = args.next().and_then(|v| v.parse().ok()),
            "--stateless" => stateless = true,
            _ => usage(),
        }
    }
    let Some(addr) = addr else { usage() };
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
        ^ (u64::from(std::process::id()) << 32);
    let state = Arc::new(State {
        stateless,
        sessions: RwLock::new(HashSet::new()),
        seed,
        counter: AtomicU64::new(0),
    });
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!(
                "hyper-add listening on http://{}/mcp",
                listener.local_addr()?
            );
            loop {
                let (tcp, _) = listener.accept().await?;
                tcp.set_nodelay(true)?;
                let state = state.clone();
                tokio::spawn(async move {
                    let svc = service_fn(move |req| serve(state.clone(), req));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(tcp), svc)
                        .await;
                });
            }
        })
}
