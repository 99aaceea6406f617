//! Exercises a real server through the public API the way a host would, and
//! prints one JSON line per check: `{"check", "status": "pass|fail|skip",
//! "detail"}`. Used by `cargo xtask interop`.
//!
//! Usage: `interop <auto|legacy|modern> (--url URL [--sse] | -- COMMAND ARGS…)`

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcp_session::{
    ClientHandlers, Elicitation, ElicitationHandler, HandlerError, Negotiation, Ready, Roots,
    SamplingHandler, Session, SessionConfig, SessionEvent, SubscriptionEvent,
};
use mcp_transport::{
    BoxFuture, Connector, HttpConfig, HttpConnector, SseConnector, StdioConfig, StdioConnector,
};
use mcp_types::{
    CompletionReference, CreateMessageParams, CreateMessageResult, ElicitAction, ElicitResult,
    LoggingLevel, PromptReference, Root, SamplingContent, SubscriptionFilter,
};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

/// The directory offered as the client's root (created if missing).
fn roots_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join("mcp-interop-root");
    let _ = std::fs::create_dir_all(&dir);
    dir
}

fn report(check: &str, status: &str, detail: impl Into<String>) {
    let line = json!({"check": check, "status": status, "detail": detail.into()});
    println!("{line}");
}

fn outcome<T, E: std::fmt::Display>(
    check: &str,
    result: Result<T, E>,
    ok: impl FnOnce(&T) -> String,
) -> Option<T> {
    match result {
        Ok(v) => {
            report(check, "pass", ok(&v));
            Some(v)
        }
        Err(e) => {
            report(check, "fail", e.to_string());
            None
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mode = match argv.first().map(String::as_str) {
        Some("legacy") => Negotiation::Legacy,
        Some("modern") => Negotiation::Modern,
        _ => Negotiation::Auto,
    };
    let connector: Arc<dyn Connector> = match argv.get(1).map(String::as_str) {
        Some("--url") => {
            let url = argv.get(2).cloned().unwrap_or_default();
            let config = HttpConfig::new(url);
            if argv.iter().any(|a| a == "--sse") {
                Arc::new(SseConnector::new(config))
            } else {
                Arc::new(HttpConnector::new(config))
            }
        }
        _ => {
            let rest: Vec<String> = argv
                .iter()
                .skip_while(|a| *a != "--")
                .skip(1)
                .cloned()
                .collect();
            let Some((program, args)) = rest.split_first() else {
                eprintln!(
                    "usage: interop <auto|legacy|modern> (--url URL [--sse] | -- COMMAND ARGS…)"
                );
                std::process::exit(2);
            };
            let mut config = StdioConfig::new(program.clone()).args(args.iter().cloned());
            config.inherit_env.push("MEMORY_FILE_PATH".into());
            Arc::new(StdioConnector::new(config))
        }
    };
    let (asked_tx, asked_rx) = mpsc::channel(64);
    let config = SessionConfig {
        handlers: ClientHandlers::new()
            .sampling(Model(asked_tx.clone()))
            .elicitation(User(asked_tx.clone()))
            .roots(Roots::new(vec![Root::new(format!(
                "file://{}",
                roots_dir().display()
            ))])),
        request_timeout: Duration::from_secs(30),
        ..SessionConfig::default()
    };
    let session = match Session::connect(connector, config).await {
        Ok(s) => s,
        Err(e) => {
            report("connect", "fail", e.to_string());
            return;
        }
    };
    let mut session = match session.negotiate(mode).await {
        Ok(s) => s,
        Err(e) => {
            report("negotiate", "fail", e.to_string());
            return;
        }
    };
    report(
        "negotiate",
        "pass",
        format!(
            "{:?} era, {}",
            session.era(),
            session.protocol_version().as_str()
        ),
    );
    let events = session.take_events();
    exercise(&session, events, asked_rx).await;
    let dead = session.close().await;
    report("close", "pass", dead.info().to_string());
}

async fn exercise(
    session: &Session<Ready>,
    mut events: Option<mcp_session::SessionEvents>,
    mut asked: mpsc::Receiver<&'static str>,
) {
    let caps = session.server_capabilities().clone();
    let Some(catalog) = outcome("tools/list", session.list_tools().await, |c| {
        format!("{} tools", c.tools().len())
    }) else {
        return;
    };
    let find = |needle: &str| {
        catalog
            .tools()
            .iter()
            .find(|t| t.name.contains(needle))
            .map(|t| t.name.clone())
    };
    let args_for = |name: &str| {
        let schema = catalog
            .get(name)
            .and_then(|t| t.input_schema.to_value().ok())
            .unwrap_or(Value::Null);
        mcp_testkit::example_arguments(&schema, "interop")
    };
    match find("echo") {
        Some(echo) => {
            let result = session.call_tool(&echo, args_for(&echo)).await;
            outcome("tools/call echo", result, |r| {
                format!("{} content blocks", r.content.len())
            });
        }
        None => report("tools/call echo", "skip", "no echo tool"),
    }
    if let Some(name) = find("long-running") {
        let (tx, mut rx) = mpsc::channel(64);
        let mut args = args_for(&name);
        args.insert("duration".into(), json!(1));
        args.insert("steps".into(), json!(3));
        let result = session
            .call_tool_with(
                &name,
                args,
                &mcp_session::CallOptions::new()
                    .progress(tx)
                    .timeout(Duration::from_secs(30)),
            )
            .await;
        let mut n = 0;
        while rx.try_recv().is_ok() {
            n += 1;
        }
        match result {
            Ok(_) if n > 0 => report("progress", "pass", format!("{n} progress notifications")),
            Ok(_) => report("progress", "fail", "no progress notification arrived"),
            Err(e) => report("progress", "fail", e.to_string()),
        }
    } else {
        report("progress", "skip", "no long-running tool");
    }
    for (needle, what) in [
        ("sampling", "sampling"),
        ("elicitation", "elicitation"),
        ("roots", "roots"),
    ] {
        let check = format!("client feature: {what}");
        let Some(name) = find(needle) else {
            report(&check, "skip", format!("no {needle} tool"));
            continue;
        };
        while asked.try_recv().is_ok() {}
        let result = session.call_tool(&name, args_for(&name)).await;
        let saw = std::iter::from_fn(|| asked.try_recv().ok()).any(|w| w == what);
        match (result, saw || what == "roots") {
            (Ok(r), true) if r.is_error != Some(true) => {
                report(&check, "pass", format!("via {name}"))
            }
            (Ok(r), _) => report(
                &check,
                "fail",
                format!("{name}: isError={:?}, handler called={saw}", r.is_error),
            ),
            (Err(e), _) => report(&check, "fail", e.to_string()),
        }
    }
    if caps.logging.is_some() || session.era() == mcp_types::Era::Modern {
        let result = session.set_log_level(LoggingLevel::Debug).await;
        outcome("logging level", result, |_| "set".to_owned());
        if let (Some(name), Some(ev)) = (find("logging"), events.as_mut()) {
            let _ = session.call_tool(&name, args_for(&name)).await;
            let got =
                wait_event(ev, Duration::from_secs(5), |m| m == "notifications/message").await;
            report(
                "logging messages",
                if got { "pass" } else { "fail" },
                "notifications/message",
            );
            let _ = session.call_tool(&name, args_for(&name)).await;
        }
    } else {
        report("logging level", "skip", "no logging capability");
    }
    if caps.resources.is_some() {
        let listing = outcome("resources/list", session.list_resources().await, |l| {
            format!("{} resources", l.items.len())
        });
        if let Some(first) = listing.as_ref().and_then(|l| l.items.first()) {
            let read = session.read_resource(&first.uri).await;
            outcome("resources/read", read, |r| {
                format!("{} contents", r.contents.len())
            });
            let filter = SubscriptionFilter {
                resource_subscriptions: Some(vec![first.uri.clone()]),
                ..SubscriptionFilter::default()
            };
            let trigger = find("subscriber");
            let subscribable = caps.resources.as_ref().and_then(|r| r.subscribe) == Some(true)
                || session.era() == mcp_types::Era::Modern;
            match (trigger, subscribable) {
                (None, _) | (_, false) => report(
                    "subscriptions",
                    "skip",
                    "the server offers no subscriptions or no way to cause an update",
                ),
                (Some(toggle), true) => match session.subscribe(filter).await {
                    Ok(mut sub) => {
                        let _ = session.call_tool(&toggle, args_for(&toggle)).await;
                        let got = tokio::time::timeout(Duration::from_secs(8), async {
                            while let Some(ev) = sub.next().await {
                                if matches!(ev, SubscriptionEvent::ResourceUpdated { .. }) {
                                    return true;
                                }
                            }
                            false
                        })
                        .await
                        .unwrap_or(false);
                        report(
                            "subscriptions",
                            if got { "pass" } else { "fail" },
                            "resources/updated for a subscribed URI",
                        );
                        let _ = sub.close(session).await;
                    }
                    Err(e) => report("subscriptions", "fail", e.to_string()),
                },
            }
        }
        outcome(
            "resources/templates/list",
            session.list_resource_templates().await,
            |l| format!("{} templates", l.items.len()),
        );
    } else {
        report("resources/list", "skip", "no resources capability");
    }
    if caps.prompts.is_some() {
        let listing = outcome("prompts/list", session.list_prompts().await, |l| {
            format!("{} prompts", l.items.len())
        });
        let first = listing.as_ref().and_then(|l| l.items.first()).cloned();
        if let Some(prompt) = first {
            let args: BTreeMap<String, String> = prompt
                .arguments
                .iter()
                .flatten()
                .filter(|a| a.required == Some(true))
                .map(|a| (a.name.clone(), "interop".to_owned()))
                .collect();
            outcome(
                "prompts/get",
                session.get_prompt(&prompt.name, args).await,
                |r| format!("{} messages", r.messages.len()),
            );
            if caps.completions.is_some()
                && let Some(arg) = prompt.arguments.iter().flatten().next()
            {
                let reference = CompletionReference::Prompt(PromptReference {
                    name: prompt.name.clone(),
                    ..PromptReference::default()
                });
                let done = session
                    .complete(reference, &arg.name, "", BTreeMap::new())
                    .await;
                outcome("completion/complete", done, |c| {
                    format!("{} values", c.completion.values.len())
                });
            }
        }
    } else {
        report("prompts/list", "skip", "no prompts capability");
    }
    // server-filesystem: it asks for our roots and makes them its allowed
    // directories.
    if catalog.get("list_allowed_directories").is_some() {
        // The server asks for the roots once it is initialized, on its own
        // schedule: give it a moment.
        let want = roots_dir().display().to_string();
        let mut listed = session
            .call_tool("list_allowed_directories", Map::new())
            .await;
        for _ in 0..20 {
            let text = listed
                .as_ref()
                .map(|r| serde_json::to_string(&r.content).unwrap_or_default());
            if text.is_ok_and(|t| t.contains(&want)) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            listed = session
                .call_tool("list_allowed_directories", Map::new())
                .await;
        }
        match listed {
            Ok(r)
                if serde_json::to_string(&r.content)
                    .unwrap_or_default()
                    .contains(&want) =>
            {
                report("roots round trip", "pass", "the server adopted our root")
            }
            Ok(r) => report(
                "roots round trip",
                "fail",
                format!("allowed: {:?}", r.content),
            ),
            Err(e) => report("roots round trip", "fail", e.to_string()),
        }
    }
    // server-memory: write an entity, read it back.
    if catalog.get("create_entities").is_some() && catalog.get("read_graph").is_some() {
        let entity = json!({"entities": [{"name": "interop-entity", "entityType": "test", "observations": ["seen"]}]});
        let created = session
            .call_tool(
                "create_entities",
                entity.as_object().cloned().unwrap_or_default(),
            )
            .await;
        let graph = session.call_tool("read_graph", Map::new()).await;
        match (created, graph) {
            (Ok(_), Ok(g))
                if serde_json::to_string(&g)
                    .unwrap_or_default()
                    .contains("interop-entity") =>
            {
                report("memory round trip", "pass", "entity written and read back")
            }
            (Err(e), _) | (_, Err(e)) => report("memory round trip", "fail", e.to_string()),
            _ => report("memory round trip", "fail", "entity not in the graph"),
        }
    }
    if session.era() == mcp_types::Era::Legacy {
        outcome("ping", session.ping().await, |_| "pong".to_owned());
    }
}

async fn wait_event(
    events: &mut mcp_session::SessionEvents,
    limit: Duration,
    want: impl Fn(&str) -> bool,
) -> bool {
    tokio::time::timeout(limit, async {
        while let Some(ev) = events.next().await {
            if let SessionEvent::Notification { method, .. } = &ev
                && want(method)
            {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or(false)
}

struct Model(mpsc::Sender<&'static str>);

impl SamplingHandler for Model {
    fn create_message(
        &self,
        _p: CreateMessageParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        Box::pin(async move {
            let _ = self.0.try_send("sampling");
            let content: SamplingContent =
                serde_json::from_value(json!({"type": "text", "text": "interop says hi"}))
                    .map_err(|_| HandlerError::internal("answer"))?;
            Ok(CreateMessageResult::new(content, "interop-model"))
        })
    }
}

struct User(mpsc::Sender<&'static str>);

impl ElicitationHandler for User {
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        Box::pin(async move {
            let _ = self.0.try_send("elicitation");
            let mut result = ElicitResult::new(ElicitAction::Accept);
            result.content = Some(request.form_defaults());
            Ok(result)
        })
    }
}
