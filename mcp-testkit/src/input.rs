//! Asking the client for input ([`InputSpec`]) in each era: server→client
//! requests (legacy), `input_required` rounds with a `requestState`
//! (2026-07-28), or a task waiting in `input_required` (tasks extension).

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::request::{Ctx, Era, declared_capabilities, decorate};
use crate::specs::{InputRequest, InputSpec};
use crate::{tasks, wire};

/// What the client answered: one object per round, keyed like the requests.
pub(crate) type Rounds = Vec<Map<String, Value>>;

/// Everything the client answered, and whether any answer was an error or missing.
pub(crate) struct Answers {
    pub(crate) rounds: Rounds,
    pub(crate) failed: bool,
}

/// What one modern step did.
pub(crate) enum Step {
    /// Every round is answered.
    Done(Answers),
    /// An `input_required` result or an error went out; nothing more to do.
    Answered,
}

/// Runs `spec` for the request in `ctx` as its era (and sink) requires.
/// `target` names the request for the `requestState` (method and name/uri).
pub(crate) async fn gather(ctx: &Ctx, spec: &InputSpec, target: &str) -> Step {
    match (ctx.era, ctx.task_id()) {
        (Era::Legacy, _) => Step::Done(ask_legacy(ctx, spec).await),
        (Era::Modern, Some(task_id)) => Step::Done(ask_in_task(ctx, spec, task_id).await),
        (Era::Modern, None) => step_modern(ctx, spec, target).await,
    }
}

/// Legacy: each round, each request as a server→client JSON-RPC request.
async fn ask_legacy(ctx: &Ctx, spec: &InputSpec) -> Answers {
    let mut answers = Answers {
        rounds: Vec::new(),
        failed: false,
    };
    for _ in 0..spec.rounds {
        let mut got = Map::new();
        for (key, request) in &spec.requests {
            let answer = ask_one(ctx, request).await;
            let accepted =
                matches!(&answer, Ok(result) if result.get("action") == Some(&json!("accept")));
            if spec.elicitation_complete && accepted {
                send_elicitation_complete(ctx, request).await;
            }
            let value = answer.unwrap_or_else(|failure| {
                answers.failed = true;
                failure
            });
            got.insert(key.clone(), value);
        }
        answers.rounds.push(got);
    }
    answers
}

/// Sends one server→client request and waits for its answer: `Ok(result)`,
/// or `Err({"error": …})` / `Err({"timeout": true})`. In a task, the task is
/// `input_required` meanwhile and the request carries `related-task`.
pub(crate) async fn ask_one(ctx: &Ctx, request: &InputRequest) -> Result<Value, Value> {
    let shared = &ctx.shared;
    let n = shared.next_server_request.fetch_add(1, Ordering::Relaxed);
    let request_id = json!(format!("mcp-testkit-{n}"));
    let mut params = request.params.clone();
    if let Some(task_id) = ctx.task_id() {
        if params.is_null() {
            params = json!({});
        }
        if let Value::Object(map) = &mut params {
            let meta = map.entry("_meta").or_insert_with(|| json!({}));
            meta[wire::META_RELATED_TASK] = json!({"taskId": task_id});
        }
        tasks::set_input_required(shared, task_id, None).await;
    }
    let mut wait = shared.expect_response(&request_id);
    shared
        .send(&wire::request(&request_id, &request.method, &params))
        .await;
    let timeout = Duration::from_millis(shared.script.ask_timeout_ms);
    let answer = match tokio::time::timeout(timeout, &mut wait.rx).await {
        Ok(Ok(response)) => match response.get("result") {
            Some(result) => Ok(result.clone()),
            None => Err(json!({"error": response.get("error")})),
        },
        Ok(Err(_)) => Err(json!({"timeout": true})),
        Err(_) => {
            // Given up: the client is told, as the spec asks of a sender
            // whose request timed out.
            let cancel = wire::notification(
                "notifications/cancelled",
                json!({"requestId": request_id, "reason": "timed out"}),
            );
            shared.send(&cancel).await;
            Err(json!({"timeout": true}))
        }
    };
    drop(wait);
    if let Some(task_id) = ctx.task_id() {
        tasks::set_working(shared, task_id).await;
    }
    answer
}

async fn send_elicitation_complete(ctx: &Ctx, request: &InputRequest) {
    let is_url = request.method == "elicitation/create"
        && request.params.get("mode").and_then(Value::as_str) == Some("url");
    if let (true, Some(id)) = (is_url, request.params.get("elicitationId")) {
        let note = wire::notification(
            "notifications/elicitation/complete",
            json!({"elicitationId": id}),
        );
        ctx.shared.send(&note).await;
    }
}

