//! Argument completion (`completion/complete`).

use std::collections::BTreeMap;

use serde::de::Deserializer;
use serde::{Deserialize, Serialize, Serializer};

use crate::JsonObject;
use crate::common::RawObject;
use crate::input_required::ResultType;
use crate::meta::Meta;
use crate::open_struct::open_struct;

open_struct! {
    /// Refers to a prompt (`"type": "ref/prompt"`).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct PromptReference {
        @tag "type" = "ref/prompt";
        /// The prompt's name.
        req name: String = "name",
        /// 2025-06-18+: human-readable name.
        opt title: String = "title",
    }
}

open_struct! {
    /// Refers to a resource template (`"type": "ref/resource"`; `ResourceReference`
    /// before 2025-06-18).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ResourceTemplateReference {
        @tag "type" = "ref/resource";
        /// The URI template (or URI).
        req uri: String = "uri",
    }
}

/// What a completion is for.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CompletionReference {
    /// A prompt's argument.
    Prompt(PromptReference),
    /// A resource template's variable.
    ResourceTemplate(ResourceTemplateReference),
    /// A reference kind this crate does not know, kept as sent.
    Unknown(JsonObject),
}

impl Serialize for CompletionReference {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            CompletionReference::Prompt(r) => r.serialize(s),
            CompletionReference::ResourceTemplate(r) => r.serialize(s),
            CompletionReference::Unknown(obj) => obj.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for CompletionReference {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Cold path: buffer as raw text, then choose by `type`.
        let obj = RawObject::deserialize(d)?;
        let result = match obj.str_member("type").as_deref() {
            Some("ref/prompt") => obj.decode().map(CompletionReference::Prompt),
            Some("ref/resource") => obj.decode().map(CompletionReference::ResourceTemplate),
            _ => obj.decode().map(CompletionReference::Unknown),
        };
        result.map_err(serde::de::Error::custom)
    }
}

open_struct! {
    /// The argument being completed.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CompletionArgument {
        /// The argument's name.
        req name: String = "name",
        /// What the user has typed so far.
        req value: String = "value",
    }
}

open_struct! {
    /// Context for a completion (2025-06-18+).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CompletionContext {
        /// Values of arguments already resolved.
        opt arguments: BTreeMap<String, String> = "arguments",
    }
}

open_struct! {
    /// Params of `completion/complete`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct CompleteParams {
        /// What is being completed.
        req reference: CompletionReference = "ref",
        /// The argument and its partial value.
        req argument: CompletionArgument = "argument",
        /// 2025-06-18+: already-resolved arguments.
        opt context: CompletionContext = "context",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl CompleteParams {
    /// Params completing `argument` of `reference`.
    pub fn new(reference: CompletionReference, argument: CompletionArgument) -> Self {
        CompleteParams {
            reference,
            argument,
            context: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

open_struct! {
    /// The completion values.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Completion {
        /// Suggested values (at most 100).
        req values: Vec<String> = "values",
        /// Total number of matches, if known.
        opt total: u64 = "total",
        /// Whether more values exist than returned.
        opt has_more: bool = "hasMore",
    }
}

open_struct! {
    /// Result of `completion/complete`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CompleteResult {
        /// The completion.
        req completion: Completion = "completion",
        /// 2026-07-28: the result's kind.
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: Meta = "_meta",
    }
}
