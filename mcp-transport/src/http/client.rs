//! The HTTP exchange shared by both HTTP transports: building a request with
//! its headers and credential, sending it within the time-outs, and asking
//! the credential provider once more after a 401 / 403.

use std::sync::Arc;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, WWW_AUTHENTICATE};
use reqwest::{Method, Response, StatusCode};
use url::Url;

use crate::TransportError;
use crate::connection::RequestFailure;
use crate::http::config::{HttpConfig, build_client, check_url, header_pair};

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
}

impl SendError {
    pub(crate) fn failure(&self) -> RequestFailure {
        match self {
            SendError::InvalidHeader(name) => RequestFailure::InvalidHeader { name: name.clone() },
            SendError::TimedOut => RequestFailure::TimedOut,
            SendError::Network(_) | SendError::Credential(_) => RequestFailure::Network,
        }
    }

    /// The error of a failed connect.
    pub(crate) fn into_transport_error(self) -> TransportError {
        match self {
            SendError::InvalidHeader(name) => TransportError::InvalidHeader { name },
            SendError::Credential(e) => e,
            SendError::TimedOut => TransportError::Io(std::io::ErrorKind::TimedOut.into()),
            SendError::Network(e) => TransportError::Http(e),
        }
    }
}

/// The client of one connection.
#[derive(Debug, Clone)]
pub(crate) struct HttpClient {
    pub(crate) client: reqwest::Client,
    pub(crate) config: Arc<HttpConfig>,
    pub(crate) base: Url,
}

impl HttpClient {
    /// Checks the URL and the custom headers, builds the client, and asks the
    /// credential provider once so that a missing credential fails here.
    pub(crate) async fn connect(config: Arc<HttpConfig>) -> Result<Self, TransportError> {
        let base = check_url(&config.url)?;
        let client = build_client(&config, &base)?;
        if let Some(provider) = &config.credentials
            && let Some((name, value)) = provider.authorization().await?
        {
            header_pair(&name, &value)?;
        }
        Ok(Self {
            client,
            config,
            base,
        })
    }

    /// Sends one request, once more after a 401 / 403 if the credential
    /// provider says it has new credentials.
    pub(crate) async fn send(&self, exchange: &Exchange<'_>) -> Result<Response, SendError> {
        let mut retried = false;
        loop {
            let response = self.send_once(exchange).await?;
            let status = response.status();
            let unauthorized =
                status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN;
            match &self.config.credentials {
                Some(provider) if unauthorized && !retried => {
                    retried = true;
                    let challenge = www_authenticate(&response);
                    if provider
                        .on_unauthorized(status.as_u16(), challenge.as_deref())
                        .await
                    {
                        continue;
                    }
                    return Ok(response);
                }
                _ => return Ok(response),
            }
        }
    }

    async fn send_once(&self, exchange: &Exchange<'_>) -> Result<Response, SendError> {
        let mut request = self
            .client
            .request(exchange.method.clone(), exchange.url.clone())
            .header(reqwest::header::ACCEPT, exchange.accept)
            .headers(exchange.headers.clone());
        if let Some(provider) = &self.config.credentials {
            match provider.authorization().await {
                Ok(Some((name, value))) => {
                    let (name, value) = header_pair(&name, &value).map_err(|e| match e {
                        TransportError::InvalidHeader { name } => SendError::InvalidHeader(name),
                        other => SendError::Credential(other),
                    })?;
                    request = request.header(name, value);
                }
                Ok(None) => {}
                Err(e) => return Err(SendError::Credential(e)),
            }
        }
        if let Some(body) = &exchange.body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
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
            Ok(Ok(response)) => Ok(response),
        }
    }
}

/// The `WWW-Authenticate` header of a response, when it is text.
pub(crate) fn www_authenticate(response: &Response) -> Option<String> {
    response
        .headers()
        .get(WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
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
