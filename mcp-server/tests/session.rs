//! Our own client (mcp-session) against the server in-process, in both eras,
//! the way the OpenAPI connector will run it: `serve` on the server end of
//! an in-memory pair behind a `MemoryConnector`.

#[path = "support/common.rs"]
mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcp_session::{CallOptions, Negotiation};
use mcp_types::Era;
use serde_json::json;

const MODES: [(Negotiation, Era); 3] = [
    (Negotiation::Legacy, Era::Legacy),
    (Negotiation::Modern, Era::Modern),
    (Negotiation::Auto, Era::Modern),
];

#[tokio::test]
async fn each_era_negotiates_lists_every_page_and_calls_a_tool() {
    for (mode, era) in MODES {
        let (handler, _seen) = Demo::new();
        let session = ready(connector(handler, config()), mode).await;
        assert_eq!(session.era(), era, "{mode:?}");
        assert_eq!(session.server_info().name, "demo");
        assert_eq!(session.instructions().as_deref(), Some("a test server"));
        assert!(session.server_capabilities().tools.is_some());
        assert!(session.server_capabilities().resources.is_none());

        let first = session.list_tools_page(None).await.unwrap();
        assert_eq!(first.items.len(), PAGE);
        assert_eq!(first.next_cursor.as_deref(), Some("2"));
        let last = session.list_tools_page(Some("4")).await.unwrap();
        assert_eq!(last.items.len(), 1);
        assert_eq!(last.next_cursor, None);
        let all = session.list_tools().await.unwrap();
        let names: Vec<&str> = all.tools().iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, TOOLS, "{mode:?}");

        let result = session
            .call_tool("echo", json!({"text": "hi"}))
            .await
            .unwrap();
        assert_eq!(result.text(), "hi");
        assert!(!result.failed());
        let error = session.list_resources().await.unwrap_err();
        assert!(error.to_string().contains("resources/list"), "{error}");
        session.close().await;
    }
}

#[tokio::test]
async fn progress_reaches_the_caller_before_the_result_in_both_eras() {
    for (mode, _) in MODES {
        let (handler, _seen) = Demo::new();
        let session = ready(connector(handler, config()), mode).await;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let options = CallOptions::new().on_progress(move |p| {
            sink.lock()
                .unwrap()
                .push((p.progress_f64(), p.total_f64(), p.message.clone()));
        });
        let result = session
            .call_tool_with("progress", (), &options)
            .await
            .unwrap();
        assert_eq!(result.text(), "done");
        assert_eq!(
            *seen.lock().unwrap(),
            [
                (Some(1.0), Some(2.0), Some("halfway".to_owned())),
                (Some(2.0), Some(2.0), None),
            ],
            "{mode:?}"
        );
        assert_eq!(session.stats().stray_progress, 0);
        session.close().await;
    }
}

#[tokio::test]
async fn a_cancelled_call_is_seen_by_the_handler_and_never_answered() {
    for (mode, _) in MODES {
        let (handler, mut seen) = Demo::new();
        let session = Arc::new(ready(connector(handler, config()), mode).await);
        let caller = Arc::clone(&session);
        let call = tokio::spawn(async move { caller.call_tool("slow", ()).await });
        let Some(Seen::Started(id)) = seen.recv().await else {
            panic!("the slow call did not start");
        };
        // Dropping the call's future sends `notifications/cancelled`.
        call.abort();
        let cancelled = tokio::time::timeout(Duration::from_secs(5), seen.recv())
            .await
            .expect("the handler sees the cancellation");
        assert_eq!(cancelled, Some(Seen::Cancelled(id)), "{mode:?}");
        // A round trip after the handler returned: its answer would have
        // arrived before this one.
        session.list_tools_page(None).await.unwrap();
        let stats = session.stats();
        assert_eq!(stats.late_responses, 0, "{mode:?}: {stats:?}");
        assert_eq!(stats.violations, 0, "{mode:?}: {stats:?}");
        session.shutdown().await;
    }
}

#[tokio::test]
async fn closing_the_client_cancels_work_in_flight_and_ends_the_server() {
    let (handler, mut seen) = Demo::new();
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server);
    let serving = tokio::spawn(mcp_server::serve(
        server_read,
        server_write,
        handler,
        config(),
    ));
    let mut wire = {
        let (read, write) = tokio::io::split(client);
        (tokio::io::BufReader::new(read), write)
    };
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let meta = modern_meta();
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "slow", "_meta": meta}});
    wire.1
        .write_all(format!("{call}\n").as_bytes())
        .await
        .unwrap();
    assert!(matches!(seen.recv().await, Some(Seen::Started(_))));
    wire.1.shutdown().await.unwrap();
    assert!(matches!(seen.recv().await, Some(Seen::Cancelled(_))));
    let ended = tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("serve returns once the input ends");
    ended.unwrap().unwrap();
    // Nothing was answered for the call, and the output is closed.
    let mut rest = String::new();
    wire.0.read_line(&mut rest).await.unwrap();
    assert_eq!(rest, "");
}

#[tokio::test]
async fn a_handler_behind_dyn_is_served_on_a_task() {
    let (handler, _seen) = Demo::new();
    let handler: Arc<dyn mcp_server::ServerHandler> = handler;
    let connector = mcp_transport::MemoryConnector::new(move |end| {
        let handler = Arc::clone(&handler);
        tokio::spawn(mcp_server::serve(end.input, end.output, handler, config()));
    });
    let session = ready(Arc::new(connector), Negotiation::Auto).await;
    assert_eq!(
        session.list_tools().await.unwrap().tools().len(),
        TOOLS.len()
    );
    session.close().await;
}
