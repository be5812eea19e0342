//! The user agent for a person at this machine: the system browser opens the authorization
//! URL, and a redirect listener on 127.0.0.1 (a port of its own) receives the code
//! (RFC 8252 §7.3, loopback redirect).
//!
//! The opener (`xdg-open`, `open` on macOS) is started directly, the URL one argument, never
//! through a shell (`[SEC-URL-3]`); only `http` and `https` URLs are opened (`[SEC-URL-1]`,
//! `[SEC-URL-2]`). The listener answers anything that is not the redirect URI 404, and a
//! redirect whose `state` is not the one the authorization URL carried 400, and waits on, up
//! to a bound (five minutes by default): a forged callback sent first cannot end the login.
//! Connections are read side by side (at most [`MAX_PENDING`] at once), each request head
//! bounded in bytes ([`MAX_REQUEST_HEAD`]) and time ([`HEAD_TIMEOUT`]), so an idle or slow
//! connection cannot hold up the browser's (issue 25, finding 14).

use std::fmt;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;
use url::Url;

use super::agent::{OAuthFuture, UserAgent, is_redirect_to};
use super::error::OAuthError;

/// How long the browser flow waits for the redirect, unless told otherwise.
pub(crate) const DEFAULT_BROWSER_WAIT: Duration = Duration::from_secs(300);

/// The most bytes of a redirect's request line read; a longer one is dropped unanswered.
const MAX_REQUEST_HEAD: usize = 8192;

/// How long a connection may take to send its request line.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// The most connections read at once; more wait to be accepted until one is done.
const MAX_PENDING: usize = 16;

/// Told the authorization URL, and whether the system browser could be started for it (when
/// it could not, the person must open the URL).
type OnOpen = Box<dyn Fn(&Url, Result<(), &std::io::Error>) + Send + Sync>;

/// The system browser and a redirect listener on 127.0.0.1.
pub struct BrowserUserAgent {
    listener: tokio::sync::Mutex<TcpListener>,
    redirect_uri: String,
    wait: Duration,
    on_open: OnOpen,
}

impl fmt::Debug for BrowserUserAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BrowserUserAgent")
            .field("redirect_uri", &self.redirect_uri)
            .field("wait", &self.wait)
            .finish_non_exhaustive()
    }
}

impl BrowserUserAgent {
    /// Opens the redirect listener on a free port of 127.0.0.1.
    ///
    /// # Errors
    /// The listener cannot be opened.
    pub async fn bind() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        Ok(Self {
            listener: tokio::sync::Mutex::new(listener),
            redirect_uri: format!("http://127.0.0.1:{port}/callback"),
            wait: DEFAULT_BROWSER_WAIT,
            on_open: Box::new(|_, _| {}),
        })
    }

    /// Waits at most `wait` for the redirect.
    pub fn with_wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// Calls `f` with each authorization URL once the browser was asked to open it, and with
    /// the error when the opener could not be started (to show the URL to the person).
    pub fn on_open(
        mut self,
        f: impl Fn(&Url, Result<(), &std::io::Error>) + Send + Sync + 'static,
    ) -> Self {
        self.on_open = Box::new(f);
        self
    }

    /// Waits for the redirect to `redirect_uri` carrying `state`, at most the agent's wait.
    async fn redirect_within(
        &self,
        redirect_uri: &str,
        state: Option<&str>,
    ) -> Result<Url, OAuthError> {
        tokio::time::timeout(self.wait, self.redirect(redirect_uri, state))
            .await
            .map_err(|_| {
                OAuthError::UserAgent(format!("no redirect came back within {:?}", self.wait))
            })?
    }

    /// Waits for the redirect to `redirect_uri` (with `state`, when given) on the listener,
    /// reading connections side by side.
    async fn redirect(&self, redirect_uri: &str, state: Option<&str>) -> Result<Url, OAuthError> {
        let listener = self.listener.lock().await;
        let mut pending = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept(), if pending.len() < MAX_PENDING => {
                    let (mut stream, _) = accepted
                        .map_err(|e| OAuthError::UserAgent(format!("redirect listener: {e}")))?;
                    pending.spawn(async move {
                        let line = tokio::time::timeout(HEAD_TIMEOUT, request_line(&mut stream))
                            .await
                            .ok()
                            .flatten();
                        (stream, line)
                    });
                }
                Some(done) = pending.join_next() => {
                    // A connection that sent no request line in time, or too long a one, is
                    // dropped unanswered.
                    let Ok((mut stream, Some(line))) = done else { continue };
                    let (status, reply) = judge(&line, redirect_uri, state);
                    let body = match status {
                        Judged::Back(_) => "<!doctype html><title>switchboard</title><p>\
                            Authorization received. You can close this window.",
                        _ => "",
                    };
                    let head = format!(
                        "HTTP/1.1 {reply}\r\ncontent-type: text/html; charset=utf-8\r\n\
                         content-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(head.as_bytes()).await;
                    if let Judged::Back(back) = status {
                        return Ok(back);
                    }
                }
            }
        }
    }
}

