//! The server half over Streamable HTTP (feature `http`), on loopback: our
//! own client (mcp-session over its HTTP transport) in both eras, and raw
//! HTTP requests for the rules of the binding (session ids, DELETE, the GET
//! stream, Origin and Host, the body bound, the 2026-07-28 headers, TLS
//! and the bearer token).

#[path = "support/common.rs"]
mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcp_server::http::{BearerToken, ConnectionKind, HttpConfig, HttpServer};
use mcp_server::{ServerError, ServerHandle};
use mcp_session::{CallOptions, Negotiation};
use mcp_transport::{Connector, HttpConnector};
use mcp_types::notifications::ToolListChanged;
use mcp_types::requests::{CallTool, Initialize, ListTools};
use mcp_types::{Era, Notification as _, NotificationParams, Request as _, error_codes};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// A running endpoint: its URL, the handles of the connections it made
/// (with their kind), and what the handler saw.
struct Running {
    url: String,
    handles: mpsc::UnboundedReceiver<(ConnectionKind, ServerHandle)>,
    seen: mpsc::UnboundedReceiver<Seen>,
    stop: Option<oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<Result<(), ServerError>>,
}

impl Running {
    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.served.await.unwrap().unwrap();
    }
}

async fn start(config: HttpConfig) -> Running {
    start_on("127.0.0.1:0".parse().unwrap(), config).await
}

async fn start_on(addr: SocketAddr, config: HttpConfig) -> Running {
    let endpoint = HttpServer::bind(addr, config).await.unwrap();
    let url = endpoint.url();
    let (handler, seen) = Demo::new();
    let (tx, handles) = mpsc::unbounded_channel();
    let (stop, stopped) = oneshot::channel::<()>();
    let served = tokio::spawn(endpoint.serve(
        move |connection: mcp_server::http::HostConnection| {
            let _ = tx.send((connection.kind, connection.handle.clone()));
            Arc::clone(&handler)
        },
        common::config(),
        async move {
            let _ = stopped.await;
        },
    ));
    Running {
        url,
        handles,
        seen,
        stop: Some(stop),
        served,
    }
}

fn connector(url: &str) -> Arc<dyn Connector> {
    Arc::new(HttpConnector::new(mcp_transport::HttpConfig::new(url)))
}

#[tokio::test]
async fn both_eras_through_our_client_list_call_and_stream_progress() {
    let running = start(HttpConfig::default()).await;
    for (mode, era) in [
        (Negotiation::Legacy, Era::Legacy),
        (Negotiation::Modern, Era::Modern),
        (Negotiation::Auto, Era::Modern),
    ] {
        let session = ready(connector(&running.url), mode).await;
        assert_eq!(session.era(), era, "{mode:?}");
        assert_eq!(session.server_info().name, "demo");
        let all = session.list_tools().await.unwrap();
        let names: Vec<&str> = all.tools().iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, TOOLS, "{mode:?}");
        let result = session
            .call_tool("echo", json!({"text": "over http"}))
            .await
            .unwrap();
        assert_eq!(result.text(), "over http", "{mode:?}");

        // Progress travels on the request's event stream, before its answer.
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let options = CallOptions::new().on_progress(move |p| {
            sink.lock().unwrap().push(p.progress_f64());
        });
        let result = session
            .call_tool_with("progress", (), &options)
            .await
            .unwrap();
        assert_eq!(result.text(), "done");
        assert_eq!(*seen.lock().unwrap(), [Some(1.0), Some(2.0)], "{mode:?}");
        session.close().await;
    }
    running.stop().await;
}

/// Raw HTTP against the endpoint.
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

    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        self.http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string())
    }

    /// `initialize` and `notifications/initialized`; the session id.
    async fn open_session(&self) -> String {
        let reply = self.post(&initialize()).send().await.unwrap();
        assert_eq!(reply.status(), 200);
        let id = reply
            .headers()
            .get("mcp-session-id")
            .expect("a session id")
            .to_str()
            .unwrap()
            .to_owned();
        let body = body_of(reply).await;
        assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let accepted = self
            .post(&note)
            .header("mcp-session-id", &id)
            .send()
            .await
            .unwrap();
        assert_eq!(accepted.status(), 202);
        id
    }
}

fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": Initialize::METHOD,
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}},
    })
}

fn list_tools(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": ListTools::METHOD, "params": {}})
}

async fn body_of(reply: reqwest::Response) -> Value {
    serde_json::from_str(&reply.text().await.unwrap()).unwrap()
}

async fn error_of(reply: reqwest::Response) -> (u16, i64) {
    let status = reply.status().as_u16();
    let body = body_of(reply).await;
    (status, body["error"]["code"].as_i64().unwrap())
}

#[tokio::test]
async fn legacy_sessions_have_random_ids_and_end_with_delete() {
    let running = start(HttpConfig::default()).await;
    let raw = Raw::new(&running.url);
    let first = raw.open_session().await;
    let second = raw.open_session().await;
    assert_ne!(first, second);
    assert_eq!(first.len(), 32);
    assert!(first.bytes().all(|b| b.is_ascii_hexdigit()));

    // Without the session id: 400; an unknown one: 404.
    let reply = raw.post(&list_tools(2)).send().await.unwrap();
    assert_eq!(error_of(reply).await.0, 400);
    let reply = raw
        .post(&list_tools(2))
        .header("mcp-session-id", "0123")
        .send()
        .await
        .unwrap();
    assert_eq!(error_of(reply).await, (404, -32001));

    // With it: served.
    let reply = raw
        .post(&list_tools(2))
        .header("mcp-session-id", &first)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    assert_eq!(
        reply.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    let body = body_of(reply).await;
    assert_eq!(body["id"], 2);
    assert_eq!(body["result"]["tools"][0]["name"], "echo");

    // DELETE ends it (its connection closes); the other lives on.
    let reply = raw
        .http
        .delete(&running.url)
        .header("mcp-session-id", &first)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 204);
    let reply = raw
        .post(&list_tools(3))
        .header("mcp-session-id", &first)
        .send()
        .await
        .unwrap();
    assert_eq!(error_of(reply).await.0, 404);
    let reply = raw
        .post(&list_tools(3))
        .header("mcp-session-id", &second)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let mut handles = running.handles;
    let (kind, handle) = handles.recv().await.unwrap();
    assert_eq!(kind, ConnectionKind::Session);
    handle.closed().await;
    running.served.abort();
}

#[tokio::test]
async fn the_get_stream_carries_the_sessions_notifications_one_stream_at_a_time() {
    let mut running = start(HttpConfig::default()).await;
    let raw = Raw::new(&running.url);
    let id = raw.open_session().await;
    let (_, handle) = running.handles.recv().await.unwrap();
    handle.initialized().await.expect("initialized");

    let get = || {
        raw.http
            .get(&running.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &id)
            .send()
    };
    let mut stream = get().await.unwrap();
    assert_eq!(stream.status(), 200);
    assert_eq!(
        stream.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let second = get().await.unwrap();
    assert_eq!(error_of(second).await.0, 409);

    let delivered = handle
        .notify::<ToolListChanged>(NotificationParams::default())
        .await
        .unwrap();
    assert!(delivered.session);
    let mut text = String::new();
    while !text.contains("\n\n") {
        let chunk = stream.chunk().await.unwrap().expect("the stream is open");
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let data = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("a data line");
    let message: Value = serde_json::from_str(data).unwrap();
    assert_eq!(message["method"], ToolListChanged::METHOD);

    // No session: 400; a 2026-07-28 client: 405.
    let reply = raw
        .http
        .get(&running.url)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 400);
    let reply = raw
        .http
        .get(&running.url)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 405);
    drop(stream);
    running.served.abort();
}

