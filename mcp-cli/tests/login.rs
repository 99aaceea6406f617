//! A successful `mcp login` through the binary, end to end, on 127.0.0.1
//! only: mcp-auth's fake authorization server (its `tests/support`, which
//! auto-approves: `/authorize` redirects at once with `code` and `state`), a
//! protected MCP server (a gate answering 401 with `resource_metadata` until
//! it gets a token that authorization server issued, then forwarding to the
//! testkit's HTTP server), and this test as the browser: it reads the
//! authorization URL `mcp login` prints and follows the redirect to the CLI's
//! listener on the fixed port 33418 (waiting, if need be, for a closed
//! connection of another program to let go of it). Then stored credentials
//! carry later commands until `mcp logout` (a second one says nothing was
//! stored), the same works for the server named by its URL alone (`mcp
//! login --url`, `--url` commands, `mcp logout --url`), and no secret is
//! ever printed.

// On macOS the loopback flow opens a real browser whatever the environment.
#![cfg(not(target_os = "macos"))]

#[path = "../../mcp-auth/tests/support/fixture.rs"]
mod support;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{
    AUTHORIZATION, CONNECTION, CONTENT_LENGTH, HOST, TRANSFER_ENCODING, WWW_AUTHENTICATE,
};
use axum::http::{HeaderName, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use mcp_testkit::{Behavior, HttpFakeServer, HttpServerOptions, RunningHttpServer, Script};
use serde_json::json;
use support::{AsConfig, AuthServer, TokenDb};
use tempfile::TempDir;
use tokio::io::{AsyncRead, AsyncReadExt as _};
use tokio::sync::watch;
use tokio::task::JoinHandle;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
/// The CLI's fixed redirect URI (`LoopbackBrowserFlow`'s default port).
const CALLBACK_PORT: u16 = 33418;
/// Bound on every wait: a process's exit, a line of output, an HTTP exchange.
const DEADLINE: Duration = Duration::from_secs(20);
/// Bound on the wait for the callback port: longer than Linux's TIME_WAIT.
const PORT_DEADLINE: Duration = Duration::from_secs(75);
/// Bound on what is kept of one output stream of the CLI.
const MAX_OUTPUT: usize = 64 * 1024;
/// Bound on a request body the gate forwards.
const MAX_BODY: usize = 1 << 20;
/// Where the gate serves its protected resource metadata.
const PRM_PATH: &str = "/.well-known/oauth-protected-resource/mcp";
/// What every secret the fake authorization server hands out contains.
const SECRET_MARK: &str = "SEKRIT";

// ------------------------------------------------------------ the MCP server

/// The protected MCP server: checks bearer tokens, forwards the rest.
struct Gate {
    base: String,
    issuer: String,
    trusted: TokenDb,
    backend: String,
    client: reqwest::Client,
    /// The `Authorization` of every request to `/mcp`, in order.
    seen: Mutex<Vec<Option<String>>>,
}

struct ProtectedServer {
    gate: Arc<Gate>,
    backend: RunningHttpServer,
    task: JoinHandle<()>,
}

impl ProtectedServer {
    /// A server whose metadata names `auth` and which accepts its tokens.
    async fn start(auth: &AuthServer) -> Self {
        let echo = json!({
            "name": "echo",
            "description": "Echoes text.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        });
        let script = Script::dual().tool_json(echo, Behavior::Echo);
        // No standalone GET stream: the gate buffers whole answers.
        let options = HttpServerOptions {
            get_stream: false,
            ..HttpServerOptions::default()
        };
        let backend = HttpFakeServer::start(script, options).await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let gate = Arc::new(Gate {
            base: format!("http://{}", listener.local_addr().unwrap()),
            issuer: auth.issuer(),
            trusted: auth.db.clone(),
            backend: format!("http://{}", backend.addr()),
            client: loopback_client(reqwest::redirect::Policy::none()),
            seen: Mutex::default(),
        });
        let app = axum::Router::new()
            .fallback(guard)
            .with_state(Arc::clone(&gate));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            gate,
            backend,
            task,
        }
    }

    fn url(&self) -> String {
        format!("{}/mcp", self.gate.base)
    }

    /// The `Authorization` of every request to `/mcp` so far.
    fn seen(&self) -> Vec<Option<String>> {
        self.gate.seen.lock().unwrap().clone()
    }
}

impl Drop for ProtectedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// An HTTP client that never goes through a proxy (everything is loopback).
fn loopback_client(redirects: reqwest::redirect::Policy) -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(redirects)
        .timeout(DEADLINE)
        .build()
        .unwrap()
}

/// Headers of one hop only, not forwarded.
fn hop_by_hop(name: &HeaderName) -> bool {
    [HOST, CONNECTION, CONTENT_LENGTH, TRANSFER_ENCODING].contains(name)
}

async fn guard(State(gate): State<Arc<Gate>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if parts.method == Method::GET && parts.uri.path() == PRM_PATH {
        let resource = format!("{}/mcp", gate.base);
        let doc = json!({"resource": resource, "authorization_servers": [gate.issuer]});
        return axum::Json(doc).into_response();
    }
    if parts.uri.path() != "/mcp" {
        return StatusCode::NOT_FOUND.into_response();
    }
    let authorization = parts
        .headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    gate.seen.lock().unwrap().push(authorization.clone());
    let trusted = authorization
        .as_deref()
        .and_then(|a| a.strip_prefix("Bearer "))
        .is_some_and(|token| gate.trusted.scopes(token).is_some());
    if !trusted {
        let challenge = format!("Bearer resource_metadata=\"{}{PRM_PATH}\"", gate.base);
        return (StatusCode::UNAUTHORIZED, [(WWW_AUTHENTICATE, challenge)]).into_response();
    }
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let target = match parts.uri.path_and_query() {
        Some(pq) => format!("{}{pq}", gate.backend),
        None => format!("{}/mcp", gate.backend),
    };
    let mut forward = gate.client.request(parts.method.clone(), target);
    for (name, value) in parts.headers.iter().filter(|(n, _)| !hop_by_hop(n)) {
        forward = forward.header(name, value);
    }
    let Ok(answer) = forward.body(body).send().await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let (status, headers) = (answer.status(), answer.headers().clone());
    let Ok(bytes) = answer.bytes().await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = status;
    for (name, value) in headers.iter().filter(|(n, _)| !hop_by_hop(n)) {
        response.headers_mut().append(name.clone(), value.clone());
    }
    response
}

// ------------------------------------------------------------ the CLI

/// One output stream of a child, read in the background; at most
/// [`MAX_OUTPUT`] bytes are kept (the rest is drained and counted).
struct Collected {
    text: watch::Receiver<String>,
    reader: JoinHandle<usize>,
}

fn collect(mut stream: impl AsyncRead + Unpin + Send + 'static) -> Collected {
    let (tx, text) = watch::channel(String::new());
    let reader = tokio::spawn(async move {
        let (mut kept, mut total, mut buf) = (Vec::new(), 0usize, [0u8; 4096]);
        while let Ok(n @ 1..) = stream.read(&mut buf).await {
            total += n;
            let room = MAX_OUTPUT.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
            tx.send_replace(String::from_utf8_lossy(&kept).into_owned());
        }
        total
    });
    Collected { text, reader }
}

impl Collected {
    /// Everything, once the stream ended.
    async fn finish(self, what: &str) -> String {
        let total = tokio::time::timeout(DEADLINE, self.reader)
            .await
            .unwrap_or_else(|_| panic!("the output of `{what}` did not end"))
            .unwrap();
        assert!(total <= MAX_OUTPUT, "`{what}` wrote {total} bytes");
        self.text.borrow().clone()
    }
}

#[derive(Debug)]
struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// A running `mcp` (killed when dropped, so a failing test leaves none).
struct Running {
    what: String,
    child: tokio::process::Child,
    stdout: Collected,
    stderr: Collected,
}

impl Running {
    /// The complete line of stderr that starts with `prefix` (after
    /// indentation), waiting at most [`DEADLINE`].
    async fn stderr_line(&mut self, prefix: &str) -> String {
        let began = Instant::now();
        loop {
            let line = {
                let text = self.stderr.text.borrow_and_update();
                text.split_inclusive('\n')
                    .find(|l| l.ends_with('\n') && l.trim_start().starts_with(prefix))
                    .map(|l| l.trim().to_owned())
            };
            if let Some(line) = line {
                return line;
            }
            let left = DEADLINE.saturating_sub(began.elapsed());
            let why = match tokio::time::timeout(left, self.stderr.text.changed()).await {
                Ok(Ok(())) => continue,
                Ok(Err(_)) => "its stderr ended",
                Err(_) => "the deadline passed",
            };
            let _ = self.child.start_kill();
            let exit = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
            panic!(
                "`{}` printed no line starting with {prefix:?}: {why} (exit: {exit:?}); stderr:\n{}",
                self.what,
                self.stderr.text.borrow().as_str()
            );
        }
    }

    async fn finish(mut self) -> Output {
        let status = match tokio::time::timeout(DEADLINE, self.child.wait()).await {
            Ok(status) => status.unwrap(),
            Err(_) => {
                let _ = self.child.start_kill();
                panic!(
                    "`{}` did not exit within {DEADLINE:?}; stderr:\n{}",
                    self.what,
                    self.stderr.text.borrow().as_str()
                );
            }
        };
        Output {
            code: status.code(),
            stdout: self.stdout.finish(&self.what).await,
            stderr: self.stderr.finish(&self.what).await,
        }
    }
}

/// Private HOME, XDG directories and configuration for the CLI.
struct Sandbox {
    dir: TempDir,
    /// Everything the CLI printed, to check that no secret is among it.
    transcript: Mutex<Vec<String>>,
}

impl Sandbox {
    /// The configuration names the server at `url` `srv`.
    fn new(url: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "xdg", "data", "work"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let config = json!({"mcpServers": {"srv": {"url": url}}});
        std::fs::write(dir.path().join("servers.json"), config.to_string()).unwrap();
        Self {
            dir,
            transcript: Mutex::default(),
        }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// `FileTokenStore::default_location()` under this sandbox.
    fn oauth_dir(&self) -> PathBuf {
        self.path("data").join("mcp").join("oauth")
    }

    /// The credential records (`.lock` and temporary files left out).
    fn records(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.oauth_dir()) else {
            return Vec::new();
        };
        entries
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                !name.starts_with('.') && name.ends_with(".json")
            })
            .collect()
    }

    fn spawn(&self, args: &[&str]) -> Running {
        let mut cmd = tokio::process::Command::new(MCP);
        cmd.current_dir(self.path("work"))
            .arg("--config")
            .arg(self.path("servers.json"))
            .args(args)
            .env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("xdg"))
            .env("XDG_DATA_HOME", self.path("data"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        // No browser, no proxy between the CLI and the loopback servers, no
        // environment-dependent logs or colours.
        for name in [
            "DISPLAY",
            "WAYLAND_DISPLAY",
            "BROWSER",
            "RUST_LOG",
            "NO_COLOR",
            "http_proxy",
            "HTTP_PROXY",
            "https_proxy",
            "HTTPS_PROXY",
            "all_proxy",
            "ALL_PROXY",
        ] {
            cmd.env_remove(name);
        }
        let mut child = cmd.spawn().unwrap();
        Running {
            what: format!("mcp {}", args.join(" ")),
            stdout: collect(child.stdout.take().unwrap()),
            stderr: collect(child.stderr.take().unwrap()),
            child,
        }
    }

    /// Waits for `running` and keeps what it printed.
    async fn finish(&self, running: Running) -> Output {
        let out = running.finish().await;
        let mut transcript = self.transcript.lock().unwrap();
        transcript.push(out.stdout.clone());
        transcript.push(out.stderr.clone());
        out
    }

    async fn run(&self, args: &[&str]) -> Output {
        self.finish(self.spawn(args)).await
    }
}

