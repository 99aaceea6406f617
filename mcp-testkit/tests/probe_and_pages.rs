//! What a legacy-only server does with the `server/discover` probe, and
//! `tools/list` pagination (normal, cyclic, endless) in both eras.

use std::time::Duration;

use mcp_testkit::{
    Behavior, FakeServer, Line, LineClient, OnProbe, Script, wire, with_modern_meta,
};
use serde_json::{Value, json};

const QUIET: Duration = Duration::from_millis(300);

fn start(script: Script) -> (LineClient, tokio::task::JoinHandle<i32>) {
    let running = FakeServer::new(script).start();
    (LineClient::over(running.stream), running.task)
}

fn probe() -> Value {
    json!({"jsonrpc": "2.0", "id": "probe-1", "method": "server/discover",
           "params": with_modern_meta(json!({}), Value::Null)})
}

#[tokio::test]
async fn default_probe_answer_is_method_not_found_with_the_id() {
    let (mut client, _task) = start(Script::legacy());
    client.send(&probe()).await;
    let reply = client.recv().await;
    assert_eq!(reply["id"], "probe-1");
    assert_eq!(reply["error"]["code"], wire::METHOD_NOT_FOUND);
    // The legacy handshake still works afterwards.
    let init = client.initialize("2025-11-25").await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn a_silent_server_never_answers_the_probe() {
    let (mut client, _task) = start(Script::legacy().on_probe(OnProbe::Silence));
    client.send(&probe()).await;
    assert_eq!(client.next_line(QUIET).await, Line::TimedOut);
    let init = client.initialize("2025-06-18").await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
}

#[tokio::test]
async fn an_exiting_server_ends_without_answering() {
    let (mut client, task) = start(Script::legacy().on_probe(OnProbe::Exit { code: 3 }));
    client.send(&probe()).await;
    assert_eq!(task.await.unwrap(), 3);
    assert_eq!(client.next_line(QUIET).await, Line::Eof);
}

#[tokio::test]
async fn invalid_request_answers_with_a_null_id() {
    let (mut client, _task) = start(Script::legacy().on_probe(OnProbe::InvalidRequest));
    client.send(&probe()).await;
    let reply = client.recv().await;
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(reply["error"]["code"], wire::INVALID_REQUEST);
}

#[tokio::test]
async fn unsupported_version_claims_the_scripted_versions() {
    let on_probe = OnProbe::UnsupportedVersion {
        versions: vec!["2026-01-01".into()],
    };
    let (mut client, _task) = start(Script::legacy().on_probe(on_probe));
    client.send(&probe()).await;
    let reply = client.recv().await;
    assert_eq!(reply["error"]["code"], wire::UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(
        reply["error"]["data"],
        json!({"supported": ["2026-01-01"], "requested": "2026-07-28"})
    );
}

fn five_tools() -> Script {
    ["a", "b", "c", "d", "e"]
        .into_iter()
        .fold(Script::legacy(), |s, name| s.tool(name, Behavior::Echo))
}

fn names(reply: &Value) -> Vec<String> {
    reply["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn pages_follow_their_cursors_to_the_end() {
    let (mut client, _task) = start(five_tools().page_size(2));
    client.initialize("2025-11-25").await;
    let mut cursor = Value::Null;
    let mut pages = Vec::new();
    loop {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let reply = client.request("tools/list", params).await;
        pages.push(names(&reply));
        cursor = reply["result"]
            .get("nextCursor")
            .cloned()
            .unwrap_or(Value::Null);
        if cursor.is_null() {
            break;
        }
        assert!(pages.len() < 10, "pagination did not end");
    }
    assert_eq!(pages, [vec!["a", "b"], vec!["c", "d"], vec!["e"]]);
}

#[tokio::test]
async fn an_unknown_cursor_is_invalid_params() {
    let (mut client, _task) = start(five_tools().page_size(2));
    client.initialize("2025-11-25").await;
    for cursor in [json!("bogus"), json!("page-3"), json!(7)] {
        let reply = client
            .request("tools/list", json!({"cursor": cursor}))
            .await;
        assert_eq!(reply["error"]["code"], wire::INVALID_PARAMS, "{cursor}");
    }
}

#[tokio::test]
async fn a_cyclic_cursor_repeats_forever() {
    let (mut client, _task) = start(five_tools().page_size(2).cyclic_cursor());
    client.initialize("2025-11-25").await;
    let first = client.request("tools/list", json!({})).await;
    assert_eq!(first["result"]["nextCursor"], "again");
    let again = client
        .request("tools/list", json!({"cursor": "again"}))
        .await;
    assert_eq!(again["result"]["nextCursor"], "again");
    assert_eq!(names(&again), names(&first));
}

#[tokio::test]
async fn endless_pages_always_have_a_new_cursor() {
    let (mut client, _task) = start(five_tools().page_size(2).endless_pages());
    client.initialize("2025-11-25").await;
    let mut cursor = json!(null);
    let mut seen = Vec::new();
    for _ in 0..6 {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let reply = client.request("tools/list", params).await;
        cursor = reply["result"]["nextCursor"].clone();
        assert!(!seen.contains(&cursor), "cursor {cursor} repeated");
        seen.push(cursor.clone());
    }
    let far = client
        .request("tools/list", json!({"cursor": cursor}))
        .await;
    assert_eq!(names(&far), Vec::<String>::new());
    assert!(far["result"]["nextCursor"].is_string());
}

#[tokio::test]
async fn modern_pages_carry_cache_hints_on_every_page() {
    let script = five_tools().versions(["2026-07-28"]).page_size(3);
    let (mut client, _task) = start(script);
    let first = client
        .request("tools/list", with_modern_meta(json!({}), Value::Null))
        .await;
    assert_eq!(names(&first), ["a", "b", "c"]);
    let cursor = first["result"]["nextCursor"].clone();
    let second = client
        .request(
            "tools/list",
            with_modern_meta(json!({"cursor": cursor}), Value::Null),
        )
        .await;
    assert_eq!(names(&second), ["d", "e"]);
    assert!(second["result"].get("nextCursor").is_none());
    assert_eq!(second["result"]["resultType"], "complete");
    assert_eq!(second["result"]["cacheScope"], "private");
}
