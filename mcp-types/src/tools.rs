//! Tools: descriptors, listing, calling.
//!
//! A tool's `inputSchema` / `outputSchema` is kept byte-for-byte as the server
//! sent it ([`JsonSchemaDoc`]): key order, number formatting and any `$ref` are
//! untouched, and nothing is ever resolved or fetched.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::JsonObject;
use crate::cache::CacheScope;
use crate::common::Cursor;
use crate::content::ContentBlock;
use crate::error::TypesError;
use crate::initialize::Icon;
use crate::input_required::{InputResponses, ResultType};
use crate::meta::Meta;
use crate::open_struct::{open_enum, open_struct};
use crate::tasks::TaskMetadata;

/// A JSON Schema document kept exactly as received (or as generated).
///
/// Parse it on demand with [`JsonSchemaDoc::to_value`] or
/// [`JsonSchemaDoc::parse`]. A `$ref` inside is never resolved by this crate.
#[derive(Clone)]
pub struct JsonSchemaDoc(Box<RawValue>);

impl JsonSchemaDoc {
    /// Wraps raw JSON text after checking it is valid JSON.
    pub fn from_json(json: &str) -> Result<Self, TypesError> {
        RawValue::from_string(json.to_owned())
            .map(JsonSchemaDoc)
            .map_err(TypesError::json)
    }

    /// Encodes a `Value`.
    pub fn from_value(value: &Value) -> Result<Self, TypesError> {
        serde_json::value::to_raw_value(value)
            .map(JsonSchemaDoc)
            .map_err(TypesError::json)
    }

    /// The schema `{"type":"object"}`: a tool taking any object (or none).
    pub fn empty_object() -> Self {
        // A fixed, valid JSON literal: `from_string` cannot fail on it.
        JsonSchemaDoc(
            RawValue::from_string(r#"{"type":"object"}"#.to_owned()).expect("valid JSON literal"),
        )
    }

    /// Generates the JSON Schema (2020-12) of a Rust type, for a tool's
    /// `inputSchema`. The type must describe an object.
    pub fn for_type<T: schemars::JsonSchema>() -> Result<Self, TypesError> {
        let schema = schemars::generate::SchemaSettings::draft2020_12()
            .into_generator()
            .into_root_schema_for::<T>();
        let value = schema.to_value();
        if value.get("type").and_then(Value::as_str) != Some("object") {
            return Err(TypesError::SchemaNotObject);
        }
        Self::from_value(&value)
    }

    /// The JSON text exactly as kept.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The raw value.
    pub fn as_raw(&self) -> &RawValue {
        &self.0
    }

    /// Parses the schema into a `Value`.
    pub fn to_value(&self) -> Result<Value, TypesError> {
        serde_json::from_str(self.0.get()).map_err(TypesError::json)
    }

    /// Parses the schema into any type.
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T, TypesError> {
        serde_json::from_str(self.0.get()).map_err(TypesError::json)
    }
}

impl Default for JsonSchemaDoc {
    fn default() -> Self {
        Self::empty_object()
    }
}

impl fmt::Debug for JsonSchemaDoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("JsonSchemaDoc").field(&self.0.get()).finish()
    }
}

impl PartialEq for JsonSchemaDoc {
    /// Byte-for-byte equality of the kept text.
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl Serialize for JsonSchemaDoc {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for JsonSchemaDoc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(d).map(JsonSchemaDoc)
    }
}

