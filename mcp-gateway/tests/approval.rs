//! Calls the operator marked for confirmation are put to the host's user
//! by elicitation ([`mcp_gateway::HostApproval`]); nothing reaches the
//! server unless the user accepts.

#[path = "support/common.rs"]
mod common;

use std::sync::{Arc, Mutex};

use common::*;
use mcp_session::{ClientHandlers, Elicitation, Negotiation};
use mcp_testkit::{Behavior, InputRequest, InputSpec, Script};
use mcp_types::{ElicitAction, ElicitResult, error_codes};
use serde_json::json;

fn marked(_server: &str, tool: &str) -> bool {
    tool == "delete"
}

fn script() -> Script {
    Script::legacy()
        .tool("delete", Behavior::Echo)
        .tool("read", Behavior::Echo)
}

/// The questions the host's user was asked: (message, labelled server).
type Asked = Arc<Mutex<Vec<(String, String)>>>;

/// A host whose user answers every confirmation (a form with no fields)
/// with `action`, keeping each question's message and labelled server; a
/// form with fields (a server's own question) is answered with a name and
/// not kept.
fn answering(action: ElicitAction, asked: Asked) -> ClientHandlers {
    ClientHandlers::new().on_elicitation(move |params: Elicitation| {
        let asked = Arc::clone(&asked);
        let action = action.clone();
        async move {
            let Elicitation::Form(form) = params else {
                panic!("a form was expected");
            };
            if !form.requested_schema.properties.0.is_empty() {
                let mut answer = ElicitResult::new(ElicitAction::Accept);
                answer.content = serde_json::from_value(json!({"name": "renamed.txt"})).ok();
                return Ok(answer);
            }
            let server = form
                .meta
                .as_ref()
                .and_then(|m| m.get("mcp-gateway/server"))
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned();
            asked.lock().unwrap().push((form.message, server));
            Ok(ElicitResult::new(action))
        }
    })
}

fn calls_of(recorder: &mcp_testkit::Recorder, tool: &str) -> usize {
    recorder
        .received()
        .iter()
        .filter(|m| m["method"] == "tools/call" && m["params"]["name"] == tool)
        .count()
}

/// A gateway in front of the script's server, marking `delete`; the host's
/// user answers with `action` (`None`: a host without elicitation). Gives
/// the host, the server's recorder and the questions asked.
async fn gateway(action: Option<ElicitAction>) -> (Running, mcp_testkit::Recorder, Asked) {
    let (files, recorder) = memory(script());
    let mut setup = Setup::new(vec![spec("files", files)]);
    let asked = Asked::default();
    if let Some(action) = action {
        setup.handlers = answering(action, Arc::clone(&asked));
    }
    setup.confirm = Some(marked);
    (start(setup).await, recorder, asked)
}

/// A gateway as [`gateway`] makes, whose host speaks 2026-07-28 (and so
/// cannot be sent requests): the gateway asks it by `input_required`
/// rounds. The server also has `renamed`, marked too, which asks the host
/// for a new name in two rounds of its own.
async fn modern_gateway(action: Option<ElicitAction>) -> (Running, mcp_testkit::Recorder, Asked) {
    let mut rounds = InputSpec::one(
        "name",
        InputRequest::elicit_form(
            "New name?",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        ),
    );
    rounds.rounds = 2;
    let (files, recorder) = memory(
        Script::modern()
            .tool("delete", Behavior::Echo)
            .tool("read", Behavior::Echo)
            .tool("renamed", Behavior::Ask(rounds)),
    );
    let mut setup = Setup::new(vec![spec("files", files)]);
    setup.negotiation = Negotiation::Modern;
    let asked = Asked::default();
    if let Some(action) = action {
        setup.handlers = answering(action, Arc::clone(&asked));
    }
    setup.confirm = Some(|_, tool| tool == "delete" || tool == "renamed");
    (start(setup).await, recorder, asked)
}

