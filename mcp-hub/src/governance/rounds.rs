//! One `input_required` round at a time (2026-07-28): a tool call, a prompt
//! or a read sent as ONE request along the governed path, its answer
//! returned as the server gave it ([`RequestOutcome`]) instead of the
//! session following the rounds with the host's handlers. For a caller
//! that passes the server's `inputRequests` on to someone else (a gateway
//! in front of a stateless host) and sends the next round itself.
//!
//! Every round is governed as a first call is (authority, the approval
//! hook for a tool, the server's concurrency slot, the audit): a round
//! that answers input can never reach what the first could not. A round is
//! never retried (it may carry answers the server consumes once).

use std::future::Future;
use std::sync::Arc;

use mcp_session::{CallOptions, Ready, RoundMethod, Session, SessionError};
use mcp_types::requests::{CallTool, GetPrompt, ReadResource};
use mcp_types::{
    CallToolParams, CallToolResult, GetPromptParams, GetPromptResult, ReadResourceParams,
    ReadResourceResult, Request, RequestOutcome,
};
use serde_json::Map;

use crate::HubError;
use crate::events::Operation;
use crate::governance::calls::capabilities;
use crate::governance::governed::{Caller, Step, Target, governed};
use crate::hub::Hub;
use crate::namespace::RouteTarget;
use crate::servers::retry::Repeatable;
use crate::servers::server::ServerCell;

/// Where a tool round went: the server and the tool's own name there.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RoundRoute {
    /// The server.
    pub server: String,
    /// The tool's name on the server.
    pub tool: String,
}

impl RoundRoute {
    /// A route to `tool` on `server`.
    pub fn new(server: impl Into<String>, tool: impl Into<String>) -> Self {
        Self {
            server: server.into(),
            tool: tool.into(),
        }
    }
}

/// One answered tool round: where it went and what the server said.
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolRound {
    /// The server and tool the round went to.
    pub route: RoundRoute,
    /// The server's answer: complete, `input_required`, or a task.
    pub outcome: RequestOutcome<CallToolResult>,
}

impl Hub {
    /// Sends one round of a call of the tool exposed as `params.name` (a
    /// model's call, as [`Hub::call_with`]) and returns the server's answer
    /// as it is: an `input_required` answer is not followed (see the module
    /// docs of the round API, [`mcp_session::Session::send_round`]). The
    /// next round is the same call with `inputResponses` and the server's
    /// `requestState` in `params`.
    ///
    /// `pinned`: the route an earlier round of the same call took; when the
    /// name now routes elsewhere (the namespace changed), the round is
    /// refused with [`HubError::RoundRouteChanged`] before anything is
    /// sent. A context helper's name is [`HubError::Unsupported`] (helpers
    /// ask for no input). A server that speaks a legacy version has no
    /// rounds: the call is made as [`Hub::call_with`] makes it (its
    /// server→client requests answered by the session's handlers) and
    /// answered complete.
    pub async fn call_tool_round(
        &self,
        mut params: CallToolParams,
        options: &CallOptions,
        pinned: Option<&RoundRoute>,
    ) -> Result<ToolRound, HubError> {
        if self.shared.is_shutting_down() {
            return Err(HubError::ShuttingDown);
        }
        let name = params.name.clone();
        let mut namespace = self.namespace();
        let unknown = matches!(namespace.lookup(&name), Err(HubError::UnknownTool { .. }));
        if unknown && !self.shared.undiscovered().is_empty() {
            namespace = Box::pin(self.discover()).await?;
        }
        let (entry, exposed_name) = namespace.lookup(&name)?;
        let RouteTarget::Tool(local) = &entry.route().target else {
            return Err(HubError::Unsupported {
                server: entry.server().clone(),
                operation: "input_required rounds of a context helper",
            });
        };
        let route = RoundRoute::new(entry.server().as_str(), local.as_str());
        if let Some(pinned) = pinned
            && *pinned != route
        {
            return Err(HubError::RoundRouteChanged { name });
        }
        let cell = Arc::clone(self.shared.cell(entry.server().as_str())?);
        params.name = local.to_string();
        let arguments = params.arguments.clone().unwrap_or_default();
        let step = Step {
            operation: Operation::CallTool,
            method: CallTool::METHOD,
            caller: Caller::Model { exposed_name },
            target: Target::Tool {
                name: local,
                listed: Some(entry.tool()),
            },
            supported: true,
            repeatable: Repeatable::Once,
            options: options.clone(),
            arguments,
        };
        let (local, arguments) = (params.name.clone(), params.arguments.clone());
        let legacy = move |session: Arc<Session<Ready>>, options: CallOptions| {
            let (local, arguments) = (local.clone(), arguments.clone().unwrap_or_default());
            async move { session.call_tool_object(&local, arguments, &options).await }
        };
        let outcome = round::<CallTool, _, _>(&self.shared, &cell, step, &params, legacy).await?;
        Ok(ToolRound { route, outcome })
    }

