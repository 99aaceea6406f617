//! A hub program as a new user writes it: a builder chain without `?`
//! (problems reported by `start`), arguments from anything that serialises
//! to an object, and exports a model can use from any hub.

#[path = "support/common.rs"]
mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use common::*;
use mcp_hub::{
    Approval, ApprovalHook, ApprovalRequest, CollisionPolicy, Hub, HubConfig, HubError, ServerSpec,
    ToolCall, anthropic_tools, openai_tools,
};
use mcp_testkit::{Behavior, Recorder, Script};
use mcp_transport::{BoxFuture, Connector, StdioConfig, StdioConnector};
use mcp_types::ErrorCause;
use serde::Serialize;
use serde_json::{Map, Value, json};

fn text(text: &str) -> Behavior {
    Behavior::Text { text: text.into() }
}

/// A connector for a program that does not exist: starting it would fail,
/// so a start that reports a registration problem must not have tried.
fn never_started() -> StdioConnector {
    StdioConnector::new(StdioConfig::new("/nonexistent/mcp-hub-test-server"))
}

#[tokio::test]
async fn a_builder_chain_needs_no_question_marks_and_start_reports_the_first_problem() {
    let (good, recorder) = memory(Script::dual().tool("echo", Behavior::Echo));
    // A connector by value and a shared `Arc<dyn Connector>` alike.
    let error = Hub::builder(HubConfig::default())
        .server(ServerSpec::new("good", Arc::clone(&good)).required())
        .server(ServerSpec::new("bad name", never_started()))
        .server(ServerSpec::new("good", never_started()))
        .start()
        .await
        .expect_err("the bad name is refused");
    match &error {
        HubError::InvalidServerName { name, .. } => assert_eq!(name, "bad name"),
        other => panic!("not the bad name: {other:?}"),
    }
    assert_eq!(error.cause(), ErrorCause::Configuration);
    assert!(recorder.is_empty(), "nothing was started");

    // The duplicate comes first in registration order this time.
    let error = Hub::builder(HubConfig::default())
        .server(ServerSpec::new("good", Arc::clone(&good)))
        .server(ServerSpec::new("good", never_started()))
        .server(ServerSpec::new("", never_started()))
        .start()
        .await
        .expect_err("the duplicate is refused");
    assert!(
        matches!(&error, HubError::DuplicateServer(name) if name.as_str() == "good"),
        "{error:?}"
    );
    assert!(recorder.is_empty(), "nothing was started");

    // A setting `server()` used to check is reported the same way.
    let error = Hub::builder(HubConfig::default())
        .server(ServerSpec::new("good", Arc::clone(&good)).start_timeout(std::time::Duration::ZERO))
        .start()
        .await
        .expect_err("the zero deadline is refused");
    assert!(
        matches!(
            error,
            HubError::InvalidSetting {
                setting: "start_timeout",
                ..
            }
        ),
        "{error:?}"
    );

    let hub = Hub::builder(HubConfig::default())
        .server(ServerSpec::new("good", good).required())
        .start()
        .await
        .unwrap();
    let r = hub.call("echo", json!({"text": "hi"})).await.unwrap();
    assert_eq!(first_text(&r), "hi");
    hub.shutdown().await;
}

/// What the approval hook was shown: the exposed name, the arguments.
type Request = (Option<String>, Map<String, Value>);

/// Records what the approval hook was shown.
#[derive(Debug, Default)]
struct Shown(Mutex<Vec<Request>>);

impl ApprovalHook for Shown {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        self.0.lock().unwrap().push((
            request.exposed_name.map(str::to_owned),
            request.arguments.clone(),
        ));
        Box::pin(async { Approval::Approve })
    }
}

#[derive(Serialize)]
struct EchoArgs<'a> {
    text: &'a str,
}

