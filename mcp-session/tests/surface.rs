//! The whole client surface in both eras against the fake server: resources,
//! prompts, completion, logging, subscriptions, cache hints, client
//! handlers, `input_required` rounds, tasks.

#[path = "support/common.rs"]
mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use mcp_session::{
    ClientHandlers, Elicitation, ElicitationHandler, HandlerError, Negotiation, Roots,
    SamplingHandler, SessionConfig, SessionError, SessionEvent, SubscriptionEnd, SubscriptionEvent,
    ToolCallStart,
};
use mcp_testkit::{
    Behavior, CacheScope, CompletionSpec, InputRequest, InputSpec, ListKind, ListenEnd, PromptSpec,
    ResourceSpec, ResourceTemplateSpec, Script, TaskSupport, ToolSpec,
};
use mcp_transport::BoxFuture;
use mcp_types::{
    CompletionReference, CreateMessageParams, CreateMessageResult, ElicitAction, ElicitResult,
    LoggingLevel, PromptReference, Root, SamplingContent, SubscriptionFilter, TaskStatus,
};
use serde_json::json;

const BOTH: [Negotiation; 2] = [Negotiation::Legacy, Negotiation::Modern];

fn library() -> Script {
    Script::dual()
        .resource(ResourceSpec::text("note://a", "a", "alpha"))
        .resource(ResourceSpec::blob(
            "file://logo.png",
            "logo",
            "image/png",
            "iVBORw0KGgo=",
        ))
        .resource(ResourceSpec::text("note://c", "c", "gamma"))
        .resource_template(
            ResourceTemplateSpec::new("note://{name}", "note", "note {name}")
                .complete(CompletionSpec::new("name", ["alpha", "alps", "beta"])),
        )
        .prompt(
            PromptSpec::new("greet")
                .argument("name", true)
                .message("user", "Hello {name}")
                .complete(CompletionSpec::new("name", ["Ada", "Alan", "Grace"])),
        )
        .page_size(2)
}

#[tokio::test]
async fn resources_in_both_eras() {
    for mode in BOTH {
        let (connector, _) = memory(library());
        let session = ready(connector, quick_config(), mode).await;
        let listing = session.list_resources().await.unwrap();
        let uris: Vec<&str> = listing.items.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            ["note://a", "file://logo.png", "note://c"],
            "{mode:?}"
        );
        let templates = session.list_resource_templates().await.unwrap();
        assert_eq!(templates.items[0].uri_template, "note://{name}");
        let text = session.read_resource("note://a").await.unwrap();
        let v = serde_json::to_value(&text.contents[0]).unwrap();
        assert_eq!(v["text"], "alpha");
        let blob = session.read_resource("file://logo.png").await.unwrap();
        let v = serde_json::to_value(&blob.contents[0]).unwrap();
        assert_eq!(v["blob"], "iVBORw0KGgo=", "blob kept as sent");
        let missing = session.read_resource("other://nope").await.unwrap_err();
        assert!(
            matches!(&missing, SessionError::ResourceNotFound { uri } if uri == "other://nope"),
            "{mode:?}: {missing:?}"
        );
    }
}

