//! `mcp watch` through the binary: a server that keeps failing (restarts,
//! the notice after three failures), a server that changes its tools (held
//! for review, adopted by a command on stdin), a subscribed resource that
//! changes (read on subscribing, re-read on update), log messages and
//! progress of reads, an HTTP server that forgot the session heard again,
//! Ctrl-C ending it with nothing left running.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_testkit::http::ReplyMode;
use mcp_testkit::{HttpFakeServer, HttpServerOptions, ReadLog, ResourceSpec, Script};
use serde_json::{Value, json};
use support::*;

/// How long any one expected line may take.
const WAIT: Duration = Duration::from_secs(30);

/// A running `mcp watch`: its stdout lines as they come.
struct Watching {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Watching {
    fn start(sandbox: &Sandbox, args: &[&str]) -> Self {
        let mut child = Command::new(MCP)
            .arg("watch")
            .args(args)
            .current_dir(sandbox.path())
            .env("XDG_CONFIG_HOME", sandbox.path().join("xdg"))
            .env("XDG_DATA_HOME", sandbox.path().join("data"))
            .env("XDG_STATE_HOME", sandbox.path().join("state"))
            .env_remove("RUST_LOG")
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child: Some(child),
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    /// The next line (bounded wait).
    fn next_line(&mut self) -> Option<String> {
        let line = self.lines.recv_timeout(WAIT).ok()?;
        self.seen.push(line.clone());
        Some(line)
    }

    /// Reads JSON lines until one `pick` accepts; returns it.
    fn until(&mut self, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            let Some(line) = self.next_line() else { break };
            let value: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            assert!(
                value["time"].as_str().is_some_and(|t| t.ends_with('Z')),
                "{line}"
            );
            if pick(&value) {
                return value;
            }
        }
        panic!("no {what} line; seen:\n{}", self.seen.join("\n"));
    }

    /// Reads human lines until one contains `text`.
    fn until_text(&mut self, text: &str) -> String {
        while let Some(line) = self.next_line() {
            if line.contains(text) {
                return line;
            }
        }
        panic!("no line with {text:?}; seen:\n{}", self.seen.join("\n"));
    }

    fn send(&mut self, command: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{command}").unwrap();
        stdin.flush().unwrap();
    }

    /// Ctrl-C; the exit code and every line after it.
    fn interrupt(self) -> (i32, Vec<String>) {
        let pid = self.child.as_ref().unwrap().id().to_string();
        let sent = Command::new("kill").args(["-INT", &pid]).status().unwrap();
        assert!(sent.success());
        self.finish()
    }

    /// Waits for the exit (bounded); the code and the remaining lines.
    fn finish(mut self) -> (i32, Vec<String>) {
        let mut rest = Vec::new();
        // The reader ends with stdout, which ends with the process.
        while let Ok(line) = self.lines.recv_timeout(WAIT) {
            rest.push(line);
        }
        let (tx, rx) = mpsc::channel();
        let mut child = self.child.take().unwrap();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait().map(|s| s.code().unwrap_or(-1)));
        });
        let code = rx
            .recv_timeout(WAIT)
            .expect("mcp watch did not exit")
            .unwrap();
        (code, rest)
    }
}

impl Drop for Watching {
    /// A failed test leaves nothing running.
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
        }
    }
}

fn event(value: &Value, name: &str, server: &str) -> bool {
    value["event"] == name && value["server"] == server
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet).
fn not_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/status")) {
        Err(_) => true,
        Ok(status) => status
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z')),
    }
}

