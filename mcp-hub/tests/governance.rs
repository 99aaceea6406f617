//! The host's authority over calls: allow-lists, permissions and
//! principals, the content limit, the approval hook, concurrency limits,
//! retries, audit records, and export to LLM tool formats.

#[path = "support/common.rs"]
mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcp_hub::{
    Approval, ApprovalHook, ApprovalRequest, AuditOutcome, Authority, CallLimits, CollisionPolicy,
    ContentLimit, DenyReason, Hub, HubConfig, HubError, HubEvent, Operation, Principal,
    RetryPolicy, ServerAuthority, ServerSpec, TargetKind, ToolCall,
};
use mcp_session::Negotiation;
use mcp_testkit::{Behavior, Recorder, Script, demo};
use mcp_transport::BoxFuture;
use serde_json::json;

fn spec(name: &str, script: Script) -> (ServerSpec, Recorder) {
    let (connector, recorder) = memory(script);
    let spec = ServerSpec::new(name, connector).session(quick_session());
    (spec, recorder)
}

async fn classic_with(authority: Authority, principal: Principal) -> (Hub, [Recorder; 3]) {
    let (notes, rn) = spec("notes", demo::notes());
    let (files, rf) = spec("files", demo::files());
    let (github, rg) = spec("github", demo::github());
    let hub = Hub::builder(HubConfig::default())
        .server(notes)
        .server(files)
        .server(github)
        .authority(authority)
        .principal(principal)
        .start()
        .await
        .unwrap();
    (hub, [rn, rf, rg])
}

fn exposed(hub: &Hub) -> Vec<String> {
    hub.namespace()
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect()
}

