//! The token endpoint: code exchange, refresh, client credentials and the
//! JWT bearer grant, with the client authentication the registration or
//! configuration calls for (secret, or a `private_key_jwt` assertion), the
//! RFC 8707 `resource`, and DPoP proofs with one nonce retry.
//!
//! Written here rather than with the `oauth2` crate: its URL types and
//! parse errors would keep raw response bodies (possibly holding tokens) in
//! `Debug`, and the resource string must go out verbatim.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::dpop::{self, NonceSlot};
use crate::error::{AuthError, NonceParty, ServerErrorCode, Step};
use crate::grant::{ClientAuth, JWT_BEARER};
use crate::http::{self, AuthHttpClient, AuthHttpResponse};
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

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    token_type: String,
    #[serde(default)]
    expires_in: Option<serde_json::Value>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

#[derive(Deserialize)]
struct ErrorResponse {
    error: Option<String>,
}

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
}

/// The DPoP key of token requests and the authorization server's nonce.
#[derive(Clone, Copy)]
pub(crate) struct DpopBinding<'a> {
    pub(crate) key: &'a SigningKey,
    pub(crate) nonce: &'a NonceSlot,
}

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
        let pairs = [
            ("grant_type", "authorization_code"),
            ("code", code.expose()),
            ("code_verifier", verifier.expose()),
            ("redirect_uri", redirect_uri),
        ];
        let response = self.post(Step::Token, &pairs).await?;
        self.parse(&response, Step::Token, None, requested_scopes)
    }

    /// `grant_type=refresh_token`. A response without a new refresh token
    /// keeps `refresh_token` (the server did not rotate it).
    pub(crate) async fn refresh(
        &self,
        refresh_token: &Secret,
        previous_scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        let pairs = [
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token.expose()),
        ];
        let response = self.post(Step::Refresh, &pairs).await?;
        self.parse(
            &response,
            Step::Refresh,
            Some(refresh_token),
            previous_scopes,
        )
    }

    /// `grant_type=client_credentials`.
    pub(crate) async fn client_credentials(
        &self,
        scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        let scope = scopes.join(" ");
        let mut pairs = vec![("grant_type", "client_credentials")];
        if !scope.is_empty() {
            pairs.push(("scope", &scope));
        }
        let response = self.post(Step::Token, &pairs).await?;
        self.parse(&response, Step::Token, None, scopes)
    }

    /// The RFC 7523 JWT bearer grant with `assertion`.
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
        self.parse(&response, Step::Token, None, scopes)
    }

    /// Posts `pairs` with the `resource`, the client's authentication and
    /// a DPoP proof; once more with the server's nonce after a
    /// `use_dpop_nonce` refusal, and no more.
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
        match self.auth {
            ClientAuthn::Basic(secret) => {
                // RFC 6749 §2.3.1: both parts form-encoded before Base64.
                let id = form_encode(self.client_id);
                let secret = form_encode(secret.expose());
                let credentials = STANDARD.encode(format!("{id}:{secret}"));
                headers.push(("Authorization".to_owned(), format!("Basic {credentials}")));
                // The id in the form too (never the secret): the Python
                // SDK's authorization server refuses a token request
                // without it ("Missing client_id") even with Basic.
                pairs.push(("client_id", self.client_id));
            }
            ClientAuthn::Post(secret) => {
                pairs.push(("client_id", self.client_id));
                pairs.push(("client_secret", secret.expose()));
            }
            ClientAuthn::Assertion(key) => {
                assertion = client_assertion(key, self.client_id, self.issuer)?;
                pairs.push(("client_id", self.client_id));
                pairs.push(("client_assertion_type", CLIENT_ASSERTION_TYPE));
                pairs.push(("client_assertion", &assertion));
            }
            ClientAuthn::None => pairs.push(("client_id", self.client_id)),
        }
        let mut nonce_retried = false;
        loop {
            let mut request_headers = headers.clone();
            if let Some(dpop) = &self.dpop {
                let proof = dpop::proof(
                    dpop.key,
                    "POST",
                    self.url,
                    dpop.nonce.get().as_deref(),
                    None,
                )?;
                request_headers.push(("DPoP".to_owned(), proof));
            }
            let request = http::post_form(self.url.clone(), step, &pairs, request_headers);
            let response = http::send(self.http, request, self.timeout).await?;
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

    fn parse(
        &self,
        response: &AuthHttpResponse,
        step: Step,
        previous_refresh: Option<&Secret>,
        requested_scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        parse_tokens(
            response,
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

/// The OAuth `error` of an error response, if it has one.
pub(crate) fn error_code(response: &AuthHttpResponse) -> Option<String> {
    serde_json::from_slice::<ErrorResponse>(&response.body)
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

fn parse_tokens(
    response: &AuthHttpResponse,
    step: Step,
    previous_refresh: Option<&Secret>,
    requested_scopes: &[String],
    proof_sent: bool,
) -> Result<TokenSet, AuthError> {
    if !(200..300).contains(&response.status) {
        return Err(refused(response, step));
    }
    let parsed: TokenResponse = http::parse_json(response, step)?;
    let dpop_bound = if parsed.token_type.eq_ignore_ascii_case("bearer") {
        false
    } else if proof_sent && parsed.token_type.eq_ignore_ascii_case("dpop") {
        true
    } else {
        return Err(AuthError::UnsupportedTokenType);
    };
    if parsed.access_token.is_empty() || parsed.access_token.len() > MAX_TOKEN_BYTES {
        return Err(AuthError::InvalidDocument { step });
    }
    let now = unix_now();
    let lifetime = parsed.expires_in.as_ref().and_then(|v| match v {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    });
    let scopes = match parsed.scope {
        Some(scope) => crate::challenge::split_scopes(&scope),
        None => requested_scopes.to_vec(),
    };
    Ok(TokenSet {
        access_token: Secret::new(parsed.access_token),
        refresh_token: parsed
            .refresh_token
            .filter(|r| !r.is_empty())
            .map(Secret::new)
            .or_else(|| previous_refresh.cloned()),
        expires_at: lifetime.map(|l| now.saturating_add(l.min(MAX_LIFETIME_SECS))),
        obtained_at: now,
        scopes,
        dpop_bound,
    })
}

/// Bound on an access token (it goes into a header of every request).
const MAX_TOKEN_BYTES: usize = 16 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, body: &str) -> AuthHttpResponse {
        AuthHttpResponse::new(status, None, body.as_bytes().to_vec())
    }

    #[test]
    fn a_token_response_is_read_and_an_unrotated_refresh_token_kept() {
        let old = Secret::new("rt-old");
        let t = parse_tokens(
            &response(
                200,
                r#"{"access_token":"at","token_type":"bearer","expires_in":"120"}"#,
            ),
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
        let rotated = parse_tokens(
            &response(
                200,
                r#"{"access_token":"at2","token_type":"Bearer","refresh_token":"rt-new","scope":"x y"}"#,
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
    }

    #[test]
    fn refusals_and_odd_tokens_are_named_errors_without_content() {
        let refused = parse_tokens(
            &response(
                400,
                r#"{"error":"invalid_grant","error_description":"rt-sekrit"}"#,
            ),
            Step::Refresh,
            None,
            &[],
            false,
        )
        .unwrap_err();
        assert_eq!(refused.oauth_error(), Some("invalid_grant"));
        assert!(!format!("{refused} {refused:?}").contains("sekrit"));
        assert!(matches!(
            parse_tokens(
                &response(200, r#"{"access_token":"sekrit","token_type":"DPoP"}"#),
                Step::Token,
                None,
                &[],
                false
            ),
            Err(AuthError::UnsupportedTokenType)
        ));
        let bad = parse_tokens(
            &response(200, r#"{"access_token":"sekrit"}"#),
            Step::Token,
            None,
            &[],
            false,
        )
        .unwrap_err();
        assert!(!format!("{bad} {bad:?}").contains("sekrit"));
        assert!(matches!(
            parse_tokens(&response(302, ""), Step::Token, None, &[], false),
            Err(AuthError::Redirected { .. })
        ));
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
}
