//! Client input: legacy server→client requests (sampling, elicitation in
//! form and URL mode, roots, error answers, elicitation/complete) and
//! 2026-07-28 `input_required` rounds, for tools, prompts and resources.

#[path = "support/common.rs"]
mod common;

use common::*;
use mcp_testkit::{
    Behavior, InputRequest, InputSpec, LineClient, PromptSpec, ResourceSpec, Script, wire,
};
use serde_json::{Value, json};

fn url_elicitation() -> InputRequest {
    InputRequest::elicit_url("Connect your account", "https://auth.test/connect", "el-1")
}

fn form_elicitation() -> InputRequest {
    InputRequest::elicit_form(
        "Your name?",
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
    )
}

fn everything() -> InputSpec {
    InputSpec::one("a_connect", url_elicitation())
        .and("b_name", form_elicitation())
        .and("c_model", InputRequest::sampling("Capital of France?", 50))
        .and("d_roots", InputRequest::roots())
        .with_elicitation_complete()
}

/// Answers the next server request with `answer` (a `result`, or an
/// `error` when `answer` has `code`); returns the request.
async fn answer_next(client: &mut LineClient, answer: Value) -> Value {
    let request = client.recv().await;
    assert!(
        request.get("method").is_some(),
        "expected a request, got {request}"
    );
    let frame = if answer.get("code").is_some() {
        json!({"jsonrpc": "2.0", "id": request["id"], "error": answer})
    } else {
        json!({"jsonrpc": "2.0", "id": request["id"], "result": answer})
    };
    client.send(&frame).await;
    request
}

#[tokio::test]
async fn legacy_ask_sends_each_request_and_reports_every_answer() {
    let (mut client, recorder) =
        legacy(Script::legacy().tool("ask", Behavior::Ask(everything()))).await;
    client
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call("ask", json!({}))}))
        .await;

    let connect = answer_next(&mut client, json!({"action": "accept"})).await;
    assert_eq!(connect["method"], "elicitation/create");
    assert_eq!(connect["params"]["mode"], "url");
    assert_eq!(connect["params"]["elicitationId"], "el-1");
    let complete = client.recv().await;
    assert_eq!(
        complete,
        json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
               "params": {"elicitationId": "el-1"}})
    );
    let name = answer_next(
        &mut client,
        json!({"action": "accept", "content": {"name": "Ada"}}),
    )
    .await;
    assert_eq!(name["params"]["mode"], "form");
    let sample =
        json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"});
    let sampling = answer_next(&mut client, sample.clone()).await;
    assert_eq!(sampling["method"], "sampling/createMessage");
    assert_eq!(sampling["params"]["maxTokens"], 50);
    let refusal = json!({"code": -32601, "message": "roots not supported"});
    let roots = answer_next(&mut client, refusal.clone()).await;
    assert_eq!(roots["method"], "roots/list");
    assert!(roots.get("params").is_none());

    let reply = client.recv().await;
    assert_eq!(reply["id"], 1);
    assert_eq!(
        reply["result"]["isError"], true,
        "an error answer marks the result"
    );
    let rounds = &reply["result"]["structuredContent"]["rounds"];
    assert_eq!(
        rounds,
        &json!([{"a_connect": {"action": "accept"},
                 "b_name": {"action": "accept", "content": {"name": "Ada"}},
                 "c_model": sample,
                 "d_roots": {"error": refusal}}])
    );
    assert_eq!(
        serde_json::from_str::<Value>(text(&reply)).unwrap()["rounds"],
        *rounds
    );
    let responses = recorder.responses();
    assert_eq!(responses.len(), 4);
    assert_eq!(
        recorder.response_to(&roots["id"]).unwrap()["error"],
        refusal
    );
}

