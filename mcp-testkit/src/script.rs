//! The script: what the fake server supports and how it (mis)behaves.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::behavior::{Behavior, CacheScope, OnProbe, PreInit};
use crate::error::{ScriptProblem, TestkitError};
use crate::specs::{
    InputSpec, PromptSpec, ResourceSpec, ResourceTemplateSpec, TaskSupport, visible,
};
use crate::wire;

/// Largest line `Behavior::Oversized` may write (1 GiB).
pub const MAX_OVERSIZED_BYTES: u64 = 1 << 30;
/// Largest text `Behavior::Blob` may return (256 MiB, in KiB).
pub const MAX_BLOB_KB: u64 = 256 * 1024;
/// Largest `stderr_flood_bytes` (1 GiB).
pub const MAX_STDERR_FLOOD_BYTES: u64 = 1 << 30;
/// Most rounds an [`InputSpec`] may ask for.
pub const MAX_INPUT_ROUNDS: u32 = 1000;
/// Most requests per round of an [`InputSpec`].
pub const MAX_INPUT_REQUESTS: usize = 64;

/// A fake server's script. Build it in Rust ([`Script::dual`] and the
/// builder methods, or a struct literal with `..Default::default()`) or load
/// it from JSON ([`Script::from_json`]); every field has a default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Script {
    /// Protocol versions supported (default: all five). Legacy versions
    /// enable the `initialize` handshake, `2026-07-28` enables the stateless
    /// era; both make a dual-era server.
    pub versions: Vec<String>,
    /// `serverInfo` (legacy) / `_meta["io.modelcontextprotocol/serverInfo"]` (modern).
    pub server_info: Value,
    /// Instructions returned by `initialize` / `server/discover`.
    pub instructions: Option<String>,
    /// Capabilities added to (and overriding) the built-in
    /// `{"tools": {"listChanged": true}, "logging": {}}`.
    pub capabilities: Map<String, Value>,
    /// The tools, in `tools/list` order.
    pub tools: Vec<ToolSpec>,
    /// The resources, in `resources/list` order. Any resource or template
    /// adds the capability `resources: {subscribe: true, listChanged: true}`.
    pub resources: Vec<ResourceSpec>,
    /// The resource templates, in `resources/templates/list` order.
    pub resource_templates: Vec<ResourceTemplateSpec>,
    /// The prompts, in `prompts/list` order. Any prompt adds the capability
    /// `prompts: {listChanged: true}`; any completion (of a prompt or a
    /// template) adds `completions: {}`.
    pub prompts: Vec<PromptSpec>,
    /// Skills served through the Skills extension (`skills/list`,
    /// `skills/get`, their files as `skill://` resources). Any skill
    /// declares the extension (and the `resources` capability).
    pub skills: Vec<crate::skills::SkillSpec>,
    /// Declare `directoryRead: true` and answer `resources/directory/read`.
    pub skills_directory_read: bool,
    /// Items per page of every list (`tools/list`, `resources/list`,
    /// `resources/templates/list`, `prompts/list`, `tasks/list`; default:
    /// all in one page). Cursors are `page-<n>`; an unknown one is `-32602`.
    pub page_size: Option<usize>,
    /// Every `tools/list` page has `nextCursor: "again"` and `"again"` gives
    /// the first page again: a client must detect the cycle.
    pub cyclic_cursor: bool,
    /// Every `tools/list` page has a new `nextCursor`; pages after the last
    /// tool are empty: a client must stop following at its page bound.
    pub endless_pages: bool,
    /// `ttlMs` on 2026-07-28 `server/discover`, `tools/list`,
    /// `prompts/list`, `resources/list`, `resources/templates/list` and
    /// `resources/read` results (not on `input_required` ones).
    pub ttl_ms: u64,
    /// `cacheScope` on the same results.
    pub cache_scope: CacheScope,
    /// `pollInterval` (2025-11-25) / `pollIntervalMs` (2026-07-28) of tasks (default 50).
    pub task_poll_interval_ms: u64,
    /// Task time-to-live when the client asks for none (2025-11-25 `ttl`,
    /// 2026-07-28 `ttlMs`; `None`: unlimited, sent as `null`; default
    /// 60 000). Expired tasks are not deleted.
    pub task_ttl_ms: Option<u64>,
    /// Send task status notifications (2025-11-25
    /// `notifications/tasks/status`; 2026-07-28 `notifications/tasks` on
    /// listen streams that acknowledged the task id). Default true.
    pub task_status_notifications: bool,
    /// Most tasks kept (default 1024); beyond it a task-making call is `-32603`.
    pub max_tasks: usize,
    /// Most open `subscriptions/listen` streams, and most legacy
    /// `resources/subscribe` URIs (default 64); beyond it `-32603`.
    pub max_subscriptions: usize,
    /// What a legacy-only server does with `server/discover`.
    pub on_probe: OnProbe,
    /// What a legacy server does with requests before `initialize`.
    pub pre_init: PreInit,
    /// Treat requests between the `initialize` answer and
    /// `notifications/initialized` like requests before `initialize`.
    pub strict_lifecycle: bool,
    /// Bytes written to stderr at start, from a separate task (e.g. 8 MiB to
    /// check that a client drains stderr).
    pub stderr_flood_bytes: u64,
    /// Start a `sleep 1000` child that outlives the server unless its process
    /// group is killed; its pid goes to stderr as `grandchild-pid=N`. It
    /// inherits stdout and stderr (like a wrapper script's child would) and
    /// gets a null stdin.
    pub spawn_grandchild: bool,
    /// Exit (code 1) right after answering `initialize`.
    pub exit_after_initialize: bool,
    /// Write a non-JSON line before anything else.
    pub garbage_on_start: bool,
    /// Longest input line accepted (default 64 MiB). A longer line is skipped
    /// up to its newline and answered with `-32600`, `id: null`.
    pub max_line_bytes: usize,
    /// Most tool calls (running, hanging, asking) at once (default 1024);
    /// beyond it calls get `-32603`.
    pub max_in_flight: usize,
    /// After end of input, how long running calls may still finish (default
    /// 2000 ms) before `serve` returns.
    pub eof_grace_ms: u64,
    /// How long `ask_client` waits for the client's response (legacy).
    pub ask_timeout_ms: u64,
}

