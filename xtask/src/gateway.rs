//! `cargo xtask gateway`: `mcp serve --stdio`, then `mcp serve --http` (the
//! hosts connecting by URL over Streamable HTTP), in front of three servers (a
//! legacy stdio one, a 2026-07-28 stdio one and a Streamable HTTP one, all
//! the testkit's), driven by hosts written on the official SDKs — the
//! TypeScript SDK (`interop/typescript/gateway_host.mjs`), the Python SDK
//! (`interop/python/gateway_host.py`) and the Rust SDK `rmcp`
//! (`interop/rust-host`, built from crates.io into `target/interop-rust`).
//! Each host lists the merged tools, calls one tool of each server, reads a
//! resource, gets a prompt, answers a server's sampling request and sees
//! `list_changed` only after it adopted a changed tool list through the
//! gateway's control socket. Prints one row per check; `cargo xtask interop`
//! runs it too.
//!
//! `cargo xtask gateway --bench [N] [--runs R]`: a measurement, not a test.
//! Each SDK host makes N sequential calls (default 2000) of the testkit's
//! `echo`, once straight to the server and once through `mcp serve --stdio`
//! (both built in release), R times each (default 3), alternating; then the same over
//! HTTP: the testkit served over Streamable HTTP against `mcp serve --http`
//! in front of the same server on stdio. The medians and their ratios are
//! printed.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

/// A process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One SDK host: its name and how to start it with the words after it.
struct Host {
    name: &'static str,
    program: PathBuf,
    lead: Vec<String>,
}

impl Host {
    fn command(&self, words: &[String]) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.lead).args(words);
        cmd
    }
}

fn hosts(root: &Path) -> anyhow::Result<Vec<Host>> {
    let tools = crate::node::ensure_tools(root)?;
    let node = tools.dir.join("node_modules/.bin/node");
    let python = crate::interop::ensure_venv(root)?;
    let rust = build_rust_host(root)?;
    let s = |p: PathBuf| p.display().to_string();
    Ok(vec![
        Host {
            name: "typescript sdk",
            program: node,
            lead: vec![s(root.join("interop/typescript/gateway_host.mjs"))],
        },
        Host {
            name: "python sdk",
            program: python,
            lead: vec![s(root.join("interop/python/gateway_host.py"))],
        },
        Host {
            name: "rust sdk (rmcp)",
            program: rust,
            lead: Vec::new(),
        },
    ])
}

/// Builds the rmcp host (release: it is also the benchmark's client) in its
/// own target directory; offline first (the registry cache usually has it).
fn build_rust_host(root: &Path) -> anyhow::Result<PathBuf> {
    let manifest = root.join("interop/rust-host/Cargo.toml");
    let target = root.join("target/interop-rust");
    let build = |offline: bool| {
        let mut cmd = Command::new(crate::cargo());
        cmd.args([
            "build",
            "--release",
            "--quiet",
            "--locked",
            "--manifest-path",
        ])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target);
        if offline {
            cmd.arg("--offline");
        }
        cmd.status()
    };
    let built = build(true).is_ok_and(|s| s.success())
        || build(false)
            .context("running cargo for the rmcp host")?
            .success();
    if !built {
        bail!("building interop/rust-host failed");
    }
    Ok(target.join("release/gateway-host-rmcp"))
}

/// The three servers behind the gateway, as the testkit plays them.
fn legacy_script() -> Value {
    json!({
        "versions": ["2025-06-18", "2025-11-25"],
        "tools": [
            {"name": "legacy_echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
             "behavior": {"kind": "echo"}},
            {"name": "change", "inputSchema": {"type": "object"},
             "behavior": {"kind": "change_list", "list": "tools"}},
            {"name": "fresh", "inputSchema": {"type": "object"}, "appear_at_change": 1,
             "behavior": {"kind": "text", "text": "a fresh tool"}},
            {"name": "ask", "inputSchema": {"type": "object"},
             "behavior": {"kind": "ask_client", "method": "sampling/createMessage", "params": {
                 "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
                 "maxTokens": 5}}}
        ],
        "resources": [{"uri": "file:///readme.txt", "name": "readme", "text": "read me"}]
    })
}

fn modern_script() -> Value {
    json!({
        "versions": ["2026-07-28"],
        "tools": [
            {"name": "modern_add", "inputSchema": {"type": "object", "properties": {
                "a": {"type": "number"}, "b": {"type": "number"}}},
             "behavior": {"kind": "add"}}
        ],
        "prompts": [{"name": "greet", "arguments": [{"name": "who", "required": true}],
                     "messages": [{"role": "user", "content": {"type": "text", "text": "hello {who}"}}]}]
    })
}