#[tokio::test]
async fn legacy_rounds_repeat_the_requests_and_a_declined_url_sends_no_completion() {
    let spec = InputSpec::one("connect", url_elicitation())
        .rounds(2)
        .with_elicitation_complete();
    let (mut client, _) = legacy(Script::legacy().tool("ask", Behavior::Ask(spec))).await;
    client
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call("ask", json!({}))}))
        .await;
    let first = answer_next(&mut client, json!({"action": "decline"})).await;
    let second = answer_next(&mut client, json!({"action": "cancel"})).await;
    assert_ne!(first["id"], second["id"]);
    let reply = client.recv().await;
    assert_eq!(reply["id"], 1, "no elicitation/complete before: {reply}");
    assert!(reply["result"].get("isError").is_none());
    assert_eq!(
        reply["result"]["structuredContent"]["rounds"],
        json!([{"connect": {"action": "decline"}}, {"connect": {"action": "cancel"}}])
    );
}

#[tokio::test]
async fn elicitation_complete_behaviour_notifies() {
    let behavior = Behavior::ElicitationComplete {
        elicitation_id: "el-9".into(),
    };
    let (mut client, _) = legacy(Script::legacy().tool("done", behavior)).await;
    let reply = client.request("tools/call", call("done", json!({}))).await;
    assert_eq!(text(&reply), "completed el-9");
    assert_eq!(
        client.skipped[0]["params"],
        json!({"elicitationId": "el-9"})
    );
}

fn all_caps() -> Value {
    json!({"sampling": {}, "roots": {}, "elicitation": {"form": {}, "url": {}}})
}

#[tokio::test]
async fn modern_ask_runs_its_rounds_through_request_state() {
    let spec = InputSpec::one("model", InputRequest::sampling("hi", 10))
        .and("name", form_elicitation())
        .rounds(3);
    let (mut client, recorder) = start(Script::modern().tool("ask", Behavior::Ask(spec)));
    let mut params = modern_with(call("ask", json!({})), all_caps());
    let mut states = Vec::new();
    for round in 0..3 {
        let reply = client.request("tools/call", params.clone()).await;
        let result = &reply["result"];
        assert_has_required("2026-07-28", "InputRequiredResult", result);
        assert_eq!(result["resultType"], "input_required", "round {round}");
        assert!(
            result.get("ttlMs").is_none(),
            "input_required has no cache hints"
        );
        assert_eq!(
            result["inputRequests"]["model"]["method"],
            "sampling/createMessage"
        );
        assert_eq!(result["inputRequests"]["name"]["params"]["mode"], "form");
        let state = result["requestState"].as_str().unwrap().to_owned();
        assert!(!states.contains(&state), "each round has its own state");
        states.push(state.clone());
        params["requestState"] = json!(state);
        params["inputResponses"] = json!({
            "model": {"role": "assistant", "content": {"type": "text", "text": format!("r{round}")}, "model": "m"},
            "name": {"action": "accept", "content": {"name": format!("n{round}")}},
        });
    }
    let done = client.request("tools/call", params).await;
    assert_eq!(done["result"]["resultType"], "complete");
    let rounds = done["result"]["structuredContent"]["rounds"]
        .as_array()
        .unwrap();
    assert_eq!(rounds.len(), 3);
    assert_eq!(rounds[2]["name"]["content"]["name"], "n2");
    assert_eq!(rounds[0]["model"]["content"]["text"], "r0");
    // Every retry the client sent is recorded as sent.
    let calls = recorder.with_method("tools/call");
    assert_eq!(calls.len(), 4);
    assert_eq!(calls[3]["params"]["requestState"], json!(states[2]));
}

#[tokio::test]
async fn a_retry_missing_an_answer_gets_the_same_round_again() {
    let spec = InputSpec::one("a", InputRequest::roots()).and("b", InputRequest::roots());
    let (mut client, _) = start(Script::modern().tool("ask", Behavior::Ask(spec)));
    let first = client
        .request(
            "tools/call",
            modern_with(call("ask", json!({})), all_caps()),
        )
        .await;
    let state = first["result"]["requestState"].clone();
    let partial = modern_with(
        json!({"name": "ask", "requestState": state, "inputResponses": {"a": {"roots": []}}}),
        all_caps(),
    );
    let again = client.request("tools/call", partial).await;
    assert_eq!(again["result"]["resultType"], "input_required");
    assert_eq!(again["result"]["requestState"], state);
}

