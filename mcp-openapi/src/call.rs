//! A tool call → one HTTP request → a `CallToolResult`.
//!
//! Every way a call can go wrong ends in a result with `isError: true`, a
//! sentence for the model, and its [`CallFailure`] under
//! [`FAILURE_META_KEY`] in the result's `_meta`: never a panic, never a
//! protocol error.

use std::time::Duration;

use base64::Engine as _;
use mcp_types::text::Untrusted;
use mcp_types::{
    AudioContent, BlobResourceContents, CallToolResult, ContentBlock, EmbeddedResource, ErrorCause,
    ImageContent, JsonObject, Meta, ResourceContents,
};
use reqwest::header::{ACCEPT, CONTENT_TYPE, COOKIE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::build::{base_type, is_json, is_text};
use crate::config::{Environment, Limits};
use crate::plan::{BodyPlan, CallPlan, Media, PathPart};
use crate::security::CredentialProblem;
use crate::style::{self, Location};

/// The `_meta` key of a failed call's result: `{"kind": "<failure>"}`, with
/// `"status"` for an HTTP status.
pub const FAILURE_META_KEY: &str = "mcp-openapi/failure";

/// Why a call failed (the result has `isError: true`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallFailure {
    /// No tool of that name.
    UnknownTool,
    /// The arguments cannot make the request: a required one missing, an
    /// unknown one, a value its parameter's style cannot send, a binary body
    /// that is not base64. Nothing was sent.
    InvalidArguments,
    /// A credential's variable is not set (or holds a value that cannot be
    /// sent). Nothing was sent.
    MissingCredential,
    /// The API answered with an error status (4xx, 5xx); the result says
    /// which and shows the start of the body.
    HttpStatus,
    /// The API answered with a redirect, which is not followed, or the
    /// answer came from another origin.
    Redirect,
    /// The response body is larger than `Limits::max_response_bytes`.
    ResponseTooLarge,
    /// No complete answer within the call's time.
    TimedOut,
    /// The API could not be reached (connection refused, reset, DNS, TLS).
    Network,
    /// The caller cancelled the call; the request was dropped.
    Cancelled,
    /// The API answered with success, but not as its document says (the
    /// operation's response schema, which is the tool's `outputSchema`):
    /// the result says where it differs and carries the answer as text,
    /// without `structuredContent`.
    UnexpectedAnswer,
}

impl CallFailure {
    /// A stable snake_case name, as written in the result's `_meta`.
    pub const fn as_str(self) -> &'static str {
        match self {
            CallFailure::UnknownTool => "unknown_tool",
            CallFailure::InvalidArguments => "invalid_arguments",
            CallFailure::MissingCredential => "missing_credential",
            CallFailure::HttpStatus => "http_status",
            CallFailure::Redirect => "redirect",
            CallFailure::ResponseTooLarge => "response_too_large",
            CallFailure::TimedOut => "timed_out",
            CallFailure::Network => "network",
            CallFailure::Cancelled => "cancelled",
            CallFailure::UnexpectedAnswer => "unexpected_answer",
        }
    }

    const ALL: [CallFailure; 10] = [
        CallFailure::UnknownTool,
        CallFailure::InvalidArguments,
        CallFailure::MissingCredential,
        CallFailure::HttpStatus,
        CallFailure::Redirect,
        CallFailure::ResponseTooLarge,
        CallFailure::TimedOut,
        CallFailure::Network,
        CallFailure::Cancelled,
        CallFailure::UnexpectedAnswer,
    ];

    /// The failure a result of this crate reports, if any.
    pub fn of(result: &CallToolResult) -> Option<CallFailure> {
        let kind = result
            .meta
            .as_ref()?
            .0
            .get(FAILURE_META_KEY)?
            .get("kind")?
            .as_str()?;
        Self::ALL.into_iter().find(|f| f.as_str() == kind)
    }

    /// The HTTP status of an [`HttpStatus`](CallFailure::HttpStatus) or
    /// [`Redirect`](CallFailure::Redirect) result.
    pub fn status_of(result: &CallToolResult) -> Option<u16> {
        let status = result
            .meta
            .as_ref()?
            .0
            .get(FAILURE_META_KEY)?
            .get("status")?
            .as_u64()?;
        u16::try_from(status).ok()
    }

    /// Who caused it, in the workspace's vocabulary.
    pub fn cause(self) -> ErrorCause {
        match self {
            CallFailure::UnknownTool | CallFailure::InvalidArguments => ErrorCause::Input,
            CallFailure::MissingCredential => ErrorCause::Authorization,
            CallFailure::HttpStatus | CallFailure::Redirect | CallFailure::UnexpectedAnswer => {
                ErrorCause::Server
            }
            CallFailure::ResponseTooLarge => ErrorCause::Bound,
            CallFailure::TimedOut => ErrorCause::Server,
            CallFailure::Network => ErrorCause::Connection,
            CallFailure::Cancelled => ErrorCause::Cancelled,
        }
    }
}

