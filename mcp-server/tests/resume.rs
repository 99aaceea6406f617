//! Resumable response streams over Streamable HTTP (SEP-1699), on
//! loopback: the priming event, numbered events, the server closing a
//! connection (a handler's `close_sse_stream`, the polling hold), `GET`
//! with `Last-Event-ID` for the rest, refusals of foreign and let-go ids,
//! and our own client resuming across a closed stream.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_server::http::{HttpConfig, HttpServer, ResumeConfig};
use mcp_server::{
    BoxFuture, HandlerResult, RequestContext, ServerConfig, ServerError, ServerHandle,
    ServerHandler,
};
use mcp_session::{CallOptions, Negotiation, Session, SessionConfig};
use mcp_transport::HttpConnector;
use mcp_types::NotificationParams;
use mcp_types::notifications::ToolListChanged;
use mcp_types::{CallToolParams, CallToolResult, ContentBlock, Cursor, ListToolsResult};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc, oneshot};

/// `closing {steps, open, wait}`: closes its stream's connection (saying
/// whether one was) unless `open`, waits for the gate when `wait`, then
/// reports `steps` progress and answers `done`. `gated`:
/// answers `gated` once the test opens the gate.
struct Tools {
    closed: mpsc::UnboundedSender<bool>,
    gate: Arc<Notify>,
}

impl ServerHandler for Tools {
    fn list_tools(
        &self,
        _cursor: Option<Cursor>,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ListToolsResult>> {
        Box::pin(async { Ok(ListToolsResult::default()) })
    }

    fn call_tool(
        &self,
        params: CallToolParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<CallToolResult>> {
        Box::pin(async move {
            let answer = |text: &str| CallToolResult {
                content: vec![ContentBlock::text(text)],
                ..Default::default()
            };
            match params.name.as_str() {
                "closing" => {
                    let arg = |name: &str| params.arguments.as_ref().and_then(|a| a.get(name));
                    if arg("open") != Some(&Value::Bool(true)) {
                        let _ = self.closed.send(ctx.close_sse_stream());
                    }
                    if arg("wait") == Some(&Value::Bool(true)) {
                        self.gate.notified().await;
                    }
                    let steps = arg("steps").and_then(Value::as_u64).unwrap_or(0);
                    for step in 1..=steps {
                        assert!(ctx.progress(step as f64, None, None), "a progress token");
                    }
                    Ok(answer("done"))
                }
                _ => {
                    self.gate.notified().await;
                    Ok(answer("gated"))
                }
            }
        })
    }
}

struct Running {
    url: String,
    handles: mpsc::UnboundedReceiver<ServerHandle>,
    closed: mpsc::UnboundedReceiver<bool>,
    gate: Arc<Notify>,
    stop: Option<oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<Result<(), ServerError>>,
}

impl Running {
    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.served.await.unwrap().unwrap();
    }
}

async fn start(resume: ResumeConfig) -> Running {
    start_with(HttpConfig::default().resume(resume)).await
}

async fn start_with(config: HttpConfig) -> Running {
    let endpoint = HttpServer::bind("127.0.0.1:0".parse().unwrap(), config)
        .await
        .unwrap();
    let url = endpoint.url();
    let (tx, closed) = mpsc::unbounded_channel();
    let gate = Arc::new(Notify::new());
    let handler = Arc::new(Tools {
        closed: tx,
        gate: Arc::clone(&gate),
    });
    let (stop, stopped) = oneshot::channel::<()>();
    let (made, handles) = mpsc::unbounded_channel();
    let served = tokio::spawn(endpoint.serve(
        move |connection: mcp_server::http::HostConnection| {
            let _ = made.send(connection.handle.clone());
            Arc::clone(&handler)
        },
        ServerConfig::new("resume", "1.0"),
        async move {
            let _ = stopped.await;
        },
    ));
    Running {
        url,
        handles,
        closed,
        gate,
        stop: Some(stop),
        served,
    }
}

/// One event of an event stream as the test reads it.
#[derive(Debug, Default, Clone, PartialEq)]
struct Event {
    id: Option<String>,
    data: Option<String>,
    retry: Option<u64>,
}

impl Event {
    /// The message it carries.
    fn message(&self) -> Option<Value> {
        self.data
            .as_deref()
            .filter(|d| !d.is_empty())
            .map(|d| serde_json::from_str(d).unwrap())
    }

