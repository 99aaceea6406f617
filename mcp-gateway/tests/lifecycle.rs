//! What changes while the host is connected: a changed tool list held for
//! the operator's review (the host hears `list_changed` only once it is
//! adopted), a server that dies and comes back, requests from servers
//! passed to the host, the host's roots passed to stdio servers.

#[path = "support/common.rs"]
mod common;

use std::os::unix::process::CommandExt as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcp_gateway::{GatewayConfig, GatewayError, control};
use mcp_session::{ClientHandlers, Roots};
use mcp_testkit::{Behavior, ListKind, Script, ToolSpec};
use mcp_transport::{BoxFuture, Connection, Connector, TransportError};
use mcp_types::{CreateMessageParams, CreateMessageResult, Root};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

const LIST_CHANGED: &str = "notifications/tools/list_changed";

#[tokio::test]
async fn a_changed_tool_list_waits_for_review_and_the_host_hears_of_it_once_adopted() {
    let script = Script::legacy()
        .tool(
            "change",
            Behavior::ChangeList {
                list: ListKind::Tools,
            },
        )
        .tool_spec(
            ToolSpec::new("fresh", Behavior::Text { text: "new".into() }).appearing_at_change(1),
        );
    let (server, _) = memory(script);
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("gateway.sock");
    let mut setup = Setup::new(vec![spec("lab", server)]);
    setup.config = GatewayConfig::default().control(&socket);
    let mut running = start(setup).await;
    assert_eq!(tool_names(&running.host).await, ["change"]);

    running.host.call_tool("change", json!({})).await.unwrap();
    let pending = running.reviews.until(|p| !p.is_empty()).await;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].server, "lab");
    assert_eq!(pending[0].diff.added, ["fresh"]);
    let generation = pending[0].generation;
    // Held for review: the host is served the approved list and told nothing.
    assert!(!heard_already(&mut running.events, LIST_CHANGED));
    assert_eq!(tool_names(&running.host).await, ["change"]);

    // The operator reviews through the control socket.
    let listed = control::send(&socket, "pending").await.unwrap();
    let line: Value = serde_json::from_str(&listed[0]).unwrap();
    assert_eq!(line["server"], "lab");
    assert_eq!(line["added"], json!(["fresh"]));
    assert_eq!(line["generation"], generation);
    control::send(&socket, &format!("adopt lab {generation}"))
        .await
        .unwrap();
    heard(&mut running.events, LIST_CHANGED).await.unwrap();
    let mut names = tool_names(&running.host).await;
    names.sort();
    assert_eq!(names, ["change", "fresh"]);
    assert_eq!(
        running
            .host
            .call_tool("fresh", json!({}))
            .await
            .unwrap()
            .text(),
        "new"
    );
    // Nothing waits any more: a second adoption is refused, in our words.
    let again = control::send(&socket, &format!("adopt lab {generation}"))
        .await
        .unwrap_err();
    assert!(
        matches!(again, GatewayError::ControlRefused(_)),
        "{again:?}"
    );
    let unknown = control::send(&socket, "promote lab 1").await.unwrap_err();
    assert!(matches!(unknown, GatewayError::ControlRefused(_)));
    running.close().await;
    // The socket goes with the gateway.
    assert!(!socket.exists());
}

