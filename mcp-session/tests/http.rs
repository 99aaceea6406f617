//! The same session API over HTTP: the era probe decision table, session
//! expiry, the 2026 headers, and the HTTP+SSE fallback.

#[path = "support/common.rs"]
mod common;

use std::sync::Arc;

use common::*;
use mcp_session::{
    Negotiation, Ready, Session, SessionConfig, SessionError, SessionEvent, SessionEvents,
    SubscriptionEnd, SubscriptionEvent,
};
use mcp_testkit::http::HttpProbe;
use mcp_testkit::{
    Behavior, HttpFakeServer, HttpServerOptions, OnProbe, RunningHttpServer, Script,
};
use mcp_transport::{Connector, HttpConfig, HttpConnector, RequestFailure};
use mcp_types::Era;
use serde_json::json;

/// How long any one expected event may take.
const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

async fn server(script: Script, options: HttpServerOptions) -> RunningHttpServer {
    HttpFakeServer::start(script, options)
        .await
        .expect("http server")
}

/// A server of `script` with the `echo` tool.
async fn echo_server(script: Script, options: HttpServerOptions) -> RunningHttpServer {
    server(script.tool("echo", Behavior::Echo), options).await
}

fn connector(url: &str) -> Arc<dyn Connector> {
    Arc::new(HttpConnector::new(HttpConfig::new(url)))
}

#[tokio::test]
async fn every_legacy_answer_to_the_probe_means_legacy() {
    let probes = [
        HttpProbe::SessionRequired,
        HttpProbe::VersionHeaderRejected,
        HttpProbe::UnsupportedVersionText,
        HttpProbe::InvalidSessionText,
        HttpProbe::InvalidRequestNullId,
        HttpProbe::MethodNotFound,
        HttpProbe::EmptyOk,
    ];
    for probe in probes {
        let http = server(
            Script::legacy().tool("echo", Behavior::Echo),
            HttpServerOptions::default().probe(probe.clone()),
        )
        .await;
        let session = Session::connect(connector(&http.url()), quick_config())
            .await
            .unwrap();
        let session = match session.negotiate(Negotiation::Auto).await {
            Ok(s) => s,
            Err(e) => panic!("{probe:?}: {:?}", e.error()),
        };
        assert_eq!(session.era(), Era::Legacy, "{probe:?}");
        let result = session
            .call_tool("echo", args(json!({"text": "over http"})))
            .await
            .unwrap();
        assert_eq!(result.content[0].as_text(), Some("over http"), "{probe:?}");
        let init = http.requests.posts_of("initialize");
        assert_eq!(init.len(), 1, "{probe:?}");
        assert!(
            init[0].header("mcp-session-id").is_none(),
            "{probe:?}: no session id on initialize"
        );
        assert!(
            init[0].header("mcp-protocol-version").is_none(),
            "{probe:?}: no 2026 header"
        );
        let call = http.requests.posts_of("tools/call");
        assert!(call[0].header("mcp-session-id").is_some(), "{probe:?}");
        assert_eq!(
            call[0].header("mcp-protocol-version"),
            Some("2025-11-25"),
            "{probe:?}"
        );
        session.close().await;
    }
}

#[tokio::test]
async fn a_401_on_the_probe_is_authentication_not_an_era() {
    let http = server(
        Script::legacy(),
        HttpServerOptions::default().probe(HttpProbe::Unauthorized {
            www_authenticate: "Bearer resource_metadata=\"http://x/.well-known\"".into(),
        }),
    )
    .await;
    let session = Session::connect(connector(&http.url()), quick_config())
        .await
        .unwrap();
    let err = session.negotiate(Negotiation::Auto).await.unwrap_err();
    assert!(
        matches!(
            err.error(),
            SessionError::Http {
                failure: RequestFailure::Status { status: 401, .. },
                ..
            }
        ),
        "{:?}",
        err.error()
    );
    assert!(
        http.requests.posts_of("initialize").is_empty(),
        "no downgrade"
    );
}

