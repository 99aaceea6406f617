//! Scripted server content beyond tools: resources, resource templates,
//! prompts, completions, and the client input a request can ask for.
//!
//! Like [`ToolSpec`](crate::ToolSpec), each spec keeps the item's listing JSON
//! verbatim (flattened beside the testkit's own fields), so a test can list
//! any field the protocol has, or a malformed one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// A resource: its `resources/list` JSON plus what `resources/read` returns.
///
/// JSON: the listing fields (`uri`, `name`, `title`, `description`,
/// `mimeType`, `size`, `annotations`, `icons`, …) beside the testkit's
/// `text` or `blob` (base64), optional `input`, `appear_at_change` and
/// `vanish_at_change`:
/// `{"uri": "file:///a.txt", "name": "a.txt", "mimeType": "text/plain", "text": "hello"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceSpec {
    /// The resource as listed, sent verbatim.
    #[serde(flatten)]
    pub resource: Map<String, Value>,
    /// Text content (`TextResourceContents`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 content (`BlobResourceContents`); exclusive with `text`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// Client input `resources/read` asks for before answering (see [`InputSpec`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<InputSpec>,
    /// Listed (and readable) only once the resource list changed this many
    /// times (see [`Behavior::ChangeList`](crate::Behavior::ChangeList)).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub appear_at_change: u32,
    /// No longer listed (nor readable) once the resource list changed this many times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vanish_at_change: Option<u32>,
    /// A read whose request asked for progress (`_meta.progressToken`) gets
    /// this many `notifications/progress` (`step k of n`) before its answer.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub progress_steps: u32,
    /// A log message sent before each read's answer (by the rules of the
    /// `log` tool behaviour: the level set in the legacy era, the request's
    /// `_meta` level in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_on_read: Option<ReadLog>,
}

/// A log message a resource's read sends ([`ResourceSpec::log_on_read`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadLog {
    /// The message's level (`debug` … `emergency`).
    pub level: String,
    /// The message's `data`.
    pub message: Value,
}

impl ResourceSpec {
    /// A `text/plain` resource whose `size` is the text's length in bytes.
    pub fn text(uri: &str, name: &str, text: &str) -> Self {
        let resource =
            json!({"uri": uri, "name": name, "mimeType": "text/plain", "size": text.len()});
        Self::with_listing(resource, Some(text.to_owned()), None)
    }

    /// A binary resource; `base64` is its content, already encoded. Its
    /// `size` is the decoded length.
    pub fn blob(uri: &str, name: &str, mime_type: &str, base64: &str) -> Self {
        let resource = json!({"uri": uri, "name": name, "mimeType": mime_type,
                              "size": decoded_base64_len(base64)});
        Self::with_listing(resource, None, Some(base64.to_owned()))
    }

    fn with_listing(listing: Value, text: Option<String>, blob: Option<String>) -> Self {
        Self {
            resource: object(listing),
            text,
            blob,
            input: None,
            appear_at_change: 0,
            vanish_at_change: None,
            progress_steps: 0,
            log_on_read: None,
        }
    }

    /// Sets (or replaces) one listing field, e.g. `annotations` or `title`.
    pub fn with(mut self, field: &str, value: Value) -> Self {
        self.resource.insert(field.to_owned(), value);
        self
    }

    /// Makes `resources/read` ask the client for input first.
    pub fn with_input(mut self, input: InputSpec) -> Self {
        self.input = Some(input);
        self
    }

    /// The resource's `uri`, if it has a string one.
    pub fn uri(&self) -> Option<&str> {
        self.resource.get("uri").and_then(Value::as_str)
    }

    /// The `contents` entry `resources/read` returns for it.
    pub(crate) fn contents(&self) -> Value {
        let mut entry = Map::new();
        entry.insert(
            "uri".into(),
            self.resource.get("uri").cloned().unwrap_or_default(),
        );
        if let Some(mime) = self.resource.get("mimeType") {
            entry.insert("mimeType".into(), mime.clone());
        }
        match (&self.text, &self.blob) {
            (_, Some(blob)) => entry.insert("blob".into(), blob.clone().into()),
            (text, None) => entry.insert("text".into(), text.clone().unwrap_or_default().into()),
        };
        Value::Object(entry)
    }
}