#[tokio::test]
async fn prompts_and_completion_in_both_eras() {
    for mode in BOTH {
        let (connector, _) = memory(library());
        let session = ready(connector, quick_config(), mode).await;
        let prompts = session.list_prompts().await.unwrap();
        assert_eq!(prompts.items[0].name, "greet");
        let args = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
        let prompt = session.get_prompt("greet", args).await.unwrap();
        let text = serde_json::to_string(&prompt.messages).unwrap();
        assert!(text.contains("Hello Ada"), "{text}");
        // Any pairs will do.
        let prompt = session
            .get_prompt("greet", [("name", "Grace")])
            .await
            .unwrap();
        let text = serde_json::to_string(&prompt.messages).unwrap();
        assert!(text.contains("Hello Grace"), "{text}");
        let missing = session
            .get_prompt("greet", BTreeMap::<String, String>::new())
            .await
            .unwrap_err();
        assert_eq!(missing.code(), Some(-32602), "{mode:?}");
        let reference = CompletionReference::Prompt(PromptReference {
            name: "greet".into(),
            ..PromptReference::default()
        });
        let done = session
            .complete(reference, "name", "A", BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(done.completion.values, ["Ada", "Alan"], "{mode:?}");
    }
}

#[tokio::test]
async fn logging_in_both_eras() {
    let script = Script::dual().tool(
        "log",
        Behavior::Log {
            level: "warning".into(),
            message: json!("disk nearly full"),
            logger: None,
        },
    );
    for mode in BOTH {
        let (connector, recorder) = memory(script.clone());
        let mut session = ready(connector, quick_config(), mode).await;
        let mut events = session.take_events().unwrap();
        session.set_log_level(LoggingLevel::Error).await.unwrap();
        session.call_tool("log", ()).await.unwrap();
        assert!(
            next_message(&mut events).await.is_none(),
            "{mode:?}: below the level"
        );
        session.set_log_level(LoggingLevel::Info).await.unwrap();
        session.call_tool("log", ()).await.unwrap();
        let message = next_message(&mut events).await.expect("a log message");
        assert!(message.contains("disk nearly full"), "{message}");
        if mode == Negotiation::Legacy {
            assert_eq!(recorder.with_method("logging/setLevel").len(), 2);
        } else {
            assert!(recorder.with_method("logging/setLevel").is_empty());
            let call = recorder.with_method("tools/call").pop().unwrap();
            assert_eq!(
                call["params"]["_meta"]["io.modelcontextprotocol/logLevel"],
                "info"
            );
        }
    }
}

async fn next_message(events: &mut mcp_session::SessionEvents) -> Option<String> {
    loop {
        let ev = tokio::time::timeout(Duration::from_millis(300), events.next()).await;
        match ev {
            Ok(Some(SessionEvent::Notification { method, params }))
                if method == "notifications/message" =>
            {
                return params.map(|p| String::from_utf8_lossy(&p).into_owned());
            }
            Ok(Some(_)) => continue,
            _ => return None,
        }
    }
}

fn watcher_script() -> Script {
    Script::dual()
        .resource(ResourceSpec::text("note://a", "a", "alpha"))
        .capability("resources", json!({"subscribe": true, "listChanged": true}))
        .capability("tools", json!({"listChanged": true}))
        .tool(
            "touch",
            Behavior::TouchResource {
                uri: "note://a".into(),
            },
        )
        .tool(
            "change",
            Behavior::ChangeList {
                list: ListKind::Tools,
            },
        )
        .tool(
            "end",
            Behavior::EndListen {
                how: ListenEnd::Graceful,
                code: 0,
            },
        )
}

async fn next_event(sub: &mut mcp_session::Subscription) -> SubscriptionEvent {
    tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("an event in time")
        .expect("the stream is open")
}

#[tokio::test]
async fn a_modern_subscription_is_acknowledged_demultiplexed_and_ended() {
    let (connector, recorder) = memory(watcher_script());
    let session = ready(connector, quick_config(), Negotiation::Modern).await;
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        prompts_list_changed: Some(true),
        resource_subscriptions: Some(vec!["note://a".into()]),
        ..SubscriptionFilter::default()
    };
    let mut sub = session.subscribe(filter).await.unwrap();
    match next_event(&mut sub).await {
        SubscriptionEvent::Acknowledged { accepted, refused } => {
            assert_eq!(accepted.tools_list_changed, Some(true));
            assert_eq!(
                refused.prompts_list_changed,
                Some(true),
                "no prompts: refused"
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    session.call_tool("change", ()).await.unwrap();
    assert_eq!(
        next_event(&mut sub).await,
        SubscriptionEvent::ToolsListChanged
    );
    session.call_tool("touch", ()).await.unwrap();
    assert_eq!(
        next_event(&mut sub).await,
        SubscriptionEvent::ResourceUpdated {
            uri: "note://a".into()
        }
    );
    session.call_tool("end", ()).await.unwrap();
    assert_eq!(
        next_event(&mut sub).await,
        SubscriptionEvent::Ended(SubscriptionEnd::Graceful)
    );
    let listen = recorder.with_method("subscriptions/listen");
    assert_eq!(
        listen[0]["params"]["notifications"]["toolsListChanged"],
        true
    );
}

#[tokio::test]
async fn dropping_a_modern_subscription_cancels_its_listen_request() {
    let (connector, recorder) = memory(watcher_script());
    let session = ready(connector, quick_config(), Negotiation::Modern).await;
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        ..SubscriptionFilter::default()
    };
    let mut sub = session.subscribe(filter).await.unwrap();
    assert!(matches!(
        next_event(&mut sub).await,
        SubscriptionEvent::Acknowledged { .. }
    ));
    drop(sub);
    settle(&recorder, "notifications/cancelled").await;
    let listen_id = recorder.with_method("subscriptions/listen")[0]["id"].clone();
    assert_eq!(recorder.cancelled_ids(), vec![listen_id]);
}

#[tokio::test]
async fn an_abrupt_end_is_reported() {
    let script = watcher_script().tool(
        "die",
        Behavior::EndListen {
            how: ListenEnd::Exit,
            code: 3,
        },
    );
    let (connector, _) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Modern).await;
    let mut sub = session
        .subscribe(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..SubscriptionFilter::default()
        })
        .await
        .unwrap();
    next_event(&mut sub).await;
    // The server exits instead of answering.
    assert!(session.call_tool("die", ()).await.is_err());
    assert_eq!(
        next_event(&mut sub).await,
        SubscriptionEvent::Ended(SubscriptionEnd::Abrupt)
    );
}

