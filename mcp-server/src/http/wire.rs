//! What the HTTP layer reads of a message (never more than routing needs)
//! and its own answers: JSON-RPC errors with an HTTP status, JSON and
//! event-stream bodies, and the 2026-07-28 header checks.

use std::borrow::Cow;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use base64::Engine as _;
use bytes::Bytes;
use mcp_types::headers::{MCP_METHOD, MCP_NAME};
use mcp_types::requests::{CallTool, CancelTask, GetPrompt, GetTask, ReadResource, UpdateTask};
use mcp_types::{ProtocolVersion, Request, RequestId, error_codes, meta_keys};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// The header carrying a legacy session's id.
pub(super) const SESSION_ID: &str = "mcp-session-id";
/// The header naming the protocol version.
pub(super) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// JSON-RPC code of the HTTP layer's own refusals (a missing session id,
/// a bound).
pub(super) const SERVER_ERROR: i64 = -32000;
/// JSON-RPC code of an unknown or ended session.
pub(super) const SESSION_NOT_FOUND: i64 = -32001;

/// The routing fields of one message.
#[derive(Debug, Deserialize)]
pub(super) struct Head<'a> {
    #[serde(default)]
    pub(super) id: Option<RequestId>,
    #[serde(default, borrow)]
    pub(super) method: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub(super) result: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub(super) error: Option<&'a RawValue>,
}

impl Head<'_> {
    /// A response (to a request of the other side).
    pub(super) fn is_response(&self) -> bool {
        self.method.is_none() && (self.result.is_some() || self.error.is_some())
    }

    /// A request (method and id).
    pub(super) fn request_id(&self) -> Option<&RequestId> {
        self.method.as_ref().and(self.id.as_ref())
    }

    /// `params` as JSON (`Null` without).
    pub(super) fn params_value(&self) -> Value {
        self.params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null)
    }
}

/// The progress token of a request (`params._meta.progressToken`) or of a
/// progress notification (`params.progressToken`), as JSON text.
pub(super) fn progress_token(params: &Value, notification: bool) -> Option<String> {
    let token = if notification {
        params.get(meta_keys::PROGRESS_TOKEN)
    } else {
        params.get("_meta")?.get(meta_keys::PROGRESS_TOKEN)
    }?;
    Some(token.to_string())
}

/// The protocol version an `initialize` answer names.
pub(super) fn negotiated(message: &[u8]) -> Option<ProtocolVersion> {
    #[derive(Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        result: Initialized<'a>,
    }
    #[derive(Deserialize)]
    struct Initialized<'a> {
        #[serde(rename = "protocolVersion", borrow)]
        protocol_version: Cow<'a, str>,
    }
    let answer = serde_json::from_slice::<Answer<'_>>(message).ok()?;
    ProtocolVersion::parse(&answer.result.protocol_version)
}

/// The version a request's `_meta` names.
pub(super) fn meta_version(params: &Value) -> Option<&str> {
    params
        .get("_meta")?
        .get(meta_keys::PROTOCOL_VERSION)?
        .as_str()
}

/// A JSON-RPC error answered by the HTTP layer with `status`.
pub(super) fn error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code, "message": message },
    });
    let mut response = json(Bytes::from(body.to_string()));
    *response.status_mut() = status;
    response
}

/// `status` without a body.
pub(super) fn empty(status: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}