/// A resource template: its `resources/templates/list` JSON, the text a read
/// of a matching URI returns, and completions for its variables.
///
/// JSON: `{"uriTemplate": "file:///logs/{day}.txt", "name": "logs",
/// "text": "log of {day}", "completions": [{"argument": "day", "values": [...]}]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceTemplateSpec {
    /// The template as listed (`uriTemplate`, `name`, …), sent verbatim.
    #[serde(flatten)]
    pub template: Map<String, Value>,
    /// What `resources/read` of a URI matching the template returns, with
    /// `{variable}` replaced by the matched value. `None`: such URIs are not
    /// readable (not found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Values `completion/complete` offers for the template's variables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub completions: Vec<CompletionSpec>,
    /// Listed only once the resource list changed this many times.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub appear_at_change: u32,
    /// No longer listed once the resource list changed this many times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vanish_at_change: Option<u32>,
}

impl ResourceTemplateSpec {
    /// A template whose matching URIs read as `text` (`{var}` substituted).
    pub fn new(uri_template: &str, name: &str, text: &str) -> Self {
        Self {
            template: object(
                json!({"uriTemplate": uri_template, "name": name, "mimeType": "text/plain"}),
            ),
            text: Some(text.to_owned()),
            completions: Vec::new(),
            appear_at_change: 0,
            vanish_at_change: None,
        }
    }

    /// Adds completion values for one variable (see [`CompletionSpec`]).
    pub fn complete(mut self, completion: CompletionSpec) -> Self {
        self.completions.push(completion);
        self
    }

    /// The template's `uriTemplate`, if it has a string one.
    pub fn uri_template(&self) -> Option<&str> {
        self.template.get("uriTemplate").and_then(Value::as_str)
    }
}

/// A prompt: its `prompts/list` JSON plus the messages `prompts/get` renders.
///
/// JSON: `{"name": "review", "arguments": [{"name": "code", "required": true}],
/// "messages": [{"role": "user", "content": {"type": "text", "text": "Review {code}"}}]}`.
/// Every string inside `messages` has `{argument}` replaced by the argument's
/// value (unknown names are kept). Without `messages`, one user text message
/// `"Prompt <name> with arguments <JSON>"` is returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptSpec {
    /// The prompt as listed (`name`, `title`, `description`, `arguments`, `icons`), sent verbatim.
    #[serde(flatten)]
    pub prompt: Map<String, Value>,
    /// The message templates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Value>,
    /// Values `completion/complete` offers for the prompt's arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub completions: Vec<CompletionSpec>,
    /// Client input `prompts/get` asks for before answering (see [`InputSpec`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<InputSpec>,
    /// Listed (and gettable) only once the prompt list changed this many times.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub appear_at_change: u32,
    /// No longer listed (nor gettable) once the prompt list changed this many times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vanish_at_change: Option<u32>,
}

impl PromptSpec {
    /// A prompt with no arguments and no messages yet.
    pub fn new(name: &str) -> Self {
        Self {
            prompt: object(json!({"name": name})),
            messages: Vec::new(),
            completions: Vec::new(),
            input: None,
            appear_at_change: 0,
            vanish_at_change: None,
        }
    }

    /// Adds an argument to the listing.
    pub fn argument(mut self, name: &str, required: bool) -> Self {
        let argument = json!({"name": name, "required": required});
        match self.prompt.get_mut("arguments") {
            Some(Value::Array(list)) => list.push(argument),
            _ => {
                self.prompt.insert("arguments".into(), json!([argument]));
            }
        }
        self
    }

