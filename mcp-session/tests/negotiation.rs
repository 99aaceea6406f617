//! Era negotiation against the fake server: every probe outcome of the stdio
//! rules.

#[path = "support/common.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use mcp_session::{Negotiation, Session, SessionError};
use mcp_testkit::{Behavior, OnProbe, Script};
use mcp_types::{Era, ProtocolVersion};

#[tokio::test]
async fn auto_on_a_legacy_server_falls_back_to_initialize() {
    let script = Script::legacy()
        .server_info("legacy-server", "1.2.3")
        .instructions("use echo")
        .tool("echo", Behavior::Echo);
    let (connector, recorder) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Auto).await;
    assert_eq!(session.era(), Era::Legacy);
    assert_eq!(session.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(session.server_info().name, "legacy-server");
    assert_eq!(session.instructions().as_deref(), Some("use echo"));
    settle(&recorder, "notifications/initialized").await;
    assert_eq!(
        methods(&recorder),
        vec!["server/discover", "initialize", "notifications/initialized"]
    );
    let init = &recorder.with_method("initialize")[0];
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    assert!(
        init["params"].get("_meta").is_none(),
        "no 2026 keys in initialize"
    );
}

#[tokio::test]
async fn auto_on_a_modern_server_uses_discover_and_per_request_meta() {
    let script = Script::modern().tool("echo", Behavior::Echo);
    let (connector, recorder) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Auto).await;
    assert_eq!(session.era(), Era::Modern);
    assert_eq!(session.protocol_version(), ProtocolVersion::V2026_07_28);
    let result = session
        .call_tool("echo", args(serde_json::json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(result.content.len(), 1);
    assert_eq!(methods(&recorder), vec!["server/discover", "tools/call"]);
    let call = &recorder.with_method("tools/call")[0];
    let meta = &call["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
    assert!(meta["io.modelcontextprotocol/clientInfo"]["name"].is_string());
}

#[tokio::test]
async fn a_silent_probe_means_legacy_after_the_probe_timeout() {
    let script = Script::legacy().on_probe(OnProbe::Silence);
    let (connector, recorder) = memory(script);
    let started = Instant::now();
    let session = ready(connector, quick_config(), Negotiation::Auto).await;
    assert_eq!(session.era(), Era::Legacy);
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(
        !methods(&recorder).contains(&"notifications/cancelled".to_owned()),
        "a legacy server must not see a notification before initialize"
    );
}

#[tokio::test]
async fn unsupported_version_listing_only_legacy_versions_means_legacy() {
    let script = Script::legacy().on_probe(OnProbe::UnsupportedVersion {
        versions: vec!["2025-06-18".into(), "2025-11-25".into()],
    });
    let (connector, _) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Auto).await;
    assert_eq!(session.era(), Era::Legacy);
}

#[tokio::test]
async fn invalid_request_with_null_id_on_the_probe_means_legacy() {
    let script = Script::legacy().on_probe(OnProbe::InvalidRequest);
    let (connector, _) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Auto).await;
    assert_eq!(session.era(), Era::Legacy);
}

#[tokio::test]
async fn a_server_that_exits_on_the_probe_is_respawned_and_initialized() {
    let script = Script::legacy().on_probe(OnProbe::Exit { code: 1 });
    let (connector, recorder) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Auto).await;
    assert_eq!(session.era(), Era::Legacy);
    settle(&recorder, "notifications/initialized").await;
    assert_eq!(
        methods(&recorder),
        vec!["server/discover", "initialize", "notifications/initialized"]
    );
}

#[tokio::test]
async fn a_real_child_that_exits_on_the_probe_is_respawned() {
    let script = Script::legacy()
        .on_probe(OnProbe::Exit { code: 3 })
        .tool("echo", Behavior::Echo);
    let connector = std::sync::Arc::new(stdio(&script, None));
    let session = ready(connector, quick_config(), Negotiation::Auto).await;
    assert_eq!(session.era(), Era::Legacy);
    let result = session
        .call_tool("echo", args(serde_json::json!({"text": "again"})))
        .await
        .unwrap();
    assert_eq!(result.is_error, None);
    let dead = session.close().await;
    assert_eq!(dead.info().exit_code, Some(0));
}

