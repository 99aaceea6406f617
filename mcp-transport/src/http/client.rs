//! The HTTP exchange shared by both HTTP transports: building a request with
//! its headers and credential, sending it within the time-outs, and asking
//! the credential provider once more after a 401 / 403.

use std::sync::Arc;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, USER_AGENT, WWW_AUTHENTICATE};
use reqwest::{Method, Response, StatusCode};
use url::Url;

use crate::TransportError;
use crate::connection::RequestFailure;
use crate::http::config::{HttpConfig, build_client, check_url, configured_headers, header_pair};
use crate::http::credentials::{CredentialTarget, Refusal};

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
            SendError::Network(_) => RequestFailure::Network,
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
        }
    }
}

/// The client of one connection.
#[derive(Debug, Clone)]
pub(crate) struct HttpClient {
    pub(crate) client: reqwest::Client,
    pub(crate) config: Arc<HttpConfig>,
    pub(crate) base: Url,
    /// Headers added to every request: the configured ones and the
    /// `User-Agent` when the client is the host's (a client the transport
    /// builds has them as defaults).
    per_request: HeaderMap,
}

impl HttpClient {
    /// Checks the URL and the custom headers, builds the client, and asks the
    /// credential provider once so that a missing credential fails here.
    pub(crate) async fn connect(config: Arc<HttpConfig>) -> Result<Self, TransportError> {
        let base = check_url(&config.url)?;
        let (client, per_request) = match &config.client {
            Some(injected) => {
                let mut headers = configured_headers(&config)?;
                let agent = HeaderValue::from_str(&config.user_agent).map_err(|_| {
                    TransportError::InvalidHeader {
                        name: Some(USER_AGENT.as_str().to_owned()),
                    }
                })?;
                headers.insert(USER_AGENT, agent);
                (injected.clone(), headers)
            }
            None => (build_client(&config, &base)?, HeaderMap::new()),
        };
        if let Some(provider) = &config.credentials {
            let target = CredentialTarget::new("POST", &base);
            for (name, value) in provider.authorization(target).await? {
                header_pair(&name, &value)?;
            }
        }
        Ok(Self {
            client,
            config,
            base,
            per_request,
        })
    }

    /// Sends one request, once more after a 401 / 403 if the credential
    /// provider says it has new credentials, and once more after a 401
    /// `use_dpop_nonce` whose nonce the provider took (RFC 9449 §9).
    pub(crate) async fn send(&self, exchange: &Exchange<'_>) -> Result<Response, SendError> {
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

    async fn send_once(&self, exchange: &Exchange<'_>) -> Result<Response, SendError> {
        let mut request = self
            .client
            .request(exchange.method.clone(), exchange.url.clone())
            .header(reqwest::header::ACCEPT, exchange.accept)
            .headers(self.headers_of(exchange));
        if let Some(provider) = &self.config.credentials {
            let target = CredentialTarget::new(exchange.method.as_str(), exchange.url);
            let headers = provider
                .authorization(target)
                .await
                .map_err(SendError::Credential)?;
            for (name, value) in headers {
                let (name, value) = header_pair(&name, &value).map_err(|e| match e {
                    TransportError::InvalidHeader { name } => SendError::InvalidHeader(name),
                    other => SendError::Credential(other),
                })?;
                request = request.header(name, value);
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
