//! The host's requests, answered through the hub: tools by the served
//! surface and the namespace, resources, templates and prompts of every
//! server spanned into one listing, reads, prompts and completions routed
//! by the server named in the URI or prompt name. Every operation takes
//! the hub's governed path; nothing here decides policy.

use std::sync::Arc;

use mcp_hub::{CallOptions, Hub, HubError, Page};
use mcp_server::{BoxFuture, HandlerResult, RequestContext, ServerHandler};
use mcp_types::notifications::RootsListChanged;
use mcp_types::text::Untrusted;
use mcp_types::{
    CallToolParams, CallToolResult, CompleteParams, CompleteResult, CompletionReference,
    ContentBlock, Cursor, ErrorCause, ErrorObject, GetPromptParams, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    LoggingLevel, Meta, Notification, PromptsCapability, ReadResourceParams, ReadResourceResult,
    RequestOutcome, ResourceContents, ResourcesCapability, ServerCapabilities, ToolsCapability,
    error_codes,
};
use serde_json::json;

use crate::HostLink;
use crate::names::{SpanCursor, prompt_name, resource_uri, split_prompt_name, split_resource_uri};
use crate::surface::{Served, page};

/// The `_meta` key of a refused or failed call's reason.
pub(crate) const ERROR_META: &str = "mcp-gateway/error";

/// Servers looked at for one page of a spanned listing before an empty
/// page is answered (with a cursor to go on from).
const MAX_SERVERS_PER_PAGE: usize = 16;

/// Serves the host; see the module docs.
#[derive(Debug)]
pub(crate) struct GatewayHandler {
    pub(crate) hub: Arc<Hub>,
    pub(crate) served: Arc<Served>,
    pub(crate) link: HostLink,
    pub(crate) page_size: usize,
    /// The host connection served (its id in the link).
    pub(crate) host: u64,
}

impl GatewayHandler {
    /// The registered server `name` names: exactly, else the one server
    /// whose name matches without regard to case (some hosts lower-case
    /// the authority of a URI).
    pub(crate) fn server(&self, name: &str) -> Option<String> {
        let servers = self.hub.servers();
        if let Some(exact) = servers.iter().find(|s| s.as_str() == name) {
            return Some(exact.to_string());
        }
        let mut loose = servers
            .iter()
            .filter(|s| s.as_str().eq_ignore_ascii_case(name));
        match (loose.next(), loose.next()) {
            (Some(only), None) => Some(only.to_string()),
            _ => None,
        }
    }

    /// One page of a catalogue spanning every server that is up, in
    /// registration order: each page comes from one server, and the cursor
    /// says which and carries that server's own.
    pub(crate) async fn span<T, F>(
        &self,
        cursor: Option<Cursor>,
        list: F,
    ) -> Result<(Vec<(String, T)>, Option<String>), ErrorObject>
    where
        F: for<'h> Fn(&'h Hub, String, Option<String>) -> BoxFuture<'h, Result<Page<T>, HubError>>,
    {
        let servers = self.hub.servers();
        let mut at = match cursor.as_deref() {
            None => SpanCursor {
                server: 0,
                inner: None,
            },
            Some(text) => SpanCursor::decode(text).ok_or_else(|| {
                ErrorObject::new(error_codes::INVALID_PARAMS, "not a cursor of this server")
            })?,
        };
        for _ in 0..MAX_SERVERS_PER_PAGE {
            let Some(server) = servers.get(at.server).map(|s| s.to_string()) else {
                return Ok((Vec::new(), None));
            };
            let (items, inner_next) = if self.served.is_up(&self.hub, &server) {
                match list(&self.hub, server.clone(), at.inner.clone()).await {
                    Ok(page) => (page.items, page.next_cursor),
                    Err(e) => {
                        tracing::debug!(%server, error = %e, "a listing of the server was left out");
                        (Vec::new(), None)
                    }
                }
            } else {
                (Vec::new(), None)
            };
            let next = match inner_next {
                Some(inner) => Some(SpanCursor {
                    server: at.server,
                    inner: Some(inner),
                }),
                None => (at.server + 1 < servers.len()).then(|| SpanCursor {
                    server: at.server + 1,
                    inner: None,
                }),
            };
            if !items.is_empty() || next.is_none() {
                let items = items.into_iter().map(|i| (server.clone(), i)).collect();
                return Ok((items, next.map(|n| n.encode())));
            }
            if let Some(next) = next {
                at = next;
            }
        }
        Ok((Vec::new(), Some(at.encode())))
    }
}

