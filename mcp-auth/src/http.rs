//! The HTTP seam: every discovery, registration, authorization and token
//! request of this crate goes through an [`AuthHttpClient`], so a host can
//! route them through its own egress controls, gateway or mTLS client.
//!
//! A `reqwest::Client` is one; [`default_http_client`] builds one that never
//! follows redirects (a token request must not be re-sent to wherever a
//! `Location` points).
//!
//! The `oauth2` crate's requests take the same road: [`OAuthHttp`] is its
//! `AsyncHttpClient`, built on an [`AuthHttpClient`], so the host's client,
//! the time-out, the body bound and the no-redirect rule hold for them too,
//! and it adds a fresh DPoP proof to each attempt (with the one retry on
//! `use_dpop_nonce`), for the crate's grants and for ours alike.

use std::fmt;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

use mcp_transport::BoxFuture;
use url::Url;

use crate::dpop;
use crate::error::{AuthError, NonceParty, Step, UrlRole};
use crate::token::{DpopBinding, error_code};

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

/// The HTTP client of one token or revocation request, for the `oauth2`
/// crate (its `AsyncHttpClient`) and for our own grants ([`OAuthHttp::send`]).
///
/// Every attempt goes through [`send`] (the host's client, the time-out,
/// the body bound); a 3xx is [`AuthError::Redirected`]. With a DPoP key,
/// each attempt carries a fresh proof, and a `400 use_dpop_nonce` that
/// brought a valid `DPoP-Nonce` is retried once with it, never twice.
///
/// The crate's errors drop the HTTP status; the adapter keeps the last one
/// ([`OAuthHttp::last_status`]) so that a refusal is reported with it.
/// `Debug` shows the step and whether DPoP is on, nothing of a request.
pub(crate) struct OAuthHttp<'a> {
    client: &'a dyn AuthHttpClient,
    timeout: Duration,
    step: Step,
    dpop: Option<DpopBinding<'a>>,
    /// The status of the last response (0: none yet).
    last_status: AtomicU16,
}

impl<'a> OAuthHttp<'a> {
    pub(crate) fn new(
        client: &'a dyn AuthHttpClient,
        timeout: Duration,
        step: Step,
        dpop: Option<DpopBinding<'a>>,
    ) -> Self {
        Self {
            client,
            timeout,
            step,
            dpop,
            last_status: AtomicU16::new(0),
        }
    }

    /// The status of the last response, if one came.
    pub(crate) fn last_status(&self) -> Option<u16> {
        match self.last_status.load(Ordering::Relaxed) {
            0 => None,
            status => Some(status),
        }
    }

    /// Sends `request` (a form `POST`) with a DPoP proof when bound; once
    /// more with the server's nonce after a `use_dpop_nonce` refusal.
    pub(crate) async fn send(
        &self,
        request: AuthHttpRequest,
    ) -> Result<AuthHttpResponse, AuthError> {
        let step = self.step;
        let mut nonce_retried = false;
        loop {
            let mut attempt = request.clone();
            if let Some(dpop) = &self.dpop {
                let nonce = dpop.nonce.get();
                let proof = dpop::proof(dpop.key, "POST", &attempt.url, nonce.as_deref(), None)?;
                attempt.headers.push(("DPoP".to_owned(), proof));
            }
            let response = send(self.client, attempt, self.timeout).await?;
            self.last_status.store(response.status, Ordering::Relaxed);
            if (300..400).contains(&response.status) {
                return Err(AuthError::Redirected { step });
            }
            let Some(dpop) = &self.dpop else {
                return Ok(response);
            };
            let took = response
                .dpop_nonce
                .as_deref()
                .is_some_and(|n| dpop.nonce.offer(n));
            let asks_nonce = response.status == 400
                && error_code(&response).as_deref() == Some("use_dpop_nonce");
            if !asks_nonce {
                return Ok(response);
            }
            if nonce_retried || !took {
                return Err(AuthError::DpopNonceLoop {
                    party: NonceParty::AuthorizationServer,
                });
            }
            nonce_retried = true;
        }
    }

