//! The governed facade for host code (not the model): inspect a server, list
//! its catalogues one page at a time, read a resource, get a prompt, call a
//! tool. Every operation takes the governed path (`governed.rs`): checked
//! against the authority and the current principal before anything is sent,
//! through the server's concurrency limit, and audited
//! ([`crate::HubEvent::Audit`], no arguments, no results, no secrets). The
//! raw session, transport and credentials are never exposed.
//!
//! A catalogue the server does not offer is an empty page; a read or prompt
//! the server does not offer fails with [`HubError::Unsupported`].

use std::collections::BTreeMap;

use mcp_session::{CallOptions, Page};
use mcp_types::{
    CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool,
};

use crate::HubError;
use crate::error::{TargetKind, tool_arguments};
use crate::events::Operation;
use crate::governance::authority::Gate;
use crate::governance::calls;
use crate::governance::governed::{Caller, audited, denied};
use crate::servers::server::ServerStatus;
use crate::shared::HubShared;

/// The governed facade; see the module docs. Obtained from
/// [`crate::Hub::facade`].
#[derive(Debug, Clone, Copy)]
pub struct Facade<'a> {
    hub: &'a HubShared,
}

impl<'a> Facade<'a> {
    pub(crate) fn new(hub: &'a HubShared) -> Self {
        Self { hub }
    }

    /// The server's status and self-description.
    pub async fn inspect(&self, server: &str) -> Result<ServerStatus, HubError> {
        let cell = self.hub.cell(server)?;
        audited(self.hub, cell, Operation::Inspect, None, false, async {
            let principal = self.hub.principal();
            let server = &cell.spec.name;
            Gate::new(&self.hub.authority, &principal, server.as_str())
                .server()
                .map_err(denied(server, TargetKind::Server, server.as_str()))?;
            Ok(cell.status())
        })
        .await
    }

    /// One page of the server's tools, filtered by the authority.
    pub async fn list_tools(
        &self,
        server: &str,
        cursor: Option<&str>,
    ) -> Result<Page<Tool>, HubError> {
        let cell = self.hub.cell(server)?;
        calls::list_tools(self.hub, cell, cursor, Caller::Host).await
    }

    /// One page of the server's resources, filtered by the allow-list.
    pub async fn list_resources(
        &self,
        server: &str,
        cursor: Option<&str>,
    ) -> Result<Page<Resource>, HubError> {
        let cell = self.hub.cell(server)?;
        calls::list_resources(self.hub, cell, cursor, Caller::Host).await
    }

    /// One page of the server's resource templates. With a resources
    /// allow-list, only templates listed there verbatim are shown (and even
    /// those authorise no expanded URI).
    pub async fn list_resource_templates(
        &self,
        server: &str,
        cursor: Option<&str>,
    ) -> Result<Page<ResourceTemplate>, HubError> {
        let cell = self.hub.cell(server)?;
        calls::list_resource_templates(self.hub, cell, cursor, Caller::Host).await
    }

    /// One page of the server's prompts, filtered by the allow-list.
    pub async fn list_prompts(
        &self,
        server: &str,
        cursor: Option<&str>,
    ) -> Result<Page<Prompt>, HubError> {
        let cell = self.hub.cell(server)?;
        calls::list_prompts(self.hub, cell, cursor, Caller::Host).await
    }

    /// Every skill of the server (all pages), filtered by the skills
    /// allow-list. Nothing is read: a skill's files are fetched only when
    /// it is loaded.
    #[cfg(feature = "skills")]
    pub async fn list_skills(&self, server: &str) -> Result<Vec<mcp_types::Skill>, HubError> {
        let cell = self.hub.cell(server)?;
        calls::list_skills(self.hub, cell, Caller::Host).await
    }

