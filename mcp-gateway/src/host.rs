//! What the servers behind the gateway ask of the host: sampling and
//! elicitation go to it (when it declared them), its roots come to the
//! stdio servers.
//!
//! A [`HostLink`] is made before the hub, because a server's client
//! features are fixed when its session starts: [`HostLink::attach`] gives
//! each server's session handlers that forward to whichever host is
//! connected, and refuse by name when none is, when it did not declare the
//! feature, or when its connection cannot carry requests.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_hub::ServerSpec;
use mcp_server::{ResponseError, ServerError, ServerHandle};
use mcp_session::{
    ClientHandlers, Elicitation, ElicitationHandler, HandlerError, Roots, SamplingHandler,
};
use mcp_transport::BoxFuture;
use mcp_types::requests::{CreateMessage, Elicit, ListRoots};
use mcp_types::text::Untrusted;
use mcp_types::{
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, Meta, RequestParams, Root,
};

use crate::GatewayConfig;

/// The `_meta` key naming the server a request to the host comes from.
pub(crate) const SERVER_META: &str = "mcp-gateway/server";

/// The link between the servers' sessions and the host's connection. Cheap
/// to clone; see the module docs.
#[derive(Clone, Debug)]
pub struct HostLink {
    inner: Arc<Link>,
}

#[derive(Debug)]
struct Link {
    handle: Mutex<Option<ServerHandle>>,
    timeout: Duration,
    /// The roots offered to each stdio server: the configured ones until
    /// the host tells its own.
    stdio_roots: Mutex<Vec<Roots>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding these short locks leaves plain data behind.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl HostLink {
    /// A link whose requests to the host wait
    /// [`GatewayConfig::host_request_timeout`].
    pub fn new(config: &GatewayConfig) -> Self {
        Self {
            inner: Arc::new(Link {
                handle: Mutex::new(None),
                timeout: config.host_request_timeout,
                stdio_roots: Mutex::new(Vec::new()),
            }),
        }
    }

    /// `spec` with client features that forward to the host: sampling (with
    /// tools) and elicitation (form and URL) always, since the host is not
    /// known yet when the server starts; roots for a stdio server, the
    /// configured ones (or none) until the host's arrive. A remote
    /// server's roots stay as configured.
    pub fn attach(&self, mut spec: ServerSpec) -> ServerSpec {
        let server = spec.name.to_string();
        let mut handlers: ClientHandlers = spec.session.handlers.clone();
        handlers = handlers
            .sampling(ForwardSampling {
                server: server.clone(),
                link: self.clone(),
            })
            .elicitation(ForwardElicitation {
                server,
                link: self.clone(),
            });
        if spec.connector.is_stdio() {
            let roots = handlers
                .roots_value()
                .cloned()
                .unwrap_or_else(|| Roots::new(Vec::new()));
            lock(&self.inner.stdio_roots).push(roots.clone());
            handlers = handlers.roots(roots);
        }
        spec.session.handlers = handlers;
        spec
    }

    /// The host's connection from now on.
    pub(crate) fn connect(&self, handle: ServerHandle) {
        *lock(&self.inner.handle) = Some(handle);
    }

    pub(crate) fn handle(&self) -> Option<ServerHandle> {
        lock(&self.inner.handle).clone()
    }

    /// Asks the host for its roots (when it declared them) and hands them
    /// to every stdio server.
    pub(crate) async fn refresh_roots(&self) {
        let Some(handle) = self.handle() else {
            return;
        };
        let declared = handle
            .peer()
            .session
            .is_some_and(|s| s.capabilities.roots.is_some());
        if !declared {
            return;
        }
        match handle
            .request::<ListRoots>(RequestParams::default(), self.inner.timeout)
            .await
        {
            Ok(result) => self.set_host_roots(result.roots),
            Err(e) => tracing::info!(error = %e, "the host's roots could not be read"),
        }
    }

    fn set_host_roots(&self, roots: Vec<Root>) {
        for stdio in lock(&self.inner.stdio_roots).iter() {
            stdio.set(roots.clone());
        }
    }

    /// The host's connection for a request needing `capability`.
    fn host(&self) -> Result<ServerHandle, HandlerError> {
        self.handle()
            .ok_or_else(|| HandlerError::refused("no host is connected to the gateway"))
    }
}

/// A server's request put to the host failed: the refusal the server gets.
fn refusal(feature: &str, error: ServerError) -> HandlerError {
    match error {
        ServerError::ClientLacksCapability { capability } => HandlerError::refused(format!(
            "the host behind the gateway did not declare `{capability}`: {feature} refused"
        )),
        ServerError::NotInitialized | ServerError::NoSession => HandlerError::refused(format!(
            "the host's connection to the gateway carries no requests from servers \
             (no initialized legacy session): {feature} refused"
        )),
        ServerError::Closed => HandlerError::refused("no host is connected to the gateway"),
        ServerError::NoAnswer(ResponseError::Error(e)) => HandlerError::refused(format!(
            "the host refused ({}): {}",
            e.code,
            Untrusted::new(&e.message)
        )),
        ServerError::NoAnswer(ResponseError::Timeout) => {
            HandlerError::internal("the host did not answer in time")
        }
        other => HandlerError::internal(format!("the request to the host failed: {other}")),
    }
}

/// Puts the server's name into a request's `_meta`.
fn label(meta: &mut Option<Meta>, server: &str) {
    meta.get_or_insert_with(Meta::new)
        .insert(SERVER_META, serde_json::Value::from(server));
}

struct ForwardSampling {
    server: String,
    link: HostLink,
}

impl SamplingHandler for ForwardSampling {
    fn create_message(
        &self,
        mut params: CreateMessageParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        Box::pin(async move {
            let handle = self.link.host()?;
            label(&mut params.meta, &self.server);
            tracing::debug!(server = %self.server, "sampling request passed to the host");
            handle
                .request::<CreateMessage>(params, self.link.inner.timeout)
                .await
                .map_err(|e| refusal("sampling", e))
        })
    }

    fn supports_tools(&self) -> bool {
        // The host decides: a request with tools it cannot take is its to
        // refuse.
        true
    }
}

struct ForwardElicitation {
    server: String,
    link: HostLink,
}

impl ElicitationHandler for ForwardElicitation {
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        Box::pin(async move {
            let handle = self.link.host()?;
            let params = match request {
                Elicitation::Form(mut form) => {
                    label(&mut form.meta, &self.server);
                    ElicitParams::Form(form)
                }
                Elicitation::Url { mut params, .. } => {
                    let url_declared = handle.peer().session.is_some_and(|s| {
                        s.capabilities
                            .elicitation
                            .as_ref()
                            .is_some_and(|e| e.url.is_some())
                    });
                    if !url_declared {
                        return Err(HandlerError::refused(
                            "the host behind the gateway did not declare URL-mode elicitation",
                        ));
                    }
                    label(&mut params.meta, &self.server);
                    ElicitParams::Url(params)
                }
                _ => {
                    return Err(HandlerError::invalid_params(
                        "this elicitation mode is not passed on by the gateway",
                    ));
                }
            };
            handle
                .request::<Elicit>(params, self.link.inner.timeout)
                .await
                .map_err(|e| refusal("elicitation", e))
        })
    }

    fn supports_url(&self) -> bool {
        true
    }
}
