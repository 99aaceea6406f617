//! A fake OAuth 2.1 authorization server: metadata at configurable
//! well-known URLs, an authorization endpoint that redirects at once, a
//! token endpoint that checks PKCE S256, the redirect URI and the client,
//! dynamic registration, and (when asked) an RFC 7009 revocation endpoint;
//! on plain http, or on any listener a test brings (TLS, say).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Log, TokenDb, hit_of};

/// Where the metadata document is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaLoc {
    /// `/.well-known/oauth-authorization-server{prefix}`.
    OAuthInsert,
    /// `/.well-known/openid-configuration{prefix}`.
    OidcInsert,
    /// `{prefix}/.well-known/openid-configuration`.
    OidcAppend,
}

/// What `iss` the redirect carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssMode {
    Correct,
    Omit,
    Wrong,
    TrailingSlash,
}

#[derive(Debug, Clone)]
pub struct AsConfig {
    /// The issuer's path (`""` or `/tenant1`).
    pub prefix: String,
    pub metadata_at: Vec<MetaLoc>,
    pub metadata_issuer: Option<String>,
    pub pkce_methods: Option<Vec<String>>,
    pub auth_methods: Option<Vec<String>>,
    pub registration: bool,
    pub cimd: bool,
    pub scopes_supported: Option<Vec<String>>,
    pub iss_supported: Option<bool>,
    pub iss: IssMode,
    pub wrong_state: bool,
    pub deny: bool,
    pub authorization_endpoint: Option<String>,
    pub code_expires_in: Option<u64>,
    pub refresh_expires_in: Option<u64>,
    pub issue_refresh: bool,
    pub rotate_refresh: bool,
    pub refresh_delay: Duration,
    pub client_id: String,
    pub reg_secret: Option<String>,
    pub reg_method: Option<String>,
    /// Advertise `revocation_endpoint` (`{issuer}/revoke`), answered with
    /// `revocation_status`.
    pub revocation: bool,
    pub revocation_status: u16,
    /// Answer every token request with this status and body.
    pub token_reply: Option<(u16, String)>,
}

impl Default for AsConfig {
    fn default() -> Self {
        Self {
            prefix: String::new(),
            metadata_at: vec![MetaLoc::OAuthInsert],
            metadata_issuer: None,
            pkce_methods: Some(vec!["S256".into()]),
            auth_methods: Some(vec!["none".into()]),
            registration: true,
            cimd: false,
            scopes_supported: None,
            iss_supported: Some(true),
            iss: IssMode::Correct,
            wrong_state: false,
            deny: false,
            authorization_endpoint: None,
            code_expires_in: Some(3600),
            refresh_expires_in: Some(3600),
            issue_refresh: false,
            rotate_refresh: false,
            refresh_delay: Duration::ZERO,
            client_id: "dcr-client".into(),
            reg_secret: None,
            reg_method: None,
            revocation: false,
            revocation_status: 200,
            token_reply: None,
        }
    }
}

struct Grant {
    challenge: Option<String>,
    method: Option<String>,
    client_id: String,
    redirect_uri: String,
    scopes: Vec<String>,
}

pub(super) struct AsState {
    pub(super) config: AsConfig,
    base: Mutex<String>,
    pub(super) log: Log,
    pub(super) db: TokenDb,
    codes: Mutex<HashMap<String, Grant>>,
    refresh: Mutex<HashMap<String, Vec<String>>>,
    counter: AtomicU64,
}

impl AsState {
    pub(super) fn new(config: AsConfig) -> Arc<Self> {
        Arc::new(Self {
            config,
            base: Mutex::new(String::new()),
            log: Log::default(),
            db: TokenDb::default(),
            codes: Mutex::new(HashMap::new()),
            refresh: Mutex::new(HashMap::new()),
            counter: AtomicU64::new(0),
        })
    }

    pub(super) fn set_base(&self, base: &str) {
        *self.base.lock().unwrap() = base.to_owned();
    }

    fn base(&self) -> String {
        self.base.lock().unwrap().clone()
    }

    pub(super) fn issuer(&self) -> String {
        format!("{}{}", self.base(), self.config.prefix)
    }

