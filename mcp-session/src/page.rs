//! One page of a listing, the same type for every list method, for the
//! session and the hub alike.

use std::time::Duration;

use serde::Serialize;

use mcp_types::{
    CacheScope, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, Prompt, Resource, ResourceTemplate, Tool,
};

/// One page of a list method (`tools/list`, `resources/list`,
/// `resources/templates/list`, `prompts/list`). Serialises as
/// `{"items": [...], "nextCursor": ..., "ttlMs": ..., "cacheScope": ...}`,
/// the optional members only when present.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Page<T> {
    /// The items, in the server's order. (The hub's facade keeps only those
    /// the authority lets through, so a page may be empty even when the
    /// server has more: follow the cursor.)
    pub items: Vec<T>,
    /// The server's cursor of the next page; `None` on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long the page may be considered fresh (2026-07-28 `ttlMs`).
    #[serde(
        rename = "ttlMs",
        skip_serializing_if = "Option::is_none",
        serialize_with = "millis"
    )]
    pub ttl: Option<Duration>,
    /// Who may share a cached copy (2026-07-28 `cacheScope`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

fn millis<S: serde::Serializer>(ttl: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match ttl {
        Some(ttl) => s.serialize_u64(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)),
        None => s.serialize_none(),
    }
}

impl<T> Page<T> {
    /// A page with no items and no next page (a catalogue the server does not
    /// offer).
    pub fn empty() -> Self {
        Self {
            items: Vec::new(),
            next_cursor: None,
            ttl: None,
            cache_scope: None,
        }
    }
}

macro_rules! page_from {
    ($($result:ty => $item:ty, $field:ident;)*) => {
        $(
            impl From<$result> for Page<$item> {
                fn from(result: $result) -> Self {
                    Self {
                        items: result.$field,
                        next_cursor: result.next_cursor,
                        ttl: result.ttl_ms.map(Duration::from_millis),
                        cache_scope: result.cache_scope,
                    }
                }
            }
        )*
    };
}

page_from! {
    ListToolsResult => Tool, tools;
    ListResourcesResult => Resource, resources;
    ListResourceTemplatesResult => ResourceTemplate, resource_templates;
    mcp_types::ListSkillsResult => mcp_types::Skill, skills;
    ListPromptsResult => Prompt, prompts;
}
