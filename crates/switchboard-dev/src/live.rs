//! The live view of a session: every frame annotated by the inspector as it passes, printed as
//! `switchboard trace` prints it (on stderr, when asked) and served as the session viewer's live
//! page on a loopback address (`/`: the page; `/session.json`: what the page polls). At most
//! [`MAX_LIVE_FRAMES`] frames are held: past it the view starts over (a line says so).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use switchboard::inspect::{Direction, Inspector, TraceInput, render};
use switchboard::jsonrpc::{Flow, FrameHook};
use switchboard::transport::{FrameTap, TappedFrame};

/// The most frames the view holds (the viewer page's own bound); the next one starts it over.
pub const MAX_LIVE_FRAMES: usize = 5_000;

/// The most frame bytes the view holds: past it, as past [`MAX_LIVE_FRAMES`], it starts over
/// (a frame larger than this alone is held alone; the transport's frame bound caps it).
pub(crate) const MAX_LIVE_BYTES: usize = 32 * 1024 * 1024;

/// Frames as they pass, annotated; see the module documentation.
pub struct LiveView {
    title: String,
    print: bool,
    started: Instant,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    inspector: Inspector,
    inputs: Vec<TraceInput>,
    /// The bytes of `inputs`' frames.
    bytes: usize,
    /// Frames before the current view (it started over that many frames in).
    before: usize,
}

impl std::fmt::Debug for LiveView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveView")
            .field("title", &self.title)
            .finish_non_exhaustive()
    }
}

impl LiveView {
    /// A view named `title` (the page's heading); with `print`, one annotated line per frame
    /// on stderr (the header first).
    pub fn new(title: impl Into<String>, print: bool) -> Arc<LiveView> {
        Arc::new(LiveView {
            title: title.into(),
            print,
            started: Instant::now(),
            state: Mutex::default(),
        })
    }

