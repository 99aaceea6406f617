//! A fake protected MCP server at `/mcp`: protected resource metadata at a
//! configurable place, 401 / 403 challenges, and a JSON-RPC answer for a
//! request with an acceptable token. It can also host an authorization
//! server at its own origin (the 2025-03-26 layout).

use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::auth_server::{AsConfig, AsState};
use super::{Log, TokenDb, hit_of};

/// Where the protected resource metadata is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrmLoc {
    /// `/.well-known/oauth-protected-resource/mcp`.
    PathAware,
    /// `/.well-known/oauth-protected-resource`.
    Root,
    /// Any path (only findable through the challenge).
    Custom(String),
    /// None at all.
    Absent,
}

#[derive(Debug, Clone)]
pub struct RsConfig {
    pub prm: PrmLoc,
    /// Whether the 401 names the metadata URL (`resource_metadata`).
    pub header_param: bool,
    /// The metadata's `resource` (default: the server URL, or the origin
    /// for root metadata).
    pub resource: Option<String>,
    pub scopes_supported: Option<Vec<String>>,
    /// The 401's `scope`.
    pub challenge_scope: Option<String>,
    /// Scopes a token needs (else 403 `insufficient_scope`).
    pub required_scopes: Vec<String>,
    /// An authorization server at this origin.
    pub embedded_as: Option<AsConfig>,
}

impl Default for RsConfig {
    fn default() -> Self {
        Self {
            prm: PrmLoc::PathAware,
            header_param: true,
            resource: None,
            scopes_supported: None,
            challenge_scope: None,
            required_scopes: Vec::new(),
            embedded_as: None,
        }
    }
}

struct RsState {
    config: RsConfig,
    base: String,
    log: Log,
    authorization_servers: Mutex<Vec<String>>,
    trusted: Mutex<Vec<TokenDb>>,
    required: Mutex<Vec<String>>,
    embedded: Option<Arc<AsState>>,
}

impl RsState {
    fn prm_path(&self) -> Option<String> {
        match &self.config.prm {
            PrmLoc::PathAware => Some("/.well-known/oauth-protected-resource/mcp".into()),
            PrmLoc::Root => Some("/.well-known/oauth-protected-resource".into()),
            PrmLoc::Custom(p) => Some(p.clone()),
            PrmLoc::Absent => None,
        }
    }

    fn challenge(&self, error: Option<&str>, scope: Option<String>) -> String {
        let mut params = Vec::new();
        if let Some(e) = error {
            params.push(format!("error=\"{e}\""));
        }
        if let Some(s) = scope {
            params.push(format!("scope=\"{s}\""));
        }
        if self.config.header_param
            && let Some(p) = self.prm_path()
        {
            params.push(format!("resource_metadata=\"{}{p}\"", self.base));
        }
        if params.is_empty() {
            "Bearer".into()
        } else {
            format!("Bearer {}", params.join(", "))
        }
    }

    fn mcp(&self, hit: &super::Hit) -> Response {
        let token = hit
            .authorization
            .as_deref()
            .and_then(|a| a.strip_prefix("Bearer "));
        let scopes = token.and_then(|t| {
            self.trusted
                .lock()
                .unwrap()
                .iter()
                .find_map(|db| db.scopes(t))
        });
        let Some(scopes) = scopes else {
            let error = token.map(|_| "invalid_token");
            let value = self.challenge(error, self.config.challenge_scope.clone());
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, value)],
            )
                .into_response();
        };
        let required = self.required.lock().unwrap().clone();
        if !required.iter().all(|r| scopes.contains(r)) {
            let value = self.challenge(Some("insufficient_scope"), Some(required.join(" ")));
            return (StatusCode::FORBIDDEN, [(header::WWW_AUTHENTICATE, value)]).into_response();
        }
        let id = hit.json.as_ref().and_then(|b| b.get("id")).cloned();
        let method = hit
            .json
            .as_ref()
            .and_then(|b| b.get("method"))
            .and_then(Value::as_str);
        let Some(id) = id else {
            return StatusCode::ACCEPTED.into_response();
        };
        let result = if method == Some("initialize") {
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "serverInfo": {"name": "fake", "version": "1"}
            })
        } else {
            json!({})
        };
        axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
    }

    fn metadata(&self) -> Response {
        let default_resource = match self.config.prm {
            PrmLoc::Root => self.base.clone(),
            _ => format!("{}/mcp", self.base),
        };
        let mut doc = json!({
            "resource": self.config.resource.clone().unwrap_or(default_resource),
            "authorization_servers": *self.authorization_servers.lock().unwrap(),
        });
        if let Some(s) = &self.config.scopes_supported {
            doc.as_object_mut()
                .unwrap()
                .insert("scopes_supported".into(), json!(s));
        }
        axum::Json(doc).into_response()
    }
}

/// A running fake MCP server.
pub struct ResourceServer {
    state: Arc<RsState>,
    pub log: Log,
    task: tokio::task::JoinHandle<()>,
}

impl ResourceServer {
    /// Starts the server; its metadata names `authorization_servers` and it
    /// accepts tokens found in `trusted`.
    pub async fn start(
        config: RsConfig,
        authorization_servers: Vec<String>,
        trusted: Vec<TokenDb>,
    ) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let embedded = config.embedded_as.clone().map(|c| {
            let state = AsState::new(c);
            state.set_base(&base);
            state
        });
        let mut trusted = trusted;
        if let Some(e) = &embedded {
            trusted.push(e.db.clone());
        }
        let state = Arc::new(RsState {
            required: Mutex::new(config.required_scopes.clone()),
            config,
            base,
            log: Log::default(),
            authorization_servers: Mutex::new(authorization_servers),
            trusted: Mutex::new(trusted),
            embedded,
        });
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(state.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            log: state.log.clone(),
            state,
            task,
        }
    }

    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.state.base)
    }

    pub fn base(&self) -> &str {
        &self.state.base
    }

    /// The log of the embedded authorization server.
    pub fn embedded_log(&self) -> Log {
        self.state
            .embedded
            .as_ref()
            .map(|e| e.log.clone())
            .unwrap_or_default()
    }

    pub fn set_authorization_servers(&self, servers: Vec<String>) {
        *self.state.authorization_servers.lock().unwrap() = servers;
    }

    pub fn set_trusted(&self, trusted: Vec<TokenDb>) {
        *self.state.trusted.lock().unwrap() = trusted;
    }

    pub fn set_required_scopes(&self, scopes: &[&str]) {
        *self.state.required.lock().unwrap() = scopes.iter().map(|s| (*s).to_owned()).collect();
    }
}

impl Drop for ResourceServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(State(state): State<Arc<RsState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let hit = hit_of(parts.method.as_str(), &parts.uri, &parts.headers, &bytes);
    state.log.push(hit.clone());
    if parts.method == "POST" && hit.path == "/mcp" {
        return state.mcp(&hit);
    }
    if parts.method == "GET" && state.prm_path().as_deref() == Some(hit.path.as_str()) {
        return state.metadata();
    }
    if let Some(embedded) = &state.embedded {
        embedded.log.push(hit.clone());
        if let Some(response) = embedded.answer(parts.method.as_str(), &hit).await {
            return response;
        }
    }
    (StatusCode::NOT_FOUND, axum::Json(Value::Null)).into_response()
}
