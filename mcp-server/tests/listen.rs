//! Resource subscriptions on 2026-07-28 `subscriptions/listen` streams: the
//! handler's `subscribe` takes each URI a stream asks for before the
//! stream is acknowledged (with the URIs it took), `resources/updated`
//! reaches exactly the streams subscribed to its URI, and a URI is let go
//! (`unsubscribe`) once no stream of the connection holds it.

#[path = "support/common.rs"]
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use mcp_server::{
    BoxFuture, HandlerResult, RequestContext, ServerConfig, ServerHandle, ServerHandler, serve_with,
};
use mcp_session::{Negotiation, SessionConfig, SubscriptionEnd, SubscriptionEvent};
use mcp_transport::{Connector, MemoryConnector};
use mcp_types::notifications::ResourceUpdated;
use mcp_types::{
    CallToolParams, CallToolResult, Cursor, ErrorObject, ListToolsResult, ResourceUpdatedParams,
    ResourcesCapability, ServerCapabilities, SubscribeParams, SubscriptionFilter,
    UnsubscribeParams, error_codes,
};
use tokio::sync::mpsc;

const A: &str = "file:///ok/a";
const B: &str = "file:///ok/b";
const REFUSED: &str = "file:///secret";

/// Serves resource subscriptions: takes every URI under `file:///ok/`,
/// refuses the rest; reports each `subscribe` and `unsubscribe`. Declares
/// the tasks extension too (see its `watch_tasks`).
struct Watcher {
    calls: mpsc::UnboundedSender<(&'static str, String)>,
}

impl ServerHandler for Watcher {
    fn capabilities(&self) -> ServerCapabilities {
        let mut extensions = mcp_types::CapabilityMap::new();
        extensions.insert(mcp_types::TASKS_EXTENSION.into(), serde_json::json!({}));
        ServerCapabilities {
            tools: Some(Default::default()),
            resources: Some(ResourcesCapability {
                subscribe: Some(true),
                ..Default::default()
            }),
            extensions: Some(extensions),
            ..Default::default()
        }
    }

    /// Watches the task ids starting with `mine-` (reporting what it was
    /// asked, and when the stream's context ends).
    fn watch_tasks(
        &self,
        task_ids: Vec<String>,
        ctx: RequestContext,
    ) -> BoxFuture<'_, Vec<String>> {
        let _ = self.calls.send(("watch", task_ids.join(",")));
        let calls = self.calls.clone();
        tokio::spawn(async move {
            ctx.cancelled().await;
            let _ = calls.send(("ended", String::new()));
        });
        Box::pin(async move {
            // "also-" is never asked for: the driver keeps only what was.
            let mut mine: Vec<String> = task_ids
                .into_iter()
                .filter(|t| t.starts_with("mine-"))
                .collect();
            mine.push("also-unasked".into());
            mine
        })
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