/// Calls `delete` with a file name: the result.
async fn delete(running: &Running) -> mcp_types::CallToolResult {
    running
        .host
        .call_tool("delete", json!({"text": "notes.txt"}))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_marked_call_goes_ahead_once_the_hosts_user_accepts() {
    let (running, recorder, asked) = gateway(Some(ElicitAction::Accept)).await;
    let result = delete(&running).await;
    assert!(!result.failed(), "{}", result.text());
    assert_eq!(result.text(), "notes.txt");
    // An unmarked tool is not asked about.
    running
        .host
        .call_tool("read", json!({"text": "x"}))
        .await
        .unwrap();
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let (message, server) = &asked[0];
    assert_eq!(server, "files");
    assert!(message.contains("`delete`"), "{message}");
    assert!(message.contains("notes.txt"), "{message}");
    assert_eq!(calls_of(&recorder, "delete"), 1);
    running.close().await;
}

#[tokio::test]
async fn a_marked_call_the_user_declines_never_reaches_the_server() {
    let (running, recorder, asked) = gateway(Some(ElicitAction::Decline)).await;
    let result = delete(&running).await;
    assert!(result.failed());
    assert!(result.text().contains("not approved"), "{}", result.text());
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert_eq!(calls_of(&recorder, "delete"), 0);
    running.close().await;
}

#[tokio::test]
async fn without_the_hosts_elicitation_a_marked_call_is_refused_and_not_sent() {
    let (running, recorder, _) = gateway(None).await;
    let result = delete(&running).await;
    assert!(result.failed());
    assert!(result.text().contains("not approved"), "{}", result.text());
    let read = running
        .host
        .call_tool("read", json!({"text": "fine"}))
        .await
        .unwrap();
    assert!(!read.failed(), "{}", read.text());
    assert_eq!(calls_of(&recorder, "delete"), 0);
    running.close().await;
}

#[tokio::test]
async fn a_2026_host_confirms_a_marked_call_in_an_input_round() {
    let (running, recorder, asked) = modern_gateway(Some(ElicitAction::Accept)).await;
    assert_eq!(
        running.host.protocol_version().era(),
        mcp_types::Era::Modern
    );
    let result = delete(&running).await;
    assert!(!result.failed(), "{}", result.text());
    assert_eq!(result.text(), "notes.txt");
    let read = running
        .host
        .call_tool("read", json!({"text": "x"}))
        .await
        .unwrap();
    assert!(!read.failed(), "{}", read.text());
    let asked_now = asked.lock().unwrap().clone();
    assert_eq!(asked_now.len(), 1, "{asked_now:?}");
    let (message, server) = &asked_now[0];
    assert_eq!(server, "files");
    assert!(message.contains("`delete`"), "{message}");
    assert!(message.contains("notes.txt"), "{message}");
    assert_eq!(calls_of(&recorder, "delete"), 1);
    // A marked tool whose server asks in rounds of its own is confirmed
    // once, not at every round.
    let renamed = running.host.call_tool("renamed", json!({})).await.unwrap();
    assert!(!renamed.failed(), "{}", renamed.text());
    assert_eq!(asked.lock().unwrap().len(), 2);
    assert_eq!(
        calls_of(&recorder, "renamed"),
        3,
        "two asking rounds, then the answer"
    );
    running.close().await;
}

#[tokio::test]
async fn a_2026_hosts_decline_keeps_the_call_from_the_server() {
    let (running, recorder, asked) = modern_gateway(Some(ElicitAction::Decline)).await;
    let result = delete(&running).await;
    assert!(result.failed());
    assert!(result.text().contains("not approved"), "{}", result.text());
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert_eq!(calls_of(&recorder, "delete"), 0);
    running.close().await;
}

#[tokio::test]
async fn a_2026_host_without_elicitation_is_told_what_a_marked_call_needs() {
    let (running, recorder, _) = modern_gateway(None).await;
    let error = running
        .host
        .call_tool("delete", json!({"text": "notes.txt"}))
        .await
        .unwrap_err();
    let object = error.error_object().expect("a JSON-RPC error");
    assert_eq!(object.code, error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY);
    assert!(
        object.message.contains("confirmation"),
        "{}",
        object.message
    );
    assert_eq!(
        object.data.unwrap()["requiredCapabilities"]["elicitation"],
        json!({"form": {}})
    );
    assert_eq!(calls_of(&recorder, "delete"), 0);
    running.close().await;
}

#[tokio::test]
async fn a_2026_hosts_confirmation_is_good_for_one_call_only() {
    let (files, recorder) = memory(script());
    let gateway = HttpGateway::start_confirming(
        vec![spec("files", files)],
        mcp_hub::Authority::unrestricted(),
        mcp_gateway::GatewayConfig::default(),
        Some(marked),
    )
    .await;
    let caps = json!({"elicitation": {}});
    let call = json!({"name": "delete", "arguments": {"text": "notes.txt"}});
    let (_, asked) = gateway.send("tools/call", call.clone(), caps.clone()).await;
    let round = &asked["result"];
    assert_eq!(round["resultType"], "input_required", "{asked}");
    let question = &round["inputRequests"]["mcp-gateway/confirm"];
    assert_eq!(question["method"], "elicitation/create", "{asked}");
    assert!(
        question["params"]["message"]
            .as_str()
            .unwrap()
            .contains("`delete`")
    );
    assert_eq!(calls_of(&recorder, "delete"), 0);

    let mut retry = call.clone();
    retry["requestState"] = round["requestState"].clone();
    retry["inputResponses"] = json!({"mcp-gateway/confirm": {"action": "accept"}});
    let (_, done) = gateway
        .send("tools/call", retry.clone(), caps.clone())
        .await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(calls_of(&recorder, "delete"), 1);
    // The same accepted retry again: refused, the server not called.
    let (_, replayed) = gateway.send("tools/call", retry, caps).await;
    assert_eq!(
        replayed["error"]["data"]["kind"], "request_state_used",
        "{replayed}"
    );
    assert_eq!(calls_of(&recorder, "delete"), 1);
    gateway.stop().await;
}