#[tokio::test]
async fn foreign_origins_and_hosts_oversized_bodies_and_sessions_over_the_bound_are_refused() {
    let running = start(HttpConfig::default().max_body(1024).max_sessions(1)).await;
    let raw = Raw::new(&running.url);

    let reply = raw
        .post(&initialize())
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 403);
    let reply = raw
        .post(&initialize())
        .header("origin", "http://localhost:5173")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200, "a loopback origin is allowed");

    // A DNS-rebound name reaching the loopback port.
    let reply = raw
        .post(&initialize())
        .header("host", "rebound.example")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 403);
    let body = body_of(reply).await;
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Host header"),
        "{body}"
    );

    let big = json!({"jsonrpc": "2.0", "id": 9, "method": CallTool::METHOD,
                     "params": {"name": "echo", "arguments": {"text": "x".repeat(4096)}}});
    let reply = raw.post(&big).send().await.unwrap();
    let status = reply.status();
    let body = body_of(reply).await;
    assert_eq!(status, 413);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bound of 1024 bytes"),
        "{body}"
    );

    // One session is the bound (the loopback-origin one above holds it).
    let reply = raw.post(&initialize()).send().await.unwrap();
    let (status, _) = error_of(reply).await;
    assert_eq!(status, 503);

    let reply = raw
        .http
        .post(&running.url)
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 415);
    let reply = raw
        .http
        .post(&running.url)
        .header("content-type", "application/json")
        .header("accept", "text/html")
        .body(initialize().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 406);
    running.served.abort();
}

fn modern_call(name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": CallTool::METHOD,
           "params": {"name": name, "arguments": {"text": "hi"},
                      "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                "io.modelcontextprotocol/clientCapabilities": {}}}})
}

#[tokio::test]
async fn modern_requests_are_stateless_and_their_headers_must_agree_with_the_body() {
    let running = start(HttpConfig::default()).await;
    let raw = Raw::new(&running.url);
    let good = |body: &Value| {
        raw.post(body)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", CallTool::METHOD)
    };
    let reply = good(&modern_call("echo"))
        .header("mcp-name", "echo")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    assert!(reply.headers().get("mcp-session-id").is_none());
    let body = body_of(reply).await;
    assert_eq!(body["result"]["content"][0]["text"], "hi", "{body}");

    let reply = good(&modern_call("echo")).send().await.unwrap();
    assert_eq!(
        error_of(reply).await,
        (400, error_codes::HEADER_MISMATCH),
        "Mcp-Name is required"
    );
    let reply = good(&modern_call("echo"))
        .header("mcp-name", "fourth")
        .send()
        .await
        .unwrap();
    assert_eq!(error_of(reply).await, (400, error_codes::HEADER_MISMATCH));
    let reply = raw
        .post(&modern_call("echo"))
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", ListTools::METHOD)
        .header("mcp-name", "echo")
        .send()
        .await
        .unwrap();
    assert_eq!(error_of(reply).await, (400, error_codes::HEADER_MISMATCH));
    let reply = raw
        .post(&modern_call("echo"))
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-method", CallTool::METHOD)
        .header("mcp-name", "echo")
        .send()
        .await
        .unwrap();
    assert_eq!(error_of(reply).await, (400, error_codes::HEADER_MISMATCH));
    running.served.abort();
}

#[tokio::test]
async fn a_stateless_error_carries_its_http_status_and_the_requests_id() {
    let running = start(HttpConfig::default()).await;
    let raw = Raw::new(&running.url);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let modern = |method: &str, id: i64, params: Value| {
        raw.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
    };
    // A method the server does not have: 404 with -32601.
    let reply = modern("unknown/method", 11, json!({"_meta": meta}))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 404);
    let body = body_of(reply).await;
    assert_eq!(
        body["error"]["code"],
        error_codes::METHOD_NOT_FOUND,
        "{body}"
    );
    assert_eq!(body["id"], 11, "{body}");
    // `_meta` without the client's capabilities: 400 with -32602.
    let reply = modern(
        ListTools::METHOD,
        12,
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(reply.status(), 400);
    let body = body_of(reply).await;
    assert_eq!(body["error"]["code"], error_codes::INVALID_PARAMS, "{body}");
    assert_eq!(body["id"], 12, "{body}");
    // `initialize` is no method of the stateless era: 404, no session.
    let reply = modern(Initialize::METHOD, 15, json!({"_meta": meta}))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 404);
    assert!(reply.headers().get("mcp-session-id").is_none());
    // A result stays 200.
    let reply = modern(ListTools::METHOD, 13, json!({"_meta": meta}))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    // A version header no version: 400 with -32022, the id, what is
    // served and what was asked.
    let reply = raw
        .post(
            &json!({"jsonrpc": "2.0", "id": 14, "method": ListTools::METHOD,
                      "params": {"_meta": meta}}),
        )
        .header("mcp-protocol-version", "v999.0.0")
        .header("mcp-method", ListTools::METHOD)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 400);
    let body = body_of(reply).await;
    assert_eq!(
        body["error"]["code"],
        error_codes::UNSUPPORTED_PROTOCOL_VERSION,
        "{body}"
    );
    assert_eq!(body["id"], 14, "{body}");
    assert_eq!(body["error"]["data"]["requested"], "v999.0.0", "{body}");
    let supported = body["error"]["data"]["supported"].as_array().unwrap();
    assert!(supported.iter().any(|v| v == "2026-07-28"), "{body}");
    running.served.abort();
}

