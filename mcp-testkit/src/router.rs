//! Classifies each received frame and answers it per era.
//!
//! Era selection, per request:
//!
//! - a legacy-only script answers `server/discover` per its `on_probe`;
//! - a script with the modern version serves a request in the modern era
//!   when it carries `_meta["io.modelcontextprotocol/protocolVersion"]`, is
//!   `server/discover`, or the script has no legacy version;
//! - everything else goes through the legacy handshake.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::behavior::{OnProbe, PreInit};
use crate::request::{Era, cacheable, declares_tasks_extension, tasks_extension_required};
use crate::server::{Lifecycle, SCRIPTED_EXIT_CODE, Shared};
use crate::state::log_rank;
use crate::{listen, lists, prompts, resources, tasks, tool_call, wire};

/// Acts on one frame; `Some(code)` ends `serve` with that code.
pub(crate) async fn handle_frame(shared: &Arc<Shared>, frame: Value) -> Option<i32> {
    let Value::Object(obj) = frame else {
        // Batches (2025-03-26 only) and scalars are not served.
        let reply = wire::error(
            &Value::Null,
            wire::INVALID_REQUEST,
            "Invalid Request: expected one JSON-RPC object per line",
            None,
        );
        shared.send(&reply).await;
        return None;
    };
    let method = obj.get("method").and_then(Value::as_str);
    let id = obj.get("id").filter(|id| is_valid_id(id));
    let params = obj.get("params").cloned().unwrap_or(Value::Null);
    match (method, id) {
        (Some(method), Some(id)) => handle_request(shared, id, method, params).await,
        (Some(method), None) if !obj.contains_key("id") => {
            handle_notification(shared, method, &params);
            None
        }
        (None, Some(id)) if obj.contains_key("result") || obj.contains_key("error") => {
            shared.deliver_response(id, Value::Object(obj.clone()));
            None
        }
        _ => {
            let id = id.cloned().unwrap_or(Value::Null);
            let reply = wire::error(
                &id,
                wire::INVALID_REQUEST,
                "Invalid Request: not a request, notification or response",
                None,
            );
            shared.send(&reply).await;
            None
        }
    }
}

fn is_valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

fn handle_notification(shared: &Shared, method: &str, params: &Value) {
    match method {
        "notifications/initialized" => {
            let mut lifecycle = shared.lifecycle();
            if let Lifecycle::AwaitingInitialized(version) = &*lifecycle {
                *lifecycle = Lifecycle::Operating(version.clone());
            }
        }
        "notifications/cancelled" => {
            if let Some(id) = params.get("requestId") {
                shared.cancel(id);
            }
        }
        // Everything else is only recorded.
        _ => {}
    }
}

async fn handle_request(
    shared: &Arc<Shared>,
    id: &Value,
    method: &str,
    params: Value,
) -> Option<i32> {
    let script = &shared.script;
    if method == "server/discover" && !script.has_modern() {
        return on_probe(shared, id, &params).await;
    }
    let carries_version =
        wire::request_meta(&params).is_some_and(|m| m.contains_key(wire::META_PROTOCOL_VERSION));
    if script.has_modern()
        && (carries_version || method == "server/discover" || !script.has_legacy())
    {
        modern_request(shared, id, method, params).await;
        None
    } else {
        legacy_request(shared, id, method, params).await
    }
}

async fn on_probe(shared: &Shared, id: &Value, params: &Value) -> Option<i32> {
    let reply = match &shared.script.on_probe {
        OnProbe::MethodNotFound => {
            wire::error(id, wire::METHOD_NOT_FOUND, "Method not found", None)
        }
        OnProbe::Silence => return None,
        OnProbe::Exit { code } => return Some(*code),
        OnProbe::InvalidRequest => {
            wire::error(&Value::Null, wire::INVALID_REQUEST, "Invalid Request", None)
        }
        OnProbe::Error { code } => wire::error(id, *code, "Refused", None),
        OnProbe::UnsupportedVersion { versions } => {
            let requested = wire::request_meta(params)
                .and_then(|m| m.get(wire::META_PROTOCOL_VERSION))
                .cloned()
                .unwrap_or(Value::Null);
            wire::error(
                id,
                wire::UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                Some(json!({"supported": versions, "requested": requested})),
            )
        }
    };
    shared.send(&reply).await;
    None
}

