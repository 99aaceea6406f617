//! An [`AuthorizationHandler`] without a browser, for tests and the
//! conformance client: it sends the `GET` to the authorization URL itself,
//! with redirects disabled, and reads `code`, `state` and `iss` from the
//! `Location` of the answer. This only works with authorization servers that
//! redirect at once (test servers, or a session the HTTP client already
//! carries).

use std::sync::Arc;
use std::time::Duration;

use mcp_transport::BoxFuture;
use url::Url;

use crate::authorize::{AuthorizationHandler, AuthorizationRequest, AuthorizationResponse};
use crate::error::{AuthError, Step, UrlRole};
use crate::http::{self, AuthHttpClient, AuthHttpRequest, HttpMethod};
use crate::urls;

/// Follows the authorization redirect itself.
#[derive(Debug, Clone)]
pub struct HeadlessRedirectFlow {
    http: Arc<dyn AuthHttpClient>,
    redirect_uri: String,
    timeout: Duration,
}

impl HeadlessRedirectFlow {
    /// A flow that registers `redirect_uri` (which nothing needs to listen
    /// on) and uses the [default HTTP client](crate::default_http_client).
    pub fn new(redirect_uri: impl Into<String>) -> Result<Self, AuthError> {
        let client = crate::http::default_http_client()?;
        Ok(Self::with_http_client(redirect_uri, Arc::new(client)))
    }

    /// The same with the host's HTTP client (which must not follow
    /// redirects).
    pub fn with_http_client(
        redirect_uri: impl Into<String>,
        http: Arc<dyn AuthHttpClient>,
    ) -> Self {
        Self {
            http,
            redirect_uri: redirect_uri.into(),
            timeout: Duration::from_secs(30),
        }
    }
}

impl AuthorizationHandler for HeadlessRedirectFlow {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize(
        &self,
        request: AuthorizationRequest,
    ) -> BoxFuture<'_, Result<AuthorizationResponse, AuthError>> {
        Box::pin(async move {
            let get = AuthHttpRequest {
                method: HttpMethod::Get,
                url: request.url().clone(),
                headers: Vec::new(),
                body: None,
                step: Step::Authorization,
            };
            let response = http::send(self.http.as_ref(), get, self.timeout).await?;
            if !(300..400).contains(&response.status) {
                return Err(AuthError::UnexpectedStatus {
                    step: Step::Authorization,
                    status: response.status,
                });
            }
            let location = response.location.ok_or(AuthError::InvalidDocument {
                step: Step::Authorization,
            })?;
            let target = request
                .url()
                .join(&location)
                .map_err(|_| AuthError::InvalidUrl {
                    role: UrlRole::Redirect,
                })?;
            if !same_endpoint(&target, request.redirect_uri()) {
                return Err(AuthError::RedirectMismatch);
            }
            Ok(AuthorizationResponse::from_redirect(&target))
        })
    }
}

/// Whether `target` goes to the redirect URI: same scheme, host, port and
/// path (the query carries the response).
fn same_endpoint(target: &Url, redirect_uri: &str) -> bool {
    let Ok(expected) = Url::parse(redirect_uri) else {
        return false;
    };
    urls::origin_string(target) == urls::origin_string(&expected)
        && target.path() == expected.path()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redirect_must_go_to_the_registered_uri() {
        let cb = "http://127.0.0.1:9/callback";
        let ok = Url::parse("http://127.0.0.1:9/callback?code=x").unwrap();
        assert!(same_endpoint(&ok, cb));
        for bad in [
            "http://127.0.0.1:10/callback?code=x",
            "http://evil.example:9/callback?code=x",
            "http://127.0.0.1:9/other?code=x",
            "https://127.0.0.1:9/callback?code=x",
        ] {
            assert!(!same_endpoint(&Url::parse(bad).unwrap(), cb), "{bad}");
        }
    }
}
