//! The legacy HTTP+SSE transport end to end, and how each real-world answer
//! to a 2026 probe (`server/discover`) reaches the session.

use std::time::Duration;

use mcp_testkit::http::{HttpProbe, ReplyMode};
use mcp_testkit::{
    Behavior, HttpFakeServer, HttpServerOptions, OnProbe, RunningHttpServer, Script,
};
use mcp_transport::{
    CloseReason, Connection, Connector, HttpConfig, HttpConnector, Inbound, OutboundFrame,
    RequestFailure, SseConnector, TransportError,
};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);
const MODERN: &str = "2026-07-28";

fn request(id: i64, method: &str, params: Value, version: Option<&'static str>) -> OutboundFrame {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut frame = OutboundFrame::request(body.to_string(), id, method.into());
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

async fn serve(script: Script, options: HttpServerOptions) -> RunningHttpServer {
    HttpFakeServer::start(script, options)
        .await
        .expect("the HTTP fake server starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_http_sse_runs_end_to_end() {
    let server = serve(
        Script::legacy().tool("echo", Behavior::Echo),
        HttpServerOptions::default(),
    )
    .await;
    let connector = HttpConnector::new(HttpConfig::new(server.sse_url()))
        .fallback()
        .expect("Streamable HTTP falls back to HTTP+SSE");
    assert!(format!("{connector:?}").contains("SseConnector"));
    let mut conn = connector.connect().await.unwrap();
    let params = json!({"protocolVersion": "2024-11-05", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "0"}});
    conn.outbound
        .send(request(1, "initialize", params, None))
        .await
        .unwrap();
    let reply = next_frame(&mut conn).await;
    assert_eq!(reply["result"]["protocolVersion"], "2024-11-05");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    conn.outbound
        .send(OutboundFrame::notification(
            initialized.to_string(),
            "notifications/initialized".into(),
        ))
        .await
        .unwrap();
    let call = json!({"name": "echo", "arguments": {"text": "over sse"}});
    conn.outbound
        .send(request(2, "tools/call", call, None))
        .await
        .unwrap();
    let reply = next_frame(&mut conn).await;
    assert_eq!(reply["id"], 2);
    assert_eq!(reply["result"]["content"][0]["text"], "over sse");

    let posts = server.requests.with_method("POST");
    assert_eq!(posts.len(), 3);
    assert!(
        posts
            .iter()
            .all(|p| p.path.starts_with("/messages?sessionId=sse-"))
    );
    assert!(
        server
            .recorder
            .wait_for("notifications/initialized", WAIT)
            .await
            .is_some()
    );

    let info = conn.control.shutdown().await;
    assert_eq!(info.reason, CloseReason::Shutdown);
    match next(&mut conn).await {
        Inbound::Closed(info) => assert_eq!(info.reason, CloseReason::Shutdown),
        other => panic!("expected Closed, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_the_legacy_stream_ends_the_connection() {
    let server = serve(Script::legacy(), HttpServerOptions::default()).await;
    let mut conn = SseConnector::new(HttpConfig::new(server.sse_url()))
        .connect()
        .await
        .unwrap();
    server.shutdown().await;
    match next(&mut conn).await {
        Inbound::Closed(info) => assert_ne!(info.reason, CloseReason::Shutdown),
        other => panic!("expected Closed, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cross_origin_endpoint_is_refused() {
    let options = HttpServerOptions {
        sse_endpoint: Some("http://127.0.0.2:9/messages".into()),
        ..HttpServerOptions::default()
    };
    let server = serve(Script::legacy(), options).await;
    let err = SseConnector::new(HttpConfig::new(server.sse_url()))
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::BadEndpoint), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_endpoint_is_not_an_event_stream() {
    // The Streamable HTTP endpoint answers a GET without a session with 400.
    let server = serve(Script::legacy(), HttpServerOptions::default()).await;
    let err = SseConnector::new(HttpConfig::new(server.url()))
        .connect()
        .await
        .unwrap_err();
    assert!(
        matches!(err, TransportError::SseStatus { status: 400, .. }),
        "{err:?}"
    );
}

/// What the session gets for a `server/discover` probe.
async fn probe(script: Script, probe: HttpProbe) -> Inbound {
    let options = HttpServerOptions::default().probe(probe);
    let server = serve(script, options).await;
    let mut conn = HttpConnector::new(HttpConfig::new(server.url()))
        .connect()
        .await
        .unwrap();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": MODERN,
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let mut frame = request(1, "server/discover", json!({"_meta": meta}), Some(MODERN));
    frame.headers = vec![("Mcp-Method".into(), "server/discover".into())];
    conn.outbound.send(frame).await.unwrap();
    next(&mut conn).await
}

fn error_code(error: &Option<bytes::Bytes>) -> Option<i64> {
    let error: Value = serde_json::from_slice(error.as_ref()?).ok()?;
    error["code"].as_i64()
}

fn status_failure(event: Inbound) -> (u16, Option<i64>, Option<String>) {
    match event {
        Inbound::RequestFailed {
            id: 1,
            failure:
                RequestFailure::Status {
                    status,
                    error,
                    www_authenticate,
                },
        } => (status, error_code(&error), www_authenticate),
        other => panic!("expected a status failure, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_legacy_probe_answer_reaches_the_session() {
    let legacy = Script::legacy;
    assert_eq!(
        status_failure(probe(legacy(), HttpProbe::SessionRequired).await),
        (400, Some(-32000), None)
    );
    assert_eq!(
        status_failure(probe(legacy(), HttpProbe::VersionHeaderRejected).await),
        (400, Some(-32000), None)
    );
    assert_eq!(
        status_failure(probe(legacy(), HttpProbe::UnsupportedVersionText).await),
        (400, None, None)
    );
    // No session id was sent, so a 404 is not an expired session.
    assert_eq!(
        status_failure(probe(legacy(), HttpProbe::InvalidSessionText).await),
        (404, None, None)
    );
    assert_eq!(
        status_failure(probe(legacy(), HttpProbe::InvalidRequestNullId).await),
        (400, Some(-32600), None)
    );
    assert_eq!(
        status_failure(probe(legacy(), HttpProbe::EmptyOk).await),
        (200, None, None)
    );
    let challenge =
        r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource""#;
    assert_eq!(
        status_failure(
            probe(
                legacy(),
                HttpProbe::Unauthorized {
                    www_authenticate: challenge.into()
                }
            )
            .await
        ),
        (401, None, Some(challenge.to_owned()))
    );
    // 200 with `-32600` and id null, from the script itself.
    assert_eq!(
        status_failure(
            probe(
                legacy().on_probe(OnProbe::InvalidRequest),
                HttpProbe::Script
            )
            .await
        ),
        (200, Some(-32600), None)
    );
    // 200 with `-32601` for the probe's id is an ordinary answer.
    match probe(legacy(), HttpProbe::MethodNotFound).await {
        Inbound::Frame(bytes) => {
            let frame: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(frame["id"], 1);
            assert_eq!(frame["error"]["code"], -32601);
        }
        other => panic!("expected the error frame, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_server_answers_the_probe() {
    for reply in [ReplyMode::Json, ReplyMode::Sse] {
        let server = serve(Script::dual(), HttpServerOptions::default().reply(reply)).await;
        let mut conn = HttpConnector::new(HttpConfig::new(server.url()))
            .connect()
            .await
            .unwrap();
        let meta = json!({"io.modelcontextprotocol/protocolVersion": MODERN,
                          "io.modelcontextprotocol/clientCapabilities": {}});
        let mut frame = request(1, "server/discover", json!({"_meta": meta}), Some(MODERN));
        frame.headers = vec![("Mcp-Method".into(), "server/discover".into())];
        conn.outbound.send(frame).await.unwrap();
        let reply = next_frame(&mut conn).await;
        assert_eq!(reply["id"], 1);
        assert!(
            reply["result"]["supportedVersions"]
                .as_array()
                .is_some_and(|v| v.contains(&json!(MODERN)))
        );
    }
}
