//! JSON-RPC frame builders and the protocol constants the fake server uses.
//!
//! Everything here is plain `serde_json::Value`: the testkit deliberately
//! does not share types with the client it tests.

use serde_json::{Map, Value, json};

/// The four protocol versions that start with an `initialize` handshake.
pub const LEGACY_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The protocol versions that carry their version in every request's `_meta`.
pub const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];

/// `_meta` key of the per-request protocol version (2026-07-28).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the per-request client capabilities (2026-07-28).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the per-request log level (2026-07-28).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server identity on every 2026-07-28 result.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key naming the `subscriptions/listen` request a notification
/// (or the listen result) belongs to (2026-07-28).
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key tying a message to a task (2025-11-25 tasks).
pub const META_RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// Extension id of the 2026-07-28 tasks extension (SEP-2663).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// `_meta` key under which `prompts/get` and `resources/read` results report
/// the client input they received (the testkit's own key).
pub const META_INPUT_RESPONSES: &str = "mcp-testkit/inputResponses";

/// JSON-RPC: the line is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: unknown method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: bad params (also: missing required `_meta` fields in 2026-07-28).
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC: internal error (used for the testkit's own bounds).
pub const INTERNAL_ERROR: i64 = -32603;
/// Legacy (up to 2025-11-25): resource not found. 2026-07-28 uses `-32602`.
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// 2025-11-25: a URL-mode elicitation is required first (script it with `Behavior::Error`).
pub const URL_ELICITATION_REQUIRED: i64 = -32042;
/// 2026-07-28: the request needs a client capability it did not declare.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// 2026-07-28: the request's protocol version is not supported.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Whether `version` is one of the handshake-era versions.
pub fn is_legacy(version: &str) -> bool {
    LEGACY_VERSIONS.contains(&version)
}

/// Whether `version` is one of the per-request-metadata versions.
pub fn is_modern(version: &str) -> bool {
    MODERN_VERSIONS.contains(&version)
}

pub(crate) fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub(crate) fn error(id: &Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = Map::new();
    error.insert("code".into(), code.into());
    error.insert("message".into(), message.into());
    if let Some(data) = data {
        error.insert("data".into(), data);
    }
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

pub(crate) fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

pub(crate) fn request(id: &Value, method: &str, params: &Value) -> Value {
    let mut frame = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if !params.is_null() {
        frame["params"] = params.clone();
    }
    frame
}

/// A request id turned into a map key that keeps `1` and `"1"` apart.
pub(crate) fn id_key(id: &Value) -> String {
    id.to_string()
}

pub(crate) fn text_block(text: impl Into<String>) -> Value {
    json!({"type": "text", "text": text.into()})
}

/// A `CallToolResult` body with one text block.
pub(crate) fn text_result(text: impl Into<String>) -> Value {
    json!({"content": [text_block(text)]})
}

/// The `_meta` object of a request's params, if any.
pub(crate) fn request_meta(params: &Value) -> Option<&Map<String, Value>> {
    params.get("_meta").and_then(Value::as_object)
}
