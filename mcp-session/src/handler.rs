//! Client features: what the host answers when the server asks (sampling,
//! elicitation, roots).
//!
//! A host registers only what it supports in [`ClientHandlers`]; the session
//! declares exactly those capabilities, and a server request for anything
//! else is refused with a JSON-RPC error naming the feature. The same
//! handlers serve both eras: legacy servers send JSON-RPC requests (answered
//! concurrently with the host's own calls), 2026 servers return
//! `input_required` results (answered, then the original request is sent
//! again with the responses).

use mcp_types::notifications::Progress;
use mcp_types::requests::{CreateMessage, Elicit, ListRoots};
use mcp_types::{Notification as _, Request as _};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use mcp_transport::BoxFuture;
use mcp_types::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult,
    ElicitUrlParams, ElicitationCapability, ErrorObject, ListRootsResult, ProgressToken, Root,
    RootsCapability, SamplingCapability, ServerRequestMessage, error_codes,
};
use serde_json::{Map, Value};
use tokio::sync::watch;

use crate::SessionError;
use crate::driver::Shared;
use crate::protocol::server_requests;

/// Why a host's handler did not do its job: the one handler error of the
/// session's client features (sent to the server as a JSON-RPC error) and of
/// the hub's resource handlers (reported in a hub event). The message is the
/// host's words; as it may go to the server, it must not carry secrets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandlerError {
    code: i64,
    message: String,
}

impl std::fmt::Display for HandlerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HandlerError {}

impl HandlerError {
    /// The host's words, as written.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON-RPC error code a server is sent.
    pub fn code(&self) -> i64 {
        self.code
    }

    /// The user or the host refused (sent as `-32600`-class refusal; the spec's
    /// sampling refusal uses a generic error code).
    pub fn refused(message: impl Into<String>) -> Self {
        Self {
            code: -1,
            message: message.into(),
        }
    }

    /// The request's params were not acceptable.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self {
            code: error_codes::INVALID_PARAMS,
            message: message.into(),
        }
    }

    /// The handler failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            code: error_codes::INTERNAL_ERROR,
            message: message.into(),
        }
    }

    /// The JSON-RPC error object sent to the server.
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject {
            code: self.code,
            message: self.message.clone(),
            data: None,
        }
    }
}

/// Answers `sampling/createMessage`.
pub trait SamplingHandler: Send + Sync + 'static {
    /// Runs the model (after whatever review the host requires).
    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>>;

    /// [`create_message`](Self::create_message), with a way to tell the
    /// server how far along the request is, when it asked
    /// ([`ProgressReporter::wanted`]). The default ignores the reporter; a
    /// handler that reports progress (a relay passing on its own client's,
    /// or a long review) implements this one too.
    fn create_message_reporting(
        &self,
        params: CreateMessageParams,
        progress: ProgressReporter,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        let _ = progress;
        self.create_message(params)
    }

    /// Whether tools and tool results may appear in sampling requests
    /// (declared as `sampling.tools`). A server that sends them anyway is
    /// refused before the handler is called.
    fn supports_tools(&self) -> bool {
        false
    }
}

/// An elicitation request, checked and ready to show.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Elicitation {
    /// Ask the user to fill in a form (the schema says what fields).
    Form(mcp_types::ElicitFormParams),
    /// Ask the user to open a URL. `host` is the URL's host, to show the
    /// user where they are being sent; consent is required before opening it.
    Url {
        /// The request as sent.
        params: ElicitUrlParams,
        /// The host of `params.url`, to show.
        host: String,
    },
}