    /// Sends one round of `prompts/get` of `params.name` on `server`
    /// (governed as [`crate::Facade::get_prompt`]) and returns the answer as
    /// the server gave it; see [`Hub::call_tool_round`].
    pub async fn get_prompt_round(
        &self,
        server: &str,
        params: GetPromptParams,
        options: &CallOptions,
    ) -> Result<RequestOutcome<GetPromptResult>, HubError> {
        let cell = self.shared.cell(server)?;
        let step = Step {
            operation: Operation::GetPrompt,
            method: GetPrompt::METHOD,
            caller: Caller::Host,
            target: Target::Prompt(&params.name),
            supported: capabilities(cell).is_none_or(|c| c.prompts.is_some()),
            repeatable: Repeatable::Once,
            options: options.clone(),
            arguments: Map::new(),
        };
        let (name, arguments) = (params.name.clone(), params.arguments.clone());
        let legacy = move |session: Arc<Session<Ready>>, options: CallOptions| {
            let (name, arguments) = (name.clone(), arguments.clone().unwrap_or_default());
            async move { session.get_prompt_with(&name, arguments, &options).await }
        };
        round::<GetPrompt, _, _>(&self.shared, cell, step, &params, legacy).await
    }

    /// Sends one round of `resources/read` of `params.uri` on `server`
    /// (governed as [`crate::Facade::read_resource`]) and returns the answer
    /// as the server gave it; see [`Hub::call_tool_round`].
    pub async fn read_resource_round(
        &self,
        server: &str,
        params: ReadResourceParams,
        options: &CallOptions,
    ) -> Result<RequestOutcome<ReadResourceResult>, HubError> {
        let cell = self.shared.cell(server)?;
        let step = Step {
            operation: Operation::ReadResource,
            method: ReadResource::METHOD,
            caller: Caller::Host,
            target: Target::Resource(&params.uri),
            supported: capabilities(cell).is_none_or(|c| c.resources.is_some()),
            repeatable: Repeatable::Once,
            options: options.clone(),
            arguments: Map::new(),
        };
        let uri = params.uri.clone();
        let legacy = move |session: Arc<Session<Ready>>, options: CallOptions| {
            let uri = uri.clone();
            async move { session.read_resource_with(&uri, &options).await }
        };
        round::<ReadResource, _, _>(&self.shared, cell, step, &params, legacy).await
    }
}

/// One round along the governed path; with a server that speaks a legacy
/// version (no rounds exist there), the call `legacy` makes, complete.
async fn round<R, L, LF>(
    hub: &crate::shared::HubShared,
    cell: &ServerCell,
    step: Step<'_>,
    params: &R::Params,
    legacy: L,
) -> Result<RequestOutcome<R::Complete>, HubError>
where
    R: RoundMethod,
    L: Fn(Arc<Session<Ready>>, CallOptions) -> LF,
    LF: Future<Output = Result<R::Complete, SessionError>>,
{
    let legacy = &legacy;
    governed(hub, cell, step, None, |session, options, _| async move {
        if session.era() == mcp_types::Era::Modern {
            session.send_round::<R>(params, &options).await
        } else {
            legacy(session, options).await.map(RequestOutcome::Complete)
        }
    })
    .await
}
