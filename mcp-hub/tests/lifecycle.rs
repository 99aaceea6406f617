//! Start, death, restart with back-off (under simulated time), `restart:
//! never`, required servers, calls in flight on a dying server, shutdown.

#[path = "support/common.rs"]
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use mcp_hub::{
    Backoff, Hub, HubConfig, HubError, HubEvent, RestartPolicy, ServerSpec, ServerStatusKind,
};
use mcp_session::Negotiation;
use mcp_testkit::{Behavior, Script};
use mcp_transport::Connector;
use serde_json::json;
use tokio::time::Instant;

fn script() -> Script {
    Script::legacy()
        .tool("echo", Behavior::Echo)
        .tool("hang", Behavior::Hang)
        .tool("crash", Behavior::Crash { code: 9 })
}

fn spec(name: &str, connector: Arc<dyn Connector>, backoff: Backoff) -> ServerSpec {
    ServerSpec::new(name, connector)
        .session(quick_session())
        .negotiation(Negotiation::Legacy)
        .restart(RestartPolicy::Backoff(backoff))
}

fn seeded() -> HubConfig {
    HubConfig {
        jitter_seed: Some(7),
        ..HubConfig::default()
    }
}

/// Restart delays (with the virtual time each was announced) until `server`
/// is ready; also the positions of `RepeatedFailures` among the failures.
async fn until_ready(
    hub: &Hub,
    server: &str,
) -> (Vec<(Duration, Instant)>, Vec<(u32, usize)>, Instant) {
    let mut events = hub.take_events().unwrap();
    let mut delays = Vec::new();
    let mut repeated = Vec::new();
    let mut failures = 0;
    loop {
        let event = tokio::time::timeout(Duration::from_secs(600), events.next())
            .await
            .expect("no event")
            .expect("events ended");
        match event {
            HubEvent::Failed { server: s, .. } if s.as_str() == server => failures += 1,
            HubEvent::Restarting {
                server: s, delay, ..
            } if s.as_str() == server => {
                delays.push((delay, Instant::now()));
            }
            HubEvent::RepeatedFailures {
                server: s,
                consecutive,
            } if s.as_str() == server => repeated.push((consecutive, failures)),
            HubEvent::Ready { server: s, .. } if s.as_str() == server => {
                return (delays, repeated, Instant::now());
            }
            _ => {}
        }
    }
}

