//! The user agent for a person at this machine: the system browser opens the authorization
//! URL, and a redirect listener on 127.0.0.1 (a port of its own) receives the code
//! (RFC 8252 §7.3, loopback redirect).
//!
//! The opener (`xdg-open`, `open` on macOS) is started directly, the URL one argument, never
//! through a shell (`[SEC-URL-3]`); only `http` and `https` URLs are opened (`[SEC-URL-1]`,
//! `[SEC-URL-2]`). The listener answers anything that is not the redirect URI 404 and waits on,
//! up to a bound (five minutes by default).

use std::fmt;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;
use url::Url;

use super::agent::{OAuthFuture, UserAgent, is_redirect_to};
use super::error::OAuthError;

/// How long the browser flow waits for the redirect, unless told otherwise.
pub(crate) const DEFAULT_BROWSER_WAIT: Duration = Duration::from_secs(300);

/// The most bytes of a redirect's request line and headers read.
const MAX_REQUEST_HEAD: usize = 8192;

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

    /// Waits for the redirect to `redirect_uri`, at most the agent's wait.
    async fn redirect_within(&self, redirect_uri: &str) -> Result<Url, OAuthError> {
        tokio::time::timeout(self.wait, self.redirect(redirect_uri))
            .await
            .map_err(|_| {
                OAuthError::UserAgent(format!("no redirect came back within {:?}", self.wait))
            })?
    }

    /// Waits for the redirect to `redirect_uri` on the listener.
    async fn redirect(&self, redirect_uri: &str) -> Result<Url, OAuthError> {
        let listener = self.listener.lock().await;
        loop {
            let (mut stream, _) = listener
                .accept()
                .await
                .map_err(|e| OAuthError::UserAgent(format!("redirect listener: {e}")))?;
            let mut buf = vec![0_u8; MAX_REQUEST_HEAD];
            let n = stream.read(&mut buf).await.unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]);
            let target = head
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("GET "))
                .and_then(|l| l.split(' ').next())
                .unwrap_or("");
            let Ok(back) = Url::parse(redirect_uri).and_then(|r| r.join(target)) else {
                continue;
            };
            if !is_redirect_to(&back, redirect_uri) {
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            }
            let body = "<!doctype html><title>switchboard</title><p>Authorization received. \
                        You can close this window.";
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes()).await;
            return Ok(back);
        }
    }
}

/// Starts the system's opener for `url`: directly, the URL one argument, never through a shell.
fn open_browser(url: &Url) -> std::io::Result<()> {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    std::process::Command::new(opener)
        .arg(url.as_str())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(drop)
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
            let opened = open_browser(&url);
            (self.on_open)(&url, opened.as_ref().map(|_| ()));
            self.redirect_within(redirect_uri).await
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
            tokio::spawn(async move { agent.redirect(&redirect).await })
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
    async fn a_url_that_is_not_http_is_never_opened() {
        let agent = BrowserUserAgent::bind().await.expect("bind");
        let url = Url::parse("file:///etc/passwd").expect("url");
        let err = agent
            .authorize(url, "http://127.0.0.1/callback")
            .await
            .expect_err("refused");
        assert!(
            err.to_string().contains("refusing to open a file URL"),
            "{err}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_wait_for_the_redirect_is_bounded() {
        let agent = BrowserUserAgent::bind()
            .await
            .expect("bind")
            .with_wait(Duration::from_secs(2));
        let redirect = agent.redirect_uri().expect("a redirect URI");
        let err = tokio::time::timeout(Duration::from_secs(5), agent.redirect_within(&redirect))
            .await
            .expect("ended by its own bound")
            .expect_err("no redirect");
        assert!(err.to_string().contains("no redirect came back"), "{err}");
    }
}
