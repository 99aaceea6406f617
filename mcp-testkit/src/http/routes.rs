//! The HTTP handler: recording, then routing by method and path.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::conn::{Conn, REPLY_QUEUE};
use super::streams::{StreamStart, channel_body, reply_body};
use super::{App, HttpProbe, ReplyMode, SeenRequest, lock, modern_headers};
use crate::Script;
use crate::wire::{self, META_PROTOCOL_VERSION};

const SESSION_HEADER: &str = "mcp-session-id";

pub(crate) async fn handle(State(app): State<Arc<App>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, app.options.max_request_bytes).await {
        Ok(body) => body,
        Err(_) => return text(StatusCode::PAYLOAD_TOO_LARGE, "request body too large"),
    };
    let frame: Option<Value> = serde_json::from_slice(&body).ok();
    app.requests.record(SeenRequest {
        method: parts.method.to_string(),
        path: parts
            .uri
            .path_and_query()
            .map_or_else(|| parts.uri.path().to_owned(), |p| p.as_str().to_owned()),
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        jsonrpc_method: frame
            .as_ref()
            .and_then(|f| f.get("method"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        at: Instant::now(),
    });
    let headers = &parts.headers;
    match (&parts.method, parts.uri.path()) {
        (&Method::POST, "/mcp") => post_mcp(&app, headers, frame).await,
        (&Method::GET, "/mcp") => {
            if let Some(delay) = app.options.get_delay {
                tokio::time::sleep(delay).await;
            }
            if let Some(failure) = failing_next(&app, Some("GET")) {
                return failure;
            }
            get_mcp(&app, headers)
        }
        (&Method::DELETE, "/mcp") => delete_mcp(&app, headers),
        (&Method::GET, "/sse") => open_sse(&app),
        (&Method::POST, "/messages") => post_message(&app, parts.uri.query(), frame).await,
        (_, "/mcp") => text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed"),
        _ => text(StatusCode::NOT_FOUND, "Not Found"),
    }
}

async fn post_mcp(app: &Arc<App>, headers: &HeaderMap, frame: Option<Value>) -> Response {
    let Some(frame) = frame else {
        return json(
            StatusCode::BAD_REQUEST,
            &error(&Value::Null, wire::PARSE_ERROR, "Parse error"),
        );
    };
    let method = frame
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(failure) = scripted_failure(app, method.as_deref()) {
        return failure;
    }
    let id = frame.get("id").filter(|id| !id.is_null()).cloned();
    let header_modern = header(headers, "mcp-protocol-version").is_some_and(wire::is_modern);
    let body_modern = frame
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .is_some();
    let script = app.current_script();
    let script_modern = script.versions.iter().any(|v| wire::is_modern(v));
    if method.as_deref() == Some("server/discover") && !script_modern {
        return probe(app, &frame, id.as_ref()).await;
    }
    if (header_modern || body_modern) && script_modern {
        if app.options.require_modern_headers
            && id.is_some()
            && let Err(message) = modern_headers::check(headers, &frame, &script)
        {
            let id = id.unwrap_or(Value::Null);
            let reply = error(&id, modern_headers::HEADER_MISMATCH, &message);
            return json(StatusCode::BAD_REQUEST, &reply);
        }
        let conn = stateless(app, &script);
        return dispatch(app, &conn, &frame, id, method.as_deref()).await;
    }
    if app.options.reject_legacy && script.legacy_versions().next().is_none() {
        let requested = header(headers, "mcp-protocol-version")
            .map(str::to_owned)
            .or_else(|| {
                let params = frame.get("params")?;
                Some(params.get("protocolVersion")?.as_str()?.to_owned())
            })
            .unwrap_or_default();
        let reply = wire::error(
            &id.clone().unwrap_or(Value::Null),
            wire::UNSUPPORTED_PROTOCOL_VERSION,
            &format!("Unsupported protocol version: {requested}"),
            Some(json!({"supported": script.versions, "requested": requested})),
        );
        return json(StatusCode::BAD_REQUEST, &reply);
    }
    let (conn, new_session) = match header(headers, SESSION_HEADER) {
        Some(session) => match lock(&app.sessions).get(session).cloned() {
            Some(conn) => (conn, None),
            None => return unknown_session(app),
        },
        None if method.as_deref() == Some("initialize") => {
            let mut sessions = lock(&app.sessions);
            if sessions.len() >= app.options.max_sessions {
                return text(StatusCode::SERVICE_UNAVAILABLE, "too many sessions");
            }
            let number = app.next_session.fetch_add(1, Ordering::Relaxed);
            let session = format!("session-{number}");
            let conn = Conn::start(&script, &app.recorder);
            sessions.insert(session.clone(), Arc::clone(&conn));
            (conn, Some(session))
        }
        None => {
            let reply = error(
                &Value::Null,
                -32000,
                "Bad Request: Mcp-Session-Id header is required",
            );
            return json(StatusCode::BAD_REQUEST, &reply);
        }
    };
    let mut response = dispatch(app, &conn, &frame, id, method.as_deref()).await;
    if let Some(session) = new_session.and_then(|s| HeaderValue::from_str(&s).ok()) {
        response.headers_mut().insert(SESSION_HEADER, session);
    }
    response
}

/// Hands a frame to a connection and builds the reply.
async fn dispatch(
    app: &App,
    conn: &Conn,
    frame: &Value,
    id: Option<Value>,
    method: Option<&str>,
) -> Response {
    let Some(id) = id.filter(|_| method.is_some()) else {
        // A notification or a response: accepted.
        conn.send(frame).await;
        return status_only(StatusCode::ACCEPTED);
    };
    match app.options.reply {
        ReplyMode::Json => {
            let mut rx = conn.request(&id, frame, false).await;
            match rx.recv().await {
                Some(reply) => json(StatusCode::OK, &reply),
                None => text(StatusCode::INTERNAL_SERVER_ERROR, "the fake server ended"),
            }
        }
        ReplyMode::Sse => {
            let rx = conn.request(&id, frame, true).await;
            let log = app.logs.create(rx);
            let close = app.options.close_early.as_ref().filter(|c| {
                let matches = c.methods.is_empty()
                    || method.is_some_and(|m| c.methods.iter().any(|x| x == m));
                matches
                    && c.times.is_none_or(|n| {
                        app.closed_early
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                            < n
                    })
            });
            let start = StreamStart {
                priming: close.is_some(),
                retry_ms: close.map(|c| c.retry_ms),
                close_early: close.is_some(),
                hold: None,
            };
            event_stream(Body::from_stream(reply_body(log, 0, start)))
        }
    }
}

fn scripted_failure(app: &App, method: Option<&str>) -> Option<Response> {
    if let Some(failure) = failing_next(app, method) {
        return Some(failure);
    }
    let failure = app.options.fail_with.as_ref()?;
    let applies = failure.methods.is_empty()
        || method.is_some_and(|m| failure.methods.iter().any(|x| x == m));
    let status = StatusCode::from_u16(failure.status).ok()?;
    applies.then(|| text(status, "scripted failure"))
}

/// The answer [`RunningHttpServer::fail_next`](super::RunningHttpServer::fail_next)
/// ordered for `method` (`GET` for the standalone stream), if one is left.
fn failing_next(app: &App, method: Option<&str>) -> Option<Response> {
    let mut next = lock(&app.fail_next);
    let (failing, status, left) = next.as_mut()?;
    if Some(failing.as_str()) != method || *left == 0 {
        return None;
    }
    *left -= 1;
    let status = StatusCode::from_u16(*status).ok()?;
    Some(text(status, "scripted failure"))
}

/// The shared connection of the stateless (2026-07-28) era.
fn stateless(app: &App, script: &Script) -> Arc<Conn> {
    let mut slot = lock(&app.stateless);
    Arc::clone(slot.get_or_insert_with(|| Conn::start(script, &app.recorder)))
}

async fn probe(app: &Arc<App>, frame: &Value, id: Option<&Value>) -> Response {
    let id = id.cloned().unwrap_or(Value::Null);
    let null = Value::Null;
    match &app.options.probe {
        HttpProbe::SessionRequired => json(
            StatusCode::BAD_REQUEST,
            &error(
                &null,
                -32000,
                "Bad Request: Mcp-Session-Id header is required",
            ),
        ),
        HttpProbe::VersionHeaderRejected => {
            let message = format!(
                "Bad Request: Unsupported protocol version: 2026-07-28 (supported versions: {})",
                app.script.versions.join(", ")
            );
            json(StatusCode::BAD_REQUEST, &error(&null, -32000, &message))
        }
        HttpProbe::UnsupportedVersionText => {
            text(StatusCode::BAD_REQUEST, "Unsupported protocol version")
        }
        HttpProbe::InvalidSessionText => text(StatusCode::NOT_FOUND, "Invalid session ID"),
        HttpProbe::InvalidRequestNullId => json(
            StatusCode::BAD_REQUEST,
            &error(&null, wire::INVALID_REQUEST, "Invalid Request"),
        ),
        HttpProbe::MethodNotFound => json(
            StatusCode::OK,
            &error(&id, wire::METHOD_NOT_FOUND, "Method not found"),
        ),
        HttpProbe::EmptyOk => status_only(StatusCode::OK),
        HttpProbe::Unauthorized { www_authenticate } => {
            let mut response = status_only(StatusCode::UNAUTHORIZED);
            if let Ok(value) = HeaderValue::from_str(www_authenticate) {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, value);
            }
            response
        }
        HttpProbe::Script => {
            // A connection of its own, whose first output is the answer
            // (whatever its id: `-32600` comes with id null).
            let (tx, mut rx) = mpsc::channel(REPLY_QUEUE);
            let conn = Conn::start_single(&app.script, &app.recorder, tx);
            conn.send(frame).await;
            match rx.recv().await {
                Some(reply) => json(StatusCode::OK, &reply),
                None => text(StatusCode::INTERNAL_SERVER_ERROR, "the fake server ended"),
            }
        }
    }
}