impl Default for Script {
    fn default() -> Self {
        Self {
            versions: all_versions(),
            server_info: json!({"name": "mcp-testkit", "version": env!("CARGO_PKG_VERSION")}),
            instructions: None,
            capabilities: Map::new(),
            tools: Vec::new(),
            resources: Vec::new(),
            resource_templates: Vec::new(),
            prompts: Vec::new(),
            skills: Vec::new(),
            skills_directory_read: false,
            page_size: None,
            cyclic_cursor: false,
            endless_pages: false,
            ttl_ms: 0,
            cache_scope: CacheScope::default(),
            task_poll_interval_ms: 50,
            task_ttl_ms: Some(60_000),
            task_status_notifications: true,
            max_tasks: 1024,
            max_subscriptions: 64,
            on_probe: OnProbe::default(),
            pre_init: PreInit::default(),
            strict_lifecycle: false,
            stderr_flood_bytes: 0,
            spawn_grandchild: false,
            exit_after_initialize: false,
            garbage_on_start: false,
            max_line_bytes: 64 << 20,
            max_in_flight: 1024,
            eof_grace_ms: 2000,
            ask_timeout_ms: 30_000,
        }
    }
}

fn all_versions() -> Vec<String> {
    wire::LEGACY_VERSIONS
        .iter()
        .chain(wire::MODERN_VERSIONS.iter())
        .map(|v| (*v).to_owned())
        .collect()
}

