//! Requests on a ready session: tools, deadlines, cancellation, progress,
//! dead servers, misbehaviour, bounds.

#[path = "support/common.rs"]
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use mcp_session::{CallOptions, Negotiation, SessionConfig, SessionError, SessionEvent, Violation};
use mcp_testkit::{Behavior, Script};
use serde_json::json;

fn tools_script() -> Script {
    Script::legacy()
        .tool("echo", Behavior::Echo)
        .tool("add", Behavior::Add)
        .tool("hang", Behavior::Hang)
        .tool("crash", Behavior::Crash { code: 7 })
        .tool("garbage", Behavior::Garbage)
        .tool("oops", Behavior::ToolError { text: "it broke".into() })
        .tool(
            "slow",
            Behavior::Sleep {
                ms: 300,
                progress_steps: 3,
            },
        )
        .tool(
            "ask",
            Behavior::AskClient {
                method: "sampling/createMessage".into(),
                params: json!({"messages": [], "maxTokens": 10}),
            },
        )
        .tool_json(
            json!({"name": "typed", "inputSchema": {"type": "object"},
                   "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}}),
            Behavior::Structured { value: json!({"sum": "not a number"}) },
        )
}

#[tokio::test]
async fn list_and_call_tools() {
    let (connector, _) = memory(tools_script());
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let catalog = session.list_tools().await.unwrap();
    assert_eq!(catalog.tools().len(), 9);
    assert!(catalog.get("echo").is_some());
    let result = session
        .call_tool("add", args(json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(
        result
            .structured_content
            .as_ref()
            .and_then(|v| v["sum"].as_f64()),
        Some(5.0)
    );
}

#[tokio::test]
async fn a_tool_error_is_data_not_an_error() {
    let (connector, _) = memory(tools_script());
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let result = session.call_tool("oops", ()).await.unwrap();
    assert_eq!(result.is_error, Some(true));
}

#[cfg(feature = "validation")]
#[tokio::test]
async fn arguments_are_checked_against_the_input_schema_before_sending() {
    let (connector, recorder) = memory(tools_script());
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    session.list_tools().await.unwrap();
    let err = session
        .call_tool("add", args(json!({"a": "two", "secret": "hunter2"})))
        .await
        .unwrap_err();
    match &err {
        SessionError::InvalidArguments { tool, failures } => {
            assert_eq!(tool, "add");
            assert!(failures.iter().any(|f| f.starts_with("/a")), "{failures:?}");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        !err.to_string().contains("hunter2"),
        "argument values never appear in errors"
    );
    assert!(
        recorder.with_method("tools/call").is_empty(),
        "nothing was sent"
    );
}

/// Text a hostile server puts in its schema: clears the screen, moves the
/// cursor home and writes a line of its own.
const FORGED: &str = "\u{1b}[2J\u{1b}[1;1Hall checks passed";

#[cfg(feature = "validation")]
#[tokio::test]
async fn schema_text_quoted_by_an_argument_failure_is_escaped_in_display() {
    // A `pattern` goes to the full validator, a required property's name to
    // the plain checker: both quote the server's schema in their lines.
    let script = Script::legacy()
        .tool_json(
            json!({"name": "pattern", "inputSchema": {"type": "object", "properties": {
                "code": {"type": "string", "pattern": format!("^{}$", FORGED.replace('[', "\\["))}}}}),
            Behavior::Echo,
        )
        .tool_json(
            json!({"name": "required", "inputSchema": {"type": "object", "required": [FORGED]}}),
            Behavior::Echo,
        );
    let (connector, recorder) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    session.list_tools().await.unwrap();
    for tool in ["pattern", "required"] {
        let err = session
            .call_tool(tool, args(json!({"code": "x"})))
            .await
            .unwrap_err();
        match &err {
            SessionError::InvalidArguments { failures, .. } => assert!(
                failures.iter().any(|f| f.contains('\u{1b}')),
                "{tool}: the field keeps the line as it was: {failures:?}"
            ),
            other => panic!("{tool}: unexpected {other:?}"),
        }
        let shown = err.to_string();
        assert!(!shown.contains('\u{1b}'), "{tool}: {shown:?}");
        assert!(
            shown.contains("\\u{1b}") && shown.contains("1;1Hall checks passed"),
            "{tool}: {shown:?}"
        );
    }
    assert!(recorder.with_method("tools/call").is_empty());
}

#[cfg(feature = "validation")]
#[tokio::test]
async fn structured_content_failures_are_escaped_in_display() {
    let script = Script::legacy().tool_json(
        json!({"name": "typed", "inputSchema": {"type": "object"},
               "outputSchema": {"type": "object", "required": [FORGED]}}),
        Behavior::Structured { value: json!({}) },
    );
    let (connector, _) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    session.list_tools().await.unwrap();
    let err = session.call_tool("typed", ()).await.unwrap_err();
    match &err {
        SessionError::InvalidStructuredContent { failures, .. } => {
            assert!(failures[0].contains(FORGED), "{failures:?}");
        }
        other => panic!("unexpected {other:?}"),
    }
    let shown = err.to_string();
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
    assert!(shown.contains("\\u{1b}[2J"), "{shown:?}");
}

#[cfg(feature = "validation")]
#[tokio::test]
async fn structured_content_is_checked_against_the_output_schema() {
    let (connector, _) = memory(tools_script());
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    session.list_tools().await.unwrap();
    match session.call_tool("typed", ()).await {
        Err(SessionError::InvalidStructuredContent {
            failures, result, ..
        }) => {
            assert!(failures[0].starts_with("/sum"), "{failures:?}");
            assert_eq!(
                result.structured_content,
                Some(json!({"sum": "not a number"}))
            );
        }
        other => panic!("unexpected {other:?}"),
    }
}

/// Without the `validation` feature no schema is compiled: arguments go out
/// unchecked and structured content comes back unchecked, though both
/// checks are on in the configuration.
#[cfg(not(feature = "validation"))]
#[tokio::test]
async fn without_the_validation_feature_schemas_are_not_checked() {
    let (connector, recorder) = memory(tools_script());
    let config = quick_config();
    assert!(config.validate_arguments && config.validate_structured_content);
    let session = ready(connector, config, Negotiation::Legacy).await;
    session.list_tools().await.unwrap();
    let sent = session
        .call_tool("add", args(json!({"a": "two", "b": 3})))
        .await;
    assert!(
        !matches!(sent, Err(SessionError::InvalidArguments { .. })),
        "{sent:?}"
    );
    assert_eq!(recorder.with_method("tools/call").len(), 1, "it was sent");
    let result = session.call_tool("typed", ()).await.unwrap();
    assert_eq!(
        result.structured_content,
        Some(json!({"sum": "not a number"}))
    );
}

#[tokio::test]
async fn oversized_arguments_are_refused_before_sending() {
    let (connector, recorder) = memory(tools_script());
    let config = SessionConfig {
        max_argument_bytes: 1024,
        ..quick_config()
    };
    let session = ready(connector, config, Negotiation::Legacy).await;
    let err = session
        .call_tool("echo", args(json!({"text": "x".repeat(2000)})))
        .await
        .unwrap_err();
    assert!(
        matches!(err, SessionError::ArgumentsTooLarge { limit: 1024, .. }),
        "{err:?}"
    );
    assert!(recorder.with_method("tools/call").is_empty());
}

#[tokio::test]
async fn a_deadline_fails_the_call_and_cancels_it_at_the_server() {
    let (connector, recorder) = memory(tools_script());
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let started = Instant::now();
    let err = session
        .call_tool_with(
            "hang",
            (),
            &CallOptions::new().timeout(Duration::from_millis(200)),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::Timeout { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    recorder
        .wait_for("notifications/cancelled", Duration::from_secs(5))
        .await
        .expect("the server was told");
    assert_eq!(recorder.cancelled_ids().len(), 1);
    // The session is still usable.
    session
        .call_tool("echo", args(json!({"text": "still here"})))
        .await
        .unwrap();
}

/// The driver keeps its one timer armed for the earliest deadline it has
/// seen, even after that request was answered: a later, shorter deadline
/// must still move it.
#[tokio::test]
async fn a_short_deadline_after_long_ones_still_fires() {
    let (connector, _recorder) = memory(tools_script());
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let long = CallOptions::new().timeout(Duration::from_secs(600));
    let short = CallOptions::new().timeout(Duration::from_millis(100));
    // Answered: its deadline is gone, the timer may still be armed for it.
    session
        .call_tool_with("echo", args(json!({"text": "first"})), &long)
        .await
        .unwrap();
    // Still pending with a long deadline while a short one starts.
    let pending = session.call_tool_with("hang", (), &long);
    let short_call = async {
        let err = session
            .call_tool_with("hang", (), &short)
            .await
            .unwrap_err();
        assert!(matches!(err, SessionError::Timeout { .. }), "{err:?}");
    };
    // A timer left at the long deadline would hold the short call for ten
    // minutes; the outer bound turns that into a failure, not a hang.
    tokio::select! {
        () = short_call => {}
        _ = pending => panic!("hang answered"),
        () = tokio::time::sleep(Duration::from_secs(30)) => panic!("the short deadline never fired"),
    }
    // And once more, with nothing else pending.
    let err = tokio::time::timeout(
        Duration::from_secs(30),
        session.call_tool_with("hang", (), &short),
    )
    .await
    .expect("the short deadline fired")
    .unwrap_err();
    assert!(matches!(err, SessionError::Timeout { .. }), "{err:?}");
}

#[tokio::test]
async fn dropping_a_call_cancels_it() {
    let (connector, recorder) = memory(tools_script());
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let call = session.call_tool("hang", ());
    assert!(
        tokio::time::timeout(Duration::from_millis(100), call)
            .await
            .is_err(),
        "hang answered"
    );
    recorder
        .wait_for("notifications/cancelled", Duration::from_secs(5))
        .await
        .expect("the server was told");
    let cancelled = recorder.cancelled_ids();
    assert_eq!(cancelled.len(), 1, "{:?}", recorder.received());
    assert_eq!(session.stats().cancelled, 1);
}

#[tokio::test]
async fn progress_reaches_the_caller() {
    let (connector, recorder) = memory(tools_script());
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    session
        .call_tool_with("slow", (), &CallOptions::new().progress(tx))
        .await
        .unwrap();
    // Decoded: each notification's progress, in order.
    let mut seen = Vec::new();
    while let Ok(params) = rx.try_recv() {
        seen.push(params.progress_f64().unwrap());
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    let call = &recorder.with_method("tools/call")[0];
    assert!(call["params"]["_meta"]["progressToken"].is_i64());
}

/// A hand-written server that answers `tools/call` with its progress
/// notifications and the answer in one write, so they arrive in one batch.
fn burst_server() -> Arc<dyn mcp_transport::Connector> {
    line_server(|msg| {
        let id = msg["id"].clone();
        match msg["method"].as_str() {
            Some("initialize") => Some(
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "burst", "version": "1"}}})
                .to_string(),
            ),
            Some("tools/call") => {
                let token = msg["params"]["_meta"]["progressToken"].clone();
                let mut batch = String::new();
                for step in 1..=5 {
                    batch.push_str(
                        &json!({"jsonrpc": "2.0", "method": "notifications/progress",
                                "params": {"progressToken": token, "progress": step, "total": 5}})
                        .to_string(),
                    );
                    batch.push('\n');
                }
                batch.push_str(
                    &json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}).to_string(),
                );
                Some(batch)
            }
            _ => None,
        }
    })
}

#[tokio::test]
async fn progress_sent_right_before_the_answer_is_not_lost() {
    let session = ready(burst_server(), quick_config(), Negotiation::Legacy).await;
    for _ in 0..20 {
        let (tx, mut rx) = tokio::sync::mpsc::channel(16);
        session
            .call_tool_with("burst", (), &CallOptions::new().progress(tx))
            .await
            .unwrap();
        let mut seen = 0;
        while rx.try_recv().is_ok() {
            seen += 1;
        }
        assert_eq!(seen, 5, "every progress notification reaches the caller");
    }
}

#[tokio::test]
async fn a_crash_mid_call_fails_it_promptly_and_every_later_call_at_once() {
    let connector = Arc::new(stdio(&tools_script(), None));
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let started = Instant::now();
    let err = session.call_tool("crash", ()).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    match &err {
        SessionError::Dead(info) => assert_eq!(info.exit_code, Some(7)),
        other => panic!("unexpected {other:?}"),
    }
    let started = Instant::now();
    let again = session
        .call_tool("echo", args(json!({"text": "x"})))
        .await
        .unwrap_err();
    assert!(again.is_dead());
    assert!(started.elapsed() < Duration::from_millis(200));
}

#[tokio::test]
async fn garbage_is_a_protocol_violation_not_a_failure() {
    let (connector, _) = memory(tools_script());
    let mut session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let mut events = session.take_events().unwrap();
    let result = session.call_tool("garbage", ()).await.unwrap();
    assert_eq!(result.is_error, None);
    let mut saw = false;
    while let Some(ev) = events.try_next() {
        saw |= matches!(ev, SessionEvent::ProtocolViolation(Violation::Malformed));
    }
    assert!(saw);
    assert_eq!(session.stats().violations, 1);
}

/// A call whose answer goes over the frame bound fails at once, named, and
/// the line is counted as a violation; the deadline (20 s here) is never
/// reached.
async fn an_oversized_answer_fails_at_once(connector: Arc<dyn mcp_transport::Connector>) {
    let mut session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let mut events = session.take_events().unwrap();
    let err = session
        .call_tool_with(
            "big",
            (),
            &CallOptions::new().timeout(Duration::from_secs(20)),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            SessionError::Http {
                failure: mcp_transport::RequestFailure::TooLarge { limit: 16384 },
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("larger than 16384 bytes"), "{err}");
    let ev = events.try_next();
    assert!(
        matches!(
            ev,
            Some(SessionEvent::ProtocolViolation(Violation::Oversized))
        ),
        "{ev:?}"
    );
    // The session goes on.
    assert!(session.ping().await.is_ok());
}

#[tokio::test]
async fn an_oversized_answer_with_its_id_first_fails_its_call_at_once() {
    let script = Script::legacy().tool("big", Behavior::Oversized { bytes: 64 * 1024 });
    let mut cfg = stdio(&script, None).config().clone();
    cfg.max_frame = 16 * 1024;
    an_oversized_answer_fails_at_once(Arc::new(mcp_transport::StdioConnector::new(cfg))).await;
}

#[tokio::test]
async fn an_oversized_answer_with_its_id_last_fails_its_call_at_once() {
    // The TypeScript SDK's member order: result first, id last. A shell
    // server answers `initialize`, then the call with 64 KiB of text, then
    // pings.
    let answer = r#"id=$(printf '%s' "$l" | sed -E 's/.*"id":([0-9]+).*/\1/')"#;
    let server = format!(
        r#"read -r l; {answer}; printf '{{"jsonrpc":"2.0","id":%s,"result":{{"protocolVersion":"2025-06-18","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"s","version":"1"}}}}}}\n' "$id"
read -r l
read -r l; {answer}; printf '{{"result":{{"content":[{{"type":"text","id":1,"text":"'; head -c 65536 /dev/zero | tr '\0' x; printf '"}}]}},"jsonrpc":"2.0","id":%s}}\n' "$id"
while read -r l; do {answer}; printf '{{"jsonrpc":"2.0","id":%s,"result":{{}}}}\n' "$id"; done"#
    );
    let mut cfg = mcp_transport::StdioConfig::new("sh").args(["-c", server.as_str()]);
    cfg.max_frame = 16 * 1024;
    an_oversized_answer_fails_at_once(Arc::new(mcp_transport::StdioConnector::new(cfg))).await;
}

#[tokio::test]
async fn a_cyclic_cursor_is_refused() {
    let script = Script::legacy()
        .tool("a", Behavior::Echo)
        .tool("b", Behavior::Echo)
        .page_size(1)
        .cyclic_cursor();
    let (connector, _) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let err = session.list_tools().await.unwrap_err();
    assert!(matches!(err, SessionError::CursorCycle { .. }), "{err:?}");
}

#[tokio::test]
async fn endless_pages_stop_at_the_page_bound() {
    let script = Script::legacy()
        .tool("a", Behavior::Echo)
        .page_size(1)
        .endless_pages();
    let (connector, _) = memory(script);
    let config = SessionConfig {
        max_pages: 5,
        ..quick_config()
    };
    let session = ready(connector, config, Negotiation::Legacy).await;
    let err = session.list_tools().await.unwrap_err();
    assert!(
        matches!(err, SessionError::TooManyPages { limit: 5, .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_server_request_for_an_unregistered_feature_is_refused_by_name() {
    let (connector, _) = memory(tools_script());
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let result = session.call_tool("ask", ()).await.unwrap();
    let text = serde_json::to_string(&result).unwrap();
    assert!(text.contains("-32601"), "{text}");
    assert!(text.contains("sampling/createMessage"), "{text}");
}

#[tokio::test]
async fn the_in_flight_bound_is_a_named_error() {
    let (connector, recorder) = memory(tools_script());
    let mut config = quick_config();
    config.limits.max_in_flight = 2;
    let session = ready(connector, config, Negotiation::Legacy).await;
    let a = session.call_tool("hang", ());
    let b = session.call_tool("hang", ());
    let c = async {
        // Both hanging calls are in flight once the server has them.
        let both = recorder
            .wait_until(Duration::from_secs(5), |frames| {
                frames
                    .iter()
                    .filter(|f| f["method"] == "tools/call")
                    .count()
                    == 2
            })
            .await;
        assert!(both, "the two calls did not reach the server");
        session.call_tool("echo", args(json!({"text": "x"}))).await
    };
    let third = tokio::select! {
        r = c => r,
        _ = a => panic!("hang answered"),
        _ = b => panic!("hang answered"),
    };
    assert!(
        matches!(third, Err(SessionError::TooManyInFlight { limit: 2 })),
        "{third:?}"
    );
}

#[tokio::test]
async fn server_errors_keep_the_servers_words_out_of_display() {
    let script = Script::legacy().tool(
        "fail",
        Behavior::Error {
            code: -32602,
            message: "token sk-secret is invalid".into(),
            data: None,
        },
    );
    let (connector, _) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let err = session.call_tool("fail", ()).await.unwrap_err();
    assert_eq!(err.code(), Some(-32602));
    assert!(!err.to_string().contains("sk-secret"));
    assert_eq!(err.server_message(), Some("token sk-secret is invalid"));
}

#[tokio::test]
async fn close_shuts_the_child_down_and_leaves_no_grandchild() {
    let dir = std::env::temp_dir().join(format!("mcp-session-close-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut script = Script::legacy().tool("echo", Behavior::Echo);
    script.spawn_grandchild = true;
    let connector = Arc::new(stdio(&script, None));
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    session
        .call_tool("echo", args(json!({"text": "x"})))
        .await
        .unwrap();
    let tail = session.stderr_tail().unwrap_or_default();
    let pid: u32 = tail
        .lines()
        .find_map(|l| l.strip_prefix("grandchild-pid="))
        .and_then(|p| p.trim().parse().ok())
        .expect("the fixture prints its grandchild's pid");
    let dead = session.close().await;
    assert!(dead.info().exit_code.is_some() || dead.info().signal.is_some());
    let mut gone = false;
    for _ in 0..100 {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit(')')
                    .next()
                    .and_then(|r| r.split_whitespace().next())
                    .map(str::to_owned)
            });
        if matches!(state.as_deref(), None | Some("Z") | Some("X")) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "grandchild {pid} outlived the session");
}

#[tokio::test]
async fn a_shared_session_is_shut_down_through_a_reference_and_fails_pending_calls() {
    let (connector, recorder) = memory(tools_script());
    let session = Arc::new(ready(connector, quick_config(), Negotiation::Legacy).await);
    let caller = Arc::clone(&session);
    let pending = tokio::spawn(async move { caller.call_tool("hang", ()).await });
    settle(&recorder, "tools/call").await;
    assert!(session.exit_info().is_none(), "live until shut down");

    let info = session.shutdown().await;
    assert_eq!(info.reason, mcp_transport::CloseReason::Shutdown);
    // The hanging call failed because of the shutdown, not a deadline.
    let err = pending.await.unwrap().unwrap_err();
    assert!(err.is_dead(), "{err:?}");
    assert!(session.is_closed());
    // Diagnostics stay available, and a second shutdown returns the same.
    assert_eq!(session.exit_info(), Some(info.clone()));
    assert_eq!(session.shutdown().await, info);
    let later = session.call_tool("echo", args(json!({"text": "x"}))).await;
    assert!(later.unwrap_err().is_dead());
}

#[tokio::test]
async fn killing_a_shared_stdio_session_ends_the_child_like_a_crash() {
    let connector = Arc::new(stdio(&tools_script(), None));
    let session = Arc::new(ready(connector, quick_config(), Negotiation::Legacy).await);
    session.kill();
    let err = session.call_tool("hang", ()).await.unwrap_err();
    assert!(err.is_dead(), "{err:?}");
    let info = session.exit_info().expect("the death is recorded");
    assert_eq!(info.signal, Some(9), "{info:?}");
}

#[tokio::test]
async fn a_result_over_the_call_limit_is_refused_on_the_frame_and_the_session_goes_on() {
    let script = Script::legacy()
        .tool("blob", Behavior::Blob { kb: 64 })
        .tool("echo", Behavior::Echo);
    let (connector, _) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    // Without a limit the answer comes through.
    let whole = session.call_tool("blob", ()).await.unwrap();
    let limit = 64 * 1024;
    let err = session
        .call_tool_with("blob", (), &CallOptions::new().max_result_bytes(limit))
        .await
        .unwrap_err();
    match &err {
        SessionError::ResultTooLarge {
            method,
            size,
            limit: l,
        } => {
            assert_eq!(method, "tools/call");
            assert_eq!(*l, limit);
            assert!(*size > limit, "{size}");
            // Measured on the wire: the decoded result re-serialised is no
            // longer than what was sent.
            assert!(*size >= serde_json::to_vec(&whole).unwrap().len(), "{size}");
        }
        other => panic!("{other:?}"),
    }
    // A limit above the size lets the same answer through.
    let size = match err {
        SessionError::ResultTooLarge { size, .. } => size,
        _ => unreachable!(),
    };
    session
        .call_tool_with("blob", (), &CallOptions::new().max_result_bytes(size))
        .await
        .unwrap();
    let err = session
        .call_tool_with("blob", (), &CallOptions::new().max_result_bytes(size - 1))
        .await
        .unwrap_err();
    assert!(
        matches!(err, SessionError::ResultTooLarge { .. }),
        "{err:?}"
    );
    // Generic requests take the same options.
    let err = session
        .request_with::<mcp_types::requests::ListTools>(
            &Default::default(),
            &CallOptions::new().max_result_bytes(16),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, SessionError::ResultTooLarge { .. }),
        "{err:?}"
    );
    session
        .call_tool("echo", args(json!({"text": "still here"})))
        .await
        .unwrap();
}

#[tokio::test]
async fn arguments_come_from_anything_that_serialises_to_an_object() {
    #[derive(serde::Serialize)]
    struct Sum {
        a: i64,
        b: i64,
    }
    let (connector, recorder) = memory(tools_script());
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    session.list_tools().await.unwrap();
    // A struct of the host's own, a json! value, a Map.
    let by_struct = session.call_tool("add", Sum { a: 2, b: 3 }).await.unwrap();
    let by_value = session
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    let by_map = session
        .call_tool("add", args(json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    for result in [&by_struct, &by_value, &by_map] {
        assert_eq!(result.structured_content, Some(json!({"sum": 5})));
    }
    // `()` is no arguments.
    session.call_tool("oops", ()).await.unwrap();
    // Anything else is refused by name before sending.
    let sent = recorder.with_method("tools/call").len();
    for (bad, found) in [
        (json!([1, 2]), "an array"),
        (json!("text"), "a string"),
        (json!(7), "a number"),
        (json!(true), "a boolean"),
    ] {
        let err = session.call_tool("add", bad).await.unwrap_err();
        match &err {
            SessionError::ArgumentsNotAnObject { tool, found: f } => {
                assert_eq!(tool, "add");
                assert_eq!(*f, found);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(err.cause(), mcp_types::ErrorCause::Input);
    }
    assert_eq!(
        recorder.with_method("tools/call").len(),
        sent,
        "nothing sent"
    );
}

#[tokio::test]
async fn handlers_are_async_closures_and_progress_can_be_a_callback() {
    let (connector, _) = memory(tools_script());
    let config = SessionConfig {
        handlers: mcp_session::ClientHandlers::new().on_sampling(|request| async move {
            Ok(mcp_types::CreateMessageResult::text(
                "closure-model",
                format!("{} messages", request.messages.len()),
            ))
        }),
        ..quick_config()
    };
    let session = ready(connector, config, Negotiation::Legacy).await;
    let result = session.call_tool("ask", ()).await.unwrap();
    // The testkit's tool answers with what the client sent back.
    let text = serde_json::to_string(&result).unwrap();
    assert!(text.contains("closure-model"), "{text}");
    assert!(text.contains("0 messages"), "{text}");

    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    session
        .call_tool_with(
            "slow",
            (),
            &CallOptions::new()
                .on_progress(move |p| sink.lock().unwrap().push(p.progress.as_f64())),
        )
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), [Some(1.0), Some(2.0), Some(3.0)]);
}

/// A sampling handler that reports progress before answering, and keeps
/// its reporter.
#[derive(Default)]
struct Reporting(Arc<std::sync::Mutex<Option<mcp_session::ProgressReporter>>>);

impl mcp_session::SamplingHandler for Reporting {
    fn create_message(
        &self,
        _: mcp_types::CreateMessageParams,
    ) -> mcp_session::BoxFuture<'_, Result<mcp_types::CreateMessageResult, mcp_session::HandlerError>>
    {
        Box::pin(async { Ok(mcp_types::CreateMessageResult::text("m", "no reporter")) })
    }

    fn create_message_reporting(
        &self,
        _: mcp_types::CreateMessageParams,
        progress: mcp_session::ProgressReporter,
    ) -> mcp_session::BoxFuture<'_, Result<mcp_types::CreateMessageResult, mcp_session::HandlerError>>
    {
        *self.0.lock().unwrap() = Some(progress.clone());
        Box::pin(async move {
            let mut sent = Vec::new();
            for (value, message) in [(1.0, "reading"), (1.0, "again"), (2.0, "writing")] {
                sent.push(
                    progress
                        .report(value, Some(2.0), Some(message.into()))
                        .await
                        .unwrap(),
                );
            }
            Ok(mcp_types::CreateMessageResult::text(
                "m",
                format!("wanted {} sent {sent:?}", progress.wanted()),
            ))
        })
    }
}

#[tokio::test]
async fn a_sampling_handler_reports_progress_to_the_server_under_its_token() {
    let script = Script::legacy()
        .tool(
            "ask",
            Behavior::AskClient {
                method: "sampling/createMessage".into(),
                params: json!({"messages": [], "maxTokens": 10, "_meta": {"progressToken": "srv-7"}}),
            },
        )
        .tool(
            "ask_quietly",
            Behavior::AskClient {
                method: "sampling/createMessage".into(),
                params: json!({"messages": [], "maxTokens": 10}),
            },
        );
    let (connector, recorder) = memory(script);
    let handler = Reporting::default();
    let slot = Arc::clone(&handler.0);
    let config = SessionConfig {
        handlers: mcp_session::ClientHandlers::new().sampling(handler),
        ..quick_config()
    };
    let session = ready(connector, config, Negotiation::Legacy).await;
    let text = serde_json::to_string(&session.call_tool("ask", ()).await.unwrap()).unwrap();
    assert!(
        text.contains("wanted true sent [true, false, true]"),
        "{text}"
    );
    // A reporter kept past the answer goes quiet.
    let kept = slot.lock().unwrap().clone().unwrap();
    assert!(!kept.report(9.0, None, None).await.unwrap());
    // Both reports were on the wire before the answer that ended the call.
    let progress = recorder.with_method("notifications/progress");
    let seen: Vec<_> = progress
        .iter()
        .map(|p| {
            (
                p["params"]["progressToken"].clone(),
                p["params"]["progress"].as_f64(),
                p["params"]["total"].as_f64(),
                p["params"]["message"].as_str().map(str::to_owned),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (json!("srv-7"), Some(1.0), Some(2.0), Some("reading".into())),
            (json!("srv-7"), Some(2.0), Some(2.0), Some("writing".into())),
        ]
    );
    // No token, no progress.
    let text = serde_json::to_string(&session.call_tool("ask_quietly", ()).await.unwrap()).unwrap();
    assert!(
        text.contains("wanted false sent [false, false, false]"),
        "{text}"
    );
    assert_eq!(recorder.with_method("notifications/progress").len(), 2);
}

/// Drops a message into its channel when dropped: how a test sees a
/// handler's future given up.
struct DropSignal(Option<tokio::sync::oneshot::Sender<()>>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

#[tokio::test]
async fn a_server_cancelling_its_request_stops_the_hosts_handler_and_gets_no_answer() {
    // The server asks for sampling while serving `ask`; its `cancel` tool
    // cancels that request, then answers. Everything it receives is kept.
    let received = Arc::new(std::sync::Mutex::new(Vec::<serde_json::Value>::new()));
    let seen = Arc::clone(&received);
    let connector = line_server(move |msg| {
        seen.lock().unwrap().push(msg.clone());
        let id = msg["id"].clone();
        match (msg["method"].as_str(), msg["params"]["name"].as_str()) {
            (Some("initialize"), _) => Some(
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "asker", "version": "1"}}})
                .to_string(),
            ),
            (Some("tools/call"), Some("ask")) => Some(
                json!({"jsonrpc": "2.0", "id": "sample-1", "method": "sampling/createMessage",
                       "params": {"messages": [], "maxTokens": 5}})
                .to_string(),
            ),
            (Some("tools/call"), Some("cancel")) => Some(format!(
                "{}\n{}",
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": "sample-1", "reason": "changed my mind"}}),
                json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}})
            )),
            _ => None,
        }
    });
    let (started_tx, started_rx) = tokio::sync::mpsc::channel::<()>(1);
    let (dropped_tx, dropped_rx) = tokio::sync::oneshot::channel::<()>();
    let dropped = Arc::new(std::sync::Mutex::new(Some(dropped_tx)));
    let config = SessionConfig {
        handlers: mcp_session::ClientHandlers::new().on_sampling(move |_| {
            let started = started_tx.clone();
            let signal = DropSignal(dropped.lock().unwrap().take());
            async move {
                let _signal = signal;
                started.send(()).await.unwrap();
                // A person who never answers: only the server's cancel ends it.
                std::future::pending::<()>().await;
                unreachable!()
            }
        }),
        ..quick_config()
    };
    let session = Arc::new(ready(connector, config, Negotiation::Legacy).await);
    let asking = {
        let session = Arc::clone(&session);
        tokio::spawn(async move { session.call_tool("ask", ()).await })
    };
    let mut started_rx = started_rx;
    started_rx.recv().await.expect("the handler started");
    session.call_tool("cancel", ()).await.unwrap();
    // Bounded so a regression fails instead of hanging the run.
    tokio::time::timeout(Duration::from_secs(20), dropped_rx)
        .await
        .expect("the handler's future was not dropped after the server's cancel")
        .unwrap();
    // A later round trip: had an answer to `sample-1` been queued, it
    // would have been written before this call.
    session.call_tool("cancel", ()).await.unwrap();
    let answered = received
        .lock()
        .unwrap()
        .iter()
        .any(|m| m["id"] == "sample-1");
    assert!(!answered, "a cancelled request got an answer");
    asking.abort();
}

/// Calls the fake server's `slow` tool (answered 300 ms later, by a timer
/// of the fake server on the same runtime) on a current-thread runtime,
/// and counts the times that runtime's thread went to sleep (parked) while
/// the call was waiting.
fn parks_during_a_slow_call(busy_poll: Option<Duration>) -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let parks = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&parks);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_park(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    rt.block_on(async {
        let (connector, _) = memory(tools_script());
        let config = SessionConfig {
            busy_poll,
            ..quick_config()
        };
        let session = ready(connector, config, Negotiation::Legacy).await;
        let before = parks.load(Ordering::SeqCst);
        let result = session.call_tool("slow", ()).await.unwrap();
        assert_eq!(result.is_error, None);
        parks.load(Ordering::SeqCst) - before
    })
}

#[test]
fn busy_polling_keeps_the_runtime_awake_until_the_answer() {
    assert!(parks_during_a_slow_call(None) > 0, "it sleeps without");
    assert_eq!(
        parks_during_a_slow_call(Some(SessionConfig::MAX_BUSY_POLL)),
        0,
        "a window longer than the wait: the thread never slept"
    );
}

#[tokio::test]
async fn a_busy_poll_window_over_a_second_is_refused_before_connecting() {
    let (connector, recorder) = memory(tools_script());
    let config = SessionConfig {
        busy_poll: Some(SessionConfig::MAX_BUSY_POLL + Duration::from_nanos(1)),
        ..quick_config()
    };
    let err = mcp_session::Session::connect(connector, config)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            SessionError::InvalidSetting {
                setting: "busy_poll",
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.cause(), mcp_types::ErrorCause::Configuration);
    assert!(recorder.is_empty(), "nothing was sent");
}

#[tokio::test]
async fn a_deadline_still_fires_while_busy_polling() {
    let (connector, _) = memory(tools_script());
    let config = SessionConfig {
        busy_poll: Some(SessionConfig::MAX_BUSY_POLL),
        ..quick_config()
    };
    let session = ready(connector, config, Negotiation::Legacy).await;
    let err = session
        .call_tool_with(
            "hang",
            (),
            &CallOptions::new().timeout(Duration::from_millis(100)),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::Timeout { .. }), "{err:?}");
}

#[tokio::test]
async fn a_server_that_wrote_a_banner_on_stdout_and_died_says_so() {
    use mcp_session::{Failed, Session};
    use mcp_transport::{StdioConfig, StdioConnector};
    // The most common broken server: a log line on stdout, then an exit.
    let config = StdioConfig::new("/bin/sh").args([
        "-c",
        "echo 'Listening on stdio \u{1b}[1m…'; echo 'stderr words' >&2; exit 1",
    ]);
    let session = Session::connect(Arc::new(StdioConnector::new(config)), quick_config())
        .await
        .unwrap();
    let failed = session.negotiate(Negotiation::Legacy).await.unwrap_err();
    let Failed::Dead(error, dead) = failed else {
        panic!("the session should be dead: {failed:?}");
    };
    assert_eq!(
        error.unparsed_line(),
        Some("Listening on stdio \u{1b}[1m…"),
        "{error:?}"
    );
    assert_eq!(
        dead.info().unparsed_line.as_deref(),
        Some("Listening on stdio \u{1b}[1m…")
    );
    // The server's words stay out of our message.
    assert!(!error.to_string().contains("Listening"), "{error}");
    assert_eq!(error.stderr_tail(), Some("stderr words\n"));
}
