//! The rest of the server surface on a ready session: resources, resource
//! templates, prompts, completion and logging — one API for both eras.
//!
//! Every listing goes through the same [`Paginator`] (page bound, item bound,
//! repeated cursors refused). Cache hints (`ttlMs`, `cacheScope`, 2026) are kept
//! on page results and summarised on a [`Listing`]; the matching
//! `list_changed` notification makes a listing stale ([`Session::is_fresh`]).

use mcp_types::Request as _;
use mcp_types::requests::{GetPrompt, ReadResource};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_types::headers;
use mcp_types::requests::{
    ListPrompts, ListResourceTemplates, ListResources, SetLevel, Subscribe, Unsubscribe,
};
use mcp_types::{
    CompleteParams, CompleteResult, CompletionArgument, CompletionContext, CompletionReference,
    GetPromptParams, GetPromptResult, LoggingLevel, PaginatedParams, Prompt, ReadResourceParams,
    ReadResourceResult, RequestOutcome, Resource, ResourceTemplate, ResourceUriParams,
    SetLevelParams, error_codes,
};
use serde_json::{Map, Value};

use crate::driver::RequestOptions;
use crate::page::Page;
use crate::paginate::Paginator;
pub use crate::protocol::subscriptions::ListKind;
use crate::session::{Ready, Session};
use crate::{CallOptions, SessionError};

/// Every item of a listing (all pages), with what is known about its
/// freshness.
#[derive(Clone, Debug)]
pub struct Listing<T> {
    /// The items, in the server's order.
    pub items: Vec<T>,
    /// The shortest `ttlMs` any page carried.
    pub ttl: Option<Duration>,
    /// The `cacheScope` of the first page that had one.
    pub cache_scope: Option<mcp_types::CacheScope>,
    kind: ListKind,
    fetched: Instant,
    generation: u64,
}

impl Session<Ready> {
    /// Whether a listing is still fresh: its `ttlMs` has not run out, no
    /// matching `list_changed` notification arrived since it was fetched,
    /// and the session did not have to start a new server session
    /// ([`SessionEvent::Reestablished`](crate::SessionEvent::Reestablished)).
    /// A listing without `ttlMs` is fresh until one of those.
    pub fn is_fresh<T>(&self, listing: &Listing<T>) -> bool {
        let unchanged = self.link.shared.list_generation(listing.kind) == listing.generation;
        let in_time = listing
            .ttl
            .is_none_or(|ttl| listing.fetched.elapsed() < ttl);
        unchanged && in_time
    }

    /// One page of `resources/list`.
    pub async fn list_resources_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<Page<Resource>, SessionError> {
        Ok(self
            .request::<ListResources>(&PaginatedParams::with_cursor(cursor.map(str::to_owned)))
            .await?
            .into())
    }

