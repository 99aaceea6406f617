//! `mcp serve --stdio` through the binary, with our own session as the
//! host (over the binary's stdin and stdout): the configured servers as
//! one, governed by the configuration and `--grant`, ended by the host
//! closing its side; a changed tool list reviewed through the control
//! socket of the running gateway with `mcp serve --control`.

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mcp_session::{
    ClientHandlers, Negotiation, Ready, Session, SessionConfig, SessionEvent, SessionEvents,
};
use mcp_transport::{StdioConfig, StdioConnector};
use serde_json::json;
use support::*;

/// Our session connected to `mcp serve --stdio` with `extra` flags.
async fn host(config: &Path, extra: &[&str], mode: Negotiation) -> Session<Ready> {
    host_with(config, extra, mode, ClientHandlers::new()).await
}

/// [`host`] with these client features.
async fn host_with(
    config: &Path,
    extra: &[&str],
    mode: Negotiation,
    handlers: ClientHandlers,
) -> Session<Ready> {
    let mut args = vec![
        "--config".to_owned(),
        config.display().to_string(),
        "serve".to_owned(),
        "--stdio".to_owned(),
    ];
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    let mut stdio = StdioConfig::new(MCP).args(args);
    stdio.shutdown_grace = Duration::from_secs(20);
    let session = Session::connect(
        Arc::new(StdioConnector::new(stdio)),
        SessionConfig {
            request_timeout: Duration::from_secs(30),
            probe_timeout: Duration::from_secs(20),
            handlers,
            ..SessionConfig::default()
        },
    )
    .await
    .expect("the gateway starts");
    session.negotiate(mode).await.expect("negotiation")
}

async fn names(host: &Session<Ready>) -> Vec<String> {
    let mut names: Vec<String> = host
        .list_tools()
        .await
        .unwrap()
        .tools()
        .iter()
        .map(|t| t.name.clone())
        .collect();
    names.sort();
    names
}

fn servers() -> serde_json::Value {
    json!({"mcpServers": {
        "notes": script(json!({
            "versions": ["2025-06-18", "2025-11-25"],
            "tools": [
                {"name": "search", "inputSchema": {"type": "object"},
                 "behavior": {"kind": "text", "text": "in notes"}},
                {"name": "add", "inputSchema": {"type": "object"},
                 "behavior": {"kind": "add"}},
                {"name": "drop", "inputSchema": {"type": "object"},
                 "behavior": {"kind": "text", "text": "dropped"}}
            ]
        })),
        "files": {
            "command": testkit(),
            "args": ["--script-json", json!({
                "versions": ["2026-07-28"],
                "tools": [
                    {"name": "search", "inputSchema": {"type": "object"},
                     "behavior": {"kind": "text", "text": "in files"}}
                ]
            }).to_string()],
            "permission": "files",
        },
    }})
}

#[test]
fn serve_stdio_is_one_governed_server_for_a_host_and_ends_with_its_input() {
    let sandbox = Sandbox::new();
    let mut config = servers();
    config["mcpServers"]["notes"]["allow"] = json!({"tools": ["search", "add"]});
    sandbox.write("servers.json", &config.to_string());
    let path = sandbox.path().join("servers.json");
    runtime().block_on(async {
        // Without the grant, `files` is hidden; `drop` is off the allow-list.
        let plain = host(&path, &[], Negotiation::Auto).await;
        assert_eq!(plain.era(), mcp_types::Era::Modern);
        assert_eq!(names(&plain).await, ["add", "search"]);
        let sum = plain
            .call_tool("add", json!({"a": 2, "b": 2}))
            .await
            .unwrap();
        assert_eq!(sum.text(), "4");
        let dead = plain.close().await;
        assert_eq!(dead.info().exit_code, Some(0), "{:?}", dead.info());

        let granted = host(&path, &["--grant", "files"], Negotiation::Legacy).await;
        // Granted: the shared name is ambiguous, both qualified names served.
        assert_eq!(
            names(&granted).await,
            ["add", "files/search", "notes/search"]
        );
        let found = granted.call_tool("files/search", json!({})).await.unwrap();
        assert_eq!(found.text(), "in files");
        let dead = granted.close().await;
        assert_eq!(dead.info().exit_code, Some(0), "{:?}", dead.info());
    });
}