#[tokio::test]
async fn pinned_legacy_never_probes() {
    let (connector, recorder) = memory(Script::dual());
    let session = ready(connector, quick_config(), Negotiation::Legacy).await;
    assert_eq!(session.era(), Era::Legacy);
    settle(&recorder, "notifications/initialized").await;
    assert_eq!(
        methods(&recorder),
        vec!["initialize", "notifications/initialized"]
    );
}

#[tokio::test]
async fn pinned_modern_on_a_legacy_server_fails_without_downgrading() {
    let (connector, _) = memory(Script::legacy());
    let session = Session::connect(connector, quick_config()).await.unwrap();
    let err = session.negotiate(Negotiation::Modern).await.unwrap_err();
    assert!(
        matches!(err.error(), SessionError::Server { code: -32601, .. }),
        "{:?}",
        err.error()
    );
}

#[tokio::test]
async fn a_dual_server_is_spoken_to_in_the_modern_era() {
    let (connector, _) = memory(Script::dual());
    let session = ready(connector, quick_config(), Negotiation::Auto).await;
    assert_eq!(session.era(), Era::Modern);
}

#[tokio::test]
async fn unsupported_version_naming_our_version_is_retried_not_downgraded_at_once() {
    // The server says it speaks 2026-07-28 yet refuses it: the client asks
    // once more (the spec's retry), then treats it as legacy.
    let script = Script::legacy().on_probe(OnProbe::UnsupportedVersion {
        versions: vec!["2026-07-28".into(), "2025-11-25".into()],
    });
    let (connector, recorder) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Auto).await;
    assert_eq!(session.era(), Era::Legacy);
    assert_eq!(
        recorder.with_method("server/discover").len(),
        2,
        "one retry"
    );
}

#[tokio::test]
async fn recognised_modern_refusals_never_downgrade() {
    for code in [-32020, -32021] {
        let script = Script::legacy().on_probe(OnProbe::Error { code });
        let (connector, recorder) = memory(script);
        let session = Session::connect(connector, quick_config()).await.unwrap();
        let err = session.negotiate(Negotiation::Auto).await.unwrap_err();
        assert!(
            matches!(err.error(), SessionError::NegotiationRefused { code: c, .. } if *c == code),
            "{code}: {:?}",
            err.error()
        );
        assert!(
            recorder.with_method("initialize").is_empty(),
            "{code}: no fallback"
        );
    }
}

#[tokio::test]
async fn any_other_error_on_the_probe_means_legacy() {
    let script = Script::legacy().on_probe(OnProbe::Error { code: -32000 });
    let (connector, _) = memory(script);
    let session = ready(connector, quick_config(), Negotiation::Auto).await;
    assert_eq!(session.era(), Era::Legacy);
}

/// A hand-written legacy server whose `initialize` answer names `version`.
fn initialize_answering(version: &'static str) -> std::sync::Arc<dyn mcp_transport::Connector> {
    line_server(move |msg| {
        (msg["method"] == "initialize").then(|| {
            serde_json::json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": version, "capabilities": {},
                "serverInfo": {"name": "hostile", "version": "1"}}})
            .to_string()
        })
    })
}

#[tokio::test]
async fn an_offered_version_with_escape_sequences_is_escaped_in_the_error() {
    // Clears the screen, goes home and forges a line of ours.
    let offered = "2025-11-25\u{1b}[2J\u{1b}[1;1Hconnected to the server";
    let session = Session::connect(initialize_answering(offered), quick_config())
        .await
        .unwrap();
    let err = session.negotiate(Negotiation::Legacy).await.unwrap_err();
    match err.error() {
        SessionError::UnsupportedVersion { offered: kept } => assert_eq!(kept, offered),
        other => panic!("unexpected {other:?}"),
    }
    let shown = err.to_string();
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
    assert!(
        shown.contains("2025-11-25\\u{1b}[2J\\u{1b}[1;1Hconnected to the server"),
        "{shown:?}"
    );
}

#[tokio::test]
async fn a_long_offered_version_is_bounded_in_the_error() {
    let offered: &'static str = "9".repeat(100_000).leak();
    let session = Session::connect(initialize_answering(offered), quick_config())
        .await
        .unwrap();
    let err = session.negotiate(Negotiation::Legacy).await.unwrap_err();
    assert!(matches!(
        err.error(),
        SessionError::UnsupportedVersion { .. }
    ));
    let shown = err.to_string();
    assert!(shown.len() < 400, "{} bytes", shown.len());
    assert!(shown.contains("more bytes)"), "{shown}");
}
