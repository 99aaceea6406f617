//! The Skills extension (`io.modelcontextprotocol/skills`) served to the
//! host: the skills of every server behind the gateway, through the hub.
//!
//! A server's skill `skill://PATH/SKILL.md` is served as
//! `skill://SERVER/PATH/SKILL.md` (`names.rs`): still a `skill://` URI
//! whose last segment before `SKILL.md` is the skill's name, and
//! unambiguous across servers. Every URI of an answer is rewritten so (the
//! entry's, its manifest's, a directory's children); the files' content is
//! not touched, so the manifest's digests and sizes stay true, and the
//! host verifies them as it would against the server. Reads of the files
//! are ordinary `resources/read`s (`handler.rs`), routed by the same names.
//!
//! - `skills/list` spans the servers that are up in registration order,
//!   one server's page at a time (the span cursor of the other listings),
//!   so an entry is never split across pages.
//! - `skills/get` and `resources/directory/read` go to the server the URI
//!   names, with the server's own URI; a URI that names no server behind
//!   the gateway is `-32602`.
//! - Policy is the hub's ([`mcp_hub::Facade::list_skills_page`]): a skill
//!   is served when the skills allow-list and, for its `SKILL.md`, the
//!   resources allow-list let it through (its files are read as resources,
//!   so a server whose resources are denied shows no skills); a directory
//!   is read as a resource.
//! - An entry is checked against the extension's bounds before it is
//!   passed on ([`mcp_session::check_skill_entry`]: 512 files, 16 MiB, its
//!   `SKILL.md` listed, files inside its directory, well-formed digests);
//!   one that fails is a named error (`-32603`, `data.kind`
//!   `"skill_refused"`), never dropped from the page in silence.

use mcp_hub::{Hub, HubError};
use mcp_server::{HandlerResult, method_not_found};
use mcp_types::text::Untrusted;
use mcp_types::{
    Cursor, ErrorObject, GetSkillParams, GetSkillResult, ListSkillsResult, ReadDirectoryParams,
    ReadDirectoryResult, ServerCapabilities, Skill, SkillFiles, error_codes,
};
use serde_json::json;

use crate::handler::{GatewayHandler, error_object};
use crate::names::{resource_uri, split_resource_uri};

/// What the servers behind the gateway offer of the extension: `None` when
/// none declares it, else whether one declares `directoryRead`.
pub(crate) fn offered(hub: &Hub) -> Option<bool> {
    let mut offered = None;
    for server in hub.servers() {
        let Ok(status) = hub.status(server.as_str()) else {
            continue;
        };
        let Some(info) = status.info.as_ref() else {
            continue;
        };
        if info.capabilities.has_extension(mcp_types::SKILLS_EXTENSION) {
            let directory_read = info.capabilities.skills_directory_read();
            offered = Some(offered.unwrap_or(false) || directory_read);
        }
    }
    offered
}

/// Declares the extension in `caps` when a server behind the gateway
/// offers it (`directoryRead` when one of them does).
pub(crate) fn declare(hub: &Hub, caps: &mut ServerCapabilities) {
    if let Some(directory_read) = offered(hub) {
        caps.declare_skills(directory_read);
    }
}

/// The entry the host sees for `server`'s `skill`: checked against the
/// extension's bounds, every URI rewritten.
fn served_entry(server: &str, mut skill: Skill) -> Result<Skill, ErrorObject> {
    if let Err(check) = mcp_session::check_skill_entry(&skill) {
        let mut error = ErrorObject::new(
            error_codes::INTERNAL_ERROR,
            format!(
                "the skill `{}` of server `{server}` is refused: {check}",
                Untrusted::new(&skill.uri)
            ),
        );
        error.data = Some(json!({ "kind": "skill_refused", "server": server }));
        return Err(error);
    }
    skill.uri = resource_uri(server, &skill.uri);
    if let SkillFiles::Listed(files) = &mut skill.resources {
        for file in files {
            file.uri = resource_uri(server, &file.uri);
        }
    }
    Ok(skill)
}

/// A URI that names nothing the gateway serves.
fn not_ours(uri: &str, what: &str) -> ErrorObject {
    let mut error = ErrorObject::new(
        error_codes::INVALID_PARAMS,
        format!("no server behind the gateway serves this {what}"),
    );
    error.data = Some(json!({ "uri": uri }));
    error
}

impl GatewayHandler {
    /// The registered server and its own URI of a skill URI the gateway
    /// served; `-32602` for any other.
    fn skill_owner(&self, uri: &str, what: &str) -> Result<(String, String), ErrorObject> {
        split_resource_uri(uri)
            .and_then(|(server, inner)| Some((self.server(server)?, inner.into_owned())))
            .ok_or_else(|| not_ours(uri, what))
    }

    /// `skills/list`: one server's page of skills at a time, in
    /// registration order.
    pub(crate) async fn skills_page(
        &self,
        cursor: Option<Cursor>,
    ) -> HandlerResult<ListSkillsResult> {
        let (items, next) = self
            .span(cursor, |hub, server, cursor| {
                Box::pin(async move {
                    hub.facade()
                        .list_skills_page(&server, cursor.as_deref())
                        .await
                })
            })
            .await?;
        let skills = items
            .into_iter()
            .map(|(server, skill)| served_entry(&server, skill))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ListSkillsResult {
            skills,
            next_cursor: next,
            ..Default::default()
        })
    }

    /// `skills/get`: the entry from the server the URI names.
    pub(crate) async fn skill(&self, params: GetSkillParams) -> HandlerResult<GetSkillResult> {
        let (server, uri) = self.skill_owner(&params.uri, "skill")?;
        let skill = self
            .hub
            .facade()
            .get_skill(&server, &uri)
            .await
            .map_err(|e| match e {
                // This server offers no skills: none of its is served here.
                HubError::Unsupported { .. } => not_ours(&params.uri, "skill"),
                e => error_object(&e),
            })?;
        Ok(GetSkillResult {
            skill: served_entry(&server, skill)?,
            ttl_ms: None,
            cache_scope: None,
            result_type: None,
            meta: None,
            extra: Default::default(),
        })
    }

    /// `resources/directory/read`: one page of the children of a directory
    /// of the server the URI names.
    pub(crate) async fn directory_page(
        &self,
        params: ReadDirectoryParams,
    ) -> HandlerResult<ReadDirectoryResult> {
        if offered(&self.hub) != Some(true) {
            return Err(method_not_found());
        }
        let (server, uri) = self.skill_owner(&params.uri, "directory")?;
        if params
            .cursor
            .as_ref()
            .is_some_and(|c| c.len() > crate::names::MAX_CURSOR_BYTES)
        {
            return Err(ErrorObject::new(
                error_codes::INVALID_PARAMS,
                "not a cursor of this server",
            ));
        }
        let page = self
            .hub
            .facade()
            .read_directory_page(&server, &uri, params.cursor.as_deref())
            .await
            .map_err(|e| match e {
                // This server reads no directories: not one served here.
                HubError::Unsupported { .. } => not_ours(&params.uri, "directory"),
                e => error_object(&e),
            })?;
        let resources = page
            .items
            .into_iter()
            .map(|mut resource| {
                resource.uri = resource_uri(&server, &resource.uri);
                resource
            })
            .collect();
        Ok(ReadDirectoryResult {
            resources,
            next_cursor: page.next_cursor,
            ..Default::default()
        })
    }
}