#[tokio::test]
async fn a_5xx_on_the_probe_is_an_error_not_a_downgrade() {
    let http = server(
        Script::legacy(),
        HttpServerOptions::default().fail_with(503, &["server/discover"]),
    )
    .await;
    let session = Session::connect(connector(&http.url()), quick_config())
        .await
        .unwrap();
    let err = session.negotiate(Negotiation::Auto).await.unwrap_err();
    assert!(
        matches!(
            err.error(),
            SessionError::Http {
                failure: RequestFailure::Status { status: 503, .. },
                ..
            }
        ),
        "{:?}",
        err.error()
    );
    assert!(http.requests.posts_of("initialize").is_empty());
}

#[tokio::test]
async fn a_modern_server_over_http_gets_the_2026_headers() {
    let script = Script::modern().tool_json(
        json!({"name": "sql", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "query": {"type": "string"}}}}),
        Behavior::Echo,
    );
    let http = server(script, HttpServerOptions::default()).await;
    let session = ready(connector(&http.url()), quick_config(), Negotiation::Auto).await;
    assert_eq!(session.era(), Era::Modern);
    session.list_tools().await.unwrap();
    session
        .call_tool(
            "sql",
            args(json!({"region": "Zürich", "query": "select 1", "text": "t"})),
        )
        .await
        .unwrap();
    let call = &http.requests.posts_of("tools/call")[0];
    assert_eq!(call.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(call.header("mcp-method"), Some("tools/call"));
    assert_eq!(call.header("mcp-name"), Some("sql"));
    assert_eq!(
        call.header("mcp-param-region"),
        Some("=?base64?WsO8cmljaA==?=")
    );
    let list = &http.requests.posts_of("tools/list")[0];
    assert_eq!(list.header("mcp-method"), Some("tools/list"));
    assert!(
        call.header("mcp-session-id").is_none(),
        "no sessions in 2026"
    );
}

#[tokio::test]
async fn tools_with_invalid_header_annotations_are_left_out_over_http() {
    let script = Script::modern().tool("echo", Behavior::Echo).tool_json(
        json!({"name": "bad", "inputSchema": {"type": "object", "properties": {
                "n": {"type": "number", "x-mcp-header": "N"}}}}),
        Behavior::Echo,
    );
    let http = server(script, HttpServerOptions::default()).await;
    let session = ready(connector(&http.url()), quick_config(), Negotiation::Modern).await;
    let catalog = session.list_tools().await.unwrap();
    let names: Vec<&str> = catalog.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo"]);
    assert_eq!(catalog.rejected()[0].0, "bad");
}

#[tokio::test]
async fn a_left_out_tool_names_the_annotation_with_the_servers_property_names_escaped() {
    let script = Script::modern().tool_json(
        json!({"name": "bad", "inputSchema": {"type": "object", "properties": {
                "\u{1b}[2Jn": {"type": "number", "x-mcp-header": "N"}}}}),
        Behavior::Echo,
    );
    let http = server(script, HttpServerOptions::default()).await;
    let session = ready(connector(&http.url()), quick_config(), Negotiation::Modern).await;
    let catalog = session.list_tools().await.unwrap();
    let (name, why) = &catalog.rejected()[0];
    assert_eq!(name, "bad");
    assert!(!why.contains('\u{1b}'), "{why:?}");
    assert_eq!(
        why,
        "x-mcp-header is on a property that is not integer, string or boolean \
         (at /properties/\\u{1b}[2Jn/x-mcp-header)"
    );
}

#[tokio::test]
async fn an_expired_session_is_reinitialized_and_reads_are_retried() {
    for options in [
        HttpServerOptions::default(),
        HttpServerOptions::default().unknown_session_400(),
    ] {
        expired_session_reinitialized(options).await;
    }
}

