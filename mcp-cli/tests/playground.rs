//! `mcp playground`: the configured servers behind the playground's page,
//! driven through its API as the page drives it (the page itself is
//! tested in a browser in mcp-playground's own tests).
#![cfg(feature = "playground")]

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{MCP, Sandbox, demo, runtime};

const WAIT: Duration = Duration::from_secs(30);

/// A running `mcp playground`.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Running {
    fn start(sandbox: &Sandbox, args: &[&str]) -> Self {
        let mut child = Command::new(MCP)
            .arg("playground")
            .args(args)
            .current_dir(sandbox.path())
            .env("XDG_CONFIG_HOME", sandbox.path().join("xdg"))
            .env("XDG_DATA_HOME", sandbox.path().join("data"))
            .env("XDG_STATE_HOME", sandbox.path().join("state"))
            .env_remove("RUST_LOG")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        for stream in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    let Ok(line) = line else { return };
                    if tx.send(line).is_err() {
                        return;
                    }
                }
            });
        }
        Self { child, lines }
    }

    /// The first output line `pick` accepts.
    fn line(&self, what: &str, pick: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let Ok(line) = self.lines.recv_timeout(left) else {
                break;
            };
            if pick(&line) {
                return line;
            }
            seen.push(line);
        }
        panic!("no {what}; seen:\n{}", seen.join("\n"));
    }

    /// Ctrl-C; the exit code.
    fn interrupt(mut self) -> i32 {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-INT", &pid])
                .status()
                .unwrap()
                .success()
        );
        self.wait()
    }

    fn wait(&mut self) -> i32 {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            // Polling the child's state with a deadline (no event to await).
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("mcp playground did not exit");
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// The page's side: the session and the API.
struct Page {
    client: reqwest::Client,
    origin: String,
    cookie: String,
    token: String,
}

impl Page {
    async fn open(url: &str) -> Page {
        let (origin, code) = url.split_once("/#code=").expect("a one-time code");
        let client = reqwest::Client::new();
        let reply = client
            .post(format!("{origin}/api/session"))
            .header("Origin", origin)
            .header("Content-Type", "application/json")
            .body(json!({"code": code}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 200);
        let cookie = reply.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_owned();
        let body: Value = serde_json::from_str(&reply.text().await.unwrap()).unwrap();
        Page {
            client,
            origin: origin.to_owned(),
            cookie,
            token: body["token"].as_str().unwrap().to_owned(),
        }
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.origin))
            .header("Origin", &self.origin)
            .header("Cookie", &self.cookie)
            .header("X-Playground-Token", &self.token)
    }

    async fn get(&self, path: &str) -> Value {
        let reply = self
            .request(reqwest::Method::GET, path)
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 200);
        serde_json::from_str::<Value>(&reply.text().await.unwrap()).unwrap()["result"].clone()
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        let reply = self
            .request(reqwest::Method::POST, path)
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        serde_json::from_str(&reply.text().await.unwrap()).unwrap()
    }

    /// The event stream, from now on.
    async fn events(&self) -> Events {
        let reply = self
            .request(reqwest::Method::GET, "/api/events")
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 200);
        Events {
            reply,
            text: String::new(),
            read: 0,
        }
    }

    /// Follows the event stream until every server in `wanted` has
    /// reported its status there.
    async fn until_settled(&self, wanted: &[(&str, &str)]) {
        let mut events = self.events().await;
        let mut left: Vec<(&str, &str)> = wanted.to_vec();
        let settled = tokio::time::timeout(WAIT, async {
            while !left.is_empty() {
                let event = events.next().await;
                left.retain(|(server, kind)| {
                    !(event["server"] == *server && event["kind"] == *kind)
                });
            }
        })
        .await;
        assert!(
            settled.is_ok(),
            "servers not settled: {left:?}\n{}",
            events.text
        );
    }
}

/// The page's event stream.
struct Events {
    reply: reqwest::Response,
    text: String,
    /// Bytes of `text` already looked at (whole lines).
    read: usize,
}

