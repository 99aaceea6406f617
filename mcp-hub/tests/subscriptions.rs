//! Resource subscriptions: subscribe before the first read, start / update /
//! reconnect reads (after a restart, and after an HTTP server forgot the
//! session), deduplication, handler deadlines, the host's explicit
//! mechanism, the allow-list, and shutdown cancelling the streams.

#[path = "support/common.rs"]
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use futures::future::BoxFuture;
use mcp_hub::{
    AuditOutcome, Authority, Backoff, HandlerError, Hub, HubConfig, HubError, HubEvent, HubEvents,
    Mechanism, Operation, Reason, ResourceEvent, ResourceHandler, RestartPolicy, ServerAuthority,
    ServerSpec, SubscriptionSpec, SubscriptionStats,
};
use mcp_session::Negotiation;
use mcp_testkit::{Behavior, ListKind, ListenEnd, Recorder, ResourceSpec, Script};
use mcp_types::ResourceContents;
use serde_json::json;
use tokio::sync::mpsc;

const NOTES: &str = "notes://today";
const OTHER: &str = "notes://other";
const WAIT: Duration = Duration::from_secs(10);

/// Fails every call, after telling the test.
#[derive(Debug)]
struct Failing {
    tx: mpsc::UnboundedSender<ResourceEvent>,
}

impl ResourceHandler for Failing {
    fn handle(&self, event: ResourceEvent) -> BoxFuture<'_, Result<(), HandlerError>> {
        Box::pin(async move {
            let _ = self.tx.send(event);
            Err(HandlerError::internal("the host could not store it"))
        })
    }
}

/// Sends every event to the test; hangs instead when `hang` is set.
#[derive(Debug)]
struct Recording {
    tx: mpsc::UnboundedSender<ResourceEvent>,
    hang: bool,
}

impl ResourceHandler for Recording {
    fn handle(&self, event: ResourceEvent) -> BoxFuture<'_, Result<(), HandlerError>> {
        Box::pin(async move {
            if self.hang {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            let _ = self.tx.send(event);
            Ok(())
        })
    }
}

fn recording(hang: bool) -> (Arc<Recording>, mpsc::UnboundedReceiver<ResourceEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Arc::new(Recording { tx, hang }), rx)
}

/// `notes://today` reads "v1" until the resource list changed once, then
/// "v2"; `notes://other` reads "other". Tools touch, change, crash.
fn script(modern: bool) -> Script {
    let base = if modern {
        Script::modern()
    } else {
        Script::legacy()
    };
    let mut v1 = ResourceSpec::text(NOTES, "today", "v1");
    v1.vanish_at_change = Some(1);
    let mut v2 = ResourceSpec::text(NOTES, "today", "v2");
    v2.appear_at_change = 1;
    base.resource(v1)
        .resource(v2)
        .resource(ResourceSpec::text(OTHER, "other", "other"))
        .tool(
            "touch",
            Behavior::TouchResource {
                uri: NOTES.to_owned(),
            },
        )
        .tool(
            "touch_other",
            Behavior::TouchResource {
                uri: OTHER.to_owned(),
            },
        )
        .tool(
            "change",
            Behavior::ChangeList {
                list: ListKind::Resources,
            },
        )
        .tool("crash", Behavior::Crash { code: 3 })
        .tool(
            "end_streams",
            Behavior::EndListen {
                how: ListenEnd::Graceful,
                code: 0,
            },
        )
}

fn mechanism(modern: bool) -> Mechanism {
    if modern {
        Mechanism::Listen
    } else {
        Mechanism::ResourcesSubscribe
    }
}

fn server(modern: bool) -> (ServerSpec, Recorder) {
    let (connector, recorder) = memory(script(modern));
    let backoff = Backoff {
        initial: Duration::from_millis(20),
        max: Duration::from_millis(200),
        ..Backoff::default()
    };
    let spec = ServerSpec::new("docs", connector)
        .session(quick_session())
        .negotiation(if modern {
            Negotiation::Modern
        } else {
            Negotiation::Legacy
        })
        .restart(RestartPolicy::Backoff(backoff));
    (spec, recorder)
}

fn config() -> HubConfig {
    HubConfig {
        jitter_seed: Some(3),
        raise_descriptor_limit: false,
        ..HubConfig::default()
    }
}

