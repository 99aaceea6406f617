//! A 2026-07-28 host through the gateway over Streamable HTTP, by raw
//! requests: a server's `input_required` rounds reach the host one at a
//! time with a `requestState` of the gateway's own; the host's retries are
//! checked (tampered, foreign, missing or misshapen answers refused) and go
//! back to the same server; the host's per-request capabilities reach the
//! server, whose `-32021` reaches the host with HTTP 400.

#[path = "support/common.rs"]
mod common;

use common::*;
use mcp_testkit::{Behavior, InputRequest, InputSpec, PromptSpec, Recorder, Script};
use serde_json::{Value, json};

/// What these tests send through [`HttpGateway`].
trait Rounds {
    /// A `tools/call` of a host that declares every client capability.
    async fn call(&self, params: Value) -> (u16, Value);
}

impl Rounds for HttpGateway {
    async fn call(&self, params: Value) -> (u16, Value) {
        self.send("tools/call", params, all_caps()).await
    }
}

fn all_caps() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {}})
}

fn name_form() -> InputRequest {
    InputRequest::elicit_form(
        "Your name?",
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
    )
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn roots_answer() -> Value {
    json!({"roots": [{"uri": "file:///work", "name": "work"}]})
}

/// A 2026-07-28 server: `ask` (a name and the roots, at once), `twice`
/// (a name, in two rounds), `sample` (needs sampling), a prompt `p` asking
/// for a name.
fn asking() -> (std::sync::Arc<dyn mcp_transport::Connector>, Recorder) {
    let both = InputSpec::one("name", name_form()).and("roots", InputRequest::roots());
    let mut twice = InputSpec::one("name", name_form());
    twice.rounds = 2;
    let mut prompt = PromptSpec::new("p");
    prompt.messages = vec![json!({"role": "user", "content": {"type": "text", "text": "hi"}})];
    prompt.input = Some(InputSpec::one("name", name_form()));
    memory(
        Script::modern()
            .tool("ask", Behavior::Ask(both))
            .tool("twice", Behavior::Ask(twice))
            .tool(
                "sample",
                Behavior::AskClient {
                    method: "sampling/createMessage".into(),
                    params: json!({"messages": [{"role": "user",
                        "content": {"type": "text", "text": "?"}}], "maxTokens": 5}),
                },
            )
            .prompt(prompt),
    )
}

fn result(answer: &Value) -> &Value {
    answer
        .get("result")
        .unwrap_or_else(|| panic!("no result: {answer}"))
}

fn error_kind(answer: &Value) -> (i64, String) {
    let error = answer
        .get("error")
        .unwrap_or_else(|| panic!("no error: {answer}"));
    (
        error["code"].as_i64().unwrap(),
        error["data"]["kind"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// The first round of `alpha/ask`: its result.
async fn first_round(gateway: &HttpGateway, tool: &str) -> Value {
    let (status, answer) = gateway
        .call(json!({"name": tool, "arguments": {"x": 1}}))
        .await;
    assert_eq!(status, 200, "{answer}");
    result(&answer).clone()
}

#[tokio::test]
async fn several_input_requests_reach_the_host_and_its_answers_the_server() {
    let (alpha, recorder) = asking();
    let gateway = HttpGateway::unrestricted(vec![spec("alpha", alpha)]).await;
    let first = first_round(&gateway, "alpha/ask").await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let requests = first["inputRequests"].as_object().unwrap();
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        ["name", "roots"],
        "{first}"
    );
    assert_eq!(requests["name"]["method"], "elicitation/create");
    assert_eq!(requests["roots"]["method"], "roots/list");
    let state = first["requestState"].as_str().unwrap().to_owned();
    assert_eq!(recorder.with_method("tools/call").len(), 1);

    let (status, answer) = gateway
        .call(
            json!({"name": "alpha/ask", "arguments": {"x": 1}, "requestState": state,
            "inputResponses": {"name": accept(json!({"name": "Alice"})), "roots": roots_answer(),
                               "unasked": accept(json!({}))}}),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let done = result(&answer);
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_ne!(done["isError"], true, "{done}");
    assert!(done.to_string().contains("Alice"), "{done}");
    // The retry reached the server with the server's own state and only
    // the answers it asked for.
    let calls = recorder.with_method("tools/call");
    assert_eq!(calls.len(), 2);
    let retry = &calls[1]["params"];
    assert_eq!(
        retry["inputResponses"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["name", "roots"]
    );
    assert!(retry["requestState"].is_string());
    assert_ne!(retry["requestState"].as_str(), Some(state.as_str()));
    gateway.stop().await;
}

#[tokio::test]
async fn two_rounds_each_get_a_new_state_then_complete() {
    let (alpha, _) = asking();
    let gateway = HttpGateway::unrestricted(vec![spec("alpha", alpha)]).await;
    let first = first_round(&gateway, "alpha/twice").await;
    let state1 = first["requestState"].as_str().unwrap().to_owned();
    let retry = |state: String| {
        json!({"name": "alpha/twice", "arguments": {"x": 1}, "requestState": state,
               "inputResponses": {"name": accept(json!({"name": "Bo"}))}})
    };
    let (_, answer) = gateway.call(retry(state1.clone())).await;
    let second = result(&answer);
    assert_eq!(second["resultType"], "input_required", "{second}");
    let state2 = second["requestState"].as_str().unwrap().to_owned();
    assert_ne!(state1, state2);
    let (_, answer) = gateway.call(retry(state2)).await;
    assert_eq!(result(&answer)["resultType"], "complete", "{answer}");
    gateway.stop().await;
}

#[tokio::test]
async fn a_tampered_foreign_or_answerless_retry_is_refused_before_the_server() {
    let (alpha, recorder) = asking();
    let (beta, beta_recorder) = asking();
    let gateway = HttpGateway::unrestricted(vec![spec("alpha", alpha), spec("beta", beta)]).await;
    let first = first_round(&gateway, "alpha/ask").await;
    let state = first["requestState"].as_str().unwrap().to_owned();
    let answers = json!({"name": accept(json!({"name": "A"})), "roots": roots_answer()});

    let (status, answer) = gateway
        .call(json!({"name": "alpha/ask", "arguments": {"x": 1},
            "requestState": format!("{state}-TAMPERED"), "inputResponses": answers}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        error_kind(&answer),
        (-32602, "request_state_invalid".into())
    );

    // Another server's tool of the same name, other arguments, another tool.
    for (name, arguments) in [
        ("beta/ask", json!({"x": 1})),
        ("alpha/ask", json!({"x": 2})),
        ("alpha/twice", json!({"x": 1})),
    ] {
        let (status, answer) = gateway
            .call(json!({"name": name, "arguments": arguments,
                "requestState": state, "inputResponses": answers}))
            .await;
        assert_eq!(status, 400, "{name}");
        assert_eq!(
            error_kind(&answer),
            (-32602, "request_state_foreign".into()),
            "{name}"
        );
    }

    let (_, answer) = gateway
        .call(json!({"name": "alpha/ask", "arguments": {"x": 1}, "requestState": state}))
        .await;
    assert_eq!(
        error_kind(&answer),
        (-32602, "input_responses_missing".into())
    );
    // An answer of the wrong kind (roots for an elicitation).
    let (_, answer) = gateway
        .call(
            json!({"name": "alpha/ask", "arguments": {"x": 1}, "requestState": state,
            "inputResponses": {"name": roots_answer(), "roots": roots_answer()}}),
        )
        .await;
    assert_eq!(
        error_kind(&answer),
        (-32602, "input_response_invalid".into())
    );
    // Not an object, with no state to check against.
    let (_, answer) = gateway
        .call(json!({"name": "alpha/ask", "arguments": {"x": 1},
            "inputResponses": {"name": 12345}}))
        .await;
    assert_eq!(
        error_kind(&answer),
        (-32602, "input_response_invalid".into())
    );
    // Null inputResponses are no params of tools/call.
    let (_, answer) = gateway
        .call(json!({"name": "alpha/ask", "arguments": {"x": 1}, "inputResponses": null}))
        .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");

    // None of these reached a server: only the first round did.
    assert_eq!(recorder.with_method("tools/call").len(), 1);
    assert!(beta_recorder.with_method("tools/call").is_empty());
    gateway.stop().await;
}

#[tokio::test]
async fn the_hosts_capabilities_reach_the_server_and_its_32021_the_host() {
    let (alpha, recorder) = asking();
    let gateway = HttpGateway::unrestricted(vec![spec("alpha", alpha)]).await;
    let (status, answer) = gateway
        .send(
            "tools/call",
            json!({"name": "alpha/sample", "arguments": {}}),
            json!({"elicitation": {}, "experimental": {"x": {}}}),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
    assert!(
        answer["error"]["data"]["requiredCapabilities"]["sampling"].is_object(),
        "{answer}"
    );
    // What the server was told: the host's elicitation, nothing else.
    let calls = recorder.with_method("tools/call");
    let caps = &calls[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert_eq!(caps, &json!({"elicitation": {}}), "{caps}");

    // With sampling declared, the same call asks for it.
    let (status, answer) = gateway
        .send(
            "tools/call",
            json!({"name": "alpha/sample", "arguments": {}}),
            json!({"sampling": {}}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(result(&answer)["resultType"], "input_required", "{answer}");
    gateway.stop().await;
}

#[tokio::test]
async fn a_prompt_asks_through_the_gateway_too() {
    let (alpha, _) = asking();
    let gateway = HttpGateway::unrestricted(vec![spec("alpha", alpha)]).await;
    let (_, answer) = gateway
        .send("prompts/get", json!({"name": "alpha/p"}), all_caps())
        .await;
    let first = result(&answer);
    assert_eq!(first["resultType"], "input_required", "{first}");
    let state = first["requestState"].as_str().unwrap().to_owned();
    let (_, answer) = gateway
        .send(
            "prompts/get",
            json!({"name": "alpha/p", "requestState": state,
                "inputResponses": {"name": accept(json!({"name": "Cy"}))}}),
            all_caps(),
        )
        .await;
    let done = result(&answer);
    assert_eq!(done["resultType"], "complete", "{done}");
    assert!(done["messages"].is_array(), "{done}");
    // A prompt's state is no tool call's.
    let (_, answer) = gateway
        .call(
            json!({"name": "alpha/ask", "arguments": {}, "requestState": state,
            "inputResponses": {}}),
        )
        .await;
    assert_eq!(
        error_kind(&answer),
        (-32602, "request_state_foreign".into())
    );
    gateway.stop().await;
}

/// A legacy-era server whose tools ask the client by request: `sample`
/// (sampling) and `elicit` (a form).
fn legacy_asking() -> (std::sync::Arc<dyn mcp_transport::Connector>, Recorder) {
    memory(
        Script::legacy()
            .tool(
                "sample",
                Behavior::AskClient {
                    method: "sampling/createMessage".into(),
                    params: json!({"messages": [{"role": "user",
                        "content": {"type": "text", "text": "Say hi"}}], "maxTokens": 5}),
                },
            )
            .tool(
                "elicit",
                Behavior::AskClient {
                    method: "elicitation/create".into(),
                    params: json!({"mode": "form", "message": "Colour?", "requestedSchema":
                        {"type": "object", "properties": {"colour": {"type": "string"}}}}),
                },
            ),
    )
}

/// A legacy-era server whose `twice` asks the client for a name in two
/// requests, one after the other.
fn legacy_asking_twice() -> (std::sync::Arc<dyn mcp_transport::Connector>, Recorder) {
    let mut twice = InputSpec::one("name", name_form());
    twice.rounds = 2;
    memory(Script::legacy().tool("twice", Behavior::Ask(twice)))
}

fn sampled() -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": "hi there"},
           "model": "host-model"})
}

#[tokio::test]
async fn a_legacy_servers_request_reaches_a_2026_host_as_its_round_and_the_answer_the_server() {
    let (old, recorder) = legacy_asking();
    let gateway = HttpGateway::unrestricted(vec![spec("old", old)]).await;
    let first = first_round(&gateway, "old/sample").await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let requests = first["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{first}");
    let (key, asked) = requests.iter().next().unwrap();
    assert_eq!(asked["method"], "sampling/createMessage", "{first}");
    assert_eq!(asked["params"]["maxTokens"], 5);
    assert_eq!(asked["params"]["_meta"]["mcp-gateway/server"], "old");
    let state = first["requestState"].as_str().unwrap().to_owned();
    // The server's call is still the one it started: no second tools/call.
    assert_eq!(recorder.with_method("tools/call").len(), 1);

    let retry = json!({"name": "old/sample", "arguments": {"x": 1}, "requestState": state,
                       "inputResponses": {key.as_str(): sampled()}});
    let (status, answer) = gateway.call(retry.clone()).await;
    assert_eq!(status, 200, "{answer}");
    let done = result(&answer);
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_ne!(done["isError"], true, "{done}");
    assert!(done.to_string().contains("hi there"), "{done}");
    assert_eq!(recorder.with_method("tools/call").len(), 1);
    // The server got the host's answer to its own request.
    let answered = recorder
        .received()
        .iter()
        .any(|m| m.get("method").is_none() && m["result"]["model"] == "host-model");
    assert!(answered, "{:?}", recorder.received());

    // The seal unparks its call once: a replay finds nothing waiting.
    let (_, answer) = gateway.call(retry).await;
    assert_eq!(
        error_kind(&answer),
        (-32602, "waiting_call_gone".to_owned())
    );
    gateway.stop().await;
}

#[tokio::test]
async fn a_legacy_servers_request_the_2026_host_did_not_declare_is_refused_to_the_server() {
    let (old, recorder) = legacy_asking();
    let gateway = HttpGateway::unrestricted(vec![spec("old", old)]).await;
    // Elicitation only: the server's sampling request is refused to it,
    // and the call completes with the server's own account of that.
    let (status, answer) = gateway
        .send(
            "tools/call",
            json!({"name": "old/sample", "arguments": {}}),
            json!({"elicitation": {}}),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let done = result(&answer);
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(done["isError"], true, "{done}");
    assert!(done.to_string().contains("sampling"), "{done}");
    // The form it may ask: a round, answered with a decline.
    let first = first_round(&gateway, "old/elicit").await;
    let (key, asked) = first["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(asked["method"], "elicitation/create");
    let (_, answer) = gateway
        .call(json!({"name": "old/elicit", "arguments": {"x": 1},
                     "requestState": first["requestState"],
                     "inputResponses": {key.as_str(): {"action": "decline"}}}))
        .await;
    let done = result(&answer);
    assert_eq!(done["resultType"], "complete", "{done}");
    assert!(done.to_string().contains("decline"), "{done}");
    assert_eq!(recorder.with_method("tools/call").len(), 2);
    gateway.stop().await;
}

#[tokio::test]
async fn a_legacy_servers_second_request_reaches_the_2026_host_in_the_next_round() {
    let (old, recorder) = legacy_asking_twice();
    let gateway = HttpGateway::unrestricted(vec![spec("old", old)]).await;
    let mut round = first_round(&gateway, "old/twice").await;
    let mut names = ["Ann", "Bo"].into_iter();
    // Each request of the server is a round of the host's; every retry is
    // a new connection of the host's, and the call follows it.
    let done = loop {
        assert_eq!(round["resultType"], "input_required", "{round}");
        let (key, asked) = round["inputRequests"]
            .as_object()
            .unwrap()
            .iter()
            .next()
            .unwrap();
        assert_eq!(asked["method"], "elicitation/create", "{round}");
        let name = names.next().expect("two requests only");
        let (status, answer) = gateway
            .call(json!({"name": "old/twice", "arguments": {"x": 1},
                         "requestState": round["requestState"],
                         "inputResponses": {key.as_str(): accept(json!({"name": name}))}}))
            .await;
        assert_eq!(status, 200, "{answer}");
        round = result(&answer).clone();
        if round["resultType"] == "complete" {
            break round;
        }
    };
    assert!(names.next().is_none(), "both requests were asked");
    assert_ne!(done["isError"], true, "{done}");
    let text = done.to_string();
    assert!(text.contains("Ann") && text.contains("Bo"), "{text}");
    assert_eq!(recorder.with_method("tools/call").len(), 1);
    gateway.stop().await;
}

/// A legacy-era server, written by hand for its timing: its tool `pair`
/// asks the client to sample (`s1`); when `go` fires it asks again (`s2`)
/// while `s1` is still unanswered, then pings the client and reports the
/// pong on `ponged` (by then the gateway has taken `s2` in); the call's
/// result is both answers.
fn asking_while_parked(
    go: tokio::sync::mpsc::Receiver<()>,
    ponged: tokio::sync::mpsc::Sender<()>,
) -> std::sync::Arc<dyn mcp_transport::Connector> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let go = std::sync::Arc::new(tokio::sync::Mutex::new(Some(go)));
    std::sync::Arc::new(mcp_transport::MemoryConnector::new(move |end| {
        let go = std::sync::Arc::clone(&go);
        let ponged = ponged.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(end.input).lines();
            let mut out = end.output;
            let mut go = go.lock().await.take();
            let mut call = None;
            let mut answers = serde_json::Map::new();
            let sample = |id: &str| {
                json!({"jsonrpc": "2.0", "id": id, "method": "sampling/createMessage",
                       "params": {"messages": [], "maxTokens": 5}})
            };
            loop {
                let line = tokio::select! {
                    line = lines.next_line() => match line {
                        Ok(Some(line)) => line,
                        _ => return,
                    },
                    Some(()) = async { go.as_mut()?.recv().await } => {
                        go = None;
                        let asks = format!("{}\n{}\n", sample("s2"),
                            json!({"jsonrpc": "2.0", "id": "p3", "method": "ping"}));
                        out.write_all(asks.as_bytes()).await.unwrap();
                        continue;
                    }
                };
                let msg: Value = serde_json::from_str(&line).unwrap();
                let id = msg["id"].clone();
                let answer = match msg["method"].as_str() {
                    Some("initialize") => Some((
                        id,
                        json!({"protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}}, "serverInfo": {"name": "pair", "version": "1"}}),
                    )),
                    Some("tools/list") => Some((
                        id,
                        json!({"tools": [{"name": "pair",
                        "inputSchema": {"type": "object"}}]}),
                    )),
                    Some("tools/call") => {
                        call = Some(id);
                        out.write_all(format!("{}\n", sample("s1")).as_bytes())
                            .await
                            .unwrap();
                        None
                    }
                    Some(_) => None,
                    None if id == "p3" => {
                        ponged.send(()).await.unwrap();
                        None
                    }
                    None => {
                        let got = msg.get("result").or(msg.get("error")).cloned();
                        answers.insert(id.as_str().unwrap_or("?").to_owned(), got.into());
                        let text = Value::Object(answers.clone()).to_string();
                        (answers.len() == 2)
                            .then(|| call.take())
                            .flatten()
                            .map(|call| {
                                (call, json!({"content": [{"type": "text", "text": text}]}))
                            })
                    }
                };
                let Some((to, result)) = answer else { continue };
                let frame = json!({"jsonrpc": "2.0", "id": to, "result": result});
                out.write_all(format!("{frame}\n").as_bytes())
                    .await
                    .unwrap();
            }
        });
    }))
}

#[tokio::test]
async fn a_legacy_servers_request_made_while_the_call_is_parked_reaches_the_2026_host_next() {
    let (go, go_rx) = tokio::sync::mpsc::channel(1);
    let (ponged_tx, mut ponged) = tokio::sync::mpsc::channel(1);
    let server = asking_while_parked(go_rx, ponged_tx);
    let gateway = HttpGateway::unrestricted(vec![spec("lab", server)]).await;
    let first = first_round(&gateway, "lab/pair").await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    // The host's request has ended; the call waits parked. The server asks
    // again, and the gateway has taken that in once the server's ping is
    // answered.
    go.send(()).await.unwrap();
    ponged.recv().await.unwrap();
    let mut round = first;
    let mut asked = 0;
    let done = loop {
        assert_eq!(round["resultType"], "input_required", "{round}");
        let requests = round["inputRequests"].as_object().unwrap().clone();
        assert!(!requests.is_empty(), "{round}");
        let mut answers = serde_json::Map::new();
        for (key, request) in &requests {
            assert_eq!(request["method"], "sampling/createMessage", "{round}");
            asked += 1;
            answers.insert(key.clone(), sampled());
        }
        let (status, answer) = gateway
            .call(json!({"name": "lab/pair", "arguments": {"x": 1},
                         "requestState": round["requestState"], "inputResponses": answers}))
            .await;
        assert_eq!(status, 200, "{answer}");
        round = result(&answer).clone();
        if round["resultType"] == "complete" {
            break round;
        }
    };
    assert_eq!(asked, 2, "both of the server's requests reached the host");
    // The server got the host's answer to each, not a refusal.
    let text: Value = serde_json::from_str(done["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["s1"]["model"], "host-model", "{text}");
    assert_eq!(text["s2"]["model"], "host-model", "{text}");
    gateway.stop().await;
}