open_struct! {
    /// A tool a server offers.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Tool {
        /// Programmatic name (what `tools/call` takes).
        req name: String = "name",
        /// 2025-06-18+: human-readable name.
        opt title: String = "title",
        /// Description (server prose, shown to the model).
        opt description: String = "description",
        /// JSON Schema of the arguments, kept as sent.
        req input_schema: JsonSchemaDoc = "inputSchema",
        /// 2025-06-18+: JSON Schema of `structuredContent`, kept as sent.
        opt output_schema: JsonSchemaDoc = "outputSchema",
        /// 2025-03-26+: behaviour hints (never policy).
        opt annotations: ToolAnnotations = "annotations",
        /// 2025-11-25+: icons.
        opt icons: Vec<Icon> = "icons",
        /// 2025-11-25: execution properties (task support).
        opt execution: ToolExecution = "execution",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

impl Tool {
    /// A tool with a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: JsonSchemaDoc) -> Self {
        Tool {
            name: name.into(),
            input_schema,
            ..Default::default()
        }
    }

    /// The input schema of a Rust type (see [`JsonSchemaDoc::for_type`]).
    pub fn input_schema_from<T: schemars::JsonSchema>() -> Result<JsonSchemaDoc, TypesError> {
        JsonSchemaDoc::for_type::<T>()
    }
}

open_struct! {
    /// Hints about a tool's behaviour (2025-03-26+). Servers are not trusted:
    /// show these, never enforce with them.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ToolAnnotations {
        /// Human-readable name.
        opt title: String = "title",
        /// The tool does not modify its environment.
        opt read_only_hint: bool = "readOnlyHint",
        /// The tool may perform destructive updates.
        opt destructive_hint: bool = "destructiveHint",
        /// Repeated calls with the same arguments have no further effect.
        opt idempotent_hint: bool = "idempotentHint",
        /// The tool interacts with an open world of external entities.
        opt open_world_hint: bool = "openWorldHint",
    }
}

open_enum! {
    /// Whether a tool supports task-augmented execution (2025-11-25).
    pub enum TaskSupport {
        /// Must not be called as a task (the default).
        Forbidden = "forbidden",
        /// May be called as a task.
        Optional = "optional",
        /// Must be called as a task.
        Required = "required",
    }
}

open_struct! {
    /// Execution properties of a tool (2025-11-25).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ToolExecution {
        /// Task support.
        opt task_support: TaskSupport = "taskSupport",
    }
}

open_struct! {
    /// Result of `tools/list`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ListToolsResult {
        /// The tools on this page.
        req tools: Vec<Tool> = "tools",
        /// Cursor of the next page, if any.
        opt next_cursor: Cursor = "nextCursor",
        /// 2026-07-28: cache lifetime hint in milliseconds.
        opt ttl_ms: u64 = "ttlMs",
        /// 2026-07-28: who may share a cached copy.
        opt cache_scope: CacheScope = "cacheScope",
        /// 2026-07-28: the result's kind.
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// Params of `tools/call`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CallToolParams {
        /// The tool's name.
        req name: String = "name",
        /// The arguments.
        opt arguments: JsonObject = "arguments",
        /// 2025-11-25: run the call as a task (task augmentation).
        opt task: TaskMetadata = "task",
        /// 2026-07-28: answers to the server's `inputRequests` (retry after an
        /// `input_required` result).
        opt input_responses: InputResponses = "inputResponses",
        /// 2026-07-28: the opaque `requestState` echoed back on a retry.
        opt request_state: String = "requestState",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl CallToolParams {
    /// Params calling `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Option<JsonObject>) -> Self {
        CallToolParams {
            name: name.into(),
            arguments,
            ..Default::default()
        }
    }
}

open_struct! {
    /// Result of `tools/call` (when complete). A tool's own failure is a result with
    /// `isError: true`, not a JSON-RPC error.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CallToolResult {
        /// Unstructured result.
        list content: Vec<ContentBlock> = "content",
        /// 2025-06-18+: structured result (an object up to 2025-11-25; any JSON in
        /// 2026-07-28), matching the tool's `outputSchema`.
        opt structured_content: Value = "structuredContent",
        /// Whether the tool failed.
        opt is_error: bool = "isError",
        /// 2026-07-28: the result's kind.
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

impl CallToolResult {
    /// Whether the tool reported failure (`isError: true`).
    pub fn failed(&self) -> bool {
        self.is_error == Some(true)
    }

    /// The text blocks of the result, one per line (other content kinds are
    /// left out). This is the server's text: escape it before it reaches a
    /// terminal (`mcp_types::text::escape_content`).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(crate::ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}