/// The keys a task round uses: as scripted in the first round, then
/// suffixed `#<round>` (task keys must not repeat over the task's life).
fn task_key(key: &str, round: u32) -> String {
    if round == 0 {
        key.to_owned()
    } else {
        format!("{key}#{}", round + 1)
    }
}

/// 2026-07-28 task: each round waits in `input_required` for `tasks/update`.
async fn ask_in_task(ctx: &Ctx, spec: &InputSpec, task_id: &str) -> Answers {
    let mut rounds = Vec::new();
    for round in 0..spec.rounds {
        let keyed: Vec<(String, &String)> = spec
            .requests
            .keys()
            .map(|k| (task_key(k, round), k))
            .collect();
        let requests: Map<String, Value> = keyed
            .iter()
            .map(|(task_key, key)| (task_key.clone(), spec.requests[*key].to_json()))
            .collect();
        let Some(updates) = tasks::input_receiver(&ctx.shared, task_id) else {
            break;
        };
        tasks::set_input_required(&ctx.shared, task_id, Some(requests)).await;
        let mut got = Map::new();
        let mut updates = updates.lock().await;
        while got.len() < keyed.len() {
            // The sender lives in the task table; `None` means the task is gone.
            let Some(update) = updates.recv().await else {
                return Answers {
                    rounds,
                    failed: true,
                };
            };
            for (task_key, key) in &keyed {
                if let Some(answer) = update.get(task_key) {
                    got.insert((*key).clone(), answer.clone());
                }
            }
            if got.len() < keyed.len() {
                // Partly answered: only what is still pending is shown.
                let pending: Map<String, Value> = keyed
                    .iter()
                    .filter(|(_, key)| !got.contains_key(*key))
                    .map(|(task_key, key)| (task_key.clone(), spec.requests[*key].to_json()))
                    .collect();
                tasks::set_input_required(&ctx.shared, task_id, Some(pending)).await;
            }
        }
        drop(updates);
        tasks::set_working(&ctx.shared, task_id).await;
        rounds.push(got);
    }
    Answers {
        rounds,
        failed: false,
    }
}

/// 2026-07-28 without a task: one step of the multi round-trip request.
pub(crate) async fn step_modern(ctx: &Ctx, spec: &InputSpec, target: &str) -> Step {
    let given_state = ctx.params.get("requestState");
    let responses = ctx.params.get("inputResponses");
    let caps = declared_capabilities(&ctx.params);
    // The requests this call asks: all, or (declared_only) those the client can answer.
    let asked: Vec<(&String, &InputRequest)> = spec
        .requests
        .iter()
        .filter(|(_, request)| !spec.declared_only || missing_capability(caps, request).is_none())
        .collect();
    let (mut round, mut got) = match given_state {
        None if responses.is_some() && spec.state_optional && spec.rounds == 1 => {
            let Some(answers) = responses.and_then(Value::as_object) else {
                let message = "Invalid params: inputResponses must be an object";
                ctx.invalid_params(message).await;
                return Step::Answered;
            };
            if asked
                .iter()
                .any(|(key, _)| answers.get(*key).is_some_and(|a| !a.is_object()))
            {
                let message = "Invalid params: every input response must be an object";
                ctx.invalid_params(message).await;
                return Step::Answered;
            }
            (0, Vec::new())
        }
        None if responses.is_some() => {
            let message = "Invalid params: inputResponses without the requestState it answers";
            ctx.invalid_params(message).await;
            return Step::Answered;
        }
        None => (0, Vec::new()),
        Some(state) => match state.as_str().and_then(|s| decode_state(s, target)) {
            Some(decoded) => decoded,
            None => {
                let message =
                    "Invalid params: requestState was not issued by this server for this request";
                ctx.invalid_params(message).await;
                return Step::Answered;
            }
        },
    };
    if responses.is_some() && (given_state.is_some() || spec.state_optional) {
        let answered = responses.and_then(Value::as_object).and_then(|answers| {
            asked
                .iter()
                .map(|(key, _)| answers.get(*key).map(|a| ((*key).clone(), a.clone())))
                .collect::<Option<Map<String, Value>>>()
        });
        // A retry missing an answer gets the same round again (the spec's advice).
        if let Some(answered) = answered {
            got.push(answered);
            round += 1;
        }
    }
    if round >= spec.rounds {
        return Step::Done(Answers {
            rounds: got,
            failed: false,
        });
    }
    let refused = if spec.declared_only {
        asked
            .is_empty()
            .then(|| spec.requests.values().next())
            .flatten()
    } else {
        spec.requests
            .values()
            .find(|request| missing_capability(caps, request).is_some())
    };
    if let Some(request) = refused {
        let required = missing_capability(caps, request).unwrap_or_else(|| json!({}));
        let message = format!("Missing required client capability for {}", request.method);
        let data = json!({"requiredCapabilities": required});
        ctx.reply_error(wire::MISSING_CLIENT_CAPABILITY, &message, Some(data))
            .await;
        return Step::Answered;
    }
    let requests: Map<String, Value> = asked
        .iter()
        .map(|(key, request)| ((*key).clone(), request.to_json()))
        .collect();
    let body =
        json!({"inputRequests": requests, "requestState": encode_state(target, round, &got)});
    ctx.send_result(decorate(&ctx.shared, ctx.era, body, "input_required"))
        .await;
    Step::Answered
}

