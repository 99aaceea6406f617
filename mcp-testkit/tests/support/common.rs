//! Helpers shared by the feature tests (each test file includes this with
//! `#[path]`; not every file uses every helper).
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use mcp_testkit::{FakeServer, Line, LineClient, Recorder, Script, wire, with_modern_meta};
use serde_json::{Value, json};

/// How long "nothing more arrives" is waited for.
pub(crate) const QUIET: Duration = Duration::from_millis(150);

/// A started server and a raw client on it.
pub(crate) fn start(script: Script) -> (LineClient, Recorder) {
    script.validate().expect("test script is valid");
    let running = FakeServer::new(script).start();
    (LineClient::over(running.stream), running.recorder)
}

/// A legacy client after the handshake at `version`.
pub(crate) async fn legacy_at(script: Script, version: &str) -> (LineClient, Recorder) {
    let (mut client, recorder) = start(script);
    let init = client.initialize(version).await;
    assert_eq!(init["result"]["protocolVersion"], version, "{init}");
    (client, recorder)
}

/// A legacy client after the handshake at 2025-11-25.
pub(crate) async fn legacy(script: Script) -> (LineClient, Recorder) {
    legacy_at(script, "2025-11-25").await
}

/// `params` with 2026-07-28 `_meta` and no client capabilities.
pub(crate) fn modern(params: Value) -> Value {
    with_modern_meta(params, Value::Null)
}

/// `params` with 2026-07-28 `_meta` declaring `capabilities`.
pub(crate) fn modern_with(params: Value, capabilities: Value) -> Value {
    with_modern_meta(params, capabilities)
}

/// `params` with 2026-07-28 `_meta` asking for log messages at `level`.
pub(crate) fn modern_logging(params: Value, level: &str) -> Value {
    let mut params = modern(params);
    params["_meta"][wire::META_LOG_LEVEL] = json!(level);
    params
}

/// Client capabilities declaring the tasks extension.
pub(crate) fn tasks_caps() -> Value {
    json!({"extensions": {wire::TASKS_EXTENSION: {}}})
}

/// Asserts that no line arrives for a while.
pub(crate) async fn assert_quiet(client: &mut LineClient) {
    assert_eq!(client.next_line(QUIET).await, Line::TimedOut);
}

/// The methods of `frames`, in order.
pub(crate) fn methods(frames: &[Value]) -> Vec<&str> {
    frames.iter().filter_map(|f| f["method"].as_str()).collect()
}

/// The first text block of a `tools/call` response.
pub(crate) fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {reply}"))
}

/// A `tools/call` request's params.
pub(crate) fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

/// `MCP_SPEC_DIR` (a relative path is taken from the workspace root, as
/// `.ci/run` sets it), default `<workspace root>/../shared/mcp-spec`.
fn spec_dir() -> PathBuf {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    match std::env::var_os("MCP_SPEC_DIR").map(PathBuf::from) {
        Some(dir) if dir.is_relative() => root.join(dir),
        Some(dir) => dir,
        None => root.join("../shared/mcp-spec"),
    }
}

/// Asserts `value` has every property the schema's `definition` requires
/// (one level deep: enough to catch a missing or misnamed field).
pub(crate) fn assert_has_required(version: &str, definition: &str, value: &Value) {
    let path = spec_dir().join(version).join("schema.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).unwrap();
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .unwrap();
    let required = defs[definition]["required"]
        .as_array()
        .unwrap_or_else(|| panic!("{definition} has no required list"));
    for field in required {
        let field = field.as_str().unwrap();
        assert!(
            value.get(field).is_some(),
            "{definition} needs {field:?}, got {value}"
        );
    }
}
