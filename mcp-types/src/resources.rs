//! Resources: listing, templates, reading, subscribing (legacy), update
//! notifications.
//!
//! Resource contents are kept as sent: text stays the server's string, blobs stay
//! base64 (decode on demand).

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::cache::CacheScope;
use crate::common::Cursor;
use crate::content::Annotations;
use crate::initialize::Icon;
use crate::input_required::{InputResponses, ResultType};
use crate::meta::Meta;
use crate::open_struct::open_struct;

open_struct! {
    /// A resource the server can read.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Resource {
        /// The resource's URI.
        req uri: String = "uri",
        /// Programmatic name.
        req name: String = "name",
        /// 2025-06-18+: human-readable name.
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
    /// A parameterised resource (RFC 6570 URI template).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ResourceTemplate {
        /// The URI template.
        req uri_template: String = "uriTemplate",
        /// Programmatic name.
        req name: String = "name",
        /// 2025-06-18+: human-readable name.
        opt title: String = "title",
        /// Description (server prose).
        opt description: String = "description",
        /// MIME type of every matching resource, if they share one.
        opt mime_type: String = "mimeType",
        /// 2025-11-25+: icons.
        opt icons: Vec<Icon> = "icons",
        /// Annotations.
        opt annotations: Annotations = "annotations",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// Text contents of a resource.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct TextResourceContents {
        /// The resource's URI.
        req uri: String = "uri",
        /// MIME type.
        opt mime_type: String = "mimeType",
        /// The text.
        text text: String = "text",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// Binary contents of a resource.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct BlobResourceContents {
        /// The resource's URI.
        req uri: String = "uri",
        /// MIME type.
        opt mime_type: String = "mimeType",
        /// Base64-encoded bytes, kept as sent.
        req blob: String = "blob",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

/// Contents of a resource: text or blob, told apart by which member is present.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Has `text`.
    Text(TextResourceContents),
    /// Has `blob`.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// The resource's URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }

    /// The MIME type, if given.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => t.mime_type.as_deref(),
            ResourceContents::Blob(b) => b.mime_type.as_deref(),
        }
    }
}

impl Serialize for ResourceContents {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ResourceContents::Text(t) => t.serialize(s),
            ResourceContents::Blob(b) => b.serialize(s),
        }
    }
}

open_struct! {
    /// Every member of either kind of contents, read in one pass before choosing.
    struct AnyResourceContents {
        req uri: String = "uri",
        opt mime_type: String = "mimeType",
        opttext text: String = "text",
        opt blob: String = "blob",
        opt meta: Meta = "_meta",
    }
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ContentsVisitor;
        impl<'de> Visitor<'de> for ContentsVisitor {
            type Value = ResourceContents;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("resource contents with \"text\" or \"blob\"")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ResourceContents, A::Error> {
                let any = AnyResourceContents::visit_members(map)?;
                let AnyResourceContents {
                    uri,
                    mime_type,
                    text,
                    blob,
                    meta,
                    mut extra,
                } = any;
                match (text, blob) {
                    (Some(text), blob) => {
                        // Both present is invalid but harmless: keep the blob as sent.
                        if let Some(blob) = blob {
                            extra.insert("blob".to_owned(), blob.into());
                        }
                        Ok(ResourceContents::Text(TextResourceContents {
                            uri,
                            mime_type,
                            text,
                            meta,
                            extra,
                        }))
                    }
                    (None, Some(blob)) => Ok(ResourceContents::Blob(BlobResourceContents {
                        uri,
                        mime_type,
                        blob,
                        meta,
                        extra,
                    })),
                    (None, None) => Err(serde::de::Error::missing_field("text")),
                }
            }
        }
        d.deserialize_map(ContentsVisitor)
    }
}

open_struct! {
    /// Result of `resources/list`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ListResourcesResult {
        /// The resources on this page.
        req resources: Vec<Resource> = "resources",
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
    /// Result of `resources/templates/list`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ListResourceTemplatesResult {
        /// The templates on this page.
        req resource_templates: Vec<ResourceTemplate> = "resourceTemplates",
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
    /// Params of `resources/read`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ReadResourceParams {
        /// The URI to read.
        req uri: String = "uri",
        /// 2026-07-28: answers to the server's `inputRequests` (retry after an
        /// `input_required` result).
        opt input_responses: InputResponses = "inputResponses",
        /// 2026-07-28: the opaque `requestState` echoed back on a retry.
        opt request_state: String = "requestState",
        /// Request metadata.
        opt meta: Meta = "_meta",
    }
}

impl ReadResourceParams {
    /// Params reading `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ReadResourceParams {
            uri: uri.into(),
            ..Default::default()
        }
    }
}

open_struct! {
    /// Result of `resources/read`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ReadResourceResult {
        /// The contents (a template may expand to several resources).
        req contents: Vec<ResourceContents> = "contents",
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
    /// Params of `resources/subscribe` and `resources/unsubscribe` (legacy era;
    /// 2026-07-28 uses `subscriptions/listen`), and of
    /// `notifications/resources/updated`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ResourceUriParams {
        /// The resource's URI.
        req uri: String = "uri",
        /// Metadata.
        opt meta: Meta = "_meta",
    }
}

impl ResourceUriParams {
    /// Params naming `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ResourceUriParams {
            uri: uri.into(),
            ..Default::default()
        }
    }
}

/// Params of `resources/subscribe`.
pub type SubscribeParams = ResourceUriParams;
/// Params of `resources/unsubscribe`.
pub type UnsubscribeParams = ResourceUriParams;
/// Params of `notifications/resources/updated`.
pub type ResourceUpdatedParams = ResourceUriParams;