#[tokio::test]
async fn a_tool_calls_param_headers_must_agree_with_its_arguments() {
    // `fourth` mirrors its `region` argument in `Mcp-Param-Region`
    // (the handler's `tool_input_schema`).
    let running = start(HttpConfig::default()).await;
    let raw = Raw::new(&running.url);
    let call = |id: i64, arguments: Value| {
        raw.post(&json!({"jsonrpc": "2.0", "id": id, "method": CallTool::METHOD,
                         "params": {"name": "fourth", "arguments": arguments,
                                    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                              "io.modelcontextprotocol/clientCapabilities": {}}}}))
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", CallTool::METHOD)
            .header("mcp-name", "fourth")
    };
    let region = json!({"region": "Zürich"});
    // The value itself (as Base64, since it is not ASCII): served.
    let reply = call(1, region.clone())
        .header("mcp-param-region", "=?base64?WsO8cmljaA==?=")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    assert_eq!(
        body_of(reply).await["result"]["content"][0]["text"],
        "fourth"
    );
    // Without the argument and without the header: served.
    let reply = call(2, json!({})).send().await.unwrap();
    assert_eq!(reply.status(), 200);
    // Missing, another value, a header without its argument, Base64 that
    // does not decode: 400 with -32020 and the request's id.
    let refused = [
        (call(3, region.clone()), "is required"),
        (
            call(4, region.clone()).header("mcp-param-region", "Zurich"),
            "does not match",
        ),
        (
            call(5, json!({})).header("mcp-param-region", "Zurich"),
            "its argument is not",
        ),
        (
            call(6, region.clone()).header("mcp-param-region", "=?base64?WsO8cmljaA?="),
            "invalid characters or Base64",
        ),
    ];
    for (id, (request, words)) in (3..).zip(refused) {
        let reply = request.send().await.unwrap();
        assert_eq!(reply.status(), 400, "{words}");
        let body = body_of(reply).await;
        assert_eq!(
            body["error"]["code"],
            error_codes::HEADER_MISMATCH,
            "{body}"
        );
        assert_eq!(body["id"], id, "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("Mcp-Param-Region") && message.contains(words),
            "{message}"
        );
        assert!(
            !message.contains("Zurich"),
            "no value in the answer: {message}"
        );
    }
    running.served.abort();
}