impl Elicitation {
    /// For a form: the `default` of every field that has one (SEP-1034), to
    /// pre-fill the form or to complete what the user left empty.
    pub fn form_defaults(&self) -> std::collections::BTreeMap<String, mcp_types::ElicitValue> {
        let Elicitation::Form(form) = self else {
            return Default::default();
        };
        let schema = serde_json::to_value(&form.requested_schema).unwrap_or(Value::Null);
        let mut out = std::collections::BTreeMap::new();
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, field) in properties {
                let default = field.get("default").cloned();
                if let Some(value) = default.and_then(|d| serde_json::from_value(d).ok()) {
                    out.insert(name.clone(), value);
                }
            }
        }
        out
    }
}

/// Answers `elicitation/create`.
pub trait ElicitationHandler: Send + Sync + 'static {
    /// Shows the request to the user and returns their answer.
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<ElicitResult, HandlerError>>;

    /// [`elicit`](Self::elicit), with a way to tell the server how far
    /// along the request is, when it asked ([`ProgressReporter::wanted`]).
    /// The default ignores the reporter.
    fn elicit_reporting(
        &self,
        request: Elicitation,
        progress: ProgressReporter,
    ) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        let _ = progress;
        self.elicit(request)
    }

    /// Whether form mode is supported (declared as `elicitation.form`).
    fn supports_form(&self) -> bool {
        true
    }

    /// Whether URL mode is supported (declared as `elicitation.url`).
    fn supports_url(&self) -> bool {
        false
    }
}

/// The roots the host exposes; changing them notifies every session that
/// uses this value (`notifications/roots/list_changed`, legacy era).
#[derive(Clone, Debug)]
pub struct Roots {
    tx: Arc<watch::Sender<Arc<Vec<Root>>>>,
}

impl Roots {
    /// Roots with this initial list.
    pub fn new(roots: Vec<Root>) -> Self {
        let (tx, _) = watch::channel(Arc::new(roots));
        Self { tx: Arc::new(tx) }
    }

    /// Replaces the list.
    pub fn set(&self, roots: Vec<Root>) {
        self.tx.send_replace(Arc::new(roots));
    }

    /// The current list.
    pub fn get(&self) -> Arc<Vec<Root>> {
        self.tx.borrow().clone()
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<Arc<Vec<Root>>> {
        self.tx.subscribe()
    }
}

/// The client features a host offers. `Default` offers none.
#[derive(Clone, Default)]
pub struct ClientHandlers {
    sampling: Option<Arc<dyn SamplingHandler>>,
    elicitation: Option<Arc<dyn ElicitationHandler>>,
    roots: Option<Roots>,
}

impl std::fmt::Debug for ClientHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientHandlers")
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("roots", &self.roots)
            .finish()
    }
}

impl ClientHandlers {
    /// No client features.
    pub fn new() -> Self {
        Self::default()
    }

    /// Offers sampling.
    pub fn sampling(mut self, handler: impl SamplingHandler) -> Self {
        self.sampling = Some(Arc::new(handler));
        self
    }

    /// Offers elicitation.
    pub fn elicitation(mut self, handler: impl ElicitationHandler) -> Self {
        self.elicitation = Some(Arc::new(handler));
        self
    }

    /// Offers sampling, answered by an async closure (text only: for
    /// `sampling.tools`, implement [`SamplingHandler`]):
    ///
    /// ```
    /// use mcp_session::ClientHandlers;
    /// use mcp_types::CreateMessageResult;
    ///
    /// let handlers = ClientHandlers::new().on_sampling(|request| async move {
    ///     let asked = request.messages.len();
    ///     Ok(CreateMessageResult::text("my-model", format!("{asked} messages read")))
    /// });
    /// assert!(handlers.capabilities().sampling.is_some());
    /// ```
    pub fn on_sampling<F, Fut>(self, f: F) -> Self
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, HandlerError>> + Send + 'static,
    {
        self.sampling(FnSampling(f))
    }

    /// Offers elicitation in form mode, answered by an async closure (for
    /// URL mode, implement [`ElicitationHandler`]):
    /// `ClientHandlers::new().on_elicitation(|_| async { Ok(ElicitResult::decline()) })`.
    pub fn on_elicitation<F, Fut>(self, f: F) -> Self
    where
        F: Fn(Elicitation) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, HandlerError>> + Send + 'static,
    {
        self.elicitation(FnElicitation(f))
    }