    /// One request the `oauth2` crate built, sent by [`Self::send`], its
    /// answer handed back as the crate reads it (status and body; the crate
    /// needs no header of it).
    async fn exchange(
        &self,
        request: oauth2::HttpRequest,
    ) -> Result<oauth2::HttpResponse, AuthError> {
        let step = self.step;
        let (parts, body) = request.into_parts();
        // The crate built this URI from a URL we checked; it parses back.
        let url = Url::parse(&parts.uri.to_string()).map_err(|_| AuthError::InvalidUrl {
            role: match step {
                Step::Revocation => UrlRole::RevocationEndpoint,
                _ => UrlRole::TokenEndpoint,
            },
        })?;
        // The crate only ever POSTs to these endpoints.
        let method = if parts.method == oauth2::http::Method::GET {
            HttpMethod::Get
        } else {
            HttpMethod::Post
        };
        let headers = parts
            .headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_owned(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect();
        let response = self
            .send(AuthHttpRequest {
                method,
                url,
                headers,
                body: Some(body),
                step,
            })
            .await?;
        oauth2::http::Response::builder()
            .status(response.status)
            .body(response.body)
            .map_err(|_| AuthError::UnexpectedStatus {
                step,
                status: response.status,
            })
    }
}

impl<'c> oauth2::AsyncHttpClient<'c> for OAuthHttp<'_> {
    type Error = AuthError;
    type Future = BoxFuture<'c, Result<oauth2::HttpResponse, AuthError>>;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(self.exchange(request))
    }
}

impl fmt::Debug for OAuthHttp<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthHttp")
            .field("step", &self.step)
            .field("timeout", &self.timeout)
            .field("dpop", &self.dpop.is_some())
            .field("last_status", &self.last_status())
            .finish_non_exhaustive()
    }
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
    use crate::dpop::NonceSlot;
    use crate::jose::SigningKey;

    /// Answers every request with the same response.
    #[derive(Debug)]
    struct Answer(AuthHttpResponse);

    impl AuthHttpClient for Answer {
        fn send(
            &self,
            _request: AuthHttpRequest,
        ) -> BoxFuture<'_, Result<AuthHttpResponse, AuthError>> {
            let answer = self.0.clone();
            Box::pin(async move { Ok(answer) })
        }
    }

    #[tokio::test]
    async fn the_oauth2_adapter_shows_nothing_of_a_request_and_its_errors_carry_no_content() {
        use oauth2::AsyncHttpClient as _;
        let canary = "CANARY-93be";
        let key = SigningKey::generate().unwrap();
        let nonce = NonceSlot::default();
        assert!(nonce.offer("n-CANARY-93be"));
        let request = || {
            oauth2::http::Request::builder()
                .method("POST")
                .uri("https://as.example/token")
                .header("Authorization", format!("Basic {canary}"))
                .body(format!("code={canary}&code_verifier={canary}").into_bytes())
                .unwrap()
        };
        let redirect = Answer(AuthHttpResponse::new(
            302,
            Some(format!("https://elsewhere.example/?{canary}")),
            canary.as_bytes().to_vec(),
        ));
        let too_large = Answer(AuthHttpResponse::new(
            200,
            None,
            canary
                .repeat(MAX_RESPONSE_BODY / canary.len() + 1)
                .into_bytes(),
        ));
        for (client, expected) in [(&redirect, "redirected"), (&too_large, "larger than")] {
            let adapter = OAuthHttp::new(
                client,
                Duration::from_secs(5),
                Step::Token,
                Some(DpopBinding {
                    key: &key,
                    nonce: &nonce,
                }),
            );
            let e = adapter.call(request()).await.unwrap_err();
            let shown = format!("{e} {e:?} {adapter:?}");
            assert!(shown.contains(expected), "{shown}");
            assert!(!shown.contains(canary), "{shown}");
        }
        // A successful answer is handed to the crate as it came.
        let ok = Answer(AuthHttpResponse::new(200, None, b"{}".to_vec()));
        let adapter = OAuthHttp::new(&ok, Duration::from_secs(5), Step::Refresh, None);
        let response = adapter.call(request()).await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.body(), b"{}");
        assert_eq!(adapter.last_status(), Some(200));
    }

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