async fn expired_session_reinitialized(options: HttpServerOptions) {
    let script = Script::legacy()
        .tool("echo", Behavior::Echo)
        .resource(mcp_testkit::ResourceSpec::text("note://a", "a", "alpha"));
    let http = server(script, options).await;
    let mut session = ready(connector(&http.url()), quick_config(), Negotiation::Legacy).await;
    let mut events = session.take_events().unwrap();
    let renewals = |events: &mut SessionEvents| {
        std::iter::from_fn(|| events.try_next())
            .filter(|e| matches!(e, SessionEvent::Reestablished))
            .count()
    };
    session.list_tools().await.unwrap();
    http.expire_sessions();
    // A read is retried after the session is established again, and the
    // host is told (before the read's answer).
    let read = session.read_resource("note://a").await.unwrap();
    assert_eq!(read.contents.len(), 1);
    assert_eq!(http.requests.posts_of("initialize").len(), 2);
    assert_eq!(renewals(&mut events), 1);
    // A tool call is never replayed.
    http.expire_sessions();
    let err = session
        .call_tool("echo", args(json!({"text": "x"})))
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::NotReplayed { .. }), "{err:?}");
    assert_eq!(http.requests.posts_of("initialize").len(), 3);
    assert_eq!(renewals(&mut events), 1);
    // The re-established session works.
    session
        .call_tool("echo", args(json!({"text": "y"})))
        .await
        .unwrap();
}

/// A server that forgets the session while we only listen (it restarted):
/// the GET stream finds out, and the session starts a new server session at
/// once, without waiting for a request of ours. The host is told; the
/// subscription made on the old session ends, saying why; listings are no
/// longer fresh; the new GET stream carries the new session. The server
/// says it forgot with `404`, or with `400` naming the session as servers
/// made from the TypeScript SDK's examples do.
#[tokio::test]
async fn a_session_the_server_forgot_is_started_again_without_a_request() {
    forgotten_session_started_again(HttpServerOptions::default()).await;
}

#[tokio::test]
async fn a_session_the_server_forgot_by_a_400_is_started_again_without_a_request() {
    forgotten_session_started_again(HttpServerOptions::default().unknown_session_400()).await;
}

/// A legacy session with `http` whose GET stream is opened again 10 ms
/// after it ends, and its events.
async fn listening_session(http: &RunningHttpServer) -> (Session<Ready>, SessionEvents) {
    let mut config = HttpConfig::new(http.url());
    config.default_retry = std::time::Duration::from_millis(10);
    let connector: Arc<dyn Connector> = Arc::new(HttpConnector::new(config));
    let mut session = ready(connector, quick_config(), Negotiation::Legacy).await;
    let events = session.take_events().unwrap();
    (session, events)
}

/// Waits (bounded) until `http` has seen the GET stream of the session it
/// named `session` opened.
async fn get_stream_opened(http: &RunningHttpServer, session: &str) {
    let opened = http
        .requests
        .wait_until(WAIT, |seen| {
            seen.iter()
                .any(|r| r.method == "GET" && r.header("mcp-session-id") == Some(session))
        })
        .await;
    assert!(opened, "no GET stream of {session}");
}

/// Waits (bounded) for [`SessionEvent::Reestablished`]; the session must
/// not end first.
async fn told_reestablished(events: &mut SessionEvents) {
    let told = tokio::time::timeout(WAIT, async {
        loop {
            match events.next().await {
                Some(SessionEvent::Reestablished) => return true,
                Some(SessionEvent::Closed(_)) | None => return false,
                Some(_) => {}
            }
        }
    })
    .await
    .expect("the host is told in time");
    assert!(told, "the session ended instead");
}