/// A hub with `spec` and one subscription to [`NOTES`] on it, started.
async fn hub_following_notes(
    spec: ServerSpec,
    mechanism: Mechanism,
    handler: Arc<dyn ResourceHandler>,
) -> Hub {
    Hub::builder(config())
        .server(spec)
        .subscription(SubscriptionSpec::new("docs", NOTES, mechanism, handler))
        .start()
        .await
        .expect("hub starts")
}

fn text(event: &ResourceEvent) -> &str {
    match event.contents.first() {
        Some(ResourceContents::Text(t)) => &t.text,
        other => panic!("no text contents: {other:?}"),
    }
}

async fn next(rx: &mut mpsc::UnboundedReceiver<ResourceEvent>) -> ResourceEvent {
    tokio::time::timeout(WAIT, rx.recv())
        .await
        .expect("no handler call in time")
        .expect("handler dropped")
}

/// The counters of the hub's first subscription.
fn stats(hub: &Hub) -> SubscriptionStats {
    hub.subscription_stats()[0].clone()
}

/// The next hub event (bounded).
async fn next_event(events: &mut HubEvents) -> HubEvent {
    tokio::time::timeout(WAIT, events.next())
        .await
        .expect("no hub event in time")
        .expect("the event stream ended")
}

/// Waits until the server has received `n` reads of `uri`. The server
/// answers reads in the order they arrive, before anything sent later, so a
/// read it has received sees the resource as it is now.
async fn reads_reach(recorder: &Recorder, uri: &str, n: usize) {
    let arrived = recorder
        .wait_until(WAIT, |frames| {
            frames
                .iter()
                .filter(|f| f["method"] == "resources/read" && f["params"]["uri"] == uri)
                .count()
                >= n
        })
        .await;
    assert!(
        arrived,
        "the server never got read {n} of {uri}: {:?}",
        methods(recorder)
    );
}

/// Index of the first frame with `method`.
fn position(recorder: &Recorder, method: &str) -> usize {
    methods(recorder)
        .iter()
        .position(|m| m == method)
        .unwrap_or_else(|| panic!("`{method}` never received"))
}

async fn start_update_dedup_and_shutdown(modern: bool) {
    let (spec, recorder) = server(modern);
    let (handler, mut calls) = recording(false);
    let hub = hub_following_notes(spec, mechanism(modern), handler).await;

    let first = next(&mut calls).await;
    assert_eq!(first.reason, Reason::Start);
    assert_eq!(first.server.as_str(), "docs");
    assert_eq!(first.uri, NOTES);
    assert_eq!(text(&first), "v1");
    let subscribe = if modern {
        "subscriptions/listen"
    } else {
        "resources/subscribe"
    };
    assert!(
        position(&recorder, subscribe) < position(&recorder, "resources/read"),
        "subscribed before the first read: {:?}",
        methods(&recorder)
    );

    // Same contents again: read, but not handed on. The read reaches the
    // server before the change below, so it reads "v1" again.
    hub.call("touch", json!({})).await.unwrap();
    reads_reach(&recorder, NOTES, 2).await;

    // Changed contents: an update.
    hub.call("change", json!({})).await.unwrap();
    hub.call("touch", json!({})).await.unwrap();
    let update = next(&mut calls).await;
    assert_eq!(update.reason, Reason::Update);
    assert_eq!(text(&update), "v2");
    // A subscription reads and hands on one update at a time, so the touch
    // before the change was done with before this update was read: it was
    // deduplicated, and not handed on (this is the first call since the start).
    assert_eq!(stats(&hub).deduplicated, 1);

    hub.shutdown().await;
    // The shutdown ended the subscription's task: its counters are final.
    let stats = stats(&hub);
    assert_eq!((stats.handled, stats.deduplicated), (2, 1));
    assert!(calls.try_recv().is_err(), "identical contents were handled");
    if modern {
        let listen = resource_listens(&recorder);
        assert_eq!(listen.len(), 1);
        let id = listen[0]["id"].clone();
        assert!(
            recorder.cancelled_ids().contains(&id),
            "the listen request {id} was cancelled at shutdown: {:?}",
            methods(&recorder)
        );
    } else {
        let unsubscribe = recorder.with_method("resources/unsubscribe");
        assert_eq!(unsubscribe.len(), 1, "unsubscribed at shutdown");
        assert_eq!(unsubscribe[0]["params"]["uri"], NOTES);
    }
}

