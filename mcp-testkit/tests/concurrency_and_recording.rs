//! Concurrent calls, cancellation, end of input, recording, input bounds and
//! startup misbehaviour, in-process.

use std::time::{Duration, Instant};

use mcp_testkit::{Behavior, FakeServer, Line, LineClient, Recorder, RejectedLine, Script, wire};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

const QUIET: Duration = Duration::from_millis(200);
const WAIT: Duration = Duration::from_secs(5);

struct Connected {
    client: LineClient,
    recorder: Recorder,
    task: tokio::task::JoinHandle<i32>,
}

async fn connect(script: Script) -> Connected {
    let running = FakeServer::new(script).start();
    let mut client = LineClient::over(running.stream);
    client.initialize("2025-11-25").await;
    Connected {
        client,
        recorder: running.recorder,
        task: running.task,
    }
}

fn call_frame(id: i64, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": {"text": "still here"}}})
}

fn tools() -> Script {
    Script::legacy()
        .tool("echo", Behavior::Echo)
        .tool("hang", Behavior::Hang)
        .tool(
            "slow",
            Behavior::Sleep {
                ms: 10_000,
                progress_steps: 0,
            },
        )
}

#[tokio::test]
async fn a_hanging_call_does_not_block_an_echo() {
    let mut c = connect(tools()).await;
    c.client.send(&call_frame(100, "hang")).await;
    c.client.send(&call_frame(101, "slow")).await;
    c.client.send(&call_frame(102, "echo")).await;
    let reply = c.client.recv().await;
    assert_eq!(reply["id"], 102);
    assert_eq!(reply["result"]["content"][0]["text"], "still here");
    assert_eq!(c.client.next_line(QUIET).await, Line::TimedOut);
}

#[tokio::test]
async fn cancellation_is_recorded_and_forgets_the_hanging_call() {
    let mut script = tools();
    script.max_in_flight = 1;
    let mut c = connect(script).await;
    c.client.send(&call_frame(7, "hang")).await;
    let busy = c
        .client
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        )
        .await;
    assert_eq!(
        busy["error"]["code"],
        wire::INTERNAL_ERROR,
        "the hang fills the table"
    );

    c.client
        .notify(
            "notifications/cancelled",
            json!({"requestId": 7, "reason": "test"}),
        )
        .await;
    let cancelled = c
        .recorder
        .wait_for("notifications/cancelled", WAIT)
        .await
        .unwrap();
    assert_eq!(
        cancelled["params"],
        json!({"requestId": 7, "reason": "test"})
    );
    assert_eq!(c.recorder.cancelled_ids(), [json!(7)]);

    let ok = c
        .client
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        )
        .await;
    assert_eq!(
        ok["result"]["content"][0]["text"], "x",
        "the hang was forgotten"
    );
}

