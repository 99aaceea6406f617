//! One request being served: its era, params, and where its answer goes
//! (the wire, or the task it runs as).

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value, json};

use crate::server::Shared;
use crate::wire;

/// Which era a request is served in; decides the result decoration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    Legacy,
    Modern,
}

/// Decorates a finished result for its era: 2026-07-28 results carry
/// `resultType: "complete"` and the server's identity in `_meta`.
pub(crate) fn complete(shared: &Shared, era: Era, body: Value) -> Value {
    decorate(shared, era, body, "complete")
}

/// Like [`complete`], plus the 2026-07-28 cache hints (`ttlMs`, `cacheScope`).
pub(crate) fn cacheable(shared: &Shared, era: Era, mut body: Value) -> Value {
    if era == Era::Modern
        && let Value::Object(map) = &mut body
    {
        map.insert("ttlMs".into(), shared.script.ttl_ms.into());
        map.insert(
            "cacheScope".into(),
            shared.script.cache_scope.as_str().into(),
        );
    }
    complete(shared, era, body)
}

/// Adds `resultType` and `_meta` server identity in the modern era.
pub(crate) fn decorate(shared: &Shared, era: Era, mut body: Value, result_type: &str) -> Value {
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

/// Where a request's final answer goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sink {
    /// A JSON-RPC response with the request's id.
    Wire,
    /// The outcome of the task with this id (the request was answered with
    /// a `CreateTaskResult` already).
    Task(String),
}

/// A request in progress.
pub(crate) struct Ctx {
    pub(crate) shared: Arc<Shared>,
    pub(crate) id: Value,
    pub(crate) era: Era,
    pub(crate) params: Value,
    pub(crate) sink: Sink,
}

impl Ctx {
    pub(crate) fn new(shared: &Arc<Shared>, id: &Value, era: Era, params: Value) -> Self {
        Self {
            shared: Arc::clone(shared),
            id: id.clone(),
            era,
            params,
            sink: Sink::Wire,
        }
    }

    /// `params.arguments` (empty if absent or not an object).
    pub(crate) fn arguments(&self) -> &Map<String, Value> {
        static EMPTY: OnceLock<Map<String, Value>> = OnceLock::new();
        self.params
            .get("arguments")
            .and_then(Value::as_object)
            .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
    }

    /// `params._meta`.
    pub(crate) fn meta(&self) -> Option<&Map<String, Value>> {
        wire::request_meta(&self.params)
    }

    /// The task this request runs as, if any.
    pub(crate) fn task_id(&self) -> Option<&str> {
        match &self.sink {
            Sink::Task(id) => Some(id),
            Sink::Wire => None,
        }
    }

    /// Sends the final result (decorated for the era), or finishes the task with it.
    pub(crate) async fn reply(&self, body: Value) {
        match &self.sink {
            Sink::Wire => {
                let body = complete(&self.shared, self.era, body);
                self.shared.send(&wire::result(&self.id, body)).await;
            }
            Sink::Task(task_id) => {
                crate::tasks::finish(&self.shared, task_id, Ok(body)).await;
            }
        }
    }

    /// Sends a JSON-RPC error, or fails the task with it.
    pub(crate) async fn reply_error(&self, code: i64, message: &str, data: Option<Value>) {
        let frame = wire::error(&self.id, code, message, data);
        match &self.sink {
            Sink::Wire => self.shared.send(&frame).await,
            Sink::Task(task_id) => {
                let error = frame.get("error").cloned().unwrap_or_else(|| json!({}));
                crate::tasks::finish(&self.shared, task_id, Err(error)).await;
            }
        }
    }

    pub(crate) async fn invalid_params(&self, message: &str) {
        self.reply_error(wire::INVALID_PARAMS, message, None).await;
    }

    /// Sends `body` (already decorated) as the response, whatever the sink.
    pub(crate) async fn send_result(&self, body: Value) {
        self.shared.send(&wire::result(&self.id, body)).await;
    }
}

/// The client capabilities a 2026-07-28 request declared in its `_meta`.
pub(crate) fn declared_capabilities(params: &Value) -> Option<&Map<String, Value>> {
    wire::request_meta(params)
        .and_then(|m| m.get(wire::META_CLIENT_CAPABILITIES))
        .and_then(Value::as_object)
}

/// Whether a 2026-07-28 request declared the tasks extension.
pub(crate) fn declares_tasks_extension(params: &Value) -> bool {
    declared_capabilities(params)
        .and_then(|caps| caps.get("extensions"))
        .and_then(|ext| ext.get(wire::TASKS_EXTENSION))
        .is_some()
}

/// The error data naming the tasks extension as a missing capability.
pub(crate) fn tasks_extension_required() -> Value {
    json!({"requiredCapabilities": {"extensions": {wire::TASKS_EXTENSION: {}}}})
}