/// A server that comes back as a new release (it forgot the session, no
/// longer speaks the version agreed, describes itself anew): the session
/// follows it in the version it now speaks, and what the session says of
/// the server is the new release's.
#[tokio::test]
async fn a_server_back_as_a_new_release_is_followed_in_its_version() {
    let old = Script::legacy()
        .versions(["2025-06-18"])
        .server_info("demo", "1.0")
        .instructions("use old")
        .tool("old", Behavior::Echo);
    let http = server(old, HttpServerOptions::default()).await;
    let (session, mut events) = listening_session(&http).await;
    assert_eq!(session.protocol_version().as_str(), "2025-06-18");
    get_stream_opened(&http, "session-1").await;
    let new = Script::legacy()
        .versions(["2025-11-25"])
        .server_info("demo", "2.0")
        .instructions("use new")
        .tool("new", Behavior::Echo);
    http.restart_as(new);
    told_reestablished(&mut events).await;
    assert_eq!(session.protocol_version().as_str(), "2025-11-25");
    assert_eq!(session.server_info().version, "2.0");
    assert_eq!(session.instructions().as_deref(), Some("use new"));
    let tools = session.list_tools().await.unwrap();
    let names: Vec<_> = tools.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["new"]);
    // Its messages carry the version it speaks now.
    let listed = http.requests.posts_of("tools/list");
    assert_eq!(
        listed.last().unwrap().header("mcp-protocol-version"),
        Some("2025-11-25")
    );
    session.close().await;
}

/// A server that forgot the session and is not ready for a new one at
/// first (a deploy, say: its first `initialize` is refused): the session
/// tries again, spaced out, and gets there without a request of ours.
#[tokio::test]
async fn a_new_session_that_fails_at_first_is_tried_again() {
    let script = Script::legacy().tool("echo", Behavior::Echo);
    let http = server(script, HttpServerOptions::default()).await;
    let (session, mut events) = listening_session(&http).await;
    session.list_tools().await.unwrap();
    get_stream_opened(&http, "session-1").await;
    http.fail_next(503, "initialize", 2);
    http.expire_sessions();
    told_reestablished(&mut events).await;
    // Refused twice, then the third worked.
    assert_eq!(http.requests.posts_of("initialize").len(), 4);
    let echoed = session
        .call_tool("echo", args(json!({"text": "back"})))
        .await
        .unwrap();
    assert_eq!(echoed.content[0].as_text(), Some("back"));
    session.close().await;
}

async fn forgotten_session_started_again(options: HttpServerOptions) {
    // A server of an older version: the new session asks for the version
    // agreed, not our newest.
    let script = Script::legacy()
        .versions(["2025-06-18"])
        .tool(
            "touch",
            Behavior::TouchResource {
                uri: "note://a".into(),
            },
        )
        .resource(mcp_testkit::ResourceSpec::text("note://a", "a", "alpha"));
    let http = server(script, options).await;
    let (session, mut events) = listening_session(&http).await;
    let listing = session.list_resources().await.unwrap();
    let filter = mcp_types::SubscriptionFilter {
        resource_subscriptions: Some(vec!["note://a".into()]),
        ..mcp_types::SubscriptionFilter::default()
    };
    let mut subscription = session.subscribe(filter.clone()).await.unwrap();
    // The GET stream of the first session is open.
    get_stream_opened(&http, "session-1").await;
    let posts_before = http.requests.with_method("POST").len();
    http.expire_sessions();

    told_reestablished(&mut events).await;
    let ended = tokio::time::timeout(WAIT, subscription.next())
        .await
        .unwrap();
    assert!(
        matches!(
            ended,
            Some(SubscriptionEvent::Ended(SubscriptionEnd::SessionExpired))
        ),
        "{ended:?}"
    );
    assert!(!session.is_fresh(&listing));
    // After the expiry, the session sent only the new `initialize` (asking
    // for the version agreed before, with no session id) and `initialized`:
    // no request of ours prompted it. (`initialized` is on its way when the
    // event comes.)
    assert!(
        http.requests
            .wait_until(WAIT, |seen| seen
                .iter()
                .filter(|r| r.method == "POST")
                .count()
                >= posts_before + 2)
            .await
    );
    let posts: Vec<_> = http.requests.with_method("POST")[posts_before..].to_vec();
    let sent: Vec<_> = posts.iter().map(|r| r.jsonrpc_method.clone()).collect();
    assert_eq!(
        sent,
        [
            Some("initialize".to_owned()),
            Some("notifications/initialized".to_owned())
        ]
    );
    assert_eq!(posts[0].header("mcp-session-id"), None);
    let init = http.recorder.received();
    let asked = init
        .iter()
        .filter(|m| m["method"] == "initialize")
        .map(|m| m["params"]["protocolVersion"].clone())
        .collect::<Vec<_>>();
    assert_eq!(asked, [json!("2025-11-25"), json!("2025-06-18")]);
    assert_eq!(posts[1].header("mcp-session-id"), Some("session-2"));
    // The new session's GET stream follows.
    get_stream_opened(&http, "session-2").await;
    // Subscribing again works on the new session, and hears its updates.
    let mut again = session.subscribe(filter).await.unwrap();
    session.call_tool("touch", args(json!({}))).await.unwrap();
    let update = tokio::time::timeout(WAIT, again.next()).await.unwrap();
    assert!(
        matches!(&update, Some(SubscriptionEvent::ResourceUpdated { uri }) if uri == "note://a"),
        "{update:?}"
    );
    assert_eq!(http.requests.posts_of("initialize").len(), 2);
    session.close().await;
}