    /// Loads the skill whose `SKILL.md` is at `uri`: its current entry,
    /// then `SKILL.md` verified against it (size, digest, frontmatter); a
    /// failed check refuses it whole. Keep the returned entry to read the
    /// skill's other files ([`Facade::read_skill_file`]).
    #[cfg(feature = "skills")]
    pub async fn load_skill(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<mcp_session::LoadedSkill, HubError> {
        let cell = self.hub.cell(server)?;
        calls::load_skill(self.hub, cell, uri, Caller::Host).await
    }

    /// One file of a loaded skill, verified against `entry` (the one it
    /// was loaded with): only files its manifest lists.
    #[cfg(feature = "skills")]
    pub async fn read_skill_file(
        &self,
        server: &str,
        entry: &mcp_types::Skill,
        file: &str,
    ) -> Result<Vec<u8>, HubError> {
        let cell = self.hub.cell(server)?;
        calls::read_skill_file(self.hub, cell, entry, file, Caller::Host).await
    }

    /// One page of the server's skills, for a consumer that reads their
    /// files as resources (the gateway): the entries the skills allow-list
    /// lets through whose `SKILL.md` the resources allow-list lets through
    /// too; none when the server offers no skills. Nothing is read.
    #[cfg(feature = "skills")]
    pub async fn list_skills_page(
        &self,
        server: &str,
        cursor: Option<&str>,
    ) -> Result<Page<mcp_types::Skill>, HubError> {
        let cell = self.hub.cell(server)?;
        calls::list_skills_page(self.hub, cell, cursor, Caller::Host).await
    }

    /// The current entry of the skill whose `SKILL.md` is at `uri`
    /// (`skills/get`), under the same two allow-lists as
    /// [`Facade::list_skills_page`]. Nothing is read.
    #[cfg(feature = "skills")]
    pub async fn get_skill(&self, server: &str, uri: &str) -> Result<mcp_types::Skill, HubError> {
        let cell = self.hub.cell(server)?;
        calls::get_skill(self.hub, cell, uri, Caller::Host).await
    }

    /// One page of the direct children of the directory at `uri`
    /// (`resources/directory/read`), governed as a read of `uri`, the
    /// children filtered by the resources allow-list;
    /// [`HubError::Unsupported`] when the server declares no
    /// `directoryRead`.
    #[cfg(feature = "skills")]
    pub async fn read_directory_page(
        &self,
        server: &str,
        uri: &str,
        cursor: Option<&str>,
    ) -> Result<Page<Resource>, HubError> {
        let cell = self.hub.cell(server)?;
        calls::read_directory_page(self.hub, cell, uri, cursor, Caller::Host).await
    }

    /// Reads a resource by its exact URI.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<ReadResourceResult, HubError> {
        let cell = self.hub.cell(server)?;
        calls::read_resource(self.hub, cell, uri, Caller::Host, Default::default()).await
    }

    /// Gets a prompt with string arguments: any pairs, as
    /// `Session::get_prompt` takes them (`[("city", "Paris")]`, a
    /// `BTreeMap<String, String>`; `BTreeMap::<String, String>::new()` for
    /// none).
    pub async fn get_prompt<K: Into<String>, V: Into<String>>(
        &self,
        server: &str,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> Result<GetPromptResult, HubError> {
        let arguments: BTreeMap<String, String> = arguments
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let cell = self.hub.cell(server)?;
        calls::get_prompt(self.hub, cell, name, arguments, Caller::Host).await
    }

    /// Completes an argument (`completion/complete`) of one of the server's
    /// prompts or resource templates, under the same allow-lists as the
    /// prompt or the template (the resources allow-list names templates
    /// verbatim).
    pub async fn complete(
        &self,
        server: &str,
        params: mcp_types::CompleteParams,
    ) -> Result<mcp_types::CompleteResult, HubError> {
        let cell = self.hub.cell(server)?;
        calls::complete(self.hub, cell, params, Caller::Host).await
    }

    /// Calls a tool by its local name on `server`. The tool must be in the
    /// server's active snapshot and allowed by the authority.
    ///
    /// `arguments` is anything that serialises to a JSON object (a `json!`
    /// value, a `Map`, a host's struct; `()` for none); anything else is
    /// refused with [`HubError::ArgumentsNotAnObject`] before anything is
    /// sent, as by [`crate::Hub::call`].
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: impl serde::Serialize,
    ) -> Result<CallToolResult, HubError> {
        self.call_tool_with(server, tool, arguments, &CallOptions::default())
            .await
    }

    /// [`Facade::call_tool`] with a deadline or a progress sink.
    pub async fn call_tool_with(
        &self,
        server: &str,
        tool: &str,
        arguments: impl serde::Serialize,
        options: &CallOptions,
    ) -> Result<CallToolResult, HubError> {
        let arguments = tool_arguments(tool, arguments)?;
        let cell = self.hub.cell(server)?;
        calls::call_tool(self.hub, cell, tool, None, arguments, options, Caller::Host).await
    }
}
