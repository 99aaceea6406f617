//! The stdio transport against real child processes.
//!
//! Fixtures are small `sh` scripts run as the *program* (the transport itself
//! never uses a shell).

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_transport::{
    CloseReason, Connection, Connector, ExitInfo, Inbound, OutboundFrame, StdioChannel,
    StdioConfig, StdioConnector, TransportError,
};
use rustix::process::{Pid, PidfdFlags, pidfd_open};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

fn sh(script: &str) -> StdioConfig {
    let mut c = StdioConfig::new("/bin/sh").args(["-c", script]);
    c.shutdown_grace = Duration::from_millis(300);
    c.term_grace = Duration::from_millis(300);
    c
}

async fn open(config: StdioConfig) -> Connection {
    StdioConnector::new(config).connect().await.expect("spawn")
}

/// Collects frames until the connection closes (bounded by a deadline);
/// counts frame errors, and keeps the ends of skipped lines.
async fn drain(conn: &mut Connection) -> (Vec<Bytes>, usize, ExitInfo) {
    let (frames, errors, _, info) = drain_with_edges(conn).await;
    (frames, errors, info)
}

async fn drain_with_edges(
    conn: &mut Connection,
) -> (Vec<Bytes>, usize, Vec<mcp_transport::SkippedEdge>, ExitInfo) {
    let mut frames = Vec::new();
    let mut errors = 0;
    let mut edges = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, conn.inbound.recv()).await {
            Ok(Some(Inbound::Frame(f))) => frames.push(f),
            Ok(Some(Inbound::FrameError(_))) => errors += 1,
            Ok(Some(Inbound::Skipped { edge, limit })) => {
                assert!(limit > 0);
                edges.push(edge);
            }
            Ok(Some(Inbound::Closed(info))) => return (frames, errors, edges, info),
            Ok(Some(other)) => panic!("a stream transport sent {other:?}"),
            Ok(None) => panic!("inbound ended without Closed"),
            Err(_) => panic!("connection did not close in time"),
        }
    }
}

/// Whether a process is gone (a zombie counts as gone: in some containers
/// PID 1 does not reap killed orphans).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().next());
            matches!(state, Some("Z") | Some("X"))
        }
    }
}

/// A watch on a process's end: a pidfd, which becomes readable when the
/// process terminates (a zombie has terminated). Opened while the process
/// is known to run, it names that process even if its pid is reused later.
fn watch_end(pid: u32) -> AsyncFd<OwnedFd> {
    let raw = i32::try_from(pid).expect("a pid fits an i32");
    let pid = Pid::from_raw(raw).expect("a pid is positive");
    let fd =
        pidfd_open(pid, PidfdFlags::NONBLOCK).unwrap_or_else(|e| panic!("pidfd_open({raw}): {e}"));
    // Deprecated (tokio#8587) for file descriptors that could change under
    // the `AsyncFd`; an `OwnedFd`'s cannot, and the replacement is `unsafe`,
    // which the workspace forbids.
    #[allow(deprecated)]
    let watched = AsyncFd::with_interest(fd, Interest::READABLE);
    watched.expect("the pidfd can be watched")
}

/// Waits (bounded) for the watched process to terminate; returns whether
/// it did.
async fn wait_gone(end: &AsyncFd<OwnedFd>) -> bool {
    match tokio::time::timeout(Duration::from_secs(5), end.readable()).await {
        Ok(ready) => {
            // Readable: the process has terminated (its readiness is kept).
            let _ready = ready.expect("the pidfd can be polled");
            true
        }
        Err(_) => false,
    }
}

#[tokio::test]
async fn the_child_gets_a_clean_environment() {
    // cargo sets CARGO_PKG_NAME for tests; it is not in the safe set, so the
    // child must not see it unless asked (setting a variable of our own would
    // need `unsafe` in edition 2024).
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let mut config = StdioConfig::new("/usr/bin/env").env("EXPLICIT", "yes");
    config.inherit_env.push("CARGO_MANIFEST_DIR".into());
    let mut conn = open(config).await;
    let (frames, _, info) = drain(&mut conn).await;
    let lines: Vec<String> = frames
        .iter()
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    assert!(lines.iter().any(|l| l == "EXPLICIT=yes"), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("PATH=")), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.starts_with("CARGO_MANIFEST_DIR=")),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("CARGO_PKG_NAME=")),
        "{lines:?}"
    );
    assert_eq!(info.exit_code, Some(0));
}