    fn subscribe(
        &self,
        params: SubscribeParams,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<()>> {
        let _ = self.calls.send(("subscribe", params.uri.clone()));
        Box::pin(async move {
            if params.uri.starts_with("file:///ok/") {
                Ok(())
            } else {
                Err(ErrorObject::new(
                    error_codes::INVALID_PARAMS,
                    "no such resource",
                ))
            }
        })
    }

    fn unsubscribe(
        &self,
        params: UnsubscribeParams,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<()>> {
        let _ = self.calls.send(("unsubscribe", params.uri));
        Box::pin(async { Ok(()) })
    }
}

type Calls = mpsc::UnboundedReceiver<(&'static str, String)>;

/// A 2026-07-28 session to a `Watcher`, its handle and its calls.
async fn watched() -> (
    mcp_session::Session<mcp_session::Ready>,
    ServerHandle,
    Calls,
) {
    let (calls, seen) = mpsc::unbounded_channel();
    let watcher = Arc::new(Watcher { calls });
    let (session, handle) = connected(watcher, session_config()).await;
    (session, handle, seen)
}

/// A 2026-07-28 session (made with `config`) to `handler`, and the
/// handle of its connection.
async fn connected<H: ServerHandler>(
    handler: Arc<H>,
    config: SessionConfig,
) -> (mcp_session::Session<mcp_session::Ready>, ServerHandle) {
    let (handles, mut handle) = mpsc::unbounded_channel();
    let connector = MemoryConnector::new(move |end| {
        let (handle, outbox) = ServerHandle::new();
        let _ = handles.send(handle);
        tokio::spawn(serve_with(
            end.input,
            end.output,
            Arc::clone(&handler),
            ServerConfig::new("watcher", "1.0"),
            outbox,
        ));
    });
    let connector: Arc<dyn Connector> = Arc::new(connector);
    let session = mcp_session::Session::connect(connector, config)
        .await
        .unwrap()
        .negotiate(Negotiation::Modern)
        .await
        .unwrap();
    (session, handle.recv().await.unwrap())
}

fn task(id: &str) -> mcp_types::Task {
    serde_json::from_value(serde_json::json!({
        "taskId": id, "status": "working", "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": null
    }))
    .unwrap()
}

#[tokio::test]
async fn a_stream_asking_for_tasks_gets_the_states_of_those_the_handler_watches() {
    let (calls, mut seen) = mpsc::unbounded_channel();
    let config = SessionConfig {
        accept_tasks: true,
        ..session_config()
    };
    let (session, handle) = connected(Arc::new(Watcher { calls }), config).await;
    let filter = SubscriptionFilter {
        task_ids: Some(vec!["mine-1".into(), "theirs".into(), "mine-1".into()]),
        ..Default::default()
    };
    let mut stream = session.subscribe(filter).await.unwrap();
    // The handler is asked once per id.
    assert_eq!(
        next_call(&mut seen).await,
        ("watch", "mine-1,theirs".to_owned())
    );
    let Some(SubscriptionEvent::Acknowledged { accepted, refused }) = stream.next().await else {
        panic!("an acknowledgement first");
    };
    assert_eq!(accepted.task_ids, Some(vec!["mine-1".to_owned()]));
    assert_eq!(refused.task_ids, Some(vec!["theirs".to_owned()]));
    // A state of a watched task reaches the stream; another task's none.
    let delivered = handle
        .notify::<mcp_types::notifications::Task>(task("theirs"))
        .await
        .unwrap();
    assert_eq!(delivered.streams, 0);
    let delivered = handle
        .notify::<mcp_types::notifications::Task>(task("mine-1"))
        .await
        .unwrap();
    assert_eq!(delivered.streams, 1);
    let event = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .unwrap();
    let Some(SubscriptionEvent::Task(got)) = event else {
        panic!("the task's state, not {event:?}");
    };
    assert_eq!(got.task_id, "mine-1");
    // The stream's end ends the handler's watch.
    drop(stream);
    assert_eq!(next_call(&mut seen).await, ("ended", String::new()));
}

fn resources(uris: &[&str]) -> SubscriptionFilter {
    SubscriptionFilter {
        resource_subscriptions: Some(uris.iter().map(|u| (*u).to_owned()).collect()),
        ..Default::default()
    }
}

async fn next_call(calls: &mut Calls) -> (&'static str, String) {
    tokio::time::timeout(Duration::from_secs(5), calls.recv())
        .await
        .expect("a call in time")
        .expect("the handler lives")
}

async fn updated(handle: &ServerHandle, uri: &str) -> usize {
    handle
        .notify::<ResourceUpdated>(ResourceUpdatedParams::new(uri.to_owned()))
        .await
        .unwrap()
        .streams
}

#[tokio::test]
async fn a_listen_stream_gets_updates_of_the_resources_the_handler_took_until_it_ends() {
    let (session, handle, mut calls) = watched().await;
    let mut first = session
        .subscribe(resources(&[A, B, REFUSED, A]))
        .await
        .unwrap();
    let Some(SubscriptionEvent::Acknowledged { accepted, refused }) = first.next().await else {
        panic!("the stream is acknowledged first");
    };
    assert_eq!(
        accepted.resource_subscriptions,
        Some(vec![A.to_owned(), B.to_owned()])
    );
    assert_eq!(
        refused.resource_subscriptions,
        Some(vec![REFUSED.to_owned()])
    );
    // Each distinct URI went through the handler once.
    for uri in [A, B, REFUSED] {
        assert_eq!(next_call(&mut calls).await, ("subscribe", uri.to_owned()));
    }

    assert_eq!(updated(&handle, A).await, 1);
    assert!(matches!(
        first.next().await,
        Some(SubscriptionEvent::ResourceUpdated { uri }) if uri == A
    ));
    // Not subscribed (refused, or never asked): delivered nowhere.
    assert_eq!(updated(&handle, REFUSED).await, 0);
    assert_eq!(updated(&handle, "file:///ok/other").await, 0);

    // A second stream holds A too: ending the first lets go of B only.
    let mut second = session.subscribe(resources(&[A])).await.unwrap();
    assert!(matches!(
        second.next().await,
        Some(SubscriptionEvent::Acknowledged { .. })
    ));
    assert_eq!(next_call(&mut calls).await, ("subscribe", A.to_owned()));
    drop(first);
    assert_eq!(next_call(&mut calls).await, ("unsubscribe", B.to_owned()));
    assert_eq!(updated(&handle, A).await, 1);
    assert!(matches!(
        second.next().await,
        Some(SubscriptionEvent::ResourceUpdated { uri }) if uri == A
    ));
    drop(second);
    assert_eq!(next_call(&mut calls).await, ("unsubscribe", A.to_owned()));
    assert_eq!(updated(&handle, A).await, 0);
    session.close().await;
}

#[tokio::test]
async fn too_many_resources_or_tasks_on_one_stream_are_refused_by_name() {
    let (calls_tx, mut calls) = mpsc::unbounded_channel();
    let config = SessionConfig {
        accept_tasks: true,
        ..session_config()
    };
    let (session, _handle) = connected(Arc::new(Watcher { calls: calls_tx }), config).await;
    let many = |prefix: &str| -> Vec<String> { (0..65).map(|i| format!("{prefix}{i}")).collect() };
    for filter in [
        SubscriptionFilter {
            resource_subscriptions: Some(many("file:///ok/")),
            ..Default::default()
        },
        SubscriptionFilter {
            task_ids: Some(many("mine-")),
            ..Default::default()
        },
    ] {
        let mut stream = session.subscribe(filter).await.unwrap();
        let ended = tokio::time::timeout(Duration::from_secs(5), stream.next())
            .await
            .expect("the stream ends in time");
        assert!(
            matches!(
                ended,
                Some(SubscriptionEvent::Ended(SubscriptionEnd::Failed { code }))
                    if code == Some(error_codes::INVALID_PARAMS)
            ),
            "{ended:?}"
        );
    }
    assert!(
        calls.try_recv().is_err(),
        "nothing was subscribed or watched"
    );
    session.close().await;
}

/// Over Streamable HTTP a 2026-07-28 listen stream is a connection of its
/// own, cancelled by closing it: when the client drops it, the connection
/// ends and its resources are let go. (Keep-alive comments every 20 ms run
/// meanwhile, and the client reads past them.)
// Over HTTP: only with the `http` feature, so the rest of this file runs
// without it.
#[cfg(feature = "http")]
#[tokio::test]
async fn a_listen_stream_a_client_drops_over_http_lets_its_resources_go() {
    use mcp_server::http::{HttpConfig, HttpServer};
    let config = HttpConfig::default().keep_alive(Some(Duration::from_millis(20)));
    let endpoint = HttpServer::bind("127.0.0.1:0".parse().unwrap(), config)
        .await
        .unwrap();
    let url = endpoint.url();
    let (calls, mut seen) = mpsc::unbounded_channel();
    let (handles, mut handle) = mpsc::unbounded_channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(endpoint.serve(
        move |connection: mcp_server::http::HostConnection| {
            let _ = handles.send(connection.handle.clone());
            Arc::new(Watcher {
                calls: calls.clone(),
            })
        },
        ServerConfig::new("watcher", "1.0"),
        async move {
            let _ = stopped.await;
        },
    ));
    let connector: Arc<dyn Connector> = Arc::new(mcp_transport::HttpConnector::new(
        mcp_transport::HttpConfig::new(&url),
    ));
    let session = mcp_session::Session::connect(connector, session_config())
        .await
        .unwrap()
        .negotiate(Negotiation::Modern)
        .await
        .unwrap();
    let mut stream = session.subscribe(resources(&[A])).await.unwrap();
    let Some(SubscriptionEvent::Acknowledged { accepted, .. }) = stream.next().await else {
        panic!("the stream is acknowledged first");
    };
    assert_eq!(accepted.resource_subscriptions, Some(vec![A.to_owned()]));
    assert_eq!(next_call(&mut seen).await, ("subscribe", A.to_owned()));
    // The listen's connection is the last one opened.
    let mut listen = None;
    while let Ok(h) = handle.try_recv() {
        listen = Some(h);
    }
    let listen = listen.expect("the listen's connection");
    assert_eq!(updated(&listen, A).await, 1);
    assert!(matches!(
        stream.next().await,
        Some(SubscriptionEvent::ResourceUpdated { uri }) if uri == A
    ));
    drop(stream);
    assert_eq!(next_call(&mut seen).await, ("unsubscribe", A.to_owned()));
    tokio::time::timeout(Duration::from_secs(5), listen.closed())
        .await
        .expect("the listen's connection ends");
    session.close().await;
    let _ = stop.send(());
    let _ = served.await;
}
