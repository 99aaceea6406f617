//! The application speaking first through a `ServerHandle`: `list_changed`
//! to a legacy session and to 2026-07-28 listen streams, requests to the
//! client answered by our session's handlers, refused by capability, timed
//! out, and given up.

#[path = "support/common.rs"]
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use mcp_server::{
    BoxFuture, HandlerResult, RequestContext, ServerConfig, ServerError, ServerHandle,
    ServerHandler, serve_with,
};
use mcp_session::{ClientHandlers, Negotiation, SessionConfig, SessionEvent, SubscriptionEvent};
use mcp_transport::{Connector, MemoryConnector};
use mcp_types::notifications::ToolListChanged;
use mcp_types::requests::{CreateMessage, ListRoots};
use mcp_types::{
    CallToolParams, CallToolResult, CreateMessageParams, CreateMessageResult, Cursor,
    ListToolsResult, NotificationParams, RequestParams, ServerCapabilities, SubscriptionFilter,
    ToolsCapability,
};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// No tools; announces that its list changes.
struct Announcer;

impl ServerHandler for Announcer {
    fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn list_tools(
        &self,
        _cursor: Option<Cursor>,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ListToolsResult>> {
        Box::pin(async { Ok(ListToolsResult::default()) })
    }

    fn call_tool(
        &self,
        _params: CallToolParams,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<CallToolResult>> {
        Box::pin(async { Ok(CallToolResult::default()) })
    }
}

/// Each connect serves `Announcer` with a fresh handle, handed to the test.
fn announcing() -> (Arc<dyn Connector>, mpsc::UnboundedReceiver<ServerHandle>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let connector = MemoryConnector::new(move |end| {
        let (handle, outbox) = ServerHandle::new();
        let _ = tx.send(handle);
        tokio::spawn(serve_with(
            end.input,
            end.output,
            Arc::new(Announcer),
            ServerConfig::new("announcer", "1.0"),
            outbox,
        ));
    });
    (Arc::new(connector), rx)
}

async fn connect(
    connector: Arc<dyn Connector>,
    handlers: ClientHandlers,
    mode: Negotiation,
) -> mcp_session::Session<mcp_session::Ready> {
    let config = SessionConfig {
        handlers,
        ..session_config()
    };
    let session = mcp_session::Session::connect(connector, config)
        .await
        .unwrap();
    session.negotiate(mode).await.unwrap()
}

#[tokio::test]
async fn a_list_change_reaches_a_legacy_session_and_the_modern_streams_that_asked() {
    let (connector, mut handles) = announcing();
    let mut legacy = connect(
        Arc::clone(&connector),
        ClientHandlers::new(),
        Negotiation::Legacy,
    )
    .await;
    let legacy_handle = handles.recv().await.unwrap();
    let mut events = legacy.take_events().unwrap();
    assert!(legacy_handle.initialized().await.is_some());
    let delivered = legacy_handle
        .notify::<ToolListChanged>(NotificationParams::default())
        .await
        .unwrap();
    assert!(delivered.session);
    assert_eq!(delivered.streams, 0);
    let event = tokio::time::timeout(Duration::from_secs(5), events.next())
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(&event, SessionEvent::Notification { method, .. } if method == "notifications/tools/list_changed"),
        "{event:?}"
    );

    let modern = connect(connector, ClientHandlers::new(), Negotiation::Modern).await;
    let modern_handle = handles.recv().await.unwrap();
    // Nothing listens yet: the change goes nowhere, and that is no error.
    let nowhere = modern_handle
        .notify::<ToolListChanged>(NotificationParams::default())
        .await
        .unwrap();
    assert!(!nowhere.anywhere());
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        prompts_list_changed: Some(true),
        ..Default::default()
    };
    let mut stream = modern.subscribe(filter).await.unwrap();
    let Some(SubscriptionEvent::Acknowledged { accepted, refused }) = stream.next().await else {
        panic!("the stream is acknowledged first");
    };
    assert_eq!(accepted.tools_list_changed, Some(true));
    // Prompts were not declared, so their changes are not honoured.
    assert_eq!(refused.prompts_list_changed, Some(true));
    assert_eq!(modern_handle.peer().streams, 1);
    let delivered = modern_handle
        .notify::<ToolListChanged>(NotificationParams::default())
        .await
        .unwrap();
    assert_eq!(delivered.streams, 1);
    assert!(!delivered.session);
    assert!(matches!(
        stream.next().await,
        Some(SubscriptionEvent::ToolsListChanged)
    ));
    // Dropping the subscription cancels the stream; the driver forgets it.
    drop(stream);
    let after = tokio::time::timeout(
        Duration::from_secs(5),
        modern_handle.peer_until(|p| p.streams == 0),
    )
    .await
    .expect("the stream closes");
    assert!(!after.closed);
    modern.close().await;
    legacy.close().await;
}