    /// `(stream prefix, seq)` of its id.
    fn position(&self) -> (String, u64) {
        let id = self.id.as_deref().expect("an id");
        let (prefix, seq) = id.rsplit_once('-').unwrap();
        (prefix.to_owned(), seq.parse().unwrap())
    }
}

/// The events of a whole stream body (blocks split at blank lines).
fn events(body: &str) -> Vec<Event> {
    body.split("\n\n")
        .filter(|block| !block.is_empty())
        .map(|block| {
            let mut event = Event::default();
            for line in block.lines() {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value).to_owned();
                match field {
                    "id" => event.id = Some(value),
                    "data" => event.data = Some(value),
                    "retry" => event.retry = Some(value.parse().unwrap()),
                    _ => {}
                }
            }
            event
        })
        .collect()
}

struct Raw {
    http: reqwest::Client,
    url: String,
}

impl Raw {
    fn new(url: &str) -> Self {
        Self {
            http: reqwest::Client::new(),
            url: url.to_owned(),
        }
    }

    /// A session at `version` (initialized); its id.
    async fn open(&self, version: &str) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}});
        let reply = self.post(None, &init).await;
        assert_eq!(reply.status(), 200);
        let id = reply.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(self.post(Some(&id), &note).await.status(), 202);
        id
    }

    async fn post(&self, session: Option<&str>, body: &Value) -> reqwest::Response {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send().await.unwrap()
    }

    /// `tools/call` of `name`, with a progress token.
    async fn call(&self, session: &str, id: i64, name: &str, args: Value) -> reqwest::Response {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": args, "_meta": {"progressToken": id}}});
        self.post(Some(session), &call).await
    }

    async fn resume(&self, session: &str, last: &str) -> reqwest::Response {
        self.http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session)
            .header("last-event-id", last)
            .send()
            .await
            .unwrap()
    }
}

async fn stream_of(reply: reqwest::Response) -> Vec<Event> {
    assert_eq!(reply.status(), 200);
    assert_eq!(reply.headers()["content-type"], "text/event-stream");
    events(&reply.text().await.unwrap())
}

fn progress_of(event: &Event) -> Option<f64> {
    let message = event.message()?;
    (message["method"] == "notifications/progress")
        .then(|| message["params"]["progress"].as_f64().unwrap())
}

#[tokio::test]
async fn a_closed_stream_resumes_with_exactly_the_missing_events_then_the_answer() {
    let mut running = start(ResumeConfig::default()).await;
    let raw = Raw::new(&running.url);
    let session = raw.open("2025-11-25").await;

    // The handler closes the connection before anything else: the POST
    // gets the priming event (an id, empty data) and a retry hint.
    let posted = stream_of(raw.call(&session, 7, "closing", json!({"steps": 3})).await).await;
    assert!(running.closed.recv().await.unwrap());
    assert_eq!(posted.len(), 2, "{posted:?}");
    let priming = &posted[0];
    assert_eq!(priming.data.as_deref(), Some(""));
    let (prefix, seq) = priming.position();
    assert_eq!(seq, 0);
    assert_eq!(posted[1].retry, Some(1000));
    assert_eq!(posted[1].id, None);

    // Resumed from the priming event: the three reports, then the answer,
    // numbered on in the same stream; the stream ends with the answer.
    let resumed = stream_of(raw.resume(&session, priming.id.as_deref().unwrap()).await).await;
    assert_eq!(resumed.len(), 4, "{resumed:?}");
    let progress: Vec<_> = resumed.iter().filter_map(progress_of).collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    let answer = resumed[3].message().unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    let positions: Vec<_> = resumed.iter().map(Event::position).collect();
    assert!(positions.iter().all(|(p, _)| *p == prefix), "{positions:?}");
    let seqs: Vec<u64> = positions.iter().map(|(_, s)| *s).collect();
    assert_eq!(seqs, [1, 2, 3, 4]);

    // Resumed again from the first report (the stream is answered, still
    // kept): exactly what came after it.
    let again = stream_of(
        raw.resume(&session, resumed[0].id.as_deref().unwrap())
            .await,
    )
    .await;
    assert_eq!(again, resumed[1..]);
    running.stop().await;
}

