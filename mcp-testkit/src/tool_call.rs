//! `tools/call`: one task per call, running the tool's [`Behavior`].

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::behavior::Behavior;
use crate::server::{GARBAGE_LINE, Shared};
use crate::wire;

/// Which era a request is served in; decides the result decoration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    Legacy,
    Modern,
}

/// The `inputRequests` key used by `ask_client` in the modern era.
const ASK_KEY: &str = "ask";

/// Decorates a finished result for its era: 2026-07-28 results carry
/// `resultType: "complete"` and the server's identity in `_meta`.
pub(crate) fn complete(shared: &Shared, era: Era, body: Value) -> Value {
    decorate(shared, era, body, "complete")
}

fn decorate(shared: &Shared, era: Era, mut body: Value, result_type: &str) -> Value {
    if era == Era::Modern
        && let Value::Object(map) = &mut body
    {
        map.insert("resultType".into(), result_type.into());
        let meta = map
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(
                wire::META_SERVER_INFO.into(),
                shared.script.server_info.clone(),
            );
        }
    }
    body
}

/// Starts a `tools/call`: refusals are answered at once, the call itself
/// runs on its own task (or, for `hang`, is only remembered).
pub(crate) async fn start(shared: &Arc<Shared>, id: &Value, era: Era, params: Value) {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        let reply = wire::error(
            id,
            wire::INVALID_PARAMS,
            "Invalid params: tools/call needs a string name",
            None,
        );
        return shared.send(&reply).await;
    };
    let Some(tool) = shared.script.find_tool(name) else {
        let message = format!("Unknown tool: {name}");
        return shared
            .send(&wire::error(id, wire::INVALID_PARAMS, &message, None))
            .await;
    };
    let behavior = tool.behavior.clone();
    let started = if behavior == Behavior::Hang {
        shared.hang(id)
    } else {
        let call = Call {
            shared: Arc::clone(shared),
            id: id.clone(),
            era,
            params,
        };
        shared.spawn_call(id, call.run(behavior))
    };
    if started.is_err() {
        let message = format!(
            "Internal error: more than {} calls in flight",
            shared.script.max_in_flight
        );
        shared
            .send(&wire::error(id, wire::INTERNAL_ERROR, &message, None))
            .await;
    }
}

/// One running `tools/call`.
struct Call {
    shared: Arc<Shared>,
    id: Value,
    era: Era,
    params: Value,
}

