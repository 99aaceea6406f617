//! A server flooding its client with notifications: what is dropped is
//! counted, calls are still answered, and a `list_changed` is never lost.
//! Every assertion is a count; nothing here is timed.

#[path = "support/common.rs"]
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use mcp_session::{Negotiation, NotificationBudget, SessionConfig, SessionEvent, SessionEvents};
use mcp_testkit::{Behavior, ListKind, Script};
use mcp_types::Notification as _;
use mcp_types::notifications::{LoggingMessage, ToolListChanged};
use serde_json::json;

fn flooder(count: u64) -> Script {
    Script::legacy()
        .tool("flood", Behavior::FloodLogs { count })
        .tool("echo", Behavior::Echo)
        .tool(
            "change",
            Behavior::ChangeList {
                list: ListKind::Tools,
            },
        )
}

fn text(result: &mcp_types::CallToolResult) -> String {
    match result.content.first() {
        Some(mcp_types::ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("no text block: {other:?}"),
    }
}

/// The next event; a stream that stays silent fails the test instead of
/// hanging it.
async fn next(events: &mut SessionEvents) -> SessionEvent {
    tokio::time::timeout(Duration::from_secs(30), events.next())
        .await
        .expect("an event arrives")
        .expect("the session is alive")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_messages_over_the_budget_are_dropped_unparsed_and_counted() {
    let config = SessionConfig {
        notification_budget: NotificationBudget::new(0, 100),
        ..quick_config()
    };
    let connector = Arc::new(stdio(&flooder(1000), None));
    let mut session = ready(connector, config, Negotiation::Legacy).await;
    let mut events = session.take_events().unwrap();
    let result = session.call_tool("flood", json!({})).await.unwrap();
    assert_eq!(text(&result), "flooded 1000");
    let stats = session.stats();
    assert_eq!(stats.notifications_over_budget, 900);
    assert_eq!(stats.log_messages_discarded, 0);
    // The host gets the hundred within the budget, then hears of the drops.
    let mut logs = 0;
    loop {
        match next(&mut events).await {
            SessionEvent::Notification { method, .. } if method == LoggingMessage::METHOD => {
                logs += 1;
            }
            SessionEvent::NotificationsDropped { over_budget } => {
                assert_eq!(over_budget, 1, "reported at the first drop");
                break;
            }
            other => panic!("unexpected event {other:?}"),
        }
    }
    assert_eq!(logs, 100);
    assert_eq!(session.dropped_events(), 0);
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unwanted_log_messages_are_discarded_and_a_flooded_session_still_answers() {
    let config = SessionConfig {
        discard_log_messages: true,
        ..quick_config()
    };
    let connector = Arc::new(stdio(&flooder(200_000), None));
    let session = ready(connector, config, Negotiation::Legacy).await;
    let calls = async {
        for i in 0..50 {
            let r = session
                .call_tool("echo", json!({ "text": format!("call {i}") }))
                .await
                .unwrap();
            assert_eq!(text(&r), format!("call {i}"));
        }
    };
    let (flooded, ()) = tokio::join!(session.call_tool("flood", json!({})), calls);
    assert_eq!(text(&flooded.unwrap()), "flooded 200000");
    let stats = session.stats();
    assert_eq!(stats.log_messages_discarded, 200_000);
    assert_eq!(stats.notifications_over_budget, 0);
    assert_eq!(stats.violations, 0);
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_changed_that_finds_the_event_queue_full_waits_and_later_ones_merge_into_it() {
    let config = SessionConfig {
        event_queue: 4,
        notification_budget: NotificationBudget::unlimited(),
        ..quick_config()
    };
    let connector = Arc::new(stdio(&flooder(1000), None));
    let mut session = ready(connector, config, Negotiation::Legacy).await;
    let mut events = session.take_events().unwrap();
    // Nobody reads events meanwhile: four log messages fill the queue, the
    // rest are dropped, and both list changes find it full.
    let flooded = session.call_tool("flood", json!({})).await.unwrap();
    assert_eq!(text(&flooded), "flooded 1000");
    for _ in 0..2 {
        let changed = session.call_tool("change", json!({})).await.unwrap();
        assert_eq!(text(&changed), "changed tools");
    }
    assert_eq!(session.dropped_events(), 996);
    assert_eq!(session.stats().list_changed_coalesced, 1);
    let mut seen = Vec::new();
    loop {
        match next(&mut events).await {
            SessionEvent::Notification { method, .. } => {
                let done = method == ToolListChanged::METHOD;
                seen.push(method);
                if done {
                    break;
                }
            }
            other => panic!("unexpected event {other:?}"),
        }
    }
    let logs = seen.iter().filter(|m| *m == LoggingMessage::METHOD).count();
    assert_eq!((logs, seen.len()), (4, 5), "{seen:?}");
    // One list change, after the four: nothing else waits.
    assert!(events.try_next().is_none());
    session.shutdown().await;
}
