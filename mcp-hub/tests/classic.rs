//! The classic scenario: `notes` (search, create), `files` (read, search)
//! and `github` (list_issues, open_pr, search), registered in that order,
//! under each collision policy; a dead `notes` fails fast while the others
//! work, and comes back after its back-off.

#[path = "support/common.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use mcp_hub::{
    Backoff, CollisionPolicy, Hub, HubConfig, HubError, HubEvent, RestartPolicy, ServerSpec,
    ServerStatusKind,
};
use mcp_testkit::{Behavior, Script, demo};
use serde_json::json;

fn spec(name: &str, script: Script, delay: Duration) -> ServerSpec {
    let (connector, _) = memory_delayed(script, delay);
    ServerSpec::new(name, connector).session(quick_session())
}

async fn classic(policy: CollisionPolicy, delays: [Duration; 3]) -> Hub {
    let config = HubConfig {
        policy,
        jitter_seed: Some(1),
        ..HubConfig::default()
    };
    Hub::builder(config)
        .server(spec("notes", demo::notes(), delays[0]))
        .server(spec("files", demo::files(), delays[1]))
        .server(spec("github", demo::github(), delays[2]))
        .start()
        .await
        .unwrap()
}

fn exposed(hub: &Hub) -> Vec<String> {
    hub.namespace()
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect()
}

#[tokio::test]
async fn prefix_routes_qualified_and_unique_bare_names_and_refuses_ambiguous_ones() {
    let hub = classic(CollisionPolicy::Prefix, [Duration::ZERO; 3]).await;
    let ns = hub.namespace();
    let qualified = [
        "notes/search",
        "notes/create",
        "files/read",
        "files/search",
        "github/list_issues",
        "github/open_pr",
        "github/search",
    ];
    for name in qualified {
        assert!(ns.resolve(name).is_ok(), "{name}");
    }
    for name in ["create", "read", "list_issues", "open_pr"] {
        assert!(ns.resolve(name).is_ok(), "{name}");
    }
    // Routed with the local name, to the right server.
    let r = hub
        .call("notes/search", json!({"query": "release"}))
        .await
        .unwrap();
    assert!(first_text(&r).contains("Release checklist"));
    let r = hub
        .call("read", json!({"path": "README.md"}))
        .await
        .unwrap();
    assert!(first_text(&r).contains("demo-project"));
    let r = hub
        .call("github/search", json!({"query": "stale"}))
        .await
        .unwrap();
    assert!(first_text(&r).contains("#42"));
    let r = hub.call("list_issues", ()).await.unwrap();
    assert!(r.structured_content.unwrap()["issues"].is_array());
    match hub.call("search", json!({"query": "x"})).await {
        Err(HubError::Ambiguous { candidates, .. }) => {
            assert_eq!(
                candidates,
                ["notes/search", "files/search", "github/search"]
            );
        }
        other => panic!("{other:?}"),
    }
    hub.shutdown().await;
}

#[tokio::test]
async fn first_exposes_the_seven_name_namespace() {
    let hub = classic(CollisionPolicy::First, [Duration::ZERO; 3]).await;
    assert_eq!(
        exposed(&hub),
        [
            "search",
            "create",
            "read",
            "files/search",
            "list_issues",
            "open_pr",
            "github/search"
        ]
    );
    let r = hub
        .call("search", json!({"query": "groceries"}))
        .await
        .unwrap();
    assert!(first_text(&r).contains("Groceries"), "routed to notes");
    hub.shutdown().await;
}