/// The control socket serves its own user. Another user who reaches it
/// (here its permissions are loosened by hand, as they are under a
/// permissive umask in the moment between its creation and its `chmod`) is
/// closed unanswered; that half needs root to act as another user, and
/// runs where the tests run as root (CI does).
#[tokio::test]
async fn the_control_socket_serves_only_its_own_user() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let (server, _) = memory(Script::legacy());
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("gateway.sock");
    let mut setup = Setup::new(vec![spec("lab", server)]);
    setup.config = GatewayConfig::default().control(&socket);
    let running = start(setup).await;
    let mode = std::fs::metadata(&socket).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(
        control::send(&socket, "pending").await.unwrap(),
        Vec::<String>::new()
    );

    let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    if root {
        let open = std::fs::Permissions::from_mode(0o777);
        std::fs::set_permissions(dir.path(), open.clone()).unwrap();
        std::fs::set_permissions(&socket, open).unwrap();
        // Prints what the socket answered, `b''` when it closed.
        let probe = "import socket, sys\n\
                     s = socket.socket(socket.AF_UNIX)\n\
                     s.connect(sys.argv[1])\n\
                     try:\n    s.sendall(b'pending\\n'); print(repr(s.recv(100)))\n\
                     except OSError:\n    print(repr(b''))\n";
        // Off the runtime's thread, which serves the socket.
        let path = socket.clone();
        let nobody = tokio::task::spawn_blocking(move || {
            std::process::Command::new("python3")
                .args(["-c", probe])
                .arg(path)
                .uid(65534)
                .gid(65534)
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        let said = String::from_utf8_lossy(&nobody.stdout);
        assert!(nobody.status.success(), "{nobody:?}");
        assert_eq!(said.trim(), "b''", "another user was answered");
        // The gateway's own user still is.
        assert!(control::send(&socket, "pending").await.is_ok());
    }
    running.close().await;
}

/// Connects through `inner` once per permit the test gives.
#[derive(Debug)]
struct Gated {
    inner: Arc<dyn Connector>,
    permits: Arc<Semaphore>,
}

impl Connector for Gated {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, TransportError>> {
        Box::pin(async move {
            self.permits
                .acquire()
                .await
                .expect("the gate stays open")
                .forget();
            self.inner.connect().await
        })
    }

    fn is_stdio(&self) -> bool {
        self.inner.is_stdio()
    }
}

#[tokio::test]
async fn a_server_that_dies_shows_as_its_tools_leaving_and_returning_and_its_call_fails_once() {
    let script = Script::legacy().tool("stuck", Behavior::Hang).tool(
        "ok",
        Behavior::Text {
            text: "fine".into(),
        },
    );
    let (inner, recorder) = memory(script);
    let permits = Arc::new(Semaphore::new(1));
    let gated = Arc::new(Gated {
        inner,
        permits: Arc::clone(&permits),
    });
    let (other, _) = memory(Script::legacy().tool(
        "steady",
        Behavior::Text {
            text: "here".into(),
        },
    ));
    let mut running = start(Setup::new(vec![spec("lab", gated), spec("other", other)])).await;
    let mut names = tool_names(&running.host).await;
    names.sort();
    assert_eq!(names, ["ok", "steady", "stuck"]);
    // Starting the servers changed nothing the host was served.
    assert!(!heard_already(&mut running.events, LIST_CHANGED));

    let call = running.host.call_tool("stuck", json!({}));
    let kill = async {
        let reached = recorder
            .wait_until(Duration::from_secs(10), |frames| {
                frames.iter().any(|f| f["params"]["name"] == "stuck")
            })
            .await;
        assert!(reached);
        assert!(running.hub.kill_server("lab").unwrap());
    };
    let (result, ()) =
        tokio::time::timeout(Duration::from_secs(10), async { tokio::join!(call, kill) })
            .await
            .expect("the call in flight fails promptly");
    let result = result.unwrap();
    assert!(result.failed());
    let kind = &result.meta.as_ref().unwrap().0["mcp-gateway/error"]["kind"];
    assert_eq!(kind, "server_died", "{}", result.text());

    // Down: its tools leave the host's list, and the host is told.
    heard(&mut running.events, LIST_CHANGED).await.unwrap();
    assert_eq!(tool_names(&running.host).await, ["steady"]);
    let refused = running.host.call_tool("ok", json!({})).await.unwrap();
    assert!(refused.failed());

    // Back: they return, and the host is told again.
    permits.add_permits(1);
    heard(&mut running.events, LIST_CHANGED).await.unwrap();
    let mut names = tool_names(&running.host).await;
    names.sort();
    assert_eq!(names, ["ok", "steady", "stuck"]);
    assert_eq!(
        running
            .host
            .call_tool("ok", json!({}))
            .await
            .unwrap()
            .text(),
        "fine"
    );
    // The call that was in flight was never replayed.
    let stuck_calls = recorder
        .with_method("tools/call")
        .iter()
        .filter(|f| f["params"]["name"] == "stuck")
        .count();
    assert_eq!(stuck_calls, 1);
    running.close().await;
}

fn asking(script: Script) -> Script {
    script.tool(
        "ask",
        Behavior::AskClient {
            method: "sampling/createMessage".into(),
            params: json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
                "maxTokens": 5,
            }),
        },
    )
}