#[tokio::test]
async fn a_server_the_document_does_not_name_gets_nothing() {
    let authority = Authority::from_json(r#"{"servers": {"notes": {}}}"#).unwrap();
    let (hub, [_, files, github]) = classic_with(authority, Principal::new("me")).await;
    assert_eq!(exposed(&hub), ["search", "create"]);
    assert!(
        hub.namespace()
            .tools()
            .iter()
            .all(|t| t.server().as_str() == "notes")
    );
    match hub
        .facade()
        .call_tool("files", "read", json!({"path": "README.md"}))
        .await
    {
        Err(HubError::Denied {
            kind: TargetKind::Tool,
            reason: DenyReason::NotNamed,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        hub.facade().list_tools("github", None).await,
        Err(HubError::Denied {
            reason: DenyReason::NotNamed,
            ..
        })
    ));
    assert_eq!(calls_of(&files, "read"), 0);
    assert_eq!(calls_of(&github, "search"), 0);
    // Without a document every server is open.
    let (hub2, _) = classic_with(Authority::unrestricted(), Principal::new("me")).await;
    assert!(exposed(&hub2).contains(&"files/search".to_owned()));
    hub.shutdown().await;
    hub2.shutdown().await;
}

#[tokio::test]
async fn calls_outside_the_authority_are_refused_before_anything_is_sent() {
    let authority = Authority::from_json(
        r#"{"servers": {"notes": {"tools": ["create"]}, "github": {"tools": []}, "files": {}}}"#,
    )
    .unwrap();
    let (hub, [notes, _, github]) = classic_with(authority, Principal::new("me")).await;
    // notes/search is not published, so bare `search` is files' alone.
    assert_eq!(exposed(&hub), ["create", "read", "search"]);
    // Hidden, not unknown: the model's call by the qualified name is
    // refused as denied, naming the server and the tool.
    match hub.call("notes/search", json!({"query": "x"})).await {
        Err(HubError::Denied {
            server,
            kind: TargetKind::Tool,
            name,
            reason: DenyReason::NotAllowListed,
        }) => assert_eq!((server.as_str(), name.as_str()), ("notes", "search")),
        other => panic!("{other:?}"),
    }
    match hub
        .facade()
        .call_tool("notes", "search", json!({"query": "x"}))
        .await
    {
        Err(HubError::Denied {
            server,
            kind: TargetKind::Tool,
            name,
            reason: DenyReason::NotAllowListed,
        }) => {
            assert_eq!(server.as_str(), "notes");
            assert_eq!(name, "search");
        }
        other => panic!("{other:?}"),
    }
    let err = hub
        .facade()
        .call_tool("github", "list_issues", ())
        .await
        .unwrap_err();
    assert!(matches!(err, HubError::Denied { .. }), "{err:?}");
    assert_eq!(calls_of(&notes, "search"), 0);
    assert_eq!(calls_of(&github, "list_issues"), 0);
    // What is allowed works, through both paths.
    hub.call("create", json!({"title": "t", "text": "x"}))
        .await
        .unwrap();
    hub.facade()
        .call_tool("files", "read", json!({"path": "README.md"}))
        .await
        .unwrap();
    // A tool the server did not list is not callable through the facade.
    assert!(matches!(
        hub.facade().call_tool("files", "rm", ()).await,
        Err(HubError::UnknownTool { .. })
    ));
    hub.shutdown().await;
}

#[tokio::test]
async fn an_authority_naming_an_unknown_server_is_refused() {
    let (notes, _) = spec("notes", demo::notes());
    let err = Hub::builder(HubConfig::default())
        .server(notes)
        .authority(Authority::named().with_server("nots", ServerAuthority::default()))
        .start()
        .await
        .unwrap_err();
    assert!(
        matches!(&err, HubError::AuthorityUnknownServer { name } if name == "nots"),
        "{err:?}"
    );
}

#[tokio::test]
async fn permissions_follow_the_current_principal() {
    let authority = Authority::named()
        .with_server("notes", ServerAuthority::default().permission("personal"))
        .with_server(
            "github",
            ServerAuthority::default()
                .permission("github")
                .tool_permission("open_pr", "github.write"),
        )
        .with_server("files", ServerAuthority::default());
    let reader = Principal::default_deny("reader").grant("github");
    let (hub, _) = classic_with(authority, reader).await;
    // Default deny: untagged `files` exposes nothing, `notes` lacks the grant.
    assert_eq!(exposed(&hub), ["list_issues", "search"]);
    let err = hub
        .facade()
        .call_tool("github", "open_pr", json!({"title": "t", "branch": "b"}))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            HubError::Denied {
                reason: DenyReason::MissingPermission,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(matches!(
        hub.facade().inspect("files").await,
        Err(HubError::Denied {
            kind: TargetKind::Server,
            ..
        })
    ));
    let writer = Principal::default_deny("writer")
        .grant("github")
        .grant("github.write")
        .grant("personal");
    let ns = hub.set_principal(writer).unwrap();
    assert!(ns.resolve("open_pr").is_ok());
    assert!(ns.resolve("notes/search").is_ok());
    assert!(ns.resolve("read").is_err());
    hub.call("open_pr", json!({"title": "t", "branch": "b"}))
        .await
        .unwrap();
    hub.shutdown().await;
}

#[tokio::test]
async fn a_result_over_the_content_limit_is_refused_whole() {
    let big_text = "x".repeat(1536 * 1024);
    let script = Script::legacy()
        .tool("blob", Behavior::Blob { kb: 1536 })
        .tool("small", Behavior::Blob { kb: 1 })
        .resource(mcp_testkit::ResourceSpec::text(
            "file:///big.txt",
            "big",
            &big_text,
        ));
    let (default_limit, _) = spec("big", script.clone());
    let (raised, _) = spec("raised", script);
    let hub = Hub::builder(HubConfig::default())
        .server(default_limit.negotiation(Negotiation::Legacy))
        .server(
            raised
                .negotiation(Negotiation::Legacy)
                .max_content_bytes(ContentLimit::new(4 << 20).unwrap()),
        )
        .start()
        .await
        .unwrap();
    match hub.call("big/blob", ()).await {
        Err(HubError::ContentTooLarge {
            server,
            size,
            limit,
        }) => {
            assert_eq!(server.as_str(), "big");
            assert_eq!(limit, 1 << 20);
            assert!(size > 1536 * 1024, "{size}");
        }
        other => panic!("{other:?}"),
    }
    let r = hub.call("raised/blob", ()).await.unwrap();
    assert!(first_text(&r).len() >= 1536 * 1024);
    hub.call("big/small", ()).await.unwrap();
    // Host code's reads go through the same limit, checked on the frame.
    let read = hub
        .facade()
        .read_resource("big", "file:///big.txt")
        .await
        .unwrap_err();
    assert!(
        matches!(&read, HubError::ContentTooLarge { size, .. } if *size > 1536 * 1024),
        "{read:?}"
    );
    let read = hub
        .facade()
        .read_resource("raised", "file:///big.txt")
        .await
        .unwrap();
    assert_eq!(read.contents.len(), 1);
    // The limit's own bounds.
    assert!(ContentLimit::new(1023).is_err());
    assert!(ContentLimit::new(16 * 1024 * 1024 + 1).is_err());
    assert_eq!(ContentLimit::default().bytes(), 1 << 20);
    hub.shutdown().await;
}

/// Denies tools the server marks destructive (the host's choice: the hub
/// only hands the raw hints over) and records what it saw.
/// (tool, destructiveHint, exposed name) of each request.
type Seen = (String, Option<bool>, Option<String>);

#[derive(Debug, Default)]
struct CautiousHost {
    seen: Mutex<Vec<Seen>>,
}

impl ApprovalHook for CautiousHost {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        let destructive = request.annotations.and_then(|a| a.destructive_hint);
        self.seen.lock().unwrap().push((
            request.tool.to_owned(),
            destructive,
            request.exposed_name.map(str::to_owned),
        ));
        Box::pin(async move {
            if destructive == Some(true) {
                Approval::Deny
            } else {
                Approval::Approve
            }
        })
    }
}

#[tokio::test]
async fn the_approval_hook_sees_raw_annotations_and_can_deny() {
    let script = Script::legacy()
        .tool_json(
            json!({"name": "wipe", "inputSchema": {"type": "object"},
                   "annotations": {"destructiveHint": true, "readOnlyHint": false}}),
            Behavior::Text {
                text: "wiped".into(),
            },
        )
        .tool_json(
            json!({"name": "look", "inputSchema": {"type": "object"},
                   "annotations": {"readOnlyHint": true}}),
            Behavior::Text {
                text: "looked".into(),
            },
        );
    let (s, recorder) = spec("disk", script);
    let host = Arc::new(CautiousHost::default());
    let hub = Hub::builder(HubConfig::default())
        .server(s.negotiation(Negotiation::Legacy))
        .approval(host.clone())
        .start()
        .await
        .unwrap();
    let err = hub.call("wipe", ()).await.unwrap_err();
    assert!(matches!(err, HubError::NotApproved { .. }), "{err:?}");
    assert_eq!(calls_of(&recorder, "wipe"), 0, "nothing was sent");
    assert_eq!(first_text(&hub.call("look", ()).await.unwrap()), "looked");
    // The hook also governs host code's calls.
    assert!(hub.facade().call_tool("disk", "wipe", ()).await.is_err());
    let seen = host.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("wipe".to_owned(), Some(true), Some("wipe".to_owned())),
            ("look".to_owned(), None, Some("look".to_owned())),
            ("wipe".to_owned(), Some(true), None),
        ]
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn a_burst_beyond_the_concurrency_limit_queues_then_is_refused() {
    let script = Script::legacy().tool(
        "slow",
        Behavior::Sleep {
            ms: 300,
            progress_steps: 0,
        },
    );
    let (s, recorder) = spec("s", script);
    let hub = Arc::new(
        Hub::builder(HubConfig::default())
            .server(s.negotiation(Negotiation::Legacy).call_limits(CallLimits {
                max_concurrent: 1,
                max_queued: 1,
                queue_timeout: Duration::from_secs(5),
            }))
            .start()
            .await
            .unwrap(),
    );
    let call = || {
        let h = Arc::clone(&hub);
        tokio::spawn(async move { h.call("slow", ()).await })
    };
    let first = call();
    // A call takes its slot before it is sent: once the server has the
    // first one, it holds the only slot (for the tool's 300 ms).
    assert!(
        recorder
            .wait_for("tools/call", Duration::from_secs(5))
            .await
            .is_some(),
        "the first call never reached the server"
    );
    // Meanwhile, of the next two calls, one waits in the (one-place) queue
    // and the other is refused.
    let tasks = [first, call(), call()];
    let mut ok = 0;
    let mut full = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => ok += 1,
            Err(HubError::QueueFull { limit: 1, .. }) => full += 1,
            Err(e) => panic!("{e:?}"),
        }
    }
    assert_eq!((ok, full), (2, 1));
    hub.shutdown().await;
}

