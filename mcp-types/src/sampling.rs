//! Sampling: the server asks the client's LLM for a message
//! (`sampling/createMessage`).

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Number;

use crate::JsonObject;
use crate::content::{ContentBlock, Role, visit_content_block};
use crate::input_required::ResultType;
use crate::meta::Meta;
use crate::open_struct::{open_enum, open_struct};
use crate::tasks::TaskMetadata;
use crate::tools::Tool;

// Transient message values decoded once and consumed: boxing the large variant
// would add an allocation on the common path for no lasting memory gain.
#[allow(clippy::large_enum_variant)]
/// The content of a sampling message: one block, or (2025-11-25+) several.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SamplingContent {
    /// A single content block (every version).
    Single(ContentBlock),
    /// Several content blocks (2025-11-25+; e.g. parallel tool uses).
    Multiple(Vec<ContentBlock>),
}

impl SamplingContent {
    /// The blocks, whichever form they came in.
    pub fn blocks(&self) -> &[ContentBlock] {
        match self {
            SamplingContent::Single(b) => std::slice::from_ref(b),
            SamplingContent::Multiple(v) => v,
        }
    }
}

impl From<ContentBlock> for SamplingContent {
    fn from(b: ContentBlock) -> Self {
        SamplingContent::Single(b)
    }
}

impl Serialize for SamplingContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SamplingContent::Single(b) => b.serialize(s),
            SamplingContent::Multiple(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = SamplingContent;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a content block or an array of content blocks")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<SamplingContent, A::Error> {
                visit_content_block(map).map(SamplingContent::Single)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SamplingContent, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
                while let Some(b) = seq.next_element::<ContentBlock>()? {
                    blocks.push(b);
                }
                Ok(SamplingContent::Multiple(blocks))
            }
        }
        d.deserialize_any(ContentVisitor)
    }
}

open_struct! {
    /// A message in a sampling conversation.
    #[derive(Clone, Debug, PartialEq)]
    pub struct SamplingMessage {
        /// Who says it.
        req role: Role = "role",
        /// What is said.
        req content: SamplingContent = "content",
        /// 2025-11-25+: metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    schema;
    /// A hint for model selection.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ModelHint {
        /// A (sub)string of a model name.
        opt name: String = "name",
    }
}

open_struct! {
    schema;
    /// The server's preferences for model selection; priorities from 0 to 1, kept
    /// as sent.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ModelPreferences {
        /// Model name hints, in order of preference.
        opt hints: Vec<ModelHint> = "hints",
        /// How much cost matters.
        opt cost_priority: Number = "costPriority",
        /// How much speed matters.
        opt speed_priority: Number = "speedPriority",
        /// How much capability matters.
        opt intelligence_priority: Number = "intelligencePriority",
    }
}

open_enum! {
    /// Which MCP servers' context to include in the prompt (soft-deprecated in
    /// 2025-11-25 except `none`).
    pub enum IncludeContext {
        /// No context.
        None = "none",
        /// Context from the requesting server.
        ThisServer = "thisServer",
        /// Context from all servers.
        AllServers = "allServers",
    }
}

open_enum! {
    /// How the model may use the offered tools (2025-11-25+).
    pub enum ToolChoiceMode {
        /// The model decides.
        Auto = "auto",
        /// The model must use a tool.
        Required = "required",
        /// The model must not use tools.
        None = "none",
    }
}

open_struct! {
    /// Tool choice for sampling (2025-11-25+).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ToolChoice {
        /// The mode (default `auto`).
        opt mode: ToolChoiceMode = "mode",
    }
}

open_struct! {
    /// Params of `sampling/createMessage`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CreateMessageParams {
        /// The conversation.
        req messages: Vec<SamplingMessage> = "messages",
        /// Model preferences.
        opt model_preferences: ModelPreferences = "modelPreferences",
        /// System prompt (server prose).
        opt system_prompt: String = "systemPrompt",
        /// Which servers' context to include.
        opt include_context: IncludeContext = "includeContext",
        /// Sampling temperature, kept as sent.
        opt temperature: Number = "temperature",
        /// Maximum tokens to generate.
        req max_tokens: u64 = "maxTokens",
        /// Stop sequences.
        opt stop_sequences: Vec<String> = "stopSequences",
        /// Provider-specific metadata.
        opt metadata: JsonObject = "metadata",
        /// 2025-11-25+: tools the model may use.
        opt tools: Vec<Tool> = "tools",
        /// 2025-11-25+: how the model may use them.
        opt tool_choice: ToolChoice = "toolChoice",
        /// 2025-11-25: run the request as a task on the client.
        opt task: TaskMetadata = "task",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

open_enum! {
    /// Why sampling stopped (the schema keeps it an open string).
    pub enum StopReason {
        /// The model finished its turn.
        EndTurn = "endTurn",
        /// A stop sequence was hit.
        StopSequence = "stopSequence",
        /// `maxTokens` was reached.
        MaxTokens = "maxTokens",
        /// 2025-11-25+: the model wants to use tools.
        ToolUse = "toolUse",
    }
}

open_struct! {
    /// Result of `sampling/createMessage`, sent by the client.
    #[derive(Clone, Debug, PartialEq)]
    pub struct CreateMessageResult {
        /// Always the assistant in practice.
        req role: Role = "role",
        /// The generated content.
        req content: SamplingContent = "content",
        /// The model that generated it.
        req model: String = "model",
        /// Why generation stopped.
        opt stop_reason: StopReason = "stopReason",
        /// Never required for client results; kept for symmetry.
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}

impl CreateMessageResult {
    /// A result with the given content from `model`, role assistant.
    pub fn new(content: SamplingContent, model: impl Into<String>) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content,
            model: model.into(),
            stop_reason: None,
            result_type: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// A text answer from `model`: `CreateMessageResult::text("my-model", "Paris")`.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(ContentBlock::text(text).into(), model)
    }
}