#[tokio::test]
async fn a_server_without_streamable_http_falls_back_to_http_sse() {
    let script = Script::legacy()
        .tool("echo", Behavior::Echo)
        .on_probe(OnProbe::MethodNotFound);
    let http = server(script, HttpServerOptions::default()).await;
    // The SSE endpoint answers POSTs with 405/404, as an old server does.
    let session = ready(
        connector(&http.sse_url()),
        quick_config(),
        Negotiation::Auto,
    )
    .await;
    assert_eq!(session.era(), Era::Legacy);
    let result = session
        .call_tool("echo", args(json!({"text": "via sse"})))
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text(), Some("via sse"));
    assert!(
        http.requests.requests().iter().any(|r| r.method == "GET"),
        "the legacy transport opened its event stream"
    );
}

#[tokio::test]
async fn the_era_verdict_is_remembered_per_endpoint_in_the_hosts_cache() {
    let http = server(Script::legacy(), HttpServerOptions::default()).await;
    let cache = mcp_session::EraCache::new();
    let config = || SessionConfig {
        era_cache: Some(cache.clone()),
        ..quick_config()
    };
    let first = ready(connector(&http.url()), config(), Negotiation::Auto).await;
    first.close().await;
    assert_eq!(cache.len(), 1);
    let second = ready(connector(&http.url()), config(), Negotiation::Auto).await;
    assert_eq!(second.era(), Era::Legacy);
    assert_eq!(
        http.requests.posts_of("server/discover").len(),
        1,
        "the second connection did not probe again"
    );
    second.close().await;
    // Another cache (another hub, another test) knows nothing of it, and
    // without a cache nothing is remembered.
    let other = SessionConfig {
        era_cache: Some(mcp_session::EraCache::new()),
        ..quick_config()
    };
    ready(connector(&http.url()), other, Negotiation::Auto)
        .await
        .close()
        .await;
    assert_eq!(http.requests.posts_of("server/discover").len(), 2);
    ready(connector(&http.url()), quick_config(), Negotiation::Auto)
        .await
        .close()
        .await;
    ready(connector(&http.url()), quick_config(), Negotiation::Auto)
        .await
        .close()
        .await;
    assert_eq!(http.requests.posts_of("server/discover").len(), 4);
}

/// A connection made with `cache`, and the echo tool's answer on it.
async fn connect_and_echo(url: &str, cache: &mcp_session::EraCache) -> (Era, String) {
    let config = SessionConfig {
        era_cache: Some(cache.clone()),
        ..quick_config()
    };
    let session = ready(connector(url), config, Negotiation::Auto).await;
    let result = session
        .call_tool("echo", args(json!({"text": "still there"})))
        .await
        .expect("echo");
    let era = session.era();
    session.close().await;
    (
        era,
        result.content[0].as_text().unwrap_or_default().to_owned(),
    )
}