#[tokio::test]
async fn tool_calls_are_retried_only_when_the_host_opted_in() {
    let script = Script::legacy()
        .tool(
            "flaky",
            Behavior::Error {
                code: -32603,
                message: "database on fire".into(),
                data: None,
            },
        )
        .tool_json(
            json!({"name": "idem", "inputSchema": {"type": "object"},
                   "annotations": {"idempotentHint": true}}),
            Behavior::Error {
                code: -32603,
                message: "database on fire".into(),
                data: None,
            },
        );
    let (s, recorder) = spec("s", script);
    let retry = RetryPolicy {
        max_attempts: 3,
        initial: Duration::from_millis(10),
        max: Duration::from_millis(50),
        retry_tools: ["flaky".to_owned()].into(),
    };
    let hub = Hub::builder(HubConfig::default())
        .server(s.negotiation(Negotiation::Legacy).retry(retry))
        .start()
        .await
        .unwrap();
    let err = hub.call("flaky", ()).await.unwrap_err();
    assert_eq!(err.server_message(), Some("database on fire"));
    assert!(
        !err.to_string().contains("on fire"),
        "server prose kept out"
    );
    assert_eq!(calls_of(&recorder, "flaky"), 3, "opted in: retried");
    hub.call("idem", ()).await.unwrap_err();
    assert_eq!(
        calls_of(&recorder, "idem"),
        1,
        "an idempotentHint is not consent"
    );
    hub.shutdown().await;
}

