//! `cargo xtask interop`: our client against real servers installed from
//! the registries, over every transport they offer, in both eras where they
//! speak both. Prints a matrix (server × transport × era × check).
//!
//! The client side is the `interop` example of `mcp-session` (public API
//! only). Servers: npm `server-everything` (stdio, Streamable HTTP, HTTP+SSE),
//! `server-filesystem` (roots round trip), `server-memory`; PyPI `mcp` and
//! `fastmcp` (stdio and HTTP, both eras). Ports are chosen at run time; every
//! server started here is killed by PID at the end, even on failure.
//!
//! Then real OAuth authorization servers, each in front of a small MCP server
//! of ours (`interop/python/auth_server.py` on the Python SDK's
//! `mcp.server.auth`, `interop/typescript/auth_server.mjs` on the TypeScript
//! SDK's demo in-memory provider, as shipped and with short-lived tokens):
//! the `mcp` binary signs in with `mcp login --url` while this task plays the
//! browser (it GETs the printed authorization URL and follows the redirect to
//! the CLI's loopback listener), uses the stored token, refreshes it once the
//! server says it expired, and signs out. The CLI runs with its own HOME and
//! XDG directories under `target/interop/`, never the user's.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream, ToSocketAddrs as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::node;

/// One row group of the matrix.
struct Case {
    server: &'static str,
    transport: &'static str,
    era: &'static str,
    /// How the client reaches the server.
    target: Target,
    /// An HTTP server to start first.
    start: Option<Launch>,
    /// A tool (and `key=value` arguments) the `mcp` binary calls.
    cli_call: &'static [&'static str],
}

/// How to start a server process: program, arguments, extra environment.
struct Launch {
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

enum Target {
    Stdio(Vec<String>),
    Url { url: String, sse: bool },
}

/// A server process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Returns (passed, failed) check counts after printing the matrix.
pub(crate) fn run(root: &Path) -> anyhow::Result<(u64, u64)> {
    let tools = node::ensure_tools(root)?;
    let python = ensure_venv(root)?;
    let client = build_client(root)?;
    let mcp = build_cli(root)?;
    let nm = tools.dir.join("node_modules");
    let node = nm.join(".bin/node");
    let everything = nm.join("@modelcontextprotocol/server-everything/dist/index.js");
    let filesystem = nm.join("@modelcontextprotocol/server-filesystem/dist/index.js");
    let memory = nm.join("@modelcontextprotocol/server-memory/dist/index.js");
    let py_server = root.join("interop/python/server.py");
    let fm_server = root.join("interop/python/fastmcp_server.py");
    let scratch = root.join("target/interop");
    std::fs::create_dir_all(&scratch)?;
    let memory_file = scratch.join("memory.json");
    let _ = std::fs::remove_file(&memory_file);

    let s = |p: &Path| p.display().to_string();
    let mut cases = vec![
        stdio(
            "server-everything",
            "auto",
            vec![s(&node), s(&everything), "stdio".into()],
        ),
        http(
            "server-everything",
            "auto",
            &node,
            vec![s(&everything), "streamableHttp".into()],
            "/mcp",
            false,
            true,
        ),
        http(
            "server-everything",
            "auto",
            &node,
            vec![s(&everything), "sse".into()],
            "/sse",
            true,
            true,
        ),
        stdio(
            "server-filesystem",
            "auto",
            vec![s(&node), s(&filesystem), s(&scratch)],
        ),
        stdio("server-memory", "auto", vec![s(&node), s(&memory)]),
        stdio(
            "python mcp",
            "modern",
            vec![s(&python), s(&py_server), "stdio".into()],
        ),
        stdio(
            "python mcp",
            "legacy",
            vec![s(&python), s(&py_server), "stdio".into()],
        ),
        http(
            "python mcp",
            "modern",
            &python,
            vec![s(&py_server), "streamable-http".into()],
            "/mcp",
            false,
            false,
        ),
        http(
            "python mcp",
            "legacy",
            &python,
            vec![s(&py_server), "streamable-http".into()],
            "/mcp",
            false,
            false,
        ),
        stdio(
            "fastmcp",
            "modern",
            vec![s(&python), s(&fm_server), "stdio".into()],
        ),
        stdio(
            "fastmcp",
            "legacy",
            vec![s(&python), s(&fm_server), "stdio".into()],
        ),
        http(
            "fastmcp",
            "modern",
            &python,
            vec![s(&fm_server), "http".into()],
            "/mcp",
            false,
            false,
        ),
        http(
            "fastmcp",
            "legacy",
            &python,
            vec![s(&fm_server), "http".into()],
            "/mcp",
            false,
            false,
        ),
    ];
    let mut passed = 0u64;
    let mut failed = 0u64;
    println!(
        "{:<18} {:<9} {:<7} {:<28} {:<6} detail",
        "server", "transport", "era", "check", "status"
    );
    for case in &mut cases {
        let rows = run_case(&client, &mcp, case, &memory_file)?;
        for (check, status, detail) in rows {
            match status.as_str() {
                "pass" => passed += 1,
                "fail" => failed += 1,
                _ => {}
            }
            let mut detail = detail;
            detail.truncate(60);
            println!(
                "{:<18} {:<9} {:<7} {:<28} {:<6} {detail}",
                case.server, case.transport, case.era, check, status
            );
        }
    }
    for case in oauth_cases(&python, &node, root) {
        for (check, status, detail) in run_oauth_case(&mcp, &case, &scratch) {
            match status.as_str() {
                "pass" => passed += 1,
                "fail" => {
                    failed += 1;
                    // Whole, on stderr: the matrix cuts details short.
                    eprintln!(
                        "interop: {} / {check}: {detail} (server log: target/interop/oauth-{}.log)",
                        case.server, case.slug
                    );
                }
                _ => {}
            }
            let detail: String = detail.chars().take(60).collect();
            println!(
                "{:<18} {:<9} {:<7} {:<28} {:<6} {detail}",
                case.server, "http", "auto", check, status
            );
        }
    }
    // `mcp serve --stdio` behind the official SDKs' hosts.
    let (gw_passed, gw_failed) = crate::gateway::run(root)?;
    passed += gw_passed;
    failed += gw_failed;
    println!("interop: {passed} passed, {failed} failed");
    Ok((passed, failed))
}

fn stdio(server: &'static str, era: &'static str, command: Vec<String>) -> Case {
    Case {
        server,
        transport: "stdio",
        era,
        target: Target::Stdio(command),
        start: None,
        cli_call: cli_call_for(server),
    }
}

/// What `mcp call` asks of each server (a tool every version of it has).
fn cli_call_for(server: &str) -> &'static [&'static str] {
    match server {
        "server-everything" => &["echo", "message=hello from mcp"],
        "server-filesystem" => &["list_allowed_directories"],
        "server-memory" => &["read_graph"],
        _ => &["echo", "text=hello from mcp"],
    }
}