/// Pages of one server's listing read to find the owner of a bare name.
const MAX_PAGES_PER_OWNER_SEARCH: usize = 16;

/// Pages read in all for one bare name (each is a request to a server):
/// past it, the servers not yet read are not searched, and a name only they
/// have is not found.
const MAX_PAGES_PER_SEARCH: usize = 64;

/// What a search for the server that offers a bare name found.
enum Owner {
    /// No server that is up lists it.
    None,
    /// Exactly this one.
    One(String),
    /// Several do (their names, in registration order).
    Several(Vec<String>),
}

impl GatewayHandler {
    /// The one server (of those up) whose listing has an item `wanted`
    /// accepts: how a bare prompt name or a server's own resource URI is
    /// served, as a tool's bare name is when one server has it. Reads at
    /// most [`MAX_PAGES_PER_OWNER_SEARCH`] pages of each server and
    /// [`MAX_PAGES_PER_SEARCH`] in all.
    async fn owner<T, F>(&self, list: F, wanted: impl Fn(&T) -> bool) -> Owner
    where
        F: for<'h> Fn(&'h Hub, String, Option<String>) -> BoxFuture<'h, Result<Page<T>, HubError>>,
    {
        let mut owners = Vec::new();
        let mut budget = MAX_PAGES_PER_SEARCH;
        for server in self.hub.servers() {
            let server = server.to_string();
            if !self.served.is_up(&self.hub, &server) {
                continue;
            }
            let mut cursor = None;
            for _ in 0..MAX_PAGES_PER_OWNER_SEARCH {
                if budget == 0 {
                    tracing::debug!(
                        "the search for a bare name's server stopped at its page bound"
                    );
                    break;
                }
                budget -= 1;
                let Ok(page) = list(&self.hub, server.clone(), cursor.take()).await else {
                    break;
                };
                if page.items.iter().any(&wanted) {
                    owners.push(server.clone());
                    break;
                }
                match page.next_cursor {
                    Some(next) => cursor = Some(next),
                    None => break,
                }
            }
        }
        match owners.len() {
            0 => Owner::None,
            1 => Owner::One(owners.remove(0)),
            _ => Owner::Several(owners),
        }
    }

    /// The server and prompt a host's prompt name means: `SERVER/PROMPT`,
    /// else a bare name exactly one server lists.
    pub(crate) async fn prompt_owner(&self, name: &str) -> Result<(String, String), ErrorObject> {
        if let Some((server, prompt)) = split_prompt_name(name)
            && let Some(server) = self.server(server)
        {
            return Ok((server, prompt.to_owned()));
        }
        let owner = self
            .owner(
                |hub, server, cursor| {
                    Box::pin(
                        async move { hub.facade().list_prompts(&server, cursor.as_deref()).await },
                    )
                },
                |prompt: &mcp_types::Prompt| prompt.name == name,
            )
            .await;
        match owner {
            Owner::One(server) => Ok((server, name.to_owned())),
            Owner::None => Err(ErrorObject::new(
                error_codes::INVALID_PARAMS,
                format!(
                    "no prompt `{}` behind the gateway (prompts are named SERVER/PROMPT)",
                    Untrusted::new(name)
                ),
            )),
            Owner::Several(servers) => Err(ambiguous("prompt", name, &servers)),
        }
    }

    /// The server and its own URI a host's resource URI means:
    /// `mcp-gateway://SERVER/URI`, else a URI exactly one server lists.
    pub(crate) async fn resource_owner(
        &self,
        uri: &str,
    ) -> Result<Option<(String, String)>, ErrorObject> {
        if let Some((server, inner)) = split_resource_uri(uri)
            && let Some(server) = self.server(server)
        {
            return Ok(Some((server, inner.into_owned())));
        }
        let owner = self
            .owner(
                |hub, server, cursor| {
                    Box::pin(async move {
                        hub.facade()
                            .list_resources(&server, cursor.as_deref())
                            .await
                    })
                },
                |resource: &mcp_types::Resource| resource.uri == uri,
            )
            .await;
        match owner {
            Owner::One(server) => return Ok(Some((server, uri.to_owned()))),
            Owner::Several(servers) => return Err(ambiguous("resource", uri, &servers)),
            Owner::None => {}
        }
        // Not listed: a URI one server's template makes.
        let owner = self
            .owner(
                |hub, server, cursor| {
                    Box::pin(async move {
                        hub.facade()
                            .list_resource_templates(&server, cursor.as_deref())
                            .await
                    })
                },
                |template: &mcp_types::ResourceTemplate| {
                    crate::names::template_matches(&template.uri_template, uri)
                },
            )
            .await;
        match owner {
            Owner::One(server) => Ok(Some((server, uri.to_owned()))),
            Owner::None => Ok(None),
            Owner::Several(servers) => Err(ambiguous("resource", uri, &servers)),
        }
    }
}

