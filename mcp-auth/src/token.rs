//! The token endpoint: the authorization code exchange (with the PKCE
//! verifier), refresh, client credentials and the JWT bearer grant, with
//! the client authentication the registration or configuration calls for
//! (secret, or a `private_key_jwt` assertion), the RFC 8707 `resource`, and
//! DPoP proofs with one nonce retry.
//!
//! Which part is whose:
//!
//! - **The `oauth2` crate** builds the code exchange, the refresh and the
//!   client credentials requests (grant parameters, PKCE verifier,
//!   `redirect_uri`, scopes, HTTP Basic with the form-encoded id and secret
//!   or `client_secret_post`), classifies the answer (success, an OAuth
//!   error response, a body it cannot read) and parses the token response
//!   into [`TokenFields`] (our `TokenResponse`: the crate's standard one
//!   takes `expires_in` only as a number, and servers that send `"3600"`
//!   exist). Revocation (RFC 7009) is also the crate's, in `revoke.rs`,
//!   over `https`: the crate refuses any other scheme, so a revocation
//!   endpoint on loopback `http` gets our own request (why, there).
//! - **Ours**, because the crate has no such thing: the JWT bearer grant
//!   (RFC 7523) and the token exchange (RFC 8693, `idp.rs`) build their form
//!   in [`TokenEndpoint::post`]; `private_key_jwt` client assertions (RFC
//!   7523 §2.2) ride on the crate's requests as extra parameters; DPoP
//!   proofs (RFC 9449) and the one `use_dpop_nonce` retry are added by our
//!   HTTP adapter ([`OAuthHttp`](crate::http::OAuthHttp)), under the crate's
//!   requests and ours alike, so the rule exists once.
//! - **Ours, on top of the crate**: `client_id` also goes into the form with
//!   HTTP Basic (the Python SDK's authorization server refuses a token
//!   request without it, "Missing client_id"; the crate sends it only
//!   without a secret), and `resource` is an extra parameter given as a
//!   string, so it goes out verbatim (a `Url` would add `/` to a pathless
//!   identifier).
//! - **Our boundary**: the crate's errors keep the response body
//!   (`RequestTokenError::Parse`), the parser's message (which may quote
//!   it), and `error_description` / `error_uri`; none of them crosses into
//!   an [`AuthError`]. A refusal becomes [`AuthError::TokenRefused`] with
//!   the status and the bare `error` code, a body that is not a token
//!   response [`AuthError::InvalidDocument`], and the adapter's own errors
//!   (network, time-out, body bound, redirect) pass through as they are.
//!
//! Two rules of the crate hold for every token request: success is HTTP 200
//! exactly (RFC 6749 §5.1; our JWT bearer grant follows it), and an error
//! status is read as an OAuth error response. Its `Content-Type` check does
//! not apply: the adapter hands it the status and the body only, and a body
//! is judged by parsing it.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use oauth2::basic::{
    BasicErrorResponse, BasicRevocationErrorResponse, BasicTokenIntrospectionResponse,
    BasicTokenType,
};
use oauth2::{
    AccessToken, AuthType, AuthorizationCode, ClientId, ClientSecret, EndpointNotSet, EndpointSet,
    ErrorResponseType, PkceCodeVerifier, RedirectUrl, RefreshToken, RequestTokenError, Scope,
    StandardErrorResponse, StandardRevocableToken, TokenResponse, TokenUrl,
};
use serde::{Deserialize, Deserializer, Serialize};
use url::Url;

use crate::dpop::NonceSlot;
use crate::error::{AuthError, ServerErrorCode, Step, UrlRole};
use crate::grant::{ClientAuth, JWT_BEARER};
use crate::http::{self, AuthHttpClient, AuthHttpResponse, OAuthHttp};
use crate::jose::SigningKey;
use crate::pkce::random_token;
use crate::registration::{ClientRegistration, TokenAuthMethod};
use crate::secret::Secret;

/// Refresh at most this long before expiry (less for short-lived tokens:
/// half their lifetime).
const REFRESH_MARGIN_SECS: u64 = 60;
/// `expires_in` above ten years is taken as ten years.
const MAX_LIFETIME_SECS: u64 = 10 * 365 * 24 * 3600;

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Tokens from one grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TokenSet {
    pub(crate) access_token: Secret,
    pub(crate) refresh_token: Option<Secret>,
    /// Unix seconds; `None` when the server gave no `expires_in`.
    pub(crate) expires_at: Option<u64>,
    pub(crate) obtained_at: u64,
    /// Granted scopes (the response's `scope`, else the requested ones).
    pub(crate) scopes: Vec<String>,
    /// Whether the token is DPoP-bound (`token_type: DPoP`): sent only with
    /// a proof of the record's key, never as Bearer.
    #[serde(default)]
    pub(crate) dpop_bound: bool,
}