/// One tool: its `tools/list` JSON plus what it does when called.
///
/// In JSON the tool's fields and `behavior` sit side by side:
/// `{"name": "echo", "inputSchema": {...}, "behavior": {"kind": "echo"}}`,
/// with optional `task_support`, `appear_at_change`, `vanish_at_change`
/// and `needs_client`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool as listed (`name`, `description`, `inputSchema`, …), sent verbatim.
    #[serde(flatten)]
    pub tool: Map<String, Value>,
    /// What a call does.
    pub behavior: Behavior,
    /// Whether the call can run as a task (see [`TaskSupport`]). At
    /// 2025-11-25 it is listed as `execution.taskSupport` unless the tool
    /// JSON has its own `execution`. `None`: the tool JSON's
    /// `execution.taskSupport`, if any, decides; else forbidden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
    /// Listed (and callable) only once the tool list changed this many times.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub appear_at_change: u32,
    /// No longer listed (nor callable) once the tool list changed this many times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vanish_at_change: Option<u32>,
    /// Listed only to a client that declared this capability
    /// (`elicitation`, `sampling`, …: in `initialize`, or in a 2026-07-28
    /// request's `_meta`), as some servers hide the tools that would ask
    /// it. Still callable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_client: Option<String>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl ToolSpec {
    /// The tool's `name`, if it has a string one.
    pub fn name(&self) -> Option<&str> {
        self.tool.get("name").and_then(Value::as_str)
    }

    /// A tool named `name` with a description and an `inputSchema` fitting
    /// `behavior` (e.g. `{text: string}` for echo, `{a, b: number}` for add).
    pub fn new(name: &str, behavior: Behavior) -> Self {
        let (description, input_schema) = default_shape(&behavior);
        let mut tool = Map::new();
        tool.insert("name".into(), name.into());
        tool.insert("description".into(), description.into());
        tool.insert("inputSchema".into(), input_schema);
        Self::from_parts(tool, behavior)
    }

    /// A tool listed exactly as `tool` (a JSON object; anything else lists as `{}`).
    pub fn from_json(tool: Value, behavior: Behavior) -> Self {
        let tool = match tool {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Self::from_parts(tool, behavior)
    }

    fn from_parts(tool: Map<String, Value>, behavior: Behavior) -> Self {
        Self {
            tool,
            behavior,
            task_support: None,
            appear_at_change: 0,
            vanish_at_change: None,
            needs_client: None,
        }
    }

    /// Lists the tool only to a client that declared `capability`.
    pub fn needs_client(mut self, capability: &str) -> Self {
        self.needs_client = Some(capability.to_owned());
        self
    }

    /// Sets whether the tool can run as a task.
    pub fn with_task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = Some(support);
        self
    }

    /// Lists the tool only once the tool list changed `changes` times.
    pub fn appearing_at_change(mut self, changes: u32) -> Self {
        self.appear_at_change = changes;
        self
    }

    /// Stops listing the tool once the tool list changed `changes` times.
    pub fn vanishing_at_change(mut self, changes: u32) -> Self {
        self.vanish_at_change = Some(changes);
        self
    }

    /// The effective task support: the field, else the tool JSON's
    /// `execution.taskSupport`, else forbidden.
    pub(crate) fn effective_task_support(&self) -> TaskSupport {
        self.task_support.unwrap_or_else(|| {
            match self
                .tool
                .get("execution")
                .and_then(|e| e.get("taskSupport"))
                .and_then(Value::as_str)
            {
                Some("optional") => TaskSupport::Optional,
                Some("required") => TaskSupport::Required,
                _ => TaskSupport::Forbidden,
            }
        })
    }
}

