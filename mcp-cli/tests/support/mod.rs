//! What the binary's test files share: a sandboxed working directory with
//! its own XDG directories, the testkit's server binary, and output
//! normalisation.
#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};
use tempfile::TempDir;

pub const MCP: &str = env!("CARGO_BIN_EXE_mcp");

pub fn testkit() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| mcp_testkit::build_server_binary().expect("testkit server binary"))
}

/// A working directory with its own (empty) XDG config home.
pub struct Sandbox {
    dir: TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `./.mcp.json` with these servers, in this order.
    pub fn with_servers(self, servers: &[(&str, Value)]) -> Self {
        let members: Vec<String> = servers
            .iter()
            .map(|(name, entry)| format!("{}: {entry}", json!(name)))
            .collect();
        self.write(
            ".mcp.json",
            &format!("{{\"mcpServers\": {{{}}}}}", members.join(", ")),
        );
        self.trust();
        self
    }

    /// Approves `./.mcp.json` as it is now (`mcp trust --yes`).
    pub fn trust(&self) {
        let (code, _, stderr) = self.run(&["trust", "--yes"]);
        assert_eq!(code, 0, "{stderr}");
    }

    /// Runs `mcp ARGS` on a terminal (stdin and stderr; `script` from
    /// util-linux makes one), `answers` typed ahead and read a line at a
    /// time; stdout goes to the file `stdout_to` when given, else to the
    /// terminal too. Returns the exit code and the terminal's transcript.
    pub fn at_terminal(
        &self,
        args: &[&str],
        answers: &str,
        stdout_to: Option<&str>,
    ) -> (i32, String) {
        let quoted = |word: &str| format!("'{}'", word.replace('\'', r"'\''"));
        let mut line: Vec<String> = std::iter::once(MCP)
            .chain(args.iter().copied())
            .map(quoted)
            .collect();
        if let Some(file) = stdout_to {
            line.push(format!("> {}", quoted(file)));
        }
        let mut c = Command::new("script");
        c.current_dir(self.path())
            .env("XDG_CONFIG_HOME", self.path().join("xdg"))
            .env("XDG_DATA_HOME", self.path().join("data"))
            .env("XDG_STATE_HOME", self.path().join("state"))
            .env("TERM", "dumb")
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG")
            .args(["-q", "-e", "-c", &line.join(" "), "/dev/null"])
            .write_stdin(answers.to_owned())
            .timeout(Duration::from_secs(60));
        let output = c.output().unwrap();
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    }

    pub fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path().join(name), text).unwrap();
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path().join(name)).unwrap()
    }

    pub fn mcp(&self) -> Command {
        let mut cmd = Command::new(MCP);
        cmd.current_dir(self.path())
            .env("XDG_CONFIG_HOME", self.path().join("xdg"))
            .env("XDG_DATA_HOME", self.path().join("data"))
            .env("XDG_STATE_HOME", self.path().join("state"))
            .env_remove("RUST_LOG")
            .env_remove("NO_COLOR")
            .timeout(Duration::from_secs(60));
        cmd
    }

    /// Runs `args`; returns (exit code, stdout, stderr), normalised.
    pub fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.mcp().args(args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            self.normalise(&String::from_utf8_lossy(&out.stdout)),
            self.normalise(&String::from_utf8_lossy(&out.stderr)),
        )
    }

    pub fn normalise(&self, text: &str) -> String {
        let dir = self.path().to_string_lossy().into_owned();
        let text = text
            .replace(&dir, "[DIR]")
            .replace(&*testkit_path_text(), "[TESTKIT]")
            .replace(MCP, "[MCP]")
            .replace(env!("CARGO_PKG_VERSION"), "[VERSION]");
        redact_millis(&text)
    }
}

pub fn testkit_path_text() -> String {
    testkit().to_string_lossy().into_owned()
}

/// `37 ms` → `[N] ms`.
pub fn redact_millis(text: &str) -> String {
    let mut out = String::new();
    let mut digits = String::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        rest = &rest[c.len_utf8()..];
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        if !digits.is_empty() {
            if c == ' ' && rest.starts_with("ms") {
                out.push_str("[N]");
            } else {
                out.push_str(&digits);
            }
            digits.clear();
        }
        out.push(c);
    }
    out.push_str(&digits);
    out
}

pub fn demo(name: &str) -> Value {
    json!({"command": MCP, "args": ["__serve-demo", name]})
}

pub fn script(script: Value) -> Value {
    json!({"command": testkit(), "args": ["--script-json", script.to_string()]})
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