    fn next(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::SeqCst) + 1
    }

    fn metadata_paths(&self) -> Vec<String> {
        let p = &self.config.prefix;
        self.config
            .metadata_at
            .iter()
            .map(|loc| match loc {
                MetaLoc::OAuthInsert => format!("/.well-known/oauth-authorization-server{p}"),
                MetaLoc::OidcInsert => format!("/.well-known/openid-configuration{p}"),
                MetaLoc::OidcAppend => format!("{p}/.well-known/openid-configuration"),
            })
            .collect()
    }

    /// Answers a request meant for the authorization server, or `None`.
    pub(super) async fn answer(&self, method: &str, request: &super::Hit) -> Option<Response> {
        let p = &self.config.prefix;
        let path = request.path.as_str();
        if method == "GET" && self.metadata_paths().iter().any(|m| m == path) {
            return Some(self.metadata());
        }
        if path == format!("{p}/authorize") && method == "GET" {
            return Some(self.authorize(request));
        }
        if path == format!("{p}/token") && method == "POST" {
            return Some(self.token(request).await);
        }
        if path == format!("{p}/register") && method == "POST" && self.config.registration {
            return Some(self.register());
        }
        if path == format!("{p}/revoke") && method == "POST" && self.config.revocation {
            return Some(self.revoke(request));
        }
        None
    }

    fn metadata(&self) -> Response {
        let c = &self.config;
        let issuer = self.issuer();
        let mut doc = json!({
            "issuer": c.metadata_issuer.clone().unwrap_or_else(|| issuer.clone()),
            "authorization_endpoint": c.authorization_endpoint.clone().unwrap_or_else(|| format!("{issuer}/authorize")),
            "token_endpoint": format!("{issuer}/token"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
        });
        let obj = doc.as_object_mut().unwrap();
        if c.registration {
            obj.insert(
                "registration_endpoint".into(),
                json!(format!("{issuer}/register")),
            );
        }
        if let Some(m) = &c.pkce_methods {
            obj.insert("code_challenge_methods_supported".into(), json!(m));
        }
        if let Some(m) = &c.auth_methods {
            obj.insert("token_endpoint_auth_methods_supported".into(), json!(m));
        }
        if let Some(s) = &c.scopes_supported {
            obj.insert("scopes_supported".into(), json!(s));
        }
        if let Some(b) = c.iss_supported {
            obj.insert(
                "authorization_response_iss_parameter_supported".into(),
                json!(b),
            );
        }
        if c.cimd {
            obj.insert("client_id_metadata_document_supported".into(), json!(true));
        }
        if c.revocation {
            obj.insert(
                "revocation_endpoint".into(),
                json!(format!("{issuer}/revoke")),
            );
        }
        axum::Json(doc).into_response()
    }

    fn authorize(&self, request: &super::Hit) -> Response {
        let Some(redirect) = request.query("redirect_uri") else {
            return StatusCode::BAD_REQUEST.into_response();
        };
        let code = format!("SEKRIT-code-{}", self.next());
        self.codes.lock().unwrap().insert(
            code.clone(),
            Grant {
                challenge: request.query("code_challenge").map(str::to_owned),
                method: request.query("code_challenge_method").map(str::to_owned),
                client_id: request.query("client_id").unwrap_or_default().to_owned(),
                redirect_uri: redirect.to_owned(),
                scopes: request
                    .query("scope")
                    .map(|s| s.split(' ').map(str::to_owned).collect())
                    .unwrap_or_default(),
            },
        );
        let mut target = url::Url::parse(redirect).unwrap();
        {
            let mut q = target.query_pairs_mut();
            if self.config.deny {
                q.append_pair("error", "access_denied");
            } else {
                q.append_pair("code", &code);
            }
            let state = request.query("state").unwrap_or_default();
            if self.config.wrong_state {
                q.append_pair("state", "not-the-state");
            } else {
                q.append_pair("state", state);
            }
            match self.config.iss {
                IssMode::Correct => {
                    q.append_pair("iss", &self.issuer());
                }
                IssMode::Omit => {}
                IssMode::Wrong => {
                    q.append_pair("iss", "https://evil.example.com");
                }
                IssMode::TrailingSlash => {
                    q.append_pair("iss", &format!("{}/", self.issuer()));
                }
            }
        }
        Response::builder()
            .status(StatusCode::FOUND)
            .header(header::LOCATION, target.as_str())
            .body(Body::empty())
            .unwrap()
    }

    fn client_of(request: &super::Hit) -> Option<String> {
        if let Some(basic) = request
            .authorization
            .as_deref()
            .and_then(|a| a.strip_prefix("Basic "))
        {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(basic)
                .ok()?;
            let text = String::from_utf8(decoded).ok()?;
            let (id, _) = text.split_once(':')?;
            return url::form_urlencoded::parse(format!("x={id}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned());
        }
        request.form("client_id").map(str::to_owned)
    }

    async fn token(&self, request: &super::Hit) -> Response {
        let refused = |error: &str| {
            (StatusCode::BAD_REQUEST, axum::Json(json!({"error": error}))).into_response()
        };
        if let Some((status, body)) = &self.config.token_reply {
            return Response::builder()
                .status(*status)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body.clone()))
                .unwrap();
        }
        let client = Self::client_of(request);
        match request.form("grant_type") {
            Some("authorization_code") => {
                let code = request.form("code").unwrap_or_default();
                let Some(grant) = self.codes.lock().unwrap().remove(code) else {
                    return refused("invalid_grant");
                };
                let verifier = request.form("code_verifier").unwrap_or_default();
                let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .encode(Sha256::digest(verifier.as_bytes()));
                if grant.method.as_deref() != Some("S256")
                    || grant.challenge.as_deref() != Some(computed.as_str())
                    || request.form("redirect_uri") != Some(grant.redirect_uri.as_str())
                    || client.as_deref() != Some(grant.client_id.as_str())
                {
                    return refused("invalid_grant");
                }
                self.tokens(grant.scopes, self.config.code_expires_in, true)
            }
            Some("refresh_token") => {
                tokio::time::sleep(self.config.refresh_delay).await;
                let old = request.form("refresh_token").unwrap_or_default().to_owned();
                let scopes = {
                    let mut map = self.refresh.lock().unwrap();
                    let scopes = map.get(&old).cloned();
                    if self.config.rotate_refresh {
                        map.remove(&old);
                    }
                    scopes
                };
                let Some(scopes) = scopes else {
                    return refused("invalid_grant");
                };
                self.tokens(
                    scopes,
                    self.config.refresh_expires_in,
                    self.config.rotate_refresh,
                )
            }
            _ => refused("unsupported_grant_type"),
        }
    }

    fn tokens(&self, scopes: Vec<String>, expires_in: Option<u64>, new_refresh: bool) -> Response {
        let n = self.next();
        let access = format!("SEKRIT-at-{n}");
        self.db.issue(&access, scopes.clone());
        let mut body = json!({"access_token": access, "token_type": "Bearer"});
        let obj = body.as_object_mut().unwrap();
        if let Some(e) = expires_in {
            obj.insert("expires_in".into(), json!(e));
        }
        if !scopes.is_empty() {
            obj.insert("scope".into(), json!(scopes.join(" ")));
        }
        if self.config.issue_refresh && new_refresh {
            let refresh = format!("SEKRIT-rt-{n}");
            self.refresh.lock().unwrap().insert(refresh.clone(), scopes);
            obj.insert("refresh_token".into(), json!(refresh));
        }
        axum::Json(body).into_response()
    }

    /// RFC 7009: a refresh token it knows stops refreshing; the answer is
    /// the configured status whatever the token.
    fn revoke(&self, request: &super::Hit) -> Response {
        if let Some(token) = request.form("token") {
            self.refresh.lock().unwrap().remove(token);
        }
        let status = StatusCode::from_u16(self.config.revocation_status).unwrap();
        if status.is_success() {
            return status.into_response();
        }
        (status, axum::Json(json!({"error": "invalid_client"}))).into_response()
    }

    fn register(&self) -> Response {
        let mut body = json!({"client_id": self.config.client_id});
        let obj = body.as_object_mut().unwrap();
        if let Some(s) = &self.config.reg_secret {
            obj.insert("client_secret".into(), json!(s));
        }
        if let Some(m) = &self.config.reg_method {
            obj.insert("token_endpoint_auth_method".into(), json!(m));
        }
        (StatusCode::CREATED, axum::Json(body)).into_response()
    }
}

