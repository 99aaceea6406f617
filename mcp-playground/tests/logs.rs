//! Neither the one-time code nor the session's secrets reach a log line,
//! whatever happens: at TRACE, across an exchange, API requests, refused
//! codes and refused requests. (Its own test binary: it installs the
//! process's log subscriber.)

#[path = "support/http.rs"]
mod http;
#[path = "support/lab.rs"]
mod lab;

use std::io::Write;
use std::sync::{Arc, Mutex};

use http::{api, exchange, open_session, send};
use lab::Lab;
use serde_json::json;

/// Every log line, kept.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn no_secret_of_the_playground_reaches_a_log_line() {
    let captured = Captured::default();
    let writer = captured.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();

    let lab = Lab::start().await;
    let wrong = exchange(lab.address, &lab.origin, &"f".repeat(64)).await;
    assert_eq!(wrong.status, 403);
    let s = open_session(lab.address, &lab.origin, &lab.code).await;
    let reused = exchange(lab.address, &lab.origin, &lab.code).await;
    assert_eq!(reused.status, 403);
    let call =
        json!({"server": "lab", "tool": "book_trip", "arguments": {"city": "Rome", "nights": 2}});
    let ok = api(
        lab.address,
        &lab.origin,
        &s,
        "POST",
        "/api/call",
        Some(&call.to_string()),
    )
    .await;
    assert_eq!(ok.status, 200);
    let host = lab.address.to_string();
    let refused = send(
        lab.address,
        "GET",
        "/api/servers",
        &[
            ("Host", &host),
            ("Cookie", &s.cookie),
            ("X-Playground-Token", "nope"),
        ],
        None,
    )
    .await;
    assert_eq!(refused.status, 401);
    let code = lab.code.clone();
    lab.stop().await;

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    // The logs were captured: the exchange and the refusals are there.
    assert!(logs.contains("playground session opened"), "{logs}");
    assert!(logs.contains("playground refused a request"), "{logs}");
    assert!(logs.contains("playground refused a code"), "{logs}");
    let cookie_value = s.cookie.split_once('=').unwrap().1;
    for (what, secret) in [
        ("the one-time code", code.as_str()),
        ("the cookie", cookie_value),
        ("the page token", s.token.as_str()),
    ] {
        assert!(!logs.contains(secret), "{what} is in a log line");
        // Nor half of it.
        assert!(
            !logs.contains(&secret[..32]),
            "part of {what} is in a log line"
        );
    }
}