impl TokenSet {
    /// Whether to refresh before the next request.
    pub(crate) fn needs_refresh(&self, now: u64) -> bool {
        match self.expires_at {
            None => false,
            Some(at) => {
                let lifetime = at.saturating_sub(self.obtained_at);
                let margin = REFRESH_MARGIN_SECS.min(lifetime / 2);
                now.saturating_add(margin) >= at
            }
        }
    }

    /// Whether the access token is past its expiry.
    pub(crate) fn expired(&self, now: u64) -> bool {
        self.expires_at.is_some_and(|at| now >= at)
    }
}

/// A token response (RFC 6749 §5.1), as the `oauth2` crate's
/// [`TokenResponse`]: its secrets are the crate's types (`Debug` shows
/// `[redacted]`), `token_type` is read case-insensitively by the crate's
/// helper, and `expires_in` may be a number or a numeric string (anything
/// else is ignored, as if absent).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct TokenFields {
    access_token: AccessToken,
    #[serde(deserialize_with = "oauth2::helpers::deserialize_untagged_enum_case_insensitive")]
    token_type: BasicTokenType,
    #[serde(default, deserialize_with = "lenient_seconds")]
    expires_in: Option<u64>,
    #[serde(default)]
    refresh_token: Option<RefreshToken>,
    #[serde(
        rename = "scope",
        default,
        deserialize_with = "space_separated",
        serialize_with = "oauth2::helpers::serialize_space_delimited_vec"
    )]
    scopes: Option<Vec<Scope>>,
}

impl TokenResponse for TokenFields {
    type TokenType = BasicTokenType;

    fn access_token(&self) -> &AccessToken {
        &self.access_token
    }

    fn token_type(&self) -> &BasicTokenType {
        &self.token_type
    }

    fn expires_in(&self) -> Option<Duration> {
        self.expires_in.map(Duration::from_secs)
    }

    fn refresh_token(&self) -> Option<&RefreshToken> {
        self.refresh_token.as_ref()
    }

    fn scopes(&self) -> Option<&Vec<Scope>> {
        self.scopes.as_ref()
    }
}

fn lenient_seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    })
}

/// `scope` split at any ASCII whitespace (the crate's helper splits at
/// single spaces only).
fn space_separated<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Scope>>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.map(|scope| {
        crate::challenge::split_scopes(&scope)
            .into_iter()
            .map(Scope::new)
            .collect()
    }))
}

/// The `oauth2` client this crate drives: our token response, the crate's
/// standard error responses; whether the revocation and token endpoints
/// are set is in its type.
pub(crate) type OAuthClient<HasRevocationUrl, HasTokenUrl> = oauth2::Client<
    BasicErrorResponse,
    TokenFields,
    BasicTokenIntrospectionResponse,
    StandardRevocableToken,
    BasicRevocationErrorResponse,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    HasRevocationUrl,
    HasTokenUrl,
>;