    /// Adds a text message template (`{argument}` placeholders allowed).
    pub fn message(mut self, role: &str, text: &str) -> Self {
        self.messages
            .push(json!({"role": role, "content": {"type": "text", "text": text}}));
        self
    }

    /// Adds completion values for one argument.
    pub fn complete(mut self, completion: CompletionSpec) -> Self {
        self.completions.push(completion);
        self
    }

    /// Makes `prompts/get` ask the client for input first.
    pub fn with_input(mut self, input: InputSpec) -> Self {
        self.input = Some(input);
        self
    }

    /// Sets (or replaces) one listing field, e.g. `description`.
    pub fn with(mut self, field: &str, value: Value) -> Self {
        self.prompt.insert(field.to_owned(), value);
        self
    }

    /// The prompt's `name`, if it has a string one.
    pub fn name(&self) -> Option<&str> {
        self.prompt.get("name").and_then(Value::as_str)
    }

    /// Names of the arguments listed with `"required": true`.
    pub(crate) fn required_arguments(&self) -> Vec<&str> {
        let Some(Value::Array(arguments)) = self.prompt.get("arguments") else {
            return Vec::new();
        };
        arguments
            .iter()
            .filter(|a| a.get("required") == Some(&Value::Bool(true)))
            .filter_map(|a| a.get("name").and_then(Value::as_str))
            .collect()
    }
}

/// Values `completion/complete` offers for one argument (of a prompt) or
/// variable (of a resource template).
///
/// The first entry for the argument whose `context` is satisfied wins:
/// every `context` entry must equal the request's
/// `context.arguments[name]`. Its `values` starting with the typed prefix
/// (`argument.value`, case-sensitive) are returned, at most 100 (the spec's
/// bound) with `total` and `hasMore`. No matching entry: an empty list.
///
/// JSON: `{"argument": "framework", "values": ["flask", "fastapi"], "context": {"language": "python"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompletionSpec {
    /// The argument (or template variable) completed.
    pub argument: String,
    /// All candidate values, in order.
    pub values: Vec<String>,
    /// Values of other arguments this entry requires (empty: always applies).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub context: BTreeMap<String, String>,
}

impl CompletionSpec {
    /// Values for `argument`, whatever the context.
    pub fn new<I, S>(argument: &str, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            argument: argument.to_owned(),
            values: values.into_iter().map(Into::into).collect(),
            context: BTreeMap::new(),
        }
    }

    /// Applies only when the other argument `name` has `value`.
    pub fn when(mut self, name: &str, value: &str) -> Self {
        self.context.insert(name.to_owned(), value.to_owned());
        self
    }
}

/// Client input a request asks for before it completes, in `rounds` rounds
/// of the same keyed `requests`.
///
/// - Legacy era: each round sends every request (in key order, one after
///   the other) as a server→client JSON-RPC request and waits for its
///   response (bounded by the script's `ask_timeout_ms`). Client
///   capabilities are not checked, so a test can see how a client answers
///   a request it never declared support for.
/// - 2026-07-28: each round is an `input_required` result with
///   `inputRequests` (these keys) and a `requestState`; the client's retry
///   with `inputResponses` for every key and that `requestState` moves to the
///   next round. A retry missing a key gets the same round again (as the
///   spec advises); a wrong or missing `requestState` is `-32602`; a request
///   whose client capability (`sampling`, `roots`, `elicitation` with the
///   `form`/`url` mode) was not declared is `-32021`.
/// - In a task (2026-07-28 tasks extension), each round puts the task in
///   `input_required` with these keys (suffixed `#<round>` after the first
///   round, as task keys must not repeat) until `tasks/update` answers them all.
///
/// JSON: `{"requests": {"confirm": {"method": "elicitation/create", "params": {...}}},
/// "rounds": 2, "elicitation_complete": true}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputSpec {
    /// The requests of each round, by key.
    pub requests: BTreeMap<String, InputRequest>,
    /// How many rounds (default 1).
    #[serde(default = "one")]
    pub rounds: u32,
    /// Legacy era: after a URL-mode `elicitation/create` (params with
    /// `mode: "url"` and an `elicitationId`) is answered `accept`, send
    /// `notifications/elicitation/complete` with its `elicitationId`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub elicitation_complete: bool,
    /// 2026-07-28, one round: a call carrying `inputResponses` without a
    /// `requestState` is taken as answering the round (the state is
    /// optional for a server that needs none): every key answered with an
    /// object completes it, a missing key gets the round again, and
    /// `inputResponses` that are not an object, or an answer that is not
    /// one, are `-32602`. Off: such a call is `-32602`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub state_optional: bool,
    /// 2026-07-28: ask only the requests whose client capability the
    /// request declared (`-32021` when none is left). Off: an undeclared
    /// one is `-32021`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub declared_only: bool,
    /// 2026-07-28, a tool that runs as a task (tasks extension declared):
    /// the rounds are `input_required` results of the call itself first,
    /// and the call that answers the last one becomes the task, whose
    /// result reports the answers (SEP-2663's input-then-task
    /// composition). Off: the task is made at once and asks in
    /// `input_required` status.
    #[serde(default, skip_serializing_if = "is_false")]
    pub before_task: bool,
}

