//! A fake authorization server for the machine grants, with its protected
//! MCP endpoint, on one loopback origin: client credentials (Basic, form or
//! `private_key_jwt`), the JWT bearer grant (a workload's token or an
//! identity assertion grant), an enterprise identity provider's token
//! exchange at `/idp/token`, and DPoP (proofs checked as RFC 9449 says,
//! nonces demanded when configured, tokens bound to the proof's key).
//!
//! `/mcp` answers a JSON-RPC request with an empty result, or forwards it to
//! a backend MCP server when one is given. Everything it hands out contains
//! `SEKRIT`, so tests can check that no secret ever reaches an error.
#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _,
    UnparsedPublicKey,
};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

/// The grant the server accepts at `/token`.
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How the client must authenticate at `/token`.
#[derive(Clone, Debug)]
pub enum ClientCheck {
    /// Any (or no) client authentication.
    Any,
    /// HTTP Basic with this id and secret.
    Basic(String, String),
    /// `client_id` and `client_secret` in the form.
    Post(String, String),
    /// A `private_key_jwt` assertion of this client, signed by this
    /// public key (an uncompressed P-256 point).
    Jwt(String, Vec<u8>),
}

/// What the server does.
#[derive(Clone, Debug)]
pub struct MachineConfig {
    pub client: ClientCheck,
    /// Public key (uncompressed point) a JWT bearer assertion must be
    /// signed with (a workload's issuer); the IdP's own key is always
    /// accepted for identity assertion grants.
    pub assertion_key: Option<Vec<u8>>,
    /// The ID token the identity provider accepts.
    pub id_token: Option<String>,
    /// `dpop_signing_alg_values_supported: ["ES256"]`.
    pub dpop: bool,
    /// The token endpoint demands a nonce (`use_dpop_nonce`).
    pub as_nonce: bool,
    /// The token endpoint asks for a new nonce every time (a loop).
    pub as_nonce_loop: bool,
    /// The MCP endpoint demands a nonce.
    pub rs_nonce: bool,
    /// The MCP endpoint asks for a new nonce every time.
    pub rs_nonce_loop: bool,
    /// The MCP endpoint challenges with `DPoP` only.
    pub rs_dpop_only: bool,
    /// `expires_in` of issued tokens.
    pub expires_in: u64,
    /// Replaces every `/token` answer with this (status, body).
    pub token_answer: Option<(u16, String)>,
    /// Where `/mcp` forwards authorized requests.
    pub backend: Option<String>,
}

impl Default for MachineConfig {
    fn default() -> Self {
        Self {
            client: ClientCheck::Any,
            assertion_key: None,
            id_token: None,
            dpop: false,
            as_nonce: false,
            as_nonce_loop: false,
            rs_nonce: false,
            rs_nonce_loop: false,
            rs_dpop_only: false,
            expires_in: 3600,
            token_answer: None,
            backend: None,
        }
    }
}

/// One request to `/token`, `/idp/token` or `/mcp`.
#[derive(Clone, Debug)]
pub struct MachineHit {
    pub path: String,
    pub form: HashMap<String, String>,
    pub authorization: Option<String>,
    pub dpop: Option<String>,
    /// Why the server refused it, if it did.
    pub refused: Option<String>,
}

struct Inner {
    base: String,
    config: MachineConfig,
    idp_key: EcdsaKeyPair,
    /// Issued access tokens and the key thumbprint they are bound to.
    tokens: Mutex<HashMap<String, Option<String>>>,
    hits: Mutex<Vec<MachineHit>>,
    jtis: Mutex<Vec<String>>,
    counter: Mutex<u64>,
    client: reqwest::Client,
}

