//! The HTTP seam: every discovery, registration, authorization and token
//! request of this crate goes through an [`AuthHttpClient`], so a host can
//! route them through its own egress controls, gateway or mTLS client.
//!
//! A `reqwest::Client` is one; [`default_http_client`] builds one that never
//! follows redirects (a token request must not be re-sent to wherever a
//! `Location` points).

use std::fmt;
use std::time::Duration;

use mcp_transport::BoxFuture;
use url::Url;

use crate::error::{AuthError, Step};

/// Bound on any response body read by this crate (metadata documents,
/// registration and token responses).
pub const MAX_RESPONSE_BODY: usize = 256 * 1024;

/// The method of an [`AuthHttpRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpMethod {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
}

/// One request of the OAuth flow.
///
/// Header values and the body may hold secrets (a client secret, a code, a
/// verifier, a refresh token): `Debug` shows header names and the body's
/// length only.
#[derive(Clone)]
pub struct AuthHttpRequest {
    /// The method.
    pub method: HttpMethod,
    /// The URL, already checked against this crate's URL rules.
    pub url: Url,
    /// Headers (name, value).
    pub headers: Vec<(String, String)>,
    /// The body, if any.
    pub body: Option<Vec<u8>>,
    /// Which step of the flow this is (for errors).
    pub step: Step,
}

impl fmt::Debug for AuthHttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("AuthHttpRequest")
            .field("method", &self.method)
            .field(
                "url",
                &format_args!(
                    "{}{}",
                    self.url.origin().ascii_serialization(),
                    self.url.path()
                ),
            )
            .field("header_names", &names)
            .field("body_len", &self.body.as_ref().map(Vec::len))
            .field("step", &self.step)
            .finish()
    }
}

/// The answer to an [`AuthHttpRequest`]. `Debug` shows the status and the
/// body's length only (a token response is a secret).
#[derive(Clone)]
pub struct AuthHttpResponse {
    /// The HTTP status code.
    pub status: u16,
    /// The `Location` header, when present and text.
    pub location: Option<String>,
    /// The body, at most [`MAX_RESPONSE_BODY`] bytes.
    pub body: Vec<u8>,
    /// The `DPoP-Nonce` header, when present and text (RFC 9449 §8).
    pub dpop_nonce: Option<String>,
}

impl AuthHttpResponse {
    /// A response without a `DPoP-Nonce`.
    pub fn new(status: u16, location: Option<String>, body: Vec<u8>) -> Self {
        Self {
            status,
            location,
            body,
            dpop_nonce: None,
        }
    }
}

impl fmt::Debug for AuthHttpResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthHttpResponse")
            .field("status", &self.status)
            .field("has_location", &self.location.is_some())
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// Sends the requests of the OAuth flow.
///
/// Implementations must not follow redirects (a 3xx is returned as it is),
/// must not read more than [`MAX_RESPONSE_BODY`] bytes of a body (more is
/// [`AuthError::ResponseTooLarge`]), and must keep header values out of
/// their errors and logs.
pub trait AuthHttpClient: Send + Sync + fmt::Debug {
    /// Sends one request.
    fn send(&self, request: AuthHttpRequest) -> BoxFuture<'_, Result<AuthHttpResponse, AuthError>>;
}

/// A `reqwest::Client` with redirects off, a connect time-out and this
/// crate's user agent: the default [`AuthHttpClient`].
pub fn default_http_client() -> Result<reqwest::Client, AuthError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("mcp-auth/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| AuthError::HttpClient(e.without_url()))
}

