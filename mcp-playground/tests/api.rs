//! The playground's HTTP API over a hub of fake servers, as a page uses it:
//! the session, servers, discovery, calls through the hub's governance,
//! reads, prompts, events, reviews, and the bounds.

#[path = "support/http.rs"]
mod http;
#[path = "support/lab.rs"]
mod lab;

use std::sync::Arc;
use std::time::Duration;

use http::{Events, Session, api, open_session, send};
use lab::{BROKEN_STDERR, BROKEN_STDOUT, LOGO_PNG, Lab};
use mcp_hub::{AuditOutcome, Hub, HubConfig, Operation};
use mcp_playground::{Playground, PlaygroundConfig, PlaygroundError};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

async fn session(lab: &Lab) -> Session {
    open_session(lab.address, &lab.origin, &lab.code).await
}

async fn get(lab: &Lab, s: &Session, path: &str) -> Value {
    let reply = api(lab.address, &lab.origin, s, "GET", path, None).await;
    assert_eq!(reply.status, 200, "{path}: {}", reply.body);
    reply.json()["result"].clone()
}

async fn post(lab: &Lab, s: &Session, path: &str, body: Value) -> (u16, Value) {
    let reply = api(
        lab.address,
        &lab.origin,
        s,
        "POST",
        path,
        Some(&body.to_string()),
    )
    .await;
    (reply.status, reply.json())
}

#[tokio::test]
async fn binding_anywhere_but_loopback_is_refused() {
    let hub = Arc::new(Hub::builder(HubConfig::default()).start().await.unwrap());
    for address in ["0.0.0.0:0", "[::]:0", "192.0.2.1:0", "[::ffff:127.0.0.1]:0"] {
        let refused = Playground::bind(
            Arc::clone(&hub),
            address.parse().unwrap(),
            PlaygroundConfig::default(),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(refused, PlaygroundError::NotLoopback { .. }),
            "{address}: {refused:?}"
        );
        assert!(refused.to_string().contains("loopback only"));
    }
    let mut config = PlaygroundConfig::default();
    config.max_event_streams = 0;
    let refused = Playground::bind(hub, "127.0.0.1:0".parse().unwrap(), config)
        .await
        .unwrap_err();
    assert!(matches!(refused, PlaygroundError::InvalidSetting { .. }));
}

#[tokio::test]
async fn the_page_comes_with_its_protective_headers_and_never_a_cors_header() {
    let lab = Lab::start().await;
    assert!(lab.url.starts_with(&format!("{}/#code=", lab.origin)));
    assert!(lab.origin.starts_with("http://127.0.0.1:"));
    let host = lab.address.to_string();
    let page = send(lab.address, "GET", "/", &[("Host", &host)], None).await;
    assert_eq!(page.status, 200);
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    assert!(page.body.contains("<title>MCP playground</title>"));
    let csp = page.header("content-security-policy").unwrap();
    for part in [
        "default-src 'none'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
    ] {
        assert!(csp.contains(part), "{csp}");
    }
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(page.header("cache-control"), Some("no-store"));
    for path in ["/app.js", "/app.css"] {
        let asset = send(lab.address, "GET", path, &[("Host", &host)], None).await;
        assert_eq!(asset.status, 200, "{path}");
    }
    // A preflight from another origin gets no CORS answer at all.
    let preflight = send(
        lab.address,
        "OPTIONS",
        "/api/call",
        &[
            ("Host", &host),
            ("Origin", "http://127.0.0.2:9"),
            ("Access-Control-Request-Method", "POST"),
            (
                "Access-Control-Request-Headers",
                "content-type,x-playground-token",
            ),
        ],
        None,
    )
    .await;
    assert!(preflight.status >= 400);
    let s = session(&lab).await;
    let servers = api(lab.address, &lab.origin, &s, "GET", "/api/servers", None).await;
    for reply in [&page, &preflight, &servers] {
        assert!(
            !reply
                .headers
                .iter()
                .any(|(n, _)| n.to_ascii_lowercase().starts_with("access-control-")),
            "{:?}",
            reply.headers
        );
    }
    lab.stop().await;
}

