//! An in-process authorization server and protected MCP resource for the
//! tests of this crate, plus helpers that drive a provider the way the
//! transport does.
//!
//! Secrets the fake servers hand out all contain `SEKRIT`, so a test can
//! check that none of them ever shows up in an error or a `Debug`.
#![allow(dead_code, unreachable_pub, unused_imports)]

mod auth_server;
mod resource_server;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcp_auth::{AuthError, HeadlessRedirectFlow, OAuthConfig, OAuthProvider};
use mcp_transport::{CredentialProvider, CredentialTarget, Refusal, TransportError};
use serde_json::Value;

pub use auth_server::{AsConfig, AuthServer, IssMode, MetaLoc};
pub use resource_server::{PrmLoc, ResourceServer, RsConfig};

/// The redirect URI of the headless flow used in tests.
pub const REDIRECT_URI: &str = "http://127.0.0.1:33418/callback";

/// One request a fake server received.
#[derive(Debug, Clone)]
pub struct Hit {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub form: Vec<(String, String)>,
    pub json: Option<Value>,
    pub authorization: Option<String>,
}

impl Hit {
    pub fn query(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn form(&self, name: &str) -> Option<&str> {
        self.form
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What a fake server received, in order.
#[derive(Debug, Clone, Default)]
pub struct Log(Arc<Mutex<Vec<Hit>>>);

impl Log {
    pub fn push(&self, hit: Hit) {
        self.0.lock().unwrap().push(hit);
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.0.lock().unwrap().clone()
    }

    pub fn paths(&self) -> Vec<String> {
        self.hits().into_iter().map(|h| h.path).collect()
    }

    /// Requests to `path`.
    pub fn to(&self, path: &str) -> Vec<Hit> {
        self.hits().into_iter().filter(|h| h.path == path).collect()
    }

    /// Token requests of one grant type.
    pub fn grants(&self, path: &str, grant: &str) -> Vec<Hit> {
        self.to(path)
            .into_iter()
            .filter(|h| h.form("grant_type") == Some(grant))
            .collect()
    }
}

/// Access tokens an authorization server issued, shared with the resource
/// servers that trust it.
#[derive(Debug, Clone, Default)]
pub struct TokenDb(Arc<Mutex<HashMap<String, Vec<String>>>>);

impl TokenDb {
    pub fn issue(&self, token: &str, scopes: Vec<String>) {
        self.0.lock().unwrap().insert(token.to_owned(), scopes);
    }

    pub fn scopes(&self, token: &str) -> Option<Vec<String>> {
        self.0.lock().unwrap().get(token).cloned()
    }

    pub fn revoke_all(&self) {
        self.0.lock().unwrap().clear();
    }
}

/// Splits a request into a [`Hit`].
pub fn hit_of(
    method: &str,
    uri: &axum::http::Uri,
    headers: &axum::http::HeaderMap,
    body: &[u8],
) -> Hit {
    let pairs = |s: &str| -> Vec<(String, String)> {
        url::form_urlencoded::parse(s.as_bytes())
            .into_owned()
            .collect()
    };
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let text = String::from_utf8_lossy(body);
    Hit {
        method: method.to_owned(),
        path: uri.path().to_owned(),
        query: pairs(uri.query().unwrap_or("")),
        form: if content_type.starts_with("application/x-www-form-urlencoded") {
            pairs(&text)
        } else {
            Vec::new()
        },
        json: if content_type.starts_with("application/json") {
            serde_json::from_slice(body).ok()
        } else {
            None
        },
        authorization: headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    }
}

/// A provider for `mcp_url` with the headless flow and `tune`d settings.
pub fn provider(mcp_url: &str, tune: impl FnOnce(OAuthConfig) -> OAuthConfig) -> OAuthProvider {
    let handler = HeadlessRedirectFlow::new(REDIRECT_URI).unwrap();
    OAuthProvider::new(tune(OAuthConfig::new(mcp_url)), Arc::new(handler)).unwrap()
}

/// One MCP POST as the transport sends it: the provider's header, and once
/// more after a 401 / 403 when the provider says it has new credentials.
/// Returns the final status (the server's, also when the provider failed).
pub async fn call(provider: &OAuthProvider, url: &str, method: &str) -> u16 {
    attempt(provider, url, method).await.0
}

/// [`call`], failing the test unless the provider could not obtain
/// credentials after a 401; returns its error.
pub async fn refused(provider: &OAuthProvider, url: &str, method: &str) -> AuthError {
    match attempt(provider, url, method).await {
        (401, Some(e)) => e,
        other => panic!("expected a 401 the provider could not answer, got {other:?}"),
    }
}

/// The error of `on_unauthorized`, as the provider made it.
pub fn auth_error(error: TransportError) -> AuthError {
    match error {
        TransportError::CredentialSource(cause) => match cause.downcast::<AuthError>() {
            Ok(e) => *e,
            Err(other) => panic!("not an AuthError: {other:?}"),
        },
        other => panic!("not a credential source failure: {other:?}"),
    }
}

/// [`call`], with the provider's error when it could not obtain
/// credentials after a 401 / 403.
pub async fn attempt(
    provider: &OAuthProvider,
    url: &str,
    method: &str,
) -> (u16, Option<AuthError>) {
    let client = reqwest::Client::new();
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{}}}}"#);
    let mut retried = false;
    loop {
        let mut request = client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.clone());
        let url_parsed = url::Url::parse(url).unwrap();
        let target = CredentialTarget::new("POST", &url_parsed);
        for (name, value) in provider.authorization(target).await.unwrap() {
            request = request.header(name, value);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        if (status == 401 || status == 403) && !retried {
            retried = true;
            let challenge = response
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            match provider
                .on_unauthorized(Refusal::new(status, challenge.as_deref()))
                .await
            {
                Ok(true) => continue,
                Ok(false) => {}
                Err(e) => return (status, Some(auth_error(e))),
            }
        }
        return (status, None);
    }
}

/// The usual pair: an authorization server and a resource at `/mcp` whose
/// protected resource metadata names it.
pub async fn pair(as_config: AsConfig, rs_config: RsConfig) -> (AuthServer, ResourceServer) {
    let auth = AuthServer::start(as_config).await;
    let rs = ResourceServer::start(rs_config, vec![auth.issuer()], vec![auth.db.clone()]).await;
    (auth, rs)
}

/// A request target for calling `authorization` directly.
#[allow(dead_code)]
pub fn target() -> CredentialTarget<'static> {
    static URL: std::sync::OnceLock<url::Url> = std::sync::OnceLock::new();
    CredentialTarget::new(
        "POST",
        URL.get_or_init(|| url::Url::parse("http://127.0.0.1:1/mcp").unwrap()),
    )
}