#[test]
fn a_failing_server_is_restarted_and_reported_and_ctrl_c_stops_everything() {
    let steady = json!({"versions": ["2025-06-18"], "tools": [
        {"name": "echo", "inputSchema": {"type": "object"}, "behavior": {"kind": "echo"}}
    ]});
    let sandbox = Sandbox::new();
    // The steady server writes its pid first, so the test can check it is
    // gone afterwards.
    let steady_cmd = format!(
        "echo $$$$ > steady.pid; exec '{}' --script-json '{}'",
        testkit_path_text(),
        steady
    );
    let sandbox = sandbox.with_servers(&[
        (
            "crashy",
            script(json!({"versions": ["2025-06-18"], "exit_after_initialize": true})),
        ),
        (
            "steady",
            json!({"command": "sh", "args": ["-c", steady_cmd]}),
        ),
    ]);
    let mut watch = Watching::start(&sandbox, &["--json"]);
    let ready = watch.until("steady ready", |v| event(v, "ready", "steady"));
    assert_eq!(ready["era"], "legacy");
    assert_eq!(ready["tools"], 1);
    let notice = watch.until("the notice", |v| event(v, "repeated_failures", "crashy"));
    assert_eq!(notice["consecutive"], 3);
    // Everything crashy went through, in order: three failures, with a
    // restart (its time and delay) after each of the first two.
    let crashy: Vec<Value> = watch
        .seen
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["server"] == "crashy")
        .collect();
    let kinds: Vec<&str> = crashy.iter().filter_map(|v| v["event"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "starting",
            "failed",
            "restarting",
            "starting",
            "failed",
            "restarting",
            "starting",
            "failed",
            "repeated_failures"
        ],
        "{:?}",
        watch.seen
    );
    assert_eq!(crashy[1]["error"]["cause"], "connection", "{}", crashy[1]);
    assert_eq!(crashy[2]["attempt"], 1);
    assert_eq!(crashy[5]["attempt"], 2);
    assert!(crashy[2]["at"].as_str().is_some_and(|t| t.len() == 20));
    assert!(crashy[2]["delayMs"].as_u64().is_some_and(|d| d > 0));
    let pid: u32 = sandbox.read("steady.pid").trim().parse().unwrap();
    assert!(
        !not_running(pid),
        "the steady server is running while watched"
    );

    let (code, rest) = watch.interrupt();
    assert_eq!(code, 0, "{rest:?}");
    let last: Value = serde_json::from_str(rest.last().expect("a last line")).unwrap();
    assert_eq!(last["event"], "shutdown", "{rest:?}");
    assert!(not_running(pid), "the steady server outlived mcp watch");
}

/// `docs://today` reads "v1", then "v2" once the resource list changed;
/// each read logs a warning and reports two steps of progress. `extra`
/// appears when the tool list changes.
fn modern_docs() -> Script {
    let read = |text: &str| {
        let mut spec = ResourceSpec::text("docs://today", "today", text);
        spec.progress_steps = 2;
        spec.log_on_read = Some(ReadLog {
            level: "warning".into(),
            message: json!("read \u{1b}[2J today"),
        });
        spec
    };
    let mut v1 = read("v1");
    v1.vanish_at_change = Some(1);
    let mut v2 = read("v2");
    v2.appear_at_change = 1;
    let tools = Script::from_json(
        &json!({
            "versions": ["2026-07-28"],
            "tools": [
                {"name": "touch", "inputSchema": {"type": "object"},
                 "behavior": {"kind": "touch_resource", "uri": "docs://today"}},
                {"name": "change_resources", "inputSchema": {"type": "object"},
                 "behavior": {"kind": "change_list", "list": "resources"}},
                {"name": "change_tools", "inputSchema": {"type": "object"},
                 "behavior": {"kind": "change_list", "list": "tools"}},
                {"name": "extra", "inputSchema": {"type": "object"}, "appear_at_change": 1,
                 "behavior": {"kind": "echo"}}
            ]
        })
        .to_string(),
    )
    .unwrap();
    // (The same URI twice, each at its own change, is built here: JSON
    // scripts refuse duplicate URIs.)
    tools.resource(v1).resource(v2)
}