/// The running server.
pub struct MachineServer {
    inner: Arc<Inner>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MachineServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MachineServer {
    pub async fn start(config: MachineConfig) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let inner = Arc::new(Inner {
            base,
            config,
            idp_key: EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap(),
            tokens: Mutex::default(),
            hits: Mutex::default(),
            jtis: Mutex::default(),
            counter: Mutex::new(0),
            client: reqwest::Client::builder().no_proxy().build().unwrap(),
        });
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&inner));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { inner, task }
    }

    /// The issuer (and origin).
    pub fn issuer(&self) -> String {
        self.inner.base.clone()
    }

    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.inner.base)
    }

    /// The identity provider's token endpoint (same origin).
    pub fn idp_token_endpoint(&self) -> String {
        format!("{}/idp/token", self.inner.base)
    }

    pub fn hits(&self) -> Vec<MachineHit> {
        self.inner.hits.lock().unwrap().clone()
    }

    pub fn hits_at(&self, path: &str) -> Vec<MachineHit> {
        self.hits().into_iter().filter(|h| h.path == path).collect()
    }
}

/// A P-256 key for tests: PEM (PKCS#8) and its public point.
pub fn test_key() -> (EcdsaKeyPair, String, Vec<u8>) {
    let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
    let der = pair.to_pkcs8v1().unwrap();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        STANDARD.encode(der.as_ref())
    );
    let public = pair.public_key().as_ref().to_vec();
    (pair, pem, public)
}

/// Signs `claims` with `key` (ES256).
pub fn sign(key: &EcdsaKeyPair, mut header: Value, claims: &Value) -> String {
    header["alg"] = json!("ES256");
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = key.sign(&SystemRandom::new(), input.as_bytes()).unwrap();
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A workload token (`iss`, `sub`, `aud`) signed by `key`.
pub fn workload_jwt(key: &EcdsaKeyPair, audience: &str, subject: &str) -> String {
    sign(
        key,
        json!({"typ": "JWT"}),
        &json!({"iss": "https://workload.example", "sub": subject, "aud": audience,
                "iat": now(), "exp": now() + 300, "marker": "SEKRIT-workload"}),
    )
}

/// The header and claims of `jwt` if its signature verifies with
/// `public` (an uncompressed point).
fn verified(jwt: &str, public: &[u8]) -> Option<(Value, Value)> {
    let mut parts = jwt.split('.');
    let (h, c, s) = (parts.next()?, parts.next()?, parts.next()?);
    let signature = URL_SAFE_NO_PAD.decode(s).ok()?;
    UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, public)
        .verify(format!("{h}.{c}").as_bytes(), &signature)
        .ok()?;
    let json = |p: &str| serde_json::from_slice::<Value>(&URL_SAFE_NO_PAD.decode(p).ok()?).ok();
    Some((json(h)?, json(c)?))
}

/// The uncompressed point of a P-256 JWK.
fn jwk_point(jwk: &Value) -> Option<Vec<u8>> {
    if jwk["kty"] != "EC" || jwk["crv"] != "P-256" || jwk.get("d").is_some() {
        return None;
    }
    let x = URL_SAFE_NO_PAD.decode(jwk["x"].as_str()?).ok()?;
    let y = URL_SAFE_NO_PAD.decode(jwk["y"].as_str()?).ok()?;
    let mut point = vec![4u8];
    point.extend(x);
    point.extend(y);
    Some(point)
}