/// Form fields one of the crate's requests gets on top of its own.
pub(crate) type ExtraParams = Vec<(&'static str, String)>;

/// How the client authenticates at one token endpoint, its secret or key
/// already read from its source.
#[derive(Clone)]
pub(crate) enum ClientAuthn {
    None,
    Basic(Secret),
    Post(Secret),
    Assertion(Arc<SigningKey>),
}

impl ClientAuthn {
    /// What a registration (pre-registered, metadata document or dynamic)
    /// calls for.
    pub(crate) fn of_registration(client: &ClientRegistration) -> Self {
        match (client.auth_method, &client.client_secret) {
            (TokenAuthMethod::ClientSecretBasic, Some(secret)) => Self::Basic(secret.clone()),
            (TokenAuthMethod::ClientSecretPost, Some(secret)) => Self::Post(secret.clone()),
            _ => Self::None,
        }
    }

    /// What a machine client's configuration calls for, read now.
    pub(crate) fn of_machine(auth: &ClientAuth) -> Result<Self, AuthError> {
        Ok(match auth {
            ClientAuth::None => Self::None,
            ClientAuth::SecretBasic(source) => Self::Basic(source.read()?),
            ClientAuth::SecretPost(source) => Self::Post(source.read()?),
            ClientAuth::PrivateKeyJwt(key) => Self::Assertion(key.load()?),
        })
    }

    /// The `oauth2` client of `client_id` authenticating this way, and the
    /// form fields the crate does not add itself: `client_id` beside HTTP
    /// Basic, the client assertion (`aud` the `issuer`).
    pub(crate) fn oauth_client(
        &self,
        client_id: &str,
        issuer: &str,
    ) -> Result<(OAuthClient<EndpointNotSet, EndpointNotSet>, ExtraParams), AuthError> {
        let client = OAuthClient::new(ClientId::new(client_id.to_owned()));
        let secret = |s: &Secret| ClientSecret::new(s.expose().to_owned());
        Ok(match self {
            // Without a secret the crate puts `client_id` in the form.
            ClientAuthn::None => (client.set_auth_type(AuthType::RequestBody), Vec::new()),
            // The id in the form too (never the secret): the Python SDK's
            // authorization server refuses a token request without it
            // ("Missing client_id") even with Basic.
            ClientAuthn::Basic(s) => (
                client
                    .set_auth_type(AuthType::BasicAuth)
                    .set_client_secret(secret(s)),
                vec![("client_id", client_id.to_owned())],
            ),
            ClientAuthn::Post(s) => (
                client
                    .set_auth_type(AuthType::RequestBody)
                    .set_client_secret(secret(s)),
                Vec::new(),
            ),
            ClientAuthn::Assertion(key) => (
                client.set_auth_type(AuthType::RequestBody),
                vec![
                    ("client_assertion_type", CLIENT_ASSERTION_TYPE.to_owned()),
                    (
                        "client_assertion",
                        client_assertion(key, client_id, issuer)?,
                    ),
                ],
            ),
        })
    }
}

/// The DPoP key of token requests and the authorization server's nonce.
#[derive(Clone, Copy)]
pub(crate) struct DpopBinding<'a> {
    pub(crate) key: &'a SigningKey,
    pub(crate) nonce: &'a NonceSlot,
}

/// Adds `params` to one of the `oauth2` crate's request builders (they
/// share no trait for it).
macro_rules! with_params {
    ($request:expr, $params:expr) => {{
        let mut request = $request;
        for (name, value) in $params {
            request = request.add_extra_param(*name, value.as_str());
        }
        request
    }};
}
pub(crate) use with_params;

/// Calls one token endpoint.
pub(crate) struct TokenEndpoint<'a> {
    pub(crate) http: &'a dyn AuthHttpClient,
    pub(crate) timeout: Duration,
    pub(crate) url: &'a Url,
    /// The authorization server's issuer: a client assertion's audience.
    pub(crate) issuer: &'a str,
    pub(crate) client_id: &'a str,
    pub(crate) auth: &'a ClientAuthn,
    /// The RFC 8707 resource, verbatim (none at an identity provider).
    pub(crate) resource: Option<&'a str>,
    pub(crate) dpop: Option<DpopBinding<'a>>,
}

