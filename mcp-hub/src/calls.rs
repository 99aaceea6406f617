//! Calls: the governed tool call shared by the model's path and host code,
//! and the model's context helper calls. Both ask the approval hook after
//! the authority allowed them, go through the server's limiter, and are
//! audited.

use mcp_session::CallOptions;
use mcp_types::{CallToolResult, Tool};
use serde_json::{Map, Value};

use crate::HubError;
use crate::approval::{Approval, ApprovalRequest};
use crate::authority::Gate;
use crate::context::Helper;
use crate::error::TargetKind;
use crate::events::Operation;
use crate::facade::{Caller, audited, denied, session_error};
use crate::hub::HubShared;
use crate::limits::check_content;
use crate::retry::{Repeatable, with_retry};
use crate::server::ServerCell;

/// Asks the host's approval hook, if there is one.
pub(crate) async fn approve(hub: &HubShared, request: ApprovalRequest<'_>) -> Result<(), HubError> {
    let Some(hook) = &hub.approval else {
        return Ok(());
    };
    match hook.approve(request).await {
        Approval::Approve => Ok(()),
        Approval::Deny => Err(HubError::NotApproved {
            server: request.server.clone(),
            tool: request.tool.to_owned(),
        }),
    }
}

/// A governed tool call (the model's and host code's path alike).
pub(crate) async fn call_tool(
    hub: &HubShared,
    cell: &ServerCell,
    local: &str,
    tool: Option<&Tool>,
    arguments: Map<String, Value>,
    options: &CallOptions,
    caller: Caller<'_>,
) -> Result<CallToolResult, HubError> {
    let server = &cell.spec.name;
    let target = Some(local.to_owned());
    audited(
        hub,
        cell,
        Operation::CallTool,
        target,
        caller.is_model(),
        async {
            let principal = hub.principal();
            Gate::new(&hub.authority, &principal, server.as_str())
                .tool(local)
                .map_err(denied(server, TargetKind::Tool, local))?;
            // The published surface is the snapshot ∩ the authority: host code
            // may call only tools the server listed.
            let listed;
            let tool = match tool {
                Some(tool) => tool,
                None => {
                    Box::pin(hub.discover_cell(cell)).await?;
                    let snapshot = cell.state().active.clone();
                    listed = snapshot
                        .and_then(|s| s.get(local).cloned())
                        .ok_or_else(|| HubError::UnknownTool {
                            name: local.to_owned(),
                        })?;
                    &listed
                }
            };
            approve(
                hub,
                ApprovalRequest {
                    principal: principal.name(),
                    server,
                    tool: local,
                    exposed_name: match caller {
                        Caller::Model { exposed_name } => Some(exposed_name),
                        Caller::Host => None,
                    },
                    helper: None,
                    arguments: &arguments,
                    annotations: tool.annotations.as_ref(),
                },
            )
            .await?;
            // Fail fast when the server is down; wait for a slot otherwise.
            cell.session()?;
            let _slot = cell.limiter.acquire(server).await?;
            let session = cell.session()?;
            let repeatable = if cell.spec.retry.retry_tools.contains(local) {
                Repeatable::OptedIn
            } else {
                Repeatable::Once
            };
            // The limit is checked on the frame, before the result is decoded.
            let options = options
                .clone()
                .max_result_bytes(cell.spec.max_content_bytes.bytes());
            let mut arguments = Some(arguments);
            let result = with_retry(&cell.spec.retry, repeatable, &hub.jitter, || {
                let args = match repeatable {
                    Repeatable::Once => arguments.take().unwrap_or_default(),
                    _ => arguments.clone().unwrap_or_default(),
                };
                let (session, options) = (&session, &options);
                async move { session.call_tool_with(local, args, options).await }
            })
            .await
            .map_err(|e| session_error(hub, server, "tools/call", e))?;
            Ok(result)
        },
    )
    .await
}

/// A context helper called by the model.
pub(crate) async fn call_helper(
    hub: &HubShared,
    cell: &ServerCell,
    helper: Helper,
    exposed_name: &str,
    arguments: Map<String, Value>,
) -> Result<CallToolResult, HubError> {
    let principal = hub.principal();
    let approval = approve(
        hub,
        ApprovalRequest {
            principal: principal.name(),
            server: &cell.spec.name,
            tool: helper.local_name(),
            exposed_name: Some(exposed_name),
            helper: Some(helper),
            arguments: &arguments,
            annotations: None,
        },
    )
    .await;
    if let Err(refusal) = approval {
        // Audited like the operation it stopped.
        let operation = crate::context::operation(helper);
        return audited(hub, cell, operation, None, true, async { Err(refusal) }).await;
    }
    // The authority is checked by each operation (and audited there).
    let value = crate::context::run(hub, cell, helper, exposed_name, &arguments).await?;
    let result = CallToolResult {
        content: vec![mcp_types::ContentBlock::text(value.to_string())],
        structured_content: Some(value),
        ..Default::default()
    };
    check_content(
        &cell.spec.name,
        &result,
        cell.spec.max_content_bytes.bytes(),
    )?;
    Ok(result)
}