/// Settings of one call.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CallOptions {
    /// Cancelling this token drops the request (the result is the failure
    /// [`CallFailure::Cancelled`]). Dropping the call's future does the
    /// same.
    pub cancel: Option<CancellationToken>,
    /// A shorter time for this call than
    /// [`Limits::request_timeout`](crate::Limits) (a longer one is cut to
    /// it).
    pub timeout: Option<Duration>,
}

impl CallOptions {
    /// No cancellation token, the configured time-out.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the cancellation token.
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Sets the time-out.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// A failed call, before it becomes a result.
pub(crate) struct Failed {
    kind: CallFailure,
    text: String,
    status: Option<u16>,
}

impl Failed {
    pub(crate) fn new(kind: CallFailure, text: impl Into<String>) -> Self {
        Self {
            kind,
            text: text.into(),
            status: None,
        }
    }

    pub(crate) fn into_result(self) -> CallToolResult {
        let mut detail = Map::new();
        detail.insert("kind".into(), Value::String(self.kind.as_str().into()));
        if let Some(status) = self.status {
            detail.insert("status".into(), json!(status));
        }
        let mut meta = JsonObject::new();
        meta.insert(FAILURE_META_KEY.into(), Value::Object(detail));
        CallToolResult {
            content: vec![ContentBlock::text(self.text)],
            is_error: Some(true),
            meta: Some(Meta(meta)),
            ..Default::default()
        }
    }
}

/// The HTTP side of a service.
#[derive(Debug)]
pub(crate) struct Runtime {
    pub(crate) client: reqwest::Client,
    pub(crate) limits: Limits,
    pub(crate) environment: Environment,
}

/// Makes the call.
pub(crate) async fn execute(
    runtime: &Runtime,
    plan: &CallPlan,
    arguments: JsonObject,
    options: &CallOptions,
) -> CallToolResult {
    let request = match prepare(plan, arguments, &runtime.environment) {
        Ok(r) => r,
        Err(failed) => return failed.into_result(),
    };
    let deadline = options.timeout.map_or(runtime.limits.request_timeout, |t| {
        t.min(runtime.limits.request_timeout)
    });
    let exchange = exchange(runtime, plan, request);
    let cancelled = async {
        match &options.cancel {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    };
    let outcome = tokio::select! {
        biased;
        () = cancelled => Err(Failed::new(CallFailure::Cancelled, "the call was cancelled")),
        r = tokio::time::timeout(deadline, exchange) => match r {
            Ok(r) => r,
            Err(_) => Err(Failed::new(
                CallFailure::TimedOut,
                format!("{} got no complete answer within {deadline:?}", plan.label),
            )),
        },
    };
    tracing::debug!(
        operation = %plan.label,
        failure = outcome.as_ref().err().map(|f| f.kind.as_str()),
        "openapi call"
    );
    outcome.unwrap_or_else(Failed::into_result)
}

/// A request ready to send.
struct Prepared {
    url: reqwest::Url,
    /// The URL without its query, for naming a blob.
    resource: String,
    headers: HeaderMap,
    body: Option<Vec<u8>>,
}

fn invalid(text: String) -> Failed {
    Failed::new(CallFailure::InvalidArguments, text)
}

fn list(keys: &[String]) -> String {
    keys.iter()
        .map(|k| format!("`{}`", Untrusted::new(k)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Arguments → URL, headers and body; credentials read and applied.
fn prepare(plan: &CallPlan, mut args: JsonObject, env: &Environment) -> Result<Prepared, Failed> {
    let mut missing: Vec<String> = Vec::new();
    let mut values: Vec<Option<Value>> = Vec::with_capacity(plan.params.len());
    for p in &plan.params {
        match args.remove(&p.key) {
            None | Some(Value::Null) => {
                if p.required {
                    missing.push(p.key.clone());
                }
                values.push(None);
            }
            Some(v) => values.push(Some(v)),
        }
    }
    let body_value = match &plan.body {
        BodyPlan::None => None,
        BodyPlan::Fields {
            fields,
            rest,
            required,
            ..
        } => {
            let mut object = Map::new();
            for (key, name, field_required) in fields {
                match args.remove(key) {
                    Some(v) => {
                        object.insert(name.clone(), v);
                    }
                    None if *field_required => missing.push(key.clone()),
                    None => {}
                }
            }
            if *rest {
                object.extend(std::mem::take(&mut args));
            }
            (!object.is_empty() || *required).then_some(Value::Object(object))
        }
        BodyPlan::Whole { key, required, .. } => match args.remove(key) {
            None | Some(Value::Null) => {
                if *required {
                    missing.push(key.clone());
                }
                None
            }
            Some(v) => Some(v),
        },
    };
    if !missing.is_empty() {
        return Err(invalid(format!(
            "missing required argument(s): {}",
            list(&missing)
        )));
    }
    if !args.is_empty() {
        let unknown: Vec<String> = args.keys().cloned().collect();
        return Err(invalid(format!("unknown argument(s): {}", list(&unknown))));
    }
    let credentials = plan.security.apply(env).map_err(|problem| match problem {
        CredentialProblem::Unset(var) => Failed::new(
            CallFailure::MissingCredential,
            format!("the credential variable `{var}` is not set"),
        ),
        CredentialProblem::Unusable(var) => Failed::new(
            CallFailure::MissingCredential,
            format!("the credential variable `{var}` holds a value that cannot be sent"),
        ),
    })?;

    let why =
        |key: &str, problem: &str| invalid(format!("argument `{}` {problem}", Untrusted::new(key)));
    let mut url = plan.base.clone();
    // Where each path argument's text lies in `url`.
    let mut placed: Vec<(std::ops::Range<usize>, &str)> = Vec::new();
    for part in &plan.path {
        match part {
            PathPart::Literal(text) => url.push_str(text),
            PathPart::Param(i) => {
                let p = &plan.params[*i];
                let Some(v) = &values[*i] else {
                    return Err(why(&p.key, "is required"));
                };
                let text = style::path_value(&p.name, v, p.style, p.explode, p.json)
                    .map_err(|problem| why(&p.key, problem))?;
                placed.push((url.len()..url.len() + text.len(), &p.key));
                url.push_str(&text);
            }
        }
    }
    if let Some(key) = dot_segment_argument(&url, plan.base.len(), &placed) {
        return Err(why(
            key,
            "would make a `.` or `..` path segment, which would send the call to another endpoint",
        ));
    }
    let resource = url.clone();
    let mut query: Vec<String> = Vec::new();
    let mut cookies: Vec<String> = Vec::new();
    let mut headers = HeaderMap::new();
    for (p, v) in plan.params.iter().zip(&values) {
        let Some(v) = v else { continue };
        match p.location {
            Location::Path => {}
            Location::Query => {
                style::query_pieces(
                    &p.name,
                    v,
                    p.style,
                    p.explode,
                    p.allow_reserved,
                    p.json,
                    &mut query,
                )
                .map_err(|problem| why(&p.key, problem))?;
            }
            Location::Header => {
                let text = style::header_value(v, p.explode, p.json)
                    .map_err(|problem| why(&p.key, problem))?;
                let name = HeaderName::from_bytes(p.name.as_bytes())
                    .map_err(|_| why(&p.key, "names an invalid header"))?;
                let value = HeaderValue::from_str(&text)
                    .map_err(|_| why(&p.key, "holds characters a header cannot carry"))?;
                headers.append(name, value);
            }
            Location::Cookie => {
                style::cookie_pieces(&p.name, v, p.explode, p.json, &mut cookies)
                    .map_err(|problem| why(&p.key, problem))?;
            }
        }
    }
    query.extend(credentials.query);
    cookies.extend(credentials.cookies);
    if !query.is_empty() {
        url.push('?');
        url.push_str(&query.join("&"));
    }
    if !cookies.is_empty() {
        let mut value = HeaderValue::from_str(&cookies.join("; ")).map_err(|_| {
            invalid("a cookie argument holds characters a header cannot carry".into())
        })?;
        // It may hold an API key.
        value.set_sensitive(true);
        headers.insert(COOKIE, value);
    }
    if let Some(accept) = &plan.accept
        && let Ok(value) = HeaderValue::from_str(accept)
    {
        headers.insert(ACCEPT, value);
    }
    let body = match (&plan.body, body_value) {
        (_, None) | (BodyPlan::None, _) => None,
        (
            BodyPlan::Fields {
                media,
                content_type,
                ..
            }
            | BodyPlan::Whole {
                media,
                content_type,
                ..
            },
            Some(value),
        ) => {
            let key = match &plan.body {
                BodyPlan::Whole { key, .. } => key.as_str(),
                _ => "body",
            };
            let bytes = encode_body(*media, value).map_err(|problem| why(key, problem))?;
            if let Ok(v) = HeaderValue::from_str(content_type) {
                headers.insert(CONTENT_TYPE, v);
            }
            Some(bytes)
        }
    };
    for (name, value) in credentials.headers {
        headers.insert(name, value);
    }
    let url = reqwest::Url::parse(&url)
        .map_err(|_| invalid("the arguments do not make a valid URL".into()))?;
    Ok(Prepared {
        url,
        resource,
        headers,
        body,
    })
}

/// The argument whose text makes a whole segment of `url`'s path (after
/// the base, at `from`) a dot segment: `.` or `..`, spelt with `%2e` too. A
/// URL parser removes such a segment and the one before it, so an argument
/// `..` in `/pets/{id}/photo` would reach `/photo`, an operation nobody
/// allowed.
fn dot_segment_argument<'a>(
    url: &str,
    from: usize,
    placed: &[(std::ops::Range<usize>, &'a str)],
) -> Option<&'a str> {
    let mut start = from;
    for segment in url[from..].split('/') {
        let end = start + segment.len();
        if style::is_dot_segment(segment)
            && let Some((_, key)) = placed
                .iter()
                .find(|(range, _)| range.start <= end && range.end >= start)
        {
            return Some(key);
        }
        start = end + 1;
    }
    None
}

fn encode_body(media: Media, value: Value) -> Result<Vec<u8>, &'static str> {
    match media {
        Media::Json => serde_json::to_vec(&value).map_err(|_| "cannot be written as JSON"),
        Media::Text => match value {
            Value::String(s) => Ok(s.into_bytes()),
            _ => Err("must be a string"),
        },
        Media::Binary => match value {
            Value::String(s) => {
                let engines = [
                    &base64::engine::general_purpose::STANDARD,
                    &base64::engine::general_purpose::STANDARD_NO_PAD,
                    &base64::engine::general_purpose::URL_SAFE,
                    &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                ];
                engines
                    .iter()
                    .find_map(|e| e.decode(s.trim()).ok())
                    .ok_or("is not base64")
            }
            _ => Err("must be a base64 string"),
        },
        Media::Form => {
            let Value::Object(map) = value else {
                return Err("must be an object");
            };
            let mut pieces = Vec::new();
            for (k, v) in &map {
                let k = style::encode_component(k);
                let mut push = |v: &Value| {
                    let text = match v {
                        Value::String(s) => s.clone(),
                        Value::Null => String::new(),
                        other => other.to_string(),
                    };
                    pieces.push(format!("{k}={}", style::encode_component(&text)));
                };
                match v {
                    Value::Array(items) => items.iter().for_each(&mut push),
                    other => push(other),
                }
            }
            Ok(pieces.join("&").into_bytes())
        }
    }
}

fn network(e: reqwest::Error) -> Failed {
    if e.is_timeout() {
        return Failed::new(CallFailure::TimedOut, "the API did not answer in time");
    }
    Failed::new(
        CallFailure::Network,
        format!(
            "the API could not be reached: {}",
            crate::document::describe_network_error(e)
        ),
    )
}

async fn exchange(
    runtime: &Runtime,
    plan: &CallPlan,
    request: Prepared,
) -> Result<CallToolResult, Failed> {
    let Prepared {
        url,
        resource,
        headers,
        body,
    } = request;
    let mut builder = runtime
        .client
        .request(plan.method.clone(), url)
        .headers(headers);
    if let Some(body) = body {
        builder = builder.body(body);
    }
    let mut response = builder.send().await.map_err(network)?;
    let status = response.status();
    if response.url().origin() != plan.origin {
        return Err(Failed {
            kind: CallFailure::Redirect,
            text: format!(
                "{}: the answer came from another origin (a redirect the HTTP client followed) and is not used",
                plan.label
            ),
            status: Some(status.as_u16()),
        });
    }
    if status.is_redirection() {
        return Err(Failed {
            kind: CallFailure::Redirect,
            text: format!(
                "{}: HTTP {status}: the API redirects elsewhere, and redirects are not followed",
                plan.label
            ),
            status: Some(status.as_u16()),
        });
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(base_type);
    let limits = &runtime.limits;
    if !status.is_success() {
        let (excerpt, cut) = read_prefix(&mut response, limits.max_error_excerpt).await;
        let mut text = format!("{}: HTTP {status}", plan.label);
        if !excerpt.is_empty() {
            text.push_str("\n\n");
            text.push_str(&String::from_utf8_lossy(&excerpt));
            if cut {
                text.push_str(&format!(
                    "\n… (the body goes on; {} bytes shown)",
                    excerpt.len()
                ));
            }
        }
        return Err(Failed {
            kind: CallFailure::HttpStatus,
            text,
            status: Some(status.as_u16()),
        });
    }
    let limit = limits.max_response_bytes;
    let too_large = || {
        Failed::new(
            CallFailure::ResponseTooLarge,
            format!(
                "{}: the response is larger than {limit} bytes (max_response_bytes) and was not read",
                plan.label
            ),
        )
    };
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(network)? {
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(success(status, content_type.as_deref(), body, resource))
}

/// At most `max` bytes of the body, and whether there was more.
async fn read_prefix(response: &mut reqwest::Response, max: usize) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = max - out.len();
        if chunk.len() > room {
            out.extend_from_slice(&chunk[..room]);
            // Not in the middle of a character.
            if let Err(e) = std::str::from_utf8(&out)
                && e.error_len().is_none()
            {
                out.truncate(e.valid_up_to());
            }
            return (out, true);
        }
        out.extend_from_slice(&chunk);
    }
    (out, false)
}

/// What kind of content a response is.
enum Kind {
    Json,
    Text,
    Image,
    Audio,
    Binary,
    Unknown,
}

fn kind(content_type: Option<&str>) -> Kind {
    let Some(t) = content_type else {
        return Kind::Unknown;
    };
    if is_json(t) {
        Kind::Json
    } else if is_text(t) {
        Kind::Text
    } else if t.starts_with("image/") {
        Kind::Image
    } else if t.starts_with("audio/") {
        Kind::Audio
    } else if t.starts_with("video/")
        || t.starts_with("font/")
        || matches!(
            t,
            "application/octet-stream"
                | "application/pdf"
                | "application/zip"
                | "application/gzip"
                | "application/x-tar"
        )
    {
        Kind::Binary
    } else {
        Kind::Unknown
    }
}

/// Text that reads as text: valid UTF-8 without control characters other
/// than tab, line feed and carriage return.
fn looks_textual(body: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(body).ok()?;
    text.chars()
        .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
        .then_some(text)
}

fn success(
    status: reqwest::StatusCode,
    content_type: Option<&str>,
    body: Vec<u8>,
    resource: String,
) -> CallToolResult {
    if body.is_empty() {
        return CallToolResult {
            content: vec![ContentBlock::text(format!("HTTP {status} (no content)"))],
            ..Default::default()
        };
    }
    let text_result = |text: String| CallToolResult {
        content: vec![ContentBlock::text(text)],
        ..Default::default()
    };
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let blob = |bytes: &[u8], mime: &str| CallToolResult {
        content: vec![ContentBlock::Resource(EmbeddedResource {
            resource: ResourceContents::Blob(BlobResourceContents {
                uri: resource.clone(),
                mime_type: Some(mime.to_owned()),
                blob: b64(bytes),
                ..Default::default()
            }),
            annotations: None,
            meta: None,
            extra: JsonObject::new(),
        })],
        ..Default::default()
    };
    let mime = content_type.unwrap_or("application/octet-stream");
    match kind(content_type) {
        Kind::Json => match serde_json::from_slice::<Value>(&body) {
            Ok(value) => {
                // Parsed JSON is valid UTF-8; lossy only to be safe.
                let text = String::from_utf8(body)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
                CallToolResult {
                    content: vec![ContentBlock::text(text)],
                    structured_content: value.is_object().then_some(value),
                    ..Default::default()
                }
            }
            Err(_) => match String::from_utf8(body) {
                Ok(text) => text_result(text),
                Err(e) => blob(e.as_bytes(), mime),
            },
        },
        Kind::Text => match String::from_utf8(body) {
            Ok(text) => text_result(text),
            Err(e) => blob(e.as_bytes(), mime),
        },
        Kind::Image => CallToolResult {
            content: vec![ContentBlock::Image(ImageContent {
                data: b64(&body),
                mime_type: mime.to_owned(),
                ..Default::default()
            })],
            ..Default::default()
        },
        Kind::Audio => CallToolResult {
            content: vec![ContentBlock::Audio(AudioContent {
                data: b64(&body),
                mime_type: mime.to_owned(),
                ..Default::default()
            })],
            ..Default::default()
        },
        Kind::Binary => blob(&body, mime),
        Kind::Unknown => match looks_textual(&body) {
            Some(text) => text_result(text.to_owned()),
            None => blob(&body, mime),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_round_trip_through_meta() {
        for kind in CallFailure::ALL {
            let r = Failed::new(kind, "x").into_result();
            assert_eq!(CallFailure::of(&r), Some(kind));
            assert!(r.failed());
        }
        let r = Failed {
            kind: CallFailure::HttpStatus,
            text: "t".into(),
            status: Some(404),
        }
        .into_result();
        assert_eq!(CallFailure::status_of(&r), Some(404));
        assert_eq!(CallFailure::of(&CallToolResult::default()), None);
    }

    #[test]
    fn bodies() {
        assert_eq!(encode_body(Media::Binary, json!("aGk=")).unwrap(), b"hi");
        assert_eq!(encode_body(Media::Binary, json!("aGk")).unwrap(), b"hi");
        assert!(encode_body(Media::Binary, json!("!!")).is_err());
        assert_eq!(
            encode_body(Media::Form, json!({"a": "x y", "b": [1, 2]})).unwrap(),
            b"a=x%20y&b=1&b=2"
        );
        assert!(encode_body(Media::Text, json!(1)).is_err());
    }

    #[test]
    fn content_kinds() {
        let ok = reqwest::StatusCode::OK;
        let r = success(
            ok,
            Some("application/json"),
            b"{\"a\":1}".to_vec(),
            "u".into(),
        );
        assert_eq!(r.structured_content, Some(json!({"a": 1})));
        let r = success(ok, Some("application/json"), b"[1]".to_vec(), "u".into());
        assert_eq!(r.structured_content, None);
        assert_eq!(r.text(), "[1]");
        let r = success(ok, Some("image/png"), vec![0x89, 0x50], "u".into());
        assert!(matches!(r.content[0], ContentBlock::Image(_)));
        let r = success(ok, Some("application/octet-stream"), vec![0, 1], "u".into());
        assert!(matches!(r.content[0], ContentBlock::Resource(_)));
        let r = success(
            ok,
            Some("application/vnd.github.diff"),
            b"diff --git".to_vec(),
            "u".into(),
        );
        assert_eq!(r.text(), "diff --git");
        let r = success(ok, None, vec![0xff, 0], "u".into());
        assert!(matches!(r.content[0], ContentBlock::Resource(_)));
    }
}
