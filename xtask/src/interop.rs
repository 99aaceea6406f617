//! `cargo xtask interop`: our client against real servers installed from
//! the registries, over every transport they offer, in both eras where they
//! speak both. Prints a matrix (server × transport × era × check).
//!
//! The client side is the `interop` example of `mcp-session` (public API
//! only). Servers: npm `server-everything` (stdio, Streamable HTTP, HTTP+SSE),
//! `server-filesystem` (roots round trip), `server-memory`; PyPI `mcp` and
//! `fastmcp` (stdio and HTTP, both eras). Ports are chosen at run time; every
//! server started here is killed by PID at the end, even on failure.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
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
fn ensure_venv(root: &Path) -> anyhow::Result<PathBuf> {
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