#[tokio::test]
async fn a_servers_sampling_request_is_answered_by_the_host_in_either_era_of_the_server() {
    let (old, _) = memory(asking(Script::legacy()));
    let (new, _) = memory(asking(Script::modern()));
    let mut setup = Setup::new(vec![spec("old", old), spec("new", new)]);
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    setup.handlers = ClientHandlers::new().on_sampling(move |params: CreateMessageParams| {
        let seen = Arc::clone(&seen);
        async move {
            let server = params
                .meta
                .as_ref()
                .and_then(|m| m.get("mcp-gateway/server").cloned());
            seen.lock().unwrap().push(server);
            Ok(CreateMessageResult::text("host-model", "four"))
        }
    });
    let running = start(setup).await;
    for name in ["old/ask", "new/ask"] {
        let result = running.host.call_tool(name, json!({})).await.unwrap();
        assert!(!result.failed(), "{name}: {}", result.text());
        assert!(result.text().contains("four"), "{}", result.text());
        assert!(result.text().contains("host-model"), "{}", result.text());
    }
    // Each request came labelled with the server that made it.
    assert_eq!(
        *asked.lock().unwrap(),
        [Some(json!("old")), Some(json!("new"))]
    );
    running.close().await;
}

#[tokio::test]
async fn the_hosts_progress_on_a_servers_sampling_or_elicitation_reaches_that_server_under_its_own_token()
 {
    let script = asking_for_progress(Script::legacy());
    let (server, recorder) = memory(script);
    let mut setup = Setup::new(vec![spec("lab", server)]);
    let tokens = Arc::new(Mutex::new(Vec::new()));
    setup.handlers = ClientHandlers::new()
        .sampling(ReportingHost::new(&tokens))
        .elicitation(ReportingHost::new(&tokens));
    let running = start(setup).await;
    progress_is_relayed(&running.host, &recorder, &tokens, ("ask", "ask_quietly")).await;
    progress_is_relayed(
        &running.host,
        &recorder,
        &tokens,
        ("ask_form", "ask_form_quietly"),
    )
    .await;
    running.close().await;
}

#[tokio::test]
async fn without_the_hosts_sampling_capability_a_servers_request_is_refused_by_name() {
    let (old, _) = memory(asking(Script::legacy()));
    let running = start(Setup::new(vec![spec("old", old)])).await;
    let result = running.host.call_tool("ask", json!({})).await.unwrap();
    // The testkit reports the error answer it got as `isError`.
    assert!(result.failed());
    assert!(
        result.text().contains("did not declare `sampling`"),
        "{}",
        result.text()
    );
    running.close().await;
}