#[tokio::test]
async fn a_call_takes_a_struct_a_json_value_a_map_or_nothing_and_refuses_a_non_object() {
    let (connector, recorder) = memory(
        Script::dual()
            .tool("echo", Behavior::Echo)
            .tool("ping", text("pong")),
    );
    let shown = Arc::new(Shown::default());
    let hub = Hub::builder(HubConfig::default())
        .server(ServerSpec::new("s", connector).session(quick_session()))
        .approval(shown.clone())
        .start()
        .await
        .unwrap();

    let r = hub.call("echo", EchoArgs { text: "a struct" }).await;
    assert_eq!(first_text(&r.unwrap()), "a struct");
    let r = hub.call(
        "echo",
        &EchoArgs {
            text: "a borrowed struct",
        },
    );
    assert_eq!(first_text(&r.await.unwrap()), "a borrowed struct");
    let r = hub.call("echo", json!({"text": "a json! value"})).await;
    assert_eq!(first_text(&r.unwrap()), "a json! value");
    let mut map = Map::new();
    map.insert("text".into(), "a map".into());
    let r = hub.call("s/echo", map).await;
    assert_eq!(first_text(&r.unwrap()), "a map");
    assert_eq!(first_text(&hub.call("ping", ()).await.unwrap()), "pong");
    let r = hub
        .facade()
        .call_tool("s", "echo", EchoArgs { text: "host" })
        .await;
    assert_eq!(first_text(&r.unwrap()), "host");
    // The hook saw each as the object it became.
    let seen = shown.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 6);
    assert_eq!(seen[0].1, *json!({"text": "a struct"}).as_object().unwrap());
    assert_eq!(seen[4], (Some("ping".to_owned()), Map::new()));
    assert_eq!(calls_of(&recorder, "echo"), 5);

    // Anything else is refused by name; nothing reaches the hook or the server.
    for (arguments, found) in [
        (json!([1, 2]), "an array"),
        (json!("text"), "a string"),
        (json!(42), "a number"),
        (json!(true), "a boolean"),
    ] {
        let error = hub.call("echo", &arguments).await.unwrap_err();
        match &error {
            HubError::ArgumentsNotAnObject { tool, found: f } => {
                assert_eq!((tool.as_str(), *f), ("echo", found));
            }
            other => panic!("{arguments}: {other:?}"),
        }
        assert_eq!(error.cause(), ErrorCause::Input);
        assert!(
            error.to_string().contains("must be a JSON object"),
            "{error}"
        );
    }
    let error = hub
        .facade()
        .call_tool("s", "echo", vec!["a", "list"])
        .await
        .unwrap_err();
    assert!(
        matches!(
            &error,
            HubError::ArgumentsNotAnObject { tool, found: "an array" } if tool == "echo"
        ),
        "{error:?}"
    );
    // Keys that are not strings do not make JSON at all.
    let error = hub
        .call("echo", HashMap::from([((1, 2), "x")]))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, HubError::ArgumentsNotSerializable { tool, .. } if tool == "echo"),
        "{error:?}"
    );
    assert_eq!(error.cause(), ErrorCause::Input);
    assert_eq!(shown.0.lock().unwrap().len(), 6);
    assert_eq!(calls_of(&recorder, "echo"), 5, "nothing more was sent");
    hub.shutdown().await;
}

/// `everything/echo` (shared with `other`, so qualified), a name with a
/// space, one with a dot, and a safe name the space's form would take.
fn servers() -> [(ServerSpec, Recorder); 2] {
    let (everything, re) = memory(
        Script::dual()
            .tool("echo", Behavior::Echo)
            .tool("say hello", text("hello"))
            .tool("files.read", text("read"))
            .tool("say_hello", text("the other hello")),
    );
    let (other, ro) = memory(Script::dual().tool("echo", Behavior::Echo));
    [
        (ServerSpec::new("everything", everything), re),
        (ServerSpec::new("other", other), ro),
    ]
}

async fn hub_of(config: HubConfig, hook: Option<Arc<Shown>>) -> (Hub, [Recorder; 2]) {
    let [(everything, re), (other, ro)] = servers();
    let mut builder = Hub::builder(config).server(everything).server(other);
    if let Some(hook) = hook {
        builder = builder.approval(hook);
    }
    (builder.start().await.unwrap(), [re, ro])
}