impl TokenEndpoint<'_> {
    /// `grant_type=authorization_code` with the PKCE verifier.
    pub(crate) async fn exchange_code(
        &self,
        code: &Secret,
        verifier: &Secret,
        redirect_uri: &str,
        requested_scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        let step = Step::Token;
        let (client, params) = self.client()?;
        let redirect =
            RedirectUrl::new(redirect_uri.to_owned()).map_err(|_| AuthError::InvalidUrl {
                role: UrlRole::Redirect,
            })?;
        let request = client
            .exchange_code(AuthorizationCode::new(code.expose().to_owned()))
            .set_pkce_verifier(PkceCodeVerifier::new(verifier.expose().to_owned()))
            .set_redirect_uri(Cow::Owned(redirect));
        let adapter = self.adapter(step);
        let answer = with_params!(request, &params).request_async(&adapter).await;
        let fields = answer.map_err(|e| from_oauth2(e, step, adapter.last_status()))?;
        self.token_set(fields, step, None, requested_scopes)
    }

    /// `grant_type=refresh_token`. A response without a new refresh token
    /// keeps `refresh_token` (the server did not rotate it).
    pub(crate) async fn refresh(
        &self,
        refresh_token: &Secret,
        previous_scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        let step = Step::Refresh;
        let (client, params) = self.client()?;
        let token = RefreshToken::new(refresh_token.expose().to_owned());
        let request = client.exchange_refresh_token(&token);
        let adapter = self.adapter(step);
        let answer = with_params!(request, &params).request_async(&adapter).await;
        let fields = answer.map_err(|e| from_oauth2(e, step, adapter.last_status()))?;
        self.token_set(fields, step, Some(refresh_token), previous_scopes)
    }

    /// `grant_type=client_credentials`.
    pub(crate) async fn client_credentials(
        &self,
        scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        let step = Step::Token;
        let (client, params) = self.client()?;
        let request = client
            .exchange_client_credentials()
            .add_scopes(scopes.iter().cloned().map(Scope::new));
        let adapter = self.adapter(step);
        let answer = with_params!(request, &params).request_async(&adapter).await;
        let fields = answer.map_err(|e| from_oauth2(e, step, adapter.last_status()))?;
        self.token_set(fields, step, None, scopes)
    }

    /// The RFC 7523 JWT bearer grant with `assertion` (not in the crate).
    pub(crate) async fn jwt_bearer(
        &self,
        assertion: &Secret,
        scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        let scope = scopes.join(" ");
        let mut pairs = vec![
            ("grant_type", JWT_BEARER),
            ("assertion", assertion.expose()),
        ];
        if !scope.is_empty() {
            pairs.push(("scope", &scope));
        }
        let response = self.post(Step::Token, &pairs).await?;
        if response.status != 200 {
            return Err(refused(&response, Step::Token));
        }
        let fields: TokenFields = http::parse_json(&response, Step::Token)?;
        self.token_set(fields, Step::Token, None, scopes)
    }

    /// The crate's client for this endpoint and the extra form fields of
    /// every request: the client authentication's, then `resource`.
    fn client(&self) -> Result<(OAuthClient<EndpointNotSet, EndpointSet>, ExtraParams), AuthError> {
        let (client, mut params) = self.auth.oauth_client(self.client_id, self.issuer)?;
        if let Some(resource) = self.resource {
            params.push(("resource", resource.to_owned()));
        }
        Ok((
            client.set_token_uri(TokenUrl::from_url(self.url.clone())),
            params,
        ))
    }

    fn adapter(&self, step: Step) -> OAuthHttp<'_> {
        OAuthHttp::new(self.http, self.timeout, step, self.dpop)
    }

    /// Posts `pairs` (a grant the crate lacks) with the client's
    /// authentication and the `resource`, through the same adapter as the
    /// crate's requests (so with a DPoP proof and its one nonce retry).
    pub(crate) async fn post(
        &self,
        step: Step,
        pairs: &[(&str, &str)],
    ) -> Result<AuthHttpResponse, AuthError> {
        let mut pairs = pairs.to_vec();
        if let Some(resource) = self.resource {
            pairs.push(("resource", resource));
        }
        let mut headers = Vec::new();
        let assertion;
        pairs.push(("client_id", self.client_id));
        match self.auth {
            ClientAuthn::Basic(secret) => {
                // RFC 6749 §2.3.1: both parts form-encoded before Base64;
                // `client_id` stays in the form too (see `oauth_client`).
                let id = form_encode(self.client_id);
                let secret = form_encode(secret.expose());
                let credentials = STANDARD.encode(format!("{id}:{secret}"));
                headers.push(("Authorization".to_owned(), format!("Basic {credentials}")));
            }
            ClientAuthn::Post(secret) => pairs.push(("client_secret", secret.expose())),
            ClientAuthn::Assertion(key) => {
                assertion = client_assertion(key, self.client_id, self.issuer)?;
                pairs.push(("client_assertion_type", CLIENT_ASSERTION_TYPE));
                pairs.push(("client_assertion", &assertion));
            }
            ClientAuthn::None => {}
        }
        let request = http::post_form(self.url.clone(), step, &pairs, headers);
        self.adapter(step).send(request).await
    }

    fn token_set(
        &self,
        fields: TokenFields,
        step: Step,
        previous_refresh: Option<&Secret>,
        requested_scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        token_set(
            fields,
            step,
            previous_refresh,
            requested_scopes,
            self.dpop.is_some(),
        )
    }
}

/// The `client_assertion_type` of RFC 7523 §2.2.
const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// How long a client assertion is valid.
const ASSERTION_LIFETIME_SECS: u64 = 300;

/// A `private_key_jwt` assertion: `iss` and `sub` the client id, `aud` the
/// issuer (the authorization server's identifier, as RFC 7523bis settles).
fn client_assertion(key: &SigningKey, client_id: &str, issuer: &str) -> Result<String, AuthError> {
    let now = unix_now();
    key.sign_jwt(
        serde_json::json!({"typ": "JWT"}),
        &serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": issuer,
            "jti": random_token()?,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_SECS,
        }),
    )
}

fn form_encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

#[derive(Deserialize)]
struct ErrorCodeOnly {
    error: Option<String>,
}

/// The OAuth `error` of an error response, if it has one.
pub(crate) fn error_code(response: &AuthHttpResponse) -> Option<String> {
    serde_json::from_slice::<ErrorCodeOnly>(&response.body)
        .ok()
        .and_then(|e| e.error)
}