#[tokio::test]
async fn a_wrong_or_missing_request_state_is_refused() {
    let spec = InputSpec::one("a", InputRequest::roots());
    let script = Script::modern()
        .tool("ask", Behavior::Ask(spec.clone()))
        .tool("other", Behavior::Ask(spec));
    let (mut client, _) = start(script);
    let first = client
        .request(
            "tools/call",
            modern_with(call("ask", json!({})), all_caps()),
        )
        .await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let answers = json!({"a": {"roots": []}});
    for (name, state) in [
        ("ask", json!("forged")),
        ("ask", json!(format!("{state}x"))),
        ("other", json!(state)),
    ] {
        let retry = modern_with(
            json!({"name": name, "requestState": state, "inputResponses": answers}),
            all_caps(),
        );
        let refused = client.request("tools/call", retry).await;
        assert_eq!(
            refused["error"]["code"],
            wire::INVALID_PARAMS,
            "{name} {state}"
        );
    }
    let no_state = modern_with(
        json!({"name": "ask", "inputResponses": answers}),
        all_caps(),
    );
    let refused = client.request("tools/call", no_state).await;
    assert_eq!(refused["error"]["code"], wire::INVALID_PARAMS);
}

#[tokio::test]
async fn modern_input_needs_the_declared_capability_mode() {
    let spec = InputSpec::one("connect", url_elicitation());
    let (mut client, _) = start(Script::modern().tool("ask", Behavior::Ask(spec)));
    let form_only = modern_with(call("ask", json!({})), json!({"elicitation": {}}));
    let reply = client.request("tools/call", form_only).await;
    assert_eq!(reply["error"]["code"], wire::MISSING_CLIENT_CAPABILITY);
    assert_eq!(
        reply["error"]["data"],
        json!({"requiredCapabilities": {"elicitation": {"url": {}}}})
    );
}

#[tokio::test]
async fn an_optional_state_lets_a_one_round_retry_come_without_it() {
    let mut spec = InputSpec::one("name", form_elicitation());
    spec.state_optional = true;
    let (mut client, _) = start(Script::modern().tool("ask", Behavior::Ask(spec)));
    let retry = |responses: Value| {
        modern_with(
            json!({"name": "ask", "arguments": {}, "inputResponses": responses}),
            all_caps(),
        )
    };
    let accepted = json!({"action": "accept", "content": {"name": "Ada"}});
    let done = client
        .request(
            "tools/call",
            retry(json!({"name": accepted, "extra": {"action": "decline"}})),
        )
        .await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["rounds"][0]["name"]["content"]["name"],
        "Ada"
    );
    let again = client
        .request("tools/call", retry(json!({"other": accepted})))
        .await;
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    for bad in [json!({"name": 12345}), Value::Null] {
        let refused = client.request("tools/call", retry(bad.clone())).await;
        assert_eq!(refused["error"]["code"], wire::INVALID_PARAMS, "{bad}");
    }
}

#[tokio::test]
async fn declared_only_asks_for_what_the_client_can_answer() {
    let mut spec =
        InputSpec::one("model", InputRequest::sampling("hi", 10)).and("name", form_elicitation());
    spec.declared_only = true;
    let (mut client, _) = start(Script::modern().tool("ask", Behavior::Ask(spec)));
    let sampling_only = modern_with(call("ask", json!({})), json!({"sampling": {}}));
    let reply = client.request("tools/call", sampling_only).await;
    let requests = reply["result"]["inputRequests"].as_object().unwrap();
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["model"], "{reply}");
    let none = modern_with(call("ask", json!({})), json!({}));
    let refused = client.request("tools/call", none).await;
    assert_eq!(refused["error"]["code"], wire::MISSING_CLIENT_CAPABILITY);
}