impl Events {
    /// The next event.
    async fn next(&mut self) -> Value {
        loop {
            while let Some(end) = self.text[self.read..].find('\n') {
                let line = &self.text[self.read..self.read + end];
                self.read += end + 1;
                if let Some(event) = line
                    .strip_prefix("data: ")
                    .and_then(|data| serde_json::from_str::<Value>(data).ok())
                {
                    return event;
                }
            }
            let chunk = self
                .reply
                .chunk()
                .await
                .unwrap()
                .expect("the stream goes on");
            self.text.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// The next event `pick` accepts.
    async fn until(&mut self, pick: impl Fn(&Value) -> bool) -> Value {
        let found = tokio::time::timeout(WAIT, async {
            loop {
                let event = self.next().await;
                if pick(&event) {
                    return event;
                }
            }
        })
        .await;
        found.unwrap_or_else(|_| panic!("no such event in:\n{}", self.text))
    }
}

#[test]
fn the_playground_serves_the_configured_servers_and_ends_on_ctrl_c() {
    let sandbox = Sandbox::new().with_servers(&[
        ("notes", demo("notes")),
        ("files", demo("files")),
        ("github", demo("github")),
        (
            "broken",
            json!({"command": "/bin/sh", "args": ["-c", "echo 'no such database' >&2; exit 3"]}),
        ),
    ]);
    let running = Running::start(&sandbox, &["--no-open"]);
    let url = running.line("URL", |l| l.trim_start().starts_with("http://127.0.0.1:"));
    let url = url.trim().to_owned();
    assert!(url.contains("/#code="), "{url}");
    runtime().block_on(async {
        let page = Page::open(&url).await;
        page.until_settled(&[
            ("notes", "ready"),
            ("files", "ready"),
            ("github", "ready"),
            ("broken", "failed"),
        ])
        .await;
        let servers = page.get("/api/servers").await;
        let eras: Vec<(String, Value, Value)> = servers["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().to_owned(),
                    s["status"].clone(),
                    s["era"].clone(),
                )
            })
            .collect();
        assert_eq!(
            eras,
            [
                ("notes".into(), json!("ready"), json!("modern")),
                ("files".into(), json!("ready"), json!("legacy")),
                ("github".into(), json!("ready"), json!("modern")),
                ("broken".into(), json!("restarting"), Value::Null),
            ]
        );
        let broken = &servers["servers"][3];
        assert!(
            broken["error"]["stderrTail"]
                .as_str()
                .unwrap()
                .contains("no such database"),
            "{broken}"
        );
        assert!(broken["nextAttemptAt"].as_u64().is_some(), "{broken}");
        let called = page
            .post(
                "/api/call",
                json!({"server": "github", "tool": "search", "arguments": {"query": "stale"}}),
            )
            .await;
        let text = called["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("demo-project#42"), "{text}");
        let ns = page.get("/api/namespace").await;
        assert!(
            ns["collisions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["tool"] == "search")
        );
    });
    assert_eq!(running.interrupt(), 0);
}

#[test]
fn a_port_in_use_is_an_error_naming_it() {
    let sandbox = Sandbox::new().with_servers(&[("notes", demo("notes"))]);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let mut running = Running::start(&sandbox, &["--no-open", "--port", &port]);
    let line = running.line("error", |l| l.contains("error"));
    assert!(
        line.contains(&format!("cannot listen on 127.0.0.1:{port}")),
        "{line}"
    );
    assert_eq!(running.wait(), 2);
}

#[test]
fn a_servers_question_is_said_on_the_terminal_and_answered_on_the_page() {
    use mcp_testkit::{Behavior, InputRequest, InputSpec, Script};
    let form = InputRequest::elicit_form(
        "Who are you?",
        json!({"type": "object", "properties": {"name": {"type": "string"}}}),
    );
    let asking = Script::modern().tool("ask", Behavior::Ask(InputSpec::one("user", form)));
    let sandbox = Sandbox::new().with_servers(&[(
        "asker",
        support::script(serde_json::to_value(asking).unwrap()),
    )]);
    let running = Running::start(&sandbox, &["--no-open"]);
    let url = running.line("URL", |l| l.trim_start().starts_with("http://127.0.0.1:"));
    runtime().block_on(async {
        let page = Page::open(url.trim()).await;
        page.until_settled(&[("asker", "ready")]).await;
        let mut events = page.events().await;
        let call = page.post(
            "/api/call",
            json!({"server": "asker", "tool": "ask", "arguments": {}}),
        );
        let answer = async {
            events
                .until(|e| e["kind"] == "questions" && e["waiting"] == 1)
                .await;
            let waiting = page.get("/api/questions").await;
            assert_eq!(waiting[0]["server"], "asker", "{waiting}");
            let answered = page
                .post(
                    "/api/answer",
                    json!({"id": waiting[0]["id"], "action": "accept",
                           "content": {"name": "Ada"}}),
                )
                .await;
            assert!(answered.get("error").is_none(), "{answered}");
        };
        let (called, ()) = tokio::join!(call, answer);
        assert_eq!(
            called["result"]["structuredContent"]["rounds"][0]["user"],
            json!({"action": "accept", "content": {"name": "Ada"}}),
            "{called}"
        );
    });
    let said = running.line("question line", |l| l.starts_with("question:"));
    assert_eq!(
        said,
        "question: server `asker` asks for a form to fill in: answer it on the page (1 waiting)"
    );
    assert_eq!(running.interrupt(), 0);
}
