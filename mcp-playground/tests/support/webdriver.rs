//! A small WebDriver client: chromedriver started on a free loopback port,
//! headless Chromium, and the handful of commands the browser tests use
//! (navigate, find, click, type, read text, run a script, screenshot).
//!
//! There is no fallback: without `chromedriver` and `chromium` the tests
//! fail, saying what to install (`.ci/run` installs both).
#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

/// How long an element or a text may take to appear.
pub const PATIENCE: Duration = Duration::from_secs(20);
/// The W3C key of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// An element of the current page.
#[derive(Clone, Debug)]
pub struct Element(String);

/// A browser session with its own chromedriver.
pub struct Browser {
    http: reqwest::Client,
    session: String,
    driver: Child,
}

fn program(env: &str, candidates: &[&str]) -> PathBuf {
    if let Some(path) = std::env::var_os(env) {
        return PathBuf::from(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in candidates {
            let full = dir.join(name);
            if full.is_file() {
                return full;
            }
        }
    }
    panic!(
        "none of {candidates:?} is installed (or set {env}): the browser tests need Debian's \
         chromium and chromium-driver (`apt-get install -y chromium chromium-driver`; .ci/run does it)"
    );
}

impl Browser {
    /// Starts chromedriver and a headless Chromium (a fresh profile).
    /// `evil.test` resolves to 127.0.0.1 in it, as a DNS-rebound name would.
    pub async fn start() -> Browser {
        let driver_path = program("CHROMEDRIVER", &["chromedriver"]);
        let chromium = program(
            "CHROMIUM",
            &["chromium", "chromium-browser", "google-chrome"],
        );
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let mut command = Command::new(&driver_path);
        command
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // Its own process group: a failed test kills the browser with it.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let driver = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", driver_path.display()));
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        let mut browser = Browser {
            http,
            session: base.clone(),
            driver,
        };
        // Ready when its status says so (bounded).
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Ok(reply) = browser.http.get(format!("{base}/status")).send().await
                && let Ok(text) = reply.text().await
                && serde_json::from_str::<Value>(&text)
                    .is_ok_and(|v| v["value"]["ready"] == json!(true))
            {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "chromedriver did not become ready"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1500,1300", "--no-first-run", "--disable-extensions",
                    "--host-resolver-rules=MAP evil.test 127.0.0.1",
                ],
            },
        }}});
        let created = browser.call("POST", "/session", capabilities).await;
        let id = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_owned();
        browser.session = format!("{base}/session/{id}");
        browser
    }

    /// One WebDriver command; its `value`.
    async fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.session);
        let request = match method {
            "GET" => self.http.get(&url),
            "DELETE" => self.http.delete(&url),
            _ => self
                .http
                .post(&url)
                .header("Content-Type", "application/json")
                .body(body.to_string()),
        };
        let reply = request.send().await.expect("chromedriver answers");
        let text = reply.text().await.expect("chromedriver's body");
        let value: Value = serde_json::from_str(&text).expect("chromedriver speaks JSON");
        value["value"].clone()
    }

    async fn command(&self, method: &str, path: &str, body: Value) -> Value {
        let value = self.call(method, path, body).await;
        if let Some(error) = value.get("error") {
            panic!("WebDriver {method} {path}: {error}: {}", value["message"]);
        }
        value
    }

    pub async fn goto(&self, url: &str) {
        self.command("POST", "/url", json!({"url": url})).await;
    }

    pub async fn title(&self) -> String {
        self.command("GET", "/title", Value::Null)
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Every element matching `css` now.
    pub async fn find_all(&self, css: &str) -> Vec<Element> {
        let found = self
            .call(
                "POST",
                "/elements",
                json!({"using": "css selector", "value": css}),
            )
            .await;
        found
            .as_array()
            .map(|all| {
                all.iter()
                    .filter_map(|e| e[ELEMENT].as_str().map(|id| Element(id.to_owned())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The first element matching `css`, waiting for it (bounded).
    pub async fn wait(&self, css: &str) -> Element {
        self.wait_until(css, |_| true).await
    }

    /// The first element matching `css` whose text contains `text`.
    pub async fn wait_text(&self, css: &str, text: &str) -> Element {
        self.wait_until(css, |t| t.contains(text)).await
    }

    async fn wait_until(&self, css: &str, pick: impl Fn(&str) -> bool) -> Element {
        let deadline = Instant::now() + PATIENCE;
        let mut last = Vec::new();
        loop {
            last.clear();
            for element in self.find_all(css).await {
                let text = self.text_of(&element).await;
                if pick(&text) {
                    return element;
                }
                last.push(text);
            }
            if Instant::now() > deadline {
                self.screenshot("timed-out").await;
                panic!("no {css} as wanted within {PATIENCE:?}; texts seen: {last:?}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn text_of(&self, element: &Element) -> String {
        self.call("GET", &format!("/element/{}/text", element.0), Value::Null)
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    pub async fn text(&self, element: &Element) -> String {
        self.command("GET", &format!("/element/{}/text", element.0), Value::Null)
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    pub async fn click(&self, element: &Element) {
        self.command("POST", &format!("/element/{}/click", element.0), json!({}))
            .await;
    }

    /// Waits for `css` and clicks it (found again if the page replaced
    /// it in between).
    pub async fn click_on(&self, css: &str) {
        self.act_on(css, "click", json!({})).await;
    }

    /// Types `text` into the field `css`.
    pub async fn type_into(&self, css: &str, text: &str) {
        self.act_on(css, "value", json!({ "text": text })).await;
    }

    /// `POST /element/{id}/{action}` on the first `css`, retried (bounded)
    /// while the element is replaced or not yet usable.
    async fn act_on(&self, css: &str, action: &str, body: Value) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let element = self.wait(css).await;
            let done = self
                .call(
                    "POST",
                    &format!("/element/{}/{action}", element.0),
                    body.clone(),
                )
                .await;
            let Some(error) = done.get("error").and_then(Value::as_str) else {
                return;
            };
            let passing = [
                "stale element reference",
                "element not interactable",
                "element click intercepted",
            ];
            if !passing.contains(&error) || Instant::now() > deadline {
                panic!("WebDriver {action} on {css}: {error}: {}", done["message"]);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Runs `script` (a function body) with `args`; its return value.
    pub async fn script(&self, script: &str, args: Value) -> Value {
        self.command(
            "POST",
            "/execute/sync",
            json!({"script": script, "args": args}),
        )
        .await
    }

    /// Saves a screenshot of the window as
    /// `target/playground-screenshots/NAME.png`; returns its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let data = self.call("GET", "/screenshot", Value::Null).await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(data.as_str().unwrap_or_default())
            .expect("a base64 PNG");
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }

    /// Ends the session (the browser quits) and chromedriver.
    pub async fn quit(mut self) {
        self.call("DELETE", "", Value::Null).await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Drop for Browser {
    /// A failed test leaves no browser behind: the whole process group goes.
    fn drop(&mut self) {
        let group = format!("-{}", self.driver.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = self.driver.wait();
    }
}

/// `target/playground-screenshots` of this workspace (or of
/// `CARGO_TARGET_DIR`).
pub fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("playground-screenshots")
}
