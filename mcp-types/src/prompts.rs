//! Prompts: listing and getting.

use std::collections::BTreeMap;

use crate::cache::CacheScope;
use crate::common::Cursor;
use crate::content::{ContentBlock, Role};
use crate::initialize::Icon;
use crate::input_required::{InputResponses, ResultType};
use crate::meta::Meta;
use crate::open_struct::open_struct;

open_struct! {
    /// A prompt (template) a server offers.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Prompt {
        /// Programmatic name.
        req name: String = "name",
        /// 2025-06-18+: human-readable name.
        opt title: String = "title",
        /// Description (server prose).
        opt description: String = "description",
        /// Arguments the prompt accepts.
        opt arguments: Vec<PromptArgument> = "arguments",
        /// 2025-11-25+: icons.
        opt icons: Vec<Icon> = "icons",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// An argument of a prompt.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct PromptArgument {
        /// Programmatic name.
        req name: String = "name",
        /// 2025-06-18+: human-readable name.
        opt title: String = "title",
        /// Description (server prose).
        opt description: String = "description",
        /// Whether the argument must be given.
        opt required: bool = "required",
    }
}

open_struct! {
    /// One message of a prompt.
    #[derive(Clone, Debug, PartialEq)]
    pub struct PromptMessage {
        /// Who says it.
        req role: Role = "role",
        /// What is said.
        req content: ContentBlock = "content",
    }
}

open_struct! {
    /// Result of `prompts/list`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ListPromptsResult {
        /// The prompts on this page.
        req prompts: Vec<Prompt> = "prompts",
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
    /// Params of `prompts/get`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct GetPromptParams {
        /// The prompt's name.
        req name: String = "name",
        /// Argument values.
        opt arguments: BTreeMap<String, String> = "arguments",
        /// 2026-07-28: answers to the server's `inputRequests` (retry after an
        /// `input_required` result).
        opt input_responses: InputResponses = "inputResponses",
        /// 2026-07-28: the opaque `requestState` echoed back on a retry.
        opt request_state: String = "requestState",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl GetPromptParams {
    /// Params getting `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Option<BTreeMap<String, String>>) -> Self {
        GetPromptParams {
            name: name.into(),
            arguments,
            ..Default::default()
        }
    }
}

open_struct! {
    /// Result of `prompts/get` (when complete).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct GetPromptResult {
        /// Description of the prompt (server prose).
        opt description: String = "description",
        /// The messages.
        req messages: Vec<PromptMessage> = "messages",
        /// 2026-07-28: the result's kind.
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}