fn exported_names(tools: &Value, key: impl Fn(&Value) -> &Value) -> Vec<String> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| key(t).as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_default_hub_exports_provider_safe_names_and_the_models_calls_come_back() {
    let shown = Arc::new(Shown::default());
    let (hub, [everything, other]) = hub_of(HubConfig::default(), Some(shown.clone())).await;
    let ns = hub.namespace();
    // The names stay what they are everywhere but in the exports.
    let names: Vec<&str> = ns.tools().iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "everything/echo",
            "say hello",
            "files.read",
            "say_hello",
            "other/echo"
        ]
    );

    let anthropic = anthropic_tools(&ns).unwrap();
    let exported = exported_names(&anthropic, |t| &t["name"]);
    let openai = openai_tools(&ns).unwrap();
    assert_eq!(
        exported,
        exported_names(&openai, |t| &t["function"]["name"])
    );
    let hello = exported[1].clone();
    assert!(
        hello.starts_with("say_hello_") && hello.len() == "say_hello_".len() + 8,
        "{hello}"
    );
    assert_eq!(
        exported,
        [
            "everything_echo",
            &hello,
            "files_read",
            "say_hello",
            "other_echo"
        ]
    );
    assert!(exported.iter().all(|n| mcp_hub::is_provider_safe(n)));
    let unique: std::collections::HashSet<&String> = exported.iter().collect();
    assert_eq!(unique.len(), exported.len());

    // Anthropic: the model's tool_use with the exported name.
    let call = ToolCall::from_anthropic(&json!({
        "type": "tool_use", "id": "toolu_1", "name": "everything_echo",
        "input": {"text": "from claude"}
    }))
    .unwrap();
    let route = call.route(&ns).unwrap();
    assert_eq!(route.server.as_str(), "everything");
    assert_eq!(route.target, mcp_hub::RouteTarget::Tool("echo".into()));
    let r = hub.call(&call.name, call.arguments).await.unwrap();
    assert_eq!(first_text(&r), "from claude");
    assert_eq!(
        (calls_of(&everything, "echo"), calls_of(&other, "echo")),
        (1, 0)
    );

    // OpenAI: the suffixed alias of `say hello`, not the real `say_hello`.
    let call = ToolCall::from_openai(&json!({
        "id": "call_1", "type": "function",
        "function": {"name": hello, "arguments": "{}"}
    }))
    .unwrap();
    let route = call.route(&ns).unwrap();
    assert_eq!(route.target, mcp_hub::RouteTarget::Tool("say hello".into()));
    let r = hub.call(&call.name, call.arguments).await.unwrap();
    assert_eq!(first_text(&r), "hello");
    let r = hub.call("say_hello", ()).await.unwrap();
    assert_eq!(first_text(&r), "the other hello");

    // `Hub::call` directly, with an alias and with the exposed names.
    assert_eq!(
        first_text(&hub.call("files_read", ()).await.unwrap()),
        "read"
    );
    assert_eq!(
        first_text(&hub.call("files.read", ()).await.unwrap()),
        "read"
    );
    let r = hub.call("other_echo", json!({"text": "o"})).await.unwrap();
    assert_eq!(first_text(&r), "o");
    assert_eq!(
        (calls_of(&everything, "echo"), calls_of(&other, "echo")),
        (1, 1)
    );
    // The hook is shown the exposed name whichever form the model used.
    let exposed: Vec<Option<String>> = shown
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|(name, _)| name.clone())
        .collect();
    assert_eq!(
        exposed,
        [
            "everything/echo",
            "say hello",
            "say_hello",
            "files.read",
            "files.read",
            "other/echo"
        ]
        .map(|n| Some(n.to_owned()))
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn the_exported_names_are_the_same_on_every_hub_of_the_same_servers() {
    let export = |hub: &Hub| anthropic_tools(&hub.namespace()).unwrap();
    let (first, _) = hub_of(HubConfig::default(), None).await;
    let (second, _) = hub_of(HubConfig::default(), None).await;
    let safe = HubConfig {
        policy: CollisionPolicy::Prefix,
        provider_safe_names: true,
        ..HubConfig::default()
    };
    let (named_safe, _) = hub_of(safe, None).await;
    assert_eq!(export(&first), export(&second));
    // Under `provider_safe_names` the names are the aliases.
    assert_eq!(export(&first), export(&named_safe));
    let names: Vec<String> = named_safe
        .namespace()
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, exported_names(&export(&first), |t| &t["name"]));
    for hub in [first, second, named_safe] {
        hub.shutdown().await;
    }
}

/// `Connector` is implemented for `Arc<C>`, defaults included, so a shared
/// connector keeps what it says about itself.
#[test]
fn a_shared_connector_forwards_every_method() {
    #[derive(Debug)]
    struct Remote;
    impl Connector for Remote {
        fn connect(
            &self,
        ) -> BoxFuture<'_, Result<mcp_transport::Connection, mcp_transport::TransportError>>
        {
            Box::pin(async { Err(mcp_transport::TransportError::CredentialsInUrl) })
        }
        fn is_stdio(&self) -> bool {
            false
        }
        fn fallback(&self) -> Option<Arc<dyn Connector>> {
            Some(Arc::new(never_started()))
        }
        fn cache_key(&self) -> Option<String> {
            Some("https://example.test/mcp".into())
        }
    }
    let shared: Arc<dyn Connector> = Arc::new(Remote);
    let spec = ServerSpec::new("remote", Arc::clone(&shared));
    assert!(!spec.connector.is_stdio());
    assert_eq!(
        spec.connector.cache_key().as_deref(),
        Some("https://example.test/mcp")
    );
    assert!(spec.connector.fallback().unwrap().is_stdio());
    let by_value = ServerSpec::new("local", never_started());
    assert!(by_value.connector.is_stdio());
}