#[tokio::test]
async fn servers_show_status_era_version_info_instructions_and_a_failures_stderr() {
    let lab = Lab::start().await;
    let s = session(&lab).await;
    let result = get(&lab, &s, "/api/servers").await;
    let servers = result["servers"].as_array().unwrap();
    let by_name = |name: &str| servers.iter().find(|v| v["name"] == name).unwrap().clone();
    let names: Vec<&str> = servers
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["notes", "files", "github", "lab", "broken", "asker"]
    );
    let files = by_name("files");
    assert_eq!(files["status"], "ready");
    assert_eq!(files["era"], "legacy");
    assert_eq!(files["protocolVersion"], "2025-06-18");
    assert_eq!(files["serverInfo"]["name"], "demo-files");
    let github = by_name("github");
    assert_eq!(github["era"], "modern");
    assert_eq!(github["protocolVersion"], "2026-07-28");
    assert!(github["capabilities"]["tools"].is_object());
    assert!(
        by_name("notes")["instructions"]
            .as_str()
            .unwrap()
            .starts_with("Personal notes.")
    );
    let broken = by_name("broken");
    assert_eq!(broken["status"], "failed");
    assert!(broken.get("era").is_none());
    let error = &broken["error"];
    assert!(!error["message"].as_str().unwrap().is_empty());
    assert!(
        !error["message"].as_str().unwrap().contains(BROKEN_STDERR),
        "the server's words stay out of ours"
    );
    assert!(
        error["stderrTail"]
            .as_str()
            .unwrap()
            .contains(BROKEN_STDERR),
        "{error}"
    );
    // The line it wrote on stdout, where only JSON-RPC belongs.
    assert_eq!(error["unparsedLine"], BROKEN_STDOUT, "{error}");
    lab.stop().await;
}

