//! The `mcp-testkit-server` binary over real pipes.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mcp-testkit-server"))
}

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Server {
    fn spawn(args: &[&str], env: &[(&str, &str)], stderr: Stdio) -> Self {
        let mut command = Command::new(binary());
        command
            .args(args)
            .env_remove("MCP_TESTKIT_SCRIPT")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, frame: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{frame}").unwrap();
        stdin.flush().unwrap();
    }

    fn recv(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(WAIT)
            .expect("no line from the server");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line}"))
    }

    fn initialize(&mut self) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
        let reply = self.recv();
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        reply
    }

    fn wait_exit(&mut self) -> Option<i32> {
        self.stdin = None;
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn echo(id: i64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"text": text}}})
}

#[test]
fn default_script_serves_echo_records_and_exits_0_on_eof() {
    let dir = std::env::temp_dir().join(format!("mcp-testkit-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let record = dir.join("frames.jsonl");
    let _ = std::fs::remove_file(&record);
    let mut server = Server::spawn(&["--record", record.to_str().unwrap()], &[], Stdio::null());
    assert_eq!(
        server.initialize()["result"]["protocolVersion"],
        "2025-11-25"
    );
    server.send(echo(1, "over pipes"));
    assert_eq!(server.recv()["result"]["content"][0]["text"], "over pipes");
    assert_eq!(server.wait_exit(), Some(0));

    let recorded: Vec<Value> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let methods: Vec<&str> = recorded
        .iter()
        .filter_map(|f| f["method"].as_str())
        .collect();
    assert_eq!(
        methods,
        ["initialize", "notifications/initialized", "tools/call"]
    );
    assert_eq!(recorded[2], echo(1, "over pipes"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_crash_exits_with_its_code() {
    let script = r#"{"tools": [{"name": "boom", "behavior": {"kind": "crash", "code": 17}}]}"#;
    let mut server = Server::spawn(&["--script-json", script], &[], Stdio::null());
    server.initialize();
    server.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "boom"}}),
    );
    assert_eq!(server.wait_exit(), Some(17));
}

#[test]
fn the_script_can_come_from_the_environment_and_the_demo_flag() {
    let script = r#"{"versions": ["2026-07-28"]}"#;
    let mut server = Server::spawn(&[], &[("MCP_TESTKIT_SCRIPT", script)], Stdio::null());
    let meta = mcp_testkit::with_modern_meta(json!({}), Value::Null);
    server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": meta}));
    assert_eq!(
        server.recv()["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );

    let mut demo = Server::spawn(&["--demo", "files"], &[], Stdio::null());
    demo.initialize();
    demo.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let names: Vec<Value> = demo.recv()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("read"), json!("search")]);
}

#[test]
fn bad_arguments_exit_2() {
    let mut server = Server::spawn(&["--demo", "nope"], &[], Stdio::null());
    assert_eq!(server.wait_exit(), Some(2));
    let mut server = Server::spawn(&["--script-json", "{\"versions\": []}"], &[], Stdio::null());
    assert_eq!(server.wait_exit(), Some(2));
}

/// The process state letter from `/proc/PID/stat`, `None` once it is gone.
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

#[test]
fn flood_and_grandchild_do_not_block_the_protocol() {
    let script = r#"{"stderr_flood_bytes": 8388608, "spawn_grandchild": true,
                     "tools": [{"name": "echo", "behavior": {"kind": "echo"}}]}"#;
    let mut server = Server::spawn(&["--script-json", script], &[], Stdio::piped());
    // stderr is not read yet: 8 MiB cannot fit in the pipe.
    assert_eq!(
        server.initialize()["result"]["protocolVersion"],
        "2025-11-25"
    );
    server.send(echo(1, "unblocked"));
    assert_eq!(server.recv()["result"]["content"][0]["text"], "unblocked");

    let mut stderr = BufReader::new(server.child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    let pid: u32 = first
        .trim()
        .strip_prefix("grandchild-pid=")
        .unwrap_or_else(|| panic!("unexpected first stderr line {first:?}"))
        .parse()
        .unwrap();
    let mut flood = 0usize;
    let mut buf = vec![0; 1 << 16];
    while flood < 8 << 20 {
        let n = stderr.read(&mut buf).unwrap();
        assert!(n > 0);
        flood += n;
    }
    assert_eq!(flood, 8 << 20);

    // Killing only the server orphans the grandchild: it keeps running.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    assert!(
        matches!(process_state(pid), Some(s) if s != 'Z'),
        "grandchild died with the server"
    );
    Command::new("kill").arg(pid.to_string()).status().unwrap();
    let deadline = Instant::now() + WAIT;
    while !matches!(process_state(pid), None | Some('Z')) {
        assert!(Instant::now() < deadline, "grandchild {pid} survived kill");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn server_binary_finds_the_built_binary() {
    let found = mcp_testkit::server_binary().expect("the binary is built for integration tests");
    assert_eq!(
        found.canonicalize().unwrap(),
        binary().canonicalize().unwrap()
    );
    let built = mcp_testkit::build_server_binary().unwrap();
    assert!(Path::new(&built).is_file());
}