    /// Offers roots.
    pub fn roots(mut self, roots: Roots) -> Self {
        self.roots = Some(roots);
        self
    }

    /// The roots, when offered.
    pub fn roots_value(&self) -> Option<&Roots> {
        self.roots.as_ref()
    }

    /// Exactly the capabilities of the registered handlers.
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        if let Some(s) = &self.sampling {
            let mut cap = SamplingCapability::default();
            if s.supports_tools() {
                cap.tools = Some(Map::new());
            }
            caps.sampling = Some(cap);
        }
        if let Some(e) = &self.elicitation {
            let mut cap = ElicitationCapability::default();
            if e.supports_form() {
                cap.form = Some(Map::new());
            }
            if e.supports_url() {
                cap.url = Some(Map::new());
            }
            caps.elicitation = Some(cap);
        }
        if self.roots.is_some() {
            caps.roots = Some(RootsCapability {
                list_changed: Some(true),
                ..RootsCapability::default()
            });
        }
        caps
    }

    /// Answers one server request, as the JSON of its result. The core
    /// admitted it first (`protocol::server_requests::admit`: a declared
    /// feature, in a declared mode); what is left here is the host's part.
    /// `progress` reports on the request to the server (a reporter that is
    /// not [`wanted`](ProgressReporter::wanted) where there is no way to).
    pub(crate) async fn answer(
        &self,
        request: ServerRequestMessage,
        progress: ProgressReporter,
    ) -> Result<Value, ErrorObject> {
        let refused = |method: &str| Err(server_requests::method_not_found(method));
        match request {
            ServerRequestMessage::Ping(_) => Ok(Value::Object(Map::new())),
            ServerRequestMessage::CreateMessage(params) => match &self.sampling {
                Some(handler) => to_json(handler.create_message_reporting(params, progress).await),
                None => refused(CreateMessage::METHOD),
            },
            ServerRequestMessage::Elicit(params) => {
                let Some(handler) = &self.elicitation else {
                    return refused(Elicit::METHOD);
                };
                let request = match params {
                    ElicitParams::Form(form) => Elicitation::Form(form),
                    ElicitParams::Url(url) => {
                        let host = checked_url_host(&url.url).map_err(|e| e.to_error_object())?;
                        Elicitation::Url { params: url, host }
                    }
                    _ => {
                        return Err(HandlerError::invalid_params(
                            "this elicitation mode was not declared by this client",
                        )
                        .to_error_object());
                    }
                };
                to_json(handler.elicit_reporting(request, progress).await)
            }
            ServerRequestMessage::ListRoots(_) => {
                let Some(roots) = &self.roots else {
                    return refused(ListRoots::METHOD);
                };
                let result = ListRootsResult {
                    roots: roots.get().as_ref().clone(),
                    ..ListRootsResult::default()
                };
                to_json(Ok(result))
            }
            other => refused(other.method()),
        }
    }
}

/// Reports a host's progress on one request of the server (its
/// `notifications/progress`, under the token the request carried), given
/// to [`SamplingHandler::create_message_reporting`] and
/// [`ElicitationHandler::elicit_reporting`]. Cheap to clone; it holds no
/// session alive.
#[derive(Clone, Debug, Default)]
pub struct ProgressReporter {
    inner: Option<Arc<Reporting>>,
}

#[derive(Debug)]
struct Reporting {
    token: ProgressToken,
    link: Weak<Shared>,
    /// The last value sent; values only increase.
    last: Mutex<Option<f64>>,
    /// Set once the request is answered: progress on it ends there.
    answered: AtomicBool,
}