async fn modern_request(shared: &Arc<Shared>, id: &Value, method: &str, params: Value) {
    let script = &shared.script;
    let meta = wire::request_meta(&params);
    let version = meta
        .and_then(|m| m.get(wire::META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let has_caps = meta
        .and_then(|m| m.get(wire::META_CLIENT_CAPABILITIES))
        .is_some_and(Value::is_object);
    let mut missing = Vec::new();
    if version.is_none() {
        missing.push(wire::META_PROTOCOL_VERSION);
    }
    if !has_caps {
        missing.push(wire::META_CLIENT_CAPABILITIES);
    }
    if !missing.is_empty() {
        // The spec makes a request without its required `_meta` fields
        // malformed (-32602); naming the supported versions helps a legacy
        // client that sent `initialize` to a modern-only server.
        let message = format!(
            "Invalid params: missing _meta fields {}; supported protocol versions: {}",
            missing.join(", "),
            script.versions.join(", ")
        );
        let data = json!({"missing": missing, "supported": script.versions});
        shared
            .send(&wire::error(id, wire::INVALID_PARAMS, &message, Some(data)))
            .await;
        return;
    }
    let version = version.unwrap_or_default();
    if !script.supports_modern(version) {
        let data = json!({"supported": script.versions, "requested": version});
        let reply = wire::error(
            id,
            wire::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            Some(data),
        );
        shared.send(&reply).await;
        return;
    }
    if let Some(level) = meta.and_then(|m| m.get(wire::META_LOG_LEVEL))
        && level.as_str().and_then(log_rank).is_none()
    {
        let message = format!("Invalid params: unknown log level {level}");
        let reply = wire::error(id, wire::INVALID_PARAMS, &message, None);
        return shared.send(&reply).await;
    }
    if !offered(script, method) {
        return method_not_found(shared, id).await;
    }
    let era = Era::Modern;
    match method {
        "server/discover" => {
            let mut body = Map::new();
            body.insert("supportedVersions".into(), json!(script.versions));
            body.insert("capabilities".into(), script.capabilities_for(true));
            if let Some(text) = &script.instructions {
                body.insert("instructions".into(), text.clone().into());
            }
            let body = cacheable(shared, era, Value::Object(body));
            shared.send(&wire::result(id, body)).await;
        }
        "subscriptions/listen" => listen::listen(shared, id, &params).await,
        // The extension's methods only for a request that declares it.
        "tasks/get" | "tasks/update" | "tasks/cancel" if !declares_tasks_extension(&params) => {
            let reply = wire::error(
                id,
                wire::MISSING_CLIENT_CAPABILITY,
                "Missing required client capability: the tasks extension",
                Some(tasks_extension_required()),
            );
            shared.send(&reply).await;
        }
        "tasks/get" => tasks::get(shared, id, era, &params).await,
        "tasks/update" => tasks::update(shared, id, &params).await,
        "tasks/cancel" => tasks::cancel(shared, id, era, &params).await,
        // `ping`, `initialize`, `logging/setLevel`, `resources/subscribe`,
        // `tasks/result` and `tasks/list` do not exist in this era.
        _ => {
            if !common_request(shared, id, era, method, params).await {
                method_not_found(shared, id).await;
            }
        }
    }
}

/// Whether the script offers `method`'s feature (its capability); a
/// method of a feature the server lacks is `-32601`.
fn offered(script: &crate::script::Script, method: &str) -> bool {
    match method
        .split_once('/')
        .map_or(method, |(feature, _)| feature)
    {
        "prompts" => script.has_prompts(),
        "resources" => script.has_resources(),
        "completion" => script.has_completions(),
        "tasks" => script.has_task_tools(),
        _ => true,
    }
}

/// Serves the methods both eras share; `false` if `method` is not one.
async fn common_request(
    shared: &Arc<Shared>,
    id: &Value,
    era: Era,
    method: &str,
    params: Value,
) -> bool {
    match method {
        "tools/list" => lists::tools(shared, id, era, &params).await,
        "tools/call" => tool_call::start(shared, id, era, params).await,
        "prompts/list" => lists::prompts(shared, id, era, &params).await,
        "prompts/get" => prompts::get(shared, id, era, params).await,
        "resources/list" => lists::resources(shared, id, era, &params).await,
        "resources/templates/list" => lists::templates(shared, id, era, &params).await,
        "resources/read" => resources::read(shared, id, era, params).await,
        "completion/complete" => prompts::complete_argument(shared, id, era, &params).await,
        "skills/list" if !shared.script.skills.is_empty() => {
            crate::skills::list(shared, id, era, &params).await;
        }
        "skills/get" if !shared.script.skills.is_empty() => {
            crate::skills::get(shared, id, era, &params).await;
        }
        "resources/directory/read" if shared.script.skills_directory_read => {
            crate::skills::read_directory(shared, id, &params).await;
        }
        _ => return false,
    }
    true
}

async fn legacy_request(
    shared: &Arc<Shared>,
    id: &Value,
    method: &str,
    params: Value,
) -> Option<i32> {
    let script = &shared.script;
    match method {
        "initialize" => return initialize(shared, id, &params).await,
        "ping" => {
            shared.send(&wire::result(id, json!({}))).await;
            return None;
        }
        _ => {}
    }
    let initialized = match &*shared.lifecycle() {
        Lifecycle::Operating(_) => true,
        Lifecycle::AwaitingInitialized(_) => !script.strict_lifecycle,
        Lifecycle::Fresh => false,
    };
    if !initialized {
        match &script.pre_init {
            PreInit::Reject { code } => {
                let reply = wire::error(id, *code, "Server not initialized", None);
                shared.send(&reply).await;
                return None;
            }
            PreInit::Silence => return None,
            PreInit::Serve => {}
        }
    }
    let tasks_offered = !method.starts_with("tasks/") || shared.legacy_tasks_enabled();
    if !offered(script, method) || !tasks_offered {
        method_not_found(shared, id).await;
        return None;
    }
    let era = Era::Legacy;
    match method {
        "logging/setLevel" => set_level(shared, id, &params).await,
        "resources/subscribe" => resources::subscribe(shared, id, &params, true).await,
        "resources/unsubscribe" => resources::subscribe(shared, id, &params, false).await,
        "tasks/get" => tasks::get(shared, id, era, &params).await,
        "tasks/result" => tasks::result(shared, id, &params).await,
        "tasks/list" => tasks::list(shared, id, &params).await,
        "tasks/cancel" => tasks::cancel(shared, id, era, &params).await,
        _ => {
            if !common_request(shared, id, era, method, params).await {
                method_not_found(shared, id).await;
            }
        }
    }
    None
}

/// `logging/setLevel`: later `notifications/message` only at or above it.
async fn set_level(shared: &Shared, id: &Value, params: &Value) {
    let rank = params
        .get("level")
        .and_then(Value::as_str)
        .and_then(log_rank);
    let reply = match rank {
        Some(rank) => {
            shared.state().log_level = Some(rank);
            wire::result(id, json!({}))
        }
        None => wire::error(
            id,
            wire::INVALID_PARAMS,
            "Invalid params: level must be one of debug, info, notice, warning, error, critical, alert, emergency",
            None,
        ),
    };
    shared.send(&reply).await;
}

async fn initialize(shared: &Shared, id: &Value, params: &Value) -> Option<i32> {
    let script = &shared.script;
    let requested = params.get("protocolVersion").and_then(Value::as_str);
    let chosen = match requested {
        Some(v) if script.legacy_versions().any(|s| s == v) => v,
        // Only reached with at least one legacy version (see `handle_request`).
        _ => script.latest_legacy().unwrap_or(wire::LEGACY_VERSIONS[3]),
    }
    .to_owned();
    let first = {
        let mut lifecycle = shared.lifecycle();
        let first = *lifecycle == Lifecycle::Fresh;
        if first {
            *lifecycle = Lifecycle::AwaitingInitialized(chosen.clone());
        }
        first
    };
    if !first {
        let reply = wire::error(
            id,
            wire::INVALID_REQUEST,
            "Invalid Request: already initialized",
            None,
        );
        shared.send(&reply).await;
        return None;
    }
    shared.state().client_capabilities = params
        .get("capabilities")
        .and_then(Value::as_object)
        .cloned();
    let mut body = Map::new();
    body.insert("protocolVersion".into(), chosen.into());
    body.insert("capabilities".into(), script.server_capabilities());
    body.insert("serverInfo".into(), script.server_info.clone());
    if let Some(text) = &script.instructions {
        body.insert("instructions".into(), text.clone().into());
    }
    shared.send(&wire::result(id, Value::Object(body))).await;
    script.exit_after_initialize.then_some(SCRIPTED_EXIT_CODE)
}

async fn method_not_found(shared: &Shared, id: &Value) {
    let reply = wire::error(id, wire::METHOD_NOT_FOUND, "Method not found", None);
    shared.send(&reply).await;
}