#[tokio::test]
async fn a_legacy_subscription_uses_resources_subscribe_and_unsolicited_notifications() {
    let (connector, recorder) = memory(watcher_script());
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        resource_subscriptions: Some(vec!["note://a".into()]),
        ..SubscriptionFilter::default()
    };
    let mut sub = session.subscribe(filter).await.unwrap();
    assert_eq!(
        recorder.with_method("resources/subscribe")[0]["params"]["uri"],
        "note://a"
    );
    session.call_tool("touch", ()).await.unwrap();
    assert_eq!(
        next_event(&mut sub).await,
        SubscriptionEvent::ResourceUpdated {
            uri: "note://a".into()
        }
    );
    session.call_tool("change", ()).await.unwrap();
    assert_eq!(
        next_event(&mut sub).await,
        SubscriptionEvent::ToolsListChanged
    );
    sub.close(&session).await.unwrap();
    assert_eq!(recorder.with_method("resources/unsubscribe").len(), 1);
}

#[tokio::test]
async fn cache_hints_are_kept_and_a_list_change_makes_a_listing_stale() {
    let script = watcher_script().cache_hints(60_000, CacheScope::Public);
    let (connector, _) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Modern).await;
    let _sub = session
        .subscribe(SubscriptionFilter {
            resources_list_changed: Some(true),
            ..SubscriptionFilter::default()
        })
        .await
        .unwrap();
    let listing = session.list_resources().await.unwrap();
    assert_eq!(listing.ttl, Some(Duration::from_secs(60)));
    assert_eq!(listing.cache_scope, Some(mcp_types::CacheScope::Public));
    assert!(session.is_fresh(&listing));
    // Legacy: the unsolicited notification makes the listing stale.
    let (connector2, _) = memory(
        watcher_script()
            .cache_hints(60_000, CacheScope::Public)
            .tool(
                "change_resources",
                Behavior::ChangeList {
                    list: ListKind::Resources,
                },
            ),
    );
    let mut session2 = ready(connector2, quick_config(), Negotiation::Legacy).await;
    let mut events = session2.take_events().unwrap();
    let listing2 = session2.list_resources().await.unwrap();
    assert!(session2.is_fresh(&listing2));
    session2.call_tool("change_resources", ()).await.unwrap();
    // The notification is counted before the host hears of it.
    let heard = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(event) = events.next().await {
            if matches!(&event, SessionEvent::Notification { method, .. }
                if method == "notifications/resources/list_changed")
            {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(heard, Ok(true), "no list_changed");
    assert!(!session2.is_fresh(&listing2), "list_changed invalidates");
}

struct Model;

impl SamplingHandler for Model {
    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        Box::pin(async move {
            let asked = serde_json::to_string(&params.messages).unwrap();
            let text = format!("model saw {} bytes", asked.len());
            let content: SamplingContent =
                serde_json::from_value(json!({"type": "text", "text": text})).unwrap();
            Ok(CreateMessageResult::new(content, "test-model"))
        })
    }
}

struct User;

