//! Streamable HTTP against the testkit's in-process HTTP server, driven with
//! hand-written JSON-RPC frames.

use std::sync::Arc;
use std::time::Duration;

use mcp_testkit::http::ReplyMode;
use mcp_testkit::{Behavior, HttpFakeServer, HttpServerOptions, RunningHttpServer, Script};
use mcp_transport::{
    CloseReason, Connection, Connector, HttpConfig, HttpConnector, Inbound, OutboundFrame,
    RequestFailure, StaticHeader, TransportError,
};
use serde_json::{Value, json};

const LEGACY: &str = "2025-06-18";
const MODERN: &str = "2026-07-28";
const WAIT: Duration = Duration::from_secs(10);
/// How long a GET that should never come is watched for.
const NO_GET_WITHIN: Duration = Duration::from_millis(200);

fn request(id: i64, method: &str, params: Value, version: Option<&'static str>) -> OutboundFrame {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut frame = OutboundFrame::request(body.to_string(), id, method.into());
    frame.protocol_version = version;
    frame
}

fn notification(method: &str, params: Value, version: Option<&'static str>) -> OutboundFrame {
    let body = json!({"jsonrpc": "2.0", "method": method, "params": params});
    let mut frame = OutboundFrame::notification(body.to_string(), method.into());
    frame.protocol_version = version;
    frame
}

async fn next(conn: &mut Connection) -> Inbound {
    tokio::time::timeout(WAIT, conn.inbound.recv())
        .await
        .expect("an inbound event in time")
        .expect("the connection is open")
}

async fn next_frame(conn: &mut Connection) -> Value {
    match next(conn).await {
        Inbound::Frame(bytes) => serde_json::from_slice(&bytes).expect("a JSON frame"),
        other => panic!("expected a frame, got {other:?}"),
    }
}

async fn failure_of(conn: &mut Connection, id: i64) -> RequestFailure {
    loop {
        match next(conn).await {
            Inbound::RequestFailed { id: got, failure } if got == id => return failure,
            Inbound::FrameError(_) => {}
            other => panic!("expected request {id} to fail, got {other:?}"),
        }
    }
}

async fn serve(script: Script, options: HttpServerOptions) -> RunningHttpServer {
    HttpFakeServer::start(script, options)
        .await
        .expect("the HTTP fake server starts")
}

async fn connect(url: &str) -> Connection {
    HttpConnector::new(HttpConfig::new(url))
        .connect()
        .await
        .expect("connect")
}

/// `initialize` then `notifications/initialized` at the legacy version.
async fn handshake(conn: &mut Connection) {
    let params = json!({"protocolVersion": LEGACY, "capabilities": {},
                        "clientInfo": {"name": "t", "version": "0"}});
    conn.outbound
        .send(request(1, "initialize", params, None))
        .await
        .unwrap();
    let reply = next_frame(conn).await;
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["protocolVersion"], LEGACY);
    conn.outbound
        .send(notification(
            "notifications/initialized",
            json!({}),
            Some(LEGACY),
        ))
        .await
        .unwrap();
}