    /// Takes in one frame.
    pub fn observe(&self, direction: Direction, text: &str) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        let at_ms = self.started.elapsed().as_secs_f64() * 1000.0;
        let full = s.inputs.len() >= MAX_LIVE_FRAMES
            || (!s.inputs.is_empty() && s.bytes + text.len() > MAX_LIVE_BYTES);
        if full {
            let before = s.before + s.inputs.len();
            *s = State {
                before,
                ..State::default()
            };
            if self.print {
                eprintln!(
                    "(the live view holds {MAX_LIVE_FRAMES} frames or {MAX_LIVE_BYTES} bytes: it starts over at frame {before})"
                );
            }
        }
        s.bytes += text.len();
        s.inputs.push(TraceInput {
            direction,
            text: text.to_owned(),
            at_ms: Some(at_ms),
        });
        let report = s.inspector.observe(direction, text, Some(at_ms));
        if self.print {
            let table = render::table(std::slice::from_ref(report));
            let mut lines = table.lines();
            let header = lines.next().unwrap_or_default();
            if report.index == 0 && s.before == 0 {
                eprintln!("{header}");
            }
            for l in lines {
                eprintln!("{l}");
            }
        }
    }

    /// How many frames it has seen.
    pub fn frames(&self) -> usize {
        self.state
            .lock()
            .map(|s| s.before + s.inputs.len())
            .unwrap_or(0)
    }

    /// A frame hook for a server's sessions: what it receives is the client's, what it sends
    /// the server's.
    pub fn server_hook(self: &Arc<Self>) -> FrameHook {
        let view = self.clone();
        FrameHook::new(move |e| {
            let direction = match e.direction {
                Flow::Inbound => Direction::ClientToServer,
                Flow::Outbound => Direction::ServerToClient,
            };
            view.observe(direction, e.text);
        })
    }

    /// The live page, with the frames so far.
    pub fn page(&self) -> String {
        self.with(switchboard::inspect::html_live_page)
    }

    /// What the live page polls.
    pub fn session_json(&self) -> String {
        self.with(switchboard::inspect::html_session_json)
    }

    fn with(
        &self,
        f: fn(
            &str,
            &[TraceInput],
            &[switchboard::inspect::FrameReport],
            &switchboard::inspect::Summary,
        ) -> String,
    ) -> String {
        match self.state.lock() {
            Ok(s) => f(
                &self.title,
                &s.inputs,
                s.inspector.reports(),
                &s.inspector.summary(),
            ),
            Err(_) => String::new(),
        }
    }

    /// Serves the live page on `listener` until the process ends: `GET /` the page, `GET
    /// /session.json` the session so far. Only a loopback address is served, and only requests
    /// whose `Host` names it (`127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT`), so that no
    /// other site's page can read the session through a name pointed at this machine.
    ///
    /// # Errors
    /// The listener is not on a loopback address, or serving fails.
    pub async fn serve(self: Arc<Self>, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let local = listener.local_addr()?;
        if !local.ip().is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("the live viewer serves a loopback address only, not {local}"),
            ));
        }
        let page = {
            let view = self.clone();
            move |headers: HeaderMap| {
                let view = view.clone();
                async move { answer(&headers, local, "text/html; charset=utf-8", || view.page()) }
            }
        };
        let json = {
            let view = self.clone();
            move |headers: HeaderMap| {
                let view = view.clone();
                async move { answer(&headers, local, "application/json", || view.session_json()) }
            }
        };
        let app = axum::Router::new()
            .route("/", axum::routing::get(page))
            .route("/session.json", axum::routing::get(json));
        axum::serve(listener, app).await
    }

    /// Listens on `addr` (a loopback address: [`parse_viewer_addr`]) and serves the live page
    /// there in the background ([`LiveView::serve`]); returns the address bound (port 0 picks
    /// one).
    ///
    /// # Errors
    /// `addr` is not a loopback address, or cannot be listened on.
    pub async fn spawn_viewer(self: &Arc<Self>, addr: SocketAddr) -> std::io::Result<SocketAddr> {
        if !addr.ip().is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "the live viewer serves the session on a loopback address only (127.0.0.1:PORT), not {addr}"
                ),
            ));
        }
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}")))?;
        let local = listener.local_addr()?;
        let view = self.clone();
        tokio::spawn(async move {
            if let Err(e) = view.serve(listener).await {
                tracing::error!(error = %e, "the live viewer stopped");
            }
        });
        Ok(local)
    }

    /// A frame tap that shows each frame to `tap`, then to this view (a recording watched
    /// live: `switchboard record --ui`).
    pub fn tee(self: &Arc<Self>, tap: Arc<dyn FrameTap>) -> Arc<dyn FrameTap> {
        let view = self.clone();
        Arc::new(move |f: TappedFrame<'_>| {
            tap.frame(f);
            view.frame(f);
        })
    }
}

/// Parses where the live viewer listens: a bare `PORT` (or `:PORT`) on 127.0.0.1, or a
/// loopback `IP:PORT` (what `switchboard dev --ui` and `record --ui` take).
///
/// # Errors
/// Neither form, or an address that is not loopback (the viewer shows the session to this
/// machine only).
pub fn parse_viewer_addr(s: &str) -> Result<SocketAddr, String> {
    let port = s.strip_prefix(':').unwrap_or(s);
    let addr = match port.parse::<u16>() {
        Ok(port) => SocketAddr::from(([127, 0, 0, 1], port)),
        Err(_) => s
            .parse()
            .map_err(|_| format!("{s:?} is neither IP:PORT nor PORT"))?,
    };
    if !addr.ip().is_loopback() {
        return Err(format!(
            "{addr} is not a loopback address: the viewer shows the session to this machine only"
        ));
    }
    Ok(addr)
}

/// Whether `Host` names the loopback address served.
fn host_ok(headers: &HeaderMap, local: SocketAddr) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let port = local.port();
    [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ]
    .iter()
    .any(|h| h.eq_ignore_ascii_case(host))
}