#[tokio::test]
async fn reject_refuses_files_and_github_naming_the_colliding_tool() {
    let hub = classic(CollisionPolicy::Reject, [Duration::ZERO; 3]).await;
    assert_eq!(exposed(&hub), ["search", "create"]);
    for server in ["files", "github"] {
        let err = hub.namespace().refusal(server).expect("refused");
        let text = err.to_string();
        assert!(
            text.contains(server) && text.contains("`search`") && text.contains("`notes`"),
            "{text}"
        );
    }
    hub.shutdown().await;

    // A required server that is refused fails the start.
    let config = HubConfig {
        policy: CollisionPolicy::Reject,
        ..HubConfig::default()
    };
    let err = Hub::builder(config)
        .server(spec("notes", demo::notes(), Duration::ZERO))
        .server(spec("files", demo::files(), Duration::ZERO).required())
        .start()
        .await
        .unwrap_err();
    match &err {
        HubError::RequiredServerFailed { server, source } => {
            assert_eq!(server.as_str(), "files");
            assert!(matches!(&**source, HubError::Collision { tool, .. } if tool == "search"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn outcomes_do_not_depend_on_which_server_is_ready_first() {
    // github is ready first and notes last, the reverse of registration.
    let slow = [
        Duration::from_millis(400),
        Duration::from_millis(200),
        Duration::ZERO,
    ];
    for policy in [
        CollisionPolicy::First,
        CollisionPolicy::Reject,
        CollisionPolicy::Prefix,
    ] {
        let fast = classic(policy, [Duration::ZERO; 3]).await;
        let reversed = classic(policy, slow).await;
        assert_eq!(exposed(&fast), exposed(&reversed), "{policy:?}");
        assert_eq!(fast.namespace().notes(), reversed.namespace().notes());
        fast.shutdown().await;
        reversed.shutdown().await;
    }
}

#[tokio::test]
async fn a_dead_server_fails_fast_while_others_work_and_comes_back_after_back_off() {
    let backoff = Backoff {
        initial: Duration::from_millis(300),
        jitter: 0.0,
        ..Backoff::default()
    };
    let notes = demo::notes().tool("crash", Behavior::Crash { code: 3 });
    let hub = Hub::builder(HubConfig::default())
        .server(spec("notes", notes, Duration::ZERO).restart(RestartPolicy::Backoff(backoff)))
        .server(spec("files", demo::files(), Duration::ZERO))
        .start()
        .await
        .unwrap();
    let mut events = hub.take_events().unwrap();
    drain(&mut events);

    // The call in flight when notes dies fails with a named error.
    let err = hub.call("crash", ()).await.unwrap_err();
    assert!(
        matches!(
            err,
            HubError::ServerDied {
                method: "tools/call",
                ..
            }
        ),
        "{err:?}"
    );
    // Calls now fail at once, without waiting for the restart.
    let began = Instant::now();
    let err = hub
        .call("notes/search", json!({"query": "x"}))
        .await
        .unwrap_err();
    assert!(matches!(err, HubError::ServerUnavailable { .. }), "{err:?}");
    assert!(began.elapsed() < Duration::from_millis(200));
    // Other servers are unaffected.
    let r = hub
        .call("read", json!({"path": "Cargo.toml"}))
        .await
        .unwrap();
    assert!(first_text(&r).contains("demo-project"));

    let delay = wait_for(&mut events, Duration::from_secs(5), |e| match e {
        HubEvent::Restarting { server, delay, .. } if server.as_str() == "notes" => Some(*delay),
        _ => None,
    })
    .await;
    assert_eq!(delay, Duration::from_millis(300));
    wait_for(&mut events, Duration::from_secs(5), |e| match e {
        HubEvent::Ready { server, .. } if server.as_str() == "notes" => Some(()),
        _ => None,
    })
    .await;
    assert_eq!(hub.status("notes").unwrap().kind, ServerStatusKind::Ready);
    assert_eq!(hub.status("notes").unwrap().restarts, 1);
    let r = hub
        .call("notes/search", json!({"query": "groceries"}))
        .await
        .unwrap();
    assert!(first_text(&r).contains("Groceries"));
    let report = hub.shutdown().await;
    assert!(report.forced.is_empty());
}

/// A server that lists a name twice: the hub keeps the first definition (and
/// the call goes to the tool by that name), the second is not exposed.
#[tokio::test]
async fn a_name_listed_twice_keeps_its_first_definition() {
    let script = Script::legacy()
        .tool_json(
            json!({"name": "echo", "description": "first",
                   "inputSchema": {"type": "object"}}),
            Behavior::Echo,
        )
        .tool_json(
            json!({"name": "echo", "description": "second",
                   "inputSchema": {"type": "object"}}),
            Behavior::Echo,
        )
        .tool("other", Behavior::Echo);
    let hub = Hub::builder(HubConfig::default())
        .server(spec("dup", script, Duration::ZERO))
        .start()
        .await
        .unwrap();
    let ns = hub.namespace();
    let echoes: Vec<_> = ns
        .tools()
        .iter()
        .filter(|t| t.tool().name == "echo")
        .collect();
    assert_eq!(echoes.len(), 1, "{:?}", exposed(&hub));
    assert_eq!(echoes[0].tool().description.as_deref(), Some("first"));
    assert_eq!(exposed(&hub), ["echo", "other"]);
    let result = hub.call("echo", json!({"text": "once"})).await.unwrap();
    assert_eq!(first_text(&result), "once");
    hub.shutdown().await;
}