    /// Every resource (all pages, bounded).
    pub async fn list_resources(&self) -> Result<Listing<Resource>, SessionError> {
        self.list_all(ListKind::Resources, ListResources::METHOD, |s, c| {
            Box::pin(async move { s.list_resources_page(c.as_deref()).await })
        })
        .await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<Page<ResourceTemplate>, SessionError> {
        Ok(self
            .request::<ListResourceTemplates>(&PaginatedParams::with_cursor(
                cursor.map(str::to_owned),
            ))
            .await?
            .into())
    }

    /// Every resource template (all pages, bounded).
    pub async fn list_resource_templates(&self) -> Result<Listing<ResourceTemplate>, SessionError> {
        self.list_all(
            ListKind::Resources,
            ListResourceTemplates::METHOD,
            |s, c| Box::pin(async move { s.list_resource_templates_page(c.as_deref()).await }),
        )
        .await
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<Page<Prompt>, SessionError> {
        Ok(self
            .request::<ListPrompts>(&PaginatedParams::with_cursor(cursor.map(str::to_owned)))
            .await?
            .into())
    }

    /// Every prompt (all pages, bounded).
    pub async fn list_prompts(&self) -> Result<Listing<Prompt>, SessionError> {
        self.list_all(ListKind::Prompts, ListPrompts::METHOD, |s, c| {
            Box::pin(async move { s.list_prompts_page(c.as_deref()).await })
        })
        .await
    }

    /// Reads a resource. Text and blob contents are kept as sent. "Not found"
    /// (`-32002`, or `-32602` in the 2026 era) is
    /// [`SessionError::ResourceNotFound`]. `input_required` rounds are
    /// answered by the host's handlers.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, SessionError> {
        self.read_resource_with(uri, &CallOptions::default()).await
    }

    /// [`Session::read_resource`] with a deadline, a progress sink or a
    /// result limit of its own.
    pub async fn read_resource_with(
        &self,
        uri: &str,
        options: &CallOptions,
    ) -> Result<ReadResourceResult, SessionError> {
        let params = ReadResourceParams::new(uri);
        let body = to_object(&params)?;
        let headers = self.modern_headers(ReadResource::METHOD, uri);
        let outcome = self
            .call_outcome::<ReadResourceResult>(
                ReadResource::METHOD,
                &body,
                RequestOptions {
                    headers,
                    ..options.request(self.call_timing(options))
                },
            )
            .await;
        match outcome {
            Ok(outcome) => complete(ReadResource::METHOD, outcome),
            Err(SessionError::Server { code, .. })
                if code == error_codes::RESOURCE_NOT_FOUND
                    || (code == error_codes::INVALID_PARAMS && self.is_modern()) =>
            {
                Err(SessionError::ResourceNotFound {
                    uri: uri.to_owned(),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Gets a prompt with string arguments, from any pairs:
    /// `[("city", "Paris")]`, a `BTreeMap`, a `HashMap`, or `[] as [(&str, &str); 0]`
    /// for none.
    pub async fn get_prompt<K: Into<String>, V: Into<String>>(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> Result<GetPromptResult, SessionError> {
        self.get_prompt_with(name, arguments, &CallOptions::default())
            .await
    }

    /// [`Session::get_prompt`] with a deadline, a progress sink or a result
    /// limit of its own.
    pub async fn get_prompt_with<K: Into<String>, V: Into<String>>(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
        options: &CallOptions,
    ) -> Result<GetPromptResult, SessionError> {
        let arguments: BTreeMap<String, String> = arguments
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let args = (!arguments.is_empty()).then_some(arguments);
        let body = to_object(&GetPromptParams::new(name, args))?;
        let headers = self.modern_headers(GetPrompt::METHOD, name);
        let outcome = self
            .call_outcome::<GetPromptResult>(
                GetPrompt::METHOD,
                &body,
                RequestOptions {
                    headers,
                    ..options.request(self.call_timing(options))
                },
            )
            .await?;
        complete(GetPrompt::METHOD, outcome)
    }

    /// `completion/complete` for a prompt or resource-template argument,
    /// with the values of other arguments as context.
    pub async fn complete(
        &self,
        reference: CompletionReference,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
    ) -> Result<CompleteResult, SessionError> {
        let mut params = CompleteParams::new(
            reference,
            CompletionArgument {
                name: argument.to_owned(),
                value: value.to_owned(),
                ..CompletionArgument::default()
            },
        );
        if !context.is_empty() {
            params.context = Some(CompletionContext {
                arguments: Some(context),
                ..CompletionContext::default()
            });
        }
        self.request::<mcp_types::requests::Complete>(&params).await
    }

    /// Asks for log messages at `level` and above: `logging/setLevel` in the
    /// legacy era; in the 2026 era the level rides in every later request's
    /// `_meta`. Messages arrive as `notifications/message` events.
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), SessionError> {
        match &self.state.request_meta {
            None => {
                self.request::<SetLevel>(&SetLevelParams::new(level))
                    .await?;
            }
            Some(lock) => {
                let value = serde_json::to_value(level).map_err(SessionError::Params)?;
                let mut guard = lock.write().unwrap_or_else(|p| p.into_inner());
                let mut meta = guard.as_ref().clone();
                meta.insert(mcp_types::meta_keys::LOG_LEVEL.to_owned(), value);
                *guard = Arc::new(meta);
            }
        }
        Ok(())
    }

    /// `resources/subscribe` (legacy era): `notifications/resources/updated`
    /// for `uri` then arrive as events.
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), SessionError> {
        self.request::<Subscribe>(&ResourceUriParams::new(uri))
            .await?;
        Ok(())
    }

    /// `resources/unsubscribe` (legacy era).
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), SessionError> {
        self.request::<Unsubscribe>(&ResourceUriParams::new(uri))
            .await?;
        Ok(())
    }

    /// The 2026 per-message headers (`Mcp-Method`, `Mcp-Name`); none in the
    /// legacy era.
    pub(crate) fn modern_headers(&self, method: &str, name: &str) -> Vec<(String, String)> {
        if !self.is_modern() {
            return Vec::new();
        }
        let mut headers = vec![(headers::MCP_METHOD.to_owned(), method.to_owned())];
        if !name.is_empty() {
            headers.push((
                headers::MCP_NAME.to_owned(),
                headers::encode_header_value(name),
            ));
        }
        headers
    }

    pub(crate) async fn list_all<T>(
        &self,
        kind: ListKind,
        method: &'static str,
        fetch: impl for<'a> Fn(&'a Self, Option<String>) -> PageFuture<'a, T>,
    ) -> Result<Listing<T>, SessionError> {
        let generation = self.link.shared.list_generation(kind);
        let fetched = Instant::now();
        let config = &self.link.config;
        let mut pager = Paginator::new(method, config.max_pages, config.max_tools);
        let mut items = Vec::new();
        let mut ttl: Option<Duration> = None;
        let mut cache_scope = None;
        let mut cursor = None;
        loop {
            let page = fetch(self, cursor.take()).await?;
            pager.add_items(page.items.len())?;
            items.extend(page.items);
            if let Some(t) = page.ttl {
                ttl = Some(ttl.map_or(t, |old| old.min(t)));
            }
            cache_scope = cache_scope.or(page.cache_scope);
            match pager.next(page.next_cursor)? {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        Ok(Listing {
            items,
            ttl,
            cache_scope,
            kind,
            fetched,
            generation,
        })
    }
}

type PageFuture<'a, T> = mcp_transport::BoxFuture<'a, Result<Page<T>, SessionError>>;

fn to_object<P: serde::Serialize>(params: &P) -> Result<Map<String, Value>, SessionError> {
    match serde_json::to_value(params).map_err(SessionError::Params)? {
        Value::Object(map) => Ok(map),
        _ => Err(SessionError::Params(serde::ser::Error::custom(
            "request params must be an object",
        ))),
    }
}

fn complete<T>(method: &str, outcome: RequestOutcome<T>) -> Result<T, SessionError> {
    match outcome {
        RequestOutcome::Complete(result) => Ok(result),
        RequestOutcome::Task(task) => Err(SessionError::UnexpectedTask {
            method: method.to_owned(),
            task: Box::new(task),
        }),
        _ => Err(SessionError::Unsupported {
            method: method.to_owned(),
            feature: "input_required results outside the 2026-07-28 era",
        }),
    }
}