#[tokio::test]
async fn foreign_unknown_and_let_go_ids_are_refused() {
    let running = start(ResumeConfig::default().max_events(2)).await;
    let raw = Raw::new(&running.url);
    let mine = raw.open("2025-11-25").await;
    let other = raw.open("2025-11-25").await;
    // Left open, the stream carries all (the priming event, four
    // reports, the answer) and ends: every event is in.
    let posted = stream_of(
        raw.call(&mine, 1, "closing", json!({"steps": 4, "open": true}))
            .await,
    )
    .await;
    assert_eq!(posted.len(), 6, "{posted:?}");
    let priming = posted[0].id.clone().unwrap();
    // Another session's id names no stream of this one; nor does junk.
    for (session, last) in [
        (&other, priming.as_str()),
        (&mine, "nope"),
        (&mine, &format!("{priming}0")),
    ] {
        let reply = raw.resume(session, last).await;
        assert_eq!(reply.status(), 400, "{last}");
        let body: Value = serde_json::from_str(&reply.text().await.unwrap()).unwrap();
        assert_eq!(body["error"]["code"], -32000);
    }
    // Without a session: the session is required.
    let reply = raw
        .http
        .get(&raw.url)
        .header("accept", "text/event-stream")
        .header("last-event-id", &priming)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 400);

    // Two events kept of five (four reports, the answer): from the third
    // report the last two; from the first or the priming event, gone.
    let tail = stream_of(raw.resume(&mine, posted[3].id.as_deref().unwrap()).await).await;
    assert_eq!(tail, posted[4..]);
    for gone in [&priming, posted[1].id.as_ref().unwrap()] {
        assert_eq!(raw.resume(&mine, gone).await.status(), 410);
    }
    running.stop().await;
}

#[tokio::test]
async fn the_polling_hold_closes_a_call_still_running_and_the_client_polls_to_the_answer() {
    // Every connection of a stream is held 20 ms: the call waits for the
    // gate, opened once its POST was closed.
    let config =
        HttpConfig::default().sse_polling(Duration::from_millis(20), Duration::from_millis(5));
    let running = start_with(config).await;
    let raw = Raw::new(&running.url);
    let session = raw.open("2025-11-25").await;
    let posted = stream_of(raw.call(&session, 3, "gated", json!({})).await).await;
    assert_eq!(posted.len(), 2, "{posted:?}");
    assert_eq!(posted[0].data.as_deref(), Some(""));
    assert_eq!(posted[0].position().1, 0);
    assert_eq!(posted[1].retry, Some(5));
    running.gate.notify_one();
    // Poll until the answer comes: a connection that ends without it ends
    // with a retry hint and carries nothing else.
    let last = posted[0].id.clone().unwrap();
    let answer = loop {
        let got = stream_of(raw.resume(&session, &last).await).await;
        if let Some(answer) = got.iter().find_map(Event::message) {
            assert_eq!(got.len(), 1, "{got:?}");
            break answer;
        }
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].retry, Some(5));
    };
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["result"]["content"][0]["text"], "gated");
    running.stop().await;
}

#[tokio::test]
async fn before_2025_11_25_streams_carry_no_ids_and_are_not_closed() {
    let mut running = start(ResumeConfig::default()).await;
    let raw = Raw::new(&running.url);
    let session = raw.open("2025-06-18").await;
    let posted = stream_of(raw.call(&session, 2, "closing", json!({"steps": 2})).await).await;
    assert!(!running.closed.recv().await.unwrap());
    assert!(
        posted.iter().all(|e| e.id.is_none() && e.retry.is_none()),
        "{posted:?}"
    );
    let progress: Vec<_> = posted.iter().filter_map(progress_of).collect();
    assert_eq!(progress, [1.0, 2.0]);
    assert_eq!(posted[2].message().unwrap()["id"], 2);
    // Nothing to resume in such a session.
    assert_eq!(raw.resume(&session, "0-0-0").await.status(), 400);
    running.stop().await;
}