fn get_mcp(app: &App, headers: &HeaderMap) -> Response {
    if !app.options.get_stream {
        return text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
    }
    if let Some((log, from)) = header(headers, "last-event-id").and_then(|id| app.logs.resume(id)) {
        let start = StreamStart {
            priming: false,
            retry_ms: None,
            close_early: false,
            hold: app.options.poll_hold,
        };
        return event_stream(Body::from_stream(reply_body(log, from, start)));
    }
    let Some(session) = header(headers, SESSION_HEADER) else {
        let reply = error(
            &Value::Null,
            -32000,
            "Bad Request: Mcp-Session-Id header is required",
        );
        return json(StatusCode::BAD_REQUEST, &reply);
    };
    let Some(conn) = lock(&app.sessions).get(session).cloned() else {
        return unknown_session(app);
    };
    match conn.open_stream() {
        Some(rx) => event_stream(Body::from_stream(channel_body(rx, None, true, None))),
        None => text(
            StatusCode::CONFLICT,
            "Conflict: a GET stream is already open",
        ),
    }
}

/// The answer to a session id the server does not know.
fn unknown_session(app: &App) -> Response {
    if app.options.unknown_session_400 {
        let reply = error(
            &Value::Null,
            -32000,
            "Bad Request: No valid session ID provided",
        );
        return json(StatusCode::BAD_REQUEST, &reply);
    }
    json(
        StatusCode::NOT_FOUND,
        &error(&Value::Null, -32001, "Session not found"),
    )
}

