//! Streamable HTTP against a hand-driven HTTP/1.1 server on loopback: the
//! bytes of each answer are the test's, so keep-alive, connection closes,
//! body framings, bounds, broken heads and redirects can be staged exactly.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_transport::{
    Connection, Connector, HttpConfig, HttpConnector, Inbound, OutboundFrame, RequestFailure,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const WAIT: Duration = Duration::from_secs(10);

/// What the server does with one request.
enum Act {
    /// Writes these bytes and waits for the next request.
    Answer(Vec<u8>),
    /// Writes these bytes and closes the connection.
    AnswerAndClose(Vec<u8>),
    /// Closes the connection without answering.
    Close,
    /// Writes these bytes, then closes the connection after this long (a
    /// proxy's idle timeout under a quiet stream).
    AnswerAndCloseAfter(Vec<u8>, Duration),
}

/// The request heads a server saw and the connections it accepted.
#[derive(Default)]
struct Seen {
    accepted: AtomicUsize,
    heads: Mutex<Vec<String>>,
}

impl Seen {
    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

/// Serves on a loopback port: `act` gets each request's head and body (the
/// JSON-RPC id of the body, when it has one) and says what to write.
async fn server(
    act: impl Fn(&str, Option<i64>) -> Act + Send + Sync + 'static,
) -> (String, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    let act = Arc::new(act);
    let seen_by_server = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            seen_by_server.accepted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(connection(
                stream,
                Arc::clone(&seen_by_server),
                Arc::clone(&act),
            ));
        }
    });
    (format!("http://{addr}/mcp"), seen)
}

async fn connection(
    mut stream: TcpStream,
    seen: Arc<Seen>,
    act: Arc<impl Fn(&str, Option<i64>) -> Act>,
) {
    let mut buf = Vec::new();
    loop {
        let Some((head, body)) = read_request(&mut stream, &mut buf).await else {
            return;
        };
        seen.heads.lock().unwrap().push(head.clone());
        let id = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v["id"].as_i64());
        match act(&head, id) {
            Act::Answer(bytes) => {
                if stream.write_all(&bytes).await.is_err() {
                    return;
                }
            }
            Act::AnswerAndClose(bytes) => {
                let _ = stream.write_all(&bytes).await;
                let _ = stream.shutdown().await;
                return;
            }
            Act::Close => return,
            Act::AnswerAndCloseAfter(bytes, after) => {
                let _ = stream.write_all(&bytes).await;
                tokio::time::sleep(after).await;
                let _ = stream.shutdown().await;
                return;
            }
        }
    }
}

/// One request: its head (as text) and its body (by `Content-Length`).
async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<(String, Vec<u8>)> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8(buf[..end].to_vec()).unwrap();
            let length = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            while buf.len() < end + 4 + length {
                read_more(stream, buf).await?;
            }
            let body = buf[end + 4..end + 4 + length].to_vec();
            buf.drain(..end + 4 + length);
            return Some((head, body));
        }
        read_more(stream, buf).await?;
    }
}

async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<()> {
    let mut chunk = [0u8; 4096];
    match stream.read(&mut chunk).await {
        Ok(0) | Err(_) => None,
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            Some(())
        }
    }
}

fn answer_text(id: Option<i64>, text: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"text": text}}).to_string()
}

/// A JSON answer with a `Content-Length`.
fn json_answer(id: Option<i64>, text: &str) -> Vec<u8> {
    let body = answer_text(id, text);
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A chunked answer of `content-type`, the body cut into `pieces`.
fn chunked_answer(content_type: &str, body: &str, pieces: usize) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    let step = body.len().div_ceil(pieces).max(1);
    for piece in body.as_bytes().chunks(step) {
        out += &format!(
            "{:x}\r\n{}\r\n",
            piece.len(),
            std::str::from_utf8(piece).unwrap()
        );
    }
    out += "0\r\n\r\n";
    out.into_bytes()
}