impl InputSpec {
    /// One round asking one request under `key`.
    pub fn one(key: &str, request: InputRequest) -> Self {
        Self {
            requests: BTreeMap::from([(key.to_owned(), request)]),
            rounds: 1,
            elicitation_complete: false,
            state_optional: false,
            declared_only: false,
            before_task: false,
        }
    }

    /// Adds a request under `key` to every round.
    pub fn and(mut self, key: &str, request: InputRequest) -> Self {
        self.requests.insert(key.to_owned(), request);
        self
    }

    /// Sets the number of rounds.
    pub fn rounds(mut self, rounds: u32) -> Self {
        self.rounds = rounds;
        self
    }

    /// Sends `notifications/elicitation/complete` after an accepted URL-mode elicitation.
    pub fn with_elicitation_complete(mut self) -> Self {
        self.elicitation_complete = true;
        self
    }
}

/// One server→client request: `{"method": ..., "params": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputRequest {
    /// `sampling/createMessage`, `elicitation/create` or `roots/list`
    /// (anything else is sent as given, for misbehaviour tests).
    pub method: String,
    /// Its params (omitted when null).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub params: Value,
}

impl InputRequest {
    /// A `sampling/createMessage` with one user text message.
    pub fn sampling(text: &str, max_tokens: u32) -> Self {
        Self {
            method: "sampling/createMessage".into(),
            params: json!({"messages": [{"role": "user", "content": {"type": "text", "text": text}}],
                           "maxTokens": max_tokens}),
        }
    }

    /// A form-mode `elicitation/create` with `requestedSchema`.
    pub fn elicit_form(message: &str, requested_schema: Value) -> Self {
        Self {
            method: "elicitation/create".into(),
            params: json!({"mode": "form", "message": message, "requestedSchema": requested_schema}),
        }
    }

    /// A URL-mode `elicitation/create`. `elicitationId` is required by
    /// 2025-11-25 and absent from 2026-07-28; it is sent as given.
    pub fn elicit_url(message: &str, url: &str, elicitation_id: &str) -> Self {
        Self {
            method: "elicitation/create".into(),
            params: json!({"mode": "url", "message": message, "url": url,
                           "elicitationId": elicitation_id}),
        }
    }

    /// A `roots/list`.
    pub fn roots() -> Self {
        Self {
            method: "roots/list".into(),
            params: Value::Null,
        }
    }

    /// The request as an `inputRequests` value.
    pub(crate) fn to_json(&self) -> Value {
        let mut request = json!({"method": self.method});
        if !self.params.is_null() {
            request["params"] = self.params.clone();
        }
        request
    }
}