impl AuthHttpClient for reqwest::Client {
    fn send(&self, request: AuthHttpRequest) -> BoxFuture<'_, Result<AuthHttpResponse, AuthError>> {
        Box::pin(async move {
            let step = request.step;
            let method = match request.method {
                HttpMethod::Get => reqwest::Method::GET,
                HttpMethod::Post => reqwest::Method::POST,
            };
            let mut builder = self.request(method, request.url.clone());
            for (name, value) in &request.headers {
                let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| AuthError::InvalidDocument { step })?;
                let mut value = reqwest::header::HeaderValue::from_str(value)
                    .map_err(|_| AuthError::InvalidDocument { step })?;
                value.set_sensitive(true);
                builder = builder.header(name, value);
            }
            if let Some(body) = request.body {
                builder = builder.body(body);
            }
            let mut response = builder.send().await.map_err(|e| network(step, e))?;
            // A client built by the host may follow redirects; a request that
            // ended somewhere else is refused rather than trusted.
            if response.url() != &request.url {
                return Err(AuthError::Redirected { step });
            }
            let status = response.status().as_u16();
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let dpop_nonce = response
                .headers()
                .get("dpop-nonce")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| network(step, e))? {
                if body.len() + chunk.len() > MAX_RESPONSE_BODY {
                    return Err(AuthError::ResponseTooLarge {
                        step,
                        limit: MAX_RESPONSE_BODY,
                    });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(AuthHttpResponse {
                status,
                location,
                body,
                dpop_nonce,
            })
        })
    }
}

fn network(step: Step, error: reqwest::Error) -> AuthError {
    if error.is_timeout() {
        return AuthError::TimedOut { step };
    }
    AuthError::Network {
        step,
        source: Box::new(error.without_url()),
    }
}

/// Sends `request` within `timeout`.
pub(crate) async fn send(
    client: &dyn AuthHttpClient,
    request: AuthHttpRequest,
    timeout: Duration,
) -> Result<AuthHttpResponse, AuthError> {
    let step = request.step;
    tracing::debug!(?request, "oauth request");
    let response = tokio::time::timeout(timeout, client.send(request))
        .await
        .map_err(|_| AuthError::TimedOut { step })??;
    if response.body.len() > MAX_RESPONSE_BODY {
        return Err(AuthError::ResponseTooLarge {
            step,
            limit: MAX_RESPONSE_BODY,
        });
    }
    Ok(response)
}

/// A `GET` asking for JSON.
pub(crate) fn get_json(url: Url, step: Step) -> AuthHttpRequest {
    AuthHttpRequest {
        method: HttpMethod::Get,
        url,
        headers: vec![("Accept".to_owned(), "application/json".to_owned())],
        body: None,
        step,
    }
}

/// A form `POST` (`application/x-www-form-urlencoded`).
pub(crate) fn post_form(
    url: Url,
    step: Step,
    pairs: &[(&str, &str)],
    extra_headers: Vec<(String, String)>,
) -> AuthHttpRequest {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        form.append_pair(name, value);
    }
    let mut headers = vec![
        (
            "Content-Type".to_owned(),
            "application/x-www-form-urlencoded".to_owned(),
        ),
        ("Accept".to_owned(), "application/json".to_owned()),
    ];
    headers.extend(extra_headers);
    AuthHttpRequest {
        method: HttpMethod::Post,
        url,
        headers,
        body: Some(form.finish().into_bytes()),
        step,
    }
}

/// A JSON `POST`.
pub(crate) fn post_json(url: Url, step: Step, body: &serde_json::Value) -> AuthHttpRequest {
    AuthHttpRequest {
        method: HttpMethod::Post,
        url,
        headers: vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Accept".to_owned(), "application/json".to_owned()),
        ],
        body: Some(body.to_string().into_bytes()),
        step,
    }
}

/// Parses a JSON body; the content is never part of the error.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(
    response: &AuthHttpResponse,
    step: Step,
) -> Result<T, AuthError> {
    serde_json::from_slice(&response.body).map_err(|_| AuthError::InvalidDocument { step })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_of_requests_and_responses_shows_no_values() {
        let request = post_form(
            Url::parse("https://as.example/token?x=sekrit-q").unwrap(),
            Step::Token,
            &[("code", "sekrit-code")],
            vec![("Authorization".into(), "Basic sekrit-basic".into())],
        );
        let shown = format!("{request:?}");
        assert!(shown.contains("Authorization"));
        assert!(!shown.contains("sekrit"), "{shown}");
        assert_eq!(
            String::from_utf8(request.body.unwrap()).unwrap(),
            "code=sekrit-code"
        );
        let response = AuthHttpResponse::new(
            200,
            Some("http://x/?code=sekrit".into()),
            b"{\"access_token\":\"sekrit\"}".to_vec(),
        );
        assert!(!format!("{response:?}").contains("sekrit"));
    }
}
