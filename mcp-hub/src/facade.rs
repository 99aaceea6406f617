//! The governed facade for host code (not the model): inspect a server, list
//! its catalogues one page at a time, read a resource, get a prompt, call a
//! tool. Every operation is checked against the authority and the current
//! principal before anything is sent, goes through the server's concurrency
//! limit, and is audited ([`crate::HubEvent::Audit`], no arguments, no
//! results, no secrets). The raw session, transport and credentials are never
//! exposed.
//!
//! A catalogue the server does not offer is an empty page; a read or prompt
//! the server does not offer fails with [`HubError::Unsupported`].

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use mcp_session::{CallOptions, Page, Ready, Session, SessionError};
use mcp_types::requests::{ListPrompts, ListResourceTemplates, ListResources, ListTools};
use mcp_types::{
    CallToolResult, GetPromptResult, PaginatedParams, Prompt, ReadResourceResult, Request,
    Resource, ResourceTemplate, Tool, error_codes,
};
use serde_json::{Map, Value};
use tokio::time::Instant;

use crate::HubError;
use crate::authority::{Gate, Principal};
use crate::error::TargetKind;
use crate::events::{AuditOutcome, AuditRecord, Operation, redact_uri};
use crate::hub::HubShared;
use crate::name::ServerName;
use crate::retry::{Repeatable, with_retry};
use crate::server::{ServerCell, ServerStatus};

/// Who asked.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Caller<'a> {
    /// The model, through the namespace.
    Model { exposed_name: &'a str },
    /// Host code, through the facade.
    Host,
}

impl Caller<'_> {
    pub(crate) fn is_model(self) -> bool {
        matches!(self, Caller::Model { .. })
    }
}

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
            gate_server(self.hub, cell)?;
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
        audited(self.hub, cell, Operation::ListTools, None, false, async {
            let principal = gate_server(self.hub, cell)?;
            let supported = capabilities(cell).is_none_or(|c| c.tools.is_some());
            let mut page = list_page::<ListTools, _>(self.hub, cell, cursor, supported).await?;
            let gate = Gate::new(&self.hub.authority, &principal, server);
            page.items.retain(|t| gate.tool(&t.name).is_ok());
            Ok(page)
        })
        .await
    }

    /// One page of the server's resources, filtered by the allow-list.
    pub async fn list_resources(
        &self,
        server: &str,
        cursor: Option<&str>,
    ) -> Result<Page<Resource>, HubError> {
        let cell = self.hub.cell(server)?;
        list_resources(self.hub, cell, cursor, false).await
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
        list_resource_templates(self.hub, cell, cursor, false).await
    }

    /// One page of the server's prompts, filtered by the allow-list.
    pub async fn list_prompts(
        &self,
        server: &str,
        cursor: Option<&str>,
    ) -> Result<Page<Prompt>, HubError> {
        let cell = self.hub.cell(server)?;
        list_prompts(self.hub, cell, cursor, false).await
    }

    /// Reads a resource by its exact URI.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<ReadResourceResult, HubError> {
        let cell = self.hub.cell(server)?;
        read_resource(self.hub, cell, uri, false).await
    }

    /// Gets a prompt with string arguments.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, HubError> {
        let cell = self.hub.cell(server)?;
        get_prompt(self.hub, cell, name, arguments, false).await
    }

    /// Calls a tool by its local name on `server`. The tool must be in the
    /// server's active snapshot and allowed by the authority.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallToolResult, HubError> {
        self.call_tool_with(server, tool, arguments, &CallOptions::default())
            .await
    }

    /// [`Facade::call_tool`] with a deadline or a progress sink.
    pub async fn call_tool_with(
        &self,
        server: &str,
        tool: &str,
        arguments: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<CallToolResult, HubError> {
        let cell = self.hub.cell(server)?;
        crate::calls::call_tool(self.hub, cell, tool, None, arguments, options, Caller::Host).await
    }
}

