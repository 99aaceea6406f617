//! A raw HTTP/1.1 client over a TCP stream: every header is the test's
//! own (a foreign `Host`, a forged `Origin`, no cookie), nothing added
//! behind its back.
#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// An answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    /// The first header of `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// Sends one request with exactly `headers` (plus `Content-Length` and
/// `Connection: close`) and reads the whole answer.
pub async fn send(
    address: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Reply {
    let mut stream = TcpStream::connect(address).await.expect("connect");
    let mut request = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    let body = body.unwrap_or("");
    if !body.is_empty() || method == "POST" {
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    request.push_str("Connection: close\r\n\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read");
    parse(&raw)
}

fn parse(raw: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").expect("a header block");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
    out
}

/// The session a page gets: its cookie (`name=value`) and token.
#[derive(Clone, Debug)]
pub struct Session {
    pub cookie: String,
    pub token: String,
}

/// The headers a browser sends with a same-origin request of the page.
pub fn browser_headers<'a>(host: &'a str, origin: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("Host", host),
        ("Origin", origin),
        ("Sec-Fetch-Site", "same-origin"),
        ("Content-Type", "application/json"),
    ]
}

/// Exchanges `code` as the page would.
pub async fn exchange(address: SocketAddr, origin: &str, code: &str) -> Reply {
    let host = address.to_string();
    let body = serde_json::json!({ "code": code }).to_string();
    send(
        address,
        "POST",
        "/api/session",
        &browser_headers(&host, origin),
        Some(&body),
    )
    .await
}

/// Exchanges `code` and returns the session.
pub async fn open_session(address: SocketAddr, origin: &str, code: &str) -> Session {
    let reply = exchange(address, origin, code).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let cookie = reply
        .header("set-cookie")
        .expect("a cookie")
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    Session {
        cookie,
        token: reply.json()["token"].as_str().unwrap().to_owned(),
    }
}

/// A same-origin API request with the session.
pub async fn api(
    address: SocketAddr,
    origin: &str,
    session: &Session,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Reply {
    let host = address.to_string();
    let mut headers = browser_headers(&host, origin);
    headers.push(("Cookie", &session.cookie));
    headers.push(("X-Playground-Token", &session.token));
    send(address, method, path, &headers, body).await
}

/// An open event stream, read as it comes.
pub struct Events {
    stream: TcpStream,
    buffer: String,
}

impl Events {
    /// Opens `/api/events` with the session.
    pub async fn open(address: SocketAddr, origin: &str, session: &Session) -> Events {
        let mut stream = TcpStream::connect(address).await.expect("connect");
        let request = format!(
            "GET /api/events HTTP/1.1\r\nHost: {address}\r\nOrigin: {origin}\r\nSec-Fetch-Site: same-origin\r\nCookie: {}\r\nX-Playground-Token: {}\r\n\r\n",
            session.cookie, session.token
        );
        stream.write_all(request.as_bytes()).await.expect("write");
        let mut events = Events {
            stream,
            buffer: String::new(),
        };
        let head = events.until("\r\n\r\n").await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(
            head.to_ascii_lowercase().contains("text/event-stream"),
            "{head}"
        );
        events
    }

    /// Reads until `marker`; returns what came before it.
    async fn until(&mut self, marker: &str) -> String {
        loop {
            if let Some(at) = self.buffer.find(marker) {
                let before = self.buffer[..at].to_owned();
                self.buffer.drain(..at + marker.len());
                return before;
            }
            let mut chunk = [0u8; 8192];
            let n = self.stream.read(&mut chunk).await.expect("read");
            assert!(n > 0, "the event stream ended");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk[..n]));
        }
    }

    /// The next event `pick` accepts, within `limit`.
    pub async fn wait_for(
        &mut self,
        limit: std::time::Duration,
        mut pick: impl FnMut(&Value) -> bool,
    ) -> Value {
        tokio::time::timeout(limit, async {
            loop {
                // Chunked framing: data lines are found whatever the chunk
                // boundaries (an event is far smaller than a chunk).
                let frame = self.until("\n\n").await;
                for line in frame.lines() {
                    if let Some(data) = line.strip_prefix("data: ")
                        && let Ok(value) = serde_json::from_str::<Value>(data)
                        && pick(&value)
                    {
                        return value;
                    }
                }
            }
        })
        .await
        .expect("timed out waiting for an event")
    }
}