#[tokio::test]
async fn a_cancelled_sleep_never_answers() {
    let mut c = connect(tools()).await;
    c.client.send(&call_frame(3, "slow")).await;
    c.client
        .notify("notifications/cancelled", json!({"requestId": 3}))
        .await;
    assert_eq!(c.client.next_line(QUIET).await, Line::TimedOut);
    // Nothing is left running, so end of input ends `serve` at once.
    let started = Instant::now();
    c.client.close().await;
    assert_eq!(c.task.await.unwrap(), 0);
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn a_call_in_flight_at_end_of_input_still_answers() {
    let script = Script::legacy().tool(
        "nap",
        Behavior::Sleep {
            ms: 100,
            progress_steps: 0,
        },
    );
    let mut c = connect(script).await;
    c.client.send(&call_frame(4, "nap")).await;
    c.client.close().await;
    let reply = c.client.recv().await;
    assert_eq!(reply["id"], 4);
    assert_eq!(c.task.await.unwrap(), 0);
}

#[tokio::test]
async fn the_eof_grace_is_bounded() {
    let mut script = tools();
    script.eof_grace_ms = 50;
    let mut c = connect(script).await;
    c.client.send(&call_frame(5, "slow")).await;
    c.client.close().await;
    let code = tokio::time::timeout(Duration::from_secs(2), c.task).await;
    assert_eq!(code.unwrap().unwrap(), 0);
}

#[tokio::test]
async fn the_recorder_keeps_the_exact_frames_in_order() {
    let mut c = connect(tools()).await;
    let frame = json!({"jsonrpc": "2.0", "id": "abc", "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"text": "é\u{0}"}, "_meta": {"progressToken": 1}}});
    c.client.send(&frame).await;
    c.client.recv().await;
    let received = c.recorder.received();
    let methods: Vec<&str> = received
        .iter()
        .filter_map(|f| f["method"].as_str())
        .collect();
    assert_eq!(
        methods,
        ["initialize", "notifications/initialized", "tools/call"]
    );
    assert_eq!(received[2], frame);
    assert_eq!(c.recorder.with_method("tools/call"), [frame]);
    assert!(
        c.recorder
            .wait_until(QUIET, |frames| frames.len() == 3)
            .await
    );
    assert!(
        c.recorder
            .wait_for("never/sent", Duration::from_millis(50))
            .await
            .is_none()
    );
}

#[tokio::test]
async fn bad_lines_are_answered_recorded_and_skipped() {
    let mut script = tools();
    script.max_line_bytes = 1024;
    let mut c = connect(script).await;
    c.client.send_raw("not json at all").await;
    let parse = c.client.recv().await;
    assert_eq!(parse["error"]["code"], wire::PARSE_ERROR);
    assert_eq!(parse["id"], Value::Null);

    c.client
        .send_raw(&format!("{{\"pad\": \"{}\"}}", "y".repeat(4000)))
        .await;
    let too_long = c.client.recv().await;
    assert_eq!(too_long["error"]["code"], wire::INVALID_REQUEST);

    c.client.send_raw("[1, 2]").await;
    assert_eq!(
        c.client.recv().await["error"]["code"],
        wire::INVALID_REQUEST
    );

    let ok = c
        .client
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "after"}}),
        )
        .await;
    assert_eq!(ok["result"]["content"][0]["text"], "after");
    let rejected = c.recorder.rejected_lines();
    assert_eq!(rejected.len(), 2);
    assert!(
        matches!(&rejected[0], RejectedLine::NotJson { prefix, len: 15 } if prefix == "not json at all")
    );
    assert!(matches!(rejected[1], RejectedLine::TooLong { len } if len > 4000));
}

#[tokio::test]
async fn garbage_on_start_comes_before_anything() {
    let mut script = Script::legacy();
    script.garbage_on_start = true;
    let running = FakeServer::new(script).start();
    let mut client = LineClient::over(running.stream);
    assert!(matches!(client.next_line(WAIT).await, Line::Text(_)));
    let init = client.initialize("2025-11-25").await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn a_stderr_flood_goes_out_without_blocking_the_protocol() {
    let flood = 2 << 20;
    let mut script = Script::legacy().tool("echo", Behavior::Echo);
    script.stderr_flood_bytes = flood;
    let (stderr_write, mut stderr_read) = tokio::io::duplex(4096);
    let running = FakeServer::new(script).with_stderr(stderr_write).start();
    let mut client = LineClient::over(running.stream);
    // Nobody reads stderr yet: its pipe is full, the protocol must still work.
    client.initialize("2025-11-25").await;
    let reply = client
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        )
        .await;
    assert_eq!(reply["result"]["content"][0]["text"], "x");
    let mut total = 0u64;
    let mut buf = vec![0; 64 * 1024];
    while total < flood {
        let n = tokio::time::timeout(WAIT, stderr_read.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "stderr ended after {total} bytes");
        total += n as u64;
    }
    assert_eq!(total, flood);
}