/// Whether a tool can run as a task (2025-11-25 `execution.taskSupport`; in
/// 2026-07-28 whether the server makes a task when the client declared the
/// tasks extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskSupport {
    /// Never a task (a 2025-11-25 `task` param gets `-32601`).
    Forbidden,
    /// A task when asked (2025-11-25) / when the client declared the
    /// extension (2026-07-28), else a normal call.
    Optional,
    /// Only as a task: 2025-11-25 without `task` param is `-32601`;
    /// 2026-07-28 without the declared extension is `-32021`.
    Required,
}

impl TaskSupport {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Forbidden => "forbidden",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }
}

/// Which list a [`Behavior::ChangeList`](crate::Behavior::ChangeList) changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListKind {
    /// `tools/list` (`notifications/tools/list_changed`, filter `toolsListChanged`).
    Tools,
    /// `prompts/list` (`notifications/prompts/list_changed`, filter `promptsListChanged`).
    Prompts,
    /// `resources/list` and `resources/templates/list`
    /// (`notifications/resources/list_changed`, filter `resourcesListChanged`).
    Resources,
}

impl ListKind {
    pub(crate) fn notification(self) -> &'static str {
        match self {
            Self::Tools => "notifications/tools/list_changed",
            Self::Prompts => "notifications/prompts/list_changed",
            Self::Resources => "notifications/resources/list_changed",
        }
    }

    pub(crate) fn filter_field(self) -> &'static str {
        match self {
            Self::Tools => "toolsListChanged",
            Self::Prompts => "promptsListChanged",
            Self::Resources => "resourcesListChanged",
        }
    }
}

/// How [`Behavior::EndListen`](crate::Behavior::EndListen) ends the open
/// `subscriptions/listen` streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListenEnd {
    /// Answers each listen request with a `complete` result carrying its
    /// `subscriptionId` (the spec's graceful closure).
    Graceful,
    /// Forgets the streams without a word (an abrupt end seen from the
    /// client: no more notifications, no response).
    Drop,
    /// Ends the server (process / `serve`) at once, like a transport drop.
    Exit,
}

/// Whether a listed item is visible after `changes` list changes.
pub(crate) fn visible(appear: u32, vanish: Option<u32>, changes: u32) -> bool {
    changes >= appear && vanish.is_none_or(|v| changes < v)
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn decoded_base64_len(base64: &str) -> usize {
    let trimmed = base64.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

fn one() -> u32 {
    1
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_false(b: &bool) -> bool {
    !*b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_spec_keeps_listing_fields_apart_from_content() {
        let spec: ResourceSpec = serde_json::from_value(json!({
            "uri": "file:///a", "name": "a", "annotations": {"priority": 0.5},
            "text": "hi", "appear_at_change": 1
        }))
        .unwrap();
        assert_eq!(spec.text.as_deref(), Some("hi"));
        assert_eq!(spec.appear_at_change, 1);
        assert!(!spec.resource.contains_key("text"));
        assert_eq!(spec.resource["annotations"], json!({"priority": 0.5}));
        assert_eq!(spec.contents(), json!({"uri": "file:///a", "text": "hi"}));
        let back = serde_json::to_value(&spec).unwrap();
        assert_eq!(serde_json::from_value::<ResourceSpec>(back).unwrap(), spec);
    }

    #[test]
    fn blob_size_is_the_decoded_length() {
        let spec = ResourceSpec::blob("file:///b", "b", "image/png", "aGVsbG8=");
        assert_eq!(spec.resource["size"], 5);
        assert_eq!(spec.contents()["blob"], "aGVsbG8=");
    }

    #[test]
    fn prompt_builder_lists_required_arguments() {
        let prompt = PromptSpec::new("p")
            .argument("a", true)
            .argument("b", false);
        assert_eq!(prompt.required_arguments(), ["a"]);
    }

    #[test]
    fn visibility_follows_the_change_count() {
        assert!(visible(0, None, 0));
        assert!(!visible(1, None, 0));
        assert!(visible(1, Some(2), 1));
        assert!(!visible(1, Some(2), 2));
    }
}
