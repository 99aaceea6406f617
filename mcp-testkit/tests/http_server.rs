//! The HTTP fake server seen from a bare HTTP/1.1 client (no MCP client):
//! its sessions, its 2026 header checks, and its refusals.

use std::time::Duration;

use mcp_testkit::http::{HEADER_MISMATCH, ReplyMode};
use mcp_testkit::{Behavior, HttpFakeServer, HttpServerOptions, RunningHttpServer, Script};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One HTTP/1.1 exchange on a fresh connection (`Connection: close`).
async fn exchange(
    server: &RunningHttpServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
        server.addr(),
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("the server answers and closes")
        .unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head[9..12].parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_owned())
}

fn json_body(body: &str) -> Value {
    serde_json::from_str(body).unwrap()
}

#[tokio::test]
async fn initialize_opens_a_session_that_later_requests_need() {
    let server = HttpFakeServer::start(Script::legacy(), HttpServerOptions::default())
        .await
        .unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}});
    let (status, head, body) = exchange(
        &server,
        "POST",
        "/mcp",
        &[("Content-Type", "application/json")],
        &init.to_string(),
    )
    .await;
    assert_eq!(status, 200);
    assert!(head.contains("mcp-session-id: session-1"), "{head}");
    assert_eq!(json_body(&body)["result"]["protocolVersion"], "2025-06-18");

    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let (status, _, body) = exchange(&server, "POST", "/mcp", &[], &list).await;
    assert_eq!(status, 400);
    assert_eq!(json_body(&body)["error"]["code"], -32000);
    assert_eq!(json_body(&body)["id"], Value::Null);

    let (status, _, _) = exchange(
        &server,
        "POST",
        "/mcp",
        &[("Mcp-Session-Id", "nope")],
        &list,
    )
    .await;
    assert_eq!(status, 404);

    let (status, _, _) = exchange(
        &server,
        "DELETE",
        "/mcp",
        &[("Mcp-Session-Id", "session-1")],
        "",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(server.session_count(), 0);
    assert_eq!(server.requests.with_method("DELETE").len(), 1);
}

#[tokio::test]
async fn modern_requests_without_matching_headers_get_header_mismatch() {
    let schema = json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "text": {"type": "string"}}});
    let tool = json!({"name": "echo", "inputSchema": schema});
    let server = HttpFakeServer::start(
        Script::modern().tool_json(tool, Behavior::Echo),
        HttpServerOptions::default().reply(ReplyMode::Json),
    )
    .await
    .unwrap();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"region": "Zürich", "text": "hi"}, "_meta": meta}})
    .to_string();
    let base = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
    ];
    // Missing Mcp-Param-Region.
    let (status, _, body) = exchange(&server, "POST", "/mcp", &base, &call).await;
    assert_eq!(status, 400);
    assert_eq!(json_body(&body)["error"]["code"], HEADER_MISMATCH);
    assert_eq!(json_body(&body)["id"], 5);
    // A plain value that is not the body's.
    let mut wrong = base.to_vec();
    wrong.push(("Mcp-Param-Region", "Zurich"));
    let (status, _, _) = exchange(&server, "POST", "/mcp", &wrong, &call).await;
    assert_eq!(status, 400);
    // The Base64 sentinel form of "Zürich".
    let mut right = base.to_vec();
    right.push(("Mcp-Param-Region", "=?base64?WsO8cmljaA==?="));
    let (status, _, body) = exchange(&server, "POST", "/mcp", &right, &call).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_body(&body)["result"]["content"][0]["text"], "hi");
    // The modern era has no GET stream without a session.
    let (status, _, _) = exchange(
        &server,
        "GET",
        "/mcp",
        &[("Accept", "text/event-stream")],
        "",
    )
    .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn a_second_get_stream_is_a_conflict_and_get_can_be_refused() {
    let server = HttpFakeServer::start(Script::legacy(), HttpServerOptions::default())
        .await
        .unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}});
    exchange(&server, "POST", "/mcp", &[], &init.to_string()).await;
    // Hold one GET stream open.
    let mut held = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    held.write_all(
        format!(
            "GET /mcp HTTP/1.1\r\nHost: {}\r\nMcp-Session-Id: session-1\r\n\r\n",
            server.addr()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut first = [0u8; 12];
    held.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let (status, _, _) = exchange(
        &server,
        "GET",
        "/mcp",
        &[("Mcp-Session-Id", "session-1")],
        "",
    )
    .await;
    assert_eq!(status, 409);

    let refusing = HttpFakeServer::start(
        Script::legacy(),
        HttpServerOptions {
            get_stream: false,
            allow_delete: false,
            ..HttpServerOptions::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(exchange(&refusing, "GET", "/mcp", &[], "").await.0, 405);
    assert_eq!(exchange(&refusing, "DELETE", "/mcp", &[], "").await.0, 405);
}