/// A call its caller gives up is audited as cancelled, once, and its
/// server is told.
#[tokio::test]
async fn a_call_given_up_is_audited_as_cancelled() {
    let trail = Arc::new(Trail::default());
    let (hangs, recorder) = spec("hangs", Script::legacy().tool("hang", Behavior::Hang));
    let hub = Hub::builder(HubConfig::default())
        .server(hangs)
        .audit_sink(trail.clone())
        .start()
        .await
        .unwrap();
    let mut call = Box::pin(hub.call("hang", json!({})));
    tokio::select! {
        ended = &mut call => panic!("a hanging call ended: {ended:?}"),
        seen = recorder.wait_for("tools/call", Duration::from_secs(5)) => {
            assert!(seen.is_some(), "the call reached its server");
        }
    }
    assert!(trail.0.lock().unwrap().is_empty(), "nothing ended yet");
    drop(call);
    let records = trail.0.lock().unwrap().clone();
    let summary: Vec<_> = records
        .iter()
        .map(|r| (r.operation, r.target.clone(), r.outcome))
        .collect();
    assert_eq!(
        summary,
        [(
            Operation::CallTool,
            Some("hang".into()),
            AuditOutcome::Cancelled
        )]
    );
    assert!(
        recorder
            .wait_for("notifications/cancelled", Duration::from_secs(5))
            .await
            .is_some(),
        "the server was told"
    );
    hub.shutdown().await;
    assert_eq!(trail.0.lock().unwrap().len(), 1, "written once");
}

/// An approval hook that panics.
#[derive(Debug)]
struct PanickingHook;

impl ApprovalHook for PanickingHook {
    fn approve<'a>(&'a self, _: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        Box::pin(async { panic!("the host's hook failed") })
    }
}

/// A panic through an operation is not recorded as a cancellation.
#[tokio::test]
async fn an_operation_a_panic_ends_is_not_audited_as_cancelled() {
    let trail = Arc::new(Trail::default());
    let (notes, _) = spec("notes", demo::notes());
    let hub = Arc::new(
        Hub::builder(HubConfig::default())
            .server(notes)
            .approval(Arc::new(PanickingHook))
            .audit_sink(trail.clone())
            .start()
            .await
            .unwrap(),
    );
    let h = Arc::clone(&hub);
    let ended = tokio::spawn(async move { h.call("search", json!({"query": "q"})).await }).await;
    assert!(ended.unwrap_err().is_panic());
    assert_eq!(*trail.0.lock().unwrap(), []);
    hub.shutdown().await;
}

