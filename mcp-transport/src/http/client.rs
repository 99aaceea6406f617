//! The HTTP exchange shared by both HTTP transports: building a request with
//! its headers and credential, sending it within the time-outs, and asking
//! the credential provider once more after a 401 / 403.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use http_body_util::Full;
use reqwest::header::{
    ACCEPT, CONTENT_TYPE, HOST, HeaderMap, HeaderName, HeaderValue, LOCATION, USER_AGENT,
    WWW_AUTHENTICATE,
};
use reqwest::{Method, StatusCode};
use url::Url;

use crate::TransportError;
use crate::connection::RequestFailure;
use crate::http::body::Reply;
use crate::http::config::{HttpConfig, build_client, check_url, configured_headers, header_pair};
use crate::http::credentials::{CredentialTarget, Refusal};
use crate::http::lean::{Lean, LeanError};

/// `Accept` of a Streamable HTTP POST.
pub(crate) const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// `Accept` of a stream request.
pub(crate) const ACCEPT_SSE: &str = "text/event-stream";
/// The session header of the legacy era of Streamable HTTP.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";
/// The negotiated protocol version header.
pub(crate) const VERSION_HEADER: &str = "mcp-protocol-version";
/// The resumption header.
pub(crate) const LAST_EVENT_ID: &str = "last-event-id";
/// The nonce header of DPoP (RFC 9449 §8, §9).
const DPOP_NONCE: &str = "dpop-nonce";
/// The one modern protocol version: no sessions, no GET stream, no resumption.
pub(crate) const MODERN_VERSION: &str = "2026-07-28";

/// One request to make: everything but the credential, which is fetched
/// anew for each attempt.
#[derive(Debug)]
pub(crate) struct Exchange<'a> {
    pub(crate) method: Method,
    pub(crate) url: &'a Url,
    pub(crate) accept: &'static str,
    pub(crate) body: Option<bytes::Bytes>,
    /// Headers computed for this request (session id, version, per-message
    /// headers), already checked.
    pub(crate) headers: HeaderMap,
}

/// rustls's reason, when a failed connection failed in its TLS handshake.
/// The error sits somewhere in the chain, possibly inside `io::Error`s
/// (whose `source` skips the error they wrap, so they are opened).
fn tls_reason(error: &reqwest::Error) -> Option<String> {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
    for _ in 0..16 {
        let at = next?;
        if let Some(tls) = at.downcast_ref::<rustls::Error>() {
            return Some(tls.to_string());
        }
        next = match at.downcast_ref::<std::io::Error>() {
            Some(io) => io.get_ref().map(|inner| inner as _),
            None => at.source(),
        };
    }
    None
}