fn thumbprint(jwk: &Value) -> String {
    let canonical = format!(
        r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
        jwk["x"].as_str().unwrap_or_default(),
        jwk["y"].as_str().unwrap_or_default()
    );
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

const AS_NONCE: &str = "as-nonce-1";
const RS_NONCE: &str = "rs-nonce-1";

impl Inner {
    fn next(&self) -> u64 {
        let mut counter = self.counter.lock().unwrap();
        *counter += 1;
        *counter
    }

    /// Checks a DPoP proof for `method` on `url`; its key's thumbprint.
    fn check_proof(
        &self,
        proof: Option<&str>,
        method: &str,
        url: &str,
        token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, String> {
        let proof = proof.ok_or("no DPoP proof")?;
        let header: Value = proof
            .split('.')
            .next()
            .and_then(|h| URL_SAFE_NO_PAD.decode(h).ok())
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or("proof header")?;
        if header["typ"] != "dpop+jwt" || header["alg"] != "ES256" {
            return Err("typ/alg".into());
        }
        let point = jwk_point(&header["jwk"]).ok_or("jwk")?;
        let (_, claims) = verified(proof, &point).ok_or("signature")?;
        if claims["htm"] != method {
            return Err("htm".into());
        }
        if claims["htu"] != url {
            return Err(format!("htu {}", claims["htu"]));
        }
        let iat = claims["iat"].as_u64().ok_or("iat")?;
        if iat.abs_diff(now()) > 60 {
            return Err("iat".into());
        }
        let jti = claims["jti"].as_str().ok_or("jti")?.to_owned();
        {
            let mut jtis = self.jtis.lock().unwrap();
            if jtis.contains(&jti) {
                return Err("replayed jti".into());
            }
            jtis.push(jti);
        }
        if let Some(token) = token {
            let ath = URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()));
            if claims["ath"] != ath.as_str() {
                return Err("ath".into());
            }
        }
        if let Some(nonce) = nonce
            && claims["nonce"] != nonce
        {
            return Err("use_dpop_nonce".into());
        }
        Ok(thumbprint(&header["jwk"]))
    }

    fn check_client(
        &self,
        headers: &HeaderMap,
        form: &HashMap<String, String>,
    ) -> Result<(), String> {
        let basic = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Basic "))
            .and_then(|b| STANDARD.decode(b).ok())
            .and_then(|b| String::from_utf8(b).ok());
        match &self.config.client {
            ClientCheck::Any => Ok(()),
            ClientCheck::Basic(id, secret) => match basic {
                Some(pair) if pair == format!("{id}:{secret}") => Ok(()),
                _ => Err("basic".into()),
            },
            ClientCheck::Post(id, secret) => {
                if form.get("client_id") == Some(id) && form.get("client_secret") == Some(secret) {
                    Ok(())
                } else {
                    Err("post".into())
                }
            }
            ClientCheck::Jwt(id, public) => {
                if form.get("client_assertion_type").map(String::as_str) != Some(ASSERTION_TYPE) {
                    return Err("assertion type".into());
                }
                let assertion = form.get("client_assertion").ok_or("no assertion")?;
                let (_, claims) = verified(assertion, public).ok_or("assertion signature")?;
                if claims["iss"] != id.as_str() || claims["sub"] != id.as_str() {
                    return Err("assertion iss/sub".into());
                }
                if claims["aud"] != self.base.as_str() {
                    return Err("assertion aud".into());
                }
                if claims["exp"].as_u64().is_none_or(|e| e < now()) {
                    return Err("assertion exp".into());
                }
                Ok(())
            }
        }
    }

    fn issue(&self, jkt: Option<String>) -> Value {
        let token = format!("mt-SEKRIT-{}", self.next());
        self.tokens
            .lock()
            .unwrap()
            .insert(token.clone(), jkt.clone());
        json!({
            "access_token": token,
            "token_type": if jkt.is_some() { "DPoP" } else { "Bearer" },
            "expires_in": self.config.expires_in,
        })
    }

    fn token(
        &self,
        headers: &HeaderMap,
        form: &HashMap<String, String>,
    ) -> Result<Value, (StatusCode, Value, bool)> {
        let refuse = |status, error: &str| {
            (
                status,
                json!({"error": error, "error_description": "SEKRIT-description"}),
                false,
            )
        };
        let mut jkt = None;
        if self.config.dpop {
            let proof = headers.get("dpop").and_then(|v| v.to_str().ok());
            if proof.is_some() {
                let url = format!("{}/token", self.base);
                let nonce = if self.config.as_nonce_loop {
                    Some("never-matches")
                } else if self.config.as_nonce {
                    Some(AS_NONCE)
                } else {
                    None
                };
                match self.check_proof(proof, "POST", &url, None, nonce) {
                    Ok(thumb) => jkt = Some(thumb),
                    Err(e) if e == "use_dpop_nonce" => {
                        return Err((
                            StatusCode::BAD_REQUEST,
                            json!({"error": "use_dpop_nonce"}),
                            true,
                        ));
                    }
                    Err(_) => return Err(refuse(StatusCode::BAD_REQUEST, "invalid_dpop_proof")),
                }
            }
        }
        self.check_client(headers, form)
            .map_err(|_| refuse(StatusCode::UNAUTHORIZED, "invalid_client"))?;
        match form.get("grant_type").map(String::as_str) {
            Some("client_credentials") => Ok(self.issue(jkt)),
            Some(JWT_BEARER) => {
                let assertion = form
                    .get("assertion")
                    .ok_or_else(|| refuse(StatusCode::BAD_REQUEST, "invalid_request"))?;
                let idp_public = self.idp_key.public_key().as_ref().to_vec();
                let claims = self
                    .config
                    .assertion_key
                    .as_deref()
                    .and_then(|k| verified(assertion, k))
                    .or_else(|| verified(assertion, &idp_public))
                    .map(|(_, c)| c)
                    .ok_or_else(|| refuse(StatusCode::BAD_REQUEST, "invalid_grant"))?;
                if claims["aud"] != self.base.as_str() {
                    return Err(refuse(StatusCode::BAD_REQUEST, "invalid_grant"));
                }
                Ok(self.issue(jkt))
            }
            _ => Err(refuse(StatusCode::BAD_REQUEST, "unsupported_grant_type")),
        }
    }

    fn exchange(&self, form: &HashMap<String, String>) -> Result<Value, String> {
        if form.get("grant_type").map(String::as_str) != Some(TOKEN_EXCHANGE) {
            return Err("grant_type".into());
        }
        if form.get("requested_token_type").map(String::as_str) != Some(ID_JAG) {
            return Err("requested_token_type".into());
        }
        if form.get("subject_token_type").map(String::as_str)
            != Some("urn:ietf:params:oauth:token-type:id_token")
        {
            return Err("subject_token_type".into());
        }
        if form.get("subject_token") != self.config.id_token.as_ref() {
            return Err("subject_token".into());
        }
        if form.get("audience").map(String::as_str) != Some(self.base.as_str()) {
            return Err("audience".into());
        }
        let resource = form.get("resource").ok_or("resource")?;
        let jag = sign(
            &self.idp_key,
            json!({"typ": "oauth-id-jag+jwt"}),
            &json!({"iss": format!("{}/idp", self.base), "sub": "user", "aud": self.base,
                    "resource": resource, "client_id": form.get("client_id"),
                    "iat": now(), "exp": now() + 300, "jti": self.next().to_string()}),
        );
        Ok(json!({"access_token": jag, "issued_token_type": ID_JAG, "token_type": "N_A"}))
    }
}