/// Runs `op` and records its audit entry.
pub(crate) fn audited<'a, T>(
    hub: &'a HubShared,
    cell: &'a ServerCell,
    operation: Operation,
    target: Option<String>,
    from_model: bool,
    op: impl Future<Output = Result<T, HubError>> + 'a,
) -> impl Future<Output = Result<T, HubError>> + 'a {
    // A combinator, not an `async fn`: an `async fn` keeps its argument `op`
    // and, while awaiting it, a second copy, which doubled the size of every
    // hub call's future (`Hub::call`: 10.7 → 3.7 KB with the rare paths
    // boxed).
    let began = Instant::now();
    op.map(move |result| {
        let outcome = match &result {
            Ok(_) => AuditOutcome::Succeeded,
            Err(e @ (HubError::Denied { .. } | HubError::NotApproved { .. })) => {
                AuditOutcome::Refused(e.kind())
            }
            Err(e) => AuditOutcome::Failed(e.kind()),
        };
        hub.events.audit(AuditRecord {
            principal: hub.principal().name().to_owned(),
            server: cell.spec.name.clone(),
            operation,
            target,
            from_model,
            outcome,
            elapsed: began.elapsed(),
        });
        result
    })
}

pub(crate) fn denied(
    server: &ServerName,
    kind: TargetKind,
    name: &str,
) -> impl Fn(crate::DenyReason) -> HubError {
    let server = server.clone();
    let name = name.to_owned();
    move |reason| HubError::Denied {
        server: server.clone(),
        kind,
        name: name.clone(),
        reason,
    }
}

/// The principal, once it may use the server at all.
fn gate_server(hub: &HubShared, cell: &ServerCell) -> Result<Principal, HubError> {
    let principal = hub.principal();
    let server = &cell.spec.name;
    Gate::new(&hub.authority, &principal, server.as_str())
        .server()
        .map_err(denied(server, TargetKind::Server, server.as_str()))?;
    Ok(principal)
}

fn capabilities(cell: &ServerCell) -> Option<mcp_types::ServerCapabilities> {
    cell.state().info.as_ref().map(|i| i.capabilities.clone())
}

/// A dead session during shutdown is the shutdown, not a crash.
pub(crate) fn session_error(
    hub: &HubShared,
    server: &ServerName,
    method: &'static str,
    e: SessionError,
) -> HubError {
    if e.is_dead() && hub.is_shutting_down() {
        HubError::ShuttingDown
    } else {
        HubError::from_session(server, method, e)
    }
}

/// Runs one idempotent request through the server's limiter, with
/// retries of transient failures; `op` gets the call options holding the
/// server's content limit, which the session checks on the frame. A server
/// that answers "method not found" does not support it.
async fn guarded<T, F, Fut>(
    hub: &HubShared,
    cell: &ServerCell,
    operation: &'static str,
    supported: bool,
    mut op: F,
) -> Result<T, HubError>
where
    F: FnMut(Arc<Session<Ready>>, CallOptions) -> Fut,
    Fut: Future<Output = Result<T, SessionError>>,
{
    let server = &cell.spec.name;
    let unsupported = || HubError::Unsupported {
        server: server.clone(),
        operation,
    };
    if !supported {
        return Err(unsupported());
    }
    // Fail fast when the server is down; wait for a slot otherwise.
    cell.session()?;
    let _slot = cell.limiter.acquire(server).await?;
    let session = cell.session()?;
    let options = CallOptions::new().max_result_bytes(cell.spec.max_content_bytes.bytes());
    let result = with_retry(
        &cell.spec.retry,
        Repeatable::Idempotent,
        &hub.jitter,
        || op(Arc::clone(&session), options.clone()),
    )
    .await;
    match result {
        Ok(value) => Ok(value),
        Err(e) if e.code() == Some(error_codes::METHOD_NOT_FOUND) => Err(unsupported()),
        Err(e) => Err(session_error(hub, server, operation, e)),
    }
}

/// One page of a list method; an empty page when the server does not offer
/// it (by capability, or by answering "method not found").
async fn list_page<R, T>(
    hub: &HubShared,
    cell: &ServerCell,
    cursor: Option<&str>,
    supported: bool,
) -> Result<Page<T>, HubError>
where
    R: Request<Params = PaginatedParams>,
    Page<T>: From<R::Result>,
{
    let params = PaginatedParams::with_cursor(cursor.map(str::to_owned));
    let page = guarded(hub, cell, R::METHOD, supported, |session, options| {
        let params = &params;
        async move { session.request_with::<R>(params, &options).await }
    })
    .await;
    match page {
        Ok(page) => Ok(page.into()),
        Err(HubError::Unsupported { .. }) => Ok(Page::empty()),
        Err(e) => Err(e),
    }
}