/// Fails clearly, rather than hanging or racing, when something else holds
/// the CLI's fixed callback port. Any program's outgoing connection may get
/// the port as its local end, and a closed one keeps it for TIME_WAIT (60 s
/// on Linux) when its side closed first: so it is tried again for up to
/// [`PORT_DEADLINE`], and a failure names the sockets that hold it.
fn assert_callback_port_free() {
    let began = std::time::Instant::now();
    loop {
        match std::net::TcpListener::bind(("127.0.0.1", CALLBACK_PORT)) {
            Ok(_) => return,
            Err(e) if began.elapsed() > PORT_DEADLINE => panic!(
                "127.0.0.1:{CALLBACK_PORT}, the fixed redirect port of `mcp login`, is not free \
                 ({e}); held by: {}",
                holders(CALLBACK_PORT)
            ),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// The TCP sockets whose local port is `port`, as "state → remote port"
/// (from /proc/net/tcp and tcp6), for a failure message.
fn holders(port: u16) -> String {
    const STATES: [&str; 12] = [
        "?",
        "ESTABLISHED",
        "SYN_SENT",
        "SYN_RECV",
        "FIN_WAIT1",
        "FIN_WAIT2",
        "TIME_WAIT",
        "CLOSE",
        "CLOSE_WAIT",
        "LAST_ACK",
        "LISTEN",
        "CLOSING",
    ];
    let port_of = |address: &str| {
        let hex = address.rsplit(':').next()?;
        u16::from_str_radix(hex, 16).ok()
    };
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [_, local, remote, state, ..] = fields[..] else {
                continue;
            };
            if port_of(local) == Some(port) {
                let state = usize::from_str_radix(state, 16)
                    .ok()
                    .and_then(|i| STATES.get(i))
                    .unwrap_or(&"?");
                let remote = port_of(remote).map_or("?".to_owned(), |p| p.to_string());
                found.push(format!("{state} → port {remote}"));
            }
        }
    }
    if found.is_empty() {
        "no socket listed".to_owned()
    } else {
        found.join(", ")
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

// ------------------------------------------------------------ the test

const LOGIN_HINT: &str = "run `mcp login srv` first";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_stores_credentials_that_later_commands_use_until_logout() {
    let auth = AuthServer::start(AsConfig {
        issue_refresh: true,
        ..AsConfig::default()
    })
    .await;
    let server = ProtectedServer::start(&auth).await;
    let sandbox = Sandbox::new(&server.url());
    let call = ["call", "srv", "echo", "text=hello"];

    // Before login: authentication required (3), with the hint.
    let out = sandbox.run(&call).await;
    assert_eq!(out.code, Some(3), "{out:?}");
    assert!(out.stderr.contains(LOGIN_HINT), "{out:?}");
    assert!(out.stderr.contains("sign-in required"), "{out:?}");
    assert!(auth.log.to("/authorize").is_empty());
    // Without a login nothing is registered with the authorization server.
    assert!(auth.log.to("/register").is_empty());

    // Login, with this test as the browser.
    assert_callback_port_free();
    let began = Instant::now();
    let mut login = sandbox.spawn(&["login", "srv"]);
    let url = login
        .stderr_line(&format!("{}/authorize?", auth.issuer()))
        .await;
    let browser = loopback_client(reqwest::redirect::Policy::limited(3));
    let page = browser.get(&url).send().await.unwrap();
    let landed = page.url().clone();
    let status = page.status();
    let text = page.text().await.unwrap();
    assert_eq!(
        landed.origin().ascii_serialization(),
        format!("http://127.0.0.1:{CALLBACK_PORT}")
    );
    assert_eq!(landed.path(), "/callback");
    assert!(landed.query_pairs().any(|(k, _)| k == "code"), "{landed}");
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(text.contains("Authorization received"), "{text}");
    let out = sandbox.finish(login).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.starts_with("logged in to `srv`"), "{out:?}");
    eprintln!("login took {:?}", began.elapsed());

    // One authorization for this server, redirected to the fixed URI, and
    // one code exchanged.
    let authorizations = auth.log.to("/authorize");
    assert_eq!(authorizations.len(), 1);
    let redirect_uri = format!("http://127.0.0.1:{CALLBACK_PORT}/callback");
    assert_eq!(
        authorizations[0].query("redirect_uri"),
        Some(redirect_uri.as_str())
    );
    assert_eq!(
        authorizations[0].query("resource"),
        Some(server.url().as_str())
    );
    let exchanges = auth.log.grants("/token", "authorization_code");
    assert_eq!(exchanges.len(), 1);
    assert_eq!(auth.log.to("/register").len(), 1, "login registers once");
    let code = exchanges[0].form("code").unwrap().to_owned();
    let verifier = exchanges[0].form("code_verifier").unwrap().to_owned();

    // The record: private, named by hashes, without the one-time secrets
    // of the flow.
    let records = sandbox.records();
    assert_eq!(records.len(), 1, "{records:?}");
    let record = &records[0];
    assert_eq!(mode(record), 0o600, "{record:?}");
    assert_eq!(mode(&sandbox.oauth_dir()), 0o700);
    let name = record.file_name().unwrap().to_string_lossy().into_owned();
    assert!(!name.contains("127.0.0.1"), "{name}");
    let stored = std::fs::read_to_string(record).unwrap();
    assert!(!stored.contains(&code), "the authorization code was stored");
    assert!(!stored.contains(&verifier), "the PKCE verifier was stored");

    // The stored token now carries a call through the gate to the server.
    let before = server.seen().len();
    let out = sandbox.run(&call).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "hello\n");
    let token = server.seen()[before..]
        .iter()
        .flatten()
        .filter_map(|a| a.strip_prefix("Bearer "))
        .find(|t| auth.db.scopes(t).is_some())
        .expect("the call sent no token the authorization server issued")
        .to_owned();
    assert!(token.contains(SECRET_MARK), "{token}");
    assert!(
        stored.contains(&token),
        "the token used is not the stored one"
    );
    let bearer = format!("Bearer {token}");
    assert!(
        server
            .backend
            .requests
            .requests()
            .iter()
            .any(|r| r.header("authorization") == Some(bearer.as_str())),
        "the MCP server never saw the token"
    );
    // Used as stored: no new authorization, no new code.
    assert_eq!(auth.log.to("/authorize").len(), 1);
    assert_eq!(auth.log.grants("/token", "authorization_code").len(), 1);

    // Logout forgets the record; authentication is required again.
    let out = sandbox.run(&["logout", "srv"]).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        "logged out of `srv` (its stored credentials are gone)\n"
    );
    assert_eq!(sandbox.records(), Vec::<PathBuf>::new());
    let before = server.seen().len();
    let out = sandbox.run(&call).await;
    assert_eq!(out.code, Some(3), "{out:?}");
    assert!(out.stderr.contains(LOGIN_HINT), "{out:?}");
    assert!(
        server.seen()[before..].iter().all(Option::is_none),
        "a token was sent after logout"
    );
    // A second logout finds nothing to forget, and says so.
    let out = sandbox.run(&["logout", "srv"]).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        "nothing was stored for `srv`: there were no credentials to forget\n"
    );

    // The same server as if it were in no file, by its URL: the sign-in
    // hint names a command that works, `login --url` signs in, `--url`
    // commands use what it stored, `logout --url` forgets it.
    let url_call = ["call", "--url", &server.url(), "echo", "text=by url"];
    let out = sandbox.run(&url_call).await;
    assert_eq!(out.code, Some(3), "{out:?}");
    let hint = format!("run `mcp login --url {}` first", server.url());
    assert!(out.stderr.contains(&hint), "{out:?}");
    assert_callback_port_free();
    let mut login = sandbox.spawn(&["login", "--url", &server.url()]);
    let url = login
        .stderr_line(&format!("{}/authorize?", auth.issuer()))
        .await;
    let page = browser.get(&url).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let out = sandbox.finish(login).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .starts_with(&format!("logged in to {}", server.url())),
        "{out:?}"
    );
    assert_eq!(sandbox.records().len(), 1);
    let out = sandbox.run(&url_call).await;
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), "by url\n"),
        "{out:?}"
    );
    let out = sandbox.run(&["logout", "--url", &server.url()]).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        format!(
            "logged out of {} (its stored credentials are gone)\n",
            server.url()
        )
    );
    assert_eq!(sandbox.records(), Vec::<PathBuf>::new());

    // No secret ever reached the terminal.
    for printed in sandbox.transcript.lock().unwrap().iter() {
        assert!(
            !printed.contains(SECRET_MARK),
            "a secret was printed:\n{printed}"
        );
        assert!(
            !printed.contains(&token),
            "the token was printed:\n{printed}"
        );
        assert!(!printed.contains(&verifier), "the verifier was printed");
    }
}