#[tokio::test]
async fn a_modern_client_that_goes_away_cancels_its_request() {
    let mut running = start(HttpConfig::default()).await;
    let raw = Raw::new(&running.url);
    let request = raw
        .post(&modern_call("slow"))
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", CallTool::METHOD)
        .header("mcp-name", "slow")
        .send();
    let waiting = tokio::spawn(request);
    let Some(Seen::Started(id)) = running.seen.recv().await else {
        panic!("the call did not start");
    };
    waiting.abort();
    assert_eq!(running.seen.recv().await, Some(Seen::Cancelled(id)));
    running.served.abort();
}

#[tokio::test]
async fn off_loopback_needs_tls_and_a_token() {
    let addr: SocketAddr = "0.0.0.0:0".parse().unwrap();
    let error = HttpServer::bind(addr, HttpConfig::default())
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, ServerError::Exposure { .. }), "{error:?}");
    assert!(
        text.contains("TLS") && text.contains("bearer token"),
        "{text}"
    );
    let token = BearerToken::new("t0ken").unwrap();
    let error = HttpServer::bind(addr, HttpConfig::default().bearer(token))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("needs TLS"), "{error}");
    assert!(!format!("{error:?}").contains("t0ken"));
}

#[tokio::test]
async fn tls_with_a_bearer_token_serves_our_client_and_refuses_without_the_token() {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let root_key = KeyPair::generate().unwrap();
    let mut root = CertificateParams::new(Vec::<String>::new()).unwrap();
    root.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    root.distinguished_name
        .push(DnType::CommonName, "mcp-server test root");
    let root_cert = root.self_signed(&root_key).unwrap();
    let issuer = Issuer::new(root, root_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    let dir = std::env::temp_dir().join(format!("mcp-server-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, leaf.pem()).unwrap();
    std::fs::write(&key, leaf_key.serialize_pem()).unwrap();

    let secret = "a-long-test-token";
    let config = HttpConfig::default()
        .tls(&cert, &key)
        .bearer(BearerToken::new(secret).unwrap());
    let running = start(config).await;
    assert!(
        running.url.starts_with("https://127.0.0.1:"),
        "{}",
        running.url
    );
    let client = || {
        reqwest::Client::builder()
            .tls_certs_only([reqwest::Certificate::from_pem(root_cert.pem().as_bytes()).unwrap()])
            .build()
            .unwrap()
    };
    let http = mcp_transport::HttpConfig::new(&running.url)
        .client(client())
        .header("authorization", format!("Bearer {secret}"));
    let session = ready(Arc::new(HttpConnector::new(http)), Negotiation::Auto).await;
    let result = session
        .call_tool("echo", json!({"text": "over tls"}))
        .await
        .unwrap();
    assert_eq!(result.text(), "over tls");
    session.close().await;

    let raw = Raw {
        http: client(),
        url: running.url.clone(),
    };
    let reply = raw.post(&initialize()).send().await.unwrap();
    assert_eq!(reply.status(), 401);
    assert_eq!(reply.headers()["www-authenticate"], "Bearer");
    let reply = raw
        .post(&initialize())
        .header("authorization", "Bearer wrong")
        .send()
        .await
        .unwrap();
    let body = reply.text().await.unwrap();
    assert!(!body.contains(secret));
    let plain = reqwest::Client::new()
        .post(running.url.replacen("https", "http", 1))
        .body("{}")
        .send()
        .await;
    assert!(plain.is_err() || plain.unwrap().status() != 200);
    running.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn shutdown_ends_open_streams_and_sessions() {
    let mut running = start(HttpConfig::default()).await;
    let session = ready(connector(&running.url), Negotiation::Legacy).await;
    let (_, handle) = running.handles.recv().await.unwrap();
    handle.initialized().await.unwrap();
    let stop = running.stop.take().unwrap();
    let _ = stop.send(());
    running.served.await.unwrap().unwrap();
    handle.closed().await;
    drop(session);
    let _ = Duration::ZERO;
}

/// Reads until the server closes the connection (or the test's own guard
/// of 20 s, which only a regression reaches); what it answered first.
async fn until_closed(stream: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut got)).await;
    assert!(
        read.is_ok(),
        "the server kept the connection open; it answered {:?}",
        String::from_utf8_lossy(&got)
    );
    String::from_utf8_lossy(&got).into_owned()
}

/// A request refused at the door (here: a rebound `Host`) closes its
/// connection, so a peer that may not make requests cannot keep
/// connections alive with them; an accepted one keeps its connection.
#[tokio::test]
async fn a_request_refused_at_the_door_closes_its_connection() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let running = start(HttpConfig::default()).await;
    let address = running
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let body = initialize().to_string();
    let request = |host: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let mut refused = tokio::net::TcpStream::connect(&address).await.unwrap();
    refused
        .write_all(request("rebound.example").as_bytes())
        .await
        .unwrap();
    let answer = until_closed(&mut refused).await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert!(answer.contains("connection: close"), "{answer}");

    // Accepted requests keep theirs: two answers on one connection.
    let mut accepted = tokio::net::TcpStream::connect(&address).await.unwrap();
    for _ in 0..2 {
        accepted
            .write_all(request(&address).as_bytes())
            .await
            .unwrap();
        let mut answer = Vec::new();
        let mut byte = [0u8; 1];
        while !answer.ends_with(b"\r\n\r\n") {
            assert_eq!(accepted.read(&mut byte).await.unwrap(), 1, "closed early");
            answer.push(byte[0]);
        }
        let head = String::from_utf8(answer).unwrap().to_ascii_lowercase();
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert!(!head.contains("connection: close"), "{head}");
        let length: usize = head
            .split("content-length: ")
            .nth(1)
            .and_then(|rest| rest.split("\r\n").next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("a JSON answer with a length: {head}"));
        let mut body = vec![0u8; length];
        accepted.read_exact(&mut body).await.unwrap();
    }
    running.served.abort();
}

/// A peer that connects and sends nothing, half a head, or a head and too
/// little body, gives its place under the connection bound back within
/// `request_read_timeout` (a late body is answered 408), so the bound
/// cannot be held by idle sockets; a long answer is not cut by it.
#[tokio::test]
async fn a_request_that_does_not_arrive_in_time_gives_its_connection_back() {
    use tokio::io::AsyncWriteExt;
    let timeout = Duration::from_millis(300);
    let running = start(
        HttpConfig::default()
            .max_connections(3)
            .request_read_timeout(timeout),
    )
    .await;
    let address = running
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let connect = || tokio::net::TcpStream::connect(address.clone());

    let mut silent = connect().await.unwrap();
    let mut half_head = connect().await.unwrap();
    half_head
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let mut short_body = connect().await.unwrap();
    short_body
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n\
              accept: application/json, text/event-stream\r\ncontent-length: 100\r\n\r\n{",
        )
        .await
        .unwrap();
    // The bound is full: another connection is turned away at once.
    let mut fourth = connect().await.unwrap();
    assert!(until_closed(&mut fourth).await.starts_with("HTTP/1.1 503"));

    assert_eq!(until_closed(&mut silent).await, "");
    assert_eq!(until_closed(&mut half_head).await, "");
    let answer = until_closed(&mut short_body).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive within"), "{answer}");

    // Their places are free again; a call that runs longer than the read
    // time is not cut (it ends on the client's own time-out).
    let session = ready(connector(&running.url), Negotiation::Legacy).await;
    let options = CallOptions::new().timeout(timeout * 5);
    let error = session
        .call_tool_with("slow", (), &options)
        .await
        .unwrap_err();
    assert!(
        matches!(error, mcp_session::SessionError::Timeout { .. }),
        "{error}"
    );
    session.close().await;
    running.stop().await;
}