#[test]
fn debug_shows_env_names_but_never_their_values() {
    let mut config = StdioConfig::new("server")
        .args(["--port", "7"])
        .env("API_TOKEN", "sk-live-0123456789")
        .inherit("HOME_DIR");
    config.cwd = Some("/srv".into());
    let shown = format!("{config:?}");
    assert!(!shown.contains("sk-live-0123456789"), "{shown}");
    for kept in [
        "API_TOKEN",
        "server",
        "--port",
        "HOME_DIR",
        "/srv",
        "max_frame",
    ] {
        assert!(shown.contains(kept), "{kept}: {shown}");
    }
    // The connector shows its config the same way.
    let shown = format!("{:?}", StdioConnector::new(config));
    assert!(!shown.contains("sk-live-0123456789"), "{shown}");
}

#[tokio::test]
async fn exit_info_shows_no_stderr_even_when_it_holds_escape_sequences() {
    let mut conn = open(sh("printf 'boom\\033[2J\\033[1;1Hforged\\n' >&2; exit 4")).await;
    let (_, _, info) = drain(&mut conn).await;
    assert_eq!(
        info.stderr_tail.as_deref(),
        Some("boom\u{1b}[2J\u{1b}[1;1Hforged\n"),
        "the accessor keeps the server's text as it was"
    );
    let shown = info.to_string();
    assert!(
        !shown.contains('\u{1b}') && !shown.contains("forged"),
        "{shown:?}"
    );
    assert!(shown.contains("exited with code 4"), "{shown}");
}

#[tokio::test]
async fn exit_code_and_stderr_tail_are_reported_on_exit() {
    let mut conn = open(sh("echo hello; echo oops >&2; exit 3")).await;
    let (frames, _, info) = drain(&mut conn).await;
    assert_eq!(frames, vec![Bytes::from_static(b"hello")]);
    assert_eq!(info.reason, CloseReason::EndOfStream);
    assert_eq!(info.exit_code, Some(3));
    assert_eq!(info.stderr_tail.as_deref(), Some("oops\n"));
}

#[tokio::test]
async fn a_flood_on_stderr_never_blocks_and_is_kept_bounded() {
    let script = "head -c 3000000 /dev/zero | tr '\\0' x >&2; echo done";
    let mut conn = open(sh(script)).await;
    let (frames, _, info) = drain(&mut conn).await;
    assert_eq!(frames, vec![Bytes::from_static(b"done")]);
    let tail = info.stderr_tail.expect("tail");
    assert_eq!(tail.len(), mcp_transport::DEFAULT_STDERR_TAIL_BYTES);
    assert!(tail.bytes().all(|b| b == b'x'));
}

#[tokio::test]
async fn an_oversized_line_is_a_frame_error_and_reading_goes_on() {
    let mut config = sh("head -c 5000 /dev/zero | tr '\\0' a; echo; echo ok");
    config.max_frame = 1000;
    let mut conn = open(config).await;
    let (frames, errors, edges, _) = drain_with_edges(&mut conn).await;
    assert_eq!(errors, 1);
    assert_eq!(frames, vec![Bytes::from_static(b"ok")]);
    // Its two ends came first, so the session can tell what it answered.
    let a = Bytes::from(vec![b'a'; mcp_codec::EDGE_BYTES]);
    assert_eq!(
        edges,
        [
            mcp_transport::SkippedEdge::Start(a.clone()),
            mcp_transport::SkippedEdge::End(a)
        ]
    );
}

#[tokio::test]
async fn frames_are_written_to_stdin_newline_delimited() {
    let mut conn = open(sh("head -n 2")).await;
    conn.outbound
        .send(OutboundFrame::new(&b"{\"a\":1}"[..]))
        .await
        .unwrap();
    conn.outbound
        .send(OutboundFrame::new(&b"{\"b\":2}"[..]))
        .await
        .unwrap();
    let (frames, _, info) = drain(&mut conn).await;
    assert_eq!(
        frames,
        vec![
            Bytes::from_static(b"{\"a\":1}"),
            Bytes::from_static(b"{\"b\":2}")
        ]
    );
    assert_eq!(info.exit_code, Some(0));
}

#[tokio::test]
async fn a_frame_with_a_raw_newline_is_refused_before_sending() {
    let conn = open(sh("cat >/dev/null")).await;
    let err = conn
        .outbound
        .send(OutboundFrame::new(&b"{\n}"[..]))
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Encode(_)), "{err:?}");
    conn.control.shutdown().await;
}

