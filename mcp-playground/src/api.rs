//! The API the page uses, once a request is admitted. Everything goes
//! through the hub's governed facade (the authority, the approval hook and
//! the audit apply as to any host call) or its public status; nothing here
//! sees a session, a transport or a credential.
//!
//! | route | what |
//! |---|---|
//! | `POST /api/session` `{code}` | the one-time code for the session cookie and `{token}` |
//! | `GET /api/servers` | every server's status and self-description |
//! | `GET /api/namespace` | the merged namespace: names, aliases, collisions, notes, what is hidden |
//! | `GET /api/reviews` | tool listings waiting for review, as diffs |
//! | `GET /api/events` | the live events (server-sent events) |
//! | `POST /api/catalog` `{server, kind, cursor?}` | one page of tools, resources, resource-templates or prompts |
//! | `POST /api/call` `{server, tool, arguments, callId?}` | a tool call (progress as events under `callId`) |
//! | `POST /api/read` `{server, uri}` | a resource read |
//! | `POST /api/prompt` `{server, name, arguments}` | a prompt |
//! | `POST /api/review` `{server, generation, decision}` | approve or reject a waiting listing |
//! | `POST /api/subscribe` `{server, uri}` | follow a resource (its contents as events) |
//! | `POST /api/restart` `{server}` | end a server's connection; its restart policy decides |
//! | `GET /api/questions` | the servers' questions waiting for the page (forms, pages to open, sampling) |
//! | `POST /api/answer` `{id, action, content?, reply?}` | answer one: `accept` (a form's `content`, a sampling `reply`), `decline` or `cancel` |
//!
//! Answers are JSON: `{"result": …}`, or status 422 with `{"error": …}`
//! for what the hub refused or a server failed, 400 for a malformed
//! request.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use mcp_hub::{CallOptions, HubError, Mechanism, RouteTarget, SubscriptionSpec};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::events::{Item, ToPage, note};
use crate::json::{hub_error, server};
use crate::server::App;

/// Longest call id the page may choose.
const MAX_CALL_ID: usize = 64;
/// How often an idle event stream sends a comment (so a dead page is found).
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Routes an admitted request.
pub(crate) async fn route(
    app: &Arc<App>,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    body: Body,
) -> Response {
    if *method == Method::GET {
        return match path {
            "/api/servers" => ok(servers(app)),
            "/api/namespace" => ok(namespace(app)),
            "/api/reviews" => ok(reviews(app)),
            "/api/questions" => ok(json!(
                app.questions
                    .get()
                    .map(crate::Questions::list)
                    .unwrap_or_default()
            )),
            "/api/events" => events(app),
            _ => StatusCode::NOT_FOUND.into_response(),
        };
    }
    if *method != Method::POST {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    if !json {
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the API takes application/json",
        )
            .into_response();
    }
    let bytes = match axum::body::to_bytes(body, app.config.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request body is over the playground's bound",
            )
                .into_response();
        }
    };
    match path {
        "/api/session" => session(app, &bytes),
        "/api/catalog" => with_body(&bytes, |b| catalog(app, b)).await,
        "/api/call" => with_body(&bytes, |b| call(app, b)).await,
        "/api/read" => with_body(&bytes, |b| read(app, b)).await,
        "/api/prompt" => with_body(&bytes, |b| prompt(app, b)).await,
        "/api/review" => with_body(&bytes, |b| review(app, b)).await,
        "/api/subscribe" => with_body(&bytes, |b| subscribe(app, b)).await,
        "/api/restart" => with_body(&bytes, |b| restart(app, b)).await,
        "/api/answer" => answer(app, &bytes),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Parses the body as `B` and runs `f` on it; a body that does not parse
/// is a 400 naming what is wrong in our words.
async fn with_body<'a, B, F, Fut>(bytes: &'a [u8], f: F) -> Response
where
    B: Deserialize<'a>,
    F: FnOnce(B) -> Fut,
    Fut: Future<Output = Result<Value, HubError>>,
{
    match serde_json::from_slice::<B>(bytes) {
        Ok(body) => match f(body).await {
            Ok(value) => ok(value),
            Err(error) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                json_body(&json!({"error": hub_error(&error)})),
            )
                .into_response(),
        },
        Err(error) => bad_request(&format!(
            "the request body is not what this route takes ({})",
            error.classify_word()
        )),
    }
}

trait ClassifyWord {
    fn classify_word(&self) -> &'static str;
}

impl ClassifyWord for serde_json::Error {
    /// The kind of a body's problem, without echoing the body.
    fn classify_word(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "not JSON",
            _ => "wrong or missing fields",
        }
    }
}