impl Call {
    fn arguments(&self) -> &Map<String, Value> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        self.params
            .get("arguments")
            .and_then(Value::as_object)
            .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
    }

    fn meta(&self) -> Option<&Map<String, Value>> {
        wire::request_meta(&self.params)
    }

    async fn reply(&self, body: Value) {
        let body = complete(&self.shared, self.era, body);
        self.shared.send(&wire::result(&self.id, body)).await;
    }

    async fn reply_error(&self, code: i64, message: &str, data: Option<Value>) {
        self.shared
            .send(&wire::error(&self.id, code, message, data))
            .await;
    }

    async fn invalid_params(&self, message: &str) {
        self.reply_error(wire::INVALID_PARAMS, message, None).await;
    }

    async fn run(self, behavior: Behavior) {
        match behavior {
            Behavior::Echo => match self.arguments().get("text").and_then(Value::as_str) {
                Some(text) => self.reply(wire::text_result(text)).await,
                None => {
                    self.invalid_params("Invalid params: echo needs a string \"text\"")
                        .await
                }
            },
            Behavior::Add => self.add().await,
            Behavior::Sleep { ms, progress_steps } => self.sleep(ms, progress_steps).await,
            // `start` never spawns a hanging call; waiting forever is still right.
            Behavior::Hang => std::future::pending().await,
            Behavior::Crash { code } => {
                self.shared.exit(code).await;
                // `serve` ends and aborts this task; never answer.
                std::future::pending::<()>().await;
            }
            Behavior::Garbage => {
                self.shared
                    .send_line(GARBAGE_LINE.as_bytes().to_vec())
                    .await;
                self.reply(wire::text_result("ok")).await;
            }
            Behavior::Oversized { bytes } => self.oversized(bytes).await,
            Behavior::Error {
                code,
                message,
                data,
            } => self.reply_error(code, &message, data).await,
            Behavior::ToolError { text } => {
                self.reply(json!({"content": [wire::text_block(text)], "isError": true}))
                    .await;
            }
            Behavior::Structured { value } => {
                let text = value.to_string();
                self.reply(
                    json!({"content": [wire::text_block(text)], "structuredContent": value}),
                )
                .await;
            }
            Behavior::Notify => self.notify().await,
            Behavior::AskClient { method, params } => match self.era {
                Era::Legacy => self.ask_legacy(&method, &params).await,
                Era::Modern => self.ask_modern(&method, &params).await,
            },
            Behavior::WrongId => {
                let wrong = match &self.id {
                    Value::Number(n) => json!(n.as_i64().map_or(-1, |n| -n - 1)),
                    other => json!(format!("{}#wrong", other.as_str().unwrap_or_default())),
                };
                let body = complete(&self.shared, self.era, wire::text_result("wrong id"));
                self.shared.send(&wire::result(&wrong, body)).await;
                self.reply(wire::text_result("ok")).await;
            }
            Behavior::Blob { kb } => {
                let len = usize::try_from(kb.saturating_mul(1024)).unwrap_or(usize::MAX);
                let text: String = "0123456789abcdef".chars().cycle().take(len).collect();
                self.reply(wire::text_result(text)).await;
            }
            Behavior::Text { text } => {
                let mut out = text;
                for (name, value) in self.arguments() {
                    let value = value
                        .as_str()
                        .map_or_else(|| value.to_string(), str::to_owned);
                    out = out.replace(&format!("{{{name}}}"), &value);
                }
                self.reply(wire::text_result(out)).await;
            }
            Behavior::Search { items } => self.search(&items).await,
            Behavior::Lookup { key, entries } => self.lookup(&key, &entries).await,
        }
    }

    async fn add(&self) {
        let args = self.arguments();
        let (Some(a), Some(b)) = (args.get("a"), args.get("b")) else {
            return self
                .invalid_params("Invalid params: add needs numbers \"a\" and \"b\"")
                .await;
        };
        let sum = match (a.as_i64(), b.as_i64()) {
            (Some(a), Some(b)) if a.checked_add(b).is_some() => json!(a + b),
            _ => match (a.as_f64(), b.as_f64()) {
                (Some(a), Some(b)) => json!(a + b),
                _ => {
                    return self
                        .invalid_params("Invalid params: add needs numbers \"a\" and \"b\"")
                        .await;
                }
            },
        };
        self.reply(json!({
            "content": [wire::text_block(sum.to_string())],
            "structuredContent": {"sum": sum},
        }))
        .await;
    }

    async fn sleep(&self, ms: u64, steps: u32) {
        let token = self.meta().and_then(|m| m.get("progressToken")).cloned();
        match token {
            Some(token) if steps > 0 => {
                let interval = ms / u64::from(steps);
                for step in 1..=steps {
                    tokio::time::sleep(Duration::from_millis(interval)).await;
                    let params = json!({
                        "progressToken": token,
                        "progress": step,
                        "total": steps,
                        "message": format!("step {step} of {steps}"),
                    });
                    self.shared
                        .send(&wire::notification("notifications/progress", params))
                        .await;
                }
                let rest = ms - interval * u64::from(steps);
                tokio::time::sleep(Duration::from_millis(rest)).await;
            }
            _ => tokio::time::sleep(Duration::from_millis(ms)).await,
        }
        self.reply(wire::text_result(format!("slept {ms} ms")))
            .await;
    }

    async fn oversized(&self, bytes: u64) {
        let mut frame = wire::result(
            &self.id,
            complete(&self.shared, self.era, wire::text_result("")),
        );
        let base = frame.to_string().len() as u64;
        let pad = usize::try_from(bytes.saturating_sub(base)).unwrap_or(usize::MAX);
        if let Some(text) = frame.pointer_mut("/result/content/0/text") {
            // `x` needs no escaping, so the line grows by exactly `pad` bytes.
            *text = Value::String("x".repeat(pad));
        }
        self.shared.send(&frame).await;
    }

    async fn notify(&self) {
        let log_level_requested = self
            .meta()
            .is_some_and(|m| m.contains_key(wire::META_LOG_LEVEL));
        if self.era == Era::Legacy || log_level_requested {
            let params =
                json!({"level": "info", "logger": "mcp-testkit", "data": "notify tool called"});
            self.shared
                .send(&wire::notification("notifications/message", params))
                .await;
        }
        if self.era == Era::Legacy {
            self.shared
                .send(&wire::notification(
                    "notifications/tools/list_changed",
                    json!({}),
                ))
                .await;
        }
        self.reply(wire::text_result("notified")).await;
    }

    async fn ask_legacy(&self, method: &str, params: &Value) {
        let n = self
            .shared
            .next_server_request
            .fetch_add(1, Ordering::Relaxed);
        let request_id = json!(format!("mcp-testkit-{n}"));
        let mut wait = self.shared.expect_response(&request_id);
        self.shared
            .send(&wire::request(&request_id, method, params))
            .await;
        let timeout = Duration::from_millis(self.shared.script.ask_timeout_ms);
        match tokio::time::timeout(timeout, &mut wait.rx).await {
            Ok(Ok(response)) => {
                match response.get("result") {
                    Some(result) => self.reply(wire::text_result(result.to_string())).await,
                    None => {
                        let error = json!({"error": response.get("error")});
                        self.reply(json!({"content": [wire::text_block(error.to_string())], "isError": true}))
                        .await;
                    }
                }
            }
            _ => {
                let text = format!(
                    "mcp-testkit: the client did not answer {method} within {} ms",
                    timeout.as_millis()
                );
                self.reply(json!({"content": [wire::text_block(text)], "isError": true}))
                    .await;
            }
        }
    }

    /// Multi round-trip request: ask via `input_required`, answer the retry.
    async fn ask_modern(&self, method: &str, params: &Value) {
        let tool = self
            .params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let state = format!("mcp-testkit:ask:{tool}");
        let given_state = self.params.get("requestState").and_then(Value::as_str);
        let response = self.params.pointer(&format!("/inputResponses/{ASK_KEY}"));
        match (given_state, response) {
            (Some(given), _) if given != state => {
                return self
                    .invalid_params("Invalid params: requestState was not issued by this server")
                    .await;
            }
            (Some(_), Some(response)) => {
                return self.reply(wire::text_result(response.to_string())).await;
            }
            _ => {}
        }
        if let Some(capability) = capability_needed(method) {
            let declared = self
                .meta()
                .and_then(|m| m.get(wire::META_CLIENT_CAPABILITIES))
                .is_some_and(|caps| caps.get(capability).is_some());
            if !declared {
                let message = format!("Missing required client capability: {capability}");
                let data = json!({"requiredCapabilities": {capability: {}}});
                return self
                    .reply_error(wire::MISSING_CLIENT_CAPABILITY, &message, Some(data))
                    .await;
            }
        }
        let mut input_request = json!({"method": method});
        if !params.is_null() {
            input_request["params"] = params.clone();
        }
        let body = json!({"inputRequests": {ASK_KEY: input_request}, "requestState": state});
        let body = decorate(&self.shared, self.era, body, "input_required");
        self.shared.send(&wire::result(&self.id, body)).await;
    }

    async fn search(&self, items: &[Value]) {
        let Some(query) = self.arguments().get("query").and_then(Value::as_str) else {
            return self
                .invalid_params("Invalid params: search needs a string \"query\"")
                .await;
        };
        let limit = self
            .arguments()
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let needle = query.to_lowercase();
        let hits: Vec<&Value> = items
            .iter()
            .filter(|item| {
                item.as_object().is_some_and(|fields| {
                    fields
                        .values()
                        .filter_map(Value::as_str)
                        .any(|s| s.to_lowercase().contains(&needle))
                })
            })
            .take(limit)
            .collect();
        let content: Vec<Value> = if hits.is_empty() {
            vec![wire::text_block(format!("No results for \"{query}\"."))]
        } else {
            hits.iter()
                .map(|item| wire::text_block(summary(item)))
                .collect()
        };
        self.reply(json!({"content": content, "structuredContent": {"results": hits}}))
            .await;
    }

    async fn lookup(&self, key: &str, entries: &Map<String, Value>) {
        let Some(wanted) = self.arguments().get(key).and_then(Value::as_str) else {
            let message = format!("Invalid params: needs a string \"{key}\"");
            return self.invalid_params(&message).await;
        };
        match entries.get(wanted) {
            Some(Value::String(text)) => self.reply(wire::text_result(text.clone())).await,
            Some(other) => self.reply(wire::text_result(other.to_string())).await,
            None => {
                let text = format!("Not found: {key} \"{wanted}\"");
                self.reply(json!({"content": [wire::text_block(text)], "isError": true}))
                    .await;
            }
        }
    }
}

/// The client capability a server→client method needs.
fn capability_needed(method: &str) -> Option<&'static str> {
    match method {
        "sampling/createMessage" => Some("sampling"),
        "elicitation/create" => Some("elicitation"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// One line for a search hit: its title-like field, then its text-like field.
fn summary(item: &Value) -> String {
    let field = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| item.get(*n).and_then(Value::as_str))
    };
    match (
        field(&["title", "name", "path", "id"]),
        field(&["snippet", "text", "body", "summary", "state"]),
    ) {
        (Some(title), Some(text)) => format!("{title}: {text}"),
        (Some(title), None) => title.to_owned(),
        _ => item.to_string(),
    }
}