#[tokio::test]
async fn shutdown_escalates_and_leaves_no_grandchild() {
    // The server ignores stdin closing and SIGTERM, and has a grandchild.
    let script = "trap '' TERM; sleep 1000 & echo $!; while :; do sleep 1; done";
    let mut conn = open(sh(script)).await;
    let first = tokio::time::timeout(Duration::from_secs(10), conn.inbound.recv())
        .await
        .expect("pid line");
    let Some(Inbound::Frame(pid)) = first else {
        panic!("expected a frame")
    };
    let grandchild: u32 = String::from_utf8_lossy(&pid).trim().parse().unwrap();
    assert!(!gone(grandchild));
    let end = watch_end(grandchild);
    let started = Instant::now();
    let info = conn.control.shutdown().await;
    assert!(started.elapsed() < Duration::from_secs(8));
    assert_eq!(info.reason, CloseReason::Shutdown);
    assert_eq!(
        info.signal,
        Some(9),
        "SIGTERM was ignored, so SIGKILL ended it"
    );
    assert!(wait_gone(&end).await, "grandchild {grandchild} survived");
}

#[tokio::test]
async fn a_polite_server_exits_when_stdin_closes() {
    let conn = open(sh("cat >/dev/null; exit 0")).await;
    let info = conn.control.shutdown().await;
    assert_eq!(info.exit_code, Some(0));
    assert_eq!(info.signal, None);
}

#[tokio::test]
async fn dropping_the_connection_kills_the_process_group_synchronously() {
    let mut conn = open(sh("sleep 1000 & echo $!; wait")).await;
    let Some(Inbound::Frame(pid)) = conn.inbound.recv().await else {
        panic!("pid")
    };
    let grandchild: u32 = String::from_utf8_lossy(&pid).trim().parse().unwrap();
    let end = watch_end(grandchild);
    drop(conn);
    assert!(
        wait_gone(&end).await,
        "grandchild {grandchild} survived the drop"
    );
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error_naming_it() {
    let err = StdioConnector::new(StdioConfig::new("/nonexistent/mcp-server"))
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Spawn { .. }));
    assert!(err.to_string().contains("/nonexistent/mcp-server"));
}

/// The same script on a socket pair instead of two pipes.
fn sh_socket(script: &str) -> StdioConfig {
    let mut c = sh(script);
    c.channel = StdioChannel::SocketPair;
    c
}

#[tokio::test]
async fn on_a_socket_pair_frames_go_both_ways_and_stderr_is_kept_apart() {
    // `cat` echoes stdin to stdout: both directions on one socket.
    let mut conn = open(sh_socket("echo to-stderr >&2; cat")).await;
    for frame in [&b"{\"a\":1}"[..], &b"{\"b\":2}"[..]] {
        conn.outbound.send(OutboundFrame::new(frame)).await.unwrap();
        let Some(Inbound::Frame(echoed)) = conn.inbound.recv().await else {
            panic!("no echo")
        };
        assert_eq!(&echoed[..], frame);
    }
    // Closing stdin is a half close: `cat` sees end-of-file and exits.
    let info = conn.control.shutdown().await;
    assert_eq!((info.exit_code, info.signal), (Some(0), None));
    assert_eq!(info.stderr_tail.as_deref(), Some("to-stderr\n"));
}

#[tokio::test]
async fn on_a_socket_pair_a_child_that_exits_is_seen_to_end() {
    let mut conn = open(sh_socket("echo '{\"x\":1}'; exit 3")).await;
    let (frames, _, info) = drain(&mut conn).await;
    assert_eq!(frames, vec![Bytes::from_static(b"{\"x\":1}")]);
    assert_eq!(info.exit_code, Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_stderr_lines_of_a_crash_are_in_its_report() {
    // A crashing server's last words are on stderr, written just before it
    // exits: the report must not be taken before they are read. Many at
    // once, so the exit is often seen before the pipe is drained.
    let runs = (0..40).map(|i| async move {
        let mut conn = open(sh(&format!(
            "echo 'not json'; echo 'fatal error number {i}' >&2; exit 3"
        )))
        .await;
        let (_, _, info) = drain(&mut conn).await;
        (i, info)
    });
    for (i, info) in futures::future::join_all(runs).await {
        assert_eq!(info.exit_code, Some(3));
        assert_eq!(
            info.stderr_tail.as_deref(),
            Some(format!("fatal error number {i}\n").as_str()),
            "{info:?}"
        );
    }
}