#[tokio::test]
async fn legacy_start_update_dedup_and_shutdown() {
    start_update_dedup_and_shutdown(false).await;
}

#[tokio::test]
async fn modern_start_update_dedup_and_shutdown() {
    start_update_dedup_and_shutdown(true).await;
}

async fn reconnects_after_a_restart(modern: bool) {
    let (spec, _recorder) = server(modern);
    let (handler, mut calls) = recording(false);
    let hub = hub_following_notes(spec, mechanism(modern), handler).await;
    let mut events = hub.take_events().unwrap();
    assert_eq!(next(&mut calls).await.reason, Reason::Start);
    hub.call("change", json!({})).await.unwrap();
    hub.call("touch", json!({})).await.unwrap();
    assert_eq!(text(&next(&mut calls).await), "v2");

    // The server dies; its replacement starts over at "v1".
    assert!(hub.call("crash", json!({})).await.is_err(), "it answered");
    let again = next(&mut calls).await;
    assert_eq!(again.reason, Reason::Reconnect);
    assert_eq!(text(&again), "v1");
    let attempt = wait_for(&mut events, WAIT, |e| match e {
        HubEvent::SubscriptionReconnecting { uri, attempt, .. } if uri == NOTES => Some(*attempt),
        _ => None,
    })
    .await;
    assert_eq!(attempt, 1);
    // Counted as made again before its reconnect read.
    assert!(stats(&hub).reconnects >= 1);

    // The new stream delivers updates.
    hub.call("change", json!({})).await.unwrap();
    hub.call("touch", json!({})).await.unwrap();
    let update = next(&mut calls).await;
    assert_eq!((update.reason, text(&update)), (Reason::Update, "v2"));
    hub.shutdown().await;
    // With its task ended, the counters are final: the start, the update,
    // the reconnect read and the last update were all handled.
    assert_eq!(stats(&hub).handled, 4);
}

#[tokio::test]
async fn legacy_reconnects_after_a_restart() {
    reconnects_after_a_restart(false).await;
}

#[tokio::test]
async fn modern_reconnects_after_a_restart() {
    reconnects_after_a_restart(true).await;
}

/// A legacy server over Streamable HTTP that forgets our session (it
/// restarted, as a new release) while the hub only listens: the session
/// starts a new one at once, the hub says so, takes what the server says of
/// itself again, sets the log level again, lists the tools again and
/// subscribes again, and the handler gets the reconnect read from the new
/// server session. The server was never restarted by the hub.
#[cfg(feature = "http")]
#[tokio::test]
async fn a_legacy_http_server_that_forgot_the_session_is_followed_again() {
    let http = mcp_testkit::HttpFakeServer::start(
        script(false),
        mcp_testkit::HttpServerOptions::default(),
    )
    .await
    .expect("http server");
    let mut transport = mcp_transport::HttpConfig::new(http.url());
    transport.default_retry = Duration::from_millis(10);
    let spec = ServerSpec::new(
        "docs",
        Arc::new(mcp_transport::HttpConnector::new(transport)),
    )
    .session(quick_session())
    .negotiation(Negotiation::Legacy)
    .log_level(mcp_types::LoggingLevel::Warning);
    let (handler, mut calls) = recording(false);
    let hub = hub_following_notes(spec, Mechanism::ResourcesSubscribe, handler).await;
    let mut events = hub.take_events().unwrap();
    assert_eq!(next(&mut calls).await.reason, Reason::Start);
    hub.call("change", json!({})).await.unwrap();
    hub.call("touch", json!({})).await.unwrap();
    assert_eq!(text(&next(&mut calls).await), "v2");
    drain(&mut events);

    // The server comes back as a new release and has forgotten every
    // session; the new one starts over at "v1".
    http.restart_as(script(false).server_info("docs", "2.0"));
    let mut seen = Vec::new();
    wait_for(&mut events, WAIT, |e| {
        seen.push(format!("{e:?}"));
        matches!(e, HubEvent::SessionReestablished { server } if server.as_str() == "docs")
            .then_some(())
    })
    .await;
    let again = next(&mut calls).await;
    assert_eq!((again.reason, text(&again)), (Reason::Reconnect, "v1"));
    assert!(
        !seen
            .iter()
            .any(|e| e.starts_with("Restarting") || e.starts_with("Failed")),
        "the hub did not restart the server: {seen:?}"
    );
    assert_eq!(stats(&hub).reconnects, 1);
    // The status shows what the server now says of itself.
    let info = hub.status("docs").unwrap().info.unwrap();
    assert_eq!(info.implementation.version, "2.0");
    let on_new_session = |method: &str| {
        http.requests
            .posts_of(method)
            .iter()
            .filter(|r| r.header("mcp-session-id") == Some("session-2"))
            .count()
    };
    assert_eq!(http.requests.posts_of("initialize").len(), 2);
    assert_eq!(on_new_session("resources/subscribe"), 1);
    assert_eq!(on_new_session("logging/setLevel"), 1);
    assert_eq!(on_new_session("tools/list"), 1);

    // The new subscription delivers updates.
    hub.call("change", json!({})).await.unwrap();
    hub.call("touch", json!({})).await.unwrap();
    let update = next(&mut calls).await;
    assert_eq!((update.reason, text(&update)), (Reason::Update, "v2"));
    hub.shutdown().await;
}

