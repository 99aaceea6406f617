//! Content blocks: what tools return, prompts contain and sampling exchanges.
//!
//! [`ContentBlock`] covers every kind of every version (`text`, `image`, `audio`,
//! `resource_link`, `resource`, `tool_use`, `tool_result`); a kind this crate does
//! not know is kept whole as [`ContentBlock::Unknown`] and written back unchanged.
//!
//! Decoding is single-pass when `"type"` is the first member (what SDKs emit): the
//! kind is read, then the rest of the object goes straight into that kind's struct.
//! Only when `"type"` comes later is the object buffered into a map first.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Number, Value};

use crate::JsonObject;
use crate::initialize::Icon;
use crate::meta::Meta;
use crate::open_struct::open_struct;
use crate::resources::ResourceContents;

/// The sender or recipient of a message; also an annotation's audience.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// The user.
    User,
    /// The assistant (model).
    Assistant,
}

open_struct! {
    schema;
    /// Hints about how a client should use or show an object. Hints only: never
    /// policy.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Annotations {
        /// Who the object is intended for.
        opt audience: Vec<Role> = "audience",
        /// Importance from 0 (least) to 1 (most), kept as sent.
        opt priority: Number = "priority",
        /// 2025-06-18+: ISO 8601 time of the last modification.
        opt last_modified: String = "lastModified",
    }
}

open_struct! {
    /// Text content (`"type": "text"`).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct TextContent {
        @tag "type" = "text";
        /// The text.
        text text: String = "text",
        /// Annotations.
        opt annotations: Annotations = "annotations",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

impl TextContent {
    /// Text content with no annotations.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            text: text.into(),
            ..Default::default()
        }
    }
}

open_struct! {
    /// Image content (`"type": "image"`), base64 encoded.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ImageContent {
        @tag "type" = "image";
        /// Base64-encoded image data, kept as sent.
        req data: String = "data",
        /// MIME type of the image.
        req mime_type: String = "mimeType",
        /// Annotations.
        opt annotations: Annotations = "annotations",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// Audio content (`"type": "audio"`, 2025-03-26+), base64 encoded.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct AudioContent {
        @tag "type" = "audio";
        /// Base64-encoded audio data, kept as sent.
        req data: String = "data",
        /// MIME type of the audio.
        req mime_type: String = "mimeType",
        /// Annotations.
        opt annotations: Annotations = "annotations",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// A link to a resource (`"type": "resource_link"`, 2025-06-18+); not
    /// necessarily listed by `resources/list`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ResourceLink {
        @tag "type" = "resource_link";
        /// The resource's URI.
        req uri: String = "uri",
        /// Programmatic name.
        req name: String = "name",
        /// Human-readable name.
        opt title: String = "title",
        /// Description (server prose).
        opt description: String = "description",
        /// MIME type.
        opt mime_type: String = "mimeType",
        /// Size in bytes before encoding.
        opt size: u64 = "size",
        /// 2025-11-25+: icons.
        opt icons: Vec<Icon> = "icons",
        /// Annotations.
        opt annotations: Annotations = "annotations",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// A resource embedded in content (`"type": "resource"`).
    #[derive(Clone, Debug, PartialEq)]
    pub struct EmbeddedResource {
        @tag "type" = "resource";
        /// The resource's contents (text or blob).
        req resource: ResourceContents = "resource",
        /// Annotations.
        opt annotations: Annotations = "annotations",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// A model's request to use a tool (`"type": "tool_use"`, sampling, 2025-11-25+).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ToolUseContent {
        @tag "type" = "tool_use";
        /// Identifier the matching `tool_result` refers to.
        req id: String = "id",
        /// The tool's name.
        req name: String = "name",
        /// The arguments.
        req input: JsonObject = "input",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// The result of a tool use (`"type": "tool_result"`, sampling, 2025-11-25+).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ToolResultContent {
        @tag "type" = "tool_result";
        /// The `id` of the `tool_use` this answers.
        req tool_use_id: String = "toolUseId",
        /// Unstructured result.
        req content: Vec<ContentBlock> = "content",
        /// Structured result.
        opt structured_content: Value = "structuredContent",
        /// Whether the tool use failed.
        opt is_error: bool = "isError",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

/// One content block, by kind.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// `text`.
    Text(TextContent),
    /// `image`.
    Image(ImageContent),
    /// `audio`.
    Audio(AudioContent),
    /// `resource_link`.
    ResourceLink(ResourceLink),
    /// `resource` (embedded).
    Resource(EmbeddedResource),
    /// `tool_use` (sampling).
    ToolUse(ToolUseContent),
    /// `tool_result` (sampling).
    ToolResult(ToolResultContent),
    /// A kind this crate does not know (or an object without `type`), the whole
    /// object kept as sent, `type` included.
    Unknown(JsonObject),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// The `type` of the block (`"text"`, …); for an unknown kind, its `type` as sent
    /// (empty when missing or not a string).
    pub fn kind(&self) -> &str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Audio(_) => "audio",
            ContentBlock::ResourceLink(_) => "resource_link",
            ContentBlock::Resource(_) => "resource",
            ContentBlock::ToolUse(_) => "tool_use",
            ContentBlock::ToolResult(_) => "tool_result",
            ContentBlock::Unknown(obj) => obj.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// Decodes the rest of an object whose `type` member has been read as `kind`.
    fn from_kind_and_rest<'de, A: MapAccess<'de>>(
        kind: &str,
        mut map: A,
    ) -> Result<Self, A::Error> {
        Ok(match KnownKind::from_wire(kind) {
            Some(KnownKind::Text) => ContentBlock::Text(TextContent::visit_members(map)?),
            Some(KnownKind::Image) => ContentBlock::Image(ImageContent::visit_members(map)?),
            Some(KnownKind::Audio) => ContentBlock::Audio(AudioContent::visit_members(map)?),
            Some(KnownKind::ResourceLink) => {
                ContentBlock::ResourceLink(ResourceLink::visit_members(map)?)
            }
            Some(KnownKind::Resource) => {
                ContentBlock::Resource(EmbeddedResource::visit_members(map)?)
            }
            Some(KnownKind::ToolUse) => ContentBlock::ToolUse(ToolUseContent::visit_members(map)?),
            Some(KnownKind::ToolResult) => {
                ContentBlock::ToolResult(ToolResultContent::visit_members(map)?)
            }
            None => {
                let other = kind;
                let mut obj = JsonObject::new();
                obj.insert("type".to_owned(), Value::String(other.to_owned()));
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    obj.insert(k, v);
                }
                ContentBlock::Unknown(obj)
            }
        })
    }

    /// Decodes a whole buffered object.
    fn from_object(obj: JsonObject) -> Result<Self, serde_json::Error> {
        let Some(kind) = obj
            .get("type")
            .and_then(Value::as_str)
            .and_then(KnownKind::from_wire)
        else {
            return Ok(ContentBlock::Unknown(obj));
        };
        let value = Value::Object(obj);
        Ok(match kind {
            KnownKind::Text => ContentBlock::Text(TextContent::deserialize(value)?),
            KnownKind::Image => ContentBlock::Image(ImageContent::deserialize(value)?),
            KnownKind::Audio => ContentBlock::Audio(AudioContent::deserialize(value)?),
            KnownKind::ResourceLink => {
                ContentBlock::ResourceLink(ResourceLink::deserialize(value)?)
            }
            KnownKind::Resource => ContentBlock::Resource(EmbeddedResource::deserialize(value)?),
            KnownKind::ToolUse => ContentBlock::ToolUse(ToolUseContent::deserialize(value)?),
            KnownKind::ToolResult => {
                ContentBlock::ToolResult(ToolResultContent::deserialize(value)?)
            }
        })
    }
}