fn request(id: i64) -> OutboundFrame {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {}});
    OutboundFrame::request(body.to_string(), id, "tools/call".into())
}

async fn open(config: HttpConfig) -> Connection {
    HttpConnector::new(config).connect().await.expect("connect")
}

async fn next(conn: &mut Connection) -> Inbound {
    tokio::time::timeout(WAIT, conn.inbound.recv())
        .await
        .expect("an inbound event in time")
        .expect("the connection is open")
}

/// Sends request `id` and returns its answer's `result.text`.
async fn call(conn: &mut Connection, id: i64) -> String {
    conn.outbound.send(request(id)).await.unwrap();
    match next(conn).await {
        Inbound::Frame(bytes) => {
            let value: Value = serde_json::from_slice(&bytes).expect("a JSON frame");
            assert_eq!(value["id"], id);
            value["result"]["text"].as_str().unwrap().to_owned()
        }
        other => panic!("expected the answer to {id}, got {other:?}"),
    }
}

/// Sends request `id` and returns how it failed.
async fn failure(conn: &mut Connection, id: i64) -> RequestFailure {
    conn.outbound.send(request(id)).await.unwrap();
    loop {
        match next(conn).await {
            Inbound::RequestFailed { id: got, failure } if got == id => return failure,
            Inbound::FrameError(_) => {}
            other => panic!("expected request {id} to fail, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn one_kept_alive_connection_serves_one_request_after_another() {
    let (url, seen) = server(|_, id| Act::Answer(json_answer(id, "ok"))).await;
    let mut conn = open(HttpConfig::new(url)).await;
    for id in 1..=4 {
        assert_eq!(call(&mut conn, id).await, "ok");
    }
    assert_eq!(seen.accepted.load(Ordering::SeqCst), 1);
    let heads = seen.heads();
    assert_eq!(heads.len(), 4);
    for head in &heads {
        let lower = head.to_ascii_lowercase();
        assert!(lower.starts_with("post /mcp http/1.1\r\n"), "{head}");
        assert!(lower.contains("\r\nhost: 127.0.0.1:"), "{head}");
        assert!(
            lower.contains("\r\ncontent-type: application/json"),
            "{head}"
        );
        assert!(
            lower.contains("\r\naccept: application/json, text/event-stream"),
            "{head}"
        );
        assert!(lower.contains("\r\nuser-agent: mcp-transport/"), "{head}");
    }
}

#[tokio::test]
async fn a_connection_the_server_closed_after_answering_is_replaced() {
    // Each answer closes its connection (without saying so): the next
    // request must still be answered, on a new connection.
    let (url, seen) = server(|_, id| Act::AnswerAndClose(json_answer(id, "ok"))).await;
    let mut conn = open(HttpConfig::new(url)).await;
    for id in 1..=3 {
        assert_eq!(call(&mut conn, id).await, "ok");
    }
    assert_eq!(seen.accepted.load(Ordering::SeqCst), 3);
    assert_eq!(seen.heads().len(), 3);
}

#[tokio::test]
async fn a_request_the_server_read_and_dropped_unanswered_is_not_sent_again() {
    // The second request is read, then its kept-alive connection closed
    // without a byte of answer: the server may have acted on it, so it
    // fails instead of going out once more.
    let (url, seen) = server(|_, id| match id {
        Some(2) => Act::Close,
        _ => Act::Answer(json_answer(id, "ok")),
    })
    .await;
    let mut conn = open(HttpConfig::new(url)).await;
    assert_eq!(call(&mut conn, 1).await, "ok");
    failure(&mut conn, 2).await;
    let requests: Vec<String> = seen.heads();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert_eq!(seen.accepted.load(Ordering::SeqCst), 1);
    // The next request goes out on a new connection.
    assert_eq!(call(&mut conn, 3).await, "ok");
    assert_eq!(seen.accepted.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn chunked_and_sized_bodies_are_read_whole() {
    let long = "x".repeat(50_000);
    let answer = long.clone();
    let (url, seen) = server(move |_, id| match id {
        Some(1) => Act::Answer(json_answer(id, &answer)),
        _ => Act::Answer(chunked_answer(
            "application/json",
            &answer_text(id, &answer),
            7,
        )),
    })
    .await;
    let mut conn = open(HttpConfig::new(url)).await;
    assert_eq!(call(&mut conn, 1).await, long);
    assert_eq!(call(&mut conn, 2).await, long);
    assert_eq!(call(&mut conn, 3).await, long);
    // Each body was read to its end: the connection served all three.
    assert_eq!(seen.accepted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_event_stream_answer_in_pieces_is_delivered() {
    let (url, seen) = server(|_, id| {
        let event = format!(
            ": keep-alive\n\nid: 1\ndata: {}\n\n",
            answer_text(id, "streamed")
        );
        Act::Answer(chunked_answer("text/event-stream", &event, 5))
    })
    .await;
    let mut conn = open(HttpConfig::new(url)).await;
    for id in 1..=3 {
        assert_eq!(call(&mut conn, id).await, "streamed");
    }
    // Whether the rest of a stream is read in time to reuse its connection
    // is a race with the next request's connect: only the answers count.
    assert_eq!(seen.heads().len(), 3);
}

#[tokio::test]
async fn bodies_over_the_bound_are_refused_by_name() {
    let big = "y".repeat(4_000);
    let (url, _) = server(move |_, id| match id {
        Some(1) => Act::Answer(json_answer(id, &big)),
        Some(2) => Act::Answer(chunked_answer(
            "application/json",
            &answer_text(id, &big),
            4,
        )),
        _ => Act::Answer(json_answer(id, "small")),
    })
    .await;
    let mut config = HttpConfig::new(url);
    config.max_body = 1_000;
    let mut conn = open(config).await;
    // Announced by `Content-Length`, then only found out while reading.
    assert_eq!(
        failure(&mut conn, 1).await,
        RequestFailure::TooLarge { limit: 1_000 }
    );
    assert_eq!(
        failure(&mut conn, 2).await,
        RequestFailure::TooLarge { limit: 1_000 }
    );
    // The connection goes on serving.
    assert_eq!(call(&mut conn, 3).await, "small");
}

#[tokio::test]
async fn an_answer_whose_head_is_not_http_fails_the_request() {
    let (url, _) = server(|_, id| match id {
        Some(1) => Act::AnswerAndClose(b"SMTP ready\r\n\r\n".to_vec()),
        Some(2) => Act::AnswerAndClose(b"HTTP/1.1 2OO OK\r\n\r\n".to_vec()),
        _ => Act::Answer(json_answer(id, "fine")),
    })
    .await;
    let mut conn = open(HttpConfig::new(url)).await;
    assert_eq!(failure(&mut conn, 1).await, RequestFailure::Network);
    assert_eq!(failure(&mut conn, 2).await, RequestFailure::Network);
    assert_eq!(call(&mut conn, 3).await, "fine");
}

#[tokio::test]
async fn a_redirect_within_the_origin_is_followed_and_one_elsewhere_is_not() {
    let (elsewhere, elsewhere_seen) = server(|_, id| Act::Answer(json_answer(id, "no"))).await;
    let (url, seen) = server(move |head, id| {
        if head.starts_with("POST /other ") {
            Act::Answer(json_answer(id, "moved"))
        } else if id == Some(9) {
            let to = format!(
                "HTTP/1.1 307 Temporary Redirect\r\nlocation: {elsewhere}\r\ncontent-length: 0\r\n\r\n"
            );
            Act::Answer(to.into_bytes())
        } else {
            Act::Answer(
                b"HTTP/1.1 307 Temporary Redirect\r\nlocation: /other\r\ncontent-length: 0\r\n\r\n"
                    .to_vec(),
            )
        }
    })
    .await;
    let mut conn = open(HttpConfig::new(url)).await;
    assert_eq!(call(&mut conn, 1).await, "moved");
    assert_eq!(call(&mut conn, 2).await, "moved");
    assert!(
        seen.heads().iter().any(|h| h.starts_with("POST /other ")),
        "{:?}",
        seen.heads()
    );
    match failure(&mut conn, 9).await {
        RequestFailure::Status { status, .. } => assert_eq!(status, 307),
        other => panic!("expected the 307 itself, got {other:?}"),
    }
    assert_eq!(elsewhere_seen.accepted.load(Ordering::SeqCst), 0);
}

/// Set (to the proxy's URL) in the child run of the proxy test.
const PROXY_CHILD: &str = "MCP_TRANSPORT_TEST_PROXY_CHILD";

/// A proxy from the environment is still honoured: the fast path steps
/// aside and reqwest sends the request through it. The workspace forbids
/// `unsafe`, so `std::env::set_var` is out: the test runs itself again as
/// a child process with `HTTP_PROXY` set.
#[tokio::test]
async fn a_proxy_from_the_environment_still_carries_the_requests() {
    if std::env::var(PROXY_CHILD).is_ok() {
        // Nothing listens on port 9 of loopback: only the proxy answers.
        let mut conn = open(HttpConfig::new("http://127.0.0.1:9/mcp")).await;
        assert_eq!(call(&mut conn, 1).await, "via proxy");
        return;
    }
    let (proxy, seen) = server(|_, id| Act::Answer(json_answer(id, "via proxy"))).await;
    let proxy = proxy.trim_end_matches("/mcp").to_owned();
    let child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_proxy_from_the_environment_still_carries_the_requests",
            "--test-threads=1",
            "--quiet",
        ])
        .env(PROXY_CHILD, &proxy)
        .env("HTTP_PROXY", &proxy)
        .env("http_proxy", &proxy)
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .env_remove("REQUEST_METHOD")
        .output()
        .await
        .unwrap();
    assert!(
        child.status.success(),
        "the child failed:\n{}\n{}",
        String::from_utf8_lossy(&child.stdout),
        String::from_utf8_lossy(&child.stderr)
    );
    let heads = seen.heads();
    assert!(
        heads
            .iter()
            .any(|h| h.starts_with("POST http://127.0.0.1:9/mcp HTTP/1.1")),
        "{heads:?}"
    );
}

/// A JSON answer that opens the legacy session `s1`.
fn session_answer(id: Option<i64>) -> Vec<u8> {
    let body = answer_text(id, "ok");
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: s1\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Request `id` in the 2025-11-25 era, whose success opens the GET stream.
fn legacy_request(id: i64) -> OutboundFrame {
    let mut frame = request(id);
    frame.protocol_version = Some("2025-11-25");
    frame
}

/// A server that polls its session's GET stream (SEP-1699): each GET is
/// answered with a priming event and a `retry` time, then ended; the eighth
/// carries a notification. The client keeps coming back (a stream the
/// server ended after saying when to return is no failed attempt; five of
/// those in a row ended the GET stream for good before) and hears it.
#[tokio::test]
async fn a_get_stream_the_server_polls_is_kept_however_quiet() {
    let gets = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&gets);
    let (url, _seen) = server(move |head, id| {
        if head.starts_with("GET") {
            let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
            let mut body = format!("id: g-{n}\nretry: 5\ndata: \n\n");
            if n == 8 {
                body += "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n";
            }
            return Act::Answer(chunked_answer("text/event-stream", &body, 1));
        }
        Act::Answer(session_answer(id))
    })
    .await;
    let mut conn = open(HttpConfig::new(&url)).await;
    conn.outbound.send(legacy_request(1)).await.unwrap();
    loop {
        match next(&mut conn).await {
            Inbound::Frame(bytes) => {
                let value: Value = serde_json::from_slice(&bytes).unwrap();
                if value["method"] == "notifications/tools/list_changed" {
                    break;
                }
                assert_eq!(value["id"], 1, "{value}");
            }
            other => panic!("expected frames, got {other:?}"),
        }
    }
    assert!(gets.load(Ordering::SeqCst) >= 8);
}

/// Warning events, their messages sent to a channel.
struct Warnings(tokio::sync::mpsc::UnboundedSender<String>);

struct Message(String);

impl tracing::field::Visit for Message {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for Warnings {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() <= tracing::Level::WARN
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut message = Message(String::new());
        event.record(&mut message);
        let _ = self.0.send(message.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// A server that forgets the session while we listen (it restarted): the
/// GET stream that was open gets `404` when it comes back; the transport
/// forgets the session and tells the session, so it can start a new one
/// (the session's own test shows it does). A server that never had a GET
/// stream, and answers the GET with `404`, is neither forgotten nor told
/// about.
#[tokio::test]
async fn a_get_stream_that_meets_a_forgotten_session_tells_the_session() {
    let (tx, mut warnings) = tokio::sync::mpsc::unbounded_channel();
    let _guard = tracing::subscriber::set_default(Warnings(tx));
    for had_stream in [false, true] {
        let gets = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&gets);
        let (url, _seen) = server(move |head, id| {
            if head.starts_with("GET") {
                let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
                if had_stream && n == 1 {
                    return Act::Answer(chunked_answer(
                        "text/event-stream",
                        "id: g-1\ndata: \n\n",
                        1,
                    ));
                }
                return Act::Answer(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n".to_vec(),
                );
            }
            Act::Answer(session_answer(id))
        })
        .await;
        let mut config = HttpConfig::new(&url);
        config.default_retry = Duration::from_millis(10);
        let mut conn = open(config).await;
        conn.outbound.send(legacy_request(1)).await.unwrap();
        assert!(matches!(next(&mut conn).await, Inbound::Frame(_)));
        if had_stream {
            let told = next(&mut conn).await;
            assert!(matches!(told, Inbound::SessionExpired), "{told:?}");
            assert_eq!(gets.load(Ordering::SeqCst), 2);
            // The session is forgotten: a request of it fails as expired
            // (the session's new `initialize` is what goes out next).
            conn.outbound.send(legacy_request(5)).await.unwrap();
            match next(&mut conn).await {
                Inbound::RequestFailed { id: 5, failure } => {
                    assert_eq!(failure, RequestFailure::SessionExpired);
                }
                other => panic!("{other:?}"),
            }
        } else {
            // The GET is refused; two more exchanges after the server saw
            // it give its answer time to be read (one runtime thread): they
            // went out with the session, and nothing else came.
            while gets.load(Ordering::SeqCst) == 0 {
                assert_eq!(call(&mut conn, 2).await, "ok");
            }
            assert_eq!(call(&mut conn, 3).await, "ok");
            assert_eq!(call(&mut conn, 4).await, "ok");
            assert_eq!(gets.load(Ordering::SeqCst), 1);
            assert!(conn.inbound.try_recv().is_err());
        }
        assert!(warnings.try_recv().is_err(), "nothing to warn about");
    }
}

/// Serves `listener` with `act` until the task is aborted; aborting it
/// closes every connection too (a server process that went away).
async fn one_life(
    listener: TcpListener,
    seen: Arc<Seen>,
    act: impl Fn(&str, Option<i64>) -> Act + Send + Sync + 'static,
) {
    let act = Arc::new(act);
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        connections.spawn(connection(stream, Arc::clone(&seen), Arc::clone(&act)));
    }
}

/// A server that goes away under an open GET stream, for longer than
/// `max_resume_attempts` tries, and comes back not knowing the session (it
/// restarted): the stream is tried again, less and less often, until it
/// reaches the server, and the session is told it was forgotten. Before,
/// the stream gave up after five refused connections and the session never
/// heard the server again.
#[tokio::test]
async fn a_get_stream_whose_server_is_away_is_tried_until_it_is_back() {
    let (tx, mut warnings) = tokio::sync::mpsc::unbounded_channel();
    let _guard = tracing::subscriber::set_default(Warnings(tx));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Seen::default());
    let first = tokio::spawn(one_life(listener, Arc::clone(&seen), |head, id| {
        if head.starts_with("GET") {
            // An event stream that stays open.
            return Act::Answer(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                  transfer-encoding: chunked\r\n\r\n9\r\n: open\n\n\n\r\n"
                    .to_vec(),
            );
        }
        Act::Answer(session_answer(id))
    }));
    let mut config = HttpConfig::new(format!("http://{addr}/mcp"));
    config.default_retry = Duration::from_millis(10);
    let max = config.max_resume_attempts;
    let mut conn = open(config).await;
    conn.outbound.send(legacy_request(1)).await.unwrap();
    assert!(matches!(next(&mut conn).await, Inbound::Frame(_)));
    let opened = tokio::time::timeout(WAIT, async {
        while !seen.heads().iter().any(|h| h.starts_with("GET")) {
            tokio::task::yield_now().await;
        }
    });
    opened.await.expect("the GET stream opens");

    // The server goes away; the stream cannot reach it `max` times.
    first.abort();
    let _ = first.await;
    let warning = tokio::time::timeout(WAIT, warnings.recv())
        .await
        .expect("a warning in time")
        .unwrap();
    assert!(warning.contains("cannot be reached"), "{warning}");
    assert!(
        warning.contains("tried again"),
        "{warning} ({max} attempts)"
    );

    // It comes back, restarted: the session it gave is unknown.
    let listener = TcpListener::bind(addr).await.unwrap();
    let _second = tokio::spawn(one_life(listener, Arc::clone(&seen), |head, id| {
        if head.starts_with("GET") {
            return Act::Answer(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n".to_vec());
        }
        Act::Answer(session_answer(id))
    }));
    let told = next(&mut conn).await;
    assert!(matches!(told, Inbound::SessionExpired), "{told:?}");
}

/// The head of an event stream that stays open (a comment first).
const OPEN_STREAM: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
    transfer-encoding: chunked\r\n\r\n9\r\n: open\n\n\n\r\n";

/// An event stream holding one server notification, then its end.
fn notification_stream() -> Vec<u8> {
    let message = json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": "heard"}});
    chunked_answer("text/event-stream", &format!("data: {message}\n\n"), 1)
}

/// Waits (bounded) for the server notification of [`notification_stream`],
/// which no request of ours asked for (answers to ours may come first).
async fn hears_the_server(conn: &mut Connection) {
    loop {
        match next(conn).await {
            Inbound::Frame(bytes) => {
                let value: Value = serde_json::from_slice(&bytes).unwrap();
                if value.get("id").is_some() {
                    continue;
                }
                assert_eq!(value["params"]["data"], "heard", "{value}");
                return;
            }
            other => panic!("{other:?}"),
        }
    }
}

/// Counts GETs and lets a test wait for the `n`th.
#[derive(Default)]
struct Gets {
    count: AtomicUsize,
    arrived: tokio::sync::Notify,
}

impl Gets {
    /// Counts one; returns which it is (from 1).
    fn arrive(&self) -> usize {
        let n = self.count.fetch_add(1, Ordering::SeqCst) + 1;
        self.arrived.notify_one();
        n
    }

    async fn reach(&self, n: usize) {
        tokio::time::timeout(WAIT, async {
            while self.count.load(Ordering::SeqCst) < n {
                self.arrived.notified().await;
            }
        })
        .await
        .expect("the GETs came in time");
    }
}

/// A quiet server's event stream that a proxy cuts after a while (its idle
/// timeout) is opened again for as long as that goes on: a stream that
/// stayed open was no fruitless attempt. Before, the stream was given up
/// after `max_resume_attempts` cuts and the session never heard the server
/// again.
#[tokio::test]
async fn a_get_stream_a_proxy_cuts_now_and_then_is_kept() {
    let gets = Arc::new(Gets::default());
    let counted = Arc::clone(&gets);
    let (url, _seen) = server(move |head, id| {
        if head.starts_with("GET") {
            counted.arrive();
            // Ten waits of 10 ms is 100 ms: this one stayed open longer.
            return Act::AnswerAndCloseAfter(OPEN_STREAM.to_vec(), Duration::from_millis(150));
        }
        Act::Answer(session_answer(id))
    })
    .await;
    let mut config = HttpConfig::new(&url);
    config.default_retry = Duration::from_millis(10);
    config.max_resume_attempts = 2;
    let mut conn = open(config).await;
    conn.outbound.send(legacy_request(1)).await.unwrap();
    assert!(matches!(next(&mut conn).await, Inbound::Frame(_)));
    // Three times the cuts that used to give it up.
    gets.reach(7).await;
}

/// A stream that was open and, opened again, meets a 5xx (a proxy whose
/// upstream is restarting) is tried again, as when nothing answers, and
/// the session hears the server once it is back. Before, one 503 ended the
/// stream for good.
#[tokio::test]
async fn a_get_stream_that_meets_a_5xx_is_tried_again() {
    let (mut conn, _) = get_stream_then(|| {
        Act::AnswerAndClose(
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n".to_vec(),
        )
    })
    .await;
    hears_the_server(&mut conn).await;
}

/// A legacy connection, after its first request's answer, whose GET stream
/// opens and ends, meets `second` when opened again, and then hears the
/// server ([`notification_stream`]); and the count of its GETs.
async fn get_stream_then(second: fn() -> Act) -> (Connection, Arc<Gets>) {
    let gets = Arc::new(Gets::default());
    let counted = Arc::clone(&gets);
    let (url, _seen) = server(move |head, id| {
        if head.starts_with("GET") {
            return match counted.arrive() {
                1 => Act::Answer(chunked_answer("text/event-stream", ": open\n\n", 1)),
                2 => second(),
                _ => Act::Answer(notification_stream()),
            };
        }
        Act::Answer(session_answer(id))
    })
    .await;
    let mut config = HttpConfig::new(&url);
    config.default_retry = Duration::from_millis(10);
    let mut conn = open(config).await;
    conn.outbound.send(legacy_request(1)).await.unwrap();
    assert!(matches!(next(&mut conn).await, Inbound::Frame(_)));
    (conn, gets)
}

/// A stream that was open and is refused when opened again (a 4xx) is
/// said once as a warning and told to the session, and the next request of
/// ours that succeeds opens it again. Before, the session never heard the server again in
/// that server session, with nothing said.
#[tokio::test]
async fn a_lost_get_stream_is_opened_again_by_the_next_request() {
    let (tx, mut warnings) = tokio::sync::mpsc::unbounded_channel();
    let _guard = tracing::subscriber::set_default(Warnings(tx));
    let (mut conn, gets) = get_stream_then(|| {
        Act::Answer(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 4\r\n\r\nnope".to_vec())
    })
    .await;
    let warning = tokio::time::timeout(WAIT, warnings.recv())
        .await
        .expect("a warning in time")
        .unwrap();
    assert!(warning.contains("refused its event stream"), "{warning}");
    assert!(warning.contains("HTTP 400"), "{warning}");
    // The session is told, so it may make that request itself.
    let told = next(&mut conn).await;
    assert!(matches!(told, Inbound::StreamLost), "{told:?}");
    // Requests of ours until one finds the lost stream's task ended (it
    // ends right after its warning): that one opens it again.
    let mut id = 2;
    while gets.count.load(Ordering::SeqCst) < 3 && id < 200 {
        conn.outbound.send(legacy_request(id)).await.unwrap();
        assert!(matches!(next(&mut conn).await, Inbound::Frame(_)));
        id += 1;
    }
    hears_the_server(&mut conn).await;
    assert!(warnings.try_recv().is_err(), "said once");
}