impl ProgressReporter {
    /// A reporter for a request that carried `token`, sent over `link`.
    pub(crate) fn new(token: Option<ProgressToken>, link: Weak<Shared>) -> Self {
        Self {
            inner: token.map(|token| {
                Arc::new(Reporting {
                    token,
                    link,
                    last: Mutex::new(None),
                    answered: AtomicBool::new(false),
                })
            }),
        }
    }

    /// The request is answered: nothing more is reported on it.
    pub(crate) fn finish(&self) {
        if let Some(inner) = &self.inner {
            inner.answered.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the server asked for progress on this request (its
    /// `_meta.progressToken`); when not, [`report`](Self::report) sends
    /// nothing.
    pub fn wanted(&self) -> bool {
        self.inner.is_some()
    }

    /// Sends `notifications/progress` for the request: `progress` so far,
    /// of `total` when known, with an optional `message` (it goes to the
    /// server: no secrets). Returns whether it was sent: not when the
    /// server asked for no progress, not once the request is answered (a
    /// reporter kept past the handler's answer goes quiet), and not when `progress` does not
    /// increase on the last value sent or is not finite (the protocol
    /// requires increasing values; a relay passing on another peer's
    /// progress drops such updates rather than failing). Errors when the
    /// session is gone or its transport fails.
    pub async fn report(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<bool, SessionError> {
        let Some(inner) = &self.inner else {
            return Ok(false);
        };
        if inner.answered.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let (Some(value), total) = (
            serde_json::Number::from_f64(progress),
            total.and_then(serde_json::Number::from_f64),
        ) else {
            return Ok(false);
        };
        {
            let mut last = inner.last.lock().unwrap_or_else(|p| p.into_inner());
            if last.is_some_and(|l| progress <= l) {
                return Ok(false);
            }
            *last = Some(progress);
        }
        let Some(link) = inner.link.upgrade() else {
            return Err(SessionError::Dead(
                mcp_transport::ExitInfo::without_process(mcp_transport::CloseReason::EndOfStream),
            ));
        };
        let mut params = Map::new();
        params.insert("progressToken".into(), inner.token.to_value());
        params.insert("progress".into(), Value::Number(value));
        if let Some(total) = total {
            params.insert("total".into(), Value::Number(total));
        }
        if let Some(message) = message {
            params.insert("message".into(), Value::String(message));
        }
        let raw = serde_json::value::to_raw_value(&params).map_err(SessionError::Params)?;
        link.notify(Progress::METHOD, Some(&raw)).await?;
        Ok(true)
    }
}

/// The progress token a server's request carries, if any.
pub(crate) fn progress_token(request: &ServerRequestMessage) -> Option<ProgressToken> {
    let meta = match request {
        ServerRequestMessage::CreateMessage(p) => p.meta.as_ref(),
        ServerRequestMessage::Elicit(ElicitParams::Form(p)) => p.meta.as_ref(),
        ServerRequestMessage::Elicit(ElicitParams::Url(p)) => p.meta.as_ref(),
        _ => None,
    };
    meta.and_then(|m| m.progress_token().ok().flatten())
}

/// A sampling handler made of a closure.
struct FnSampling<F>(F);

impl<F, Fut> SamplingHandler for FnSampling<F>
where
    F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, HandlerError>> + Send + 'static,
{
    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        Box::pin((self.0)(params))
    }
}

/// A form-mode elicitation handler made of a closure.
struct FnElicitation<F>(F);

impl<F, Fut> ElicitationHandler for FnElicitation<F>
where
    F: Fn(Elicitation) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitResult, HandlerError>> + Send + 'static,
{
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        Box::pin((self.0)(request))
    }
}

fn to_json<T: serde::Serialize>(result: Result<T, HandlerError>) -> Result<Value, ErrorObject> {
    match result {
        Ok(value) => serde_json::to_value(value).map_err(|_| {
            HandlerError::internal("the client could not serialise its answer").to_error_object()
        }),
        Err(e) => Err(e.to_error_object()),
    }
}

/// The host of an elicitation URL; only `https` (or `http` on loopback) is
/// acceptable, never `javascript:`, `data:` or `file:`. The host shown must
/// be the host a browser goes to, so a URL is refused where a reading of it
/// could differ: a user name before the host (`https://bank.example@evil.test`
/// reads as the bank), a host that is not plain ASCII (letters, digits, dots
/// and hyphens, or an IPv6 literal: a look-alike in another script must come
/// as Punycode, `xn--…`, which is shown as it is), backslashes (which
/// browsers read as `/`), spaces and control characters.
pub(crate) fn checked_url_host(url: &str) -> Result<String, HandlerError> {
    let refuse = |why: &str| HandlerError::invalid_params(format!("elicitation URL {why}"));
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| refuse("must be an https URL"))?;
    if url
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || c == '\\')
    {
        return Err(refuse(
            "must not hold spaces, control characters or backslashes",
        ));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err(refuse(
            "must not carry a user name before its host (it hides the real host)",
        ));
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(literal) => {
            let (host, after) = literal
                .split_once(']')
                .ok_or_else(|| refuse("has an unclosed IPv6 literal"))?;
            let plain = host
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.');
            if host.is_empty() || !plain {
                return Err(refuse("has an IPv6 literal that is not one"));
            }
            (host, after)
        }
        None => {
            let (host, port) = match authority.find(':') {
                Some(at) => authority.split_at(at),
                None => (authority, ""),
            };
            let plain = host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
            if host.is_empty() || !plain {
                return Err(refuse(
                    "must have a plain ASCII host (letters, digits, dots, hyphens; other scripts as Punycode)",
                ));
            }
            (host, port)
        }
    };
    let port_ok = port.is_empty()
        || port.strip_prefix(':').is_some_and(|p| {
            !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
        });
    if !port_ok {
        return Err(refuse("has a port that is not a number"));
    }
    let host = host.to_ascii_lowercase();
    let loopback = host == "localhost" || host == "::1" || host.starts_with("127.");
    match scheme.to_ascii_lowercase().as_str() {
        "https" => Ok(host),
        "http" if loopback => Ok(host),
        _ => Err(refuse("must be an https URL")),
    }
}