/// The slow handler's time-outs and the reads of `notes://other`, among
/// the hub's events.
#[derive(Debug, Default)]
struct Tally {
    timeouts: Vec<(Reason, Duration)>,
    other_reads: usize,
}

impl Tally {
    fn add(&mut self, event: HubEvent) {
        match event {
            HubEvent::HandlerTimedOut {
                uri, reason, after, ..
            } if uri == NOTES => self.timeouts.push((reason, after)),
            HubEvent::Audit(record)
                if record.operation == Operation::ReadResource
                    && record.target.as_deref() == Some(OTHER)
                    && record.outcome == AuditOutcome::Succeeded =>
            {
                self.other_reads += 1;
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn a_slow_handler_times_out_without_blocking_another() {
    let (spec, _recorder) = server(false);
    let (slow, _never) = recording(true);
    let (quick, mut calls) = recording(false);
    let mut slow_spec = SubscriptionSpec::new("docs", NOTES, Mechanism::ResourcesSubscribe, slow);
    slow_spec.handler_timeout = Duration::from_millis(100);
    let hub = Hub::builder(config())
        .server(spec)
        .subscription(slow_spec)
        .subscription(SubscriptionSpec::new(
            "docs",
            OTHER,
            Mechanism::ResourcesSubscribe,
            quick,
        ))
        .start()
        .await
        .expect("hub starts");
    let mut events = hub.take_events().unwrap();
    let other = next(&mut calls).await;
    assert_eq!((other.uri.as_str(), other.reason), (OTHER, Reason::Start));
    let mut seen = Tally::default();
    while seen.timeouts.is_empty() {
        seen.add(next_event(&mut events).await);
    }
    assert_eq!(
        seen.timeouts[0],
        (Reason::Start, Duration::from_millis(100))
    );
    // A time-out is counted before it is reported.
    let slow_stats = stats(&hub);
    assert_eq!(slow_stats.timeouts, 1);
    assert_eq!(slow_stats.handled, 0);

    // The other subscription keeps working while the slow one times out again.
    hub.call("touch", json!({})).await.unwrap();
    hub.call("touch_other", json!({})).await.unwrap();
    while seen.timeouts.len() < 2 || seen.other_reads < 2 {
        seen.add(next_event(&mut events).await);
    }
    assert_eq!(seen.timeouts[1].0, Reason::Update);
    assert_eq!(stats(&hub).timeouts, 2);
    // The other subscription compares what it read in the step that
    // reports the read (nothing is awaited in between), and the shutdown
    // ends its task: its counters are final.
    hub.shutdown().await;
    let stats = hub.subscription_stats();
    assert_eq!(stats[1].uri, OTHER);
    assert_eq!(stats[1].handled, 1);
    assert_eq!(stats[1].deduplicated, 1);
}

async fn start_error(modern_server: bool, mechanism: Mechanism) -> HubError {
    let (spec, _recorder) = server(modern_server);
    let (handler, _calls) = recording(false);
    Hub::builder(config())
        .server(spec)
        .subscription(SubscriptionSpec::new("docs", NOTES, mechanism, handler))
        .start()
        .await
        .expect_err("the subscription cannot be made")
}

#[tokio::test]
async fn a_mechanism_the_era_lacks_fails_the_start_by_name() {
    for (modern, mechanism) in [
        (false, Mechanism::Listen),
        (true, Mechanism::ResourcesSubscribe),
    ] {
        let error = start_error(modern, mechanism).await;
        let HubError::SubscriptionFailed {
            server,
            uri,
            source,
        } = &error
        else {
            panic!("not a subscription failure: {error:?}");
        };
        assert_eq!((server.as_str(), uri.as_str()), ("docs", NOTES));
        match source.as_ref() {
            HubError::MechanismMismatch {
                mechanism: asked, ..
            } => assert_eq!(*asked, mechanism),
            other => panic!("not a mismatch: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_uri_outside_the_allow_list_fails_the_start() {
    let (spec, recorder) = server(false);
    let (handler, _calls) = recording(false);
    let error = Hub::builder(config())
        .server(spec)
        .authority(
            Authority::unrestricted()
                .with_server("docs", ServerAuthority::default().resources([OTHER])),
        )
        .subscription(SubscriptionSpec::new(
            "docs",
            NOTES,
            Mechanism::ResourcesSubscribe,
            handler,
        ))
        .start()
        .await
        .expect_err("denied");
    let HubError::SubscriptionFailed { source, .. } = &error else {
        panic!("not a subscription failure: {error:?}");
    };
    assert!(
        matches!(source.as_ref(), HubError::Denied { .. }),
        "{source:?}"
    );
    assert!(recorder.with_method("resources/subscribe").is_empty());
}

#[tokio::test]
async fn registration_checks_its_settings_and_server() {
    let (handler, _calls) = recording(false);
    let mut spec = SubscriptionSpec::new("docs", NOTES, Mechanism::ResourcesSubscribe, handler);
    spec.handler_timeout = Duration::ZERO;
    assert!(matches!(
        Hub::builder(config())
            .subscription(spec.clone())
            .start()
            .await,
        Err(HubError::InvalidSetting { .. })
    ));
    spec.handler_timeout = Duration::from_secs(1);
    let error = Hub::builder(config())
        .subscription(spec)
        .start()
        .await
        .expect_err("no such server");
    assert!(matches!(error, HubError::UnknownServer { .. }), "{error:?}");
}

#[tokio::test]
async fn a_failed_handler_is_reported_and_the_same_contents_are_offered_again() {
    let (spec, _recorder) = server(false);
    let (tx, mut calls) = mpsc::unbounded_channel();
    let handler = Arc::new(Failing { tx });
    let hub = hub_following_notes(spec, Mechanism::ResourcesSubscribe, handler).await;
    let mut events = hub.take_events().unwrap();
    assert_eq!(next(&mut calls).await.reason, Reason::Start);
    let error = wait_for(&mut events, WAIT, |e| match e {
        HubEvent::HandlerFailed { error, reason, .. } => Some((error.to_string(), *reason)),
        _ => None,
    })
    .await;
    assert_eq!(
        error,
        ("the host could not store it".to_owned(), Reason::Start)
    );
    // Not handled, so the same contents are not deduplicated.
    hub.call("touch", json!({})).await.unwrap();
    let again = next(&mut calls).await;
    assert_eq!((again.reason, text(&again)), (Reason::Update, "v1"));
    let reason = wait_for(&mut events, WAIT, |e| match e {
        HubEvent::HandlerFailed { reason, .. } => Some(*reason),
        _ => None,
    })
    .await;
    assert_eq!(reason, Reason::Update);
    // A handler error is counted before it is reported.
    let stats = stats(&hub);
    assert_eq!(stats.handler_errors, 2);
    assert_eq!((stats.handled, stats.deduplicated), (0, 0));
    hub.shutdown().await;
}

#[tokio::test]
async fn a_listen_stream_the_server_ends_is_made_again() {
    let (spec, recorder) = server(true);
    let (handler, mut calls) = recording(false);
    let hub = hub_following_notes(spec, Mechanism::Listen, handler).await;
    assert_eq!(next(&mut calls).await.reason, Reason::Start);
    hub.call("end_streams", json!({})).await.unwrap();
    // Made again on the same session (listened again, then read). The
    // reconnect read reaches the server before the change below, so it
    // reads what was handled already.
    reads_reach(&recorder, NOTES, 2).await;
    assert_eq!(resource_listens(&recorder).len(), 2);
    hub.call("change", json!({})).await.unwrap();
    hub.call("touch", json!({})).await.unwrap();
    let update = next(&mut calls).await;
    assert_eq!((update.reason, text(&update)), (Reason::Update, "v2"));
    // One read at a time: the subscription was counted as made again and
    // its reconnect read deduplicated (not handed on: this is the first
    // call since the start) before this update was read.
    let now = stats(&hub);
    assert_eq!((now.reconnects, now.deduplicated), (1, 1));
    hub.shutdown().await;
    // With its task ended, the counters are final: the start and the update.
    assert_eq!(stats(&hub).handled, 2);
}

/// The `subscriptions/listen` requests for resources (the hub also keeps one
/// per 2026 session for tool list changes).
fn resource_listens(recorder: &mcp_testkit::Recorder) -> Vec<serde_json::Value> {
    recorder
        .with_method("subscriptions/listen")
        .into_iter()
        .filter(|l| {
            l["params"]["notifications"]
                .get("resourceSubscriptions")
                .is_some()
        })
        .collect()
}

/// A subscription made on a running hub with the era's own mechanism:
/// subscribed before its first read, updated, made again after a restart,
/// and refused by name when its server is unknown or its URI not allowed.
async fn subscribe_after_start_by_era(modern: bool) {
    let (spec, recorder) = server(modern);
    let hub = Hub::builder(config())
        .server(spec)
        .authority(
            Authority::named().with_server("docs", ServerAuthority::default().resources([NOTES])),
        )
        .start()
        .await
        .expect("hub starts");
    let (handler, mut calls) = recording(false);
    hub.subscribe(SubscriptionSpec::new(
        "docs",
        NOTES,
        Mechanism::ByEra,
        handler.clone(),
    ))
    .await
    .expect("subscribed");
    let first = next(&mut calls).await;
    assert_eq!((first.reason, text(&first)), (Reason::Start, "v1"));
    let subscribe = if modern {
        "subscriptions/listen"
    } else {
        "resources/subscribe"
    };
    assert!(position(&recorder, subscribe) < position(&recorder, "resources/read"));
    hub.call("change", json!({})).await.unwrap();
    hub.call("touch", json!({})).await.unwrap();
    let update = next(&mut calls).await;
    assert_eq!((update.reason, text(&update)), (Reason::Update, "v2"));
    assert_eq!(hub.subscription_stats().len(), 1);

    // Refusals: by name, and nothing is left registered.
    let unknown = hub
        .subscribe(SubscriptionSpec::new(
            "nope",
            NOTES,
            Mechanism::ByEra,
            handler.clone(),
        ))
        .await
        .unwrap_err();
    assert!(
        matches!(unknown, HubError::UnknownServer { .. }),
        "{unknown:?}"
    );
    let denied = hub
        .subscribe(SubscriptionSpec::new(
            "docs",
            OTHER,
            Mechanism::ByEra,
            handler.clone(),
        ))
        .await
        .unwrap_err();
    assert!(matches!(denied, HubError::Denied { .. }), "{denied:?}");
    assert_eq!(hub.subscription_stats().len(), 1);

    // The server dies and comes back: the subscription is made again.
    let _ = hub.call("crash", json!({})).await;
    let again = next(&mut calls).await;
    assert_eq!(again.reason, Reason::Reconnect);
    assert!(stats(&hub).reconnects >= 1);
    hub.shutdown().await;
    let late = hub
        .subscribe(SubscriptionSpec::new(
            "docs",
            NOTES,
            Mechanism::ByEra,
            handler,
        ))
        .await;
    assert!(late.is_err(), "subscribed after shutdown");
}

#[tokio::test]
async fn legacy_subscribe_after_start_by_era() {
    subscribe_after_start_by_era(false).await;
}

#[tokio::test]
async fn modern_subscribe_after_start_by_era() {
    subscribe_after_start_by_era(true).await;
}

#[tokio::test]
async fn a_subscribed_read_reports_its_progress_as_events() {
    let mut slow = ResourceSpec::text(NOTES, "today", "v1");
    slow.progress_steps = 3;
    let (connector, _recorder) = memory(Script::legacy().resource(slow));
    let (handler, mut calls) = recording(false);
    let hub = Hub::builder(config())
        .server(
            ServerSpec::new("docs", connector)
                .session(quick_session())
                .negotiation(Negotiation::Legacy),
        )
        .subscription(SubscriptionSpec::new(
            "docs",
            NOTES,
            Mechanism::ByEra,
            handler,
        ))
        .start()
        .await
        .unwrap();
    let mut events = hub.take_events().unwrap();
    let first = next(&mut calls).await;
    assert_eq!(text(&first), "v1");
    // The progress came before the answer, so its events are queued by now.
    let progress: Vec<(f64, Option<f64>, Option<String>)> =
        std::iter::from_fn(|| events.try_next())
            .filter_map(|e| match e {
                HubEvent::SubscriptionProgress {
                    server,
                    uri,
                    progress,
                    total,
                    message,
                } => {
                    assert_eq!((server.as_str(), uri.as_str()), ("docs", NOTES));
                    Some((progress, total, message))
                }
                _ => None,
            })
            .collect();
    assert_eq!(progress.len(), 3, "{progress:?}");
    assert_eq!(
        progress[2],
        (3.0, Some(3.0), Some("step 3 of 3".to_owned()))
    );
    hub.shutdown().await;
}

/// A 2026-07-28 server whose `wait` tool runs as a task.
fn tasking(name: &str) -> (ServerSpec, Recorder) {
    let script =
        Script::modern().task_tool("wait", Behavior::Hang, mcp_testkit::TaskSupport::Optional);
    let (connector, recorder) = memory(script);
    let spec = ServerSpec::new(name, connector)
        .session(quick_session())
        .negotiation(Negotiation::Modern);
    (spec, recorder)
}

#[tokio::test]
async fn a_task_watch_is_refused_by_name_where_no_server_can_give_one() {
    let (old, old_recorder) = server(false);
    let (jobs, jobs_recorder) = tasking("jobs");
    let (other, _) = tasking("other");
    let hub = Hub::builder(config())
        .server(old)
        .server(jobs)
        .server(other)
        .authority(
            Authority::named()
                .with_server("docs", ServerAuthority::default())
                .with_server("jobs", ServerAuthority::default()),
        )
        .start()
        .await
        .expect("hub starts");
    // A legacy server has no task streams: refused before anything is sent.
    let error = hub.watch_task("docs", "t-1").await.unwrap_err();
    assert!(
        matches!(
            error,
            HubError::Unsupported {
                operation: "notifications/tasks",
                ..
            }
        ),
        "{error:?}"
    );
    assert!(old_recorder.with_method("subscriptions/listen").is_empty());
    // A server the authority does not name.
    let error = hub.watch_task("other", "t-1").await.unwrap_err();
    assert!(matches!(error, HubError::Denied { .. }), "{error:?}");
    // An id out of bounds.
    for id in [
        String::new(),
        "x".repeat(mcp_hub::MAX_WATCHED_TASK_ID_BYTES + 1),
    ] {
        let error = hub.watch_task("jobs", &id).await.unwrap_err();
        assert!(
            matches!(error, HubError::InvalidSetting { .. }),
            "{error:?}"
        );
    }
    // A task the server does not know: it leaves the id out of its
    // acknowledgement.
    let error = hub.watch_task("jobs", "no-such-task").await.unwrap_err();
    assert!(
        matches!(&error, HubError::SubscriptionRefused { uri, .. } if uri == "no-such-task"),
        "{error:?}"
    );
    // The request named the task and declared the extension.
    let listens = jobs_recorder.with_method("subscriptions/listen");
    let asked = listens
        .iter()
        .find(|f| f["params"]["notifications"].get("taskIds").is_some())
        .expect("a listen for the task");
    assert_eq!(
        asked["params"]["notifications"]["taskIds"],
        json!(["no-such-task"])
    );
    assert!(
        asked["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
            ["io.modelcontextprotocol/tasks"]
            .is_object(),
        "{asked}"
    );
    hub.shutdown().await;
}