fn echo_call(id: i64, text: &str) -> OutboundFrame {
    request(
        id,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": text}}),
        Some(LEGACY),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_json_replies_capture_and_reuse_the_session_id() {
    let server = serve(
        Script::legacy().tool("echo", Behavior::Echo),
        HttpServerOptions::default(),
    )
    .await;
    let mut conn = connect(&server.url()).await;
    handshake(&mut conn).await;
    let mut call = echo_call(2, "hi");
    call.headers.push(("X-Extra".into(), "extra-value".into()));
    conn.outbound.send(call).await.unwrap();
    let reply = next_frame(&mut conn).await;
    assert_eq!(reply["id"], 2);
    assert_eq!(reply["result"]["content"][0]["text"], "hi");

    let posts = server.requests.with_method("POST");
    assert_eq!(posts[0].jsonrpc_method.as_deref(), Some("initialize"));
    assert_eq!(posts[0].header("mcp-session-id"), None);
    assert_eq!(posts[0].header("mcp-protocol-version"), None);
    assert_eq!(
        posts[0].header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(posts[0].header("content-type"), Some("application/json"));
    for later in &posts[1..] {
        assert_eq!(later.header("mcp-session-id"), Some("session-1"));
        assert_eq!(later.header("mcp-protocol-version"), Some(LEGACY));
    }
    let call = &server.requests.posts_of("tools/call")[0];
    assert_eq!(call.header("x-extra"), Some("extra-value"));
    assert!(
        call.header("user-agent")
            .is_some_and(|ua| ua.starts_with("mcp-transport/"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_stream_replies_deliver_notifications_then_the_answer() {
    let script = Script::legacy().tool(
        "slow",
        Behavior::Sleep {
            ms: 60,
            progress_steps: 3,
        },
    );
    let server = serve(script, HttpServerOptions::default().reply(ReplyMode::Sse)).await;
    let mut conn = connect(&server.url()).await;
    handshake(&mut conn).await;
    let params = json!({"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}});
    conn.outbound
        .send(request(2, "tools/call", params, Some(LEGACY)))
        .await
        .unwrap();
    for step in 1..=3 {
        let progress = next_frame(&mut conn).await;
        assert_eq!(progress["method"], "notifications/progress");
        assert_eq!(progress["params"]["progress"], step);
    }
    let reply = next_frame(&mut conn).await;
    assert_eq!(reply["id"], 2);
    assert_eq!(reply["result"]["content"][0]["text"], "slept 60 ms");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_get_stream_delivers_server_notifications_and_shutdown_deletes_the_session() {
    let server = serve(
        Script::legacy().tool("notify", Behavior::Notify),
        HttpServerOptions::default(),
    )
    .await;
    let mut conn = connect(&server.url()).await;
    handshake(&mut conn).await;
    assert!(
        server
            .requests
            .wait_until(WAIT, |r| r.iter().any(|r| r.method == "GET"))
            .await,
        "the GET stream is opened after the handshake"
    );
    let get = server.requests.with_method("GET").remove(0);
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    assert_eq!(get.header("mcp-session-id"), Some("session-1"));

    conn.outbound
        .send(request(
            2,
            "tools/call",
            json!({"name": "notify", "arguments": {}}),
            Some(LEGACY),
        ))
        .await
        .unwrap();
    let mut methods = Vec::new();
    let mut answered = false;
    while !(answered && methods.len() >= 2) {
        let frame = next_frame(&mut conn).await;
        match frame["method"].as_str() {
            Some(method) => methods.push(method.to_owned()),
            None => {
                assert_eq!(frame["id"], 2);
                answered = true;
            }
        }
    }
    assert!(
        methods.contains(&"notifications/message".to_owned()),
        "{methods:?}"
    );

    let info = conn.control.shutdown().await;
    assert_eq!(info.reason, CloseReason::Shutdown);
    let delete = server.requests.with_method("DELETE");
    assert_eq!(delete.len(), 1);
    assert_eq!(delete[0].header("mcp-session-id"), Some("session-1"));
    assert_eq!(server.session_count(), 0);
    loop {
        match next(&mut conn).await {
            Inbound::Closed(info) => {
                assert_eq!(info.reason, CloseReason::Shutdown);
                break;
            }
            Inbound::Frame(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(
        conn.inbound.recv().await.is_none(),
        "nothing follows Closed"
    );
}

/// Runs the handshake against a server that takes `get_delay` to open its
/// GET stream, sends a call at once, and returns how long after the GET the
/// call reached the server (`None`: before it).
async fn call_right_after_the_handshake(get_delay: Duration) -> Option<Duration> {
    let options = HttpServerOptions {
        get_delay: Some(get_delay),
        ..HttpServerOptions::default()
    };
    let server = serve(Script::legacy().tool("echo", Behavior::Echo), options).await;
    let mut conn = connect(&server.url()).await;
    handshake(&mut conn).await;
    conn.outbound.send(echo_call(2, "first")).await.unwrap();
    let reply = next_frame(&mut conn).await;
    assert_eq!(reply["id"], 2);
    let call = server.requests.posts_of("tools/call").remove(0);
    let get = server.requests.with_method("GET").remove(0);
    call.at.checked_duration_since(get.at)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_request_after_the_handshake_waits_for_the_get_stream_to_open() {
    // A server may send its requests on the GET stream, and drops them while
    // no stream is open (the official TypeScript server does): our first
    // request must not reach it before that stream is taken.
    let delay = Duration::from_millis(300);
    let after = call_right_after_the_handshake(delay)
        .await
        .expect("the call reached the server before the GET");
    assert!(
        after >= delay,
        "the call went out {after:?} after the GET arrived, before its stream opened"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_that_never_opens_delays_the_first_request_by_a_bounded_time() {
    // The GET's head is held far longer than the client waits for it.
    let held = Duration::from_secs(8);
    let after = call_right_after_the_handshake(held)
        .await
        .unwrap_or_default();
    assert!(
        after < held,
        "the call waited {after:?}, as long as the server held the GET"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_closed_early_is_resumed_after_the_retry_time() {
    let options = HttpServerOptions::default()
        .reply(ReplyMode::Sse)
        .close_early(500, &["tools/call"]);
    let server = serve(Script::legacy().tool("echo", Behavior::Echo), options).await;
    let mut conn = connect(&server.url()).await;
    handshake(&mut conn).await;
    conn.outbound.send(echo_call(2, "again")).await.unwrap();
    let reply = next_frame(&mut conn).await;
    assert_eq!(reply["id"], 2);
    assert_eq!(reply["result"]["content"][0]["text"], "again");

    let call = server.requests.posts_of("tools/call").remove(0);
    let resume = server
        .requests
        .with_method("GET")
        .into_iter()
        .find(|r| r.header("last-event-id").is_some())
        .expect("a GET with Last-Event-ID");
    assert!(
        resume
            .header("last-event-id")
            .is_some_and(|id| id.ends_with("-0"))
    );
    assert_eq!(resume.header("mcp-session-id"), Some("session-1"));
    let waited = resume.at.duration_since(call.at);
    assert!(
        waited >= Duration::from_millis(450) && waited <= Duration::from_millis(1000),
        "resumed after {waited:?}"
    );
}

/// A server that polls (SEP-1699): the call's stream ends right after its
/// priming event, and every resumed one after a short hold without news,
/// each time with its `retry` time. The client comes back as often as it
/// takes to get the answer: far more often than the five failed resumes
/// it gives up after, since a stream the server ended is no failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_polls_is_followed_to_the_answer() {
    let options = HttpServerOptions::default()
        .reply(ReplyMode::Sse)
        .close_early(10, &["tools/call"])
        .poll(Duration::from_millis(20));
    let slow = Behavior::Sleep {
        ms: 1000,
        progress_steps: 0,
    };
    let server = serve(Script::legacy().tool("slow", slow), options).await;
    let mut conn = connect(&server.url()).await;
    handshake(&mut conn).await;
    let call = request(
        2,
        "tools/call",
        json!({"name": "slow", "arguments": {}}),
        Some(LEGACY),
    );
    conn.outbound.send(call).await.unwrap();
    let reply = next_frame(&mut conn).await;
    assert_eq!(reply["id"], 2, "{reply}");
    assert!(reply.get("result").is_some(), "{reply}");
    let polls = server
        .requests
        .with_method("GET")
        .into_iter()
        .filter(|r| r.header("last-event-id").is_some())
        .count();
    assert!(polls > 5, "came back {polls} times");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_is_reported_and_forgotten() {
    let server = serve(
        Script::legacy().tool("echo", Behavior::Echo),
        HttpServerOptions::default(),
    )
    .await;
    let mut conn = connect(&server.url()).await;
    handshake(&mut conn).await;
    assert!(
        server
            .recorder
            .wait_for("notifications/initialized", WAIT)
            .await
            .is_some()
    );
    server.expire_sessions();
    conn.outbound.send(echo_call(2, "x")).await.unwrap();
    assert_eq!(
        failure_of(&mut conn, 2).await,
        RequestFailure::SessionExpired
    );

    // The session's re-initialize goes out without the dead id.
    let params = json!({"protocolVersion": LEGACY, "capabilities": {},
                        "clientInfo": {"name": "t", "version": "0"}});
    conn.outbound
        .send(request(3, "initialize", params, None))
        .await
        .unwrap();
    loop {
        let frame = next_frame(&mut conn).await;
        if frame["id"] == 3 {
            assert_eq!(frame["result"]["protocolVersion"], LEGACY);
            break;
        }
    }
    let init = server.requests.posts_of("initialize").pop().unwrap();
    assert_eq!(init.header("mcp-session-id"), None);
    conn.outbound.send(echo_call(4, "y")).await.unwrap();
    assert_eq!(next_frame(&mut conn).await["id"], 4);
    let last = server.requests.posts_of("tools/call").pop().unwrap();
    assert_eq!(last.header("mcp-session-id"), Some("session-2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_fail_the_request_with_their_status() {
    let options = HttpServerOptions::default().fail_with(503, &["tools/list"]);
    let server = serve(Script::legacy(), options).await;
    let mut conn = connect(&server.url()).await;
    handshake(&mut conn).await;
    conn.outbound
        .send(request(2, "tools/list", json!({}), Some(LEGACY)))
        .await
        .unwrap();
    assert_eq!(
        failure_of(&mut conn, 2).await,
        RequestFailure::Status {
            status: 503,
            error: None,
            www_authenticate: None
        }
    );
}

async fn oversized_reply(reply: ReplyMode) {
    let script = Script::legacy().tool("big", Behavior::Oversized { bytes: 300_000 });
    let server = serve(script, HttpServerOptions::default().reply(reply)).await;
    let mut config = HttpConfig::new(server.url());
    config.max_body = 100_000;
    let mut conn = HttpConnector::new(config).connect().await.unwrap();
    handshake(&mut conn).await;
    conn.outbound
        .send(request(
            2,
            "tools/call",
            json!({"name": "big", "arguments": {}}),
            Some(LEGACY),
        ))
        .await
        .unwrap();
    match next(&mut conn).await {
        Inbound::FrameError(TransportError::Codec(mcp_codec::CodecError::FrameTooLarge {
            limit,
        })) => {
            assert_eq!(limit, 100_000);
        }
        other => panic!("expected a frame error, got {other:?}"),
    }
    assert_eq!(
        failure_of(&mut conn, 2).await,
        RequestFailure::TooLarge { limit: 100_000 }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_json_body_is_refused_by_name() {
    oversized_reply(ReplyMode::Json).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_event_is_refused_by_name() {
    oversized_reply(ReplyMode::Sse).await;
}

#[tokio::test]
async fn plain_http_to_a_remote_host_is_refused() {
    for connector in [
        Arc::new(HttpConnector::new(HttpConfig::new(
            "http://example.com/mcp",
        ))) as Arc<dyn Connector>,
        HttpConnector::new(HttpConfig::new("http://example.com/mcp"))
            .fallback()
            .unwrap(),
    ] {
        match connector.connect().await {
            Err(TransportError::InsecureUrl { host }) => assert_eq!(host, "example.com"),
            other => panic!("expected InsecureUrl, got {other:?}"),
        }
        assert!(!connector.is_stdio());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_requests_carry_their_headers_and_no_session() {
    let server = serve(
        Script::modern().tool("echo", Behavior::Echo),
        HttpServerOptions::default(),
    )
    .await;
    let mut conn = connect(&server.url()).await;
    let meta = json!({"io.modelcontextprotocol/protocolVersion": MODERN,
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let mut call = request(
        7,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "now"}, "_meta": meta}),
        Some(MODERN),
    );
    call.headers = vec![
        ("Mcp-Method".into(), "tools/call".into()),
        ("Mcp-Name".into(), "echo".into()),
    ];
    conn.outbound.send(call.clone()).await.unwrap();
    let reply = next_frame(&mut conn).await;
    assert_eq!(reply["result"]["content"][0]["text"], "now");
    let post = server.requests.posts_of("tools/call").remove(0);
    assert_eq!(post.header("mcp-protocol-version"), Some(MODERN));
    assert_eq!(post.header("mcp-name"), Some("echo"));
    assert_eq!(post.header("mcp-session-id"), None);

    // Without Mcp-Name the stateless server answers -32020.
    let mut call = request(
        8,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "now"}, "_meta": meta}),
        Some(MODERN),
    );
    call.headers = vec![("Mcp-Method".into(), "tools/call".into())];
    conn.outbound.send(call).await.unwrap();
    match failure_of(&mut conn, 8).await {
        RequestFailure::Status {
            status: 400,
            error: Some(error),
            ..
        } => {
            let error: Value = serde_json::from_slice(&error).unwrap();
            assert_eq!(error["code"], -32020);
        }
        other => panic!("expected a 400 HeaderMismatch, got {other:?}"),
    }
    // Absence has no event to wait for: a GET stream is started when a reply
    // is taken in (before it is delivered), and its GET then goes out on its
    // own task. So the server's log is watched for a while, failing as soon
    // as a GET arrives (virtual time is no option over real sockets).
    let got = server
        .requests
        .wait_until(NO_GET_WITHIN, |r| r.iter().any(|r| r.method == "GET"))
        .await;
    assert!(!got, "no GET stream in the modern era");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_modern_request_closes_its_stream_without_a_notification() {
    let script = Script::modern().tool("hang", Behavior::Hang);
    let server = serve(script, HttpServerOptions::default().reply(ReplyMode::Sse)).await;
    let mut conn = connect(&server.url()).await;
    let meta = json!({"io.modelcontextprotocol/protocolVersion": MODERN,
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let mut call = request(
        3,
        "tools/call",
        json!({"name": "hang", "arguments": {}, "_meta": meta}),
        Some(MODERN),
    );
    call.headers = vec![
        ("Mcp-Method".into(), "tools/call".into()),
        ("Mcp-Name".into(), "hang".into()),
    ];
    conn.outbound.send(call).await.unwrap();
    assert!(
        server.recorder.wait_for("tools/call", WAIT).await.is_some(),
        "the call reached the server"
    );
    conn.outbound
        .send(notification(
            "notifications/cancelled",
            json!({"requestId": 3}),
            Some(MODERN),
        ))
        .await
        .unwrap();
    let quiet = tokio::time::timeout(Duration::from_millis(300), conn.inbound.recv()).await;
    assert!(
        quiet.is_err(),
        "a cancelled request is not reported: {quiet:?}"
    );
    assert!(
        server
            .requests
            .posts_of("notifications/cancelled")
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_illegal_message_header_fails_that_request_by_name() {
    let server = serve(Script::legacy(), HttpServerOptions::default()).await;
    let mut conn = connect(&server.url()).await;
    let mut frame = request(1, "initialize", json!({}), None);
    frame.headers.push(("X-Bad".into(), "line\r\nbreak".into()));
    conn.outbound.send(frame).await.unwrap();
    assert_eq!(
        failure_of(&mut conn, 1).await,
        RequestFailure::InvalidHeader {
            name: Some("x-bad".into())
        }
    );
    let mut frame = request(2, "initialize", json!({}), None);
    frame.headers.push(("Bad Name".into(), "v".into()));
    conn.outbound.send(frame).await.unwrap();
    assert_eq!(
        failure_of(&mut conn, 2).await,
        RequestFailure::InvalidHeader { name: None }
    );
    assert!(server.requests.requests().is_empty(), "nothing was sent");
}

/// The variables the credential test's child process gets.
const TOKEN: &str = "tok-3f9a-very-secret";
const TOKEN_VAR: &str = "MCP_TRANSPORT_TEST_TOKEN";
const BAD_TOKEN_VAR: &str = "MCP_TRANSPORT_TEST_BAD_TOKEN";

/// The workspace forbids `unsafe`, so `std::env::set_var` is out: the test
/// runs itself again as a child process with the variables set.
#[test]
fn a_static_credential_is_sent_and_never_shown() {
    if std::env::var(TOKEN_VAR).is_ok() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        return runtime.block_on(credential_checks());
    }
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_static_credential_is_sent_and_never_shown",
            "--test-threads=1",
            "--quiet",
        ])
        .env(TOKEN_VAR, TOKEN)
        .env(BAD_TOKEN_VAR, format!("{TOKEN}\nx"))
        .output()
        .unwrap();
    // The child's own test summary is kept out of this run's output.
    assert!(
        child.status.success(),
        "the credential checks failed in the child:\n{}\n{}",
        String::from_utf8_lossy(&child.stdout),
        String::from_utf8_lossy(&child.stderr)
    );
}

async fn credential_checks() {
    let server = serve(Script::legacy(), HttpServerOptions::default()).await;
    let config = HttpConfig::new(format!("{}?key={TOKEN}", server.url()))
        .credentials(Arc::new(StaticHeader::bearer_from_env(TOKEN_VAR)))
        .header("X-Api-Key", TOKEN);
    let connector = HttpConnector::new(config.clone());
    let mut conn = connector.connect().await.unwrap();
    handshake(&mut conn).await;
    let init = server.requests.posts_of("initialize").remove(0);
    let bearer = format!("Bearer {TOKEN}");
    assert_eq!(init.header("authorization"), Some(bearer.as_str()));
    assert_eq!(init.header("x-api-key"), Some(TOKEN));

    let mut shown = vec![format!("{connector:?}"), format!("{config:?}")];
    // A missing variable names the variable, not a value.
    let missing = HttpConnector::new(HttpConfig::new(server.url()).credentials(Arc::new(
        StaticHeader::bearer_from_env("MCP_TRANSPORT_TEST_UNSET"),
    )))
    .connect()
    .await
    .unwrap_err();
    assert!(
        matches!(&missing, TransportError::MissingCredential { variable } if variable == "MCP_TRANSPORT_TEST_UNSET")
    );
    shown.push(format!("{missing} {missing:?}"));
    // A refused connection (nothing listens on port 1), with the token in
    // the URL's query, in a header, in the credential and in the body.
    let refused_config = HttpConfig::new(format!("http://127.0.0.1:1/mcp?key={TOKEN}"))
        .credentials(Arc::new(StaticHeader::bearer_from_env(TOKEN_VAR)))
        .header("X-Api-Key", TOKEN);
    let mut refused = HttpConnector::new(refused_config.clone())
        .connect()
        .await
        .unwrap();
    refused
        .outbound
        .send(request(1, "initialize", json!({"token": TOKEN}), None))
        .await
        .unwrap();
    let failure = failure_of(&mut refused, 1).await;
    assert_eq!(failure, RequestFailure::Refused);
    assert!(failure.to_string().contains("is it running?"), "{failure}");
    shown.push(format!("{failure} {failure:?}"));
    let sse_error = mcp_transport::SseConnector::new(refused_config)
        .connect()
        .await
        .unwrap_err();
    assert!(
        // Plain http takes the fast path (an `Io` error), https reqwest.
        matches!(sse_error, TransportError::Http(_) | TransportError::Io(_)),
        "{sse_error:?}"
    );
    shown.push(format!("{sse_error} {sse_error:?}"));
    // A credential that is not header text: the error names the header only.
    let bad = HttpConnector::new(
        HttpConfig::new(server.url())
            .credentials(Arc::new(StaticHeader::bearer_from_env(BAD_TOKEN_VAR))),
    )
    .connect()
    .await
    .unwrap_err();
    assert!(
        matches!(&bad, TransportError::InvalidHeader { name: Some(n) } if n == "authorization")
    );
    shown.push(format!("{bad} {bad:?}"));
    for text in shown {
        assert!(!text.contains(TOKEN), "the token leaked: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_that_meets_an_expired_session_is_told_and_fails_the_next_request_as_expired()
 {
    let server = serve(Script::legacy(), HttpServerOptions::default()).await;
    let mut conn = connect(&server.url()).await;
    handshake(&mut conn).await;
    assert!(
        server
            .recorder
            .wait_for("notifications/initialized", WAIT)
            .await
            .is_some()
    );
    server.expire_sessions();
    let progress = json!({"progressToken": "t", "progress": 1});
    conn.outbound
        .send(notification(
            "notifications/progress",
            progress,
            Some(LEGACY),
        ))
        .await
        .unwrap();
    // No request of ours failed with the news: the session is told.
    let told = tokio::time::timeout(WAIT, conn.inbound.recv())
        .await
        .expect("told in time");
    assert!(matches!(told, Some(Inbound::SessionExpired)), "{told:?}");
    conn.outbound
        .send(request(2, "tools/list", json!({}), Some(LEGACY)))
        .await
        .unwrap();
    assert_eq!(
        failure_of(&mut conn, 2).await,
        RequestFailure::SessionExpired
    );
    assert!(
        server.requests.posts_of("tools/list").is_empty(),
        "the request was not sent without its session"
    );
}

/// Large replies (256 KiB or more) that come in many pieces are joined in
/// buffers the transport keeps for the next one (a JSON body; an event and
/// its data): each arrives whole, with nothing of the one before; smaller
/// ones are joined in their own.
async fn large_replies_back_to_back(reply: ReplyMode) {
    let server = serve(
        Script::legacy().tool("echo", Behavior::Echo),
        HttpServerOptions::default().reply(reply),
    )
    .await;
    let mut conn = connect(&server.url()).await;
    handshake(&mut conn).await;
    for (id, (fill, len)) in [('a', 1_000_000), ('b', 900_000), ('c', 120_000), ('d', 90)]
        .into_iter()
        .enumerate()
    {
        let id = id as i64 + 2;
        let text: String = std::iter::repeat_n(fill, len).collect();
        conn.outbound.send(echo_call(id, &text)).await.unwrap();
        let reply = next_frame(&mut conn).await;
        assert_eq!(reply["id"], id);
        assert_eq!(reply["result"]["content"][0]["text"], text.as_str());
    }
}

/// One test for both reply modes: the kept buffers are the process's, and
/// no other test here reads a reply that large.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_replies_back_to_back_each_arrive_whole() {
    large_replies_back_to_back(ReplyMode::Json).await;
    large_replies_back_to_back(ReplyMode::Sse).await;
}
