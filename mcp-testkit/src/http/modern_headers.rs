//! The 2026-07-28 header checks a stateless server makes: `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` headers of a tool's
//! `x-mcp-header` annotations must be present and match the body. A failed
//! check is answered `400` with `-32020` (HeaderMismatch).
//!
//! The value rules are `mcp_types::headers`' (the server half uses the same
//! check), tested there against the spec's test-case table.

use axum::http::HeaderMap;
use serde_json::Value;

use crate::Script;
use crate::wire::META_PROTOCOL_VERSION;

/// JSON-RPC code of a header that is missing or does not match the body.
pub const HEADER_MISMATCH: i64 = -32020;

/// Methods whose `Mcp-Name` header is required, with the param it mirrors.
const NAMED: [(&str, &str); 6] = [
    ("tools/call", "name"),
    ("prompts/get", "name"),
    ("resources/read", "uri"),
    // SEP-2663: the tasks extension's methods name their task.
    ("tasks/get", "taskId"),
    ("tasks/update", "taskId"),
    ("tasks/cancel", "taskId"),
];

/// Checks one modern request; `Err` holds the error message.
pub(crate) fn check(headers: &HeaderMap, frame: &Value, script: &Script) -> Result<(), String> {
    let method = frame
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let params = frame.get("params").cloned().unwrap_or(Value::Null);
    let version = header(headers, "mcp-protocol-version")
        .ok_or("Header mismatch: MCP-Protocol-Version header is required")?;
    let meta_pointer = format!("/_meta/{}", META_PROTOCOL_VERSION.replace('/', "~1"));
    if let Some(body_version) = params.pointer(&meta_pointer).and_then(Value::as_str)
        && body_version != version
    {
        return Err(format!(
            "Header mismatch: MCP-Protocol-Version header value '{version}' does not match body value '{body_version}'"
        ));
    }
    let sent_method =
        header(headers, "mcp-method").ok_or("Header mismatch: Mcp-Method header is required")?;
    if sent_method != method {
        return Err(format!(
            "Header mismatch: Mcp-Method header value '{sent_method}' does not match body value '{method}'"
        ));
    }
    if let Some((_, field)) = NAMED.iter().find(|(m, _)| *m == method) {
        let sent =
            header(headers, "mcp-name").ok_or("Header mismatch: Mcp-Name header is required")?;
        let body = params
            .get(*field)
            .and_then(Value::as_str)
            .unwrap_or_default();
        if mcp_types::headers::decode_header_value(sent.trim()).as_deref() != Some(body) {
            return Err(
                "Header mismatch: Mcp-Name header value does not match the body".to_owned(),
            );
        }
    }
    if method == "tools/call" {
        check_params(headers, &params, script)?;
    }
    Ok(())
}

/// The `Mcp-Param-*` headers of the called tool's annotations, by the one
/// check the server half also makes ([`mcp_types::headers::check_param_headers`]).
/// A tool whose annotations are invalid is not checked.
fn check_params(headers: &HeaderMap, params: &Value, script: &Script) -> Result<(), String> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(tool) = script.tools.iter().find(|t| t.name() == Some(name)) else {
        return Ok(());
    };
    let Some(schema) = tool.tool.get("inputSchema") else {
        return Ok(());
    };
    let Ok(annotations) = mcp_types::headers::param_headers(schema) else {
        return Ok(());
    };
    let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
    mcp_types::headers::check_param_headers(&annotations, &arguments, |name| {
        headers.get(name).map(|v| v.as_bytes())
    })
    .map_err(|mismatch| mismatch.to_string())
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}