fn form_of(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

async fn handle(State(inner): State<Arc<Inner>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let body = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let mut hit = MachineHit {
        path: path.clone(),
        form: form_of(&body),
        authorization: header("authorization"),
        dpop: header("dpop"),
        refused: None,
    };
    let base = inner.base.clone();
    let response = match (parts.method.clone(), path.as_str()) {
        (Method::GET, "/.well-known/oauth-protected-resource/mcp") => {
            axum::Json(json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}))
                .into_response()
        }
        (Method::GET, "/.well-known/oauth-authorization-server") => {
            let mut doc = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["client_credentials", JWT_BEARER],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"],
            });
            if inner.config.dpop {
                doc["dpop_signing_alg_values_supported"] = json!(["ES256"]);
            }
            axum::Json(doc).into_response()
        }
        (Method::POST, "/token") => {
            if let Some((status, body)) = &inner.config.token_answer {
                hit.refused = Some("scripted".into());
                (
                    StatusCode::from_u16(*status).unwrap(),
                    [(header::CONTENT_TYPE, "application/json")],
                    body.clone(),
                )
                    .into_response()
            } else {
                match inner.token(&parts.headers, &hit.form) {
                    Ok(doc) => axum::Json(doc).into_response(),
                    Err((status, doc, nonce)) => {
                        hit.refused = doc["error"].as_str().map(str::to_owned);
                        let mut response = (status, axum::Json(doc)).into_response();
                        if nonce {
                            let fresh = if inner.config.as_nonce_loop {
                                format!("loop-{}", inner.next())
                            } else {
                                AS_NONCE.to_owned()
                            };
                            response
                                .headers_mut()
                                .insert("dpop-nonce", fresh.parse().unwrap());
                        }
                        response
                    }
                }
            }
        }
        (Method::POST, "/idp/token") => match inner.exchange(&hit.form) {
            Ok(doc) => axum::Json(doc).into_response(),
            Err(why) => {
                hit.refused = Some(why);
                (
                    StatusCode::BAD_REQUEST,
                    axum::Json(json!({"error": "invalid_request"})),
                )
                    .into_response()
            }
        },
        (_, "/mcp") => {
            mcp(
                &inner,
                &parts.method,
                &parts.headers,
                body.to_vec(),
                &mut hit,
            )
            .await
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    };
    inner.hits.lock().unwrap().push(hit);
    response
}