#[test]
fn a_tool_marked_confirm_is_put_to_the_hosts_user_before_the_call() {
    let sandbox = Sandbox::new();
    let mut config = servers();
    config["mcpServers"]["notes"]["confirm"] = json!(["drop"]);
    sandbox.write("servers.json", &config.to_string());
    let path = sandbox.path().join("servers.json");
    let answering = |action: mcp_types::ElicitAction| {
        ClientHandlers::new().on_elicitation(move |request| {
            let action = action.clone();
            async move {
                let mcp_session::Elicitation::Form(form) = request else {
                    panic!("a form was expected");
                };
                assert!(form.message.contains("`drop`"), "{}", form.message);
                Ok(mcp_types::ElicitResult::new(action))
            }
        })
    };
    runtime().block_on(async {
        let yes = host_with(
            &path,
            &[],
            Negotiation::Legacy,
            answering(mcp_types::ElicitAction::Accept),
        )
        .await;
        let dropped = yes.call_tool("drop", json!({})).await.unwrap();
        assert_eq!(dropped.text(), "dropped");
        // Unmarked: no question (the handler would fail the message check).
        let sum = yes.call_tool("add", json!({"a": 1, "b": 2})).await.unwrap();
        assert_eq!(sum.text(), "3");
        yes.close().await;

        let no = host_with(
            &path,
            &[],
            Negotiation::Legacy,
            answering(mcp_types::ElicitAction::Decline),
        )
        .await;
        let refused = no.call_tool("drop", json!({})).await.unwrap();
        assert!(refused.failed());
        assert!(
            refused.text().contains("not approved"),
            "{}",
            refused.text()
        );
        no.close().await;

        // A host that cannot be asked is refused too.
        let mute = host(&path, &[], Negotiation::Legacy).await;
        let refused = mute.call_tool("drop", json!({})).await.unwrap();
        assert!(refused.failed());
        mute.close().await;
    });
}

async fn heard(events: &mut SessionEvents, method: &str) -> bool {
    let wait = async {
        while let Some(event) = events.next().await {
            if matches!(&event, SessionEvent::Notification { method: m, .. } if m == method) {
                return true;
            }
        }
        false
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .unwrap_or(false)
}

#[test]
fn a_running_gateway_holds_a_changed_tool_list_until_the_operator_adopts_it() {
    let sandbox = Sandbox::new();
    let config = json!({"mcpServers": {"lab": script(json!({
        "versions": ["2025-11-25"],
        "tools": [
            {"name": "change", "inputSchema": {"type": "object"},
             "behavior": {"kind": "change_list", "list": "tools"}},
            {"name": "fresh", "inputSchema": {"type": "object"},
             "behavior": {"kind": "text", "text": "new"}, "appear_at_change": 1}
        ]
    }))}});
    sandbox.write("servers.json", &config.to_string());
    let path = sandbox.path().join("servers.json");
    let socket = sandbox.path().join("control.sock");
    let socket_text = socket.display().to_string();
    runtime().block_on(async {
        let mut gateway = host(&path, &["--control", &socket_text], Negotiation::Legacy).await;
        let mut events = gateway.take_events().unwrap();
        assert_eq!(names(&gateway).await, ["change"]);
        gateway.call_tool("change", json!({})).await.unwrap();
        // The operator looks until the change shows (each look is a real
        // exchange with the gateway, bounded).
        let mut pending = String::new();
        for _ in 0..200 {
            let (code, out, err) = sandbox.run(&["serve", "--control", &socket_text, "pending"]);
            assert_eq!(code, 0, "{err}");
            if out.contains("+fresh") {
                pending = out;
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(pending.starts_with("lab generation "), "{pending}");
        let generation: String = pending["lab generation ".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        // Nothing was announced to the host yet.
        assert!(events.try_next().is_none_or(|e| !matches!(
            &e,
            SessionEvent::Notification { method, .. } if method == "notifications/tools/list_changed"
        )));
        assert_eq!(names(&gateway).await, ["change"]);
        let (code, out, err) = sandbox.run(&[
            "serve",
            "--control",
            &socket_text,
            "adopt",
            "lab",
            &generation,
        ]);
        assert_eq!((code, out.as_str()), (0, "ok\n"), "{err}");
        assert!(heard(&mut events, "notifications/tools/list_changed").await);
        assert_eq!(names(&gateway).await, ["change", "fresh"]);
        // A second adoption is refused: nothing waits.
        let (code, _, err) = sandbox.run(&[
            "serve",
            "--control",
            &socket_text,
            "adopt",
            "lab",
            &generation,
        ]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("refused"), "{err}");
        let dead = gateway.close().await;
        assert_eq!(dead.info().exit_code, Some(0));
        assert!(!socket.exists());
    });
}

#[test]
fn serve_says_how_when_given_neither_stdio_nor_a_control_command() {
    let sandbox = Sandbox::new();
    let (code, out, err) = sandbox.run(&["serve"]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(err.contains("mcp serve --stdio"), "{err}");
}