/// Whether `error` (or what caused it) is a refused connection.
fn refused(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    for _ in 0..16 {
        let Some(at) = next else { return false };
        next = match at.downcast_ref::<std::io::Error>() {
            Some(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => return true,
            // (An `io::Error`'s `source` skips the error it wraps.)
            Some(io) => io.get_ref().map(|inner| inner as _),
            None => at.source(),
        };
    }
    false
}

/// Why an exchange produced no response.
#[derive(Debug)]
pub(crate) enum SendError {
    /// A header (per-message or from the credential provider) is illegal.
    InvalidHeader(Option<String>),
    /// The credential provider failed.
    Credential(TransportError),
    TimedOut,
    /// The connection failed; the error has its URL removed.
    Network(reqwest::Error),
    /// The connection of the plain-http fast path failed.
    Io(std::io::Error),
    /// reqwest's client, made when the fast path is first left, could not
    /// be made.
    Client(TransportError),
}

impl SendError {
    pub(crate) fn failure(&self) -> RequestFailure {
        match self {
            SendError::InvalidHeader(name) => RequestFailure::InvalidHeader { name: name.clone() },
            SendError::TimedOut => RequestFailure::TimedOut,
            SendError::Network(e) => match tls_reason(e) {
                Some(reason) => RequestFailure::Tls { reason },
                None if refused(e) => RequestFailure::Refused,
                None => RequestFailure::Network,
            },
            SendError::Io(e) if refused(e) => RequestFailure::Refused,
            SendError::Io(_) | SendError::Client(_) => RequestFailure::Network,
            SendError::Credential(_) => RequestFailure::Credentials,
        }
    }

    /// Logs a credential provider's reason, which the session's
    /// [`RequestFailure::Credentials`] does not carry (a provider's errors
    /// are free of secrets by contract).
    pub(crate) fn log_reason(&self) {
        if let SendError::Credential(e) = self {
            tracing::warn!(error = %WithCause(e), "could not obtain credentials");
        }
    }

    /// The error of a failed connect.
    pub(crate) fn into_transport_error(self) -> TransportError {
        match self {
            SendError::InvalidHeader(name) => TransportError::InvalidHeader { name },
            SendError::Credential(e) => e,
            SendError::TimedOut => TransportError::Io(std::io::ErrorKind::TimedOut.into()),
            SendError::Network(e) => TransportError::Http(e),
            SendError::Io(e) => TransportError::Io(e),
            SendError::Client(e) => e,
        }
    }
}

/// The client of one connection.
#[derive(Debug, Clone)]
pub(crate) struct HttpClient {
    /// reqwest's client: made at connect unless the fast path applies,
    /// then when it is first left (a redirect, another origin).
    client: std::sync::OnceLock<reqwest::Client>,
    pub(crate) config: Arc<HttpConfig>,
    pub(crate) base: Url,
    /// Headers added to every request: the configured ones and the
    /// `User-Agent` when the client is the host's (a client the transport
    /// builds has them as defaults).
    per_request: HeaderMap,
    /// The plain-http fast path, when it applies (see `lean`).
    lean: Option<Arc<Lean>>,
    /// The headers every fast-path request carries unless the exchange
    /// sets them: `Host`, `User-Agent`, the configured ones.
    lean_defaults: HeaderMap,
    /// Set when the server redirected a fast-path request: reqwest, which
    /// follows redirects by the transport's policy, takes every later one.
    lean_off: Arc<AtomicBool>,
}

impl HttpClient {
    /// Checks the URL and the custom headers, builds the client, and asks the
    /// credential provider once so that a missing credential fails here.
    pub(crate) async fn connect(config: Arc<HttpConfig>) -> Result<Self, TransportError> {
        let base = check_url(&config.url)?;
        let lean = Lean::for_config(&config, &base);
        let client = std::sync::OnceLock::new();
        let per_request = match &config.client {
            Some(injected) => {
                let mut headers = configured_headers(&config)?;
                let agent = HeaderValue::from_str(&config.user_agent).map_err(|_| {
                    TransportError::InvalidHeader {
                        name: Some(USER_AGENT.as_str().to_owned()),
                    }
                })?;
                headers.insert(USER_AGENT, agent);
                let _ = client.set(injected.clone());
                headers
            }
            None => {
                if lean.is_none() {
                    let _ = client.set(build_client(&config, &base)?);
                } else {
                    // Checked now, as building the client would.
                    configured_headers(&config)?;
                }
                HeaderMap::new()
            }
        };
        if let Some(provider) = &config.credentials {
            let target = CredentialTarget::new("POST", &base);
            for (name, value) in provider.authorization(target).await? {
                header_pair(&name, &value)?;
            }
        }
        let mut lean_defaults = HeaderMap::new();
        if let Some(lean) = &lean {
            lean_defaults.insert(HOST, lean.host_header().clone());
            let agent = HeaderValue::from_str(&config.user_agent).map_err(|_| {
                TransportError::InvalidHeader {
                    name: Some(USER_AGENT.as_str().to_owned()),
                }
            })?;
            lean_defaults.insert(USER_AGENT, agent);
            for (name, value) in configured_headers(&config)? {
                if let Some(name) = name {
                    lean_defaults.append(name, value);
                }
            }
        }
        Ok(Self {
            client,
            config,
            base,
            per_request,
            lean,
            lean_defaults,
            lean_off: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Sends one request, once more after a 401 / 403 if the credential
    /// provider says it has new credentials, and once more after a 401
    /// `use_dpop_nonce` whose nonce the provider took (RFC 9449 §9).
    pub(crate) async fn send(&self, exchange: &Exchange<'_>) -> Result<Reply, SendError> {
        let mut retried = false;
        let mut nonce_retried = false;
        loop {
            let response = self.send_once(exchange).await?;
            let Some(provider) = &self.config.credentials else {
                return Ok(response);
            };
            let nonce = response
                .headers()
                .get(DPOP_NONCE)
                .and_then(|v| v.to_str().ok());
            let took_nonce = nonce.is_some_and(|n| provider.dpop_nonce(n));
            let status = response.status();
            let unauthorized =
                status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN;
            if !unauthorized {
                return Ok(response);
            }
            let challenge = www_authenticate(response.headers());
            if took_nonce
                && !nonce_retried
                && status == StatusCode::UNAUTHORIZED
                && challenge
                    .as_deref()
                    .is_some_and(|c| c.contains("use_dpop_nonce"))
            {
                nonce_retried = true;
                continue;
            }
            if retried {
                return Ok(response);
            }
            retried = true;
            let refusal =
                Refusal::new(status.as_u16(), challenge.as_deref()).with_dpop_nonce(nonce);
            match provider.on_unauthorized(refusal).await {
                Ok(true) => {}
                Ok(false) => return Ok(response),
                Err(e) => return Err(SendError::Credential(e)),
            }
        }
    }

    /// The exchange's headers, plus the per-request ones it does not set
    /// (as a client's default headers would be added).
    fn headers_of(&self, exchange: &Exchange<'_>) -> HeaderMap {
        let mut headers = exchange.headers.clone();
        for name in self.per_request.keys() {
            if !headers.contains_key(name) {
                for value in self.per_request.get_all(name) {
                    headers.append(name.clone(), value.clone());
                }
            }
        }
        headers
    }

    /// The credential's headers for one attempt, checked.
    async fn credential(
        &self,
        exchange: &Exchange<'_>,
    ) -> Result<Vec<(HeaderName, HeaderValue)>, SendError> {
        let Some(provider) = &self.config.credentials else {
            return Ok(Vec::new());
        };
        let target = CredentialTarget::new(exchange.method.as_str(), exchange.url);
        let headers = provider
            .authorization(target)
            .await
            .map_err(SendError::Credential)?;
        headers
            .iter()
            .map(|(name, value)| {
                header_pair(name, value).map_err(|e| match e {
                    TransportError::InvalidHeader { name } => SendError::InvalidHeader(name),
                    other => SendError::Credential(other),
                })
            })
            .collect()
    }

    async fn send_once(&self, exchange: &Exchange<'_>) -> Result<Reply, SendError> {
        let credential = self.credential(exchange).await?;
        if let Some(lean) = &self.lean
            && !self.lean_off.load(Ordering::Relaxed)
            && lean.serves(exchange.url)
        {
            let reply = self.send_lean(lean, exchange, &credential).await?;
            if !is_redirect(&reply) {
                return Ok(reply);
            }
            // reqwest follows it (same origin only) and takes every later
            // request: the fast path has no redirect policy of its own.
            tracing::debug!("redirected: the fast path is left for reqwest");
            self.lean_off.store(true, Ordering::Relaxed);
        }
        let mut request = self
            .reqwest()?
            .request(exchange.method.clone(), exchange.url.clone())
            .header(ACCEPT, exchange.accept)
            .headers(self.headers_of(exchange));
        for (name, value) in credential {
            request = request.header(name, value);
        }
        if let Some(body) = &exchange.body {
            request = request
                .header(CONTENT_TYPE, "application/json")
                .body(body.clone());
        }
        match tokio::time::timeout(self.config.response_timeout, request.send()).await {
            Err(_) => Err(SendError::TimedOut),
            Ok(Err(e)) if e.is_timeout() => Err(SendError::TimedOut),
            Ok(Err(e)) => {
                let e = e.without_url();
                tracing::debug!(error = %e, "HTTP request failed");
                Err(SendError::Network(e))
            }
            Ok(Ok(response)) => Ok(Reply::reqwest(response)),
        }
    }

    /// reqwest's client, made now if it was not at connect.
    fn reqwest(&self) -> Result<&reqwest::Client, SendError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let built = build_client(&self.config, &self.base).map_err(SendError::Client)?;
        Ok(self.client.get_or_init(|| built))
    }

    /// One attempt on the plain-http fast path, with the same headers
    /// reqwest would send: the exchange's, `Accept`, the credential,
    /// `Content-Type`, then the defaults the exchange does not set.
    async fn send_lean(
        &self,
        lean: &Arc<Lean>,
        exchange: &Exchange<'_>,
        credential: &[(HeaderName, HeaderValue)],
    ) -> Result<Reply, SendError> {
        let target = lean
            .target(exchange.url)
            .ok_or(SendError::InvalidHeader(None))?;
        let build = || {
            // One map of its final size (the exchange's map is kept for a
            // second attempt after a 401).
            let mut headers = HeaderMap::with_capacity(
                exchange.headers.len() + credential.len() + self.lean_defaults.len() + 2,
            );
            for (name, value) in &exchange.headers {
                headers.append(name.clone(), value.clone());
            }
            if !headers.contains_key(ACCEPT) {
                headers.insert(ACCEPT, HeaderValue::from_static(exchange.accept));
            }
            for (name, value) in credential {
                headers.append(name.clone(), value.clone());
            }
            if exchange.body.is_some() {
                headers.append(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            }
            for name in self.lean_defaults.keys() {
                if !headers.contains_key(name) {
                    for value in self.lean_defaults.get_all(name) {
                        headers.append(name.clone(), value.clone());
                    }
                }
            }
            let mut request =
                hyper::Request::new(Full::new(exchange.body.clone().unwrap_or_default()));
            *request.method_mut() = exchange.method.clone();
            *request.uri_mut() = target.clone();
            *request.headers_mut() = headers;
            request
        };
        match tokio::time::timeout(self.config.response_timeout, lean.send(build())).await {
            Err(_) | Ok(Err(LeanError::ConnectTimedOut)) => Err(SendError::TimedOut),
            Ok(Err(LeanError::Io(e))) => Err(SendError::Io(e)),
            Ok(Ok((head, body))) => Ok(Reply::lean(head, body)),
        }
    }
}

/// A redirect reqwest's policy may follow: a 3xx other than 304 with a
/// `Location`.
fn is_redirect(reply: &Reply) -> bool {
    matches!(reply.status().as_u16(), 301 | 302 | 303 | 307 | 308)
        && reply.headers().contains_key(LOCATION)
}

/// The `WWW-Authenticate` headers of a response that are text, joined with
/// `", "` (a server may send one challenge per header; the joined list is
/// the same value RFC 9110 allows in one header).
pub(crate) fn www_authenticate(headers: &HeaderMap) -> Option<String> {
    let values: Vec<&str> = headers
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    (!values.is_empty()).then(|| values.join(", "))
}

/// Adds a checked header; the value is marked sensitive.
pub(crate) fn push_header(
    headers: &mut HeaderMap,
    name: &str,
    value: &str,
) -> Result<(), SendError> {
    let (name, value) = header_pair(name, value).map_err(|e| match e {
        TransportError::InvalidHeader { name } => SendError::InvalidHeader(name),
        other => SendError::Credential(other),
    })?;
    headers.append(name, value);
    Ok(())
}

/// Adds a header whose name is a known constant.
pub(crate) fn push_known(headers: &mut HeaderMap, name: &'static str, value: HeaderValue) {
    headers.append(HeaderName::from_static(name), value);
}

/// An error and its direct cause, for a log line. Only one level: a
/// provider vouches for its own error's `Display`, not for the errors
/// beneath it (which may quote URLs or server text).
struct WithCause<'a>(&'a (dyn std::error::Error + 'static));

impl std::fmt::Display for WithCause<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        if let Some(cause) = self.0.source() {
            write!(f, ": {cause}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_challenges_are_joined_in_order() {
        let mut headers = HeaderMap::new();
        assert_eq!(www_authenticate(&headers), None);
        headers.append(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"a\""),
        );
        assert_eq!(
            www_authenticate(&headers).as_deref(),
            Some("Basic realm=\"a\"")
        );
        headers.append(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer resource_metadata=\"https://x/prm\""),
        );
        assert_eq!(
            www_authenticate(&headers).as_deref(),
            Some("Basic realm=\"a\", Bearer resource_metadata=\"https://x/prm\"")
        );
    }
}