/// A bare name several servers offer: the host must name the server.
fn ambiguous(what: &str, name: &str, servers: &[String]) -> ErrorObject {
    let mut error = ErrorObject::new(
        error_codes::INVALID_PARAMS,
        format!(
            "the {what} `{}` is offered by several servers behind the gateway ({}): name one \
             (its listed name carries the server)",
            Untrusted::new(name),
            servers.join(", ")
        ),
    );
    error.data = Some(json!({ "kind": "ambiguous", "servers": servers }));
    error
}

/// A hub's refusal of a request other than a tool call, as the JSON-RPC
/// error the host gets: the host's mistakes and the authority's refusals
/// are `-32602`, an operation the server does not offer `-32601`, the
/// server's own error keeps its code (its message labelled), the rest
/// `-32603`. Our words only, except the server's message, bounded.
pub(crate) fn error_object(error: &HubError) -> ErrorObject {
    let mut object = match error.cause() {
        ErrorCause::Input | ErrorCause::Policy => {
            ErrorObject::new(error_codes::INVALID_PARAMS, error.to_string())
        }
        ErrorCause::Server if matches!(error, HubError::Unsupported { .. }) => {
            ErrorObject::new(error_codes::METHOD_NOT_FOUND, error.to_string())
        }
        _ => ErrorObject::new(error_codes::INTERNAL_ERROR, error.to_string()),
    };
    if let HubError::Session { error: session, .. } = error
        && let Some(server) = session.error_object()
    {
        object.code = server.code;
        object.message = format!(
            "{error}; the server said: {}",
            Untrusted::new(&server.message)
        );
    }
    object.data = Some(json!({ "kind": error.kind() }));
    object
}

/// The hub's options for a host's tool call: the server's progress goes
/// back to the host when it asked for progress.
pub(crate) fn call_options(ctx: &RequestContext) -> CallOptions {
    let mut options = CallOptions::new();
    if ctx.wants_progress() {
        let sink = ctx.clone();
        options = options.on_progress(move |p| {
            if let Some(progress) = p.progress_f64() {
                // Progress that does not increase is dropped by the server
                // half (progress is advisory).
                sink.progress(progress, p.total_f64(), p.message.clone());
            }
        });
    }
    options
}

/// A hub's refusal of a tool call, as a tool result with `isError`, so the
/// model reads why (an unknown or ambiguous name stays a JSON-RPC error).
pub(crate) fn call_failure(error: &HubError) -> HandlerResult<CallToolResult> {
    if matches!(
        error,
        HubError::UnknownTool { .. } | HubError::Ambiguous { .. }
    ) {
        return Err(error_object(error));
    }
    let mut text = error.to_string();
    if let Some(said) = error.server_message() {
        text.push_str(&format!("\nthe server said: {}", Untrusted::new(said)));
    }
    let mut meta = Meta::new();
    meta.insert(
        ERROR_META,
        json!({ "kind": error.kind(), "server": error.server().map(|s| s.as_str()) }),
    );
    Ok(CallToolResult {
        content: vec![ContentBlock::text(text)],
        is_error: Some(true),
        meta: Some(meta),
        ..Default::default()
    })
}

/// Resource links and embedded resources in a result name `server`'s
/// resources: they are given the URIs the host reads them by.
pub(crate) fn served_uris(server: &str, content: &mut [ContentBlock]) {
    for block in content {
        match block {
            ContentBlock::ResourceLink(link) => link.uri = resource_uri(server, &link.uri),
            ContentBlock::Resource(embedded) => match &mut embedded.resource {
                ResourceContents::Text(t) => t.uri = resource_uri(server, &t.uri),
                ResourceContents::Blob(b) => b.uri = resource_uri(server, &b.uri),
                _ => {}
            },
            _ => {}
        }
    }
}