/// An HTTP case; the port is filled in at start. `port_env`: the server takes
/// its port from `PORT` (npm) rather than as the last argument (Python).
fn http(
    server: &'static str,
    era: &'static str,
    program: &Path,
    args: Vec<String>,
    path: &str,
    sse: bool,
    port_env: bool,
) -> Case {
    let port = free_port();
    let mut args = args;
    let mut env = Vec::new();
    if port_env {
        env.push(("PORT".to_owned(), port.to_string()));
    } else {
        args.push(port.to_string());
    }
    Case {
        server,
        transport: if sse { "http+sse" } else { "http" },
        era,
        target: Target::Url {
            url: format!("http://127.0.0.1:{port}{path}"),
            sse,
        },
        start: Some(Launch {
            program: program.to_path_buf(),
            args,
            env,
        }),
        cli_call: cli_call_for(server),
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

fn run_case(
    client: &Path,
    mcp: &Path,
    case: &Case,
    memory_file: &Path,
) -> anyhow::Result<Vec<(String, String, String)>> {
    let _server = match &case.start {
        Some(launch) => {
            let child = Command::new(&launch.program)
                .args(&launch.args)
                .envs(launch.env.iter().cloned())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .with_context(|| format!("starting {}", case.server))?;
            let running = Running(child);
            if let Target::Url { url, .. } = &case.target {
                wait_for_port(url, Duration::from_secs(20));
            }
            Some(running)
        }
        None => None,
    };
    let mut cmd = Command::new(client);
    cmd.arg(case.era).env("MEMORY_FILE_PATH", memory_file);
    match &case.target {
        Target::Stdio(command) => {
            cmd.arg("--").args(command);
        }
        Target::Url { url, sse } => {
            cmd.args(["--url", url]);
            if *sse {
                cmd.arg("--sse");
            }
        }
    }
    let (_, output) = run_bounded(cmd, Duration::from_secs(120))?;
    let mut rows = Vec::new();
    for line in output.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let field = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        rows.push((field("check"), field("status"), field("detail")));
    }
    if rows.is_empty() {
        rows.push((
            "client".into(),
            "fail".into(),
            "the client printed no result".into(),
        ));
    }
    // The `mcp` binary on the same server (its default, automatic era).
    if case.era != "legacy" {
        rows.extend(cli_rows(mcp, case));
    }
    Ok(rows)
}

/// `mcp inspect --json` and `mcp call --json` against the case's server.
fn cli_rows(mcp: &Path, case: &Case) -> Vec<(String, String, String)> {
    let target = |cmd: &mut Command| match &case.target {
        Target::Stdio(command) => {
            cmd.arg("--").args(command);
        }
        Target::Url { url, sse } => {
            cmd.args(["--url", url]);
            if *sse {
                cmd.args(["--transport", "sse"]);
            }
        }
    };
    let mut rows = Vec::new();
    let mut inspect = Command::new(mcp);
    inspect.args(["inspect", "--json"]);
    target(&mut inspect);
    let (ok, out) = run_cli(inspect);
    let doc: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
    rows.push(if ok && doc.is_object() {
        (
            "mcp inspect".into(),
            "pass".into(),
            "exit 0, one JSON document".into(),
        )
    } else {
        (
            "mcp inspect".into(),
            "fail".into(),
            out.chars().take(80).collect(),
        )
    });
    let mut call = Command::new(mcp);
    call.args(["call", "--json"]).args(case.cli_call);
    target(&mut call);
    let (ok, out) = run_cli(call);
    let doc: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
    rows.push(if ok && doc.get("isError") == Some(&Value::Bool(false)) {
        (
            "mcp call".into(),
            "pass".into(),
            format!("exit 0, {}", case.cli_call[0]),
        )
    } else {
        (
            "mcp call".into(),
            "fail".into(),
            out.chars().take(80).collect(),
        )
    });
    rows
}

/// Runs the `mcp` binary (bounded); whether it exited 0, and its stdout.
fn run_cli(mut cmd: Command) -> (bool, String) {
    cmd.stdin(Stdio::null());
    match run_bounded(cmd, Duration::from_secs(60)) {
        Ok((ok, out)) => (ok, out),
        Err(e) => (false, e.to_string()),
    }
}

fn build_cli(root: &Path) -> anyhow::Result<PathBuf> {
    crate::test_built_executable(root, "mcp").context("building the mcp binary")
}

/// Runs a command with a deadline; returns its stdout.
fn run_bounded(mut cmd: Command, limit: Duration) -> anyhow::Result<(bool, String)> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("running the interop client")?;
    let mut stdout = child.stdout.take().context("client stdout")?;
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let started = Instant::now();
    let ok = loop {
        if let Some(status) = child.try_wait()? {
            break status.success();
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ok((ok, reader.join().unwrap_or_default()))
}

fn wait_for_port(url: &str, limit: Duration) {
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or("")
        .to_owned();
    let started = Instant::now();
    while started.elapsed() < limit {
        if std::net::TcpStream::connect(&addr).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn build_client(root: &Path) -> anyhow::Result<PathBuf> {
    crate::test_built_executable(root, "interop").context("building the interop client")
}

/// A venv under `target/` with the pinned Python servers.
pub(crate) fn ensure_venv(root: &Path) -> anyhow::Result<PathBuf> {
    let venv = root.join("target/interop-venv");
    let python = venv.join("bin/python");
    let requirements = root.join("interop/python/requirements.txt");
    let stamp = venv.join(".requirements");
    let want = std::fs::read_to_string(&requirements)
        .context("reading interop/python/requirements.txt")?;
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(want.as_str()) && python.exists() {
        return Ok(python);
    }
    eprintln!("== python venv (target/interop-venv)");
    let status = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .context("creating the venv (is python3 installed?)")?;
    if !status.success() {
        bail!("python3 -m venv failed");
    }
    let status = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check", "-r"])
        .arg(&requirements)
        .status()
        .context("running pip")?;
    if !status.success() {
        bail!("pip install failed");
    }
    std::fs::write(&stamp, want)?;
    Ok(python)
}

// ------------------------------------------------------------ OAuth servers

/// One line of the matrix: check, status, detail.
type Row = (String, String, String);

fn row(check: &str, status: &str, detail: impl Into<String>) -> Row {
    (check.to_owned(), status.to_owned(), detail.into())
}

/// The redirect port of `mcp login` (`LoopbackBrowserFlow`'s default).
const CALLBACK_PORT: u16 = 33418;
/// Lifetime of the access tokens of the servers that refresh, in seconds.
const TOKEN_SECONDS: u64 = 4;
/// Bound on each step: a line of output, an HTTP exchange, a CLI run.
const STEP: Duration = Duration::from_secs(30);
/// Bound on what is kept of one output stream or HTTP answer.
const MAX_KEPT: u64 = 1 << 20;

/// An MCP server of ours behind a real OAuth authorization server.
struct OAuthCase {
    server: &'static str,
    /// Names its CLI sandbox and server log under `target/interop/`.
    slug: &'static str,
    launch: Launch,
    /// The MCP endpoint: the resource `mcp login --url` names.
    url: String,
    /// The server's test hooks (no authentication, no token in them):
    /// `{base}/state` is its token bookkeeping (`live_login`, `grants`,
    /// `refused`, `revoked`), so that conditions are awaited, not slept on;
    /// `POST {base}/expire` ends every access token at once.
    hooks: String,
    /// Ports to await before the first request.
    ports: Vec<u16>,
    /// Short-lived access tokens with refresh tokens (else one-hour tokens
    /// and no refresh token: the TypeScript demo as shipped).
    refreshes: bool,
    /// The authorization server advertises a revocation endpoint.
    revokes: bool,
    /// What every token and code the server mints itself contains (none of
    /// it may reach the CLI's output); `None` when it mints only the demo's
    /// unmarked tokens.
    secret_mark: Option<&'static str>,
}

fn oauth_cases(python: &Path, node: &Path, root: &Path) -> Vec<OAuthCase> {
    let s = |p: &Path| p.display().to_string();
    let lifetime = TOKEN_SECONDS.to_string();
    let py = root.join("interop/python/auth_server.py");
    let ts = root.join("interop/typescript/auth_server.mjs");
    let port = free_port();
    let mut cases = vec![OAuthCase {
        server: "python mcp oauth",
        slug: "python",
        launch: Launch {
            program: python.to_path_buf(),
            args: vec![s(&py), port.to_string(), lifetime.clone()],
            env: Vec::new(),
        },
        url: format!("http://127.0.0.1:{port}/mcp"),
        hooks: format!("http://127.0.0.1:{port}/interop"),
        ports: vec![port],
        refreshes: true,
        revokes: true,
        secret_mark: Some("pysecret"),
    }];
    for (server, slug, lifetime) in [
        ("ts demo oauth", "ts-demo", None),
        ("ts demo+rt oauth", "ts-refresh", Some(lifetime)),
    ] {
        let mcp_port = free_port();
        let auth_port = (0..20)
            .map(|_| free_port())
            .find(|p| *p != mcp_port)
            .unwrap_or(0);
        let mut args = vec![s(&ts), mcp_port.to_string(), auth_port.to_string()];
        let refreshes = lifetime.is_some();
        args.extend(lifetime);
        cases.push(OAuthCase {
            server,
            slug,
            launch: Launch {
                program: node.to_path_buf(),
                args,
                env: Vec::new(),
            },
            url: format!("http://127.0.0.1:{mcp_port}/mcp"),
            hooks: format!("http://127.0.0.1:{mcp_port}/interop"),
            ports: vec![auth_port, mcp_port],
            refreshes,
            revokes: false,
            secret_mark: refreshes.then_some("tssecret"),
        });
    }
    cases
}

/// Sign-in, use, refresh and sign-out of the `mcp` binary against one
/// OAuth-protected server. A failed sign-in ends the case (what follows
/// needs its credentials).
fn run_oauth_case(mcp: &Path, case: &OAuthCase, scratch: &Path) -> Vec<Row> {
    let mut rows = Vec::new();
    let sandbox = match Sandbox::new(&scratch.join(format!("oauth-{}", case.slug))) {
        Ok(sandbox) => sandbox,
        Err(e) => return vec![row("sandbox", "fail", e.to_string())],
    };
    let log = scratch.join(format!("oauth-{}.log", case.slug));
    let _server = match start_logged(&case.launch, &log) {
        Ok(running) => running,
        Err(e) => return vec![row("server", "fail", format!("{e:#}"))],
    };
    for port in &case.ports {
        wait_for_port(&format!("http://127.0.0.1:{port}"), Duration::from_secs(20));
    }

    // Before any login: sign-in required, and the hint names the command.
    let out = sandbox.run(mcp, &["call", "--url", &case.url, "echo", "text=early"]);
    let hint = format!("mcp login --url {}", case.url);
    rows.push(if out.code == Some(3) && out.stderr.contains(&hint) {
        row(
            "before login",
            "pass",
            "exit 3, the hint names `mcp login --url`",
        )
    } else {
        row("before login", "fail", out.summary())
    });

    match sign_in(mcp, &sandbox, case) {
        Ok(detail) => rows.push(row("mcp login (test as browser)", "pass", detail)),
        Err(e) => {
            rows.push(row("mcp login (test as browser)", "fail", format!("{e:#}")));
            return rows;
        }
    }

    let out = sandbox.run(mcp, &["inspect", "--json", "--url", &case.url]);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap_or(Value::Null);
    rows.push(
        if out.code == Some(0) && doc.to_string().contains("\"token_grant\"") {
            row("mcp inspect (stored token)", "pass", "exit 0, tools listed")
        } else {
            row("mcp inspect (stored token)", "fail", out.summary())
        },
    );

    let text = "hello through oauth";
    let out = sandbox.run(
        mcp,
        &["call", "--url", &case.url, "echo", &format!("text={text}")],
    );
    rows.push(if out.code == Some(0) && out.stdout.trim() == text {
        row("mcp call (stored token)", "pass", "exit 0, echo")
    } else {
        row("mcp call (stored token)", "fail", out.summary())
    });

    if case.refreshes {
        rows.push(refresh_after_expiry(mcp, &sandbox, case));
        rows.push(refresh_on_401(mcp, &sandbox, case));
    } else {
        rows.push(row(
            "refresh after expiry",
            "skip",
            "the demo as shipped: 1 h tokens, no refresh token",
        ));
        rows.push(expired_without_refresh(mcp, &sandbox, case));
    }

    let out = sandbox.run(mcp, &["logout", "--url", &case.url]);
    rows.push(
        if out.code == Some(0) && out.stdout.starts_with("logged out of") {
            row("mcp logout", "pass", "exit 0, credentials forgotten")
        } else {
            row("mcp logout", "fail", out.summary())
        },
    );
    if case.revokes {
        let revoked = server_state(case)
            .ok()
            .and_then(|v| v["revoked"].as_u64())
            .unwrap_or(0);
        rows.push(if revoked > 0 {
            row(
                "revocation at logout",
                "pass",
                format!("the server saw {revoked} revocation(s)"),
            )
        } else {
            row(
                "revocation at logout",
                "fail",
                format!(
                    "the server saw no revocation; `mcp logout` said: {}",
                    out.summary()
                ),
            )
        });
    }
    let out = sandbox.run(mcp, &["call", "--url", &case.url, "echo", "text=late"]);
    rows.push(if out.code == Some(3) {
        row("after logout", "pass", "exit 3, sign-in required again")
    } else {
        row("after logout", "fail", out.summary())
    });

    if let Some(mark) = case.secret_mark {
        let printed = sandbox.transcript();
        rows.push(if printed.contains(mark) {
            row(
                "no token printed",
                "fail",
                "a token or code reached the output",
            )
        } else {
            row(
                "no token printed",
                "pass",
                format!("{} bytes of CLI output checked", printed.len()),
            )
        });
    }
    rows
}

/// `mcp login --url`, with this task as the browser: the authorization URL
/// the CLI prints is fetched and its redirects followed (loopback only) to
/// the CLI's listener, whose page must answer 200.
fn sign_in(mcp: &Path, sandbox: &Sandbox, case: &OAuthCase) -> anyhow::Result<String> {
    await_free_port(CALLBACK_PORT)?;
    let mut cmd = sandbox.command(mcp, &["login", "--url", &case.url]);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut login = Running(cmd.spawn().context("starting mcp login")?);
    let stdout = drain(login.0.stdout.take());
    let (lines, seen) = mpsc::channel::<String>();
    if let Some(stderr) = login.0.stderr.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(stderr.take(MAX_KEPT)).lines() {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
    }
    let deadline = Instant::now() + STEP;
    let mut before = Vec::new();
    let url = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match seen.recv_timeout(left) {
            Ok(line) if line.trim().starts_with("http") && line.contains("/authorize?") => {
                break line.trim().to_owned();
            }
            Ok(line) => before.push(line),
            Err(_) => bail!(
                "no authorization URL on stderr: {}",
                before.join(" | ").trim()
            ),
        }
    };
    let browsed = browse(&url);
    // A failed browse leaves the CLI waiting: end it now.
    let code = wait_exit(
        &mut login.0,
        if browsed.is_ok() {
            STEP
        } else {
            Duration::ZERO
        },
    );
    let out = stdout.join().unwrap_or_default();
    // The rest of its stderr (the stream ends with the process).
    let errors: Vec<String> = std::iter::from_fn(|| seen.recv_timeout(STEP).ok()).collect();
    sandbox.keep(&out);
    sandbox.keep(&errors.join("\n"));
    let said = errors
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" | ");
    if let Err(e) = browsed {
        bail!("{e:#} (the CLI said: {})", said.trim());
    }
    anyhow::ensure!(
        code == Some(0) && out.starts_with("logged in to"),
        "exit {code:?}: {}",
        said.trim()
    );
    // "logged in to URL (issuer I, scopes: S)": the part in parentheses.
    let granted = out.split_once('(').map_or("", |(_, rest)| rest.trim_end());
    Ok(granted.trim_end_matches(')').to_owned())
}

/// Waits for the server's clock to expire the access token of the sign-in
/// (short-lived), then calls a tool that names the grant of the token the
/// call carried: it must be a refreshed one.
fn refresh_after_expiry(mcp: &Path, sandbox: &Sandbox, case: &OAuthCase) -> Row {
    const CHECK: &str = "refresh after expiry";
    let began = Instant::now();
    let limit = Duration::from_secs(TOKEN_SECONDS + 10);
    loop {
        match server_state(case) {
            Ok(state) if state["live_login"] == 0 => break,
            Ok(_) if began.elapsed() > limit => {
                return row(CHECK, "fail", format!("tokens still valid after {limit:?}"));
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return row(CHECK, "fail", format!("server state: {e:#}")),
        }
    }
    let waited = began.elapsed();
    let out = sandbox.run(mcp, &["call", "--url", &case.url, "token_grant"]);
    let refreshes = server_state(case)
        .ok()
        .and_then(|v| v["grants"]["refresh_token"].as_u64())
        .unwrap_or(0);
    if out.code == Some(0) && out.stdout.trim() == "refresh_token" && refreshes > 0 {
        row(
            CHECK,
            "pass",
            format!(
                "expired after {:.1}s; the call carried a refreshed token",
                waited.as_secs_f64()
            ),
        )
    } else {
        row(
            CHECK,
            "fail",
            format!("{} (refresh grants: {refreshes})", out.summary()),
        )
    }
}

/// The server ends the (long-lived, refreshed) access token the client
/// holds: the client's next request meets a 401 with a token it believes
/// valid, and must recover by refreshing, not by asking for a new sign-in.
fn refresh_on_401(mcp: &Path, sandbox: &Sandbox, case: &OAuthCase) -> Row {
    const CHECK: &str = "refresh on 401";
    let count = |state: &Value, key: &str| {
        state[key]
            .as_u64()
            .or_else(|| state["grants"][key].as_u64())
            .unwrap_or(0)
    };
    let before = match server_state(case) {
        Ok(state) => state,
        Err(e) => return row(CHECK, "fail", format!("server state: {e:#}")),
    };
    match request("POST", &format!("{}/expire", case.hooks)) {
        Ok(answer) if answer.status == 200 => {}
        Ok(answer) => return row(CHECK, "fail", format!("expire: HTTP {}", answer.status)),
        Err(e) => return row(CHECK, "fail", format!("expire: {e:#}")),
    }
    let out = sandbox.run(mcp, &["call", "--url", &case.url, "token_grant"]);
    let after = server_state(case).unwrap_or(Value::Null);
    let refused = count(&after, "refused").saturating_sub(count(&before, "refused"));
    let refreshed = count(&after, "refresh_token").saturating_sub(count(&before, "refresh_token"));
    if out.code == Some(0) && out.stdout.trim() == "refresh_token" && refused > 0 && refreshed > 0 {
        row(
            CHECK,
            "pass",
            format!("token refused {refused}x, refreshed {refreshed}x, call ok"),
        )
    } else {
        row(
            CHECK,
            "fail",
            format!(
                "{} (refused {refused}, refreshed {refreshed})",
                out.summary()
            ),
        )
    }
}

/// Without a refresh token, an access token the server ended is a sign-in
/// required (exit 3, the hint), never a browser or a hang.
fn expired_without_refresh(mcp: &Path, sandbox: &Sandbox, case: &OAuthCase) -> Row {
    const CHECK: &str = "401, no refresh token";
    match request("POST", &format!("{}/expire", case.hooks)) {
        Ok(answer) if answer.status == 200 => {}
        Ok(answer) => return row(CHECK, "fail", format!("expire: HTTP {}", answer.status)),
        Err(e) => return row(CHECK, "fail", format!("expire: {e:#}")),
    }
    let out = sandbox.run(mcp, &["call", "--url", &case.url, "token_grant"]);
    let hint = format!("mcp login --url {}", case.url);
    if out.code == Some(3) && out.stderr.contains(&hint) {
        row(CHECK, "pass", "exit 3, sign-in required, the hint")
    } else {
        row(CHECK, "fail", out.summary())
    }
}

fn server_state(case: &OAuthCase) -> anyhow::Result<Value> {
    let answer = request("GET", &format!("{}/state", case.hooks))?;
    anyhow::ensure!(answer.status == 200, "HTTP {}", answer.status);
    serde_json::from_str(&answer.body).context("the state is not JSON")
}

/// The CLI's own HOME, XDG directories and working directory, and
/// everything it printed.
struct Sandbox {
    dir: PathBuf,
    transcript: std::sync::Mutex<String>,
}

impl Sandbox {
    fn new(dir: &Path) -> std::io::Result<Self> {
        let _ = std::fs::remove_dir_all(dir);
        for sub in ["home", "xdg", "data", "work"] {
            std::fs::create_dir_all(dir.join(sub))?;
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            transcript: std::sync::Mutex::default(),
        })
    }

    /// `mcp ARGS` in the sandbox: no browser, no proxy, no log settings of
    /// the caller.
    fn command(&self, mcp: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(mcp);
        cmd.current_dir(self.dir.join("work"))
            .args(args)
            .env("HOME", self.dir.join("home"))
            .env("XDG_CONFIG_HOME", self.dir.join("xdg"))
            .env("XDG_DATA_HOME", self.dir.join("data"))
            .stdin(Stdio::null());
        for name in [
            "DISPLAY",
            "WAYLAND_DISPLAY",
            "BROWSER",
            "RUST_LOG",
            "http_proxy",
            "HTTP_PROXY",
            "https_proxy",
            "HTTPS_PROXY",
            "all_proxy",
            "ALL_PROXY",
        ] {
            cmd.env_remove(name);
        }
        cmd
    }

    fn run(&self, mcp: &Path, args: &[&str]) -> Outcome {
        let out = run_captured(self.command(mcp, args), STEP);
        self.keep(&out.stdout);
        self.keep(&out.stderr);
        out
    }

    fn keep(&self, printed: &str) {
        if let Ok(mut transcript) = self.transcript.lock() {
            transcript.push_str(printed);
        }
    }

    fn transcript(&self) -> String {
        self.transcript
            .lock()
            .map(|t| t.clone())
            .unwrap_or_default()
    }
}

/// How a CLI run ended (`code` is `None` when it was killed or never ran).
struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Outcome {
    /// The exit and the first line that says why.
    fn summary(&self) -> String {
        let why = self
            .stderr
            .lines()
            .chain(self.stdout.lines())
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.contains(" WARN ") && !l.contains(" INFO "))
            .unwrap_or("");
        format!("exit {:?}: {why}", self.code)
    }
}

/// Runs a command with a deadline, keeping both output streams.
fn run_captured(mut cmd: Command, limit: Duration) -> Outcome {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Outcome {
                code: None,
                stdout: String::new(),
                stderr: e.to_string(),
            };
        }
    };
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let code = wait_exit(&mut child, limit);
    Outcome {
        code,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// Reads a stream to its end on a thread; the first [`MAX_KEPT`] bytes are
/// kept, the rest is read and dropped so the writer never blocks.
fn drain(stream: Option<impl std::io::Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let Some(mut stream) = stream else {
            return String::new();
        };
        let mut kept = Vec::new();
        let _ = (&mut stream).take(MAX_KEPT).read_to_end(&mut kept);
        let _ = std::io::copy(&mut stream, &mut std::io::sink());
        String::from_utf8_lossy(&kept).into_owned()
    })
}

