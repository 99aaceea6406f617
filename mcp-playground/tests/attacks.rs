//! Requests the playground must refuse, checked on the server side: no
//! tool was called (the servers' own recorders and the approval hook), no
//! governed operation ran (the audit trail), no data in the answer. (The
//! same attacks from a real browser page are in `browser.rs`.)

#[path = "support/http.rs"]
mod http;
#[path = "support/lab.rs"]
mod lab;

use http::{Reply, Session, api, browser_headers, exchange, open_session, send};
use lab::Lab;
use serde_json::json;

/// A call that would reach a server if it were admitted.
fn call_body() -> String {
    json!({"server": "lab", "tool": "book_trip", "arguments": {"city": "Oslo", "nights": 1}})
        .to_string()
}

/// Nothing reached a server or the hub's governed path, and the answer
/// holds no data of theirs.
fn assert_nothing_happened(lab: &Lab, replies: &[&Reply]) {
    assert_eq!(lab.tool_calls(), 0, "a tool was called");
    assert!(
        lab.approvals.asked().is_empty(),
        "the approval hook was asked"
    );
    assert!(
        lab.audit.records().is_empty(),
        "governed operations ran: {:?}",
        lab.audit.records()
    );
    for reply in replies {
        assert!(
            reply.status >= 400,
            "admitted: {} {}",
            reply.status,
            reply.body
        );
        for leaked in ["demo-notes", "lab", "search", "Booked", "token"] {
            assert!(
                !reply.body.contains(leaked),
                "the refusal carries {leaked}: {}",
                reply.body
            );
        }
    }
}