#[tokio::test]
async fn a_server_now_refusing_the_remembered_legacy_era_is_probed_again() {
    // A legacy server, then a release that serves 2026-07-28 only and
    // refuses `initialize` (as the TypeScript SDK's `legacy: 'reject'`).
    let http = echo_server(
        Script::legacy(),
        HttpServerOptions::default().reject_legacy(),
    )
    .await;
    let cache = mcp_session::EraCache::new();
    let url = http.url();
    assert_eq!(connect_and_echo(&url, &cache).await.0, Era::Legacy);
    http.restart_as(Script::modern().tool("echo", Behavior::Echo));
    let (era, text) = connect_and_echo(&url, &cache).await;
    assert_eq!((era, text.as_str()), (Era::Modern, "still there"));
    assert_eq!(
        http.requests.posts_of("initialize").len(),
        2,
        "the remembered handshake was tried, once"
    );
    assert_eq!(
        http.requests.posts_of("server/discover").len(),
        2,
        "probed once at first and once more when the handshake was refused"
    );
    // The new verdict is remembered: no `initialize` again.
    assert_eq!(connect_and_echo(&url, &cache).await.0, Era::Modern);
    assert_eq!(http.requests.posts_of("initialize").len(), 2);
}

#[tokio::test]
async fn a_server_rolled_back_from_the_remembered_2026_era_is_probed_again() {
    let http = echo_server(Script::modern(), HttpServerOptions::default()).await;
    let cache = mcp_session::EraCache::new();
    let url = http.url();
    assert_eq!(connect_and_echo(&url, &cache).await.0, Era::Modern);
    // Rolled back to a legacy-only release: `server/discover` without a
    // session is a `400` asking for one, as the TypeScript SDK answers.
    http.restart_as(Script::legacy().tool("echo", Behavior::Echo));
    let (era, text) = connect_and_echo(&url, &cache).await;
    assert_eq!((era, text.as_str()), (Era::Legacy, "still there"));
    // The probe, the remembered era's `server/discover`, the new probe.
    assert_eq!(http.requests.posts_of("server/discover").len(), 3);
    assert_eq!(http.requests.posts_of("initialize").len(), 1);
}

#[tokio::test]
async fn a_server_that_fails_without_answering_keeps_its_remembered_era() {
    let http = echo_server(Script::legacy(), HttpServerOptions::default()).await;
    let cache = mcp_session::EraCache::new();
    let url = http.url();
    assert_eq!(connect_and_echo(&url, &cache).await.0, Era::Legacy);
    // A server that is not ready (503) says nothing of its era.
    http.fail_next(503, "initialize", 1);
    let config = SessionConfig {
        era_cache: Some(cache.clone()),
        ..quick_config()
    };
    let session = Session::connect(connector(&url), config).await.unwrap();
    let failed = session.negotiate(Negotiation::Auto).await;
    assert!(
        matches!(
            failed.as_ref().map_err(|e| e.error()),
            Err(SessionError::Http {
                failure: RequestFailure::Status { status: 503, .. },
                ..
            })
        ),
        "{:?}",
        failed.err()
    );
    assert_eq!(connect_and_echo(&url, &cache).await.0, Era::Legacy);
    assert_eq!(
        http.requests.posts_of("server/discover").len(),
        1,
        "never probed again"
    );
}

/// Waits (bounded) for the session's end and returns why it ended.
async fn told_closed(events: &mut SessionEvents) -> mcp_transport::CloseReason {
    tokio::time::timeout(WAIT, async {
        loop {
            match events.next().await {
                Some(SessionEvent::Closed(exit)) => return exit.reason,
                None => panic!("the events ended without Closed"),
                Some(_) => {}
            }
        }
    })
    .await
    .expect("the host is told in time")
}

