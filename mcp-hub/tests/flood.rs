//! A server flooding the hub with log messages: counted in its status and
//! events, its own calls and the other servers' still answered, and its
//! tool list changes still followed. Every assertion is a count.

#[path = "support/common.rs"]
mod common;

use std::time::Duration;

use common::*;
use mcp_hub::{Adoption, Hub, HubConfig, HubEvent, NotificationBudget, RestartPolicy, ServerSpec};
use mcp_session::Negotiation;
use mcp_testkit::{Behavior, ListKind, Script, ToolSpec};
use mcp_types::LoggingLevel;
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
        .tool_spec(ToolSpec::new("late", Behavior::Echo).appearing_at_change(1))
}

fn spec(name: &str, script: &Script) -> ServerSpec {
    ServerSpec::new(name, stdio(script))
        .negotiation(Negotiation::Legacy)
        .restart(RestartPolicy::Never)
        .session(quick_session())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_messages_beyond_the_budget_or_unasked_for_are_dropped_and_counted() {
    let hub = Hub::builder(HubConfig::default())
        .server(
            spec("wanted", &flooder(1000))
                .log_level(LoggingLevel::Debug)
                .notification_budget(NotificationBudget::new(0, 100)),
        )
        .server(spec("unwanted", &flooder(1000)))
        .start()
        .await
        .unwrap();
    let mut events = hub.take_events().unwrap();
    for server in ["wanted", "unwanted"] {
        let r = hub.call(&format!("{server}/flood"), ()).await.unwrap();
        assert_eq!(first_text(&r), "flooded 1000");
    }
    let wanted = hub.status("wanted").unwrap();
    assert_eq!(wanted.notifications_over_budget, 900);
    assert_eq!(wanted.log_messages_discarded, 0);
    let unwanted = hub.status("unwanted").unwrap();
    assert_eq!(unwanted.notifications_over_budget, 0);
    assert_eq!(unwanted.log_messages_discarded, 1000);
    // The host gets the hundred within the budget, then hears of the drops.
    let mut logs = 0;
    let reported = wait_for(&mut events, Duration::from_secs(30), |e| match e {
        HubEvent::ServerLog { server, .. } => {
            assert_eq!(
                server.as_str(),
                "wanted",
                "unasked-for messages never reach the host"
            );
            logs += 1;
            None
        }
        HubEvent::NotificationsDropped {
            server,
            over_budget,
        } => {
            assert_eq!(server.as_str(), "wanted");
            Some(*over_budget)
        }
        _ => None,
    })
    .await;
    assert_eq!(reported, 1, "reported at the first drop");
    assert_eq!(logs, 100);
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_server_answers_its_calls_and_the_others_answer_theirs() {
    let hub = Hub::builder(HubConfig::default())
        .server(spec("noisy", &flooder(200_000)))
        .server(spec("quiet", &flooder(0)))
        .start()
        .await
        .unwrap();
    let calls = async {
        for i in 0..50 {
            for server in ["noisy", "quiet"] {
                let text = format!("{server} {i}");
                let r = hub
                    .call(&format!("{server}/echo"), json!({ "text": text }))
                    .await
                    .unwrap();
                assert_eq!(first_text(&r), text);
            }
        }
    };
    let (flooded, ()) = tokio::join!(hub.call("noisy/flood", ()), calls);
    assert_eq!(first_text(&flooded.unwrap()), "flooded 200000");
    assert_eq!(hub.status("noisy").unwrap().log_messages_discarded, 200_000);
    assert_eq!(hub.status("quiet").unwrap().log_messages_discarded, 0);
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_change_in_the_middle_of_a_flood_is_followed() {
    let hub = Hub::builder(HubConfig::default())
        .server(spec("s", &flooder(100_000)).adoption(Adoption::Automatic))
        .start()
        .await
        .unwrap();
    let mut events = hub.take_events().unwrap();
    assert!(!hub.namespace().tools().iter().any(|t| t.name() == "late"));
    let (flooded, changed) = tokio::join!(hub.call("s/flood", ()), hub.call("s/change", ()));
    assert_eq!(first_text(&flooded.unwrap()), "flooded 100000");
    assert_eq!(first_text(&changed.unwrap()), "changed tools");
    wait_for(&mut events, Duration::from_secs(30), |e| match e {
        HubEvent::SnapshotAdopted { server, .. } if server.as_str() == "s" => Some(()),
        _ => None,
    })
    .await;
    assert!(
        hub.namespace().tools().iter().any(|t| t.name() == "late"),
        "the tool that appeared with the change is published"
    );
    hub.shutdown().await;
}