/// What a request line to the listener is.
enum Judged {
    /// The redirect the flow waits for.
    Back(Url),
    /// Anything else: answered and waited past.
    Other,
}

/// Judges a request line: the redirect (200), one with another `state` (400: a forged or stale
/// callback), or anything else (404).
fn judge(line: &str, redirect_uri: &str, state: Option<&str>) -> (Judged, &'static str) {
    let target = line
        .strip_prefix("GET ")
        .and_then(|l| l.split(' ').next())
        .unwrap_or("");
    let back = match Url::parse(redirect_uri).and_then(|r| r.join(target)) {
        Ok(back) if !target.is_empty() && is_redirect_to(&back, redirect_uri) => back,
        _ => return (Judged::Other, "404 Not Found"),
    };
    let said = back
        .query_pairs()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned());
    match state {
        Some(want) if said.as_deref() != Some(want) => (Judged::Other, "400 Bad Request"),
        _ => (Judged::Back(back), "200 OK"),
    }
}

/// Reads a connection's request line: `None` at the end of the stream or past
/// [`MAX_REQUEST_HEAD`] bytes without a line end.
async fn request_line(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0_u8; 1024];
    loop {
        if let Some(end) = buf.iter().position(|b| *b == b'\n') {
            let line = String::from_utf8_lossy(&buf[..end]);
            return Some(line.trim_end_matches('\r').to_owned());
        }
        if buf.len() >= MAX_REQUEST_HEAD {
            return None;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The system's opener for `url`: run directly, the URL its one argument, never through a
/// shell (`[SEC-URL-3]`).
fn opener(url: &Url) -> std::process::Command {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let mut command = std::process::Command::new(opener);
    command
        .arg(url.as_str())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    command
}

/// Starts the system's opener for `url`.
fn open_browser(url: &Url) -> std::io::Result<()> {
    opener(url).spawn().map(drop)
}

impl UserAgent for BrowserUserAgent {
    fn redirect_uri(&self) -> Option<String> {
        Some(self.redirect_uri.clone())
    }

    fn authorize<'a>(&'a self, url: Url, redirect_uri: &'a str) -> OAuthFuture<'a, Url> {
        Box::pin(async move {
            if !matches!(url.scheme(), "https" | "http") {
                return Err(OAuthError::UserAgent(format!(
                    "refusing to open a {} URL",
                    url.scheme()
                )));
            }
            let state = url
                .query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned());
            let opened = open_browser(&url);
            (self.on_open)(&url, opened.as_ref().map(|_| ()));
            self.redirect_within(redirect_uri, state.as_deref()).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends `request` to the listener and returns the answer's status line.
    async fn send(port: u16, request: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        s.write_all(request.as_bytes()).await.expect("write");
        let mut out = String::new();
        let _ = s.read_to_string(&mut out).await;
        out.lines().next().unwrap_or("").to_owned()
    }

    #[tokio::test]
    async fn the_listener_takes_the_redirect_and_answers_anything_else_404() {
        let agent = BrowserUserAgent::bind().await.expect("bind");
        let redirect = agent.redirect_uri().expect("a redirect URI");
        let port = Url::parse(&redirect).expect("url").port().expect("port");
        let waiting = {
            let redirect = redirect.clone();
            tokio::spawn(async move { agent.redirect(&redirect, None).await })
        };
        assert_eq!(
            send(port, "GET /elsewhere?code=x HTTP/1.1\r\n\r\n").await,
            "HTTP/1.1 404 Not Found"
        );
        assert_eq!(
            send(port, "GET /callback?code=c1&state=s1 HTTP/1.1\r\n\r\n").await,
            "HTTP/1.1 200 OK"
        );
        let back = waiting.await.expect("task").expect("the redirect");
        assert_eq!(back.query(), Some("code=c1&state=s1"));
    }

    #[tokio::test]
    async fn sec_url_2_a_url_that_is_not_http_is_never_opened() {
        let agent = BrowserUserAgent::bind().await.expect("bind");
        for (url, scheme) in [
            ("file:///etc/passwd", "file"),
            ("javascript:alert(1)", "javascript"),
            ("data:text/html,<script>alert(1)</script>", "data"),
            ("vbscript:msgbox(1)", "vbscript"),
            ("ftp://as.example/authorize", "ftp"),
        ] {
            let err = agent
                .authorize(Url::parse(url).expect("url"), "http://127.0.0.1/callback")
                .await
                .expect_err("refused");
            assert!(
                err.to_string()
                    .contains(&format!("refusing to open a {scheme} URL")),
                "{url}: {err}"
            );
        }
    }

    #[test]
    fn sec_url_3_the_url_is_opened_without_a_shell() {
        // Characters a shell would act on stay inside the one argument.
        let url = Url::parse("https://as.example/authorize?a=1&b=$(id);c=`id`|x").expect("url");
        let command = opener(&url);
        let program = command.get_program().to_string_lossy().into_owned();
        assert!(
            ["xdg-open", "open"].contains(&program.as_str()),
            "the opener itself, no shell: {program}"
        );
        let args: Vec<_> = command.get_args().collect();
        assert_eq!(args, [url.as_str()], "the URL is the one argument");
    }

    #[tokio::test(start_paused = true)]
    async fn the_wait_for_the_redirect_is_bounded() {
        let agent = BrowserUserAgent::bind()
            .await
            .expect("bind")
            .with_wait(Duration::from_secs(2));
        let redirect = agent.redirect_uri().expect("a redirect URI");
        let err = tokio::time::timeout(
            Duration::from_secs(5),
            agent.redirect_within(&redirect, None),
        )
        .await
        .expect("ended by its own bound")
        .expect_err("no redirect");
        assert!(err.to_string().contains("no redirect came back"), "{err}");
    }

    /// Starts waiting for the redirect with `state`; returns the port and the waiting task.
    async fn waiting(
        state: &'static str,
    ) -> (u16, tokio::task::JoinHandle<Result<Url, OAuthError>>) {
        let agent = BrowserUserAgent::bind().await.expect("bind");
        let redirect = agent.redirect_uri().expect("a redirect URI");
        let port = Url::parse(&redirect).expect("url").port().expect("port");
        let task = tokio::spawn(async move { agent.redirect(&redirect, Some(state)).await });
        (port, task)
    }

    /// Issue 25, finding 14: a forged callback with a wrong state, sent first, is answered 400
    /// and the login goes on to the real one.
    #[tokio::test]
    async fn finding_14_a_forged_callback_does_not_end_the_login() {
        let (port, task) = waiting("s1").await;
        for forged in [
            "GET /callback?code=evil&state=other HTTP/1.1\r\n\r\n",
            "GET /callback?code=evil HTTP/1.1\r\n\r\n",
            "GET /callback?error=access_denied HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(send(port, forged).await, "HTTP/1.1 400 Bad Request");
        }
        assert_eq!(
            send(port, "GET /callback?code=c1&state=s1 HTTP/1.1\r\n\r\n").await,
            "HTTP/1.1 200 OK"
        );
        let back = task.await.expect("task").expect("the redirect");
        assert_eq!(back.query(), Some("code=c1&state=s1"));
    }

    /// Issue 25, finding 14: idle connections, and one whose request line crosses the 8 KiB
    /// bound, do not hold up the browser's redirect.
    #[tokio::test]
    async fn finding_14_idle_and_oversized_connections_do_not_block_the_redirect() {
        let (port, task) = waiting("s1").await;
        let mut idle = Vec::new();
        for _ in 0..3 {
            idle.push(
                tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .expect("connect"),
            );
        }
        let long = format!("GET /callback?x={} HTTP/1.1", "a".repeat(MAX_REQUEST_HEAD));
        assert_eq!(send(port, &long).await, "", "dropped unanswered");
        assert_eq!(
            send(port, "GET /callback?code=c1&state=s1 HTTP/1.1\r\n\r\n").await,
            "HTTP/1.1 200 OK"
        );
        assert!(task.await.expect("task").is_ok());
        drop(idle);
    }

    /// Issue 25, finding 14: when [`MAX_PENDING`] connections sit idle, each is dropped after
    /// [`HEAD_TIMEOUT`] and the redirect that waited behind them is taken.
    #[tokio::test(start_paused = true)]
    async fn finding_14_a_connection_gets_its_head_timeout_and_no_more() {
        let (port, task) = waiting("s1").await;
        let mut idle = Vec::new();
        for _ in 0..MAX_PENDING {
            idle.push(
                tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .expect("connect"),
            );
        }
        let answer = tokio::time::timeout(
            HEAD_TIMEOUT * 3,
            send(port, "GET /callback?code=c1&state=s1 HTTP/1.1\r\n\r\n"),
        )
        .await
        .expect("answered once the idle connections timed out");
        assert_eq!(answer, "HTTP/1.1 200 OK");
        assert!(task.await.expect("task").is_ok());
        drop(idle);
    }
}
