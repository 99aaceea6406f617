//! A real HTTP API as an MCP server through the binary: the FastAPI pet
//! shop (interop/python/openapi_app.py, run from the interop venv that
//! `cargo xtask test` installs) is loaded from its own generated
//! `/openapi.json` (OpenAPI 3.1) by an `"openapi"` entry, and `mcp tools`,
//! `mcp inspect` and `mcp call` work on it unchanged: path, query (an enum,
//! an array) and body parameters, an API-key and a bearer scheme from
//! variables, an error status, a binary response. The app records what it
//! received, so every check is on what the API saw. `mcp add --openapi`
//! writes the same entry.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const DEADLINE: Duration = Duration::from_secs(30);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The FastAPI app, killed when dropped.
struct App {
    child: Child,
    base: String,
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl App {
    fn start() -> Self {
        let python = root().join("target/interop-venv/bin/python");
        assert!(
            python.exists(),
            "{} is missing: run `cargo xtask test` (or `cargo xtask interop`), which installs the \
             interop venv with FastAPI",
            python.display()
        );
        let mut child = Command::new(&python)
            .arg(root().join("interop/python/openapi_app.py"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        // The app prints its address once it listens; a line is an event.
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(DEADLINE)
            .expect("the FastAPI app printed its address");
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Self { child, base }
    }

    /// What the app received, in order (method, path, query pairs, API key,
    /// Authorization, body).
    fn seen(&self) -> Vec<Value> {
        serde_json::from_slice::<Vec<Value>>(&fetch(&format!("{}/_seen", self.base))).unwrap()
    }
}

/// A plain GET without curl (loopback, HTTP/1.0).
fn fetch(url: &str) -> Vec<u8> {
    use std::io::{Read as _, Write as _};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    write!(stream, "GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n").unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let at = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    response[at + 4..].to_vec()
}

struct Sandbox {
    dir: TempDir,
}

impl Sandbox {
    fn new(servers: Value) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "data", "xdg"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        std::fs::write(
            dir.path().join("servers.json"),
            json!({"mcpServers": servers}).to_string(),
        )
        .unwrap();
        Self { dir }
    }

    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
        let mut cmd = Command::new(MCP);
        cmd.current_dir(self.dir.path())
            .arg("--config")
            .arg(self.dir.path().join("servers.json"))
            .args(args)
            .env("HOME", self.dir.path().join("home"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("XDG_CONFIG_HOME", self.dir.path().join("xdg"))
            .env_remove("PETS_KEY")
            .env_remove("PETS_TOKEN")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null());
        for (name, value) in env {
            cmd.env(name, value);
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        // No secret of the API is ever printed.
        for secret in ["k-123", "b-456"] {
            assert!(
                !stdout.contains(secret) && !stderr.contains(secret),
                "`mcp {}` printed a secret:\n{stdout}\n{stderr}",
                args.join(" ")
            );
        }
        (out.status.code(), stdout, stderr)
    }
}

fn pets_entry(app: &App) -> Value {
    json!({
        "openapi": format!("{}/openapi.json", app.base),
        "base_url": app.base,
        "credentials": {"APIKeyHeader": "PETS_KEY", "HTTPBearer": "PETS_TOKEN"}
    })
}

/// The sorted tool names of `mcp tools --format json`.
fn tool_names(out: &str) -> Vec<String> {
    let doc: Value = serde_json::from_str(out).unwrap();
    let mut names: Vec<String> = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

fn query(hit: &Value) -> Vec<(String, String)> {
    hit["query"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p[0].as_str().unwrap().to_owned(),
                p[1].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_fastapi_app_is_listed_inspected_and_called_through_its_own_document() {
    let app = App::start();
    let sandbox = Sandbox::new(json!({"pets": pets_entry(&app)}));

    let (code, out, err) = sandbox.run(&["tools", "--format", "json"], &[]);
    assert_eq!(code, Some(0), "{err}");
    let names = tool_names(&out);
    assert_eq!(
        names,
        ["create_pet", "download_file", "get_pet", "list_pets"]
    );

    let (code, out, err) = sandbox.run(&["inspect", "pets", "--json"], &[]);
    assert_eq!(code, Some(0), "{err}");
    let inspected: Value = serde_json::from_str(&out).unwrap();
    let text = inspected.to_string();
    assert!(
        text.contains("readOnlyHint"),
        "GET operations are read-only hints"
    );
    assert!(
        text.contains("\"bird\""),
        "the enum reaches the schema: {text}"
    );

    // Query: an enum and an array (form, exploded), as the document says.
    let (code, out, err) = sandbox.run(
        &[
            "call",
            "pets/list_pets",
            "--args",
            r#"{"kind": "dog", "tags": ["good", "x"], "limit": 5}"#,
        ],
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("Rex"), "{out}");
    let hit = app.seen().last().cloned().unwrap();
    assert_eq!(hit["method"], "GET");
    assert_eq!(hit["path"], "/pets");
    let mut q = query(&hit);
    q.sort();
    assert_eq!(
        q,
        [
            ("kind".into(), "dog".into()),
            ("limit".into(), "5".into()),
            ("tags".into(), "good".into()),
            ("tags".into(), "x".into())
        ]
    );

    // A value outside the enum is refused before anything is sent.
    let before = app.seen().len();
    let (code, _, err) = sandbox.run(&["call", "pets/list_pets", "kind=fish"], &[]);
    assert_eq!(code, Some(1), "{err}");
    // FastAPI writes the enum as `anyOf: [{$ref}, {type: null}]`; the
    // allowed values are found through both.
    assert!(err.contains("bird"), "the allowed values are listed: {err}");
    assert_eq!(app.seen().len(), before);

    // A path parameter, percent-encoded; an error status is the tool's
    // error with the status, never a protocol failure.
    let (code, out, err) = sandbox.run(&["call", "pets/get_pet", "pet_id=99"], &[]);
    assert_ne!(code, Some(0));
    assert!(format!("{out}{err}").contains("404"), "{out}{err}");
    assert_eq!(app.seen().last().unwrap()["path"], "/pets/99");

    // The body and the API key from its variable; without the variable the
    // call is refused by name and the API sees nothing.
    let before = app.seen().len();
    let (code, _, err) = sandbox.run(&["call", "pets/create_pet", "name=Tom", "kind=cat"], &[]);
    assert_ne!(code, Some(0));
    assert!(err.contains("PETS_KEY"), "{err}");
    assert_eq!(app.seen().len(), before, "nothing was sent without the key");
    let (code, out, err) = sandbox.run(
        &["call", "pets/create_pet", "name=Tom", "kind=cat", "--json"],
        &[("PETS_KEY", "k-123")],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("Tom"), "{out}");
    let hit = app.seen().last().cloned().unwrap();
    assert_eq!(hit["method"], "POST");
    assert_eq!(hit["api_key"], "k-123");
    assert_eq!(
        hit["authorization"],
        Value::Null,
        "only the scheme it needs"
    );
    let body: Value = serde_json::from_str(hit["body"].as_str().unwrap()).unwrap();
    assert_eq!(body, json!({"name": "Tom", "kind": "cat"}));

    // Bearer, and a binary response as a blob.
    let (code, out, err) = sandbox.run(
        &["call", "pets/download_file", "name=a b.bin", "--json"],
        &[("PETS_TOKEN", "b-456")],
    );
    assert_eq!(code, Some(0), "{err}");
    let result: Value = serde_json::from_str(&out).unwrap();
    let text = result.to_string();
    assert!(text.contains("application/octet-stream"), "{text}");
    assert!(text.contains("blob"), "{text}");
    let hit = app.seen().last().cloned().unwrap();
    assert_eq!(hit["raw_path"], "/files/a%20b.bin");
    assert_eq!(hit["authorization"], "Bearer b-456");
}

#[test]
fn mcp_add_writes_an_openapi_entry_that_works_and_refuses_secrets() {
    let app = App::start();
    let sandbox = Sandbox::new(json!({}));
    let spec = format!("{}/openapi.json", app.base);
    let (code, out, err) = sandbox.run(
        &[
            "add",
            "pets",
            "--openapi",
            &spec,
            "--base-url",
            &app.base,
            "--operations",
            "list_pets,tag:files",
            "--credential",
            "HTTPBearer=PETS_TOKEN",
        ],
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("added server `pets`"), "{out}");
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(sandbox.dir.path().join("servers.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        written["mcpServers"]["pets"],
        json!({"openapi": spec, "base_url": app.base,
               "operations": ["list_pets", "tag:files"],
               "credentials": {"HTTPBearer": "PETS_TOKEN"}})
    );
    let (code, out, err) = sandbox.run(&["tools", "--format", "json"], &[]);
    assert_eq!(code, Some(0), "{err}");
    let names = tool_names(&out);
    assert_eq!(names, ["download_file", "list_pets"], "the selection holds");

    // A token value where a variable name belongs, and credentials in the
    // base URL, are refused without being printed.
    for args in [
        vec![
            "add",
            "p2",
            "--openapi",
            &spec,
            "--base-url",
            &app.base,
            "--credential",
            "HTTPBearer=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        ],
        vec![
            "add",
            "p3",
            "--openapi",
            &spec,
            "--base-url",
            "https://user:pw@api.example.com",
        ],
        vec![
            "add",
            "p4",
            "--openapi",
            "/surely/not/here.json",
            "--base-url",
            &app.base,
        ],
        vec!["add", "p5", "--openapi", &spec],
    ] {
        let (code, out, err) = sandbox.run(&args, &[]);
        assert_eq!(code, Some(1), "{args:?}: {out}{err}");
        assert!(!err.contains("ghp_") && !err.contains("user:pw"), "{err}");
    }
}

#[test]
fn a_project_file_s_openapi_entry_is_shown_before_it_is_approved() {
    let app = App::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".mcp.json"),
        json!({"mcpServers": {"pets": pets_entry(&app)}}).to_string(),
    )
    .unwrap();
    let out = Command::new(MCP)
        .current_dir(dir.path())
        .args(["trust", "--yes"])
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_CONFIG_HOME", dir.path().join("xdg"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("serves the OpenAPI document"), "{text}");
    assert!(
        text.contains("sending $PETS_KEY for its security scheme APIKeyHeader"),
        "{text}"
    );
    assert!(text.contains("PETS_TOKEN"), "{text}");
}

#[test]
fn fused_documents_in_one_entry_keep_their_prefixes_and_selections() {
    let app = App::start();
    let spec = format!("{}/openapi.json", app.base);
    let sandbox = Sandbox::new(json!({"shop": {"documents": [
        {"openapi": spec, "base_url": app.base, "prefix": "read_", "operations": ["tag:pets"],
         "exclude_operations": ["get_pet"]},
        {"openapi": spec, "base_url": app.base, "prefix": "files_", "operations": ["path:/files/*"],
         "credentials": {"HTTPBearer": "PETS_TOKEN"}}
    ]}}));
    let (code, out, err) = sandbox.run(&["tools", "--format", "json"], &[]);
    assert_eq!(code, Some(0), "{err}");
    let names = tool_names(&out);
    assert_eq!(names, ["files_download_file", "read_list_pets"]);
    let (code, _, err) = sandbox.run(
        &["call", "shop/files_download_file", "name=f"],
        &[("PETS_TOKEN", "b-456")],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(app.seen().last().unwrap()["path"], "/files/f");
    // A key of one document at the entry's top level is refused.
    let bad = Sandbox::new(json!({"shop": {"base_url": app.base, "documents": [
        {"openapi": "x.json", "base_url": app.base}]}}));
    let (code, _, err) = bad.run(&["tools"], &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("mcpServers.shop.base_url"), "{err}");
}
