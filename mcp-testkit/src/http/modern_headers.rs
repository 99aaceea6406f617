//! The 2026-07-28 header checks a stateless server makes: `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` headers of a tool's
//! `x-mcp-header` annotations must be present and match the body. A failed
//! check is answered `400` with `-32020` (HeaderMismatch).
//!
//! Written independently of the client's encoder, from the spec's text.

use axum::http::HeaderMap;
use base64::Engine as _;
use serde_json::Value;

use crate::Script;
use crate::wire::META_PROTOCOL_VERSION;

/// JSON-RPC code of a header that is missing or does not match the body.
pub const HEADER_MISMATCH: i64 = -32020;

/// Methods whose `Mcp-Name` header is required, with the param it mirrors.
const NAMED: [(&str, &str); 3] = [
    ("tools/call", "name"),
    ("prompts/get", "name"),
    ("resources/read", "uri"),
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
        if decode(sent).as_deref() != Some(body) {
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

/// The `Mcp-Param-*` headers of the called tool's annotations.
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
    let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
    let mut annotated = Vec::new();
    collect(schema, &arguments, &mut annotated);
    for (header_name, value) in annotated {
        let numeric = value.is_number();
        let expected = match value {
            Value::Null => continue,
            Value::String(s) => s,
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => n.to_string(),
            _ => continue,
        };
        let full = format!("mcp-param-{}", header_name.to_ascii_lowercase());
        let Some(sent) = header(headers, &full) else {
            return Err(format!(
                "Header mismatch: Mcp-Param-{header_name} header is required"
            ));
        };
        let decoded = decode(sent);
        let matches = if numeric {
            // Numbers compare numerically (`42.0` is `42`).
            decoded.as_deref().and_then(|d| d.parse::<f64>().ok()) == expected.parse::<f64>().ok()
        } else {
            decoded.as_deref() == Some(expected.as_str())
        };
        if !matches {
            return Err(format!(
                "Header mismatch: Mcp-Param-{header_name} header does not match the body"
            ));
        }
    }
    Ok(())
}

/// (annotation, argument value) for every annotated property reachable
/// through `properties` whose value is present.
fn collect(schema: &Value, arguments: &Value, out: &mut Vec<(String, Value)>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, prop) in props {
        let Some(value) = arguments.get(key) else {
            continue;
        };
        if let Some(name) = prop.get("x-mcp-header").and_then(Value::as_str) {
            out.push((name.to_owned(), value.clone()));
        }
        collect(prop, value, out);
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A header value with the Base64 sentinel form decoded.
pub(crate) fn decode(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok()),
        None => Some(value.to_owned()),
    }
}