fn delete_mcp(app: &App, headers: &HeaderMap) -> Response {
    if !app.options.allow_delete {
        return text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
    }
    let Some(session) = header(headers, SESSION_HEADER) else {
        return text(
            StatusCode::BAD_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        );
    };
    match lock(&app.sessions).remove(session) {
        Some(_) => status_only(StatusCode::OK),
        None => text(StatusCode::NOT_FOUND, "Session not found"),
    }
}

/// Removes a legacy HTTP+SSE session when its stream's body is dropped (the
/// client went away).
struct SseSessionGuard {
    app: Weak<App>,
    session: String,
}

impl Drop for SseSessionGuard {
    fn drop(&mut self) {
        if let Some(app) = self.app.upgrade() {
            lock(&app.sse_sessions).remove(&self.session);
        }
    }
}

fn open_sse(app: &Arc<App>) -> Response {
    let number = app.next_session.fetch_add(1, Ordering::Relaxed);
    let session = format!("sse-{number}");
    let (tx, rx) = mpsc::channel(REPLY_QUEUE);
    let conn = Conn::start_single(&app.script, &app.recorder, tx);
    lock(&app.sse_sessions).insert(session.clone(), conn);
    let endpoint = app
        .options
        .sse_endpoint
        .clone()
        .unwrap_or_else(|| format!("/messages?sessionId={session}"));
    let first = format!("event: endpoint\ndata: {endpoint}\n\n");
    let guard = SseSessionGuard {
        app: Arc::downgrade(app),
        session,
    };
    event_stream(Body::from_stream(channel_body(
        rx,
        Some(first),
        false,
        Some(Box::new(guard)),
    )))
}

async fn post_message(app: &App, query: Option<&str>, frame: Option<Value>) -> Response {
    let session = query
        .unwrap_or_default()
        .split('&')
        .find_map(|pair| pair.strip_prefix("sessionId="));
    let Some(conn) = session.and_then(|s| lock(&app.sse_sessions).get(s).cloned()) else {
        return text(StatusCode::NOT_FOUND, "Could not find session");
    };
    let Some(frame) = frame else {
        return text(StatusCode::BAD_REQUEST, "Invalid message");
    };
    let method = frame.get("method").and_then(Value::as_str);
    if let Some(failure) = scripted_failure(app, method) {
        return failure;
    }
    conn.send(&frame).await;
    text(StatusCode::ACCEPTED, "Accepted")
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn json(status: StatusCode, body: &Value) -> Response {
    build(status, "application/json", Body::from(body.to_string()))
}

fn text(status: StatusCode, body: &'static str) -> Response {
    build(
        status,
        "text/plain; charset=utf-8",
        Body::from(Bytes::from_static(body.as_bytes())),
    )
}

fn event_stream(body: Body) -> Response {
    let mut response = build(StatusCode::OK, "text/event-stream", body);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn status_only(status: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}

fn build(status: StatusCode, content_type: &'static str, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