/// The session ended because the server no longer speaks its protocol:
/// the host was told, and a later request fails saying why.
async fn ended_for_protocol_change(session: &Session<Ready>, events: &mut SessionEvents) {
    use mcp_transport::CloseReason;
    assert_eq!(told_closed(events).await, CloseReason::ProtocolChanged);
    assert!(session.is_closed());
    match session.list_tools().await {
        Err(SessionError::Dead(exit)) => assert_eq!(exit.reason, CloseReason::ProtocolChanged),
        other => panic!("{other:?}"),
    }
}

/// A legacy server replaced by a release that serves 2026-07-28 only: a
/// request is refused with `-32022`, and the connection ends instead of
/// failing every later request (a host connects again, and negotiates).
#[tokio::test]
async fn a_legacy_connection_whose_server_now_refuses_its_version_ends() {
    let http = echo_server(
        Script::legacy(),
        HttpServerOptions::default().reject_legacy(),
    )
    .await;
    let mut session = ready(connector(&http.url()), quick_config(), Negotiation::Legacy).await;
    let mut events = session.take_events().unwrap();
    http.restart_as(Script::modern().tool("echo", Behavior::Echo));
    let refused = session
        .call_tool("echo", args(json!({"text": "x"})))
        .await
        .unwrap_err();
    assert_eq!(
        refused.error_object().map(|e| e.code),
        Some(-32022),
        "{refused:?}"
    );
    ended_for_protocol_change(&session, &mut events).await;
    assert_eq!(
        http.requests.posts_of("initialize").len(),
        1,
        "no new server session was asked for in a version it refuses"
    );
}

/// The same while the host only listens: the GET stream finds the session
/// forgotten, the new `initialize` is refused with `-32022`, and the
/// connection ends (before, it kept asking once a minute for ever).
#[tokio::test]
async fn a_listening_connection_whose_server_now_refuses_its_version_ends() {
    let http = echo_server(
        Script::legacy(),
        HttpServerOptions::default().reject_legacy(),
    )
    .await;
    let (session, mut events) = listening_session(&http).await;
    get_stream_opened(&http, "session-1").await;
    http.restart_as(Script::modern().tool("echo", Behavior::Echo));
    ended_for_protocol_change(&session, &mut events).await;
    assert_eq!(http.requests.posts_of("initialize").len(), 2);
}

/// The same when the new release has no GET stream at all (`405`, as a
/// 2026-only server answers): the lost stream makes the session ping, the
/// ping is refused with `-32022`, and the connection ends. Before, the
/// stream just stopped and the host heard nothing more, with no word.
#[tokio::test]
async fn a_listening_connection_whose_stream_a_new_release_refuses_ends() {
    let http = echo_server(
        Script::legacy(),
        HttpServerOptions::default().reject_legacy(),
    )
    .await;
    let (session, mut events) = listening_session(&http).await;
    get_stream_opened(&http, "session-1").await;
    http.fail_next(405, "GET", u64::MAX);
    http.restart_as(Script::modern().tool("echo", Behavior::Echo));
    ended_for_protocol_change(&session, &mut events).await;
    assert_eq!(http.requests.posts_of("ping").len(), 1);
    assert_eq!(http.requests.posts_of("initialize").len(), 1);
}

/// A host that only listens, whose server restarted and refuses the old
/// session's stream with something that does not say why (a `405` from a
/// proxy): the session's ping meets the forgotten session, a new one is
/// started, and the host hears the server again.
#[tokio::test]
async fn a_listening_connection_whose_stream_is_refused_pings_and_is_heard_again() {
    let http = echo_server(Script::legacy(), HttpServerOptions::default()).await;
    let (session, mut events) = listening_session(&http).await;
    get_stream_opened(&http, "session-1").await;
    http.fail_next(405, "GET", 1);
    http.expire_sessions();
    told_reestablished(&mut events).await;
    assert_eq!(http.requests.posts_of("ping").len(), 1);
    get_stream_opened(&http, "session-2").await;
    session.close().await;
}