fn default_shape(behavior: &Behavior) -> (&'static str, Value) {
    let empty = json!({"type": "object", "properties": {}});
    match behavior {
        Behavior::Echo => (
            "Returns the given text.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        ),
        Behavior::Add => (
            "Adds two numbers.",
            json!({"type": "object",
                   "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                   "required": ["a", "b"]}),
        ),
        Behavior::Sleep { .. } => ("Waits, reporting progress when asked.", empty),
        Behavior::Search { .. } => (
            "Searches canned items.",
            json!({"type": "object",
                   "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
                   "required": ["query"]}),
        ),
        _ => ("A scripted test tool.", empty),
    }
}

/// Builder-style helpers. Each consumes and returns the script.
impl Script {
    /// A legacy-only server (2024-11-05 … 2025-11-25), no tools.
    pub fn legacy() -> Self {
        Self::default().versions(wire::LEGACY_VERSIONS)
    }

    /// A 2026-07-28-only server, no tools.
    pub fn modern() -> Self {
        Self::default().versions(wire::MODERN_VERSIONS)
    }

    /// A dual-era server (all five versions), no tools. Same as `default()`.
    pub fn dual() -> Self {
        Self::default()
    }

    /// The binary's default: dual-era with `echo`, `add` and `sleep`
    /// (`sleep` takes 1 s in 10 progress steps).
    pub fn basic() -> Self {
        Self::dual()
            .tool("echo", Behavior::Echo)
            .tool("add", Behavior::Add)
            .tool(
                "sleep",
                Behavior::Sleep {
                    ms: 1000,
                    progress_steps: 10,
                },
            )
    }

    /// Replaces the supported versions.
    pub fn versions<I, S>(mut self, versions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.versions = versions.into_iter().map(Into::into).collect();
        self
    }

    /// Adds a tool with a default description and input schema (see [`ToolSpec::new`]).
    pub fn tool(mut self, name: &str, behavior: Behavior) -> Self {
        self.tools.push(ToolSpec::new(name, behavior));
        self
    }

    /// Adds a tool given as its full `tools/list` JSON object (non-objects
    /// become a tool without fields, which [`Script::validate`] refuses).
    pub fn tool_json(mut self, tool: Value, behavior: Behavior) -> Self {
        self.tools.push(ToolSpec::from_json(tool, behavior));
        self
    }

    /// Adds a fully specified tool (task support, visibility).
    pub fn tool_spec(mut self, tool: ToolSpec) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds a tool that can run as a task (see [`TaskSupport`]).
    pub fn task_tool(self, name: &str, behavior: Behavior, support: TaskSupport) -> Self {
        self.tool_spec(ToolSpec::new(name, behavior).with_task_support(support))
    }

    /// Adds a skill (see [`crate::skills::SkillSpec`]).
    pub fn skill(mut self, skill: crate::skills::SkillSpec) -> Self {
        self.skills.push(skill);
        self
    }

    /// Declares `directoryRead: true` for the skills and answers
    /// `resources/directory/read`.
    pub fn skills_directory_read(mut self) -> Self {
        self.skills_directory_read = true;
        self
    }

    /// Adds a resource.
    pub fn resource(mut self, resource: ResourceSpec) -> Self {
        self.resources.push(resource);
        self
    }

    /// Adds a resource template.
    pub fn resource_template(mut self, template: ResourceTemplateSpec) -> Self {
        self.resource_templates.push(template);
        self
    }

    /// Adds a prompt.
    pub fn prompt(mut self, prompt: PromptSpec) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Sets the 2026-07-28 cache hints (`ttlMs`, `cacheScope`).
    pub fn cache_hints(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.ttl_ms = ttl_ms;
        self.cache_scope = scope;
        self
    }

    /// Sets `serverInfo`.
    pub fn server_info(mut self, name: &str, version: &str) -> Self {
        self.server_info = json!({"name": name, "version": version});
        self
    }

    /// Sets the instructions.
    pub fn instructions(mut self, text: &str) -> Self {
        self.instructions = Some(text.to_owned());
        self
    }

    /// Adds (or overrides) one server capability.
    pub fn capability(mut self, name: &str, value: Value) -> Self {
        self.capabilities.insert(name.to_owned(), value);
        self
    }

    /// Sets the page size of every list.
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = Some(size);
        self
    }

    /// Makes `tools/list` cycle: every page says `nextCursor: "again"`.
    pub fn cyclic_cursor(mut self) -> Self {
        self.cyclic_cursor = true;
        self
    }

    /// Makes `tools/list` endless: every page has a new `nextCursor`.
    pub fn endless_pages(mut self) -> Self {
        self.endless_pages = true;
        self
    }

    /// Sets what a legacy-only server does with `server/discover`.
    pub fn on_probe(mut self, on_probe: OnProbe) -> Self {
        self.on_probe = on_probe;
        self
    }

    /// Sets what a legacy server does before `initialize`.
    pub fn pre_init(mut self, pre_init: PreInit) -> Self {
        self.pre_init = pre_init;
        self
    }

    /// Parses a script from JSON and [validates](Self::validate) it.
    pub fn from_json(text: &str) -> Result<Self, TestkitError> {
        let script: Self = serde_json::from_str(text).map_err(TestkitError::ScriptParse)?;
        script.validate()?;
        Ok(script)
    }

    /// Reads, parses and validates a script file.
    pub fn from_file(path: &Path) -> Result<Self, TestkitError> {
        let text = std::fs::read_to_string(path).map_err(|source| TestkitError::ScriptRead {
            path: path.to_owned(),
            source,
        })?;
        Self::from_json(&text)
    }

    /// Checks what serde cannot: known versions, named and unique tools,
    /// sizes within the testkit's bounds.
    pub fn validate(&self) -> Result<(), ScriptProblem> {
        if self.versions.is_empty() {
            return Err(ScriptProblem::NoVersions);
        }
        if let Some(v) = self
            .versions
            .iter()
            .find(|v| !wire::is_legacy(v) && !wire::is_modern(v))
        {
            return Err(ScriptProblem::UnknownVersion(v.clone()));
        }
        let mut names = std::collections::HashSet::new();
        for (index, tool) in self.tools.iter().enumerate() {
            let name = tool.name().ok_or(ScriptProblem::ToolWithoutName(index))?;
            if !names.insert(name) {
                return Err(ScriptProblem::DuplicateTool(name.to_owned()));
            }
            check_behavior(&tool.behavior)?;
        }
        self.validate_content()?;
        if self.page_size == Some(0) {
            return Err(ScriptProblem::ZeroPageSize);
        }
        if self.cyclic_cursor && self.endless_pages {
            return Err(ScriptProblem::ConflictingPagination);
        }
        if self.max_line_bytes == 0 {
            return Err(ScriptProblem::ZeroLimit("max_line_bytes"));
        }
        if self.max_in_flight == 0 {
            return Err(ScriptProblem::ZeroLimit("max_in_flight"));
        }
        if self.max_tasks == 0 {
            return Err(ScriptProblem::ZeroLimit("max_tasks"));
        }
        if self.max_subscriptions == 0 {
            return Err(ScriptProblem::ZeroLimit("max_subscriptions"));
        }
        check_size(
            "stderr_flood_bytes",
            self.stderr_flood_bytes,
            MAX_STDERR_FLOOD_BYTES,
        )
    }

    /// Resources, templates and prompts: named, unique, well-formed.
    fn validate_content(&self) -> Result<(), ScriptProblem> {
        let mut uris = std::collections::HashSet::new();
        for (index, resource) in self.resources.iter().enumerate() {
            let uri = resource
                .uri()
                .ok_or(ScriptProblem::ResourceWithoutUri(index))?;
            if !uris.insert(uri) {
                return Err(ScriptProblem::DuplicateResource(uri.to_owned()));
            }
            if resource.text.is_some() && resource.blob.is_some() {
                return Err(ScriptProblem::TextAndBlob(uri.to_owned()));
            }
            check_input(resource.input.as_ref())?;
        }
        for (index, template) in self.resource_templates.iter().enumerate() {
            template
                .uri_template()
                .ok_or(ScriptProblem::TemplateWithoutUriTemplate(index))?;
        }
        let mut names = std::collections::HashSet::new();
        for (index, prompt) in self.prompts.iter().enumerate() {
            let name = prompt
                .name()
                .ok_or(ScriptProblem::PromptWithoutName(index))?;
            if !names.insert(name) {
                return Err(ScriptProblem::DuplicatePrompt(name.to_owned()));
            }
            check_input(prompt.input.as_ref())?;
        }
        Ok(())
    }

    /// The legacy versions this script supports, oldest first.
    pub(crate) fn legacy_versions(&self) -> impl Iterator<Item = &str> {
        self.versions
            .iter()
            .map(String::as_str)
            .filter(|v| wire::is_legacy(v))
    }

    /// Whether the script supports `version` and it is a modern one.
    pub(crate) fn supports_modern(&self, version: &str) -> bool {
        wire::is_modern(version) && self.versions.iter().any(|v| v == version)
    }

    pub(crate) fn has_modern(&self) -> bool {
        self.versions.iter().any(|v| wire::is_modern(v))
    }

    pub(crate) fn has_legacy(&self) -> bool {
        self.legacy_versions().next().is_some()
    }

    /// The newest legacy version supported (versions are dates, so the
    /// lexical maximum is the newest).
    pub(crate) fn latest_legacy(&self) -> Option<&str> {
        self.legacy_versions().max()
    }

    /// Built-in legacy capabilities with the script's additions on top.
    pub(crate) fn server_capabilities(&self) -> Value {
        self.capabilities_for(false)
    }

    /// Built-in capabilities of one era with the script's additions on top:
    /// `tools` and `logging` always; `resources`, `prompts`, `completions`
    /// when the script has them; tasks when a tool can run as one
    /// (2025-11-25 `tasks`, 2026-07-28 the `io.modelcontextprotocol/tasks`
    /// extension).
    pub(crate) fn capabilities_for(&self, modern: bool) -> Value {
        let mut caps = Map::new();
        caps.insert("tools".into(), json!({"listChanged": true}));
        caps.insert("logging".into(), json!({}));
        if self.has_resources() {
            caps.insert(
                "resources".into(),
                json!({"subscribe": true, "listChanged": true}),
            );
        }
        if !self.prompts.is_empty() {
            caps.insert("prompts".into(), json!({"listChanged": true}));
        }
        if self.has_completions() {
            caps.insert("completions".into(), json!({}));
        }
        if self.has_task_tools() {
            if modern {
                caps.insert("extensions".into(), json!({wire::TASKS_EXTENSION: {}}));
            } else {
                caps.insert(
                    "tasks".into(),
                    json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
                );
            }
        }
        if !self.skills.is_empty() {
            caps.entry("resources")
                .or_insert_with(|| json!({"subscribe": true, "listChanged": true}));
            let extensions = caps.entry("extensions").or_insert_with(|| json!({}));
            extensions[crate::skills::SKILLS_EXTENSION] =
                json!({"directoryRead": self.skills_directory_read});
        }
        for (name, value) in &self.capabilities {
            caps.insert(name.clone(), value.clone());
        }
        Value::Object(caps)
    }

    pub(crate) fn has_resources(&self) -> bool {
        !self.resources.is_empty()
            || !self.resource_templates.is_empty()
            || !self.skills.is_empty()
            || self.capabilities.contains_key("resources")
    }

    pub(crate) fn has_prompts(&self) -> bool {
        !self.prompts.is_empty() || self.capabilities.contains_key("prompts")
    }

    pub(crate) fn has_completions(&self) -> bool {
        self.prompts.iter().any(|p| !p.completions.is_empty())
            || self
                .resource_templates
                .iter()
                .any(|t| !t.completions.is_empty())
            || self.capabilities.contains_key("completions")
    }

    pub(crate) fn has_task_tools(&self) -> bool {
        self.tools
            .iter()
            .any(|t| t.effective_task_support() != TaskSupport::Forbidden)
    }

    /// The tool named `name` if it is listed after `changes` tool-list changes.
    pub(crate) fn visible_tool(&self, name: &str, changes: u32) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| {
            t.name() == Some(name) && visible(t.appear_at_change, t.vanish_at_change, changes)
        })
    }
}