#[cfg(test)]
mod tests {
    use super::checked_url_host;

    #[test]
    fn elicitation_urls_must_be_https_and_show_their_host() {
        assert_eq!(
            checked_url_host("https://Auth.Example.com/x?y").unwrap(),
            "auth.example.com"
        );
        assert_eq!(
            checked_url_host("https://example.com:8443/a@b").unwrap(),
            "example.com",
            "an @ after the host is the path's"
        );
        assert_eq!(
            checked_url_host("https://xn--uth-5cd.example.com/").unwrap(),
            "xn--uth-5cd.example.com"
        );
        assert_eq!(checked_url_host("https://[::1]:9/").unwrap(), "::1");
        // Where the host shown could differ from the host a browser goes to.
        for tricky in [
            "https://bank.example@evil.test/",
            "https://bank.example\\@evil.test/",
            "https://evil.test\\.bank.example/",
            "https://\u{430}uth.example.com/",
            "https://bank.example%2eevil.test/",
            "https://exa mple.com/",
            "https://example.com\u{0}/",
            "https://example.com:80x/",
            "https://[::1/",
        ] {
            assert!(checked_url_host(tricky).is_err(), "{tricky}");
        }
        assert_eq!(
            checked_url_host("http://127.0.0.1:9/cb").unwrap(),
            "127.0.0.1"
        );
        assert!(checked_url_host("http://example.com/").is_err());
        assert!(checked_url_host("javascript:alert(1)").is_err());
        assert!(checked_url_host("data:text/html,hi").is_err());
        assert!(checked_url_host("file:///etc/passwd").is_err());
        assert!(checked_url_host("https:///nohost").is_err());
    }
}