#[tokio::test]
async fn a_foreign_host_is_refused_even_with_a_valid_session() {
    let lab = Lab::start().await;
    let s = open_session(lab.address, &lab.origin, &lab.code).await;
    let port = lab.address.port();
    let mut replies = Vec::new();
    for host in [
        format!("rebound.example:{port}"),
        format!("localhost:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
    ] {
        let page = send(lab.address, "GET", "/", &[("Host", &host)], None).await;
        assert_eq!(page.status, 421, "{host}");
        assert!(
            !page.body.contains("<html"),
            "the page was served to {host}"
        );
        let servers = send(
            lab.address,
            "GET",
            "/api/servers",
            &[
                ("Host", &host),
                ("Cookie", &s.cookie),
                ("X-Playground-Token", &s.token),
            ],
            None,
        )
        .await;
        assert_eq!(servers.status, 421);
        let origin = format!("http://{host}");
        let call = send(
            lab.address,
            "POST",
            "/api/call",
            &[
                ("Host", &host),
                ("Origin", &origin),
                ("Content-Type", "application/json"),
                ("Cookie", &s.cookie),
                ("X-Playground-Token", &s.token),
            ],
            Some(&call_body()),
        )
        .await;
        assert_eq!(call.status, 421);
        replies.extend([servers, call]);
    }
    // No Host at all (HTTP/1.0).
    let mut raw = tokio::net::TcpStream::connect(lab.address).await.unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    raw.write_all(b"GET /api/servers HTTP/1.0\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    raw.read_to_string(&mut answer).await.unwrap();
    assert!(
        answer.starts_with("HTTP/1.0 421") || answer.starts_with("HTTP/1.1 421"),
        "{answer}"
    );
    assert_nothing_happened(&lab, &replies.iter().collect::<Vec<_>>());
    lab.stop().await;
}

#[tokio::test]
async fn the_api_refuses_requests_without_the_cookie_or_the_token() {
    let lab = Lab::start().await;
    let host = lab.address.to_string();
    let mut replies = Vec::new();
    // Before any session exists.
    let mut headers = browser_headers(&host, &lab.origin);
    let early = send(
        lab.address,
        "POST",
        "/api/call",
        &headers,
        Some(&call_body()),
    )
    .await;
    assert_eq!(early.status, 401);
    replies.push(early);
    let s = open_session(lab.address, &lab.origin, &lab.code).await;
    let wrong = Session {
        cookie: s.cookie.replace('=', "=0"),
        token: s.token.clone(),
    };
    let cases: [(&str, Vec<(&str, &str)>); 4] = [
        ("no cookie", vec![("X-Playground-Token", &s.token)]),
        ("no token", vec![("Cookie", &s.cookie)]),
        (
            "a wrong cookie",
            vec![("Cookie", &wrong.cookie), ("X-Playground-Token", &s.token)],
        ),
        (
            "the cookie as the token",
            vec![
                ("Cookie", &s.cookie),
                ("X-Playground-Token", s.cookie.split_once('=').unwrap().1),
            ],
        ),
    ];
    for (what, extra) in cases {
        let mut h = headers.clone();
        h.extend(extra);
        for (method, path, body) in [
            ("POST", "/api/call", Some(call_body())),
            ("GET", "/api/servers", None),
            ("GET", "/api/namespace", None),
            ("GET", "/api/events", None),
            (
                "POST",
                "/api/read",
                Some(json!({"server": "lab", "uri": "lab://readme"}).to_string()),
            ),
        ] {
            let reply = send(lab.address, method, path, &h, body.as_deref()).await;
            assert_eq!(reply.status, 401, "{what}: {method} {path}");
            replies.push(reply);
        }
    }
    headers.clear();
    assert_nothing_happened(&lab, &replies.iter().collect::<Vec<_>>());
    // The session itself works.
    let ok = api(lab.address, &lab.origin, &s, "GET", "/api/servers", None).await;
    assert_eq!(ok.status, 200);
    lab.stop().await;
}

#[tokio::test]
async fn a_used_one_time_code_opens_nothing() {
    let lab = Lab::start().await;
    let wrong = exchange(lab.address, &lab.origin, &"0".repeat(64)).await;
    assert_eq!(wrong.status, 403);
    assert!(wrong.header("set-cookie").is_none());
    // A wrong code does not spend the right one.
    let first = open_session(lab.address, &lab.origin, &lab.code).await;
    let again = exchange(lab.address, &lab.origin, &lab.code).await;
    assert_eq!(again.status, 403);
    assert!(again.header("set-cookie").is_none());
    assert!(again.body.contains("used already"), "{}", again.body);
    // The exchange needs our own origin too.
    let host = lab.address.to_string();
    let foreign = send(
        lab.address,
        "POST",
        "/api/session",
        &[
            ("Host", &host),
            ("Origin", "http://127.0.0.2:8080"),
            ("Content-Type", "application/json"),
        ],
        Some(&json!({"code": lab.code}).to_string()),
    )
    .await;
    assert_eq!(foreign.status, 403);
    assert_nothing_happened(&lab, &[&wrong, &again, &foreign]);
    let ok = api(
        lab.address,
        &lab.origin,
        &first,
        "GET",
        "/api/servers",
        None,
    )
    .await;
    assert_eq!(ok.status, 200);
    lab.stop().await;
}

#[tokio::test]
async fn requests_from_other_origins_are_refused_even_with_the_session() {
    let lab = Lab::start().await;
    let s = open_session(lab.address, &lab.origin, &lab.code).await;
    let host = lab.address.to_string();
    let other_port = format!("http://127.0.0.1:{}", lab.address.port().wrapping_add(1));
    let mut replies = Vec::new();
    let cases: [(&str, Vec<(&str, &str)>); 5] = [
        (
            "another loopback address",
            vec![("Origin", "http://127.0.0.2:4000")],
        ),
        ("another port of ours", vec![("Origin", &other_port)]),
        ("an opaque origin", vec![("Origin", "null")]),
        (
            "a cross-site fetch",
            vec![("Origin", &lab.origin), ("Sec-Fetch-Site", "cross-site")],
        ),
        ("no origin on a POST", vec![]),
    ];
    for (what, extra) in cases {
        let mut h: Vec<(&str, &str)> = vec![
            ("Host", &host),
            ("Content-Type", "application/json"),
            ("Cookie", &s.cookie),
            ("X-Playground-Token", &s.token),
        ];
        h.extend(extra);
        let reply = send(lab.address, "POST", "/api/call", &h, Some(&call_body())).await;
        assert_eq!(reply.status, 403, "{what}");
        replies.push(reply);
    }
    // A same-site page (another port of 127.0.0.1) reading data.
    let read = send(
        lab.address,
        "GET",
        "/api/servers",
        &[
            ("Host", &host),
            ("Sec-Fetch-Site", "same-site"),
            ("Cookie", &s.cookie),
            ("X-Playground-Token", &s.token),
        ],
        None,
    )
    .await;
    assert_eq!(read.status, 403);
    replies.push(read);
    assert_nothing_happened(&lab, &replies.iter().collect::<Vec<_>>());
    lab.stop().await;
}

/// Another local process cannot hold every connection (each a descriptor
/// of the process that also holds the hub): beyond the bound a connection
/// is answered `503` at once, and one that sends nothing is closed after
/// the head timeout, giving its place back to the page.
#[tokio::test]
async fn idle_connections_are_bounded_and_closed() {
    use std::time::Duration;
    use tokio::io::AsyncReadExt;
    use tokio::net::TcpStream;
    let mut config = mcp_playground::PlaygroundConfig::default();
    config.max_connections = 2;
    config.head_timeout = Duration::from_millis(300);
    let lab = Lab::start_with(config).await;
    let mut idle = Vec::new();
    for _ in 0..2 {
        idle.push(TcpStream::connect(lab.address).await.unwrap());
    }
    // Accepted in order: the third finds both places taken.
    let mut third = TcpStream::connect(lab.address).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(10), third.read_to_string(&mut answer))
        .await
        .expect("answered at once")
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("too many connections"), "{answer}");
    // The idle ones are closed by the server, not held.
    for mut conn in idle {
        let mut rest = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut rest))
            .await
            .expect("the server closed an idle connection")
            .ok();
    }
    // Their places are free again (a place is given back as its
    // connection's task ends, which may be a moment after the close).
    let host = lab.address.to_string();
    let headers = browser_headers(&host, &lab.origin);
    let mut status = 0;
    for _ in 0..100 {
        status = send(lab.address, "GET", "/", &headers, None).await.status;
        if status != 503 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(status, 200);
    lab.stop().await;
}
