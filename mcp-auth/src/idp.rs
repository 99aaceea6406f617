//! Enterprise-managed authorization, first half: at the enterprise identity
//! provider, an RFC 8693 token exchange of the user's ID token for an
//! identity assertion grant (ID-JAG) addressed to the MCP server's
//! authorization server. The second half is the JWT bearer grant with it
//! (`token.rs`).
//!
//! The identity provider's token endpoint is taken from configuration or
//! from its metadata, and must be on the configured issuer's origin either
//! way: an identity provider whose metadata points elsewhere gets nothing
//! ([`AuthError::IdentityProviderOrigin`]), and the ID token is read only
//! once the endpoint passed that check.

use std::time::Duration;

use serde::Deserialize;
use url::Url;

use crate::error::{AuthError, Step, UrlRole};
use crate::grant::EnterpriseIdp;
use crate::http::{self, AuthHttpClient};
use crate::secret::Secret;
use crate::token::{ClientAuthn, TokenEndpoint, refused};
use crate::urls::UrlPolicy;

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
/// Bound on an identity assertion grant.
const MAX_ASSERTION: usize = 16 * 1024;

#[derive(Deserialize)]
struct IdpMetadata {
    issuer: String,
    token_endpoint: Option<String>,
}

#[derive(Deserialize)]
struct ExchangeResponse {
    access_token: String,
    issued_token_type: Option<String>,
}

/// The identity provider's side of one exchange.
pub(crate) struct IdentityProvider<'a> {
    pub(crate) http: &'a dyn AuthHttpClient,
    pub(crate) timeout: Duration,
    pub(crate) policy: &'a UrlPolicy,
    pub(crate) idp: &'a EnterpriseIdp,
}

impl IdentityProvider<'_> {
    /// An ID-JAG for `audience` (the authorization server's issuer) and
    /// `resource`, with `scopes`.
    pub(crate) async fn identity_assertion(
        &self,
        audience: &str,
        resource: &str,
        scopes: &[String],
    ) -> Result<Secret, AuthError> {
        let issuer = self
            .policy
            .parse(&self.idp.issuer, UrlRole::IdentityProvider)?;
        let endpoint = match &self.idp.token_endpoint {
            Some(raw) => self.policy.parse(raw, UrlRole::IdentityProvider)?,
            None => self.discover(&issuer).await?,
        };
        if endpoint.origin() != issuer.origin() {
            return Err(AuthError::IdentityProviderOrigin);
        }
        let id_token = self.idp.id_token.read_jwt()?;
        let auth = ClientAuthn::of_machine(&self.idp.client.auth)?;
        let scope = scopes.join(" ");
        let mut pairs = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ID_JAG),
            ("audience", audience),
            ("subject_token", id_token.expose()),
            ("subject_token_type", ID_TOKEN),
        ];
        if !scope.is_empty() {
            pairs.push(("scope", &scope));
        }
        let response = TokenEndpoint {
            http: self.http,
            timeout: self.timeout,
            url: &endpoint,
            issuer: &self.idp.issuer,
            client_id: &self.idp.client.client_id,
            auth: &auth,
            resource: Some(resource),
            dpop: None,
        }
        .post(Step::TokenExchange, &pairs)
        .await?;
        if !(200..300).contains(&response.status) {
            return Err(refused(&response, Step::TokenExchange));
        }
        let parsed: ExchangeResponse = http::parse_json(&response, Step::TokenExchange)?;
        if parsed.issued_token_type.as_deref() != Some(ID_JAG) {
            return Err(AuthError::NotAnIdentityAssertion);
        }
        if parsed.access_token.is_empty() || parsed.access_token.len() > MAX_ASSERTION {
            return Err(AuthError::InvalidDocument {
                step: Step::TokenExchange,
            });
        }
        Ok(Secret::new(parsed.access_token))
    }

    /// The token endpoint from the provider's OpenID (then RFC 8414)
    /// metadata, whose `issuer` must be the configured one.
    async fn discover(&self, issuer: &Url) -> Result<Url, AuthError> {
        let step = Step::IdentityProviderMetadata;
        let base = self.idp.issuer.trim_end_matches('/');
        let mut last_status = 404;
        for suffix in [
            "/.well-known/openid-configuration",
            "/.well-known/oauth-authorization-server",
        ] {
            let url = self
                .policy
                .parse(&format!("{base}{suffix}"), UrlRole::IdentityProvider)?;
            if url.origin() != issuer.origin() {
                return Err(AuthError::IdentityProviderOrigin);
            }
            let response = http::send(self.http, http::get_json(url, step), self.timeout).await?;
            if !(200..300).contains(&response.status) {
                last_status = response.status;
                continue;
            }
            let doc: IdpMetadata = http::parse_json(&response, step)?;
            if doc.issuer != self.idp.issuer {
                return Err(AuthError::IssuerMismatch);
            }
            let raw = doc
                .token_endpoint
                .ok_or(AuthError::InvalidDocument { step })?;
            return self.policy.parse(&raw, UrlRole::IdentityProvider);
        }
        Err(AuthError::UnexpectedStatus {
            step,
            status: last_status,
        })
    }
}