#[tokio::test]
async fn a_request_is_answered_by_the_clients_handler_and_refused_by_name_without_it() {
    let (connector, mut handles) = announcing();
    let handlers = ClientHandlers::new().on_sampling(|params: CreateMessageParams| async move {
        Ok(CreateMessageResult::text(
            "test-model",
            format!("{} messages", params.messages.len()),
        ))
    });
    let with = connect(Arc::clone(&connector), handlers, Negotiation::Legacy).await;
    let handle = handles.recv().await.unwrap();
    let session = handle.initialized().await.unwrap();
    assert!(session.capabilities.sampling.is_some());
    let params: CreateMessageParams = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 10,
    }))
    .unwrap();
    let answer = handle
        .request::<CreateMessage>(params.clone(), Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(answer.model, "test-model");
    assert_eq!(
        serde_json::to_value(&answer.content).unwrap()["text"],
        "1 messages"
    );

    let without = connect(connector, ClientHandlers::new(), Negotiation::Legacy).await;
    let bare = handles.recv().await.unwrap();
    bare.initialized().await.unwrap();
    let refusal = bare
        .request::<CreateMessage>(params, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(
        matches!(
            refusal,
            ServerError::ClientLacksCapability {
                capability: "sampling"
            }
        ),
        "{refusal:?}"
    );
    with.close().await;
    without.close().await;
    // Once the connection is gone, the handle says so.
    tokio::time::timeout(Duration::from_secs(5), bare.closed())
        .await
        .unwrap();
    assert!(matches!(
        bare.notify::<ToolListChanged>(NotificationParams::default())
            .await,
        Err(ServerError::Closed)
    ));
}

#[tokio::test]
async fn a_request_not_answered_in_time_fails_and_one_given_up_is_cancelled() {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server);
    let (client_read, mut client_write) = tokio::io::split(client);
    let (handle, outbox) = ServerHandle::new();
    let served = tokio::spawn(serve_with(
        server_read,
        server_write,
        Arc::new(Announcer),
        ServerConfig::new("announcer", "1.0"),
        outbox,
    ));
    let mut lines = BufReader::new(client_read).lines();
    send(
        &mut client_write,
        json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {"roots": {}},
                       "clientInfo": {"name": "raw", "version": "1"}},
        }),
    )
    .await;
    send(
        &mut client_write,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(recv(&mut lines).await["id"], 0);
    handle.initialized().await.unwrap();

    // Never answered: the deadline fails it and the client is told.
    let late = handle
        .request::<ListRoots>(RequestParams::default(), Duration::from_millis(100))
        .await
        .unwrap_err();
    assert!(
        matches!(
            late,
            ServerError::NoAnswer(mcp_server::ResponseError::Timeout)
        ),
        "{late:?}"
    );
    let asked = recv(&mut lines).await;
    assert_eq!(asked["method"], "roots/list");
    let cancelled = recv(&mut lines).await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], asked["id"]);

    // Given up by its caller: cancelled at once, long before its deadline.
    let given_up = tokio::time::timeout(
        Duration::from_millis(50),
        handle.request::<ListRoots>(RequestParams::default(), Duration::from_secs(60)),
    )
    .await;
    assert!(given_up.is_err());
    let asked = recv(&mut lines).await;
    let cancelled = recv(&mut lines).await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], asked["id"]);
    client_write.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("the server ends with its input")
        .unwrap()
        .unwrap();
    assert!(handle.peer().closed);
}

async fn send(write: &mut (impl tokio::io::AsyncWrite + Unpin), frame: serde_json::Value) {
    write
        .write_all(format!("{frame}\n").as_bytes())
        .await
        .unwrap();
}

async fn recv(
    lines: &mut tokio::io::Lines<BufReader<impl tokio::io::AsyncRead + Unpin>>,
) -> serde_json::Value {
    let line = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
        .await
        .expect("the server writes in time")
        .unwrap()
        .expect("the server's output is open");
    serde_json::from_str(&line).unwrap()
}