fn ok(result: Value) -> Response {
    json_body(&json!({"result": result})).into_response()
}

fn bad_request(message: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        json_body(&json!({"error": {"kind": "bad_request", "message": message}})),
    )
        .into_response()
}

fn json_body(value: &Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

/// The page's answer to a server's question: 422 `gone` when none such
/// waits (answered, withdrawn), 400 when it does not fit the question.
fn answer(app: &App, bytes: &[u8]) -> Response {
    let Some(questions) = app.questions.get() else {
        return gone();
    };
    let answer = match serde_json::from_slice::<crate::questions::Answer>(bytes) {
        Ok(answer) => answer,
        Err(error) => {
            return bad_request(&format!(
                "the request body is not what this route takes ({})",
                error.classify_word()
            ));
        }
    };
    match questions.answer(answer) {
        Ok(()) => ok(json!({})),
        Err(crate::questions::NotTaken::Gone) => gone(),
        Err(crate::questions::NotTaken::Invalid(why)) => bad_request(why),
    }
}

fn gone() -> Response {
    (
        StatusCode::UNPROCESSABLE_ENTITY,
        json_body(&json!({"error": {
            "kind": "gone",
            "message": "no such question waits: it was answered, or the server withdrew it"
        }})),
    )
        .into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Exchange {
    code: String,
}

/// The one-time code for the session.
fn session(app: &App, bytes: &[u8]) -> Response {
    let Ok(Exchange { code }) = serde_json::from_slice(bytes) else {
        return bad_request("the exchange takes {\"code\": \"…\"}");
    };
    match app.guard.exchange(&code) {
        Ok(issued) => {
            tracing::info!("playground session opened; the one-time code is spent");
            let mut response = json_body(&json!({"token": issued.token}));
            if let Ok(value) = issued.set_cookie.parse() {
                response.headers_mut().insert(header::SET_COOKIE, value);
            }
            response
        }
        Err(refusal) => {
            tracing::info!(reason = refusal.reason(), "playground refused a code");
            (refusal.status(), refusal.reason()).into_response()
        }
    }
}

fn servers(app: &App) -> Value {
    let list: Vec<Value> = app
        .hub
        .servers()
        .iter()
        .filter_map(|name| {
            let status = app.hub.status(name.as_str()).ok()?;
            Some(server(
                name.as_str(),
                &status,
                app.bus.next_attempt(name.as_str()),
            ))
        })
        .collect();
    json!({"servers": list, "droppedEvents": app.hub.dropped_events()})
}

/// The merged namespace: each exposed tool with its aliases and
/// provider-safe name, the local names several servers share and the
/// names they are exposed under, the build's notes, and each listed tool
/// the authority hides, with why.
fn namespace(app: &App) -> Value {
    let namespace = app.hub.namespace();
    let mut shared: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
    let mut exposed: HashMap<(&str, &str), ()> = HashMap::new();
    let tools: Vec<Value> = namespace
        .tools()
        .iter()
        .zip(namespace.provider_names())
        .map(|(t, provider)| {
            let local = match &t.route().target {
                RouteTarget::Tool(local) => local.as_str(),
                RouteTarget::Helper(helper) => helper.local_name(),
                _ => t.tool().name.as_str(),
            };
            if !t.is_helper() {
                exposed.insert((t.server().as_str(), local), ());
                shared
                    .entry(local)
                    .or_default()
                    .push((t.server().to_string(), t.name().to_owned()));
            }
            json!({
                "name": t.name(),
                "aliases": t.aliases(),
                "providerName": (provider != t.name()).then_some(provider),
                "server": t.server().as_str(),
                "tool": local,
                "helper": t.is_helper(),
                "title": t.tool().title,
                "description": t.tool().description,
            })
        })
        .collect();
    let collisions: Vec<Value> = shared
        .iter()
        .filter(|(_, offers)| offers.len() > 1)
        .map(|(local, offers)| {
            json!({
                "tool": local,
                "exposedAs": offers.iter().map(|(s, n)| json!({"server": s, "name": n})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut hidden = Vec::new();
    for name in app.hub.servers() {
        let Ok(Some(snapshot)) = app.hub.active_snapshot(name.as_str()) else {
            continue;
        };
        for tool in snapshot.tools() {
            if exposed.contains_key(&(name.as_str(), tool.name.as_str())) {
                continue;
            }
            let why = match namespace.resolve(&format!("{name}/{}", tool.name)) {
                Err(HubError::Denied { reason, .. }) => reason.to_string(),
                _ => "not exposed (see the notes)".to_owned(),
            };
            hidden.push(json!({"server": name.as_str(), "tool": tool.name, "why": why}));
        }
    }
    json!({
        "generation": namespace.generation(),
        "tools": tools,
        "collisions": collisions,
        "notes": namespace.notes().iter().map(note).collect::<Vec<_>>(),
        "hidden": hidden,
    })
}

/// Every listing waiting for review: what it adds, removes and changes
/// against the active one, with the definitions on both sides.
fn reviews(app: &App) -> Value {
    let mut out = Vec::new();
    for name in app.hub.servers() {
        let Ok(Some(pending)) = app.hub.pending_snapshot(name.as_str()) else {
            continue;
        };
        let active = app.hub.active_snapshot(name.as_str()).ok().flatten();
        let diff = pending.diff(active.as_deref());
        let def = |tool: Option<&mcp_types::Tool>| {
            tool.and_then(|t| serde_json::to_value(t).ok())
                .unwrap_or(Value::Null)
        };
        let old = |n: &str| active.as_deref().and_then(|a| a.get(n));
        out.push(json!({
            "server": name.as_str(),
            "generation": pending.generation(),
            "added": diff.added.iter().map(|n| def(pending.get(n))).collect::<Vec<_>>(),
            "removed": diff.removed.iter().map(|n| def(old(n))).collect::<Vec<_>>(),
            "changed": diff.changed.iter().map(|n| json!({
                "name": n, "before": def(old(n)), "after": def(pending.get(n)),
            })).collect::<Vec<_>>(),
        }));
    }
    json!({"reviews": out})
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogBody {
    server: String,
    kind: String,
    cursor: Option<String>,
}

async fn catalog(app: &App, body: CatalogBody) -> Result<Value, HubError> {
    let facade = app.hub.facade();
    let (server, cursor) = (body.server.as_str(), body.cursor.as_deref());
    fn page<T: serde::Serialize>(page: mcp_hub::Page<T>) -> Value {
        json!({"items": page.items, "nextCursor": page.next_cursor})
    }
    Ok(match body.kind.as_str() {
        "tools" => page(facade.list_tools(server, cursor).await?),
        "resources" => page(facade.list_resources(server, cursor).await?),
        "resource-templates" => page(facade.list_resource_templates(server, cursor).await?),
        "prompts" => page(facade.list_prompts(server, cursor).await?),
        _ => {
            return Err(HubError::InvalidSetting {
                setting: "kind",
                problem: "one of tools, resources, resource-templates, prompts",
            });
        }
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CallBody {
    server: String,
    tool: String,
    arguments: Map<String, Value>,
    call_id: Option<String>,
}

/// A tool call through the facade; its progress goes out as events
/// under the page's `callId`.
async fn call(app: &App, body: CallBody) -> Result<Value, HubError> {
    let call_id = body
        .call_id
        .filter(|id| {
            !id.is_empty()
                && id.len() <= MAX_CALL_ID
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .unwrap_or_default();
    let bus = Arc::clone(&app.bus);
    let (server, tool) = (body.server.clone(), body.tool.clone());
    let options = CallOptions::new().on_progress(move |p| {
        bus.publish(json!({
            "kind": "progress", "callId": call_id, "server": server, "tool": tool,
            "progress": p.progress, "total": p.total, "message": p.message,
        }));
    });
    let result = app
        .hub
        .facade()
        .call_tool_with(&body.server, &body.tool, body.arguments, &options)
        .await?;
    Ok(serde_json::to_value(&result).unwrap_or(Value::Null))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadBody {
    server: String,
    uri: String,
}

async fn read(app: &App, body: ReadBody) -> Result<Value, HubError> {
    let result = app
        .hub
        .facade()
        .read_resource(&body.server, &body.uri)
        .await?;
    Ok(serde_json::to_value(&result).unwrap_or(Value::Null))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PromptBody {
    server: String,
    name: String,
    #[serde(default)]
    arguments: BTreeMap<String, String>,
}

async fn prompt(app: &App, body: PromptBody) -> Result<Value, HubError> {
    let result = app
        .hub
        .facade()
        .get_prompt(&body.server, &body.name, body.arguments)
        .await?;
    Ok(serde_json::to_value(&result).unwrap_or(Value::Null))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewBody {
    server: String,
    generation: u64,
    decision: Decision,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Decision {
    Approve,
    Reject,
}

async fn review(app: &App, body: ReviewBody) -> Result<Value, HubError> {
    match body.decision {
        // The hub reports the adoption (and the new namespace) as events.
        Decision::Approve => {
            app.hub.adopt(&body.server, body.generation)?;
        }
        Decision::Reject => {
            app.hub.discard(&body.server, body.generation)?;
            app.bus.publish(json!({
                "kind": "toolsRejected", "server": body.server, "generation": body.generation,
            }));
        }
    }
    Ok(json!({}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubscribeBody {
    server: String,
    uri: String,
}

async fn subscribe(app: &App, body: SubscribeBody) -> Result<Value, HubError> {
    let handler = Arc::new(ToPage(Arc::clone(&app.bus)));
    let spec = SubscriptionSpec::new(&body.server, &body.uri, Mechanism::ByEra, handler);
    app.hub.subscribe(spec).await?;
    Ok(json!({}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RestartBody {
    server: String,
}

async fn restart(app: &App, body: RestartBody) -> Result<Value, HubError> {
    let ended = app.hub.kill_server(&body.server)?;
    Ok(json!({"ended": ended}))
}

/// The live events as server-sent events: the kept history, then what
/// comes, until serving stops. Streams are bounded in number (429 past
/// it); one that falls behind gets a `dropped` event with the count.
fn events(app: &Arc<App>) -> Response {
    let Ok(permit) = Arc::clone(&app.streams).try_acquire_owned() else {
        return (
            StatusCode::TOO_MANY_REQUESTS,
            "too many event streams are open",
        )
            .into_response();
    };
    let (history, rx) = app.bus.subscribe();
    let state = Stream {
        backlog: history.into(),
        rx,
        last: 0,
        stop: app.stop.clone(),
        _permit: permit,
    };
    let stream = futures::stream::unfold(state, |mut s| async move {
        let (id, data) = s.next().await?;
        let mut event = Event::default().data(data);
        if let Some(id) = id {
            event = event.id(id.to_string());
        }
        Some((Ok::<_, Infallible>(event), s))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response()
}

/// One open event stream.
struct Stream {
    backlog: std::collections::VecDeque<Arc<Item>>,
    rx: tokio::sync::broadcast::Receiver<Arc<Item>>,
    last: u64,
    stop: tokio::sync::watch::Receiver<bool>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl Stream {
    /// The next event: its id (none for a `dropped` notice) and its JSON.
    async fn next(&mut self) -> Option<(Option<u64>, String)> {
        if let Some(item) = self.backlog.pop_front() {
            self.last = item.id;
            return Some((Some(item.id), item.json.clone()));
        }
        loop {
            tokio::select! {
                _ = self.stop.wait_for(|stop| *stop) => return None,
                received = self.rx.recv() => match received {
                    Ok(item) if item.id <= self.last => continue,
                    Ok(item) => {
                        self.last = item.id;
                        return Some((Some(item.id), item.json.clone()));
                    }
                    Err(RecvError::Lagged(n)) => {
                        return Some((None, json!({"kind": "dropped", "count": n}).to_string()));
                    }
                    Err(RecvError::Closed) => return None,
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventBus;

    fn stream(bus: &EventBus) -> (Stream, tokio::sync::watch::Sender<bool>) {
        let (history, rx) = bus.subscribe();
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        let permit = Arc::new(tokio::sync::Semaphore::new(1))
            .try_acquire_owned()
            .unwrap();
        let stream = Stream {
            backlog: history.into(),
            rx,
            last: 0,
            stop: stop_rx,
            _permit: permit,
        };
        (stream, stop)
    }

    #[tokio::test]
    async fn a_stream_gets_the_history_once_then_new_events_then_ends_with_serving() {
        let bus = EventBus::new(10);
        bus.publish(json!({"kind": "a"}));
        let (mut s, stop) = stream(&bus);
        bus.publish(json!({"kind": "b"}));
        let (id, first) = s.next().await.unwrap();
        assert_eq!(id, Some(1));
        assert!(first.contains("\"a\""));
        // `b` is in the receiver only; `a` is not sent twice.
        let (id, second) = s.next().await.unwrap();
        assert_eq!(id, Some(2));
        assert!(second.contains("\"b\""));
        stop.send_replace(true);
        assert!(s.next().await.is_none());
    }

    #[tokio::test]
    async fn a_stream_that_falls_behind_is_told_how_many_events_it_lost() {
        let bus = EventBus::new(0);
        let (mut s, _stop) = stream(&bus);
        for i in 0..(crate::events::STREAM_BACKLOG + 10) {
            bus.publish(json!({"kind": "log", "i": i}));
        }
        let (id, notice) = s.next().await.unwrap();
        assert_eq!(id, None);
        let notice: Value = serde_json::from_str(&notice).unwrap();
        assert_eq!(notice["kind"], "dropped");
        assert_eq!(notice["count"], 10);
        // Then it goes on with what is still queued.
        let (id, _) = s.next().await.unwrap();
        assert_eq!(id, Some(11));
    }
}
