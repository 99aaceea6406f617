//! The 2026-07-28 rules: what a request's `_meta` must carry, and what every
//! result must carry (`resultType`, the server's identity, and cache hints on
//! cacheable results).

use std::sync::Arc;

use mcp_types::requests::{CallTool, CancelTask, GetPrompt, GetTask, ReadResource, UpdateTask};
use mcp_types::{
    ClientCapabilities, ErrorObject, Implementation, Meta, MissingRequiredClientCapabilityData,
    ProgressToken, ProtocolVersion, Request, TASKS_EXTENSION, UnsupportedProtocolVersionData,
    error_codes, meta_keys,
};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::events::ClientContext;
use super::route::ResultKind;
use crate::ServerConfig;

/// The `_meta` of a request's params, whatever its era. Params that are not
/// an object have none (their own decode refuses them later).
pub(crate) fn request_meta(params: Option<&RawValue>) -> Result<Option<Meta>, ErrorObject> {
    #[derive(Deserialize)]
    struct WithMeta {
        #[serde(rename = "_meta", default)]
        meta: Option<Value>,
    }
    let Some(raw) = params else {
        return Ok(None);
    };
    if !raw.get().trim_start().starts_with('{') {
        return Ok(None);
    }
    let with: WithMeta = serde_json::from_str(raw.get()).map_err(|e| {
        ErrorObject::new(error_codes::INVALID_PARAMS, format!("Invalid params: {e}"))
    })?;
    match with.meta {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => Ok(Some(Meta(map))),
        Some(_) => Err(ErrorObject::new(
            error_codes::INVALID_PARAMS,
            "Invalid params: `_meta` must be an object",
        )),
    }
}

/// Whether a request is served statelessly: it names its protocol version.
pub(crate) fn is_modern(meta: Option<&Meta>) -> bool {
    meta.is_some_and(|m| m.get(meta_keys::PROTOCOL_VERSION).is_some())
}

/// The request's progress token; `-32602` when it is neither a string nor
/// an integer.
pub(crate) fn progress_token(meta: Option<&Meta>) -> Result<Option<ProgressToken>, ErrorObject> {
    match meta {
        None => Ok(None),
        Some(m) => m.progress_token().map_err(|_| {
            ErrorObject::new(
                error_codes::INVALID_PARAMS,
                "Invalid params: `_meta.progressToken` must be a string or an integer",
            )
        }),
    }
}

/// Checks a 2026-07-28 request's `_meta` and reads what the client says
/// about itself: `-32602` for a missing or malformed required field,
/// `-32022` for a version this server does not serve statelessly.
pub(crate) fn client_context(
    meta: Option<&Meta>,
    config: &ServerConfig,
) -> Result<ClientContext, ErrorObject> {
    let version = meta.and_then(|m| m.get(meta_keys::PROTOCOL_VERSION));
    let capabilities = meta.and_then(|m| m.get(meta_keys::CLIENT_CAPABILITIES));
    let mut missing = Vec::new();
    if version.is_none() {
        missing.push(meta_keys::PROTOCOL_VERSION);
    }
    if !capabilities.is_some_and(Value::is_object) {
        missing.push(meta_keys::CLIENT_CAPABILITIES);
    }
    if !missing.is_empty() {
        let mut error = ErrorObject::new(
            error_codes::INVALID_PARAMS,
            format!(
                "Invalid params: `_meta` lacks {}; supported protocol versions: {}",
                missing.join(", "),
                config.version_names().join(", ")
            ),
        );
        error.data = Some(serde_json::json!({
            "missing": missing,
            "supported": config.version_names(),
        }));
        return Err(error);
    }
    let requested = match version {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let Some(version) = ProtocolVersion::parse(&requested)
        .filter(|v| v.era() == mcp_types::Era::Modern && config.versions.contains(v))
    else {
        return Err(unsupported_version(requested, config));
    };
    let capabilities: ClientCapabilities = capabilities
        .cloned()
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| {
            ErrorObject::new(
                error_codes::INVALID_PARAMS,
                format!("Invalid params: `_meta` client capabilities: {e}"),
            )
        })?
        .unwrap_or_default();
    let log_level = match meta.map(Meta::log_level).transpose() {
        Ok(level) => level.flatten(),
        Err(_) => {
            return Err(ErrorObject::new(
                error_codes::INVALID_PARAMS,
                "Invalid params: unknown `_meta` log level",
            ));
        }
    };
    // Self-reported and for display only: a malformed one is ignored.
    let client_info = meta
        .and_then(|m| m.client_info().ok().flatten())
        .map(Arc::new);
    Ok(ClientContext {
        protocol_version: version,
        capabilities: Arc::new(capabilities),
        client_info,
        log_level,
    })
}

/// `-32022` naming every version this server serves.
pub(crate) fn unsupported_version(requested: String, config: &ServerConfig) -> ErrorObject {
    let data = UnsupportedProtocolVersionData {
        requested,
        supported: config.version_names(),
    };
    let mut error = ErrorObject::new(
        error_codes::UNSUPPORTED_PROTOCOL_VERSION,
        format!(
            "Unsupported protocol version; supported: {}",
            data.supported.join(", ")
        ),
    );
    error.data = serde_json::to_value(&data).ok();
    error
}