fn remote_script() -> Value {
    json!({
        "tools": [
            {"name": "remote_text", "inputSchema": {"type": "object"},
             "behavior": {"kind": "text", "text": "remote says hi"}}
        ]
    })
}

/// Starts the testkit over HTTP with `script`; its URL (the first line it
/// prints). It stops when its input closes (or is killed when dropped).
fn start_http(testkit: &Path, script: &Value) -> anyhow::Result<(Running, String)> {
    let mut child = Command::new(testkit)
        .args(["--http", "--script-json", &script.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting the testkit's HTTP server")?;
    let stdout = child.stdout.take().context("its stdout")?;
    let running = Running(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let url = rx
        .recv_timeout(Duration::from_secs(30))
        .context("the testkit's HTTP server printed no URL")?;
    Ok((running, url.trim().to_owned()))
}

/// Starts `mcp serve --http 127.0.0.1:0` with `config` and the control
/// `socket`; its URL (the line it logs on stderr). Killed when dropped.
fn start_http_gateway(
    mcp: &Path,
    config: &Path,
    socket: &Path,
) -> anyhow::Result<(Running, String)> {
    let mut child = Command::new(mcp)
        .arg("--config")
        .arg(config)
        .args(["serve", "--http", "127.0.0.1:0", "--control"])
        .arg(socket)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting mcp serve --http")?;
    let stderr = child.stderr.take().context("its stderr")?;
    let running = Running(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(url) = line.split("serving MCP (Streamable HTTP) on ").nth(1) {
                let _ = tx.send(url.trim().to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .context("mcp serve --http logged no URL")?;
    Ok((running, url))
}

/// Runs `cmd` until it exits or `limit` passes (then it is killed);
/// returns its stdout.
fn run_bounded(mut cmd: Command, limit: Duration) -> anyhow::Result<String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting a host")?;
    let mut stdout = child.stdout.take().context("host stdout")?;
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let started = Instant::now();
    loop {
        if child.try_wait()?.is_some() {
            break;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(reader.join().unwrap_or_default())
}

/// Returns (passed, failed) after printing a row per check.
pub(crate) fn run(root: &Path) -> anyhow::Result<(u64, u64)> {
    let mcp = crate::test_built_executable(root, "mcp")?;
    let testkit = crate::test_built_executable(root, "mcp-testkit-server")?;
    let hosts = hosts(root)?;
    let scratch = root.join("target/interop/gateway");
    std::fs::create_dir_all(&scratch)?;
    let (_http, url) = start_http(&testkit, &remote_script())?;
    let stdio =
        |script: Value| json!({"command": testkit, "args": ["--script-json", script.to_string()]});
    let config = json!({"mcpServers": {
        "legacy": stdio(legacy_script()),
        "modern": stdio(modern_script()),
        "remote": {"url": url},
    }});
    let config_path = scratch.join("config.json");
    std::fs::write(&config_path, config.to_string())?;
    let (mut passed, mut failed) = (0u64, 0u64);
    for transport in ["stdio", "http"] {
        for host in &hosts {
            let short = host.name.split(' ').next().unwrap_or("h");
            let socket = scratch.join(format!("{short}-{transport}.sock"));
            // Over HTTP the gateway runs on its own (one per host, so that
            // each starts from the same servers), and the host gets its URL.
            let mut _gateway = None;
            let words = if transport == "stdio" {
                vec![
                    "check".to_owned(),
                    mcp.display().to_string(),
                    config_path.display().to_string(),
                    socket.display().to_string(),
                ]
            } else {
                let (running, url) = start_http_gateway(&mcp, &config_path, &socket)?;
                _gateway = Some(running);
                vec![
                    "check-url".to_owned(),
                    mcp.display().to_string(),
                    url,
                    socket.display().to_string(),
                ]
            };
            let out = run_bounded(host.command(&words), Duration::from_secs(180))?;
            let mut rows = 0;
            for line in out.lines() {
                let Ok(v) = serde_json::from_str::<Value>(line) else {
                    continue;
                };
                let field = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                let status = field("status");
                if status == "pass" {
                    passed += 1;
                } else {
                    failed += 1;
                    eprintln!(
                        "gateway: {} / {transport} / {}: {}",
                        host.name,
                        field("check"),
                        field("detail")
                    );
                }
                rows += 1;
                let detail: String = field("detail").chars().take(60).collect();
                println!(
                    "{:<18} {:<9} {:<7} {:<28} {:<6} {detail}",
                    format!("gw<-{short}"),
                    transport,
                    "legacy",
                    field("check"),
                    status
                );
            }
            if rows < 9 {
                // Every check prints a row; a host that stopped early fails.
                failed += 1;
                println!(
                    "{:<18} {:<9} {:<7} {:<28} {:<6} only {rows} of 9 checks reported",
                    format!("gw<-{short}"),
                    transport,
                    "legacy",
                    "host",
                    "fail"
                );
            }
        }
    }
    println!("gateway: {passed} passed, {failed} failed");
    Ok((passed, failed))
}

/// Builds `mcp` and the testkit server in release; their paths.
fn release_binaries(root: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let status = Command::new(crate::cargo())
        .current_dir(root)
        .args([
            "build",
            "--release",
            "-p",
            "mcp-cli",
            "--bin",
            "mcp",
            "-p",
            "mcp-testkit",
            "--bin",
            "mcp-testkit-server",
        ])
        .status()
        .context("building the release binaries")?;
    if !status.success() {
        bail!("building the release binaries failed");
    }
    let release = root.join("target/release");
    Ok((release.join("mcp"), release.join("mcp-testkit-server")))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// `cargo xtask gateway --bench [N] [--runs R]`.
pub(crate) fn bench(root: &Path, args: &[String]) -> anyhow::Result<()> {
    // `--runs R` (default 3): runs each way per host; the rest is N.
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let n: usize = args
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || args[i - 1] != "--runs")
        .find_map(|(_, a)| a.parse().ok())
        .unwrap_or(2000);
    let (mcp, testkit) = release_binaries(root)?;
    let hosts = hosts(root)?;
    let scratch = root.join("target/interop/gateway-bench");
    std::fs::create_dir_all(&scratch)?;
    let script = json!({"versions": ["2025-11-25"], "tools": [
        {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
         "behavior": {"kind": "echo"}}
    ]})
    .to_string();
    let config = scratch.join("config.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"echo": {"command": testkit, "args": ["--script-json", script]}}})
            .to_string(),
    )?;
    let direct: Vec<String> = vec![
        testkit.display().to_string(),
        "--script-json".to_owned(),
        script.clone(),
    ];
    let gateway: Vec<String> = vec![
        mcp.display().to_string(),
        "--config".to_owned(),
        config.display().to_string(),
        "serve".to_owned(),
        "--stdio".to_owned(),
    ];
    // Over HTTP: the testkit served over Streamable HTTP (direct), against
    // `mcp serve --http` in front of the same server on stdio (each started
    // once and kept for the three rounds).
    let script_value: Value = serde_json::from_str(&script)?;
    let (_direct_http, direct_url) = start_http(&testkit, &script_value)?;
    let (_gateway_http, gateway_url) =
        start_http_gateway(&mcp, &config, &scratch.join("bench-http.sock"))?;
    let by_url = |url: &str| vec![url.to_owned()];
    println!(
        "{:<16} {:<6} {:>12} {:>12} {:>10} {:>10} {:>7}",
        "client", "via", "direct c/s", "gateway c/s", "direct p50", "gw p50", "ratio"
    );
    for host in &hosts {
        for (via, direct, gateway) in [
            ("stdio", direct.clone(), gateway.clone()),
            ("http", by_url(&direct_url), by_url(&gateway_url)),
        ] {
            let (mut d_rate, mut g_rate, mut d_p50, mut g_p50) = (vec![], vec![], vec![], vec![]);
            for _ in 0..runs {
                for (target, rates, p50s) in [
                    (&direct, &mut d_rate, &mut d_p50),
                    (&gateway, &mut g_rate, &mut g_p50),
                ] {
                    let mut words = vec![
                        "bench".to_owned(),
                        n.to_string(),
                        "echo".to_owned(),
                        "--".to_owned(),
                    ];
                    words.extend(target.iter().cloned());
                    let out = run_bounded(host.command(&words), Duration::from_secs(600))?;
                    let line: Value = out
                        .lines()
                        .find_map(|l| serde_json::from_str(l).ok())
                        .with_context(|| format!("{} ({via}) printed no result", host.name))?;
                    rates.push(line["calls_per_s"].as_f64().unwrap_or(f64::NAN));
                    p50s.push(line["p50_ms"].as_f64().unwrap_or(f64::NAN));
                }
            }
            let (d, g) = (median(d_rate), median(g_rate));
            println!(
                "{:<16} {:<6} {:>12.0} {:>12.0} {:>8.3}ms {:>8.3}ms {:>6.2}x",
                host.name,
                via,
                d,
                g,
                median(d_p50),
                median(g_p50),
                d / g
            );
        }
    }
    println!("(ratio: time per call through the gateway / direct, from the calls per second)");
    Ok(())
}