/// A read's contents name `server`'s resources: they are given the URIs
/// the host reads them by.
pub(crate) fn served_contents(server: &str, contents: &mut [ResourceContents]) {
    for contents in contents {
        match contents {
            ResourceContents::Text(t) => t.uri = resource_uri(server, &t.uri),
            ResourceContents::Blob(b) => b.uri = resource_uri(server, &b.uri),
            _ => {}
        }
    }
}

/// A URI no server has: `-32002` in the legacy era, `-32602` in 2026-07-28
/// (SEP-2164), with the URI as `data.uri` in both.
pub(crate) fn not_found(uri: &str, version: mcp_types::ProtocolVersion) -> ErrorObject {
    let code = match version.era() {
        mcp_types::Era::Modern => error_codes::INVALID_PARAMS,
        _ => error_codes::RESOURCE_NOT_FOUND,
    };
    let mut error = ErrorObject::new(code, "no server behind the gateway has this resource");
    error.data = Some(json!({ "uri": uri }));
    error
}

impl ServerHandler for GatewayHandler {
    fn capabilities(&self) -> ServerCapabilities {
        let mut caps = ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(true),
                ..Default::default()
            }),
            resources: Some(ResourcesCapability {
                // Only when a server can take the subscription on.
                subscribe: crate::subscribe::can_forward(&self.hub).then_some(true),
                ..Default::default()
            }),
            prompts: Some(PromptsCapability::default()),
            completions: Some(Default::default()),
            logging: Some(Default::default()),
            // The tasks extension, when a server offers it (`tasks.rs`).
            extensions: crate::tasks::extensions(&self.hub),
            // 2025-11-25 tasks, when a server takes them (`legacy_tasks.rs`).
            tasks: crate::legacy_tasks::capability(&self.hub),
            ..Default::default()
        };
        crate::skills::declare(&self.hub, &mut caps);
        caps
    }

    fn list_tools(
        &self,
        cursor: Option<Cursor>,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ListToolsResult>> {
        Box::pin(async move {
            let mut listed = page(&self.served.surface(), cursor.as_deref(), self.page_size)?;
            // 2026-07-28 has no `taskSupport`: its tasks are the extension's.
            if ctx.protocol_version().era() == mcp_types::Era::Modern {
                listed
                    .tools
                    .iter_mut()
                    .for_each(crate::legacy_tasks::strip_task_support);
            }
            Ok(listed)
        })
    }

    fn call_tool(
        &self,
        params: CallToolParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<CallToolResult>> {
        Box::pin(async move {
            let options = call_options(&ctx);
            // The server the name routes to, for the URIs in its result.
            let server = self
                .hub
                .namespace()
                .resolve(&params.name)
                .ok()
                .map(|t| t.server().to_string());
            let arguments = params.arguments.unwrap_or_default();
            // While it runs, the server's requests (sampling, elicitation)
            // are this host's.
            let _calling = server
                .as_deref()
                .map(|server| self.link.calling(self.host, server, ctx.id().clone()));
            let call = self.hub.call_with(&params.name, arguments, &options);
            tokio::select! {
                result = call => match result {
                    Ok(mut result) => {
                        if let Some(server) = server {
                            served_uris(&server, &mut result.content);
                        }
                        Ok(result)
                    }
                    Err(error) => call_failure(&error),
                },
                // Dropping the call cancels it downstream.
                () = ctx.cancelled() => Err(ErrorObject::new(error_codes::INTERNAL_ERROR, "cancelled")),
            }
        })
    }

    fn call_tool_outcome(
        &self,
        params: CallToolParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<RequestOutcome<CallToolResult>>> {
        // A 2026-07-28 host gets the rounds (crate::rounds); a legacy one is
        // asked by server→client request while the hub's session follows them.
        if ctx.protocol_version().era() == mcp_types::Era::Modern {
            return Box::pin(self.call_tool_round(params, ctx));
        }
        // A 2025-11-25 task-augmented call (`legacy_tasks.rs`).
        if crate::legacy_tasks::asks_for_task(&params, ctx.protocol_version()) {
            return Box::pin(self.legacy_call_as_task(params, ctx));
        }
        Box::pin(async move {
            self.call_tool(params, ctx)
                .await
                .map(RequestOutcome::Complete)
        })
    }

    fn list_resources(
        &self,
        cursor: Option<Cursor>,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ListResourcesResult>> {
        Box::pin(async move {
            let (items, next) = self
                .span(cursor, |hub, server, cursor| {
                    Box::pin(async move {
                        hub.facade()
                            .list_resources(&server, cursor.as_deref())
                            .await
                    })
                })
                .await?;
            Ok(ListResourcesResult {
                resources: items
                    .into_iter()
                    .map(|(server, mut r)| {
                        r.uri = resource_uri(&server, &r.uri);
                        r
                    })
                    .collect(),
                next_cursor: next,
                ..Default::default()
            })
        })
    }

    fn list_resource_templates(
        &self,
        cursor: Option<Cursor>,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ListResourceTemplatesResult>> {
        Box::pin(async move {
            let (items, next) = self
                .span(cursor, |hub, server, cursor| {
                    Box::pin(async move {
                        hub.facade()
                            .list_resource_templates(&server, cursor.as_deref())
                            .await
                    })
                })
                .await?;
            Ok(ListResourceTemplatesResult {
                resource_templates: items
                    .into_iter()
                    .map(|(server, mut t)| {
                        t.uri_template = resource_uri(&server, &t.uri_template);
                        t
                    })
                    .collect(),
                next_cursor: next,
                ..Default::default()
            })
        })
    }

    fn read_resource(
        &self,
        params: ReadResourceParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ReadResourceResult>> {
        Box::pin(async move {
            let (server, uri) = self
                .resource_owner(&params.uri)
                .await?
                .ok_or_else(|| not_found(&params.uri, ctx.protocol_version()))?;
            let mut result = self
                .hub
                .facade()
                .read_resource(&server, &uri)
                .await
                .map_err(|e| error_object(&e))?;
            served_contents(&server, &mut result.contents);
            Ok(result)
        })
    }

    fn read_resource_outcome(
        &self,
        params: ReadResourceParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<RequestOutcome<ReadResourceResult>>> {
        if ctx.protocol_version().era() == mcp_types::Era::Modern {
            return Box::pin(self.read_resource_round(params, ctx));
        }
        Box::pin(async move {
            self.read_resource(params, ctx)
                .await
                .map(RequestOutcome::Complete)
        })
    }

    fn list_prompts(
        &self,
        cursor: Option<Cursor>,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<ListPromptsResult>> {
        Box::pin(async move {
            let (items, next) = self
                .span(cursor, |hub, server, cursor| {
                    Box::pin(
                        async move { hub.facade().list_prompts(&server, cursor.as_deref()).await },
                    )
                })
                .await?;
            Ok(ListPromptsResult {
                prompts: items
                    .into_iter()
                    .map(|(server, mut p)| {
                        p.name = prompt_name(&server, &p.name);
                        p
                    })
                    .collect(),
                next_cursor: next,
                ..Default::default()
            })
        })
    }

    fn get_prompt(
        &self,
        params: GetPromptParams,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<GetPromptResult>> {
        Box::pin(async move {
            let (server, name) = self.prompt_owner(&params.name).await?;
            let arguments = params.arguments.clone().unwrap_or_default();
            self.hub
                .facade()
                .get_prompt(&server, &name, arguments)
                .await
                .map_err(|e| error_object(&e))
        })
    }

    fn get_prompt_outcome(
        &self,
        params: GetPromptParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<RequestOutcome<GetPromptResult>>> {
        if ctx.protocol_version().era() == mcp_types::Era::Modern {
            return Box::pin(self.get_prompt_round(params, ctx));
        }
        Box::pin(async move {
            self.get_prompt(params, ctx)
                .await
                .map(RequestOutcome::Complete)
        })
    }

    fn complete(
        &self,
        mut params: CompleteParams,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<CompleteResult>> {
        Box::pin(async move {
            let refused = || {
                ErrorObject::new(
                    error_codes::INVALID_PARAMS,
                    "the reference names no prompt or resource template behind the gateway",
                )
            };
            let server = match &mut params.reference {
                CompletionReference::Prompt(prompt) => {
                    let (server, name) = self.prompt_owner(&prompt.name).await?;
                    prompt.name = name;
                    server
                }
                CompletionReference::ResourceTemplate(template) => {
                    let (server, uri) = split_resource_uri(&template.uri).ok_or_else(refused)?;
                    let (server, uri) =
                        (self.server(server).ok_or_else(refused)?, uri.into_owned());
                    template.uri = uri;
                    server
                }
                _ => return Err(refused()),
            };
            // The host's own `_meta` (its progress token, its version) is
            // not the downstream session's.
            params.meta = None;
            self.hub
                .facade()
                .complete(&server, params)
                .await
                .map_err(|e| error_object(&e))
        })
    }

    fn subscribe(
        &self,
        params: mcp_types::SubscribeParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<()>> {
        Box::pin(async move {
            let (server, uri) = self
                .resource_owner(&params.uri)
                .await?
                .ok_or_else(|| not_found(&params.uri, ctx.protocol_version()))?;
            self.served
                .subscriptions
                .subscribe(&self.hub, &self.link, self.host, &params.uri, &server, &uri)
                .await
                .map_err(|refused| match refused {
                    crate::subscribe::Refused::Hub(e) => error_object(&e),
                    crate::subscribe::Refused::Bound(e) => e,
                })
        })
    }

    fn unsubscribe(
        &self,
        params: mcp_types::UnsubscribeParams,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<()>> {
        // Unsubscribing from what was not subscribed is no error.
        self.served
            .subscriptions
            .unsubscribe(self.host, &params.uri);
        Box::pin(async { Ok(()) })
    }

    fn list_skills(
        &self,
        cursor: Option<Cursor>,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<mcp_types::ListSkillsResult>> {
        Box::pin(self.skills_page(cursor))
    }

    fn get_skill(
        &self,
        params: mcp_types::GetSkillParams,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<mcp_types::GetSkillResult>> {
        Box::pin(self.skill(params))
    }

    fn read_directory(
        &self,
        params: mcp_types::ReadDirectoryParams,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<mcp_types::ReadDirectoryResult>> {
        Box::pin(self.directory_page(params))
    }

    fn tool_input_schema(&self, name: &str) -> Option<mcp_types::JsonSchemaDoc> {
        self.served
            .surface()
            .tools
            .iter()
            .find(|tool| tool.name == name)
            .map(|tool| tool.input_schema.clone())
    }

    fn set_log_level(
        &self,
        level: LoggingLevel,
        _ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<()>> {
        self.link.set_log_level(self.host, level);
        Box::pin(async { Ok(()) })
    }

    fn get_task(
        &self,
        params: mcp_types::GetTaskParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<mcp_types::Task>> {
        if ctx.protocol_version().era() == mcp_types::Era::Legacy {
            return Box::pin(self.legacy_get_task(params, ctx));
        }
        Box::pin(self.host_get_task(params, ctx))
    }

    fn get_task_payload(
        &self,
        params: mcp_types::GetTaskPayloadParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<mcp_types::GetTaskPayloadResult>> {
        Box::pin(self.legacy_task_result(params, ctx))
    }

    fn update_task(
        &self,
        params: mcp_types::UpdateTaskParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<()>> {
        Box::pin(self.host_update_task(params, ctx))
    }

    fn cancel_task(
        &self,
        params: mcp_types::CancelTaskParams,
        ctx: RequestContext,
    ) -> BoxFuture<'_, HandlerResult<mcp_types::CancelTaskResult>> {
        if ctx.protocol_version().era() == mcp_types::Era::Legacy {
            return Box::pin(self.legacy_cancel_task(params, ctx));
        }
        Box::pin(self.host_cancel_task(params, ctx))
    }

    fn watch_tasks(
        &self,
        task_ids: Vec<String>,
        ctx: RequestContext,
    ) -> BoxFuture<'_, Vec<String>> {
        Box::pin(self.host_watch_tasks(task_ids, ctx))
    }

    fn notification(&self, method: &str, _params: Option<serde_json::Value>) {
        if method == RootsListChanged::METHOD {
            let link = self.link.clone();
            let host = self.host;
            tokio::spawn(async move { link.refresh_roots(host).await });
        }
    }
}