async fn mcp(
    inner: &Inner,
    method: &Method,
    headers: &HeaderMap,
    body: Vec<u8>,
    hit: &mut MachineHit,
) -> Response {
    let prm = format!("{}/.well-known/oauth-protected-resource/mcp", inner.base);
    let scheme = if inner.config.rs_dpop_only {
        "DPoP"
    } else {
        "Bearer"
    };
    let challenge = |error: Option<&str>| {
        let error = error
            .map(|e| format!("error=\"{e}\", "))
            .unwrap_or_default();
        format!("{scheme} {error}resource_metadata=\"{prm}\"")
    };
    let unauthorized = |why: &str, error: Option<&str>| {
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, challenge(error))],
            why.to_owned(),
        )
            .into_response()
    };
    let Some(authorization) = hit.authorization.clone() else {
        hit.refused = Some("no token".into());
        return unauthorized("no token", None);
    };
    let (kind, token) = authorization.split_once(' ').unwrap_or(("", ""));
    let bound = inner.tokens.lock().unwrap().get(token).cloned();
    let Some(bound) = bound else {
        hit.refused = Some("unknown token".into());
        return unauthorized("unknown token", Some("invalid_token"));
    };
    match (&bound, kind) {
        (None, "Bearer") => {}
        (Some(jkt), "DPoP") => {
            let nonce = if inner.config.rs_nonce_loop {
                Some("never-matches")
            } else if inner.config.rs_nonce {
                Some(RS_NONCE)
            } else {
                None
            };
            let url = format!("{}/mcp", inner.base);
            match inner.check_proof(
                hit.dpop.as_deref(),
                method.as_str(),
                &url,
                Some(token),
                nonce,
            ) {
                Ok(thumb) if thumb == *jkt => {}
                Err(e) if e == "use_dpop_nonce" => {
                    hit.refused = Some(e);
                    let fresh = if inner.config.rs_nonce_loop {
                        format!("loop-{}", inner.next())
                    } else {
                        RS_NONCE.to_owned()
                    };
                    let mut response = unauthorized("nonce", Some("use_dpop_nonce"));
                    response
                        .headers_mut()
                        .insert("dpop-nonce", fresh.parse().unwrap());
                    return response;
                }
                other => {
                    hit.refused = Some(format!("proof: {other:?}"));
                    return unauthorized("bad proof", Some("invalid_dpop_proof"));
                }
            }
        }
        _ => {
            hit.refused = Some(format!("scheme {kind}"));
            return unauthorized("wrong scheme", Some("invalid_token"));
        }
    }
    match &inner.config.backend {
        None => {
            let id = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v.get("id").cloned())
                .unwrap_or(Value::Null);
            axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": {}})).into_response()
        }
        Some(backend) => {
            let mut forward = inner
                .client
                .request(method.clone(), format!("{backend}/mcp"));
            for (name, value) in headers {
                if ![
                    header::HOST,
                    header::CONTENT_LENGTH,
                    header::AUTHORIZATION,
                    header::CONNECTION,
                ]
                .contains(name)
                    && name != "dpop"
                {
                    forward = forward.header(name, value);
                }
            }
            let Ok(answer) = forward.body(body).send().await else {
                return StatusCode::BAD_GATEWAY.into_response();
            };
            let status = answer.status();
            let answer_headers = answer.headers().clone();
            let bytes = answer.bytes().await.unwrap_or_default();
            let mut response = Response::new(Body::from(bytes));
            *response.status_mut() = status;
            for (name, value) in &answer_headers {
                if ![
                    header::CONTENT_LENGTH,
                    header::TRANSFER_ENCODING,
                    header::CONNECTION,
                ]
                .contains(name)
                {
                    response.headers_mut().append(name.clone(), value.clone());
                }
            }
            response
        }
    }
}