impl ElicitationHandler for User {
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        Box::pin(async move {
            match request {
                Elicitation::Form(_) => {
                    let mut result = ElicitResult::new(ElicitAction::Accept);
                    result.content = serde_json::from_value(json!({"name": "Ada"})).ok();
                    Ok(result)
                }
                Elicitation::Url { host, .. } => {
                    assert_eq!(host, "auth.example.com");
                    Ok(ElicitResult::new(ElicitAction::Decline))
                }
                _ => Err(HandlerError::refused("unknown elicitation")),
            }
        })
    }

    fn supports_url(&self) -> bool {
        true
    }
}

fn handlers() -> ClientHandlers {
    ClientHandlers::new()
        .sampling(Model)
        .elicitation(User)
        .roots(Roots::new(vec![Root::new("file:///work")]))
}

fn asking_script() -> Script {
    let form = InputRequest::elicit_form(
        "Who?",
        json!({"type": "object", "properties": {"name": {"type": "string"}}}),
    );
    Script::dual()
        .tool(
            "ask",
            Behavior::Ask(
                InputSpec::one("model", InputRequest::sampling("hi", 10))
                    .and("user", form)
                    .and("roots", InputRequest::roots())
                    .and(
                        "login",
                        InputRequest::elicit_url("Log in", "https://auth.example.com/x", "e1"),
                    ),
            ),
        )
        .tool(
            "ask_forever",
            Behavior::Ask(InputSpec::one("roots", InputRequest::roots()).rounds(20)),
        )
}

/// A person filling in a server's form takes longer than a request's
/// timeout: the tool call that asked does not time out meanwhile (the
/// server is waiting on us), and its clock starts again once answered.
#[tokio::test]
async fn a_call_waits_while_the_user_answers_its_servers_question() {
    let form = InputRequest::elicit_form(
        "Who?",
        json!({"type": "object", "properties": {"name": {"type": "string"}}}),
    );
    let script = Script::dual().tool("ask", Behavior::Ask(InputSpec::one("user", form)));
    let (connector, _recorder) = memory(script);
    let timeout = Duration::from_millis(150);
    let config = SessionConfig {
        request_timeout: timeout,
        handlers: ClientHandlers::new().on_elicitation(move |_| async move {
            // The passage of time is what is tested: a slow person.
            tokio::time::sleep(timeout * 4).await;
            Ok(ElicitResult::accept([("name", "Ada".into())]))
        }),
        ..quick_config()
    };
    let session = ready(connector, config, Negotiation::Legacy).await;
    let result = session.call_tool("ask", ()).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let rounds = &result.structured_content.as_ref().unwrap()["rounds"][0];
    assert_eq!(rounds["user"]["content"]["name"], "Ada");
}

#[tokio::test]
async fn handlers_answer_server_requests_in_both_eras() {
    for mode in BOTH {
        let (connector, recorder) = memory(asking_script());
        let config = SessionConfig {
            handlers: handlers(),
            ..quick_config()
        };
        let session = ready(connector, config, mode).await;
        let result = session.call_tool("ask", ()).await.unwrap();
        assert_ne!(result.is_error, Some(true), "{mode:?}: {result:?}");
        let rounds = &result.structured_content.as_ref().unwrap()["rounds"][0];
        assert!(
            rounds["model"]["content"]["text"]
                .as_str()
                .unwrap()
                .starts_with("model saw")
        );
        assert_eq!(rounds["user"]["content"]["name"], "Ada");
        assert_eq!(rounds["roots"]["roots"][0]["uri"], "file:///work");
        assert_eq!(rounds["login"]["action"], "decline");
        if mode == Negotiation::Modern {
            let calls = recorder.with_method("tools/call");
            assert_eq!(calls.len(), 2, "the original request, then the retry");
            assert_ne!(calls[0]["id"], calls[1]["id"], "a new id for the retry");
            assert!(calls[1]["params"]["inputResponses"].is_object());
            assert!(calls[0]["params"].get("inputResponses").is_none());
        }
    }
}

#[tokio::test]
async fn capabilities_are_declared_only_for_registered_handlers() {
    let (connector, recorder) = memory(Script::dual());
    let config = SessionConfig {
        handlers: ClientHandlers::new().roots(Roots::new(vec![])),
        ..quick_config()
    };
    ready(connector, config, Negotiation::Legacy).await;
    let caps = &recorder.with_method("initialize")[0]["params"]["capabilities"];
    assert_eq!(caps, &json!({"roots": {"listChanged": true}}));
}