/// The capability (as a `requiredCapabilities` object) `request` needs and
/// `caps` lacks, if any. An empty `elicitation` object means form mode only.
pub(crate) fn missing_capability(
    caps: Option<&Map<String, Value>>,
    request: &InputRequest,
) -> Option<Value> {
    let declared = |name: &str| caps.and_then(|c| c.get(name));
    match request.method.as_str() {
        "sampling/createMessage" if declared("sampling").is_none() => Some(json!({"sampling": {}})),
        "roots/list" if declared("roots").is_none() => Some(json!({"roots": {}})),
        "elicitation/create" => {
            let mode = request
                .params
                .get("mode")
                .and_then(Value::as_str)
                .unwrap_or("form");
            match declared("elicitation").and_then(Value::as_object) {
                // Form is what an empty `elicitation` object means, so the
                // plain capability names it.
                None if mode == "form" => Some(json!({"elicitation": {}})),
                None => Some(json!({"elicitation": {mode: {}}})),
                Some(modes) if mode == "url" && !modes.contains_key("url") => {
                    Some(json!({"elicitation": {"url": {}}}))
                }
                Some(modes)
                    if mode != "url" && !modes.is_empty() && !modes.contains_key("form") =>
                {
                    Some(json!({"elicitation": {"form": {}}}))
                }
                Some(_) => None,
            }
        }
        _ => None,
    }
}

/// Salt of the `requestState` digest; a new version invalidates old states.
const STATE_SALT: &str = "mcp-testkit requestState v1";

/// `requestState`: the JSON payload, `~`, and a digest of it. Tampering
/// with the payload breaks the digest. `DefaultHasher::new()` has fixed keys,
/// so every server instance of one build accepts the states of the others.
fn encode_state(target: &str, round: u32, got: &Rounds) -> String {
    let payload = json!({"target": target, "round": round, "got": got}).to_string();
    format!("{payload}~{:016x}", digest(&payload))
}

fn decode_state(state: &str, target: &str) -> Option<(u32, Rounds)> {
    let (payload, hex) = state.rsplit_once('~')?;
    if u64::from_str_radix(hex, 16).ok()? != digest(payload) {
        return None;
    }
    let value: Value = serde_json::from_str(payload).ok()?;
    if value.get("target")?.as_str()? != target {
        return None;
    }
    let round = u32::try_from(value.get("round")?.as_u64()?).ok()?;
    let got = serde_json::from_value(value.get("got")?.clone()).ok()?;
    Some((round, got))
}

fn digest(payload: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    STATE_SALT.hash(&mut hasher);
    payload.hash(&mut hasher);
    hasher.finish()
}

/// The answers as reported in results: `{"rounds": [...]}`.
pub(crate) fn report(answers: &Answers) -> Value {
    json!({"rounds": answers.rounds})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_state_round_trips_and_detects_tampering() {
        let mut got = Map::new();
        got.insert("a".into(), json!({"action": "accept"}));
        let state = encode_state("tools/call:x", 1, &vec![got.clone()]);
        assert_eq!(decode_state(&state, "tools/call:x"), Some((1, vec![got])));
        assert_eq!(decode_state(&state, "tools/call:y"), None);
        let tampered = state.replacen("\"round\":1", "\"round\":2", 1);
        assert_ne!(tampered, state);
        assert_eq!(decode_state(&tampered, "tools/call:x"), None);
        assert_eq!(decode_state("forged", "tools/call:x"), None);
    }

    #[test]
    fn elicitation_modes_need_their_capability() {
        let form = InputRequest::elicit_form("?", json!({"type": "object", "properties": {}}));
        let url = InputRequest::elicit_url("go", "https://x.test", "e1");
        let caps = |v: Value| v.as_object().cloned();
        assert_eq!(
            missing_capability(caps(json!({"elicitation": {}})).as_ref(), &form),
            None
        );
        assert_eq!(
            missing_capability(caps(json!({"elicitation": {}})).as_ref(), &url),
            Some(json!({"elicitation": {"url": {}}}))
        );
        assert_eq!(
            missing_capability(caps(json!({"elicitation": {"url": {}}})).as_ref(), &form),
            Some(json!({"elicitation": {"form": {}}}))
        );
        assert_eq!(
            missing_capability(None, &InputRequest::roots()),
            Some(json!({"roots": {}}))
        );
    }
}
