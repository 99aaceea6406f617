//! The token endpoint: code exchange and refresh, with the client
//! authentication the registration calls for and the RFC 8707 `resource` on
//! both.
//!
//! Written here rather than with the `oauth2` crate: its URL types and
//! parse errors would keep raw response bodies (possibly holding tokens) in
//! `Debug`, and the resource string must go out verbatim.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::error::{AuthError, ServerErrorCode, Step};
use crate::http::{self, AuthHttpClient, AuthHttpResponse};
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

/// Calls the token endpoint.
pub(crate) struct TokenEndpoint<'a> {
    pub(crate) http: &'a dyn AuthHttpClient,
    pub(crate) timeout: Duration,
    pub(crate) url: &'a Url,
    pub(crate) client: &'a ClientRegistration,
    pub(crate) resource: &'a str,
}

impl TokenEndpoint<'_> {
    /// `grant_type=authorization_code` with the PKCE verifier.
    pub(crate) async fn exchange_code(
        &self,
        code: &Secret,
        verifier: &Secret,
        requested_scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        let pairs = [
            ("grant_type", "authorization_code"),
            ("code", code.expose()),
            ("code_verifier", verifier.expose()),
            ("redirect_uri", self.client.redirect_uri.as_str()),
            ("resource", self.resource),
        ];
        let response = self.post(Step::Token, &pairs).await?;
        parse_tokens(&response, Step::Token, None, requested_scopes)
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
            ("resource", self.resource),
        ];
        let response = self.post(Step::Refresh, &pairs).await?;
        parse_tokens(
            &response,
            Step::Refresh,
            Some(refresh_token),
            previous_scopes,
        )
    }

    async fn post(
        &self,
        step: Step,
        pairs: &[(&str, &str)],
    ) -> Result<AuthHttpResponse, AuthError> {
        let mut pairs = pairs.to_vec();
        let mut headers = Vec::new();
        let secret = self.client.client_secret.as_ref().map(Secret::expose);
        match (self.client.auth_method, secret) {
            (TokenAuthMethod::ClientSecretBasic, Some(secret)) => {
                // RFC 6749 §2.3.1: both parts form-encoded before Base64.
                let id = form_encode(&self.client.client_id);
                let secret = form_encode(secret);
                let credentials = STANDARD.encode(format!("{id}:{secret}"));
                headers.push(("Authorization".to_owned(), format!("Basic {credentials}")));
                // The id in the form too (never the secret): the Python
                // SDK's authorization server refuses a token request
                // without it ("Missing client_id") even with Basic.
                pairs.push(("client_id", &self.client.client_id));
            }
            (TokenAuthMethod::ClientSecretPost, Some(secret)) => {
                pairs.push(("client_id", &self.client.client_id));
                pairs.push(("client_secret", secret));
            }
            _ => pairs.push(("client_id", &self.client.client_id)),
        }
        let request = http::post_form(self.url.clone(), step, &pairs, headers);
        http::send(self.http, request, self.timeout).await
    }
}

fn form_encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

fn parse_tokens(
    response: &AuthHttpResponse,
    step: Step,
    previous_refresh: Option<&Secret>,
    requested_scopes: &[String],
) -> Result<TokenSet, AuthError> {
    if (300..400).contains(&response.status) {
        return Err(AuthError::Redirected { step });
    }
    if !(200..300).contains(&response.status) {
        let error = serde_json::from_slice::<ErrorResponse>(&response.body)
            .ok()
            .and_then(|e| e.error)
            .map(|e| ServerErrorCode::new(&e));
        return Err(AuthError::TokenRefused {
            step,
            status: response.status,
            error,
        });
    }
    let parsed: TokenResponse = http::parse_json(response, step)?;
    if !parsed.token_type.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::UnsupportedTokenType);
    }
    if parsed.access_token.is_empty() {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, body: &str) -> AuthHttpResponse {
        AuthHttpResponse {
            status,
            location: None,
            body: body.as_bytes().to_vec(),
        }
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
        )
        .unwrap_err();
        assert_eq!(refused.oauth_error(), Some("invalid_grant"));
        assert!(!format!("{refused} {refused:?}").contains("sekrit"));
        assert!(matches!(
            parse_tokens(
                &response(200, r#"{"access_token":"sekrit","token_type":"DPoP"}"#),
                Step::Token,
                None,
                &[]
            ),
            Err(AuthError::UnsupportedTokenType)
        ));
        let bad = parse_tokens(
            &response(200, r#"{"access_token":"sekrit"}"#),
            Step::Token,
            None,
            &[],
        )
        .unwrap_err();
        assert!(!format!("{bad} {bad:?}").contains("sekrit"));
        assert!(matches!(
            parse_tokens(&response(302, ""), Step::Token, None, &[]),
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