fn answer(
    headers: &HeaderMap,
    local: SocketAddr,
    content_type: &'static str,
    body: impl FnOnce() -> String,
) -> Response {
    if !host_ok(headers, local) {
        return (
            StatusCode::FORBIDDEN,
            "Host must name this loopback address\n",
        )
            .into_response();
    }
    let mut r = body().into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

impl FrameTap for LiveView {
    fn frame(&self, f: TappedFrame<'_>) {
        self.observe(f.direction, f.text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_viewer_listens_on_loopback_only() {
        assert_eq!(
            parse_viewer_addr("8081").unwrap().to_string(),
            "127.0.0.1:8081"
        );
        assert_eq!(parse_viewer_addr("[::1]:0").unwrap().to_string(), "[::1]:0");
        assert!(
            parse_viewer_addr("0.0.0.0:8081")
                .unwrap_err()
                .contains("not a loopback")
        );
        assert!(parse_viewer_addr("host:1").is_err());
    }

    #[tokio::test]
    async fn the_viewer_is_spawned_on_loopback_only_and_a_tee_feeds_both() {
        let view = LiveView::new("t", false);
        let err = view
            .spawn_viewer("0.0.0.0:0".parse().unwrap())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("loopback address only"), "{err}");
        let local = view
            .spawn_viewer("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        assert!(local.ip().is_loopback() && local.port() != 0);

        let other = LiveView::new("other", false);
        let tee = view.tee(other.clone());
        let ping = format!(
            r#"{{"jsonrpc":"2.0","method":"{}"}}"#,
            switchboard::types::methods::NOTIFICATIONS_INITIALIZED
        );
        tee.frame(TappedFrame {
            direction: Direction::ClientToServer,
            session: None,
            text: &ping,
        });
        assert_eq!((view.frames(), other.frames()), (1, 1));
    }

    #[test]
    fn past_max_live_frames_the_view_starts_over() {
        let view = LiveView::new("t", false);
        let ping = format!(
            r#"{{"jsonrpc":"2.0","method":"{}"}}"#,
            switchboard::types::methods::NOTIFICATIONS_INITIALIZED
        );
        let ping = ping.as_str();
        for _ in 0..MAX_LIVE_FRAMES {
            view.observe(Direction::ClientToServer, ping);
        }
        let full: serde_json::Value = serde_json::from_str(&view.session_json()).unwrap();
        assert_eq!(full["frames_total"], MAX_LIVE_FRAMES);
        view.observe(Direction::ClientToServer, ping);
        assert_eq!(view.frames(), MAX_LIVE_FRAMES + 1);
        let over: serde_json::Value = serde_json::from_str(&view.session_json()).unwrap();
        assert_eq!(over["frames_total"], 1);
        assert_eq!(over["frames"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn past_max_live_bytes_the_view_starts_over() {
        let view = LiveView::new("t", false);
        // Four frames of a quarter of the bound each fill it exactly; the fifth starts over.
        let pad = "x".repeat(MAX_LIVE_BYTES / 4 - 200);
        let frame = format!(
            r#"{{"jsonrpc":"2.0","method":"{}","params":{{"data":"{pad}"}}}}"#,
            switchboard::types::methods::NOTIFICATIONS_MESSAGE
        );
        let frame = format!("{frame}{}", " ".repeat(MAX_LIVE_BYTES / 4 - frame.len()));
        assert_eq!(frame.len() * 4, MAX_LIVE_BYTES);
        for _ in 0..4 {
            view.observe(Direction::ServerToClient, &frame);
        }
        let full: serde_json::Value = serde_json::from_str(&view.session_json()).unwrap();
        assert_eq!(full["frames_total"], 4, "at the bound: all held");
        view.observe(Direction::ServerToClient, &frame);
        let over: serde_json::Value = serde_json::from_str(&view.session_json()).unwrap();
        assert_eq!(over["frames_total"], 1, "past it: started over");
        assert_eq!(view.frames(), 5);
    }
}