/// A 2026 server rolled back to a legacy-only release: a request meets the
/// legacy answer ("a session id is required"), one `server/discover` tells
/// it is legacy now, and the connection ends.
#[tokio::test]
async fn a_2026_connection_whose_server_was_rolled_back_ends_after_one_probe() {
    let http = echo_server(Script::modern(), HttpServerOptions::default()).await;
    let mut session = ready(connector(&http.url()), quick_config(), Negotiation::Modern).await;
    let mut events = session.take_events().unwrap();
    http.restart_as(Script::legacy().tool("echo", Behavior::Echo));
    let failed = session.list_tools().await.unwrap_err();
    assert!(
        matches!(
            failed,
            SessionError::Http {
                failure: RequestFailure::Status { status: 400, .. },
                ..
            }
        ),
        "{failed:?}"
    );
    ended_for_protocol_change(&session, &mut events).await;
    assert_eq!(http.requests.posts_of("server/discover").len(), 2);
}

/// A 2026 request refused for itself (a `404` from a proxy, say) costs one
/// `server/discover`, which finds the server still speaking 2026: the
/// connection goes on, and another refusal within the minute asks nothing.
#[tokio::test]
async fn a_2026_request_refused_for_itself_leaves_the_connection_alone() {
    let http = echo_server(Script::modern(), HttpServerOptions::default()).await;
    let session = ready(connector(&http.url()), quick_config(), Negotiation::Modern).await;
    for _ in 0..2 {
        http.fail_next(404, "tools/list", 1);
        session.list_tools().await.unwrap_err();
    }
    assert_eq!(http.requests.posts_of("server/discover").len(), 2);
    assert!(!session.is_closed());
    let echoed = session
        .call_tool("echo", args(json!({"text": "fine"})))
        .await
        .unwrap();
    assert_eq!(echoed.content[0].as_text(), Some("fine"));
}

#[tokio::test]
async fn a_broken_2026_stream_is_reissued_with_a_new_id_unless_it_is_a_tool_call() {
    use mcp_testkit::http::{CloseEarly, ReplyMode};
    let script = Script::modern()
        .tool("echo", Behavior::Echo)
        .resource(mcp_testkit::ResourceSpec::text("note://a", "a", "alpha"));
    let mut options = HttpServerOptions::default().reply(ReplyMode::Sse);
    options.close_early = Some(CloseEarly {
        retry_ms: 10,
        methods: vec!["resources/read".into(), "tools/call".into()],
        times: Some(2),
    });
    let http = server(script, options).await;
    let session = ready(connector(&http.url()), quick_config(), Negotiation::Modern).await;
    // A tool call's broken stream is reported, never re-sent.
    let err = session
        .call_tool("echo", args(json!({"text": "x"})))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            SessionError::Http {
                failure: RequestFailure::StreamBroken,
                ..
            }
        ),
        "{err:?}"
    );
    // The read's first stream breaks too; it is sent again with a new id.
    let read = session.read_resource("note://a").await.unwrap();
    assert_eq!(read.contents.len(), 1);
    let reads = http.recorder.with_method("resources/read");
    assert_eq!(reads.len(), 2);
    assert_ne!(reads[0]["id"], reads[1]["id"]);
    assert_eq!(http.recorder.with_method("tools/call").len(), 1);
}

#[tokio::test]
async fn a_header_mismatch_lists_the_tools_again_and_retries_once() {
    let script = Script::modern().tool_json(
        json!({"name": "sql", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}}),
        Behavior::Echo,
    );
    let http = server(script, HttpServerOptions::default()).await;
    let session = ready(connector(&http.url()), quick_config(), Negotiation::Modern).await;
    // No listing yet: the call goes out without Mcp-Param-Region, the server
    // answers -32020, the client lists the tools and sends it again.
    session
        .call_tool("sql", args(json!({"region": "eu", "text": "t"})))
        .await
        .unwrap();
    let calls = http.requests.posts_of("tools/call");
    assert_eq!(calls.len(), 2);
    assert!(calls[0].header("mcp-param-region").is_none());
    assert_eq!(calls[1].header("mcp-param-region"), Some("eu"));
    assert_eq!(http.requests.posts_of("tools/list").len(), 1);
}