/// The exit code, or `None` after killing a child that outlived `limit`.
fn wait_exit(child: &mut Child, limit: Duration) -> Option<i32> {
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.code(),
            Ok(None) if started.elapsed() <= limit => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// Starts a server whose output goes to `log` (kept for a failure's
/// post-mortem).
fn start_logged(launch: &Launch, log: &Path) -> anyhow::Result<Running> {
    let out = std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let err = out.try_clone()?;
    let child = Command::new(&launch.program)
        .args(&launch.args)
        .envs(launch.env.iter().cloned())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .with_context(|| format!("starting {}", launch.program.display()))?;
    Ok(Running(child))
}

/// Waits until the CLI's fixed callback port can be bound: another sign-in
/// may just have let go of it, or a closed connection of any program (whose
/// local end it was) may hold it for TIME_WAIT, 60 s on Linux.
fn await_free_port(port: u16) -> anyhow::Result<()> {
    const PORT_WAIT: Duration = Duration::from_secs(75);
    let began = Instant::now();
    loop {
        match TcpListener::bind(("127.0.0.1", port)) {
            Ok(_) => return Ok(()),
            Err(e) if began.elapsed() > PORT_WAIT => {
                bail!("127.0.0.1:{port}, the redirect port of `mcp login`, is busy: {e}")
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Plays the browser: GETs `url` and follows its redirects (loopback only,
/// at most four) to the CLI's callback, whose page must answer 200.
fn browse(url: &str) -> anyhow::Result<()> {
    let mut url = url.to_owned();
    for _ in 0..4 {
        let answer = request("GET", &url)?;
        let path = url.split('?').next().unwrap_or("").to_owned();
        if (300..400).contains(&answer.status) {
            let location = answer
                .header("location")
                .with_context(|| format!("{path} redirected without a Location"))?;
            url = if location.starts_with("http://") {
                location.to_owned()
            } else if location.starts_with('/') {
                format!("{}{location}", origin(&url))
            } else {
                bail!("{path} redirected to an unexpected location");
            };
            continue;
        }
        let callback = format!("http://127.0.0.1:{CALLBACK_PORT}/callback");
        anyhow::ensure!(
            path == callback,
            "the browser ended at {path} with HTTP {}: {}",
            answer.status,
            answer.body.chars().take(120).collect::<String>()
        );
        anyhow::ensure!(
            url.contains("code="),
            "the authorization server redirected without a code"
        );
        anyhow::ensure!(
            answer.status == 200,
            "the callback page answered HTTP {}: {}",
            answer.status,
            answer.body.chars().take(120).collect::<String>()
        );
        return Ok(());
    }
    bail!("more than four redirects from the authorization URL")
}

/// `http://host:port` of an `http://` URL.
fn origin(url: &str) -> String {
    let rest = url.trim_start_matches("http://");
    let authority = rest.split('/').next().unwrap_or("");
    format!("http://{authority}")
}

/// An HTTP answer: status, headers (lower-case names), body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 request without a body on loopback (this task has no HTTP
/// client and needs none beyond this): `Connection: close`, bounded in time
/// and size; the answer's body ends at `Content-Length` or at the end of the
/// stream.
fn request(method: &str, url: &str) -> anyhow::Result<Answer> {
    let rest = url
        .strip_prefix("http://")
        .with_context(|| format!("not an http:// URL: {}", origin(url)))?;
    let (authority, target) = match rest.find(['/', '?']) {
        Some(i) if rest[i..].starts_with('/') => (&rest[..i], &rest[i..]),
        Some(i) => (&rest[..i], ""),
        None => (rest, ""),
    };
    let target = if target.is_empty() { "/" } else { target };
    let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h);
    anyhow::ensure!(
        matches!(host, "127.0.0.1" | "localhost" | "[::1]"),
        "refusing to leave loopback for {authority}"
    );
    let addr = authority
        .to_socket_addrs()?
        .next()
        .with_context(|| format!("no address for {authority}"))?;
    let mut stream = TcpStream::connect_timeout(&addr, STEP)?;
    stream.set_read_timeout(Some(STEP))?;
    stream.set_write_timeout(Some(STEP))?;
    write!(
        stream,
        "{method} {target} HTTP/1.1\r\nHost: {authority}\r\nAccept: */*\r\n\
         Content-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let mut head_len = None;
    let mut content_length = None;
    loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
        anyhow::ensure!(raw.len() as u64 <= MAX_KEPT, "the answer is too large");
        if head_len.is_none()
            && let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n")
        {
            head_len = Some(i + 4);
            let head = String::from_utf8_lossy(&raw[..i]).to_ascii_lowercase();
            content_length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok());
        }
        if let (Some(h), Some(len)) = (head_len, content_length)
            && raw.len() >= h + len
        {
            break;
        }
    }
    let head_len = head_len.context("the answer has no complete head")?;
    let head = String::from_utf8_lossy(&raw[..head_len]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .context("no status line")?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let end = content_length.map_or(raw.len(), |len| (head_len + len).min(raw.len()));
    let body = String::from_utf8_lossy(&raw[head_len..end]).into_owned();
    Ok(Answer {
        status,
        headers,
        body,
    })
}