fn check_input(input: Option<&InputSpec>) -> Result<(), ScriptProblem> {
    let Some(input) = input else { return Ok(()) };
    if input.rounds == 0 {
        return Err(ScriptProblem::ZeroLimit("input.rounds"));
    }
    if input.requests.is_empty() {
        return Err(ScriptProblem::ZeroLimit("input.requests"));
    }
    check_count(
        "input.rounds",
        u64::from(input.rounds),
        u64::from(MAX_INPUT_ROUNDS),
    )?;
    check_count(
        "input.requests",
        input.requests.len() as u64,
        MAX_INPUT_REQUESTS as u64,
    )
}

fn check_count(what: &'static str, requested: u64, limit: u64) -> Result<(), ScriptProblem> {
    if requested > limit {
        Err(ScriptProblem::TooMany {
            what,
            requested,
            limit,
        })
    } else {
        Ok(())
    }
}

fn check_behavior(behavior: &Behavior) -> Result<(), ScriptProblem> {
    match behavior {
        Behavior::Oversized { bytes } => check_size("oversized.bytes", *bytes, MAX_OVERSIZED_BYTES),
        Behavior::Blob { kb } => check_size(
            "blob.kb * 1024",
            kb.saturating_mul(1024),
            MAX_BLOB_KB * 1024,
        ),
        Behavior::Log { level, .. } if crate::state::log_rank(level).is_none() => {
            Err(ScriptProblem::UnknownLogLevel(level.clone()))
        }
        Behavior::Ask(input) => check_input(Some(input)),
        Behavior::Content { logs, .. } => match logs
            .iter()
            .find(|log| crate::state::log_rank(&log.level).is_none())
        {
            Some(log) => Err(ScriptProblem::UnknownLogLevel(log.level.clone())),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

fn check_size(what: &'static str, requested: u64, limit: u64) -> Result<(), ScriptProblem> {
    if requested > limit {
        Err(ScriptProblem::TooLarge {
            what,
            requested,
            limit,
        })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_script_with_defaults_and_behaviors_parses() {
        let script = Script::from_json(
            r#"{"versions": ["2025-06-18"],
                "tools": [{"name": "s", "behavior": {"kind": "sleep", "ms": 5}},
                          {"name": "c", "behavior": {"kind": "crash"}}],
                "on_probe": {"kind": "unsupported_version", "versions": ["2026-07-28"]}}"#,
        )
        .unwrap();
        assert_eq!(script.versions, ["2025-06-18"]);
        assert_eq!(
            script.tools[0].behavior,
            Behavior::Sleep {
                ms: 5,
                progress_steps: 0
            }
        );
        assert_eq!(script.tools[1].behavior, Behavior::Crash { code: 1 });
        assert_eq!(script.max_line_bytes, 64 << 20);
        assert!(!script.has_modern());
    }

    #[test]
    fn unknown_fields_and_versions_are_refused() {
        assert!(matches!(
            Script::from_json(r#"{"verions": []}"#),
            Err(TestkitError::ScriptParse(_))
        ));
        assert!(matches!(
            Script::from_json(r#"{"versions": ["1999-01-01"]}"#),
            Err(TestkitError::ScriptInvalid(ScriptProblem::UnknownVersion(v))) if v == "1999-01-01"
        ));
    }

    #[test]
    fn duplicate_tools_and_oversized_limits_are_refused() {
        let dup = Script::dual()
            .tool("a", Behavior::Echo)
            .tool("a", Behavior::Add);
        assert_eq!(
            dup.validate(),
            Err(ScriptProblem::DuplicateTool("a".into()))
        );
        let big = Script::dual().tool(
            "o",
            Behavior::Oversized {
                bytes: MAX_OVERSIZED_BYTES + 1,
            },
        );
        assert!(matches!(
            big.validate(),
            Err(ScriptProblem::TooLarge {
                what: "oversized.bytes",
                ..
            })
        ));
    }

    #[test]
    fn new_behaviours_and_content_parse_from_json() {
        let script = Script::from_json(
            r#"{"tools": [
                  {"name": "l", "behavior": {"kind": "log", "level": "warning", "message": {"a": 1}}},
                  {"name": "t", "behavior": {"kind": "touch_resource", "uri": "file:///a"}},
                  {"name": "c", "behavior": {"kind": "change_list", "list": "prompts"}},
                  {"name": "e", "behavior": {"kind": "end_listen", "how": "graceful"}},
                  {"name": "k", "behavior": {"kind": "ask", "rounds": 2, "requests":
                      {"r": {"method": "roots/list"}}}, "task_support": "optional",
                   "appear_at_change": 1}
                ],
                "prompts": [{"name": "p", "arguments": [{"name": "x", "required": true}],
                             "completions": [{"argument": "x", "values": ["a"]}]}],
                "task_poll_interval_ms": 5, "task_ttl_ms": null}"#,
        )
        .unwrap();
        assert_eq!(
            script.tools[3].behavior,
            Behavior::EndListen {
                how: crate::specs::ListenEnd::Graceful,
                code: 1
            }
        );
        let Behavior::Ask(input) = &script.tools[4].behavior else {
            panic!("not ask: {:?}", script.tools[4].behavior);
        };
        assert_eq!(input.rounds, 2);
        assert_eq!(script.tools[4].task_support, Some(TaskSupport::Optional));
        assert_eq!(script.tools[4].appear_at_change, 1);
        assert!(!script.tools[4].tool.contains_key("task_support"));
        assert_eq!(script.task_ttl_ms, None);
        assert!(script.has_completions() && script.has_prompts() && script.has_task_tools());
        let round_trip: Script =
            serde_json::from_value(serde_json::to_value(&script).unwrap()).unwrap();
        assert_eq!(round_trip, script);
    }

    #[test]
    fn bad_content_is_refused() {
        let level = Script::from_json(
            r#"{"tools": [{"name": "l", "behavior": {"kind": "log", "level": "loud", "message": 1}}]}"#,
        );
        assert!(matches!(
            level,
            Err(TestkitError::ScriptInvalid(ScriptProblem::UnknownLogLevel(l))) if l == "loud"
        ));
        let rounds = Script::from_json(
            r#"{"tools": [{"name": "k", "behavior": {"kind": "ask", "rounds": 0, "requests": {"r": {"method": "roots/list"}}}}]}"#,
        );
        assert!(matches!(
            rounds,
            Err(TestkitError::ScriptInvalid(ScriptProblem::ZeroLimit(
                "input.rounds"
            )))
        ));
        let prompts = Script::dual()
            .prompt(PromptSpec::new("p"))
            .prompt(PromptSpec::new("p"));
        assert_eq!(
            prompts.validate(),
            Err(ScriptProblem::DuplicatePrompt("p".into()))
        );
        let unnamed = Script::from_json(r#"{"resources": [{"name": "no uri"}]}"#);
        assert!(matches!(
            unnamed,
            Err(TestkitError::ScriptInvalid(
                ScriptProblem::ResourceWithoutUri(0)
            ))
        ));
    }

    #[test]
    fn latest_legacy_is_the_newest_date() {
        let script = Script::dual().versions(["2025-03-26", "2024-11-05", "2026-07-28"]);
        assert_eq!(script.latest_legacy(), Some("2025-03-26"));
        assert!(script.supports_modern("2026-07-28"));
        assert!(!script.supports_modern("2025-03-26"));
    }
}
