//! Client and server capabilities: the union of every version's members.
//!
//! Every capability object is open: unknown keys (a newer version's capability, a
//! vendor's) are kept in `extra` and written back unchanged. `experimental` and
//! `extensions` are free-form maps of objects.

use serde_json::Value;

use crate::JsonObject;
use crate::open_struct::open_struct;

/// The extension identifier of the tasks extension (2026-07-28), used as a key of
/// `extensions` in both client and server capabilities.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Free-form capability sets keyed by name (`experimental`, `extensions`). The
/// values are objects per the schema, kept as any JSON so that one odd entry does
/// not make the whole capability object unreadable.
pub type CapabilityMap = JsonObject;

open_struct! {
    /// What a client supports. Legacy versions send it once in `initialize`;
    /// 2026-07-28 sends it with every request in `_meta`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ClientCapabilities {
        /// Non-standard experimental capabilities.
        opt experimental: CapabilityMap = "experimental",
        /// 2026-07-28: extensions the client supports, keyed by identifier
        /// (e.g. [`TASKS_EXTENSION`]).
        opt extensions: CapabilityMap = "extensions",
        /// The client can list roots.
        opt roots: RootsCapability = "roots",
        /// The client can sample from an LLM.
        opt sampling: SamplingCapability = "sampling",
        /// 2025-06-18+: the client can elicit input from the user.
        opt elicitation: ElicitationCapability = "elicitation",
        /// 2025-11-25: task-augmented requests the client supports.
        opt tasks: ClientTasksCapability = "tasks",
    }
}

impl ClientCapabilities {
    /// Whether `extensions` declares `id`.
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }

    /// Declares extension `id` with no settings.
    pub fn add_extension(&mut self, id: &str) {
        self.extensions
            .get_or_insert_with(Default::default)
            .entry(id.to_owned())
            .or_insert_with(|| Value::Object(JsonObject::new()));
    }
}

open_struct! {
    /// `roots` client capability.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct RootsCapability {
        /// ≤ 2025-11-25: the client sends `notifications/roots/list_changed`.
        opt list_changed: bool = "listChanged",
    }
}

open_struct! {
    /// `sampling` client capability.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct SamplingCapability {
        /// 2025-11-25+: the client honours `includeContext` other than `none`
        /// (soft-deprecated).
        opt context: JsonObject = "context",
        /// 2025-11-25+: the client supports `tools` and `toolChoice` in sampling.
        opt tools: JsonObject = "tools",
    }
}

open_struct! {
    /// `elicitation` client capability. An empty object means form mode only.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ElicitationCapability {
        /// 2025-11-25+: form-mode elicitation.
        opt form: JsonObject = "form",
        /// 2025-11-25+: URL-mode elicitation.
        opt url: JsonObject = "url",
    }
}

open_struct! {
    /// `tasks` client capability (2025-11-25): task-augmented requests the client
    /// accepts from the server.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ClientTasksCapability {
        /// The client supports `tasks/list`.
        opt list: JsonObject = "list",
        /// The client supports `tasks/cancel`.
        opt cancel: JsonObject = "cancel",
        /// Which server requests may be task-augmented.
        opt requests: ClientTaskRequests = "requests",
    }
}

open_struct! {
    /// `tasks.requests` of the client capabilities (2025-11-25).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ClientTaskRequests {
        /// `{"createMessage": {}}`: task-augmented `sampling/createMessage`.
        opt sampling: JsonObject = "sampling",
        /// `{"create": {}}`: task-augmented `elicitation/create`.
        opt elicitation: JsonObject = "elicitation",
    }
}

open_struct! {
    /// What a server supports (from `initialize` or `server/discover`).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ServerCapabilities {
        /// Non-standard experimental capabilities.
        opt experimental: CapabilityMap = "experimental",
        /// 2026-07-28: extensions the server supports, keyed by identifier.
        opt extensions: CapabilityMap = "extensions",
        /// The server can send log messages.
        opt logging: JsonObject = "logging",
        /// 2025-03-26+: the server supports argument completion.
        opt completions: JsonObject = "completions",
        /// The server offers prompts.
        opt prompts: PromptsCapability = "prompts",
        /// The server offers resources.
        opt resources: ResourcesCapability = "resources",
        /// The server offers tools.
        opt tools: ToolsCapability = "tools",
        /// 2025-11-25: task-augmented requests the server accepts.
        opt tasks: ServerTasksCapability = "tasks",
    }
}

impl ServerCapabilities {
    /// Whether `extensions` declares `id`.
    pub fn has_extension(&self, id: &str) -> bool {
        self.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }
}

open_struct! {
    /// `prompts` server capability.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct PromptsCapability {
        /// The server notifies when the prompt list changes.
        opt list_changed: bool = "listChanged",
    }
}

open_struct! {
    /// `resources` server capability.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ResourcesCapability {
        /// The server supports subscribing to resource updates.
        opt subscribe: bool = "subscribe",
        /// The server notifies when the resource list changes.
        opt list_changed: bool = "listChanged",
    }
}

open_struct! {
    /// `tools` server capability.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ToolsCapability {
        /// The server notifies when the tool list changes.
        opt list_changed: bool = "listChanged",
    }
}

open_struct! {
    /// `tasks` server capability (2025-11-25).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ServerTasksCapability {
        /// The server supports `tasks/list`.
        opt list: JsonObject = "list",
        /// The server supports `tasks/cancel`.
        opt cancel: JsonObject = "cancel",
        /// Which client requests may be task-augmented.
        opt requests: ServerTaskRequests = "requests",
    }
}

open_struct! {
    /// `tasks.requests` of the server capabilities (2025-11-25).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ServerTaskRequests {
        /// `{"call": {}}`: task-augmented `tools/call`.
        opt tools: JsonObject = "tools",
    }
}