/// One message as a JSON body.
pub(super) fn json(bytes: Bytes) -> Response {
    let mut response = Response::new(Body::from(bytes));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// One message as an event of an event stream.
pub(super) fn event(message: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(message.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(message);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// An SSE comment: nothing for the client, a write for the connection.
pub(super) fn keep_alive() -> Bytes {
    Bytes::from_static(b": keep-alive\n\n")
}

/// An event-stream response of `body`.
pub(super) fn stream(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The protocol version the `MCP-Protocol-Version` header names: `Ok(None)`
/// without one, `Err` for one that is not a version we implement.
/// `Err` holds the header's text (lossy) when it names no version known
/// here.
pub(super) fn header_version(headers: &HeaderMap) -> Result<Option<ProtocolVersion>, String> {
    match headers.get(PROTOCOL_VERSION) {
        None => Ok(None),
        Some(value) => value
            .to_str()
            .ok()
            .and_then(ProtocolVersion::parse)
            .map(Some)
            .ok_or_else(|| String::from_utf8_lossy(value.as_bytes()).into_owned()),
    }
}

/// 400 with `-32022` for a request whose `MCP-Protocol-Version` header
/// names a version this server does not know: the request's id, the
/// versions served and the one asked for (bounded, as the server's own
/// words never echo more than a header's worth).
pub(super) fn unsupported_version(
    id: Option<&mcp_types::RequestId>,
    requested: &str,
    supported: &[String],
) -> Response {
    let requested: String = requested.chars().take(128).collect();
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": mcp_types::error_codes::UNSUPPORTED_PROTOCOL_VERSION,
            "message": format!("Unsupported protocol version; supported: {}", supported.join(", ")),
            "data": { "supported": supported, "requested": requested },
        },
    });
    let mut response = json(Bytes::from(body.to_string()));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response
}

/// The HTTP status of a stateless (2026-07-28) answer sent as JSON, from
/// its `error` member (none: a result): `404` for `-32601`; `400` for
/// `-32602` and the 2026 errors a client must fix (`-32020` header
/// mismatch, `-32021` a capability it did not declare, `-32022` a version
/// not served); `200` for results and other errors.
pub(super) fn stateless_status(error: Option<&RawValue>) -> StatusCode {
    #[derive(serde::Deserialize)]
    struct Code {
        code: i64,
    }
    use mcp_types::error_codes as codes;
    let code = error.and_then(|e| serde_json::from_str::<Code>(e.get()).ok());
    match code {
        Some(Code { code }) if code == codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        Some(Code { code })
            if code == codes::INVALID_PARAMS
                || code == codes::HEADER_MISMATCH
                || code == codes::MISSING_REQUIRED_CLIENT_CAPABILITY
                || code == codes::UNSUPPORTED_PROTOCOL_VERSION =>
        {
            StatusCode::BAD_REQUEST
        }
        _ => StatusCode::OK,
    }
}

/// A header value with the Base64 sentinel form (`=?base64?…?=`) decoded.
fn decode(value: &str) -> Option<String> {
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

/// The 2026-07-28 checks of a stateless request's headers against its
/// body: `MCP-Protocol-Version` present (and equal to the version in
/// `_meta` when there is one), `Mcp-Method` equal to the method, `Mcp-Name`
/// equal to the name, URI or task id the method is about. `Err` holds the
/// message of the `-32020` answer (our words, no value of the client's).
pub(super) fn check_modern(
    headers: &HeaderMap,
    method: &str,
    params: &Value,
) -> Result<(), String> {
    let Some(version) = header_str(headers, PROTOCOL_VERSION) else {
        return Err("Header mismatch: the MCP-Protocol-Version header is required".to_owned());
    };
    if let Some(body) = meta_version(params)
        && body != version
    {
        return Err(
            "Header mismatch: the MCP-Protocol-Version header does not match the body's _meta"
                .to_owned(),
        );
    }
    let Some(sent) = header_str(headers, MCP_METHOD) else {
        return Err("Header mismatch: the Mcp-Method header is required".to_owned());
    };
    if sent != method {
        return Err("Header mismatch: the Mcp-Method header does not match the body".to_owned());
    }
    let field = if method == CallTool::METHOD || method == GetPrompt::METHOD {
        Some("name")
    } else if method == ReadResource::METHOD {
        Some("uri")
    } else if [GetTask::METHOD, UpdateTask::METHOD, CancelTask::METHOD].contains(&method) {
        // SEP-2663: the tasks extension's methods are routed by task id.
        Some("taskId")
    } else {
        None
    };
    if let Some(field) = field {
        let Some(sent) = header_str(headers, MCP_NAME) else {
            return Err("Header mismatch: the Mcp-Name header is required".to_owned());
        };
        let body = params
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or_default();
        if decode(sent).as_deref() != Some(body) {
            return Err("Header mismatch: the Mcp-Name header does not match the body".to_owned());
        }
    }
    Ok(())
}

/// A 2026-07-28 `tools/call`'s `Mcp-Param-*` headers against the called
/// tool's `x-mcp-header` parameters, as `handler` serves the tool
/// (SEP-2243; `mcp_types::headers::check_param_headers`). No tool known,
/// or a tool whose annotations are invalid (it is not listed): nothing to
/// check. `Err` holds the `-32020` message (our words and the header's
/// name, never its value).
pub(super) fn check_param_headers<H: crate::ServerHandler + ?Sized>(
    handler: &H,
    headers: &HeaderMap,
    params: &Value,
) -> Result<(), String> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Ok(());
    };
    let Some(schema) = handler.tool_input_schema(name) else {
        return Ok(());
    };
    let Ok(annotations) = mcp_types::headers::param_headers_of(&schema) else {
        return Ok(());
    };
    let none = Value::Null;
    let arguments = params.get("arguments").unwrap_or(&none);
    mcp_types::headers::check_param_headers(&annotations, arguments, |name| {
        headers.get(name).map(HeaderValue::as_bytes)
    })
    .map_err(|mismatch| mismatch.to_string())
}

/// The `-32020` answer to request `id`.
pub(super) fn mismatch_of(id: Option<&RequestId>, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": error_codes::HEADER_MISMATCH, "message": message },
    });
    let mut response = json(Bytes::from(body.to_string()));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn modern_headers_must_be_there_and_agree_with_the_body() {
        let params = serde_json::json!({
            "name": "echo tool",
            "_meta": { meta_keys::PROTOCOL_VERSION: "2026-07-28" }
        });
        let good = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", CallTool::METHOD),
            ("mcp-name", "echo tool"),
        ];
        assert_eq!(
            check_modern(&headers(&good), CallTool::METHOD, &params),
            Ok(())
        );
        let encoded = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", CallTool::METHOD),
            ("mcp-name", "=?base64?ZWNobyB0b29s?="),
        ];
        assert_eq!(
            check_modern(&headers(&encoded), CallTool::METHOD, &params),
            Ok(())
        );
        let missing_name = &good[..2];
        assert!(
            check_modern(&headers(missing_name), CallTool::METHOD, &params)
                .unwrap_err()
                .contains("Mcp-Name header is required")
        );
        let other_method = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ];
        assert!(
            check_modern(&headers(&other_method), CallTool::METHOD, &params)
                .unwrap_err()
                .contains("Mcp-Method header does not match")
        );
        let other_version = [
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-method", CallTool::METHOD),
            ("mcp-name", "echo tool"),
        ];
        assert!(
            check_modern(&headers(&other_version), CallTool::METHOD, &params)
                .unwrap_err()
                .contains("MCP-Protocol-Version header does not match")
        );
        assert!(
            check_modern(&headers(&good[1..]), CallTool::METHOD, &params)
                .unwrap_err()
                .contains("MCP-Protocol-Version header is required")
        );
    }
}