pub(crate) async fn list_resources(
    hub: &HubShared,
    cell: &ServerCell,
    cursor: Option<&str>,
    from_model: bool,
) -> Result<Page<Resource>, HubError> {
    audited(
        hub,
        cell,
        Operation::ListResources,
        None,
        from_model,
        async {
            let principal = gate_server(hub, cell)?;
            let gate = Gate::new(&hub.authority, &principal, cell.spec.name.as_str());
            let supported = !gate.resources_denied()
                && capabilities(cell).is_none_or(|c| c.resources.is_some());
            let mut page = list_page::<ListResources, _>(hub, cell, cursor, supported).await?;
            page.items.retain(|r| gate.resource(&r.uri).is_ok());
            Ok(page)
        },
    )
    .await
}

pub(crate) async fn list_resource_templates(
    hub: &HubShared,
    cell: &ServerCell,
    cursor: Option<&str>,
    from_model: bool,
) -> Result<Page<ResourceTemplate>, HubError> {
    audited(
        hub,
        cell,
        Operation::ListResourceTemplates,
        None,
        from_model,
        async {
            let principal = gate_server(hub, cell)?;
            let gate = Gate::new(&hub.authority, &principal, cell.spec.name.as_str());
            let supported = !gate.resources_denied()
                && capabilities(cell).is_none_or(|c| c.resources.is_some());
            let mut page =
                list_page::<ListResourceTemplates, _>(hub, cell, cursor, supported).await?;
            page.items
                .retain(|t| gate.resource(&t.uri_template).is_ok());
            Ok(page)
        },
    )
    .await
}

pub(crate) async fn list_prompts(
    hub: &HubShared,
    cell: &ServerCell,
    cursor: Option<&str>,
    from_model: bool,
) -> Result<Page<Prompt>, HubError> {
    audited(hub, cell, Operation::ListPrompts, None, from_model, async {
        let principal = gate_server(hub, cell)?;
        let gate = Gate::new(&hub.authority, &principal, cell.spec.name.as_str());
        let supported =
            !gate.prompts_denied() && capabilities(cell).is_none_or(|c| c.prompts.is_some());
        let mut page = list_page::<ListPrompts, _>(hub, cell, cursor, supported).await?;
        page.items.retain(|p| gate.prompt(&p.name).is_ok());
        Ok(page)
    })
    .await
}

pub(crate) async fn read_resource(
    hub: &HubShared,
    cell: &ServerCell,
    uri: &str,
    from_model: bool,
) -> Result<ReadResourceResult, HubError> {
    let target = Some(redact_uri(uri));
    audited(
        hub,
        cell,
        Operation::ReadResource,
        target,
        from_model,
        async {
            let principal = hub.principal();
            let server = &cell.spec.name;
            Gate::new(&hub.authority, &principal, server.as_str())
                .resource(uri)
                .map_err(denied(server, TargetKind::Resource, uri))?;
            let supported = capabilities(cell).is_none_or(|c| c.resources.is_some());
            guarded(
                hub,
                cell,
                "resources/read",
                supported,
                |session, options| async move { session.read_resource_with(uri, &options).await },
            )
            .await
        },
    )
    .await
}

pub(crate) async fn get_prompt(
    hub: &HubShared,
    cell: &ServerCell,
    name: &str,
    arguments: BTreeMap<String, String>,
    from_model: bool,
) -> Result<GetPromptResult, HubError> {
    audited(
        hub,
        cell,
        Operation::GetPrompt,
        Some(name.to_owned()),
        from_model,
        async {
            let principal = hub.principal();
            let server = &cell.spec.name;
            Gate::new(&hub.authority, &principal, server.as_str())
                .prompt(name)
                .map_err(denied(server, TargetKind::Prompt, name))?;
            let supported = capabilities(cell).is_none_or(|c| c.prompts.is_some());
            let arguments = &arguments;
            guarded(
                hub,
                cell,
                "prompts/get",
                supported,
                |session, options| async move {
                    session
                        .get_prompt_with(name, arguments.clone(), &options)
                        .await
                },
            )
            .await
        },
    )
    .await
}