#[tokio::test]
async fn every_governed_operation_is_audited_without_secrets() {
    let trail = Arc::new(Trail::default());
    let (notes, _) = spec("notes", demo::notes());
    let hub = Hub::builder(HubConfig::default())
        .server(notes)
        .authority(
            Authority::named().with_server("notes", ServerAuthority::default().tools(["search"])),
        )
        .principal(Principal::new("alice"))
        .audit_sink(trail.clone())
        .start()
        .await
        .unwrap();
    let mut events = hub.take_events().unwrap();
    drain(&mut events);
    hub.call("search", json!({"query": "hunter2-secret"}))
        .await
        .unwrap();
    // Not on the allow-list: denied, and audited as such.
    let denied = hub
        .facade()
        .call_tool(
            "notes",
            "create",
            json!({"title": "hunter2-secret", "text": "x"}),
        )
        .await;
    assert!(matches!(denied, Err(HubError::Denied { .. })), "{denied:?}");
    hub.facade().inspect("notes").await.unwrap();
    let page = hub.facade().list_tools("notes", None).await.unwrap();
    assert_eq!(page.items.len(), 1, "filtered by the allow-list");
    // No resources capability: an empty page, not an error.
    assert!(
        hub.facade()
            .list_resources("notes", None)
            .await
            .unwrap()
            .items
            .is_empty()
    );
    assert!(matches!(
        hub.facade().read_resource("notes", "notes://n1").await,
        Err(HubError::Unsupported { .. })
    ));
    let records = trail.0.lock().unwrap().clone();
    let summary: Vec<_> = records
        .iter()
        .map(|r| (r.operation, r.target.clone(), r.from_model, r.outcome))
        .collect();
    assert_eq!(
        summary,
        [
            (
                Operation::CallTool,
                Some("search".into()),
                true,
                AuditOutcome::Succeeded
            ),
            (
                Operation::CallTool,
                Some("create".into()),
                false,
                AuditOutcome::Refused("denied")
            ),
            (Operation::Inspect, None, false, AuditOutcome::Succeeded),
            (Operation::ListTools, None, false, AuditOutcome::Succeeded),
            (
                Operation::ListResources,
                None,
                false,
                AuditOutcome::Succeeded
            ),
            (
                Operation::ReadResource,
                Some("notes://n1".into()),
                false,
                AuditOutcome::Failed("unsupported")
            ),
        ]
    );
    assert!(records.iter().all(|r| r.principal == "alice"));
    // The same records reach the event queue; nothing carries arguments.
    let audited: Vec<_> = drain(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            HubEvent::Audit(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(audited, records);
    assert!(!format!("{audited:?}").contains("hunter2"));
    hub.shutdown().await;
}

#[tokio::test]
async fn the_namespace_exports_to_llm_formats_and_maps_calls_back() {
    let (notes, _) = spec("notes", demo::notes());
    let (files, _) = spec("files", demo::files());
    let config = HubConfig {
        policy: CollisionPolicy::Prefix,
        provider_safe_names: true,
        ..HubConfig::default()
    };
    let hub = Hub::builder(config)
        .server(notes)
        .server(files)
        .start()
        .await
        .unwrap();
    let ns = hub.namespace();
    let anthropic = mcp_hub::anthropic_tools(&ns).unwrap();
    let names: Vec<&str> = anthropic
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["notes_search", "create", "read", "files_search"]);
    assert_eq!(
        anthropic[1]["input_schema"]["required"],
        json!(["title", "text"])
    );
    assert!(
        anthropic[0]["description"]
            .as_str()
            .unwrap()
            .contains("notes")
    );
    let openai = mcp_hub::openai_tools(&ns).unwrap();
    assert_eq!(openai[0]["type"], "function");
    assert_eq!(openai[0]["function"]["name"], "notes_search");
    assert_eq!(openai[0]["function"]["parameters"]["type"], "object");

    let call = ToolCall::from_openai(&json!({
        "id": "call_1", "type": "function",
        "function": {"name": "files_search", "arguments": "{\"query\": \"main\"}"}
    }))
    .unwrap();
    let route = call.route(&ns).unwrap();
    assert_eq!(route.server.as_str(), "files");
    let r = hub.call(&call.name, call.arguments).await.unwrap();
    assert!(first_text(&r).contains("main.rs"));
    let call = ToolCall::from_anthropic(&json!({
        "type": "tool_use", "id": "toolu_1", "name": "notes_search", "input": {"query": "groceries"}
    }))
    .unwrap();
    assert_eq!(call.id.as_deref(), Some("toolu_1"));
    let r = hub.call(&call.name, call.arguments).await.unwrap();
    assert!(first_text(&r).contains("Groceries"));
    assert!(matches!(
        ToolCall::from_openai(&json!({"function": {"name": "x", "arguments": "[1]"}})),
        Err(HubError::MalformedToolCall { .. })
    ));
    hub.shutdown().await;

    // Without provider-safe names the exports are the same: `notes/search`
    // goes out as its alias `notes_search`, and comes back to it.
    let (notes, _) = spec("notes", demo::notes());
    let (files, _) = spec("files", demo::files());
    let plain = Hub::builder(HubConfig::default())
        .server(notes)
        .server(files)
        .start()
        .await
        .unwrap();
    let ns = plain.namespace();
    assert_eq!(ns.tools()[0].name(), "notes/search");
    assert_eq!(mcp_hub::anthropic_tools(&ns).unwrap(), anthropic);
    assert_eq!(mcp_hub::openai_tools(&ns).unwrap(), openai);
    let r = plain
        .call("notes_search", json!({"query": "groceries"}))
        .await
        .unwrap();
    assert!(first_text(&r).contains("Groceries"));
    plain.shutdown().await;
}