/// Adds what a 2026-07-28 result must carry when the application left it
/// out: `resultType: "complete"`, the server's identity in `_meta`, and for a
/// complete cacheable result `ttlMs` and `cacheScope`. What the application
/// set is kept.
pub(crate) fn decorate(result: &mut Value, kind: ResultKind, info: &Value, config: &ServerConfig) {
    let Value::Object(map) = result else {
        return;
    };
    let complete = match map.get("resultType") {
        None => {
            map.insert("resultType".into(), Value::from("complete"));
            true
        }
        Some(t) => t == "complete",
    };
    let meta = map
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.entry(meta_keys::SERVER_INFO)
            .or_insert_with(|| info.clone());
    }
    if kind == ResultKind::Cacheable && complete {
        map.entry("ttlMs")
            .or_insert_with(|| Value::from(config.ttl_ms));
        map.entry("cacheScope")
            .or_insert_with(|| Value::from(config.cache_scope.as_str()));
    }
}

/// The server's identity as the JSON put into results.
pub(crate) fn server_info_value(info: &Implementation) -> Value {
    // Invariant: an `Implementation` is plain strings and lists; it always
    // serialises.
    serde_json::to_value(info).unwrap_or(Value::Null)
}

/// `-32021` for a method of the tasks extension (`tasks/get`,
/// `tasks/update`, `tasks/cancel`) in a request whose client capabilities
/// do not declare the extension (SEP-2663, SEP-2575), naming it in
/// `data.requiredCapabilities`; `None` for any other method or a client
/// that declared it.
pub(crate) fn undeclared_extension(
    method: &str,
    capabilities: &ClientCapabilities,
) -> Option<ErrorObject> {
    let tasks = [GetTask::METHOD, UpdateTask::METHOD, CancelTask::METHOD];
    if !tasks.contains(&method) || capabilities.has_extension(TASKS_EXTENSION) {
        return None;
    }
    let mut required = ClientCapabilities::default();
    required.add_extension(TASKS_EXTENSION);
    let mut error = ErrorObject::new(
        error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: the {TASKS_EXTENSION} extension"),
    );
    error.data = serde_json::to_value(MissingRequiredClientCapabilityData {
        required_capabilities: required,
    })
    .ok();
    Some(error)
}

/// The retry members of a request that may be answered `input_required`
/// (`tools/call`, `prompts/get`, `resources/read`), when present, must be
/// what the schema says: `inputResponses` an object, `requestState` a
/// string. A `null` (which a typed decode would read as absent) is
/// `-32602`, as the protocol error it is. Read only when the params name
/// either member.
pub(crate) fn check_retry_members(
    method: &str,
    params: Option<&RawValue>,
) -> Result<(), ErrorObject> {
    #[derive(Deserialize)]
    struct Retry {
        #[serde(rename = "inputResponses", default, deserialize_with = "present")]
        input_responses: Option<Value>,
        #[serde(rename = "requestState", default, deserialize_with = "present")]
        request_state: Option<Value>,
    }
    /// `Some(null)` for a member given as `null`, `None` when absent.
    fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
        Value::deserialize(d).map(Some)
    }
    let rounds = [CallTool::METHOD, GetPrompt::METHOD, ReadResource::METHOD];
    if !rounds.contains(&method) {
        return Ok(());
    }
    let Some(raw) = params else {
        return Ok(());
    };
    let text = raw.get();
    if !text.contains("inputResponses") && !text.contains("requestState") {
        return Ok(());
    }
    let Ok(retry) = serde_json::from_str::<Retry>(text) else {
        // Not an object: the params' own decode refuses it.
        return Ok(());
    };
    let refuse = |what: &str| {
        Err(ErrorObject::new(
            error_codes::INVALID_PARAMS,
            format!("Invalid params: {what}"),
        ))
    };
    if retry
        .input_responses
        .as_ref()
        .is_some_and(|v| !v.is_object())
    {
        return refuse("inputResponses must be an object");
    }
    if retry.request_state.as_ref().is_some_and(|v| !v.is_string()) {
        return refuse("requestState must be a string");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_task_methods_need_the_declared_extension() {
        let none = ClientCapabilities::default();
        let mut declared = ClientCapabilities::default();
        declared.add_extension(TASKS_EXTENSION);
        for method in [GetTask::METHOD, UpdateTask::METHOD, CancelTask::METHOD] {
            let error = undeclared_extension(method, &none).expect(method);
            assert_eq!(error.code, error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY);
            let data = error.data.expect("data");
            assert!(data["requiredCapabilities"]["extensions"][TASKS_EXTENSION].is_object());
            assert!(undeclared_extension(method, &declared).is_none());
        }
        assert!(undeclared_extension(CallTool::METHOD, &none).is_none());
    }
}