#[tokio::test]
async fn our_client_resumes_across_a_stream_the_server_closed() {
    let mut running = start(ResumeConfig::default().retry(Duration::from_millis(10))).await;
    let connector = Arc::new(HttpConnector::new(mcp_transport::HttpConfig::new(
        &running.url,
    )));
    let config = SessionConfig {
        request_timeout: Duration::from_secs(10),
        ..SessionConfig::default()
    };
    let session = Session::connect(connector, config).await.unwrap();
    let session = session.negotiate(Negotiation::Legacy).await.unwrap();
    for steps in [0, 3] {
        // The reports travel with the call, whichever connection carries
        // them.
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let options = CallOptions::new().on_progress(move |p| {
            sink.lock().unwrap().push(p.progress_f64());
        });
        let result = session
            .call_tool_with("closing", json!({"steps": steps}), &options)
            .await
            .unwrap();
        assert!(running.closed.recv().await.unwrap(), "{steps}");
        assert_eq!(result.text(), "done");
        let expected: Vec<Option<f64>> = (1..=steps).map(|s| Some(s as f64)).collect();
        assert_eq!(*seen.lock().unwrap(), expected);
    }
    session.close().await;
    running.stop().await;
}

#[tokio::test]
async fn a_message_for_no_request_skips_a_stream_no_connection_reads() {
    let mut running = start(ResumeConfig::default()).await;
    let raw = Raw::new(&running.url);
    let session = raw.open("2025-11-25").await;
    let handle = running.handles.recv().await.unwrap();
    let posted = stream_of(
        raw.call(&session, 5, "closing", json!({"wait": true}))
            .await,
    )
    .await;
    assert!(running.closed.recv().await.unwrap());
    assert_eq!(posted.len(), 2, "{posted:?}");

    // No GET stream, and the call's stream has no connection: the
    // notification waits for the next GET rather than in that stream.
    let delivered = handle
        .notify::<ToolListChanged>(NotificationParams::default())
        .await
        .unwrap();
    assert!(delivered.session);
    let mut get = raw
        .http
        .get(&raw.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 200);
    // Bounded only so that a notification parked elsewhere fails the test
    // instead of hanging it.
    let text = tokio::time::timeout(Duration::from_secs(30), async {
        let mut text = String::new();
        while !text.contains("\n\n") {
            let chunk = get.chunk().await.unwrap().expect("the stream is open");
            text.push_str(std::str::from_utf8(&chunk).unwrap());
        }
        text
    })
    .await
    .expect("the notification reaches the GET stream");
    let note = events(&text)[0].message().unwrap();
    assert_eq!(note["method"], "notifications/tools/list_changed");

    // The call's stream, resumed, holds its answer alone.
    running.gate.notify_one();
    let resumed = stream_of(raw.resume(&session, posted[0].id.as_deref().unwrap()).await).await;
    assert_eq!(resumed.len(), 1, "{resumed:?}");
    assert_eq!(resumed[0].message().unwrap()["id"], 5);
    drop(get);
    running.stop().await;
}

#[tokio::test]
async fn a_2026_07_28_request_has_no_stream_to_close_or_resume() {
    let mut running = start(ResumeConfig::default()).await;
    let raw = Raw::new(&running.url);
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "closing", "arguments": {},
                   "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {},
                             "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}}});
    let reply = raw
        .http
        .post(&raw.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "closing")
        .body(call.to_string())
        .send()
        .await
        .unwrap();
    assert!(!running.closed.recv().await.unwrap());
    assert_eq!(reply.status(), 200);
    assert_eq!(reply.headers()["content-type"], "application/json");
    let answer: Value = serde_json::from_str(&reply.text().await.unwrap()).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    running.stop().await;
}