/// A refusal of the token endpoint as an error (its body is not kept).
pub(crate) fn refused(response: &AuthHttpResponse, step: Step) -> AuthError {
    if (300..400).contains(&response.status) {
        return AuthError::Redirected { step };
    }
    AuthError::TokenRefused {
        step,
        status: response.status,
        error: error_code(response).map(|e| ServerErrorCode::new(&e)),
    }
}

/// An `oauth2` error at our boundary, `status` the last one the adapter
/// saw. Nothing of the server's text survives: the body of `Parse` (which
/// may be a token response), the parser's message (which may quote it), an
/// `Other` message (which may quote a header) and the `error_description`
/// and `error_uri` of `ServerResponse`; only the bare `error` code is kept,
/// behind [`AuthError::oauth_error`].
pub(crate) fn from_oauth2<E>(
    error: RequestTokenError<AuthError, StandardErrorResponse<E>>,
    step: Step,
    status: Option<u16>,
) -> AuthError
where
    E: ErrorResponseType + AsRef<str> + std::fmt::Display + 'static,
{
    match (error, status) {
        // The adapter's own errors carry no content already.
        (RequestTokenError::Request(e), _) => e,
        (RequestTokenError::ServerResponse(response), status) => AuthError::TokenRefused {
            step,
            status: status.unwrap_or(400),
            error: Some(ServerErrorCode::new(response.error().as_ref())),
        },
        // Nothing was sent: the crate could not build the request, and
        // the one part of it that can fail is the endpoint's URL.
        (RequestTokenError::Parse(..) | RequestTokenError::Other(_), None) => {
            AuthError::InvalidUrl {
                role: match step {
                    Step::Revocation => UrlRole::RevocationEndpoint,
                    _ => UrlRole::TokenEndpoint,
                },
            }
        }
        (RequestTokenError::Parse(..) | RequestTokenError::Other(_), Some(200)) => {
            AuthError::InvalidDocument { step }
        }
        (RequestTokenError::Parse(..) | RequestTokenError::Other(_), Some(status)) => {
            AuthError::TokenRefused {
                step,
                status,
                error: None,
            }
        }
    }
}

/// Our record of a token response: the type checked against the proof
/// sent, the size bounded, the lifetime capped, an unrotated refresh token
/// kept.
fn token_set(
    fields: TokenFields,
    step: Step,
    previous_refresh: Option<&Secret>,
    requested_scopes: &[String],
    proof_sent: bool,
) -> Result<TokenSet, AuthError> {
    let dpop_bound = match &fields.token_type {
        BasicTokenType::Bearer => false,
        BasicTokenType::Extension(kind) if proof_sent && kind == "dpop" => true,
        _ => return Err(AuthError::UnsupportedTokenType),
    };
    let access_token = fields.access_token.into_secret();
    if access_token.is_empty() || access_token.len() > MAX_TOKEN_BYTES {
        return Err(AuthError::InvalidDocument { step });
    }
    let now = unix_now();
    let scopes = match fields.scopes {
        Some(scopes) => scopes.iter().map(|s| s.to_string()).collect(),
        None => requested_scopes.to_vec(),
    };
    Ok(TokenSet {
        access_token: Secret::new(access_token),
        refresh_token: fields
            .refresh_token
            .map(RefreshToken::into_secret)
            .filter(|r| !r.is_empty())
            .map(Secret::new)
            .or_else(|| previous_refresh.cloned()),
        expires_at: fields
            .expires_in
            .map(|l| now.saturating_add(l.min(MAX_LIFETIME_SECS))),
        obtained_at: now,
        scopes,
        dpop_bound,
    })
}