/// The content kinds this crate decodes into their own structs.
#[derive(Clone, Copy)]
enum KnownKind {
    Text,
    Image,
    Audio,
    ResourceLink,
    Resource,
    ToolUse,
    ToolResult,
}

impl KnownKind {
    fn from_wire(s: &str) -> Option<Self> {
        Some(match s {
            "text" => KnownKind::Text,
            "image" => KnownKind::Image,
            "audio" => KnownKind::Audio,
            "resource_link" => KnownKind::ResourceLink,
            "resource" => KnownKind::Resource,
            "tool_use" => KnownKind::ToolUse,
            "tool_result" => KnownKind::ToolResult,
            _ => return None,
        })
    }
}

impl From<TextContent> for ContentBlock {
    fn from(t: TextContent) -> Self {
        ContentBlock::Text(t)
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentBlock::Text(c) => c.serialize(s),
            ContentBlock::Image(c) => c.serialize(s),
            ContentBlock::Audio(c) => c.serialize(s),
            ContentBlock::ResourceLink(c) => c.serialize(s),
            ContentBlock::Resource(c) => c.serialize(s),
            ContentBlock::ToolUse(c) => c.serialize(s),
            ContentBlock::ToolResult(c) => c.serialize(s),
            ContentBlock::Unknown(obj) => obj.serialize(s),
        }
    }
}

/// A string that borrows from the input when it can.
pub(crate) struct StrCow<'de>(pub(crate) Cow<'de, str>);

impl<'de> Deserialize<'de> for StrCow<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct StrVisitor;
        impl<'de> Visitor<'de> for StrVisitor {
            type Value = StrCow<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<StrCow<'de>, E> {
                Ok(StrCow(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<StrCow<'de>, E> {
                Ok(StrCow(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<StrCow<'de>, E> {
                Ok(StrCow(Cow::Owned(v)))
            }
        }
        d.deserialize_str(StrVisitor)
    }
}

/// Visits a content block object; shared with [`crate::sampling::SamplingContent`].
pub(crate) fn visit_content_block<'de, A: MapAccess<'de>>(
    mut map: A,
) -> Result<ContentBlock, A::Error> {
    let Some(first) = map.next_key::<StrCow<'de>>()? else {
        return Ok(ContentBlock::Unknown(JsonObject::new()));
    };
    if first.0 == "type" {
        // A non-string `type` cannot name a known kind: keep the block as unknown.
        let kind: Value = map.next_value()?;
        return match kind {
            Value::String(kind) => ContentBlock::from_kind_and_rest(&kind, map),
            other => {
                let mut obj = JsonObject::new();
                obj.insert("type".to_owned(), other);
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    obj.insert(k, v);
                }
                Ok(ContentBlock::Unknown(obj))
            }
        };
    }
    let mut obj = JsonObject::new();
    obj.insert(first.0.into_owned(), map.next_value()?);
    while let Some((k, v)) = map.next_entry::<String, Value>()? {
        obj.insert(k, v);
    }
    ContentBlock::from_object(obj).map_err(de::Error::custom)
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct BlockVisitor;
        impl<'de> Visitor<'de> for BlockVisitor {
            type Value = ContentBlock;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a content block object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ContentBlock, A::Error> {
                visit_content_block(map)
            }
        }
        d.deserialize_map(BlockVisitor)
    }
}