/// Sends a message when dropped: how a test sees a handler given up.
struct DropSignal(Option<tokio::sync::oneshot::Sender<()>>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

#[tokio::test]
async fn a_server_giving_up_its_sampling_request_cancels_it_at_the_host() {
    // The server waits 300 ms for the answer, then cancels its request
    // (notifications/cancelled); the host never answers on its own.
    let mut script = asking(Script::legacy());
    script.ask_timeout_ms = 300;
    let (old, recorder) = memory(script);
    let mut setup = Setup::new(vec![spec("old", old)]);
    let (started_tx, mut started_rx) = tokio::sync::mpsc::channel::<()>(1);
    let (dropped_tx, dropped_rx) = tokio::sync::oneshot::channel::<()>();
    let dropped = Arc::new(Mutex::new(Some(dropped_tx)));
    setup.handlers = ClientHandlers::new().on_sampling(move |_| {
        let started = started_tx.clone();
        let signal = DropSignal(dropped.lock().unwrap().take());
        async move {
            let _signal = signal;
            started.send(()).await.unwrap();
            std::future::pending::<()>().await;
            unreachable!()
        }
    });
    let running = start(setup).await;
    let result = running.host.call_tool("ask", json!({})).await.unwrap();
    assert!(result.failed(), "{}", result.text());
    assert!(
        result.text().contains("did not answer"),
        "{}",
        result.text()
    );
    started_rx.recv().await.expect("the host was asked");
    // The cancel went server → gateway → host: the host's handler is
    // stopped (bounded, so a regression fails rather than hangs).
    tokio::time::timeout(Duration::from_secs(20), dropped_rx)
        .await
        .expect("the host's sampling handler was not stopped")
        .unwrap();
    // And nobody answered the server's cancelled request late.
    let answered = recorder
        .received()
        .iter()
        .any(|m| m.get("method").is_none() && m["id"] == "mcp-testkit-0");
    assert!(!answered, "{:?}", recorder.received());
    running.close().await;
}

#[tokio::test]
async fn the_hosts_roots_go_to_a_stdio_server() {
    let script = Script::legacy().tool(
        "roots",
        Behavior::AskClient {
            method: "roots/list".into(),
            params: json!({}),
        },
    );
    let mut setup = Setup::new(vec![spec("local", stdio(&script))]);
    setup.handlers =
        ClientHandlers::new().roots(Roots::new(vec![Root::new("file:///host/project")]));
    let running = start(setup).await;
    // The gateway asks the host for its roots once the host is initialized;
    // until that answer is in, the server sees its configured ones (none
    // here). Each try is a real round trip, bounded.
    let found = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let result = running.host.call_tool("roots", json!({})).await.unwrap();
            if result.text().contains("file:///host/project") {
                return result.text();
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the host's roots reach the server");
    assert!(!found.contains("error"), "{found}");
    running.close().await;
}

#[tokio::test]
async fn a_servers_elicitation_reaches_the_host_in_form_mode_and_url_mode_needs_its_declaration() {
    let script = Script::legacy()
        .tool(
            "form",
            Behavior::AskClient {
                method: "elicitation/create".into(),
                params: json!({
                    "mode": "form",
                    "message": "Your name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                }),
            },
        )
        .tool(
            "link",
            Behavior::AskClient {
                method: "elicitation/create".into(),
                params: json!({
                    "mode": "url",
                    "message": "Sign in",
                    "url": "https://example.com/login",
                    "elicitationId": "e1",
                }),
            },
        );
    let (server, _) = memory(script);
    let mut setup = Setup::new(vec![spec("lab", server)]);
    // Form mode only: the host does not declare URL mode.
    let labels = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&labels);
    setup.handlers = ClientHandlers::new().on_elicitation(move |request| {
        let seen = Arc::clone(&seen);
        async move {
            let mcp_session::Elicitation::Form(form) = request else {
                return Ok(mcp_types::ElicitResult::decline());
            };
            let asked_by = form
                .meta
                .as_ref()
                .and_then(|m| m.get("mcp-gateway/server").cloned());
            seen.lock().unwrap().push(asked_by);
            Ok(mcp_types::ElicitResult::accept([(
                "name",
                mcp_types::ElicitValue::String("Ada".into()),
            )]))
        }
    });
    let running = start(setup).await;
    let answered = running.host.call_tool("form", json!({})).await.unwrap();
    assert!(!answered.failed(), "{}", answered.text());
    assert!(answered.text().contains("Ada"), "{}", answered.text());
    assert_eq!(*labels.lock().unwrap(), [Some(json!("lab"))]);
    let refused = running.host.call_tool("link", json!({})).await.unwrap();
    assert!(refused.failed());
    assert!(
        refused
            .text()
            .contains("did not declare URL-mode elicitation"),
        "{}",
        refused.text()
    );
    running.close().await;
}

#[tokio::test]
async fn a_2026_host_hears_an_adopted_change_on_its_listen_stream_and_samples_in_a_round() {
    let script = asking(
        Script::legacy()
            .tool(
                "change",
                Behavior::ChangeList {
                    list: ListKind::Tools,
                },
            )
            .tool_spec(
                ToolSpec::new("fresh", Behavior::Text { text: "new".into() })
                    .appearing_at_change(1),
            ),
    );
    let (server, _) = memory(script);
    let mut setup = Setup::new(vec![spec("lab", server)]);
    setup.negotiation = mcp_session::Negotiation::Modern;
    setup.handlers = ClientHandlers::new()
        .on_sampling(|_| async { Ok(CreateMessageResult::text("sampled in a round", "host")) });
    let running = start(setup).await;
    assert_eq!(running.host.era(), mcp_types::Era::Modern);
    let mut stream = running
        .host
        .subscribe(mcp_types::SubscriptionFilter {
            tools_list_changed: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(matches!(
        stream.next().await,
        Some(mcp_session::SubscriptionEvent::Acknowledged { .. })
    ));

    running.host.call_tool("change", json!({})).await.unwrap();
    let pending = running.reviews.until(|p| !p.is_empty()).await;
    running
        .reviews
        .adopt(&pending[0].server, pending[0].generation)
        .unwrap();
    let heard = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("the stream hears the change");
    assert!(
        matches!(
            heard,
            Some(mcp_session::SubscriptionEvent::ToolsListChanged)
        ),
        "{heard:?}"
    );
    assert!(
        tool_names(&running.host)
            .await
            .contains(&"fresh".to_owned())
    );

    // A stateless host has no session to carry a server's request: the
    // legacy server's sampling reaches it as a round of its call instead.
    let sampled = running.host.call_tool("ask", json!({})).await.unwrap();
    assert!(!sampled.failed(), "{}", sampled.text());
    assert!(
        sampled.text().contains("sampled in a round"),
        "{}",
        sampled.text()
    );
    drop(stream);
    running.close().await;
}