#[tokio::test]
async fn content_behaviour_logs_then_answers_its_blocks_verbatim() {
    let blocks = vec![
        json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
        json!({"type": "audio", "data": "BBBB", "mimeType": "audio/wav"}),
    ];
    let script: Script = Script::from_json(
        &json!({"versions": ["2025-11-25"], "tools": [{"name": "c", "inputSchema": {"type": "object"},
            "behavior": {"kind": "content", "content": blocks, "is_error": true,
                         "logs": [{"level": "info", "message": "one"}, {"level": "debug", "message": "two"}]}}]})
        .to_string(),
    )
    .unwrap();
    let (mut client, _) = legacy(script).await;
    client
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call("c", json!({}))}))
        .await;
    let first = client.recv().await;
    assert_eq!(first["params"]["data"], "one");
    assert_eq!(client.recv().await["params"]["level"], "debug");
    let reply = client.recv().await;
    assert_eq!(reply["result"]["content"], json!(blocks));
    assert_eq!(reply["result"]["isError"], true);
}

fn gated() -> Script {
    let spec = InputSpec::one("ok", form_elicitation());
    Script::dual()
        .prompt(
            PromptSpec::new("secret")
                .message("user", "the secret")
                .with_input(spec.clone()),
        )
        .resource(ResourceSpec::text("file:///vault", "vault", "gold").with_input(spec))
}

#[tokio::test]
async fn prompts_and_resources_ask_first_in_2026() {
    let (mut client, _) = start(gated());
    let caps = json!({"elicitation": {}});
    let answer = json!({"ok": {"action": "accept", "content": {"name": "me"}}});
    for (method, params) in [
        ("prompts/get", json!({"name": "secret"})),
        ("resources/read", json!({"uri": "file:///vault"})),
    ] {
        let first = client
            .request(method, modern_with(params.clone(), caps.clone()))
            .await;
        assert_eq!(first["result"]["resultType"], "input_required", "{method}");
        assert_eq!(
            first["result"]["inputRequests"]["ok"]["method"],
            "elicitation/create"
        );
        let mut retry = params.clone();
        retry["requestState"] = first["result"]["requestState"].clone();
        retry["inputResponses"] = answer.clone();
        let done = client
            .request(method, modern_with(retry, caps.clone()))
            .await;
        let result = &done["result"];
        assert_eq!(result["resultType"], "complete", "{method}");
        assert_eq!(
            result["_meta"][wire::META_INPUT_RESPONSES],
            json!({"rounds": [{"ok": answer["ok"]}]})
        );
    }
    let read = client
        .request(
            "resources/read",
            modern_with(json!({"uri": "file:///vault"}), caps.clone()),
        )
        .await;
    assert!(
        read["result"].get("contents").is_none(),
        "no content before the input"
    );
}

#[tokio::test]
async fn prompts_and_resources_ask_with_requests_in_legacy() {
    let (mut client, _) = legacy(gated()).await;
    client
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "secret"}}))
        .await;
    answer_next(
        &mut client,
        json!({"action": "accept", "content": {"name": "me"}}),
    )
    .await;
    let prompt = client.recv().await;
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"],
        "the secret"
    );
    assert_eq!(
        prompt["result"]["_meta"][wire::META_INPUT_RESPONSES]["rounds"][0]["ok"]["action"],
        "accept"
    );
    client
        .send(&json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "file:///vault"}}))
        .await;
    answer_next(&mut client, json!({"action": "decline"})).await;
    let read = client.recv().await;
    assert_eq!(read["result"]["contents"][0]["text"], "gold");
    assert_eq!(
        read["result"]["_meta"][wire::META_INPUT_RESPONSES]["rounds"][0]["ok"],
        json!({"action": "decline"})
    );
}