#[tokio::test(start_paused = true)]
async fn restarts_back_off_exponentially_to_the_cap_and_the_host_is_told_after_three_failures() {
    let (inner, _) = memory(script());
    // The first start and five restarts fail; the sixth restart works.
    let flaky = Flaky::new(inner, 6);
    let backoff = Backoff {
        initial: Duration::from_secs(1),
        max: Duration::from_secs(8),
        jitter: 0.0,
        ..Backoff::default()
    };
    let hub = Hub::builder(seeded())
        .server(spec("flaky", flaky.clone(), backoff))
        .start()
        .await
        .expect("an optional server failing does not fail the start");
    assert_eq!(
        hub.status("flaky").unwrap().kind,
        ServerStatusKind::Restarting
    );
    let (delays, repeated, ready_at) = until_ready(&hub, "flaky").await;
    let secs: Vec<u64> = delays.iter().map(|(d, _)| d.as_secs()).collect();
    assert_eq!(secs, [1, 2, 4, 8, 8, 8]);
    // Told once, right at the third failure in a row.
    assert_eq!(repeated, [(3, 3)]);
    // Simulated time: the waits are exactly the announced delays.
    let waited = ready_at - delays[0].1;
    let expected: Duration = delays.iter().map(|(d, _)| *d).sum();
    assert!(
        waited >= expected && waited < expected + Duration::from_millis(50),
        "{waited:?} vs {expected:?}"
    );
    assert_eq!(flaky.attempts(), 7);
    let status = hub.status("flaky").unwrap();
    assert_eq!(status.kind, ServerStatusKind::Ready);
    assert_eq!(status.restarts, 6);
    let r = hub.call("echo", json!({"text": "back"})).await.unwrap();
    assert_eq!(first_text(&r), "back");
    hub.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn the_cap_is_thirty_seconds_and_jitter_is_seeded() {
    // A back-off above 30 s is refused.
    let (inner, _) = memory(script());
    let too_long = Backoff {
        max: Duration::from_secs(31),
        ..Backoff::default()
    };
    assert!(matches!(
        Hub::builder(seeded())
            .server(spec("s", inner, too_long))
            .start()
            .await,
        Err(HubError::InvalidSetting { .. })
    ));

    let run = || async {
        let (inner, _) = memory(script());
        let backoff = Backoff {
            initial: Duration::from_secs(4),
            max: Duration::from_secs(30),
            jitter: 0.5,
            ..Backoff::default()
        };
        let hub = Hub::builder(seeded())
            .server(spec("s", Flaky::new(inner, 5), backoff))
            .start()
            .await
            .unwrap();
        let (delays, _, _) = until_ready(&hub, "s").await;
        hub.shutdown().await;
        delays.into_iter().map(|(d, _)| d).collect::<Vec<_>>()
    };
    let a = run().await;
    let b = run().await;
    assert_eq!(a, b, "same seed, same delays");
    let nominal = [4u64, 8, 16, 30, 30];
    assert_eq!(a.len(), nominal.len());
    for (d, n) in a.iter().zip(nominal) {
        let n = Duration::from_secs(n);
        assert!(*d <= n && *d >= n / 2, "{d:?} outside [{:?}, {n:?}]", n / 2);
    }
    assert!(
        a.iter()
            .zip(nominal)
            .any(|(d, n)| *d < Duration::from_secs(n))
    );
}

#[tokio::test(start_paused = true)]
async fn a_session_that_stayed_up_resets_the_failure_count() {
    let (inner, _) = memory(script());
    let backoff = Backoff {
        initial: Duration::from_secs(1),
        jitter: 0.0,
        stable_after: Duration::from_secs(10),
        ..Backoff::default()
    };
    let hub = Hub::builder(seeded())
        .server(spec("s", inner, backoff))
        .start()
        .await
        .unwrap();
    let mut events = hub.take_events().unwrap();
    let mut delays = Vec::new();
    for wait_first in [false, false, true] {
        if wait_first {
            tokio::time::sleep(Duration::from_secs(11)).await;
        }
        let err = hub.call("crash", ()).await.unwrap_err();
        assert!(matches!(err, HubError::ServerDied { .. }), "{err:?}");
        delays.push(
            wait_for(&mut events, Duration::from_secs(60), |e| match e {
                HubEvent::Restarting { delay, .. } => Some(delay.as_secs()),
                _ => None,
            })
            .await,
        );
        wait_for(&mut events, Duration::from_secs(60), |e| {
            matches!(e, HubEvent::Ready { .. }).then_some(())
        })
        .await;
    }
    assert_eq!(delays, [1, 2, 1]);
    hub.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn restart_never_leaves_a_dead_server_dead() {
    let (inner, _) = memory(script());
    let flaky = Flaky::new(inner, 0);
    let hub = Hub::builder(seeded())
        .server(spec("stateful", flaky.clone(), Backoff::default()).restart(RestartPolicy::Never))
        .start()
        .await
        .unwrap();
    let mut events = hub.take_events().unwrap();
    let err = hub.call("crash", ()).await.unwrap_err();
    assert!(matches!(err, HubError::ServerDied { .. }));
    let failed = wait_for(&mut events, Duration::from_secs(5), |e| match e {
        HubEvent::Failed { error, .. } => Some(Arc::clone(error)),
        _ => None,
    })
    .await;
    assert!(matches!(*failed, HubError::Exited { .. }), "{failed:?}");
    tokio::time::sleep(Duration::from_secs(120)).await;
    assert_eq!(flaky.attempts(), 1, "never restarted");
    assert!(
        !drain(&mut events)
            .iter()
            .any(|e| matches!(e, HubEvent::Restarting { .. }))
    );
    assert_eq!(
        hub.status("stateful").unwrap().kind,
        ServerStatusKind::Failed
    );
    let err = hub.call("echo", json!({"text": "x"})).await.unwrap_err();
    assert!(
        matches!(
            err,
            HubError::ServerUnavailable {
                status: ServerStatusKind::Failed,
                ..
            }
        ),
        "{err:?}"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn a_required_server_that_fails_fails_the_start() {
    let (good, good_rec) = memory(script());
    let (inner, _) = memory(script());
    let broken = Flaky::new(inner, u32::MAX);
    let err = Hub::builder(seeded())
        .server(spec("good", good, Backoff::default()))
        .server(spec("broken", broken.clone(), Backoff::default()).required())
        .start()
        .await
        .unwrap_err();
    match &err {
        HubError::RequiredServerFailed { server, source } => {
            assert_eq!(server.as_str(), "broken");
            assert!(matches!(&**source, HubError::Session { .. }), "{source:?}");
        }
        other => panic!("{other:?}"),
    }
    // `start` shut the hub down before returning the error: every
    // supervisor has ended and the hub is gone, so nothing holds the broken
    // server's connector any more and no later attempt can be made.
    assert_eq!(
        Arc::strong_count(&broken),
        1,
        "the failed start let go of the broken server"
    );
    assert_eq!(
        broken.attempts(),
        1,
        "a failed required server is not retried"
    );
    // The good server was started and then shut down.
    assert!(methods(&good_rec).contains(&"initialize".to_owned()));
}

#[tokio::test]
async fn a_call_in_flight_on_a_dying_server_fails_by_name_and_is_not_replayed() {
    let (inner, recorder) = memory(script());
    let backoff = Backoff {
        initial: Duration::from_millis(100),
        jitter: 0.0,
        ..Backoff::default()
    };
    let hub = Arc::new(
        Hub::builder(seeded())
            .server(spec("s", inner, backoff))
            .start()
            .await
            .unwrap(),
    );
    let mut events = hub.take_events().unwrap();
    drain(&mut events);
    let h = Arc::clone(&hub);
    let hanging = tokio::spawn(async move { h.call("hang", ()).await });
    recorder
        .wait_until(Duration::from_secs(5), |r| calls_of_in(r, "hang") == 1)
        .await;
    assert!(hub.call("crash", ()).await.is_err(), "it answered");
    let err = hanging.await.unwrap().unwrap_err();
    match &err {
        HubError::ServerDied { server, method, .. } => {
            assert_eq!(server.as_str(), "s");
            assert_eq!(*method, "tools/call");
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("not replayed"));
    wait_for(&mut events, Duration::from_secs(5), |e| {
        matches!(e, HubEvent::Ready { .. }).then_some(())
    })
    .await;
    let r = hub.call("echo", json!({"text": "after"})).await.unwrap();
    assert_eq!(first_text(&r), "after");
    assert_eq!(calls_of(&recorder, "hang"), 1, "never replayed");
    hub.shutdown().await;
}

fn calls_of_in(received: &[serde_json::Value], tool: &str) -> usize {
    received
        .iter()
        .filter(|m| m["method"] == "tools/call" && m["params"]["name"] == tool)
        .count()
}

#[tokio::test]
async fn shutdown_is_parallel_bounded_and_fails_calls_in_flight() {
    let mut builder = Hub::builder(HubConfig {
        shutdown_timeout: Duration::from_secs(5),
        ..seeded()
    });
    let mut recorders = Vec::new();
    for i in 0..20 {
        let (inner, recorder) = memory(script());
        recorders.push(recorder);
        builder = builder.server(spec(&format!("s{i}"), inner, Backoff::default()));
    }
    let hub = Arc::new(builder.start().await.unwrap());
    let mut events = hub.take_events().unwrap();
    let h = Arc::clone(&hub);
    let hanging = tokio::spawn(async move { h.call("s3/hang", ()).await });
    let arrived = recorders[3]
        .wait_for("tools/call", Duration::from_secs(5))
        .await;
    assert!(arrived.is_some(), "the hanging call reached s3");
    let report = hub.shutdown().await;
    assert!(report.forced.is_empty());
    assert!(
        report.elapsed < Duration::from_secs(5),
        "{:?}",
        report.elapsed
    );
    let err = hanging.await.unwrap().unwrap_err();
    assert!(matches!(err, HubError::ShuttingDown), "{err:?}");
    let stopped = drain(&mut events)
        .iter()
        .filter(|e| matches!(e, HubEvent::Stopped { .. }))
        .count();
    assert_eq!(stopped, 20);
    for i in 0..20 {
        assert_eq!(
            hub.status(&format!("s{i}")).unwrap().kind,
            ServerStatusKind::Stopped
        );
    }
    assert!(matches!(
        hub.call("s1/echo", json!({"text": "x"})).await,
        Err(HubError::ShuttingDown)
    ));
    // A second shutdown returns at once.
    assert!(hub.shutdown().await.elapsed < Duration::from_millis(100));
}

#[tokio::test]
async fn a_stdio_server_that_exits_reports_its_stderr_tail() {
    let mut script = script();
    script.exit_after_initialize = true;
    script.stderr_flood_bytes = 64;
    let hub = Hub::builder(seeded())
        .server(
            ServerSpec::new("dies", stdio(&script))
                .session(quick_session())
                .negotiation(Negotiation::Legacy)
                .restart(RestartPolicy::Never),
        )
        .start()
        .await
        .unwrap();
    let mut events = hub.take_events().unwrap();
    let error = wait_for(&mut events, Duration::from_secs(10), |e| match e {
        HubEvent::Failed { error, .. } => Some(Arc::clone(error)),
        _ => None,
    })
    .await;
    assert!(
        error.stderr_tail().is_some_and(|t| !t.is_empty()),
        "{error:?}"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn a_slow_optional_server_joins_later_at_its_registration_place() {
    let (slow, _) = memory_delayed(
        Script::legacy().tool("a", Behavior::Echo),
        Duration::from_millis(1500),
    );
    let (fast, _) = memory(Script::legacy().tool("b", Behavior::Echo));
    let config = HubConfig {
        start_wait: Some(Duration::from_millis(200)),
        ..seeded()
    };
    let began = std::time::Instant::now();
    let hub = Hub::builder(config)
        .server(spec("slow", slow, Backoff::default()))
        .server(spec("fast", fast, Backoff::default()))
        .start()
        .await
        .unwrap();
    assert!(
        began.elapsed() < Duration::from_secs(1),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(hub.status("slow").unwrap().kind, ServerStatusKind::Starting);
    let names = |hub: &Hub| -> Vec<String> {
        hub.namespace()
            .tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    };
    assert_eq!(names(&hub), ["b"]);
    let mut events = hub.take_events().unwrap();
    wait_for(&mut events, Duration::from_secs(5), |e| match e {
        HubEvent::Ready { server, .. } if server.as_str() == "slow" => Some(()),
        _ => None,
    })
    .await;
    assert_eq!(names(&hub), ["a", "b"]);
    hub.shutdown().await;

    // A required server is waited for whatever `start_wait` says.
    let (slow, _) = memory_delayed(
        Script::legacy().tool("a", Behavior::Echo),
        Duration::from_millis(700),
    );
    let hub = Hub::builder(HubConfig {
        start_wait: Some(Duration::ZERO),
        ..seeded()
    })
    .server(spec("slow", slow, Backoff::default()).required())
    .start()
    .await
    .unwrap();
    assert_eq!(hub.status("slow").unwrap().kind, ServerStatusKind::Ready);
    assert_eq!(names(&hub), ["a"]);
    hub.shutdown().await;
}

#[tokio::test]
async fn kill_server_ends_the_connection_like_a_crash_and_the_restart_policy_follows() {
    let quick = Backoff {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(10),
        jitter: 0.0,
        ..Backoff::default()
    };
    let hub = Hub::builder(seeded())
        .server(spec("victim", stdio(&script()), quick))
        .start()
        .await
        .unwrap();
    let mut events = hub.take_events().unwrap();
    assert!(
        hub.kill_server("victim").unwrap(),
        "a live connection ended"
    );
    let failed = wait_for(&mut events, Duration::from_secs(5), |e| match e {
        HubEvent::Failed { error, .. } => Some(Arc::clone(error)),
        _ => None,
    })
    .await;
    match &*failed {
        HubError::Exited { exit, .. } => assert_eq!(exit.signal, Some(9), "{exit:?}"),
        other => panic!("{other:?}"),
    }
    // The back-off policy brings it back.
    wait_for(&mut events, Duration::from_secs(10), |e| match e {
        HubEvent::Ready { .. } => Some(()),
        _ => None,
    })
    .await;
    let answer = hub.call("echo", json!({"text": "back"})).await.unwrap();
    assert_eq!(first_text(&answer), "back");
    assert!(matches!(
        hub.kill_server("nobody"),
        Err(HubError::UnknownServer { .. })
    ));
    hub.shutdown().await;
}

#[tokio::test]
async fn server_log_messages_become_events_at_the_level_asked_and_bounded() {
    let script = Script::legacy()
        .tool(
            "info",
            Behavior::Log {
                level: "info".into(),
                message: json!("just so you know"),
                logger: None,
            },
        )
        .tool(
            "error",
            Behavior::Log {
                level: "error".into(),
                message: json!({"disk": "full"}),
                logger: Some("storage".into()),
            },
        )
        .tool(
            "huge",
            Behavior::Log {
                level: "critical".into(),
                message: json!("x".repeat(mcp_hub::MAX_LOG_EVENT_BYTES)),
                logger: Some("flood".into()),
            },
        );
    let (connector, recorder) = memory(script);
    let hub = Hub::builder(seeded())
        .server(
            ServerSpec::new("logs", connector)
                .session(quick_session())
                .negotiation(Negotiation::Legacy)
                .log_level(mcp_types::LoggingLevel::Warning),
        )
        .start()
        .await
        .unwrap();
    assert!(methods(&recorder).contains(&"logging/setLevel".to_owned()));
    let mut events = hub.take_events().unwrap();
    for tool in ["info", "error", "huge"] {
        hub.call(tool, json!({})).await.unwrap();
    }
    let mut logs = Vec::new();
    while logs.len() < 2 {
        let event = wait_for(&mut events, Duration::from_secs(10), |e| {
            matches!(e, HubEvent::ServerLog { .. }).then(|| e.clone())
        })
        .await;
        logs.push(event);
    }
    match &logs[0] {
        HubEvent::ServerLog {
            server,
            level,
            logger,
            data,
            ..
        } => {
            assert_eq!(server.as_str(), "logs");
            assert_eq!(*level, mcp_types::LoggingLevel::Error);
            assert_eq!(logger.as_deref(), Some("storage"));
            assert_eq!(data.as_ref(), Some(&json!({"disk": "full"})));
        }
        other => panic!("{other:?}"),
    }
    // Over the bound: reported by its size, without its data.
    match &logs[1] {
        HubEvent::ServerLog {
            level,
            logger,
            data,
            bytes,
            ..
        } => {
            assert_eq!(*level, mcp_types::LoggingLevel::Critical);
            assert!(data.is_none() && logger.is_none());
            assert!(*bytes > mcp_hub::MAX_LOG_EVENT_BYTES, "{bytes}");
        }
        other => panic!("{other:?}"),
    }
    hub.shutdown().await;
}

#[tokio::test]
async fn log_messages_of_a_server_not_asked_for_them_are_discarded() {
    let script = Script::legacy()
        .tool(
            "error",
            Behavior::Log {
                level: "error".into(),
                message: json!("disk full"),
                logger: None,
            },
        )
        .tool(
            "change",
            Behavior::ChangeList {
                list: mcp_testkit::ListKind::Tools,
            },
        )
        .tool_spec(mcp_testkit::ToolSpec::new("later", Behavior::Echo).appearing_at_change(1));
    let (connector, _) = memory(script);
    let hub = Hub::builder(seeded())
        .server(
            ServerSpec::new("quiet", connector)
                .session(quick_session())
                .negotiation(Negotiation::Legacy)
                .adoption(mcp_hub::Adoption::Automatic),
        )
        .start()
        .await
        .unwrap();
    let mut events = hub.take_events().unwrap();
    hub.call("error", json!({})).await.unwrap();
    hub.call("change", json!({})).await.unwrap();
    // The session's events are handled in order: the log message came
    // before the list change whose adoption is awaited here.
    let mut logs = 0;
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .expect("no adoption")
            .expect("events ended");
        match event {
            HubEvent::ServerLog { .. } => logs += 1,
            HubEvent::SnapshotAdopted { .. } => break,
            _ => {}
        }
    }
    assert_eq!(logs, 0);
    hub.shutdown().await;
}
