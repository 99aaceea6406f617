//! The CLI's [`AuthorizationHandler`]: a one-shot HTTP listener on
//! `127.0.0.1` receives the redirect, while the user opens the printed URL
//! (a browser is started when a display is available).
//!
//! The port is fixed (a dynamically registered client stays valid across
//! runs only with the same redirect URI) and doubles as a lock: a second
//! process trying to log in at the same time cannot bind it and gets
//! [`AuthError::LoginInProgress`] instead of racing the first. A port that
//! cannot be bound but on which nothing listens is held by a connection (an
//! outgoing connection of any program may get it as its local port, and
//! keeps it for about a minute after it closes):
//! [`AuthError::LoopbackPortHeld`] says so rather than blame a login.
//!
//! Connections are served concurrently, each on its own task (at most
//! [`MAX_CONNECTIONS`] at a time) with a short read deadline
//! ([`READ_DEADLINE`]): an idle or slow connection (a browser's
//! speculative pre-connection, or another local process) cannot hold up
//! the real callback. The `state` is compared in constant time.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use mcp_transport::BoxFuture;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use url::Url;

use crate::authorize::{AuthorizationHandler, AuthorizationRequest, AuthorizationResponse};
use crate::error::AuthError;
use crate::pkce::constant_time_eq;

/// The default loopback port.
pub const DEFAULT_LOOPBACK_PORT: u16 = 33418;
/// The path of the redirect URI.
const CALLBACK_PATH: &str = "/callback";
/// Bound on one callback request's head.
const MAX_REQUEST_HEAD: usize = 8 * 1024;
/// Connections served at the same time; more wait in the listen backlog
/// until one is done (each is done within [`READ_DEADLINE`]).
const MAX_CONNECTIONS: usize = 16;
/// How long a connection may take to send its request head.
const READ_DEADLINE: Duration = Duration::from_secs(5);
/// How long writing the small answer may take.
const WRITE_DEADLINE: Duration = Duration::from_secs(5);
/// How long a connection to a busy port may take to be accepted or refused
/// (on loopback, either happens at once).
const PROBE_DEADLINE: Duration = Duration::from_secs(2);

/// Prints the authorization URL, opens a browser when it can, and waits for
/// the redirect on `http://127.0.0.1:<port>/callback`.
#[derive(Debug, Clone)]
pub struct LoopbackBrowserFlow {
    port: u16,
    timeout: Duration,
    open_browser: bool,
}

impl Default for LoopbackBrowserFlow {
    fn default() -> Self {
        Self {
            port: DEFAULT_LOOPBACK_PORT,
            timeout: Duration::from_secs(300),
            open_browser: true,
        }
    }
}

impl LoopbackBrowserFlow {
    /// Port [`DEFAULT_LOOPBACK_PORT`], five minutes to complete, a browser
    /// opened when a display is available.
    pub fn new() -> Self {
        Self::default()
    }

    /// Listens on `port` instead.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// How long to wait for the redirect.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Whether to try `xdg-open` / `open` (the URL is printed either way).
    pub fn open_browser(mut self, open: bool) -> Self {
        self.open_browser = open;
        self
    }

    async fn run(&self, request: AuthorizationRequest) -> Result<AuthorizationResponse, AuthError> {
        let listener = match TcpListener::bind(("127.0.0.1", self.port)).await {
            Ok(listener) => listener,
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                return Err(busy_port(self.port).await);
            }
            Err(e) => return Err(AuthError::Io(e)),
        };
        // The URL holds no secret (PKCE sends only the challenge).
        let _ = writeln!(
            std::io::stderr().lock(),
            "To authorize, open this URL in a browser:\n\n  {}\n",
            request.url()
        );
        if self.open_browser {
            open_browser(request.url());
        }
        let expected: Arc<str> = Arc::from(request.state());
        let wait = async {
            // Every connection on its own task: dropping the set (the
            // callback arrived, or the wait timed out) aborts the rest.
            let mut connections = JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept(), if connections.len() < MAX_CONNECTIONS => {
                        let (stream, _) = accepted?;
                        connections.spawn(answer(stream, expected.clone()));
                    }
                    Some(done) = connections.join_next() => {
                        if let Ok(Some(response)) = done {
                            return Ok::<_, AuthError>(response);
                        }
                    }
                }
            }
        };
        tokio::time::timeout(self.timeout, wait)
            .await
            .map_err(|_| AuthError::AuthorizationTimedOut {
                seconds: self.timeout.as_secs(),
            })?
    }
}

impl AuthorizationHandler for LoopbackBrowserFlow {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    fn authorize(
        &self,
        request: AuthorizationRequest,
    ) -> BoxFuture<'_, Result<AuthorizationResponse, AuthError>> {
        Box::pin(self.run(request))
    }
}

/// Why `port` could not be bound: a listener there (a connection to it is
/// accepted) is taken for another login; a refused connection means only
/// connections hold the port. The probe sends nothing, so a waiting login
/// drops it after its read deadline.
async fn busy_port(port: u16) -> AuthError {
    let probe = tokio::time::timeout(PROBE_DEADLINE, TcpStream::connect(("127.0.0.1", port)));
    match probe.await {
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            AuthError::LoopbackPortHeld { port }
        }
        _ => AuthError::LoginInProgress { port },
    }
}

/// Reads one request; returns the authorization response when it is the
/// callback with our `state`. Anything else (a favicon, a stray or forged
/// callback, a connection that sends nothing within [`READ_DEADLINE`]) is
/// answered or dropped, and ignored.
async fn answer(mut stream: TcpStream, expected_state: Arc<str>) -> Option<AuthorizationResponse> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    let read = tokio::time::timeout(READ_DEADLINE, async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REQUEST_HEAD {
            let n = stream.read(&mut buf).await.ok()?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        Some(())
    })
    .await;
    if !matches!(read, Ok(Some(()))) {
        return None;
    }
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut parts = line.split_ascii_whitespace();
    let (method, target) = (parts.next(), parts.next());
    let callback = match (method, target) {
        (Some("GET"), Some(target)) => Url::parse("http://127.0.0.1")
            .ok()
            .and_then(|base| base.join(target).ok())
            .filter(|url| url.path() == CALLBACK_PATH),
        _ => None,
    };
    let Some(callback) = callback else {
        reply(&mut stream, "404 Not Found", "Not found.").await;
        return None;
    };
    let response = AuthorizationResponse::from_redirect(&callback);
    let state_matches = response
        .state()
        .is_some_and(|state| constant_time_eq(state.as_bytes(), expected_state.as_bytes()));
    if !state_matches {
        reply(
            &mut stream,
            "400 Bad Request",
            "This authorization response does not belong to the login in progress.",
        )
        .await;
        return None;
    }
    let text = if response.error().is_some() {
        "The authorization was not granted. You can close this window."
    } else {
        "Authorization received. You can close this window and return to the terminal."
    };
    reply(&mut stream, "200 OK", text).await;
    Some(response)
}

async fn reply(stream: &mut TcpStream, status: &str, text: &str) {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = tokio::time::timeout(WRITE_DEADLINE, async {
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
}

/// Starts the platform's URL opener when there is a display, never
/// through a shell; its exit is awaited on a thread so no zombie is left.
fn open_browser(url: &Url) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        "xdg-open"
    } else {
        return;
    };
    let spawned = std::process::Command::new(opener)
        .arg(url.as_str())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = spawned {
        std::thread::spawn(move || child.wait());
    }
}