/// Bound on an access token (it goes into a header of every request).
const MAX_TOKEN_BYTES: usize = 16 * 1024;

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use mcp_transport::BoxFuture;
    use oauth2::basic::BasicErrorResponseType;

    use super::*;
    use crate::http::AuthHttpRequest;

    const CANARY: &str = "CANARY-7f3a9c";

    fn fields(body: &str) -> TokenFields {
        serde_json::from_str(body).unwrap()
    }

    #[test]
    fn a_token_response_is_read_and_an_unrotated_refresh_token_kept() {
        let old = Secret::new("rt-old");
        let t = token_set(
            fields(r#"{"access_token":"at","token_type":"bearer","expires_in":"120"}"#),
            Step::Refresh,
            Some(&old),
            &["a".to_owned()],
            false,
        )
        .unwrap();
        assert_eq!(t.access_token.expose(), "at");
        assert_eq!(t.refresh_token.as_ref().map(Secret::expose), Some("rt-old"));
        assert_eq!(t.scopes, ["a"]);
        assert_eq!(t.expires_at, Some(t.obtained_at + 120));
        let rotated = token_set(
            fields(
                r#"{"access_token":"at2","token_type":"Bearer","refresh_token":"rt-new","scope":"x  y","expires_in":-5}"#,
            ),
            Step::Refresh,
            Some(&old),
            &[],
            false,
        )
        .unwrap();
        assert_eq!(rotated.refresh_token.unwrap().expose(), "rt-new");
        assert_eq!(rotated.scopes, ["x", "y"]);
        assert_eq!(rotated.expires_at, None);
        let bound = token_set(
            fields(r#"{"access_token":"at3","token_type":"DPoP"}"#),
            Step::Token,
            None,
            &[],
            true,
        )
        .unwrap();
        assert!(bound.dpop_bound);
    }

    #[test]
    fn odd_token_types_and_sizes_are_named_errors_without_content() {
        let odd = |body: &str, proof: bool| {
            token_set(fields(body), Step::Token, None, &[], proof).unwrap_err()
        };
        let e = odd(
            r#"{"access_token":"CANARY-7f3a9c","token_type":"DPoP"}"#,
            false,
        );
        assert!(matches!(e, AuthError::UnsupportedTokenType));
        let e = odd(
            r#"{"access_token":"CANARY-7f3a9c","token_type":"mac"}"#,
            true,
        );
        assert!(matches!(e, AuthError::UnsupportedTokenType));
        let huge = format!(
            r#"{{"access_token":"{}","token_type":"bearer"}}"#,
            CANARY.repeat(3000)
        );
        let e = odd(&huge, false);
        assert!(matches!(e, AuthError::InvalidDocument { .. }));
        assert!(!format!("{e} {e:?}").contains(CANARY));
        // The crate's types keep a token out of `Debug`.
        let f = fields(
            r#"{"access_token":"CANARY-7f3a9c","token_type":"bearer","refresh_token":"CANARY-7f3a9c"}"#,
        );
        assert!(!format!("{f:?}").contains(CANARY));
    }

    /// The crate's own error for `body` answered with `status` to a
    /// client credentials request (a `Parse` keeps the body, and the
    /// parser's message may quote it).
    async fn crate_error(
        status: u16,
        body: &str,
    ) -> RequestTokenError<AuthError, BasicErrorResponse> {
        let (client, _) = ClientAuthn::None
            .oauth_client("c", "https://as.example")
            .unwrap();
        let client =
            client.set_token_uri(TokenUrl::new("https://as.example/token".into()).unwrap());
        let reply = oauth2::http::Response::builder()
            .status(status)
            .body(body.as_bytes().to_vec())
            .unwrap();
        let http = move |_request: oauth2::HttpRequest| {
            let reply = reply.clone();
            async move { Ok::<_, AuthError>(reply) }
        };
        client
            .exchange_client_credentials()
            .request_async(&http)
            .await
            .expect_err("the answer is refused")
    }

    #[tokio::test]
    async fn the_crates_errors_keep_no_body_description_or_uri_at_our_boundary() {
        let described = RequestTokenError::ServerResponse(BasicErrorResponse::new(
            BasicErrorResponseType::InvalidGrant,
            Some(format!("refresh token {CANARY} is gone")),
            Some(format!("https://as.example/errors?{CANARY}")),
        ));
        // The crate's own error shows them.
        assert!(described.to_string().contains(CANARY));
        let e = from_oauth2(described, Step::Refresh, Some(400));
        assert!(matches!(
            e,
            AuthError::TokenRefused {
                step: Step::Refresh,
                status: 400,
                ..
            }
        ));
        assert_eq!(e.oauth_error(), Some("invalid_grant"));
        assert!(!format!("{e} {e:?}").contains(CANARY));

        // A token response that fails to parse: no token_type, or a
        // wrong type (whose message quotes the value).
        for body in [
            r#"{"access_token":"CANARY-7f3a9c"}"#,
            r#"{"access_token":"CANARY-7f3a9c","token_type":["bearer"]}"#,
            r#"{"access_token":"x","token_type":"bearer","refresh_token":{"CANARY-7f3a9c":1}}"#,
        ] {
            let crate_error = crate_error(200, body).await;
            assert!(matches!(crate_error, RequestTokenError::Parse(..)));
            let e = from_oauth2(crate_error, Step::Token, Some(200));
            assert!(matches!(
                e,
                AuthError::InvalidDocument { step: Step::Token }
            ));
            assert!(!format!("{e} {e:?}").contains(CANARY), "{body}");
        }
        // An error body that is not an error response: the status stays.
        let crate_error = crate_error(401, r#"{"error":{"x":"CANARY-7f3a9c"}}"#).await;
        assert!(matches!(crate_error, RequestTokenError::Parse(..)));
        let e = from_oauth2(crate_error, Step::Token, Some(401));
        assert!(matches!(
            e,
            AuthError::TokenRefused {
                status: 401,
                error: None,
                ..
            }
        ));
        assert!(!format!("{e} {e:?}").contains(CANARY));
        let e = from_oauth2::<BasicErrorResponseType>(
            RequestTokenError::Other(format!("unexpected Content-Type {CANARY}")),
            Step::Token,
            Some(200),
        );
        assert!(!format!("{e} {e:?}").contains(CANARY));
    }

    #[test]
    fn refresh_is_due_a_margin_before_expiry() {
        let t = |obtained: u64, expires: Option<u64>| TokenSet {
            access_token: Secret::new("a"),
            refresh_token: None,
            expires_at: expires,
            obtained_at: obtained,
            scopes: vec![],
            dpop_bound: false,
        };
        assert!(!t(0, None).needs_refresh(u64::MAX));
        let hour = t(1000, Some(4600));
        assert!(!hour.needs_refresh(4500));
        assert!(hour.needs_refresh(4540));
        assert!(!hour.expired(4599));
        assert!(hour.expired(4600));
        // A 10 s token is refreshed in its second half.
        let short = t(1000, Some(1010));
        assert!(!short.needs_refresh(1004));
        assert!(short.needs_refresh(1005));
        assert!(t(1000, Some(1000)).needs_refresh(1000));
    }

    /// Answers with the responses it was given, in order, and keeps what
    /// it was sent.
    #[derive(Debug, Default)]
    struct Scripted {
        answers: Mutex<VecDeque<AuthHttpResponse>>,
        seen: Mutex<Vec<AuthHttpRequest>>,
    }

    impl Scripted {
        fn new(answers: Vec<AuthHttpResponse>) -> Self {
            Self {
                answers: Mutex::new(answers.into()),
                seen: Mutex::default(),
            }
        }

        fn seen(&self) -> Vec<AuthHttpRequest> {
            self.seen.lock().unwrap().clone()
        }
    }

    impl AuthHttpClient for Scripted {
        fn send(
            &self,
            request: AuthHttpRequest,
        ) -> BoxFuture<'_, Result<AuthHttpResponse, AuthError>> {
            self.seen.lock().unwrap().push(request);
            let answer = self.answers.lock().unwrap().pop_front();
            Box::pin(async move { Ok(answer.expect("an answer was scripted")) })
        }
    }

    fn answer(status: u16, body: &str) -> AuthHttpResponse {
        AuthHttpResponse::new(status, None, body.as_bytes().to_vec())
    }

    fn form(request: &AuthHttpRequest) -> Vec<(String, String)> {
        url::form_urlencoded::parse(request.body.as_deref().unwrap())
            .into_owned()
            .collect()
    }

    fn header<'r>(request: &'r AuthHttpRequest, name: &str) -> Option<&'r str> {
        request
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    const OK: &str = r#"{"access_token":"at","token_type":"Bearer","expires_in":60}"#;

    #[tokio::test]
    async fn basic_keeps_client_id_in_the_form_and_the_resource_goes_out_verbatim() {
        let http = Scripted::new(vec![answer(200, OK)]);
        let url = Url::parse("https://as.example/token").unwrap();
        let auth = ClientAuthn::Basic(Secret::new("s e:cret"));
        let tokens = TokenEndpoint {
            http: &http,
            timeout: Duration::from_secs(5),
            url: &url,
            issuer: "https://as.example",
            client_id: "id:1",
            auth: &auth,
            // Pathless: a `Url` would send `https://mcp.example/`.
            resource: Some("https://mcp.example"),
            dpop: None,
        }
        .client_credentials(&["a".into(), "b".into()])
        .await
        .unwrap();
        assert_eq!(tokens.access_token.expose(), "at");
        let seen = http.seen();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].url.as_str(), "https://as.example/token");
        let form = form(&seen[0]);
        let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("grant_type"), Some("client_credentials"));
        assert_eq!(get("scope"), Some("a b"));
        assert_eq!(get("resource"), Some("https://mcp.example"));
        assert_eq!(get("client_id"), Some("id:1"));
        assert_eq!(get("client_secret"), None);
        let basic = header(&seen[0], "authorization").unwrap();
        let decoded = STANDARD
            .decode(basic.strip_prefix("Basic ").unwrap())
            .unwrap();
        assert_eq!(String::from_utf8(decoded).unwrap(), "id%3A1:s+e%3Acret");
        assert!(!format!("{:?}", seen[0]).contains("cret"));
    }

    #[tokio::test]
    async fn a_dpop_nonce_refusal_is_retried_once_with_the_nonce_and_never_twice() {
        let key = SigningKey::generate().unwrap();
        let nonce = NonceSlot::default();
        let url = Url::parse("https://as.example/token").unwrap();
        let asks = || AuthHttpResponse {
            dpop_nonce: Some("n-1".into()),
            ..answer(400, r#"{"error":"use_dpop_nonce"}"#)
        };
        let endpoint = |http: &'static Scripted| TokenEndpoint {
            http,
            timeout: Duration::from_secs(5),
            url: Box::leak(Box::new(url.clone())),
            issuer: "https://as.example",
            client_id: "c",
            auth: &ClientAuthn::None,
            resource: None,
            dpop: None,
        };
        // Once: the second proof carries the nonce, the token is bound.
        let http: &'static Scripted = Box::leak(Box::new(Scripted::new(vec![
            asks(),
            answer(200, r#"{"access_token":"at","token_type":"DPoP"}"#),
        ])));
        let tokens = TokenEndpoint {
            dpop: Some(DpopBinding {
                key: &key,
                nonce: &nonce,
            }),
            ..endpoint(http)
        }
        .refresh(&Secret::new("rt"), &[])
        .await
        .unwrap();
        assert!(tokens.dpop_bound);
        let seen = http.seen();
        assert_eq!(seen.len(), 2);
        let nonce_of = |r: &AuthHttpRequest| {
            let proof = header(r, "dpop").unwrap();
            let claims = proof.split('.').nth(1).unwrap();
            let claims: serde_json::Value = serde_json::from_slice(
                &base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .decode(claims)
                    .unwrap(),
            )
            .unwrap();
            claims["nonce"].as_str().map(str::to_owned)
        };
        assert_eq!(nonce_of(&seen[0]), None);
        assert_eq!(nonce_of(&seen[1]).as_deref(), Some("n-1"));
        assert_ne!(header(&seen[0], "dpop"), header(&seen[1], "dpop"));

        // A server that asks again gets a named error after one retry.
        let looping: &'static Scripted =
            Box::leak(Box::new(Scripted::new(vec![asks(), asks(), asks()])));
        let e = TokenEndpoint {
            dpop: Some(DpopBinding {
                key: &key,
                nonce: &nonce,
            }),
            ..endpoint(looping)
        }
        .exchange_code(
            &Secret::new("code"),
            &Secret::new("verifier"),
            "http://127.0.0.1:1/cb",
            &[],
        )
        .await
        .unwrap_err();
        assert!(matches!(e, AuthError::DpopNonceLoop { .. }), "{e:?}");
        assert_eq!(looping.seen().len(), 2);
    }

    #[tokio::test]
    async fn our_grants_and_the_crates_map_refusals_and_redirects_alike() {
        let url = Url::parse("https://as.example/token").unwrap();
        let refusal = format!(r#"{{"error":"invalid_client","error_description":"{CANARY}"}}"#);
        let redirect = AuthHttpResponse::new(302, Some(format!("https://x/?{CANARY}")), vec![]);
        for (reply, expected_status) in [(answer(401, &refusal), Some(401)), (redirect, None)] {
            for ours in [false, true] {
                let http = Scripted::new(vec![reply.clone()]);
                let endpoint = TokenEndpoint {
                    http: &http,
                    timeout: Duration::from_secs(5),
                    url: &url,
                    issuer: "https://as.example",
                    client_id: "c",
                    auth: &ClientAuthn::Post(Secret::new("sekrit")),
                    resource: Some("https://mcp.example/mcp"),
                    dpop: None,
                };
                let e = if ours {
                    endpoint.jwt_bearer(&Secret::new("a.b.c"), &[]).await
                } else {
                    endpoint.client_credentials(&[]).await
                }
                .unwrap_err();
                match expected_status {
                    Some(status) => {
                        assert!(
                            matches!(e, AuthError::TokenRefused { status: s, .. } if s == status),
                            "{e:?}"
                        );
                        assert_eq!(e.oauth_error(), Some("invalid_client"));
                    }
                    None => assert!(matches!(e, AuthError::Redirected { .. }), "{e:?}"),
                }
                assert!(!format!("{e} {e:?}").contains(CANARY));
                let form = form(&http.seen()[0]);
                assert!(form.contains(&("client_secret".into(), "sekrit".into())));
                assert!(form.contains(&("resource".into(), "https://mcp.example/mcp".into())));
            }
        }
    }
}