#[tokio::test]
async fn catalogues_come_one_page_at_a_time_with_their_cursors() {
    let lab = Lab::start().await;
    let s = session(&lab).await;
    let mut names = Vec::new();
    let mut cursor = Value::Null;
    let mut pages = 0;
    loop {
        let (status, body) = post(
            &lab,
            &s,
            "/api/catalog",
            json!({"server": "lab", "kind": "tools", "cursor": cursor}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let page = &body["result"];
        pages += 1;
        assert!(page["items"].as_array().unwrap().len() <= 2);
        names.extend(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned()),
        );
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(pages, 4);
    assert_eq!(
        names,
        [
            "slow",
            "book_trip",
            "fail",
            "stats",
            "shout",
            "change",
            "touch",
            "hang"
        ]
    );
    let (_, resources) = post(
        &lab,
        &s,
        "/api/catalog",
        json!({"server": "lab", "kind": "resources"}),
    )
    .await;
    assert_eq!(resources["result"]["items"][0]["uri"], "lab://readme");
    assert!(resources["result"]["nextCursor"].is_string());
    let (_, prompts) = post(
        &lab,
        &s,
        "/api/catalog",
        json!({"server": "lab", "kind": "prompts"}),
    )
    .await;
    assert_eq!(prompts["result"]["items"][0]["name"], "greet");
    let (_, templates) = post(
        &lab,
        &s,
        "/api/catalog",
        json!({"server": "lab", "kind": "resource-templates"}),
    )
    .await;
    assert_eq!(
        templates["result"]["items"][0]["uriTemplate"],
        "lab://notes/{id}"
    );
    // The allow-list applies to listings too.
    let (_, github) = post(
        &lab,
        &s,
        "/api/catalog",
        json!({"server": "github", "kind": "tools"}),
    )
    .await;
    let listed: Vec<&str> = github["result"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!listed.contains(&"open_pr"), "{listed:?}");
    let (status, bad) = post(
        &lab,
        &s,
        "/api/catalog",
        json!({"server": "lab", "kind": "secrets"}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(bad["error"]["kind"], "invalid_setting");
    lab.stop().await;
}

#[tokio::test]
async fn the_namespace_shows_collisions_aliases_and_what_the_allow_list_hides() {
    let lab = Lab::start().await;
    let s = session(&lab).await;
    let ns = get(&lab, &s, "/api/namespace").await;
    let tools = ns["tools"].as_array().unwrap();
    let exposed: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for name in ["notes/search", "files/search", "github/search", "book_trip"] {
        assert!(exposed.contains(&name), "{name} in {exposed:?}");
    }
    assert!(!exposed.contains(&"search"));
    let search = ns["collisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["tool"] == "search")
        .unwrap();
    assert_eq!(search["exposedAs"].as_array().unwrap().len(), 3);
    let book = tools.iter().find(|t| t["name"] == "book_trip").unwrap();
    assert_eq!(book["aliases"], json!(["lab/book_trip"]));
    let qualified = tools.iter().find(|t| t["name"] == "notes/search").unwrap();
    assert_eq!(qualified["providerName"], "notes_search");
    let hidden = ns["hidden"].as_array().unwrap();
    assert_eq!(hidden.len(), 1, "{hidden:?}");
    assert_eq!(hidden[0]["server"], "github");
    assert_eq!(hidden[0]["tool"], "open_pr");
    assert!(hidden[0]["why"].as_str().unwrap().contains("allow-list"));
    lab.stop().await;
}

#[tokio::test]
async fn a_call_goes_through_the_approval_hook_and_the_audit_and_returns_content_blocks() {
    let lab = Lab::start().await;
    let s = session(&lab).await;
    assert_eq!(lab.tool_calls(), 0);
    let (status, body) = post(
        &lab,
        &s,
        "/api/call",
        json!({"server": "lab", "tool": "book_trip", "callId": "c1",
               "arguments": {"city": "Lisbon", "nights": 3, "class": "business", "tags": ["sea"],
                             "traveller": {"name": "Ana"}}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Booked Lisbon for 3 nights in business"),
        "{text}"
    );
    assert_eq!(lab.approvals.asked(), [("lab".into(), "book_trip".into())]);
    assert_eq!(lab.received("lab", "tools/call"), 1);
    let audit = lab.audit.records();
    let call = audit
        .iter()
        .find(|r| r.operation == Operation::CallTool)
        .unwrap();
    assert_eq!(call.target.as_deref(), Some("book_trip"));
    assert_eq!(call.outcome, AuditOutcome::Succeeded);
    assert!(!call.from_model);

    // A tool error is a result; structured content comes whole.
    let (_, failed) = post(
        &lab,
        &s,
        "/api/call",
        json!({"server": "lab", "tool": "fail", "arguments": {}}),
    )
    .await;
    assert_eq!(failed["result"]["isError"], true);
    let (_, stats) = post(
        &lab,
        &s,
        "/api/call",
        json!({"server": "lab", "tool": "stats", "arguments": {}}),
    )
    .await;
    assert_eq!(stats["result"]["structuredContent"]["count"], 42);

    // What the hub refuses never reaches a server.
    let before = lab.tool_calls();
    let (status, denied) = post(
        &lab,
        &s,
        "/api/call",
        json!({"server": "github", "tool": "open_pr", "arguments": {"title": "t", "branch": "b"}}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(denied["error"]["kind"], "denied");
    assert_eq!(denied["error"]["cause"], "policy");
    let (status, invalid) = post(
        &lab,
        &s,
        "/api/call",
        json!({"server": "lab", "tool": "book_trip", "arguments": {"city": 7}}),
    )
    .await;
    assert_eq!(status, 422, "{invalid}");
    assert_eq!(invalid["error"]["cause"], "input");
    assert_eq!(lab.tool_calls(), before);
    // A body that is not what the route takes is a 400 in our words.
    let (status, malformed) = post(
        &lab,
        &s,
        "/api/call",
        json!({"server": "lab", "tool": "fail", "arguments": [1]}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(malformed["error"]["kind"], "bad_request");
    lab.stop().await;
}

#[tokio::test]
async fn resources_are_read_and_prompts_got_on_request() {
    let lab = Lab::start().await;
    let s = session(&lab).await;
    let (_, text) = post(
        &lab,
        &s,
        "/api/read",
        json!({"server": "lab", "uri": "lab://readme"}),
    )
    .await;
    assert!(
        text["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Hello from the lab.")
    );
    let (_, image) = post(
        &lab,
        &s,
        "/api/read",
        json!({"server": "lab", "uri": "lab://logo.png"}),
    )
    .await;
    assert_eq!(image["result"]["contents"][0]["blob"], LOGO_PNG);
    assert_eq!(image["result"]["contents"][0]["mimeType"], "image/png");
    let (status, missing) = post(
        &lab,
        &s,
        "/api/read",
        json!({"server": "lab", "uri": "lab://nothing"}),
    )
    .await;
    assert_eq!(status, 422);
    assert!(missing["error"]["message"].is_string());
    let (_, prompt) = post(
        &lab,
        &s,
        "/api/prompt",
        json!({"server": "lab", "name": "greet", "arguments": {"name": "Ana"}}),
    )
    .await;
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"],
        "Say hello to Ana."
    );
    assert_eq!(lab.received("lab", "resources/read"), 3);
    assert_eq!(lab.received("lab", "prompts/get"), 1);
    lab.stop().await;
}

#[tokio::test]
async fn progress_logs_and_restarts_arrive_as_events() {
    let lab = Lab::start().await;
    let s = session(&lab).await;
    let mut events = Events::open(lab.address, &lab.origin, &s).await;
    // Kept events come first: the servers' start.
    events
        .wait_for(WAIT, |e| e["kind"] == "ready" && e["server"] == "lab")
        .await;
    let (address, origin, session) = (lab.address, lab.origin.clone(), s.clone());
    let call = tokio::spawn(async move {
        let body = json!({"server": "lab", "tool": "slow", "arguments": {}, "callId": "slow-1"});
        api(
            address,
            &origin,
            &session,
            "POST",
            "/api/call",
            Some(&body.to_string()),
        )
        .await
    });
    let progress = events
        .wait_for(WAIT, |e| e["kind"] == "progress" && e["callId"] == "slow-1")
        .await;
    assert_eq!(progress["server"], "lab");
    assert_eq!(progress["tool"], "slow");
    assert_eq!(progress["total"], 3.0);
    assert_eq!(call.await.unwrap().status, 200);

    let (_, shout) = post(
        &lab,
        &s,
        "/api/call",
        json!({"server": "lab", "tool": "shout", "arguments": {}}),
    )
    .await;
    assert!(shout.get("result").is_some(), "{shout}");
    let log = events.wait_for(WAIT, |e| e["kind"] == "log").await;
    assert_eq!(log["level"], "warning");
    assert_eq!(log["data"], "disk almost full");
    assert_eq!(log["logger"], "storage");

    let (status, _) = post(&lab, &s, "/api/restart", json!({"server": "lab"})).await;
    assert_eq!(status, 200);
    events
        .wait_for(WAIT, |e| e["kind"] == "restarting" && e["server"] == "lab")
        .await;
    events
        .wait_for(WAIT, |e| e["kind"] == "ready" && e["server"] == "lab")
        .await;
    lab.stop().await;
}

#[tokio::test]
async fn a_followed_resource_is_read_at_once_and_again_when_the_server_says_it_changed() {
    let lab = Lab::start().await;
    let s = session(&lab).await;
    let mut events = Events::open(lab.address, &lab.origin, &s).await;
    let (status, body) = post(
        &lab,
        &s,
        "/api/subscribe",
        json!({"server": "lab", "uri": "lab://readme"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let start = events
        .wait_for(WAIT, |e| {
            e["kind"] == "resourceUpdated" && e["reason"] == "start"
        })
        .await;
    assert_eq!(start["uri"], "lab://readme");
    assert!(
        start["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Hello from the lab.")
    );
    assert_eq!(start["contents"][0]["cut"], false);
    post(
        &lab,
        &s,
        "/api/call",
        json!({"server": "lab", "tool": "touch", "arguments": {}}),
    )
    .await;
    // The server says it changed: the hub reads it again (the fake's text
    // is the same, so the hub hands nothing new on to the page).
    let recorder = &lab.recorders.iter().find(|(n, _)| *n == "lab").unwrap().1;
    let read_again = recorder
        .wait_until(WAIT, |frames| {
            frames
                .iter()
                .filter(|f| f["method"] == "resources/read")
                .count()
                >= 2
        })
        .await;
    assert!(read_again, "no read after the change");
    // A server the hub does not know is refused by the hub.
    let (status, refused) = post(
        &lab,
        &s,
        "/api/subscribe",
        json!({"server": "nope", "uri": "lab://readme"}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(refused["error"]["kind"], "unknown_server");
    lab.stop().await;
}

#[tokio::test]
async fn a_changed_tool_listing_waits_for_review_until_it_is_approved() {
    let lab = Lab::start().await;
    let s = session(&lab).await;
    let mut events = Events::open(lab.address, &lab.origin, &s).await;
    assert_eq!(get(&lab, &s, "/api/reviews").await["reviews"], json!([]));
    let (status, _) = post(
        &lab,
        &s,
        "/api/call",
        json!({"server": "lab", "tool": "change", "arguments": {}}),
    )
    .await;
    assert_eq!(status, 200);
    let pending = events.wait_for(WAIT, |e| e["kind"] == "toolsPending").await;
    assert_eq!(pending["diff"]["added"], json!(["fresh"]));
    let generation = pending["generation"].as_u64().unwrap();
    let reviews = get(&lab, &s, "/api/reviews").await;
    let review = &reviews["reviews"][0];
    assert_eq!(review["server"], "lab");
    assert_eq!(review["added"][0]["name"], "fresh");
    assert_eq!(review["added"][0]["description"], "Appears after a change.");
    // Not exposed before the approval.
    let names = |ns: &Value| -> Vec<String> {
        ns["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(!names(&get(&lab, &s, "/api/namespace").await).contains(&"fresh".to_owned()));
    let (status, wrong) = post(
        &lab,
        &s,
        "/api/review",
        json!({"server": "lab", "generation": generation + 7, "decision": "approve"}),
    )
    .await;
    assert_eq!(status, 422, "{wrong}");
    let (status, _) = post(
        &lab,
        &s,
        "/api/review",
        json!({"server": "lab", "generation": generation, "decision": "approve"}),
    )
    .await;
    assert_eq!(status, 200);
    events
        .wait_for(WAIT, |e| {
            e["kind"] == "toolsAdopted" && e["server"] == "lab"
        })
        .await;
    assert!(names(&get(&lab, &s, "/api/namespace").await).contains(&"fresh".to_owned()));
    assert_eq!(get(&lab, &s, "/api/reviews").await["reviews"], json!([]));
    lab.stop().await;
}

#[tokio::test]
async fn a_rejected_tool_listing_is_never_exposed() {
    let lab = Lab::start().await;
    let s = session(&lab).await;
    let mut events = Events::open(lab.address, &lab.origin, &s).await;
    post(
        &lab,
        &s,
        "/api/call",
        json!({"server": "lab", "tool": "change", "arguments": {}}),
    )
    .await;
    let pending = events.wait_for(WAIT, |e| e["kind"] == "toolsPending").await;
    let generation = pending["generation"].as_u64().unwrap();
    let (status, _) = post(
        &lab,
        &s,
        "/api/review",
        json!({"server": "lab", "generation": generation, "decision": "reject"}),
    )
    .await;
    assert_eq!(status, 200);
    let rejected = events
        .wait_for(WAIT, |e| e["kind"] == "toolsRejected")
        .await;
    assert_eq!(rejected["generation"], generation);
    assert_eq!(get(&lab, &s, "/api/reviews").await["reviews"], json!([]));
    let ns = get(&lab, &s, "/api/namespace").await;
    assert!(
        !ns["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["tool"] == "fresh")
    );
    let (status, _) = post(
        &lab,
        &s,
        "/api/call",
        json!({"server": "lab", "tool": "fresh", "arguments": {}}),
    )
    .await;
    assert_eq!(status, 422, "a rejected tool cannot be called");
    lab.stop().await;
}

#[tokio::test]
async fn serving_ends_promptly_with_a_call_in_flight_which_is_cancelled() {
    let lab = Lab::start().await;
    let s = session(&lab).await;
    let _events = Events::open(lab.address, &lab.origin, &s).await;
    let (address, origin, session) = (lab.address, lab.origin.clone(), s.clone());
    let hanging = tokio::spawn(async move {
        let body = json!({"server": "lab", "tool": "hang", "arguments": {}});
        api(
            address,
            &origin,
            &session,
            "POST",
            "/api/call",
            Some(&body.to_string()),
        )
        .await
    });
    let recorder = lab
        .recorders
        .iter()
        .find(|(n, _)| *n == "lab")
        .unwrap()
        .1
        .clone();
    assert!(recorder.wait_for("tools/call", WAIT).await.is_some());
    let audit = Arc::clone(&lab.audit);
    let began = std::time::Instant::now();
    lab.stop().await;
    // Serving returned only once the call was dropped, so the hub shut down
    // after it, not under it (which would have failed it instead).
    let outcomes: Vec<_> = audit
        .records()
        .iter()
        .filter(|r| r.operation == Operation::CallTool)
        .map(|r| (r.target.clone(), r.outcome))
        .collect();
    assert_eq!(
        outcomes,
        [(Some("hang".to_owned()), AuditOutcome::Cancelled)]
    );
    // The event stream ended at once; the call had its grace, then went.
    assert!(
        began.elapsed() < mcp_playground::SHUTDOWN_GRACE + Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
    assert!(
        recorder
            .wait_for("notifications/cancelled", WAIT)
            .await
            .is_some(),
        "the server was told the call is cancelled"
    );
    assert_eq!(hanging.await.unwrap().status, 503);
}

#[tokio::test]
async fn bodies_types_and_event_streams_are_bounded() {
    let mut config = PlaygroundConfig::default();
    config.max_body_bytes = 4096;
    config.max_event_streams = 1;
    let lab = Lab::start_with(config).await;
    let s = session(&lab).await;
    let big =
        json!({"server": "lab", "tool": "book_trip", "arguments": {"city": "x".repeat(8000)}});
    let reply = api(
        lab.address,
        &lab.origin,
        &s,
        "POST",
        "/api/call",
        Some(&big.to_string()),
    )
    .await;
    assert_eq!(reply.status, 413);
    // A form's content type is not the API's.
    let host = lab.address.to_string();
    let form = send(
        lab.address,
        "POST",
        "/api/call",
        &[
            ("Host", &host),
            ("Origin", &lab.origin),
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Cookie", &s.cookie),
            ("X-Playground-Token", &s.token),
        ],
        Some("server=lab&tool=fail"),
    )
    .await;
    assert_eq!(form.status, 415);
    let _first = Events::open(lab.address, &lab.origin, &s).await;
    let second = api(lab.address, &lab.origin, &s, "GET", "/api/events", None).await;
    assert_eq!(second.status, 429);
    assert_eq!(lab.tool_calls(), 0);
    lab.stop().await;
}

/// A call whose server asks the page: the question is listed (an event
/// says so), an answer that does not fit is refused and the question waits
/// on, the right answer reaches the server, and the list is empty again.
/// Form, page to open and model's reply alike.
#[tokio::test]
async fn the_servers_questions_wait_for_the_page_and_its_answers_reach_them() {
    let lab = Lab::start().await;
    let s = session(&lab).await;
    let mut events = Events::open(lab.address, &lab.origin, &s).await;
    let calling = |tool: &'static str| {
        let (address, origin, s) = (lab.address, lab.origin.clone(), s.clone());
        tokio::spawn(async move {
            let body = json!({"server": "asker", "tool": tool, "arguments": {}}).to_string();
            api(address, &origin, &s, "POST", "/api/call", Some(&body))
                .await
                .json()
        })
    };
    let cases = [
        (
            "sign_up",
            "form",
            "user",
            json!({"action": "accept", "content": {"name": "Ada", "plan": "pro"}}),
        ),
        ("open_page", "url", "page", json!({"action": "accept"})),
        (
            "think",
            "sampling",
            "model",
            json!({"action": "accept", "reply": "Four."}),
        ),
    ];
    for (tool, kind, key, answer) in cases {
        let call = calling(tool);
        events
            .wait_for(WAIT, |e| e["kind"] == "questions" && e["waiting"] == 1)
            .await;
        let list = get(&lab, &s, "/api/questions").await;
        let question = &list[0];
        assert_eq!(question["server"], "asker", "{list}");
        assert_eq!(question["kind"], kind, "{list}");
        let id = question["id"].clone();
        match kind {
            "form" => {
                assert_eq!(
                    question["message"]["text"], "Who are you? \u{202e}ohce",
                    "exact: the page escapes what it shows"
                );
                assert_eq!(question["schema"]["required"], json!(["name"]));
                // Not a form's value: refused, and the question waits on.
                let (status, body) = post(
                    &lab,
                    &s,
                    "/api/answer",
                    json!({"id": id, "action": "accept", "content": {"name": [1]}}),
                )
                .await;
                assert_eq!(status, 400, "{body}");
                assert_eq!(get(&lab, &s, "/api/questions").await[0]["id"], id);
            }
            "url" => {
                assert_eq!(question["host"], "auth.example.com");
                assert_eq!(
                    question["url"]["text"],
                    "https://auth.example.com/login?step=1"
                );
            }
            _ => {
                assert_eq!(
                    question["messages"][0]["content"][0]["text"]["text"],
                    "What is 2+2?"
                );
                assert_eq!(question["maxTokens"], 10);
            }
        }
        let mut reply = answer.clone();
        reply["id"] = id.clone();
        let (status, body) = post(&lab, &s, "/api/answer", reply.clone()).await;
        assert_eq!(status, 200, "{body}");
        let result = call.await.unwrap();
        let round = &result["result"]["structuredContent"]["rounds"][0][key];
        match kind {
            "form" => assert_eq!(
                *round,
                json!({"action": "accept", "content": {"name": "Ada", "plan": "pro"}})
            ),
            "url" => assert_eq!(*round, json!({"action": "accept"})),
            _ => {
                assert_eq!(round["content"]["text"], "Four.", "{result}");
                assert_eq!(round["model"], mcp_playground::PAGE_MODEL);
            }
        }
        assert_eq!(get(&lab, &s, "/api/questions").await, json!([]));
        // Answered once: a second answer finds nothing.
        let (status, body) = post(&lab, &s, "/api/answer", reply).await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["error"]["kind"], "gone");
    }
    // Declined, a sampling request is the spec's refusal.
    let call = calling("think");
    events
        .wait_for(WAIT, |e| e["kind"] == "questions" && e["waiting"] == 1)
        .await;
    let id = get(&lab, &s, "/api/questions").await[0]["id"].clone();
    let (status, _) = post(
        &lab,
        &s,
        "/api/answer",
        json!({"id": id, "action": "decline"}),
    )
    .await;
    assert_eq!(status, 200);
    let result = call.await.unwrap();
    assert!(
        result["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("needs input")),
        "{result}"
    );
    lab.stop().await;
}

/// A server that answers `-32042`: the error names the pages to open
/// first, each with its host, and leaves out the one whose host could be
/// misread.
#[tokio::test]
async fn pages_a_server_asks_to_open_first_come_with_the_error() {
    let lab = Lab::start().await;
    let s = session(&lab).await;
    let (status, body) = post(
        &lab,
        &s,
        "/api/call",
        json!({"server": "asker", "tool": "connect", "arguments": {}}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let pages = &body["error"]["urlElicitations"];
    assert_eq!(
        pages[0],
        json!({"message": "Connect your account", "url": "https://auth.example.com/connect?c=1",
               "host": "auth.example.com", "punycode": false}),
        "{body}"
    );
    assert!(
        pages[1]["refused"]
            .as_str()
            .is_some_and(|why| why.contains("user name")),
        "{body}"
    );
    assert!(!body.to_string().contains("evil.test\""), "{body}");
    assert_eq!(pages[2]["host"], "xn--bnk-sna.example", "{body}");
    assert_eq!(pages[2]["punycode"], true, "{body}");
    lab.stop().await;
}