/// Calls `tool` with one bare 2026-07-28 POST. The fake server serves
/// every stateless client on one connection, keyed by request id, so the
/// trigger uses an id no client of ours sends (and opens no listen stream
/// of its own, which `mcp call` would).
async fn trigger(url: &str, tool: &str) {
    let body = json!({
        "jsonrpc": "2.0", "id": format!("trigger-{tool}"), "method": "tools/call",
        "params": {"name": tool, "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "trigger", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    });
    let response = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert!(
        response.status().is_success(),
        "{tool}: {}",
        response.status()
    );
    let text = response.text().await.unwrap();
    assert!(text.contains("\"result\""), "{tool}: {text}");
}

/// [`modern_docs`] served over Streamable HTTP with event-stream replies
/// (listen streams and the reads' log and progress ride on them).
fn docs_server(rt: &tokio::runtime::Runtime) -> mcp_testkit::RunningHttpServer {
    rt.block_on(HttpFakeServer::start(
        modern_docs(),
        HttpServerOptions::default().reply(ReplyMode::Sse),
    ))
    .unwrap()
}

#[test]
fn changed_tools_wait_for_review_and_a_subscribed_resource_is_followed() {
    let rt = runtime();
    let server = docs_server(&rt);
    let url = server.url();
    let sandbox = Sandbox::new().with_servers(&[("docs", json!({"url": url}))]);
    let mut watch = Watching::start(&sandbox, &["docs", "--resource", "docs://today", "--json"]);
    let ready = watch.until("ready", |v| event(v, "ready", "docs"));
    assert_eq!(
        (ready["era"].as_str(), ready["tools"].as_u64()),
        (Some("modern"), Some(3))
    );
    watch.until("subscribed", |v| event(v, "subscribed", "docs"));
    let first = watch.until("the first read", |v| event(v, "resource", "docs"));
    assert_eq!(first["reason"], "start");
    assert_eq!(first["contents"][0]["text"], "v1");
    // The read's log message and progress came before its contents.
    let log = watch
        .seen
        .iter()
        .find(|l| l.contains("\"event\":\"log\""))
        .unwrap_or_else(|| panic!("no log line: {:?}", watch.seen));
    let log: Value = serde_json::from_str(log).unwrap();
    assert_eq!(log["level"], "warning");
    assert_eq!(
        log["data"], "read \u{1b}[2J today",
        "--json keeps the server's text"
    );
    assert!(
        watch
            .seen
            .iter()
            .any(|l| l.contains("\"event\":\"progress\"") && l.contains("docs://today"))
    );

    // The resource changes: read again and shown.
    let call = |tool: &str| rt.block_on(trigger(&url, tool));
    call("change_resources");
    call("touch");
    let update = watch.until("the update", |v| {
        event(v, "resource", "docs") && v["reason"] == "update"
    });
    assert_eq!(update["contents"][0]["text"], "v2");

    // The tools change: held for review, adopted by a command on stdin.
    call("change_tools");
    let review = watch.until("the review", |v| event(v, "review", "docs"));
    assert_eq!(review["added"], json!(["extra"]));
    assert_eq!(review["removed"], json!([]));
    let adopt = review["adopt"].as_str().unwrap().to_owned();
    assert_eq!(adopt, format!("adopt docs {}", review["generation"]));
    watch.send("adopt docs x");
    watch.send(&adopt);
    let adopted = watch.until("the adoption", |v| event(v, "adopted", "docs"));
    assert_eq!(adopted["added"], json!(["extra"]));
    let namespace = watch.until("the namespace", |v| v["event"] == "namespace");
    assert_eq!(namespace["tools"], 4);

    let (code, rest) = watch.interrupt();
    assert_eq!(code, 0, "{rest:?}");
    assert!(
        rest.last().is_some_and(|l| l.contains("\"shutdown\"")),
        "{rest:?}"
    );
    rt.block_on(server.shutdown());
}

/// A legacy server over Streamable HTTP forgets our session (as it does
/// when it restarts) while the watch only listens: the watch says so, and
/// the session goes on with a new server session: the log level set again,
/// the tools listed again and the resource subscribed again, all on it.
#[test]
fn a_server_that_forgot_the_session_is_heard_again() {
    let rt = runtime();
    let script = Script::legacy()
        .versions(["2025-06-18"])
        .tool("echo", mcp_testkit::Behavior::Echo)
        .resource(ResourceSpec::text("notes://a", "a", "alpha"));
    let server = rt
        .block_on(HttpFakeServer::start(script, HttpServerOptions::default()))
        .unwrap();
    let sandbox = Sandbox::new().with_servers(&[("notes", json!({"url": server.url()}))]);
    let mut watch = Watching::start(&sandbox, &["--resource", "notes://a", "--json"]);
    watch.until("ready", |v| event(v, "ready", "notes"));
    let first = watch.until("the first read", |v| event(v, "resource", "notes"));
    assert_eq!(first["contents"][0]["text"], "alpha");
    // The session's GET stream is open before the server forgets it.
    assert!(rt.block_on(server.requests.wait_until(WAIT, |seen| {
        seen.iter()
            .any(|r| r.method == "GET" && r.header("mcp-session-id") == Some("session-1"))
    })));

    server.expire_sessions();
    watch.until("the notice", |v| event(v, "session_reestablished", "notes"));
    // The subscription ended when the session was found forgotten, which
    // may be shown before or after the notice.
    let resubscribing = |l: &String| l.contains("\"resubscribing\"") && l.contains("notes://a");
    if !watch.seen.iter().any(resubscribing) {
        watch.until("the subscription made again", |v| {
            event(v, "resubscribing", "notes") && v["uri"] == "notes://a"
        });
    }
    let on_new_session = |method: &str| {
        server
            .requests
            .posts_of(method)
            .iter()
            .filter(|r| r.header("mcp-session-id") == Some("session-2"))
            .count()
    };
    assert!(rt.block_on(server.requests.wait_until(WAIT, |seen| {
        seen.iter().any(|r| {
            r.jsonrpc_method.as_deref() == Some("resources/subscribe")
                && r.header("mcp-session-id") == Some("session-2")
        })
    })));
    assert_eq!(on_new_session("resources/subscribe"), 1);
    assert_eq!(on_new_session("logging/setLevel"), 1);
    assert_eq!(on_new_session("tools/list"), 1);
    assert!(
        !watch.seen.iter().any(|l| l.contains("\"restarting\"")),
        "the server was not restarted: {:?}",
        watch.seen
    );
    let (code, rest) = watch.interrupt();
    assert_eq!(code, 0, "{rest:?}");
    rt.block_on(server.shutdown());
}

#[test]
fn human_lines_escape_the_server_and_quit_ends_the_watch() {
    let rt = runtime();
    let server = docs_server(&rt);
    let sandbox = Sandbox::new().with_servers(&[("docs", json!({"url": server.url()}))]);
    let mut watch = Watching::start(&sandbox, &["--resource", "docs=docs://today"]);
    let ready = watch.until_text("ready");
    assert!(
        ready.contains("docs") && ready.contains("2026-07-28 (modern era), 3 tools"),
        "{ready}"
    );
    let log = watch.until_text("log warning");
    assert!(log.contains(r"read \u{1b}[2J today"), "{log}");
    let resource = watch.until_text("resource docs://today");
    assert!(resource.contains("(start): v1"), "{resource}");
    assert!(
        watch.seen.iter().all(|l| !l.contains('\u{1b}')),
        "a raw escape reached the terminal: {:?}",
        watch.seen
    );
    watch.send("quit");
    let (code, rest) = watch.finish();
    assert_eq!(code, 0, "{rest:?}");
    assert!(
        rest.last().is_some_and(|l| l.contains("servers shut down")),
        "{rest:?}"
    );
    rt.block_on(server.shutdown());
}

#[test]
fn watch_refuses_what_it_cannot_follow() {
    let sandbox = Sandbox::new().with_servers(&[("a", demo("notes")), ("b", demo("files"))]);
    // A URI with several servers watched must name its server.
    let (code, _, stderr) = sandbox.run(&["watch", "--resource", "notes://x"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("SERVER=URI"), "{stderr}");
    let (code, _, stderr) = sandbox.run(&["watch", "nope"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("no server named `nope`"), "{stderr}");
    let empty = Sandbox::new().with_servers(&[]);
    let (code, _, stderr) = empty.run(&["watch"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("nothing to watch"), "{stderr}");
}

#[test]
fn a_reader_that_goes_away_ends_the_watch() {
    // A server that keeps failing keeps the watch writing, so it meets the
    // closed pipe on a later line whatever the timing.
    let sandbox = Sandbox::new().with_servers(&[(
        "crashy",
        script(json!({"versions": ["2025-06-18"], "exit_after_initialize": true})),
    )]);
    let line = format!("'{MCP}' watch --json | head -n 1");
    let child = Command::new("sh")
        .args(["-c", &line])
        .current_dir(sandbox.path())
        .env("XDG_CONFIG_HOME", sandbox.path().join("xdg"))
        .env("XDG_DATA_HOME", sandbox.path().join("data"))
        .env("XDG_STATE_HOME", sandbox.path().join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = rx
        .recv_timeout(WAIT)
        .expect("mcp watch kept running after its reader went away")
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let first: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(first["event"], "starting");
}