#[tokio::test]
async fn unregistered_features_are_refused_by_name() {
    for mode in BOTH {
        let (connector, _) = memory(asking_script());
        let session = ready(connector, quick_config(), mode).await;
        let outcome = session.call_tool("ask", ()).await;
        match mode {
            Negotiation::Legacy => {
                let result = outcome.unwrap();
                assert_eq!(result.is_error, Some(true));
                let text = serde_json::to_string(&result).unwrap();
                assert!(text.contains("sampling"), "{text}");
            }
            _ => {
                // 2026: the server sees no capability and refuses (-32021), or
                // asks and the client names what it lacks.
                let err = outcome.unwrap_err();
                assert!(
                    matches!(
                        err,
                        SessionError::Server { code: -32021, .. }
                            | SessionError::InputNotProvided { .. }
                    ),
                    "{err:?}"
                );
            }
        }
    }
}

#[tokio::test]
async fn input_rounds_are_bounded() {
    let (connector, _) = memory(asking_script());
    let config = SessionConfig {
        handlers: handlers(),
        max_input_rounds: 3,
        ..quick_config()
    };
    let session = ready(connector, config, Negotiation::Modern).await;
    let err = session.call_tool("ask_forever", ()).await.unwrap_err();
    assert!(
        matches!(err, SessionError::TooManyRounds { limit: 3, .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn roots_changes_are_announced_in_the_legacy_era() {
    let roots = Roots::new(vec![Root::new("file:///a")]);
    let (connector, recorder) = memory(Script::legacy());
    let config = SessionConfig {
        handlers: ClientHandlers::new().roots(roots.clone()),
        ..quick_config()
    };
    let _session = ready(connector, config, Negotiation::Legacy).await;
    roots.set(vec![Root::new("file:///b")]);
    settle(&recorder, "notifications/roots/list_changed").await;
}

fn task_script() -> Script {
    Script::dual().tool_spec(
        ToolSpec::new(
            "slow",
            Behavior::Sleep {
                ms: 200,
                progress_steps: 0,
            },
        )
        .with_task_support(TaskSupport::Optional),
    )
}

#[tokio::test]
async fn tasks_in_both_eras() {
    for mode in BOTH {
        let (connector, recorder) = memory(task_script());
        let config = SessionConfig {
            accept_tasks: true,
            ..quick_config()
        };
        let session = ready(connector, config, mode).await;
        let start = session
            .call_tool_as_task("slow", (), Some(Duration::from_secs(60)))
            .await
            .unwrap();
        let ToolCallStart::Task(mut handle) = start else {
            panic!("{mode:?}: expected a task, got {start:?}")
        };
        assert!(!handle.id().is_empty());
        let result = session.wait_task(&mut handle).await.unwrap();
        assert_eq!(*handle.status(), TaskStatus::Completed, "{mode:?}");
        assert_ne!(result.is_error, Some(true));
        assert!(!recorder.with_method("tasks/get").is_empty() || handle.status().is_terminal());
    }
}

#[tokio::test]
async fn a_task_can_be_cancelled() {
    let script = Script::legacy()
        .tool_spec(ToolSpec::new("hang", Behavior::Hang).with_task_support(TaskSupport::Optional));
    let (connector, recorder) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let ToolCallStart::Task(mut handle) =
        session.call_tool_as_task("hang", (), None).await.unwrap()
    else {
        panic!("expected a task")
    };
    session.cancel_task(&handle).await.unwrap();
    session.poll_task(&mut handle).await.unwrap();
    assert_eq!(*handle.status(), TaskStatus::Cancelled);
    assert_eq!(recorder.with_method("tasks/cancel").len(), 1);
}

#[tokio::test]
async fn sampling_with_tools_is_refused_unless_declared() {
    let request = InputRequest {
        method: "sampling/createMessage".into(),
        params: json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                       "maxTokens": 10,
                       "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
    };
    let script = Script::legacy().tool("ask", Behavior::Ask(InputSpec::one("model", request)));
    let (connector, _) = memory(script);
    let config = SessionConfig {
        handlers: ClientHandlers::new().sampling(Model),
        ..quick_config()
    };
    let session = ready(connector, config, Negotiation::Legacy).await;
    let result = session.call_tool("ask", ()).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    let answer = &result.structured_content.as_ref().unwrap()["rounds"][0]["model"];
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("sampling.tools"), "{message}");
}