/// A running fake authorization server.
pub struct AuthServer {
    state: Arc<AsState>,
    pub log: Log,
    pub db: TokenDb,
    base: String,
    task: tokio::task::JoinHandle<()>,
}

impl AuthServer {
    pub async fn start(config: AsConfig) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        Self::start_on(config, listener, base)
    }

    /// The server on `listener`, reached at `base` (`https://…` for a TLS
    /// listener).
    pub fn start_on<L: axum::serve::Listener>(config: AsConfig, listener: L, base: String) -> Self
    where
        L::Addr: std::fmt::Debug,
    {
        let state = AsState::new(config);
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(state.clone());
        state.set_base(&base);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            log: state.log.clone(),
            db: state.db.clone(),
            state,
            base,
            task,
        }
    }

    pub fn issuer(&self) -> String {
        self.state.issuer()
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// Path of an endpoint under the issuer (`/authorize`, `/token` …).
    pub fn path(&self, endpoint: &str) -> String {
        format!("{}{endpoint}", self.state.config.prefix)
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(State(state): State<Arc<AsState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let hit = hit_of(parts.method.as_str(), &parts.uri, &parts.headers, &bytes);
    state.log.push(hit.clone());
    match state.answer(parts.method.as_str(), &hit).await {
        Some(response) => response,
        None => (StatusCode::NOT_FOUND, axum::Json(Value::Null)).into_response(),
    }
}
